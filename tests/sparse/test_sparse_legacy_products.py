"""torch.smm, hspmm, sspaddmm (saddmm), dsmm and Tensor.smm/sspaddmm against torch: entries,
their order, sparse/dense dims, coalesced flags, errors and (absent) derivatives."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch


def _operands(L, dtype="float32"):
    s = L.sparse_coo_tensor(L.tensor([[0, 0, 2, 0], [1, 2, 0, 1]]), L.tensor([1.0, 2.0, 3.0, 4.0]),
                            (3, 3)).to(getattr(L, dtype))
    d = L.arange(6.0).reshape(3, 2).to(getattr(L, dtype))
    extra = L.sparse_coo_tensor([[1, 0], [1, 0]], [5.0, -1.0], (3, 2)).to(getattr(L, dtype))
    return s, d, extra


def _describe(r):
    if r.is_sparse:
        return ("sparse", tuple(r.shape), r.sparse_dim(), r.dense_dim(), r.is_coalesced(),
                r._indices().tolist(), r._values().tolist(), str(r.dtype).split(".")[-1])
    return ("dense", r.tolist(), str(r.dtype).split(".")[-1])


_CALLS = {
    "smm": lambda L, s, d, e: L.smm(s, d),
    "hspmm": lambda L, s, d, e: L.hspmm(s, d),
    "dsmm": lambda L, s, d, e: L.dsmm(s, d),
    "sspaddmm": lambda L, s, d, e: L.sspaddmm(e, s, d, beta=2, alpha=0.5),
    "saddmm": lambda L, s, d, e: L.saddmm(e, s, d),
    "method_smm": lambda L, s, d, e: s.smm(d),
    "method_sspaddmm": lambda L, s, d, e: e.sspaddmm(s, d, alpha=3),
    "empty_smm": lambda L, s, d, e: L.smm(
        L.sparse_coo_tensor(L.zeros(2, 0, dtype=L.long), L.zeros(0, dtype=d.dtype), (3, 3)), d),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(_CALLS))
def test_legacy_sparse_products_are_torchs(name, dtype):
    want = _describe(_CALLS[name](torch, *_operands(torch, dtype)))
    got = _describe(_CALLS[name](jtorch, *_operands(jtorch, dtype)))
    assert got == want


@pytest.mark.parametrize("call", [
    lambda L, s, d: L.smm(s, L.ones(2, 2)),
    lambda L, s, d: L.hspmm(s, L.ones(2, 2)),
    lambda L, s, d: L.smm(s, d.to_sparse()),
    lambda L, s, d: L.smm(s.to_dense(), d),
    lambda L, s, d: L.smm(s, d.double()),
    lambda L, s, d: L.hspmm(s, d.double()),
    lambda L, s, d: L.sspaddmm(s.double(), s, d),
    lambda L, s, d: L.sspaddmm(L.sparse_coo_tensor([[0], [1]], [1.0], (4, 2)), s, d),
    lambda L, s, d: L.sspaddmm(L.sparse_coo_tensor([[0], [1]], [1.0], (3, 2)).double(), s, d),
])
def test_legacy_sparse_product_errors_are_torchs(call):
    with pytest.raises(RuntimeError) as want:
        call(torch, *_operands(torch)[:2])
    with pytest.raises(RuntimeError) as got:
        call(jtorch, *_operands(jtorch)[:2])
    assert str(got.value) == str(want.value)


def test_sspaddmm_of_a_dense_input_raises():
    s, d, _ = _operands(jtorch)
    with pytest.raises(RuntimeError, match="can only be called on sparse tensors"):
        jtorch.sspaddmm(jtorch.ones(3, 2), s, d)


@pytest.mark.parametrize(("name", "which"), [("smm", 0), ("smm", 1), ("hspmm", 1),
                                             ("sspaddmm", 0)])
def test_legacy_sparse_products_have_no_derivative_as_in_torch(name, which):
    s, d, e = _operands(jtorch)
    (s, d)[which].requires_grad_()
    r = _CALLS[name](jtorch, s, d, e)
    assert r.requires_grad
    op = "hspmm" if name == "hspmm" else "sspaddmm"
    with pytest.raises(RuntimeError, match=f"derivative for aten::{op} is not implemented"):
        r.to_dense().sum().backward()


def test_dsmm_is_mm_with_its_gradient():
    s, d, _ = _operands(jtorch, "float64")
    d.requires_grad_()
    jtorch.dsmm(s, d).sum().backward()
    np.testing.assert_allclose(d.grad.numpy(), s.to_dense().numpy().T @ np.ones((3, 2)))
