"""Row-wise layer normalisation kernels over a contiguous (M, N) array: one pass per row for
the moments (two-pass mean then centred sum of squares, accumulated in float64) and one for
the output, so a row is read while it is in cache. The kernel also returns each row's mean
and 1 / sqrt(var + eps), which the gradient rule reads.

Rows are independent: the parallel variant runs ``prange`` over rows.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import prange

from ... import _threads
from ...tensor import Tensor
from .. import fastmath as fm


# The moment sums may be reassociated: LLVM then vectorises them (a strict left-to-right float64
# sum is one add per cycle-latency, and made layer_norm 3.5x slower than torch's).
@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def _row_sum(x, i):
    s = 0.0
    for j in range(x.shape[1]):
        s += x[i, j]
    return s


@numba.njit(cache=True, nogil=True, fastmath={"reassoc"})
def _row_centred_ss(x, i, m):
    ss = 0.0
    for j in range(x.shape[1]):
        d = x[i, j] - m
        ss += d * d
    return ss


def _row(x, w, b, eps, y, mean, rstd, i, affine_w, affine_b):
    n = x.shape[1]
    m = _row_sum(x, i) / n
    ss = _row_centred_ss(x, i, m)
    r = 1.0 / math.sqrt(ss / n + eps)
    # the output pass in x's precision (8 float32 lanes, not 4 float64), with the mean as
    # mh + ml: x - mh is exact near the mean, so rows far from zero keep their accuracy
    # (torch's x * rstd - mean * rstd loses it)
    mh = fm.like(mean[i], m)  # mean has x's dtype and a row i even when n == 0
    ml = fm.like(mean[i], m - mh)
    rx = fm.like(mean[i], r)
    for j in range(n):
        v = ((x[i, j] - mh) - ml) * rx
        if affine_w:
            v = v * w[j]
        if affine_b:
            v = v + b[j]
        y[i, j] = v
    mean[i] = m
    rstd[i] = r


_row_jit = numba.njit(cache=True, nogil=True, inline="always")(_row)


@numba.njit(cache=True, nogil=True)
def layer_norm_fwd(x, w, b, eps, y, mean, rstd, affine_w, affine_b):
    for i in range(x.shape[0]):
        _row_jit(x, w, b, eps, y, mean, rstd, i, affine_w, affine_b)


@numba.njit(cache=True, nogil=True, parallel=True)
def layer_norm_fwd_par(x, w, b, eps, y, mean, rstd, affine_w, affine_b):
    for i in prange(x.shape[0]):
        _row_jit(x, w, b, eps, y, mean, rstd, i, affine_w, affine_b)


def layer_norm(x: np.ndarray, w: np.ndarray | None, b: np.ndarray | None, eps: float) -> tuple:
    """(y, mean, rstd) for a contiguous 2-D ``x``; ``w`` and ``b`` are 1-D or None."""
    m = x.shape[0]
    y = np.empty_like(x)
    mean = np.empty(m, x.dtype)
    rstd = np.empty(m, x.dtype)
    empty = np.empty(0, x.dtype)
    fn = layer_norm_fwd_par if _threads.use_parallel(x.size) and m > 1 else layer_norm_fwd
    fn(x, empty if w is None else w, empty if b is None else b, float(eps), y, mean, rstd,
       w is not None, b is not None)
    return y, mean, rstd


def layer_norm_cpu(plan, input, weight, bias) -> tuple:
    """The kernel entry of ``native_layer_norm`` (``defs/normalization.py``): (y, mean, rstd)."""
    out, stat, _ = plan.out
    shape = out.shape
    k = len(plan.kw["dims"])
    n = m = 1
    for s in shape[len(shape) - k:]:
        n *= s
    for s in shape[:len(shape) - k]:
        m *= s
    x = np.ascontiguousarray(input._a).reshape(m, n)
    w = None if weight is None else np.ascontiguousarray(weight._a).reshape(n)
    b = None if bias is None else np.ascontiguousarray(bias._a).reshape(n)
    y, mean, rstd = layer_norm(x, w, b, plan.kw["eps"])
    d = out.dtype
    return (Tensor._make(y.reshape(shape), None, d), Tensor._make(mean.reshape(stat.shape), None, d),
            Tensor._make(rstd.reshape(stat.shape), None, d))
