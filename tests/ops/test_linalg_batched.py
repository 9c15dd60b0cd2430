"""jtorch.linalg on batches large enough to run over Numba's threads (one LAPACK call per
matrix, BLAS serial in each), against torch: values, dtypes, non-square shapes, and the errors
and ``info`` of a singular or indefinite matrix in the middle of the batch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import random_array

import jtorch
from jtorch import _threads

_B, _N = 24, 32  # 24 * 32^3 multiply-adds: above the parallel grain

_DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


_mk = random_array


def _square(dtype, b=_B, n=_N):
    return _mk(b, n, n, dtype=dtype) + n * np.eye(n, dtype=dtype)


def _spd(dtype, b=_B, n=_N):
    a = _mk(b, n, n, dtype=dtype)
    return (a @ np.conj(np.swapaxes(a, -1, -2)) / n + np.eye(n, dtype=dtype)).astype(dtype)


def _tol(dtype):
    return 2e-3 if dtype in (np.float32, np.complex64) else 1e-9


def _close(j, t, dtype):
    np.testing.assert_allclose(j.numpy(), t.numpy(), rtol=_tol(dtype), atol=_tol(dtype))


@pytest.fixture(autouse=True)
def _parallel_path(monkeypatch):
    """Every batch here takes the threaded kernels (the test fails if the rule changes), from
    the grain of 2^17 elements of work these batches were sized for."""
    from jtorch.kernels.cpu import lapack_entries

    monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 1 << 17)

    calls = []
    run = lapack_entries._run

    def spy(name, a3, *args):
        calls.append(a3.shape[0] > 1 and _threads.use_parallel(a3[0].size * min(a3.shape[1:])
                                                                  * a3.shape[0]))
        return run(name, a3, *args)

    monkeypatch.setattr(lapack_entries, "_run", spy)
    yield
    assert calls and all(calls)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_solve_inv_det_slogdet(dtype):
    a, b = _square(dtype), _mk(_B, _N, 3, dtype=dtype, seed=1)
    ja, jb, ta, tb = jtorch.from_numpy(a), jtorch.from_numpy(b), torch.from_numpy(a), torch.from_numpy(b)
    _close(jtorch.linalg.solve(ja, jb), torch.linalg.solve(ta, tb), dtype)
    _close(jtorch.linalg.inv(ja), torch.linalg.inv(ta), dtype)
    jd, td = jtorch.linalg.det(ja), torch.linalg.det(ta)
    np.testing.assert_allclose(jd.numpy(), td.numpy(), rtol=_tol(dtype) * 10)
    js, jl = jtorch.linalg.slogdet(ja)
    ts, tl = torch.linalg.slogdet(ta)
    _close(js, ts, dtype)
    _close(jl, tl, dtype)
    assert jd.dtype == getattr(jtorch, str(td.dtype).split(".")[1])


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky(dtype, upper):
    a = _spd(dtype)
    # garbage in the triangle that is not read
    tri = np.tril if upper else np.triu
    a = a + tri(_mk(_B, _N, _N, dtype=dtype, seed=2), 1 if not upper else -1)
    j = jtorch.linalg.cholesky(jtorch.from_numpy(a), upper=upper)
    t = torch.linalg.cholesky(torch.from_numpy(a), upper=upper)
    _close(j, t, dtype)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("shape", [(_N, _N), (_N + 8, _N), (_N, _N + 8)])
@pytest.mark.parametrize("full", [False, True])
def test_svd(dtype, shape, full):
    a = _mk(_B, *shape, dtype=dtype)
    u, s, vh = jtorch.linalg.svd(jtorch.from_numpy(a), full_matrices=full)
    tu, ts, tvh = torch.linalg.svd(torch.from_numpy(a), full_matrices=full)
    assert u.shape == tu.shape and s.shape == ts.shape and vh.shape == tvh.shape
    assert u.dtype == getattr(jtorch, str(tu.dtype).split(".")[1])
    _close(s, ts, dtype)
    k = min(shape)
    un, vn, sn = u.numpy(), vh.numpy(), s.numpy()
    rec = (un[..., :k] * sn[..., None, :]) @ vn[..., :k, :]
    np.testing.assert_allclose(rec, a, rtol=_tol(dtype) * 5, atol=_tol(dtype) * 5)
    for q in (un, np.conj(np.swapaxes(vn, -1, -2))):
        eye = np.conj(np.swapaxes(q, -1, -2)) @ q
        np.testing.assert_allclose(eye, np.broadcast_to(np.eye(q.shape[-1]), eye.shape),
                                   atol=_tol(dtype) * 5)


@pytest.mark.parametrize("dtype", _DTYPES)
def test_eigh_qr_lu_factor(dtype):
    a = _spd(dtype)
    jw, jv = jtorch.linalg.eigh(jtorch.from_numpy(a))
    tw, _ = torch.linalg.eigh(torch.from_numpy(a))
    _close(jw, tw, dtype)
    v = jv.numpy()
    rec = (v * jw.numpy()[..., None, :]) @ np.conj(np.swapaxes(v, -1, -2))
    np.testing.assert_allclose(rec, a, rtol=_tol(dtype) * 5, atol=_tol(dtype) * 5)
    g = _mk(_B, _N + 4, _N, dtype=dtype)
    for j, t in zip(jtorch.linalg.qr(jtorch.from_numpy(g)), torch.linalg.qr(torch.from_numpy(g))):
        np.testing.assert_allclose(np.abs(j.numpy()), np.abs(t.numpy()), rtol=_tol(dtype) * 5,
                                   atol=_tol(dtype) * 5)
    lu, piv = jtorch.linalg.lu_factor(jtorch.from_numpy(g))
    tlu, tpiv = torch.linalg.lu_factor(torch.from_numpy(g))
    _close(lu, tlu, dtype)
    assert np.array_equal(piv.numpy(), tpiv.numpy())


def _singular_at(dtype, k=5):
    a = _square(dtype)
    a[k, :, 3] = 0  # a zero column: exactly singular
    return a


@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_errors_and_info_of_one_bad_matrix(dtype):
    a = _singular_at(dtype)
    ja, ta = jtorch.from_numpy(a), torch.from_numpy(a)
    for fn in (lambda L, x: L.linalg.inv(x), lambda L, x: L.linalg.solve(x, x)):
        with pytest.raises(torch.linalg.LinAlgError) as te:
            fn(torch, ta)
        with pytest.raises(jtorch.linalg.LinAlgError) as je:
            fn(jtorch, ja)
        assert str(je.value) == str(te.value)
    ji, jinfo = jtorch.linalg.inv_ex(ja)
    ti, tinfo = torch.linalg.inv_ex(ta)
    assert np.array_equal(jinfo.numpy(), tinfo.numpy())
    ok = np.arange(_B) != 5
    _close(ji[jtorch.from_numpy(ok)], ti[torch.from_numpy(ok)], dtype)
    assert float(jtorch.linalg.det(ja)[5].abs()) == 0.0

    s = _spd(dtype)
    s[7] = -s[7]  # not positive definite
    with pytest.raises(torch.linalg.LinAlgError) as te:
        torch.linalg.cholesky(torch.from_numpy(s))
    with pytest.raises(jtorch.linalg.LinAlgError) as je:
        jtorch.linalg.cholesky(jtorch.from_numpy(s))
    assert str(je.value) == str(te.value)
    _, jinfo = jtorch.linalg.cholesky_ex(jtorch.from_numpy(s))
    _, tinfo = torch.linalg.cholesky_ex(torch.from_numpy(s))
    assert np.array_equal(jinfo.numpy(), tinfo.numpy())
