# ruff: noqa: PLR0124
# PLR0124: x != x is the nan test.
"""atan, atan2, asin, acos."""

from fractions import Fraction

import numpy as np

from ._core import _PI, _T32, _T64, _as_float, _jitable, _poly, _register, _two_sum
from ._intrinsics import _div, _fma, _mla, _sqrt

# atan(t) = t + t^3 P(t^2), |t| <= 7/16
_ATAN_P32 = (
    -0.3333333134651184,
    0.19999803602695465,
    -0.1427922248840332,
    0.11011345684528351,
    -0.08296656608581543,
    0.04386579990386963,
)
_ATAN_P64 = (
    -0.33333333333333315,
    0.1999999999999321,
    -0.1428571428485342,
    0.11111111056527648,
    -0.09090907062431512,
    0.07692259595922378,
    -0.06665903013723116,
    0.05874020391848918,
    -0.05200102381770108,
    0.044330019369276365,
    -0.03191620116096038,
    0.013692303353699998,
)
# asin(s) = s + s^3 P(s^2), |s| <= 1/2
_ASIN_P32 = (
    0.16666659712791443,
    0.07500521838665009,
    0.044513385742902756,
    0.03183893486857414,
    0.01431548222899437,
    0.03769611939787865,
)
_ASIN_P64 = (
    0.16666666666665408,
    0.07500000000337236,
    0.044642856828095,
    0.030381959148060536,
    0.02237175775732225,
    0.017359709515798905,
    0.01388518575413409,
    0.012169553850417078,
    0.0065264342638230435,
    0.019532634124520686,
    -0.01623132799598155,
    0.031917259594041555,
)

# atan(0.5), atan(1), atan(1.5), atan(inf) to 80 digits
_ATAN_BASES = (
    "0.46364760900080611621425623146121440202853705428612026381093308872019786416574171",
    "0.78539816339744830961566084581987572104929234984377645524373614807695410157155225",
    "0.98279372324732906798571061101466601449687745363162855676142508831798807154979604",
    "1.5707963267948966192313216916397514420985846996875529104874722961539082031431045",
)


def _make_inverse_trig(T, ATAN_P, ASIN_P):
    F, as_int = T.f, T.as_int
    ATAN_P, ASIN_P = tuple(F(c) for c in ATAN_P), tuple(F(c) for c in ASIN_P)
    ONE, TWO, HALF, ZERO, ONE5 = F(1), F(2), F(0.5), F(0), F(1.5)
    INF, NAN = T.inf, T.nan
    B1, B2, B3, B4 = (T.c(b) for b in _ATAN_BASES)
    L1, L2, L3, L4 = (T.c(Fraction(b) - Fraction(float(T.c(b)))) for b in _ATAN_BASES)
    PIO2_HI, PIO2_LO = B4, L4
    PI_HI = T.c(Fraction(_PI))
    PI_LO = T.c(Fraction(_PI) - Fraction(float(PI_HI)))
    C1, C2, C3, C4 = F(7 / 16), F(11 / 16), F(19 / 16), F(39 / 16)
    TINY = F(2.0**-13) if T is _T32 else F(2.0**-28)
    BIG = F(2.0**100)

    @_jitable
    def atan_core(ax, ax_lo):
        """atan(ax + ax_lo) for ax >= 0 (inf and nan included), |ax_lo| <= ulp(ax)/2."""
        # t = (a*ax - b) / (c + d*ax) reduces to |t| <= 7/16 around atan(0.5), atan(1), atan(1.5)
        big = not (ax < C4)
        a = ONE if ax < C4 else ZERO
        a = ONE if ax < C3 else a
        a = TWO if ax < C2 else a
        a = ONE if ax < C1 else a
        b = ONE5 if ax < C4 else ONE
        b = ONE if ax < C3 else b
        b = ONE if ax < C2 else b
        b = ZERO if ax < C1 else b
        hi = B3 if ax < C4 else B4
        hi = B2 if ax < C3 else hi
        hi = B1 if ax < C2 else hi
        hi = ZERO if ax < C1 else hi
        lo = L3 if ax < C4 else L4
        lo = L2 if ax < C3 else lo
        lo = L1 if ax < C2 else lo
        lo = ZERO if ax < C1 else lo
        # numerators are exact (Sterbenz); (c, d) = (a, b) except for the -1/x interval
        num = -ONE if big else a * ax - b
        den = ax if big else _mla(b, ax, a)
        t = _div(num, den)
        z = t * t
        p = (t * z) * _poly(z, ATAN_P)
        corr = _div(ax_lo, _mla(ax, ax, ONE))
        corr = corr if ax < BIG else ZERO
        rest = ((lo + corr) + p) + t
        v = hi + rest
        return v, (hi - v) + rest

    def atan_(x):
        ax = abs(x)
        y, _ = atan_core(ax, ZERO)
        y = -y if x < ZERO else y
        return x if ax < TINY else y

    def atan2_(y, x):
        ay, ax = abs(y), abs(x)
        t = _div(ay, ax)
        t_lo = _div(_fma(-t, ax, ay), ax)
        zero = ay == ZERO
        both_inf = (ay == INF) and (ax == INF)
        t = ZERO if zero else t
        t = ONE if both_inf else t
        t_lo = ZERO if zero or both_inf or not (t < BIG) or not (abs(t_lo) < INF) else t_lo
        z, z_lo = atan_core(t, t_lo)
        h, e = _two_sum(PI_HI, -z)
        z = h + ((e + PI_LO) - z_lo) if as_int(x) < 0 else z
        z = -z if as_int(y) < 0 else z
        return x + y if (x != x) or (y != y) else z

    @_jitable
    def asin_parts(ax):
        """For ax in (1/2, 1]: asin(ax) = pi/2 - 2*(s + c + w) with s + c = sqrt((1 - ax)/2)."""
        z = (ONE - ax) * HALF
        s = _sqrt(z)
        c = _div(_fma(-s, s, z), s + s)
        c = ZERO if z == ZERO else c
        w = (s * z) * _poly(z, ASIN_P)
        return s, c, w

    def asin_(x):
        ax = abs(x)
        z = x * x
        y_small = ax + (ax * z) * _poly(z, ASIN_P)
        s, c, w = asin_parts(ax)
        h, l = _two_sum(PIO2_HI, -(s + s))
        y_big = h + ((l + PIO2_LO) - TWO * (c + w))
        y = y_small if ax <= HALF else y_big
        y = -y if x < ZERO else y
        y = x if ax < TINY else y
        return NAN if ax > ONE else y

    def acos_(x):
        ax = abs(x)
        z = x * x
        h, l = _two_sum(PIO2_HI, -x)
        y_small = h + ((l + PIO2_LO) - (x * z) * _poly(z, ASIN_P))
        s, c, w = asin_parts(ax)
        y_pos = TWO * (s + (c + w))
        h, l = _two_sum(PI_HI, -(s + s))
        y_neg = h + ((l + PI_LO) - TWO * (c + w))
        y = y_neg if x < ZERO else y_pos
        y = y_small if ax <= HALF else y
        return NAN if ax > ONE else y

    return atan_, atan2_, asin_, acos_


_atan32, _atan2_32, _asin32, _acos32 = _make_inverse_trig(_T32, _ATAN_P32, _ASIN_P32)
_atan64, _atan2_64, _asin64, _acos64 = _make_inverse_trig(_T64, _ATAN_P64, _ASIN_P64)


def atan(x):
    """Arc tangent."""
    return np.arctan(_as_float(x))


def atan2(y, x):
    """Arc tangent of y/x in the quadrant of (x, y), C99 special cases."""
    y, x = _as_float(y), _as_float(x)
    return np.arctan2(y, x)


def asin(x):
    """Arc sine."""
    return np.arcsin(_as_float(x))


def acos(x):
    """Arc cosine."""
    return np.arccos(_as_float(x))


_register(atan, _atan32, _atan64)
_register(atan2, _atan2_32, _atan2_64)
_register(asin, _asin32, _asin64)
_register(acos, _acos32, _acos64)
