"""The caching device allocator: the simulator suite (``sim_memory.py``) in a subprocess, since
the simulator must be chosen before ``numba.cuda`` is first imported; and, in this process (no
device), block sizes and the real target's leases over driver-free pointers: a typed array's
block is released only when the array and every view of it have died."""

import gc
import os
from types import SimpleNamespace

import numpy as np
import pytest
from helpers import run_simulated

SIM = os.path.join(os.path.dirname(__file__), "sim_memory.py")
MiB = 1 << 20


def test_memory_in_the_simulator():
    run_simulated(SIM)


@pytest.mark.parametrize("nbytes, size", [
    (1, 512), (512, 512), (513, 1024), (1000, 1024), (MiB - 1, MiB), (MiB, MiB),
    (MiB + 1, 2 * MiB), (2 * MiB, 2 * MiB), (5 * MiB, 6 * MiB), (100 * MiB + 3, 102 * MiB),
])
def test_block_sizes(nbytes, size):
    from jtorch.kernels.cuda import memory

    assert memory.round_size(nbytes) == size


def _real_target():
    from jtorch.kernels.cuda import target

    if target.SIMULATOR:
        pytest.skip("this process runs the simulator")
    return target


def test_device_arrays_release_their_block_after_the_last_view():
    """The real target's typed arrays (Numba ``DeviceNDArray``s over an ``AutoFreePointer``
    lease), on a pointer no driver made: slicing and viewing need no device, freeing is ours."""
    target = _real_target()
    from numba.cuda.cudadrv import driver, drvapi

    block = SimpleNamespace(gpu_data=driver.MemoryPointer(None, drvapi.cu_device_ptr(1 << 20), 4096))
    released = []
    a = target.typed_view(block, 10, np.dtype(np.float32), lambda: released.append(1))
    assert type(a).__name__ == "DeviceNDArray" and a.shape == (10,) and a.dtype == np.float32
    assert a.__cuda_array_interface__["data"][0] == 1 << 20
    s = a._do_getitem(slice(2, 5))  # a[2:5] without the context check that needs a driver
    assert s.__cuda_array_interface__["data"][0] == (1 << 20) + 8
    del a
    gc.collect()
    assert released == [] and len(target._leases) == 1
    v = s.view(np.int32)
    del s
    gc.collect()
    assert released == []
    del v
    gc.collect()
    assert released == [1] and target._leases == {}
    b = target.typed_view(block, 3, np.dtype(np.int64), lambda: released.append(2))
    del b  # no view was ever taken
    gc.collect()
    assert released == [1, 2] and target._leases == {}


def test_out_of_memory_is_recognised():
    target = _real_target()

    class CudaAPIError(Exception):
        code = 2  # CUDA_ERROR_OUT_OF_MEMORY

    class Other(Exception):
        code = 1

    assert target.is_oom(MemoryError()) and target.is_oom(CudaAPIError())
    assert not target.is_oom(Other()) and not target.is_oom(ValueError())
