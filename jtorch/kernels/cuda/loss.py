"""nll_loss and nll_loss2d, forward and backward, and binary_cross_entropy on CUDA (the CPU's
``kernels/cpu/loss.py``).

A row is one target: (N, C) rows for nll_loss, (N, H, W) pixels for nll_loss2d, each with C
class scores at the class stride. ``rows_k`` writes each row's loss and counted weight (0 for
``ignore_index``; a bad target flags its row), ``sum_k`` adds them in one block with a fixed
tree (float64, the same result on every run) and divides for 'mean', ``backward_k`` writes
every element of the gradient (``-weight[t] * g * scale`` at the target, else 0).
``bce_k`` computes binary_cross_entropy's elementwise loss and flags inputs outside [0, 1];
``sum_k`` reduces it. float16 runs over float32 copies (as the CPU computes it); bfloat16
and weights of another dtype take the host path.
"""

from __future__ import annotations

import math

import numpy as np

from ... import _settings
from ...cuda_array import alloc, empty
from ...tensor import Tensor
from .. import registry
from . import eager, target
from . import pointwise as _pw
from .indexing import _arr, _contig, _first_bad, _flag, _float32, _strides, _value_at
from .target import cuda

_FLOAT = frozenset({"float32", "float64"})
# threads of the one-block sum (a power of two); one in the simulator, whose shared arrays are
# made by the first thread to reach them, racing with the others (which may get another one)
_T = 1 if target.SIMULATOR else 256


def rows_k(geo, x, xb, sc, ncls, t, tb, w, wb, ws, ignore, losses, wts, err):
    """losses[r] = -w[t] * x[row r, class t], wts[r] = w[t] (both 0 for ignored or bad
    targets); rows of ``geo``: row shape, x and target strides."""
    nd = geo.shape[1]
    n = 1
    for d in range(nd):
        n *= geo[0, d]
    r = cuda.grid(1)
    step = cuda.gridsize(1)
    while r < n:
        rem = r
        px = xb
        pt = tb
        for d in range(nd - 1, -1, -1):
            q = rem % geo[0, d]
            rem //= geo[0, d]
            px += q * geo[1, d]
            pt += q * geo[2, d]
        tv = np.int64(t[pt])
        if tv == ignore:
            losses[r] = 0
            wts[r] = 0
        elif tv < 0 or tv >= ncls:
            cuda.atomic.min(err, 0, r)
            losses[r] = 0
            wts[r] = 0
        else:
            wv = w[wb + tv * ws]
            losses[r] = -x[px + tv * sc] * wv
            wts[r] = wv
        r += step


def sum_k(losses, wts, n, how, out):
    """One block: out[0] = sum(losses) (how 0), its mean over sum(wts) (how 1, nan when that is
    0), 1 / sum(wts) (how 2: the 'mean' gradient's scale) or its mean over n (how 3)."""
    sh = cuda.shared.array((2, _T), np.float64)
    tid = cuda.threadIdx.x
    a = 0.0
    b = 0.0
    i = tid
    while i < n:
        a += losses[i]
        b += wts[i]
        i += _T
    sh[0, tid] = a
    sh[1, tid] = b
    cuda.syncthreads()
    half = _T // 2
    while half > 0:
        if tid < half:
            sh[0, tid] += sh[0, tid + half]
            sh[1, tid] += sh[1, tid + half]
        cuda.syncthreads()
        half //= 2
    if tid == 0:
        total = sh[0, 0]
        tw = sh[1, 0]
        if how == 1:
            total = total / tw if tw != 0 else math.nan
        elif how == 2:
            total = 1.0 / tw if tw != 0 else math.nan
        elif how == 3:
            total = total / n if n != 0 else math.nan
        out[0] = total


def backward_k(geo, ncls, sco, t, tb, w, wb, ws, ignore, g, gb, scale, gi):
    """gi[row r, class c] = -w[c] * g[r] * scale where c is r's counted target, else 0; rows of
    ``geo``: row shape, target, grad (0: one grad) and result row strides."""
    nd = geo.shape[1]
    rows = 1
    for d in range(nd):
        rows *= geo[0, d]
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < rows * ncls:
        r = i // ncls
        c = i - r * ncls
        rem = r
        pt = tb
        pg = gb
        po = 0
        for d in range(nd - 1, -1, -1):
            q = rem % geo[0, d]
            rem //= geo[0, d]
            pt += q * geo[1, d]
            pg += q * geo[2, d]
            po += q * geo[3, d]
        tv = np.int64(t[pt])
        if tv == c and tv != ignore:
            gi[po + c * sco] = -w[wb + tv * ws] * g[pg] * scale[0]
        else:
            gi[po + c * sco] = 0
        i += step


def bce_k(geo, x, xb, t, tb, w, wb, out, ob, err):
    """out = -(t log x + (1 - t) log(1 - x)) * w, each log clamped at -100 (as on CPU; a log of
    0 is never taken: the simulator's ``math.log`` would raise); err[0] flags x outside
    [0, 1]. Rows of ``geo``: shape, x, target, weight and out strides."""
    nd = geo.shape[1]
    n = 1
    for d in range(nd):
        n *= geo[0, d]
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        rem = i
        px = xb
        pt = tb
        pw = wb
        po = ob
        for d in range(nd - 1, -1, -1):
            q = rem % geo[0, d]
            rem //= geo[0, d]
            px += q * geo[1, d]
            pt += q * geo[2, d]
            pw += q * geo[3, d]
            po += q * geo[4, d]
        xv = x[px]
        tv = t[pt]
        if not (xv >= 0 and xv <= 1):
            err[0] = 1
        lx = -100.0
        if xv > 0:
            lx = math.log(xv)
            if lx < -100.0:  # noqa: PLR1730  (no builtin max in kernels: see indexing.count_k)
                lx = -100.0
        l1 = -100.0
        if xv < 1:
            l1 = math.log1p(-xv)
            if l1 < -100.0:  # noqa: PLR1730
                l1 = -100.0
        out[po] = ((tv - 1) * l1 - tv * lx) * w[pw]
        i += step


KERNELS = {"rows": rows_k, "sum": sum_k, "backward": backward_k, "bce": bce_k}
_jitted: dict = {}


def _kernel(name: str):
    k = _jitted.get(name)
    if k is None:
        k = _jitted[name] = target.jit(KERNELS[name])
    return k


def _launch(name: str, n: int, *args) -> None:
    t = eager.THREADS
    blocks = max(1, min(eager.MAX_BLOCKS, (n + t - 1) // t))
    _kernel(name)[blocks, t](*args)


_ONES: dict = {}


def _one(dt: np.dtype):
    """A one-element device array holding 1: the weight of every class when there are none
    (read at stride 0), the scale of an unscaled gradient."""
    d = _ONES.get(dt.str)
    if d is None:
        d = _ONES[dt.str] = target.to_device(np.ones(1, dt))
    return d


def _geometry(input: Tensor, two_d: bool) -> tuple:
    """(row shape, x row strides, class stride, classes) of an nll input."""
    a = input._a
    st = _strides(a)
    if two_d:  # (N, C, H, W)
        return (a.shape[0], a.shape[2], a.shape[3]), [st[0], st[2], st[3]], st[1], a.shape[1]
    if a.ndim == 1:
        return (1,), [0], st[0], a.shape[0]
    return (a.shape[0],), [st[0]], st[1], a.shape[1]


def _weight(weight, dt: np.dtype) -> tuple:
    if weight is None:
        return _one(dt), 0, 0
    wa = weight._a
    return wa.buf, wa.offset, _strides(wa)[0]


def _supported(input: Tensor, weight) -> bool:
    return input.dtype.name in _FLOAT and (weight is None or weight.dtype is input.dtype)


def _rows(plan, input, target_t, weight, two_d: bool, check: bool, losses=None):
    """(losses, weights, rows) of every row, on the device (``losses``: where to write them);
    raises torch's error for a bad target when ``check``."""
    dev = plan.device
    shape, xst, sc, ncls = _geometry(input, two_d)
    ta = _arr(target_t, dev)
    tst = _strides(ta) if ta.ndim else [0]
    n = math.prod(shape)
    dt = input._a.dtype
    if losses is None:
        losses = alloc(max(n, 1), dt)
    wts = alloc(max(n, 1), dt)
    if n:
        wbuf, wb, ws = _weight(weight, dt)
        geo = _pw._geometry(shape, [xst, tst])
        err = _flag(n)
        a = input._a
        _launch("rows", n, geo, a.buf, a.offset, sc, ncls, ta.buf, ta.offset, wbuf, wb, ws,
                plan.kw["ignore_index"], losses, wts, err)
        bad = _first_bad(err, n) if check else None
        if bad is not None:
            raise IndexError(f"Target {_value_at(ta, ta.offset, tst, shape, bad)} is out of "
                             "bounds.")
    return losses, wts, n


def _nll(host, plan, input, target_t, weight, two_d: bool):
    if not _supported(input, weight):
        return host(plan, input, target_t, weight)
    red = plan.kw["reduction"]
    if two_d and red != "none":
        _settings.alert_not_deterministic("nll_loss2d_forward_out_cuda_template")
    d = plan.out.dtype
    if red == "none":  # the losses, row-major over the rows: the result itself
        a, st = empty(tuple(plan.out.shape), d.np, plan.device)
        _rows(plan, input, target_t, weight, two_d, True, a.buf if a.size else None)
        return Tensor._make(a, st, d)
    losses, wts, n = _rows(plan, input, target_t, weight, two_d, True)
    a, st = empty((), d.np, plan.device)
    _kernel("sum")[1, _T](losses, wts, n, 1 if red == "mean" else 0, a.buf)
    return Tensor._make(a, st, d)


def _nll_backward(host, plan, grad, input, target_t, weight, two_d: bool):
    if not _supported(input, weight) or grad.dtype is not input.dtype:
        return host(plan, grad, input, target_t, weight)
    dev = plan.device
    d = plan.out.dtype
    a, st = empty(tuple(plan.out.shape), d.np, dev)
    if not a.size:
        return Tensor._make(a, st, d)
    red = plan.kw["reduction"]
    shape, _, _, ncls = _geometry(input, two_d)
    dt = input._a.dtype
    if red == "mean":
        losses, wts, n = _rows(plan, input, target_t, weight, two_d, False)
        scale = alloc(1, dt)
        _kernel("sum")[1, _T](losses, wts, n, 2, scale)
    else:
        scale = _one(dt)
    ta = _arr(target_t, dev)
    tst = _strides(ta) if ta.ndim else [0]
    ga = _arr(grad, dev)
    gst = (_strides(ga) or [0]) if red == "none" else [0] * len(shape)
    if two_d:  # result (N, C, H, W) row-major: rows at (CHW, W, 1), classes at HW
        h, w = shape[1], shape[2]
        ost, sco = [ncls * h * w, w, 1], h * w
    else:
        ost, sco = [ncls], 1
    if len(gst) != len(shape):  # (C,) input: one row
        gst = [0] * len(shape)
    wbuf, wb, ws = _weight(weight, dt)
    geo = _pw._geometry(shape, [tst, gst, ost])
    _launch("backward", math.prod(shape) * ncls, geo, ncls, sco, ta.buf, ta.offset, wbuf, wb, ws,
            plan.kw["ignore_index"], ga.buf, ga.offset, scale, a.buf)
    return Tensor._make(a, st, d)


def _in_float32(fn, host, plan, args: tuple, two_d: bool) -> Tensor:
    """A float16 loss (or gradient) over float32 copies of its float16 operands, rounded once
    at the end (the CPU kernels compute 16-bit floats in float32 too)."""
    from ... import dtypes as _dt
    from ..plan import Out, Plan

    dev = plan.device
    args32 = tuple(_float32(t, dev) if isinstance(t, Tensor) and t.dtype.name == "float16" else t
                   for t in args)
    o = plan.out
    r32 = fn(host, Plan(Out(o.shape, _dt.float32, o.strides), plan.kw, dev), *args32, two_d)
    a, st = empty(tuple(o.shape), o.dtype.np, dev, o.strides)
    res = Tensor._make(a, st, o.dtype)
    if a.size:
        eager._copy_values(res, r32)
    return res


def _register(name: str, fn, two_d: bool) -> None:
    op = registry.REGISTRY[name]
    host = eager.host_kernel(op)

    def run(plan, *args):
        if plan.out.dtype.name == "float16" and all(
                t is None or t.dtype.name in ("float16", "int64", "uint8") for t in args):
            return _in_float32(fn, host, plan, args, two_d)
        return fn(host, plan, *args, two_d)

    run.__name__ = f"{name}_cuda"
    op.kernels["cuda"] = run


_register("nll_loss", _nll, False)
_register("nll_loss2d", _nll, True)
_register("nll_loss_backward", _nll_backward, False)
_register("nll_loss2d_backward", _nll_backward, True)


def _bce(host, plan, input, target_t, weight):
    """binary_cross_entropy: the elementwise loss (and the range check) in one kernel, then
    the one-block sum for 'sum' and 'mean'."""
    d = plan.out.dtype
    if d.name not in _FLOAT or any(t is not None and t.dtype is not d
                                   for t in (target_t, weight)):
        return host(plan, input, target_t, weight)
    from ...shape import bcast_elem_strides

    dev = plan.device
    a = input._a
    shape = tuple(a.shape)
    n = math.prod(shape)
    red = plan.kw["reduction"]
    if red == "none":
        res, st = empty(shape, d.np, dev, plan.out.strides)
        out, ob, ost = res.buf, res.offset, _strides(res)
    else:
        out, ob, ost = alloc(max(n, 1), d.np), 0, _contig(shape)
    if n:
        ta = _arr(target_t, dev)
        if weight is None:
            wbuf, wb, wst = _one(a.dtype), 0, [0] * len(shape)
        else:
            wa = _arr(weight, dev)
            wbuf, wb, wst = wa.buf, wa.offset, list(bcast_elem_strides(wa, shape))
        rows = [_strides(a), list(bcast_elem_strides(ta, shape)), wst, ost]
        geo = _pw._geometry(shape or (1,), [r or [0] for r in rows])
        err = _flag(0)
        _launch("bce", n, geo, a.buf, a.offset, ta.buf, ta.offset, wbuf, wb, out, ob, err)
        if int(err.copy_to_host()[0]):
            raise RuntimeError("all elements of input should be between 0 and 1")
    if red == "none":
        return Tensor._make(res, st, d)
    ra, rst = empty((), d.np, dev)
    _kernel("sum")[1, _T](out, out, n, 3 if red == "mean" else 0, ra.buf)
    return Tensor._make(ra, rst, d)


_bce_op = registry.REGISTRY["binary_cross_entropy"]
_bce_host = eager.host_kernel(_bce_op)
_bce_op.kernels["cuda"] = lambda plan, *args: _bce(_bce_host, plan, *args)
