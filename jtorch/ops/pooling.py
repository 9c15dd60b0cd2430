"""nn.functional's pooling ops (filled in by the pooling work)."""

from __future__ import annotations

__all__: list[str] = []
