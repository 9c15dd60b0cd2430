"""Adadelta, Adamax, NAdam, RAdam, ASGD, Rprop, Adafactor, LBFGS and SparseAdam against torch:
trajectories and every state buffer step by step, state dict round trips, constructor errors,
LBFGS with closures (with and without the strong-Wolfe line search), SparseAdam's error on
dense gradients, and the multi-tensor path bitwise equal to the per-parameter one.

float32 is compared loosely and against float64: torch's CPU kernels fuse some multiply-adds
(``add`` with ``alpha``, ``addcmul``, ``lerp``) and jtorch's kernels do not, so float32 results
differ in the last bits; jtorch's float32 must then be as close to the float64 result as
torch's is."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

import jtorch
from jtorch.kernels.cpu import optim_multi

RNG = np.random.default_rng(2024)
SHAPES = [(3, 4), (5,), (), (2, 3, 2)]
P0 = [RNG.standard_normal(s) for s in SHAPES] + [RNG.standard_normal(2)]  # the last: no grad
GRADS = [[RNG.standard_normal(s) for s in SHAPES] for _ in range(5)]

CASES = [
    ("Adadelta", {}),
    ("Adadelta", {"lr": 0.5, "rho": 0.7, "eps": 1e-4, "weight_decay": 0.1}),
    ("Adadelta", {"maximize": True, "weight_decay": 0.05}),
    ("Adamax", {"lr": 0.05}),
    ("Adamax", {"lr": 0.05, "betas": (0.5, 0.8), "eps": 1e-3, "weight_decay": 0.1,
                "maximize": True}),
    ("NAdam", {"lr": 0.05}),
    ("NAdam", {"lr": 0.05, "weight_decay": 0.1, "momentum_decay": 0.05, "maximize": True}),
    ("NAdam", {"lr": 0.05, "betas": (0.5, 0.9), "weight_decay": 0.1,
               "decoupled_weight_decay": True}),
    ("RAdam", {"lr": 0.05}),  # the first five steps are unrectified
    ("RAdam", {"lr": 0.05, "betas": (0.5, 0.8), "weight_decay": 0.1}),  # rectified from step 4
    ("RAdam", {"lr": 0.05, "betas": (0.6, 0.7), "weight_decay": 0.1,
               "decoupled_weight_decay": True, "maximize": True}),
    ("ASGD", {"lr": 0.05}),
    ("ASGD", {"lr": 0.05, "lambd": 0.01, "alpha": 0.5, "t0": 2, "weight_decay": 0.1}),
    ("ASGD", {"lr": 0.05, "t0": 0, "maximize": True}),
    ("Rprop", {}),
    ("Rprop", {"lr": 0.05, "etas": (0.3, 1.5), "step_sizes": (0.02, 0.1), "maximize": True}),
    ("Adafactor", {}),
    ("Adafactor", {"lr": 0.05, "beta2_decay": -0.5, "eps": (1e-3, 1e-2), "d": 2.0,
                   "weight_decay": 0.1}),
    ("Adafactor", {"lr": 0.05, "maximize": True}),
]
IDS = [f"{n}-{i}" for i, (n, _) in enumerate(CASES)]
ELEMENTWISE = {"Adadelta", "Adamax", "NAdam", "RAdam", "ASGD", "Rprop"}  # with fused kernels


def _params(lib, dtype):
    return [lib.nn.Parameter(lib.tensor(a, dtype=dtype)) for a in P0]


def _run(lib, name, kw, dtype, steps=range(5), params=None, opt=None):
    params = params if params is not None else _params(lib, dtype)
    opt = opt if opt is not None else getattr(lib.optim, name)(params, **kw)
    for s in steps:
        for p, g in zip(params, GRADS[s]):
            p.grad = lib.tensor(g, dtype=dtype)
        opt.step()
    return params, opt


def _np(t):
    return t.detach().numpy().astype(np.float64) if hasattr(t, "detach") else np.float64(t)


def _tensors(params, opt):
    """``{(param index, name): array}`` of the params and every tensor in their state."""
    out = {}
    for i, p in enumerate(params):
        out[i, "param"] = _np(p)
        for k, v in opt.state.get(p, {}).items():
            out[i, k] = _np(v) if isinstance(v, (jtorch.Tensor, torch.Tensor)) else v
    return out


def _assert_close(got, want, rtol, atol=0.0):
    assert set(got) == set(want)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=rtol, atol=atol, err_msg=str(k))


def _assert_same(a, b):
    """Params and state bitwise equal (NaN where NaN), state dtypes equal."""
    (pa, oa), (pb, ob) = a, b
    for x, y in zip(pa, pb):
        np.testing.assert_array_equal(_np(x), _np(y))
        sx, sy = oa.state.get(x, {}), ob.state.get(y, {})
        assert set(sx) == set(sy)
        for k in sx:
            assert sx[k].dtype == sy[k].dtype, k
            np.testing.assert_array_equal(_np(sx[k]), _np(sy[k]), err_msg=k)


@pytest.mark.parametrize("foreach", [False, True])
@pytest.mark.parametrize("i", range(len(CASES)), ids=IDS)
def test_trajectory_and_state_match_torch(i, foreach):
    """jtorch's foreach and single-tensor paths both follow torch's single-tensor algorithm
    (torch's own foreach algebra rounds differently: ASGD's differs from its single-tensor
    one at 1e-8 in float64), so torch's ``foreach=False`` is the reference; torch's foreach
    results are checked loosely."""
    name, kw = CASES[i]
    tkw = {**kw, "foreach": False}
    kw = {**kw, "foreach": foreach}
    # float64: equal to rounding
    j64, t64 = _run(jtorch, name, kw, jtorch.float64), _run(torch, name, tkw, torch.float64)
    for (pj, oj), (pt, ot) in [(j64, t64)]:
        assert [p in oj.state for p in pj] == [p in ot.state for p in pt]
        for a, b in zip(pj, pt):
            for k, v in ot.state.get(b, {}).items():
                assert oj.state[a][k].dtype.name == str(v.dtype).split(".")[1], k
    _assert_close(_tensors(*j64), _tensors(*t64), rtol=1e-12, atol=1e-14)
    # float32: close to torch's, and as close to the float64 result as torch's is
    j32, t32 = _run(jtorch, name, kw, jtorch.float32), _run(torch, name, tkw, torch.float32)
    got, want, exact = _tensors(*j32), _tensors(*t32), _tensors(*t64)
    _assert_close(got, want, rtol=2e-5, atol=1e-6)
    for k, ref in exact.items():
        ulp = max(np.max(np.abs(ref)), 1e-3) * np.finfo(np.float32).eps  # the tensor's scale
        err_j, err_t = np.max(np.abs(got[k] - ref)), np.max(np.abs(want[k] - ref))
        assert err_j <= 2 * err_t + 8 * ulp, k
    if foreach:
        _assert_close(_tensors(*j64), _tensors(*_run(torch, name, kw, torch.float64)),
                      rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("i", [i for i, (n, _) in enumerate(CASES) if n in ELEMENTWISE],
                         ids=[IDS[i] for i, (n, _) in enumerate(CASES) if n in ELEMENTWISE])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multi_tensor_is_bitwise_the_per_parameter_path(i, dtype):
    """``foreach`` (the default) updates the group in one kernel call per step, bitwise the
    single-tensor loop's values."""
    name, kw = CASES[i]
    calls = optim_multi.calls[0]
    ref = _run(jtorch, name, {**kw, "foreach": False}, getattr(jtorch, dtype))
    assert optim_multi.calls[0] == calls
    got = _run(jtorch, name, kw, getattr(jtorch, dtype))
    assert optim_multi.calls[0] == calls + 5
    _assert_same(got, ref)


@pytest.mark.parametrize("name,kw", [("NAdam", {"lr": 0.05, "weight_decay": 0.1}),
                                     ("Rprop", {"lr": 0.05}),
                                     ("ASGD", {"lr": 0.05, "t0": 1})], ids=str)
def test_parallel_build_over_chunks_is_bitwise(name, kw, monkeypatch):
    """The ``prange`` builds, one-parameter and multi-tensor (with chunks smaller than the
    tensors), give the serial per-parameter values."""
    ref = _run(jtorch, name, {**kw, "foreach": False}, jtorch.float32)
    monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 0)
    monkeypatch.setattr(optim_multi, "CHUNK", 5)
    _assert_same(_run(jtorch, name, kw, jtorch.float32), ref)
    _assert_same(_run(jtorch, name, {**kw, "foreach": False}, jtorch.float32), ref)


def test_complex_params_match_torch():
    """Complex parameters update as pairs of reals, as torch's ``view_as_real`` steps."""
    z0 = RNG.standard_normal((5, 2)) @ np.array([1, 1j])
    zg = [RNG.standard_normal((5, 2)) @ np.array([1, 1j]) for _ in range(4)]
    for name, kw in [("Adadelta", {"weight_decay": 0.1}), ("Adamax", {"lr": 0.1}),
                     ("NAdam", {"lr": 0.1}), ("RAdam", {"lr": 0.1, "betas": (0.5, 0.8)}),
                     ("ASGD", {"lr": 0.1, "t0": 1}), ("Rprop", {"lr": 0.1})]:
        res = []
        for lib in (jtorch, torch):
            z = lib.nn.Parameter(lib.tensor(z0, dtype=lib.complex128))
            opt = getattr(lib.optim, name)([z], **kw)
            for g in zg:
                z.grad = lib.tensor(g, dtype=lib.complex128)
                opt.step()
            res.append({k: v.detach().numpy() if hasattr(v, "detach") else v
                        for k, v in [("z", z), *opt.state[z].items()]})
        for k in res[1]:
            np.testing.assert_allclose(res[0][k], res[1][k], rtol=1e-12, atol=1e-14,
                                       err_msg=f"{name} {k}")


@pytest.mark.parametrize("i", [1, 4, 7, 10, 12, 15, 17], ids=[IDS[i] for i in
                                                             [1, 4, 7, 10, 12, 15, 17]])
def test_state_dict_round_trip(i):
    """Saved after three steps, loaded into a fresh optimizer (other lr), two more steps:
    equal to torch doing the same; the state dict is torch's. Loading casts every state
    tensor but ``step`` to the parameter's dtype (NAdam's ``mu_product``, ASGD's ``eta`` and
    ``mu`` too, as torch does), so only the others continue bitwise as the uninterrupted
    run."""
    name, kw = CASES[i]
    full = _run(jtorch, name, kw, jtorch.float64)
    pj, oj = _run(jtorch, name, kw, jtorch.float64, steps=range(3))
    pt, ot = _run(torch, name, kw, torch.float64, steps=range(3))
    sd, tsd = copy.deepcopy(oj.state_dict()), ot.state_dict()
    assert sd["param_groups"] == tsd["param_groups"]
    assert set(sd["state"]) == set(tsd["state"]) == {0, 1, 2, 3}
    for k in tsd["state"]:
        assert set(sd["state"][k]) == set(tsd["state"][k])
        for key, v in tsd["state"][k].items():
            assert sd["state"][k][key].dtype.name == str(v.dtype).split(".")[1]
            np.testing.assert_allclose(_np(sd["state"][k][key]), _np(v), rtol=1e-12,
                                       atol=1e-14)
    runs = []
    for lib, ps, state_dict in ((jtorch, pj, sd), (torch, pt, tsd)):
        fresh = [lib.nn.Parameter(p.detach().clone()) for p in ps]
        opt2 = getattr(lib.optim, name)(fresh, **{**kw, "lr": 123.0})
        opt2.load_state_dict(state_dict)
        assert opt2.param_groups[0]["lr"] == oj.param_groups[0]["lr"] != 123.0
        runs.append(_run(lib, name, kw, lib.float64, steps=range(3, 5), params=fresh,
                         opt=opt2))
    _assert_close(_tensors(*runs[0]), _tensors(*runs[1]), rtol=1e-12, atol=1e-14)
    for a, b in zip(runs[0][0], runs[1][0]):
        for k, v in runs[1][1].state[b].items():
            assert runs[0][1].state[a][k].dtype.name == str(v.dtype).split(".")[1], k
    if name not in ("NAdam", "ASGD"):
        _assert_same(runs[0], full)
    assert oj.state[pj[0]]["step"].item() == 3.0  # the saved state was a copy


def test_state_dict_from_torch_with_python_scalars():
    """Old state dicts with Python numbers for ``step``, ``mu_product``, ``eta`` and ``mu``
    load as 0-d tensors, as torch's ``__setstate__`` makes them."""
    for name, keys in [("NAdam", ("step", "mu_product")), ("ASGD", ("step", "eta", "mu"))]:
        pj, oj = _run(jtorch, name, {"lr": 0.05}, jtorch.float64, steps=range(2))
        sd = copy.deepcopy(oj.state_dict())
        for st in sd["state"].values():
            for k in keys:
                st[k] = st[k].item()
        opt2 = getattr(jtorch.optim, name)(pj, lr=0.05)
        opt2.load_state_dict(sd)
        for k in keys:
            v = opt2.state[pj[0]][k]
            assert isinstance(v, jtorch.Tensor) and v.dtype is jtorch.float32 and v.dim() == 0


def _errors(fn_j, fn_t):
    with pytest.raises(Exception) as ej:
        fn_j()
    with pytest.raises(Exception) as et:
        fn_t()
    assert type(ej.value) is type(et.value)
    assert str(ej.value) == str(et.value)


ERROR_CASES = {
    "adadelta_lr": ("Adadelta", {"lr": -1.0}),
    "adadelta_rho": ("Adadelta", {"rho": 1.5}),
    "adadelta_eps": ("Adadelta", {"eps": -1.0}),
    "adadelta_wd": ("Adadelta", {"weight_decay": -0.1}),
    "adamax_lr": ("Adamax", {"lr": -0.1}),
    "adamax_eps": ("Adamax", {"eps": -1e-8}),
    "adamax_beta0": ("Adamax", {"betas": (1.0, 0.9)}),
    "adamax_beta1": ("Adamax", {"betas": (0.9, -0.1)}),
    "adamax_wd": ("Adamax", {"weight_decay": -1}),
    "nadam_beta1": ("NAdam", {"betas": (0.9, 1.0)}),
    "nadam_momentum_decay": ("NAdam", {"momentum_decay": -0.1}),
    "nadam_wd": ("NAdam", {"weight_decay": -0.1}),
    "radam_lr": ("RAdam", {"lr": -1e-3}),
    "radam_beta0": ("RAdam", {"betas": (-0.1, 0.9)}),
    "radam_eps": ("RAdam", {"eps": -1.0}),
    "asgd_lr": ("ASGD", {"lr": -0.1}),
    "asgd_wd": ("ASGD", {"weight_decay": -0.1}),
    "rprop_lr": ("Rprop", {"lr": -0.1}),
    "rprop_etas": ("Rprop", {"etas": (0.5, 0.9)}),
    "rprop_etas0": ("Rprop", {"etas": (0.0, 1.2)}),
    "adafactor_lr": ("Adafactor", {"lr": -0.1}),
    "adafactor_beta2_decay": ("Adafactor", {"beta2_decay": 0.5}),
    "adafactor_eps1": ("Adafactor", {"eps": (-1.0, 1e-3)}),
    "adafactor_eps2": ("Adafactor", {"eps": (None, -1.0)}),
    "adafactor_d": ("Adafactor", {"d": 0.5}),
    "adafactor_wd": ("Adafactor", {"weight_decay": -0.1}),
    "lbfgs_lr": ("LBFGS", {"lr": -1.0}),
    "sparse_adam_lr": ("SparseAdam", {"lr": 0.0}),
    "sparse_adam_eps": ("SparseAdam", {"eps": 0.0}),
    "sparse_adam_beta": ("SparseAdam", {"betas": (0.9, 1.0)}),
    "tensor_lr": ("Adadelta", {"lr": "tensor"}),
}


@pytest.mark.parametrize("case", list(ERROR_CASES))
def test_constructor_errors_match_torch(case):
    name, kw = ERROR_CASES[case]

    def make(lib):
        p = _params(lib, lib.float32)
        kw2 = {k: lib.ones(2) if v == "tensor" else v for k, v in kw.items()}
        return lambda: getattr(lib.optim, name)(p, **kw2)

    _errors(make(jtorch), make(torch))


@pytest.mark.parametrize("case", ["dense_grad", "complex", "lbfgs_groups", "lbfgs_line_search",
                                  "adafactor_complex"])
def test_step_errors_match_torch(case):
    def make(lib):
        p = _params(lib, lib.float64)
        z = lib.nn.Parameter(lib.zeros(2, dtype=lib.complex64))
        z.grad = lib.ones(2, dtype=lib.complex64)

        def dense():
            opt = lib.optim.SparseAdam(p[:2])
            p[0].grad = lib.ones_like(p[0])
            try:
                opt.step()
            finally:
                assert len(opt.state) == 0

        def line_search():
            opt = lib.optim.LBFGS(p[:1], line_search_fn="wolfe")
            opt.step(lambda: (p[0] ** 2).sum().backward() or (p[0] ** 2).sum())

        return {
            "dense_grad": dense,
            "complex": lambda: lib.optim.SparseAdam([p[0], z]),
            "lbfgs_groups": lambda: lib.optim.LBFGS([{"params": p[:1]}, {"params": p[1:2]}]),
            "lbfgs_line_search": line_search,
            "adafactor_complex": lambda: lib.optim.Adafactor([z]).step(),
        }[case]

    _errors(make(jtorch), make(torch))


def test_sparse_adam_without_gradients_and_its_state_dict():
    pj, pt = _params(jtorch, jtorch.float32), _params(torch, torch.float32)
    oj, ot = jtorch.optim.SparseAdam(pj, lr=0.01), torch.optim.SparseAdam(pt, lr=0.01)
    assert oj.step() is None and ot.step() is None
    assert oj.state_dict() == ot.state_dict()


def _quadratic(lib, x, a, b):
    return 0.5 * (x @ (a @ x)) - b @ x


def _rosenbrock(lib, x, a, b):
    return ((1 - x[:-1]) ** 2).sum() + 100 * ((x[1:] - x[:-1] ** 2) ** 2).sum()


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
@pytest.mark.parametrize("fn", ["quadratic", "rosenbrock"])
def test_lbfgs_matches_torch(fn, line_search_fn):
    """Four steps with a closure (a small history, so it fills and drops): iterates, losses,
    evaluation counts and the whole state equal to torch's."""
    m = RNG.standard_normal((6, 6))
    a_np, b_np = m @ m.T + np.eye(6), RNG.standard_normal(6)
    x0 = np.array([-1.5, 2.0, 0.5, -0.3, 1.2, 0.8])
    f = {"quadratic": _quadratic, "rosenbrock": _rosenbrock}[fn]
    lr = 1 if line_search_fn else 0.2 if fn == "quadratic" else 0.5
    res = []
    for lib in (jtorch, torch):
        x = lib.nn.Parameter(lib.tensor(x0[:4], dtype=lib.float64))
        y = lib.nn.Parameter(lib.tensor(x0[4:], dtype=lib.float64))
        a, b = lib.tensor(a_np, dtype=lib.float64), lib.tensor(b_np, dtype=lib.float64)
        opt = lib.optim.LBFGS([x, y], lr=lr, max_iter=6, history_size=3,
                              line_search_fn=line_search_fn)

        def closure(lib=lib, x=x, y=y, a=a, b=b, opt=opt):
            opt.zero_grad()
            loss = f(lib, lib.cat([x, y]), a, b)
            loss.backward()
            return loss

        losses = [opt.step(closure).item() for _ in range(4)]
        st = opt.state[x]
        res.append((np.concatenate([_np(x), _np(y)]), losses, st))
    (xj, lj, sj), (xt, lt, st) = res
    np.testing.assert_allclose(xj, xt, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(lj, lt, rtol=1e-10, atol=1e-12)
    assert set(sj) == set(st)
    for k in ("func_evals", "n_iter"):
        assert sj[k] == st[k], k
    for k in ("t", "H_diag", "prev_loss"):
        np.testing.assert_allclose(_np(sj[k]), _np(st[k]), rtol=1e-8, err_msg=k)
    for k in ("d", "prev_flat_grad"):
        np.testing.assert_allclose(_np(sj[k]), _np(st[k]), rtol=1e-8, atol=1e-10, err_msg=k)
    for k in ("old_dirs", "old_stps", "ro"):
        assert len(sj[k]) == len(st[k]), k
        for u, v in zip(sj[k], st[k]):
            np.testing.assert_allclose(_np(u), _np(v), rtol=1e-8, atol=1e-10, err_msg=k)


def test_lbfgs_float32_quadratic_and_state_dict():
    """float32 converges as torch does; a state dict saved mid-way continues the run."""
    a_np = np.diag([1.0, 3.0, 10.0])
    b_np = np.array([1.0, -2.0, 0.5])

    def run(lib, dtype, steps, opt_state=None):
        x = lib.nn.Parameter(lib.zeros(3, dtype=dtype))
        a, b = lib.tensor(a_np, dtype=dtype), lib.tensor(b_np, dtype=dtype)
        opt = lib.optim.LBFGS([x], max_iter=5, line_search_fn="strong_wolfe")
        if opt_state is not None:
            with lib.no_grad():
                x.copy_(opt_state[0])
            opt.load_state_dict(opt_state[1])

        def closure():
            opt.zero_grad()
            loss = _quadratic(lib, x, a, b)
            loss.backward()
            return loss

        for _ in range(steps):
            opt.step(closure)
        return x, opt

    xt, _ = run(torch, torch.float32, 3)
    xj, _ = run(jtorch, jtorch.float32, 3)
    # near the optimum float32 gradients are noise: both are as close to it as float32 allows
    np.testing.assert_allclose(_np(xj), _np(xt), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(_np(xj), np.linalg.solve(a_np, b_np), rtol=1e-3, atol=1e-4)
    x1, o1 = run(jtorch, jtorch.float64, 1)
    x2, _ = run(jtorch, jtorch.float64, 1, (x1.detach().clone(),
                                            copy.deepcopy(o1.state_dict())))
    x3, _ = run(jtorch, jtorch.float64, 2)
    np.testing.assert_array_equal(_np(x2), _np(x3))


def test_docstring_examples():
    import doctest
    import importlib

    for name in ("adadelta", "adafactor", "adamax", "asgd", "lbfgs", "nadam", "radam", "rprop",
                 "sparse_adam"):
        mod = importlib.import_module(f"jtorch.optim.{name}")
        res = doctest.testmod(mod, extraglobs={"jtorch": jtorch}, verbose=False)
        assert res.failed == 0, mod.__name__
