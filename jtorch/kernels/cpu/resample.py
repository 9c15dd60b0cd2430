"""Resampling kernels: interpolation, index-mapping padding and grid sampling.

Sources are viewed as ``(P, D, H, W)`` arrays (``P`` = batch * channels planes, unused spatial
dims of size 1). Every resize and every non-constant pad is one of two shapes, described by
per-dimension tables that the caller computes once (O(output size) work, ``ops/resample.py``):

* **gather**: ``out[p, z, y, x] = src[p, iz[z], iy[y], ix[x]]`` (nearest, nearest-exact,
  reflect / replicate / circular padding). The backward scatters-adds through the same tables.
* **taps**: ``out[p, z, y, x] = sum_a wz[z,a] * sum_b wy[y,b] * sum_c wx[x,c] *
  src[p, iz[z,a], iy[y,b], ix[x,c]]`` over ``cz[z] * cy[y] * cx[x]`` taps (linear, bilinear,
  trilinear, bicubic, area). The sums nest as torch's ``Interpolate<n>`` does: the innermost
  dim first, each partial sum times its weight. The backward adds ``g * wz * wy * wx`` into
  every tap.

Forward kernels run in parallel over output rows ``(p, z, y)``; backward kernels over planes
``p``, so each plane's input gradient is written by one thread (no atomics). Both have a serial
twin used below ``GRAIN_SIZE`` elements. ``grid_sample`` follows ATen's ``GridSampler.h``
formulas (unnormalize, clip / reflect, bilinear / trilinear corners, round-half-even nearest;
bicubic: 4 x 4 taps around the unnormalised point, A = -0.75, the padding applied to each
tap's index as ``get_value_bounded`` does). Coordinates are computed in float64.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import prange

from ... import _threads

_jit = numba.njit(cache=True, nogil=True, inline="always")


# -- gather: nearest and index-mapping pads ----------------------------------------------------

@_jit
def _gather_row(src, out, r, iz, iy, ix, run):
    """One output row; ``run`` = (o0, i0, n): ix[o0 + k] == i0 + k for k < n (a pad's interior,
    copied as a plain vectorisable loop)."""
    od, oh = out.shape[1], out.shape[2]
    p = r // (od * oh)
    rem = r - p * od * oh
    z = rem // oh
    y = rem - z * oh
    srow = src[p, iz[z], iy[y]]
    orow = out[p, z, y]
    o0, i0, n = run[0], run[1], run[2]
    for x in range(o0):
        orow[x] = srow[ix[x]]
    for k in range(n):  # (a slice assignment compiles Numba's shape-mismatch message)
        orow[o0 + k] = srow[i0 + k]
    for x in range(o0 + n, orow.shape[0]):
        orow[x] = srow[ix[x]]


@numba.njit(cache=True, nogil=True)
def gather_fwd(src, out, iz, iy, ix, run):
    for r in range(out.shape[0] * out.shape[1] * out.shape[2]):
        _gather_row(src, out, r, iz, iy, ix, run)


@numba.njit(cache=True, nogil=True, parallel=True)
def gather_fwd_par(src, out, iz, iy, ix, run):
    for r in prange(out.shape[0] * out.shape[1] * out.shape[2]):
        _gather_row(src, out, r, iz, iy, ix, run)


@_jit
def _scatter_plane(g, gx, p, iz, iy, ix):
    for z in range(g.shape[1]):
        sz = iz[z]
        for y in range(g.shape[2]):
            sy = iy[y]
            for x in range(g.shape[3]):
                gx[p, sz, sy, ix[x]] += g[p, z, y, x]


@numba.njit(cache=True, nogil=True)
def gather_bwd(g, gx, iz, iy, ix):
    """gx (zero-filled) += g scattered through the gather tables."""
    for p in range(g.shape[0]):
        _scatter_plane(g, gx, p, iz, iy, ix)


@numba.njit(cache=True, nogil=True, parallel=True)
def gather_bwd_par(g, gx, iz, iy, ix):
    for p in prange(g.shape[0]):
        _scatter_plane(g, gx, p, iz, iy, ix)


# -- taps: linear / bicubic / area --------------------------------------------------------------

@_jit
def _sum_x(src, p, sz, sy, x, ix, wx, cx):
    v = src[p, sz, sy, ix[x, 0]] * wx[x, 0]
    for c in range(1, cx[x]):
        v += src[p, sz, sy, ix[x, c]] * wx[x, c]
    return v


@_jit
def _sum_yx(src, p, sz, y, x, iy, wy, cy, ix, wx, cx):
    v = _sum_x(src, p, sz, iy[y, 0], x, ix, wx, cx) * wy[y, 0]
    for b in range(1, cy[y]):
        v += _sum_x(src, p, sz, iy[y, b], x, ix, wx, cx) * wy[y, b]
    return v


@_jit
def _taps_row(src, out, r, iz, wz, cz, iy, wy, cy, ix, wx, cx):
    od, oh = out.shape[1], out.shape[2]
    p = r // (od * oh)
    rem = r - p * od * oh
    z = rem // oh
    y = rem - z * oh
    for x in range(out.shape[3]):
        v = _sum_yx(src, p, iz[z, 0], y, x, iy, wy, cy, ix, wx, cx) * wz[z, 0]
        for a in range(1, cz[z]):
            v += _sum_yx(src, p, iz[z, a], y, x, iy, wy, cy, ix, wx, cx) * wz[z, a]
        out[p, z, y, x] = v


@_jit
def _bilinear_row(src, out, r, iy, wy, ix, wx):
    """The two-tap, one-depth case of ``_taps_row`` with the row's taps hoisted."""
    oh = out.shape[2]
    p = r // oh
    y = r - p * oh
    r0, r1 = src[p, 0, iy[y, 0]], src[p, 0, iy[y, 1]]
    h0, h1 = wy[y, 0], wy[y, 1]
    orow = out[p, 0, y]
    for x in range(orow.shape[0]):
        x0, x1 = ix[x, 0], ix[x, 1]
        w0, w1 = wx[x, 0], wx[x, 1]
        orow[x] = (r0[x0] * w0 + r0[x1] * w1) * h0 + (r1[x0] * w0 + r1[x1] * w1) * h1


@numba.njit(cache=True, nogil=True)
def taps_fwd(src, out, iz, wz, cz, iy, wy, cy, ix, wx, cx):
    for r in range(out.shape[0] * out.shape[1] * out.shape[2]):
        _taps_row(src, out, r, iz, wz, cz, iy, wy, cy, ix, wx, cx)


@numba.njit(cache=True, nogil=True, parallel=True)
def taps_fwd_par(src, out, iz, wz, cz, iy, wy, cy, ix, wx, cx):
    for r in prange(out.shape[0] * out.shape[1] * out.shape[2]):
        _taps_row(src, out, r, iz, wz, cz, iy, wy, cy, ix, wx, cx)


@numba.njit(cache=True, nogil=True)
def bilinear_fwd(src, out, iy, wy, ix, wx):
    for r in range(out.shape[0] * out.shape[2]):
        _bilinear_row(src, out, r, iy, wy, ix, wx)


@numba.njit(cache=True, nogil=True, parallel=True)
def bilinear_fwd_par(src, out, iy, wy, ix, wx):
    for r in prange(out.shape[0] * out.shape[2]):
        _bilinear_row(src, out, r, iy, wy, ix, wx)


@_jit
def _taps_plane_bwd(g, gx, p, iz, wz, cz, iy, wy, cy, ix, wx, cx):
    for z in range(g.shape[1]):
        for y in range(g.shape[2]):
            for x in range(g.shape[3]):
                gv = g[p, z, y, x]
                for a in range(cz[z]):
                    ga = gv * wz[z, a]
                    sz = iz[z, a]
                    for b in range(cy[y]):
                        gb = ga * wy[y, b]
                        sy = iy[y, b]
                        for c in range(cx[x]):
                            gx[p, sz, sy, ix[x, c]] += gb * wx[x, c]


@_jit
def _bilinear_plane_bwd(g, gx, p, iy, wy, ix, wx):
    for y in range(g.shape[2]):
        r0, r1 = gx[p, 0, iy[y, 0]], gx[p, 0, iy[y, 1]]
        h0, h1 = wy[y, 0], wy[y, 1]
        grow = g[p, 0, y]
        for x in range(grow.shape[0]):
            x0, x1 = ix[x, 0], ix[x, 1]
            w0, w1 = wx[x, 0], wx[x, 1]
            g0, g1 = grow[x] * h0, grow[x] * h1
            r0[x0] += g0 * w0
            r0[x1] += g0 * w1
            r1[x0] += g1 * w0
            r1[x1] += g1 * w1


@numba.njit(cache=True, nogil=True)
def taps_bwd(g, gx, iz, wz, cz, iy, wy, cy, ix, wx, cx):
    """gx (zero-filled) += g spread over every tap with its weight."""
    for p in range(g.shape[0]):
        _taps_plane_bwd(g, gx, p, iz, wz, cz, iy, wy, cy, ix, wx, cx)


@numba.njit(cache=True, nogil=True, parallel=True)
def taps_bwd_par(g, gx, iz, wz, cz, iy, wy, cy, ix, wx, cx):
    for p in prange(g.shape[0]):
        _taps_plane_bwd(g, gx, p, iz, wz, cz, iy, wy, cy, ix, wx, cx)


@numba.njit(cache=True, nogil=True)
def bilinear_bwd(g, gx, iy, wy, ix, wx):
    for p in range(g.shape[0]):
        _bilinear_plane_bwd(g, gx, p, iy, wy, ix, wx)


@numba.njit(cache=True, nogil=True, parallel=True)
def bilinear_bwd_par(g, gx, iy, wy, ix, wx):
    for p in prange(g.shape[0]):
        _bilinear_plane_bwd(g, gx, p, iy, wy, ix, wx)


def _parallel(n: int) -> bool:
    return _threads.use_parallel(n)


def _longest_run(ix: np.ndarray) -> np.ndarray:
    """(o0, i0, n) of the longest stretch where the index table steps by one."""
    if ix.shape[0] < 2:
        return np.array([0, int(ix[0]) if ix.shape[0] else 0, ix.shape[0]], np.int64)
    step = np.diff(ix.astype(np.int64)) == 1
    edges = np.flatnonzero(np.diff(np.concatenate(([0], step.astype(np.int8), [0]))))
    if not edges.size:
        return np.array([0, int(ix[0]), 1], np.int64)
    starts, ends = edges[0::2], edges[1::2]
    k = int(np.argmax(ends - starts))
    o0 = int(starts[k])
    return np.array([o0, int(ix[o0]), int(ends[k] - starts[k]) + 1], np.int64)


def gather_into(src, out, tables) -> None:
    """out (P, OD, OH, OW) = src (P, D, H, W) gathered through (iz, iy, ix)."""
    if out.size:
        run = _longest_run(tables[2])
        (gather_fwd_par if _parallel(out.size) else gather_fwd)(src, out, *tables, run)


def gather_backward_into(g, gx, tables) -> None:
    if g.size:
        (gather_bwd_par if _parallel(g.size) else gather_bwd)(g, gx, *tables)


def _is_bilinear(tables) -> bool:
    (iz, _, _), (iy, _, cy), (ix, _, cx) = tables
    return iz.shape[0] == 1 and iy.shape[1] == 2 and ix.shape[1] == 2 and bool(
        (cy == 2).all() and (cx == 2).all())


def taps_into(src, out, tables) -> None:
    """out = the tap sums of src; ``tables`` is ((iz, wz, cz), (iy, wy, cy), (ix, wx, cx))."""
    if not out.size:
        return
    par = _parallel(out.size)
    if _is_bilinear(tables) and src.shape[1] == 1:
        (_, (iy, wy, _), (ix, wx, _)) = tables
        (bilinear_fwd_par if par else bilinear_fwd)(src, out, iy, wy, ix, wx)
        return
    flat = [a for t in tables for a in t]
    (taps_fwd_par if par else taps_fwd)(src, out, *flat)


def taps_backward_into(g, gx, tables) -> None:
    if not g.size:
        return
    par = _parallel(g.size)
    if _is_bilinear(tables) and gx.shape[1] == 1:
        (_, (iy, wy, _), (ix, wx, _)) = tables
        (bilinear_bwd_par if par else bilinear_bwd)(g, gx, iy, wy, ix, wx)
        return
    flat = [a for t in tables for a in t]
    (taps_bwd_par if par else taps_bwd)(g, gx, *flat)


# -- grid_sample (4-D input, 2-D grid) ----------------------------------------------------------

@_jit
def _unnormalize(coord, size, align):
    if align:
        return (coord + 1) / 2 * (size - 1), (size - 1) / 2
    return ((coord + 1) * size - 1) / 2, size / 2


@_jit
def _clip(v, size):
    """(clipped coordinate, d clipped / d v) as ATen's clip_coordinates_set_grad."""
    if v <= 0:
        return v * 0, 0.0
    hi = size - 1
    if v >= hi:
        return v * 0 + hi, 0.0
    return v, 1.0


@_jit
def _reflect(v, twice_low, twice_high):
    if twice_low == twice_high:
        return v * 0, 0.0
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    v = v - lo
    mult = 1.0
    if v < 0:
        mult = -1.0
        v = -v
    extra = np.fmod(v, span)
    flips = math.floor(v / span)
    if flips % 2 == 0:
        return extra + lo, mult
    return span - extra + lo, -mult


@_jit
def _source_index(coord, size, padding, align):
    """Pixel coordinate of a normalised grid coordinate and its derivative (ATen's
    grid_sampler_compute_source_index_set_grad)."""
    v, d = _unnormalize(coord, size, align)
    if padding == 1:
        v, d2 = _clip(v, size)
        d = d * d2
    elif padding == 2:
        if align:
            v, d2 = _reflect(v, 0, 2 * (size - 1))
        else:
            v, d2 = _reflect(v, -1, 2 * size - 1)
        v, d3 = _clip(v, size)
        d = d * d2 * d3
    if not (abs(v) <= 2147483646.0):  # nan, inf, out of int range (safe_downgrade_to_int_range)
        v = v * 0 - 100
    return v, d


@_jit
def _inb(y, x, h, w):
    return 0 <= y < h and 0 <= x < w


# -- bicubic taps (ATen's GridSamplerKernel.cpp, ApplyGridSample<..., Bicubic>) -------------------

@_jit
def _cubic_coeffs(t):
    """get_cubic_coefficients: the weights of taps -1, 0, 1, 2 at fraction t (A = -0.75)."""
    a = -0.75
    x = t + 1
    c0 = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    c1 = ((a + 2) * t - (a + 3)) * t * t + 1
    x = 1 - t
    c2 = ((a + 2) * x - (a + 3)) * x * x + 1
    x = 2 - t
    c3 = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return c0, c1, c2, c3


@_jit
def _cubic_coeffs_grad(t):
    """get_cubic_coefficients_grad: d coeff / d (tap - t) for the four taps."""
    a = -0.75
    x = -1 - t
    c0 = (-3 * a * x - 10 * a) * x - 8 * a
    x = -t
    c1 = (-3 * (a + 2) * x - 2 * (a + 3)) * x
    x = 1 - t
    c2 = (3 * (a + 2) * x - 2 * (a + 3)) * x
    x = 2 - t
    c3 = (3 * a * x - 10 * a) * x + 8 * a
    return c0, c1, c2, c3


@_jit
def _tap_index(v, size, padding, align):
    """The index the integer-valued tap coordinate ``v`` reads after padding (compute_coordinates:
    clip, or reflect then clip), or -1 outside the input (zeros padding)."""
    if padding == 1:
        v, _ = _clip(v, size)
    elif padding == 2:
        if align:
            v, _ = _reflect(v, 0, 2 * (size - 1))
        else:
            v, _ = _reflect(v, -1, 2 * size - 1)
        v, _ = _clip(v, size)
    if 0 <= v < size:  # (a nan coordinate is outside)
        return int(v)
    return -1


@_jit
def _cubic_taps(coord, size, padding, align):
    """(indices of taps -1..2, their weights, their weights' derivatives, d coordinate / d grid)
    of one grid coordinate: the padding maps the taps, not the point."""
    v, mult = _unnormalize(coord, size, align)
    f = np.floor(v)
    t = v - f
    idx = (_tap_index(f - 1, size, padding, align), _tap_index(f, size, padding, align),
           _tap_index(f + 1, size, padding, align), _tap_index(f + 2, size, padding, align))
    return idx, _cubic_coeffs(t), _cubic_coeffs_grad(t), mult


# (called, not inlined: Numba's parfor analysis fails on the tap tuples of an inlined body)
@numba.njit(cache=True, nogil=True)
def _bicubic_point(src, out, n, oy, ox, gx, gy, padding, align):
    h, w = src.shape[2], src.shape[3]
    ix, cx, _, _ = _cubic_taps(gx, w, padding, align)
    iy, cy, _, _ = _cubic_taps(gy, h, padding, align)
    for c in range(out.shape[1]):
        acc = cx[0] * 0.0
        for j in range(4):  # rows: each a four-tap sum along x, then weighted along y
            row = cx[0] * 0.0
            if iy[j] >= 0:
                for i in range(4):
                    if ix[i] >= 0:
                        row += cx[i] * src[n, c, iy[j], ix[i]]
            acc += cy[j] * row
        out[n, c, oy, ox] = acc


@numba.njit(cache=True, nogil=True)
def _bicubic_point_bwd(g, src, grid, gsrc, ggrid, n, oy, ox, padding, align, need_src):
    h, w = src.shape[2], src.shape[3]
    ix, cx, dcx, mx = _cubic_taps(grid[n, oy, ox, 0], w, padding, align)
    iy, cy, dcy, my = _cubic_taps(grid[n, oy, ox, 1], h, padding, align)
    gix = cx[0] * 0.0
    giy = cx[0] * 0.0
    for c in range(g.shape[1]):
        go = g[n, c, oy, ox]
        for i in range(4):
            for j in range(4):
                if ix[i] < 0 or iy[j] < 0:
                    continue
                if need_src:
                    gsrc[n, c, iy[j], ix[i]] += go * cx[i] * cy[j]
                v = src[n, c, iy[j], ix[i]] * go
                gix -= v * dcx[i] * cy[j]
                giy -= v * dcy[j] * cx[i]
    ggrid[n, oy, ox, 0] = mx * gix
    ggrid[n, oy, ox, 1] = my * giy


@_jit
def _grid_row(src, grid, out, r, mode, padding, align):
    h, w = src.shape[2], src.shape[3]
    oh = out.shape[2]
    n = r // oh
    oy = r - n * oh
    for ox in range(out.shape[3]):
        if mode == 2:
            _bicubic_point(src, out, n, oy, ox, grid[n, oy, ox, 0], grid[n, oy, ox, 1], padding,
                           align)
            continue
        fx, _ = _source_index(grid[n, oy, ox, 0], w, padding, align)
        fy, _ = _source_index(grid[n, oy, ox, 1], h, padding, align)
        if mode == 1:
            x0 = int(np.rint(fx))
            y0 = int(np.rint(fy))
            inb = _inb(y0, x0, h, w)
            for c in range(out.shape[1]):
                out[n, c, oy, ox] = src[n, c, y0, x0] if inb else 0
            continue
        x0 = int(math.floor(fx))
        y0 = int(math.floor(fy))
        x1, y1 = x0 + 1, y0 + 1
        nw = (x1 - fx) * (y1 - fy)
        ne = (fx - x0) * (y1 - fy)
        sw = (x1 - fx) * (fy - y0)
        se = (fx - x0) * (fy - y0)
        for c in range(out.shape[1]):
            acc = nw * 0
            if _inb(y0, x0, h, w):
                acc += src[n, c, y0, x0] * nw
            if _inb(y0, x1, h, w):
                acc += src[n, c, y0, x1] * ne
            if _inb(y1, x0, h, w):
                acc += src[n, c, y1, x0] * sw
            if _inb(y1, x1, h, w):
                acc += src[n, c, y1, x1] * se
            out[n, c, oy, ox] = acc


@numba.njit(cache=True, nogil=True)
def grid_fwd(src, grid, out, mode, padding, align):
    for r in range(out.shape[0] * out.shape[2]):
        _grid_row(src, grid, out, r, mode, padding, align)


@numba.njit(cache=True, nogil=True, parallel=True)
def grid_fwd_par(src, grid, out, mode, padding, align):
    for r in prange(out.shape[0] * out.shape[2]):
        _grid_row(src, grid, out, r, mode, padding, align)


@_jit
def _grid_batch_bwd(g, src, grid, gsrc, ggrid, n, mode, padding, align, need_src):
    h, w = src.shape[2], src.shape[3]
    for oy in range(g.shape[2]):
        for ox in range(g.shape[3]):
            if mode == 2:
                _bicubic_point_bwd(g, src, grid, gsrc, ggrid, n, oy, ox, padding, align, need_src)
                continue
            fx, dx = _source_index(grid[n, oy, ox, 0], w, padding, align)
            fy, dy = _source_index(grid[n, oy, ox, 1], h, padding, align)
            if mode == 1:
                x0 = int(np.rint(fx))
                y0 = int(np.rint(fy))
                if need_src and _inb(y0, x0, h, w):
                    for c in range(g.shape[1]):
                        gsrc[n, c, y0, x0] += g[n, c, oy, ox]
                continue
            x0 = int(math.floor(fx))
            y0 = int(math.floor(fy))
            x1, y1 = x0 + 1, y0 + 1
            nw = (x1 - fx) * (y1 - fy)
            ne = (fx - x0) * (y1 - fy)
            sw = (x1 - fx) * (fy - y0)
            se = (fx - x0) * (fy - y0)
            gix = fx * 0
            giy = fx * 0
            for c in range(g.shape[1]):
                go = g[n, c, oy, ox]
                if _inb(y0, x0, h, w):
                    v = src[n, c, y0, x0]
                    gix -= v * (y1 - fy) * go
                    giy -= v * (x1 - fx) * go
                    if need_src:
                        gsrc[n, c, y0, x0] += nw * go
                if _inb(y0, x1, h, w):
                    v = src[n, c, y0, x1]
                    gix += v * (y1 - fy) * go
                    giy -= v * (fx - x0) * go
                    if need_src:
                        gsrc[n, c, y0, x1] += ne * go
                if _inb(y1, x0, h, w):
                    v = src[n, c, y1, x0]
                    gix -= v * (fy - y0) * go
                    giy += v * (x1 - fx) * go
                    if need_src:
                        gsrc[n, c, y1, x0] += sw * go
                if _inb(y1, x1, h, w):
                    v = src[n, c, y1, x1]
                    gix += v * (fy - y0) * go
                    giy += v * (fx - x0) * go
                    if need_src:
                        gsrc[n, c, y1, x1] += se * go
            ggrid[n, oy, ox, 0] = dx * gix
            ggrid[n, oy, ox, 1] = dy * giy


@numba.njit(cache=True, nogil=True)
def grid_bwd(g, src, grid, gsrc, ggrid, mode, padding, align, need_src):
    """gsrc (zero-filled) += the input gradient; ggrid = the grid gradient (zero for nearest)."""
    for n in range(g.shape[0]):
        _grid_batch_bwd(g, src, grid, gsrc, ggrid, n, mode, padding, align, need_src)


@numba.njit(cache=True, nogil=True, parallel=True)
def grid_bwd_par(g, src, grid, gsrc, ggrid, mode, padding, align, need_src):
    for n in prange(g.shape[0]):
        _grid_batch_bwd(g, src, grid, gsrc, ggrid, n, mode, padding, align, need_src)


# -- grid_sample, 5-D input and 3-D grid (ATen's GridSampler.cpp, grid_sampler_3d_cpu_impl) -------

@_jit
def _inb3(z, y, x, d, h, w):
    return 0 <= z < d and 0 <= y < h and 0 <= x < w


@_jit
def _grid3_row(src, grid, out, r, mode, padding, align):
    d, h, w = src.shape[2], src.shape[3], src.shape[4]
    od, oh = out.shape[2], out.shape[3]
    n = r // (od * oh)
    rem = r - n * od * oh
    oz = rem // oh
    oy = rem - oz * oh
    for ox in range(out.shape[4]):
        fx, _ = _source_index(grid[n, oz, oy, ox, 0], w, padding, align)
        fy, _ = _source_index(grid[n, oz, oy, ox, 1], h, padding, align)
        fz, _ = _source_index(grid[n, oz, oy, ox, 2], d, padding, align)
        if mode == 1:
            x0, y0, z0 = int(np.rint(fx)), int(np.rint(fy)), int(np.rint(fz))
            inb = _inb3(z0, y0, x0, d, h, w)
            for c in range(out.shape[1]):
                out[n, c, oz, oy, ox] = src[n, c, z0, y0, x0] if inb else 0
            continue
        x0, y0, z0 = math.floor(fx), math.floor(fy), math.floor(fz)
        x1, y1, z1 = x0 + 1, y0 + 1, z0 + 1
        # the eight corners: t(op) / b(ottom) in z, n(orth) / s(outh) in y, w(est) / e(ast) in x
        tnw = (x1 - fx) * (y1 - fy) * (z1 - fz)
        tne = (fx - x0) * (y1 - fy) * (z1 - fz)
        tsw = (x1 - fx) * (fy - y0) * (z1 - fz)
        tse = (fx - x0) * (fy - y0) * (z1 - fz)
        bnw = (x1 - fx) * (y1 - fy) * (fz - z0)
        bne = (fx - x0) * (y1 - fy) * (fz - z0)
        bsw = (x1 - fx) * (fy - y0) * (fz - z0)
        bse = (fx - x0) * (fy - y0) * (fz - z0)
        for c in range(out.shape[1]):
            acc = tnw * 0
            if _inb3(z0, y0, x0, d, h, w):
                acc += src[n, c, z0, y0, x0] * tnw
            if _inb3(z0, y0, x1, d, h, w):
                acc += src[n, c, z0, y0, x1] * tne
            if _inb3(z0, y1, x0, d, h, w):
                acc += src[n, c, z0, y1, x0] * tsw
            if _inb3(z0, y1, x1, d, h, w):
                acc += src[n, c, z0, y1, x1] * tse
            if _inb3(z1, y0, x0, d, h, w):
                acc += src[n, c, z1, y0, x0] * bnw
            if _inb3(z1, y0, x1, d, h, w):
                acc += src[n, c, z1, y0, x1] * bne
            if _inb3(z1, y1, x0, d, h, w):
                acc += src[n, c, z1, y1, x0] * bsw
            if _inb3(z1, y1, x1, d, h, w):
                acc += src[n, c, z1, y1, x1] * bse
            out[n, c, oz, oy, ox] = acc


@numba.njit(cache=True, nogil=True)
def grid3_fwd(src, grid, out, mode, padding, align):
    for r in range(out.shape[0] * out.shape[2] * out.shape[3]):
        _grid3_row(src, grid, out, r, mode, padding, align)


@numba.njit(cache=True, nogil=True, parallel=True)
def grid3_fwd_par(src, grid, out, mode, padding, align):
    for r in prange(out.shape[0] * out.shape[2] * out.shape[3]):
        _grid3_row(src, grid, out, r, mode, padding, align)


@_jit
def _corner_bwd(src, gsrc, n, z, y, x, wgt, ax, ay, az, g, need_src, grads):
    """One trilinear corner's share of the backward: the input gradient ``wgt * go`` and the
    grid gradient's terms ``value * (d wgt / d x, y, z) * go`` (``ax, ay, az``: the signed
    partial derivatives of the corner's weight), added into ``grads`` per channel."""
    d, h, w = src.shape[2], src.shape[3], src.shape[4]
    if not _inb3(z, y, x, d, h, w):
        return
    for c in range(g.shape[0]):
        go = g[c]
        if need_src:
            gsrc[n, c, z, y, x] += wgt * go
        v = src[n, c, z, y, x] * go
        grads[0] += v * ax
        grads[1] += v * ay
        grads[2] += v * az


@_jit
def _grid3_batch_bwd(g, src, grid, gsrc, ggrid, n, mode, padding, align, need_src, grads):
    d, h, w = src.shape[2], src.shape[3], src.shape[4]
    for oz in range(g.shape[2]):
        for oy in range(g.shape[3]):
            for ox in range(g.shape[4]):
                fx, mx = _source_index(grid[n, oz, oy, ox, 0], w, padding, align)
                fy, my = _source_index(grid[n, oz, oy, ox, 1], h, padding, align)
                fz, mz = _source_index(grid[n, oz, oy, ox, 2], d, padding, align)
                go = g[n, :, oz, oy, ox]
                if mode == 1:
                    x0, y0, z0 = int(np.rint(fx)), int(np.rint(fy)), int(np.rint(fz))
                    if need_src and _inb3(z0, y0, x0, d, h, w):
                        for c in range(g.shape[1]):
                            gsrc[n, c, z0, y0, x0] += go[c]
                    continue
                x0, y0, z0 = math.floor(fx), math.floor(fy), math.floor(fz)
                x1, y1, z1 = x0 + 1, y0 + 1, z0 + 1
                wx0, wx1 = x1 - fx, fx - x0  # weights of the west / east corners along x
                wy0, wy1 = y1 - fy, fy - y0
                wz0, wz1 = z1 - fz, fz - z0
                grads[:] = 0
                _corner_bwd(src, gsrc, n, z0, y0, x0, wx0 * wy0 * wz0, -wy0 * wz0, -wx0 * wz0,
                            -wx0 * wy0, go, need_src, grads)
                _corner_bwd(src, gsrc, n, z0, y0, x1, wx1 * wy0 * wz0, wy0 * wz0, -wx1 * wz0,
                            -wx1 * wy0, go, need_src, grads)
                _corner_bwd(src, gsrc, n, z0, y1, x0, wx0 * wy1 * wz0, -wy1 * wz0, wx0 * wz0,
                            -wx0 * wy1, go, need_src, grads)
                _corner_bwd(src, gsrc, n, z0, y1, x1, wx1 * wy1 * wz0, wy1 * wz0, wx1 * wz0,
                            -wx1 * wy1, go, need_src, grads)
                _corner_bwd(src, gsrc, n, z1, y0, x0, wx0 * wy0 * wz1, -wy0 * wz1, -wx0 * wz1,
                            wx0 * wy0, go, need_src, grads)
                _corner_bwd(src, gsrc, n, z1, y0, x1, wx1 * wy0 * wz1, wy0 * wz1, -wx1 * wz1,
                            wx1 * wy0, go, need_src, grads)
                _corner_bwd(src, gsrc, n, z1, y1, x0, wx0 * wy1 * wz1, -wy1 * wz1, wx0 * wz1,
                            wx0 * wy1, go, need_src, grads)
                _corner_bwd(src, gsrc, n, z1, y1, x1, wx1 * wy1 * wz1, wy1 * wz1, wx1 * wz1,
                            wx1 * wy1, go, need_src, grads)
                ggrid[n, oz, oy, ox, 0] = mx * grads[0]
                ggrid[n, oz, oy, ox, 1] = my * grads[1]
                ggrid[n, oz, oy, ox, 2] = mz * grads[2]


@numba.njit(cache=True, nogil=True)
def grid3_bwd(g, src, grid, gsrc, ggrid, mode, padding, align, need_src):
    """gsrc (zero-filled) += the input gradient; ggrid = the grid gradient (zero for nearest)."""
    grads = np.zeros(3, np.float64)
    for n in range(g.shape[0]):
        _grid3_batch_bwd(g, src, grid, gsrc, ggrid, n, mode, padding, align, need_src, grads)


@numba.njit(cache=True, nogil=True, parallel=True)
def grid3_bwd_par(g, src, grid, gsrc, ggrid, mode, padding, align, need_src):
    for n in prange(g.shape[0]):
        grads = np.zeros(3, np.float64)
        _grid3_batch_bwd(g, src, grid, gsrc, ggrid, n, mode, padding, align, need_src, grads)


def grid_sample_into(src, grid, out, mode: int, padding: int, align: bool) -> None:
    """out (N, C, *grid.shape[1:-1]) = src (N, C, [D,] H, W) sampled at ``grid``."""
    if not out.size:
        return
    par = _parallel(out.size)
    if src.ndim == 5:
        (grid3_fwd_par if par else grid3_fwd)(src, grid, out, mode, padding, align)
    else:
        (grid_fwd_par if par else grid_fwd)(src, grid, out, mode, padding, align)


def grid_sample_backward_into(g, src, grid, gsrc, ggrid, mode: int, padding: int, align: bool,
                              need_src: bool) -> None:
    if not g.size:
        return
    par = _parallel(g.size) and g.shape[0] > 1
    if src.ndim == 5:
        (grid3_bwd_par if par else grid3_bwd)(g, src, grid, gsrc, ggrid, mode, padding, align,
                                              need_src)
    else:
        (grid_bwd_par if par else grid_bwd)(g, src, grid, gsrc, ggrid, mode, padding, align,
                                            need_src)
