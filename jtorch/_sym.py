"""torch's helpers for numbers that may be symbolic (sizes traced by ``jtorch.compile`` are
``SymInt``\\s, ints with an expression), and ``_assert``. On plain numbers they are Python's
operations with torch's result types; a ``SymInt`` passes through ``sym_int`` unchanged and
compares (recording a guard) in ``sym_max``/``sym_min``."""

from __future__ import annotations

import builtins
import math

import numpy as np

from .compile.symbolic import SymInt

_ALL = (np.integer, np.floating, int, float)


class SymFloat(float):
    """torch's symbolic float. jtorch's traces make sizes symbolic, never floats, so none is
    ever made here; ``isinstance(x, SymFloat)`` is False for a plain float, as in torch."""


class SymBool:
    """torch's symbolic bool (a traced comparison of sizes); jtorch's guards compare sizes
    eagerly, so none is ever made here."""

    def __init__(self, value: bool) -> None:
        self._value = bool(value)

    def __bool__(self) -> bool:
        return self._value
_FLOATS = (np.floating, float)


def sym_int(a):
    """An int, truncating a float toward zero."""
    if isinstance(a, SymInt):
        return a
    if isinstance(a, float):
        return math.trunc(a)
    return builtins.int(a)


def sym_float(a):
    if hasattr(a, "__sym_float__"):
        return a.__sym_float__()
    return builtins.float(a)


def _minmax(fn, a, b):
    if not isinstance(a, _ALL):
        raise AssertionError(f"expected {_ALL}, got {type(a)}")  # noqa: TRY004  (torch's type)
    if not isinstance(b, _ALL):
        raise AssertionError(f"expected {_ALL}, got {type(b)}")  # noqa: TRY004  (torch's type)
    r = fn(a, b)
    return builtins.float(r) if isinstance(a, _FLOATS) or isinstance(b, _FLOATS) else r


def sym_max(a, b):
    """max(a, b), a float when either is one."""
    return _minmax(builtins.max, a, b)


def sym_min(a, b):
    """min(a, b), a float when either is one."""
    return _minmax(builtins.min, a, b)


def sym_not(a):
    if hasattr(a, "__sym_not__"):
        return a.__sym_not__()
    return not a


def sym_ite(b, t, f):
    """``t if b else f`` for a bool ``b`` and branches of one type."""
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")  # noqa: TRY004
    if type(t) is not type(f):
        raise AssertionError(f"expected branches of one type, got {type(t)} and {type(f)}")
    return t if b else f


def _assert(condition, message):
    """``assert condition, message`` that ``jtorch.compile`` keeps: a tensor condition is read
    (a graph break, then the check runs on its value)."""
    if not condition:
        raise AssertionError(message)


def compiled_with_cxx11_abi() -> bool:
    """Whether the C++ parts were built with the C++11 ABI; answered as torch 2.13's wheels
    answer it (jtorch has no C++ parts)."""
    return True


__all__ = ["_assert", "compiled_with_cxx11_abi", "sym_float", "sym_int", "sym_ite", "sym_max",
           "sym_min", "sym_not"]
