"""Compiled training: ``jtorch.compile(model)`` in train mode matches eager training step by
step (losses, parameters, BatchNorm statistics, dropout masks from the seeded generator),
switches graphs with ``train()``/``eval()``, and compiles nothing new after the first steps."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import numpy as np
import pytest

import jtorch
import jtorch.nn.functional as F
from jtorch import nn
from jtorch.compile.aot import JointFunction

_DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.py"


def _lenet() -> nn.Module:
    """The demo's CNN (examples/demo.py)."""
    spec = importlib.util.spec_from_file_location("jtorch_demo", _DEMO)
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    return demo.LeNet()


class _BNNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.drop = nn.Dropout(0.25)
        self.fc = nn.Linear(8 * 4 * 4, 5)

    def forward(self, x):
        x = self.drop(F.relu(self.bn(self.conv(x))))
        return self.fc(F.max_pool2d(x, 2).flatten(1))


class _Block(nn.Module):
    """A small transformer block: an encoder layer and a classifier head."""

    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.1,
                                                batch_first=True)
        self.head = nn.Linear(16, 4)

    def forward(self, x):
        return self.head(self.layer(x).mean(1))


def _mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Dropout(0.2), nn.Linear(32, 32),
                         nn.Tanh(), nn.Linear(32, 3))


_CASES = {
    "mlp": (_mlp, lambda: jtorch.randn(16, 20), 3, jtorch.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
    "lenet": (_lenet, lambda: jtorch.randn(8, 1, 8, 8), 10, jtorch.optim.Adam, {"lr": 1e-2}),
    "bn_dropout_cnn": (_BNNet, lambda: jtorch.randn(6, 3, 8, 8), 5, jtorch.optim.Adam,
                       {"lr": 1e-2}),
    # SGD: the key projection's bias has a zero gradient up to rounding, which Adam's
    # normalisation would turn into steps of the learning rate's size
    "transformer_block": (_Block, lambda: jtorch.randn(4, 6, 16), 4, jtorch.optim.SGD,
                          {"lr": 0.1, "momentum": 0.9, "weight_decay": 1e-2}),
}


def _joints(cm) -> list:
    return [fn for fn, _ in cm._compiled.pieces.values() if isinstance(fn, JointFunction)]


def _close(a, b, what: str) -> None:
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=2e-5, atol=2e-6,
                               err_msg=what)


@pytest.mark.parametrize("case", sorted(_CASES))
def test_compiled_training_matches_eager_step_by_step(case):
    make, data, classes, opt_cls, kw = _CASES[case]
    jtorch.manual_seed(0)
    eager = make()
    model = copy.deepcopy(eager)
    compiled = jtorch.compile(model)
    opts = [opt_cls(eager.parameters(), **kw), opt_cls(model.parameters(), **kw)]
    x, y = data(), jtorch.randint(0, classes, (data().shape[0],))
    sizes = []
    for step in range(4):
        losses = []
        for m, opt in zip((eager, compiled), opts):
            jtorch.manual_seed(100 + step)  # the same dropout masks in both
            opt.zero_grad()
            out = m(x)
            loss = F.cross_entropy(out, y)
            loss.backward()
            opt.step()
            losses.append(loss)
        assert type(out.grad_fn).__name__ == "CompiledFunctionBackward", case
        _close(losses[1], losses[0], f"{case}: loss at step {step}")
        for (name, p), q in zip(eager.named_parameters(), model.parameters()):
            _close(q, p, f"{case}: {name} after step {step}")
        for (name, b), c in zip(eager.named_buffers(), model.buffers()):
            _close(c, b, f"{case}: buffer {name} after step {step}")
        sizes.append((len(compiled._compiled.entries), len(compiled._compiled.pieces)))
    assert sizes[1:] == sizes[1:2] * 3, f"{case} recompiled during training: {sizes}"
    assert _joints(compiled), case
    eager.eval()
    compiled.eval()
    with jtorch.no_grad():
        _close(compiled(x), eager(x), f"{case}: eval mode")
    compiled.train()
    n = len(compiled._compiled.entries)
    jtorch.manual_seed(7)
    a = compiled(x)
    jtorch.manual_seed(7)
    b = compiled(x)
    _close(a, b, f"{case}: a seeded train-mode call repeats")
    assert len(compiled._compiled.entries) == n  # train mode's graph again, by its guard


def test_dropout_masks_come_from_jtorchs_generator():
    m = jtorch.compile(nn.Dropout(0.5))
    x = jtorch.ones(1000)
    jtorch.manual_seed(3)
    a = m(x)
    jtorch.manual_seed(3)
    b = nn.Dropout(0.5)(x)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(m(x).numpy(), a.numpy())  # the generator moved on


def test_backward_inside_a_compiled_function_leaves_real_gradients():
    """``loss.backward()`` in a compiled function is a graph break: the graph runs, then its
    compiled backward, and the parameters' ``.grad`` are ordinary tensors afterwards."""
    jtorch.manual_seed(0)
    m = nn.Linear(4, 3)
    x = jtorch.randn(5, 4)

    @jtorch.compile
    def forward_backward(x):
        loss = m(x).pow(2).sum()
        loss.backward()
        return loss

    for _ in range(2):
        m.zero_grad()
        forward_backward(x)
        got = [p.grad.numpy().copy() for p in m.parameters()]
        m.zero_grad()
        m(x).pow(2).sum().backward()
        for g, p in zip(got, m.parameters()):
            np.testing.assert_allclose(g, p.grad.numpy(), rtol=1e-6)
