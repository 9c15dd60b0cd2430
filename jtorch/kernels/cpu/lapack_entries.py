"""CPU kernel entries of the decomposition OpDefs: ``(plan, *tensors) -> Tensor(s)``.

Each entry views its operands as C-contiguous (B, m, n) batches, runs one compiled loop of
``lapack.py`` into fresh arrays, and raises torch's ``LinAlgError`` where the plan asks it
to check LAPACK's ``info`` (the ``_ex`` variants return it instead). A batch whose work pays
for it runs over Numba's threads, one LAPACK call per matrix with BLAS serial in each; a
single matrix (or a small batch) runs in the calling thread, where LAPACK's BLAS is threaded.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from ... import _threads
from ...tensor import Tensor
from ..defs.linalg_decomp import LinAlgError
from . import lapack as _lp

_I32 = np.dtype(np.int32)


def _batch(x: Tensor) -> np.ndarray:
    a = x._a
    *lead, m, n = a.shape
    return np.ascontiguousarray(a).reshape(math.prod(lead), m, n)


def _run(name: str, a3: np.ndarray, *args):
    """``lapack.<name>`` over the batch ``a3`` (its first argument), or ``<name>_par`` over
    Numba's threads where the batch has more than one matrix and enough work."""
    batch, m, n = a3.shape
    if batch > 1 and _threads.use_parallel(batch * m * n * min(m, n)) and \
            _threads.serial_blas.available():
        parts = min(batch, numba.get_num_threads())
        if parts > 1:
            with _threads.serial_blas():
                return getattr(_lp, name + "_par")(a3, *args, parts)
    return getattr(_lp, name)(a3, *args)


def _first(info: np.ndarray) -> int:
    """The first non-zero ``info`` of a batch (0 when every matrix succeeded)."""
    bad = np.flatnonzero(info)
    return int(info[bad[0]]) if bad.size else 0


def _make(arr: np.ndarray, out) -> Tensor:
    return Tensor._make(arr.reshape(out.shape), None, out.dtype)


def _mats(out) -> np.ndarray:
    """A fresh (B, r, c) array for a matrix result."""
    *lead, r, c = out.shape
    return np.empty((math.prod(lead), r, c), out.dtype.np)


def _vecs(out) -> np.ndarray:
    *lead, k = out.shape
    return np.empty((math.prod(lead), k), out.dtype.np)


def _raise_info(info: np.ndarray, batched: bool, message) -> None:
    """torch's error for the first matrix whose ``info`` is non-zero."""
    bad = np.flatnonzero(info)
    if bad.size:
        b = int(bad[0])
        msg = message(int(info[b]))
        name, _, rest = msg.partition(": ")
        raise LinAlgError(f"{name}: (Batch element {b}): {rest}" if batched else msg)


def _inv_message(i: int) -> str:
    return (f"linalg.inv: The diagonal element {i} is zero, the inversion could not be completed "
            "because the input matrix is singular.")


def _chol_message(i: int) -> str:
    return ("linalg.cholesky: The factorization could not be completed because the input is not "
            f"positive-definite (the leading minor of order {i} is not positive-definite).")


def _solve_message(_: int) -> str:
    return "torch.linalg.solve: The solver failed because the input matrix is singular."


def lu_factor_cpu(plan, a: Tensor) -> tuple:
    lu_o, piv_o, info_o = plan.out
    a3 = _batch(a)
    lu, piv, info = _mats(lu_o), _vecs(piv_o), np.zeros(a3.shape[0], _I32)
    _run("lu_factor", a3, lu, piv, info)
    return _make(lu, lu_o), _make(piv, piv_o), _make(info, info_o)


def inv_cpu(plan, a: Tensor) -> tuple:
    inv_o, info_o = plan.out
    a3 = _batch(a)
    out, info = _mats(inv_o), np.zeros(a3.shape[0], _I32)
    _run("inv", a3, out, info)
    if plan.kw["check_errors"]:
        _raise_info(info, a._a.ndim > 2, _inv_message)
    return _make(out, inv_o), _make(info, info_o)


def det_cpu(plan, a: Tensor) -> Tensor:
    a3 = _batch(a)
    out = np.empty(a3.shape[0], plan.out.dtype.np)
    _run("det", a3, out)
    return _make(out, plan.out)


def slogdet_cpu(plan, a: Tensor) -> tuple:
    s_o, l_o = plan.out
    a3 = _batch(a)
    s, la = np.empty(a3.shape[0], s_o.dtype.np), np.empty(a3.shape[0], l_o.dtype.np)
    _run("slogdet", a3, s, la)
    return _make(s, s_o), _make(la, l_o)


def solve_cpu(plan, a: Tensor, b: Tensor) -> tuple:
    x_o, info_o = plan.out
    a3, b3 = _batch(a), _batch(b)
    x, info = _mats(x_o), np.zeros(a3.shape[0], _I32)
    _run("solve", a3, b3, x, info)
    if plan.kw["check_errors"]:
        _raise_info(info, a._a.ndim > 2, _solve_message)
    return _make(x, x_o), _make(info, info_o)


def cholesky_cpu(plan, a: Tensor) -> tuple:
    l_o, info_o = plan.out
    a3 = _batch(a)
    out, info = _mats(l_o), np.zeros(a3.shape[0], _I32)
    _run("cholesky", a3, out, info, plan.kw["upper"])
    if plan.kw["check_errors"]:
        _raise_info(info, a._a.ndim > 2, _chol_message)
    return _make(out, l_o), _make(info, info_o)


def solve_triangular_cpu(plan, a: Tensor, b: Tensor) -> Tensor:
    a3, b3 = _batch(a), _batch(b)
    x = _mats(plan.out)
    _lp.solve_triangular(a3, b3, x, plan.kw["upper"], plan.kw["unitriangular"])
    return _make(x, plan.out)


def eigh_cpu(plan, a: Tensor) -> tuple:
    w_o, v_o = plan.out
    a3 = _batch(a)
    w, v = _vecs(w_o), _mats(v_o)
    infos = np.zeros(a3.shape[0], _I32)
    _run("eigh", a3, w, v, infos, plan.kw["UPLO"] == "U", True)
    info = _first(infos)
    if info:
        raise LinAlgError(f"linalg.eigh: The algorithm failed to converge because the input matrix "
                          f"is ill-conditioned or has too many repeated eigenvalues (error code: "
                          f"{info}).")
    return _make(w, w_o), _make(v, v_o)


def svd_cpu(plan, a: Tensor) -> tuple:
    u_o, s_o, vh_o = plan.out
    a3 = _batch(a)
    u, s, vh = _mats(u_o), _vecs(s_o), _mats(vh_o)
    if a3.shape[1] and a3.shape[2]:
        infos = np.zeros(a3.shape[0], _I32)
        _run("svd", a3, u, s, vh, infos, plan.kw["full_matrices"], True)
        info = _first(infos)
        if info:
            raise LinAlgError(f"linalg.svd: The algorithm failed to converge because the input "
                              f"matrix is ill-conditioned or has too many repeated singular "
                              f"values (error code: {info}).")
    else:  # no singular values: the full factors are identities
        u[...] = np.eye(u.shape[1], u.shape[2], dtype=u.dtype)
        vh[...] = np.eye(vh.shape[1], vh.shape[2], dtype=vh.dtype)
    return _make(u, u_o), _make(s, s_o), _make(vh, vh_o)


def qr_cpu(plan, a: Tensor) -> tuple:
    q_o, r_o = plan.out
    a3 = _batch(a)
    mode = plan.kw["mode"]
    q = _mats(q_o) if mode != "r" else np.empty((a3.shape[0], a3.shape[1], 0), a3.dtype)
    r = _mats(r_o)
    _run("qr", a3, q, r, mode == "complete", mode != "r")
    return (_make(q, q_o) if mode != "r" else Tensor._make(np.empty(0, a3.dtype), None, q_o.dtype),
            _make(r, r_o))


def geqrf_cpu(plan, a: Tensor) -> tuple:
    a_o, tau_o = plan.out
    a3 = _batch(a)
    out, tau = _mats(a_o), _vecs(tau_o)
    _lp.geqrf_batch(a3, out, tau)
    return _make(out, a_o), _make(tau, tau_o)


def householder_cpu(plan, a: Tensor, tau: Tensor) -> Tensor:
    a3 = _batch(a)
    t = np.ascontiguousarray(tau._a).reshape(a3.shape[0], -1)
    out = _mats(plan.out)
    _lp.householder(a3, t, out)
    return _make(out, plan.out)


def eig_cpu(plan, a: Tensor) -> tuple:
    w_o, v_o = plan.out
    a3 = _batch(a)
    w, v = _vecs(w_o), _mats(v_o)
    info = _lp.eig(a3, w, v)
    if info:
        raise LinAlgError(f"linalg.eig: The algorithm failed to converge because the input matrix "
                          f"is ill-conditioned or has too many repeated eigenvalues (error code: "
                          f"{info}).")
    return _make(w, w_o), _make(v, v_o)


def lu_permutation_cpu(plan, piv: Tensor) -> Tensor:
    """The permutation matrices P (A = P L U) of LAPACK's pivots."""
    *lead, m, _ = plan.out.shape
    p = np.ascontiguousarray(piv._a).reshape(math.prod(lead), -1)
    perm = np.empty((p.shape[0], m), np.int64)
    _lp.pivots_to_permutation(p, perm)
    out = np.zeros((p.shape[0], m, m), plan.out.dtype.np)
    rows = perm.reshape(-1)
    out[np.repeat(np.arange(p.shape[0]), m), rows, np.tile(np.arange(m), p.shape[0])] = 1
    return _make(out, plan.out)


def _col_major(arr: np.ndarray, out) -> Tensor:
    """The (B, c, r) C-contiguous ``arr`` as the (..., r, c) result ``out`` with the
    column-major matrices' strides its plan names (torch's layout for LAPACK's results)."""
    isz = arr.itemsize
    return Tensor._make(np.ndarray(out.shape, arr.dtype, arr, 0, tuple(s * isz for s in out.strides)),
                        None, out.dtype)


def ldl_factor_cpu(plan, a: Tensor) -> tuple:
    ld_o, piv_o, info_o = plan.out
    a3 = _batch(a)
    ld, piv, info = np.empty(a3.shape, a3.dtype), _vecs(piv_o), np.zeros(a3.shape[0], _I32)
    _run("ldl_factor", a3, ld, piv, info, plan.kw["hermitian"])
    return _col_major(ld, ld_o), _make(piv, piv_o), _make(info, info_o)


def ldl_solve_cpu(plan, ld: Tensor, piv: Tensor, b: Tensor) -> Tensor:
    *lead, n, k = b.shape
    batch = math.prod(lead)
    ldt = np.ascontiguousarray(ld._a.swapaxes(-1, -2)).reshape(batch, n, n)
    p = np.ascontiguousarray(piv._a, _I32).reshape(batch, n)
    x = np.empty((batch, k, n), ldt.dtype)
    _run("ldl_solve", ldt, p, _batch(b), x, plan.kw["hermitian"])
    return _col_major(x, plan.out)
