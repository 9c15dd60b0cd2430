"""torch.lobpcg: a few extreme eigenpairs of A x = lambda B x (A symmetric, B SPD), matrix-free.

LOBPCG (Knyazev 2001) keeps a block X of n approximate eigenvectors and, each step, runs
Rayleigh-Ritz on the span of [X, P, W]: X, the previous search directions P, and the
(preconditioned) residuals W. "basic" B-normalizes that basis by Cholesky; "ortho"
(Stathopoulos and Wu 2002, Duersch et al. 2018) keeps it B-orthonormal with SVQB, which is
robust when the basis grows nearly dependent. Everything is jtorch ops, so A may be dense,
sparse COO or batched; only the iteration's bookkeeping (norms, counts) reads values.

The worker keeps torch's attribute names (iparams, ivars, fvars, bvars, tvars, A, B, iK, E, X,
S, R), so a ``tracker`` written for torch reads the same state and may set
``bvars["force_stop"]``. Gradients (dense real A, B = I) follow torch's: the eigenvalue and
eigenvector sensitivities of the k computed pairs, with a Sylvester solve for the part of the
gradient outside their span.

>>> import jtorch as torch
>>> A = torch.diag(torch.arange(1.0, 11.0, dtype=torch.float64))
>>> E, X = torch.lobpcg(A, k=2, X=torch.eye(10, 2, dtype=torch.float64) + 0.1)
>>> [round(v, 6) for v in E.tolist()]
[10.0, 9.0]
"""

from __future__ import annotations

import math

from .. import dtypes as _dt
from ..autograd.function import Function
from ..tensor import Tensor
from . import creation
from . import random as _random
from .linalg_decomp import cholesky, cholesky_solve, eigh, qr, solve_triangular

__all__ = ["lobpcg"]

_FEPS = {_dt.float32: 1.2e-07, _dt.float64: 2.23e-16}


# -- helpers: a missing B (or iK) is the identity, a sparse one multiplies through sparse.mm ----

def _mm(A: Tensor | None, X: Tensor) -> Tensor:
    if A is None:
        return X
    if A.is_sparse:
        from ..sparse import mm

        return mm(A, X)
    return A @ X


def _qform(A: Tensor | None, S: Tensor) -> Tensor:
    """S^T A S."""
    return S.mT @ _mm(A, S)


def _symeig(M: Tensor, largest: bool = False) -> tuple:
    """eigh of M's upper triangle, descending when ``largest``."""
    E, Z = eigh(M, UPLO="U")
    return (E.flip(-1), Z.flip(-1)) if largest else (E, Z)


def _floating(d: _dt.dtype) -> _dt.dtype:
    return d if d in (_dt.float16, _dt.float32, _dt.float64) else _dt.float32


class LOBPCG:
    """One matrix's LOBPCG iteration (``run``), its state in torch's names."""

    def __init__(self, A, B, X, iK, iparams: dict, fparams: dict, bparams: dict, method: str,
                 tracker) -> None:
        self.A, self.B, self.iK = A, B, iK
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method, self.tracker = method, tracker
        m, n = iparams["m"], iparams["n"]
        self.X = X
        self.E = creation.zeros(n, dtype=X.dtype)
        self.R = creation.zeros(m, n, dtype=X.dtype)
        self.S = creation.zeros(m, 3 * n, dtype=X.dtype)
        self.tvars: dict = {}
        self.ivars: dict = {"istep": 0}
        self.fvars: dict = {"_": 0.0}
        self.bvars: dict = {"_": False}

    def __str__(self) -> str:
        names = ("iparams", "fparams", "bparams", "ivars", "fvars", "bvars", "tvars", "A", "B",
                 "iK", "X", "E")
        return "LOBPCG:\n" + "".join(f"  {k}={getattr(self, k)}\n" for k in names)

    # -- the iteration ----------------------------------------------------------------------

    def run(self) -> None:
        self.update()
        self.call_tracker()
        while not self.stop_iteration():
            self.update()
            self.call_tracker()

    def call_tracker(self) -> None:
        if self.tracker is not None:
            self.tracker(self)

    def stop_iteration(self) -> bool:
        """Stop when the tracker asks, at ``niter`` steps (never for -1), or when k pairs
        have converged."""
        return (self.bvars.get("force_stop", False) or self.ivars["iterations_left"] == 0
                or self.ivars["converged_count"] >= self.iparams["k"])

    def update(self) -> None:
        if self.ivars["istep"] == 0:
            x_norm = float(self.X.norm())
            self.fvars["X_norm"] = x_norm
            self.fvars["A_norm"] = float(_mm(self.A, self.X).norm()) / x_norm
            self.fvars["B_norm"] = float(_mm(self.B, self.X).norm()) / x_norm
            self.ivars["iterations_left"] = self.iparams["niter"]
            self.ivars["converged_count"] = 0
            self.ivars["converged_end"] = 0
        if self.method == "ortho":
            self._update_ortho()
        else:
            self._update_basic()
        self.ivars["iterations_left"] -= 1
        self.ivars["istep"] += 1

    def update_residual(self) -> None:
        self.R = _mm(self.A, self.X) - _mm(self.B, self.X) * self.E

    def update_converged_count(self) -> int:
        """The number of leading pairs whose backward error ||r|| / (||x|| (||A|| + |e| ||B||))
        is below tol (Duersch et al. 2018, sec. 4.3): leading, so the pairs stay ordered."""
        prev = self.ivars["converged_count"]
        E, X, R = self.E, self.X, self.R
        scale = self.fvars["A_norm"] + E[:X.shape[-1]].abs() * self.fvars["B_norm"]
        rerr = R.norm(2, (0,)) / (X.norm(2, (0,)) * scale)
        count = int((rerr < self.fparams["tol"]).int().cumprod(0).sum())
        if count < prev:
            raise AssertionError(f"the number of converged eigenpairs (was {prev}, got {count}) "
                                 "cannot decrease")
        self.ivars["converged_count"] = count
        self.tvars["rerr"] = rerr
        return count

    def _update_basic(self) -> None:
        """Rayleigh-Ritz over [X, P, W] made B-orthonormal by Cholesky (Knyazev 2001)."""
        n, largest = self.iparams["n"], self.bparams["largest"]
        nc, ns = self.ivars["converged_count"], self.ivars["converged_end"]
        first = self.ivars["istep"] == 0
        S_ = self.X if first else self.S[:, nc:ns]
        Ri = self._get_rayleigh_ritz_transform(S_)
        E_, Z = _symeig(_qform(_qform(self.A, S_), Ri), largest)
        C = Ri @ Z
        if first:
            self.X = S_ @ C
            self.E = E_.clone()
            np_ = 0
        else:
            self.X[:, nc:] = S_ @ C[:, :n - nc]
            self.E[nc:] = E_[:n - nc]
            P = S_ @ C[:, n:2 * n - nc]
            np_ = P.shape[-1]
        self.update_residual()
        nc = self.update_converged_count()
        self.S[:, :n] = self.X
        if np_:
            self.S[:, n:n + np_] = P
        W = _mm(self.iK, self.R[:, nc:] if not first else self.R)
        self._set_w(W, n + np_)

    def _update_ortho(self) -> None:
        """Rayleigh-Ritz over a B-orthonormal [X, P, W] (SVQB keeps it so)."""
        n, largest = self.iparams["n"], self.bparams["largest"]
        nc, ns = self.ivars["converged_count"], self.ivars["converged_end"]
        if self.ivars["istep"] == 0:
            Ri = self._get_rayleigh_ritz_transform(self.X)
            E_, Z = _symeig(_qform(_qform(self.A, self.X), Ri), largest)
            self.X = self.X @ (Ri @ Z)
            self.E = E_.clone()
            self.update_residual()
            self.update_converged_count()
            self.S[:, :n] = self.X
            self._set_w(self._get_ortho(self.R, self.X), n)
            return
        S_ = self.S[:, nc:ns]
        E_, Z = _symeig(_qform(self.A, S_), largest)
        self.X[:, nc:] = S_ @ Z[:, :n - nc]
        self.E[nc:] = E_[:n - nc]
        # the new directions: the rest of the Ritz basis, orthonormalised against X's part
        P = S_ @ (Z[:, n - nc:] @ qr(Z[:n - nc, n - nc:].mT).Q)
        np_ = P.shape[-1]
        self.update_residual()
        nc = self.update_converged_count()
        self.S[:, :n] = self.X
        self.S[:, n:n + np_] = P
        self._set_w(self._get_ortho(self.R[:, nc:], self.S[:, :n + np_]), n + np_)

    def _set_w(self, W: Tensor, start: int) -> None:
        end = self.ivars["converged_end"] = start + W.shape[-1]
        if W.shape[-1]:
            self.S[:, start:end] = W

    # -- bases --------------------------------------------------------------------------------

    def _get_rayleigh_ritz_transform(self, S: Tensor) -> Tensor:
        """Ri with Ri^T (S^T B S) Ri = I (upper triangular): Cholesky of the diagonally scaled
        S^T B S, so that (S^T A S) C = (S^T B S) C E becomes a standard problem in Ri^T S^T A S
        Ri."""
        SBS = _qform(self.B, S)
        d = SBS.diagonal(0, -2, -1) ** -0.5
        R = cholesky(SBS * d * d.unsqueeze(-1), upper=True)
        return solve_triangular(R, d.diag_embed(), upper=True, left=False)

    def _get_svqb(self, U: Tensor, drop: bool, tau: float) -> Tensor:
        """B-orthonormal columns spanning U (Duersch 2015, alg. 4): eigenvalues of the scaled
        Gram matrix below tau * max are raised to it, or with ``drop`` their directions are
        dropped. Exactly zero columns of U are dropped first."""
        if U.numel() == 0:
            return U
        UBU = _qform(self.B, U)
        d = UBU.diagonal(0, -2, -1)
        nz = (d != 0).nonzero().reshape(-1)
        if nz.numel() < d.numel():
            U = U[:, nz]
            if U.numel() == 0:
                return U
            UBU = _qform(self.B, U)
            d = UBU.diagonal(0, -2, -1)
        dc = d ** -0.5
        E, Z = _symeig(UBU * dc * dc.unsqueeze(-1))
        t = tau * float(E.abs().max())
        if drop:
            keep = (E > t).nonzero().reshape(-1)
            E, Z = E[keep], Z[:, keep]
        else:
            E = E.clamp_min(t)
        return (U * dc) @ (Z * E ** -0.5)

    def _get_ortho(self, U: Tensor, V: Tensor) -> Tensor:
        """U made B-orthonormal and B-orthogonal to V (Duersch 2015, alg. 3; with
        ``ortho_use_drop``, alg. 6), repeating the projection and SVQB until the relative
        errors fall below ``ortho_tol``; empty when U lies in span(V)."""
        ip, fp = self.iparams, self.fparams
        tau_ortho, tau_drop, tau_replace = fp["ortho_tol"], fp["ortho_tol_drop"], \
            fp["ortho_tol_replace"]
        use_drop = self.bparams["ortho_use_drop"]
        for key in [k for k in self.fvars if k.startswith("ortho_") and k.endswith("_rerr")]:
            self.fvars.pop(key)
        self.ivars.pop("ortho_i", 0)
        self.ivars.pop("ortho_j", 0)
        BV_norm = float(_mm(self.B, V).norm())
        VBU = V.mT @ _mm(self.B, U)
        i = j = 0
        for i in range(ip["ortho_i_max"]):
            U = U - V @ VBU
            drop, tau_svqb = False, tau_drop
            for j in range(ip["ortho_j_max"]):
                if use_drop:
                    U = self._get_svqb(U, drop, tau_svqb)
                    drop, tau_svqb = True, tau_replace
                else:
                    U = self._get_svqb(U, False, tau_replace)
                if U.numel() == 0:  # U was in span(V)
                    self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
                    return U
                BU = _mm(self.B, U)
                UBU = U.mT @ BU
                eye = creation.eye(UBU.shape[-1], dtype=UBU.dtype)
                rerr = float((UBU - eye).norm()) / (float(BU.norm()) * float(U.norm()))
                self.fvars[f"ortho_UBUmI_rerr[{i}, {j}]"] = rerr
                if rerr < tau_ortho:
                    break
            VBU = V.mT @ BU
            rerr = float(VBU.norm()) / (BV_norm * float(U.norm()))
            self.fvars[f"ortho_VBU_rerr[{i}]"] = rerr
            if rerr < tau_ortho:
                break
            if ip["m"] < U.shape[-1] + V.shape[-1]:
                raise ValueError(f"Overdetermined shape of U: #B-cols(={ip['m']}) >= "
                                 f"#U-cols(={U.shape[-1]}) + #V-cols(={V.shape[-1]}) must hold")
        self.ivars["ortho_i"], self.ivars["ortho_j"] = i, j
        return U


# -- the call --------------------------------------------------------------------------------

def _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
            ortho_fparams, ortho_bparams) -> tuple:
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = _floating(A.dtype)
    if tol is None:
        tol = _FEPS[dtype] ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) "
                         f"is smaller than 3 x the number of requested eigenpairs (={n})")
    method = "ortho" if method is None else method
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": True if largest is None else largest}
    if method == "ortho":
        iparams.update(ortho_iparams or {})
        fparams.update(ortho_fparams or {})
        bparams.update(ortho_bparams or {})
        iparams.setdefault("ortho_i_max", 3)
        iparams.setdefault("ortho_j_max", 3)
        for key in ("ortho_tol", "ortho_tol_drop", "ortho_tol_replace"):
            fparams.setdefault(key, tol)
        bparams.setdefault("ortho_use_drop", False)

    def solve_one(A_, B_, X_, i=None):
        X_ = _random.randn(m, n, dtype=dtype) if X_ is None else X_
        if not (X_.ndim == 2 and tuple(X_.shape) == (m, n)):
            raise AssertionError(f"X{'_' if i is not None else ''} shape mismatch: got "
                                 f"{X_.shape}, expected {(m, n)}")
        ip = iparams if i is None else {**iparams, "batch_index": i}
        worker = LOBPCG(A_, B_, X_, iK, ip, fparams, bparams, method, tracker)
        worker.run()
        return worker.E[:k], worker.X[:, :k]

    if A.ndim == 2:
        return solve_one(A, B, X)
    batch = tuple(A.shape[:-2])
    N = math.prod(batch)
    bA = A.reshape(N, m, m)
    bB = B.reshape(N, m, m) if B is not None else None
    bX = X.reshape(N, *X.shape[-2:]) if X is not None else None
    E = creation.empty(N, k, dtype=dtype)
    V = creation.empty(N, m, k, dtype=dtype)
    for i in range(N):  # one iteration per matrix: each converges in its own number of steps
        E[i], V[i] = solve_one(bA[i], None if bB is None else bB[i],
                               None if bX is None else bX[i], i)
    return E.reshape(*batch, k), V.reshape(*batch, m, k)


def lobpcg(A: Tensor, k: int | None = None, B: Tensor | None = None, X: Tensor | None = None,
           n: int | None = None, iK: Tensor | None = None, niter: int | None = None,
           tol: float | None = None, largest: bool | None = None, method: str | None = None,
           tracker=None, ortho_iparams: dict | None = None, ortho_fparams: dict | None = None,
           ortho_bparams: dict | None = None) -> tuple:
    """(E (*, k), X (*, m, k)): the k largest (or smallest) eigenpairs of the symmetric
    generalized problem A x = e B x, B SPD (None: the identity), from m x n blocks of
    iterates (n >= k, 3 n <= m): for a few eigenpairs of a large or sparse A, where a full
    eigh costs too much."""
    args = (k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams,
            ortho_bparams)
    if A.requires_grad or (B is not None and B.requires_grad):
        # symmetrised, so that the gradients are symmetric as well (torch's convention)
        A_sym = (A + A.mT) / 2
        B_sym = (B + B.mT) / 2 if B is not None else None
        return _LobpcgFunction.apply(A_sym, k, B_sym, *args[2:])
    return _lobpcg(A, *args)


# -- gradients -------------------------------------------------------------------------------

class _LobpcgFunction(Function):
    @staticmethod
    def forward(ctx, A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
                ortho_fparams, ortho_bparams):
        A = A if A.is_sparse else A.contiguous()
        if B is not None and not B.is_sparse:
            B = B.contiguous()
        D, U = _lobpcg(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
                       ortho_fparams, ortho_bparams)
        ctx.save_for_backward(A, B, D, U)
        ctx.largest = largest
        return D, U

    @staticmethod
    def backward(ctx, D_grad, U_grad):
        A, B, D, U = ctx.saved_tensors
        if A.is_sparse or (B is not None and B.is_sparse and ctx.needs_input_grad[2]):
            raise ValueError("lobpcg.backward does not support sparse input yet. Note that "
                             "lobpcg.forward does though.")
        if A.dtype.is_complex or (B is not None and B.dtype.is_complex):
            raise ValueError("lobpcg.backward does not support complex input yet. Note that "
                             "lobpcg.forward does though.")
        if B is not None:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        largest = True if ctx.largest is None else ctx.largest
        return (_symeig_backward(D_grad, U_grad, A, D, U, largest),) + (None,) * 13


def _complete_backward(D_grad, U_grad, D, U) -> Tensor:
    """The eigh gradient restricted to span(U): U (diag(gD) + (U^T gU) * F) U^T with
    F_ij = 1 / (d_j - d_i), F_ii = 0."""
    diff = D.unsqueeze(-2) - D.unsqueeze(-1)
    eye = creation.eye(D.shape[-1], dtype=_dt.bool)
    F = (1 / diff.masked_fill(eye, 1)).masked_fill(eye, 0)
    Ut = U.mT
    return U @ ((D_grad.diag_embed() + (Ut @ U_grad) * F) @ Ut)


def _poly_from_roots(roots: Tensor) -> Tensor:
    """The coefficients (c_0, ..., c_k = 1) of prod_i (x - r_i), one row per batch."""
    from .views import cat

    c = roots.new_ones((*roots.shape[:-1], 1))
    zero = roots.new_zeros((*roots.shape[:-1], 1))
    for i in range(roots.shape[-1]):
        c = cat([zero, c], -1) - roots[..., i:i + 1] * cat([c, zero], -1)
    return c


def _symeig_backward(D_grad, U_grad, A, D, U, largest: bool) -> Tensor:
    """torch's gradient for k eigenpairs (D, U) of A. Inside span(U) it is the eigh gradient;
    outside, the eigenvectors' first-order change solves the Sylvester equation
    Q^T A Q dX - dX D = -Q^T dA U (Q a basis of the complement), solved in closed form through
    the characteristic polynomial p of D (Hu and Cheng 2006): (Q^T p(A) Q)^-1, definite
    (its sign known from ``largest`` and k), by Cholesky."""
    res = _complete_backward(D_grad, U_grad, D, U)
    m, k = U.shape[-2], U.shape[-1]
    if m == k:
        return res
    Ut = U.mT
    proj = creation.eye(m, dtype=A.dtype) - U @ Ut
    gen = _random_generator()
    Q = proj @ _random.randn(*A.shape[:-1], m - k, dtype=A.dtype, generator=gen)
    Qt = Q.mT
    coeffs = _poly_from_roots(D)  # (..., k + 1)
    series = U_grad.new_zeros(U_grad.shape)
    G = U_grad
    for j in range(1, k + 1):
        # sum_i coeffs[j + i] D^i by Horner's rule
        val = D.new_ones(D.shape)
        for c in range(k - 1, j - 1, -1):
            val = coeffs[..., c:c + 1] + D * val
        series = series + G * val.unsqueeze(-2)
        G = A @ G
    eye = creation.eye(m, dtype=A.dtype)
    pA = eye.expand(A.shape)
    for c in range(k - 1, -1, -1):
        pA = A @ pA + coeffs[..., c].unsqueeze(-1).unsqueeze(-1) * eye
    sign = -1 if largest and k % 2 == 1 else 1
    L = cholesky(sign * (Qt @ (pA @ Q)))
    return res - (Q @ (sign * cholesky_solve(Qt @ series, L))) @ Ut


def _random_generator():
    """A fresh generator at its default seed, as torch's backward uses (any basis of the
    complement gives the same gradient; the seed only makes it repeatable)."""
    from ..random import Generator

    return Generator()
