"""Every family of jtorch.distributions against torch.distributions on the same parameters
(float32 and float64, broadcast batch shapes): shapes, log_prob, cdf, icdf, moments, entropy,
enumerate_support, expand, sample shapes and reprs; and the gradients of log_prob, entropy
and rsample."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from dist_cases import CASE_IDS, CASES, both, build

import jtorch
import jtorch.distributions as D

TOL = {"float32": {"rtol": 2e-5, "atol": 2e-6}, "float64": {"rtol": 1e-9, "atol": 1e-11}}
# Gamma.cdf is torch.special.gammainc's (checked wherever jtorch has it)
NO_CDF = set() if hasattr(jtorch.special, "gammainc") else {"gamma", "chi2", "inversegamma"}


def _np(x):
    if isinstance(x, (jtorch.Tensor, torch.Tensor)):
        return x.detach().numpy()
    return np.asarray(x)


def _close(j, t, dtype, what):
    a, b = _np(j), _np(t)
    assert a.shape == b.shape, (what, a.shape, b.shape)
    if isinstance(t, torch.Tensor):
        assert str(j.dtype) == str(t.dtype), (what, j.dtype, t.dtype)
    np.testing.assert_allclose(a, b, equal_nan=True, err_msg=what, **TOL[dtype])


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except Exception as e:  # noqa: BLE001  (the error itself is compared)
        return None, e


def _same_outcome(jfn, tfn, dtype, what):
    t, te = _outcome(tfn)
    j, je = _outcome(jfn)
    if te is not None:
        assert je is not None and type(je) is type(te), (what, te, je)
        return
    assert je is None, (what, je)
    _close(j, t, dtype, what)


def _values(t_dist, n=4, seed=0):
    torch.manual_seed(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = t_dist.sample((n,))
    return jtorch.from_numpy(x.numpy().copy()), x


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_family_matches_torch(case, dtype):
    j, t = both(case, dtype)
    name = case[3]
    assert tuple(j.batch_shape) == tuple(t.batch_shape)
    assert tuple(j.event_shape) == tuple(t.event_shape)
    assert j.has_rsample == t.has_rsample and j.has_enumerate_support == t.has_enumerate_support
    assert repr(j) == repr(t)
    _, te = _outcome(lambda: t.support)
    if te is None:
        assert repr(j.support) == repr(t.support)
    xj, xt = _values(t)
    _same_outcome(lambda: j.log_prob(xj), lambda: t.log_prob(xt), dtype, f"{name}.log_prob")
    if name not in NO_CDF:
        _same_outcome(lambda: j.cdf(xj), lambda: t.cdf(xt), dtype, f"{name}.cdf")
    u = np.random.default_rng(1).uniform(0.05, 0.95, (3,) + tuple(t.batch_shape))
    fdtype = getattr(jtorch, dtype)
    uj, ut = jtorch.from_numpy(u).to(fdtype), torch.from_numpy(u).to(getattr(torch, dtype))
    _same_outcome(lambda: j.icdf(uj), lambda: t.icdf(ut), dtype, f"{name}.icdf")
    for attr in ("mean", "variance", "stddev", "mode"):
        _same_outcome(lambda a=attr: getattr(j, a), lambda a=attr: getattr(t, a), dtype,
                      f"{name}.{attr}")
    for m in ("entropy", "perplexity"):
        _same_outcome(lambda m=m: getattr(j, m)(), lambda m=m: getattr(t, m)(), dtype,
                      f"{name}.{m}")
    if t.has_enumerate_support:
        for expand in (True, False):
            _same_outcome(lambda e=expand: j.enumerate_support(e),
                          lambda e=expand: t.enumerate_support(e), dtype, f"{name}.enumerate_support")


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_sample_shapes_and_expand(case):
    j, t = both(case, "float32")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for shape in ((), (5,), (2, 3)):
            s, ts = j.sample(shape), t.sample(shape)
            assert tuple(s.shape) == tuple(ts.shape) and s.dtype is getattr(jtorch, str(ts.dtype)[6:])
            assert not s.requires_grad
            if j.has_rsample:
                assert tuple(j.rsample(shape).shape) == tuple(ts.shape)
        bs = (4,) + tuple(j.batch_shape)
        je, te = j.expand(bs), t.expand(bs)
        assert type(je) is type(j)
        assert tuple(je.batch_shape) == tuple(te.batch_shape)
        assert tuple(je.event_shape) == tuple(te.event_shape)
        xj, xt = _values(te, n=2)
        _same_outcome(lambda: je.log_prob(xj), lambda: te.log_prob(xt), "float32",
                      f"{case[3]}.expand.log_prob")
        assert tuple(je.sample().shape) == tuple(te.sample().shape)


def test_sample_n_warns_and_samples():
    d = D.Normal(jtorch.zeros(2), 1.0)
    with pytest.warns(FutureWarning, match=r"`sample_n\(n\)` will be deprecated"):
        assert tuple(d.sample_n(3).shape) == (3, 2)


# -- gradients -------------------------------------------------------------------------------

def _grads(lib, case, fn):
    """Gradients of ``fn(dist).sum()`` with respect to the floating parameters."""
    name, args, kwargs = case[:3]
    leaves = []

    def conv(v):
        if isinstance(v, np.ndarray) and v.dtype.kind == "f" and v.ndim:
            t = lib.from_numpy(v.copy()).requires_grad_()
            leaves.append(t)
            return t
        return lib.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v

    d = getattr(lib.distributions, name)(*[conv(v) for v in args],
                                         **{k: conv(v) for k, v in kwargs.items()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = fn(lib, d)
    if not leaves:
        return []
    grads = lib.autograd.grad(out.sum(), leaves, allow_unused=True)
    return [None if g is None else g.numpy() for g in grads]


GRAD_CASES = [c for c in CASES if c[3] not in ("lkj", "wishart", "genpareto")]


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[3] for c in GRAD_CASES])
def test_log_prob_and_entropy_gradients_match_torch(case):
    torch.manual_seed(3)
    t = build(torch, case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = t.sample((3,)).numpy()
    fns = [lambda lib, d: d.log_prob(lib.from_numpy(x.copy()))]
    if case[3] not in ("relaxedbernoulli", "relaxedonehot", "logisticnormal", "lognormal",
                       "weibull", "pareto", "kumaraswamy", "gumbel", "inversegamma",
                       "halfcauchy"):
        fns.append(lambda lib, d: d.entropy())
    for fn in fns:
        _, te = _outcome(lambda fn=fn: _grads(torch, case, fn))
        if te is not None:  # torch has no such method for the family (entropy)
            continue
        jg, tg = _grads(jtorch, case, fn), _grads(torch, case, fn)
        for a, b in zip(jg, tg):
            if b is None:
                assert a is None or not np.any(a)
                continue
            np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10, err_msg=case[3])


# rsample: the derivative of a sample at fixed noise. Draw with a fixed seed, perturb one
# parameter element by +-h with the same seed: the central difference is the pathwise
# derivative, except for the gamma family, whose rejection sampler is not differentiable in
# its parameters: there the gradient is the implicit one, d x / d a = -(dF/da) / f(x), checked
# in test_dist_samplers.py against finite differences of the CDF.
RSAMPLE = [
    ("Normal", (np.array([0.3, -1.0]), np.array([0.5, 2.0])), {}),
    ("Laplace", (np.array([0.3, -1.0]), np.array([0.5, 2.0])), {}),
    ("Cauchy", (np.array([0.3, -1.0]), np.array([0.5, 2.0])), {}),
    ("Exponential", (np.array([0.5, 2.0]),), {}),
    ("Uniform", (np.array([0.3, -1.0]), np.array([1.5, 2.0])), {}),
    ("LogNormal", (np.array([0.3, -1.0]), np.array([0.5, 0.7])), {}),
    ("HalfNormal", (np.array([0.5, 2.0]),), {}),
    ("Gumbel", (np.array([0.3, -1.0]), np.array([0.5, 2.0])), {}),
    ("Weibull", (np.array([0.5, 2.0]), np.array([1.5, 3.0])), {}),
    ("Kumaraswamy", (np.array([1.5, 2.0]), np.array([1.5, 3.0])), {}),
    ("MultivariateNormal", (np.array([0.3, -1.0]),), {"scale_tril": np.array([[1.0, 0.0],
                                                                              [0.3, 0.5]])}),
    ("LowRankMultivariateNormal", (np.array([0.3, -1.0]), np.array([[0.5], [0.2]]),
                                   np.array([0.5, 2.0])), {}),
    ("RelaxedBernoulli", (np.array(0.5),), {"logits": np.array([0.3, -1.0])}),
    ("RelaxedOneHotCategorical", (np.array(0.5),), {"logits": np.array([0.3, -1.0, 0.2])}),
    ("LogisticNormal", (np.array([0.3, -1.0]), np.array([0.5, 2.0])), {}),
    ("ContinuousBernoulli", (), {"probs": np.array([0.2, 0.7])}),
    ("GeneralizedPareto", (np.array([0.3, -1.0]), np.array([0.5, 2.0]), np.array([0.2, -0.1])),
     {}),
]


def _rsample_sum(case, params, seed):
    name, args, kwargs = case
    it = iter(params)
    a = [next(it) if isinstance(v, np.ndarray) and v.ndim else
         (jtorch.from_numpy(v.copy()) if isinstance(v, np.ndarray) else v) for v in args]
    k = {key: next(it) if v.ndim else jtorch.from_numpy(v.copy()) for key, v in kwargs.items()}
    d = getattr(D, name)(*a, **k)
    jtorch.manual_seed(seed)
    return d.rsample((6,)).sum()


@pytest.mark.parametrize("case", RSAMPLE, ids=[c[0] for c in RSAMPLE])
def test_rsample_gradient_is_the_pathwise_derivative(case):
    arrays = [v for v in list(case[1]) + list(case[2].values())
              if isinstance(v, np.ndarray) and v.ndim]
    params = [jtorch.from_numpy(v.copy()).requires_grad_() for v in arrays]
    grads = jtorch.autograd.grad(_rsample_sum(case, params, 7), params)
    h = 1e-6
    for p, g, v in zip(range(len(arrays)), grads, arrays):
        fd = np.zeros_like(v)
        for idx in np.ndindex(v.shape):
            if v[idx] == 0:  # a structural zero (the upper triangle of scale_tril)
                continue
            vals = []
            for s in (1, -1):
                w = v.copy()
                w[idx] += s * h
                ps = [jtorch.from_numpy((w if i == p else arrays[i]).copy())
                      for i in range(len(arrays))]
                vals.append(float(_rsample_sum(case, ps, 7)))
            fd[idx] = (vals[0] - vals[1]) / (2 * h)
        free = v != 0  # the upper triangle of scale_tril is not a free parameter
        np.testing.assert_allclose(g.numpy()[free], fd[free], rtol=1e-5, atol=1e-6,
                                   err_msg=case[0])


def test_straight_through_passes_the_probs_gradient():
    grads = []
    for lib in (jtorch, torch):
        p = lib.tensor([0.2, 0.3, 0.4], dtype=lib.float64, requires_grad=True)
        s = lib.distributions.OneHotCategoricalStraightThrough(probs=p).rsample()
        (s * lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64)).sum().backward()
        grads.append(p.grad.numpy())
    # the gradient of probs = p / sum(p), whatever was drawn
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


# -- sampling distributions -------------------------------------------------------------------

def _ks(samples: np.ndarray, cdf) -> float:
    """The Kolmogorov-Smirnov statistic of ``samples`` against ``cdf``."""
    x = np.sort(samples)
    f = cdf(x)
    n = x.size
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


# The KS bound 1.63 / sqrt(n) is the 1% level; a wrong sampler (a moment off by a few %)
# fails it at n = 4000.
KS_CASES = [
    ("Normal", (0.5, 2.0)), ("Laplace", (0.5, 2.0)), ("Cauchy", (0.5, 2.0)),
    ("Exponential", (1.5,)), ("Uniform", (-1.0, 3.0)), ("Gumbel", (0.5, 2.0)),
    ("HalfNormal", (2.0,)), ("HalfCauchy", (2.0,)), ("LogNormal", (0.5, 0.7)),
    ("Weibull", (1.5, 2.0)), ("Kumaraswamy", (1.5, 2.5)), ("Pareto", (1.0, 2.5)),
    ("ContinuousBernoulli", (0.3,)), ("GeneralizedPareto", (0.0, 1.0, 0.2)),
]


@pytest.mark.parametrize("case", KS_CASES, ids=[c[0] for c in KS_CASES])
def test_samples_follow_the_cdf(case):
    name, args = case
    jtorch.manual_seed(11)
    # torch's GeneralizedPareto compares with a float32 zero: float64 parameters raise there
    dt = "float32" if name == "GeneralizedPareto" else "float64"
    d = getattr(D, name)(*[jtorch.tensor(float(a), dtype=getattr(jtorch, dt)) for a in args])
    t = getattr(torch.distributions, name)(*[torch.tensor(float(a), dtype=getattr(torch, dt))
                                             for a in args])
    n = 4000
    s = d.sample((n,)).numpy().astype(np.float64)
    stat = _ks(s, lambda x: t.cdf(torch.from_numpy(x).to(t.mean.dtype)).double().numpy())
    assert stat < 1.63 / math.sqrt(n), stat


def _moments(d_j, n=20000, seed=5):
    jtorch.manual_seed(seed)
    s = d_j.sample((n,)).double().numpy()
    return s.mean(0), s.var(0)


@pytest.mark.parametrize("name, args, kwargs", [
    ("StudentT", (jtorch.tensor([5.0, 8.0]),), {}),
    ("FisherSnedecor", (jtorch.tensor([5.0, 7.0]), jtorch.tensor([9.0, 12.0])), {}),
    ("Binomial", (jtorch.tensor([10.0, 40.0]),), {"probs": jtorch.tensor([0.3, 0.6])}),
    ("Geometric", (), {"probs": jtorch.tensor([0.3, 0.6])}),
    ("NegativeBinomial", (jtorch.tensor([3.0, 5.0]),), {"probs": jtorch.tensor([0.3, 0.6])}),
    ("Poisson", (jtorch.tensor([0.7, 25.0]),), {}),
    ("Bernoulli", (), {"probs": jtorch.tensor([0.3, 0.6])}),
    ("InverseGamma", (jtorch.tensor([4.0, 6.0]), jtorch.tensor([2.0, 1.0])), {}),
    ("Multinomial", (5,), {"probs": jtorch.tensor([0.2, 0.3, 0.5])}),
    ("Dirichlet", (jtorch.tensor([0.5, 2.0, 3.0]),), {}),
])
def test_sample_moments(name, args, kwargs):
    d = getattr(D, name)(*args, **kwargs)
    mean, var = _moments(d)
    n = 20000
    want_m, want_v = d.mean.double().numpy(), d.variance.double().numpy()
    # 5 standard errors of the mean; the variance within 8%
    np.testing.assert_array_less(np.abs(mean - want_m), 5 * np.sqrt(want_v / n) + 1e-12)
    np.testing.assert_allclose(var, want_v, rtol=0.08)


def test_von_mises_samples_have_the_circular_moments():
    loc, k = jtorch.tensor([0.5, -1.0, 3.0]), jtorch.tensor([2.0, 4.0, 0.5])
    d = D.VonMises(loc, k)
    jtorch.manual_seed(4)
    x = d.sample((20000,))
    assert x.dtype is jtorch.float32 and float(x.abs().max()) <= math.pi
    # E[cos(x - loc)] = I1(k) / I0(k) = 1 - variance; E[sin(x - loc)] = 0
    c = jtorch.cos(x - loc).double().mean(0).numpy()
    sn = jtorch.sin(x - loc).double().mean(0).numpy()
    np.testing.assert_allclose(c, 1 - d.variance.double().numpy(), atol=0.012)
    np.testing.assert_allclose(sn, 0.0, atol=0.012)


def test_categorical_and_mixture_sample_frequencies():
    jtorch.manual_seed(2)
    p = np.array([0.1, 0.2, 0.7])
    s = D.Categorical(jtorch.tensor(p)).sample((20000,)).numpy()
    np.testing.assert_allclose(np.bincount(s, minlength=3) / s.size, p, atol=0.015)
    mix = D.MixtureSameFamily(D.Categorical(jtorch.tensor([0.25, 0.75])),
                              D.Normal(jtorch.tensor([-4.0, 4.0]), jtorch.tensor([1.0, 1.0])))
    x = mix.sample((20000,)).numpy()
    assert abs((x > 0).mean() - 0.75) < 0.015
    assert abs(x.mean() - float(mix.mean)) < 0.1


def test_mixture_same_family_matches_torch():
    logits = np.random.default_rng(0).standard_normal((2, 3))
    loc, scale = np.random.default_rng(1).standard_normal((2, 3, 4)), np.full((2, 3, 4), 1.5)
    mk = lambda lib: lib.distributions.MixtureSameFamily(
        lib.distributions.Categorical(logits=lib.from_numpy(logits)),
        lib.distributions.Independent(lib.distributions.Normal(lib.from_numpy(loc),
                                                               lib.from_numpy(scale)), 1))
    j, t = mk(jtorch), mk(torch)
    assert repr(j) == repr(t)
    x = np.random.default_rng(2).standard_normal((5, 2, 4))
    _close(j.log_prob(jtorch.from_numpy(x)), t.log_prob(torch.from_numpy(x)), "float64", "lp")
    _close(j.mean, t.mean, "float64", "mean")
    _close(j.variance, t.variance, "float64", "variance")
    assert tuple(j.sample((3,)).shape) == tuple(t.sample((3,)).shape)
    je, te = j.expand((6, 2)), t.expand((6, 2))
    assert tuple(je.batch_shape) == tuple(te.batch_shape)
    assert repr(j.support) == repr(t.support)
