"""Sorting and selection: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode,
unique, unique_consecutive: torch-named functions and Tensor methods.

Each is a call of its OpDef (``kernels/defs/sort.py``) through ``dispatch.call``; ``out=``
tensors are written by ``dispatch.copy_into``. ``unique`` and ``unique_consecutive`` are
data-dependent (their result sizes depend on the values).

>>> import jtorch as torch
>>> torch.tensor([3, 1, 2]).sort().values
tensor([1, 2, 3])

``axis=`` and ``keepdims=`` are accepted for ``dim`` and ``keepdim``, as torch's argument parser
accepts NumPy's names.
"""

from __future__ import annotations

from .. import dispatch
from ..kernels.defs import sort as D
from .reduction import pair_out, return_types

__all__ = [
    "argsort",
    "kthvalue",
    "median",
    "mode",
    "msort",
    "nanmedian",
    "sort",
    "topk",
    "unique",
    "unique_consecutive",
]


def sort(input, dim=-1, descending=False, stable=False, *, out=None, axis=None):
    """torch.sort: (values, indices); stable for every call, nan sorts as the largest value;
    laid out like the input."""
    if axis is not None:
        dim = axis
    return pair_out(return_types.sort, dispatch.call(D.sort_op, input, dim=dim,
                                                     descending=descending, stable=stable), out)


def argsort(input, dim=-1, descending=False, stable=False, *, axis=None):
    """torch.argsort: the indices of torch.sort."""
    if axis is not None:
        dim = axis
    return dispatch.call(D.argsort_op, input, dim=dim, descending=descending, stable=stable)


def msort(input):
    """torch.msort: sort along dim 0."""
    return sort(input, 0).values


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None, axis=None):
    """torch.topk: the k largest (or smallest) along ``dim``, in sorted order; nan counts as
    the largest value."""
    if axis is not None:
        dim = axis
    return pair_out(return_types.topk, dispatch.call(D.topk_op, input, k=k, dim=dim,
                                                     largest=largest, sorted=sorted), out)


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None, axis=None, keepdims=None):
    """torch.kthvalue: the k-th smallest value along ``dim`` and its index."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return pair_out(return_types.kthvalue, dispatch.call(D.kthvalue_op, input, k=k, dim=dim,
                                                         keepdim=keepdim), out)


def _median(op, rt, input, dim, keepdim, out):
    res = dispatch.call(op, input, dim=dim, keepdim=keepdim)
    if dim is None:
        return res if out is None else dispatch.copy_into(out, res)
    return pair_out(rt, res, out)


def median(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """torch.median: the lower median (nan if the row has a nan); with ``dim`` a (values,
    indices) named tuple."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return _median(D.median_op, return_types.median, input, dim, keepdim, out)


def nanmedian(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """torch.nanmedian: the lower median of the non-nan values."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return _median(D.nanmedian_op, return_types.nanmedian, input, dim, keepdim, out)


def mode(input, dim=-1, keepdim=False, *, out=None, axis=None, keepdims=None):
    """torch.mode: the most frequent value along ``dim`` (the smallest on ties) and the index
    of its last occurrence."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return pair_out(return_types.mode, dispatch.call(D.mode_op, input, dim=dim, keepdim=keepdim),
                    out)


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """torch.unique over the flattened input: sorted unique values (torch's CPU kernel sorts
    even for ``sorted=False``), optional inverse indices and counts; unique slices along
    ``dim``."""
    return dispatch.call(D.unique_op, input, sorted=sorted, return_inverse=return_inverse,
                         return_counts=return_counts, dim=dim)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """torch.unique_consecutive: collapse runs of equal neighbours (of the flattened input, or
    of slices along ``dim``)."""
    return dispatch.call(D.unique_consecutive_op, input, return_inverse=return_inverse,
                         return_counts=return_counts, dim=dim)
