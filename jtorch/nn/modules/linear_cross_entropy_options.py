"""torch's ``nn/modules/linear_cross_entropy_options.py`` path: ``LinearCrossEntropyOptions``
lives beside ``F.linear_cross_entropy``'s module (``linear_cross_entropy.py``); this module
names it where torch does."""

from __future__ import annotations

from .linear_cross_entropy import (  # noqa: F401
    _AUTO_FALLBACK,
    LinearCrossEntropyOptions,
    _AutoDefault,
)

__all__ = ["LinearCrossEntropyOptions"]
