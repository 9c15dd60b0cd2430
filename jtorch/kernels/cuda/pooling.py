"""Pooling kernels on CUDA: max, average and their adaptive forms (2-d and 3-d), their
backwards, and max unpooling.

The CPU kernels' window tables (``defs/pooling.Windows``: per dim, the input range
``lo[o]..hi[o]`` step ``step`` of output ``o`` and average pooling's divisor factors) are
uploaded once per geometry, so one kernel serves regular and adaptive windows alike. Operands
are read at their element strides as (P0, P1, D, H, W): the leading dims but the last merged
into P0 (a copy when they do not merge), a missing spatial dim of size 1 and stride 0.

- forwards: one thread per output element, the CPU kernel's loop per window (the same sums in
  the same order, the same maximum and index: the first maximum, or the last NaN);
- average backward: a gather, one thread per input element summing ``g / divisor`` over the
  windows that cover it (found through inverse tables), in the CPU kernel's order;
- max backward and unpooling: one thread per plane walks that plane's outputs in order (the
  indices are data, not windows: no table says which outputs reach an input element), so no
  two threads write one element and the sums are the CPU kernel's.

float32 and float64 run here (max pooling and unpooling also integers); other dtypes take the
host path.
"""

from __future__ import annotations

import math

import numpy as np

from ... import dtypes as _dt
from ...cuda_array import download
from .. import registry
from ..plan import Plan
from . import conv as _cv
from . import eager, target
from .target import cuda

_FLOAT = frozenset({"float32", "float64"})
_ORDERED = _FLOAT | {"float16", "int8", "int16", "int32", "int64", "uint8"}  # (compared, not summed)


# -- kernels ---------------------------------------------------------------------------------

def max_pool_kernel(x, ox, sa, sb, nb, sxd, sxh, sxw, H, W, out, idx, P, OD, OH, OW,
                    lod, hid, sd, loh, hih, sh, low, hiw, sw, lowest):
    """Each window's NaN-propagating maximum and its flat plane index (the first equal
    element, or the last NaN where the maximum is NaN), as ``cpu/pooling._max_plane``."""
    total = P * OD * OH * OW
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    while t < total:
        ow = t % OW
        oh = (t // OW) % OH
        od = (t // (OW * OH)) % OD
        p = t // (OW * OH * OD)
        base = ox + (p // nb) * sa + (p % nb) * sb
        d0 = lod[od]
        h0 = loh[oh]
        w0 = low[ow]
        n_d = (hid[od] - d0 + sd - 1) // sd
        n_h = (hih[oh] - h0 + sh - 1) // sh
        n_w = (hiw[ow] - w0 + sw - 1) // sw
        m = lowest
        best = (d0 * H + h0) * W + w0
        if n_d > 0 and n_h > 0 and n_w > 0:
            m = x[base + d0 * sxd + h0 * sxh + w0 * sxw]
            for i in range(n_d):
                for j in range(n_h):
                    for k in range(n_w):
                        v = x[base + (d0 + i * sd) * sxd + (h0 + j * sh) * sxh +
                              (w0 + k * sw) * sxw]
                        if not (m > v or m != m):  # noqa: PLR0124  (NaN wins)
                            m = v
            last_nan = -1
            for i in range(n_d - 1, -1, -1):
                d = d0 + i * sd
                for j in range(n_h - 1, -1, -1):
                    h = h0 + j * sh
                    for k in range(n_w - 1, -1, -1):
                        w = w0 + k * sw
                        v = x[base + d * sxd + h * sxh + w * sxw]
                        at = (d * H + h) * W + w
                        if v == m:
                            best = at
                        if v != v and last_nan < 0:  # noqa: PLR0124
                            last_nan = at
            if m != m:  # noqa: PLR0124
                best = last_nan
        out[t] = m
        idx[t] = best
        t += step


def avg_pool_kernel(x, ox, sa, sb, nb, sxd, sxh, sxw, out, P, OD, OH, OW,
                    lod, hid, fd, loh, hih, fh, low, hiw, fw, override, zero):
    """Each window's sum over its divisor, as ``cpu/pooling._avg_plane``."""
    total = P * OD * OH * OW
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    while t < total:
        ow = t % OW
        oh = (t // OW) % OH
        od = (t // (OW * OH)) % OD
        p = t // (OW * OH * OD)
        base = ox + (p // nb) * sa + (p % nb) * sb
        s = zero
        for d in range(lod[od], hid[od]):
            for h in range(loh[oh], hih[oh]):
                for w in range(low[ow], hiw[ow]):
                    s += x[base + d * sxd + h * sxh + w * sxw]
        div = override
        if override == 0:
            div = fd[od] * fh[oh] * fw[ow]
        out[t] = s / div
        t += step


def avg_backward_kernel(g, og, sa, sb, nb, sgd, sgh, sgw, gi, P, D, H, W,
                        fd, fh, fw, override, ad, bd, ah, bh, aw, bw, zero):
    """gi[p, d, h, w] = the sum of g / divisor over the windows that cover (d, h, w): outputs
    ``a[i] .. b[i]`` per dim; the CPU kernel adds them in this order too."""
    total = P * D * H * W
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    while t < total:
        w = t % W
        h = (t // W) % H
        d = (t // (W * H)) % D
        p = t // (W * H * D)
        base = og + (p // nb) * sa + (p % nb) * sb
        s = zero
        for od in range(ad[d], bd[d]):
            for oh in range(ah[h], bh[h]):
                for ow in range(aw[w], bw[w]):
                    div = override
                    if override == 0:
                        div = fd[od] * fh[oh] * fw[ow]
                    s += g[base + od * sgd + oh * sgh + ow * sgw] / div
        gi[t] = s
        t += step


def max_backward_kernel(g, og, sa, sb, nb, sgd, sgh, sgw, idx, oi, ia, ib, sid, sih, siw,
                        gi, P, n, OD, OH, OW):
    """Plane p of zeroed gi (row-major, ``n`` elements) += g scattered through idx, by one
    thread walking the plane's outputs in order."""
    p = cuda.grid(1)
    step = cuda.gridsize(1)
    while p < P:
        lo = p * n
        gb = og + (p // nb) * sa + (p % nb) * sb
        ibase = oi + (p // nb) * ia + (p % nb) * ib
        for od in range(OD):
            for oh in range(OH):
                for ow in range(OW):
                    k = idx[ibase + od * sid + oh * sih + ow * siw]
                    if k >= 0 and k < n:
                        gi[lo + k] += g[gb + od * sgd + oh * sgh + ow * sgw]
        p += step


def unpool_kernel(x, ox, sa, sb, nb, sxd, sxh, sxw, idx, oi, ia, ib, sid, sih, siw,
                  out, P, n, ID, IH, IW, bad):
    """Each value of plane p put at its index in plane p of zeroed out (row-major, ``n``
    elements), by one thread in the plane's order; ``bad[p]`` = (1, the last index out of
    range) or (0, -1)."""
    p = cuda.grid(1)
    step = cuda.gridsize(1)
    while p < P:
        lo = p * n
        xb = ox + (p // nb) * sa + (p % nb) * sb
        ibase = oi + (p // nb) * ia + (p % nb) * ib
        bad[2 * p] = 0
        bad[2 * p + 1] = -1
        for d in range(ID):
            for h in range(IH):
                for w in range(IW):
                    k = idx[ibase + d * sid + h * sih + w * siw]
                    if k < 0 or k >= n:
                        bad[2 * p] = 1
                        bad[2 * p + 1] = k
                    else:
                        out[lo + k] = x[xb + d * sxd + h * sxh + w * sxw]
        p += step


KERNELS = {"max_pool": max_pool_kernel, "avg_pool": avg_pool_kernel,
           "avg_backward": avg_backward_kernel, "max_backward": max_backward_kernel,
           "unpool": unpool_kernel}
_kernels: dict = {}


def kernel(name: str):
    k = _kernels.get(name)
    if k is None:
        k = _kernels[name] = target.jit(KERNELS[name])
    return k


def signatures(dtype: str) -> dict:
    """Numba signatures of this module's kernels for ``compile_ptx`` (spans are 1-D arrays)."""
    span, i, tab = f"{dtype}[::1]", "int64", "int64[::1]"
    ftab = f"{dtype}[::1]"
    ints = lambda k: ", ".join([i] * k)
    sigs = {
        "max_pool": f"void({span}, {ints(9)}, {span}, {tab}, {ints(4)}, {tab}, {tab}, {i}, "
                    f"{tab}, {tab}, {i}, {tab}, {tab}, {i}, {dtype})",
        "max_backward": f"void({span}, {ints(7)}, {tab}, {ints(6)}, {span}, {ints(5)})",
        "unpool": f"void({span}, {ints(7)}, {tab}, {ints(6)}, {span}, {ints(5)}, {tab})",
    }
    if dtype in _FLOAT:
        sigs["avg_pool"] = (f"void({span}, {ints(7)}, {span}, {ints(4)}, {tab}, {tab}, {ftab}, "
                            f"{tab}, {tab}, {ftab}, {tab}, {tab}, {ftab}, {dtype}, {dtype})")
        sigs["avg_backward"] = (f"void({span}, {ints(7)}, {span}, {ints(4)}, {ftab}, {ftab}, "
                                f"{ftab}, {dtype}, {', '.join([tab] * 6)}, {dtype})")
    return sigs


# -- operands --------------------------------------------------------------------------------

def planes(t, nd: int) -> tuple:
    """(tensor, (span, offset, P0 stride, P1 stride, P1), spatial element strides (3)) of an
    operand with ``nd`` trailing spatial dims; leading dims but the last that do not merge
    make a row-major copy."""
    a = t._a
    shape, st = tuple(a.shape), a.element_strides()
    lead = a.ndim - nd
    sa = _cv.merged_stride(shape[:lead - 1], st[:lead - 1]) if lead > 1 else 0
    if sa is None:
        t = eager._copy(t)
        return planes(t, nd)
    nb, sb = (shape[lead - 1], st[lead - 1]) if lead else (1, 0)
    sp = (0,) * (3 - nd) + st[lead:]
    return t, (a.buf, a.offset, sa, sb, nb), sp


def spatial(shape: tuple, nd: int) -> tuple:
    return (1,) * (3 - nd) + tuple(shape[len(shape) - nd:])


_tables: dict = {}


def tables(win, key, dev, build):
    """Device copies of a Windows' tables, made once per Windows and device (the entry keeps
    the Windows, so its id is not reused while the entry lives)."""
    k = (id(win), key, dev)
    e = _tables.get(k)
    if e is None or e[0] is not win:
        if len(_tables) > 1024:
            _tables.clear()
        e = _tables[k] = (win, tuple(target.to_device(np.ascontiguousarray(a)) for a in build()))
    return e[1]


def _ranges(win) -> tuple:
    return tuple(a for i in range(3) for a in (win.lo[i], win.hi[i]))


def _inverse(win, in_sp: tuple) -> tuple:
    """Per dim, the outputs ``a[i] .. b[i]`` whose windows hold input index i (lo and hi grow
    with o, so they are a range)."""
    res = []
    for i in range(3):
        pos = np.arange(in_sp[i], dtype=np.int64)
        res += [np.searchsorted(win.hi[i], pos, "right").astype(np.int64),
                np.searchsorted(win.lo[i], pos, "right").astype(np.int64)]
    return tuple(res)


def zero(t, dev) -> None:
    """Zeros into a fresh tensor (the fill kernel: coalesced, unlike a loop per plane)."""
    eager.fill_cuda(Plan(None, {"value": 0}, dev), t)


# -- kernel entries --------------------------------------------------------------------------

def max_pool_cuda(op_name: str):
    host = eager.host_kernel(registry.REGISTRY[op_name])

    def run(plan, x):
        d = x.dtype
        if d.name not in _ORDERED:
            return host(plan, x)
        kw = plan.kw
        win, nd = kw["win"], kw["nd"]
        shape = tuple(plan.out[0].shape)
        vals = _cv.fresh(shape, d, plan.device)
        idx = _cv.fresh(shape, plan.out[1].dtype, plan.device)
        total = vals._a.size
        if not total:
            return vals, idx
        x, (xb, xo, sa, sb, nb), sx = planes(x, nd)
        _, h, w = spatial(tuple(x._a.shape), nd)
        od, oh, ow = win.out_size
        lowest = d.np.type(-np.inf) if d.np.kind == "f" else d.np.type(np.iinfo(d.np).min)
        lo0, hi0, lo1, hi1, lo2, hi2 = tables(win, "ranges", plan.device, lambda: _ranges(win))
        s = win.step
        kernel("max_pool")[_cv.launch_shape(total)](
            xb, xo, sa, sb, nb, *sx, h, w, vals._a.buf, idx._a.buf, total // (od * oh * ow),
            od, oh, ow, lo0, hi0, s[0], lo1, hi1, s[1], lo2, hi2, s[2], lowest)
        return vals, idx

    return run


def max_pool_backward_cuda(op_name: str):
    host = eager.host_kernel(registry.REGISTRY[op_name])

    def run(plan, g, idx):
        d = plan.out.dtype
        if d.name not in _FLOAT or g.dtype is not d:
            return host(plan, g, idx)
        kw = plan.kw
        nd, in_shape = kw["nd"], tuple(kw["shape"])
        gi = _cv.fresh(in_shape, d, plan.device)
        if not gi._a.size:
            return gi
        n = math.prod(spatial(in_shape, nd))
        p = gi._a.size // n
        g, (gb, go, sa, sb, nb), sg = planes(g, nd)
        idx, (ib, io, ia, ib_, _), si = planes(idx, nd)
        od, oh, ow = spatial(tuple(g._a.shape), nd)
        zero(gi, plan.device)
        kernel("max_backward")[_cv.launch_shape(p)](
            gb, go, sa, sb, nb, *sg, ib, io, ia, ib_, *si, gi._a.buf, p, n, od, oh, ow)
        return gi

    return run


def avg_pool_cuda(op_name: str):
    host = eager.host_kernel(registry.REGISTRY[op_name])

    def run(plan, x):
        d = x.dtype
        if d.name not in _FLOAT:
            return host(plan, x)
        kw = plan.kw
        win, nd = kw["win"], kw["nd"]
        res = _cv.fresh(tuple(plan.out.shape), d, plan.device)
        total = res._a.size
        if not total:
            return res
        x, (xb, xo, sa, sb, nb), sx = planes(x, nd)
        od, oh, ow = win.out_size
        args = win.avg_args(d.np)
        lo0, hi0, lo1, hi1, lo2, hi2 = tables(win, "ranges", plan.device, lambda: _ranges(win))
        f0, f1, f2 = tables(win, d.name, plan.device, lambda: (args[2], args[5], args[8]))
        kernel("avg_pool")[_cv.launch_shape(total)](
            xb, xo, sa, sb, nb, *sx, res._a.buf, total // (od * oh * ow), od, oh, ow,
            lo0, hi0, f0, lo1, hi1, f1, lo2, hi2, f2, args[9], d.np.type(0))
        return res

    return run


def avg_pool_backward_cuda(op_name: str):
    host = eager.host_kernel(registry.REGISTRY[op_name])

    def run(plan, g):
        d = plan.out.dtype
        if d.name not in _FLOAT or g.dtype is not d:
            return host(plan, g)
        kw = plan.kw
        win, nd, in_shape = kw["win"], kw["nd"], tuple(kw["shape"])
        gi = _cv.fresh(in_shape, d, plan.device)
        total = gi._a.size
        if not total:
            return gi
        in_sp = spatial(in_shape, nd)
        g, (gb, go, sa, sb, nb), sg = planes(g, nd)
        args = win.avg_args(d.np)
        f0, f1, f2 = tables(win, d.name, plan.device, lambda: (args[2], args[5], args[8]))
        inv = tables(win, ("inverse", in_sp), plan.device, lambda: _inverse(win, in_sp))
        kernel("avg_backward")[_cv.launch_shape(total)](
            gb, go, sa, sb, nb, *sg, gi._a.buf, total // math.prod(in_sp), *in_sp,
            f0, f1, f2, args[9], *inv, d.np.type(0))
        return gi

    return run


def unpool_cuda(op_name: str):
    host = eager.host_kernel(registry.REGISTRY[op_name])

    def run(plan, x, idx):
        d = x.dtype
        if d.name not in _ORDERED:
            return host(plan, x, idx)
        nd = plan.kw["nd"]
        shape = tuple(plan.out.shape)
        res = _cv.fresh(shape, d, plan.device)
        n = math.prod(spatial(shape, nd))
        p = math.prod(shape[:len(shape) - nd])
        if not (res._a.size or x._a.size):
            return res
        x, (xb, xo, sa, sb, nb), sx = planes(x, nd)
        idx, (ib, io, ia, ib_, _), si = planes(idx, nd)
        in_sp = spatial(tuple(x._a.shape), nd)
        bad = _cv.fresh((2 * max(p, 1),), _dt.int64, plan.device)
        if res._a.size:
            zero(res, plan.device)
        kernel("unpool")[_cv.launch_shape(p)](
            xb, xo, sa, sb, nb, *sx, ib, io, ia, ib_, *si, res._a.buf, p, n, *in_sp, bad._a.buf)
        flags = download(bad._a).reshape(-1, 2)[:p]
        hit = np.flatnonzero(flags[:, 0])
        if hit.size and flags[hit[-1], 1] != -1:
            size = shape[len(shape) - nd:]
            raise RuntimeError(f"Found an invalid max index: {flags[hit[-1], 1]} (output volumes "
                               f"are of size {'x'.join(str(v) for v in size)})")
        return res

    return run


for _nd in (2, 3):
    for _name in (f"max_pool{_nd}d_with_indices", f"adaptive_max_pool{_nd}d"):
        registry.REGISTRY[_name].kernels["cuda"] = max_pool_cuda(_name)
        registry.REGISTRY[_name + "_backward"].kernels["cuda"] = \
            max_pool_backward_cuda(_name + "_backward")
    for _name in (f"avg_pool{_nd}d", f"adaptive_avg_pool{_nd}d"):
        registry.REGISTRY[_name].kernels["cuda"] = avg_pool_cuda(_name)
        registry.REGISTRY[_name + "_backward"].kernels["cuda"] = \
            avg_pool_backward_cuda(_name + "_backward")
    registry.REGISTRY[f"max_unpool{_nd}d"].kernels["cuda"] = unpool_cuda(f"max_unpool{_nd}d")
