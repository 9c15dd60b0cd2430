"""The sort family: sort, argsort, topk, kthvalue, median, nanmedian, mode, unique,
unique_consecutive: records, meta rules and gradient rules.

Their kernels (``kernels/cpu/sort.py``, entries in ``sort_entries.py``) sort or select along
one dim. ``sort``/``argsort`` results are laid out like the input (dense in the input's
memory order, torch's ``empty_like``); the others are fresh C-contiguous tensors. The
value-and-index ops return (values, int64 indices); their gradient rules scatter the
gradient back to the picked indices (the node's saved second output). ``unique`` and
``unique_consecutive`` have value-dependent shapes: ``data_dependent``, their plans describe
no result (their meta tensors raise NotImplementedError).
"""

from __future__ import annotations

from ... import dtypes as _dt
from ...shape import iter_order, wrap_dim
from ..plan import Out, Plan, common_device, device_of
from ..registry import OpDef, defvjp, op, register
from ._lazy import lazy
from .reduction import (
    _plans,
    check_tensor,
    kept_shape,
    memo,
    memo_meta,
    nonempty,
    not_implemented,
    select_vjp,
)

_SE = "jtorch.kernels.cpu.sort_entries"  # imported at the first call (_lazy.py)

_int64 = _dt.int64


def _sortable(x, kernel: str) -> None:
    """torch's dtype check of the selection kernels (median, kthvalue): no bool, no complex."""
    if x.dtype is _dt.bool or x.dtype.is_complex:
        raise not_implemented(kernel, x.dtype)


def _like_input_strides(a) -> tuple | None:
    """Element strides of a dense result laid out in ``a``'s memory order (None: C-contiguous,
    for contiguous inputs and those of fewer than two dims), as the sort kernels write it."""
    if a.flags.c_contiguous or a.ndim < 2:
        return None
    shape = a.shape
    isz = a.itemsize
    st = [0] * len(shape)
    acc = 1
    for k in iter_order(shape, [[s // isz for s in a.strides]]):  # fastest first
        st[k] = acc
        acc *= max(shape[k], 1)
    return tuple(st)


def _sort_meta(indices_only: bool):
    name = "argsort" if indices_only else "sort"

    def meta(x, dim=-1, descending=False, stable=False) -> Plan:
        try:
            a = x._a
            key = (name, a.__class__, a.shape, a.strides, x.dtype, dim, descending, stable)
            plan = _plans.get(key)
        except (AttributeError, TypeError):
            key = plan = None
        if plan is not None:
            return plan
        check_tensor(x, name)
        a = x._a
        d = wrap_dim(dim, a.ndim)
        if x.dtype.is_complex:
            raise RuntimeError(" Sort does not support complex dtypes on CPU")
        st = _like_input_strides(a)
        idx = Out(a.shape, _int64, st)
        out = idx if indices_only else (Out(a.shape, x.dtype, st), idx)
        plan = Plan(out, {"dim": d, "descending": descending, "stable": stable}, device_of(x))
        return plan if key is None else memo(key, plan)

    return meta


def _topk_meta(x, k, dim=-1, largest=True, sorted=True) -> Plan:
    check_tensor(x, "topk")
    a = x._a
    d = wrap_dim(dim, a.ndim)
    n = a.shape[d] if a.ndim else 1
    if k < 0 or k > n:
        raise RuntimeError("selected index k out of range")
    if x.dtype.is_complex:
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    if x.dtype is _dt.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    shape = tuple(k if i == d else s for i, s in enumerate(a.shape))
    return Plan((Out(shape, x.dtype), Out(shape, _int64)),
                {"k": k, "dim": d, "largest": largest, "sorted": sorted}, device_of(x))


def _kthvalue_meta(x, k, dim=-1, keepdim=False) -> Plan:
    check_tensor(x, "kthvalue")
    a = x._a
    d = wrap_dim(dim, a.ndim)
    nonempty("kthvalue", a, (d,) if a.ndim else (), True)
    n = a.shape[d] if a.ndim else 1
    if k < 1 or k > n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    _sortable(x, "kthvalue_cpu")
    shape = kept_shape(a.shape, (d,) if a.ndim else (), keepdim)
    return Plan((Out(shape, x.dtype), Out(shape, _int64)), {"k": k, "dim": d, "keepdim": keepdim},
                device_of(x))


def _median_meta(name: str):
    """median / nanmedian: over all elements (one value, no index) or along ``dim``."""

    def meta(x, dim=None, keepdim=False) -> Plan:
        check_tensor(x, name)
        a = x._a
        if dim is None:  # (the median of no elements is nan, whatever the dtype)
            if a.size:
                _sortable(x, "median_cpu")
            return Plan(Out((), x.dtype), {"dim": None}, device_of(x))
        d = wrap_dim(dim, a.ndim)
        nonempty("median", a, (d,) if a.ndim else (), True)
        _sortable(x, "median_out")
        shape = kept_shape(a.shape, (d,) if a.ndim else (), keepdim)
        return Plan((Out(shape, x.dtype), Out(shape, _int64)), {"dim": d, "keepdim": keepdim},
                    device_of(x))

    return meta


def _mode_meta(x, dim=-1, keepdim=False) -> Plan:
    check_tensor(x, "mode")
    a = x._a
    d = wrap_dim(dim, a.ndim)
    nonempty("mode", a, (d,) if a.ndim else (), True)
    if x.dtype.is_complex and a.size:
        raise not_implemented("mode_cpu", x.dtype)
    shape = kept_shape(a.shape, (d,) if a.ndim else (), keepdim)
    return Plan((Out(shape, x.dtype), Out(shape, _int64)), {"dim": d, "keepdim": keepdim},
                device_of(x))


def _unique_meta(name: str):
    """unique / unique_consecutive: checks only; the result's size depends on the values."""

    def meta(x, sorted=True, return_inverse=False, return_counts=False, dim=None) -> Plan:
        check_tensor(x, name)
        if dim is not None:
            dim = wrap_dim(dim, x._a.ndim)
        if x.dtype.is_complex:
            raise not_implemented("unique" if dim is None else "unique_dim", x.dtype)
        kw = {"sorted": sorted, "return_inverse": return_inverse, "return_counts": return_counts,
              "dim": dim}
        return Plan(None, kw, device_of(x))

    return meta


def _op(name: str, meta, cpu, **kw) -> OpDef:
    return register(OpDef(name, "sort", meta=meta, kernels={"cpu": cpu}, **kw))


sort_op = _op("sort", _sort_meta(False), lazy(_SE, "sort_cpu"))
argsort_op = _op("argsort", _sort_meta(True), lazy(_SE, "argsort_cpu"), differentiable=False)
topk_op = _op("topk", memo_meta("topk", _topk_meta), lazy(_SE, "topk_cpu"))
kthvalue_op = _op("kthvalue", memo_meta("kthvalue", _kthvalue_meta), lazy(_SE, "kthvalue_cpu"))
median_op = _op("median", memo_meta("median", _median_meta("median")), lazy(_SE, "median_cpu", False))
nanmedian_op = _op("nanmedian", memo_meta("nanmedian", _median_meta("nanmedian")),
                   lazy(_SE, "median_cpu", True))
mode_op = _op("mode", memo_meta("mode", _mode_meta), lazy(_SE, "mode_cpu"))
unique_op = _op("unique", _unique_meta("unique"), lazy(_SE, "unique_cpu"), differentiable=False,
                data_dependent=True)
unique_consecutive_op = _op("unique_consecutive", _unique_meta("unique_consecutive"),
                            lazy(_SE, "unique_consecutive_cpu"), differentiable=False, data_dependent=True)


def _median_name(base: str):
    names = (f"{base}Backward1", f"{base}Backward0")
    return lambda inputs, kw: names[kw["dim"] is None]


defvjp(sort_op, select_vjp(keepdim=True), "o")
defvjp(topk_op, select_vjp(keepdim=True), "o")
defvjp(kthvalue_op, select_vjp(), "o")
defvjp(median_op, select_vjp(), "0o", name=_median_name("Median"))
defvjp(nanmedian_op, select_vjp(), "0o", name=_median_name("Nanmedian"))
defvjp(mode_op, select_vjp(), "o")


# -- searchsorted: each value's insertion point in its row of a sorted sequence ---------------

def _searchsorted_meta(seq, values, *, right: bool = False, out_int32: bool = False) -> Plan:
    """(sequence (..., n), values) of one dtype (``ops/numeric.py`` checks and promotes)."""
    return Plan(Out(values._a.shape, _dt.int32 if out_int32 else _dt.int64),
                {"right": bool(right), "out_int32": bool(out_int32)},
                common_device(seq, values))


searchsorted_op = op("searchsorted", "extern", _searchsorted_meta,
                     lazy("jtorch.kernels.cpu.search", "searchsorted_cpu"), differentiable=False)
