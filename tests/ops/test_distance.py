"""cdist, pairwise_distance, cosine_similarity against torch: values and gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import jtorch


def _grads_match(fn, arrays, rtol=1e-6, atol=1e-8):
    j_in = [jtorch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    t_in = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    j, t = fn(jtorch, *j_in), fn(torch, *t_in)
    assert tuple(j.shape) == tuple(t.shape) and str(j.dtype) == str(t.dtype)
    np.testing.assert_allclose(j.detach().numpy(), t.detach().numpy(), rtol=1e-7, atol=1e-7)
    g = np.random.default_rng(1).standard_normal(tuple(t.shape))
    jg = jtorch.autograd.grad(j, j_in, jtorch.from_numpy(g.copy()))
    tg = torch.autograd.grad(t, t_in, torch.from_numpy(g.copy()))
    for a, b in zip(jg, tg):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol)


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, 0.5, math.inf])
@pytest.mark.parametrize("shapes", [((3, 4), (5, 4)), ((2, 30, 4), (2, 28, 4)), ((2, 3, 4), (3, 4))])
def test_cdist(p, shapes):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    if a.ndim == b.ndim:
        b[..., 0, :] = a[..., 0, :]  # a zero distance: torch's gradient there is 0
    _grads_match(lambda m, x, y: m.cdist(x, y, p), [a, b])


def test_cdist_compute_modes_and_errors():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((5, 3))
    for mode in ("use_mm_for_euclid_dist", "donot_use_mm_for_euclid_dist"):
        _grads_match(lambda m, x, y: m.cdist(x, y, compute_mode=mode), [a, b])
    for m in (jtorch, torch):
        with pytest.raises(RuntimeError, match="X1 and X2 must have the same number of columns. "
                                               "X1: 4 X2: 3"):
            m.cdist(m.ones(3, 4), m.ones(5, 3))
        with pytest.raises(RuntimeError, match="cdist only supports at least 2D tensors, X1 got: "
                                               "1D"):
            m.cdist(m.ones(4), m.ones(4))
        with pytest.raises(RuntimeError, match="cdist only supports non-negative p values"):
            m.cdist(m.ones(3, 4), m.ones(5, 4), p=-1)


def test_pairwise_distance_and_cosine_similarity():
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4,))
    _grads_match(lambda m, x, y: m.nn.functional.pairwise_distance(x, y), [a, b])
    _grads_match(lambda m, x, y: m.nn.functional.pairwise_distance(x, y, p=1, keepdim=True),
                 [a, b])
    _grads_match(lambda m, x, y: m.nn.functional.cosine_similarity(x, y), [a, b])
    _grads_match(lambda m, x, y: m.cosine_similarity(x, y, dim=0), [a.T.copy(), a.T.copy()])
