"""``jtorch.func`` transforms inside a compiled function give eager's results (torch.func's as
the reference): per-example gradients (vmap of grad over an unbatched weight), vjp/jvp,
jacrev/jacfwd, hessian and grad of grad, whose double backward runs inside the trace."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch


def _loss(lib, w, xi):
    return (xi @ w.T).sin().sum()


def _f(lib, v):
    return (v.sin() * v).cumsum(0)


CASES = {
    # an unbatched weight made a leaf by grad inside vmap: the per-example gradient pattern
    "vmap_grad_weight": lambda L, w, x: L.func.vmap(L.func.grad(lambda a, b: _loss(L, a, b)),
                                                    in_dims=(None, 0))(w, x),
    "vmap_grad_and_value": lambda L, w, x: L.func.vmap(
        L.func.grad_and_value(lambda a, b: _loss(L, a, b)), in_dims=(None, 0))(w, x),
    "vmap_grad_both": lambda L, w, x: L.func.vmap(
        L.func.grad(lambda a, b: _loss(L, a, b), argnums=(0, 1)), in_dims=(None, 0))(w, x),
    "vmap_vjp_weight": lambda L, w, x: L.func.vmap(
        lambda xi: L.func.vjp(lambda a: _loss(L, a, xi), w)[1](L.ones((), dtype=L.float64)))(x),
    "vjp": lambda L, w, x: L.func.vjp(lambda v: _f(L, v), x[0])[1](
        L.ones(4, dtype=L.float64)),
    "jvp": lambda L, w, x: L.func.jvp(lambda v: _f(L, v), (x[0],), (x[1],)),
    "jacrev": lambda L, w, x: L.func.jacrev(lambda v: _f(L, v))(x[0]),
    "jacfwd": lambda L, w, x: L.func.jacfwd(lambda v: _f(L, v))(x[0]),
    "hessian": lambda L, w, x: L.func.hessian(lambda v: _f(L, v).sum())(x[0]),
    "vmap_jacrev": lambda L, w, x: L.func.vmap(L.func.jacrev(lambda v: _f(L, v)))(x),
    "vmap_hessian": lambda L, w, x: L.func.vmap(
        L.func.hessian(lambda v: (v.sin() * v).sum()))(x),
    "grad_of_grad": lambda L, w, x: L.func.grad(
        lambda v: L.func.grad(lambda u: (u.sin() ** 2).sum())(v).sum())(x[0]),
    "jacrev_has_aux": lambda L, w, x: L.func.jacrev(lambda v: (v.sin() * v, v.cos()),
                                                    has_aux=True)(x[0]),
    "jacrev_argnums": lambda L, w, x: L.func.jacrev(lambda a, b: (b @ a.T).tanh(),
                                                    argnums=(0, 1))(w, x[0]),
    "jacfwd_argnums": lambda L, w, x: L.func.jacfwd(lambda a, b: (b @ a.T).tanh(),
                                                    argnums=1)(w, x[0]),
    "hessian_weight": lambda L, w, x: L.func.hessian(lambda a: (x @ a.T).sin().sum())(w),
    "jvp_of_grad": lambda L, w, x: L.func.jvp(L.func.grad(lambda v: (v.sin() ** 3).sum()),
                                              (x[0],), (x[1],)),
    "vmap_jvp": lambda L, w, x: L.func.vmap(
        lambda xi: L.func.jvp(lambda v: (v @ w.T).sin(), (xi,), (xi,)))(x),
    "vmap_grad_of_grad_norm": lambda L, w, x: L.func.vmap(L.func.grad(
        lambda a, xi: L.func.grad(lambda b: (xi @ b.T).sin().sum())(a).pow(2).sum()),
        in_dims=(None, 0))(w, x),
    "vmap_grad_chunks": lambda L, w, x: L.func.vmap(L.func.grad(lambda a, b: _loss(L, a, b)),
                                                    in_dims=(None, 0), chunk_size=2)(w, x),
}


def _leaves(r) -> list:
    if isinstance(r, (tuple, list)):
        return [y for v in r for y in _leaves(v)]
    return [r]


@pytest.mark.parametrize("name", sorted(CASES))
def test_transform_compiled_equals_eager_and_torch(name):
    fn = CASES[name]
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((3, 4)), rng.standard_normal((6, 4))
    want = _leaves(fn(torch, torch.from_numpy(w), torch.from_numpy(x)))
    jw, jx = jtorch.from_numpy(w), jtorch.from_numpy(x)
    eager = _leaves(fn(jtorch, jw, jx))
    compiled = jtorch.compile(lambda a, b: fn(jtorch, a, b))
    for _ in range(2):  # the first call traces, the second takes the cached path
        got = _leaves(compiled(jw, jx))
        assert len(got) == len(want) == len(eager)
        for g, e, t in zip(got, eager, want):
            assert tuple(g.shape) == tuple(t.shape)
            np.testing.assert_allclose(g.detach().numpy(), t.detach().numpy(), rtol=1e-10,
                                       atol=1e-12)
            np.testing.assert_allclose(g.detach().numpy(), e.detach().numpy(), rtol=1e-12,
                                       atol=1e-14)


def test_double_backward_inside_a_compiled_function():
    """autograd.grad(create_graph=True) then a second grad through its result, both inside
    the traced function: the second derivative, not zeros."""
    def f(lib, x):
        t = x.detach().requires_grad_()
        y = (t.sin() * t).sum()
        (g,) = lib.autograd.grad(y, [t], create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), [t])
        return g.detach(), gg

    x = np.array([0.5, -1.0, 2.0])
    want = f(torch, torch.from_numpy(x))
    got = jtorch.compile(lambda a: f(jtorch, a))(jtorch.from_numpy(x))
    for g, t in zip(got, want):
        np.testing.assert_allclose(g.numpy(), t.numpy(), rtol=1e-12)


def test_per_example_gradients_of_a_module_compiled():
    """The perf benchmark's program (vmap(grad) over functional_call and cross_entropy) at a
    small size: per-example gradients equal eager's and sum to the batch gradient."""
    nn, F = jtorch.nn, jtorch.nn.functional
    jtorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 7), nn.ReLU(), nn.Linear(7, 3)).double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    x = jtorch.randn(4, 5, dtype=jtorch.float64)
    y = jtorch.tensor([0, 2, 1, 2])

    def loss(p, xi, yi):
        return F.cross_entropy(jtorch.func.functional_call(model, p, (xi.unsqueeze(0),)),
                               yi.unsqueeze(0))

    per = jtorch.func.vmap(jtorch.func.grad(loss), in_dims=(None, 0, 0))
    eager = per(params, x, y)
    got = jtorch.compile(per)(params, x, y)
    batch = jtorch.autograd.grad(F.cross_entropy(model(x), y, reduction="sum"),
                                 list(model.parameters()))
    for (k, g), b in zip(got.items(), batch):
        np.testing.assert_allclose(g.numpy(), eager[k].numpy(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(g.sum(0).numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
