"""asinh, acosh, atanh, built on the double-word logarithm ``log_dw``."""

import numpy as np

from ._core import _T32, _T64, _as_float, _jitable, _register, _two_prod, _two_sum
from ._intrinsics import _div, _fma, _sqrt
from .logarithm import _log_dw32, _log_dw64


def _make_inverse_hyperbolic(T, log_dw):
    F = T.f
    ONE, HALF, ZERO = F(1), F(0.5), F(0)
    NAN = T.nan
    TINY = F(2.0**-13) if T is _T32 else F(2.0**-28)
    # beyond BIG, sqrt(x^2 +- 1) = x to working precision (and x^2 may overflow)
    BIG = F(2.0**14) if T is _T32 else F(2.0**28)

    @_jitable
    def sqrt_dw(h, l):
        """sqrt(h + l) as a double-word, h >= 0."""
        q = _sqrt(h)
        q_lo = _div(_fma(-q, q, h) + l, q + q)
        return q, (ZERO if h == ZERO else q_lo)

    def asinh_(x):
        ax = abs(x)
        h, l = _two_prod(ax, ax)
        h, e = _two_sum(ONE, h)
        q, q_lo = sqrt_dw(h, e + l)
        a, e = _two_sum(ax, q)
        big = ax > BIG
        y = log_dw(ax if big else a, ZERO if big else e + q_lo, 1 if big else 0)
        y = -y if x < ZERO else y
        return x if ax < TINY else y

    def acosh_(x):
        h, l = _two_prod(x, x)
        h, e = _two_sum(h, -ONE)
        q, q_lo = sqrt_dw(h, e + l)
        a, e = _two_sum(x, q)
        big = x > BIG
        y = log_dw(x if big else a, ZERO if big else e + q_lo, 1 if big else 0)
        return NAN if x < ONE else y

    def atanh_(x):
        ax = abs(x)
        n, n_lo = _two_sum(ONE, ax)
        d, d_lo = _two_sum(ONE, -ax)
        q = _div(n, d)
        q_lo = _div((_fma(-q, d, n) + n_lo) - q * d_lo, d)
        q_lo = ZERO if d == ZERO else q_lo
        y = HALF * log_dw(q, q_lo, 0)
        y = -y if x < ZERO else y
        y = x if ax < TINY else y
        return NAN if ax > ONE else y

    return asinh_, acosh_, atanh_


_asinh32, _acosh32, _atanh32 = _make_inverse_hyperbolic(_T32, _log_dw32)
_asinh64, _acosh64, _atanh64 = _make_inverse_hyperbolic(_T64, _log_dw64)


def asinh(x):
    """Inverse hyperbolic sine."""
    return np.arcsinh(_as_float(x))


def acosh(x):
    """Inverse hyperbolic cosine."""
    return np.arccosh(_as_float(x))


def atanh(x):
    """Inverse hyperbolic tangent."""
    return np.arctanh(_as_float(x))


_register(asinh, _asinh32, _asinh64)
_register(acosh, _acosh32, _acosh64)
_register(atanh, _atanh32, _atanh64)
