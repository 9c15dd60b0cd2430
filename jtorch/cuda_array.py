"""CUDA tensors' arrays: a view's geometry (a meta tensor's ``MetaArray``) over a Numba device
array of storage.

A CUDA tensor's ``_a`` is a ``CudaArray``: shape, byte strides, element offset and dtype, as
the op layer reads them from a NumPy array, plus ``buf``, the 1-D device array of the storage
it views, and ``dev``, its torch device; its ``_st`` is the CudaArray of the whole storage.
Like a MetaArray it refuses every question about data: code that computes on ``_a`` with NumPy
outside ``dispatch`` raises torch's "can't convert cuda:0 device type tensor to numpy" instead
of reading device memory as host memory. Data crosses only here: ``upload``, ``download``,
``mirror`` (a host copy of a storage, for ops with no CUDA kernel yet).

Importing this module imports no CUDA target; the first allocation does.
"""

from __future__ import annotations

import weakref

import numpy as np

from .meta import MetaArray


def no_numpy(dev) -> str:
    return (f"can't convert {dev} device type tensor to numpy. Use Tensor.cpu() to copy the "
            "tensor to host memory first.")


class CudaArray(MetaArray):
    """The array stand-in of a CUDA tensor (geometry as a MetaArray's, ``offset`` in elements
    of ``buf``)."""

    __slots__ = ("buf", "dev")

    def __init__(self, shape: tuple, dtype, strides: tuple | None = None, offset: int = 0,
                 buf=None, dev=None) -> None:
        super().__init__(shape, dtype, strides, offset)
        self.buf = buf
        self.dev = dev

    def _like(self, shape: tuple, dtype, strides, offset: int) -> CudaArray:
        buf = self.buf
        if np.dtype(dtype) != self.dtype:
            buf = buf.view(dtype)
        return CudaArray(shape, dtype, strides, offset, buf, self.dev)

    def element_strides(self) -> tuple:
        isz = self.dtype.itemsize
        return tuple(s // isz for s in self.strides)

    def extent(self) -> int:
        """How many elements of ``buf`` from ``offset`` on the view reaches (0 if empty)."""
        if not self.size:
            return 0
        return 1 + sum((n - 1) * s for n, s in zip(self.shape, self.element_strides()))

    def data_ptr(self) -> int:
        """The device address of the view's first element."""
        return buffer_ptr(self.buf) + self.offset * self.dtype.itemsize

    @property
    def __array_interface__(self):
        raise TypeError(no_numpy(self.dev))

    def __array__(self, dtype=None, copy=None):
        raise TypeError(no_numpy(self.dev))

    def _no_data(self, *args, **kwargs):
        raise TypeError(no_numpy(self.dev))

    __getitem__ = __setitem__ = __iter__ = _no_data
    tolist = item = copy = astype = fill = _no_data

    def __repr__(self) -> str:
        return (f"CudaArray(shape={self.shape}, dtype={self.dtype}, strides={self.strides}, "
                f"offset={self.offset}, device={self.dev})")


def buffer_ptr(buf) -> int:
    """The device address of a device array (the simulator's arrays live in host memory)."""
    try:
        return buf.__cuda_array_interface__["data"][0]
    except AttributeError:  # the simulator's FakeCUDAArray
        return buf._ary.__array_interface__["data"][0]


def alloc(n: int, dtype):
    """A 1-D device array of ``n`` elements from the caching allocator."""
    from .kernels.cuda import memory

    return memory.empty(n, np.dtype(dtype))


def empty(shape: tuple, dtype, dev, strides: tuple | None = None) -> tuple:
    """(array, storage) of a fresh CUDA tensor: row-major, or at element ``strides``."""
    dtype = np.dtype(dtype)
    shape = tuple(shape)
    if strides is None:
        n = 1
        for s in shape:
            n *= s
        buf = alloc(n, dtype)
        return CudaArray(shape, dtype, None, 0, buf, dev), CudaArray((n,), dtype, None, 0, buf, dev)
    n = 1 + sum((k - 1) * s for k, s in zip(shape, strides)) if all(shape) else 0
    buf = alloc(n, dtype)
    isz = dtype.itemsize
    return (CudaArray(shape, dtype, tuple(s * isz for s in strides), 0, buf, dev),
            CudaArray((n,), dtype, None, 0, buf, dev))


def _dense_span(a: np.ndarray):
    """The flat memory a dense (no gaps, no overlap, no negative strides) array covers, read
    in address order; None for any other array."""
    if a.flags.c_contiguous:
        return a.reshape(-1)
    isz = a.itemsize
    if any(s < 0 for s in a.strides):
        return None
    span = 1 + sum((n - 1) * (s // isz) for n, s in zip(a.shape, a.strides)) if a.size else 0
    if span != a.size or any(s % isz for s in a.strides):
        return None
    return np.lib.stride_tricks.as_strided(a, (span,), (isz,))


def upload(host: np.ndarray, dev) -> tuple:
    """(array, storage) of a CUDA copy of ``host``: its strides kept where it is dense (a
    channels-last or transposed tensor moves as one block), else row-major."""
    flat = _dense_span(host)
    if flat is None:
        host = np.ascontiguousarray(host)
        flat = host.reshape(-1)
    buf = alloc(flat.size, host.dtype)
    if flat.size:
        buf.copy_to_device(np.ascontiguousarray(flat))
    st = CudaArray((flat.size,), host.dtype, None, 0, buf, dev)
    return CudaArray(host.shape, host.dtype, host.strides, 0, buf, dev), st


def download(a: CudaArray) -> np.ndarray:
    """A host copy of the view ``a`` (its strides kept)."""
    n = a.extent()
    if not n:
        return np.empty(a.shape, a.dtype)
    host = a.buf[a.offset:a.offset + n].copy_to_host()
    return np.ndarray(a.shape, a.dtype, host, 0, a.strides)


def mirror(st: CudaArray) -> np.ndarray:
    """A host copy of a whole storage (``write_back`` returns changes to the device)."""
    if not st.shape[0]:
        return np.empty(0, st.dtype)
    return st.buf.copy_to_host()


def write_back(st: CudaArray, host: np.ndarray) -> None:
    if host.size:
        st.buf.copy_to_device(host)


# Host storages in page-locked memory (``Tensor.pin_memory``): id -> weak reference
_pinned: dict = {}


def pin(host: np.ndarray) -> np.ndarray:
    """A copy of ``host`` in page-locked host memory (transfers from it skip a staging copy),
    its strides kept where it is dense."""
    from .kernels.cuda import target

    flat = _dense_span(host)
    if flat is None:
        host = np.ascontiguousarray(host)
        flat = host.reshape(-1)
    st = target.cuda.pinned_array(flat.shape, dtype=flat.dtype)
    st[...] = flat
    key = id(st)
    _pinned[key] = weakref.ref(st, lambda _, k=key: _pinned.pop(k, None))
    return np.ndarray(host.shape, host.dtype, st, 0, host.strides) if st.size else st, st


def is_pinned(st) -> bool:
    r = _pinned.get(id(st))
    return r is not None and r() is st

