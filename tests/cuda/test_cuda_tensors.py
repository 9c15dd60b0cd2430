"""CUDA tensors: the simulator suite (``sim_tensors.py``) in a subprocess, since the simulator
must be chosen before ``numba.cuda`` is first imported; and, in this process (no device, no
simulator), the answers torch's CPU build gives."""

import os
import subprocess
import sys

import pytest
import torch
from helpers import raises_like, run_simulated

import jtorch

SIM = os.path.join(os.path.dirname(__file__), "sim_tensors.py")


def test_cuda_tensors_in_the_simulator():
    run_simulated(SIM)


@pytest.mark.parametrize("call", [
    lambda t: t.zeros(2, device="cuda"),
    lambda t: t.ones(2).to("cuda"),
    lambda t: t.ones(2).cuda(),
    lambda t: t.tensor([1.0], device="cuda:0"),
    lambda t: t.empty(2, device=t.device("cuda")),
    lambda t: t.nn.Linear(2, 2).cuda(),
    lambda t: t.nn.Linear(2, 2).to("cuda"),
    lambda t: t.ones(2).__cuda_array_interface__,
])
def test_without_cuda_torchs_errors(call):
    if jtorch.cuda.is_available():
        pytest.skip("a CUDA target answers here")
    raises_like(lambda: call(jtorch), lambda: call(torch), message="first line")


def test_without_cuda_no_cuda_generator():
    if jtorch.cuda.is_available():
        pytest.skip("a CUDA target answers here")
    # (torch's message goes on about its dynamic linker: the type and first sentence match)
    with pytest.raises(RuntimeError, match="Cannot get CUDA generator"):
        jtorch.Generator(device="cuda")


def test_without_cuda_flags():
    x = jtorch.ones(2)
    assert not x.is_cuda and x.get_device() == -1 and not jtorch.cuda.is_available()
    assert str(jtorch.device("cuda")) == "cuda"  # naming a device needs none


SWEEP = os.path.join(os.path.dirname(__file__), "cuda_op_sweep.py")


def _sweep(*flags: str) -> dict:
    import json

    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    r = subprocess.run([sys.executable, SWEEP, *flags], capture_output=True, text=True, env=env,
                       timeout=3000, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_every_swept_call_on_cuda_matches_cpu():
    """Every public callable's sweep pattern (tests/op_samples.py), on contiguous CUDA
    operands in the simulator: the same error type, or the same results on the device."""
    res = _sweep("--variants=contiguous")
    assert res["calls"] > 800
    assert res["failures"] == []


@pytest.mark.slow
def test_every_swept_call_and_sample_on_cuda_matches_cpu():
    """The same for non-contiguous, 0-d and 0-size operands and every hand-written sample."""
    res = _sweep("--variants=contiguous,noncontig,0-d,0-size", "--samples")
    assert res["calls"] > 4000
    assert res["failures"] == []


@pytest.mark.slow
def test_perf_gpu_command_runs_in_the_simulator(tmp_path):
    """``python -m perf gpu`` (the sweeps and benchmarks to run on a GPU) end to end, at sizes
    the simulator runs: a smoke test of the command, not a measurement."""
    import json

    out = tmp_path / "gpu.json"
    root = os.path.dirname(os.path.dirname(os.path.dirname(SIM)))
    r = subprocess.run([sys.executable, "-m", "perf", "gpu", "--quick", "--simulator",
                        "--out", str(out)], capture_output=True, text=True, cwd=root,
                       timeout=1800, check=False)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert doc["op_sweep"]["failures"] == [] and doc["pointwise_sweep"]["failures"] == []
    assert set(doc["benchmarks"]) >= {"copy", "chain", "sgemm", "launch", "demo_cnn"}


def test_sparse_tensors_are_never_pinned():
    assert not jtorch.eye(3).to_sparse().is_pinned()
    assert not jtorch.ones(2).is_pinned()
