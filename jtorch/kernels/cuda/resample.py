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
- grid sampling: one thread per grid point (all channels), the CPU kernel's coordinates
  (float64, or the grid's dtype where it is huge or non-finite) and float64 weights; the grid gradient likewise per point; the input gradient (the
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
_trunc = _sc.TWINS[np.trunc]


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


# -- grid sampling: cpu/resample.py's formulas (ATen's vectorised 2-d kernel, scalar 3-d one) ----
# Everything runs in the grid's dtype ``t`` (``grid.dtype.type``: every constant is ``t(...)``),
# every product through ``mul``.

_SENTINEL = -(2 ** 62)


@cuda.jit(device=True)
def cvt(v):
    """Truncation toward zero; NaN and magnitudes past 2**62 give a negative sentinel."""
    if v > -4.611686018427388e18 and v < 4.611686018427388e18:
        return int(v)
    return _SENTINEL


@cuda.jit(device=True)
def vunnormalize(coord, size, align, t):
    if align:
        scale = t(size - 1) / t(2)
        return mul(coord + t(1), scale), scale
    scale = t(size) / t(2)
    return mul(coord + t(1), scale) - t(0.5), scale


@cuda.jit(device=True)
def vclip(v, size, t):
    """clip_coordinates of the vectorised kernel: NaN gives 0."""
    hi = t(size - 1)
    c = v if v > t(0) else t(0)
    return c if c < hi else hi


@cuda.jit(device=True)
def vclip_grad(v, size, t):
    if v != v:
        return v, True
    hi = t(size - 1)
    c = v if v > t(0) else t(0)
    r = c if c < hi else hi
    return r, c != t(0) and r != hi


@cuda.jit(device=True)
def vreflect_params(size, align, t):
    if align:
        return t(0), mul(t(size - 1), t(2)), size <= 1
    return t(-0.5), mul(t(size), t(2)), False


@cuda.jit(device=True)
def sub_product(a, d, s, t):
    """a - d * s rounded once (the CPU kernel's ``_sub_product``)."""
    if t(0.1) != 0.1:  # float32
        return t(np.float64(a) - mul(np.float64(d), np.float64(s)))
    p = mul(d, s)
    c = mul(134217729.0, d)
    dh = c - (c - d)
    dl = d - dh
    c = mul(134217729.0, s)
    sh = c - (c - s)
    sl = s - sh
    e = ((mul(dh, sh) - p) + mul(dh, sl) + mul(dl, sh)) + mul(dl, sl)
    return (a - p) - e


@cuda.jit(device=True)
def vreflect(v, size, align, t):
    low, tspan, empty = vreflect_params(size, align, t)
    if empty:
        return t(0)
    a = abs(v - low)
    extra = sub_product(a, _trunc(a / tspan), tspan, t)
    r = tspan - extra
    if extra != extra or r != r:
        return t(np.nan)
    return (extra if extra < r else r) + low


@cuda.jit(device=True)
def vreflect_grad(v, size, align, t):
    low, tspan, empty = vreflect_params(size, align, t)
    if empty:
        return t(0), t(0)
    d = v - low
    neg = d < t(0)
    a = abs(d)
    extra = sub_product(a, _trunc(a / tspan), tspan, t)
    r = tspan - extra
    more = extra > r
    return (r if more else extra) + low, (t(-1) if more != neg else t(1))


@cuda.jit(device=True)
def vlocation_t(coord, size, padding, align, t):
    v, unused_scale = vunnormalize(coord, size, align, t)
    if padding == 1:
        return vclip(v, size, t)
    if padding == 2:
        return vclip(vreflect(v, size, align, t), size, t)
    return v


@cuda.jit(device=True)
def vlocation_grad_t(coord, size, padding, align, t):
    v, scale = vunnormalize(coord, size, align, t)
    if padding == 1:
        v, inb = vclip_grad(v, size, t)
        return v, (scale if inb else t(0))
    if padding == 2:
        v, grefl = vreflect_grad(v, size, align, t)
        g = mul(grefl, scale)
        v, inb = vclip_grad(v, size, t)
        return v, (g if inb else t(0))
    return v, scale


@cuda.jit(device=True)
def vindex(v, size):
    i = cvt(v)
    if i >= 0 and i < size:
        return i
    return -1


@cuda.jit(device=True)
def vtap(v, size, padding, align, t):
    if padding == 1:
        v = vclip(v, size, t)
    elif padding == 2:
        v = vclip(vreflect(v, size, align, t), size, t)
    return vindex(v, size)


@cuda.jit(device=True)
def at(x, base, y, xi, sh, sw, t):
    """x[base + y * sh + xi * sw] as a ``t``, or 0 where either index is -1."""
    if y < 0 or xi < 0:
        return t(0)
    return t(x[base + y * sh + xi * sw])


@cuda.jit(device=True)
def cubic_coeffs(x0, t):
    a = t(-0.75)
    x = x0 + t(1)
    c0 = mul(mul(mul(a, x) - mul(t(5), a), x) + mul(t(8), a), x) - mul(t(4), a)
    c1 = mul(mul(mul(a + t(2), x0) - (a + t(3)), x0), x0) + t(1)
    x = t(1) - x0
    c2 = mul(mul(mul(a + t(2), x) - (a + t(3)), x), x) + t(1)
    x = t(2) - x0
    c3 = mul(mul(mul(a, x) - mul(t(5), a), x) + mul(t(8), a), x) - mul(t(4), a)
    return c0, c1, c2, c3


@cuda.jit(device=True)
def cubic_coeffs_grad(x0, t):
    a = t(-0.75)
    x = t(-1) - x0
    c0 = mul(mul(mul(t(-3), a), x) - mul(t(10), a), x) - mul(t(8), a)
    x = t(0) - x0
    c1 = mul(mul(mul(t(-3), a + t(2)), x) - mul(t(2), a + t(3)), x)
    x = t(1) - x0
    c2 = mul(mul(mul(t(3), a + t(2)), x) - mul(t(2), a + t(3)), x)
    x = t(2) - x0
    c3 = mul(mul(mul(t(3), a), x) - mul(t(10), a), x) + mul(t(8), a)
    return c0, c1, c2, c3


@cuda.jit(device=True)
def cubic_taps_t(coord, size, padding, align, t):
    v, scale = vunnormalize(coord, size, align, t)
    f = _floor(v)
    x0 = v - f
    idx = (vtap(f - t(1), size, padding, align, t), vtap(f + t(0), size, padding, align, t),
           vtap(f + t(1), size, padding, align, t), vtap(f + t(2), size, padding, align, t))
    return idx, cubic_coeffs(x0, t), cubic_coeffs_grad(x0, t), scale


@cuda.jit(device=True)
def bilinear_params(x, y, w, h, t):
    """compute_interp_params: (n, s, w, e distances, nw, ne, sw, se weights, west / east
    column, north / south row; -1 outside)."""
    xw = _floor(x)
    yn = _floor(y)
    dw = x - xw
    de = t(1) - dw
    dn = y - yn
    ds = t(1) - dn
    iw = cvt(xw)
    jn = cvt(yn)
    ie = iw + 1 if iw + 1 >= 0 and iw + 1 < w else -1
    js = jn + 1 if jn + 1 >= 0 and jn + 1 < h else -1
    iw = iw if iw >= 0 and iw < w else -1
    jn = jn if jn >= 0 and jn < h else -1
    return (dn, ds, dw, de, mul(ds, de), mul(ds, dw), mul(dn, de), mul(dn, dw), iw, ie, jn,
            js)


def grid2d_kernel(x, ox, sxn, sxc, sxh, sxw, C, H, W, grid, og, sgn, sgh, sgw, sgk,
                  out, N, OH, OW, mode, padding, align):
    """out (N, C, OH, OW) = x sampled at grid (N, OH, OW, 2): bilinear (0), nearest (1),
    bicubic (2); one thread per point, its channels in turn."""
    t = grid.dtype.type
    f = np.float64
    total = N * OH * OW
    tid = cuda.grid(1)
    step = cuda.gridsize(1)
    plane = OH * OW
    while tid < total:
        ow = tid % OW
        oh = (tid // OW) % OH
        n = tid // (OW * OH)
        gp = og + n * sgn + oh * sgh + ow * sgw
        gx = grid[gp]
        gy = grid[gp + sgk]
        xn = ox + n * sxn
        o = n * C * plane + oh * OW + ow
        if mode == 2:
            ix, cx, unused_dx, unused_mx = cubic_taps(gx, W, padding, align, t)
            iy, cy, unused_dy, unused_my = cubic_taps(gy, H, padding, align, t)
            for c in range(C):
                xc = xn + c * sxc
                acc = f(0)
                for j in range(4):
                    r = (mul(cx[0], at(x, xc, iy[j], ix[0], sxh, sxw, f))
                         + mul(cx[1], at(x, xc, iy[j], ix[1], sxh, sxw, f))
                         + mul(cx[2], at(x, xc, iy[j], ix[2], sxh, sxw, f))
                         + mul(cx[3], at(x, xc, iy[j], ix[3], sxh, sxw, f)))
                    acc = mul(cy[0], r) if j == 0 else acc + mul(cy[j], r)
                out[o + c * plane] = acc
        elif mode == 1:
            ix0 = vindex(_rint(vlocation_t(gx, W, padding, align, t)), W)
            iy0 = vindex(_rint(vlocation_t(gy, H, padding, align, t)), H)
            for c in range(C):
                out[o + c * plane] = at(x, xn + c * sxc, iy0, ix0, sxh, sxw, f)
        else:
            fx = vlocation(gx, W, padding, align, t)
            fy = vlocation(gy, H, padding, align, t)
            (unused_dn, unused_ds, unused_dw, unused_de, nw, ne, sw, se, iw, ie, jn,
             js) = bilinear_params(fx, fy, W, H, f)
            for c in range(C):
                xc = xn + c * sxc
                out[o + c * plane] = (mul(at(x, xc, jn, iw, sxh, sxw, f), nw)
                                      + mul(at(x, xc, jn, ie, sxh, sxw, f), ne)
                                      + mul(at(x, xc, js, iw, sxh, sxw, f), sw)
                                      + mul(at(x, xc, js, ie, sxh, sxw, f), se))
        tid += step


def grid2d_grad_grid_kernel(g, og_, sgn_, sgc_, sgh_, sgw_, x, ox, sxn, sxc, sxh, sxw, C, H, W,
                            grid, og, sgn, sgh, sgw, sgk, ggrid, N, OH, OW, mode, padding, align):
    """ggrid (N, OH, OW, 2) row-major: each point's gradient summed over its channels in the
    CPU kernel's order (bilinear 0, bicubic 2; nearest has none)."""
    t = grid.dtype.type
    f = np.float64
    total = N * OH * OW
    tid = cuda.grid(1)
    step = cuda.gridsize(1)
    while tid < total:
        ow = tid % OW
        oh = (tid // OW) % OH
        n = tid // (OW * OH)
        gp = og + n * sgn + oh * sgh + ow * sgw
        gx = grid[gp]
        gy = grid[gp + sgk]
        xn = ox + n * sxn
        gn = og_ + n * sgn_ + oh * sgh_ + ow * sgw_
        gix = f(0)
        giy = f(0)
        if mode == 2:
            ix, cx, dcx, mx = cubic_taps(gx, W, padding, align, t)
            iy, cy, dcy, my = cubic_taps(gy, H, padding, align, t)
            for c in range(C):
                go = g[gn + c * sgc_]
                xc = xn + c * sxc
                for i in range(4):
                    for j in range(4):
                        v = mul(at(x, xc, iy[j], ix[i], sxh, sxw, f), go)
                        gix = gix - mul(mul(v, dcx[i]), cy[j])
                        giy = giy - mul(mul(v, dcy[j]), cx[i])
        else:
            fx, mx = vlocation_grad(gx, W, padding, align, t)
            fy, my = vlocation_grad(gy, H, padding, align, t)
            (dn, ds, dw, de, unused_nw, unused_ne, unused_sw, unused_se, iw, ie, jn,
             js) = bilinear_params(fx, fy, W, H, f)
            for c in range(C):
                go = g[gn + c * sgc_]
                xc = xn + c * sxc
                vnw = at(x, xc, jn, iw, sxh, sxw, f)
                vne = at(x, xc, jn, ie, sxh, sxw, f)
                vsw = at(x, xc, js, iw, sxh, sxw, f)
                vse = at(x, xc, js, ie, sxh, sxw, f)
                gix = gix + mul(mul(vne - vnw, ds) + mul(vse - vsw, dn), go)
                giy = giy + mul(mul(vsw - vnw, de) + mul(vse - vne, dw), go)
        ggrid[2 * tid] = mul(gix, mx)
        ggrid[2 * tid + 1] = mul(giy, my)
        tid += step


def grid2d_grad_input_kernel(g, og_, sgn_, sgc_, sgh_, sgw_, grid, og, sgn, sgh, sgw, sgk,
                             gi, N, C, H, W, OH, OW, mode, padding, align):
    """Plane (n, c) of zeroed gi (row-major) += g spread over the taps of every point, by one
    thread walking the points in order."""
    t = grid.dtype.type
    f = np.float64
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
                gx = grid[gp]
                gy = grid[gp + sgk]
                go = g[gb + oh * sgh_ + ow * sgw_]
                if mode == 2:
                    ix, cx, unused_dx, unused_mx = cubic_taps(gx, W, padding, align, t)
                    iy, cy, unused_dy, unused_my = cubic_taps(gy, H, padding, align, t)
                    for i in range(4):
                        for j in range(4):
                            if ix[i] >= 0 and iy[j] >= 0:
                                k = lo + iy[j] * W + ix[i]
                                gi[k] = gi[k] + mul(mul(go, cx[i]), cy[j])
                    continue
                if mode == 1:
                    ix0 = vindex(_rint(vlocation_t(gx, W, padding, align, t)), W)
                    iy0 = vindex(_rint(vlocation_t(gy, H, padding, align, t)), H)
                    if ix0 >= 0 and iy0 >= 0:
                        k = lo + iy0 * W + ix0
                        gi[k] = gi[k] + go
                    continue
                fx, unused_mx = vlocation_grad(gx, W, padding, align, t)
                fy, unused_my = vlocation_grad(gy, H, padding, align, t)
                (unused_dn, unused_ds, unused_dw, unused_de, nw, ne, sw, se, iw, ie, jn,
                 js) = bilinear_params(fx, fy, W, H, f)
                if jn >= 0 and iw >= 0:
                    k = lo + jn * W + iw
                    gi[k] = gi[k] + mul(nw, go)
                if jn >= 0 and ie >= 0:
                    k = lo + jn * W + ie
                    gi[k] = gi[k] + mul(ne, go)
                if js >= 0 and iw >= 0:
                    k = lo + js * W + iw
                    gi[k] = gi[k] + mul(sw, go)
                if js >= 0 and ie >= 0:
                    k = lo + js * W + ie
                    gi[k] = gi[k] + mul(se, go)
        p += step


# 3-d: ATen's scalar GridSampler.h formulas

@cuda.jit(device=True)
def sunnormalize(coord, size, align, t):
    if align:
        return mul((coord + t(1)) / t(2), t(size - 1)), t(size - 1) / t(2)
    return (mul(coord + t(1), t(size)) - t(1)) / t(2), t(size) / t(2)


@cuda.jit(device=True)
def sclip(v, size, t):
    """std::min(size - 1, std::max(in, 0)): NaN gives size - 1."""
    hi = t(size - 1)
    m = t(0) if v < t(0) else v
    return m if m < hi else hi


@cuda.jit(device=True)
def sclip_grad(v, size, t):
    if v <= t(0):
        return t(0), t(0)
    hi = t(size - 1)
    if v >= hi:
        return hi, t(0)
    return v, t(1)


@cuda.jit(device=True)
def flips_odd(q):
    """``static_cast<int>(q) % 2 != 0``; past the int range x86 gives INT_MIN (even)."""
    if q >= -2147483648.0 and q < 2147483648.0:
        return int(q) % 2 != 0
    return False


@cuda.jit(device=True)
def sreflect_grad(v, twice_low, twice_high, t):
    if twice_low == twice_high:
        return t(0), t(0)
    lo = t(twice_low) / t(2)
    span = t(twice_high - twice_low) / t(2)
    v = v - lo
    mult = t(1)
    if v < t(0):
        mult = t(-1)
        v = -v
    extra = t(_fmod(np.float64(v), np.float64(span)))  # (exact: libdevice's fmodf holds FMAs)
    if flips_odd(_floor(v / span)):
        return span - extra + lo, -mult
    return extra + lo, mult


@cuda.jit(device=True)
def safe_downgrade(v, t):
    if v > t(2147483646) or v < t(-2147483648) or not (v == v and abs(v) != np.inf):
        return t(-100)
    return v


@cuda.jit(device=True)
def sreflect_pair(v, size, align, t):
    if align:
        return sreflect_grad(v, 0, 2 * (size - 1), t)
    return sreflect_grad(v, -1, 2 * size - 1, t)


@cuda.jit(device=True)
def source_index_t(coord, size, padding, align, t):
    v, unused_d = sunnormalize(coord, size, align, t)
    if padding == 1:
        v = sclip(v, size, t)
    elif padding == 2:
        v, unused_d = sreflect_pair(v, size, align, t)
        v = sclip(v, size, t)
    return safe_downgrade(v, t)


@cuda.jit(device=True)
def source_index_grad_t(coord, size, padding, align, t):
    v, d = sunnormalize(coord, size, align, t)
    if padding == 1:
        v, d2 = sclip_grad(v, size, t)
        d = mul(d, d2)
    elif padding == 2:
        v, d2 = sreflect_pair(v, size, align, t)
        v, d3 = sclip_grad(v, size, t)
        d = mul(mul(d, d2), d3)
    return safe_downgrade(v, t), d


# The CPU kernel's choice of arithmetic: float64 coordinates below 2**23, the grid's dtype from
# there on and for NaN / inf (and always for nearest's discrete choice); float64 weights and sums.

@cuda.jit(device=True)
def own_dtype(coord, size, align):
    u, unused_d = sunnormalize(np.float64(coord), size, align, np.float64)
    return not (abs(u) < 8388608.0)


@cuda.jit(device=True)
def vlocation(coord, size, padding, align, t):
    if own_dtype(coord, size, align):
        return np.float64(vlocation_t(coord, size, padding, align, t))
    return vlocation_t(np.float64(coord), size, padding, align, np.float64)


@cuda.jit(device=True)
def vlocation_grad(coord, size, padding, align, t):
    if own_dtype(coord, size, align):
        v, d = vlocation_grad_t(coord, size, padding, align, t)
        return np.float64(v), np.float64(d)
    return vlocation_grad_t(np.float64(coord), size, padding, align, np.float64)


@cuda.jit(device=True)
def f8(c):
    return np.float64(c[0]), np.float64(c[1]), np.float64(c[2]), np.float64(c[3])


@cuda.jit(device=True)
def cubic_taps(coord, size, padding, align, t):
    if own_dtype(coord, size, align):
        idx, c, dc, scale = cubic_taps_t(coord, size, padding, align, t)
        return idx, f8(c), f8(dc), np.float64(scale)
    return cubic_taps_t(np.float64(coord), size, padding, align, np.float64)


@cuda.jit(device=True)
def source_index(coord, size, padding, align, t):
    if own_dtype(coord, size, align):
        return np.float64(source_index_t(coord, size, padding, align, t))
    return source_index_t(np.float64(coord), size, padding, align, np.float64)


@cuda.jit(device=True)
def source_index_grad(coord, size, padding, align, t):
    if own_dtype(coord, size, align):
        v, d = source_index_grad_t(coord, size, padding, align, t)
        return np.float64(v), np.float64(d)
    return source_index_grad_t(np.float64(coord), size, padding, align, np.float64)


@cuda.jit(device=True)
def inb3(z, y, x, d, h, w):
    return z >= 0 and z < d and y >= 0 and y < h and x >= 0 and x < w


@cuda.jit(device=True)
def corner(k, a0, a1, b0, b1, c0, c1):
    """Corner k's (x, y, z) weights: bits (z, y, x) pick the east / south / bottom ones."""
    return (a1 if k & 1 else a0), (b1 if k & 2 else b0), (c1 if k & 4 else c0)


def grid3d_kernel(x, ox, sxn, sxc, sxd, sxh, sxw, C, D, H, W, grid, og, sgn, sgd, sgh, sgw, sgk,
                  out, N, OD, OH, OW, mode, padding, align):
    """out (N, C, OD, OH, OW) = x sampled at grid (N, OD, OH, OW, 3): trilinear (0) or nearest
    (1); one thread per point, its channels in turn."""
    t = grid.dtype.type
    f = np.float64
    total = N * OD * OH * OW
    tid = cuda.grid(1)
    step = cuda.gridsize(1)
    plane = OD * OH * OW
    while tid < total:
        ow = tid % OW
        oh = (tid // OW) % OH
        od = (tid // (OW * OH)) % OD
        n = tid // (OW * OH * OD)
        gp = og + n * sgn + od * sgd + oh * sgh + ow * sgw
        if mode == 1:
            fx = source_index_t(grid[gp], W, padding, align, t)
            fy = source_index_t(grid[gp + sgk], H, padding, align, t)
            fz = source_index_t(grid[gp + 2 * sgk], D, padding, align, t)
        else:
            fx = source_index(grid[gp], W, padding, align, t)
            fy = source_index(grid[gp + sgk], H, padding, align, t)
            fz = source_index(grid[gp + 2 * sgk], D, padding, align, t)
        xn = ox + n * sxn
        o = n * C * plane + (od * OH + oh) * OW + ow
        if mode == 1:
            rx = int(_rint(fx))
            ry = int(_rint(fy))
            rz = int(_rint(fz))
            inb = inb3(rz, ry, rx, D, H, W)
            at3 = xn + rz * sxd + ry * sxh + rx * sxw
            for c in range(C):
                out[o + c * plane] = x[at3 + c * sxc] if inb else t(0)
        else:
            x0 = int(_floor(fx))
            y0 = int(_floor(fy))
            z0 = int(_floor(fz))
            wx0, wx1 = f(x0 + 1) - fx, fx - f(x0)
            wy0, wy1 = f(y0 + 1) - fy, fy - f(y0)
            wz0, wz1 = f(z0 + 1) - fz, fz - f(z0)
            for c in range(C):
                acc = f(0)
                for k in range(8):
                    cx = x0 + (k & 1)
                    cy = y0 + ((k >> 1) & 1)
                    cz = z0 + (k >> 2)
                    if inb3(cz, cy, cx, D, H, W):
                        ax, ay, az = corner(k, wx0, wx1, wy0, wy1, wz0, wz1)
                        v = x[xn + c * sxc + cz * sxd + cy * sxh + cx * sxw]
                        acc += mul(v, mul(mul(ax, ay), az))
                out[o + c * plane] = acc
        tid += step


def grid3d_grad_grid_kernel(g, og_, sgn_, sgc_, sgd_, sgh_, sgw_, x, ox, sxn, sxc, sxd, sxh, sxw,
                            C, D, H, W, grid, og, sgn, sgd, sgh, sgw, sgk, ggrid, N, OD, OH, OW,
                            padding, align):
    """ggrid (N, OD, OH, OW, 3) row-major of trilinear sampling: per point, the channels in
    order, each over the corners (the CPU kernel's order)."""
    t = grid.dtype.type
    f = np.float64
    total = N * OD * OH * OW
    tid = cuda.grid(1)
    step = cuda.gridsize(1)
    while tid < total:
        ow = tid % OW
        oh = (tid // OW) % OH
        od = (tid // (OW * OH)) % OD
        n = tid // (OW * OH * OD)
        gp = og + n * sgn + od * sgd + oh * sgh + ow * sgw
        fx, mx = source_index_grad(grid[gp], W, padding, align, t)
        fy, my = source_index_grad(grid[gp + sgk], H, padding, align, t)
        fz, mz = source_index_grad(grid[gp + 2 * sgk], D, padding, align, t)
        xn = ox + n * sxn
        gn = og_ + n * sgn_ + od * sgd_ + oh * sgh_ + ow * sgw_
        x0 = int(_floor(fx))
        y0 = int(_floor(fy))
        z0 = int(_floor(fz))
        wx0, wx1 = f(x0 + 1) - fx, fx - f(x0)
        wy0, wy1 = f(y0 + 1) - fy, fy - f(y0)
        wz0, wz1 = f(z0 + 1) - fz, fz - f(z0)
        gix = f(0)
        giy = f(0)
        giz = f(0)
        for c in range(C):
            go = g[gn + c * sgc_]
            for k in range(8):
                cx = x0 + (k & 1)
                cy = y0 + ((k >> 1) & 1)
                cz = z0 + (k >> 2)
                if not inb3(cz, cy, cx, D, H, W):
                    continue
                v = x[xn + c * sxc + cz * sxd + cy * sxh + cx * sxw]
                ax, ay, az = corner(k, wx0, wx1, wy0, wy1, wz0, wz1)
                tx = mul(mul(mul(v, ay), az), go)
                ty = mul(mul(mul(v, ax), az), go)
                tz = mul(mul(mul(v, ax), ay), go)
                gix = gix + tx if k & 1 else gix - tx
                giy = giy + ty if k & 2 else giy - ty
                giz = giz + tz if k & 4 else giz - tz
        ggrid[3 * tid] = mul(mx, gix)
        ggrid[3 * tid + 1] = mul(my, giy)
        ggrid[3 * tid + 2] = mul(mz, giz)
        tid += step


def grid3d_grad_input_kernel(g, og_, sgn_, sgc_, sgd_, sgh_, sgw_, grid, og, sgn, sgd, sgh, sgw,
                             sgk, gi, N, C, D, H, W, OD, OH, OW, mode, padding, align):
    """Plane (n, c) of zeroed gi (row-major) += g spread over the corners of every point, by
    one thread walking the points in order (the backward's coordinates, nearest's too)."""
    t = grid.dtype.type
    f = np.float64
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
                    go = g[gb + od * sgd_ + oh * sgh_ + ow * sgw_]
                    if mode == 1:
                        fx, unused_mx = source_index_grad_t(grid[gp], W, padding, align, t)
                        fy, unused_my = source_index_grad_t(grid[gp + sgk], H, padding, align, t)
                        fz, unused_mz = source_index_grad_t(grid[gp + 2 * sgk], D, padding,
                                                            align, t)
                    else:
                        fx, unused_mx = source_index_grad(grid[gp], W, padding, align, t)
                        fy, unused_my = source_index_grad(grid[gp + sgk], H, padding, align, t)
                        fz, unused_mz = source_index_grad(grid[gp + 2 * sgk], D, padding, align,
                                                          t)
                    if mode == 1:
                        rx = int(_rint(fx))
                        ry = int(_rint(fy))
                        rz = int(_rint(fz))
                        if inb3(rz, ry, rx, D, H, W):
                            k = lo + (rz * H + ry) * W + rx
                            gi[k] = gi[k] + go
                        continue
                    x0 = int(_floor(fx))
                    y0 = int(_floor(fy))
                    z0 = int(_floor(fz))
                    wx0, wx1 = f(x0 + 1) - fx, fx - f(x0)
                    wy0, wy1 = f(y0 + 1) - fy, fy - f(y0)
                    wz0, wz1 = f(z0 + 1) - fz, fz - f(z0)
                    for k in range(8):
                        cx = x0 + (k & 1)
                        cy = y0 + ((k >> 1) & 1)
                        cz = z0 + (k >> 2)
                        if inb3(cz, cy, cx, D, H, W):
                            ax, ay, az = corner(k, wx0, wx1, wy0, wy1, wz0, wz1)
                            at3 = lo + (cz * H + cy) * W + cx
                            gi[at3] = gi[at3] + mul(mul(mul(ax, ay), az), go)
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
