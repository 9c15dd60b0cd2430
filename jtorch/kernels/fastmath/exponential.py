# ruff: noqa: FURB136
# FURB136: selects are deliberate (vector selects; the CUDA target mis-handles integer min/max).
"""exp, exp2, expm1, and the exp cores ``_expk*`` (e^a = 2^k (1 + s)) that the hyperbolic
functions, erf, gelu, softplus and mish build on."""

import numpy as np

from ._core import (
    _LN2,
    _LOG2E,
    _T32,
    _T64,
    _as_float,
    _frac,
    _jitable,
    _poly,
    _register,
    _scalers,
    _two_prod,
    _two_sum,
)
from ._intrinsics import _fma, _mla

# exp(r) = 1 + r + r^2 * P(r), |r| <= ln2/2
_EXP_P32 = (
    0.5,
    0.16666647791862488,
    0.041666481643915176,
    0.008337880484759808,
    0.0013933323789387941,
    0.00017327029490843415,
)
_EXP_P64 = (
    0.5,
    0.16666666666666688,
    0.041666666666666824,
    0.00833333333331389,
    0.0013888888888777787,
    0.00019841269903390007,
    2.4801587559906682e-05,
    2.7557228643910494e-06,
    2.7557066734573006e-07,
    2.5113949950508516e-08,
    2.097815610761366e-09,
)
# 2^r = 1 + r * P(r), |r| <= 1/2
_EXP2_P32 = (
    0.6931472420692444,
    0.24022655189037323,
    0.05550272762775421,
    0.009617436677217484,
    0.0013417149893939495,
    0.00015630685084033757,
)
_EXP2_P64 = (
    0.6931471805599453,
    0.2402265069591007,
    0.05550410866482338,
    0.009618129107630232,
    0.0013333558146032343,
    0.00015403530388860564,
    1.525273417155851e-05,
    1.321549152077523e-06,
    1.0177928486900176e-07,
    7.052746393215855e-09,
    4.4741803796347016e-10,
    2.926758165716077e-11,
)
# expm1(r) = r + r^2/2 + r^3 * P(r), |r| <= ln2/2
_EXPM1_P32 = (
    0.1666666567325592,
    0.04166646674275398,
    0.008333642967045307,
    0.001393504673615098,
    0.00019664537103381008,
)
_EXPM1_P64 = (
    0.16666666666666677,
    0.041666666666666644,
    0.008333333333321258,
    0.001388888888889363,
    0.00019841269887378471,
    2.48015873188722e-05,
    2.7557242694324e-06,
    2.75572667223093e-07,
    2.510963878550527e-08,
    2.09208033633138e-09,
)


def _make_exp(T, P, P2, PM1):
    F = T.f
    pow2i, scale2, rint = _scalers(T)
    P, P2, PM1 = tuple(F(c) for c in P), tuple(F(c) for c in P2), tuple(F(c) for c in PM1)
    ONE, HALF = F(1), F(0.5)
    LOG2E = T.c(_LOG2E)
    # k * LN2_HI is exact for the |k| <= 2 * BIAS + MANT that occur
    LN2_HI, LN2_LO = T.split(_frac(_LN2), T.mant + 1 - 12)
    as_int, as_float, ITYPE, SHIFT = T.as_int, T.as_float, T.i, T.i(T.mant)
    # exp_normal's range: k >= 2 - BIAS (1 + s may be below 1) and k <= BIAS, so 2^k (1 + s)
    # is normal and finite
    if T is _T32:
        NORMAL_LO, NORMAL_HI = F(-86.5), F(88.0)
    else:
        NORMAL_LO, NORMAL_HI = F(-707.0), F(709.0)
    if T is _T32:
        LO, HI = F(-104.0), F(89.0)  # exp(LO) rounds to 0, exp(HI) overflows
        LO2, HI2 = F(-151.0), F(129.0)
        LOM1, KCAP, TINY = F(-30.0), 30, F(2.0**-25)
    else:
        LO, HI = F(-746.0), F(710.0)
        LO2, HI2 = F(-1076.0), F(1025.0)
        LOM1, KCAP, TINY = F(-45.0), 60, F(2.0**-54)

    @_jitable
    def expk(a, a_lo):
        """exp(a + a_lo) = 2^k * (1 + s) for a in the clamped exp range, |a_lo| tiny."""
        kf, k = rint(a * LOG2E)
        # fmas: kf * LN2_HI is exact, so the first is the exact Cody-Waite step; the others
        # each save an operation (this code does not contract a * b + c by itself)
        r = _fma(-kf, LN2_LO, _fma(-kf, LN2_HI, a)) + a_lo
        return k, _fma(r * r, _poly(r, P), r)

    @_jitable
    def expk0(a):
        """expk(a, 0) without the add of a zero tail, which LLVM keeps (-0.0 + 0.0 is +0.0):
        the same bits, since r = -0.0 and r = +0.0 give the same s."""
        kf, k = rint(a * LOG2E)
        r = _fma(-kf, LN2_LO, _fma(-kf, LN2_HI, a))
        return k, _fma(r * r, _poly(r, P), r)

    @_jitable
    def expk_dw(a, a_lo):
        """exp(a + a_lo) = 2^k * (1 + s + s_lo) with s + s_lo a double-word."""
        kf, k = rint(a * LOG2E)
        t = _fma(-kf, LN2_HI, a)  # exact
        w, w_lo = _two_prod(kf, LN2_LO)
        r, e = _two_sum(t, -w)
        r, r_lo = _two_sum(r, (e - w_lo) + a_lo)
        q = (r * r) * _poly(r, P)
        s = r + q
        return k, s, ((r - s) + q) + r_lo * (ONE + s)

    def exp_(x):
        xc = LO if x < LO else x
        xc = HI if xc > HI else xc
        k, s = expk0(xc)
        return scale2(ONE + s, k)

    def exp_ok(x):
        return (x > NORMAL_LO) & (x < NORMAL_HI)  # & rather than and: no branch in the loop

    def exp_normal(x):
        # exp_(x) where exp_ok(x): no clamp, and 2^k added to the exponent field of 1 + s
        # (in [0.7, 1.42]) where exp_ multiplies by two powers of two; both are exact for a
        # normal result, so the bits are the same
        k, s = expk0(x)
        return as_float(as_int(ONE + s) + ITYPE(k << SHIFT))

    def exp2_(x):
        xc = LO2 if x < LO2 else x
        xc = HI2 if xc > HI2 else xc
        kf, k = rint(xc)
        r = xc - kf
        y = ONE + r * _poly(r, P2)
        return scale2(y, k)

    def expm1_(x):
        xc = LOM1 if x < LOM1 else x
        xc = HI if xc > HI else xc
        kf, k = rint(xc * LOG2E)
        # r_hi + r_lo = x - k*ln2 (double-word, the result can be much smaller than r)
        t = _fma(-kf, LN2_HI, xc)
        w = kf * LN2_LO
        r = t - w
        r_lo = (t - r) - w
        q = (r * r) * _mla(r, _poly(r, PM1), HALF)
        p = r + q
        p_lo = ((r - p) + q) + _mla(r, r_lo, r_lo)
        # expm1(x) = 2^k * (p + (1 - 2^-k)); 1 - 2^-k is exact for the k where it matters
        kc = KCAP if k > KCAP else k
        m = pow2i(-kc)
        c = ONE - m
        c_lo = (ONE - c) - m
        y = scale2((p + c) + (p_lo + c_lo), k)
        return x if abs(x) < TINY else y

    return exp_, exp2_, expm1_, expk, expk_dw, exp_normal, exp_ok


_exp32, _exp2_32, _expm1_32, _expk32, _expk_dw32, _exp_normal32, _exp_ok32 = _make_exp(_T32, _EXP_P32, _EXP2_P32, _EXPM1_P32)
_exp64, _exp2_64, _expm1_64, _expk64, _expk_dw64, _exp_normal64, _exp_ok64 = _make_exp(_T64, _EXP_P64, _EXP2_P64, _EXPM1_P64)


def exp(x):
    """e**x."""
    return np.exp(_as_float(x))


def exp_ok(x):
    """Whether exp_normal is exact for x: exp(x) is normal and finite (float32 -86.5 < x < 88,
    float64 -707 < x < 709)."""
    x = _as_float(x)
    lo, hi = (-86.5, 88.0) if x.dtype == np.float32 else (-707.0, 709.0)
    return (x > lo) & (x < hi)


def exp_normal(x):
    """exp(x) for exp_ok(x): no clamp to the overflow range, 2^k set in the exponent field."""
    return exp(x)


def exp2(x):
    """2**x."""
    return np.exp2(_as_float(x))


def expm1(x):
    """e**x - 1, accurate near 0."""
    return np.expm1(_as_float(x))


_register(exp, _exp32, _exp64)
_register(exp_ok, _exp_ok32, _exp_ok64)
_register(exp_normal, _exp_normal32, _exp_normal64)
_register(exp2, _exp2_32, _exp2_64)
_register(expm1, _expm1_32, _expm1_64)
