"""CPU kernel entries of the sort family: ``(plan, x) -> Tensor(s)``, called by
``dispatch.call``.

They run the kernels of ``kernels/cpu/sort.py`` (kept apart: editing that file would
invalidate its Numba disk cache) along the plan's dim of a strided ``(O, R, I)`` view. Sorted
values and indices of ``sort`` are laid out like the input (its rows are sorted over the
input seen in its memory order, so no copy is made), as torch gives them; the other results
are C-contiguous. float16 and bfloat16 sort in float32 and are rounded back (exactly: the values are
theirs).
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ...shape import iter_order, span
from ...tensor import Tensor
from . import half as _half
from . import reduce as _rk
from . import sort as _so

_float32 = _rk._float32
_int64 = _rk._int64
_I64 = _rk._I64


def _sortable(x: Tensor) -> tuple:
    """(array, compute dtype) for the sort kernels (16-bit floats sort in float32)."""
    if x.dtype in _dt.HALF:
        return _rk.as_float32(x._a), _float32
    return x._a, x.dtype


def _indices(a: np.ndarray) -> Tensor:
    return Tensor._make(a, None, _int64)


def sort_rows(x: Tensor, d: int, desc: bool, k0: int, k: int) -> tuple:
    """Sorted positions k0..k-1 along dim ``d`` (wrapped) as (values array, indices array)."""
    a, compute = _sortable(x)
    shape = a.shape
    oshape = list(shape)
    if shape:
        oshape[d] = k - k0
    vals = _rk._allocator.empty(tuple(oshape), compute.np)
    inds = _rk._allocator.empty(tuple(oshape), _I64)
    if vals.size and a.ndim and shape[d] == 1:
        # rows of one element (a size-1 dim): the values in place, index 0, where the row
        # sort paid a call per element
        np.copyto(vals, a)
        inds.fill(0)
    elif a.size and vals.size:
        a, (O, R, I, sO, sR, sI) = _rk.along(a, d if a.ndim else 0, compute)
        par = _rk.use_parallel(a.size) and O * I > 1
        if k * 32 <= R:  # a heap of the best k beats sorting the row
            fn = _so.select_p if par else _so.select_s
        else:
            fn = _so.sort_p if par else _so.sort_s
        fn(span(a), O, R, I, sO, sR, sI, vals.reshape(-1), inds.reshape(-1), desc, k0, k)
    return vals, inds


def _sort_like_input(x: Tensor, d: int, desc: bool) -> tuple:
    """Sorted (values, indices) arrays laid out like ``x``: the rows are sorted over ``x``
    seen in its memory order (``iter_order``, slowest dim first)."""
    a = x._a
    n = a.shape[d] if a.ndim else 1
    if a.flags.c_contiguous or a.ndim < 2:
        return sort_rows(x, d, desc, 0, n)
    phys = iter_order(a.shape, [[st // a.itemsize for st in a.strides]])[::-1]
    seen = Tensor._make(a.transpose(phys), x._st, x.dtype)
    vals, inds = sort_rows(seen, phys.index(d), desc, 0, n)
    back = [phys.index(k) for k in range(a.ndim)]
    return vals.transpose(back), inds.transpose(back)


def sort_cpu(plan, x: Tensor) -> tuple:
    kw = plan.kw
    vals, inds = _sort_like_input(x, kw["dim"], bool(kw["descending"]))
    return _half.result(vals, x.dtype), _indices(inds)


def argsort_cpu(plan, x: Tensor) -> Tensor:
    kw = plan.kw
    return _indices(_sort_like_input(x, kw["dim"], bool(kw["descending"]))[1])


def topk_cpu(plan, x: Tensor) -> tuple:
    kw = plan.kw
    vals, inds = sort_rows(x, kw["dim"], bool(kw["largest"]), 0, kw["k"])
    return _half.result(vals, x.dtype), _indices(inds)


def _squeeze(a: np.ndarray, shape: tuple) -> np.ndarray:
    return a if a.shape == shape else a.reshape(shape)


def kthvalue_cpu(plan, x: Tensor) -> tuple:
    kw = plan.kw
    k = kw["k"]
    vals, inds = sort_rows(x, kw["dim"], False, k - 1, k)
    shape = plan.out[0].shape
    return _half.result(_squeeze(vals, shape), x.dtype), _indices(_squeeze(inds, shape))


def median_cpu(ignore_nan: bool):
    """median / nanmedian: the lower median of each row (of all elements without a dim; nan
    for an empty input), with its index."""

    def run(plan, x: Tensor):
        a, compute = _sortable(x)
        d = plan.kw["dim"]
        if d is None:
            flat = _rk.contiguous(a, compute).reshape(-1)
            vals = _rk._allocator.empty((1,), compute.np)
            inds = _rk._allocator.empty((1,), _I64)
            if flat.size:
                _so.median_s(flat, 1, flat.size, 1, 0, 1, 0, vals, inds, ignore_nan)
            else:  # torch: nan (nan cast to the dtype: True, the lowest integer)
                vals[0] = np.nan if compute.category >= 2 else \
                    True if compute is _rk._bool else np.iinfo(compute.np).min
            return _half.result(vals.reshape(()), x.dtype)
        oshape = tuple(1 if k == d else n for k, n in enumerate(a.shape))
        vals = _rk._allocator.empty(oshape, compute.np)
        inds = _rk._allocator.empty(oshape, _I64)
        if vals.size:
            a, (O, R, I, sO, sR, sI) = _rk.along(a, d if a.ndim else 0, compute)
            fn = _so.median_p if _rk.use_parallel(a.size) and O * I > 1 else _so.median_s
            fn(span(a), O, R, I, sO, sR, sI, vals.reshape(-1), inds.reshape(-1), ignore_nan)
        shape = plan.out[0].shape
        return _half.result(_squeeze(vals, shape), x.dtype), _indices(_squeeze(inds, shape))

    return run


def mode_cpu(plan, x: Tensor) -> tuple:
    """mode: the most frequent value of each row (the smallest on ties) and the index of its
    last occurrence."""
    a, compute = _sortable(x)
    d = plan.kw["dim"]
    oshape = tuple(1 if k == d else n for k, n in enumerate(a.shape))
    vals = _rk._allocator.empty(oshape, compute.np)
    inds = _rk._allocator.empty(oshape, _I64)
    if vals.size:
        a, (O, R, I, sO, sR, sI) = _rk.along(a, d if a.ndim else 0, compute)
        _so.mode_s(span(a), O, R, I, sO, sR, sI, vals.reshape(-1), inds.reshape(-1))
    shape = plan.out[0].shape
    return _half.result(_squeeze(vals, shape), x.dtype), _indices(_squeeze(inds, shape))


# -- unique (data-dependent shapes: the plan has no result description) ---------------------

def _unique_result(x: Tensor, uniq, inv, cnt, m: int, kw: dict, inv_shape: tuple):
    vals = _half.result(uniq[:m], x.dtype)
    if not kw["return_inverse"] and not kw["return_counts"]:
        return vals
    res = [vals]
    if kw["return_inverse"]:
        res.append(_indices(inv.reshape(inv_shape)))
    if kw["return_counts"]:
        res.append(_indices(cnt[:m]))
    return tuple(res)


def unique_cpu(plan, x: Tensor):
    """unique over the flattened input: sorted unique values (torch's CPU kernel sorts even
    for ``sorted=False``), optional inverse indices and counts; slices along ``dim``."""
    kw = plan.kw
    if kw["dim"] is not None:
        return _unique_dim(x, kw, True)
    a, compute = _sortable(x)
    flat = _rk.contiguous(a, compute).reshape(-1)
    n = flat.size
    kv = np.empty(n, compute.np)
    ki = np.empty(n, np.int64)
    uniq = np.empty(n, compute.np)
    inv = np.empty(n, np.int64)
    cnt = np.empty(n, np.int64)
    m = 0
    if n:
        _so.argsort_flat(flat, kv, ki)
        m = _so.unique_sorted(kv, ki, uniq, inv, cnt)
    return _unique_result(x, uniq, inv, cnt, m, kw, a.shape)


def unique_consecutive_cpu(plan, x: Tensor):
    """unique_consecutive: collapse runs of equal neighbours (of the flattened input, or of
    slices along ``dim``)."""
    kw = plan.kw
    if kw["dim"] is not None:
        return _unique_dim(x, kw, False)
    a, compute = _sortable(x)
    flat = _rk.contiguous(a, compute).reshape(-1)
    n = flat.size
    uniq = np.empty(n, compute.np)
    inv = np.empty(n, np.int64)
    cnt = np.empty(n, np.int64)
    m = _so.unique_runs(flat, uniq, inv, cnt) if n else 0
    return _unique_result(x, uniq, inv, cnt, m, kw, a.shape)


def _unique_dim(x: Tensor, kw: dict, do_sort: bool):
    """Unique slices along ``dim``: sort the slices lexicographically (unless only
    consecutive duplicates collapse), then collapse runs."""
    a, compute = _sortable(x)
    d = kw["dim"]
    moved = np.moveaxis(a, d, 0)
    n = moved.shape[0] if moved.ndim else 1
    rows = _rk.contiguous(moved, compute).reshape(n, -1)
    order = np.empty(n, np.int64)
    starts = np.empty(n, np.int64)
    inv = np.empty(n, np.int64)
    cnt = np.empty(n, np.int64)
    m = _so.unique_rows(rows, order, starts, inv, cnt, do_sort) if n else 0
    picked = _rk._allocator.empty((m, rows.shape[1]), rows.dtype)
    if m:
        _so.take_rows(rows, order, starts[:m], picked)
    vals = np.moveaxis(picked.reshape((m,) + moved.shape[1:]), 0, d)
    out = [_half.result(_rk.contiguous(vals, compute), x.dtype)]
    if kw["return_inverse"]:
        out.append(_indices(inv))
    if kw["return_counts"]:
        out.append(_indices(cnt[:m]))
    return out[0] if len(out) == 1 else tuple(out)
