"""Sorts on CUDA: sort, argsort, topk, kthvalue, median, nanmedian, mode.

Each element of a row becomes an int64 key that orders like torch's sort (``keys``: a float's
bits made monotone, -0.0 equal to 0.0, every nan the largest key; descending flips the bits)
paired with its index in the row; the rows are merge-sorted by (key, index), which is a
strict order, so the result is the CPU's stable sort exactly: ties keep their input order,
ascending puts nan last, descending first. A merge pass places each element by its rank in
the partner run (a binary search), so every element moves independently: ``log2(R)``
launches over all elements of all rows, each writing a permutation, with nothing depending
on scheduling. A gather writes the values and indices of the positions asked for (topk's
first ``k``, kthvalue's ``k``-th); median and mode read the sorted rows, one thread a row.
"""
# ruff: noqa: FURB136, PLR1730  (the builtins min/max of two integers do not type in Numba's CUDA
# target: kernels spell them out)

from __future__ import annotations

import math

import numpy as np

from ...cuda_array import empty
from ...tensor import Tensor
from ..cpu.reduce import plan_dim
from ..plan import Plan
from . import eager, target
from .rows import FLOAT, INT64, NATIVE, REG, THREADS, data, filled, flat, launch_size, new, reshaped
from .target import cuda

_I32_MAG = np.int64(0x7FFFFFFF)
_I32_EXP = np.int64(0x7F800000)
_I64_MAG = np.int64(0x7FFFFFFFFFFFFFFF)
_I64_EXP = np.int64(0x7FF0000000000000)
_NAN_KEY = np.int64(0x7FFFFFFFFFFFFFFF)


@cuda.jit(device=True, inline=True)
def _float_key(b, mag, exp):
    """A monotone int64 key from a float's bits ``b`` (sign-extended to int64)."""
    m = b & mag
    if m > exp:
        return _NAN_KEY
    if m == 0:
        return np.int64(0)
    return b ^ mag if b < 0 else b


@cuda.jit(device=True, inline=True)
def _key_f32(b):
    return _float_key(b, _I32_MAG, _I32_EXP)


@cuda.jit(device=True, inline=True)
def _key_f64(b):
    return _float_key(b, _I64_MAG, _I64_EXP)


@cuda.jit(device=True, inline=True)
def _key_int(v):
    return v


_KEYS = {"f32": _key_f32, "f64": _key_f64, "int": _key_int}


def key_source(kind: str):
    """The kernel writing (key, index) of every element: ``kind`` f32 and f64 read the
    values' bits (an integer view of the storage), int the values."""
    key = _KEYS[kind]

    def keys(x, O, R, I, sO, sR, sI, desc, ku, ki):
        e = cuda.grid(1)
        n = O * I * R
        while e < n:
            t = e // R
            r = e - t * R
            o = t // I
            i = t - o * I
            k = key(np.int64(x[o * sO + i * sI + r * sR]))
            ku[e] = ~k if desc else k
            ki[e] = r
            e += cuda.gridsize(1)

    return keys


@cuda.jit(device=True, inline=True)
def _before(ka, ia, kb, ib):
    return ka < kb or (ka == kb and ia < ib)


@cuda.jit(device=True, inline=True)
def _rank(ku, ki, lo, hi, k, j):
    """How many of the sorted pairs ku/ki[lo:hi] come before (k, j)."""
    a = lo
    b = hi
    while a < b:
        mid = (a + b) // 2
        if _before(ku[mid], ki[mid], k, j):
            a = mid + 1
        else:
            b = mid
    return a - lo


def merge(ku, ki, ko, io, n, R, w):
    """One merge pass: sorted runs of ``w`` become runs of ``2w`` (``ko``/``io``)."""
    e = cuda.grid(1)
    while e < n:
        base = (e // R) * R
        r = e - base
        s = (r // (2 * w)) * (2 * w)
        mid = s + w if s + w < R else R
        end = s + 2 * w if s + 2 * w < R else R
        k = ku[e]
        j = ki[e]
        if r < mid:
            pos = s + (r - s) + _rank(ku, ki, base + mid, base + end, k, j)
        else:
            pos = s + (r - mid) + _rank(ku, ki, base + s, base + mid, k, j)
        ko[base + pos] = k
        io[base + pos] = j
        e += cuda.gridsize(1)


def gather(x, ki, O, R, I, sO, sR, sI, k0, m, vals, inds):
    """Sorted positions ``k0 .. k0 + m`` of every row into (O, m, I) row-major results."""
    e = cuda.grid(1)
    n = O * I * m
    while e < n:
        t = e // m
        j = e - t * m
        o = t // I
        i = t - o * I
        r = ki[t * R + k0 + j]
        q = (o * m + j) * I + i
        vals[q] = x[o * sO + i * sI + r * sR]
        inds[q] = r
        e += cuda.gridsize(1)


def median(vals, inds, O, R, I, ignore_nan, mv, mi):
    """The lower median of every sorted (O, R, I) row (nan first if any, unless
    ``ignore_nan``: then of the numbers), with its index."""
    t = cuda.grid(1)
    while t < O * I:
        o = t // I
        i = t - o * I
        p = o * R * I + i
        c = R
        while c > 0 and vals[p + (c - 1) * I] != vals[p + (c - 1) * I]:
            c -= 1
        if ignore_nan:
            pos = (c - 1) // 2 if c > 0 else 0
        else:
            pos = (R - 1) // 2 if c == R else c
        mv[t] = vals[p + pos * I]
        mi[t] = inds[p + pos * I]
        t += cuda.gridsize(1)


def mode(vals, inds, O, R, I, mv, mi):
    """The most frequent value of every sorted row (the smallest on ties; nan never equals
    nan) and the last index holding it."""
    t = cuda.grid(1)
    while t < O * I:
        o = t // I
        i = t - o * I
        p = o * R * I + i
        best = 0
        best_n = 0
        s = 0
        while s < R:
            e = s + 1
            while e < R and vals[p + e * I] == vals[p + s * I]:
                e += 1
            if e - s > best_n:
                best_n = e - s
                best = s
            s = e
        last = inds[p + best * I]
        for r in range(best, best + best_n):
            if inds[p + r * I] > last:
                last = inds[p + r * I]
        mv[t] = vals[p + best * I]
        mi[t] = last
        t += cuda.gridsize(1)


_jitted: dict = {}
_SOURCES = {"merge": merge, "gather": gather, "median": median, "mode": mode}


def kernel(name: str):
    k = _jitted.get(name)
    if k is None:
        fn = key_source(name[5:]) if name.startswith("keys_") else _SOURCES[name]
        k = _jitted[name] = target.jit(fn)
    return k


_KIND = {"float32": ("f32", np.int32), "float64": ("f64", np.int64)}


def sorted_rows(x: Tensor, dim: int, desc: bool, k0: int, m: int) -> tuple:
    """(values, indices) row-major CUDA tensors of sorted positions ``k0 .. k0 + m`` along
    ``dim`` (the input's shape with ``m`` at ``dim``)."""
    a = x._a
    shape = tuple(a.shape)
    oshape = list(shape)
    if shape:
        oshape[dim] = m
    vals = new(tuple(oshape), x.dtype, x.device)
    inds = new(tuple(oshape), INT64, x.device)
    if not vals._a.size:
        return vals, inds
    lay = plan_dim(shape, a.element_strides(), dim)
    if lay is None:
        x = eager._copy(x)
        a = x._a
        lay = plan_dim(shape, a.element_strides(), dim)
    O, R, I, sO, sR, sI = lay
    n = O * I * R
    grid = (launch_size(n), THREADS)
    buf, _ = data(x)
    kind, bits = _KIND.get(a.dtype.name, ("int", None))
    ku, ki, ko, io = (flat(new((n,), INT64, x.device)) for _ in range(4))
    kernel("keys_" + kind)[grid](buf if bits is None else buf.view(bits), O, R, I, sO, sR, sI,
                                 desc, ku, ki)
    w = 1
    while w < R:
        kernel("merge")[grid](ku, ki, ko, io, n, R, w)
        ku, ki, ko, io = ko, io, ku, ki
        w *= 2
    grid = (launch_size(O * I * m), THREADS)
    kernel("gather")[grid](buf, ki, O, R, I, sO, sR, sI, k0, m, flat(vals), flat(inds))
    return vals, inds


def _hosted(name: str):
    """The kernel entry ``fn`` of op ``name``, with 16-bit floats and complex numbers sent to
    the host path."""
    host = eager.host_kernel(REG[name])

    def guard(fn):
        def run(plan: Plan, x: Tensor):
            if x.dtype.name not in NATIVE:
                return host(plan, x)
            return fn(plan, x)

        run.__doc__ = fn.__doc__
        return run

    return guard


def _like(t: Tensor, strides) -> Tensor:
    """Row-major ``t`` copied to the plan's layout (sort's results are laid out like its
    input)."""
    if strides is None or (t._a.flags.c_contiguous and t._a.element_strides() == tuple(strides)):
        return t
    a, st = empty(tuple(t._a.shape), t._a.dtype, t.device, tuple(strides))
    res = Tensor._make(a, st, t.dtype)
    eager._copy_values(res, t)
    return res


@_hosted("sort")
def sort_cuda(plan: Plan, x: Tensor) -> tuple:
    kw = plan.kw
    d = kw["dim"] if x._a.ndim else 0
    vals, inds = sorted_rows(x, d, bool(kw["descending"]), 0, x._a.shape[d] if x._a.ndim else 1)
    return _like(vals, plan.out[0].strides), _like(inds, plan.out[1].strides)


@_hosted("argsort")
def argsort_cuda(plan: Plan, x: Tensor) -> Tensor:
    kw = plan.kw
    d = kw["dim"] if x._a.ndim else 0
    _, inds = sorted_rows(x, d, bool(kw["descending"]), 0, x._a.shape[d] if x._a.ndim else 1)
    return _like(inds, plan.out.strides)


@_hosted("topk")
def topk_cuda(plan: Plan, x: Tensor) -> tuple:
    kw = plan.kw
    return sorted_rows(x, kw["dim"] if x._a.ndim else 0, bool(kw["largest"]), 0, kw["k"])


@_hosted("kthvalue")
def kthvalue_cuda(plan: Plan, x: Tensor) -> tuple:
    kw = plan.kw
    vals, inds = sorted_rows(x, kw["dim"] if x._a.ndim else 0, False, kw["k"] - 1, 1)
    shape = tuple(plan.out[0].shape)
    return reshaped(vals, shape), reshaped(inds, shape)


def _per_row(name: str, x: Tensor, d: int, shape: tuple, *args) -> tuple:
    """Median or mode (kernel ``name``) of the rows along ``d``, shaped ``shape``."""
    R = x._a.shape[d] if x._a.ndim else 1
    vals, inds = sorted_rows(x, d, False, 0, R)
    O = math.prod(x._a.shape[:d])
    I = vals._a.size // max(1, O * R)
    mv = new(shape, x.dtype, x.device)
    mi = new(shape, INT64, x.device)
    kernel(name)[launch_size(O * I), THREADS](flat(vals), flat(inds), O, R, I, *args, flat(mv),
                                              flat(mi))
    return mv, mi


def median_cuda(ignore_nan: bool):
    """median / nanmedian: the lower median of each row (of all elements without a dim)."""
    name = "nanmedian" if ignore_nan else "median"

    @_hosted(name)
    def run(plan: Plan, x: Tensor):
        d = plan.kw["dim"]
        if d is None:
            if not x._a.size:  # nan (cast to the dtype: the lowest integer, True)
                dt = x.dtype
                value = math.nan if dt.name in FLOAT else True if dt.name == "bool" else \
                    int(np.iinfo(dt.np).min)
                return filled(plan.out, value, plan.device)
            flat_x = reshaped(x, (x._a.size,))
            return _per_row("median", flat_x, 0, (), ignore_nan)[0]
        return _per_row("median", x, d if x._a.ndim else 0, tuple(plan.out[0].shape), ignore_nan)

    return run


@_hosted("mode")
def mode_cuda(plan: Plan, x: Tensor) -> tuple:
    d = plan.kw["dim"]
    return _per_row("mode", x, d if x._a.ndim else 0, tuple(plan.out[0].shape))


for _name, _kernel in (("sort", sort_cuda), ("argsort", argsort_cuda), ("topk", topk_cuda),
                       ("kthvalue", kthvalue_cuda), ("median", median_cuda(False)),
                       ("nanmedian", median_cuda(True)), ("mode", mode_cuda)):
    REG[_name].kernels["cuda"] = _kernel
