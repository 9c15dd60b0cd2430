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

from .._tensor_types import SPARSE as _LEGACY
from ..tensor import Tensor
from . import _ops
from ._coo import SparseTensor, dense_to_sparse, is_sparse, op_name_at, sparse_coo_tensor

__all__ = ["addmm", "log_softmax", "mm", "softmax", "sum"]

_ = (SparseTensor, dense_to_sparse, is_sparse, op_name_at, sparse_coo_tensor)

globals().update(_LEGACY)  # torch.sparse.FloatTensor, ...


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


def spdiags(diagonals: Tensor, offsets: Tensor, shape, layout=None) -> Tensor:
    """A sparse 2-d tensor with the rows of ``diagonals`` on the diagonals ``offsets``: row k
    gives its element ``c`` to position ``(c - offsets[k], c)`` (SciPy's convention), the
    diagonals in ``offsets``' order, uncoalesced, as torch's. As in torch, the values have no
    derivative.

    >>> import jtorch as torch
    >>> torch.sparse.spdiags(torch.arange(3.0), torch.tensor([1]), (3, 3)).to_dense().tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]
    """
    import numpy as np

    from .. import dtypes as _dt
    from ..ops.creation import tensor as _tensor
    from ..ops.misc_numeric import _NoDerivative

    if layout is not None and layout is not _dt.sparse_coo:  # (jtorch has no CSR/CSC layouts)
        name = "Strided" if layout is _dt.strided else str(layout)
        raise RuntimeError(f"Only output layouts (Sparse, SparseCsc, SparseCsr) are supported, "
                           f"got {name}")
    if offsets.dim() > 1:
        raise RuntimeError("Offsets must be scalar or vector")
    if len(shape) != 2:
        raise RuntimeError("Output shape must be 2d")
    if diagonals.dim() not in (1, 2):
        raise RuntimeError("Diagonals must be vector or matrix")
    diag = diagonals.unsqueeze(0) if diagonals.dim() == 1 else diagonals
    offs = offsets.reshape(-1)
    if diag.shape[0] != offs.shape[0]:
        raise RuntimeError(f"Number of diagonals ({diag.shape[0]}) does not match the number of "
                           f"offsets ({offs.shape[0]})")
    if offs.dtype is not _dt.int64:
        raise RuntimeError(f"Offset Tensor must have dtype Long but got {offs.dtype.scalar_name}")
    o = offs.numpy()
    if len(np.unique(o)) != len(o):
        raise RuntimeError("Offset tensor contains duplicate values")
    rows, cols = int(shape[0]), int(shape[1])
    length = diag.shape[1]
    # diagonal k holds columns max(0, o) .. min(cols, length, rows + o) - 1, at row c - o
    parts = [np.arange(max(0, k), max(max(0, k), min(cols, length, rows + k)), dtype=np.int64)
             for k in o.tolist()]
    col = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    which = np.repeat(np.arange(len(parts), dtype=np.int64), [len(p) for p in parts])
    row = col - (o[which] if len(o) else which)
    at = (_tensor(which), _tensor(col))
    values = _NoDerivative.apply("_spdiags", lambda d: d[at], diag) if diag.requires_grad \
        else diag[at]
    return sparse_coo_tensor(_tensor(np.stack([row, col])), values, (rows, cols),
                             is_coalesced=len(col) == 0)


class check_sparse_tensor_invariants:
    """torch's switch for checking the invariants of sparse tensors made by
    ``sparse_coo_tensor`` with ``check_invariants=None``: a context manager, a decorator, and
    the static ``is_enabled``/``enable``/``disable``. jtorch checks a COO tensor's indices
    against its size whatever the switch says (a wrong index cannot corrupt memory here)."""

    _enabled = False

    @staticmethod
    def is_enabled() -> bool:
        return check_sparse_tensor_invariants._enabled

    @staticmethod
    def enable() -> None:
        check_sparse_tensor_invariants._enabled = True

    @staticmethod
    def disable() -> None:
        check_sparse_tensor_invariants._enabled = False

    def __init__(self, enable: bool = True) -> None:
        self.state = enable
        self.saved_state: bool | None = None

    def __enter__(self):
        if self.saved_state is not None:
            raise RuntimeError("This context manager instance is already activated. "
                               "Use a different context manager instance for context nesting.")
        self.saved_state = self.is_enabled()
        check_sparse_tensor_invariants._enabled = self.state
        return self

    def __exit__(self, *exc) -> None:
        check_sparse_tensor_invariants._enabled = self.saved_state
        self.saved_state = None

    def __call__(self, mth):
        import functools

        @functools.wraps(mth)
        def wrapped(*args, **kwargs):
            with check_sparse_tensor_invariants(self.state):
                return mth(*args, **kwargs)

        return wrapped


_STRIDED = "__STRIDED_REPRESENTATION__"


def as_sparse_gradcheck(gradcheck):
    """``gradcheck`` extended to functions of and to sparse COO tensors: a sparse input that
    requires grad enters as its values (every element stored, unless ``masked=True``), and a
    sparse output leaves dense, so the check itself sees strided tensors only.

    >>> import jtorch as torch
    >>> check = torch.sparse.as_sparse_gradcheck(torch.autograd.gradcheck)
    >>> x = torch.tensor([[0.0, 1.0], [2.0, 0.0]], dtype=torch.float64).to_sparse()
    >>> check(lambda s: torch.sparse.sum(s * 3), x.requires_grad_())
    True
    """
    from ..ops.creation import ones

    def to_strided(args) -> tuple:
        out = []
        for x in args if isinstance(args, (list, tuple)) else (args,):
            if not (isinstance(x, SparseTensor) and x.requires_grad):
                out.append(x)
                continue
            if not masked[0]:  # every element stored: zeros get a derivative too
                full = ones(tuple(x.shape[:x.sparse_dim()])).nonzero().t()
                x = sparse_coo_tensor(full, x.detach().to_dense()[tuple(full)], x.shape,
                                      is_coalesced=True)
            spec = {"shape": tuple(x.shape), "indices": x._indices(),
                    "is_coalesced": x.is_coalesced()}
            out.extend((_STRIDED, spec, x._values().detach().requires_grad_(True)))
        return tuple(out)

    def restore(args) -> list:
        out, rest = [], list(args)
        while rest:
            a = rest.pop(0)
            if isinstance(a, str) and a == _STRIDED:
                spec, values = rest.pop(0), rest.pop(0)
                a = sparse_coo_tensor(spec["indices"], values, spec["shape"],
                                      is_coalesced=spec["is_coalesced"])
            out.append(a)
        return out

    masked = [False]

    def gradcheck_with_sparse_support(func, inputs, **kwargs):
        masked[0] = kwargs.pop("masked", False)

        def strided_func(*args, **kw):
            res = func(*restore(args), **kw)
            many = isinstance(res, (list, tuple))
            outs = tuple(o.to_dense() if isinstance(o, SparseTensor) and o.requires_grad else o
                         for o in (res if many else (res,)))
            return outs if many else outs[0]

        return gradcheck(strided_func, to_strided(inputs), **kwargs)

    return gradcheck_with_sparse_support


# -- the legacy sparse @ dense products with sparse results ----------------------------------

def _sparse_product_rows(name: str, mat1, mat2):
    """The coalesced sparse ``mat1``, its rows that hold entries (sorted), and their rows of
    ``mat1 @ mat2`` (dense), with torch's checks (``name``: the op of its messages)."""
    if isinstance(mat2, SparseTensor):
        raise RuntimeError(  # noqa: TRY004  (torch's type)
            f"{name}: expected 'mat2' to have strided layout, got 'mat2' with layout Sparse")
    if mat1.dim() != 2 or mat2.dim() != 2:
        raise RuntimeError(f"{name}: matrices expected, got {mat1.dim()}D and {mat2.dim()}D "
                           "tensors")
    if mat2.shape[0] != mat1.shape[1]:
        raise RuntimeError(f"{name}: Argument #3: Expected dim 0 size {mat1.shape[1]}, got "
                           f"{mat2.shape[0]}")
    if mat2.dtype is not mat1.dtype:
        raise RuntimeError(f"expected scalar type {mat1.dtype.scalar_name} but found "
                           f"{mat2.dtype.scalar_name}")
    m1 = mat1.coalesce()
    rows = m1._indices()[0].unique()
    return m1, rows, _ops.mm(m1, mat2).index_select(0, rows)


def _no_derivative(name: str, values: Tensor, *inputs) -> Tensor:
    """``values`` recorded as torch records them (no derivative) when an input requires
    grad."""
    from ..ops.misc_numeric import _NoDerivative

    needs = [x._values() if isinstance(x, SparseTensor) else x for x in inputs
             if getattr(x, "requires_grad", False)]
    if needs:  # the node hangs off the inputs that require grad
        return _NoDerivative.apply(name, lambda v, *_: v.clone(), values.detach(), *needs)
    return values


def sspaddmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1, out=None) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` as a sparse tensor, ``input`` and ``mat1``
    sparse: ``input``'s entries, then every column of each row of the product that ``mat1``
    has entries in (uncoalesced; no derivative, as torch).

    >>> import jtorch as torch
    >>> s = torch.eye(2).to_sparse()
    >>> torch.sspaddmm(s, s, torch.ones(2, 2)).to_dense().tolist()
    [[2.0, 1.0], [1.0, 2.0]]
    """
    from ..autograd.grad_mode import no_grad
    from ..ops.creation import arange
    from ..ops.views import cat, stack

    if not isinstance(input, SparseTensor) or not isinstance(mat1, SparseTensor):
        raise RuntimeError(  # noqa: TRY004  (torch's type)
            "tensor.sspaddmm(...) can only be called on sparse tensors")
    with no_grad():
        _, rows, prod = _sparse_product_rows("sspaddmm", mat1, mat2)
        for d, want in enumerate((mat1.shape[0], mat2.shape[1])):
            if input.dim() > d and input.shape[d] != want:
                raise RuntimeError(f"sspaddmm: Argument #1: Expected dim {d} size {want}, got "
                                   f"{input.shape[d]}")
        if input.dtype is not mat1.dtype:
            raise RuntimeError(f"dtype of values ({mat1.dtype.scalar_name}) must match dtype "
                               f"of sparse tensor ({input.dtype.scalar_name})")
        p = mat2.shape[1]
        at = stack([rows.repeat_interleave(p), arange(p).repeat(rows.shape[0])])
        idx = cat([input._indices(), at], 1)
        vals = cat([input._values() * beta, prod.reshape(-1) * alpha])
    res = sparse_coo_tensor(idx, _no_derivative("sspaddmm", vals, input, mat1, mat2),
                            (mat1.shape[0], p))
    return res if out is None else out.copy_(res)


def smm(input: Tensor, mat: Tensor) -> Tensor:
    """``input @ mat`` (``input`` sparse) as a sparse tensor: every column of each row that
    ``input`` has entries in (``sspaddmm`` of an empty sparse tensor)."""
    from ..ops.creation import zeros

    if not isinstance(input, SparseTensor):
        raise RuntimeError(  # noqa: TRY004  (torch's type)
            "tensor.sspaddmm(...) can only be called on sparse tensors")
    empty = sparse_coo_tensor(zeros((2, 0), dtype=_int64()), zeros(0, dtype=input.dtype),
                              (input.shape[0], mat.shape[1] if mat.dim() == 2 else 0))
    return sspaddmm(empty, input, mat)


def hspmm(mat1: Tensor, mat2: Tensor, *, out=None) -> Tensor:
    """``mat1 @ mat2`` (``mat1`` sparse) as a hybrid sparse tensor: one sparse dim (the rows
    ``mat1`` has entries in) over dense rows of the product (no derivative, as torch)."""
    from ..autograd.grad_mode import no_grad

    if not isinstance(mat1, SparseTensor):
        raise NotImplementedError("Could not run 'aten::hspmm' with arguments from the 'CPU' "
                                  "backend: it takes a sparse COO mat1")
    with no_grad():
        _, rows, prod = _sparse_product_rows("hspmm", mat1, mat2)
    res = sparse_coo_tensor(rows.unsqueeze(0), _no_derivative("hspmm", prod, mat1, mat2),
                            (mat1.shape[0], mat2.shape[1]))
    return res if out is None else out.copy_(res)


def dsmm(input: Tensor, mat2: Tensor) -> Tensor:
    """``input @ mat2`` with a dense result (``torch.mm`` with a sparse operand)."""
    return _ops.mm(input, mat2)


def _int64():
    from .. import dtypes as _dt

    return _dt.int64
