"""Gradients of linalg.eig / eigvals, householder_product / orgqr and non-square LU against
torch's (float64, real and complex, batched), jtorch's gradcheck, torch's errors for losses
that depend on the eigenvectors' phases, and complex matmul's conjugated adjoint."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch
from jtorch.autograd import gradcheck

_RNG = np.random.default_rng(7)


def _mk(*shape, complex_=False):
    a = _RNG.standard_normal(shape)
    return a + 1j * _RNG.standard_normal(shape) if complex_ else a


def _geqrf(shape, complex_=False):
    a, tau = torch.geqrf(torch.from_numpy(_mk(*shape, complex_=complex_)))
    return [a.numpy(), tau.numpy()]


def _tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _cotangent(t):
    shape = tuple(t.shape)
    return _mk(*shape, complex_=t.is_complex())


def _compare(fn, arrays, tol=1e-9):
    """fn(lib, *tensors)'s values and vector-Jacobian products equal torch's."""
    jin = [jtorch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    tin = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    jo, to = _tuple(fn(jtorch, *jin)), _tuple(fn(torch, *tin))
    for a, b in zip(jo, to):
        assert a.grad_fn is not None
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-10)
    cot = [_cotangent(o) for o in to]
    jg = jtorch.autograd.grad(list(jo), jin, [jtorch.from_numpy(c) for c in cot])
    tg = torch.autograd.grad(list(to), tin, [torch.from_numpy(c) for c in cot])
    for a, b in zip(jg, tg):
        assert a.dtype == jtorch.from_numpy(b.numpy()).dtype
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tol, atol=tol)


def _vec_abs(L, a):
    """(eigenvalues, |eigenvectors|): a loss invariant under the eigenvectors' phases."""
    lam, v = L.linalg.eig(a)
    return lam, v.abs()


def _abs2(v):
    return v * v.conj()


CASES = {
    "eigvals": (lambda L, a: L.linalg.eigvals(a), [_mk(2, 4, 4)]),
    "eigvals_complex": (lambda L, a: L.linalg.eigvals(a), [_mk(2, 3, 3, complex_=True)]),
    "eig_abs_vectors": (_vec_abs, [_mk(2, 4, 4)]),
    "eig_abs_vectors_complex": (_vec_abs, [_mk(3, 3, complex_=True)]),
    "eig_values_only": (lambda L, a: L.linalg.eig(a)[0], [_mk(3, 3)]),
    "eig_product": (lambda L, a: _abs2(L.linalg.eig(a)[1]), [_mk(2, 3, 3, complex_=True)]),
    "householder": (lambda L, a, t: L.linalg.householder_product(a, t), _geqrf((2, 5, 3))),
    "householder_square": (lambda L, a, t: L.linalg.householder_product(a, t), _geqrf((4, 4))),
    "householder_short_tau": (lambda L, a, t: L.linalg.householder_product(a, t[..., :2]),
                              _geqrf((2, 5, 3))),
    "householder_complex": (lambda L, a, t: L.linalg.householder_product(a, t),
                            _geqrf((2, 4, 3), complex_=True)),
    "orgqr": (lambda L, a, t: L.orgqr(a, t), _geqrf((5, 3))),
    "orgqr_method": (lambda L, a, t: a.orgqr(t), _geqrf((2, 4, 2), complex_=True)),
    "lu_factor_wide": (lambda L, a: L.linalg.lu_factor(a).LU, [_mk(2, 3, 5)]),
    "lu_factor_tall": (lambda L, a: L.linalg.lu_factor(a).LU, [_mk(2, 5, 3)]),
    "lu_factor_ex_wide": (lambda L, a: L.linalg.lu_factor_ex(a).LU, [_mk(3, 4)]),
    "lu_factor_ex_tall": (lambda L, a: L.linalg.lu_factor_ex(a).LU, [_mk(4, 2)]),
    "lu_factor_wide_complex": (lambda L, a: L.linalg.lu_factor(a).LU,
                               [_mk(2, 3, 4, complex_=True)]),
    "lu_factor_tall_complex": (lambda L, a: L.linalg.lu_factor(a).LU,
                               [_mk(2, 4, 3, complex_=True)]),
    "lu_wide": (lambda L, a: tuple(L.linalg.lu(a))[1:], [_mk(2, 3, 5)]),
    "lu_tall": (lambda L, a: tuple(L.linalg.lu(a))[1:], [_mk(2, 5, 3)]),
    "lu_tall_complex": (lambda L, a: tuple(L.linalg.lu(a))[1:], [_mk(5, 2, complex_=True)]),
    "lu_wide_complex": (lambda L, a: tuple(L.linalg.lu(a))[1:], [_mk(2, 5, complex_=True)]),
    "lu_square": (lambda L, a: tuple(L.linalg.lu(a))[1:], [_mk(2, 3, 3, complex_=True)]),
    "matmul_complex": (lambda L, a, b: a @ b, [_mk(2, 3, 4, complex_=True),
                                               _mk(4, 2, complex_=True)]),
    "mm_complex_transposed": (lambda L, a, b: a.mT @ b.mT, [_mk(4, 3, complex_=True),
                                                           _mk(2, 4, complex_=True)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradients_match_torch(name):
    fn, arrays = CASES[name]
    _compare(fn, arrays)


def _ri(z):
    return z.real, z.imag


def _cplx(fn):
    """fn over a complex matrix built from real inputs (jtorch's gradcheck takes real ones)."""
    return lambda re, im: fn(jtorch.complex(re, im))


GRADCHECKS = {
    "eigvals": (lambda a: _ri(jtorch.linalg.eigvals(a)), [_mk(2, 3, 3)]),
    "eig_abs": (lambda a: jtorch.linalg.eig(a)[1].abs(), [_mk(3, 3)]),
    "eigvals_complex": (_cplx(lambda a: _ri(jtorch.linalg.eigvals(a))),
                        [_mk(2, 3, 3), _mk(2, 3, 3)]),
    "householder": (lambda a, t: jtorch.linalg.householder_product(a, t), _geqrf((2, 5, 3))),
    "lu_factor_wide": (lambda a: jtorch.linalg.lu_factor(a).LU, [_mk(2, 3, 5)]),
    "lu_factor_tall": (lambda a: jtorch.linalg.lu_factor(a).LU, [_mk(2, 5, 3)]),
    "lu_tall": (lambda a: tuple(jtorch.linalg.lu(a))[1:], [_mk(4, 3)]),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_gradcheck(name):
    fn, arrays = GRADCHECKS[name]
    inputs = [jtorch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    assert gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3)


_PHASE = "The eigenvectors in the complex case are specified up to multiplication by e\\^{i phi}"


@pytest.mark.parametrize("lib", [torch, jtorch])
@pytest.mark.parametrize("real_input", [True, False])
def test_eig_loss_on_the_phase_is_ill_defined(lib, real_input):
    x = lib.from_numpy(_mk(3, 3, complex_=not real_input)).requires_grad_()
    loss = lib.linalg.eig(x)[1].imag.sum()
    with pytest.raises(RuntimeError, match="linalg_eig_backward: " + _PHASE):
        loss.backward()


@pytest.mark.parametrize("lib", [torch, jtorch])
def test_eigh_loss_on_the_phase_is_ill_defined(lib):
    a = _mk(3, 3, complex_=True)
    x = lib.from_numpy(a + a.conj().T).requires_grad_()
    loss = lib.linalg.eigh(x)[1].imag.sum()
    with pytest.raises(RuntimeError, match="linalg_eigh_backward: " + _PHASE):
        loss.backward()


def test_real_input_gets_a_real_gradient():
    x = jtorch.from_numpy(_mk(3, 3)).requires_grad_()
    jtorch.linalg.eigvals(x).abs().sum().backward()
    assert x.grad.dtype == jtorch.float64
    assert jtorch.linalg.eig(x)[0].grad_fn.name() == "LinalgEigBackward0"


def test_householder_without_grad_is_lapack_and_with_grad_equal():
    a, t = _geqrf((2, 5, 3))
    plain = jtorch.linalg.householder_product(jtorch.from_numpy(a), jtorch.from_numpy(t))
    rec = jtorch.linalg.householder_product(jtorch.from_numpy(a).requires_grad_(),
                                            jtorch.from_numpy(t))
    assert plain.grad_fn is None and rec.grad_fn is not None
    np.testing.assert_allclose(rec.detach().numpy(), plain.numpy(), rtol=1e-12, atol=1e-12)
    with pytest.raises(RuntimeError, match="tau dtype"):
        jtorch.linalg.householder_product(jtorch.from_numpy(a).requires_grad_(),
                                          jtorch.from_numpy(t).float())


def test_compiled_gradients_equal_eager():
    a = _mk(2, 3, 4)

    def f(x):
        return (jtorch.linalg.eigvals(x[..., :3]).abs().sum()
                + jtorch.linalg.lu_factor(x).LU.sum() + jtorch.linalg.lu_factor(x.mT).LU.sum())

    xs = [jtorch.from_numpy(a.copy()).requires_grad_() for _ in range(2)]
    jtorch.compile(f)(xs[0]).backward()
    f(xs[1]).backward()
    np.testing.assert_allclose(xs[0].grad.numpy(), xs[1].grad.numpy(), rtol=1e-12, atol=1e-12)
