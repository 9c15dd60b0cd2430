"""CTC loss kernels: the forward (alpha) recursion in log space and the gradient from the
backward (beta) recursion, as ATen's ``ctc_loss_cpu_template`` and
``ctc_loss_backward_cpu_template`` write them (Graves et al., 2006, eqs. 6-8 and 16).

Targets arrive flat (int64) with each batch item's offset, so padded (N, S) and concatenated
targets share one kernel; ``l'`` is the target with blanks around and between its labels, of
length 2 * target_length + 1. Batch items are independent: the parallel variants run ``prange``
over them. Sums are taken in float64 whatever the dtype (torch's float kernel keeps float).
"""

from __future__ import annotations

import math

import numpy as np
from numba import prange

from ... import _threads
from ...tensor import Tensor
from ..jit import njit

_NEGINF = -math.inf


def _prime(tg, off, s, blank):
    """The label at position ``s`` of the blank-extended target."""
    return blank if s % 2 == 0 else tg[off + s // 2]


_prime_j = njit(cache=True, nogil=True, inline="always")(_prime)


def _lse3(a, b, c):
    m = max(a, max(b, c))
    if m == _NEGINF:  # no -inf - -inf
        m = 0.0
    return math.log(math.exp(a - m) + math.exp(b - m) + math.exp(c - m)) + m


_lse3_j = njit(cache=True, nogil=True, inline="always")(_lse3)


def _alpha_item(lp, tg, offs, il, tl, blank, la, nll, bad, b):
    """log_alpha[b] and nll[b]; ``bad[b]`` = 1 where a used target is not a class index."""
    n_t, width, n_c = la.shape[1], la.shape[2], lp.shape[2]
    off, t_in, t_len = offs[b], il[b], tl[b]
    for t in range(n_t):
        for s in range(width):
            la[b, t, s] = _NEGINF
    for j in range(t_len):
        v = tg[off + j]
        if v < 0 or v >= n_c:
            bad[b] = 1
            nll[b] = math.nan
            return
    if t_in == 0:
        nll[b] = -0.0 if t_len == 0 else math.inf
        return
    la[b, 0, 0] = lp[0, b, blank]
    if t_len > 0:
        la[b, 0, 1] = lp[0, b, tg[off]]
    for t in range(1, t_in):
        for s in range(2 * t_len + 1):
            cur = _prime_j(tg, off, s, blank)
            a1 = la[b, t - 1, s]
            a2 = la[b, t - 1, s - 1] if s > 0 else _NEGINF
            a3 = _NEGINF
            if s > 1 and _prime_j(tg, off, s - 2, blank) != cur:
                a3 = la[b, t - 1, s - 2]
            la[b, t, s] = _lse3_j(a1, a2, a3) + lp[t, b, cur]
    if t_len == 0:
        nll[b] = -la[b, t_in - 1, 0]
        return
    nll[b] = -_lse3_j(la[b, t_in - 1, 2 * t_len], la[b, t_in - 1, 2 * t_len - 1], _NEGINF)


_alpha_j = njit(cache=True, nogil=True, inline="always")(_alpha_item)


@njit(cache=True, nogil=True)
def ctc_alpha(lp, tg, offs, il, tl, blank, la, nll, bad):
    for b in range(lp.shape[1]):
        _alpha_j(lp, tg, offs, il, tl, blank, la, nll, bad, b)


@njit(cache=True, nogil=True, parallel=True)
def ctc_alpha_par(lp, tg, offs, il, tl, blank, la, nll, bad):
    for b in prange(lp.shape[1]):
        _alpha_j(lp, tg, offs, il, tl, blank, la, nll, bad, b)


def _grad_item(g, lp, tg, offs, il, tl, blank, la, nll, zero_infinity, lb, gi, b):
    """gi[:, b] = (exp(lp) - exp(log(alpha beta) + nll - lp)) * g[b] for t < il[b], else 0."""
    n_t, n_c = lp.shape[0], lp.shape[2]
    off, t_in, t_len = offs[b], il[b], tl[b]
    z = nll[b]
    if zero_infinity and z == math.inf:
        for t in range(n_t):
            for c in range(n_c):
                gi[t, b, c] = 0.0
        return
    for t in range(n_t):
        for c in range(n_c):
            gi[t, b, c] = _NEGINF  # log sum of alpha * beta per class, accumulated below
        for s in range(lb.shape[2]):
            lb[b, t, s] = _NEGINF
    w = 2 * t_len
    if t_in > 0:
        last = t_in - 1
        lb[b, last, w] = lp[last, b, blank]
        gi[last, b, blank] = la[b, last, w] + lb[b, last, w]
        if t_len > 0:
            cur = _prime_j(tg, off, w - 1, blank)
            lb[b, last, w - 1] = lp[last, b, cur]
            gi[last, b, cur] = la[b, last, w - 1] + lb[b, last, w - 1]
    for t in range(t_in - 2, -1, -1):
        for s in range(w, -1, -1):
            cur = _prime_j(tg, off, s, blank)
            b1 = lb[b, t + 1, s]
            b2 = lb[b, t + 1, s + 1] if s < w else _NEGINF
            b3 = _NEGINF
            if s < w - 1 and _prime_j(tg, off, s + 2, blank) != cur:
                b3 = lb[b, t + 1, s + 2]
            lb[b, t, s] = _lse3_j(b1, b2, b3) + lp[t, b, cur]
            ab = la[b, t, s] + lb[b, t, s]
            acc = gi[t, b, cur]
            if acc == _NEGINF:
                gi[t, b, cur] = ab
            else:
                m = max(acc, ab)
                gi[t, b, cur] = math.log(math.exp(acc - m) + math.exp(ab - m)) + m
    gr = g[b]
    for t in range(n_t):
        for c in range(n_c):
            if t < t_in:
                p = lp[t, b, c]
                gi[t, b, c] = (math.exp(p) - math.exp(gi[t, b, c] + z - p)) * gr
            else:
                gi[t, b, c] = 0.0


_grad_j = njit(cache=True, nogil=True, inline="always")(_grad_item)


@njit(cache=True, nogil=True)
def ctc_grad(g, lp, tg, offs, il, tl, blank, la, nll, zero_infinity, lb, gi):
    for b in range(lp.shape[1]):
        _grad_j(g, lp, tg, offs, il, tl, blank, la, nll, zero_infinity, lb, gi, b)


@njit(cache=True, nogil=True, parallel=True)
def ctc_grad_par(g, lp, tg, offs, il, tl, blank, la, nll, zero_infinity, lb, gi):
    for b in prange(lp.shape[1]):
        _grad_j(g, lp, tg, offs, il, tl, blank, la, nll, zero_infinity, lb, gi, b)


# -- kernel entries (``defs/loss.py``): (plan, *tensors) -> Tensor(s) ----------------------------

def _lengths(kw: dict) -> tuple:
    return (np.asarray(kw["input_lengths"], np.int64).reshape(-1),
            np.asarray(kw["target_lengths"], np.int64).reshape(-1))


def _flat_targets(targets, tl: np.ndarray) -> tuple:
    """The targets as one flat int64 array and each batch item's offset into it."""
    t = targets._a
    if t.ndim == 2:
        offs = np.arange(t.shape[0], dtype=np.int64) * t.shape[1]
    else:
        offs = np.zeros(tl.shape[0], np.int64)
        np.cumsum(tl[:-1], out=offs[1:])
    return np.ascontiguousarray(t, np.int64).reshape(-1), offs


def _inputs(plan, log_probs, targets) -> tuple:
    il, tl = _lengths(plan.kw)
    tg, offs = _flat_targets(targets, tl)
    return np.ascontiguousarray(log_probs._a, np.float64), tg, offs, il, tl


def ctc_loss_cpu(plan, log_probs, targets) -> tuple:
    lp, tg, offs, il, tl = _inputs(plan, log_probs, targets)
    n = lp.shape[1]
    la = np.empty(plan.out[1].shape, np.float64)
    nll = np.empty(n, np.float64)
    bad = np.zeros(n, np.uint8)
    fn = ctc_alpha_par if _threads.use_parallel(la.size) else ctc_alpha
    fn(lp, tg, offs, il, tl, plan.kw["blank"], la, nll, bad)
    if bad.any():
        b = int(np.flatnonzero(bad)[0])
        raise RuntimeError(f"ctc_loss: target of batch item {b} holds a label outside "
                           f"[0, {lp.shape[2]})")
    d = plan.out[0].dtype
    return Tensor._make(nll.astype(d.np), None, d), Tensor._make(la.astype(d.np), None, d)


def ctc_loss_backward_cpu(plan, grad, log_probs, targets, nll, log_alpha) -> Tensor:
    lp, tg, offs, il, tl = _inputs(plan, log_probs, targets)
    la = np.ascontiguousarray(log_alpha._a, np.float64)
    z = np.ascontiguousarray(nll._a, np.float64)
    g = np.ascontiguousarray(np.broadcast_to(grad._a, z.shape), np.float64)
    lb = np.empty(la.shape, np.float64)
    gi = np.empty(lp.shape, np.float64)
    fn = ctc_grad_par if _threads.use_parallel(la.size) else ctc_grad
    fn(g, lp, tg, offs, il, tl, plan.kw["blank"], la, z, plan.kw["zero_infinity"], lb, gi)
    d = plan.out.dtype
    return Tensor._make(gi.astype(d.np), None, d)
