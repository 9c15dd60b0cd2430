"""Copy kernels for movement ops (cat, stack, flip, roll, repeat, tril/triu).

Movement moves bits, so kernels see every dtype as the unsigned integer of its width
(``raw``): four specialisations serve all eleven dtypes, float16 included. Operands are
1-D storage buffers plus an element offset and signed element strides (negative strides
are how ``flip`` reads backwards), over an N-d iteration shape.

Work is split into tasks: a task is one block (at most ``blk`` elements) of one row of
the innermost dim. The serial kernel runs tasks in a loop, the parallel twin in a
``prange``; the Python launcher picks one with ``_threads.use_parallel`` (size and thread count).
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from ... import _threads

_RAW = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.complex128}
# A parallel task copies at most this many elements of one row.
BLOCK = 8192


def raw(a: np.ndarray) -> np.ndarray:
    """``a`` reinterpreted as the unsigned integer type of its width (no copy)."""
    return a.view(_RAW[a.itemsize])


def buffer(a: np.ndarray, as_raw: bool = True) -> tuple:
    """(1-D contiguous buffer starting at ``a``'s first element, element strides); the buffer
    is ``raw`` unless ``as_raw`` is False (arithmetic kernels need the real dtype)."""
    isz = a.itemsize
    strides = [s // isz for s in a.strides]
    if a.flags.c_contiguous:
        flat = a.reshape(-1)
    else:
        span = 1 + sum((n - 1) * s for n, s in zip(a.shape, strides)) if a.size else 0
        flat = np.lib.stride_tricks.as_strided(a, shape=(span,), strides=(isz,))
    return (raw(flat) if as_raw else flat), strides


def tasks(shape, parallel: bool) -> tuple:
    """(ntasks, blocks per row, block length) for an iteration shape (rank >= 1)."""
    n = shape[-1]
    rows = 1
    for s in shape[:-1]:
        rows *= s
    if n == 0 or rows == 0:
        return 0, 1, 1
    if not parallel:
        return rows, 1, n
    nb = -(-n // BLOCK)
    return rows * nb, nb, -(-n // nb)


def use_parallel(n: int) -> bool:
    return _threads.use_parallel(n)


# -- strided copy ---------------------------------------------------------------------------

@numba.njit(cache=True, nogil=True)
def row_copy(dst, pd, b, src, ps, a, n):
    """dst[pd + j*b] = src[ps + j*a] for j < n; unit strides take a vectorisable loop."""
    if a == 1 and b == 1:
        d = dst[pd:pd + n]
        s = src[ps:ps + n]
        for j in range(n):
            d[j] = s[j]
    else:
        for j in range(n):
            dst[pd + j * b] = src[ps + j * a]


@numba.njit(cache=True, nogil=True)
def _copy_task(t, nb, blk, shape, src, soff, sstr, dst, doff, dstr):
    nd = shape.size - 1
    t = np.int64(t)  # prange indices may be unsigned
    row = t // nb
    lo = (t % nb) * blk
    hi = min(shape[nd], lo + blk)
    ps = soff
    pd = doff
    for d in range(nd - 1, -1, -1):
        q = row % shape[d]
        row //= shape[d]
        ps += q * sstr[d]
        pd += q * dstr[d]
    a = sstr[nd]
    b = dstr[nd]
    row_copy(dst, pd + lo * b, b, src, ps + lo * a, a, hi - lo)


@numba.njit(cache=True, nogil=True)
def _copy(ntasks, nb, blk, shape, src, soff, sstr, dst, doff, dstr):
    for t in range(ntasks):
        _copy_task(t, nb, blk, shape, src, soff, sstr, dst, doff, dstr)


@numba.njit(cache=True, nogil=True, parallel=True)
def _copy_par(ntasks, nb, blk, shape, src, soff, sstr, dst, doff, dstr):
    for t in prange(ntasks):
        _copy_task(t, nb, blk, shape, src, soff, sstr, dst, doff, dstr)


def _coalesce(shape, strides: list) -> tuple:
    from ...dispatch import coalesce

    if not shape:
        return [1], [[0] for _ in strides]
    return coalesce(tuple(shape), strides)


def copy(shape, src: np.ndarray, soff: int, sstr, dst: np.ndarray, doff: int, dstr) -> None:
    """dst[doff + i.dstr] = src[soff + i.sstr] over ``shape`` (raw 1-D buffers, any strides)."""
    size = 1
    for s in shape:
        size *= s
    if size == 0:
        return
    cshape, (cs, cd) = _coalesce(shape, [list(sstr), list(dstr)])
    par = use_parallel(size)
    nt, nb, blk = tasks(cshape, par)
    (_copy_par if par else _copy)(nt, nb, blk, np.asarray(cshape, np.int64), src, soff,
                                  np.asarray(cs, np.int64), dst, doff, np.asarray(cd, np.int64))


def copy_array(dst: np.ndarray, src: np.ndarray) -> None:
    """dst[...] = src for same-dtype arrays of one shape (src may have 0 strides)."""
    sb, ss = buffer(src)
    db, ds = buffer(dst)
    copy(dst.shape, sb, 0, ss, db, 0, ds)


# -- tril / triu ----------------------------------------------------------------------------

@numba.njit(cache=True, nogil=True)
def _tri_task(t, nb, blk, shape, src, soff, sstr, dst, doff, dstr, k, upper):
    nd = shape.size - 1
    t = np.int64(t)  # prange indices may be unsigned
    row = t // nb
    lo = (t % nb) * blk
    hi = min(shape[nd], lo + blk)
    ps = soff
    pd = doff
    i = 0
    for d in range(nd - 1, -1, -1):
        q = row % shape[d]
        row //= shape[d]
        if d == nd - 1:
            i = q
        ps += q * sstr[d]
        pd += q * dstr[d]
    a = sstr[nd]
    b = dstr[nd]
    for j in range(lo, hi):
        if (j - i >= k) if upper else (j - i <= k):
            dst[pd + j * b] = src[ps + j * a]
        else:
            dst[pd + j * b] = 0


@numba.njit(cache=True, nogil=True)
def _tri(ntasks, nb, blk, shape, src, soff, sstr, dst, doff, dstr, k, upper):
    for t in range(ntasks):
        _tri_task(t, nb, blk, shape, src, soff, sstr, dst, doff, dstr, k, upper)


@numba.njit(cache=True, nogil=True, parallel=True)
def _tri_par(ntasks, nb, blk, shape, src, soff, sstr, dst, doff, dstr, k, upper):
    for t in prange(ntasks):
        _tri_task(t, nb, blk, shape, src, soff, sstr, dst, doff, dstr, k, upper)


def tri(dst: np.ndarray, src: np.ndarray, k: int, upper: bool) -> None:
    """dst = tril(src, k) (or triu): same shapes (rank >= 2), same dtype; dst may be src."""
    if dst.size == 0:
        return
    sb, ss = buffer(src)
    db, ds = buffer(dst)
    par = use_parallel(dst.size)
    nt, nb, blk = tasks(dst.shape, par)
    (_tri_par if par else _tri)(nt, nb, blk, np.asarray(dst.shape, np.int64), sb, 0,
                                np.asarray(ss, np.int64), db, 0, np.asarray(ds, np.int64),
                                int(k), bool(upper))
