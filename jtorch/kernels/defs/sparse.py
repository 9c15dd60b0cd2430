"""The OpDefs under sparse COO tensors (``jtorch/sparse``): index-structure kernels and the
two products a sparse tensor's gradients need.

A sparse tensor is two dense tensors, int64 ``indices`` (sparse_dim, nnz) and ``values``
(nnz, *dense_dims); every sparse operation is registry ops on those, so autograd reaches the
values and the dense operands with no sparse-specific engine. The ops here:

* index structure (integer results, no gradient): ``_sparse_coalesce`` (sorted unique
  columns, the run of each input column, the sorting permutation), ``_sparse_rowptr`` (CSR
  row pointers of sorted rows), ``_sparse_csr_transpose`` (the transpose's CSR structure and
  the source entry of each of its entries), ``_sparse_spgemm`` (the product pairs of sparse @
  sparse), ``_sparse_dense_nonzero`` (the non-zero rows of a dense tensor: ``to_sparse``),
  ``_sparse_intersect`` (the columns two coalesced tensors share: sparse * sparse),
  ``_sparse_select`` (the entries of ``index_select`` along a sparse dim). The ones whose
  result size is a count of data are ``data_dependent`` (graph breaks when traced).
* ``_sparse_csr_mm(rowptr, col, values, dense)``: CSR @ dense, and
  ``_sparse_csr_sddmm(rowptr, col, a, b)``: ``a[row(p)] . b[col(p)]`` per stored entry. Each is
  linear in its last two operands, and each one's gradients are the other one (and ``csr_mm``
  of the transposed structure), so second derivatives come for free.
"""

from __future__ import annotations

from ... import dtypes as _dt
from ..plan import Out, Plan, common_device
from ..registry import defvjp, op
from ._lazy import lazy

_K = "jtorch.kernels.cpu.sparse"  # imported at the first call (_lazy.py)
_I64 = _dt.int64


def _index_meta(*tensors, **kw) -> Plan:
    """A data-dependent index op: the result's size is a count of the data."""
    return Plan(None, kw, common_device(*tensors))


def _rowptr_meta(rows, *, nrows: int) -> Plan:
    return Plan(Out((nrows + 1,), _I64), {"nrows": nrows}, common_device(rows))


def _transpose_meta(rowptr, col, *, ncols: int) -> Plan:
    n = col._a.shape[0]
    return Plan((Out((ncols + 1,), _I64), Out((n,), _I64), Out((n,), _I64)), {"ncols": ncols},
                common_device(rowptr, col))


def _check_mm(a, b, what: str) -> None:
    if a.dtype is not b.dtype:
        raise RuntimeError(f"expected scalar type {a.dtype.scalar_name} but found "
                           f"{b.dtype.scalar_name}")
    if a.dtype is _dt.bool:
        raise NotImplementedError(f"\"{what}\" not implemented for 'Bool'")


def _csr_mm_meta(rowptr, col, values, dense) -> Plan:
    _check_mm(values, dense, "addmm_sparse_dense")
    shape = (rowptr._a.shape[0] - 1, dense._a.shape[1])
    return Plan(Out(shape, values.dtype), {}, common_device(rowptr, col, values, dense))


def _csr_sddmm_meta(rowptr, col, a, b) -> Plan:
    _check_mm(a, b, "sparse_sampled_addmm")
    return Plan(Out((col._a.shape[0],), a.dtype), {}, common_device(rowptr, col, a, b))


def _index_op(name: str, kernel: str, meta=_index_meta, data_dependent: bool = True):
    return op(name, "extern", meta, lazy(_K, kernel), differentiable=False,
              data_dependent=data_dependent)


# (indices; sizes=) -> (coalesced indices, run of each column, sorting permutation)
coalesce_op = _index_op("_sparse_coalesce", "coalesce_cpu")
# (sorted rows; nrows=) -> row pointers (nrows + 1,)
rowptr_op = _index_op("_sparse_rowptr", "rowptr_cpu", _rowptr_meta, data_dependent=False)
# (rowptr, col; ncols=) -> (rowptr, row of each entry, source entry) of the transpose
csr_transpose_op = _index_op("_sparse_csr_transpose", "csr_transpose_cpu", _transpose_meta,
                             data_dependent=False)
# (a rowptr, a col, b rowptr, b col; ncols=) -> (indices (2, nnz), a entry, b entry, out entry)
spgemm_op = _index_op("_sparse_spgemm", "spgemm_cpu")
# (x (R, ...); sizes=) -> (indices (len(sizes), nnz), row of each entry) of the non-zero rows
dense_nonzero_op = _index_op("_sparse_dense_nonzero", "dense_nonzero_cpu")
# (indices a, indices b), both coalesced -> (entries of a, entries of b) at shared columns
intersect_op = _index_op("_sparse_intersect", "intersect_cpu")
# (keys (nnz,), index; size=) -> (source entry, position in index) of each selected entry
select_op = _index_op("_sparse_select", "select_cpu")

csr_mm_op = op("_sparse_csr_mm", "extern", _csr_mm_meta, lazy(_K, "csr_mm_cpu"))
csr_sddmm_op = op("_sparse_csr_sddmm", "extern", _csr_sddmm_meta, lazy(_K, "csr_sddmm_cpu"))


def transposed_mm(rowptr, col, values, dense, ncols: int):
    """(the CSR matrix)^T @ dense, the CSR matrix having ``ncols`` columns."""
    tptr, trow, src = csr_transpose_op(rowptr, col, ncols=ncols)
    return csr_mm_op(tptr, trow, values.index_select(0, src), dense)


def _csr_mm_vjp(c, g):
    rowptr, col, values, dense = c.args
    gv = csr_sddmm_op(rowptr, col, g, dense) if c.needs[2] else None
    gd = transposed_mm(rowptr, col, values, g, dense._a.shape[0]) if c.needs[3] else None
    return None, None, gv, gd


def _csr_sddmm_vjp(c, g):
    rowptr, col, a, b = c.args
    ga = csr_mm_op(rowptr, col, g, b) if c.needs[2] else None
    gb = transposed_mm(rowptr, col, g, a, b._a.shape[0]) if c.needs[3] else None
    return None, None, ga, gb


defvjp(csr_mm_op, _csr_mm_vjp, "0123", name="MmBackward0")
defvjp(csr_sddmm_op, _csr_sddmm_vjp, "0123", name="SparseSampledAddmmBackward0")
