"""The multi-tensor optimizer step (``optim.optimizer._MultiTensor``, ``kernels/cpu/
optim_multi.py``): one compiled call per parameter group, bitwise equal to the per-parameter
path (``foreach=False``) and close to torch; ``foreach`` / ``fused`` accepted as torch does;
fallbacks for what it cannot take; a step inside ``jtorch.compile``.

Kernels are shared between tests: every group has four parameters with gradients (one tuple
length), of float32 or float64."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
import torch

import jtorch
import jtorch.nn.functional as F
from jtorch import optim
from jtorch.kernels.cpu import optim_multi

RNG = np.random.default_rng(7)
SHAPES = [(3, 4), (5,), (), (0,)]  # with gradients; a fifth parameter never gets one
P0 = [RNG.standard_normal(s) for s in SHAPES] + [RNG.standard_normal(2)]
GRADS = [[RNG.standard_normal(s) for s in SHAPES] for _ in range(4)]

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "maximize": True}),
    ("SGD", {"lr": 0.1, "weight_decay": 0.2, "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.9), "eps": 1e-3, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "maximize": True}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3, "amsgrad": True}),
    ("AdamW", {"lr": 0.05, "maximize": True}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1, "eps": 1e-6}),
    ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5, "maximize": True}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "eps": 1e-4, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True}),
    ("RMSprop", {"lr": 0.01, "centered": True, "maximize": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "maximize": True}),
]
FUSED = {"SGD", "Adam", "AdamW", "Adagrad"}  # torch's optimizers with a ``fused`` flag
# each case runs with one of the flag settings that select the multi-tensor path
FLAGS = [{}, {"foreach": True}, {"fused": True}, {"foreach": None, "fused": False}]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]


def _flags(i: int, name: str) -> dict:
    f = FLAGS[i % len(FLAGS)]
    return f if name in FUSED else {k: v for k, v in f.items() if k != "fused"}


def _params(lib, dtype):
    return [lib.nn.Parameter(lib.tensor(a, dtype=dtype)) for a in P0]


def _run(lib, name, kw, dtype, steps=4):
    params = _params(lib, dtype)
    opt = getattr(lib.optim, name)(params, **kw)
    for s in range(steps):
        for p, g in zip(params, GRADS[s]):
            p.grad = lib.tensor(g, dtype=dtype)
        opt.step()
    return params, opt


def _np(t):
    return t.detach().numpy().copy()


def _assert_same(ra, rb):
    """Params and every state tensor equal bitwise (NaN where NaN)."""
    (pa, oa), (pb, ob) = ra, rb
    for a, b in zip(pa, pb):
        np.testing.assert_array_equal(_np(a), _np(b))
        sa, sb = oa.state.get(a, {}), ob.state.get(b, {})
        assert set(sa) == set(sb)
        for k in sa:
            assert sa[k].dtype == sb[k].dtype, k
            np.testing.assert_array_equal(_np(sa[k]), _np(sb[k]), err_msg=k)


@pytest.fixture
def calls():
    """Counts multi-tensor kernel calls during the test."""
    start = optim_multi.calls[0]
    return lambda: optim_multi.calls[0] - start


@pytest.fixture
def no_single(monkeypatch):
    """Fails the test if a parameter takes the per-parameter op."""
    def fail(*args):
        raise AssertionError(f"per-parameter update of {args[0]}")

    monkeypatch.setattr(optim.optimizer, "_update", fail)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("i", range(len(CASES)), ids=IDS)
def test_multi_tensor_is_bitwise_the_per_parameter_path_and_close_to_torch(i, dtype, calls):
    name, kw = CASES[i]
    flags = _flags(i, name)
    ref = _run(jtorch, name, {**kw, "foreach": False}, getattr(jtorch, dtype))
    assert calls() == 0  # foreach=False: torch's single-tensor loop, one op per parameter
    got = _run(jtorch, name, {**kw, **flags}, getattr(jtorch, dtype))
    assert calls() == 4  # one kernel call per step for the whole group
    _assert_same(got, ref)
    tol = 1e-5 if dtype == "float32" else 1e-10
    pt, ot = _run(torch, name, {**kw, **flags}, getattr(torch, dtype))
    for a, b in zip(got[0], pt):
        np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)
        assert (a in got[1].state) == (b in ot.state)
        for k, v in ot.state.get(b, {}).items():
            np.testing.assert_allclose(_np(got[1].state[a][k]), _np(v), rtol=tol, atol=tol,
                                       err_msg=k)
            assert got[1].state[a][k].dtype.name == str(v.dtype).split(".")[1], k


@pytest.mark.parametrize("name,kw", [("Adadelta", {"lr": 1.0}), ("Adam", {"lr": 0.05})])
def test_a_large_group_runs_as_calls_of_sixteen(name, kw, calls):
    """ResNet-18 has 62 parameters: the kernel's tuple stays at 16 entries (larger tuples took
    minutes to compile), the update bitwise the per-parameter path's."""
    rng = np.random.default_rng(0)
    p0 = [rng.standard_normal(k % 5 + 1).astype(np.float32) for k in range(40)]
    g0 = [[rng.standard_normal(a.shape).astype(np.float32) for a in p0] for _ in range(2)]

    def run(flags):
        params = [jtorch.nn.Parameter(jtorch.tensor(a)) for a in p0]
        opt = getattr(optim, name)(params, **kw, **flags)
        for gs in g0:
            for p, g in zip(params, gs):
                p.grad = jtorch.tensor(g)
            opt.step()
        return params, opt

    ref = run({"foreach": False})
    assert calls() == 0
    got = run({})
    assert calls() == 2 * 3  # 16 + 16 + 8 per step
    _assert_same(got, ref)
    assert optim_multi._MAX == 16


def test_clip_grad_norm_over_many_tensors_is_one_sum():
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(k + 1) for k in range(37)]
    want = 0.0
    for a in arrays:
        s = 0.0
        for v in a:
            s += v * v
        want += s
    assert optim_multi.sum_of_squares(arrays, np.dtype(np.float64)) == pytest.approx(want,
                                                                                  rel=1e-15)
    optim_multi.scale_(arrays, 2.0, np.dtype(np.float64))
    assert optim_multi.sum_of_squares(arrays, np.dtype(np.float64)) == pytest.approx(4 * want,
                                                                                  rel=1e-15)


def test_the_group_takes_no_per_parameter_op(calls, no_single):
    """Every parameter of the group goes through the one kernel call (none through the
    per-parameter op); versions of the params and state are bumped, grads' are not."""
    params, opt = _run(jtorch, "Adam", {"lr": 0.05, "amsgrad": True}, jtorch.float32, steps=1)
    assert calls() == 1
    for p in params[:4]:
        st = opt.state[p]
        assert p._version == 1 and p.grad._version == 0
        assert [st[k]._version for k in ("step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq")] \
            == [1, 1, 1, 1]
    assert params[4] not in opt.state


@pytest.mark.parametrize("name,kw,kernel", [
    ("Adam", {"lr": 0.05, "weight_decay": 0.1}, "adam_plain"),  # (amsgrad off: its own build)
    ("Adam", {"lr": 0.05, "amsgrad": True}, "adam"),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}, "sgd"),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}, "rmsprop"),
    ("Adagrad", {"lr": 0.1}, "adagrad")], ids=lambda x: str(x)[:7])
def test_parallel_build_over_chunks_is_bitwise(name, kw, kernel, monkeypatch, calls):
    """The ``prange`` build, with chunks smaller than the tensors (forced), gives the per-
    parameter path's values."""
    ref = _run(jtorch, name, {**kw, "foreach": False}, jtorch.float32)
    monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 0)
    monkeypatch.setattr(optim_multi, "CHUNK", 5)
    launched = []
    par = optim_multi.KERNELS[kernel][1]
    monkeypatch.setitem(optim_multi.KERNELS, kernel,
                        (None, lambda *a: launched.append(a[-1]) or par(*a)))
    got = _run(jtorch, name, kw, jtorch.float32)
    assert launched == [5] * 4 and calls() == 4
    _assert_same(got, ref)


def test_fallbacks_mix_with_the_kernel(calls):
    """Non-contiguous, float16 and complex parameters, and two dtypes in one group: the
    float32 (and complex64) parameters share one call, float64 another, the rest take the
    per-parameter op; all equal the per-parameter path bitwise."""
    def run(lib, **kw):
        base = np.random.default_rng(2).standard_normal((4, 3))
        ps = [lib.nn.Parameter(lib.tensor(base, dtype=lib.float32).t()),  # non-contiguous
              lib.nn.Parameter(lib.tensor(base, dtype=lib.float16)),
              lib.nn.Parameter(lib.tensor(base + 1j * base, dtype=lib.complex64)),
              lib.nn.Parameter(lib.tensor(base, dtype=lib.float32)),
              lib.nn.Parameter(lib.tensor(base, dtype=lib.float64))]
        opt = lib.optim.Adam(ps, lr=0.05, **kw)
        rng = np.random.default_rng(3)
        for _ in range(3):
            for p in ps:
                g = rng.standard_normal(tuple(p.shape))
                p.grad = lib.tensor(g + 1j * g if p.is_complex() else g, dtype=p.dtype)
            opt.step()
        return ps, opt

    ref = run(jtorch, foreach=False)
    assert calls() == 0
    got = run(jtorch)
    assert calls() == 2 * 3
    _assert_same(got, ref)
    for a, b in zip(got[0], run(torch)[0]):
        np.testing.assert_allclose(_np(a), _np(b), rtol=2e-3, atol=2e-3)


def test_duplicate_parameter_updates_twice_in_order(calls):
    def run(**kw):
        p = jtorch.nn.Parameter(jtorch.tensor(P0[0], dtype=jtorch.float32))
        q = jtorch.nn.Parameter(jtorch.tensor(P0[1], dtype=jtorch.float32))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            opt = jtorch.optim.Adam([p, q, p], lr=0.1, **kw)
        for s in range(3):
            p.grad = jtorch.tensor(GRADS[s][0], dtype=jtorch.float32)
            q.grad = jtorch.tensor(GRADS[s][1], dtype=jtorch.float32)
            opt.step()
        return [p, q], opt

    ref = run(foreach=False)
    got = run()
    assert calls() == 3
    _assert_same(got, ref)
    assert got[1].state[got[0][0]]["step"].item() == 6


@pytest.mark.parametrize("name", ["Adam", "SGD"])
def test_state_dicts_move_between_paths(name, calls):
    """State stays per parameter: a state dict saved on one path loads into the other and
    the trajectories continue bitwise equal."""
    kw = {"lr": 0.05, "momentum": 0.9} if name == "SGD" else {"lr": 0.05}
    a = _run(jtorch, name, {**kw, "foreach": False}, jtorch.float32, steps=2)
    b = _run(jtorch, name, kw, jtorch.float32, steps=2)
    _assert_same(a, b)
    pa2, pb2 = _params(jtorch, jtorch.float32), _params(jtorch, jtorch.float32)
    with jtorch.no_grad():
        for x, y, s in zip(pa2, pb2, a[0]):
            x.copy_(s)
            y.copy_(s)
    oa2 = getattr(jtorch.optim, name)(pa2, **kw)
    ob2 = getattr(jtorch.optim, name)(pb2, **kw)
    oa2.load_state_dict(a[1].state_dict())
    ob2.load_state_dict(b[1].state_dict())
    assert oa2.param_groups[0]["foreach"] is False  # the saved options, as torch loads them
    oa2.param_groups[0]["foreach"] = None  # multi-tensor, from the single path's state
    ob2.param_groups[0]["foreach"] = False  # the other way round
    before = calls()
    for s in (2, 3):
        for x, y, g in zip(pa2, pb2, GRADS[s]):
            x.grad = jtorch.tensor(g, dtype=jtorch.float32)
            y.grad = jtorch.tensor(g, dtype=jtorch.float32)
        oa2.step()
        ob2.step()
    assert calls() - before == 2
    _assert_same((pa2, oa2), (pb2, ob2))
    _assert_same((pa2, oa2), _run(jtorch, name, kw, jtorch.float32, steps=4))


def _errors(fn_j, fn_t):
    with pytest.raises(Exception) as ej:
        fn_j()
    with pytest.raises(Exception) as et:
        fn_t()
    assert type(ej.value) is type(et.value)
    assert str(ej.value) == str(et.value)


@pytest.mark.parametrize("case", ["both", "both_sgd", "both_adagrad", "differentiable",
                                  "complex", "complex_adagrad", "complex_sgd", "tensor_lr",
                                  "tensor_lr_group"])
def test_flag_errors_match_torch(case):
    def make(lib):
        ps = _params(lib, lib.float32)
        z = lib.nn.Parameter(lib.zeros(2, dtype=lib.complex64))
        z.grad = lib.zeros(2, dtype=lib.complex64)

        def step(opt):
            for p, g in zip(ps, GRADS[0]):
                p.grad = lib.tensor(g, dtype=lib.float32)
            opt.step()

        return {
            "both": lambda: lib.optim.Adam(ps, foreach=True, fused=True),
            "both_sgd": lambda: lib.optim.SGD(ps, lr=0.1, foreach=True, fused=True),
            "both_adagrad": lambda: lib.optim.Adagrad(ps, foreach=True, fused=True),
            "differentiable": lambda: lib.optim.AdamW(ps, fused=True, differentiable=True),
            "complex": lambda: lib.optim.Adam([z], fused=True).step(),
            "complex_adagrad": lambda: lib.optim.Adagrad([z], fused=True).step(),
            "complex_sgd": lambda: lib.optim.SGD([z], lr=0.1, fused=True).step(),
            "tensor_lr": lambda: lib.optim.Adam(ps, lr=lib.tensor(0.01), foreach=True),
            "tensor_lr_group": lambda: step(lib.optim.Adam([{"params": ps,
                                                             "lr": lib.tensor(0.01)}],
                                                           foreach=True)),
        }[case]

    _errors(make(jtorch), make(torch))


def test_fused_step_counters_are_float32_as_torch():
    prev = jtorch.get_default_dtype()
    jtorch.set_default_dtype(jtorch.float64)
    torch_prev = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        for name in ("Adam", "Adagrad"):
            for fused, want in ((True, "float32"), (None, "float64")):
                pj, oj = _run(jtorch, name, {"lr": 0.1, "fused": fused}, jtorch.float64, 1)
                pt, ot = _run(torch, name, {"lr": 0.1, "fused": fused}, torch.float64, 1)
                assert oj.state[pj[0]]["step"].dtype.name == want
                assert str(ot.state[pt[0]]["step"].dtype) == "torch." + want
    finally:
        jtorch.set_default_dtype(prev)
        torch.set_default_dtype(torch_prev)


def test_tensor_lr_and_no_grad_params_take_the_kernel(calls):
    lr = jtorch.tensor(0.05)
    ref = _run(jtorch, "Adam", {"lr": 0.05, "foreach": False}, jtorch.float32)
    got = _run(jtorch, "Adam", {"lr": lr}, jtorch.float32)
    assert calls() == 4
    _assert_same(got, ref)


class _MLP(jtorch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = jtorch.nn.Linear(4, 8)
        self.fc2 = jtorch.nn.Linear(8, 3)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


@pytest.mark.parametrize("name,kw", [("Adam", {"lr": 0.01, "amsgrad": True}),
                                     ("SGD", {"lr": 0.1, "momentum": 0.9})])
def test_compiled_train_step_with_the_optimizer_inside(name, kw):
    """``jtorch.compile`` of a training step that calls ``opt.step()``: the same parameters as
    eager over three steps (the step runs eagerly at a graph break, with the multi-tensor
    kernel), and ``jtorch.compile(opt.step)`` itself."""
    jtorch.manual_seed(0)
    m1 = _MLP()
    m2 = copy.deepcopy(m1)
    o1 = getattr(jtorch.optim, name)(m1.parameters(), **kw)
    o2 = getattr(jtorch.optim, name)(m2.parameters(), **kw)

    def train_step(m, o, x, y):
        o.zero_grad()
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        o.step()
        return loss

    compiled = jtorch.compile(train_step)
    for _ in range(3):
        x, y = jtorch.randn(6, 4), jtorch.randint(0, 3, (6,))
        l1 = compiled(m1, o1, x, y)
        l2 = train_step(m2, o2, x, y)
        np.testing.assert_allclose(l1.item(), l2.item(), rtol=1e-5)
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        assert not p1.requires_grad or p1.grad is not None
        np.testing.assert_allclose(_np(p1), _np(p2), rtol=1e-5, atol=1e-6)
        for k, v in o2.state[p2].items():
            np.testing.assert_allclose(_np(o1.state[p1][k]), _np(v), rtol=1e-5, atol=1e-6)
    step = jtorch.compile(o1.step)
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        p1.grad, p2.grad = jtorch.ones_like(p1), jtorch.ones_like(p2)
    start = optim_multi.calls[0]
    step()
    assert optim_multi.calls[0] - start == 1  # one kernel call for every parameter
    o2.step()
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        np.testing.assert_allclose(_np(p1), _np(p2), rtol=1e-5, atol=1e-6)
