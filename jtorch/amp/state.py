"""Autocast's per-thread state and the casts its op lists apply.

torch's CPU autocast casts at the level of the named op: matmuls, convolutions, ``linear``,
``prelu`` and attention run in the autocast dtype (``lower``); losses, ``prod``, linalg, fft
and a few pooling/padding ops run in float32 (``fp32``); every other op runs in its inputs'
dtypes. Only floating-point tensors on the autocast device are cast, never float64. The op
functions ask ``on`` first (a module global, one load when autocast is off) and cast their
tensor operands with ``lower`` / ``fp32``; the long tail of float32 ops is wrapped with
``fp32_op``, which also runs the op's own inner calls without autocast, as torch does."""

from __future__ import annotations

import functools
import threading
import warnings

from .. import dtypes as _dt
from ..tensor import Tensor

# whether some thread has CPU autocast on: the gate every op function reads
on = False
_threads_on = 0
_lock = threading.Lock()

_DEFAULT_DTYPE = {"cpu": _dt.bfloat16, "cuda": _dt.float16, "xla": _dt.bfloat16,
                  "xpu": _dt.bfloat16, "hpu": _dt.bfloat16, "mps": _dt.float16,
                  "mtia": _dt.bfloat16, "ipu": _dt.float16}
CPU_DTYPES = (_dt.bfloat16, _dt.float16)
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
    if device_type == "cpu" and was != enabled:
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

def _cast(x, target):
    if not isinstance(x, Tensor):
        return x
    d = x.dtype
    if d is target or not d.is_floating_point or d is _dt.float64 or x.device.type != "cpu":
        return x
    return x.to(target)


def lower(*args) -> tuple:
    """``args`` with their floating-point CPU tensors in the autocast dtype (when CPU
    autocast is on in this thread)."""
    if not state.enabled.get("cpu"):
        return args
    d = state.dtype["cpu"]
    return tuple(_cast(x, d) for x in args)


def fp32(*args) -> tuple:
    """``args`` with their lower-precision floating-point CPU tensors in float32."""
    if not state.enabled.get("cpu"):
        return args
    return tuple(_cast(x, _dt.float32) for x in args)


class _Off:
    """Runs an op's inner calls with this thread's CPU autocast off."""

    def __enter__(self):
        state.enabled["cpu"] = False

    def __exit__(self, *exc):
        state.enabled["cpu"] = True


def fp32_op(fn):
    """``fn`` (an op torch autocasts to float32) casting its tensor arguments, positional
    and keyword, and running its body without autocast."""

    @functools.wraps(fn)
    def run(*args, **kwargs):
        if not on or not state.enabled.get("cpu"):
            return fn(*args, **kwargs)
        args = tuple(_cast(x, _dt.float32) for x in args)
        kwargs = {k: _cast(v, _dt.float32) for k, v in kwargs.items()}
        with _Off():
            return fn(*args, **kwargs)

    return run
