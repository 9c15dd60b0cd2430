"""Copy kernels for movement ops (cat, stack, flip, roll, repeat, tril/triu), and the CPU
entries ``(plan, *tensors) -> Tensor(s)`` of their OpDefs (``defs/movement.py``,
``defs/view.py``) at the end of the file.

Movement moves bits, so kernels see every dtype as the unsigned integer of its width
(``raw``): four specialisations serve all twelve dtypes, the 16-bit floats included. Operands are
1-D storage buffers plus an element offset and signed element strides (negative strides
are how ``flip`` reads backwards), over an N-d iteration shape.

A strided copy runs over the destination's memory order, coalesced, from a plan memoised per
geometry (``plan``): rows of the destination's inner dim (``_rows``: a task is a run of rows,
or a block of one long row), or, where that dim is strided in the source (a transpose), blocks
of the plane of the two inner dims (``_tiled``). The serial kernel runs tasks in a loop, the
parallel twin in a ``prange``; the Python launcher picks one with ``_threads.use_parallel``
(size and thread count). ``copy_array`` leaves small copies, and single-threaded ones NumPy's
row loop does as fast, to NumPy's copy. ``cat`` and ``stack`` copy all their inputs in one
``concatenate`` (``concat_into``).
"""

from __future__ import annotations

import itertools

import numpy as np
from numba import prange

from ... import _allocator, _threads
from ...shape import span
from ...tensor import Tensor
from ..jit import njit
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

@njit(cache=True, nogil=True)
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


@njit(cache=True, nogil=True)
def _rows_task(t, rpt, nb, blk, nrows, shape, src, soff, sstr, dst, doff, dstr):
    """Rows [c*rpt, (c+1)*rpt) of the innermost dim, columns [b*blk, (b+1)*blk), for task
    t = c*nb + b: the first row's position by division, the next ones by an odometer."""
    nd = shape.size - 1
    t = np.int64(t)  # prange indices may be unsigned
    r0 = (t // nb) * rpt
    r1 = min(nrows, r0 + rpt)
    lo = (t % nb) * blk
    n = min(shape[nd], lo + blk) - lo
    idx = np.empty(max(nd, 1), np.int64)
    row = r0
    ps = soff
    pd = doff
    for d in range(nd - 1, -1, -1):
        q = row % shape[d]
        row //= shape[d]
        idx[d] = q
        ps += q * sstr[d]
        pd += q * dstr[d]
    a = sstr[nd]
    b = dstr[nd]
    ps += lo * a
    pd += lo * b
    for _ in range(r0, r1):
        row_copy(dst, pd, b, src, ps, a, n)
        d = nd - 1
        while d >= 0:
            idx[d] += 1
            ps += sstr[d]
            pd += dstr[d]
            if idx[d] < shape[d]:
                break
            ps -= shape[d] * sstr[d]
            pd -= shape[d] * dstr[d]
            idx[d] = 0
            d -= 1


@njit(cache=True, nogil=True)
def _rows(ntasks, rpt, nb, blk, nrows, shape, src, soff, sstr, dst, doff, dstr):
    for t in range(ntasks):
        _rows_task(t, rpt, nb, blk, nrows, shape, src, soff, sstr, dst, doff, dstr)


@njit(cache=True, nogil=True, parallel=True)
def _rows_par(ntasks, rpt, nb, blk, nrows, shape, src, soff, sstr, dst, doff, dstr):
    for t in prange(ntasks):
        _rows_task(t, rpt, nb, blk, nrows, shape, src, soff, sstr, dst, doff, dstr)


def row_tasks(nrows: int, n: int, parallel: bool) -> tuple:
    """(ntasks, rows per task, blocks per row, block length) of ``_rows``: one task when
    serial; else tasks of about BLOCK elements (runs of short rows, or blocks of long ones)."""
    if not parallel:
        return 1, nrows, 1, n
    if n >= BLOCK:
        nb = -(-n // BLOCK)
        return nrows * nb, 1, nb, -(-n // nb)
    rpt = BLOCK // n
    return -(-nrows // rpt), rpt, 1, n


# -- blocked transpose ------------------------------------------------------------------------
# When the destination's inner dim is strided in the source (``x.t().contiguous()``), a row copy
# reads one element per source line; at source strides of a multiple of 2 KiB those lines fall
# in a few cache sets and evict each other before their next elements are read (NumPy's copy of
# a (1024, 1024) float32 transpose: 5.1 ms; 2048: 30 ms). The tiled kernel copies blocks of
# TILE_I x TILE_J elements of the plane of the dst-inner dim ``di`` and the src-inner dim ``dj``:
# TILE_I-element runs of the destination from 8 source lines, which stay in L1 whatever their
# stride, TILE_J of them per line (1024: 1.8-2.1 ms; 2048: 10 ms). Blocks go down the
# destination (the dst-inner blocks innermost), so the next block reads the lines the last one
# left in cache. (Tried: 16 x 16, 32 x 32, 64 x 256 and copies through a block buffer.)

TILE_I = 8
TILE_J = 256


@njit(cache=True, nogil=True)
def _tile_task(t, nti, ntj, shape, src, soff, sstr, dst, doff, dstr, di, dj):
    t = np.int64(t)  # prange indices may be unsigned
    per = nti * ntj
    outer = t // per
    r = t % per
    j0 = (r // nti) * TILE_J
    i0 = (r % nti) * TILE_I
    ps = soff
    pd = doff
    for d in range(shape.size - 1, -1, -1):
        if d != di and d != dj:
            q = outer % shape[d]
            outer //= shape[d]
            ps += q * sstr[d]
            pd += q * dstr[d]
    n = min(shape[di], i0 + TILE_I) - i0
    ai = sstr[di]
    bi = dstr[di]
    ps += i0 * ai
    pd += i0 * bi
    aj = sstr[dj]
    bj = dstr[dj]
    if bi == 1 and n == TILE_I:  # a full tile of a contiguous destination: a fixed-length
        # inner loop, unrolled into 8 loads and one vector store (1024^2: 1.8 -> 1.0 ms)
        for j in range(j0, min(shape[dj], j0 + TILE_J)):
            s = ps + j * aj
            o = pd + j * bj
            for i in range(TILE_I):
                dst[o + i] = src[s + i * ai]
    elif bi == 1:  # the last, partial tile
        for j in range(j0, min(shape[dj], j0 + TILE_J)):
            s = ps + j * aj
            o = pd + j * bj
            for i in range(n):
                dst[o + i] = src[s + i * ai]
    else:
        for j in range(j0, min(shape[dj], j0 + TILE_J)):
            s = ps + j * aj
            o = pd + j * bj
            for i in range(n):
                dst[o + i * bi] = src[s + i * ai]


@njit(cache=True, nogil=True)
def _tiled(ntasks, nti, ntj, shape, src, soff, sstr, dst, doff, dstr, di, dj):
    for t in range(ntasks):
        _tile_task(t, nti, ntj, shape, src, soff, sstr, dst, doff, dstr, di, dj)


@njit(cache=True, nogil=True, parallel=True)
def _tiled_par(ntasks, nti, ntj, shape, src, soff, sstr, dst, doff, dstr, di, dj):
    for t in prange(ntasks):
        _tile_task(t, nti, ntj, shape, src, soff, sstr, dst, doff, dstr, di, dj)


# -- copy plans -------------------------------------------------------------------------------
# A plan is built once per geometry (shape, source strides, destination strides) and memoised:
# the dims in the destination's memory order, coalesced, as the int64 arrays the kernels take,
# and whether the blocked kernel applies. A call then costs a dict lookup and the launch.

_PLANS: dict = {}
# The source stride (elements) along the destination's inner dim from which a row copy reads
# a cache line per element (or so): the blocked kernel takes over.
_TILE_MIN_STRIDE = 16


class CopyPlan:
    __slots__ = ("di", "dj", "dstr", "inner_stride", "n", "nrows", "nti", "ntj", "shape", "size", "sstr",
                 "tiled")

    def __init__(self, shape: tuple, sstr: tuple, dstr: tuple) -> None:
        from ...dispatch import coalesce

        size = 1
        for k in shape:
            size *= k
        self.size = size
        if not shape:
            shape, sstr, dstr = (1,), (0,), (0,)
        order = sorted(range(len(shape)), key=lambda d: -abs(dstr[d]))  # dst memory order
        cshape, (cs, cd) = coalesce(tuple(shape[d] for d in order),
                                    [[sstr[d] for d in order], [dstr[d] for d in order]])
        last = len(cshape) - 1
        dj = -1
        for d in range(last + 1):
            if cs[d] and (dj < 0 or abs(cs[d]) < abs(cs[dj])):
                dj = d
        self.tiled = (dj not in (-1, last) and abs(cs[last]) >= _TILE_MIN_STRIDE
                      and cshape[last] >= 4 and cshape[dj] >= 4)
        self.shape = np.asarray(cshape, np.int64)
        self.sstr = np.asarray(cs, np.int64)
        self.dstr = np.asarray(cd, np.int64)
        self.n = cshape[last]
        self.inner_stride = abs(cs[last])  # the source's, along the destination's inner dim
        self.nrows = size // self.n if self.n else 0
        self.di, self.dj = last, dj
        self.nti = -(-cshape[last] // TILE_I)
        self.ntj = -(-cshape[dj] // TILE_J)

    def run(self, src: np.ndarray, soff: int, dst: np.ndarray, doff: int) -> None:
        par = use_parallel(self.size)
        if self.tiled:
            nt = self.size // (self.n * self.shape[self.dj]) * self.nti * self.ntj
            (_tiled_par if par else _tiled)(nt, self.nti, self.ntj, self.shape, src, soff,
                                            self.sstr, dst, doff, self.dstr, self.di, self.dj)
            return
        nt, rpt, nb, blk = row_tasks(self.nrows, self.n, par)
        (_rows_par if par else _rows)(nt, rpt, nb, blk, self.nrows, self.shape, src, soff,
                                      self.sstr, dst, doff, self.dstr)


def plan(shape, sstr, dstr) -> CopyPlan:
    """The memoised copy plan of a geometry (element strides of any sign, 0 to broadcast)."""
    key = (tuple(shape), tuple(sstr), tuple(dstr))
    p = _PLANS.get(key)
    if p is None:
        if len(_PLANS) > 4096:
            _PLANS.clear()
        p = _PLANS[key] = CopyPlan(*key)
    return p


def copy(shape, src: np.ndarray, soff: int, sstr, dst: np.ndarray, doff: int, dstr) -> None:
    """dst[doff + i.dstr] = src[soff + i.sstr] over ``shape`` (raw 1-D buffers, any strides):
    runs along the destination's inner dim, or blocks where that dim is strided in the source."""
    p = plan(shape, sstr, dstr)
    if p.size:
        p.run(src, soff, dst, doff)


# Up to this many elements NumPy's copy (C, ~0.5 us fixed cost, a tight loop per inner run)
# moves the bits: a Numba launch costs microseconds of argument unboxing, and data this small
# sits in cache, where blocking buys nothing.
SMALL_COPY = 1 << 16
# Source strides (bytes, along the destination's inner dim) that are multiples of this alias
# in the cache (see the blocked transpose): NumPy's row-by-row copy thrashes there.
_ALIASING = 2048


def copy_array(dst: np.ndarray, src: np.ndarray) -> None:
    """dst[...] = src for same-dtype arrays of one shape (src may have 0 strides; the two must
    not overlap). NumPy's copy (C loops over the destination's rows) where it is fast: small
    arrays, and single-threaded copies that do not alias; the blocked kernel for transposes
    whose source stride aliases, and the Numba kernels on threads for large copies."""
    n = dst.size
    if n <= SMALL_COPY:
        if n:
            np.copyto(dst, src, casting="no")
        return
    isz = dst.itemsize
    p = plan(dst.shape, [s // isz for s in src.strides], [s // isz for s in dst.strides])
    if use_parallel(n) or p.tiled and p.inner_stride * isz % _ALIASING == 0:
        p.run(raw(span(src)), 0, raw(span(dst)), 0)
    else:
        np.copyto(dst, src, casting="no")


# -- tril / triu ----------------------------------------------------------------------------

@njit(cache=True, nogil=True)
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
    # the row splits at column i + k (tril keeps j <= i + k, triu j >= i + k): a copy and a
    # zero fill, each a vector loop, where a test per element kept the loop scalar
    cut = min(max(i + k + (0 if upper else 1), lo), hi)
    c0, c1, z0, z1 = (cut, hi, lo, cut) if upper else (lo, cut, cut, hi)
    if c1 > c0:
        row_copy(dst, pd + c0 * b, b, src, ps + c0 * a, a, c1 - c0)
    if b == 1:
        dst[pd + z0:pd + z1] = 0
    else:
        for j in range(z0, z1):
            dst[pd + j * b] = 0


@njit(cache=True, nogil=True)
def _tri(ntasks, nb, blk, shape, src, soff, sstr, dst, doff, dstr, k, upper):
    for t in range(ntasks):
        _tri_task(t, nb, blk, shape, src, soff, sstr, dst, doff, dstr, k, upper)


@njit(cache=True, nogil=True, parallel=True)
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


_EMPTY_1D = (0,)  # cat skips 1-D empty tensors whatever the other shapes (legacy)


def concat_into(out: np.ndarray, arrays: list, axis: int) -> None:
    """out = ``arrays`` joined along ``axis``, cast to out's dtype: one call over all inputs.

    NumPy's ``concatenate`` is the kernel: its C loop copies each input's block (memcpy for
    contiguous runs, a strided loop otherwise, the C cast where dtypes differ, which for
    cat's widening promotions is torch's). A Numba kernel cannot take a list of arrays for
    less than ~10 us per array (reflected lists) or ~1.5 us per array (reading each data
    pointer from Python), against nanoseconds for copying a small row; and for large inputs
    the copy is memory-bound, where memcpy is as fast as the parallel row kernel (measured:
    8 x (512, 1024) float32, 2.3 ms for concatenate and 4.1 ms for per-input kernels)."""
    np.concatenate(arrays, axis=axis, out=out, casting="unsafe")


def cat_cpu(plan, *tensors: Tensor) -> Tensor:
    res = empty_cpu(plan)
    out = res._a
    if out.size:
        if out.ndim == 1:  # 1-D empty inputs add nothing: nothing to skip
            arrays = [x._a for x in tensors]
        else:
            arrays = [a for a in [x._a for x in tensors] if a.shape != _EMPTY_1D]
        concat_into(out, arrays, plan.kw["dim"])
    return res


def stack_arrays(arrays: list, dim: int, d) -> Tensor:
    """A fresh row-major tensor of dtype ``d`` holding ``arrays`` (one shape) stacked along a
    new ``dim``: the kernel of ``stack``, and of ``default_collate`` for NumPy arrays.

    Stacking is concatenating along ``dim`` of the result with ``dim`` merged into the next
    one (the inputs are its blocks), so one ``concatenate`` fills it; 0-d inputs are read by
    ``np.array`` (one C call: concatenate takes no 0-d arrays)."""
    a0 = arrays[0]
    nd = a0.ndim
    if nd == 0:
        return Tensor._make(np.array(arrays, d.np), None, d)
    shape = a0.shape
    n = len(arrays)
    out = _allocator.empty(shape[:dim] + (n,) + shape[dim:], d.np)
    if out.size:
        if dim < nd:
            concat_into(out.reshape(shape[:dim] + (n * shape[dim],) + shape[dim + 1:]), arrays,
                        dim)
        else:  # a new last dim: each input as a (..., 1) block
            concat_into(out, [a[..., None] for a in arrays], dim)
    return Tensor._make(out, None, d)


def stack_cpu(plan, *tensors: Tensor) -> Tensor:
    return stack_arrays([x._a for x in tensors], plan.kw["dim"], plan.out.dtype)


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
