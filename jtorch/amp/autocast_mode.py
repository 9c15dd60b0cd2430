"""``autocast``: a region whose ops may run in a lower precision (none here: see package)."""

from __future__ import annotations

import functools
import warnings

_DEVICES = ("cpu", "cuda", "xpu", "mps", "hpu", "mtia", "xla", "meta")


def is_autocast_available(device_type: str) -> bool:
    return device_type == "cpu"


class autocast:
    """``with jtorch.autocast("cpu"):`` or as a decorator; ops keep their dtypes."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(  # noqa: TRY004  (torch's type)
                f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICES:
            raise RuntimeError(f"User specified an unsupported autocast device_type "
                               f"'{device_type}'")
        self.device = device_type
        self.fast_dtype = dtype
        self._enabled = bool(enabled)
        if device_type == "cuda" and enabled:
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                          UserWarning, stacklevel=2)
            self._enabled = False

    def __enter__(self):
        from ..ops import aten

        self._prev = aten.is_autocast_enabled(self.device)
        aten.set_autocast_enabled(self.device, self._enabled)
        return self

    def __exit__(self, *exc) -> bool:
        from ..ops import aten

        aten.set_autocast_enabled(self.device, self._prev)
        return False

    def __call__(self, func):
        @functools.wraps(func)
        def run(*args, **kwargs):
            with self:
                return func(*args, **kwargs)
        return run


def custom_fwd(fwd=None, *, device_type: str = "cuda", cast_inputs=None):
    """Decorator of a custom Function's forward under autocast: ops keep their dtypes here."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    return fwd


def custom_bwd(bwd=None, *, device_type: str = "cuda"):
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    return bwd
