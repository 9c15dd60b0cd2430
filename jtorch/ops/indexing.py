"""Indexing: ``Tensor.__getitem__``/``__setitem__`` (basic indexing gives views, advanced
indexing gathers/scatters), ``index_put_``, the gather/scatter family, masked ops, take,
nonzero.

Each function parses its arguments and calls its OpDef through ``dispatch.call``; the meta
rules (torch's checks, the results' geometry) and CPU kernels are in ``kernels/defs/indexing``
and ``kernels/cpu/indexing``. Index lists become index tensors here; boolean masks become
coordinates through ``nonzero`` (data-dependent, as in torch), so ``x[mask]`` on a meta tensor
raises NotImplementedError while ``x[idx]`` gives its shape.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dispatch
from .. import dtypes as _dt
from ..amp import state as _amp
from ..kernels.defs import indexing as D
from ..tensor import Tensor

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

_call = dispatch.call
_view = dispatch.view  # x[i], x[a:b]: the CPU shortcut of index_op (OpDef.cpu_view)
_MASKS = (_dt.bool, _dt.uint8)
_NONE = type(None)
_ELLIPSIS = type(Ellipsis)
_BASIC = (int, slice, _NONE, _ELLIPSIS)


def _tname(d: _dt.dtype) -> str:
    return dispatch.torch_name(d)


def _deliver(out, res: Tensor, name: str) -> Tensor:
    """Write ``res`` into an ``out=`` tensor (torch's cast check, resized as torch does)."""
    if out is None:
        return res
    if not _dt.can_cast(res.dtype, out.dtype):
        raise RuntimeError(f"{name}: result type {_tname(res.dtype)} can't be cast to the desired "
                           f"output type {_tname(out.dtype)}")
    return dispatch.copy_into(out, res)


def _as_tensor(obj) -> Tensor:
    from .creation import tensor

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


def _bad_index(it) -> IndexError:
    return IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                      f"Variables are valid indices (got {type(it).__name__})")


def _zeros_index(n: int) -> Tensor:
    """The index tensor of a Python bool index: one zero (True) or none (False)."""
    from .creation import zeros

    return zeros(n, dtype=_dt.int64)


def _parse(index) -> tuple:
    """(items, tensors): the index as a tuple of ints, slices, None, Ellipsis and ``D.Arg`` /
    ``D.BoolArg`` markers naming its index tensors (lists become tensors, 0-d integer and
    bool tensors are read as numbers, as torch reads them)."""
    if isinstance(index, tuple):
        raw = index
    elif isinstance(index, list) and len(index) < 32 and any(
            isinstance(o, (list, tuple, np.ndarray, Tensor, slice)) or o is None or o is Ellipsis
            for o in index):
        warnings.warn(_SEQ_WARNING, UserWarning, stacklevel=3)
        raw = tuple(index)
    else:
        raw = (index,)
    items, tensors = [], []
    for it in raw:
        if isinstance(it, Tensor) and it._a.ndim == 0 and (it.dtype in _MASKS
                                                             or it.dtype.category == 1):
            it = bool(it.item()) if it.dtype in _MASKS else int(it.item())
        if it is None or it is Ellipsis or isinstance(it, slice):
            items.append(it)
        elif isinstance(it, (bool, np.bool_)):
            items.append(D.BoolArg(len(tensors)))
            tensors.append(_zeros_index(1 if it else 0))
        elif isinstance(it, Tensor):
            items.append(D.Arg(len(tensors)))
            tensors.append(it)
        elif isinstance(it, (list, tuple, np.ndarray)):
            items.append(D.Arg(len(tensors)))
            tensors.append(_as_tensor(it))
        elif isinstance(it, str):
            raise TypeError("new(): invalid data type 'str'")
        elif isinstance(it, (float, complex, np.floating)):
            raise _bad_index(it)
        else:
            try:
                items.append(it.__index__())
            except AttributeError:
                raise _bad_index(it) from None
    return tuple(items), tuple(tensors)


def _coords(mask: Tensor) -> tuple:
    """The coordinates of a mask's set elements, one int64 tensor per dim (``nonzero``)."""
    return _call(D.nonzero_op, mask).unbind(1)


def _expand_masks(x: Tensor, items: tuple, tensors: tuple) -> tuple:
    """Boolean masks become their coordinates (after the index's argument checks)."""
    masks = D.check_masks(x, items, tensors)
    if not masks:
        return items, tensors
    new_items, new_tensors = [], []
    for it in items:
        cls = it.__class__
        if cls is not D.Arg and cls is not D.BoolArg:
            new_items.append(it)
            continue
        t = tensors[it.k]
        parts = _coords(t) if it.k in masks else (t,)
        if cls is D.BoolArg:  # a 0-d mask over its new size-1 dim: one coordinate tensor
            parts = parts[:1]
        for c in parts:
            new_items.append(cls(len(new_tensors)))
            new_tensors.append(c)
    return tuple(new_items), tuple(new_tensors)


def _has_mask(tensors: tuple) -> bool:
    return any(t.dtype in _MASKS and t._a.ndim for t in tensors)


# -- the CPU fast paths of basic indexing ----------------------------------------------------
# ``x[i]``, ``x[a:b]``, ``x[..., 0]``, ``y[:3] = -1``, ``x[1:5, 2] = t`` on CPU tensors, where no
# mode takes the call and autograd records nothing, are NumPy's basic indexing of the array: a
# view with torch's geometry (no None, no stepped slice, whose strides NumPy lays out otherwise
# when the result is empty), or NumPy's in-place assignment (the copy or fill kernel). The op
# path costs 10-20 us of Python per call (meta rule, plan, kernel launch) against ~1 us here;
# anything else (errors included: NumPy's exceptions send the call down the op path, which raises
# torch's) takes the op path.

_NDARRAY = np.ndarray
_BOUNDS = (int, _NONE)


def _fast_key(index, write: bool):
    """The NumPy key of a basic index the fast paths take (None: the op path). Reads accept
    ints, unstepped slices with int bounds and one Ellipsis; writes also None and positive
    steps (the geometry of the written view is invisible)."""
    c = index.__class__
    if c is int:
        return index
    if c is slice:
        return index if _fast_slice(index, write) else None
    if c is not tuple:
        return None
    ellipsis = False
    for it in index:
        c = it.__class__
        if c is int:
            continue
        if c is slice:
            if not _fast_slice(it, write):
                return None
        elif it is Ellipsis and not ellipsis:
            ellipsis = True
        elif it is None and write:
            continue
        else:
            return None
    return index if ellipsis else index + (Ellipsis,)  # a 0-d view, not a NumPy scalar


def _fast_slice(s: slice, write: bool) -> bool:
    step = s.step
    if step is not None and not (write and step.__class__ is int and step > 0):
        return False
    return s.start.__class__ in _BOUNDS and s.stop.__class__ in _BOUNDS


def _records(t: Tensor) -> bool:
    """Whether an op on ``t`` must go through dispatch: a mode, or autograd recording."""
    return dispatch.mode is not None or (t._requires_grad and dispatch.grad_state.enabled)


def getitem(self: Tensor, index) -> Tensor:
    """``self[index]``: a view for basic indices, a gathered copy for advanced ones."""
    c = index.__class__
    if c is slice:  # the op's own CPU shortcut (``dispatch.view``)
        return _view(D.index_op, self, index=index)
    a = self._a
    if a.__class__ is _NDARRAY and not _records(self):
        if c is int:
            if a.ndim and -a.shape[0] <= index < a.shape[0]:
                return self._view(a[index, ...])
        elif c is tuple:
            key = _fast_key(index, False)
            if key is not None:
                try:
                    return self._view(a[key])
                except (IndexError, TypeError):
                    pass  # the op path raises torch's error
    if c is int:
        return _view(D.index_op, self, index=index)
    if c is tuple and all(i.__class__ in _BASIC for i in index):
        return _call(D.index_op, self, index=index)
    items, tensors = _parse(index)
    if _has_mask(tensors):
        items, tensors = _expand_masks(self, items, tensors)
    return _call(D.index_op, self, *tensors, index=index, items=items)


# -- writing through an index ---------------------------------------------------------------

def _value_tensor(value, dtype: _dt.dtype, device):
    """A value written through an index as a tensor of the destination's dtype (None for a
    Python scalar, which the kernel writes directly)."""
    if isinstance(value, Tensor):
        return value if value.dtype is dtype else value.to(dtype)
    if isinstance(value, (list, tuple, np.ndarray)):
        from .creation import tensor

        return tensor(value, dtype=dtype, device=device)
    return None


def _is_scalar(value) -> bool:
    return isinstance(value, (bool, int, float, complex, np.generic))


# The Python scalars a fast fill writes into each dtype: the range whose NumPy conversion is
# torch's (out-of-range values, floats into integers, float16 rounding: the op path).
_FLT_MAX = float(np.finfo(np.float32).max)
_INT53 = 1 << 53
_INT_RANGE = {_dt.uint8: (0, 255), _dt.int8: (-128, 127), _dt.int16: (-(1 << 15), (1 << 15) - 1),
              _dt.int32: (-(1 << 31), (1 << 31) - 1), _dt.int64: (-(1 << 63), (1 << 63) - 1)}
_FLOAT_MAX = {_dt.float32: _FLT_MAX, _dt.complex64: _FLT_MAX, _dt.float64: math.inf,
              _dt.complex128: math.inf}


def _fast_scalar(d: _dt.dtype, v) -> bool:
    c = v.__class__
    if c is bool:
        return d not in _dt.HALF
    if d is _dt.bool:
        return c is float or (c is int and -_INT53 <= v <= _INT53)
    r = _INT_RANGE.get(d)
    if r is not None:
        return c is int and r[0] <= v <= r[1]
    m = _FLOAT_MAX.get(d)
    if m is None:
        return False
    if c is int:
        return -_INT53 <= v <= _INT53
    return c is float and (-m <= v <= m or not math.isfinite(v))  # nan and inf pass


def _fast_setitem(self: Tensor, a: np.ndarray, index, value) -> bool:
    """``self[index] = value`` as NumPy's assignment (see above); False: take the op path."""
    key = _fast_key(index, True)
    if key is None or _records(self):
        return False
    if isinstance(value, Tensor):
        v = value._a
        if v.__class__ is not _NDARRAY or value.dtype is not self.dtype or value._st is self._st \
                or (value._requires_grad and dispatch.grad_state.enabled):
            return False  # casts, overlaps (torch's checks), autograd: the op path
    elif _fast_scalar(self.dtype, value):
        v = value
    else:
        return False
    if self._base is not None:
        dispatch.check_inplace(self)
    try:
        a[key] = v
    except (IndexError, ValueError, TypeError, OverflowError):
        return False  # raised before anything was written: the op path raises torch's error
    self._vc[0] += 1
    return True


def setitem(self: Tensor, index, value) -> None:
    """``self[index] = value``: copy/fill into the view, or index_put for advanced indices."""
    a = self._a
    if a.__class__ is _NDARRAY and _fast_setitem(self, a, index, value):
        return
    c = index.__class__
    if c is int or c is slice or c is tuple and all(i.__class__ in _BASIC for i in index):
        items, tensors = (index if c is tuple else (index,)), ()
    else:
        items, tensors = _parse(index)
        if _has_mask(tensors):
            t = tensors[0]
            if len(items) == 1 and items[0].__class__ is D.Arg and t.dtype is _dt.bool \
                    and t._a.shape == self._a.shape and _is_scalar(value):
                _call(D.masked_fill_op, self, t, value=value, inplace=True)  # as torch does
                return
            dispatch.check_inplace(self)
            items, tensors = _expand_masks(self, items, tensors)
    val = _value_tensor(value, self.dtype, self.device)
    _call(D.index_put_op, self, val, *tensors, items=items, setitem=True, index=index,
          value=value if val is None else None)


def _put_items(indices: tuple) -> tuple:
    """index_put_'s indices as (items, tensors): 0-d integer indices are size-1 index
    tensors (unlike in ``__getitem__``), 0-d masks index a new size-1 dim."""
    items, tensors = [], []
    for t in indices:
        if t._a.ndim == 0:
            if t.dtype in _MASKS:
                items.append(D.BoolArg(len(tensors)))
                tensors.append(t.reshape(1))
                continue
            t = t.reshape(1)
        items.append(D.Arg(len(tensors)))
        tensors.append(t)
    return tuple(items), tuple(tensors)


def index_put_(self: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    """self[indices] = values (``accumulate``: +=, duplicates summed) for a tuple of tensors."""
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put_(): argument 'values' (position 2) must be Tensor, not "
                        f"{type(values).__name__}")
    indices = tuple(indices)
    for i, t in enumerate(indices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    items, tensors = _put_items(indices)
    if _has_mask(tensors):
        items, tensors = _expand_masks(self, items, tensors)
    return _call(D.index_put_op, self, values, *tensors, items=items, accumulate=accumulate)


def index_put(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    if _amp.on:  # CUDA autocast's promote list
        input, values = _amp.promote("cuda", input, values)
    return index_put_(input.clone(), indices, values, accumulate)


# -- gather / scatter family ----------------------------------------------------------------

def gather(input: Tensor, dim: int | None = None, index: Tensor | None = None, *,
           sparse_grad: bool = False, out=None, axis=None) -> Tensor:
    """out[i][j] = input[index[i][j]][j] (for dim 0): values picked along ``dim``.

    >>> jtorch.tensor([[1, 2], [3, 4]]).gather(1, jtorch.tensor([[1], [0]]))
    tensor([[2],
            [3]])
    """
    dim = dim if axis is None else axis
    if dim is None or index is None:
        raise TypeError('gather() missing 2 required positional argument: "dim", "index"')
    if not isinstance(index, Tensor):
        raise TypeError(f"expected Tensor for index, got {type(index).__name__}")
    return _deliver(out, _call(D.gather_op, input, index, dim=dim), "gather")


def _gather_method(self: Tensor, dim: int | None = None, index: Tensor | None = None, *,
                   sparse_grad: bool = False, axis=None) -> Tensor:
    return gather(self, dim, index, axis=axis)


def _scatter_args(index, src, value) -> tuple:
    """(tensor operands, scalar value) of a scatter call: ``src`` may be a tensor or a scalar."""
    if src is None:
        src = value
    if isinstance(src, Tensor):
        return (index, src), None
    return (index,), src


def scatter_(self: Tensor, dim: int, index: Tensor, src=None, value=None, *,
             reduce: str | None = None) -> Tensor:
    """self[index[i][j]][j] = src[i][j] (dim 0), or (op)= with ``reduce`` 'add'/'multiply'."""
    args, v = _scatter_args(index, src, value)
    return _call(D.scatter_op, self, *args, dim=dim, value=v, reduce=reduce, inplace=True)


def scatter(input: Tensor, dim: int, index: Tensor, src=None, value=None, *,
            reduce: str | None = None) -> Tensor:
    args, v = _scatter_args(index, src, value)
    return _call(D.scatter_op, input, *args, dim=dim, value=v, reduce=reduce)


def scatter_add_(self: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    return _call(D.scatter_add_op, self, index, src, dim=dim, inplace=True)


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:
    if _amp.on:  # CUDA autocast's promote list
        input, src = _amp.promote("cuda", input, src)
    return _call(D.scatter_add_op, input, index, src, dim=dim)


def scatter_reduce_(self: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                    include_self: bool = True) -> Tensor:
    """Reduce ``src`` into self at ``index`` along ``dim`` with sum/prod/mean/amax/amin."""
    return _call(D.scatter_reduce_inplace_op, self, index, src, dim=dim, reduce=reduce,
                 include_self=include_self, inplace=True)


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    return _call(D.scatter_reduce_op, input, index, src, dim=dim, reduce=reduce,
                 include_self=include_self)


def index_select(input: Tensor, dim: int | None = None, index: Tensor | None = None, *, out=None,
                 axis=None) -> Tensor:
    """Rows (slices along ``dim``) of ``input`` picked by a 1-D ``index``."""
    dim = dim if axis is None else axis
    if dim is None or index is None:
        raise TypeError('index_select() missing 2 required positional argument: "dim", "index"')
    if not isinstance(index, Tensor):
        raise TypeError(f"expected Tensor for index, got {type(index).__name__}")
    return _deliver(out, _call(D.index_select_op, input, index, dim=dim), "index_select")


def _index_select_method(self: Tensor, dim: int | None = None, index: Tensor | None = None, *,
                         axis=None) -> Tensor:
    return index_select(self, dim, index, axis=axis)


def index_add_(self: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    """self[..., index[i], ...] += alpha * source[..., i, ...] along ``dim``."""
    return _call(D.index_add_op, self, index, source, dim=dim, alpha=alpha, inplace=True)


def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *, alpha=1) -> Tensor:
    return _call(D.index_add_op, input, index, source, dim=dim, alpha=alpha)


def index_copy_(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    return _call(D.index_copy_op, self, index, source, dim=dim, inplace=True)


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
    if _amp.on:  # CPU autocast's promote list
        input, source = _amp.promote("cpu", input, source)
    return _call(D.index_copy_op, input, index, source, dim=dim)


def _value_args(value) -> tuple:
    """A fill value as (tensor operands, scalar): 0-d tensors are operands."""
    return ((value,), None) if isinstance(value, Tensor) else ((), value)


def index_fill_(self: Tensor, dim: int, index: Tensor, value) -> Tensor:
    args, v = _value_args(value)
    return _call(D.index_fill_op, self, index, *args, dim=dim, value=v, inplace=True)


def index_fill(input: Tensor, dim: int, index: Tensor, value) -> Tensor:
    args, v = _value_args(value)
    return _call(D.index_fill_op, input, index, *args, dim=dim, value=v)


# -- masked ops -----------------------------------------------------------------------------

def masked_fill_(self: Tensor, mask: Tensor, value) -> Tensor:
    """self where ~mask, value where mask (mask broadcast to self's shape)."""
    args, v = _value_args(value)
    return _call(D.masked_fill_op, self, mask, *args, value=v, inplace=True)


def masked_fill(input: Tensor, mask: Tensor, value) -> Tensor:
    args, v = _value_args(value)
    return _call(D.masked_fill_op, input, mask, *args, value=v)


def masked_select(input: Tensor, mask: Tensor, *, out=None) -> Tensor:
    """The elements of ``input`` where ``mask`` (broadcast together), as a 1-D tensor."""
    return _deliver(out, _call(D.masked_select_op, input, mask), "masked_select")


def _masked_select_method(self: Tensor, mask: Tensor) -> Tensor:
    return masked_select(self, mask)


def masked_scatter_(self: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    """Copy ``source``'s leading elements (in order) into self where ``mask`` is True."""
    return _call(D.masked_scatter_op, self, mask, source, inplace=True)


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:
    return _call(D.masked_scatter_op, input, mask, source)


# -- take / put -----------------------------------------------------------------------------

def take(input: Tensor, index: Tensor) -> Tensor:
    """Elements of the flattened input at ``index`` (negative indices wrap); shape of index."""
    return _call(D.take_op, input, index)


def put_(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    """The flattened self at ``index`` = (or += with ``accumulate``) source's elements."""
    return _call(D.put_op, self, index, source, accumulate=accumulate, inplace=True)


def _put(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
    return _call(D.put_op, self, index, source, accumulate=accumulate)


def take_along_dim(input: Tensor, indices: Tensor, dim=None, *, out=None, axis=None) -> Tensor:
    if axis is not None:
        dim = axis
    if dim is None:
        res = gather(input.reshape(-1), 0, indices.reshape(-1))  # no negative indices
    else:
        nd = input._a.ndim
        if indices._a.ndim != nd:
            raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                               f"number of dimensions, but got {nd} dimensions for input, and "
                               f"{indices._a.ndim} dimensions for indices")
        from ..shape import broadcast_shapes, wrap_dim

        d = wrap_dim(dim, nd)
        s = list(input._a.shape)
        s[d] = indices._a.shape[d]
        bshape = list(broadcast_shapes(tuple(s), indices._a.shape))
        idx = indices.expand(tuple(bshape))
        bshape[d] = input._a.shape[d]
        res = _call(D.gather_op, input.expand(tuple(bshape)), idx, dim=d, wrap=True)
    return _deliver(out, res, "take_along_dim")


def _take_along_dim_method(self: Tensor, indices: Tensor, dim=None, *, axis=None) -> Tensor:
    return take_along_dim(self, indices, dim, axis=axis)


# -- nonzero --------------------------------------------------------------------------------

def nonzero(input: Tensor, *, out=None, as_tuple: bool = False):
    """Indices of the non-zero elements: an (n, ndim) tensor, or one 1-D tensor per dim.

    >>> jtorch.tensor([[0, 1], [2, 0]]).nonzero()
    tensor([[0, 1],
            [1, 0]])
    """
    res = _call(D.nonzero_op, input)
    if as_tuple:
        if input._a.ndim == 0:
            from .creation import zeros

            return (zeros(res._a.shape[0], dtype=_dt.int64, device=input.device),)
        return res.unbind(1)
    return _deliver(out, res, "nonzero")


def _nonzero_method(self: Tensor, *, as_tuple: bool = False):
    return nonzero(self, as_tuple=as_tuple)


def argwhere(input: Tensor) -> Tensor:
    return nonzero(input)
