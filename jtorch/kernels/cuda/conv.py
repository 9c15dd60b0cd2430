"""Convolution kernels on CUDA: im2col / col2im kernels around the device's GEMM (``matmul.run``:
the tiled kernel, or cuBLAS where it is installed).

Every convolution runs in 3-D form: an (N, C, *spatial) operand is read at its element strides
as (N, C, D, H, W), a missing spatial dim of size 1 and stride 0, so non-contiguous inputs are
not copied first. Each pass is one column buffer, one batched GEMM and at most one copy:

    forward                  cols = im2col(x);  y = W @ cols + b
    transposed / grad input  cols = W^T @ x;  y = col2im(cols) + b
    grad weight              gW = g @ im2col(x)^T   (one GEMM sums over images and positions)

With one group the GEMM's batch is the images (the column buffer is (N, C*K, L), the result
lands in (N, O, L) directly); with several groups the batch is the groups and the images are
the columns ((C*K, N, L)), so one launch covers any group count and the (O, N, L) result is
copied into (N, O, L). The products have no addend (the forward's bias is one pointwise
kernel after them), so cuBLAS can take them. col2im is a gather (one thread per output element
sums the columns that cover it), so no pass races or depends on scheduling. Images go in
chunks that keep the column buffer under ``COLUMN_LIMIT`` elements.

float16, float32 and float64 run here; other dtypes take the host path (``eager.host_kernel``).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from ...cuda_array import CudaArray, empty
from ...tensor import Tensor
from .. import registry
from ..plan import Plan
from . import eager, target
from . import matmul as _mm
from .target import cuda

# float16 too: columns hold the operand's values, products sum in float32 (``matmul``), col2im
# gathers sum in float32, each pass rounds its result once
_FLOAT = frozenset({"float16", "float32", "float64"})
COLUMN_LIMIT = 1 << 26  # elements of one column buffer (256 MiB of float32)


def launch_shape(n: int) -> tuple:
    """(blocks, threads) of a grid-stride launch over ``n`` items."""
    return max(1, min(eager.MAX_BLOCKS, -(-n // eager.THREADS))), eager.THREADS


# -- kernels ---------------------------------------------------------------------------------

def im2col_kernel(x, ox, sxn, sxc, sxd, sxh, sxw, C, D, H, W,
                  cols, oc, scn, scr, scl, N, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw,
                  od_n, oh_n, ow_n, zero):
    """cols[n, (c, i, j, m), (od, oh, ow)] = x[n, c, od*sd-pd+i*dd, oh*sh-ph+j*dh,
    ow*sw-pw+m*dw] (zero outside x), at the given element strides of both."""
    kk = kd * kh * kw
    ll = od_n * oh_n * ow_n
    total = N * C * kk * ll
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    while t < total:
        ll_i = t % ll
        rest = t // ll
        r = rest % (C * kk)
        n = rest // (C * kk)
        ow = ll_i % ow_n
        oh = (ll_i // ow_n) % oh_n
        od = ll_i // (ow_n * oh_n)
        c = r // kk
        k = r % kk
        z = od * sd - pd + (k // (kh * kw)) * dd
        y = oh * sh - ph + ((k // kw) % kh) * dh
        xx = ow * sw - pw + (k % kw) * dw
        v = zero
        if z >= 0 and z < D and y >= 0 and y < H and xx >= 0 and xx < W:
            v = x[ox + n * sxn + c * sxc + z * sxd + y * sxh + xx * sxw]
        cols[oc + n * scn + r * scr + ll_i * scl] = v
        t += step


def col2im_kernel(cols, oc, scn, scr, scl, y, N, C, D, H, W, kd, kh, kw, sd, sh, sw,
                  pd, ph, pw, dd, dh, dw, od_n, oh_n, ow_n, bias, ob, sb, has_bias, zero):
    """y[n, c, z, h, w] (row-major) = the sum of the columns (n, (c, i, j, m), (od, oh, ow))
    that im2col reads from (z, h, w), + bias[c]: a gather, one thread per output element."""
    kk = kd * kh * kw
    total = N * C * D * H * W
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    while t < total:
        w = t % W
        h = (t // W) % H
        z = (t // (W * H)) % D
        c = (t // (W * H * D)) % C
        n = t // (W * H * D * C)
        s = zero
        base = oc + n * scn + c * kk * scr
        for i in range(kd):
            tz = z + pd - i * dd
            if tz < 0 or tz % sd != 0 or tz // sd >= od_n:
                continue
            for j in range(kh):
                ty = h + ph - j * dh
                if ty < 0 or ty % sh != 0 or ty // sh >= oh_n:
                    continue
                for m in range(kw):
                    tx = w + pw - m * dw
                    if tx < 0 or tx % sw != 0 or tx // sw >= ow_n:
                        continue
                    r = (i * kh + j) * kw + m
                    ll_i = ((tz // sd) * oh_n + ty // sh) * ow_n + tx // sw
                    s += cols[base + r * scr + ll_i * scl]
        if has_bias:
            s += bias[ob + c * sb]
        y[t] = s
        t += step


_kernels: dict = {}


def kernel(name: str):
    k = _kernels.get(name)
    if k is None:
        k = _kernels[name] = target.jit(KERNELS[name])
    return k


KERNELS = {"im2col": im2col_kernel, "col2im": col2im_kernel}


def signatures(dtype: str) -> dict:
    """Numba signatures of this module's kernels for ``compile_ptx`` (spans are 1-D arrays)."""
    span, i = f"{dtype}[::1]", "int64"
    total = "float32" if dtype == "float16" else dtype
    return {
        "im2col": f"void({span}, {', '.join([i] * 10)}, {span}, {', '.join([i] * 20)}, {dtype})",
        "col2im": f"void({span}, {', '.join([i] * 4)}, {span}, {', '.join([i] * 20)}, "
                  f"{span}, {i}, {i}, boolean, {total})",
    }


# -- geometry --------------------------------------------------------------------------------

def strides5(a: CudaArray) -> tuple:
    """Element strides of an (N, C, *spatial) array as (N, C, D, H, W)."""
    st = a.element_strides()
    return st[:2] + (0,) * (5 - a.ndim) + st[2:]


def shape5(shape: tuple) -> tuple:
    return tuple(shape[:2]) + (1,) * (5 - len(shape)) + tuple(shape[2:])


def pad3(t: tuple, fill: int) -> tuple:
    return (fill,) * (3 - len(t)) + tuple(t)


def geometry(kernel: tuple, kw: dict) -> tuple:
    """(kD, kH, kW, sD, sH, sW, pD, pH, pW, dD, dH, dW) of a plan's per-dim arguments."""
    return (*pad3(kernel, 1), *pad3(kw["stride"], 1), *pad3(kw["padding"], 0),
            *pad3(kw["dilation"], 1))


def merged_stride(shape: tuple, strides: tuple) -> int | None:
    """The one element stride that walks dims ``shape`` (at ``strides``) in row-major order,
    or None when they do not merge."""
    dims = [(n, s) for n, s in zip(shape, strides) if n != 1]
    for (_, s0), (n1, s1) in itertools.pairwise(dims):
        if s0 != s1 * n1:
            return None
    return dims[-1][1] if dims else 1


def fresh(shape: tuple, d, dev) -> Tensor:
    a, st = empty(tuple(shape), d.np, dev)
    return Tensor._make(a, st, d)


def view(t: Tensor, shape: tuple, elem_strides: tuple, offset: int) -> Tensor:
    """A view of ``t``'s storage at element strides (for the device's copy kernel)."""
    a = t._a
    isz = a.dtype.itemsize
    v = CudaArray(tuple(shape), a.dtype, tuple(s * isz for s in elem_strides), offset, a.buf,
                  a.dev)
    return Tensor._make(v, t._st, t.dtype)


def span(t: Tensor) -> tuple:
    return t._a.buf, t._a.offset


def run_im2col(x: Tensor, geo: tuple, out_sp: tuple, cols, oc: int, cstrides: tuple,
               n0: int, nc: int) -> None:
    """Images ``n0 .. n0+nc`` of ``x`` into columns at (image, row, position) ``cstrides``."""
    a = x._a
    sx = strides5(a)
    _, c, d, h, w = shape5(tuple(a.shape))
    total = nc * c * geo[0] * geo[1] * geo[2] * math.prod(out_sp)
    if not total:
        return
    zero = a.dtype.type(0)
    kernel("im2col")[launch_shape(total)](
        a.buf, a.offset + n0 * sx[0], *sx, c, d, h, w, cols, oc, *cstrides, nc, *geo,
        *out_sp, zero)


def run_col2im(cols, oc: int, cstrides: tuple, y: Tensor, n0: int, nc: int, geo: tuple,
               cols_sp: tuple, bias: Tensor | None) -> None:
    """Images ``n0 .. n0+nc`` of row-major ``y`` (N, C, *sp) from the columns, + bias."""
    a = y._a
    _, c, d, h, w = shape5(tuple(a.shape))
    plane = c * d * h * w
    total = nc * plane
    if not total:
        return
    zero = np.float32(0) if a.dtype == np.float16 else a.dtype.type(0)  # (the sums' dtype)
    if bias is None:
        b, ob, sb = a.buf, 0, 0
    else:
        b, ob, sb = bias._a.buf, bias._a.offset, bias._a.element_strides()[0]
    out = a.buf[a.offset + n0 * plane:a.offset + (n0 + nc) * plane]
    kernel("col2im")[launch_shape(total)](
        cols, oc, *cstrides, out, nc, c, d, h, w, *geo, *cols_sp, b, ob, sb, bias is not None,
        zero)


def chunk(n: int, per_image: int) -> int:
    """Images per pass: the column buffer stays under ``COLUMN_LIMIT`` elements."""
    return max(1, min(n, COLUMN_LIMIT // max(1, per_image)))


def contiguous(t: Tensor) -> Tensor:
    return t if t._a.flags.c_contiguous else eager._copy(t)


# -- convolution -----------------------------------------------------------------------------

def convolution_cuda(plan, x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    d = plan.out.dtype
    if d.name not in _FLOAT or x.dtype is not d or w.dtype is not d or \
            (b is not None and b.dtype is not d):
        return _HOST["convolution"](plan, x, w, b)
    y = fresh(plan.out.shape, d, plan.device)
    if not y._a.size:
        return y
    if plan.kw["transposed"]:
        _transposed(plan.kw, x, contiguous(w), b, y)
    else:
        _forward(plan.kw, x, contiguous(w), b, y)
    return y


def _forward(kw: dict, x: Tensor, w: Tensor, b: Tensor | None, y: Tensor) -> None:
    """y = W @ im2col(x) (+ b, one pointwise kernel after the products: without an addend
    cuBLAS can take them), per chunk of images."""
    n, c = x._a.shape[:2]
    o = w._a.shape[0]
    groups = kw["groups"]
    ksp = tuple(w._a.shape[2:])
    geo = geometry(ksp, kw)
    out_sp = pad3(kw["size"], 1)
    kk = math.prod(ksp)
    ll = math.prod(out_sp)
    cg, og = c // groups, o // groups
    nc = chunk(n, c * kk * ll)
    dname, dev = y.dtype.name, device_index(y)
    cols = fresh((nc * c * kk * ll,), y.dtype, y._a.dev)
    cb = cols._a.buf
    wb, wo = span(w)
    yb, yo = span(y)
    tmp = fresh((o * nc * ll,), y.dtype, y._a.dev) if groups > 1 and n > 1 else None
    for n0 in range(0, n, nc):
        m = min(nc, n - n0)
        if groups == 1:  # batch = images: (N, C*K, L) columns, the result straight into y
            run_im2col(x, geo, out_sp, cb, 0, (c * kk * ll, ll, 1), n0, m)
            _mm.run(dname, (m, o, ll, c * kk), (wb, wo, (0, c * kk, 1)),
                    (cb, 0, (c * kk * ll, ll, 1)), (yb, yo + n0 * o * ll, (o * ll, ll, 1)),
                    device=dev)
            continue
        # batch = groups: (C*K, m, L) columns, images and positions as the GEMM's columns
        run_im2col(x, geo, out_sp, cb, 0, (ll, m * ll, 1), n0, m)
        a = (wb, wo, (og * cg * kk, cg * kk, 1))
        bcols = (cb, 0, (cg * kk * m * ll, m * ll, 1))
        if tmp is None:  # one image: (O, L) is the image's output
            _mm.run(dname, (groups, og, ll, cg * kk), a, bcols, (yb, yo, (og * ll, ll, 1)),
                    device=dev)
            continue
        tb = tmp._a.buf
        _mm.run(dname, (groups, og, m * ll, cg * kk), a, bcols,
                (tb, 0, (og * m * ll, m * ll, 1)), device=dev)
        eager._copy_values(view(y, (o, m, ll), (ll, o * ll, 1), yo + n0 * o * ll),
                           view(tmp, (o, m, ll), (m * ll, ll, 1), 0))
    if b is not None:
        add_bias(y, b)


def add_bias(y: Tensor, b: Tensor) -> None:
    """y (N, C, *sp, row-major) += b[c], in place."""
    n, c = y._a.shape[:2]
    ll = y._a.size // max(1, n * c)
    y3 = view(y, (n, c, ll), (c * ll, ll, 1), y._a.offset)
    bv = view(b, (c, 1), (b._a.element_strides()[0], 0), b._a.offset)
    compute = "float32" if y.dtype.name == "float16" else y.dtype.name
    eager.launch(registry.REGISTRY["add"], compute, y.dtype.name, tuple(y3._a.shape), y3._a,
                 (y3, bv))


def device_index(t: Tensor) -> int:
    return t._a.dev.index or 0


def _transposed(kw: dict, x: Tensor, w: Tensor, b: Tensor | None, y: Tensor) -> None:
    """y = col2im(W^T @ x) + b (the adjoint of the forward), per chunk of images; ``x`` is
    (N, O, *in_sp), ``w`` (O, C/G, *k)."""
    n, o = x._a.shape[:2]
    groups = kw["groups"]
    c = y._a.shape[1]
    ksp = tuple(w._a.shape[2:])
    geo = geometry(ksp, kw)
    in_sp = pad3(tuple(x._a.shape[2:]), 1)
    kk = math.prod(ksp)
    lin = math.prod(in_sp)
    cg, og = c // groups, o // groups
    xst = x._a.element_strides()
    sl = merged_stride(tuple(x._a.shape[2:]), xst[2:])
    if sl is None:
        x = eager._copy(x)
        xst = x._a.element_strides()
        sl = 1
    nc = chunk(n, c * kk * lin)
    dname, dev = y.dtype.name, device_index(y)
    if not o:  # no input channels: no column has a term
        eager.fill_cuda(Plan(None, {"value": 0}, y.device), y)
        if b is not None:
            add_bias(y, b)
        return
    cols = fresh((nc * c * kk * lin,), y.dtype, y._a.dev)
    cb = cols._a.buf
    wb, wo = span(w)
    xb, xo = span(x)
    xt = fresh((o * nc * lin,), y.dtype, y._a.dev) if groups > 1 else None
    for n0 in range(0, n, nc):
        m = min(nc, n - n0)
        if groups == 1:  # batch = images: cols[n] (C*K, Lin) = W^T (C*K, O) @ x[n] (O, Lin)
            _mm.run(dname, (m, c * kk, lin, o), (wb, wo, (0, 1, c * kk)),
                    (xb, xo + n0 * xst[0], (xst[0], xst[1], sl)),
                    (cb, 0, (c * kk * lin, lin, 1)), device=dev)
            run_col2im(cb, 0, (c * kk * lin, lin, 1), y, n0, m, geo, in_sp, b)
            continue
        # batch = groups: x as (O, m, Lin) (a copy), cols (C*K, m, Lin)
        eager._copy_values(view(xt, (o, m, lin), (m * lin, lin, 1), 0),
                           view(x, (o, m, lin), (xst[1], xst[0], sl), xo + n0 * xst[0]))
        _mm.run(dname, (groups, cg * kk, m * lin, og), (wb, wo, (og * cg * kk, 1, cg * kk)),
                (xt._a.buf, 0, (og * m * lin, m * lin, 1)),
                (cb, 0, (cg * kk * m * lin, m * lin, 1)), device=dev)
        run_col2im(cb, 0, (lin, m * lin, 1), y, n0, m, geo, in_sp, b)


def conv_weight_cuda(plan, x: Tensor, g: Tensor) -> Tensor:
    """gW (O, C/G, *k) = sum over images of g[n] (O, L) @ im2col(x[n])^T, one GEMM per chunk
    of images batched over groups (the later chunks add to the result)."""
    d = plan.out.dtype
    if d.name not in _FLOAT or x.dtype is not d or g.dtype is not d:
        return _HOST["convolution_backward_weight"](plan, x, g)
    kw = plan.kw
    gw = fresh(plan.out.shape, d, plan.device)
    if not gw._a.size:
        return gw
    n, c = x._a.shape[:2]
    o = g._a.shape[1]
    groups = kw["groups"]
    ksp = tuple(kw["kernel"])
    geo = geometry(ksp, kw)
    out_sp = pad3(tuple(g._a.shape[2:]), 1)
    kk = math.prod(ksp)
    ll = math.prod(out_sp)
    cg, og = c // groups, o // groups
    gwb, gwo = span(gw)
    c_ = (gwb, gwo, (og * cg * kk, cg * kk, 1))
    if not n * ll:  # nothing to sum: zeros
        return eager.fill_cuda(Plan(None, {"value": 0}, plan.device), gw)
    nc = chunk(n, c * kk * ll)
    cols = fresh((nc * c * kk * ll,), d, plan.device)
    cb = cols._a.buf
    gt = None
    gst = g._a.element_strides()
    sl = merged_stride(tuple(g._a.shape[2:]), gst[2:])
    for n0 in range(0, n, nc):
        m = min(nc, n - n0)
        run_im2col(x, geo, out_sp, cb, 0, (ll, m * ll, 1), n0, m)
        go = g._a.offset + n0 * gst[0]
        if sl is not None and (m == 1 or gst[0] == ll * sl):  # (n, l) is one stride already
            ga = (g._a.buf, go, (og * gst[1], gst[1], sl))
        else:
            if gt is None:
                gt = fresh((o * nc * ll,), d, plan.device)
            eager._copy_values(view(gt, (o, m) + tuple(g._a.shape[2:]),
                                    (m * ll, ll) + _row_major(tuple(g._a.shape[2:])), 0),
                               view(g, (o, m) + tuple(g._a.shape[2:]),
                                    (gst[1], gst[0]) + gst[2:], go))
            ga = (gt._a.buf, 0, (og * m * ll, m * ll, 1))
        _mm.run(d.name, (groups, og, cg * kk, m * ll), ga, (cb, 0, (cg * kk * m * ll, 1, m * ll)),
                c_, c_ if n0 else None, 1.0, 1.0, device_index(gw))
    return gw


def _row_major(shape: tuple) -> tuple:
    st, acc = [], 1
    for s in reversed(shape):
        st.append(acc)
        acc *= s
    return tuple(reversed(st))


# -- unfold / fold ---------------------------------------------------------------------------

def im2col_cuda(plan, x: Tensor) -> Tensor:
    """unfold: (N, C, H, W) -> (N, C*kH*kW, L), one im2col launch into the result."""
    d = plan.out.dtype
    if d.name not in _FLOAT:
        return _HOST["im2col"](plan, x)
    res = fresh(plan.out.shape, d, plan.device)
    if not res._a.size:
        return res
    kw = plan.kw
    if x._a.ndim == 3:
        x = _batch_of_one(x)
    n, c = x._a.shape[:2]
    out_sp = pad3(_blocks(kw), 1)
    kk = math.prod(kw["kernel"])
    ll = math.prod(out_sp)
    run_im2col(x, geometry(tuple(kw["kernel"]), kw), out_sp, res._a.buf, res._a.offset,
               (c * kk * ll, ll, 1), 0, n)
    return res


def col2im_cuda(plan, x: Tensor) -> Tensor:
    """fold: (N, C*kH*kW, L) -> (N, C, *size), one col2im gather reading ``x`` at its strides."""
    d = plan.out.dtype
    if d.name not in _FLOAT:
        return _HOST["col2im"](plan, x)
    res = fresh(plan.out.shape, d, plan.device)
    if not res._a.size:
        return res
    kw = plan.kw
    a = x._a
    st = a.element_strides()
    if a.ndim == 2:
        st = (0,) + st
    y = res if res._a.ndim == 4 else view(res, (1,) + tuple(res._a.shape), (0,) +
                                          res._a.element_strides(), res._a.offset)
    run_col2im(a.buf, a.offset, st, y, 0, y._a.shape[0], geometry(tuple(kw["kernel"]), kw),
               pad3(_blocks(kw), 1), None)
    return res


def _batch_of_one(x: Tensor) -> Tensor:
    a = x._a
    return view(x, (1,) + tuple(a.shape), (0,) + a.element_strides(), a.offset)


def _blocks(kw: dict) -> tuple:
    return tuple((s + 2 * p - dl * (k - 1) - 1) // st + 1 for s, k, dl, p, st in
                 zip(kw["size"], kw["kernel"], kw["dilation"], kw["padding"], kw["stride"]))


# -- constant padding ------------------------------------------------------------------------

def constant_pad_cuda(plan, x: Tensor) -> Tensor:
    """The ``value``-filled result (the fill kernel), then the input's kept part copied into
    its place (the copy kernel, reading ``x`` at its strides); negative pads crop."""
    d = plan.out.dtype
    if d.name not in eager._NATIVE:
        return _HOST["constant_pad_nd"](plan, x)
    pads = plan.kw["pad"]
    res = fresh(plan.out.shape, d, plan.device)
    if not res._a.size:
        return res
    eager.fill_cuda(Plan(None, {"value": plan.kw["value"]}, plan.device), res)
    a, o = x._a, res._a
    shape, lead = list(a.shape), a.ndim - len(pads) // 2
    xoff, ooff = a.offset, o.offset
    xst, ost = a.element_strides(), o.element_strides()
    for k in range(lead, a.ndim):
        j = a.ndim - 1 - k
        lo, hi = pads[2 * j], pads[2 * j + 1]
        xoff += max(-lo, 0) * xst[k]
        ooff += max(lo, 0) * ost[k]
        shape[k] -= max(-lo, 0) + max(-hi, 0)
    if all(n > 0 for n in shape):
        eager._copy_values(view(res, tuple(shape), ost, ooff), view(x, tuple(shape), xst, xoff))
    return res


_HOST = {name: eager.host_kernel(registry.REGISTRY[name])
         for name in ("convolution", "convolution_backward_weight", "im2col", "col2im",
                      "constant_pad_nd")}

for _name, _kernel in (("convolution", convolution_cuda),
                       ("convolution_backward_weight", conv_weight_cuda),
                       ("im2col", im2col_cuda), ("col2im", col2im_cuda),
                       ("constant_pad_nd", constant_pad_cuda)):
    registry.REGISTRY[_name].kernels["cuda"] = _kernel

from . import pooling  # noqa: F401  (registers the pooling kernels)
