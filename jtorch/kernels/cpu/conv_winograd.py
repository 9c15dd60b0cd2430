"""Winograd F(2x2, 3x3) convolution kernels: 3x3, stride 1, dilation 1, any padding and groups.

Each 2x2 block of outputs (a *tile*) is computed from the 4x4 input patch under it with 16
products instead of 36 (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks"):

    Y = A^T [ (G g G^T) . (B^T d B) ] A          (. : elementwise, 16 entries per tile)

so a convolution becomes 16 independent GEMMs, one per entry e of the 4x4 transformed tile:
``Yh[e] (O, tiles) = Wh[e] (O, C) @ Xh[e] (C, tiles)``, 2.25x fewer multiply-adds than
im2col's one GEMM. The same transforms give the gradients, by the transposition principle:

    weight gradient   gW = G^T [ (B^T d B) . (A gY A^T) ] G    (GEMMs over the tiles)
    input gradient    a forward Winograd convolution of gY with the flipped, transposed
                      weight (``conv.py`` routes it here)

The transforms only add and halve (coefficients 0, +-1, +-1/2), so float32 results stay
within a few ulps of im2col's. Data layout: one image at a time, channels first as the
tensors are (no transposes): the image is copied into a zero-padded (C, 2TH+2, 2TW+2) buffer,
the transformed tiles of a block of tile rows are (16, C, tiles) and (16, O, tiles), and the
inverse transform writes the output planes directly. The blocks (``rows`` tile rows) keep the
transformed tiles in L2. Each transform runs in two passes (rows, then columns) over
contiguous vectors with at most 4 loads and 4 stores per element: one pass with 16 of each
defeats LLVM's vectoriser (aliasing checks), 6-9x slower; and the column pass of the inverse
runs over all the block's tiles at once (per-row slices cost more than the adds).

Images are split over Numba's threads with BLAS serial in each (``conv.py``); the weight
gradient sums each part of the images into its own accumulator, added at the end in order.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..jit import njit
from .conv_blas import gemm

_njit = njit(cache=True, nogil=True)


# -- layout copies ----------------------------------------------------------------------------

@_njit
def _pad_image(x, i, xp, ph, pw):
    """xp[c, r, q] = x[i, c, r - ph, q - pw], zero outside x (x is (N, C, H, W))."""
    h, w = x.shape[2], x.shape[3]
    hp, wp = xp.shape[1], xp.shape[2]
    r_lo, r_hi = min(max(ph, 0), hp), max(min(h + ph, hp), 0)
    q_lo, q_hi = min(max(pw, 0), wp), max(min(w + pw, wp), 0)
    for c in range(xp.shape[0]):
        plane = xp[c]
        src = x[i, c]
        for r in range(hp):
            row = plane[r]
            if r < r_lo or r >= r_hi or q_hi <= q_lo:
                row[:] = 0
                continue
            row[:q_lo] = 0
            d = row[q_lo:q_hi]  # (slices: q - pw indexed a row with negative-index fix-ups,
            s = src[r - ph, q_lo - pw:q_hi - pw]  # which kept the copy scalar)
            for q in range(q_hi - q_lo):
                d[q] = s[q]
            row[q_hi:] = 0


# -- transforms -------------------------------------------------------------------------------

@_njit
def _in_tiles(xp, xh, ty0, n_rows, tw, tmp):
    """xh[e, c, t] = (B^T d B)[e] for tile rows ty0 .. ty0+n_rows (t counted from ty0's first
    tile), d the 4x4 patch of channel c of the padded image ``xp`` at (2ty, 2tx); ``tmp``
    (4, 2TW+2) holds a tile row's row pass."""
    n_col = 2 * tw + 2
    t0, t1, t2, t3 = tmp[0], tmp[1], tmp[2], tmp[3]
    for c in range(xp.shape[0]):
        plane = xp[c]
        for ty in range(n_rows):
            r0 = 2 * (ty0 + ty)
            d0, d1, d2, d3 = plane[r0], plane[r0 + 1], plane[r0 + 2], plane[r0 + 3]
            for q in range(n_col):  # rows: B^T d
                a1, a2 = d1[q], d2[q]
                t0[q] = d0[q] - a2
                t1[q] = a1 + a2
                t2[q] = a2 - a1
                t3[q] = a1 - d3[q]
            base = ty * tw
            for a in range(4):  # columns: (B^T d) B
                s = tmp[a]
                o0 = xh[4 * a, c, base:base + tw]
                o1 = xh[4 * a + 1, c, base:base + tw]
                o2 = xh[4 * a + 2, c, base:base + tw]
                o3 = xh[4 * a + 3, c, base:base + tw]
                for tx in range(tw):
                    b1, b2 = s[2 * tx + 1], s[2 * tx + 2]
                    o0[tx] = s[2 * tx] - b2
                    o1[tx] = b1 + b2
                    o2[tx] = b2 - b1
                    o3[tx] = b1 - s[2 * tx + 3]


@_njit
def _grad_tiles(gp, gh, ty0, n_rows, tw, tmp):
    """gh[e, o, t] = (A g A^T)[e] for the 2x2 output-gradient tiles of ``gp`` (O, 2TH, 2TW),
    zero past the outputs; ``tmp`` (4, 2TW)."""
    v0, v1, v2, v3 = tmp[0], tmp[1], tmp[2], tmp[3]
    for o in range(gp.shape[0]):
        plane = gp[o]
        for ty in range(n_rows):
            r0 = 2 * (ty0 + ty)
            g0, g1 = plane[r0], plane[r0 + 1]
            for q in range(2 * tw):  # rows: A g
                a0, a1 = g0[q], g1[q]
                v0[q] = a0
                v1[q] = a0 + a1
                v2[q] = a0 - a1
                v3[q] = -a1
            base = ty * tw
            for a in range(4):  # columns: (A g) A^T
                s = tmp[a]
                o0 = gh[4 * a, o, base:base + tw]
                o1 = gh[4 * a + 1, o, base:base + tw]
                o2 = gh[4 * a + 2, o, base:base + tw]
                o3 = gh[4 * a + 3, o, base:base + tw]
                for tx in range(tw):
                    h0, h1 = s[2 * tx], s[2 * tx + 1]
                    o0[tx] = h0
                    o1[tx] = h0 + h1
                    o2[tx] = h0 - h1
                    o3[tx] = -h1


@_njit
def _out_tiles(yh, y, i, bias, with_bias, ty0, n_rows, tw, tmp):
    """y[i, o, 2ty:2ty+2, 2tx:2tx+2] = A^T M A (+ bias) for the tiles M = yh[:, o, t] of tile
    rows ty0 .. ty0+n_rows, clipped to y's (N, O, OH, OW); ``tmp`` (4, 2, tiles): the column
    pass over all the block's tiles at once."""
    oh, ow = y.shape[2], y.shape[3]
    full = ow // 2  # tiles whose two columns are both outputs
    m = n_rows * tw
    for o in range(y.shape[1]):
        bo = bias[o] if with_bias else y.dtype.type(0)
        for a in range(4):  # columns: M A
            m0, m1, m2, m3 = yh[4 * a, o], yh[4 * a + 1, o], yh[4 * a + 2, o], yh[4 * a + 3, o]
            u0, u1 = tmp[a, 0], tmp[a, 1]
            for t in range(m):
                b1, b2 = m1[t], m2[t]
                u0[t] = m0[t] + b1 + b2
                u1[t] = b1 - b2 - m3[t]
        plane = y[i, o]
        for ty in range(n_rows):  # rows: A^T (M A)
            r0 = 2 * (ty0 + ty)
            _out_row(tmp, ty * tw, 0, bo, plane[r0], full)
            if r0 + 1 < oh:
                _out_row(tmp, ty * tw, 1, bo, plane[r0 + 1], full)


@_njit
def _out_row(tmp, base, r, bo, row, full):
    """Output row r (0 or 1) of a tile row: row[2tx + b] = u0 + u1 + u2 (r = 0) or
    u1 - u2 - u3 (r = 1) for u_a = tmp[a, b, base + tx], plus bo; the last tile's second
    column only where the row has it."""
    n = full + (1 if row.shape[0] > 2 * full else 0)
    for tx in range(n):
        t = base + tx
        if r == 0:
            v0 = tmp[0, 0, t] + tmp[1, 0, t] + tmp[2, 0, t] + bo
            v1 = tmp[0, 1, t] + tmp[1, 1, t] + tmp[2, 1, t] + bo
        else:
            v0 = tmp[1, 0, t] - tmp[2, 0, t] - tmp[3, 0, t] + bo
            v1 = tmp[1, 1, t] - tmp[2, 1, t] - tmp[3, 1, t] + bo
        row[2 * tx] = v0
        if tx < full:
            row[2 * tx + 1] = v1


@_njit
def weight_tiles(w, wh):
    """wh[e, g, o, c] = (G w[g*O/G + o, c] G^T)[e] for a 3x3 weight (O, C/G, 3, 3)."""
    n_g, og, cg = wh.shape[1], wh.shape[2], wh.shape[3]
    half = w.dtype.type(0.5)
    t = np.empty((4, 3), w.dtype)
    for g in range(n_g):
        for o in range(og):
            for c in range(cg):
                k = w[g * og + o, c]
                for j in range(3):  # G k (columns of k)
                    t[0, j] = k[0, j]
                    t[1, j] = half * (k[0, j] + k[1, j] + k[2, j])
                    t[2, j] = half * (k[0, j] - k[1, j] + k[2, j])
                    t[3, j] = k[2, j]
                for a in range(4):  # (G k) G^T
                    wh[4 * a, g, o, c] = t[a, 0]
                    wh[4 * a + 1, g, o, c] = half * (t[a, 0] + t[a, 1] + t[a, 2])
                    wh[4 * a + 2, g, o, c] = half * (t[a, 0] - t[a, 1] + t[a, 2])
                    wh[4 * a + 3, g, o, c] = t[a, 2]


@_njit
def weight_untiles(acc, gw):
    """gw[g*O/G + o, c] = G^T M G for M = acc[:, g, o, c] (the adjoint of ``weight_tiles``);
    ``acc`` (P, 16, G, O/G, C/G) holds P partial sums, added here in order."""
    n_g, og, cg = acc.shape[2], acc.shape[3], acc.shape[4]
    half = gw.dtype.type(0.5)
    m = np.empty(16, gw.dtype)
    t = np.empty((3, 4), gw.dtype)
    for g in range(n_g):
        for o in range(og):
            for c in range(cg):
                for e in range(16):
                    s = acc[0, e, g, o, c]
                    for p in range(1, acc.shape[0]):
                        s += acc[p, e, g, o, c]
                    m[e] = s
                for b in range(4):  # G^T M
                    m1, m2 = m[4 + b], m[8 + b]
                    t[0, b] = m[b] + half * (m1 + m2)
                    t[1, b] = half * (m1 - m2)
                    t[2, b] = half * (m1 + m2) + m[12 + b]
                k = gw[g * og + o, c]
                for a in range(3):  # (G^T M) G
                    k[a, 0] = t[a, 0] + half * (t[a, 1] + t[a, 2])
                    k[a, 1] = half * (t[a, 1] - t[a, 2])
                    k[a, 2] = half * (t[a, 1] + t[a, 2]) + t[a, 3]


# -- one image --------------------------------------------------------------------------------

@_njit
def _forward_image(x, wh, bias, with_bias, y, i, ph, pw, rows, xp, xh, yh, ti, to):
    """y[i] = conv3x3(x[i]) (+ bias), ``rows`` tile rows at a time."""
    n_g, og, cg = wh.shape[1], wh.shape[2], wh.shape[3]
    n_ch, n_out = n_g * cg, n_g * og
    th, tw = (y.shape[2] + 1) // 2, (y.shape[3] + 1) // 2
    cap = xh.shape[2]
    _pad_image(x, i, xp, ph, pw)
    for ty0 in range(0, th, rows):
        nr = min(rows, th - ty0)
        _in_tiles(xp, xh, ty0, nr, tw, ti)
        m = nr * tw
        for e in range(16):
            for g in range(n_g):
                gemm(False, False, og, m, cg, wh, ((e * n_g + g) * og) * cg, cg,
                     xh, (e * n_ch + g * cg) * cap, cap, 0.0, yh, (e * n_out + g * og) * cap, cap)
        _out_tiles(yh, y, i, bias, with_bias, ty0, nr, tw, to)


@_njit
def _weight_image(x, g4, acc, i, ph, pw, rows, xp, gp, xh, gh, ti, tg):
    """acc (16, G, O/G, C/G) += the transformed weight gradient of image i."""
    n_g, og, cg = acc.shape[1], acc.shape[2], acc.shape[3]
    n_ch, n_out = n_g * cg, n_g * og
    th, tw = gp.shape[1] // 2, gp.shape[2] // 2
    cap = xh.shape[2]
    _pad_image(x, i, xp, ph, pw)
    _pad_image(g4, i, gp, 0, 0)
    for ty0 in range(0, th, rows):
        nr = min(rows, th - ty0)
        _in_tiles(xp, xh, ty0, nr, tw, ti)
        _grad_tiles(gp, gh, ty0, nr, tw, tg)
        m = nr * tw
        for e in range(16):
            for g in range(n_g):
                gemm(False, True, og, cg, m, gh, (e * n_out + g * og) * cap, cap,
                     xh, (e * n_ch + g * cg) * cap, cap, 1.0, acc, ((e * n_g + g) * og) * cg, cg)


@_njit
def _fwd_buffers(wh, y, rows):
    th, tw = (y.shape[2] + 1) // 2, (y.shape[3] + 1) // 2
    n_ch, n_out = wh.shape[1] * wh.shape[3], wh.shape[1] * wh.shape[2]
    dt = y.dtype
    return (np.empty((n_ch, 2 * th + 2, 2 * tw + 2), dt), np.empty((16, n_ch, rows * tw), dt),
            np.empty((16, n_out, rows * tw), dt), np.empty((4, 2 * tw + 2), dt),
            np.empty((4, 2, rows * tw), dt))


@_njit
def forward(x, wh, bias, with_bias, y, ph, pw, rows):
    """y (N, O, OH, OW) = conv3x3(x (N, C, H, W)) with leading pads ph, pw (+ bias); ``wh``
    from ``weight_tiles``."""
    xp, xh, yh, ti, to = _fwd_buffers(wh, y, rows)
    for i in range(x.shape[0]):
        _forward_image(x, wh, bias, with_bias, y, i, ph, pw, rows, xp, xh, yh, ti, to)


@njit(cache=True, nogil=True, parallel=True)
def forward_par(x, wh, bias, with_bias, y, ph, pw, rows, nt):
    """``forward`` with the images split evenly over ``nt`` threads (BLAS serial in each)."""
    n_img = x.shape[0]
    per = (n_img + nt - 1) // nt
    for t in prange(nt):
        xp, xh, yh, ti, to = _fwd_buffers(wh, y, rows)
        for i in range(t * per, min(n_img, (t + 1) * per)):
            _forward_image(x, wh, bias, with_bias, y, i, ph, pw, rows, xp, xh, yh, ti, to)


@_njit
def _wgt_buffers(x, g4, rows):
    th, tw = (g4.shape[2] + 1) // 2, (g4.shape[3] + 1) // 2
    n_ch, n_out = x.shape[1], g4.shape[1]
    dt = x.dtype
    return (np.empty((n_ch, 2 * th + 2, 2 * tw + 2), dt), np.empty((n_out, 2 * th, 2 * tw), dt),
            np.empty((16, n_ch, rows * tw), dt), np.empty((16, n_out, rows * tw), dt),
            np.empty((4, 2 * tw + 2), dt), np.empty((4, 2 * tw), dt))


@_njit
def weight(x, g4, acc, ph, pw, rows):
    """acc[0] (16, G, O/G, C/G) = the transformed weight gradient summed over the images;
    ``weight_untiles`` turns it into gW."""
    xp, gp, xh, gh, ti, tg = _wgt_buffers(x, g4, rows)
    a = acc[0]
    a[:] = 0
    for i in range(x.shape[0]):
        _weight_image(x, g4, a, i, ph, pw, rows, xp, gp, xh, gh, ti, tg)


@njit(cache=True, nogil=True, parallel=True)
def weight_par(x, g4, acc, ph, pw, rows, nt):
    """``weight`` over ``nt`` parts of the images, each summed into its own acc[p]."""
    n_img = x.shape[0]
    per = (n_img + nt - 1) // nt
    for t in prange(nt):
        xp, gp, xh, gh, ti, tg = _wgt_buffers(x, g4, rows)
        a = acc[t]
        a[:] = 0
        for i in range(t * per, min(n_img, (t + 1) * per)):
            _weight_image(x, g4, a, i, ph, pw, rows, xp, gp, xh, gh, ti, tg)
