"""Argument and sample validation: the same exception types and messages as torch's
(parameter constraints, constructor checks, values outside the support or of the wrong
shape), ``validate_args`` and ``Distribution.set_default_validate_args``; utils."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import jtorch
import jtorch.distributions as D


def _err(lib, fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(lib)
    except Exception as e:  # noqa: BLE001  (the error itself is compared)
        # torch's linalg errors are torch._C._LinAlgError; messages name each library's class
        return type(e).__name__.lstrip("_"), str(e).replace("jtorch.", "torch.")
    return None


def _t(lib, v):
    return lib.tensor(v)


CALLS = [
    lambda L: L.distributions.Normal(_t(L, [math.nan, 0.0]), _t(L, [1.0, 1.0])),
    lambda L: L.distributions.Normal(0.0, -1.0),
    lambda L: L.distributions.Normal(_t(L, [0.0, 0.0]), _t(L, [1.0, 1.0])).log_prob(L.ones(3)),
    lambda L: L.distributions.Normal(0.0, 1.0).log_prob(3.0),
    lambda L: L.distributions.Bernoulli(0.3).log_prob(_t(L, [0.5])),
    lambda L: L.distributions.Bernoulli(probs=1.5),
    lambda L: L.distributions.Bernoulli(),
    lambda L: L.distributions.Bernoulli(probs=0.3, logits=0.1),
    lambda L: L.distributions.Categorical(_t(L, [0.2, -0.1, 0.9])),
    lambda L: L.distributions.Categorical(_t(L, 0.5)),
    lambda L: L.distributions.Categorical(logits=_t(L, 0.5)),
    lambda L: L.distributions.Categorical(_t(L, [0.5, 0.5])).log_prob(_t(L, [2])),
    lambda L: L.distributions.Beta(_t(L, [1.0]), _t(L, [-1.0])),
    lambda L: L.distributions.Gamma(_t(L, [0.0]), _t(L, [1.0])),
    lambda L: L.distributions.Gamma(_t(L, [1.0]), _t(L, [1.0])).log_prob(_t(L, [-1.0])),
    lambda L: L.distributions.Dirichlet(_t(L, 1.0)),
    lambda L: L.distributions.Dirichlet(_t(L, [1.0, -2.0])),
    lambda L: L.distributions.Dirichlet(_t(L, [1.0, 2.0])).log_prob(_t(L, [0.5, 0.6])),
    lambda L: L.distributions.Dirichlet(_t(L, [1.0, 2.0])).log_prob(_t(L, [0.5, 0.2, 0.3])),
    lambda L: L.distributions.Exponential(_t(L, [-2.0])),
    lambda L: L.distributions.Uniform(_t(L, [1.0]), _t(L, [0.0])),
    lambda L: L.distributions.Uniform(0.0, 1.0).log_prob(_t(L, 2.0)),
    lambda L: L.distributions.Poisson(_t(L, [-1.0])),
    lambda L: L.distributions.Poisson(_t(L, [1.0])).log_prob(_t(L, [1.5])),
    lambda L: L.distributions.Binomial(_t(L, [2.5]), _t(L, [0.5])),
    lambda L: L.distributions.Binomial(4, _t(L, [0.5])).log_prob(_t(L, [5.0])),
    lambda L: L.distributions.Geometric(_t(L, [0.0])),
    lambda L: L.distributions.Geometric(_t(L, [1.5])),
    lambda L: L.distributions.MultivariateNormal(_t(L, 0.0), L.eye(2)),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2)),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2), L.eye(2), scale_tril=L.eye(2)),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2), _t(L, [[1.0, 2.0], [2.0, 1.0]])),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2), scale_tril=_t(L, [[1.0, 1.0],
                                                                              [0.0, 1.0]])),
    lambda L: L.distributions.MultivariateNormal(L.zeros(2), L.ones(2)),
    lambda L: L.distributions.LowRankMultivariateNormal(L.zeros(2), L.ones(3, 1), L.ones(2)),
    lambda L: L.distributions.LowRankMultivariateNormal(L.zeros(2), L.ones(2, 1), -L.ones(2)),
    lambda L: L.distributions.Independent(L.distributions.Normal(L.zeros(2), 1.0), 2),
    lambda L: L.distributions.MixtureSameFamily(L.distributions.Normal(0.0, 1.0),
                                                L.distributions.Normal(L.zeros(2), 1.0)),
    lambda L: L.distributions.MixtureSameFamily(L.distributions.Categorical(L.ones(3)),
                                                L.distributions.Normal(L.zeros(2), 1.0)),
    lambda L: L.distributions.Multinomial(L.tensor(3), L.ones(2)),
    lambda L: L.distributions.LKJCholesky(1),
    lambda L: L.distributions.StudentT(_t(L, [-1.0])),
    lambda L: L.distributions.RelaxedBernoulli(_t(L, 0.5), probs=_t(L, [0.2])).log_prob(
        _t(L, [1.5])),
    lambda L: L.distributions.Binomial(_t(L, [3.0, 4.0]), _t(L, [0.5, 0.5])).entropy(),
    lambda L: L.distributions.Independent(L.distributions.Bernoulli(L.ones(2) / 2),
                                          1).enumerate_support(),
    lambda L: L.distributions.Normal(0.0, 1.0).enumerate_support(),
    lambda L: L.distributions.Normal(0.0, 1.0).mode.__class__ and
    L.distributions.Distribution().mode,
    lambda L: L.distributions.Wishart(_t(L, 0.5), covariance_matrix=L.eye(2)),
    lambda L: L.distributions.utils.broadcast_all(L.ones(2), "a"),
    lambda L: L.distributions.utils.vec_to_tril_matrix(L.ones(4)),
    lambda L: L.distributions.Distribution.set_default_validate_args(3),
]


@pytest.mark.parametrize("call", CALLS, ids=range(len(CALLS)))
def test_errors_match_torch(call):
    want = _err(torch, call)
    assert want is not None
    assert _err(jtorch, call) == want


def test_validation_can_be_turned_off():
    d = D.Normal(jtorch.tensor([0.0]), jtorch.tensor([-1.0]), validate_args=False)
    assert d.log_prob(jtorch.tensor([0.0])).isnan().all()
    with pytest.raises(ValueError, match="to satisfy the constraint GreaterThan"):
        D.Normal(0.0, -1.0, validate_args=True)
    try:
        D.Distribution.set_default_validate_args(False)
        D.Normal(0.0, -1.0)  # no error
        D.Bernoulli(0.3).log_prob(jtorch.tensor(0.5))
        D.Distribution.set_default_validate_args(True)
        with pytest.raises(ValueError, match="Expected value argument"):
            D.Bernoulli(0.3).log_prob(jtorch.tensor(0.5))
    finally:
        D.Distribution.set_default_validate_args(True)


def test_lazy_parameters_and_reprs():
    d = D.Bernoulli(logits=jtorch.tensor([0.0, 2.0]))
    assert "probs" not in d.__dict__
    t = torch.distributions.Bernoulli(logits=torch.tensor([0.0, 2.0]))
    np.testing.assert_allclose(d.probs.numpy(), t.probs.numpy())
    assert "probs" in d.__dict__ and repr(d) == repr(t)
    assert isinstance(D.Bernoulli.__dict__["probs"], D.utils.lazy_property)
    w = jtorch.tensor([0.0, 1.0], requires_grad=True)
    with jtorch.no_grad():
        p = D.Bernoulli(logits=w).probs  # a lazy property records grad even under no_grad
    assert p.requires_grad


def test_utils_match_torch():
    U, TU = D.utils, torch.distributions.utils
    x = np.random.default_rng(0).uniform(0, 1, (3, 4))
    j, t = jtorch.from_numpy(x.copy()), torch.from_numpy(x.copy())
    for fn in ("logits_to_probs", "probs_to_logits"):
        for binary in (False, True):
            np.testing.assert_allclose(getattr(U, fn)(j, binary).numpy(),
                                       getattr(TU, fn)(t, binary).numpy(), rtol=1e-12)
    np.testing.assert_array_equal(U.clamp_probs(jtorch.tensor([0.0, 0.5, 1.0])).numpy(),
                                  TU.clamp_probs(torch.tensor([0.0, 0.5, 1.0])).numpy())
    m = np.arange(16.0).reshape(4, 4)
    for diag in (-1, 0, 1):
        v = U.tril_matrix_to_vec(jtorch.from_numpy(m.copy()), diag)
        np.testing.assert_array_equal(v.numpy(),
                                      TU.tril_matrix_to_vec(torch.from_numpy(m.copy()), diag).numpy())
        np.testing.assert_array_equal(U.vec_to_tril_matrix(v, diag).numpy(),
                                      TU.vec_to_tril_matrix(torch.from_numpy(v.numpy()), diag).numpy())
    a, b, _ = U.broadcast_all(jtorch.zeros(2, 1, dtype=jtorch.float64), 1.0, jtorch.ones(3))
    assert tuple(a.shape) == tuple(b.shape) == (2, 3) and b.dtype is jtorch.float64
    (s,) = U.broadcast_all(2)
    assert s.dtype is jtorch.get_default_dtype() and tuple(s.shape) == ()
    assert U.euler_constant == TU.euler_constant
