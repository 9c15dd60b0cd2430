"""Distances: cdist, pairwise_distance, cosine_similarity, and linalg.matrix_norm.

``cdist`` is one OpDef whose forward is a composition (the matrix-product form for p = 2 when
torch would use it, else a broadcast difference and a norm) and whose gradient rule is
torch's: zero where a distance is zero, instead of the inf * 0 a composed sqrt would give.
"""

from __future__ import annotations

import math

from .. import dispatch
from ..autograd.grad_mode import no_grad
from ..kernels.registry import defvjp, extern
from ..shape import broadcast_shapes
from ..tensor import Tensor
from . import reduction as _red
from .linalg import matmul

__all__ = ["cdist", "cosine_similarity", "pairwise_distance"]

cdist_op = extern("cdist")  # (x1, x2) {"p"}


def _cdist_forward(x1: Tensor, x2: Tensor, p: float, use_mm: bool) -> Tensor:
    if use_mm:  # torch's _euclidean_dist: one product of augmented rows
        from .views import cat

        n1 = x1.pow(2).sum(-1, keepdim=True)
        n2 = x2.pow(2).sum(-1, keepdim=True)
        a = cat([x1 * -2, n1, n1 * 0 + 1], -1)
        b = cat([x2, n2 * 0 + 1, n2], -1)
        return matmul(a, b.mT).clamp_min(0).sqrt()
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if p == 0:
        return (diff != 0).sum(-1).to(x1.dtype)
    return _red.vector_norm(diff, p, -1)


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """p-norm distance between each pair of rows of ``x1`` (..., P, M) and ``x2`` (..., R, M).

    >>> jtorch.cdist(jtorch.zeros(2, 3), jtorch.ones(4, 3)).shape
    torch.Size([2, 4])
    """
    if x1.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.dim()}D")
    if x2.dim() < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.dim()}D")
    if x1._a.shape[-1] != x2._a.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1._a.shape[-1]} X2: {x2._a.shape[-1]}")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {dispatch.torch_name(x1.dtype)} but found "
                           f"{dispatch.torch_name(x2.dtype)}")
    if not x1.dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: "
                           f"{dispatch.torch_name(x1.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    modes = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
             "donot_use_mm_for_euclid_dist")
    if compute_mode not in modes:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    big = x1._a.shape[-2] > 25 or x2._a.shape[-2] > 25
    use_mm = p == 2 and (compute_mode == modes[1] or compute_mode == modes[0] and big)
    with no_grad():
        out = _cdist_forward(x1, x2, float(p), use_mm)
    return dispatch.record(cdist_op, (x1, x2), out, {"p": float(p)})


def _cdist_vjp(c, g):
    x1, x2 = c.args
    dist = c.out
    p = c.kw["p"]
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)           # (..., P, R, M)
    gd = g.unsqueeze(-1)
    if p == 0:
        grad = diff * 0
    elif p == 1:
        grad = gd * diff.sign()
    elif p == math.inf:
        grad = gd * diff.sign() * (diff.abs() == dist.unsqueeze(-1))
    else:
        dd = dist.unsqueeze(-1)
        safe = dd.masked_fill(dd == 0, 1)
        if p == 2:
            scale = diff / safe
        else:
            scale = diff * diff.abs().pow(p - 2) / safe.pow(p - 1)
            if p < 1:
                scale = scale.masked_fill(diff == 0, 0)
        grad = (gd * scale).masked_fill(dd == 0, 0)
    return (grad.sum(-2) if c.needs[0] else None, -grad.sum(-3) if c.needs[1] else None)


defvjp(cdist_op, _cdist_vjp, "01o")


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p over the last dim (broadcast)."""
    nd = max(x1.dim(), x2.dim())
    return _red.vector_norm(x1 - x2 + eps, p, -1 if nd else None, keepdim)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along ``dim`` (broadcast)."""
    shape = broadcast_shapes(x1._a.shape, x2._a.shape)
    x1, x2 = x1.expand(shape), x2.expand(shape)
    n1 = _red.vector_norm(x1, 2, dim, True).clamp_min(eps)
    n2 = _red.vector_norm(x2, 2, dim, True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)
