"""Operations on sparse COO tensors against torch: products, sums, pointwise ops, shape ops,
and torch's errors for what its SparseCPU backend does not run."""

from __future__ import annotations

import numpy as np
import pytest
from sparse_util import check, rand_sparse, sp

pytestmark = pytest.mark.filterwarnings("ignore:Sparse (invariant|CSR)")

IDX = [[0, 1, 1, 0, 2], [2, 0, 2, 2, 1]]  # (0, 2) stored twice
VALS = [3.0, 4.0, -5.0, 1.0, 0.5]


def _s(t, dtype=None, coalesced=False):
    s = sp(t, IDX, VALS, (3, 3), dtype=dtype if dtype is not None else t.float32)
    return s.coalesce() if coalesced else s


def _d(t, *shape, dtype=None, seed=1):
    a = np.random.default_rng(seed).standard_normal(shape)
    d = dtype if dtype is not None else t.float32
    return t.tensor(np.round(a * 3) if d in (t.int64, t.int32) else a, dtype=d)


# -- products -----------------------------------------------------------------------------------

DTYPES = ["float32", "float64", "int64"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("coalesced", [False, True])
@pytest.mark.parametrize("case", [
    lambda t, s, d: t.mm(s, d(3, 4)), lambda t, s, d: t.spmm(s, d(3, 4)),
    lambda t, s, d: t.sparse.mm(s, d(3, 4)), lambda t, s, d: s @ d(3, 4), lambda t, s, d: s.mm(d(3, 4)),
    lambda t, s, d: t.matmul(s, d(3, 4)), lambda t, s, d: t.mm(d(4, 3), s), lambda t, s, d: d(4, 3) @ s,
    lambda t, s, d: t.spmm(d(4, 3), s), lambda t, s, d: t.sparse.mm(d(4, 3), s),
    lambda t, s, d: t.mm(s, d(4, 3).t()), lambda t, s, d: t.mm(s, d(3, 8)[:, ::2]),  # non-contiguous
    lambda t, s, d: t.mm(d(3, 4).t(), s), lambda t, s, d: t.mm(s, d(3, 0)), lambda t, s, d: t.mm(d(0, 3), s),
    lambda t, s, d: t.mv(s, d(3)), lambda t, s, d: s @ d(3), lambda t, s, d: d(3) @ s,
    lambda t, s, d: t.matmul(s, d(6)[::2]),
    lambda t, s, d: t.mm(s, s.t()), lambda t, s, d: t.sparse.mm(s, s), lambda t, s, d: s @ s.t(),
    lambda t, s, d: t.addmm(d(3, 4), s, d(3, 4)), lambda t, s, d: t.addmm(d(4), s, d(3, 4)),
    lambda t, s, d: t.sparse.addmm(d(3, 4), s, d(3, 4)),
    lambda t, s, d: t.addmm(d(3, 4), s, d(3, 4), beta=2, alpha=3),
    lambda t, s, d: t.addmm(d(3, 4), s, d(3, 4), beta=0),
])
def test_products(case, coalesced, dtype):
    def run(t):
        dt = getattr(t, dtype)
        return case(t, _s(t, dt, coalesced), lambda *shape: _d(t, *shape, dtype=dt))

    check(run, rtol=1e-6 if dtype == "float32" else 1e-14)


@pytest.mark.parametrize("case", [
    lambda t: t.mm(t.zeros(3, 3).to_sparse(), t.ones(3, 2)),  # 0 nnz
    lambda t: t.mm(t.ones(2, 3), t.zeros(3, 3).to_sparse()),
    lambda t: t.mm(t.zeros(3, 3).to_sparse(), t.zeros(3, 3).to_sparse()),
    lambda t: t.mm(t.zeros(0, 3).to_sparse(), t.ones(3, 2)),
    lambda t: t.mm(t.ones(2, 3).to_sparse(), t.zeros(3, 3).to_sparse()),
    # a product that cancels stays stored (torch's sparse @ sparse keeps it)
    lambda t: t.mm(t.sparse_coo_tensor([[0, 0], [0, 1]], [1.0, -1.0], (1, 2)),
                   t.sparse_coo_tensor([[0, 1], [0, 0]], [1.0, 1.0], (2, 1))),
    lambda t: t.mm(t.eye(4).to_sparse(), t.ones(4, 3, dtype=t.float64)),  # dtype errors
    lambda t: t.mm(t.ones(3, 4, dtype=t.float64), t.eye(4).to_sparse()),
    lambda t: t.mm(t.eye(4).to_sparse(), t.eye(4, dtype=t.float64).to_sparse()),
    lambda t: t.mm(t.eye(4).to_sparse(), t.ones(3, 2)),  # shape errors
    lambda t: t.mm(t.ones(2, 3), t.eye(4).to_sparse()),
    lambda t: t.mm(t.eye(4).to_sparse(), t.eye(3).to_sparse()),
    lambda t: t.mm(t.eye(4).to_sparse(), t.ones(4)),
    lambda t: t.mm(t.ones(2, 3).to_sparse(1), t.ones(3, 2)),  # hybrid
    lambda t: t.mm(t.eye(3, dtype=t.bool).to_sparse(), t.ones(3, 2, dtype=t.bool)),
    lambda t: t.addmm(t.ones(3, 3), t.ones(3, 3), t.eye(3).to_sparse()),
    lambda t: t.addmm(t.ones(3, 3), t.eye(3).to_sparse(), t.eye(3).to_sparse()),
    lambda t: t.addmm(t.eye(3).to_sparse(), t.eye(3).to_sparse(), t.ones(3, 3)),
    lambda t: t.mm(t.eye(3).to_sparse().half(), t.ones(3, 2).half()),
])
def test_product_edge_cases_and_errors(case):
    check(case)


def test_larger_random_products():
    """Long rows, many empty rows, duplicates: the row-block kernel and its parallel build."""
    def run(t):
        s = rand_sparse(t, (300, 200), 40000, seed=3)
        d = _d(t, 200, 64, seed=4)
        return t.mm(s, d), t.mm(_d(t, 5, 300, seed=5), s), t.mm(rand_sparse(t, (300, 200), 30), d)

    check(run, rtol=1e-4, atol=1e-4)


# -- reductions ---------------------------------------------------------------------------------

@pytest.mark.parametrize("coalesced", [False, True])
@pytest.mark.parametrize("case", [
    lambda t, s: s.sum(), lambda t, s: t.sum(s), lambda t, s: t.sum(s, 0), lambda t, s: t.sum(s, 1),
    lambda t, s: t.sum(s, -1), lambda t, s: t.sum(s, (0, 1)), lambda t, s: t.sum(s, 1, keepdim=True),
    lambda t, s: t.sum(s, dtype=t.float64), lambda t, s: t.sparse.sum(s), lambda t, s: t.sparse.sum(s, 0),
    lambda t, s: t.sparse.sum(s, [1]), lambda t, s: t.sparse.sum(s, (0, 1)),
    lambda t, s: t.sparse.sum(s, dtype=t.float64), lambda t, s: t.sum(s.long(), 1),
    lambda t, s: t.sum(s.int(), 1), lambda t, s: s.bool().sum(),
])
def test_sums(case, coalesced):
    check(lambda t: case(t, _s(t, coalesced=coalesced)), rtol=1e-6)


@pytest.mark.parametrize("case", [
    lambda t, s: t.sum(s, 0), lambda t, s: t.sum(s, 1), lambda t, s: t.sum(s, 2), lambda t, s: t.sum(s, (0, 2)),
    lambda t, s: t.sum(s, (1, 2)), lambda t, s: t.sparse.sum(s, 2), lambda t, s: t.sum(s),
])
def test_sums_of_hybrid_and_3d(case):
    check(lambda t: case(t, rand_sparse(t, (4, 5), 12, dense_dims=(3,))), rtol=1e-6)
    check(lambda t: case(t, rand_sparse(t, (4, 5, 3), 20)), rtol=1e-6)


def test_reductions_torch_does_not_run_raise():
    for f in (lambda t, s: s.mean(), lambda t, s: s.amax(1), lambda t, s: s.prod(),
              lambda t, s: t.diag(s), lambda t, s: s.max()):
        check(lambda t, f=f: f(t, _s(t)), message=False)


# -- pointwise ----------------------------------------------------------------------------------

UNARY_SPARSE = ["abs", "neg", "sign", "sgn", "sqrt", "expm1", "log1p", "sin", "tan", "asin",
                "atan", "sinh", "tanh", "asinh", "atanh", "erf", "erfinv", "floor", "ceil",
                "trunc", "fix", "frac", "relu", "deg2rad", "rad2deg", "square", "round",
                "positive", "isnan", "isinf", "isposinf", "isneginf", "signbit", "nan_to_num",
                "conj", "negative", "absolute", "arcsin", "arctan", "arcsinh", "arctanh"]
UNARY_DENSE_ONLY = ["exp", "exp2", "log", "log2", "log10", "cos", "cosh", "acos", "acosh",
                    "sigmoid", "erfc", "rsqrt", "reciprocal", "logical_not", "sinc", "isfinite",
                    "lgamma", "digamma", "i0", "bitwise_not"]


@pytest.mark.parametrize("name", UNARY_SPARSE + UNARY_DENSE_ONLY)
@pytest.mark.parametrize("coalesced", [False, True])
def test_unary(name, coalesced):
    check(lambda t: getattr(t, name)(_s(t, coalesced=coalesced) * 0.3), rtol=1e-6, message=False)


@pytest.mark.parametrize("name", ["neg_", "abs_", "sqrt_", "tanh_", "relu_", "floor_", "sign_"])
@pytest.mark.parametrize("coalesced", [False, True])
def test_unary_in_place(name, coalesced):
    def run(t):
        s = _s(t, coalesced=coalesced) * 0.3
        r = getattr(s, name)()
        assert r is s
        return s

    check(run, rtol=1e-6)


@pytest.mark.parametrize("coalesced", [False, True])
@pytest.mark.parametrize("case", [
    lambda t, s: s * 2, lambda t, s: 2 * s, lambda t, s: s * 2.5, lambda t, s: s.long() * 2.5,
    lambda t, s: s * t.tensor(3.0), lambda t, s: s / 2, lambda t, s: s.long() / 2,
    lambda t, s: s / t.tensor(4.0), lambda t, s: s // 2, lambda t, s: t.div(s, 2, rounding_mode="trunc"),
    lambda t, s: s ** 2, lambda t, s: s ** 3, lambda t, s: s.abs() ** 0.5, lambda t, s: s.abs() ** -0.5,
    lambda t, s: s ** 1, lambda t, s: s ** -1, lambda t, s: s.pow(2.5), lambda t, s: t.pow(s, 2),
    lambda t, s: s ** 0, lambda t, s: 2 ** s,
    lambda t, s: s + s, lambda t, s: s - s, lambda t, s: s + s.coalesce(), lambda t, s: s + s.double(),
    lambda t, s: t.add(s, s, alpha=2), lambda t, s: t.sub(s, s.t()),
    lambda t, s: _d(t, 3, 3) + s, lambda t, s: _d(t, 3, 3) - s, lambda t, s: t.add(_d(t, 3, 3), s, alpha=2),
    lambda t, s: _d(t, 3, 3, dtype=t.int64) + s, lambda t, s: _d(t, 3, 3, dtype=t.float64) + s,
    lambda t, s: _d(t, 3, 3) + s.long(), lambda t, s: _d(t, 3, 3).t() + s,
    lambda t, s: s + _d(t, 3, 3), lambda t, s: s - _d(t, 3, 3), lambda t, s: s + 1, lambda t, s: 1 + s,
    lambda t, s: _d(t, 3) + s, lambda t, s: t.tensor(1.0) + s, lambda t, s: s + t.eye(4).to_sparse(),
    lambda t, s: s * s, lambda t, s: s * s.t(), lambda t, s: s * _d(t, 3, 3), lambda t, s: _d(t, 3, 3) * s,
    lambda t, s: s * _d(t, 3), lambda t, s: s * _d(t, 3, 1), lambda t, s: s * _d(t, 3, 3, dtype=t.int64),
    lambda t, s: s * _d(t, 3, 3).t(), lambda t, s: s * t.eye(4).to_sparse(),
    lambda t, s: s / _d(t, 3, 3), lambda t, s: _d(t, 3, 3) / s, lambda t, s: s / s,
    lambda t, s: s == s.clone(), lambda t, s: s > 0, lambda t, s: t.maximum(s, s), lambda t, s: s.clamp(0, 1),
    lambda t, s: t.where(_d(t, 3, 3) > 0, s, s), lambda t, s: s.exp(), lambda t, s: t.atan2(s, s),
])
def test_binary(case, coalesced):
    check(lambda t: case(t, _s(t, coalesced=coalesced)), rtol=1e-6, message=False)


@pytest.mark.parametrize("case", [
    lambda t, s, d: d.__iadd__(s), lambda t, s, d: d.__isub__(s), lambda t, s, d: d.add_(s, alpha=2),
    lambda t, s, d: s.__iadd__(s.clone()), lambda t, s, d: s.__imul__(2), lambda t, s, d: s.mul_(s.clone()),
    lambda t, s, d: s.__itruediv__(2), lambda t, s, d: s.__iadd__(d), lambda t, s, d: s.__imul__(d),
    lambda t, s, d: d.t().__iadd__(s), lambda t, s, d: d.long().__iadd__(s),
])
def test_in_place_binary(case):
    def run(t):
        s, d = _s(t).coalesce(), _d(t, 3, 3)
        r = case(t, s, d)
        return r, s, d

    check(run, rtol=1e-6)


# -- shape ops ----------------------------------------------------------------------------------

@pytest.mark.parametrize("coalesced", [False, True])
@pytest.mark.parametrize("case", [
    lambda t, s: s.t(), lambda t, s: t.t(s), lambda t, s: s.transpose(0, 1), lambda t, s: s.transpose(1, 1),
    lambda t, s: t.transpose(s, -1, 0), lambda t, s: s.T, lambda t, s: s.mT, lambda t, s: s.permute(1, 0),
    lambda t, s: s.t_(), lambda t, s: s.transpose_(0, 1), lambda t, s: s.t().t(),
    lambda t, s: s.unsqueeze(0), lambda t, s: s.unsqueeze(1), lambda t, s: s.unsqueeze(2), lambda t, s: s.unsqueeze(-1),
    lambda t, s: s.index_select(0, t.tensor([2, 0, 2])), lambda t, s: s.index_select(1, t.tensor([2])),
    lambda t, s: s.index_select(1, t.tensor([-1, 0])), lambda t, s: s.index_select(0, t.tensor([], dtype=t.int64)),
    lambda t, s: t.index_select(s, 1, t.tensor([1, 1])), lambda t, s: s.index_select(0, t.tensor([5])),
    lambda t, s: t.cat([s, s]), lambda t, s: t.cat([s, s.t()], 1), lambda t, s: t.cat([s, s.double()]),
    lambda t, s: t.stack([s, s]), lambda t, s: s.zero_(), lambda t, s: s.view(9), lambda t, s: s.reshape(9),
    lambda t, s: s.flatten(), lambda t, s: s.squeeze(), lambda t, s: s.expand(2, 3, 3),
    lambda t, s: s.narrow(0, 0, 1),
])
def test_shape_ops(case, coalesced):
    check(lambda t: case(t, _s(t, coalesced=coalesced)), message=False)


@pytest.mark.parametrize("case", [
    lambda t, s: s.t(), lambda t, s: s.transpose(0, 2), lambda t, s: s.permute(1, 0, 2),
    lambda t, s: s.permute(2, 1, 0), lambda t, s: s.unsqueeze(1), lambda t, s: s.unsqueeze(3),
    lambda t, s: s.index_select(2, t.tensor([1, 0])), lambda t, s: s.index_select(1, t.tensor([3, 3, 0])),
    lambda t, s: t.cat([s, s], 2), lambda t, s: t.cat([s, s], 0), lambda t, s: s * t.tensor([1.0, 2.0, 3.0]),
    lambda t, s: t.ones(4, 5, 3) + s, lambda t, s: s.sqrt(), lambda t, s: s.coalesce() * s,
])
def test_hybrid_shape_and_pointwise_ops(case):
    check(lambda t: case(t, rand_sparse(t, (4, 5), 12, dense_dims=(3,))), rtol=1e-6, message=False)


# -- softmax ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sparse_softmax(fn, dim, dtype):
    check(lambda t: getattr(t.sparse, fn)(_s(t, getattr(t, dtype), coalesced=True), dim),
          rtol=1e-6)
    check(lambda t: getattr(t.sparse, fn)(rand_sparse(t, (4, 5), 12, dense_dims=(3,)).coalesce(),
                                         dim), rtol=1e-6)
