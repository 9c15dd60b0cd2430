"""CUDA reductions from the OpDefs' ``map``/``combine``/``post`` and identity, the functions
the CPU reductions inline (``cpu.reduce.part_of``, through ``scalars.part_of``: with CUDA
twins where they call what CUDA does not lower), over the CPU path's 3-D view of the input
(``cpu.reduce.plan_reduce``: ``O`` outer by ``I`` inner results, ``R`` reduced values each,
element strides ``sO``/``sI``/``sR`` in, ``tO``/``tI`` out).

One block computes one result at a time (blocks stride over the results): thread ``t`` folds
elements ``t, t + T, t + 2T, ...`` in order, then the block combines the ``T`` partials in a
shared-memory tree with fixed pairs (``t`` with ``t + w``, ``w = T/2, T/4, ..., 1``). The order
of every combine depends only on ``T`` and ``R``, never on scheduling: results are the same
on every run. (A full reduction of a large array is one block for now; a two-pass version
that first spreads it over the device is the next step.)
"""

from __future__ import annotations

from .. import registry
from ..codegen import NP_CTOR
from ..cpu.reduce import _fingerprint, literal, plan_reduce
from ..source import load
from . import target

THREADS = 128
MAX_BLOCKS = 65535

_mods: dict[tuple, object] = {}
_kernels: dict[tuple, object] = {}

_SOURCE = """\
# {name}: reduction on CUDA, compute {compute}, accumulate {total}, out {out}, {threads} threads
# source fingerprint {fp}
import numpy as np
from jtorch.kernels.cuda.target import cuda
from jtorch.kernels.cuda.scalars import part_of

_m = part_of({name!r}, 'map')
_c = part_of({name!r}, 'combine')
_p = part_of({name!r}, 'post')
_ci = {ci}
_ct = {ct}
_co = {co}
_T = {threads}


def reduce(x, O, I, R, sO, sI, sR, out, tO, tI):
    sh = cuda.shared.array(_T, _ct)
    t = cuda.threadIdx.x
    k = cuda.blockIdx.x
    n = O * I
    while k < n:
        o = k // I
        i = k - o * I
        base = o * sO + i * sI
        acc = _ct({idt})
        r = t
        while r < R:
            acc = _ct(_c(acc, _ct(_ci(_m({load})))))
            r += _T
        sh[t] = acc
        cuda.syncthreads()
        w = _T // 2
        while w > 0:
            if t < w:
                sh[t] = _ct(_c(sh[t], sh[t + w]))
            cuda.syncthreads()
            w //= 2
        if t == 0:
            out[o * tO + i * tI] = _co(_p(sh[0], R))
        cuda.syncthreads()
        k += cuda.gridDim.x
"""


def source(op: registry.OpDef, compute: str, total: str, out: str, threads: int = THREADS,
           widen: bool = False) -> str:
    """``widen``: the input is float16, read as float32 before the op's map (the scalar
    functions are typed for the CPU's dtypes, as the CPU path reads float16 widened)."""
    if threads & (threads - 1):
        raise ValueError(f"threads must be a power of two, got {threads}")
    load = "x[base + r * sR]"
    return _SOURCE.format(name=op.name, compute=compute, total=total, out=out, threads=threads,
                          fp=_fingerprint(op), ci=NP_CTOR[compute], ct=NP_CTOR[total],
                          co=NP_CTOR[out], idt=literal(op.identity, total),
                          load=f"np.float32({load})" if widen else load)


def module(op: registry.OpDef, compute: str, total: str, out: str, threads: int = THREADS,
           widen: bool = False):
    key = (op.name, compute, total, out, threads, widen)
    mod = _mods.get(key)
    if mod is None:
        mod = _mods[key] = load(f"jt_cuda_reduction_{op.name}",
                                source(op, compute, total, out, threads, widen))
    return mod


def kernel(op: registry.OpDef, compute: str, total: str, out: str, threads: int = THREADS,
           widen: bool = False):
    key = (op.name, compute, total, out, threads, widen)
    k = _kernels.get(key)
    if k is None:
        k = _kernels[key] = target.jit(module(op, compute, total, out, threads, widen).reduce)
    return k


def accumulator(op: registry.OpDef, compute: str) -> str:
    """The accumulator dtype: float64 for a wide op (sum, mean) over float32, as on CPU."""
    return "float64" if op.wide and compute == "float32" else compute


_NUMBA_TYPE = {"bool": "boolean"}


def signature(compute: str, out: str, ins: str | None = None) -> str:
    ti = _NUMBA_TYPE.get(ins or compute, ins or compute)
    to = _NUMBA_TYPE.get(out, out)
    return f"void({ti}[::1], int64, int64, int64, int64, int64, int64, {to}[::1], int64, int64)"


def run(op: registry.OpDef, compute: str, out: str, x, shape: tuple, strides: tuple, offset: int,
        dims: tuple, out0, threads: int = THREADS, max_blocks: int = MAX_BLOCKS,
        widen: bool = False) -> None:
    """Reduce ``dims`` of the view (``shape``, element ``strides``, ``offset``) of the 1-D
    device array ``x`` into the contiguous device array ``out0`` of the kept dims. A view
    with no 3-D plan (``cpu.reduce.plan_reduce``) must be made contiguous first."""
    plan = plan_reduce(tuple(shape), tuple(strides), tuple(dims))
    if plan is None:
        raise ValueError(f"{op.name}: this strided view has no 3-D reduction plan; copy it first")
    O, I, R, sO, sI, sR, tO, tI = plan  # noqa: E741  (the CPU plan's names: outer, inner, reduced)
    if O * I == 0:
        return
    if offset:
        x = x[offset:]
    blocks = min(max_blocks, O * I)  # (blocks stride over the results)
    kernel(op, compute, accumulator(op, compute), out, threads, widen)[blocks, threads](
        x, O, I, R, sO, sI, sR, out0, tO, tI)
