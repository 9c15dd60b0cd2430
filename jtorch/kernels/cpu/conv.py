"""Convolution kernels: the choice of a kernel family per geometry, and the im2col family.

Every convolution is run in 3-D form: inputs are (N, C, D, H, W) arrays (conv1d/2d views add
size-1 spatial dims) and weights (O, C/groups, kD, kH, kW). Each pass of a convolution (the
forward, the input gradient, the weight gradient) picks one of three families, memoised per
geometry by ``_strategy`` (which says what each wins, as measured):

- direct (``conv_direct``, float32): a register-blocked micro-kernel over a zero-padded
  copy of each image, no column matrix; the forward of almost every layer, the weight
  gradient of most, and the input gradient of stride-1 convolutions (the convolution of the
  output gradient with the flipped, transposed weight);
- winograd (``conv_winograd``, 3x3 stride 1): the weight gradient of large planes, and the
  float64 passes where it fits;
- im2col + BLAS (here): everything else (complex, integers, strided input gradients and
  transposed convolutions, float64 outside Winograd's reach). By size:

  - per image (output planes of >= 128 positions or >= 1M multiply-adds per image): one
    kernel splits the images over Numba's threads; each thread runs im2col of its image into
    a (C*K, L) buffer that stays in cache and the group GEMMs (``np.dot``, BLAS held serial in
    each thread by ``_threads.serial_blas``) straight into the output;
  - batched (small planes, where 64 tiny GEMMs would pay BLAS's per-call cost; integers): the
    column matrix is laid out (C*K, N, oD, oH, oW), so group g's rows are one contiguous block
    and ``cols.reshape(G, C/G*K, N*L)`` feeds one batched GEMM (``matmul.bmm_into``, BLAS
    serial below 32M multiply-adds) with the whole batch in its columns; one swap (with the
    bias) makes its (O, N, L) result (N, O, L).

    forward                  cols = im2col(x);  out(O, L) = W @ cols;  y = out + b
    transposed / grad input  cols = W^T @ x;  y = col2im(cols)
    grad weight              gW^T = im2col(x) @ g^T   (summed over images)

Never a per-image loop that alternates Numba's pool with BLAS's: that measured 23-49x
slower than torch. im2col, col2im and the swaps are parallel over independent rows (im2col
over column rows, col2im over output planes, so its accumulation has no races), with a serial
twin below ``GRAIN_SIZE`` elements of work. im2col copies long rows with the padding test
inside one masked loop and short rows (small planes) through per-kernel-offset gather tables,
which col2im uses as scatter tables.
"""
from __future__ import annotations

import functools
import math

import numba
import numpy as np
from numba import prange

from ... import _allocator, _settings, _threads
from ..jit import njit
from . import conv_direct as _dc
from . import conv_winograd as _wg
from . import matmul as _mm


@njit(cache=True, nogil=True, inline="always")
def _span(o_len, stride, offset, size):
    """[lo, hi) of output indices o with 0 <= o*stride + offset < size."""
    lo = 0
    if offset < 0:
        lo = (-offset + stride - 1) // stride
    hi = 0
    if size - offset > 0:
        hi = (size - offset + stride - 1) // stride
    hi = min(hi, o_len)
    lo = min(lo, hi)
    return lo, hi


_jit = njit(cache=True, nogil=True, inline="always")


@_jit
def _im2col_task(x, cols, r, geo):
    """Column row r = (channel c, kernel offset k) of im2col for every image; ``geo`` = (kD,
    kH, kW, sD, sH, sW, pD, pH, pW, dD, dH, dW). Plain element indexing with the padding test
    in the innermost loop: LLVM turns it into masked vector loads, which beat per-row views,
    slice copies and split loops at every row length measured (4 to 32)."""
    kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw = geo
    n_img, d_in, h_in, w_in = x.shape[0], x.shape[2], x.shape[3], x.shape[4]
    o_d, o_h, o_w = cols.shape[2], cols.shape[3], cols.shape[4]
    kk = kd * kh * kw
    c = r // kk
    k = r - c * kk
    i = k // (kh * kw)
    j = (k // kw) % kh
    base = (k % kw) * dw - pw
    zero = cols.dtype.type(0)
    for n in range(n_img):
        for od in range(o_d):
            z = od * sd - pd + i * dd
            z_in = z >= 0 and z < d_in
            for oh in range(o_h):
                y = oh * sh - ph + j * dh
                row_in = z_in and y >= 0 and y < h_in
                for ow in range(o_w):
                    xx = ow * sw + base
                    if row_in and xx >= 0 and xx < w_in:
                        cols[r, n, od, oh, ow] = x[n, c, z, y, xx]
                    else:
                        cols[r, n, od, oh, ow] = zero


# Output rows shorter than this go through gather tables: per-row loop overhead dominates
# (LeNet's 4x4 planes: 3.4x faster); longer rows are faster with the masked row loop.
_SHORT_ROW = 16


@_jit
def _gather_tables(x, cols, geo):
    """tab[k, p]: flat index into an input plane read by kernel offset k at output position p
    (-1 in the padding); the same for every channel and image."""
    kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw = geo
    d_in, h_in, w_in = x.shape[2], x.shape[3], x.shape[4]
    o_d, o_h, o_w = cols.shape[2], cols.shape[3], cols.shape[4]
    kk = kd * kh * kw
    tab = np.empty((kk, o_d * o_h * o_w), np.int64)
    for k in range(kk):
        i = k // (kh * kw)
        j = (k // kw) % kh
        base = (k % kw) * dw - pw
        p = 0
        for od in range(o_d):
            z = od * sd - pd + i * dd
            for oh in range(o_h):
                y = oh * sh - ph + j * dh
                inside = z >= 0 and z < d_in and y >= 0 and y < h_in
                for ow in range(o_w):
                    xx = ow * sw + base
                    tab[k, p] = (z * h_in + y) * w_in + xx if inside and xx >= 0 and xx < w_in else -1
                    p += 1
    return tab


@_jit
def _im2col_gather(xc, cols, tab, r):
    """Column row r of im2col for every image through the gather table of its kernel offset;
    ``xc`` is the input as C-contiguous (N, C, plane)."""
    n_img = xc.shape[0]
    kk = tab.shape[0]
    c = r // kk
    tk = tab[r - c * kk]
    zero = cols.dtype.type(0)
    cr = cols[r].reshape(n_img, tab.shape[1])
    for n in range(n_img):
        src = xc[n, c]
        dst = cr[n]
        for p in range(dst.shape[0]):
            q = tk[p]
            dst[p] = src[q] if q >= 0 else zero


@njit(cache=True, nogil=True)
def im2col(x, cols, geo):
    """cols[(c, i, j, l), n, od, oh, ow] = x[n, c, od*sd-pd+i*dd, oh*sh-ph+j*dh, ow*sw-pw+l*dw]
    (zero outside x); x is (N, C, D, H, W) (C-contiguous for short rows), cols
    (C*K, N, oD, oH, oW)."""
    if cols.shape[4] < _SHORT_ROW:
        tab = _gather_tables(x, cols, geo)
        xc = x.reshape(x.shape[0], x.shape[1], -1)
        for r in range(cols.shape[0]):
            _im2col_gather(xc, cols, tab, r)
    else:
        for r in range(cols.shape[0]):
            _im2col_task(x, cols, r, geo)


@njit(cache=True, nogil=True, parallel=True)
def im2col_par(x, cols, geo):
    if cols.shape[4] < _SHORT_ROW:
        tab = _gather_tables(x, cols, geo)
        xc = x.reshape(x.shape[0], x.shape[1], -1)
        for r in prange(cols.shape[0]):
            _im2col_gather(xc, cols, tab, r)
    else:
        for r in prange(cols.shape[0]):
            _im2col_task(x, cols, r, geo)


@_jit
def _im2col_image(x, buf, geo, tab, i):
    """im2col of image i into ``buf`` (C*K, 1, oD, oH, oW); ``tab``: gather tables, or empty
    for long rows."""
    xi = x[i:i + 1]
    if tab.shape[0]:
        xc = xi.reshape(1, xi.shape[1], -1)
        for r in range(buf.shape[0]):
            _im2col_gather(xc, buf, tab, r)
    else:
        for r in range(buf.shape[0]):
            _im2col_task(xi, buf, r, geo)


@_jit
def _add_channel_bias(planes, bias):
    """planes (C, L) of one image += bias[c] per channel."""
    for c in range(planes.shape[0]):
        bc = bias[c]
        row = planes[c]
        for j in range(row.shape[0]):
            row[j] += bc


@_jit
def _conv_image_into(x, w3, bias, with_bias, yi, geo, tab, buf, i):
    """yi (O, L) = W @ im2col(x[i]) (+ bias), group by group; ``buf`` is the caller's
    (C*K, 1, oD, oH, oW) column buffer (one image: it stays in cache for the GEMM). ``yi`` may
    be a scratch image (compiled epilogues run their lines on it while it is hot)."""
    _im2col_image(x, buf, geo, tab, i)
    g_n, og, cgk = w3.shape
    b2 = buf.reshape(buf.shape[0], -1)
    for g in range(g_n):
        np.dot(w3[g], b2[g * cgk:(g + 1) * cgk], yi[g * og:(g + 1) * og])
    if with_bias:
        _add_channel_bias(yi, bias)


@_jit
def _conv_image(x, w3, bias, with_bias, y3, geo, tab, buf, i):
    """y3[i] (O, L) = W @ im2col(x[i]) (+ bias)."""
    _conv_image_into(x, w3, bias, with_bias, y3[i], geo, tab, buf, i)


@njit(cache=True, nogil=True)
def conv_images(x, w3, bias, with_bias, y3, geo, tab, buf):
    for i in range(x.shape[0]):
        _conv_image(x, w3, bias, with_bias, y3, geo, tab, buf, i)


@njit(cache=True, nogil=True, parallel=True)
def conv_images_par(x, w3, bias, with_bias, y3, geo, tab, buf, nt):
    """Images split evenly over ``nt`` threads (Numba's count, passed in: reading it here
    would keep the kernel out of the disk cache), each with its own column buffer (``buf``
    gives the shape and dtype); BLAS must run serially in each thread (``serial_blas``)."""
    n_img = x.shape[0]
    per = (n_img + nt - 1) // nt
    for t in prange(nt):
        mine = np.empty_like(buf)
        for i in range(t * per, min(n_img, (t + 1) * per)):
            _conv_image(x, w3, bias, with_bias, y3, geo, tab, mine, i)


@_jit
def _conv_t_image(x3, w3, bias, with_bias, y, geo, tab, buf, i):
    """y[i] = col2im(W^T @ x3[i]) (+ bias): the adjoint of image i's convolution (the input
    gradient, or a transposed convolution), through the caller's column buffer ``buf``
    (C*K, 1, d, h, w) shaped by x's spatial dims."""
    g_n, og, cgk = w3.shape
    b2 = buf.reshape(buf.shape[0], -1)
    xi = x3[i]
    for g in range(g_n):
        np.dot(w3[g].T, xi[g * og:(g + 1) * og], b2[g * cgk:(g + 1) * cgk])
    c3 = buf.reshape(buf.shape[0], 1, -1)
    yi = y[i:i + 1]
    n_ch = y.shape[1]
    if tab.shape[0]:
        oc = yi.reshape(1, n_ch, -1)
        for c in range(n_ch):
            _col2im_scatter(c3, oc, tab, c)
    else:
        for c in range(n_ch):
            _col2im_plane(c3, yi, c, geo, buf.shape[2:])
    if with_bias:
        _add_channel_bias(yi.reshape(n_ch, -1), bias)


@njit(cache=True, nogil=True)
def conv_t_images(x3, w3, bias, with_bias, y, geo, tab, buf):
    for i in range(x3.shape[0]):
        _conv_t_image(x3, w3, bias, with_bias, y, geo, tab, buf, i)


@njit(cache=True, nogil=True, parallel=True)
def conv_t_images_par(x3, w3, bias, with_bias, y, geo, tab, buf, nt):
    n_img = x3.shape[0]
    per = (n_img + nt - 1) // nt
    for t in prange(nt):
        mine = np.empty_like(buf)
        for i in range(t * per, min(n_img, (t + 1) * per)):
            _conv_t_image(x3, w3, bias, with_bias, y, geo, tab, mine, i)


@_jit
def _weight_image(x, g3, acc, tmp, geo, tab, buf, i):
    """acc (G, C/G*K, O/G) += im2col(x[i]) @ g3[i]^T, group by group (gW^T of image i)."""
    _im2col_image(x, buf, geo, tab, i)
    g_n, cgk, og = acc.shape
    b2 = buf.reshape(buf.shape[0], -1)
    gi = g3[i]
    for g in range(g_n):
        np.dot(b2[g * cgk:(g + 1) * cgk], gi[g * og:(g + 1) * og].T, tmp)
        a = acc[g]
        for r in range(cgk):
            for q in range(og):
                a[r, q] += tmp[r, q]


@njit(cache=True, nogil=True)
def weight_images(x, g3, acc, geo, tab, buf):
    acc[...] = 0
    tmp = np.empty(acc.shape[1:], acc.dtype)
    for i in range(x.shape[0]):
        _weight_image(x, g3, acc, tmp, geo, tab, buf, i)


@njit(cache=True, nogil=True, parallel=True)
def weight_images_par(x, g3, acc, geo, tab, buf, nt):
    """Per-thread partial sums over each thread's images, added up at the end."""
    n_img = x.shape[0]
    per = (n_img + nt - 1) // nt
    parts = np.zeros((nt,) + acc.shape, acc.dtype)
    for t in prange(nt):
        mine = np.empty_like(buf)
        tmp = np.empty(acc.shape[1:], acc.dtype)
        for i in range(t * per, min(n_img, (t + 1) * per)):
            _weight_image(x, g3, parts[t], tmp, geo, tab, mine, i)
    acc[...] = 0
    for t in range(nt):
        acc += parts[t]


@_jit
def _col2im_plane(c3, out, t, geo, o_sp):
    """Output plane t = (image n, channel c) of col2im: every column entry that reads it;
    ``c3`` is the column matrix as (C*K, N, oD*oH*oW), ``o_sp`` its (oD, oH, oW)."""
    kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw = geo
    n_ch, d_in, h_in, w_in = out.shape[1], out.shape[2], out.shape[3], out.shape[4]
    o_d, o_h, o_w = o_sp
    kk = kd * kh * kw
    n = t // n_ch
    c = t - n * n_ch
    dst = out[n, c].reshape(-1)
    dst[:] = 0
    for k in range(kk):
        i = k // (kh * kw)
        j = (k // kw) % kh
        base = (k % kw) * dw - pw
        w_lo, w_hi = _span(o_w, sw, base, w_in)
        src = c3[c * kk + k, n]
        for od in range(o_d):
            z = od * sd - pd + i * dd
            if z < 0 or z >= d_in:
                continue
            for oh in range(o_h):
                y = oh * sh - ph + j * dh
                if y < 0 or y >= h_in:
                    continue
                o0 = (od * o_h + oh) * o_w
                s0 = (z * h_in + y) * w_in + base
                d = dst[s0 + w_lo * sw:]
                sv = src[o0 + w_lo:o0 + w_hi]
                if sw == 1:  # views indexed from 0: no negative-index fix-up, vectorised
                    for q in range(sv.shape[0]):
                        d[q] += sv[q]
                else:
                    for q in range(sv.shape[0]):
                        d[q * sw] += sv[q]


@_jit
def _col2im_scatter(c3, oc, tab, t):
    """Output plane t = (image n, channel c) of col2im through the gather tables (their
    adjoint: a scatter-add; within one kernel offset the targets are distinct); ``oc`` is the
    output as C-contiguous (N, C, plane), ``c3`` the columns as (C*K, N, plane). Plain slices
    only: a reshape per (plane, offset) cost more than the adds on LeNet's 4x4 planes."""
    n_ch = oc.shape[1]
    kk = tab.shape[0]
    n = t // n_ch
    c = t - n * n_ch
    dst = oc[n, c]
    dst[:] = 0
    for k in range(kk):
        tk = tab[k]
        src = c3[c * kk + k, n]
        for p in range(src.shape[0]):
            q = tk[p]
            if q >= 0:
                dst[q] += src[p]


@njit(cache=True, nogil=True)
def col2im(cols, out, geo):
    """The adjoint of ``im2col``: ``out`` (N, C, D, H, W) is overwritten with the sums of the
    column entries that read each element; one task per (n, c) plane, so no races."""
    c3 = cols.reshape(cols.shape[0], cols.shape[1], -1)
    if cols.shape[4] < _SHORT_ROW:
        tab = _gather_tables(out, cols, geo)
        oc = out.reshape(out.shape[0], out.shape[1], -1)
        for t in range(out.shape[0] * out.shape[1]):
            _col2im_scatter(c3, oc, tab, t)
    else:
        for t in range(out.shape[0] * out.shape[1]):
            _col2im_plane(c3, out, t, geo, cols.shape[2:])


@njit(cache=True, nogil=True, parallel=True)
def col2im_par(cols, out, geo):
    c3 = cols.reshape(cols.shape[0], cols.shape[1], -1)
    if cols.shape[4] < _SHORT_ROW:
        tab = _gather_tables(out, cols, geo)
        oc = out.reshape(out.shape[0], out.shape[1], -1)
        for t in prange(out.shape[0] * out.shape[1]):
            _col2im_scatter(c3, oc, tab, t)
    else:
        for t in prange(out.shape[0] * out.shape[1]):
            _col2im_plane(c3, out, t, geo, cols.shape[2:])


@_jit
def _swap_row(src, bias, dst, t, with_bias):
    nb = src.shape[1]
    a = t // nb
    b = t - a * nb
    s = src[a, b]
    d = dst[b, a]
    if with_bias:
        bo = bias[a]
        for i in range(s.shape[0]):
            d[i] = s[i] + bo
    else:
        for i in range(s.shape[0]):
            d[i] = s[i]


@njit(cache=True, nogil=True)
def swap01(src, bias, dst, with_bias):
    """dst[b, a, :] = src[a, b, :] (+ bias[a]) for 3-D arrays (batch-major <-> channel-major)."""
    for t in range(src.shape[0] * src.shape[1]):
        _swap_row(src, bias, dst, t, with_bias)


@njit(cache=True, nogil=True, parallel=True)
def swap01_par(src, bias, dst, with_bias):
    for t in prange(src.shape[0] * src.shape[1]):
        _swap_row(src, bias, dst, t, with_bias)


def _parallel(work: int) -> bool:
    return _threads.use_parallel(work)


def run_im2col(x: np.ndarray, cols: np.ndarray, geo: tuple) -> None:
    par = _parallel(cols.size) and cols.shape[0] > 1
    if cols.shape[4] < _SHORT_ROW:
        x = np.ascontiguousarray(x)
    (im2col_par if par else im2col)(x, cols, geo)


def run_col2im(cols: np.ndarray, out: np.ndarray, geo: tuple) -> None:
    (col2im_par if _parallel(cols.size) else col2im)(cols, out, geo)


def run_swap(src: np.ndarray, dst: np.ndarray, bias: np.ndarray | None = None) -> None:
    """dst = src with its first two axes swapped (+ bias along src's first axis)."""
    if src.size == 0:
        return
    fn = swap01_par if _parallel(src.size) else swap01
    fn(src, src[:, 0, 0] if bias is None else bias, dst, bias is not None)


def _bmm(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``matmul.bmm_into`` with BLAS held serial below ``_SERIAL_GEMM`` multiply-adds: waking
    BLAS's pool right after Numba's (im2col) for a GEMM of a few hundred microseconds gains
    little and, with another process on a core, measured 8.5 ms instead of 0.4 (LeNet's
    6->16 input gradient, 2 threads)."""
    if a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2] < _SERIAL_GEMM and \
            _threads.serial_blas.available():
        with _threads.serial_blas():
            _mm.bmm_into(a, b, out)
    else:
        _mm.bmm_into(a, b, out)


_SERIAL_GEMM = 1 << 25


def _geom(k_sp: tuple, stride, padding, dilation) -> tuple:
    return tuple(map(int, (*k_sp, *stride, *padding, *dilation)))


def conv_forward(x: np.ndarray, w: np.ndarray, bias, stride, padding, dilation, groups: int,
                 out_sp: tuple) -> np.ndarray:
    """y (N, O, *out_sp) = conv(x (N, C, D, H, W), w (O, C/G, kD, kH, kW)) + bias."""
    n, c = x.shape[:2]
    o = w.shape[0]
    kk = w.shape[2] * w.shape[3] * w.shape[4]
    ll = out_sp[0] * out_sp[1] * out_sp[2]
    y = _allocator.empty((n, o, *out_sp), x.dtype)
    if y.size == 0:
        return y
    geo = _geom(w.shape[2:], stride, padding, dilation)
    strategy = _strategy("forward", x.dtype, c, o, groups, w.shape[2:], stride, dilation,
                         x.shape[2:], out_sp)
    if strategy == "winograd":
        _winograd_forward(x, w, bias, y, padding, groups)
        return y
    if strategy == "direct":
        _direct_forward(x, w, bias, y, geo, groups)
        return y
    if x.dtype in _mm._BLAS and c * kk and _per_image(ll, o // groups * (c // groups) * kk * ll):
        _conv_per_image(x, w, bias, y, geo, groups)
        return y
    cols = _allocator.empty((c * kk, n, *out_sp), x.dtype)
    if cols.size:
        run_im2col(x, cols, geo)
    res = _allocator.empty((groups, o // groups, n * ll), x.dtype)
    _bmm(w.reshape(groups, o // groups, -1), cols.reshape(groups, -1, n * ll), res)
    res = res.reshape(o, n, ll)
    y3 = y.reshape(n, o, ll)
    run_swap(res, y3, bias)
    return y


def _per_image(plane: int, macs: int) -> bool:
    """Whether per-image GEMMs (``plane`` output positions, ``macs`` multiply-adds per image
    and group) beat one batched GEMM: small ones pay BLAS's per-call cost 64 times (LeNet's
    4x4 and 8x8 planes: 250 -> 360 us), from 12x12 planes or 1M MACs they win."""
    return (plane >= 128 or macs >= 1 << 20) and _threads.serial_blas.available()


def _image_buffer(planes: np.ndarray, ck: int, sp: tuple, geo) -> tuple:
    """A one-image column buffer (C*K, 1, *sp) and the gather tables of its short rows (empty
    for long ones); ``planes`` is the array whose planes the columns read or write."""
    buf = np.empty((ck, 1, *sp), planes.dtype)
    short = sp[2] < _SHORT_ROW
    return buf, _gather_tables(planes, buf, geo) if short else np.empty((0, 0), np.int64)


def _run_images(serial, parallel, args: tuple, buf: np.ndarray, n: int) -> None:
    """A per-image kernel pair: the parallel one (each thread its own buffer, BLAS serial in
    each) when the work pays, else the serial one with ``buf``. In deterministic mode the
    parallel one always runs, over ``_DET_PARTS`` parts of the images whatever the thread
    count, with BLAS serial (its results depend on its own thread count): the weight
    gradient's partial sums and every GEMM are then the same on any number of threads."""
    if _settings.are_deterministic_algorithms_enabled():
        with _threads.serial_blas():
            parallel(*args, buf, min(n, _DET_PARTS))
    elif n > 1 and _threads.use_parallel(buf.size * n):
        with _threads.serial_blas():
            parallel(*args, buf, numba.get_num_threads())
    else:
        serial(*args, buf)


_DET_PARTS = 8  # image parts of a deterministic per-image run (more parts than threads here)


def _conv_per_image(x, w, bias, y, geo, groups: int) -> None:
    """Forward convolution of float/complex inputs: per image, im2col into a buffer that stays
    in cache and the group GEMMs straight into the (N, O, L) output, with the images split
    over Numba's threads and BLAS serial in each (N=64, 32->64, 32x32: 33 -> 17 ms against
    one batched im2col and one GEMM, and no (C*K, N*L) column matrix)."""
    n, c = x.shape[:2]
    o = w.shape[0]
    x = np.ascontiguousarray(x)
    buf, tab = _image_buffer(x, c * w[0, 0].size, y.shape[2:], geo)
    w3 = np.ascontiguousarray(w).reshape(groups, o // groups, -1)
    b = np.empty(0, x.dtype) if bias is None else np.ascontiguousarray(bias)
    _run_images(conv_images, conv_images_par,
                (x, w3, b, bias is not None, y.reshape(n, o, -1), geo, tab), buf, n)


def conv_transposed(x: np.ndarray, w: np.ndarray, bias, stride, padding, dilation, groups: int,
                    out_sp: tuple) -> np.ndarray:
    """y (N, C, *out_sp) = the adjoint of conv(., w) applied to x (N, O, d, h, w), + bias;
    ``w`` is (O, C/G, kD, kH, kW) (the transposed-conv weight layout)."""
    n, o = x.shape[:2]
    c = w.shape[1] * groups
    kk = w.shape[2] * w.shape[3] * w.shape[4]
    in_sp = x.shape[2:]
    ll = in_sp[0] * in_sp[1] * in_sp[2]
    y = _allocator.empty((n, c, *out_sp), x.dtype)
    if y.size == 0:
        return y
    geo = _geom(w.shape[2:], stride, padding, dilation)
    if all(st == 1 for st in stride) and c and o and all(
            p <= (k - 1) * dl for p, k, dl in zip(padding, w.shape[2:], dilation)):
        # stride 1: the adjoint is the convolution with the flipped, transposed weight
        strategy = _strategy("input", x.dtype, o, c, groups, w.shape[2:], stride, dilation,
                             in_sp, out_sp)
        if strategy != "im2col":
            g_n, og, cg = groups, o // groups, c // groups
            wf = w[:, :, ::-1, ::-1, ::-1].reshape(g_n, og, cg, *w.shape[2:])
            wf = wf.transpose(0, 2, 1, 3, 4, 5).reshape(c, og, *w.shape[2:])
            pads = tuple((k - 1) * dl - p for p, k, dl in zip(padding, w.shape[2:], dilation))
            if strategy == "winograd":
                _winograd_forward(x, wf, bias, y, pads, groups)
            else:
                _direct_forward(x, wf, bias, y, _geom(w.shape[2:], stride, pads, dilation), groups)
            return y
    if x.dtype in _mm._BLAS and kk and _per_image(ll, (o // groups) * (c // groups) * kk * ll):
        buf, tab = _image_buffer(y, c * kk, in_sp, geo)
        x3 = np.ascontiguousarray(x).reshape(n, o, ll)
        w3 = np.ascontiguousarray(w).reshape(groups, o // groups, -1)
        b = np.empty(0, x.dtype) if bias is None else np.ascontiguousarray(bias)
        _run_images(conv_t_images, conv_t_images_par,
                    (x3, w3, b, bias is not None, y, geo, tab), buf, n)
        return y
    xt = _allocator.empty((o, n, ll), x.dtype)
    run_swap(x.reshape(n, o, ll), xt)
    cols = _allocator.empty((c * kk, n, *in_sp), x.dtype)
    og = o // groups
    w3 = w.reshape(groups, og, -1).transpose(0, 2, 1)
    _bmm(w3, xt.reshape(groups, og, n * ll), cols.reshape(groups, -1, n * ll))
    run_col2im(cols, y, geo)
    if bias is not None:
        y += bias.reshape(1, c, 1, 1, 1)
    return y


def conv_weight(x: np.ndarray, g: np.ndarray, k_sp: tuple, stride, padding, dilation,
                groups: int) -> np.ndarray:
    """gW (O, C/G, *k_sp): the weight gradient of conv(x, W) for output gradient g."""
    n, c = x.shape[:2]
    o = g.shape[1]
    out_sp = g.shape[2:]
    kk = k_sp[0] * k_sp[1] * k_sp[2]
    ll = out_sp[0] * out_sp[1] * out_sp[2]
    gw = _allocator.empty((o, c // groups, *k_sp), x.dtype)
    if gw.size == 0:
        return gw
    geo = _geom(k_sp, stride, padding, dilation)
    cg = c // groups
    strategy = _strategy("weight", x.dtype, c, o, groups, k_sp, stride, dilation, x.shape[2:],
                         out_sp) if n * ll and c else "im2col"
    if strategy == "winograd":
        _winograd_weight(x, g, gw, padding, groups)
        return gw
    if strategy == "direct":
        _direct_weight(x, g, gw, geo, groups)
        return gw
    if x.dtype in _mm._BLAS and n * ll and _per_image(ll, (o // groups) * cg * kk * ll):
        x = np.ascontiguousarray(x)
        buf, tab = _image_buffer(x, c * kk, out_sp, geo)
        g3 = np.ascontiguousarray(g).reshape(n, o, ll)
        gwt = np.empty((groups, cg * kk, o // groups), x.dtype)
        _run_images(weight_images, weight_images_par, (x, g3, gwt, geo, tab), buf, n)
        gw.reshape(groups, o // groups, cg * kk)[...] = gwt.transpose(0, 2, 1)
        return gw
    cols = _allocator.empty((c * kk, n, *out_sp), x.dtype)
    if cols.size:
        run_im2col(x, cols, geo)
    gt = _allocator.empty((o, n, ll), x.dtype)
    run_swap(g.reshape(n, o, ll), gt)
    # gW^T = cols @ g^T: BLAS splits the long (C/G*K) side better than the short O/G side
    # (N=64, 32->64, 32x32: 20 -> 17.6 ms); the small transpose back is free
    gwt = _allocator.empty((groups, cg * kk, o // groups), x.dtype)
    _bmm(cols.reshape(groups, cg * kk, n * ll),
                 gt.reshape(groups, o // groups, n * ll).transpose(0, 2, 1), gwt)
    gw.reshape(groups, o // groups, cg * kk)[...] = gwt.transpose(0, 2, 1)
    return gw


# -- strategy choice --------------------------------------------------------------------------

_WINOGRAD_DTYPES = {np.dtype(np.float32), np.dtype(np.float64)}


def _strategy(direction: str, dtype, c: int, o: int, groups: int, k_sp: tuple, stride, dilation,
              in_sp: tuple, out_sp: tuple) -> str:
    """The kernel family of one pass of a convolution, memoised per geometry (a network asks
    the same few every step). ``direction`` is "forward" (y = conv(x)), "input" (the
    stride-1 adjoint, computed as the convolution with the flipped weight: ``c`` and ``o``
    are its own input and output channels, ``in_sp`` the given gradient's and ``out_sp`` the
    input gradient's size) or "weight" (the weight gradient of y = conv(x)):

    - "direct" (``conv_direct``, float32, up to 4608 taps = C/G * kernel): the
      register-blocked micro-kernel, 60-85% of a core's FMA peak with no im2col. Forward:
      1.3-4x faster than im2col + BLAS, and as fast as Winograd or faster on every layer
      measured. Input gradient: the same, unless the adjoint's output is much larger than the
      gradient (5x5 on LeNet's 8x8 planes: most taps on the padding) or its channel block
      mostly empty (see ``_direct_waste``; a looser bound with more than one thread).
      Weight gradient: 1.1-2.2x faster than im2col from 32 taps (C/G * kernel) on, but on
      1x1 kernels over large planes (its operands then stream from L2);
    - "winograd" (``conv_winograd``, 3x3, stride 1, dilation 1, float32/64, at least 16
      channels per group both sides and 36 tiles = 12x12 outputs per image): the weight
      gradient (1.1-1.3x faster than the direct one from 14x14 planes on), and the float64
      forward and input passes;
    - "im2col": the rest (complex, integers, strided adjoints): im2col and BLAS, per image
      or batched.

    Measured on the 2-core Zen 3 box, one thread (perf/benchmarks/conv.py has the layers)."""
    # (deterministic mode keeps one choice on any thread count: the same bits; the pool's
    # size is read from its setting, so that asking does not start Numba's threads)
    threads = not _threads._State.serial and not _settings._State.deterministic and \
        (_threads._State.num_threads or numba.config.NUMBA_NUM_THREADS) > 1
    return _strategy_of(direction, dtype, c, o, groups, tuple(k_sp), tuple(stride),
                        tuple(dilation), tuple(in_sp), tuple(out_sp), _FORCE, threads)


@functools.lru_cache(maxsize=4096)
def _strategy_of(direction, dtype, c, o, groups, k_sp, stride, dilation, in_sp, out_sp,
                 force, threads: bool) -> str:
    cg, og = c // groups, o // groups
    wino = _winograd_geometry(dtype, k_sp, stride, dilation, out_sp)
    direct = dtype == _F32
    if force:  # tests: the forced family wherever it can run
        return force if force == "winograd" and wino or force == "direct" and direct else \
            "im2col"
    kk = k_sp[0] * k_sp[1] * k_sp[2]
    tiles = ((out_sp[1] + 1) // 2) * ((out_sp[2] + 1) // 2)
    wino = wino and min(cg, og) >= _WINO_MIN_CHANNELS and tiles >= _WINO_MIN_TILES
    direct = direct and cg * kk <= _DIRECT_MAX_TAPS
    if direction == "weight":
        few = cg * kk < _DIRECT_MIN_WEIGHT_TAPS and \
            math.prod(out_sp) * o * cg * kk >= _IM2COL_MIN_IMAGE_MACS
        return "winograd" if wino else "direct" if direct and kk > 1 and not few else "im2col"
    max_waste = _MAX_WASTE_THREADS if threads else _MAX_WASTE
    if direct and (direction == "forward" or _direct_waste(og, in_sp, out_sp) <= max_waste):
        return "direct"
    return "winograd" if wino else "im2col"


_FORCE = ""  # tests: "im2col", "direct" or "winograd" for every geometry it can run
_F32 = np.dtype(np.float32)
_DIRECT_MAX_TAPS = 4608  # 512 channels x 3x3: the weight block (taps x 16 x 4 bytes) in L2
# A direct weight gradient blocks the taps (C/G * kernel) by 6-8 and streams every position's
# gradient once per block; with fewer taps than this the transposed and padded copies it makes
# cost more than im2col's, and its few items leave a thread idle. im2col + GEMM against direct,
# one and two threads, N=64: 1->6 5x5 on 28x28 312-374 against 538-547 us, 3->16 3x3 on 32x32
# 643-884 against 2100, 1->32 3x3 on 28x28 450 against 2035, 2->16 3x3 on 16x16 200-350
# against 306-324; at 36 taps (4->16) 375-437 against 409-411, at 150 (6->16 5x5) 508-553
# against 255-259
_DIRECT_MIN_WEIGHT_TAPS = 32
# ... where an image's multiply-adds (positions x O x taps) are this many: a smaller layer (the
# demo CNN's conv1, 1->16 3x3 on 8x8: 9k) keeps the direct pass, 30 us a step slower (88
# against 56 us), as im2col's first call would compile it and its transposes (1.5 s of a cold
# first training step)
_IM2COL_MIN_IMAGE_MACS = 1 << 15
_WINO_MIN_CHANNELS = 16  # per group: fewer make each of the 16 GEMMs too thin
_WINO_MIN_TILES = 36  # per image (12x12 outputs): below, the direct weight gradient is faster


def _winograd_geometry(dtype, k_sp, stride, dilation, out_sp) -> bool:
    """Whether ``conv_winograd`` can run the geometry (2-D 3x3, stride 1, dilation 1)."""
    return dtype in _WINOGRAD_DTYPES and k_sp == (1, 3, 3) and out_sp[0] == 1 and \
        stride[1:] == (1, 1) and dilation[1:] == (1, 1) and _threads.serial_blas.available()


def _direct_waste(og: int, in_sp: tuple, out_sp: tuple) -> float:
    """Multiply-adds a direct input gradient (or stride-1 transposed convolution, ``og``
    output channels per group) computes per useful one: every output position of the adjoint
    runs every tap, most of them on the padding where its output is larger than its input
    (LeNet's 5x5 on 8x8 planes: 2.25x), and the micro-kernel's channel block may be part
    empty (6 of 8)."""
    ob = _dc.block_shape(og)[0]
    return (math.prod(out_sp) / max(1, math.prod(in_sp))) * (-(-og // ob) * ob / og)


_MAX_WASTE = 1.5  # above: GEMM + col2im (LeNet 6->16 5x5's input gradient: 1.54 -> 0.8 ms)
# With more than one thread the direct pass splits over them while GEMM + col2im gains little
# from a second one (its col2im is a scatter bound by memory, its GEMM held serial): paired
# in-process on two threads, direct / GEMM + col2im was 0.72-0.85 at LeNet 6->16's waste of
# 3.0 (610-628 against 751-824 us), 0.79 at 2.25 (16->32 5x5, 12x12), 0.42-0.73 at 1.56-1.78,
# 0.95 at 4.0 and 1.0-1.09 at 1.81 (5x5 'same'-like padding 1 on 14x14); on one thread 1.10 at
# 3.0, so one thread keeps the bound above.
_MAX_WASTE_THREADS = 3.0


_WINO_BLOCK_BYTES = 1 << 19  # transformed input + output tiles of one block of tile rows


def _wino_rows(c: int, o: int, tw: int, itemsize: int) -> int:
    """Tile rows per block: the block's transformed tiles (16 x (C + O) x tiles) stay in L2."""
    return max(1, _WINO_BLOCK_BYTES // (16 * (c + o) * tw * itemsize))


def _winograd_forward(x, w, bias, y, padding, groups: int) -> None:
    """y (N, O, 1, OH, OW) = conv3x3(x (N, C, 1, H, W), w (O, C/G, 1, 3, 3)) + bias, stride 1,
    through ``conv_winograd`` (leading pads ``padding[1:]``)."""
    n, c = x.shape[:2]
    o = w.shape[0]
    x4 = np.ascontiguousarray(x).reshape(n, c, x.shape[3], x.shape[4])
    y4 = y.reshape(n, o, y.shape[3], y.shape[4])
    wh = np.empty((16, groups, o // groups, c // groups), x.dtype)
    _wg.weight_tiles(np.ascontiguousarray(w.reshape(o, c // groups, 3, 3)), wh)
    b = np.empty(0, x.dtype) if bias is None else np.ascontiguousarray(bias)
    rows = _wino_rows(c, o, (y4.shape[3] + 1) // 2, x.dtype.itemsize)
    args = (x4, wh, b, bias is not None, y4, int(padding[1]), int(padding[2]), rows)
    _run_split(_wg.forward, _wg.forward_par, args, n, y.size)


def _winograd_weight(x, g, gw, padding, groups: int) -> None:
    """gw (O, C/G, 1, 3, 3) = the weight gradient of a 3x3 stride-1 convolution through
    ``conv_winograd``: per-part transformed sums, added and transformed back."""
    n, c = x.shape[:2]
    o = g.shape[1]
    x4 = np.ascontiguousarray(x).reshape(n, c, x.shape[3], x.shape[4])
    g4 = np.ascontiguousarray(g).reshape(n, o, g.shape[3], g.shape[4])
    rows = _wino_rows(c, o, (g4.shape[3] + 1) // 2, x.dtype.itemsize)
    parts = _parts(n, x.size + g.size)
    acc = np.empty((parts, 16, groups, o // groups, c // groups), x.dtype)
    args = (x4, g4, acc, int(padding[1]), int(padding[2]), rows)
    _run_split(_wg.weight, _wg.weight_par, args, n, x.size + g.size, parts)
    _wg.weight_untiles(acc, gw.reshape(o, c // groups, 3, 3))


def _direct_forward(x, w, bias, y, geo: tuple, groups: int) -> None:
    """y (N, O, *out_sp) = conv(x, w) + bias through ``conv_direct``'s micro-kernel (float32)."""
    n, c = x.shape[:2]
    o = w.shape[0]
    cg, og = c // groups, o // groups
    kk = w.shape[2] * w.shape[3] * w.shape[4]
    n_pos = y.shape[2] * y.shape[3] * y.shape[4]
    ob, pb = _dc.block_shape(og, n_pos)
    n_ob = (og + ob - 1) // ob
    padded, pos, off, _ = _direct_tables(cg, geo, x.shape[2:], y.shape[2:], pb)
    w3 = np.ascontiguousarray(w).reshape(o, cg, kk)
    if og % ob == 0:  # whole blocks: one transposed copy (NumPy's is as fast as a kernel's,
        # 1-4 us, and a first convolution skips ``weight_blocks``'s 0.5-0.75 s cold compile)
        wt = np.ascontiguousarray(w3.reshape(groups, n_ob, ob, cg * kk).transpose(0, 1, 3, 2))
        bt = np.zeros(o, np.float32) if bias is None else np.ascontiguousarray(bias)
    else:  # the last block of each group part empty
        wt = np.empty((groups, n_ob, cg * kk, ob), np.float32)
        bt = np.empty((groups, n_ob, ob), np.float32)
        _dc.weight_blocks(w3, np.empty(0, np.float32) if bias is None else
                          np.ascontiguousarray(bias), bias is not None, wt, bt)
    xp = np.empty((c, *padded), _F32)
    chunk = _DIRECT_CHUNK if n_ob > 1 else n_pos
    chunk = -(-min(chunk, n_pos) // pb) * pb
    items = _dc.forward_items(n, groups, n_pos, chunk)
    args = (np.ascontiguousarray(x), xp, pos, off[:cg * kk], wt, bt.reshape(-1), y, chunk,
            items, geo[6:9], pb)
    wide = _dc.wide_forward(ob, pb)
    if items > 1 and _threads.use_parallel(y.size * cg * kk // _MACS_PER_ELEMENT):
        (_dc.forward_par_wide if wide else _dc.forward_par)(*args,
                                                            min(items, numba.get_num_threads()))
    else:
        (_dc.forward_wide if wide else _dc.forward)(*args)


_DIRECT_CHUNK = 256  # output positions whose input rows serve every block of output channels
# The micro-kernel's multiply-adds that count as one element of ``use_parallel``'s grain: a
# direct pass splits over the threads from 1M (about 30 us on one core): the demo CNN's and
# LeNet's layers (0.1-0.5 ms) take 1.3-1.5x longer than torch's on one thread of two.
_MACS_PER_ELEMENT = 8


def _direct_pad(x, geo: tuple, padded: tuple) -> np.ndarray:
    """The zero-padded input (N, C, *padded) of a direct weight gradient: a zeroed buffer
    (calloc) and one strided copy of the input into it. Zeroing only the borders, a copy per
    border slab, cost 1.05-1.7x as much (N=64: 16 x 4x4 planes, the demo CNN's conv2, 39
    against 23 us; 32 x 32x32 666 against 638; N=8, 64 x 56x56 434 against 354). A compiled
    loop over rows was faster on some (17 and 253 us) and slower on others (764 on 32x32)."""
    xp = np.zeros((*x.shape[:2], *padded), _F32)
    pd, ph, pw = geo[6:9]
    d, h, w = x.shape[2:]
    xp[:, :, pd:pd + d, ph:ph + h, pw:pw + w] = x
    return xp


def _direct_weight(x, g, gw, geo: tuple, groups: int) -> None:
    """gw (O, C/G, *k_sp) = the weight gradient through ``conv_direct``'s micro-kernel: blocks
    of taps x output channels summed over all the images' positions (float32)."""
    n, c = x.shape[:2]
    o = g.shape[1]
    cg, og = c // groups, o // groups
    kk = gw.shape[2] * gw.shape[3] * gw.shape[4]
    ob, pb = _dc.block_shape(og, weight=True)
    padded, _, off, rows = _direct_tables(cg, geo, x.shape[2:], g.shape[2:], pb, n, c)
    xp = _direct_pad(x, geo, padded)
    n_pos = g.shape[2] * g.shape[3] * g.shape[4]
    # the gradient channels-last, with a block of zero channels past O where the last block of
    # a group's channels is part empty (the micro-kernel reads whole blocks; where every block
    # is whole, zeroing the pad cost 17 us of the demo CNN's 64 x 16 x 8 x 8 gradient)
    pad = 0 if og % ob == 0 else ob
    gt = _allocator.empty((n * n_pos, o + pad), _F32)
    gt3 = gt.reshape(n, n_pos, o + pad)
    gt3[:, :, :o] = g.reshape(n, o, n_pos).transpose(0, 2, 1)  # (NumPy's strided copy)
    if pad:
        gt3[:, :, o:] = 0
    gwt = np.empty((off.shape[0], o + ob), np.float32)
    items = _dc.weight_items(groups, og, ob, off.shape[0])
    nt = numba.get_num_threads()
    par = items >= _WEIGHT_ITEMS_PER_THREAD * nt and \
        _threads.use_parallel(n * n_pos * cg * kk * o // _WEIGHT_MACS_PER_ELEMENT)
    chunk = max(256, _DIRECT_ROWS_BYTES // (4 * (c + o)))
    args = (xp.reshape(-1), rows, off, gt, np.zeros(ob, np.float32), gwt, groups, ob,
            cg * padded[0] * padded[1] * padded[2], chunk, items)
    if par:
        _dc.weight_par(*args, min(items, nt))
    else:
        _dc.weight(*args)
    gw.reshape(o, cg * kk)[...] = gwt[:cg * kk, :o].T


_DIRECT_ROWS_BYTES = 1 << 18  # a weight gradient's block of rows: input and gradient in L2
# The direct weight gradient splits its items (blocks of taps x output channels) over the
# threads, each streaming every row: with few items per thread or little work that is slower
# than one thread (LeNet's 1->6: 1.0 ms against 0.67, the demo's 16->32: 0.30 against 0.21)
_WEIGHT_ITEMS_PER_THREAD = 8
_WEIGHT_MACS_PER_ELEMENT = 128


@functools.lru_cache(maxsize=128)  # with a weight gradient's row table: N*L entries
def _direct_tables(cg: int, geo: tuple, in_sp: tuple, out_sp: tuple, pb: int, n: int = 0,
                   c: int = 0) -> tuple:
    """(padded plane sizes, position table, tap table, row table) of a direct geometry: the
    padded image holds the leading pads, the input, and every tap's reach; the row table
    (the weight gradient's, for ``n`` images of ``c`` channels) each image's positions."""
    kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw = geo
    padded = (max(in_sp[0] + pd, (out_sp[0] - 1) * sd + (kd - 1) * dd + 1),
              max(in_sp[1] + ph, (out_sp[1] - 1) * sh + (kh - 1) * dh + 1),
              max(in_sp[2] + pw, (out_sp[2] - 1) * sw + (kw - 1) * dw + 1))
    pos = _dc.positions(geo, padded, out_sp, pb)
    off = _dc.tap_offsets(cg, geo, padded, pb)
    n_pos = out_sp[0] * out_sp[1] * out_sp[2]
    rows = _dc.row_offsets(pos, n, n_pos, c * padded[0] * padded[1] * padded[2]) if n else pos
    for a in (pos, off, rows):
        a.flags.writeable = False
    return padded, pos, off, rows


def _parts(n: int, work: int) -> int:
    """How many image parts a per-image kernel pair runs over (see ``_run_split``)."""
    if _settings.are_deterministic_algorithms_enabled():
        return min(n, _DET_PARTS)
    if n > 1 and _threads.use_parallel(work):
        return min(n, numba.get_num_threads())
    return 1


def _run_split(serial, parallel, args: tuple, n: int, work: int, parts: int = 0) -> None:
    """A per-image kernel pair: the parallel one over ``parts`` image parts (BLAS serial in
    each thread) where the work pays or deterministic mode asks for a fixed split (as
    ``_run_images``), else the serial one."""
    parts = parts or _parts(n, work)
    if parts > 1 or _settings.are_deterministic_algorithms_enabled():
        with _threads.serial_blas():
            parallel(*args, parts)
    else:
        serial(*args)


def unfold(x: np.ndarray, k_sp: tuple, stride, padding, dilation, blocks: tuple) -> np.ndarray:
    """im2col in torch's unfold layout: (N, C*K, L) from x (N, C, D, H, W)."""
    n, c = x.shape[:2]
    kk = k_sp[0] * k_sp[1] * k_sp[2]
    ll = blocks[0] * blocks[1] * blocks[2]
    out = _allocator.empty((n, c * kk, ll), x.dtype)
    if out.size:
        cols = _allocator.empty((c * kk, n, *blocks), x.dtype)
        run_im2col(x, cols, _geom(k_sp, stride, padding, dilation))
        run_swap(cols.reshape(c * kk, n, ll), out)
    return out


def fold(x: np.ndarray, out_sp: tuple, k_sp: tuple, stride, padding, dilation,
         blocks: tuple) -> np.ndarray:
    """col2im from torch's fold layout: (N, C, *out_sp) from x (N, C*K, L)."""
    n, ck, ll = x.shape
    kk = k_sp[0] * k_sp[1] * k_sp[2]
    out = _allocator.empty((n, ck // kk, *out_sp), x.dtype)
    if out.size == 0:
        return out
    if x.size == 0:
        out[...] = 0
        return out
    cols = _allocator.empty((ck, n, *blocks), x.dtype)
    run_swap(np.ascontiguousarray(x), cols.reshape(ck, n, ll))
    run_col2im(cols, out, _geom(k_sp, stride, padding, dilation))
    return out
