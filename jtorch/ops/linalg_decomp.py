"""torch.linalg's decompositions and solvers, and torch's older top-level spellings of them.

The LAPACK-backed records are in ``kernels/defs/linalg_decomp.py``; everything else here
(matrix_exp, pinv, lstsq, lu_solve, cholesky_solve, ...) composes them with jtorch ops, so its
gradient follows from theirs.

>>> import jtorch as torch
>>> torch.linalg.inv(torch.tensor([[2.0, 0.0], [0.0, 4.0]]))
tensor([[0.5000, 0.0000],
        [0.0000, 0.2500]])
"""

from __future__ import annotations

import math

from .. import dispatch
from .. import dtypes as _dt
from ..amp import state as _amp
from ..kernels.defs import linalg_decomp as D
from ..kernels.defs.linalg_decomp import LinAlgError
from ..shape import broadcast_shapes
from ..tensor import Tensor
from . import creation, views
from .linalg import _deliver, matmul, svdvals
from .linalg import matrix_norm as _matrix_norm
from .reduction import _return_type, vector_norm

__all__ = ["LinAlgError"]

_H = D._H
_R = {name: _return_type(name, fields) for name, fields in {
    "linalg_inv_ex": ("inverse", "info"), "linalg_slogdet": ("sign", "logabsdet"),
    "slogdet": ("sign", "logabsdet"), "linalg_solve_ex": ("result", "info"),
    "linalg_cholesky_ex": ("L", "info"), "linalg_qr": ("Q", "R"), "qr": ("Q", "R"),
    "linalg_eigh": ("eigenvalues", "eigenvectors"), "linalg_eig": ("eigenvalues", "eigenvectors"),
    "linalg_svd": ("U", "S", "Vh"), "svd": ("U", "S", "V"),
    "linalg_lstsq": ("solution", "residuals", "rank", "singular_values"),
    "linalg_lu_factor": ("LU", "pivots"), "linalg_lu_factor_ex": ("LU", "pivots", "info"),
    "linalg_lu": ("P", "L", "U"), "lu_unpack": ("P", "L", "U"),
    "triangular_solve": ("solution", "cloned_coefficient"), "geqrf": ("a", "tau"),
    "_lu_with_info": ("LU", "pivots", "info"), "linalg_ldl_factor": ("LD", "pivots"),
    "linalg_ldl_factor_ex": ("LD", "pivots", "info")}.items()}


def _tuple(name: str, res: tuple, out=None):
    """``res`` as torch's named tuple ``name``, written into ``out`` (a tuple) if given."""
    if out is not None:
        res = tuple(_deliver(r, o) for r, o in zip(res, out))
    return _R[name](*res)


def _check(x, name: str, arg: str = "A", pos: int = 1) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _broadcast_batch(a: Tensor, b: Tensor) -> tuple:
    """``a`` and ``b`` expanded to their common batch dims (all but the last two)."""
    batch = tuple(broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    return a.expand(*batch, *a.shape[-2:]), b.expand(*batch, *b.shape[-2:])


def _eye_like(a: Tensor, n: int) -> Tensor:
    return creation.eye(n, dtype=a.dtype, device=a.device)


# -- inverses and determinants -----------------------------------------------------------------

@_amp.fp32_op
def inv_ex(A: Tensor, *, check_errors: bool = False, out=None):
    """(inverse, info): info > 0 names the first zero pivot of a singular matrix."""
    _check(A, "linalg_inv_ex")
    return _tuple("linalg_inv_ex", dispatch.call(D.inv_ex_op, A, check_errors=check_errors), out)


@_amp.fp32_op
def inv(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The inverse of each square matrix; a singular one raises LinAlgError."""
    _check(A, "linalg_inv")
    return _deliver(dispatch.call(D.inv_ex_op, A, check_errors=True)[0], out)


def det(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The determinant of each square matrix (from its LU factorization)."""
    _check(A, "linalg_det")
    return _deliver(dispatch.call(D.det_op, A), out)


def slogdet(A: Tensor, *, out=None):
    """(sign, log|det|): the determinant without its overflow."""
    _check(A, "linalg_slogdet")
    return _tuple("linalg_slogdet", dispatch.call(D.slogdet_op, A), out)


def _slogdet_top(input: Tensor, *, out=None):
    _check(input, "slogdet", "input")
    return _tuple("slogdet", dispatch.call(D.slogdet_op, input), out)


def logdet(input: Tensor) -> Tensor:
    """log(det): nan for a negative determinant, -inf for zero."""
    _check(input, "logdet", "input")
    sign, la = dispatch.call(D.slogdet_op, input)
    if input.dtype.is_complex:
        return la.to(input.dtype) + sign.log()
    return la + sign.log()


def matrix_power(A: Tensor, n: int, *, out: Tensor | None = None) -> Tensor:
    """A^n by repeated squaring (n < 0: powers of the inverse)."""
    _check(A, "linalg_matrix_power")
    if A.ndim < 2:
        raise RuntimeError("linalg.matrix_power: The input tensor A must have at least 2 "
                           "dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"linalg.matrix_power: A must be batches of square matrices, but they "
                           f"are {A.shape[-2]} by {A.shape[-1]} matrices")
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"matrix_power(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    if n == 0:
        res = _eye_like(A, A.shape[-1]).expand(A.shape).clone()
    else:
        base = inv(A) if n < 0 else A
        res, k = None, abs(n)
        while k:
            if k & 1:
                res = base if res is None else matmul(res, base)
            k >>= 1
            if k:
                base = matmul(base, base)
        if res is A:
            res = A.clone()
    return _deliver(res, out)


# Pade 13 coefficients and the 1-norm bounds of Higham's scaling and squaring (2005)
_PADE13 = (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
           129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
           40840800.0, 960960.0, 16380.0, 182.0, 1.0)
_THETA13 = 5.371920351148152


def matrix_exp(A: Tensor) -> Tensor:
    """exp(A) by scaling and squaring with the degree-13 Pade approximant."""
    _check(A, "linalg_matrix_exp")
    _, n = D.check_square(A, "linalg.matrix_exp")
    if A.numel() == 0 or n == 0:
        return A.clone()
    if n == 1:
        return A.exp()
    # the scaling depends on the values: a meta tensor (no values) takes none, same geometry
    norm = 0.0 if A.is_meta else float(A.detach().abs().sum(-2).amax().item())
    s = 0 if not math.isfinite(norm) or norm <= _THETA13 else \
        max(0, math.ceil(math.log2(norm / _THETA13)))
    a = A / (2.0 ** s) if s else A
    b = _PADE13
    eye = _eye_like(A, n)
    a2 = matmul(a, a)
    a4 = matmul(a2, a2)
    a6 = matmul(a4, a2)
    u = matmul(a, matmul(a6, a6 * b[13] + a4 * b[11] + a2 * b[9]) + a6 * b[7] + a4 * b[5]
               + a2 * b[3] + eye * b[1])
    v = matmul(a6, a6 * b[12] + a4 * b[10] + a2 * b[8]) + a6 * b[6] + a4 * b[4] + a2 * b[2] \
        + eye * b[0]
    r = D.solve(*_broadcast_batch(v - u, v + u))
    for _ in range(s):
        r = matmul(r, r)
    return r


# -- solvers -----------------------------------------------------------------------------------

def _is_vector_rhs(A: Tensor, B: Tensor) -> bool:
    """torch's rule: B is a (batch of) vector(s) when it is 1-D or has A's shape less a dim."""
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


@_amp.fp32_op
def solve_ex(A: Tensor, B: Tensor, *, left: bool = True, check_errors: bool = False, out=None):
    """(result, info) of A X = B (left) or X A = B, batches broadcast."""
    _check(A, "linalg_solve_ex")
    _check(B, "linalg_solve_ex", "B", 2)
    D.check_matrix(A, "linalg.solve", square=True)
    D._same_dtype(A, B, "linalg.solve")
    vec = _is_vector_rhs(A, B)
    b = B.unsqueeze(-1) if vec else B
    if b.ndim < 2:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    a = A if left else A.mT
    if not left:
        b = b.mT
    if a.shape[-1] != b.shape[-2]:
        n, (r, c) = A.shape[-1], (b.shape[-2], b.shape[-1])
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and {r}x{c})")
    a, b = _broadcast_batch(a, b)
    x, info = dispatch.call(D.solve_ex_op, a, b, check_errors=check_errors)
    if not left:
        x = x.mT
    if vec:
        x = x.squeeze(-1)
    return _tuple("linalg_solve_ex", (x, info), out)


@_amp.fp32_op
def solve(A: Tensor, B: Tensor, *, left: bool = True, out: Tensor | None = None) -> Tensor:
    """The solution of A X = B (left) or X A = B; a singular A raises LinAlgError."""
    return _deliver(solve_ex(A, B, left=left, check_errors=True)[0], out)


def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False, out: Tensor | None = None) -> Tensor:
    """A X = B (or X A = B) for triangular A, by substitution (no pivoting, no check)."""
    _check(A, "linalg_solve_triangular")
    _check(B, "linalg_solve_triangular", "B", 2)
    if B.ndim < 2:
        raise RuntimeError("linalg.solve_triangular: The input tensor B must have at least 2 "
                           "dimensions.")
    D.check_matrix(A, "linalg.solve_triangular", square=True)
    D._same_dtype(A, B, "linalg.solve_triangular")
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        r, c = B.shape[-2], B.shape[-1]
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({n}x{n} and {r}x{c})")
    a, b = _broadcast_batch(A, B)
    return _deliver(D.tri_solve(a, b, upper, left, unitriangular), out)


@_amp.fp32_op
def cholesky_ex(A: Tensor, *, upper: bool = False, check_errors: bool = False, out=None):
    """(L, info): info > 0 is the order of the first leading minor that is not positive."""
    _check(A, "linalg_cholesky_ex")
    res = dispatch.call(D.cholesky_ex_op, A, upper=upper, check_errors=check_errors)
    return _tuple("linalg_cholesky_ex", res, out)


@_amp.fp32_op
def cholesky(A: Tensor, *, upper: bool = False, out: Tensor | None = None) -> Tensor:
    """L with A = L L^H (or U with A = U^H U); not positive-definite raises LinAlgError."""
    _check(A, "linalg_cholesky")
    return _deliver(dispatch.call(D.cholesky_ex_op, A, upper=upper, check_errors=True)[0], out)


def _cholesky_top(input: Tensor, upper: bool = False, *, out: Tensor | None = None) -> Tensor:
    return cholesky(input, upper=upper, out=out)


@_amp.fp32_op
def cholesky_solve(B: Tensor, L: Tensor, upper: bool = False, *,
                   out: Tensor | None = None) -> Tensor:
    """X with (L L^H) X = B (or (U^H U) X = B), from the Cholesky factor."""
    _check(B, "cholesky_solve", "input")
    _check(L, "cholesky_solve", "input2", 2)
    lo, b = _broadcast_batch(_H(L) if upper else L, B)
    y = D.tri_solve(lo, b, upper=False)
    return _deliver(D.tri_solve(_H(lo), y, upper=True), out)


@_amp.fp32_op
def cholesky_inverse(L: Tensor, upper: bool = False, *, out: Tensor | None = None) -> Tensor:
    """(L L^H)^-1 (or (U^H U)^-1) from the Cholesky factor."""
    _check(L, "cholesky_inverse", "input")
    if L.ndim < 2:
        raise RuntimeError("cholesky_inverse: The input tensor input must have at least 2 "
                           "dimensions.")
    eye = _eye_like(L, L.shape[-1]).expand(L.shape)
    return cholesky_solve(eye, L, upper, out=out)


@_amp.fp32_op
def triangular_solve(b: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False, *, out=None):
    """(solution, cloned_coefficient): torch's older spelling of solve_triangular."""
    _check(b, "triangular_solve", "input")
    _check(A, "triangular_solve", "A", 2)
    a = A.mT if transpose else A
    x = solve_triangular(a, b, upper=upper != transpose, unitriangular=unitriangular)
    return _tuple("triangular_solve", (x, A.clone()), out)


# -- LU ----------------------------------------------------------------------------------------

def lu_factor_ex(A: Tensor, *, pivot: bool = True, check_errors: bool = False, out=None):
    """(LU, pivots, info) of LAPACK's getrf: A = P L U, L unit lower, pivots one-based."""
    _check(A, "linalg_lu_factor_ex")
    res = dispatch.call(D.lu_factor_ex_op, A, pivot=pivot, check_errors=check_errors)
    if check_errors:
        _lu_check(res[2], A.ndim > 2, "torch.linalg.lu_factor_ex")
    return _tuple("linalg_lu_factor_ex", res, out)


def _lu_check(info: Tensor, batched: bool, name: str) -> None:
    if info.is_meta:  # no values to check (torch's meta kernels do not check either)
        return
    bad = (info > 0).nonzero()
    if bad.numel():
        i = int(bad[0, 0].item()) if info.ndim else 0
        v = int(info.reshape(-1)[i].item())
        where = f"(Batch element {i}): " if batched else ""
        raise LinAlgError(f"{name}: {where}U[{v},{v}] is zero and using it on lu_solve would "
                          "result in a division by zero. If you still want to perform the "
                          "factorization, consider calling linalg.lu(A, pivot) or "
                          "linalg.lu_factor_ex(A, pivot)")


def lu_factor(A: Tensor, *, pivot: bool = True, out=None):
    """(LU, pivots); a singular matrix raises LinAlgError as torch's."""
    _check(A, "linalg_lu_factor")
    lu_, piv, info = dispatch.call(D.lu_factor_ex_op, A, pivot=pivot)
    _lu_check(info, A.ndim > 2, "torch.linalg.lu_factor")
    return _tuple("linalg_lu_factor", (lu_, piv), out)


def _lu_top(A: Tensor, pivot: bool = True, get_infos: bool = False, out=None):
    """torch.lu: (LU, pivots[, infos]) of the factorization."""
    lu_, piv, info = dispatch.call(D.lu_factor_ex_op, A, pivot=pivot)
    if get_infos:
        return _tuple("_lu_with_info", (lu_, piv, info), out)
    _lu_check(info, A.ndim > 2, "torch.linalg.lu_factor")
    return _tuple("linalg_lu_factor", (lu_, piv), out)


def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True, *, out=None):
    """(P, L, U) of a packed LU factorization: A = P L U."""
    _check(LU_data, "lu_unpack", "LU_data")
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    empty = LU_data.new_empty(0)
    if unpack_pivots:
        p = dispatch.call(D.lu_permutation_op, LU_pivots.to(_dt.int32), m=m, dtype=LU_data.dtype)
    else:
        p = empty
    if unpack_data:
        lo = LU_data[..., :, :k].tril(-1) + _eye_like(LU_data, max(m, 1))[:m, :k]
        up = LU_data[..., :k, :].triu()
    else:
        lo = up = empty
    return _tuple("lu_unpack", (p, lo, up), out)


def lu(A: Tensor, *, pivot: bool = True, out=None):
    """(P, L, U) with A = P L U."""
    _check(A, "linalg_lu")
    lu_, piv, _ = dispatch.call(D.lu_factor_ex_op, A, pivot=pivot)
    return _tuple("linalg_lu", tuple(lu_unpack(lu_, piv)), out)


@_amp.fp32_op
def lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, *, left: bool = True, adjoint: bool = False,
             out: Tensor | None = None) -> Tensor:
    """X with A X = B (A^H X = B when ``adjoint``; X A = B when not ``left``), A = P L U."""
    _check(LU, "linalg_lu_solve", "LU")
    if not left:  # X A = B  <=>  A^H X^H = B^H
        return _deliver(_H(lu_solve(LU, pivots, _H(B), adjoint=not adjoint)), out)
    p, lo, up = lu_unpack(LU, pivots)
    p, b = _broadcast_batch(p, B)
    lo, up = lo.expand(*b.shape[:-2], *lo.shape[-2:]), up.expand(*b.shape[:-2], *up.shape[-2:])
    if adjoint:  # U^H L^H P^T X = B
        y = D.tri_solve(_H(up), b, upper=False)
        y = D.tri_solve(_H(lo), y, upper=True, unit=True)
        return _deliver(matmul(p, y), out)
    y = D.tri_solve(lo, matmul(p.mT, b), upper=False, unit=True)
    return _deliver(D.tri_solve(up, y, upper=True), out)


def _lu_solve_top(b: Tensor, LU_data: Tensor, LU_pivots: Tensor, *,
                  out: Tensor | None = None) -> Tensor:
    return lu_solve(LU_data, LU_pivots, b, out=out)


# -- LDL ---------------------------------------------------------------------------------------

def ldl_factor_ex(A: Tensor, *, hermitian: bool = False, check_errors: bool = False, out=None):
    """(LD, pivots, info) of LAPACK's sytrf (hetrf for Hermitian complex A): the Bunch-Kaufman
    factorization A = P L D L^H P^T of A's lower triangle, for symmetric indefinite matrices
    Cholesky cannot take. Pivots are one-based, negative pairs for D's 2x2 blocks."""
    _check(A, "linalg_ldl_factor_ex")
    res = dispatch.call(D.ldl_factor_ex_op, A, hermitian=hermitian)
    if check_errors:
        _ldl_check(res[2], "torch.linalg.ldl_factor_ex")
    return _tuple("linalg_ldl_factor_ex", res, out)


def _ldl_check(info: Tensor, name: str) -> None:
    """torch's error for info > 0 (an exactly zero block of D): its generic one, a
    RuntimeError, since torch has no LinAlgError message for sytrf."""
    if info.is_meta:  # no values to check
        return
    flat = info.reshape(-1)
    bad = flat.nonzero()
    if bad.numel():
        raise RuntimeError(f"{name}: Unknown error code: {int(flat[int(bad[0, 0].item())].item())}.")


def ldl_factor(A: Tensor, *, hermitian: bool = False, out=None):
    """(LD, pivots) of ldl_factor_ex; a singular D raises as torch's does."""
    _check(A, "linalg_ldl_factor")
    ld, piv, info = dispatch.call(D.ldl_factor_ex_op, A, hermitian=hermitian)
    _ldl_check(info, "torch.linalg.ldl_factor")
    return _tuple("linalg_ldl_factor", (ld, piv), out)


def ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, *, hermitian: bool = False,
              out: Tensor | None = None) -> Tensor:
    """X with A X = B from ldl_factor's (LD, pivots) (LAPACK's sytrs / hetrs); batch dims
    broadcast. Pivots may be any integer dtype."""
    _check(LD, "linalg_ldl_solve", "LD")
    _check(pivots, "linalg_ldl_solve", "pivots", 2)
    _check(B, "linalg_ldl_solve", "B", 3)
    name = "torch.linalg.ldl_solve"
    _batch, n = D.check_square(LD, name)
    if B.dtype is not LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{B.dtype.scalar_name} and A of type {LD.dtype.scalar_name} instead.")
    if B.ndim < 2:
        raise IndexError("Dimension specified as -2 but tensor has no dimensions" if not B.ndim
                         else "Dimension out of range (expected to be in range of [-1, 0], but "
                         "got -2)")
    if B.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by {n} "
                           f"but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, but "
                           f"got pivots with shape {list(pivots.shape)} instead")
    d = pivots.dtype
    if d.is_floating_point or d.is_complex or d is _dt.bool:
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got {d.scalar_name}")
    batch = tuple(broadcast_shapes(B.shape[:-2], LD.shape[:-2]))
    ld, piv = LD.expand(*batch, n, n), pivots.expand(*batch, n)
    b = B.expand(*batch, *B.shape[-2:])
    return _deliver(dispatch.call(D.ldl_solve_op, ld, piv, b, hermitian=hermitian), out)

# -- spectral decompositions --------------------------------------------------------------------

@_amp.fp32_op
def eigh(A: Tensor, UPLO: str = "L", *, out=None):
    """(eigenvalues ascending, eigenvectors as columns) of Hermitian matrices, one triangle
    read."""
    _check(A, "linalg_eigh")
    return _tuple("linalg_eigh", dispatch.call(D.eigh_op, A, UPLO=UPLO), out)


@_amp.fp32_op
def eigvalsh(A: Tensor, UPLO: str = "L", *, out: Tensor | None = None) -> Tensor:
    """The eigenvalues of Hermitian matrices, ascending."""
    _check(A, "linalg_eigvalsh")
    return _deliver(dispatch.call(D.eigh_op, A, UPLO=UPLO)[0], out)


@_amp.fp32_op
def eig(A: Tensor, *, out=None):
    """(eigenvalues, eigenvectors) of general square matrices, complex."""
    _check(A, "linalg_eig")
    return _tuple("linalg_eig", dispatch.call(D.eig_op, A), out)


@_amp.fp32_op
def eigvals(A: Tensor, *, out: Tensor | None = None) -> Tensor:
    _check(A, "linalg_eigvals")
    return _deliver(dispatch.call(D.eig_op, A)[0], out)


@_amp.fp32_op
def svd(A: Tensor, full_matrices: bool = True, *, driver=None, out=None):
    """(U, S, Vh) with A = U diag(S) Vh (LAPACK's gesdd)."""
    _check(A, "linalg_svd")
    return _tuple("linalg_svd", dispatch.call(D.svd_op, A, full_matrices=full_matrices), out)


def _svd_top(input: Tensor, some: bool = True, compute_uv: bool = True, *, out=None):
    """torch.svd: (U, S, V), V not transposed; zero U and V without ``compute_uv``."""
    _check(input, "svd", "input")
    u, s, vh = dispatch.call(D.svd_op, input, full_matrices=not some)
    v = _H(vh)
    if not compute_uv:
        m, n = input.shape[-2], input.shape[-1]
        u = input.new_zeros((*input.shape[:-2], m, m))
        v = input.new_zeros((*input.shape[:-2], n, n))
        s = s.detach()
    return _tuple("svd", (u, s, v), out)


@_amp.fp32_op
def qr(A: Tensor, mode: str = "reduced", *, out=None):
    """(Q, R) with A = Q R (Householder QR); mode 'r' leaves Q empty."""
    _check(A, "linalg_qr")
    return _tuple("linalg_qr", dispatch.call(D.qr_op, A, mode=mode), out)


def _qr_top(input: Tensor, some: bool = True, *, out=None):
    _check(input, "qr", "input")
    return _tuple("qr", dispatch.call(D.qr_op, input, mode="reduced" if some else "complete"), out)


@_amp.fp32_op
def geqrf(input: Tensor, *, out=None):
    """(a, tau): LAPACK's packed Householder QR."""
    _check(input, "geqrf", "input")
    return _tuple("geqrf", dispatch.call(D.geqrf_op, input), out)


@_amp.fp32_op
def householder_product(A: Tensor, tau: Tensor, *, out: Tensor | None = None) -> Tensor:
    """The first n columns of the product of the Householder reflectors (LAPACK's orgqr)."""
    _check(A, "linalg_householder_product", "input")
    _check(tau, "linalg_householder_product", "tau", 2)
    if dispatch.needs_grad((A, tau)):
        return _deliver(_householder_composite(A, tau), out)
    return _deliver(dispatch.call(D.householder_product_op, A, tau), out)


def _householder_composite(A: Tensor, tau: Tensor) -> Tensor:
    """The product in recorded jtorch ops, so autograd gives its gradient: Q = H_1 ... H_k E
    (E the first n columns of I), each H_i = I - tau_i v_i v_i^H applied from the right end;
    v_i is column i of A below the diagonal, with a unit diagonal entry."""
    D._householder_meta(A, tau)  # torch's checks
    m, n = A.shape[-2], A.shape[-1]
    eye = creation.eye(m, n, dtype=A.dtype, device=A.device)
    v = A.tril(-1) + eye
    q = eye.expand(*A.shape[:-2], m, n)
    for i in reversed(range(tau.shape[-1])):
        vi = v[..., :, i:i + 1]
        q = q - (tau[..., i:i + 1].unsqueeze(-1) * vi) @ (_H(vi) @ q)
    return q


@_amp.fp32_op
def orgqr(input: Tensor, tau: Tensor) -> Tensor:
    return householder_product(input, tau)


@_amp.fp32_op
def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True, transpose: bool = False,
          *, out: Tensor | None = None) -> Tensor:
    """Q @ other (or other @ Q, Q^H when ``transpose``) with Q of geqrf's reflectors."""
    _check(input, "ormqr", "input")
    m = input.shape[-2]
    k = tau.shape[-1]
    pad = views.cat([input[..., :, :k], input.new_zeros((*input.shape[:-1], m - k))], -1) \
        if m > k else input[..., :, :m]
    t = views.cat([tau, tau.new_zeros((*tau.shape[:-1], m - k))], -1) if m > k else tau[..., :m]
    q = householder_product(pad, t)
    q = _H(q) if transpose else q
    return _deliver(matmul(q, other) if left else matmul(other, q), out)


# -- derived quantities ------------------------------------------------------------------------

def _tol(s: Tensor, m: int, n: int, atol, rtol):
    """torch's threshold max(atol, rtol * sigma_max), per matrix (..., 1)."""
    smax = s.amax(-1, keepdim=True) if s.shape[-1] else s.new_zeros((*s.shape[:-1], 1))
    if rtol is None:
        eps = _dt.finfo(s.dtype).eps
        rtol = eps * max(m, n) if atol is None or (not isinstance(atol, Tensor) and atol <= 0) \
            else 0.0
    if isinstance(rtol, Tensor):
        rtol = rtol.unsqueeze(-1)
    tol = smax * rtol
    if atol is not None:
        at = atol.unsqueeze(-1) if isinstance(atol, Tensor) else atol
        tol = tol.clamp_min(at) if not isinstance(at, Tensor) else tol.maximum(at.to(tol.dtype))
    return tol


def pinv(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False,
         out: Tensor | None = None) -> Tensor:
    """The pseudo-inverse: singular values below max(atol, rtol * sigma_max) count as zero."""
    _check(A, "linalg_pinv")
    m, n = A.shape[-2], A.shape[-1]
    if hermitian:
        lam, v = eigh(A)
        tol = _tol(lam.abs(), m, n, atol, rtol)
        keep = lam.abs() > tol
        inv_l = (1 / lam.masked_fill(~keep, 1)).masked_fill(~keep, 0)
        return _deliver(matmul(v * inv_l.unsqueeze(-2).to(v.dtype), _H(v)), out)
    u, s, vh = svd(A, full_matrices=False)
    tol = _tol(s, m, n, atol, rtol)
    keep = s > tol
    inv_s = (1 / s.masked_fill(~keep, 1)).masked_fill(~keep, 0)
    return _deliver(matmul(_H(vh) * inv_s.unsqueeze(-2).to(u.dtype), _H(u)), out)


@_amp.fp32_op
def pinverse(input: Tensor, rcond: float = 1e-15) -> Tensor:
    return pinv(input, rtol=rcond)


@_amp.fp32_op
def matrix_rank(A: Tensor, *, atol=None, rtol=None, hermitian: bool = False,
                out: Tensor | None = None, tol=None) -> Tensor:
    """The number of singular values above max(atol, rtol * sigma_max)."""
    _check(A, "linalg_matrix_rank")
    if tol is not None:
        atol, rtol = tol, 0.0
    m, n = A.shape[-2], A.shape[-1]
    s = eigvalsh(A).abs() if hermitian else svdvals(A)
    tol_ = _tol(s, m, n, atol, rtol)
    return _deliver((s > tol_).sum(-1), out)


def _removed(name: str, message: str):
    def f(*args, **kwargs):
        raise RuntimeError("This function was deprecated since version 1.9 and is now removed. "
                           + message)
    f.__name__ = name
    return f


_matrix_rank_top = _removed("matrix_rank", "\nPlease use the `torch.linalg.matrix_rank` function "
                            "instead. The parameter 'symmetric' was renamed in "
                            "`torch.linalg.matrix_rank()` to 'hermitian'.")
_symeig = _removed("symeig", "The default behavior has changed from using the upper triangular "
                   "portion of the matrix by default to using the lower triangular portion.\n\n"
                   "L, _ = torch.symeig(A, upper=upper) should be replaced with:\nL = "
                   "torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\nL, V = "
                   "torch.symeig(A, eigenvectors=True) should be replaced with:\nL, V = "
                   "torch.linalg.eigh(A, UPLO='U' if upper else 'L')")
_eig_top = _removed("eig", "`torch.linalg.eig` returns complex tensors of dtype `cfloat` or "
                    "`cdouble` rather than real tensors mimicking complex tensors.\n\nL, _ = "
                    "torch.eig(A) should be replaced with:\nL_complex = torch.linalg.eigvals(A)\n\n"
                    "and\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
                    "L_complex, V_complex = torch.linalg.eig(A)")
_solve_top = _removed("solve", "`torch.solve` is deprecated in favor of `torch.linalg.solve`. "
                      "`torch.linalg.solve` has its arguments reversed and does not return the LU "
                      "factorization.\n\nTo get the LU factorization see `torch.lu`, which can be "
                      "used with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, "
                      "A).solution should be replaced with:\nX = torch.linalg.solve(A, B)")
_lstsq_top = _removed("lstsq", "`torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
                      "`torch.linalg.lstsq` has reversed arguments and does not return the QR "
                      "decomposition in the returned tuple (although it returns other information "
                      "about the problem).\n\nTo get the QR decomposition consider using "
                      "`torch.linalg.qr`.\n\nThe returned solution in `torch.lstsq` stored the "
                      "residuals of the solution in the last m - n columns of the returned value "
                      "whenever m > n. In `torch.linalg.lstsq`, the residuals are in the field "
                      "'residuals'.\n\nFor this case the solution can be computed as:\nX = "
                      "torch.linalg.lstsq(A, B).solution, residuals = torch.linalg.lstsq(A, B)."
                      "residuals")

_DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


@_amp.fp32_op
def lstsq(A: Tensor, B: Tensor, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) of min ||A X - B||, the minimum-norm
    solution from the SVD; the other fields as torch's ``driver`` (default gelsy) fills them."""
    _check(A, "linalg_lstsq", "self")
    _check(B, "linalg_lstsq", "b", 2)
    if driver is None:
        driver = "gelsy"
    if driver not in _DRIVERS:
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, gelsy, "
                           "gelsd, gelss)")
    _batch, m, n = D.check_matrix(A, "torch.linalg.lstsq")
    D._same_dtype(A, B, "torch.linalg.lstsq")
    vec = B.ndim == A.ndim - 1
    b = B.unsqueeze(-1) if vec else B
    if b.shape[-2] != m:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2). Got "
                           f"{m} != {b.shape[-2]}")
    a, b = _broadcast_batch(A, b)
    u, s, vh = svd(a, full_matrices=False)
    rt = _dt.finfo(s.dtype).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    tol = _tol(s, m, n, None, rt)
    keep = s > tol
    inv_s = (1 / s.masked_fill(~keep, 1)).masked_fill(~keep, 0)
    x = matmul(_H(vh) * inv_s.unsqueeze(-2).to(u.dtype), matmul(_H(u), b))
    empty_real = s.new_empty(0)
    rank = keep.sum(-1) if driver != "gels" else creation.empty(0, dtype=_dt.int64)
    sv = s if driver in ("gelsd", "gelss") else empty_real
    res = empty_real
    full = A.is_meta or bool((keep.sum(-1) == n).all().item())
    if driver != "gelsy" and m > n and full:
        r = matmul(a, x) - b
        res = (r.abs() ** 2 if r.dtype.is_complex else r * r).sum(-2)
    if vec:
        x = x.squeeze(-1)
        res = res.squeeze(-1) if res.numel() else res
    return _R["linalg_lstsq"](x, res, rank, sv)


@_amp.fp32_op
def cond(A: Tensor, p=None, *, out: Tensor | None = None) -> Tensor:
    """The condition number ||A|| ||A^-1|| in norm ``p`` (None: 2, from the singular values)."""
    _check(A, "linalg_cond")
    if p is None or p in (2, -2):
        s = svdvals(A)
        r = s[..., 0] / s[..., -1] if p != -2 else s[..., -1] / s[..., 0]
        return _deliver(r, out)
    return _deliver(_matrix_norm(A, p) * _matrix_norm(inv(A), p), out)


def cross(input: Tensor, other: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:
    from .numeric import cross_product as _cross

    return _deliver(_cross(input, other, dim), out)


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
    return views.diagonal(A, offset, dim1, dim2)


def vander(x: Tensor, *, N: int | None = None) -> Tensor:
    """Increasing powers x^0 .. x^(N-1) of each element along a new last dim."""
    _check(x, "linalg_vander", "x")
    if x.ndim < 1:
        raise RuntimeError("linalg.vander: x must have at least one dimension")
    n = x.shape[-1] if N is None else N
    if n <= 1 and N is not None and N < 1:
        raise RuntimeError("N must be greater than 1.")
    dtype = _dt.promote_types(x.dtype, _dt.int64)
    ones = creation.ones(*x.shape, 1, dtype=dtype, device=x.device)
    if n == 1:
        return ones
    rest = x.to(dtype).unsqueeze(-1).expand(*x.shape, n - 1)
    return views.cat([ones, rest], -1).cumprod(-1)


@_amp.fp32_op
def tensorinv(A: Tensor, ind: int = 2, *, out: Tensor | None = None) -> Tensor:
    """The inverse of A read as a (prod(A.shape[:ind]), prod(A.shape[ind:])) matrix."""
    _check(A, "linalg_tensorinv")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    rows, cols = A.shape[:ind], A.shape[ind:]
    p, q = math.prod(rows), math.prod(cols)
    if p != q:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {q} != {p}")
    return _deliver(inv(A.reshape(p, q)).reshape(*cols, *rows), out)


@_amp.fp32_op
def tensorsolve(A: Tensor, B: Tensor, dims=None, *, out: Tensor | None = None) -> Tensor:
    """X with tensordot(A, X, X.ndim) = B."""
    _check(A, "linalg_tensorsolve")
    if dims is not None:
        dims = [d % A.ndim for d in dims]
        keep = [d for d in range(A.ndim) if d not in dims]
        A = A.permute(*keep, *dims)
    rest = A.shape[B.ndim:]
    p, q = B.numel(), math.prod(rest)
    if p != q:
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other.ndim:])"
                           f" == prod(self.shape[:other.ndim]), but got {q} != {p}")
    return _deliver(solve(A.reshape(p, q), B.reshape(p)).reshape(rest), out)


def frobenius_norm(input: Tensor, dim=(-2, -1), keepdim: bool = False, *,
                   out: Tensor | None = None, axis=None) -> Tensor:
    dim = dim if axis is None else axis
    return _deliver(vector_norm(input, 2, dim, keepdim), out)


def nuclear_norm(input: Tensor, dim=(-2, -1), keepdim: bool = False, *,
                 out: Tensor | None = None) -> Tensor:
    if isinstance(dim, bool):  # nuclear_norm(input, keepdim)
        dim, keepdim = (-2, -1), dim
    return _deliver(_matrix_norm(input, "nuc", dim, keepdim), out)


# names for jtorch.linalg, the top level and Tensor's methods
LINALG = {f.__name__: f for f in (
    inv, inv_ex, det, slogdet, matrix_power, matrix_exp, solve, solve_ex, solve_triangular,
    cholesky, cholesky_ex, lu_factor, lu_factor_ex, lu, lu_solve, ldl_factor, ldl_factor_ex,
    ldl_solve, eigh, eigvalsh, eig, eigvals,
    svd, qr, householder_product, pinv, matrix_rank, lstsq, cond, cross, diagonal, vander,
    tensorinv, tensorsolve)}
LINALG["LinAlgError"] = LinAlgError
TOP_LEVEL = {
    "det": det, "logdet": logdet, "slogdet": _slogdet_top, "inverse": inv,
    "pinverse": pinverse, "matrix_power": matrix_power, "matrix_exp": matrix_exp,
    "cholesky": _cholesky_top, "cholesky_solve": cholesky_solve,
    "cholesky_inverse": cholesky_inverse, "qr": _qr_top, "svd": _svd_top, "lu": _lu_top,
    "lu_solve": _lu_solve_top, "lu_unpack": lu_unpack, "triangular_solve": triangular_solve,
    "geqrf": geqrf, "orgqr": orgqr, "ormqr": ormqr, "frobenius_norm": frobenius_norm,
    "nuclear_norm": nuclear_norm, "matrix_rank": _matrix_rank_top, "symeig": _symeig,
    "eig": _eig_top, "solve": _solve_top, "lstsq": _lstsq_top,
}
METHODS = {name: TOP_LEVEL[name] for name in (
    "det", "logdet", "slogdet", "inverse", "pinverse", "matrix_power", "matrix_exp", "cholesky",
    "cholesky_solve", "cholesky_inverse", "qr", "svd", "lu_solve", "triangular_solve", "geqrf",
    "orgqr", "ormqr", "symeig", "eig", "solve", "lstsq")}
METHODS["lu"] = lambda self, pivot=True, get_infos=False: _lu_top(self, pivot, get_infos)
