"""Contractions: the matrix-product primitives every contraction lowers to, and distances.

``mm`` (2-D) and ``bmm`` (3-D, batched) run ``kernels/cpu/matmul`` (BLAS inside Numba for
floating and complex dtypes, a compiled loop for integers); ``addmm`` adds its scaled sum as
the product's epilogue. matmul, mv, dot, einsum, tensordot... are compositions of these and
of view ops (``ops/linalg.py``), so their gradients follow from the rules below and the view
rules. ``linalg_svdvals`` returns the singular vectors too (its gradient reads them);
``cdist``'s forward composes jtorch ops, its gradient is torch's (zero where a distance is
zero, not the inf * 0 a composed sqrt would give).
"""

from __future__ import annotations

import math

from ... import dispatch
from ... import dtypes as _dt
from ...tensor import Tensor
from ..plan import Out, Plan, common_device, device_of, memo
from ..registry import defvjp, op
from ._lazy import lazy
from .view import expand_geometry

_NO_KW: dict = {}  # the products' plans carry no parameters (shared, never written)
# the product kernels (and the module binding their BLAS) are imported at the first product
# (_lazy.py), not by ``import jtorch``
_MK = "jtorch.kernels.cpu.matmul_entries"


# -- torch's checks ----------------------------------------------------------------------------

def check_tensor(x, name: str, pos: int = 1, arg: str = "input") -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument '{arg}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def same_dtype(a: Tensor, b: Tensor) -> None:
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{a.dtype.cpp_name} != {b.dtype.cpp_name}")


def _kernel_dtype(d: _dt.dtype, name: str) -> None:
    if d is _dt.bool:
        raise NotImplementedError(f'"{name}" not implemented for \'Bool\'')


# -- meta rules --------------------------------------------------------------------------------

def _mm_plan(a, b) -> Plan:
    check_tensor(a, "mm")
    check_tensor(b, "mm", 2, "mat2")
    if a._a.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if b._a.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    (m, k), (k2, n) = a._a.shape, b._a.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k} and {k2}x{n})")
    same_dtype(a, b)
    _kernel_dtype(a.dtype, "addmm_impl_cpu_")
    return Plan(Out((m, n), a.dtype), _NO_KW, common_device(a, b))


def _bmm_plan(a, b) -> Plan:
    check_tensor(a, "bmm")
    check_tensor(b, "bmm", 2, "mat2")
    if a._a.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if b._a.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    (bs, m, k), (bs2, k2, n) = a._a.shape, b._a.shape
    if (bs2, k2) != (bs, k):
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{bs}, {k}] but got: [{bs2}, {k2}].")
    same_dtype(a, b)
    _kernel_dtype(a.dtype, "bmm")
    return Plan(Out((bs, m, n), a.dtype), _NO_KW, common_device(a, b))


def _batched_matmul_plan(a, b) -> Plan:
    """``matmul``'s batched case after broadcasting: equal batch dims (any strides)."""
    sa, sb = a._a.shape, b._a.shape
    if len(sa) < 3 or sa[:-2] != sb[:-2] or sa[-1] != sb[-2]:
        raise RuntimeError(f"batched_matmul: shapes {list(sa)} and {list(sb)} are not a batch of "
                           "products with equal batch dims")
    same_dtype(a, b)
    _kernel_dtype(a.dtype, "bmm")
    return Plan(Out(sa[:-1] + sb[-1:], a.dtype), _NO_KW, common_device(a, b))


def _batched_matmul_meta(a, b) -> Plan:
    key = ("batched_matmul", a._a.shape, a.dtype, b._a.shape, b.dtype, a._a.__class__,
           b._a.__class__)
    plan = _plans.get(key)
    return plan if plan is not None else _memo(key, _batched_matmul_plan(a, b))


def _addmm_plan(c, a, b, beta, alpha) -> Plan:
    """beta * c + alpha * (a @ b), c broadcast to the product's shape."""
    check_tensor(c, "addmm")
    check_tensor(a, "addmm", 2, "mat1")
    check_tensor(b, "addmm", 3, "mat2")
    for t, name in ((a, "mat1"), (b, "mat2")):
        if t._a.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {t._a.ndim}-D tensor")
    (m, k), (k2, n) = a._a.shape, b._a.shape
    if k != k2:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({m}x{k} and {k2}x{n})")
    d = b.dtype
    for t, name in ((c, "self"), (a, "mat1")):
        if t.dtype is not d:
            raise RuntimeError(f"{name} and mat2 must have the same dtype, but got "
                               f"{t.dtype.scalar_name} and {d.scalar_name}")
    expand_geometry(c, (m, n))  # torch's expand errors for the added input
    _kernel_dtype(d, "addmm_impl_cpu_")
    return Plan(Out((m, n), d), {"beta": beta, "alpha": alpha}, common_device(c, a, b))


# The checked plans of products, per operand geometry, dtypes and devices (and addmm's
# scalars): the checks cost more than a lookup on the small products of a network's layers.
_plans: dict = {}
_SCALARS = (int, float, bool)


def _memo(key, plan: Plan) -> Plan:
    return memo(_plans, key, plan, 1024)


def _mm_meta(a, b) -> Plan:
    try:
        key = ("mm", a._a.shape, a.dtype, b._a.shape, b.dtype, a._a.__class__, b._a.__class__)
    except AttributeError:  # not tensors: the checks say so
        return _mm_plan(a, b)
    plan = _plans.get(key)
    return plan if plan is not None else _memo(key, _mm_plan(a, b))


def _bmm_meta(a, b) -> Plan:
    try:
        key = ("bmm", a._a.shape, a.dtype, b._a.shape, b.dtype, a._a.__class__, b._a.__class__)
    except AttributeError:
        return _bmm_plan(a, b)
    plan = _plans.get(key)
    return plan if plan is not None else _memo(key, _bmm_plan(a, b))


def _addmm_meta(c, a, b, *, beta=1, alpha=1) -> Plan:
    try:
        if type(beta) not in _SCALARS or type(alpha) not in _SCALARS:
            raise AttributeError
        key = ("addmm", c._a.shape, c.dtype, a._a.shape, a.dtype, b._a.shape, b.dtype, beta,
               alpha, c._a.__class__, a._a.__class__, b._a.__class__)
    except AttributeError:
        return _addmm_plan(c, a, b, beta, alpha)
    plan = _plans.get(key)
    return plan if plan is not None else _memo(key, _addmm_plan(c, a, b, beta, alpha))


def _svdvals_meta(a) -> Plan:
    """(S, U, Vh) of the thin SVD of each matrix of ``a`` (..., M, N)."""
    if a._a.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    d = a.dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"linalg.svd: Expected a floating point or complex tensor as input. "
                           f"Got {d.scalar_name}")
    if d in _dt.HALF:
        raise NotImplementedError(f"\"linalg_svd_cpu\" not implemented for '{d.scalar_name}'")
    *batch, m, n = a._a.shape
    k = min(m, n)
    real = _dt.float32 if d is _dt.complex64 else _dt.float64 if d is _dt.complex128 else d
    outs = (Out((*batch, k), real), Out((*batch, m, k), d), Out((*batch, k, n), d))
    return Plan(outs, _NO_KW, device_of(a))


_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


def _cdist_meta(x1, x2, *, p: float = 2.0,
                compute_mode: str = "use_mm_for_euclid_dist_if_necessary") -> Plan:
    """Distances (..., P, R) between the rows of x1 (..., P, M) and x2 (..., R, M)."""
    if x1._a.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1._a.ndim}D")
    if x2._a.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2._a.ndim}D")
    s1, s2 = x1._a.shape, x2._a.shape
    if s1[-1] != s2[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {s1[-1]} X2: "
                           f"{s2[-1]}")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {x1.dtype.scalar_name} but found "
                           f"{x2.dtype.scalar_name}")
    if not x1.dtype.is_floating_point:
        raise RuntimeError(f"cdist only supports floating-point dtypes, X1 got: "
                           f"{x1.dtype.scalar_name}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    big = s1[-2] > 25 or s2[-2] > 25
    use_mm = p == 2 and (compute_mode == _CDIST_MODES[1] or compute_mode == _CDIST_MODES[0] and big)
    batch = _broadcast(s1[:-2], s2[:-2])
    return Plan(Out((*batch, s1[-2], s2[-2]), x1.dtype), {"p": float(p), "use_mm": use_mm},
                common_device(x1, x2))


def _broadcast(a: tuple, b: tuple) -> tuple:
    """The broadcast of two batch shapes, with torch's error."""
    nd = max(len(a), len(b))
    a, b = (1,) * (nd - len(a)) + tuple(a), (1,) * (nd - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               f"at non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


mm_op = op("mm", "extern", _mm_meta, lazy(_MK, "mm_cpu"))        # (mat1, mat2)
bmm_op = op("bmm", "extern", _bmm_meta, lazy(_MK, "mm_cpu"))     # (batch1, batch2)
# matmul's batched products (a (..., m, k), b (..., k, n), equal batch dims after broadcast):
# operands are read in their own strides (attention's heads are strided views of one
# projection), never first copied into a flat (batch, m, k) layout
batched_matmul_op = op("batched_matmul", "extern", _batched_matmul_meta,
                       lazy(_MK, "batched_matmul_cpu"), grad_name="UnsafeViewBackward0")
# (input, mat1, mat2) {beta, alpha}: beta * input + alpha * mat1 @ mat2 in one kernel call
# (the product, then the scaled sum as its epilogue), one autograd node (linear's bias add)
addmm_op = op("addmm", "extern", _addmm_meta, lazy(_MK, "addmm_cpu"))
# Singular values (matrix 2-norms and the nuclear norm): the kernel also returns U and V^T,
# which the gradient rule needs (d sigma_i = u_i^T dA v_i). (A,) -> (S, U, Vh)
svdvals_op = op("linalg_svdvals", "extern", _svdvals_meta, lazy(_MK, "svdvals_cpu"))
cdist_op = op("cdist", "extern", _cdist_meta, lazy(_MK, "cdist_cpu"))  # (x1, x2) {p, use_mm}


# -- gradient rules: vjp(node, grad) in jtorch ops -------------------------------------------

def _transposed(t) -> bool:
    """The last two dims of ``t`` are a transposed dense matrix (a ``.mT`` of contiguous)."""
    st, sh = t.stride(), t.shape
    return st[-2] == 1 and st[-1] == sh[-2] and sh[-1] > 1 and sh[-2] > 1


def _mm_grads(op, a, b, need_a, need_b, g):
    """Gradients of ``mm(a, b)``, each computed in the layout of its input (as torch's
    mm_mat1/mat2_backward): a transposed input (``linear``'s ``weight.t()``) gets its gradient
    as the transpose of a row-major product, so after the view rule it is the contiguous
    gradient of the weight, with no copy at accumulation."""
    call = dispatch.call
    if a.dtype.is_complex:  # the adjoint is conjugated: g b^H and a^H g
        a, b = a.conj(), b.conj()
    ga = gb = None
    if need_a:
        ga = call(op, b, g.mT).mT if _transposed(a) else call(op, g, b.mT)
    if need_b:
        gb = call(op, g.mT, a).mT if _transposed(b) else call(op, a.mT, g)
    return ga, gb


def _mm_vjp(c, g):
    return _mm_grads(mm_op, *c.args, *c.needs, g)


def _bmm_vjp(c, g):
    return _mm_grads(bmm_op, *c.args, *c.needs, g)


def _batched_matmul_vjp(c, g):
    a, b = c.args
    n = c.needs
    call = dispatch.call
    if a.dtype.is_complex:
        a, b = a.conj(), b.conj()
    return (call(batched_matmul_op, g, b.mT) if n[0] else None,
            call(batched_matmul_op, a.mT, g) if n[1] else None)


def _addmm_vjp(c, g):
    """torch's addmm rule: beta * g for input (the engine sums it down to input's shape),
    alpha times mm's gradients for the matrices."""
    _, a, b = c.args
    beta, alpha = c.kw["beta"], c.kw["alpha"]
    n = c.needs
    gi = None
    if n[0]:
        gi = g if beta == 1 else g * beta
    ga, gb = _mm_grads(mm_op, a, b, n[1], n[2], g)
    if alpha != 1:
        ga = None if ga is None else ga * alpha
        gb = None if gb is None else gb * alpha
    return gi, ga, gb


def _svdvals_vjp(c, g):
    gs = g[0] if isinstance(g, tuple) else g
    _, u, vh = c.out
    return ((u * gs.unsqueeze(-2)) @ vh,)


def _cdist_vjp(c, g):
    x1, x2 = c.args
    dist = c.out
    p = c.kw["p"]
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)           # (..., P, R, M)
    gd = g.unsqueeze(-1)
    if p == 0:
        grad = diff * 0
    elif p == 1:
        grad = gd * diff.sign()
    elif p == math.inf:
        grad = gd * diff.sign() * (diff.abs() == dist.unsqueeze(-1))
    else:
        dd = dist.unsqueeze(-1)
        safe = dd.masked_fill(dd == 0, 1)
        if p == 2:
            scale = diff / safe
        else:
            scale = diff * diff.abs().pow(p - 2) / safe.pow(p - 1)
            if p < 1:
                scale = scale.masked_fill(diff == 0, 0)
        grad = (gd * scale).masked_fill(dd == 0, 0)
    return (grad.sum(-2) if c.needs[0] else None, -grad.sum(-3) if c.needs[1] else None)


defvjp(mm_op, _mm_vjp, "01")
defvjp(bmm_op, _bmm_vjp, "01")
defvjp(batched_matmul_op, _batched_matmul_vjp, "01")
defvjp(addmm_op, _addmm_vjp, "12", name="AddmmBackward0")
defvjp(svdvals_op, _svdvals_vjp, "o", name="LinalgSvdBackward0")
defvjp(cdist_op, _cdist_vjp, "01o")
