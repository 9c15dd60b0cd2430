"""Pooling kernels over planes: every array is (P, D, H, W) with P = N*C planes.

One window description serves every pooling op: per spatial dim, tables ``lo[o]``/``hi[o]``
(the input range of output ``o``, already clipped to the input) and a ``step`` (the dilation),
so window ``o`` reads ``range(lo[o], hi[o], step)``. Regular pooling (stride, padding,
dilation, ceil_mode) and adaptive pooling only differ in how the tables are filled
(``ops/pooling.py``). Average pooling also reads per-dim divisor factors ``f[o]`` (the divisor
is ``fd[od] * fh[oh] * fw[ow]``, or ``override`` when it is non-zero).

Planes are independent, so the parallel variants run ``prange`` over planes; the backward
kernels zero a plane and accumulate into it while it is in cache. Max pooling keeps the first
maximum (strict ``>``) and lets NaN win, as torch does; indices are flat within a plane,
``(d * H + h) * W + w``.
"""

from __future__ import annotations

import numpy as np
from numba import prange, types
from numba.extending import overload

from ... import _threads
from ..jit import njit


def _nan_max(a, b):
    return a if (a > b) | (a != a) else b


_nan_max_j = njit(cache=True, nogil=True, inline="always")(_nan_max)


def _max_plane(x, out, idx, p, lowest, lod, hid, sd, loh, hih, sh, low, hiw, sw):
    """Two passes per window, selects only (see ``_max22_plane``): the NaN-propagating
    maximum, then a backward pass for its index (the first equal element, or the last NaN)."""
    H, W = x.shape[2], x.shape[3]
    for od in range(out.shape[1]):
        d0 = lod[od]
        nd = (hid[od] - d0 + sd - 1) // sd
        for oh in range(out.shape[2]):
            h0 = loh[oh]
            nh = (hih[oh] - h0 + sh - 1) // sh
            for ow in range(out.shape[3]):
                w0 = low[ow]
                nw = (hiw[ow] - w0 + sw - 1) // sw
                m = lowest  # a window with no input element keeps it (torch: -inf)
                best = (d0 * H + h0) * W + w0
                if nd > 0 and nh > 0 and nw > 0:
                    m = x[p, d0, h0, w0]
                    for i in range(nd):
                        d = d0 + i * sd
                        for j in range(nh):
                            h = h0 + j * sh
                            for k in range(nw):
                                m = _nan_max_j(m, x[p, d, h, w0 + k * sw])
                    last_nan = -1
                    first = m  # the first maximum's own value (of 0.0 and -0.0, its sign)
                    for i in range(nd - 1, -1, -1):
                        d = d0 + i * sd
                        for j in range(nh - 1, -1, -1):
                            h = h0 + j * sh
                            for k in range(nw - 1, -1, -1):
                                w = w0 + k * sw
                                v = x[p, d, h, w]
                                at = (d * H + h) * W + w
                                best = at if v == m else best
                                first = v if v == m else first
                                last_nan = at if (v != v) & (last_nan < 0) else last_nan
                    best = last_nan if m != m else best
                    m = m if m != m else first
                out[p, od, oh, ow] = m
                idx[p, od, oh, ow] = best


_max_row = njit(cache=True, nogil=True, inline="always")(_max_plane)


@njit(cache=True, nogil=True)
def max_fwd(x, out, idx, lowest, lod, hid, sd, loh, hih, sh, low, hiw, sw):
    for p in range(x.shape[0]):
        _max_row(x, out, idx, p, lowest, lod, hid, sd, loh, hih, sh, low, hiw, sw)


@njit(cache=True, nogil=True, parallel=True)
def max_fwd_par(x, out, idx, lowest, lod, hid, sd, loh, hih, sh, low, hiw, sw):
    for p in prange(x.shape[0]):
        _max_row(x, out, idx, p, lowest, lod, hid, sd, loh, hih, sh, low, hiw, sw)


def _max_sep_plane(x, out, idx, p, loh, lasth, sh, low, lastw, sw, hm, hc):
    """A 2-D max pool over plane p in two passes (windows over rows, then over columns of
    those row maxima), for a plane of one depth whose windows are all non-empty (``Windows.
    sep``). Each pass keeps the first maximum and lets a NaN win, scanning in torch's order,
    so the pair gives torch's value and index: of equal maxima in two rows the upper one's,
    of NaNs the last row's last. Every window's tap k past its end reads its last tap again
    (``lastw``/``lasth``: equal to what it holds, so nothing changes; a NaN there is already
    the last one): the tap loops then run over a row's windows at once, and vectorise (their
    selects are blends; selecting by bits, as ``_rows22``, cost 1.4x here)."""
    W = x.shape[3]
    OH, OW = out.shape[2], out.shape[3]
    kw = 1
    for ow in range(OW):
        kw = max(kw, (lastw[ow] - low[ow]) // sw + 1)
    kh = 1
    for oh in range(OH):
        kh = max(kh, (lasth[oh] - loh[oh]) // sh + 1)
    for h in range(x.shape[2]):
        for ow in range(OW):
            w = low[ow]
            hm[h, ow] = x[p, 0, h, w]
            hc[h, ow] = w
        for k in range(1, kw):
            for ow in range(OW):
                w = min(low[ow] + k * sw, lastw[ow])
                v = x[p, 0, h, w]
                m = hm[h, ow]
                take = (v > m) | (v != v)
                hm[h, ow] = v if take else m
                hc[h, ow] = w if take else hc[h, ow]
    for oh in range(OH):
        h = loh[oh]
        for ow in range(OW):
            out[p, 0, oh, ow] = hm[h, ow]
            idx[p, 0, oh, ow] = h * W + hc[h, ow]
        for k in range(1, kh):
            h = min(loh[oh] + k * sh, lasth[oh])
            for ow in range(OW):
                v = hm[h, ow]
                m = out[p, 0, oh, ow]
                take = (v > m) | (v != v)
                out[p, 0, oh, ow] = v if take else m
                idx[p, 0, oh, ow] = h * W + hc[h, ow] if take else idx[p, 0, oh, ow]


_max_sep_row = njit(cache=True, nogil=True, inline="always")(_max_sep_plane)


@njit(cache=True, nogil=True, noalias=True)  # (arguments never overlap: out is new)
def max_sep(x, out, idx, loh, lasth, sh, low, lastw, sw):
    hm = np.empty((x.shape[2], out.shape[3]), x.dtype)  # a plane's row maxima, their columns
    hc = np.empty((x.shape[2], out.shape[3]), np.int64)
    for p in range(x.shape[0]):
        _max_sep_row(x, out, idx, p, loh, lasth, sh, low, lastw, sw, hm, hc)


@njit(cache=True, nogil=True, parallel=True)
def max_sep_par(x, out, idx, loh, lasth, sh, low, lastw, sw):
    for p in prange(x.shape[0]):
        hm = np.empty((x.shape[2], out.shape[3]), x.dtype)
        hc = np.empty((x.shape[2], out.shape[3]), np.int64)
        _max_sep_row(x, out, idx, p, loh, lasth, sh, low, lastw, sw, hm, hc)


def _scatter_plane(g, idx, gi, p):
    """gi[p] = 0, then gi[p].flat[idx[p, j]] += g[p, j]: the max-pool gradient."""
    for i in range(gi.shape[1]):
        gi[p, i] = 0
    n = gi.shape[1]
    for j in range(g.shape[1]):
        k = idx[p, j]
        if k >= 0 and k < n:  # an empty window's index may lie past the plane
            gi[p, k] += g[p, j]


_scatter_row = njit(cache=True, nogil=True, inline="always")(_scatter_plane)


@njit(cache=True, nogil=True)
def scatter_add(g, idx, gi):
    for p in range(g.shape[0]):
        _scatter_row(g, idx, gi, p)


@njit(cache=True, nogil=True, parallel=True)
def scatter_add_par(g, idx, gi):
    for p in prange(g.shape[0]):
        _scatter_row(g, idx, gi, p)


def _div(s, d):
    return s / d


@overload(_div)
def _div_typed(s, d):
    """Floats divide; integers truncate toward zero like C (torch's integer avg_pool)."""
    if isinstance(s, types.Integer):
        def impl(s, d):
            q = abs(s) // abs(d)
            return q if (s >= 0) == (d >= 0) else -q
        return impl
    return lambda s, d: s / d


def _avg_plane(x, out, p, lod, hid, fd, loh, hih, fh, low, hiw, fw, override):
    for od in range(out.shape[1]):
        for oh in range(out.shape[2]):
            for ow in range(out.shape[3]):
                s = x[p, 0, 0, 0] * 0
                for d in range(lod[od], hid[od]):
                    for h in range(loh[oh], hih[oh]):
                        for w in range(low[ow], hiw[ow]):
                            s += x[p, d, h, w]
                div = override if override != 0 else fd[od] * fh[oh] * fw[ow]
                out[p, od, oh, ow] = _div(s, div)


_avg_row = njit(cache=True, nogil=True, inline="always")(_avg_plane)


@njit(cache=True, nogil=True)
def avg_fwd(x, out, lod, hid, fd, loh, hih, fh, low, hiw, fw, override):
    for p in range(x.shape[0]):
        _avg_row(x, out, p, lod, hid, fd, loh, hih, fh, low, hiw, fw, override)


@njit(cache=True, nogil=True, parallel=True)
def avg_fwd_par(x, out, lod, hid, fd, loh, hih, fh, low, hiw, fw, override):
    for p in prange(x.shape[0]):
        _avg_row(x, out, p, lod, hid, fd, loh, hih, fh, low, hiw, fw, override)


def _spread_plane(g, gi, p, lod, hid, fd, loh, hih, fh, low, hiw, fw, override):
    """The adjoint of ``_avg_plane``: each output's gradient / divisor over its window."""
    for d in range(gi.shape[1]):
        for h in range(gi.shape[2]):
            for w in range(gi.shape[3]):
                gi[p, d, h, w] = 0
    for od in range(g.shape[1]):
        for oh in range(g.shape[2]):
            for ow in range(g.shape[3]):
                div = override if override != 0 else fd[od] * fh[oh] * fw[ow]
                v = g[p, od, oh, ow] / div
                for d in range(lod[od], hid[od]):
                    for h in range(loh[oh], hih[oh]):
                        for w in range(low[ow], hiw[ow]):
                            gi[p, d, h, w] += v


_spread_row = njit(cache=True, nogil=True, inline="always")(_spread_plane)


@njit(cache=True, nogil=True)
def avg_bwd(g, gi, lod, hid, fd, loh, hih, fh, low, hiw, fw, override):
    for p in range(g.shape[0]):
        _spread_row(g, gi, p, lod, hid, fd, loh, hih, fh, low, hiw, fw, override)


@njit(cache=True, nogil=True, parallel=True)
def avg_bwd_par(g, gi, lod, hid, fd, loh, hih, fh, low, hiw, fw, override):
    for p in prange(g.shape[0]):
        _spread_row(g, gi, p, lod, hid, fd, loh, hih, fh, low, hiw, fw, override)


@njit(cache=True, nogil=True)
def unpool(x, idx, out):
    """out[p] = 0, then out[p].flat[idx[p, j]] = x[p, j]; returns the last index out of range
    (or -1), which the caller reports as torch's serial loop does."""
    n = out.shape[1]
    bad = -1
    for p in range(x.shape[0]):
        for i in range(n):
            out[p, i] = 0
        for j in range(x.shape[1]):
            k = idx[p, j]
            if k < 0 or k >= n:
                bad = k
            else:
                out[p, k] = x[p, j]
    return bad


def _parallel(n: int) -> bool:
    return _threads.use_parallel(n)


def max_pool(x: np.ndarray, out: np.ndarray, idx: np.ndarray, win) -> None:
    """Window maxima and their flat plane indices; ``win`` holds the tables (see module doc)."""
    par = _parallel(x.size)
    if win.fast22:
        if not par and x.shape[2] == 2 * out.shape[2] and x.shape[3] == 2 * out.shape[3] and \
                x.dtype.kind == "f":
            hv = np.empty(x.size // 2, x.dtype)
            ho = np.empty(x.size // 2, np.int8)
            pairs22(x.reshape(-1), hv, ho)
            bits = _BITS[x.dtype.itemsize]
            args = (hv, hv.view(bits), ho, out.reshape(-1).view(bits), idx.reshape(-1),
                    out.shape[2])
            rows = _ROWS22.get(out.shape[3])
            return rows(*args) if rows is not None else rows22_n(*args, out.shape[3])
        return (max22_par if par else max22)(x, out, idx)
    if win.sep is not None and x.shape[1] == 1 and out.shape[3] >= _SEP_MIN_WIDTH:
        return (max_sep_par if par else max_sep)(x, out, idx, *win.sep)
    (max_fwd_par if par else max_fwd)(x, out, idx, *win.max_args(x.dtype))


def max_pool_backward(g: np.ndarray, idx: np.ndarray, gi: np.ndarray) -> None:
    """gi (P, n) = scatter-add of g (P, m) through idx (P, m)."""
    fn = scatter_add_par if _parallel(gi.size) else scatter_add
    fn(g, idx, gi)


def avg_pool(x: np.ndarray, out: np.ndarray, win) -> None:
    args = win.avg_args(x.dtype)
    par = _parallel(x.size)
    if win.fast22:
        div = args[-1] if args[-1] != 0 else args[2].dtype.type(4)
        return (avg22_par if par else avg22)(x, out, div)
    (avg_fwd_par if par else avg_fwd)(x, out, *args)


def avg_pool_backward(g: np.ndarray, gi: np.ndarray, win) -> None:
    args = win.avg_args(g.dtype)
    par = _parallel(gi.size)
    if win.fast22:
        div = args[-1] if args[-1] != 0 else args[2].dtype.type(4)
        return (spread22_par if par else spread22)(g, gi, div)
    (avg_bwd_par if par else avg_bwd)(g, gi, *args)


# -- 2x2 windows at stride 2 (the common CNN case): constant strides vectorise, ~5x the tables

# Even planes below the parallel grain in two passes: the horizontal pairs of the whole array
# (one long loop, vectorised), then each output row from its two rows of pairs, with the row's
# width a constant for 4x4, 8x8 and 16x16 planes (a small CNN's; a loop of 2-8 at a runtime
# width stays scalar: ``rows22_n`` takes the other widths). Serial,
# float: 4x4 planes 47-53 -> 13-20 us, 8x8 62-70 -> 23-34 (N=64, 32 and 16 channels).
# The pair rule picks the window's first maximum (NaN first, the last NaN), as the plane
# kernel: of two pairs, the lower row's only where its value is NaN or larger.

@njit(cache=True, nogil=True, error_model="numpy")
def pairs22(xf, hv, ho):
    """hv[t], ho[t] = the larger of xf[2t] and xf[2t + 1] (see above) and which one."""
    for t in range(hv.size):
        a = xf[2 * t]
        b = xf[2 * t + 1]
        c = (b != b) | (b > a)
        hv[t] = b if c else a
        ho[t] = c


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _rows22(hv, hb, ho, ob, jf, OH, W, OW):
    # Branch-free: the index by arithmetic, the value as a select of its bits (``hb``/``ob``:
    # integer views of hv/of). A select of two floats became a branch in x86 code, which real
    # data mispredicts on about half the windows: (64, 16, 8, 8) planes 97-113 us in a
    # training step against 20 on one input repeated; the integer select is a cmov (38 us on
    # changing inputs, both passes). Rows go plane by plane (no division per row), indices
    # unsigned (no wraparound fix-ups).
    w2 = np.uint64(OW)
    for p in range(ob.size // (OH * OW)):
        for oh in range(OH):
            r = p * OH + oh
            at = 2 * oh * W
            t = np.uint64(2 * r * OW)
            o = np.uint64(r * OW)
            for j in range(OW):
                uj = np.uint64(j)
                u = hv[t + uj]
                d = hv[t + w2 + uj]
                down = (d != d) | (d > u)
                iu = np.int64(ho[t + uj])
                idn = np.int64(ho[t + w2 + uj]) + W
                ub = np.int64(hb[t + uj])
                ob[o + uj] = ub ^ ((ub ^ np.int64(hb[t + w2 + uj])) & -np.int64(down))
                jf[o + uj] = at + 2 * j + iu + np.int64(down) * (idn - iu)


@njit(cache=True, nogil=True, error_model="numpy")
def rows22_2(hv, hb, ho, ob, jf, OH):
    _rows22(hv, hb, ho, ob, jf, OH, 4, 2)


@njit(cache=True, nogil=True, error_model="numpy")
def rows22_4(hv, hb, ho, ob, jf, OH):
    _rows22(hv, hb, ho, ob, jf, OH, 8, 4)


@njit(cache=True, nogil=True, error_model="numpy")
def rows22_8(hv, hb, ho, ob, jf, OH):
    _rows22(hv, hb, ho, ob, jf, OH, 16, 8)


@njit(cache=True, nogil=True, error_model="numpy")
def rows22_n(hv, hb, ho, ob, jf, OH, OW):
    """Any other even width: its row loop stays scalar, still branch-free (a 12x12 plane
    3.8x faster than the plane kernel ``max22``, whose selects became branches)."""
    _rows22(hv, hb, ho, ob, jf, OH, 2 * OW, OW)


_ROWS22 = {2: rows22_2, 4: rows22_4, 8: rows22_8}  # output row width -> its kernel
# Output rows at least this wide take the two-pass max pool: its row loops then run whole
# vectors; on narrower ones its per-plane setup costs more than the plane kernel (8x8 planes
# at 3x3/2, 3 wide: 0.4 -> 0.5-0.7 ms over 1024 planes; 56x56 ones, 28 wide: 121 -> 47 ms
# serial, 59 -> 16-23 on two threads)
_SEP_MIN_WIDTH = 8
_BITS = {4: np.int32, 8: np.int64}  # a float's bits, for ``_rows22``'s select


def _max22_plane(x, out, idx, p):
    """The maximum as a tree of NaN-propagating maxima, then its index by comparisons against
    it (the first equal element; the last NaN where it is NaN, as torch's ``val > max ||
    isnan(val)`` scan gives): only selects. A running ``m = v if c else m`` scan became
    mispredicted branches on random data, 8x slower on 32x32 planes."""
    W = x.shape[3]
    for oh in range(out.shape[2]):
        h = 2 * oh
        for ow in range(out.shape[3]):
            w = 2 * ow
            a0 = x[p, 0, h, w]
            a1 = x[p, 0, h, w + 1]
            a2 = x[p, 0, h + 1, w]
            a3 = x[p, 0, h + 1, w + 1]
            m = _nan_max_j(_nan_max_j(a0, a1), _nan_max_j(a2, a3))
            at = h * W + w
            first = at + W + 1
            first = at + W if a2 == m else first
            first = at + 1 if a1 == m else first
            first = at if a0 == m else first
            v = a3  # the first maximum's own value (of equal zeros, its sign: torch's)
            v = a2 if a2 == m else v
            v = a1 if a1 == m else v
            v = a0 if a0 == m else v
            last_nan = at
            last_nan = at + 1 if a1 != a1 else last_nan
            last_nan = at + W if a2 != a2 else last_nan
            last_nan = at + W + 1 if a3 != a3 else last_nan
            out[p, 0, oh, ow] = m if m != m else v
            idx[p, 0, oh, ow] = last_nan if m != m else first


def _avg22_plane(x, out, p, div):
    for oh in range(out.shape[2]):
        h = 2 * oh
        for ow in range(out.shape[3]):
            w = 2 * ow
            s = x[p, 0, h, w] + x[p, 0, h, w + 1] + x[p, 0, h + 1, w] + x[p, 0, h + 1, w + 1]
            out[p, 0, oh, ow] = _div(s, div)


def _spread22_plane(g, gi, p, div):
    for h in range(2 * g.shape[2], gi.shape[2]):  # rows and columns no window covers
        for w in range(gi.shape[3]):
            gi[p, 0, h, w] = 0
    for h in range(gi.shape[2]):
        for w in range(2 * g.shape[3], gi.shape[3]):
            gi[p, 0, h, w] = 0
    for oh in range(g.shape[2]):
        for ow in range(g.shape[3]):
            v = g[p, 0, oh, ow] / div
            gi[p, 0, 2 * oh, 2 * ow] = v
            gi[p, 0, 2 * oh, 2 * ow + 1] = v
            gi[p, 0, 2 * oh + 1, 2 * ow] = v
            gi[p, 0, 2 * oh + 1, 2 * ow + 1] = v


_max22_row = njit(cache=True, nogil=True, inline="always")(_max22_plane)
_avg22_row = njit(cache=True, nogil=True, inline="always")(_avg22_plane)
_spread22_row = njit(cache=True, nogil=True, inline="always")(_spread22_plane)


@njit(cache=True, nogil=True)
def max22(x, out, idx):
    for p in range(x.shape[0]):
        _max22_row(x, out, idx, p)


@njit(cache=True, nogil=True, parallel=True)
def max22_par(x, out, idx):
    for p in prange(x.shape[0]):
        _max22_row(x, out, idx, p)


@njit(cache=True, nogil=True)
def avg22(x, out, div):
    for p in range(x.shape[0]):
        _avg22_row(x, out, p, div)


@njit(cache=True, nogil=True, parallel=True)
def avg22_par(x, out, div):
    for p in prange(x.shape[0]):
        _avg22_row(x, out, p, div)


@njit(cache=True, nogil=True)
def spread22(g, gi, div):
    for p in range(g.shape[0]):
        _spread22_row(g, gi, p, div)


@njit(cache=True, nogil=True, parallel=True)
def spread22_par(g, gi, div):
    for p in prange(g.shape[0]):
        _spread22_row(g, gi, p, div)
