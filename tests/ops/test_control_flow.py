"""torch.cond / torch.while_loop: eager, compiled (both branches selected by ``where``) and
vmapped results equal the Python control flow's; torch's errors for bad operands."""

from __future__ import annotations

import numpy as np
import pytest

import jtorch
from jtorch.compile.errors import UncapturedHigherOrderOpError


def _branches():
    return (lambda x, y: (x.sin() * y, x + 1)), (lambda x, y: (x.cos() - y, x * 2))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cond_eager_compiled_and_vmapped(sign):
    t, f = _branches()
    x = jtorch.tensor([0.5, -1.0, 2.0]) * sign
    y = jtorch.tensor(3.0)

    def run(x, y):
        return jtorch.cond(x.sum() > 0, t, f, (x, y))

    want = t(x, y) if float(x.sum()) > 0 else f(x, y)
    with jtorch.no_grad():  # grad mode on, the tracer reads the predicate (a graph break)
        compiled = jtorch.compile(run, fullgraph=True)(x, y)
    for got in (run(x, y), compiled, jtorch.compile(run)(x, y)):
        assert isinstance(got, tuple) and len(got) == 2
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    xs = jtorch.stack([x, -x, x * 2])
    got = jtorch.vmap(run, in_dims=(0, None))(xs, y)
    for i in range(3):
        w = run(xs[i], y)
        np.testing.assert_array_equal(got[0][i].numpy(), w[0].numpy())
        np.testing.assert_array_equal(got[1][i].numpy(), w[1].numpy())


def test_cond_python_pred_gradients_and_list_operands():
    x = jtorch.tensor([1.0, 2.0], requires_grad=True)
    out = jtorch.cond(True, lambda x: x * x, lambda x: -x, [x])
    out.sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]
    assert jtorch.cond(0, lambda x: x + 1, lambda x: x - 1, (jtorch.zeros(1),)).tolist() == [-1.0]
    # a compiled cond's gradient flows through the selected branch
    x.grad = None
    g = jtorch.compile(lambda x: jtorch.cond(x.sum() > 0, lambda x: x * x, lambda x: -x, (x,)))
    g(x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_cond_errors():
    x = jtorch.ones(3)
    with pytest.raises(RuntimeError, match="Expected pred to be bool or single-element tensor"):
        jtorch.cond(jtorch.tensor([True, False]), lambda x: x, lambda x: x, (x,))
    with pytest.raises(RuntimeError, match="only consists of tensor leaves"):
        jtorch.cond(True, lambda x, y: x, lambda x, y: x, (x, 2))
    with pytest.raises(RuntimeError, match="only consists of tensor leaves"):
        jtorch.cond(True, lambda x: x, lambda x: x, x)
    f = jtorch.compile(lambda x: jtorch.cond(x.sum() > 0, lambda x: x + 1, lambda x: x[:2], (x,)))
    with pytest.raises(UncapturedHigherOrderOpError, match="same shape and dtype"), \
            jtorch.no_grad():
        f(x)
    assert issubclass(jtorch._dynamo.exc.UncapturedHigherOrderOpError, RuntimeError)


def test_while_loop_eager_and_compiled():
    def c(i, x):
        return i < 5

    def b(i, x):
        return i + 1, x * 2

    init = (jtorch.tensor(0), jtorch.ones(2))
    i, x = jtorch.while_loop(c, b, init)
    assert int(i) == 5 and x.tolist() == [32.0, 32.0]
    i, x = jtorch.compile(lambda i, x: jtorch.while_loop(c, b, (i, x)))(*init)
    assert int(i) == 5 and x.tolist() == [32.0, 32.0]
    # torch's doc example: the loop leaves its inputs untouched
    assert init[0].item() == 0 and init[1].tolist() == [1.0, 1.0]


def test_while_loop_errors():
    z = jtorch.tensor(0)
    with pytest.raises(UncapturedHigherOrderOpError, match="same number of elements"):
        jtorch.while_loop(lambda i: i < 3, lambda i: (i + 1, i), (z,))
    with pytest.raises(UncapturedHigherOrderOpError, match="boolean scalar"):
        jtorch.while_loop(lambda i: i + 0.5, lambda i: i + 1, (z,))
    with pytest.raises(UncapturedHigherOrderOpError, match="shape and dtype"):
        jtorch.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x[:1]), (z, jtorch.ones(3)))
    with pytest.raises(RuntimeError, match="tensor or int leaves"):
        jtorch.while_loop(lambda i: i < 3, lambda i: i + 1, ("a",))


def test_compiled_cond_gradient_ignores_the_branch_not_taken():
    """A nan in the branch not taken (sqrt of a negative) must not reach the gradient."""
    def f(x):
        return jtorch.cond(x.sum() > 0, lambda x: x.sqrt(), lambda x: x * x, (x,))

    for g in (f, jtorch.compile(f)):
        x = jtorch.tensor([-1.0, -2.0], requires_grad=True)
        g(x).sum().backward()
        assert x.grad.tolist() == [-2.0, -4.0]
