"""``autocast``: a region whose matmuls and convolutions run in a lower precision."""

from __future__ import annotations

import collections.abc
import functools
import warnings

import numpy as np

from .. import dtypes as _dt
from . import state as _amp

_DEVICES = ("cpu", "cuda", "xpu", "mps", "hpu", "mtia", "xla", "meta")


def _cuda() -> bool:
    from .. import cuda

    return cuda.is_available()


def is_autocast_available(device_type: str) -> bool:
    return device_type == "cpu" or (device_type == "cuda" and _cuda())


class autocast:
    """``with jtorch.autocast("cpu"):`` or as a decorator: matmuls, convolutions and attention
    run in ``dtype`` (bfloat16 by default on CPU, float16 on CUDA), losses, linalg and fft in
    float32 (``amp.state`` holds the op lists' casts). Without a CUDA device, CUDA autocast
    warns that it is disabled, as torch does."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(  # noqa: TRY004  (torch's type)
                f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        _amp.check_device(device_type)
        if device_type not in _DEVICES:
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        self.device = device_type
        self.fast_dtype = _amp.get_dtype(device_type) if dtype is None else dtype
        self._cache_enabled = _amp.state.cache if cache_enabled is None else cache_enabled
        self._enabled = bool(enabled)
        if device_type == "cuda" and enabled and not _cuda():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                          UserWarning, stacklevel=2)
            self._enabled = False
        if device_type == "cuda" and self._enabled and self.fast_dtype not in _amp.CUDA_DTYPES:
            warnings.warn("In CUDA autocast, but the target dtype is not supported. Disabling "
                          "autocast.\nCUDA Autocast only supports dtypes of torch.float16, "
                          "torch.bfloat16 currently.", UserWarning, stacklevel=2)
            self._enabled = False
        if device_type == "cpu" and self._enabled and self.fast_dtype not in _amp.CPU_DTYPES:
            warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                          "autocast.\nCPU Autocast only supports dtypes of torch.bfloat16, "
                          "torch.float16 currently.", UserWarning, stacklevel=2)
            self._enabled = False

    def __enter__(self):
        s = _amp.state
        self._prev = (_amp.is_enabled(self.device), s.dtype.get(self.device), s.cache)
        _amp.set_enabled(self.device, self._enabled)
        s.dtype[self.device] = self.fast_dtype
        s.nesting += 1
        s.cache = self._cache_enabled
        return self

    def __exit__(self, *exc) -> bool:
        s = _amp.state
        s.nesting -= 1
        enabled, dtype, s.cache = self._prev
        _amp.set_enabled(self.device, enabled)
        s.dtype[self.device] = dtype
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def run(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return run


def _cast_value(value, device_type: str, dtype):
    """torch's ``amp._cast``: eligible tensors inside containers, keys included."""
    if hasattr(value, "is_floating_point") and hasattr(value, "device"):
        eligible = (value.is_floating_point() and value.device.type == device_type
                    and value.dtype is not _dt.float64)
        return value.to(dtype) if eligible else value
    if isinstance(value, (str, bytes, np.ndarray)):
        return value
    if isinstance(value, collections.abc.Mapping):
        return {_cast_value(k, device_type, dtype): _cast_value(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, collections.abc.Iterable):
        it = (_cast_value(v, device_type, dtype) for v in value)
        return type(value)(it) if isinstance(value, (list, tuple)) else it
    return value


def custom_fwd(fwd=None, *, device_type: str, cast_inputs=None):
    """A custom Function's forward under autocast: with ``cast_inputs`` its floating-point
    tensor inputs are cast to that dtype and it runs with autocast off; without, it runs in the
    region's autocast state, which ``custom_bwd`` then gives the backward too."""
    if not isinstance(device_type, str):
        raise ValueError(  # noqa: TRY004  (torch's type)
            f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        args[0]._dtype = _amp.get_dtype(device_type)
        if cast_inputs is None:
            args[0]._fwd_used_autocast = _amp.is_enabled(device_type)
            return fwd(*args, **kwargs)
        on = _amp.is_enabled(device_type)
        args[0]._fwd_used_autocast = False
        if not on:
            return fwd(*args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(*_cast_value(args, device_type, cast_inputs),
                       **_cast_value(kwargs, device_type, cast_inputs))

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """A custom Function's backward in the autocast state its ``custom_fwd`` forward ran in."""
    if not isinstance(device_type, str):
        raise ValueError(  # noqa: TRY004  (torch's type)
            f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        with autocast(device_type=device_type, enabled=args[0]._fwd_used_autocast,
                      dtype=args[0]._dtype):
            return bwd(*args, **kwargs)

    return decorate_bwd
