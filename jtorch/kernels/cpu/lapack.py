"""LAPACK from inside Numba: the factorizations behind ``jtorch.linalg``.

Numba's own ``np.linalg`` raises on a singular matrix or a non-finite entry, where torch
reports LAPACK's ``info`` (``inv_ex``, ``cholesky_ex``) or computes through nan. So the kernels
call the LAPACK wrappers Numba itself binds (its helper library over scipy's LAPACK:
``getrf``, ``getri``, ``potrf``, ``syevd``/``heevd``, ``gesdd``, ``geqrf``, ``orgqr``, ``geev``,
``gesv``) and keep ``info`` per matrix. Each kernel is one compiled loop over a C-contiguous
(B, m, n) batch that copies each matrix into a column-major scratch (as torch does) and writes
the results row-major. Triangular solves are compiled substitution loops.

Routines Numba does not bind (``sytrf``/``hetrf``, ``sytrs``/``hetrs``) come from scipy's
``cython_lapack``: their addresses enter LLVM's symbol table as ``jtorch_<routine>`` when this
module loads, and compiled code calls them by that name, so a cached kernel links to them in a
new process too.
"""

from __future__ import annotations

import ctypes

import numba
import numpy as np
from llvmlite import binding as _ll
from numba import prange, types
from numba.extending import overload
from numba.np import linalg as _nl

from ..jit import njit

_INT = _nl.F_INT_nptype  # LAPACK's integer (int32)


def _kind(dtype) -> int:
    return ord(_nl.get_blas_kind(dtype, "jtorch.linalg"))


# -- the LAPACK calls (stubs typed per dtype by ``overload``) --------------------------------

def getrf(a, ipiv):
    """LU with partial pivoting of column-major ``a`` in place; returns info."""


def getri(a, ipiv):
    """The inverse from getrf's factors, in place; returns info."""


def potrf(uplo, a):
    """Cholesky of column-major ``a`` in place (``uplo``: ord('L') or ord('U'))."""


def syevd(jobz, uplo, a, w):
    """Eigenvalues (and vectors, in ``a``) of a symmetric/Hermitian matrix."""


def gesdd(jobz, a, s, u, vt):
    """SVD of column-major ``a`` (destroyed) into s, u, vt."""


def geqrf(a, tau):
    """Householder QR of column-major ``a`` in place."""


def orgqr(a, tau, k):
    """The first columns of Q from ``k`` reflectors held in column-major ``a``."""


def geev(a, w, vr):
    """Eigenvalues ``w`` (complex) and right eigenvectors ``vr`` (complex) of a general
    column-major matrix (real input: LAPACK's packed conjugate pairs unpacked here)."""


def gesv(a, ipiv, b):
    """Solve a x = b (both column-major) in place of b; returns info."""


@overload(getrf)
def _getrf(a, ipiv):
    fn, kind = _nl._LAPACK().numba_xxgetrf(a.dtype), _kind(a.dtype)

    def impl(a, ipiv):
        m, n = a.shape
        return fn(kind, m, n, a.ctypes, max(m, 1), ipiv.ctypes)
    return impl


@overload(getri)
def _getri(a, ipiv):
    fn, kind = _nl._LAPACK().numba_ez_xxgetri(a.dtype), _kind(a.dtype)

    def impl(a, ipiv):
        n = a.shape[0]
        return fn(kind, n, a.ctypes, max(n, 1), ipiv.ctypes)
    return impl


@overload(potrf)
def _potrf(uplo, a):
    fn, kind = _nl._LAPACK().numba_xxpotrf(a.dtype), _kind(a.dtype)

    def impl(uplo, a):
        n = a.shape[0]
        return fn(kind, uplo, n, a.ctypes, max(n, 1))
    return impl


@overload(syevd)
def _syevd(jobz, uplo, a, w):
    fn, kind = _nl._LAPACK().numba_ez_xxxevd(a.dtype), _kind(a.dtype)

    def impl(jobz, uplo, a, w):
        n = a.shape[0]
        return fn(kind, jobz, uplo, n, a.ctypes, max(n, 1), w.ctypes)
    return impl


@overload(gesdd)
def _gesdd(jobz, a, s, u, vt):
    fn, kind = _nl._LAPACK().numba_ez_gesdd(a.dtype), _kind(a.dtype)

    def impl(jobz, a, s, u, vt):
        m, n = a.shape
        return fn(kind, jobz, m, n, a.ctypes, max(m, 1), s.ctypes, u.ctypes, max(u.shape[0], 1),
                  vt.ctypes, max(vt.shape[0], 1))
    return impl


@overload(geqrf)
def _geqrf(a, tau):
    fn, kind = _nl._LAPACK().numba_ez_geqrf(a.dtype), _kind(a.dtype)

    def impl(a, tau):
        m, n = a.shape
        return fn(kind, m, n, a.ctypes, max(m, 1), tau.ctypes)
    return impl


@overload(orgqr)
def _orgqr(a, tau, k):
    fn, kind = _nl._LAPACK().numba_ez_xxgqr(a.dtype), _kind(a.dtype)

    def impl(a, tau, k):
        m, n = a.shape
        return fn(kind, m, n, k, a.ctypes, max(m, 1), tau.ctypes)
    return impl


@overload(geev)
def _geev(a, w, vr):
    kind = _kind(a.dtype)
    if isinstance(a.dtype, numba.types.Complex):
        fn = _nl._LAPACK().numba_ez_cgeev(a.dtype)

        def impl(a, w, vr):
            n = a.shape[0]
            vl = np.empty((1, 1), a.dtype)
            return fn(kind, ord("N"), ord("V"), n, a.ctypes, max(n, 1), w.ctypes, vl.ctypes, 1,
                      vr.ctypes, max(n, 1))
        return impl
    fn = _nl._LAPACK().numba_ez_rgeev(a.dtype)

    def impl_real(a, w, vr):
        n = a.shape[0]
        wr = np.empty(n, a.dtype)
        wi = np.empty(n, a.dtype)
        vl = np.empty((1, 1), a.dtype)
        v = np.empty((n, n), a.dtype).T
        info = fn(kind, ord("N"), ord("V"), n, a.ctypes, max(n, 1), wr.ctypes, wi.ctypes,
                  vl.ctypes, 1, v.ctypes, max(n, 1))
        j = 0
        while j < n:
            w[j] = wr[j] + 1j * wi[j]
            if wi[j] != 0 and j + 1 < n:  # a conjugate pair: columns j, j+1 hold re, im
                w[j + 1] = wr[j + 1] + 1j * wi[j + 1]
                for r in range(n):
                    vr[r, j] = v[r, j] + 1j * v[r, j + 1]
                    vr[r, j + 1] = v[r, j] - 1j * v[r, j + 1]
                j += 2
            else:
                for r in range(n):
                    vr[r, j] = v[r, j]
                j += 1
        return info
    return impl_real


@overload(gesv)
def _gesv(a, ipiv, b):
    fn, kind = _nl._LAPACK().numba_xgesv(a.dtype), _kind(a.dtype)

    def impl(a, ipiv, b):
        n = a.shape[0]
        return fn(kind, n, b.shape[1], a.ctypes, max(n, 1), ipiv.ctypes, b.ctypes, max(n, 1))
    return impl


# -- LAPACK routines from scipy's cython_lapack (Fortran ABI: every argument by pointer) ---------

_CYTHON = ("sytrf", "hetrf", "sytrs", "hetrs")
_NARGS = {"sytrf": 8, "hetrf": 8, "sytrs": 9, "hetrs": 9}


def _bind_cython_lapack() -> None:
    """Enter each routine's address as ``jtorch_<prefix><routine>`` (private ctypes prototypes:
    ``ctypes.pythonapi``'s own are shared with other code)."""
    from scipy.linalg import cython_lapack

    obj = ctypes.py_object
    name_of = ctypes.PYFUNCTYPE(ctypes.c_char_p, obj)(("PyCapsule_GetName", ctypes.pythonapi))
    pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, obj, ctypes.c_char_p)(
        ("PyCapsule_GetPointer", ctypes.pythonapi))
    for routine in _CYTHON:
        for p in "sdcz":
            if routine.startswith("he") and p in "sd":
                continue
            cap = cython_lapack.__pyx_capi__[p + routine]
            _ll.add_symbol("jtorch_" + p + routine, pointer(cap, name_of(cap)))


_bind_cython_lapack()


def _cython_fn(dtype, routine: str, hermitian: bool = False):
    """The bound routine for ``dtype`` (``he`` for a Hermitian complex one, else ``sy``)."""
    p = _nl.get_blas_kind(dtype, "jtorch.linalg")
    if hermitian and p in "cz":
        routine = "he" + routine[2:]
    sig = types.void(*([types.voidptr] * _NARGS[routine]))
    return types.ExternalFunction("jtorch_" + p + routine, sig)


def sytrf(hermitian, a, ipiv):
    """Bunch-Kaufman LDL^T (LDL^H when ``hermitian`` and complex) of the lower triangle of the
    column-major (n, n) storage ``a`` in place; returns info."""


def sytrs(hermitian, a, ipiv, b):
    """Solve with sytrf's factors in ``a`` and ``ipiv``; ``b`` (column-major (n, k) storage)
    is overwritten by the solution; returns info."""


@overload(sytrf)
def _sytrf(hermitian, a, ipiv):
    sy, he = _cython_fn(a.dtype, "sytrf"), _cython_fn(a.dtype, "sytrf", True)

    def impl(hermitian, a, ipiv):
        n = a.shape[0]
        uplo = np.full(1, ord("L"), np.uint8)
        dims = np.full(2, max(n, 1), _INT)  # n, lda
        dims[0] = n
        lwork = np.full(1, -1, _INT)
        info = np.zeros(1, _INT)
        work = np.zeros(1, a.dtype)
        for query in (True, False):  # the work size, then the factorization
            if not query:
                lwork[0] = max(int(work[0].real), 1)
                work = np.zeros(lwork[0], a.dtype)
            if hermitian:
                he(uplo.ctypes, dims[0:1].ctypes, a.ctypes, dims[1:2].ctypes, ipiv.ctypes,
                   work.ctypes, lwork.ctypes, info.ctypes)
            else:
                sy(uplo.ctypes, dims[0:1].ctypes, a.ctypes, dims[1:2].ctypes, ipiv.ctypes,
                   work.ctypes, lwork.ctypes, info.ctypes)
        return info[0]
    return impl


@overload(sytrs)
def _sytrs(hermitian, a, ipiv, b):
    sy, he = _cython_fn(a.dtype, "sytrs"), _cython_fn(a.dtype, "sytrs", True)

    def impl(hermitian, a, ipiv, b):
        n = a.shape[0]
        uplo = np.full(1, ord("L"), np.uint8)
        dims = np.full(3, max(n, 1), _INT)  # n, nrhs, lda (= ldb)
        dims[0] = n
        dims[1] = b.shape[0]
        info = np.zeros(1, _INT)
        if hermitian:
            he(uplo.ctypes, dims[0:1].ctypes, dims[1:2].ctypes, a.ctypes, dims[2:3].ctypes,
               ipiv.ctypes, b.ctypes, dims[2:3].ctypes, info.ctypes)
        else:
            sy(uplo.ctypes, dims[0:1].ctypes, dims[1:2].ctypes, a.ctypes, dims[2:3].ctypes,
               ipiv.ctypes, b.ctypes, dims[2:3].ctypes, info.ctypes)
        return info[0]
    return impl


@njit(cache=True, nogil=True)
def _assign(w, a):
    """w[:, :] = a as element loops: a 2-d slice assignment compiles Numba's string-formatted
    shape-mismatch error, a second or two on a cold cache."""
    for i in range(w.shape[0]):
        for j in range(w.shape[1]):
            w[i, j] = a[i, j]


@njit(cache=True, nogil=True)
def _fcopy(a):
    """A column-major copy of the 2-D ``a``."""
    m, n = a.shape
    w = np.empty((n, m), a.dtype).T
    for j in range(n):
        for i in range(m):
            w[i, j] = a[i, j]
    return w


# -- kernels over a batch ---------------------------------------------------------------------
#
# Each kernel runs over the span [lo, hi) of its batch; ``<name>`` runs the whole batch in the
# calling thread (LAPACK/BLAS threads one large matrix), ``<name>_par`` splits it into ``parts``
# spans run on Numba's threads, one LAPACK call per matrix (the caller makes BLAS serial).
# A row-major matrix is the column-major storage of its transpose, so where the transposed
# problem gives the result directly (inv, det, cholesky, svd) LAPACK works in the output
# itself, or in a plain contiguous copy, instead of a transposed scratch.


@njit(cache=True, nogil=True)
def _span(n, parts, p):
    return n * p // parts, n * (p + 1) // parts


@njit(cache=True, nogil=True)
def _lu_factor_span(a, lu, piv, info, lo, hi):
    k = min(a.shape[1], a.shape[2])
    ipiv = np.zeros(max(k, 1), _INT)
    for b in range(lo, hi):
        w = _fcopy(a[b])
        info[b] = getrf(w, ipiv)
        lu[b] = w
        for j in range(k):
            piv[b, j] = ipiv[j]


@njit(cache=True, nogil=True)
def lu_factor(a, lu, piv, info):
    """getrf of each matrix: ``lu`` (B, m, n), ``piv`` (B, k) one-based, ``info`` (B,)."""
    _lu_factor_span(a, lu, piv, info, 0, a.shape[0])


@njit(cache=True, nogil=True, parallel=True)
def lu_factor_par(a, lu, piv, info, parts):
    for p in prange(parts):
        lo, hi = _span(a.shape[0], parts, p)
        _lu_factor_span(a, lu, piv, info, lo, hi)


@njit(cache=True, nogil=True)
def _inv_span(a, out, info, lo, hi):
    n = a.shape[1]
    ipiv = np.zeros(max(n, 1), _INT)
    for b in range(lo, hi):
        w = out[b]
        _assign(w, a[b])
        if getrf(w.T, ipiv) == 0:  # inv(a^T) = inv(a)^T: the row-major result in place
            getri(w.T, ipiv)
            info[b] = 0
            continue
        f = _fcopy(a[b])  # singular: a's own factorization names the zero pivot, as torch's
        r = getrf(f, ipiv)
        info[b] = r
        if r == 0:
            getri(f, ipiv)
        else:
            f[:, :] = np.nan
        _assign(w, f)


@njit(cache=True, nogil=True)
def inv(a, out, info):
    """getrf + getri of each square matrix; info > 0 names the first zero pivot."""
    _inv_span(a, out, info, 0, a.shape[0])


@njit(cache=True, nogil=True, parallel=True)
def inv_par(a, out, info, parts):
    for p in prange(parts):
        lo, hi = _span(a.shape[0], parts, p)
        _inv_span(a, out, info, lo, hi)


@njit(cache=True, nogil=True)
def _det_span(a, out, lo, hi):
    n = a.shape[1]
    ipiv = np.zeros(max(n, 1), _INT)
    w = np.empty((n, n), a.dtype)
    for b in range(lo, hi):
        _assign(w, a[b])
        if getrf(w.T, ipiv) != 0:  # det(a^T) = det(a); singular: a's own zero pivot, as torch
            _assign(w, a[b].T)
            getrf(w.T, ipiv)
        d = np.ones(1, a.dtype)[0]
        for j in range(n):
            d *= w[j, j]
            if ipiv[j] != j + 1:
                d = -d
        out[b] = d


@njit(cache=True, nogil=True)
def det(a, out):
    """The determinant from getrf's diagonal and the pivots' sign."""
    _det_span(a, out, 0, a.shape[0])


@njit(cache=True, nogil=True, parallel=True)
def det_par(a, out, parts):
    for p in prange(parts):
        lo, hi = _span(a.shape[0], parts, p)
        _det_span(a, out, lo, hi)


@njit(cache=True, nogil=True)
def _slogdet_span(a, sign, logabs, lo, hi):
    n = a.shape[1]
    ipiv = np.zeros(max(n, 1), _INT)
    w = np.empty((n, n), a.dtype)
    for b in range(lo, hi):
        _assign(w, a[b])
        if getrf(w.T, ipiv) != 0:  # det(a^T) = det(a); singular: a's own zero pivot, as torch
            _assign(w, a[b].T)
            getrf(w.T, ipiv)
        s = np.ones(1, a.dtype)[0]
        la = 0.0
        for j in range(n):
            u = w[j, j]
            au = abs(u)
            if ipiv[j] != j + 1:
                s = -s
            if au == 0:
                s = s * 0
                la = -np.inf
            else:
                s = s * (u / au)
                la += np.log(au)
        sign[b] = s
        logabs[b] = la


@njit(cache=True, nogil=True)
def slogdet(a, sign, logabs):
    """sign (unit modulus, or 0) and log|det| from getrf's diagonal."""
    _slogdet_span(a, sign, logabs, 0, a.shape[0])


@njit(cache=True, nogil=True, parallel=True)
def slogdet_par(a, sign, logabs, parts):
    for p in prange(parts):
        lo, hi = _span(a.shape[0], parts, p)
        _slogdet_span(a, sign, logabs, lo, hi)


@njit(cache=True, nogil=True)
def _solve_span(a, rhs, out, info, lo, hi):
    n = a.shape[1]
    ipiv = np.zeros(max(n, 1), _INT)
    for b in range(lo, hi):
        w = _fcopy(a[b])
        x = _fcopy(rhs[b])
        info[b] = gesv(w, ipiv, x)
        out[b] = x


@njit(cache=True, nogil=True)
def solve(a, rhs, out, info):
    """gesv of each (n, n) matrix against its (n, k) right-hand sides."""
    _solve_span(a, rhs, out, info, 0, a.shape[0])


@njit(cache=True, nogil=True, parallel=True)
def solve_par(a, rhs, out, info, parts):
    for p in prange(parts):
        lo, hi = _span(a.shape[0], parts, p)
        _solve_span(a, rhs, out, info, lo, hi)


@njit(cache=True, nogil=True)
def _cholesky_span(a, out, info, upper, lo, hi):
    n = a.shape[1]
    # a's lower triangle is the upper one of a^T (column-major a^T is a's row-major storage),
    # and potrf's upper factor of a^T, read row-major, is a's lower factor (and vice versa)
    uplo = ord("L") if upper else ord("U")
    for b in range(lo, hi):
        w = out[b]
        _assign(w, a[b])
        info[b] = potrf(uplo, w.T)
        for i in range(n):
            if upper:
                for j in range(i):
                    w[i, j] = 0
            else:
                for j in range(i + 1, n):
                    w[i, j] = 0


@njit(cache=True, nogil=True)
def cholesky(a, out, info, upper):
    """potrf reading one triangle; the other triangle of the result is zero."""
    _cholesky_span(a, out, info, upper, 0, a.shape[0])


@njit(cache=True, nogil=True, parallel=True)
def cholesky_par(a, out, info, upper, parts):
    for p in prange(parts):
        lo, hi = _span(a.shape[0], parts, p)
        _cholesky_span(a, out, info, upper, lo, hi)


@njit(cache=True, nogil=True)
def _eigh_span(a, vals, vecs, info, upper, want_vectors, lo, hi):
    uplo = ord("U") if upper else ord("L")
    jobz = ord("V") if want_vectors else ord("N")
    for b in range(lo, hi):
        w = _fcopy(a[b])
        info[b] = syevd(jobz, uplo, w, vals[b])
        if want_vectors:
            vecs[b] = w


@njit(cache=True, nogil=True)
def eigh(a, vals, vecs, info, upper, want_vectors):
    """syevd/heevd: ascending eigenvalues, eigenvectors as columns."""
    _eigh_span(a, vals, vecs, info, upper, want_vectors, 0, a.shape[0])


@njit(cache=True, nogil=True, parallel=True)
def eigh_par(a, vals, vecs, info, upper, want_vectors, parts):
    for p in prange(parts):
        lo, hi = _span(a.shape[0], parts, p)
        _eigh_span(a, vals, vecs, info, upper, want_vectors, lo, hi)


@njit(cache=True, nogil=True)
def _svd_span(a, u, s, vh, info, full, want_vectors, lo, hi):
    # a^T = conj(V) S U^T: gesdd of the row-major storage (column-major a^T) puts conj(V) in
    # column-major, which is vh = V^H row-major, and U^T in column-major, which is u row-major
    jobz = ord("N") if not want_vectors else ord("A") if full else ord("S")
    w = np.empty((a.shape[1], a.shape[2]), a.dtype)
    no = np.empty((1, 1), a.dtype)
    for b in range(lo, hi):
        _assign(w, a[b])
        if want_vectors:
            info[b] = gesdd(jobz, w.T, s[b], vh[b].T, u[b].T)
        else:
            info[b] = gesdd(jobz, w.T, s[b], no, no)


@njit(cache=True, nogil=True)
def svd(a, u, s, vh, info, full, want_vectors):
    """gesdd: jobz 'A' (full), 'S' (thin) or 'N' (values only)."""
    _svd_span(a, u, s, vh, info, full, want_vectors, 0, a.shape[0])


@njit(cache=True, nogil=True, parallel=True)
def svd_par(a, u, s, vh, info, full, want_vectors, parts):
    for p in prange(parts):
        lo, hi = _span(a.shape[0], parts, p)
        _svd_span(a, u, s, vh, info, full, want_vectors, lo, hi)


@njit(cache=True, nogil=True)
def _qr_span(a, q, r, complete, want_q, lo, hi):
    m, n = a.shape[1], a.shape[2]
    k = min(m, n)
    tau = np.zeros(max(k, 1), a.dtype)
    for b in range(lo, hi):
        w = _fcopy(a[b])
        geqrf(w, tau)
        for i in range(r.shape[1]):
            for j in range(n):
                r[b, i, j] = w[i, j] if j >= i else 0
        if not want_q:
            continue
        qc = q.shape[2]
        qq = np.zeros((qc, m), a.dtype).T
        for j in range(min(qc, n)):
            for i in range(m):
                qq[i, j] = w[i, j]
        if m > 0 and qc > 0:
            orgqr(qq, tau, k)
        q[b] = qq


@njit(cache=True, nogil=True)
def qr(a, q, r, complete, want_q):
    """geqrf, R from its upper triangle, Q (m, q.shape[2]) from orgqr."""
    _qr_span(a, q, r, complete, want_q, 0, a.shape[0])


@njit(cache=True, nogil=True, parallel=True)
def qr_par(a, q, r, complete, want_q, parts):
    for p in prange(parts):
        lo, hi = _span(a.shape[0], parts, p)
        _qr_span(a, q, r, complete, want_q, lo, hi)


@njit(cache=True, nogil=True)
def geqrf_batch(a, out, tau):
    """LAPACK's geqrf output as is: R above the diagonal, the reflectors below."""
    k = min(a.shape[1], a.shape[2])
    t = np.zeros(max(k, 1), a.dtype)
    for b in range(a.shape[0]):
        w = _fcopy(a[b])
        geqrf(w, t)
        out[b] = w
        for j in range(k):
            tau[b, j] = t[j]


@njit(cache=True, nogil=True)
def householder(a, tau, out):
    """orgqr: the (m, n) Q of the reflectors in ``a``'s columns and ``tau``."""
    m, n = a.shape[1], a.shape[2]
    k = tau.shape[1]
    t = np.zeros(max(k, 1), a.dtype)
    for b in range(a.shape[0]):
        w = _fcopy(a[b])
        for j in range(k):
            t[j] = tau[b, j]
        if m > 0 and n > 0:
            orgqr(w, t, k)
        out[b] = w


@njit(cache=True, nogil=True)
def eig(a, vals, vecs):
    """geev: complex eigenvalues and unit right eigenvectors of each matrix."""
    n = a.shape[1]
    worst = 0
    for b in range(a.shape[0]):
        w = _fcopy(a[b])
        v = np.empty((n, n), vecs.dtype).T
        r = geev(w, vals[b], v)
        if r != 0 and worst == 0:
            worst = r
        vecs[b] = v
    return worst


@njit(cache=True, nogil=True)
def solve_triangular(a, rhs, out, upper, unit):
    """Substitution: a x = rhs for triangular ``a`` (n, n), rhs (n, k), row by row."""
    n, k = rhs.shape[1], rhs.shape[2]
    for b in range(a.shape[0]):
        x = out[b]
        for t in range(n):
            i = n - 1 - t if upper else t
            for c in range(k):
                x[i, c] = rhs[b, i, c]
            lo, hi = (i + 1, n) if upper else (0, i)
            for j in range(lo, hi):
                aij = a[b, i, j]
                if aij != 0:
                    for c in range(k):
                        x[i, c] -= aij * x[j, c]
            if not unit:
                d = a[b, i, i]
                for c in range(k):
                    x[i, c] /= d


@njit(cache=True, nogil=True)
def pivots_to_permutation(piv, perm):
    """The row order (B, m) that LAPACK's one-based swaps ``piv`` (B, k) apply."""
    m = perm.shape[1]
    for b in range(piv.shape[0]):
        for i in range(m):
            perm[b, i] = i
        for j in range(piv.shape[1]):
            p = piv[b, j] - 1
            if p != j and 0 <= p < m:
                t = perm[b, j]
                perm[b, j] = perm[b, p]
                perm[b, p] = t


@njit(cache=True, nogil=True)
def _ldl_factor_span(a, ld, piv, info, hermitian, lo, hi):
    n = a.shape[1]
    ipiv = np.zeros(max(n, 1), _INT)
    for b in range(lo, hi):
        w = ld[b]  # row j of w is column j of the column-major factor
        for j in range(n):
            for i in range(n):
                w[j, i] = a[b, i, j] if i >= j else 0
        info[b] = sytrf(hermitian, w, ipiv)
        for j in range(n):
            piv[b, j] = ipiv[j]


@njit(cache=True, nogil=True)
def ldl_factor(a, ld, piv, info, hermitian):
    """sytrf/hetrf of each matrix's lower triangle (torch's ``tril`` first): ``ld`` (B, n, n)
    holds the column-major factors, ``piv`` (B, n) LAPACK's pivots, ``info`` (B,)."""
    _ldl_factor_span(a, ld, piv, info, hermitian, 0, a.shape[0])


@njit(cache=True, nogil=True, parallel=True)
def ldl_factor_par(a, ld, piv, info, hermitian, parts):
    for p in prange(parts):
        lo, hi = _span(a.shape[0], parts, p)
        _ldl_factor_span(a, ld, piv, info, hermitian, lo, hi)


@njit(cache=True, nogil=True)
def _ldl_solve_span(ldt, piv, rhs, out, hermitian, lo, hi):
    n = ldt.shape[1]
    ipiv = np.zeros(max(n, 1), _INT)
    for b in range(lo, hi):
        x = out[b]  # (k, n): row c is right-hand side c, the column-major (n, k) storage
        _assign(x, rhs[b].T)
        for j in range(n):
            ipiv[j] = piv[b, j]
        sytrs(hermitian, ldt[b], ipiv, x)


@njit(cache=True, nogil=True)
def ldl_solve(ldt, piv, rhs, out, hermitian):
    """sytrs/hetrs: ``ldt`` (B, n, n) the factors' column-major storage, ``rhs`` (B, n, k),
    ``out`` (B, k, n) the solutions' column-major storage."""
    _ldl_solve_span(ldt, piv, rhs, out, hermitian, 0, ldt.shape[0])


@njit(cache=True, nogil=True, parallel=True)
def ldl_solve_par(ldt, piv, rhs, out, hermitian, parts):
    for p in prange(parts):
        lo, hi = _span(ldt.shape[0], parts, p)
        _ldl_solve_span(ldt, piv, rhs, out, hermitian, lo, hi)
