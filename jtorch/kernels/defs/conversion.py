"""Copies and conversions: ``_to_copy`` (dtype and device changes: ``to``, ``float()``...),
``clone``, and the meta rules and kernels of ``copy_`` and ``fill_`` (their records and
gradient rules are in ``defs/unary.py``).

Fresh copies keep the input's layout as torch's ``empty_like`` does (``preserve_format``: a
dense input's strides, else its dimension order), or take a requested memory format.
``x.to("meta")`` is a ``_to_copy`` whose plan is on the meta device: no kernel runs and the
result has ``x``'s geometry; copying out of a meta tensor raises torch's "no data" error.
"""

from __future__ import annotations

from ... import dispatch as _dispatch
from ... import dtypes as _dt
from ...device import CPU, META
from ...meta import MetaArray
from ...shape import broadcast_shapes, contiguous_strides, is_dense
from ..cpu import fill as _k
from ..plan import Inplace, Out, Plan, device_of
from ...tensor import Tensor
from ..registry import defvjp, op
from . import unary as U

_META = MetaArray
NO_DATA = "Cannot copy out of meta tensor; no data!"


def like_strides(x, memory_format, fn: str) -> tuple | None:
    """Element strides of a fresh tensor like ``x`` (None: row-major): ``preserve_format``
    (the default) keeps a dense input's strides and otherwise its dimension order (torch's
    ``empty_like``); ``channels_last`` / ``channels_last_3d`` give those stride orders,
    ``contiguous_format`` is row-major."""
    a = x._a
    if memory_format is not None:
        fmt = _dt.check_memory_format(memory_format, fn)
        if fmt is not _dt.preserve_format:
            return _dt.format_strides(a.shape, fmt)
    shape = a.shape
    if a.flags.c_contiguous:
        if a.size and 1 not in shape:
            return None
        # contiguous up to the strides of size-1 dims (or empty): torch keeps them as they are
        isz = a.itemsize
        st = tuple([s // isz for s in a.strides])
        return None if st == contiguous_strides(shape) else st
    isz = a.itemsize
    st = tuple([s // isz for s in a.strides])
    if is_dense(shape, st):
        return st
    return _dispatch.result_strides((x,), a.shape)


def _to_copy_meta(x, *, dtype, device, memory_format=None) -> Plan:
    if device is CPU and device_of(x) is META:
        raise NotImplementedError(NO_DATA)
    return Plan(Out(x._a.shape, dtype, like_strides(x, memory_format, "to")), {"dtype": dtype},
                device)


def _clone_meta(x, *, memory_format=None) -> Plan:
    return Plan(Out(x._a.shape, x.dtype, like_strides(x, memory_format, "clone")), {},
                device_of(x))


def _copy_meta(x, src, *, non_blocking: bool = False) -> Plan:
    """copy_: ``src`` broadcast into self (any dtype); meta <- CPU copies nothing, as torch."""
    if x._requires_grad or x._base is not None:
        _dispatch.check_inplace(x)
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not "
                        f"{type(src).__name__}")
    shape = tuple(broadcast_shapes(x._a.shape, src._a.shape))
    if shape != tuple(x._a.shape):
        raise RuntimeError(f"output with shape {list(x._a.shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")
    dev = device_of(x)
    if dev is CPU:
        if device_of(src) is META:
            raise NotImplementedError(NO_DATA)
        _dispatch.check_overlap(x, (src,))
    else:  # meta: the written-to check (no data pointers to compare)
        a = x._a
        for n, s in zip(a.shape, a.strides):
            if s == 0 and n > 1:
                raise RuntimeError(
                    "unsupported operation: more than one element of the written-to tensor "
                    "refers to a single memory location. Please clone() the tensor before "
                    "performing the operation.")
    return Plan(Inplace(0), {}, dev)


_INPLACE = Inplace(0)


def _fill_meta(x, value_t=None, *, value=None) -> Plan:
    if x._requires_grad or x._base is not None:
        _dispatch.check_inplace(x)
    if value_t is not None and value_t._a.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value_t._a.ndim} dimensions.")
    return Plan(_INPLACE, {"value": value}, device_of(x))


to_copy_op = op("_to_copy", "conversion", _to_copy_meta, _k.to_copy_cpu)
clone_op = op("clone", "conversion", _clone_meta, _k.clone_cpu)
copy_inplace_op = U.copy_inplace_op
copy_inplace_op.meta, copy_inplace_op.kernels = _copy_meta, {"cpu": _k.copy_inplace_cpu}
copy_inplace_op.impl = None
fill_op = U.fill_op
fill_op.meta, fill_op.kernels, fill_op.impl = _fill_meta, {"cpu": _k.fill_inplace_cpu}, None


def _to_copy_vjp(c, g):
    shape, dtype = c._meta[0]
    return (g if g.dtype is dtype else g.to(dtype),)


defvjp(to_copy_op, _to_copy_vjp, "", "ToCopyBackward0")
defvjp(clone_op, lambda c, g: (g,), "", "CloneBackward0")
