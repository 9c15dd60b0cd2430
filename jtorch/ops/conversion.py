"""Dtype and device conversion, copies and fills: ``to``, ``float()``..., ``clone``,
``contiguous``, ``copy_``, ``fill_``, ``zero_``, the complex parts.

Each calls its OpDef through ``dispatch.call`` (``kernels/defs/conversion.py``: ``_to_copy``,
``clone``, ``copy_``, ``fill_``), so ``x.to("meta")`` gives a meta tensor with ``x``'s
geometry and ``meta.to("cpu")`` raises torch's "Cannot copy out of meta tensor; no data!".
"""

from __future__ import annotations

from .. import dispatch
from .. import dtypes as _dt
from ..device import device as _device
from ..device import to_device
from ..kernels.defs import conversion as _C
from .. import meta as _meta
from ..cuda_array import CudaArray
from ..meta import MetaArray
from ..tensor import Tensor

__all__ = ["clone", "conj", "conj_physical", "imag", "real", "resolve_conj"]

_call = dispatch.call
_META = MetaArray


def cast(t: Tensor, d: _dt.dtype) -> Tensor:
    """A new tensor holding ``t`` converted to dtype ``d`` (torch's casting rules; strides
    preserved as by torch's ``.to``)."""
    return _call(_C.to_copy_op, t, dtype=d, device=t.device)


_PY_TYPES = {float: _dt.float64, int: _dt.int64, bool: _dt.bool, complex: _dt.complex128}


def _to_args(self: Tensor, args: tuple, kwargs: dict) -> tuple:
    """(dtype, device, copy, memory_format) of a ``to`` call: ``to(dtype)``, ``to(device,
    dtype)``, ``to(other)``, each followed by ``non_blocking`` and ``copy``."""
    dtype, device = kwargs.get("dtype"), kwargs.get("device")
    flags = []
    for a in args:
        if isinstance(a, _dt.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, bool):
            flags.append(a)
        elif isinstance(a, type) and a in _PY_TYPES:
            dtype = _PY_TYPES[a]
        elif isinstance(a, (str, _device, int)):
            device = a
        elif a is not None:
            raise TypeError(f"to() received an invalid combination of arguments - got "
                            f"({type(a).__name__})")
    copy = kwargs.get("copy", flags[1] if len(flags) > 1 else False)
    fmt = _dt.check_memory_format(kwargs.get("memory_format"), "to")
    d = self.dtype if dtype is None else _dt.to_dtype(dtype)
    dev = self.device if device is None else to_device(device)
    return d, dev, copy, fmt


def to(self, *args, **kwargs) -> Tensor:
    """``to(dtype)``, ``to(device)``, ``to(device, dtype)``, ``to(other)``; copies only if needed."""
    d, dev, copy, fmt = _to_args(self, args, kwargs)
    if d is self.dtype and dev == self.device:
        if copy:
            return clone(self, memory_format=fmt)
        if fmt is None or fmt is _dt.preserve_format or fmt is _suggest_memory_format(self):
            return self
        return clone(self, memory_format=fmt)
    return _call(_C.to_copy_op, self, dtype=d, device=dev, memory_format=fmt)


def _suggest_memory_format(t: Tensor) -> _dt.memory_format:
    """The format whose strides ``t`` has (ATen's suggest_memory_format): a channels-last one
    for a rank-4/5 tensor laid out so and not row-major, else ``contiguous_format``."""
    for fmt in (_dt.channels_last, _dt.channels_last_3d):
        if t._a.ndim == _dt._CHANNELS_LAST[fmt][0] and t.is_contiguous(memory_format=fmt) \
                and not t.is_contiguous():
            return fmt
    return _dt.contiguous_format


def _converter(d: _dt.dtype):
    def method(self, memory_format=None):
        if self.dtype is d and memory_format is None:  # the common no-op, without parsing
            return self
        return to(self, d, memory_format=memory_format)

    return method


def clone(input: Tensor, *, memory_format=None) -> Tensor:
    """A copy with its own storage; a dense input's strides are preserved, as in torch."""
    return _call(_C.clone_op, input, memory_format=memory_format)


def contiguous(self, memory_format=_dt.contiguous_format) -> Tensor:
    """self if already contiguous in ``memory_format`` (row-major by default, or a
    channels-last order), else a copy in it (clone would keep a dense layout)."""
    fmt = _dt.check_memory_format(memory_format, "contiguous")
    if fmt is _dt.preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous operator")
    return self if self.is_contiguous(memory_format=fmt) else clone(self, memory_format=fmt)


def copy_(self, src, non_blocking: bool = False) -> Tensor:
    """Copy ``src`` (broadcast, any dtype) into self."""
    return _call(_C.copy_inplace_op, self, src)


def fill_(self, value) -> Tensor:
    if isinstance(value, Tensor):
        return _call(_C.fill_op, self, value)
    return _call(_C.fill_op, self, value=value)


def zero_(self) -> Tensor:
    return _call(_C.fill_op, self, value=0)


def _new_tensor(self, data, dtype=None, device=None, requires_grad=False):
    from .creation import tensor

    return tensor(data, dtype=dtype or self.dtype, device=self.device if device is None else device,
                  requires_grad=requires_grad)


def type_as(self, other: Tensor) -> Tensor:
    """self converted to other's dtype (self itself when they already agree)."""
    return self.to(other.dtype)


def get_device(self) -> int:
    """The device index of a CUDA tensor; -1 for CPU and meta tensors (they have none)."""
    d = self.device
    return -1 if d.type in ("cpu", "meta") else (d.index or 0)


def _part(input: Tensor, imag_part: bool) -> Tensor:
    """A real-dtype view of a complex tensor's real or imaginary parts (writes go through)."""
    if not input.dtype.is_complex:
        if imag_part:
            raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
        return input
    if dispatch.needs_grad((input,)):  # a recorded copy: Re(z), Im(z) = Re(-1j * z)
        d = input.dtype.to_real()  # (torch: a view, RealBackward0 / ImagBackward0)
        return (input * -1j).to(d) if imag_part else input.to(d)
    if _meta.read_hook is not None and input._a.__class__ is _META and input._a.fake is not None:
        _meta.read_hook(input, "a view of a complex tensor's real or imaginary part")
    d = input.dtype.to_real()
    base = input._base if input._base is not None else input
    a = input._a
    if a.__class__ is _META:  # the same geometry over the storage read as reals
        st = MetaArray((2 * input._st.shape[0],), d.np)
        view = MetaArray(a.shape, d.np, a.strides, 2 * a.offset + (1 if imag_part else 0))
        return Tensor._make(view, st, d, base)
    if a.__class__ is CudaArray:  # as on meta, over the device storage read as reals
        buf = input._st.buf.view(d.np)
        st = CudaArray((buf.shape[0],), d.np, None, 0, buf, a.dev)
        view = CudaArray(a.shape, d.np, a.strides, 2 * a.offset + (1 if imag_part else 0), buf,
                         a.dev)
        return Tensor._make(view, st, d, base)
    return Tensor._make(a.imag if imag_part else a.real, input._st.view(d.np), d, base)


def real(input: Tensor) -> Tensor:
    """torch.real: the real parts as a view (a real tensor is returned as is)."""
    return _part(input, False)


def imag(input: Tensor) -> Tensor:
    """torch.imag: the imaginary parts as a view; real tensors raise as in torch."""
    return _part(input, True)


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


def _is_conj_method(self) -> bool:
    """False: conj() here makes a new tensor, never a lazily conjugated view."""
    return False
