"""More of torch's top-level names: the ATen entry points of dropout, RNN cells, grid
sampling and normalisation that torch exposes beside their nn.functional forms (``torch.dropout
(input, p, train)`` takes ``train`` positionally), the ``native_*`` variants that return their
saved statistics, buffer constructors (``frombuffer``, ``from_file``, ``from_dlpack``), and
process-level switches and flags programs probe (``has_lapack``, ``init_num_threads``,
``set_flush_denormal``, the autocast state functions).

Each composes existing ops, so dispatch, meta tensors and autograd come with them.
"""

from __future__ import annotations

import math
import os
import warnings

import numpy as np

from .. import dtypes as _dt
from ..amp import state as _amp
from ..amp.grad_scaler import GradScaler
from ..dtypes import contiguous_format
from ..tensor import Tensor
from . import creation, views

__all__ = [
    "AcceleratorError",
    "FatalError",
    "GradScaler",
    "OutOfMemoryError",
    "addmv_",
    "adjoint",
    "affine_grid_generator",
    "alpha_dropout",
    "alpha_dropout_",
    "as_strided_",
    "autocast_decrement_nesting",
    "autocast_increment_nesting",
    "clear_autocast_cache",
    "conj_physical_",
    "conv_tbc",
    "dropout",
    "dropout_",
    "dsplit",
    "feature_alpha_dropout",
    "feature_alpha_dropout_",
    "feature_dropout",
    "feature_dropout_",
    "from_dlpack",
    "from_file",
    "frombuffer",
    "get_autocast_cpu_dtype",
    "get_autocast_dtype",
    "get_autocast_gpu_dtype",
    "get_autocast_xla_dtype",
    "grid_sampler",
    "grid_sampler_2d",
    "grid_sampler_3d",
    "gru_cell",
    "has_lapack",
    "has_openmp",
    "has_spectral",
    "init_num_threads",
    "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled",
    "is_autocast_enabled",
    "is_autocast_xla_enabled",
    "is_distributed",
    "legacy_contiguous_format",
    "lstm_cell",
    "native_batch_norm",
    "native_dropout",
    "native_group_norm",
    "native_norm",
    "nonzero_static",
    "norm_except_dim",
    "put",
    "resize_as_",
    "rms_norm",
    "rnn_relu_cell",
    "rnn_tanh_cell",
    "rrelu",
    "rrelu_",
    "set_autocast_cache_enabled",
    "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
    "set_autocast_gpu_dtype",
    "set_autocast_xla_dtype",
    "set_autocast_xla_enabled",
    "set_flush_denormal",
    "sym_sqrt",
    "sym_sum",
]


def _F():
    from ..nn import functional

    return functional


# -- errors torch raises (and exports at the top level) --------------------------------------

class OutOfMemoryError(RuntimeError):
    """A device ran out of memory (torch.OutOfMemoryError, also torch.cuda's)."""


class AcceleratorError(RuntimeError):
    """An accelerator (CUDA, XPU...) reported an error."""


class FatalError(Exception):
    """torch's error for an unrecoverable internal state."""



# -- dropout and rrelu: ``train`` positional, as ATen has them --------------------------------

def dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _F().dropout(input, p, train)


def dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _F().dropout(input, p, train, inplace=True)


def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _F().alpha_dropout(input, p, train)


def alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _F().alpha_dropout(input, p, train, inplace=True)


def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    """Whole channels (dim 1) zeroed together: dropout2d's rule for any rank >= 2."""
    return _feature(input, p, train, False)


def feature_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _feature(input, p, train, True)


def _feature(input: Tensor, p: float, train: bool, inplace: bool) -> Tensor:
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not train or p == 0:
        return input
    shape = list(input.shape[:2]) + [1] * (input.ndim - 2)
    keep = creation.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p) \
        if p < 1 else creation.zeros(shape, dtype=input.dtype, device=input.device)
    scale = keep.div_(1 - p) if p < 1 else keep
    return input.mul_(scale) if inplace else input * scale


def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
    return _F().feature_alpha_dropout(input, p, train)


def feature_alpha_dropout_(input: Tensor, p: float, train: bool) -> Tensor:
    return _F().feature_alpha_dropout(input, p, train, inplace=True)


def native_dropout(input: Tensor, p: float, train) -> tuple:
    """(output, keep mask); in eval (``train`` False) the input and an all-true mask."""
    if train is not None and not train:
        return input.clone(), creation.ones_like(input, dtype=_dt.bool)
    keep = creation.empty_like(input, dtype=_dt.bool).bernoulli_(1 - p)
    return input * keep * (0.0 if p == 1 else 1.0 / (1 - p)), keep


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          generator=None) -> Tensor:
    return _F()._rrelu(input, lower, upper, training, False, generator)


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False, generator=None) -> Tensor:
    return _F()._rrelu(input, lower, upper, training, True, generator)


# -- grid sampling with integer modes -----------------------------------------------------------

_INTERP = ("bilinear", "nearest", "bicubic")
_PAD = ("zeros", "border", "reflection")


def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
    """``F.grid_sample`` with torch's integer codes (0 bilinear, 1 nearest, 2 bicubic; 0
    zeros, 1 border, 2 reflection)."""
    return _F().grid_sample(input, grid, _INTERP[interpolation_mode], _PAD[padding_mode],
                            align_corners)


def _grid_sampler_nd(op_name: str, input: Tensor, grid: Tensor, interpolation_mode: int,
                     padding_mode: int, align_corners: bool) -> Tensor:
    from .. import dispatch
    from ..kernels.defs import resample

    return dispatch.call(getattr(resample, op_name), input, grid,
                         mode=_INTERP[interpolation_mode], padding_mode=_PAD[padding_mode],
                         align_corners=bool(align_corners))


def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    """The 2-D kernel itself: a 5-D input raises torch's rank error."""
    return _grid_sampler_nd("grid_sampler_2d_op", input, grid, interpolation_mode, padding_mode,
                            align_corners)


def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
    return _grid_sampler_nd("grid_sampler_3d_op", input, grid, interpolation_mode, padding_mode,
                            align_corners)


def affine_grid_generator(theta: Tensor, size, align_corners: bool) -> Tensor:
    return _F().affine_grid(theta, list(size), align_corners=align_corners)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    return _F().conv_tbc(input, weight, bias, pad)


# -- RNN cells (ATen's: the weights as arguments) -----------------------------------------------

def _gates(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih, b_hh) -> tuple:
    gi = _F().linear(input, w_ih, b_ih)
    gh = _F().linear(hx, w_hh, b_hh)
    return gi, gh


def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih=None,
                  b_hh=None) -> Tensor:
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).tanh()


def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih=None,
                  b_hh=None) -> Tensor:
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).relu()


def lstm_cell(input: Tensor, hx, w_ih: Tensor, w_hh: Tensor, b_ih=None, b_hh=None) -> tuple:
    """(h', c') from ``hx = (h, c)``: gates i, f, g, o in that order, as torch stacks them."""
    h, c = hx
    gi, gh = _gates(input, h, w_ih, w_hh, b_ih, b_hh)
    i, f, g, o = (gi + gh).chunk(4, 1)
    c2 = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * c2.tanh(), c2


def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih=None,
             b_hh=None) -> Tensor:
    """h' = (1 - z) * n + z * h with gates r, z, n (n = tanh(x_n + r * h_n))."""
    gi, gh = _gates(input, hx, w_ih, w_hh, b_ih, b_hh)
    ir, iz, in_ = gi.chunk(3, 1)
    hr, hz, hn = gh.chunk(3, 1)
    r = (ir + hr).sigmoid()
    z = (iz + hz).sigmoid()
    n = (in_ + r * hn).tanh()
    return (1 - z) * n + z * hx


# -- normalisation with its saved statistics -----------------------------------------------------

def native_batch_norm(input: Tensor, weight, bias, running_mean, running_var, training: bool,
                      momentum: float, eps: float) -> tuple:
    """(output, save_mean, save_invstd): the batch statistics in training (running ones
    updated in place), empty ones in eval, as ATen returns them."""
    out = _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)
    if not training:
        empty = creation.empty(0, dtype=input.dtype, device=input.device)
        return out, empty, empty.clone()
    dims = [0, *range(2, input.ndim)]
    x = input.detach()
    mean = x.mean(dims)
    invstd = (x.var(dims, unbiased=False) + eps).rsqrt()
    return out, mean, invstd


def native_group_norm(input: Tensor, weight, bias, N: int, C: int, HxW: int, group: int,
                      eps: float) -> tuple:
    """(output, mean, rstd) with the statistics per (sample, group), shape (N, group)."""
    out = _F().group_norm(input, group, weight, bias, eps)
    x = input.detach().reshape(N, group, -1)
    mean = x.mean(-1)
    rstd = (x.var(-1, unbiased=False) + eps).rsqrt()
    return out, mean, rstd


def native_norm(input: Tensor, p=2, dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """A sparse tensors' kernel in torch: dense inputs get torch's error."""
    raise NotImplementedError(
        f"Could not run 'aten::native_norm' with arguments from the "
        f"'{input.device.type.upper()}' backend. 'aten::native_norm' is only available for "
        f"sparse tensors.")


def norm_except_dim(v: Tensor, pow: int = 2, dim: int = 0, *, axis=None) -> Tensor:
    """The norm over every dim but ``dim``, kept as size-1 dims (weight_norm's); dim -1: the
    whole tensor's norm."""
    dim = dim if axis is None else axis
    if dim == -1:
        return v.norm(pow)
    dims = [d for d in range(v.ndim) if d != dim % v.ndim]
    return v.norm(pow, dims, keepdim=True) if dims else v.abs() if pow else v


def rms_norm(input: Tensor, normalized_shape, weight=None, eps=None) -> Tensor:
    return _F().rms_norm(input, normalized_shape, weight, eps)


# -- small tensor functions -------------------------------------------------------------------

def adjoint(input: Tensor) -> Tensor:
    """The conjugate transpose of the last two dims (a view, as torch's)."""
    if input.ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor.")
    t = input.transpose(-2, -1)
    return t.conj() if input.dtype.is_complex else t


def dsplit(input: Tensor, indices_or_sections) -> tuple:
    """``tensor_split`` along dim 2 (torch requires 3 or more dims and, for a section count,
    that it divides dim 2)."""
    if input.ndim < 3:
        raise RuntimeError(f"torch.dsplit requires a tensor with at least 3 dimension, but got a "
                           f"tensor with {input.ndim} dimensions!")
    if isinstance(indices_or_sections, int) and (indices_or_sections == 0 or
                                                 input.shape[2] % indices_or_sections):
        raise RuntimeError(f"torch.dsplit attempted to split along dimension 2, but the size of "
                           f"the dimension {input.shape[2]} is not divisible by the split_size "
                           f"{indices_or_sections}!")
    return views.tensor_split(input, indices_or_sections, 2)


def conj_physical_(input: Tensor) -> Tensor:
    if input.dtype.is_complex:
        input.copy_(input.conj_physical())
    return input


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    return input.put(index, source, accumulate)


def nonzero_static(input: Tensor, *, size: int, fill_value: int = -1) -> Tensor:
    """``nonzero`` padded with ``fill_value`` rows (or cut) to exactly ``size`` rows."""
    if size < 0:
        raise RuntimeError(f"nonzero_static: 'size' must be an non-negative integer, but got "
                           f"size: {size}")
    nz = input.nonzero()
    k = nz.shape[0]
    if k >= size:
        return nz[:size].clone()
    pad = creation.full((size - k, nz.shape[1]), fill_value, dtype=nz.dtype, device=nz.device)
    return views.cat([nz, pad], 0)


def is_distributed(input: Tensor) -> bool:
    return False


# -- buffers -----------------------------------------------------------------------------------

def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor over the memory of a Python buffer (shared, as torch's)."""
    d = dtype if dtype is not None else _dt.get_default_dtype()
    size = memoryview(buffer).nbytes
    if size == 0 or count == 0:
        raise ValueError(f"both buffer length ({size}) and count ({count}) must not be 0")
    if offset < 0 or offset >= size:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({size} bytes) minus 1")
    if count < 0 and (size - offset) % d.itemsize:
        raise ValueError(f"buffer length ({size - offset} bytes) after offset ({offset} bytes) "
                         f"must be a multiple of element size ({d.itemsize})")
    if count > 0 and count * d.itemsize > size - offset:
        raise ValueError(f"requested buffer length ({count} * {d.itemsize} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({size} bytes)")
    a = np.frombuffer(buffer, d.np, count, offset)
    t = Tensor._make(a, None, d)
    return t.requires_grad_() if requires_grad else t


def from_file(filename, shared=None, size: int = 0, *, dtype=None, layout=None, device=None,
              pin_memory: bool = False) -> Tensor:
    """``size`` elements read from a file (``shared=True`` maps it, writes reach the file)."""
    d = dtype if dtype is not None else _dt.get_default_dtype()
    nbytes = os.path.getsize(filename)
    if size * d.itemsize > nbytes:
        raise RuntimeError(f"unexpected EOF, expected {size * d.itemsize} bytes, got "
                           f"{nbytes}")
    if shared:
        a = np.memmap(filename, d.np, "r+", shape=(size,))
    else:
        a = np.fromfile(filename, d.np, size)
    return Tensor._make(a, None, d)


def from_dlpack(ext_tensor) -> Tensor:
    """A tensor sharing the memory of any DLPack producer (NumPy arrays, torch tensors...)."""
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    a = np.from_dlpack(ext_tensor)
    return Tensor._make(a, None, _dt._FROM_NP[a.dtype])


# -- process-level flags -------------------------------------------------------------------------

has_lapack = True  # scipy's LAPACK, which Numba's np.linalg calls
has_openmp = True  # Numba's threading layer
has_spectral = False  # no jtorch.fft yet


def init_num_threads() -> None:
    """Nothing to do: the thread pools start on first use."""


def set_flush_denormal(mode: bool) -> bool:
    """Flushing denormals is not configurable here: False, as torch on a CPU without it."""
    return False


def sym_sqrt(a):
    return math.sqrt(a)


def sym_sum(args):
    return sum(args)


legacy_contiguous_format = contiguous_format  # torch keeps the old name as an alias


# autocast state: per thread, in ``amp.state`` (the casts of autocast regions live there too)

def is_autocast_enabled(device_type: str | None = None) -> bool:
    return _amp.is_enabled("cuda" if device_type is None else device_type)


def set_autocast_enabled(device_type, enabled=None) -> None:
    if enabled is None:  # the legacy one-argument form sets CUDA's
        device_type, enabled = "cuda", device_type
    _amp.set_enabled(device_type, enabled)


def is_autocast_cpu_enabled() -> bool:
    _amp.deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return _amp.is_enabled("cpu")


def set_autocast_cpu_enabled(enabled: bool) -> None:
    _amp.deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    _amp.set_enabled("cpu", enabled)


def is_autocast_xla_enabled() -> bool:
    _amp.deprecated("is_autocast_xla_enabled()", "is_autocast_enabled('xla')")
    return _amp.is_enabled("xla")


def set_autocast_xla_enabled(enabled: bool) -> None:
    _amp.deprecated("set_autocast_xla_enabled(enabled)", "set_autocast_enabled('xla', enabled)")
    _amp.set_enabled("xla", enabled)


def get_autocast_dtype(device_type: str):
    return _amp.get_dtype(device_type)


def set_autocast_dtype(device_type: str, dtype) -> None:
    _amp.set_dtype(device_type, dtype)


def get_autocast_cpu_dtype():
    _amp.deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _amp.get_dtype("cpu")


def set_autocast_cpu_dtype(dtype) -> None:
    _amp.deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    _amp.set_dtype("cpu", dtype)


def get_autocast_gpu_dtype():
    _amp.deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return _amp.get_dtype("cuda")


def set_autocast_gpu_dtype(dtype) -> None:
    _amp.deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    _amp.set_dtype("cuda", dtype)


def get_autocast_xla_dtype():
    _amp.deprecated("get_autocast_xla_dtype()", "get_autocast_dtype('xla')")
    return _amp.get_dtype("xla")


def set_autocast_xla_dtype(dtype) -> None:
    _amp.deprecated("set_autocast_xla_dtype(dtype)", "set_autocast_dtype('xla', dtype)")
    _amp.set_dtype("xla", dtype)


def is_autocast_cache_enabled() -> bool:
    return _amp.state.cache


def set_autocast_cache_enabled(enabled: bool) -> None:
    _amp.state.cache = bool(enabled)


def clear_autocast_cache() -> None:
    """No cast cache to clear: each autocast op casts its operands afresh."""


def autocast_increment_nesting() -> int:
    _amp.state.nesting += 1
    return _amp.state.nesting


def autocast_decrement_nesting() -> int:
    _amp.state.nesting -= 1
    return _amp.state.nesting


# -- Tensor methods torch has beside these ----------------------------------------------------

def _linalg():
    from . import linalg

    return linalg


def addbmm_(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return self.copy_(_linalg().addbmm(self, batch1, batch2, beta=beta, alpha=alpha))


def baddbmm_(self: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return self.copy_(_linalg().baddbmm(self, batch1, batch2, beta=beta, alpha=alpha))


def addmv_(self: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1) -> Tensor:
    return self.copy_(_linalg().addmv(self, mat, vec, beta=beta, alpha=alpha))


def addr_(self: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return self.copy_(_linalg().addr(self, vec1, vec2, beta=beta, alpha=alpha))


def swapaxes_(self: Tensor, axis0: int, axis1: int) -> Tensor:
    return self.transpose_(axis0, axis1)


def swapdims_(self: Tensor, dim0: int, dim1: int) -> Tensor:
    return self.transpose_(dim0, dim1)


def _cpu_only(self: Tensor, what: str) -> None:
    if self.device.type != "cpu":
        raise TypeError(f"{what} is only implemented on CPU tensors")


def apply_(self: Tensor, callable) -> Tensor:
    """Each element replaced by ``callable(element)`` (a Python call per element, as torch's;
    CPU only)."""
    _cpu_only(self, "apply_")
    vals = [callable(v) for v in self.detach().reshape(-1).tolist()]
    return self.copy_(creation.tensor(vals, dtype=self.dtype).reshape(self.shape))


def map_(self: Tensor, tensor: Tensor, callable) -> Tensor:
    """``self[i] = callable(self[i], tensor[i])`` with ``tensor`` broadcast to self."""
    _cpu_only(self, "map_")
    other = tensor.expand_as(self).reshape(-1).tolist()
    vals = [callable(a, b) for a, b in zip(self.detach().reshape(-1).tolist(), other)]
    return self.copy_(creation.tensor(vals, dtype=self.dtype).reshape(self.shape))


def map2_(self: Tensor, x: Tensor, y: Tensor, callable) -> Tensor:
    _cpu_only(self, "map2_")
    xs, ys = x.expand_as(self).reshape(-1).tolist(), y.expand_as(self).reshape(-1).tolist()
    vals = [callable(a, b, c) for a, b, c in zip(self.detach().reshape(-1).tolist(), xs, ys)]
    return self.copy_(creation.tensor(vals, dtype=self.dtype).reshape(self.shape))


def as_subclass(self: Tensor, cls) -> Tensor:
    """``self``'s data as an instance of ``cls`` (a Tensor subclass), sharing memory and
    autograd history as torch's does."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"as_subclass(): argument 'cls' must be a subclass of Tensor, not "
                        f"{getattr(cls, '__name__', type(cls).__name__)}")
    t = cls._make(self._a, self._st, self.dtype, vc=self._vc)
    t._requires_grad, t.grad_fn, t._output_nr = self._requires_grad, self.grad_fn, \
        self._output_nr
    return t


def const_data_ptr(self: Tensor) -> int:
    return self.data_ptr()


def dim_order(self: Tensor, *, ambiguity_check: bool = False) -> tuple:
    """The dims from outermost to innermost in memory (stable: ties keep their order)."""
    st = self.stride()
    return tuple(sorted(range(self.ndim), key=lambda d: -st[d]))


def is_nonzero(self: Tensor) -> bool:
    if self.numel() == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if self.numel() > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return bool(self.item())


def is_set_to(self: Tensor, tensor: Tensor) -> bool:
    """Whether both view the same memory with the same geometry."""
    return self.data_ptr() == tensor.data_ptr() and tuple(self.shape) == tuple(tensor.shape) \
        and self.stride() == tensor.stride() and self.dtype == tensor.dtype and \
        self.device == tensor.device


def output_nr(self: Tensor) -> int:
    return self._output_nr


def pin_memory(self: Tensor, device=None) -> Tensor:
    """A copy in page-locked host memory (self if it is there already), for transfers to CUDA;
    torch's errors without a device or for a tensor that is not a dense CPU one."""
    from .. import cuda
    from ..cuda_array import is_pinned, pin

    if not cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if self.device.type != "cpu" or self.is_sparse:
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if is_pinned(self._st):
        return self
    a, st = pin(self._a)
    return Tensor._make(a, st, self.dtype)


def record_stream(self: Tensor, stream) -> None:
    raise RuntimeError("record_stream is only supported on CUDA tensors")


def resize_(self: Tensor, *sizes, memory_format=None) -> Tensor:
    """New contiguous memory of ``sizes`` keeping the elements that fit (torch keeps the
    storage's prefix; a grown tensor's new elements are uninitialised)."""
    from .. import dispatch

    shape = tuple(sizes[0]) if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)) else \
        tuple(sizes)
    if any(int(s) < 0 for s in shape):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{min(shape)}: {list(shape)}")
    if self.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    if tuple(self.shape) == shape:
        return self
    old = self.detach().reshape(-1).clone()
    creation.resize(self, shape)
    k = min(old.numel(), self.numel())
    if k:
        self.view(-1)[:k] = old[:k]
    dispatch.bump_version(self)
    return self


def set_(self: Tensor, source=None, storage_offset: int = 0, size=None, stride=None) -> Tensor:
    """Make ``self`` look at another storage: ``source``'s (a tensor: its very view; a storage
    or a tensor with ``size``: a strided view at ``storage_offset`` elements), or a new empty
    one. Views of the old storage keep it."""
    from .. import dispatch
    from ..tensor import _Storage

    if self._requires_grad and self.grad_fn is None and dispatch.grad_state.enabled:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    if source is None:
        a = np.empty((0,), self.dtype.np)
        st = a
    elif isinstance(source, Tensor) and size is None and stride is None and storage_offset == 0:
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {source.dtype.cpp_name} to a tensor "
                               f"of type {self.dtype.cpp_name}")
        a, st = source._a, source._st
    else:
        if isinstance(source, Tensor):
            if source.dtype is not self.dtype:
                raise RuntimeError(f"Could not set tensor of type {source.dtype.cpp_name} to a "
                                   f"tensor of type {self.dtype.cpp_name}")
            st = source._st
        elif isinstance(source, _Storage):
            st = source._st.view(np.uint8).reshape(-1).view(self.dtype.np)
        else:
            raise TypeError(f"set_(): argument 'source' must be Tensor or Storage, not "
                            f"{type(source).__name__}")
        shape = (st.size - storage_offset,) if size is None else tuple(int(n) for n in size)
        if stride is None:
            stride = [1] * len(shape)
            for i in range(len(shape) - 2, -1, -1):
                stride[i] = stride[i + 1] * max(shape[i + 1], 1)
        need = storage_offset + 1 + sum((n - 1) * abs(k) for n, k in zip(shape, stride)) \
            if all(shape) else 0
        if need > st.size:
            raise RuntimeError(f"setStorage: sizes {list(shape)}, strides {list(stride)}, "
                               f"storage offset {storage_offset}, and itemsize "
                               f"{self.dtype.itemsize} requiring a storage size of "
                               f"{need * self.dtype.itemsize} are out of bounds for storage of "
                               f"size {st.size * self.dtype.itemsize}")
        a = np.lib.stride_tricks.as_strided(st[storage_offset:], shape,
                                            [k * st.itemsize for k in stride])
    self._a, self._st = a, st
    dispatch.bump_version(self)
    return self


def _get_grad_dtype(self: Tensor):
    """The dtype backward gives this leaf's ``.grad`` (its own unless set; None: any)."""
    if self.grad_fn is not None:
        raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
    return self.__dict__.get("_grad_dtype", self.dtype)


def _set_grad_dtype(self: Tensor, d) -> None:
    if self.grad_fn is not None:
        raise RuntimeError("grad_dtype can only be set on leaf tensors.")
    if d is not None and not isinstance(d, _dt.dtype):
        raise RuntimeError(f"grad_dtype must be a torch.dtype or None, but got "
                           f"{type(d).__name__}")
    g = self._grad
    if g is not None and d is not None and g.dtype is not d:
        raise RuntimeError(f"Cannot set grad_dtype to '{d.scalar_name}' because there is already a "
                           f"gradient with dtype '{g.dtype.cpp_name}'. Please clear the gradient "
                           f"(.grad = None) before changing grad_dtype, or ensure the new "
                           f"grad_dtype matches the existing gradient's dtype.")
    if d is self.dtype:
        self.__dict__.pop("_grad_dtype", None)
    else:
        self.__dict__["_grad_dtype"] = d


def _volatile(self: Tensor) -> bool:
    warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                  stacklevel=2)
    return False


def _set_volatile(self: Tensor, value) -> None:
    warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                  "instead.", UserWarning, stacklevel=2)


def _name(self: Tensor) -> None:
    """A tensor's name in a graph of torch's autograd.Variable days: always None."""
    return None


def resize_as_(self: Tensor, the_template: Tensor, memory_format=None) -> Tensor:
    return resize_(self, tuple(the_template.shape))


def resize(self: Tensor, *sizes) -> Tensor:
    """Deprecated out-of-place resize (torch warns): a resized copy."""
    import warnings

    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return resize_(self.detach().clone(), *sizes)


def resize_as(self: Tensor, tensor: Tensor) -> Tensor:
    import warnings

    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return resize_(self.detach().clone(), tuple(tensor.shape))


def sum_to_size(self: Tensor, *size) -> Tensor:
    """Sum broadcast dims away until the shape is ``size`` (which must expand to self's)."""
    shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else \
        tuple(size)
    if len(shape) > self.ndim or any(s not in (1, d) for s, d in
                                     zip(shape[::-1], tuple(self.shape)[::-1])):
        raise RuntimeError(f"size {{{', '.join(map(str, shape))}}} is not expandable to size "
                           f"{{{', '.join(map(str, self.shape))}}}.")
    lead = self.ndim - len(shape)
    res = self.sum(list(range(lead))) if lead else self
    dims = [d for d, s in enumerate(shape) if s == 1 and res.shape[d] != 1]
    return res.sum(dims, keepdim=True) if dims else res


def module_load(self: Tensor, other: Tensor, assign: bool = False) -> Tensor:
    """What ``load_state_dict`` puts into a module for ``other`` (torch's default hook)."""
    return other.detach() if not assign else other


def reinforce(self: Tensor, reward) -> None:
    raise RuntimeError("reinforce() was removed.\nUse torch.distributions instead.\nSee "
                       "https://pytorch.org/docs/main/distributions.html\n\nInstead of:\n\n"
                       "probs = policy_network(state)\naction = probs.multinomial()\n"
                       "next_state, reward = env.step(action)\naction.reinforce(reward)\n"
                       "action.backward()\n\nUse:\n\nprobs = policy_network(state)\n"
                       "# NOTE: categorical is equivalent to what used to be called multinomial\n"
                       "m = torch.distributions.Categorical(probs)\naction = m.sample()\n"
                       "next_state, reward = env.step(action)\nloss = -m.log_prob(action) * "
                       "reward\nloss.backward()\n")


def new(self: Tensor, *args, **kwargs) -> Tensor:
    """The legacy constructor of self's dtype: ``x.new()`` (empty), ``x.new(2, 3)`` or
    ``x.new(torch.Size(...))`` (uninitialised), ``x.new([1, 2])`` (data), ``x.new(t)`` (t)."""
    from ..shape import Size

    if not args:
        return creation.empty(0, dtype=self.dtype, device=self.device)
    if len(args) == 1:
        a = args[0]
        if isinstance(a, Tensor):
            return a
        if isinstance(a, Size):
            return creation.empty(tuple(a), dtype=self.dtype, device=self.device)
        if isinstance(a, (list, tuple)) or not isinstance(a, int):
            return creation.tensor(a, dtype=self.dtype, device=self.device)
    return creation.empty(tuple(args), dtype=self.dtype, device=self.device)


def as_strided_(input: Tensor, size, stride, storage_offset=None) -> Tensor:
    return input.as_strided_(size, stride, storage_offset)


TENSOR_METHODS = {
    "adjoint": adjoint, "dsplit": dsplit, "nonzero_static": nonzero_static,
    "conj_physical_": conj_physical_, "is_distributed": is_distributed,
    "addbmm_": addbmm_, "baddbmm_": baddbmm_, "addmv_": addmv_, "addr_": addr_,
    "swapaxes_": swapaxes_, "swapdims_": swapdims_, "apply_": apply_, "map_": map_,
    "map2_": map2_, "as_subclass": as_subclass, "const_data_ptr": const_data_ptr,
    "dim_order": dim_order, "is_nonzero": is_nonzero, "is_set_to": is_set_to,
    "output_nr": property(output_nr), "pin_memory": pin_memory, "record_stream": record_stream,
    "resize_": resize_, "resize_as_": resize_as_, "resize": resize, "resize_as": resize_as,
    "set_": set_, "grad_dtype": property(_get_grad_dtype, _set_grad_dtype),
    "volatile": property(_volatile, _set_volatile), "name": property(_name),
    "sum_to_size": sum_to_size, "module_load": module_load,
    "reinforce": reinforce, "new": new,
}
