"""Gradients through sparse COO tensors: against torch's (values of a sparse tensor built from
a tensor that requires grad, dense operands, leaf sparse tensors), numerical gradient checks
in float64, and second derivatives of the sparse product OpDefs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from helpers import same
from sparse_util import same_sparse

import jtorch
from jtorch.autograd import gradcheck, gradgradcheck
from jtorch.kernels.defs import sparse as K

pytestmark = pytest.mark.filterwarnings("ignore:Sparse (invariant|CSR)")

RNG = np.random.default_rng(0)
IDX = np.array([[0, 1, 1, 0, 2, 2], [2, 0, 2, 2, 1, 1]])  # (0, 2) and (2, 1) stored twice
VALS = RNG.standard_normal(6)
DENSE = RNG.standard_normal((3, 4))
GRAD = RNG.standard_normal((3, 4))

FNS = {
    "mm": lambda t, s, d: t.mm(s, d),
    "spmm": lambda t, s, d: t.spmm(s, d),
    "sparse.mm": lambda t, s, d: t.sparse.mm(s, d),
    "matmul": lambda t, s, d: s @ d,
    "dense @ sparse": lambda t, s, d: t.mm(d.t(), s),
    "dense.t() @ sparse.t()": lambda t, s, d: t.mm(d.t(), s.t()),
    "addmm": lambda t, s, d: t.addmm(d * 2, s, d, beta=0.3, alpha=2.0),
    "sparse.addmm": lambda t, s, d: t.sparse.addmm(d, s, d),
    "mv": lambda t, s, d: t.mv(s, d[:, 0]),
    "vector @ sparse": lambda t, s, d: d[:, 0] @ s,
    "to_dense": lambda t, s, d: s.to_dense() * d[:, :3],
    "dense + sparse": lambda t, s, d: d[:, :3] + s,
    "dense - sparse": lambda t, s, d: d[:, :3] - 2 * s,
    "sparse @ sparse": lambda t, s, d: t.mm(s, s.t()).to_dense() * d[:, :3],
    "sparse.sum": lambda t, s, d: t.sparse.sum(s) * d,
    "sparse.sum dim": lambda t, s, d: t.sparse.sum(s, 1).to_dense() * d[:, 0],
    "softmax": lambda t, s, d: t.sparse.softmax(s, 1).to_dense() * d[:, :3],
    "log_softmax": lambda t, s, d: t.sparse.log_softmax(s, 0).to_dense() * d[:, :3],
    "transposed product": lambda t, s, d: t.mm(s.t(), d),
    "index_select": lambda t, s, d: t.mm(s.index_select(0, t.tensor([2, 0, 2])), d),
    "cat": lambda t, s, d: t.mm(t.cat([s, s], 1), t.cat([d, d], 0)),
    "sparse + sparse": lambda t, s, d: t.mm(s + s.t(), d),
    "sparse * sparse": lambda t, s, d: (s * s.t()).to_dense() * d[:, :3],
    "sparse * scalar": lambda t, s, d: t.mm(s * 3, d),
    "sparse ** 2": lambda t, s, d: t.mm(s ** 2, d),
}
# torch's backward fails on these (its sparse gradients reach as_strided, expand or
# tanh_backward, which SparseCPU lacks): checked numerically only
TORCH_FAILS = {
    "sparse * dense": lambda t, s, d: t.mm(s * d[:, :3], d),
    "sqrt": lambda t, s, d: t.mm((s * s).sqrt(), d),
    "tanh": lambda t, s, d: t.mm(s.tanh(), d),
    "sum dim keepdim": lambda t, s, d: t.sum(s, 0, keepdim=True).to_dense() * d[0, :3],
}


def _run(lib, fn, coalesced: bool):
    v = lib.tensor(VALS, requires_grad=True)
    d = lib.tensor(DENSE, requires_grad=True)
    s = lib.sparse_coo_tensor(lib.tensor(IDX), v, (3, 3))
    if coalesced:
        s = s.coalesce()
    out = fn(lib, s, d)
    if out.is_sparse:
        out = out.to_dense()
    g = np.resize(GRAD, tuple(out.shape))
    (out * lib.tensor(g)).sum().backward()
    return out.detach(), v.grad, d.grad


@pytest.mark.parametrize("coalesced", [False, True])
@pytest.mark.parametrize("name", sorted(FNS))
def test_gradients_match_torch(name, coalesced):
    """The values' and the dense operand's gradients, through each op (float64)."""
    fn = FNS[name]
    t = _run(torch, fn, coalesced)
    j = _run(jtorch, fn, coalesced)
    for a, b in zip(j, t):
        if b is None:
            assert a is None
        else:
            same(a, b, rtol=1e-12, atol=1e-12)


def _sparse_of(v):
    return jtorch.sparse_coo_tensor(jtorch.tensor(IDX), v, (3, 3))


@pytest.mark.parametrize("name", sorted(FNS) + sorted(TORCH_FAILS))
def test_gradcheck(name):
    """Numerical gradients of the values and the dense operand (float64 central differences)."""
    fn = FNS.get(name) or TORCH_FAILS[name]
    v = jtorch.tensor(VALS, requires_grad=True)
    d = jtorch.tensor(DENSE, requires_grad=True)

    def f(v, d):
        out = fn(jtorch, _sparse_of(v), d)
        return out.to_dense() if out.is_sparse else out

    assert gradcheck(f, (v, d), eps=1e-6, atol=1e-6, rtol=1e-4)


def _csr():
    return jtorch.tensor([0, 2, 2, 5]), jtorch.tensor([0, 3, 1, 2, 3])  # 3x4, an empty row


def test_second_derivatives_of_the_product_opdefs():
    ptr, col = _csr()
    v = jtorch.tensor(RNG.standard_normal(5), requires_grad=True)
    d = jtorch.tensor(RNG.standard_normal((4, 2)), requires_grad=True)
    a = jtorch.tensor(RNG.standard_normal((3, 2)), requires_grad=True)
    assert gradgradcheck(lambda v, d: K.csr_mm_op(ptr, col, v, d), (v, d), eps=1e-6, atol=1e-6)
    assert gradgradcheck(lambda a, d: K.csr_sddmm_op(ptr, col, a, d), (a, d), eps=1e-6, atol=1e-6)


def test_csr_kernels_against_dense_math():
    ptr, col = _csr()
    rows = np.array([0, 0, 2, 2, 2])
    v, d = RNG.standard_normal(5), RNG.standard_normal((4, 2))
    dense = np.zeros((3, 4))
    dense[rows, col.numpy()] = v
    got = K.csr_mm_op(ptr, col, jtorch.tensor(v), jtorch.tensor(d)).numpy()
    np.testing.assert_allclose(got, dense @ d, rtol=1e-12)
    a = RNG.standard_normal((3, 2))
    got = K.csr_sddmm_op(ptr, col, jtorch.tensor(a), jtorch.tensor(d)).numpy()
    np.testing.assert_allclose(got, (a @ d.T)[rows, col.numpy()], rtol=1e-12)


# -- a sparse tensor's own autograd flags ---------------------------------------------------------

def test_built_from_values_that_require_grad_is_not_a_leaf():
    for lib in (torch, jtorch):
        v = lib.tensor(VALS, requires_grad=True)
        s = lib.sparse_coo_tensor(lib.tensor(IDX), v, (3, 3))
        assert s.requires_grad and not s.is_leaf and s.grad_fn is not None
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert s.grad is None
        assert w and "is not a leaf Tensor" in str(w[0].message)


@pytest.mark.parametrize("coalesced", [False, True])
def test_leaf_sparse_gradient_is_sparse_over_its_indices(coalesced):
    """torch.sparse.mm gives a leaf sparse tensor a sparse gradient over its own (coalesced)
    entries: so does jtorch. (torch.mm and dense + sparse give it a dense one in torch;
    jtorch's is sparse and equal to it on the stored entries.)"""
    res = {}
    for lib in (torch, jtorch):
        s = lib.sparse_coo_tensor(lib.tensor(IDX), lib.tensor(VALS), (3, 3))
        s = (s.coalesce() if coalesced else s).requires_grad_()
        assert s.is_leaf and s.requires_grad
        lib.sparse.mm(s, lib.tensor(DENSE)).mul(lib.tensor(GRAD)).sum().backward()
        res[lib.__name__] = s.grad
    same_sparse(res["jtorch"], res["torch"], rtol=1e-12)
    s = jtorch.sparse_coo_tensor(jtorch.tensor(IDX), jtorch.tensor(VALS), (3, 3))
    s = s.coalesce().requires_grad_()
    ts = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(VALS), (3, 3))
    ts = ts.coalesce().requires_grad_()
    jtorch.mm(s, jtorch.tensor(DENSE)).mul(jtorch.tensor(GRAD)).sum().backward()
    torch.mm(ts, torch.tensor(DENSE)).mul(torch.tensor(GRAD)).sum().backward()
    assert s.grad.is_sparse and not ts.grad.is_sparse
    mask = s.grad.coalesce()
    np.testing.assert_allclose(mask.to_dense().numpy(),
                               ts.grad.numpy() * (mask.to_dense().numpy() != 0), rtol=1e-12)


def test_leaf_requires_grad_does_not_touch_the_source_values():
    v = jtorch.tensor(VALS)
    s = jtorch.sparse_coo_tensor(jtorch.tensor(IDX), v, (3, 3)).requires_grad_()
    assert s.requires_grad and not v.requires_grad
    s.to_dense().sum().backward()
    assert s.grad.is_sparse and s.grad._nnz() == 4 and s.grad.is_coalesced()  # 4 positions
    s.grad = None
    assert s.grad is None
    s.requires_grad_(False)
    assert not s.requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        jtorch.sparse_coo_tensor(jtorch.tensor(IDX), jtorch.ones(6, dtype=jtorch.int64),
                                 (3, 3)).requires_grad_()


def test_detach_and_no_grad():
    v = jtorch.tensor(VALS, requires_grad=True)
    s = jtorch.sparse_coo_tensor(jtorch.tensor(IDX), v, (3, 3))
    assert not s.detach().requires_grad and s.detach()._values()._st is s._values()._st
    with jtorch.no_grad():
        out = jtorch.mm(s, jtorch.ones(3, 2, dtype=jtorch.float64))
        assert not out.requires_grad
        assert not jtorch.sparse_coo_tensor(jtorch.tensor(IDX), v, (3, 3)).grad_fn


def test_gradient_through_to_sparse_of_a_dense_tensor():
    """to_sparse's values are gathered from the dense tensor: its gradient is the values'
    gradient at the non-zeros (torch.sparse.mm's masked semantics)."""
    x0 = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    res = {}
    for lib in (torch, jtorch):
        x = lib.tensor(x0, requires_grad=True)
        lib.sparse.mm(x.to_sparse(), lib.tensor(DENSE)).mul(lib.tensor(GRAD[:2])).sum().backward()
        res[lib.__name__] = x.grad
    g = res["torch"].to_dense() if res["torch"].is_sparse else res["torch"]
    same(res["jtorch"], g, rtol=1e-12)
