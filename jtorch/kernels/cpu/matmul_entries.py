"""CPU kernel entries of the contraction OpDefs: ``(plan, *tensors) -> Tensor(s)``.

Products run ``kernels/cpu/matmul.py`` on 3-D views (BLAS for float/complex, a compiled loop
for integers); float16 and bfloat16 have no BLAS: they compute in float32 and rounds once. ``cdist``'s
forward is a composition of jtorch ops (run here without recording: dispatch records the
``cdist`` node and its own gradient rule).
"""

from __future__ import annotations

import math

import numpy as np

from ... import _allocator, dispatch
from ... import dtypes as _dt
from ...tensor import Tensor
from . import matmul as _mk

_HALF = _dt.HALF
_F32 = np.dtype(np.float32)


def mm_cpu(plan, a: Tensor, b: Tensor) -> Tensor:
    """mm (2-D) and bmm (3-D): one ``bmm_into`` call on 3-D views into a fresh result."""
    a3, b3 = a._a, b._a
    if a3.ndim == 2:
        a3, b3 = a3[None], b3[None]
    d = a.dtype
    shape = (a3.shape[0], a3.shape[1], b3.shape[2])
    if d in _HALF:
        res = np.empty(shape, np.float32)
        _mk.bmm_into(a3.astype(np.float32), b3.astype(np.float32), res)
        r = _allocator.empty(plan.out.shape, d.np)
        r[...] = res.reshape(plan.out.shape)
    else:
        r = _allocator.empty(shape, d.np)
        _mk.bmm_into(a3, b3, r)
        r = r.reshape(plan.out.shape)
    return Tensor._make(r, None, d)


def batched_matmul_cpu(plan, a: Tensor, b: Tensor) -> Tensor:
    """matmul's batched products (``batched_into``) into a fresh C-contiguous result."""
    d = a.dtype
    shape = plan.out.shape
    if d in _HALF:
        res = np.empty(shape, np.float32)
        _mk.batched_into(a._a.astype(np.float32), b._a.astype(np.float32), res)
        r = _allocator.empty(shape, d.np)
        r[...] = res
    else:
        r = _allocator.empty(shape, d.np)
        _mk.batched_into(a._a, b._a, r)
    return Tensor._make(r, None, d)


def addmm_cpu(plan, c: Tensor, a: Tensor, b: Tensor) -> Tensor:
    """beta * c + alpha * (a @ b): the BLAS product, then the scaled sum as its epilogue."""
    beta, alpha = plan.kw["beta"], plan.kw["alpha"]
    d = b.dtype
    shape = plan.out.shape
    r = _allocator.empty(shape, d.np)
    if d in _HALF:
        res = np.empty(shape, _F32)
        _mk.addmm_into(c._a.astype(_F32), a._a.astype(_F32), b._a.astype(_F32), res, beta, alpha)
        r[...] = res
    else:
        _mk.addmm_into(c._a, a._a, b._a, r, beta, alpha)
    return Tensor._make(r, None, d)


def svdvals_cpu(plan, a: Tensor) -> tuple:
    """(S, U, Vh) of the thin SVD of each matrix (LAPACK through Numba)."""
    s_out, u_out, vh_out = plan.out
    m, n = a._a.shape[-2:]
    k = min(m, n)
    a3 = np.ascontiguousarray(a._a).reshape(math.prod(a._a.shape[:-2]), m, n)
    u = np.empty((a3.shape[0], m, k), a3.dtype)
    vh = np.empty((a3.shape[0], k, n), a3.dtype)
    s = np.empty((a3.shape[0], k), s_out.dtype.np)
    if a3.size:
        _mk.svd_batched(a3, u, s, vh)
    return (Tensor._make(s.reshape(s_out.shape), None, s_out.dtype),
            Tensor._make(u.reshape(u_out.shape), None, u_out.dtype),
            Tensor._make(vh.reshape(vh_out.shape), None, vh_out.dtype))


def cdist_cpu(plan, x1: Tensor, x2: Tensor) -> Tensor:
    """The p-norm distances as jtorch ops: torch's matrix-product form for p = 2 when it would
    use it (``use_mm``), else a broadcast difference and a norm."""
    from ...ops.linalg import matmul
    from ...ops.reduction import vector_norm
    from ...ops.views import cat

    p = plan.kw["p"]
    state = dispatch.grad_state
    prev, state.enabled = state.enabled, False
    try:
        if plan.kw["use_mm"]:  # torch's _euclidean_dist: one product of augmented rows
            n1 = x1.pow(2).sum(-1, keepdim=True)
            n2 = x2.pow(2).sum(-1, keepdim=True)
            a = cat([x1 * -2, n1, n1 * 0 + 1], -1)
            b = cat([x2, n2 * 0 + 1, n2], -1)
            out = matmul(a, b.mT).clamp_min(0).sqrt()
        else:
            diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
            out = (diff != 0).sum(-1).to(x1.dtype) if p == 0 else vector_norm(diff, p, -1)
    finally:
        state.enabled = prev
    return out.contiguous()
