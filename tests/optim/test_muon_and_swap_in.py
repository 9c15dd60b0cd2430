"""``optim.Muon`` (against torch, both running the Newton-Schulz iterations in bfloat16, and
against the algorithm in float64 NumPy within that rounding) and
``optim.swap_in_optimizer_params_and_state``."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import jtorch


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4)])
@pytest.mark.parametrize("nesterov", [True, False])
@pytest.mark.parametrize("adjust", [None, "match_rms_adamw"])
def test_muon_steps_follow_the_algorithm(shape, nesterov, adjust):
    w0 = np.random.default_rng(0).standard_normal(shape)

    def run(lib):
        w = lib.nn.Parameter(lib.from_numpy(w0.copy()))
        opt = lib.optim.Muon([w], lr=0.02, weight_decay=0.1, nesterov=nesterov,
                             adjust_lr_fn=adjust)
        for _ in range(3):
            w.grad = lib.sin(w.detach() * 3)
            opt.step()
        return w.detach().numpy()

    ref_w, buf = w0.copy(), np.zeros_like(w0)
    for _ in range(3):
        g = np.sin(3 * ref_w)
        ref_w, buf = _one(ref_w, g, buf, nesterov, adjust)
    # both orthogonalise in bfloat16: the float64 steps to that rounding
    np.testing.assert_allclose(run(jtorch), ref_w, rtol=0, atol=3e-3)
    np.testing.assert_allclose(run(jtorch), run(torch), rtol=0, atol=1e-3)


def _one(w, g, buf, nesterov, adjust, lr=0.02, wd=0.1, mu=0.95):
    """One Muon step in float64 NumPy: (new weights, new momentum buffer)."""
    buf = buf + (1 - mu) * (g - buf)
    u = g + mu * (buf - g) if nesterov else buf
    tall = u.shape[0] > u.shape[1]
    x = u.T if tall else u
    x = x / max(np.linalg.norm(x), 1e-7)
    for _ in range(5):
        gram = x @ x.T
        x = 3.4445 * x + (-4.775 * gram + 2.0315 * gram @ gram) @ x
    x = x.T if tall else x
    A, B = w.shape
    ratio = math.sqrt(max(1, A / B)) if adjust is None else 0.2 * math.sqrt(max(A, B))
    return w * (1 - lr * wd) - lr * ratio * x, buf


def test_muon_arguments_state_and_errors():
    for lib in (torch, jtorch):
        w = lib.nn.Parameter(lib.ones(3, 2))
        for bad in ({"lr": -1.0}, {"momentum": -0.1}, {"weight_decay": -1.0},
                    {"adjust_lr_fn": "other"}):
            with pytest.raises(ValueError):
                lib.optim.Muon([w], **bad)
        with pytest.raises(ValueError, match="only supports 2D parameters"):
            lib.optim.Muon([lib.nn.Parameter(lib.ones(3))])
    w = jtorch.nn.Parameter(jtorch.eye(3))
    opt = jtorch.optim.Muon([w], lr=0.1)
    w.grad = jtorch.ones(3, 3)
    opt.step()
    sd = opt.state_dict()
    assert set(sd["state"][0]) == {"momentum_buffer"}
    assert sd["param_groups"][0]["ns_steps"] == 5 and sd["param_groups"][0]["nesterov"]
    opt2 = jtorch.optim.Muon([jtorch.nn.Parameter(jtorch.eye(3))], lr=0.1)
    opt2.load_state_dict(sd)
    np.testing.assert_array_equal(opt2.state_dict()["state"][0]["momentum_buffer"].numpy(),
                                  sd["state"][0]["momentum_buffer"].numpy())


@pytest.mark.parametrize("lib", [torch, jtorch], ids=["torch", "jtorch"])
def test_swap_in_optimizer_params_and_state(lib):
    w = lib.nn.Parameter(lib.ones(3))
    opt = lib.optim.SGD([w], lr=0.1, momentum=0.9)
    w.grad = lib.ones(3)
    opt.step()
    saved = opt.state_dict()
    other = lib.zeros(3)
    other.grad = lib.full((3,), 2.0)
    swap_state = {"state": {0: {"momentum_buffer": lib.full((3,), 5.0)}},
                  "param_groups": [dict(saved["param_groups"][0], lr=1.0)]}
    before = w.detach().clone()
    with lib.optim.swap_in_optimizer_params_and_state(opt, {"w": other}, swap_state):
        assert opt.param_groups[0]["params"][0] is other and opt.param_groups[0]["lr"] == 1.0
        opt.step()
    # the step moved the swapped-in tensor with the swapped-in state (buffer 0.9 * 5 + 2)
    assert other.tolist() == pytest.approx([-6.5] * 3)
    assert swap_state["state"][0]["momentum_buffer"].tolist() == pytest.approx([6.5] * 3)
    assert opt.param_groups[0]["params"][0] is w and opt.param_groups[0]["lr"] == 0.1
    assert w.detach().tolist() == before.tolist()
    with pytest.raises(RuntimeError, match="extra keys"):
        with lib.optim.swap_in_optimizer_params_and_state(
                opt, {"w": other}, {"state": {7: {}}, "param_groups": saved["param_groups"]}):
            pass
    fresh = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1)
    with pytest.raises(RuntimeError, match="initialized optimizer state"):
        with lib.optim.swap_in_optimizer_params_and_state(fresh, {}, saved):
            pass
