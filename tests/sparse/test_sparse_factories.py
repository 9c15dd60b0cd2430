"""torch.sparse.spdiags, check_sparse_tensor_invariants and as_sparse_gradcheck against
torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch


@pytest.mark.parametrize(("dshape", "offsets", "shape"), [
    ((3, 3), [0, 1, -2], (3, 4)), ((3, 3), [0, 1, -2], (3, 3)), ((1, 5), [1], (3, 3)),
    ((2, 6), [3, -3], (5, 5)), ((0, 3), [], (3, 3)), ((2, 4), [-1, 2], (4, 6)),
])
def test_spdiags_places_torchs_entries_in_torchs_order(dshape, offsets, shape):
    d = np.arange(np.prod(dshape), dtype=np.float32).reshape(dshape)
    want = torch.sparse.spdiags(torch.from_numpy(d), torch.tensor(offsets, dtype=torch.long), shape)
    got = jtorch.sparse.spdiags(jtorch.from_numpy(d), jtorch.tensor(offsets, dtype=jtorch.int64),
                                shape)
    assert got._indices().tolist() == want._indices().tolist()
    assert got._values().tolist() == want._values().tolist()
    assert got.is_coalesced() == want.is_coalesced()
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.to_dense().numpy(), want.to_dense().numpy())


def test_spdiags_of_a_vector_and_a_scalar_offset():
    want = torch.sparse.spdiags(torch.arange(3.0), torch.tensor(1), (3, 3)).to_dense()
    got = jtorch.sparse.spdiags(jtorch.arange(3.0), jtorch.tensor(1), (3, 3)).to_dense()
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("call", [
    lambda L: L.sparse.spdiags(L.ones(3, 3), L.tensor([0, 1, 1]), (3, 3)),
    lambda L: L.sparse.spdiags(L.ones(3, 3), L.tensor([0, 1, 2.0]), (3, 3)),
    lambda L: L.sparse.spdiags(L.ones(3, 3), L.tensor([0, 1, 2], dtype=L.int32), (3, 3)),
    lambda L: L.sparse.spdiags(L.ones(3, 3), L.tensor([0, 1, 2]), (3, 3), layout=L.strided),
    lambda L: L.sparse.spdiags(L.ones(2, 3), L.tensor([0, 1, 2]), (3, 3)),
    lambda L: L.sparse.spdiags(L.ones(3, 3), L.tensor([[0, 1, 2]]), (3, 3)),
    lambda L: L.sparse.spdiags(L.ones(3, 3, 3), L.tensor([0, 1, 2]), (3, 3)),
    lambda L: L.sparse.spdiags(L.ones(3, 3), L.tensor([0, 1, 2]), (3, 3, 3)),
])
def test_spdiags_errors_are_torchs(call):
    with pytest.raises(RuntimeError) as want:
        call(torch)
    with pytest.raises(RuntimeError) as got:
        call(jtorch)
    assert str(got.value) == str(want.value)


def test_spdiags_values_have_no_derivative_as_in_torch():
    x = jtorch.ones(3, 3, requires_grad=True)
    s = jtorch.sparse.spdiags(x, jtorch.tensor([0, 1, -2]), (3, 3))
    assert s.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::_spdiags is not implemented"):
        s.to_dense().sum().backward()


def test_check_sparse_tensor_invariants_switches_like_torchs():
    flag = jtorch.sparse.check_sparse_tensor_invariants
    assert not flag.is_enabled()
    with flag():
        assert flag.is_enabled()
        with flag(False):
            assert not flag.is_enabled()
        assert flag.is_enabled()
    assert not flag.is_enabled()
    flag.enable()
    assert flag.is_enabled()
    flag.disable()
    assert flag(True)(flag.is_enabled)() and not flag.is_enabled()
    manager = flag()
    with manager, pytest.raises(RuntimeError, match="already activated"), manager:
        pass


def _sparse(L):
    return L.tensor([[0.0, 1.0], [2.0, 0.0]], dtype=L.float64).to_sparse().requires_grad_()


@pytest.mark.parametrize("masked", [False, True])
def test_as_sparse_gradcheck_checks_functions_of_and_to_sparse_tensors(masked):
    check = jtorch.sparse.as_sparse_gradcheck(jtorch.autograd.gradcheck)
    x = _sparse(jtorch)
    m = jtorch.rand(2, 3, dtype=jtorch.float64, requires_grad=True)
    assert check(lambda s: jtorch.sparse.sum(s * 3), x, masked=masked)
    assert check(lambda s: s * 2, x, masked=masked)
    assert check(lambda s, w: jtorch.sparse.mm(s, w), (x, m), masked=masked)


def test_as_sparse_gradcheck_finds_a_wrong_derivative():
    class Wrong(jtorch.autograd.Function):
        @staticmethod
        def forward(ctx, v):
            return v * 2

        @staticmethod
        def backward(ctx, g):
            return g * 3

    def f(s):
        return jtorch.sparse_coo_tensor(s._indices(), Wrong.apply(s._values()), s.shape)

    check = jtorch.sparse.as_sparse_gradcheck(jtorch.autograd.gradcheck)
    with pytest.raises(jtorch.autograd.gradcheck.GradcheckError):
        check(f, _sparse(jtorch))


@pytest.mark.parametrize("call", [
    lambda L, i, v: L.sparse.FloatTensor(i, v, (2, 3)),
    lambda L, i, v: L.sparse.FloatTensor(i, v),
    lambda L, i, v: L.sparse.FloatTensor(i, v, L.Size([2, 2])),
    lambda L, i, v: L.sparse.FloatTensor(i, v.double(), (2, 2)),  # the values' dtype stays
    lambda L, i, v: L.sparse.DoubleTensor(i, v, (2, 2)),
    lambda L, i, v: L.sparse.LongTensor(i, L.tensor([1, 2]), (2, 2)),
    lambda L, i, v: L.sparse.FloatTensor(2, 3),
    lambda L, i, v: L.sparse.HalfTensor(),
])
def test_legacy_sparse_constructors_are_torchs(call):
    """pygcn-style code builds its adjacency with torch.sparse.FloatTensor(i, v, shape)."""
    got, want = (call(L, L.tensor([[0, 1], [1, 0]]), L.tensor([1.0, 2.0]))
                 for L in (jtorch, torch))
    assert str(got.dtype) == str(want.dtype)
    assert tuple(got.shape) == tuple(want.shape) and got._nnz() == want._nnz()
    assert got.is_coalesced() == want.is_coalesced()
    np.testing.assert_array_equal(got.to_dense().numpy(), want.to_dense().numpy())
    assert got.type() == want.type()


def test_legacy_sparse_types_answer_isinstance_as_torchs():
    for L in (jtorch, torch):
        x = L.sparse.FloatTensor(L.tensor([[0], [1]]), L.tensor([1.0]), (2, 2))
        assert isinstance(x, L.sparse.FloatTensor) and not isinstance(x, L.FloatTensor)
        assert not isinstance(L.zeros(2), L.sparse.FloatTensor)
        assert not isinstance(x, L.sparse.DoubleTensor)
        assert repr(L.sparse.FloatTensor) == "<class 'torch.sparse.FloatTensor'>"
        with pytest.raises(TypeError):
            L.sparse.FloatTensor(L.zeros(2, 2))
