"""Index kernels: gather, scatter (copy / add / multiply / amax / amin), index offsets for
advanced indexing, and nonzero.

One gather and one scatter kernel serve the whole family. Over an N-d iteration shape,
each position reads an index ``v`` (int64) and moves an element between a strided operand
and the position with ``v * ds`` added (``ds``: the element stride of the indexed dim):
``gather`` (torch.gather, index_select, take, advanced indexing over precomputed offsets)
reads ``x[pos + v*ds]``; ``scatter`` (scatter, index_add/copy/fill, index_put) writes there.
Indices are checked inside the kernels: the first bad one is stored in ``err`` and the
Python caller raises torch's error. Operands are 1-D buffers with offsets and element
strides (see ``movement.buffer``); pure moves see dtypes as raw unsigned integers.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from .movement import row_copy, tasks, use_parallel

_i64 = np.int64


def _arr(x) -> np.ndarray:
    return np.asarray(x, _i64)


# -- gather ---------------------------------------------------------------------------------

@numba.njit(cache=True, nogil=True)
def _gather_task(t, nb, blk, shape, out, ooff, ostr, x, xoff, xstr, xds, idx, ioff, istr, size,
                 wrap, err):
    nd = shape.size - 1
    t = np.int64(t)  # prange indices may be unsigned
    row = t // nb
    lo = (t % nb) * blk
    hi = min(shape[nd], lo + blk)
    po = ooff
    px = xoff
    pi = ioff
    for d in range(nd - 1, -1, -1):
        q = row % shape[d]
        row //= shape[d]
        po += q * ostr[d]
        px += q * xstr[d]
        pi += q * istr[d]
    a = ostr[nd]
    b = xstr[nd]
    c = istr[nd]
    if c == 0:  # one index for the whole row (index_select, advanced indexing): a row copy
        v = idx[pi]
        if v < 0 and wrap:
            v += size
        if v < 0 or v >= size:
            err[0] = 1
            err[1] = idx[pi]
            return
        row_copy(out, po + lo * a, a, x, px + lo * b + v * xds, b, hi - lo)
        return
    for j in range(lo, hi):
        v = idx[pi + j * c]
        if v < 0 and wrap:
            v += size
        if v < 0 or v >= size:
            err[0] = 1
            err[1] = idx[pi + j * c]
            return
        out[po + j * a] = x[px + j * b + v * xds]


@numba.njit(cache=True, nogil=True)
def _gather(ntasks, nb, blk, shape, out, ooff, ostr, x, xoff, xstr, xds, idx, ioff, istr, size,
            wrap, err):
    for t in range(ntasks):
        _gather_task(t, nb, blk, shape, out, ooff, ostr, x, xoff, xstr, xds, idx, ioff, istr,
                     size, wrap, err)
        if err[0]:
            return


@numba.njit(cache=True, nogil=True, parallel=True)
def _gather_par(ntasks, nb, blk, shape, out, ooff, ostr, x, xoff, xstr, xds, idx, ioff, istr,
                size, wrap, err):
    for t in prange(ntasks):
        _gather_task(t, nb, blk, shape, out, ooff, ostr, x, xoff, xstr, xds, idx, ioff, istr,
                     size, wrap, err)


def gather(shape, out, ooff, ostr, x, xoff, xstr, xds, idx, ioff, istr, size, wrap) -> int | None:
    """out[p] = x[p.xstr + idx[p] * xds] over ``shape``; returns the first bad index or None."""
    err = np.zeros(2, _i64)
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return None
    if not shape:
        shape, ostr, xstr, istr = (1,), (0,), (0,), (0,)
    par = use_parallel(n)
    nt, nb, blk = tasks(shape, par)
    (_gather_par if par else _gather)(nt, nb, blk, _arr(shape), out, ooff, _arr(ostr), x, xoff,
                                      _arr(xstr), xds, idx, ioff, _arr(istr), size, wrap, err)
    return int(err[1]) if err[0] else None


# -- scatter --------------------------------------------------------------------------------

COPY, ADD, MUL, AMAX, AMIN = 0, 1, 2, 3, 4


@numba.njit(cache=True, nogil=True)
def _scatter_row(r, shape, doff, dstr, ioff, istr, soff, sstr):
    r = np.int64(r)  # a prange index may arrive unsigned; keep offset arithmetic in int64
    nd = shape.size - 1
    pd = doff
    pi = ioff
    ps = soff
    for d in range(nd - 1, -1, -1):
        q = r % shape[d]
        r //= shape[d]
        pd += q * dstr[d]
        pi += q * istr[d]
        ps += q * sstr[d]
    return pd, pi, ps


@numba.njit(cache=True, nogil=True)
def _check(v, size, wrap):
    if v < 0 and wrap:
        v += size
    return v, v < 0 or v >= size


@numba.njit(cache=True, nogil=True)
def _scatter_copy_row(r, shape, dst, doff, dstr, dds, idx, ioff, istr, src, soff, sstr, size,
                      wrap, err):
    nd = shape.size - 1
    a, b, c = dstr[nd], istr[nd], sstr[nd]
    pd, pi, ps = _scatter_row(r, shape, doff, dstr, ioff, istr, soff, sstr)
    if b == 0:  # one index for the row
        v, bad = _check(idx[pi], size, wrap)
        if bad:
            err[0] = 1
            err[1] = idx[pi]
            return
        row_copy(dst, pd + v * dds, a, src, ps, c, shape[nd])
        return
    for j in range(shape[nd]):
        v, bad = _check(idx[pi + j * b], size, wrap)
        if bad:
            err[0] = 1
            err[1] = idx[pi + j * b]
            return
        dst[pd + j * a + v * dds] = src[ps + j * c]


@numba.njit(cache=True, nogil=True)
def _scatter_copy(rows, shape, dst, doff, dstr, dds, idx, ioff, istr, src, soff, sstr, size,
                  wrap, err):
    for r in range(rows):
        _scatter_copy_row(r, shape, dst, doff, dstr, dds, idx, ioff, istr, src, soff, sstr,
                          size, wrap, err)
        if err[0]:
            return


@numba.njit(cache=True, nogil=True, parallel=True)
def _scatter_copy_par(rows, shape, dst, doff, dstr, dds, idx, ioff, istr, src, soff, sstr, size,
                      wrap, err):
    # Rows run concurrently: where two positions write one element, either value may win
    # (torch leaves duplicate indices of non-accumulating scatters undefined too).
    for r in prange(rows):
        _scatter_copy_row(r, shape, dst, doff, dstr, dds, idx, ioff, istr, src, soff, sstr,
                          size, wrap, err)


@numba.njit(cache=True, nogil=True)
def _reduce_into(dst, p, s, mode):
    if mode == 1:
        dst[p] += s
    elif mode == 2:
        dst[p] *= s
    elif mode == 3:
        if s > dst[p] or s != s:  # noqa: PLR0124  (nan wins)
            dst[p] = s
    elif s < dst[p] or s != s:  # noqa: PLR0124
        dst[p] = s


@numba.njit(cache=True, nogil=True)
def _scatter_reduce(rows, shape, dst, doff, dstr, dds, idx, ioff, istr, src, soff, sstr, size,
                    wrap, mode, err):
    # Serial: positions that share an index accumulate into one element.
    nd = shape.size - 1
    n = shape[nd]
    a, b, c = dstr[nd], istr[nd], sstr[nd]
    for r in range(rows):
        pd, pi, ps = _scatter_row(r, shape, doff, dstr, ioff, istr, soff, sstr)
        if b == 0 and mode == 1 and a == 1 and c == 1:  # index_add / index_put rows: vectorised
            v, bad = _check(idx[pi], size, wrap)
            if bad:
                err[0] = 1
                err[1] = idx[pi]
                return
            d = dst[pd + v * dds:pd + v * dds + n]
            s = src[ps:ps + n]
            for j in range(n):
                d[j] += s[j]
            continue
        for j in range(n):
            v, bad = _check(idx[pi + j * b], size, wrap)
            if bad:
                err[0] = 1
                err[1] = idx[pi + j * b]
                return
            _reduce_into(dst, pd + j * a + v * dds, src[ps + j * c], mode)


def scatter(shape, dst, doff, dstr, dds, idx, ioff, istr, src, soff, sstr, size, wrap,
            mode: int) -> int | None:
    """dst[p.dstr + idx[p] * dds] (op)= src[p.sstr] over ``shape``; first bad index or None.
    ``mode`` COPY moves raw bits; the reducing modes need real-dtype buffers (not float16)."""
    err = np.zeros(2, _i64)
    for s in shape:
        if s == 0:
            return None
    if not shape:
        shape, dstr, istr, sstr = (1,), (0,), (0,), (0,)
    rows = 1
    for s in shape[:-1]:
        rows *= s
    args = (rows, _arr(shape), dst, doff, _arr(dstr), dds, idx, ioff, _arr(istr), src, soff,
            _arr(sstr), size, wrap)
    if mode != COPY:
        _scatter_reduce(*args, mode, err)
    elif use_parallel(rows * shape[-1]) and rows > 1:
        _scatter_copy_par(*args, err)
    else:
        _scatter_copy(*args, err)
    return int(err[1]) if err[0] else None


# -- advanced-index offsets -----------------------------------------------------------------

@numba.njit(cache=True, nogil=True)
def _offsets_task(t, nb, blk, shape, idx, ioff, istr, size, stride, offs, err):
    nd = shape.size - 1
    t = np.int64(t)  # prange indices may be unsigned
    row = t // nb
    lin = row * shape[nd]
    lo = (t % nb) * blk
    hi = min(shape[nd], lo + blk)
    pi = ioff
    for d in range(nd - 1, -1, -1):
        q = row % shape[d]
        row //= shape[d]
        pi += q * istr[d]
    c = istr[nd]
    for j in range(lo, hi):
        v = idx[pi + j * c]
        if v < 0:
            v += size
        if v < 0 or v >= size:
            err[0] = 1
            err[1] = idx[pi + j * c]
            return
        offs[lin + j] += v * stride


@numba.njit(cache=True, nogil=True)
def _offsets(ntasks, nb, blk, shape, idx, ioff, istr, size, stride, offs, err):
    for t in range(ntasks):
        _offsets_task(t, nb, blk, shape, idx, ioff, istr, size, stride, offs, err)
        if err[0]:
            return


@numba.njit(cache=True, nogil=True, parallel=True)
def _offsets_par(ntasks, nb, blk, shape, idx, ioff, istr, size, stride, offs, err):
    for t in prange(ntasks):
        _offsets_task(t, nb, blk, shape, idx, ioff, istr, size, stride, offs, err)


def add_offsets(offs: np.ndarray, shape, idx, ioff, istr, size: int, stride: int) -> int | None:
    """offs (C-contiguous over ``shape``) += wrap(idx) * stride; first bad index or None."""
    err = np.zeros(2, _i64)
    if offs.size == 0:
        return None
    if not shape:
        shape, istr = (1,), (0,)
    par = use_parallel(offs.size)
    nt, nb, blk = tasks(shape, par)
    (_offsets_par if par else _offsets)(nt, nb, blk, _arr(shape), idx, ioff, _arr(istr), size,
                                        stride, offs.reshape(-1), err)
    return int(err[1]) if err[0] else None


# -- nonzero --------------------------------------------------------------------------------

@numba.njit(cache=True, nogil=True)
def _nz_row(t, nb, blk, shape, xoff, xstr, coords):
    nd = shape.size - 1
    t = np.int64(t)  # prange indices may be unsigned
    row = t // nb
    px = xoff
    for d in range(nd - 1, -1, -1):
        q = row % shape[d]
        row //= shape[d]
        coords[d] = q
        px += q * xstr[d]
    lo = (t % nb) * blk
    return px, lo, min(shape[nd], lo + blk)


@numba.njit(cache=True, nogil=True)
def _nz_count(t, nb, blk, shape, x, xoff, xstr):
    coords = np.empty(shape.size, np.int64)
    px, lo, hi = _nz_row(t, nb, blk, shape, xoff, xstr, coords)
    c = xstr[shape.size - 1]
    k = 0
    for j in range(lo, hi):
        if x[px + j * c] != 0:
            k += 1
    return k


@numba.njit(cache=True, nogil=True)
def _nz_fill(t, nb, blk, shape, x, xoff, xstr, out, total, k):
    nd = shape.size - 1
    coords = np.empty(shape.size, np.int64)
    px, lo, hi = _nz_row(t, nb, blk, shape, xoff, xstr, coords)
    c = xstr[nd]
    for j in range(lo, hi):
        if x[px + j * c] != 0:
            for d in range(nd):
                out[d * total + k] = coords[d]
            out[nd * total + k] = j
            k += 1


@numba.njit(cache=True, nogil=True)
def _prefix(counts):
    starts = np.empty(counts.size, np.int64)
    acc = 0
    for t in range(counts.size):
        starts[t] = acc
        acc += counts[t]
    return starts, acc


@numba.njit(cache=True, nogil=True)
def _nonzero(ntasks, nb, blk, shape, x, xoff, xstr):
    counts = np.empty(ntasks, np.int64)
    for t in range(ntasks):
        counts[t] = _nz_count(t, nb, blk, shape, x, xoff, xstr)
    starts, total = _prefix(counts)
    out = np.empty(shape.size * total, np.int64)
    for t in range(ntasks):
        _nz_fill(t, nb, blk, shape, x, xoff, xstr, out, total, starts[t])
    return out, total


@numba.njit(cache=True, nogil=True, parallel=True)
def _nonzero_par(ntasks, nb, blk, shape, x, xoff, xstr):
    counts = np.empty(ntasks, np.int64)
    for t in prange(ntasks):
        counts[t] = _nz_count(t, nb, blk, shape, x, xoff, xstr)
    starts, total = _prefix(counts)
    out = np.empty(shape.size * total, np.int64)
    for t in prange(ntasks):
        _nz_fill(t, nb, blk, shape, x, xoff, xstr, out, total, starts[t])
    return out, total


def nonzero(shape, x: np.ndarray, xstr) -> np.ndarray:
    """Coordinates of the non-zero elements of a raw uint8 (bool) buffer, as an
    (ndim, count) int64 array in C order of the positions (rank >= 1)."""
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return np.empty((len(shape), 0), _i64)
    par = use_parallel(n)
    nt, nb, blk = tasks(shape, par)
    flat, total = (_nonzero_par if par else _nonzero)(nt, nb, blk, _arr(shape), x, 0, _arr(xstr))
    return flat.reshape(len(shape), total)
