"""Helpers shared by the op modules."""

from __future__ import annotations

from ..tensor import Tensor


def type_name(x) -> str:
    """A value's type as torch's argument errors spell it (CPython's ``tp_name``): classes
    written in Python by their bare name (``Tensor``), built-ins likewise (``int``), types from
    C extensions qualified (``numpy.ndarray``)."""
    t = type(x)
    if t.__module__ == "builtins" or t.__flags__ & _HEAPTYPE:
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class created by a class statement


def is_number(x) -> bool:
    return isinstance(x, (bool, int, float, complex)) or hasattr(x, "dtype") and not isinstance(
        x, Tensor) and getattr(x, "ndim", None) == 0
