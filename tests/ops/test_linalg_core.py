"""jtorch.linalg's decompositions and solvers against torch: values (float64 tightly, float32
within the conditioning), gradients (gradcheck and torch's own), batches, 0-size batches and
torch's errors (LinAlgError for singular and indefinite matrices; the _ex variants' info)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch
from jtorch.autograd import gradcheck

_RNG = np.random.default_rng(1)


def _mk(*shape):
    return _RNG.standard_normal(shape)


def _spd(L, a):
    return a @ a.mT + L.eye(a.shape[-1], dtype=a.dtype)


def _abs(ts):
    return tuple(t.abs() for t in ts)


# name -> (f(lib, *tensors), input arrays); results compared with torch's, gradients too
CASES = {
    "inv": (lambda L, a: L.linalg.inv(a), [_mk(2, 3, 3)]),
    "inv_ex": (lambda L, a: L.linalg.inv_ex(a).inverse, [_mk(3, 3)]),
    "det": (lambda L, a: L.linalg.det(a), [_mk(2, 3, 3)]),
    "slogdet": (lambda L, a: tuple(L.linalg.slogdet(a)), [_mk(2, 3, 3)]),
    "logdet": (lambda L, a: L.logdet(_spd(L, a)), [_mk(3, 3)]),
    "solve": (lambda L, a, b: L.linalg.solve(a, b), [_mk(2, 3, 3), _mk(2, 3, 2)]),
    "solve_vector_broadcast": (lambda L, a, b: L.linalg.solve(a, b), [_mk(2, 3, 3), _mk(3)]),
    "solve_right": (lambda L, a, b: L.linalg.solve(a, b, left=False), [_mk(3, 3), _mk(2, 3)]),
    "cholesky": (lambda L, a: L.linalg.cholesky(_spd(L, a)), [_mk(2, 3, 3)]),
    "cholesky_upper": (lambda L, a: L.linalg.cholesky(_spd(L, a), upper=True), [_mk(3, 3)]),
    "solve_triangular": (lambda L, a, b: L.linalg.solve_triangular(
        a.triu() + 3 * L.eye(3, dtype=a.dtype), b, upper=True), [_mk(3, 3), _mk(3, 2)]),
    "solve_triangular_right_unit": (lambda L, a, b: L.linalg.solve_triangular(
        a, b, upper=False, left=False, unitriangular=True), [_mk(3, 3), _mk(2, 3)]),
    "qr_tall": (lambda L, a: tuple(L.linalg.qr(a)), [_mk(4, 3)]),
    "qr_wide": (lambda L, a: tuple(L.linalg.qr(a)), [_mk(3, 5)]),
    "qr_complete": (lambda L, a: tuple(L.linalg.qr(a, mode="complete")), [_mk(2, 3, 3)]),
    "eigvalsh": (lambda L, a: L.linalg.eigvalsh(a + a.mT), [_mk(2, 3, 3)]),
    "eigh_abs": (lambda L, a: _abs(L.linalg.eigh(a + a.mT, UPLO="U")), [_mk(3, 3)]),
    "svd_tall": (lambda L, a: _abs(L.linalg.svd(a, full_matrices=False)), [_mk(4, 3)]),
    "svd_wide": (lambda L, a: _abs(L.linalg.svd(a, full_matrices=False)), [_mk(2, 3, 5)]),
    "svdvals_full": (lambda L, a: L.linalg.svd(a)[1], [_mk(4, 3)]),
    "lu_factor": (lambda L, a: L.linalg.lu_factor(a)[0], [_mk(2, 3, 3)]),
    "lu": (lambda L, a: tuple(L.linalg.lu(a)[1:]), [_mk(3, 3)]),
    "lu_solve": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b),
                 [_mk(3, 3), _mk(3, 2)]),
    "lu_solve_adjoint": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b,
                                                           adjoint=True), [_mk(3, 3), _mk(3, 2)]),
    "lu_solve_right": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b, left=False),
                       [_mk(3, 3), _mk(2, 3)]),
    "matrix_exp": (lambda L, a: L.linalg.matrix_exp(a), [_mk(2, 3, 3)]),
    "matrix_exp_scaled": (lambda L, a: L.linalg.matrix_exp(a * 4), [_mk(3, 3)]),
    "matrix_power": (lambda L, a: L.linalg.matrix_power(a, -3), [_mk(3, 3)]),
    "pinv": (lambda L, a: L.linalg.pinv(a), [_mk(4, 3)]),
    "pinv_hermitian": (lambda L, a: L.linalg.pinv(a + a.mT, hermitian=True), [_mk(3, 3)]),
    "lstsq": (lambda L, a, b: L.linalg.lstsq(a, b).solution, [_mk(5, 3), _mk(5, 2)]),
    "cholesky_solve": (lambda L, a, b: L.cholesky_solve(b, L.linalg.cholesky(_spd(L, a))),
                       [_mk(3, 3), _mk(3, 2)]),
    "cholesky_inverse": (lambda L, a: L.cholesky_inverse(L.linalg.cholesky(_spd(L, a))),
                         [_mk(3, 3)]),
    "tensorinv": (lambda L, a: L.linalg.tensorinv(a, 1), [_mk(4, 2, 2)]),
    "tensorsolve": (lambda L, a, b: L.linalg.tensorsolve(a, b), [_mk(2, 3, 6), _mk(2, 3)]),
    "cond": (lambda L, a: L.linalg.cond(a), [_mk(3, 3)]),
    "triangular_solve": (lambda L, b, a: L.triangular_solve(b, a + 3 * L.eye(3, dtype=a.dtype))
                         .solution, [_mk(3, 2), _mk(3, 3)]),
}


def _tuple(x):
    return x if isinstance(x, tuple) else (x,)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_and_gradients_match_torch(name):
    fn, arrays = CASES[name]
    jin = [jtorch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    tin = [torch.from_numpy(a.copy()).requires_grad_() for a in arrays]
    jo, to = _tuple(fn(jtorch, *jin)), _tuple(fn(torch, *tin))
    for a, b in zip(jo, to):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-11)
    rng = np.random.default_rng(5)
    cot = [rng.standard_normal(tuple(o.shape)) for o in to]
    jg = jtorch.autograd.grad(list(jo), jin, [jtorch.from_numpy(c) for c in cot])
    tg = torch.autograd.grad(list(to), tin, [torch.from_numpy(c) for c in cot])
    for a, b in zip(jg, tg):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-8, atol=1e-9)
    assert gradcheck(lambda *x: fn(jtorch, *x), jin, eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("name", ["inv", "det", "solve", "cholesky", "qr_tall", "svd_tall",
                                  "matrix_exp", "eigvalsh", "pinv"])
def test_float32_within_tolerance(name):
    fn, arrays = CASES[name]
    jo = _tuple(fn(jtorch, *[jtorch.from_numpy(a.astype(np.float32)) for a in arrays]))
    to = _tuple(fn(torch, *[torch.from_numpy(a.astype(np.float32)) for a in arrays]))
    for a, b in zip(jo, to):
        assert a.dtype == jtorch.float32
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-4)


def test_eigh_vectors_up_to_sign_and_eig():
    a = _mk(2, 4, 4)
    a = a + np.swapaxes(a, -1, -2)
    w, v = jtorch.linalg.eigh(jtorch.from_numpy(a))
    tw, tv = torch.linalg.eigh(torch.from_numpy(a))
    np.testing.assert_allclose(w.numpy(), tw.numpy(), atol=1e-12)
    np.testing.assert_allclose(np.abs(v.numpy()), np.abs(tv.numpy()), atol=1e-10)
    b = _mk(3, 3)
    ev, vec = jtorch.linalg.eig(jtorch.from_numpy(b))
    assert ev.dtype == jtorch.complex128
    np.testing.assert_allclose(b @ vec.numpy(), vec.numpy() * ev.numpy(), atol=1e-12)
    np.testing.assert_allclose(np.sort_complex(ev.numpy()),
                               np.sort_complex(torch.linalg.eigvals(torch.from_numpy(b)).numpy()),
                               atol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda L, a: L.linalg.inv(a), lambda L, a: L.linalg.det(a),
    lambda L, a: L.linalg.slogdet(a)[1], lambda L, a: L.linalg.cholesky(a),
    lambda L, a: L.linalg.eigvalsh(a), lambda L, a: L.linalg.qr(a)[1],
    lambda L, a: L.linalg.svd(a)[0], lambda L, a: L.linalg.matrix_exp(a)])
@pytest.mark.parametrize("shape", [(0, 3, 3), (2, 0, 0), (2, 1, 3, 3)])
def test_batched_and_empty_shapes(fn, shape):
    a = np.eye(shape[-1]) * 2 + np.zeros(shape)
    jo, to = fn(jtorch, jtorch.from_numpy(a)), fn(torch, torch.from_numpy(a))
    assert tuple(jo.shape) == tuple(to.shape)
    np.testing.assert_allclose(jo.numpy(), to.numpy(), atol=1e-12)


def _error(fn, lib, *arrays):
    try:
        fn(lib, *[lib.from_numpy(a.copy()) for a in arrays])
    except Exception as e:  # noqa: BLE001  (the error itself is compared)
        return e
    return None


SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
BATCH = np.stack([np.eye(2), SINGULAR])


@pytest.mark.parametrize("fn,arrays", [
    (lambda L, a: L.linalg.inv(a), [SINGULAR]),
    (lambda L, a: L.linalg.inv(a), [BATCH]),
    (lambda L, a: L.linalg.inv(a), [np.ones((2, 3))]),
    (lambda L, a: L.linalg.inv(a), [np.ones(3)]),
    (lambda L, a: L.linalg.det(a), [np.ones((2, 3))]),
    (lambda L, a: L.linalg.cholesky(a), [-np.eye(3)]),
    (lambda L, a: L.linalg.cholesky(a), [np.stack([np.eye(2), SINGULAR])]),
    (lambda L, a: L.linalg.solve(a, a[..., 0]), [SINGULAR]),
    (lambda L, a: L.linalg.solve(a, a[..., 0]), [BATCH]),
    (lambda L, a: L.linalg.solve(a, a[:1, 0]), [np.eye(3)]),
    (lambda L, a: L.linalg.eigh(a), [np.ones((2, 3))]),
    (lambda L, a: L.linalg.eigh(a, UPLO="X"), [np.eye(2)]),
    (lambda L, a: L.linalg.qr(a, mode="x"), [np.eye(2)]),
    (lambda L, a: L.linalg.svd(a), [np.ones(2)]),
    (lambda L, a: L.linalg.inv(a.long()), [np.eye(2)]),
    (lambda L, a: L.solve(a, a), [np.eye(2)]),
])
def test_errors_match_torch(fn, arrays):
    je, te = _error(fn, jtorch, *arrays), _error(fn, torch, *arrays)
    assert te is not None and je is not None, (je, te)
    assert str(je) == str(te)
    assert isinstance(je, RuntimeError)
    assert isinstance(je, jtorch.linalg.LinAlgError) == isinstance(te, torch.linalg.LinAlgError)


def test_ex_variants_return_info():
    j = jtorch.linalg.inv_ex(jtorch.from_numpy(BATCH))
    t = torch.linalg.inv_ex(torch.from_numpy(BATCH))
    np.testing.assert_array_equal(j.info.numpy(), t.info.numpy())
    assert j.info.dtype == jtorch.int32
    c = jtorch.linalg.cholesky_ex(jtorch.from_numpy(-np.eye(3)))
    assert int(c.info) == int(torch.linalg.cholesky_ex(torch.from_numpy(-np.eye(3))).info) == 1
    s = jtorch.linalg.solve_ex(jtorch.from_numpy(BATCH), jtorch.ones(2, 2, dtype=jtorch.float64))
    assert s.info.tolist()[0] == 0 and s.info.tolist()[1] > 0
    lu = jtorch.linalg.lu_factor_ex(jtorch.from_numpy(SINGULAR))
    tlu = torch.linalg.lu_factor_ex(torch.from_numpy(SINGULAR))
    assert int(lu.info) == int(tlu.info)
    np.testing.assert_array_equal(lu.pivots.numpy(), tlu.pivots.numpy())


def test_lstsq_fields_and_top_level_spellings():
    a, b = _mk(5, 3), _mk(5, 2)
    for driver in ("gelsy", "gelsd", "gelss", "gels"):
        j = jtorch.linalg.lstsq(jtorch.from_numpy(a), jtorch.from_numpy(b), driver=driver)
        t = torch.linalg.lstsq(torch.from_numpy(a), torch.from_numpy(b), driver=driver)
        for f in ("solution", "residuals", "rank", "singular_values"):
            x, y = getattr(j, f), getattr(t, f)
            assert tuple(x.shape) == tuple(y.shape), (driver, f)
            np.testing.assert_allclose(x.numpy(), y.numpy(), atol=1e-10)
    x = _mk(4, 3)
    _u, _s, v = jtorch.svd(jtorch.from_numpy(x))
    _tu, _ts, tv = torch.svd(torch.from_numpy(x))
    np.testing.assert_allclose(np.abs(v.numpy()), np.abs(tv.numpy()), atol=1e-12)
    g, tau = jtorch.geqrf(jtorch.from_numpy(x))
    tg, ttau = torch.geqrf(torch.from_numpy(x))
    np.testing.assert_allclose(np.abs(g.numpy()), np.abs(tg.numpy()), atol=1e-12)
    q = jtorch.orgqr(g, tau)
    np.testing.assert_allclose(np.abs(q.numpy()), np.abs(torch.orgqr(tg, ttau).numpy()), atol=1e-12)
    c = _mk(4, 2)
    np.testing.assert_allclose(
        jtorch.ormqr(g, tau, jtorch.from_numpy(c), transpose=True).numpy(),
        torch.ormqr(tg, ttau, torch.from_numpy(c), transpose=True).numpy(), atol=1e-12)
    p, lo, up = jtorch.lu_unpack(*jtorch.linalg.lu_factor(jtorch.from_numpy(_mk(3, 4))))
    np.testing.assert_allclose((p @ lo @ up).numpy().shape, (3, 4))
    m = jtorch.from_numpy(_mk(3, 3))
    assert int(jtorch.linalg.matrix_rank(m)) == 3
    np.testing.assert_allclose(m.det().item(), torch.from_numpy(m.numpy()).det().item())
    np.testing.assert_allclose(jtorch.linalg.vander(jtorch.tensor([1.0, 2, 3]), N=4).numpy(),
                               torch.linalg.vander(torch.tensor([1.0, 2, 3]), N=4).numpy())
