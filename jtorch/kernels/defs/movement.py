"""Movement ops: views (``defs/view.py``: new shape/strides/offset over the same storage, no
kernel) and copying movement ops (cat, stack, flip, roll, repeat, tril/triu, whose meta rules
plan a fresh result and whose CPU kernels are in ``kernels/cpu/movement``).

``ops/views.py`` calls ``dispatch.call(op, *tensors, **params)`` with these records. The
gradient rules of the views and copies are at the bottom of the file; they read the normalised
params in ``node.kw``. The index family (``__getitem__``, gather/scatter, index_put, masked ops,
nonzero) is in ``defs/indexing.py``.
"""

from __future__ import annotations

import math

import numpy as np

from ... import dispatch
from ... import dtypes as _dt
from ...device import CPU, META
from ...shape import wrap_dim
from ...tensor import Tensor
from ..cpu import movement as _mk
from ..plan import Inplace, Out, Plan, common_device, device_of
from ..registry import OpDef, defvjp, op
from . import _prims as P
from .view import (  # noqa: F401  (the view records live with their geometry)
    _dup_message, as_strided__op, as_strided_op, chunk_op, diagonal_op, expand_op, narrow_op,
    permute_op, select_op, slice_op, split_op, split_with_sizes_op, squeeze__op, squeeze_op, t__op,
    t_op, transpose__op, transpose_op, unbind_op, unfold_op, unsqueeze__op, unsqueeze_op,
    view_as_complex_op, view_as_real_op, view_dtype_op, view_op)


# -- copying movement ops: meta rules -------------------------------------------------------

_NDARRAY = np.ndarray


def _promoted(tensors) -> _dt.dtype:
    d = tensors[0].dtype
    for x in tensors[1:]:
        if x.dtype is not d:
            d = _dt.promote_types(d, x.dtype)
    return d


def _check_out_dtype(d: _dt.dtype, out_dtype) -> None:
    if out_dtype is not None and not _dt.can_cast(d, out_dtype):
        raise TypeError(f"torch.cat(): input types can't be cast to the desired output type "
                        f"{out_dtype.scalar_name}")


def _device(tensors, cpu: bool):
    """CPU when every input is a plain CPU array (checked by the caller), else torch's rule."""
    return CPU if cpu else common_device(*tensors)


_EMPTY_1D = (0,)


def _cat_meta(*tensors, dim: int = 0, out_dtype=None) -> Plan:
    """Concatenate along ``dim`` in the promoted dtype; 1-D empty tensors are skipped (legacy);
    ``out_dtype``: the dtype of an ``out=`` tensor, checked for the cast. Each input costs a
    few attribute reads (a cat of 64 samples is a hot call)."""
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    d = tensors[0].dtype
    mixed = False
    cpu = True
    for x in tensors:
        if x.dtype is not d:
            mixed = True
        if x._a.__class__ is not _NDARRAY:
            cpu = False
    if mixed:
        d = _promoted(tensors)
    _check_out_dtype(d, out_dtype)
    shapes = [x._a.shape for x in tensors]
    if () in shapes:
        raise RuntimeError(f"zero-dimensional tensor (at position {shapes.index(())}) cannot be "
                           "concatenated")
    ref = next((s for s in shapes if s != _EMPTY_1D), None)
    if ref is None:
        return Plan(Out((0,), d), {"dim": 0}, _device(tensors, cpu))
    nd = len(ref)
    axis = wrap_dim(dim, nd)
    pre, post = ref[:axis], ref[axis + 1:]
    total = 0
    for i, s in enumerate(shapes):
        if len(s) != nd or (post and s[axis + 1:] != post) or (axis and s[:axis] != pre):
            if s == _EMPTY_1D:  # legacy: skipped
                continue
            _cat_mismatch(i, s, ref, axis)
        total += s[axis]
    return Plan(Out(pre + (total,) + post, d), {"dim": axis}, _device(tensors, cpu))


def _cat_mismatch(i: int, s: tuple, ref: tuple, axis: int) -> None:
    nd = len(ref)
    if len(s) != nd:
        raise RuntimeError(f"Tensors must have same number of dimensions: got {nd} and {len(s)}")
    for k in range(nd):
        if k != axis and s[k] != ref[k]:
            raise RuntimeError(f"Sizes of tensors must match except in dimension {axis}. "
                               f"Expected size {ref[k]} but got size {s[k]} for tensor number "
                               f"{i} in the list.")


def _stack_meta(*tensors, dim: int = 0, out_dtype=None) -> Plan:
    """Stack along a new ``dim``: equal shapes, promoted dtype (one pass over the inputs)."""
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    s0 = tensors[0]._a.shape
    d = tensors[0].dtype
    mixed = False
    cpu = True
    for x in tensors:
        a = x._a
        if a.shape != s0:
            i = next(i for i, x in enumerate(tensors) if x._a.shape != s0)
            raise RuntimeError(f"stack expects each tensor to be equal size, but got {list(s0)} at "
                               f"entry 0 and {list(tensors[i]._a.shape)} at entry {i}")
        if a.__class__ is not _NDARRAY:
            cpu = False
        if x.dtype is not d:
            mixed = True
    k = wrap_dim(dim, len(s0) + 1)
    if mixed:
        d = _promoted(tensors)
    _check_out_dtype(d, out_dtype)
    return Plan(Out(s0[:k] + (len(tensors),) + s0[k:], d), {"dim": k}, _device(tensors, cpu))


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
            f'"repeat_interleave_cpu" not implemented for \'{repeats.dtype.scalar_name}\'')
    if repeats._a.ndim != 1:
        raise RuntimeError("repeat_interleave only accept 1D vector as repeat")
    dev = device_of(repeats)
    if output_size is None and dev is META:  # a tracer's stand-in reports its own device
        raise RuntimeError("cannot repeat_interleave a meta tensor without output_size")
    out = None if output_size is None else Out((output_size,), _dt.int64)
    return Plan(out, {"output_size": output_size}, dev)


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


# -- gradient rules: vjp(node, grad) in jtorch ops -------------------------------------------
# Views and copies map the gradient back with the inverse movement (torch's derivatives.yaml).
# Every gradient op records for autograd itself, so create_graph gives second derivatives.

def _permute_vjp(c, g):
    dims = c.kw["dims"]
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return (g.permute(inv),)


def _expand_vjp(c, g):
    """The node sums the broadcast dims back to the input's shape (``autograd.node.sum_to``)."""
    return (g,)


def embed(shape: tuple, g: Tensor, index) -> Tensor:
    """zeros(shape) with ``g`` written at the basic index ``index`` (a view: no duplicates)."""
    z = g.new_zeros(shape)
    z[index] = g
    return z


def embed_flat(shape: tuple, g: Tensor, pos: Tensor, accumulate: bool = True) -> Tensor:
    """zeros(shape) with ``g`` added at the flat positions ``pos`` (an int64 tensor shaped
    like ``g``); duplicates accumulate."""
    z = g.new_zeros(math.prod(shape))
    z.index_put_((pos.reshape(-1),), g.reshape(-1), accumulate)
    return z.reshape(shape)


def positions(shape: tuple, device) -> Tensor:
    """The flat position of every element of a contiguous tensor of ``shape``."""
    return P.arange(math.prod(shape), device).reshape(shape)


def _dim_index(dim: int, it) -> tuple:
    return (slice(None),) * dim + (it,)


def _slice_vjp(c, g):
    kw = c.kw
    return (embed(c._meta[0][0], g, _dim_index(kw["dim"], slice(kw["start"], kw["end"],
                                                                   kw["step"]))),)


def _select_vjp(c, g):
    return (embed(c._meta[0][0], g, _dim_index(c.kw["dim"], c.kw["index"])),)


def _diagonal_vjp(c, g):
    shape = c._meta[0][0]
    kw = c.kw
    pos = positions(shape, g.device).diagonal(kw["offset"], kw["dim1"], kw["dim2"])
    return (embed_flat(shape, g, pos, False),)


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
    storage = P.arange(span, g.device)
    flat = embed_flat((span,), g, storage.as_strided(size, stride, off - lo))
    in_pos = storage.as_strided(shape, in_st, in_off - lo)
    if _may_overlap(shape, in_st):
        count = g.new_zeros(span)
        count.index_put_((in_pos.reshape(-1),), g.new_ones(in_pos.numel()), True)
        flat = flat / count.clamp_min(1)
    return (flat[in_pos],)


def _cat_vjp(c, g):
    """The gradient split back into the inputs' pieces: one ``split_with_sizes`` (views)."""
    d = c.kw["dim"]
    kept, sizes = [], []
    for i, (shape, _) in enumerate(c._meta):
        if shape != (0,):  # legacy: 1-D empty tensors are skipped by cat
            kept.append(i)
            sizes.append(shape[d])
    res = [None] * len(c.needs)
    if kept:
        for i, piece in zip(kept, g.split_with_sizes(sizes, d)):
            if c.needs[i]:
                res[i] = piece
    for i, (shape, _) in enumerate(c._meta):
        if shape == (0,) and c.needs[i]:
            res[i] = g.new_zeros((0,))
    return tuple(res)


def _stack_vjp(c, g):
    """The gradient's slices along the new dim: one ``unbind`` (views)."""
    return tuple(p if need else None for p, need in zip(g.unbind(c.kw["dim"]), c.needs))


def _pieces_vjp(c, g):
    """split/chunk: the pieces' gradients side by side (missing ones are zeros)."""
    return (P.cat(g, c.kw["dim"]),)


def _unbind_vjp(c, g):
    return (P.stack(g, c.kw["dim"]),)


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


def _dense(g):
    """A row-major copy: always a recorded op, as a compiled backward may be handed a
    broadcast gradient that looked dense when it was traced."""
    return g.clone(memory_format=_dt.contiguous_format)


for _op, _rule, _saves in [
    (view_op, _view_vjp, ""),
    (squeeze_op, _view_vjp, ""),
    (squeeze__op, _view_vjp, ""),
    (unsqueeze_op, _view_vjp, ""),
    (unsqueeze__op, _view_vjp, ""),
    (permute_op, _permute_vjp, ""),
    (transpose_op, _permute_vjp, ""),
    (transpose__op, _permute_vjp, ""),
    (t_op, _permute_vjp, ""),
    (t__op, _permute_vjp, ""),
    (expand_op, _expand_vjp, ""),
    (slice_op, _slice_vjp, ""),
    (narrow_op, _slice_vjp, ""),
    (select_op, _select_vjp, ""),
    (unbind_op, _unbind_vjp, ""),
    (split_op, _pieces_vjp, ""),
    (split_with_sizes_op, _pieces_vjp, ""),
    (chunk_op, _pieces_vjp, ""),
    (diagonal_op, _diagonal_vjp, ""),
    (as_strided_op, _as_strided_vjp, ""),
    (as_strided__op, _as_strided_vjp, ""),
    (unfold_op, _as_strided_vjp, ""),
    (cat_op, _cat_vjp, ""),
    (stack_op, _stack_vjp, ""),
    (flip_op, lambda c, g: (g.flip(c.kw["dims"]),), ""),
    (roll_op, _roll_vjp, ""),
    (repeat_op, _repeat_vjp, ""),
    (tril_op, lambda c, g: (g.tril(c.kw["diagonal"]),), ""),
    (triu_op, lambda c, g: (g.triu(c.kw["diagonal"]),), ""),
    (tril__op, lambda c, g: (g.tril(c.kw["diagonal"]),), ""),
    (triu__op, lambda c, g: (g.triu(c.kw["diagonal"]),), ""),
    # torch's rules: each view's gradient is the other view of the (contiguous) gradient
    (view_as_real_op, lambda c, g: (dispatch.call(view_as_complex_op, _dense(g)),), ""),
    (view_as_complex_op, lambda c, g: (dispatch.call(view_as_real_op, _dense(g)),), ""),
]:
    defvjp(_op, _rule, _saves)
