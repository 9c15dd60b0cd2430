"""CPU kernel entries of the pooling OpDefs: ``(plan, *tensors) -> Tensor(s)``.

The kernels (``kernels/cpu/pooling.py``) run over C-contiguous (P, D, H, W) planes of the
last ``nd`` dims with the plan's windows (``kw["win"]``); float16 and bfloat16 compute in float32 and
rounds once.
"""

from __future__ import annotations

import math

import numpy as np

from ... import _allocator
from ... import dtypes as _dt
from ...tensor import Tensor
from . import pooling as _pk

_I64 = np.dtype(np.int64)
_F32 = np.dtype(np.float32)


def _compute(d: _dt.dtype) -> np.dtype:
    return _F32 if d in _dt.HALF else d.np


def _planes(a: np.ndarray, nd: int, ct: np.dtype) -> np.ndarray:
    """(P, D, H, W) C-contiguous planes of the last ``nd`` dims of ``a``, in dtype ``ct``."""
    sp = a.shape[a.ndim - nd:]
    return np.ascontiguousarray(a, dtype=ct).reshape(-1, *(1,) * (3 - nd), *sp)


def _wrap(r: np.ndarray, shape: tuple, d: _dt.dtype) -> Tensor:
    r = r.reshape(shape)
    if r.dtype != d.np:
        r = r.astype(d.np)
    return Tensor._make(r, None, d)


def max_pool_cpu(plan, x: Tensor) -> tuple:
    """(values, int64 flat indices) of the windows over the last ``nd`` dims of ``x``."""
    kw = plan.kw
    win = kw["win"]
    a = _planes(x._a, kw["nd"], _compute(x.dtype))
    out = _allocator.empty((a.shape[0], *win.out_size), a.dtype)
    idx = _allocator.empty((a.shape[0], *win.out_size), _I64)
    if out.size:
        _pk.max_pool(a, out, idx, win)
    shape = plan.out[0].shape
    return _wrap(out, shape, x.dtype), Tensor._make(idx.reshape(shape), None, _dt.int64)


def max_pool_backward_cpu(plan, g: Tensor, idx: Tensor) -> Tensor:
    """The input gradient: ``g`` scatter-added through ``idx`` into zeroed planes."""
    kw = plan.kw
    in_shape, nd = kw["shape"], kw["nd"]
    ct = _compute(g.dtype)
    n = math.prod(in_shape[len(in_shape) - nd:])
    p = math.prod(in_shape[:len(in_shape) - nd])
    gi = _allocator.empty((p, n), ct)
    if gi.size:
        m = g._a.size // p  # (outputs per plane; -1 cannot say it for an empty batch)
        g2 = np.ascontiguousarray(g._a, dtype=ct).reshape(p, m)
        i2 = np.ascontiguousarray(idx._a).reshape(p, m)
        _pk.max_pool_backward(g2, i2, gi)
    return _wrap(gi, in_shape, g.dtype)


def avg_pool_cpu(plan, x: Tensor) -> Tensor:
    kw = plan.kw
    win = kw["win"]
    a = _planes(x._a, kw["nd"], _compute(x.dtype))
    out = _allocator.empty((a.shape[0], *win.out_size), a.dtype)
    if out.size:
        _pk.avg_pool(a, out, win)
    return _wrap(out, plan.out.shape, x.dtype)


def avg_pool_backward_cpu(plan, g: Tensor) -> Tensor:
    """The input gradient: each output's gradient / its divisor over its window."""
    kw = plan.kw
    in_shape, nd = kw["shape"], kw["nd"]
    g4 = _planes(g._a, nd, _compute(g.dtype))
    sp = in_shape[len(in_shape) - nd:]
    gi = _allocator.empty((g4.shape[0], *(1,) * (3 - nd), *sp), g4.dtype)
    if gi.size:
        _pk.avg_pool_backward(g4, gi, kw["win"])
    return _wrap(gi, in_shape, g.dtype)


def unpool_cpu(plan, x: Tensor, idx: Tensor) -> Tensor:
    """Each value put at its flat index in zeroed planes; torch's error for an index outside
    its plane (the last one its serial loop meets)."""
    nd = plan.kw["nd"]
    shape = plan.out.shape
    a = x._a
    ct = _compute(x.dtype)
    p = math.prod(a.shape[:a.ndim - nd])
    size = shape[len(shape) - nd:]
    x2 = np.ascontiguousarray(a, dtype=ct).reshape(p, -1)
    i2 = np.ascontiguousarray(idx._a).reshape(p, -1)
    res = _allocator.empty((p, math.prod(size)), ct)
    if res.size or x2.size:
        bad = _pk.unpool(x2, i2, res)
        if bad != -1:
            raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                               f"{'x'.join(str(v) for v in size)})")
    return _wrap(res, shape, x.dtype)
