"""Torch-style autograd programs, run as written under ``jtorch`` and ``torch``: same values,
same gradients, same parameter trajectories."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch

MODS = [jtorch, torch]


def _run(program):
    """program(m, data) under both libraries on the same float64 data; results compared."""
    rng = np.random.default_rng(0)
    data = {"x": rng.standard_normal((16, 3)), "y": rng.standard_normal(16),
            "w": rng.standard_normal(3), "v": rng.standard_normal((4, 5))}
    outs = []
    for m in MODS:
        d = {k: m.from_numpy(v.copy()) for k, v in data.items()}
        outs.append(program(m, d))
    for a, b in zip(*outs):
        a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
        b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_linear_regression_by_gradient_descent():
    def program(m, d):
        w = m.zeros(3, dtype=m.float64, requires_grad=True)
        b = m.zeros((), dtype=m.float64, requires_grad=True)
        losses = []
        for _ in range(15):
            pred = (d["x"] * w).sum(dim=1) + b
            loss = ((pred - d["y"]) ** 2).mean()
            loss.backward()
            with m.no_grad():
                w -= 0.1 * w.grad
                b.sub_(0.1 * b.grad)
                w.grad.zero_()
                b.grad = None
            losses.append(loss.item())
        return [w, b, m.tensor(losses)]
    _run(program)


def test_logistic_regression_with_sigmoid_and_log():
    def program(m, d):
        w = d["w"].clone().requires_grad_()
        target = (d["y"] > 0).to(m.float64)
        for _ in range(5):
            p = (d["x"] * w).sum(1).sigmoid()
            loss = -(target * p.log() + (1 - target) * (1 - p).log()).mean()
            (g,) = m.autograd.grad(loss, w)
            w = (w - 0.5 * g).detach().requires_grad_()
        return [w, loss]
    _run(program)


def test_two_layer_network_by_broadcasting():
    def program(m, d):
        w1 = (d["v"] * 0.5).requires_grad_()               # (4, 5)
        w2 = d["w"].clone().requires_grad_()                # (3,)
        x = d["x"][:4, :].t()                               # (3, 4) non-contiguous view
        h = (x.unsqueeze(2) * w1.unsqueeze(0)).sum(1).tanh()   # (3, 5)
        out = (h.permute(1, 0) * w2).sum(1)                 # (5,)
        loss = (out - 1).pow(2).sum()
        loss.backward()
        return [loss, w1.grad, w2.grad]
    _run(program)


def test_gradient_penalty_double_backward():
    def program(m, d):
        w = d["w"].clone().requires_grad_()
        x = d["x"].clone().requires_grad_()
        f = ((x * w).sum(1).sin() ** 2).sum()
        (gx,) = m.autograd.grad(f, x, create_graph=True)
        penalty = (gx.pow(2).sum(1).sqrt() - 1).pow(2).mean()
        penalty.backward()
        return [penalty, w.grad, x.grad]
    _run(program)


def test_hooks_clip_and_retain():
    def program(m, d):
        w = d["w"].clone().requires_grad_()
        w.register_hook(lambda g: g.clamp(-0.5, 0.5))
        h = d["x"] * w
        h.retain_grad()
        loss = (h.exp() * 3).sum()
        loss.backward()
        return [w.grad, h.grad]
    _run(program)


def test_detach_stops_gradients_and_no_grad_evaluation():
    def program(m, d):
        w = d["w"].clone().requires_grad_()
        target = ((d["x"] * w).sum(1)).detach()
        pred = (d["x"] * w * 1.5).sum(1)
        loss = ((pred - target) ** 2).mean()
        loss.backward()
        with m.no_grad():
            ev = (d["x"] * w).sum(1)
        assert not ev.requires_grad
        return [w.grad, ev]
    _run(program)


def test_custom_function_in_a_graph():
    def program(m, d):
        class Cube(m.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return 3 * x ** 2 * g

        w = d["w"].clone().requires_grad_()
        y = Cube.apply(w.sin()) * 2
        y.sum().backward()
        return [y, w.grad]
    _run(program)


def test_accumulating_over_micro_batches():
    def program(m, d):
        w = d["w"].clone().requires_grad_()
        for i in range(4):
            xb = d["x"][i * 4:(i + 1) * 4]
            ((xb * w).sum(1).tanh().mean() / 4).backward()
        return [w.grad]
    _run(program)


def test_indexing_and_setitem_in_graph():
    def program(m, d):
        w = d["w"].clone().requires_grad_()
        buf = m.zeros(5, dtype=m.float64)
        buf[1:4] = w * 2
        buf[0] = w[2] ** 2
        z = buf.clone()
        z[z > 1] = 0.0
        loss = (z * m.arange(5, dtype=m.float64)).sum() + w[[0, 0, 1]].sum()
        loss.backward()
        return [loss, w.grad]
    _run(program)


@pytest.mark.parametrize("reduction", ["softmax", "logsumexp", "var", "norm"])
def test_reductions_in_a_loss(reduction):
    def program(m, d):
        v = d["v"].clone().requires_grad_()
        if reduction == "softmax":
            loss = -(v.log_softmax(dim=1)[:, 0]).mean() + v.softmax(0).pow(2).sum()
        elif reduction == "logsumexp":
            loss = v.logsumexp(dim=1).sum()
        elif reduction == "var":
            loss = v.var(dim=0).sum() + v.std()
        else:
            loss = v.norm() + v.abs().amax(dim=1).sum()
        loss.backward()
        return [loss, v.grad]
    _run(program)
