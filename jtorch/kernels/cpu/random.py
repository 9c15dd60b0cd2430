"""Random sampling loops over a counter-based Philox4x32-10 bit generator.

A generator's state is (seed, offset). Block ``b`` of a call is the Philox output for the
128-bit counter ``offset + b`` under the 64-bit key ``seed``: four 32-bit words. Each kernel
maps output element ``i`` to a fixed block and word (4 elements per block for 32-bit draws,
2 for 64-bit draws), and the caller advances the offset by the number of blocks it used.
So the numbers depend only on (seed, offset, element index): the parallel loops produce the
same stream as the serial ones, whatever the thread count, and a prefix of a longer draw
equals a shorter draw from the same state.

Floats are made from the bits as torch does: the low 24 (float32), 11 (float16) or 53
(float64) bits times 2**-bits, uniform on [0, 1). Normals use Box-Muller on pairs (in
float32 arithmetic for float32 outputs, as torch's CPU kernel does).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ... import _threads

_M0 = np.uint64(0xD2511F53)
_M1 = np.uint64(0xCD9E8D57)
_W0 = np.uint64(0x9E3779B9)
_W1 = np.uint64(0xBB67AE85)
_LO = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_S11 = np.uint64(11)
_ONE = np.uint64(1)
_TWO_PI = 2.0 * math.pi
_M24 = np.uint64((1 << 24) - 1)
_F32_ONE = np.float32(1.0)
_F32_M2 = np.float32(-2.0)
_F32_2PI = np.float32(2.0 * math.pi)
_F32_2M24 = np.float32(1.0 / (1 << 24))

# Distribution codes of ``sample_float``.
UNIFORM, NORMAL, EXPONENTIAL, CAUCHY, LOG_NORMAL, GEOMETRIC, BERNOULLI = range(7)


@numba.njit(cache=True, nogil=True, inline="always")
def philox(c0, c1, c2, c3, k0, k1):
    """Philox4x32-10 of counter (c0..c3) under key (k0, k1); 32-bit words held in uint64."""
    for _ in range(10):
        p0 = _M0 * c0
        p1 = _M1 * c2
        c0, c1, c2, c3 = (p1 >> _S32) ^ c1 ^ k0, p1 & _LO, (p0 >> _S32) ^ c3 ^ k1, p0 & _LO
        k0 = (k0 + _W0) & _LO
        k1 = (k1 + _W1) & _LO
    return c0, c1, c2, c3


@numba.njit(cache=True, nogil=True, inline="always")
def _block(seed, ctr):
    z = np.uint64(0)
    return philox(ctr & _LO, ctr >> _S32, z, z, seed & _LO, seed >> _S32)


@numba.njit(cache=True, nogil=True, inline="always")
def _u53(hi, lo):
    """Uniform on [0, 1) from the low 53 bits of the 64-bit word (hi, lo)."""
    return np.float64(((hi << _S32) | lo) >> _S11) * 1.1102230246251565e-16


@numba.njit(cache=True, nogil=True)
def _transform(dist, u, a, b):
    """One sample of a single-draw distribution from ``u`` uniform on [0, 1)."""
    if dist == UNIFORM:
        return u * (b - a) + a
    if dist == EXPONENTIAL:
        return -1.0 / a * math.log1p(-u)
    if dist == CAUCHY:
        return a + b * math.tan(math.pi * (u - 0.5))
    if dist == GEOMETRIC:  # a = p; 1 - u is in (0, 1], so the result is >= 1
        return max(1.0, np.ceil(math.log1p(-u) / math.log1p(-a)))
    return 1.0 if u < a else 0.0  # BERNOULLI, a = p


@numba.njit(cache=True, nogil=True)
def _pair(dist, u0, u1, a, b):
    """Two samples from two uniforms; normals share one Box-Muller transform."""
    if dist == NORMAL or dist == LOG_NORMAL:
        r = math.sqrt(-2.0 * math.log1p(-u1))
        z0 = r * math.cos(_TWO_PI * u0) * b + a
        z1 = r * math.sin(_TWO_PI * u0) * b + a
        if dist == LOG_NORMAL:
            return math.exp(z0), math.exp(z1)
        return z0, z1
    return _transform(dist, u0, a, b), _transform(dist, u1, a, b)


@numba.njit(cache=True, nogil=True)
def _normal_pair32(x0, x1, dist, a, b):
    """Two normals in float32 arithmetic from 24-bit uniforms, as torch's CPU normal_fill."""
    u1 = _F32_ONE - np.float32(x0 & _M24) * _F32_2M24  # (0, 1]
    u2 = np.float32(x1 & _M24) * _F32_2M24
    r = math.sqrt(_F32_M2 * math.log(u1))
    th = _F32_2PI * u2
    z0 = np.float64(r * math.cos(th)) * b + a
    z1 = np.float64(r * math.sin(th)) * b + a
    if dist == LOG_NORMAL:
        return math.exp(z0), math.exp(z1)
    return z0, z1


@numba.njit(cache=True, nogil=True, inline="always")
def _float_block(out, blk, seed, offset, dist, a, b, bits):
    n = out.size
    x0, x1, x2, x3 = _block(seed, offset + np.uint64(blk))
    if bits > 32:
        i = 2 * blk
        v0, v1 = _pair(dist, _u53(x0, x1), _u53(x2, x3), a, b)
        out[i] = v0
        if i + 1 < n:
            out[i + 1] = v1
        return
    i = 4 * blk
    if dist == NORMAL or dist == LOG_NORMAL:  # float32 Box-Muller on 24-bit uniforms (torch's)
        v0, v1 = _normal_pair32(x0, x1, dist, a, b)
        v2, v3 = _normal_pair32(x2, x3, dist, a, b)
    else:
        mask = (_ONE << np.uint64(bits)) - _ONE
        s = 1.0 / (1 << bits)
        v0, v1 = _pair(dist, np.float64(x0 & mask) * s, np.float64(x1 & mask) * s, a, b)
        v2, v3 = _pair(dist, np.float64(x2 & mask) * s, np.float64(x3 & mask) * s, a, b)
    out[i] = v0
    if i + 1 < n:
        out[i + 1] = v1
    if i + 2 < n:
        out[i + 2] = v2
    if i + 3 < n:
        out[i + 3] = v3


@numba.njit(cache=True, nogil=True)
def _float_range(out, seed, offset, dist, a, b, bits, lo, hi):
    for blk in range(lo, hi):
        _float_block(out, blk, seed, offset, dist, a, b, bits)


@numba.njit(cache=True, nogil=True, parallel=True)
def _float_par(out, seed, offset, dist, a, b, bits, nblk, chunk):
    for c in numba.prange((nblk + chunk - 1) // chunk):
        _float_range(out, seed, offset, dist, a, b, bits, c * chunk, min(nblk, (c + 1) * chunk))


def _chunk(nblk: int) -> int:
    """Parallel loops hand each task a run of blocks (a few per thread, for balance)."""
    return max(1, -(-nblk // (4 * _threads.get_num_threads())))


def float_blocks(n: int, bits: int) -> int:
    return -(-n // (2 if bits > 32 else 4))


def sample_float(out: np.ndarray, seed: int, offset: int, dist: int, a: float, b: float,
                 bits: int, parallel: bool) -> None:
    """Fill the contiguous 1-D float32/float64 ``out``; uses ``float_blocks(n, bits)`` blocks."""
    args = (out, np.uint64(seed), np.uint64(offset), dist, float(a), float(b), bits)
    nblk = float_blocks(out.size, bits)
    if parallel:
        _float_par(*args, nblk, _chunk(nblk))
    else:
        _float_range(*args, 0, nblk)


# -- integers --------------------------------------------------------------------------------

@numba.njit(cache=True, nogil=True, inline="always")
def _int_block(out, blk, seed, offset, low, rng, wide):
    """``low + r % rng`` (wrapping; ``rng == 0`` means 2**64) from 64-bit or 32-bit words."""
    n = out.size
    x0, x1, x2, x3 = _block(seed, offset + np.uint64(blk))
    if wide:
        i = 2 * blk
        r0, r1 = (x0 << _S32) | x1, (x2 << _S32) | x3
        if rng != 0:
            r0, r1 = r0 % rng, r1 % rng
        out[i] = low + np.int64(r0)
        if i + 1 < n:
            out[i + 1] = low + np.int64(r1)
        return
    i = 4 * blk
    out[i] = low + np.int64(x0 % rng)
    if i + 1 < n:
        out[i + 1] = low + np.int64(x1 % rng)
    if i + 2 < n:
        out[i + 2] = low + np.int64(x2 % rng)
    if i + 3 < n:
        out[i + 3] = low + np.int64(x3 % rng)


@numba.njit(cache=True, nogil=True)
def _int_range(out, seed, offset, low, rng, wide, lo, hi):
    for blk in range(lo, hi):
        _int_block(out, blk, seed, offset, low, rng, wide)


@numba.njit(cache=True, nogil=True, parallel=True)
def _int_par(out, seed, offset, low, rng, wide, nblk, chunk):
    for c in numba.prange((nblk + chunk - 1) // chunk):
        _int_range(out, seed, offset, low, rng, wide, c * chunk, min(nblk, (c + 1) * chunk))


def int_wide(rng: int) -> bool:
    """torch draws 64 bits when the range does not fit in 32 bits."""
    return rng == 0 or rng >= 1 << 32


def int_blocks(n: int, rng: int) -> int:
    return -(-n // (2 if int_wide(rng) else 4))


def sample_int(out: np.ndarray, seed: int, offset: int, low: int, rng: int,
               parallel: bool) -> None:
    """Integers uniform on [low, low + rng) into the contiguous 1-D int64 ``out``
    (``rng == 0``: all of int64); uses ``int_blocks(n, rng)`` blocks."""
    args = (out, np.uint64(seed), np.uint64(offset), np.int64(low), np.uint64(rng), int_wide(rng))
    nblk = int_blocks(out.size, rng)
    if parallel:
        _int_par(*args, nblk, _chunk(nblk))
    else:
        _int_range(*args, 0, nblk)


@numba.njit(cache=True, nogil=True)
def _randperm(out, seed, offset):
    n = out.size
    for i in range(n):
        out[i] = i
    for i in range(0, n - 1, 2):  # Fisher-Yates; one block serves two steps
        x0, x1, x2, x3 = _block(seed, offset + np.uint64(i // 2))
        j = i + np.int64(((x0 << _S32) | x1) % np.uint64(n - i))
        out[i], out[j] = out[j], out[i]
        if i + 1 < n - 1:
            j = i + 1 + np.int64(((x2 << _S32) | x3) % np.uint64(n - i - 1))
            out[i + 1], out[j] = out[j], out[i + 1]


def randperm_blocks(n: int) -> int:
    return n // 2


def randperm(out: np.ndarray, seed: int, offset: int) -> None:
    """A uniform random permutation of 0..n-1 into int64 ``out`` (``randperm_blocks(n)``)."""
    _randperm(out, np.uint64(seed), np.uint64(offset))


# -- multinomial -----------------------------------------------------------------------------

@numba.njit(cache=True, nogil=True)
def _multinomial_row(p, out, r, k, replacement, seed, offset):
    """Sample row ``r``; returns 0, or 1 (inf/nan/negative) or 2 (sum <= 0) on bad input."""
    n = p.shape[1]
    cdf = np.empty(n, np.float64)
    total = 0.0
    last = -1
    for j in range(n):
        v = p[r, j]
        if not (v >= 0.0 and v < np.inf):
            return 1
        total += v
        cdf[j] = total
        if v > 0.0:
            last = j
    if not total > 0.0:
        return 2
    if replacement:
        base = offset + np.uint64(r) * np.uint64(k)
        for s in range(k):
            x0, x1, _, _ = _block(seed, base + np.uint64(s))
            t = _u53(x0, x1) * total
            lo, hi = 0, n
            while lo < hi:  # first j with cdf[j] > t
                mid = (lo + hi) // 2
                if cdf[mid] > t:
                    hi = mid
                else:
                    lo = mid + 1
            out[r, s] = lo if lo < n else last
        return 0
    # Without replacement: the k largest of p_j / E_j, E_j ~ Exp(1), in decreasing order
    # (successive draws proportional to the remaining weights).
    base = offset + np.uint64(r) * np.uint64(n)
    keys = np.empty(k, np.float64)
    idx = np.empty(k, np.int64)
    size = 0
    for j in range(n):
        x0, x1, _, _ = _block(seed, base + np.uint64(j))
        key = p[r, j] / -math.log1p(-_u53(x0, x1))
        if size < k:
            c = size
            size += 1
            while c > 0 and keys[(c - 1) // 2] > key:  # sift up (min-heap)
                keys[c], idx[c] = keys[(c - 1) // 2], idx[(c - 1) // 2]
                c = (c - 1) // 2
            keys[c], idx[c] = key, j
        elif key > keys[0]:
            _sift_down(keys, idx, 0, size, key, j)
    for end in range(size - 1, -1, -1):  # pop the minimum to the back: decreasing order
        out[r, end] = idx[0]
        _sift_down(keys, idx, 0, end, keys[end], idx[end])
    return 0


@numba.njit(cache=True, nogil=True, inline="always")
def _sift_down(keys, idx, c, size, key, j):
    while True:
        child = 2 * c + 1
        if child >= size:
            break
        if child + 1 < size and keys[child + 1] < keys[child]:
            child += 1
        if keys[child] >= key:
            break
        keys[c], idx[c] = keys[child], idx[child]
        c = child
    if c < size:
        keys[c], idx[c] = key, j


@numba.njit(cache=True, nogil=True)
def _multinomial_rows(p, out, k, replacement, seed, offset, lo, hi):
    """Rows lo..hi-1; returns the first error code (0 if none)."""
    code = 0
    for r in range(lo, hi):
        e = _multinomial_row(p, out, r, k, replacement, seed, offset)
        if e and not code:
            code = e
    return code


@numba.njit(cache=True, nogil=True, parallel=True)
def _multinomial_par(p, out, k, replacement, seed, offset, chunk):
    rows = p.shape[0]
    nchunk = (rows + chunk - 1) // chunk
    err = np.zeros(nchunk, np.int64)
    for c in numba.prange(nchunk):
        err[c] = _multinomial_rows(p, out, k, replacement, seed, offset, c * chunk,
                                   min(rows, (c + 1) * chunk))
    for c in range(nchunk):
        if err[c]:
            return err[c]
    return 0


def multinomial_blocks(rows: int, n: int, k: int, replacement: bool) -> int:
    return rows * (k if replacement else n)


def multinomial(p: np.ndarray, out: np.ndarray, k: int, replacement: bool, seed: int,
                offset: int, parallel: bool) -> int:
    """Sample ``k`` category indices per row of the C-contiguous float64 (rows, n) ``p``
    into int64 (rows, k) ``out``, using ``multinomial_blocks`` blocks. Returns 0, or the
    error code of the first bad row (1: inf/nan/negative entry, 2: sum <= 0)."""
    args = (p, out, k, bool(replacement), np.uint64(seed), np.uint64(offset))
    if parallel:
        return _multinomial_par(*args, max(1, -(-p.shape[0] // (4 * _threads.get_num_threads()))))
    return _multinomial_rows(*args, 0, p.shape[0])


# -- argument checks -------------------------------------------------------------------------

@numba.njit(cache=True, nogil=True)
def all_in_range(flat, lo, hi):
    """True if every element x of the 1-D ``flat`` has lo <= x <= hi (nan fails)."""
    for i in range(flat.size):
        x = flat[i]
        if not (x >= lo and x <= hi):
            return False
    return True
