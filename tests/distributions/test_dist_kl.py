"""kl_divergence against torch's for every registered pair (same parameters, broadcast
batches), its gradients, the registry's dispatch (register_kl, ambiguity warning,
NotImplementedError), and a VAE-style step: Normal rsample plus the KL to a standard normal,
backward, with the same weights in jtorch and torch."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from dist_cases import pos, real, simplex, spd, unit

import jtorch
import jtorch.distributions as D

# one instance per family: (class name, args, kwargs), batch shape (3,)
FAMILIES = {
    "Bernoulli": ((), {"probs": unit(3)}),
    "Beta": ((pos(3), pos(3, seed=1)), {}),
    "Binomial": ((np.array([8.0, 8.0, 8.0]),), {"probs": unit(3)}),
    "Categorical": ((), {"probs": simplex(3, 4)}),
    "Cauchy": ((real(3), pos(3)), {}),
    "ContinuousBernoulli": ((), {"probs": unit(3)}),
    "Dirichlet": ((pos(3, 4),), {}),
    "Exponential": ((pos(3),), {}),
    "Gamma": ((pos(3), pos(3, seed=1)), {}),
    "Geometric": ((), {"probs": unit(3)}),
    "Gumbel": ((real(3), pos(3)), {}),
    "HalfNormal": ((pos(3),), {}),
    "Laplace": ((real(3), pos(3)), {}),
    "LowRankMultivariateNormal": ((real(3, 2), real(3, 2, 1), pos(3, 2)), {}),
    "MultivariateNormal": ((real(3, 2),), {"covariance_matrix": spd(3, n=2)}),
    "Normal": ((real(3), pos(3)), {}),
    "OneHotCategorical": ((), {"probs": simplex(3, 4)}),
    "Pareto": ((pos(3), pos(3, lo=2.5, hi=4.0)), {}),
    "Poisson": ((pos(3),), {}),
    "Uniform": ((unit(3) * 0.4, unit(3) * 0.4 + 0.5), {}),
    "LogNormal": ((real(3), pos(3)), {}),
    "Chi2": ((pos(3),), {}),
}


def _make(lib, name, seed):
    args, kwargs = FAMILIES[name]
    rng = np.random.default_rng(seed)

    def conv(v):
        if isinstance(v, np.ndarray) and v.dtype.kind == "f":
            if name in ("Categorical", "OneHotCategorical", "Binomial") or v.ndim == 3:
                w = v  # simplex rows, counts and cov factors as given
            else:
                w = v * rng.uniform(0.8, 1.2, v.shape)  # p and q differ
                if name == "Uniform":
                    w = v + (rng.uniform(-0.05, 0.05, v.shape) if seed else 0)
            return lib.from_numpy(np.ascontiguousarray(w))
        return v

    return getattr(lib.distributions, name)(*[conv(v) for v in args],
                                            **{k: conv(v) for k, v in kwargs.items()})


def _registered_pairs():
    import torch.distributions.kl as tkl

    pairs = []
    for p, q in tkl._KL_REGISTRY:
        if p.__name__ in FAMILIES and q.__name__ in FAMILIES:
            pairs.append((p.__name__, q.__name__))
    pairs += [("LogNormal", "LogNormal"), ("Chi2", "Gamma"), ("Chi2", "Chi2")]
    return sorted(set(pairs))


def _outcome(fn):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(), None
    except Exception as e:  # noqa: BLE001  (the error itself is compared)
        return None, e


@pytest.mark.parametrize("pq", _registered_pairs(), ids=lambda pq: f"{pq[0]}-{pq[1]}")
def test_kl_matches_torch(pq):
    pn, qn = pq
    jp, tp = _make(jtorch, pn, 0), _make(torch, pn, 0)
    jq, tq = _make(jtorch, qn, 1), _make(torch, qn, 1)
    t, te = _outcome(lambda: torch.distributions.kl_divergence(tp, tq))
    j, je = _outcome(lambda: D.kl_divergence(jp, jq))
    if te is not None:
        assert je is not None and type(je) is type(te) and str(je) == str(te), (te, je)
        return
    assert je is None, je
    assert tuple(j.shape) == tuple(t.shape) and str(j.dtype) == str(t.dtype)
    np.testing.assert_allclose(j.numpy(), t.numpy(), rtol=1e-9, atol=1e-12)


def test_kl_registry_covers_torchs_pairs():
    import torch.distributions.kl as tkl

    want = {(p.__name__, q.__name__) for p, q in tkl._KL_REGISTRY}
    got = {(p.__name__, q.__name__) for p, q in D.kl._KL_REGISTRY}
    assert got == want


def test_kl_gradients_match_torch():
    a = np.array([0.3, -1.2])
    s = np.array([0.7, 1.9])
    grads = []
    for lib in (jtorch, torch):
        loc, scale = lib.from_numpy(a.copy()).requires_grad_(), lib.from_numpy(s.copy()).requires_grad_()
        conc = lib.from_numpy(s.copy() + 1).requires_grad_()
        kl = (lib.distributions.kl_divergence(lib.distributions.Normal(loc, scale),
                                              lib.distributions.Normal(0.0, 1.0)).sum()
              + lib.distributions.kl_divergence(lib.distributions.Gamma(conc, scale),
                                                lib.distributions.Gamma(2.0, 1.0)).sum()
              + lib.distributions.kl_divergence(lib.distributions.Dirichlet(conc),
                                                lib.distributions.Dirichlet(scale)).sum())
        grads.append([g.numpy() for g in lib.autograd.grad(kl, (loc, scale, conc))])
    for a_, b_ in zip(*grads):
        np.testing.assert_allclose(a_, b_, rtol=1e-10)


def test_kl_exponential_family_bregman_divergence():
    """Two exponential-family distributions of one type with no closed form registered go
    through the log normaliser (as torch's registry does)."""
    p = D.Exponential(jtorch.tensor([0.5, 2.0], dtype=jtorch.float64))
    q = D.Exponential(jtorch.tensor([1.5, 1.0], dtype=jtorch.float64))
    got = D.kl._kl_expfamily_expfamily(p, q)
    want = D.kl_divergence(p, q)
    np.testing.assert_allclose(got.detach().numpy(), want.numpy(), rtol=1e-12)
    with pytest.raises(NotImplementedError, match="cross KL-divergence"):
        D.kl._kl_expfamily_expfamily(p, D.Poisson(jtorch.tensor([1.0, 2.0])))


def test_kl_dispatch_and_register_kl():
    p, q = D.Normal(0.0, 1.0), D.Normal(1.0, 2.0)
    for lib, pp, qq in ((jtorch, D.Cauchy(0.0, 1.0), D.Normal(0.0, 1.0)),
                        (torch, torch.distributions.Cauchy(0.0, 1.0),
                         torch.distributions.Normal(0.0, 1.0))):
        with pytest.raises(NotImplementedError,
                           match=r"^No KL\(p \|\| q\) is implemented for p type Cauchy and q "
                                 r"type Normal$"):
            lib.distributions.kl_divergence(pp, qq)

    class MyNormal(D.Normal):
        pass

    before = D.kl_divergence(MyNormal(0.0, 1.0), q)  # resolved through Normal-Normal
    np.testing.assert_allclose(before.numpy(), D.kl_divergence(p, q).numpy())

    @D.register_kl(MyNormal, D.Normal)
    def _kl_mine(a, b):
        return jtorch.tensor(42.0)

    try:
        assert float(D.kl_divergence(MyNormal(0.0, 1.0), q)) == 42.0
        assert float(D.kl_divergence(p, q)) != 42.0

        class Other(D.Normal):
            pass

        @D.register_kl(D.Normal, Other)
        def _kl_other(a, b):
            return jtorch.tensor(7.0)

        with pytest.warns(RuntimeWarning, match=r"Ambiguous kl_divergence\(MyNormal, Other\)"):
            D.kl_divergence(MyNormal(0.0, 1.0), Other(0.0, 1.0))
    finally:
        for key in [k for k in D.kl._KL_REGISTRY if "Other" in k[1].__name__ or
                    k[0] is MyNormal]:
            del D.kl._KL_REGISTRY[key]
        D.kl._KL_MEMOIZE.clear()
    assert "KL divergence is currently implemented" in D.kl_divergence.__doc__


# -- a VAE step ------------------------------------------------------------------------------

def _vae_step(lib, weights, x_np, eps_np):
    """Encoder -> Normal(mu, sigma) -> rsample (with the given noise) -> decoder; loss =
    Bernoulli reconstruction log-likelihood + KL to N(0, I); returns loss and grads."""
    w1, b1, w_mu, w_ls, w2, b2 = [lib.from_numpy(w.copy()).requires_grad_() for w in weights]
    x = lib.from_numpy(x_np.copy())
    h = lib.tanh(x @ w1 + b1)
    mu, log_sigma = h @ w_mu, h @ w_ls
    q = lib.distributions.Normal(mu, log_sigma.exp())
    # the same noise in both libraries: rsample's reparameterisation, spelled out, and
    # checked against rsample itself below
    z = q.loc + q.scale * lib.from_numpy(eps_np.copy())
    prior = lib.distributions.Normal(lib.zeros_like(mu), lib.ones_like(mu))
    kl = lib.distributions.kl_divergence(q, prior).sum(-1)
    recon = lib.distributions.Bernoulli(logits=z @ w2 + b2).log_prob(x).sum(-1)
    loss = (kl - recon).mean()
    params = (w1, b1, w_mu, w_ls, w2, b2)
    return loss, lib.autograd.grad(loss, params)


def test_vae_loss_and_gradients_match_torch():
    rng = np.random.default_rng(0)
    d_in, d_h, d_z, n = 6, 5, 2, 8
    weights = [rng.standard_normal(s) * 0.5 for s in ((d_in, d_h), (d_h,), (d_h, d_z),
                                                       (d_h, d_z), (d_z, d_in), (d_in,))]
    x = (rng.uniform(size=(n, d_in)) > 0.5).astype(np.float64)
    eps = rng.standard_normal((n, d_z))
    jl, jg = _vae_step(jtorch, weights, x, eps)
    tl, tg = _vae_step(torch, weights, x, eps)
    np.testing.assert_allclose(jl.item(), tl.item(), rtol=1e-12)
    for a, b in zip(jg, tg):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-13)


def test_vae_with_rsample_trains():
    """The same model with rsample's own noise, in float32 with nn.Linear and an optimiser:
    the loss falls."""
    jtorch.manual_seed(0)
    nn = jtorch.nn
    enc, mu_l, ls_l, dec = nn.Linear(6, 8), nn.Linear(8, 2), nn.Linear(8, 2), nn.Linear(2, 6)
    params = [p for m in (enc, mu_l, ls_l, dec) for p in m.parameters()]
    opt = jtorch.optim.Adam(params, lr=0.05)
    patterns = jtorch.tensor([[1.0, 1, 1, 0, 0, 0], [0.0, 0, 1, 1, 1, 1]])
    x = patterns.repeat(16, 1)  # two clusters: learnable
    losses = []
    for _ in range(60):
        h = jtorch.tanh(enc(x))
        q = D.Normal(mu_l(h), ls_l(h).exp())
        z = q.rsample()
        kl = D.kl_divergence(q, D.Normal(jtorch.zeros_like(z), jtorch.ones_like(z))).sum(-1)
        loss = (kl - D.Bernoulli(logits=dec(z)).log_prob(x).sum(-1)).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert all(p.grad is not None for p in params)
    assert np.mean(losses[-10:]) < 0.5 * np.mean(losses[:5])
