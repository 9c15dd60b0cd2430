"""Index kernels: gather, scatter (copy / add / multiply / amax / amin), index offsets for
advanced indexing, and nonzero.

One gather and one scatter kernel serve the whole family. Over an N-d iteration shape,
each position reads an index ``v`` (int64) and moves an element between a strided operand
and the position with ``v * ds`` added (``ds``: the element stride of the indexed dim):
``gather`` (torch.gather, index_select, take, advanced indexing over precomputed offsets)
reads ``x[pos + v*ds]``; ``scatter`` (scatter, index_add/copy/fill, index_put) writes there.
Indices are checked inside the kernels: the first bad one is stored in ``err`` and the
Python caller raises torch's error. Operands are 1-D buffers with offsets and element
strides (see ``movement.buffer``); pure moves see dtypes as raw unsigned integers.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ... import _settings
from ... import dispatch as _dispatch
from ... import dtypes as _dt
from ...shape import bcast_strides, elem_strides
from ...shape import broadcast_shapes as _broadcast_shapes
from ...tensor import Tensor
from ..jit import njit
from ..plan import Inplace as _Inplace
from ..plan import Out as _Out
from ..registry import REGISTRY as _OPS
from . import movement as _mv
from .fill import alloc as _alloc
from .movement import row_copy, tasks, use_parallel

_i64 = np.int64
# weight dtypes embedding copies rows of in one compiled pass (others: the generic gather)
_EMBED_FAST = {np.dtype(np.float32), np.dtype(np.float64)}


def _arr(x) -> np.ndarray:
    return np.asarray(x, _i64)


# -- gather ---------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _gather_task(t, nb, blk, shape, out, ooff, ostr, x, xoff, xstr, xds, idx, ioff, istr, size,
                 wrap, err):
    nd = shape.size - 1
    t = np.int64(t)  # prange indices may be unsigned
    row = t // nb
    lo = (t % nb) * blk
    hi = min(shape[nd], lo + blk)
    po = ooff
    px = xoff
    pi = ioff
    for d in range(nd - 1, -1, -1):
        q = row % shape[d]
        row //= shape[d]
        po += q * ostr[d]
        px += q * xstr[d]
        pi += q * istr[d]
    a = ostr[nd]
    b = xstr[nd]
    c = istr[nd]
    if c == 0:  # one index for the whole row (index_select, advanced indexing): a row copy
        v = idx[pi]
        if v < 0 and wrap:
            v += size
        if v < 0 or v >= size:
            err[0] = 1
            err[1] = idx[pi]
            return
        row_copy(out, po + lo * a, a, x, px + lo * b + v * xds, b, hi - lo)
        return
    if a == 1 and c == 1:
        # row-major output and index (the commonest call): the same loop with unit strides
        # LLVM can see, 2x faster than with them read at run time
        o = out[po + lo:po + hi]
        ii = idx[pi + lo:pi + hi]
        xr = x[px + lo * b:]
        for j in range(hi - lo):
            v, bad = _check(ii[j], size, wrap)
            if bad:
                err[0] = 1
                err[1] = ii[j]
                return
            o[j] = xr[j * b + v * xds]
        return
    for j in range(lo, hi):
        v = idx[pi + j * c]
        if v < 0 and wrap:
            v += size
        if v < 0 or v >= size:
            err[0] = 1
            err[1] = idx[pi + j * c]
            return
        out[po + j * a] = x[px + j * b + v * xds]


@njit(cache=True, nogil=True)
def _gather(ntasks, nb, blk, shape, out, ooff, ostr, x, xoff, xstr, xds, idx, ioff, istr, size,
            wrap, err):
    for t in range(ntasks):
        _gather_task(t, nb, blk, shape, out, ooff, ostr, x, xoff, xstr, xds, idx, ioff, istr,
                     size, wrap, err)
        if err[0]:
            return


@njit(cache=True, nogil=True, parallel=True)
def _gather_par(ntasks, nb, blk, shape, out, ooff, ostr, x, xoff, xstr, xds, idx, ioff, istr,
                size, wrap, err):
    for t in prange(ntasks):
        _gather_task(t, nb, blk, shape, out, ooff, ostr, x, xoff, xstr, xds, idx, ioff, istr,
                     size, wrap, err)


def gather(shape, out, ooff, ostr, x, xoff, xstr, xds, idx, ioff, istr, size, wrap) -> int | None:
    """out[p] = x[p.xstr + idx[p] * xds] over ``shape``; returns the first bad index or None."""
    err = np.zeros(2, _i64)
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return None
    if not shape:
        shape, ostr, xstr, istr = (1,), (0,), (0,), (0,)
    par = use_parallel(n)
    nt, nb, blk = tasks(shape, par)
    (_gather_par if par else _gather)(nt, nb, blk, _arr(shape), out, ooff, _arr(ostr), x, xoff,
                                      _arr(xstr), xds, idx, ioff, _arr(istr), size, wrap, err)
    return int(err[1]) if err[0] else None


# -- bincount -------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def value_range(x):
    """(min, max) of a non-empty 1-D array."""
    lo = hi = x[0]
    for i in range(x.size):
        v = x[i]
        lo = min(lo, v)
        hi = max(hi, v)
    return lo, hi


@njit(cache=True, nogil=True)
def count_into(x, out):
    """out[v] += 1 for each value v of x (all in range)."""
    for i in range(x.size):
        out[x[i]] += 1


@njit(cache=True, nogil=True)
def count_weighted_into(x, w, out):
    """out[x[i]] += w[i] in order (index_add's sums)."""
    for i in range(x.size):
        out[x[i]] += w[i]


# -- scatter --------------------------------------------------------------------------------

COPY, ADD, MUL, AMAX, AMIN = 0, 1, 2, 3, 4


@njit(cache=True, nogil=True)
def _scatter_row(r, shape, doff, dstr, ioff, istr, soff, sstr):
    r = np.int64(r)  # a prange index may arrive unsigned; keep offset arithmetic in int64
    nd = shape.size - 1
    pd = doff
    pi = ioff
    ps = soff
    for d in range(nd - 1, -1, -1):
        q = r % shape[d]
        r //= shape[d]
        pd += q * dstr[d]
        pi += q * istr[d]
        ps += q * sstr[d]
    return pd, pi, ps


@njit(cache=True, nogil=True)
def _check(v, size, wrap):
    if v < 0 and wrap:
        v += size
    return v, v < 0 or v >= size


@njit(cache=True, nogil=True)
def _scatter_copy_row(r, shape, dst, doff, dstr, dds, idx, ioff, istr, src, soff, sstr, size,
                      wrap, err):
    nd = shape.size - 1
    a, b, c = dstr[nd], istr[nd], sstr[nd]
    pd, pi, ps = _scatter_row(r, shape, doff, dstr, ioff, istr, soff, sstr)
    if b == 0:  # one index for the row
        v, bad = _check(idx[pi], size, wrap)
        if bad:
            err[0] = 1
            err[1] = idx[pi]
            return
        row_copy(dst, pd + v * dds, a, src, ps, c, shape[nd])
        return
    for j in range(shape[nd]):
        v, bad = _check(idx[pi + j * b], size, wrap)
        if bad:
            err[0] = 1
            err[1] = idx[pi + j * b]
            return
        dst[pd + j * a + v * dds] = src[ps + j * c]


@njit(cache=True, nogil=True)
def _scatter_copy(rows, shape, dst, doff, dstr, dds, idx, ioff, istr, src, soff, sstr, size,
                  wrap, err):
    for r in range(rows):
        _scatter_copy_row(r, shape, dst, doff, dstr, dds, idx, ioff, istr, src, soff, sstr,
                          size, wrap, err)
        if err[0]:
            return


@njit(cache=True, nogil=True, parallel=True)
def _scatter_copy_par(rows, shape, dst, doff, dstr, dds, idx, ioff, istr, src, soff, sstr, size,
                      wrap, err):
    # Rows run concurrently: where two positions write one element, either value may win
    # (torch leaves duplicate indices of non-accumulating scatters undefined too).
    for r in prange(rows):
        _scatter_copy_row(r, shape, dst, doff, dstr, dds, idx, ioff, istr, src, soff, sstr,
                          size, wrap, err)


@njit(cache=True, nogil=True)
def _reduce_into(dst, p, s, mode):
    if mode == 1:
        dst[p] += s
    elif mode == 2:
        dst[p] *= s
    elif mode == 3:
        if s > dst[p] or s != s:  # noqa: PLR0124  (nan wins)
            dst[p] = s
    elif s < dst[p] or s != s:  # noqa: PLR0124
        dst[p] = s


@njit(cache=True, nogil=True)
def _scatter_reduce(rows, shape, dst, doff, dstr, dds, idx, ioff, istr, src, soff, sstr, size,
                    wrap, mode, err):
    # Serial: positions that share an index accumulate into one element.
    nd = shape.size - 1
    n = shape[nd]
    a, b, c = dstr[nd], istr[nd], sstr[nd]
    for r in range(rows):
        pd, pi, ps = _scatter_row(r, shape, doff, dstr, ioff, istr, soff, sstr)
        if b == 0 and mode == 1 and a == 1 and c == 1:  # index_add / index_put rows: vectorised
            v, bad = _check(idx[pi], size, wrap)
            if bad:
                err[0] = 1
                err[1] = idx[pi]
                return
            d = dst[pd + v * dds:pd + v * dds + n]
            s = src[ps:ps + n]
            for j in range(n):
                d[j] += s[j]
            continue
        if mode == 1 and b == 1 and c == 1:
            # scatter_add with row-major index and source rows: the same sums in the same
            # order, the mode and the unit strides known to LLVM
            ii = idx[pi:pi + n]
            s = src[ps:ps + n]
            d = dst[pd:]
            for j in range(n):
                v, bad = _check(ii[j], size, wrap)
                if bad:
                    err[0] = 1
                    err[1] = ii[j]
                    return
                d[j * a + v * dds] += s[j]
            continue
        for j in range(n):
            v, bad = _check(idx[pi + j * b], size, wrap)
            if bad:
                err[0] = 1
                err[1] = idx[pi + j * b]
                return
            _reduce_into(dst, pd + j * a + v * dds, src[ps + j * c], mode)


def scatter(shape, dst, doff, dstr, dds, idx, ioff, istr, src, soff, sstr, size, wrap,
            mode: int) -> int | None:
    """dst[p.dstr + idx[p] * dds] (op)= src[p.sstr] over ``shape``; first bad index or None.
    ``mode`` COPY moves raw bits; the reducing modes need real-dtype buffers (not float16)."""
    err = np.zeros(2, _i64)
    for s in shape:
        if s == 0:
            return None
    if not shape:
        shape, dstr, istr, sstr = (1,), (0,), (0,), (0,)
    rows = 1
    for s in shape[:-1]:
        rows *= s
    args = (rows, _arr(shape), dst, doff, _arr(dstr), dds, idx, ioff, _arr(istr), src, soff,
            _arr(sstr), size, wrap)
    if mode != COPY:
        _scatter_reduce(*args, mode, err)
    elif use_parallel(rows * shape[-1]) and rows > 1:
        _scatter_copy_par(*args, err)
    else:
        _scatter_copy(*args, err)
    return int(err[1]) if err[0] else None


# -- advanced-index offsets -----------------------------------------------------------------

@njit(cache=True, nogil=True)
def _offsets_task(t, nb, blk, shape, idx, ioff, istr, size, stride, offs, err):
    nd = shape.size - 1
    t = np.int64(t)  # prange indices may be unsigned
    row = t // nb
    lin = row * shape[nd]
    lo = (t % nb) * blk
    hi = min(shape[nd], lo + blk)
    pi = ioff
    for d in range(nd - 1, -1, -1):
        q = row % shape[d]
        row //= shape[d]
        pi += q * istr[d]
    c = istr[nd]
    for j in range(lo, hi):
        v = idx[pi + j * c]
        if v < 0:
            v += size
        if v < 0 or v >= size:
            err[0] = 1
            err[1] = idx[pi + j * c]
            return
        offs[lin + j] += v * stride


@njit(cache=True, nogil=True)
def _offsets(ntasks, nb, blk, shape, idx, ioff, istr, size, stride, offs, err):
    for t in range(ntasks):
        _offsets_task(t, nb, blk, shape, idx, ioff, istr, size, stride, offs, err)
        if err[0]:
            return


@njit(cache=True, nogil=True, parallel=True)
def _offsets_par(ntasks, nb, blk, shape, idx, ioff, istr, size, stride, offs, err):
    for t in prange(ntasks):
        _offsets_task(t, nb, blk, shape, idx, ioff, istr, size, stride, offs, err)


def add_offsets(offs: np.ndarray, shape, idx, ioff, istr, size: int, stride: int) -> int | None:
    """offs (C-contiguous over ``shape``) += wrap(idx) * stride; first bad index or None."""
    err = np.zeros(2, _i64)
    if offs.size == 0:
        return None
    if not shape:
        shape, istr = (1,), (0,)
    par = use_parallel(offs.size)
    nt, nb, blk = tasks(shape, par)
    (_offsets_par if par else _offsets)(nt, nb, blk, _arr(shape), idx, ioff, _arr(istr), size,
                                        stride, offs.reshape(-1), err)
    return int(err[1]) if err[0] else None


# -- nonzero --------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _nz_row(t, nb, blk, shape, xoff, xstr, coords):
    nd = shape.size - 1
    t = np.int64(t)  # prange indices may be unsigned
    row = t // nb
    px = xoff
    for d in range(nd - 1, -1, -1):
        q = row % shape[d]
        row //= shape[d]
        coords[d] = q
        px += q * xstr[d]
    lo = (t % nb) * blk
    return px, lo, min(shape[nd], lo + blk)


@njit(cache=True, nogil=True)
def _nz_count(t, nb, blk, shape, x, xoff, xstr, coords):
    px, lo, hi = _nz_row(t, nb, blk, shape, xoff, xstr, coords)
    c = xstr[shape.size - 1]
    k = 0
    if c == 1:  # (a sum of flags: vectorised)
        row = x[px + lo:px + hi]
        for j in range(hi - lo):
            k += row[j] != 0
        return k
    for j in range(lo, hi):
        k += x[px + j * c] != 0
    return k


@njit(cache=True, nogil=True)
def _nz_fill(t, nb, blk, shape, x, xoff, xstr, out, total, k, count, coords):
    # the set elements' last coordinates first, then the task's row coordinates (the same for
    # all its entries) as slice fills: an inner loop over the dims per set element, with the
    # data's branch around it, cost 10x
    if count == 0:
        return
    nd = shape.size - 1
    px, lo, hi = _nz_row(t, nb, blk, shape, xoff, xstr, coords)
    c = xstr[nd]
    k0 = k
    last = out[nd * total:(nd + 1) * total]
    if c == 1:
        row = x[px + lo:px + hi]
        for j in range(hi - lo):
            if row[j] != 0:
                last[k] = lo + j
                k += 1
    else:
        for j in range(lo, hi):
            if x[px + j * c] != 0:
                last[k] = j
                k += 1
    for d in range(nd):
        q = coords[d]  # (a scalar fill)
        out[d * total + k0:d * total + k] = q


@njit(cache=True, nogil=True)
def _prefix(counts):
    starts = np.empty(counts.size, np.int64)
    acc = 0
    for t in range(counts.size):
        starts[t] = acc
        acc += counts[t]
    return starts, acc


@njit(cache=True, nogil=True)
def _nonzero(ntasks, nb, blk, shape, x, xoff, xstr):
    coords = np.empty(shape.size, np.int64)  # (one scratch: a task's row coordinates)
    counts = np.empty(ntasks, np.int64)
    for t in range(ntasks):
        counts[t] = _nz_count(t, nb, blk, shape, x, xoff, xstr, coords)
    starts, total = _prefix(counts)
    out = np.empty(shape.size * total, np.int64)
    for t in range(ntasks):
        _nz_fill(t, nb, blk, shape, x, xoff, xstr, out, total, starts[t], counts[t], coords)
    return out, total


@njit(cache=True, nogil=True, parallel=True)
def _nonzero_par(ntasks, nb, blk, shape, x, xoff, xstr):
    counts = np.empty(ntasks, np.int64)
    for t in prange(ntasks):
        counts[t] = _nz_count(t, nb, blk, shape, x, xoff, xstr, np.empty(shape.size, np.int64))
    starts, total = _prefix(counts)
    out = np.empty(shape.size * total, np.int64)
    for t in prange(ntasks):
        _nz_fill(t, nb, blk, shape, x, xoff, xstr, out, total, starts[t], counts[t],
                 np.empty(shape.size, np.int64))
    return out, total


def nonzero(shape, x: np.ndarray, xstr) -> np.ndarray:
    """Coordinates of the non-zero elements of a raw uint8 (bool) buffer, as an
    (ndim, count) int64 array in C order of the positions (rank >= 1)."""
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return np.empty((len(shape), 0), _i64)
    par = use_parallel(n)
    nt, nb, blk = tasks(shape, par)
    flat, total = (_nonzero_par if par else _nonzero)(nt, nb, blk, _arr(shape), x, 0, _arr(xstr))
    return flat.reshape(len(shape), total)


# == op entries: ``kernels[\"cpu\"](plan, *tensors)`` of the index OpDefs (``defs/indexing``) ==
# They read the plan's geometry (the meta rule checked the arguments) and run the kernels
# above; index bounds are data, so they are checked here.

_NO_CHECK = 1 << 62  # size passed to kernels when indices were checked already


def _ibuf(t: Tensor) -> tuple:
    """(int64 1-D buffer, element strides) of an index tensor."""
    a = t._a
    if a.dtype != np.int64:
        a = a.astype(np.int64)
    return _mv.buffer(a, as_raw=False)


def _contig(shape) -> list:
    st, acc = [], 1
    for n in reversed(shape):
        st.append(acc)
        acc *= max(n, 1)
    return st[::-1]


def _fresh(t: Tensor, strides=None) -> Tensor:
    """A copy of ``t`` with its own storage: C-contiguous, or at element ``strides``."""

    out = _alloc(_Out(t._a.shape, t.dtype, strides))
    if out._a.size:
        _mv.copy_array(_mv.raw(out._a), _mv.raw(t._a))
    return out


def _shares(dst: Tensor, src: Tensor, flagged: bool) -> Tensor:
    """``src``, or a copy of it when it may share memory with ``dst`` (the meta rule raised
    on partial dense overlaps already)."""
    if flagged or (src._st is not dst._st and np.may_share_memory(src._st, dst._st)):
        return _fresh(src)
    return src


def _f32(t: Tensor) -> Tensor:
    return Tensor._make(t._a.astype(np.float32))


def _arith(t: Tensor, fn, *others) -> None:
    """Run in-place arithmetic ``fn(t, *others)``; 16-bit floats (no Numba type) through
    float32."""
    if t.dtype not in _dt.HALF:
        fn(t, *others)
        return
    tmp = _f32(t)
    fn(tmp, *[_f32(o) if isinstance(o, Tensor) and o.dtype in _dt.HALF else o
              for o in others])
    with np.errstate(over="ignore"):
        t._a[...] = tmp._a


def _mode(d: _dt.dtype, mode: int) -> int:
    """Reducing scatters on bool are logical: add -> or (max), multiply -> and (min)."""
    if d is _dt.bool:
        return {ADD: AMAX, MUL: AMIN}.get(mode, mode)
    return mode


def _dim_strides(t: Tensor, d: int) -> tuple:
    """Strides of ``t`` with dim ``d`` zeroed, and the stride of ``d`` (0-d: a 1-elem dim)."""
    isz = t._a.itemsize
    st = [s // isz for s in t._a.strides] or [0]
    ds = st[d]
    st[d] = 0
    return st, ds


def _scalar_buf(value, d: _dt.dtype, as_raw: bool) -> np.ndarray:
    if isinstance(value, Tensor):
        value = value.item()
    a = np.array(value).astype(d.np).reshape(1)
    return _mv.raw(a) if as_raw else a


def _bounds(bad, d, n):
    return RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")


def _scatter_run(t: Tensor, d: int, index: Tensor, src, mode: int, wrap: bool = False,
                 shape=None, istr=None, err=None) -> None:
    """The scatter kernel over ``shape`` (default: the index's shape) into ``t`` along ``d``."""
    mode = _mode(t.dtype, mode)
    shape = index._a.shape if shape is None else shape
    dpos, dds = _dim_strides(t, d)
    n = t._a.shape[d] if t._a.ndim else 1
    ib, ist = _ibuf(index)
    if istr is not None:
        ist = istr
    raw = mode == COPY or t.dtype is _dt.bool
    if isinstance(src, Tensor) and src._a.ndim == 0:
        src = src.item()
    if isinstance(src, Tensor):
        sb, sst = _mv.buffer(src._a, as_raw=raw)
    else:
        sb, sst = _scalar_buf(src, t.dtype, raw), [0] * len(shape)
    db, _ = _mv.buffer(t._a, as_raw=raw)
    nd = len(shape)
    if nd:
        dpos, ist, sst = dpos[:nd], list(ist)[:nd], list(sst)[:nd]
    else:
        shape, dpos, ist, sst = (1,), [0], [0], [0]
    bad = scatter(shape, db, 0, dpos, dds, ib, 0, ist, sb, 0, sst, n, wrap, mode)
    if bad is not None:
        raise (err or _bounds)(bad, d, n)


def _written(plan, x: Tensor) -> Tensor:
    """The tensor a family member writes: ``x`` itself (in place) or a fresh copy."""

    if plan.out.__class__ is _Inplace:
        return x
    return _fresh(x, plan.out.strides)


# -- index / index_put ----------------------------------------------------------------------

def _adv_offsets(x: Tensor, g: dict, tensors: tuple) -> np.ndarray:
    """The int64 table (shape ``bshape``) of storage offsets an advanced index reads, from
    the view's geometry and each index tensor (bounds checked)."""
    vshape, vst, voff = g["v"]
    bshape = g["bshape"]
    offs = np.full(bshape, voff, np.int64)
    for k, (d, ti) in enumerate(g["adv"]):
        t = tensors[ti]
        buf, ist = _ibuf(t)
        bad = add_offsets(offs, bshape, buf, 0, bcast_strides(t._a.shape, ist, bshape), vshape[d],
                          vst[d])
        if bad is not None:
            if vshape[d] == 0:
                raise IndexError("index is out of bounds for dimension with size 0")
            raise IndexError(f"index {bad} is out of bounds for dimension {k} with size "
                             f"{vshape[d]}")
    return offs


def _iter_layout(g: dict, vst, out_strides) -> tuple:
    """(iteration shape B + rest, out strides, view strides, offset-table strides)."""
    bshape, pos, rest = g["bshape"], g["pos"], g["rest"]
    nb = len(bshape)
    o = list(out_strides)
    it_out = o[pos:pos + nb] + o[:pos] + o[pos + nb:]
    vshape = g["v"][0]
    it_shape = list(bshape) + [vshape[d] for d in rest]
    it_v = [0] * nb + [vst[d] for d in rest]
    it_i = _contig(bshape) + [0] * len(rest)
    return it_shape, it_out, it_v, it_i


def index_cpu(plan, x: Tensor, *tensors) -> Tensor:
    g = plan.kw["geom"]
    offs = _adv_offsets(x, g, tensors)
    out = _alloc(plan.out)
    if out._a.size:
        it_shape, it_out, it_v, it_i = _iter_layout(g, g["v"][1], elem_strides(out._a))
        ob, _ = _mv.buffer(out._a)
        gather(it_shape, ob, 0, it_out, _mv.raw(x._st), 0, it_v, 1, offs.reshape(-1), 0, it_i,
               _NO_CHECK, False)
    return out


def _view_array(x: Tensor, geom: tuple) -> np.ndarray:
    """The array of ``x``'s storage at element geometry (shape, strides, offset)."""
    shape, st, off = geom
    s = x._st
    isz = s.itemsize
    bst = tuple([v * isz for v in st])
    if s.flags.c_contiguous:
        try:
            return np.ndarray(tuple(shape), s.dtype, s, off * isz, bst)
        except (ValueError, TypeError):
            pass
    return np.lib.stride_tricks.as_strided(s[off:], tuple(shape), bst)


def _bcast_value(value: Tensor, shape: tuple) -> np.ndarray:
    """``value`` as a 0-stride broadcast array of ``shape`` (leading size-1 dims dropped;
    the meta rule checked that it broadcasts)."""
    vs = value._a.shape
    i = 0
    while i < len(vs) and vs[i] == 1:
        i += 1
    a = value._a.reshape(vs[i:]) if i else value._a
    st = bcast_strides(a.shape, elem_strides(a), tuple(shape))
    return np.lib.stride_tricks.as_strided(a, tuple(shape), [s * a.itemsize for s in st])


def index_put_cpu(plan, x: Tensor, values, *tensors) -> Tensor:
    kw = plan.kw
    p = kw["_put"]
    g = p["adv_geom"]
    accumulate = kw.get("accumulate", False)
    if g is None:  # a view of x: copy, fill or add into it
        v = _view_array(x, p["v"])
        if values is None:

            if v.size:
                _dispatch.run_pointwise(_OPS["copy"], (p["value"],), v, x.dtype)
            return x
        values = _shares(x, values, p["copy_src"])
        if accumulate:

            _dispatch.run_pointwise(_OPS["add"], (Tensor._make(v, x._st, x.dtype), values), v,
                                    x.dtype)
        elif v.size:
            _mv.copy_array(_mv.raw(v), _mv.raw(_bcast_value(values, v.shape)))
        return x
    g = dict(g, v=p["v"], adv=p["adv"])
    offs = _adv_offsets(x, g, tensors)
    if values is None:

        one = np.empty((), x.dtype.np)
        _dispatch.run_pointwise(_OPS["copy"], (p["value"],), one, x.dtype)
        values = Tensor._make(one, None, x.dtype)
    else:
        values = _shares(x, values, p["copy_src"])
    src = _bcast_value(values, g["out_shape"])
    if src.size == 0:
        return x

    def run(t: Tensor, s: np.ndarray) -> None:
        mode = _mode(t.dtype, ADD) if accumulate else COPY
        raw = mode != ADD
        sb, sst = _mv.buffer(s, as_raw=raw)
        db = _mv.raw(t._st) if raw else t._st
        it_shape, it_src, it_v, it_i = _iter_layout(g, g["v"][1], sst)
        scatter(it_shape, db, 0, it_v, 1, offs.reshape(-1), 0, it_i, sb, 0, it_src, _NO_CHECK,
                False, mode)

    if accumulate and x.dtype in _dt.HALF:  # through a float32 copy of the storage
        tmp = x._st.astype(np.float32)
        run(Tensor._make(tmp, tmp, _dt.float32), src.astype(np.float32))
        with np.errstate(over="ignore"):
            x._st[...] = tmp
    else:
        run(x, src)
    return x


# -- gather / scatter family ----------------------------------------------------------------

def gather_cpu(plan, x: Tensor, index: Tensor) -> Tensor:
    d, wrap = plan.kw["dim"], plan.kw.get("wrap", False)
    res = _alloc(plan.out)
    if res._a.size:
        nd = x._a.ndim
        ishape = index._a.shape
        xpos, xds = _dim_strides(x, d)
        n = x._a.shape[d] if nd else 1
        xb, _ = _mv.buffer(x._a)
        ob, ost = _mv.buffer(res._a)
        ib, ist = _ibuf(index)
        if index._a.ndim != nd:
            xpos = xpos[:index._a.ndim]
        bad = gather(ishape, ob, 0, ost, xb, 0, xpos, xds, ib, 0, ist, n, wrap)
        if bad is not None:
            raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    return res


_SCATTER_MODES = {None: COPY, "add": ADD, "multiply": MUL}


def scatter_cpu(plan, x: Tensor, index: Tensor, src=None) -> Tensor:
    kw = plan.kw
    t = _written(plan, x)
    d, mode = kw["dim"], _SCATTER_MODES[kw["reduce"]]
    s = src if src is not None else kw["value"]
    if mode == COPY:
        _scatter_run(t, d, index, s, mode)
    else:
        _arith(t, lambda u, v: _scatter_run(u, d, index, v, mode), s)
    return t


def scatter_add_cpu(plan, x: Tensor, index: Tensor, src: Tensor) -> Tensor:
    t = _written(plan, x)
    d = plan.kw["dim"]
    _arith(t, lambda u, v: _scatter_run(u, d, index, v, ADD), src)
    return t


_REDUCE_MODES = {"sum": ADD, "prod": MUL, "mean": ADD, "amax": AMAX, "amin": AMIN}


def _identity(reduce: str, d: _dt.dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if d.is_floating_point:
        return float("-inf") if reduce == "amax" else float("inf")
    if d is _dt.bool:
        return reduce == "amin"
    info = np.iinfo(d.np)
    return int(info.min) if reduce == "amax" else int(info.max)


def scatter_reduce_cpu(plan, x: Tensor, index: Tensor, src: Tensor) -> Tensor:
    kw = plan.kw
    t = _written(plan, x)
    d, reduce, include_self = kw["dim"], kw["reduce"], kw["include_self"]
    if not include_self:
        _scatter_run(t, d, index, _identity(reduce, t.dtype), COPY)
    _arith(t, lambda u, v: _scatter_run(u, d, index, v, _REDUCE_MODES[reduce]), src)
    if reduce == "mean":
        count = np.full(t._a.shape, 1 if include_self else 0, t.dtype.np)
        ct = Tensor._make(count, None, t.dtype)
        _arith(ct, lambda u: _scatter_run(u, d, index, 1, ADD))
        count[count == 0] = 1
        if t.dtype.category < 2:
            np.floor_divide(t._a, count, out=t._a)
        else:
            np.divide(t._a, count, out=t._a)
    return t


def index_select_cpu(plan, x: Tensor, index: Tensor) -> Tensor:
    d = plan.kw["dim"]
    res = _alloc(plan.out)
    if res._a.size:
        shape = res._a.shape
        nd = x._a.ndim
        xpos, xds = _dim_strides(x, d)
        n = x._a.shape[d] if nd else 1
        ib, ist = _ibuf(index)
        istr = [0] * max(len(shape), 1)
        istr[d] = ist[0] if ist else 0
        xb, _ = _mv.buffer(x._a)
        ob, ost = _mv.buffer(res._a)
        if not ost:
            ost = [0]
        bad = gather(tuple(shape) or (1,), ob, 0, ost, xb, 0, xpos, xds, ib, 0, istr, n, False)
        if bad is not None:
            raise IndexError("index out of range in self")
    return res


def _index_strides(index: Tensor, d: int, nd: int) -> list:
    ist = _ibuf(index)[1]
    s = [0] * max(nd, 1)
    s[d] = ist[0] if ist else 0
    return s


def index_add_cpu(plan, x: Tensor, index: Tensor, source: Tensor) -> Tensor:
    kw = plan.kw
    t = _written(plan, x)
    d, alpha = kw["dim"], kw["alpha"]
    source = _shares(t, source, kw.get("_copy_src", False))
    if alpha != 1:

        scaled = np.empty(source._a.shape, source.dtype.np)
        _dispatch.run_pointwise(_OPS["mul"], (source, alpha), scaled, source.dtype)
        source = Tensor._make(scaled, None, source.dtype)
    istr = _index_strides(index, d, t._a.ndim)
    shape = source._a.shape or (1,)
    _arith(t, lambda u, v: _scatter_run(u, d, index, v, ADD, shape=shape, istr=istr), source)
    return t


def index_copy_cpu(plan, x: Tensor, index: Tensor, source: Tensor) -> Tensor:
    kw = plan.kw
    t = _written(plan, x)
    d = kw["dim"]
    source = _shares(t, source, kw.get("_copy_src", False))
    istr = _index_strides(index, d, t._a.ndim)

    def err(bad, d, n):
        return IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {d} with "
                          f"size {n}")

    _scatter_run(t, d, index, source, COPY, shape=source._a.shape or (1,), istr=istr, err=err)
    return t


def index_fill_cpu(plan, x: Tensor, index: Tensor, value_t=None) -> Tensor:
    kw = plan.kw
    t = _written(plan, x)
    d = kw["dim"]
    shape = list(t._a.shape) or [1]
    shape[d] = index._a.size
    istr = _index_strides(index, d, t._a.ndim)

    def err(bad, d, n):
        return IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")

    value = kw["value"] if value_t is None else value_t
    _scatter_run(t, d, index, value, COPY, wrap=True, shape=tuple(shape), istr=istr, err=err)
    return t


# -- masked ops -----------------------------------------------------------------------------

def masked_fill_cpu(plan, x: Tensor, mask: Tensor, value_t=None) -> Tensor:

    value = plan.kw["value"]
    if isinstance(value, Tensor):
        value = value.item()
    out = x if plan.out.__class__ is _Inplace else _alloc(plan.out)
    if not _masked_rows(x._a, mask._a, value, out._a):
        _dispatch.run_pointwise(_OPS["where"], (value, x, mask), out._a, x.dtype)
    return out


_ROW_FILL_DTYPES = {np.dtype(np.float32), np.dtype(np.float64)}  # masked_rows' builds


@njit(cache=True, nogil=True)
def masked_rows(x, m, value, out):
    """out[i, j] = value where m[j], else x[i, j]."""
    v = out.dtype.type(value)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[i, j] = v if m[j] else x[i, j]


def _masked_rows(a: np.ndarray, m: np.ndarray, value, out: np.ndarray) -> bool:
    """masked_fill's common case in one kernel, where it applies (else False): a row-major
    float ``a`` of the result's shape, and a row-major bool mask over its trailing dims
    (attention's causal (1, 1, T, T) over (B, H, T, T), or one of a's shape), below the
    parallel grain. The general pointwise ``where`` over the broadcast cost ~8 us more."""
    if a.dtype not in _ROW_FILL_DTYPES or m.dtype != np.bool_ or type(value) not in (float, int) \
            or a.shape != out.shape or not (a.flags.c_contiguous and m.flags.c_contiguous) \
            or use_parallel(a.size):
        return False
    ms = m.shape
    k = 0
    while k < len(ms) and ms[k] == 1:
        k += 1
    ms = ms[k:]
    if len(ms) > a.ndim or a.shape[a.ndim - len(ms):] != ms or not m.size or not a.size:
        return False
    masked_rows(a.reshape(-1, m.size), m.reshape(-1), float(value), out.reshape(-1, m.size))
    return True


def _mask_offsets(x: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Element offsets (into the 1-D buffer of ``x``, C order) where ``mask`` is set; both of
    one shape (rank >= 1)."""
    mb, mst = _mv.buffer(mask)
    coords = nonzero(mask.shape, mb, mst)
    st = np.asarray(elem_strides(x), np.int64)
    return (coords * st[:, None]).sum(0) if coords.shape[0] else np.zeros(0, np.int64)


def _broadcast(a: np.ndarray, shape: tuple) -> np.ndarray:
    st = bcast_strides(a.shape, list(a.strides), tuple(shape))
    return np.lib.stride_tricks.as_strided(a, tuple(shape), st)


def masked_select_cpu(plan, x: Tensor, mask: Tensor) -> Tensor:

    shape = tuple(_broadcast_shapes(x._a.shape, mask._a.shape)) or (1,)
    xa, ma = _broadcast(x._a.reshape(x._a.shape or (1,)), shape), \
        _broadcast(mask._a.reshape(mask._a.shape or (1,)), shape)
    offs = _mask_offsets(xa, ma)
    out = np.empty(offs.size, x.dtype.np)
    if offs.size:
        xb, _ = _mv.buffer(xa)
        gather((offs.size,), _mv.raw(out), 0, [1], xb, 0, [0], 1, offs, 0, [1], _NO_CHECK, False)
    return Tensor._make(out, None, x.dtype)


def masked_scatter_cpu(plan, x: Tensor, mask: Tensor, source: Tensor) -> Tensor:

    if plan.out.__class__ is _Inplace:
        t = x
    else:
        t = _alloc(plan.out)
        if t._a.size:
            _mv.copy_array(_mv.raw(t._a), _mv.raw(_broadcast(x._a, t._a.shape)))
    ta = t._a.reshape(t._a.shape or (1,)) if not t._a.ndim else t._a
    ma = _broadcast(mask._a.reshape(mask._a.shape or (1,)), ta.shape)
    offs = _mask_offsets(ta, ma)
    n = offs.size
    if n > source._a.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if n:
        src = np.ascontiguousarray(source._a).reshape(-1)
        db, _ = _mv.buffer(ta)
        scatter((n,), db, 0, [0], 1, offs, 0, [1], _mv.raw(src), 0, [1], _NO_CHECK, False,
                COPY)
    return t


# -- take / put / nonzero -------------------------------------------------------------------

def take_cpu(plan, x: Tensor, index: Tensor) -> Tensor:
    n = x._a.size
    res = _alloc(plan.out)
    if res._a.size:
        flat = np.ascontiguousarray(x._a).reshape(-1)
        ob, ost = _mv.buffer(res._a)
        ib, ist = _ibuf(index)
        bad = gather(index._a.shape, ob, 0, ost, _mv.raw(flat), 0, [0] * index._a.ndim, 1, ib,
                     0, ist, n, True)
        if bad is not None:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                             "elements.")
    return res


def put_cpu(plan, x: Tensor, index: Tensor, source: Tensor) -> Tensor:
    accumulate = plan.kw["accumulate"]
    if not accumulate:
        _settings.alert_not_deterministic("put_")  # duplicate indices: which write wins
    t = _written(plan, x)
    n = t._a.size
    contiguous = t._a.flags.c_contiguous
    work = t if contiguous else _fresh(t)
    flat = Tensor._make(work._a.reshape(-1), work._st, work.dtype)
    idx = index._a.reshape(-1)
    src = Tensor._make(np.ascontiguousarray(source._a).reshape(-1), None, source.dtype)

    def run(u: Tensor, s: Tensor) -> None:
        mode = _mode(u.dtype, ADD) if accumulate else COPY
        raw = mode != ADD
        db, dst = _mv.buffer(u._a, as_raw=raw)
        sb, sst = _mv.buffer(s._a, as_raw=raw)
        ib, ist = _ibuf(Tensor._make(np.ascontiguousarray(idx)))
        bad = scatter((idx.size,), db, 0, [0], dst[0], ib, 0, ist, sb, 0, sst, n, True, mode)
        if bad is not None:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                             "elements.")

    if idx.size:
        if accumulate:
            _arith(flat, run, src)
        else:
            run(flat, src)
    if work is not t:
        _mv.copy_array(_mv.raw(t._a), _mv.raw(work._a))
    return t


def nonzero_cpu(plan, x: Tensor) -> Tensor:
    """The (count, ndim) int64 coordinates of the non-zero elements (strides (1, count): the
    coordinates of each dim are contiguous, as torch lays them out)."""
    if x._a.ndim == 0:
        hit = bool(x.item() != 0)
        coords = np.empty((0, 1 if hit else 0), np.int64)
    else:
        a = x._a
        if x.dtype is not _dt.bool:

            b = np.empty(a.shape, np.bool_)
            _dispatch.run_pointwise(_OPS["ne"], (x, 0), b, x.dtype, _dt.bool)
            a = b
        buf, st = _mv.buffer(a)
        coords = nonzero(a.shape, buf, st)
    return Tensor._make(coords.T, coords.reshape(-1), _dt.int64)


# -- embedding ------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _embedding_rows(weight, idx, out):
    """out[i] = weight[idx[i]] (negative indices from the end); returns the position of the
    first index out of range, or -1 (then nothing is trusted: the caller raises)."""
    n = weight.shape[0]
    for i in range(idx.size):
        r = idx[i]
        if r < -n or r >= n:
            return i
        if r < 0:
            r += n
        for j in range(out.shape[1]):  # (a row slice assignment compiles seconds cold)
            out[i, j] = weight[r, j]
    return -1


def embedding_cpu(plan, weight: Tensor, indices: Tensor) -> Tensor:
    n = weight._a.shape[0]
    flat = indices._a.reshape(-1) if indices._a.flags.c_contiguous else indices._a.ravel()
    w = weight._a
    if w.flags.c_contiguous and w.dtype in _EMBED_FAST:  # one pass: check and copy the rows
        res = _alloc(plan.out)
        if flat.size and _embedding_rows(w, flat, res._a.reshape(flat.size, w.shape[1])) >= 0:
            raise IndexError("index out of range in self")
        return res
    if flat.size and (int(flat.max()) >= n or int(flat.min()) < -n):
        raise IndexError("index out of range in self")
    res = _alloc(plan.out)
    if res._a.size:
        rows = flat.astype(np.int64) % n
        dim = weight._a.shape[1]
        isz = weight._a.itemsize
        ws = weight._a.strides
        xb, _ = _mv.buffer(weight._a)
        ob = _mv.raw(res._a.reshape(-1))
        gather((rows.size, dim), ob, 0, [dim, 1], xb, 0, [0, ws[1] // isz], ws[0] // isz, rows,
               0, [1, 0], n, False)
    return res


@njit(cache=True, nogil=True)
def _embedding_grad_rows(g, idx, pad, out):
    """out[idx[i] mod n] += g[i] for i in order, skipping indices equal to ``pad`` (-1: none):
    the sums of zeros + index_add, element by element in the same order."""
    n = out.shape[0]
    for i in range(idx.size):
        r = idx[i]
        if r == pad:
            continue
        r %= n
        for j in range(out.shape[1]):
            out[r, j] += g[i, j]


def embedding_dense_backward_cpu(plan, grad: Tensor, indices: Tensor) -> Tensor:
    kw = plan.kw
    n, pad = kw["num_weights"], kw["padding_idx"]
    res = _alloc(plan.out)
    out = res._a
    out[...] = 0
    flat = np.ascontiguousarray(indices._a, np.int64).reshape(-1)
    if flat.size and out.size:
        g = np.ascontiguousarray(grad._a).reshape(flat.size, out.shape[1])
        if g.dtype in _EMBED_FAST:
            _embedding_grad_rows(g, flat, -1 if pad is None else pad, out)
        else:  # other dtypes: NumPy's in-order add.at, 16-bit floats summed in float32
            keep = flat != pad if pad is not None else slice(None)
            acc = np.zeros(out.shape, np.promote_types(g.dtype, np.float32))
            np.add.at(acc, flat[keep] % n, g[keep])
            out[...] = acc
    return res


def one_hot_cpu(plan, x: Tensor) -> Tensor:
    k = plan.kw["num_classes"]
    a = x._a
    if a.size:
        if int(a.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(a.max()) >= k:
            raise RuntimeError("Class values must be smaller than num_classes.")
    out = np.zeros(plan.out.shape, np.int64)
    if a.size and k:
        flat = out.reshape(-1, k)
        flat[np.arange(a.size), np.ascontiguousarray(a).reshape(-1)] = 1
    return Tensor._make(out, None, _dt.int64)
