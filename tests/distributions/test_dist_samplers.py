"""The samplers behind the gamma family, Poisson and Binomial (``torch._standard_gamma``,
``_sample_dirichlet``, ``poisson``, ``binomial``) and the reparameterised gradients
``_standard_gamma_grad`` and ``_dirichlet_grad``.

Samples are not torch's numbers (torch draws them from its mt19937 serially); their
distributions are checked instead, with fixed seeds: Kolmogorov-Smirnov statistics against
the exact CDFs and pmf frequencies within a few standard errors, bounds that a sampler off
by a few percent fails. The gradients are torch's approximations, compared with torch's
values and with finite differences of the CDF (the implicit derivative -(dF/da) / f).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.special
import torch

import jtorch
import jtorch.distributions as D

KS_1PCT = 1.63  # the Kolmogorov-Smirnov statistic's 1% level, times sqrt(n)


def _ks(samples: np.ndarray, cdf) -> float:
    x = np.sort(samples)
    f = cdf(x)
    n = x.size
    return max(np.max(np.arange(1, n + 1) / n - f), np.max(f - np.arange(n) / n))


def _gamma_cdf(alpha: float):
    return lambda x: torch.special.gammainc(torch.tensor(alpha, dtype=torch.float64),
                                            torch.from_numpy(x)).numpy()


def _outcomes(jfn, tfn):
    out = []
    for fn in (tfn, jfn):
        try:
            fn()
            out.append(None)
        except Exception as e:  # noqa: BLE001  (the error itself is compared)
            out.append((type(e), str(e)))
    return out


# -- _standard_gamma ------------------------------------------------------------------------

@pytest.mark.parametrize("alpha", [0.05, 0.3, 1.0, 2.5, 15.0, 400.0])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_standard_gamma_follows_the_gamma_cdf(alpha, dtype):
    jtorch.manual_seed(1)
    n = 5000
    x = jtorch._standard_gamma(jtorch.full((n,), alpha, dtype=getattr(jtorch, dtype)))
    assert x.dtype is getattr(jtorch, dtype) and tuple(x.shape) == (n,)
    s = x.double().numpy()
    assert s.min() >= np.finfo(dtype).tiny
    assert _ks(s, _gamma_cdf(alpha)) < KS_1PCT / math.sqrt(n)


def test_standard_gamma_is_reproducible_and_broadcasts_nothing():
    a = jtorch.tensor([[0.5, 2.0, 7.0]]).expand(4, 3)
    g = jtorch.Generator().manual_seed(5)
    x1 = jtorch._standard_gamma(a, generator=g)
    g.manual_seed(5)
    x2 = jtorch._standard_gamma(a, generator=g)
    assert jtorch.equal(x1, x2) and x1.is_contiguous() and tuple(x1.shape) == (4, 3)
    assert not jtorch.equal(x1, jtorch._standard_gamma(a, generator=g))
    assert tuple(jtorch._standard_gamma(jtorch.tensor(2.0)).shape) == ()
    assert tuple(jtorch._standard_gamma(jtorch.ones(0, 2)).shape) == (0, 2)


def test_standard_gamma_edge_values_match_torch():
    vals = [0.0, -1.0, math.nan, math.inf]
    for d in ("float32", "float64"):
        j = jtorch._standard_gamma(jtorch.tensor(vals, dtype=getattr(jtorch, d)))
        t = torch._standard_gamma(torch.tensor(vals, dtype=getattr(torch, d)))
        np.testing.assert_array_equal(j.numpy(), t.numpy())


@pytest.mark.parametrize("call", [
    lambda T: T._standard_gamma(T.tensor([1.0, 2.0], dtype=T.float16)),
    lambda T: T._standard_gamma(T.tensor([1, 2])),
    lambda T: T._standard_gamma(3.0),
    lambda T: T._standard_gamma(T.ones(2), generator=1),
    lambda T: T._sample_dirichlet(T.tensor([1, 2])),
    lambda T: T._sample_dirichlet(T.ones(2, dtype=T.float16)),
    lambda T: T._sample_dirichlet(T.ones(2), 3),
    lambda T: T.poisson(T.tensor([1, 2])),
    lambda T: T.poisson(T.tensor([True])),
    lambda T: T.poisson(3.0),
    lambda T: T.poisson(T.tensor([1.0, -2.0])),
    lambda T: T.poisson(T.tensor([math.nan])),
    lambda T: T.poisson(T.ones(2), 3),
    lambda T: T.binomial(T.tensor([1, 2]), T.tensor([0.5, 0.5])),
    lambda T: T.binomial(T.tensor([1.0, 2.0]), T.tensor([0, 1])),
    lambda T: T.binomial(T.tensor([1.0, 2.0], dtype=T.float64), T.tensor([0.5, 0.1])),
    lambda T: T.binomial(T.tensor([1.0, 2.0]), T.tensor([0.5, 0.1], dtype=T.float64)),
    lambda T: T.binomial(T.ones(2, dtype=T.float16), T.ones(2, dtype=T.float16)),
    lambda T: T.binomial(T.tensor([[1.0, 2.0]]), T.tensor([0.5, 0.1, 0.3])),
    lambda T: T.binomial(T.ones(2), 0.5),
    lambda T: T._standard_gamma_grad(T.ones(2, dtype=T.float64), T.ones(2)),
    lambda T: T._standard_gamma_grad(T.tensor([1, 2]), T.tensor([1, 2])),
    lambda T: T._standard_gamma_grad(T.ones(2), T.ones(3)),
    lambda T: T._standard_gamma_grad(T.ones(2), 3.0),
    lambda T: T._dirichlet_grad(T.ones(2), T.ones(2), T.ones(2, dtype=T.float64)),
    lambda T: T._dirichlet_grad(T.tensor([1, 2]), T.tensor([1, 2]), T.tensor([1, 2])),
    lambda T: T._dirichlet_grad(T.ones(2), T.ones(2), 3.0),
])
def test_sampler_errors_match_torch(call):
    t, j = _outcomes(lambda: call(jtorch), lambda: call(torch))
    assert t is not None and j == t


def test_standard_gamma_gradient_is_torchs_and_the_implicit_derivative():
    a = jtorch.tensor([0.3, 2.0, 9.0], dtype=jtorch.float64, requires_grad=True)
    jtorch.manual_seed(0)
    x = jtorch._standard_gamma(a.expand(50, 3))
    assert type(x.grad_fn).__name__ == "StandardGammaBackward0"
    (g,) = jtorch.autograd.grad(x.sum(), a)
    want = jtorch._standard_gamma_grad(a.detach().expand(50, 3), x.detach()).sum(0)
    np.testing.assert_allclose(g.numpy(), want.numpy(), rtol=1e-12)
    # torch's own rule on the same draws
    np.testing.assert_allclose(
        want.numpy(), torch._standard_gamma_grad(torch.from_numpy(a.detach().expand(50, 3).numpy()),
                                                 torch.from_numpy(x.detach().numpy())).sum(0).numpy(),
        rtol=1e-12)


def _implicit_gamma(alpha: np.ndarray, x: np.ndarray) -> np.ndarray:
    """-(dF/dalpha) / f(x) for the Gamma(alpha, 1) CDF F, by central differences."""
    h = 1e-6 * alpha
    dfda = (scipy.special.gammainc(alpha + h, x) - scipy.special.gammainc(alpha - h, x)) / (2 * h)
    pdf = np.exp((alpha - 1) * np.log(x) - x - scipy.special.gammaln(alpha))
    return -dfda / pdf


# points in each branch: x < 0.8 (series), alpha > 8 (saddle point, near and away from the
# mode), and the rational approximation between
_GAMMA_POINTS = np.array([[0.1, 0.05], [0.5, 0.3], [2.0, 0.5], [3.0, 0.79], [12.0, 11.5],
                          [20.0, 21.0], [10.0, 6.0], [30.0, 40.0], [1.5, 1.2], [4.0, 6.0],
                          [0.7, 2.5], [6.0, 5.0]])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_standard_gamma_grad_matches_torch(dtype):
    rng = np.random.default_rng(0)
    alpha = np.concatenate([_GAMMA_POINTS[:, 0], rng.uniform(0.05, 40, 200)])
    x = np.concatenate([_GAMMA_POINTS[:, 1], alpha[12:] * rng.uniform(0.05, 2.5, 200)])
    j = jtorch._standard_gamma_grad(jtorch.tensor(alpha, dtype=getattr(jtorch, dtype)),
                                    jtorch.tensor(x, dtype=getattr(jtorch, dtype)))
    t = torch._standard_gamma_grad(torch.tensor(alpha, dtype=getattr(torch, dtype)),
                                   torch.tensor(x, dtype=getattr(torch, dtype)))
    assert j.dtype is getattr(jtorch, dtype)
    np.testing.assert_allclose(j.numpy(), t.numpy(), rtol=1e-10 if dtype == "float64" else 1e-6)


def test_standard_gamma_grad_approximates_the_implicit_derivative():
    a, x = _GAMMA_POINTS[:, 0], _GAMMA_POINTS[:, 1]
    got = jtorch._standard_gamma_grad(jtorch.tensor(a), jtorch.tensor(x)).numpy()
    np.testing.assert_allclose(got, _implicit_gamma(a, x), rtol=5e-3)


def test_gamma_rsample_gradients():
    """d x / d concentration at fixed CDF value; d x / d rate = -x / rate."""
    c = jtorch.tensor([0.4, 3.0], dtype=jtorch.float64, requires_grad=True)
    r = jtorch.tensor([2.0, 0.5], dtype=jtorch.float64, requires_grad=True)
    jtorch.manual_seed(3)
    x = D.Gamma(c, r).rsample((200,))
    gc, gr = jtorch.autograd.grad(x.sum(), (c, r))
    xs = x.detach().numpy()
    std = xs * r.detach().numpy()
    want_c = (_implicit_gamma(np.broadcast_to(c.detach().numpy(), std.shape), std)
              / r.detach().numpy()).sum(0)
    np.testing.assert_allclose(gc.numpy(), want_c, rtol=5e-3)
    np.testing.assert_allclose(gr.numpy(), (-xs / r.detach().numpy()).sum(0), rtol=1e-10)


# -- _sample_dirichlet and _dirichlet_grad ---------------------------------------------------

def test_sample_dirichlet_marginals_are_beta():
    jtorch.manual_seed(2)
    conc = np.array([0.4, 1.5, 3.0])
    n = 5000
    x = jtorch._sample_dirichlet(jtorch.tensor(conc).expand(n, 3)).numpy()
    np.testing.assert_allclose(x.sum(-1), 1.0, rtol=1e-12)
    total = conc.sum()
    for k in range(3):
        stat = _ks(x[:, k], lambda v, k=k: scipy.special.betainc(conc[k], total - conc[k], v))
        assert stat < KS_1PCT / math.sqrt(n), (k, stat)


def test_sample_dirichlet_edges_match_torch():
    for d in ("float32", "float64"):
        a = [[0.0, 1.0], [1e-30, 1e-30], [2.0, 3.0]]
        j = jtorch._sample_dirichlet(jtorch.tensor(a, dtype=getattr(jtorch, d)))
        t = torch._sample_dirichlet(torch.tensor(a, dtype=getattr(torch, d)))
        info = np.finfo(d)
        # concentration 0 draws the smallest normal double, and 1 - that rounds to 1, which
        # is clamped to the float below 1
        assert j.numpy()[0, 1] == t.numpy()[0, 1] == np.nextafter(np.dtype(d).type(1), 0)
        assert info.tiny <= j.numpy()[0, 0] < 1e-300 if d == "float64" else \
            j.numpy()[0, 0] == t.numpy()[0, 0] == info.tiny
        assert np.all(j.numpy() >= info.tiny) and np.all(j.numpy() < 1)
        scalar = jtorch._sample_dirichlet(jtorch.tensor(2.0, dtype=getattr(jtorch, d)))
        assert tuple(scalar.shape) == () and float(scalar) == float(torch._sample_dirichlet(
            torch.tensor(2.0, dtype=getattr(torch, d))))


def _dirichlet_points():
    rng = np.random.default_rng(1)
    pts = [[0.05, 0.5, 1.0], [0.3, 2.0, 5.0], [0.97, 3.0, 3.3], [0.5, 10.0, 20.0],
           [0.333, 10.0, 30.0], [0.2, 1.0, 8.0], [0.6, 0.5, 1.5], [0.9, 4.0, 5.0]]
    alpha = rng.uniform(0.1, 20, 200)
    total = alpha + rng.uniform(0.1, 20, 200)
    x = rng.uniform(0.01, 0.99, 200)
    return np.concatenate([np.array(pts), np.stack([x, alpha, total], 1)])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dirichlet_grad_matches_torch(dtype):
    x, a, tot = _dirichlet_points().T
    j = jtorch._dirichlet_grad(*(jtorch.tensor(v, dtype=getattr(jtorch, dtype)) for v in (x, a, tot)))
    t = torch._dirichlet_grad(*(torch.tensor(v, dtype=getattr(torch, dtype)) for v in (x, a, tot)))
    # torch computes some branches in float32 for float32 inputs; jtorch in float64
    np.testing.assert_allclose(j.numpy(), t.numpy(), rtol=1e-10 if dtype == "float64" else 2e-4,
                               atol=0 if dtype == "float64" else 1e-6)


def _implicit_beta(x, a, b):
    """-(dF/da) / f(x) for the Beta(a, b) CDF F, by central differences."""
    h = 1e-6 * a
    dfda = (scipy.special.betainc(a + h, b, x) - scipy.special.betainc(a - h, b, x)) / (2 * h)
    pdf = np.exp((a - 1) * np.log(x) + (b - 1) * np.log1p(-x) - scipy.special.betaln(a, b))
    return -dfda / pdf


def test_beta_rsample_gradient_is_the_implicit_derivative():
    a = jtorch.tensor([0.7, 2.0, 8.0], dtype=jtorch.float64, requires_grad=True)
    b = jtorch.tensor([1.5, 3.0, 9.0], dtype=jtorch.float64, requires_grad=True)
    jtorch.manual_seed(8)
    x = D.Beta(a, b).rsample((100,))
    ga, gb = jtorch.autograd.grad(x.sum(), (a, b))
    xs = x.detach().numpy()
    an, bn = (np.broadcast_to(v.detach().numpy(), xs.shape) for v in (a, b))
    np.testing.assert_allclose(ga.numpy(), _implicit_beta(xs, an, bn).sum(0), rtol=2e-2)
    # d x / d b of Beta(a, b) is -d(1 - x) / d b of Beta(b, a) at 1 - x
    np.testing.assert_allclose(gb.numpy(), -_implicit_beta(1 - xs, bn, an).sum(0), rtol=2e-2)


def test_dirichlet_rsample_gradient_keeps_the_simplex():
    c = jtorch.tensor([0.5, 2.0, 4.0], dtype=jtorch.float64, requires_grad=True)
    jtorch.manual_seed(0)
    x = D.Dirichlet(c).rsample((7,))
    (g,) = jtorch.autograd.grad(x.sum(), c)  # the sum over the simplex is constant
    np.testing.assert_allclose(g.numpy(), 0.0, atol=1e-10)
    (g,) = jtorch.autograd.grad(D.Dirichlet(c).rsample((50,))[..., 0].sum(), c)
    assert g[0] > 0 and g[1] < 0 and g[2] < 0  # more mass on the first coordinate


# -- poisson ---------------------------------------------------------------------------------

def _pmf_check(samples: np.ndarray, log_pmf, n_sigma=5.0):
    """Each value's frequency within ``n_sigma`` binomial standard errors of its pmf."""
    n = samples.size
    vals = np.arange(samples.min(), samples.max() + 1)
    freq = np.array([(samples == v).sum() for v in vals]) / n
    p = np.exp(log_pmf(vals))
    se = np.sqrt(p * (1 - p) / n) + 1e-9
    bad = np.abs(freq - p) > n_sigma * se + 2.0 / n
    assert not bad.any(), list(zip(vals[bad], freq[bad], p[bad]))


@pytest.mark.parametrize("rate", [0.3, 3.0, 9.5, 10.0, 35.0, 900.0])
def test_poisson_frequencies_match_the_pmf(rate):
    jtorch.manual_seed(4)
    x = jtorch.poisson(jtorch.full((20000,), rate, dtype=jtorch.float64)).numpy()
    assert np.all(x == np.floor(x)) and x.min() >= 0
    pmf = torch.distributions.Poisson(torch.tensor(rate, dtype=torch.float64))
    _pmf_check(x, lambda v: pmf.log_prob(torch.from_numpy(v.astype(np.float64))).numpy())


def test_poisson_dtypes_edges_and_gradient():
    assert float(jtorch.poisson(jtorch.tensor(0.0))) == 0.0
    inf = jtorch.poisson(jtorch.tensor([math.inf]))
    assert inf.tolist() == torch.poisson(torch.tensor([math.inf])).tolist()
    h = jtorch.poisson(jtorch.full((3,), 4.0, dtype=jtorch.float16))
    assert h.dtype is jtorch.float16
    r = jtorch.tensor([2.0, 5.0], requires_grad=True)
    y = jtorch.poisson(r)
    assert type(y.grad_fn).__name__ == "PoissonBackward0"
    y.sum().backward()
    assert r.grad.tolist() == [0.0, 0.0]


# -- binomial --------------------------------------------------------------------------------

@pytest.mark.parametrize("count, prob", [(5, 0.3), (40, 0.1), (100, 0.3), (100, 0.8),
                                         (12, 0.95), (1000, 0.5), (30, 0.5)])
def test_binomial_frequencies_match_the_pmf(count, prob):
    jtorch.manual_seed(6)
    n = 20000
    x = jtorch.binomial(jtorch.full((n,), float(count), dtype=jtorch.float64),
                        jtorch.full((n,), prob, dtype=jtorch.float64)).numpy()
    assert x.min() >= 0 and x.max() <= count and np.all(x == np.floor(x))
    pmf = torch.distributions.Binomial(count, torch.tensor(prob, dtype=torch.float64))
    _pmf_check(x, lambda v: pmf.log_prob(torch.from_numpy(v.astype(np.float64))).numpy())


def test_binomial_edges_and_broadcasting_match_torch():
    count = [0.0, 5.0, -1.0, 3.0, 5.0, 7.0]
    prob = [0.5, 0.0, 0.5, 1.0, math.nan, 1.5]
    j = jtorch.binomial(jtorch.tensor(count), jtorch.tensor(prob))
    t = torch.binomial(torch.tensor(count), torch.tensor(prob))
    np.testing.assert_array_equal(j.numpy(), t.numpy())
    b = jtorch.binomial(jtorch.tensor([3.0, 4.0]), jtorch.tensor([[0.0], [1.0]]))
    assert b.tolist() == [[0.0, 0.0], [3.0, 4.0]]
    p = jtorch.tensor([0.5], requires_grad=True)
    y = jtorch.binomial(jtorch.tensor([3.0]), p)
    with pytest.raises(RuntimeError, match="derivative for aten::binomial is not implemented"):
        y.sum().backward()


def test_samplers_on_meta_tensors_draw_nothing():
    g = jtorch.Generator().manual_seed(1)
    state = g.get_state()
    m = jtorch.ones(2, 3, device="meta")
    for y in (jtorch._standard_gamma(m, generator=g), jtorch.poisson(m, generator=g),
              jtorch._sample_dirichlet(m, generator=g), jtorch.binomial(m, m, generator=g)):
        assert y.is_meta and tuple(y.shape) == (2, 3)
    assert jtorch.equal(g.get_state(), state)


def test_random_samplers_refuse_vmap_in_error_mode():
    x = jtorch.ones(3, 2)
    for fn in (jtorch.poisson, jtorch._standard_gamma):
        with pytest.raises(RuntimeError, match="randomness error mode"):
            jtorch.vmap(fn)(x)
        assert tuple(jtorch.vmap(fn, randomness="different")(x).shape) == (3, 2)
