"""Tensor creation from data and constant fills (random creation lives in ops/random.py)."""

from __future__ import annotations

import numbers

import numpy as np

from .. import _allocator
from .. import dtypes as _dt
from ..device import to_device
from ..shape import as_shape
from ..tensor import Tensor

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "empty", "zeros", "ones", "full",
           "scalar_tensor", "is_tensor", "numel"]


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
    raise TypeError(f"Could not infer dtype of {type(arr).__name__}")


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
    except (ValueError, OverflowError) as e:
        raise ValueError(str(e)) from None
    if arr.dtype == object:
        if any(isinstance(v, int) and not isinstance(v, bool) for v in np.ravel(arr)):
            raise RuntimeError("Overflow when unpacking long")
        raise ValueError(f"expected sequence of length {len(data[0])} at dim 1 (got "
                         f"{len(data[1]) if len(data) > 1 else 0})")
    return arr, _infer_dtype(arr)


def tensor(data, *, dtype=None, device=None, requires_grad: bool = False,
           pin_memory: bool = False) -> Tensor:
    """Copy ``data`` into a new tensor, inferring the dtype as torch does.

    >>> jtorch.tensor([1, 2]).dtype
    torch.int64
    """
    to_device(device)
    arr, inferred = _to_numpy(data)
    d = inferred if dtype is None else _dt.to_dtype(dtype)
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
    if isinstance(data, np.ndarray) and (dtype is None or _dt.to_dtype(dtype).np == data.dtype):
        if all(s >= 0 for s in data.strides) and data.dtype in _dt._FROM_NP:
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


def _resolve(dtype, default=None) -> _dt.dtype:
    if dtype is None:
        return default or _dt.get_default_dtype()
    return _dt.to_dtype(dtype)


def _new(shape, dtype, requires_grad: bool) -> tuple:
    a = _allocator.empty(shape, dtype.np)
    return a


def _finish(a: np.ndarray, dtype: _dt.dtype, requires_grad: bool) -> Tensor:
    t = Tensor._make(a, None, dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


def empty(*size, dtype=None, device=None, requires_grad: bool = False, out=None, layout=None,
          pin_memory: bool = False, memory_format=None) -> Tensor:
    to_device(device)
    d = _resolve(dtype)
    return _finish(_allocator.empty(as_shape(size), d.np), d, requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad: bool = False, out=None,
         layout=None) -> Tensor:
    """A tensor filled with ``fill_value``; the dtype is inferred from it when not given."""
    to_device(device)
    if dtype is None:
        dtype = _dt.scalar_dtype(fill_value.item() if isinstance(fill_value, Tensor) else fill_value)
    d = _dt.to_dtype(dtype)
    shape = as_shape((size,) if isinstance(size, int) else tuple(size))
    a = _allocator.empty(shape, d.np)
    fill_array(a, fill_value)
    t = _finish(a, d, requires_grad)
    if out is not None:
        from .pointwise import copy_into

        return copy_into(out, t)
    return t


def fill_array(a: np.ndarray, value) -> None:
    """Write ``value`` into every element of a contiguous array with a compiled fill loop."""
    if a.size == 0:
        return
    from ..kernels.cpu.fill import fill

    fill(a, value)


def zeros(*size, dtype=None, device=None, requires_grad: bool = False, out=None, layout=None
          ) -> Tensor:
    to_device(device)
    d = _resolve(dtype)
    shape = as_shape(size)
    return _finish(np.zeros(shape, d.np), d, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False, out=None, layout=None
         ) -> Tensor:
    to_device(device)
    d = _resolve(dtype)
    shape = as_shape(size)
    a = _allocator.empty(shape, d.np)
    fill_array(a, 1)
    return _finish(a, d, requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return full((), s, dtype=_resolve(dtype), requires_grad=requires_grad)


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(input: Tensor) -> int:
    return input.numel()
