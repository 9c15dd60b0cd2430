"""Multi-tensor optimizer updates (torch's foreach / fused steps): one compiled call updates
every parameter of a group and its state buffers.

Each kernel takes one tuple of 1-D C-contiguous arrays per operand (params, grads, each state
buffer; the i-th entries belong to the i-th parameter; for a buffer no parameter has, the
grads' tuple, which the options never touch), a table of distinct scalar rows (the scalars
of ``optim.py``'s one-parameter kernel in the same order, booleans as 0/1, cast to the
compute dtype) with each tensor's row index, and a chunk size. The loops over a range of one
tensor's elements call the very bodies of ``optim.py`` (``_adam_i``...) with the same scalar
types, so the update is bitwise the one-parameter kernel's. The ``prange`` build (above
``_flags.GRAIN_SIZE`` elements in all, ``_threads.use_parallel``) splits the tensors into
chunks of ``CHUNK`` elements and runs them in parallel; the serial build (one chunk per
tensor) walks the tensors in order.

Why tuples: Numba unboxes a tuple of arrays in C (about 0.1 us per array, measured), while a
``numba.typed.List`` costs ~2.5 us per array to build, a reflected list ~14 us, and reading
data pointers (``a.ctypes.data``) ~1.5 us. A tuple's length is part of its type, so tuples are
padded (with empty arrays, which own no chunk) to 8 or 16: every group compiles one of two
kernels per optimizer (2-2.5 s each, cold; cached on disk), where finer sizes compiled a kernel
per group size (a GPT's AdamW with groups of 16 and 12 tensors: two), for about 0.1 us per
padding array at run time. Larger groups run as consecutive calls of 16: a
tuple's runtime indexing compiles to a switch over its entries, and the cold compile grew
from 2 s (serial) / 6 s (parallel) at 16 entries to 10 s / 45 s at 32 and minutes at 64
(ResNet-18's 62 parameters).
"""

from __future__ import annotations

import types

import numba
import numpy as np
from numba import prange

from ... import _threads
from ..jit import njit
from .optim import (
    _adadelta_i,
    _adagrad_i,
    _adam_i,
    _adamax_i,
    _asgd_i,
    _nadam_i,
    _radam_i,
    _rmsprop_i,
    _rprop_i,
    _sgd_i,
)

_opts = {"cache": True, "nogil": True, "error_model": "numpy"}
_inline = njit(inline="always", **_opts)


@njit(no_cpython_wrapper=True, **_opts)  # called by the drivers only
def _chunks(ps, chunk):
    """``(tensor, start, stop)`` rows covering every element of the tensors in ``ps``."""
    count = 0
    for j in range(len(ps)):
        count += (ps[j].shape[0] + chunk - 1) // chunk
    tab = np.empty((count, 3), np.int64)
    c = 0
    for j in range(len(ps)):
        n = ps[j].shape[0]
        for lo in range(0, n, chunk):
            tab[c, 0] = j
            tab[c, 1] = lo
            tab[c, 2] = min(lo + chunk, n)
            c += 1
    return tab


# -- one tensor's range, with the options that pick the buffers as constants (as optim.py) --

@_inline
def _sgd_range(p, g, buf, lo, hi, r):
    p, g, buf, n = p[lo:hi], g[lo:hi], buf[lo:hi], hi - lo
    lr, wd, momentum, damp1 = r[0], r[1], r[2], r[3]
    nesterov, maximize, first = r[4] != 0, r[5] != 0, r[6] != 0
    if momentum == 0:
        for i in range(n):
            _sgd_i(p, g, buf, i, lr, wd, momentum, damp1, nesterov, maximize, False, False)
    elif first:
        for i in range(n):
            _sgd_i(p, g, buf, i, lr, wd, momentum, damp1, nesterov, maximize, True, True)
    else:
        for i in range(n):
            _sgd_i(p, g, buf, i, lr, wd, momentum, damp1, nesterov, maximize, True, False)


@_inline
def _adam_plain_range(p, g, m, v, vmax, lo, hi, r):
    """``_adam_range`` for amsgrad off (every group's default): its loop alone, half the
    cold compile of the driver (1.4 of 2.7 s, one core)."""
    p, g, m, v, n = p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], hi - lo
    neg_step, w1, one, beta2, omb2, bc2_sqrt, eps = r[0], r[1], r[2], r[3], r[4], r[5], r[6]
    l2, wd, decay, maximize = r[7] != 0, r[8], r[9], r[10] != 0
    for i in range(n):
        _adam_i(p, g, m, v, vmax, i, neg_step, w1, one, beta2, omb2, bc2_sqrt, eps, l2, wd,
                decay, maximize, False)


@_inline
def _adam_range(p, g, m, v, vmax, lo, hi, r):
    p, g, m, v, vmax, n = p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], vmax[lo:hi], hi - lo
    neg_step, w1, one, beta2, omb2, bc2_sqrt, eps = r[0], r[1], r[2], r[3], r[4], r[5], r[6]
    l2, wd, decay, maximize, amsgrad = r[7] != 0, r[8], r[9], r[10] != 0, r[11] != 0
    if amsgrad:
        for i in range(n):
            _adam_i(p, g, m, v, vmax, i, neg_step, w1, one, beta2, omb2, bc2_sqrt, eps, l2,
                    wd, decay, maximize, True)
    else:
        for i in range(n):
            _adam_i(p, g, m, v, vmax, i, neg_step, w1, one, beta2, omb2, bc2_sqrt, eps, l2,
                    wd, decay, maximize, False)


@_inline
def _rmsprop_range(p, g, sq, gavg, buf, lo, hi, r):
    p, g, sq, gavg, buf, n = p[lo:hi], g[lo:hi], sq[lo:hi], gavg[lo:hi], buf[lo:hi], hi - lo
    neg_lr, alpha, oma, one, eps, wd, momentum = r[0], r[1], r[2], r[3], r[4], r[5], r[6]
    maximize, centered = r[7] != 0, r[8] != 0
    if centered and momentum > 0:
        for i in range(n):
            _rmsprop_i(p, g, sq, gavg, buf, i, neg_lr, alpha, oma, one, eps, wd, momentum,
                       maximize, True, True)
    elif centered:
        for i in range(n):
            _rmsprop_i(p, g, sq, gavg, buf, i, neg_lr, alpha, oma, one, eps, wd, momentum,
                       maximize, True, False)
    elif momentum > 0:
        for i in range(n):
            _rmsprop_i(p, g, sq, gavg, buf, i, neg_lr, alpha, oma, one, eps, wd, momentum,
                       maximize, False, True)
    else:
        for i in range(n):
            _rmsprop_i(p, g, sq, gavg, buf, i, neg_lr, alpha, oma, one, eps, wd, momentum,
                       maximize, False, False)


@_inline
def _adagrad_range(p, g, ssum, lo, hi, r):
    p, g, ssum, n = p[lo:hi], g[lo:hi], ssum[lo:hi], hi - lo
    neg_clr, eps, wd, maximize = r[0], r[1], r[2], r[3] != 0
    for i in range(n):
        _adagrad_i(p, g, ssum, i, neg_clr, eps, wd, maximize)


@_inline
def _adadelta_range(p, g, sq, acc, lo, hi, r):
    p, g, sq, acc, n = p[lo:hi], g[lo:hi], sq[lo:hi], acc[lo:hi], hi - lo
    neg_lr, rho, omr, eps, wd, maximize = r[0], r[1], r[2], r[3], r[4], r[5] != 0
    for i in range(n):
        _adadelta_i(p, g, sq, acc, i, neg_lr, rho, omr, eps, wd, maximize)


@_inline
def _adamax_range(p, g, m, u, lo, hi, r):
    p, g, m, u, n = p[lo:hi], g[lo:hi], m[lo:hi], u[lo:hi], hi - lo
    neg_clr, w1, one, beta2, eps, wd, maximize = r[0], r[1], r[2], r[3], r[4], r[5], r[6] != 0
    for i in range(n):
        _adamax_i(p, g, m, u, i, neg_clr, w1, one, beta2, eps, wd, maximize)


@_inline
def _nadam_range(p, g, m, v, lo, hi, r):
    p, g, m, v, n = p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], hi - lo
    w1, one, beta2, omb2, bc2, eps, c_grad, c_avg = r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]
    l2, wd, decay, maximize = r[8] != 0, r[9], r[10], r[11] != 0
    for i in range(n):
        _nadam_i(p, g, m, v, i, w1, one, beta2, omb2, bc2, eps, c_grad, c_avg, l2, wd, decay,
                 maximize)


@_inline
def _radam_range(p, g, m, v, lo, hi, r):
    p, g, m, v, n = p[lo:hi], g[lo:hi], m[lo:hi], v[lo:hi], hi - lo
    w1, one, beta2, omb2, bc1, lr, bc2_sqrt = r[0], r[1], r[2], r[3], r[4], r[5], r[6]
    eps, rect, l2, wd, decay, maximize = r[7], r[8], r[9] != 0, r[10], r[11], r[12] != 0
    if r[13] != 0:
        for i in range(n):
            _radam_i(p, g, m, v, i, w1, one, beta2, omb2, bc1, lr, bc2_sqrt, eps, rect, l2,
                     wd, decay, maximize, True)
    else:
        for i in range(n):
            _radam_i(p, g, m, v, i, w1, one, beta2, omb2, bc1, lr, bc2_sqrt, eps, rect, l2,
                     wd, decay, maximize, False)


@_inline
def _asgd_range(p, g, ax, lo, hi, r):
    p, g, ax, n = p[lo:hi], g[lo:hi], ax[lo:hi], hi - lo
    decay, neg_eta, mu, wd, maximize = r[0], r[1], r[2], r[3], r[4] != 0
    if r[5] != 0:
        for i in range(n):
            _asgd_i(p, g, ax, i, decay, neg_eta, mu, wd, maximize, True)
    else:
        for i in range(n):
            _asgd_i(p, g, ax, i, decay, neg_eta, mu, wd, maximize, False)


@_inline
def _rprop_range(p, g, prev, ss, lo, hi, r):
    p, g, prev, ss, n = p[lo:hi], g[lo:hi], prev[lo:hi], ss[lo:hi], hi - lo
    etaminus, etaplus, ss_min, ss_max, one, maximize = r[0], r[1], r[2], r[3], r[4], r[5] != 0
    for i in range(n):
        _rprop_i(p, g, prev, ss, i, etaminus, etaplus, ss_min, ss_max, one, maximize)


# -- the drivers: one call over every tensor of a group -------------------------------------
# ``sc`` holds the distinct scalar rows and ``rix`` each tensor's row. A buffer no parameter
# uses arrives as another operand's tuple (the grads), which its options never touch: one
# signature per optimizer and dtype.

def _sgd(ps, gs, bufs, sc, rix, chunk):
    tab = _chunks(ps, chunk)
    for c in prange(tab.shape[0]):
        j = tab[c, 0]
        _sgd_range(ps[j], gs[j], bufs[j], tab[c, 1], tab[c, 2], sc[rix[j]])


def _adam(ps, gs, ms, vs, vmaxs, sc, rix, chunk):
    tab = _chunks(ps, chunk)
    for c in prange(tab.shape[0]):
        j = tab[c, 0]
        _adam_range(ps[j], gs[j], ms[j], vs[j], vmaxs[j], tab[c, 1], tab[c, 2], sc[rix[j]])


# ``_adam`` over ``_adam_plain_range`` (its code with that global in place of _adam_range)
_adam_plain = types.FunctionType(_adam.__code__, dict(_adam.__globals__,
                                                      _adam_range=_adam_plain_range),
                                 "_adam_plain")


def _rmsprop(ps, gs, sqs, gavgs, bufs, sc, rix, chunk):
    tab = _chunks(ps, chunk)
    for c in prange(tab.shape[0]):
        j = tab[c, 0]
        _rmsprop_range(ps[j], gs[j], sqs[j], gavgs[j], bufs[j], tab[c, 1], tab[c, 2],
                       sc[rix[j]])


def _adagrad(ps, gs, sums, sc, rix, chunk):
    tab = _chunks(ps, chunk)
    for c in prange(tab.shape[0]):
        j = tab[c, 0]
        _adagrad_range(ps[j], gs[j], sums[j], tab[c, 1], tab[c, 2], sc[rix[j]])


def _adadelta(ps, gs, sqs, accs, sc, rix, chunk):
    tab = _chunks(ps, chunk)
    for c in prange(tab.shape[0]):
        j = tab[c, 0]
        _adadelta_range(ps[j], gs[j], sqs[j], accs[j], tab[c, 1], tab[c, 2], sc[rix[j]])


def _adamax(ps, gs, ms, us, sc, rix, chunk):
    tab = _chunks(ps, chunk)
    for c in prange(tab.shape[0]):
        j = tab[c, 0]
        _adamax_range(ps[j], gs[j], ms[j], us[j], tab[c, 1], tab[c, 2], sc[rix[j]])


def _nadam(ps, gs, ms, vs, sc, rix, chunk):
    tab = _chunks(ps, chunk)
    for c in prange(tab.shape[0]):
        j = tab[c, 0]
        _nadam_range(ps[j], gs[j], ms[j], vs[j], tab[c, 1], tab[c, 2], sc[rix[j]])


def _radam(ps, gs, ms, vs, sc, rix, chunk):
    tab = _chunks(ps, chunk)
    for c in prange(tab.shape[0]):
        j = tab[c, 0]
        _radam_range(ps[j], gs[j], ms[j], vs[j], tab[c, 1], tab[c, 2], sc[rix[j]])


def _asgd(ps, gs, axs, sc, rix, chunk):
    tab = _chunks(ps, chunk)
    for c in prange(tab.shape[0]):
        j = tab[c, 0]
        _asgd_range(ps[j], gs[j], axs[j], tab[c, 1], tab[c, 2], sc[rix[j]])


def _rprop(ps, gs, prevs, sss, sc, rix, chunk):
    tab = _chunks(ps, chunk)
    for c in prange(tab.shape[0]):
        j = tab[c, 0]
        _rprop_range(ps[j], gs[j], prevs[j], sss[j], tab[c, 1], tab[c, 2], sc[rix[j]])


def _build(driver, parallel: bool):
    """The serial or ``prange`` build of ``driver`` under its own name (Numba's on-disk cache is
    keyed by the function's name and code, not by the ``parallel`` flag)."""
    name = driver.__name__.lstrip("_") + ("_multi_par" if parallel else "_multi")
    fn = types.FunctionType(driver.__code__, driver.__globals__, name)
    fn.__qualname__ = name
    return njit(parallel=parallel, **_opts)(fn)


KERNELS = {name: (_build(d, False), _build(d, True))
           for name, d in (("sgd", _sgd), ("adam", _adam), ("adam_plain", _adam_plain),
                           ("rmsprop", _rmsprop),
                           ("adagrad", _adagrad), ("adadelta", _adadelta),
                           ("adamax", _adamax), ("nadam", _nadam), ("radam", _radam),
                           ("asgd", _asgd), ("rprop", _rprop))}

CHUNK = 1 << 15  # elements per parallel task
_SERIAL_CHUNK = 1 << 62
# tuple lengths: a group of n parameters is padded to the next (compiled once per length)
_SIZES = [8, 16]
_MAX = _SIZES[-1]  # tensors per call: more run as consecutive calls
# the dtype a parameter's update is computed in (``optim.py``'s), for those with a flat view
COMPUTE = {np.dtype(t): np.dtype(c) for t, c in (
    (np.float32, np.float32), (np.float64, np.float64), (np.complex64, np.float32),
    (np.complex128, np.float64))}
_empty = {dt: np.empty(0, dt) for dt in set(COMPUTE.values())}
_zeros: dict = {}  # tuple length -> int64 zeros (every tensor on scalar row 0)

calls = [0]  # multi-tensor kernel calls (tests check that the path is taken)


def flat(a, shape: tuple, dt: np.dtype):
    """``a`` as a writeable, aligned, 1-D C-contiguous array of ``dt`` sharing its memory
    (complex as interleaved real), or None where ``a`` is not a CPU array of ``shape`` with
    that view."""
    if a.__class__ is not np.ndarray or a.shape != shape or not a.flags.carray:
        return None
    if a.ndim != 1:
        a = a.ravel()
    if a.dtype is not dt:
        if a.dtype.kind == "c":
            a = a.view(a.real.dtype)
        if a.dtype != dt:
            return None
    return a


def run(name: str, rows: list, scalars: list, dt: np.dtype, absent: list | None = (),
        serial: bool = False) -> None:
    """Update ``len(rows)`` parameters of compute dtype ``dt`` in one call: ``rows[i]`` holds
    the i-th parameter's flat operands (``flat``: param, grad, state buffers; None for a buffer
    its options do not use), ``scalars[i]`` its scalars in ``optim.py``'s order (equal rows
    best as one object). ``absent`` lists the operands that are None in every row (None: the
    rows differ). ``serial`` keeps the serial build (a parameter listed twice must be updated
    twice, in order)."""
    n = len(rows)
    if n > _MAX:
        for lo in range(0, n, _MAX):
            run(name, rows[lo:lo + _MAX], scalars[lo:lo + _MAX], dt, absent, serial)
        return
    args, sc, rix, total = _operands(rows, scalars, dt, absent)
    kernel, kernel_par = KERNELS[_variant(name, absent)]
    calls[0] += 1
    if not serial and _threads.use_parallel(total):
        kernel_par(*args, sc, rix, CHUNK)
    else:
        kernel(*args, sc, rix, _SERIAL_CHUNK)


def _operands(rows: list, scalars: list, dt: np.dtype, absent: list | None) -> tuple:
    """``run``'s padded tuples, scalar table, row indices and element count, for at most
    ``_MAX`` rows."""
    n = len(rows)
    size = next(s for s in _SIZES if s >= n)
    empty = _empty[dt]
    pad = (empty,) * (size - n)
    args: list = []
    for k, col in enumerate(zip(*rows)):
        if absent is None:
            args.append(tuple([empty if a is None else a for a in col]) + pad)
        else:
            args.append(args[1] if k in absent else col + pad)
    first = scalars[0]
    if all(r is first for r in scalars):
        sc = np.array([first], dtype=dt)
        rix = _zeros.get(size)
        if rix is None:
            rix = _zeros[size] = np.zeros(size, np.int64)
    else:
        distinct: dict = {}  # by identity: rows equal as tuples may differ (-0.0 and 0.0)
        idx = [distinct.setdefault(id(r), (len(distinct), r))[0] for r in scalars]
        sc = np.array([r for _, r in distinct.values()], dtype=dt)
        rix = np.array(idx + [0] * (size - n), np.int64)
    total = 0
    for a in args[0]:
        total += a.shape[0]
    return args, sc, rix, total


def _variant(name: str, absent: list | None) -> str:
    """The kernel ``run`` calls: Adam with no row's max buffer (amsgrad off: a group's flag,
    so every row's) takes the build without amsgrad's loop; the same values."""
    return "adam_plain" if name == "adam" and absent is not None and 4 in absent else name


def expected(name: str, arrays: list, dt: np.dtype, absent: list) -> list:
    """``(key, signature)`` of the kernels ``run`` will call for a group of parameters whose
    flat views are ``arrays`` (``absent``: the operands its options leave out), without
    running them: a cold process's compile worker builds them ahead of the first step
    (``expected_kernel(key)`` is the kernel)."""
    width = KERNELS[name][0].py_func.__code__.co_argcount - 3
    out = []
    for lo in range(0, len(arrays), _MAX):
        part = arrays[lo:lo + _MAX]
        rows = [[None if k in absent else a for k in range(width)] for a in part]
        args, sc, rix, total = _operands(rows, [(0,) * 16] * len(part), dt, absent)
        par = _threads.use_parallel(total)
        sig = tuple(numba.typeof(a) for a in (*args, sc, rix, CHUNK if par else _SERIAL_CHUNK))
        key = f"{_variant(name, absent)}:{'par' if par else 'serial'}"
        if (key, sig) not in out:
            out.append((key, sig))
    return out


def expected_kernel(key: str):
    name, build = key.split(":")
    return KERNELS[name][build == "par"]


# -- gradient clipping (nn.utils.clip_grad_norm_): the squared norm of many tensors, and their
# scaling in place, each one call over a padded tuple

@njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc"})
def _sumsq(ts, acc):
    """``acc`` plus the sum of the squares of every element, accumulated in float64."""
    for j in range(len(ts)):
        a = ts[j]
        s = 0.0
        for i in range(a.shape[0]):
            v = np.float64(a[i])
            s += v * v
        acc += s
    return acc


@njit(cache=True, nogil=True, error_model="numpy")
def _scale(ts, c):
    for j in range(len(ts)):
        a = ts[j]
        for i in range(a.shape[0]):
            a[i] *= c


def _padded(arrays: list, dt: np.dtype) -> list:
    """Tuples of at most ``_MAX`` arrays, each padded to the next of ``_SIZES``."""
    out = []
    for lo in range(0, max(len(arrays), 1), _MAX):
        part = tuple(arrays[lo:lo + _MAX])
        size = next(s for s in _SIZES if s >= len(part))
        out.append(part + (_empty[dt],) * (size - len(part)))
    return out


def sum_of_squares(arrays: list, dt: np.dtype) -> float:
    """sum(a**2) over the 1-D arrays of dtype ``dt`` (``flat`` views), in float64."""
    calls[0] += 1
    acc = 0.0
    for part in _padded(arrays, dt):
        acc = _sumsq(part, acc)
    return acc


def scale_(arrays: list, c: float, dt: np.dtype) -> None:
    """a *= c for each 1-D array of dtype ``dt``, ``c`` rounded to ``dt`` first (as a 0-d
    tensor of that dtype multiplies)."""
    calls[0] += 1
    c = dt.type(c)
    for part in _padded(arrays, dt):
        _scale(part, c)
