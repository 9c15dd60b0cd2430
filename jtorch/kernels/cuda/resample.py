"""Resampling kernels on CUDA: interpolation and index-mapping padding (the table-driven gather
and taps ops of ``defs/resample.py`` and their backwards), grid sampling (2-d and 3-d, with
their backwards) and affine_grid's base grid.

A ``ResamplePlan``'s per-dim tables (padded to three dims), and the inverse tables the
backwards derive from them, are uploaded once per geometry, as the pooling windows are;
operands are read at their element strides as (P0, P1, D, H, W) (``pooling.planes``).

- gather / taps forwards: one thread per output element, the CPU kernel's taps in its order
  (innermost dim first, each partial sum times its weight);
- their backwards: a gather, one thread per input element summing the outputs that read it
  through inverse tables built on the host once per geometry: per dim, the outputs that read
  input ``i`` in order and, per output, its taps that do; walked as the CPU kernel's scatter
  meets them (outputs in order, then an output's taps in order), so the sums are the CPU's;
- grid sampling: one thread per grid point (all channels), the CPU kernel's float64
  coordinates and weights; the grid gradient likewise per point; the input gradient (the
  grid is data: no table says which points reach an input element) one thread per (n, c)
  plane walking the points in order, as ``pooling``'s max backward, so no two threads write
  one element and the sums are the CPU kernel's;
- affine_grid's base: the CPU entry's coordinate tables (a few values per dim), assembled.

Every float product goes through ``mul``: CUDA's compiler fuses a product into the sum it
feeds (one rounding for both), the CPU kernels round each, and libdevice's ``mul.rn`` is never
fused; so results equal the CPU kernels' bit for bit, on every run (no atomics).

Gathers move any dtype up to 8 bytes as raw bits; the sums run float32 and float64, and
float16 in float32 (the taps read it widened and round once; grid sampling runs over float32
copies, as the CPU entry does); other dtypes take the host path (``eager.host_kernel``).
"""

from __future__ import annotations

import hashlib
import math

import numpy as np
from numba import types
from numba.extending import overload

from ... import dtypes as _dt
from .. import registry
from . import conv as _cv
from . import eager, target
from . import pooling as _pl
from . import scalars as _sc
from .target import cuda

_FLOAT = frozenset({"float16", "float32", "float64"})
_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}  # (gathers move bits)
_floor = _sc.TWINS[np.floor]
_rint = _sc.TWINS[np.rint]
_fmod = _sc.TWINS[np.fmod]
_INT64_LIMIT = 9223372036854775808.0  # 2**63


def mul(a, b):
    """a * b rounded on its own (never fused into the sum it feeds)."""
    return a * b


@overload(mul, target="cuda")
def _mul_cuda(a, b):
    from numba.cuda import libdevice

    if not all(isinstance(v, (types.Float, types.Integer)) for v in (a, b)):
        return None
    if types.float64 in (a, b) or isinstance(a, types.Integer) or isinstance(b, types.Integer):
        return lambda a, b: libdevice.dmul_rn(np.float64(a), np.float64(b))
    return lambda a, b: libdevice.fmul_rn(np.float32(a), np.float32(b))  # (float16: widened)


# -- gather and taps: interpolation and padding ------------------------------------------------

def gather_kernel(x, ox, sa, sb, nb, sxd, sxh, sxw, out, P, OD, OH, OW, iz, iy, ix):
    """out[p, z, y, w] = x[p, iz[z], iy[y], ix[w]] (raw bits)."""
    total = P * OD * OH * OW
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    while t < total:
        w = t % OW
        h = (t // OW) % OH
        d = (t // (OW * OH)) % OD
        p = t // (OW * OH * OD)
        out[t] = x[ox + (p // nb) * sa + (p % nb) * sb + iz[d] * sxd + iy[h] * sxh + ix[w] * sxw]
        t += step


def gather_backward_kernel(g, og, sa, sb, nb, sgd, sgh, sgw, gi, P, D, H, W,
                           az, oz, ay, oy, ax, ox_, zero):
    """gi[p, d, h, w] = the sum of g over the outputs that gather (d, h, w): per dim, outputs
    ``o[a[i] .. a[i+1]]`` (ascending), met in the CPU kernel's (z, y, x) order."""
    total = P * D * H * W
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    while t < total:
        w = t % W
        h = (t // W) % H
        d = (t // (W * H)) % D
        p = t // (W * H * D)
        base = og + (p // nb) * sa + (p % nb) * sb
        s = zero
        for kz in range(az[d], az[d + 1]):
            rz = base + oz[kz] * sgd
            for ky in range(ay[h], ay[h + 1]):
                ry = rz + oy[ky] * sgh
                for kx in range(ax[w], ax[w + 1]):
                    s += g[ry + ox_[kx] * sgw]
        gi[t] = s
        t += step


def taps_kernel(x, ox, sa, sb, nb, sxd, sxh, sxw, out, P, OD, OH, OW,
                iz, wz, cz, iy, wy, cy, ix, wx, cx, zero):
    """out[p, z, y, w] = sum_a wz * sum_b wy * sum_c wx * x[p, iz, iy, ix], the innermost sum
    first, each started by its first tap, as ``cpu/resample._taps_row``."""
    total = P * OD * OH * OW
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    while t < total:
        w = t % OW
        h = (t // OW) % OH
        d = (t // (OW * OH)) % OD
        p = t // (OW * OH * OD)
        base = ox + (p // nb) * sa + (p % nb) * sb
        nz = cz[d]
        if nz < 1:  # (the first tap counts even when a window holds none)
            nz = 1
        ny = cy[h]
        if ny < 1:
            ny = 1
        vz = zero
        for a in range(nz):
            rz = base + iz[d, a] * sxd
            vy = zero
            for b in range(ny):
                row = rz + iy[h, b] * sxh
                vx = mul(x[row + ix[w, 0] * sxw], wx[w, 0])
                for c in range(1, cx[w]):
                    vx += mul(x[row + ix[w, c] * sxw], wx[w, c])
                term = mul(vx, wy[h, b])
                vy = term if b == 0 else vy + term
            term = mul(vy, wz[d, a])
            vz = term if a == 0 else vz + term
        out[t] = vz
        t += step


def taps_backward_kernel(g, og, sa, sb, nb, sgd, sgh, sgw, gi, P, D, H, W,
                         az, oz, tz, wz, ay, oy, ty, wy, ax, ox_, tx, wx, zero):
    """gi[p, d, h, w] = the sum of g * wz * wy * wx over the taps that read (d, h, w). Per dim:
    outputs ``o[a[i] .. a[i+1]]`` read input i, output group k with the tap weights
    ``w[t[k] .. t[k+1]]``; met as the CPU kernel's scatter meets them (outputs in (z, y, x)
    order, then an output's taps in order)."""
    total = P * D * H * W
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    while t < total:
        w = t % W
        h = (t // W) % H
        d = (t // (W * H)) % D
        p = t // (W * H * D)
        base = og + (p // nb) * sa + (p % nb) * sb
        s = zero
        for kz in range(az[d], az[d + 1]):
            rz = base + oz[kz] * sgd
            for ky in range(ay[h], ay[h + 1]):
                ry = rz + oy[ky] * sgh
                for kx in range(ax[w], ax[w + 1]):
                    gv = g[ry + ox_[kx] * sgw]
                    for ta in range(tz[kz], tz[kz + 1]):
                        ga = mul(gv, wz[ta])
                        for tb in range(ty[ky], ty[ky + 1]):
                            gb = mul(ga, wy[tb])
                            for tc in range(tx[kx], tx[kx + 1]):
                                s += mul(gb, wx[tc])
        gi[t] = s
        t += step


# -- grid sampling: ATen's GridSampler formulas, as cpu/resample.py writes them ------------------

@cuda.jit(device=True)
def unnormalize(coord, size, align):
    """(pixel coordinate, its derivative) of a normalised float64 coordinate."""
    if align:
        return mul((coord + 1.0) / 2.0, np.float64(size - 1)), (size - 1) / 2.0
    return (mul(coord + 1.0, np.float64(size)) - 1.0) / 2.0, size / 2.0


@cuda.jit(device=True)
def clip(v, size):
    if v <= 0.0:
        return mul(v, 0.0), 0.0
    hi = np.float64(size - 1)
    if v >= hi:
        return mul(v, 0.0) + hi, 0.0
    return v, 1.0


@cuda.jit(device=True)
def reflect(v, twice_low, twice_high):
    """The CPU kernel's ``_reflect``; its int64 count of flips is even for NaN and past 2**63
    (a float-to-int conversion out of range gives INT64_MIN there)."""
    if twice_low == twice_high:
        return mul(v, 0.0), 0.0
    lo = twice_low / 2.0
    span = (twice_high - twice_low) / 2.0
    v = v - lo
    sign = 1.0
    if v < 0.0:
        sign = -1.0
        v = -v
    extra = _fmod(v, span)
    q = v / span
    even = True
    if q < _INT64_LIMIT:
        even = _fmod(_floor(q), 2.0) == 0.0
    if even:
        return extra + lo, sign
    return span - extra + lo, -sign


@cuda.jit(device=True)
def source_index(coord, size, padding, align):
    """(pixel coordinate, d coordinate / d grid) after the padding (ATen's
    grid_sampler_compute_source_index_set_grad), out-of-int-range values moved to -100."""
    v, dv = unnormalize(coord, size, align)
    if padding == 1:
        v, d2 = clip(v, size)
        dv = mul(dv, d2)
    elif padding == 2:
        if align:
            v, d2 = reflect(v, 0, 2 * (size - 1))
        else:
            v, d2 = reflect(v, -1, 2 * size - 1)
        v, d3 = clip(v, size)
        dv = mul(mul(dv, d2), d3)
    if not (abs(v) <= 2147483646.0):
        v = mul(v, 0.0) - 100.0
    return v, dv


@cuda.jit(device=True)
def tap_index(v, size, padding, align):
    """The index integer-valued tap coordinate ``v`` reads after the padding, or -1 outside."""
    if padding == 1:
        v, d2 = clip(v, size)
    elif padding == 2:
        if align:
            v, d2 = reflect(v, 0, 2 * (size - 1))
        else:
            v, d2 = reflect(v, -1, 2 * size - 1)
        v, d2 = clip(v, size)
    if v >= 0.0 and v < size:
        return int(v)
    return -1


@cuda.jit(device=True)
def cubic_coeffs(t):
    """The weights of taps -1, 0, 1, 2 at fraction t (A = -0.75)."""
    a = -0.75
    x = t + 1.0
    c0 = mul(mul(mul(a, x) - 5 * a, x) + 8 * a, x) - 4 * a
    c1 = mul(mul(mul(a + 2, t) - (a + 3), t), t) + 1.0
    x = 1.0 - t
    c2 = mul(mul(mul(a + 2, x) - (a + 3), x), x) + 1.0
    x = 2.0 - t
    c3 = mul(mul(mul(a, x) - 5 * a, x) + 8 * a, x) - 4 * a
    return c0, c1, c2, c3


@cuda.jit(device=True)
def cubic_coeffs_grad(t):
    a = -0.75
    x = -1.0 - t
    c0 = mul(mul(-3 * a, x) - 10 * a, x) - 8 * a
    x = -t
    c1 = mul(mul(-3 * (a + 2), x) - 2 * (a + 3), x)
    x = 1.0 - t
    c2 = mul(mul(3 * (a + 2), x) - 2 * (a + 3), x)
    x = 2.0 - t
    c3 = mul(mul(3 * a, x) - 10 * a, x) + 8 * a
    return c0, c1, c2, c3


@cuda.jit(device=True)
def cubic_taps(coord, size, padding, align):
    """(tap indices, weights, weights' derivatives, d coordinate / d grid): the padding maps
    the taps, not the point."""
    v, mult = unnormalize(coord, size, align)
    f = _floor(v)
    t = v - f
    idx = (tap_index(f - 1.0, size, padding, align), tap_index(f, size, padding, align),
           tap_index(f + 1.0, size, padding, align), tap_index(f + 2.0, size, padding, align))
    return idx, cubic_coeffs(t), cubic_coeffs_grad(t), mult


@cuda.jit(device=True)
def inside(v, size):
    """Whether float index ``v`` (a floor or a rint; NaN: no) lies in [0, size)."""
    return v >= 0.0 and v < size


def grid2d_kernel(x, ox, sxn, sxc, sxh, sxw, C, H, W, grid, og, sgn, sgh, sgw, sgk,
                  out, N, OH, OW, mode, padding, align):
    """out (N, C, OH, OW) = x sampled at grid (N, OH, OW, 2): bilinear (0), nearest (1),
    bicubic (2); one thread per point, its channels in turn."""
    total = N * OH * OW
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    plane = OH * OW
    while t < total:
        ow = t % OW
        oh = (t // OW) % OH
        n = t // (OW * OH)
        gp = og + n * sgn + oh * sgh + ow * sgw
        gx = np.float64(grid[gp])
        gy = np.float64(grid[gp + sgk])
        xn = ox + n * sxn
        o = n * C * plane + oh * OW + ow
        if mode == 2:
            ix, wx, unused_dx, unused_mx = cubic_taps(gx, W, padding, align)
            iy, wy, unused_dy, unused_my = cubic_taps(gy, H, padding, align)
            for c in range(C):
                xc = xn + c * sxc
                acc = mul(wx[0], 0.0)
                for j in range(4):
                    row = mul(wx[0], 0.0)
                    if iy[j] >= 0:
                        for i in range(4):
                            if ix[i] >= 0:
                                row += mul(wx[i], np.float64(x[xc + iy[j] * sxh + ix[i] * sxw]))
                    acc += mul(wy[j], row)
                out[o + c * plane] = acc
        elif mode == 1:
            fx, unused_dx = source_index(gx, W, padding, align)
            fy, unused_dy = source_index(gy, H, padding, align)
            rx = _rint(fx)
            ry = _rint(fy)
            if inside(rx, W) and inside(ry, H):
                at = xn + int(ry) * sxh + int(rx) * sxw
                for c in range(C):
                    out[o + c * plane] = x[at + c * sxc]
            else:
                for c in range(C):
                    out[o + c * plane] = 0
        else:
            fx, unused_dx = source_index(gx, W, padding, align)
            fy, unused_dy = source_index(gy, H, padding, align)
            x0 = _floor(fx)
            y0 = _floor(fy)
            x1 = x0 + 1.0
            y1 = y0 + 1.0
            nw = mul(x1 - fx, y1 - fy)
            ne = mul(fx - x0, y1 - fy)
            sw = mul(x1 - fx, fy - y0)
            se = mul(fx - x0, fy - y0)
            inx0, inx1 = inside(x0, W), inside(x1, W)
            iny0, iny1 = inside(y0, H), inside(y1, H)
            for c in range(C):
                xc = xn + c * sxc
                acc = mul(nw, 0.0)
                if iny0 and inx0:
                    acc += mul(np.float64(x[xc + int(y0) * sxh + int(x0) * sxw]), nw)
                if iny0 and inx1:
                    acc += mul(np.float64(x[xc + int(y0) * sxh + int(x1) * sxw]), ne)
                if iny1 and inx0:
                    acc += mul(np.float64(x[xc + int(y1) * sxh + int(x0) * sxw]), sw)
                if iny1 and inx1:
                    acc += mul(np.float64(x[xc + int(y1) * sxh + int(x1) * sxw]), se)
                out[o + c * plane] = acc
        t += step


def grid2d_grad_grid_kernel(g, og_, sgn_, sgc_, sgh_, sgw_, x, ox, sxn, sxc, sxh, sxw, C, H, W,
                            grid, og, sgn, sgh, sgw, sgk, ggrid, N, OH, OW, mode, padding, align):
    """ggrid (N, OH, OW, 2) row-major: each point's gradient summed over its channels in the
    CPU kernel's order (bilinear 0, bicubic 2; nearest has none)."""
    total = N * OH * OW
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    while t < total:
        ow = t % OW
        oh = (t // OW) % OH
        n = t // (OW * OH)
        gp = og + n * sgn + oh * sgh + ow * sgw
        gx = np.float64(grid[gp])
        gy = np.float64(grid[gp + sgk])
        xn = ox + n * sxn
        gn = og_ + n * sgn_ + oh * sgh_ + ow * sgw_
        if mode == 2:
            ix, wx, dwx, mx = cubic_taps(gx, W, padding, align)
            iy, wy, dwy, my = cubic_taps(gy, H, padding, align)
            gix = mul(wx[0], 0.0)
            giy = mul(wx[0], 0.0)
            for c in range(C):
                go = g[gn + c * sgc_]
                xc = xn + c * sxc
                for i in range(4):
                    for j in range(4):
                        if ix[i] >= 0 and iy[j] >= 0:
                            v = mul(x[xc + iy[j] * sxh + ix[i] * sxw], go)  # (the operands' dtype)
                            gix -= mul(mul(v, dwx[i]), wy[j])
                            giy -= mul(mul(v, dwy[j]), wx[i])
            ggrid[2 * t] = mul(mx, gix)
            ggrid[2 * t + 1] = mul(my, giy)
        else:
            fx, dx = source_index(gx, W, padding, align)
            fy, dy = source_index(gy, H, padding, align)
            x0 = _floor(fx)
            y0 = _floor(fy)
            x1 = x0 + 1.0
            y1 = y0 + 1.0
            inx0, inx1 = inside(x0, W), inside(x1, W)
            iny0, iny1 = inside(y0, H), inside(y1, H)
            gix = mul(fx, 0.0)
            giy = mul(fx, 0.0)
            for c in range(C):
                gof = np.float64(g[gn + c * sgc_])
                xc = xn + c * sxc
                if iny0 and inx0:
                    v = np.float64(x[xc + int(y0) * sxh + int(x0) * sxw])
                    gix -= mul(mul(v, y1 - fy), gof)
                    giy -= mul(mul(v, x1 - fx), gof)
                if iny0 and inx1:
                    v = np.float64(x[xc + int(y0) * sxh + int(x1) * sxw])
                    gix += mul(mul(v, y1 - fy), gof)
                    giy -= mul(mul(v, fx - x0), gof)
                if iny1 and inx0:
                    v = np.float64(x[xc + int(y1) * sxh + int(x0) * sxw])
                    gix -= mul(mul(v, fy - y0), gof)
                    giy += mul(mul(v, x1 - fx), gof)
                if iny1 and inx1:
                    v = np.float64(x[xc + int(y1) * sxh + int(x1) * sxw])
                    gix += mul(mul(v, fy - y0), gof)
                    giy += mul(mul(v, fx - x0), gof)
            ggrid[2 * t] = mul(dx, gix)
            ggrid[2 * t + 1] = mul(dy, giy)
        t += step


def grid2d_grad_input_kernel(g, og_, sgn_, sgc_, sgh_, sgw_, grid, og, sgn, sgh, sgw, sgk,
                             gi, N, C, H, W, OH, OW, mode, padding, align):
    """Plane (n, c) of zeroed gi (row-major) += g spread over the taps of every point, by one
    thread walking the points in order."""
    total = N * C
    p = cuda.grid(1)
    step = cuda.gridsize(1)
    while p < total:
        n = p // C
        lo = p * H * W
        gb = og_ + n * sgn_ + (p % C) * sgc_
        for oh in range(OH):
            for ow in range(OW):
                gp = og + n * sgn + oh * sgh + ow * sgw
                gx = np.float64(grid[gp])
                gy = np.float64(grid[gp + sgk])
                go = g[gb + oh * sgh_ + ow * sgw_]
                if mode == 2:
                    ix, wx, unused_dx, unused_mx = cubic_taps(gx, W, padding, align)
                    iy, wy, unused_dy, unused_my = cubic_taps(gy, H, padding, align)
                    for i in range(4):
                        for j in range(4):
                            if ix[i] >= 0 and iy[j] >= 0:
                                k = lo + iy[j] * W + ix[i]
                                gi[k] = gi[k] + mul(mul(np.float64(go), wx[i]), wy[j])
                    continue
                fx, unused_dx = source_index(gx, W, padding, align)
                fy, unused_dy = source_index(gy, H, padding, align)
                if mode == 1:
                    rx = _rint(fx)
                    ry = _rint(fy)
                    if inside(rx, W) and inside(ry, H):
                        k = lo + int(ry) * W + int(rx)
                        gi[k] = gi[k] + go
                    continue
                x0 = _floor(fx)
                y0 = _floor(fy)
                x1 = x0 + 1.0
                y1 = y0 + 1.0
                gof = np.float64(go)
                if inside(y0, H) and inside(x0, W):
                    k = lo + int(y0) * W + int(x0)
                    gi[k] = gi[k] + mul(mul(x1 - fx, y1 - fy), gof)
                if inside(y0, H) and inside(x1, W):
                    k = lo + int(y0) * W + int(x1)
                    gi[k] = gi[k] + mul(mul(fx - x0, y1 - fy), gof)
                if inside(y1, H) and inside(x0, W):
                    k = lo + int(y1) * W + int(x0)
                    gi[k] = gi[k] + mul(mul(x1 - fx, fy - y0), gof)
                if inside(y1, H) and inside(x1, W):
                    k = lo + int(y1) * W + int(x1)
                    gi[k] = gi[k] + mul(mul(fx - x0, fy - y0), gof)
        p += step


@cuda.jit(device=True)
def corner_weights(k, wx0, wx1, wy0, wy1, wz0, wz1):
    """(weight, d weight / d x, y, z) of trilinear corner k = (z, y, x) bits, in the CPU
    kernel's order (tnw, tne, tsw, tse, bnw, bne, bsw, bse)."""
    wx = wx1 if k & 1 else wx0
    wy = wy1 if k & 2 else wy0
    wz = wz1 if k & 4 else wz0
    ax = mul(wy, wz)
    ay = mul(wx, wz)
    az = mul(wx, wy)
    return (mul(az, wz), ax if k & 1 else -ax, ay if k & 2 else -ay, az if k & 4 else -az)


def grid3d_kernel(x, ox, sxn, sxc, sxd, sxh, sxw, C, D, H, W, grid, og, sgn, sgd, sgh, sgw, sgk,
                  out, N, OD, OH, OW, mode, padding, align):
    """out (N, C, OD, OH, OW) = x sampled at grid (N, OD, OH, OW, 3): trilinear (0) or nearest
    (1); one thread per point, its channels in turn."""
    total = N * OD * OH * OW
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    plane = OD * OH * OW
    while t < total:
        ow = t % OW
        oh = (t // OW) % OH
        od = (t // (OW * OH)) % OD
        n = t // (OW * OH * OD)
        gp = og + n * sgn + od * sgd + oh * sgh + ow * sgw
        fx, unused_dx = source_index(np.float64(grid[gp]), W, padding, align)
        fy, unused_dy = source_index(np.float64(grid[gp + sgk]), H, padding, align)
        fz, unused_dz = source_index(np.float64(grid[gp + 2 * sgk]), D, padding, align)
        xn = ox + n * sxn
        o = n * C * plane + (od * OH + oh) * OW + ow
        if mode == 1:
            rx = _rint(fx)
            ry = _rint(fy)
            rz = _rint(fz)
            if inside(rx, W) and inside(ry, H) and inside(rz, D):
                at = xn + int(rz) * sxd + int(ry) * sxh + int(rx) * sxw
                for c in range(C):
                    out[o + c * plane] = x[at + c * sxc]
            else:
                for c in range(C):
                    out[o + c * plane] = 0
        else:
            x0 = _floor(fx)
            y0 = _floor(fy)
            z0 = _floor(fz)
            wx0, wx1 = x0 + 1.0 - fx, fx - x0
            wy0, wy1 = y0 + 1.0 - fy, fy - y0
            wz0, wz1 = z0 + 1.0 - fz, fz - z0
            for c in range(C):
                acc = mul(mul(mul(wx0, wy0), wz0), 0.0)
                for k in range(8):
                    cx = x0 + (k & 1)
                    cy = y0 + ((k >> 1) & 1)
                    cz = z0 + (k >> 2)
                    if inside(cx, W) and inside(cy, H) and inside(cz, D):
                        wgt, unused_ax, unused_ay, unused_az = corner_weights(
                            k, wx0, wx1, wy0, wy1, wz0, wz1)
                        v = x[xn + c * sxc + int(cz) * sxd + int(cy) * sxh + int(cx) * sxw]
                        acc += mul(np.float64(v), wgt)
                out[o + c * plane] = acc
        t += step


def grid3d_grad_grid_kernel(g, og_, sgn_, sgc_, sgd_, sgh_, sgw_, x, ox, sxn, sxc, sxd, sxh, sxw,
                            C, D, H, W, grid, og, sgn, sgd, sgh, sgw, sgk, ggrid, N, OD, OH, OW,
                            padding, align):
    """ggrid (N, OD, OH, OW, 3) row-major of trilinear sampling: per point, the corners in
    order, each over the channels (the CPU kernel's order)."""
    total = N * OD * OH * OW
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    while t < total:
        ow = t % OW
        oh = (t // OW) % OH
        od = (t // (OW * OH)) % OD
        n = t // (OW * OH * OD)
        gp = og + n * sgn + od * sgd + oh * sgh + ow * sgw
        fx, mx = source_index(np.float64(grid[gp]), W, padding, align)
        fy, my = source_index(np.float64(grid[gp + sgk]), H, padding, align)
        fz, mz = source_index(np.float64(grid[gp + 2 * sgk]), D, padding, align)
        xn = ox + n * sxn
        gn = og_ + n * sgn_ + od * sgd_ + oh * sgh_ + ow * sgw_
        x0 = _floor(fx)
        y0 = _floor(fy)
        z0 = _floor(fz)
        wx0, wx1 = x0 + 1.0 - fx, fx - x0
        wy0, wy1 = y0 + 1.0 - fy, fy - y0
        wz0, wz1 = z0 + 1.0 - fz, fz - z0
        sx = 0.0
        sy = 0.0
        sz = 0.0
        for k in range(8):
            cx = x0 + (k & 1)
            cy = y0 + ((k >> 1) & 1)
            cz = z0 + (k >> 2)
            if not (inside(cx, W) and inside(cy, H) and inside(cz, D)):
                continue
            unused_wgt, ax, ay, az = corner_weights(k, wx0, wx1, wy0, wy1, wz0, wz1)
            at = xn + int(cz) * sxd + int(cy) * sxh + int(cx) * sxw
            for c in range(C):
                v = mul(x[at + c * sxc], g[gn + c * sgc_])  # (the operands' dtype)
                sx += mul(v, ax)
                sy += mul(v, ay)
                sz += mul(v, az)
        ggrid[3 * t] = mul(mx, sx)
        ggrid[3 * t + 1] = mul(my, sy)
        ggrid[3 * t + 2] = mul(mz, sz)
        t += step


def grid3d_grad_input_kernel(g, og_, sgn_, sgc_, sgd_, sgh_, sgw_, grid, og, sgn, sgd, sgh, sgw,
                             sgk, gi, N, C, D, H, W, OD, OH, OW, mode, padding, align):
    """Plane (n, c) of zeroed gi (row-major) += g spread over the corners of every point, by
    one thread walking the points in order."""
    total = N * C
    p = cuda.grid(1)
    step = cuda.gridsize(1)
    while p < total:
        n = p // C
        lo = p * D * H * W
        gb = og_ + n * sgn_ + (p % C) * sgc_
        for od in range(OD):
            for oh in range(OH):
                for ow in range(OW):
                    gp = og + n * sgn + od * sgd + oh * sgh + ow * sgw
                    fx, unused_dx = source_index(np.float64(grid[gp]), W, padding, align)
                    fy, unused_dy = source_index(np.float64(grid[gp + sgk]), H, padding, align)
                    fz, unused_dz = source_index(np.float64(grid[gp + 2 * sgk]), D, padding,
                                                 align)
                    go = g[gb + od * sgd_ + oh * sgh_ + ow * sgw_]
                    if mode == 1:
                        rx = _rint(fx)
                        ry = _rint(fy)
                        rz = _rint(fz)
                        if inside(rx, W) and inside(ry, H) and inside(rz, D):
                            k = lo + (int(rz) * H + int(ry)) * W + int(rx)
                            gi[k] = gi[k] + go
                        continue
                    x0 = _floor(fx)
                    y0 = _floor(fy)
                    z0 = _floor(fz)
                    wx0, wx1 = x0 + 1.0 - fx, fx - x0
                    wy0, wy1 = y0 + 1.0 - fy, fy - y0
                    wz0, wz1 = z0 + 1.0 - fz, fz - z0
                    gof = np.float64(go)
                    for k in range(8):
                        cx = x0 + (k & 1)
                        cy = y0 + ((k >> 1) & 1)
                        cz = z0 + (k >> 2)
                        if inside(cx, W) and inside(cy, H) and inside(cz, D):
                            wgt, unused_ax, unused_ay, unused_az = corner_weights(
                                k, wx0, wx1, wy0, wy1, wz0, wz1)
                            at = lo + (int(cz) * H + int(cy)) * W + int(cx)
                            gi[at] = gi[at] + mul(wgt, gof)
        p += step


def affine_base_kernel(cx, cy, cz, out, D, H, W, K):
    """out (1, D*H*W, K + 1) row-major: rows (x, y[, z], 1) of the coordinate tables, x
    fastest."""
    total = D * H * W * (K + 1)
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    while t < total:
        col = t % (K + 1)
        pos = t // (K + 1)
        if col == 0:
            out[t] = cx[pos % W]
        elif col == 1:
            out[t] = cy[(pos // W) % H]
        elif col == K:
            out[t] = 1
        else:
            out[t] = cz[pos // (W * H)]
        t += step


KERNELS = {"gather": gather_kernel, "gather_backward": gather_backward_kernel,
           "taps": taps_kernel, "taps_backward": taps_backward_kernel,
           "grid2d": grid2d_kernel, "grid2d_grad_grid": grid2d_grad_grid_kernel,
           "grid2d_grad_input": grid2d_grad_input_kernel, "grid3d": grid3d_kernel,
           "grid3d_grad_grid": grid3d_grad_grid_kernel,
           "grid3d_grad_input": grid3d_grad_input_kernel, "affine_base": affine_base_kernel}
_kernels: dict = {}


def kernel(name: str):
    k = _kernels.get(name)
    if k is None:
        k = _kernels[name] = target.jit(KERNELS[name])
    return k


def signatures(dtype: str) -> dict:
    """Numba signatures of this module's kernels for ``compile_ptx`` (spans are 1-D arrays):
    ``dtype`` is the operands' (the gather's: unsigned bits of a width; float16: the taps
    and affine_grid's)."""
    span, i, tab = f"{dtype}[::1]", "int64", "int64[::1]"
    ints = lambda k: ", ".join([i] * k)
    if dtype.startswith("uint"):
        return {"gather": f"void({span}, {ints(7)}, {span}, {ints(4)}, {tab}, {tab}, {tab})"}
    comp = "float32" if dtype == "float16" else dtype
    tab2, w2, wt = "int64[:, ::1]", f"{comp}[:, ::1]", f"{comp}[::1]"
    sigs = {
        "gather_backward": f"void({span}, {ints(7)}, {span}, {ints(4)}, "
                           f"{', '.join([tab] * 6)}, {comp})",
        "taps": f"void({span}, {ints(7)}, {span}, {ints(4)}, "
                f"{', '.join([f'{tab2}, {w2}, {tab}'] * 3)}, {comp})",
        "taps_backward": f"void({span}, {ints(7)}, {span}, {ints(4)}, "
                         f"{', '.join([f'{tab}, {tab}, {tab}, {wt}'] * 3)}, {comp})",
        "affine_base": f"void({span}, {span}, {span}, {span}, {ints(4)})",
    }
    if dtype == "float16":
        return sigs
    b = "boolean"
    sigs.update({
        "grid2d": f"void({span}, {ints(8)}, {span}, {ints(5)}, {span}, {ints(5)}, {b})",
        "grid2d_grad_grid": f"void({span}, {ints(5)}, {span}, {ints(8)}, {span}, {ints(5)}, "
                            f"{span}, {ints(5)}, {b})",
        "grid2d_grad_input": f"void({span}, {ints(5)}, {span}, {ints(5)}, {span}, {ints(8)}, "
                             f"{b})",
        "grid3d": f"void({span}, {ints(10)}, {span}, {ints(6)}, {span}, {ints(6)}, {b})",
        "grid3d_grad_grid": f"void({span}, {ints(6)}, {span}, {ints(10)}, {span}, {ints(6)}, "
                            f"{span}, {ints(5)}, {b})",
        "grid3d_grad_input": f"void({span}, {ints(6)}, {span}, {ints(6)}, {span}, {ints(10)}, "
                             f"{b})",
    })
    return sigs


# -- host tables -------------------------------------------------------------------------------

def _some(a: np.ndarray) -> np.ndarray:
    """``a`` as a contiguous device-ready table (an empty one gets one unread element)."""
    return np.ascontiguousarray(a) if a.size else np.zeros(1, a.dtype)


def _gather_tables(rp) -> tuple:
    return tuple(_some(t.astype(np.int64)) for t in rp.tables)


def _gather_inverse(rp, in_sp: tuple) -> tuple:
    """Per dim: (starts, outputs): input i is read by outputs[starts[i] .. starts[i+1]],
    ascending."""
    res = []
    for idx, n in zip(rp.tables, in_sp):
        idx = idx.astype(np.int64)
        order = np.argsort(idx, kind="stable")
        res += [np.searchsorted(idx[order], np.arange(n + 1), "left").astype(np.int64),
                _some(order.astype(np.int64))]
    return tuple(res)


def _taps_tables(rp) -> tuple:
    return tuple(_some(a) for i, w, c in rp.tables
                 for a in (i.astype(np.int64), np.ascontiguousarray(w, rp.compute),
                           c.astype(np.int64)))


def _taps_inverse(rp, in_sp: tuple) -> tuple:
    """Per dim: (starts, outputs, tap starts, tap weights): input i is read by the outputs
    ``outputs[starts[i] .. starts[i+1]]`` (ascending), output entry k through the taps
    weighted ``weights[tap starts[k] .. tap starts[k+1]]`` (in tap order)."""
    res = []
    for (idx, w, cnt), n in zip(rp.tables, in_sp):
        o, a = np.nonzero(np.arange(idx.shape[1]) < cnt[:, None])  # (o, a) ascending
        src = idx[o, a].astype(np.int64)
        order = np.argsort(src, kind="stable")
        src, o, wt = src[order], o[order], w[o[order], a[order]]
        first = np.ones(src.size, bool)
        first[1:] = (src[1:] != src[:-1]) | (o[1:] != o[:-1])
        heads = np.flatnonzero(first)
        res += [np.searchsorted(src[heads], np.arange(n + 1), "left").astype(np.int64),
                _some(o[heads].astype(np.int64)),
                np.append(heads, src.size).astype(np.int64),
                _some(np.ascontiguousarray(wt, rp.compute))]
    return tuple(res)


_tables: dict = {}


def tables(rp, what, dev, build) -> tuple:
    """Device copies of the tables ``build()`` derives from plan ``rp``'s, made once per
    geometry and device: plans are made per call, so they are keyed by their tables' bytes."""
    key = (_digest(rp), what, dev)
    e = _tables.get(key)
    if e is None:
        if len(_tables) > 1024:
            _tables.clear()
        e = _tables[key] = tuple(target.to_device(np.ascontiguousarray(a)) for a in build())
    return e


def _digest(rp) -> bytes:
    h = hashlib.blake2b(repr((rp.kind, rp.compute.str, rp.in_shape[len(rp.in_shape) - rp.nsp:]))
                        .encode(), digest_size=16)
    for t in rp.tables:
        for a in t if isinstance(t, tuple) else (t,):
            h.update(repr((a.shape, a.dtype.str)).encode())
            h.update(np.ascontiguousarray(a).data)
    return h.digest()


def _bits(buf):
    return buf.view(_BITS[buf.dtype.itemsize])


def _sum_zero(d):
    """The sums' zero: float32 for float16 (as the CPU path computes it)."""
    return np.float32(0) if d.name == "float16" else d.np.type(0)


# -- kernel entries ----------------------------------------------------------------------------

def gather_cuda(plan, x):
    if x._a.dtype.itemsize not in _BITS:
        return _HOST["resample_gather"](plan, x)
    rp = plan.kw["plan"]
    res = _cv.fresh(tuple(plan.out.shape), plan.out.dtype, plan.device)
    total = res._a.size
    if not total:
        return res
    x, (xb, xo, sa, sb, nb), sx = _pl.planes(x, rp.nsp)
    od, oh, ow = _pl.spatial(rp.out_shape, rp.nsp)
    iz, iy, ix = tables(rp, "gather", plan.device, lambda: _gather_tables(rp))
    kernel("gather")[_cv.launch_shape(total)](
        _bits(xb), xo, sa, sb, nb, *sx, _bits(res._a.buf), total // (od * oh * ow), od, oh, ow,
        iz, iy, ix)
    return res


def gather_backward_cuda(plan, g):
    d = plan.out.dtype
    if d.name not in _FLOAT or g.dtype is not d:
        return _HOST["resample_gather_backward"](plan, g)
    rp = plan.kw["plan"]
    gi = _cv.fresh(tuple(rp.in_shape), d, plan.device)
    total = gi._a.size
    if not total:
        return gi
    in_sp = _pl.spatial(rp.in_shape, rp.nsp)
    g, (gb, go, sa, sb, nb), sg = _pl.planes(g, rp.nsp)
    inv = tables(rp, "gather_inverse", plan.device, lambda: _gather_inverse(rp, in_sp))
    kernel("gather_backward")[_cv.launch_shape(total)](
        gb, go, sa, sb, nb, *sg, gi._a.buf, total // math.prod(in_sp), *in_sp, *inv,
        _sum_zero(d))
    return gi


def taps_cuda(plan, x):
    d = x.dtype
    if d.name not in _FLOAT:
        return _HOST["resample_taps"](plan, x)
    rp = plan.kw["plan"]
    res = _cv.fresh(tuple(plan.out.shape), d, plan.device)
    total = res._a.size
    if not total:
        return res
    x, (xb, xo, sa, sb, nb), sx = _pl.planes(x, rp.nsp)
    od, oh, ow = _pl.spatial(rp.out_shape, rp.nsp)
    tabs = tables(rp, "taps", plan.device, lambda: _taps_tables(rp))
    kernel("taps")[_cv.launch_shape(total)](
        xb, xo, sa, sb, nb, *sx, res._a.buf, total // (od * oh * ow), od, oh, ow, *tabs,
        _sum_zero(d))
    return res


def taps_backward_cuda(plan, g):
    d = plan.out.dtype
    if d.name not in _FLOAT or g.dtype is not d:
        return _HOST["resample_taps_backward"](plan, g)
    rp = plan.kw["plan"]
    gi = _cv.fresh(tuple(rp.in_shape), d, plan.device)
    total = gi._a.size
    if not total:
        return gi
    in_sp = _pl.spatial(rp.in_shape, rp.nsp)
    g, (gb, go, sa, sb, nb), sg = _pl.planes(g, rp.nsp)
    inv = tables(rp, "taps_inverse", plan.device, lambda: _taps_inverse(rp, in_sp))
    kernel("taps_backward")[_cv.launch_shape(total)](
        gb, go, sa, sb, nb, *sg, gi._a.buf, total // math.prod(in_sp), *in_sp, *inv,
        _sum_zero(d))
    return gi


def _operand(t):
    """A grid sampler operand as its kernels read it: float16 widened to a float32 copy (the
    CPU entry computes in float32)."""
    if t.dtype.name != "float16":
        return t
    w = _cv.fresh(tuple(t._a.shape), _dt.float32, t._a.dev)
    eager._copy_values(w, t)
    return w


def _result(shape: tuple, d, dev):
    """(the result, where the kernel writes it: a float32 twin for float16)."""
    res = _cv.fresh(shape, d, dev)
    return res, (res if d.name != "float16" else _cv.fresh(shape, _dt.float32, dev))


def _narrow(res, work) -> None:
    if work is not res and res._a.size:
        eager._copy_values(res, work)


def _span(t) -> tuple:
    a = t._a
    return (a.buf, a.offset, *a.element_strides())


def grid_sampler_cuda(plan, x, grid):
    d = plan.out.dtype
    name = "grid_sampler_2d" if x._a.ndim == 4 else "grid_sampler_3d"
    if d.name not in _FLOAT or x.dtype is not d or grid.dtype is not d:
        return _HOST[name](plan, x, grid)
    shape = tuple(plan.out.shape)
    res, out = _result(shape, d, plan.device)
    if not res._a.size:
        return res
    x, grid = _operand(x), _operand(grid)
    kw = plan.kw
    n, c, *sp = x._a.shape
    osp = shape[2:]
    kernel("grid2d" if len(sp) == 2 else "grid3d")[_cv.launch_shape(n * math.prod(osp))](
        *_span(x), c, *sp, *_span(grid), out._a.buf, n, *osp, kw["mode"], kw["padding"],
        kw["align"])
    _narrow(res, out)
    return res


def grid_sampler_backward_cuda(plan, g, x, grid):
    d = x.dtype
    nd = x._a.ndim - 2
    name = f"grid_sampler_{nd}d_backward"
    if d.name not in _FLOAT or g.dtype is not d or grid.dtype is not d:
        return _HOST[name](plan, g, x, grid)
    kw = plan.kw
    mode, padding, align = kw["mode"], kw["padding"], kw["align"]
    gx, gx_w = _result(tuple(x._a.shape), d, plan.device)
    ggrid, ggrid_w = _result(tuple(grid._a.shape), d, plan.device)
    sums = bool(g._a.size)
    if gx_w._a.size:  # (the plane walks add into it; zeros when not asked for, as on CPU)
        _pl.zero(gx_w, plan.device)
    if ggrid_w._a.size and not (sums and mode != 1):  # (nearest sampling has no grid gradient)
        _pl.zero(ggrid_w, plan.device)
    n, c, *sp = x._a.shape
    osp = tuple(g._a.shape[2:])
    if sums:
        g, x, grid = _operand(g), _operand(x), _operand(grid)
        if mode != 1:
            tail = (mode, padding, align) if nd == 2 else (padding, align)
            kernel(f"grid{nd}d_grad_grid")[_cv.launch_shape(n * math.prod(osp))](
                *_span(g), *_span(x), c, *sp, *_span(grid), ggrid_w._a.buf, n, *osp, *tail)
        if kw["need_x"]:
            kernel(f"grid{nd}d_grad_input")[_cv.launch_shape(n * c)](
                *_span(g), *_span(grid), gx_w._a.buf, n, c, *sp, *osp, mode, padding, align)
    _narrow(gx, gx_w)
    _narrow(ggrid, ggrid_w)
    return gx, ggrid


_coords: dict = {}


def affine_grid_base_cuda(plan):
    """The CPU entry's coordinate tables (per dim, its ``_base_coords``) uploaded once per
    geometry and dtype, then laid out as rows (x, y[, z], 1)."""
    d = plan.out.dtype
    if d.name not in _FLOAT:
        return _HOST["affine_grid_base"](plan)
    res = _cv.fresh(tuple(plan.out.shape), d, plan.device)
    if not res._a.size:
        return res
    kw = plan.kw
    spatial = tuple(kw["spatial"])
    key = (spatial, kw["align"], d.name, plan.device)
    tabs = _coords.get(key)
    if tabs is None:
        from ..cpu.resample_entries import _base_coords

        axes = [_base_coords(s, kw["align"], d.np.type) for s in reversed(spatial)]  # x, y[, z]
        axes += [np.zeros(1, d.np)] * (3 - len(axes))
        if len(_coords) > 256:
            _coords.clear()
        tabs = _coords[key] = tuple(target.to_device(_some(a)) for a in axes)
    dd, hh, ww = _cv.pad3(spatial, 1)
    kernel("affine_base")[_cv.launch_shape(res._a.size)](
        *tabs, res._a.buf, dd, hh, ww, len(spatial))
    return res


_ENTRIES = {"resample_gather": gather_cuda, "resample_gather_backward": gather_backward_cuda,
            "resample_taps": taps_cuda, "resample_taps_backward": taps_backward_cuda,
            "grid_sampler_2d": grid_sampler_cuda, "grid_sampler_3d": grid_sampler_cuda,
            "grid_sampler_2d_backward": grid_sampler_backward_cuda,
            "grid_sampler_3d_backward": grid_sampler_backward_cuda,
            "affine_grid_base": affine_grid_base_cuda}
_HOST = {name: eager.host_kernel(registry.REGISTRY[name]) for name in _ENTRIES}
for _name, _entry in _ENTRIES.items():
    registry.REGISTRY[_name].kernels["cuda"] = _entry
