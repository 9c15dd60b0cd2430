"""sin, cos, tan, and their ``*_near`` variants (Cody-Waite reduction only) for the x where
``trig_near(x)``."""

from fractions import Fraction

import numpy as np

from ._core import _PI, _T32, _T64, _as_float, _jitable, _poly, _register
from ._intrinsics import _div, _f64_as_i64, _fma
from ._trig_reduction import (
    _TRIG_NEAR32,
    _TRIG_NEAR64,
    _cody_waite32,
    _cody_waite64,
    _payne_hanek32_cos,
    _payne_hanek32_sin,
    _reduce32,
    _reduce64,
)

# float32 sin and cos: sin(r) = r + r^3 P(z), z = r^2, |r| <= pi/2, evaluated in float64 (relative
# error 2^-27.3, below 0.1 ulp of the float32 result)
_SIN_PI_P32 = (-0.16666659544524606, 0.008333066081445337, -0.00019809590005696117, 2.605750476053809e-06)
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


def _make_sincos32(P):
    """float32 sin and cos in float64 arithmetic: x = j*pi + r, |r| <= pi/2, exact enough in float64
    (Cody-Waite with pi in two doubles below 2^10, the integer Payne-Hanek above), then one odd
    polynomial, sin(x) = (-1)^j sin(r), rounded once to float32. cos(x) = (-1)^j sin(r) for
    x = (j - 1/2)*pi + r. One polynomial instead of a sin and a cos kernel and their select, and no
    double-word reduction."""
    F, D = np.float32, np.float64
    P = tuple(D(c) for c in P)
    pi = Fraction(_PI)
    PI_HI, PIO2_HI = D(float(pi)), D(float(pi / 2))
    PI_LO, PIO2_LO = D(float(pi - Fraction(float(PI_HI)))), D(float(pi / 2 - Fraction(float(PIO2_HI))))
    INV_PI, MAGIC = D(float(1 / pi)), _T64.magic
    ONE, HALF, TWO = D(1), D(0.5), D(2)
    CW_MAX, TINY, INF = _TRIG_NEAR32, _TRIG_TINY32, F(np.inf)

    @_jitable
    def sin_poly(r):
        z = r * r
        return _fma(r * z, _poly(z, P), r)

    @_jitable
    def sin_cw(ax):
        """(r, j) with ax = j*pi + r, for ax < CW_MAX."""
        xd = np.float64(ax)
        t = _fma(xd, INV_PI, MAGIC)  # j + MAGIC
        jf = t - MAGIC
        return _fma(-jf, PI_LO, _fma(-jf, PI_HI, xd)), _f64_as_i64(t)

    @_jitable
    def cos_cw(ax):
        """(r, j) with ax = (j - 1/2)*pi + r, for ax < CW_MAX."""
        xd = np.float64(ax)
        t = _fma(xd, INV_PI, HALF) + MAGIC  # j + MAGIC
        mf = _fma(t - MAGIC, TWO, -ONE)  # 2j - 1
        return _fma(-mf, PIO2_LO, _fma(-mf, PIO2_HI, xd)), _f64_as_i64(t)

    def sin_(x):
        ax = abs(x)
        r, j = sin_cw(ax)
        rh, jh = _payne_hanek32_sin(ax)
        small = ax < CW_MAX
        j = j if small else jh  # only the parity is used
        y = np.float32(sin_poly(r if small else rh))
        y = -y if ((j & 1) != 0) != (x < 0) else y
        y = x if ax < TINY else y  # signed zeros
        return y if ax < INF else x - x

    def sin_near(x):
        ax = abs(x)
        r, j = sin_cw(ax)
        y = np.float32(sin_poly(r))
        y = -y if ((j & 1) != 0) != (x < 0) else y
        return x if ax < TINY else y

    def cos_(x):
        ax = abs(x)
        r, j = cos_cw(ax)
        rh, jh = _payne_hanek32_cos(ax)
        small = ax < CW_MAX
        j = j if small else jh
        y = np.float32(sin_poly(r if small else rh))
        y = -y if (j & 1) != 0 else y
        return y if ax < INF else x - x

    def cos_near(x):
        r, j = cos_cw(abs(x))
        y = np.float32(sin_poly(r))
        return -y if (j & 1) != 0 else y

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


_sin32, _cos32, _sin_near32, _cos_near32 = _make_sincos32(_SIN_PI_P32)
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
