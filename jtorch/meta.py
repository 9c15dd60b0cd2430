"""Meta tensors: shape, dtype and strides with no storage (torch's ``device="meta"``).

A meta tensor's ``_a`` is a ``MetaArray``: it answers the metadata questions the op layer
asks a NumPy array (``shape``, ``strides`` in bytes, ``dtype``, ``ndim``, ``size``,
``flags.c_contiguous``) and refuses every question about data. NumPy (``__array__``) and
Numba (an object it cannot type) both fail loudly on it, so an op that computes outside
``dispatch`` raises on meta tensors instead of returning an answer; ``dispatch`` runs an op's
meta rule and builds the results here without running a kernel.

>>> import jtorch as torch
>>> torch.empty(2, 3, device="meta").t().stride()
(1, 3)
"""

from __future__ import annotations

import numpy as np

_NO_DATA = "Cannot copy out of meta tensor; no data!"


class _Flags:
    """NumPy's contiguity flags of a MetaArray, each computed when first asked (sizes may be
    symbolic while tracing: every comparison is a guard)."""

    __slots__ = ("_a", "_c", "_f")

    def __init__(self, a: MetaArray) -> None:
        self._a, self._c, self._f = a, None, None

    @property
    def c_contiguous(self) -> bool:
        c = self._c
        if c is None:
            a = self._a
            c = self._c = a._dense or _contiguous(a.shape, a.strides, a.dtype.itemsize,
                                                  range(len(a.shape) - 1, -1, -1))
        return c

    @property
    def f_contiguous(self) -> bool:
        f = self._f
        if f is None:
            a = self._a
            f = self._f = _contiguous(a.shape, a.strides, a.dtype.itemsize, range(len(a.shape)))
        return f


def _contiguous(shape: tuple, strides: tuple, itemsize: int, order) -> bool:
    expected = itemsize
    for d in order:
        n = shape[d]
        if n == 0:
            return True
        if n != 1 and strides[d] != expected:
            return False
        expected *= n
    return True


class MetaArray:
    """The array stand-in of a meta tensor: geometry in NumPy's terms (byte strides), an
    element ``offset`` into its storage, no data. ``fake`` is the device a tracer's stand-in
    reports (the device of the value it stands for); None for a tensor on ``meta``."""

    __slots__ = ("__weakref__", "_dense", "_flags", "dtype", "fake", "offset", "shape", "strides")

    def __init__(self, shape: tuple, dtype, strides: tuple | None = None, offset: int = 0,
                 fake=None) -> None:
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self._dense = strides is None  # row-major by construction
        if strides is None:
            strides = contiguous_byte_strides(self.shape, self.dtype.itemsize)
        self.strides = tuple(strides)
        self.offset = offset
        self._flags = None
        self.fake = fake

    # -- geometry ---------------------------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def flags(self) -> _Flags:
        f = self._flags
        if f is None:
            f = self._flags = _Flags(self)
        return f

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def reshape(self, *shape) -> MetaArray:
        """Only what needs no copy: a C-contiguous array to any shape of its size."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if not self.flags.c_contiguous:
            raise NotImplementedError(_NO_DATA)
        n = self.size
        if -1 in shape:
            known = 1
            for s in shape:
                if s != -1:
                    known *= s
            shape = tuple(n // known if known and s == -1 else 0 if s == -1 else s for s in shape)
        return self._like(shape, self.dtype, None, self.offset)

    def transpose(self, *axes) -> MetaArray:
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        if not axes:
            axes = tuple(reversed(range(len(self.shape))))
        return self._like(tuple(self.shape[d] for d in axes), self.dtype,
                          tuple(self.strides[d] for d in axes), self.offset)

    @property
    def T(self) -> MetaArray:
        return self.transpose()

    def view(self, dtype) -> MetaArray:
        if np.dtype(dtype).itemsize != self.dtype.itemsize:
            raise NotImplementedError(_NO_DATA)
        return self._like(self.shape, dtype, self.strides, self.offset)

    def _like(self, shape: tuple, dtype, strides, offset: int) -> MetaArray:
        """Another geometry over the same storage (a CUDA array keeps its device buffer)."""
        return MetaArray(shape, dtype, strides, offset, self.fake)

    # -- data: none -------------------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise NotImplementedError(_NO_DATA)

    def _no_data(self, *args, **kwargs):
        raise NotImplementedError(_NO_DATA)

    __getitem__ = __setitem__ = __iter__ = _no_data
    tolist = item = copy = astype = fill = _no_data

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype}, strides={self.strides})"


def contiguous_byte_strides(shape: tuple, itemsize: int) -> tuple:
    st, acc = [], itemsize
    for n in reversed(shape):
        st.append(acc)
        acc *= max(n, 1)
    return tuple(reversed(st))


def storage_for(a: MetaArray) -> MetaArray:
    """A 1-D stand-in for the storage ``a`` spans (views of it share it)."""
    if a._dense and not a.offset:
        return MetaArray((a.size,), a.dtype, None, 0, a.fake)
    isz = a.dtype.itemsize
    span = a.offset + 1 + sum((n - 1) * (s // isz) for n, s in zip(a.shape, a.strides)) \
        if a.size else a.offset
    return MetaArray((span,), a.dtype, None, 0, a.fake)


# Set by a tracer while it runs (``jtorch/compile``): ``read_hook(tensor, what)`` is called
# before any read of a tensor's values (``item``, ``bool``, ``tolist``, ``numpy``, printing,
# ``backward``) so that it can compute the value (a graph break) or refuse (fullgraph).
read_hook = None
# ``detach_hook(t)``: set while jtorch.compile traces a user's function, so that ``t.detach()``
# is recorded (an alias that does not require grad) instead of a tensor the trace cannot tell
# from ``t`` (they share one array)
detach_hook = None
# ``effect_hook(what, fn, args, kwargs, run=None, reads=True)``: set while jtorch.compile
# traces a user's function. Calls whose effects live outside tensors (``backward``, an
# optimizer's ``step`` and ``zero_grad``, setting a tensor's ``.grad``) hand themselves to it:
# the graph so far runs, the call runs eagerly (``run`` if given, else ``fn``) and is
# recorded, so that a cached call replays it between its graphs instead of tracing again.
effect_hook = None
# ``eager_hook()``: set while jtorch.compile traces a user's function, a context manager under
# which ops run eagerly on real tensors (beneath any vmap level over the trace): a double
# backward built inside the traced function (``autograd.grad(create_graph=True)``: func.vjp,
# jacrev, hessian) runs there, its graph made of real nodes rather than the trace's stand-ins
eager_hook = None
