"""CPU kernels of the sparse COO OpDefs (``defs/sparse.py``): ``(plan, *tensors) -> Tensor(s)``.

A sparse COO tensor is two dense tensors (int64 ``indices`` (sparse_dim, nnz), ``values``
(nnz, *dense_dims)); these kernels compute only on index structure and on the products:

* coalescing sorts the index columns (a stable counting sort per sparse dim, least
  significant first, or a merge sort where a dim is much longer than nnz) and numbers the runs
  of equal columns; the values are then summed per run by ``index_add`` (a registry op, so
  the gradient flows back to every duplicate);
* a coalesced 2-D tensor is read as CSR: row pointers counted once from its row indices;
* ``csr_mm`` (sparse @ dense) runs over row blocks of about equal nnz, in parallel when the
  work is large; ``csr_sddmm`` (the values' gradient: one dot product per stored entry) the
  same way; the dense operand's gradient is ``csr_mm`` of the transposed structure
  (``csr_transpose``: a counting sort by column);
* sparse @ sparse lists every product pair (Gustavson's row-wise walk with a marker per
  column) and the output slot each pair sums into, so the values are registry ops too.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from ... import _threads
from ... import dtypes as _dt
from ...tensor import Tensor
from ..jit import njit

_i64 = np.int64


def _t(a: np.ndarray, dtype=None) -> Tensor:
    return Tensor._make(a, None, dtype)


def _idx(t: Tensor) -> np.ndarray:
    a = t._a
    return a if a.dtype == _i64 else a.astype(_i64)


# -- coalesce --------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _sorted(idx) -> bool:
    """Whether the columns are in strictly increasing lexicographic order (coalesced)."""
    sd, n = idx.shape
    for p in range(1, n):
        cmp = 0
        for d in range(sd):
            a = idx[d, p - 1]
            b = idx[d, p]
            if a != b:
                cmp = 1 if a < b else -1
                break
        if cmp <= 0:
            return False
    return True


@njit(cache=True, nogil=True)
def _counting_pass(keys, perm, size):
    """``perm`` stably reordered by ``keys[perm]`` (keys in [0, size))."""
    n = perm.size
    count = np.zeros(size + 1, np.int64)
    for p in range(n):
        count[keys[perm[p]] + 1] += 1
    for k in range(size):
        count[k + 1] += count[k]
    out = np.empty(n, np.int64)
    for p in range(n):
        k = keys[perm[p]]
        out[count[k]] = perm[p]
        count[k] += 1
    return out


@njit(cache=True, nogil=True)
def _sort_order(idx, sizes):
    """The permutation that sorts the index columns lexicographically (stable)."""
    sd, n = idx.shape
    perm = np.arange(n)
    for d in range(sd - 1, -1, -1):
        keys = idx[d]
        if sizes[d] <= 4 * n + 1024:
            perm = _counting_pass(keys, perm, sizes[d])
        else:
            sub = np.empty(n, np.int64)
            for p in range(n):
                sub[p] = keys[perm[p]]
            perm = perm[np.argsort(sub, kind="mergesort")]
    return perm


@njit(cache=True, nogil=True)
def _coalesce(idx, sizes):
    """(unique columns in order, run number of each input column, sorting permutation)."""
    sd, n = idx.shape
    perm = np.arange(n) if _sorted(idx) else _sort_order(idx, sizes)
    seg = np.empty(n, np.int64)
    first = np.empty(n, np.int64)
    g = -1
    for j in range(n):
        p = perm[j]
        new = j == 0
        if not new:
            q = perm[j - 1]
            for d in range(sd):
                if idx[d, p] != idx[d, q]:
                    new = True
                    break
        if new:
            g += 1
            first[g] = p
        seg[p] = g
    out = np.empty((sd, g + 1), np.int64)
    for k in range(g + 1):
        for d in range(sd):
            out[d, k] = idx[d, first[k]]
    return out, seg, perm


def coalesce_cpu(plan, indices: Tensor) -> tuple:
    """(coalesced indices, run of each input entry, sorting permutation)."""
    out, seg, perm = _coalesce(_idx(indices), np.asarray(plan.kw["sizes"], _i64))
    return _t(out), _t(seg), _t(perm)


# -- CSR structure ---------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _rowptr(rows, nrows):
    ptr = np.zeros(nrows + 1, np.int64)
    for p in range(rows.size):
        ptr[rows[p] + 1] += 1
    for i in range(nrows):
        ptr[i + 1] += ptr[i]
    return ptr


def rowptr_cpu(plan, rows: Tensor) -> Tensor:
    return _t(_rowptr(_idx(rows), plan.kw["nrows"]))


@njit(cache=True, nogil=True)
def _transpose(ptr, col, ncols):
    """The CSR structure of the transpose: (row pointers, row of each entry, source entry)."""
    n = col.size
    tptr = np.zeros(ncols + 1, np.int64)
    for p in range(n):
        tptr[col[p] + 1] += 1
    for c in range(ncols):
        tptr[c + 1] += tptr[c]
    fill = tptr[:ncols].copy()
    trow = np.empty(n, np.int64)
    src = np.empty(n, np.int64)
    for i in range(ptr.size - 1):
        for p in range(ptr[i], ptr[i + 1]):
            c = col[p]
            q = fill[c]
            fill[c] = q + 1
            trow[q] = i
            src[q] = p
    return tptr, trow, src


def csr_transpose_cpu(plan, rowptr: Tensor, col: Tensor) -> tuple:
    tptr, trow, src = _transpose(_idx(rowptr), _idx(col), plan.kw["ncols"])
    return _t(tptr), _t(trow), _t(src)


# -- sparse @ dense and the values' gradient -------------------------------------------------

@njit(cache=True, nogil=True)
def _mm_rows(lo, hi, ptr, col, val, b, out):
    n = b.shape[1]
    for i in range(lo, hi):
        o = out[i]
        for j in range(n):
            o[j] = 0
        for p in range(ptr[i], ptr[i + 1]):
            v = val[p]
            r = b[col[p]]
            for j in range(n):
                o[j] += v * r[j]


@njit(cache=True, nogil=True)
def _mm(bounds, ptr, col, val, b, out):
    for t in range(bounds.size - 1):
        _mm_rows(bounds[t], bounds[t + 1], ptr, col, val, b, out)


@njit(cache=True, nogil=True, parallel=True)
def _mm_par(bounds, ptr, col, val, b, out):
    for t in prange(bounds.size - 1):
        _mm_rows(bounds[t], bounds[t + 1], ptr, col, val, b, out)


@njit(cache=True, nogil=True)
def _sddmm_rows(lo, hi, ptr, col, a, b, out):
    n = a.shape[1]
    for i in range(lo, hi):
        x = a[i]
        for p in range(ptr[i], ptr[i + 1]):
            y = b[col[p]]
            s = x[0] * 0 if n else out[p] * 0
            for j in range(n):
                s += x[j] * y[j]
            out[p] = s


@njit(cache=True, nogil=True)
def _sddmm(bounds, ptr, col, a, b, out):
    for t in range(bounds.size - 1):
        _sddmm_rows(bounds[t], bounds[t + 1], ptr, col, a, b, out)


@njit(cache=True, nogil=True, parallel=True)
def _sddmm_par(bounds, ptr, col, a, b, out):
    for t in prange(bounds.size - 1):
        _sddmm_rows(bounds[t], bounds[t + 1], ptr, col, a, b, out)


# An entry's multiply-add reads a random row of the dense operand: about four elementwise
# operations' worth of work, so the parallel build starts near a quarter of the grain.
_ENTRY_COST = 4


def _blocks(ptr: np.ndarray, work: int) -> tuple:
    """(row bounds of blocks of about equal nnz, parallel?) for ``work`` multiply-adds."""
    m = ptr.size - 1
    par = m > 1 and _threads.use_parallel(work * _ENTRY_COST)
    if not par:
        return np.array([0, m], _i64), False
    ntasks = min(m, 8 * numba.get_num_threads())
    nnz = int(ptr[-1])
    # rows cost their entries plus one (the zeroed output row)
    targets = np.linspace(0, nnz + m, ntasks + 1)[1:-1]
    cost = ptr + np.arange(m + 1, dtype=_i64)
    bounds = np.concatenate(([0], np.searchsorted(cost, targets), [m])).astype(_i64)
    return bounds, True


def _compute(d: _dt.dtype):
    """The NumPy dtype a product of ``d`` runs in (16-bit floats: float32, rounded once)."""
    return np.float32 if d in _dt.HALF else d.np


def csr_mm_cpu(plan, rowptr: Tensor, col: Tensor, values: Tensor, dense: Tensor) -> Tensor:
    """out[i] = sum over row i's entries p of values[p] * dense[col[p]]."""
    d = plan.out.dtype
    ct = _compute(d)
    ptr = _idx(rowptr)
    b = np.ascontiguousarray(dense._a, ct)
    val = np.ascontiguousarray(values._a, ct)
    out = np.empty((ptr.size - 1, b.shape[1]), ct)
    bounds, par = _blocks(ptr, val.size * b.shape[1])
    (_mm_par if par else _mm)(bounds, ptr, _idx(col), val, b, out)
    return _t(out.astype(d.np, copy=False), d)


def csr_sddmm_cpu(plan, rowptr: Tensor, col: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """out[p] = a[row(p)] . b[col[p]] for each stored entry p (row-major CSR order)."""
    d = plan.out.dtype
    ct = _compute(d)
    ptr = _idx(rowptr)
    x = np.ascontiguousarray(a._a, ct)
    y = np.ascontiguousarray(b._a, ct)
    out = np.empty(int(ptr[-1]), ct)
    bounds, par = _blocks(ptr, out.size * x.shape[1])
    (_sddmm_par if par else _sddmm)(bounds, ptr, _idx(col), x, y, out)
    return _t(out.astype(d.np, copy=False), d)


# -- sparse @ sparse -------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _spgemm(aptr, acol, bptr, bcol, ncols):
    """Every product pair (a entry, b entry) and the output entry it sums into; output
    columns sorted within each row (a coalesced result)."""
    m = aptr.size - 1
    mark = np.full(ncols, -1, np.int64)
    rowcnt = np.zeros(m + 1, np.int64)
    npairs = 0
    for i in range(m):
        for pa in range(aptr[i], aptr[i + 1]):
            k = acol[pa]
            npairs += bptr[k + 1] - bptr[k]
            for pb in range(bptr[k], bptr[k + 1]):
                j = bcol[pb]
                if mark[j] != i:
                    mark[j] = i
                    rowcnt[i + 1] += 1
    for i in range(m):
        rowcnt[i + 1] += rowcnt[i]
    nout = rowcnt[m]
    out = np.empty((2, nout), np.int64)
    ia = np.empty(npairs, np.int64)
    ib = np.empty(npairs, np.int64)
    seg = np.empty(npairs, np.int64)
    pos = np.empty(ncols, np.int64)
    mark[:] = -1
    q = 0
    for i in range(m):
        base = rowcnt[i]
        cnt = 0
        for pa in range(aptr[i], aptr[i + 1]):
            k = acol[pa]
            for pb in range(bptr[k], bptr[k + 1]):
                j = bcol[pb]
                if mark[j] != i:
                    mark[j] = i
                    out[1, base + cnt] = j
                    cnt += 1
        out[1, base:base + cnt].sort()
        for t in range(cnt):
            pos[out[1, base + t]] = base + t
            out[0, base + t] = i
        for pa in range(aptr[i], aptr[i + 1]):
            k = acol[pa]
            for pb in range(bptr[k], bptr[k + 1]):
                ia[q] = pa
                ib[q] = pb
                seg[q] = pos[bcol[pb]]
                q += 1
    return out, ia, ib, seg


def spgemm_cpu(plan, aptr: Tensor, acol: Tensor, bptr: Tensor, bcol: Tensor) -> tuple:
    out, ia, ib, seg = _spgemm(_idx(aptr), _idx(acol), _idx(bptr), _idx(bcol), plan.kw["ncols"])
    return _t(out), _t(ia), _t(ib), _t(seg)


# -- dense -> COO, intersection, index_select ------------------------------------------------

@njit(cache=True, nogil=True)
def _nonzero_rows(x, sizes):
    """(indices (sparse_dim, nnz), row of each entry) of the rows of ``x`` (R, C) holding a
    non-zero; a row's number unravels over ``sizes`` into its sparse index."""
    rows, cols = x.shape
    keep = np.zeros(rows, np.bool_)
    cnt = 0
    for r in range(rows):
        for c in range(cols):
            if x[r, c] != 0:
                keep[r] = True
                cnt += 1
                break
    sd = sizes.size
    idx = np.empty((sd, cnt), np.int64)
    lin = np.empty(cnt, np.int64)
    q = 0
    for r in range(rows):
        if keep[r]:
            lin[q] = r
            rem = r
            for d in range(sd - 1, -1, -1):
                idx[d, q] = rem % sizes[d]
                rem //= sizes[d]
            q += 1
    return idx, lin


def dense_nonzero_cpu(plan, x: Tensor) -> tuple:
    a = x._a
    if a.dtype == np.float16 or a.dtype == _dt.bfloat16.np:
        a = a.astype(np.float32)
    elif a.dtype == np.bool_:
        a = a.view(np.uint8)
    rows = a.shape[0]
    a = np.ascontiguousarray(a).reshape(rows, -1) if rows else a.reshape(0, 1)
    idx, lin = _nonzero_rows(a, np.asarray(plan.kw["sizes"], _i64))
    return _t(idx), _t(lin)


@njit(cache=True, nogil=True)
def _intersect(a, b):
    """Positions of the columns two coalesced index sets share (a merge walk)."""
    sd, na = a.shape
    nb = b.shape[1]
    ra = np.empty(min(na, nb), np.int64)
    rb = np.empty(min(na, nb), np.int64)
    p = q = k = 0
    while p < na and q < nb:
        cmp = 0
        for d in range(sd):
            x = a[d, p]
            y = b[d, q]
            if x != y:
                cmp = -1 if x < y else 1
                break
        if cmp == 0:
            ra[k] = p
            rb[k] = q
            k += 1
            p += 1
            q += 1
        elif cmp < 0:
            p += 1
        else:
            q += 1
    return ra[:k].copy(), rb[:k].copy()


def intersect_cpu(plan, a: Tensor, b: Tensor) -> tuple:
    ra, rb = _intersect(_idx(a), _idx(b))
    return _t(ra), _t(rb)


@njit(cache=True, nogil=True)
def _select(keys, size, index):
    """The entries whose key is ``index[t]``, for t in order (each key's entries in their
    stored order): (source entry, t) per output entry."""
    n = keys.size
    ptr = np.zeros(size + 1, np.int64)
    for p in range(n):
        ptr[keys[p] + 1] += 1
    for k in range(size):
        ptr[k + 1] += ptr[k]
    fill = ptr[:size].copy()
    order = np.empty(n, np.int64)
    for p in range(n):
        k = keys[p]
        order[fill[k]] = p
        fill[k] += 1
    total = 0
    for t in range(index.size):
        total += ptr[index[t] + 1] - ptr[index[t]]
    src = np.empty(total, np.int64)
    pos = np.empty(total, np.int64)
    q = 0
    for t in range(index.size):
        k = index[t]
        for p in range(ptr[k], ptr[k + 1]):
            src[q] = order[p]
            pos[q] = t
            q += 1
    return src, pos


def select_cpu(plan, keys: Tensor, index: Tensor) -> tuple:
    src, pos = _select(_idx(keys), plan.kw["size"], _idx(index))
    return _t(src), _t(pos)
