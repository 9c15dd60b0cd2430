"""Loss kernels: nll_loss forward and backward over (N, C), and the class-index target check
of the K-dimensional nll_loss in one pass.

torch validates targets inside its NLL kernel; composed of tensor ops the same check took six
pointwise kernels, a reduction and a masked fill per call, more than the loss itself on a
training batch.
"""

from __future__ import annotations

import numba
import numpy as np

from ... import dtypes as _dt
from ...tensor import Tensor
from ..jit import njit


@njit(cache=True, nogil=True)
def nll_targets(target, ignore_index, n_classes, valid, safe):
    """valid = target != ignore_index; safe = target where valid, else 0 (int64); all flat.
    Returns the position of the first valid target outside [0, n_classes), or -1."""
    bad = -1
    for i in range(target.shape[0]):
        t = numba.int64(target[i])
        v = t != ignore_index
        valid[i] = v
        safe[i] = t if v else 0
        if v and (t < 0 or t >= n_classes) and bad < 0:
            bad = i
    return bad


@njit(cache=True, nogil=True)
def nll_forward(x, target, weight, has_weight, ignore_index, losses):
    """x (N, C), target (N,); losses (N,) = -weight[t] * x[n, t], 0 where t == ignore_index.
    Returns (the sum of the losses, the summed weight of the counted targets, the position
    of the first target outside [0, C) or -1); sums in float64."""
    n_classes = x.shape[1]
    total = 0.0
    total_weight = 0.0
    bad = -1
    zero = losses.dtype.type(0)
    for n in range(x.shape[0]):
        t = numba.int64(target[n])
        if t == ignore_index:
            losses[n] = zero
            continue
        if t < 0 or t >= n_classes:
            if bad < 0:
                bad = n
            losses[n] = zero
            continue
        w = weight[t] if has_weight else x.dtype.type(1)
        v = -x[n, t] * w
        losses[n] = v
        total += v
        total_weight += w
    return total, total_weight, bad


@njit(cache=True, nogil=True)
def nll_backward(g, per_row, target, weight, has_weight, ignore_index, mean, gi):
    """gi (N, C) = 0 except gi[n, t] = -weight[t] * g * scale for counted targets (g[n] when
    ``per_row``, else g[0]); scale is 1, or with ``mean`` 1 / the counted targets' summed
    weight, summed as the forward sums it (NaN when it is 0)."""
    scale = gi.dtype.type(1)
    if mean:
        tw = 0.0
        for n in range(gi.shape[0]):
            t = numba.int64(target[n])
            if t != ignore_index and t >= 0 and t < gi.shape[1]:
                tw += weight[t] if has_weight else gi.dtype.type(1)
        scale = gi.dtype.type(1.0 / tw if tw else np.nan)
    gi[:] = 0
    for n in range(gi.shape[0]):
        t = numba.int64(target[n])
        if t == ignore_index or t < 0 or t >= gi.shape[1]:
            continue
        w = weight[t] if has_weight else gi.dtype.type(1)
        gv = g[n] if per_row else g[0]
        gi[n, t] = -w * gv * scale


# -- kernel entries (``defs/loss.py``): (plan, *tensors) -> Tensor(s) ----------------------------

def _compute(d) -> np.dtype:
    """The NumPy dtype a loss kernel computes in: 16-bit floats run in float32 (Numba has no
    half types)."""
    return np.dtype(np.float32) if d in _dt.HALF else d.np


def _rows(x: np.ndarray, ct: np.dtype) -> np.ndarray:
    """(N, C) or (C,) as a contiguous (rows, C) array of dtype ``ct``."""
    return np.ascontiguousarray(x, ct).reshape(-1, x.shape[-1])


def _weights(weight, ct: np.dtype) -> np.ndarray:
    """The class weights as a flat array of ``ct`` (an empty one when there are none)."""
    if weight is not None:
        return np.ascontiguousarray(weight._a, ct).reshape(-1)
    w = _NO_WEIGHT.get(ct)
    if w is None:
        w = _NO_WEIGHT[ct] = np.empty(0, ct)
    return w


_NO_WEIGHT: dict = {}


def _nll(plan, x2: np.ndarray, target: np.ndarray, weight, shape: tuple) -> Tensor:
    """The forward kernel over rows ``x2`` (one target each): the loss tensor of ``plan``
    (per-row losses of ``shape``, their sum, or their weighted mean)."""
    t = target.reshape(-1) if target.flags.c_contiguous else np.ascontiguousarray(target).reshape(-1)
    losses = np.empty(x2.shape[0], x2.dtype)
    total, tw, bad = nll_forward(x2, t, _weights(weight, x2.dtype), weight is not None,
                                 plan.kw["ignore_index"], losses)
    if bad >= 0:
        raise IndexError(f"Target {int(t[bad])} is out of bounds.")
    d = plan.out.dtype
    red = plan.kw["reduction"]
    if red == "none":
        a = losses.reshape(shape)
        if a.dtype != d.np:
            a = a.astype(d.np)
        return Tensor._make(a, None, d)
    if red == "mean":
        total = np.float64(total) / tw if tw else np.nan
    st = np.empty(1, d.np)
    st[0] = total
    return Tensor._make(st.reshape(()), st, d)


def nll_loss_cpu(plan, input, target, weight) -> Tensor:
    return _nll(plan, _rows(input._a, _compute(input.dtype)), target._a, weight, plan.out.shape)


def nll_loss2d_cpu(plan, input, target, weight) -> Tensor:
    x = input._a  # (N, C, H, W): the class dim last, one row per pixel
    x2 = np.ascontiguousarray(np.moveaxis(x, 1, -1), _compute(input.dtype)).reshape(-1, x.shape[1])
    return _nll(plan, x2, target._a, weight, plan.out.shape)


def _nll_backward(plan, grad, target, weight, rows: int, n_classes: int) -> np.ndarray:
    ct = _compute(grad.dtype)
    a = np.ascontiguousarray(grad._a, ct).reshape(-1)
    t = target._a
    t = t.reshape(-1) if t.flags.c_contiguous else np.ascontiguousarray(t).reshape(-1)
    gi = np.empty((rows, n_classes), ct)
    red = plan.kw["reduction"]
    nll_backward(a, red == "none", t, _weights(weight, ct), weight is not None,
                 plan.kw["ignore_index"], red == "mean", gi)
    return gi


def nll_loss_backward_cpu(plan, grad, input, target, weight) -> Tensor:
    shape = input._a.shape
    n = 1
    for s in shape[:-1]:
        n *= s
    gi = _nll_backward(plan, grad, target, weight, n, shape[-1])
    d = plan.out.dtype
    if gi.dtype != d.np:
        gi = gi.astype(d.np)
    return Tensor._make(gi.reshape(shape), None, d)


def nll_loss2d_backward_cpu(plan, grad, input, target, weight) -> Tensor:
    n, c, h, w = input._a.shape
    gi = _nll_backward(plan, grad, target, weight, n * h * w, c)
    d = plan.out.dtype
    a = np.ascontiguousarray(np.moveaxis(gi.reshape(n, h, w, c), -1, 1), d.np)
    return Tensor._make(a, None, d)


def binary_cross_entropy_cpu(plan, input, target, weight) -> Tensor:
    """-(t log x + (1 - t) log(1 - x)), each log clamped at -100, times the weight; reduced."""
    x = input._a
    if not ((x >= 0) & (x <= 1)).all():
        raise RuntimeError("all elements of input should be between 0 and 1")
    out = plan.out
    d = out.dtype
    ct = _compute(d)
    xc, tc = x.astype(ct, copy=False), target._a.astype(ct, copy=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        loss = (tc - 1) * np.maximum(np.log1p(-xc), -100) - tc * np.maximum(np.log(xc), -100)
    if weight is not None:
        loss = loss * weight._a.astype(ct, copy=False)
    red = plan.kw["reduction"]
    if red == "none":
        a = _empty(out.shape, d.np, out.strides)
        np.copyto(a, loss, casting="unsafe")
        return Tensor._make(a, None, d)
    total = loss.sum(dtype=np.float64)
    if red == "mean":
        total = total / loss.size if loss.size else np.nan
    return Tensor._make(np.array(total, d.np), None, d)


def _empty(shape: tuple, dt: np.dtype, strides: tuple | None) -> np.ndarray:
    """An uninitialised array of element ``strides`` (a permutation of a dense layout)."""
    if strides is None:
        return np.empty(shape, dt)
    order = sorted(range(len(shape)), key=lambda i: -strides[i])
    buf = np.empty(tuple(shape[i] for i in order), dt)
    return buf.transpose([order.index(i) for i in range(len(shape))])
