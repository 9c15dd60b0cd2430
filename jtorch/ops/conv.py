"""nn.functional's conv ops (filled in by the conv work)."""

from __future__ import annotations

__all__: list[str] = []
