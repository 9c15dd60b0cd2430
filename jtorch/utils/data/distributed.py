"""``DistributedSampler``: each of ``num_replicas`` processes reads its own strided share
of one (optionally shuffled, epoch-seeded) permutation. ``num_replicas`` and ``rank`` must
be given explicitly until jtorch has a process group.

>>> list(DistributedSampler(range(5), num_replicas=2, rank=1, shuffle=False))
[1, 3, 0]
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TypeVar

from ...ops import random as _random
from .dataset import Dataset
from .sampler import Sampler

__all__ = ["DistributedSampler"]

_T_co = TypeVar("_T_co", covariant=True)


def _process_group_value() -> int:
    """torch reads world size and rank from the default process group; jtorch has none yet,
    so this is torch's error for a group that was never initialized."""
    raise ValueError(
        "Default process group has not been initialized, please make sure to call init_process_group."
    )


class DistributedSampler(Sampler[_T_co]):
    """Indices for replica ``rank`` of ``num_replicas``: the (shuffled with
    ``seed + epoch``) index list is padded by wrapping around to a multiple of
    ``num_replicas`` (or cut with ``drop_last``), then every ``num_replicas``-th index from
    ``rank`` is taken. Call ``set_epoch`` each epoch for a new order."""

    def __init__(self, dataset: Dataset, num_replicas: int | None = None, rank: int | None = None,
                 shuffle: bool = True, seed: int = 0, drop_last: bool = False) -> None:
        if num_replicas is None:
            num_replicas = _process_group_value()
        if rank is None:
            rank = _process_group_value()
        if rank >= num_replicas or rank < 0:
            raise ValueError(f"Invalid rank {rank}, rank should be in the interval [0, {num_replicas - 1}]")
        self.dataset = dataset
        self.num_replicas = num_replicas
        self.rank = rank
        self.epoch = 0
        self.drop_last = drop_last
        n = len(self.dataset)
        if self.drop_last and n % self.num_replicas != 0:
            self.num_samples = math.ceil((n - self.num_replicas) / self.num_replicas)
        else:
            self.num_samples = math.ceil(n / self.num_replicas)
        self.total_size = self.num_samples * self.num_replicas
        self.shuffle = shuffle
        self.seed = seed

    def __iter__(self) -> Iterator[_T_co]:
        n = len(self.dataset)
        if self.shuffle:
            g = _random.Generator().manual_seed(self.seed + self.epoch)
            indices = _random.randperm(n, generator=g).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[: self.total_size]
        else:
            padding = self.total_size - len(indices)
            indices += (indices * math.ceil(padding / len(indices)))[:padding] if padding else []
        assert len(indices) == self.total_size
        mine = indices[self.rank: self.total_size: self.num_replicas]
        assert len(mine) == self.num_samples
        return iter(mine)

    def __len__(self) -> int:
        return self.num_samples

    def set_epoch(self, epoch: int) -> None:
        """Make the next pass use the permutation seeded by ``seed + epoch``."""
        self.epoch = epoch
