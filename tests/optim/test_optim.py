"""jtorch.optim against torch.optim: trajectories of every optimizer and option over 20 steps
(fixed gradients set on ``.grad``, and gradients from a small quadratic loss), state dicts,
param groups, hooks, zero_grad and torch's errors."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
import torch

import jtorch
import jtorch.optim  # noqa: F401

RNG = np.random.default_rng(1234)
P0 = {"w": RNG.standard_normal((3, 4)), "b": RNG.standard_normal(4), "frozen": RNG.standard_normal(2)}
GRADS = [{"w": RNG.standard_normal((3, 4)), "b": RNG.standard_normal(4)} for _ in range(20)]

CASES = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.3, "weight_decay": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.8, "nesterov": True, "maximize": True}),
    ("SGD", {"lr": 0.1, "weight_decay": 0.2, "maximize": True}),
    ("Adam", {"lr": 0.05}),
    ("Adam", {"lr": 0.05, "betas": (0.8, 0.9), "eps": 1e-3, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.05, "amsgrad": True, "maximize": True}),
    ("Adam", {"lr": 0.05, "betas": (0.3, 0.99), "amsgrad": True, "weight_decay": 0.05}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1, "decoupled_weight_decay": True}),
    ("AdamW", {"lr": 0.05}),
    ("AdamW", {"lr": 0.05, "weight_decay": 0.3, "amsgrad": True, "maximize": True}),
    ("RMSprop", {"lr": 0.01}),
    ("RMSprop", {"lr": 0.01, "alpha": 0.9, "eps": 1e-4, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True}),
    ("RMSprop", {"lr": 0.01, "centered": True, "maximize": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "maximize": True, "weight_decay": 0.1}),
    ("Adagrad", {"lr": 0.1}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.05, "weight_decay": 0.1, "eps": 1e-6}),
    ("Adagrad", {"lr": 0.1, "initial_accumulator_value": 0.5, "maximize": True}),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for name, kw in CASES]


def _params(lib, dtype, p0=P0):
    return [lib.nn.Parameter(lib.tensor(p0[k], dtype=dtype)) for k in ("w", "b", "frozen")]


def _set_grads(lib, params, s, dtype):
    for p, k in zip(params, ("w", "b")):
        p.grad = lib.tensor(GRADS[s][k], dtype=dtype)


def _run(lib, name, kw, dtype, steps=range(20), params=None, opt=None):
    params = params if params is not None else _params(lib, dtype)
    opt = opt if opt is not None else getattr(lib.optim, name)(params, **kw)
    for s in steps:
        _set_grads(lib, params, s, dtype)
        opt.step()
    return params, opt


def _np(t):
    return t.detach().numpy().copy() if hasattr(t, "detach") else t


def _assert_state_close(sj, st, tol):
    assert set(sj) == set(st)
    for k in st:
        if isinstance(st[k], torch.Tensor):
            assert sj[k].dtype.name == str(st[k].dtype).split(".")[1], k
            np.testing.assert_allclose(_np(sj[k]), _np(st[k]), rtol=tol, atol=tol, err_msg=k)
        else:
            assert sj[k] == st[k], k


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kw", CASES, ids=IDS)
def test_trajectory_matches_torch(name, kw, dtype):
    tol = 1e-5 if dtype == "float32" else 1e-10
    pj, oj = _run(jtorch, name, kw, getattr(jtorch, dtype))
    pt, ot = _run(torch, name, kw, getattr(torch, dtype))
    for a, b in zip(pj, pt):
        assert a.dtype.name == dtype
        np.testing.assert_allclose(_np(a), _np(b), rtol=tol, atol=tol)
    assert pj[2] not in oj.state and pt[2] not in ot.state or name == "Adagrad"
    np.testing.assert_array_equal(_np(pj[2]), P0["frozen"].astype(dtype))
    for a, b in zip(pj, pt):
        _assert_state_close(oj.state[a], ot.state[b], tol)


def test_quadratic_loss_with_closure_and_two_groups():
    """Gradients come from autograd in each library; two groups with their own options."""
    x = RNG.standard_normal((5, 3))
    y = RNG.standard_normal((5, 4))

    def train(lib):
        w, b, _ = _params(lib, lib.float32)
        X, Y = lib.tensor(x, dtype=lib.float32), lib.tensor(y, dtype=lib.float32)
        opt = lib.optim.Adam([{"params": [w]}, {"params": [b], "lr": 0.01, "amsgrad": True}],
                             lr=0.05)

        def closure():
            opt.zero_grad()
            loss = ((X @ w + b - Y) ** 2).mean()
            loss.backward()
            return loss

        losses = [float(opt.step(closure).detach()) for _ in range(20)]
        return _np(w), _np(b), losses

    for a, b in zip(train(jtorch), train(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,kw", [("SGD", {"lr": 0.1, "momentum": 0.9}),
                                     ("Adam", {"lr": 0.05, "amsgrad": True}),
                                     ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
                                     ("Adagrad", {"lr": 0.1, "lr_decay": 0.1})])
def test_state_dict_round_trip(name, kw):
    full, _ = _run(jtorch, name, kw, jtorch.float64)
    tfull, _ = _run(torch, name, kw, torch.float64)
    pj, oj = _run(jtorch, name, kw, jtorch.float64, steps=range(10))
    _, ot = _run(torch, name, kw, torch.float64, steps=range(10))
    sd = copy.deepcopy(oj.state_dict())
    tsd = ot.state_dict()
    assert sd["param_groups"] == tsd["param_groups"]
    assert set(sd["state"]) == set(tsd["state"]) and set(sd["state"]) <= {0, 1, 2}
    for i in tsd["state"]:
        _assert_state_close(sd["state"][i], tsd["state"][i], 1e-12)
    # a fresh optimizer over copies of the mid-way params continues like the original
    fresh = [jtorch.nn.Parameter(p.detach().clone()) for p in pj]
    opt2 = getattr(jtorch.optim, name)(fresh, **{**kw, "lr": 123.0})
    opt2.load_state_dict(sd)
    assert opt2.param_groups[0]["lr"] == kw["lr"]
    assert opt2.param_groups[0]["params"][0] is fresh[0]
    _run(jtorch, name, kw, jtorch.float64, steps=range(10, 20), params=fresh, opt=opt2)
    for a, b, c in zip(fresh, full, tfull):
        np.testing.assert_array_equal(_np(a), _np(b))
        np.testing.assert_allclose(_np(a), _np(c), rtol=1e-10, atol=1e-10)
    # the loaded state was a deep copy: the first optimizer's state did not move
    if "step" in oj.state[pj[0]]:
        assert oj.state[pj[0]]["step"].item() == 10.0


def test_state_dict_structure_and_load_errors():
    pj = _params(jtorch, jtorch.float32)
    pt = _params(torch, torch.float32)
    oj = jtorch.optim.SGD([{"params": pj[:2]}, {"params": pj[2:], "lr": 0.5}], lr=0.1, momentum=0.9)
    ot = torch.optim.SGD([{"params": pt[:2]}, {"params": pt[2:], "lr": 0.5}], lr=0.1, momentum=0.9)
    assert oj.state_dict() == ot.state_dict() == {
        "state": {}, "param_groups": ot.state_dict()["param_groups"]}
    assert [g["params"] for g in oj.state_dict()["param_groups"]] == [[0, 1], [2]]
    one = jtorch.optim.SGD(pj, lr=0.1)
    with pytest.raises(ValueError, match="different number of parameter groups"):
        one.load_state_dict(oj.state_dict())
    other = jtorch.optim.SGD([{"params": pj[:1]}, {"params": pj[1:]}], lr=0.1)
    with pytest.raises(ValueError, match="doesn't match the size of optimizer's group"):
        other.load_state_dict(oj.state_dict())


def test_load_state_dict_casts_to_param_dtype():
    pj, oj = _run(jtorch, "Adam", {"lr": 0.1}, jtorch.float64, steps=range(3))
    p32 = [jtorch.nn.Parameter(p.detach().float()) for p in pj]
    o32 = jtorch.optim.Adam(p32, lr=0.1)
    o32.load_state_dict(copy.deepcopy(oj.state_dict()))
    assert o32.state[p32[0]]["exp_avg"].dtype is jtorch.float32
    assert o32.state[p32[0]]["step"].dtype is jtorch.float32


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_step_counter_is_a_tensor_of_the_default_dtype(dtype):
    old = jtorch.get_default_dtype()
    jtorch.set_default_dtype(getattr(jtorch, dtype))
    try:
        p = jtorch.nn.Parameter(jtorch.ones(2, dtype=jtorch.float32))
        opt = jtorch.optim.Adam([p])
        p.grad = jtorch.ones(2, dtype=jtorch.float32)
        opt.step()
        step = opt.state[p]["step"]
        assert isinstance(step, jtorch.Tensor) and step.dim() == 0 and step.item() == 1.0
        assert step.dtype.name == dtype
    finally:
        jtorch.set_default_dtype(old)


def test_non_contiguous_and_large_params():
    """A transposed (non-contiguous) parameter, and one above the grain size (parallel)."""
    big = RNG.standard_normal(40_000)
    gbig = [RNG.standard_normal(40_000) for _ in range(3)]
    res = []
    for lib in (jtorch, torch):
        pt = lib.nn.Parameter(lib.tensor(P0["w"], dtype=lib.float32).t())
        pb = lib.nn.Parameter(lib.tensor(big, dtype=lib.float32))
        opt = lib.optim.Adam([pt, pb], lr=0.1, amsgrad=True, weight_decay=0.1)
        for s in range(3):
            pt.grad = lib.tensor(GRADS[s]["w"].T.copy(), dtype=lib.float32)
            pb.grad = lib.tensor(gbig[s], dtype=lib.float32)
            opt.step()
        assert not pt.is_contiguous()
        res.append((_np(pt), _np(pb), _np(opt.state[pt]["exp_avg_sq"])))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_complex_params_match_torch():
    z0 = RNG.standard_normal((2, 3)) + 1j * RNG.standard_normal((2, 3))
    g = [RNG.standard_normal((2, 3)) + 1j * RNG.standard_normal((2, 3)) for _ in range(5)]
    res = []
    for lib in (jtorch, torch):
        p = lib.nn.Parameter(lib.tensor(z0, dtype=lib.complex64))
        opt = lib.optim.Adam([p], lr=0.1)
        for s in range(5):
            p.grad = lib.tensor(g[s], dtype=lib.complex64)
            opt.step()
        res.append(_np(p))
    np.testing.assert_allclose(res[0], res[1], rtol=1e-5, atol=1e-5)


def test_step_bumps_versions_and_runs_without_grad_recording():
    p = jtorch.nn.Parameter(jtorch.ones(3))
    opt = jtorch.optim.SGD([p], lr=0.1, momentum=0.9)
    p.grad = jtorch.ones(3)
    v = p._version
    opt.step()
    assert p._version > v
    assert p.grad_fn is None and p.requires_grad and p.is_leaf
    buf = opt.state[p]["momentum_buffer"]
    vb = buf._version
    opt.step()
    assert buf._version > vb


def test_zero_grad():
    p = jtorch.nn.Parameter(jtorch.ones(3))
    opt = jtorch.optim.SGD([p], lr=0.1)
    p.grad = jtorch.ones(3)
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and np.all(_np(g) == 0)
    opt.zero_grad()
    assert p.grad is None
    opt.step()  # no grads: nothing happens
    np.testing.assert_array_equal(_np(p), np.ones(3))


def test_repr_matches_torch():
    for name, kw in [("SGD", {"lr": 0.1}), ("Adam", {"lr": 0.1, "betas": (0.8, 0.9)}),
                     ("AdamW", {}), ("RMSprop", {"centered": True}), ("Adagrad", {})]:
        oj = getattr(jtorch.optim, name)([{"params": _params(jtorch, jtorch.float32)[:1]},
                                          {"params": _params(jtorch, jtorch.float32)[1:], "lr": 1.0}],
                                         **kw)
        ot = getattr(torch.optim, name)([{"params": _params(torch, torch.float32)[:1]},
                                         {"params": _params(torch, torch.float32)[1:], "lr": 1.0}],
                                        **kw)
        assert repr(oj) == repr(ot)
        assert oj.defaults == ot.defaults


def test_add_param_group_and_named_params():
    pj = _params(jtorch, jtorch.float32)
    opt = jtorch.optim.SGD(pj[:1], lr=0.1, momentum=0.5)
    opt.add_param_group({"params": pj[1], "lr": 0.2})
    assert opt.param_groups[1]["params"] == [pj[1]] and opt.param_groups[1]["momentum"] == 0.5
    named = jtorch.optim.SGD([("a", pj[0]), ("b", pj[1])], lr=0.1)
    assert named.param_groups[0]["param_names"] == ["a", "b"]
    assert named.state_dict()["param_groups"][0]["param_names"] == ["a", "b"]


def _errors(fn_j, fn_t):
    with pytest.raises(Exception) as ej:
        fn_j()
    with pytest.raises(Exception) as et:
        fn_t()
    assert type(ej.value) is type(et.value)
    assert str(ej.value) == str(et.value)


@pytest.mark.parametrize("case", [
    "tensor", "empty", "overlap", "nonleaf", "nontensor", "set", "notdict", "lr", "momentum",
    "nesterov", "betas", "betas_mixed", "eps", "wd", "alpha", "lr_decay", "acc", "named_mixed",
    "named_groups",
])
def test_errors_match_torch(case):
    def make(lib):
        p = _params(lib, lib.float32)
        return {
            "tensor": lambda: lib.optim.SGD(p[0], lr=0.1),
            "empty": lambda: lib.optim.SGD([], lr=0.1),
            "overlap": lambda: lib.optim.SGD([{"params": p[:2]}, {"params": p[1:]}], lr=0.1),
            "nonleaf": lambda: lib.optim.SGD([p[0] * 2], lr=0.1),
            "nontensor": lambda: lib.optim.SGD([p[0], 1.5], lr=0.1),
            "set": lambda: lib.optim.SGD(p[:1], lr=0.1).add_param_group({"params": {p[1]}}),
            "notdict": lambda: lib.optim.SGD(p, lr=0.1).add_param_group([p[0]]),
            "lr": lambda: lib.optim.Adam(p, lr=-1.0),
            "momentum": lambda: lib.optim.SGD(p, lr=0.1, momentum=-0.5),
            "nesterov": lambda: lib.optim.SGD(p, lr=0.1, nesterov=True),
            "betas": lambda: lib.optim.AdamW(p, betas=(0.9, 1.0)),
            "betas_mixed": lambda: lib.optim.Adam(p, betas=(0.9, 1)),
            "eps": lambda: lib.optim.RMSprop(p, eps=-1.0),
            "wd": lambda: lib.optim.Adagrad(p, weight_decay=-1.0),
            "alpha": lambda: lib.optim.RMSprop(p, alpha=-1.0),
            "lr_decay": lambda: lib.optim.Adagrad(p, lr_decay=-1.0),
            "acc": lambda: lib.optim.Adagrad(p, initial_accumulator_value=-1.0),
            "named_mixed": lambda: lib.optim.SGD([("a", p[0]), p[1]], lr=0.1),
            "named_groups": lambda: lib.optim.SGD([{"params": [("a", p[0])]},
                                                   {"params": [p[1]]}], lr=0.1),
        }[case]

    _errors(make(jtorch), make(torch))


def test_duplicate_params_warn():
    p = jtorch.nn.Parameter(jtorch.ones(2))
    with pytest.warns(UserWarning, match="duplicate parameters"):
        jtorch.optim.SGD([p, p], lr=0.1)


def test_step_hooks():
    p = jtorch.nn.Parameter(jtorch.ones(2))
    opt = jtorch.optim.SGD([p], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", a[1:], k)))
    opt.register_step_post_hook(lambda o, a, k: calls.append(("post", a[1:], k)))
    hg = jtorch.optim.register_optimizer_step_pre_hook(lambda o, a, k: calls.append("global"))
    try:
        opt.step()
        assert calls == ["global", ("pre", (), {}), ("post", (), {})]
        h1.remove()
        hg.remove()
        calls.clear()
        closure_seen = []
        opt.register_step_pre_hook(lambda o, a, k: (a, {"closure": lambda: closure_seen.append(1)}))
        opt.step()
        assert closure_seen == [1]
        assert len(calls) == 1 and calls[0][0] == "post" and list(calls[0][2]) == ["closure"]
    finally:
        hg.remove()


def test_pre_hook_bad_return():
    p = jtorch.nn.Parameter(jtorch.ones(2))
    opt = jtorch.optim.SGD([p], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: 3)
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step()


def test_closure_runs_with_grad_enabled_and_step_without():
    p = jtorch.nn.Parameter(jtorch.ones(2))
    opt = jtorch.optim.SGD([p], lr=0.1)
    seen = []

    def closure():
        seen.append(jtorch.is_grad_enabled())
        return 1.5

    with jtorch.no_grad():
        assert opt.step(closure) == 1.5
    assert seen == [True]


def test_docstring_examples():
    w = jtorch.nn.Parameter(jtorch.ones(2))
    opt = jtorch.optim.SGD([w], lr=0.5)
    w.grad = jtorch.ones(2)
    opt.step()
    assert repr(w) == "Parameter containing:\ntensor([0.5000, 0.5000], requires_grad=True)"
    for name, kw, want in [("SGD", {"lr": 0.1, "momentum": 0.9}, 0.9), ("Adam", {"lr": 0.1}, 0.9),
                           ("AdamW", {"lr": 0.1, "weight_decay": 0.5}, 0.85),
                           ("RMSprop", {"lr": 0.01}, 0.9), ("Adagrad", {"lr": 0.1}, 0.9)]:
        w = jtorch.nn.Parameter(jtorch.ones(2))
        opt = getattr(jtorch.optim, name)([w], **kw)
        w.grad = jtorch.ones(2)
        opt.step()
        with warnings.catch_warnings():
            np.testing.assert_allclose(_np(w), [want, want], rtol=1e-4)


PAR_CASES = [  # one case per loop of each kernel
    ("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("Adam", {"lr": 0.05, "weight_decay": 0.1}), ("AdamW", {"lr": 0.05, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01}), ("RMSprop", {"lr": 0.01, "centered": True}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}), ("Adagrad", {"lr": 0.1}),
]


@pytest.mark.parametrize("name,kw", PAR_CASES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(PAR_CASES)])
def test_parallel_kernels_match_torch(name, kw, monkeypatch):
    """The ``prange`` builds (forced with a zero grain size) give the same trajectories."""
    monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 0)
    pj, _ = _run(jtorch, name, kw, jtorch.float32, steps=range(5))
    pt, _ = _run(torch, name, kw, torch.float32, steps=range(5))
    for a, b in zip(pj, pt):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-5)


def test_zero_denominator_gives_inf_like_torch():
    res = []
    for lib in (jtorch, torch):
        p = lib.nn.Parameter(lib.zeros(3))
        opt = lib.optim.Adagrad([p], lr=0.1, eps=0.0)
        p.grad = lib.tensor([0.0, 1.0, -1.0])
        opt.step()
        res.append(_np(p))
    np.testing.assert_array_equal(res[0], res[1])
    assert np.isnan(res[0][0])
