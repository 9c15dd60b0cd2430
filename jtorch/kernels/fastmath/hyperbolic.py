# ruff: noqa: FURB136
# FURB136: selects are deliberate (vector selects; the CUDA target mis-handles integer min/max).
"""tanh, sigmoid, sinh, cosh, built on the exp cores."""

import numpy as np

from ._core import _LN2, _LOG2E, _T32, _T64, _as_float, _frac, _jitable, _poly, _register, _scalers
from ._intrinsics import _div, _fma
from .exponential import _EXP_P64, _expk32, _expk64

# tanh(x) = x + x^3 P(x^2), |x| < 0.5493 (tanh = 1/2)
_TANH_P32 = (
    -0.3333333134651184,
    0.1333322674036026,
    -0.05394915118813515,
    0.021711410954594612,
    -0.008194444701075554,
    0.0021456824615597725,
)
_TANH_P64 = (
    -0.3333333333333333,
    0.1333333333333293,
    -0.053968253967948465,
    0.021869488524519184,
    -0.0088632352697616,
    0.0035921243250623515,
    -0.001455798953035153,
    0.0005897953834600044,
    -0.0002380787938429722,
    9.365987506133564e-05,
    -3.25659680269415e-05,
    7.2216369487166375e-06,
)
# sinh(x) = x + x^3 P(x^2), |x| < 1
_SINH_P32 = (
    0.1666666716337204,
    0.00833328440785408,
    0.00019856168364640325,
    2.577452733021346e-06,
    9.859621030727794e-08,
)
_SINH_P64 = (
    0.16666666666666666,
    0.008333333333333573,
    0.0001984126984106116,
    2.7557319310090925e-06,
    2.5052089412624494e-08,
    1.6061339191130333e-10,
    7.503263802462015e-13,
    6.475357315595627e-15,
)
# sigmoid's and tanh's e^r = 1 + r + r^2 P(r), |r| <= ln2/2: float32 one degree lower than exp's (relative
# error 2^-28.3, fitted with the leading coefficients rounded in turn); float64 is exp's.
_SIG_EXP_P32 = (
    0.4999999403953552,
    0.1666652113199234,
    0.04166826605796814,
    0.008368676528334618,
    0.0013820718741044402,
)
_SIG_EXP_P64 = _EXP_P64


def _make_hyperbolic(T, expk, TANH_P, SINH_P, SIG_P):
    F = T.f
    pow2i, scale2, _ = _scalers(T)
    TANH_P, SINH_P, SIG_P = (tuple(F(c) for c in P) for P in (TANH_P, SINH_P, SIG_P))
    ONE, TWO, ZERO = F(1), F(2), F(0)
    TANH_X0, SINH_X0 = F(0.5493), F(1.0)
    # tanh: -2|x| clamped at TANH_LO (tanh rounds to 1 from |x| = 9.01 in float32, 19.06 in
    # float64) keeps g = 2^k normal and the residuals of 1 + t exact
    if T is _T32:
        TANH_LO, EXP_CLAMP, KCAP = F(-20.0), F(90.0), 30
        TINY = F(2.0**-13)
        # sigmoid: e^SIG_LO rounds to 0; for every k >= SIG_LO * log2(e), 2^(k + SIG_SHIFT) is
        # normal with room below it for the division residual (~2^-MANT of it) to be normal too
        SIG_LO, SIG_SHIFT = F(-110.0), 64
    else:
        TANH_LO, EXP_CLAMP, KCAP = F(-40.0), F(711.0), 60
        TINY = F(2.0**-28)
        SIG_LO, SIG_SHIFT = F(-760.0), 256
    LOG2E, MAGIC = T.c(_LOG2E), T.magic
    LN2_HI, LN2_LO = T.split(_frac(_LN2), T.mant + 1 - 12)
    as_int, as_float, MANT = T.as_int, T.as_float, T.mant
    BIAS = T.bias - T.magic_i  # as_int(k + MAGIC) + BIAS = k + bias
    SIG_BIAS = T.bias + SIG_SHIFT - T.magic_i  # as_int(k + MAGIC) + SIG_BIAS = k + SHIFT + bias
    SIG_UP = F(2.0**SIG_SHIFT)

    @_jitable
    def exp_parts_neg(a, bias):
        """e^a = g (1 + s) for a <= 0 in the clamped range, from a short exp kernel: g = 2^k
        built from the bits of the magic-rounded k + MAGIC (``bias`` adds to its exponent), so
        the exponent stays in int32 lanes for float32; s = e^r - 1."""
        tm = _fma(a, LOG2E, MAGIC)  # k + MAGIC, rounded once
        kf = tm - MAGIC
        r = _fma(-kf, LN2_LO, _fma(-kf, LN2_HI, a))
        s = _fma(r * r, _poly(r, SIG_P), r)
        return as_float((as_int(tm) + bias) << MANT), s

    def tanh_(x):
        """x + x^3 P(x^2) below TANH_X0, else (1 - t) / (1 + t) with t = e^-2|x| = g (1 + s)
        (<= 1/3), as sigmoid: g s is exact, so the denominator is a double-word d + d_lo (the
        rounded sum and its residual), the numerator is 2 - (d + d_lo) with 2 - d exact, and the
        quotient is corrected by its residual and rounded once. The error of the short exp
        enters damped by 2t / (1 + t)^2 <= 3/8. Selects only, one division, int32 lanes for
        float32. (1 - 2 / (1 + e^2|x|), even with a double-word exp and reciprocal, is ~2x slower
        and doubles the rounding of the reciprocal: 0.78 / 1.03 ulp just above TANH_X0, against
        0.63 / 0.70 here.)"""
        ax = abs(x)
        z = x * x
        y_small = x + (x * z) * _poly(z, TANH_P)
        a = -(ax + ax)
        a = TANH_LO if a < TANH_LO else a
        g, s = exp_parts_neg(a, BIAS)
        t = _fma(g, s, g)
        d = ONE + t
        d_lo = _fma(g, s, (ONE - d) + g)  # 1 + g + g s - d, exact but for its rounding
        n = TWO - d  # exact: 1 - t = n - d_lo
        inv = _div(ONE, d)
        q = n * inv
        y = _fma(_fma(-(ONE + q), d_lo, _fma(-q, d, n)), inv, q)
        y = -y if x < ZERO else y
        y = y if ax >= TANH_X0 else y_small  # (a nan x is returned, as by torch)
        return x if ax < TINY else y

    def sigmoid_(x):
        """n / (1 + t) with t = e^-|x| (<= 1) and n = 1 (x >= 0) or t (x < 0). e^-|x| = 2^k (1 + s)
        from a short exp kernel; t = g + g s with g = 2^k is kept as a double-word (g s is exact),
        so are the denominator 1 + t and the numerator, and the quotient is corrected by its
        residual. Numerator and denominator are both scaled by U = 2^SIG_SHIFT, which keeps the
        terms of a subnormal result (and its residual) normal, so that the quotient rounds once.
        Selects only, one division, no int64 lanes."""
        a = -abs(x)
        a = SIG_LO if a < SIG_LO else a
        gu, s = exp_parts_neg(a, SIG_BIAS)  # U g = 2^(k + SIG_SHIFT), s = e^r - 1
        tu = _fma(gu, s, gu)  # U t, rounded
        d = SIG_UP + tu
        d_lo = _fma(gu, s, (SIG_UP - d) + gu)  # U (1 + g + g s) - d, exact where it matters
        inv = _div(ONE, d)
        neg = x < ZERO
        n = tu if neg else SIG_UP
        n_lo = _fma(gu, s, gu - tu) if neg else ZERO
        q = n * inv
        e = _fma(-q, d_lo, _fma(-q, d, n) + n_lo)
        return _fma(e, inv, q)

    @_jitable
    def exp_parts(ax):
        """e^ax = 2^k * (m + m_lo), and 2^-2k / m (for the reciprocal term)."""
        a = EXP_CLAMP if ax > EXP_CLAMP else ax
        k, s = expk(a, ZERO)
        m = ONE + s
        m_lo = (ONE - m) + s
        k2 = k + k
        inv = pow2i(-(2 * KCAP if k2 > 2 * KCAP else k2)) * _div(ONE, m)
        return k, m, m_lo, inv

    def sinh_(x):
        ax = abs(x)
        z = x * x
        y_small = x + (x * z) * _poly(z, SINH_P)
        k, m, m_lo, inv = exp_parts(ax)
        y = scale2(m + (m_lo - inv), k - 1)
        y = -y if x < ZERO else y
        y = y_small if ax < SINH_X0 else y
        return x if ax < TINY else y

    def cosh_(x):
        k, m, m_lo, inv = exp_parts(abs(x))
        return scale2(m + (m_lo + inv), k - 1)

    return tanh_, sigmoid_, sinh_, cosh_


_tanh32, _sigmoid32, _sinh32, _cosh32 = _make_hyperbolic(_T32, _expk32, _TANH_P32, _SINH_P32, _SIG_EXP_P32)
_tanh64, _sigmoid64, _sinh64, _cosh64 = _make_hyperbolic(_T64, _expk64, _TANH_P64, _SINH_P64, _SIG_EXP_P64)


def tanh(x):
    """Hyperbolic tangent."""
    return np.tanh(_as_float(x))


def sigmoid(x):
    """Logistic function 1 / (1 + e**-x)."""
    x = _as_float(x)
    with np.errstate(over="ignore"):
        return (1 / (1 + np.exp(-x))).astype(x.dtype)


def sinh(x):
    """Hyperbolic sine."""
    return np.sinh(_as_float(x))


def cosh(x):
    """Hyperbolic cosine."""
    return np.cosh(_as_float(x))


_register(tanh, _tanh32, _tanh64)
_register(sigmoid, _sigmoid32, _sigmoid64)
_register(sinh, _sinh32, _sinh64)
_register(cosh, _cosh32, _cosh64)
