"""Distances: cdist, pairwise_distance, cosine_similarity.

``cdist`` is one OpDef (``kernels/defs/linalg.py``) whose forward is a composition (the
matrix-product form for p = 2 when torch would use it, else a broadcast difference and a norm)
and whose gradient rule is torch's: zero where a distance is zero, instead of the inf * 0 a
composed sqrt would give. The other two are compositions of jtorch ops.
"""

from __future__ import annotations

from .. import dispatch
from ..amp import state as _amp
from ..kernels.defs import linalg as L
from ..shape import broadcast_shapes
from ..tensor import Tensor
from . import reduction as _red

__all__ = ["cdist", "cosine_similarity", "pairwise_distance"]


@_amp.fp32_op
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0,
          compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Tensor:
    """p-norm distance between each pair of rows of ``x1`` (..., P, M) and ``x2`` (..., R, M).

    >>> jtorch.cdist(jtorch.zeros(2, 3), jtorch.ones(4, 3)).shape
    torch.Size([2, 4])
    """
    return dispatch.call(L.cdist_op, x1, x2, p=p, compute_mode=compute_mode)


def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p over the last dim (broadcast)."""
    nd = max(x1.dim(), x2.dim())
    return _red.vector_norm(x1 - x2 + eps, p, -1 if nd else None, keepdim)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8, *,
                      axis=None) -> Tensor:
    """sum(x1 / max(||x1||, eps) * x2 / max(||x2||, eps)) along ``dim`` (broadcast)."""
    dim = dim if axis is None else axis
    shape = broadcast_shapes(x1._a.shape, x2._a.shape)
    x1, x2 = x1.expand(shape), x2.expand(shape)
    n1 = _red.vector_norm(x1, 2, dim, True).clamp_min(eps)
    n2 = _red.vector_norm(x2, 2, dim, True).clamp_min(eps)
    return ((x1 / n1) * (x2 / n2)).sum(dim)
