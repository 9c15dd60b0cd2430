"""Optimizer updates: one pass per parameter per step.

Each optimizer's update of one parameter (and its state buffers) is one compiled loop over the
flat elements, with the arithmetic of torch's single-tensor (``foreach=False``) algorithm in
the same order, so that float32 trajectories follow torch's closely. Scalars arrive already
cast to the parameter's dtype (torch casts Python scalars to the tensor's dtype too), so a
float32 parameter is updated in float32 arithmetic. Every kernel has a serial and a
``prange`` variant; ``run`` picks the parallel one above ``_flags.GRAIN_SIZE`` elements
(``_threads.use_parallel``).
Buffers an option does not use are passed as empty arrays of the parameter's dtype.
"""

from __future__ import annotations

import math
import types

import numpy as np
from numba import prange

from ... import _threads
from ..jit import njit


def _lerp(a, b, w, one):
    """torch's lerp: ``a + w (b - a)`` for ``|w| < 0.5``, else ``b - (b - a)(1 - w)`` (``one``
    is 1 in the compute dtype, so that ``1 - w`` is rounded as torch rounds it)."""
    return a + w * (b - a) if abs(w) < 0.5 else b - (b - a) * (one - w)


_opts = {"cache": True, "nogil": True, "error_model": "numpy"}
_lerp_jit = njit(inline="always", **_opts)(_lerp)

# The bodies below take the options that decide which buffers are read and written as
# arguments the loops pass as constants, so each loop is branch-free and vectorizes; the
# other options are selects on loop-invariant values.


def _sgd_body(p, g, buf, i, lr, wd, momentum, damp1, nesterov, maximize, use_buf, first):
    gi = -g[i] if maximize else g[i]
    gi = gi + wd * p[i] if wd != 0 else gi
    if use_buf:
        b = gi if first else buf[i] * momentum + damp1 * gi
        buf[i] = b
        gi = gi + momentum * b if nesterov else b
    p[i] = p[i] + (-lr) * gi


def _adam_body(p, g, m, v, vmax, i, neg_step, w1, one, beta2, omb2, bc2_sqrt, eps,
               l2, wd, decay, maximize, amsgrad):
    gi = -g[i] if maximize else g[i]
    pi = p[i] * decay
    gi = gi + wd * pi if l2 else gi
    mi = _lerp_jit(m[i], gi, w1, one)
    m[i] = mi
    vi = v[i] * beta2 + omb2 * gi * gi
    v[i] = vi
    if amsgrad:
        vm = vmax[i]
        vi = vi if (vi > vm or vi != vi) else vm
        vmax[i] = vi
    p[i] = pi + neg_step * mi / (math.sqrt(vi) / bc2_sqrt + eps)


def _rmsprop_body(p, g, sq, gavg, buf, i, neg_lr, alpha, oma, one, eps, wd, momentum,
                  maximize, centered, use_buf):
    gi = -g[i] if maximize else g[i]
    gi = gi + wd * p[i] if wd != 0 else gi
    s = sq[i] * alpha + oma * gi * gi
    sq[i] = s
    if centered:
        ga = _lerp_jit(gavg[i], gi, oma, one)
        gavg[i] = ga
        s = s + (-ga) * ga
    avg = math.sqrt(s) + eps
    if use_buf:
        b = buf[i] * momentum + gi / avg
        buf[i] = b
        p[i] = p[i] + neg_lr * b
    else:
        p[i] = p[i] + neg_lr * gi / avg


def _adagrad_body(p, g, ssum, i, neg_clr, eps, wd, maximize):
    gi = -g[i] if maximize else g[i]
    gi = gi + wd * p[i] if wd != 0 else gi
    s = ssum[i] + gi * gi
    ssum[i] = s
    p[i] = p[i] + neg_clr * gi / (math.sqrt(s) + eps)


def _adadelta_body(p, g, sq, acc, i, neg_lr, rho, omr, eps, wd, maximize):
    gi = -g[i] if maximize else g[i]
    gi = gi + wd * p[i] if wd != 0 else gi
    s = sq[i] * rho + omr * gi * gi
    sq[i] = s
    delta = math.sqrt(acc[i] + eps) / math.sqrt(s + eps) * gi
    acc[i] = acc[i] * rho + omr * delta * delta
    p[i] = p[i] + neg_lr * delta


def _adamax_body(p, g, m, u, i, neg_clr, w1, one, beta2, eps, wd, maximize):
    gi = -g[i] if maximize else g[i]
    gi = gi + wd * p[i] if wd != 0 else gi
    mi = _lerp_jit(m[i], gi, w1, one)
    m[i] = mi
    ui = u[i] * beta2
    ai = abs(gi) + eps
    ui = ui if (ui > ai or math.isnan(ui)) else ai  # torch.maximum: NaN wins
    u[i] = ui
    p[i] = p[i] + neg_clr * mi / ui


def _nadam_body(p, g, m, v, i, w1, one, beta2, omb2, bc2, eps, c_grad, c_avg, l2, wd,
                decay, maximize):
    gi = -g[i] if maximize else g[i]
    pi = p[i] * decay
    gi = gi + wd * pi if l2 else gi
    mi = _lerp_jit(m[i], gi, w1, one)
    m[i] = mi
    vi = v[i] * beta2 + omb2 * gi * gi
    v[i] = vi
    denom = math.sqrt(vi / bc2) + eps
    pi = pi + c_grad * gi / denom
    p[i] = pi + c_avg * mi / denom


def _radam_body(p, g, m, v, i, w1, one, beta2, omb2, bc1, lr, bc2_sqrt, eps, rect, l2, wd,
                decay, maximize, rectify):
    gi = -g[i] if maximize else g[i]
    pi = p[i] * decay
    gi = gi + wd * pi if l2 else gi
    mi = _lerp_jit(m[i], gi, w1, one)
    m[i] = mi
    vi = v[i] * beta2 + omb2 * gi * gi
    v[i] = vi
    b = mi / bc1
    if rectify:  # ``scalar / tensor`` is torch's ``reciprocal() * scalar``
        p[i] = pi - b * lr * (one / (math.sqrt(vi) + eps) * bc2_sqrt) * rect
    else:
        p[i] = pi - b * lr


def _asgd_body(p, g, ax, i, decay, neg_eta, mu, wd, maximize, average):
    gi = -g[i] if maximize else g[i]
    gi = gi + wd * p[i] if wd != 0 else gi
    pi = p[i] * decay
    pi = pi + neg_eta * gi
    p[i] = pi
    ax[i] = ax[i] + (pi - ax[i]) * mu if average else pi


def _rprop_body(p, g, prev, ss, i, etaminus, etaplus, ss_min, ss_max, one, maximize):
    gi = -g[i] if maximize else g[i]
    s = gi * prev[i]
    f = etaplus if s > 0 else (etaminus if s < 0 else one)  # torch.sign(nan) is 0
    si = ss[i] * f
    # torch's clamp (max wins over min; NaN passes through, which min/max do not promise)
    if si < ss_min:  # noqa: PLR1730
        si = ss_min
    if si > ss_max:  # noqa: PLR1730
        si = ss_max
    ss[i] = si
    zero = one - one
    gi = zero if f == etaminus else gi
    sg = one if gi > 0 else (-one if gi < 0 else zero)
    p[i] = p[i] + (-sg) * si
    prev[i] = gi


_sgd_i = njit(inline="always", **_opts)(_sgd_body)
_adam_i = njit(inline="always", **_opts)(_adam_body)
_rmsprop_i = njit(inline="always", **_opts)(_rmsprop_body)
_adagrad_i = njit(inline="always", **_opts)(_adagrad_body)
_adadelta_i = njit(inline="always", **_opts)(_adadelta_body)
_adamax_i = njit(inline="always", **_opts)(_adamax_body)
_nadam_i = njit(inline="always", **_opts)(_nadam_body)
_radam_i = njit(inline="always", **_opts)(_radam_body)
_asgd_i = njit(inline="always", **_opts)(_asgd_body)
_rprop_i = njit(inline="always", **_opts)(_rprop_body)


def _sgd(p, g, buf, lr, wd, momentum, damp1, nesterov, maximize, first):
    n = p.shape[0]
    if momentum == 0:
        for i in prange(n):
            _sgd_i(p, g, buf, i, lr, wd, momentum, damp1, nesterov, maximize, False, False)
    elif first:
        for i in prange(n):
            _sgd_i(p, g, buf, i, lr, wd, momentum, damp1, nesterov, maximize, True, True)
    else:
        for i in prange(n):
            _sgd_i(p, g, buf, i, lr, wd, momentum, damp1, nesterov, maximize, True, False)


def _adam(p, g, m, v, vmax, neg_step, w1, one, beta2, omb2, bc2_sqrt, eps, l2, wd,
          decay, maximize, amsgrad):
    n = p.shape[0]
    if amsgrad:
        for i in prange(n):
            _adam_i(p, g, m, v, vmax, i, neg_step, w1, one, beta2, omb2, bc2_sqrt,
                    eps, l2, wd, decay, maximize, True)
    else:
        for i in prange(n):
            _adam_i(p, g, m, v, vmax, i, neg_step, w1, one, beta2, omb2, bc2_sqrt,
                    eps, l2, wd, decay, maximize, False)


def _rmsprop(p, g, sq, gavg, buf, neg_lr, alpha, oma, one, eps, wd, momentum, maximize,
             centered):
    n = p.shape[0]
    if centered and momentum > 0:
        for i in prange(n):
            _rmsprop_i(p, g, sq, gavg, buf, i, neg_lr, alpha, oma, one, eps, wd,
                       momentum, maximize, True, True)
    elif centered:
        for i in prange(n):
            _rmsprop_i(p, g, sq, gavg, buf, i, neg_lr, alpha, oma, one, eps, wd,
                       momentum, maximize, True, False)
    elif momentum > 0:
        for i in prange(n):
            _rmsprop_i(p, g, sq, gavg, buf, i, neg_lr, alpha, oma, one, eps, wd,
                       momentum, maximize, False, True)
    else:
        for i in prange(n):
            _rmsprop_i(p, g, sq, gavg, buf, i, neg_lr, alpha, oma, one, eps, wd,
                       momentum, maximize, False, False)


def _adagrad(p, g, ssum, neg_clr, eps, wd, maximize):
    for i in prange(p.shape[0]):
        _adagrad_i(p, g, ssum, i, neg_clr, eps, wd, maximize)


def _adadelta(p, g, sq, acc, neg_lr, rho, omr, eps, wd, maximize):
    for i in prange(p.shape[0]):
        _adadelta_i(p, g, sq, acc, i, neg_lr, rho, omr, eps, wd, maximize)


def _adamax(p, g, m, u, neg_clr, w1, one, beta2, eps, wd, maximize):
    for i in prange(p.shape[0]):
        _adamax_i(p, g, m, u, i, neg_clr, w1, one, beta2, eps, wd, maximize)


def _nadam(p, g, m, v, w1, one, beta2, omb2, bc2, eps, c_grad, c_avg, l2, wd, decay,
           maximize):
    for i in prange(p.shape[0]):
        _nadam_i(p, g, m, v, i, w1, one, beta2, omb2, bc2, eps, c_grad, c_avg, l2, wd, decay,
                 maximize)


def _radam(p, g, m, v, w1, one, beta2, omb2, bc1, lr, bc2_sqrt, eps, rect, l2, wd, decay,
           maximize, rectify):
    n = p.shape[0]
    if rectify:
        for i in prange(n):
            _radam_i(p, g, m, v, i, w1, one, beta2, omb2, bc1, lr, bc2_sqrt, eps, rect, l2,
                     wd, decay, maximize, True)
    else:
        for i in prange(n):
            _radam_i(p, g, m, v, i, w1, one, beta2, omb2, bc1, lr, bc2_sqrt, eps, rect, l2,
                     wd, decay, maximize, False)


def _asgd(p, g, ax, decay, neg_eta, mu, wd, maximize, average):
    n = p.shape[0]
    if average:
        for i in prange(n):
            _asgd_i(p, g, ax, i, decay, neg_eta, mu, wd, maximize, True)
    else:
        for i in prange(n):
            _asgd_i(p, g, ax, i, decay, neg_eta, mu, wd, maximize, False)


def _rprop(p, g, prev, ss, etaminus, etaplus, ss_min, ss_max, one, maximize):
    for i in prange(p.shape[0]):
        _rprop_i(p, g, prev, ss, i, etaminus, etaplus, ss_min, ss_max, one, maximize)


def _build(driver, parallel: bool):
    """The serial or ``prange`` build of ``driver`` (``prange`` runs as ``range`` serially).

    Each build compiles a copy of the function under its own name: Numba's on-disk cache is
    keyed by the function's name and code, not by the ``parallel`` flag.
    """
    name = driver.__name__.lstrip("_") + ("_step_par" if parallel else "_step")
    fn = types.FunctionType(driver.__code__, driver.__globals__, name)
    fn.__qualname__ = name
    return njit(parallel=parallel, **_opts)(fn)


sgd_step, sgd_step_par = _build(_sgd, False), _build(_sgd, True)
adam_step, adam_step_par = _build(_adam, False), _build(_adam, True)
rmsprop_step, rmsprop_step_par = _build(_rmsprop, False), _build(_rmsprop, True)
adagrad_step, adagrad_step_par = _build(_adagrad, False), _build(_adagrad, True)
adadelta_step, adadelta_step_par = _build(_adadelta, False), _build(_adadelta, True)
adamax_step, adamax_step_par = _build(_adamax, False), _build(_adamax, True)
nadam_step, nadam_step_par = _build(_nadam, False), _build(_nadam, True)
radam_step, radam_step_par = _build(_radam, False), _build(_radam, True)
asgd_step, asgd_step_par = _build(_asgd, False), _build(_asgd, True)
rprop_step, rprop_step_par = _build(_rprop, False), _build(_rprop, True)


KERNELS = {
    "sgd": (sgd_step, sgd_step_par),
    "adam": (adam_step, adam_step_par),
    "rmsprop": (rmsprop_step, rmsprop_step_par),
    "adagrad": (adagrad_step, adagrad_step_par),
    "adadelta": (adadelta_step, adadelta_step_par),
    "adamax": (adamax_step, adamax_step_par),
    "nadam": (nadam_step, nadam_step_par),
    "radam": (radam_step, radam_step_par),
    "asgd": (asgd_step, asgd_step_par),
    "rprop": (rprop_step, rprop_step_par),
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
    fn = parallel if _threads.use_parallel(flats[0].shape[0] - 1) else serial
    fn(*flats, *sc)
    grad = arrays[1]
    for a, f in back:
        if a is grad:
            continue
        if a.dtype.kind == "c":
            np.copyto(a, f.astype(a.real.dtype).view(a.dtype).reshape(a.shape))
        else:
            np.copyto(a, f.reshape(a.shape), casting="unsafe")


_EMPTY = np.empty(0)


def fused_cpu(name: str):
    """The kernel entry of ``_fused_<name>_`` (``defs/optim.py``): the update of one param and
    its state in place; bumps the version of every tensor written and returns them."""

    def kernel(plan, *tensors) -> tuple:
        run(name, tuple([_EMPTY if t is None else t._a for t in tensors]), plan.kw["scalars"])
        written = tuple([tensors[w.src] for w in plan.out])  # the plan's ``Inplace`` operands
        for t in written:
            t._vc[0] += 1
        return written

    kernel.__name__ = kernel.__qualname__ = f"_fused_{name}_cpu"
    return kernel
