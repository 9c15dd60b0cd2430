"""Indexing, scatter/gather and the losses that index (nll_loss) on CUDA.

The CPU family (``kernels/cpu/indexing.py``) restaged: over an N-d iteration shape each
position reads an index ``v`` and moves an element between a strided operand and the
position with ``v * ds`` added (``ds``: the element stride of the indexed dim). Geometry is a
``geo`` device array (``pointwise._geometry``: the shape, then each operand's element strides).

- ``gather`` reads ``x[pos + v*ds]``: one thread per position (gather, index_select, take,
  embedding).
- ``scatter`` writes there. Two stagers: ``lines`` (generated per mode: copy, add, multiply,
  max, min) gives each thread a whole line of the iteration along the indexed dim, walked in
  order, so positions that meet at one element (they differ only along that dim) are applied
  in the CPU kernel's order: results equal the CPU's bit for bit, on every run (copies,
  integer and bool sums, products, max, min, and every sum in deterministic mode); ``atomic``
  runs one thread per position with ``cuda.atomic.add`` (float32/float64 sums outside
  deterministic mode: any order). ``index_put`` scatters through a table of storage offsets,
  its index dims merged into the line.
- Index bounds are checked on the device: the C-order position of the first bad index goes to
  a one-element flag (``cuda.atomic.min``), read back once; the caller raises torch's error
  with the index read at that position.
- ``nonzero``, ``masked_select`` and ``masked_scatter`` count first: each of a fixed number of
  tasks counts a contiguous chunk of positions, the host sums the counts into offsets, then
  each task writes its chunk in order.
Ops that only move elements (gathers, copying scatters, index/index_copy/fill/put,
masked_fill, masked_select/scatter) move float16, bfloat16 and complex64 as unsigned integers
of their width; float16 sums and products run over float32 copies, rounded once (as the CPU
kernels compute them); other arithmetic on those dtypes, and complex128, take the host path
(``eager.host_kernel``), as in ``eager.py``. The losses are in ``loss.py``.
"""

from __future__ import annotations

import math

import numpy as np

from ... import _settings
from ...cuda_array import CudaArray, alloc, empty, upload
from ...tensor import Tensor
from .. import registry
from ..plan import Inplace
from ..source import load
from . import eager, target
from . import pointwise as _pw
from .target import cuda

_CUDA = CudaArray
COPY, ADD, MUL, AMAX, AMIN = 0, 1, 2, 3, 4
_ATOMIC_ADD = frozenset({"float32", "float64"})
# tasks of the counting ops (nonzero, masked_*): each counts, then writes, a chunk in order
_TASKS = eager.THREADS * eager.MAX_BLOCKS if target.SIMULATOR else 8192


# -- the scatter modes: the CPU's ``_reduce_into``, inlined into generated kernels ---------------
# (Inlined, not device functions: the simulator swaps a device function's module globals on
# every call, racing with its other threads.)

_PUTS = {COPY: ["dst[p] = s"], ADD: ["dst[p] += s"], MUL: ["dst[p] *= s"],
         AMAX: ["if s > dst[p] or s != s:  # nan wins", "    dst[p] = s"],
         AMIN: ["if s < dst[p] or s != s:", "    dst[p] = s"]}

_LINES = """\
# scatter lines on CUDA, mode {mode}: one thread per line along the indexed dim, in order
import numpy as np
from jtorch.kernels.cuda.target import cuda


def lines(geo, dst, db, dds, idx, ib, src, sb, size, wrap, err):
    nd = geo.shape[1]
    last = nd - 1
    length = geo[0, last]
    rows = 1
    for d in range(last):
        rows *= geo[0, d]
    r = cuda.grid(1)
    step = cuda.gridsize(1)
    while r < rows:
        rem = r
        pd = db
        pi = ib
        ps = sb
        pc = 0
        for d in range(last - 1, -1, -1):
            q = rem % geo[0, d]
            rem //= geo[0, d]
            pd += q * geo[1, d]
            pi += q * geo[2, d]
            ps += q * geo[3, d]
            pc += q * geo[4, d]
        for j in range(length):
            v = np.int64(idx[pi + j * geo[2, last]])
            if v < 0 and wrap:
                v += size
            if v < 0 or v >= size:
                cuda.atomic.min(err, 0, pc + j * geo[4, last])
                break
            p = pd + j * geo[1, last] + v * dds
            s = src[ps + j * geo[3, last]]
{put}
        r += step
"""

_MEAN = """\
# scatter_reduce mean on CUDA: t /= max(count, 1), {how}
from jtorch.kernels.cuda.target import cuda


def mean(geo, t, tb, c, cb):
    nd = geo.shape[1]
    n = 1
    for d in range(nd):
        n *= geo[0, d]
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        rem = i
        pt = tb
        pc = cb
        for d in range(nd - 1, -1, -1):
            q = rem % geo[0, d]
            rem //= geo[0, d]
            pt += q * geo[1, d]
            pc += q * geo[2, d]
        k = c[pc]
        if k == 0:
            k = k + 1
        t[pt] = t[pt] {op} k
        i += step
"""


def _lines_kernel(mode: int):
    """The lines stager of scatter mode ``mode`` (a plain function, from generated source)."""
    put = "\n".join(" " * 12 + line for line in _PUTS[mode])
    return load(f"jt_cuda_scatter_lines_{mode}", _LINES.format(mode=mode, put=put)).lines


def _mean_kernel(floor: bool):
    src = _MEAN.format(how="floor division (integers)" if floor else "true division",
                       op="//" if floor else "/")
    return load(f"jt_cuda_scatter_mean_{int(floor)}", src).mean


# -- kernels (plain functions: ``target.jit`` compiles them, ``compile_ptx`` checks them) ---------

def gather_k(geo, out, ob, x, xb, xds, idx, ib, size, wrap, err):
    """out[po] = x[px + v*xds]; rows of ``geo``: shape, out, x, index strides."""
    nd = geo.shape[1]
    n = 1
    for d in range(nd):
        n *= geo[0, d]
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        rem = i
        po = ob
        px = xb
        pi = ib
        for d in range(nd - 1, -1, -1):
            q = rem % geo[0, d]
            rem //= geo[0, d]
            po += q * geo[1, d]
            px += q * geo[2, d]
            pi += q * geo[3, d]
        v = np.int64(idx[pi])
        if v < 0 and wrap:
            v += size
        if v < 0 or v >= size:
            cuda.atomic.min(err, 0, i)
        else:
            out[po] = x[px + v * xds]
        i += step


def scatter_atomic_k(geo, dst, db, dds, idx, ib, src, sb, size, wrap, err):
    """dst[pd + v*dds] += src[ps] with one thread per position (same ``geo`` as lines)."""
    nd = geo.shape[1]
    n = 1
    for d in range(nd):
        n *= geo[0, d]
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        rem = i
        pd = db
        pi = ib
        ps = sb
        pc = 0
        for d in range(nd - 1, -1, -1):
            q = rem % geo[0, d]
            rem //= geo[0, d]
            pd += q * geo[1, d]
            pi += q * geo[2, d]
            ps += q * geo[3, d]
            pc += q * geo[4, d]
        v = np.int64(idx[pi])
        if v < 0 and wrap:
            v += size
        if v < 0 or v >= size:
            cuda.atomic.min(err, 0, pc)
        else:
            cuda.atomic.add(dst, pd + v * dds, src[ps])
        i += step


def offsets_k(geo, idx, ib, size, stride, offs, err):
    """offs[i] += wrap(idx[i]) * stride over the row-major table of advanced-index offsets;
    rows: the broadcast index shape, the index's strides (0 where it broadcasts)."""
    nd = geo.shape[1]
    n = 1
    for d in range(nd):
        n *= geo[0, d]
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        rem = i
        pi = ib
        for d in range(nd - 1, -1, -1):
            q = rem % geo[0, d]
            rem //= geo[0, d]
            pi += q * geo[1, d]
        v = np.int64(idx[pi])
        if v < 0:
            v += size
        if v < 0 or v >= size:
            cuda.atomic.min(err, 0, i)
        else:
            offs[i] += v * stride
        i += step


def fill_bits_k(geo, out, ob, x, xb, m, mb, val):
    """out = val where m else x, as raw bits (masked_fill of the dtypes Numba lacks); rows:
    shape, out, x, mask strides."""
    nd = geo.shape[1]
    n = 1
    for d in range(nd):
        n *= geo[0, d]
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n:
        rem = i
        po = ob
        px = xb
        pm = mb
        for d in range(nd - 1, -1, -1):
            q = rem % geo[0, d]
            rem //= geo[0, d]
            po += q * geo[1, d]
            px += q * geo[2, d]
            pm += q * geo[3, d]
        if m[pm]:
            out[po] = val[0]
        else:
            out[po] = x[px]
        i += step


def count_k(geo, m, mb, chunk, counts):
    """counts[task] = the non-zero elements among positions [task*chunk, +chunk) (C order);
    rows: shape, mask strides. (No builtin ``min``/``max`` in these kernels: Numba's CUDA
    typing of them tries a one-argument overload and fails, as ``scalars.py`` notes.)"""
    nd = geo.shape[1]
    n = 1
    for d in range(nd):
        n *= geo[0, d]
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    while t < counts.size:
        c = 0
        hi = t * chunk + chunk
        if hi > n:  # noqa: PLR1730  (the builtin min: see count_k)
            hi = n
        for i in range(t * chunk, hi):
            rem = i
            pm = mb
            for d in range(nd - 1, -1, -1):
                q = rem % geo[0, d]
                rem //= geo[0, d]
                pm += q * geo[1, d]
            if m[pm] != 0:
                c += 1
        counts[t] = c
        t += step


def nonzero_k(geo, m, mb, chunk, starts, out, total):
    """The coordinates of each task's non-zero elements, from its start: out[d*total + k]."""
    nd = geo.shape[1]
    n = 1
    for d in range(nd):
        n *= geo[0, d]
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    while t < starts.size:
        k = starts[t]
        hi = t * chunk + chunk
        if hi > n:  # noqa: PLR1730  (the builtin min: see count_k)
            hi = n
        for i in range(t * chunk, hi):
            rem = i
            pm = mb
            for d in range(nd - 1, -1, -1):
                q = rem % geo[0, d]
                rem //= geo[0, d]
                pm += q * geo[1, d]
            if m[pm] != 0:
                rem = i
                for d in range(nd - 1, -1, -1):
                    out[d * total + k] = rem % geo[0, d]
                    rem //= geo[0, d]
                k += 1
        t += step


def select_k(geo, m, mb, x, xb, chunk, starts, out):
    """out[k] = x at the k-th set position of the mask; rows: shape, mask, x strides."""
    nd = geo.shape[1]
    n = 1
    for d in range(nd):
        n *= geo[0, d]
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    while t < starts.size:
        k = starts[t]
        hi = t * chunk + chunk
        if hi > n:  # noqa: PLR1730  (the builtin min: see count_k)
            hi = n
        for i in range(t * chunk, hi):
            rem = i
            pm = mb
            px = xb
            for d in range(nd - 1, -1, -1):
                q = rem % geo[0, d]
                rem //= geo[0, d]
                pm += q * geo[1, d]
                px += q * geo[2, d]
            if m[pm] != 0:
                out[k] = x[px]
                k += 1
        t += step


def mscatter_k(geo, m, mb, x, xb, src, sb, chunk, starts):
    """x at the k-th set position of the mask = src[sb + k]; rows: shape, mask, x strides."""
    nd = geo.shape[1]
    n = 1
    for d in range(nd):
        n *= geo[0, d]
    t = cuda.grid(1)
    step = cuda.gridsize(1)
    while t < starts.size:
        k = starts[t]
        hi = t * chunk + chunk
        if hi > n:  # noqa: PLR1730  (the builtin min: see count_k)
            hi = n
        for i in range(t * chunk, hi):
            rem = i
            pm = mb
            px = xb
            for d in range(nd - 1, -1, -1):
                q = rem % geo[0, d]
                rem //= geo[0, d]
                pm += q * geo[1, d]
                px += q * geo[2, d]
            if m[pm] != 0:
                x[px] = src[sb + k]
                k += 1
        t += step


def one_hot_k(geo, x, xb, k, out, err):
    """out (n, k) row-major = (x == class); err[0] flags a negative class, err[1] one >= k
    (positions run over n * max(k, 1), so an empty class dim still checks every value)."""
    nd = geo.shape[1]
    n = 1
    for d in range(nd):
        n *= geo[0, d]
    kk = k if k > 1 else 1  # noqa: FURB136  (the builtin max: see count_k)
    i = cuda.grid(1)
    step = cuda.gridsize(1)
    while i < n * kk:
        e = i // kk
        c = i - e * kk
        rem = e
        px = xb
        for d in range(nd - 1, -1, -1):
            q = rem % geo[0, d]
            rem //= geo[0, d]
            px += q * geo[1, d]
        v = np.int64(x[px])
        if v < 0:
            err[0] = 1
        elif v >= k:
            err[1] = 1
        if c < k:
            out[e * k + c] = 1 if v == c else 0
        i += step


KERNELS = {"gather": gather_k, "scatter_atomic": scatter_atomic_k, "offsets": offsets_k,
           "fill_bits": fill_bits_k, "count": count_k,
           "nonzero": nonzero_k, "select": select_k, "masked_scatter": mscatter_k,
           "one_hot": one_hot_k}
KERNELS.update({f"lines_{m}": _lines_kernel(m) for m in _PUTS})
KERNELS["mean_true"] = _mean_kernel(False)
KERNELS["mean_floor"] = _mean_kernel(True)

_jitted: dict = {}


def _kernel(name: str):
    k = _jitted.get(name)
    if k is None:
        k = _jitted[name] = target.jit(KERNELS[name])
    return k


def _launch(name: str, n: int, *args) -> None:
    """A grid-stride launch of kernel ``name`` sized for ``n`` work items."""
    t = eager.THREADS
    blocks = max(1, min(eager.MAX_BLOCKS, (n + t - 1) // t))
    _kernel(name)[blocks, t](*args)


# -- host helpers -----------------------------------------------------------------------------

def _native(*tensors) -> bool:
    return all(t is None or not isinstance(t, Tensor) or t.dtype.name in eager._NATIVE
               for t in tensors)


_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _movable(*tensors) -> bool:
    """Whether ops that only move elements run natively: Numba's dtypes, and others (float16,
    bfloat16, complex64) moved as unsigned integers of their width."""
    return all(t is None or not isinstance(t, Tensor) or t.dtype.name in eager._NATIVE
               or t._a.dtype.itemsize in _BITS for t in tensors)


def _bits(buf):
    """A device array as Numba reads it: its own dtype, or raw bits of the same width."""
    if buf.dtype.name in eager._NATIVE:
        return buf
    return buf.view(_BITS[buf.dtype.itemsize])


def _arr(t: Tensor, dev) -> CudaArray:
    """A CUDA tensor's array; a CPU tensor (an index may sit there) uploaded."""
    a = t._a
    if a.__class__ is _CUDA:
        return a
    ca, _ = upload(np.asarray(a), dev)
    return ca


def _strides(a: CudaArray) -> list:
    return list(a.element_strides())


def _to_device(h: np.ndarray):
    """A device copy of host array ``h`` in the caching allocator's memory."""
    d = alloc(h.size, h.dtype)
    if h.size:
        d.copy_to_device(h)
    return d


def _flag(value: int):
    """The one-element error flag of a launch (the sentinel ``value``: no error)."""
    return _to_device(np.array([value], np.int64))


def _first_bad(err, n: int) -> int | None:
    v = int(err.copy_to_host()[0])
    return v if v < n else None


def _value_at(a: CudaArray, base: int, strides, shape, pos: int) -> int:
    """The element of ``a``'s buffer at C-order position ``pos`` of ``shape`` (element
    ``strides`` from ``base``): the bad index an error names."""
    off = base
    for n, s in zip(reversed(list(shape)), reversed(list(strides))):
        off += (pos % n) * s
        pos //= n
    return int(a.buf[off:off + 1].copy_to_host()[0])


def _contig(shape) -> list:
    st, acc = [], 1
    for n in reversed(shape):
        st.append(acc)
        acc *= max(n, 1)
    return st[::-1]


def _scalar(value, np_dtype):
    """A one-element device array holding ``value`` in the destination's dtype (kept per value,
    as ``eager._const``)."""
    if isinstance(value, Tensor):
        value = value.item()
    h = np.array(value).astype(np_dtype).reshape(1)
    key = ("idx", h.dtype.str, h.tobytes())
    d = eager._consts.get(key)
    if d is None:
        if len(eager._consts) > 4096:
            eager._consts.clear()
        d = eager._consts[key] = target.to_device(h)
    return d


def _fresh(x: Tensor, dev, strides=None) -> Tensor:
    """A copy of CUDA tensor ``x`` with its own storage (row-major, or at ``strides``)."""
    a, st = empty(tuple(x._a.shape), x._a.dtype, dev, strides)
    t = Tensor._make(a, st, x.dtype)
    if a.size:
        eager._copy_values(t, x)
    return t


def _written(plan, x: Tensor) -> Tensor:
    if plan.out.__class__ is Inplace:
        return x
    return _fresh(x, plan.device, plan.out.strides)


def _float32(t: Tensor, dev) -> Tensor:
    """A row-major float32 copy of CUDA tensor ``t`` (float16 widened exactly)."""
    from ... import dtypes as _dt

    a, st = empty(tuple(t._a.shape), np.float32, dev)
    res = Tensor._make(a, st, _dt.float32)
    if a.size:
        eager._copy_values(res, t)
    return res


def _in_float32(fn, host, plan, x: Tensor, index: Tensor, src=None) -> Tensor:
    """A float16 scatter that computes: ``fn`` over float32 copies, rounded back once (the CPU
    kernels compute 16-bit floats through float32 too)."""
    from ...kernels.plan import Out, Plan

    dev = plan.device
    x32 = _float32(x, dev)
    if isinstance(src, Tensor) and src.dtype is x.dtype:
        src = _float32(src, dev)
    inplace = plan.out.__class__ is Inplace
    out32 = plan.out if inplace else Out(plan.out.shape, x32.dtype, plan.out.strides)
    r32 = fn(host, Plan(out32, plan.kw, dev), x32, index, src)
    res = x if inplace else eager.empty_cuda(plan)
    if res._a.size:
        eager._copy_values(res, r32)
    return res


def _half(x: Tensor) -> bool:
    return x.dtype.name == "float16"


def _contiguous(x: Tensor) -> Tensor:
    return x if x._a.flags.c_contiguous else eager._copy(x)


def _storage_overlap(a: Tensor, b: Tensor) -> bool:
    return eager._overlap(a._st, b._st)


def _shares(dst: Tensor, src: Tensor, flagged: bool) -> Tensor:
    """``src``, or a copy of it when it may share memory with ``dst``."""
    if flagged or (src._st is not dst._st and _storage_overlap(src, dst)):
        return eager._copy(src)
    return src


def _det() -> bool:
    return _settings.are_deterministic_algorithms_enabled()


def _dim_strides(a: CudaArray, d: int) -> tuple:
    st = _strides(a) or [0]
    ds = st[d]
    st[d] = 0
    return st, ds


def gather(shape, out: CudaArray, ostr, x: CudaArray, xstr, xds, idx: CudaArray, istr,
           size: int, wrap: bool) -> int | None:
    """out[p] = x[p.xstr + idx[p] * xds] over ``shape`` (element strides from each array's
    offset); returns the first bad index or None."""
    n = math.prod(shape)
    if n == 0:
        return None
    if not shape:
        shape, ostr, xstr, istr = (1,), [0], [0], [0]
    geo = _pw._geometry(tuple(shape), [list(ostr), list(xstr), list(istr)])
    err = _flag(n)
    _launch("gather", n, geo, _bits(out.buf), out.offset, _bits(x.buf), x.offset, xds, idx.buf,
            idx.offset, size, wrap, err)
    pos = _first_bad(err, n)
    if pos is None:
        return None
    return _value_at(idx, idx.offset, istr, shape, pos)


def scatter(shape, dst: CudaArray, dstr, dds, idx: CudaArray, istr, src, sstr, size: int,
            wrap: bool, mode: int, dim: int) -> int | None:
    """dst[p.dstr + idx[p] * dds] (op)= src[p.sstr] over ``shape``; ``src`` a CudaArray or a
    one-element device array (strides 0); lines run along ``dim``. First bad index or None."""
    if not all(shape):
        return None
    if not shape:
        shape, dstr, istr, sstr, dim = (1,), [0], [0], [0], 0
    nd = len(shape)
    dim = min(dim, nd - 1)
    cstr = _contig(shape)
    order = [k for k in range(nd) if k != dim] + [dim]
    rows = [[r[k] for k in order] for r in (shape, dstr, istr, sstr, cstr)]
    geo = _pw._geometry(tuple(rows[0]), rows[1:])
    n = math.prod(shape)
    err = _flag(n)
    sbuf, soff = (src.buf, src.offset) if src.__class__ is _CUDA else (src, 0)
    dbuf = dst.buf
    if mode == COPY:  # (a move: any dtype as its bits)
        dbuf, sbuf = _bits(dbuf), _bits(sbuf)
    args = (geo, dbuf, dst.offset, dds, idx.buf, idx.offset, sbuf, soff, size, wrap, err)
    if mode == ADD and dst.dtype.name in _ATOMIC_ADD and not _det():
        _launch("scatter_atomic", n, *args)
    else:
        _launch(f"lines_{mode}", n // shape[dim], *args)
    pos = _first_bad(err, n)
    if pos is None:
        return None
    return _value_at(idx, idx.offset, istr, shape, pos)


def _mode(t: Tensor, mode: int) -> int:
    """Reducing scatters on bool are logical: add -> or (max), multiply -> and (min)."""
    if t.dtype.name == "bool":
        return {ADD: AMAX, MUL: AMIN}.get(mode, mode)
    return mode


def _bounds(bad, d, n):
    return RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")


def _scatter_run(t: Tensor, d: int, index: Tensor, src, mode: int, dev, wrap: bool = False,
                 shape=None, istr=None, err=None) -> None:
    """The CPU ``_scatter_run`` on the device: into ``t`` along ``d`` over ``shape`` (default:
    the index's shape)."""
    mode = _mode(t, mode)
    ia = _arr(index, dev)
    shape = tuple(ia.shape) if shape is None else tuple(shape)
    dpos, dds = _dim_strides(t._a, d)
    n = t._a.shape[d] if t._a.ndim else 1
    ist = list(istr) if istr is not None else _strides(ia)
    if isinstance(src, Tensor) and src._a.ndim == 0:
        src = src.item()
    nd = len(shape)
    if isinstance(src, Tensor):
        sa = _arr(src, dev)
        sbuf, sst = sa, _strides(sa)
    else:
        sbuf, sst = _scalar(src, t._a.dtype), [0] * nd
    if nd:
        dpos, ist, sst = dpos[:nd], ist[:nd], sst[:nd]
    bad = scatter(shape, t._a, dpos, dds, ia, ist, sbuf, sst, n, wrap, mode, d)
    if bad is not None:
        raise (err or _bounds)(bad, d, n)


# -- op entries: ``kernels["cuda"](plan, *tensors)``, the CPU entries' signatures ---------------

def _entry(name: str):
    """Registers ``fn`` as ``name``'s CUDA kernel; ``fn(host, plan, *args)`` gets the host path
    to call for what it does not run natively."""
    op = registry.REGISTRY[name]
    host = eager.host_kernel(op)

    def register(fn):
        def run(plan, *args):
            return fn(host, plan, *args)

        run.__name__ = f"{name}_cuda"
        run.__doc__ = fn.__doc__
        op.kernels["cuda"] = run
        return fn

    return register


@_entry("gather")
def gather_cuda(host, plan, x: Tensor, index: Tensor) -> Tensor:
    if not _movable(x):
        return host(plan, x, index)
    d, wrap = plan.kw["dim"], plan.kw.get("wrap", False)
    res = eager.empty_cuda(plan)
    if res._a.size:
        dev = plan.device
        ia = _arr(index, dev)
        nd = x._a.ndim
        xpos, xds = _dim_strides(x._a, d)
        n = x._a.shape[d] if nd else 1
        if ia.ndim != nd:
            xpos = xpos[:ia.ndim]
        bad = gather(tuple(ia.shape), res._a, _strides(res._a), x._a, xpos, xds, ia, _strides(ia),
                     n, wrap)
        if bad is not None:
            raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    return res


@_entry("index_select")
def index_select_cuda(host, plan, x: Tensor, index: Tensor) -> Tensor:
    if not _movable(x):
        return host(plan, x, index)
    d = plan.kw["dim"]
    res = eager.empty_cuda(plan)
    if res._a.size:
        ia = _arr(index, plan.device)
        shape = tuple(res._a.shape)
        nd = x._a.ndim
        xpos, xds = _dim_strides(x._a, d)
        n = x._a.shape[d] if nd else 1
        ist = _strides(ia)
        istr = [0] * max(len(shape), 1)
        istr[d] = ist[0] if ist else 0
        bad = gather(shape or (1,), res._a, _strides(res._a) or [0], x._a, xpos, xds, ia, istr,
                     n, False)
        if bad is not None:
            raise IndexError("index out of range in self")
    return res


@_entry("embedding")
def embedding_cuda(host, plan, weight: Tensor, indices: Tensor) -> Tensor:
    """Rows of ``weight`` (negative indices from the end, as on CPU)."""
    w = weight._a
    if not _movable(weight) or not w.shape[1]:
        return host(plan, weight, indices)
    res = eager.empty_cuda(plan)
    ia = _arr(indices, plan.device)
    if ia.size:
        ws = _strides(w)
        k = ia.ndim
        bad = gather(tuple(ia.shape) + (w.shape[1],), res._a, _strides(res._a), w,
                     [0] * k + [ws[1]], ws[0], ia, _strides(ia) + [0], w.shape[0], True)
        if bad is not None:
            raise IndexError("index out of range in self")
    return res


_SCATTER_MODES = {None: COPY, "add": ADD, "multiply": MUL}


@_entry("scatter")
def scatter_cuda(host, plan, x: Tensor, index: Tensor, src=None) -> Tensor:
    kw = plan.kw
    d, mode = kw["dim"], _SCATTER_MODES[kw["reduce"]]
    if mode != COPY and _half(x):
        return _in_float32(scatter_cuda, host, plan, x, index, src)
    if not (_native(x) or (mode == COPY and _movable(x))):
        return host(plan, x, index, src)
    t = _written(plan, x)
    _scatter_run(t, d, index, src if src is not None else kw["value"], mode, plan.device)
    return t


@_entry("scatter_add")
def scatter_add_cuda(host, plan, x: Tensor, index: Tensor, src: Tensor) -> Tensor:
    if _half(x):
        return _in_float32(scatter_add_cuda, host, plan, x, index, src)
    if not _native(x):
        return host(plan, x, index, src)
    t = _written(plan, x)
    _scatter_run(t, plan.kw["dim"], index, src, ADD, plan.device)
    return t


_REDUCE_MODES = {"sum": ADD, "prod": MUL, "mean": ADD, "amax": AMAX, "amin": AMIN}


def _identity(reduce: str, t: Tensor):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if t.dtype.is_floating_point:
        return float("-inf") if reduce == "amax" else float("inf")
    if t.dtype.name == "bool":
        return reduce == "amin"
    info = np.iinfo(t._a.dtype)
    return int(info.min) if reduce == "amax" else int(info.max)


def _scatter_reduce(host, plan, x: Tensor, index: Tensor, src: Tensor) -> Tensor:
    """scatter_reduce(_): lines in the CPU's order for every reduction; ``mean`` divides by
    the count of each element's contributions (scattered the same way)."""
    kw = plan.kw
    d, reduce, include_self = kw["dim"], kw["reduce"], kw["include_self"]
    if _half(x):
        return _in_float32(_scatter_reduce, host, plan, x, index, src)
    if not _native(x) or (reduce == "mean" and x.dtype.name == "bool"):
        return host(plan, x, index, src)
    if reduce not in ("sum", "mean"):  # torch's deterministic path covers sums only
        _settings.alert_not_deterministic("scatter_reduce_cuda")
    dev = plan.device
    t = _written(plan, x)
    if not include_self:
        _scatter_run(t, d, index, _identity(reduce, t), COPY, dev)
    _scatter_run(t, d, index, src, _REDUCE_MODES[reduce], dev)
    if reduce == "mean":
        shape = tuple(t._a.shape)
        ca, cst = empty(shape, t._a.dtype, dev)
        count = Tensor._make(ca, cst, t.dtype)
        eager._fill_storage(count, 1 if include_self else 0)
        _scatter_run(count, d, index, 1, ADD, dev)
        if ca.size:
            geo = _pw._geometry(shape or (1,), [_strides(t._a) or [0], _strides(ca) or [0]])
            which = "mean_floor" if t.dtype.category < 2 else "mean_true"
            _launch(which, ca.size, geo, t._a.buf, t._a.offset, ca.buf, ca.offset)
    return t


_entry("scatter_reduce")(_scatter_reduce)
_entry("scatter_reduce_")(_scatter_reduce)


def _index_strides(index: CudaArray, d: int, nd: int) -> list:
    ist = _strides(index)
    s = [0] * max(nd, 1)
    s[d] = ist[0] if ist else 0
    return s


def _scaled(source: Tensor, alpha) -> Tensor:
    """alpha * source in source's dtype (the CPU's ``mul`` computed in that dtype)."""
    a, st = empty(tuple(source._a.shape), source._a.dtype, source._a.dev)
    res = Tensor._make(a, st, source.dtype)
    if a.size:
        name = source.dtype.name
        eager.launch(registry.REGISTRY["mul"], name, name, tuple(a.shape), a, (source, alpha))
    return res


@_entry("index_add")
def index_add_cuda(host, plan, x: Tensor, index: Tensor, source: Tensor) -> Tensor:
    kw = plan.kw
    if _half(x):
        return _in_float32(index_add_cuda, host, plan, x, index, source)
    if not _native(x):
        return host(plan, x, index, source)
    t = _written(plan, x)
    d, alpha = kw["dim"], kw["alpha"]
    source = _shares(t, source, kw.get("_copy_src", False))
    if alpha != 1:
        source = _scaled(source, alpha)
    istr = _index_strides(_arr(index, plan.device), d, t._a.ndim)
    _scatter_run(t, d, index, source, ADD, plan.device, shape=source._a.shape or (1,), istr=istr)
    return t


@_entry("index_copy")
def index_copy_cuda(host, plan, x: Tensor, index: Tensor, source: Tensor) -> Tensor:
    kw = plan.kw
    if not _movable(x):
        return host(plan, x, index, source)
    t = _written(plan, x)
    d = kw["dim"]
    source = _shares(t, source, kw.get("_copy_src", False))
    istr = _index_strides(_arr(index, plan.device), d, t._a.ndim)

    def err(bad, d, n):
        return IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {d} with "
                          f"size {n}")

    _scatter_run(t, d, index, source, COPY, plan.device, shape=source._a.shape or (1,),
                 istr=istr, err=err)
    return t


@_entry("index_fill")
def index_fill_cuda(host, plan, x: Tensor, index: Tensor, value_t=None) -> Tensor:
    kw = plan.kw
    if not _movable(x):
        return host(plan, x, index, value_t)
    t = _written(plan, x)
    d = kw["dim"]
    shape = list(t._a.shape) or [1]
    shape[d] = index._a.size
    istr = _index_strides(_arr(index, plan.device), d, t._a.ndim)

    def err(bad, d, n):
        return IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")

    value = kw["value"] if value_t is None else value_t
    _scatter_run(t, d, index, value, COPY, plan.device, wrap=True, shape=tuple(shape), istr=istr,
                 err=err)
    return t


# -- index_put: ``x[index] = values`` and ``index_put_`` ------------------------------------------

_NO_CHECK = 1 << 62  # the size scatter checks indices against once they were checked


def _view(x: Tensor, geom: tuple) -> Tensor:
    """The view of ``x``'s storage at element geometry (shape, strides, offset)."""
    shape, st, off = geom
    st_ = x._st
    isz = st_.dtype.itemsize
    a = CudaArray(tuple(shape), st_.dtype, tuple(s * isz for s in st), off, st_.buf, st_.dev)
    return Tensor._make(a, st_, x.dtype)


def _on_device(t: Tensor, dev) -> Tensor:
    """``t``, uploaded when it is a CPU tensor (values may sit there: a 0-d one always may)."""
    if t._a.__class__ is _CUDA:
        return t
    a, st = upload(np.asarray(t._a), dev)
    return Tensor._make(a, st, t.dtype)


def _drop_leading_ones(t: Tensor) -> Tensor:
    a = t._a
    k = 0
    while k < a.ndim and a.shape[k] == 1:
        k += 1
    if not k:
        return t
    v = CudaArray(a.shape[k:], a.dtype, a.strides[k:], a.offset, a.buf, a.dev)
    return Tensor._make(v, t._st, t.dtype)


def _adv_offsets(x: Tensor, g: dict, tensors: tuple, dev):
    """The row-major int64 table (shape ``bshape``) of storage offsets the advanced index
    writes, bounds checked per index tensor in order (the CPU's errors)."""
    from ...shape import bcast_strides

    vshape, vst, voff = g["v"]
    bshape = tuple(g["bshape"])
    n = math.prod(bshape)
    offs = _to_device(np.full(n, voff, np.int64))
    for k, (d, ti) in enumerate(g["adv"]):
        ia = _arr(tensors[ti], dev)
        ist = bcast_strides(ia.shape, ia.element_strides(), bshape)
        geo = _pw._geometry(bshape or (1,), [list(ist) or [0]])
        err = _flag(n)
        _launch("offsets", n, geo, ia.buf, ia.offset, vshape[d], vst[d], offs, err)
        pos = _first_bad(err, n)
        if pos is not None:
            if vshape[d] == 0:
                raise IndexError("index is out of bounds for dimension with size 0")
            bad = _value_at(ia, ia.offset, ist, bshape, pos)
            raise IndexError(f"index {bad} is out of bounds for dimension {k} with size "
                             f"{vshape[d]}")
    return CudaArray((n,), np.dtype(np.int64), None, 0, offs, dev)


@_entry("index")
def index_cuda(host, plan, x: Tensor, *tensors) -> Tensor:
    """An advanced ``x[index]``: the offsets table, then one gather over it (the CPU
    ``index_cpu``'s iteration, from ``cpu.indexing._iter_layout``)."""
    from ..cpu.indexing import _iter_layout

    if not _movable(x) or any(t.dtype.name not in ("int64", "int32") for t in tensors):
        return host(plan, x, *tensors)
    g = plan.kw["geom"]
    offs = _adv_offsets(x, g, tensors, plan.device)
    out = eager.empty_cuda(plan)
    o = out._a
    if o.size:
        it_shape, it_out, it_v, it_i = _iter_layout(g, g["v"][1], _strides(o))
        st = x._st
        storage = CudaArray((st.shape[0],), st.dtype, None, 0, st.buf, st.dev)
        gather(tuple(it_shape), o, it_out, storage, it_v, 1, offs, it_i, _NO_CHECK, False)
    return out


@_entry("index_put")
def index_put_cuda(host, plan, x: Tensor, values, *tensors) -> Tensor:
    """A basic index writes its view with the pointwise kernels; an advanced one scatters
    through a table of storage offsets, its index dims merged into one line dim (walked in
    the CPU's order) and the other view dims across threads."""
    kw = plan.kw
    p = kw["_put"]
    g = p["adv_geom"]
    accumulate = kw.get("accumulate", False)
    if not (_native(x) or (_movable(x) and g is not None and not accumulate)) \
            or (values is not None and values.dtype is not x.dtype and g is not None) \
            or any(t.dtype.name not in ("int64", "int32") for t in tensors):
        return host(plan, x, values, *tensors)
    dev = plan.device
    name = x.dtype.name
    if values is not None:
        values = _shares(x, values, p["copy_src"]) if values._a.__class__ is _CUDA else \
            _on_device(values, dev)
    if g is None:  # a view of x: fill, add or copy into it
        v = _view(x, p["v"])
        shape = tuple(v._a.shape)
        if not v._a.size:
            return x
        if values is None:
            eager.launch(registry.REGISTRY["copy"], name, name, shape, v._a, (p["value"],))
        elif accumulate:
            eager.launch(registry.REGISTRY["add"], name, name, shape, v._a, (v, values))
        else:
            eager._copy_values(v, _drop_leading_ones(values))
        return x
    g = dict(g, v=p["v"], adv=p["adv"])
    bshape, pos, rest = tuple(g["bshape"]), g["pos"], g["rest"]
    vshape, vst, _ = g["v"]
    out_shape = tuple(g["out_shape"])
    offs = _adv_offsets(x, g, tensors, dev)
    if not math.prod(out_shape):
        return x
    nb, nr = len(bshape), len(rest)
    rshape = [vshape[d] for d in rest]
    if values is None:
        src, sst = _scalar(p["value"], x._a.dtype), [0] * (1 + nr)
    else:
        va = _drop_leading_ones(values)._a
        o = _bcast(va, out_shape) if out_shape else []
        it_src = o[pos:pos + nb] + o[:pos] + o[pos + nb:]
        if nb > 1:  # index dims merge into one only when row-major: a copy in iteration order
            it_shape = tuple(bshape) + tuple(rshape)
            view = CudaArray(it_shape, va.dtype, tuple(s * va.itemsize for s in it_src),
                             va.offset, va.buf, va.dev)
            c = eager._copy(Tensor._make(view, values._st, values.dtype))
            src, sst = c._a, [math.prod(rshape)] + _contig(rshape)
        else:
            src, sst = va, (it_src[:nb] or [0]) + it_src[nb:]
    shape = (math.prod(bshape),) + tuple(rshape)
    mode = _mode(x, ADD) if accumulate else COPY
    st = x._st
    scatter(shape, CudaArray((st.shape[0],), st.dtype, None, 0, st.buf, st.dev), [0] +
            [vst[d] for d in rest], 1, offs, [1] + [0] * nr, src, sst, _NO_CHECK, False, mode, 0)
    return x


# -- masked ops -----------------------------------------------------------------------------

@_entry("masked_fill")
def masked_fill_cuda(host, plan, x: Tensor, mask: Tensor, value_t=None) -> Tensor:
    """where(mask, value, x) by the device's pointwise kernel (the CPU entry's ``where``); the
    dtypes Numba lacks as raw bits, the value rounded once to x's dtype."""
    if not _movable(x):
        return host(plan, x, mask, value_t)
    value = plan.kw["value"]
    if isinstance(value, Tensor):
        value = value.item()
    if mask._a.__class__ is not _CUDA:
        ma, mst = upload(np.asarray(mask._a), plan.device)
        mask = Tensor._make(ma, mst, mask.dtype)
    res = x if plan.out.__class__ is Inplace else eager.empty_cuda(plan)
    o = res._a
    if not o.size:
        return res
    shape = tuple(o.shape)
    if _native(x):
        name = x.dtype.name
        eager.launch(registry.REGISTRY["where"], name, name, shape, o, (value, x, mask))
        return res
    rows = [_strides(o) or [0], _bcast(x._a, shape), _bcast(mask._a, shape)]
    geo = _pw._geometry(shape or (1,), rows)
    _launch("fill_bits", o.size, geo, _bits(o.buf), o.offset, _bits(x._a.buf), x._a.offset,
            mask._a.buf, mask._a.offset, _bits(_scalar(value, x._a.dtype)))
    return res


def _bcast(a: CudaArray, shape: tuple) -> list:
    """Element strides of ``a`` broadcast to ``shape`` (0 along broadcast dims)."""
    from ...shape import bcast_elem_strides

    return list(bcast_elem_strides(a, shape)) if shape else [0]


def _count(shape: tuple, rows: list, m: CudaArray):
    """(chunk, device offsets per task, total) of the set positions of mask ``m`` over
    ``shape`` (C order), its strides first in ``rows``."""
    n = math.prod(shape)
    tasks = min(n, _TASKS)
    chunk = -(-n // tasks)
    tasks = -(-n // chunk)
    geo = _pw._geometry(shape, rows)
    counts = alloc(tasks, np.int64)
    _launch("count", tasks, geo, m.buf, m.offset, chunk, counts)
    c = counts.copy_to_host()
    starts = np.zeros(tasks, np.int64)
    np.cumsum(c[:-1], out=starts[1:])
    return geo, chunk, _to_device(starts), int(c.sum())


def _device_mask(mask: Tensor, dev) -> CudaArray:
    return _arr(mask, dev)


@_entry("masked_select")
def masked_select_cuda(host, plan, x: Tensor, mask: Tensor) -> Tensor:
    if not _movable(x):
        return host(plan, x, mask)
    from ...shape import broadcast_shapes

    dev = plan.device
    ma = _device_mask(mask, dev)
    shape = tuple(broadcast_shapes(x._a.shape, ma.shape)) or (1,)
    n = math.prod(shape)
    if not n:
        a, st = empty((0,), x._a.dtype, dev)
        return Tensor._make(a, st, x.dtype)
    rows = [_bcast(ma, shape), _bcast(x._a, shape)]
    geo, chunk, starts, total = _count(shape, rows, ma)
    a, st = empty((total,), x._a.dtype, dev)
    if total:
        _launch("select", starts.size, geo, ma.buf, ma.offset, _bits(x._a.buf), x._a.offset,
                chunk, starts, _bits(a.buf))
    return Tensor._make(a, st, x.dtype)


@_entry("masked_scatter")
def masked_scatter_cuda(host, plan, x: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    if not _movable(x):
        return host(plan, x, mask, source)
    dev = plan.device
    if plan.out.__class__ is Inplace:
        t = x
    else:
        t = eager.empty_cuda(plan)
        if t._a.size:
            eager._copy_values(t, x)
    ma = _device_mask(mask, dev)
    shape = tuple(t._a.shape) or (1,)
    if not math.prod(shape):
        return t
    ta = t._a
    rows = [_bcast(ma, shape), _strides(ta) or [0]]
    geo, chunk, starts, total = _count(shape, rows, ma)
    if total > source._a.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if total:
        src = _contiguous(source)._a
        _launch("masked_scatter", starts.size, geo, ma.buf, ma.offset, _bits(ta.buf), ta.offset,
                _bits(src.buf), src.offset, chunk, starts)
    return t


@_entry("nonzero")
def nonzero_cuda(host, plan, x: Tensor) -> Tensor:
    """The (count, ndim) int64 coordinates, laid out as on CPU (strides (1, count)); a 0-d
    input gives (1, 0) when it is non-zero, else (0, 0)."""
    from ... import dtypes as _dt

    a = x._a
    if not _native(x):
        return host(plan, x)
    dev = plan.device
    shape = tuple(a.shape)
    nd = len(shape)
    total = 0
    if math.prod(shape):
        geo, chunk, starts, total = _count(shape or (1,), [_strides(a) or [0]], a)
    buf_a, st = empty((nd * total,), np.int64, dev)
    if total and nd:
        _launch("nonzero", starts.size, geo, a.buf, a.offset, chunk, starts, buf_a.buf, total)
    res = CudaArray((total, nd), np.dtype(np.int64), (8, 8 * total), 0, st.buf, dev)
    return Tensor._make(res, st, _dt.int64)


# -- take / put / one_hot ---------------------------------------------------------------------

@_entry("take")
def take_cuda(host, plan, x: Tensor, index: Tensor) -> Tensor:
    if not _movable(x):
        return host(plan, x, index)
    n = x._a.size
    res = eager.empty_cuda(plan)
    if res._a.size:
        flat = _contiguous(x)._a
        ia = _arr(index, plan.device)
        bad = gather(tuple(ia.shape), res._a, _strides(res._a), flat, [0] * ia.ndim, 1, ia,
                     _strides(ia), n, True)
        if bad is not None:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                             "elements.")
    return res


@_entry("put")
def put_cuda(host, plan, x: Tensor, index: Tensor, source: Tensor) -> Tensor:
    """torch refuses both forms in deterministic mode on CUDA (duplicates: which write wins;
    accumulation: atomics), so this does too; with ``warn_only`` they run, copies in the
    CPU's order and sums as the other scatters run them."""
    accumulate = plan.kw["accumulate"]
    if accumulate and _half(x):
        return _in_float32(put_cuda, host, plan, x, index, source)
    if not (_native(x) or (not accumulate and _movable(x))):
        return host(plan, x, index, source)
    _settings.alert_not_deterministic("put_")
    dev = plan.device
    t = _written(plan, x)
    n = t._a.size
    work = t if t._a.flags.c_contiguous else _fresh(t, dev)
    ia = _contiguous(Tensor._make(_arr(index, dev), None, index.dtype))._a
    m = ia.size
    if m:
        wa = work._a
        flat = CudaArray((n,), wa.dtype, None, wa.offset, wa.buf, wa.dev)
        src = _contiguous(source)._a
        mode = _mode(t, ADD) if accumulate else COPY
        bad = scatter((m,), flat, [0], 1, ia, [1], src, [1], n, True, mode, 0)
        if bad is not None:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                             "elements.")
    if work is not t:
        eager._copy_values(t, work)
    return t


@_entry("one_hot")
def one_hot_cuda(host, plan, x: Tensor) -> Tensor:
    k = plan.kw["num_classes"]
    res = eager.empty_cuda(plan)
    a = _arr(x, plan.device)
    if a.size:
        err = _to_device(np.zeros(2, np.int64))
        geo = _pw._geometry(tuple(a.shape) or (1,), [_strides(a) or [0]])
        _launch("one_hot", a.size * max(k, 1), geo, a.buf, a.offset, k, res._a.buf, err)
        neg, big = err.copy_to_host()
        if neg:
            raise RuntimeError("Class values must be non-negative.")
        if big:
            raise RuntimeError("Class values must be smaller than num_classes.")
    return res


from . import loss  # noqa: F401  (registers the losses' kernels)
