"""Tensor creation: from data, constant fills, ranges (arange, linspace, logspace), eye, the
``*_like`` and ``Tensor.new_*`` factories, complex and polar. Random creation lives in
ops/random.py. Each factory calls its OpDef (``kernels/defs/creation.py``: torch's checks and
the result's geometry; kernels in ``kernels/cpu/fill.py``) through ``dispatch.call``, so every
one of them also makes meta tensors (``device="meta"``)."""

from __future__ import annotations

import builtins
import numbers
import sys
import warnings

import numpy as np

from .. import _allocator, dispatch
from .. import dtypes as _dt
from .. import meta as _meta
from ..amp import state as _amp
from ..device import get_default_device, set_default_device, to_device
from ..kernels.defs import conversion as _conv
from ..kernels.defs import creation as C
from ..meta import MetaArray
from ..shape import as_shape
from ..tensor import Tensor

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
    "get_default_device",
    "is_tensor",
    "linspace",
    "logspace",
    "numel",
    "ones",
    "ones_like",
    "polar",
    "scalar_tensor",
    "set_default_device",
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


def foreign_array(data):
    """A tensor of the installed torch (torchvision's transforms make them) as a NumPy array
    (detached, on the CPU), or None for anything else: data crossing from torch code into
    jtorch (a dataset's samples, ``jtorch.tensor(t)``) is converted, not refused."""
    torch = sys.modules.get("torch")
    if torch is None or torch is sys.modules.get("jtorch"):
        return None
    cls = getattr(torch, "Tensor", None)
    if cls is None or not isinstance(data, cls):
        return None
    data = data.detach().cpu().resolve_conj().resolve_neg()
    if data.dtype == torch.bfloat16:  # torch's numpy() refuses it: its bits, as ml_dtypes'
        return data.view(torch.int16).numpy().view(_dt.bfloat16.np)
    return data.numpy()


def _to_numpy(data):
    """Nested Python data (numbers, lists, tensors) as a NumPy array and torch's dtype for it."""
    if isinstance(data, Tensor):
        return data._a, data.dtype
    if isinstance(data, np.ndarray):
        return data, _dt.from_numpy_dtype(data.dtype)
    if isinstance(data, np.generic):
        return np.asarray(data), _dt.from_numpy_dtype(data.dtype)
    if isinstance(data, (list, tuple)) and any(isinstance(x, Tensor) for x in data):
        if any(isinstance(x, Tensor) and x.is_meta for x in data):
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        parts = [_to_numpy(x) for x in data]
        d = parts[0][1]
        for _, pd in parts[1:]:
            d = _dt.promote_types(d, pd)
        try:
            return np.stack([p[0].astype(d.np) for p in parts]), d
        except ValueError as e:
            raise ValueError(f"expected sequence of equal-length items: {e}") from None
    if isinstance(data, str) or not isinstance(data, (numbers.Number, list, tuple)):
        arr = foreign_array(data)
        if arr is not None:
            return arr, _dt.from_numpy_dtype(arr.dtype)
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
    if isinstance(data, Tensor):  # a copy through ``to`` (any device, meta included)
        d = data.dtype if dtype is None else _dt.to_dtype(dtype)
        dev = data.device if device is None else to_device(device)
        return require_grad(data.detach().to(dtype=d, device=dev, copy=True), requires_grad)
    dev = to_device(device)
    arr, inferred = _to_numpy(data)
    d = inferred if dtype is None else _dt.to_dtype(dtype)
    if dev.type == "meta":
        return require_grad(dispatch.call(C.empty_op, size=arr.shape, dtype=d, device=dev),
                            requires_grad)
    out = _allocator.empty(arr.shape, d.np)
    _copy(out, arr)
    t = Tensor._make(out, None, d)
    if dev.type == "cuda":
        t = t.to(dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _copy(out: np.ndarray, src: np.ndarray) -> None:
    if src.dtype.kind == "c" and out.dtype.kind != "c":
        src = src.real
    with np.errstate(over="ignore"):  # beyond a float type's range: inf, silently as in torch
        np.copyto(out, src, casting="unsafe")


def as_tensor(data, dtype=None, device=None) -> Tensor:
    """Share memory with ``data`` when it is already a tensor/array of the right dtype (and
    device)."""
    if isinstance(data, Tensor):
        d = None if dtype is None else _dt.to_dtype(dtype)
        dev = None if device is None else to_device(device)
        if (d is None or d is data.dtype) and (dev is None or dev == data.device):
            return data
        return data.to(dtype=d, device=dev)
    dev = to_device(device)
    if (dev.type == "cpu" and isinstance(data, np.ndarray)
            and (dtype is None or _dt.to_dtype(dtype).np == data.dtype)
            and all(s >= 0 for s in data.strides) and data.dtype in _dt._FROM_NP):
        return from_numpy(data)
    return tensor(data, dtype=dtype, device=dev)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad: bool = False) -> Tensor:
    t = tensor(obj, dtype=dtype, device=device) if copy else as_tensor(obj, dtype=dtype,
                                                                         device=device)
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
    t = Tensor._make(ndarray, st, d)
    t._a = ndarray  # NumPy's strides as they are (torch keeps a 0-size array's zero strides too)
    return t


# -- shared factory plumbing -----------------------------------------------------------------

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


def factory_device(device, out):
    """The device of a factory call: ``device``, else ``out``'s, else the default device."""
    if device is None and out is not None and isinstance(out, Tensor):
        return out.device
    return to_device(device)


def require_grad(t: Tensor, requires_grad: bool) -> Tensor:
    """Factory ``requires_grad=True`` (torch's factory wording of the dtype error)."""
    if requires_grad:
        if not (t.dtype.is_floating_point or t.dtype.is_complex):
            raise RuntimeError(
                "Only Tensors of floating point and complex dtype can require gradients")
        if _meta.read_hook is not None and t._a.__class__ is MetaArray:
            _meta.read_hook(t, "a factory with requires_grad=True")  # a new leaf: a graph break
        t._requires_grad = True
    return t


def resize(t: Tensor, shape: tuple) -> None:
    """Give ``t`` fresh contiguous memory of ``shape`` (factories resize ``out`` silently)."""
    if t._a.__class__ is MetaArray:
        t._a = t._st = MetaArray(tuple(shape), t.dtype.np, None, 0, t._a.fake)
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
                res = res.reshape(out._a.shape)
            else:
                resize(out, shape)
        res = dispatch.copy_into(out, res)
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
    dev = factory_device(device, out)
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
    dev = factory_device(device, out)
    check_layout(layout, "full")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    default = _dt.scalar_dtype(fill_value) if dtype is None and out is None else None
    d = factory_dtype(dtype, out, default)
    shape = as_shape((size,) if isinstance(size, int) else tuple(size))
    return _filled(shape, d, fill_value, out, requires_grad, dev)


def _filled(shape: tuple, d: _dt.dtype, value, out, requires_grad: bool, dev) -> Tensor:
    res = dispatch.call(C.full_op, size=shape, dtype=d, device=dev, fill_value=value)
    return deliver(res, out, requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False, out=None, layout=None,
          pin_memory: bool = False, **kwargs) -> Tensor:
    dev = factory_device(device, out)
    check_layout(layout, "zeros")
    shape = _sizes(size, kwargs, "zeros")
    d = factory_dtype(dtype, out)
    if out is None:
        return require_grad(dispatch.call(C.zeros_op, size=shape, dtype=d, device=dev),
                            requires_grad)
    return _filled(shape, d, 0, out, requires_grad, dev)


def ones(*size, dtype=None, device=None, requires_grad: bool = False, out=None, layout=None,
         pin_memory: bool = False, **kwargs) -> Tensor:
    dev = factory_device(device, out)
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

def alloc_strided(shape: tuple, strides: tuple, d: _dt.dtype, device=None) -> Tensor:
    """An uninitialised tensor with the given element strides over fresh storage."""
    return dispatch.call(C.empty_op, size=tuple(shape), dtype=d, device=to_device(device),
                         strides=tuple(strides))


def _like_strides(input: Tensor, memory_format, fn: str) -> tuple | None:
    """Element strides of a fresh tensor like ``input`` (None: row-major): ``preserve_format``
    (the default) keeps a dense input's strides, else its dimension order (torch's
    ``empty_like``); ``channels_last`` / ``channels_last_3d`` give those stride orders,
    ``contiguous_format`` is row-major."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return _conv.like_strides(input, memory_format, fn)


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


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False,
             layout=None, pin_memory: bool = False) -> Tensor:
    return full(size, fill_value, dtype=self.dtype if dtype is None else dtype,
                device=self.device if device is None else device, requires_grad=requires_grad)


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
    dev = factory_device(device, out)
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
    res = dispatch.call(C.arange_op, start=start, end=end, step=step, dtype=d, device=dev)
    n = res._a.shape[0]
    if out is not None and out._a.size not in (0, n):
        warnings.warn(
            f"The number of elements in the out tensor of shape {list(out._a.shape)} is "
            f"{out._a.size} which does not match the computed number of elements {n}. Note "
            f"that this may occur as a result of rounding error. The out tensor will be "
            f"resized to a tensor of shape ({n},).", UserWarning, stacklevel=2)
    return deliver(res, out, requires_grad, keep_numel=True)


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
    dev = factory_device(device, out)
    n = _steps_arg(steps, "linspace", (start, end, steps))
    start, end = _range_endpoints("linspace", start, end)
    cplx = isinstance(start, builtins.complex) or isinstance(end, builtins.complex)
    default = _dt.get_default_dtype()
    d = factory_dtype(dtype, out, default.to_complex() if cplx else default)
    res = dispatch.call(C.linspace_op, start=start, end=end, steps=n, dtype=d, device=dev)
    return deliver(res, out, requires_grad, keep_numel=True)


def logspace(start, end, steps, base: float = 10.0, *, out=None, dtype=None, layout=None,
             device=None, requires_grad: bool = False) -> Tensor:
    """``base ** linspace(start, end, steps)``, computed in double as torch does.

    >>> jtorch.logspace(0, 2, 3)
    tensor([  1.,  10., 100.])
    """
    dev = factory_device(device, out)
    n = _steps_arg(steps, "logspace", (start, end, steps))
    start, end = _range_endpoints("logspace", start, end)
    d = factory_dtype(dtype, out)
    res = dispatch.call(C.logspace_op, start=start, end=end, steps=n, base=float(base), dtype=d,
                        device=dev)
    return deliver(res, out, requires_grad, keep_numel=True)


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None,
        requires_grad: bool = False) -> Tensor:
    """An ``n`` x ``m`` matrix with ones on the diagonal.

    >>> jtorch.eye(2, 3)
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    dev = factory_device(device, out)
    n = _size_arg(n, "eye", "n", 1)
    m = n if m is None else _size_arg(m, "eye", "m", 2)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    d = factory_dtype(dtype, out)
    return deliver(dispatch.call(C.eye_op, n=n, m=m, dtype=d, device=dev), out, requires_grad)


# -- complex ---------------------------------------------------------------------------------

def complex(real: Tensor, imag: Tensor, *, out=None) -> Tensor:
    """``real + 1j * imag`` (float32 parts give complex64, float64 parts complex128).

    >>> jtorch.complex(jtorch.tensor([1.]), jtorch.tensor([2.]))
    tensor([1.+2.j])
    """
    return deliver(dispatch.call(C.complex_op, real, imag), out)


@_amp.fp32_op
def polar(abs: Tensor, angle: Tensor, *, out=None) -> Tensor:
    """``abs * (cos(angle) + 1j * sin(angle))``."""
    from . import pointwise as P

    C.complex_op.meta(abs, angle, fn="polar")  # polar's argument checks
    return complex(P.mul(abs, P.cos(angle)), P.mul(abs, P.sin(angle)), out=out)


def _tri_indices(op, row: int, col: int, offset: int, dtype, device, upper: bool) -> Tensor:
    d = _dt.int64 if dtype is None else _dt.to_dtype(dtype)
    return dispatch.call(op, row=row, col=col, offset=offset, dtype=d, device=to_device(device),
                         upper=upper)


def tril_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """The (row, col) coordinates of the lower triangle of a row x col matrix, row-major (2, N)."""
    return _tri_indices(C.tril_indices_op, row, col, offset, dtype, device, False)


def triu_indices(row: int, col: int, offset: int = 0, *, dtype=None, device=None,
                 layout=None) -> Tensor:
    """The (row, col) coordinates of the upper triangle of a row x col matrix, row-major (2, N)."""
    return _tri_indices(C.triu_indices_op, row, col, offset, dtype, device, True)
