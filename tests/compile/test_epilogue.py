"""Matmul epilogues (``compile/epilogue.py``): which products and chains form a group, the
generated kernel, exactness against eager, the product against float64, and fallbacks.

Inputs are dyadic (k/8 and k/16, |k| <= 8) where results are compared bit for bit: every
partial sum of the product is then exact, so any summation order (BLAS's whole product,
the kernel's row split) gives eager's product, and any difference is the epilogue's.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
import torch

import jtorch
import jtorch.nn.functional as F
from jtorch.compile import fusion, passes
from jtorch.compile.epilogue import EpilogueKernel, fuse_epilogues
from jtorch.compile.graph_module import GraphModule


def _backend(gm, example_inputs):
    """The "numba" backend's passes with the epilogues fused first."""
    m = GraphModule(gm, gm.graph.copy())
    passes.run(m.graph)
    return GraphModule(m, fusion.fuse(fuse_epilogues(m.graph))).forward


def _compile(fn):
    return jtorch.compile(fn, backend=_backend)


def _kernels(cf) -> list:
    return [n.target for fn, _ in cf.pieces.values() for n in fn.__self__.graph.nodes
            if isinstance(n.target, EpilogueKernel)]


def _dyadic(*shape, den: int = 8, dtype=jtorch.float32, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 9, size=shape).astype(np.float64) / den
    return jtorch.tensor(a, dtype=dtype)


def _bitwise(a, b) -> None:
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def _split_runs(m: int, k: int, n: int) -> bool:
    """Whether the kernel's row split runs for this product here (else eager's product)."""
    from jtorch import _threads

    nt = numba.get_num_threads()
    return m >= 32 * nt and _threads.use_parallel(m * n * k >> 5) and \
        _threads.serial_blas.available()


def _linear_gelu(x, w, b):
    return F.gelu(F.linear(x, w, b))


# sizes: one row, odd, the row split (160 x 192 x 256), empty rows, columns and sums
@pytest.mark.parametrize("m,k,n", [(1, 16, 32), (7, 33, 65), (160, 192, 256), (0, 8, 5),
                                   (6, 8, 0), (5, 0, 3)])
def test_linear_gelu_is_one_kernel_bitwise_eager(m, k, n):
    x, w, b = _dyadic(m, k), _dyadic(n, k, den=16, seed=1), _dyadic(n, seed=2)
    cf = _compile(_linear_gelu)
    _bitwise(cf(x, w, b), _linear_gelu(x, w, b))
    (kern,) = _kernels(cf)
    assert kern.names == ["addmm", "gelu"] and len(kern.outs) == 1
    assert bool(kern._mods) == _split_runs(m, k, n)  # t(w) (a transposed view) takes the split


def test_the_product_is_within_float_tolerance_of_float64():
    """Random operands: the split product against a float64 reference, as close as eager's."""
    rng = np.random.default_rng(0)
    xs, ws, bs = (rng.standard_normal(s) for s in ((160, 192), (256, 192), (256,)))
    x, w, b = (jtorch.tensor(a, dtype=jtorch.float32) for a in (xs, ws, bs))
    ref = torch.nn.functional.gelu(torch.nn.functional.linear(
        *(torch.tensor(np.float32(a), dtype=torch.float64) for a in (xs, ws, bs)))).numpy()
    cf = _compile(_linear_gelu)
    got, eager = cf(x, w, b).numpy(), _linear_gelu(x, w, b).numpy()
    tol = 4 * np.abs(eager - ref).max() + 1e-5
    assert np.abs(got - ref).max() <= tol
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
    assert bool(_kernels(cf)[0]._mods) == _split_runs(160, 192, 256)


@pytest.mark.parametrize("m,k,n", [(7, 9, 5), (160, 192, 256)])
@pytest.mark.parametrize("rshape", ["full", "row", "col", "one", "0d"])
def test_residual_and_scale_operands_broadcast(m, k, n, rshape):
    shape = {"full": (m, n), "row": (n,), "col": (m, 1), "one": (1, 1), "0d": ()}[rshape]
    x, w, b, r = _dyadic(m, k), _dyadic(n, k, den=16, seed=1), _dyadic(n, seed=2), \
        _dyadic(*shape, seed=3)

    def f(x, w, b, r):
        return F.silu(F.linear(x, w, b)) * 0.5 + r

    cf = _compile(f)
    _bitwise(cf(x, w, b, r), f(x, w, b, r))
    (kern,) = _kernels(cf)
    assert kern.names == ["addmm", "silu", "mul", "add"]


@pytest.mark.parametrize("cshape", [(160, 256), (1, 256), (160, 1), (256,), (), (1,)])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2), (0, 1), (-1, 0.25)])
def test_addmm_bias_broadcasts_and_scalars(cshape, beta, alpha):
    x, w, c = _dyadic(160, 192), _dyadic(256, 192, den=16, seed=1), _dyadic(*cshape, seed=2)
    if beta == 0:
        c = c * float("nan")  # beta 0 ignores the bias's values

    def f(c, x, w):
        return jtorch.relu(jtorch.addmm(c, x, w.t(), beta=beta, alpha=alpha))

    cf = _compile(f)
    _bitwise(cf(c, x, w), f(c, x, w))
    (kern,) = _kernels(cf)
    assert kern.names == ["addmm", "relu"]
    assert bool(kern._mods) == _split_runs(160, 192, 256)


def test_a_float64_residual_promotes_the_epilogue():
    x, w, b = _dyadic(160, 192), _dyadic(256, 192, den=16, seed=1), _dyadic(256, seed=2)
    r = jtorch.randn(160, 256, dtype=jtorch.float64)
    f = lambda x, w, b, r: F.relu(F.linear(x, w, b)) / 3 + r
    cf = _compile(f)
    out = cf(x, w, b, r)
    assert out.dtype == jtorch.float64
    _bitwise(out, f(x, w, b, r))
    assert [k.names for k in _kernels(cf)] == [["addmm", "relu", "div", "add"]]


def test_float64_and_mm_without_bias():
    x, w = _dyadic(160, 192, dtype=jtorch.float64), _dyadic(192, 256, seed=1, dtype=jtorch.float64)
    f = lambda x, w: jtorch.tanh(x @ w) * 3 - 1
    cf = _compile(f)
    _bitwise(cf(x, w), f(x, w))
    (kern,) = _kernels(cf)
    assert kern.names == ["mm", "tanh", "mul", "sub"]


@pytest.mark.parametrize("m,lone", [(160, True), (8, False)])
def test_a_large_lone_addmm_is_its_own_epilogue(m, lone):
    """Its bias is its epilogue, worth a kernel where the product is split over the threads;
    a small one stays eager's addmm."""
    x, w, b = _dyadic(m, 256), _dyadic(128, 256, den=16, seed=1), _dyadic(128, seed=2)
    f = lambda x, w, b: F.linear(x, w, b).sum(-1)
    cf = _compile(f)
    _bitwise(cf(x, w, b), f(x, w, b))
    assert [k.names for k in _kernels(cf)] == [["addmm"]] * lone


def test_the_gelu_mlp_is_two_kernels():
    """The second product reads gelu's values (not dyadic): equal to eager within rounding."""
    x, w1, b1 = _dyadic(160, 192), _dyadic(256, 192, den=16, seed=1), _dyadic(256, seed=2)
    w2, b2 = _dyadic(128, 256, den=16, seed=3), _dyadic(128, seed=4)

    def f(x, w1, b1, w2, b2):
        return F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)

    cf = _compile(f)
    np.testing.assert_allclose(cf(x, w1, b1, w2, b2).numpy(), f(x, w1, b1, w2, b2).numpy(),
                               rtol=1e-5, atol=1e-5)
    assert [k.names for k in _kernels(cf)] == [["addmm", "gelu"], ["addmm_1"]]


def test_a_view_of_the_product_joins_the_group():
    """3-D linear (addmm, then a view unfolding its rows) and x @ W on a batch (mm, view)."""
    x, w, b = _dyadic(4, 40, 24), _dyadic(32, 24, den=16, seed=1), _dyadic(32, seed=2)
    f = lambda x: F.silu(F.linear(x, w, b)) + 1
    g = lambda x: F.relu(x @ w.t()) * x.sum()
    for fn, names in ((f, ["addmm", "view_1", "silu", "add"]),
                      (g, ["mm", "view_1", "relu", "mul"])):
        cf = _compile(fn)
        _bitwise(cf(x), fn(x))
        assert [k.names for k in _kernels(cf)] == [names]


def test_bmm_epilogue():
    a, b = _dyadic(3, 7, 5), _dyadic(3, 5, 6, seed=1)
    f = lambda a, b: jtorch.sigmoid(jtorch.bmm(a, b)) * 2
    cf = _compile(f)
    _bitwise(cf(a, b), f(a, b))
    assert [k.names for k in _kernels(cf)] == [["bmm", "sigmoid", "mul"]]


@pytest.mark.parametrize("m", [160, 5])
def test_values_read_after_the_group_are_its_outputs(m):
    x, w, b = _dyadic(m, 192), _dyadic(256, 192, den=16, seed=1), _dyadic(256, seed=2)

    def f(x, w, b):
        h = F.linear(x, w, b)
        r = F.relu(h)
        return h, r * 2, r.sum()

    cf = _compile(f)
    for got, want in zip(cf(x, w, b), f(x, w, b)):
        _bitwise(got, want)
    (kern,) = _kernels(cf)
    assert kern.names == ["addmm", "relu", "mul"] and [o.name for o in kern.outs] == \
        ["addmm", "relu", "mul"]


def test_what_stays_eager():
    """int products, float16, an mm whose product is read elsewhere, addmm with alpha 0."""
    i, j = jtorch.randint(-5, 5, (6, 4)), jtorch.randint(-5, 5, (4, 3))
    h, g = _dyadic(6, 4, dtype=jtorch.float16), _dyadic(4, 3, seed=1, dtype=jtorch.float16)
    x, w = _dyadic(6, 4), _dyadic(4, 3, seed=1)
    cases = [(lambda a, b: jtorch.relu(a @ b) + 1, (i, j)),
             (lambda a, b: jtorch.relu(a @ b) + 1, (h, g)),
             (lambda a, b: (jtorch.relu(a @ b), (a @ b).sum()), (x, w)),
             (lambda a, b: jtorch.relu(jtorch.addmm(a[:, :3], a, b, alpha=0)), (x, w))]
    for fn, args in cases:
        cf = _compile(fn)
        got, want = cf(*args), fn(*args)
        for r, e in zip(got if isinstance(got, tuple) else (got,),
                        want if isinstance(want, tuple) else (want,)):
            _bitwise(r, e)
        assert _kernels(cf) == []


def test_operands_the_kernel_cannot_take_run_eagerly():
    """A strided residual or left operand: fused kernel, eager product or eager epilogue."""
    x, w, b = _dyadic(160, 192), _dyadic(256, 192, den=16, seed=1), _dyadic(256, seed=2)
    r = _dyadic(256, 160, seed=3).t()
    xt = _dyadic(192, 160, seed=4).t()
    ws = _dyadic(256, 384, den=16, seed=5)[:, ::2]
    f = lambda x, w, b, r: F.gelu(F.linear(x, w, b)) + r
    for args in ((x, w, b, r), (xt, w, b, r.contiguous()), (x, ws, b, r.contiguous())):
        cf = _compile(f)
        _bitwise(cf(*args), f(*args))
        assert len(_kernels(cf)) == 1


def test_gradients_take_the_eager_path():
    x = _dyadic(7, 9).requires_grad_()
    w, b = _dyadic(5, 9, den=16, seed=1).requires_grad_(), _dyadic(5, seed=2)
    f = lambda x, w, b: (F.gelu(F.linear(x, w, b)) * 2).sum()
    cf = _compile(f)
    out = cf(x, w, b)
    out.backward()
    gx, gw = x.grad.clone(), w.grad.clone()
    x.grad = w.grad = None
    ref = f(x, w, b)
    ref.backward()
    _bitwise(out, ref)
    _bitwise(gx, x.grad)
    _bitwise(gw, w.grad)
    assert [k.names for k in _kernels(cf)] == [["addmm", "gelu", "mul"]]


def test_nothing_to_fuse_returns_the_graph_itself():
    def backend(gm, example_inputs):
        assert fuse_epilogues(gm.graph) is gm.graph
        return gm.forward

    x = jtorch.randn(4, 3)
    jtorch.compile(lambda x: (x @ x.t()).sum() + jtorch.relu(x), backend=backend)(x)


def test_generated_module_multiplies_each_threads_rows_then_runs_their_epilogue():
    x, w, b = _dyadic(160, 192), _dyadic(256, 192, den=16, seed=1), _dyadic(256, seed=2)
    cf = _compile(_linear_gelu)
    cf(x, w, b)
    (kern,) = _kernels(cf)
    src = kern.source_for("fr")
    assert "v0 = np.float32(_f_add_scalar(np.float32(x0[i]), np.float32(x1[i])))" in src
    assert "v1 = np.float32(_f_gelu_scalar(np.float32(v0)))" in src
    drive = src.split("def gemm_epilogue(a, b, p, out0, in0, in1, m, n, nt):")[1]
    assert "for c in prange(nt):" in drive and "np.dot(a[lo:hi], b, p[lo:hi])" in drive
    assert "_call(out0, in0, in1, lo, hi, 0, n, n)" in drive
    assert "_call(out0, in0, in1, 0, 1, lo * n, hi * n, m * n)" in kern.source_for("ff", False)


def test_symbolic_sizes():
    """dynamic=True: a 2-D chain fuses; a view whose shape varies between calls does not join
    (nor does its addmm alone: its size is unknown)."""
    w, b = _dyadic(32, 16, den=16, seed=1), _dyadic(32, seed=2)
    f = lambda x: F.silu(F.linear(x, w, b)) + 1
    for dims, names in (((16,), [["addmm", "silu", "add"]]), ((4, 16), [])):
        cf = jtorch.compile(f, backend=_backend, dynamic=True)
        for n in (3, 5, 70):
            x = _dyadic(n, *dims, seed=n)
            _bitwise(cf(x), f(x))
        assert [k.names for k in _kernels(cf)] == names
