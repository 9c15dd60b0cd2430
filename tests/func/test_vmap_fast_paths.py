"""The batching layer's shortcuts give what the per-example calls give, bit for bit: view
ops made by ``dispatch.view``'s NumPy path, ``mm`` straight to its product, unbatched calls
handed on with their plan (to the kernel, or to an enclosing vmap), and ``nll_loss`` with one
target per example (its mean's 0/1 weights used as a mask)."""

from __future__ import annotations

import numpy as np
import pytest

import jtorch
import jtorch.nn.functional as F

B = 4


def _same(got, want) -> None:
    assert got.dtype == want.dtype
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


def _loop(f, *xs):
    return jtorch.stack([f(*row) for row in zip(*xs)])


def _rand(*shape, dtype=jtorch.float32):
    rng = np.random.default_rng(sum(shape))
    return jtorch.from_numpy(rng.standard_normal(shape)).to(dtype)


@pytest.mark.parametrize("f", [
    lambda x: x.mT, lambda x: x.t(), lambda x: x.permute(1, 0), lambda x: x.transpose(0, 1),
    lambda x: x.view(-1), lambda x: x.reshape(6, 1), lambda x: x.unsqueeze(1),
    lambda x: x.unsqueeze(0).squeeze(0), lambda x: x[1], lambda x: x[:, 1:],
    lambda x: x.select(1, 2), lambda x: x.narrow(0, 1, 1), lambda x: x.mT.mT.contiguous()])
def test_view_ops_equal_the_loop(f):
    x = _rand(B, 2, 3)
    _same(jtorch.vmap(f)(x), _loop(f, x))


_GEOMETRY = [lambda x: x.mT, lambda x: x.t(), lambda x: x.permute(1, 0),
             lambda x: x.view(-1), lambda x: x.reshape(6, 1), lambda x: x.unsqueeze(1),
             lambda x: x.unsqueeze(-1).squeeze(-1), lambda x: x[1], lambda x: x[:, ::2],
             lambda x: x.select(1, 2), lambda x: x.narrow(1, 1, 2), lambda x: x.diagonal(),
             lambda x: x[0].expand(4, 3), lambda x: x.unsqueeze(0).expand(2, 2, 3)]


@pytest.mark.parametrize("in_dim", [0, 1, 2])
@pytest.mark.parametrize("f", _GEOMETRY)
def test_views_made_from_the_example_plan_equal_the_loop(f, in_dim, monkeypatch):
    """Views of a batched value are made from the plan of the example's view: its geometry
    over the physical array with the batch dim (its stride) in front, whatever that array's
    layout (in_dims 1 and 2 give non-contiguous ones); each call here takes that path."""
    vm = __import__("jtorch.func.vmap", fromlist=["_Level"])
    taken = []
    real = vm._Level._view
    monkeypatch.setattr(vm._Level, "_view", lambda self, v, args: taken.append(1) or
                        real(self, v, args))
    x = _rand(B, 2, 3).movedim(0, in_dim)
    if f is _GEOMETRY[4] and in_dim:  # reshape of a strided example copies: no view
        pytest.skip("not a view")
    got = jtorch.vmap(f, in_dims=in_dim)(x)
    _same(got, _loop(f, x.movedim(in_dim, 0)))
    assert taken
    empty = _rand(0, 2, 3)  # an empty batch
    _same(jtorch.vmap(f)(empty), f(_rand(2, 3)).unsqueeze(0)[:0])


def test_views_record_the_physical_gradient_when_it_reaches_outside():
    """An input that requires grad outside the vmap: the views on its physical tensor are
    recorded, so the gradient reaches it."""
    x = _rand(B, 2, 3).requires_grad_()
    w = _rand(3, 2)
    out = jtorch.vmap(lambda r: (r.mT.reshape(6) * w.reshape(6)).sum())(x)
    (g,) = jtorch.autograd.grad(out.sum(), x)
    _same(g, w.mT.unsqueeze(0).expand(B, 2, 3))


@pytest.mark.parametrize("case", ["batched_unbatched", "both_batched", "unbatched_batched"])
def test_mm_equals_the_loop(case):
    a, b = _rand(B, 3, 5), _rand(B, 5, 2)
    a1, b1 = _rand(3, 5), _rand(5, 2)
    if case == "batched_unbatched":
        got, want = jtorch.vmap(lambda x: x.mm(b1))(a), _loop(lambda x: x.mm(b1), a)
    elif case == "both_batched":
        got, want = jtorch.vmap(jtorch.mm)(a, b), _loop(jtorch.mm, a, b)
    else:
        got, want = jtorch.vmap(lambda y: a1.mm(y))(b), _loop(lambda y: a1.mm(y), b)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-6)
    assert tuple(got.shape) == tuple(want.shape)


def test_outer_products_per_example():
    """Per-example weight gradients are products of a column and a row: one batched product."""
    g, x = _rand(B, 1, 4), _rand(B, 1, 3)
    _same(jtorch.vmap(lambda gi, xi: gi.mT.mm(xi))(g, x), _loop(lambda gi, xi: gi.mT.mm(xi), g, x))


def test_unbatched_calls_inside_nested_vmaps():
    """An op over no batched value runs with its plan under the enclosing vmap: captured
    tensors combine with both levels' batches."""
    w, c = _rand(3, 3), _rand(3)
    x = _rand(2, B, 3)

    def f(r):
        m = w.t().mm(w)  # unbatched at both levels
        return r @ m + c.exp()

    got = jtorch.vmap(jtorch.vmap(f))(x)
    want = jtorch.stack([_loop(f, xi) for xi in x])
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
def test_cross_entropy_one_target_each_with_an_ignored_one(dtype):
    x = _rand(B, 5, dtype=dtype)
    y = jtorch.tensor([1, -100, 4, 0])

    def loss(xi, yi):
        return F.cross_entropy(xi.unsqueeze(0), yi.unsqueeze(0))

    _same(jtorch.vmap(loss)(x, y), _loop(loss, x, y))  # the ignored example's mean: nan

    def grad_of(xi, yi):
        xi = xi.detach().requires_grad_()
        return jtorch.autograd.grad(loss(xi, yi), xi)[0]

    _same(jtorch.vmap(grad_of)(x, y), _loop(grad_of, x, y))
    _same(jtorch.vmap(jtorch.func.grad(loss))(x, y), _loop(grad_of, x, y))


@pytest.mark.parametrize("red", ["mean", "sum", "none"])
def test_nll_loss_one_target_each(red):
    x, y = _rand(B, 5), jtorch.tensor([3, 0, -100, 2])

    def f(xi, yi):
        return F.nll_loss(xi, yi, reduction=red)

    _same(jtorch.vmap(f)(x, y), _loop(f, x, y))


def test_values_a_function_dropped_leave_the_level():
    """The level's table of physical tensors holds an entry as long as its stand-in's array
    lives: a loop inside the vmapped function keeps a bounded table (it kept every value the
    function made, and each later allocation slowed), and the results are still right; values
    saved for a gradient inside the function keep theirs."""
    vm = __import__("jtorch.func.vmap", fromlist=["_active"])
    sizes = []

    def f(x):
        y = x
        for i in range(200):
            y = y + x if i % 2 else y * 0.5
        sizes.append(len(vm._active[-1].vals))
        return y

    x = _rand(B, 3)
    want = x.clone()
    for i in range(200):
        want = want + x if i % 2 else want * 0.5
    _same(jtorch.vmap(f)(x), want)
    assert sizes[0] < 10
    w = _rand(3)
    g = jtorch.vmap(jtorch.func.grad(lambda r: (((r * w).exp() * 0.5) ** 2).sum()))(x)
    xr = x.clone().requires_grad_()
    (want,) = jtorch.autograd.grad((((xr * w).exp() * 0.5) ** 2).sum(), xr)
    np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-6)
