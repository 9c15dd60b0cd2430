"""Pure shape arithmetic: broadcasting, dim wrapping, size checks (torch's error wording), and
the element geometry of arrays (strides, storage offset, the memory span) that the op layer and
the kernels read from NumPy arrays and MetaArrays alike."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from .meta import MetaArray


class Size(tuple):
    """torch.Size: a tuple of ints that prints as ``torch.Size([2, 3])``."""

    def __repr__(self) -> str:
        return f"torch.Size([{', '.join(str(s) for s in self)}])"

    def numel(self) -> int:
        return math.prod(self)

    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        if not isinstance(other, tuple):
            raise TypeError(f"can only concatenate tuple (not {type(other).__name__}) to torch.Size")
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__


def broadcast_shapes(*shapes: Sequence[int]) -> Size:
    """torch.broadcast_shapes: shapes are folded in order, each checked from its last dim, so
    a mismatch names the shapes and dimension as torch's infer_size does."""
    if len(shapes) == 2:
        a, b = shapes
        if a == b:
            return Size(a)
    out: list = []
    for s in shapes:
        s = (s,) if isinstance(s, int) else s
        if len(s) > len(out):
            out = [1] * (len(s) - len(out)) + out
        off = len(out) - len(s)
        for i in range(len(s) - 1, -1, -1):
            n, o = s[i], out[off + i]
            if n == o or n == 1:
                continue
            if o != 1:
                raise RuntimeError(
                    f"The size of tensor a ({o}) must match the size of tensor b ({n}) at "
                    f"non-singleton dimension {off + i}")
            out[off + i] = n
    return Size(out)


def wrap_dim(dim: int, ndim: int) -> int:
    """Normalise a possibly negative dim; 0-d tensors accept dims -1 and 0."""
    if not isinstance(dim, int):
        dim = _index(dim)
    n = max(ndim, 1)
    if dim < -n or dim >= n:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})"
        )
    return dim + n if dim < 0 else dim


def wrap_dims(dims, ndim: int) -> tuple:
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, int):
        dims = (dims,)
    out = tuple(wrap_dim(d, ndim) for d in dims)
    if len(set(out)) != len(out):
        raise RuntimeError(f"dim {out} appears multiple times in the list of dims")
    return out


def _index(x) -> int:
    if isinstance(x, int) and x.__class__ is not bool:  # an int, or a traced symbolic size
        return x
    try:
        return x.__index__()
    except AttributeError:
        raise TypeError(f"expected an integer, got {type(x).__name__}") from None


def as_shape(size) -> tuple:
    """Accept ``f(2, 3)``, ``f((2, 3))`` or ``f(torch.Size(...))`` argument styles."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    for s in size:
        if s.__class__ is not int or s < 0:
            break
    else:  # non-negative plain ints (the common call): nothing to convert or check
        return tuple(size)
    out = tuple(_index(s) for s in size)
    for s in out:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(out)}")
    return out


def infer_size(shape: Sequence[int], numel: int) -> tuple:
    """Resolve one -1 in a view/reshape shape (torch's error messages)."""
    shape = tuple(shape)
    neg = [i for i, s in enumerate(shape) if s == -1]
    if len(neg) > 1:
        raise RuntimeError("only one dimension can be inferred")
    for s in shape:
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s}")
    known = math.prod(s for s in shape if s != -1)
    if neg:
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        shape = shape[: neg[0]] + (numel // known,) + shape[neg[0] + 1 :]
    elif known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def iter_order(shape: Sequence[int], operands: list) -> list:
    """TensorIterator's dimension order (fastest first) for operands' element strides over
    ``shape`` (0 for broadcast dims): insertion sort where a dim goes after another when the
    first operand with non-zero strides in both says so (ties: the larger dim goes later)."""

    def should_swap(d0, d1):
        for st in operands:
            s0, s1 = st[d0], st[d1]
            if s0 == 0 or s1 == 0:
                continue
            if s0 != s1:
                return 1 if s0 > s1 else -1
            if shape[d0] > shape[d1]:
                return 1
        return 0

    perm = list(range(len(shape) - 1, -1, -1))
    for i in range(1, len(perm)):
        d1 = i
        for d0 in range(i - 1, -1, -1):
            c = should_swap(perm[d0], perm[d1])
            if c > 0:
                perm[d0], perm[d1] = perm[d1], perm[d0]
                d1 = d0
            elif c < 0:
                break
    return perm


def contiguous_strides(shape: Sequence[int]) -> tuple:
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def is_dense(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Element strides that lay ``shape`` out without gaps or overlaps in some dim order (a
    permuted row-major layout; size-1 dims ignored)."""
    expected = 1
    for s, n in sorted((s, n) for n, s in zip(shape, strides) if n != 1):
        if s != expected:
            return False
        expected *= n
    return True


# -- array geometry in elements ---------------------------------------------------------------
# These take NumPy arrays or MetaArrays (``shape``, ``strides`` in bytes, ``itemsize``, ``flags``;
# a MetaArray also has ``offset``), never tensors: this module sits below ``tensor.py``.

def elem_strides(a) -> tuple:
    """The strides of array ``a`` in elements (``a.strides`` is in bytes), as ``Tensor.stride()``."""
    isz = a.itemsize
    return tuple([s // isz for s in a.strides])


def bcast_strides(shape: Sequence[int], strides: Sequence[int], target: Sequence[int]) -> list:
    """``strides`` of an operand of ``shape`` broadcast to ``target``: aligned from the last dim,
    0 for size-1 and for new leading dims, in the units ``strides`` came in."""
    off = len(target) - len(shape)
    out = [0] * len(target)
    for i, (n, s) in enumerate(zip(shape, strides)):
        if n != 1:
            out[off + i] = s
    return out


def bcast_elem_strides(a, target: Sequence[int]) -> list:
    """``bcast_strides(a.shape, elem_strides(a), target)`` in one pass over array ``a`` (the
    pointwise dispatch path calls it per operand)."""
    isz = a.itemsize
    off = len(target) - a.ndim
    st = [0] * len(target)
    for i, (n, s) in enumerate(zip(a.shape, a.strides)):
        if n != 1:
            st[off + i] = s // isz
    return st


def _make_data_ptr():
    """``data_ptr(a)``: the address of a NumPy array's first element. ``__array_interface__``
    builds a dict (~3 us, on every non-contiguous view); the pointer is the field after the
    object header in NumPy's array struct (``PyArrayObject_fields.data``), read directly
    (~0.4 us) where a probe confirms that layout."""
    import ctypes

    probe = np.arange(4.0)[1:]
    read = ctypes.c_void_p.from_address
    at = object.__basicsize__
    try:
        ok = read(id(probe) + at).value == probe.__array_interface__["data"][0]
    except (ValueError, OSError):
        ok = False
    if ok:
        nd = np.ndarray

        def data_ptr(a) -> int:
            if a.__class__ is nd:
                return read(id(a) + at).value or 0
            return a.__array_interface__["data"][0]
    else:
        def data_ptr(a) -> int:
            return a.__array_interface__["data"][0]
    return data_ptr


data_ptr = _make_data_ptr()


def elem_offset(a, storage) -> int:
    """Where array ``a`` starts in its 1-D ``storage``, in elements, also for empty views (for
    which ``Tensor.storage_offset()`` reports 0). A MetaArray carries it; a dense array as large
    as its storage starts at the storage's first element, which skips reading the data pointers
    (microseconds)."""
    if isinstance(a, MetaArray):  # (a CUDA array's too)
        return a.offset
    n = a.size
    if n and n == storage.size:
        f = a.flags
        if f.c_contiguous or f.f_contiguous:
            return 0
    return (data_ptr(a) - data_ptr(storage)) // a.itemsize


def span(a: np.ndarray) -> np.ndarray:
    """A C-contiguous 1-D array over the memory NumPy array ``a`` touches, starting at its first
    element: the buffer kernels index with element strides, and a storage views of ``a`` alias.
    Not for MetaArrays (no memory: ``meta.storage_for`` is their stand-in)."""
    if a.flags.c_contiguous:
        return a.reshape(-1)
    isz = a.itemsize
    n = 1
    if a.size:
        for k, s in zip(a.shape, a.strides):
            n += (k - 1) * (s // isz)
    else:
        n = 0
    # a slice of the row-major array at the end of a's base chain, where there is one of a's
    # dtype (views of a tensor's storage): 2.3 us where as_strided took 3.7 (it is called per
    # strided operand of every pointwise call)
    root = a
    b = a.base
    while b.__class__ is _NDARRAY:
        root = b
        b = b.base
    if root is not a and root.dtype == a.dtype and root.flags.c_contiguous and \
            root.flags.writeable == a.flags.writeable:  # (a read-only view stays so)
        off, rem = divmod(data_ptr(a) - data_ptr(root), isz)
        if not rem and off >= 0 and off + n <= root.size:
            return root.reshape(-1)[off:off + n]
    return np.lib.stride_tricks.as_strided(a, shape=(n,), strides=(isz,))


_NDARRAY = np.ndarray
