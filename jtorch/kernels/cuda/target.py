"""The one module that imports Numba's CUDA target: every other module takes ``cuda`` and the
helpers below from here, so the built-in ``numba.cuda`` and the ``numba-cuda`` package (which,
once installed, answers ``import numba.cuda`` itself) can diverge in one place only.

``NUMBA_ENABLE_CUDASIM=1`` must be set before this module is first imported: Numba picks the
simulator or the real target when ``numba.cuda`` is imported.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Callable

from numba import config, cuda

SIMULATOR: bool = bool(config.ENABLE_CUDASIM)

_lock = threading.Lock()


def available() -> bool:
    """Whether kernels can run: a device answers, or the simulator stands in for one."""
    try:
        return bool(cuda.is_available())
    except Exception:  # noqa: BLE001  (a broken driver reads as no device, as torch's does)
        return False


def to_device(a):
    """A device copy of host array ``a``."""
    return cuda.to_device(a)


def jit(fn: Callable):
    """A kernel from a generated Python function (compiled per signature on first launch)."""
    return cuda.jit(fn)


class _Capability:
    def __init__(self, cc: tuple) -> None:
        self.compute_capability = cc


@contextlib.contextmanager
def _target_cc(cc: tuple):
    """Device functions called by a kernel (the OpDefs' scalar functions) are compiled for the
    current device's compute capability; with no device, ``compile_ptx`` names the one to use."""
    from numba.cuda import dispatcher

    saved = dispatcher.get_current_device
    try:
        saved()
        has_device = True
    except Exception:  # noqa: BLE001  (no driver or no device: compile for ``cc``)
        has_device = False
    if has_device:
        yield
        return
    dispatcher.get_current_device = lambda: _Capability(cc)
    try:
        yield
    finally:
        dispatcher.get_current_device = saved


def compile_ptx(fn: Callable, sig: str, cc: tuple = (9, 0)) -> str:
    """PTX text of kernel ``fn`` for signature ``sig`` and compute capability ``cc``; needs the
    CUDA toolkit's NVVM, no device."""
    if SIMULATOR:
        raise RuntimeError("compile_ptx is not available under NUMBA_ENABLE_CUDASIM=1")
    with _lock, _target_cc(cc):
        ptx, _ = cuda.compile_ptx(fn, sig, cc=cc)
    return ptx
