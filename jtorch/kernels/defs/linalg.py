"""Contractions: the matrix-product primitives every contraction lowers to.

``mm`` (2-D) and ``bmm`` (3-D, batched) run ``kernels/cpu/matmul`` (BLAS inside Numba for
floating and complex dtypes, a compiled loop for integers); ``addmm`` adds its scaled sum as
the product's epilogue. matmul, mv, dot, einsum, tensordot... are compositions of these and
of view ops (``ops/linalg.py``), so their gradients follow from the rules below and the view
rules.
"""

from __future__ import annotations

import jtorch as J

from ..cpu import matmul as _mk
from ..registry import defvjp, extern

mm_op = extern("mm", impl=_mk.bmm_into)    # (mat1, mat2)
bmm_op = extern("bmm", impl=_mk.bmm_into)  # (batch1, batch2)
# (input, mat1, mat2), kw beta/alpha: beta * input + alpha * mat1 @ mat2 in one kernel call
# (the product, then the scaled sum as its epilogue), one autograd node (linear's bias add)
addmm_op = extern("addmm", impl=_mk.addmm_into)


# -- gradient rules: vjp(node, grad) in jtorch ops -------------------------------------------

def _transposed(t) -> bool:
    """The last two dims of ``t`` are a transposed dense matrix (a ``.mT`` of contiguous)."""
    st, sh = t.stride(), t.shape
    return st[-2] == 1 and st[-1] == sh[-2] and sh[-1] > 1 and sh[-2] > 1


def _mm_grads(mm, a, b, need_a, need_b, g):
    """Gradients of ``mm(a, b)``, each computed in the layout of its input (as torch's
    mm_mat1/mat2_backward): a transposed input (``linear``'s ``weight.t()``) gets its gradient
    as the transpose of a row-major product, so after the view rule it is the contiguous
    gradient of the weight, with no copy at accumulation."""
    ga = gb = None
    if need_a:
        ga = mm(b, g.mT).mT if _transposed(a) else mm(g, b.mT)
    if need_b:
        gb = mm(g.mT, a).mT if _transposed(b) else mm(a.mT, g)
    return ga, gb


def _mm_vjp(c, g):
    return _mm_grads(J.mm, *c.args, *c.needs, g)


def _bmm_vjp(c, g):
    return _mm_grads(J.bmm, *c.args, *c.needs, g)


def _addmm_vjp(c, g):
    """torch's addmm rule: beta * g for input (the engine sums it down to input's shape),
    alpha times mm's gradients for the matrices."""
    _, a, b = c.args
    beta, alpha = c.kw["beta"], c.kw["alpha"]
    n = c.needs
    gi = None
    if n[0]:
        gi = g if beta == 1 else g * beta
    ga, gb = _mm_grads(J.mm, a, b, n[1], n[2], g)
    if alpha != 1:
        ga = None if ga is None else ga * alpha
        gb = None if gb is None else gb * alpha
    return gi, ga, gb


defvjp(mm_op, _mm_vjp, "01")
defvjp(bmm_op, _bmm_vjp, "01")
defvjp(addmm_op, _addmm_vjp, "12", name="AddmmBackward0")


# Singular values (matrix 2-norms and the nuclear norm): the kernel also returns U and V^T,
# which the gradient rule needs (d sigma_i = u_i^T dA v_i).
svdvals_op = extern("linalg_svdvals", impl=_mk.svd_batched)  # (A,) -> (S, U, Vh)


def _svdvals_vjp(c, g):
    gs = g[0] if isinstance(g, tuple) else g
    _, u, vh = c.out
    return ((u * gs.unsqueeze(-2)) @ vh,)


defvjp(svdvals_op, _svdvals_vjp, "o", name="LinalgSvdBackward0")
