"""The exponent's gradient of a Python-number base raised to a tensor: log(base) times the
result, with torch's values where the log has none (nan for a negative base; 0 or -inf for a
zero base)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch


@pytest.mark.parametrize("base", [3.0, 0.5, 0.0, -2.0, -0.5, 2])
def test_scalar_base_exponent_gradient_matches_torch(base):
    e = [0.5, 0.0, -1.0, 2.0]
    grads = []
    for lib in (torch, jtorch):
        x = lib.tensor(e, dtype=lib.float64, requires_grad=True)
        (base ** x).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12, equal_nan=True)
