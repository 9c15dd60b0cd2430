"""Convolution kernels: im2col, col2im and channel/batch swaps around one batched GEMM.

Every convolution is run in 3-D form: inputs are (N, C, D, H, W) arrays (conv1d/2d views add
size-1 spatial dims) and weights (O, C/groups, kD, kH, kW). The column matrix is laid out
(C*K, N, oD, oH, oW) with K = kD*kH*kW, so that group g's rows are one contiguous block and
``cols.reshape(G, C/G*K, N*L)`` feeds one batched GEMM over groups (``matmul.bmm_into``: BLAS
inside Numba for float/complex dtypes, a compiled loop for integers) with the whole batch in
its columns. The GEMM result is (O, N, L); one parallel swap (with the bias added) makes it
(N, O, L). A per-image loop of small GEMMs would alternate Numba's thread pool with BLAS's
once per image, which costs far more than the swap.

    forward                  cols = im2col(x);  out(O, NL) = W @ cols;  y = swap(out) + b
    transposed / grad input  cols = W^T @ swap(x);  y = col2im(cols)
    grad weight              gW = swap(g) @ im2col(x)^T

im2col and col2im are parallel over independent rows (col2im over output planes, so its
accumulation has no races); the padded border is handled by clipping each row's index range
rather than testing every element, so the interior copy is a plain strided loop.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import prange

from ... import _allocator
from . import matmul as _mm


@numba.njit(cache=True, nogil=True, inline="always")
def _span(o_len, stride, offset, size):
    """[lo, hi) of output indices o with 0 <= o*stride + offset < size."""
    lo = 0
    if offset < 0:
        lo = (-offset + stride - 1) // stride
    hi = 0
    if size - offset > 0:
        hi = (size - offset + stride - 1) // stride
    if hi > o_len:
        hi = o_len
    if lo > hi:
        lo = hi
    return lo, hi


@numba.njit(cache=True, nogil=True, parallel=True)
def im2col(x, cols, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """cols[(c, i, j, l), n, od, oh, ow] = x[n, c, od*sd-pd+i*dd, oh*sh-ph+j*dh, ow*sw-pw+l*dw]
    (zero outside x). ``cols`` may be any strided view of shape (C*K, N, oD, oH, oW)."""
    n_img, n_ch, d_in, h_in, w_in = x.shape
    o_d, o_h, o_w = cols.shape[2], cols.shape[3], cols.shape[4]
    kk = kd * kh * kw
    zero = 0
    for t in prange(n_ch * kk * n_img):
        r = t // n_img
        n = t - r * n_img
        c = r // kk
        k = r - c * kk
        i = k // (kh * kw)
        j = (k // kw) % kh
        l = k % kw
        w_lo, w_hi = _span(o_w, sw, l * dw - pw, w_in)
        for od in range(o_d):
            z = od * sd - pd + i * dd
            for oh in range(o_h):
                y = oh * sh - ph + j * dh
                dst = cols[r, n, od, oh]
                if z < 0 or z >= d_in or y < 0 or y >= h_in:
                    for ow in range(o_w):
                        dst[ow] = zero
                    continue
                src = x[n, c, z, y]
                for ow in range(w_lo):
                    dst[ow] = zero
                base = l * dw - pw
                if sw == 1:  # a plain copy LLVM vectorises
                    for ow in range(w_lo, w_hi):
                        dst[ow] = src[ow + base]
                else:
                    for ow in range(w_lo, w_hi):
                        dst[ow] = src[ow * sw + base]
                for ow in range(w_hi, o_w):
                    dst[ow] = zero


@numba.njit(cache=True, nogil=True, parallel=True)
def col2im(cols, out, kd, kh, kw, sd, sh, sw, pd, ph, pw, dd, dh, dw):
    """The adjoint of ``im2col``: out[n, c] = sum of the column entries that read it.
    ``out`` (N, C, D, H, W) is overwritten; each (n, c) plane is one task, so no races."""
    n_img, n_ch, d_in, h_in, w_in = out.shape
    o_d, o_h, o_w = cols.shape[2], cols.shape[3], cols.shape[4]
    kk = kd * kh * kw
    for t in prange(n_img * n_ch):
        n = t // n_ch
        c = t - n * n_ch
        plane = out[n, c]
        for z in range(d_in):
            for y in range(h_in):
                for xx in range(w_in):
                    plane[z, y, xx] = 0
        for k in range(kk):
            r = c * kk + k
            i = k // (kh * kw)
            j = (k // kw) % kh
            l = k % kw
            base = l * dw - pw
            w_lo, w_hi = _span(o_w, sw, base, w_in)
            for od in range(o_d):
                z = od * sd - pd + i * dd
                if z < 0 or z >= d_in:
                    continue
                for oh in range(o_h):
                    y = oh * sh - ph + j * dh
                    if y < 0 or y >= h_in:
                        continue
                    src = cols[r, n, od, oh]
                    dst = plane[z, y]
                    if sw == 1:
                        for ow in range(w_lo, w_hi):
                            dst[ow + base] += src[ow]
                    else:
                        for ow in range(w_lo, w_hi):
                            dst[ow * sw + base] += src[ow]


@numba.njit(cache=True, nogil=True, parallel=True)
def swap01(src, dst):
    """dst[b, a, :] = src[a, b, :] for 3-D arrays (batch-major <-> channel-major)."""
    na, nb, m = src.shape
    for t in prange(na * nb):
        a = t // nb
        b = t - a * nb
        s = src[a, b]
        d = dst[b, a]
        for i in range(m):
            d[i] = s[i]


@numba.njit(cache=True, nogil=True, parallel=True)
def swap01_bias(src, bias, dst):
    """dst[n, o, :] = src[o, n, :] + bias[o]."""
    no, nn, m = src.shape
    for t in prange(no * nn):
        o = t // nn
        n = t - o * nn
        s = src[o, n]
        d = dst[n, o]
        bo = bias[o]
        for i in range(m):
            d[i] = s[i] + bo


def _geom(w_shape: tuple, stride, padding, dilation) -> tuple:
    return (*w_shape[2:], *stride, *padding, *dilation)


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
    cols = _allocator.empty((c * kk, n, *out_sp), x.dtype)
    if cols.size:
        im2col(x, cols, *_geom(w.shape, stride, padding, dilation))
    res = _allocator.empty((groups, o // groups, n * ll), x.dtype)
    _mm.bmm_into(w.reshape(groups, o // groups, -1), cols.reshape(groups, -1, n * ll), res)
    res = res.reshape(o, n, ll)
    y3 = y.reshape(n, o, ll)
    if bias is None:
        swap01(res, y3)
    else:
        swap01_bias(res, bias, y3)
    return y


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
    xt = _allocator.empty((o, n, ll), x.dtype)
    swap01(x.reshape(n, o, ll), xt)
    cols = _allocator.empty((c * kk, n, *in_sp), x.dtype)
    og = o // groups
    w3 = w.reshape(groups, og, -1).transpose(0, 2, 1)
    _mm.bmm_into(w3, xt.reshape(groups, og, n * ll), cols.reshape(groups, -1, n * ll))
    col2im(cols, y, *_geom(w.shape, stride, padding, dilation))
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
    cols = _allocator.empty((c * kk, n, *out_sp), x.dtype)
    if cols.size:
        im2col(x, cols, *k_sp, *stride, *padding, *dilation)
    gt = _allocator.empty((o, n, ll), x.dtype)
    if gt.size:
        swap01(g.reshape(n, o, ll), gt)
    cg = c // groups
    _mm.bmm_into(gt.reshape(groups, o // groups, n * ll),
                 cols.reshape(groups, cg * kk, n * ll).transpose(0, 2, 1),
                 gw.reshape(groups, o // groups, cg * kk))
    return gw
