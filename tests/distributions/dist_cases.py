"""Shared cases of the distribution tests: each family with parameters (NumPy arrays, so
that jtorch and torch get the same values) and builders of the same distribution under both
libraries."""

from __future__ import annotations

import numpy as np
import torch

import jtorch


def _rng(seed=0):
    return np.random.default_rng(seed)


def pos(*shape, lo=0.5, hi=3.0, seed=0):
    return _rng(seed).uniform(lo, hi, shape)


def real(*shape, seed=0):
    return _rng(seed).standard_normal(shape)


def unit(*shape, seed=0):
    return _rng(seed).uniform(0.1, 0.9, shape)


def simplex(*shape, seed=0):
    a = _rng(seed).uniform(0.2, 1.0, shape)
    return a / a.sum(-1, keepdims=True)


def spd(*batch, n=3, seed=0):
    a = _rng(seed).standard_normal(batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def tril(*batch, n=3, seed=0):
    return np.linalg.cholesky(spd(*batch, n=n, seed=seed))


def convert(lib, v, dtype):
    """A case parameter as a ``lib`` tensor of ``dtype`` (floats) or as is (Python values)."""
    if isinstance(v, np.ndarray):
        t = lib.from_numpy(v.copy())
        return t.to(getattr(lib, dtype)) if v.dtype.kind == "f" else t
    return v


def build(lib, case, dtype="float64"):
    name, args, kwargs = case[:3]
    cls = getattr(lib.distributions, name)
    a = [convert(lib, v, dtype) for v in args]
    k = {key: convert(lib, v, dtype) for key, v in kwargs.items()}
    return cls(*a, **k)


def both(case, dtype="float64"):
    return build(jtorch, case, dtype), build(torch, case, dtype)


# (class name, args, kwargs, id); arrays broadcast: (2, 3) against (3,) and scalars
CASES = [
    ("Normal", (real(2, 3), pos(3)), {}, "normal"),
    ("Normal", (0.5, 2.0), {}, "normal-scalar"),
    ("Bernoulli", (), {"probs": unit(2, 3)}, "bernoulli-probs"),
    ("Bernoulli", (), {"logits": real(4)}, "bernoulli-logits"),
    ("Categorical", (), {"probs": simplex(2, 4)}, "categorical-probs"),
    ("Categorical", (), {"logits": real(3, 5)}, "categorical-logits"),
    ("OneHotCategorical", (), {"probs": simplex(2, 4)}, "onehot"),
    ("Beta", (pos(2, 3), pos(3, seed=1)), {}, "beta"),
    ("Gamma", (pos(2, 3), pos(3, seed=1)), {}, "gamma"),
    ("Chi2", (pos(4, lo=1.0, hi=5.0),), {}, "chi2"),
    ("Dirichlet", (pos(2, 4),), {}, "dirichlet"),
    ("Exponential", (pos(2, 3),), {}, "exponential"),
    ("Laplace", (real(2, 3), pos(3)), {}, "laplace"),
    ("Uniform", (real(2, 3), real(2, 3) + 3.0), {}, "uniform"),
    ("MultivariateNormal", (real(2, 3),), {"covariance_matrix": spd(2)}, "mvn-cov"),
    ("MultivariateNormal", (real(3),), {"scale_tril": tril(2)}, "mvn-tril"),
    ("MultivariateNormal", (real(2, 3),), {"precision_matrix": spd()}, "mvn-prec"),
    ("LowRankMultivariateNormal", (real(2, 3), real(3, 2) * 0.5, pos(3)), {}, "lowrank-mvn"),
    ("Poisson", (pos(2, 3, hi=8.0),), {}, "poisson"),
    ("Binomial", (np.array([5.0, 10.0, 10.0]),), {"probs": unit(2, 3)}, "binomial-probs"),
    ("Binomial", (10,), {"logits": real(3)}, "binomial-logits"),
    ("Geometric", (), {"probs": unit(2, 3)}, "geometric"),
    ("NegativeBinomial", (pos(3, lo=1.0, hi=4.0),), {"probs": unit(2, 3)}, "negbinomial"),
    ("Multinomial", (6,), {"probs": simplex(2, 4)}, "multinomial"),
    ("LogNormal", (real(2, 3), pos(3)), {}, "lognormal"),
    ("Cauchy", (real(2, 3), pos(3)), {}, "cauchy"),
    ("HalfNormal", (pos(2, 3),), {}, "halfnormal"),
    ("HalfCauchy", (pos(2, 3),), {}, "halfcauchy"),
    ("StudentT", (pos(2, 3, lo=2.5, hi=6.0), real(3), pos(3)), {}, "studentt"),
    ("ContinuousBernoulli", (), {"probs": np.array([0.1, 0.4995, 0.7, 0.95])}, "contbern"),
    ("FisherSnedecor", (pos(3, lo=5.0, hi=8.0), pos(3, lo=5.0, hi=9.0, seed=1)), {}, "fisher"),
    ("Gumbel", (real(2, 3), pos(3)), {}, "gumbel"),
    ("Pareto", (pos(2, 3), pos(3, lo=2.5, hi=4.0)), {}, "pareto"),
    ("Weibull", (pos(2, 3), pos(3, lo=1.0, hi=3.0)), {}, "weibull"),
    ("Kumaraswamy", (pos(2, 3, lo=1.2), pos(3, lo=1.2)), {}, "kumaraswamy"),
    ("InverseGamma", (pos(2, 3, lo=2.5, hi=5.0), pos(3)), {}, "inversegamma"),
    ("LogisticNormal", (real(2, 3), pos(3)), {}, "logisticnormal"),
    ("RelaxedBernoulli", (np.array(0.7),), {"probs": unit(2, 3)}, "relaxedbernoulli"),
    ("RelaxedOneHotCategorical", (np.array(0.7),), {"logits": real(2, 4)}, "relaxedonehot"),
    ("VonMises", (real(2, 3), pos(3)), {}, "vonmises"),
    ("GeneralizedPareto", (real(3), pos(3), np.array([-0.2, 0.0, 0.3])), {}, "genpareto"),
    ("LKJCholesky", (3, pos(2, lo=0.5, hi=2.0)), {}, "lkj"),
    ("Wishart", (pos(2, lo=4.0, hi=6.0),), {"covariance_matrix": spd(2)}, "wishart"),
]
CASE_IDS = [c[3] for c in CASES]
