"""jtorch.cuda: with a CUDA target (the simulator suite ``sim_api.py``, in a subprocess since the
simulator must be chosen before ``numba.cuda`` is first imported), and, in this process (no
device, no simulator), the answers torch's CPU build gives."""

import os
import subprocess
import sys
import warnings

import pytest
import torch
from helpers import run_simulated

import jtorch

SIM = os.path.join(os.path.dirname(__file__), "sim_api.py")


def test_cuda_api_in_the_simulator():
    run_simulated(SIM)


def test_import_needs_no_cuda_target():
    code = ("import sys, jtorch, jtorch.cuda; assert 'numba.cuda' not in sys.modules; "
            "jtorch.cuda.manual_seed; print('ok')")
    r = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]


def _no_target() -> bool:
    """Whether this machine has no CUDA target, asked of Numba rather than of the code under
    test."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return False
    from numba import cuda

    return not cuda.is_available()


def _answer(fn, lib):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(lib)
        return "ok", r
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)


NO_DEVICE_CALLS = [
    lambda t: t.cuda.is_available(), lambda t: t.cuda.device_count(),
    lambda t: t.cuda.is_initialized(), lambda t: t.cuda.init(),
    lambda t: t.cuda.current_device(), lambda t: t.cuda.synchronize(),
    lambda t: t.cuda.get_device_name(), lambda t: t.cuda.get_device_name(0),
    lambda t: t.cuda.get_device_capability(), lambda t: t.cuda.get_device_properties(0),
    lambda t: t.cuda.mem_get_info(),
    lambda t: t.cuda.set_device(-1),
    lambda t: t.cuda.current_stream(), lambda t: t.cuda.default_stream(),
    lambda t: t.cuda.Stream(), lambda t: t.cuda.Event(), lambda t: t.cuda.Event(enable_timing=True),
    lambda t: t.cuda.stream(None).__enter__(),
    lambda t: t.cuda.device(0).__enter__(), lambda t: t.cuda.device(-1).__enter__(),
    lambda t: t.cuda.device_of(t.ones(1)).__enter__(),
    lambda t: t.cuda.manual_seed(0), lambda t: t.cuda.manual_seed_all(0),
    lambda t: t.cuda.seed(), lambda t: t.cuda.seed_all(), lambda t: t.cuda.initial_seed(),
    lambda t: t.cuda.get_rng_state(), lambda t: t.cuda.get_rng_state_all(),
    lambda t: t.cuda.set_rng_state(t.zeros(16, dtype=t.uint8)),
    lambda t: t.cuda.memory_stats(), lambda t: t.cuda.memory_stats(0),
    lambda t: t.cuda.memory_allocated(), lambda t: t.cuda.max_memory_allocated(0),
    lambda t: t.cuda.memory_reserved(), lambda t: t.cuda.max_memory_reserved(),
    lambda t: t.cuda.empty_cache(), lambda t: t.cuda.is_bf16_supported(),
    lambda t: t.cuda.is_bf16_supported(including_emulation=False),
    lambda t: t.cuda.OutOfMemoryError.__mro__[1].__name__,
]


@pytest.mark.parametrize("call", NO_DEVICE_CALLS)
def test_without_cuda_answers_as_torchs_cpu_build(call):
    if not _no_target():
        pytest.skip("a CUDA target answers here")
    mine, theirs = _answer(call, jtorch), _answer(call, torch)
    assert mine == theirs
    if mine[0] == "ok":
        assert type(mine[1]) is type(theirs[1])


def test_without_cuda_the_rest():
    """Where torch's CPU build fails by accident (a missing binding), jtorch answers as its
    documented no-device behaviour: no device to select, no peak to reset."""
    if not _no_target():
        pytest.skip("a CUDA target answers here")
    for fn in (lambda: jtorch.cuda.set_device(0), jtorch.cuda.reset_peak_memory_stats):
        with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
            fn()
    assert jtorch.cuda.is_initialized() is False
