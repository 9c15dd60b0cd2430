# ruff: noqa: FURB136, PLR0124, S102
# FURB136/PLR0124: selects and x != x are deliberate (nan semantics, vector selects; the CUDA
# target mis-handles integer min/max). S102: exec generates fixed-arity glue code.
"""Vectorisable elementary functions for Numba kernels (float32 and float64).

Why: this Numba build has no SVML, so ``math.exp`` or ``np.sin`` inside an ``njit`` loop is a
scalar libm call that blocks loop vectorisation. The functions here are branch-free (selects,
no early returns in the main path), built from arithmetic, ``llvm.fma`` / ``llvm.fmuladd`` /
``llvm.sqrt``, float<->int bitcasts and small constant tables, so a loop such as::

    import numba
    from jtorch.kernels import fastmath

    @numba.njit
    def kernel(a, out):
        for i in range(a.size):
            out[i] = fastmath.exp(a[i])

compiles to ``<8 x float>`` (or wider) vector code on AVX2 without ``fastmath=True``; nan, inf,
-0.0 and subnormal semantics are kept. Each public name is a plain Python function (a NumPy
fallback, so plain calls and ``NUMBA_DISABLE_JIT=1`` work) with a ``numba.extending.overload``
for the generic target (CPU and CUDA) that picks the float32 or float64 implementation by
argument type. float32 arguments are computed in float32 arithmetic and return float32 (three
exceptions: the huge-|x| Payne-Hanek fallback of float32 sin/cos/tan uses 64-bit integer
arithmetic and one float64 conversion, float32 sin/cos reduce and evaluate in float64, see
below, float32 hypot sums the squares in float64, float32 mish forms its quotient in
float64).

Inlining: the overloads and helpers are compiled once per type with ``forceinline`` (LLVM
``alwaysinline``), so LLVM inlines them into the caller's loop before vectorising. This is much
cheaper to compile than Numba IR inlining (``inline='always'``) and the vectorisation test in
``tests/kernels/test_fastmath.py`` checks that it happens for every function.

Accuracy: max error in ulp of the result type against the exact value (float32: exhaustive
over all 2^32 inputs where marked *, else dense sweeps of several million points; float64:
sweeps of ~0.5M points against 80-bit long double / mpmath).

    function  float32   float64     function  float32   float64
    exp       0.95*     0.94        tanh      0.78*     0.82
    exp2      1.05      1.03        sigmoid   1.01*     0.96
    expm1     1.06      1.04        sinh      0.97      0.94
    log       0.83*     0.83        cosh      0.93      0.95
    log2      0.80      0.82        atan      0.85      0.75
    log10     0.74      0.68        atan2     0.84      0.84
    log1p     0.83      0.82        asin      0.63      0.75
    sin       0.60*     0.77        acos      0.62      0.72
    cos       0.60*     0.76        asinh     0.83      0.82
    tan       0.99*     0.98        acosh     0.81      0.78
    pow       1.15      1.10        atanh     0.82      0.84
    erf       0.79      0.82        erfc      1.16      1.17

``gelu`` (x * Phi(x), an activation rather than an elementary function) trades the last ulps
for speed: float32 4.1 ulp for |x| < 2, 11.5 ulp down to -13 (see its section); float64 goes
through erfc and loses ~x^2/2 ulp for negative x to the rounding of x / sqrt 2.

Every function has its own float32 and float64 implementation (``SCALAR_FLOAT64`` lists any
that fall back to a scalar ``math.*`` call; currently none).

Notes
- Polynomial coefficients are minimax fits (Remez exchange in mpmath, coefficients rounded to
  the working precision one at a time and the rest refitted).
- ``_mla(a, b, c)`` is ``llvm.fmuladd`` (fused when the target has FMA, used for polynomials);
  ``_fma`` is ``llvm.fma``, used where an exact product or residual is needed (double-word
  arithmetic, argument reduction). On a CPU without FMA it is a (correct, slow) libm call.
- sin/cos/tan: Cody-Waite reduction for moderate |x| (float32 < 1024, float64 < 2^40) and a
  Payne-Hanek reduction for larger |x|; both are evaluated and selected, so the loop stays
  branch-free (the vectoriser cannot skip work per vector, so the large-|x| path is paid for
  every element and must be cheap). float32: the 24-bit mantissa times a 128-bit window of
  2/pi, taken from four constant 64-bit words with funnel shifts (no table, no gathers: the
  earlier per-exponent table cost four 16-lane gathers per vector, ~3/4 of the time of sin);
  float64: exact products of the mantissa with per-exponent table chunks of 2/pi, summed modulo
  4. Checked on the hardest float64 case (x = 6381956970095103 * 2^797).
- float32 sin/cos reduce modulo pi instead (|r| <= pi/2: the same integer Payne-Hanek product
  rounded to the nearest multiple of pi, or Cody-Waite with pi in two doubles below 2^10) and
  evaluate one odd polynomial in float64, rounded once: no sin/cos kernel pair to select from and
  no double-word reduction, which made them 1.4x faster than the float32 quadrant form.
- Exponent arithmetic in vectorised code: Numba types int32 arithmetic as int64, which the
  vectoriser may then carry in 64-bit lanes; sigmoid builds 2^k from the bits of the
  magic-rounded ``k + MAGIC`` (an add and a shift, which LLVM narrows back to 32 bits) and the
  float32 reduction works in IR-level int32, so both stay at full width.
- CUDA: the overloads are registered for ``target='generic'`` and use only arithmetic,
  bitcasts, ``llvm.fma``/``llvm.fmuladd``/``llvm.sqrt`` and constant tables;
  ``numba.cuda.compile_ptx`` of a device function calling any of them works for sm_90. Without
  a GPU driver Numba's CUDA dispatcher asks the current device for its compute capability
  when compiling overloads as device functions; the test patches
  ``numba.cuda.dispatcher.get_current_device`` for that. Avoid Python's ``min``/``max`` on
  integers in this file: the CUDA target's overload of them is broken in this Numba.
"""

import math
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

__all__ = [  # noqa: RUF022 (grouped by family)
    "exp",
    "exp2",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "log_normal",
    "log2_normal",
    "log10_normal",
    "log1p_normal",
    "sin",
    "cos",
    "tan",
    "sin_near",
    "cos_near",
    "tan_near",
    "tanh",
    "sigmoid",
    "sinh",
    "cosh",
    "atan",
    "atan2",
    "asin",
    "acos",
    "asinh",
    "acosh",
    "atanh",
    "pow",
    "erf",
    "erfc",
    "gelu",
    "hypot",
    "softplus",
    "mish",
]

# float64 functions that call math.* (correct, but the loop stays scalar)
SCALAR_FLOAT64 = frozenset()

# Overloads are compiled once per signature and inlined by LLVM (see the module docstring).
_INLINE = "never"
_JIT_OPTIONS = {"forceinline": True}


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


def _unary_float_intrinsic(llvm_name):
    def typer(typingctx, a):
        if not isinstance(a, types.Float):
            return None

        def codegen(context, builder, sig, args):
            lty = args[0].type
            suffix = "f32" if lty == ir.FloatType() else "f64"
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(lty, [lty]), f"{llvm_name}.{suffix}"
            )
            return builder.call(fn, args)

        return a(a), codegen

    return typer


# _sqrt(x): IEEE square root (nan for x < 0, no exception).
_sqrt = intrinsic(target="generic")(_unary_float_intrinsic("llvm.sqrt"))


# --------------------------------------------------------------------------------------------
# Registration helpers
# --------------------------------------------------------------------------------------------


def _jitable(fn):
    """Make a plain Python helper callable (and always inlined) from jitted code."""
    overload(fn, target="generic", inline=_INLINE, strict=False, jit_options=_JIT_OPTIONS)(lambda *args: fn)
    return fn


def _register(stub, impl32, impl64):
    """Bind the float32 / float64 implementations to the public stub.

    All-float32 arguments use the float32 implementation, all-float64 the float64 one; mixed
    arguments follow NumPy's promotion (integers join float32 as float32, anything else is
    computed in float64)."""
    names = ", ".join(stub.__code__.co_varnames[: stub.__code__.co_argcount])
    wrappers = {}
    for ftype in (np.float32, np.float64):
        scope = {"impl": stub, "F": ftype}
        cast = ", ".join(f"F({n})" for n in names.split(", "))
        exec(f"def wrapper({names}):\n    return impl({cast})", scope)
        wrappers[ftype] = scope["wrapper"]

    def choose(*args):
        if all(a == types.float32 for a in args):
            return impl32
        if all(a == types.float64 for a in args):
            return impl64
        if not all(isinstance(a, (types.Float, types.Integer, types.Boolean)) for a in args):
            return None
        floats = [a for a in args if isinstance(a, types.Float)]
        use32 = floats and all(a == types.float32 for a in floats)
        return wrappers[np.float32 if use32 else np.float64]

    # the typing function must have the stub's exact signature
    scope = {"choose": choose}
    exec(f"def typer({names}):\n    return choose({names})", scope)
    typer = scope["typer"]
    overload(stub, target="generic", inline=_INLINE, jit_options=_JIT_OPTIONS)(typer)

    stub._impl32 = impl32
    stub._impl64 = impl64
    return stub


def _poly(x, coeffs):
    """c[0] + c[1]*x + ... + c[n-1]*x**(n-1) by Horner's rule (coeffs: constant tuple)."""
    acc = coeffs[-1]
    for c in coeffs[-2::-1]:
        acc = acc * x + c
    return acc


@overload(_poly, target="generic", inline=_INLINE, jit_options=_JIT_OPTIONS)
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


@_jitable
def _two_sum(a, b):
    """a + b = s + e exactly."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@_jitable
def _two_prod(a, b):
    """a * b = p + e exactly (FMA)."""
    p = a * b
    return p, _fma(a, b, -p)


def _make_scalers(T):
    as_int, as_float = T.as_int, T.as_float
    MAGIC, MAGIC_I, MANT, BIAS = T.magic, T.magic_i, T.mant, T.bias
    ITYPE = T.i  # Numba widens int32 arithmetic to int64: narrowed back for 8-lane int ops

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
        return t - MAGIC, ITYPE(as_int(t) - MAGIC_I)

    return pow2i, scale2, rint


_pow2i_32, _scale2_32, _rint_32 = _make_scalers(_T32)
_pow2i_64, _scale2_64, _rint_64 = _make_scalers(_T64)


def _scalers(T):
    return (_pow2i_32, _scale2_32, _rint_32) if T is _T32 else (_pow2i_64, _scale2_64, _rint_64)


# --------------------------------------------------------------------------------------------
# exp, exp2, expm1
# --------------------------------------------------------------------------------------------

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
    ONE, HALF, ZERO = F(1), F(0.5), F(0)
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

    @_jitable
    def expk(a, a_lo):
        """exp(a + a_lo) = 2^k * (1 + s) for a in the clamped exp range, |a_lo| tiny."""
        kf, k = rint(a * LOG2E)
        # fmas: kf * LN2_HI is exact, so the first is the exact Cody-Waite step; the others
        # each save an operation (this code does not contract a * b + c by itself)
        r = _fma(-kf, LN2_LO, _fma(-kf, LN2_HI, a)) + a_lo
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
        k, s = expk(xc, ZERO)
        return scale2(ONE + s, k)

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

    return exp_, exp2_, expm1_, expk, expk_dw


_exp32, _exp2_32, _expm1_32, _expk32, _expk_dw32 = _make_exp(_T32, _EXP_P32, _EXP2_P32, _EXPM1_P32)
_exp64, _exp2_64, _expm1_64, _expk64, _expk_dw64 = _make_exp(_T64, _EXP_P64, _EXP2_P64, _EXPM1_P64)


# --------------------------------------------------------------------------------------------
# log, log2, log10, log1p
# --------------------------------------------------------------------------------------------

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


# --------------------------------------------------------------------------------------------
# sin, cos, tan
# --------------------------------------------------------------------------------------------
#
# Argument reduction x = q*pi/2 + r, |r| <= pi/4, r as a double-word (r + r_lo) (float32 sin and
# cos use a half-turn form of it, see ``_make_sincos32``):
# - moderate |x|: Cody-Waite with pi/2 split in three full-precision parts; the first product
#   is subtracted exactly with an FMA, the second as an exact FMA product with TwoSum;
# - huge |x| (Payne-Hanek): x = M * 2^E with integer M; the bits of 2/pi that matter for
#   M * 2^E * 2/pi mod 4 are read from a per-exponent table of 2/pi chunks, the products
#   M * chunk are exact and are summed modulo 4 with exact float64 arithmetic. float32 uses
#   float64 arithmetic for this fallback only (four exact products).
# Both paths are evaluated (branch-free) and selected by |x|.

# 2/pi to 1344 bits (the first hex digit is the first bit after the binary point).
_TWO_OVER_PI_HEX = (
    "a2f9836e4e441529fc2757d1f534ddc0db6295993c439041fe5163abdebbc561b7246e3a424dd2e006492eea09d192"
    "1cfe1deb1cb129a73ee88235f52ebb4484e99c7026b45f7e413991d639835339f49c845f8bbdf9283b1ff897ffde0598"
    "0fef2f118b5a0a6d1f6d367ecf27cb09b74f463f669e5fea2d7527bac7ebe5f17b3d0739f78a5292ea6bfb5fb11f8d5d"
    "0856033046fc7b6babf0cfbc209af4361da9e391615ee61b08"
)
_TWO_OVER_PI_BITS = len(_TWO_OVER_PI_HEX) * 4


def _two_over_pi_table(e_min, e_max, nchunks, chunk_bits):
    """Row i: chunks of G = 2^(e_min+i) * 2/pi covering bit positions 1 .. 2 - nchunks*chunk_bits
    (bits above 2^1 only add multiples of 4 to M * G for integer M)."""
    big = int(_TWO_OVER_PI_HEX, 16)  # 2/pi = big / 2^BITS
    rows = []
    for e in range(e_min, e_max + 1):
        row = []
        for j in range(nchunks):
            lo_pos = 2 - (j + 1) * chunk_bits  # value of the chunk's last bit: 2^lo_pos
            shift = _TWO_OVER_PI_BITS - e + lo_pos  # floor(G / 2^lo_pos) = big >> shift
            assert shift >= 0
            chunk = (big >> shift) & ((1 << chunk_bits) - 1)
            row.append(math.ldexp(float(chunk), lo_pos))  # exact: chunk_bits <= 53
        rows.append(row)
    return np.array(rows, dtype=np.float64)


# float32 (|x| >= 2^10, integer reduction, no table): x = m * 2^E with a 24-bit integer m and
# -13 <= E <= 104. W(E) = floor(2^(E+126) * 2/pi) mod 2^128 is a 128-bit window of the bits of
# 2/pi; bits above it add multiples of 4 to m * 2^E * 2/pi. W(E) = (S >> (104 - E)) mod 2^128
# for the fixed 230-bit integer S = floor(2^230 * 2/pi) held in four 64-bit words, so each
# window half is one funnel shift of two of those words (no per-exponent table, no gather).
_RPI32_EMIN, _RPI32_EMAX = -13, 104
_RPI32_S = int(_TWO_OVER_PI_HEX, 16) >> (_TWO_OVER_PI_BITS - 230)
_RPI32_WORDS = tuple((_RPI32_S >> (64 * i)) & ((1 << 64) - 1) for i in range(4))
# float64: |x| >= 2^40 (E >= -12) up to the largest double
_RPI64_EMIN, _RPI64_EMAX = -14, 971
_RPI64_TAB = _two_over_pi_table(_RPI64_EMIN, _RPI64_EMAX, 4, 53)

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


def _make_cody_waite(T):
    _, _, rint = _scalers(T)
    pio2 = Fraction(_PI) / 2
    P1 = T.c(pio2)
    P2 = T.c(pio2 - Fraction(float(P1)))
    P3 = T.c(pio2 - Fraction(float(P1)) - Fraction(float(P2)))
    TWO_OVER_PI = T.c(1 / pio2)

    @_jitable
    def cody_waite(ax):
        """ax >= 0 moderate: (r, r_lo, k) with ax = k*pi/2 + r + r_lo."""
        kf, k = rint(ax * TWO_OVER_PI)
        r1 = _fma(-kf, P1, ax)  # exact
        w, w_lo = _two_prod(kf, P2)
        r, e = _two_sum(r1, -w)
        r_lo = (e - w_lo) - kf * P3
        y = r + r_lo
        return y, (r - y) + r_lo, k

    return cody_waite


_cody_waite32 = _make_cody_waite(_T32)
_cody_waite64 = _make_cody_waite(_T64)

_PIO2_64 = np.float64(float(Fraction(_PI) / 2))
_PIO2_64_LO = np.float64(float(Fraction(_PI) / 2 - Fraction(float(_PIO2_64))))
_MAGIC64 = _T64.magic
_MAGIC64_I = _T64.magic_i
_TWO52 = np.float64(2.0**52)


@_jitable
def _rint64(x):
    t = x + _MAGIC64
    return t - _MAGIC64, _f64_as_i64(t) - _MAGIC64_I


def _ph32_fixed(builder, x):
    """LLVM IR of the float32 Payne-Hanek product (see ``_payne_hanek32``): y = x * 2/pi mod 4
    as a 64-bit fixed-point integer with 62 fraction bits."""
    i32, i64 = ir.IntType(32), ir.IntType(64)

    def c32(v):
        return ir.Constant(i32, v)

    def c64(v):
        return ir.Constant(i64, v - (1 << 64) if v >= 1 << 63 else v)

    def clamp(v, lo, hi):
        v = builder.select(builder.icmp_signed("<", v, c32(lo)), c32(lo), v)
        return builder.select(builder.icmp_signed(">", v, c32(hi)), c32(hi), v)

    bits = builder.bitcast(x, i32)
    be = builder.and_(builder.lshr(bits, c32(23)), c32(0xFF))
    be = clamp(be, _RPI32_EMIN + 150, _RPI32_EMAX + 150)
    o = builder.sub(c32(_RPI32_EMAX + 150), be)  # 104 - E in [0, 117]
    m = builder.zext(builder.or_(builder.and_(bits, c32(0x7FFFFF)), c32(0x800000)), i64)
    s = builder.zext(builder.and_(o, c32(63)), i64)
    hi_word = builder.icmp_unsigned(">=", o, c32(64))
    w = [c64(v) for v in _RPI32_WORDS]
    d0, d1, d2 = (builder.select(hi_word, w[i + 1], w[i]) for i in range(3))
    fnty = ir.FunctionType(i64, [i64, i64, i64])
    fshr = cgutils.get_or_insert_function(builder.module, fnty, "llvm.fshr.i64")
    w_lo = builder.call(fshr, [d1, d0, s])
    w_hi = builder.call(fshr, [d2, d1, s])
    # top 64 bits of m * W mod 2^128 (the dropped low product bits are below 2^-62): a
    # fixed-point y = m * 2^E * 2/pi mod 4 with 62 fraction bits
    t_lo = builder.lshr(builder.mul(m, builder.lshr(w_lo, c64(32))), c64(32))
    return builder.add(builder.mul(m, w_hi), t_lo)


def _ph32_ir(builder, x):
    """Quadrant form: (r float64, n int32), x = n*pi/2 + r (mod 2*pi), |r| <= pi/4."""
    i64 = ir.IntType(64)
    t = _ph32_fixed(builder, x)
    n = builder.lshr(builder.add(t, ir.Constant(i64, 1 << 61)), ir.Constant(i64, 62))  # mod 4
    f = builder.sub(t, builder.shl(n, ir.Constant(i64, 62)))  # signed, |f| <= 2^61
    scale = ir.Constant(ir.DoubleType(), float(_PIO2_64) * 2.0**-62)
    r = builder.fmul(builder.sitofp(f, ir.DoubleType()), scale)
    return r, builder.trunc(n, ir.IntType(32))


def _ph32_pi_ir(builder, x, quadrants):
    """Half-turn form of x + quadrants*pi/2: (r float64, j int64), = j*pi + r (mod 2*pi),
    |r| <= pi/2; only the parity of j is kept."""
    i64 = ir.IntType(64)
    # u = (y + quadrants + 1) mod 4: its top bit is round(y'/2) mod 2, the rest y' - 2j + 1
    off = ((quadrants + 1) % 4) << 62
    u = builder.add(_ph32_fixed(builder, x), ir.Constant(i64, off - (1 << 64) if off >> 63 else off))
    j = builder.lshr(u, ir.Constant(i64, 63))
    f = builder.sub(builder.and_(u, ir.Constant(i64, (1 << 63) - 1)), ir.Constant(i64, 1 << 62))
    scale = ir.Constant(ir.DoubleType(), float(_PIO2_64) * 2.0**-62)
    return builder.fmul(builder.sitofp(f, ir.DoubleType()), scale), j


@intrinsic(target="generic")
def _payne_hanek32(typingctx, ax):
    """float32 ax (>= 2^10, finite; other values give garbage) -> (r float64, k int32) with
    ax = k*pi/2 + r (mod 2*pi), |r| <= pi/4 (up to rounding), |error| < 2^-60 + 2^-53 |r|.

    Integer arithmetic only (64-bit multiplies and funnel shifts), so it vectorises without
    gathers; see ``_RPI32_WORDS``."""
    if ax != types.float32:
        return None
    sig = types.Tuple((types.float64, types.int32))(types.float32)

    def codegen(context, builder, sig, args):
        r, k = _ph32_ir(builder, args[0])
        return context.make_tuple(builder, sig.return_type, [r, k])

    return sig, codegen


def _payne_hanek32_pi(quadrants):
    """Intrinsic: float32 ax (>= 2^10, finite) -> (r float64, j int64) with
    ax + quadrants*pi/2 = j*pi + r (mod 2*pi), |r| <= pi/2 (the float32 sin and cos)."""

    def typer(typingctx, ax):
        if ax != types.float32:
            return None
        sig = types.Tuple((types.float64, types.int64))(types.float32)

        def codegen(context, builder, sig, args):
            r, j = _ph32_pi_ir(builder, args[0], quadrants)
            return context.make_tuple(builder, sig.return_type, [r, j])

        return sig, codegen

    return intrinsic(target="generic")(typer)


_payne_hanek32_sin = _payne_hanek32_pi(0)
_payne_hanek32_cos = _payne_hanek32_pi(1)


@_jitable
def _payne_hanek64(ax):
    """float64 ax (>= 2^40, finite) -> (r, r_lo, k) with ax = k*pi/2 + r + r_lo (mod 2*pi)."""
    ix = _f64_as_i64(ax)
    be = (ix >> 52) & 0x7FF
    be = _RPI64_EMIN + 1075 if be < _RPI64_EMIN + 1075 else be
    be = _RPI64_EMAX + 1075 if be > _RPI64_EMAX + 1075 else be
    row = be - (_RPI64_EMIN + 1075)
    m = _i64_as_f64((ix & 0xFFFFFFFFFFFFF) | (1075 << 52))  # 53-bit integer mantissa
    h0, l0 = _two_prod(m, _RPI64_TAB[row, 0])  # < 2^55, multiples of 2^-51
    h1, l1 = _two_prod(m, _RPI64_TAB[row, 1])  # < 8
    h2, l2 = _two_prod(m, _RPI64_TAB[row, 2])  # < 2^-50
    p3 = m * _RPI64_TAB[row, 3]  # < 2^-103
    # reduce the big terms modulo 4 (exactly)
    t = h0 * 0.25
    t = t - (t if t >= _TWO52 else (t + _TWO52) - _TWO52)
    a = t * 4.0 + (l0 - 4.0 * _rint64(l0 * 0.25)[0])
    a = a - 4.0 * _rint64(a * 0.25)[0]
    b = h1 - 4.0 * _rint64(h1 * 0.25)[0]
    s, e = _two_sum(a, b)
    nf, k = _rint64(s)
    s = s - nf
    tt, t1 = _two_sum(e, l1)
    tt, t2 = _two_sum(tt, h2)
    low = (t1 + t2) + (l2 + p3)
    f, f_lo = _two_sum(s, tt)
    f_lo = f_lo + low
    fh = f + f_lo
    f_lo = (f - fh) + f_lo
    r, r_lo = _two_prod(fh, _PIO2_64)
    r_lo = r_lo + (fh * _PIO2_64_LO + f_lo * _PIO2_64)
    y = r + r_lo
    return y, (r - y) + r_lo, k


# Below these the Cody-Waite reduction alone is exact enough: the *_near variants skip the
# Payne-Hanek one, which the branch-free full functions compute for every element (~3x the cost).
_TRIG_NEAR32 = np.float32(1024.0)
_TRIG_NEAR64 = np.float64(2.0**40)


def _make_reduce(T):
    """reduce(ax) -> (r, r_lo, k) with ax = k*pi/2 + r + r_lo (mod 2*pi), |r| <= pi/4."""
    if T is _T32:
        CW_MAX = _TRIG_NEAR32

        @_jitable
        def reduce(ax):
            r, r_lo, k = _cody_waite32(ax)
            rh64, kh = _payne_hanek32(ax)
            rh = np.float32(rh64)
            rh_lo = np.float32(rh64 - np.float64(rh))
            small = ax < CW_MAX
            return (r if small else rh), (r_lo if small else rh_lo), (k if small else kh)

        return reduce

    CW_MAX = _TRIG_NEAR64

    @_jitable
    def reduce(ax):
        r, r_lo, k = _cody_waite64(ax)
        rh, rh_lo, kh = _payne_hanek64(ax)
        small = ax < CW_MAX
        return (r if small else rh), (r_lo if small else rh_lo), (k if small else kh)

    return reduce


_reduce32 = _make_reduce(_T32)
_reduce64 = _make_reduce(_T64)
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


# --------------------------------------------------------------------------------------------
# tanh, sigmoid, sinh, cosh
# --------------------------------------------------------------------------------------------

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
# sigmoid's e^r = 1 + r + r^2 P(r), |r| <= ln2/2: float32 one degree lower than exp's (relative
# error 2^-28.3, fitted with the leading coefficients rounded in turn); float64 is exp's.
_SIG_EXP_P32 = (
    0.4999999403953552,
    0.1666652113199234,
    0.04166826605796814,
    0.008368676528334618,
    0.0013820718741044402,
)
_SIG_EXP_P64 = _EXP_P64


def _make_hyperbolic(T, expk, expk_dw, TANH_P, SINH_P, SIG_P):
    F = T.f
    pow2i, scale2, _ = _scalers(T)
    TANH_P, SINH_P, SIG_P = (tuple(F(c) for c in P) for P in (TANH_P, SINH_P, SIG_P))
    ONE, TWO, ZERO = F(1), F(2), F(0)
    TANH_X0, SINH_X0 = F(0.5493), F(1.0)
    if T is _T32:
        TANH_CLAMP, EXP_CLAMP, KCAP = F(40.0), F(90.0), 30
        TINY = F(2.0**-13)
        # sigmoid: e^SIG_LO rounds to 0; for every k >= SIG_LO * log2(e), 2^(k + SIG_SHIFT) is
        # normal with room below it for the division residual (~2^-MANT of it) to be normal too
        SIG_LO, SIG_SHIFT = F(-110.0), 64
    else:
        TANH_CLAMP, EXP_CLAMP, KCAP = F(40.0), F(711.0), 60
        TINY = F(2.0**-28)
        SIG_LO, SIG_SHIFT = F(-760.0), 256
    LOG2E, MAGIC = T.c(_LOG2E), T.magic
    LN2_HI, LN2_LO = T.split(_frac(_LN2), T.mant + 1 - 12)
    as_int, as_float, MANT = T.as_int, T.as_float, T.mant
    SIG_BIAS = T.bias + SIG_SHIFT - T.magic_i  # as_int(k + MAGIC) + SIG_BIAS = k + SHIFT + bias
    ITYPE = T.i
    SIG_UP = F(2.0**SIG_SHIFT)

    @_jitable
    def inv_one_plus_exp(a):
        """1 / (1 + e^a) with one rounding of the denominator: e^a = 2^k (1 + s) and
        1 + e^a = 2^m * ((A + A_lo) + B), A + A_lo = 1 + 2^-|k| exactly."""
        k, s, s_lo = expk_dw(a, ZERO)
        kneg = ITYPE(-k if k > 0 else k)  # (int32 lanes for float32, see _make_scalers)
        kneg = ITYPE(-KCAP if kneg < -KCAP else kneg)
        m = pow2i(kneg)
        A = ONE + m
        A_lo = (ONE - A) + m
        scale = pow2i(ITYPE(k if k < 0 else 0))
        d, d_lo = _two_sum(A, s * scale)
        d_lo = d_lo + (A_lo + s_lo * scale)
        # reciprocal of the double-word d + d_lo, corrected by its residual
        q = _div(ONE, d)
        q = q + q * (_fma(-q, d, ONE) - q * d_lo)
        return scale2(q, -(k if k > 0 else 0))

    def tanh_(x):
        ax = abs(x)
        z = x * x
        y_small = x + (x * z) * _poly(z, TANH_P)
        # 1 - 2 / (e^{2|x|} + 1)
        a = ax + ax
        a = TANH_CLAMP if a > TANH_CLAMP else a
        y = ONE - TWO * inv_one_plus_exp(a)
        y = -y if x < ZERO else y
        y = y_small if ax < TANH_X0 else y
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
        tm = _fma(a, LOG2E, MAGIC)  # k + MAGIC, rounded once
        kf = tm - MAGIC
        r = _fma(-kf, LN2_LO, _fma(-kf, LN2_HI, a))
        s = _fma(r * r, _poly(r, SIG_P), r)  # e^r - 1
        gu = as_float((as_int(tm) + SIG_BIAS) << MANT)  # U g = 2^(k + SIG_SHIFT)
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


_tanh32, _sigmoid32, _sinh32, _cosh32 = _make_hyperbolic(
    _T32, _expk32, _expk_dw32, _TANH_P32, _SINH_P32, _SIG_EXP_P32
)
_tanh64, _sigmoid64, _sinh64, _cosh64 = _make_hyperbolic(
    _T64, _expk64, _expk_dw64, _TANH_P64, _SINH_P64, _SIG_EXP_P64
)


# --------------------------------------------------------------------------------------------
# atan, atan2, asin, acos
# --------------------------------------------------------------------------------------------

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


# --------------------------------------------------------------------------------------------
# asinh, acosh, atanh
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# pow
# --------------------------------------------------------------------------------------------
#
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


# --------------------------------------------------------------------------------------------
# erf, erfc
# --------------------------------------------------------------------------------------------
#
# erf(x) = x + x*Q(x^2) for |x| < 0.8; beyond, erfc(x) = e^{-x^2} * G(x) with
# G = e^{x^2} erfc(x) a polynomial in x - start on short pieces and G = H(1/x^2) / x on the last
# piece; e^{-x^2} is evaluated from the exact double-word x^2 and the product, quotient and
# scaling are carried as double-words so that the result is rounded once.

_ERF_Q32 = (
    0.12837916612625122,
    -0.37612608075141907,
    0.11283162236213684,
    -0.026822242885828018,
    0.005086925346404314,
    -0.0006543367053382099,
)
def _make_erf(T, expk_dw, Q, pieces, xmax):
    """erf/erfc from the small-|x| series and erfc(x) = e^{-x^2} G(x) on ``pieces``: a list of
    (start, (c0_hi, c0_lo, c1, c2, ...)); G is a polynomial in w = x - start on each piece but
    the last, where G = H(1/x^2) / x."""
    F = T.f
    _, scale2, _ = _scalers(T)
    Q = tuple(F(c) for c in Q)
    ONE, TWO, HALF, ZERO = F(1), F(2), F(0.5), F(0)
    XA, XMAX, QUARTER = F(pieces[0][0]), F(xmax), F(0.25)
    n = len(pieces)
    scope = {"F": F, "ONE": ONE, "XMAX": XMAX, "expk_dw": expk_dw, "scale2": scale2}
    scope.update(_two_prod=_two_prod, _two_sum=_two_sum, _poly=_poly, _div=_div, _fma=_fma)
    lines = [
        "def erfc_pos(ax):",
        "    a = XMAX if ax > XMAX else ax",
        "    h, l = _two_prod(a, a)",
        "    k, s, s_lo = expk_dw(-h, -l)",
    ]
    for i, (start, coeffs) in enumerate(pieces):
        coeffs = tuple(F(c) for c in coeffs)
        scope.update({f"S{i}": F(start), f"C0_{i}": coeffs[0], f"CL_{i}": coeffs[1]})
        scope.update({f"C1_{i}": coeffs[2], f"P_{i}": coeffs[3:]})
        # w = x - start is exact on the piece (it spans less than a factor 2); last piece: 1/x^2
        lines.append(f"    w{i} = a - S{i}" if i < n - 1 else f"    w{i} = _div(ONE, a * a)")
        lines.append(f"    t{i} = (w{i} * w{i}) * _poly(w{i}, P_{i})")
    for name, fmt in (("w", "w{}"), ("c0", "C0_{}"), ("c0_lo", "CL_{}"), ("c1", "C1_{}"), ("tail", "t{}")):
        lines.append(f"    {name} = {fmt.format(n - 1)}")
        for i in range(n - 2, -1, -1):
            lines.append(f"    {name} = {fmt.format(i)} if a < S{i + 1} else {name}")
    lines += [
        # G = c0 + c1*w + w^2 * P(w) with c0 + c1*w as an exact double-word
        "    p1, p1_lo = _two_prod(c1, w)",
        "    g, e = _two_sum(c0, p1)",
        "    g_lo = e + ((c0_lo + p1_lo) + tail)",
        "    g2 = g + g_lo",
        "    g_lo = (g - g2) + g_lo",
        "    g = g2",
        # n = g * (1 + s + s_lo) as a double-word, then n / d with d = x (last piece) or 1
        "    t, t_lo = _two_prod(g, s)",
        "    m, e = _two_sum(g, t)",
        "    m_lo = e + (t_lo + (g * s_lo + g_lo * (ONE + s)))",
        f"    d = ONE if a < S{n - 1} else a",
        "    q = _div(m, d)",
        "    q = q + _div(_fma(-q, d, m) + m_lo, d)",
        "    return scale2(q, k)",
    ]
    exec("\n".join(lines), scope)
    erfc_pos = _jitable(scope["erfc_pos"])

    def erf_(x):
        ax = abs(x)
        y_small = x + x * _poly(x * x, Q)
        y = ONE - erfc_pos(ax)
        y = -y if x < ZERO else y
        return y_small if ax < XA else y

    def erfc_(x):
        ax = abs(x)
        e = erfc_pos(ax)
        y_big = TWO - e if x < ZERO else e
        p = x * _poly(x * x, Q)  # erf(x) = x + p
        y_small = ONE - (x + p) if x < QUARTER else HALF - ((x - HALF) + p)
        return y_small if ax < XA else y_big

    return erf_, erfc_


# float32 erfc beyond 0.8: erfc(a) = e^{-a^2} * t * K(t) with t = 1 / (a + 1/2). K = erfcx(a) (a + 1/2)
# stays within [0.589, 0.644] on [0.8, 10.06] (erfc rounds to 0 beyond), so a polynomial in
# w = t - mid has a dominant constant term and its last Horner step, taken as an exact
# double-word, leaves K within 0.4 ulp; t's rounding (amplified up to 2x through a plain
# rational variable) is carried as a Newton residual t_lo, and e^{-a^2} from the exact
# double-word a^2 as 2^k (1 + s + s_lo), so that the result is rounded once. ~60 vector
# operations against ~100 for the piecewise double-word path; 1.6 ulp max over every float32.
_ERFC_K32 = (
    0.6405335664749146,
    0.055587608367204666,
    -0.25739702582359314,
    0.14396122097969055,
    0.08228543400764465,
    -0.24161723256111145,
    0.22413717210292816,
    0.004704859107732773,
    -0.36133089661598206,
    0.4086898863315582,
)


def _make_erfc32():
    F = np.float32
    _, _, rint = _scalers(_T32)
    Q = tuple(F(c) for c in _ERF_Q32)
    P = tuple(F(c) for c in _EXP_P32)
    K0, KR = F(_ERFC_K32[0]), tuple(F(c) for c in _ERFC_K32[1:])
    ONE, TWO, HALF, ZERO, QUARTER = F(1), F(2), F(0.5), F(0), F(0.25)
    XA, XMAX, MID = F(0.8), F(10.06), F(0.43196386098861694)
    LOG2E = F(_LOG2E)
    LN2_HI, LN2_LO = _T32.split(_frac(_LN2), _T32.mant + 1 - 12)
    # 2^k for k in [-146, 0] as 2^(k + 64) * 2^-64: the first factor is normal, the second
    # product rounds once, also into the subnormals
    K_BIAS, TWO_M64 = 64 + 127, F(2.0**-64)

    def erfc_(x):
        ax = abs(x)
        p = x * _poly(x * x, Q)  # erf(x) = x + p
        y_small = ONE - (x + p) if x < QUARTER else HALF - ((x - HALF) + p)
        a = XMAX if ax > XMAX else ax
        d = a + HALF
        d_lo = HALF - (d - a)  # exact for a >= 1/2 (a < 0.8 takes y_small)
        t = _div(ONE, d)
        t_lo = t * (_fma(-d, t, ONE) - d_lo * t)
        w = t - MID
        p1, p1_lo = _two_prod(w, _poly(w, KR))
        kh = K0 + p1
        k_lo = ((K0 - kh) + p1) + p1_lo
        # e^{-(h + h_lo)} = 2^k (1 + s + s_lo), r + r_lo = -(h + h_lo) - k ln2
        h, h_lo = _two_prod(a, a)
        kf, k = rint(-h * LOG2E)
        u = _fma(-kf, LN2_HI, -h)  # exact
        v = _fma(kf, LN2_LO, h_lo)
        r = u - v
        r_lo = (u - r) - v
        q = (r * r) * _poly(r, P)
        s = r + q
        s_lo = ((r - s) + q) + r_lo
        # t (1 + t_lo/t) * (kh + k_lo) * (1 + s + s_lo), rounded once
        m_lo = _fma(kh, s, _fma(k_lo, s, k_lo) + kh * s_lo)
        p2, p2_lo = _two_prod(t, kh)
        y = p2 + _fma(t, m_lo, _fma(t_lo, kh, p2_lo))
        y = (y * _i32_as_f32((k + K_BIAS) << 23)) * TWO_M64
        y = TWO - y if x < ZERO else y
        return y_small if ax < XA else y

    return erfc_


_erfc32 = _make_erfc32()

# float32 erf needs erfc(x) only to absolute accuracy (erf >= 0.74 beyond 0.8), so one
# polynomial G(t) in t - 1/2, t = 1 / (1 + x/2), covers [0.8, 4] (relative fit error 4e-10;
# erf rounds to 1 beyond 3.92): half the cost of the piecewise double-word path, still
# within 1.4 ulp.
_ERF_T32 = (
    0.25539568066596985,
    0.8543717265129089,
    0.9666328430175781,
    0.6318272352218628,
    0.05971330776810646,
    -0.22377097606658936,
    -0.053508613258600235,
    0.11963609606027603,
)


def _make_erf32():
    F = np.float32
    _, scale2, _ = _scalers(_T32)
    Q, G = tuple(F(c) for c in _ERF_Q32), tuple(F(c) for c in _ERF_T32)
    ONE, HALF, ZERO, XA, XMAX = F(1), F(0.5), F(0), F(0.8), F(4)

    def erf_(x):
        ax = abs(x)
        y_small = x + x * _poly(x * x, Q)
        a = XMAX if ax > XMAX else ax
        # t = 1/d with d = 1 + a/2 as a double-word and one Newton step: t's rounding would
        # otherwise reach the result amplified ~2x
        d, d_lo = _two_sum(ONE, HALF * a)
        t = _div(ONE, d)
        t = _fma(t, _fma(-d, t, ONE) - d_lo * t, t)
        g = _poly(t - HALF, G)
        # e^{-a^2} from the exact double-word a^2, kept as 2^k (1 + s) so that g * e is one fma
        h, h_lo = _two_prod(a, a)
        k, s = _expk32(-h, -h_lo)
        y = ONE - scale2(_fma(g, s, g), k)
        y = -y if x < ZERO else y
        return y_small if ax < XA else y

    return erf_


_erf32 = _make_erf32()


# float64 pieces: [0.8, 1.4), [1.4, 2), [2, 2.8), [2.8, 4) in x - start; [4, 27.3] as H(1/x^2) / x
_ERFC_G1_64 = (
    0.4891005892231147,
    -4.1735737486710563e-19,
    -0.345818224338529,
    0.21244600975228753,
    -0.11724094435758205,
    0.059326627127044264,
    -0.027911856960764876,
    0.012332379405984292,
    -0.0051559782736001255,
    0.0020518536999055755,
    -0.0007808197415258351,
    0.00028491925627781225,
    -9.940910246024075e-05,
    3.2480463249489205e-05,
    -9.3191903241981e-06,
    2.0278714817184706e-06,
    -2.3920530759813566e-07,
)
_ERFC_G2_64 = (
    0.3387435406797346,
    2.099264267512915e-17,
    -0.1798972531922556,
    0.08688738621057747,
    -0.0388366083316669,
    0.016258067274042953,
    -0.0064301256733282994,
    0.002418630583254599,
    -0.0008697274620021473,
    0.00030025735611507065,
    -9.987339979178159e-05,
    3.2118271964894256e-05,
    -1.002856993380231e-05,
    3.0465593162601607e-06,
    -8.775236214337024e-07,
    2.117253764039076e-07,
    -2.999858397239499e-08,
)
_ERFC_G3_64 = (
    0.25539567631050575,
    -4.28065864734225e-18,
    -0.1067964618534896,
    0.04180275260352603,
    -0.015460637764269721,
    0.0054407385370153225,
    -0.0018316642698325964,
    0.0005924699452799774,
    -0.0001847780738260353,
    5.572708510606352e-05,
    -1.6289948718182108e-05,
    4.619630674943916e-06,
    -1.265160215987617e-06,
    3.270399585778388e-07,
    -7.46412973598367e-08,
    1.2965764304720509e-08,
    -1.224793492930565e-09,
)
_ERFC_G4_64 = (
    0.1905488796899919,
    -1.1204827901248793e-17,
    -0.06130544083155795,
    0.018893645361626778,
    -0.005602155879253438,
    0.0016038044486220823,
    -0.0004446013579215916,
    0.0001196401471624686,
    -3.1316555486287505e-05,
    7.987586849254887e-06,
    -1.987279352405849e-06,
    4.815245772129582e-07,
    -1.1237869190941889e-07,
    2.436870623733583e-08,
    -4.521326509594626e-09,
    6.138775209341318e-10,
    -4.3748727569289866e-11,
)
_ERFC_H64 = (
    0.5641895835477563,
    6.747774718723944e-18,
    -0.28209479177387636,
    0.42314218765944916,
    -1.0578554685891424,
    3.7024940002977873,
    -16.66119998753663,
    91.63397063893837,
    -595.4049523711338,
    4452.495989434389,
    -37257.494061569785,
    333929.0944011921,
    -2993147.4900487037,
    24571414.511957366,
    -167850616.71705234,
    858835734.2793567,
    -2850307049.6655025,
    4531669389.76582,
)
_ERF_Q64 = (
    0.1283791670955126,
    -0.37612638903184215,
    0.1128379167098356,
    -0.026866170651968276,
    0.005223977709874683,
    -0.0008548333112242411,
    0.00012055606863582619,
    -1.493356182386413e-05,
    1.6608784402661233e-06,
    -1.804944479895006e-07,
    2.5634993116078194e-08,
    -4.119607234252241e-09,
)


_erf64, _erfc64 = _make_erf(
    _T64,
    _expk_dw64,
    _ERF_Q64,
    [(0.8, _ERFC_G1_64), (1.4, _ERFC_G2_64), (2.0, _ERFC_G3_64), (2.8, _ERFC_G4_64), (4.0, _ERFC_H64)],
    27.3,
)


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

    def gelu_(x):
        b = abs(x)
        bc = B_MAX if b > B_MAX else b
        g = _poly(_div(bc, bc + Q_INV) - V_MID, H)  # Phi(-b) e^{b^2/2}, v = 0.4 b / (1 + 0.4 b)
        h, h_lo = _two_prod(bc, HALF * bc)  # b^2 / 2 exactly
        k, s = _expk32(-h, -h_lo)  # e^{-b^2/2} = 2^k (1 + s), k >= -122
        p = _fma(g, s, g) * _pow2i_32(k)  # Phi(-b)
        p = ZERO if b > B_MAX else p
        return x * (ONE - p if x > ZERO else p)

    return gelu_


def _gelu64(x):
    # erfc rather than 1 + erf: no cancellation for negative x
    return x * (0.5 * erfc(x * -0.7071067811865476))


_gelu32 = _make_gelu32()


# --------------------------------------------------------------------------------------------
# hypot
# --------------------------------------------------------------------------------------------
# float32: sqrt(x^2 + y^2) in float64, where neither square over- or underflows and the sum
# is within 2^-53 (0.5 ulp after the final rounding, libm's hypotf is correctly rounded too);
# float64: max * sqrt(1 + (min / max)^2), 1.25 ulp. An infinite operand gives inf even with a
# nan (C99).

_F32_INF = np.float32(np.inf)


def _hypot32(x, y):
    ax, ay = np.float64(x), np.float64(y)
    h = np.float32(np.sqrt(ax * ax + ay * ay))
    return _F32_INF if abs(x) == _F32_INF or abs(y) == _F32_INF else h


def _hypot64(x, y):
    ax, ay = abs(x), abs(y)
    m = ax if ax > ay else ay
    n = ay if ax > ay else ax
    r = n / (m if m > 0.0 else 1.0)
    h = m * np.sqrt(1.0 + r * r)
    h = x + y if x != x or y != y else h  # nan (max/min above drop it)
    return math.inf if ax == math.inf or ay == math.inf else h


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


def asinh(x):
    """Inverse hyperbolic sine."""
    return np.arcsinh(_as_float(x))


def acosh(x):
    """Inverse hyperbolic cosine."""
    return np.arccosh(_as_float(x))


def atanh(x):
    """Inverse hyperbolic tangent."""
    return np.arctanh(_as_float(x))


def pow(x, y):
    """x**y with the C99 special cases (negative base with integer exponent included)."""
    x, y = _as_float(x), _as_float(y)
    return np.power(x, y)


def erf(x):
    """Error function."""
    x = _as_float(x)
    return _np_unary(math.erf, x)


def erfc(x):
    """Complementary error function 1 - erf(x), accurate for large x."""
    x = _as_float(x)
    return _np_unary(math.erfc, x)


def hypot(x, y):
    """sqrt(x**2 + y**2) without undue over- or underflow (inf wins over nan, as in C99)."""
    x, y = _as_float(x), _as_float(y)
    return np.hypot(x, y)


def gelu(x):
    """x * Phi(x), Phi the standard normal distribution function (the exact GELU)."""
    x = _as_float(x)
    return x * (erfc(x * -0.7071067811865476) * 0.5)


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

def _np_unary(fn, x):
    if isinstance(x, np.ndarray):
        return np.frompyfunc(fn, 1, 1)(x).astype(x.dtype)
    return type(x)(fn(float(x)))


_register(exp, _exp32, _exp64)
_register(exp2, _exp2_32, _exp2_64)
_register(expm1, _expm1_32, _expm1_64)
for _name in ("log", "log2", "log10", "log1p", "log_ok", "log1p_ok", "log_normal", "log2_normal",
              "log10_normal", "log1p_normal"):
    _register(globals()[_name], getattr(_LOGS32, _name), getattr(_LOGS64, _name))
_register(sin, _sin32, _sin64)
_register(cos, _cos32, _cos64)
_register(tan, _tan32, _tan64)
_register(trig_near, _trig_near32, _trig_near64)
_register(sin_near, _sin_near32, _sin_near64)
_register(cos_near, _cos_near32, _cos_near64)
_register(tan_near, _tan_near32, _tan_near64)
_register(tanh, _tanh32, _tanh64)
_register(sigmoid, _sigmoid32, _sigmoid64)
_register(sinh, _sinh32, _sinh64)
_register(cosh, _cosh32, _cosh64)
_register(atan, _atan32, _atan64)
_register(atan2, _atan2_32, _atan2_64)
_register(asin, _asin32, _asin64)
_register(acos, _acos32, _acos64)
_register(asinh, _asinh32, _asinh64)
_register(acosh, _acosh32, _acosh64)
_register(atanh, _atanh32, _atanh64)
_register(pow, _pow32, _pow64)
_register(erf, _erf32, _erf64)
_register(erfc, _erfc32, _erfc64)
_register(gelu, _gelu32, _gelu64)
_register(hypot, _hypot32, _hypot64)
_register(mish, _mish32, _mish64)
_register(softplus, _softplus32, _softplus64)


def like(x, c):
    """The constant ``c`` in the float type of ``x``.

    Under ``njit`` a Python constant is float64, and float32 combined with it computes in
    float64: ``x * 0.5`` of a float32 ``x`` runs at half the vector width and calls the float64
    kernels (gelu's erf 13x slower). ``like(x, 0.5)`` keeps the expression in float32; for
    non-float ``x`` it returns ``c`` unchanged."""
    return c


@overload(like, target="generic", inline=_INLINE, jit_options=_JIT_OPTIONS)
def _ov_like(x, c):
    if x == types.float32:
        return lambda x, c: np.float32(c)
    if x == types.float64:
        return lambda x, c: np.float64(c)
    return lambda x, c: c
