"""Per-example gradients stay differentiable: vmap(grad(f)) then autograd.grad of a penalty on
them (gradient-norm penalties) equals torch's, through ops whose gradient rules read their
saved outputs (exp, tanh, sigmoid, softmax, logsumexp, cross_entropy) and with nn.Parameter
weights passed through functional_call."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch

_FNS = {
    "exp": lambda L, w, xi: (w @ xi).exp().sum(),
    "tanh": lambda L, w, xi: (w @ xi).tanh().sum(),
    "sigmoid": lambda L, w, xi: (w @ xi).sigmoid().sum(),
    "softmax": lambda L, w, xi: L.softmax(w @ xi, 0)[0],
    "logsumexp": lambda L, w, xi: L.logsumexp(w @ xi, 0),
    "sin": lambda L, w, xi: (w @ xi).sin().sum(),
}


@pytest.mark.parametrize("name", sorted(_FNS))
def test_penalty_on_per_example_gradients_matches_torch(name):
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((2, 3)).astype(np.float32)
    x = rng.standard_normal((5, 3)).astype(np.float32)
    res = []
    for L in (torch, jtorch):
        w = L.tensor(w0, requires_grad=True)
        g = L.func.vmap(L.func.grad(lambda w, xi: _FNS[name](L, w, xi)), in_dims=(None, 0))(
            w, L.tensor(x))
        res.append(L.autograd.grad((g ** 2).sum(), w)[0].numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=1e-4, atol=1e-5)


def test_penalty_through_functional_call_with_parameters_matches_torch():
    res = []
    for L in (torch, jtorch):
        L.manual_seed(0)
        m = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Tanh(), L.nn.Linear(4, 2))
        params = dict(m.named_parameters())  # nn.Parameter values
        x, y = L.randn(5, 3), L.tensor([0, 1, 1, 0, 1])

        def loss(p, xi, yi):
            out = L.func.functional_call(m, p, (xi.unsqueeze(0),))
            return L.nn.functional.cross_entropy(out, yi.unsqueeze(0))

        g = L.func.vmap(L.func.grad(loss), in_dims=(None, 0, 0))(params, x, y)
        pen = sum((v ** 2).sum() for v in g.values())
        res.append([t.numpy() for t in L.autograd.grad(pen, list(params.values()))])
    for got, want in zip(res[1], res[0]):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
