"""View ops: results that alias their input's storage at a new (shape, strides, offset).

Each meta rule checks its arguments (torch's exception types and messages) and computes the
view's geometry in elements (``View``); ``dispatch.call`` makes the view on every device, no
kernel runs. The one exception is ``view`` called for ``reshape``: where the strides do not
allow a view it plans a fresh contiguous result (``Out``) and ``kernels/cpu/movement.py``
copies. ``kw`` holds what the gradient rules in ``defs/movement.py`` read (the input's shape
is on the node; the rules map the gradient back with the inverse movement).

Geometry is read from metadata only (``x._a.shape``, ``.strides``, the storage offset), so
the rules run alike on CPU and meta tensors.
"""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ...device import CPU, META
from ...meta import MetaArray
from ...shape import contiguous_strides, elem_offset, elem_strides, wrap_dim
from ..cpu import movement as _mk
from ..plan import Out, Plan, View, device_of
from ..registry import op

_META = MetaArray


# -- geometry of a tensor (elements) -----------------------------------------------------

def _where(x) -> tuple:
    """(storage offset, device) of ``x``: ``elem_offset`` and ``device_of`` in one call, for the
    hot view rules (reshape, t, transpose, permute)."""
    a = x._a
    if a.__class__ is _META:
        return a.offset, META
    n = a.size
    if n and n == x._st.size:
        f = a.flags
        if f.c_contiguous or f.f_contiguous:
            return 0, CPU
    return elem_offset(a, x._st), CPU


def _dup_message(dims) -> str:
    seen = set()
    for d in dims:
        if d in seen:
            return f"dim {d} appears multiple times in the list of dims"
        seen.add(d)
    return ""


# -- view / reshape ------------------------------------------------------------------------

def infer_shape(shape: tuple, numel: int) -> tuple:
    """``shape`` with its one -1 inferred from ``numel`` (torch's infer_size errors)."""
    neg = -1
    known = 1
    for i, s in enumerate(shape):
        if s == -1:
            if neg >= 0:
                raise RuntimeError("only one dimension can be inferred")
            neg = i
        elif s < 0:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {list(shape)}")
        else:
            known *= s
    if neg >= 0:
        if known == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {list(shape)} "
                               "because the unspecified dimension size -1 can be any value and "
                               "is ambiguous" if numel == 0 else
                               f"shape '{list(shape)}' is invalid for input of size {numel}")
        if numel % known:
            raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
        return shape[:neg] + (numel // known,) + shape[neg + 1:]
    if known != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return shape


def compute_stride(oldshape, oldstride, newshape):
    """Strides that view ``oldshape/oldstride`` as ``newshape``, or None (ATen computeStride)."""
    if not oldshape:
        return (1,) * len(newshape)
    numel = 1
    for n in oldshape:
        numel *= n
    if numel == 0 and tuple(oldshape) == tuple(newshape):
        return tuple(oldstride)
    nd = len(newshape)
    newstride = [0] * nd
    if numel == 0:
        for d in range(nd - 1, -1, -1):
            newstride[d] = 1 if d == nd - 1 else max(newshape[d + 1], 1) * newstride[d + 1]
        return tuple(newstride)
    view_d = nd - 1
    chunk_base = oldstride[-1]
    tensor_numel = 1
    view_numel = 1
    for td in range(len(oldshape) - 1, -1, -1):
        tensor_numel *= oldshape[td]
        if td == 0 or (oldshape[td - 1] != 1 and oldstride[td - 1] != tensor_numel * chunk_base):
            while view_d >= 0 and (view_numel < tensor_numel or newshape[view_d] == 1):
                newstride[view_d] = view_numel * chunk_base
                view_numel *= newshape[view_d]
                view_d -= 1
            if view_numel != tensor_numel:
                return None
            if td > 0:
                chunk_base = oldstride[td - 1]
                tensor_numel = 1
                view_numel = 1
    if view_d != -1:
        return None
    return tuple(newstride)


# (requested shape, numel) -> (shape, contiguous strides, their View at offset 0): the geometry
# of a view of a contiguous tensor, the common case of view/reshape/flatten
_contiguous_views: dict = {}
# (shape, byte strides, item size, requested shape) of a strided array -> (the shape, its
# element strides as a view, or None where reshape copies)
_strided_views: dict = {}


def _view_meta(x, *, shape: tuple, reshape: bool = False) -> Plan:
    """``x.view(shape)``; with ``reshape`` a contiguous copy where no view fits (torch's
    ``reshape``: ``_unsafe_view`` of a clone, one node here)."""
    a = x._a
    n = a.size
    if n and a.flags.c_contiguous:
        g = _contiguous_views.get((shape, n))
        if g is None:
            s = infer_shape(shape, n)
            if len(_contiguous_views) > 4096:
                _contiguous_views.clear()
            st = contiguous_strides(s)
            v = View(s, st, 0)
            v.reshape = s
            g = _contiguous_views[(shape, n)] = (s, st, v)
        if a.__class__ is _META:
            return Plan(View(g[0], g[1], a.offset), {"shape": a.shape}, device_of(x))
        if n == x._st.size:  # the whole storage: offset 0 (the plan's View is shared)
            return Plan(g[2], {"shape": a.shape}, CPU)
        v = View(g[0], g[1], elem_offset(a, x._st))
        v.reshape = g[0]
        return Plan(v, {"shape": a.shape}, CPU)
    key = (a.shape, a.strides, a.itemsize, shape)
    g = _strided_views.get(key)
    if g is None:  # (memoised: a reshape that copies, each step of a model, asked twice)
        s = infer_shape(shape, n)
        if len(_strided_views) > 4096:
            _strided_views.clear()
        g = _strided_views[key] = (s, compute_stride(a.shape, elem_strides(a), s))
    shape, st = g
    if st is not None:
        return Plan(View(shape, st, elem_offset(a, x._st)), {"shape": a.shape}, device_of(x))
    if reshape:
        return Plan(Out(shape, x.dtype), {"shape": a.shape, "_name": "UnsafeViewBackward0"},
                    device_of(x))
    raise RuntimeError(
        "view size is not compatible with input tensor's size and stride (at least one "
        "dimension spans across two contiguous subspaces). Use .reshape(...) instead."
    )


def _view_cpu(a, *, shape: tuple, reshape: bool = False):
    """A row-major array reshaped to a shape the plan path has checked before; or a strided
    one (attention's heads split off a slice of the fused projection) where NumPy reshapes
    it without a copy, to a shape with no size-1 dim (whose stride torch picks its own way)."""
    n = a.size
    if n and a.flags.c_contiguous:
        g = _contiguous_views.get((shape, n))
        if g is not None:
            return a.reshape(g[0])
    elif n and a.__class__ is np.ndarray:
        g = _strided_views.get((a.shape, a.strides, a.itemsize, shape))
        if g is not None and g[1] is None:
            return None  # no view fits (the meta rule found it): no exception to pay for
        try:  # a view or nothing (NumPy would copy where no view fits)
            r = a.reshape(shape, copy=False)
        except (ValueError, TypeError):
            return None
        base = a.base
        if r.base is (a if base is None else base) and 1 not in r.shape:
            return r
    return None


def _view_dtype_unit_stride(strides: list, what: str) -> None:
    if strides[-1] != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {strides[-1]}")


def _view_dtype_meta(x, *, dtype: _dt.dtype) -> Plan:
    """The same bytes read as ``dtype``: between item sizes the last dim (stride 1) is split
    or merged, other strides and the offset rescaled (ATen's ``view_dtype`` and its checks).
    The plan describes the result as an ``Out`` (a ``View`` cannot change the dtype); the
    CPU kernel makes it over the input's storage."""
    a = x._a
    d = dtype
    shape, off = list(a.shape), elem_offset(a, x._st)
    if d.itemsize == x.dtype.itemsize:
        return Plan(Out(tuple(shape), d, elem_strides(a)), {"dtype": d, "offset": off},
                    device_of(x))
    from ...dispatch import torch_name

    # an empty array's NumPy strides are 0; torch reports a fresh tensor's row-major strides
    strides = list(contiguous_strides(shape) if a.size == 0 and a.flags.c_contiguous
                   else elem_strides(a))
    what = (f"to view {torch_name(x.dtype)} as {torch_name(d)} (different element sizes)")
    if not shape:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    if x.dtype.itemsize > d.itemsize:
        r = x.dtype.itemsize // d.itemsize
        _view_dtype_unit_stride(strides, what)
        shape[-1], strides, off = shape[-1] * r, [s * r for s in strides[:-1]] + [1], off * r
    else:
        r = d.itemsize // x.dtype.itemsize
        if shape[-1] % r:
            raise RuntimeError(f"self.size(-1) must be divisible by {r} {what}, but got {shape[-1]}")
        if off % r:
            raise RuntimeError(f"self.storage_offset() must be divisible by {r} {what}, but got {off}")
        _view_dtype_unit_stride(strides, what)
        for i, s in enumerate(strides[:-1]):
            if s % r:
                raise RuntimeError(f"self.stride({i}) must be divisible by {r} {what}, but got {s}")
        shape[-1], strides, off = shape[-1] // r, [s // r for s in strides[:-1]] + [1], off // r
    return Plan(Out(tuple(shape), d, tuple(strides)), {"dtype": d, "offset": off}, device_of(x))


# -- complex numbers as real pairs ---------------------------------------------------------

def _view_as_real_meta(x) -> Plan:
    """Each complex element as its (real, imag) pair in a new last dim of size 2: the strides
    and the offset counted in reals, over the same storage."""
    if not x.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    v = View((*x._a.shape, 2), tuple(2 * s for s in x.stride()) + (1,), 2 * x.storage_offset())
    v.dtype = x.dtype.to_real()
    return Plan(v, {}, device_of(x))


def _view_as_complex_meta(x) -> Plan:
    """The inverse of view_as_real, with torch's checks (a last dim of 2 reals at stride 1,
    even strides and an even offset)."""
    d = x.dtype
    if d not in (_dt.float32, _dt.float64, _dt.float16):
        raise RuntimeError("view_as_complex is only supported for half, float and double tensors, "
                           f"but got a tensor of scalar type: {d.scalar_name}")
    shape, strides, off = x._a.shape, x.stride(), x.storage_offset()
    if not shape:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if strides[-1] != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in strides[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    if off % 2:
        raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    if d is _dt.float16:
        raise RuntimeError("view_as_complex: complex32 (ComplexHalf) is not supported")
    v = View(tuple(shape[:-1]), tuple(s // 2 for s in strides[:-1]), off // 2)
    v.dtype = _dt.complex64 if d is _dt.float32 else _dt.complex128
    return Plan(v, {}, device_of(x))


# -- permutations --------------------------------------------------------------------------

def _permuted(x, dims: tuple) -> Plan:
    a = x._a
    isz = a.itemsize
    sh, st = a.shape, a.strides
    off, dev = _where(x)
    return Plan(View(tuple([sh[d] for d in dims]), tuple([st[d] // isz for d in dims]), off,
                     0, dims), {"dims": dims}, dev)


# (ndim, dims as given) -> the checked, wrapped permutation (permute and transpose)
_perms: dict = {}


def _permute_dims(nd: int, dims: tuple) -> tuple:
    if len(dims) != nd:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            "length of the desired ordering of dimensions i.e. input.dim() = "
            f"{nd} is not equal to len(dims) = {len(dims)}"
        )
    dims = tuple(wrap_dim(d, nd) for d in dims)
    if len(set(dims)) != nd:
        raise RuntimeError("permute(): duplicate dims are not allowed.")
    return dims


def _permute_meta(x, *, dims: tuple) -> Plan:
    nd = x._a.ndim
    key = (nd, dims)
    p = _perms.get(key)
    if p is None:
        p = _permute_dims(nd, dims)
        if len(_perms) > 4096:
            _perms.clear()
        _perms[key] = p
    return _permuted(x, p)


def _permute_cpu(a, *, dims: tuple):
    p = _perms.get((a.ndim, dims))
    return None if p is None else a.transpose(p)


def _transpose_dims(nd: int, dim0, dim1) -> tuple:
    d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    if nd == 0:
        return ()
    dims = list(range(nd))
    dims[d0], dims[d1] = d1, d0
    return tuple(dims)


def _transpose_meta(x, *, dim0: int, dim1: int) -> Plan:
    nd = x._a.ndim
    if dim0.__class__ is not int or dim1.__class__ is not int:  # 0-d tensors, NumPy ints
        return _permuted(x, _transpose_dims(nd, dim0, dim1))
    key = (nd, dim0, dim1, None)
    p = _perms.get(key)
    if p is None:
        p = _transpose_dims(nd, dim0, dim1)
        if len(_perms) > 4096:
            _perms.clear()
        _perms[key] = p
    return _permuted(x, p)


def _transpose_cpu(a, *, dim0: int, dim1: int):
    if dim0.__class__ is not int or dim1.__class__ is not int:
        return None
    p = _perms.get((a.ndim, dim0, dim1, None))
    return None if p is None else a.transpose(p)


_T = (1, 0)


def _t_cpu(a):
    return a.T if a.ndim == 2 else None


def _t_meta(x) -> Plan:
    a = x._a
    nd = a.ndim
    if nd == 2:
        isz = a.itemsize
        (n0, n1), (s0, s1) = a.shape, a.strides
        if a.__class__ is _META:
            off, dev = a.offset, META
        else:  # _where, inlined: the commonest view of all
            dev = CPU
            n = n0 * n1  # row- or column-major over the whole storage: offset 0
            off = 0 if n and n == x._st.size and (s1 == isz and s0 == n1 * isz or
                                                   s0 == isz and s1 == n0 * isz) \
                else elem_offset(a, x._st)
        return Plan(View((n1, n0), (s1 // isz, s0 // isz), off, 0, _T), {"dims": _T}, dev)
    if nd > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return _permuted(x, tuple(range(nd)))


def _t_inplace_meta(x) -> Plan:
    nd = x._a.ndim
    if nd > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {nd}D")
    return _t_meta(x)


# -- squeeze / unsqueeze / expand --------------------------------------------------------

def _squeeze_meta(x, *, dim=None, _nr: int = 0) -> Plan:
    """Size-1 dims dropped (all, or those of ``dim``); torch names the node by overload:
    SqueezeBackward0/1/2 (none, one dim, dims), 3/4/5 for ``squeeze_``."""
    a = x._a
    shape, st = a.shape, elem_strides(a)
    nd = len(shape)
    if dim is None:
        keep = [i for i in range(nd) if shape[i] != 1]
        nr = 0
    else:
        multi = isinstance(dim, (tuple, list))
        wrapped = [wrap_dim(d, nd) for d in (dim if multi else (dim,))]
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(_dup_message(wrapped))
        drop = {d for d in wrapped if nd and shape[d] == 1}
        keep = [i for i in range(nd) if i not in drop]
        nr = 2 if multi else 1
    v = View(tuple(shape[i] for i in keep), tuple(st[i] for i in keep), elem_offset(a, x._st))
    return Plan(v, {"shape": shape, "_name": f"SqueezeBackward{nr + _nr}"}, device_of(x))


def _squeeze_inplace_meta(x, *, dim=None) -> Plan:
    return _squeeze_meta(x, dim=dim, _nr=3)


def _unsqueezed(x, d: int) -> View:
    """The size-1 view at (wrapped) ``d``."""
    a = x._a
    shape, st = list(a.shape), list(elem_strides(a))
    new_st = 1 if d >= len(shape) else shape[d] * st[d]
    shape.insert(d, 1)
    st.insert(d, new_st)
    return View(tuple(shape), tuple(st), elem_offset(a, x._st))


def _unsqueeze_meta(x, *, dim: int) -> Plan:
    return Plan(_unsqueezed(x, wrap_dim(dim, x._a.ndim + 1)), {"shape": x._a.shape},
                device_of(x))


def _type_string(t) -> str:
    """torch's Tensor::toString(): legacy names on CPU (CPU<Name>Type for bool and complex),
    Meta<Name>Type on meta."""
    d = t.dtype
    if device_of(t) is META:
        return f"Meta{d.scalar_name}Type"
    if d is _dt.bool or d.is_complex:
        return f"CPU{d.scalar_name}Type"
    return f"torch.{d._legacy}"


def expand_geometry(t, size: tuple) -> tuple:
    """(shape, element strides) lists of ``t`` expanded to ``size`` (torch's checks)."""
    shape, st = t._a.shape, elem_strides(t._a)
    nd, tnd = len(size), len(shape)
    if nd < tnd:
        raise RuntimeError(
            f"expand({_type_string(t)}{{{list(shape)}}}, size={list(size)}): the number of "
            f"sizes provided ({nd}) must be greater or equal to the number of dimensions in the "
            f"tensor ({tnd})"
        )
    out_shape, out_st = [0] * nd, [0] * nd
    if tnd == 0:  # a scalar expands with all strides 0
        for i, n in enumerate(size):
            if n < 0:
                raise RuntimeError(f"The expanded size of the tensor ({n}) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
        return list(size), out_st
    for i in range(nd - 1, -1, -1):
        d = tnd - nd + i
        if d >= 0:
            n, s = shape[d], st[d]
        else:
            n = 1
            s = out_shape[i + 1] * out_st[i + 1] if i + 1 < nd else 1
        target = size[i]
        if target == -1:
            if d < 0:
                raise RuntimeError(
                    f"The expanded size of the tensor (-1) isn't allowed in a leading, "
                    f"non-existing dimension {i}"
                )
            target = n
        if n != target:
            if n != 1:
                raise RuntimeError(
                    f"The expanded size of the tensor ({target}) must match the existing size "
                    f"({n}) at non-singleton dimension {i}.  Target sizes: {list(size)}.  "
                    f"Tensor sizes: {list(shape)}"
                )
            n, s = target, 0
        if target < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {target}: "
                               f"{list(size)}")
        out_shape[i], out_st[i] = n, s
    return out_shape, out_st


def _expand_meta(x, *, size: tuple) -> Plan:
    shape, st = expand_geometry(x, size)
    shape = tuple(shape)
    return Plan(View(shape, tuple(st), elem_offset(x._a, x._st)), {"size": shape}, device_of(x))


# -- slices: narrow, select, slice, split, chunk, unbind ---------------------------------

def _sliced(x, dim: int, start: int, end: int, step: int = 1) -> View:
    """``x`` along ``dim`` from ``start`` to ``end`` (already clamped) by ``step``."""
    a = x._a
    shape, st = list(a.shape), list(elem_strides(a))
    off = elem_offset(a, x._st) + start * st[dim]
    shape[dim] = max(0, -(-(end - start) // step))
    st[dim] *= step
    return View(tuple(shape), tuple(st), off)


def _slice_meta(x, *, dim: int = 0, start=None, end=None, step: int = 1) -> Plan:
    """aten::slice: ``start``/``end`` wrapped once if negative, then clamped to the dim."""
    a = x._a
    if a.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, a.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    n = a.shape[d]
    start = 0 if start is None else start
    end = n if end is None else end
    if start < 0:
        start += n
    if end < 0:
        end += n
    start = min(max(start, 0), n)
    end = min(max(end, start), n)
    return Plan(_sliced(x, d, start, end, step), {"dim": d, "start": start, "end": end,
                                                 "step": step}, device_of(x))


def _narrow_meta(x, *, dim: int, start: int, length: int) -> Plan:
    a = x._a
    if a.ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if not -n <= start <= n:
        raise IndexError(f"start out of range (expected to be in range of [{-n}, {n}], but got "
                         f"{start})")
    if start < 0:
        start += n
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    end = start + length
    return Plan(_sliced(x, d, start, end), {"dim": d, "start": start, "end": end, "step": 1},
                device_of(x))


def _selected(x, d: int, index: int, off: int | None = None) -> View:
    a = x._a
    shape, st = list(a.shape), list(elem_strides(a))
    off = (elem_offset(a, x._st) if off is None else off) + index * st[d]
    del shape[d], st[d]
    return View(tuple(shape), tuple(st), off)


def _select_meta(x, *, dim: int, index: int) -> Plan:
    a = x._a
    nd = a.ndim
    if nd == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, nd)
    n = a.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(a.shape)} at dimension {dim}")
    if index < 0:
        index += n
    return Plan(_selected(x, d, index), {"dim": d, "index": index}, device_of(x))


def _unbind_meta(x, *, dim: int = 0) -> Plan:
    a = x._a
    if a.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    d = wrap_dim(dim, a.ndim)
    off = elem_offset(a, x._st)
    return Plan(tuple(_selected(x, d, i, off) for i in range(a.shape[d])), {"dim": d},
                device_of(x))


def _pieces(x, d: int, sizes: tuple, kw: dict) -> Plan:
    """Consecutive slices of ``sizes`` along ``d`` (a tuple of views)."""
    out, start = [], 0
    for s in sizes:
        out.append(_sliced(x, d, start, start + s))
        start += s
    kw["dim"], kw["sizes"] = d, sizes
    return Plan(tuple(out), kw, device_of(x))


def _split_sizes(n: int, size: int) -> tuple:
    if size < 0:
        raise RuntimeError(f"split expects split_size be non-negative, but got split_size={size}")
    if size == 0:
        if n != 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {n}")
        return (0,)
    return (size,) * (n // size) + ((n % size,) if n % size or n == 0 else ())


def _split_meta(x, *, split_size: int, dim: int = 0) -> Plan:
    """Pieces of ``split_size`` (the last may be smaller)."""
    a = x._a
    if a.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, a.ndim)
    return _pieces(x, d, _split_sizes(a.shape[d], split_size), {})


def _split_with_sizes_meta(x, *, split_sizes: tuple, dim: int = 0) -> Plan:
    a = x._a
    if a.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    if sum(split_sizes) != n or any(s < 0 for s in split_sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {n} (input "
                           f"tensor's size at dimension {d}), but got split_sizes="
                           f"{list(split_sizes)}")
    return _pieces(x, d, split_sizes, {})


def _chunk_meta(x, *, chunks: int, dim: int = 0) -> Plan:
    """``chunks`` pieces of ceil(n / chunks) (fewer when they run out): torch's ``split``; an
    empty dim gives ``chunks`` empty pieces (``split_with_sizes``)."""
    a = x._a
    if a.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d]
    if n == 0:
        return _pieces(x, d, (0,) * chunks, {"_name": "SplitWithSizesBackward0"})
    return _pieces(x, d, _split_sizes(n, -(-n // chunks)), {"_name": "SplitBackward0"})


# -- diagonal, as_strided, unfold ----------------------------------------------------------

def _diagonal_meta(x, *, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Plan:
    a = x._a
    nd = a.ndim
    d1, d2 = wrap_dim(dim1, nd), wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    shape, st = a.shape, elem_strides(a)
    off = elem_offset(a, x._st)
    if offset >= 0:
        n = max(min(shape[d1], shape[d2] - offset), 0)
        delta = offset * st[d2]
    else:
        n = max(min(shape[d1] + offset, shape[d2]), 0)
        delta = -offset * st[d1]
    if n:
        off += delta
    keep = [i for i in range(nd) if i not in (d1, d2)]
    v = View(tuple(shape[i] for i in keep) + (n,), tuple(st[i] for i in keep) + (st[d1] + st[d2],),
             off)
    return Plan(v, {"offset": offset, "dim1": d1, "dim2": d2}, device_of(x))


def _as_strided_meta(x, *, size: tuple, stride: tuple, storage_offset=None) -> Plan:
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    in_off = elem_offset(x._a, x._st)
    off = in_off if storage_offset is None else storage_offset
    if off < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {off}")
    need = 0 if 0 in size else off + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    isz = x.dtype.itemsize
    if need > x._st.size:
        raise RuntimeError(
            f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset {off}, and "
            f"itemsize {isz} requiring a storage size of {need * isz} are out of bounds for "
            f"storage of size {x._st.size * isz}"
        )
    return Plan(View(size, stride, off), {"size": size, "stride": stride, "storage_offset": off,
                                          "in_stride": elem_strides(x._a), "in_offset": in_off},
                device_of(x))


def _unfold_meta(x, *, dimension: int, size: int, step: int) -> Plan:
    """Every ``size``-long slice along ``dimension`` taken ``step`` apart, the slices in a new
    last dim (the gradient is as_strided's: the slices may overlap)."""
    a = x._a
    nd = a.ndim
    d = wrap_dim(dimension, nd)
    n = a.shape[d] if nd else 1
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    shape, st = list(a.shape), list(elem_strides(a))
    off = elem_offset(a, x._st)
    if nd:
        shape[d], inner = (n - size) // step + 1, st[d]
        st[d] *= step
        shape, st = (*shape, size), (*st, inner)
    else:
        shape, st = (size,), (1,)
    return Plan(View(shape, st, off), {"size": shape, "stride": st, "storage_offset": off,
                                       "in_stride": elem_strides(a), "in_offset": off},
                device_of(x))


# -- the records ---------------------------------------------------------------------------

def _hinted(default: str):
    """Ops that serve several torch ops carry torch's node name in their kwargs."""
    return lambda inputs, kw: kw.get("_name", default)


def _view(name: str, meta, grad_name=None, cpu=None, **kw):
    return op(name, "movement", meta, cpu, grad_name=grad_name, **kw)


# ``view`` also serves reshape/flatten/unflatten/view_as (a copy where no view fits)
view_op = _view("view", _view_meta, _hinted("ViewBackward0"), _mk.view_copy_cpu,
                cpu_view=_view_cpu, cpu_view_kw=lambda a, shape, reshape=False: {"shape": a.shape})
view_dtype_op = _view("view_dtype", _view_dtype_meta, None, _mk.view_dtype_cpu,
                      differentiable=False)
view_as_real_op = _view("view_as_real", _view_as_real_meta, "ViewAsRealBackward0")
view_as_complex_op = _view("view_as_complex", _view_as_complex_meta, "ViewAsComplexBackward0")
permute_op = _view("permute", _permute_meta, "PermuteBackward0",   # also movedim, T
                   cpu_view=_permute_cpu, cpu_view_kw=lambda a, dims: {"dims": _perms[(a.ndim, dims)]})
transpose_op = _view("transpose", _transpose_meta, "TransposeBackward0",  # swapaxes, mT
                     cpu_view=_transpose_cpu,
                     cpu_view_kw=lambda a, dim0, dim1: {"dims": _perms[(a.ndim, dim0, dim1, None)]})
t_op = _view("t", _t_meta, "TBackward0", cpu_view=_t_cpu, cpu_view_kw=lambda a: {"dims": _T})
squeeze_op = _view("squeeze", _squeeze_meta, _hinted("SqueezeBackward0"))
unsqueeze_op = _view("unsqueeze", _unsqueeze_meta, "UnsqueezeBackward0")
expand_op = _view("expand", _expand_meta, "ExpandBackward0")      # broadcast_to, expand_as
slice_op = _view("slice", _slice_meta, "SliceBackward0")          # also tensor_split's pieces
narrow_op = _view("narrow", _narrow_meta, "SliceBackward0")
select_op = _view("select", _select_meta, "SelectBackward0")
unbind_op = _view("unbind", _unbind_meta, "UnbindBackward0", _mk.views_cpu)
split_op = _view("split", _split_meta, "SplitBackward0", _mk.views_cpu)
split_with_sizes_op = _view("split_with_sizes", _split_with_sizes_meta,
                            "SplitWithSizesBackward0", _mk.views_cpu)
chunk_op = _view("chunk", _chunk_meta, _hinted("SplitBackward0"), _mk.views_cpu)
diagonal_op = _view("diagonal", _diagonal_meta, "DiagonalBackward0")
as_strided_op = _view("as_strided", _as_strided_meta, "AsStridedBackward0")
unfold_op = _view("unfold", _unfold_meta, "UnfoldBackward0")

# in-place views: the same geometry becomes self's (``ops/views._inplace_view``)
transpose__op = _view("transpose_", _transpose_meta, "TransposeBackward1")
t__op = _view("t_", _t_inplace_meta, "TBackward1")
squeeze__op = _view("squeeze_", _squeeze_inplace_meta, _hinted("SqueezeBackward3"))
unsqueeze__op = _view("unsqueeze_", _unsqueeze_meta, "UnsqueezeBackward1")
as_strided__op = _view("as_strided_", _as_strided_meta, "AsStridedBackward1")
