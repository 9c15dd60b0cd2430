"""The sparse COO tensor: ``SparseTensor``, a ``Tensor`` whose data is two dense tensors.

``indices`` (int64, (sparse_dim, nnz)) and ``values`` ((nnz, *dense_dims)), plus the size and
a coalesced flag (indices sorted lexicographically, no column twice). Every operation maps to
registry ops on those two tensors, so gradients flow through ``values`` (and the dense
operands) with the ordinary autograd engine. It is a ``Tensor`` subclass, so
``isinstance(x, torch.Tensor)`` holds; its ``_a``/``_st`` (the strided array every dense
kernel reads) raise ``SparseOperandError``, which ``dispatch`` turns into a call of
``jtorch/sparse/_ops.py``: dense calls never check for sparse operands.

Autograd: a sparse tensor's own flags are its values' (``requires_grad``, ``grad_fn``); the
gradient of a leaf sparse tensor is its values' gradient over its own indices (always sparse;
torch gives a dense gradient through ``torch.mm``, equal on the stored entries).
"""

from __future__ import annotations

import math
import sys
import warnings

from .. import dispatch
from .. import dtypes as _dt
from ..device import CPU
from ..kernels.defs import sparse as K
from ..shape import Size, wrap_dim
from ..tensor import _NON_LEAF_GRAD, SparseOperandError, Tensor

_I64 = _dt.int64


def _dense_read(self):
    raise SparseOperandError(sys._getframe(1))


class SparseTensor(Tensor):
    """A sparse COO tensor (``layout == torch.sparse_coo``).

    >>> import jtorch as torch
    >>> s = torch.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2))
    >>> (s @ torch.ones(2, 1)).tolist()
    [[2.0], [3.0]]
    """

    __slots__ = ("_co", "_gcache", "_i", "_ptr", "_sz", "_v")

    is_sparse = True
    layout = _dt.sparse_coo
    # the strided data dense kernels read: none (dispatch routes the call to jtorch.sparse)
    _a = property(_dense_read)
    _st = property(_dense_read)

    # -- autograd: the values' ----------------------------------------------------------------
    @property
    def _requires_grad(self) -> bool:
        return self._v._requires_grad

    @property
    def grad_fn(self):
        return self._v.grad_fn

    def _sparse_grad(self):
        """The gradient as a sparse tensor of this one's size over its (coalesced) indices:
        every stored duplicate of a position has that position's gradient."""
        g = self._v._grad
        if g is None:
            return None
        c = self._gcache
        if c is None or c[0] is not g:
            if self._co or self._i._a.shape[1] < 2:
                grad = _new(self._i, g, self._sz, True)
            else:
                from ..ops.creation import zeros

                out, seg, _ = K.coalesce_op(self._i, sizes=self._sz[:self._i._a.shape[0]])
                vals = zeros((out._a.shape[1], *g._a.shape[1:]), dtype=g.dtype)
                grad = _new(out, vals.index_copy(0, seg, g), self._sz, True)
            c = self._gcache = (g, grad)
        return c[1]

    def _set_grad(self, g) -> None:
        if g is None:
            self._v._grad = None
            return
        if not isinstance(g, SparseTensor) or g._sz != self._sz:
            raise RuntimeError("assigned grad of a sparse tensor must be a sparse tensor of its "
                               "size")
        if g._i is not self._i:
            g = g.coalesce()
            mine = self.coalesce()
            if g._i._a.shape != mine._i._a.shape or not (g._i._a == mine._i._a).all():
                raise RuntimeError("assigned sparse grad must have the indices of the tensor")
        if not self._co:
            raise RuntimeError("assigning the grad of an uncoalesced sparse tensor is not "
                               "supported")
        self._v._grad = g._v

    _grad = property(_sparse_grad, _set_grad)

    @property
    def grad(self):
        if self._v.grad_fn is not None:
            warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=2)
            return None
        return self._sparse_grad()

    @grad.setter
    def grad(self, g) -> None:
        self._set_grad(g)

    def requires_grad_(self, requires_grad: bool = True) -> SparseTensor:
        v = self._v
        if v.grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(
                    "you can only change requires_grad flags of leaf variables. If you want to "
                    "use a computed variable in a subgraph that doesn't require differentiation "
                    "use var_no_grad = var.detach().")
            return self
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        if bool(requires_grad) != v._requires_grad:
            v = self._v = v.detach()  # the flag is this tensor's, not its source values'
            v._requires_grad = bool(requires_grad)
        return self

    def detach(self) -> SparseTensor:
        return _new(self._i, self._v.detach(), self._sz, self._co, self._ptr)

    def detach_(self) -> SparseTensor:
        self._v = self._v.detach()
        return self

    @property
    def data(self) -> SparseTensor:
        return self.detach()

    @data.setter
    def data(self, other) -> None:
        if not isinstance(other, SparseTensor):
            raise RuntimeError(  # noqa: TRY004  (torch's type)
                "Attempted to call `variable.set_data(tensor)`, but `variable` and "
                "`tensor` have incompatible tensor type.")
        self._assign(other.detach())

    # -- metadata -----------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._sz)

    def size(self, dim: int | None = None):
        if dim is None:
            return Size(self._sz)
        if not self._sz:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        return self._sz[wrap_dim(dim, len(self._sz))]

    def dim(self) -> int:
        return len(self._sz)

    ndim = property(dim)

    def ndimension(self) -> int:
        return len(self._sz)

    def numel(self) -> int:
        return math.prod(self._sz)

    nelement = numel

    def __len__(self) -> int:
        if not self._sz:
            raise TypeError("len() of a 0-d tensor")
        return self._sz[0]

    @property
    def device(self):
        return CPU

    @property
    def is_meta(self) -> bool:
        return False

    def sparse_dim(self) -> int:
        return self._i._a.shape[0]

    def dense_dim(self) -> int:
        return self._v._a.ndim - 1

    def _nnz(self) -> int:
        return self._i._a.shape[1]

    def is_coalesced(self) -> bool:
        return self._co

    def _coalesced_(self, coalesced: bool) -> SparseTensor:
        self._co = bool(coalesced)
        return self

    def stride(self, dim: int | None = None):
        st = (0,) * len(self._sz)  # torch reports zeros for a sparse layout
        return st if dim is None else st[wrap_dim(dim, len(self._sz))]

    def is_contiguous(self, memory_format=None) -> bool:
        return False

    def contiguous(self, memory_format=_dt.contiguous_format):
        raise RuntimeError("unsupported memory format option Contiguous")

    @property
    def nbytes(self) -> int:
        raise RuntimeError(
            "nbytes is not defined for sparse tensors.  If you want the size of the constituent "
            "tensors, add the nbytes of the indices and values.  If you want the size of the  "
            "equivalent dense tensor, multiply numel() by element_size()")

    def data_ptr(self) -> int:
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def storage_offset(self) -> int:
        raise RuntimeError("Cannot access storage of SparseTensorImpl")

    def untyped_storage(self):
        raise RuntimeError("Cannot access storage of SparseTensorImpl")

    def type(self, dtype=None, non_blocking: bool = False, **kwargs):
        if dtype is None:
            return f"torch.sparse.{self.dtype._legacy}"
        return super().type(dtype, non_blocking, **kwargs)

    # -- the two dense tensors ----------------------------------------------------------------
    def indices(self) -> Tensor:
        if not self._co:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._i

    def values(self) -> Tensor:
        if not self._co:
            raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._v

    def _indices(self) -> Tensor:
        return self._i

    def _values(self) -> Tensor:
        return self._v

    # -- conversions --------------------------------------------------------------------------
    def coalesce(self) -> SparseTensor:
        """Sorted indices, duplicates summed (the values' gradient reaches every duplicate)."""
        if self._co:
            return self
        i, v = self._i, self._v
        n = i._a.shape[1]
        if n < 2:
            return _new(i, v, self._sz, True)
        out, seg, perm = K.coalesce_op(i, sizes=self._sz[:i._a.shape[0]])
        m = out._a.shape[1]
        if m == n:  # no duplicates: a reordering
            vals = v.index_select(0, perm)
        else:
            from ..ops.creation import zeros

            vals = zeros((m, *v._a.shape[1:]), dtype=v.dtype).index_add(0, seg, v)
        return _new(out, vals, self._sz, True)

    def to_dense(self, dtype=None, *, masked_grad=None) -> Tensor:
        """The dense tensor (duplicates add up); differentiable in the values."""
        from ..ops.creation import zeros

        if dtype is not None:
            raise RuntimeError("dtype argument is not supported by sparse_to_dense")
        v = self._v
        sd = self.sparse_dim()
        if sd == 0:  # every entry is the whole (dense) tensor
            return v.sum(0, dtype=v.dtype) if v._a.shape[0] else zeros(self._sz, dtype=v.dtype)
        out = zeros(self._sz, dtype=v.dtype)
        return out.index_put(tuple(self._i[d] for d in range(sd)), v, accumulate=True)

    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None,
                  dense_dim=None) -> SparseTensor:
        _check_coo_layout(layout, blocksize)
        sd = self.sparse_dim()
        want = sparse_dim if sparse_dim is not None else \
            (self.dim() - dense_dim if dense_dim is not None else sd)
        if want != sd:
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with sparse_dim "
                               "argument !=self.sparse_dim() is not supported")
        return self

    def to_sparse_coo(self) -> SparseTensor:
        return self

    def detach_copy(self) -> SparseTensor:
        return self.detach().clone()

    def t_(self) -> SparseTensor:
        from . import _ops

        dispatch.check_inplace(self)
        self._assign(_ops.t(self))
        return self

    def transpose_(self, dim0: int, dim1: int) -> SparseTensor:
        from . import _ops

        dispatch.check_inplace(self)
        self._assign(_ops.transpose(self, dim0, dim1))
        return self

    def zero_(self) -> SparseTensor:
        dispatch.check_inplace(self)
        v = self._v
        self._assign(_new(self._i[:, :0].contiguous(), v[:0].detach() if v.grad_fn is None else
                          v[:0], self._sz, True))
        return self

    def new_zeros(self, *size, dtype=None, device=None, requires_grad: bool = False,
                  layout=None, pin_memory: bool = False) -> SparseTensor:
        """An all-zero sparse tensor (no stored entry) of ``size``, as torch's."""
        from ..ops.creation import zeros

        size = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else size
        d = self.dtype if dtype is None else dtype
        out = _new(zeros((len(size), 0), dtype=_I64), zeros((0,), dtype=d), size, True)
        return out.requires_grad_() if requires_grad else out

    new_empty = new_zeros

    def _no_fill(self, *args, **kwargs):
        raise not_supported("fill_")

    new_ones = new_full = fill_ = _no_fill

    def reshape(self, *shape):
        raise RuntimeError("reshape is not implemented for sparse tensors")

    def flatten(self, start_dim: int = 0, end_dim: int = -1):
        raise RuntimeError("reshape is not implemented for sparse tensors")

    @property
    def T(self) -> SparseTensor:
        return self.permute(*reversed(range(self.dim())))

    @property
    def mT(self) -> SparseTensor:
        if self.dim() < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {self.dim()}-D tensor.")
        return self.transpose(-2, -1)

    @property
    def H(self) -> SparseTensor:
        h = self.transpose(0, 1) if self.dim() == 2 else self.T
        return h.conj() if self.dtype.is_complex else h

    mH = mT

    def _rowptr(self) -> Tensor:
        """CSR row pointers of a coalesced 2-D tensor (counted once, kept)."""
        p = self._ptr
        if p is None:
            p = self._ptr = K.rowptr_op(self._i[0], nrows=self._sz[0])
        return p

    def _assign(self, other: SparseTensor) -> None:
        """Take ``other``'s contents (in-place ops on the sparse container)."""
        self._i, self._v, self._sz, self._co = other._i, other._v, other._sz, other._co
        self._ptr, self._gcache = other._ptr, None
        self.dtype = other._v.dtype
        self._vc[0] += 1

    # -- Python protocol ----------------------------------------------------------------------
    def item(self):
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to "
                               "Scalar")
        return self.to_dense().item()

    def tolist(self):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage")

    def numpy(self, *, force: bool = False):
        raise TypeError("can't convert Sparse layout tensor to numpy. Use Tensor.to_dense() "
                        "first.")

    def __array__(self, dtype=None, copy=None):
        return self.numpy()

    def _scalar(self, what: str = "Tensor.item()"):
        n = self.numel()
        if n != 1 and what == "bool(Tensor)":
            raise RuntimeError(f"Boolean value of Tensor with "
                               f"{'no values' if n == 0 else 'more than one value'} is ambiguous")
        if n != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        return self.to_dense().item()

    def __bool__(self) -> bool:
        return bool(self._scalar("bool(Tensor)"))

    def __iter__(self):
        raise NotImplementedError("iterating over a sparse tensor is not supported")

    def __repr__(self, *, tensor_contents=None) -> str:
        return _format(self)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def __reduce_ex__(self, proto):
        return (_rebuild, (self._i.detach(), self._v.detach(), self._sz, self._co,
                           self._requires_grad and self.grad_fn is None))

    def __deepcopy__(self, memo):
        out = _new(self._i.clone(), self._v.detach().clone(), self._sz, self._co)
        if self._requires_grad:
            out.requires_grad_()
        memo[id(self)] = out
        return out


def _new(indices: Tensor, values: Tensor, size: tuple, coalesced: bool,
         ptr: Tensor | None = None) -> SparseTensor:
    """A sparse tensor over ``indices`` (int64, (sparse_dim, nnz), C-contiguous) and ``values``
    (no checks: the callers made them consistent)."""
    t = object.__new__(SparseTensor)
    t._i, t._v, t._sz, t._co = indices, values, tuple(size), bool(coalesced)
    t._ptr = ptr if coalesced else None
    t._gcache = None
    t.dtype = values.dtype
    t._base = None
    t._vc = [0]
    t._retains_grad = False
    t._hooks = None
    t._output_nr = 0
    return t


def _rebuild(indices, values, size, coalesced, requires_grad):
    t = _new(indices, values, size, coalesced)
    return t.requires_grad_() if requires_grad else t


def is_sparse(x) -> bool:
    return isinstance(x, SparseTensor)


def op_name_at(frame) -> str:
    """The op whose dense code read a sparse tensor's data: the OpDef in a jtorch frame's
    ``op`` local, else the outermost jtorch function called (for the error message)."""
    from ..kernels.registry import OpDef

    outer = "unknown"
    f = frame
    while f is not None and f.f_globals.get("__name__", "").startswith("jtorch"):
        op = f.f_locals.get("op")
        if isinstance(op, OpDef):
            return op.name
        outer = f.f_code.co_name
        f = f.f_back
    return outer.lstrip("_")


def not_supported(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the 'SparseCPU' backend. This could "
        "be because the operator doesn't exist for this backend, or was omitted during the "
        "selective/custom build process (if using custom build).")


# -- construction -----------------------------------------------------------------------------

def _as_index_tensor(indices) -> Tensor:
    from ..ops.creation import tensor

    if isinstance(indices, SparseTensor):
        raise TypeError("sparse_coo_tensor(): argument 'indices' must be a dense tensor")
    i = indices if isinstance(indices, Tensor) else tensor(indices)
    if i.dtype is not _I64:
        i = i.to(_I64)
    return i.detach().contiguous()


def _check_bounds(i: Tensor, size: tuple) -> None:
    """torch's invariant checks (it runs them only with ``check_invariants``; an index out of
    bounds is an error here always: the kernels index with them)."""
    sd, nnz = i._a.shape
    if not nnz or not sd:
        return
    lo, hi = i.amin(1).tolist(), i.amax(1).tolist()
    for d in range(sd):
        if lo[d] < 0:
            raise RuntimeError(f"found negative index {lo[d]} for dim {d}")
        if hi[d] >= size[d]:
            raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                               f"{size[d]} but found index {hi[d]}")


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      pin_memory: bool = False, requires_grad: bool = False,
                      check_invariants=None, is_coalesced=None) -> SparseTensor:
    """A sparse COO tensor from its indices (sparse_dim, nnz) and values (nnz, *dense_dims).

    The values are kept as given (no copy; a dtype conversion makes one), so gradients reach a
    values tensor that requires grad. Indices out of ``size`` raise (torch checks them only
    with ``check_invariants=True``).

    >>> import jtorch as torch
    >>> torch.sparse_coo_tensor([[0, 2]], [1.0, 5.0], (3,)).to_dense()
    tensor([1., 0., 5.])
    """
    from ..ops.conversion import to_device
    from ..ops.creation import tensor

    if device is not None and to_device(device) != CPU:
        raise not_supported("_sparse_coo_tensor_with_dims_and_tensors")
    i = _as_index_tensor(indices)
    if isinstance(values, SparseTensor):
        raise TypeError("sparse_coo_tensor(): argument 'values' must be a dense tensor")
    v = values if isinstance(values, Tensor) else tensor(values, dtype=dtype)
    if dtype is not None and v.dtype is not _dt.to_dtype(dtype):
        v = v.to(dtype)
    if i._a.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: {list(i._a.shape)}")
    if v._a.ndim == 0:
        raise RuntimeError("values must be at least 1-dimensional (nnz, *dense_dims)")
    sd, nnz = i._a.shape
    if v._a.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {v._a.shape[0]}")
    dense = tuple(v._a.shape[1:])
    if size is None:
        sizes = tuple(int(m) + 1 for m in i.amax(1).tolist()) if nnz else (0,) * sd
        size = sizes + dense
    else:
        size = tuple(int(s) for s in size)
        if len(size) != sd + len(dense):
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                               f"len(size) = {len(size)}, sparse_dim = {sd}, dense_dim = "
                               f"{len(dense)}")
        if size[sd:] != dense:
            raise RuntimeError(f"values has incorrect size, expected {[nnz, *size[sd:]]}, got "
                               f"{list(v._a.shape)}")
    _check_bounds(i, size)
    if requires_grad:
        if not (v.dtype.is_floating_point or v.dtype.is_complex):
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        v = v.detach()
        v._requires_grad = True
    elif v._requires_grad and dispatch.grad_state.enabled:
        v = v.view_as(v)  # a view of the values: the sparse tensor is not a leaf, as in torch
    return _new(i, v, size, bool(is_coalesced) if is_coalesced is not None else nnz < 2)


def _check_coo_layout(layout, blocksize) -> None:
    if layout is not None and layout is not _dt.sparse_coo:
        raise NotImplementedError(f"to_sparse: conversion to {layout} is not supported (only "
                                  "torch.sparse_coo)")
    if blocksize is not None:
        raise RuntimeError("to_sparse for Strided to SparseCoo conversion does not use specified "
                           "blocksize")


def dense_to_sparse(x: Tensor, sparse_dim=None, *, layout=None, blocksize=None,
                    dense_dim=None) -> SparseTensor:
    """``Tensor.to_sparse``: the non-zero entries (over the first ``sparse_dim`` dims: a
    stored entry is a non-zero dense slice), coalesced; the values are gathered from ``x``
    (differentiable)."""
    if isinstance(x, SparseTensor):
        return x.to_sparse(sparse_dim, layout=layout, blocksize=blocksize, dense_dim=dense_dim)
    _check_coo_layout(layout, blocksize)
    shape = tuple(x.shape)
    nd = len(shape)
    if sparse_dim is None:
        sparse_dim = nd if dense_dim is None else nd - dense_dim
    if not 0 <= sparse_dim <= nd:
        raise RuntimeError(f"dense_to_sparse: sparse_dim argument must be in [0,{nd}] range, "
                           f"but {sparse_dim} is given")
    if sparse_dim == 0 and nd:
        raise RuntimeError("dense_to_sparse: sparse_dim argument must be in >0 when self.dim()>0")
    flat = x.reshape(math.prod(shape[:sparse_dim]), *shape[sparse_dim:])
    indices, rows = K.dense_nonzero_op(flat, sizes=shape[:sparse_dim])
    return _new(indices, flat.index_select(0, rows), shape, True)


# -- printing ---------------------------------------------------------------------------------

def _format(t: SparseTensor) -> str:
    """torch's repr of a sparse COO tensor: indices and values, then size, nnz, dtype,
    layout and the autograd suffix, each suffix on its own line once the first wraps."""
    from .._tensor_str import _add_suffixes, tensor_str

    indent = len("tensor(")
    i, v = t._i._a, t._v.detach()._a
    name = t.dtype.name
    default = _dt.get_default_dtype().name
    default_complex = "complex128" if default == "float64" else "complex64"
    suffixes = [f"size={tuple(t._sz)}", f"nnz={i.shape[1]}"]
    if name not in (default, default_complex, "int64", "bool"):
        suffixes.append(f"dtype=torch.{name}")
    istr = tensor_str(i, "int64", indent + len("indices=tensor("))
    if i.size == 0:
        istr += f", size={tuple(i.shape)}"
    vstr = tensor_str(v, name, indent + len("values=tensor("))
    if v.size == 0:
        vstr += f", size={tuple(v.shape)}"
    body = f"tensor(indices=tensor({istr}),\n{' ' * indent}values=tensor({vstr})"
    suffixes.append("layout=torch.sparse_coo")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    return _add_suffixes(body, suffixes, indent, force_newline=True)


# -- the sparse methods of a dense tensor -----------------------------------------------------

def _layout_error(name: str, what: str = "sparse coordinate tensor"):
    def method(self, *args, **kwargs):
        raise RuntimeError(f"{name} expected {what} layout but got Strided")

    method.__name__ = name
    return method


def _dense_to_dense(self: Tensor, dtype=None, *, masked_grad=None) -> Tensor:
    return self if dtype is None else self.to(dtype)


def _dense_sparse_dim(self: Tensor) -> int:
    return 0


def _dense_dense_dim(self: Tensor) -> int:
    return self.dim()


def _dense_only_sparse(name: str):
    def method(self, *args, **kwargs):
        raise NotImplementedError(
            f"Could not run 'aten::{name}' with arguments from the 'CPU' backend. This could be "
            "because the operator doesn't exist for this backend, or was omitted during the "
            "selective/custom build process (if using custom build).")

    method.__name__ = name
    return method


def _to_sparse_coo(self: Tensor) -> SparseTensor:
    return dense_to_sparse(self)


def _sparse_mask(self: Tensor, mask: Tensor) -> SparseTensor:
    """The entries of ``self`` at the indices of the sparse ``mask`` (its sparsity pattern)."""
    if not isinstance(mask, SparseTensor):
        raise RuntimeError(  # noqa: TRY004  (torch's type)
            "sparse_mask expects mask to be sparse coalesced or uncoalesced "
            "COO tensor")
    if tuple(self.shape) != mask._sz:
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{list(self.shape)} but mask has size {list(mask._sz)}")
    src = self.to_dense() if isinstance(self, SparseTensor) else self
    m = mask  # its entries as stored (torch keeps an uncoalesced mask's duplicates)
    sd = m.sparse_dim()
    vals = src[tuple(m._i[d] for d in range(sd))] if sd else src.unsqueeze(0).expand(
        m._nnz(), *src.shape)
    return _new(m._i, vals, m._sz, m._co, m._ptr)


# Tensor methods torch has for every layout (``ops/tensor_methods.py`` installs them): on a
# dense tensor the conversions, torch's layout errors, and the trivial dims.
DENSE_METHODS = {
    "to_sparse": dense_to_sparse,
    "to_sparse_coo": _to_sparse_coo,
    "to_dense": _dense_to_dense,
    "coalesce": _layout_error("coalesce"),
    "is_coalesced": _layout_error("is_coalesced"),
    "indices": _layout_error("indices"),
    "values": _layout_error("values", "sparse tensor"),
    "_indices": _dense_only_sparse("_indices"),
    "_values": _dense_only_sparse("_values"),
    "_nnz": _dense_only_sparse("_nnz"),
    "sparse_dim": _dense_sparse_dim,
    "dense_dim": _dense_dense_dim,
    "sparse_mask": _sparse_mask,
}
