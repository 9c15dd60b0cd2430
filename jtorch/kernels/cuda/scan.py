"""Scans on CUDA: cumsum, cumprod, logcumsumexp, cummax, cummin.

Rows of the ``(O, R, I)`` view (``cpu.reduce.plan_dim``) are scanned with the OpDef's
``combine`` (``take`` for cummax/cummin), the functions the CPU scans inline
(``scalars.part_of``: with CUDA twins), in the CPU's dtypes (float32 sums and products
accumulate in float64):
- many rows: one thread per row scans it in order (threads stride over the rows): the CPU's
  result element for element, up to the rounding of the device's ``exp``/``log``;
- few long rows: one block per row, each thread a chunk of ``ceil(R / T)`` elements: the
  chunks' totals, their exclusive prefix by thread 0 in chunk order, then each chunk scanned
  again from its prefix. Sums then round in another order than the CPU's (a fixed one: the
  same on every run); cummax/cummin pick the same elements (the running extreme of the chunks
  before, then of the chunk: ``take`` decides between them as it would element by element).
"""
# ruff: noqa: FURB136  (the builtin min of two integers does not type in Numba's CUDA target:
# kernels spell it out)

from __future__ import annotations

import numpy as np

from ..cpu.reduce import accumulate_dtype, plan_dim
from ..plan import Plan
from . import eager, scalars, target
from .rows import INT64, MAX_BLOCKS, NATIVE, R_THREADS, REG, THREADS, data, flat, launch_size, new
from .target import cuda

_kernels: dict = {}


def _ctor(dt: str):
    return np.bool_ if dt == "bool" else np.dtype(dt).type


def scan_source(name: str, compute: str, total: str, out: str):
    """The kernel of scan ``name``: rows scanned by the OpDef's combine (a closure: the casts
    are constants of the compiled kernel)."""
    c = scalars.part_of(name, "combine")
    ci, ct, co = _ctor(compute), _ctor(total), _ctor(out)

    def scan(x, O, R, I, sO, sR, sI, ident, res):
        t = cuda.grid(1)
        n = O * I
        while t < n:
            o = t // I
            i = t - o * I
            p = o * sO + i * sI
            q = o * R * I + i
            acc = ct(ident)
            for r in range(R):
                acc = ct(c(acc, ct(ci(x[p + r * sR]))))
                res[q + r * I] = co(acc)
            t += cuda.gridsize(1)

    return scan


def take_source(name: str, compute: str):
    """The kernel of cummax / cummin: the running extreme and the index it was taken at."""
    take = scalars.part_of(name, "take")
    ci = _ctor(compute)

    def argscan(x, O, R, I, sO, sR, sI, vals, inds):
        t = cuda.grid(1)
        n = O * I
        while t < n:
            o = t // I
            i = t - o * I
            p = o * sO + i * sI
            q = o * R * I + i
            b = ci(x[p])
            k = 0
            for r in range(R):
                v = ci(x[p + r * sR])
                if take(v, b):
                    b = v
                    k = r
                vals[q + r * I] = b
                inds[q + r * I] = k
            t += cuda.gridsize(1)

    return argscan


def block_scan_source(name: str, compute: str, total: str, out: str, threads: int):
    """The block-per-row kernel of scan ``name`` (chunks, their prefix, the chunks again)."""
    c = scalars.part_of(name, "combine")
    ci, ct, co = _ctor(compute), _ctor(total), _ctor(out)
    T = threads

    def block_scan(x, O, R, I, sO, sR, sI, ident, res):
        sh = cuda.shared.array(T, ct)
        t = cuda.threadIdx.x
        k = cuda.blockIdx.x
        size = (R + T - 1) // T
        lo = t * size
        hi = lo + size if lo + size < R else R
        while k < O * I:
            o = k // I
            i = k - o * I
            p = o * sO + i * sI
            q = o * R * I + i
            acc = ct(ident)
            for r in range(lo, hi):
                acc = ct(c(acc, ct(ci(x[p + r * sR]))))
            sh[t] = acc
            cuda.syncthreads()
            if t == 0:
                run = ct(ident)
                for u in range(T):
                    v = sh[u]
                    sh[u] = run
                    run = ct(c(run, v))
            cuda.syncthreads()
            acc = sh[t]
            for r in range(lo, hi):
                acc = ct(c(acc, ct(ci(x[p + r * sR]))))
                res[q + r * I] = co(acc)
            cuda.syncthreads()
            k += cuda.gridDim.x

    return block_scan


def block_take_source(name: str, compute: str, threads: int):
    """The block-per-row kernel of cummax / cummin: each chunk's running extreme from the
    extreme of the chunks before it."""
    take = scalars.part_of(name, "take")
    ci = _ctor(compute)
    T = threads

    def block_argscan(x, O, R, I, sO, sR, sI, vals, inds):
        sv = cuda.shared.array(T, ci)
        si = cuda.shared.array(T, np.int64)
        t = cuda.threadIdx.x
        k = cuda.blockIdx.x
        size = (R + T - 1) // T
        lo = t * size
        hi = lo + size if lo + size < R else R
        while k < O * I:
            o = k // I
            i = k - o * I
            p = o * sO + i * sI
            q = o * R * I + i
            b = ci(x[p])
            j = -1
            for r in range(lo, hi):
                v = ci(x[p + r * sR])
                if j < 0 or take(v, b):
                    b = v
                    j = r
            sv[t] = b
            si[t] = j
            cuda.syncthreads()
            if t == 0:  # each chunk's entry: the extreme of the chunks before it
                cb = ci(x[p])
                cj = -1
                for u in range(T):
                    v = sv[u]
                    ju = si[u]
                    sv[u] = cb
                    si[u] = cj
                    if ju >= 0 and (cj < 0 or take(v, cb)):
                        cb = v
                        cj = ju
            cuda.syncthreads()
            b = sv[t]
            j = si[t]
            for r in range(lo, hi):
                v = ci(x[p + r * sR])
                if j < 0 or take(v, b):
                    b = v
                    j = r
                vals[q + r * I] = b
                inds[q + r * I] = j
            cuda.syncthreads()
            k += cuda.gridDim.x

    return block_argscan


def kernel(name: str, compute: str, total: str, out: str, take: bool, threads: int = 0):
    """The thread-per-row kernel (``threads`` 0) or the block-per-row one of that many threads."""
    key = (name, compute, total, out, take, threads)
    k = _kernels.get(key)
    if k is None:
        if threads:
            fn = block_take_source(name, compute, threads) if take else \
                block_scan_source(name, compute, total, out, threads)
        else:
            fn = take_source(name, compute) if take else scan_source(name, compute, total, out)
        k = _kernels[key] = target.jit(fn)
    return k


# Rows per launch below which long rows take a block each (more rows fill the device with a
# thread each), and the row length, in threads of a block, from which they do.
BLOCK_ROWS = 4096
BLOCK_LENGTH = 8


def _config(O: int, R: int, I: int) -> tuple:
    """(grid, block threads or 0 for the thread-per-row kernel)."""
    rows = O * I
    if rows < BLOCK_ROWS and R >= BLOCK_LENGTH * R_THREADS:
        return (min(MAX_BLOCKS, rows), R_THREADS), R_THREADS
    return (launch_size(rows), THREADS), 0


def _identity(op, dt: str):
    v = op.identity
    if v in ("lowest", "highest"):
        if dt.startswith("float"):
            return -np.inf if v == "lowest" else np.inf
        info = np.iinfo(np.dtype(dt))
        return int(info.min if v == "lowest" else info.max)
    return float(v) if dt.startswith("float") else int(v)


def scan_cuda(name: str):
    """The CUDA kernel of scan ``name`` into a fresh row-major result in the plan's dtype."""
    op = REG[name]
    host = eager.host_kernel(op)
    take = op.take is not None

    def run(plan: Plan, x):
        d = plan.out[0].dtype if take else plan.out.dtype
        if x.dtype.name not in NATIVE or d.name not in NATIVE:
            return host(plan, x)
        a = x._a
        shape = tuple(a.shape)
        vals = new(shape, d, x.device)
        inds = new(shape, INT64, x.device) if take else None
        if not a.size:
            return (vals, inds) if take else vals
        dim = plan.kw["dim"] if a.ndim else 0
        lay = plan_dim(shape, a.element_strides(), dim)
        if lay is None:
            x = eager._copy(x)
            a = x._a
            lay = plan_dim(shape, a.element_strides(), dim)
        O, R, I, sO, sR, sI = lay
        buf, _ = data(x)
        grid, threads = _config(O, R, I)
        if take:
            kernel(name, d.name, d.name, d.name, True, threads)[grid](buf, O, R, I, sO, sR, sI, flat(vals),
                                                             flat(inds))
            return vals, inds
        total = accumulate_dtype(op, d).name
        kernel(name, d.name, total, d.name, False, threads)[grid](buf, O, R, I, sO, sR, sI,
                                                         _identity(op, total), flat(vals))
        return vals

    return run


for _name in ("cumsum", "cumprod", "logcumsumexp", "cummax", "cummin"):
    REG[_name].kernels["cuda"] = scan_cuda(_name)
