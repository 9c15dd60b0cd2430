"""``jtorch.linalg``: torch.linalg's names over the contraction and norm ops."""

from __future__ import annotations

from .ops.linalg import matmul, matrix_norm, multi_dot, norm, svdvals, vecdot  # noqa: F401
from .ops.reduction import vector_norm  # noqa: F401

__all__ = ["matmul", "matrix_norm", "multi_dot", "norm", "svdvals", "vecdot", "vector_norm"]
