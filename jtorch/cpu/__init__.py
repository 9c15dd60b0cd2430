"""torch.cpu: the CPU as a device module (``torch.get_device_module("cpu")``): one device,
always available; streams and synchronisation are no-ops, since CPU kernels run in program
order; ``amp`` holds the deprecated ``torch.cpu.amp`` spellings."""

from __future__ import annotations

import contextlib
import os
import platform

from .._streams import Event, Stream
from . import amp  # noqa: F401

__all__ = ["Event", "Stream", "StreamContext", "current_device", "current_stream",
           "device_count", "get_capabilities", "is_available", "is_initialized", "set_device",
           "stream", "synchronize"]

_default_stream = Stream()


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def set_device(device) -> None:
    """Nothing to select: there is one CPU device."""


def synchronize(device=None) -> None:
    """CPU kernels finish before their call returns: nothing to wait for."""


def current_stream(device=None) -> Stream:
    return _default_stream


class StreamContext(contextlib.AbstractContextManager):
    """``with torch.cpu.stream(s):``: CPU streams do not reorder work, so it only holds ``s``."""

    def __init__(self, stream) -> None:
        self.stream = stream

    def __exit__(self, *exc) -> None:
        return None


def stream(stream) -> StreamContext:
    return StreamContext(stream)


def get_capabilities() -> dict:
    """The host CPU's instruction-set features and core counts, under torch's key names."""
    from llvmlite import binding

    feats = binding.get_host_cpu_features()
    names = {"avx": "avx", "avx2": "avx2", "fma": "fma3", "f16c": "f16c", "sse": "sse",
             "sse2": "sse2", "sse3": "sse3", "ssse3": "ssse3", "sse4.1": "sse4_1",
             "sse4.2": "sse4_2", "popcnt": "popcnt", "bmi": "bmi", "bmi2": "bmi2",
             "lzcnt": "lzcnt", "avx512f": "avx512_f", "avx512bw": "avx512_bw",
             "avx512dq": "avx512_dq", "avx512vl": "avx512_vl", "avx512cd": "avx512_cd",
             "avx512vnni": "avx512_vnni", "avx512bf16": "avx512_bf16",
             "avx512fp16": "avx512_fp16", "avxvnni": "avx_vnni", "amx-bf16": "amx_bf16",
             "amx-int8": "amx_int8", "amx-tile": "amx_tile"}
    caps = {ours: bool(feats.get(llvm, False)) for llvm, ours in names.items()}
    n = os.cpu_count() or 1
    caps.update({"architecture": platform.machine(), "num_logical_cores": n,
                 "num_physical_cores": n, "num_sockets": 1,
                 "cpu_name": binding.get_host_cpu_name()})
    return caps
