"""The binary-search kernel behind ``searchsorted``/``bucketize``/``isin`` (``defs/sort.py``'s
``searchsorted`` op): each value's insertion point in its row of the sorted sequence.

The search is torch's ``cus_lower_bound``/``cus_upper_bound`` step for step (``mid = lo +
((hi - lo) >> 1)``, ``!(s[mid] >= v)`` / ``!(s[mid] > v)`` moves right), so NaN goes last and
an unsorted row gives torch's answer too. Eager, traced and vmapped calls all run this one
kernel, so they agree on any input.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ... import _threads
from ... import dtypes as _dt
from ...tensor import Tensor
from ..jit import njit

_BF16 = _dt.bfloat16.np


@njit(inline="always")
def _one(seq, r, n, v, right):
    lo, hi = 0, n
    if right:
        while lo < hi:
            mid = lo + ((hi - lo) >> 1)
            if not (seq[r, mid] > v):
                lo = mid + 1
            else:
                hi = mid
    else:
        while lo < hi:
            mid = lo + ((hi - lo) >> 1)
            if not (seq[r, mid] >= v):
                lo = mid + 1
            else:
                hi = mid
    return lo


@njit(cache=True, nogil=True)
def _search(seq, vals, right, out):
    n, m = seq.shape[1], vals.shape[1]
    for r in range(vals.shape[0]):
        for j in range(m):
            out[r, j] = _one(seq, r, n, vals[r, j], right)


@njit(cache=True, nogil=True, parallel=True)
def _search_par(seq, vals, right, out):
    n, m = seq.shape[1], vals.shape[1]
    for k in prange(vals.shape[0] * m):
        r = np.int64(k) // m  # (prange's index is unsigned: divmod would mix to float)
        j = np.int64(k) - r * m
        out[r, j] = _one(seq, r, n, vals[r, j], right)


def _rows(a: np.ndarray, rows: int) -> np.ndarray:
    if a.dtype == np.float16 or a.dtype == _BF16:  # exact in float32: the same order
        a = a.astype(np.float32)
    return np.ascontiguousarray(a).reshape(rows, -1)


def searchsorted_cpu(plan, seq: Tensor, values: Tensor) -> Tensor:
    """(sorted sequence (..., n), values (..., m) of the same leading dims, or any shape for a
    1-D sequence) -> insertion points shaped like ``values``."""
    s, v = seq._a, values._a
    rows = 1 if s.ndim == 1 else int(np.prod(s.shape[:-1]))
    out = np.empty(v.shape, np.int32 if plan.kw["out_int32"] else np.int64)
    if out.size:
        s2, v2 = _rows(s, rows), _rows(v, rows)
        o2 = out.reshape(rows, -1)
        work = out.size * max(int(np.log2(s.shape[-1] + 1)), 1)
        (_search_par if _threads.use_parallel(work) else _search)(s2, v2, plan.kw["right"], o2)
    return Tensor._make(out, None, None)
