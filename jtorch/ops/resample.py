"""nn.functional's resample ops (filled in by the resample work)."""

from __future__ import annotations

__all__: list[str] = []
