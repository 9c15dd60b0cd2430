"""torch's CPU generator: MT19937 and the transforms its CPU kernels apply, bit for bit.

The engine is ``at::mt19937`` (``MT19937RNGEngine.h``): the standard generator seeded by
``init_genrand`` with the seed's low 32 bits, whose state here is ``mt`` (624 uint32 words)
and ``pos`` (int64: [left, next], torch's counters). ``random64`` is two draws, the first the
high word. torch's CPU sampling kernels are serial loops over the elements in memory order,
so element ``i`` of a fresh tensor takes the ``i``-th draws of the call; the samplers below
are those loops:

- uniform (``uniform_real_distribution``): float32 the low 24 bits of one draw times 2**-24,
  in float arithmetic; float64 the low 53 bits of a ``random64`` times 2**-53; then
  ``x * (to - from) + from`` with one rounding (torch's build contracts it to an FMA);
- normal of 16 or more contiguous elements (``normal_fill``): uniforms into the output,
  then Box-Muller over blocks of 16 (``u1 = 1 - d[j]``, ``u2 = d[j + 8]``), the last 16
  redrawn and recomputed when the size is not a multiple of 16; float64 with libm's log,
  cos and sin (the ones Numba calls), float32 with the cephes polynomials of
  ``avx_mathfun.h`` that torch's AVX2 build uses;
- normal of fewer or non-contiguous elements (``normal_distribution<double>``): two
  float64 uniforms per pair, ``r = sqrt(-2 log1p(-u2))``, ``theta = 2 pi u1``, ``r cos``
  returned and ``r sin`` cached in the generator for the next call (``z * std + mean`` an
  FMA too);
- integers (``random_from_to``): ``draw % range + base`` with a 32-bit draw, or a 64-bit one
  where the range reaches 2**32 (int64, float32 and float64 results);
- randperm: Fisher-Yates, ``random() % (n - i)``.
- rrelu in training: a ``uniform_real_distribution<double>`` sample per element <= 0 only
  (``u * (upper - lower) + lower``, two roundings), none for the others.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from ..fastmath._intrinsics import _f32_as_i32, _fma, _i32_as_f32, _sqrt
from ..jit import njit

_N, _M = 624, 397
_MATRIX_A = np.uint32(0x9908B0DF)
_UMASK = np.uint32(0x80000000)
_LMASK = np.uint32(0x7FFFFFFF)


def seeded(seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(mt, pos) of an engine seeded with ``seed`` (torch keeps its low 32 bits)."""
    mt = np.empty(_N, np.uint32)
    x = seed & 0xFFFFFFFF
    mt[0] = x
    for j in range(1, _N):
        x = (1812433253 * (x ^ (x >> 30)) + j) & 0xFFFFFFFF
        mt[j] = x
    return mt, np.array([1, 0], np.int64)


# functions only other kernels call: no CPython wrapper (~30 ms of each one's cold compile)
_inner = njit(cache=True, nogil=True, no_cpython_wrapper=True)


@njit(cache=True, nogil=True, inline="always")
def _mix(u, v, w):
    y = (u & _UMASK) | (v & _LMASK)
    return w ^ (y >> np.uint32(1)) ^ ((np.uint32(0) - (v & np.uint32(1))) & _MATRIX_A)


@_inner
def _twist(mt):
    for k in range(_N - _M):
        mt[k] = _mix(mt[k], mt[k + 1], mt[k + _M])
    for k in range(_N - _M, _N - 1):
        mt[k] = _mix(mt[k], mt[k + 1], mt[k + _M - _N])
    mt[_N - 1] = _mix(mt[_N - 1], mt[0], mt[_M - 1])


@njit(cache=True, nogil=True, inline="always")
def _temper(y):
    y ^= y >> np.uint32(11)
    y ^= (y << np.uint32(7)) & np.uint32(0x9D2C5680)
    y ^= (y << np.uint32(15)) & np.uint32(0xEFC60000)
    return y ^ (y >> np.uint32(18))


@njit(cache=True, nogil=True, inline="always")
def next32(mt, pos):
    """One 32-bit draw (``mt19937_engine::operator()``: pos = [left, next])."""
    pos[0] -= 1
    if pos[0] == 0:
        _twist(mt)
        pos[0] = _N
        pos[1] = 0
    y = mt[pos[1]]
    pos[1] += 1
    return _temper(y)


@_inner
def _temper_run(src, dst):
    for j in range(dst.size):
        dst[j] = _temper(src[j])


@_inner
def draws(mt, pos, out):
    """``out.size`` consecutive 32-bit draws, the engine's counters kept in registers: runs
    of the words left before the next twist, each tempered by a call on slices (the loop
    vectorises there; indexed at offsets into ``mt`` and ``out``, which Numba cannot prove
    non-negative, every access carried its negative-index fix-up and the loop stayed scalar:
    36k draws 38 -> 8 us)."""
    left, nxt = pos[0], pos[1]
    i, n = 0, out.size
    while i < n:
        if left == 1:
            _twist(mt)
            left, nxt = _N + 1, 0
        k = min(left - 1, n - i)
        _temper_run(mt[nxt:nxt + k], out[i:i + k])
        i += k
        nxt += k
        left -= k
    pos[0], pos[1] = left, nxt


@njit(cache=True, nogil=True, inline="always")
def next64(mt, pos):
    hi = np.uint64(next32(mt, pos))
    lo = np.uint64(next32(mt, pos))
    return (hi << np.uint64(32)) | lo


@njit(cache=True, nogil=True, inline="always")
def _f24(r):
    return np.float32(r & np.uint32(0xFFFFFF)) * np.float32(1.0 / (1 << 24))


@njit(cache=True, nogil=True, inline="always")
def _f53(hi, lo):
    w = ((np.uint64(hi) << np.uint64(32)) | np.uint64(lo)) & np.uint64((1 << 53) - 1)
    return np.float64(w) * (1.0 / (1 << 53))


@njit(cache=True, nogil=True, inline="always")
def _u24(mt, pos):
    return _f24(next32(mt, pos))


@njit(cache=True, nogil=True, inline="always")
def _u53(mt, pos):
    return np.float64(next64(mt, pos) & np.uint64((1 << 53) - 1)) * (1.0 / (1 << 53))


_CHUNK = 1 << 14  # draws per bulk call: the raw words stay in L1/L2


@njit(cache=True, nogil=True)
def uniform32(mt, pos, out, a, b, clamp):
    """``uniform_(a, b)`` of float32: a value that rounds up to ``b`` becomes ``a``, as torch
    clamps (``clamp=False`` for float16, whose caller clamps after rounding)."""
    lo, hi = np.float32(a), np.float32(b)
    w = hi - lo
    n = out.size
    raw = np.empty(min(n, _CHUNK), np.uint32)
    for s in range(0, n, _CHUNK):
        m = min(_CHUNK, n - s)
        draws(mt, pos, raw[:m])
        o = out[s:s + m]  # (indexed at s + i, the loop stayed scalar: see ``draws``)
        for i in range(m):
            v = _fma(_f24(raw[i]), w, lo)
            o[i] = lo if clamp and v == hi else v


@njit(cache=True, nogil=True)
def uniform64(mt, pos, out, a, b):
    w = b - a
    n = out.size
    raw = np.empty(2 * min(n, _CHUNK), np.uint32)
    for s in range(0, n, _CHUNK):
        m = min(_CHUNK, n - s)
        draws(mt, pos, raw[:2 * m])
        o = out[s:s + m]
        for i in range(m):
            v = _fma(_f53(raw[2 * i], raw[2 * i + 1]), w, a)
            o[i] = a if v == b else v


# -- a process's first uniform draws, through NumPy's MT19937 ---------------------------------
# The compiled ``uniform32`` costs ~1.2 s of a cold process's first minute, where the first
# draws are a model's initialisation (kaiming_uniform_ of every weight and bias). NumPy's
# MT19937 is the same reference engine (genrand_int32), so it takes the state and gives the
# same words; the float transform below gives the same bits as ``uniform32``'s FMA.

_np_engine: list = []
_np_lock = threading.Lock()
_NP_CHUNK = 1 << 16  # words converted at a time: the float64 temporaries stay ~2 MiB


def numpy_words(mt: np.ndarray, pos: np.ndarray, n: int):
    """``n`` draws through NumPy's MT19937 from the state (mt, pos), as chunks of at most
    ``_NP_CHUNK`` (uint64 arrays holding the 32-bit words); the state is written back after
    the last. NumPy's ``pos`` is the index of the next word (624: twist first), ours
    [left, next] with left - 1 words before the next twist."""
    if n == 0:  # (the state as it is: [1, 0] after seeding, where NumPy would give [1, 624])
        return
    with _np_lock:
        if not _np_engine:
            _np_engine.append(np.random.MT19937(0))
        bg = _np_engine[0]
        bg.state = {"bit_generator": "MT19937",
                    "state": {"key": mt, "pos": _N + 1 - int(pos[0])}}
        for s in range(0, n, _NP_CHUNK):
            yield bg.random_raw(min(_NP_CHUNK, n - s))
        st = bg.state["state"]
    mt[:] = st["key"]
    p = int(st["pos"])
    pos[0], pos[1] = _N + 1 - p, p


def _sum_to_odd(p: np.ndarray, c) -> np.ndarray:
    """``p + c`` in float64 rounded to odd: an inexact even sum moves one ulp toward the exact
    one (TwoSum's error), so that rounding it to float32 is the correct rounding of the exact
    sum (53 >= 24 + 2 bits)."""
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    fix = (err != 0) & ((s.view(np.int64) & 1) == 0)
    if fix.any():
        s[fix] = np.nextafter(s[fix], np.copysign(np.inf, err[fix]))
    return s


def _fma32_numpy(a, b, c) -> np.ndarray:
    """float32 ``fma(a, b, c)`` over arrays: the product of two float32 values is exact in
    float64, the sum rounded to odd, then to float32."""
    p = np.multiply(a, b, dtype=np.float64)
    return _sum_to_odd(p, np.asarray(c, np.float64)).astype(np.float32)


def uniform32_numpy(mt, pos, out: np.ndarray, a: float, b: float, clamp: bool) -> bool:
    """``uniform32`` in NumPy, bit for bit: False (nothing drawn) where ``to - from`` is not a
    finite float32. The FMA ``u * w + lo`` in float32 is emulated in float64: ``u * w`` is
    exact (24-bit by 24-bit), the sum rounded to odd (TwoSum's error moves an inexact even
    result one ulp toward the exact sum), and rounding that to float32 is then the single
    correct rounding (53 >= 24 + 2 bits)."""
    lo, hi = np.float32(a), np.float32(b)
    w = np.float32(hi - lo)
    if not np.isfinite(w):
        return False
    flat = out.reshape(-1)
    scale, lo64 = float(w) / (1 << 24), float(lo)  # (w times a power of two: exact)
    at = 0
    for raw in numpy_words(mt, pos, flat.size):
        p = (raw & np.uint64(0xFFFFFF)).astype(np.float64)
        p *= scale
        v = _sum_to_odd(p, lo64).astype(np.float32)
        if clamp:
            v[v == hi] = lo
        flat[at:at + v.size] = v
        at += v.size
    return True


# -- normal ---------------------------------------------------------------------------------------
# avx_mathfun.h's log256_ps and sincos256_ps (cephes), one lane at a time, with the FMAs the
# compiler of torch's AVX2 build formed from its multiplies and adds (found by comparing every
# value of a long draw with torch's: the other contractions differ in a few values per 1000)

_SQRTHF = np.float32(0.707106781186547524)
_LOG_P = tuple(np.float32(c) for c in (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1,
                                       -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1,
                                       2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1))
_LOG_Q1, _LOG_Q2 = np.float32(-2.12194440e-4), np.float32(0.693359375)
_DP1, _DP2, _DP3 = (np.float32(-0.78515625), np.float32(-2.4187564849853515625e-4),
                    np.float32(-3.77489497744594108e-8))
_SIN_P = (np.float32(-1.9515295891e-4), np.float32(8.3321608736e-3), np.float32(-1.6666654611e-1))
_COS_P = (np.float32(2.443315711809948e-005), np.float32(-1.388731625493765e-003),
          np.float32(4.166664568298827e-002))
_FOPI = np.float32(1.27323954473516)
_F1, _FH = np.float32(1.0), np.float32(0.5)


@njit(cache=True, nogil=True, inline="always")
def _log_cephes(x):
    """log256_ps for one x > 0 (the callers' x are in (0, 1])."""
    bits = _f32_as_i32(x)
    e = np.float32(np.int32((bits >> np.int32(23)) & np.int32(0xFF)) - np.int32(0x7F)) + _F1
    m = _i32_as_f32((bits & np.int32(~0x7F800000)) | np.int32(0x3F000000))
    if m < _SQRTHF:
        e = e - _F1
        m = (m - _F1) + m
    else:
        m = m - _F1
    z = m * m
    p0, p1, p2, p3, p4, p5, p6, p7, p8 = _LOG_P
    y = _fma(_fma(_fma(_fma(p0, m, p1), m, p2), m, p3), m, p4)
    y = _fma(_fma(_fma(_fma(y, m, p5), m, p6), m, p7), m, p8)
    y = y * m
    y = _fma(y, z, e * _LOG_Q1)
    y = _fma(-z, _FH, y)
    m = m + y
    return _fma(e, _LOG_Q2, m)


@njit(cache=True, nogil=True, inline="always")
def _sincos_cephes(x):
    """sincos256_ps for one x >= 0: (sin x, cos x)."""
    y = x * _FOPI
    j = (np.int32(y) + np.int32(1)) & np.int32(~1)
    y = np.float32(j)
    swap_sin = (j & np.int32(4)) != 0
    poly = (j & np.int32(2)) == 0
    x = ((x + y * _DP1) + y * _DP2) + y * _DP3
    swap_cos = ((j - np.int32(2)) & np.int32(4)) == 0
    z = x * x
    yc = _fma(_fma(_fma(_COS_P[0], z, _COS_P[1]), z, _COS_P[2]) * z, z, -(z * _FH)) + _F1
    ys = _fma(_fma(_fma(_SIN_P[0], z, _SIN_P[1]), z, _SIN_P[2]) * z, x, x)
    s = ys if poly else yc
    c = yc if poly else ys
    return (-s if swap_sin else s), (-c if swap_cos else c)


@njit(cache=True, nogil=True, error_model="numpy", no_cpython_wrapper=True)
def _box_muller_pairs32(u1, u2, mean, std):
    """Box-Muller over pairs held in two rows (a loop that vectorises: the 16-element
    blocks' interleaved halves do not): the normals replace the uniforms."""
    for i in range(u1.size):
        radius = _sqrt(np.float32(-2.0) * _log_cephes(_F1 - u1[i]))
        s, c = _sincos_cephes(np.float32(2.0 * math.pi) * u2[i])
        u1[i] = _fma(radius * c, std, mean)
        u2[i] = _fma(radius * s, std, mean)


@_inner
def _box_muller_blocks32(d, lo, hi, mean, std):
    """Box-Muller of the 16-element blocks of d[lo:hi]: ``u1 = 1 - d[j]``, ``u2 = d[j + 8]``."""
    nb = (hi - lo) // 16
    if nb == 0:
        return
    # element loops, not 2-d slice assignments: those pull in Numba's shape-mismatch message
    # (string formatting), 3-4 s of the first randn's compile
    a = np.empty(8 * nb, np.float32)
    b = np.empty(8 * nb, np.float32)
    for k in range(nb):
        for j in range(8):
            a[8 * k + j] = d[lo + 16 * k + j]
            b[8 * k + j] = d[lo + 16 * k + 8 + j]
    _box_muller_pairs32(a, b, mean, std)
    for k in range(nb):
        for j in range(8):
            d[lo + 16 * k + j] = a[8 * k + j]
            d[lo + 16 * k + 8 + j] = b[8 * k + j]


@njit(cache=True, nogil=True, inline="always")
def _box_muller16_64(d, o, mean, std):
    for j in range(8):
        u1 = 1.0 - d[o + j]
        u2 = d[o + j + 8]
        radius = math.sqrt(-2.0 * math.log(u1))
        theta = 2.0 * math.pi * u2
        d[o + j] = _fma(radius * math.cos(theta), std, mean)
        d[o + j + 8] = _fma(radius * math.sin(theta), std, mean)


_NO_CLAMP = np.bool_(False)  # (typed bool as random.py's calls pass it: a literal False
# compiled a second uniform32)


@njit(cache=True, nogil=True)
def normal_fill32(mt, pos, d, mean, std):
    """``normal_fill`` of a contiguous float32 array of at least 16 elements: uniforms into
    it, Box-Muller per block of 16, the last 16 redrawn and recomputed."""
    n = d.size
    m, s = np.float32(mean), np.float32(std)
    for lo, hi in ((0, n), (n - 16, n if n % 16 else n - 16)):  # every value, then the tail
        uniform32(mt, pos, d[lo:hi], 0.0, 1.0, _NO_CLAMP)
        _box_muller_blocks32(d, lo, hi, m, s)


def _log_cephes_numpy(x: np.ndarray) -> np.ndarray:
    """``_log_cephes`` over a float32 array, the same operations in the same order."""
    bits = x.view(np.int32)
    e = (((bits >> 23) & 0xFF) - 0x7F).astype(np.float32) + _F1
    m = ((bits & np.int32(~0x7F800000)) | np.int32(0x3F000000)).view(np.float32)
    small = m < _SQRTHF
    e = np.where(small, e - _F1, e)
    m = np.where(small, (m - _F1) + m, m - _F1)
    z = m * m
    p0, p1, p2, p3, p4, p5, p6, p7, p8 = _LOG_P
    f = _fma32_numpy
    y = f(f(f(f(p0, m, p1), m, p2), m, p3), m, p4)
    y = f(f(f(f(y, m, p5), m, p6), m, p7), m, p8)
    y = y * m
    y = f(y, z, e * _LOG_Q1)
    y = f(-z, _FH, y)
    m = m + y
    return f(e, _LOG_Q2, m)


def _sincos_cephes_numpy(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``_sincos_cephes`` over a float32 array of x >= 0."""
    j = ((x * _FOPI).astype(np.int32) + 1) & ~1
    y = j.astype(np.float32)
    swap_sin = (j & 4) != 0
    poly = (j & 2) == 0
    x = ((x + y * _DP1) + y * _DP2) + y * _DP3
    swap_cos = ((j - 2) & 4) == 0
    z = x * x
    f = _fma32_numpy
    yc = f(f(f(_COS_P[0], z, _COS_P[1]), z, _COS_P[2]) * z, z, -(z * _FH)) + _F1
    ys = f(f(f(_SIN_P[0], z, _SIN_P[1]), z, _SIN_P[2]) * z, x, x)
    s, c = np.where(poly, ys, yc), np.where(poly, yc, ys)
    return np.where(swap_sin, -s, s), np.where(swap_cos, -c, c)


def normal_fill32_numpy(mt, pos, d: np.ndarray, mean: float, std: float) -> None:
    """``normal_fill32`` in NumPy, bit for bit (the uniforms from ``numpy_words``, the cephes
    polynomials with emulated FMAs): a cold process's first ``randn`` without the ~3.5 s
    build of the compiled sampler."""
    n = d.size
    m, s = np.float32(mean), np.float32(std)
    for lo, hi in ((0, n), (n - 16, n if n % 16 else n - 16)):
        at = lo
        for raw in numpy_words(mt, pos, hi - lo):
            d[at:at + raw.size] = (raw & np.uint64(0xFFFFFF)).astype(np.float32) * \
                np.float32(1.0 / (1 << 24))
            at += raw.size
        end = lo + (hi - lo) // 16 * 16  # (a partial block is redrawn by the second pass)
        for b in range(lo, end, 1 << 16):  # blocks of 16: u1 the first 8, u2 the last 8
            blocks = d[b:min(end, b + (1 << 16))].reshape(-1, 16)
            _box_muller_numpy(blocks[:, :8], blocks[:, 8:], m, s)


def _box_muller_numpy(u1: np.ndarray, u2: np.ndarray, mean, std) -> None:
    """``_box_muller_pairs32`` over arrays (an infinite or NaN mean or std gives the
    compiled kernel's infinities and NaNs, without NumPy's warnings)."""
    with np.errstate(over="ignore", invalid="ignore"):
        radius = np.sqrt(np.float32(-2.0) * _log_cephes_numpy(_F1 - u1))
        sin, cos = _sincos_cephes_numpy(np.float32(2.0 * math.pi) * u2)
        u1[...] = _fma32_numpy(radius * cos, std, mean)
        u2[...] = _fma32_numpy(radius * sin, std, mean)


@njit(cache=True, nogil=True)
def normal_fill64(mt, pos, d, mean, std):
    """The same for float64 (libm's log, cos and sin)."""
    n = d.size
    for lo, hi in ((0, n), (n - 16, n if n % 16 else n - 16)):
        uniform64(mt, pos, d[lo:hi], 0.0, 1.0)
        for i in range(lo, hi - 15, 16):
            _box_muller16_64(d, i, mean, std)


@njit(cache=True, nogil=True)
def normal_serial(mt, pos, cache, out, mean, std):
    """``normal_distribution<double>`` per element (``cache[0]``: the generator's next
    double sample, NaN when there is none); float64 values, the caller rounds."""
    for i in range(out.size):
        z = cache[0]
        if not math.isnan(z):
            cache[0] = np.nan
        else:
            u1 = _u53(mt, pos)
            u2 = _u53(mt, pos)
            r = math.sqrt(-2.0 * math.log1p(-u2))
            theta = 2.0 * math.pi * u1
            cache[0] = r * math.sin(theta)
            z = r * math.cos(theta)
        out[i] = _fma(z, std, mean)


# -- integers, permutations ------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def from_to(mt, pos, out, rng, base, wide):
    """``random_(from, to)``: ``draw % rng + base`` as int64 (``rng == 0``: the full int64
    range, a 64-bit draw as it is)."""
    r = np.uint64(rng)
    per = 2 if wide or r == 0 else 1
    n = out.size
    raw = np.empty(per * min(n, _CHUNK), np.uint32)
    for s in range(0, n, _CHUNK):
        m = min(_CHUNK, n - s)
        draws(mt, pos, raw[:per * m])
        o = out[s:s + m]
        for i in range(m):
            if per == 1:
                o[i] = np.int64(np.uint64(raw[i]) % r) + base
            else:
                v = (np.uint64(raw[2 * i]) << np.uint64(32)) | np.uint64(raw[2 * i + 1])
                o[i] = np.int64(v) if r == 0 else np.int64(v % r) + base


def from_to_numpy(mt, pos, out: np.ndarray, rng, base) -> None:
    """``from_to`` in NumPy for 32-bit draws (``wide`` False, ``rng`` > 0): a cold
    process's first ``randint`` without building the compiled sampler (~1.3 s with
    ``draws`` inside)."""
    r, at = np.uint64(rng), 0
    for raw in numpy_words(mt, pos, out.size):
        out[at:at + raw.size] = (raw % r).astype(np.int64) + np.int64(base)
        at += raw.size


@njit(cache=True, nogil=True)
def randperm(mt, pos, out):
    n = out.size
    for i in range(n):
        out[i] = i
    raw = np.empty(max(n - 1, 0), np.uint32)
    draws(mt, pos, raw)
    for i in range(n - 1):
        z = np.int64(np.uint64(raw[i]) % np.uint64(n - i))
        t = out[i]
        out[i] = out[z + i]
        out[z + i] = t


@njit(cache=True, nogil=True)
def key64(mt, pos):
    """A 64-bit draw: the key of a counter-based stream for the samplers that run in
    parallel (complex samples; gamma, beta, poisson and binomial draws)."""
    return next64(mt, pos)


@njit(cache=True, nogil=True)
def normal_blocks32(mt, pos, d, mean, std):
    """``normal_fill`` of float16 (computed in float32): 16 uniforms then their Box-Muller per
    block, the last block the 16 elements that end the array."""
    n = d.size
    m, s = np.float32(mean), np.float32(std)
    buf = np.empty(16, np.float32)
    for i in range(0, n - 15, 16):
        for j in range(16):
            buf[j] = _u24(mt, pos)
        _box_muller_blocks32(buf, 0, 16, m, s)
        for j in range(16):
            d[i + j] = buf[j]
    if n % 16:
        for j in range(16):
            buf[j] = _u24(mt, pos)
        _box_muller_blocks32(buf, 0, 16, m, s)
        for j in range(16):
            d[n - 16 + j] = buf[j]


@njit(cache=True, nogil=True)
def bernoulli_scalar(mt, pos, out, p):
    """``bernoulli_(p)``: a float64 uniform below p (``bernoulli_distribution<double>``)."""
    u = np.empty(min(out.size, _CHUNK))
    for s in range(0, out.size, _CHUNK):
        m = min(_CHUNK, out.size - s)
        uniform64(mt, pos, u[:m], 0.0, 1.0)
        o = out[s:s + m]
        for i in range(m):
            o[i] = u[i] < p


@njit(cache=True, nogil=True)
def bernoulli_tensor(mt, pos, out, p, wide):
    """``bernoulli_(p_tensor)``: a float64 uniform below a float64 p, else a float32 one."""
    for i in range(out.size):
        if wide:
            out[i] = _u53(mt, pos) < p[i]
        else:
            out[i] = _u24(mt, pos) < np.float32(p[i])


@njit(cache=True, nogil=True)
def exponential64(mt, pos, out, lambd):
    """torch's CPU ``exponential_`` (``exponential_distribution<double>``, element by element):
    -1/lambd * log1p(-u), u from the low 53 bits of a 64-bit draw."""
    c = -1.0 / lambd
    for i in range(out.size):
        out[i] = c * math.log1p(-_u53(mt, pos))


@njit(cache=True, nogil=True)
def multinomial_replace(mt, pos, p, out, cum):
    """torch's CPU multinomial with replacement: per row, the running sums of ``p`` in
    ``cum``'s precision (float64 for float64 rows, float32 for the others) divided by their
    total, the last set to 1; per sample, a uniform double and a binary search for the first
    sum not below it. Returns 0, or the error of the first bad row (1: an entry < 0 or nan,
    3: inf, 2: the sum is not > 0)."""
    rows, n = p.shape
    k = out.shape[1]
    for r in range(rows):
        s = cum.dtype.type(0)
        for j in range(n):
            v = p[r, j]
            if not v >= 0:
                return 1
            if not math.isfinite(v):
                return 3
            s += cum.dtype.type(v)
            cum[j] = s
        if not s > 0:
            return 2
        for j in range(n):
            cum[j] /= s
        for j in range(k):
            u = _u53(mt, pos)
            cum[n - 1] = 1
            lo, hi = 0, n
            while hi - lo > 0:
                mid = lo + (hi - lo) // 2
                if cum[mid] < u:
                    lo = mid + 1
                else:
                    hi = mid
            out[r, j] = lo
    return 0


@njit(cache=True, nogil=True)
def cauchy64(mt, pos, out, median, sigma):
    """torch's CPU ``cauchy_``: median + sigma * tan(pi * (u - 0.5)), u a 53-bit uniform."""
    for i in range(out.size):
        out[i] = median + sigma * math.tan(math.pi * (_u53(mt, pos) - 0.5))


@njit(cache=True, nogil=True)
def geometric64(mt, pos, out, p):
    """torch's CPU ``geometric_``: ceil(log(u) / log1p(-p)), u a 53-bit uniform."""
    for i in range(out.size):
        out[i] = np.ceil(math.log(_u53(mt, pos)) / math.log1p(-p))


@njit(cache=True, nogil=True)
def log_normal64(mt, pos, cache, out, mean, std):
    """torch's CPU ``log_normal_``: exp of ``normal_distribution<double>`` (libm's exp)."""
    normal_serial(mt, pos, cache, out, mean, std)
    for i in range(out.size):
        out[i] = math.exp(out[i])


_DBL_MAX = np.finfo(np.float64).max


@njit(cache=True, nogil=True)
def rrelu_noise(mt, pos, x, noise, lower, upper):
    """torch's CPU ``rrelu_with_noise`` slopes in training (``_rrelu_with_noise_train``): the
    elements of the contiguous ``x`` in order; where x <= 0 a
    ``uniform_real_distribution<double>(lower, upper)`` sample (the low 53 bits of a 64-bit
    draw times 2**-53, then ``u * (upper - lower) + lower`` in two roundings: torch builds
    Activation.cpp without FMA contraction, and draws no clamp), cast to ``noise``'s dtype;
    1 elsewhere (no draw). Returns 1, having drawn nothing, where an x <= 0 meets a range
    ``upper - lower`` above the largest double (torch's check in the distribution), else 0."""
    w = upper - lower
    ok = w <= _DBL_MAX
    for i in range(x.size):
        if x[i] <= 0:
            if not ok:
                return 1
            noise[i] = _u53(mt, pos) * w + lower
        else:
            noise[i] = 1.0
    return 0
