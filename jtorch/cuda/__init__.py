"""torch.cuda as a build without CUDA answers it: nothing is available, queries that need a
device raise torch's error, seeding and cache calls do nothing. (CUDA kernels are not
available yet; this module is where they will report themselves.)"""

from __future__ import annotations

import contextlib

from . import amp  # noqa: F401

_NOT_COMPILED = "Torch not compiled with CUDA enabled"


def is_available() -> bool:
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def init() -> None:
    raise AssertionError(_NOT_COMPILED)


def _needs_device(*args, **kwargs):
    raise AssertionError(_NOT_COMPILED)


current_device = synchronize = get_device_name = get_device_properties = \
    get_device_capability = current_stream = default_stream = _needs_device


def set_device(device) -> None:
    raise AssertionError(_NOT_COMPILED)


def manual_seed(seed: int) -> None:
    """Seeds the CUDA generators (none here): nothing to do, as in torch without CUDA."""


def manual_seed_all(seed: int) -> None:
    """As ``manual_seed``."""


def seed() -> None:
    """As ``manual_seed``."""


def seed_all() -> None:
    """As ``manual_seed``."""


def empty_cache() -> None:
    """Frees cached device memory (none here)."""


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def memory_allocated(device=None) -> int:
    return 0


def max_memory_allocated(device=None) -> int:
    return 0


def memory_reserved(device=None) -> int:
    return 0


def max_memory_reserved(device=None) -> int:
    return 0


def reset_peak_memory_stats(device=None) -> None:
    raise AssertionError(_NOT_COMPILED)


class device(contextlib.AbstractContextManager):
    """``with torch.cuda.device(i)``: a device index to switch to (no devices here)."""

    def __init__(self, device) -> None:
        self.idx = device

    def __exit__(self, *exc) -> bool:
        return False


class Event:
    def __init__(self, *args, **kwargs) -> None:
        raise RuntimeError("Tried to instantiate dummy base class Event")


class Stream:
    def __init__(self, *args, **kwargs) -> None:
        raise RuntimeError("Tried to instantiate dummy base class Stream")
