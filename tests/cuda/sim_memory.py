"""The caching device allocator (``kernels/cuda/memory.py``) in Numba's simulator: block sizes,
counters, reuse without driver allocations, blocks kept alive by views, ``empty_cache``, the
out-of-memory retry, threads.

Run by ``test_cuda_memory.py`` in a subprocess with ``NUMBA_ENABLE_CUDASIM=1`` (the simulator
must be chosen before ``numba.cuda`` is first imported); the file name keeps pytest's default
collection away from it.
"""

import gc
import os
import threading

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("runs under NUMBA_ENABLE_CUDASIM=1 (test_cuda_memory.py starts it)",
                allow_module_level=True)

import ml_dtypes

import jtorch
from jtorch.kernels.cuda import memory, target

MiB = 1 << 20


def ptr(a) -> int:
    return a._ary.__array_interface__["data"][0]


def stat(name: str) -> int:
    return memory.stats()[name]


@pytest.fixture(autouse=True)
def _clean():
    """Every test starts with no live arrays, an empty cache and fresh peaks."""
    gc.collect()
    memory.empty_cache()
    memory.reset_peak()
    assert memory.allocated() == 0 and memory.reserved() == 0
    yield


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.int64, np.bool_,
                                   np.complex128, np.float16, ml_dtypes.bfloat16])
def test_typed_arrays_hold_values(dtype):
    a = memory.empty(37, dtype)
    assert type(a).__name__ == "FakeCUDAArray"
    assert a.shape == (37,) and a.dtype == np.dtype(dtype)
    want = (np.arange(37) % 2).astype(dtype)
    a.copy_to_device(want)
    np.testing.assert_array_equal(a.copy_to_host(), want)
    assert memory.allocated() == memory.round_size(37 * np.dtype(dtype).itemsize)


def test_zero_elements_take_no_block():
    n = stat("num_device_alloc")
    a = memory.empty(0, np.float32)
    assert a.shape == (0,) and a.dtype == np.float32
    assert memory.allocated() == 0 and stat("num_device_alloc") == n


def test_counters():
    base_alloc, base_freed = stat("num_device_alloc"), stat("allocated_bytes.all.freed")
    a = memory.empty(100, np.float32)  # 400 bytes: a 512-byte small block
    assert memory.allocated() == 512 and memory.reserved() == 512
    assert stat("requested_bytes.all.current") == 400
    b = memory.empty(300_000, np.float64)  # 2.4 MB: a 4 MiB large block
    s = memory.stats()
    assert s["allocated_bytes.all.current"] == 512 + 4 * MiB
    assert s["allocated_bytes.small_pool.current"] == 512
    assert s["allocated_bytes.large_pool.current"] == 4 * MiB
    assert s["allocation.all.current"] == 2 and s["segment.all.current"] == 2
    assert s["num_device_alloc"] == base_alloc + 2
    assert list(s) == sorted(s)
    del b
    gc.collect()
    assert memory.allocated() == 512 and memory.reserved() == 512 + 4 * MiB
    assert memory.max_allocated() == 512 + 4 * MiB
    assert stat("allocated_bytes.all.freed") == base_freed + 4 * MiB
    memory.reset_peak()
    assert memory.max_allocated() == 512 and memory.max_reserved() == 512 + 4 * MiB
    del a
    gc.collect()
    assert memory.allocated() == 0 and memory.reserved() == 512 + 4 * MiB
    assert stat("allocation.all.current") == 0 and stat("segment.all.current") == 2


def test_a_repeated_pattern_makes_no_new_driver_allocations():
    """A training-like step: parameters live throughout, activations and gradients come and
    go in the same sizes every step."""
    params = [memory.empty(n, np.float32) for n in (64 * 32, 32, 32 * 10, 10)]

    def step():
        acts = [memory.empty(8 * n, np.float32) for n in (64, 32, 32, 10)]
        grads = [memory.empty(p.shape[0], np.float32) for p in params]
        big = memory.empty(600_000, np.float32)  # a large-pool temporary
        del acts[1:3], big
        tmp = memory.empty(8 * 32, np.float32)
        del acts, grads, tmp

    step()
    gc.collect()
    after_first = stat("num_device_alloc"), memory.reserved()
    for _ in range(3):
        step()
    gc.collect()
    assert (stat("num_device_alloc"), memory.reserved()) == after_first
    assert memory.allocated() == sum(memory.round_size(4 * p.shape[0]) for p in params)


def test_best_fit_and_its_bounds():
    a, b = memory.empty(1024, np.uint8), memory.empty(4096, np.uint8)
    pa, pb = ptr(a), ptr(b)
    del a, b
    gc.collect()
    n = stat("num_device_alloc")
    c = memory.empty(1000, np.uint8)  # 1024: the exact block, not the 4096 one
    assert ptr(c) == pa and stat("num_device_alloc") == n
    d = memory.empty(100, np.uint8)  # 512: the 4096 block is more than twice too big
    assert ptr(d) != pb and stat("num_device_alloc") == n + 1
    e = memory.empty(2500, np.uint8)  # 2560: the 4096 block fits
    assert ptr(e) == pb and stat("num_device_alloc") == n + 1
    del c, d, e
    big = memory.empty(3 * MiB, np.uint8)  # 4 MiB
    p = ptr(big)
    del big
    gc.collect()
    again = memory.empty(1 * MiB + 1, np.uint8)  # 2 MiB: a 4 MiB block is within twice
    assert ptr(again) == p
    small = memory.empty(MiB, np.uint8)  # small pool: never a large block
    assert ptr(small) != p and stat("num_device_alloc") == n + 3


def test_views_keep_the_block():
    a = memory.empty(16, np.float32)
    a.copy_to_device(np.arange(16, dtype=np.float32))
    s = a[2:5]
    v = s.view(np.int32)
    del a, s
    gc.collect()
    assert memory.allocated() == 512  # v still views the block
    other = memory.empty(16, np.float32)  # so it is not handed out again
    assert ptr(other) != ptr(v)
    np.testing.assert_array_equal(v.copy_to_host().view(np.float32), [2, 3, 4])
    del other
    gc.collect()
    assert memory.allocated() == 512
    del v
    gc.collect()
    assert memory.allocated() == 0 and memory.reserved() == 1024


def test_empty_cache_frees_cached_blocks_only():
    live = memory.empty(1000, np.float64)
    live.copy_to_device(np.ones(1000))
    for n in (10, 1000, 400_000):
        memory.empty(n, np.float32)
    gc.collect()
    freed = stat("num_device_free")
    assert memory.reserved() > memory.allocated() == 8192
    memory.empty_cache()
    assert memory.reserved() == memory.allocated() == 8192
    assert stat("num_device_free") == freed + 3
    assert live.copy_to_host().sum() == 1000
    n = stat("num_device_alloc")
    memory.empty(10, np.float32)
    assert stat("num_device_alloc") == n + 1  # nothing cached any more


def test_out_of_memory_frees_the_cache_and_retries(monkeypatch):
    cached = memory.empty(100_000, np.float32)
    del cached
    gc.collect()
    real, calls = target.device_array, []

    def oom_once(nbytes):
        calls.append(nbytes)
        if len(calls) == 1:
            raise MemoryError
        return real(nbytes)

    monkeypatch.setattr(target, "device_array", oom_once)
    retries, ooms = stat("num_alloc_retries"), stat("num_ooms")
    a = memory.empty(10, np.float32)
    assert len(calls) == 2 and stat("num_alloc_retries") == retries + 1
    assert memory.reserved() == 512  # the cached block went back to the driver first
    del a

    def oom(nbytes):
        raise MemoryError

    monkeypatch.setattr(target, "device_array", oom)
    with pytest.raises(jtorch.OutOfMemoryError, match="CUDA out of memory. Tried to allocate 2.00 MiB"):
        memory.empty(2 * MiB, np.uint8)
    assert stat("num_ooms") == ooms + 1


def test_other_driver_errors_pass_through(monkeypatch):
    def broken(nbytes):
        raise ValueError("driver says no")

    monkeypatch.setattr(target, "device_array", broken)
    retries, ooms = stat("num_alloc_retries"), stat("num_ooms")
    with pytest.raises(ValueError, match="driver says no"):
        memory.empty(10, np.float32)
    assert stat("num_alloc_retries") == retries  # (counted only for out-of-memory)
    assert memory.allocated() == 0 and stat("num_ooms") == ooms


def test_threads():
    errors, base = [], memory.stats()

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            held = []
            for _ in range(200):
                held.append(memory.empty(int(rng.integers(1, 5000)), np.float32))
                if len(held) > 5:
                    held.pop(int(rng.integers(0, len(held))))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    gc.collect()
    assert errors == []
    s = memory.stats()
    assert s["allocated_bytes.all.current"] == 0 and s["allocation.all.current"] == 0
    assert s["allocation.all.allocated"] - base["allocation.all.allocated"] == 800
    assert s["allocation.all.freed"] - base["allocation.all.freed"] == 800


def test_tensors_use_the_allocator():
    """Device tensors take their storage from here: a second identical step of tensor work
    (uploads, views, downloads; no kernels, which take seconds to build in the simulator)
    makes no driver allocation, and a view keeps its storage's block."""
    def step():
        x = jtorch.ones(4, 2).to("cuda")
        w = jtorch.empty(300, device="cuda")
        return x[1:3].cpu().sum().item() + w.shape[0]

    assert step() == 304
    gc.collect()
    n = stat("num_device_alloc")
    assert n > 0 and memory.allocated() == 0
    x = jtorch.zeros(100).to("cuda")
    assert jtorch.cuda.memory_allocated() == memory.allocated() == 512
    v = x[10:20]
    del x
    gc.collect()
    assert memory.allocated() == 512 and v.cpu().tolist() == [0.0] * 10
    del v
    gc.collect()
    assert step() == 304
    gc.collect()
    assert stat("num_device_alloc") == n and memory.allocated() == 0
