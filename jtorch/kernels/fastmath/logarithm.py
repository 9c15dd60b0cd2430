"""log, log2, log10, log1p; their ``*_normal`` variants for guarded loops (``log_ok``,
``log1p_ok``); and the double-word ``log_dw`` and ``decompose`` that the inverse hyperbolic
functions and pow build on."""

from types import SimpleNamespace

import numpy as np

from ._core import (
    _LN2,
    _LOG2E,
    _LOG10_2,
    _LOG10E,
    _SQRT_HALF,
    _T32,
    _T64,
    _as_float,
    _frac,
    _jitable,
    _poly,
    _register,
)
from ._intrinsics import _div, _fma

# log(1+f) = 2s + s*R(s^2), s = f/(2+f); R(z) = z * P(z)
_LOG_P32 = (0.6666666269302368, 0.40000975131988525, 0.28498485684394836, 0.24286235868930817)
_LOG_P64 = (
    0.6666666666666734,
    0.3999999999941705,
    0.28571428741890625,
    0.22222198621883077,
    0.18183561890381494,
    0.1531411082794253,
    0.14795364292731777,
)


def _make_log(T, P):
    F, as_int, as_float = T.f, T.as_int, T.as_float
    P = tuple(F(c) for c in P)
    MANT = T.mant
    ONE, TWO, HALF, ZERO = F(1), F(2), F(0.5), F(0)
    INF, NAN = T.inf, T.nan
    OFF = T.bits_of(T.c(_SQRT_HALF))
    MANT_MASK = (1 << MANT) - 1
    ITYPE = T.i  # Numba widens int32 arithmetic to int64: narrowed back for 8-lane int ops
    TINY = T.tiny
    SUB_SCALE = F(2.0 ** (MANT + 2))
    SUB_K = -(MANT + 2)
    # dk * X_HI exact for |dk| <= 2**11 (k of subnormals included)
    LN2_HI, LN2_LO = T.split(_frac(_LN2), T.mant + 1 - 12)
    IVLN2, IVLN2_LO = T.split(_frac(_LOG2E), T.mant + 1)
    IVLN10, IVLN10_LO = T.split(_frac(_LOG10E), T.mant + 1)
    LOG10_2_HI, LOG10_2_LO = T.split(_frac(_LOG10_2), T.mant + 1 - 12)
    LOG1P_TINY = F(2.0**-25) if T is _T32 else F(2.0**-54)

    @_jitable
    def decompose_normal(x):
        """x (positive, normal, finite) = 2^k * (1 + f), 1 + f in [sqrt(1/2), sqrt(2))."""
        tmp = ITYPE(as_int(x) - OFF)
        k = ITYPE(tmp >> MANT)
        f = as_float((tmp & MANT_MASK) + OFF) - ONE
        return f, k

    @_jitable
    def decompose(x):
        """decompose_normal for every positive finite x (subnormals scaled up first)."""
        sub = x < TINY
        f, k = decompose_normal(x * SUB_SCALE if sub else x)
        return f, ITYPE(k + SUB_K if sub else k)

    @_jitable
    def log1p_tail(f):
        """(hfsq, r) with log(1+f) = f - hfsq + r."""
        s = _div(f, TWO + f)
        z = s * s
        hfsq = HALF * f * f
        return hfsq, s * (hfsq + z * _poly(z, P))

    @_jitable
    def specials(x, y):
        y = NAN if x < ZERO else y
        y = -INF if x == ZERO else y
        return x if not (x < INF) else y  # +inf and nan

    @_jitable
    def log_fk(f, k):
        hfsq, r = log1p_tail(f)
        dk = F(k)
        return dk * LN2_HI - ((hfsq - (r + dk * LN2_LO)) - f)

    @_jitable
    def log1p_dw(f):
        """log(1 + f) as an unevaluated sum v_hi + v_lo (v_lo ~ an ulp of v_hi)."""
        hfsq, r = log1p_tail(f)
        v_hi = f - hfsq
        return v_hi, ((f - v_hi) - hfsq) + r

    # log2 = k + v/ln2, log10 = k log10(2) + v/ln10 with v = v_hi + v_lo: the leading product
    # is fused with the integer part (one rounding), the rest is a correction of ~an ulp.
    # Max error 1.2 ulp (log2), 1.5 ulp (log10) against 0.8 for the FDLIBM hi/lo split that
    # costs ~6 more operations.
    @_jitable
    def log2_fk(f, k):
        v_hi, v_lo = log1p_dw(f)
        return _fma(v_hi, IVLN2, F(k)) + _fma(v_lo, IVLN2, v_hi * IVLN2_LO)

    @_jitable
    def log10_fk(f, k):
        v_hi, v_lo = log1p_dw(f)
        dk = F(k)
        return _fma(v_hi, IVLN10, dk * LOG10_2_HI) + (_fma(v_lo, IVLN10, v_hi * IVLN10_LO) + dk * LOG10_2_LO)

    @_jitable
    def log1p_u(x, u, f, k):
        """log1p(x) from u = 1 + x (rounded) = 2^k (1 + f)."""
        # rounding error of u = 1 + x (TwoSum, exact), as a relative correction
        bb = u - ONE
        c = _div((ONE - (u - bb)) + (x - bb), u)
        k0 = k == 0
        f = x if k0 else f
        c = ZERO if k0 else c
        hfsq, r = log1p_tail(f)
        dk = F(k)
        y = dk * LN2_HI - ((hfsq - (r + (dk * LN2_LO + c))) - f)
        return x if abs(x) < LOG1P_TINY else y  # keeps -0.0

    def log_(x):
        f, k = decompose(x)
        return specials(x, log_fk(f, k))

    def log2_(x):
        f, k = decompose(x)
        return specials(x, log2_fk(f, k))

    def log10_(x):
        f, k = decompose(x)
        return specials(x, log10_fk(f, k))

    def log1p_(x):
        u = ONE + x
        f, k = decompose(u)
        y = log1p_u(x, u, f, k)
        y = NAN if x < -ONE else y
        y = -INF if x == -ONE else y
        return x if not (x < INF) else y

    # Variants for log_ok(x) (x positive, normal, finite) and log1p_ok(x) (-1 < x < inf):
    # no subnormal scaling, no special values (the guarded loops run them per block).
    def log_ok(x):
        return (x >= TINY) & (x < INF)  # & rather than and: no branch in the vector loop

    def log1p_ok(x):
        return (x > -ONE) & (x < INF)

    def log_normal(x):
        f, k = decompose_normal(x)
        return log_fk(f, k)

    def log2_normal(x):
        f, k = decompose_normal(x)
        return log2_fk(f, k)

    def log10_normal(x):
        f, k = decompose_normal(x)
        return log10_fk(f, k)

    def log1p_normal(x):
        u = ONE + x  # >= 2^-24 (normal) for x > -1
        f, k = decompose_normal(u)
        return log1p_u(x, u, f, k)

    @_jitable
    def log_dw(hi, lo, kadd):
        """log(hi + lo) + kadd*ln2 for hi > 0 (|lo| << hi), accurate also when the result is small."""
        f, k = decompose(hi)
        c = _div(lo, hi)
        hfsq, r = log1p_tail(f)
        dk = F(k + kadd)
        y = dk * LN2_HI - ((hfsq - (r + (dk * LN2_LO + c))) - f)
        return specials(hi, y)

    return SimpleNamespace(
        log=log_, log2=log2_, log10=log10_, log1p=log1p_, log_dw=log_dw, decompose=decompose,
        log_ok=log_ok, log1p_ok=log1p_ok, log_normal=log_normal, log2_normal=log2_normal,
        log10_normal=log10_normal, log1p_normal=log1p_normal,
    )


_LOGS32, _LOGS64 = _make_log(_T32, _LOG_P32), _make_log(_T64, _LOG_P64)
_log_dw32, _decompose32 = _LOGS32.log_dw, _LOGS32.decompose
_log_dw64, _decompose64 = _LOGS64.log_dw, _LOGS64.decompose


def log(x):
    """Natural logarithm."""
    return np.log(_as_float(x))


def log2(x):
    """Base-2 logarithm."""
    return np.log2(_as_float(x))


def log10(x):
    """Base-10 logarithm."""
    return np.log10(_as_float(x))


def log1p(x):
    """log(1 + x), accurate near 0."""
    return np.log1p(_as_float(x))


def log_ok(x):
    """Whether the *_normal logarithms are exact for x: positive, normal and finite."""
    x = _as_float(x)
    return (x >= np.finfo(x.dtype).tiny) & (x < np.inf)


def log1p_ok(x):
    """Whether log1p_normal is exact for x: -1 < x < inf."""
    x = _as_float(x)
    return (x > -1) & (x < np.inf)


def log_normal(x):
    """log(x) for log_ok(x): no subnormal scaling, no special values."""
    return log(x)


def log2_normal(x):
    """log2(x) for log_ok(x)."""
    return log2(x)


def log10_normal(x):
    """log10(x) for log_ok(x)."""
    return log10(x)


def log1p_normal(x):
    """log1p(x) for log1p_ok(x)."""
    return log1p(x)


for _name in ("log", "log2", "log10", "log1p", "log_ok", "log1p_ok", "log_normal", "log2_normal",
              "log10_normal", "log1p_normal"):
    _register(globals()[_name], getattr(_LOGS32, _name), getattr(_LOGS64, _name))
