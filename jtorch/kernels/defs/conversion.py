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
from ...device import CPU, META
from ...meta import MetaArray
from ...shape import broadcast_shapes
from ...tensor import Tensor
from ..cpu import fill as _k
from ..plan import Inplace, Out, Plan, device_of
from ..registry import defvjp, op
from . import _prims as P
from .creation import like_strides

_META = MetaArray
NO_DATA = "Cannot copy out of meta tensor; no data!"


def _to_copy_meta(x, *, dtype, device, memory_format=None) -> Plan:
    if device is CPU and device_of(x) is META:
        raise NotImplementedError(NO_DATA)
    # the input's device (``input_device``) is where the gradient goes back to
    return Plan(Out(x._a.shape, dtype, like_strides(x, memory_format, "to")),
                {"dtype": dtype, "input_device": device_of(x)}, device)


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
            if s == 0 and n > 1 and a.size:
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
# in-place writes that autograd sees as ops of their own
copy_inplace_op = op("copy_", "extern", _copy_meta, _k.copy_inplace_cpu)  # (self, src)
fill_op = op("fill_", "extern", _fill_meta, _k.fill_inplace_cpu)  # (self[, 0-d value])


def _to_copy_vjp(c, g):
    """The gradient back in the input's dtype and on its device (a meta gradient of a CPU
    input raises torch's "no data" error, as torch's ToCopyBackward0 does)."""
    dtype = c._meta[0][1]
    src = (c.kw or {}).get("input_device")
    if src is not None and device_of(g) is not src:
        return (g.to(device=src, dtype=dtype),)
    return (g if g.dtype is dtype else g.to(dtype),)


defvjp(to_copy_op, _to_copy_vjp, "", "ToCopyBackward0")
defvjp(clone_op, lambda c, g: (g,), "", "CloneBackward0")
# the old value of self is overwritten: a zero gradient flows to it (as in torch)
defvjp(copy_inplace_op, lambda c, g: (P.zeros_like(g), g), "", "CopyBackwards")
defvjp(fill_op, lambda c, g: (P.zeros_like(g), g.sum()), "", "FillBackward0")
