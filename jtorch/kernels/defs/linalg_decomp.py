"""Decompositions and solvers: torch.linalg's LAPACK-backed primitives.

Each op takes batches of matrices (..., m, n) with equal batch dims (the public functions in
``ops/linalg_decomp.py`` broadcast and move dims first) and runs ``kernels/cpu/lapack.py``.
The ``_ex`` records return LAPACK's ``info`` too; with ``check_errors`` their kernels raise
torch's ``LinAlgError`` instead. Gradient rules are torch's (FunctionsManual.cpp), in jtorch
ops: the solves they need are these same records, so second derivatives follow.
"""

from __future__ import annotations

from ... import dispatch
from ... import dtypes as _dt
from ..plan import Out, Plan, common_device, device_of
from ..registry import defvjp, op
from ._lazy import lazy
from .view import view_as_real_op

_E = "jtorch.kernels.cpu.lapack_entries"  # imported at the first call (_lazy.py)


class LinAlgError(RuntimeError):
    """A matrix LAPACK could not factor or invert (torch.linalg.LinAlgError)."""


LinAlgError.__module__ = "jtorch.linalg"


# -- torch's checks ----------------------------------------------------------------------------

def real_of(d: _dt.dtype) -> _dt.dtype:
    return _dt.float32 if d is _dt.complex64 else _dt.float64 if d is _dt.complex128 else d


def check_matrix(a, fn: str, arg: str = "A", square: bool = False) -> tuple:
    """torch's checks of a batch of matrices; returns (batch, m, n)."""
    if a._a.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor {arg} must have at least 2 dimensions.")
    d = a.dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{d.scalar_name}")
    if d.itemsize < 4:  # float16 (torch: also bfloat16, complex32)
        raise RuntimeError(f"{fn}: Low precision dtypes not supported. Got {d.scalar_name}")
    *batch, m, n = a._a.shape
    if square and m != n:
        raise RuntimeError(f"{fn}: {arg} must be batches of square matrices, but they are {m} by "
                           f"{n} matrices")
    return tuple(batch), m, n


def _same_dtype(a, b, fn: str) -> None:
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{fn}: Expected A and B to have the same dtype, but found A of type "
                           f"{a.dtype.scalar_name} and B of type {b.dtype.scalar_name} instead")


# -- meta rules --------------------------------------------------------------------------------

def _lu_factor_meta(a, *, pivot: bool = True, check_errors: bool = False) -> Plan:
    batch, m, n = check_matrix(a, "torch.linalg.lu_factor_ex")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the CPU")
    outs = (Out((*batch, m, n), a.dtype), Out((*batch, min(m, n)), _dt.int32),
            Out(batch, _dt.int32))
    return Plan(outs, {"pivot": pivot, "check_errors": check_errors}, device_of(a))


def _inv_meta(a, *, check_errors: bool = False) -> Plan:
    batch, _m, n = check_matrix(a, "linalg.inv", square=True)
    outs = (Out((*batch, n, n), a.dtype), Out(batch, _dt.int32))
    return Plan(outs, {"check_errors": check_errors}, device_of(a))


def _det_meta(a) -> Plan:
    batch, _, _ = check_matrix(a, "linalg.det", square=True)
    return Plan(Out(batch, a.dtype), {}, device_of(a))


def _slogdet_meta(a) -> Plan:
    batch, _, _ = check_matrix(a, "linalg.slogdet", square=True)
    return Plan((Out(batch, a.dtype), Out(batch, real_of(a.dtype))), {}, device_of(a))


def _solve_meta(a, b, *, check_errors: bool = False) -> Plan:
    """A (*, n, n) X = B (*, n, k), equal batch dims."""
    batch, _, n = check_matrix(a, "linalg.solve", square=True)
    _same_dtype(a, b, "linalg.solve")
    sb = b._a.shape
    if tuple(sb[:-2]) != batch or sb[-2] != n:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation AX = B "
                           f"({n}x{n} and {sb[-2]}x{sb[-1]})")
    outs = (Out(tuple(sb), a.dtype), Out(batch, _dt.int32))
    return Plan(outs, {"check_errors": check_errors}, common_device(a, b))


def _cholesky_meta(a, *, upper: bool = False, check_errors: bool = False) -> Plan:
    batch, _, n = check_matrix(a, "linalg.cholesky", square=True)
    outs = (Out((*batch, n, n), a.dtype), Out(batch, _dt.int32))
    return Plan(outs, {"upper": bool(upper), "check_errors": check_errors}, device_of(a))


def _solve_triangular_meta(a, b, *, upper: bool, unitriangular: bool = False) -> Plan:
    batch, _, n = check_matrix(a, "linalg.solve_triangular", square=True)
    _same_dtype(a, b, "linalg.solve_triangular")
    sb = b._a.shape
    if tuple(sb[:-2]) != batch or sb[-2] != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation AX = B ({n}x{n} and {sb[-2]}x{sb[-1]})")
    return Plan(Out(tuple(sb), a.dtype), {"upper": bool(upper),
                                         "unitriangular": bool(unitriangular)},
                common_device(a, b))


def _eigh_meta(a, *, UPLO: str = "L") -> Plan:
    if UPLO not in ("L", "U", "l", "u"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    batch, _, n = check_matrix(a, "linalg.eigh", square=True)
    outs = (Out((*batch, n), real_of(a.dtype)), Out((*batch, n, n), a.dtype))
    return Plan(outs, {"UPLO": UPLO.upper()}, device_of(a))


def _svd_meta(a, *, full_matrices: bool = True) -> Plan:
    batch, m, n = check_matrix(a, "linalg.svd")
    k = min(m, n)
    ur, vc = (m, n) if full_matrices else (k, k)
    outs = (Out((*batch, m, ur), a.dtype), Out((*batch, k), real_of(a.dtype)),
            Out((*batch, vc, n), a.dtype))
    return Plan(outs, {"full_matrices": bool(full_matrices)}, device_of(a))


def _qr_meta(a, *, mode: str = "reduced") -> Plan:
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    batch, m, n = check_matrix(a, "linalg.qr")
    k = min(m, n)
    rows = m if mode == "complete" else k
    q = Out((0,), a.dtype) if mode == "r" else Out((*batch, m, rows), a.dtype)
    return Plan((q, Out((*batch, rows, n), a.dtype)), {"mode": mode}, device_of(a))


def _geqrf_meta(a) -> Plan:
    batch, m, n = check_matrix(a, "geqrf")
    return Plan((Out((*batch, m, n), a.dtype), Out((*batch, min(m, n)), a.dtype)), {},
                device_of(a))


def _householder_meta(a, tau) -> Plan:
    batch, m, n = check_matrix(a, "torch.linalg.householder_product")
    if m < n:
        raise RuntimeError("torch.linalg.householder_product: input.size(-2) must be greater than "
                           "or equal to input.size(-1)")
    st = tau._a.shape
    if st[-1:] and st[-1] > n:
        raise RuntimeError("torch.linalg.householder_product: input.size(-1) must be greater than "
                           "or equal to tau.size(-1)")
    if tuple(st[:-1]) != batch:
        raise RuntimeError(f"torch.linalg.householder_product: Expected batch dimensions of tau "
                           f"to be equal to input.shape[:-2], but got {list(st[:-1])}")
    if tau.dtype is not a.dtype:
        raise RuntimeError(f"torch.linalg.householder_product: tau dtype {tau.dtype.scalar_name} "
                           f"does not match input dtype {a.dtype.scalar_name}")
    return Plan(Out((*batch, m, n), a.dtype), {}, common_device(a, tau))


def _eig_meta(a) -> Plan:
    batch, _, n = check_matrix(a, "linalg.eig", square=True)
    c = _dt.complex64 if a.dtype in (_dt.float32, _dt.complex64) else _dt.complex128
    return Plan((Out((*batch, n), c), Out((*batch, n, n), c)), {}, device_of(a))


def _lu_permutation_meta(piv, *, m: int, dtype) -> Plan:
    return Plan(Out((*piv._a.shape[:-1], m, m), dtype), {"m": m, "dtype": dtype}, device_of(piv))


def col_major_strides(shape: tuple) -> tuple:
    """torch's strides for a batch of column-major matrices (batched_matrix_contiguous_strides
    with f_contig): row-major batches, each size counted at least 1."""
    st, acc = [], 1
    for n in reversed(shape):
        st.append(acc)
        acc *= max(n, 1)
    st.reverse()
    if len(shape) >= 2:
        st[-2], st[-1] = 1, max(shape[-2], 1)
    return tuple(st)


def check_square(a, fn: str) -> tuple:
    """torch's squareCheckInputs, then checkFloatingOrComplex (sytrf's and matrix_exp's input
    checks, in that order; ``check_matrix`` asks the dtype first); returns (batch, n)."""
    if a._a.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor A must have at least 2 dimensions.")
    *batch, m, n = a._a.shape
    if m != n:
        raise RuntimeError(f"{fn}: A must be batches of square matrices, but they are {m} by "
                           f"{n} matrices")
    d = a.dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{d.scalar_name}")
    return tuple(batch), n


def _no_low_precision(d: _dt.dtype, kernel: str) -> None:
    if d.itemsize < 4 or d is _dt.bfloat16:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{d.scalar_name}'")


def _ldl_factor_meta(a, *, hermitian: bool = False) -> Plan:
    batch, n = check_square(a, "torch.linalg.ldl_factor_ex")
    _no_low_precision(a.dtype, "ldl_factor_kernel_cpu")
    shape = (*batch, n, n)
    outs = (Out(shape, a.dtype, col_major_strides(shape)), Out((*batch, n), _dt.int32),
            Out(batch, _dt.int32))
    return Plan(outs, {"hermitian": bool(hermitian)}, device_of(a))


def _ldl_solve_meta(ld, piv, b, *, hermitian: bool = False) -> Plan:
    """LD (*, n, n), pivots (*, n), B (*, n, k) with equal batch dims (the public function
    checks and broadcasts them as torch does)."""
    batch, n = check_square(ld, "torch.linalg.ldl_solve")
    _same_dtype(ld, b, "torch.linalg.ldl_solve")
    sb = tuple(b._a.shape)
    if sb[:-2] != batch or sb[-2] != n or tuple(piv._a.shape) != (*batch, n):
        raise RuntimeError(f"torch.linalg.ldl_solve: Incompatible shapes of LD {list(ld.shape)}, "
                           f"pivots {list(piv.shape)} and B {list(sb)}")
    _no_low_precision(ld.dtype, "ldl_solve_kernel_cpu")
    return Plan(Out(sb, b.dtype, col_major_strides(sb)), {"hermitian": bool(hermitian)},
                common_device(ld, piv, b))


lu_factor_ex_op = op("linalg_lu_factor_ex", "extern", _lu_factor_meta, lazy(_E, "lu_factor_cpu"))
inv_ex_op = op("linalg_inv_ex", "extern", _inv_meta, lazy(_E, "inv_cpu"))
det_op = op("linalg_det", "extern", _det_meta, lazy(_E, "det_cpu"))
slogdet_op = op("linalg_slogdet", "extern", _slogdet_meta, lazy(_E, "slogdet_cpu"))
solve_ex_op = op("linalg_solve_ex", "extern", _solve_meta, lazy(_E, "solve_cpu"))
cholesky_ex_op = op("linalg_cholesky_ex", "extern", _cholesky_meta, lazy(_E, "cholesky_cpu"))
solve_triangular_op = op("linalg_solve_triangular", "extern", _solve_triangular_meta,
                         lazy(_E, "solve_triangular_cpu"))
eigh_op = op("linalg_eigh", "extern", _eigh_meta, lazy(_E, "eigh_cpu"))
svd_op = op("linalg_svd", "extern", _svd_meta, lazy(_E, "svd_cpu"))
qr_op = op("linalg_qr", "extern", _qr_meta, lazy(_E, "qr_cpu"))
# non-differentiable as in torch's tables: geqrf. householder_product's gradient comes from
# the composite ``ops/linalg_decomp.householder_product`` records when an input needs one.
geqrf_op = op("geqrf", "extern", _geqrf_meta, lazy(_E, "geqrf_cpu"), differentiable=False)
householder_product_op = op("linalg_householder_product", "extern", _householder_meta,
                            lazy(_E, "householder_cpu"), differentiable=False)
eig_op = op("linalg_eig", "extern", _eig_meta, lazy(_E, "eig_cpu"))
# no derivative in torch either: backward raises its "derivative ... is not implemented"
ldl_factor_ex_op = op("linalg_ldl_factor_ex", "extern", _ldl_factor_meta, lazy(_E, "ldl_factor_cpu"))
ldl_solve_op = op("linalg_ldl_solve", "extern", _ldl_solve_meta, lazy(_E, "ldl_solve_cpu"))
lu_permutation_op = op("lu_unpack_permutation", "extern", _lu_permutation_meta,
                       lazy(_E, "lu_permutation_cpu"), differentiable=False)


# -- the calls the gradient rules make ---------------------------------------------------------

def _H(x):
    """The conjugate transpose of the last two dims."""
    return x.mT.conj() if x.dtype.is_complex else x.mT


def inv(a):
    return dispatch.call(inv_ex_op, a)[0]


def solve(a, b):
    return dispatch.call(solve_ex_op, a, b)[0]


def tri_solve(a, b, upper: bool, left: bool = True, unit: bool = False):
    """A X = B (left) or X A = B for triangular A, in the solve_triangular record."""
    if left:
        return dispatch.call(solve_triangular_op, a, b, upper=upper, unitriangular=unit)
    return _H(dispatch.call(solve_triangular_op, _H(a), _H(b), upper=not upper,
                            unitriangular=unit))


def _part(z, k: int):
    """The real (k=0) or imaginary (k=1) part of complex ``z``, as a view_as_real view (a
    recorded op, which compiled code can trace)."""
    return dispatch.call(view_as_real_op, z)[..., k]


def _first(g):
    return g[0] if isinstance(g, tuple) else g


def _diag_embed(v):
    return v.diag_embed()


# -- gradient rules: vjp(node, grad) in jtorch ops -------------------------------------------

def _inv_vjp(c, g):
    ai = _H(c.out[0])
    return (-(ai @ _first(g) @ ai),)


def _det_vjp(c, g):
    (a,), d = c.args, c.out
    scale = (g * d.conj()).unsqueeze(-1).unsqueeze(-1)
    return (scale * _H(inv(a)),)


def _slogdet_vjp(c, g):
    a = c.args[0]
    glog = g[1]
    return (glog.unsqueeze(-1).unsqueeze(-1) * _H(inv(a)),)


def _solve_vjp(c, g):
    a, _ = c.args
    x = c.out[0]
    gb = solve(_H(a), _first(g))
    ga = -(gb @ _H(x)) if c.needs[0] else None
    return ga, gb


def _cholesky_vjp(c, g):
    """torch's cholesky_backward: L^-H Phi(L^H gL) L^-1, Phi symmetrising the lower part."""
    upper = c.kw["upper"]
    lo, gl = c.out[0], _first(g)
    if upper:
        lo, gl = _H(lo), _H(gl)
    ga = (_H(lo) @ gl).tril()
    ga = (ga + _H(ga.tril(-1))) * 0.5
    ga = tri_solve(_H(lo), ga, upper=True)
    return (tri_solve(lo, ga, upper=False, left=False),)


def _solve_triangular_vjp(c, g):
    a, _ = c.args
    x = c.out
    upper, unit = c.kw["upper"], c.kw["unitriangular"]
    gb = dispatch.call(solve_triangular_op, _H(a), g, upper=not upper, unitriangular=unit)
    ga = None
    if c.needs[0]:
        ga = -(gb @ _H(x))
        ga = (ga.triu(1 if unit else 0) if upper else ga.tril(-1 if unit else 0))
    return ga, gb


def _eigh_vjp(c, g):
    """torch's linalg_eig_backward for Hermitian input: V (skew(V^H gV) / E + diag(gL)) V^H."""
    lam, v = c.out
    gl, gv = g
    vhgv = _H(v) @ gv
    if v.dtype.is_complex:
        _check_phase(vhgv.diagonal(0, -2, -1), "linalg_eigh_backward")
    vhgv = (vhgv - _H(vhgv)) * 0.5
    e = lam.unsqueeze(-2) - lam.unsqueeze(-1)
    n = lam.shape[-1]
    eye = e.new_ones(n).diag_embed() if n else e
    e = e + eye
    inner = vhgv / e
    inner = inner - inner * eye + _diag_embed(gl.to(inner.dtype))
    return (v @ (inner @ _H(v)),)


def _check_phase(vhgv_diag, name: str) -> None:
    """torch's check that the loss does not depend on the eigenvectors' phases (each is
    defined up to e^{i phi}): Im(diag(V^H gV)) must vanish."""
    im = _part(vhgv_diag, 1)
    if im.is_meta or not im.numel():  # no values (tracing): torch skips it for subclasses too
        return
    if not bool((im.abs() <= 1e-2).all()):
        raise RuntimeError(f"{name}: The eigenvectors in the complex case are specified up to "
                           "multiplication by e^{i phi}. The specified loss function depends on "
                           "this quantity, so it is ill-defined.")


def _eig_vjp(c, g):
    """torch's linalg_eig_backward for general A = V diag(L) V^-1, V's columns of norm one:
    V^-H (diag(gL) + (V^H gV - V^H V diag(Re diag(V^H gV))) / conj(E)) V^H, E_ij = L_j - L_i.
    A real input gets the real part."""
    lam, v = c.out
    gl, gv = g
    vh = _H(v)
    vhgv = vh @ gv
    diag = vhgv.diagonal(0, -2, -1)
    _check_phase(diag, "linalg_eig_backward")
    vhgv = vhgv - vh @ (v * _part(diag, 0).unsqueeze(-2))
    lc = lam.conj()
    e = lc.unsqueeze(-2) - lc.unsqueeze(-1)
    n = lam.shape[-1]
    eye = e.new_ones(n).diag_embed() if n else e
    inner = vhgv / (e + eye)
    inner = inner - inner * eye + _diag_embed(gl)
    ga = solve(vh, inner @ vh)
    return (ga if c._meta[0][1].is_complex else _part(ga, 0),)


def _svd_vjp(c, g):
    """torch's svd_backward (real and complex), the full factors narrowed to the thin ones."""
    a = c.args[0]
    u, s, vh = c.out
    gu, gs, gvh = g
    m, n = a.shape[-2], a.shape[-1]
    k = min(m, n)
    if c.kw["full_matrices"]:
        u, gu = u[..., :k], gu[..., :k]
        vh, gvh = vh[..., :k, :], gvh[..., :k, :]
    if k == 0:
        return (a.new_zeros(a.shape),)
    v, gv = _H(vh), _H(gvh)
    sc = s.to(u.dtype)
    uhgu = _H(u) @ gu
    uhgu = uhgu - _H(uhgu)
    vhgv = _H(v) @ gv
    vhgv = vhgv - _H(vhgv)
    s2 = s * s
    e = s2.unsqueeze(-2) - s2.unsqueeze(-1)
    eye = e.new_ones(k).diag_embed()
    e = (e + eye).to(u.dtype)
    ga = (uhgu * sc.unsqueeze(-2) + sc.unsqueeze(-1) * vhgv) / e
    ga = ga - ga * eye.to(u.dtype) + _diag_embed(gs.to(u.dtype))
    if m > n:
        ga = u @ ga
        gusinv = gu / sc.unsqueeze(-2)
        ga = ga + gusinv - u @ (_H(u) @ gusinv)
        return (ga @ vh,)
    if m < n:
        ga = ga @ vh
        gvsinv = gv / sc.unsqueeze(-2)
        ga = ga + _H(gvsinv) - (_H(gvsinv) @ v) @ vh
        return (u @ ga,)
    return (u @ (ga @ vh),)


def _qr_square_back(q, r, gq, gr):
    """A = QR with R square (m >= n): (gQ + Q copyltu(M)) R^-H, M = R gR^H - gQ^H Q."""
    mm = r @ _H(gr) - _H(gq) @ q
    low = mm.tril(-1)
    sym = low + _H(low) + _diag_embed(mm.diagonal(0, -2, -1))
    b = gq + q @ sym
    return _H(tri_solve(r, _H(b), upper=True))


def _qr_vjp(c, g):
    mode = c.kw["mode"]
    a = c.args[0]
    m, n = a.shape[-2], a.shape[-1]
    if mode == "r":
        raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed when "
                           "mode='r'. Please use linalg.qr(A, mode='reduced') if you are going to "
                           "differentiate through linalg.qr.")
    if mode == "complete" and m > n:
        raise RuntimeError("The QR decomposition is not differentiable when mode='complete' and "
                           "nrows > ncols.")
    q, r = c.out
    gq, gr = g
    if m >= n:
        return (_qr_square_back(q, r, gq, gr),)
    from ...ops.views import cat

    y = a[..., m:]
    u, gu, gv = r[..., :m], gr[..., :m], gr[..., m:]
    gx = _qr_square_back(q, u, gq + y @ _H(gv), gu)
    return (cat([gx, q @ gv], -1),)


def _lu_factor_vjp(c, g):
    """torch's linalg_lu_backward for A = P L U, L (m, k) unit lower, U (k, n) upper, gL and gU
    the strict lower and upper parts of gLU. Square: P L^-H (tril(L^H gL, -1) + triu(gU U^H))
    U^-H; wide and tall split A into its leading k x k block and the rest."""
    lu, piv, _ = c.out
    m, n = lu.shape[-2], lu.shape[-1]
    k = min(m, n)
    glu = g[0]
    from ...ops.views import cat

    eye = lu.new_ones(k).diag_embed() if k else lu[..., :0, :0]
    lo = lu[..., :, :k].tril(-1)
    lo = cat([lo[..., :k, :] + eye, lo[..., k:, :]], -2) if m > k else lo + eye
    up = lu[..., :k, :].triu()
    gl, gu = glu[..., :, :k], glu[..., :k, :]
    if m == n:
        phi = (_H(lo) @ gl.tril(-1)).tril(-1) + (gu.triu() @ _H(up)).triu()
        x = tri_solve(_H(lo), phi, upper=True, unit=True)
        x = tri_solve(_H(up), x, upper=False, left=False)
    elif m < n:  # A1 = P L^-H [(L^H gL - triu(gU) U^H)_lower U1^-H + triu(gU1)], A2 = P L^-H gU2
        x = (_H(lo) @ gl - gu.triu() @ _H(up)).tril(-1)
        x = tri_solve(_H(up[..., :k]), x, upper=False, left=False)
        x = cat([x + gu[..., :k].triu(), gu[..., k:]], -1)
        x = tri_solve(_H(lo), x, upper=True, unit=True)
    else:  # A1 = P [L1^-H (gU U^H - L^H tril(gL))_upper + tril(gL1)] U^-H, A2 = P gL2 U^-H
        x = (gu @ _H(up) - _H(lo) @ gl.tril(-1)).triu()
        x = tri_solve(_H(lo[..., :k, :]), x, upper=True, unit=True)
        x = cat([x + gl[..., :k, :].tril(-1), gl[..., k:, :]], -2)
        x = tri_solve(_H(up), x, upper=False, left=False)
    p = dispatch.call(lu_permutation_op, piv, m=m, dtype=lu.dtype)
    return (p @ x,)


defvjp(inv_ex_op, _inv_vjp, "o", name="LinalgInvExBackward0")
defvjp(det_op, _det_vjp, "0o", name="LinalgDetBackward0")
defvjp(slogdet_op, _slogdet_vjp, "0o", name="LinalgSlogdetBackward0")
defvjp(solve_ex_op, _solve_vjp, "0o", name="LinalgSolveExBackward0")
defvjp(cholesky_ex_op, _cholesky_vjp, "o", name="LinalgCholeskyExBackward0")
defvjp(solve_triangular_op, _solve_triangular_vjp, "0o", name="LinalgSolveTriangularBackward0")
defvjp(eigh_op, _eigh_vjp, "o", name="LinalgEighBackward0")
defvjp(svd_op, _svd_vjp, "0o", name="LinalgSvdBackward0")
defvjp(qr_op, _qr_vjp, "0o", name="LinalgQrBackward0")
defvjp(lu_factor_ex_op, _lu_factor_vjp, "o", name="LinalgLuFactorExBackward0")
defvjp(eig_op, _eig_vjp, "o", name="LinalgEigBackward0")
