"""Loop templates for reductions: an OpDef's map/combine/identity/post in, Numba loops out.

Every reduction runs on a 3-D view of its input: ``(O, R, I)`` = (kept outer, reduced,
kept inner) sizes with element strides ``sO, sR, sI`` into a 1-D span of storage, writing a
contiguous output addressed by strides ``tO, tI``. ``plan_reduce`` finds that view by sorting
the dims by stride and merging neighbours (no copy); only when the reduced dims cannot be
merged into one, or the kept dims into two, the caller copies the input to contiguous first.

Per (op, compute, accumulate, out dtype) one module is generated holding
- ``span``: the reduction of a contiguous row with ``fastmath={'reassoc'}`` so LLVM
  vectorises it with several vector accumulators (what torch's cascade sum does by hand);
- ``total``: rows in blocks of ``_B`` elements, block results combined in the accumulate
  dtype (float64 for float32 sums: torch-level accuracy at any length);
- ``s`` / ``p``: the serial and ``prange`` drivers with three paths: reduced dim contiguous
  (rows), inner dim contiguous (columns, vectorised across the inner dim), anything else.
``arg_kernels`` does the same for value-and-index reductions (max/min with dim, argmax), and
``softmax_kernels`` holds the fused max / exp-sum / write row kernels (softmax, log_softmax,
logsumexp) built on ``fastmath.exp``/``log``, and the one-pass backward rows of softmax and
log_softmax over contiguous last dims.

The kernel entries at the end (``reduction_cpu``, ``max_dim_cpu``, ``moments_cpu``,
``softmax_cpu``, ...) are what the OpDefs of ``defs/reduction.py`` and ``defs/softmax.py`` run
on CPU: ``(plan, *tensors) -> Tensor(s)``, after their meta rules checked the arguments.
"""

from __future__ import annotations

import math

import numpy as np

from ... import _allocator, dispatch
from ... import dtypes as _dt
from ..._threads import use_parallel
from ...shape import broadcast_shapes, contiguous_strides, elem_strides, span
from ...tensor import Tensor
from .. import registry
from ..codegen import NP_CTOR as _NP_CTOR
from ..jit import njit
from ..source import fingerprint, load

BLOCK = 4096

_parts: dict[tuple, object] = {}
_DEFAULTS = {
    "map": lambda x: x,
    "post": lambda acc, n: acc,
}


def part_of(name: str, part: str):
    """The OpDef's ``map``/``combine``/``post``/``take`` as an always-inlined njit function."""
    key = (name, part)
    fn = _parts.get(key)
    if fn is None:

        op = registry.REGISTRY[name]
        py = op.combine if part == "combine" else getattr(op, part) or _DEFAULTS.get(part)
        fn = _parts[key] = njit(inline="always", cache=False)(py)
    return fn


def _fingerprint(op: registry.OpDef) -> str:
    from .. import fastmath_fingerprint

    fns = [op.combine] + [getattr(op, k) for k in ("map", "post", "take") if getattr(op, k) is not None]
    return fingerprint(*fns, repr(op.identity), fastmath_fingerprint())[:12]


def literal(value, dtype: str) -> str:
    """Source text of an identity value (``"lowest"``/``"highest"`` resolved for ``dtype``)."""
    isfloat = dtype.startswith(("float", "complex"))
    if value in ("lowest", "highest"):
        if dtype == "bool":
            return "False" if value == "lowest" else "True"
        if isfloat:
            return "-np.inf" if value == "lowest" else "np.inf"
        info = np.iinfo(np.dtype(dtype))
        return str(info.min if value == "lowest" else info.max)
    if isinstance(value, float) and math.isinf(value):
        return "-np.inf" if value < 0 else "np.inf"
    return repr(value)


# -- layout --------------------------------------------------------------------------------

_plans: dict[tuple, object] = {}


def plan_reduce(shape: tuple, strides: tuple, dims: tuple):
    """``(O, I, R, sO, sI, sR, tO, tI)`` reducing ``dims`` of a strided array into a
    contiguous output of the kept dims, or None when no 3-D view exists (copy first)."""
    key = (shape, strides, dims)
    plan = _plans.get(key, _NO_PLAN)
    if plan is _NO_PLAN:
        if len(_plans) > 4096:
            _plans.clear()
        plan = _plans[key] = _plan_reduce(shape, strides, dims)
    return plan


_NO_PLAN = object()  # (a memoised None: no 3-D view)


def _plan_reduce(shape, strides, dims):
    nd = len(shape)
    out_st = [0] * nd
    acc = 1
    for d in range(nd - 1, -1, -1):
        if d not in dims:
            out_st[d] = acc
            acc *= shape[d]
    items = [(strides[d], out_st[d], shape[d], d in dims) for d in range(nd) if shape[d] != 1]
    items.sort(key=lambda it: (it[0], it[1]), reverse=True)
    groups: list[list] = []
    for s, t, n, red in items:
        if groups:
            g = groups[-1]
            if g[3] == red and g[0] == s * n and (red or g[1] == t * n):
                g[0], g[1], g[2] = s, t, g[2] * n
                continue
        groups.append([s, t, n, red])
    reds = [g for g in groups if g[3]]
    kept = [g for g in groups if not g[3]]
    if len(reds) > 1 or len(kept) > 2:
        return None
    R, sR = (reds[0][2], reds[0][0]) if reds else (1, 0)
    kept.sort(key=lambda g: g[0])
    if len(kept) == 2:
        (sI, tI, I, _), (sO, tO, O, _) = kept
    elif len(kept) == 1 and sR != 1 and kept[0][0] == 1:
        sI, tI, I, _ = kept[0]
        sO, tO, O = 0, 0, 1
    elif len(kept) == 1:
        sO, tO, O, _ = kept[0]
        sI, tI, I = 0, 0, 1
    else:
        O = I = 1
        sO = tO = sI = tI = 0
    return O, I, R, sO, sI, sR, tO, tI


def plan_dim(shape: tuple, strides: tuple, dim: int):
    """``(O, R, I, sO, sR, sI)`` for ops along one dim whose output is contiguous ``(O, R, I)``
    in logical order (scans, softmax, sort), or None when the outer or inner dims of a
    non-contiguous input do not merge (copy first)."""
    key = (shape, strides, dim, "dim")
    plan = _plans.get(key)
    if plan is None:
        if len(_plans) > 4096:
            _plans.clear()
        plan = _plans[key] = _plan_dim(shape, strides, dim)
    return plan


def _merge(shape, strides):
    """(size, stride) of dims that form one strided run in logical order, else None."""
    n, s = 1, 0
    for k, st in zip(reversed(shape), reversed(strides)):
        if k == 1:
            continue
        if n == 1:
            n, s = k, st
        elif st == s * n:
            n *= k
        else:
            return None
    return n, s


def _plan_dim(shape, strides, dim):
    outer = _merge(shape[:dim], strides[:dim])
    inner = _merge(shape[dim + 1:], strides[dim + 1:])
    if outer is None or inner is None:
        return None
    R = shape[dim] if shape else 1
    sR = strides[dim] if shape else 0
    return outer[0], R, inner[0], outer[1], sR, inner[1]


# -- generated reduction kernels -------------------------------------------------------------

_mods: dict[tuple, object] = {}


def kernels(op: registry.OpDef, compute: str, total: str, out: str):
    """The generated module (``s``/``p`` drivers) of a reduction for a dtype triple."""
    key = (op.name, compute, total, out)
    mod = _mods.get(key)
    if mod is None:
        mod = _mods[key] = load(f"jt_reduction_{op.name}", _source(op, compute, total, out))
    return mod


_HEADER = """\
import numpy as np
from numba import prange
from jtorch.kernels.jit import njit
from jtorch.kernels.cpu.reduce import part_of
"""

_OPTS = "cache=True, nogil=True, error_model='numpy'"
# the helpers the entries call: no CPython wrapper (they are never called from Python, and a
# wrapper cost ~30 ms of each one's cold compile)
_INNER = _OPTS + ", no_cpython_wrapper=True"

_REDUCE = """
_m = part_of({name!r}, 'map')
_c = part_of({name!r}, 'combine')
_p = part_of({name!r}, 'post')
_ci = {ci}
_ct = {ct}
_co = {co}
_ID = _ci({idc})
_IDT = _ct({idt})
_B = {block}


@njit({inner}, fastmath={{'reassoc'}})
def span(row):
    acc = _ID
    for j in range(row.size):
        acc = _ci(_c(acc, _ci(_m(row[j]))))
    return acc


@njit({inner})
def total(x, p, n):
    if n <= _B:
        return _ct(span(x[p:p + n]))
    t = _IDT
    for b in range(p, p + n, _B):
        t = _ct(_c(t, _ct(span(x[b:min(b + _B, p + n)]))))
    return t


@njit({inner})
def column(x, p, m, R, sR, acc):
    for i in range(m):
        acc[i] = _IDT
    for r in range(R):
        q = p + r * sR
        row = x[q:q + m]
        for i in range(m):
            acc[i] = _ct(_c(acc[i], _ct(_ci(_m(row[i])))))


@njit({inner})
def strided(x, p, R, sR):
    t = _IDT
    for r in range(R):
        t = _ct(_c(t, _ct(_ci(_m(x[p + r * sR])))))
    return t


# One compiled entry per layout (rows, columns, strided; the parallel build also a single
# total), picked by ``entries`` (the plain Python ``s`` / ``p`` call through it; the eager
# entries keep a layout's pair with it): a cold process compiles the layouts it
# runs, not every branch (about half a second per reduction op and dtype).

@njit({opts})
def rows_s(x, O, I, R, sO, sI, sR, out, tO, tI):
    for o in range(O):
        for i in range(I):
            out[o * tO + i * tI] = _co(_p(total(x, o * sO + i * sI, R), R))


@njit({opts})
def cols_s(x, O, I, R, sO, sI, sR, out, tO, tI):
    acc = np.empty(I, _ct)
    for o in range(O):
        column(x, o * sO, I, R, sR, acc)
        for i in range(I):
            out[o * tO + i * tI] = _co(_p(acc[i], R))


@njit({opts})
def strided_s(x, O, I, R, sO, sI, sR, out, tO, tI):
    for o in range(O):
        for i in range(I):
            out[o * tO + i * tI] = _co(_p(strided(x, o * sO + i * sI, R, sR), R))


def s(x, O, I, R, sO, sI, sR, out, tO, tI):
    entries(O, I, R, sI, sR)[0](x, O, I, R, sO, sI, sR, out, tO, tI)


@njit({opts}, parallel=True)
def one_p(x, O, I, R, sO, sI, sR, out, tO, tI):
    nch = max(1, min(64, (R + _B - 1) // _B))
    ch = max(_B, ((R + nch - 1) // nch + _B - 1) // _B * _B)
    nch = max(1, (R + ch - 1) // ch)
    parts = np.empty(nch, _ct)
    for c in prange(nch):
        b = c * ch
        parts[c] = total(x, b, max(0, min(ch, R - b)))
    t = _IDT
    for c in range(nch):
        t = _ct(_c(t, parts[c]))
    out[0] = _co(_p(t, R))


@njit({opts}, parallel=True)
def rows_p(x, O, I, R, sO, sI, sR, out, tO, tI):
    n = O * I
    for k in prange(n):
        o = k // I
        i = k - o * I
        out[o * tO + i * tI] = _co(_p(total(x, o * sO + i * sI, R), R))


@njit({opts}, parallel=True)
def cols_p(x, O, I, R, sO, sI, sR, out, tO, tI):
    nch = (I + 1023) // 1024
    for k in prange(O * nch):
        o = k // nch
        i0 = (k - o * nch) * 1024
        m = min(1024, I - i0)
        acc = np.empty(m, _ct)
        column(x, o * sO + i0, m, R, sR, acc)
        for i in range(m):
            out[o * tO + (i0 + i) * tI] = _co(_p(acc[i], R))


@njit({opts}, parallel=True)
def strided_p(x, O, I, R, sO, sI, sR, out, tO, tI):
    n = O * I
    for k in prange(n):
        o = k // I
        i = k - o * I
        out[o * tO + i * tI] = _co(_p(strided(x, o * sO + i * sI, R, sR), R))


def p(x, O, I, R, sO, sI, sR, out, tO, tI):
    entries(O, I, R, sI, sR)[1](x, O, I, R, sO, sI, sR, out, tO, tI)


def entries(O, I, R, sI, sR):
    # (serial, parallel) entries of a layout (callers keep them with a cached layout)
    if sI == 1 and I > 1 and (R <= 1 or sR != 1):
        # contiguous columns: vector loops along them (also for a reduced size of 0 or 1,
        # where a row per output element cost a call each: a (64, 1, 128) sum over dim 1 took
        # 56 us, as a copy 4)
        # the parallel build splits the columns in blocks of 1024: one block (a linear layer's
        # bias gradient) would wake the pool for one task
        return cols_s, (cols_p if O * ((I + 1023) // 1024) > 1 else cols_s)
    if sR == 1 or R <= 1:
        return rows_s, (one_p if O * I == 1 else rows_p)
    return strided_s, strided_p
"""


def _source(op: registry.OpDef, compute: str, total: str, out: str) -> str:
    head = (f"# {op.name}: reduction, compute {compute}, accumulate {total}, out {out}\n"
            f"# source fingerprint {_fingerprint(op)}\n")
    body = _REDUCE.format(name=op.name, ci=_NP_CTOR[compute], ct=_NP_CTOR[total],
                          co=_NP_CTOR[out], idc=literal(op.identity, compute),
                          idt=literal(op.identity, total), block=BLOCK, opts=_OPTS,
                          inner=_INNER)
    return head + _HEADER + body


# -- value-and-index reductions (max/min with dim, argmax, argmin) ---------------------------

_ARG = """
_c = part_of({name!r}, 'combine')
_ci = {ci}
_ID = _ci({idc})


@njit({inner}, fastmath={{'reassoc'}})
def span(row):
    acc = _ID
    for j in range(row.size):
        acc = _ci(_c(acc, _ci(row[j])))
    return acc


@njit({inner})
def first(row, m):
    # index of the first element equal to m (nan matches nan), as a min-reduction over
    # indices: no early exit, but it vectorises (an early-exit search does not).
    isnan = m != m
    n = row.size
    best = n
    for j in range(n):
        v = row[j]
        best = min(best, j if (v == m) | (isnan & (v != v)) else n)
    return best if best < n else 0


@njit({inner})
def column(x, p, m, R, sR, best, bi):
    for i in range(m):
        best[i] = _ci(x[p + i])
        bi[i] = 0
    for r in range(1, R):
        q = p + r * sR
        row = x[q:q + m]
        for i in range(m):
            b = best[i]
            v = _ci(_c(b, _ci(row[i])))
            keep = v == b or (v != v and b != b)
            best[i] = v
            bi[i] = bi[i] if keep else r


@njit({inner})
def strided(x, p, R, sR):
    b = _ci(x[p])
    bi = 0
    for r in range(1, R):
        v = _ci(_c(b, _ci(x[p + r * sR])))
        if not (v == b or (v != v and b != b)):
            b = v
            bi = r
    return b, bi


@njit({inner})
def one(x, sO, sI, R, sR, vals, idx, tO, tI, o, i):
    p = o * sO + i * sI
    if sR == 1:
        row = x[p:p + R]
        j = first(row, span(row))
        vals[o * tO + i * tI] = row[j]
        idx[o * tO + i * tI] = j
    else:
        v, j = strided(x, p, R, sR)
        vals[o * tO + i * tI] = v
        idx[o * tO + i * tI] = j


@njit({opts})
def s(x, O, I, R, sO, sI, sR, vals, idx, tO, tI):
    if sR != 1 and sI == 1 and I > 1:
        best = np.empty(I, vals.dtype)
        bi = np.empty(I, np.int64)
        for o in range(O):
            column(x, o * sO, I, R, sR, best, bi)
            for i in range(I):
                vals[o * tO + i * tI] = best[i]
                idx[o * tO + i * tI] = bi[i]
    else:
        for o in range(O):
            for i in range(I):
                one(x, sO, sI, R, sR, vals, idx, tO, tI, o, i)


@njit({opts}, parallel=True)
def p(x, O, I, R, sO, sI, sR, vals, idx, tO, tI):
    if sR != 1 and sI == 1 and I > 1:
        nch = (I + 1023) // 1024
        for k in prange(O * nch):
            o = k // nch
            i0 = (k - o * nch) * 1024
            m = min(1024, I - i0)
            best = np.empty(m, vals.dtype)
            bi = np.empty(m, np.int64)
            column(x, o * sO + i0, m, R, sR, best, bi)
            for i in range(m):
                vals[o * tO + (i0 + i) * tI] = best[i]
                idx[o * tO + (i0 + i) * tI] = bi[i]
    else:
        for k in prange(O * I):
            o = k // I
            i = k - o * I
            one(x, sO, sI, R, sR, vals, idx, tO, tI, o, i)
"""


def arg_kernels(op: registry.OpDef, compute: str):
    """Generated value-and-index module for a selecting reduction (amax/amin) and dtype."""
    key = ("arg", op.name, compute)
    mod = _mods.get(key)
    if mod is None:
        src = (f"# {op.name}: value-and-index reduction, compute {compute}\n"
               f"# source fingerprint {_fingerprint(op)}\n" + _HEADER
               + _ARG.format(name=op.name, ci=_NP_CTOR[compute],
                             idc=literal(op.identity, compute), opts=_OPTS,
                             inner=_INNER))
        mod = _mods[key] = load(f"jt_argreduction_{op.name}", src)
    return mod


# -- softmax, log_softmax (and their backward rows), logsumexp: fused row kernels ------------

_SOFTMAX = """
from jtorch.kernels import fastmath as fm
from jtorch.kernels.defs.reduction import maximum
from jtorch.kernels.defs.combine import minimum

_T = {t}
_INF = _T(np.inf)


@njit({inner}, fastmath={{'reassoc'}})
def vsum(row):
    acc = _T(0)
    for j in range(row.size):
        acc += row[j]
    return acc


@njit({inner}, fastmath={{'reassoc'}})
def vmax(row):
    m = -_INF
    for j in range(row.size):
        m = maximum(m, row[j])
    return m


@njit({inner}, fastmath={{'reassoc'}})
def vminmax(row):
    m = -_INF
    mn = _INF
    for j in range(row.size):
        m = maximum(m, row[j])
        mn = minimum(mn, row[j])
    return m, mn


@njit({inner}, fastmath={{'reassoc'}})
def expsum(src, m, dst):
    # dst = exp(src - m) and its sum. ``reassoc`` lets the sum vectorise; fastmath.exp is
    # compiled separately (force-inlined by LLVM), so its own arithmetic keeps strict order.
    acc = _T(0)
    for j in range(src.size):
        e = fm.exp(src[j] - m)
        dst[j] = e
        acc += e
    return acc


@njit({inner}, fastmath={{'reassoc'}})
def expsum_normal(src, m, dst):
    # expsum where every exp(src[j] - m) is normal: exp_normal, the same bits
    acc = _T(0)
    for j in range(src.size):
        e = fm.exp_normal(src[j] - m)
        dst[j] = e
        acc += e
    return acc


@njit({inner}, inline='always')
def row(src, dst, log):
    # max pass, exp-and-sum pass (exp written to dst), then the write pass. (Inlined in the
    # entries: a function of its own cost 0.1-0.15 s more of a cold log_softmax.)
    m, mn = vminmax(src)
    # every src[j] - m lies in [mn - m, 0] (nan where the row holds a nan or m is infinite):
    # where exp of the lowest is normal, so is every one
    tot = expsum_normal(src, m, dst) if fm.exp_ok(mn - m) else expsum(src, m, dst)
    if log:  # (x - max) - log(sum), as torch: x - (max + log(sum)) rounds away log 2 at 3e38
        c = np.log(tot)  # (one scalar a row: libm's; fastmath.log's vector build, which the
        # loops over rows below use, would add 0.5 s to a cold process's first log_softmax)
        for j in range(src.size):
            dst[j] = (src[j] - m) - c
    else:
        inv = _T(1) / tot
        for j in range(dst.size):
            dst[j] = dst[j] * inv


@njit({inner})
def cols(x, p, R, I, sR, sI, dst, ld, mx, sm, log):
    # the I columns of an (R, I) block read at strides (sR, sI) from p, written to dst with
    # row stride ld (I for a whole block; the full width for one of the parallel build's)
    for i in range(I):
        mx[i] = -_INF
        sm[i] = 0
    for r in range(R):
        q = p + r * sR
        for i in range(I):
            mx[i] = maximum(mx[i], x[q + i * sI])
    for r in range(R):
        q = p + r * sR
        for i in range(I):
            e = fm.exp(x[q + i * sI] - mx[i])
            dst[r * ld + i] = e
            sm[i] += e
    if log:
        for i in range(I):
            sm[i] = fm.log(sm[i])
        for r in range(R):
            q = p + r * sR
            for i in range(I):
                dst[r * ld + i] = (x[q + i * sI] - mx[i]) - sm[i]
    else:
        for i in range(I):
            sm[i] = _T(1) / sm[i]
        for r in range(R):
            for i in range(I):
                dst[r * ld + i] = dst[r * ld + i] * sm[i]


@njit({inner})
def rows_short(x, O, R, sO, out, log):
    # rows of fewer than 8 elements (attention over a short sequence, a 3-class loss), in
    # blocks of rows transposed into a scratch (xs[j, o]): each pass then runs down the rows
    # over contiguous memory and vectorises (reading the rows in place meant gathers and
    # scatters at a stride of R), and each row still sees its own operations in its own order
    # (the same bits); the parallel build runs chunks of rows through it, so both give one
    # answer
    B = 256
    nb = min(O, B)
    xs = np.empty(R * nb, _T)
    es = np.empty(R * nb, _T)
    m = np.empty(nb, _T)
    tot = np.empty(nb, _T)
    for lo in range(0, O, B):
        n = min(B, O - lo)
        for j in range(R):  # (down the columns: contiguous stores, vectorised)
            q = j * nb
            for o in range(n):
                xs[q + o] = x[(lo + o) * sO + j]
        for o in range(n):
            m[o] = -_INF
            tot[o] = _T(0)
        for j in range(R):
            q = j * nb
            for o in range(n):
                m[o] = maximum(m[o], xs[q + o])
        for j in range(R):
            q = j * nb
            for o in range(n):
                e = fm.exp(xs[q + o] - m[o])
                es[q + o] = e
                tot[o] += e
        if log:
            for o in range(n):
                tot[o] = fm.log(tot[o])
            for j in range(R):
                q = j * nb
                for o in range(n):
                    es[q + o] = (xs[q + o] - m[o]) - tot[o]
        else:
            for o in range(n):
                tot[o] = _T(1) / tot[o]
            for j in range(R):
                q = j * nb
                for o in range(n):
                    es[q + o] = es[q + o] * tot[o]
        for j in range(R):
            q = j * nb
            for o in range(n):
                out[(lo + o) * R + j] = es[q + o]


# One entry per layout (short rows, rows, columns) and build, picked in Python by
# ``softmax_cpu``'s kernel: a program compiles only the layouts it runs (a cold process paid for all
# three, about a second more, when one entry branched over them).

@njit({opts})
def rows_s(x, O, R, I, sO, sR, sI, out, log):
    for o in range(O):
        row(x[o * sO:o * sO + R], out[o * R:(o + 1) * R], log)


@njit({opts})
def cols_s(x, O, R, I, sO, sR, sI, out, log):
    mx = np.empty(I, _T)
    sm = np.empty(I, _T)
    for o in range(O):
        cols(x, o * sO, R, I, sR, sI, out[o * R * I:(o + 1) * R * I], I, mx, sm, log)


@njit({opts})
def short_s(x, O, R, I, sO, sR, sI, out, log):
    rows_short(x, O, R, sO, out, log)


@njit({opts}, parallel=True)
def short_p(x, O, R, I, sO, sR, sI, out, log):
    nch = (O + 1023) // 1024  # chunks of short rows, as short_s runs them
    for k in prange(nch):
        lo = k * 1024
        hi = min(O, lo + 1024)
        rows_short(x[lo * sO:], hi - lo, R, sO, out[lo * R:hi * R], log)


@njit({opts}, parallel=True)
def rows_p(x, O, R, I, sO, sR, sI, out, log):
    for o in prange(O):
        row(x[o * sO:o * sO + R], out[o * R:(o + 1) * R], log)


@njit({opts}, parallel=True)
def cols_p(x, O, R, I, sO, sR, sI, out, log):
    nch = (I + 255) // 256
    for k in prange(O * nch):
        o = k // nch
        i0 = (k - o * nch) * 256
        m = min(256, I - i0)
        mx = np.empty(m, _T)
        sm = np.empty(m, _T)
        # columns i0..i0+m of (o, :, :): an (R, m) block with output row stride I
        cols(x, o * sO + i0 * sI, R, m, sR, sI, out[o * R * I + i0:], I, mx, sm, log)


@njit({inner}, fastmath={{'reassoc'}})
def bwd_row(g, y, dst, log):
    # log_softmax: g - exp(y) * sum(g); softmax: y * (g - sum(g * y))
    acc = _T(0)
    if log:
        for j in range(g.size):
            acc += g[j]
        for j in range(g.size):
            dst[j] = g[j] - fm.exp(y[j]) * acc
    else:
        for j in range(g.size):
            acc += g[j] * y[j]
        for j in range(g.size):
            dst[j] = y[j] * (g[j] - acc)


@njit({inner})
def bwd_rows_short(g, y, O, R, out, log):
    # bwd_row over rows of fewer than 8 elements, column by column (the sums in each row's
    # own order); log_softmax's, whose exp vectorises only over contiguous memory, in blocks
    # transposed as rows_short's (2x), softmax's in place (its transposes would cost more)
    if not log:
        acc = np.empty(O, _T)
        for o in range(O):
            acc[o] = _T(0)
        for j in range(R):
            for o in range(O):
                acc[o] += g[o * R + j] * y[o * R + j]
        for j in range(R):
            for o in range(O):
                out[o * R + j] = y[o * R + j] * (g[o * R + j] - acc[o])
        return
    B = 256
    nb = min(O, B)
    gs = np.empty(R * nb, _T)
    ys = np.empty(R * nb, _T)
    acc = np.empty(nb, _T)
    for lo in range(0, O, B):
        n = min(B, O - lo)
        for j in range(R):
            q = j * nb
            for o in range(n):
                gs[q + o] = g[(lo + o) * R + j]
                ys[q + o] = y[(lo + o) * R + j]
        for o in range(n):
            acc[o] = _T(0)
        for j in range(R):
            q = j * nb
            for o in range(n):
                acc[o] += gs[q + o]
        for j in range(R):
            q = j * nb
            for o in range(n):
                gs[q + o] = gs[q + o] - fm.exp(ys[q + o]) * acc[o]
        for j in range(R):
            q = j * nb
            for o in range(n):
                out[(lo + o) * R + j] = gs[q + o]


@njit({opts})
def bwd_rows_s(g, y, O, R, out, log):
    for o in range(O):
        bwd_row(g[o * R:(o + 1) * R], y[o * R:(o + 1) * R], out[o * R:(o + 1) * R], log)


@njit({opts})
def bwd_short_s(g, y, O, R, out, log):
    bwd_rows_short(g, y, O, R, out, log)


@njit({opts}, parallel=True)
def bwd_short_p(g, y, O, R, out, log):
    nch = (O + 1023) // 1024  # chunks of short rows, as bwd_short_s runs them
    for k in prange(nch):
        lo = k * 1024
        hi = min(O, lo + 1024)
        bwd_rows_short(g[lo * R:hi * R], y[lo * R:hi * R], hi - lo, R, out[lo * R:hi * R], log)


@njit({opts}, parallel=True)
def bwd_rows_p(g, y, O, R, out, log):
    for o in prange(O):
        bwd_row(g[o * R:(o + 1) * R], y[o * R:(o + 1) * R], out[o * R:(o + 1) * R], log)


@njit({inner})
def lse_one(x, p, R, sR, tmp):
    if sR == 1:
        src = x[p:p + R]
        m = vmax(src)
        m = m if abs(m) < _INF else _T(0)
        return np.log(expsum(src, m, tmp[:R])) + m
    m = -_INF
    for r in range(R):
        m = maximum(m, x[p + r * sR])
    m = m if abs(m) < _INF else _T(0)
    acc = _T(0)
    for r in range(R):
        acc += fm.exp(x[p + r * sR] - m)
    return np.log(acc) + m


@njit({opts})
def lse_s(x, O, I, R, sO, sI, sR, out, tO, tI):
    tmp = np.empty(R, _T)
    for o in range(O):
        for i in range(I):
            out[o * tO + i * tI] = lse_one(x, o * sO + i * sI, R, sR, tmp)


@njit({opts}, parallel=True)
def lse_p(x, O, I, R, sO, sI, sR, out, tO, tI):
    for k in prange(O * I):
        o = k // I
        i = k - o * I
        tmp = np.empty(R, _T)
        out[o * tO + i * tI] = lse_one(x, o * sO + i * sI, R, sR, tmp)
"""


def softmax_kernels(dtype: str):
    """Fused softmax / log_softmax / logsumexp kernels for float32 or float64."""
    key = ("softmax", dtype)
    mod = _mods.get(key)
    if mod is None:
        from .. import fastmath_fingerprint

        src = (f"# softmax, log_softmax, logsumexp: fused row kernels, {dtype}\n"
               f"# fastmath fingerprint {fastmath_fingerprint()[:12]}\n" + _HEADER
               + _SOFTMAX.format(t=_NP_CTOR[dtype], opts=_OPTS, inner=_INNER))
        mod = _mods[key] = load("jt_softmax", src)
    return mod


# -- kernel entries: ``(plan, *tensors) -> Tensor(s)``, called by ``dispatch.call`` ----------
# The meta rules (``defs/reduction.py``, ``defs/softmax.py``) checked the arguments and
# described the results; these run the loops above into fresh C-contiguous arrays. float16
# is computed in float32 (Numba has no CPU float16) and rounded once at the end.

_float16 = _dt.float16
_float32 = _dt.float32
_float64 = _dt.float64
_bool = _dt.bool
_int64 = _dt.int64
_I64 = np.dtype(np.int64)


def result(a: np.ndarray, dtype: _dt.dtype) -> Tensor:
    """A kernel's array as a tensor of ``dtype`` (float16 results, computed in float32, are
    rounded here; values beyond float16's range round to inf, as in torch)."""
    if dtype is _float16 and a.dtype != np.float16:
        with np.errstate(over="ignore"):
            a = a.astype(np.float16)
    return Tensor._make(a, None, dtype)


def as_float32(a: np.ndarray) -> np.ndarray:
    """A float16 array widened exactly to float32 (same layout)."""
    return a.astype(np.float32)


def contiguous(a: np.ndarray, dtype: _dt.dtype) -> np.ndarray:
    """``a`` as a C-contiguous array, copied with the registry's copy kernel if needed."""
    if a.flags.c_contiguous:
        return a
    out = _allocator.empty(a.shape, a.dtype)
    dispatch.run_pointwise(registry.REGISTRY["copy"], (Tensor._make(a, a, dtype),), out, dtype)
    return out


def cast(t: Tensor, d: _dt.dtype) -> Tensor:
    """``t`` converted to dtype ``d`` with the copy kernel (torch's casting rules), laid out
    like ``t``; no autograd record (the op's own node stands for the call)."""
    if t.dtype is d:
        return t
    src = t
    if t.dtype.is_complex and not d.is_complex:
        src = Tensor._make(np.ascontiguousarray(t._a.real))
    a, st = dispatch.new_output((t,), t._a.shape, d.np)
    if d is _bool or src.dtype is _bool:
        compute = d if d is not _float16 else _float32
    else:
        compute = _dt.promote_types(src.dtype, d) if src.dtype.category == d.category else d
    dispatch.run_pointwise(registry.REGISTRY["copy"], (src,), a, compute)
    return Tensor._make(a, st, d)


def pointwise(name: str, args: tuple) -> Tensor:
    """A pointwise OpDef run into a fresh result inside a kernel (no mode hook, no autograd
    record): the layout ``dispatch.pointwise`` gives."""
    op = registry.REGISTRY[name]
    _, compute, res = dispatch.resolve_dtypes(op, args)
    shape = tuple(broadcast_shapes(*[x._a.shape for x in args if isinstance(x, Tensor)]))
    a, st = dispatch.new_output(args, shape, res.np)
    dispatch.run_pointwise(op, args, a, compute, res)
    return Tensor._make(a, st, res)


def accumulate_dtype(op: registry.OpDef, compute: _dt.dtype) -> _dt.dtype:
    """The dtype block results are combined in: float64 for float32 (complex128 for complex64)
    when the OpDef is ``wide`` (torch's cascade-sum accuracy)."""
    if op.wide:
        if compute is _float32:
            return _float64
        if compute is _dt.complex64:
            return _dt.complex128
    return compute


def _permuted_copy(a: np.ndarray, dims: tuple, dtype: _dt.dtype) -> np.ndarray:
    """Kept dims (in order) then reduced dims, contiguous: the fallback 3-D view."""
    order = [d for d in range(a.ndim) if d not in dims] + list(dims)
    return contiguous(a.transpose(order), dtype)


def reduce_array(op: registry.OpDef, a: np.ndarray, dims: tuple, compute: _dt.dtype,
                 out_dtype: _dt.dtype, a_dtype: _dt.dtype) -> np.ndarray:
    """Run reduction ``op`` over ``dims`` of array ``a``; returns the contiguous result array
    (kept dims, no keepdim). float16 is computed in float32 (Numba has no CPU float16)."""
    if a.dtype == np.float16:
        a = as_float32(a)
        a_dtype = _float32
    if compute is _float16:
        compute = _float32
    res_dtype = _float32 if out_dtype is _float16 else out_dtype
    mod = kernels(op, compute.name, accumulate_dtype(op, compute).name, res_dtype.name)
    if len(dims) == a.ndim and a.flags.c_contiguous:
        # all of a contiguous array (loss.sum(), x.mean()): one row, no plan to work out
        out = np.empty((), res_dtype.np)
        n = a.size
        (mod.one_p if use_parallel(n) else mod.rows_s)(a.reshape(-1), 1, 1, n, 0, 0, 1,
                                                       out.reshape(-1), 0, 0)
        return out
    shape = a.shape
    kshape = tuple(n for d, n in enumerate(shape) if d not in dims)
    out = _allocator.empty(kshape, res_dtype.np)
    if out.size:
        plan = plan_reduce(shape, elem_strides(a), dims)
        if plan is None:
            staged = _in_stages(op, a, dims, compute, out_dtype)
            if staged is not None:
                return staged
            a = _permuted_copy(a, dims, a_dtype)
            R = math.prod(shape[d] for d in dims)
            plan = (out.size, 1, R, R, 0, 1, 1, 0)
        O, I, R, sO, sI, sR, tO, tI = plan
        (mod.p if use_parallel(a.size) else mod.s)(span(a), O, I, R, sO, sI, sR,
                                               out.reshape(-1), tO, tI)
    return out


# reductions whose result over dims A and B is the reduction over A of the one over B (mean:
# groups of one size); nansum is not (inf - inf is nan in a part and zero after it)
_STAGED = frozenset(["sum", "mean", "prod", "amax", "amin", "all", "any"])


def _stage_dims(name: str, shape: tuple, dims: tuple):
    """(dims of the first stage, the part's shape, the rest of ``dims`` in the part) of a
    contiguous array's reduction over dims on both sides of a kept one (a convolution's bias
    gradient: (N, C, H, W) over (0, 2, 3)) done as two: the dims after the last kept one, then
    the rest of the part result; or, where those rows are short, the dims before the first
    kept one first, a pass that adds whole rows of the rest (per-row sums of 16 values cost
    about 10 ns a row: 64 x 32 x 4x4 over (0, 2, 3), eager, 51 -> 14 us). The reduced dims'
    transposed copy cost 2.5-6x as much (64 x 64 x 32x32 float32: 1564 against 277 us). None
    where it does not apply."""
    if name not in _STAGED:
        return None
    kept = [d for d in range(len(shape)) if d not in dims and shape[d] != 1]
    first = tuple(d for d in dims if kept and d > kept[-1])
    if not first or len(first) == len(dims):
        return None
    outer = tuple(d for d in dims if d < kept[0])
    if outer and math.prod(shape[d] for d in first) < _SHORT_ROW:
        first = outer
    part = tuple(n for d, n in enumerate(shape) if d not in first)
    rest = tuple(d - sum(1 for f in first if f < d) for d in dims if d not in first)
    return first, part, rest


_SHORT_ROW = 256  # reduced elements per row below which the outer dims go first


def _in_stages(op: registry.OpDef, a: np.ndarray, dims: tuple, compute: _dt.dtype,
               out_dtype: _dt.dtype) -> np.ndarray | None:
    """``reduce_array`` in the stages of ``_stage_dims``, or None where they do not apply."""
    if not a.flags.c_contiguous:
        return None
    st = _stage_dims(op.name, a.shape, dims)
    if st is None:
        return None
    part = reduce_array(op, a, st[0], compute, out_dtype, out_dtype)
    return reduce_array(op, part, st[2], compute, out_dtype, out_dtype)


def staged_layouts(name: str, shape: tuple, dims: tuple):
    """The ``plan_reduce`` layouts and result shapes of a contiguous array's reduction in
    stages (``_stage_dims``), each stage's input the last one's contiguous result; None where
    a stage has no 3-D view."""
    stages = []
    while True:
        strides = contiguous_strides(shape)
        lay = plan_reduce(shape, strides, dims)
        if lay is not None:
            stages.append((lay, tuple(n for d, n in enumerate(shape) if d not in dims)))
            return stages
        st = _stage_dims(name, shape, dims)
        lay = None if st is None else plan_reduce(shape, strides, st[0])
        if lay is None:
            return None
        stages.append((lay, st[1]))
        shape, dims = st[1], st[2]


def reduce_tensor(op: registry.OpDef, x: Tensor, dims: tuple, keepdim: bool,
                  compute: _dt.dtype | None = None, out_dtype: _dt.dtype | None = None) -> Tensor:
    """``reduce_array`` on a tensor, as a tensor (``keepdim`` keeps the reduced dims as 1)."""
    d = x.dtype if out_dtype is None else out_dtype
    res = reduce_array(op, x._a, dims, d if compute is None else compute, d, x.dtype)
    if keepdim:
        res = res.reshape(tuple(1 if k in dims else n for k, n in enumerate(x._a.shape)))
    return result(res, d)


def reduction_cpu(op: registry.OpDef, bool_compute: bool = False):
    """The kernel entry of a generated reduction (sum, mean, amax, all, ...): the result dtype
    is the plan's; ``bool_compute`` (all, any) reads the input as bool. The compiled module is
    looked up once per plan (plans are memoised by the meta rule) and the 3-D layout once per
    (plan, input strides); a reduction of a whole contiguous array (``loss.sum()``,
    ``x.mean()``), the commonest call, runs on the flat input into a one-element result.
    float16 and inputs with no 3-D view go through ``reduce_array``."""
    prepared: dict = {}  # plan -> (module, whole-array reduction) or None
    # (plan, input strides) -> ((O, I, R, sO, sI, sR, tO, tI), (serial, parallel) entries)
    # or (None, None)
    layouts: dict = {}

    def prepare(plan, x: Tensor):
        if len(prepared) > 1024:
            prepared.clear()
            layouts.clear()
        d = plan.out.dtype
        compute = _bool if bool_compute else d
        if _float16 in (d, compute, x.dtype):
            return None
        mod = kernels(op, compute.name, accumulate_dtype(op, compute).name, d.name)
        return mod, len(plan.kw["dim"]) == x._a.ndim

    def run(plan, x: Tensor) -> Tensor:
        o = plan.out
        a = x._a
        try:
            prep = prepared[plan]
        except KeyError:
            prep = prepared[plan] = prepare(plan, x)
        d = o.dtype
        try:
            if prep is not None:
                mod, whole = prep
                if whole and a.flags.c_contiguous:
                    res = np.empty(1, d.np)
                    n = a.size
                    (mod.one_p if use_parallel(n) else mod.rows_s)(
                        a if a.ndim == 1 else a.reshape(-1), 1, 1, n, 0, 0, 1, res, 0, 0)
                    return Tensor._make(res.reshape(o.shape), res, d)
                key = (plan, a.strides)
                try:
                    lay, fns = layouts[key]
                except KeyError:
                    lay = plan_reduce(a.shape, elem_strides(a), plan.kw["dim"])
                    fns = None if lay is None else mod.entries(lay[0], lay[1], lay[2], lay[4],
                                                               lay[5])
                    if lay is None and a.flags.c_contiguous and a.size:
                        # no layout but stages: (layout, entries, result shape) per stage
                        st = staged_layouts(op.name, a.shape, plan.kw["dim"])
                        fns = None if st is None else [
                            (s, mod.entries(s[0], s[1], s[2], s[4], s[5]), shape)
                            for s, shape in st]
                    layouts[key] = lay, fns
                if lay is None and fns is not None:
                    src = a
                    for s, entries, shape in fns:
                        res = _allocator.empty(shape, d.np)
                        O, I, R, sO, sI, sR, tO, tI = s
                        entries[1 if use_parallel(src.size) else 0](
                            span(src), O, I, R, sO, sI, sR, res.reshape(-1), tO, tI)
                        src = res
                    return Tensor._make(res.reshape(o.shape), None, d)
                if lay is not None:
                    shape = o.shape
                    res = _allocator.empty(shape, d.np)
                    flat = res if len(shape) == 1 else res.reshape(-1)
                    if flat.size:
                        O, I, R, sO, sI, sR, tO, tI = lay
                        fns[1 if use_parallel(a.size) else 0](span(a), O, I, R, sO, sI, sR,
                                                              flat, tO, tI)
                    return Tensor._make(res, flat, d)
            res = reduce_array(op, a, plan.kw["dim"], _bool if bool_compute else d, d, x.dtype)
        except ZeroDivisionError:  # a complex mean of no elements (Numba raises, torch: nan)
            return Tensor._make(np.full(o.shape, complex(np.nan, np.nan), d.np), None, d)
        if plan.kw["keepdim"]:
            res = res.reshape(o.shape)
        return result(res, d)

    return run


def arg_reduce(sel: registry.OpDef, x: Tensor, d: int | None, res_shape: tuple) -> tuple:
    """(values, indices) arrays of the amax/amin selection ``sel`` along dim ``d`` (None: the
    flattened input), shaped ``res_shape``; values in the compute dtype (float16 as float32)."""
    a = x._a
    dtype = x.dtype
    if d is None:
        a = contiguous(a, dtype).reshape(-1)
        dims = (0,)
    else:
        dims = (d,) if a.ndim else ()
    if dtype is _float16:
        a = as_float32(a)
    compute = _float32 if dtype is _float16 else dtype
    kshape = tuple(n for k, n in enumerate(a.shape) if k not in dims)
    vals = _allocator.empty(kshape, compute.np)
    idx = _allocator.empty(kshape, _I64)
    if vals.size and len(dims) == 1 and a.shape[dims[0]] == 1:
        # one element per result (a size-1 dim): the values themselves at index 0, where the
        # kernel paid a call per element
        np.copyto(vals, a.reshape(kshape))
        idx.fill(0)
    elif vals.size:
        plan = plan_reduce(a.shape, elem_strides(a), dims)
        if plan is None:
            a = _permuted_copy(a, dims, compute)
            R = a.shape[-1]
            plan = (vals.size, 1, R, R, 0, 1, 1, 0)
        mod = arg_kernels(sel, compute.name)
        O, I, R, sO, sI, sR, tO, tI = plan
        (mod.p if use_parallel(a.size) else mod.s)(span(a), O, I, R, sO, sI, sR,
                                               vals.reshape(-1), idx.reshape(-1), tO, tI)
    return vals.reshape(res_shape), idx.reshape(res_shape)


def max_dim_cpu(sel: registry.OpDef):
    """max(x, dim) / min(x, dim): (values, indices of the first extreme)."""

    def run(plan, x: Tensor) -> tuple:
        vals, idx = arg_reduce(sel, x, plan.kw["dim"], plan.out[0].shape)
        return result(vals, x.dtype), Tensor._make(idx, None, _int64)

    return run


def argmax_cpu(sel: registry.OpDef):
    """argmax / argmin: the indices of ``max_dim_cpu``."""

    def run(plan, x: Tensor) -> Tensor:
        _, idx = arg_reduce(sel, x, plan.kw["dim"], plan.out.shape)
        return Tensor._make(idx, None, _int64)

    return run


def aminmax_cpu(lo: registry.OpDef, hi: registry.OpDef):
    """aminmax: the amin and amax reductions over the plan's dims."""

    def run(plan, x: Tensor) -> tuple:
        kw = plan.kw
        return (reduce_tensor(lo, x, kw["dim"], kw["keepdim"]),
                reduce_tensor(hi, x, kw["dim"], kw["keepdim"]))

    return run


def moments_cpu(mean: registry.OpDef, sumsq: registry.OpDef, root: bool, with_mean: bool):
    """var / std (``root``), and with ``with_mean`` var_mean / std_mean: the mean, then the sum
    of squared deviations from it (two passes) over max(0, N - correction)."""

    def run(plan, x: Tensor):
        kw = plan.kw
        dims, keepdim = kw["dim"], kw["keepdim"]
        shape = x._a.shape
        n = math.prod(shape[d] for d in dims)
        m = reduce_tensor(mean, x, dims, True)
        dev = pointwise("sub", (x, m))
        ss = reduce_tensor(sumsq, dev, dims, keepdim)
        div = float(max(0, n - kw["correction"]))
        d = ss.dtype
        if d in _NARROW_FLOATS and np.isinf(ss._a).any():
            # a sum of squares past the dtype's range (|x| ~ 1e19 in float32) whose variance
            # or root may still fit: again in float64, rounded once at the end, as torch's
            # float64 accumulation gives it
            ss = reduce_tensor(sumsq, cast(dev, _float64), dims, keepdim)
        v = pointwise("div", (ss, div))
        if root:
            v = pointwise("sqrt", (v,))
        v = cast(v, d)
        if not with_mean:
            return v
        if not keepdim:
            m = Tensor._make(m._a.reshape(v._a.shape), None, m.dtype)
        return v, m

    return run


_NARROW_FLOATS = frozenset([_dt.float16, _dt.bfloat16, _dt.float32])


def nanmean_cpu(nansum: registry.OpDef, count: registry.OpDef):
    """nanmean: nansum over the count of non-nan elements."""

    def run(plan, x: Tensor) -> Tensor:
        kw = plan.kw
        dims, keepdim = kw["dim"], kw["keepdim"]
        total = reduce_tensor(nansum, x, dims, keepdim, out_dtype=plan.out.dtype)
        notnan = pointwise("logical_not", (pointwise("isnan", (x,)),))
        cnt = reduce_tensor(count, notnan, dims, keepdim, compute=_int64, out_dtype=_int64)
        return pointwise("div", (total, cnt))

    return run


def vector_norm_cpu(by_ord: dict, count: registry.OpDef, total: registry.OpDef):
    """linalg.vector_norm: ord 2, 1, inf, -inf by their reductions (``by_ord``: run with the
    norm's own plan, whose dims, keepdim and float dtype are theirs), 0 as a count, any other
    p as sum(|x|^p)^(1/p)."""
    runs = {p: reduction_cpu(op) for p, op in by_ord.items()}

    def run(plan, x: Tensor) -> Tensor:
        kw = plan.kw
        p = float(kw["ord"])
        if x.dtype is not plan.out.dtype:
            x = cast(x, plan.out.dtype)
        reduce = runs.get(p)
        if reduce is not None:
            return reduce(plan, x)
        dims, keepdim = kw["dim"], kw["keepdim"]
        if p == 0:
            nz = reduce_tensor(count, x, dims, keepdim, compute=_int64, out_dtype=_int64)
            return cast(nz, x.dtype)
        s = reduce_tensor(total, pointwise("pow", (pointwise("abs", (x,)), p)), dims, keepdim)
        return pointwise("pow", (s, 1.0 / p))

    return run


_along: dict = {}


def along(a: np.ndarray, d: int, dtype: _dt.dtype) -> tuple:
    """(array, (O, R, I, sO, sR, sI)) for a kernel working along dim ``d`` (a copy when the
    outer or inner dims of a non-contiguous array do not merge); memoised on the geometry."""
    key = (a.shape, a.strides, a.itemsize, d)
    try:
        plan = _along[key]
    except KeyError:
        if len(_along) > 4096:
            _along.clear()
        plan = _along[key] = plan_dim(a.shape, elem_strides(a), d)
    if plan is None:
        a = contiguous(a, dtype)
        plan = plan_dim(a.shape, elem_strides(a), d)
    return a, plan


def _logsumexp_cpu():
    """logsumexp: one fused max / exp-sum pass per row (integers cast to the plan's float;
    float16 runs in float32); the module and the 3-D layout memoised per plan."""
    layouts: dict = {}  # (plan, input strides) -> (O, I, R, sO, sI, sR, tO, tI) or None

    def run(plan, x: Tensor) -> Tensor:
        d = plan.out.dtype
        if x.dtype is not d:
            x = cast(x, d)
        a, compute = (x._a, d) if d is not _float16 else (as_float32(x._a), _float32)
        dims = plan.kw["dim"]
        shape = plan.out.shape
        res = _allocator.empty(shape, compute.np)
        flat = res if res.ndim == 1 else res.reshape(-1)
        if flat.size:
            key = (plan, a.strides)
            try:
                p = layouts[key]
            except KeyError:
                if len(layouts) > 1024:
                    layouts.clear()
                p = layouts[key] = plan_reduce(a.shape, elem_strides(a), dims)
            if p is None:
                a = _permuted_copy(a, dims, compute)
                R = math.prod(a.shape[-len(dims):]) if dims else 1
                p = (flat.size, 1, R, R, 0, 1, 1, 0)
            mod = softmax_kernels(compute.name)
            O, I, R, sO, sI, sR, tO, tI = p
            fn = mod.lse_p if use_parallel(a.size) and O * I > 1 else mod.lse_s
            fn(span(a), O, I, R, sO, sI, sR, flat, tO, tI)
        if compute is not d:
            return result(res, d)
        return Tensor._make(res, flat, d)

    return run


logsumexp_cpu = _logsumexp_cpu()


# An exp per element: a softmax row costs about four elementwise passes, so the parallel
# builds pay from a quarter of the elementwise grain (log_softmax of 700 x 1000 floats, a
# language model's logits: 540 -> 380 us on two threads)
_EXP_WORK = 4


def softmax_cpu(log: bool):
    """softmax / log_softmax: exp(x - max) / sum per row in one fused pass (the input cast to
    the plan's dtype first when ``dtype=`` asks for another; float16 runs in float32)."""
    prepared: dict = {}  # plan -> (compiled module, compute dtype)

    def run(plan, x: Tensor) -> Tensor:
        d = plan.out.dtype
        try:
            mod, compute = prepared[plan]
        except KeyError:
            if len(prepared) > 1024:
                prepared.clear()
            compute = _float32 if d is _float16 else d
            mod = softmax_kernels(compute.name) if compute.category == 2 else None
            prepared[plan] = mod, compute
        if x.dtype is not d:
            x = cast(x, d)
        a = x._a if d is compute else as_float32(x._a)
        out = _allocator.empty(a.shape, compute.np)
        flat = out if out.ndim == 1 else out.reshape(-1)
        if flat.size:
            a, (O, R, I, sO, sR, sI) = along(a, plan.kw["dim"] if a.ndim else 0, compute)
            if R == 1 and I > 1 and (O == 1 or sO == I * sI):
                # rows of one element (softmax over a size-1 dim): the outer and inner dims are
                # one run of rows for the short-row kernel, not columns read at a runtime stride
                O, I, sO, sR = O * I, 1, sI, 1
            layout = ("short" if R < 8 else "rows") if I == 1 and sR == 1 else "cols"
            build = "_p" if use_parallel(a.size * _EXP_WORK) and O * I > 1 else "_s"
            getattr(mod, layout + build)(span(a), O, R, I, sO, sR, sI, flat, log)
        if compute is not d:
            return result(out, d)
        return Tensor._make(out, flat, d)

    return run


def softmax_backward_cpu(log: bool):
    """The gradient of softmax (``log``: log_softmax) at output ``y``: one compiled pass per
    row where both are C-contiguous rows of one float dtype over the last dim, else composed
    of pointwise kernels and a sum (any dim, broadcast or mixed-dtype gradients). The result
    is C-contiguous, as torch's CPU kernel gives it."""

    def run(plan, g: Tensor, y: Tensor) -> Tensor:
        dim = plan.kw["dim"]
        a, b = g._a, y._a
        if (dim == b.ndim - 1 and a.shape == b.shape and a.dtype == b.dtype and a.size
                and a.dtype in (np.float32, np.float64) and a.flags.c_contiguous
                and b.flags.c_contiguous):
            R = b.shape[-1]
            O = b.size // R
            out = _allocator.empty(b.shape, b.dtype)
            mod = softmax_kernels(y.dtype.name)  # (NumPy's dtype.name costs 2 us)
            fn = getattr(mod, ("bwd_short" if R < 8 else "bwd_rows")
                         + ("_p" if use_parallel(b.size * (_EXP_WORK if log else 1)) and O > 1
                            else "_s"))
            fn(a.reshape(-1), b.reshape(-1), O, R, out.reshape(-1), log)
            return Tensor._make(out, None, y.dtype)
        total = registry.REGISTRY["sum"]
        nd = max(b.ndim, 1)
        dims = (dim % nd,) if b.ndim else ()
        if log:   # g - exp(y) * sum(g)
            s = reduce_tensor(total, g, dims, True)
            res = pointwise("sub", (g, pointwise("mul", (pointwise("exp", (y,)), s))))
        else:     # y * (g - sum(g * y))
            s = reduce_tensor(total, pointwise("mul", (g, y)), dims, True)
            res = pointwise("mul", (y, pointwise("sub", (g, s))))
        return Tensor._make(contiguous(res._a, res.dtype), None, res.dtype)

    return run
