"""Tensor creation: from data, constant fills, ranges (arange, linspace, logspace), eye, the
``*_like`` and ``Tensor.new_*`` factories, complex and polar. Random creation lives in
ops/random.py. Every element loop is a compiled kernel (``kernels/cpu/fill.py``) or the
registry's copy kernel."""

from __future__ import annotations

import builtins
import math
import numbers
import warnings

import numpy as np

from .. import _allocator, dispatch
from .. import dtypes as _dt
from ..device import to_device
from ..kernels import registry
from ..kernels.cpu import fill as _fill
from ..kernels.defs import creation as C
from ..meta import MetaArray
from ..shape import as_shape, broadcast_shapes
from ..tensor import Tensor
from ._util import tensor_method
from .pointwise import _COPY

__all__ = [
    "arange",
    "as_tensor",
    "asarray",
    "complex",
    "empty",
    "empty_like",
    "empty_strided",
    "eye",
    "from_numpy",
    "full",
    "full_like",
    "is_tensor",
    "linspace",
    "logspace",
    "numel",
    "ones",
    "ones_like",
    "polar",
    "scalar_tensor",
    "tensor",
    "tril_indices",
    "triu_indices",
    "zeros",
    "zeros_like",
]


def _infer_dtype(arr: np.ndarray) -> _dt.dtype:
    kind = arr.dtype.kind
    if kind == "b":
        return _dt.bool
    if kind in "iu":
        return _dt.int64
    if kind == "f":
        return _dt.get_default_dtype()
    if kind == "c":
        return _dt.get_default_dtype().to_complex()
    if kind in "US":
        raise TypeError("new(): invalid data type 'str'")
    raise TypeError(f"Could not infer dtype of {type(arr).__name__}")


def _ragged_error(data) -> Exception:
    """torch's error for nested sequences of unequal lengths (sizes come from first items)."""
    sizes, x = [], data
    while isinstance(x, (list, tuple)):
        sizes.append(len(x))
        if not x:
            break
        x = x[0]

    def walk(x, dim):
        if dim == len(sizes):
            if isinstance(x, (list, tuple)):
                return TypeError(f"'{type(x).__name__}' object cannot be interpreted as an integer")
            return None
        if not isinstance(x, (list, tuple)):
            return TypeError("not a sequence")
        if len(x) != sizes[dim]:
            return ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(x)})")
        for y in x:
            err = walk(y, dim + 1)
            if err is not None:
                return err
        return None

    return walk(data, 0) or ValueError("expected a rectangular nested sequence")


def _to_numpy(data):
    """Nested Python data (numbers, lists, tensors) as a NumPy array and torch's dtype for it."""
    if isinstance(data, Tensor):
        return data._a, data.dtype
    if isinstance(data, np.ndarray):
        return data, _dt.from_numpy_dtype(data.dtype)
    if isinstance(data, np.generic):
        return np.asarray(data), _dt.from_numpy_dtype(data.dtype)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        parts = [_to_numpy(x) for x in data]
        d = parts[0][1]
        for _, pd in parts[1:]:
            d = _dt.promote_types(d, pd)
        try:
            return np.stack([p[0].astype(d.np) for p in parts]), d
        except ValueError as e:
            raise ValueError(f"expected sequence of equal-length items: {e}") from None
    if isinstance(data, str) or not isinstance(data, (numbers.Number, list, tuple)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    try:
        arr = np.array(data)
    except OverflowError as e:
        raise ValueError(str(e)) from None
    except ValueError:
        raise _ragged_error(data) from None
    if arr.dtype == object:
        if any(isinstance(v, int) and not isinstance(v, bool) for v in np.ravel(arr)):
            raise RuntimeError("Overflow when unpacking long")
        raise _ragged_error(data)
    if isinstance(data, (list, tuple)):
        leaves = _numpy_leaf_dtypes(data)
        if leaves:
            return arr, _promote_leaves(data, leaves)
    return arr, _infer_dtype(arr)


_SEQ = (list, tuple)


def _numpy_leaf_dtypes(data) -> set:
    """The dtypes of the NumPy scalars and arrays inside nested lists (empty if none): torch
    infers a type per element and promotes them, so ``[np.int32(1)]`` stays int32. One pass
    over the leaf types per innermost list (``set(map(type, ...))`` runs in C)."""
    found, stack = set(), [data]
    while stack:
        seq = stack.pop()
        kinds = set(map(type, seq))
        if list in kinds or tuple in kinds:
            stack.extend(x for x in seq if type(x) in _SEQ)
        for k in kinds:
            if issubclass(k, np.generic):
                found.add(np.dtype(k))
            elif issubclass(k, np.ndarray):
                found.update(x.dtype for x in seq if isinstance(x, np.ndarray))
    return found


def _promote_leaves(data, np_dtypes: set) -> _dt.dtype:
    """torch's dtype for nested data holding NumPy leaves: each leaf's own dtype (Python
    numbers as torch wraps them) promoted together."""
    ds = {_dt.from_numpy_dtype(d) for d in np_dtypes}
    stack = [data]
    while stack:  # the Python numbers' categories
        seq = stack.pop()
        for k in set(map(type, seq)):
            if k in _SEQ:
                stack.extend(x for x in seq if type(x) in _SEQ)
            elif not issubclass(k, (np.generic, np.ndarray)):
                ds.add(_dt.scalar_dtype(next(x for x in seq if type(x) is k)))
    res = None
    for d in ds:
        res = d if res is None else _dt.promote_types(res, d)
    return res


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """Copy ``data`` into a new tensor, inferring the dtype as torch does.

    >>> jtorch.tensor([1, 2]).dtype
    torch.int64
    """
    dev = to_device(device)
    arr, inferred = _to_numpy(data)
    d = inferred if dtype is None else _dt.to_dtype(dtype)
    if dev.type == "meta":
        return require_grad(dispatch.call(C.empty_op, size=arr.shape, dtype=d, device=dev),
                            requires_grad)
    out = _allocator.empty(arr.shape, d.np)
    _copy(out, arr)
    t = Tensor._make(out, None, d)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _copy(out: np.ndarray, src: np.ndarray) -> None:
    if src.dtype.kind == "c" and out.dtype.kind != "c":
        src = src.real
    np.copyto(out, src, casting="unsafe")


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Share memory with ``data`` when it is already a tensor/array of the right dtype."""
    if isinstance(data, Tensor):
        return data if dtype is None or _dt.to_dtype(dtype) is data.dtype else data.to(dtype)
    if (isinstance(data, np.ndarray) and (dtype is None or _dt.to_dtype(dtype).np == data.dtype)
            and all(s >= 0 for s in data.strides) and data.dtype in _dt._FROM_NP):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad: bool = False) -> Tensor:
    t = tensor(obj, dtype=dtype) if copy else as_tensor(obj, dtype=dtype)
    return t.requires_grad_(requires_grad) if requires_grad else t


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor sharing memory with ``ndarray`` (writes are seen on both sides)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    d = _dt.from_numpy_dtype(ndarray.dtype)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError(
            "At least one stride in the given numpy array is negative, and tensors with negative "
            "strides are not currently supported. (You can probably work around this by making a "
            "copy of your array  with array.copy().) "
        )
    if ndarray.dtype.byteorder == ">":
        raise ValueError("given numpy array has byte order different from the native byte order. "
                         "Conversion between byte orders is currently not supported.")
    isz = ndarray.itemsize
    span = 1 + sum((n - 1) * (s // isz) for n, s in zip(ndarray.shape, ndarray.strides)) \
        if ndarray.size else 0
    st = np.lib.stride_tricks.as_strided(ndarray, shape=(span,), strides=(isz,))
    return Tensor._make(ndarray, st, d)


# -- shared factory plumbing -----------------------------------------------------------------

arange_op = registry.extern("arange", differentiable=False)
linspace_op = registry.extern("linspace", differentiable=False)
logspace_op = registry.extern("logspace", differentiable=False)
eye_op = registry.extern("eye", differentiable=False)
complex_op = registry.extern("complex")


def _resolve(dtype, default=None) -> _dt.dtype:
    if dtype is None:
        return default or _dt.get_default_dtype()
    return _dt.to_dtype(dtype)


def _sizes(size: tuple, kwargs: dict, fn: str) -> tuple:
    """``f(2, 3)``, ``f((2, 3))``, ``f(size=(2, 3))``."""
    if "size" in kwargs:
        if size:
            raise TypeError(f"{fn}() got multiple values for argument 'size'")
        size = (kwargs.pop("size"),)
    if kwargs:
        raise TypeError(f"{fn}() got an unexpected keyword argument '{next(iter(kwargs))}'")
    return as_shape(size)


def factory_dtype(dtype, out, default: _dt.dtype | None = None) -> _dt.dtype:
    """The dtype of a factory call: ``dtype``, else ``out``'s, else ``default``."""
    if out is not None:
        if not isinstance(out, Tensor):
            raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
        if dtype is not None and _dt.to_dtype(dtype) is not out.dtype:
            raise RuntimeError(f"dtype {dispatch.torch_name(_dt.to_dtype(dtype))} does not match "
                               f"dtype of out parameter ({dispatch.torch_name(out.dtype)})")
        return out.dtype
    return _resolve(dtype, default)


def require_grad(t: Tensor, requires_grad: bool) -> Tensor:
    """Factory ``requires_grad=True`` (torch's factory wording of the dtype error)."""
    if requires_grad:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients")
        t._requires_grad = True
    return t


def _finish(a: np.ndarray, dtype: _dt.dtype, requires_grad: bool) -> Tensor:
    return require_grad(Tensor._make(a, None, dtype), requires_grad)


def copy_array(dst: np.ndarray, dst_dtype: _dt.dtype, src: Tensor) -> None:
    """dst[...] = src (broadcast, cast with torch's rules) through the registry copy kernel."""
    s = src.dtype
    if dst_dtype is _dt.bool or s is _dt.bool:
        compute = dst_dtype if dst_dtype is not _dt.float16 else _dt.float32
    elif s.category == dst_dtype.category:
        compute = _dt.promote_types(s, dst_dtype)
    else:
        compute = dst_dtype
    dispatch.run_pointwise(_COPY, (src,), dst, compute, dst_dtype)


def resize(t: Tensor, shape: tuple) -> None:
    """Give ``t`` fresh contiguous memory of ``shape`` (factories resize ``out`` silently)."""
    if t._a.__class__ is MetaArray:
        t._a = t._st = MetaArray(tuple(shape), t.dtype.np)
        return
    fresh = _allocator.empty(shape, t.dtype.np)
    t._a, t._st = fresh, fresh.reshape(-1)


def deliver(res: Tensor, out, requires_grad: bool = False, keep_numel: bool = False) -> Tensor:
    """Return ``res``, or copy it into ``out`` (resized to ``res``'s shape unless
    ``keep_numel`` and the element counts agree, as torch's range factories do)."""
    if out is not None:
        shape = res._a.shape
        if out._a.shape != shape:
            if keep_numel and out._a.size == res._a.size:
                res = Tensor._make(res._a.reshape(out._a.shape), None, res.dtype)
            else:
                resize(out, shape)
        if out._a.size:
            copy_array(out._a, out.dtype, res)
        dispatch.bump_version(out)
        res = out
    return require_grad(res, requires_grad)


def _size_arg(x, fn: str, name: str, pos: int) -> int:
    if isinstance(x, (bool, float)) or not hasattr(x, "__index__"):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be int, not "
                        f"{type(x).__name__}")
    return x.__index__()


def _number(x, fn: str, name: str, pos: int):
    """A Python number from a number, NumPy scalar or 0-d tensor argument."""
    if isinstance(x, Tensor):
        if x._a.ndim == 0:
            return x.item()
    elif isinstance(x, np.generic):
        return x.item()
    elif isinstance(x, numbers.Number):
        return x
    raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Number, not "
                    f"{type(x).__name__}")


def _fmt(x: float) -> str:
    """A double as C++ streams print it (torch's error messages)."""
    return f"{x:g}"


# -- constant fills --------------------------------------------------------------------------

def check_layout(layout, fn: str) -> None:
    """``layout`` must be None or ``jtorch.strided`` (the only layout jtorch stores)."""
    if layout is None or layout is _dt.strided:
        return
    if not isinstance(layout, _dt.layout):
        raise TypeError(f"{fn}(): argument 'layout' must be torch.layout, not {type(layout).__name__}")
    raise NotImplementedError(f"{fn}(): layout {layout!r} is not supported; jtorch tensors are "
                              f"torch.strided")


def empty(*size, dtype=None, device=None, requires_grad: bool = False, out=None, layout=None,
          pin_memory: bool = False, memory_format=None, **kwargs) -> Tensor:
    dev = to_device(device)
    check_layout(layout, "empty")
    shape = _sizes(size, kwargs, "empty")
    d = factory_dtype(dtype, out)
    fmt = _dt.check_memory_format(memory_format, "empty")
    if fmt is _dt.preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    strides = _dt.format_strides(shape, fmt)
    if out is not None:
        if out._a.shape != shape:
            resize(out, shape)
        return require_grad(out, requires_grad)
    return require_grad(dispatch.call(C.empty_op, size=shape, dtype=d, device=dev,
                                      strides=strides), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False, out=None,
         layout=None, pin_memory: bool = False) -> Tensor:
    """A tensor filled with ``fill_value``; the dtype is inferred from it when not given.

    >>> jtorch.full((2,), 3).dtype
    torch.int64
    """
    dev = to_device(device)
    check_layout(layout, "full")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    default = _dt.scalar_dtype(fill_value) if dtype is None and out is None else None
    d = factory_dtype(dtype, out, default)
    shape = as_shape((size,) if isinstance(size, int) else tuple(size))
    return _filled(shape, d, fill_value, out, requires_grad, dev)


def _filled(shape: tuple, d: _dt.dtype, value, out, requires_grad: bool, dev) -> Tensor:
    if out is not None:
        if out._a.shape != shape:
            resize(out, shape)
        _fill_tensor(out, value)
        dispatch.bump_version(out)
        return require_grad(out, requires_grad)
    return require_grad(dispatch.call(C.full_op, size=shape, dtype=d, device=dev,
                                      fill_value=value), requires_grad)


def _fill_tensor(t: Tensor, value) -> None:
    if t._a.__class__ is MetaArray:
        return
    if t._a.flags.c_contiguous:
        fill_array(t._a, value)
    elif t._a.size:
        dispatch.run_pointwise(_COPY, (value,), t._a, t.dtype)


def fill_array(a: np.ndarray, value) -> None:
    """Write ``value`` into every element of a contiguous array with a compiled fill loop."""
    if a.size == 0:
        return
    _fill.fill(a, value)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False, out=None, layout=None,
          pin_memory: bool = False, **kwargs) -> Tensor:
    dev = to_device(device)
    check_layout(layout, "zeros")
    shape = _sizes(size, kwargs, "zeros")
    d = factory_dtype(dtype, out)
    if out is None:
        return require_grad(dispatch.call(C.zeros_op, size=shape, dtype=d, device=dev),
                            requires_grad)
    return _filled(shape, d, 0, out, requires_grad, dev)


def ones(*size, dtype=None, device=None, requires_grad: bool = False, out=None, layout=None,
         pin_memory: bool = False, **kwargs) -> Tensor:
    dev = to_device(device)
    check_layout(layout, "ones")
    shape = _sizes(size, kwargs, "ones")
    return _filled(shape, factory_dtype(dtype, out), 1, out, requires_grad, dev)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return full((), s, dtype=_resolve(dtype), device=device, requires_grad=requires_grad)


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()


# -- *_like and new_* ------------------------------------------------------------------------

def _dense_strides(a: np.ndarray) -> tuple | None:
    """``a``'s element strides if it is non-overlapping and dense (a permuted contiguous
    layout), else None; such layouts are what ``preserve_format`` keeps."""
    isz = a.itemsize
    dims = [(s // isz, n) for s, n in zip(a.strides, a.shape) if n != 1]
    expected = 1
    for s, n in sorted(dims):
        if s != expected:
            return None
        expected *= n
    return tuple(s // isz for s in a.strides)


def alloc_strided(shape: tuple, strides: tuple, d: _dt.dtype, device=None) -> Tensor:
    """An uninitialised tensor with the given element strides over fresh storage."""
    return dispatch.call(C.empty_op, size=tuple(shape), dtype=d, device=to_device(device),
                         strides=tuple(strides))


def _like_strides(input: Tensor, memory_format, fn: str) -> tuple | None:
    """Element strides of a fresh tensor like ``input`` (None: row-major): ``preserve_format``
    (the default) keeps the strides of a dense permuted input, ``channels_last`` /
    ``channels_last_3d`` give those stride orders, ``contiguous_format`` is row-major."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    a = input._a
    fmt = _dt.check_memory_format(memory_format, fn)
    if fmt is not None and fmt is not _dt.preserve_format:
        return _dt.format_strides(a.shape, fmt)
    if a.flags.c_contiguous:
        return None
    return _dense_strides(a)


def _like_device(input: Tensor, device):
    return input.device if device is None else to_device(device)


def like(input: Tensor, dtype, memory_format=None, fn: str = "empty_like", device=None) -> Tensor:
    """An uninitialised tensor shaped like ``input`` (see ``_like_strides``)."""
    strides = _like_strides(input, memory_format, fn)
    d = input.dtype if dtype is None else _dt.to_dtype(dtype)
    return dispatch.call(C.empty_op, size=input._a.shape, dtype=d,
                         device=_like_device(input, device), strides=strides)


def empty_like(input: Tensor, *, dtype=None, layout=None, device=None,
               requires_grad: bool = False, memory_format=None) -> Tensor:
    check_layout(layout, "empty_like")
    return require_grad(like(input, dtype, memory_format, device=device), requires_grad)


def full_like(input: Tensor, fill_value, *, dtype=None, layout=None, device=None,
              requires_grad: bool = False, memory_format=None) -> Tensor:
    """A tensor like ``input`` (its dtype unless ``dtype`` is given) filled with a value."""
    check_layout(layout, "full_like")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    strides = _like_strides(input, memory_format, "full_like")
    d = input.dtype if dtype is None else _dt.to_dtype(dtype)
    t = dispatch.call(C.full_op, size=input._a.shape, dtype=d, device=_like_device(input, device),
                      strides=strides, fill_value=fill_value)
    return require_grad(t, requires_grad)


def zeros_like(input: Tensor, *, dtype=None, layout=None, device=None,
               requires_grad: bool = False, memory_format=None) -> Tensor:
    return full_like(input, 0, dtype=dtype, layout=layout, device=device,
                     requires_grad=requires_grad, memory_format=memory_format)


def ones_like(input: Tensor, *, dtype=None, layout=None, device=None,
              requires_grad: bool = False, memory_format=None) -> Tensor:
    return full_like(input, 1, dtype=dtype, layout=layout, device=device,
                     requires_grad=requires_grad, memory_format=memory_format)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    dev = to_device(device)
    shape, strides = as_shape(tuple(size)), tuple(int(s) for s in stride)
    if len(shape) != len(strides):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality "
                           f"of strides ({len(strides)})")
    if any(s < 0 for s in strides):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} and "
                           f"strides={list(strides)}")
    return require_grad(alloc_strided(shape, strides, _resolve(dtype), dev), requires_grad)


def _new_factory(fn):
    def method(self, *size, dtype=None, device=None, requires_grad: bool = False, layout=None,
               pin_memory: bool = False, **kwargs):
        return fn(*size, dtype=self.dtype if dtype is None else dtype,
                  device=self.device if device is None else device,
                  requires_grad=requires_grad, **kwargs)

    method.__name__ = "new_" + fn.__name__
    return method


Tensor.new_empty = _new_factory(empty)
Tensor.new_zeros = _new_factory(zeros)
Tensor.new_ones = _new_factory(ones)


@tensor_method()
def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False,
             layout=None, pin_memory: bool = False) -> Tensor:
    return full(size, fill_value, dtype=self.dtype if dtype is None else dtype,
                device=self.device if device is None else device, requires_grad=requires_grad)


@tensor_method()
def new_empty_strided(self, size, stride, *, dtype=None, device=None,
                      requires_grad: bool = False, layout=None, pin_memory: bool = False):
    return empty_strided(size, stride, dtype=self.dtype if dtype is None else dtype,
                         device=self.device if device is None else device,
                         requires_grad=requires_grad)


# -- ranges ----------------------------------------------------------------------------------

def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """Values ``start + i * step`` for ``i`` in ``[0, ceil((end - start) / step))``; int64 when
    every argument is an integer, else the default float dtype. Values match torch's bit for
    bit (including its float32 vector-lane rounding).

    >>> jtorch.arange(0, 1, 0.25)
    tensor([0.0000, 0.2500, 0.5000, 0.7500])
    """
    to_device(device)
    if end is None:
        start, end = 0, start
    start = _number(start, "arange", "start", 0)
    end = _number(end, "arange", "end", 1)
    step = _number(step, "arange", "step", 2)
    args = (start, end, step)
    if any(isinstance(x, builtins.complex) for x in args):
        raise RuntimeError("value cannot be converted to type double without overflow")
    inferred = _dt.get_default_dtype() if any(isinstance(x, float) for x in args) else _dt.int64
    d = factory_dtype(dtype, out, inferred)
    if d is _dt.bool or d.is_complex:
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{dispatch.torch_name(d)}\'')
    n = _arange_size(start, end, step, d)
    res = dispatch.empty_tensor((n,), d)
    if n:
        _arange_values(res, start, step)
    if out is not None and out._a.size not in (0, n):
        warnings.warn(
            f"The number of elements in the out tensor of shape {list(out._a.shape)} is "
            f"{out._a.size} which does not match the computed number of elements {n}. Note "
            f"that this may occur as a result of rounding error. The out tensor will be "
            f"resized to a tensor of shape ({n},).", UserWarning, stacklevel=2)
    return dispatch.record(arange_op, (), deliver(res, out, requires_grad, keep_numel=True))


def _arange_size(start, end, step, d: _dt.dtype) -> int:
    """torch's ``compute_arange_size``: checks in double, the count exact for int64."""
    ds, de, dstep = float(start), float(end), float(step)
    if dstep == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(ds) and math.isfinite(de)):
        raise RuntimeError(f"unsupported range: {_fmt(ds)} -> {_fmt(de)}")
    if not ((dstep > 0 and de >= ds) or (dstep < 0 and de <= ds)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if d is _dt.int64:
        xs, xe, xst = _int64(start), _int64(end), _int64(step)
        if xst == 0:
            raise ValueError("step must be nonzero")
        num = xe - xs + xst - (1 if xst > 0 else -1)
        size = abs(num) // abs(xst) * (1 if (num >= 0) == (xst > 0) else -1)
        size_d = float(size)
    else:
        size_d = math.ceil((de - ds) / dstep)
    if not 0 <= size_d <= 9.223372036854775807e18:
        raise RuntimeError("invalid size, possible overflow?")
    return int(size_d)


def _int64(x) -> int:
    """Scalar.to<int64_t>(): truncation toward zero, with torch's overflow error."""
    v = int(x)
    if not -(1 << 63) <= v < 1 << 63:
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return v


def _arange_values(res: Tensor, start, step) -> None:
    d, a = res.dtype, res._a
    if d is _dt.float32 or d is _dt.float64:
        _fill.arange_float(a, float(start), float(step))
    elif d is _dt.float16:
        tmp = np.empty(a.shape, np.float32)
        _fill.arange_half(tmp, float(start), float(step))
        copy_array(a, d, Tensor._make(tmp))
    elif d is _dt.int64:
        _fill.arange_int(a, _int64(start), _int64(step))
    else:  # narrower integers: ATen accumulates in int64, then casts (wrapping)
        tmp = np.empty(a.shape, np.int64)
        _fill.arange_int(tmp, _int64(start), _int64(step))
        copy_array(a, d, Tensor._make(tmp))


def _range_endpoints(fn: str, start, end) -> tuple:
    """linspace/logspace start and end: numbers or 0-d tensors (torch's errors otherwise)."""
    bad = [(n, x) for n, x in (("start", start), ("end", end))
           if isinstance(x, Tensor) and x._a.ndim != 0]
    if bad:
        got = " and ".join(f"{n} with {x._a.ndim} dimension(s)" for n, x in bad)
        raise RuntimeError(f"{fn} only supports 0-dimensional start and end tensors, but got "
                           f"{got}.")
    return _number(start, fn, "start", 1), _number(end, fn, "end", 2)


def _steps_arg(steps, fn: str, args) -> int:
    if isinstance(steps, (bool, float)) or not hasattr(steps, "__index__"):
        got = ", ".join(type(x).__name__ for x in args)
        raise TypeError(f"{fn}() received an invalid combination of arguments - got ({got}), "
                        f"but expected one of: (start, end, steps)")
    steps = steps.__index__()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return steps


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` values evenly spaced from ``start`` to ``end`` inclusive, computed from both
    ends as torch does (bit-identical for float32/float64).

    >>> jtorch.linspace(0, 1, 5)
    tensor([0.0000, 0.2500, 0.5000, 0.7500, 1.0000])
    """
    to_device(device)
    n = _steps_arg(steps, "linspace", (start, end, steps))
    start, end = _range_endpoints("linspace", start, end)
    cplx = isinstance(start, builtins.complex) or isinstance(end, builtins.complex)
    default = _dt.get_default_dtype()
    d = factory_dtype(dtype, out, default.to_complex() if cplx else default)
    if d is _dt.bool:
        raise NotImplementedError('"linspace_cpu" not implemented for \'Bool\'')
    res = dispatch.empty_tensor((n,), d)
    if n == 1:
        _fill_tensor(res, start if d.is_complex else _real(start, d))
    elif n > 1:
        _linspace_values(res, start, end, n)
    return dispatch.record(linspace_op, (), deliver(res, out, requires_grad, keep_numel=True))


def _real(x, d: _dt.dtype):
    """Scalar.to<scalar_t>() of a real dtype: the real part, truncated for integers."""
    x = x.real if isinstance(x, builtins.complex) else x
    return int(x) if d.category < 2 else float(x)


def _linspace_values(res: Tensor, start, end, n: int) -> None:
    d, a = res.dtype, res._a
    if d.is_complex:  # real and imaginary parts as two real linspaces
        rd = d.to_real()
        s, e = builtins.complex(start), builtins.complex(end)
        parts = []
        for lo, hi in ((s.real, e.real), (s.imag, e.imag)):
            part = dispatch.empty_tensor((n,), rd)
            _linspace_values(part, lo, hi, n)
            parts.append(part)
        _interleave(a, *parts)
    elif d is _dt.float32 or d is _dt.float64:
        t = d.np.type
        s, e = t(_real(start, d)), t(_real(end, d))
        _fill.linspace(a, s, e, (e - s) / t(n - 1))
    elif d is _dt.float16:
        _linspace_half(a, start, end, n)
    else:  # integers: the step in double, values truncated toward zero
        s, e = float(_real(start, d)), float(_real(end, d))
        tmp = np.empty(n, np.float64)
        _fill.linspace(tmp, s, e, (e - s) / (n - 1))
        copy_array(a, d, Tensor._make(tmp))


def _linspace_half(a: np.ndarray, start, end, n: int) -> None:
    """ATen's Half linspace rounds every operation to half: start + step * half(i) from the
    front, end - step * half(n - 1 - i) from the back; float16 pointwise ops do the same."""
    from .pointwise import add, mul, rsub

    h = np.float16
    s, e = h(_real(start, _dt.float16)), h(_real(end, _dt.float16))
    step = float(h(np.float32(h(e - s)) / np.float32(h(n - 1))))
    half = n // 2
    front = mul(arange(0, half, dtype=_dt.float16), step)
    back = mul(arange(n - 1 - half, -1, -1, dtype=_dt.float16), step)
    copy_array(a[:half], _dt.float16, add(front, float(s)))
    copy_array(a[half:], _dt.float16, rsub(back, float(e)))


def logspace(start, end, steps, base: float = 10.0, *, out=None, dtype=None, layout=None,
             device=None, requires_grad: bool = False) -> Tensor:
    """``base ** linspace(start, end, steps)``, computed in double as torch does.

    >>> jtorch.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    """
    to_device(device)
    n = _steps_arg(steps, "logspace", (start, end, steps))
    start, end = _range_endpoints("logspace", start, end)
    d = factory_dtype(dtype, out)
    if d is _dt.bool or d.is_complex:
        raise NotImplementedError(f'"logspace_cpu" not implemented for '
                                  f'\'{dispatch.torch_name(d)}\'')
    res = dispatch.empty_tensor((n,), d)
    base = float(base)
    if n == 1:
        _fill_tensor(res, base ** float(_real(start, _dt.float64)))
    elif n > 1:
        s, e = _real(start, d), _real(end, d)
        if d.is_floating_point:  # scalar_t endpoints; their difference in scalar_t
            t = d.np.type
            s, e = t(s), t(e)
            diff = float(e - s)
        else:
            diff = float(e - s)
        tmp = res._a if d is _dt.float32 or d is _dt.float64 else np.empty(n, np.float64)
        _fill.logspace(tmp, base, float(s), float(e), diff / (n - 1))
        if tmp is not res._a:
            copy_array(res._a, d, Tensor._make(tmp))
    return dispatch.record(logspace_op, (), deliver(res, out, requires_grad, keep_numel=True))


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None,
        requires_grad: bool = False) -> Tensor:
    """An ``n`` x ``m`` matrix with ones on the diagonal.

    >>> jtorch.eye(2, 3)
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    to_device(device)
    n = _size_arg(n, "eye", "n", 1)
    m = n if m is None else _size_arg(m, "eye", "m", 2)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    d = factory_dtype(dtype, out)
    a = _allocator.empty((n, m), d.np)
    fill_array(a, 0)
    k = min(n, m)
    if k:
        diag = np.lib.stride_tricks.as_strided(a, (k,), ((m + 1) * a.itemsize,))
        dispatch.run_pointwise(_COPY, (True if d is _dt.bool else 1,), diag, d)
    res = Tensor._make(a, None, d)
    return dispatch.record(eye_op, (), deliver(res, out, requires_grad))


# -- complex ---------------------------------------------------------------------------------

def _check_complex_parts(real, imag, fn: str) -> None:
    for x, name, pos in ((real, "real" if fn == "complex" else "abs", 1),
                         (imag, "imag" if fn == "complex" else "angle", 2)):
        if not isinstance(x, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                            f"{type(x).__name__}")
    floats = (_dt.float16, _dt.float32, _dt.float64)
    if real.dtype not in floats or imag.dtype not in floats:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{dispatch.torch_name(real.dtype)} and "
                           f"{dispatch.torch_name(imag.dtype)}")
    if real.dtype is not imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {dispatch.torch_name(real.dtype)} "
                           f"but got scalar type {dispatch.torch_name(imag.dtype)} for second "
                           f"argument")


def _interleave(dst: np.ndarray, real: Tensor, imag: Tensor) -> None:
    """Write ``real`` and ``imag`` (broadcast) into the contiguous complex array ``dst``."""
    rd = _dt.from_numpy_dtype(dst.real.dtype)
    pairs = dst.reshape(-1).view(rd.np).reshape(dst.shape + (2,))
    copy_array(pairs[..., 0], rd, real)
    copy_array(pairs[..., 1], rd, imag)


def complex(real: Tensor, imag: Tensor, *, out=None) -> Tensor:
    """``real + 1j * imag`` (float32 parts give complex64, float64 parts complex128).

    >>> jtorch.complex(jtorch.tensor([1.]), jtorch.tensor([2.]))
    tensor([1.+2.j])
    """
    _check_complex_parts(real, imag, "complex")
    shape = broadcast_shapes(real._a.shape, imag._a.shape)
    res = dispatch.empty_tensor(shape, real.dtype.to_complex())
    if res._a.size:
        _interleave(res._a, real, imag)
    return dispatch.record(complex_op, (real, imag), deliver(res, out))


def polar(abs: Tensor, angle: Tensor, *, out=None) -> Tensor:
    """``abs * (cos(angle) + 1j * sin(angle))``."""
    from . import pointwise as P

    _check_complex_parts(abs, angle, "polar")
    return complex(P.mul(abs, P.cos(angle)), P.mul(abs, P.sin(angle)), out=out)


def _tri_indices(name: str, row: int, col: int, offset: int, dtype, upper: bool) -> Tensor:
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    d = _dt.int64 if dtype is None else _dt.to_dtype(dtype)
    rows, cols = (np.triu_indices if upper else np.tril_indices)(row, offset, col)
    return tensor(np.stack([rows, cols]).reshape(2, -1), dtype=d)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """The (row, col) coordinates of the lower triangle of a row x col matrix, row-major (2, N)."""
    to_device(device)
    return _tri_indices("tril_indices", row, col, offset, dtype, False)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """The (row, col) coordinates of the upper triangle of a row x col matrix, row-major (2, N)."""
    to_device(device)
    return _tri_indices("triu_indices", row, col, offset, dtype, True)
