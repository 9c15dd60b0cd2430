"""torch's ``nn/modules/instancenorm.py`` path: the instance norms live with the batch norms
(``batchnorm.py``, one ``_NormBase`` family); this module names them where torch does."""

from __future__ import annotations

from .batchnorm import (  # noqa: F401
    InstanceNorm1d,
    InstanceNorm2d,
    InstanceNorm3d,
    LazyInstanceNorm1d,
    LazyInstanceNorm2d,
    LazyInstanceNorm3d,
    _InstanceNorm,
)

__all__ = ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]
