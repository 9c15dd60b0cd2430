"""The README's demo: the LeNet-style CNN trained on the shipped digits set reaches the
accuracy bound (seeded, small), and a saved model reloads to the same accuracy."""

from __future__ import annotations

import importlib.util
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
