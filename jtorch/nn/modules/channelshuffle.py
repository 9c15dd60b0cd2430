"""``ChannelShuffle``: the channels in ``groups`` interleaved (ShuffleNet)."""

from __future__ import annotations

from .. import functional as F
from .module import Module


class ChannelShuffle(Module):
    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self) -> str:
        return f"groups={self.groups}"


__all__ = ["ChannelShuffle"]
