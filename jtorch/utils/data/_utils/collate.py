"""Collation: turning a list of samples into a batch (``default_collate``) and converting
one sample's NumPy values into tensors (``default_convert``), with torch's type rules:
tensors are stacked, Python floats become float64, ints int64, bools bool, NumPy arrays
and scalars keep their dtype, strings and bytes stay lists, and containers (mappings,
namedtuples, sequences) are collated field by field.

``collate(batch, collate_fn_map=...)`` is the extensible core: ``default_collate_fn_map``
maps element types to functions, looked up by exact type then by ``isinstance`` in order.

>>> default_collate([(0, 1.5), (2, 3.5)])
[tensor([0, 2]), tensor([1.5000, 3.5000], dtype=torch.float64)]
"""

from __future__ import annotations

import collections.abc
import copy
import re
from collections.abc import Callable

import numpy as np

from .... import dtypes as _dt
from ....kernels.cpu import movement as _movement
from ....ops import creation as _creation
from ....ops.views import stack
from ....tensor import Tensor

np_str_obj_array_pattern = re.compile(r"[SaUO]")
_NDARRAY = np.ndarray

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found {}"
)


def _is_numpy_value(data) -> bool:
    t = type(data)
    return t.__module__ == "numpy" and t.__name__ not in ("str_", "string_")


def _rebuild_mapping(data, values: dict):
    """``data``'s mapping type with new ``values`` (a shallow copy for mutable ones), or a
    plain dict when the type cannot be rebuilt from a dict."""
    try:
        if isinstance(data, collections.abc.MutableMapping):
            clone = copy.copy(data)
            clone.update(values)
            return clone
        return type(data)(values)
    except TypeError:
        return values


def _rebuild_sequence(data, values: list):
    try:
        if isinstance(data, collections.abc.MutableSequence):
            clone = copy.copy(data)
            for i, v in enumerate(values):
                clone[i] = v
            return clone
        return type(data)(values)
    except TypeError:
        return values


def default_convert(data):
    """Turn the NumPy arrays and scalars inside ``data`` into tensors, keeping the rest (the
    DataLoader's conversion when automatic batching is off). Tuples become lists, as in
    torch.

    >>> default_convert({"x": np.array([0, 1])})
    {'x': tensor([0, 1])}
    """
    if isinstance(data, Tensor):
        return data
    if _is_numpy_value(data):
        if isinstance(data, np.ndarray) and np_str_obj_array_pattern.search(data.dtype.str):
            return data
        return _creation.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # namedtuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    arr = _creation.foreign_array(data)  # a tensor of the installed torch
    return data if arr is None else _creation.as_tensor(arr)


def collate(batch, *, collate_fn_map: dict[type | tuple[type, ...], Callable] | None = None):
    """Collate ``batch`` (a list of samples of one structure) with the functions of
    ``collate_fn_map`` for leaf types, recursing through mappings, namedtuples and
    sequences (tuples come back as lists, as in torch)."""
    elem = batch[0]
    elem_type = type(elem)
    if collate_fn_map is not None:
        if elem_type in collate_fn_map:
            return collate_fn_map[elem_type](batch, collate_fn_map=collate_fn_map)
        for collate_type in collate_fn_map:
            if isinstance(elem, collate_type):
                return collate_fn_map[collate_type](batch, collate_fn_map=collate_fn_map)

    def rec(samples):
        return collate(samples, collate_fn_map=collate_fn_map)

    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: rec([d[key] for d in batch]) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return elem_type(*(rec(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if not all(len(e) == size for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [rec(samples) for samples in zip(*batch)]
        return columns if isinstance(elem, tuple) else _rebuild_sequence(elem, columns)
    first = _creation.foreign_array(elem)
    if first is not None:  # torch's tensors (torchvision's transforms), each converted once
        return collate_numpy_array_fn([first] + [_creation.foreign_array(batch[i])
                                                 for i in range(1, len(batch))])
    raise TypeError(default_collate_err_msg_format.format(elem_type))


def collate_tensor_fn(batch, *, collate_fn_map=None) -> Tensor:
    """One ``stack`` of the samples (its kernel copies them all in one call)."""
    return stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    """NumPy arrays of one dtype and shape go into the batch by the stack kernel directly
    (torch converts each to a tensor first: the same result); mixed dtypes or shapes take that
    path, which promotes as ``stack`` does and raises its errors."""
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    d = _dt._FROM_NP.get(elem.dtype)
    if d is not None:
        shape, nd_dtype = elem.shape, elem.dtype
        for b in batch:
            if b.__class__ is not _NDARRAY or b.dtype != nd_dtype or b.shape != shape:
                break
        else:
            return _movement.stack_arrays(batch, 0, d)
    return collate([_creation.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None) -> Tensor:
    # NumPy infers the common dtype of the scalars as torch does (int32 stays int32)
    return _creation.as_tensor(np.asarray(batch))


def collate_float_fn(batch, *, collate_fn_map=None) -> Tensor:
    return _creation.tensor(batch, dtype=_dt.float64)


def collate_int_fn(batch, *, collate_fn_map=None) -> Tensor:
    return _creation.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map: dict[type | tuple[type, ...], Callable] = {
    Tensor: collate_tensor_fn,
    np.ndarray: collate_numpy_array_fn,
    (np.bool_, np.number, np.object_): collate_numpy_scalar_fn,
    float: collate_float_fn,
    int: collate_int_fn,
    str: collate_str_fn,
    bytes: collate_str_fn,
}


def default_collate(batch):
    """Stack a list of samples into a batch with a new leading dimension: tensors by
    ``stack``, NumPy arrays and scalars as tensors of their dtype, Python floats as
    float64, ints as int64 (bools as bool), strings and bytes as a list, and mappings,
    namedtuples and sequences field by field.

    >>> default_collate([{"a": 0}, {"a": 1}])
    {'a': tensor([0, 1])}
    """
    return collate(batch, collate_fn_map=default_collate_fn_map)
