"""The README's demo: the LeNet-style CNN trained on the shipped digits set reaches the
accuracy bound (seeded, small), and a saved model reloads to the same accuracy; with
``--compile`` the compiled model trains like the eager one and the step times are printed."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

import jtorch

DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo.py"


def _demo():
    spec = importlib.util.spec_from_file_location("jtorch_demo", DEMO)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_digits_training_reaches_97_percent(tmp_path):
    demo = _demo()
    model, acc, _ = demo.train(progress=False)
    assert acc >= 0.97
    path = tmp_path / "cnn.pt"
    jtorch.save(model.state_dict(), path)
    fresh = demo.LeNet()
    fresh.load_state_dict(jtorch.load(path))
    _, test_loader = demo.loaders()
    assert demo.evaluate(fresh, test_loader) == acc


def test_compile_flag_trains_like_eager_and_prints_step_times(tmp_path, capsys):
    demo = _demo()
    _, eager_acc, _ = demo.train(epochs=1, progress=False)
    demo.main(["--compile", "--epochs", "1", "--time-steps", "2", "--out", str(tmp_path / "c.pt")])
    out = capsys.readouterr().out
    assert re.search(r"eager \d+\.\d+ ms \| compiled \d+\.\d+ ms", out), out
    acc = float(re.search(r"test accuracy ([\d.]+)%   \(", out).group(1)) / 100
    assert abs(acc - eager_acc) < 0.003  # one test image of 360 at most (fused eval kernels)


_CUDA_DEMO = """
import importlib.util, sys
spec = importlib.util.spec_from_file_location("jtorch_demo", {demo!r})
demo = importlib.util.module_from_spec(spec)
spec.loader.exec_module(demo)
import numpy as np
import jtorch
from jtorch.kernels.cuda import eager
full, batches = demo.load_digits, demo.loaders
# two batches of 8 (each simulated thread is a Python thread: a tiled product's barriers cost ms)
demo.load_digits = lambda: tuple(a[:20] for a in full())
demo.loaders = lambda seed=0, pin_memory=False: batches(8, seed, pin_memory)
cpu, acc_cpu, _ = demo.train(epochs=1, progress=False)
gpu, acc, _ = demo.train(epochs=1, progress=False, device="cuda")
assert next(gpu.parameters()).device.type == "cuda"
for p, q in zip(gpu.parameters(), cpu.parameters()):
    np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().numpy(), atol=1e-3)
assert acc == acc_cpu, (acc, acc_cpu)
assert not eager.FALLBACKS, dict(eager.FALLBACKS)
print("ok", acc, acc_cpu)
"""


@pytest.mark.slow
def test_demo_trains_on_cuda_in_the_simulator():
    """``--device cuda``: an epoch of two small batches in Numba's CUDA simulator trains as on
    CPU (the same weights after it), every op on the device (no host fallback)."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    r = subprocess.run([sys.executable, "-c", _CUDA_DEMO.format(demo=str(DEMO))], env=env,
                       capture_output=True, text=True, timeout=3000, check=False)
    assert r.returncode == 0 and "ok" in r.stdout, r.stdout[-3000:] + r.stderr[-3000:]
