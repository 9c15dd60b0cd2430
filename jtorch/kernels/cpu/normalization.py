"""Row-wise layer normalisation kernels over a contiguous (M, N) array: one pass per row for
the moments (two-pass mean then centred sum of squares, accumulated in float64) and one for
the output, so a row is read while it is in cache. The kernel also returns each row's mean
and 1 / sqrt(var + eps), which the gradient rule reads.

Rows are independent: the forward runs blocks of rows (phase by phase, see ``_rows_fwd``), the
parallel variants ``prange`` over blocks or chunks of rows.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import prange

from ... import _threads
from ...tensor import Tensor
from .. import fastmath as fm
from ..jit import njit


# The moment sums may be reassociated: LLVM then vectorises them (a strict left-to-right float64
# sum is one add per cycle-latency, and made layer_norm 3.5x slower than torch's).
@njit(cache=True, nogil=True, fastmath={"reassoc"})
def _row_sum(x, i):
    s = 0.0
    for j in range(x.shape[1]):
        s += x[i, j]
    return s


@njit(cache=True, nogil=True, fastmath={"reassoc"})
def _row_centred_ss(x, i, m):
    ss = 0.0
    for j in range(x.shape[1]):
        d = x[i, j] - m
        ss += d * d
    return ss


def _block(n: int) -> int:
    """Rows per block: about 8k elements (the block stays in L1/L2), at most 32 rows."""
    return max(1, min(32, 8192 // max(n, 1)))


def _rows_fwd(x, w, b, eps, y, mean, rstd, lo, hi, affine_w, affine_b):
    """Rows [lo, hi) phase by phase: every row's mean, then every centred sum of squares, then
    the scales, then the outputs. A row's moments are a chain of latencies (sum, divide, sum,
    sqrt, divide) that one row at a time left unoverlapped: 48-wide rows ran at 1.5 ns per
    element. Each row's arithmetic is unchanged (the same bits)."""
    n = x.shape[1]
    mu = np.empty(hi - lo)  # float64 moments of the block
    rs = np.empty(hi - lo)
    for i in range(lo, hi):
        mu[i - lo] = _row_sum(x, i) / n
    for i in range(lo, hi):
        rs[i - lo] = _row_centred_ss(x, i, mu[i - lo])
    for k in range(hi - lo):
        rs[k] = 1.0 / math.sqrt(rs[k] / n + eps)
    for i in range(lo, hi):
        m = mu[i - lo]
        r = rs[i - lo]
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


_rows_fwd_jit = njit(cache=True, nogil=True, inline="always")(_rows_fwd)
_block_jit = njit(cache=True, nogil=True, inline="always")(_block)


# Rows at least this wide run pipelined (``_rows_fwd_piped``); narrower ones phase by phase.
_PIPE_N = 256


# (called, not inlined by Numba: LLVM inlines it with its flag, so the sum it is part of may be
# reassociated, and vectorises, inside a loop whose other arithmetic keeps its order)
@njit(cache=True, nogil=True, fastmath={"reassoc"})
def _radd(a, b):
    return a + b


@njit(cache=True, nogil=True)
def _out_and_next_sum(xi, w, b, yi, mh, ml, rx, xn, affine_w, affine_b):
    """Row xi's output pass into yi, and the float64 sum of row xn."""
    s = 0.0
    for j in range(xi.size):
        v = ((xi[j] - mh) - ml) * rx
        if affine_w:
            v = v * w[j]
        if affine_b:
            v = v + b[j]
        yi[j] = v
        s = _radd(s, np.float64(xn[j]))
    return s


def _rows_fwd_piped(x, w, b, eps, y, mean, rstd, lo, hi, affine_w, affine_b):
    """Rows [lo, hi) one at a time, row i's output pass also summing row i + 1: the next
    row's reads from memory overlap this row's writes (4096 x 1024 rows 20% faster at two
    threads than phase by phase). The first row's sum comes from the same loop (a pass whose
    output is written again), so every row's sum has one order."""
    if lo >= hi:
        return
    n = x.shape[1]
    z = fm.like(mean[lo], 0.0)
    s = _out_and_next_sum(x[lo], w, b, y[lo], z, z, z, x[lo], affine_w, affine_b)
    for i in range(lo, hi):
        m = s / n
        r = 1.0 / math.sqrt(_row_centred_ss(x, i, m) / n + eps)
        mh = fm.like(mean[i], m)  # (the output pass as ``_rows_fwd``'s)
        ml = fm.like(mean[i], m - mh)
        rx = fm.like(mean[i], r)
        s = _out_and_next_sum(x[i], w, b, y[i], mh, ml, rx, x[min(i + 1, hi - 1)], affine_w,
                              affine_b)
        mean[i] = m
        rstd[i] = r


_rows_fwd_piped_jit = njit(cache=True, nogil=True, inline="always")(_rows_fwd_piped)


@njit(cache=True, nogil=True, error_model="numpy")
def layer_norm_fwd(x, w, b, eps, y, mean, rstd, affine_w, affine_b):
    m = x.shape[0]
    if x.shape[1] >= _PIPE_N:
        _rows_fwd_piped_jit(x, w, b, eps, y, mean, rstd, 0, m, affine_w, affine_b)
        return
    k = _block_jit(x.shape[1])
    for lo in range(0, m, k):
        _rows_fwd_jit(x, w, b, eps, y, mean, rstd, lo, min(m, lo + k), affine_w, affine_b)


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def layer_norm_fwd_par(x, w, b, eps, y, mean, rstd, affine_w, affine_b):
    m, n = x.shape
    if n >= _PIPE_N:  # chunks of rows (two at least where there are four), each pipelined
        nc = min(max(2, m // 2), 64, max(2, m * n // 8192))
        for c in prange(nc):
            _rows_fwd_piped_jit(x, w, b, eps, y, mean, rstd, c * m // nc, (c + 1) * m // nc,
                                affine_w, affine_b)
        return
    k = _block_jit(n)
    for c in prange((m + k - 1) // k):
        _rows_fwd_jit(x, w, b, eps, y, mean, rstd, c * k, min(m, c * k + k), affine_w, affine_b)


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


def _rows(shape: tuple, k: int) -> tuple:
    """(rows, row length) of ``shape`` normalised over its last ``k`` dims."""
    lead = len(shape) - k
    return math.prod(shape[:lead]), shape[-1] if k == 1 else math.prod(shape[lead:])


def layer_norm_cpu(plan, input, weight, bias) -> tuple:
    """The kernel entry of ``native_layer_norm`` (``defs/normalization.py``): (y, mean, rstd)."""
    out, stat, _ = plan.out
    shape = out.shape
    m, n = _rows(shape, len(plan.kw["dims"]))
    x = _dense(input._a, (m, n))
    w = None if weight is None else _dense(weight._a, n)
    b = None if bias is None else _dense(bias._a, n)
    y, mean, rstd = layer_norm(x, w, b, plan.kw["eps"])
    d = out.dtype
    return (Tensor._make(y.reshape(shape), None, d), Tensor._make(mean.reshape(stat.shape), mean, d),
            Tensor._make(rstd.reshape(stat.shape), rstd, d))


# -- backward ---------------------------------------------------------------------------------
# gx = (gh - mean(gh) - xhat * mean(gh * xhat)) * rstd with gh = g * w, row by row (two passes
# over a row in cache; a row's sums in float64 over partials in x's precision); gw = sum over
# rows of g * xhat, gb = sum of g, accumulated in float64 per chunk of rows, the chunks'
# partials added at the end.

_CHUNK = 256  # elements per partial sum of a row kept in x's precision


@njit(cache=True, nogil=True, fastmath={"reassoc"})
def _grad_sums(g, x, w, mean, rstd, lo, hi, s1s, s2s, affine_w):
    """Rows [lo, hi)'s sums of g*w and g*w*xhat into ``s1s``, ``s2s`` from 0: float64 sums of
    float32-or-wider partials over chunks of ``_CHUNK`` elements (the partials stay in x's
    vector width: float64 conversions per element made the sums 2x slower). One call for a
    block of rows (a call per row cost as much as the sums of a 48-wide row)."""
    n = x.shape[1]
    for i in range(lo, hi):
        m = mean[i]
        r = rstd[i]
        s1 = 0.0
        s2 = 0.0
        for j0 in range(0, n, _CHUNK):
            e = min(n, j0 + _CHUNK)
            # (1-D views and a loop from 0: a loop from j0 over x[i, j] did not vectorise)
            gi, xi, wi = g[i, j0:e], x[i, j0:e], w[j0:e] if affine_w else w
            c1 = fm.like(m, 0.0)
            c2 = fm.like(m, 0.0)
            for j in range(e - j0):
                gh = gi[j] * wi[j] if affine_w else gi[j]
                c1 += gh
                c2 += gh * ((xi[j] - m) * r)
            s1 += c1
            s2 += c2
        s1s[i - lo] = s1
        s2s[i - lo] = s2


@njit(cache=True, nogil=True, inline="always")
def _row_coefs(mean, rstd, s1s, s2s, i, blo, n):
    """Row i's mean, rstd and the means of g*w and g*w*xhat (from its block's sums)."""
    m = mean[i]
    return m, rstd[i], fm.like(m, s1s[i - blo] / n), fm.like(m, s2s[i - blo] / n)


def _bwd_rows(g, x, mean, rstd, w, gx, gw, gb, lo, hi, affine_w, do_x, do_w, do_b):
    """Rows [lo, hi): their input gradient into ``gx``, their weight and bias sums added into
    the float64 rows ``gw`` and ``gb``. In blocks of rows, phase by phase as the forward: every
    row's two sums, then the outputs, each row's g and x read once for gx, gw and gb together
    (one pass over a row after its sums instead of three: 48-wide rows 19.7 -> 15.5 us for
    (384, 48); the sums from one call per block and partials in x's precision: 15.5 -> 11.5 us)."""
    n = x.shape[1]
    k = _block_jit(n)
    s1s = np.empty(k)
    s2s = np.empty(k)
    for blo in range(lo, hi, k):
        bhi = min(hi, blo + k)
        if do_x:
            _grad_sums(g, x, w, mean, rstd, blo, bhi, s1s, s2s, affine_w)
            if do_w and do_b:  # (training's case: one pass for the three)
                for i in range(blo, bhi):
                    m, r, a, b = _row_coefs(mean, rstd, s1s, s2s, i, blo, n)
                    for j in range(n):
                        gv = g[i, j]
                        xh = (x[i, j] - m) * r
                        gh = gv * w[j] if affine_w else gv
                        gx[i, j] = (gh - a - xh * b) * r
                        gw[j] += gv * xh
                        gb[j] += gv
                continue
            for i in range(blo, bhi):
                m, r, a, b = _row_coefs(mean, rstd, s1s, s2s, i, blo, n)
                for j in range(n):
                    gh = g[i, j] * w[j] if affine_w else g[i, j]
                    gx[i, j] = (gh - a - ((x[i, j] - m) * r) * b) * r
        for i in range(blo, bhi):
            m = mean[i]
            r = rstd[i]
            if do_w:
                for j in range(n):
                    gw[j] += g[i, j] * ((x[i, j] - m) * r)
            if do_b:
                for j in range(n):
                    gb[j] += g[i, j]


_bwd_rows_jit = njit(cache=True, nogil=True, inline="always")(_bwd_rows)


@njit(cache=True, nogil=True, inline="always")
def _store_sums(sw, sb, gw, gb, do_w, do_b):
    """The float64 sums into the weight and bias gradients, in x's dtype."""
    if do_w:
        for j in range(sw.shape[0]):
            gw[j] = sw[j]
    if do_b:
        for j in range(sb.shape[0]):
            gb[j] = sb[j]


@njit(cache=True, nogil=True, error_model="numpy")
def layer_norm_bwd(g, x, mean, rstd, w, gx, gw, gb, affine_w, do_x, do_w, do_b):
    """``gw`` and ``gb`` in x's dtype, n long where asked for (else empty); their sums run in
    float64 here (the conversion in the kernel: NumPy's casts of the sums cost ~1 us each)."""
    n = x.shape[1]
    sw = np.zeros(n)
    sb = np.zeros(n)
    _bwd_rows_jit(g, x, mean, rstd, w, gx, sw, sb, 0, x.shape[0], affine_w, do_x, do_w, do_b)
    _store_sums(sw, sb, gw, gb, do_w, do_b)


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def layer_norm_bwd_par(g, x, mean, rstd, w, gx, gw, gb, affine_w, do_x, do_w, do_b, chunks):
    """The rows in ``chunks`` chunks, each with its own float64 partials, added at the end."""
    m, n = x.shape
    parts = np.zeros((2, chunks, n))
    for c in prange(chunks):
        _bwd_rows_jit(g, x, mean, rstd, w, gx, parts[0, c], parts[1, c], c * m // chunks,
                      (c + 1) * m // chunks, affine_w, do_x, do_w, do_b)
    sw = np.zeros(n)
    sb = np.zeros(n)
    for c in range(chunks):
        for j in range(n):
            sw[j] += parts[0, c, j]
            sb[j] += parts[1, c, j]
    _store_sums(sw, sb, gw, gb, do_w, do_b)


def layer_norm_backward_cpu(plan, grad, input, mean, rstd, weight) -> tuple:
    """The kernel entry of ``native_layer_norm_backward``: (grad_input, grad_weight,
    grad_bias), each computed where ``plan.kw["mask"]`` asks for it (else an empty tensor)."""
    gx_out, gw_out, gb_out = plan.out
    do_x, do_w, do_b = plan.kw["mask"]
    m, n = _rows(input._a.shape, len(plan.kw["dims"]))  # (gx_out is empty unless asked)
    x = _dense(input._a, (m, n))
    dt = x.dtype
    w = np.empty(0, dt) if weight is None else _dense(weight._a, n)
    gx = np.empty((m, n) if do_x else (0, n), dt)
    gw = np.empty(n if do_w else 0, dt)
    gb = np.empty(n if do_b else 0, dt)
    args = (_dense(grad._a, (m, n)), x, _dense(mean._a, m), _dense(rstd._a, m), w, gx, gw, gb,
            weight is not None, do_x, do_w, do_b)
    if _threads.use_parallel(x.size) and m > 1:
        layer_norm_bwd_par(*args, min(m, numba.get_num_threads()))
    else:
        layer_norm_bwd(*args)
    d = gx_out.dtype
    return (Tensor._make(gx.reshape(gx_out.shape), None, d),
            Tensor._make(gw.reshape(gw_out.shape), None, d),
            Tensor._make(gb.reshape(gb_out.shape), None, d))


def _dense(a: np.ndarray, shape) -> np.ndarray:
    """``a`` C-contiguous (a copy only where it is not) in ``shape``."""
    return (a if a.flags.c_contiguous else np.ascontiguousarray(a)).reshape(shape)
