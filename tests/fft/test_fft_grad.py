"""Gradients of jtorch.fft: each transform's vector-Jacobian product equals torch's for random
(complex, where the output is) cotangents, in torch's convention for complex tensors (the
conjugate Wirtinger gradient); the three FFT OpDefs' rules pass the adjoint identity
<g, A v> = <A^H g, v> exactly where the transform is linear over the complex numbers; real
compositions pass gradcheck and gradgradcheck; gradients of the parts of a complex result
(real, imag, abs) flow back."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import jtorch
from jtorch.autograd import gradcheck, gradgradcheck
from jtorch.kernels.defs import fft as F

_rng = np.random.default_rng(7)


def _arr(shape, complex_: bool) -> np.ndarray:
    a = _rng.standard_normal(shape)
    return a + 1j * _rng.standard_normal(shape) if complex_ else a


def _vjp_matches_torch(fn: str, shape: tuple, complex_in: bool, kw: dict) -> None:
    a = _arr(shape, complex_in)
    tx = torch.from_numpy(a.copy()).requires_grad_()
    try:
        ty = getattr(torch.fft, fn)(tx, **kw)
    except RuntimeError:
        return  # torch's argument errors are tested in test_fft_transforms.py
    jx = jtorch.from_numpy(a.copy()).requires_grad_()
    jy = getattr(jtorch.fft, fn)(jx, **kw)
    g = _arr(tuple(ty.shape), ty.dtype.is_complex)
    (tg,) = torch.autograd.grad(ty, tx, torch.from_numpy(g.copy()))
    (jg,) = jtorch.autograd.grad(jy, jx, jtorch.from_numpy(g.copy()))
    assert str(jg.dtype) == str(tg.dtype)
    want = tg.resolve_conj().numpy()
    np.testing.assert_allclose(jg.numpy(), want, atol=1e-10 * max(1.0, np.abs(want).max()))


@pytest.mark.parametrize("fn", ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"))
def test_one_dim_gradients_match_torch(fn):
    for complex_in, n, dim, norm in itertools.product((False, True), (None, 3, 4, 9), (-1, 0),
                                                      (None, "ortho", "forward")):
        _vjp_matches_torch(fn, (5, 6), complex_in, {"n": n, "dim": dim, "norm": norm})


@pytest.mark.parametrize("fn", ("fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn",
                                "fft2", "irfft2", "ihfft2"))
def test_n_dim_gradients_match_torch(fn):
    forms = [(None, None), ((3, 4), None), (None, (0, 2)), ((5, -1), (2, 0)), ((2,), (1,)),
             ((6, 3, 2), None), ((3, 7), (-1, -2))]
    for complex_in, (s, dim), norm in itertools.product((False, True), forms,
                                                        (None, "ortho", "forward")):
        if fn.endswith("2") and (dim is None and s is not None and len(s) != 2):
            continue
        kw = {"s": s, "norm": norm} if dim is None and fn.endswith("2") else \
            {"s": s, "dim": dim, "norm": norm}
        _vjp_matches_torch(fn, (3, 4, 5), complex_in, kw)


def _inner(a: np.ndarray, b: np.ndarray) -> complex:
    return complex(np.vdot(a, b))  # sum(conj(a) * b)


@pytest.mark.parametrize("forward", (True, False))
@pytest.mark.parametrize("norm", (F.NORM_NONE, F.NORM_BY_ROOT_N, F.NORM_BY_N))
def test_c2c_rule_is_the_adjoint(forward, norm):
    """c2c is complex-linear: its rule must be its exact adjoint."""
    v = _arr((3, 4, 5), True)
    g = _arr((3, 4, 5), True)
    x = jtorch.from_numpy(v.copy()).requires_grad_()
    y = F.c2c(x, (0, 2), norm, forward)
    (gx,) = jtorch.autograd.grad(y, x, jtorch.from_numpy(g.copy()))
    lhs = _inner(g, y.detach().numpy())
    rhs = _inner(gx.numpy(), v)
    assert abs(lhs - rhs) < 1e-10 * abs(lhs)


@pytest.mark.parametrize("forward", (True, False))
@pytest.mark.parametrize("onesided", (True, False))
@pytest.mark.parametrize("n", (6, 7))
def test_r2c_rule_is_the_adjoint(forward, onesided, n):
    """r2c is real-linear: Re<g, A v> = <A^T g, v> over real v."""
    v = _arr((3, n), False)
    x = jtorch.from_numpy(v.copy()).requires_grad_()
    y = F.r2c(x, (0, 1) if forward else (1,), F.NORM_BY_ROOT_N, onesided, forward)
    g = _arr(tuple(y.shape), True)
    (gx,) = jtorch.autograd.grad(y, x, jtorch.from_numpy(g.copy()))
    lhs = _inner(g, y.detach().numpy()).real
    assert abs(lhs - float(np.dot(gx.numpy().ravel(), v.ravel()))) < 1e-10 * abs(lhs)


def test_gradcheck_of_real_compositions():
    def r(*shape, seed=0):
        a = np.random.default_rng(seed).standard_normal(shape)
        return jtorch.from_numpy(a).requires_grad_()

    fns = [
        (lambda x: jtorch.fft.irfft(jtorch.fft.rfft(x, n=9) * jtorch.fft.rfft(x, n=9), n=7),
         [r(2, 5)]),
        (lambda a, b: jtorch.fft.hfft(jtorch.complex(a, b), n=7, dim=0, norm="ortho"),
         [r(4, 3), r(4, 3, seed=1)]),
        (lambda a, b: jtorch.fft.irfftn(jtorch.fft.ifftn(jtorch.complex(a, b), s=(3, 5)),
                                        s=(2, 4)), [r(3, 4), r(3, 4, seed=1)]),
        (lambda x: jtorch.fft.rfft2(x, s=(3, 6)).abs(), [r(2, 4)]),
        (lambda x: jtorch.fft.fft(x).real + jtorch.fft.ihfftn(x, s=(2, 8)).imag.sum(), [r(2, 5)]),
    ]
    for fn, inputs in fns:
        assert gradcheck(fn, inputs, eps=1e-6, atol=1e-6, rtol=1e-4)
    for fn, inputs in fns[:3]:
        assert gradgradcheck(fn, inputs, eps=1e-6, atol=1e-6, rtol=1e-4)


def test_gradients_of_a_spectrum_s_parts_match_torch():
    """A spectral loss: |rfft(x)|, the power spectrum, real and imaginary parts, a filter."""
    a = _arr((2, 16), False)
    h = _arr((9,), True)
    losses = [
        lambda T, x: T.fft.rfft(x).abs().sum(),
        lambda T, x: (T.fft.rfft(x) * T.fft.rfft(x).conj()).real.sum(),
        lambda T, x: T.fft.fft(x).imag.pow(2).sum() + T.fft.fft(x).real.sum(),
        lambda T, x: T.fft.irfft(T.fft.rfft(x) * T.from_numpy(h), n=16).pow(2).sum(),
        lambda T, x: (T.fft.rfft(x) / (1 + 1j)).abs().sum(),
    ]
    for loss in losses:
        tx = torch.from_numpy(a.copy()).requires_grad_()
        jx = jtorch.from_numpy(a.copy()).requires_grad_()
        loss(torch, tx).backward()
        loss(jtorch, jx).backward()
        np.testing.assert_allclose(jx.grad.numpy(), tx.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_grad_fn_names_are_torchs():
    x = jtorch.ones(4, requires_grad=True)
    assert type(jtorch.fft.rfft(x).grad_fn).__name__ == "FftR2CBackward0"
    z = jtorch.fft.fft(jtorch.complex(x, x))
    assert type(z.grad_fn).__name__ == "FftC2CBackward0"
    assert type(jtorch.fft.irfft(z).grad_fn).__name__ == "FftC2RBackward0"


def test_compiled_transform_and_gradient_match_eager():
    x = jtorch.from_numpy(_arr((4, 6), False)).requires_grad_()

    def f(x):
        return jtorch.fft.irfft(jtorch.fft.rfft(x, n=8) * 2, n=6).pow(2).sum()

    eager = f(x)
    (ge,) = jtorch.autograd.grad(eager, x)
    compiled = jtorch.compile(f)(x)
    (gc,) = jtorch.autograd.grad(compiled, x)
    np.testing.assert_allclose(compiled.item(), eager.item(), rtol=1e-12)
    np.testing.assert_allclose(gc.numpy(), ge.numpy(), rtol=1e-12, atol=1e-12)
