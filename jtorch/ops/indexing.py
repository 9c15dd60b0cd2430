"""Indexing: ``Tensor.__getitem__``/``__setitem__`` (basic indexing gives views, advanced
indexing gathers/scatters), ``index_put_``, the gather/scatter family, masked ops, take,
nonzero.

Basic indices (ints, slices, None, Ellipsis) are applied in torch's order to a (shape,
strides, offset) triple, so the result is a view with torch's strides. Advanced indices
(integer tensors and lists, boolean masks, Python bools) are then turned into one int64
table of storage offsets (a kernel checks bounds and adds ``index * stride`` per index
tensor), and one gather kernel reads ``offset + position`` for each result element.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import dispatch
from .. import dtypes as _dt
from ..kernels.cpu import indexing as I
from ..kernels.cpu import movement as K
from ..kernels.defs import binary as B
from ..kernels.defs import movement as M
from ..shape import broadcast_shapes, contiguous_strides, iter_order, wrap_dim
from ..tensor import Tensor
from ._util import tensor_method
from .views import _contiguous_copy, expand, make_view, offset_of, reshape, strides_of

__all__ = [
    "argwhere",
    "gather",
    "index_add",
    "index_copy",
    "index_fill",
    "index_put",
    "index_select",
    "masked_fill",
    "masked_scatter",
    "masked_select",
    "nonzero",
    "scatter",
    "scatter_add",
    "scatter_reduce",
    "take",
    "take_along_dim",
]

_record = dispatch.record
_NO_CHECK = 1 << 62  # size passed to kernels when indices were checked already
_INT_INDEX = (_dt.int64, _dt.int32)
_MASKS = (_dt.bool, _dt.uint8)
# torch's C++ type names, used in a few of its messages.
_CPP_NAMES = {
    "bool": "bool", "uint8": "unsigned char", "int8": "signed char", "int16": "short int",
    "int32": "int", "int64": "long int", "float16": "c10::Half", "float32": "float",
    "float64": "double", "complex64": "c10::complex<float>", "complex128": "c10::complex<double>",
}


def _tname(d: _dt.dtype) -> str:
    return dispatch.torch_name(d)


def _long(t: Tensor) -> Tensor:
    if t.dtype is _dt.int64:
        return t
    from .conversion import cast

    return cast(t, _dt.int64)


def _ibuf(t: Tensor) -> tuple:
    """(int64 1-D buffer, element strides) of an index tensor."""
    return K.buffer(_long(t)._a, as_raw=False)


def _bcast_strides(shape: tuple, strides, target: tuple) -> list:
    off = len(target) - len(shape)
    out = [0] * len(target)
    for i, (n, s) in enumerate(zip(shape, strides)):
        if n != 1:
            out[off + i] = s
    return out


def _as_tensor(obj) -> Tensor:
    from .creation import tensor

    if isinstance(obj, Tensor):
        return obj
    if isinstance(obj, (list, tuple)) and len(obj) == 0:
        return tensor([], dtype=_dt.int64)
    return tensor(obj)


# -- parsing an index -----------------------------------------------------------------------

_SEQ_WARNING = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
    "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be "
    "interpreted as tensor index, x[torch.tensor(seq)], which will result either in an error or "
    "a different result"
)


def _items(index) -> tuple:
    """The index as a tuple of ints, slices, None, Ellipsis, bools and tensors."""
    if isinstance(index, tuple):
        items = index
    elif isinstance(index, list) and len(index) < 32 and any(
            isinstance(o, (list, tuple, np.ndarray, Tensor, slice)) or o is None or o is Ellipsis
            for o in index):
        warnings.warn(_SEQ_WARNING, UserWarning, stacklevel=3)
        items = tuple(index)
    else:
        items = (index,)
    out = []
    for it in items:
        if it is None or it is Ellipsis or isinstance(it, (slice, bool, Tensor)):
            out.append(it)
        elif isinstance(it, (np.bool_,)):
            out.append(bool(it))
        elif isinstance(it, (list, tuple, np.ndarray)):
            out.append(_as_tensor(it))
        elif isinstance(it, str):
            raise TypeError("new(): invalid data type 'str'")
        elif isinstance(it, (float, complex, np.floating)):
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                             f"Variables are valid indices (got {type(it).__name__})")
        else:
            try:
                out.append(it.__index__())
            except AttributeError:
                raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                                 f"byte Variables are valid indices (got {type(it).__name__})"
                                 ) from None
    return tuple(out)


def _consumed(it) -> int:
    if isinstance(it, Tensor):
        if it._a.ndim == 0:
            return 0 if it.dtype in _MASKS else 1
        return it._a.ndim if it.dtype in _MASKS else 1
    if it is None or it is Ellipsis or isinstance(it, bool):
        return 0
    return 1


def _apply_basic(self: Tensor, items: tuple) -> tuple:
    """Apply ints/slices/None/Ellipsis in order; returns (view, [(dim, index tensor)])."""
    shape, st = list(self._a.shape), list(strides_of(self))
    off = offset_of(self)
    nd = len(shape)
    spec = sum(_consumed(it) for it in items)
    if spec > nd:
        raise IndexError(f"too many indices for tensor of dimension {nd}")
    dim = 0
    adv = []
    ellipsis = False
    for real, it in enumerate(items):
        if isinstance(it, Tensor) and it._a.ndim == 0:
            if it.dtype in _MASKS:
                it = bool(it.item())
            elif it.dtype.category == 1:
                it = int(it.item())
        if it is None or isinstance(it, bool):
            st.insert(dim, shape[dim] * st[dim] if dim < len(shape) else 1)
            shape.insert(dim, 1)
            if isinstance(it, bool):
                adv.append((dim, Tensor._make(np.zeros(1 if it else 0, np.int64))))
            dim += 1
        elif it is Ellipsis:
            if not ellipsis:
                dim += nd - spec
                ellipsis = True
        elif isinstance(it, int):
            n = shape[dim]
            if not -n <= it < n:
                raise IndexError(f"index {it} is out of bounds for dimension {real} with size {n}")
            off += (it + n if it < 0 else it) * st[dim]
            del shape[dim], st[dim]
        elif isinstance(it, slice):
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
        else:
            if it.dtype not in _MASKS and it.dtype not in _INT_INDEX:
                raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
            adv.append((dim, it))
            dim += _consumed(it)
    return make_view(self, shape, st, off), adv


class _Plan:
    """Where an advanced index reads/writes: a table of storage offsets (shape ``bshape``)
    into the view ``v``, and the result layout (``istrides``: each index tensor's strides
    broadcast to ``bshape``, which decide the result's memory order as in torch)."""

    __slots__ = ("bshape", "istrides", "offs", "out_shape", "pos", "rest", "v")


def _result_strides(p: _Plan) -> tuple:
    """The strides torch's index kernel gives its result (it follows the operands' layout)."""
    nb, pos = len(p.bshape), p.pos
    vst = strides_of(p.v)
    rest_st = [vst[d] for d in p.rest]
    src = rest_st[:pos] + [0] * nb + rest_st[pos:]
    ops = [src] + [[0] * pos + list(st) + [0] * (len(p.rest) - pos) for st in p.istrides]
    shape = p.out_shape
    out = [0] * len(shape)
    acc = 1
    for d in iter_order(shape, ops):
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def _plan(v: Tensor, adv: list) -> _Plan:
    vshape, vst = v._a.shape, strides_of(v)
    idx = []
    for dim, t in adv:
        if t.dtype in _MASKS:
            for j in range(t._a.ndim):
                if t._a.shape[j] != vshape[dim + j]:
                    raise IndexError(f"The shape of the mask {list(t._a.shape)} at index {j} does not "
                                     f"match the shape of the indexed tensor {list(vshape)} at index "
                                     f"{dim + j}")
            coords = _nonzero_coords(t)
            for j in range(t._a.ndim):
                idx.append((dim + j, Tensor._make(coords[j])))
        else:
            idx.append((dim, t))
    try:
        bshape = broadcast_shapes(*[t._a.shape for _, t in idx])
    except RuntimeError:
        shapes = ", ".join(str(list(t._a.shape)) for _, t in idx)
        raise IndexError(f"shape mismatch: indexing tensors could not be broadcast together with "
                         f"shapes {shapes}") from None
    offs = np.zeros(bshape, np.int64)
    istrides = []
    for k, (d, t) in enumerate(idx):
        buf, ist = _ibuf(t)
        istrides.append(_bcast_strides(t._a.shape, ist, bshape))
        bad = I.add_offsets(offs, bshape, buf, 0, istrides[-1], vshape[d], vst[d])
        if bad is not None:
            if vshape[d] == 0:
                raise IndexError("index is out of bounds for dimension with size 0")
            raise IndexError(f"index {bad} is out of bounds for dimension {k} with size {vshape[d]}")
    dims = [d for d, _ in idx]
    rest = [d for d in range(len(vshape)) if d not in dims]
    adjacent = dims == list(range(dims[0], dims[-1] + 1))
    pos = dims[0] if adjacent else 0
    rshape = [vshape[d] for d in rest]
    p = _Plan()
    p.v, p.bshape, p.offs, p.rest, p.istrides = v, bshape, offs, rest, istrides
    p.pos = sum(1 for d in rest if d < pos) if adjacent else 0
    p.out_shape = tuple(rshape[:p.pos]) + bshape + tuple(rshape[p.pos:])
    return p


def _iter_layout(p: _Plan, out_strides) -> tuple:
    """(iteration shape B + rest, out strides, v strides, offset-table strides) in that order."""
    nb = len(p.bshape)
    o = list(out_strides)
    it_out = o[p.pos:p.pos + nb] + o[:p.pos] + o[p.pos + nb:]
    vst = strides_of(p.v)
    vshape = p.v._a.shape
    it_shape = list(p.bshape) + [vshape[d] for d in p.rest]
    it_v = [0] * nb + [vst[d] for d in p.rest]
    it_i = list(contiguous_strides(p.bshape)) + [0] * len(p.rest)
    return it_shape, it_out, it_v, it_i


def _prepare(self: Tensor, index) -> tuple:
    if self._a.ndim == 0 and not isinstance(index, tuple):
        if isinstance(index, slice):
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        if isinstance(index, int) and not isinstance(index, bool):
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
    items = _items(index)
    v, adv = _apply_basic(self, items)
    return v, (_plan(v, adv) if adv else None)


def _gather_plan(p: _Plan) -> Tensor:
    from .creation import alloc_strided

    ost = _result_strides(p)
    out = alloc_strided(p.out_shape, ost, p.v.dtype)
    if out._a.size:
        it_shape, it_out, it_v, it_i = _iter_layout(p, ost)
        xb, _ = K.buffer(p.v._a)
        ob, _ = K.buffer(out._a)
        I.gather(it_shape, ob, 0, it_out, xb, 0, it_v, 1, p.offs.reshape(-1), 0, it_i,
                 _NO_CHECK, False)
    return out


def _fast_basic(self: Tensor, index):
    """ints and unit-step slices only: NumPy's slicing gives torch's view directly."""
    a = self._a
    items = index if type(index) is tuple else (index,)
    if len(items) > a.ndim:
        return None
    for k, it in enumerate(items):
        t = type(it)
        if t is int:
            n = a.shape[k]
            if not -n <= it < n:
                return None
        elif t is slice:
            # (NumPy keeps the unstepped stride on empty stepped slices; torch does not.)
            step = it.step
            if step is not None and not (type(step) is int and step == 1):
                return None
        else:
            return None
    return self._view(a[items + (Ellipsis,)])


def getitem(self: Tensor, index) -> Tensor:
    """``self[index]``: a view for basic indices, a gathered copy for advanced ones."""
    out = _fast_basic(self, index)
    if out is not None:
        return _record(M.index_op, (self,), out, {"index": index})
    v, p = _prepare(self, index)
    out = v if p is None else _gather_plan(p)
    return _record(M.index_op, (self,), out, {"index": index})


Tensor.__getitem__ = getitem


# -- writing through an index ---------------------------------------------------------------

def _dense_range(t: Tensor):
    """[start, end) element range of a non-overlapping, dense tensor in its storage, else None."""
    a = t._a
    dims = sorted((s, n) for n, s in zip(a.shape, strides_of(t)) if n != 1)
    expect = 1
    for s, n in dims:
        if s != expect:
            return None
        expect *= n
    start = offset_of(t)
    return start, start + a.size


def _check_overlap(dst: Tensor, src: Tensor, full_ok: bool = True) -> Tensor:
    """torch refuses overlapping dense copies (partial ones only, when ``full_ok``); other
    overlaps it cannot classify, and we clone the source first."""
    if not np.may_share_memory(dst._st, src._st):
        return src
    rd, rs = _dense_range(dst), _dense_range(src)
    if rd is not None and rs is not None and dst._st is src._st:
        if full_ok and rd == rs and dst._a.strides == src._a.strides:
            return src
        if rd[0] < rs[1] and rs[0] < rd[1]:
            raise RuntimeError(
                "unsupported operation: some elements of the input tensor and the written-to "
                "tensor refer to a single memory location. Please clone() the tensor before "
                "performing the operation."
            )
        return src
    from .conversion import clone

    return clone(src)


def _value_tensor(value, dtype: _dt.dtype) -> Tensor:
    from .conversion import cast
    from .creation import tensor

    if isinstance(value, Tensor):
        return value if value.dtype is dtype else cast(value, dtype)
    if isinstance(value, (list, tuple, np.ndarray)):
        return tensor(value, dtype=dtype)
    return None


def _bcast_value(value: Tensor, shape: tuple, what: str) -> np.ndarray:
    """``value`` as a 0-stride broadcast view of ``shape`` (leading size-1 dims dropped)."""
    vs = value._a.shape
    while vs and vs[0] == 1:  # torch drops all leading size-1 dims of the value
        vs = vs[1:]
    a = value._a.reshape(vs)
    try:
        if broadcast_shapes(vs, shape) != tuple(shape):
            raise RuntimeError
    except RuntimeError:
        if what is None:  # basic indexing copies with copy_'s expand rule and message
            from .views import _expand_geometry

            _expand_geometry(Tensor._make(a), tuple(shape))
        raise RuntimeError(f"shape mismatch: value tensor of shape {list(vs)} cannot "
                           f"be broadcast to {what} of shape {list(shape)}") from None
    st = _bcast_strides(vs, [s // a.itemsize for s in a.strides], tuple(shape))
    return np.lib.stride_tricks.as_strided(a, tuple(shape), [s * a.itemsize for s in st])


def _fill_view(v: Tensor, value) -> None:
    from .pointwise import _COPY

    dispatch.run_pointwise(_COPY, (value,), v._a, v.dtype)


def _put_plan(p: _Plan, value: Tensor, accumulate: bool) -> None:
    """Scatter ``value`` (broadcast to the indexing result) through the offset table."""
    src = _bcast_value(value, p.out_shape, "indexing result")
    if src.size == 0:
        return
    mode = _arith_mode(p.v.dtype, I.ADD) if accumulate else I.COPY
    raw = mode != I.ADD
    sb, sst = K.buffer(src, as_raw=raw)
    db, _ = K.buffer(p.v._a, as_raw=raw)
    it_shape, it_src, it_v, it_i = _iter_layout(p, sst)
    I.scatter(it_shape, db, 0, it_v, 1, p.offs.reshape(-1), 0, it_i, sb, 0, it_src, _NO_CHECK,
              False, mode)


def _arith_mode(d: _dt.dtype, mode: int) -> int:
    """Reducing scatters on bool are logical: add -> or (max), multiply -> and (min)."""
    if d.is_complex and mode != I.COPY:
        raise NotImplementedError(f"reducing scatter/index ops are not implemented for "
                                  f"{_tname(d)}")
    if d is _dt.bool:
        return {I.ADD: I.AMAX, I.MUL: I.AMIN}.get(mode, mode)
    return mode


def _via_float32(self: Tensor, fn, *others):
    """Run in-place arithmetic ``fn(self, *others)`` through float32 when self is float16."""
    if self.dtype is not _dt.float16:
        return fn(self, *others)
    from .conversion import cast

    tmp = cast(self, _dt.float32)
    fn(tmp, *[cast(o, _dt.float32) if isinstance(o, Tensor) and o.dtype is _dt.float16 else o
              for o in others])
    from .views import _copy_cast

    _copy_cast(self._a, self.dtype, tmp)
    return self


def setitem(self: Tensor, index, value) -> None:
    """``self[index] = value``: copy/fill into the view, or index_put for advanced indices."""
    from .pointwise import _check_inplace

    _check_inplace(self)
    v, p = _prepare(self, index)
    val = _value_tensor(value, self.dtype)
    if p is None:
        if val is None:
            _fill_view(v, value)
        else:
            val = _check_overlap(v, val)
            src = _bcast_value(val, v._a.shape, None)
            if v._a.size:
                K.copy_array(K.raw(v._a), K.raw(src))
    else:
        if val is None:
            val = _scalar_tensor(value, self.dtype)
        else:
            val = _check_overlap(self, val, full_ok=False)
        _put_plan(p, val, False)
    dispatch.bump_version(self)
    _record(M.index_put_op, (self, val if val is not None else value), self, {"index": index})


def _scalar_tensor(value, dtype: _dt.dtype) -> Tensor:
    a = np.empty((), dtype.np)
    tmp = Tensor._make(a)
    _fill_view(tmp, value)
    return tmp


Tensor.__setitem__ = setitem


@tensor_method()
def index_put_(self: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """self[indices] = values (``accumulate``: +=, duplicates summed) for a tuple of tensors."""
    from .pointwise import _check_inplace

    if not isinstance(values, Tensor):
        raise TypeError(f"index_put_(): argument 'values' (position 2) must be Tensor, not "
                        f"{type(values).__name__}")
    indices = tuple(indices)
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    # 0-d integer indices are advanced indices here (unlike in __getitem__): a size-1 dim.
    items = tuple(t if t._a.ndim or t.dtype in _MASKS else reshape(t, (1,)) for t in indices)
    v, adv = _apply_basic(self, items)
    p = _plan(v, adv) if adv else None
    _bcast_value(values, p.out_shape if adv else v._a.shape, "indexing result")
    if values.dtype is not self.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{_tname(self.dtype)} for the destination and {_tname(values.dtype)} "
                           "for the source.")
    _check_inplace(self)
    values = _check_overlap(self, values, full_ok=False)
    if not adv:
        if accumulate:
            from .pointwise import add_

            add_(v, values)
        else:
            K.copy_array(K.raw(v._a), K.raw(_bcast_value(values, v._a.shape, "indexing result")))
    elif accumulate:
        _via_float32(self, lambda s, x: _put_plan(
            p if s is self else _plan(*_apply_basic(s, items)), x, True), values)
    else:
        _put_plan(p, values, False)
    dispatch.bump_version(self)
    return _record(M.index_put_op, (self, values, *indices), self, {"accumulate": accumulate})


def index_put(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    from .conversion import clone

    return index_put_(clone(input), indices, values, accumulate)


Tensor.index_put = index_put


# -- gather / scatter family ----------------------------------------------------------------

def _check_int_index(index: Tensor, msg: str) -> None:
    if not isinstance(index, Tensor):
        raise TypeError(f"expected Tensor for index, got {type(index).__name__}")
    if index.dtype not in _INT_INDEX:
        raise RuntimeError(msg)


def _dim_strides(t: Tensor, d: int) -> tuple:
    """Strides of ``t`` with dim ``d`` zeroed, and the stride of ``d`` (0-d: a 1-elem dim)."""
    st = list(strides_of(t)) or [0]
    ds = st[d]
    st[d] = 0
    return st, ds


def gather(input: Tensor, dim: int, index: Tensor, *, sparse_grad: bool = False,
           out=None, _wrap: bool = False) -> Tensor:
    """out[i][j] = input[index[i][j]][j] (for dim 0): values picked along ``dim``.

    >>> jtorch.tensor([[1, 2], [3, 4]]).gather(1, jtorch.tensor([[1], [0]]))
    tensor([[2],
            [3]])
    """
    _check_int_index(index, "gather(): Expected dtype int32/int64 for index")
    nd = input._a.ndim
    d = wrap_dim(dim, nd)
    if index._a.ndim != nd and not (nd <= 1 and index._a.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    ishape, xshape = index._a.shape, input._a.shape
    for k in range(min(nd, index._a.ndim)):
        if k != d and ishape[k] > xshape[k]:
            raise RuntimeError(f"Size does not match at dimension {k} expected index {list(ishape)} "
                               f"to be no larger than self {list(xshape)} apart from dimension {d}")
    res = dispatch.empty_tensor(ishape, input.dtype)
    if res._a.size:
        xpos, xds = _dim_strides(input, d)
        n = xshape[d] if nd else 1
        xb, _ = K.buffer(input._a)
        ob, ost = K.buffer(res._a)
        ib, ist = _ibuf(index)
        if index._a.ndim != nd:
            xpos = xpos[:index._a.ndim]
        bad = I.gather(ishape, ob, 0, ost, xb, 0, xpos, xds, ib, 0, ist, n, _wrap)
        if bad is not None:
            raise RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")
    _record(M.gather_op, (input, index), res, {"dim": d, "wrap": True} if _wrap else {"dim": d})
    from .views import _finish

    return _finish(out, res, "gather")


Tensor.gather = lambda self, dim, index, *, sparse_grad=False: gather(self, dim, index)


def _scatter_check(self: Tensor, d: int, index: Tensor, src, name: str) -> None:
    nd = self._a.ndim
    if index._a.ndim != nd and not (nd <= 1 and index._a.ndim <= 1):
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    if isinstance(src, Tensor):
        if src._a.ndim != index._a.ndim and not (src._a.ndim <= 1 and index._a.ndim <= 1):
            raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")
        if src.dtype is not self.dtype:
            raise RuntimeError(f"{name}(): Expected self.dtype to be equal to src.dtype")
    ish, ssh = index._a.shape, self._a.shape
    bad = any(k != d and ish[k] > ssh[k] for k in range(min(len(ish), len(ssh))))
    if isinstance(src, Tensor):
        srcsh = src._a.shape
        if bad or any(ish[k] > srcsh[k] for k in range(min(len(ish), len(srcsh)))):
            raise RuntimeError(f"Expected index {list(ish)} to be no larger than self {list(ssh)} "
                               f"apart from dimension {d} and to be no larger size than src "
                               f"{list(srcsh)}")
    elif bad:
        raise RuntimeError(f"Expected index {list(ish)} to be no larger than self {list(ssh)} apart "
                           f"from dimension {d}")


def _scatter_run(self: Tensor, d: int, index: Tensor, src, mode: int, wrap: bool = False,
                 shape=None, istr=None, err=None) -> None:
    """The scatter kernel over ``shape`` (default: the index's shape) into self along ``d``."""
    mode = _arith_mode(self.dtype, mode)
    shape = index._a.shape if shape is None else shape
    dpos, dds = _dim_strides(self, d)
    n = self._a.shape[d] if self._a.ndim else 1
    ib, ist = _ibuf(index)
    if istr is not None:
        ist = istr
    raw = mode == I.COPY or self.dtype is _dt.bool
    if isinstance(src, Tensor) and src._a.ndim == 0:
        src = src.item()
    if isinstance(src, Tensor):
        sb, sst = K.buffer(src._a, as_raw=raw)
    else:
        sb, sst = _scalar_buf(src, self.dtype, raw), [0] * len(shape)
    db, _ = K.buffer(self._a, as_raw=raw)
    nd = len(shape)
    if nd:
        dpos, ist, sst = dpos[:nd], list(ist)[:nd], list(sst)[:nd]
    else:
        shape, dpos, ist, sst = (1,), [0], [0], [0]
    bad = I.scatter(shape, db, 0, dpos, dds, ib, 0, ist, sb, 0, sst, n, wrap, mode)
    if bad is not None:
        raise (err or _scatter_bounds)(bad, d, n)


def _scatter_bounds(bad, d, n):
    return RuntimeError(f"index {bad} is out of bounds for dimension {d} with size {n}")


def _scalar_buf(value, dtype: _dt.dtype, as_raw: bool) -> np.ndarray:
    if isinstance(value, Tensor):
        value = value.item()
    a = np.array(value).astype(dtype.np).reshape(1)
    return K.raw(a) if as_raw else a


_SCATTER_MODES = {None: I.COPY, "add": I.ADD, "multiply": I.MUL}


@tensor_method()
def scatter_(self: Tensor, dim: int, index: Tensor, src=None, value=None, *,
             reduce: str | None = None) -> Tensor:
    """self[index[i][j]][j] = src[i][j] (dim 0), or (op)= with ``reduce`` 'add'/'multiply'."""
    from .pointwise import _check_inplace

    if src is None:
        src = value
    _check_int_index(index, "scatter(): Expected dtype int32/int64 for index")
    if reduce not in _SCATTER_MODES:
        raise RuntimeError("reduce argument must be either add or multiply.")
    d = wrap_dim(dim, self._a.ndim)
    _scatter_check(self, d, index, src, "scatter")
    _check_inplace(self)
    mode = _SCATTER_MODES[reduce]
    if mode == I.COPY:
        _scatter_run(self, d, index, src, mode)
    else:
        _via_float32(self, lambda s, x: _scatter_run(s, d, index, x, mode), src)
    dispatch.bump_version(self)
    return self


def scatter(input: Tensor, dim: int, index: Tensor, src=None, value=None, *,
            reduce: str | None = None) -> Tensor:

    out = scatter_(_contiguous_copy(input), dim, index, src, value, reduce=reduce)
    return _record(M.scatter_op, (input, index) + ((src,) if isinstance(src, Tensor) else ()),
                   out, {"dim": dim, "reduce": reduce, "value": None if isinstance(
                       src, Tensor) else src if src is not None else value})


Tensor.scatter = scatter


@tensor_method()
def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    from .pointwise import _check_inplace

    _check_int_index(index, "scatter(): Expected dtype int32/int64 for index")
    d = wrap_dim(dim, self._a.ndim)
    _scatter_check(self, d, index, src, "scatter")
    _check_inplace(self)
    _via_float32(self, lambda s, x: _scatter_run(s, d, index, x, I.ADD), src)
    dispatch.bump_version(self)
    return self


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:

    out = scatter_add_(_contiguous_copy(input), dim, index, src)
    return _record(M.scatter_add_op, (input, index, src), out, {"dim": dim})


Tensor.scatter_add = scatter_add

_REDUCE_MODES = {"sum": I.ADD, "prod": I.MUL, "mean": I.ADD, "amax": I.AMAX, "amin": I.AMIN}


def _identity(reduce: str, d: _dt.dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if d.is_floating_point:
        return float("-inf") if reduce == "amax" else float("inf")
    if d is _dt.bool:
        return reduce == "amin"
    info = _dt.iinfo(d)
    return info.min if reduce == "amax" else info.max


@tensor_method()
def scatter_reduce_(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    """Reduce ``src`` into self at ``index`` along ``dim`` with sum/prod/mean/amax/amin."""
    from .pointwise import _check_inplace

    _check_int_index(index, "scatter(): Expected dtype int32/int64 for index")
    if reduce not in _REDUCE_MODES:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    d = wrap_dim(dim, self._a.ndim)
    _scatter_check(self, d, index, src, "scatter_reduce")
    _check_inplace(self)
    if not include_self:
        _scatter_run(self, d, index, _identity(reduce, self.dtype), I.COPY)
    _via_float32(self, lambda s, x: _scatter_run(s, d, index, x, _REDUCE_MODES[reduce]), src)
    if reduce == "mean":
        from .creation import full
        from .pointwise import div

        count = full(self._a.shape, 1 if include_self else 0, dtype=self.dtype)
        _scatter_run(count, d, index, 1, I.ADD)
        count.masked_fill_(count == 0, 1)
        floor = "floor" if self.dtype.category < 2 else None
        _copy_result(self, div(self, count, rounding_mode=floor))
    dispatch.bump_version(self)
    return self


def _copy_result(dst: Tensor, src: Tensor) -> None:
    from .views import _copy_cast

    _copy_cast(dst._a, dst.dtype, src)


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:

    out = scatter_reduce_(_contiguous_copy(input), dim, index, src, reduce, include_self=include_self)
    return _record(M.scatter_reduce_op, (input, index, src), out,
                   {"dim": dim, "reduce": reduce, "include_self": include_self})


Tensor.scatter_reduce = scatter_reduce


def _vector_index(index: Tensor, name: str) -> None:
    if index._a.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")


def index_select(input: Tensor, dim: int, index: Tensor, *, out=None) -> Tensor:
    """Rows (slices along ``dim``) of ``input`` picked by a 1-D ``index``."""
    _check_int_index(index, "index_select(): Expected dtype int32 or int64 for index")
    _vector_index(index, "index_select")
    nd = input._a.ndim
    d = wrap_dim(dim, nd)
    k = index._a.size
    shape = list(input._a.shape)
    if nd:
        shape[d] = k
    if nd == 0 and k != 1:  # a 0-d input gives a 0-d result (one index, 0-d or 1-D)
        raise RuntimeError(f"index_select(): Index to scalar can have only 1 value, got {k} "
                           "value(s)")
    if nd and input._a.shape[d] == 0 and k:
        raise RuntimeError("index_select(): self indexing axis dim should be positive")
    res = dispatch.empty_tensor(tuple(shape), input.dtype)
    if res._a.size:
        xpos, xds = _dim_strides(input, d)
        n = input._a.shape[d] if nd else 1
        ib, ist = _ibuf(index)
        istr = [0] * max(len(shape), 1)
        istr[d] = ist[0] if ist else 0
        xb, _ = K.buffer(input._a)
        ob, ost = K.buffer(res._a)
        it_shape = tuple(shape) or (1,)
        if not ost:
            ost = [0]
        bad = I.gather(it_shape, ob, 0, ost, xb, 0, xpos, xds, ib, 0, istr, n, False)
        if bad is not None:
            raise IndexError("index out of range in self")
    _record(M.index_select_op, (input, index), res, {"dim": d})
    from .views import _finish

    return _finish(out, res, "index_select")


Tensor.index_select = lambda self, dim, index: index_select(self, dim, index)


def _index_source_check(self: Tensor, d: int, index: Tensor, source: Tensor, name: str,
                        err_type=RuntimeError) -> None:
    nd = self._a.ndim
    k = index._a.size
    ssize = source._a.shape[d] if source._a.ndim else 1
    if name == "index_add_":
        if k != ssize:
            raise RuntimeError(f"index_add_(): Number of indices ({k}) should be equal to "
                               f"source.size(dim): ({ssize}), for dim: {d}")
    elif k != ssize:
        raise IndexError(f"{name}(): Number of indices ({k}) should be equal to source.size(dim) "
                         f"({ssize})")
    mismatch = source._a.ndim != nd or any(
        a != b for i, (a, b) in enumerate(zip(self._a.shape, source._a.shape)) if i != d)
    if mismatch and not (name == "index_copy_" and nd <= 1 and source._a.ndim <= 1):
        raise RuntimeError(f"source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(self._a.shape)} "
                           f"source.shape = {list(source._a.shape)}")


def _index_strides(index: Tensor, d: int, nd: int) -> list:
    ist = K.buffer(_long(index)._a, as_raw=False)[1]
    s = [0] * max(nd, 1)
    s[d] = ist[0] if ist else 0
    return s


@tensor_method()
def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """self[..., index[i], ...] += alpha * source[..., i, ...] along ``dim``."""
    from .pointwise import _check_inplace, mul

    _check_int_index(index, f"index_add_(): Expected dtype int32/int64 for index but got: "
                            f"{_tname(index.dtype) if isinstance(index, Tensor) else ''}")
    _vector_index(index, "index_add_")
    d = wrap_dim(dim, self._a.ndim)
    if source.dtype is not self.dtype:
        raise RuntimeError(f"index_add_(): self ({_tname(self.dtype)}) and source "
                           f"({_tname(source.dtype)}) must have the same scalar type")
    _index_source_check(self, d, index, source, "index_add_")
    _check_inplace(self)
    source = _check_overlap(self, source, full_ok=False)
    if alpha != 1:
        source = mul(source, alpha)
    istr = _index_strides(index, d, self._a.ndim)
    shape = source._a.shape or (1,)
    _via_float32(self, lambda s, x: _scatter_run(s, d, index, x, I.ADD, shape=shape, istr=istr),
                 source)
    dispatch.bump_version(self)
    return self


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:

    out = index_add_(_contiguous_copy(input), dim, index, source, alpha=alpha)
    return _record(M.index_add_op, (input, index, source), out, {"dim": dim, "alpha": alpha})


Tensor.index_add = index_add


@tensor_method()
def index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    from .pointwise import _check_inplace

    if not isinstance(index, Tensor) or index.dtype is not _dt.int64:
        raise RuntimeError(f"index_copy_(): Expected a long tensor for index, but got "
                           f"{_tname(index.dtype)}")
    _vector_index(index, "index_copy_")
    d = wrap_dim(dim, self._a.ndim)
    if source.dtype is not self.dtype:
        raise RuntimeError(f"index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {_tname(self.dtype)} and (source) {_tname(source.dtype)}")
    _index_source_check(self, d, index, source, "index_copy_")
    _check_inplace(self)
    source = _check_overlap(self, source, full_ok=False)
    istr = _index_strides(index, d, self._a.ndim)

    def err(bad, d, n):
        return IndexError(f"index_copy_(): index {bad} is out of bounds for dimension {d} with "
                          f"size {n}")

    _scatter_run(self, d, index, source, I.COPY, shape=source._a.shape or (1,), istr=istr,
                 err=err)
    dispatch.bump_version(self)
    return self


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:

    out = index_copy_(_contiguous_copy(input), dim, index, source)
    return _record(M.index_copy_op, (input, index, source), out, {"dim": dim})


Tensor.index_copy = index_copy


@tensor_method()
def index_fill_(self: Tensor, dim: int, index: Tensor, value) -> Tensor:
    from .pointwise import _check_inplace

    if not isinstance(index, Tensor) or index.dtype is not _dt.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    _vector_index(index, "index_fill_")
    if isinstance(value, Tensor) and value._a.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor "
                           f"with {value._a.ndim} dimension(s).")
    d = wrap_dim(dim, self._a.ndim)
    _check_inplace(self)
    shape = list(self._a.shape) or [1]
    shape[d] = index._a.size
    istr = _index_strides(index, d, self._a.ndim)

    def err(bad, d, n):
        return IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")

    _scatter_run(self, d, index, value, I.COPY, wrap=True, shape=tuple(shape), istr=istr, err=err)
    dispatch.bump_version(self)
    return self


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    from .conversion import clone

    out = index_fill_(clone(input), dim, index, value)
    inputs = (input, index, value) if isinstance(value, Tensor) else (input, index)
    return _record(M.index_fill_op, inputs, out, {"dim": dim, "value": value})


Tensor.index_fill = index_fill


# -- masked ops -----------------------------------------------------------------------------

def _mask_check(mask: Tensor, name: str, kind: str = "name") -> None:
    if not isinstance(mask, Tensor):
        raise TypeError(f"{name}(): argument 'mask' must be Tensor, not {type(mask).__name__}")
    if mask.dtype is not _dt.bool:
        n = _CPP_NAMES[mask.dtype.name] if kind == "cpp" else _tname(mask.dtype)
        raise RuntimeError(f"{name} only supports boolean masks, but got mask with dtype {n}")


def _masked_value(value, name: str):
    if isinstance(value, Tensor):
        if value._a.ndim:
            raise RuntimeError(f"{name} only supports a 0-dimensional value tensor, but got tensor "
                               f"with {value._a.ndim} dimension(s).")
        return value.item()
    return value


@tensor_method()
def masked_fill_(self: Tensor, mask: Tensor, value) -> Tensor:
    """self where ~mask, value where mask (mask broadcast to self's shape)."""
    from .pointwise import _check_inplace

    _mask_check(mask, "masked_fill_", "cpp")
    value = _masked_value(value, "masked_fill_")
    shape = broadcast_shapes(self._a.shape, mask._a.shape)
    if shape != self._a.shape:
        raise RuntimeError(f"output with shape {list(self._a.shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")
    _check_inplace(self)
    dispatch.run_pointwise(B.where_op, (value, self, mask), self._a, self.dtype)
    dispatch.bump_version(self)
    return self


def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    _mask_check(mask, "masked_fill_", "cpp")
    v = _masked_value(value, "masked_fill_")
    out = dispatch.empty_tensor(broadcast_shapes(mask._a.shape, input._a.shape), input.dtype)
    dispatch.run_pointwise(B.where_op, (v, input, mask), out._a, input.dtype)
    inputs = (input, mask, value) if isinstance(value, Tensor) else (input, mask)
    return _record(M.masked_fill_op, inputs, out, {"value": value})


Tensor.masked_fill = masked_fill


def masked_select(input: Tensor, mask: Tensor, *, out=None) -> Tensor:
    """The elements of ``input`` where ``mask`` (broadcast together), as a 1-D tensor."""
    if not isinstance(mask, Tensor) or mask.dtype is not _dt.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = broadcast_shapes(input._a.shape, mask._a.shape)
    x, m = expand(input, shape), expand(mask, shape)
    if not shape:
        x, m = reshape(x, (1,)), reshape(m, (1,))
    res = _gather_plan(_plan(x, [(0, m)]))
    _record(M.masked_select_op, (input, mask), res)
    from .views import _finish

    return _finish(out, res, "masked_select")


Tensor.masked_select = lambda self, mask: masked_select(self, mask)


@tensor_method()
def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """Copy ``source``'s leading elements (in order) into self where ``mask`` is True."""
    from .pointwise import _check_inplace

    _mask_check(mask, "masked_scatter_")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"masked_scatter: expected self and source to have same dtypes but got"
                           f"{_tname(self.dtype)} and {_tname(source.dtype)}")
    shape = broadcast_shapes(self._a.shape, mask._a.shape)
    if shape != self._a.shape:
        raise RuntimeError(f"output with shape {list(self._a.shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")
    _check_inplace(self)
    target = self if self._a.ndim else reshape(self, (1,))
    m = expand(mask, shape) if shape else reshape(mask, (1,))
    p = _plan(target, [(0, m)])
    n = p.offs.size
    if n > source._a.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if n:
        src = reshape(source, (-1,))
        sb, sst = K.buffer(src._a)
        db, _ = K.buffer(target._a)
        I.scatter((n,), db, 0, [0], 1, p.offs.reshape(-1), 0, [1], sb, 0, sst, _NO_CHECK, False,
                  I.COPY)
    dispatch.bump_version(self)
    return self


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:

    _mask_check(mask, "masked_scatter_")
    shape = broadcast_shapes(input._a.shape, mask._a.shape)
    base = _contiguous_copy(expand(input, shape))
    out = masked_scatter_(base, mask, source)
    return _record(M.masked_scatter_op, (input, mask, source), out)


Tensor.masked_scatter = masked_scatter


# -- take / put -----------------------------------------------------------------------------

def take(input: Tensor, index: Tensor) -> Tensor:
    """Elements of the flattened input at ``index`` (negative indices wrap); shape of index."""
    if not isinstance(index, Tensor) or index.dtype is not _dt.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got "
                           f"{_tname(index.dtype)}")
    n = input._a.size
    if n == 0 and index._a.size:
        raise IndexError("take(): tried to take from an empty tensor")
    flat = reshape(input, (-1,))
    res = dispatch.empty_tensor(index._a.shape, input.dtype)
    if res._a.size:
        xb, xst = K.buffer(flat._a)
        ob, ost = K.buffer(res._a)
        ib, ist = _ibuf(index)
        bad = I.gather(index._a.shape, ob, 0, ost, xb, 0, [0] * index._a.ndim, xst[0], ib, 0, ist,
                       n, True)
        if bad is not None:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                             "elements.")
    return _record(M.take_op, (input, index), res)


Tensor.take = take


@tensor_method()
def put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """The flattened self at ``index`` = (or += with ``accumulate``) source's elements."""
    from .pointwise import _check_inplace

    if not isinstance(index, Tensor) or index.dtype is not _dt.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got "
                           f"{_tname(index.dtype)}")
    if source.dtype is not self.dtype:
        raise RuntimeError(f"put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_tname(self.dtype)} and source.dtype = "
                           f"{_tname(source.dtype)}")
    if index._a.size != source._a.size:
        raise RuntimeError(f"put_(): Expected source and index to have the same number of "
                           f"elements, but got source.numel() = {source._a.size}, index.numel() = "
                           f"{index._a.size}")
    _check_inplace(self)
    n = self._a.size
    target = self if self.is_contiguous() else _contiguous_copy(self)
    flat = reshape(target, (-1,))
    idx = reshape(index, (-1,))
    src = reshape(source, (-1,))

    def run(t, s):
        mode = _arith_mode(t.dtype, I.ADD) if accumulate else I.COPY
        raw = mode != I.ADD
        db, dst = K.buffer(t._a, as_raw=raw)
        sb, sst = K.buffer(s._a, as_raw=raw)
        ib, ist = _ibuf(idx)
        bad = I.scatter((idx._a.size,), db, 0, [0], dst[0], ib, 0, ist, sb, 0, sst, n, True, mode)
        if bad is not None:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                             "elements.")

    if idx._a.size:
        _via_float32(flat, run, src) if accumulate else run(flat, src)
    if target is not self:
        _copy_result(self, target)
    dispatch.bump_version(self)
    return self


def _put(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    from .conversion import clone

    return put_(clone(self), index, source, accumulate)


Tensor.put = _put


def take_along_dim(input: Tensor, indices: Tensor, dim=None, *, out=None) -> Tensor:
    if dim is None:
        res = gather(reshape(input, (-1,)), 0, reshape(indices, (-1,)))  # no negative indices
    else:
        nd = input._a.ndim
        if indices._a.ndim != nd:
            raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                               f"number of dimensions, but got {nd} dimensions for input, and "
                               f"{indices._a.ndim} dimensions for indices")
        d = wrap_dim(dim, nd)
        s = list(input._a.shape)
        s[d] = indices._a.shape[d]
        bshape = list(broadcast_shapes(tuple(s), indices._a.shape))
        idx = expand(indices, tuple(bshape))
        bshape[d] = input._a.shape[d]
        res = gather(expand(input, tuple(bshape)), d, idx, _wrap=True)
    from .views import _finish

    return _finish(out, res, "take_along_dim")


Tensor.take_along_dim = lambda self, indices, dim=None: take_along_dim(self, indices, dim)


# -- nonzero --------------------------------------------------------------------------------

def _nonzero_coords(t: Tensor) -> np.ndarray:
    """(ndim, count) int64 coordinates of the non-zero elements (rank >= 1)."""
    if t.dtype is not _dt.bool:
        from .pointwise import _pw

        t = _pw(B.ne_op, (t, 0))
    buf, st = K.buffer(t._a)
    return I.nonzero(t._a.shape, buf, st)


def nonzero(input: Tensor, *, out=None, as_tuple: bool = False):
    """Indices of the non-zero elements: an (n, ndim) tensor, or one 1-D tensor per dim.

    >>> jtorch.tensor([[0, 1], [2, 0]]).nonzero()
    tensor([[0, 1],
            [1, 0]])
    """
    if input._a.ndim == 0:
        hit = bool(input.item() != 0)
        if as_tuple:
            return (Tensor._make(np.zeros(1 if hit else 0, np.int64)),)
        coords = np.empty((0, 1 if hit else 0), np.int64)
    else:
        coords = _nonzero_coords(input)
        if as_tuple:
            st = coords.reshape(-1)
            return tuple(Tensor._make(coords[d], st, _dt.int64) for d in range(coords.shape[0]))
    res = Tensor._make(coords.T, coords.reshape(-1), _dt.int64)
    _record(M.nonzero_op, (input,), res)
    if out is not None:
        from .views import _finish

        return _finish(out, res, "nonzero")
    return res


Tensor.nonzero = lambda self, *, as_tuple=False: nonzero(self, as_tuple=as_tuple)


def argwhere(input: Tensor) -> Tensor:
    return nonzero(input)


Tensor.argwhere = argwhere
