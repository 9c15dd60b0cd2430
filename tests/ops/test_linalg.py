"""Matrix products and contractions against torch: values, dtypes, shapes, gradients, errors."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import torch

import jtorch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "autograd"))
from gradutil import compare_grads  # noqa: E402
from helpers import raises_like, same  # noqa: E402

RNG = np.random.default_rng(0)

MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                 ((5, 2, 3), (3, 4)), ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)),
                 ((5, 2, 3), (5, 3, 4)), ((5, 1, 2, 3), (7, 3, 4)), ((4, 2, 3), (1, 3, 4)),
                 ((0, 3), (3, 2)), ((2, 0), (0, 3)), ((0, 2, 3), (3, 4))]


def _pair(shapes, dtype=np.float64):
    arrs = [RNG.standard_normal(s).astype(dtype) for s in shapes]
    return ([jtorch.from_numpy(a.copy()) for a in arrs], [torch.from_numpy(a.copy()) for a in arrs])


def _same(j, t, rtol=1e-6, atol=1e-6):
    assert tuple(j.shape) == tuple(t.shape)
    assert str(j.dtype) == str(t.dtype)
    np.testing.assert_allclose(j.numpy(), t.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("shapes", MATMUL_SHAPES)
def test_matmul_cases(shapes):
    (ja, jb), (ta, tb) = _pair(shapes)
    _same(ja @ jb, ta @ tb)
    _same(jtorch.matmul(ja, jb), torch.matmul(ta, tb))


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32, np.complex64])
def test_matmul_dtypes(dtype):
    a = (RNG.standard_normal((3, 4, 5)) * 5).astype(dtype)
    b = (RNG.standard_normal((5, 2)) * 5).astype(dtype)
    _same(jtorch.from_numpy(a) @ jtorch.from_numpy(b), torch.from_numpy(a) @ torch.from_numpy(b),
          rtol=1e-5, atol=1e-4)


def test_matmul_float16_and_non_contiguous():
    a = RNG.standard_normal((6, 4)).astype(np.float16)
    b = RNG.standard_normal((4, 3)).astype(np.float16)
    _same(jtorch.from_numpy(a) @ jtorch.from_numpy(b), torch.from_numpy(a) @ torch.from_numpy(b),
          rtol=1e-2, atol=1e-2)
    x = RNG.standard_normal((4, 6, 5))
    ja, ta = jtorch.from_numpy(x.copy()), torch.from_numpy(x.copy())
    for f in (lambda t: t.transpose(1, 2) @ t, lambda t: t[:, ::2] @ t[0].T,
              lambda t: t.mT @ t.mT.mT, lambda t: t[1].T @ t[2].flip(1)):
        _same(f(ja), f(ta))


def test_mm_bmm_mv_dot_outer_and_friends():
    (a, b, v, w, c, d), (ta, tb, tv, tw, tc, td) = _pair([(2, 3), (3, 4), (3,), (3,), (5, 2, 3),
                                                          (5, 3, 4)])
    _same(jtorch.mm(a, b), torch.mm(ta, tb))
    _same(a.mm(b), ta.mm(tb))
    _same(jtorch.bmm(c, d), torch.bmm(tc, td))
    _same(jtorch.mv(a, v), torch.mv(ta, tv))
    _same(jtorch.dot(v, w), torch.dot(tv, tw))
    _same(jtorch.vdot(v, w), torch.vdot(tv, tw))
    _same(jtorch.outer(v, w), torch.outer(tv, tw))
    _same(jtorch.ger(v, w), torch.ger(tv, tw))
    _same(jtorch.inner(a, c), torch.inner(ta, tc))
    _same(jtorch.addmm(b[0], a, b, beta=0.5, alpha=2), torch.addmm(tb[0], ta, tb, beta=0.5,
                                                                    alpha=2))
    _same(jtorch.addmv(v[:2], a, w, alpha=3), torch.addmv(tv[:2], ta, tw, alpha=3))
    _same(jtorch.baddbmm(d[:, :2], c, d, beta=2), torch.baddbmm(td[:, :2], tc, td, beta=2))
    _same(jtorch.addbmm(b[:2], c, d), torch.addbmm(tb[:2], tc, td))
    _same(jtorch.addr(a, v[:2], w), torch.addr(ta, tv[:2], tw))
    nan = jtorch.full((2, 4), float("nan"), dtype=jtorch.float64)
    assert not jtorch.isnan(jtorch.addmm(nan, a, b, beta=0)).any()
    _same(jtorch.tensordot(c, d, dims=([0, 2], [0, 1])), torch.tensordot(tc, td,
                                                                        dims=([0, 2], [0, 1])))
    _same(jtorch.tensordot(a, b, dims=1), torch.tensordot(ta, tb, dims=1))
    _same(jtorch.tensordot(a, b, dims=0), torch.tensordot(ta, tb, dims=0))
    _same(jtorch.linalg.multi_dot([v, b, b.T]), torch.linalg.multi_dot([tv, tb, tb.T]))


def test_out_argument():
    (a, b), (ta, tb) = _pair([(2, 3), (3, 4)])
    o = jtorch.empty(2, 4, dtype=jtorch.float64)
    r = jtorch.matmul(a, b, out=o)
    assert r is o
    _same(o, ta @ tb)


ERRORS = [
    (lambda m: m.ones(2, 3) @ m.ones(4, 5), RuntimeError,
     r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x5\)"),
    (lambda m: m.ones(3) @ m.ones(4), RuntimeError,
     r"inconsistent tensor size, expected tensor \[3\] and src \[4\]"),
    (lambda m: m.bmm(m.ones(2, 2, 3), m.ones(2, 4, 5)), RuntimeError,
     r"Expected size for first two dimensions of batch2 tensor to be: \[2, 3\] but got: \[2, 4\]"),
    (lambda m: m.mv(m.ones(2, 3), m.ones(4)), RuntimeError,
     r"size mismatch, got input \(2\), mat \(2x3\), vec \(4\)"),
    (lambda m: m.ones(2, 3) @ m.ones(3, 2, dtype=m.float64), RuntimeError,
     "expected m1 and m2 to have the same dtype, but got: float != double"),
    (lambda m: m.mm(m.ones(3), m.ones(3)), RuntimeError, "self must be a matrix"),
    (lambda m: m.bmm(m.ones(2, 3), m.ones(2, 3)), RuntimeError, "batch1 must be a 3D tensor"),
    (lambda m: m.dot(m.ones(3), m.ones(3, 1)), RuntimeError,
     "1D tensors expected, but got 1D and 2D tensors"),
    (lambda m: m.ones(3, dtype=m.bool) @ m.ones(3, dtype=m.bool), NotImplementedError,
     "\"dot\" not implemented for 'Bool'"),
    (lambda m: m.matmul(m.ones(()), m.ones(3)), RuntimeError,
     "both arguments to matmul need to be at least 1D, but they are 0D and 1D"),
    (lambda m: m.ones(2, 2, 3) @ m.ones(3, 3, 2), RuntimeError,
     "The size of tensor a"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors_match_torch(case):
    fn, exc, msg = ERRORS[case]
    for m in (jtorch, torch):
        with pytest.raises(exc, match=msg):
            fn(m)


@pytest.mark.parametrize("shapes", [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)),
                                    ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)), ((3,), (5, 3, 4)),
                                    ((2, 3), (5, 3, 4)), ((5, 1, 2, 3), (7, 3, 4))])
def test_matmul_gradients(shapes):
    (a, b), _ = _pair(shapes)
    compare_grads(lambda m, x, y: m.matmul(x, y), a.requires_grad_(), b.requires_grad_())


def test_product_gradients_and_second_order():
    (a, b, v, c, d), _ = _pair([(2, 3), (3, 4), (3,), (4, 2, 3), (4, 3, 2)])
    for t in (a, b, v, c, d):
        t.requires_grad_()
    compare_grads(lambda m, x, y, z: m.addmm(z.sum(), x, y, beta=0.3, alpha=2) * 2, a, b,
                  b.detach().clone().requires_grad_())
    compare_grads(lambda m, x, y: m.bmm(x, y).tanh(), c, d)
    compare_grads(lambda m, x, y: m.outer(x, y.sum(0)) * m.mv(
        x.unsqueeze(0).T @ y.sum(0, True), y.sum(0)).unsqueeze(1), v, b)
    compare_grads(lambda m, x, y: m.tensordot(x, y, dims=([0, 2], [0, 1])), c, d)
    for m in (jtorch, torch):
        x = m.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=m.float64, requires_grad=True)
        y = ((x @ x) ** 2).sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x)
        if m is jtorch:
            jres = (g.detach().numpy(), gg.numpy())
        else:
            np.testing.assert_allclose(jres[0], g.detach().numpy())
            np.testing.assert_allclose(jres[1], gg.numpy())
    assert type((a @ b).grad_fn).__name__ == "MmBackward0"


EINSUM = [("ij,jk", [(2, 3), (3, 4)]), ("ij,jk->", [(2, 3), (3, 4)]), ("i,i", [(2,), (1,)]),
          ("ba,b", [(2, 3), (2,)]), ("...ij,...jk", [(5, 1, 2, 3), (4, 3, 2)]), ("bij", [(2, 3, 4)]),
          ("iI", [(2, 3)]), ("i,j", [(2,), (3,)]), ("ii->i", [(3, 3)]), ("ii", [(3, 3)]),
          ("iij->j", [(2, 2, 3)]), ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
          ("ij,jk,kl->il", [(2, 3), (3, 40), (40, 2)]),
          ("abc,cd,de,ea->b", [(2, 3, 4), (4, 5), (5, 6), (6, 2)]),
          ("...,...->...", [(2, 3), (3,)]), ("i,i,i->", [(4,), (4,), (4,)]), ("ij->ji", [(2, 3)]),
          ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]), (" i j , j k -> i k ", [(2, 3), (3, 1)])]


@pytest.mark.parametrize("eq,shapes", EINSUM)
def test_einsum_values_and_gradients(eq, shapes):
    js, ts = _pair(shapes)
    _same(jtorch.einsum(eq, *js), torch.einsum(eq, *ts), rtol=1e-10, atol=1e-12)
    compare_grads(lambda m, *xs: m.einsum(eq, *xs), *[x.requires_grad_() for x in js])


def test_einsum_list_form_kron_trace():
    (a, b), (ta, tb) = _pair([(2, 3), (4, 1, 2)])
    _same(jtorch.einsum("i,j", [a[0], a[1]]), torch.einsum("i,j", [ta[0], ta[1]]))
    _same(jtorch.kron(a, b), torch.kron(ta, tb))
    _same(jtorch.trace(jtorch.arange(9).reshape(3, 3)), torch.trace(torch.arange(9).reshape(3, 3)))
    compare_grads(lambda m, x, y: m.kron(x, y), a.requires_grad_(), b.requires_grad_())
    compare_grads(lambda m, x: m.trace(x), a)


EINSUM_ERRORS = [
    (lambda m: m.einsum("ij,jk->", m.ones(2, 3), m.ones(4, 4)),
     "subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"),
    (lambda m: m.einsum("ij->", m.ones(2)), "the number of subscripts in the equation \\(2\\) does "
                                            "not match the number of dimensions \\(1\\)"),
    (lambda m: m.einsum("ij,j", m.ones(2, 3), m.ones(3, dtype=m.float64)),
     "expected scalar type Float but found Double"),
    (lambda m: m.einsum("ii", m.ones(2, 3)), "subscript i is repeated for operand 0 but the sizes "
                                             "don't match, 3 != 2"),
    (lambda m: m.einsum("i->ii", m.ones(2)), "output subscript i appears more than once"),
]


@pytest.mark.parametrize("case", range(len(EINSUM_ERRORS)))
def test_einsum_errors(case):
    fn, msg = EINSUM_ERRORS[case]
    for m in (jtorch, torch):
        with pytest.raises(RuntimeError, match=msg):
            fn(m)


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf")])
@pytest.mark.parametrize("dim,keepdim", [((-2, -1), False), ((0, 2), True)])
def test_matrix_norm_values_and_gradients(ord, dim, keepdim):
    (a,), _ = _pair([(2, 3, 4)])
    compare_grads(lambda m, x: m.linalg.matrix_norm(x, ord, dim, keepdim), a.requires_grad_(),
                  rtol=1e-8, atol=1e-10)


def test_linalg_norm_dispatch_and_errors():
    (a, v), (ta, tv) = _pair([(3, 4), (5,)])
    _same(jtorch.linalg.norm(a), torch.linalg.norm(ta))
    _same(jtorch.linalg.norm(a, 3, dim=1), torch.linalg.norm(ta, 3, dim=1))
    _same(jtorch.linalg.norm(a, "nuc"), torch.linalg.norm(ta, "nuc"))
    _same(jtorch.linalg.norm(v, 1), torch.linalg.norm(tv, 1))
    _same(jtorch.linalg.svdvals(a), torch.linalg.svdvals(ta))
    for m in (jtorch, torch):
        with pytest.raises(RuntimeError, match="linalg.matrix_norm: Order 3 not supported."):
            m.linalg.matrix_norm(m.ones(3, 4), 3)
        with pytest.raises(RuntimeError, match="Expected a floating point or complex tensor as "
                                               "input. Got Long"):
            m.linalg.matrix_norm(m.ones(3, 4, dtype=m.long))
        with pytest.raises(RuntimeError, match="If dim is not specified but ord is, the input "
                                               "must be 1D or 2D. Got 3D."):
            m.linalg.norm(m.ones(2, 2, 2), 2)


ADDMM_INPUTS = [(4,), (1, 4), (2, 1), (2, 4), (), (1,)]


@pytest.mark.parametrize("inp", ADDMM_INPUTS)
@pytest.mark.parametrize("scales", [(1, 1), (0.5, 2), (0, 1), (1, 0), (0, 0), (-1, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.complex64])
def test_addmm_fused_against_torch(inp, scales, dtype):
    beta, alpha = scales
    (c, a, b), (tc, ta, tb) = _pair([inp, (2, 3), (3, 4)], dtype)
    if dtype == np.int64:
        (c, a, b), (tc, ta, tb) = ([x.round().long() * 3 for x in grp] for grp in
                                   ((c, a, b), (tc, ta, tb)))
    tol = 1e-5 if dtype in (np.float32, np.complex64) else 1e-12
    _same(jtorch.addmm(c, a, b, beta=beta, alpha=alpha),
          torch.addmm(tc, ta, tb, beta=beta, alpha=alpha), rtol=tol, atol=tol)
    # a transposed (F-ordered) operand, and the method form
    at, tat = a.T.contiguous().T, ta.T.contiguous().T
    _same(c.expand(2, 4).addmm(at, b, beta=beta, alpha=alpha),
          tc.expand(2, 4).addmm(tat, tb, beta=beta, alpha=alpha), rtol=tol, atol=tol)


def test_addmm_fused_layouts_and_edges():
    (c, a, w), (tc, ta, tw) = _pair([(5,), (7, 3), (5, 3)], np.float32)
    _same(jtorch.addmm(c, a, w.t()), torch.addmm(tc, ta, tw.t()), rtol=1e-5)
    _same(jtorch.addmm(c, a.t().contiguous().t(), w.t()), torch.addmm(tc, ta, tw.t()), rtol=1e-5)
    _same(jtorch.addmm(c.flip(0)[None], a[::2], w.t()), torch.addmm(tc.flip(0)[None], ta[::2],
                                                                      tw.t()), rtol=1e-5)
    # beta == 0 ignores nan in input; alpha == 0 ignores inf in the product (BLAS semantics)
    nan, inf = jtorch.full((5,), float("nan")), jtorch.full((7, 3), float("inf"))
    tnan, tinf = torch.full((5,), float("nan")), torch.full((7, 3), float("inf"))
    _same(jtorch.addmm(nan, a, w.t(), beta=0), torch.addmm(tnan, ta, tw.t(), beta=0), rtol=1e-5)
    _same(jtorch.addmm(c, inf, w.t(), alpha=0), torch.addmm(tc, tinf, tw.t(), alpha=0))
    # zero-size and float16
    _same(jtorch.addmm(c, a[:0], w.t()), torch.addmm(tc, ta[:0], tw.t()))
    _same(jtorch.addmm(c, a[:, :0], w[:, :0].t()), torch.addmm(tc, ta[:, :0], tw[:, :0].t()))
    h = [x.half() for x in (c, a, w)]
    th = [x.half() for x in (tc, ta, tw)]
    _same(jtorch.addmm(h[0], h[1], h[2].t()), torch.addmm(th[0], th[1], th[2].t()), rtol=2e-3,
          atol=2e-3)
    # big enough for the parallel epilogue
    (c, a, w), (tc, ta, tw) = _pair([(300,), (400, 8), (300, 8)], np.float32)
    _same(jtorch.addmm(c, a, w.t()), torch.addmm(tc, ta, tw.t()), rtol=1e-5, atol=1e-5)
    _same(jtorch.addmm(c[None], a, w.t(), beta=2), torch.addmm(tc[None], ta, tw.t(), beta=2),
          rtol=1e-5, atol=1e-5)


ADDMM_ERRORS = [
    (lambda m: m.addmm(m.zeros(3), m.ones(3), m.ones(3, 3)), RuntimeError,
     "mat1 must be a matrix, got 1-D tensor"),
    (lambda m: m.addmm(m.zeros(3), m.ones(2, 3), m.ones(3)), RuntimeError,
     "mat2 must be a matrix, got 1-D tensor"),
    (lambda m: m.addmm(m.zeros(3), m.ones(2, 3), m.ones(4, 3)), RuntimeError,
     r"mat1 and mat2 shapes cannot be multiplied \(2x3 and 4x3\)"),
    (lambda m: m.addmm(m.zeros(4), m.ones(2, 3), m.ones(3, 3)), RuntimeError,
     r"The expanded size of the tensor \(3\) must match the existing size \(4\) at non-singleton "
     r"dimension 1.  Target sizes: \[2, 3\].  Tensor sizes: \[4\]"),
    (lambda m: m.addmm(m.zeros(2, 2, 3), m.ones(2, 3), m.ones(3, 3)), RuntimeError,
     r"the number of sizes provided \(2\) must be greater or equal to the number of dimensions"),
    (lambda m: m.addmm(m.zeros(3, dtype=m.float64), m.ones(2, 3), m.ones(3, 3)), RuntimeError,
     "self and mat2 must have the same dtype, but got Double and Float"),
    (lambda m: m.addmm(m.zeros(3), m.ones(2, 3, dtype=m.float64), m.ones(3, 3)), RuntimeError,
     "mat1 and mat2 must have the same dtype, but got Double and Float"),
    (lambda m: m.nn.functional.linear(m.ones(2, 3), m.ones(4, 3, dtype=m.float64), m.zeros(4)),
     RuntimeError, "self and mat2 must have the same dtype, but got Float and Double"),
    (lambda m: m.addmm(m.zeros(3, dtype=m.bool), m.ones(2, 3, dtype=m.bool),
                       m.ones(3, 3, dtype=m.bool)), NotImplementedError,
     "\"addmm_impl_cpu_\" not implemented for 'Bool'"),
]


@pytest.mark.parametrize("case", range(len(ADDMM_ERRORS)))
def test_addmm_errors_match_torch(case):
    fn, exc, msg = ADDMM_ERRORS[case]
    for m in (jtorch, torch):
        with pytest.raises(exc, match=msg):
            fn(m)


@pytest.mark.parametrize("inp", [(4,), (2, 1), (2, 4), ()])
def test_addmm_gradients_and_grad_fn(inp):
    (c, a, b), _ = _pair([inp, (2, 3), (4, 3)])
    for t in (c, a, b):
        t.requires_grad_()
    compare_grads(lambda m, z, x, y: m.addmm(z, x, y.t(), beta=0.7, alpha=-2).sin(), c, a, b)
    compare_grads(lambda m, z, x, y: m.nn.functional.linear(x, y, z.expand(4) if z.dim() == 0
                                                            else z.sum(0)).exp(), c, a, b)
    assert type(jtorch.addmm(c, a, b.t()).grad_fn).__name__ == "AddmmBackward0"
    x3 = jtorch.ones(5, 2, 3, dtype=jtorch.float64)
    assert type(jtorch.nn.functional.linear(x3, b, c.sum().expand(4)).grad_fn).__name__ == \
        "ViewBackward0"
    # the weight's gradient of linear arrives contiguous (computed in the weight's layout)
    jtorch.nn.functional.linear(a, b, None).sum().backward()
    assert b.grad.is_contiguous()


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_bmm_batch_split_over_threads(ta, tb, monkeypatch):
    """A batch large enough (>= 4M multiply-adds) runs one product per thread with BLAS serial
    in each: every operand layout (a transposed one reaches BLAS as its transpose flag)."""
    from jtorch.kernels.cpu import matmul as mk

    monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 1 << 17)  # (the batch: 4 x 1.3M MACs)

    ran = []
    real = mk.gemm_par
    monkeypatch.setattr(mk, "gemm_par", lambda *a: (ran.append(a[3:]), real(*a)))
    shapes = [(4, 128, 64) if ta else (4, 64, 128), (4, 160, 128) if tb else (4, 128, 160)]
    (a, b), (t_a, t_b) = _pair(shapes, np.float32)
    if ta:
        a, t_a = a.mT, t_a.mT
    if tb:
        b, t_b = b.mT, t_b.mT
    _same(jtorch.bmm(a, b), torch.bmm(t_a, t_b), rtol=1e-4, atol=1e-4)
    _same(a @ b, t_a @ t_b, rtol=1e-4, atol=1e-4)
    assert ran and set(ran) == {(ta, tb)}


@pytest.mark.parametrize("call", [
    lambda m: m.addbmm(m.ones(2, 3), m.ones(2, 2, 4), m.ones(3, 4, 3)),
    lambda m: m.addbmm(m.ones(2, 3), m.ones(2, 2, 4), m.ones(2, 5, 3)),
    lambda m: m.nn.functional.bilinear(m.ones(2), m.ones(()), m.ones(1, 2, 1)),
    lambda m: m.nn.functional.bilinear(m.ones(()), m.ones(()), m.ones(1, 1, 1)),
    lambda m: m.chain_matmul(),
    lambda m: m.chain_matmul(m.ones(3)),
])
def test_linalg_argument_errors_match_torch(call):
    raises_like(lambda: call(jtorch), lambda: call(torch))


@pytest.mark.filterwarnings("ignore:torch.chain_matmul is deprecated")
def test_chain_matmul_of_one_matrix_is_a_copy():
    a = jtorch.arange(6.0).reshape(2, 3)
    r = jtorch.chain_matmul(a)
    assert r is not a and r.data_ptr() != a.data_ptr()
    same(r, torch.chain_matmul(torch.arange(6.0).reshape(2, 3)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("grad", [False, True])
def test_matmul_of_strided_heads_reads_operands_in_place(dtype, grad):
    """Attention's products: heads split off one projection and transposed (batch dims that
    do not merge) are multiplied in their own strides; values and gradients against torch
    in float64, the grad_fn as torch's."""
    x = RNG.standard_normal((4, 5, 3 * 12)).astype(dtype)
    res = []
    for lib in (torch, jtorch):
        t = lib.tensor(x.astype(np.float64) if lib is torch else x, requires_grad=grad)
        q, k, v = t.split(12, dim=2)
        q, k, v = (u.view(4, 5, 3, 4).transpose(1, 2) for u in (q, k, v))
        att = q @ k.transpose(-2, -1)
        y = att.softmax(-1) @ v
        assert not grad or type(att.grad_fn).__name__ == "UnsafeViewBackward0"
        out = [att.detach().numpy(), y.detach().numpy()]
        if grad:
            (y * y).sum().backward()
            out.append(t.grad.numpy())
        res.append(out)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("shapes", [((2, 3, 4, 5), (2, 3, 5, 6)), ((2, 1, 4, 5), (1, 3, 5, 6)),
                                    ((2, 2, 3, 4, 5), (2, 2, 3, 5, 6)), ((0, 3, 4, 5), (0, 3, 5, 6)),
                                    ((2, 3, 4, 0), (2, 3, 0, 6))])
def test_batched_matmul_layouts_and_edges(shapes):
    """Each operand contiguous, transposed (an mT of a contiguous batch), or with its first two
    dims swapped (batch strides that do not merge: read in place for 4-D, copied beyond)."""
    (ja, jb), (ta, tb) = _pair(shapes)
    for fa in (lambda x: x, lambda x: x.mT.contiguous().mT, lambda x: x.transpose(0, 1).contiguous().transpose(0, 1)):
        a, b = fa(ja), fa(jb)
        _same(a @ b, fa(ta) @ fa(tb), rtol=1e-12, atol=1e-12)
    if 0 not in shapes[0] + shapes[1]:
        compare_grads(lambda m, x, y: m.matmul(x, y), ja.requires_grad_(), jb.requires_grad_())
    ij = jtorch.arange(24).reshape(2, 1, 3, 4)  # integer products: the compiled loop
    same(ij @ ij.mT, torch.arange(24).reshape(2, 1, 3, 4) @ torch.arange(24).reshape(2, 1, 3, 4).mT)
    h = jtorch.ones(2, 2, 3, 4, dtype=jtorch.float16)
    same(h @ h.mT, torch.ones(2, 2, 3, 4, dtype=torch.float16) @ torch.ones(2, 2, 3, 4, dtype=torch.float16).mT)


def test_einsum_operand_count_errors_are_runtime_errors():
    for eq, ops in (("...i,...i->...", (jtorch.randn(2, 3),)),
                    ("ij->i", (jtorch.randn(2, 3), jtorch.randn(2)))):
        with pytest.raises(RuntimeError, match="operands were provided"):
            jtorch.einsum(eq, *ops)
        with pytest.raises(RuntimeError, match="operands were provided"):
            torch.einsum(eq, *(torch.from_numpy(o.numpy()) for o in ops))
