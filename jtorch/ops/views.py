"""Views and movement ops.

Views (view, reshape, permute, transpose, squeeze, expand, narrow, select, diagonal,
as_strided, ...) compute a new (shape, strides, storage offset) with torch's rules and wrap
the same storage (``_view``: shared storage and version counter); no element is touched.
Copying movement ops (cat, stack, flip, roll, repeat, tril/triu) run the raw strided copy
kernels of ``kernels/cpu/movement.py``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from .. import dispatch
from .. import dtypes as _dt
from ..kernels.cpu import movement as K
from ..kernels.defs import movement as M
from ..shape import broadcast_shapes, contiguous_strides, wrap_dim
from ..tensor import Tensor
from ._util import tensor_method, type_name

__all__ = [
    "as_strided",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block_diag",
    "broadcast_tensors",
    "broadcast_to",
    "cat",
    "chunk",
    "column_stack",
    "concat",
    "concatenate",
    "cartesian_prod",
    "combinations",
    "diag",
    "diag_embed",
    "diagflat",
    "diagonal",
    "dstack",
    "flatten",
    "flip",
    "fliplr",
    "flipud",
    "hsplit",
    "hstack",
    "meshgrid",
    "moveaxis",
    "movedim",
    "narrow",
    "permute",
    "ravel",
    "repeat_interleave",
    "reshape",
    "roll",
    "rot90",
    "select",
    "split",
    "squeeze",
    "stack",
    "swapaxes",
    "swapdims",
    "t",
    "tensor_split",
    "tile",
    "transpose",
    "tril",
    "triu",
    "unbind",
    "unflatten",
    "unsqueeze",
    "vsplit",
    "vstack",
]

_record = dispatch.record


# -- view bookkeeping -----------------------------------------------------------------------

def strides_of(t: Tensor) -> tuple:
    isz = t._a.itemsize
    return tuple(s // isz for s in t._a.strides)


def offset_of(t: Tensor) -> int:
    """The storage offset in elements, from the data pointers (also for empty views, for
    which ``Tensor.storage_offset()`` reports 0)."""
    a, st = t._a, t._st
    return (a.__array_interface__["data"][0] - st.__array_interface__["data"][0]) // a.itemsize


def make_view(t: Tensor, shape, strides, offset: int) -> Tensor:
    """A view of ``t``'s storage with the given element shape/strides/offset."""
    st = t._st
    isz = st.itemsize
    shape = tuple(shape)
    bstrides = tuple(s * isz for s in strides)
    if st.flags.c_contiguous and offset * isz <= st.nbytes:
        a = np.ndarray(shape, st.dtype, buffer=st, offset=offset * isz, strides=bstrides)
    else:
        a = np.lib.stride_tricks.as_strided(st[offset:], shape, bstrides)
    return t._view(a)


def _ints(args, name: str = "size") -> tuple:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` or ``f(torch.Size)`` as a tuple of ints."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    out = []
    for a in args:
        if isinstance(a, Tensor) and a.dtype.category > 1:
            raise TypeError(f"{name} must be tuple of ints, but found element of type Tensor")
        try:
            out.append(a.__index__())
        except AttributeError:
            raise TypeError(f"{name} must be tuple of ints, but found element of type "
                            f"{type(a).__name__}") from None
    return tuple(out)


def _infer(shape: tuple, numel: int) -> tuple:
    neg = -1
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if neg >= 0:
                raise RuntimeError("only one dimension can be inferred")
            neg = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
        else:
            known *= s
    if neg >= 0:
        if known == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                               "because the unspecified dimension size -1 can be any value and "
                               "is ambiguous" if numel == 0 else
                               f"shape '{list(shape)}' is invalid for input of size {numel}")
        if numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        return shape[:neg] + (numel // known,) + shape[neg + 1:]
    if known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def compute_stride(oldshape, oldstride, newshape):
    """Strides that view ``oldshape/oldstride`` as ``newshape``, or None (ATen computeStride)."""
    if not oldshape:
        return (1,) * len(newshape)
    numel = math.prod(oldshape)
    if numel == 0 and tuple(oldshape) == tuple(newshape):
        return tuple(oldstride)
    nd = len(newshape)
    newstride = [0] * nd
    if numel == 0:
        for d in range(nd - 1, -1, -1):
            newstride[d] = 1 if d == nd - 1 else max(newshape[d + 1], 1) * newstride[d + 1]
        return tuple(newstride)
    view_d = nd - 1
    chunk_base = oldstride[-1]
    tensor_numel = 1
    view_numel = 1
    for td in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[td]
        if td == 0 or (oldshape[td - 1] != 1 and oldstride[td - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if td > 0:
                chunk_base = oldstride[td - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


# -- view ops -------------------------------------------------------------------------------

def _view_shape(self: Tensor, shape: tuple) -> Tensor:
    a = self._a
    shape = _infer(shape, a.size)
    if a.flags.c_contiguous and a.size:  # NumPy's contiguous strides are torch's here
        return _record(M.view_op, (self,), self._view(a.reshape(shape)), {"shape": a.shape})
    st = compute_stride(self._a.shape, strides_of(self), shape)
    if st is None:
        raise RuntimeError(
            "view size is not compatible with input tensor's size and stride (at least one "
            "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
        )
    return _record(M.view_op, (self,), make_view(self, shape, st, offset_of(self)),
                   {"shape": self._a.shape})


@tensor_method()
def view(self: Tensor, *shape, size=None, dtype=None) -> Tensor:
    """A view with a new shape (one -1 inferred); strides must allow it, else use reshape."""
    if dtype is not None or len(shape) == 1 and isinstance(shape[0], _dt.dtype):
        return _view_dtype(self, dtype if dtype is not None else shape[0])
    return _view_shape(self, _ints(shape if size is None else (size,)))


def _view_dtype(self: Tensor, d: _dt.dtype) -> Tensor:
    """The same bytes read as ``d``. Between item sizes the last dim (stride 1) is split or
    merged, other strides and the offset are rescaled (ATen's ``view_dtype`` and its checks)."""
    base = self._base if self._base is not None else self
    if d.itemsize == self.dtype.itemsize:
        return Tensor._make(self._a.view(d.np), self._st.view(d.np), d, base)
    a = self._a
    shape, off = list(a.shape), offset_of(self)
    # an empty array's NumPy strides are 0; torch reports a fresh tensor's row-major strides
    strides = list(contiguous_strides(shape) if a.size == 0 and a.flags.c_contiguous else strides_of(self))
    what = (f"to view {dispatch.torch_name(self.dtype)} as {dispatch.torch_name(d)} (different "
            f"element sizes)")
    if not shape:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    if self.dtype.itemsize > d.itemsize:
        r = self.dtype.itemsize // d.itemsize
        _view_dtype_unit_stride(strides, what)
        shape[-1], strides, off = shape[-1] * r, [s * r for s in strides[:-1]] + [1], off * r
    else:
        r = d.itemsize // self.dtype.itemsize
        if shape[-1] % r:
            raise RuntimeError(f"self.size(-1) must be divisible by {r} {what}, but got {shape[-1]}")
        if off % r:
            raise RuntimeError(f"self.storage_offset() must be divisible by {r} {what}, but got {off}")
        _view_dtype_unit_stride(strides, what)
        for i, s in enumerate(strides[:-1]):
            if s % r:
                raise RuntimeError(f"self.stride({i}) must be divisible by {r} {what}, but got {s}")
        shape[-1], strides, off = shape[-1] // r, [s // r for s in strides[:-1]] + [1], off // r
    st = self._st
    st = np.ndarray((st.nbytes // d.itemsize,), d.np, buffer=st) if st.flags.c_contiguous \
        else st.view(d.np)
    bstrides = tuple(s * d.itemsize for s in strides)
    a = np.ndarray(tuple(shape), d.np, buffer=st, offset=min(off, st.size) * d.itemsize,
                   strides=bstrides)
    return Tensor._make(a, st, d, base)


def _view_dtype_unit_stride(strides: list, what: str) -> None:
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")


@tensor_method()
def view_as(self: Tensor, other: Tensor) -> Tensor:
    return _view_shape(self, other._a.shape)


def reshape(input: Tensor, shape) -> Tensor:
    """A view when the strides allow it (torch's rule), else a contiguous copy.

    >>> jtorch.arange(6).reshape(2, 3).t().reshape(6)
    tensor([0, 3, 1, 4, 2, 5])
    """
    a = input._a
    shape = _infer(_ints((shape,) if isinstance(shape, int) else shape), a.size)
    if a.flags.c_contiguous and a.size:
        return _record(M.view_op, (input,), input._view(a.reshape(shape)), {"shape": a.shape})
    st = compute_stride(input._a.shape, strides_of(input), shape)
    if st is not None:
        out = make_view(input, shape, st, offset_of(input))
    else:
        c = _contiguous_copy(input)
        out = Tensor._make(c._a.reshape(shape), c._st, c.dtype)
        return _record(M.view_op, (input,), out, {"shape": input._a.shape,
                                                  "_name": "UnsafeViewBackward0"})
    return _record(M.view_op, (input,), out, {"shape": input._a.shape})


Tensor.reshape = lambda self, *shape_args, shape=None: reshape(
    self, _ints(shape_args if shape is None else (shape,)))
Tensor.reshape_as = lambda self, other: reshape(self, other._a.shape)


def _contiguous_copy(t: Tensor) -> Tensor:
    out = dispatch.empty_tensor(t._a.shape, t.dtype)
    K.copy_array(out._a, t._a)
    return out


@tensor_method()
def permute(input: Tensor, *dims) -> Tensor:
    dims = _ints(dims, "dims")
    nd = input._a.ndim
    if len(dims) != nd:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = "
            f"{nd} is not equal to len(dims) = {len(dims)}"
        )
    dims = tuple(wrap_dim(d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return _permuted(input, dims)


def _permuted(input: Tensor, dims: tuple, name: str | None = None) -> Tensor:
    out = input._view(input._a.transpose(dims))
    return _record(M.permute_op, (input,), out, {"dims": dims} if name is None else
                   {"dims": dims, "_name": name})


Tensor.permute = lambda self, *dims_args, dims=None: permute(
    self, *(dims_args if dims is None else (dims,)))


@tensor_method("transpose", "swapaxes", "swapdims")
def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    nd = input._a.ndim
    d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    if nd == 0:
        return _permuted(input, ())
    dims = list(range(nd))
    dims[d0], dims[d1] = d1, d0
    return _permuted(input, tuple(dims), "TransposeBackward0")


swapaxes = swapdims = transpose


@tensor_method()
def t(input: Tensor) -> Tensor:
    nd = input._a.ndim
    if nd > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return _permuted(input, (1, 0) if nd == 2 else tuple(range(nd)), "TBackward0")


@tensor_method()
def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    self._a = transpose(self, dim0, dim1)._a
    return self


@tensor_method()
def t_(self: Tensor) -> Tensor:
    self._a = t(self)._a
    return self


def squeeze(input: Tensor, dim=None) -> Tensor:
    shape, st = input._a.shape, strides_of(input)
    nd = len(shape)
    if dim is None:
        keep = [i for i in range(nd) if shape[i] != 1]
    else:
        dims = dim if isinstance(dim, (tuple, list)) else (dim,)
        wrapped = [wrap_dim(d, nd) for d in dims]
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(_dup_message(wrapped))
        drop = {d for d in wrapped if nd and shape[d] == 1}
        keep = [i for i in range(nd) if i not in drop]
    out = make_view(input, [shape[i] for i in keep], [st[i] for i in keep], offset_of(input))
    nr = 0 if dim is None else 2 if isinstance(dim, (tuple, list)) else 1
    return _record(M.view_op, (input,), out, {"shape": shape, "_name": f"SqueezeBackward{nr}"})


def _dup_message(dims: list) -> str:
    seen = set()
    for d in dims:
        if d in seen:
            return f"dim {d} appears multiple times in the list of dims"
        seen.add(d)
    return ""


def _unsqueezed(input: Tensor, d: int) -> Tensor:
    """The size-1 view at (wrapped) ``d``, not recorded for autograd."""
    shape, st = list(input._a.shape), list(strides_of(input))
    new_st = 1 if d >= len(shape) else shape[d] * st[d]
    shape.insert(d, 1)
    st.insert(d, new_st)
    return make_view(input, shape, st, offset_of(input))


def unsqueeze(input: Tensor, dim: int) -> Tensor:
    out = _unsqueezed(input, wrap_dim(dim, input._a.ndim + 1))
    return _record(M.view_op, (input,), out, {"shape": input._a.shape,
                                              "_name": "UnsqueezeBackward0"})


Tensor.squeeze = lambda self, dim=None: squeeze(self, dim)
Tensor.unsqueeze = lambda self, dim: unsqueeze(self, dim)


@tensor_method()
def squeeze_(self: Tensor, dim=None) -> Tensor:
    self._a = squeeze(self, dim)._a
    return self


@tensor_method()
def unsqueeze_(self: Tensor, dim: int) -> Tensor:
    self._a = unsqueeze(self, dim)._a
    return self


def _type_string(d: _dt.dtype) -> str:
    """torch's Tensor::toString(): legacy names, CPU<Name>Type for bool and complex."""
    if d is _dt.bool or d.is_complex:
        return f"CPU{dispatch.torch_name(d)}Type"
    return f"torch.{d._legacy}"


def _expand_geometry(t: Tensor, size: tuple) -> tuple:
    shape, st = t._a.shape, strides_of(t)
    nd, tnd = len(size), len(shape)
    if nd < tnd:
        raise RuntimeError(
            f"expand({_type_string(t.dtype)}{{{list(shape)}}}, size={list(size)}): the number of "
            f"sizes provided ({nd}) must be greater or equal to the number of dimensions in the "
            f"tensor ({tnd})"
        )
    out_shape, out_st = [0] * nd, [0] * nd
    if tnd == 0:  # a scalar expands with all strides 0
        for i, n in enumerate(size):
            if n < 0:
                raise RuntimeError(f"The expanded size of the tensor ({n}) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
        return list(size), out_st
    for i in range(nd - 1, -1, -1):
        d = tnd - nd + i
        if d >= 0:
            n, s = shape[d], st[d]
        else:
            n = 1
            s = out_shape[i + 1] * out_st[i + 1] if i + 1 < nd else 1
        target = size[i]
        if target == -1:
            if d < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            target = n
        if n != target:
            if n != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target}) must match the existing size "
                    f"({n}) at non-singleton dimension {i}.  Target sizes: {list(size)}.  "
                    f"Tensor sizes: {list(shape)}"
                )
            n, s = target, 0
        if target < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {target}: "
                               f"{list(size)}")
        out_shape[i], out_st[i] = n, s
    return out_shape, out_st


@tensor_method()
def expand(self: Tensor, *sizes, size=None) -> Tensor:
    """A broadcast view: size-1 dims (and new leading dims) get stride 0; -1 keeps a size."""
    size = _ints(sizes if size is None else (size,))
    shape, st = _expand_geometry(self, size)
    out = make_view(self, shape, st, offset_of(self))
    return _record(M.expand_op, (self,), out, {"size": tuple(shape)})


Tensor.expand_as = lambda self, other: expand(self, other._a.shape)


def broadcast_to(input: Tensor, size) -> Tensor:
    return expand(input, _ints((size,) if isinstance(size, int) else size))


Tensor.broadcast_to = broadcast_to


def broadcast_tensors(*tensors) -> tuple:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    shape = broadcast_shapes(*[x._a.shape for x in tensors])
    return tuple(expand(x, shape) for x in tensors)


def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    nd = input._a.ndim
    s, e = wrap_dim(start_dim, nd), wrap_dim(end_dim, nd)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    if nd == 0:
        return reshape(input, (1,))
    if s == e:
        return input
    shape = input._a.shape
    return reshape(input, shape[:s] + (math.prod(shape[s:e + 1]),) + shape[e + 1:])


Tensor.flatten = lambda self, start_dim=0, end_dim=-1: flatten(self, start_dim, end_dim)


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    shape = input._a.shape
    d = wrap_dim(dim, input._a.ndim)
    sizes = _ints((sizes,) if isinstance(sizes, int) else sizes, "sizes")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = shape[d] if shape else 1
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = math.prod(s for s in sizes if s != -1)
    if -1 in sizes:
        if known == 0 or n % known:
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                               f"size of dim {d} ({n}) in the input tensor")
        sizes = tuple(n // known if s == -1 else s for s in sizes)
    elif known != n:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size "
                           f"of dim {d} ({n}) in the input tensor")
    return reshape(input, shape[:d] + sizes + shape[d + 1:])


Tensor.unflatten = lambda self, dim, sizes: unflatten(self, dim, sizes)


def _slice(input: Tensor, dim: int, start: int, end: int, step: int = 1,
           name: str | None = None) -> Tensor:
    """input along ``dim`` from ``start`` to ``end`` (already clamped) by ``step``."""
    shape, st = list(input._a.shape), list(strides_of(input))
    off = offset_of(input) + start * st[dim]
    shape[dim] = max(0, -(-(end - start) // step))
    st[dim] *= step
    out = make_view(input, shape, st, off)
    kw = {"dim": dim, "start": start, "end": end, "step": step}
    if name is not None:
        kw["_name"] = name
    return _record(M.slice_op, (input,), out, kw)


def narrow(input: Tensor, dim: int, start, length: int) -> Tensor:
    if input._a.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, input._a.ndim)
    n = input._a.shape[d]
    start = start.__index__()
    length = length.__index__()
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return _slice(input, d, start, start + length)


Tensor.narrow = narrow


def select(input: Tensor, dim: int, index: int) -> Tensor:
    nd = input._a.ndim
    if nd == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, nd)
    n = input._a.shape[d]
    index = index.__index__()
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input._a.shape)} at dimension {dim}")
    if index < 0:
        index += n
    return _select(input, d, index)


def _select(input: Tensor, d: int, index: int, name: str | None = None) -> Tensor:
    shape, st = list(input._a.shape), list(strides_of(input))
    off = offset_of(input) + index * st[d]
    del shape[d], st[d]
    out = make_view(input, shape, st, off)
    return _record(M.select_op, (input,), out, {"dim": d, "index": index} if name is None else
                   {"dim": d, "index": index, "_name": name})


Tensor.select = select


def unbind(input: Tensor, dim: int = 0) -> tuple:
    if input._a.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, input._a.ndim)
    return tuple(_select(input, d, i, "UnbindBackward0") for i in range(input._a.shape[d]))


Tensor.unbind = unbind


def split(tensor: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Pieces of ``split_size`` (the last may be smaller) or of the given section sizes."""
    if tensor._a.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, tensor._a.ndim)
    n = tensor._a.shape[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sizes = _ints(split_size_or_sections, "split_sizes")
        if sum(sizes) != n or any(s < 0 for s in sizes):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                               f"tensor's size at dimension {d}), but got split_sizes="
                               f"{list(sizes)}")
    else:
        size = split_size_or_sections.__index__()
        if size < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got split_size="
                               f"{size}")
        if size == 0:
            if n != 0:
                raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                                   f"dimension size of {n}")
            sizes = (0,)
        else:
            sizes = (size,) * (n // size) + ((n % size,) if n % size or n == 0 else ())
    name = "SplitWithSizesBackward0" if isinstance(split_size_or_sections, (list, tuple)) else \
        "SplitBackward0"
    out, start = [], 0
    for s in sizes:
        out.append(_slice(tensor, d, start, start + s, 1, name))
        start += s
    return tuple(out)


Tensor.split = lambda self, split_size, dim=0: split(self, split_size, dim)
Tensor.split_with_sizes = lambda self, split_sizes, dim=0: split(self, list(split_sizes), dim)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple:
    if input._a.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, input._a.ndim)
    n = input._a.shape[d]
    if n == 0:
        return tuple(_slice(input, d, 0, 0) for _ in range(chunks))
    return split(input, -(-n // chunks), d)


Tensor.chunk = lambda self, chunks, dim=0: chunk(self, chunks, dim)


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0) -> tuple:
    if input._a.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = wrap_dim(dim, input._a.ndim)
    n = input._a.shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        ios = ios.item() if ios._a.ndim == 0 else ios.tolist()
    if isinstance(ios, (list, tuple)):
        bounds = [0] + [max(0, min(n, i + n if i < 0 else i)) for i in _ints(ios, "indices")]
        bounds.append(n)
        return tuple(_slice(input, d, bounds[i], max(bounds[i], bounds[i + 1]))
                     for i in range(len(bounds) - 1))
    sections = ios.__index__()
    if sections <= 0:
        raise RuntimeError(f"number of sections must be larger than 0, got {sections}")
    q, r = divmod(n, sections)
    out, start = [], 0
    for i in range(sections):
        s = q + (1 if i < r else 0)
        out.append(_slice(input, d, start, start + s))
        start += s
    return tuple(out)


Tensor.tensor_split = lambda self, indices_or_sections, dim=0: tensor_split(
    self, indices_or_sections, dim)


def hsplit(input: Tensor, indices_or_sections) -> tuple:
    return _dsplit_like(input, indices_or_sections, 1 if input._a.ndim > 1 else 0, "hsplit", 1)


def vsplit(input: Tensor, indices_or_sections) -> tuple:
    return _dsplit_like(input, indices_or_sections, 0, "vsplit", 2)


def _dsplit_like(input, ios, dim, name, min_dims):
    if input._a.ndim < min_dims:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dims} dimension, "
                           f"but got a tensor with {input._a.ndim} dimensions!")
    if isinstance(ios, int) and input._a.shape[dim] % ios:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the size "
                           f"of the dimension {input._a.shape[dim]} is not divisible by the split_"
                           f"size {ios}!")
    return tensor_split(input, ios, dim)


Tensor.hsplit = hsplit
Tensor.vsplit = vsplit


def movedim(input: Tensor, source, destination) -> Tensor:
    nd = input._a.ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    s = [wrap_dim(d, nd) for d in src]
    e = [wrap_dim(d, nd) for d in dst]
    if len(set(s)) != len(s):
        raise RuntimeError(f"movedim: repeated dim in `source` ({src})")
    if len(set(e)) != len(e):
        raise RuntimeError(f"movedim: repeated dim in `destination` ({dst})")
    order = [-1] * nd
    for a, b in zip(s, e):
        order[b] = a
    rest = iter(d for d in range(nd) if d not in s)
    order = [next(rest) if o == -1 else o for o in order]
    return _permuted(input, tuple(order))


moveaxis = movedim
Tensor.movedim = Tensor.moveaxis = movedim


def as_strided(input: Tensor, size, stride, storage_offset=None) -> Tensor:
    size = _ints(size if isinstance(size, (tuple, list)) else (size,))
    stride = _ints(stride if isinstance(stride, (tuple, list)) else (stride,), "stride")
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(size)}")
    off = offset_of(input) if storage_offset is None else storage_offset.__index__()
    if off < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {off}")
    need = 0 if 0 in size else off + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    isz = input.dtype.itemsize
    if need > input._st.size:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off}, and "
            f"itemsize {isz} requiring a storage size of {need * isz} are out of bounds for "
            f"storage of size {input._st.size * isz}"
        )
    out = make_view(input, size, stride, off)
    return _record(M.as_strided_op, (input,), out, {"size": size, "stride": stride,
                                                     "storage_offset": off,
                                                     "in_stride": strides_of(input),
                                                     "in_offset": offset_of(input)})


Tensor.as_strided = as_strided


@tensor_method()
def as_strided_(self: Tensor, size, stride, storage_offset=None) -> Tensor:
    self._a = as_strided(self, size, stride, storage_offset)._a
    return self


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    nd = input._a.ndim
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape, st = list(input._a.shape), list(strides_of(input))
    off = offset_of(input)
    if offset >= 0:
        n = max(min(shape[d1], shape[d2] - offset), 0)
        delta = offset * st[d2]
    else:
        n = max(min(shape[d1] + offset, shape[d2]), 0)
        delta = -offset * st[d1]
    if n:
        off += delta
    diag_st = st[d1] + st[d2]
    keep = [i for i in range(nd) if i not in (d1, d2)]
    out = make_view(input, [shape[i] for i in keep] + [n], [st[i] for i in keep] + [diag_st], off)
    return _record(M.diagonal_op, (input,), out, {"offset": offset, "dim1": d1, "dim2": d2})


Tensor.diagonal = lambda self, offset=0, dim1=0, dim2=1: diagonal(self, offset, dim1, dim2)


def atleast_1d(*tensors):
    return _atleast(tensors, 1)


def atleast_2d(*tensors):
    return _atleast(tensors, 2)


def atleast_3d(*tensors):
    return _atleast(tensors, 3)


def _atleast(tensors, n: int):
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    out = []
    for x in tensors:
        nd = x._a.ndim
        if nd >= n:
            out.append(x)
        elif n == 3 and nd == 2:
            out.append(unsqueeze(x, -1))
        elif n == 3 and nd == 1:
            out.append(unsqueeze(unsqueeze(x, 0), -1))
        else:
            out.append(reshape(x, (1,) * (n - nd) + x._a.shape))
    return out[0] if single else tuple(out)


# -- copying movement ops -------------------------------------------------------------------

def _tensor_list(tensors, name: str) -> list:
    if isinstance(tensors, Tensor) or not isinstance(tensors, Sequence):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, not "
                        f"{type(tensors).__name__}")
    for i, x in enumerate(tensors):
        if not isinstance(x, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got {type_name(x)}")
    return list(tensors)


def _copy_cast(dst: np.ndarray, dst_dtype: _dt.dtype, src: Tensor) -> None:
    """dst[...] = src (same shape), converting the dtype with the registry's copy kernel."""
    if src.dtype is dst_dtype:
        K.copy_array(dst, src._a)
    else:
        from .pointwise import _COPY

        dispatch.run_pointwise(_COPY, (src,), dst, dst_dtype)


def _finish(out_arg, result: Tensor, name: str) -> Tensor:
    """Write ``result`` into an ``out=`` tensor (resized as torch does)."""
    if out_arg is None:
        return result
    if not _dt.can_cast(result.dtype, out_arg.dtype):
        raise RuntimeError(f"{name}: result type {dispatch.torch_name(result.dtype)} can't be cast "
                           f"to the desired output type {dispatch.torch_name(out_arg.dtype)}")
    if out_arg._a.shape != result._a.shape:
        dispatch.resize_out(out_arg, result._a.shape)
    _copy_cast(out_arg._a, out_arg.dtype, result)
    dispatch.bump_version(out_arg)
    return out_arg


def cat(tensors, dim: int = 0, *, axis=None, out=None) -> Tensor:
    """Concatenate along ``dim``, promoting dtypes; 1-D empty tensors are skipped (legacy).

    >>> jtorch.cat([jtorch.tensor([1, 2]), jtorch.tensor([3.5])])
    tensor([1.0000, 2.0000, 3.5000])
    """
    tensors = _tensor_list(tensors, "cat")
    return _concat(tensors, tensors, dim if axis is None else axis, out, M.cat_op)


def _concat(tensors: list, inputs: list, dim: int, out, op) -> Tensor:
    """cat's kernel; the autograd node is ``op`` over ``inputs`` (stack records the tensors
    before their unsqueeze, as torch's StackBackward0 does)."""
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    d = tensors[0].dtype
    for x in tensors[1:]:
        d = _dt.promote_types(d, x.dtype)
    if out is not None and not _dt.can_cast(d, out.dtype):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                        f"{dispatch.torch_name(out.dtype)}")
    for i, x in enumerate(tensors):
        if x._a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    parts = [(i, x) for i, x in enumerate(tensors) if not (x._a.ndim == 1 and x._a.shape[0] == 0)]
    if not parts:
        res = dispatch.empty_tensor((0,), d)
        return _finish(out, res, "cat")
    ref = parts[0][1]._a.shape
    nd = len(ref)
    axis = wrap_dim(dim, nd)
    total = 0
    for i, x in parts:
        s = x._a.shape
        if len(s) != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and {len(s)}")
        for k in range(nd):
            if k != axis and s[k] != ref[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {axis}. Expected "
                                   f"size {ref[k]} but got size {s[k]} for tensor number {i} in the "
                                   "list.")
        total += s[axis]
    shape = ref[:axis] + (total,) + ref[axis + 1:]
    res = dispatch.empty_tensor(shape, d)
    start = 0
    for _, x in parts:
        n = x._a.shape[axis]
        if n and x._a.size:
            dst = res._a[(slice(None),) * axis + (slice(start, start + n),)]
            _copy_cast(dst, d, x)
        start += n
    _record(op, tuple(inputs), res, {"dim": axis})
    return _finish(out, res, "cat")


concat = concatenate = cat


def stack(tensors, dim: int = 0, *, axis=None, out=None) -> Tensor:
    tensors = _tensor_list(tensors, "stack")
    dim = dim if axis is None else axis
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    s0 = tensors[0]._a.shape
    for i, x in enumerate(tensors[1:], 1):
        if x._a.shape != s0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(s0)} at "
                               f"entry 0 and {list(x._a.shape)} at entry {i}")
    d = wrap_dim(dim, len(s0) + 1)
    return _concat([_unsqueezed(x, d) for x in tensors], tensors, d, out, M.stack_op)


def hstack(tensors, *, out=None) -> Tensor:
    ts = atleast_1d(*_tensor_list(tensors, "hstack"))
    ts = ts if isinstance(ts, tuple) else (ts,)
    return cat(ts, 0 if ts and ts[0]._a.ndim == 1 else 1, out=out)


def vstack(tensors, *, out=None) -> Tensor:
    ts = atleast_2d(*_tensor_list(tensors, "vstack"))
    return cat(ts if isinstance(ts, tuple) else (ts,), 0, out=out)


def dstack(tensors, *, out=None) -> Tensor:
    ts = atleast_3d(*_tensor_list(tensors, "dstack"))
    return cat(ts if isinstance(ts, tuple) else (ts,), 2, out=out)


def column_stack(tensors, *, out=None) -> Tensor:
    ts = [reshape(x, (x._a.size, 1)) if x._a.ndim <= 1 else x
          for x in _tensor_list(tensors, "column_stack")]
    return cat(ts, 1, out=out)


def flip(input: Tensor, dims) -> Tensor:
    """A reversed copy along ``dims`` (a kernel reading with negative strides)."""
    nd = input._a.ndim
    dims = [dims] if isinstance(dims, int) else list(dims)
    wrapped = [wrap_dim(d, nd) for d in dims]
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(_dup_message(wrapped))
    from .creation import like

    out = like(input, input.dtype)  # torch keeps a dense input's layout here
    if out._a.size:
        sb, ss = K.buffer(input._a)
        db, ds = K.buffer(out._a)
        shape = input._a.shape
        soff = 0
        ss = list(ss)
        for d in set(wrapped) if shape else ():
            soff += (shape[d] - 1) * ss[d]
            ss[d] = -ss[d]
        K.copy(shape, sb, soff, ss, db, 0, ds)
    return _record(M.flip_op, (input,), out, {"dims": tuple(wrapped)})


Tensor.flip = lambda self, *dims_args, dims=None: flip(self, dims if dims is not None else (
    dims_args[0] if len(dims_args) == 1 and not isinstance(dims_args[0], int) else dims_args))


def fliplr(input: Tensor) -> Tensor:
    if input._a.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input: Tensor) -> Tensor:
    if input._a.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


Tensor.fliplr = fliplr
Tensor.flipud = flipud


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """Rotate along ``dims`` by ``shifts`` (flattened first when dims is None): block copies."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        r = roll(reshape(input, (-1,)), shifts, 0)
        out = Tensor._make(r._a.reshape(input._a.shape), r._st, r.dtype)
        return _record(M.roll_op, (input,), out, {"shifts": shifts, "dims": None})
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)}")
    nd = input._a.ndim
    wdims = [wrap_dim(d, nd) for d in dims]
    out = dispatch.empty_tensor(input._a.shape, input.dtype)
    if out._a.size:
        shape = input._a.shape
        amount = [0] * nd
        for d, s in zip(wdims, shifts):
            amount[d] = (amount[d] + s) % shape[d] if shape[d] else 0
        # Each rolled dim splits into two blocks: out[s:] = in[:n-s] and out[:s] = in[n-s:].
        choices = []
        for d in range(nd):
            n, s = shape[d], amount[d]
            if s == 0:
                choices.append([(slice(None), slice(None))])
            else:
                choices.append([(slice(s, n), slice(0, n - s)), (slice(0, s), slice(n - s, n))])
        for combo in itertools.product(*choices):
            dst = out._a[tuple(c[0] for c in combo)]
            src = input._a[tuple(c[1] for c in combo)]
            K.copy_array(dst, src)
    return _record(M.roll_op, (input,), out, {"shifts": shifts, "dims": tuple(wdims)})


Tensor.roll = lambda self, shifts, dims=None: roll(self, shifts, dims)


@tensor_method()
def repeat(self: Tensor, *repeats_args, repeats=None) -> Tensor:
    """Tile the tensor ``repeats`` times per dim: one strided copy from a 0-stride view."""
    repeats = repeats_args if repeats is None else (repeats,)
    if not repeats:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    reps = _ints(repeats, "repeats")
    nd = self._a.ndim
    if len(reps) < nd:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    shape = (1,) * (len(reps) - nd) + self._a.shape
    out_shape = tuple(r * s for r, s in zip(reps, shape))
    for n in out_shape:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                               f"{list(out_shape)}")
    out = dispatch.empty_tensor(out_shape, self.dtype)
    if out._a.size:
        sb, ss = K.buffer(self._a)
        ss = [0] * (len(reps) - nd) + list(ss)
        db, _ = K.buffer(out._a)
        ostr = contiguous_strides(out_shape)
        it_shape, it_src, it_dst = [], [], []
        for r, n, s, o in zip(reps, shape, ss, ostr):
            it_shape += [r, n]
            it_src += [0, s]
            it_dst += [o * n, o]
        K.copy(it_shape, sb, 0, it_src, db, 0, it_dst)
    return _record(M.repeat_op, (self,), out, {"repeats": reps})


def tile(input: Tensor, dims) -> Tensor:
    dims = _ints((dims,) if isinstance(dims, int) else dims, "dims")
    nd = input._a.ndim
    if len(dims) < nd:
        dims = (1,) * (nd - len(dims)) + dims
    return repeat(input, repeats=dims)  # () for a 0-d input: a copy


Tensor.tile = lambda self, *dims_args, dims=None: tile(self, dims if dims is not None else (
    dims_args[0] if len(dims_args) == 1 and not isinstance(dims_args[0], int) else dims_args))


def _tri(input: Tensor, diagonal: int, upper: bool, out=None, inplace: bool = False) -> Tensor:
    name = "triu" if upper else "tril"
    if input._a.ndim < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    res = input if inplace else dispatch.empty_tensor(input._a.shape, input.dtype)
    K.tri(K.raw(res._a), K.raw(input._a), diagonal.__index__(), upper)
    if inplace:
        dispatch.bump_version(res)
        return res
    _record(M.triu_op if upper else M.tril_op, (input,), res, {"diagonal": diagonal})
    return _finish(out, res, name)


def tril(input: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    """The lower triangle (j - i <= diagonal) of the last two dims; the rest is zero."""
    return _tri(input, diagonal, False, out)


def triu(input: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    return _tri(input, diagonal, True, out)


Tensor.tril = lambda self, diagonal=0: tril(self, diagonal)
Tensor.triu = lambda self, diagonal=0: triu(self, diagonal)
Tensor.tril_ = lambda self, diagonal=0: _tri(self, diagonal, False, inplace=True)
Tensor.triu_ = lambda self, diagonal=0: _tri(self, diagonal, True, inplace=True)


# -- compositions of the views and copies above (autograd follows their parts) ---------------


def _clone(t: Tensor) -> Tensor:
    """A contiguous copy that autograd sees (clone)."""
    from .conversion import clone

    return clone(t) if t._a.flags.c_contiguous else t.contiguous()


@tensor_method()
def ravel(input: Tensor) -> Tensor:
    """The elements as a 1-D tensor (a view when the layout allows, else a contiguous copy)."""
    return reshape(input, (-1,))


@tensor_method()
def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """A view of every ``size``-long slice along ``dimension`` taken ``step`` apart, the slices
    in a new last dim."""
    nd = self._a.ndim
    d = wrap_dim(dimension, nd)
    n = self._a.shape[d] if nd else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    shape, st = list(self._a.shape), list(strides_of(self))
    if not nd:
        return as_strided(self, (size,), (1,), offset_of(self))
    shape[d], st[d] = (n - size) // step + 1, st[d] * step
    return as_strided(self, (*shape, size), (*st, strides_of(self)[d]), offset_of(self))


@tensor_method()
def rot90(input: Tensor, k: int = 1, dims=(0, 1)) -> Tensor:
    """Rotate by 90 degrees k times in the plane of ``dims`` (from the first towards the second)."""
    dims = list(dims)
    nd = input._a.ndim
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if nd < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {nd}")
    d0, d1 = dims
    if d0 == d1 or abs(d0 - d1) == nd:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and dim1 = {d1}")
    wrap_dim(d0, nd), wrap_dim(d1, nd)
    k %= 4
    if k == 1:
        return transpose(flip(input, [d1]), d0, d1)
    if k == 2:
        return flip(input, dims)
    if k == 3:
        return transpose(flip(input, [d0]), d0, d1)
    return _clone(input)


@tensor_method()
def repeat_interleave(input: Tensor, repeats=None, dim: int | None = None, *, output_size=None) -> Tensor:
    """Repeat each element (or each slice along ``dim``) ``repeats`` times; with a tensor of
    repeats, element i is repeated repeats[i] times. ``repeat_interleave(repeats)`` alone gives
    the indices 0..n-1 repeated that way."""
    if repeats is None:
        return _repeat_indices(input)
    if dim is None:
        input, d = reshape(input, (-1,)), 0
    else:
        d = wrap_dim(dim, input._a.ndim)
    if isinstance(repeats, Tensor) and repeats._a.ndim == 0:
        repeats = int(repeats.item())
    if not isinstance(repeats, Tensor):
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        shape = list(input._a.shape) or [1]
        x = reshape(input, shape) if not input._a.ndim else input
        x = expand(unsqueeze(x, d + 1), *shape[: d + 1], repeats, *shape[d + 1:])
        res = reshape(x, (*shape[:d], shape[d] * repeats, *shape[d + 1:]))
        return res if res._st is not input._st else _clone(res)  # always a new tensor
    n = input._a.shape[d] if input._a.ndim else 1
    if repeats._a.ndim != 1 or repeats._a.shape[0] != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {repeats._a.size} and input.size({d}) = {n}")
    from .indexing import index_select

    return index_select(input, d, _repeat_indices(repeats))


def _repeat_indices(repeats: Tensor) -> Tensor:
    if repeats.dtype.category != 1:
        raise NotImplementedError(
            f'"repeat_interleave_cpu" not implemented for \'{dispatch.torch_name(repeats.dtype)}\'')
    if repeats._a.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    r = repeats._a
    if r.size and r.min() < 0:
        raise RuntimeError("repeats can not be negative")
    return Tensor._make(np.repeat(np.arange(r.size, dtype=np.int64), r))


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    """A 1-D input becomes the k-th diagonal of a square matrix; a 2-D input gives a copy of its
    k-th diagonal."""
    nd = input._a.ndim
    if nd == 2:
        return _clone(globals()["diagonal"](input, diagonal))
    if nd != 1:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {nd}D")
    m = input._a.shape[0] + abs(diagonal)
    from .creation import zeros

    out = zeros(m, m, dtype=input.dtype)
    globals()["diagonal"](out, diagonal).copy_(input)
    return out


Tensor.diag = diag


def meshgrid(*tensors, indexing: str | None = None) -> tuple:
    """Coordinate grids: the i-th result holds tensors[i] broadcast along every other axis (as
    expanded views). ``indexing='xy'`` swaps the first two dims of the grid shape."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        import warnings

        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the "
                      "indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but received: '
                           f"{indexing}")
    for x in tensors:
        if x._a.ndim > 1:
            raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list but got: "
                               f"{x}")
        if x.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    swap = indexing == "xy" and len(tensors) >= 2
    ts = [tensors[1], tensors[0], *tensors[2:]] if swap else list(tensors)
    shape = [x._a.size for x in ts]
    grids = []
    for i, x in enumerate(ts):
        view_shape = [1] * len(ts)
        view_shape[i] = shape[i]
        grids.append(expand(reshape(x, view_shape), *shape))
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)


# -- composites of diag, meshgrid and slice copies (ATen's compositions; autograd follows) ---

def diag_embed(input: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    """A tensor whose (``dim1``, ``dim2``) diagonals at ``offset`` hold ``input``'s last dim.

    >>> jtorch.diag_embed(jtorch.tensor([[1, 2]])).tolist()
    [[[1, 0], [0, 2]]]
    """
    nd = input._a.ndim + 1
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = input._a.shape[-1] + abs(offset)
    rest = iter(input._a.shape[:-1])
    from .creation import zeros

    out = zeros(*[n if i in (d1, d2) else next(rest) for i in range(nd)], dtype=input.dtype)
    diagonal(out, offset, d1, d2).copy_(input)
    return out


def diagflat(input: Tensor, offset: int = 0) -> Tensor:
    """The flattened input as the ``offset`` diagonal of a square matrix."""
    return diag(reshape(input, (-1,)), offset)


def cartesian_prod(*tensors: Tensor) -> Tensor:
    """Rows of the cartesian product of 1-D tensors (``itertools.product`` order).

    >>> jtorch.cartesian_prod(jtorch.tensor([1, 2]), jtorch.tensor([3])).tolist()
    [[1, 3], [2, 3]]
    """
    for t in tensors:
        if t._a.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t._a.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    return stack([reshape(g, (-1,)) for g in meshgrid(*tensors, indexing="ij")], 1)


def block_diag(*tensors: Tensor) -> Tensor:
    """The tensors (0-d, 1-D as a row, or 2-D) as blocks down the diagonal of one matrix, in
    their promoted dtype."""
    from .creation import zeros

    if not tensors:
        return zeros(1, 0)
    blocks = []
    for i, t in enumerate(tensors):
        if t._a.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                               f"Input {i} has {t._a.ndim} dimensions")
        blocks.append(reshape(t, (1, -1)) if t._a.ndim < 2 else t)
    dims = [t.dtype for t in tensors if t._a.ndim]
    zero_dims = [t.dtype for t in tensors if not t._a.ndim]
    d = _dt.result_dtype(dims, zero_dims, [])
    out = zeros(sum(b._a.shape[0] for b in blocks), sum(b._a.shape[1] for b in blocks), dtype=d)
    r = c = 0
    for b in blocks:
        h, w = b._a.shape
        out[r:r + h, c:c + w] = b  # empty blocks too: each input gets a gradient
        r, c = r + h, c + w
    return out


def combinations(input: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
    """Length-``r`` combinations of a 1-D tensor's elements (``itertools.combinations`` order,
    or ``combinations_with_replacement``), one per row: the r-fold meshgrid masked to
    increasing (non-decreasing) index tuples.

    >>> jtorch.combinations(jtorch.tensor([1, 2, 3])).tolist()
    [[1, 2], [1, 3], [2, 3]]
    """
    if input._a.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input._a.shape)}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    from .creation import arange, empty

    if r == 0:
        return empty(0, dtype=input.dtype)
    idx = meshgrid(*[arange(input._a.shape[0])] * r, indexing="ij")
    mask = None
    for a, b in zip(idx, idx[1:]):
        ok = a <= b if with_replacement else a < b
        mask = ok if mask is None else mask & ok
    grids = meshgrid(*[input] * r, indexing="ij")
    if mask is None:
        return stack([reshape(g, (-1,)) for g in grids], 1)
    return stack([g.masked_select(mask) for g in grids], 1)


Tensor.diag_embed = diag_embed
Tensor.diagflat = diagflat
