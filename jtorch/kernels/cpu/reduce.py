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
"""

from __future__ import annotations

import math

import numpy as np

from .. import registry
from ..source import fingerprint, load
from .pointwise import _NP_CTOR

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
        import numba

        op = registry.REGISTRY[name]
        py = op.combine if part == "combine" else getattr(op, part) or _DEFAULTS.get(part)
        fn = _parts[key] = numba.njit(inline="always", cache=False)(py)
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

def span(a: np.ndarray) -> np.ndarray:
    """A C-contiguous 1-D array over the memory ``a`` touches, starting at its first element."""
    if a.flags.c_contiguous:
        return a.reshape(-1)
    isz = a.itemsize
    n = 1 + sum((k - 1) * (s // isz) for k, s in zip(a.shape, a.strides)) if a.size else 0
    return np.lib.stride_tricks.as_strided(a, shape=(n,), strides=(isz,))


def elem_strides(a: np.ndarray) -> tuple:
    isz = a.itemsize
    return tuple(s // isz for s in a.strides)


_plans: dict[tuple, object] = {}


def plan_reduce(shape: tuple, strides: tuple, dims: tuple):
    """``(O, I, R, sO, sI, sR, tO, tI)`` reducing ``dims`` of a strided array into a
    contiguous output of the kept dims, or None when no 3-D view exists (copy first)."""
    key = (shape, strides, dims)
    plan = _plans.get(key)
    if plan is None:
        if len(_plans) > 4096:
            _plans.clear()
        plan = _plans[key] = _plan_reduce(shape, strides, dims)
    return plan


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
from numba import njit, prange
from jtorch.kernels.cpu.reduce import part_of
"""

_OPTS = "cache=True, nogil=True, error_model='numpy'"

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


@njit({opts}, fastmath={{'reassoc'}})
def span(row):
    acc = _ID
    for j in range(row.size):
        acc = _ci(_c(acc, _ci(_m(row[j]))))
    return acc


@njit({opts})
def total(x, p, n):
    if n <= _B:
        return _ct(span(x[p:p + n]))
    t = _IDT
    for b in range(p, p + n, _B):
        t = _ct(_c(t, _ct(span(x[b:min(b + _B, p + n)]))))
    return t


@njit({opts})
def column(x, p, m, R, sR, acc):
    for i in range(m):
        acc[i] = _IDT
    for r in range(R):
        q = p + r * sR
        row = x[q:q + m]
        for i in range(m):
            acc[i] = _ct(_c(acc[i], _ct(_ci(_m(row[i])))))


@njit({opts})
def strided(x, p, R, sR):
    t = _IDT
    for r in range(R):
        t = _ct(_c(t, _ct(_ci(_m(x[p + r * sR])))))
    return t


@njit({opts})
def s(x, O, I, R, sO, sI, sR, out, tO, tI):
    if sR == 1 or R <= 1:
        for o in range(O):
            for i in range(I):
                out[o * tO + i * tI] = _co(_p(total(x, o * sO + i * sI, R), R))
    elif sI == 1 and I > 1:
        acc = np.empty(I, _ct)
        for o in range(O):
            column(x, o * sO, I, R, sR, acc)
            for i in range(I):
                out[o * tO + i * tI] = _co(_p(acc[i], R))
    else:
        for o in range(O):
            for i in range(I):
                out[o * tO + i * tI] = _co(_p(strided(x, o * sO + i * sI, R, sR), R))


@njit({opts}, parallel=True)
def p(x, O, I, R, sO, sI, sR, out, tO, tI):
    n = O * I
    if (sR == 1 or R <= 1) and n == 1:
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
    elif (sR == 1 or R <= 1) and I == 1:
        for o in prange(O):
            out[o * tO] = _co(_p(total(x, o * sO, R), R))
    elif sR == 1 or R <= 1:
        for k in prange(n):
            o = k // I
            i = k - o * I
            out[o * tO + i * tI] = _co(_p(total(x, o * sO + i * sI, R), R))
    elif sI == 1 and I > 1:
        nch = (I + 1023) // 1024
        for k in prange(O * nch):
            o = k // nch
            i0 = (k - o * nch) * 1024
            m = min(1024, I - i0)
            acc = np.empty(m, _ct)
            column(x, o * sO + i0, m, R, sR, acc)
            for i in range(m):
                out[o * tO + (i0 + i) * tI] = _co(_p(acc[i], R))
    else:
        for k in prange(n):
            o = k // I
            i = k - o * I
            out[o * tO + i * tI] = _co(_p(strided(x, o * sO + i * sI, R, sR), R))
"""


def _source(op: registry.OpDef, compute: str, total: str, out: str) -> str:
    head = (f"# {op.name}: reduction, compute {compute}, accumulate {total}, out {out}\n"
            f"# source fingerprint {_fingerprint(op)}\n")
    body = _REDUCE.format(name=op.name, ci=_NP_CTOR[compute], ct=_NP_CTOR[total],
                          co=_NP_CTOR[out], idc=literal(op.identity, compute),
                          idt=literal(op.identity, total), block=BLOCK, opts=_OPTS)
    return head + _HEADER + body


# -- value-and-index reductions (max/min with dim, argmax, argmin) ---------------------------

_ARG = """
_c = part_of({name!r}, 'combine')
_ci = {ci}
_ID = _ci({idc})


@njit({opts}, fastmath={{'reassoc'}})
def span(row):
    acc = _ID
    for j in range(row.size):
        acc = _ci(_c(acc, _ci(row[j])))
    return acc


@njit({opts})
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


@njit({opts})
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


@njit({opts})
def strided(x, p, R, sR):
    b = _ci(x[p])
    bi = 0
    for r in range(1, R):
        v = _ci(_c(b, _ci(x[p + r * sR])))
        if not (v == b or (v != v and b != b)):
            b = v
            bi = r
    return b, bi


@njit({opts})
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
                             idc=literal(op.identity, compute), opts=_OPTS))
        mod = _mods[key] = load(f"jt_argreduction_{op.name}", src)
    return mod


# -- softmax, log_softmax (and their backward rows), logsumexp: fused row kernels ------------

_SOFTMAX = """
from jtorch.kernels import fastmath as fm
from jtorch.kernels.defs.reduction import maximum

_T = {t}
_INF = _T(np.inf)


@njit({opts}, fastmath={{'reassoc'}})
def vsum(row):
    acc = _T(0)
    for j in range(row.size):
        acc += row[j]
    return acc


@njit({opts}, fastmath={{'reassoc'}})
def vmax(row):
    m = -_INF
    for j in range(row.size):
        m = maximum(m, row[j])
    return m


@njit({opts}, fastmath={{'reassoc'}})
def expsum(src, m, dst):
    # dst = exp(src - m) and its sum. ``reassoc`` lets the sum vectorise; fastmath.exp is
    # compiled separately (force-inlined by LLVM), so its own arithmetic keeps strict order.
    acc = _T(0)
    for j in range(src.size):
        e = fm.exp(src[j] - m)
        dst[j] = e
        acc += e
    return acc


@njit({opts})
def row(src, dst, log):
    # max pass, exp-and-sum pass (exp written to dst), then the write pass.
    m = vmax(src)
    tot = expsum(src, m, dst)
    if log:
        c = m + fm.log(tot)
        for j in range(src.size):
            dst[j] = src[j] - c
    else:
        inv = _T(1) / tot
        for j in range(dst.size):
            dst[j] = dst[j] * inv


@njit({opts})
def cols(x, p, R, I, sR, sI, dst, mx, sm, log):
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
            dst[r * I + i] = e
            sm[i] += e
    if log:
        for i in range(I):
            sm[i] = mx[i] + fm.log(sm[i])
        for r in range(R):
            q = p + r * sR
            for i in range(I):
                dst[r * I + i] = x[q + i * sI] - sm[i]
    else:
        for i in range(I):
            sm[i] = _T(1) / sm[i]
        for r in range(R):
            for i in range(I):
                dst[r * I + i] = dst[r * I + i] * sm[i]


@njit({opts})
def softmax_s(x, O, R, I, sO, sR, sI, out, log):
    if I == 1 and sR == 1:
        for o in range(O):
            row(x[o * sO:o * sO + R], out[o * R:(o + 1) * R], log)
    else:
        mx = np.empty(I, _T)
        sm = np.empty(I, _T)
        for o in range(O):
            cols(x, o * sO, R, I, sR, sI, out[o * R * I:(o + 1) * R * I], mx, sm, log)


@njit({opts}, parallel=True)
def softmax_p(x, O, R, I, sO, sR, sI, out, log):
    if I == 1 and sR == 1:
        for o in prange(O):
            row(x[o * sO:o * sO + R], out[o * R:(o + 1) * R], log)
    else:
        nch = (I + 255) // 256
        for k in prange(O * nch):
            o = k // nch
            i0 = (k - o * nch) * 256
            m = min(256, I - i0)
            mx = np.empty(m, _T)
            sm = np.empty(m, _T)
            # columns i0..i0+m of (o, :, :): a (R, m) block with output row stride I
            for i in range(m):
                mx[i] = -_INF
                sm[i] = 0
            base = o * sO + i0 * sI
            ob = o * R * I + i0
            for r in range(R):
                q = base + r * sR
                for i in range(m):
                    mx[i] = maximum(mx[i], x[q + i * sI])
            for r in range(R):
                q = base + r * sR
                for i in range(m):
                    e = fm.exp(x[q + i * sI] - mx[i])
                    out[ob + r * I + i] = e
                    sm[i] += e
            if log:
                for i in range(m):
                    sm[i] = mx[i] + fm.log(sm[i])
                for r in range(R):
                    q = base + r * sR
                    for i in range(m):
                        out[ob + r * I + i] = x[q + i * sI] - sm[i]
            else:
                for i in range(m):
                    sm[i] = _T(1) / sm[i]
                for r in range(R):
                    for i in range(m):
                        out[ob + r * I + i] = out[ob + r * I + i] * sm[i]


@njit({opts}, fastmath={{'reassoc'}})
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


@njit({opts})
def softmax_bwd_s(g, y, O, R, out, log):
    for o in range(O):
        bwd_row(g[o * R:(o + 1) * R], y[o * R:(o + 1) * R], out[o * R:(o + 1) * R], log)


@njit({opts}, parallel=True)
def softmax_bwd_p(g, y, O, R, out, log):
    for o in prange(O):
        bwd_row(g[o * R:(o + 1) * R], y[o * R:(o + 1) * R], out[o * R:(o + 1) * R], log)


@njit({opts})
def lse_one(x, p, R, sR, tmp):
    if sR == 1:
        src = x[p:p + R]
        m = vmax(src)
        m = m if abs(m) < _INF else _T(0)
        return fm.log(expsum(src, m, tmp[:R])) + m
    m = -_INF
    for r in range(R):
        m = maximum(m, x[p + r * sR])
    m = m if abs(m) < _INF else _T(0)
    acc = _T(0)
    for r in range(R):
        acc += fm.exp(x[p + r * sR] - m)
    return fm.log(acc) + m


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
               + _SOFTMAX.format(t=_NP_CTOR[dtype], opts=_OPTS))
        mod = _mods[key] = load("jt_softmax", src)
    return mod
