"""segment_reduce kernels: each segment of the reduced axis (rows ``offs[o, s]`` to
``offs[o, s + 1]`` of data viewed as (outer, n, inner)) reduced to one row, as ATen's
``_segment_reduce_cpu_kernel`` and its backward do (NaN-propagating max/min, ``initial``
folded into every segment, the mean of an empty segment NaN unless ``initial`` is given).

Reduce codes: 0 sum, 1 mean, 2 max, 3 min, 4 prod. Outer rows are independent: the parallel
variants run ``prange`` over them.
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ... import _threads
from ...tensor import Tensor
from ..jit import njit

CODES = {"sum": 0, "mean": 1, "max": 2, "min": 3, "prod": 4}
_COMPUTE = {np.dtype(np.float32), np.dtype(np.float64)}  # others are reduced in float32


def _reduce_row(x, offs, code, has_init, out, o):
    """out[o] for data row block ``o``; ``out`` arrives filled with the starting values.
    Returns 1 if a segment has a negative length."""
    n = x.shape[1]
    for s in range(offs.shape[1] - 1):
        lo, hi = offs[o, s], offs[o, s + 1]
        if hi < lo:
            return 1
        lo, hi = min(max(lo, 0), n), min(max(hi, 0), n)
        length = offs[o, s + 1] - offs[o, s]
        for i in range(x.shape[2]):
            acc = out[o, s, i]
            for j in range(lo, hi):
                v = x[o, j, i]
                if code == 2:
                    if math.isnan(v) or acc < v:
                        acc = v
                elif code == 3:
                    if math.isnan(v) or v < acc:
                        acc = v
                elif code == 4:
                    acc = acc * v
                else:
                    acc = acc + v
            out[o, s, i] = acc  # acc keeps the data's dtype (float32 sums as torch's)
            if code == 1:
                if length == 0 and not has_init:
                    out[o, s, i] = math.nan
                elif length > 0 and not math.isnan(acc):
                    out[o, s, i] = acc / length
    return 0


_reduce_row_j = njit(cache=True, nogil=True, inline="always")(_reduce_row)


@njit(cache=True, nogil=True)
def segment_reduce(x, offs, code, has_init, out):
    bad = 0
    for o in range(x.shape[0]):
        bad |= _reduce_row_j(x, offs, code, has_init, out, o)
    return bad


@njit(cache=True, nogil=True, parallel=True)
def segment_reduce_par(x, offs, code, has_init, out):
    bad = np.zeros(x.shape[0], np.int64)
    for o in prange(x.shape[0]):
        bad[o] = _reduce_row_j(x, offs, code, has_init, out, o)
    return bad.max()


def _grad_row(g, y, x, offs, code, init_prod, gi, o):
    """gi[o] (zeros on entry) for row block ``o``: torch's rules, including its division of
    only the positive gradients among tied maxima."""
    n = x.shape[1]
    for s in range(offs.shape[1] - 1):
        lo, hi = min(max(offs[o, s], 0), n), min(max(offs[o, s + 1], 0), n)
        length = offs[o, s + 1] - offs[o, s]
        if length <= 0:
            continue
        for i in range(x.shape[2]):
            gv = g[o, s, i]
            if code == 2 or code == 3:
                count = 0
                for j in range(lo, hi):
                    if math.isnan(x[o, j, i]) or x[o, j, i] == y[o, s, i]:
                        gi[o, j, i] = gv
                        count += 1
                if count >= 2:
                    for j in range(lo, hi):
                        if gi[o, j, i] > 0:
                            gi[o, j, i] = gi[o, j, i] / count
            elif code == 1:
                for j in range(lo, hi):
                    gi[o, j, i] = gv / length
            elif code == 0:
                for j in range(lo, hi):
                    gi[o, j, i] = gv
            else:
                gy = gv * y[o, s, i]
                for j in range(lo, hi):
                    v = x[o, j, i]
                    if math.isnan(v) or v == 0:  # the product of the others, computed
                        excl = init_prod
                        for k in range(lo, hi):
                            if k != j:
                                excl = excl * x[o, k, i]
                        gi[o, j, i] = gv * excl
                    else:
                        gi[o, j, i] = gy / v


_grad_row_j = njit(cache=True, nogil=True, inline="always")(_grad_row)


@njit(cache=True, nogil=True)
def segment_grad(g, y, x, offs, code, init_prod, gi):
    for o in range(x.shape[0]):
        _grad_row_j(g, y, x, offs, code, init_prod, gi, o)


@njit(cache=True, nogil=True, parallel=True)
def segment_grad_par(g, y, x, offs, code, init_prod, gi):
    for o in prange(x.shape[0]):
        _grad_row_j(g, y, x, offs, code, init_prod, gi, o)


# -- kernel entries (``defs/segment.py``): (plan, *tensors) -> Tensor ---------------------------

def _blocks(t: Tensor, axis: int, dtype) -> np.ndarray:
    """``t`` as a C-contiguous (outer, n, inner) array of ``dtype``."""
    a = t._a
    shape = a.shape
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    return np.ascontiguousarray(a, dtype).reshape(outer, shape[axis], inner)


def _offsets(seg: Tensor, kind: str) -> np.ndarray:
    """Each outer row's segment boundaries (outer, S + 1), int64, from lengths or offsets."""
    s = np.asarray(seg._a, np.int64)
    s = s.reshape(-1, s.shape[-1] if s.ndim else 1)
    if kind == "offsets":
        return np.ascontiguousarray(s)
    offs = np.zeros((s.shape[0], s.shape[1] + 1), np.int64)
    np.cumsum(s, axis=1, out=offs[:, 1:])
    return offs


def _compute_dtype(d: np.dtype) -> np.dtype:
    return d if d in _COMPUTE else np.dtype(np.float32)


def _start(code: int, initial) -> float:
    if initial is not None:
        return float(initial)
    return -math.inf if code == 2 else math.inf if code == 3 else 1.0 if code == 4 else 0.0


def segment_reduce_cpu(plan, data: Tensor, seg: Tensor) -> Tensor:
    kw = plan.kw
    axis, code = kw["axis"], CODES[kw["reduce"]]
    o = plan.out
    cd = _compute_dtype(o.dtype.np)
    x = _blocks(data, axis, cd)
    offs = _offsets(seg, kw["kind"])
    out = np.full((x.shape[0], offs.shape[1] - 1, x.shape[2]), _start(code, kw["initial"]), cd)
    fn = segment_reduce_par if _threads.use_parallel(x.size) else segment_reduce
    if fn(x, offs, code, kw["initial"] is not None, out):
        raise RuntimeError("Expected segment_length >= 0 to be true, but got false.  (Could this "
                           "error message be improved?  If so, please report an enhancement "
                           "request to PyTorch.)")
    return Tensor._make(out.reshape(o.shape).astype(o.dtype.np, copy=False), None, o.dtype)


def segment_reduce_backward_cpu(plan, grad: Tensor, output: Tensor, data: Tensor,
                                seg: Tensor) -> Tensor:
    kw = plan.kw
    axis, code = kw["axis"], CODES[kw["reduce"]]
    o = plan.out
    cd = _compute_dtype(o.dtype.np)
    x = _blocks(data, axis, cd)
    g, y = _blocks(grad, axis, cd), _blocks(output, axis, cd)
    offs = _offsets(seg, kw["kind"])
    gi = np.zeros(x.shape, cd)
    init_prod = 1.0 if kw["initial"] is None else float(kw["initial"])
    fn = segment_grad_par if _threads.use_parallel(x.size) else segment_grad
    fn(g, y, x, offs, code, init_prod, gi)
    return Tensor._make(gi.reshape(o.shape).astype(o.dtype.np, copy=False), None, o.dtype)
