"""Optimizer updates: one pass per parameter per step.

Each optimizer's update of one parameter (and its state buffers) is one compiled loop over the
flat elements, with the arithmetic of torch's single-tensor (``foreach=False``) algorithm in
the same order, so that float32 trajectories follow torch's closely. Scalars arrive already
cast to the parameter's dtype (torch casts Python scalars to the tensor's dtype too), so a
float32 parameter is updated in float32 arithmetic. Every kernel has a serial and a
``prange`` variant; ``run`` picks the parallel one above ``_flags.GRAIN_SIZE`` elements.
Buffers an option does not use are passed as empty arrays of the parameter's dtype.
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba import prange

from ... import _flags


def _lerp(a, b, w):
    """torch's lerp: ``a + w (b - a)`` for small weights, ``b - (b - a)(1 - w)`` otherwise."""
    if abs(w) < 0.5:
        return a + w * (b - a)
    return b - (b - a) * (1 - w)


_lerp_jit = numba.njit(cache=True, nogil=True, inline="always")(_lerp)


def _sgd_body(p, g, buf, i, lr, wd, momentum, damp1, nesterov, maximize, first):
    gi = -g[i] if maximize else g[i]
    if wd != 0:
        gi = gi + wd * p[i]
    if momentum != 0:
        b = gi if first else buf[i] * momentum + damp1 * gi
        buf[i] = b
        gi = gi + momentum * b if nesterov else b
    p[i] = p[i] + (-lr) * gi


def _adam_body(p, g, m, v, vmax, i, neg_step, w1, beta2, omb2, bc2_sqrt, eps, wd, decay,
               decoupled, amsgrad, maximize):
    gi = -g[i] if maximize else g[i]
    if wd != 0:
        if decoupled:
            p[i] = p[i] * decay
        else:
            gi = gi + wd * p[i]
    mi = _lerp_jit(m[i], gi, w1)
    m[i] = mi
    vi = v[i] * beta2 + omb2 * gi * gi
    v[i] = vi
    if amsgrad:
        vm = vmax[i]
        if vi > vm or vi != vi:
            vm = vi
        vmax[i] = vm
        vi = vm
    denom = math.sqrt(vi) / bc2_sqrt + eps
    p[i] = p[i] + neg_step * mi / denom


def _rmsprop_body(p, g, sq, gavg, buf, i, neg_lr, alpha, oma, eps, wd, momentum, centered,
                  maximize):
    gi = -g[i] if maximize else g[i]
    if wd != 0:
        gi = gi + wd * p[i]
    s = sq[i] * alpha + oma * gi * gi
    sq[i] = s
    if centered:
        ga = _lerp_jit(gavg[i], gi, oma)
        gavg[i] = ga
        avg = math.sqrt(s + (-ga) * ga) + eps
    else:
        avg = math.sqrt(s) + eps
    if momentum > 0:
        b = buf[i] * momentum + gi / avg
        buf[i] = b
        p[i] = p[i] + neg_lr * b
    else:
        p[i] = p[i] + neg_lr * gi / avg


def _adagrad_body(p, g, ssum, i, neg_clr, eps, wd, maximize):
    gi = -g[i] if maximize else g[i]
    if wd != 0:
        gi = gi + wd * p[i]
    s = ssum[i] + gi * gi
    ssum[i] = s
    p[i] = p[i] + neg_clr * gi / (math.sqrt(s) + eps)


_sgd_i = numba.njit(cache=True, nogil=True, inline="always")(_sgd_body)
_adam_i = numba.njit(cache=True, nogil=True, inline="always")(_adam_body)
_rmsprop_i = numba.njit(cache=True, nogil=True, inline="always")(_rmsprop_body)
_adagrad_i = numba.njit(cache=True, nogil=True, inline="always")(_adagrad_body)


@numba.njit(cache=True, nogil=True)
def sgd_step(p, g, buf, lr, wd, momentum, damp1, nesterov, maximize, first):
    for i in range(p.shape[0]):
        _sgd_i(p, g, buf, i, lr, wd, momentum, damp1, nesterov, maximize, first)


@numba.njit(cache=True, nogil=True, parallel=True)
def sgd_step_par(p, g, buf, lr, wd, momentum, damp1, nesterov, maximize, first):
    for i in prange(p.shape[0]):
        _sgd_i(p, g, buf, i, lr, wd, momentum, damp1, nesterov, maximize, first)


@numba.njit(cache=True, nogil=True)
def adam_step(p, g, m, v, vmax, neg_step, w1, beta2, omb2, bc2_sqrt, eps, wd, decay, decoupled,
              amsgrad, maximize):
    for i in range(p.shape[0]):
        _adam_i(p, g, m, v, vmax, i, neg_step, w1, beta2, omb2, bc2_sqrt, eps, wd, decay,
                decoupled, amsgrad, maximize)


@numba.njit(cache=True, nogil=True, parallel=True)
def adam_step_par(p, g, m, v, vmax, neg_step, w1, beta2, omb2, bc2_sqrt, eps, wd, decay,
                  decoupled, amsgrad, maximize):
    for i in prange(p.shape[0]):
        _adam_i(p, g, m, v, vmax, i, neg_step, w1, beta2, omb2, bc2_sqrt, eps, wd, decay,
                decoupled, amsgrad, maximize)


@numba.njit(cache=True, nogil=True)
def rmsprop_step(p, g, sq, gavg, buf, neg_lr, alpha, oma, eps, wd, momentum, centered, maximize):
    for i in range(p.shape[0]):
        _rmsprop_i(p, g, sq, gavg, buf, i, neg_lr, alpha, oma, eps, wd, momentum, centered,
                   maximize)


@numba.njit(cache=True, nogil=True, parallel=True)
def rmsprop_step_par(p, g, sq, gavg, buf, neg_lr, alpha, oma, eps, wd, momentum, centered,
                     maximize):
    for i in prange(p.shape[0]):
        _rmsprop_i(p, g, sq, gavg, buf, i, neg_lr, alpha, oma, eps, wd, momentum, centered,
                   maximize)


@numba.njit(cache=True, nogil=True)
def adagrad_step(p, g, ssum, neg_clr, eps, wd, maximize):
    for i in range(p.shape[0]):
        _adagrad_i(p, g, ssum, i, neg_clr, eps, wd, maximize)


@numba.njit(cache=True, nogil=True, parallel=True)
def adagrad_step_par(p, g, ssum, neg_clr, eps, wd, maximize):
    for i in prange(p.shape[0]):
        _adagrad_i(p, g, ssum, i, neg_clr, eps, wd, maximize)


KERNELS = {
    "sgd": (sgd_step, sgd_step_par),
    "adam": (adam_step, adam_step_par),
    "rmsprop": (rmsprop_step, rmsprop_step_par),
    "adagrad": (adagrad_step, adagrad_step_par),
}


def _compute_dtype(a: np.ndarray) -> np.dtype:
    kind = a.real.dtype if a.dtype.kind == "c" else a.dtype
    return kind if kind in (np.float32, np.float64) else np.dtype(np.float32)


def _flat(a: np.ndarray, dt: np.dtype) -> np.ndarray | None:
    """A 1-D view of ``a``'s elements as ``dt`` (complex as interleaved real), or None."""
    if not a.flags.c_contiguous:
        return None
    f = a.reshape(-1)
    if f.dtype.kind == "c":
        f = f.view(f.real.dtype)
    return f if f.dtype == dt else None


def run(name: str, arrays: tuple, scalars: tuple) -> None:
    """Run optimizer kernel ``name`` over ``arrays`` (param first, then grad, then state), all of
    one shape; the param and the state buffers (every array but the grad) are updated in place.

    Arrays that are not C-contiguous in the compute dtype are updated on contiguous copies that
    are copied back. Empty arrays stand for unused buffers and pass through unchanged. Scalars
    are cast to the compute dtype here; booleans select the options.
    """
    dt = _compute_dtype(arrays[0])
    flats, back = [], []
    for a in arrays:
        if a.size == 0 and a is not arrays[0]:
            flats.append(np.empty(0, dt))
            continue
        f = _flat(a, dt)
        if f is None:
            c = np.ascontiguousarray(a).reshape(-1)
            if c.dtype.kind == "c":
                c = c.view(c.real.dtype)
            f = np.ascontiguousarray(c, dtype=dt)
            back.append((a, f))
        flats.append(f)
    sc = tuple(s if isinstance(s, bool) else dt.type(s) for s in scalars)
    serial, parallel = KERNELS[name]
    fn = parallel if flats[0].shape[0] > _flags.GRAIN_SIZE else serial
    fn(*flats, *sc)
    grad = arrays[1]
    for a, f in back:
        if a is grad:
            continue
        if a.dtype.kind == "c":
            np.copyto(a, f.astype(a.real.dtype).view(a.dtype).reshape(a.shape))
        else:
            np.copyto(a, f.reshape(a.shape), casting="unsafe")
