"""Dtype conversion, copies and fills: ``to``, ``float()``..., ``clone``, ``contiguous``,
``copy_``, ``fill_``, ``zero_``. Every element loop is the registry's ``copy`` kernel."""

from __future__ import annotations

import numpy as np

from .. import dispatch
from .. import dtypes as _dt
from ..device import device as _device
from ..device import to_device
from ..tensor import Tensor
from ._util import tensor_method
from .creation import fill_array, like
from ..kernels.defs.unary import copy_inplace_op as _copy_inplace
from ..kernels.defs.unary import fill_op as _fill
from .pointwise import _COPY, _check_inplace

__all__ = ["clone", "conj", "conj_physical", "imag", "real", "resolve_conj"]


def cast(t: Tensor, d: _dt.dtype) -> Tensor:
    """A new tensor holding ``t`` converted to dtype ``d`` (torch's casting rules; strides
    preserved as by torch's ``.to``)."""
    out = like(t, d)
    src = t
    if t.dtype.is_complex and not d.is_complex:
        src = Tensor._make(np.ascontiguousarray(t._a.real))
    if d is _dt.bool or src.dtype is _dt.bool:
        dispatch.run_pointwise(_COPY, (src,), out._a, d if d is not _dt.float16 else _dt.float32)
    else:
        dispatch.run_pointwise(_COPY, (src,), out._a, _dt.promote_types(src.dtype, d)
                               if src.dtype.category == d.category else d)
    return dispatch.record(_COPY, (t,), out, {"dtype": d})


@tensor_method()
def to(self, *args, **kwargs) -> Tensor:
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``; copies only if needed."""
    dtype = kwargs.get("dtype")
    copy = kwargs.get("copy", False)
    for a in args:
        if isinstance(a, _dt.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype = a.dtype
        elif isinstance(a, (str, _device, int)):
            to_device(a)
        elif isinstance(a, bool):
            copy = a
    if "device" in kwargs:
        to_device(kwargs["device"])
    fmt = _dt.check_memory_format(kwargs.get("memory_format"), "to")
    if dtype is None or _dt.to_dtype(dtype) is self.dtype:
        if copy:
            return self.clone(memory_format=fmt)
        if fmt is None or fmt is _dt.preserve_format or fmt is _suggest_memory_format(self):
            return self
        return clone(self, memory_format=fmt)
    res = cast(self, _dt.to_dtype(dtype))
    if fmt is None or fmt is _dt.preserve_format:
        return res
    return res.contiguous(memory_format=fmt)


def _suggest_memory_format(t: Tensor) -> _dt.memory_format:
    """The format whose strides ``t`` has (ATen's suggest_memory_format): a channels-last one
    for a rank-4/5 tensor laid out so and not row-major, else ``contiguous_format``."""
    for fmt in (_dt.channels_last, _dt.channels_last_3d):
        if t._a.ndim == _dt._CHANNELS_LAST[fmt][0] and t.is_contiguous(memory_format=fmt) \
                and not t.is_contiguous():
            return fmt
    return _dt.contiguous_format


for _name, _d in [("float", _dt.float32), ("double", _dt.float64), ("half", _dt.float16),
                  ("long", _dt.int64), ("int", _dt.int32), ("short", _dt.int16),
                  ("char", _dt.int8), ("byte", _dt.uint8), ("bool", _dt.bool),
                  ("cfloat", _dt.complex64), ("cdouble", _dt.complex128)]:
    setattr(Tensor, _name, lambda self, memory_format=None, _d=_d: self.to(_d))


@tensor_method()
def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """A copy with its own storage; a dense input's strides are preserved, as in torch."""
    out = like(input, input.dtype, memory_format, "clone")
    dispatch.run_pointwise(_COPY, (input,), out._a, input.dtype)
    return dispatch.record(_COPY, (input,), out)


@tensor_method()
def contiguous(self, memory_format=_dt.contiguous_format) -> Tensor:
    """self if already contiguous in ``memory_format`` (row-major by default, or a
    channels-last order), else a copy in it (clone would keep a dense layout)."""
    fmt = _dt.check_memory_format(memory_format, "contiguous")
    if fmt is _dt.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return self if self.is_contiguous(memory_format=fmt) else clone(self, memory_format=fmt)


@tensor_method()
def copy_(self, src, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast, any dtype) into self."""
    _check_inplace(self)
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'other' (position 1) must be Tensor, not {type(src).__name__}")
    from ..shape import broadcast_shapes

    if broadcast_shapes(self._a.shape, src._a.shape) != self._a.shape:
        raise RuntimeError(
            f"output with shape {list(self._a.shape)} doesn't match the broadcast shape "
            f"{list(broadcast_shapes(self._a.shape, src._a.shape))}"
        )
    given = src
    with_grad = dispatch.needs_grad((self, src))
    if with_grad:
        src = src.detach()  # the copy itself is recorded once, as copy_
    dispatch.check_overlap(self, (src,))
    if src.dtype is not self.dtype:
        src = cast(src, self.dtype)
    if _overlaps(self, src):
        src = clone(src)
    dispatch.run_pointwise(_COPY, (src,), self._a, self.dtype)
    dispatch.bump_version(self)
    return dispatch.record(_copy_inplace, (self, given), self) if with_grad else self


def _overlaps(a: Tensor, b: Tensor) -> bool:
    return a._st is b._st or np.shares_memory(a._st, b._st)


@tensor_method()
def fill_(self, value) -> Tensor:
    _check_inplace(self)
    inputs = (self,)
    if isinstance(value, Tensor):
        if value.dim() != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with "
                f"{value.dim()} dimensions."
            )
        inputs = (self, value)
        value = value.item()
    if self._a.flags.c_contiguous:
        fill_array(self._a, value)
    else:
        dispatch.run_pointwise(_COPY, (value,), self._a, self.dtype)
    dispatch.bump_version(self)
    return dispatch.record(_fill, inputs, self)


@tensor_method()
def zero_(self) -> Tensor:
    return fill_(self, 0)


Tensor.new_tensor = lambda self, data, dtype=None, device=None, requires_grad=False: \
    __import__("jtorch").tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)


def type_as(self, other: Tensor) -> Tensor:
    """self converted to other's dtype (self itself when they already agree)."""
    return self.to(other.dtype)


Tensor.type_as = type_as


def _part(input: Tensor, imag_part: bool) -> Tensor:
    """A real-dtype view of a complex tensor's real or imaginary parts (writes go through)."""
    if not input.dtype.is_complex:
        if imag_part:
            raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
        return input
    d = input.dtype.to_real()
    a = input._a.imag if imag_part else input._a.real
    return Tensor._make(a, input._st.view(d.np), d, input._base if input._base is not None else input)


def real(input: Tensor) -> Tensor:
    """torch.real: the real parts as a view (a real tensor is returned as is)."""
    return _part(input, False)


def imag(input: Tensor) -> Tensor:
    """torch.imag: the imaginary parts as a view; real tensors raise as in torch."""
    return _part(input, True)


Tensor.real = property(real)
Tensor.imag = property(imag)


def conj(input: Tensor) -> Tensor:
    """The complex conjugate (a new tensor here; torch returns a lazily conjugated view). Real
    tensors are returned as they are."""
    if not input.dtype.is_complex:
        return input
    from .creation import complex as _complex

    return _complex(_part(input, False), -_part(input, True))


def resolve_conj(input: Tensor) -> Tensor:
    return input


conj_physical = conj
Tensor.conj = Tensor.conj_physical = conj
Tensor.resolve_conj = resolve_conj
Tensor.is_conj = lambda self: False
