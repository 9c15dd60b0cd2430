"""The one module that imports Numba's CUDA target: every other module takes ``cuda`` and the
helpers below from here, so the built-in ``numba.cuda`` and the ``numba-cuda`` package (which,
once installed, answers ``import numba.cuda`` itself) can diverge in one place only.

``NUMBA_ENABLE_CUDASIM=1`` must be set before this module is first imported: Numba picks the
simulator or the real target when ``numba.cuda`` is imported.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import threading
import time
import weakref
from collections.abc import Callable

import numpy as np
from numba import config, cuda

SIMULATOR: bool = bool(config.ENABLE_CUDASIM)
if SIMULATOR:
    # The simulator runs a block's threads as Python threads while its own thread polls them:
    # with the interpreter's default 5 ms switch interval a barrier costs milliseconds (a
    # small reduction 60 ms per launch, 5 ms at 50 us).
    sys.setswitchinterval(5e-5)

_lock = threading.Lock()


def _patch_simulator() -> None:
    """Two races of Numba's simulator, whose block threads are Python threads running at once:
    - ``cuda.shared.array`` looks its array up, then creates it: two threads of a block could
      each get their own, and a shared-memory tree would read the other's garbage;
    - a kernel or device function call swaps ``cuda`` in its module's globals while iterating
      them in Python bytecode: a warning raised meanwhile in another thread adds
      ``__warningregistry__`` to those globals ("dictionary changed size during iteration"),
      and the first thread to leave restored the real module under the others.
    Here the array is made under a lock, and the swap is counted per globals dict (the threads
    of one launch share its fake module): made by the first caller, undone by the last."""
    from numba.core import types
    from numba.cuda.simulator import kernel as sim_kernel
    from numba.cuda.simulator import kernelapi
    from numba.np import numpy_support

    shared_lock = threading.Lock()
    plain_array = kernelapi.FakeCUDAShared.array

    def array(self, shape, dtype):
        if shape == 0:  # dynamic shared memory: one buffer already
            return plain_array(self, shape, dtype)
        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        f = sys._getframe(1)
        caller = (f.f_code.co_filename, f.f_lineno)
        with shared_lock:
            res = self._allocations.get(caller)
            if res is None:
                res = self._allocations[caller] = np.empty(shape, dtype)
        return res

    swap_lock = threading.Lock()
    swaps: dict = {}  # id(globals) -> [callers inside, the real entries]

    @contextlib.contextmanager
    def swapped_cuda_module(fn, fake_cuda_module):
        globs = fn.__globals__
        key = id(globs)
        with swap_lock:
            entry = swaps.get(key)
            if entry is None:
                real = {k: v for k, v in list(globs.items()) if v is cuda}
                entry = swaps[key] = [0, real]
                globs.update(dict.fromkeys(real, fake_cuda_module))
            entry[0] += 1
        try:
            yield
        finally:
            with swap_lock:
                entry[0] -= 1
                if not entry[0]:
                    del swaps[key]
                    globs.update(entry[1])

    kernelapi.FakeCUDAShared.array = array
    kernelapi.swapped_cuda_module = swapped_cuda_module
    sim_kernel.swapped_cuda_module = swapped_cuda_module


if SIMULATOR:
    _patch_simulator()


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


# -- devices ---------------------------------------------------------------------------------
# The simulator has one device and no name, multiprocessor count, memory size or L2 size; it
# runs in host memory, so its device reports the host's memory and one multiprocessor.
SIMULATOR_NAME = "Numba CUDA simulator"


def device_count() -> int:
    """Devices the driver sees (1 under the simulator, 0 without a driver)."""
    if SIMULATOR:
        return 1
    try:
        return len(cuda.gpus)
    except Exception:  # noqa: BLE001  (no driver: no devices, as torch answers)
        return 0


def current_device_index() -> int:
    """The index of the current thread's device (making its context current, as torch does)."""
    if SIMULATOR:
        return 0
    return int(cuda.get_current_device().id)


def select_device(i: int) -> None:
    """Makes device ``i`` current for the calling thread (Numba refuses to switch a thread's
    context once it has one: ``device_scope`` switches for a block)."""
    if SIMULATOR or i == current_device_index():
        return
    cuda.select_device(i)


@contextlib.contextmanager
def device_scope(i: int):
    """Device ``i`` current inside the block (Numba's context push and pop)."""
    if SIMULATOR or i == current_device_index():
        yield
        return
    with cuda.gpus[i]:
        yield


def _host_memory() -> tuple:
    try:
        page = os.sysconf("SC_PAGE_SIZE")
        return os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page
    except (ValueError, OSError, AttributeError):  # not POSIX
        return 0, 0


def memory_info(i: int) -> tuple:
    """(free, total) bytes of device ``i`` (the host's memory under the simulator)."""
    if SIMULATOR:
        return _host_memory()
    with cuda.gpus[i]:
        free, total = cuda.current_context().get_memory_info()
    return int(free), int(total)


def device_properties(i: int) -> dict:
    """torch's ``_CudaDeviceProperties`` fields of device ``i``."""
    if SIMULATOR:
        major, minor = cuda.gpus[0].compute_capability
        return {"name": SIMULATOR_NAME, "major": major, "minor": minor,
                "total_memory": _host_memory()[1], "multi_processor_count": 1,
                "uuid": cuda.gpus[0].device.uuid.removeprefix("GPU-"), "L2_cache_size": 0,
                "warp_size": 32, "is_integrated": 0}
    with cuda.gpus[i]:
        dev = cuda.get_current_device()
        total = int(cuda.current_context().get_memory_info()[1])
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        major, minor = dev.compute_capability
        return {"name": name, "major": major, "minor": minor, "total_memory": total,
                "multi_processor_count": int(dev.MULTIPROCESSOR_COUNT),
                "uuid": str(dev.uuid).removeprefix("GPU-"), "L2_cache_size": int(dev.L2_CACHE_SIZE),
                "warp_size": int(dev.WARP_SIZE), "is_integrated": int(dev.INTEGRATED)}


def synchronize() -> None:
    """Waits for all work on the current device (the simulator runs every launch to completion
    before it returns: nothing to wait for)."""
    cuda.synchronize()


# -- streams and events ----------------------------------------------------------------------
# The simulator's streams are markers (every launch runs to completion before it returns) and
# its events record nothing: ``Event`` below keeps the host time of ``record`` instead, which
# is when all work queued before it has finished.
_handles = itertools.count(1)


def _as_int(handle) -> int:
    """A driver handle as an int (ctypes pointers hold it in ``value``, NVIDIA's bindings
    convert)."""
    v = getattr(handle, "value", handle)
    return int(v or 0)


def new_stream():
    """(a stream, its handle as an int): a new stream on the current device."""
    s = cuda.stream()
    return s, (next(_handles) if SIMULATOR else _as_int(s.handle))


def default_stream():
    """(the current device's default stream, 0)."""
    return (None if SIMULATOR else cuda.default_stream()), 0


class Event:
    """A CUDA event on the current device; under the simulator, a host timestamp."""

    def __init__(self, timing: bool) -> None:
        self._ev = None if SIMULATOR else cuda.event(timing=timing)
        self.handle = next(_handles) if SIMULATOR else _as_int(self._ev.handle)
        self.host_time = None

    def record(self, stream) -> None:
        self.host_time = time.perf_counter()
        if self._ev is not None:
            self._ev.record(stream or 0)

    def query(self) -> bool:
        return True if self._ev is None else self._ev.query()

    def synchronize(self) -> None:
        if self._ev is not None:
            self._ev.synchronize()

    def wait(self, stream) -> None:
        if self._ev is not None:
            self._ev.wait(stream or 0)

    def elapsed_ms(self, end: Event) -> float:
        if self._ev is None:
            return (end.host_time - self.host_time) * 1e3
        return float(self._ev.elapsed_time(end._ev))


# -- memory ----------------------------------------------------------------------------------
_CUDA_ERROR_OUT_OF_MEMORY = 2
_leases: dict = {}  # real target: the live leases (numba's AutoFreePointers), held as numba holds its own


def device_array(nbytes: int):
    """A fresh 1-D uint8 device array of ``nbytes`` bytes: one driver allocation (``memory.py``
    caches them)."""
    return cuda.device_array(nbytes, dtype=np.uint8)


def empty_array(dtype):
    """A 0-element device array of ``dtype`` (no memory: a NULL pointer)."""
    return cuda.device_array(0, dtype=dtype)


def flush_frees() -> None:
    """Makes the driver free the arrays that died now: Numba queues frees and flushes them in
    batches (the simulator's memory is NumPy's, freed at once)."""
    if not SIMULATOR:
        cuda.current_context().memory_manager.deallocations.clear()


def is_oom(exc: BaseException) -> bool:
    """Whether an allocation failed for lack of device memory."""
    return isinstance(exc, MemoryError) or getattr(exc, "code", None) == _CUDA_ERROR_OUT_OF_MEMORY


class _HostLease:
    """The simulator's lease: NumPy keeps it as the base of the typed array and every view of
    it, so it dies with the last of them."""

    __slots__ = ("__array_interface__", "__weakref__", "block")

    def __init__(self, host: np.ndarray, nbytes: int) -> None:
        self.block = host
        self.__array_interface__ = {"data": (host.__array_interface__["data"][0], False),
                                    "shape": (nbytes,), "typestr": "|u1", "version": 3}


def typed_view(block, n: int, dtype: np.dtype, release: Callable[[], None]):
    """A 1-D device array of ``n`` elements of ``dtype`` over the first bytes of ``block`` (from
    ``device_array``); ``release()`` runs once the array and every view of it are gone.

    Real target: the array's memory is a numba ``AutoFreePointer`` over the block's address,
    whose views count references to it as numba's own allocations do (so ``arr[2:5]`` keeps
    it alive after ``arr`` dies); it is held here until the count reaches zero. Simulator: the
    array's host memory has a ``_HostLease`` as its NumPy base."""
    nbytes = n * dtype.itemsize
    if SIMULATOR:
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        lease = _HostLease(block._ary, nbytes)
        weakref.finalize(lease, release)
        return FakeCUDAArray(np.asarray(lease).view(dtype))
    from numba.cuda.cudadrv import driver
    from numba.cuda.cudadrv.devicearray import DeviceNDArray

    base = block.gpu_data
    key = object()

    def free() -> None:
        _leases.pop(key, None)
        release()

    lease = driver.AutoFreePointer(base.context, base.device_pointer, nbytes, finalizer=free)
    _leases[key] = lease
    return DeviceNDArray(shape=(n,), strides=(dtype.itemsize,), dtype=dtype, gpu_data=lease.own())
