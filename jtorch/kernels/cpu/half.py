"""bfloat16 for kernel entries written for float16 only.

Numba has no CPU type for either 16-bit float, so their kernels compute in float32 and round
once at the end. Entries that single out float16 by name (the reductions and softmax) get
bfloat16 from ``via_float32``: its operands are widened exactly to float32, the entry runs a
float32 plan, and the results the plan gives as bfloat16 are rounded to nearest even.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ...tensor import Tensor
from ..plan import Out, Plan

_bfloat16 = _dt.bfloat16
_HALF = _dt.HALF
_float32 = _dt.float32
_F32 = np.dtype(np.float32)
_BF16 = _bfloat16.np


def _widen_out(out):
    if out.__class__ is Out:
        return Out(out.shape, _float32, out.strides) if out.dtype is _bfloat16 else out
    if out.__class__ is tuple:
        return tuple(_widen_out(o) for o in out)
    return out


def _round(res, out):
    """A result of the float32 plan: rounded to bfloat16 where the original plan's ``out``
    says so."""
    if out.__class__ is tuple:
        return tuple(_round(r, o) for r, o in zip(res, out))
    if out.__class__ is Out and out.dtype is _bfloat16:
        return Tensor._make(res._a.astype(_BF16), None, _bfloat16)
    return res


def _uses_bfloat16(out) -> bool:
    if out.__class__ is tuple:
        return any(_uses_bfloat16(o) for o in out)
    return out.__class__ is Out and out.dtype is _bfloat16


def via_float32(entry):
    """``entry`` (``(plan, *tensors) -> result``), taking bfloat16 operands and results by
    running it in float32; other calls go straight through (one dtype test for the commonest,
    a single-tensor call with a single result)."""
    plans: dict = {}  # bfloat16 plan -> its float32 twin (meta rules memoise plans)

    def widened(plan, args: tuple):
        bf_out = _uses_bfloat16(plan.out)
        if not bf_out and not any(isinstance(x, Tensor) and x.dtype is _bfloat16 for x in args):
            return entry(plan, *args)
        wide = plans.get(plan)
        if wide is None:
            if len(plans) > 1024:
                plans.clear()
            wide = plans[plan] = Plan(_widen_out(plan.out), plan.kw, plan.device)
        args = tuple(Tensor._make(x._a.astype(_F32), None, _float32)
                     if isinstance(x, Tensor) and x.dtype is _bfloat16 else x for x in args)
        res = entry(wide, *args)
        return _round(res, plan.out) if bf_out else res

    def run(plan, x, *rest):
        out = plan.out
        if not rest and x.dtype is not _bfloat16 and out.__class__ is Out and \
                out.dtype is not _bfloat16:
            return entry(plan, x)
        return widened(plan, (x, *rest))

    run.__doc__ = entry.__doc__
    return run


def result(a: np.ndarray, d: _dt.dtype) -> Tensor:
    """A kernel's array as a tensor of dtype ``d``: float32 values of a 16-bit float result
    are rounded once here (beyond its range to inf, as in torch)."""
    if d in _HALF and a.dtype != d.np:
        with np.errstate(over="ignore"):
            a = a.astype(d.np)
    return Tensor._make(a, None, d)
