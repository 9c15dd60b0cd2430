# ruff: noqa: FURB136
# FURB136: selects are deliberate (vector selects; the CUDA target mis-handles integer min/max).
"""Activation functions: gelu (x * Phi(x)) and its derivative, softplus (log(1 + e^x)) and
mish (x * tanh(softplus(x)))."""

import math
from fractions import Fraction

import numpy as np

from ._core import (
    _F32_INF,
    _T32,
    _as_float,
    _frac,
    _poly,
    _pow2i_32,
    _pow2i_64,
    _register,
    _scale2_32,
    _scale2_64,
    _two_prod,
)
from ._intrinsics import _div, _fma
from .error_function import erfc
from .exponential import _expk32, _expk64, exp
from .logarithm import log1p

# --------------------------------------------------------------------------------------------
# gelu
# --------------------------------------------------------------------------------------------
#
# gelu(x) = x * Phi(x). float32 writes Phi(-b), b = |x|, as e^{-b^2/2} * H(v): H a polynomial
# in v = 0.4 b / (1 + 0.4 b) (no small-|x| branch, no double-word quotient; v rather than
# t = 1 - v keeps the quotient's rounding relative to v, small near 0), e^{-b^2/2} from the
# exact b^2 / 2; then x * (1 - Phi(-b)) for x >= 0 and x * Phi(-b) below. ~30 vector
# operations against ~75 for x * (1 + erf(x / sqrt 2)) / 2 through erf, and the negative side
# keeps its relative accuracy where 1 + erf cancels (x = -5: 1 + erf is 10 ulp of 1, off by
# 4%, as torch's float32 gelu is). Max error (dense sweep): 4.1 ulp for |x| < 2, 7 ulp on
# [-5, -2], 11.5 ulp on [-13, -5] (v's rounding, amplified ~0.4 b); 1.1 ulp for x > 2; below
# -13 the result rounds to -0 (|gelu| < 1e-37). H: a least-squares fit weighted to minimax
# relative error over b in [0, 13] against scipy's erfcx (7.2e-8 with the float32
# coefficients, rounded one at a time and the rest refitted).
_GELU_H32 = (
    0.18115918338298798,
    -0.5327711701393127,
    0.4963991641998291,
    -0.1644342988729477,
    -0.1142016053199768,
    0.06468933820724487,
    0.06798471510410309,
    -0.016444692388176918,
    -0.04017946124076843,
)


def _make_gelu32():
    F = np.float32
    H = tuple(F(c) for c in _GELU_H32)
    ONE, HALF, ZERO, Q_INV = F(1), F(0.5), F(0), F(2.5)
    V_MID, B_MAX = F(0.41935486), F(13)
    E_MAX, RSQRT_2PI = F(14.4), F(1 / math.sqrt(2 * math.pi))  # e^{-E_MAX^2/2} rounds to 0

    def gelu_(x):
        b = abs(x)
        bc = B_MAX if b > B_MAX else b
        g = _poly(_div(bc, bc + Q_INV) - V_MID, H)  # Phi(-b) e^{b^2/2}, v = 0.4 b / (1 + 0.4 b)
        h, h_lo = _two_prod(bc, HALF * bc)  # b^2 / 2 exactly
        k, s = _expk32(-h, -h_lo)  # e^{-b^2/2} = 2^k (1 + s), k >= -122
        p = _fma(g, s, g) * _pow2i_32(k)  # Phi(-b)
        p = ZERO if b > B_MAX else p
        return x * (ONE - p if x > ZERO else p)

    def gelu_grad_(x):
        """Phi(x) + x phi(x) from gelu's pieces: the one e^{-b^2/2} gives Phi(-b) and, over
        sqrt(2 pi), phi(x). It runs to b = E_MAX (e^{-b^2/2} subnormal, by scale2's one
        rounding), where Phi(-b) < 1e-41 is already 0."""
        b = abs(x)
        bc = B_MAX if b > B_MAX else b
        g = _poly(_div(bc, bc + Q_INV) - V_MID, H)
        be = E_MAX if b > E_MAX else b
        h, h_lo = _two_prod(be, HALF * be)
        k, s = _expk32(-h, -h_lo)
        e = _scale2_32(ONE + s, k)
        e = ZERO if b > E_MAX else e
        p = _fma(g, s, g) * _pow2i_32(k)  # (k >= -122 where it is kept)
        p = ZERO if b > B_MAX else p
        return _fma(x, RSQRT_2PI * e, ONE - p if x > ZERO else p)

    return gelu_, gelu_grad_


def _gelu64(x):
    # erfc rather than 1 + erf: no cancellation for negative x
    return x * (0.5 * erfc(x * -0.7071067811865476))


def _gelu_grad64(x):
    return _fma(x, 0.3989422804014327 * exp(-0.5 * x * x), erfc(x * -0.7071067811865476) * 0.5)


_gelu32, _gelu_grad32 = _make_gelu32()


# --------------------------------------------------------------------------------------------
# softplus
# --------------------------------------------------------------------------------------------
# softplus(x) = log(1 + e^x) = max(x, 0) + log1p(t), t = e^{-|x|} in (0, 1]: no overflow for any
# x. float32 writes log1p(t) = t * P(t), P a polynomial in t - 1/2 (relative fit error 1e-9,
# its constant term a double-word), with t = 2^k (1 + s) from the exp core so that (1 + s) P is
# one fma: one exp's work plus 12 fmas against exp and log1p (with its division); 1.65 ulp.
# float64 uses log1p and exp.
_SOFTPLUS_P32 = (
    -0.28852710127830505,
    0.1326097697019577,
    -0.06768805533647537,
    0.036610960960388184,
    -0.020566055551171303,
    0.011850676499307156,
    -0.006769764237105846,
    0.003998384345322847,
    -0.003211932023987174,
    0.002007977105677128,
)


def _make_softplus32():
    F = np.float32
    P = tuple(F(c) for c in _SOFTPLUS_P32)
    C0_HI, C0_LO = _T32.split(_frac(Fraction(math.log1p(0.5)) * 2), 24)  # log1p(1/2) / (1/2)
    ONE, HALF, ZERO, AMAX = F(1), F(0.5), F(0), F(104)  # e^-104 rounds to 0

    def softplus_(x):
        a = abs(x)
        a = AMAX if a > AMAX else a
        k, s = _expk32(-a, ZERO)
        t = _scale2_32(ONE + s, k)
        w = t - HALF
        p = C0_HI + _fma(w, _poly(w, P), C0_LO)
        return (x if x > ZERO else ZERO) + _scale2_32(_fma(s, p, p), k)

    return softplus_


_softplus32 = _make_softplus32()


def _softplus64(x):
    return (x if x > 0.0 else 0.0) + log1p(exp(-abs(x)))


# --------------------------------------------------------------------------------------------
# mish
# --------------------------------------------------------------------------------------------
# mish(x) = x tanh(log1p(e^x)) = x n / (n + 2) with n = e^x (e^x + 2): one exp and a quotient
# instead of exp, log1p and tanh; x > 20 gives x as torch's softplus threshold does (the
# quotient is 1 to working precision there). float32 takes e^x = 2^k (1 + s) from the float32
# exp core and the rest in float64, rounded once (no subnormal e^x for x < -87: x e^x stays
# accurate down to where it rounds to -0). float64 scales by 2^k at the end for the same
# reason.

_F32_TWENTY, _F32_MISH_LO, _F32_NAN = np.float32(20), np.float32(-120), np.float32(np.nan)
_MISH_LO64 = -1200.0


def _mish32(x):
    xc = _F32_MISH_LO if x < _F32_MISH_LO else x
    xc = _F32_TWENTY if xc > _F32_TWENTY else xc
    k, s = _expk32(xc, np.float32(0))
    e = (1.0 + np.float64(s)) * _pow2i_64(k)
    n = _fma(e, e, e + e)
    y = np.float32(np.float64(x) * _div(n, n + 2.0))
    y = y if x > -_F32_INF else _F32_NAN  # -inf * 0
    return x if x > _F32_TWENTY else y


def _mish64(x):
    xc = _MISH_LO64 if x < _MISH_LO64 else x
    xc = 20.0 if xc > 20.0 else xc
    k, s = _expk64(xc, 0.0)
    m = 1.0 + s
    e = _scale2_64(m, k)  # may underflow: it only enters (e + 2) / (n + 2) ~ 1 then
    n = _fma(e, e, e + e)
    y = _scale2_64(_fma(x, s, x) * _div(e + 2.0, n + 2.0), k)
    y = y if x > -math.inf else math.nan  # -inf * 0
    return x if x > 20.0 else y


def gelu(x):
    """x * Phi(x), Phi the standard normal distribution function (the exact GELU)."""
    x = _as_float(x)
    return x * (erfc(x * -0.7071067811865476) * 0.5)


def gelu_grad(x):
    """Phi(x) + x * phi(x), the derivative of gelu (float32 shares one exponential)."""
    x = _as_float(x)
    return x * (0.3989422804014327 * np.exp(-0.5 * x * x)) + erfc(x * -0.7071067811865476) * 0.5


def softplus(x):
    """log(1 + e^x), without overflow."""
    x = _as_float(x)
    with np.errstate(over="ignore"):
        return np.logaddexp(x.dtype.type(0), x)


def mish(x):
    """x * tanh(softplus(x)) (softplus with torch's threshold 20)."""
    x = _as_float(x)
    with np.errstate(over="ignore", invalid="ignore"):
        y = np.where(x > 20, x, x * np.tanh(np.log1p(np.exp(np.minimum(x, 20)))))
    return y[()] if np.ndim(y) == 0 else y


_register(gelu, _gelu32, _gelu64)
_register(gelu_grad, _gelu_grad32, _gelu_grad64)
_register(mish, _mish32, _mish64)
_register(softplus, _softplus32, _softplus64)
