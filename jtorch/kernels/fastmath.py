"""Vectorisable elementary functions for Numba kernels.

Why: this Numba build has no SVML, so ``math.exp`` or ``np.sin`` inside an ``njit`` loop is a
scalar libm call that blocks loop vectorisation. The functions here are branch-free
(selects, no early returns), built from arithmetic, ``llvm.fma``/``llvm.fmuladd`` and
float<->int bitcasts, so a loop such as::

    @numba.njit
    def kernel(a, out):
        for i in range(a.size):
            out[i] = fastmath.exp(a[i])

compiles to ``<8 x float>`` (or wider) vector code on AVX2 without ``fastmath=True``; nan, inf,
-0.0 and subnormal semantics are kept. Each public name is a plain Python function (NumPy
fallback, so ``NUMBA_DISABLE_JIT=1`` works) with a ``numba.extending.overload`` for the generic
target (CPU and CUDA) that picks the float32 or float64 implementation by argument type and
is inlined into the caller (``inline='always'``). float32 arguments are computed in float32
arithmetic and return float32.

Accuracy (max error in ulp vs the correctly rounded result, measured by
``tests/kernels/test_fastmath.py``; see the table in ``ACCURACY``).

Notes
- Polynomial coefficients are minimax fits (Remez exchange in mpmath, coefficients rounded
  to the working precision one at a time and the rest refitted).
- ``_mla(a, b, c)`` is ``llvm.fmuladd`` (fused when the target has FMA); ``_fma`` is an exact
  ``llvm.fma``, used only where an exact product is needed; without hardware FMA those few
  places fall back to Dekker's splitting (``_HAS_FMA``).
- CUDA: everything is pure arithmetic plus bitcast intrinsics and small constant tables, and
  the overloads are registered for ``target='generic'``. ``numba.cuda.compile_ptx`` of a device
  function calling these works; without a GPU driver, Numba's CUDA dispatcher asks the
  current device for its compute capability when compiling the inlined overloads, which the
  test works around by patching ``numba.cuda.dispatcher.get_current_device``.
"""

import math
from fractions import Fraction

import llvmlite.binding as _llb
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

__all__ = [
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
]

import os
_INLINE = os.environ.get("FM_INLINE", "never")
_HAS_FMA = bool(_llb.get_host_cpu_features().get("fma", False))


# --------------------------------------------------------------------------------------------
# Intrinsics: bitcasts and fused multiply-add
# --------------------------------------------------------------------------------------------

def _int_to_width(builder, value, from_type, bits):
    """Sign-extend or truncate an integer LLVM value to ``bits`` bits."""
    if from_type.bitwidth == bits:
        return value
    if from_type.bitwidth > bits:
        return builder.trunc(value, ir.IntType(bits))
    if from_type.signed:
        return builder.sext(value, ir.IntType(bits))
    return builder.zext(value, ir.IntType(bits))


@intrinsic(target="generic")
def _f32_as_i32(typingctx, x):
    """Reinterpret the bits of a float32 as int32."""
    if x != types.float32:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(32))

    return types.int32(types.float32), codegen


@intrinsic(target="generic")
def _i32_as_f32(typingctx, x):
    """Reinterpret the low 32 bits of an integer as float32 (Numba widens int arithmetic to
    int64, so any integer type is accepted and truncated)."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(_int_to_width(builder, args[0], x, 32), ir.FloatType())

    return types.float32(x), codegen


@intrinsic(target="generic")
def _f64_as_i64(typingctx, x):
    """Reinterpret the bits of a float64 as int64."""
    if x != types.float64:
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic(target="generic")
def _i64_as_f64(typingctx, x):
    """Reinterpret a (sign-extended) integer as the bits of a float64."""
    if not isinstance(x, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        return builder.bitcast(_int_to_width(builder, args[0], x, 64), ir.DoubleType())

    return types.float64(x), codegen


def _ternary_float_intrinsic(llvm_name):
    def typer(typingctx, a, b, c):
        if not (isinstance(a, types.Float) and a == b == c):
            return None

        def codegen(context, builder, sig, args):
            lty = args[0].type
            suffix = "f32" if lty == ir.FloatType() else "f64"
            fnty = ir.FunctionType(lty, [lty, lty, lty])
            fn = cgutils.get_or_insert_function(builder.module, fnty, f"{llvm_name}.{suffix}")
            return builder.call(fn, args)

        return a(a, b, c), codegen

    return typer


@intrinsic(target="generic")
def _div(typingctx, a, b):
    """a / b as a plain IEEE division (no ZeroDivisionError check, so it vectorises)."""
    if not (isinstance(a, types.Float) and a == b):
        return None

    def codegen(context, builder, sig, args):
        return builder.fdiv(args[0], args[1])

    return a(a, b), codegen


# _fma(a, b, c): a*b + c with a single rounding (``llvm.fma``).
_fma = intrinsic(target="generic")(_ternary_float_intrinsic("llvm.fma"))
# _mla(a, b, c): a*b + c, fused if the target has FMA (``llvm.fmuladd``); for polynomials.
_mla = intrinsic(target="generic")(_ternary_float_intrinsic("llvm.fmuladd"))


# --------------------------------------------------------------------------------------------
# Registration helpers
# --------------------------------------------------------------------------------------------

def _jitable(fn):
    """Make a plain Python helper callable (and always inlined) from jitted code."""
    overload(fn, target="generic", inline=_INLINE, strict=False)(lambda *args: fn)
    return fn




def _register(stub, impl32, impl64):
    """Bind the float32 / float64 implementations to the public stub."""

    def choose(*args):
        if all(a == types.float32 for a in args):
            return impl32
        if all(a == types.float64 for a in args):
            return impl64
        return None

    # the typing function must have the stub's exact signature
    if stub.__code__.co_argcount == 1:
        typer = lambda x: choose(x)  # noqa: E731
    else:
        typer = lambda x, y: choose(x, y)  # noqa: E731
    overload(stub, target="generic", inline=_INLINE)(typer)

    stub._impl32 = impl32
    stub._impl64 = impl64
    return stub


def _poly(x, coeffs):
    """c[0] + c[1]*x + ... + c[n-1]*x**(n-1) by Horner's rule (coeffs: constant tuple)."""
    acc = coeffs[-1]
    for c in coeffs[-2::-1]:
        acc = acc * x + c
    return acc


@overload(_poly, target="generic", inline=_INLINE)
def _ov_poly(x, coeffs):
    n = coeffs.count
    lines = ["def impl(x, coeffs):", f"    acc = coeffs[{n - 1}]"]
    lines += [f"    acc = _mla(acc, x, coeffs[{i}])" for i in range(n - 2, -1, -1)]
    lines.append("    return acc")
    scope = {"_mla": _mla}
    exec("\n".join(lines), scope)
    return scope["impl"]


# --------------------------------------------------------------------------------------------
# Per-dtype constants
# --------------------------------------------------------------------------------------------

class _Ty:
    """Format constants and bit helpers of one float type."""

    def __init__(self, ftype, itype, as_int, as_float, mant):
        self.f = ftype
        self.i = itype
        self.as_int = as_int
        self.as_float = as_float
        self.mant = mant  # explicit mantissa bits
        self.bias = (1 << (self.exp_bits - 1)) - 1
        self.magic = ftype(1.5 * 2.0**mant)  # x + magic - magic rounds x to an integer
        self.magic_i = int(np.array(self.magic).view(itype))
        self.tiny = ftype(2.0 ** (1 - self.bias))  # smallest normal
        self.inf = ftype(np.inf)
        self.nan = ftype(np.nan)

    @property
    def exp_bits(self):
        return 8 if self.f == np.float32 else 11

    def c(self, value):
        """Round an exact decimal string / Fraction / float to this type."""
        if self.f == np.float32:
            return _f32_exact(value)
        return np.float64(float(Fraction(value)))

    def split(self, value, bits):
        """value = hi + lo with hi having ``bits`` significant bits (products with small
        integers exact) and lo the rounded remainder."""
        q = Fraction(value)
        e = math.floor(math.log2(abs(q)))
        scale = Fraction(2) ** (bits - 1 - e)
        hi = Fraction(round(q * scale)) / scale
        return self.f(float(hi)), self.c(q - hi)

    def bits_of(self, value):
        return int(np.array(self.f(value)).view(self.i))


def _f32_exact(value):
    """Correctly rounded float32 of an exact value (avoids double rounding via float64)."""
    q = Fraction(value)
    if q == 0:
        return np.float32(0)
    e = max(math.floor(math.log2(abs(q))), -126)
    scale = Fraction(2) ** (23 - e)
    m = q * scale
    n = math.floor(m)
    rem = m - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2):
        n += 1
    return np.float32(float(Fraction(n) / scale))


_T32 = _Ty(np.float32, np.int32, _f32_as_i32, _i32_as_f32, 23)
_T64 = _Ty(np.float64, np.int64, _f64_as_i64, _i64_as_f64, 52)

_LN2 = "0.6931471805599453094172321214581765680755001343602552541206800094933936219696947"
_LOG2E = "1.442695040888963407359924681001892137426645954152985934135449406931109219181185"
_LN10 = "2.302585092994045684017991454684364207601101488628772976033327900967572609677352"
_LOG10E = "0.4342944819032518276511289189166050822943970058036665661144537831658646492088707"
_LOG10_2 = "0.3010299956639811952137388947244930267681898814621085413104274611271081892744245"
_PI = "3.141592653589793238462643383279502884197169399375105820974944592307816406286209"
_SQRT_HALF = "0.7071067811865475244008443621048490392848359376884740365883398689953662392310596"


def _frac(s):
    return Fraction(s)


# --------------------------------------------------------------------------------------------
# Shared pieces: rounding to integer, scaling by 2**k
# --------------------------------------------------------------------------------------------

def _make_scalers(T):
    as_int, as_float, F = T.as_int, T.as_float, T.f
    MAGIC, MAGIC_I, MANT, BIAS = T.magic, T.magic_i, T.mant, T.bias

    @_jitable
    def pow2i(k):
        """2.0**k for an integer k in the normal exponent range."""
        return as_float((k + BIAS) << MANT)

    @_jitable
    def scale2(y, k):
        """y * 2**k for |k| up to about 2*BIAS, with one rounding (split in two halves)."""
        k1 = k >> 1
        return (y * as_float((k1 + BIAS) << MANT)) * as_float((k - k1 + BIAS) << MANT)

    @_jitable
    def rint(x):
        """Round to nearest integer for |x| < 2**(MANT-1): (float value, integer)."""
        t = x + MAGIC
        return t - MAGIC, as_int(t) - MAGIC_I

    return pow2i, scale2, rint


_pow2i_32, _scale2_32, _rint_32 = _make_scalers(_T32)
_pow2i_64, _scale2_64, _rint_64 = _make_scalers(_T64)


def _scalers(T):
    return (_pow2i_32, _scale2_32, _rint_32) if T is _T32 else (_pow2i_64, _scale2_64, _rint_64)


# --------------------------------------------------------------------------------------------
# exp, exp2, expm1
# --------------------------------------------------------------------------------------------

# exp(r) = 1 + r + r^2 * P(r), |r| <= ln2/2
_EXP_P32 = (0.5, 0.16666647791862488, 0.041666481643915176, 0.008337880484759808,
            0.0013933323789387941, 0.00017327029490843415)
_EXP_P64 = (0.5, 0.16666666666666688, 0.041666666666666824, 0.00833333333331389,
            0.0013888888888777787, 0.00019841269903390007, 2.4801587559906682e-05,
            2.7557228643910494e-06, 2.7557066734573006e-07, 2.5113949950508516e-08,
            2.097815610761366e-09)
# 2^r = 1 + r * P(r), |r| <= 1/2
_EXP2_P32 = (0.6931472420692444, 0.24022655189037323, 0.05550272762775421, 0.009617436677217484,
             0.0013417149893939495, 0.00015630685084033757)
_EXP2_P64 = (0.6931471805599453, 0.2402265069591007, 0.05550410866482338, 0.009618129107630232,
             0.0013333558146032343, 0.00015403530388860564, 1.525273417155851e-05,
             1.321549152077523e-06, 1.0177928486900176e-07, 7.052746393215855e-09,
             4.4741803796347016e-10, 2.926758165716077e-11)
# expm1(r) = r + r^2/2 + r^3 * P(r), |r| <= ln2/2
_EXPM1_P32 = (0.1666666567325592, 0.04166646674275398, 0.008333642967045307, 0.001393504673615098,
              0.00019664537103381008)
_EXPM1_P64 = (0.16666666666666677, 0.041666666666666644, 0.008333333333321258, 0.001388888888889363,
              0.00019841269887378471, 2.48015873188722e-05, 2.7557242694324e-06, 2.75572667223093e-07,
              2.510963878550527e-08, 2.09208033633138e-09)


def _make_exp(T, P, P2, PM1):
    F = T.f
    pow2i, scale2, rint = _scalers(T)
    P, P2, PM1 = tuple(F(c) for c in P), tuple(F(c) for c in P2), tuple(F(c) for c in PM1)
    ONE, HALF = F(1), F(0.5)
    LOG2E = T.c(_LOG2E)
    # k * LN2_HI is exact for the |k| <= 2 * BIAS + MANT that occur
    LN2_HI, LN2_LO = T.split(_frac(_LN2), T.mant + 1 - 12)
    if T is _T32:
        LO, HI = F(-104.0), F(89.0)  # exp(LO) rounds to 0, exp(HI) overflows
        LO2, HI2 = F(-151.0), F(129.0)
        LOM1, KCAP, TINY = F(-30.0), 30, F(2.0**-25)
    else:
        LO, HI = F(-746.0), F(710.0)
        LO2, HI2 = F(-1076.0), F(1025.0)
        LOM1, KCAP, TINY = F(-45.0), 60, F(2.0**-54)

    def exp_(x):
        xc = LO if x < LO else x
        xc = HI if xc > HI else xc
        kf, k = rint(xc * LOG2E)
        r = (xc - kf * LN2_HI) - kf * LN2_LO
        y = ONE + (r + (r * r) * _poly(r, P))
        return scale2(y, k)

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
        t = xc - kf * LN2_HI
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

    return exp_, exp2_, expm1_


_exp32, _exp2_32, _expm1_32 = _make_exp(_T32, _EXP_P32, _EXP2_P32, _EXPM1_P32)
_exp64, _exp2_64, _expm1_64 = _make_exp(_T64, _EXP_P64, _EXP2_P64, _EXPM1_P64)


# --------------------------------------------------------------------------------------------
# log, log2, log10, log1p
# --------------------------------------------------------------------------------------------

# log(1+f) = 2s + s*R(s^2), s = f/(2+f); R(z) = z * P(z)
_LOG_P32 = (0.6666666269302368, 0.40000975131988525, 0.28498485684394836, 0.24286235868930817)
_LOG_P64 = (0.6666666666666734, 0.3999999999941705, 0.28571428741890625, 0.22222198621883077,
            0.18183561890381494, 0.1531411082794253, 0.14795364292731777)


def _make_log(T, P):
    F, as_int, as_float = T.f, T.as_int, T.as_float
    P = tuple(F(c) for c in P)
    MANT = T.mant
    ONE, TWO, HALF, ZERO = F(1), F(2), F(0.5), F(0)
    INF, NAN = T.inf, T.nan
    OFF = T.bits_of(T.c(_SQRT_HALF))
    MANT_MASK = (1 << MANT) - 1
    TINY = T.tiny
    SUB_SCALE = F(2.0 ** (MANT + 2))
    SUB_K = -(MANT + 2)
    # dk * X_HI exact for |dk| <= 2**11 (k of subnormals included)
    LN2_HI, LN2_LO = T.split(_frac(_LN2), T.mant + 1 - 12)
    IVLN2_HI, IVLN2_LO = T.split(_frac(_LOG2E), (T.mant + 1) // 2)
    IVLN10_HI, IVLN10_LO = T.split(_frac(_LOG10E), (T.mant + 1) // 2)
    LOG10_2_HI, LOG10_2_LO = T.split(_frac(_LOG10_2), T.mant + 1 - 12)
    # keep the high half of the significand of hi so that hi * IV*_HI is exact
    HI_MASK = ~((1 << ((T.mant + 1) // 2)) - 1)
    LOG1P_TINY = F(2.0**-25) if T is _T32 else F(2.0**-54)

    @_jitable
    def decompose(x):
        """x (positive, finite) = 2^k * (1 + f), 1 + f in [sqrt(1/2), sqrt(2))."""
        sub = x < TINY
        xs = x * SUB_SCALE if sub else x
        ix = as_int(xs)
        tmp = ix - OFF
        k = tmp >> MANT
        f = as_float((tmp & MANT_MASK) + OFF) - ONE
        k = k + SUB_K if sub else k
        return f, k

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

    def log_(x):
        f, k = decompose(x)
        hfsq, r = log1p_tail(f)
        dk = F(k)
        y = dk * LN2_HI - ((hfsq - (r + dk * LN2_LO)) - f)
        return specials(x, y)

    @_jitable
    def hi_lo(f, hfsq, r):
        hi = as_float(as_int(f - hfsq) & HI_MASK)
        lo = ((f - hi) - hfsq) + r
        return hi, lo

    def log2_(x):
        f, k = decompose(x)
        hfsq, r = log1p_tail(f)
        hi, lo = hi_lo(f, hfsq, r)
        val_hi = hi * IVLN2_HI
        val_lo = (lo + hi) * IVLN2_LO + lo * IVLN2_HI
        dk = F(k)
        w = dk + val_hi
        val_lo = val_lo + ((dk - w) + val_hi)
        return specials(x, val_lo + w)

    def log10_(x):
        f, k = decompose(x)
        hfsq, r = log1p_tail(f)
        hi, lo = hi_lo(f, hfsq, r)
        dk = F(k)
        val_hi = hi * IVLN10_HI
        y2 = dk * LOG10_2_HI
        val_lo = dk * LOG10_2_LO + (lo + hi) * IVLN10_LO + lo * IVLN10_HI
        w = y2 + val_hi
        val_lo = val_lo + ((y2 - w) + val_hi)
        return specials(x, val_lo + w)

    def log1p_(x):
        u = ONE + x
        f, k = decompose(u)
        # rounding error of u = 1 + x (TwoSum, exact), as a relative correction
        bb = u - ONE
        c = _div((ONE - (u - bb)) + (x - bb), u)
        k0 = k == 0
        f = x if k0 else f
        c = ZERO if k0 else c
        hfsq, r = log1p_tail(f)
        dk = F(k)
        y = dk * LN2_HI - ((hfsq - (r + (dk * LN2_LO + c))) - f)
        y = NAN if x < -ONE else y
        y = -INF if x == -ONE else y
        y = x if not (x < INF) else y
        return x if abs(x) < LOG1P_TINY else y

    return log_, log2_, log10_, log1p_


_log32, _log2_32, _log10_32, _log1p_32 = _make_log(_T32, _LOG_P32)
_log64, _log2_64, _log10_64, _log1p_64 = _make_log(_T64, _LOG_P64)


# --------------------------------------------------------------------------------------------
# Public stubs (NumPy fallbacks for plain Python calls)
# --------------------------------------------------------------------------------------------

def _as_float(x):
    return x if isinstance(x, (np.floating, np.ndarray)) else np.float64(x)


def exp(x):
    """e**x."""
    return np.exp(_as_float(x))


def exp2(x):
    """2**x."""
    return np.exp2(_as_float(x))


def expm1(x):
    """e**x - 1, accurate near 0."""
    return np.expm1(_as_float(x))


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


_register(exp, _exp32, _exp64)
_register(exp2, _exp2_32, _exp2_64)
_register(expm1, _expm1_32, _expm1_64)
_register(log, _log32, _log64)
_register(log2, _log2_32, _log2_64)
_register(log10, _log10_32, _log10_64)
_register(log1p, _log1p_32, _log1p_64)
