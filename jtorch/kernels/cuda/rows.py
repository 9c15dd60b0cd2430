"""Reductions with indices, statistics, scans, sorts and layer norm on CUDA.

- max/min along a dim, argmax, argmin: one block per result (blocks stride over results);
  thread ``t`` keeps the first extreme of elements ``t, t + T, ...``, then a shared-memory
  tree with fixed pairs keeps, of two candidates, the better one or on a tie the smaller
  index. That is the CPU kernel's answer exactly (the first extreme; nan beats every number
  in both max and min; -0.0 ties with 0.0), whatever the thread count. A single long row
  (argmax of a whole tensor) is cut in segments, a block each, whose results a second launch
  reduces the same way.
- Layer norm: one block per row computes the mean, then the centred sum of squares (float64
  block sums over fixed trees, as the CPU kernel keeps float64 moments), then the output.
- var, std, var_mean, std_mean and logsumexp: one block per result of the 3-D view
  (``cpu.reduce.plan_reduce``), the CPU kernels' two passes (mean then centred squares; max
  then the sum of exponentials) in float64 block sums.
- aminmax, vector norms, nanmean and layer norm's backward are the CPU kernels' formulas
  written with the device's generated reductions (``reduce.py``: deterministic block trees)
  and pointwise kernels, as ``eager.softmax_cuda`` does.
- Scans are in ``scan.py``, sorts (sort, argsort, topk, kthvalue, median, nanmedian, mode) in
  ``sort.py``; both register their ops when this module imports them.

float32, float64 and (where the op takes them) integers and bool run here; 16-bit floats and
complex numbers run the CPU kernel over host copies (``eager.host_kernel``).
"""
# ruff: noqa: PLR0124  (x != x is the nan test that compiles for every dtype)

from __future__ import annotations

import math

import numpy as np

from ... import dispatch
from ... import dtypes as _dt
from ...cuda_array import CudaArray, empty
from ...tensor import Tensor
from .. import registry
from ..cpu.reduce import plan_reduce
from ..defs.reduction import kept_shape
from ..plan import Out, Plan
from . import eager, target
from .target import cuda

FLOAT = frozenset({"float32", "float64"})
NATIVE = eager._NATIVE
THREADS = eager.THREADS
MAX_BLOCKS = eager.MAX_BLOCKS
R_THREADS = eager.R_THREADS

REG = registry.REGISTRY
INT64 = _dt.int64
_Unrecorded = eager._Unrecorded


# -- tensors ----------------------------------------------------------------------------------

def new(shape: tuple, dtype, dev) -> Tensor:
    """A fresh row-major CUDA tensor of jtorch dtype ``dtype`` on device ``dev``."""
    a, st = empty(tuple(shape), dtype.np, dev)
    return Tensor._make(a, st, dtype)


def flat(t: Tensor):
    """The row-major storage of fresh tensor ``t`` as a 1-D device array of its elements."""
    return t._st.buf[:t._a.size]


def reshaped(t: Tensor, shape: tuple) -> Tensor:
    """Row-major ``t`` seen with another shape of the same size (a copy first if not row-major)."""
    if not t._a.flags.c_contiguous:
        t = eager._copy(t)
    a = t._a
    return Tensor._make(CudaArray(tuple(shape), a.dtype, None, a.offset, a.buf, a.dev), t._st,
                        t.dtype)


def filled(out: Out, value, dev) -> Tensor:
    """A fresh tensor of ``out``'s shape and dtype holding ``value``: a reduction of no
    elements (its value: what the kernel's formula gives for them)."""
    t = new(tuple(out.shape), out.dtype, dev)
    if t._a.size:
        eager._fill_storage(t, value)
    return t


def contiguous(t: Tensor) -> Tensor:
    return t if t._a.flags.c_contiguous else eager._copy(t)


def data(x: Tensor):
    """(device array from the view's first element, element strides) of CUDA tensor ``x``."""
    a = x._a
    buf = a.buf[a.offset:] if a.offset else a.buf
    return buf, a.element_strides()


def apply(name: str, *args) -> Tensor:
    return dispatch.pointwise(REG[name], args)


def cast(x: Tensor, d) -> Tensor:
    return x if x.dtype is d else x.to(d)


def launch_size(n: int, threads: int = THREADS) -> int:
    return max(1, min(MAX_BLOCKS, (n + threads - 1) // threads))


# -- value-and-index reductions ---------------------------------------------------------------

@cuda.jit(device=True, inline=True)
def _beats_max(v, b):
    return v > b or (v != v and b == b)


@cuda.jit(device=True, inline=True)
def _beats_min(v, b):
    return v < b or (v != v and b == b)


@cuda.jit(device=True, inline=True)
def _ties(v, b):
    return v == b or (v != v and b != b)


_arg_kernels: dict = {}


def arg_kernel(dt: str, largest: bool, threads: int):
    """The value-and-index reduction kernel of dtype ``dt`` (a closure: the shared arrays'
    dtype and the comparison are constants of the compiled kernel)."""
    key = (dt, largest, threads)
    k = _arg_kernels.get(key)
    if k is None:
        k = _arg_kernels[key] = target.jit(arg_source(dt, largest, threads))
    return k


def arg_source(dt: str, largest: bool, threads: int):
    """The Python function ``arg_kernel`` compiles (PTX tests compile it for sm_90)."""
    vt = np.dtype(dt).type
    beats = _beats_max if largest else _beats_min
    T = threads

    def first_extreme(x, O, I, R, last, sO, sI, sR, vals, idx, tO, tI):
        sv = cuda.shared.array(T, vt)
        si = cuda.shared.array(T, np.int64)
        t = cuda.threadIdx.x
        k = cuda.blockIdx.x
        n = O * I
        while k < n:
            o = k // I
            i = k - o * I
            base = o * sO + i * sI
            n_o = last if o == O - 1 else R  # (a row cut in segments: the last one is short)
            bv = x[base]
            bi = -1
            r = t
            while r < n_o:
                v = x[base + r * sR]
                if bi < 0 or beats(v, bv):
                    bv = v
                    bi = r
                r += T
            sv[t] = bv
            si[t] = bi
            cuda.syncthreads()
            w = T // 2
            while w > 0:
                if t < w:
                    j = si[t + w]
                    h = si[t]
                    v = sv[t + w]
                    u = sv[t]
                    if j >= 0 and (h < 0 or beats(v, u) or (j < h and _ties(v, u))):
                        sv[t] = v
                        si[t] = j
                cuda.syncthreads()
                w //= 2
            if t == 0:
                q = o * tO + i * tI
                vals[q] = sv[0]
                idx[q] = si[0]
            cuda.syncthreads()
            k += cuda.gridDim.x

    return first_extreme


def pick(gi, idx, S, out):
    """The index in the whole row of the best segment's best element."""
    if cuda.grid(1) == 0:
        g = gi[0]
        out[0] = g * S + idx[g]


_pick = [None]

# One long row is cut in up to SEGMENTS segments of at least SEGMENT elements, reduced by a
# block each; a second launch reduces their results (a fixed split: the same on every run).
SEGMENTS = 2 if target.SIMULATOR else 1024
SEGMENT = 8 * R_THREADS


def _segmented(x: Tensor, R: int, sR: int, largest: bool, vals: Tensor, idx: Tensor) -> None:
    G = min(SEGMENTS, (R + SEGMENT - 1) // SEGMENT)
    S = (R + G - 1) // G
    G = (R + S - 1) // S
    part_v = new((G,), x.dtype, x.device)
    part_i = new((G,), INT64, x.device)
    k = arg_kernel(x._a.dtype.name, largest, R_THREADS)
    k[min(MAX_BLOCKS, G), R_THREADS](data(x)[0], G, 1, S, R - (G - 1) * S, S * sR, 0, sR,
                                     flat(part_v), flat(part_i), 1, 0)
    best = new((1,), INT64, x.device)
    k[1, R_THREADS](flat(part_v), 1, 1, G, G, 0, 0, 1, flat(vals), flat(best), 0, 0)
    if _pick[0] is None:
        _pick[0] = target.jit(pick)
    _pick[0][1, 1](flat(best), flat(part_i), S, flat(idx))


def arg_reduce(x: Tensor, dims: tuple, largest: bool, shape: tuple) -> tuple:
    """(values, int64 indices) CUDA tensors of shape ``shape``: the first extreme over ``dims``
    (one dim, or all of a flattened input)."""
    a = x._a
    if plan_reduce(tuple(a.shape), a.element_strides(), dims) is None:
        x = eager._copy(x)
        a = x._a
    vals = new(shape, x.dtype, x.device)
    idx = new(shape, INT64, x.device)
    n = vals._a.size
    if not n:
        return vals, idx
    O, I, R, sO, sI, sR, tO, tI = plan_reduce(tuple(a.shape), a.element_strides(), dims)
    if O * I == 1 and R >= 2 * SEGMENT:
        _segmented(x, R, sR, largest, vals, idx)
        return vals, idx
    buf, _ = data(x)
    blocks = min(MAX_BLOCKS, O * I)
    arg_kernel(a.dtype.name, largest, R_THREADS)[blocks, R_THREADS](
        buf, O, I, R, R, sO, sI, sR, flat(vals), flat(idx), tO, tI)
    return vals, idx


def max_dim_cuda(largest: bool):
    """max(x, dim) / min(x, dim): (values, indices of the first extreme)."""
    host = eager.host_kernel(REG["max" if largest else "min"])

    def run(plan: Plan, x: Tensor) -> tuple:
        if x.dtype.name not in NATIVE:
            return host(plan, x)
        d = plan.kw["dim"]
        return arg_reduce(x, (d,) if x._a.ndim else (), largest, tuple(plan.out[0].shape))

    return run


def argmax_cuda(largest: bool):
    """argmax / argmin: the indices of ``max_dim_cuda`` (dim None: of the flattened input)."""
    host = eager.host_kernel(REG["argmax" if largest else "argmin"])

    def run(plan: Plan, x: Tensor) -> Tensor:
        if x.dtype.name not in NATIVE:
            return host(plan, x)
        d = plan.kw["dim"]
        if d is None:
            x = reshaped(x, (x._a.size,))
            dims = (0,)
        else:
            dims = (d,) if x._a.ndim else ()
        return arg_reduce(x, dims, largest, tuple(plan.out.shape))[1]

    return run


# -- statistics: block-per-result kernels and the device's reductions ----------------------------------------------------

@cuda.jit(device=True, inline=True)
def _block_sum(sh, t, T, acc):
    """The block's total of the threads' ``acc`` (a fixed tree: the same on every run)."""
    sh[t] = acc
    cuda.syncthreads()
    w = T // 2
    while w > 0:
        if t < w:
            sh[t] += sh[t + w]
        cuda.syncthreads()
        w //= 2
    total = sh[0]
    cuda.syncthreads()
    return total


@cuda.jit(device=True, inline=True)
def _larger(a, b):
    """The larger of a and b, nan if either is (``combine.maximum``)."""
    return a if (a != a or a >= b) else b


@cuda.jit(device=True, inline=True)
def _block_max(sh, t, T, v):
    """The block's maximum of the threads' ``v`` (nan if any is nan)."""
    sh[t] = v
    cuda.syncthreads()
    w = T // 2
    while w > 0:
        if t < w:
            sh[t] = _larger(sh[t], sh[t + w])
        cuda.syncthreads()
        w //= 2
    total = sh[0]
    cuda.syncthreads()
    return total


def moments_source(threads: int):
    """var / std (and the mean): one block per result of the 3-D view, the mean then the
    centred sum of squares in float64 block sums, times 1 / max(0, N - correction)."""
    T = threads

    def moments(x, O, I, R, sO, sI, sR, tO, tI, scale, root, var, mean):
        sh = cuda.shared.array(T, np.float64)
        t = cuda.threadIdx.x
        k = cuda.blockIdx.x
        while k < O * I:
            o = k // I
            i = k - o * I
            base = o * sO + i * sI
            acc = 0.0
            r = t
            while r < R:
                acc += np.float64(x[base + r * sR])
                r += T
            m = _block_sum(sh, t, T, acc) / R
            acc = 0.0
            r = t
            while r < R:
                d = np.float64(x[base + r * sR]) - m
                acc += d * d
                r += T
            v = _block_sum(sh, t, T, acc) * scale
            if t == 0:
                q = o * tO + i * tI
                var[q] = math.sqrt(v) if root else v
                mean[q] = m
            k += cuda.gridDim.x

    return moments


def logsumexp_source(threads: int):
    """logsumexp: one block per result, the maximum m (0 where not finite), then
    log(sum(exp(x - m))) + m, in float64."""
    T = threads

    def logsumexp(x, O, I, R, sO, sI, sR, tO, tI, out):
        sh = cuda.shared.array(T, np.float64)
        t = cuda.threadIdx.x
        k = cuda.blockIdx.x
        while k < O * I:
            o = k // I
            i = k - o * I
            base = o * sO + i * sI
            mx = -math.inf
            r = t
            while r < R:
                mx = _larger(mx, np.float64(x[base + r * sR]))
                r += T
            m = _block_max(sh, t, T, mx)
            m = m if abs(m) < math.inf else 0.0
            acc = 0.0
            r = t
            while r < R:
                acc += math.exp(np.float64(x[base + r * sR]) - m)
                r += T
            s = _block_sum(sh, t, T, acc)
            if t == 0:
                out[o * tO + i * tI] = math.log(s) + m
            k += cuda.gridDim.x

    return logsumexp


_row_kernels: dict = {}


def row_kernel(name: str, threads: int):
    """The jitted kernel of ``<name>_source`` (moments, logsumexp, layer_norm)."""
    key = (name, threads)
    k = _row_kernels.get(key)
    if k is None:
        k = _row_kernels[key] = target.jit(globals()[f"{name}_source"](threads))
    return k


def reduce_view(x: Tensor, dims: tuple) -> tuple:
    """(tensor, its 3-D view ``(O, I, R, sO, sI, sR, tO, tI)``) reducing ``dims`` (the
    tensor a copy, kept dims first, when no such view exists)."""
    a = x._a
    lay = plan_reduce(tuple(a.shape), a.element_strides(), dims)
    if lay is None:
        kept = [k for k in range(a.ndim) if k not in dims]
        with _Unrecorded():
            x = eager._copy(x.permute(*kept, *dims))
        a = x._a
        lay = plan_reduce(tuple(a.shape), a.element_strides(), tuple(range(len(kept), a.ndim)))
    return x, lay


_reducers: dict = {}


def reduce(name: str, x: Tensor, dims: tuple, keepdim: bool, d) -> Tensor:
    """Reduction OpDef ``name`` (sum, mean, amax, sumsq, norm_l2, ...) over ``dims`` of a
    non-empty ``x`` into dtype ``d`` on the device."""
    r = _reducers.get(name)
    if r is None:
        r = _reducers[name] = eager.reduction_cuda(REG[name])
    shape = kept_shape(tuple(x._a.shape), dims, keepdim)
    a = x._a
    if plan_reduce(tuple(a.shape), a.element_strides(), dims) is None:
        # (reduced dims that no copy in place merges: kept dims first, then the reduced ones;
        # the result's order is the kept dims' either way)
        x, _ = reduce_view(x, dims)
        dims = tuple(range(a.ndim - len(dims), a.ndim))
    return r(Plan(Out(shape, d), {"dim": dims, "keepdim": keepdim}, x.device), x)


def aminmax_cuda(plan: Plan, x: Tensor) -> tuple:
    """amin and amax: the device's two reductions."""
    if x.dtype.name not in NATIVE:
        return _host["aminmax"](plan, x)
    if not x._a.size:  # (no result either: the meta rule refuses empty reductions)
        return tuple(new(tuple(o.shape), o.dtype, plan.device) for o in plan.out)
    kw = plan.kw
    return (reduce("amin", x, kw["dim"], kw["keepdim"], x.dtype),
            reduce("amax", x, kw["dim"], kw["keepdim"], x.dtype))


def moments_cuda(name: str, root: bool, with_mean: bool):
    """var / std and var_mean / std_mean: the CPU kernel's two passes (the mean, then the sum
    of squared deviations from it, over max(0, N - correction)) in one kernel."""

    def run(plan: Plan, x: Tensor):
        if x.dtype.name not in FLOAT:
            return _host[name](plan, x)
        if not x._a.size:  # 0 / 0 (the mean too)
            outs = plan.out if with_mean else (plan.out,)
            res = tuple(filled(o, math.nan, plan.device) for o in outs)
            return res if with_mean else res[0]
        kw = plan.kw
        dims = kw["dim"]
        n = math.prod(x._a.shape[d] for d in dims)
        out = plan.out[0] if with_mean else plan.out
        v = new(tuple(out.shape), out.dtype, plan.device)
        m = new(tuple(out.shape), out.dtype, plan.device)
        x, (O, I, R, sO, sI, sR, tO, tI) = reduce_view(x, dims)
        dof = max(0, n - kw["correction"])
        row_kernel("moments", R_THREADS)[min(MAX_BLOCKS, O * I), R_THREADS](
            data(x)[0], O, I, R, sO, sI, sR, tO, tI, 1.0 / dof if dof else math.inf, root,
            flat(v), flat(m))
        return (v, m) if with_mean else v

    return run


def logsumexp_cuda(plan: Plan, x: Tensor) -> Tensor:
    """log(sum(exp(x - m))) + m with m the maximum (0 where it is not finite)."""
    d = plan.out.dtype
    if d.name not in FLOAT or x.dtype.name not in NATIVE:
        return _host["logsumexp"](plan, x)
    if not x._a.size:  # log(0)
        return filled(plan.out, -math.inf, plan.device)
    if x.dtype is not d:
        with _Unrecorded():
            x = cast(x, d)
    res = new(tuple(plan.out.shape), d, plan.device)
    x, (O, I, R, sO, sI, sR, tO, tI) = reduce_view(x, plan.kw["dim"])
    row_kernel("logsumexp", R_THREADS)[min(MAX_BLOCKS, O * I), R_THREADS](
        data(x)[0], O, I, R, sO, sI, sR, tO, tI, flat(res))
    return res


_NORMS = {2.0: "norm_l2", 1.0: "norm_l1", math.inf: "norm_linf", -math.inf: "norm_lninf"}


def norm_cuda(plan: Plan, x: Tensor) -> Tensor:
    """linalg.vector_norm: ord 2, 1, inf, -inf by their reductions, 0 as a count, any other
    p as sum(|x|^p)^(1/p)."""
    d = plan.out.dtype
    if d.name not in FLOAT or x.dtype.name not in NATIVE:
        return _host["norm"](plan, x)
    kw = plan.kw
    p = float(kw["ord"])
    if not x._a.size:  # a sum of none (0), to the power 1/p (inf for p < 0)
        return filled(plan.out, 0.0 if p >= 0 else math.inf, plan.device)
    dims, keepdim = kw["dim"], kw["keepdim"]
    with _Unrecorded():
        x = cast(x, d)
        name = _NORMS.get(p)
        if name is not None:
            return reduce(name, x, dims, keepdim, d)
        if p == 0:
            return cast(reduce("count_nonzero", x, dims, keepdim, INT64), d)
        s = reduce("sum", apply("pow", apply("abs", x), p), dims, keepdim, d)
        return apply("pow", s, 1.0 / p)


def nanmean_cuda(plan: Plan, x: Tensor) -> Tensor:
    """nansum over the count of non-nan elements."""
    d = plan.out.dtype
    if d.name not in FLOAT or x.dtype.name not in FLOAT:
        return _host["nanmean"](plan, x)
    if not x._a.size:  # 0 / 0
        return filled(plan.out, math.nan, plan.device)
    dims, keepdim = plan.kw["dim"], plan.kw["keepdim"]
    with _Unrecorded():
        total = reduce("nansum", x, dims, keepdim, d)
        keep = apply("logical_not", apply("isnan", x))
        cnt = reduce("count_nonzero", keep, dims, keepdim, INT64)
        return apply("div", total, cnt)


# -- layer norm ------------------------------------------------------------------------------

def layer_norm_source(threads: int):
    """The layer norm kernel: one block per row (blocks stride over rows), the row's mean and
    centred sum of squares in float64 block sums, then y in float64 rounded once (the CPU
    kernel keeps float64 moments too)."""
    T = threads

    def layer_norm(x, w, b, M, N, eps, has_w, has_b, y, mean, rstd):
        sh = cuda.shared.array(T, np.float64)
        t = cuda.threadIdx.x
        row = cuda.blockIdx.x
        while row < M:
            base = row * N
            acc = 0.0
            j = t
            while j < N:
                acc += np.float64(x[base + j])
                j += T
            m = _block_sum(sh, t, T, acc) / N
            acc = 0.0
            j = t
            while j < N:
                d = np.float64(x[base + j]) - m
                acc += d * d
                j += T
            r = 1.0 / math.sqrt(_block_sum(sh, t, T, acc) / N + eps)
            j = t
            while j < N:
                v = (np.float64(x[base + j]) - m) * r
                if has_w:
                    v *= w[j]
                if has_b:
                    v += b[j]
                y[base + j] = v
                j += T
            if t == 0:
                mean[row] = m
                rstd[row] = r
            row += cuda.gridDim.x

    return layer_norm


def layer_norm_cuda(plan: Plan, x: Tensor, w, b) -> tuple:
    """(y, mean, rstd) of rows normalised over the last dims: one fused kernel."""
    out, stat, _ = plan.out
    if out.dtype.name not in FLOAT or not x._a.size or any(
            t is not None and t.dtype is not x.dtype for t in (w, b)):
        return _host["native_layer_norm"](plan, x, w, b)
    k = len(plan.kw["dims"])
    n = math.prod(out.shape[len(out.shape) - k:])
    m = x._a.size // n
    x = contiguous(x)
    y = new(out.shape, out.dtype, x.device)
    mean = new(stat.shape, out.dtype, x.device)
    rstd = new(stat.shape, out.dtype, x.device)
    xs = data(x)[0]
    ws = xs if w is None else data(contiguous(w))[0]
    bs = xs if b is None else data(contiguous(b))[0]
    row_kernel("layer_norm", R_THREADS)[min(MAX_BLOCKS, m), R_THREADS](
        xs, ws, bs, m, n, float(plan.kw["eps"]), w is not None, b is not None, flat(y), flat(mean),
        flat(rstd))
    return y, mean, rstd


def layer_norm_backward_cuda(plan: Plan, g: Tensor, x: Tensor, mean: Tensor, rstd: Tensor,
                             w) -> tuple:
    """gx = (gh - mean(gh) - xhat * mean(gh * xhat)) * rstd with gh = g * w; gw = the sum over
    rows of g * xhat, gb of g."""
    gx_out, gw_out, gb_out = plan.out
    do_x, do_w, do_b = plan.kw["mask"]
    d = gx_out.dtype
    args = (g, x, mean, rstd, w)
    if d.name not in FLOAT or not x._a.size or any(
            t is not None and t.dtype is not d for t in args):
        return _host["native_layer_norm_backward"](plan, *args)
    nd = x._a.ndim
    dims = tuple(nd + k for k in plan.kw["dims"])
    lead = tuple(range(nd - len(dims)))
    n = math.prod(x._a.shape[k] for k in dims)
    with _Unrecorded():
        xhat = apply("mul", apply("sub", x, mean), rstd)
        gx = gw = gb = None
        if do_x:
            gh = g if w is None else apply("mul", g, w)
            a = apply("div", reduce("sum", gh, dims, True, d), float(n))
            c = apply("div", reduce("sum", apply("mul", gh, xhat), dims, True, d), float(n))
            gx = contiguous(apply("mul", apply("sub", apply("sub", gh, a), apply("mul", xhat, c)),
                                  rstd))
        if do_w:
            gw = reshaped(reduce("sum", apply("mul", g, xhat), lead, False, d), gw_out.shape)
        if do_b:
            gb = reshaped(reduce("sum", g, lead, False, d), gb_out.shape)
    return tuple(t if t is not None else new(o.shape, d, x.device) for t, o in
                 zip((gx, gw, gb), plan.out))


# -- registration -----------------------------------------------------------------------------

def _register() -> None:
    for name in ("aminmax", "var", "std", "var_mean", "std_mean", "logsumexp", "norm", "nanmean",
                 "native_layer_norm", "native_layer_norm_backward"):
        _host[name] = eager.host_kernel(REG[name])
    kernels = {
        "max": max_dim_cuda(True), "min": max_dim_cuda(False),
        "argmax": argmax_cuda(True), "argmin": argmax_cuda(False),
        "aminmax": aminmax_cuda,
        "var": moments_cuda("var", False, False), "std": moments_cuda("std", True, False),
        "var_mean": moments_cuda("var_mean", False, True),
        "std_mean": moments_cuda("std_mean", True, True),
        "logsumexp": logsumexp_cuda, "norm": norm_cuda, "nanmean": nanmean_cuda,
        "native_layer_norm": layer_norm_cuda,
        "native_layer_norm_backward": layer_norm_backward_cuda,
    }
    for name, fn in kernels.items():
        REG[name].kernels["cuda"] = fn


_host: dict = {}  # op name -> its host path, for the calls the kernels above leave to it
_register()

from . import scan, sort  # noqa: F401  (each registers its ops' kernels)
