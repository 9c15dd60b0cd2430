"""Index ops: their meta rules (torch's argument checks, the results' geometry) and CPU
kernels (``kernels/cpu/indexing``), for ``dispatch.call``.

``index`` is ``Tensor.__getitem__``: basic indices (ints, slices, None, Ellipsis, Python
bools) give a ``View`` with torch's strides; integer index tensors then give a fresh gathered
result laid out as torch's index kernel lays it out. Boolean masks are data-dependent: the ops
layer turns them into coordinates with ``nonzero`` first (as torch does), so ``index`` itself
never depends on values. ``index_put`` is ``__setitem__`` and ``index_put_``. The gather /
scatter family, masked ops and take/put follow; the in-place forms are the same records with
``inplace=True`` (an ``Inplace`` plan). ``nonzero`` and ``masked_select`` are data-dependent
(``data_dependent=True``: no result shape without values, so meta tensors raise).

Each record is declared here with its meta rule, its CPU kernel and its gradient rule (at the
bottom: the gradient is scattered back through the same indices, as torch's
derivatives.yaml does); ``embedding`` and ``one_hot`` too.
"""

from __future__ import annotations

import math

import numpy as np

from ... import dispatch as _dispatch
from ... import dtypes as _dt
from ...device import CPU, META
from ...meta import MetaArray
from ...shape import (
    bcast_strides,
    broadcast_shapes,
    contiguous_strides,
    elem_offset,
    elem_strides,
    is_dense,
    iter_order,
    wrap_dim,
)
from ...tensor import Tensor
from ..plan import Inplace, Out, Plan, View, common_device, device_of
from ..registry import OpDef, defvjp, op
from . import _prims as P
from ._lazy import lazy
from .movement import embed, embed_flat, positions

_K = "jtorch.kernels.cpu.indexing"  # imported at the first call (_lazy.py)

_META = MetaArray
_TENSOR = Tensor
_INT_INDEX = (_dt.int64, _dt.int32)
_MASKS = (_dt.bool, _dt.uint8)
_int64 = _dt.int64
_EMBED_GRAD = (_dt.float32, _dt.float64)  # embedding_dense_backward's kernel dtypes


def _tname(d: _dt.dtype) -> str:
    return _dispatch.torch_name(d)


def _check_inplace(t: Tensor) -> None:
    if t._requires_grad or t._base is not None:  # (the common case, without a call)
        _dispatch.check_inplace(t)


def _offset(x: Tensor) -> int:
    """The storage offset in elements: ``x.storage_offset()`` on CPU (0 for an empty tensor,
    so an empty source never overlaps in ``check_overlap``), but a meta tensor's own offset
    even when empty (``shape.elem_offset``, the true offset, is what ``view.py`` reads)."""
    a = x._a
    return elem_offset(a, x._st) if a.size or a.__class__ is _META else 0


def _index_device(dev, *index) -> None:
    """Index tensors may sit on the CPU whatever the indexed tensor's device (torch reads
    them there); a meta index cannot index CPU data."""
    if dev is CPU:
        for t in index:
            if t is not None and device_of(t) is META:
                raise RuntimeError("Tensor on device meta is not on the expected device cpu!")


def _index_strides(t: Tensor) -> tuple:
    """Element strides of an index tensor as the kernels read it: int64 ones as they are,
    others through their int64 copy (dense layouts kept, others in the input's dim order)."""
    a = t._a
    if t.dtype is _int64 or is_dense(a.shape, elem_strides(a)):
        return elem_strides(a)
    return _dispatch.result_strides((t,), a.shape) or contiguous_strides(a.shape)


def _dense_range(shape, strides, off: int):
    """[start, end) element range of a non-overlapping, dense geometry, else None."""
    if not is_dense(shape, strides):
        return None
    n = 1
    for s in shape:
        n *= s
    return off, off + n


def check_overlap(dst: Tensor, dgeom: tuple, src: Tensor, full_ok: bool = True) -> bool:
    """torch's overlap check of a copy into ``dst``'s storage at ``dgeom`` (shape, strides,
    offset) from ``src``: partly overlapping dense ranges raise; the result says whether the
    kernel must read a copy of ``src`` first (they may share memory)."""
    if src._st is not dst._st:
        return False
    sa = src._a
    rd = _dense_range(*dgeom)
    rs = _dense_range(sa.shape, elem_strides(sa), _offset(src))
    if rd is not None and rs is not None:
        if full_ok and rd == rs and tuple(dgeom[1]) == tuple(elem_strides(sa)):
            return False
        if rd[0] < rs[1] and rs[0] < rd[1]:
            raise RuntimeError(
                "unsupported operation: some elements of the input tensor and the written-to "
                "tensor refer to a single memory location. Please clone() the tensor before "
                "performing the operation.")
        return False
    return True


# -- parsed indices ---------------------------------------------------------------------------

class Arg:
    """An index item that is tensor ``k`` of the call's index tensors (``args[1 + k]``)."""

    __slots__ = ("k",)

    def __init__(self, k: int) -> None:
        self.k = k

    def __repr__(self) -> str:
        return f"Arg({self.k})"


class BoolArg(Arg):
    """A Python bool index: a new size-1 dim indexed by tensor ``k`` (one or no zeros)."""

    __slots__ = ()


def _consumed(it, tensors) -> int:
    if it is None or it is Ellipsis or it.__class__ is bool or it.__class__ is BoolArg:
        return 0
    if it.__class__ is Arg:
        t = tensors[it.k]
        return t._a.ndim if t.dtype in _MASKS else 1
    return 1


def basic(x: Tensor, items: tuple, tensors: tuple = ()) -> tuple:
    """Apply ints/slices/None/Ellipsis (and Python bools) in torch's order: (shape, strides,
    offset) of the view, and [(dim, k)] for the advanced (tensor) items."""
    a = x._a
    isz = a.itemsize
    shape = list(a.shape)
    st = [s // isz for s in a.strides]
    off = _offset(x)
    nd = len(shape)
    spec = 0
    for it in items:
        c = it.__class__
        if c is int or c is slice:
            spec += 1
        elif it is not None and it is not Ellipsis:
            spec += _consumed(it, tensors)
    if spec > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    dim = 0
    adv = []
    ellipsis = False
    for real, it in enumerate(items):
        c = it.__class__
        if c is int:
            n = shape[dim]
            if not -n <= it < n:
                raise IndexError(f"index {it} is out of bounds for dimension {real} with size {n}")
            off += (it + n if it < 0 else it) * st[dim]
            del shape[dim], st[dim]
        elif c is slice:
            step = 1 if it.step is None else it.step.__index__()
            if step == 0:
                raise ValueError("slice step cannot be zero")
            if step < 0:
                raise ValueError("step must be greater than zero")
            start, stop, _ = slice(it.start, it.stop, step).indices(shape[dim])
            shape[dim] = len(range(start, stop, step))
            off += start * st[dim]
            st[dim] *= step
            dim += 1
        elif it is None or c is BoolArg:
            st.insert(dim, shape[dim] * st[dim] if dim < len(shape) else 1)
            shape.insert(dim, 1)
            if c is BoolArg:
                adv.append((dim, it.k))
            dim += 1
        elif it is Ellipsis:
            if not ellipsis:
                dim += nd - spec
                ellipsis = True
        else:  # Arg
            t = tensors[it.k]
            if t.dtype not in _MASKS and t.dtype not in _INT_INDEX:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            adv.append((dim, it.k))
            dim += _consumed(it, tensors)
    return shape, st, off, adv


def check_masks(x: Tensor, items: tuple, tensors: tuple) -> list:
    """The argument checks of an index holding boolean masks, before the masks become
    coordinates (``nonzero``): [(item position, dim)] of each mask."""
    shape, _, _, adv = basic(x, items, tensors)
    found = []
    for dim, k in adv:
        t = tensors[k]
        if t.dtype in _MASKS:
            ms = t._a.shape
            for j in range(len(ms)):
                if ms[j] != shape[dim + j]:
                    raise IndexError(f"The shape of the mask {list(ms)} at index {j} does not "
                                     f"match the shape of the indexed tensor {list(shape)} at "
                                     f"index {dim + j}")
            found.append(k)
    return found


def _zero_dim_check(index) -> None:
    if index.__class__ is slice:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if index.__class__ is int:
        raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                         "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")


def _advanced(vshape: list, adv: list, tensors: tuple) -> dict:
    """Where an advanced index reads: the broadcast index shape, the dims it replaces and
    the result's shape and strides (torch's index kernel follows the operands' layout)."""
    idx = [tensors[k] for _, k in adv]
    try:
        bshape = tuple(broadcast_shapes(*[t._a.shape for t in idx]))
    except RuntimeError:
        shapes = ", ".join(str(list(t._a.shape)) for t in idx)
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together "
                         f"with shapes {shapes}") from None
    dims = [d for d, _ in adv]
    rest = [d for d in range(len(vshape)) if d not in dims]
    adjacent = dims == list(range(dims[0], dims[-1] + 1))
    pos = sum(1 for d in rest if d < dims[0]) if adjacent else 0
    rshape = [vshape[d] for d in rest]
    out_shape = tuple(rshape[:pos]) + bshape + tuple(rshape[pos:])
    istrides = [bcast_strides(t._a.shape, _index_strides(t), bshape) for t in idx]
    return {"bshape": bshape, "pos": pos, "rest": rest, "out_shape": out_shape,
            "istrides": istrides}


def _result_strides(g: dict, vst: list) -> tuple:
    nb, pos = len(g["bshape"]), g["pos"]
    rest_st = [vst[d] for d in g["rest"]]
    src = rest_st[:pos] + [0] * nb + rest_st[pos:]
    nrest = len(g["rest"])
    ops = [src] + [[0] * pos + list(st) + [0] * (nrest - pos) for st in g["istrides"]]
    shape = g["out_shape"]
    out = [0] * len(shape)
    acc = 1
    for d in iter_order(shape, ops):
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


_NONE_TYPE = type(None)


def _index_cpu_view(a, *, index, items=None):
    """``x[i]`` (in range) and ``x[a:b]`` (int or None bounds) of a CPU array: NumPy's basic
    indexing makes the view ``_index_meta`` describes. Not a stepped slice: NumPy gives an
    empty one other strides than torch."""
    c = index.__class__
    if c is slice:
        if a.ndim and index.step is None and index.start.__class__ in _BOUNDS \
                and index.stop.__class__ in _BOUNDS:
            return a[index]
    elif c is int and a.ndim and -a.shape[0] <= index < a.shape[0]:
        return a[index, ...]
    return None


_BOUNDS = (int, _NONE_TYPE)


def _index_meta(x: Tensor, *tensors, index, items=None) -> Plan:
    if items is None:  # ints, slices, None and Ellipsis only: a view
        if index.__class__ is not tuple:  # x[i], x[a:b:c]: the commonest views, spelled out
            a = x._a
            shape = a.shape
            if not shape:
                _zero_dim_check(index)
            isz = a.itemsize
            strides = a.strides
            n = shape[0]
            s0 = strides[0] // isz
            nd = len(shape)
            rest = () if nd == 1 else (strides[1] // isz,) if nd == 2 else \
                tuple([s // isz for s in strides[1:]])
            if a.__class__ is _META:
                off, dev = a.offset, META
            else:
                dev = CPU
                off = 0 if a.size == x._st.size and a.flags.c_contiguous else x.storage_offset()
            if index.__class__ is int:
                if not -n <= index < n:
                    raise IndexError(f"index {index} is out of bounds for dimension 0 with size "
                                     f"{n}")
                return Plan(View(shape[1:], rest, off + (index + n if index < 0 else index) * s0,
                                 0, None, (index, Ellipsis)), {"index": index}, dev)
            step = index.step
            if step is None:
                start, stop, _ = index.indices(n)
                length = stop - start if stop > start else 0
                return Plan(View((length,) + shape[1:], (s0,) + rest, off + start * s0, 0, None,
                                 index), {"index": index}, dev)
            step = step.__index__()
            if step == 0:
                raise ValueError("slice step cannot be zero")
            if step < 0:
                raise ValueError("step must be greater than zero")
            start, stop, _ = index.indices(n)
            return Plan(View((len(range(start, stop, step)),) + shape[1:], (s0 * step,) + rest,
                             off + start * s0), {"index": index}, dev)
        shape, st, off, adv = basic(x, index)
        return Plan(View(tuple(shape), tuple(st), off), {"index": index},
                    device_of(x))
    dev = device_of(x)
    _index_device(dev, *tensors)
    shape, st, off, adv = basic(x, items, tensors)
    if not adv:
        return Plan(View(tuple(shape), tuple(st), off), {"index": index}, dev)
    g = _advanced(shape, adv, tensors)
    g["v"], g["adv"] = (tuple(shape), tuple(st), off), adv
    return Plan(Out(g["out_shape"], x.dtype, _result_strides(g, st)),
                {"index": index, "geom": g}, dev)


def _bcast_check(vshape: tuple, shape: tuple, what: str | None, value: Tensor) -> None:
    """``value`` broadcasts to ``shape`` after its leading size-1 dims are dropped (torch's
    copy_/index_put_ rule), with torch's messages."""
    vs = _value_shape(vshape)
    try:
        if tuple(broadcast_shapes(vs, shape)) == tuple(shape):
            return
    except RuntimeError:
        pass
    if what is None:  # basic indexing copies with copy_'s expand rule and message
        _expand_error(value, vs, tuple(shape))
    raise RuntimeError(f"shape mismatch: value tensor of shape {list(vs)} cannot be broadcast "
                       f"to {what} of shape {list(shape)}")


def _value_shape(vs: tuple) -> tuple:
    i = 0
    while i < len(vs) and vs[i] == 1:  # torch drops all leading size-1 dims of the value
        i += 1
    return tuple(vs[i:])


def _expand_error(value: Tensor, vs: tuple, size: tuple) -> None:
    """copy_'s expand error for a value of shape ``vs`` (leading 1s dropped) into ``size``."""
    nd, tnd = len(size), len(vs)
    if nd < tnd:
        d = value.dtype
        name = f"CPU{_tname(d)}Type" if d is _dt.bool or d.is_complex else f"torch.{d._legacy}"
        raise RuntimeError(
            f"expand({name}{{{list(vs)}}}, size={list(size)}): the number "
            f"of sizes provided ({nd}) must be greater or equal to the number of dimensions in "
            f"the tensor ({tnd})")
    for i in range(tnd - 1, -1, -1):
        j = nd - tnd + i
        if vs[i] != 1 and vs[i] != size[j]:
            raise RuntimeError(
                f"The expanded size of the tensor ({size[j]}) must match the existing size "
                f"({vs[i]}) at non-singleton dimension {j}.  Target sizes: {list(size)}.  Tensor "
                f"sizes: {list(vs)}")


def _index_put_meta(x: Tensor, values, *tensors, items=None, accumulate: bool = False,
                    setitem: bool = False, index=None, value=None) -> Plan:
    """``x[index] = values`` (``setitem``; ``values`` None writes the scalar ``value``) or
    ``x.index_put_(tensors, values, accumulate)``."""
    if setitem:
        _check_inplace(x)
        if x._a.ndim == 0 and index.__class__ is not tuple:
            _zero_dim_check(index)
    dev = device_of(x)
    if values is not None and dev is CPU and device_of(values) is META:
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    _index_device(dev, *tensors)
    if items is None:
        items = tuple(Arg(k) for k in range(len(tensors)))
    shape, st, off, adv = basic(x, items, tensors)
    g = _advanced(shape, adv, tensors) if adv else None
    target = g["out_shape"] if adv else tuple(shape)
    copy_src = False
    if values is not None:
        if setitem and not adv:
            _bcast_check(values._a.shape, tuple(shape), None, values)
        else:
            _bcast_check(values._a.shape, target, "indexing result", values)
        if not setitem and values.dtype is not x.dtype:
            raise RuntimeError(f"Index put requires the source and destination dtypes match, "
                               f"got {_tname(x.dtype)} for the destination and "
                               f"{_tname(values.dtype)} for the source.")
        if not setitem:
            _check_inplace(x)
        whole = not setitem or adv
        dgeom = (x._a.shape, elem_strides(x._a), _offset(x)) if whole else (shape, st, off)
        copy_src = check_overlap(x, dgeom, values, full_ok=not whole)
    if accumulate and x.dtype.is_complex and adv:
        raise NotImplementedError(f"reducing scatter/index ops are not implemented for "
                                  f"{_tname(x.dtype)}")
    geom = {"v": (tuple(shape), tuple(st), off), "adv": adv, "adv_geom": g, "value": value,
            "copy_src": copy_src}
    kw = {"index": index, "_put": geom} if setitem else {"accumulate": accumulate, "_put": geom}
    return Plan(Inplace(0), kw, dev)


# -- gather / scatter family ----------------------------------------------------------------

def _check_int_index(index, msg: str) -> None:
    if not isinstance(index, Tensor):
        raise TypeError(f"expected Tensor for index, got {type(index).__name__}")
    if index.dtype not in _INT_INDEX:
        raise RuntimeError(msg)


def _gather_meta(x: Tensor, index: Tensor, *, dim, wrap: bool = False) -> Plan:
    _check_int_index(index, "gather(): Expected dtype int32/int64 for index")
    nd = x._a.ndim
    d = wrap_dim(dim, nd)
    ind = index._a.ndim
    if ind != nd and not (nd <= 1 and ind <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    ishape, xshape = index._a.shape, x._a.shape
    for k in range(min(nd, ind)):
        if k != d and ishape[k] > xshape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index "
                               f"{list(ishape)} to be no larger than self {list(xshape)} apart "
                               f"from dimension {d}")
    dev = device_of(x)
    _index_device(dev, index)
    return Plan(Out(ishape, x.dtype), {"dim": d, "wrap": True} if wrap else {"dim": d}, dev)


def _scatter_check(x: Tensor, d: int, index: Tensor, src, name: str) -> None:
    nd = x._a.ndim
    if index._a.ndim != nd and not (nd <= 1 and index._a.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if isinstance(src, Tensor):
        if src._a.ndim != index._a.ndim and not (src._a.ndim <= 1 and index._a.ndim <= 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src "
                               "tensor")
        if src.dtype is not x.dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    ish, ssh = index._a.shape, x._a.shape
    bad = any(k != d and ish[k] > ssh[k] for k in range(min(len(ish), len(ssh))))
    if isinstance(src, Tensor):
        srcsh = src._a.shape
        if bad or any(ish[k] > srcsh[k] for k in range(min(len(ish), len(srcsh)))):
            raise RuntimeError(f"Expected index {list(ish)} to be no larger than self "
                               f"{list(ssh)} apart from dimension {d} and to be no larger size "
                               f"than src {list(srcsh)}")
    elif bad:
        raise RuntimeError(f"Expected index {list(ish)} to be no larger than self {list(ssh)} "
                           f"apart from dimension {d}")


def _reducing(x: Tensor, reducing: bool) -> None:
    if reducing and x.dtype.is_complex:
        raise NotImplementedError(f"reducing scatter/index ops are not implemented for "
                                  f"{_tname(x.dtype)}")


def _written(x: Tensor, inplace: bool, dev, kw: dict, *others) -> Plan:
    """The plan of a family member that writes into ``x`` (in place) or into a fresh
    C-contiguous copy of it."""
    if inplace:
        _check_inplace(x)
        return Plan(Inplace(0), kw, dev)
    return Plan(Out(x._a.shape, x.dtype), kw, dev)


_SCATTER_REDUCE = (None, "add", "multiply")


def _scatter_meta(x: Tensor, index: Tensor, src=None, *, dim, value=None, reduce=None,
                  inplace: bool = False) -> Plan:
    """scatter / scatter_ (``src`` a tensor, or the scalar ``value``; ``reduce`` add/multiply)."""
    _check_int_index(index, "scatter(): Expected dtype int32/int64 for index")
    if reduce not in _SCATTER_REDUCE:
        raise RuntimeError("reduce argument must be either add or multiply.")
    d = wrap_dim(dim, x._a.ndim)
    _scatter_check(x, d, index, src if src is not None else value, "scatter")
    dev = common_device(x, src)
    _index_device(dev, index)
    _reducing(x, reduce is not None)
    return _written(x, inplace, dev, {"dim": d, "reduce": reduce, "value": value})


def _scatter_add_meta(x: Tensor, index: Tensor, src: Tensor, *, dim,
                      inplace: bool = False) -> Plan:
    _check_int_index(index, "scatter(): Expected dtype int32/int64 for index")
    d = wrap_dim(dim, x._a.ndim)
    _scatter_check(x, d, index, src, "scatter")
    dev = common_device(x, src)
    _index_device(dev, index)
    _reducing(x, True)
    return _written(x, inplace, dev, {"dim": d})


_REDUCE_MODES = ("sum", "prod", "mean", "amax", "amin")


def _scatter_reduce_meta(x: Tensor, index: Tensor, src: Tensor, *, dim, reduce: str,
                         include_self: bool = True, inplace: bool = False) -> Plan:
    _check_int_index(index, "scatter(): Expected dtype int32/int64 for index")
    if reduce not in _REDUCE_MODES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    d = wrap_dim(dim, x._a.ndim)
    _scatter_check(x, d, index, src, "scatter_reduce")
    dev = common_device(x, src)
    _index_device(dev, index)
    _reducing(x, True)
    return _written(x, inplace, dev, {"dim": d, "reduce": reduce, "include_self": include_self})


def _vector_index(index: Tensor, name: str) -> None:
    if index._a.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")


def _index_select_meta(x: Tensor, index: Tensor, *, dim) -> Plan:
    _check_int_index(index, "index_select(): Expected dtype int32 or int64 for index")
    _vector_index(index, "index_select")
    nd = x._a.ndim
    d = wrap_dim(dim, nd)
    k = index._a.size
    shape = list(x._a.shape)
    if nd:
        shape[d] = k
    if nd == 0 and k != 1:  # a 0-d input gives a 0-d result (one index, 0-d or 1-D)
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {k} "
                           "value(s)")
    if nd and x._a.shape[d] == 0 and k:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    dev = device_of(x)
    _index_device(dev, index)
    return Plan(Out(tuple(shape), x.dtype), {"dim": d}, dev)


def _index_source_check(x: Tensor, d: int, index: Tensor, source: Tensor, name: str) -> None:
    nd = x._a.ndim
    k = index._a.size
    ssize = source._a.shape[d] if source._a.ndim else 1
    if name == "index_add_":
        if k != ssize:
            raise RuntimeError(f"index_add_(): Number of indices ({k}) should be equal to "
                               f"source.size(dim): ({ssize}), for dim: {d}")
    elif k != ssize:
        raise IndexError(f"{name}(): Number of indices ({k}) should be equal to "
                         f"source.size(dim) ({ssize})")
    mismatch = source._a.ndim != nd or any(
        a != b for i, (a, b) in enumerate(zip(x._a.shape, source._a.shape)) if i != d)
    if mismatch and not (name == "index_copy_" and nd <= 1 and source._a.ndim <= 1):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(x._a.shape)} "
                           f"source.shape = {list(source._a.shape)}")


def _overlap_src(x: Tensor, source: Tensor) -> bool:
    return check_overlap(x, (x._a.shape, elem_strides(x._a), _offset(x)), source, full_ok=False)


def _index_add_meta(x: Tensor, index: Tensor, source: Tensor, *, dim, alpha=1,
                    inplace: bool = False) -> Plan:
    _check_int_index(index, f"index_add_(): Expected dtype int32/int64 for index but got: "
                            f"{_tname(index.dtype) if isinstance(index, Tensor) else ''}")
    _vector_index(index, "index_add_")
    d = wrap_dim(dim, x._a.ndim)
    if source.dtype is not x.dtype:
        raise RuntimeError(f"index_add_(): self ({_tname(x.dtype)}) and source "
                           f"({_tname(source.dtype)}) must have the same scalar type")
    _index_source_check(x, d, index, source, "index_add_")
    dev = common_device(x, source)
    _index_device(dev, index)
    _reducing(x, True)
    plan = _written(x, inplace, dev, {"dim": d, "alpha": alpha})
    plan.kw["_copy_src"] = inplace and _overlap_src(x, source)
    return plan


def _index_copy_meta(x: Tensor, index: Tensor, source: Tensor, *, dim,
                     inplace: bool = False) -> Plan:
    if not isinstance(index, Tensor) or index.dtype is not _int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{_tname(index.dtype)}")
    _vector_index(index, "index_copy_")
    d = wrap_dim(dim, x._a.ndim)
    if source.dtype is not x.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, "
                           f"but got (self) {_tname(x.dtype)} and (source) "
                           f"{_tname(source.dtype)}")
    _index_source_check(x, d, index, source, "index_copy_")
    dev = common_device(x, source)
    _index_device(dev, index)
    plan = _written(x, inplace, dev, {"dim": d})
    plan.kw["_copy_src"] = inplace and _overlap_src(x, source)
    return plan


def _index_fill_meta(x: Tensor, index: Tensor, value_t=None, *, dim, value=None,
                     inplace: bool = False) -> Plan:
    """index_fill(_) with a scalar ``value`` or a 0-d tensor ``value_t``."""
    if not isinstance(index, Tensor) or index.dtype is not _int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    _vector_index(index, "index_fill_")
    if value_t is not None and value_t._a.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value_t._a.ndim} dimension(s).")
    d = wrap_dim(dim, x._a.ndim)
    dev = device_of(x)
    _index_device(dev, index)
    kw = {"dim": d, "value": value if value_t is None else value_t}
    if inplace:
        _check_inplace(x)
        return Plan(Inplace(0), kw, dev)
    return Plan(Out(x._a.shape, x.dtype, _like_strides(x)), kw, dev)


def _like_strides(x: Tensor):
    """clone's (preserve_format) element strides of ``x``: its own when dense, else in its
    dimension order; None when C-contiguous."""
    a = x._a
    if a.flags.c_contiguous:
        return None
    st = elem_strides(a)
    if is_dense(a.shape, st):
        return st
    return _dispatch.result_strides((x,), a.shape)


# -- masked ops -----------------------------------------------------------------------------

def _mask_check(mask, name: str, kind: str = "name") -> None:
    if not isinstance(mask, Tensor):
        raise TypeError(f"{name}(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    if mask.dtype is not _dt.bool:
        n = mask.dtype.cpp_name if kind == "cpp" else _tname(mask.dtype)
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype {n}")


def _masked_fill_meta(x: Tensor, mask: Tensor, value_t=None, *, value=None,
                      inplace: bool = False) -> Plan:
    """masked_fill(_) with a scalar ``value`` or a 0-d tensor ``value_t``."""
    _mask_check(mask, "masked_fill_", "cpp")
    if value_t is not None and value_t._a.ndim:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value_t._a.ndim} dimension(s).")
    kw = {"value": value if value_t is None else value_t}
    if inplace:
        shape = tuple(broadcast_shapes(x._a.shape, mask._a.shape))
        if shape != tuple(x._a.shape):
            raise RuntimeError(f"output with shape {list(x._a.shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
        _check_inplace(x)
        return Plan(Inplace(0), kw, common_device(x, mask))
    shape = tuple(broadcast_shapes(mask._a.shape, x._a.shape))  # torch's order (its message)
    return Plan(Out(shape, x.dtype), kw, common_device(x, mask))


def _masked_select_meta(x: Tensor, mask: Tensor) -> Plan:
    if not isinstance(mask, Tensor) or mask.dtype is not _dt.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    broadcast_shapes(x._a.shape, mask._a.shape)
    return Plan(None, {}, common_device(x, mask))


def _masked_scatter_meta(x: Tensor, mask: Tensor, source: Tensor, *,
                         inplace: bool = False) -> Plan:
    _mask_check(mask, "masked_scatter_")
    if inplace:
        if source.dtype is not x.dtype:
            raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes "
                               f"but got{_tname(x.dtype)} and {_tname(source.dtype)}")
        shape = tuple(broadcast_shapes(x._a.shape, mask._a.shape))
        if shape != tuple(x._a.shape):
            raise RuntimeError(f"output with shape {list(x._a.shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
        _check_inplace(x)
        return Plan(Inplace(0), {}, common_device(x, mask, source))
    shape = tuple(broadcast_shapes(x._a.shape, mask._a.shape))
    if source.dtype is not x.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but "
                           f"got{_tname(x.dtype)} and {_tname(source.dtype)}")
    return Plan(Out(shape, x.dtype), {}, common_device(x, mask, source))


# -- take / put / nonzero -------------------------------------------------------------------

def _take_meta(x: Tensor, index: Tensor) -> Plan:
    if not isinstance(index, Tensor) or index.dtype is not _int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_tname(index.dtype)}")
    if x._a.size == 0 and index._a.size:
        raise IndexError("take(): tried to take from an empty tensor")
    dev = device_of(x)
    _index_device(dev, index)
    return Plan(Out(index._a.shape, x.dtype), {}, dev)


def _put_meta(x: Tensor, index: Tensor, source: Tensor, *, accumulate: bool = False,
              inplace: bool = False) -> Plan:
    if not isinstance(index, Tensor) or index.dtype is not _int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{_tname(index.dtype)}")
    if source.dtype is not x.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_tname(x.dtype)} and source.dtype = "
                           f"{_tname(source.dtype)}")
    if index._a.size != source._a.size:
        raise RuntimeError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source._a.size}, "
                           f"index.numel() = {index._a.size}")
    dev = common_device(x, source)
    _index_device(dev, index)
    _reducing(x, accumulate)
    kw = {"accumulate": accumulate}
    if inplace:
        _check_inplace(x)
        return Plan(Inplace(0), kw, dev)
    return Plan(Out(x._a.shape, x.dtype, _like_strides(x)), kw, dev)


def _nonzero_meta(x: Tensor) -> Plan:
    return Plan(None, {}, device_of(x))


# -- embedding ------------------------------------------------------------------------------

def _embedding_meta(weight: Tensor, indices: Tensor, *, padding_idx=None,
                    scale_grad_by_freq: bool = False, sparse: bool = False) -> Plan:
    if not isinstance(indices, Tensor) or indices.dtype not in _INT_INDEX:
        name = indices.type() if isinstance(indices, Tensor) else type(indices).__name__
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {name} instead (while "
                           f"checking arguments for embedding)")
    if weight._a.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    n = weight._a.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < n, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -n, "Padding_idx must be within num_embeddings"
            padding_idx += n
    dev = common_device(weight, indices)
    return Plan(Out(tuple(indices._a.shape) + (weight._a.shape[1],), weight.dtype),
                {"padding_idx": padding_idx, "scale_grad_by_freq": scale_grad_by_freq,
                 "sparse": sparse}, dev)


def _embedding_dense_backward_meta(grad: Tensor, indices: Tensor, *, num_weights: int,
                                   padding_idx) -> Plan:
    dim = grad._a.shape[-1] if grad._a.ndim else 1
    return Plan(Out((num_weights, dim), grad.dtype), {"num_weights": num_weights,
                                                      "padding_idx": padding_idx},
                common_device(grad, indices))


def _one_hot_meta(x: Tensor, *, num_classes: int) -> Plan:
    if not isinstance(x, Tensor) or x.dtype is not _int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    return Plan(Out(tuple(x._a.shape) + (num_classes,), _int64), {"num_classes": num_classes},
                device_of(x))


# -- the records ----------------------------------------------------------------------------
# Their operands and params are those of their meta rules above; the in-place forms are the
# same records called with ``inplace=True``.

def _extern(name: str, meta, kernel: str, **kw) -> OpDef:
    return op(name, "extern", meta, lazy(_K, kernel), **kw)


index_op = op("index", "movement", _index_meta, lazy(_K, "index_cpu"),  # Tensor.__getitem__
              cpu_view=_index_cpu_view)
index_put_op = _extern("index_put", _index_put_meta, "index_put_cpu")  # also __setitem__
gather_op = _extern("gather", _gather_meta, "gather_cpu")  # also take_along_dim (wrap=True)
scatter_op = _extern("scatter", _scatter_meta, "scatter_cpu")
scatter_add_op = _extern("scatter_add", _scatter_add_meta, "scatter_add_cpu")
scatter_reduce_op = _extern("scatter_reduce", _scatter_reduce_meta, "scatter_reduce_cpu")
# scatter_reduce_ in place: its gradient rule reads self's old values, which the kernel
# overwrites, so the in-place form is not recorded (the out-of-place one is)
scatter_reduce_inplace_op = _extern("scatter_reduce_", _scatter_reduce_meta,
                                    "scatter_reduce_cpu", differentiable=False)
index_select_op = _extern("index_select", _index_select_meta, "index_select_cpu")
index_add_op = _extern("index_add", _index_add_meta, "index_add_cpu")
index_copy_op = _extern("index_copy", _index_copy_meta, "index_copy_cpu")
index_fill_op = _extern("index_fill", _index_fill_meta, "index_fill_cpu")
masked_fill_op = _extern("masked_fill", _masked_fill_meta, "masked_fill_cpu")
masked_scatter_op = _extern("masked_scatter", _masked_scatter_meta, "masked_scatter_cpu")
masked_select_op = _extern("masked_select", _masked_select_meta, "masked_select_cpu",
                           data_dependent=True)
take_op = _extern("take", _take_meta, "take_cpu")
# put_/put: the flattened self written at an index (grads: not derived, as before)
put_op = _extern("put", _put_meta, "put_cpu", differentiable=False)
nonzero_op = _extern("nonzero", _nonzero_meta, "nonzero_cpu", differentiable=False,
                     data_dependent=True)
one_hot_op = _extern("one_hot", _one_hot_meta, "one_hot_cpu", differentiable=False)
embedding_op = _extern("embedding", _embedding_meta, "embedding_cpu")
# (grad, indices) -> the weight's gradient {num_weights, padding_idx}: torch's
# embedding_dense_backward, one pass over the looked-up rows (the first-order rule's; double
# backward composes index_add)
embedding_dense_backward_op = _extern("embedding_dense_backward",
                                      _embedding_dense_backward_meta,
                                      "embedding_dense_backward_cpu", differentiable=False)


# -- gradient rules: vjp(node, grad) in jtorch ops -------------------------------------------
# The gradient goes back through the same indices (torch's derivatives.yaml); every gradient
# op records for autograd itself, so create_graph gives second derivatives.

def _is_advanced_item(it) -> bool:
    if isinstance(it, Tensor):
        return it.dtype in _MASKS or it._a.ndim > 0
    return isinstance(it, (bool, np.bool_, list, tuple, np.ndarray))


def _is_advanced(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(_is_advanced_item(it) for it in items)


def _index_vjp(c, g):
    shape = c._meta[0][0]
    index = c.kw["index"]
    if not _is_advanced(index):
        return (embed(shape, g, index),)
    return (embed_flat(shape, g, positions(shape, g.device)[index]),)


def _full_slice(it: slice, n: int) -> bool:
    return it.step in (None, 1) and it.start in (None, 0) and (it.stop is None or it.stop >= n)


def _index_name(inputs: tuple, kw) -> str:
    """torch applies a basic index item by item: the node is the last op that did something
    (full slices are skipped inside a tuple); any tensor, list or bool index is an index op."""
    index = kw["index"]
    if isinstance(index, slice):
        return "SliceBackward0"
    items = index if isinstance(index, tuple) else (index,)
    if any(_is_advanced_item(it) for it in items):
        return "IndexBackward0"
    shape = inputs[0]._a.shape
    nd = len(shape)
    used = sum(1 for it in items if it is not None and it is not Ellipsis)
    name, dim = "AliasBackward0", 0
    for it in items:
        if it is None:
            name = "UnsqueezeBackward0"
        elif it is Ellipsis:
            dim += nd - used
        elif isinstance(it, slice):
            if not _full_slice(it, shape[dim]):
                name = "SliceBackward0"
            dim += 1
        else:
            name = "SelectBackward0"
            dim += 1
    return name


def _fit(r: Tensor, shape: tuple) -> Tensor:
    """A gradient computed for the index's extent, placed in a (larger) source's shape: the
    source elements the index does not reach get zero."""
    if r._a.shape == tuple(shape):
        return r
    return embed(shape, r, tuple(slice(0, n) for n in r._a.shape))


def _gather_vjp(c, g):
    shape = c._meta[0][0]
    d, index = c.kw["dim"], c.args[1]
    if c.kw.get("wrap"):  # take_along_dim: negative indices count from the end
        index = P.where(index < 0, index + (shape[d] if shape else 1), index)
    return (P.zeros(shape, g.dtype, g.device).scatter_add(d, index, g), None)


def _scatter_vjp(c, g):
    if c.kw["reduce"] is not None:
        raise RuntimeError("derivative for aten::scatter is not implemented")
    d, index = c.kw["dim"], c.args[1]
    gs = g.scatter(d, index, 0) if c.needs[0] else None
    if len(c.needs) < 3 or not c.needs[2]:
        return (gs, None)
    return (gs, None, _fit(g.gather(d, index), c._meta[2][0]))


def _scatter_add_vjp(c, g):
    gsrc = _fit(g.gather(c.kw["dim"], c.args[1]), c._meta[2][0]) if c.needs[2] else None
    return (g, None, gsrc)


def _scatter_reduce_vjp(c, g):
    """torch's scatter_reduce_backward (sum, prod, mean, amax, amin)."""
    kw = c.kw
    d, reduce, include_self = kw["dim"], kw["reduce"], kw["include_self"]
    x, index, src = c.args
    if reduce == "sum":
        gs, gsrc = g, g.gather(d, index)
    elif reduce == "prod":
        out = c.out
        masked_x = x.masked_fill(x == 0, 1)
        masked_x_res = masked_x.scatter_reduce(d, index, src, "prod", include_self=include_self)
        gs = g * masked_x_res / masked_x
        src_zero = src == 0
        zeros_per = P.zeros_like(x).scatter_add(d, index, src_zero.to(x.dtype)).gather(d, index)
        single_zero = src_zero & (zeros_per == 1)
        masked_src = src.masked_fill(single_zero, 1)
        masked_src_res = x.scatter_reduce(d, index, masked_src, "prod", include_self=include_self)
        gsrc = P.where(single_zero, (g * masked_src_res).gather(d, index),
                       (g * out).gather(d, index) / src.masked_fill(src_zero, 1))
    elif reduce == "mean":
        n = P.ones_like(g) if include_self else P.zeros_like(g)
        n = n.scatter_add(d, index, P.ones_like(src))
        n = n.masked_fill(n == 0, 1)
        gs = g / n
        gsrc = g.gather(d, index) / n.gather(d, index)
    else:  # amax / amin: the gradient is split evenly between the elements equal to the result
        out = c.out
        value = out.gather(d, index)
        x_is = (x == out).to(g.dtype)
        src_is = (src == value).to(g.dtype)
        share = g / x_is.scatter_add(d, index, src_is)
        gs = x_is * share
        gsrc = src_is * share.gather(d, index)
    if not include_self:
        gs = gs.scatter(d, index, 0)
    return (gs if c.needs[0] else None, None, _fit(gsrc, c._meta[2][0]) if c.needs[2] else None)


def _index_select_vjp(c, g):
    shape = c._meta[0][0]
    if not len(shape):  # a 0-d input: the one element was picked once
        return (g.sum().reshape(()), None)
    return (P.zeros(shape, g.dtype, g.device).index_add(c.kw["dim"], c.args[1], g), None)


def _index_add_vjp(c, g):
    gsrc = None
    if c.needs[2]:
        gsrc = g.index_select(c.kw["dim"], c.args[1]) if g._a.ndim else g
        alpha = c.kw["alpha"]
        if alpha != 1:
            gsrc = gsrc * alpha
    return (g, None, gsrc)


def _index_copy_vjp(c, g):
    d, index = c.kw["dim"], c.args[1]
    gs = g.index_fill(d, index, 0) if c.needs[0] else None
    gsrc = (g.index_select(d, index) if g._a.ndim else g) if c.needs[2] else None
    return (gs, None, gsrc)


def _index_fill_vjp(c, g):
    d, index = c.kw["dim"], c.args[1]
    gs = g.index_fill(d, index, 0) if c.needs[0] else None
    if len(c.needs) < 3 or not c.needs[2]:
        return (gs, None)
    # the value reaches each filled position once, whatever the duplicates in index
    hit = P.zeros(g._a.shape, _dt.bool, g.device).index_fill(d, index, True)
    return (gs, None, P.where(hit, g, 0.0).sum())


def _index_items(indices) -> tuple:
    """The index tuple ``index_put_`` applies (0-d integer indices are size-1 index tensors)."""
    return tuple(t if t._a.ndim or t.dtype in _MASKS else t.reshape(1) for t in indices)


def _to_value_shape(r: Tensor, vshape: tuple) -> Tensor:
    """Values broadcast to the indexed shape after their leading size-1 dims are dropped: give
    the gradient those dims back (the node sums the broadcast dims)."""
    if r._a.ndim < len(vshape):
        r = r.reshape((1,) * (len(vshape) - r._a.ndim) + r._a.shape)
    return r


def _index_put_vjp(c, g):
    """index_put(_) and ``self[index] = value``: self gets the gradient where it was not
    overwritten (all of it with accumulate), values the gradient at the indexed positions."""
    kw = c.kw
    if "index" in kw:  # recorded by __setitem__
        index, accumulate = kw["index"], False
    else:
        index, accumulate = _index_items(c.args[2:]), kw["accumulate"]
    gs = gv = None
    if c.needs[0]:
        if accumulate:
            gs = g
        else:
            gs = g.clone()
            gs[index] = 0
    if c.needs[1]:
        gv = _to_value_shape(g[index], c._meta[1][0])
    return (gs, gv) + (None,) * (len(c.needs) - 2)


def _masked_fill_vjp(c, g):
    mask = c.args[1]
    gs = g.masked_fill(mask, 0) if c.needs[0] else None
    if len(c.needs) < 3 or not c.needs[2]:
        return (gs, None)
    return (gs, None, P.where(mask, g, 0.0).sum())


def _masked_scatter_vjp(c, g):
    mask = c.args[1]
    gs = g.masked_fill(mask, 0) if c.needs[0] else None
    gsrc = None
    if c.needs[2]:
        sshape = c._meta[2][0]
        gsrc = g.masked_select(mask)
        missing = math.prod(sshape) - gsrc._a.size
        if missing > 0:
            gsrc = P.cat([gsrc, P.zeros((missing,), g.dtype, g.device)])
        gsrc = gsrc.reshape(sshape)
    return (gs, None, gsrc)


def _masked_select_vjp(c, g):
    mask = c.args[1]
    shape = broadcast_shapes(c._meta[0][0], mask._a.shape)
    return (P.zeros(shape, g.dtype, g.device).masked_scatter(mask, g), None)


def _take_vjp(c, g):
    return (embed_flat(c._meta[0][0], g, c.args[1]), None)


def _scatter_name(inputs: tuple, kw) -> str:
    return "ScatterBackward0" if len(inputs) > 2 else "ScatterBackward1"


def _embedding_vjp(c, g):
    weight_shape = c._meta[0][0]
    idx = c.args[1]
    kw = c.kw
    pad = kw["padding_idx"]
    if not (kw.get("sparse") or kw["scale_grad_by_freq"] or _dispatch.grad_state.enabled) and \
            g.device.type == "cpu" and g.dtype in _EMBED_GRAD:
        # one kernel, not zeros + index_add through dispatch (~55 us a call): the same sums
        return embedding_dense_backward_op(g, idx, num_weights=weight_shape[0],
                                           padding_idx=pad), None
    flat = idx.reshape(-1).to(_int64)
    g2 = g.reshape(-1, weight_shape[1])
    if kw.get("sparse"):
        return _embedding_sparse_grad(c, flat, g2, weight_shape), None
    if kw["scale_grad_by_freq"]:
        counts = flat.new_zeros(weight_shape[0]).index_add_(0, flat, flat.new_ones(flat.shape))
        g2 = g2 / counts.index_select(0, flat).unsqueeze(1).to(g2.dtype)
    if pad is not None:
        g2 = g2.masked_fill((flat == pad).unsqueeze(1), 0.0)
    gw = g.new_zeros(weight_shape).index_add(0, flat % weight_shape[0], g2)
    return gw, None


def _embedding_sparse_grad(c, flat: Tensor, g2: Tensor, weight_shape: tuple):
    """torch's embedding_sparse_backward: an uncoalesced COO gradient with a row per looked-up
    index (rows of ``padding_idx`` left out)."""
    from ...sparse._coo import sparse_coo_tensor

    if c.kw["scale_grad_by_freq"]:
        raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with sparse "
                           "gradients")
    pad = c.kw["padding_idx"]
    if pad is not None:
        keep = flat != pad
        flat, g2 = flat[keep], g2[keep]
    return sparse_coo_tensor(flat.reshape(1, -1), g2, weight_shape)


for _op, _rule, _saves, _name in [
    (index_op, _index_vjp, "", _index_name),
    (gather_op, _gather_vjp, "1", None),
    (scatter_op, _scatter_vjp, "1", _scatter_name),
    (scatter_add_op, _scatter_add_vjp, "1", None),
    (scatter_reduce_op, _scatter_reduce_vjp, "012o", None),
    (index_select_op, _index_select_vjp, "1", None),
    (index_add_op, _index_add_vjp, "1", None),
    (index_copy_op, _index_copy_vjp, "1", None),
    (index_fill_op, _index_fill_vjp, "1", None),
    (index_put_op, _index_put_vjp, "23456789", None),
    (masked_fill_op, _masked_fill_vjp, "1", None),
    (masked_scatter_op, _masked_scatter_vjp, "1", None),
    (masked_select_op, _masked_select_vjp, "1", None),
    (take_op, _take_vjp, "1", None),
    (embedding_op, _embedding_vjp, "1", None),
]:
    defvjp(_op, _rule, _saves, _name)
