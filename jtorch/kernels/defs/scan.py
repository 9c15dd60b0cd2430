"""Scans: cumsum, cumprod, logcumsumexp, cummax, cummin: records, meta rules, gradient rules.

A scan reuses the reduction fields (``combine``, ``identity``, ``dtype_rule``, ``wide``; the
scalar functions live in ``combine.py``) over a running accumulator along one dim; cummax and
cummin also carry ``take(x, acc)`` and return the index where the running value was taken.
Results are fresh C-contiguous tensors of the input's shape (as torch's, whatever the
input's layout); the CPU kernel entry is ``kernels/cpu/scan.py``'s ``scan_cpu``.
"""

from __future__ import annotations

import math

from ... import dispatch
from ... import dtypes as _dt
from ...shape import wrap_dim
from ..cpu import scan as _sk
from ..plan import Out, Plan, device_of
from ..registry import OpDef, defvjp, holomorphic, register
from . import combine as C
from .reduction import FLOAT, SAME, SUM, _plans, cacheable, check_tensor, holds, memo, not_implemented

_int64 = _dt.int64


def _scan_plan(op: OpDef, x, dim, dtype) -> Plan:
    name = op.name
    check_tensor(x, name)
    if dim is None:
        raise TypeError(f"{name}(): argument 'dim' (position 2) must be int, not NoneType")
    shape = x._a.shape
    take = op.take is not None
    if take and not shape and dim not in (-1, 0):
        raise IndexError(f"{name}(): Expected reduction dim -1 or 0 for scalar but got {dim}")
    dim = wrap_dim(dim, len(shape))
    rule = op.dtype_rule
    if dtype is not None:
        d = _dt.to_dtype(dtype)
    elif rule == SUM:
        d = _int64 if x.dtype.category < 2 else x.dtype
    elif rule == FLOAT:
        if x.dtype.category < 2 or x.dtype.is_complex:
            raise not_implemented(op.kernel_name, x.dtype)
        d = x.dtype
    else:
        if take and x.dtype.is_complex and x._a.size:
            raise not_implemented(op.kernel_name, x.dtype)
        d = x.dtype
    out = (Out(shape, d), Out(shape, _int64)) if op.take is not None else Out(shape, d)
    return Plan(out, {"dim": dim, "dtype": dtype}, device_of(x))


def _scan_meta(op: OpDef):
    """``(x, dim, dtype)``: the result dtype by the op's rule (ints sum in int64), the input's
    shape."""

    def meta(x, dim=None, dtype=None):
        try:
            key = (op, x._a.__class__, x._a.shape, x.dtype, dim, dtype)
            plan = _plans.get(key)
        except (AttributeError, TypeError):
            return _scan_plan(op, x, dim, dtype)
        if plan is None:
            plan = _scan_plan(op, x, dim, dtype)
            if cacheable(dim, dtype):
                memo(key, plan)
        return plan

    return meta


def _scan(name: str, combine, identity, **kw) -> OpDef:
    op = register(OpDef(name, "scan", combine=combine, identity=identity, **kw))
    op.meta = _scan_meta(op)
    op.kernels["cpu"] = _sk.scan_cpu(op)
    return op


cumsum_op = _scan("cumsum", C.add, 0, dtype_rule=SUM, wide=True)
cumprod_op = _scan("cumprod", C.mul, 1, dtype_rule=SUM, wide=True)
logcumsumexp_op = _scan("logcumsumexp", C.logaddexp, -math.inf,
                        kernel_name="logcumsumexp_out_cpu", dtype_rule=FLOAT, wide=True)
# Running max/min with indices: ``take(x, acc)`` says when x replaces the running value
# (torch: ties and nan take the later index).
cummax_op = _scan("cummax", C.larger, "lowest", dtype_rule=SAME, take=C.take_max)
cummin_op = _scan("cummin", C.smaller, "highest", dtype_rule=SAME, take=C.take_min)


# -- gradient rules ------------------------------------------------------------------------

def _cummaxmin_vjp(c, g):
    """The gradient goes back to the positions the running values were taken from (the
    node's second output)."""
    shape = c._meta[0][0]
    g = g[0]
    if not len(shape) or not g.numel():
        return (g,)
    return (g.new_zeros(shape).scatter_add(c.kw["dim"], c.out_at(1), g),)


def _rev_cumsum(w, d: int):
    return w.flip(d).cumsum(d).flip(d)


def _cumsum_vjp(c, g):
    shape, dtype = c._meta[0]
    d = c.kw["dim"]
    if g.dtype is not dtype:
        g = g.to(dtype)
    if g.numel() <= 1 or shape[d] == 1:
        return (g,)
    return (_rev_cumsum(g, d),)


def _cumprod_vjp(c, g):
    """torch's cumprod_backward: sum_{j>=k} g_j y_j / x_k without zeros; with zeros an O(n)
    masked form (first-order only) or, when the gradient itself is differentiated, the
    O(n^2) products that leave out each position."""
    x = c.args[0]
    d = c.kw["dim"]
    if x.numel() <= 1 or x.shape[d] == 1:
        return (g,)
    g = g.to(x.dtype) if g.dtype is not x.dtype else g
    y = c.out
    y = y.to(x.dtype) if y.dtype is not x.dtype else y
    zero = x == 0
    if not holds(zero):
        return (_rev_cumsum(y * g, d) / x,)
    if dispatch.grad_state.enabled:
        return (_cumprod_back_quadratic(g, x, d),)
    nz = zero.cumsum(d)
    before = nz == 0                  # positions before the first zero
    first = zero & (nz == 1)          # the first zero
    through = x.where(first.logical_not(), 1.0).cumprod(d)  # products skipping the first zero
    g_before = _rev_cumsum(y * g, d) / x.where(before, 1.0)
    g_first = _rev_cumsum(g * through, d)
    return (g_before.where(before, g_first.where(first, 0.0)),)


def _cumprod_back_quadratic(g, x, d: int):
    n = x.shape[d]
    xm, gm = x.movedim(d, -1), g.movedim(d, -1)
    upper = x.new_ones((n, n), dtype=_dt.bool).triu()
    eye = upper.tril()
    # row k: the running products of x with x_k left out; only columns j >= k reach y_j
    left_out = xm.unsqueeze(-2).where(eye.logical_not(), 1.0).cumprod(-1)
    res = (left_out * gm.unsqueeze(-2)).where(upper, 0.0).sum(-1)
    return res.movedim(-1, d)


def _logcumsumexp_vjp(c, g):
    """torch's logcumsumexp_backward: positive and negative parts of g in log space."""
    x, out = c.args[0], c.out
    d = c.kw["dim"]
    if g.dim() == 0 or g.numel() == 0:
        return (g,)
    lowest = _dt.finfo(g.dtype).min
    log_abs = g.abs().log()
    pos = log_abs.where(g > 0, lowest)
    neg = log_abs.where(g < 0, lowest)

    def rev(t):
        return t.flip(d).logcumsumexp(d).flip(d)

    return ((rev(pos - out) + x).exp() - (rev(neg - out) + x).exp(),)


defvjp(cumsum_op, _cumsum_vjp, "")
defvjp(cumprod_op, holomorphic(_cumprod_vjp), "0o")
defvjp(logcumsumexp_op, _logcumsumexp_vjp, "0o")
defvjp(cummax_op, _cummaxmin_vjp, "o")
defvjp(cummin_op, _cummaxmin_vjp, "o")
