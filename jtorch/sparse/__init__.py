"""``torch.sparse``: sparse COO tensors and their products.

A sparse COO tensor (``jtorch.sparse_coo_tensor``, ``Tensor.to_sparse``) is a ``Tensor``
subclass holding two dense tensors: int64 ``indices`` (sparse_dim, nnz) and ``values``
(nnz, *dense_dims) (``_coo.py``). Every operation on it is registry ops on those two
(``_ops.py``; the sparse-specific kernels are OpDefs in ``kernels/defs/sparse.py``), so
gradients reach the values and the dense operands through the ordinary autograd engine.
Dense calls never check for sparse operands: a sparse tensor has no strided data, and the
error dense code gets reading it is caught by ``dispatch``, which hands the call here.

>>> import jtorch as torch
>>> a = torch.tensor([[0.0, 2.0], [3.0, 0.0]]).to_sparse()
>>> torch.sparse.mm(a, torch.ones(2, 1)).tolist()
[[2.0], [3.0]]
"""

from __future__ import annotations

from ..tensor import Tensor
from . import _ops
from ._coo import SparseTensor, dense_to_sparse, is_sparse, op_name_at, sparse_coo_tensor

__all__ = ["addmm", "log_softmax", "mm", "softmax", "sum"]

_ = (SparseTensor, dense_to_sparse, is_sparse, op_name_at, sparse_coo_tensor)


def mm(mat1: Tensor, mat2: Tensor, reduce: str | None = None) -> Tensor:
    """Matrix product with a sparse operand: sparse @ dense and dense @ sparse give dense
    results, sparse @ sparse a sparse one. The gradient of a sparse operand is its values'
    (on its own indices), as torch.sparse.mm's.

    >>> import jtorch as torch
    >>> torch.sparse.mm(torch.eye(2).to_sparse(), torch.ones(2, 2)).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    if reduce is not None:
        raise NotImplementedError("torch.sparse.mm: the reduce argument is not supported")
    return _ops.mm(mat1, mat2)


def addmm(mat: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1.0, alpha=1.0) -> Tensor:
    """beta * mat + alpha * (mat1 @ mat2), mat1 sparse.

    >>> import jtorch as torch
    >>> torch.sparse.addmm(torch.ones(2, 2), torch.eye(2).to_sparse(), torch.ones(2, 2)).tolist()
    [[2.0, 2.0], [2.0, 2.0]]
    """
    return _ops.addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input: Tensor, dim=None, dtype=None) -> Tensor:
    """Sum of a sparse tensor over every dim (a dense 0-d result) or over ``dim`` (sparse while
    a sparse dim remains).

    >>> import jtorch as torch
    >>> torch.sparse.sum(torch.eye(3).to_sparse())
    tensor(3.)
    """
    return _ops.sparse_sum(input, dim, dtype)


def softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Softmax of the stored values along ``dim`` (entries not stored count as -inf).

    >>> import jtorch as torch
    >>> torch.sparse.softmax(torch.eye(2).to_sparse(), 1).to_dense().tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return _ops.softmax(input, dim, dtype)


def log_softmax(input: Tensor, dim: int, *, dtype=None) -> Tensor:
    """Log-softmax of the stored values along ``dim`` (entries not stored count as -inf)."""
    return _ops.log_softmax(input, dim, dtype)


def spmm(input: Tensor, mat2: Tensor) -> Tensor:
    """``torch.spmm``: ``torch.mm`` (either operand may be sparse)."""
    return _ops.mm(input, mat2)
