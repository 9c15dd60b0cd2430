"""The vocabulary of meta rules: what an op's ``meta`` returns to ``dispatch.call``.

A meta rule checks its arguments (torch's exception types and messages) and describes the
results without touching data: ``Out`` for a fresh tensor (shape, dtype, strides), ``View``
for a result that aliases an input's storage, ``Plan`` for the whole answer with the
normalised parameters the kernel and the gradient rule read, and the call's device. The
compiler records these as node metadata; meta tensors are built from them.
"""

from __future__ import annotations

from .. import meta as _meta
from ..cuda_array import CudaArray
from ..device import CPU, META
from ..meta import MetaArray
from ..tensor import Tensor

_TENSOR = Tensor
_META = MetaArray
_CUDA = CudaArray


class Out:
    """What a meta rule says of one fresh result: shape, dtype, element strides (None:
    C-contiguous)."""

    __slots__ = ("shape", "dtype", "strides")

    def __init__(self, shape: tuple, dtype: _dt.dtype, strides: tuple | None = None) -> None:
        self.shape, self.dtype, self.strides = shape, dtype, strides

    def __repr__(self) -> str:
        return f"Out({list(self.shape)}, {self.dtype.name}, strides={self.strides})"


class View:
    """A result that views the storage of input ``src`` at element (shape, strides, offset):
    views are made from the plan on every device (no kernel). ``perm``, when given, says the
    view is that permutation of the source's dims, ``key`` a NumPy basic index giving the
    same view, ``reshape`` a shape the row-major source takes: a CPU array applies them
    directly. ``dtype``, when given, reads the bytes as another dtype (view_as_real,
    view_as_complex); the geometry is then counted in its elements.
    """

    __slots__ = ("dtype", "key", "offset", "perm", "reshape", "shape", "src", "strides")

    def __init__(self, shape: tuple, strides: tuple, offset: int, src: int = 0,
                 perm: tuple | None = None, key=None) -> None:
        self.shape, self.strides, self.offset, self.src, self.perm = shape, strides, offset, src, perm
        self.key = key
        self.reshape = None  # the view is the source (row-major) reshaped to this shape
        self.dtype = None

    def __repr__(self) -> str:
        return f"View({list(self.shape)}, strides={self.strides}, offset={self.offset}, of={self.src})"


class Inplace:
    """The result is input ``src`` itself, written in place (``x.index_put_``, ``x.uniform_``):
    dispatch bumps its version counter; on meta nothing else happens."""

    __slots__ = ("src",)

    def __init__(self, src: int = 0) -> None:
        self.src = src

    def __repr__(self) -> str:
        return f"Inplace({self.src})"


class Plan:
    """A meta rule's answer: ``out`` (an ``Out``, a ``View``, an ``Inplace``, a tuple of them, or
    None where the shape depends on data: ``OpDef.data_dependent``), ``kw`` (the
    normalised parameters the kernel and the gradient rule read) and the call's ``device``."""

    __slots__ = ("out", "kw", "device")

    def __init__(self, out, kw: dict, device=CPU) -> None:
        self.out, self.kw, self.device = out, kw, device

    def __repr__(self) -> str:
        return f"Plan({self.out!r}, {self.kw!r}, {self.device})"


def memo(cache: dict, key, plan, limit: int = 4096):
    """Keep a meta rule's answer under ``key`` (rules memoise on geometry and arguments), but
    not while a tracer runs: its stand-ins' plans carry the device they stand for, and their
    symbolic sizes must not enter a cache that plain calls read."""
    if _meta.read_hook is None:
        if len(cache) >= limit:
            cache.clear()
        cache[key] = plan
    return plan


def common_device(*args):
    """The device of a call's tensor operands, with torch's error when they differ (a 0-d CPU
    tensor goes with any device, as a scalar)."""
    dev = None
    for x in args:
        if isinstance(x, _TENSOR):
            a = x._a
            c = a.__class__
            if c is _META:
                d = a.fake or META
            elif c is _CUDA:
                d = a.dev
            elif a.ndim == 0:
                continue
            else:
                d = CPU
            if dev is None:
                dev = d
            elif d is not dev:
                raise mixed_devices(dev, d)
    return CPU if dev is None else dev


def mixed_devices(first, other) -> RuntimeError:
    """torch's error for one op's tensors on two devices (its meta kernels word it apart)."""
    if first.type == "cuda" or other.type == "cuda":
        return RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                            f"two devices, {first} and {other}!")
    return RuntimeError(f"Tensor on device {other} is not on the expected device {first}!")


def device_of(x: Tensor):
    """The device of one tensor operand (the common case of ``common_device``)."""
    a = x._a
    c = a.__class__
    if c is _META:
        return a.fake or META
    return a.dev if c is _CUDA else CPU
