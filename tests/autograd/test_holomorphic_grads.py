"""Gradients of holomorphic ops on complex inputs: torch's convention ``g * conj(f'(z))``
(the rules are written ``g * f'(z)`` and ``registry.holomorphic`` conjugates around them),
first and second order, against torch; and a real input whose result is complex."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch

_OPS = {
    "exp": lambda L, x: L.exp(x),
    "log": lambda L, x: L.log(x),
    "sin": lambda L, x: L.sin(x),
    "cos": lambda L, x: L.cos(x),
    "sqrt": lambda L, x: L.sqrt(x),
    "reciprocal": lambda L, x: L.reciprocal(x),
    "square": lambda L, x: L.square(x),
    "pow_int": lambda L, x: x ** 3,
    "pow_complex_scalar": lambda L, x: x ** (0.5 + 1j),
    "pow_half": lambda L, x: x ** 0.5,
    "pow_minus_two": lambda L, x: x ** -2,
    "pow_tensor_exponent": lambda L, x: L.pow(x, x.flip(0)),
    "scalar_base": lambda L, x: L.pow(1.5 - 0.5j, x),
    "rsqrt": lambda L, x: L.rsqrt(x),
    "rdiv": lambda L, x: 3 / x,
    "div": lambda L, x: x / x.flip(0),
    **{name: (lambda L, x, n=name: getattr(L, n)(x)) for name in (
        "tan", "tanh", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
        "expm1", "log1p", "log2", "log10", "exp2", "sigmoid")},
    "prod": lambda L, x: L.prod(x),
    "cumprod": lambda L, x: L.cumprod(x, 0),
    "chain": lambda L, x: L.exp(L.sin(x) * x).square(),
}


def _np(t) -> np.ndarray:
    return t.detach().resolve_conj().numpy() if isinstance(t, torch.Tensor) else \
        t.detach().numpy()


@pytest.mark.parametrize("name", list(_OPS))
def test_complex_gradients_are_torchs_to_second_order(name):
    rng = np.random.default_rng(7)
    z = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    fn = _OPS[name]
    grads = []
    for L in (jtorch, torch):
        x = L.from_numpy(z.copy()).requires_grad_()
        out = fn(L, x)
        g = L.from_numpy(np.asarray(rng.standard_normal(tuple(out.shape))
                                    + 1j * rng.standard_normal(tuple(out.shape)), np.complex128))
        (gx,) = L.autograd.grad(out, x, g, create_graph=True)
        (ggx,) = L.autograd.grad((gx.abs() ** 2).sum(), x)
        grads.append((_np(gx), _np(ggx)))
        rng = np.random.default_rng(7)
        rng.standard_normal(12)  # the same upstream gradient for both libraries
    (a, a2), (b, b2) = grads
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a2, b2, rtol=1e-10, atol=1e-10)


def test_a_real_input_of_a_complex_result_gets_the_real_part():
    rng = np.random.default_rng(3)
    r = rng.uniform(0.5, 2.0, 5)
    grads = []
    for L in (jtorch, torch):
        x = L.from_numpy(r.copy()).requires_grad_()
        out = (x * (1 + 2j)).exp()
        (gx,) = L.autograd.grad(out.real.sum() + 3 * out.imag.sum(), x)
        assert gx.dtype == L.float64
        grads.append(_np(gx))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)
