# ruff: noqa: FURB136, PLR0124
# FURB136: selects are deliberate (vector selects; the CUDA target mis-handles integer min/max).
# PLR0124: x != x is the nan test.
"""pow: x**y as 2^(y * log2|x|) in double-word arithmetic, with the C99 special cases."""

from fractions import Fraction

import numpy as np

from ._core import _LN2, _T32, _T64, _as_float, _jitable, _poly, _register, _scalers, _two_prod, _two_sum
from ._intrinsics import _div, _fma
from .exponential import _EXP2_P32, _EXP2_P64
from .logarithm import _decompose32, _decompose64

# x^y = 2^(y * log2|x|) with log2|x| and the product as double-words:
# log2(2^k (1+f)) = k + C1*s + C3*s^3 + s^5 Q(s^2), s = f/(2+f), C1 = 2/ln2, C3 = 2/(3 ln2).

_PLOG_Q32 = (0.5770801901817322, 0.4118499159812927, 0.3378209173679352)
_PLOG_Q64 = (
    0.5770780163555851,
    0.41219858311134566,
    0.3205988979127996,
    0.26230819865639465,
    0.22195227041675758,
    0.19240132216130593,
    0.16845146892824941,
    0.17281807931030946,
)


def _make_pow(T, decompose, Q, EXP2_P):
    F, as_int = T.f, T.as_int
    _, scale2, rint = _scalers(T)
    Q, EXP2_P = tuple(F(c) for c in Q), tuple(F(c) for c in EXP2_P)
    ONE, TWO, ZERO = F(1), F(2), F(0)
    INF, NAN = T.inf, T.nan
    c1 = 2 / Fraction(_LN2)
    c3 = c1 / 3
    C1_HI = T.c(c1)
    C1_LO = T.c(c1 - Fraction(float(C1_HI)))
    C3_HI = T.c(c3)
    C3_LO = T.c(c3 - Fraction(float(C3_HI)))
    LN2 = T.c(_LN2)
    TWO_MANT, TWO_MANT1 = F(2.0**T.mant), F(2.0 ** (T.mant + 1))
    if T is _T32:
        LO2, HI2 = F(-151.0), F(129.0)
    else:
        LO2, HI2 = F(-1076.0), F(1025.0)

    @_jitable
    def log2_dw(ax):
        """log2(ax) as a double-word, ax > 0 finite."""
        f, k = decompose(ax)
        d = TWO + f
        d_lo = (TWO - d) + f
        s = _div(f, d)
        s_lo = _div(_fma(-s, d, f) - s * d_lo, d)
        s2, s2_lo = _two_prod(s, s)
        s2_lo = s2_lo + TWO * s * s_lo
        s3, s3_lo = _two_prod(s2, s)
        s3_lo = s3_lo + (s2 * s_lo + s2_lo * s)
        a, a_lo = _two_prod(C1_HI, s)
        a_lo = a_lo + (C1_LO * s + C1_HI * s_lo)
        b, b_lo = _two_prod(C3_HI, s3)
        b_lo = b_lo + (C3_LO * s3 + C3_HI * s3_lo)
        c = (s3 * s2) * _poly(s2, Q)
        h, h_lo = _two_sum(F(k), a)
        h, t = _two_sum(h, b)
        h_lo = ((h_lo + t) + (a_lo + b_lo)) + c
        lh = h + h_lo
        return lh, (h - lh) + h_lo

    def pow_(x, y):
        ax = abs(x)
        lh, ll = log2_dw(ax)
        lh = -INF if ax == ZERO else lh
        lh = INF if ax == INF else lh
        lh = ax if ax != ax else lh
        p, p_lo = _two_prod(y, lh)
        p_lo = p_lo + y * ll
        clamped = (p < LO2) or (p > HI2)
        p = LO2 if p < LO2 else p
        p = HI2 if p > HI2 else p
        p_lo = ZERO if clamped else p_lo
        kf, k = rint(p)
        r = p - kf  # exact
        r2 = r + p_lo
        r_lo = (r - r2) + p_lo
        v = ONE + (r2 * _poly(r2, EXP2_P) + r_lo * LN2)
        res = scale2(v, k)
        # signs and the C99 special cases
        # integer / odd-integer tests on |y| (inf counts as an even integer, nan as neither)
        ay = abs(y)
        big = ay >= TWO_MANT
        t = ay if big else ay + TWO_MANT  # rounds |y| < 2^MANT to an integer in the low bits
        yint = big or (t - TWO_MANT == ay)
        yodd = yint and ((as_int(t) & 1) != 0) and (ay < TWO_MANT1)
        res = -res if yodd and as_int(x) < 0 else res
        res = NAN if (x < ZERO) and (x > -INF) and not yint else res
        res = ONE if (x == -ONE) and (abs(y) == INF) else res
        res = ONE if (x == ONE) or (y == ZERO) else res
        return res

    return pow_


_pow32 = _make_pow(_T32, _decompose32, _PLOG_Q32, _EXP2_P32)
_pow64 = _make_pow(_T64, _decompose64, _PLOG_Q64, _EXP2_P64)


def pow(x, y):
    """x**y with the C99 special cases (negative base with integer exponent included)."""
    x, y = _as_float(x), _as_float(y)
    return np.power(x, y)


_register(pow, _pow32, _pow64)
