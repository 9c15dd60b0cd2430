"""Sparse COO tensors against torch: construction, metadata, printing, coalescing, conversions
to and from dense, dtype and device moves, serialization."""

from __future__ import annotations

import copy
import io
import pickle

import numpy as np
import pytest
import torch
from helpers import same
from sparse_util import LIBS, check, rand_sparse, same_sparse, sp

import jtorch

pytestmark = pytest.mark.filterwarnings("ignore:Sparse (invariant|CSR)")

IDX = [[0, 1, 1, 0], [2, 0, 2, 2]]  # (0, 2) stored twice
VALS = [3.0, 4.0, -5.0, 1.0]


def _s(lib, **kw):
    return sp(lib, IDX, VALS, (2, 3), **kw)


# -- construction -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int32", "bool"])
def test_construct_and_convert_each_dtype(dtype):
    check(lambda t: _s(t, dtype=getattr(t, dtype)))
    check(lambda t: _s(t, dtype=getattr(t, dtype)).coalesce())
    check(lambda t: _s(t, dtype=getattr(t, dtype)).to_dense())


def test_is_a_tensor_with_torchs_metadata():
    j, t = _s(jtorch), _s(torch)
    assert isinstance(j, jtorch.Tensor) and j.is_sparse and not jtorch.ones(1).is_sparse
    assert j.layout is jtorch.sparse_coo and str(j.layout) == str(t.layout)
    for f in (lambda x: tuple(x.shape), lambda x: x.size(1), lambda x: x.size(-2), lambda x: x.dim(),
              lambda x: x.ndim, lambda x: x.numel(), lambda x: len(x), lambda x: x.sparse_dim(),
              lambda x: x.dense_dim(), lambda x: x._nnz(), lambda x: x.is_coalesced(),
              lambda x: x.stride(), lambda x: x.is_contiguous(), lambda x: x.element_size(),
              lambda x: x.is_floating_point(), lambda x: x.requires_grad, lambda x: x.is_leaf,
              lambda x: x.type(), lambda x: str(x.device), lambda x: x.is_cpu):
        assert f(j) == f(t)
    same(j.dtype, t.dtype)
    same(j._indices(), t._indices())
    same(j._values(), t._values())


def test_values_are_kept_not_copied():
    for lib in LIBS:
        v = lib.tensor(VALS)
        s = lib.sparse_coo_tensor(lib.tensor(IDX), v, (2, 3))
        v[0] = 100.0
        assert s._values()[0].item() == 100.0


@pytest.mark.parametrize("case", [
    lambda t: t.sparse_coo_tensor(t.tensor([[0, 1], [3, 0]]), t.tensor([1.0, 2.0])),  # size inferred
    lambda t: t.sparse_coo_tensor([[0, 1], [1, 0]], [1, 2]),  # lists, int64 values
    lambda t: t.sparse_coo_tensor([[0, 1], [1, 0]], [1.0, 2]),
    lambda t: t.sparse_coo_tensor(t.zeros(2, 0, dtype=t.int64), t.zeros(0)),  # empty, size (0, 0)
    lambda t: t.sparse_coo_tensor(t.zeros(2, 0, dtype=t.int64), t.zeros(0), (4, 5)),
    lambda t: t.sparse_coo_tensor(t.tensor([[0.0, 1.0]]), t.ones(2), (2,)),  # float indices
    lambda t: t.sparse_coo_tensor(t.tensor([[0, 1]], dtype=t.int32), t.ones(2), (2,)),
    lambda t: t.sparse_coo_tensor([[0, 2, 0]], [[1.0, 2], [3, 4], [5, 6]], (3, 2)),  # hybrid
    lambda t: t.sparse_coo_tensor([[0, 2, 0]], [[1.0, 2], [3, 4], [5, 6]]),
    lambda t: t.sparse_coo_tensor([[0]], [1.0], (3,)).is_coalesced(),
    lambda t: t.sparse_coo_tensor([[0, 1]], [1.0, 2], (3,), is_coalesced=True).is_coalesced(),
    lambda t: t.sparse_coo_tensor([[0, 1]], [1.0, 2], (3,), requires_grad=True),
    lambda t: t.sparse_coo_tensor([[0, 1]], [1.0, 2], (3,), dtype=t.float64),
    # torch's errors
    lambda t: t.sparse_coo_tensor([[0, 1]], [1.0, 2, 3], (3,)),
    lambda t: t.sparse_coo_tensor([[0, 1]], [1.0, 2], (3, 3)),
    lambda t: t.sparse_coo_tensor(t.tensor([0, 1]), [1.0, 2]),
    lambda t: t.sparse_coo_tensor([[0, 1]], t.ones(2, 3), (3, 4)),
    lambda t: t.sparse_coo_tensor([[0, 1]], [1, 2], (3,), requires_grad=True),
    lambda t: t.sparse_coo_tensor([[0, 5]], [1.0, 2], (3,), check_invariants=True),
    lambda t: t.sparse_coo_tensor([[0, -1]], [1.0, 2], (3,), check_invariants=True),
])
def test_constructor_cases(case):
    check(case)


def test_numpy_int32_transposed_edge_list_as_the_gcn_builds_it():
    edges = np.array([[0, 1], [1, 2], [2, 0], [0, 1]], dtype=np.int32)  # one edge twice
    check(lambda t: t.sparse_coo_tensor(edges.T, t.ones(4), (3, 3), dtype=t.int64))
    check(lambda t: t.eye(3) + t.sparse_coo_tensor(edges.T, t.ones(4), (3, 3), dtype=t.int64))


def test_out_of_bounds_indices_always_raise():
    """torch checks only with check_invariants (else undefined behaviour); jtorch always."""
    with pytest.raises(RuntimeError, match="size is inconsistent with indices"):
        jtorch.sparse_coo_tensor([[0, 5]], [1.0, 2.0], (3,))
    with pytest.raises(RuntimeError, match="negative index"):
        jtorch.sparse_coo_tensor([[0, -1]], [1.0, 2.0], (3,))


# -- printing -----------------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    lambda t: _s(t), lambda t: _s(t).coalesce(), lambda t: _s(t, dtype=t.float64),
    lambda t: _s(t, dtype=t.int64), lambda t: _s(t, dtype=t.int32), lambda t: _s(t, dtype=t.bool),
    lambda t: t.zeros(2, 3).to_sparse(), lambda t: t.zeros(2, 3, dtype=t.float64).to_sparse(),
    lambda t: t.ones(2, 3).to_sparse(1), lambda t: t.tensor(3.0).to_sparse(),
    lambda t: _s(t).requires_grad_(), lambda t: t.zeros(2, 2, dtype=t.float64).to_sparse().requires_grad_(),
])
def test_repr_is_torchs(case):
    assert repr(case(jtorch)) == repr(case(torch))
    assert str(case(jtorch)) == str(case(torch))


def test_repr_with_grad_fn_names_its_node():
    v = jtorch.tensor(VALS, requires_grad=True)
    s = jtorch.sparse_coo_tensor(jtorch.tensor(IDX), v, (2, 3))
    assert repr(s).endswith("layout=torch.sparse_coo, grad_fn=<ViewBackward0>)")


# -- coalescing ---------------------------------------------------------------------------------

@pytest.mark.parametrize("shape,nnz,dense", [
    ((5, 7), 30, ()), ((5, 7), 0, ()), ((5, 7), 1, ()), ((4, 3, 5), 40, ()), ((6,), 20, ()),
    ((5, 4), 25, (3,)), ((3, 3), 12, (2, 2)), ((100000, 3), 50, ()),  # a dim far longer than nnz
])
def test_coalesce(shape, nnz, dense):
    """Duplicates sum in another order than torch's (its sort is not stable): 1 ulp apart."""
    check(lambda t: rand_sparse(t, shape, nnz, dense_dims=dense).coalesce(), rtol=1e-6)
    check(lambda t: rand_sparse(t, shape, nnz, dense_dims=dense).to_dense(), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_coalesce_sums_many_duplicates(dtype):
    check(lambda t: rand_sparse(t, (3, 3), 50, dtype=getattr(t, dtype)).coalesce(), rtol=1e-14)


def test_coalesce_of_coalesced_is_self():
    c = _s(jtorch).coalesce()
    assert c.coalesce() is c and c.is_coalesced()


def test_indices_and_values_need_coalesced():
    check(lambda t: _s(t).indices())
    check(lambda t: _s(t).values())
    check(lambda t: _s(t).coalesce().indices())
    check(lambda t: _s(t).coalesce().values())


# -- dense <-> sparse ---------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    lambda t: t.tensor([[0.0, 1.0], [2.0, 0.0]]).to_sparse(),
    lambda t: t.tensor(3.0).to_sparse(), lambda t: t.tensor(0.0).to_sparse(),
    lambda t: t.tensor([0.0, 3.0]).to_sparse(),
    lambda t: t.tensor([[0.0, 1.0], [0.0, 0.0]]).to_sparse(1),
    lambda t: t.arange(8.0).reshape(2, 2, 2).to_sparse(2),
    lambda t: t.arange(8.0).reshape(2, 2, 2).to_sparse(0),
    lambda t: t.tensor([0.0, float("nan"), -0.0, float("inf")]).to_sparse(),
    lambda t: t.tensor([0, 3, 0, -2]).to_sparse(), lambda t: t.tensor([False, True]).to_sparse(),
    lambda t: t.tensor([[0, 1], [2, 0]], dtype=t.int32).to_sparse(),
    lambda t: t.arange(6.0).reshape(2, 3).t().to_sparse(),  # non-contiguous
    lambda t: t.arange(12.0).reshape(3, 4)[:, ::2].to_sparse(),
    lambda t: t.zeros(0, 3).to_sparse(), lambda t: t.zeros(3, 0).to_sparse(1),
    lambda t: t.eye(3).to_sparse_coo(), lambda t: t.eye(3).to_sparse(layout=t.sparse_coo),
    lambda t: t.eye(3).to_sparse().to_sparse(), lambda t: t.eye(3).to_sparse().to_sparse(2),
    lambda t: t.ones(2, 2).to_sparse(3), lambda t: t.ones(2, 2).to_sparse(-1),
    lambda t: t.eye(2).to_sparse().to_sparse(1),
    lambda t: t.diag(t.tensor([1.0, 0.0, 2.0])).to_sparse(),
    lambda t: t.eye(3).to_dense(), lambda t: t.eye(3).to_sparse().to_dense(t.float64),
])
def test_dense_sparse_conversions(case):
    check(case)


def test_to_dense_of_a_dense_tensor_is_itself():
    x = jtorch.ones(2)
    assert x.to_dense() is x


@pytest.mark.parametrize("name", ["coalesce", "indices", "values", "is_coalesced", "_nnz",
                                  "sparse_dim", "dense_dim"])
def test_sparse_methods_of_a_dense_tensor(name):
    check(lambda t: getattr(t.ones(2, 3), name)())


def test_sparse_mask():
    check(lambda t: t.arange(6.0).reshape(2, 3).sparse_mask(_s(t).coalesce()))
    check(lambda t: t.arange(6.0).reshape(2, 3).sparse_mask(_s(t)), message=False)


# -- dtype, device, copies ------------------------------------------------------------------------

@pytest.mark.parametrize("case", [
    lambda t: _s(t).float(), lambda t: _s(t).double(), lambda t: _s(t).long(),
    lambda t: _s(t, dtype=t.int64).float(), lambda t: _s(t).to(t.float64),
    lambda t: _s(t).to("cpu"), lambda t: _s(t).cpu(), lambda t: _s(t).to(t.device("cpu")),
    lambda t: _s(t).clone(), lambda t: _s(t).coalesce().clone(), lambda t: _s(t).detach(),
    lambda t: _s(t).type(t.float64), lambda t: _s(t).to(t.ones(1, dtype=t.float64)),
])
def test_conversions(case):
    check(case)


def test_to_returns_self_when_nothing_changes():
    s = _s(jtorch)
    assert s.to("cpu") is s and s.cpu() is s and s.double() is s and s.to(jtorch.float64) is s


def test_data_reading_raises_torchs_errors():
    for f in (lambda x: x.numpy(), lambda x: x.tolist(), lambda x: x.item(), lambda x: bool(x),
              lambda x: x.data_ptr(), lambda x: x.contiguous(), lambda x: x.nbytes,
              lambda x: x.reshape(6)):
        check(lambda t, f=f: f(_s(t)))
    check(lambda t: t.tensor([[0.0, 2.5]]).to_sparse().sum(0).sum().item())


# -- serialization --------------------------------------------------------------------------------

def test_save_load_round_trip_and_with_torch():
    s = _s(jtorch)
    buf = io.BytesIO()
    jtorch.save({"adj": s, "c": s.coalesce()}, buf)
    buf.seek(0)
    back = jtorch.load(buf)
    same_sparse(back["adj"], _s(torch))
    assert back["c"].is_coalesced()
    buf.seek(0)
    t = torch.load(buf, weights_only=True)
    same_sparse(back["c"], t["c"])
    tb = io.BytesIO()
    torch.save({"a": torch.eye(3).to_sparse(), "h": torch.ones(2, 3).to_sparse(1)}, tb)
    tb.seek(0)
    got = jtorch.load(tb)
    same_sparse(got["a"], torch.eye(3).to_sparse())
    same_sparse(got["h"], torch.ones(2, 3).to_sparse(1))


def test_pickle_and_deepcopy():
    s = _s(jtorch).requires_grad_()
    for c in (pickle.loads(pickle.dumps(s)), copy.deepcopy(s)):
        same_sparse(c, _s(torch))
        assert c.requires_grad and c.is_leaf and c._values() is not s._values()
