"""nn.functional's embedding ops (filled in by the embedding work)."""

from __future__ import annotations

__all__: list[str] = []
