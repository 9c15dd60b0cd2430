"""Helpers shared by the op modules."""

from __future__ import annotations

from ..tensor import Tensor


def tensor_method(*names: str):
    """Attach the decorated function to Tensor under ``names`` (default: its own name)."""

    def deco(fn):
        for n in names or (fn.__name__,):
            setattr(Tensor, n, fn)
        return fn

    return deco


def is_number(x) -> bool:
    return isinstance(x, (bool, int, float, complex)) or hasattr(x, "dtype") and not isinstance(
        x, Tensor) and getattr(x, "ndim", None) == 0
