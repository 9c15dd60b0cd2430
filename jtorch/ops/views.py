"""Views and movement ops.

Every function here parses torch's arguments and calls ``dispatch.call`` with an OpDef of
``kernels/defs/view.py`` (views: the meta rule computes the new shape/strides/offset, and the
result shares the input's storage and version counter; no element is touched) or
``kernels/defs/movement.py`` (copies: cat, stack, flip, roll, repeat, tril/triu, whose CPU
kernels are in ``kernels/cpu/movement.py``). The rest (flatten, movedim, tensor_split,
hstack, rot90, diag, meshgrid, ...) are compositions of those, as in torch.
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import dispatch
from .. import dtypes as _dt
from ..amp import state as _amp
from ..kernels.defs import movement as M
from ..kernels.defs import view as V
from ..shape import broadcast_shapes, wrap_dim
from ..tensor import Tensor
from ._util import type_name

__all__ = [
    "as_strided",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "block_diag",
    "broadcast_tensors",
    "broadcast_to",
    "cartesian_prod",
    "cat",
    "chunk",
    "column_stack",
    "combinations",
    "concat",
    "concatenate",
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
    "view_as_complex",
    "view_as_real",
    "vsplit",
    "vstack",
]

_call = dispatch.call
_view = dispatch.view  # views with a CPU shortcut (``OpDef.cpu_view``)


def _finish(out_arg, result: Tensor, name: str) -> Tensor:
    """Write ``result`` into an ``out=`` tensor (resized as torch does)."""
    if out_arg is None:
        return result
    if not _dt.can_cast(result.dtype, out_arg.dtype):
        raise RuntimeError(f"{name}: result type {dispatch.torch_name(result.dtype)} can't be cast "
                           f"to the desired output type {dispatch.torch_name(out_arg.dtype)}")
    return dispatch.copy_into(out_arg, result)


def _ints(args, name: str = "size") -> tuple:
    """``f(2, 3)``, ``f((2, 3))``, ``f([2, 3])`` or ``f(torch.Size)`` as a tuple of ints."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = args[0]
    for a in args:
        if a.__class__ is not int:
            break
    else:  # plain ints (the common call): nothing to convert
        return tuple(args)
    out = []
    for a in args:
        if isinstance(a, int) and type(a) is not bool:  # a symbolic size stays symbolic
            out.append(a)
            continue
        if isinstance(a, Tensor) and a.dtype.category > 1:
            raise TypeError(f"{name} must be tuple of ints, but found element of type Tensor")
        try:
            out.append(a.__index__())
        except AttributeError:
            raise TypeError(f"{name} must be tuple of ints, but found element of type "
                            f"{type(a).__name__}") from None
    return tuple(out)


def _inplace_view(op, self: Tensor, **params) -> Tensor:
    """``self`` takes the geometry of ``op``'s view of it (t_, squeeze_, as_strided_, ...):
    torch's leaf check, a version bump, and the view's node as self's history."""
    dispatch.check_inplace(self)
    r = _call(op, self, **params)
    m = dispatch.mode
    if m is not None and hasattr(m, "inplace_view"):  # a tracer: self stands for the view now
        return m.inplace_view(self, r)
    self._a = r._a
    dispatch.bump_version(self)
    if r.grad_fn is not None:
        self.grad_fn, self._output_nr = r.grad_fn, r._output_nr
    return self


# -- view ops -------------------------------------------------------------------------------

def view(self: Tensor, *shape, size=None, dtype=None) -> Tensor:
    """A view with a new shape (one -1 inferred); strides must allow it, else use reshape.
    ``view(dtype)`` reads the same bytes as another dtype."""
    if dtype is not None or len(shape) == 1 and isinstance(shape[0], _dt.dtype):
        return _call(V.view_dtype_op, self, dtype=dtype if dtype is not None else shape[0])
    return _view(V.view_op, self, shape=_ints(shape if size is None else (size,)))


def view_as(self: Tensor, other: Tensor) -> Tensor:
    return _view(V.view_op, self, shape=other._a.shape)


def _tensor_arg(x, fn: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not {type_name(x)}")


def view_as_real(input: Tensor) -> Tensor:
    """A complex tensor as real (real, imag) pairs in a new last dim, sharing its storage (a
    write through either shows in the other), e.g. to hand complex data to real-only code.

    >>> import jtorch as torch
    >>> torch.view_as_real(torch.tensor([1 + 2j]))
    tensor([[1., 2.]])
    """
    _tensor_arg(input, "view_as_real")
    return _call(V.view_as_real_op, input)


@_amp.fp32_op
def view_as_complex(input: Tensor) -> Tensor:
    """The inverse of view_as_real: a last dim of two reals read as one complex number, over
    the same storage.

    >>> import jtorch as torch
    >>> torch.view_as_complex(torch.tensor([[1.0, 2.0]]))
    tensor([1.+2.j])
    """
    _tensor_arg(input, "view_as_complex")
    return _call(V.view_as_complex_op, input)


def reshape(input: Tensor, shape) -> Tensor:
    """A view when the strides allow it (torch's rule), else a contiguous copy.

    >>> jtorch.arange(6).reshape(2, 3).t().reshape(6)
    tensor([0, 3, 1, 4, 2, 5])
    """
    return _view(V.view_op, input, shape=_ints((shape,) if isinstance(shape, int) else shape),
                 reshape=True)


def _reshape_method(self: Tensor, *shape_args, shape=None) -> Tensor:
    """``x.reshape(2, 3)``, ``x.reshape((2, 3))`` or ``x.reshape(shape=(2, 3))``."""
    return _view(V.view_op, self, shape=_ints(shape_args if shape is None else (shape,)),
                 reshape=True)


def _reshape_as_method(self: Tensor, other: Tensor) -> Tensor:
    return _view(V.view_op, self, shape=other._a.shape, reshape=True)


def permute(input: Tensor, *dims) -> Tensor:
    return _view(V.permute_op, input, dims=_ints(dims, "dims"))


def _permute_method(self: Tensor, *dims_args, dims=None) -> Tensor:
    """``x.permute(1, 0)``, ``x.permute((1, 0))`` or ``x.permute(dims=(1, 0))``."""
    return permute(self, *(dims_args if dims is None else (dims,)))


def transpose(input: Tensor, dim0: int, dim1: int) -> Tensor:
    return _view(V.transpose_op, input, dim0=dim0, dim1=dim1)


swapaxes = swapdims = transpose


def t(input: Tensor) -> Tensor:
    return _view(V.t_op, input)


def transpose_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return _inplace_view(V.transpose__op, self, dim0=dim0, dim1=dim1)


def t_(self: Tensor) -> Tensor:
    return _inplace_view(V.t__op, self)


def _axis(dim, axis, name: str):
    """torch's argument parser takes ``axis=`` for a required ``dim``."""
    if axis is not None:
        return axis
    if dim is None:
        raise TypeError(f"{name}() missing 1 required positional argument: 'dim'")
    return dim


def squeeze(input: Tensor, dim=None, *, axis=None) -> Tensor:
    return _call(V.squeeze_op, input, dim=dim if axis is None else axis)


def unsqueeze(input: Tensor, dim: int | None = None, *, axis=None) -> Tensor:
    return _call(V.unsqueeze_op, input, dim=_axis(dim, axis, "unsqueeze"))


def squeeze_(self: Tensor, dim=None, *, axis=None) -> Tensor:
    return _inplace_view(V.squeeze__op, self, dim=dim if axis is None else axis)


def unsqueeze_(self: Tensor, dim: int | None = None, *, axis=None) -> Tensor:
    return _inplace_view(V.unsqueeze__op, self, dim=_axis(dim, axis, "unsqueeze_"))


def expand(self: Tensor, *sizes, size=None) -> Tensor:
    """A broadcast view: size-1 dims (and new leading dims) get stride 0; -1 keeps a size."""
    return _call(V.expand_op, self, size=_ints(sizes if size is None else (size,)))


def _expand_as_method(self: Tensor, other: Tensor) -> Tensor:
    return _call(V.expand_op, self, size=other._a.shape)


def broadcast_to(input: Tensor, size) -> Tensor:
    return _call(V.expand_op, input, size=_ints((size,) if isinstance(size, int) else size))


def broadcast_tensors(*tensors) -> tuple:
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    shape = tuple(broadcast_shapes(*[x._a.shape for x in tensors]))
    return tuple(_call(V.expand_op, x, size=shape) for x in tensors)


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
    n = 1
    for k in shape[s:e + 1]:
        n *= k
    return reshape(input, shape[:s] + (n,) + shape[e + 1:])


def _flatten_method(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    return flatten(self, start_dim, end_dim)


def unflatten(input: Tensor, dim: int, sizes) -> Tensor:
    shape = input._a.shape
    d = wrap_dim(dim, input._a.ndim)
    sizes = _ints((sizes,) if isinstance(sizes, int) else sizes, "sizes")
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    n = shape[d] if shape else 1
    if sizes.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    known = 1
    for s in sizes:
        if s != -1:
            known *= s
    if -1 in sizes:
        if known == 0 or n % known:
            raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                               f"size of dim {d} ({n}) in the input tensor")
        sizes = tuple(n // known if s == -1 else s for s in sizes)
    elif known != n:
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the size "
                           f"of dim {d} ({n}) in the input tensor")
    return reshape(input, shape[:d] + sizes + shape[d + 1:])


def _unflatten_method(self: Tensor, dim: int, sizes) -> Tensor:
    return unflatten(self, dim, sizes)


def narrow(input: Tensor, dim: int | None = None, start=None, length: int | None = None, *,
           axis=None) -> Tensor:
    dim = _axis(dim, axis, "narrow")
    if start is None or length is None:
        raise TypeError("narrow() missing required arguments: 'start' and 'length'")
    if input._a.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    return _call(V.narrow_op, input, dim=dim, start=start.__index__(), length=length.__index__())


def select(input: Tensor, dim: int | None = None, index: int | None = None, *,
           axis=None) -> Tensor:
    dim = _axis(dim, axis, "select")
    if index is None:
        raise TypeError("select() missing 1 required positional argument: 'index'")
    if input._a.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    return _call(V.select_op, input, dim=dim, index=index.__index__())


def unbind(input: Tensor, dim: int = 0, *, axis=None) -> tuple:
    return _call(V.unbind_op, input, dim=dim if axis is None else axis)


def split(tensor: Tensor, split_size_or_sections, dim: int = 0) -> tuple:
    """Pieces of ``split_size`` (the last may be smaller) or of the given section sizes."""
    if isinstance(split_size_or_sections, (list, tuple)):
        if tensor._a.ndim == 0:
            raise RuntimeError("split expects at least a 1-dimensional tensor")
        return _call(V.split_with_sizes_op, tensor,
                     split_sizes=_ints(split_size_or_sections, "split_sizes"), dim=dim)
    if tensor._a.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    return _call(V.split_op, tensor, split_size=split_size_or_sections.__index__(), dim=dim)


def _split_method(self: Tensor, split_size, dim: int = 0) -> tuple:
    return split(self, split_size, dim)


def _split_with_sizes_method(self: Tensor, split_sizes, dim: int = 0) -> tuple:
    return split(self, list(split_sizes), dim)


def chunk(input: Tensor, chunks: int, dim: int = 0, *, axis=None) -> tuple:
    return _call(V.chunk_op, input, chunks=chunks, dim=dim if axis is None else axis)


def _chunk_method(self: Tensor, chunks: int, dim: int = 0, *, axis=None) -> tuple:
    return chunk(self, chunks, dim if axis is None else axis)


def _slice(input: Tensor, d: int, start: int, end: int) -> Tensor:
    return _call(V.slice_op, input, dim=d, start=start, end=end)


def tensor_split(input: Tensor, indices_or_sections, dim: int = 0, *, axis=None) -> tuple:
    """Slices at the given indices, or ``sections`` near-equal slices (torch's composition of
    ``slice``: one node per piece)."""
    dim = dim if axis is None else axis
    if input._a.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    d = wrap_dim(dim, input._a.ndim)
    n = input._a.shape[d]
    ios = indices_or_sections
    if isinstance(ios, Tensor):  # an argument given as a CPU tensor of ints
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


def _tensor_split_method(self: Tensor, indices_or_sections, dim: int = 0, *, axis=None) -> tuple:
    return tensor_split(self, indices_or_sections, dim if axis is None else axis)


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


def movedim(input: Tensor, source, destination) -> Tensor:
    """A permute that moves the ``source`` dims to ``destination`` (the rest keep their order)."""
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
    if nd == 0:
        return _call(V.permute_op, input, dims=())
    order = [-1] * nd
    for a, b in zip(s, e):
        order[b] = a
    rest = iter(d for d in range(nd) if d not in s)
    order = [next(rest) if o == -1 else o for o in order]
    return _call(V.permute_op, input, dims=tuple(order))


moveaxis = movedim


def _int_tuple(fn: str, name: str, value, pos: int | None):
    """torch's parser: a tuple-of-ints argument given as one int (or anything not a sequence) is
    a TypeError naming the argument, with its position when passed positionally."""
    if isinstance(value, (tuple, list)):
        return value
    where = "" if pos is None else f" (position {pos})"
    raise TypeError(f"{fn}(): argument '{name}'{where} must be tuple of ints, not "
                    f"{type_name(value)}")


def _strided_args(size, stride, storage_offset, fn: str, pos: int) -> dict:
    if storage_offset is not None and not isinstance(storage_offset, int):
        if not hasattr(storage_offset, "__index__") or isinstance(storage_offset, Tensor) \
                and storage_offset.dtype.category > 1:
            raise TypeError(f"{fn}(): argument 'storage_offset' (position {pos + 2}) must be int, "
                            f"not {type_name(storage_offset)}")
    return {"size": _ints(_int_tuple(fn, "size", size, pos)),
            "stride": _ints(_int_tuple(fn, "stride", stride, pos + 1), "stride"),
            "storage_offset": None if storage_offset is None else storage_offset.__index__()}


def as_strided(input: Tensor, size, stride, storage_offset=None) -> Tensor:
    return _call(V.as_strided_op, input, **_strided_args(size, stride, storage_offset,
                                                          "as_strided", 2))


def _as_strided_method(self: Tensor, size, stride, storage_offset=None) -> Tensor:
    return _call(V.as_strided_op, self, **_strided_args(size, stride, storage_offset,
                                                         "as_strided", 1))


def as_strided_(self: Tensor, size, stride, storage_offset=None) -> Tensor:
    return _inplace_view(V.as_strided__op, self, **_strided_args(size, stride, storage_offset,
                                                                  "as_strided_", 1))


def diagonal(input: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return _call(V.diagonal_op, input, offset=offset, dim1=dim1, dim2=dim2)


def _diagonal_method(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    return diagonal(self, offset, dim1, dim2)


def unfold(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
    """A view of every ``size``-long slice along ``dimension`` taken ``step`` apart, the slices
    in a new last dim."""
    return _call(V.unfold_op, self, dimension=dimension, size=size, step=step)


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

def _tensor_list(tensors, name: str):
    """The tensors of a list argument (a list or tuple of them, as torch's parser takes)."""
    c = tensors.__class__
    if c is not list and c is not tuple:
        if isinstance(tensors, Tensor) or not isinstance(tensors, Sequence):
            raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                            f"not {type(tensors).__name__}")
        tensors = list(tensors)
    for x in tensors:  # one class check per tensor (stack/cat of 64 samples: the hot loop)
        if x.__class__ is not Tensor and not isinstance(x, Tensor):
            i = next(i for i, x in enumerate(tensors) if not isinstance(x, Tensor))
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type_name(tensors[i])}")
    return tensors


def cat(tensors, dim: int = 0, *, axis=None, out=None) -> Tensor:
    """Concatenate along ``dim``, promoting dtypes; 1-D empty tensors are skipped (legacy).

    >>> jtorch.cat([jtorch.tensor([1, 2]), jtorch.tensor([3.5])])
    tensor([1.0000, 2.0000, 3.5000])
    """
    tensors = _tensor_list(tensors, "cat")
    if _amp.on and out is None:  # CPU autocast's promote list
        tensors = _amp.promote("cpu", *tensors)
    res = _call(M.cat_op, *tensors, dim=dim if axis is None else axis,
                out_dtype=None if out is None else out.dtype)
    return _finish(out, res, "cat")


concat = concatenate = cat


def stack(tensors, dim: int = 0, *, axis=None, out=None) -> Tensor:
    tensors = _tensor_list(tensors, "stack")
    if _amp.on and out is None:
        tensors = _amp.promote("cpu", *tensors)
    res = _call(M.stack_op, *tensors, dim=dim if axis is None else axis,
                out_dtype=None if out is None else out.dtype)
    return _finish(out, res, "stack")


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


_NO_DIMS = object()


def _dims_arg(fn: str, dims, pos: int | None) -> tuple:
    if dims is _NO_DIMS:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "dims"')
    return tuple(_int_tuple(fn, "dims", dims, pos))


def _method_dims(fn: str, dims_args: tuple, dims) -> tuple:
    """``x.flip(0, 1)``, ``x.flip((0, 1))`` or ``x.flip(dims=(0, 1))``."""
    if dims is not _NO_DIMS:
        return _dims_arg(fn, dims, None)
    if not dims_args:
        return _dims_arg(fn, _NO_DIMS, None)
    if len(dims_args) == 1 and not isinstance(dims_args[0], int):
        return _dims_arg(fn, dims_args[0], 1)
    return dims_args


def flip(input: Tensor, dims=_NO_DIMS) -> Tensor:
    """A reversed copy along ``dims`` (a kernel reading with negative strides)."""
    return _call(M.flip_op, input, dims=_dims_arg("flip", dims, 2))


def _flip_method(self: Tensor, *dims_args, dims=_NO_DIMS) -> Tensor:
    return _call(M.flip_op, self, dims=_method_dims("flip", dims_args, dims))


def fliplr(input: Tensor) -> Tensor:
    if input._a.ndim < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input: Tensor) -> Tensor:
    if input._a.ndim < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


def roll(input: Tensor, shifts, dims=None) -> Tensor:
    """Rotate along ``dims`` by ``shifts`` (flattened first when dims is None): block copies."""
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is not None:
        dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return _call(M.roll_op, input, shifts=shifts, dims=dims)


def _roll_method(self: Tensor, shifts, dims=None) -> Tensor:
    return roll(self, shifts, dims)


def repeat(self: Tensor, *repeats_args, repeats=None) -> Tensor:
    """Tile the tensor ``repeats`` times per dim: one strided copy from a 0-stride view."""
    repeats = repeats_args if repeats is None else (repeats,)
    if not repeats:
        raise TypeError('repeat() missing 1 required positional arguments: "repeats"')
    return _call(M.repeat_op, self, repeats=_ints(repeats, "repeats"))


def tile(input: Tensor, dims=_NO_DIMS) -> Tensor:
    return _tile(input, _dims_arg("tile", dims, 2))


def _tile(input: Tensor, dims: tuple) -> Tensor:
    dims = _ints(dims, "dims")
    nd = input._a.ndim
    if len(dims) < nd:
        dims = (1,) * (nd - len(dims)) + dims
    return repeat(input, repeats=dims)  # () for a 0-d input: a copy


def _tile_method(self: Tensor, *dims_args, dims=_NO_DIMS) -> Tensor:
    return _tile(self, _method_dims("tile", dims_args, dims))


def tril(input: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    """The lower triangle (j - i <= diagonal) of the last two dims; the rest is zero."""
    return _finish(out, _call(M.tril_op, input, diagonal=diagonal.__index__()), "tril")


def triu(input: Tensor, diagonal: int = 0, *, out=None) -> Tensor:
    return _finish(out, _call(M.triu_op, input, diagonal=diagonal.__index__()), "triu")


def _tri_(op, self: Tensor, diagonal) -> Tensor:
    dispatch.check_inplace(self)
    return _call(op, self, diagonal=diagonal.__index__())


def _tril_method(self: Tensor, diagonal: int = 0) -> Tensor:
    return tril(self, diagonal)


def _triu_method(self: Tensor, diagonal: int = 0) -> Tensor:
    return triu(self, diagonal)


def _tril_inplace(self: Tensor, diagonal: int = 0) -> Tensor:
    return _tri_(M.tril__op, self, diagonal)


def _triu_inplace(self: Tensor, diagonal: int = 0) -> Tensor:
    return _tri_(M.triu__op, self, diagonal)


# -- compositions of the views and copies above (autograd follows their parts) ---------------


def _clone(t: Tensor) -> Tensor:
    """A row-major copy that autograd sees (clone), as torch's diag, rot90(k=0) and
    repeat_interleave make."""
    from .conversion import clone

    return clone(t, memory_format=_dt.contiguous_format)


def ravel(input: Tensor) -> Tensor:
    """The elements as a 1-D tensor: a view of a contiguous input, else a contiguous copy
    (torch's ``contiguous().view(-1)``, also where a strided view would fit)."""
    if not input.is_contiguous():
        input = input.contiguous()
    return reshape(input, (-1,))


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


def repeat_interleave(input: Tensor, repeats=None, dim: int | None = None, *, output_size=None,
                      axis=None) -> Tensor:
    """Repeat each element (or each slice along ``dim``) ``repeats`` times; with a tensor of
    repeats, element i is repeated repeats[i] times. ``repeat_interleave(repeats)`` alone gives
    the indices 0..n-1 repeated that way."""
    if axis is not None:
        dim = axis
    if repeats is None:
        return _repeat_indices(input, output_size)
    if dim is None:
        input, d = reshape(input, (-1,)), 0
    else:
        if input._a.ndim == 0 and isinstance(repeats, Tensor):  # torch's input.size(dim)
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = wrap_dim(dim, input._a.ndim)
    if isinstance(repeats, Tensor) and repeats._a.ndim == 0:
        repeats = int(repeats.item())
    if not isinstance(repeats, Tensor):
        if repeats < 0:
            raise RuntimeError("Repeats must be non-negative")
        shape = list(input._a.shape)  # a 0-d input with a dim: torch's unsqueeze error
        x = expand(unsqueeze(input, d + 1), *shape[: d + 1], repeats, *shape[d + 1:])
        res = reshape(x, (*shape[:d], shape[d] * repeats, *shape[d + 1:]))
        return res if res._st is not input._st else _clone(res)  # always a new tensor
    n = input._a.shape[d] if input._a.ndim else 1
    if repeats._a.ndim != 1 or repeats._a.shape[0] != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {repeats._a.size} and input.size({d}) = {n}")
    from .indexing import index_select

    return index_select(input, d, _repeat_indices(repeats, output_size))


def _repeat_indices(repeats: Tensor, output_size=None) -> Tensor:
    return _call(M.repeat_interleave_op, repeats,
                 output_size=None if output_size is None else output_size.__index__())


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

    out = zeros(m, m, dtype=input.dtype, device=input.device)
    globals()["diagonal"](out, diagonal).copy_(input)
    return out


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

    out = zeros(*[n if i in (d1, d2) else next(rest) for i in range(nd)], dtype=input.dtype,
                device=input.device)
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
    out = zeros(sum(b._a.shape[0] for b in blocks), sum(b._a.shape[1] for b in blocks), dtype=d,
                device=tensors[0].device)
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
        return empty(0, dtype=input.dtype, device=input.device)
    idx = meshgrid(*[arange(input._a.shape[0], device=input.device)] * r, indexing="ij")
    mask = None
    for a, b in zip(idx, idx[1:]):
        ok = a <= b if with_replacement else a < b
        mask = ok if mask is None else mask & ok
    grids = meshgrid(*[input] * r, indexing="ij")
    if mask is None:
        return stack([reshape(g, (-1,)) for g in grids], 1)
    return stack([g.masked_select(mask) for g in grids], 1)
