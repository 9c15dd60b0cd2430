# ruff: noqa: FURB136, PLR0124
# FURB136: selects are deliberate (vector selects; the CUDA target mis-handles integer min/max).
# PLR0124: x != x is the nan test.
"""hypot: sqrt(x**2 + y**2) without undue over- or underflow."""

import math

import numpy as np

from ._core import _F32_INF, _as_float, _register

# float32: sqrt(x^2 + y^2) in float64, where neither square over- or underflows and the sum
# is within 2^-53 (0.5 ulp after the final rounding, libm's hypotf is correctly rounded too);
# float64: max * sqrt(1 + (min / max)^2), 1.25 ulp. An infinite operand gives inf even with a
# nan (C99).


def _hypot32(x, y):
    ax, ay = np.float64(x), np.float64(y)
    h = np.float32(np.sqrt(ax * ax + ay * ay))
    return _F32_INF if abs(x) == _F32_INF or abs(y) == _F32_INF else h


def _hypot64(x, y):
    ax, ay = abs(x), abs(y)
    m = ax if ax > ay else ay
    n = ay if ax > ay else ax
    r = n / (m if m > 0.0 else 1.0)
    h = m * np.sqrt(1.0 + r * r)
    h = x + y if x != x or y != y else h  # nan (max/min above drop it)
    return math.inf if ax == math.inf or ay == math.inf else h


def hypot(x, y):
    """sqrt(x**2 + y**2) without undue over- or underflow (inf wins over nan, as in C99)."""
    x, y = _as_float(x), _as_float(y)
    return np.hypot(x, y)


_register(hypot, _hypot32, _hypot64)
