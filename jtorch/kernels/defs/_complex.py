"""Complex scalar arithmetic with torch's (c10::complex's) special values.

Numba's complex division raises ZeroDivisionError for a zero divisor, as Python does; torch
divides by scaling with the larger part of the divisor (Smith's method, as NumPy) and gives
inf or nan for a zero divisor. ``pow`` is the C library's ``cpow``: ``exp(y * log(x))``.
Numba's ``cmath.sqrt`` raises ZeroDivisionError for subnormal inputs; ``csqrt`` is C's.
"""

import cmath
import math

import numpy as np
from numba import types
from numba.extending import intrinsic

from .. import fastmath as fm
from ..jit import njit


@intrinsic
def _pack(typingctx, re, im):
    """complex(re, im) in the precision of its parts (complex() of float32 parts would be
    complex128, and re + 1j * im turns an infinite part's 0 * inf into nan)."""
    if re != im or re not in (types.float32, types.float64):
        return None
    ct = types.complex64 if re == types.float32 else types.complex128

    def codegen(context, builder, sig, args):
        z = context.make_complex(builder, ct)
        z.real, z.imag = args
        return z._getvalue()

    return ct(re, im), codegen


@njit(cache=True, error_model="numpy")
def cdiv(x, y):
    """x / y as c10::complex's operator/= computes it (a zero divisor gives inf or nan)."""
    a, b = x.real, x.imag
    c, d = y.real, y.imag
    abs_c, abs_d = abs(c), abs(d)
    if abs_c >= abs_d:
        if abs_c == 0 and abs_d == 0:
            return _pack(a / abs_c, b / abs_d)
        rat = d / c
        scl = fm.like(c, 1.0) / (c + d * rat)
        return _pack((a + b * rat) * scl, (b - a * rat) * scl)
    rat = c / d
    scl = fm.like(c, 1.0) / (d + c * rat)
    return _pack((a * rat + b) * scl, (b * rat - a) * scl)


@njit(cache=True, error_model="numpy")
def cpow(x, y):
    """x ** y as torch's CPU kernel computes it (std::pow of complex is C's cpow)."""
    return cmath.exp(y * cmath.log(x))


@njit(cache=True, error_model="numpy")
def crecip(x):
    """1 / x as torch's complex reciprocal (a complex one divided by x)."""
    return cdiv(_one(x), x)


_BIG = 4.49423283715579e+307  # DBL_MAX / 4: above it, d + |x| may overflow
_TINY = 4.450147717014403e-308  # 2 * DBL_MIN: below it, halving loses subnormal bits
_UP, _DOWN = 2.0 ** 108, 2.0 ** -54  # scale tiny parts up by 2^108, the root down by 2^54


@njit(cache=True, error_model="numpy")
def csqrt(z):
    """The principal square root with C99's special values (glibc's csqrt), computed in
    float64 and rounded once to z's precision."""
    x, y = np.float64(z.real), np.float64(z.imag)
    inf = np.float64(np.inf)
    if math.isinf(y):  # x + i inf: inf + i inf, whatever x is (nan too)
        re, im = inf, y
    elif math.isnan(x):
        re, im = x, x + y
    elif math.isinf(x):
        if math.isnan(y):
            re, im = (x, y) if x > 0 else (y, math.copysign(inf, y))
        else:
            re, im = (x, math.copysign(0.0, y)) if x > 0 else (0.0, math.copysign(inf, y))
    elif math.isnan(y):
        re, im = y, y
    elif y == 0:
        if x < 0:
            re, im = 0.0, math.copysign(math.sqrt(-x), y)
        else:
            re, im = abs(math.sqrt(x)), y
    else:
        scale = 1.0
        if abs(x) > _BIG or abs(y) > _BIG:
            x, y, scale = x * 0.25, y * 0.25, 2.0
        elif abs(x) < _TINY and abs(y) < _TINY:
            x, y, scale = x * _UP, y * _UP, _DOWN
        d = math.hypot(x, y)
        if x > 0:
            r = math.sqrt(0.5 * (d + x))
            s = 0.5 * (y / r)
        else:
            s = math.sqrt(0.5 * (d - x))
            r = abs(0.5 * (y / s))
        re, im = r * scale, math.copysign(s * scale, y)
    return _pack(fm.like(z.real, re), fm.like(z.real, im))


@njit(cache=True)
def _one(x):
    """The complex one in x's precision (x a complex value)."""
    return _pack(fm.like(x.real, 1.0), fm.like(x.real, 0.0))


@njit(cache=True, error_model="numpy")
def cexpm1(z):
    """exp(z) - 1 without cancellation near 0 (c10's form: expm1(x) cos y - 2 sin^2(y/2))."""
    x, y = z.real, z.imag
    a = math.sin(y * fm.like(x, 0.5))
    return _pack(math.expm1(x) * math.cos(y) - fm.like(x, 2.0) * a * a, math.exp(x) * math.sin(y))


@njit(cache=True, error_model="numpy")
def clog1p(z):
    """log(1 + z) (c10's form: log1p of x (x + 2) + y^2 near 0, so small z keep their digits)."""
    x, y = z.real, z.imag
    one = fm.like(x, 1.0)
    theta = math.atan2(y, x + one)
    if abs(z) < fm.like(x, 0.5):
        r = x * (fm.like(x, 2.0) + x) + y * y
        if r == 0:
            return _pack(x, theta)
        return _pack(fm.like(x, 0.5) * math.log1p(r), theta)
    return _pack(math.log(math.hypot(x + one, y)), theta)


@njit(cache=True, error_model="numpy")
def clog_base(z, ln_base):
    """log(z) / ln(base), each part divided by the real logarithm (as C++'s complex / real)."""
    lz = cmath.log(z)
    c = fm.like(lz.real, ln_base)
    return _pack(lz.real / c, lz.imag / c)


@njit(cache=True, error_model="numpy")
def csigmoid(z):
    """1 / (1 + exp(-z)), torch's complex sigmoid."""
    return crecip(_one(z) + cmath.exp(-z))


@njit(cache=True, error_model="numpy")
def csgn(z):
    """z / |z|, and 0 at 0."""
    if z.real == 0 and z.imag == 0:
        return _pack(fm.like(z.real, 0.0), fm.like(z.real, 0.0))
    m = abs(z)
    return _pack(z.real / m, z.imag / m)


@njit(cache=True, error_model="numpy")
def csinc(z):
    """sin(pi z) / (pi z), and 1 at 0."""
    if z.real == 0 and z.imag == 0:
        return _one(z)
    pz = z * fm.like(z.real, math.pi)
    return cdiv(cmath.sin(pz), pz)


@njit(cache=True, error_model="numpy")
def cexp2(z):
    """2 ** z as torch computes it: exp of z times the real ln 2 (no cross terms, so an
    infinite part cannot make nan of the other)."""
    c = fm.like(z.real, 0.6931471805599453)
    return cmath.exp(_pack(z.real * c, z.imag * c))
