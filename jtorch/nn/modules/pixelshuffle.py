"""torch's ``nn/modules/pixelshuffle.py`` path: PixelShuffle and PixelUnshuffle live with the
upsampling layers (``upsampling.py``); this module names them where torch does."""

from __future__ import annotations

from .upsampling import PixelShuffle, PixelUnshuffle

__all__ = ["PixelShuffle", "PixelUnshuffle"]
