"""The README's demo: the LeNet-style CNN trained on the shipped digits set reaches the
accuracy bound (seeded, small), and a saved model reloads to the same accuracy; with
``--compile`` the compiled model trains like the eager one and the step times are printed."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

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
