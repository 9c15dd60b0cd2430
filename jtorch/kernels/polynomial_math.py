"""The classical orthogonal polynomials of torch.special (Chebyshev T, U, V, W and their shifted
forms, Hermite H and He, Laguerre L, Legendre P) at x for the degree n: the scalar functions of
their OpDefs (``kernels/defs/special.py``).

They follow torch's CPU kernels (ATen ``Math.h``) step for step, in float64 whatever the argument
type (float32 results are rounded once): n is truncated to an integer as C++'s cast does (nan,
+-inf and |n| >= 2**63 give INT64_MIN, so the polynomial is 0 as for every n < 0); the values at
|x| = 1 (x = 0 or 1 for the shifted forms) are exact; Chebyshev degrees above 6 (8 for U, V and
W; 4 for shifted W) inside (-1, 1) use the trigonometric forms (cos(n acos x), ...); a
recurrence stops once its value is nan (overflow past inf); Hermite degrees above 128 (float32)
or 512 (float64) are nan. torch's loops are built with FMA contraction: the recurrences fuse
their first product as it does, so float64 results agree with torch's bit for bit.
"""

import math

import numpy as np
from numba import types
from numba.extending import overload

from . import fastmath as fm
from .fastmath._intrinsics import _fma
from .jit import njit

_INT64_MIN = np.int64(-(2**63))
_TWO63 = 9.223372036854775808e18


@njit(inline="always")
def _degree(n):
    """static_cast<int64_t>(n) as x86 computes it (truncation; INT64_MIN out of range)."""
    n = np.float64(n)
    if -_TWO63 <= n < _TWO63:
        return np.int64(n)
    return _INT64_MIN


def _hermite_limit(x):
    """The degree above which torch's Hermite polynomials are nan: 128 in float32, else 512."""
    return 512


@overload(_hermite_limit, target="generic", inline="always")
def _ov_hermite_limit(x):
    limit = 128 if x == types.float32 else 512
    return lambda x: limit


@njit(inline="always")
def _odd_sign(n, v):
    """v for even n, -v for odd n (n >= 0)."""
    return v if n % 2 == 0 else -v


@njit(inline="always")
def _chebyshev(s, q, n):
    """The three-term recurrence r = s q - p from p = 1 and q (degree 1), up to degree n >= 2;
    ``s`` is 2x (2y - 1 + 2y - 1 for the shifted forms, y = 2x - 1 as torch spells it)."""
    p = 1.0
    r = q
    k = 2
    while k <= n and not math.isnan(q):
        r = _fma(s, q, -p)
        p = q
        q = r
        k += 1
    return r


@njit(inline="always")
def _cheb_t64(x, n):
    if n < 0:
        return 0.0
    if abs(x) == 1.0:
        return 1.0 if x > 0.0 else _odd_sign(n, 1.0)
    if n > 6 and abs(x) < 1.0:
        return math.cos(n * math.acos(x))
    if n == 0:
        return 1.0
    if n == 1:
        return x
    return _chebyshev(x + x, x, n)


@njit(inline="always")
def _cheb_u64(x, n):
    if n < 0:
        return 0.0
    if abs(x) == 1.0:
        return np.float64(n + 1) if x > 0.0 else _odd_sign(n, np.float64(n + 1))
    if n > 8 and abs(x) < 1.0:
        t = math.acos(x)
        if math.sin(t) != 0.0:
            return math.sin((n + 1) * t) / math.sin(t)
        return (n + 1) * math.cos((n + 1) * t) / x
    if n == 0:
        return 1.0
    if n == 1:
        return x + x
    return _chebyshev(x + x, x + x, n)


@njit(inline="always")
def _cheb_v64(x, n):
    if n < 0:
        return 0.0
    if abs(x) == 1.0:
        return 1.0 if x > 0.0 else _odd_sign(n, np.float64(n + n + 1))
    if n > 8 and abs(x) < 1.0:
        t = math.acos(x)
        if math.sin(t / 2.0) != 1.0:
            return math.cos((n + 0.5) * t) / math.cos(t / 2.0)
        return _odd_sign(n, np.float64(n + n + 1))
    if n == 0:
        return 1.0
    if n == 1:
        return x + x - 1.0
    return _chebyshev(x + x, x + x - 1.0, n)


@njit(inline="always")
def _cheb_w64(x, n):
    if n < 0:
        return 0.0
    if abs(x) == 1.0:
        return np.float64(n + n + 1) if x > 0.0 else _odd_sign(n, 1.0)
    if n > 8 and abs(x) < 1.0:
        t = math.acos(x)
        if math.cos(t / 2.0) != 1.0:
            return math.sin((n + 0.5) * t) / math.sin(t / 2.0)
        return np.float64(n + n + 1) if x > 0.0 else _odd_sign(n, 1.0)
    if n == 0:
        return 1.0
    if n == 1:
        return x + x + 1.0
    return _chebyshev(x + x, x + x + 1.0, n)


@njit(inline="always")
def _shifted_t64(x, n):
    if n < 0:
        return 0.0
    if x == 1.0:
        return 1.0
    if x == 0.0:
        return _odd_sign(n, 1.0)
    y = x + x - 1.0
    if n > 6 and abs(y) < 1.0:
        return math.cos(n * math.acos(y))
    if n == 0:
        return 1.0
    if n == 1:
        return y
    return _chebyshev(y + y, y, n)


@njit(inline="always")
def _shifted_u64(x, n):
    if n < 0:
        return 0.0
    if x == 1.0:
        return np.float64(n + 1)
    if x == 0.0:
        return _odd_sign(n, np.float64(n + 1))
    y = x + x - 1.0
    if n > 6 and abs(y) < 1.0:
        t = math.acos(y)
        if math.sin(t) != 0.0:
            return math.sin((n + 1) * t) / math.sin(t)
        return (n + 1) * math.cos((n + 1) * t) / y
    if n == 0:
        return 1.0
    if n == 1:
        return y + y
    return _chebyshev(y + y, y + y, n)


@njit(inline="always")
def _shifted_v64(x, n):
    if n < 0:
        return 0.0
    if x == 1.0:
        return 1.0
    if x == 0.0:
        return _odd_sign(n, np.float64(n + n + 1))
    y = x + x - 1.0
    if n > 6 and abs(y) < 1.0:
        t = math.acos(y)
        if math.sin(t / 2.0) != 1.0:
            return math.cos((n + 0.5) * t) / math.cos(t / 2.0)
        return _odd_sign(n, np.float64(n + n + 1))
    if n == 0:
        return 1.0
    if n == 1:
        return y + y - 1.0
    return _chebyshev(y + y, y + y - 1.0, n)


@njit(inline="always")
def _shifted_w64(x, n):
    if n < 0:
        return 0.0
    if x == 1.0:
        return np.float64(n + n + 1)
    if x == 0.0:
        return _odd_sign(n, 1.0)
    y = x + x - 1.0
    if n > 4 and abs(y) < 1.0:
        t = math.acos(y)
        if math.cos(t / 2.0) != 1.0:
            return math.sin((n + 0.5) * t) / math.sin(t / 2.0)
        return _odd_sign(n, 1.0)
    if n == 0:
        return 1.0
    if n == 1:
        return y + y + 1.0
    return _chebyshev(y + y, y + y + 1.0, n)


@njit(inline="always")
def _hermite_h64(x, n, limit):
    if n < 0:
        return 0.0
    if n == 0:
        return 1.0
    if n == 1:
        return x + x
    if n > limit:
        return math.nan
    p = 1.0
    q = x + x
    r = 0.0
    for k in range(2, n + n, 2):
        r = _fma(x + x, q, -(k * p))
        p = q
        q = r
    return r


@njit(inline="always")
def _hermite_he64(x, n, limit):
    if n < 0:
        return 0.0
    if n == 0:
        return 1.0
    if n == 1:
        return x
    if n > limit:
        return math.nan
    p = 1.0
    q = x
    r = x
    for k in range(1, n):
        r = _fma(x, q, -(k * p))
        p = q
        q = r
    return r


@njit(inline="always")
def _laguerre64(x, n):
    if n < 0:
        return 0.0
    if abs(x) == 0.0:
        return 1.0
    if n == 0:
        return 1.0
    if n == 1:
        return 1.0 - x
    p = 1.0
    q = 1.0 - x
    r = q
    k = 1
    while k < n and not math.isnan(q):
        r = _fma((k + k) + (1.0 - x), q, -(k * p)) / (k + 1)
        p = q
        q = r
        k += 1
    return r


@njit(inline="always")
def _legendre64(x, n):
    if n < 0:
        return 0.0
    if abs(x) == 1.0:
        return 1.0 if x > 0.0 else _odd_sign(n, 1.0)
    if n == 0:
        return 1.0
    if n == 1:
        return x
    p = 1.0
    q = x
    r = x
    k = 1
    while k < n and not math.isnan(q):
        r = _fma((k + k + 1) * x, q, -(k * p)) / (k + 1)
        p = q
        q = r
        k += 1
    return r


# The OpDefs' scalar functions (plain Python, compiled by the registry, so that a kernel's cache
# key covers this file): x and n in the compute dtype. A recurrence that never starts because
# its first value is nan returns that nan (torch's returns whatever its uninitialised result
# holds: nan, or garbage when n needs a cast).


def chebyshev_polynomial_t(x, n):
    """T_n(x) = cos(n acos x)."""
    return fm.like(x, _cheb_t64(np.float64(x), _degree(n)))


def chebyshev_polynomial_u(x, n):
    """U_n(x) = sin((n + 1) t) / sin t, x = cos t."""
    return fm.like(x, _cheb_u64(np.float64(x), _degree(n)))


def chebyshev_polynomial_v(x, n):
    """V_n(x) = cos((n + 1/2) t) / cos(t / 2), x = cos t."""
    return fm.like(x, _cheb_v64(np.float64(x), _degree(n)))


def chebyshev_polynomial_w(x, n):
    """W_n(x) = sin((n + 1/2) t) / sin(t / 2), x = cos t."""
    return fm.like(x, _cheb_w64(np.float64(x), _degree(n)))


def shifted_chebyshev_polynomial_t(x, n):
    """T_n(2x - 1), for x in [0, 1]."""
    return fm.like(x, _shifted_t64(np.float64(x), _degree(n)))


def shifted_chebyshev_polynomial_u(x, n):
    """U_n(2x - 1)."""
    return fm.like(x, _shifted_u64(np.float64(x), _degree(n)))


def shifted_chebyshev_polynomial_v(x, n):
    """V_n(2x - 1)."""
    return fm.like(x, _shifted_v64(np.float64(x), _degree(n)))


def shifted_chebyshev_polynomial_w(x, n):
    """W_n(2x - 1)."""
    return fm.like(x, _shifted_w64(np.float64(x), _degree(n)))


def hermite_polynomial_h(x, n):
    """The physicists' Hermite polynomial H_n(x)."""
    return fm.like(x, _hermite_h64(np.float64(x), _degree(n), _hermite_limit(x)))


def hermite_polynomial_he(x, n):
    """The probabilists' Hermite polynomial He_n(x)."""
    return fm.like(x, _hermite_he64(np.float64(x), _degree(n), _hermite_limit(x)))


def laguerre_polynomial_l(x, n):
    """The Laguerre polynomial L_n(x): 1 at x = 0."""
    return fm.like(x, _laguerre64(np.float64(x), _degree(n)))


def legendre_polynomial_p(x, n):
    """The Legendre polynomial P_n(x)."""
    return fm.like(x, _legendre64(np.float64(x), _degree(n)))
