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
tap's index as ``get_value_bounded`` does); 2-d follows the vectorised GridSamplerKernel.cpp,
3-d the scalar GridSampler.h (see the grid_sample sections for NaN / inf / huge coordinates).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ... import _threads
from ..jit import njit

_jit = njit(cache=True, nogil=True, inline="always")


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


@njit(cache=True, nogil=True)
def gather_fwd(src, out, iz, iy, ix, run):
    for r in range(out.shape[0] * out.shape[1] * out.shape[2]):
        _gather_row(src, out, r, iz, iy, ix, run)


@njit(cache=True, nogil=True, parallel=True)
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


@njit(cache=True, nogil=True)
def gather_bwd(g, gx, iz, iy, ix):
    """gx (zero-filled) += g scattered through the gather tables."""
    for p in range(g.shape[0]):
        _scatter_plane(g, gx, p, iz, iy, ix)


@njit(cache=True, nogil=True, parallel=True)
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


@njit(cache=True, nogil=True)
def taps_fwd(src, out, iz, wz, cz, iy, wy, cy, ix, wx, cx):
    for r in range(out.shape[0] * out.shape[1] * out.shape[2]):
        _taps_row(src, out, r, iz, wz, cz, iy, wy, cy, ix, wx, cx)


@njit(cache=True, nogil=True, parallel=True)
def taps_fwd_par(src, out, iz, wz, cz, iy, wy, cy, ix, wx, cx):
    for r in prange(out.shape[0] * out.shape[1] * out.shape[2]):
        _taps_row(src, out, r, iz, wz, cz, iy, wy, cy, ix, wx, cx)


@njit(cache=True, nogil=True)
def bilinear_fwd(src, out, iy, wy, ix, wx):
    for r in range(out.shape[0] * out.shape[2]):
        _bilinear_row(src, out, r, iy, wy, ix, wx)


@njit(cache=True, nogil=True, parallel=True)
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


@njit(cache=True, nogil=True)
def taps_bwd(g, gx, iz, wz, cz, iy, wy, cy, ix, wx, cx):
    """gx (zero-filled) += g spread over every tap with its weight."""
    for p in range(g.shape[0]):
        _taps_plane_bwd(g, gx, p, iz, wz, cz, iy, wy, cy, ix, wx, cx)


@njit(cache=True, nogil=True, parallel=True)
def taps_bwd_par(g, gx, iz, wz, cz, iy, wy, cy, ix, wx, cx):
    for p in prange(g.shape[0]):
        _taps_plane_bwd(g, gx, p, iz, wz, cz, iy, wy, cy, ix, wx, cx)


@njit(cache=True, nogil=True)
def bilinear_bwd(g, gx, iy, wy, ix, wx):
    for p in range(g.shape[0]):
        _bilinear_plane_bwd(g, gx, p, iy, wy, ix, wx)


@njit(cache=True, nogil=True, parallel=True)
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


# -- grid_sample: coordinates -------------------------------------------------------------------
# All coordinate and weight arithmetic runs in the grid's dtype ``t`` (``grid.dtype.type``, passed
# down so that every constant is ``t(...)``: a bare int literal would promote float32 to float64).
# Float-to-int conversions go through ``_cvt``: out of any index range (NaN included) it gives a
# negative sentinel, as x86's truncating conversions give the integer minimum, so the index fails
# every bounds check.

_SENTINEL = -(2 ** 62)


@_jit
def _cvt(v):
    """convert_to_int_of_same_size / static_cast<int64_t>: truncation toward zero; NaN and
    magnitudes past 2**62 (all out of bounds) give a negative sentinel."""
    if -4.611686018427388e18 < v < 4.611686018427388e18:
        return int(v)
    return _SENTINEL


@_jit
def _nan_of(v, t):
    return t(np.nan)


# 2-D: ATen's vectorised kernel (GridSamplerKernel.cpp, ComputeLocation / ApplyGridSample), which
# torch's CPU grid_sampler_2d runs for float32 and float64.

@_jit
def _vunnormalize(coord, size, align, t):
    """ComputeLocationBase::unnormalize: (pixel coordinate, scaling factor)."""
    if align:
        scale = t(size - 1) / t(2)
        return (coord + t(1)) * scale, scale
    scale = t(size) / t(2)
    return (coord + t(1)) * scale - t(0.5), scale


@_jit
def _vclip(v, size, t):
    """clip_coordinates: clamp_min(Vec(0), in) (``max_ps(in, 0)``: NaN gives 0), then
    clamp_max to size - 1."""
    hi = t(size - 1)
    c = v if v > t(0) else t(0)
    return c if c < hi else hi


@_jit
def _vclip_grad(v, size, t):
    """clip_coordinates_get_grad: NaN-propagating maximum / minimum; in bounds (gradient kept)
    when the result is neither 0 nor size - 1 bit for bit (so NaN is in bounds)."""
    if v != v:
        return v, True
    hi = t(size - 1)
    c = v if v > t(0) else t(0)
    r = c if c < hi else hi
    return r, c != t(0) and r != hi


@_jit
def _vreflect_params(size, align, t):
    """(low, twice_span, empty) of ComputeLocationBase."""
    if align:
        return t(0), t(size - 1) * t(2), size <= 1
    return t(-0.5), t(size) * t(2), False


@_jit
def _sub_product(a, d, s, t):
    """a - d * s rounded once, as the FMA torch's compiler makes of reflect_coordinates'
    ``abs_in - double_flips * twice_span`` (no fused instruction here: float32 operands' product
    and this difference are exact in float64; float64 uses Dekker's exact product)."""
    if t(0.1) != 0.1:  # float32
        return t(np.float64(a) - np.float64(d) * np.float64(s))
    p = d * s
    c = 134217729.0 * d
    dh = c - (c - d)
    dl = d - dh
    c = 134217729.0 * s
    sh = c - (c - s)
    sl = s - sh
    e = ((dh * sh - p) + dh * sl + dl * sh) + dl * sl  # p + e == d * s
    return (a - p) - e


@_jit
def _vreflect(v, size, align, t):
    """reflect_coordinates: |in - low| less whole twice-spans (a truncated quotient), then
    minimum(extra, twice_span - extra) (NaN-propagating) + low; inf gives NaN."""
    low, tspan, empty = _vreflect_params(size, align, t)
    if empty:
        return t(0)
    a = abs(v - low)
    extra = _sub_product(a, np.trunc(a / tspan), tspan, t)
    r = tspan - extra
    if extra != extra or r != r:
        return _nan_of(v, t)
    return (extra if extra < r else r) + low


@_jit
def _vreflect_grad(v, size, align, t):
    low, tspan, empty = _vreflect_params(size, align, t)
    if empty:
        return t(0), t(0)
    d = v - low
    neg = d < t(0)
    a = abs(d)
    extra = _sub_product(a, np.trunc(a / tspan), tspan, t)
    r = tspan - extra
    more = extra > r
    return (r if more else extra) + low, (t(-1) if more != neg else t(1))


@_jit
def _vlocation_t(coord, size, padding, align, t):
    """ComputeLocation::apply: the pixel coordinate after the padding."""
    v, _ = _vunnormalize(coord, size, align, t)
    if padding == 1:
        return _vclip(v, size, t)
    if padding == 2:
        return _vclip(_vreflect(v, size, align, t), size, t)
    return v


@_jit
def _vlocation_grad_t(coord, size, padding, align, t):
    """ComputeLocation::apply_get_grad: (pixel coordinate, d coordinate / d grid)."""
    v, scale = _vunnormalize(coord, size, align, t)
    if padding == 1:
        v, inb = _vclip_grad(v, size, t)
        return v, (scale if inb else t(0))
    if padding == 2:
        v, grefl = _vreflect_grad(v, size, align, t)
        g = grefl * scale
        v, inb = _vclip_grad(v, size, t)
        return v, (g if inb else t(0))
    return v, scale


@_jit
def _vindex(v, size):
    """The integer index of a floored / rounded coordinate, or -1 outside [0, size) (the
    kernel's int masks; its border / reflection masks are all-true because the coordinate is
    clipped, and a NaN coordinate, which only the backward's clip lets through, reads nothing
    here where ATen gathers from an undefined offset)."""
    i = _cvt(v)
    return i if 0 <= i < size else -1


@_jit
def _vtap(v, size, padding, align, t):
    """get_value_bounded's index of bicubic tap coordinate ``v``: compute_coordinates (clip,
    or reflect then clip), truncated, -1 outside."""
    if padding == 1:
        v = _vclip(v, size, t)
    elif padding == 2:
        v = _vclip(_vreflect(v, size, align, t), size, t)
    return _vindex(v, size)


@_jit
def _at(src, n, c, y, x, t):
    """mask_gather: the value as a ``t``, or 0 where either index is -1."""
    if y < 0 or x < 0:
        return t(0)
    return t(src[n, c, y, x])


# Which arithmetic: torch computes a float32 grid's coordinates in float32. Where the unnormalised
# coordinate is below 2**23 that rounding only perturbs the last bits, and these kernels compute
# in float64 (the float64 truth, which the float32 tests hold them to); from 2**23 on (and for
# NaN / inf) float32 has no fraction bits left and its rounding decides which pixel is read
# (reflection of 3e9: a different pixel than float64's), so there the coordinates follow the
# grid's own dtype ``t``, as torch's. Weights and sums are float64 either way; results are stored
# in the operands' dtype.

_EXACT = 8388608.0  # 2**23


@_jit
def _own_dtype(coord, size, align):
    """Whether the coordinate is computed in the grid's dtype (huge or non-finite)."""
    u, _ = _sunnormalize(np.float64(coord), size, align, np.float64)
    return not (abs(u) < _EXACT)


@_jit
def _vlocation(coord, size, padding, align, t):
    if _own_dtype(coord, size, align):
        return np.float64(_vlocation_t(coord, size, padding, align, t))
    return _vlocation_t(np.float64(coord), size, padding, align, np.float64)


@_jit
def _vlocation_grad(coord, size, padding, align, t):
    if _own_dtype(coord, size, align):
        v, d = _vlocation_grad_t(coord, size, padding, align, t)
        return np.float64(v), np.float64(d)
    return _vlocation_grad_t(np.float64(coord), size, padding, align, np.float64)


# -- bicubic taps (ApplyGridSample<..., Bicubic>) --------------------------------------------------

@_jit
def _cubic_coeffs(x0, t):
    """get_cubic_coefficients: the weights of taps -1, 0, 1, 2 at fraction x0 (A = -0.75)."""
    a = t(-0.75)
    x = x0 + t(1)
    c0 = ((a * x - t(5) * a) * x + t(8) * a) * x - t(4) * a
    c1 = ((a + t(2)) * x0 - (a + t(3))) * x0 * x0 + t(1)
    x = t(1) - x0
    c2 = ((a + t(2)) * x - (a + t(3))) * x * x + t(1)
    x = t(2) - x0
    c3 = ((a * x - t(5) * a) * x + t(8) * a) * x - t(4) * a
    return c0, c1, c2, c3


@_jit
def _cubic_coeffs_grad(x0, t):
    """get_cubic_coefficients_grad: d coeff / d (tap - x0) for the four taps."""
    a = t(-0.75)
    x = t(-1) - x0
    c0 = (t(-3) * a * x - t(10) * a) * x - t(8) * a
    x = t(0) - x0
    c1 = (t(-3) * (a + t(2)) * x - t(2) * (a + t(3))) * x
    x = t(1) - x0
    c2 = (t(3) * (a + t(2)) * x - t(2) * (a + t(3))) * x
    x = t(2) - x0
    c3 = (t(3) * a * x - t(10) * a) * x + t(8) * a
    return c0, c1, c2, c3


@_jit
def _cubic_taps_t(coord, size, padding, align, t):
    """(indices of taps -1..2 or -1, weights, weights' derivatives, scaling factor) of one grid
    coordinate: the unpadded point's floor and fraction; the padding maps each tap."""
    v, scale = _vunnormalize(coord, size, align, t)
    f = np.floor(v)
    x0 = v - f
    idx = (_vtap(f - t(1), size, padding, align, t), _vtap(f + t(0), size, padding, align, t),
           _vtap(f + t(1), size, padding, align, t), _vtap(f + t(2), size, padding, align, t))
    return idx, _cubic_coeffs(x0, t), _cubic_coeffs_grad(x0, t), scale



@_jit
def _f8(c):
    return np.float64(c[0]), np.float64(c[1]), np.float64(c[2]), np.float64(c[3])


@_jit
def _cubic_taps(coord, size, padding, align, t):
    if _own_dtype(coord, size, align):
        idx, c, dc, scale = _cubic_taps_t(coord, size, padding, align, t)
        return idx, _f8(c), _f8(dc), np.float64(scale)
    return _cubic_taps_t(np.float64(coord), size, padding, align, np.float64)


# (called, not inlined: Numba's parfor analysis fails on the tap tuples of an inlined body)
@njit(cache=True, nogil=True)
def _bicubic_point(src, out, n, oy, ox, gx, gy, padding, align):
    t = src.dtype.type
    f = np.float64
    h, w = src.shape[2], src.shape[3]
    ix, cx, _, _ = _cubic_taps(gx, w, padding, align, t)
    iy, cy, _, _ = _cubic_taps(gy, h, padding, align, t)
    for c in range(out.shape[1]):
        r0 = (cx[0] * _at(src, n, c, iy[0], ix[0], f) + cx[1] * _at(src, n, c, iy[0], ix[1], f)
              + cx[2] * _at(src, n, c, iy[0], ix[2], f) + cx[3] * _at(src, n, c, iy[0], ix[3], f))
        r1 = (cx[0] * _at(src, n, c, iy[1], ix[0], f) + cx[1] * _at(src, n, c, iy[1], ix[1], f)
              + cx[2] * _at(src, n, c, iy[1], ix[2], f) + cx[3] * _at(src, n, c, iy[1], ix[3], f))
        r2 = (cx[0] * _at(src, n, c, iy[2], ix[0], f) + cx[1] * _at(src, n, c, iy[2], ix[1], f)
              + cx[2] * _at(src, n, c, iy[2], ix[2], f) + cx[3] * _at(src, n, c, iy[2], ix[3], f))
        r3 = (cx[0] * _at(src, n, c, iy[3], ix[0], f) + cx[1] * _at(src, n, c, iy[3], ix[1], f)
              + cx[2] * _at(src, n, c, iy[3], ix[2], f) + cx[3] * _at(src, n, c, iy[3], ix[3], f))
        out[n, c, oy, ox] = cy[0] * r0 + cy[1] * r1 + cy[2] * r2 + cy[3] * r3


@njit(cache=True, nogil=True)
def _bicubic_point_bwd(g, src, grid, gsrc, ggrid, n, oy, ox, padding, align, need_src):
    t = src.dtype.type
    f = np.float64
    h, w = src.shape[2], src.shape[3]
    ix, cx, dcx, mx = _cubic_taps(grid[n, oy, ox, 0], w, padding, align, t)
    iy, cy, dcy, my = _cubic_taps(grid[n, oy, ox, 1], h, padding, align, t)
    gix = f(0)
    giy = f(0)
    # finite weights: an out-of-bounds tap (value 0) adds exact zeros for a finite gradient
    # value, so those taps are skipped (3x faster); else every tap, as ATen's mask_gather
    fin = abs(cx[0]) + abs(cx[1]) + abs(cx[2]) + abs(cx[3]) + abs(dcx[0]) + abs(dcx[1]) + \
        abs(dcx[2]) + abs(dcx[3]) + abs(cy[0]) + abs(cy[1]) + abs(cy[2]) + abs(cy[3]) + \
        abs(dcy[0]) + abs(dcy[1]) + abs(dcy[2]) + abs(dcy[3]) < np.inf
    for c in range(g.shape[1]):
        go = g[n, c, oy, ox]
        if fin and abs(go) < np.inf:
            for i in range(4):
                if ix[i] < 0:
                    continue
                for j in range(4):
                    if iy[j] < 0:
                        continue
                    if need_src:
                        gsrc[n, c, iy[j], ix[i]] += go * cx[i] * cy[j]
                    v = f(src[n, c, iy[j], ix[i]])
                    gix = gix - v * go * dcx[i] * cy[j]
                    giy = giy - v * go * dcy[j] * cx[i]
            continue
        for i in range(4):
            for j in range(4):
                if need_src and ix[i] >= 0 and iy[j] >= 0:
                    gsrc[n, c, iy[j], ix[i]] += go * cx[i] * cy[j]
                v = _at(src, n, c, iy[j], ix[i], f)
                gix = gix - v * go * dcx[i] * cy[j]
                giy = giy - v * go * dcy[j] * cx[i]
    ggrid[n, oy, ox, 0] = gix * mx
    ggrid[n, oy, ox, 1] = giy * my


# -- bilinear / nearest (ApplyGridSample<..., Bilinear / Nearest>) -------------------------------

@_jit
def _bilinear_params(x, y, w, h, t):
    """compute_interp_params: (n, s, w, e distances, nw, ne, sw, se weights, the west / east
    column and north / south row indices, -1 outside)."""
    xw = np.floor(x)
    yn = np.floor(y)
    dw = x - xw
    de = t(1) - dw
    dn = y - yn
    ds = t(1) - dn
    iw = _cvt(xw)
    jn = _cvt(yn)
    ie = iw + 1 if 0 <= iw + 1 < w else -1
    js = jn + 1 if 0 <= jn + 1 < h else -1
    iw = iw if 0 <= iw < w else -1
    jn = jn if 0 <= jn < h else -1
    return dn, ds, dw, de, ds * de, ds * dw, dn * de, dn * dw, iw, ie, jn, js


@_jit
def _grid_row(src, grid, out, r, mode, padding, align):
    t = src.dtype.type
    f = np.float64
    h, w = src.shape[2], src.shape[3]
    oh = out.shape[2]
    n = r // oh
    oy = r - n * oh
    for ox in range(out.shape[3]):
        if mode == 2:
            _bicubic_point(src, out, n, oy, ox, grid[n, oy, ox, 0], grid[n, oy, ox, 1], padding,
                           align)
            continue
        if mode == 1:  # (a discrete choice: the grid's own dtype decides its ties, as torch's)
            x0 = _vindex(np.rint(_vlocation_t(grid[n, oy, ox, 0], w, padding, align, t)), w)
            y0 = _vindex(np.rint(_vlocation_t(grid[n, oy, ox, 1], h, padding, align, t)), h)
            for c in range(out.shape[1]):
                out[n, c, oy, ox] = _at(src, n, c, y0, x0, f)
            continue
        fx = _vlocation(grid[n, oy, ox, 0], w, padding, align, t)
        fy = _vlocation(grid[n, oy, ox, 1], h, padding, align, t)
        _, _, _, _, nw, ne, sw, se, iw, ie, jn, js = _bilinear_params(fx, fy, w, h, f)
        for c in range(out.shape[1]):
            out[n, c, oy, ox] = (_at(src, n, c, jn, iw, f) * nw + _at(src, n, c, jn, ie, f) * ne
                                 + _at(src, n, c, js, iw, f) * sw + _at(src, n, c, js, ie, f) * se)


@njit(cache=True, nogil=True)
def grid_fwd(src, grid, out, mode, padding, align):
    for r in range(out.shape[0] * out.shape[2]):
        _grid_row(src, grid, out, r, mode, padding, align)


@njit(cache=True, nogil=True, parallel=True)
def grid_fwd_par(src, grid, out, mode, padding, align):
    for r in prange(out.shape[0] * out.shape[2]):
        _grid_row(src, grid, out, r, mode, padding, align)


@_jit
def _grid_batch_bwd(g, src, grid, gsrc, ggrid, n, mode, padding, align, need_src):
    t = src.dtype.type
    f = np.float64
    h, w = src.shape[2], src.shape[3]
    for oy in range(g.shape[2]):
        for ox in range(g.shape[3]):
            if mode == 2:
                _bicubic_point_bwd(g, src, grid, gsrc, ggrid, n, oy, ox, padding, align, need_src)
                continue
            if mode == 1:  # (no grid gradient: ggrid stays zero)
                if need_src:
                    x0 = _vindex(np.rint(_vlocation_t(grid[n, oy, ox, 0], w, padding, align, t)), w)
                    y0 = _vindex(np.rint(_vlocation_t(grid[n, oy, ox, 1], h, padding, align, t)), h)
                    if x0 >= 0 and y0 >= 0:
                        for c in range(g.shape[1]):
                            gsrc[n, c, y0, x0] += g[n, c, oy, ox]
                continue
            fx, mx = _vlocation_grad(grid[n, oy, ox, 0], w, padding, align, t)
            fy, my = _vlocation_grad(grid[n, oy, ox, 1], h, padding, align, t)
            dn, ds, dw, de, nw, ne, sw, se, iw, ie, jn, js = _bilinear_params(fx, fy, w, h, f)
            gix = f(0)
            giy = f(0)
            for c in range(g.shape[1]):
                go = g[n, c, oy, ox]
                if need_src:
                    if jn >= 0 and iw >= 0:
                        gsrc[n, c, jn, iw] += nw * go
                    if jn >= 0 and ie >= 0:
                        gsrc[n, c, jn, ie] += ne * go
                    if js >= 0 and iw >= 0:
                        gsrc[n, c, js, iw] += sw * go
                    if js >= 0 and ie >= 0:
                        gsrc[n, c, js, ie] += se * go
                vnw, vne = _at(src, n, c, jn, iw, f), _at(src, n, c, jn, ie, f)
                vsw, vse = _at(src, n, c, js, iw, f), _at(src, n, c, js, ie, f)
                gix = gix + ((vne - vnw) * ds + (vse - vsw) * dn) * go
                giy = giy + ((vsw - vnw) * de + (vse - vne) * dw) * go
            ggrid[n, oy, ox, 0] = gix * mx
            ggrid[n, oy, ox, 1] = giy * my


@njit(cache=True, nogil=True)
def grid_bwd(g, src, grid, gsrc, ggrid, mode, padding, align, need_src):
    """gsrc (zero-filled) += the input gradient; ggrid (zero-filled) = the grid gradient."""
    for n in range(g.shape[0]):
        _grid_batch_bwd(g, src, grid, gsrc, ggrid, n, mode, padding, align, need_src)


@njit(cache=True, nogil=True, parallel=True)
def grid_bwd_par(g, src, grid, gsrc, ggrid, mode, padding, align, need_src):
    for n in prange(g.shape[0]):
        _grid_batch_bwd(g, src, grid, gsrc, ggrid, n, mode, padding, align, need_src)


# -- grid_sample, 5-D input and 3-D grid: ATen's scalar GridSampler.h formulas
# (GridSampler.cpp, grid_sampler_3d_cpu_impl) ---------------------------------------------------

@_jit
def _sunnormalize(coord, size, align, t):
    """grid_sampler_unnormalize_set_grad: (pixel coordinate, its derivative)."""
    if align:
        return (coord + t(1)) / t(2) * t(size - 1), t(size - 1) / t(2)
    return ((coord + t(1)) * t(size) - t(1)) / t(2), t(size) / t(2)


@_jit
def _sclip(v, size, t):
    """clip_coordinates: std::min(size - 1, std::max(in, 0)); std::max keeps a NaN ``in``,
    std::min then returns size - 1 (its comparison with NaN is false)."""
    hi = t(size - 1)
    m = t(0) if v < t(0) else v
    return m if m < hi else hi


@_jit
def _sclip_grad(v, size, t):
    """clip_coordinates_set_grad: the bounds are out of bounds (gradient 0); NaN passes with 1."""
    if v <= t(0):
        return t(0), t(0)
    hi = t(size - 1)
    if v >= hi:
        return hi, t(0)
    return v, t(1)


@_jit
def _flips_odd(q):
    """``static_cast<int>(std::floor(in / span)) % 2 != 0``: a quotient past the int range
    converts to INT_MIN on x86 (cvttsd2si), which is even."""
    if -2147483648.0 <= q < 2147483648.0:
        return int(q) % 2 != 0
    return False


@_jit
def _sreflect_grad(v, twice_low, twice_high, t):
    """reflect_coordinates_set_grad: (reflected coordinate, its derivative sign); the value is
    reflect_coordinates' (|in - min| either way)."""
    if twice_low == twice_high:
        return t(0), t(0)
    lo = t(twice_low) / t(2)
    span = t(twice_high - twice_low) / t(2)
    v = v - lo
    mult = t(1)
    if v < t(0):
        mult = t(-1)
        v = -v
    extra = np.fmod(v, span)
    if _flips_odd(np.floor(v / span)):
        return span - extra + lo, -mult
    return extra + lo, mult


@_jit
def _safe_downgrade(v, t):
    """safe_downgrade_to_int_range: -100 for NaN, inf and x > INT_MAX - 1 or x < INT_MIN (the
    bound rounded to the dtype: 2**31 for float32)."""
    if v > t(2147483646) or v < t(-2147483648) or not np.isfinite(v):
        return t(-100)
    return v


@_jit
def _sreflect_pair(v, size, align, t):
    if align:
        return _sreflect_grad(v, 0, 2 * (size - 1), t)
    return _sreflect_grad(v, -1, 2 * size - 1, t)


@_jit
def _source_index_t(coord, size, padding, align, t):
    """grid_sampler_compute_source_index: unnormalise, pad (clip: NaN to size - 1), downgrade."""
    v, _ = _sunnormalize(coord, size, align, t)
    if padding == 1:
        v = _sclip(v, size, t)
    elif padding == 2:
        v, _ = _sreflect_pair(v, size, align, t)
        v = _sclip(v, size, t)
    return _safe_downgrade(v, t)


@_jit
def _source_index_grad_t(coord, size, padding, align, t):
    """grid_sampler_compute_source_index_set_grad: (coordinate, d coordinate / d grid); its
    clip lets NaN through, which the downgrade then sends out of bounds."""
    v, d = _sunnormalize(coord, size, align, t)
    if padding == 1:
        v, d2 = _sclip_grad(v, size, t)
        d = d * d2
    elif padding == 2:
        v, d2 = _sreflect_pair(v, size, align, t)
        v, d3 = _sclip_grad(v, size, t)
        d = d * d2 * d3
    return _safe_downgrade(v, t), d


@_jit
def _source_index(coord, size, padding, align, t):
    if _own_dtype(coord, size, align):
        return np.float64(_source_index_t(coord, size, padding, align, t))
    return _source_index_t(np.float64(coord), size, padding, align, np.float64)


@_jit
def _source_index_grad(coord, size, padding, align, t):
    if _own_dtype(coord, size, align):
        v, d = _source_index_grad_t(coord, size, padding, align, t)
        return np.float64(v), np.float64(d)
    return _source_index_grad_t(np.float64(coord), size, padding, align, np.float64)


@_jit
def _inb3(z, y, x, d, h, w):
    return 0 <= z < d and 0 <= y < h and 0 <= x < w


@_jit
def _grid3_row(src, grid, out, r, mode, padding, align):
    t = src.dtype.type
    f = np.float64
    d, h, w = src.shape[2], src.shape[3], src.shape[4]
    od, oh = out.shape[2], out.shape[3]
    n = r // (od * oh)
    rem = r - n * od * oh
    oz = rem // oh
    oy = rem - oz * oh
    for ox in range(out.shape[4]):
        if mode == 1:  # (nearest: the grid's own dtype decides ties, as torch's)
            fx = _source_index_t(grid[n, oz, oy, ox, 0], w, padding, align, t)
            fy = _source_index_t(grid[n, oz, oy, ox, 1], h, padding, align, t)
            fz = _source_index_t(grid[n, oz, oy, ox, 2], d, padding, align, t)
        else:
            fx = _source_index(grid[n, oz, oy, ox, 0], w, padding, align, t)
            fy = _source_index(grid[n, oz, oy, ox, 1], h, padding, align, t)
            fz = _source_index(grid[n, oz, oy, ox, 2], d, padding, align, t)
        if mode == 1:
            x0, y0, z0 = int(np.rint(fx)), int(np.rint(fy)), int(np.rint(fz))
            inb = _inb3(z0, y0, x0, d, h, w)
            for c in range(out.shape[1]):
                out[n, c, oz, oy, ox] = src[n, c, z0, y0, x0] if inb else f(0)
            continue
        x0, y0, z0 = int(np.floor(fx)), int(np.floor(fy)), int(np.floor(fz))
        x1, y1, z1 = x0 + 1, y0 + 1, z0 + 1
        wx0, wx1 = f(x1) - fx, fx - f(x0)  # weights of the west / east corners along x
        wy0, wy1 = f(y1) - fy, fy - f(y0)
        wz0, wz1 = f(z1) - fz, fz - f(z0)
        for c in range(out.shape[1]):
            acc = f(0)
            for k in range(8):  # tnw, tne, tsw, tse, bnw, bne, bsw, bse: bits (z, y, x)
                cx, cy, cz = x0 + (k & 1), y0 + ((k >> 1) & 1), z0 + (k >> 2)
                if _inb3(cz, cy, cx, d, h, w):
                    wgt = ((wx1 if k & 1 else wx0) * (wy1 if k & 2 else wy0)
                           * (wz1 if k & 4 else wz0))
                    acc += src[n, c, cz, cy, cx] * wgt
            out[n, c, oz, oy, ox] = acc


@njit(cache=True, nogil=True)
def grid3_fwd(src, grid, out, mode, padding, align):
    for r in range(out.shape[0] * out.shape[2] * out.shape[3]):
        _grid3_row(src, grid, out, r, mode, padding, align)


@njit(cache=True, nogil=True, parallel=True)
def grid3_fwd_par(src, grid, out, mode, padding, align):
    for r in prange(out.shape[0] * out.shape[2] * out.shape[3]):
        _grid3_row(src, grid, out, r, mode, padding, align)


@_jit
def _grid3_batch_bwd(g, src, grid, gsrc, ggrid, n, mode, padding, align, need_src):
    t = src.dtype.type
    f = np.float64
    d, h, w = src.shape[2], src.shape[3], src.shape[4]
    for oz in range(g.shape[2]):
        for oy in range(g.shape[3]):
            for ox in range(g.shape[4]):
                # (the backward's coordinates, nearest's too: NaN leaves the input, where the
                # forward's clip sends it to size - 1)
                if mode == 1:  # (no grid gradient: ggrid stays zero)
                    fx, _ = _source_index_grad_t(grid[n, oz, oy, ox, 0], w, padding, align, t)
                    fy, _ = _source_index_grad_t(grid[n, oz, oy, ox, 1], h, padding, align, t)
                    fz, _ = _source_index_grad_t(grid[n, oz, oy, ox, 2], d, padding, align, t)
                    x0, y0, z0 = int(np.rint(fx)), int(np.rint(fy)), int(np.rint(fz))
                    if need_src and _inb3(z0, y0, x0, d, h, w):
                        for c in range(g.shape[1]):
                            gsrc[n, c, z0, y0, x0] += g[n, c, oz, oy, ox]
                    continue
                fx, mx = _source_index_grad(grid[n, oz, oy, ox, 0], w, padding, align, t)
                fy, my = _source_index_grad(grid[n, oz, oy, ox, 1], h, padding, align, t)
                fz, mz = _source_index_grad(grid[n, oz, oy, ox, 2], d, padding, align, t)
                x0, y0, z0 = int(np.floor(fx)), int(np.floor(fy)), int(np.floor(fz))
                x1, y1, z1 = x0 + 1, y0 + 1, z0 + 1
                wx0, wx1 = f(x1) - fx, fx - f(x0)
                wy0, wy1 = f(y1) - fy, fy - f(y0)
                wz0, wz1 = f(z1) - fz, fz - f(z0)
                gix = f(0)
                giy = f(0)
                giz = f(0)
                for c in range(g.shape[1]):
                    go = g[n, c, oz, oy, ox]
                    if need_src:
                        for k in range(8):
                            cx, cy, cz = x0 + (k & 1), y0 + ((k >> 1) & 1), z0 + (k >> 2)
                            if _inb3(cz, cy, cx, d, h, w):
                                wgt = ((wx1 if k & 1 else wx0) * (wy1 if k & 2 else wy0)
                                       * (wz1 if k & 4 else wz0))
                                gsrc[n, c, cz, cy, cx] += wgt * go
                    for k in range(8):
                        cx, cy, cz = x0 + (k & 1), y0 + ((k >> 1) & 1), z0 + (k >> 2)
                        if not _inb3(cz, cy, cx, d, h, w):
                            continue
                        v = src[n, c, cz, cy, cx]
                        ax = wx1 if k & 1 else wx0
                        ay = wy1 if k & 2 else wy0
                        az = wz1 if k & 4 else wz0
                        tx = v * ay * az * go
                        ty = v * ax * az * go
                        tz = v * ax * ay * go
                        gix = gix + tx if k & 1 else gix - tx
                        giy = giy + ty if k & 2 else giy - ty
                        giz = giz + tz if k & 4 else giz - tz
                ggrid[n, oz, oy, ox, 0] = mx * gix
                ggrid[n, oz, oy, ox, 1] = my * giy
                ggrid[n, oz, oy, ox, 2] = mz * giz


@njit(cache=True, nogil=True)
def grid3_bwd(g, src, grid, gsrc, ggrid, mode, padding, align, need_src):
    """gsrc (zero-filled) += the input gradient; ggrid (zero-filled) = the grid gradient."""
    for n in range(g.shape[0]):
        _grid3_batch_bwd(g, src, grid, gsrc, ggrid, n, mode, padding, align, need_src)


@njit(cache=True, nogil=True, parallel=True)
def grid3_bwd_par(g, src, grid, gsrc, ggrid, mode, padding, align, need_src):
    for n in prange(g.shape[0]):
        _grid3_batch_bwd(g, src, grid, gsrc, ggrid, n, mode, padding, align, need_src)


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
