"""The grouped matrix product's CPU kernel (``defs/grouped_mm.py``): one BLAS product per
group, into a zeroed result (rows no group covers stay 0)."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ...tensor import Tensor


def _bounds(offs) -> list:
    ends = [int(v) for v in offs._a.reshape(-1)]
    return list(zip([0, *ends[:-1]], ends))


def grouped_mm_cpu(plan, a, b, offs) -> Tensor:
    d = plan.out.dtype
    ct = np.float32 if d in _dt.HALF else d.np
    x, y = a._a.astype(ct, copy=False), b._a.astype(ct, copy=False)
    out = np.zeros(plan.out.shape, ct)
    if offs is None:
        np.matmul(x, y, out=out)
    elif x.ndim == 2 and y.ndim == 2:
        for g, (s, e) in enumerate(_bounds(offs)):
            if e > s:
                np.matmul(x[:, s:e], y[s:e], out=out[g])
    elif x.ndim == 2:
        for g, (s, e) in enumerate(_bounds(offs)):
            if e > s:
                np.matmul(x[s:e], y[g], out=out[s:e])
    else:
        for g, (s, e) in enumerate(_bounds(offs)):
            if e > s:
                np.matmul(x[g], y[:, s:e], out=out[:, s:e])
    return Tensor._make(out.astype(d.np, copy=False), None, d)
