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
own inner calls without autocast, as torch does. A few ops cast their operands to the widest
floating dtype among them (``promote``: stack, cat and index_copy on CPU; addcdiv, addcmul,
atan2, bilinear, cross, dot, grid_sample, index_put, tensordot and scatter_add on CUDA), and CUDA
bans binary_cross_entropy (``ban_cuda``)."""

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
# pointwise ops torch's CUDA autocast promotes to their widest floating operand
CUDA_PROMOTE = frozenset({"addcdiv", "addcmul", "atan2"})
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


def fp32(*args, devices=_CAST_DEVICES) -> tuple:
    """``args`` with their lower-precision floating-point tensors (on ``devices``) in float32."""
    if not _active():
        return args
    return tuple(_cast(x, _dt.float32, devices) for x in args)


def fp32_cuda(*args) -> tuple:
    """``args`` with their lower-precision CUDA tensors in float32 (CUDA's longer list)."""
    if not state.enabled.get("cuda"):
        return args
    return tuple(_cast(x, _dt.float32, ("cuda",)) for x in args)


def promote(device_type: str, *args) -> tuple:
    """torch's "promote" policy on ``device_type``: its eligible tensors (floating point, not
    float64, on that device) cast to the widest of the autocast dtype and theirs (float32 wins;
    the other 16-bit dtype beside the autocast one is torch's error)."""
    if not state.enabled.get(device_type):
        return args
    low = state.dtype[device_type]
    t = low
    for x in args:
        if isinstance(x, Tensor) and x.dtype.is_floating_point and x.dtype is not _dt.float64 \
                and x.device.type == device_type:
            if t is _dt.float32 or x.dtype is _dt.float32:
                t = _dt.float32
            elif x.dtype is not low:
                raise RuntimeError("Unexpected floating ScalarType in at::autocast::prioritize")
    return tuple(_cast(x, t, (device_type,)) for x in args)


def ban_cuda(x, name: str) -> None:
    """torch's error for an op its CUDA autocast bans (a CUDA tensor in a CUDA region)."""
    if state.enabled.get("cuda") and isinstance(x, Tensor) and x.device.type == "cuda":
        raise RuntimeError(_BANNED[name])


_BANNED = {"binary_cross_entropy": (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast.")}


class _Off:
    """Runs an op's inner calls with this thread's autocast off."""

    def __enter__(self):
        en = state.enabled
        self.prev = {k: en.get(k, False) for k in _CAST_DEVICES}
        for k in _CAST_DEVICES:
            en[k] = False

    def __exit__(self, *exc):
        state.enabled.update(self.prev)


def promote_op(device_type: str):
    """The op wrapped to ``promote`` its tensor arguments on ``device_type`` and run its body
    without autocast (its inner products must not drop back to 16 bits); ``out=`` calls are
    not autocast, as in torch."""

    def wrap(fn):
        @functools.wraps(fn)
        def run(*args, **kwargs):
            if not on or not state.enabled.get(device_type) or kwargs.get("out") is not None:
                return fn(*args, **kwargs)
            keys = list(kwargs)
            cast = promote(device_type, *args, *kwargs.values())
            with _Off():
                return fn(*cast[:len(args)], **dict(zip(keys, cast[len(args):])))

        return run

    return wrap


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
