"""Padding layers: constant, zero, reflection, replication and circular padding of the last
1, 2 or 3 dims (``F.pad`` with the layer's mode)."""

from __future__ import annotations

from .. import functional as F
from .module import Module


def _ntuple(padding, n: int, name: str) -> tuple:
    if isinstance(padding, int):
        return (padding,) * n
    padding = tuple(padding)
    if len(padding) != n:
        raise ValueError(f"{name}: padding must be an int or a tuple of {n} ints, got {padding}")
    return padding


class _PadNd(Module):
    mode = "constant"
    dims = 1

    def __init__(self, padding) -> None:
        super().__init__()
        self.padding = _ntuple(padding, 2 * self.dims, type(self).__name__)

    def forward(self, input):
        return F.pad(input, self.padding, self.mode)

    def extra_repr(self) -> str:
        return f"{self.padding}"


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self) -> str:
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        return f"{self.padding}"


def _layer(base, mode: str, dims: int, name: str):
    return type(name, (base,), {"mode": mode, "dims": dims, "__module__": __name__,
                                "__qualname__": name})


ConstantPad1d = _layer(_ConstantPadNd, "constant", 1, "ConstantPad1d")
ConstantPad2d = _layer(_ConstantPadNd, "constant", 2, "ConstantPad2d")
ConstantPad3d = _layer(_ConstantPadNd, "constant", 3, "ConstantPad3d")
ZeroPad1d = _layer(_ZeroPadNd, "constant", 1, "ZeroPad1d")
ZeroPad2d = _layer(_ZeroPadNd, "constant", 2, "ZeroPad2d")
ZeroPad3d = _layer(_ZeroPadNd, "constant", 3, "ZeroPad3d")
ReflectionPad1d = _layer(_PadNd, "reflect", 1, "ReflectionPad1d")
ReflectionPad2d = _layer(_PadNd, "reflect", 2, "ReflectionPad2d")
ReflectionPad3d = _layer(_PadNd, "reflect", 3, "ReflectionPad3d")
ReplicationPad1d = _layer(_PadNd, "replicate", 1, "ReplicationPad1d")
ReplicationPad2d = _layer(_PadNd, "replicate", 2, "ReplicationPad2d")
ReplicationPad3d = _layer(_PadNd, "replicate", 3, "ReplicationPad3d")
CircularPad1d = _layer(_PadNd, "circular", 1, "CircularPad1d")
CircularPad2d = _layer(_PadNd, "circular", 2, "CircularPad2d")
CircularPad3d = _layer(_PadNd, "circular", 3, "CircularPad3d")

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
           "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
           "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
           "ZeroPad3d"]
