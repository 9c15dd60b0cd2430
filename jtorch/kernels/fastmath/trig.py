"""sin, cos, tan, and their ``*_near`` variants (Cody-Waite reduction only) for the x where
``trig_near(x)``."""

import math
from fractions import Fraction

import numpy as np

from ._core import _PI, _T32, _T64, _as_float, _jitable, _poly, _register
from ._intrinsics import _div, _f32_as_i32, _fma, _i32_as_f32
from ._trig_reduction import (
    _TRIG_NEAR32,
    _TRIG_NEAR64,
    _cody_waite32,
    _cody_waite64,
    _payne_hanek32,
    _reduce32,
    _reduce64,
)

# float32 sin and cos on the quadrant remainder |r| <= pi/4 (1 + 2^-12): sin(r) = r + r^3 S(r^2)
# and cos(r) = 1 + r^2 Q(r^2), Q(0) = -1/2; minimax (linear program on 3000 points), float32
# coefficients rounded one at a time and the rest refitted; relative error 2^-27.9 and 2^-33.0
_SIN_P32 = (-0.16666655242443085, 0.008332189172506332, -0.00019518277258612216)
_COS_P32 = (-0.5, 0.04166664555668831, -0.0013887309469282627, 2.4432327336398885e-05)
_TAN_P32 = (
    0.33333349227905273,
    0.13332675397396088,
    0.05405891314148903,
    0.02128620818257332,
    0.010827443562448025,
    9.824595326790586e-05,
    0.004372697323560715,
)
_SIN_P64 = (
    -0.1666666666666663,
    0.00833333333332184,
    -0.00019841269829358533,
    2.755731353851857e-06,
    -2.5050734390311053e-08,
    1.5895433369475287e-10,
)
_COS_P64 = (
    0.041666666666666595,
    -0.0013888888888873342,
    2.480158728900208e-05,
    -2.7557314217039056e-07,
    2.0875705396125875e-09,
    -1.1358749251201228e-11,
)
_TAN_P64 = (
    0.3333333333333333,
    0.133333333333338,
    0.053968253967904514,
    0.021869488548726484,
    0.008863235267036898,
    0.0035921315740599477,
    0.0014558018193444814,
    0.0005902405730942412,
    0.00023811407605195728,
    0.00010047722622713676,
    3.0044200426686606e-05,
    3.3471698718322043e-05,
    -1.7505030039042996e-05,
    2.5117399671382653e-05,
    -1.2288790263020726e-05,
    4.472963588062323e-06,
)


_TRIG_TINY32 = np.float32(2.0**-12)  # sin(x), tan(x) round to x below this
_TRIG_TINY64 = np.float64(2.0**-27)


def _trig_near32(x):
    return abs(x) < _TRIG_NEAR32


def _trig_near64(x):
    return abs(x) < _TRIG_NEAR64


def _truncate(q, bits):
    """The exact value q truncated (toward zero) to ``bits`` significant bits."""
    scale = Fraction(2) ** (bits - 1 - math.floor(math.log2(abs(q))))
    return Fraction(math.trunc(q * scale)) / scale


def _make_sincos32(SP, CP):
    """float32 sin and cos in float32 arithmetic (8 lanes per AVX2 vector): x = k*pi/2 + r with
    |r| <= pi/4 held as a float32 pair r = rh - rln, then both the sin and the cos polynomial of
    r, the one the quadrant asks for selected and its sign set from the bits of k.

    Cody-Waite (|x| < 2^10, |k| <= 652) with pi/2 = P1 + P2 + P3, P1 and P2 truncated to 24 and
    14 bits: r1 = x - k*P1 is exact with one FMA (for k != 0, x and k*P1 are multiples of 2^-24
    and |r1| < 1), p = k*P2 is exact (10 + 14 bits), and r1 - p is split exactly by Fast2Sum,
    also where |r1| < |p|: r1 is a multiple of 2^-24 and ulp(p) <= 2^-38, which is the exponent
    condition of Fast2Sum. What remains, k*(pi/2 - P1 - P2 - P3) < 2^-54 and the rounding of
    the tail rln (2^-25 |rln|, |rln| <= ulp(rh)/2 + 2^-29.2), is small against the smallest
    |r| of a float32 x below 2^10, 2^-27.8 (x = 252.8982, k = 161). P2 > 0, so x = -0.0 gives
    rh = -0.0 and keeps its sign; tiny x give x. Above 2^10 (the full variants only) the integer
    Payne-Hanek product gives r in float64, split into the pair.

    Kernels, z = rh^2: sin(r) = rh - (rh z S'(z) + rln), S' = -S (the tail without its factor
    cos(r): < 0.16 ulp); cos(r) = 1 + zc Q(z) with zc = rh^2 - 2 rh rln rounded once (the tail
    moves cos by up to 0.4 ulp). Each ends in one rounding; Q and S' take the plain z, so the
    tail's product stays off the critical path (measured 10% faster than zc throughout).
    Max error, every float32 against float64: 0.894 ulp (sin), 0.898 ulp (cos) below 2^10,
    both in the cos kernel near |r| = pi/4 (the roundings of zc, Q and the last FMA); 0.907
    ulp above."""
    F = np.float32
    SN = tuple(F(-c) for c in SP)
    CP = tuple(F(c) for c in CP)
    pio2 = Fraction(_PI) / 2
    p1 = _truncate(pio2, 24)
    p2 = _truncate(pio2 - p1, 14)
    P1, P2, P3 = F(float(p1)), F(float(p2)), _T32.c(pio2 - p1 - p2)
    TWO_OVER_PI, MAGIC = _T32.c(1 / pio2), _T32.magic
    ONE, SIGN = F(1), np.int32(-(1 << 31))
    CW_MAX, INF = _TRIG_NEAR32, F(np.inf)

    @_jitable
    def cody_waite(x):
        """(rh, rln, kb) with x = k*pi/2 + rh - rln, |rh - rln| <= pi/4, for |x| < CW_MAX;
        kb = k + the bits of MAGIC (only its two low bits are used)."""
        t = _fma(x, TWO_OVER_PI, MAGIC)  # k + MAGIC
        kf = t - MAGIC
        r1 = _fma(-kf, P1, x)  # exact
        p = kf * P2  # exact
        rh = r1 - p
        rln = p - (r1 - rh)  # rh - rln = r1 - p exactly
        return rh, _fma(kf, P3, rln), _f32_as_i32(t)

    @_jitable
    def payne_hanek(x):
        """The same for any finite x (|x| >= 2^10 used), from the integer reduction of |x|."""
        r, k = _payne_hanek32(abs(x))  # |x| = k*pi/2 + r
        neg = x < 0
        r = -r if neg else r
        rh = np.float32(r)
        return rh, np.float32(np.float64(rh) - r), np.int32(-k if neg else k)

    @_jitable
    def kernel(rh, rln, k):
        """sin(k*pi/2 + r), r = rh - rln, |r| <= pi/4 (k: the low two bits)."""
        z = rh * rh
        ys = rh - _fma(rh * z, _poly(z, SN), rln)
        zc = _fma(rh, rh, -((rh + rh) * rln))
        yc = _fma(zc, _poly(z, CP), ONE)
        y = yc if (k & 1) != 0 else ys
        return _i32_as_f32(_f32_as_i32(y) ^ ((k << 30) & SIGN))

    @_jitable
    def reduce(x):
        rh, rln, k = cody_waite(x)
        rh2, rln2, k2 = payne_hanek(x)
        small = abs(x) < CW_MAX
        return (rh if small else rh2), (rln if small else rln2), (k if small else k2)

    def sin_(x):
        rh, rln, k = reduce(x)
        y = kernel(rh, rln, k)
        return y if abs(x) < INF else x - x

    def sin_near(x):
        rh, rln, k = cody_waite(x)
        return kernel(rh, rln, k)

    def cos_(x):
        rh, rln, k = reduce(x)
        y = kernel(rh, rln, k + 1)  # cos(x) = sin(x + pi/2)
        return y if abs(x) < INF else x - x

    def cos_near(x):
        rh, rln, k = cody_waite(x)
        return kernel(rh, rln, k + 1)

    return sin_, cos_, sin_near, cos_near


def _make_sincos(T, SP, CP, reduce):
    """sin and cos from the quadrant reduction, a sin and a cos kernel on |r| <= pi/4."""
    F = T.f
    SP, CP = tuple(F(c) for c in SP), tuple(F(c) for c in CP)
    S1, SR = SP[0], SP[1:]
    ONE, HALF = F(1), F(0.5)
    INF = T.inf
    TINY = _TRIG_TINY32 if T is _T32 else _TRIG_TINY64

    @_jitable
    def ksin(x, y):
        """sin(x + y) for |x| <= pi/4, |y| tiny."""
        z = x * x
        v = z * x
        r = _poly(z, SR)
        return x - ((z * (HALF * y - v * r) - y) - v * S1)

    @_jitable
    def kcos(x, y):
        """cos(x + y) for |x| <= pi/4, |y| tiny."""
        z = x * x
        r = z * _poly(z, CP)
        hz = HALF * z
        w = ONE - hz
        return w + (((ONE - w) - hz) + (z * r - x * y))

    def sin_(x):
        ax = abs(x)
        r, r_lo, k = reduce(ax)
        s = ksin(r, r_lo)
        c = kcos(r, r_lo)
        y = c if k & 1 else s
        y = -y if ((k & 2) != 0) != (x < 0) else y
        y = x if ax < TINY else y
        return y if ax < INF else x - x

    def cos_(x):
        ax = abs(x)
        r, r_lo, k = reduce(ax)
        s = ksin(r, r_lo)
        c = kcos(r, r_lo)
        y = s if k & 1 else c
        y = -y if (k + 1) & 2 else y
        return y if ax < INF else x - x

    return sin_, cos_


def _make_tan(T, TP, reduce):
    F = T.f
    TP = tuple(F(c) for c in TP)
    ONE = F(1)
    INF = T.inf
    TINY = _TRIG_TINY32 if T is _T32 else _TRIG_TINY64

    def tan_(x):
        ax = abs(x)
        r, r_lo, k = reduce(ax)
        z = r * r
        p = (z * r) * _poly(z, TP)
        t = r + p
        t_lo = ((r - t) + p) + r_lo * (ONE + t * t)
        # odd quadrant: -1 / (t + t_lo), with the reciprocal corrected by its exact residual
        inv = _div(ONE, t)
        e = _fma(-t, inv, ONE)
        cot = inv + inv * (e - t_lo * inv)
        y = -cot if k & 1 else t + t_lo
        y = -y if x < 0 else y
        y = x if ax < TINY else y
        return y if ax < INF else x - x

    return tan_


_sin32, _cos32, _sin_near32, _cos_near32 = _make_sincos32(_SIN_P32, _COS_P32)
_sin64, _cos64 = _make_sincos(_T64, _SIN_P64, _COS_P64, _reduce64)
_sin_near64, _cos_near64 = _make_sincos(_T64, _SIN_P64, _COS_P64, _cody_waite64)
_tan32 = _make_tan(_T32, _TAN_P32, _reduce32)
_tan64 = _make_tan(_T64, _TAN_P64, _reduce64)
_tan_near32 = _make_tan(_T32, _TAN_P32, _cody_waite32)
_tan_near64 = _make_tan(_T64, _TAN_P64, _cody_waite64)


def sin(x):
    """Sine (full-range argument reduction)."""
    return np.sin(_as_float(x))


def cos(x):
    """Cosine (full-range argument reduction)."""
    return np.cos(_as_float(x))


def tan(x):
    """Tangent (full-range argument reduction)."""
    return np.tan(_as_float(x))


def trig_near(x):
    """Whether sin_near/cos_near/tan_near are exact for x: finite and of moderate size."""
    x = _as_float(x)
    return np.abs(x) < (_TRIG_NEAR32 if np.asarray(x).dtype == np.float32 else _TRIG_NEAR64)


def sin_near(x):
    """sin(x) for trig_near(x): the Cody-Waite reduction only."""
    return sin(x)


def cos_near(x):
    """cos(x) for trig_near(x): the Cody-Waite reduction only."""
    return cos(x)


def tan_near(x):
    """tan(x) for trig_near(x): the Cody-Waite reduction only."""
    return tan(x)


_register(sin, _sin32, _sin64)
_register(cos, _cos32, _cos64)
_register(tan, _tan32, _tan64)
_register(trig_near, _trig_near32, _trig_near64)
_register(sin_near, _sin_near32, _sin_near64)
_register(cos_near, _cos_near32, _cos_near64)
_register(tan_near, _tan_near32, _tan_near64)
