"""``jtorch.cuda``'s answers with a CUDA target: Numba's simulator standing in for a device.
Types and values as torch documents them for a machine with one GPU; the simulator's own
values (name, capability, memory) where it has no real ones.

Run by ``test_cuda_api.py`` in a subprocess with ``NUMBA_ENABLE_CUDASIM=1`` (the simulator
must be chosen before ``numba.cuda`` is first imported); the file name keeps pytest's default
collection away from it.
"""

import gc
import os
import threading
import time

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("runs under NUMBA_ENABLE_CUDASIM=1 (test_cuda_api.py starts it)",
                allow_module_level=True)

import jtorch
from jtorch import cuda
from jtorch.kernels.cuda import memory


def test_availability_before_initialisation():
    # (first in this file: nothing here has touched the device yet)
    assert cuda.is_available() is True
    assert cuda.device_count() == 1
    assert cuda.is_initialized() is False
    assert cuda.memory_stats() == {} and cuda.memory_allocated() == 0
    cuda.init()
    assert cuda.is_initialized() is True


def test_devices():
    assert cuda.current_device() == 0 and type(cuda.current_device()) is int
    assert cuda.get_device_name() == cuda.get_device_name(0) == "Numba CUDA simulator"
    cap = cuda.get_device_capability()
    assert cap == (5, 2) and type(cap) is tuple
    assert cuda.get_device_capability("cuda:0") == cuda.get_device_capability(jtorch.device("cuda"))
    p = cuda.get_device_properties(0)
    assert (p.name, p.major, p.minor, p.multi_processor_count) == ("Numba CUDA simulator", 5, 2, 1)
    assert isinstance(p.total_memory, int) and p.total_memory > 0
    assert repr(p).startswith("_CudaDeviceProperties(name='Numba CUDA simulator', major=5, minor=2, "
                              f"total_memory={p.total_memory // (1 << 20)}MB, "
                              "multi_processor_count=1, uuid=")
    free, total = cuda.mem_get_info()
    assert 0 < free <= total == p.total_memory
    with pytest.raises(AssertionError, match="Invalid device id"):
        cuda.get_device_properties(1)
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        cuda.get_device_name("cpu")


def test_set_device_and_device_contexts():
    cuda.set_device(0)
    cuda.set_device("cuda:0")
    assert cuda.set_device(-1) is None and cuda.current_device() == 0
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        cuda.set_device(1)
    with cuda.device(0):
        assert cuda.current_device() == 0
    with cuda.device(-1), cuda.device(None):
        assert cuda.current_device() == 0
    assert cuda.device(jtorch.device("cuda", 0)).idx == 0
    with pytest.raises(RuntimeError, match="invalid device ordinal"), cuda.device(3):
        pass
    x = jtorch.ones(2).to("cuda")
    assert cuda.device_of(x).idx == 0 and cuda.device_of(jtorch.ones(2)).idx == -1
    with cuda.device_of(x):
        assert cuda.current_device() == 0
    cuda.synchronize()
    cuda.synchronize(0)


def test_streams():
    d = cuda.default_stream()
    assert isinstance(d, cuda.Stream) and d.cuda_stream == 0 and d.device == jtorch.device("cuda", 0)
    assert cuda.current_stream() == d == cuda.default_stream(0)
    s = cuda.Stream()
    assert s.cuda_stream != 0 and s != d and s.device_index == 0 and s.priority == 0
    assert repr(s) == f"<torch.cuda.Stream device=cuda:0 cuda_stream={s.cuda_stream:#x}>"
    assert hash(s) == hash(s) and len({s, d, cuda.default_stream()}) == 2
    with cuda.stream(s):
        assert cuda.current_stream() == s
        with cuda.stream(None):
            assert cuda.current_stream() == s
    assert cuda.current_stream() == d
    with s:
        assert cuda.current_stream() == s
    assert cuda.current_stream() == d
    seen = []
    with cuda.stream(s):
        t = threading.Thread(target=lambda: seen.append(cuda.current_stream()))
        t.start()
        t.join()
    assert seen == [d]  # the current stream is per thread
    assert s.query() is True and d.query() is True
    s.synchronize()
    d.synchronize()
    s.wait_stream(d)
    ev = s.record_event()
    assert isinstance(ev, cuda.Event) and ev.query()
    d.wait_event(ev)


def test_events():
    e = cuda.Event()
    assert repr(e) == "<torch.cuda.Event uninitialized>" and e.cuda_event == 0
    assert e.query() is True  # nothing recorded: nothing to wait for
    e.synchronize()
    e.wait()
    e.record()
    assert e.cuda_event != 0 and repr(e) == f"<torch.cuda.Event {e.cuda_event:#x}>"
    start, end = cuda.Event(enable_timing=True), cuda.Event(enable_timing=True)
    with pytest.raises(ValueError, match="Both events must be recorded before calculating elapsed time."):
        start.elapsed_time(end)
    start.record()
    time.sleep(0.02)
    end.record(cuda.current_stream())
    end.synchronize()
    ms = start.elapsed_time(end)
    assert type(ms) is float and 15 <= ms < 5000
    with pytest.raises(ValueError, match="Both events must be created with argument 'enable_timing=True'."):
        e.elapsed_time(end)
    with pytest.raises(ValueError, match="enable_timing=True"):
        start.elapsed_time(e)


def test_seeds():
    assert cuda.initial_seed() == 67280421310721  # torch's seed of a fresh generator
    cuda.manual_seed(123)
    assert cuda.initial_seed() == 123
    state = cuda.get_rng_state()
    assert state.dtype == jtorch.uint8 and state.shape == (16,)
    assert state.tolist() == list((123).to_bytes(8, "little")) + [0] * 8
    cuda.seed()
    s = cuda.initial_seed()
    assert s != 123 and 0 <= s < 1 << 64
    cuda.set_rng_state(state)
    assert cuda.initial_seed() == 123
    cuda.manual_seed_all(7)
    assert cuda.initial_seed() == 7 and [t.tolist()[0] for t in cuda.get_rng_state_all()] == [7]
    cuda.seed_all()
    assert cuda.initial_seed() != 7
    cuda.set_rng_state_all([state])
    assert cuda.initial_seed() == 123
    cuda.manual_seed(-1)  # wrapped to uint64, as torch's
    assert cuda.initial_seed() == (1 << 64) - 1
    from jtorch.cuda import random as cuda_random

    cuda.manual_seed(5)
    assert cuda_random.philox_state(0, 10) == (5, 0)
    assert cuda_random.philox_state(0, 1) == (5, 12)
    assert cuda.get_rng_state().tolist()[8] == 16
    with pytest.raises(RuntimeError, match="RNG state is wrong size"):
        cuda.set_rng_state(jtorch.zeros(3, dtype=jtorch.uint8))


def test_memory_counters_follow_the_allocator():
    gc.collect()
    cuda.empty_cache()
    cuda.reset_peak_memory_stats()
    base = cuda.memory_allocated()
    a = memory.empty(1000, np.float32)  # 4000 bytes: a 4096-byte block
    assert cuda.memory_allocated() == base + 4096 == memory.allocated()
    assert cuda.memory_allocated(0) == cuda.memory_allocated("cuda:0") == base + 4096
    stats = cuda.memory_stats()
    assert type(stats).__name__ == "OrderedDict" and list(stats) == sorted(stats)
    assert stats["allocated_bytes.all.current"] == base + 4096
    for key in ("allocated_bytes.all.peak", "reserved_bytes.all.current", "num_alloc_retries",
                "num_ooms", "num_device_alloc", "segment.all.current", "allocation.all.current"):
        assert type(stats[key]) is int, key
    del a
    gc.collect()
    assert cuda.memory_allocated() == base
    assert cuda.max_memory_allocated() == base + 4096
    assert cuda.memory_reserved() >= base + 4096 and cuda.max_memory_reserved() >= base + 4096
    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == base
    cuda.empty_cache()
    assert cuda.memory_reserved() == cuda.memory_allocated() == base


def test_bf16():
    assert cuda.is_bf16_supported(including_emulation=False) is False  # capability 5.2 < 8.0
    assert type(cuda.is_bf16_supported()) is bool
