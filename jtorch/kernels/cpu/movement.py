"""Copy kernels for movement ops (cat, stack, flip, roll, repeat, tril/triu), and the CPU
entries ``(plan, *tensors) -> Tensor(s)`` of their OpDefs (``defs/movement.py``,
``defs/view.py``) at the end of the file.

Movement moves bits, so kernels see every dtype as the unsigned integer of its width
(``raw``): four specialisations serve all eleven dtypes, float16 included. Operands are
1-D storage buffers plus an element offset and signed element strides (negative strides
are how ``flip`` reads backwards), over an N-d iteration shape.

Work is split into tasks: a task is one block (at most ``blk`` elements) of one row of
the innermost dim. The serial kernel runs tasks in a loop, the parallel twin in a
``prange``; the Python launcher picks one with ``_threads.use_parallel`` (size and thread count).
"""

from __future__ import annotations

import itertools

import numba
import numpy as np
from numba import prange

from ... import _allocator, _threads
from ...shape import span
from ...tensor import Tensor
from .fill import empty_cpu

_RAW = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.complex128}
# A parallel task copies at most this many elements of one row.
BLOCK = 8192


def raw(a: np.ndarray) -> np.ndarray:
    """``a`` reinterpreted as the unsigned integer type of its width (no copy)."""
    return a.view(_RAW[a.itemsize])


def buffer(a: np.ndarray, as_raw: bool = True) -> tuple:
    """(1-D contiguous buffer starting at ``a``'s first element, element strides); the buffer
    is ``raw`` unless ``as_raw`` is False (arithmetic kernels need the real dtype)."""
    isz = a.itemsize
    strides = [s // isz for s in a.strides]
    flat = span(a)
    return (raw(flat) if as_raw else flat), strides


def tasks(shape, parallel: bool) -> tuple:
    """(ntasks, blocks per row, block length) for an iteration shape (rank >= 1)."""
    n = shape[-1]
    rows = 1
    for s in shape[:-1]:
        rows *= s
    if n == 0 or rows == 0:
        return 0, 1, 1
    if not parallel:
        return rows, 1, n
    nb = -(-n // BLOCK)
    return rows * nb, nb, -(-n // nb)


def use_parallel(n: int) -> bool:
    return _threads.use_parallel(n)


# -- strided copy ---------------------------------------------------------------------------

@numba.njit(cache=True, nogil=True)
def row_copy(dst, pd, b, src, ps, a, n):
    """dst[pd + j*b] = src[ps + j*a] for j < n; unit strides take a vectorisable loop."""
    if a == 1 and b == 1:
        d = dst[pd:pd + n]
        s = src[ps:ps + n]
        for j in range(n):
            d[j] = s[j]
    else:
        for j in range(n):
            dst[pd + j * b] = src[ps + j * a]


@numba.njit(cache=True, nogil=True)
def _copy_task(t, nb, blk, shape, src, soff, sstr, dst, doff, dstr):
    nd = shape.size - 1
    t = np.int64(t)  # prange indices may be unsigned
    row = t // nb
    lo = (t % nb) * blk
    hi = min(shape[nd], lo + blk)
    ps = soff
    pd = doff
    for d in range(nd - 1, -1, -1):
        q = row % shape[d]
        row //= shape[d]
        ps += q * sstr[d]
        pd += q * dstr[d]
    a = sstr[nd]
    b = dstr[nd]
    row_copy(dst, pd + lo * b, b, src, ps + lo * a, a, hi - lo)


@numba.njit(cache=True, nogil=True)
def _copy(ntasks, nb, blk, shape, src, soff, sstr, dst, doff, dstr):
    for t in range(ntasks):
        _copy_task(t, nb, blk, shape, src, soff, sstr, dst, doff, dstr)


@numba.njit(cache=True, nogil=True, parallel=True)
def _copy_par(ntasks, nb, blk, shape, src, soff, sstr, dst, doff, dstr):
    for t in prange(ntasks):
        _copy_task(t, nb, blk, shape, src, soff, sstr, dst, doff, dstr)


def _coalesce(shape, strides: list) -> tuple:
    from ...dispatch import coalesce

    if not shape:
        return [1], [[0] for _ in strides]
    return coalesce(tuple(shape), strides)


def copy(shape, src: np.ndarray, soff: int, sstr, dst: np.ndarray, doff: int, dstr) -> None:
    """dst[doff + i.dstr] = src[soff + i.sstr] over ``shape`` (raw 1-D buffers, any strides)."""
    size = 1
    for s in shape:
        size *= s
    if size == 0:
        return
    cshape, (cs, cd) = _coalesce(shape, [list(sstr), list(dstr)])
    par = use_parallel(size)
    nt, nb, blk = tasks(cshape, par)
    (_copy_par if par else _copy)(nt, nb, blk, np.asarray(cshape, np.int64), src, soff,
                                  np.asarray(cs, np.int64), dst, doff, np.asarray(cd, np.int64))


def copy_array(dst: np.ndarray, src: np.ndarray) -> None:
    """dst[...] = src for same-dtype arrays of one shape (src may have 0 strides)."""
    sb, ss = buffer(src)
    db, ds = buffer(dst)
    copy(dst.shape, sb, 0, ss, db, 0, ds)


# -- tril / triu ----------------------------------------------------------------------------

@numba.njit(cache=True, nogil=True)
def _tri_task(t, nb, blk, shape, src, soff, sstr, dst, doff, dstr, k, upper):
    nd = shape.size - 1
    t = np.int64(t)  # prange indices may be unsigned
    row = t // nb
    lo = (t % nb) * blk
    hi = min(shape[nd], lo + blk)
    ps = soff
    pd = doff
    i = 0
    for d in range(nd - 1, -1, -1):
        q = row % shape[d]
        row //= shape[d]
        if d == nd - 1:
            i = q
        ps += q * sstr[d]
        pd += q * dstr[d]
    a = sstr[nd]
    b = dstr[nd]
    for j in range(lo, hi):
        if (j - i >= k) if upper else (j - i <= k):
            dst[pd + j * b] = src[ps + j * a]
        else:
            dst[pd + j * b] = 0


@numba.njit(cache=True, nogil=True)
def _tri(ntasks, nb, blk, shape, src, soff, sstr, dst, doff, dstr, k, upper):
    for t in range(ntasks):
        _tri_task(t, nb, blk, shape, src, soff, sstr, dst, doff, dstr, k, upper)


@numba.njit(cache=True, nogil=True, parallel=True)
def _tri_par(ntasks, nb, blk, shape, src, soff, sstr, dst, doff, dstr, k, upper):
    for t in prange(ntasks):
        _tri_task(t, nb, blk, shape, src, soff, sstr, dst, doff, dstr, k, upper)


def tri(dst: np.ndarray, src: np.ndarray, k: int, upper: bool) -> None:
    """dst = tril(src, k) (or triu): same shapes (rank >= 2), same dtype; dst may be src."""
    if dst.size == 0:
        return
    sb, ss = buffer(src)
    db, ds = buffer(dst)
    par = use_parallel(dst.size)
    nt, nb, blk = tasks(dst.shape, par)
    (_tri_par if par else _tri)(nt, nb, blk, np.asarray(dst.shape, np.int64), sb, 0,
                                np.asarray(ss, np.int64), db, 0, np.asarray(ds, np.int64),
                                int(k), bool(upper))


# -- OpDef entries: (plan, *tensors) -> result --------------------------------------------

def contiguous_copy(t: Tensor) -> Tensor:
    """A row-major copy of ``t`` (same dtype)."""
    a = _allocator.empty(t._a.shape, t._a.dtype)
    copy_array(a, t._a)
    return Tensor._make(a, None, t.dtype)


def copy_cast(dst: np.ndarray, dst_dtype, src: Tensor) -> None:
    """dst[...] = src (same shape), converting the dtype with the registry's copy kernel."""
    if src.dtype is dst_dtype:
        copy_array(dst, src._a)
    else:
        from ... import dispatch
        from ..registry import REGISTRY

        dispatch.run_pointwise(REGISTRY["copy"], (src,), dst, dst_dtype)


def view_copy_cpu(plan, x: Tensor) -> Tensor:
    """reshape where no view fits: a row-major copy in the new shape."""
    o = plan.out
    a = _allocator.empty(o.shape, o.dtype.np)
    copy_array(a.reshape(x._a.shape), x._a)
    return Tensor._make(a, None, o.dtype)


def view_dtype_cpu(plan, x: Tensor) -> Tensor:
    """The input's bytes read as the plan's dtype, over the same storage."""
    o = plan.out
    d = o.dtype
    base = x._base if x._base is not None else x
    if d.itemsize == x.dtype.itemsize:
        return Tensor._make(x._a.view(d.np), x._st.view(d.np), d, base)
    st = x._st
    st = np.ndarray((st.nbytes // d.itemsize,), d.np, buffer=st) if st.flags.c_contiguous \
        else st.view(d.np)
    off = plan.kw["offset"]
    a = np.ndarray(o.shape, d.np, buffer=st, offset=min(off, st.size) * d.itemsize,
                   strides=tuple(s * d.itemsize for s in o.strides))
    return Tensor._make(a, st, d, base)


def views_cpu(plan, *args) -> tuple:
    """A tuple of views (split, chunk, unbind): each made from its ``View``."""
    from ...dispatch import make_view

    return tuple(make_view(args[v.src], v) for v in plan.out)


def _legacy_skipped(a) -> bool:
    """cat skips 1-D empty tensors whatever the other shapes (torch's legacy rule)."""
    return a.ndim == 1 and a.shape[0] == 0


def cat_cpu(plan, *tensors: Tensor) -> Tensor:
    res = empty_cpu(plan)
    d, axis = plan.out.dtype, plan.kw["dim"]
    lead = (slice(None),) * axis
    start = 0
    for x in tensors:
        a = x._a
        if _legacy_skipped(a):
            continue
        n = a.shape[axis]
        if n and a.size:
            copy_cast(res._a[lead + (slice(start, start + n),)], d, x)
        start += n
    return res


def stack_cpu(plan, *tensors: Tensor) -> Tensor:
    res = empty_cpu(plan)
    d = plan.out.dtype
    lead = (slice(None),) * plan.kw["dim"]
    if res._a.size:
        for i, x in enumerate(tensors):
            copy_cast(res._a[lead + (i, Ellipsis)], d, x)  # a view, also when 0-d
    return res


def flip_cpu(plan, x: Tensor) -> Tensor:
    """A reversed copy: one strided copy reading with negated strides."""
    out = empty_cpu(plan)
    if out._a.size:
        sb, ss = buffer(x._a)
        db, ds = buffer(out._a)
        shape = x._a.shape
        soff = 0
        ss = list(ss)
        for d in set(plan.kw["dims"]) if shape else ():
            soff += (shape[d] - 1) * ss[d]
            ss[d] = -ss[d]
        copy(shape, sb, soff, ss, db, 0, ds)
    return out


def _roll_into(dst: np.ndarray, src: np.ndarray, amount: list) -> None:
    """Each rolled dim splits into two blocks: dst[s:] = src[:n-s] and dst[:s] = src[n-s:]."""
    choices = []
    for n, s in zip(src.shape, amount):
        if s == 0:
            choices.append([(slice(None), slice(None))])
        else:
            choices.append([(slice(s, n), slice(0, n - s)), (slice(0, s), slice(n - s, n))])
    for combo in itertools.product(*choices):
        copy_array(dst[tuple(c[0] for c in combo)], src[tuple(c[1] for c in combo)])


def roll_cpu(plan, x: Tensor) -> Tensor:
    out = empty_cpu(plan)
    a = out._a
    if not a.size:
        return out
    shifts, dims = plan.kw["shifts"], plan.kw["dims"]
    if dims is None:  # the flattened tensor, rolled
        src = x._a.reshape(-1) if x._a.flags.c_contiguous else contiguous_copy(x)._a.reshape(-1)
        _roll_into(a.reshape(-1), src, [shifts[0] % src.size])
        return out
    shape = x._a.shape
    amount = [0] * len(shape)
    for d, s in zip(dims, shifts):
        amount[d] = (amount[d] + s) % shape[d] if shape[d] else 0
    _roll_into(a, x._a, amount)
    return out


def repeat_cpu(plan, x: Tensor) -> Tensor:
    """Tile the tensor ``repeats`` times per dim: one strided copy from a 0-stride view."""
    out = empty_cpu(plan)
    if out._a.size:
        reps = plan.kw["repeats"]
        nd = x._a.ndim
        shape = (1,) * (len(reps) - nd) + x._a.shape
        sb, ss = buffer(x._a)
        ss = [0] * (len(reps) - nd) + list(ss)
        db, _ = buffer(out._a)
        ostr = []
        acc = 1
        for n in reversed(out._a.shape):
            ostr.append(acc)
            acc *= max(n, 1)
        ostr.reverse()
        it_shape, it_src, it_dst = [], [], []
        for r, n, s, o in zip(reps, shape, ss, ostr):
            it_shape += [r, n]
            it_src += [0, s]
            it_dst += [o * n, o]
        copy(it_shape, sb, 0, it_src, db, 0, it_dst)
    return out


def tril_cpu(plan, x: Tensor) -> Tensor:
    out = empty_cpu(plan)
    tri(raw(out._a), raw(x._a), plan.kw["diagonal"], False)
    return out


def triu_cpu(plan, x: Tensor) -> Tensor:
    out = empty_cpu(plan)
    tri(raw(out._a), raw(x._a), plan.kw["diagonal"], True)
    return out


def tril__cpu(plan, x: Tensor) -> Tensor:
    tri(raw(x._a), raw(x._a), plan.kw["diagonal"], False)
    return x


def triu__cpu(plan, x: Tensor) -> Tensor:
    tri(raw(x._a), raw(x._a), plan.kw["diagonal"], True)
    return x


def repeat_interleave_cpu(plan, repeats: Tensor) -> Tensor:
    """0..n-1, index i repeated repeats[i] times."""
    r = repeats._a
    if r.size and r.min() < 0:
        raise RuntimeError("repeats can not be negative")
    res = np.repeat(np.arange(r.size, dtype=np.int64), r)
    size = plan.kw["output_size"]
    if size is not None and res.size != size:
        raise RuntimeError("allocated size does not match required size")
    return Tensor._make(res)
