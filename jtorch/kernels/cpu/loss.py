"""Loss kernels: nll_loss forward and backward over (N, C), and the class-index target check
of the K-dimensional nll_loss in one pass.

torch validates targets inside its NLL kernel; composed of tensor ops the same check took six
pointwise kernels, a reduction and a masked fill per call, more than the loss itself on a
training batch.
"""

from __future__ import annotations

import numba


@numba.njit(cache=True, nogil=True)
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


@numba.njit(cache=True, nogil=True)
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


@numba.njit(cache=True, nogil=True)
def nll_backward(g, per_row, target, weight, has_weight, ignore_index, scale, gi):
    """gi (N, C) = 0 except gi[n, t] = -weight[t] * g * scale for counted targets (g[n] when
    ``per_row``, else g[0])."""
    gi[:] = 0
    for n in range(gi.shape[0]):
        t = numba.int64(target[n])
        if t == ignore_index or t < 0 or t >= gi.shape[1]:
            continue
        w = weight[t] if has_weight else gi.dtype.type(1)
        gv = g[n] if per_row else g[0]
        gi[n, t] = -w * gv * scale
