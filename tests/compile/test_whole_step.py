"""A compiled whole training step (``zero_grad``, forward, ``backward()``, ``opt.step()`` in
one compiled function): the calls with effects outside the graph are recorded between its
graphs, so later calls replay the program without tracing again; results equal eager's bit
for bit, and anything a replay could get wrong (a value read, a returned value, a tensor of
unknown origin, an escaped output) keeps tracing every call."""

from __future__ import annotations

import numpy as np
import pytest

import jtorch
import jtorch.nn.functional as F
from jtorch import nn
from jtorch.compile.errors import Unsupported


def _mlp(seed: int = 0) -> nn.Module:
    jtorch.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))


def _data():
    g = np.random.default_rng(0)
    return (jtorch.from_numpy(g.standard_normal((5, 6)).astype(np.float32)),
            jtorch.from_numpy(g.integers(0, 3, 5)))


def _count_traces(cf) -> list:
    """Wrap ``cf``'s tracing: the returned list grows by one per traced call."""
    n: list = []
    orig = cf._trace

    def counting(*a, **k):
        n.append(1)
        return orig(*a, **k)

    cf._trace = counting
    return n


def _params(m) -> list:
    return [p.detach().numpy().copy() for p in m.parameters()]


_OPTIMIZERS = {
    "sgd_momentum": lambda ps: jtorch.optim.SGD(ps, lr=0.1, momentum=0.9),
    "adam": lambda ps: jtorch.optim.Adam(ps, lr=1e-2),
    "adamw_foreach_off": lambda ps: jtorch.optim.AdamW(ps, lr=1e-2, foreach=False),
}


@pytest.mark.parametrize("opt_name", list(_OPTIMIZERS))
@pytest.mark.parametrize("zero", ["optimizer", "module", "module_to_zero"])
def test_whole_step_replays_without_tracing_and_matches_eager(opt_name, zero):
    x, y = _data()
    m1, m2 = _mlp(), _mlp()
    o1, o2 = _OPTIMIZERS[opt_name](m1.parameters()), _OPTIMIZERS[opt_name](m2.parameters())

    def step(m, o):
        if zero == "optimizer":
            o.zero_grad()
        else:
            m.zero_grad(set_to_none=zero == "module")
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        o.step()
        return loss

    cstep = jtorch.compile(lambda: step(m2, o2))
    traces = _count_traces(cstep)
    for i in range(4):
        want = step(m1, o1)
        got = cstep()
        assert got.item() == want.item(), f"step {i}"
        for a, b in zip(_params(m1), _params(m2)):
            np.testing.assert_array_equal(a, b)
        for p1, p2 in zip(m1.parameters(), m2.parameters()):
            np.testing.assert_array_equal(p1.grad.numpy(), p2.grad.numpy())
    assert len(traces) == 1  # the first call traced; the others replayed its program
    assert got.grad_fn is not None  # the replayed loss is still differentiable


def test_gradients_accumulate_across_replays_without_zero_grad():
    x, y = _data()
    m1, m2 = _mlp(), _mlp()

    @jtorch.compile
    def fwd_bwd():
        loss = F.cross_entropy(m2(x), y)
        loss.backward()
        return loss

    traces = _count_traces(fwd_bwd)
    for _ in range(3):
        F.cross_entropy(m1(x), y).backward()
        fwd_bwd()
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_array_equal(p1.grad.numpy(), p2.grad.numpy())
    assert len(traces) == 1


def test_a_learning_rate_schedule_reaches_the_replayed_step():
    x, y = _data()
    m1, m2 = _mlp(), _mlp()
    o1 = jtorch.optim.SGD(m1.parameters(), lr=0.5)
    o2 = jtorch.optim.SGD(m2.parameters(), lr=0.5)
    s1 = jtorch.optim.lr_scheduler.StepLR(o1, 1, gamma=0.5)
    s2 = jtorch.optim.lr_scheduler.StepLR(o2, 1, gamma=0.5)

    def step(m, o):
        o.zero_grad()
        F.cross_entropy(m(x), y).backward()
        o.step()

    cstep = jtorch.compile(lambda: step(m2, o2))
    for _ in range(4):
        step(m1, o1)
        s1.step()
        cstep()
        s2.step()
    for a, b in zip(_params(m1), _params(m2)):
        np.testing.assert_array_equal(a, b)


def test_setting_grad_inside_is_replayed():
    w = jtorch.ones(3, requires_grad=True)

    @jtorch.compile
    def f(w):
        w.grad = None
        (w * w).sum().backward()
        return w.grad is None

    traces = _count_traces(f)
    for _ in range(3):
        w.grad = jtorch.full((3,), 100.0)
        f(w)
        np.testing.assert_array_equal(w.grad.numpy(), [2.0, 2.0, 2.0])
    # ``w.grad is None`` is a Python value of the first call, not re-read: returned as traced
    assert len(traces) == 1


def test_a_value_read_keeps_tracing_every_call():
    x, y = _data()
    m = _mlp()
    o = jtorch.optim.SGD(m.parameters(), lr=0.1)
    seen = []

    @jtorch.compile
    def step():
        o.zero_grad()
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        if loss.item() > -1.0:  # Python reads a value: a replay could take another path
            seen.append(1)
        o.step()
        return loss

    traces = _count_traces(step)
    for _ in range(3):
        step()
    assert len(traces) == 3 and len(seen) == 3


def test_a_call_that_returns_a_value_keeps_tracing():
    x, y = _data()
    m1, m2 = _mlp(), _mlp()
    o1 = jtorch.optim.SGD(m1.parameters(), lr=0.1)
    o2 = jtorch.optim.SGD(m2.parameters(), lr=0.1)

    def step(m, o):
        def closure():
            o.zero_grad()
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            return loss
        return o.step(closure)  # step(closure) returns the closure's loss

    cstep = jtorch.compile(lambda: step(m2, o2))
    traces = _count_traces(cstep)
    for _ in range(3):
        assert step(m1, o1).item() == cstep().item()
    assert len(traces) == 3


def test_returned_gradients_are_the_current_ones():
    m = nn.Linear(3, 2)
    x = jtorch.randn(4, 3)

    @jtorch.compile
    def grads():
        m.zero_grad()
        (m(x) ** 2).sum().backward()
        return m.weight.grad  # made by backward: a replay reads the attribute again

    traces = _count_traces(grads)
    for i in range(3):
        with jtorch.no_grad():
            m.weight.mul_(1.5)  # a different gradient each call
        g = grads()
        assert g is m.weight.grad
        want = 2 * ((x @ m.weight.detach().t() + m.bias.detach()).t() @ x)
        np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-5, err_msg=f"call {i}")
    assert len(traces) == 1


def test_an_escaped_graph_output_keeps_tracing():
    m = nn.Linear(3, 2)
    x = jtorch.randn(4, 3)
    kept = {}

    @jtorch.compile
    def f():
        m.zero_grad()
        out = m(x)
        kept["out"] = out  # outlives the call: a replay would not update it
        out.sum().backward()

    traces = _count_traces(f)
    for _ in range(2):
        kept.clear()
        f()
        assert "out" in kept
    assert len(traces) == 2


def test_rebinding_the_optimizer_the_function_names_misses_the_guard():
    global _OPT
    x, y = _data()
    m = _mlp()
    _OPT = jtorch.optim.SGD(m.parameters(), lr=0.1)

    @jtorch.compile
    def step():
        _OPT.zero_grad()
        F.cross_entropy(m(x), y).backward()
        _OPT.step()

    traces = _count_traces(step)
    step()
    step()
    before = _params(m)
    _OPT = jtorch.optim.SGD(m.parameters(), lr=0.0)  # a new optimizer object: no update
    step()
    for a, b in zip(before, _params(m)):
        np.testing.assert_array_equal(a, b)
    assert len(traces) == 2


def test_fullgraph_accepts_zero_grad_and_refuses_backward():
    m = nn.Linear(3, 2)
    x = jtorch.randn(4, 3)
    opt = jtorch.optim.SGD(m.parameters(), lr=0.1)

    @jtorch.compile(fullgraph=True)
    def fwd():
        opt.zero_grad()
        return m(x).sum()

    for _ in range(2):
        m.weight.grad = jtorch.ones(2, 3)
        out = fwd()
        assert m.weight.grad is None
        np.testing.assert_allclose(out.item(), m(x).sum().item(), rtol=1e-6)

    @jtorch.compile(fullgraph=True)
    def fwd_bwd():
        m(x).sum().backward()

    with pytest.raises(Unsupported, match="backward"):
        fwd_bwd()


def test_explain_still_reports_the_breaks():
    x, y = _data()
    m = _mlp()
    o = jtorch.optim.SGD(m.parameters(), lr=0.1)

    def step():
        o.zero_grad()
        F.cross_entropy(m(x), y).backward()
        o.step()

    out = jtorch.compiler.explain(step)()
    reasons = [r.reason for r in out.break_reasons]
    assert any("backward" in r for r in reasons)
    assert any("Optimizer.step()" in r for r in reasons)


def test_step_hooks_run_at_each_replay():
    x, y = _data()
    m = _mlp()
    o = jtorch.optim.SGD(m.parameters(), lr=0.1)
    calls = []
    o.register_step_pre_hook(lambda opt, a, k: calls.append("pre"))
    o.register_step_post_hook(lambda opt, a, k: calls.append("post"))

    @jtorch.compile
    def step():
        o.zero_grad()
        F.cross_entropy(m(x), y).backward()
        o.step()

    traces = _count_traces(step)
    for _ in range(3):
        step()
    assert calls == ["pre", "post"] * 3 and len(traces) == 1


def _gpt_like_step(m, o, x, y):
    """minGPT's loop: forward, zero_grad, backward, clip_grad_norm_, AdamW."""
    loss = F.cross_entropy(m(x), y)
    m.zero_grad(set_to_none=True)
    loss.backward()
    nn.utils.clip_grad_norm_(m.parameters(), 0.05)
    o.step()
    return loss


def test_clip_grad_norm_between_backward_and_step_replays():
    m1, m2 = _mlp(), _mlp()
    o1 = jtorch.optim.AdamW(m1.parameters(), lr=1e-2)
    o2 = jtorch.optim.AdamW(m2.parameters(), lr=1e-2)
    x, y = _data()
    cstep = jtorch.compile(lambda: _gpt_like_step(m2, o2, x, y))
    traces = _count_traces(cstep)
    for i in range(4):
        want, got = _gpt_like_step(m1, o1, x, y), cstep()
        np.testing.assert_allclose(got.item(), want.item(), rtol=1e-6, err_msg=f"step {i}")
        for a, b in zip(_params(m1), _params(m2)):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    assert len(traces) == 1


def test_manual_sgd_on_p_data_replays():
    """word_language_model's update: ``p.data.add_(p.grad, alpha=-lr)``."""
    x, y = _data()
    m1, m2 = _mlp(), _mlp()

    def step(m):
        m.zero_grad()
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        nn.utils.clip_grad_norm_(m.parameters(), 0.25)
        for p in m.parameters():
            p.data.add_(p.grad, alpha=-0.5)
        return loss

    cstep = jtorch.compile(lambda: step(m2))
    traces = _count_traces(cstep)
    for _ in range(3):
        np.testing.assert_allclose(cstep().item(), step(m1).item(), rtol=1e-6)
        for a, b in zip(_params(m1), _params(m2)):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    assert len(traces) == 1


def test_a_grad_of_another_layout_runs_the_graph_op_by_op():
    m = nn.Linear(3, 2, bias=False)
    row = jtorch.arange(3.0)
    base = np.arange(6.0, dtype=np.float32).reshape(2, 3)

    @jtorch.compile
    def shift():
        m.weight.grad.add_(row)  # broadcast over rows: a flat loop over another layout errs

    traces = _count_traces(shift)
    for layout in ("row", "column", "row", "column"):
        g = jtorch.from_numpy(base.copy()) if layout == "row" else \
            jtorch.from_numpy(np.ascontiguousarray(base.T)).t()
        m.weight.grad = g
        shift()
        np.testing.assert_array_equal(m.weight.grad.numpy(), base + np.arange(3.0),
                                      err_msg=layout)
    assert len(traces) == 1
    m.weight.grad = None
    with pytest.raises(RuntimeError, match="None"):
        shift()


def test_freezing_a_parameter_traces_the_step_again():
    x, y = _data()
    m1, m2 = _mlp(), _mlp()
    o1 = jtorch.optim.SGD(m1.parameters(), lr=0.1)
    o2 = jtorch.optim.SGD(m2.parameters(), lr=0.1)
    cstep = jtorch.compile(lambda: _gpt_like_step(m2, o2, x, y))
    traces = _count_traces(cstep)
    for i in range(4):
        if i == 2:  # fine-tuning: the first layer stops learning
            for m in (m1, m2):
                m[0].weight.requires_grad_(False)
        np.testing.assert_allclose(cstep().item(), _gpt_like_step(m1, o1, x, y).item(),
                                   rtol=1e-6)
        for a, b in zip(_params(m1), _params(m2)):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    assert m2[0].weight.grad is None and len(traces) == 2


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad_after_a_graph_that_reads_grads_replays_in_order(set_to_none):
    """A pending graph that reads a .grad runs before zero_grad() on replay, as in the call."""
    m = nn.Linear(3, 2)
    opt = jtorch.optim.SGD(m.parameters(), lr=0.1)

    @jtorch.compile
    def norm_then_zero():
        n = m.weight.grad.abs().sum() * 1.0
        opt.zero_grad(set_to_none=set_to_none)
        return n

    traces = _count_traces(norm_then_zero)
    for k in (1.0, 2.0, 3.0):
        m.weight.grad = jtorch.full((2, 3), k)
        m.bias.grad = jtorch.full((2,), k)
        assert norm_then_zero().item() == 6 * k
        assert m.weight.grad is None if set_to_none else m.weight.grad.abs().sum().item() == 0
    assert len(traces) == 1
