"""The Tensor: a NumPy view (shape, strides, offset) over a 1-D storage array, plus autograd
fields. Views share the storage and the version counter of their base.

Op methods (``x.exp()``, ``x + y``, ``x[i]``, ``x.backward()``) come from one table,
``jtorch/ops/tensor_methods.py``, which maps each torch method name to the function in its op
family's module and attaches them all once, when ``jtorch`` is imported; this module holds only
what every tensor has (metadata, autograd fields, storage access) and imports no op module.
"""

from __future__ import annotations

import numpy as np

from . import dtypes as _dt
from . import meta as _meta
from .cuda_array import CudaArray, download, no_numpy
from .cuda_array import is_pinned as _is_pinned
from .device import CPU, META
from .meta import MetaArray, storage_for
from .shape import Size, elem_offset, span

_META_ARRAY = MetaArray
_CUDA_ARRAY = CudaArray


class Tensor:
    __slots__ = (
        "__dict__",
        "__weakref__",
        "_a",
        "_base",
        "_grad",
        "_hooks",
        "_output_nr",
        "_requires_grad",
        "_retains_grad",
        "_st",
        "_vc",
        "dtype",
        "grad_fn",
    )

    # -- construction -----------------------------------------------------------------------
    def __new__(cls, *args, **kwargs):
        if cls is Tensor and not kwargs.get("_internal"):
            return _legacy_new(*args, **kwargs)
        return object.__new__(cls)

    @classmethod
    def _make(cls, a: np.ndarray, st: np.ndarray | None = None, dtype: _dt.dtype | None = None,
              base: Tensor | None = None, vc: list | None = None) -> Tensor:
        """Wrap array ``a``; ``st`` is its 1-D storage (``a`` itself, flattened, if fresh)."""
        t = object.__new__(cls)
        if st is None and not a.size and a.ndim and a.__class__ is np.ndarray \
                and not any(a.strides):
            a = _empty_strides(a)  # a fresh empty array (views pass their storage)
        t._a = a
        if st is None:
            st = a.reshape(-1) if a.flags.c_contiguous and a.__class__ is not _META_ARRAY else \
                storage_for(a) if a.__class__ is _META_ARRAY else span(a)
        t._st = st
        t.dtype = _dt._FROM_NP[a.dtype] if dtype is None else dtype
        t._requires_grad = False
        t._grad = None
        t.grad_fn = None
        t._base = base
        # the version counter, shared with the views (in-place checks): a one-element list,
        # a third of the cost of a counter object, and every op result gets one
        t._vc = vc if vc is not None else base._vc if base is not None else [0]
        t._retains_grad = False
        t._hooks = None
        t._output_nr = 0
        return t

    def _view(self, a: np.ndarray) -> Tensor:
        """A tensor viewing the same storage as self (for view ops): ``_make`` spelled out,
        views being the cheapest and among the commonest op results."""
        t = object.__new__(Tensor)
        t._a = a
        t._st = self._st
        t.dtype = self.dtype
        t._requires_grad = False
        t._grad = None
        t.grad_fn = None
        base = self._base
        t._base = self if base is None else base
        t._vc = self._vc  # shared with the base
        t._retains_grad = False
        t._hooks = None
        t._output_nr = 0
        return t

    # -- metadata ---------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        return Size(self._a.shape)

    def size(self, dim: int | None = None, *, axis=None):
        if axis is not None:
            dim = axis
        if dim is None:
            return Size(self._a.shape)
        return self._a.shape[_dim_index(dim, self._a.ndim)]

    def dim(self) -> int:
        return self._a.ndim

    ndim = property(dim)

    def ndimension(self) -> int:
        return self._a.ndim

    def numel(self) -> int:
        return self._a.size

    nelement = numel

    @property
    def device(self):
        a = self._a
        c = a.__class__
        if c is _META_ARRAY:
            return a.fake or META
        return a.dev if c is _CUDA_ARRAY else CPU

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self.device is CPU

    @property
    def is_meta(self) -> bool:
        return self.device is META

    # other backends and layouts torch has: never here
    is_xpu = is_mps = is_mkldnn = is_quantized = is_sparse = is_sparse_csr = is_nested = \
        is_ipu = is_hpu = is_mtia = is_maia = is_vulkan = is_xla = property(lambda self: False)

    def is_pinned(self, device=None) -> bool:
        """Whether the storage is page-locked host memory (``pin_memory``); a sparse tensor's
        never is."""
        return not self.is_sparse and _is_pinned(self._st)

    def is_shared(self) -> bool:
        return False

    def share_memory_(self) -> Tensor:
        """Moves the storage to shared memory for worker processes (a no-op: jtorch's
        DataLoader workers receive copies)."""
        return self

    def cuda(self, device=None, non_blocking: bool = False, memory_format=None) -> Tensor:
        """A copy on CUDA device ``device`` (an index, "cuda:i" or a torch.device; None: the
        current one), self where it is there already; torch's errors without CUDA."""
        from . import cuda
        from .device import cuda_device
        from .device import device as _device

        if not cuda.is_available():
            from .nn.modules.module import _no_device

            _no_device("cuda", device)
        if device is None or isinstance(device, int) and not isinstance(device, bool):
            dev = cuda_device(device)
        else:
            d = _device(device)
            if d.type != "cuda":
                raise RuntimeError("Invalid device, must be cuda device")
            dev = cuda_device(d.index)
        if memory_format is None:
            return self.to(dev, non_blocking=non_blocking)
        return self.to(dev, non_blocking=non_blocking, memory_format=memory_format)

    @property
    def layout(self) -> _dt.layout:
        return _dt.strided

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    def element_size(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self._a.nbytes

    def stride(self, dim: int | None = None, *, axis=None):
        if axis is not None:
            dim = axis
        a = self._a
        st = tuple(s // a.itemsize for s in a.strides)
        if dim is None:
            return st
        return st[_dim_index(dim, self._a.ndim)]

    def storage_offset(self) -> int:
        a = self._a
        return elem_offset(a, self._st) if a.size else 0

    def data_ptr(self) -> int:
        if _meta.read_hook is not None:
            _meta.read_hook(self, "Tensor.data_ptr()")
        a = self._a
        if a.__class__ is _META_ARRAY:
            return 0
        if a.__class__ is _CUDA_ARRAY:
            return a.data_ptr()
        return a.__array_interface__["data"][0]

    @property
    def __cuda_array_interface__(self) -> dict:
        """The CUDA Array Interface (version 2, as torch's): CuPy, Numba and torch read a CUDA
        tensor's memory through it without a copy."""
        a = self._a
        if a.__class__ is not _CUDA_ARRAY:
            raise AttributeError(f"Can't get __cuda_array_interface__ on non-CUDA tensor type: "
                                 f"{self.type()} If CUDA data is required use tensor.cuda() to "
                                 "copy tensor to device memory.")
        if self._requires_grad:
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires "
                               "grad. If gradients aren't required, use var.detach() to get "
                               "Variable that doesn't require grad.")
        return {"typestr": a.dtype.str, "shape": tuple(a.shape),
                "strides": None if a.flags.c_contiguous else tuple(a.strides),
                "data": (a.data_ptr() if a.size else 0, False), "version": 2}

    def untyped_storage(self):
        if _meta.read_hook is not None:
            _meta.read_hook(self, "Tensor.untyped_storage()")
        return _Storage(self._st)

    def is_contiguous(self, memory_format=None) -> bool:
        """Dense in row-major order, or in a channels-last order if ``memory_format`` names
        one (torch ignores the strides of size-1 dims)."""
        a = self._a
        if memory_format is None and a.flags.c_contiguous:
            return True
        fmt = _dt.check_memory_format(memory_format, "is_contiguous")
        if fmt in _dt._CHANNELS_LAST:
            rank, order = _dt._CHANNELS_LAST[fmt]
            if a.ndim != rank:
                return False
            dims = reversed(order)
        elif a.flags.c_contiguous:
            return True
        else:
            dims = reversed(range(a.ndim))
        expected = 1
        for d in dims:
            n = a.shape[d]
            if n != 1 and a.strides[d] // a.itemsize != expected:
                return False
            expected *= n
        return True

    def is_floating_point(self) -> bool:
        return self.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self.dtype.is_complex

    def is_signed(self) -> bool:
        return self.dtype.is_signed

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def retains_grad(self) -> bool:
        """True after ``retain_grad()`` on a non-leaf: backward fills its ``.grad``."""
        return self._retains_grad

    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(value)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        if _meta.read_hook is not None and self._a.__class__ is _META_ARRAY:
            _meta.read_hook(self, "Tensor.requires_grad_()")  # autograd state: a graph break
        if self.grad_fn is not None and not requires_grad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to use a "
                "computed variable in a subgraph that doesn't require differentiation use "
                "var_no_grad = var.detach()."
            )
        if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def grad(self):
        """The gradient accumulated by backward (leaves, and non-leaves that retain_grad)."""
        g = self._grad
        if g is None and self.grad_fn is not None and not self._retains_grad:
            import warnings

            warnings.warn(_NON_LEAF_GRAD, UserWarning, stacklevel=2)
        return g

    @grad.setter
    def grad(self, g) -> None:
        if _meta.effect_hook is not None:  # traced: a step a cached call replays
            _meta.effect_hook("setting Tensor.grad", _set_grad, (self, g), {}, reads=False)
            return
        _set_grad(self, g)

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    @property
    def _version(self) -> int:
        return self._vc[0]

    @property
    def data(self) -> Tensor:
        if _meta.detach_hook is not None:  # traced: an alias the graph knows (as detach())
            return _meta.detach_hook(self)
        return Tensor._make(self._a, self._st, self.dtype)

    @data.setter
    def data(self, other: Tensor) -> None:
        if (self.device.type == "meta") != (other.device.type == "meta"):  # (CPU, CUDA: dense)
            raise RuntimeError("Attempted to call `variable.set_data(tensor)`, but `variable` and "
                               "`tensor` have incompatible tensor type.")
        self._a, self._st, self.dtype = other._a, other._st, other.dtype

    def detach(self) -> Tensor:
        if _meta.detach_hook is not None:
            return _meta.detach_hook(self)
        return Tensor._make(self._a, self._st, self.dtype, vc=self._vc)

    def detach_(self) -> Tensor:
        self.grad_fn = None
        self._requires_grad = False
        return self

    # -- conversion to Python / NumPy -------------------------------------------------------
    def item(self):
        if _meta.read_hook is not None:
            _meta.read_hook(self, "Tensor.item()")
        if self._a.size != 1:
            raise RuntimeError(
                f"a Tensor with {self._a.size} elements cannot be converted to Scalar"
            )
        if self._a.__class__ is _META_ARRAY:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return self._host().reshape(()).item()

    def _host(self) -> np.ndarray:
        """The values as a host array (a copy of a CUDA tensor's, for reading them)."""
        a = self._a
        return download(a) if a.__class__ is _CUDA_ARRAY else a

    def tolist(self):
        if _meta.read_hook is not None:
            _meta.read_hook(self, "Tensor.tolist()")
        return self._host().tolist()

    def numpy(self, *, force: bool = False) -> np.ndarray:
        if _meta.read_hook is not None:
            _meta.read_hook(self, "Tensor.numpy()")
        if self._a.__class__ is _META_ARRAY:
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to "
                            "copy the tensor to host memory first.")
        if self._a.__class__ is _CUDA_ARRAY:
            if force:
                return self.detach().cpu().numpy()
            raise TypeError(no_numpy(self.device))
        if self._requires_grad and not force:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead."
            )
        if self.dtype is _dt.bfloat16:  # NumPy has no bfloat16 of its own: torch refuses
            raise TypeError("Got unsupported ScalarType BFloat16")
        return self._a

    def __array__(self, dtype=None, copy=None):
        if _meta.read_hook is not None:
            _meta.read_hook(self, "Tensor.__array__()")
        a = self._a
        if a.__class__ is _META_ARRAY:
            raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to "
                            "copy the tensor to host memory first.")
        if a.__class__ is _CUDA_ARRAY:
            raise TypeError(no_numpy(self.device))
        if self.dtype is _dt.bfloat16:
            raise TypeError("Got unsupported ScalarType BFloat16")
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def __len__(self) -> int:
        if self._a.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._a.shape[0]

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self) -> bool:
        if self._a.size != 1:
            raise RuntimeError(
                f"Boolean value of Tensor with {'no values' if self._a.size == 0 else 'more than one value'}"
                " is ambiguous"
            )
        return bool(self._scalar("bool(Tensor)"))

    def _scalar(self, what: str = "Tensor.item()"):
        if _meta.read_hook is not None:
            _meta.read_hook(self, what)
        if self._a.size != 1:
            raise ValueError("only one element tensors can be converted to Python scalars")
        if self._a.__class__ is _META_ARRAY:
            raise RuntimeError("Tensor.item() cannot be called on meta tensors")
        return self._host().reshape(()).item()

    def __float__(self) -> float:
        return float(self._scalar("float(Tensor)"))

    def __int__(self) -> int:
        return int(self._scalar("int(Tensor)"))

    def __complex__(self) -> complex:
        return complex(self._scalar("complex(Tensor)"))

    def __index__(self) -> int:
        if self.dtype.category > 1 or self._a.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.item())

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self, *, tensor_contents=None) -> str:
        from ._tensor_str import format_meta, format_tensor

        if _meta.read_hook is not None:
            _meta.read_hook(self, "printing a Tensor")
        suffixes = []
        if self._requires_grad and self.grad_fn is None:
            suffixes.append("requires_grad=True")
        elif self.grad_fn is not None:
            suffixes.append(f"grad_fn=<{type(self.grad_fn).__name__}>")
        if self._a.__class__ is _META_ARRAY:  # the size instead of values, as torch
            return format_meta(tuple(self._a.shape), self.dtype.name,
                               _dt.get_default_dtype().name, suffixes)
        if self._a.__class__ is _CUDA_ARRAY:  # torch names the device first
            suffixes.insert(0, f"device='{self.device}'")
        return format_tensor(self._host(), self.dtype.name, _dt.get_default_dtype().name,
                             suffixes)

    __str__ = __repr__

    def __format__(self, spec: str) -> str:
        if _meta.read_hook is not None:
            _meta.read_hook(self, "formatting a Tensor")
        if self._a.ndim == 0 and self._a.__class__ is not _META_ARRAY:
            return self.item().__format__(spec)
        if spec:  # torch defers to object.__format__, which takes no format spec
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def __reduce_ex__(self, proto):
        if self._a.__class__ is _META_ARRAY:
            return (_rebuild_meta, (self._a.shape, self._a.strides, self.dtype.name,
                                    self._requires_grad))
        if self._a.__class__ is _CUDA_ARRAY:
            return (_rebuild_on, (self._host(), self.dtype.name, self._requires_grad,
                                  str(self.device)))
        return (_rebuild, (np.array(self._a), self.dtype.name, self._requires_grad))

    def __deepcopy__(self, memo):
        out = self.clone().detach().requires_grad_(self._requires_grad)
        memo[id(self)] = out
        return out

    # -- type conversion --------------------------------------------------------------------
    def type(self, dtype=None, non_blocking: bool = False, **kwargs):
        if dtype is None:  # torch names the device but CPU's: "torch.meta.FloatTensor"
            dev = self.device.type
            return f"torch.{self.dtype._legacy}" if dev == "cpu" else \
                f"torch.{dev}.{self.dtype._legacy}"
        if isinstance(dtype, str):
            name = dtype.rsplit(".", 1)[-1]
            matches = [d for d in _dt.ALL if d._legacy == name]
            if not matches:
                raise ValueError(f"invalid type: '{dtype}'")
            dtype = matches[0]
        return self.to(dtype)

    def cpu(self) -> Tensor:
        return self.to("cpu")

    @property
    def T(self) -> Tensor:
        # torch reverses the dims with permute (PermuteBackward0) at every rank.
        return self.permute(*reversed(range(self._a.ndim)))

    @property
    def mT(self) -> Tensor:
        if self._a.ndim < 2:
            raise RuntimeError(f"tensor.mT is only supported on matrices or batches of matrices. "
                               f"Got {self._a.ndim}-D tensor.")
        return self.transpose(-2, -1)

    @property
    def H(self) -> Tensor:
        h = self.transpose(0, 1) if self._a.ndim == 2 else self.T
        return h.conj() if self.dtype.is_complex else h

    @property
    def mH(self) -> Tensor:
        return self.mT.conj() if self.dtype.is_complex else self.mT


class SparseOperandError(NotImplementedError):
    """Dense code read a sparse tensor's strided data (``_a``/``_st``, which a
    ``jtorch.sparse`` tensor does not have). ``dispatch``'s entry points catch it and hand the
    call to ``jtorch.sparse`` (dense calls pay nothing: the raise happens only for sparse
    operands); uncaught, it is torch's error for an op the SparseCPU backend lacks."""

    def __init__(self, frame) -> None:
        super().__init__()
        self._frame = frame  # where the read happened: names the op, lazily

    def __str__(self) -> str:
        from .sparse import op_name_at

        return (f"Could not run 'aten::{op_name_at(self._frame)}' with arguments from the "
                "'SparseCPU' backend. This could be because the operator doesn't exist for this "
                "backend, or was omitted during the selective/custom build process (if using "
                "custom build).")


_NON_LEAF_GRAD = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
    "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
    "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
    "github.com/pytorch/pytorch/pull/30531 for more information.")


def _dim_index(dim, ndim: int) -> int:
    """A size()/stride() dim argument as an index (0-d tensors have no dims to ask about)."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    from .shape import wrap_dim

    return wrap_dim(dim, ndim)


def _empty_strides(a: np.ndarray) -> np.ndarray:
    """NumPy gives fresh empty arrays all-zero strides; torch gives them row-major ones
    (``zeros(0, 4).stride() == (4, 1)``), and a view of one keeps what it was given."""
    from .meta import contiguous_byte_strides

    return np.lib.stride_tricks.as_strided(a, a.shape, contiguous_byte_strides(a.shape, a.itemsize))


class _Storage:
    """A minimal untyped storage handle (identity and size, for sharing checks)."""

    def __init__(self, st: np.ndarray):
        self._st = st

    def data_ptr(self) -> int:
        if _meta.read_hook is not None:
            _meta.read_hook(self, "Tensor.data_ptr()")
        st = self._st
        if st.__class__ is _CUDA_ARRAY:
            return st.data_ptr()
        return st.__array_interface__["data"][0]

    def nbytes(self) -> int:
        return self._st.nbytes

    def size(self) -> int:
        return self._st.nbytes


def _rebuild_meta(shape, strides, dtype_name, requires_grad):
    t = Tensor._make(MetaArray(shape, getattr(_dt, dtype_name).np, strides))
    t._requires_grad = requires_grad
    return t


def _rebuild(arr, dtype_name, requires_grad):
    t = Tensor._make(arr)
    t._requires_grad = requires_grad
    return t


def _rebuild_on(arr, dtype_name, requires_grad, device):
    t = Tensor._make(arr).to(device)
    t._requires_grad = requires_grad
    return t


def _legacy_new(*args, **kwargs):
    """``torch.Tensor(data)`` / ``torch.Tensor(2, 3)``: default-dtype constructors."""
    from .ops import creation

    if len(args) == 1 and not isinstance(args[0], int):
        return creation.tensor(args[0], dtype=_dt.get_default_dtype())
    return creation.empty(*args, dtype=_dt.get_default_dtype())


def wrap(a: np.ndarray) -> Tensor:
    return Tensor._make(a)


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def _set_grad(self: Tensor, g) -> None:
    """``Tensor.grad = g``, with torch's checks of ``g``."""
    if g is not None:
        if not isinstance(g, Tensor):
            raise TypeError(f"assigned grad expected to be a Tensor or None but got grad of "
                            f"type {type(g).__name__}")
        gs = tuple(g.shape) if g.is_sparse else g._a.shape  # (embedding's sparse grads)
        if gs != self._a.shape:
            raise RuntimeError(f"attempting to assign a gradient of size "
                               f"'{list(gs)}' to a tensor of size "
                               f"'{list(self._a.shape)}'. Please ensure that the gradient "
                               "and the tensor are the same size")
        gd = self.__dict__.get("_grad_dtype", self.dtype) if self.__dict__ else self.dtype
        if gd is not None and g.dtype is not gd:
            raise RuntimeError(
                f"attempting to assign a gradient with dtype '{g.dtype.cpp_name}' to "
                f"a tensor "
                f"with grad_dtype '{gd.scalar_name}'. The gradient must match the "
                "tensor's grad_dtype (defaults to the tensor's dtype). You can set the "
                "tensor's grad_dtype attribute with a specific dtype, or None to allow any "
                "dtype. Set grad_dtype with caution. Diverging the dtypes of a tensor and "
                "its gradient may break downstream systems that assume they match.")
        if g.device.type != self.device.type:
            raise RuntimeError(
                f"attempting to assign a gradient with device type '{g.device.type}' to a "
                f"tensor with device type '{self.device.type}'. Please ensure that the "
                "gradient and the tensor are on the same device")
    self._grad = g
