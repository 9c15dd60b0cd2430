# ruff: noqa: S102
# S102: exec generates fixed-arity glue code.
"""Shared building blocks of the fastmath families: registration of a public stub with its
float32 / float64 implementations (``_register``, ``_jitable``), Horner polynomials (``_poly``),
per-dtype format constants (``_Ty``, ``_T32``, ``_T64``), exact double-word arithmetic
(``_two_sum``, ``_two_prod``), scaling by 2**k, and the helpers of the NumPy-fallback stubs
(``_as_float``, ``_np_unary``) and of scalar functions (``like``)."""

import math
import os
from fractions import Fraction

import numpy as np
from numba import types
from numba.extending import overload

from ._intrinsics import _f32_as_i32, _f64_as_i64, _fma, _i32_as_f32, _i64_as_f64, _mla

# Overloads are compiled once per signature and inlined by LLVM (see the package docstring).
# No C-callable wrapper (``kernels/jit.py``): nothing takes an implementation as a function
# value, and building one cost ~30 ms per implementation in a cold compile.
_INLINE = "never"
_JIT_OPTIONS = {"forceinline": True, "no_cfunc_wrapper": True}
_CACHED_JIT_OPTIONS = {**_JIT_OPTIONS, "cache": True}


# --------------------------------------------------------------------------------------------
# Registration helpers
# --------------------------------------------------------------------------------------------


def _jitable(fn):
    """Make a plain Python helper callable (and always inlined) from jitted code."""
    overload(fn, target="generic", inline=_INLINE, strict=False, jit_options=_JIT_OPTIONS)(lambda *args: fn)
    return fn


def _has_source(fn) -> bool:
    """Whether Numba can cache ``fn`` (its code comes from a file: not ``exec``'s)."""
    return os.path.isfile(fn.__code__.co_filename)


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
    # CPU kernels with all-float32 or all-float64 arguments take the implementations cached on
    # disk (keyed by the package's sources: kernels/cache_locator.py): a process loads each
    # one instead of compiling it and its helpers, ~0.1-0.4 s apiece. The generic overload
    # stays for CUDA, for mixed arguments and for implementations without a source file.
    def exact(*args):
        if all(a == types.float32 for a in args):
            return impl32 if _has_source(impl32) else None
        if all(a == types.float64 for a in args):
            return impl64 if _has_source(impl64) else None
        return None

    scope = {"exact": exact}
    exec(f"def cpu_typer({names}):\n    return exact({names})", scope)
    overload(stub, target="cpu", inline=_INLINE, jit_options=_CACHED_JIT_OPTIONS)(scope["cpu_typer"])

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
_F32_INF = np.float32(np.inf)

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
# Stub helpers (NumPy fallbacks for plain Python calls), constants in the type of x
# --------------------------------------------------------------------------------------------


def _as_float(x):
    return x if isinstance(x, (np.floating, np.ndarray)) else np.float64(x)


def _np_unary(fn, x):
    if isinstance(x, np.ndarray):
        return np.frompyfunc(fn, 1, 1)(x).astype(x.dtype)
    return type(x)(fn(float(x)))


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
