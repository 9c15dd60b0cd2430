"""Matrix products and contractions: torch-named functions and Tensor methods.

Everything lowers to the ``mm``/``bmm`` OpDefs (one BLAS-backed kernel call per op) plus
view ops, so autograd needs no rules beyond theirs. ``matmul`` follows torch's cases: a
batched operand against a matrix is folded into one ``mm`` (batch rows stacked), broadcast
batches are expanded into one ``bmm``.

>>> import jtorch as torch
>>> torch.ones(2, 3) @ torch.ones(3)
tensor([3., 3.])
"""

from __future__ import annotations

import math

from .. import dispatch
from .. import dtypes as _dt
from .._settings import WarnOnce
from ..amp import state as _amp
from ..kernels.defs import linalg as L
from ..shape import broadcast_shapes
from ..tensor import SparseOperandError, Tensor

__all__ = ["addbmm", "addmm", "addmv", "addr", "baddbmm", "bmm", "chain_matmul", "dot", "ger",
           "inner", "matmul", "mm", "mv", "outer", "vdot"]

_check_tensor, _same_dtype = L.check_tensor, L.same_dtype


def _deliver(res: Tensor, out: Tensor | None) -> Tensor:
    """``res``, or a user's ``out=`` tensor holding it."""
    if out is None:
        return res
    dispatch.check_cast(res.dtype, out.dtype)
    return dispatch.copy_into(out, res)


def mm(input: Tensor, mat2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Matrix product of two 2-D tensors (BLAS for float/complex)."""
    if _amp.on:
        input, mat2 = _amp.lower(input, mat2)
    return _deliver(dispatch.call(L.mm_op, input, mat2), out)


def bmm(input: Tensor, mat2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Batched matrix product of two 3-D tensors with the same batch size."""
    if _amp.on:
        input, mat2 = _amp.lower(input, mat2)
    return _deliver(dispatch.call(L.bmm_op, input, mat2), out)


def mv(input: Tensor, vec: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Matrix-vector product."""
    _check_tensor(input, "mv")
    _check_tensor(vec, "mv", 2, "vec")
    if input.dim() != 2 or vec.dim() != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.dim()}, {vec.dim()}")
    try:
        m, k = input._a.shape
    except SparseOperandError:  # a sparse matrix (it has no strided data)
        from ..sparse import _ops

        return _deliver(_ops.mv(input, vec), out)
    if vec._a.shape[0] != k:
        raise RuntimeError(f"size mismatch, got input ({m}), mat ({m}x{k}), vec "
                           f"({vec._a.shape[0]})")
    _same_dtype(input, vec)
    return _deliver(mm(input, vec.unsqueeze(1)).squeeze(1), out)


@_amp.promote_op("cuda")  # (CUDA autocast's promote list, as tensordot and bilinear)
def dot(input: Tensor, tensor: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Inner product of two 1-D tensors (a 0-d result)."""
    _check_tensor(input, "dot")
    _check_tensor(tensor, "dot", 2, "tensor")
    if input.dim() != 1 or tensor.dim() != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.dim()}D and {tensor.dim()}D "
                           "tensors")
    n, n2 = input._a.shape[0], tensor._a.shape[0]
    if n != n2:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{n2}] to "
                           f"have the same number of elements, but got {n} and {n2} elements "
                           "respectively")
    if input.dtype is not tensor.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{input.dtype.scalar_name} and "
                           f"{tensor.dtype.scalar_name}")
    if input.dtype is _dt.bool:
        raise NotImplementedError('"dot" not implemented for \'Bool\'')
    return _deliver(mm(input.unsqueeze(0), tensor.unsqueeze(1)).reshape(()), out)


def vdot(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """dot(conj(input), other)."""
    if isinstance(input, Tensor) and input.dtype.is_complex:
        input = input.conj()
    return dot(input, other, out=out)


def inner(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Sum over the last dims of both (a scalar operand multiplies)."""
    if input.dim() == 0 or other.dim() == 0:
        return _deliver(input * other, out)
    if input._a.shape[-1] != other._a.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but got "
                           f"shapes {list(input._a.shape)} and {list(other._a.shape)}")
    return _deliver(tensordot(input, other, ([input.dim() - 1], [other.dim() - 1])), out)


def outer(input: Tensor, vec2: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Outer product of two 1-D tensors (a broadcast multiply, as in torch)."""
    _check_tensor(input, "outer")
    _check_tensor(vec2, "outer", 2, "vec2")
    if input.dim() != 1 or vec2.dim() != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.dim()}-D"
                           if input.dim() != 1 else
                           f"outer: Expected 1-D argument vec2, but got {vec2.dim()}-D")
    return _deliver(input.unsqueeze(1) * vec2, out)


ger = outer


def _fold(x: Tensor) -> Tensor:
    return x.reshape(-1, x._a.shape[-1])


def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """torch.matmul: dot, mv, mm, or a broadcast batched product, by the operands' ranks.

    >>> jtorch.matmul(jtorch.ones(2, 4, 3), jtorch.ones(3, 5)).shape
    torch.Size([2, 4, 5])
    """
    _check_tensor(input, "matmul")
    _check_tensor(other, "matmul", 2, "other")
    if _amp.on:
        input, other = _amp.lower(input, other)
    da, db = input.dim(), other.dim()
    if da == 0 or db == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{da}D and {db}D")
    if da == 1 and db == 1:
        return dot(input, other, out=out)
    if da == 2 and db == 1:
        return mv(input, other, out=out)
    if da == 1 and db == 2:
        _same_dtype(input, other)
        return _deliver(mm(input.unsqueeze(0), other).squeeze(0), out)
    if da == 2 and db == 2:
        return mm(input, other, out=out)
    if da >= 3 and db <= 2:
        # fold the batch into the rows: one mm
        b2 = other.unsqueeze(1) if db == 1 else other
        k = input._a.shape[-1]
        if b2._a.shape[0] != k:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied "
                               f"({math.prod(input._a.shape[:-1])}x{k} and "
                               f"{b2._a.shape[0]}x{b2._a.shape[1]})")
        res = mm(_fold(input), b2).reshape(*input._a.shape[:-1], b2._a.shape[1])
        return _deliver(res.squeeze(-1) if db == 1 else res, out)
    if da <= 2 and db >= 3 and da == 2 and input._a.shape[-1] == other._a.shape[-2]:
        # a @ B = (B^T @ a^T)^T: fold B's batch into the columns' rows; contiguous, as torch
        res = matmul(other.mT, input.mT).mT.contiguous()
        return _deliver(res, out)
    return _deliver(_batched(input, other), out)


def _batched(a: Tensor, b: Tensor) -> Tensor:
    a2 = a.unsqueeze(0) if a.dim() == 1 else a
    b2 = b.unsqueeze(-1) if b.dim() == 1 else b
    (m, k), (k2, n) = a2._a.shape[-2:], b2._a.shape[-2:]
    batch = broadcast_shapes(a2._a.shape[:-2], b2._a.shape[:-2])  # torch's first check
    nb = math.prod(batch)
    if k != k2:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{nb}, {k}] but got: [{nb}, {k2}].")
    _same_dtype(a, b)
    batch = tuple(batch)
    a3 = a2 if a2._a.shape[:-2] == batch else a2.expand(*batch, m, k)
    b3 = b2 if b2._a.shape[:-2] == batch else b2.expand(*batch, k, n)
    res = dispatch.call(L.batched_matmul_op, a3, b3)
    if a.dim() == 1:
        res = res.squeeze(-2)
    if b.dim() == 1:
        res = res.squeeze(-1)
    return res


def _rmatmul_method(self: Tensor, other: Tensor) -> Tensor:
    """``other @ self`` when ``other`` is not a Tensor (a NumPy array, say)."""
    return matmul(other, self)


def _scaled_sum(input, prod, beta, alpha, name: str) -> Tensor:
    """beta * input + alpha * prod; beta == 0 ignores input's values (nan and inf too)."""
    _check_tensor(input, name)
    if broadcast_shapes(input._a.shape, prod._a.shape) != prod._a.shape:
        raise RuntimeError(f"The expanded size of the tensor ({prod._a.shape[-1]}) must match the "
                           f"existing size ({input._a.shape[-1]}) at non-singleton dimension "
                           f"{input.dim() - 1}.  Target sizes: {list(prod._a.shape)}.  Tensor "
                           f"sizes: {list(input._a.shape)}")
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod
    return (input if beta == 1 else input * beta) + prod


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1,
          out: Tensor | None = None) -> Tensor:
    """beta * input + alpha * (mat1 @ mat2): one kernel (BLAS product, then the scaled sum)."""
    if _amp.on:
        input, mat1, mat2 = _amp.lower(input, mat1, mat2)
    return _deliver(dispatch.call(L.addmm_op, input, mat1, mat2, beta=beta, alpha=alpha), out)


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta=1, alpha=1,
          out: Tensor | None = None) -> Tensor:
    """beta * input + alpha * (mat @ vec)."""
    return _deliver(_scaled_sum(input, mv(mat, vec), beta, alpha, "addmv"), out)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1,
            out: Tensor | None = None) -> Tensor:
    """beta * input + alpha * bmm(batch1, batch2)."""
    if _amp.on:
        input, batch1, batch2 = _amp.lower(input, batch1, batch2)
    return _deliver(_scaled_sum(input, bmm(batch1, batch2), beta, alpha, "baddbmm"), out)


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta=1, alpha=1,
           out: Tensor | None = None) -> Tensor:
    """beta * input + alpha * sum_i batch1[i] @ batch2[i] (one mm over the joined batch)."""
    if _amp.on:
        input, batch1, batch2 = _amp.lower(input, batch1, batch2)
    if batch1.dim() != 3 or batch2.dim() != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if batch1.dim() != 3 else
                           "batch2 must be a 3D tensor")
    (n1, r1, c1), (n2, r2, c2) = batch1._a.shape, batch2._a.shape
    if n1 != n2:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got {n1} and {n2}")
    if c1 != r2:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({r1}x{c1} and {r2}x{c2})")
    a = batch1.permute(1, 0, 2).reshape(batch1._a.shape[1], -1)
    b = batch2.reshape(-1, batch2._a.shape[2])
    return _deliver(_scaled_sum(input, mm(a, b), beta, alpha, "addbmm"), out)


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta=1, alpha=1,
         out: Tensor | None = None) -> Tensor:
    """beta * input + alpha * outer(vec1, vec2)."""
    return _deliver(_scaled_sum(input, outer(vec1, vec2), beta, alpha, "addr"), out)


def chain_matmul(*matrices, out: Tensor | None = None) -> Tensor:
    """Deprecated in torch (which warns once) for ``linalg.multi_dot``; one matrix is copied."""
    _CHAIN_MATMUL_WARNING.warn()
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        if matrices[0].dim() != 2:
            raise RuntimeError(f"Tensor dimension is {matrices[0].dim()}, expected 2 instead.")
        return _deliver(matrices[0].clone(), out)
    return _deliver(multi_dot(list(matrices)), out)


_CHAIN_MATMUL_WARNING = WarnOnce(
    "torch.chain_matmul is deprecated and will be removed in a future PyTorch release. Use "
    "torch.linalg.multi_dot instead, which accepts a list of two or more tensors rather than "
    "multiple parameters.")


def multi_dot(tensors, *, out: Tensor | None = None) -> Tensor:
    """Product of a chain of matrices (1-D ends allowed), multiplied left to right."""
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    res = tensors[0]
    for t in tensors[1:]:
        res = matmul(res, t)
    return _deliver(res, out)


def vecdot(x: Tensor, y: Tensor, *, dim: int = -1, out: Tensor | None = None) -> Tensor:
    """Dot products along ``dim`` (broadcast over the other dims; conj(x) for complex)."""
    if _amp.on:
        x, y = _amp.lower(x, y)
    if x.dtype.is_complex:
        x = x.conj()
    return _deliver((x * y).sum(dim), out)


@_amp.promote_op("cuda")
def tensordot(a: Tensor, b: Tensor, dims=2, out: Tensor | None = None) -> Tensor:
    """Contract ``dims`` (a count of trailing/leading dims, or two lists) with one mm."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da = list(range(a.dim() - dims, a.dim()))
        db = list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    da = [d % a.dim() if a.dim() else d for d in da]
    db = [d % b.dim() if b.dim() else d for d in db]
    for x, y in zip(da, db):
        if a._a.shape[x] != b._a.shape[y]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a._a.shape[x]} in dim {x} and second has size {b._a.shape[y]} "
                               f"in dim {y}")
    fa = [d for d in range(a.dim()) if d not in da]
    fb = [d for d in range(b.dim()) if d not in db]
    k = math.prod(a._a.shape[d] for d in da)
    left = a.permute(*fa, *da).reshape(-1, k)
    right = b.permute(*db, *fb).reshape(k, -1)
    shape = [a._a.shape[d] for d in fa] + [b._a.shape[d] for d in fb]
    return _deliver(mm(left, right).reshape(shape), out)


def _addmm_inplace(self: Tensor, mat1: Tensor, mat2: Tensor, *, beta=1, alpha=1) -> Tensor:
    return self.copy_(addmm(self, mat1, mat2, beta=beta, alpha=alpha))


# -- einsum -----------------------------------------------------------------------------------

def _einsum_parse(equation: str, operands: list) -> tuple:
    """(per-operand label lists, output labels); '...' becomes one label per broadcast dim
    (labels 0, 1, ... as ints, ahead of the letters in an implicit output)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(operands):
        raise RuntimeError("einsum(): more operands were provided than specified in the "
                           "equation" if len(operands) > len(terms) else
                           "einsum(): fewer operands were provided than specified in the equation")
    n_ell = 0
    for t, x in zip(terms, operands):
        if "..." in t:
            n_ell = max(n_ell, x.dim() - (len(t) - 3))
    labels = []
    for i, (t, x) in enumerate(zip(terms, operands)):
        for ch in t.replace("...", ""):
            if not ch.isalpha():
                raise ValueError(f"einsum(): invalid subscript given at index "
                                 f"{eq.index(ch)} in the equation string, subscripts must be in "
                                 "[a-zA-Z]")
        if "..." in t:
            pre, post = t.split("...")
            k = x.dim() - len(pre) - len(post)
            if k < 0:
                raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                                   f"({len(pre) + len(post)}) is more than the number of "
                                   f"dimensions ({x.dim()}) for operand {i}")
            labels.append(list(pre) + list(range(n_ell - k, n_ell)) + list(post))
        else:
            if len(t) != x.dim():
                raise RuntimeError(f"einsum(): the number of subscripts in the equation ({len(t)}) "
                                   f"does not match the number of dimensions ({x.dim()}) for "
                                   f"operand {i} and no ellipsis was given")
            labels.append(list(t))
    if arrow:
        if "..." in rhs:
            pre, post = rhs.split("...")
            out = list(pre) + list(range(n_ell)) + list(post)
        else:
            out = list(rhs)
        seen = set()
        for ch in out:
            if ch in seen:
                raise RuntimeError(f"einsum(): output subscript {ch} appears more than once in "
                                   "the output")
            seen.add(ch)
            if isinstance(ch, str) and not any(ch in lab for lab in labels):
                raise RuntimeError(f"einsum(): output subscript {ch} does not appear in the "
                                   "equation for any input operand")
    else:
        counts: dict = {}
        for lab in labels:
            for ch in lab:
                if isinstance(ch, str):
                    counts[ch] = counts.get(ch, 0) + 1
        out = list(range(n_ell)) + sorted(ch for ch, c in counts.items() if c == 1)
    return labels, out


def _diagonalise(x: Tensor, lab: list, i: int) -> tuple:
    """Repeated labels within one operand take the diagonal."""
    while True:
        dup = next((ch for ch in lab if lab.count(ch) > 1), None)
        if dup is None:
            return x, lab
        d1 = lab.index(dup)
        d2 = lab.index(dup, d1 + 1)
        if x._a.shape[d1] != x._a.shape[d2]:
            raise RuntimeError(f"einsum(): subscript {dup} is repeated for operand {i} but the "
                               f"sizes don't match, {x._a.shape[d2]} != {x._a.shape[d1]}")
        x = x.diagonal(0, d1, d2)
        lab = [c for k, c in enumerate(lab) if k not in (d1, d2)] + [dup]


def _contract(x: Tensor, lx: list, y: Tensor, ly: list, keep: set) -> tuple:
    """One pairwise contraction as a bmm: labels in both and kept are batch dims, labels in
    both and not kept are summed, the others stay."""
    batch = [c for c in lx if c in ly and c in keep]
    summed = [c for c in lx if c in ly and c not in keep]
    xo = [c for c in lx if c not in ly]
    yo = [c for c in ly if c not in lx]
    size = {**dict(zip(lx, x._a.shape)), **dict(zip(ly, y._a.shape))}

    def prod(labels):
        p = 1
        for c in labels:
            p *= size[c]
        return p

    xp = x.permute(*[lx.index(c) for c in batch + xo + summed])
    yp = y.permute(*[ly.index(c) for c in batch + summed + yo])
    nb, m, k, n = prod(batch), prod(xo), prod(summed), prod(yo)
    r = bmm(xp.reshape(nb, m, k), yp.reshape(nb, k, n))
    return r.reshape([size[c] for c in batch + xo + yo]), batch + xo + yo


def einsum(equation: str, *operands) -> Tensor:
    """Einstein summation: explicit or implicit output, '...', repeated labels, any number of
    operands; contracted pairwise as batched matrix products, cheapest pair first.

    >>> jtorch.einsum("ij,jk->ik", jtorch.ones(2, 3), jtorch.ones(3, 4)).shape
    torch.Size([2, 4])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not operands:
        raise RuntimeError("einsum(): must provide at least one operand")
    d = operands[0].dtype
    for x in operands[1:]:
        if x.dtype is not d:
            raise RuntimeError(f"expected scalar type {d.scalar_name} but found "
                               f"{x.dtype.scalar_name}")
    labels, out = _einsum_parse(equation, list(operands))
    xs = []
    size: dict = {}
    for i, (x, lab) in enumerate(zip(operands, labels)):
        x, lab = _diagonalise(x, list(lab), i)
        for c, n in zip(lab, x._a.shape):
            prev = size.get(c)
            if prev is not None and n != prev and n != 1 and prev != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {i} which "
                                   f"does not broadcast with previously seen size {prev}")
            size[c] = n if prev is None or prev == 1 else prev
        xs.append([x, lab])
    for item in xs:  # broadcast size-1 dims, then sum labels used nowhere else
        x, lab = item
        full = [size[c] for c in lab]
        if list(x._a.shape) != full:
            x = x.expand(full)
        others = set(out)
        for other in xs:
            if other is not item:
                others.update(other[1])
        gone = [k for k, c in enumerate(lab) if c not in others]
        if gone:
            x = x.sum(gone)
            lab = [c for k, c in enumerate(lab) if k not in gone]
        item[0], item[1] = x, lab
    while len(xs) > 1:
        best = None
        for i in range(len(xs)):
            for j in range(i + 1, len(xs)):
                keep = set(out)
                for k, other in enumerate(xs):
                    if k not in (i, j):
                        keep.update(other[1])
                labs = set(xs[i][1]) | set(xs[j][1])
                cost = 1
                for c in labs:
                    if c in keep:
                        cost *= size[c]
                if best is None or cost < best[0]:
                    best = (cost, i, j, keep)
        _, i, j, keep = best
        r, lab = _contract(xs[i][0], xs[i][1], xs[j][0], xs[j][1], keep)
        xs = [x for k, x in enumerate(xs) if k not in (i, j)] + [[r, lab]]
    x, lab = xs[0]
    missing = [c for c in out if c not in lab]
    if missing:  # an output label only on a removed diagonal cannot happen; keep shapes exact
        raise RuntimeError(f"einsum(): output subscripts {missing} were contracted")
    return x.permute(*[lab.index(c) for c in out]) if lab != out else x


__all__ += ["einsum", "kron", "trace"]


def kron(input: Tensor, other: Tensor, *, out: Tensor | None = None) -> Tensor:
    """Kronecker product: a broadcast multiply of interleaved views."""
    nd = max(input.dim(), other.dim())
    a = input.reshape((1,) * (nd - input.dim()) + tuple(input._a.shape))
    b = other.reshape((1,) * (nd - other.dim()) + tuple(other._a.shape))
    ai = a.reshape([s for n in a._a.shape for s in (n, 1)])
    bi = b.reshape([s for n in b._a.shape for s in (1, n)])
    return _deliver((ai * bi).reshape([x * y for x, y in zip(a._a.shape, b._a.shape)]), out)


@_amp.fp32_op
def trace(input: Tensor) -> Tensor:
    """Sum of the main diagonal of a 2-D tensor (integers sum to int64)."""
    if input.dim() != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.dim()}")
    return input.diagonal().sum()


# -- norms of matrices --------------------------------------------------------------------

@_amp.fp32_op
def svdvals(A: Tensor, *, driver=None, out: Tensor | None = None) -> Tensor:
    """Singular values of the matrices in ``A`` (..., M, N), descending."""
    return _deliver(dispatch.call(L.svdvals_op, A)[0], out)


_MATRIX_ORDS = ("fro", "nuc", 1, -1, 2, -2, float("inf"), float("-inf"))


def matrix_norm(A: Tensor, ord="fro", dim=(-2, -1), keepdim: bool = False, *, dtype=None,
                out: Tensor | None = None) -> Tensor:
    """torch.linalg.matrix_norm: 'fro', 'nuc', +-1, +-2, +-inf over the two dims ``dim``."""
    from .reduction import vector_norm

    if A.dim() < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as "
                           f"input. Got {A.dtype.scalar_name}")
    if not isinstance(dim, (tuple, list)) or len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{dim if not isinstance(dim, (tuple, list)) else ' '.join(map(str, dim))}")
    if ord not in _MATRIX_ORDS:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if dtype is not None:
        A = A.to(dtype)
    d0, d1 = (d % A.dim() for d in dim)
    if ord == "fro":
        res = vector_norm(A, 2, (d0, d1), keepdim)
    elif ord in ("nuc", 2, -2):
        s = svdvals(A.movedim((d0, d1), (-2, -1)))
        res = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        if keepdim:
            for d in sorted((d0, d1)):
                res = res.unsqueeze(d)
    else:
        inner, outer_d = (d1, d0) if abs(ord) == float("inf") else (d0, d1)
        sums = A.abs().sum(inner, keepdim=True)
        res = sums.amax(outer_d, keepdim=True) if ord > 0 else sums.amin(outer_d, keepdim=True)
        if not keepdim:
            res = res.squeeze((d0, d1))
    return _deliver(res, out)


def norm(A: Tensor, ord=None, dim=None, keepdim: bool = False, *, dtype=None,
         out: Tensor | None = None) -> Tensor:
    """torch.linalg.norm: a vector norm or a matrix norm, by ``ord`` and ``dim``."""
    from .reduction import vector_norm

    if dim is not None and not isinstance(dim, int) and len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, tuple(dim), keepdim, dtype=dtype,
                           out=out)
    if dim is None and ord is not None:
        if A.dim() == 2:
            return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype, out=out)
        if A.dim() != 1:
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                               f"be 1D or 2D. Got {A.dim()}D.")
    if isinstance(ord, str):
        raise RuntimeError(f"linalg.vector_norm: Order {ord} not supported for vectors.")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype, out=out)


# -- layers' contractions ------------------------------------------------------------------

def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """input @ weight.T + bias (one BLAS call on the transposed weight, no copy)."""
    if _amp.on:
        input, weight, bias = _amp.lower(input, weight, bias)
    if weight.dim() not in (1, 2):
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{weight.dim()}D")
    if input.dim() >= 2 and weight.dim() == 2 and bias is not None:
        if input.dim() == 2:
            return addmm(bias, input, weight.t())
        lead = input._a.shape[:-1]  # torch folds the batch into addmm's rows, then views
        return addmm(bias, _fold(input), weight.t()).view(*lead, weight._a.shape[0])
    out = matmul(input, weight.t())
    return out if bias is None else out + bias


@_amp.promote_op("cuda")
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y[..., o] = x1 . W[o] . x2 + b[o]."""
    if input1.dim() != input2.dim():
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.dim()} and "
                           f"{input2.dim()}")
    if input1.dim() == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear(): input batch dimensions do not match: got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    out = einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias


__all__ += ["linear", "bilinear"]
