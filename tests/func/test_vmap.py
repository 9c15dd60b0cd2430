"""``jtorch.vmap`` against the per-example results and against ``torch.vmap``: a sweep over the
public surface (the vmapped call equals the per-example calls stacked), the documented
examples, in_dims/out_dims trees, nesting, randomness, chunks, gradients through and inside
vmap, torch's errors, and that a batch runs as batched kernel calls, not one call per example."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import jtorch
import jtorch.nn.functional as F
from jtorch import dispatch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from op_samples import PATTERNS

B = 3

_RANDOM = {"dropout", "alpha_dropout", "dropout1d", "dropout2d", "dropout3d",
           "feature_alpha_dropout", "rrelu", "rrelu_", "bernoulli", "bernoulli_", "multinomial",
           "normal", "normal_", "uniform_", "random_", "exponential_", "geometric_", "cauchy_",
           "log_normal_", "rand_like", "randn_like", "randint_like", "poisson", "gumbel_softmax",
           "binomial", "_standard_gamma", "_sample_dirichlet",
           "native_dropout", "dropout_", "alpha_dropout_", "feature_dropout",
           "feature_dropout_", "feature_alpha_dropout_"}
_DYNAMIC = {"argwhere", "masked_select", "nonzero", "unique", "unique_consecutive", "where"}
# names the sweep leaves out, with the reason
_LEFT_OUT = {
    "empty_like": "uninitialised values",
    "byte": "a cast of negative floats to uint8 (undefined values)",
    # composites that write a batched value through a view of a zero tensor they made (torch
    # has batching rules for them): the write into an unbatched view raises
    "diag_embed": "writes through a view of an unbatched tensor it made", "diagflat": "same",
}


def _examples(e: int) -> dict:
    rng = np.random.default_rng(10 + e)
    f = lambda: jtorch.from_numpy(rng.standard_normal((3, 4)).astype(np.float32))
    return {"x": f(), "y": f(), "z": f(), "i": jtorch.from_numpy(rng.integers(0, 3, (3, 4))),
            "b": jtorch.from_numpy(rng.integers(0, 2, (3, 4)).astype(bool))}


def _target(kind: str, name: str):
    if kind == "method":
        return lambda self, *a, **k: getattr(self, name)(*a, **k)
    return getattr(jtorch if kind == "torch" else F, name)


def _tensors(v) -> bool:
    return isinstance(v, jtorch.Tensor) or (
        isinstance(v, tuple) and all(isinstance(q, jtorch.Tensor) for q in v))


_SWEEP = sorted(k for k in PATTERNS if k.split(":", 1)[1] not in _LEFT_OUT)


@pytest.mark.parametrize("key", _SWEEP)
def test_vmap_equals_the_stacked_per_example_results(key):
    kind, name = key.split(":", 1)
    fn, toks = _target(kind, name), PATTERNS[key].split()

    def call(ops):
        return fn(*[ops[t] if t in ops else float(t) if "." in t else int(t) for t in toks])

    names = [t for t in toks if t in "xyzib"]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            per = [call(_examples(e)) for e in range(B)]
    except Exception:  # noqa: BLE001
        pytest.skip("the call does not run on these examples")
    if not all(_tensors(p) for p in per):
        pytest.skip("not a tensor result")
    exs = [_examples(e) for e in range(B)]  # fresh: the calls above may have written theirs
    batched = [jtorch.stack([ex[t] for ex in exs]) for t in names]
    run = jtorch.vmap(lambda *ts: call(dict(zip(names, ts))))
    if name in _DYNAMIC:
        with pytest.raises(RuntimeError, match="dynamic shape"):
            run(*batched)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            got = run(*batched)
        except RuntimeError as e:  # a random op raises where it draws (not in eval, nor p=0)
            if name not in _RANDOM:
                raise
            assert "randomness error mode" in str(e)
            return
    got = got if isinstance(got, tuple) else (got,)
    for k in range(len(got)):
        want = jtorch.stack([p[k] if isinstance(p, tuple) else p for p in per])
        assert got[k].dtype == want.dtype, (got[k].dtype, want.dtype)
        if want.dtype is jtorch.bfloat16:  # no NumPy view of it: its float32 values
            got_k, want = got[k].float(), want.float()
        else:
            got_k = got[k]
        a, w = got_k.detach().numpy(), want.detach().numpy()
        assert a.shape == w.shape and a.dtype == w.dtype, (a.shape, w.shape, a.dtype, w.dtype)
        np.testing.assert_allclose(a, w, rtol=1e-5, atol=1e-6, equal_nan=True)


def test_the_written_inputs_of_in_place_ops_are_the_batch():
    x = jtorch.randn(4, 3)
    y = x.clone()
    jtorch.vmap(lambda r: r.mul_(2).add_(1))(x)
    np.testing.assert_array_equal(x.numpy(), (y * 2 + 1).numpy())
    v = jtorch.zeros(4, 3)
    jtorch.vmap(lambda r: r[1:].fill_(5.0))(v)  # through a view
    assert v[:, 1:].eq(5).all() and v[:, 0].eq(0).all()


# -- against torch.vmap --------------------------------------------------------------------------

def _both(fn, *arrays, **kw):
    """fn(lib, *tensors) vmapped in jtorch and in torch: their results (or errors)."""
    out = []
    for lib in (jtorch, torch):
        def conv(a, lib=lib):
            if isinstance(a, np.ndarray):
                return lib.from_numpy(a.copy())
            if isinstance(a, dict):
                return {k: conv(v) for k, v in a.items()}
            if isinstance(a, (tuple, list)):
                return type(a)(conv(v) for v in a)
            return a
        try:
            out.append(lib.vmap(lambda *a, lib=lib: fn(lib, *a), **kw)(*[conv(a) for a in arrays]))
        except Exception as e:  # noqa: BLE001
            out.append((type(e), str(e).replace("jtorch.tensor.Tensor", "torch.Tensor")))
    return out


def _same(a, b):
    if isinstance(b, tuple) and len(b) == 2 and isinstance(b[0], type):  # errors
        assert isinstance(a, tuple) and a[0] is b[0], (a, b)
        assert " ".join(a[1].split()) == " ".join(b[1].split()), (a, b)  # tree reprs wrap
        return
    if not isinstance(b, (torch.Tensor, tuple, list, dict)):
        assert type(a) is type(b) and a == b
        return
    if isinstance(b, (tuple, list)):
        assert type(a).__name__ == type(b).__name__ and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    if isinstance(b, dict):
        assert a.keys() == b.keys()
        for k in b:
            _same(a[k], b[k])
        return
    assert tuple(a.shape) == tuple(b.shape) and str(a.dtype) == str(b.dtype)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6, atol=1e-7)


_R = np.random.default_rng(0)
_X = _R.standard_normal((5, 3, 4))
_W = _R.standard_normal((4, 6))


@pytest.mark.parametrize("case", [
    (lambda t, x, y: t.dot(x, y), (_X[:, 0], _X[:, 1]), {}),  # the batched dot
    (lambda t, x, w: x @ w, (_X, _W), {"in_dims": (0, None)}),
    (lambda t, x: x.sum(-1), (_X,), {"in_dims": 1}),
    (lambda t, x: x.sum(-1), (_X,), {"in_dims": -1}),
    (lambda t, x: x.sum(-1), (_X,), {"out_dims": 1}),
    (lambda t, x: (x, x.sum()), (_X,), {"out_dims": (1, 0)}),
    (lambda t, d: d["a"] * d["b"], ({"a": _X, "b": _X[0]},), {"in_dims": ({"a": 0, "b": None},)}),
    (lambda t, p: p[0].sum(-1) + p[1][0], ((_X, (_X[:, :, 0],)),), {"in_dims": ((0, (0,)),)}),
    (lambda t, x: t.vmap(lambda y: y.softmax(-1))(x), (_X,), {}),  # nested
    (lambda t, x: t.vmap(lambda y: y.sum(0), in_dims=1)(x), (_X,), {}),
    (lambda t, x, s: x * s, (_X, 2.5), {"in_dims": (0, None)}),
    (lambda t, x: t.nn.functional.layer_norm(x, (4,)), (_X,), {}),
    (lambda t, x: t.nn.functional.conv1d(x, t.ones(2, 3, 2, dtype=t.float64)), (_X,), {}),
    (lambda t, x: x.max(-1), (_X,), {}),
    (lambda t, x: x.sum(-1), (_X,), {"chunk_size": 2}),
    (lambda t, x: 3, (_X,), {"out_dims": None}),
    # torch's errors
    (lambda t, x, y: x + y, (_X, _X[:3]), {}),
    (lambda t, x: x, (_X,), {"in_dims": 3}),
    (lambda t, x: x, (_X,), {"in_dims": (0, 1)}),
    (lambda t, x: 3, (_X,), {}),
    (lambda t, x: x, (3.0,), {}),
    (lambda t, x: x, (_X,), {"out_dims": 3}),
    (lambda t, x: x.item(), (_X,), {}),
    (lambda t, x: bool(x.sum() > 0), (_X,), {}),
    (lambda t, x: x.nonzero(), (_X,), {}),
    (lambda t, x: t.rand_like(x), (_X,), {}),
    (lambda t, x: x, (_X,), {"randomness": "sometimes"}),
])
def test_vmap_follows_torch(case):
    fn, arrays, kw = case
    _same(*_both(fn, *arrays, **kw))


def test_a_model_whose_batch_dim_is_hidden():
    jtorch.manual_seed(0)
    lin = jtorch.nn.Linear(4, 2).double()
    x = jtorch.from_numpy(_X)
    np.testing.assert_allclose(jtorch.vmap(lin)(x).detach().numpy(),
                               jtorch.stack([lin(e) for e in x]).detach().numpy(), rtol=1e-12)


def test_randomness_different_and_same():
    x = jtorch.zeros(4, 1000)
    diff = jtorch.vmap(lambda r: r + jtorch.rand_like(r), randomness="different")(x)
    same = jtorch.vmap(lambda r: r + jtorch.rand_like(r), randomness="same")(x)
    assert not jtorch.equal(diff[0], diff[1])
    assert all(jtorch.equal(same[0], same[k]) for k in range(4))
    d = jtorch.vmap(lambda r: F.dropout(r + 1, 0.5), randomness="different")(x)
    assert not jtorch.equal(d[0], d[1]) and set(np.unique(d.numpy())) <= {0.0, 2.0}
    filled = jtorch.vmap(lambda r: r.clone().uniform_(), randomness="same")(x)
    assert all(jtorch.equal(filled[0], filled[k]) for k in range(4))


# -- gradients ------------------------------------------------------------------------------

def test_the_jacobian_as_vmap_of_vjp_equals_the_rows():
    """The documented example: vmap(get_vjp)(I_N) over autograd.grad, row by row equal."""
    res = []
    for lib in (jtorch, torch):
        x = lib.from_numpy(np.linspace(-1, 1, 5)).requires_grad_()
        y = x.sin() * x.exp() + x.sum()
        eye = lib.eye(5, dtype=lib.float64)

        def get_vjp(v, lib=lib, x=x, y=y):
            return lib.autograd.grad(y, x, v, retain_graph=True)

        rows = lib.stack([get_vjp(v)[0] for v in eye.unbind()])
        res.append((rows.detach().numpy(), lib.vmap(get_vjp)(eye)[0].detach().numpy()))
    np.testing.assert_array_equal(res[0][0], res[0][1])
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-14)


def test_gradients_flow_through_a_vmapped_function():
    out = []
    for lib in (jtorch, torch):
        x = lib.from_numpy(_X.copy()).requires_grad_()
        w = lib.from_numpy(_W.copy()).requires_grad_()
        lib.vmap(lambda r, w=w: (r @ w).tanh().sum(0))(x).pow(2).sum().backward()
        out.append((x.grad.numpy(), w.grad.numpy()))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_per_example_gradients_inside_vmap():
    """autograd.grad inside the vmapped function differentiates each example."""
    def per_example(lib):
        def g(x):
            x = x.detach().requires_grad_()
            return lib.autograd.grad((x.sin() * x).sum() + x.pow(3).mean(), x)[0]
        if lib is torch:
            return torch.vmap(torch.func.grad(
                lambda x: (x.sin() * x).sum() + x.pow(3).mean()))(torch.from_numpy(_X.copy()))
        return lib.vmap(g)(lib.from_numpy(_X.copy()))

    np.testing.assert_allclose(per_example(jtorch).numpy(), per_example(torch).numpy(),
                               rtol=1e-12)


# -- one batched call per op --------------------------------------------------------------------

class _Count:
    def __init__(self) -> None:
        self.ops = []

    def __call__(self, op, args, plan, params):
        self.ops.append(op.name)
        prev, dispatch.mode = dispatch.mode, None
        try:
            return op(*args, **params)
        finally:
            dispatch.mode = prev


def test_a_batch_runs_as_batched_kernel_calls():
    """The ops that reach the kernels do not grow with the batch (no per-example loop)."""
    jtorch.manual_seed(0)
    mlp = jtorch.nn.Sequential(jtorch.nn.Linear(8, 16), jtorch.nn.ReLU(), jtorch.nn.Linear(16, 3))
    counts = []
    for batch in (4, 64):
        x = jtorch.randn(batch, 8)
        spy = _Count()
        dispatch.mode = spy
        try:
            jtorch.vmap(lambda r: mlp(r).softmax(-1).sum())(x)
        finally:
            dispatch.mode = None
        counts.append(spy.ops)
    assert counts[0] == counts[1] and len(counts[0]) < 30, counts


def test_per_example_gradients_of_a_small_model():
    """The acceptance example: vmap(grad(loss)) over functional_call, equal to torch.func."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((16, 20)), rng.integers(0, 5, 16)
    res, first = [], None
    for lib in (jtorch, torch):
        lib.manual_seed(0)
        nn = lib.nn
        model = nn.Sequential(nn.Linear(20, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(),
                              nn.Linear(32, 5)).double()
        if first is None:
            first = {k: v.detach().numpy().copy() for k, v in model.named_parameters()}
        params = {k: lib.from_numpy(first[k].copy()) for k in first}

        def loss(p, xi, yi, lib=lib, model=model):
            out = lib.func.functional_call(model, p, (xi.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, yi.unsqueeze(0))

        g = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(
            params, lib.from_numpy(x.copy()), lib.from_numpy(y.copy()))
        res.append({k: v.detach().numpy() for k, v in g.items()})
    for k in res[1]:
        np.testing.assert_allclose(res[0][k], res[1][k], rtol=1e-10, atol=1e-14)
    assert res[0]["0.weight"].shape == (16, 32, 20)


def test_nll_loss_over_a_batch_reduces_per_example():
    rng = np.random.default_rng(1)
    x = jtorch.from_numpy(rng.standard_normal((4, 6, 5)))
    t = jtorch.from_numpy(rng.integers(0, 5, (4, 6)))
    t[0, :] = -100  # every target of one example ignored: its mean is nan, as per example
    w = jtorch.from_numpy(rng.random(5))
    for red in ("mean", "sum", "none"):
        f = lambda a, b, red=red: F.nll_loss(a, b, weight=w, reduction=red)
        got = jtorch.vmap(f)(x, t)
        want = jtorch.stack([f(a, b) for a, b in zip(x, t)])
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, equal_nan=True)
    def grad_of(a, b):
        a = a.detach().requires_grad_()
        return jtorch.autograd.grad(F.cross_entropy(a, b), a)[0]

    g = jtorch.vmap(grad_of)(x, t)
    want = jtorch.stack([jtorch.autograd.grad(F.cross_entropy(a, b), a)[0]
                         for a, b in zip(x.clone().requires_grad_(), t)])
    np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-12, equal_nan=True)


def test_a_sum_over_size_one_dims_follows_torch():
    """A sum whose summed dims have size 1 (a gradient summed to an example's shape) keeps
    the reduction's values and dtypes: -0.0 sums to 0.0, ints to int64."""
    x = np.array([[[-0.0, 1.5, np.nan]], [[2.0, -0.0, np.inf]]])
    for dtype in ("float64", "float32", "int32"):
        for f in (lambda a: a.sum(0), lambda a: a.sum((0,), keepdim=True),
                  lambda a: a.sum(-2)):
            v = (np.nan_to_num(x, posinf=7.0) if dtype == "int32" else x).astype(dtype)
            got, want = jtorch.vmap(f)(jtorch.from_numpy(v)), torch.vmap(f)(torch.from_numpy(v))
            assert str(got.dtype) == str(want.dtype) and got.shape == want.shape
            np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want.numpy()))
            np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_grad_of_a_vmapped_function_and_vmap_of_grad_agree_with_torch():
    x, w = _X[:, 0], _W  # (5, 4) and (4, 6)
    res = []
    for lib in (jtorch, torch):
        X, W = lib.from_numpy(x.copy()), lib.from_numpy(w.copy())
        def total(w_, lib=lib, X=X):
            return lib.vmap(lambda r: (r @ w_).tanh().sum())(X).sum()

        outer = lib.func.grad(total)(W)
        inner = lib.vmap(lib.func.grad(lambda w_, r: (r @ w_).tanh().sum()),
                         in_dims=(None, 0))(W, X)
        res.append((outer.detach().numpy(), inner.detach().numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-15)
    np.testing.assert_allclose(res[0][1].sum(0), res[0][0], rtol=1e-10, atol=1e-15)


def test_vmap_of_a_compiled_function_and_a_compiled_vmap():
    x = jtorch.randn(4, 3)
    f = jtorch.compile(lambda r: (r.sin() * 2).sum())
    want = jtorch.stack([f(r) for r in x])
    np.testing.assert_array_equal(jtorch.vmap(f)(x).numpy(), want.numpy())  # run op by op
    g = jtorch.compile(lambda b: jtorch.vmap(lambda r: (r.sin() * 2).sum())(b))
    np.testing.assert_allclose(g(x).numpy(), want.numpy(), rtol=1e-6)  # traced physically
