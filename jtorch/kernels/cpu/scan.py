"""Loop templates for scans (cumsum, cumprod, logcumsumexp, cummax, cummin).

A scan runs along the middle dim of a strided ``(O, R, I)`` view (``reduce.plan_dim``) into
a contiguous ``(O, R, I)`` output. Per (op, compute, accumulate, out dtype) one module is
generated from the OpDef's ``combine``/``identity`` (``take`` for the value-and-index scans):
rows run sequentially along R; with I > 1 the running accumulators of the inner dim are a
vector, so the inner loop vectorises. float32 sums and products accumulate in float64, as
torch's CPU kernels do.
"""

from __future__ import annotations

from ... import dtypes as _dt
from ...shape import span
from .. import registry
from ..codegen import NP_CTOR as _NP_CTOR
from ..source import load
from . import half as _half
from . import reduce as _rk
from .reduce import _fingerprint, literal

_mods: dict[tuple, object] = {}

_HEADER = """\
import numpy as np
from numba import prange
from jtorch.kernels.jit import njit
from jtorch.kernels.cpu.reduce import part_of
"""

_OPTS = "cache=True, nogil=True, error_model='numpy'"

_SCAN = """
_c = part_of({name!r}, 'combine')
_ci = {ci}
_ct = {ct}
_co = {co}
_IDT = _ct({idt})


@njit({opts})
def block(x, p, R, I, sR, sI, out, q, acc):
    # rows p + r*sR (inner stride sI) of one outer index into out[q:q + R*I]
    if I == 1:
        t = _IDT
        for r in range(R):
            t = _ct(_c(t, _ct(_ci(x[p + r * sR]))))
            out[q + r] = _co(t)
        return
    for i in range(I):
        acc[i] = _IDT
    for r in range(R):
        a = p + r * sR
        b = q + r * I
        if sI == 1:
            src = x[a:a + I]
            dst = out[b:b + I]
            for i in range(I):
                v = _ct(_c(acc[i], _ct(_ci(src[i]))))
                acc[i] = v
                dst[i] = _co(v)
        else:
            for i in range(I):
                v = _ct(_c(acc[i], _ct(_ci(x[a + i * sI]))))
                acc[i] = v
                out[b + i] = _co(v)


@njit({opts})
def s(x, O, R, I, sO, sR, sI, out):
    acc = np.empty(I, _ct)
    for o in range(O):
        block(x, o * sO, R, I, sR, sI, out, o * R * I, acc)


@njit({opts}, parallel=True)
def p(x, O, R, I, sO, sR, sI, out):
    for o in prange(O):
        acc = np.empty(I, _ct)
        block(x, o * sO, R, I, sR, sI, out, o * R * I, acc)
"""

_ARGSCAN = """
_t = part_of({name!r}, 'take')
_ci = {ci}


@njit({opts})
def block(x, p, R, I, sR, sI, vals, inds, q, best, bi):
    if I == 1:
        b = _ci(x[p])
        k = 0
        for r in range(R):
            v = _ci(x[p + r * sR])
            if _t(v, b):
                b = v
                k = r
            vals[q + r] = b
            inds[q + r] = k
        return
    for r in range(R):
        a = p + r * sR
        b = q + r * I
        for i in range(I):
            v = _ci(x[a + i * sI])
            if r == 0 or _t(v, best[i]):
                best[i] = v
                bi[i] = r
            vals[b + i] = best[i]
            inds[b + i] = bi[i]


@njit({opts})
def s(x, O, R, I, sO, sR, sI, vals, inds):
    best = np.empty(I, _ci)
    bi = np.empty(I, np.int64)
    for o in range(O):
        block(x, o * sO, R, I, sR, sI, vals, inds, o * R * I, best, bi)


@njit({opts}, parallel=True)
def p(x, O, R, I, sO, sR, sI, vals, inds):
    for o in prange(O):
        best = np.empty(I, _ci)
        bi = np.empty(I, np.int64)
        block(x, o * sO, R, I, sR, sI, vals, inds, o * R * I, best, bi)
"""


def kernels(op: registry.OpDef, compute: str, total: str, out: str):
    """The generated scan module (``s``/``p``) for an OpDef and dtype triple."""
    key = (op.name, compute, total, out)
    mod = _mods.get(key)
    if mod is None:
        head = (f"# {op.name}: scan, compute {compute}, accumulate {total}, out {out}\n"
                f"# source fingerprint {_fingerprint(op)}\n")
        if op.take is not None:
            body = _ARGSCAN.format(name=op.name, ci=_NP_CTOR[compute], opts=_OPTS)
        else:
            body = _SCAN.format(name=op.name, ci=_NP_CTOR[compute], ct=_NP_CTOR[total],
                                co=_NP_CTOR[out], idt=literal(op.identity, total), opts=_OPTS)
        mod = _mods[key] = load(f"jt_scan_{op.name}", head + _HEADER + body)
    return mod


# -- kernel entry: ``(plan, x) -> Tensor`` (cummax/cummin: (values, indices)) ---------------

def scan_cpu(op: registry.OpDef):
    """The kernel entry of a scan along the plan's dim into a fresh C-contiguous result in
    the plan's dtype (float32 sums and products accumulate in float64; float16 and bfloat16 run
    in float32). The compiled module is looked up once per plan (plans are memoised)."""
    take = op.take is not None
    prepared: dict = {}  # plan -> (compiled module, compute dtype, result dtype)

    def prepare(plan):
        if len(prepared) > 1024:
            prepared.clear()
        out_dtype = plan.out[0].dtype if take else plan.out.dtype
        compute = _rk._float32 if out_dtype in _dt.HALF else out_dtype
        mod = kernels(op, compute.name, _rk.accumulate_dtype(op, compute).name, compute.name)
        return mod, compute, out_dtype

    def run(plan, x):
        try:
            mod, compute, out_dtype = prepared[plan]
        except KeyError:
            mod, compute, out_dtype = prepared[plan] = prepare(plan)
        a = x._a
        if x.dtype in _dt.HALF:
            a = _rk.as_float32(a)
        out = _rk._allocator.empty(a.shape, compute.np)
        flat = out if out.ndim == 1 else out.reshape(-1)
        idx = _rk._allocator.empty(a.shape, _rk._I64) if take else None
        if flat.size:
            a, (O, R, I, sO, sR, sI) = _rk.along(a, plan.kw["dim"] if a.ndim else 0, compute)
            fn = mod.p if _rk.use_parallel(a.size) and O > 1 else mod.s
            if take:
                fn(span(a), O, R, I, sO, sR, sI, flat, idx.reshape(-1))
            else:
                fn(span(a), O, R, I, sO, sR, sI, flat)
        res = _half.result(out, out_dtype) if out_dtype is not compute else \
            _rk.Tensor._make(out, flat, out_dtype)
        if take:
            return res, _rk.Tensor._make(idx, None, _rk._int64)
        return res

    return run
