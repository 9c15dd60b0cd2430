"""LSTM layer kernels (``lstm_layer`` and its backward, ``kernels/defs/rnn.py``).

Forward: one BLAS product projects the inputs of every step (N, in) @ W_ih^T into the gate
block (N, 4H); then, step by step, h @ W_hh^T (one small BLAS product) and one fused loop over
the running rows: gate nonlinearities (``fastmath`` sigmoid/tanh, which vectorise), the cell
update, h = o * tanh(c) (then h @ W_hr^T with a projection). The activated gates and each
step's previous h and c go to the workspace.

Backward walks the steps in reverse: the gradient of h (from the output and from the next
step) gives the gate gradients in one fused loop, and dG_t @ W_hh the gradient of the
previous h; the gate gradients of all steps are kept, so dW_ih, dW_hh, the bias and the input
gradient are each one product over the whole sequence at the end.

Steps are packed (``batch_sizes``; a padded input is T steps of B rows): a step updates the
first ``n`` rows of the state and leaves the rest, which gives each sequence's own last state.
The sequences of a batch never meet until the weight gradients: the parallel builds split the
batch rows into one block per thread and run each block's whole recurrence on its thread
(BLAS serial in each), with no synchronisation between the steps.
"""

from __future__ import annotations

import contextlib

import numba
import numpy as np
from numba import prange

from ... import _threads
from ... import dtypes as _dt
from ...tensor import Tensor
from .. import fastmath as fm
from ..jit import njit


def _gates_row(gates, hh, bias, c, out, q, r, hidden):
    """Row ``r`` of the state at packed row ``q``: activate the gates (stored back in place),
    update c, write o * tanh(c) to ``out``. Each gate is read through its own slice: indexed
    as ``gates[q, hidden + j]`` (an offset Numba cannot prove non-negative, so every access
    carried a negative-index fix-up) the loop did not vectorise (20 x 64 rows: 48 -> 6 us)."""
    h2, h3 = 2 * hidden, 3 * hidden
    gi, gf, gg, go = gates[q, :hidden], gates[q, hidden:h2], gates[q, h2:h3], gates[q, h3:]
    hi, hf, hg, ho = hh[r, :hidden], hh[r, hidden:h2], hh[r, h2:h3], hh[r, h3:]
    bi, bf, bg, bo = bias[:hidden], bias[hidden:h2], bias[h2:h3], bias[h3:]
    cr, orow = c[r], out[r]
    for j in range(hidden):
        i = fm.sigmoid(gi[j] + hi[j] + bi[j])
        f = fm.sigmoid(gf[j] + hf[j] + bf[j])
        g = fm.tanh(gg[j] + hg[j] + bg[j])
        o = fm.sigmoid(go[j] + ho[j] + bo[j])
        gi[j] = i
        gf[j] = f
        gg[j] = g
        go[j] = o
        cn = f * cr[j] + i * g
        cr[j] = cn
        orow[j] = o * fm.tanh(cn)


def _grads_row(gates, cprev, dh, dc, dg, ms, q, r, hidden, proj):
    """Gate gradients of packed row ``q`` (state row ``r``) from dh (the gradient of o * tanh(c))
    and the running dc, which becomes the gradient of the previous c; with a projection, also
    o * tanh(c) to ``ms`` (for dW_hr). Gates through slices, as ``_gates_row``."""
    h2, h3 = 2 * hidden, 3 * hidden
    gi, gf, gg, go = gates[q, :hidden], gates[q, hidden:h2], gates[q, h2:h3], gates[q, h3:]
    di, df, dgg, do = dg[q, :hidden], dg[q, hidden:h2], dg[q, h2:h3], dg[q, h3:]
    cpr, dhr, dcr = cprev[q], dh[r], dc[r]
    for j in range(hidden):
        i = gi[j]
        f = gf[j]
        g = gg[j]
        o = go[j]
        one = fm.like(i, 1)
        cp = cpr[j]
        tc = fm.tanh(f * cp + i * g)
        if proj:
            ms[q, j] = o * tc
        d = dhr[j]
        dcc = dcr[j] + d * o * (one - tc * tc)
        di[j] = dcc * g * i * (one - i)
        df[j] = dcc * cp * f * (one - f)
        dgg[j] = dcc * i * (one - g * g)
        do[j] = d * tc * o * (one - o)
        dcr[j] = dcc * f


_gates_row_jit = njit(cache=True, nogil=True, inline="always")(_gates_row)
_grads_row_jit = njit(cache=True, nogil=True, inline="always")(_grads_row)


# A step's product h @ W (a few rows against a fixed weight) is too small for BLAS, whose call
# packs the whole weight each time (18 us for 20x64 @ 64x256 in float32, 15 us for 10 rows):
# two rows and four columns of h at a time against rows of W, accumulated in the output row
# (vectorised along it), take 10 us and 5 us, and no BLAS call from the threads of a block.
# (an int64 first row, not the literal 0: a literal types the serial build's call apart from
# the parallel build's, and the step loop then compiles twice)
_ZERO = np.int64(0)


@njit(cache=True, nogil=True)
def _copy_rows(dst, d0, src, s0, n):
    """dst[d0:d0 + n] = src[s0:s0 + n] of (rows, width) arrays as element loops: a 2-d slice
    assignment compiles Numba's string-formatted shape-mismatch error (seconds, cold)."""
    for r in range(n):
        for j in range(dst.shape[1]):
            dst[d0 + r, j] = src[s0 + r, j]


@njit(cache=True, nogil=True)
def _add_rows(dst, d0, src, s0, n):
    """dst[d0:d0 + n] += src[s0:s0 + n] (``+=`` on a slice assigns the slice back: the same
    cold cost as ``_copy_rows`` avoids)."""
    for r in range(n):
        for j in range(dst.shape[1]):
            dst[d0 + r, j] += src[s0 + r, j]


@njit(cache=True, nogil=True, fastmath={"contract"})
def _mm_rows(a, ra, b, out, ro, n):
    """out[ro + i] = a[ra + i] @ b for i < n (b: (K, N) C-contiguous)."""
    kk = a.shape[1]
    nn = b.shape[1]
    i = 0
    while i + 1 < n:
        p, q, u, v = ra + i, ra + i + 1, ro + i, ro + i + 1
        for j in range(nn):
            out[u, j] = 0
            out[v, j] = 0
        k = 0
        while k + 3 < kk:
            a0, a1, a2, a3 = a[p, k], a[p, k + 1], a[p, k + 2], a[p, k + 3]
            c0, c1, c2, c3 = a[q, k], a[q, k + 1], a[q, k + 2], a[q, k + 3]
            for j in range(nn):
                b0, b1, b2, b3 = b[k, j], b[k + 1, j], b[k + 2, j], b[k + 3, j]
                out[u, j] += a0 * b0 + a1 * b1 + a2 * b2 + a3 * b3
                out[v, j] += c0 * b0 + c1 * b1 + c2 * b2 + c3 * b3
            k += 4
        while k < kk:
            a0, c0 = a[p, k], a[q, k]
            for j in range(nn):
                out[u, j] += a0 * b[k, j]
                out[v, j] += c0 * b[k, j]
            k += 1
        i += 2
    if i < n:
        p, u = ra + i, ro + i
        for j in range(nn):
            out[u, j] = 0
        for k in range(kk):
            a0 = a[p, k]
            for j in range(nn):
                out[u, j] += a0 * b[k, j]


@njit(cache=True, nogil=True)
def _starts(sizes):
    starts = np.empty(sizes.shape[0], np.int64)
    s = 0
    for t in range(sizes.shape[0]):
        starts[t] = s
        s += sizes[t]
    return starts


@njit(cache=True, nogil=True)
def lstm_input_proj(x, w_ih, gates):
    """The input projection of every step, x @ W_ih^T, into the gate block."""
    np.dot(x, w_ih.T, gates)


@njit(cache=True, nogil=True)
def _forward_rows(w_hh_t, bias, w_hr_t, sizes, starts, reverse, proj, small, r0, r1, h, c, y,
                  gates, hprev, cprev, hh, m):
    """The steps of state rows [r0, r1) over the projected inputs in ``gates``; their rows of
    ``h``, ``c`` hold h0, c0 and end as h_n, c_n. ``w_hh_t``, ``w_hr_t``: the transposed
    weights (C-contiguous); ``small``: the step products in ``_mm_rows``, else BLAS."""
    hidden = w_hh_t.shape[1] // 4
    steps = sizes.shape[0]
    out = m if proj else h
    for k in range(steps):
        t = steps - 1 - k if reverse else k
        n = min(sizes[t], r1) - r0
        if n <= 0:
            continue
        q0 = starts[t] + r0
        _copy_rows(hprev, q0, h, r0, n)
        _copy_rows(cprev, q0, c, r0, n)
        if small:
            _mm_rows(h, r0, w_hh_t, hh, r0, n)
        else:
            np.dot(h[r0:r0 + n], w_hh_t, hh[r0:r0 + n])
        for r in range(n):
            _gates_row_jit(gates, hh, bias, c, out, q0 + r, r0 + r, hidden)
        if proj:
            if small:
                _mm_rows(m, r0, w_hr_t, h, r0, n)
            else:
                np.dot(m[r0:r0 + n], w_hr_t, h[r0:r0 + n])
        _copy_rows(y, q0, h, r0, n)


@njit(cache=True, nogil=True)
def _backward_rows(gy, w_hh, w_hr, sizes, starts, reverse, proj, small, r0, r1, dh, dc, gates,
                   cprev, dg, dhs, ms, dm):
    """The steps of state rows [r0, r1) in reverse, to their gate gradients in ``dg``; their
    rows of ``dh``, ``dc`` hold the gradients of h_n, c_n and end as those of h0, c0."""
    hidden = w_hh.shape[0] // 4
    steps = sizes.shape[0]
    dmh = dm if proj else dh
    for k in range(steps):
        t = k if reverse else steps - 1 - k
        n = min(sizes[t], r1) - r0
        if n <= 0:
            continue
        q0 = starts[t] + r0
        _add_rows(dh, r0, gy, q0, n)
        if proj:
            _copy_rows(dhs, q0, dh, r0, n)
            if small:
                _mm_rows(dh, r0, w_hr, dm, r0, n)
            else:
                np.dot(dh[r0:r0 + n], w_hr, dm[r0:r0 + n])
        for r in range(n):
            _grads_row_jit(gates, cprev, dmh, dc, dg, ms, q0 + r, r0 + r, hidden, proj)
        if small:
            _mm_rows(dg, q0, w_hh, dh, r0, n)
        else:
            np.dot(dg[q0:q0 + n], w_hh, dh[r0:r0 + n])


@njit(cache=True, nogil=True)
def lstm_forward(w_hh_t, bias, w_hr_t, sizes, reverse, proj, small, blocks, h, c, y, gates,
                 hprev, cprev, hh, m):
    """The steps of every row on the calling thread (``blocks`` is unused: one block)."""
    _forward_rows(w_hh_t, bias, w_hr_t, sizes, _starts(sizes), reverse, proj, small, _ZERO,
                  h.shape[0], h, c, y, gates, hprev, cprev, hh, m)


@njit(cache=True, nogil=True, parallel=True)
def lstm_forward_par(w_hh_t, bias, w_hr_t, sizes, reverse, proj, small, blocks, h, c, y, gates,
                     hprev, cprev, hh, m):
    """The steps of ``blocks`` row blocks, one per thread (rows never meet across blocks)."""
    starts = _starts(sizes)
    rows = h.shape[0]
    for i in prange(blocks):
        _forward_rows(w_hh_t, bias, w_hr_t, sizes, starts, reverse, proj, small,
                      i * rows // blocks, (i + 1) * rows // blocks, h, c, y, gates, hprev, cprev,
                      hh, m)


@njit(cache=True, nogil=True)
def lstm_backward(gy, w_hh, w_hr, sizes, reverse, proj, small, blocks, dh, dc, gates, cprev, dg,
                  dhs, ms, dm):
    """The reverse steps of every row on the calling thread (one block)."""
    _backward_rows(gy, w_hh, w_hr, sizes, _starts(sizes), reverse, proj, small, _ZERO,
                   dh.shape[0], dh, dc, gates, cprev, dg, dhs, ms, dm)


@njit(cache=True, nogil=True, parallel=True)
def lstm_backward_par(gy, w_hh, w_hr, sizes, reverse, proj, small, blocks, dh, dc, gates, cprev,
                      dg, dhs, ms, dm):
    """The reverse steps of ``blocks`` row blocks, one per thread."""
    starts = _starts(sizes)
    rows = dh.shape[0]
    for i in prange(blocks):
        _backward_rows(gy, w_hh, w_hr, sizes, starts, reverse, proj, small, i * rows // blocks,
                       (i + 1) * rows // blocks, dh, dc, gates, cprev, dg, dhs, ms, dm)


@njit(cache=True, nogil=True)
def lstm_weight_grads(dg, x, hprev, w_ih, dhs, ms, proj, need_x, dx, dw_ih, dw_hh, db, dw_hr):
    """The products over the whole sequence: dW_ih, dW_hh, dW_hr, the input gradient and the
    bias gradient (the column sums of ``dg``)."""
    np.dot(dg.T, x, dw_ih)
    np.dot(dg.T, hprev, dw_hh)
    if proj:
        np.dot(dhs.T, ms, dw_hr)
    if need_x:
        np.dot(dg, w_ih, dx)
    db[:] = 0
    for q in range(dg.shape[0]):
        for j in range(dg.shape[1]):
            db[j] += dg[q, j]


_NO_OP = contextlib.nullcontext()
SERIAL_BLAS_MACS = 1 << 21  # multiply-adds of one step's h @ W_hh^T


def _recurrence(rows: int, packed_rows: int, hidden: int, real: int, itemsize: int) -> tuple:
    """How the steps run: (row blocks, parallel build?, step products in ``_mm_rows``?, the
    BLAS context to run them in). One block per thread where the work pays for the launch
    (BLAS, where a block's rows are too many for ``_mm_rows``, serial in each thread); on one
    thread, BLAS is held serial too where a step's product is small: the loop calls it dozens of
    times, and waking BLAS's workers for each (on a shared machine, waiting for a descheduled
    one) costs more than the product."""
    serial_ok = _threads.serial_blas.available()
    most = 32 if itemsize == 4 else 16  # rows where _mm_rows beats BLAS
    blocks = 1
    if rows > 1 and _threads.use_parallel(packed_rows * 4 * hidden):
        blocks = min(numba.get_num_threads(), rows)
    small = -(-rows // blocks) <= most
    if blocks > 1 and (small or serial_ok):
        return blocks, True, small, _NO_OP if small else _threads.serial_blas()
    small = rows <= most
    serial = not small and serial_ok and rows * 4 * hidden * real < SERIAL_BLAS_MACS
    return 1, False, small, _threads.serial_blas() if serial else _NO_OP


def _c(t) -> np.ndarray:
    return np.ascontiguousarray(t._a)


def _workspace(ws: np.ndarray, n: int, hidden: int, real: int, dtype) -> tuple:
    """The (gates (N, 4H), hprev (N, P), cprev (N, H)) views of the uint8 workspace."""
    f = ws.view(dtype)
    a, b = n * 4 * hidden, n * real
    return (f[:a].reshape(n, 4 * hidden), f[a:a + b].reshape(n, real),
            f[a + b:a + b + n * hidden].reshape(n, hidden))


def lstm_layer_cpu(plan, x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr) -> tuple:
    """The kernel entry of ``lstm_layer``: (y, h_n, c_n, workspace)."""
    y_out, _, cn_out, ws_out = plan.out
    dt = y_out.dtype
    npd = x._a.dtype
    n, real = y_out.shape
    batch, hidden = cn_out.shape
    xa = _c(x)
    h = np.array(h0._a, dtype=npd, order="C")  # the running state, written in place
    c = np.array(c0._a, dtype=npd, order="C")
    if b_ih is not None and b_hh is not None:
        bias = b_ih._a + b_hh._a
    elif b_ih is not None or b_hh is not None:
        bias = np.array((b_ih if b_ih is not None else b_hh)._a, dtype=npd)
    else:
        bias = np.zeros(4 * hidden, npd)
    proj = w_hr is not None
    whr = _c(w_hr) if proj else np.empty((real, hidden), npd)
    y = np.empty((n, real), npd)
    ws = np.empty(ws_out.shape[0], np.uint8)
    gates, hprev, cprev = _workspace(ws, n, hidden, real, npd)
    hh = np.empty((batch, 4 * hidden), npd)
    m = np.empty((batch, hidden) if proj else (0, 0), npd)
    sizes = np.asarray(plan.kw["batch_sizes"], np.int64)
    lstm_input_proj(xa, _c(w_ih), gates)
    blocks, par, small, blas = _recurrence(batch, n, hidden, real, npd.itemsize)
    with blas:
        (lstm_forward_par if par else lstm_forward)(
            np.ascontiguousarray(w_hh._a.T), bias, np.ascontiguousarray(whr.T), sizes,
            plan.kw["reverse"], proj, small, blocks, h, c, y, gates, hprev, cprev, hh, m)
    return (Tensor._make(y, None, dt), Tensor._make(h, None, dt), Tensor._make(c, None, dt),
            Tensor._make(ws, None, _dt.uint8))


def lstm_layer_backward_cpu(plan, gy, ghn, gcn, x, w_ih, w_hh, w_hr, ws) -> tuple:
    """The kernel entry of ``lstm_layer_backward``: the gradients of x, h0, c0, w_ih, w_hh,
    the (shared) bias and w_hr."""
    dx_out, dh_out, dc_out, _, _, _, dwhr_out = plan.out
    dt = dx_out.dtype
    npd = x._a.dtype
    n = x._a.shape[0]
    batch, real = dh_out.shape
    hidden = dc_out.shape[1]
    proj = w_hr is not None
    gates, hprev, cprev = _workspace(ws._a, n, hidden, real, npd)
    dh = np.array(ghn._a, dtype=npd, order="C")
    dc = np.array(gcn._a, dtype=npd, order="C")
    dg = np.empty((n, 4 * hidden), npd)
    dhs = np.empty((n, real) if proj else (0, 0), npd)
    ms = np.empty((n, hidden) if proj else (0, 0), npd)
    dm = np.empty((batch, hidden) if proj else (0, 0), npd)
    need_x = plan.kw["need_x"]
    dx = np.empty(dx_out.shape if need_x else (0, 0), npd)
    dw_ih = np.empty((4 * hidden, x._a.shape[1]), npd)
    dw_hh = np.empty((4 * hidden, real), npd)
    db = np.empty(4 * hidden, npd)
    dw_hr = np.empty(dwhr_out.shape, npd)
    sizes = np.asarray(plan.kw["batch_sizes"], np.int64)
    whr = _c(w_hr) if proj else np.empty((real, hidden), npd)
    blocks, par, small, blas = _recurrence(batch, n, hidden, real, npd.itemsize)
    with blas:
        (lstm_backward_par if par else lstm_backward)(
            _c(gy), _c(w_hh), whr, sizes, plan.kw["reverse"], proj, small, blocks, dh, dc, gates,
            cprev, dg, dhs, ms, dm)
    lstm_weight_grads(dg, _c(x), hprev, _c(w_ih), dhs, ms, proj, need_x, dx, dw_ih, dw_hh, db,
                      dw_hr)
    if not need_x:
        dx = np.zeros(dx_out.shape, npd)
    return tuple(Tensor._make(a, None, dt) for a in (dx, dh, dc, dw_ih, dw_hh, db, dw_hr))
