"""Operations on sparse COO tensors, and the two entry points ``dispatch`` hands a call with a
sparse operand to: ``call(op, args, params)`` (ops run by ``dispatch.call``/``view``) and
``pointwise(op, args, out, inplace)``. Each looks the op up by name in a table of what torch's
SparseCPU backend runs; any other op raises torch's NotImplementedError for that backend.

Every result is registry ops on the operands' indices and values (``defs/sparse.py`` holds
the few kernels that are sparse-specific), so autograd needs nothing of its own here.
"""

from __future__ import annotations

import numbers

from .. import dispatch
from .. import dtypes as _dt
from ..kernels.defs import sparse as K
from ..shape import broadcast_shapes, wrap_dim
from ..tensor import SparseOperandError, Tensor
from ._coo import SparseTensor, _new, not_supported

_I64 = _dt.int64


def _zeros(shape, dtype) -> Tensor:
    from ..ops.creation import zeros

    return zeros(tuple(shape), dtype=dtype)


# -- products ---------------------------------------------------------------------------------

def _check_matrix(s: SparseTensor) -> None:
    if s.dim() != 2 or s.sparse_dim() != 2:
        raise RuntimeError(f"addmm: matrices expected, got {s.sparse_dim()}D tensor")


def _check_dense_matrix(d: Tensor) -> None:
    if d.dim() != 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(d.dim(), 1)}, {max(d.dim(), 1) - 1}], but got 1)")


def sparse_dense_mm(s: SparseTensor, d: Tensor) -> Tensor:
    """(M, K) sparse @ (K, N) dense -> (M, N) dense: the CSR kernel over the coalesced tensor."""
    _check_matrix(s)
    _check_dense_matrix(d)
    k, k2 = s._sz[1], d.shape[0]
    if k != k2:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {k}, got {k2}")
    c = s.coalesce()
    return K.csr_mm_op(c._rowptr(), c._i[1], c._v, d)


def dense_sparse_mm(d: Tensor, s: SparseTensor) -> Tensor:
    """(M, K) dense @ (K, N) sparse -> (M, N) dense, as (s^T @ d^T)^T."""
    _check_matrix(s)
    _check_dense_matrix(d)
    if d.shape[1] != s._sz[0]:  # torch computes (s^T @ d^T)^T: its check is of that product
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {s._sz[0]}, got "
                           f"{d.shape[1]}")
    if d.dtype is not s.dtype:
        raise RuntimeError(f"expected scalar type {s.dtype.scalar_name} but found "
                           f"{d.dtype.scalar_name}")
    c = s.coalesce()
    out = K.transposed_mm(c._rowptr(), c._i[1], c._v, d.t(), s._sz[1])
    return out.t().contiguous()


def sparse_sparse_mm(a: SparseTensor, b: SparseTensor) -> SparseTensor:
    """(M, K) @ (K, N), both sparse -> sparse (coalesced; an entry some product reaches is
    stored even where the products cancel, as torch's)."""
    _check_matrix(a)
    _check_matrix(b)
    if a._sz[1] != b._sz[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a._sz[0]}x{a._sz[1]} "
                           f"and {b._sz[0]}x{b._sz[1]})")
    if a.dtype is not b.dtype:
        raise RuntimeError(f"mat1 dtype {a.dtype.scalar_name} does not match mat2 dtype "
                           f"{b.dtype.scalar_name}")
    if a.dtype.category < 2:
        raise NotImplementedError(f"\"sparse_matmul\" not implemented for "
                                  f"'{a.dtype.scalar_name}'")
    ca, cb = a.coalesce(), b.coalesce()
    out, ia, ib, seg = K.spgemm_op(ca._rowptr(), ca._i[1], cb._rowptr(), cb._i[1],
                                   ncols=b._sz[1])
    prod = ca._v.index_select(0, ia) * cb._v.index_select(0, ib)
    vals = _zeros((out.shape[1],), prod.dtype).index_add(0, seg, prod)
    return _new(out, vals, (a._sz[0], b._sz[1]), True)


def mm(input: Tensor, mat2: Tensor) -> Tensor:
    """torch.mm with a sparse operand: dense results for sparse @ dense and dense @ sparse,
    a sparse one for sparse @ sparse."""
    a, b = isinstance(input, SparseTensor), isinstance(mat2, SparseTensor)
    if a and b:
        return sparse_sparse_mm(input, mat2)
    if a:
        return sparse_dense_mm(input, mat2)
    if b:
        return dense_sparse_mm(input, mat2)
    from ..ops.linalg import mm as dense_mm

    return dense_mm(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:
    if not isinstance(input, SparseTensor) or isinstance(vec, SparseTensor):
        raise not_supported("mv")
    if vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.dim()}, {vec.dim()}")
    return sparse_dense_mm(input, vec.unsqueeze(1)).squeeze(1)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2), input dense (broadcast to the product)."""
    from ..ops.linalg import _scaled_sum

    if isinstance(input, SparseTensor):
        raise RuntimeError(  # noqa: TRY004  (torch's type)
            "addmm_sparse_dense: expected strided result tensor, got tensor with "
            "layout Sparse")
    if not isinstance(mat1, SparseTensor) or isinstance(mat2, SparseTensor):
        def lay(x):
            return "Sparse" if isinstance(x, SparseTensor) else "Strided"

        raise RuntimeError(  # noqa: TRY004  (torch's type)
            "addmm_sparse_dense: expected either 'mat1' to have sparse layout and "
            "'mat2' to have strided layout, got 'mat1' with layout "
            f"{lay(mat1)} and 'mat2' with layout {lay(mat2)}")
    return _scaled_sum(input, sparse_dense_mm(mat1, mat2), beta, alpha, "addmm")


# -- reductions -------------------------------------------------------------------------------

def _dims(dim, nd: int) -> list:
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted({wrap_dim(d, nd) for d in dims})


def reduce_sum(x: SparseTensor, dim=None, keepdim: bool = False, dtype=None) -> Tensor:
    """Sum over ``dim`` (all dims by default): a dense result once every sparse dim is summed,
    else a coalesced sparse one over the remaining sparse dims."""
    v = x._v
    if dtype is not None:
        v = v.to(dtype)
    elif v.dtype.category < 2:
        v = v.to(_I64)  # integers and bool sum to int64, as torch
    nd, sd = x.dim(), x.sparse_dim()
    if dim is None or (not isinstance(dim, int) and len(dim) == 0):
        return v.sum()
    dims = _dims(dim, nd)
    dense = [d - sd + 1 for d in dims if d >= sd]
    if dense:
        v = v.sum(dense, keepdim=keepdim)
    summed = [d for d in dims if d < sd]
    if not summed:
        size = [1 if (d in dims) else n for d, n in enumerate(x._sz)] if keepdim else \
            [n for d, n in enumerate(x._sz) if d not in dims]
        return _new(x._i, v, size, x._co).coalesce()
    if len(summed) == sd:  # nothing sparse left
        r = v.sum(0)
        if keepdim:
            r = r.reshape(*([1] * sd), *r.shape)
        return r
    if keepdim:  # a summed sparse dim keeps index 0 of its size 1
        from ..ops.views import cat

        idx = cat([x._i[d:d + 1] * 0 if d in summed else x._i[d:d + 1] for d in range(sd)], 0)
        size = [1 if d in dims else n for d, n in enumerate(x._sz)]
    else:
        idx = x._i.index_select(0, _index([d for d in range(sd) if d not in summed]))
        size = [n for d, n in enumerate(x._sz) if d not in dims]
    return _new(idx.contiguous(), v, size, False).coalesce()


def _index(positions) -> Tensor:
    from ..ops.creation import tensor

    return tensor(list(positions), dtype=_I64)


def sparse_sum(input: SparseTensor, dim=None, dtype=None) -> Tensor:
    """torch.sparse.sum: over every dim (a dense 0-d result) or over ``dim``."""
    if not isinstance(input, SparseTensor):
        raise RuntimeError(  # noqa: TRY004  (torch's type)
            "_sparse_sum: expected a sparse COO tensor")
    return reduce_sum(input, dim, False, dtype)


def _softmax(x: SparseTensor, dim: int, dtype, log: bool) -> SparseTensor:
    """Softmax over the stored entries along ``dim`` (unstored ones count as -inf)."""
    c = x.coalesce()
    v = c._v if dtype is None else c._v.to(dtype)
    out_dtype = v.dtype
    if out_dtype in (_dt.float32, _dt.float16, _dt.bfloat16):
        v = v.to(_dt.float64)  # the sums of exponentials in float64: torch's accuracy
    nd, sd = c.dim(), c.sparse_dim()
    d = wrap_dim(dim, nd)
    if d >= sd:  # a dense dim: each stored slice on its own
        fn = v.log_softmax if log else v.softmax
        return _new(c._i, fn(d - sd + 1).to(out_dtype), c._sz, True, c._ptr)
    keep = [k for k in range(sd) if k != d]
    groups = c._i.index_select(0, _index(keep)).contiguous()
    _, seg, _ = K.coalesce_op(groups, sizes=tuple(c._sz[k] for k in keep))
    n = int(seg.max().item()) + 1 if seg.numel() else 0
    shape = (n, *v.shape[1:])
    m = _zeros(shape, v.dtype).index_reduce(0, seg, v.detach(), "amax", include_self=False)
    shifted = v - m.index_select(0, seg)
    e = shifted.exp()
    s = _zeros(shape, v.dtype).index_add(0, seg, e)
    out = shifted - s.log().index_select(0, seg) if log else e / s.index_select(0, seg)
    return _new(c._i, out.to(out_dtype), c._sz, True, c._ptr)


def softmax(input: SparseTensor, dim: int, dtype=None) -> SparseTensor:
    """torch.sparse.softmax: the softmax of the stored values along ``dim``."""
    return _softmax(input, dim, dtype, False)


def log_softmax(input: SparseTensor, dim: int, dtype=None) -> SparseTensor:
    """torch.sparse.log_softmax."""
    return _softmax(input, dim, dtype, True)


# -- shape ops --------------------------------------------------------------------------------

def transpose(x: SparseTensor, dim0: int, dim1: int) -> SparseTensor:
    nd, sd = x.dim(), x.sparse_dim()
    d0, d1 = wrap_dim(dim0, nd), wrap_dim(dim1, nd)
    if d0 == d1:
        return _new(x._i, x._v, x._sz, x._co, x._ptr)
    if d0 >= sd or d1 >= sd:
        raise RuntimeError(f"sparse transpose: transposed dimensions must be sparse Got "
                           f"sparse_dim: {sd}, d0: {d0}, d1: {d1}")
    order = list(range(sd))
    order[d0], order[d1] = d1, d0
    size = list(x._sz)
    size[d0], size[d1] = size[d1], size[d0]
    return _new(x._i.index_select(0, _index(order)), x._v, size, False)


def t(x: SparseTensor) -> SparseTensor:
    if x.dim() > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.dim()}D")
    return transpose(x, 0, 1) if x.dim() == 2 else x


def permute(x: SparseTensor, dims) -> SparseTensor:
    nd, sd = x.dim(), x.sparse_dim()
    if len(dims) != nd:
        raise RuntimeError(
            "permute(sparse_coo): number of dimensions in the tensor input does not match the "
            f"length of the desired ordering of dimensions i.e. input.dim() = {nd} is not equal "
            f"to len(dims) = {len(dims)}")
    dims = [wrap_dim(d, nd) for d in dims]
    if sorted(dims[:sd]) != list(range(sd)):
        raise RuntimeError("permute(sparse_coo): transpositions between sparse and dense "
                           "dimensions are not allowed.Only transpositions within sparse and "
                           "dense dimensions are supported.")
    v = x._v
    if dims[sd:] != list(range(sd, nd)):
        v = v.permute(0, *[d - sd + 1 for d in dims[sd:]])
    idx = x._i if dims[:sd] == list(range(sd)) else x._i.index_select(0, _index(dims[:sd]))
    return _new(idx, v, [x._sz[d] for d in dims], x._co and idx is x._i)


def unsqueeze(x: SparseTensor, dim: int) -> SparseTensor:
    nd, sd = x.dim(), x.sparse_dim()
    d = wrap_dim(dim, nd + 1)
    size = list(x._sz)
    size.insert(d, 1)
    if d > sd:
        return _new(x._i, x._v.unsqueeze(d - sd + 1), size, x._co, x._ptr)
    from ..ops.views import cat

    i = x._i
    idx = cat([i[:d], _zeros((1, i.shape[1]), _I64), i[d:]], 0)
    return _new(idx, x._v, size, False)


def index_select(x: SparseTensor, dim: int, index: Tensor) -> SparseTensor:
    if isinstance(index, SparseTensor) or not isinstance(index, Tensor):
        raise not_supported("index_select")
    nd, sd = x.dim(), x.sparse_dim()
    d = wrap_dim(dim, nd)
    if index.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    index = index.reshape(-1)
    n = x._sz[d]
    if index.numel():
        lo, hi = int(index.amin().item()), int(index.amax().item())
        bad = lo if lo < -n or lo >= n else hi if hi >= n or hi < -n else None
        if bad is not None:
            raise IndexError(f"index_select(): index contains {bad} that is out of range for "
                             f"tensor of size {list(x._sz)} at dimension {d}")
    size = list(x._sz)
    size[d] = index.numel()
    if d >= sd:
        return _new(x._i, x._v.index_select(d - sd + 1, index), size, x._co, x._ptr)
    index = index.to(_I64)
    index = index + (index < 0).to(_I64) * n  # torch reads negative indices from the end
    src, pos = K.select_op(x._i[d].contiguous(), index, size=n)
    rows = x._i.index_select(1, src)
    rows[d] = pos
    return _new(rows, x._v.index_select(0, src), size, False)


def cat(*tensors, dim: int = 0, out_dtype=None) -> SparseTensor:
    """Sparse tensors joined along ``dim``: a sparse dim offsets the indices; a dense dim pads
    each one's values with zeros where the others' lie."""
    from ..ops.views import cat as dense_cat

    if not all(isinstance(x, SparseTensor) for x in tensors):
        raise RuntimeError("cat: expected all tensors to be sparse (mixing sparse and dense "
                           "tensors is not supported)")
    first = tensors[0]
    nd, sd = first.dim(), first.sparse_dim()
    d = wrap_dim(dim, nd)
    for x in tensors[1:]:
        if x.dim() != nd or x.sparse_dim() != sd or any(
                a != b for k, (a, b) in enumerate(zip(x._sz, first._sz)) if k != d):
            raise RuntimeError("cat: sparse tensors must have the same sizes, sparse and dense "
                               "dims but along the dim they are joined")
    dt = out_dtype or first.dtype
    for x in tensors[1:]:
        dt = dt if out_dtype else _dt.promote_types(dt, x.dtype)
    total = sum(x._sz[d] for x in tensors)
    size = list(first._sz)
    size[d] = total
    if d < sd:
        parts, off = [], 0
        for x in tensors:
            shift = _zeros((sd, 1), _I64)
            shift[d] = off
            parts.append(x._i + shift)
            off += x._sz[d]
        vals = [x._v.to(dt) for x in tensors]
    else:
        parts, vals, off = [x._i for x in tensors], [], 0
        k = d - sd + 1
        for x in tensors:
            v = x._v.to(dt)
            pads = []
            if off:
                shape = list(v.shape)
                shape[k] = off
                pads.append(_zeros(shape, dt))
            pads.append(v)
            rest = total - off - x._sz[d]
            if rest:
                shape = list(v.shape)
                shape[k] = rest
                pads.append(_zeros(shape, dt))
            vals.append(dense_cat(pads, k))
            off += x._sz[d]
    return _new(dense_cat(parts, 1).contiguous(), dense_cat(vals, 0), size, False)


def stack(*tensors, dim: int = 0, out_dtype=None) -> SparseTensor:
    if not tensors or not all(isinstance(x, SparseTensor) for x in tensors):
        raise not_supported("stack")
    d = wrap_dim(dim, tensors[0].dim() + 1)
    return cat(*[unsqueeze(x, d) for x in tensors], dim=d, out_dtype=out_dtype)


def clone(x: SparseTensor, *, memory_format=None) -> SparseTensor:
    return _new(x._i.clone(), x._v.clone(), x._sz, x._co)


def to_copy(x: SparseTensor, *, dtype=None, device=None, memory_format=None, **_) -> Tensor:
    from ..device import CPU

    if device is not None and device != CPU:
        raise not_supported("_to_copy")
    v = x._v if dtype is None or dtype is x.dtype else x._v.to(dtype)
    return _new(x._i, v, x._sz, x._co, x._ptr)


# -- pointwise --------------------------------------------------------------------------------

# Unary ops torch's SparseCPU backend runs (each maps 0 to 0): the op on the coalesced values.
_UNARY = frozenset({
    "abs", "neg", "sign", "sgn", "sqrt", "expm1", "log1p", "sin", "tan", "asin", "atan", "sinh",
    "tanh", "asinh", "atanh", "erf", "erfinv", "floor", "ceil", "trunc", "frac", "relu",
    "square", "cube", "round", "isnan", "isinf", "isposinf", "isneginf", "signbit",
    "nan_to_num", "copy"})
# ... of these, the linear ones run on uncoalesced values as they are (as torch's)
_LINEAR = frozenset({"neg", "copy"})
_SCALAR = (numbers.Number,)


def _scalar_like(x) -> bool:
    return isinstance(x, _SCALAR) or (isinstance(x, Tensor) and not isinstance(x, SparseTensor)
                                      and x.dim() == 0)


def _inplace_result(x: SparseTensor, res: SparseTensor) -> SparseTensor:
    dispatch.check_cast(res.dtype, x.dtype)
    if res.dtype is not x.dtype:
        res = to_copy(res, dtype=x.dtype)
    x._assign(res)
    return x


def _unary(op, x: SparseTensor, rest: tuple, inplace: bool) -> SparseTensor:
    name = op.name
    if inplace:
        if not x._co and name not in _LINEAR:
            raise RuntimeError(f"{name}_ requires coalesced input")
        dispatch.pointwise(op, (x._v, *rest), inplace=True)
        x._vc[0] += 1
        return x
    c = x if name in _LINEAR else x.coalesce()
    return _new(c._i, dispatch.pointwise(op, (c._v, *rest)), c._sz, c._co, c._ptr)


def _same_size(a: SparseTensor, b: SparseTensor, what: str) -> None:
    if a._sz != b._sz:
        raise RuntimeError(f"{what}: expected sizes of 'self' and 'other' to match, but "
                           f"{list(a._sz)} != {list(b._sz)}")


def _add_sparse(a: SparseTensor, b: SparseTensor) -> SparseTensor:
    """a + b, both sparse: their entries side by side (coalesced when both were)."""
    from ..ops.views import cat

    _same_size(a, b, "add")
    if a.sparse_dim() != b.sparse_dim():
        raise RuntimeError("add: expected 'self' and 'other' to have same sparse and dense "
                           "dimensions")
    d = _dt.promote_types(a.dtype, b.dtype)
    va, vb = a._v.to(d), b._v.to(d)
    s = _new(cat([a._i, b._i], 1).contiguous(), cat([va, vb], 0), a._sz, False)
    return s.coalesce() if a._co and b._co else s


def _add_dense(d: Tensor, s: SparseTensor, inplace: bool) -> Tensor:
    """dense + sparse: a dense result (the stored values added at their positions)."""
    if tuple(d.shape) != s._sz:
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(d.shape)} while other has size {list(s._sz)} (FYI: "
                           "dense-sparse addition does not currently support broadcasting)")
    rd = _dt.promote_types(d.dtype, s.dtype)
    idx = tuple(s._i[k] for k in range(s.sparse_dim()))
    if inplace:
        if rd is not d.dtype and not _dt.can_cast(rd, d.dtype):
            raise RuntimeError(f"Can't convert result type {rd.scalar_name} to output "
                               f"{d.dtype.scalar_name} in add operation")
        if not idx:
            return d.add_(s._v.sum(0))
        return d.index_put_(idx, s._v.to(d.dtype), accumulate=True)
    if not idx:
        return d.to(rd) + s._v.to(rd).sum(0)
    return d.to(rd).index_put(idx, s._v.to(rd), accumulate=True)


def _add(args: tuple, inplace: bool, sub: bool):
    a, b = args
    if sub:
        b = -b if isinstance(b, Tensor) else b
    sa, sb = isinstance(a, SparseTensor), isinstance(b, SparseTensor)
    if sa and sb:
        res = _add_sparse(a, b)
        return _inplace_result(a, res) if inplace else res
    if sb and isinstance(a, Tensor):
        return _add_dense(a, b, inplace)
    raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")


def _mul_sparse(a: SparseTensor, b: SparseTensor) -> SparseTensor:
    """a * b, both sparse: the entries stored in both (zeros elsewhere)."""
    if a._sz != b._sz or a.sparse_dim() != b.sparse_dim():
        raise RuntimeError("sparse_binary_op_intersection_cpu(): expects sparse inputs with "
                           "equal dimensionality, number of sparse dimensions, and shape of "
                           "sparse dimensions")
    ca, cb = a.coalesce(), b.coalesce()
    ia, ib = K.intersect_op(ca._i, cb._i)
    vals = ca._v.index_select(0, ia) * cb._v.index_select(0, ib)
    return _new(ca._i.index_select(1, ia), vals, a._sz, True)


def _mul_dense(s: SparseTensor, d: Tensor) -> SparseTensor:
    """sparse * dense (broadcast to the sparse shape): the dense values at the stored entries."""
    shape = tuple(broadcast_shapes(s._sz, tuple(d.shape)))
    if shape != s._sz:
        raise NotImplementedError(f"mul(sparse, dense): the dense operand of shape "
                                  f"{list(d.shape)} would broadcast the sparse one of shape "
                                  f"{list(s._sz)} (not supported)")
    sd = s.sparse_dim()
    full = d.expand(*s._sz)
    picked = full[tuple(s._i[k] for k in range(sd))] if sd else full.unsqueeze(0)
    return _new(s._i, s._v * picked, s._sz, s._co, s._ptr)


def _mul(args: tuple, inplace: bool):
    a, b = args
    sa, sb = isinstance(a, SparseTensor), isinstance(b, SparseTensor)
    if sa and sb:
        res = _mul_sparse(a, b)
    elif sa and _scalar_like(b) or sb and _scalar_like(a):
        s, k = (a, b) if sa else (b, a)
        res = _new(s._i, s._v * k, s._sz, s._co, s._ptr)
    elif sa and isinstance(b, Tensor):
        res = _mul_dense(a, b)
    elif sb and isinstance(a, Tensor):
        res = _mul_dense(b, a)
    else:
        raise not_supported("mul")
    if inplace:
        if not sa:
            raise not_supported("mul_")
        return _inplace_result(a, res)
    return res


def _div(op, args: tuple, inplace: bool):
    a, b = args
    if not isinstance(a, SparseTensor) or not _scalar_like(b):
        shape = list(b._sz) if isinstance(b, SparseTensor) else \
            list(b.shape) if isinstance(b, Tensor) else []
        raise RuntimeError(f"Sparse division requires a scalar or zero-dim dense tensor divisor "
                           f"(got shape {shape} for divisor)")
    c = a if op.name == "div" else a.coalesce()  # true division is linear
    res = _new(c._i, dispatch.pointwise(op, (c._v, b)), c._sz, c._co, c._ptr)
    return _inplace_result(a, res) if inplace else res


def _pow(op, args: tuple, inplace: bool):
    a, e = args
    if not isinstance(a, SparseTensor) or not isinstance(e, _SCALAR):
        raise not_supported("pow")
    if e == 0:
        raise RuntimeError("pow: cannot raise to zeroth power on sparse tensor; it would make "
                           "the result tensor dense")
    c = a.coalesce()
    res = _new(c._i, dispatch.pointwise(op, (c._v, e)), c._sz, True, c._ptr)
    return _inplace_result(a, res) if inplace else res


def _hide_handover(e: BaseException) -> None:
    """An error of the sparse call is not raised 'during handling' of dispatch's handover."""
    if isinstance(e.__context__, SparseOperandError):
        e.__suppress_context__ = True


def pointwise(op, args: tuple, out, inplace: bool):
    """``dispatch.pointwise`` with a sparse operand."""
    try:
        return _pointwise(op, args, out, inplace)
    except Exception as e:
        _hide_handover(e)
        raise


def _pointwise(op, args: tuple, out, inplace: bool):
    if out is not None and not inplace and out is not args[0]:
        raise not_supported(f"{op.name}.out")
    if out is not None:
        inplace = True
    name = op.name
    n = len(args) - op.nparams
    if name in _UNARY and n == 1 and isinstance(args[0], SparseTensor):
        return _unary(op, args[0], args[1:], inplace)
    if name in ("add", "sub"):
        return _add(args, inplace, name == "sub")
    if name == "mul":
        return _mul(args, inplace)
    if name in ("div", "div_trunc", "floor_divide"):
        return _div(op, args, inplace)
    if name == "pow":
        return _pow(op, args, inplace)
    raise not_supported(name)


# -- dispatch.call's entry ----------------------------------------------------------------------

def _sum_call(input, dim=None, keepdim=False, dtype=None):
    return reduce_sum(input, dim, keepdim, dtype)


def _permute_call(x, *, dims):
    return permute(x, dims)


def _index_select_call(x, index, *, dim):
    return index_select(x, dim, index)


def _transpose_call(x, *, dim0, dim1):
    return transpose(x, dim0, dim1)


def _unsqueeze_call(x, *, dim):
    return unsqueeze(x, dim)


_CALLS = {
    "mm": mm,
    "addmm": addmm,
    "sum": _sum_call,
    "t": t,
    "transpose": _transpose_call,
    "permute": _permute_call,
    "unsqueeze": _unsqueeze_call,
    "index_select": _index_select_call,
    "clone": clone,
    "cat": cat,
    "stack": stack,
    "_to_copy": to_copy,
}


def call(op, args: tuple, params: dict):
    """``dispatch.call`` (and ``dispatch.view``) with a sparse operand."""
    try:
        fn = _CALLS.get(op.name)
        if fn is None or not isinstance(args[0], SparseTensor) and op.name not in (
                "mm", "addmm", "cat", "stack"):
            raise not_supported(op.name)
        return fn(*args, **params)
    except Exception as e:
        _hide_handover(e)
        raise
