"""Movement and indexing ops: views (``defs/view.py``: new shape/strides/offset over the same
storage, no kernel), copying movement ops (cat, stack, flip, roll, repeat, tril/triu, whose
meta rules plan a fresh result and whose CPU kernels are in ``kernels/cpu/movement``) and
index ops (gather/scatter family, index_put, nonzero: ``kernels/cpu/indexing``).

``ops/views.py`` calls ``dispatch.call(op, *tensors, **params)`` with these records; the
index family still calls ``dispatch.record(op, inputs, out, kwargs)`` after its kernels.
Gradient rules (bottom of the file) read the normalised params in ``node.kw``.
"""

from __future__ import annotations

from ... import dtypes as _dt
from ...shape import wrap_dim
from ..cpu import movement as _mk
from ..plan import Inplace, Out, Plan, common_device, device_of
from ..registry import OpDef, extern, op, register
from .view import (  # noqa: F401  (the view records live with their geometry)
    as_strided__op, as_strided_op, chunk_op, diagonal_op, expand_op, narrow_op, permute_op,
    select_op, slice_op, split_op, split_with_sizes_op, squeeze__op, squeeze_op, t__op, t_op,
    transpose__op, transpose_op, unbind_op, unfold_op, unsqueeze__op, unsqueeze_op, view_dtype_op,
    view_op)


def _movement(name: str, **kw) -> OpDef:
    return register(OpDef(name, "movement", **kw))


index_op = _movement("index")            # {"index"}: Tensor.__getitem__ (basic or advanced)


# -- copying movement ops: meta rules -------------------------------------------------------

def _torch_name(d: _dt.dtype) -> str:
    from ...dispatch import torch_name

    return torch_name(d)


def _promoted(tensors) -> _dt.dtype:
    d = tensors[0].dtype
    for x in tensors[1:]:
        if x.dtype is not d:
            d = _dt.promote_types(d, x.dtype)
    return d


def _check_out_dtype(d: _dt.dtype, out_dtype) -> None:
    if out_dtype is not None and not _dt.can_cast(d, out_dtype):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                        f"{_torch_name(out_dtype)}")


def _cat_meta(*tensors, dim: int = 0, out_dtype=None) -> Plan:
    """Concatenate along ``dim`` in the promoted dtype; 1-D empty tensors are skipped (legacy);
    ``out_dtype``: the dtype of an ``out=`` tensor, checked for the cast."""
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    d = _promoted(tensors)
    _check_out_dtype(d, out_dtype)
    for i, x in enumerate(tensors):
        if x._a.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    dev = common_device(*tensors)
    parts = [(i, x._a.shape) for i, x in enumerate(tensors) if not _mk._legacy_skipped(x._a)]
    if not parts:
        return Plan(Out((0,), d), {"dim": 0}, dev)
    ref = parts[0][1]
    nd = len(ref)
    axis = wrap_dim(dim, nd)
    total = 0
    for i, s in parts:
        if len(s) != nd:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and {len(s)}")
        for k in range(nd):
            if k != axis and s[k] != ref[k]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {axis}. "
                                   f"Expected size {ref[k]} but got size {s[k]} for tensor number "
                                   f"{i} in the list.")
        total += s[axis]
    return Plan(Out(ref[:axis] + (total,) + ref[axis + 1:], d), {"dim": axis}, dev)


def _stack_meta(*tensors, dim: int = 0, out_dtype=None) -> Plan:
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    s0 = tensors[0]._a.shape
    for i, x in enumerate(tensors[1:], 1):
        if x._a.shape != s0:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(s0)} at "
                               f"entry 0 and {list(x._a.shape)} at entry {i}")
    d = wrap_dim(dim, len(s0) + 1)
    dt = _promoted(tensors)
    _check_out_dtype(dt, out_dtype)
    return Plan(Out(s0[:d] + (len(tensors),) + s0[d:], dt), {"dim": d}, common_device(*tensors))


def dense_strides(a) -> tuple | None:
    """``a``'s element strides if it is non-overlapping and dense (a permuted contiguous
    layout) but not row-major, else None: the layout ``empty_like`` preserves."""
    if a.flags.c_contiguous:
        return None
    isz = a.itemsize
    dims = [(s // isz, n) for s, n in zip(a.strides, a.shape) if n != 1]
    expected = 1
    for s, n in sorted(dims):
        if s != expected:
            return None
        expected *= n
    return tuple(s // isz for s in a.strides)


def _dup_dims(wrapped: list) -> None:
    if len(set(wrapped)) != len(wrapped):
        from .view import _dup_message

        raise RuntimeError(_dup_message(wrapped))


def _flip_meta(x, *, dims: tuple) -> Plan:
    """A reversed copy along ``dims``; a dense input's layout is kept, as torch does."""
    a = x._a
    wrapped = [wrap_dim(d, a.ndim) for d in dims]
    _dup_dims(wrapped)
    return Plan(Out(a.shape, x.dtype, dense_strides(a)), {"dims": tuple(wrapped)}, device_of(x))


def _roll_meta(x, *, shifts: tuple, dims: tuple | None = None) -> Plan:
    """Rotate along ``dims`` by ``shifts`` (the flattened tensor when dims is None)."""
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
    else:
        if len(shifts) != len(dims):
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                               f"{len(dims)}")
        dims = tuple(wrap_dim(d, x._a.ndim) for d in dims)
    return Plan(Out(x._a.shape, x.dtype), {"shifts": shifts, "dims": dims}, device_of(x))


def _repeat_meta(x, *, repeats: tuple) -> Plan:
    nd = x._a.ndim
    if len(repeats) < nd:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number of "
                           "dimensions of tensor")
    shape = (1,) * (len(repeats) - nd) + x._a.shape
    out_shape = tuple(r * s for r, s in zip(repeats, shape))
    for n in out_shape:
        if n < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                               f"{list(out_shape)}")
    return Plan(Out(out_shape, x.dtype), {"repeats": repeats}, device_of(x))


def _tri_meta(name: str, inplace: bool):
    def meta(x, *, diagonal: int = 0) -> Plan:
        if x._a.ndim < 2:
            raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
        out = Inplace(0) if inplace else Out(x._a.shape, x.dtype)
        return Plan(out, {"diagonal": diagonal}, device_of(x))

    return meta


def _repeat_interleave_meta(repeats, *, output_size: int | None = None) -> Plan:
    """``repeat_interleave(repeats)``: 0..n-1 with i repeated repeats[i] times; the length
    is the sum of the values (data-dependent) unless ``output_size`` gives it."""
    if repeats.dtype.category != 1:
        raise NotImplementedError(
            f'"repeat_interleave_cpu" not implemented for \'{_torch_name(repeats.dtype)}\'')
    if repeats._a.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    out = None if output_size is None else Out((output_size,), _dt.int64)
    return Plan(out, {"output_size": output_size}, device_of(repeats))


def _copy(name: str, meta, cpu, **kw) -> OpDef:
    return op(name, "movement", meta, cpu, **kw)


cat_op = _copy("cat", _cat_meta, _mk.cat_cpu)          # inputs: the tensors; {"dim"}
stack_op = _copy("stack", _stack_meta, _mk.stack_cpu)  # inputs: the tensors; {"dim"} (the new one)
flip_op = _copy("flip", _flip_meta, _mk.flip_cpu)      # {"dims"}
roll_op = _copy("roll", _roll_meta, _mk.roll_cpu)      # {"shifts", "dims"}
repeat_op = _copy("repeat", _repeat_meta, _mk.repeat_cpu)  # {"repeats"}; also tile
tril_op = _copy("tril", _tri_meta("tril", False), _mk.tril_cpu)   # {"diagonal"}
triu_op = _copy("triu", _tri_meta("triu", False), _mk.triu_cpu)
tril__op = _copy("tril_", _tri_meta("tril", True), _mk.tril__cpu, grad_name="TrilBackward0")
triu__op = _copy("triu_", _tri_meta("triu", True), _mk.triu__cpu, grad_name="TriuBackward0")
repeat_interleave_op = _copy("repeat_interleave", _repeat_interleave_meta,
                             _mk.repeat_interleave_cpu, differentiable=False, data_dependent=True)

# -- index ops ------------------------------------------------------------------------------
gather_op = extern("gather")             # (input, index) {"dim"}; also index_select, take...
scatter_op = extern("scatter")           # (input, index, src) {"dim", "reduce"}
scatter_add_op = extern("scatter_add")   # (input, index, src) {"dim"}
scatter_reduce_op = extern("scatter_reduce")  # (input, index, src) {"dim", "reduce", ...}
index_select_op = extern("index_select")  # (input, index) {"dim"}
index_add_op = extern("index_add")       # (input, index, source) {"dim", "alpha"}
index_copy_op = extern("index_copy")     # (input, index, source) {"dim"}
index_fill_op = extern("index_fill")     # (input, index) {"dim", "value"}
index_put_op = extern("index_put")       # (input, values, *indices) {"accumulate"}
masked_fill_op = extern("masked_fill")   # (input, mask) {"value"}
masked_scatter_op = extern("masked_scatter")  # (input, mask, source)
masked_select_op = extern("masked_select")    # (input, mask)
take_op = extern("take")                 # (input, index)
nonzero_op = extern("nonzero", differentiable=False)


# -- gradient rules: vjp(node, grad) in jtorch ops -------------------------------------------
# Views and copies map the gradient back with the inverse movement; the index family scatters
# it back through the same indices (torch's derivatives.yaml). Every gradient op records for
# autograd itself, so create_graph gives second derivatives.

import math  # noqa: E402

import numpy as np  # noqa: E402

import jtorch as J  # noqa: E402  (the rules run after the package is imported)

from ...tensor import Tensor  # noqa: E402
from ..registry import defvjp  # noqa: E402
from ...dispatch import call  # noqa: E402

_MASK_DTYPES = (_dt.bool, _dt.uint8)


def _permute_vjp(c, g):
    dims = c.kw["dims"]
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return (g.permute(inv),)


def _expand_vjp(c, g):
    from ...autograd.node import sum_to

    return (sum_to(g, c._meta[0][0]),)


def _embed(shape: tuple, g: Tensor, index) -> Tensor:
    """zeros(shape) with ``g`` written at the basic index ``index`` (a view: no duplicates)."""
    z = g.new_zeros(shape)
    z[index] = g
    return z


def _embed_flat(shape: tuple, g: Tensor, pos: Tensor, accumulate: bool = True) -> Tensor:
    """zeros(shape) with ``g`` added at the flat positions ``pos`` (an int64 tensor shaped
    like ``g``); duplicates accumulate."""
    z = g.new_zeros(math.prod(shape))
    z.index_put_((pos.reshape(-1),), g.reshape(-1), accumulate)
    return z.reshape(shape)


def _positions(shape: tuple, device=None) -> Tensor:
    """The flat position of every element of a contiguous tensor of ``shape``."""
    return J.arange(math.prod(shape), device=device).reshape(shape)


def _is_advanced_item(it) -> bool:
    if isinstance(it, Tensor):
        return it.dtype in _MASK_DTYPES or it._a.ndim > 0
    return isinstance(it, (bool, np.bool_, list, tuple, np.ndarray))


def _is_advanced(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(_is_advanced_item(it) for it in items)


def _index_vjp(c, g):
    shape = c._meta[0][0]
    index = c.kw["index"]
    if not _is_advanced(index):
        return (_embed(shape, g, index),)
    return (_embed_flat(shape, g, _positions(shape)[index]),)


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


def _dim_index(dim: int, it) -> tuple:
    return (slice(None),) * dim + (it,)


def _slice_vjp(c, g):
    kw = c.kw
    return (_embed(c._meta[0][0], g, _dim_index(kw["dim"], slice(kw["start"], kw["end"],
                                                                   kw["step"]))),)


def _select_vjp(c, g):
    return (_embed(c._meta[0][0], g, _dim_index(c.kw["dim"], c.kw["index"])),)


def _diagonal_vjp(c, g):
    shape = c._meta[0][0]
    kw = c.kw
    pos = _positions(shape, g.device).diagonal(kw["offset"], kw["dim1"], kw["dim2"])
    return (_embed_flat(shape, g, pos, False),)


def _extent(size, stride, offset: int) -> int:
    if 0 in size:
        return offset
    return offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))


def _may_overlap(size, stride) -> bool:
    """Whether two indices of this geometry can address one storage element."""
    reach = 0
    for s, n in sorted((s, n) for n, s in zip(size, stride) if n > 1):
        if s <= reach:
            return True
        reach += (n - 1) * s
    return False


def _as_strided_vjp(c, g):
    """torch's as_strided_backward: scatter the gradient into the storage region both geometries
    cover (adding where the output overlaps itself), read it back with the input's geometry
    (divided by how often the input addresses each element where it overlaps itself)."""
    kw = c.kw
    shape = c._meta[0][0]
    size, stride, off = kw["size"], kw["stride"], kw["storage_offset"]
    in_st, in_off = kw["in_stride"], kw["in_offset"]
    lo = min(off, in_off)
    span = max(_extent(size, stride, off), _extent(shape, in_st, in_off)) - lo
    storage = J.arange(span, device=g.device)
    flat = _embed_flat((span,), g, storage.as_strided(size, stride, off - lo))
    in_pos = storage.as_strided(shape, in_st, in_off - lo)
    if _may_overlap(shape, in_st):
        count = g.new_zeros(span)
        count.index_put_((in_pos.reshape(-1),), g.new_ones(in_pos.numel()), True)
        flat = flat / count.clamp_min(1)
    return (flat[in_pos],)


def _cat_vjp(c, g):
    d = c.kw["dim"]
    res, start = [], 0
    for need, (shape, _) in zip(c.needs, c._meta):
        if shape == (0,):  # legacy: 1-D empty tensors are skipped by cat
            res.append(g.new_zeros((0,)) if need else None)
            continue
        n = shape[d]
        res.append(g.narrow(d, start, n) if need else None)
        start += n
    return tuple(res)


def _stack_vjp(c, g):
    d = c.kw["dim"]
    return tuple(g.select(d, i) if need else None for i, need in enumerate(c.needs))


def _pieces_vjp(c, g):
    """split/chunk: the pieces' gradients side by side (missing ones are zeros)."""
    return (call(cat_op, *g, dim=c.kw["dim"]),)


def _unbind_vjp(c, g):
    return (call(stack_op, *g, dim=c.kw["dim"]),)


def _view_vjp(c, g):
    return (g.reshape(c._meta[0][0]),)


def _roll_vjp(c, g):
    return (g.roll(tuple(-s for s in c.kw["shifts"]), c.kw["dims"]),)


def _repeat_vjp(c, g):
    """Each output dim r*n is an (r, n) block: sum over the repeat blocks."""
    reps = c.kw["repeats"]
    shape = c._meta[0][0]
    padded = (1,) * (len(reps) - len(shape)) + tuple(shape)
    split, dims = [], []
    for i, (r, n) in enumerate(zip(reps, padded)):
        split += [r, n]
        if r != 1:
            dims.append(2 * i)
    if dims:
        g = g.reshape(split).sum(dims)
    return (g.reshape(shape),)


# -- index family ----------------------------------------------------------------------------

def _fit(r: Tensor, shape: tuple) -> Tensor:
    """A gradient computed for the index's extent, placed in a (larger) source's shape: the
    source elements the index does not reach get zero."""
    if r._a.shape == tuple(shape):
        return r
    return _embed(shape, r, tuple(slice(0, n) for n in r._a.shape))


def _gather_vjp(c, g):
    shape = c._meta[0][0]
    d, index = c.kw["dim"], c.args[1]
    if c.kw.get("wrap"):  # take_along_dim: negative indices count from the end
        index = J.where(index < 0, index + (shape[d] if shape else 1), index)
    return (J.zeros(shape, dtype=g.dtype).scatter_add(d, index, g), None)


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
        zeros_per = J.zeros_like(x).scatter_add(d, index, src_zero.to(x.dtype)).gather(d, index)
        single_zero = src_zero & (zeros_per == 1)
        masked_src = src.masked_fill(single_zero, 1)
        masked_src_res = x.scatter_reduce(d, index, masked_src, "prod", include_self=include_self)
        gsrc = J.where(single_zero, (g * masked_src_res).gather(d, index),
                       (g * out).gather(d, index) / src.masked_fill(src_zero, 1))
    elif reduce == "mean":
        n = J.ones_like(g) if include_self else J.zeros_like(g)
        n = n.scatter_add(d, index, J.ones_like(src))
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
    return (J.zeros(shape, dtype=g.dtype).index_add(c.kw["dim"], c.args[1], g), None)


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
    hit = J.zeros(g._a.shape, dtype=_dt.bool).index_fill(d, index, True)
    return (gs, None, J.where(hit, g, 0.0).sum())


def _index_items(indices) -> tuple:
    """The index tuple ``index_put_`` applies (0-d integer indices are size-1 index tensors)."""
    return tuple(t if t._a.ndim or t.dtype in _MASK_DTYPES else t.reshape(1) for t in indices)


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
    return (gs, None, J.where(mask, g, 0.0).sum())


def _masked_scatter_vjp(c, g):
    mask = c.args[1]
    gs = g.masked_fill(mask, 0) if c.needs[0] else None
    gsrc = None
    if c.needs[2]:
        sshape = c._meta[2][0]
        gsrc = g.masked_select(mask)
        missing = math.prod(sshape) - gsrc._a.size
        if missing > 0:
            gsrc = J.cat([gsrc, J.zeros(missing, dtype=g.dtype)])
        gsrc = gsrc.reshape(sshape)
    return (gs, None, gsrc)


def _masked_select_vjp(c, g):
    from ...shape import broadcast_shapes

    mask = c.args[1]
    shape = broadcast_shapes(c._meta[0][0], mask._a.shape)
    return (J.zeros(shape, dtype=g.dtype).masked_scatter(mask, g), None)


def _take_vjp(c, g):
    return (_embed_flat(c._meta[0][0], g, c.args[1]), None)


def _scatter_name(inputs: tuple, kw) -> str:
    return "ScatterBackward0" if len(inputs) > 2 else "ScatterBackward1"


for _op, _rule, _saves, _name in [
    (view_op, _view_vjp, "", None),
    (squeeze_op, _view_vjp, "", None),
    (squeeze__op, _view_vjp, "", None),
    (unsqueeze_op, _view_vjp, "", None),
    (unsqueeze__op, _view_vjp, "", None),
    (permute_op, _permute_vjp, "", None),
    (transpose_op, _permute_vjp, "", None),
    (transpose__op, _permute_vjp, "", None),
    (t_op, _permute_vjp, "", None),
    (t__op, _permute_vjp, "", None),
    (expand_op, _expand_vjp, "", None),
    (slice_op, _slice_vjp, "", None),
    (narrow_op, _slice_vjp, "", None),
    (select_op, _select_vjp, "", None),
    (unbind_op, _unbind_vjp, "", None),
    (split_op, _pieces_vjp, "", None),
    (split_with_sizes_op, _pieces_vjp, "", None),
    (chunk_op, _pieces_vjp, "", None),
    (diagonal_op, _diagonal_vjp, "", None),
    (as_strided_op, _as_strided_vjp, "", None),
    (as_strided__op, _as_strided_vjp, "", None),
    (unfold_op, _as_strided_vjp, "", None),
    (index_op, _index_vjp, "", _index_name),
    (cat_op, _cat_vjp, "", None),
    (stack_op, _stack_vjp, "", None),
    (flip_op, lambda c, g: (g.flip(c.kw["dims"]),), "", None),
    (roll_op, _roll_vjp, "", None),
    (repeat_op, _repeat_vjp, "", None),
    (tril_op, lambda c, g: (g.tril(c.kw["diagonal"]),), "", None),
    (triu_op, lambda c, g: (g.triu(c.kw["diagonal"]),), "", None),
    (tril__op, lambda c, g: (g.tril(c.kw["diagonal"]),), "", None),
    (triu__op, lambda c, g: (g.triu(c.kw["diagonal"]),), "", None),
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
]:
    defvjp(_op, _rule, _saves, _name)
