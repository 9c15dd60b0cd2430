"""jtorch.lobpcg against torch: eigenvalues of SPD matrices against torch.linalg.eigh,
eigenvectors up to sign (span for the block), the generalized and batched problems, torch's
errors, the tracker protocol, and the gradient against torch.lobpcg's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch


def _spd(m, seed=0, lo=1.0, hi=50.0):
    """A well-separated SPD spectrum lo..hi in a random basis."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((m, m)))
    return (q * np.linspace(lo, hi, m)) @ q.T


def _start(m, n, seed=1):
    return np.random.default_rng(seed).standard_normal((m, n))


def _check_pairs(A, E, X, k, largest, tol):
    want_e, want_v = torch.linalg.eigh(torch.from_numpy(A))
    want_e, want_v = want_e.numpy(), want_v.numpy()
    idx = np.arange(A.shape[-1])[::-1][:k] if largest else np.arange(k)
    assert tuple(E.shape) == (k,) and tuple(X.shape) == (A.shape[-1], k)
    np.testing.assert_allclose(E.numpy(), want_e[idx], rtol=tol, atol=tol * 50)
    overlap = np.abs(want_v[:, idx].T @ X.numpy())  # up to sign: |V^T X| = I
    np.testing.assert_allclose(overlap, np.eye(k), atol=np.sqrt(tol) * 10)


@pytest.mark.parametrize("method", ["ortho", "basic"])
@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("k", [1, 3])
def test_eigenpairs_match_eigh(method, largest, k):
    A = _spd(30)
    E, X = jtorch.lobpcg(jtorch.tensor(A), k=k, X=jtorch.tensor(_start(30, k)), largest=largest,
                         method=method, tol=1e-9)
    assert E.dtype == jtorch.float64 and X.dtype == jtorch.float64
    _check_pairs(A, E, X, k, largest, 1e-9)


def test_default_start_and_float32():
    A = _spd(24, seed=2).astype(np.float32)
    E, X = jtorch.lobpcg(jtorch.tensor(A), k=2, n=3)
    assert E.dtype == jtorch.float32 and tuple(X.shape) == (24, 2)
    _check_pairs(A.astype(np.float64), E.double(), X.double(), 2, True, 2e-3)


def test_generalized_problem():
    A, Bm = _spd(30, seed=3), _spd(30, seed=4, lo=1.0, hi=3.0)
    E, X = jtorch.lobpcg(jtorch.tensor(A), k=2, B=jtorch.tensor(Bm), X=jtorch.tensor(_start(30, 2)),
                         tol=1e-10)
    # the reference: eigh of L^-1 A L^-T, B = L L^T
    L = torch.linalg.cholesky(torch.from_numpy(Bm))
    Li = torch.linalg.inv(L)
    want = torch.linalg.eigh(Li @ torch.from_numpy(A) @ Li.mT)[0].numpy()[::-1][:2]
    np.testing.assert_allclose(E.numpy(), want, rtol=1e-9)
    x = X.numpy()
    np.testing.assert_allclose(x.T @ Bm @ x, np.eye(2), atol=1e-8)  # B-orthonormal
    np.testing.assert_allclose(A @ x, Bm @ x * E.numpy(), atol=1e-6)


def test_batched_with_start():
    A = np.stack([_spd(24, seed=s) for s in range(3)]).reshape(3, 1, 24, 24)
    X0 = np.stack([_start(24, 2, seed=s) for s in range(3)]).reshape(3, 1, 24, 2)
    E, X = jtorch.lobpcg(jtorch.tensor(A), X=jtorch.tensor(X0), tol=1e-10)  # k = n = 2
    assert tuple(E.shape) == (3, 1, 2) and tuple(X.shape) == (3, 1, 24, 2)
    for i in range(3):
        _check_pairs(A[i, 0], E[i, 0], X[i, 0], 2, True, 1e-9)


def test_sparse_input():
    A = _spd(30, seed=5)
    A[np.abs(A) < 1.0] = 0.0
    A += np.eye(30) * 60  # still SPD after thinning
    sp = jtorch.tensor(A).to_sparse()
    E, X = jtorch.lobpcg(sp, k=2, X=jtorch.tensor(_start(30, 2)), tol=1e-10)
    _check_pairs(A, E, X, 2, True, 1e-9)


def test_preconditioner_and_drop():
    A = _spd(30, seed=6)
    iK = jtorch.tensor(np.diag(1.0 / np.diag(A)))
    E, X = jtorch.lobpcg(jtorch.tensor(A), k=2, X=jtorch.tensor(_start(30, 2)), iK=iK, tol=1e-10,
                         largest=False)
    _check_pairs(A, E, X, 2, False, 1e-9)
    E, X = jtorch.lobpcg(jtorch.tensor(A), k=2, X=jtorch.tensor(_start(30, 2)), tol=1e-10,
                         ortho_bparams={"ortho_use_drop": True}, ortho_iparams={"ortho_i_max": 4})
    _check_pairs(A, E, X, 2, True, 1e-9)


def test_tracker_sees_the_state_and_can_stop():
    A = jtorch.tensor(_spd(30))
    seen = []

    def tracker(worker):
        seen.append((worker.ivars["istep"], worker.ivars["converged_count"],
                     tuple(worker.X.shape), tuple(worker.S.shape), worker.tvars["rerr"].shape))
        if worker.ivars["istep"] == 3:
            worker.bvars["force_stop"] = True

    jtorch.lobpcg(A, k=2, X=jtorch.tensor(_start(30, 2)), tracker=tracker)
    assert [s[0] for s in seen] == [1, 2, 3]
    assert seen[0][2:] == ((30, 2), (30, 6), (2,))
    steps = []
    jtorch.lobpcg(A, k=2, X=jtorch.tensor(_start(30, 2)), niter=4,
                  tracker=lambda w: steps.append(w.ivars["istep"]), tol=1e-30)
    assert steps == [1, 2, 3, 4]  # niter reached: the current approximation comes back


def _same_error(fn):
    with pytest.raises(Exception) as t_err:
        fn(torch)
    with pytest.raises(Exception) as j_err:
        fn(jtorch)
    assert type(j_err.value) is type(t_err.value)
    assert str(j_err.value) == str(t_err.value)


@pytest.mark.parametrize("fn", [
    lambda m: m.lobpcg(m.eye(8, dtype=m.float64), k=3),
    lambda m: m.lobpcg(m.eye(8, dtype=m.float64), X=m.ones(8, 3, dtype=m.float64)),
    lambda m: m.lobpcg(m.ones(9, 8, dtype=m.float64)),
    lambda m: m.lobpcg(m.eye(9, dtype=m.float64), B=m.eye(8, dtype=m.float64)),
    lambda m: m.lobpcg(m.eye(9, dtype=m.float64), X=m.ones(8, 2, dtype=m.float64)),
    lambda m: m.lobpcg(m.eye(9, dtype=m.float64), X=m.ones(2, 9, 2, dtype=m.float64)),
], ids=["m<3n", "m<3n-X", "nonsquare", "B-shape", "X-shape", "X-batch"])
def test_errors_as_torch(fn):
    _same_error(fn)


def test_gradient_matches_torch():
    A = _spd(30, seed=7)
    X0 = _start(30, 2, seed=8)
    w = np.array([1.0, 2.0])
    grads = []
    for m in (torch, jtorch):
        a = m.tensor(A, requires_grad=True)
        E, X = m.lobpcg(a, k=2, X=m.tensor(X0), tol=1e-12)
        # sign-invariant in the eigenvectors
        ((E * m.tensor(w)).sum() + ((X ** 2) * m.tensor(A[:, :2])).sum()).backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], atol=1e-8)
    np.testing.assert_allclose(grads[1], grads[1].T, atol=1e-10)  # symmetrised input


def test_gradient_smallest_and_generalized_error():
    A = _spd(24, seed=9)
    X0 = _start(24, 3, seed=10)
    grads = []
    for m in (torch, jtorch):
        a = m.tensor(A, requires_grad=True)
        E, _ = m.lobpcg(a, k=3, X=m.tensor(X0), tol=1e-12, largest=False)
        (E * m.tensor([1.0, -1.0, 0.5])).sum().backward()
        grads.append(a.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], atol=1e-8)
    a = jtorch.tensor(A, requires_grad=True)
    E, _ = jtorch.lobpcg(a, k=1, B=jtorch.eye(24, dtype=jtorch.float64),
                         X=jtorch.tensor(X0[:, :1]))
    with pytest.raises(ValueError, match="does not support backward with B != I"):
        E.sum().backward()
