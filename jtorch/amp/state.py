"""Autocast's per-thread state and the casts its op lists apply.

torch's autocast casts at the level of the named op: matmuls, convolutions, ``linear``,
``prelu`` and attention run in the autocast dtype (``lower``); losses, ``prod``, linalg, fft
and a few pooling/padding ops run in float32 (``fp32``); every other op runs in its inputs'
dtypes. Only floating-point tensors on a device whose autocast is on are cast (CPU tensors in
a CPU region, CUDA tensors in a CUDA one), never float64. CUDA's region also runs softmax,
log_softmax, layer_norm, group_norm, sum, cumsum, cumprod, norm and the pointwise ops of
``CUDA_FP32`` in float32 (``fp32_cuda``), as torch's CUDA list does. The op functions ask ``on`` first (a module
global, one load when autocast is off) and cast their tensor operands with ``lower`` /
``fp32``; the long tail of float32 ops is wrapped with ``fp32_op``, which also runs the op's
own inner calls without autocast, as torch does."""

from __future__ import annotations

import functools
import threading
import warnings

from .. import dtypes as _dt
from ..tensor import Tensor

# whether some thread has CPU or CUDA autocast on: the gate every op function reads
on = False
_CAST_DEVICES = ("cpu", "cuda")  # the device types whose regions cast tensors
# pointwise ops torch's CUDA autocast runs in float32 (its fp32 list's pointwise entries)
CUDA_FP32 = frozenset({"acos", "asin", "cosh", "erfinv", "exp", "expm1", "log", "log10", "log2",
                       "log1p", "reciprocal", "rsqrt", "sinh", "tan", "pow", "softplus"})
_threads_on = 0
_lock = threading.Lock()

_DEFAULT_DTYPE = {"cpu": _dt.bfloat16, "cuda": _dt.float16, "xla": _dt.bfloat16,
                  "xpu": _dt.bfloat16, "hpu": _dt.bfloat16, "mps": _dt.float16,
                  "mtia": _dt.bfloat16, "ipu": _dt.float16}
CPU_DTYPES = (_dt.bfloat16, _dt.float16)
CUDA_DTYPES = (_dt.float16, _dt.bfloat16)
# the device types torch's autocast state functions accept
_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                 "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                 "privateuseone")


def check_device(device_type: str) -> str:
    if device_type not in _DEVICE_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at start of "
                           f"device string: {device_type}")
    return device_type


class _State(threading.local):
    """torch keeps autocast's switches in thread-local state; a new thread starts off."""

    def __init__(self) -> None:
        self.enabled: dict = {}
        self.dtype: dict = dict(_DEFAULT_DTYPE)
        self.cache = True
        self.nesting = 0


state = _State()


def is_enabled(device_type: str) -> bool:
    return state.enabled.get(check_device(device_type), False)


def set_enabled(device_type: str, enabled: bool) -> None:
    global on, _threads_on
    check_device(device_type)
    was = state.enabled.get(device_type, False)
    state.enabled[device_type] = enabled = bool(enabled)
    if device_type in _CAST_DEVICES and was != enabled:
        with _lock:
            _threads_on += 1 if enabled else -1
            on = _threads_on > 0


def get_dtype(device_type: str):
    return state.dtype.get(check_device(device_type), _dt.float16)


def set_dtype(device_type: str, dtype) -> None:
    check_device(device_type)
    if not isinstance(dtype, _dt.dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be "
                        f"torch.dtype, not {type(dtype).__name__}")
    state.dtype[device_type] = dtype


def deprecated(old: str, new: str) -> None:
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


# -- the casts ----------------------------------------------------------------------------

def _cast(x, target, devices=_CAST_DEVICES):
    """``x`` in ``target`` (None: its device's autocast dtype) when it is a floating-point
    tensor, not float64, on one of ``devices`` whose autocast is on in this thread."""
    if not isinstance(x, Tensor):
        return x
    d = x.dtype
    if not d.is_floating_point or d is _dt.float64:
        return x
    dev = x.device.type
    if dev not in devices or not state.enabled.get(dev):
        return x
    t = state.dtype[dev] if target is None else target
    return x if d is t else x.to(t)


def _active() -> bool:
    en = state.enabled
    return bool(en.get("cpu") or en.get("cuda"))


def lower(*args) -> tuple:
    """``args`` with their floating-point tensors in their device's autocast dtype (where
    that device's autocast is on in this thread)."""
    if not _active():
        return args
    return tuple(_cast(x, None) for x in args)


def fp32(*args) -> tuple:
    """``args`` with their lower-precision floating-point tensors in float32."""
    if not _active():
        return args
    return tuple(_cast(x, _dt.float32) for x in args)


def fp32_cuda(*args) -> tuple:
    """``args`` with their lower-precision CUDA tensors in float32 (CUDA's longer list)."""
    if not state.enabled.get("cuda"):
        return args
    return tuple(_cast(x, _dt.float32, ("cuda",)) for x in args)


class _Off:
    """Runs an op's inner calls with this thread's autocast off."""

    def __enter__(self):
        en = state.enabled
        self.prev = {k: en.get(k, False) for k in _CAST_DEVICES}
        for k in _CAST_DEVICES:
            en[k] = False

    def __exit__(self, *exc):
        state.enabled.update(self.prev)


def fp32_op(fn):
    """``fn`` (an op torch autocasts to float32) casting its tensor arguments, positional
    and keyword, and running its body without autocast."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        if not on or not _active():
            return fn(*args, **kwargs)
        args = tuple(_cast(x, _dt.float32) for x in args)
        kwargs = {k: _cast(v, _dt.float32) for k, v in kwargs.items()}
        with _Off():
            return fn(*args, **kwargs)

    return run
