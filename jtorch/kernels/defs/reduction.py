"""Reductions: sum, mean, prod, amax, all, ... (generated loops), the value-and-index
reductions (max/min along a dim, argmax, aminmax) and the statistics built on them (var,
std, nanmean, vector norms, logsumexp): their records, meta rules and gradient rules.

A generated reduction is an OpDef with ``combine``/``identity`` (and ``map``/``post``; the
scalar functions live in ``combine.py``), a ``dtype_rule`` naming how the input dtype and
``dtype=`` give the result, and ``wide`` (float32 accumulates in float64 blocks, torch's
accuracy). Its meta rule wraps the dims, applies the dtype rule and torch's checks, and
describes a fresh C-contiguous result (torch's reductions are contiguous whatever the input's
layout, keepdim or not); plans are memoised on (op, input geometry, arguments): treat them as
read-only. The CPU kernel entries live in ``kernels/cpu/reduce.py``. Scans are in
``scan.py``, the sort family (sort, topk, median, mode, unique) in ``sort.py``, softmax in
``softmax.py``.
"""

from __future__ import annotations

import builtins
import math
import warnings

from ... import dispatch
from ... import dtypes as _dt
from ...shape import wrap_dim
from ...tensor import Tensor
from ..cpu import reduce as _rk
from ..cpu.half import via_float32
from ..plan import Out, Plan, device_of
from ..plan import memo as memo_plan
from ..registry import OpDef, defvjp, holomorphic, reduction, register
from . import combine as C
from .combine import logaddexp, maximum, minimum  # noqa: F401  (kernels import them from here)

# Dtype rules: how the input dtype and ``dtype=`` give the result.
SUM = "sum"        # ints and bool -> int64, floats keep their dtype
SAME = "same"      # the input dtype (amax, amin)
FLOAT = "float"    # floating/complex only (mean): ints raise
BOOL = "bool"      # bool result; uint8 stays uint8 (all, any)
INT64 = "int64"    # always int64 (count_nonzero)

_int64 = _dt.int64
_bool = _dt.bool


# -- argument rules shared by the reduction, scan, sort and softmax records -------------------

def check_tensor(x, name: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def reduced_dims(dim, nd: int) -> tuple:
    """Wrapped, sorted reduced dims; None or () mean all dims (torch's convention)."""
    if dim is None:
        return tuple(range(nd))
    if isinstance(dim, int):
        w = wrap_dim(dim, nd)
        return (w,) if nd else ()
    if isinstance(dim, Tensor):  # a dims tensor is an argument, read as a list
        dim = dim.tolist()
        if isinstance(dim, int):
            return reduced_dims(dim, nd)
    dims = tuple(dim)
    if not dims:
        return tuple(range(nd))
    seen: list[int] = []
    for d in dims:
        w = wrap_dim(d, nd)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.append(w)
    return tuple(sorted(seen)) if nd else ()


def kept_shape(shape: tuple, dims: tuple, keepdim: bool) -> tuple:
    if keepdim:
        return tuple(1 if d in dims else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in dims)


def nonempty(name: str, a, dims, dim_given: bool, full_error=RuntimeError,
             full_tail: str = " Specify the reduction dim with the 'dim' argument.") -> None:
    """torch's errors for reductions without an identity (max, amax, argmax...) on empties;
    ``dims`` as the caller gave them (torch names the dim as written)."""
    if a.size:
        return
    if not dim_given:
        raise full_error(f"{name}(): Expected reduction dim to be specified for input.numel() "
                         f"== 0.{full_tail}")
    for d in (dims,) if isinstance(dims, int) else dims:
        if a.ndim and a.shape[wrap_dim(d, a.ndim)] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def not_implemented(kernel: str, d: _dt.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{d.scalar_name}\'')


def result_dtypes(op: OpDef, x_dtype: _dt.dtype, dtype, name: str) -> tuple:
    """(compute, out) dtypes of a reduction by the OpDef's rule."""
    rule = op.dtype_rule
    if dtype is not None:
        d = _dt.to_dtype(dtype)
        if rule == FLOAT and d.category < 2:
            raise RuntimeError(f"{name}(): could not infer output dtype. Optional dtype must be "
                               f"either a floating point or complex dtype. Got: {d.scalar_name}")
        return d, d
    cat = x_dtype.category
    if rule == SUM:
        d = _int64 if cat < 2 else x_dtype
        return d, d
    if rule == FLOAT:
        if cat < 2:
            raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be "
                               f"either a floating point or complex dtype. Got: "
                               f"{x_dtype.scalar_name}")
        return x_dtype, x_dtype
    if rule == BOOL:
        return _bool, (_dt.uint8 if x_dtype is _dt.uint8 else _bool)
    if rule == INT64:
        return _int64, _int64
    return x_dtype, x_dtype


# Plans memoised by key (the meta rules' hot path is a tuple and one dict lookup).
_plans: dict = {}


def memo(key, plan):
    return memo_plan(_plans, key, plan)


def memo_meta(name: str, rule):
    """``rule(x, **params) -> Plan`` memoised on (name, the input's geometry, the params) when
    they are hashable and ``cacheable``; on a miss ``rule`` runs (and raises)."""

    def meta(x, **params):
        try:
            key = (name, x._a.__class__, x._a.shape, x.dtype, *params.items())
            return _plans[key]
        except KeyError:
            plan = rule(x, **params)
            if cacheable(*params.values()):
                memo(key, plan)
            return plan
        except (AttributeError, TypeError):  # not a tensor, or an unhashable argument
            return rule(x, **params)

    return meta


def cacheable(*args) -> bool:
    """Arguments a memoised plan may be keyed on: not tensors (hashed by identity) and not
    Python's float/complex as ``dtype`` (they mean the default dtype, which may change)."""
    for a in args:
        if isinstance(a, Tensor) or a is builtins.float or a is builtins.complex:
            return False
    return True


# -- generated reductions ----------------------------------------------------------------------

def _reduce_plan(op: OpDef, x, dim, keepdim: bool, dtype, name: str, check) -> Plan:
    check_tensor(x, name)
    _, out_dtype = result_dtypes(op, x.dtype, dtype, name)  # torch checks dtype= first
    a = x._a
    dims = reduced_dims(dim, a.ndim)
    if check is not None:
        check(x, dim, name)
    kw = {"dim": dims, "keepdim": keepdim, "dtype": dtype, "fn": name, "full": dim is None}
    return Plan(Out(kept_shape(a.shape, dims, keepdim), out_dtype), kw, device_of(x))


def _reduce_meta(op: OpDef, check=None):
    """The meta rule of a generated reduction: ``(x, dim, keepdim, dtype, fn)``; ``fn`` names
    the public function (max() runs amax: its errors and grad_fn name say max)."""

    def meta(x, dim=None, keepdim=False, dtype=None, fn=None):
        try:
            return _plans[op, x._a.__class__, x._a.shape, x.dtype, dim, keepdim, dtype, fn]
        except KeyError:
            pass
        except (AttributeError, TypeError):  # not a tensor, or an unhashable argument
            if dim.__class__ is list:  # dims as a list (autograd's sum_to)
                return meta(x, tuple(dim), keepdim, dtype, fn)
            return _reduce_plan(op, x, dim, keepdim, dtype, fn or op.name, check)
        plan = _reduce_plan(op, x, dim, keepdim, dtype, fn or op.name, check)
        if cacheable(dim, dtype):
            memo((op, x._a.__class__, x._a.shape, x.dtype, dim, keepdim, dtype, fn), plan)
        return plan

    return meta


def _extreme_check(kernel: str, full_kernel: str):
    """amax/amin (and max()/min() over all elements): no complex input, no empty reduction."""

    def check(x, dim, name):
        a = x._a
        if name in ("max", "min"):
            nonempty(name, a, (), False)
            if x.dtype.is_complex:
                raise not_implemented(full_kernel, x.dtype)
            return
        given = dim is not None and dim != ()
        nonempty(name, a, dim if given else (), given)
        if x.dtype.is_complex:
            raise not_implemented(kernel, x.dtype)

    return check


def _reduction(name: str, combine, identity, check=None, **kw) -> OpDef:
    op = reduction(name, combine, identity, **kw)
    op.meta = _reduce_meta(op, check)
    op.kernels["cpu"] = via_float32(_rk.reduction_cpu(op, op.dtype_rule == BOOL))
    return op


sum_op = _reduction("sum", C.add, 0, dtype_rule=SUM, wide=True)
nansum_op = _reduction("nansum", C.add, 0, dtype_rule=SUM, wide=True, map=C.nan_as_zero)
mean_op = _reduction("mean", C.add, 0, dtype_rule=FLOAT, wide=True, post=C.mean_post)
prod_op = _reduction("prod", C.mul, 1, dtype_rule=SUM)
amax_op = _reduction("amax", C.larger, "lowest", _extreme_check("max_values_cpu", "max_all"),
                     dtype_rule=SAME)
amin_op = _reduction("amin", C.smaller, "highest", _extreme_check("min_values_cpu", "min_all"),
                     dtype_rule=SAME)
all_op = _reduction("all", C.both, True, differentiable=False, dtype_rule=BOOL, map=C.nonzero)
any_op = _reduction("any", C.either, False, differentiable=False, dtype_rule=BOOL,
                    map=C.nonzero)
count_nonzero_op = _reduction("count_nonzero", C.add, 0, differentiable=False, dtype_rule=INT64,
                              map=C.nonzero)
# The parts of linalg_vector_norm by order (ord 0 and general p are composed in its kernel),
# and the sum of squares that is var's second pass (over x - mean): loops run inside those
# ops' kernels, never called on their own.
_part = {"dtype_rule": FLOAT, "differentiable": False}
norm_l1_op = reduction("norm_l1", C.add, 0, wide=True, map=C.magnitude, **_part)
norm_l2_op = reduction("norm_l2", C.add, 0, wide=True, map=C.square, post=C.sqrt_post, **_part)
norm_linf_op = reduction("norm_linf", C.larger, 0, map=C.magnitude, **_part)
norm_lninf_op = reduction("norm_lninf", C.smaller, "highest", map=C.magnitude, **_part)
sumsq_op = reduction("sumsq", C.add, 0, wide=True, map=C.square, **_part)


# -- value-and-index reductions ----------------------------------------------------------------
# max(dim)/argmax reuse amax's combine: the row kernel reduces with it, then finds the first
# index holding the result.

def _max_dim_meta(name: str):
    """max(x, dim) / min(x, dim): (values, indices) along one dim."""

    def meta(x, dim, keepdim=False):
        try:
            key = (name, x._a.__class__, x._a.shape, x.dtype, dim, keepdim)
            plan = _plans.get(key)
        except (AttributeError, TypeError):
            key = plan = None
        if plan is not None:
            return plan
        check_tensor(x, name)
        a = x._a
        d = wrap_dim(dim, a.ndim)
        nonempty(name, a, (d,), True)
        if x.dtype.is_complex:
            raise RuntimeError(f"{name}(): does not support complex input")
        shape = kept_shape(a.shape, (d,) if a.ndim else (), keepdim)
        plan = Plan((Out(shape, x.dtype), Out(shape, _int64)), {"dim": d, "keepdim": keepdim},
                    device_of(x))
        return plan if key is None else memo(key, plan)

    return meta


def _argmax_meta(name: str):
    """argmax / argmin: the index of the first extreme along ``dim`` (None: of the flattened
    input)."""

    def meta(x, dim=None, keepdim=False):
        try:
            key = (name, x._a.__class__, x._a.shape, x.dtype, dim, keepdim)
            plan = _plans.get(key)
        except (AttributeError, TypeError):
            key = plan = None
        if plan is not None:
            return plan
        check_tensor(x, name)
        if x.dtype is _bool:
            raise RuntimeError(f"{name}(): does not support bool input")
        if x.dtype.is_complex:
            raise RuntimeError(f"{name}(): does not support complex input")
        a = x._a
        d = None if dim is None else wrap_dim(dim, a.ndim)
        nonempty(name, a, () if d is None else (d,), d is not None, IndexError, "")
        if d is None:
            shape = (1,) * a.ndim if keepdim else ()
        else:
            shape = kept_shape(a.shape, (d,) if a.ndim else (), keepdim)
        plan = Plan(Out(shape, _int64), {"dim": d, "keepdim": keepdim}, device_of(x))
        return plan if key is None else memo(key, plan)

    return meta


def _aminmax_meta(x, dim=None, keepdim=False) -> Plan:
    check_tensor(x, "aminmax")
    a = x._a
    if a.size == 0 and dim is None:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                           "operation has no identity.")
    if dim is not None and a.ndim and a.shape[wrap_dim(dim, a.ndim)] == 0:
        raise IndexError(f"aminmax: Expected reduction dim {dim} to have non-zero size.")
    dims = reduced_dims(None if dim is None else wrap_dim(dim, a.ndim), a.ndim)
    if x.dtype.is_complex:
        raise not_implemented("aminmax_cpu", x.dtype)
    shape = kept_shape(a.shape, dims, keepdim)
    return Plan((Out(shape, x.dtype), Out(shape, x.dtype)), {"dim": dims, "keepdim": keepdim},
                device_of(x))


def _op(name: str, meta, cpu, **kw) -> OpDef:
    return register(OpDef(name, "reduction", meta=meta, kernels={"cpu": via_float32(cpu)}, **kw))


argmax_op = _op("argmax", _argmax_meta("argmax"), _rk.argmax_cpu(amax_op), differentiable=False,
                select="amax")
argmin_op = _op("argmin", _argmax_meta("argmin"), _rk.argmax_cpu(amin_op), differentiable=False,
                select="amin")
max_op = _op("max", _max_dim_meta("max"), _rk.max_dim_cpu(amax_op), select="amax")
min_op = _op("min", _max_dim_meta("min"), _rk.max_dim_cpu(amin_op), select="amin")
aminmax_op = _op("aminmax", memo_meta("aminmax", _aminmax_meta), _rk.aminmax_cpu(amin_op, amax_op))


# -- statistics ----------------------------------------------------------------------------

def _correction(name: str, unbiased, correction) -> float:
    if correction is not None and unbiased is not None:  # no torch overload takes both
        raise TypeError(f"{name}() received an invalid combination of arguments - got (Tensor, "
                        f"unbiased={type(unbiased).__name__}, correction={type(correction).__name__}), "
                        f"but expected one of:\n"
                        f" * (Tensor input, tuple of ints dim, bool unbiased = True, bool keepdim = False)\n"
                        f" * (Tensor input, tuple of ints dim = None, *, Number correction = None, "
                        f"bool keepdim = False)\n"
                        f" * (Tensor input, bool unbiased = True)\n")
    if correction is not None:
        return correction
    return 0 if unbiased is False else 1


def _dof_warning(name: str, stacklevel: int) -> None:
    """torch's warning, pointing at the caller of var/std (``stacklevel`` frames up)."""
    warnings.warn(f"{name.split('_')[0]}(): degrees of freedom is <= 0. Correction should be "
                  "strictly less than the reduction factor (input numel divided by output "
                  "numel).", UserWarning, stacklevel=stacklevel)


def _moments_meta(name: str, with_mean: bool):
    """var / std (and var_mean / std_mean): float inputs; ``dim`` may be the ``unbiased``
    flag (torch's ``var(x, False)``); warns when N - correction <= 0."""

    def meta(x, dim=None, unbiased=None, keepdim=False, correction=None) -> Plan:
        if dim.__class__ is bool:  # var(x, False): the unbiased flag (not dim 0 in the key)
            unbiased, dim = dim, None
        try:
            key = (name, x._a.__class__, x._a.shape, x.dtype, dim, unbiased, keepdim, correction)
            plan, warn = _plans[key]
        except KeyError:
            plan, warn = rule(x, dim, unbiased, keepdim, correction)
            if cacheable(dim, correction):
                memo(key, (plan, warn))
            return plan
        except (AttributeError, TypeError):
            return rule(x, dim, unbiased, keepdim, correction)[0]
        if warn:  # torch warns on every call
            _dof_warning(name, 5)
        return plan

    def rule(x, dim, unbiased, keepdim, correction) -> tuple:
        check_tensor(x, name)
        if isinstance(dim, bool):
            unbiased, dim = dim, None
        if x.dtype.category < 2:
            raise RuntimeError("std and var only support floating point and complex dtypes")
        if x.dtype.is_complex:
            raise NotImplementedError(f"{name}(): complex inputs are not supported by jtorch yet")
        c = _correction(name, unbiased, correction)
        a = x._a
        dims = reduced_dims(dim, a.ndim)
        warn = builtins.max(0, math.prod(a.shape[d] for d in dims) - c) <= 0
        if warn:
            _dof_warning(name, 6)
        out = Out(kept_shape(a.shape, dims, keepdim), x.dtype)
        kw = {"dim": dims, "keepdim": keepdim, "correction": c, "full": dim is None or a.ndim == 0}
        return Plan((out, out) if with_mean else out, kw, device_of(x)), warn

    return meta


var_op = _op("var", _moments_meta("var", False), _rk.moments_cpu(mean_op, sumsq_op, False, False))
std_op = _op("std", _moments_meta("std", False), _rk.moments_cpu(mean_op, sumsq_op, True, False))
var_mean_op = _op("var_mean", _moments_meta("var_mean", True),
                  _rk.moments_cpu(mean_op, sumsq_op, False, True))
std_mean_op = _op("std_mean", _moments_meta("std_mean", True),
                  _rk.moments_cpu(mean_op, sumsq_op, True, True))


def _nanmean_meta(x, dim=None, keepdim=False, dtype=None) -> Plan:
    check_tensor(x, "nanmean")
    if x.dtype.category < 2:
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex dtype "
                           f"but got {x.dtype.scalar_name}")
    a = x._a
    dims = reduced_dims(dim, a.ndim)
    _, d = result_dtypes(mean_op, x.dtype, dtype, "nanmean")  # a float dtype= only
    return Plan(Out(kept_shape(a.shape, dims, keepdim), d),
                {"dim": dims, "keepdim": keepdim, "dtype": dtype}, device_of(x))


nanmean_op = _op("nanmean", memo_meta("nanmean", _nanmean_meta),
                 _rk.nanmean_cpu(nansum_op, count_nonzero_op))


def _vector_norm_meta(x, ord=2, dim=None, keepdim=False, dtype=None) -> Plan:
    name = "linalg.vector_norm"
    check_tensor(x, name)
    if x.dtype.category < 2:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{x.dtype.scalar_name}")
    if x.dtype.is_complex:
        raise NotImplementedError(f"{name}: complex inputs are not supported by jtorch yet")
    d = x.dtype if dtype is None else _dt.to_dtype(dtype)
    a = x._a
    dims = reduced_dims(dim, a.ndim)
    if a.size == 0 and a.ndim and (ord < 0 or ord == math.inf):  # no identity: torch's errors
        _no_identity(name, ord, dim, a.shape)
    p = float(ord)
    if d.category < 2 and p != 0:
        raise RuntimeError(f"{name}(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {d.scalar_name}")
    return Plan(Out(kept_shape(a.shape, dims, keepdim), d),
                {"ord": ord, "dim": dims, "keepdim": keepdim, "dtype": dtype}, device_of(x))


def _no_identity(name: str, ord, dim, shape: tuple) -> None:
    """Raise torch's error for a norm without an identity (a negative or infinite order) over
    an empty reduction: the whole tensor's, or the first given dim that is empty (named as
    given)."""
    what = ("-inf" if ord < 0 else "inf") if math.isinf(ord) else \
        str(int(ord)) if float(ord).is_integer() else str(float(ord))
    given = () if dim is None else (dim,) if isinstance(dim, int) else tuple(dim)
    if not given:
        raise RuntimeError(f"{name} cannot compute the {what} norm on an empty tensor because "
                           "the operation does not have an identity")
    for k in given:
        if shape[k % len(shape)] == 0:  # (torch's message has no space after the dim)
            raise RuntimeError(f"{name} cannot compute the {what} norm on the dimension "
                               f"{k}because this dimension is empty and the operation does "
                               "not have an identity")


# (torch's op is linalg_vector_norm; "norm" is the name the test sweeps know it by)
norm_op = _op("norm", memo_meta("norm", _vector_norm_meta),
              _rk.vector_norm_cpu({2.0: norm_l2_op, 1.0: norm_l1_op, math.inf: norm_linf_op,
                                   -math.inf: norm_lninf_op}, count_nonzero_op, sum_op),
              grad_name="LinalgVectorNormBackward0")


def _logsumexp_meta(x, dim=None, keepdim=False) -> Plan:
    try:
        key = ("logsumexp", x._a.__class__, x._a.shape, x.dtype, dim, keepdim,
               _dt._default.value)
        plan = _plans.get(key)
    except (AttributeError, TypeError):
        key = plan = None
    if plan is not None:
        return plan
    check_tensor(x, "logsumexp")
    a = x._a
    dims = reduced_dims(dim, a.ndim)
    d = x.dtype if x.dtype.category >= 2 else _dt.get_default_dtype()  # ints: the default float
    if d.is_complex:
        raise not_implemented("logsumexp", d)
    plan = Plan(Out(kept_shape(a.shape, dims, keepdim), d), {"dim": dims, "keepdim": keepdim},
                device_of(x))
    return plan if key is None or not cacheable(dim) else memo(key, plan)


logsumexp_op = _op("logsumexp", _logsumexp_meta, _rk.logsumexp_cpu)


# -- gradient rules: vjp(node, grad) in Tensor methods -----------------------------------------

def restore(t, shape: tuple, dims: tuple, keepdim: bool):
    """A reduction's result (or gradient) with its reduced ``dims`` back as size-1 dims."""
    if not keepdim and len(shape):
        for d in dims:
            t = t.unsqueeze(d)
    return t


def unreduce(g, shape: tuple, dims: tuple, keepdim: bool):
    """A reduction's gradient broadcast back over the reduced ``dims`` of ``shape``. Leading
    dims (all of them for a full reduction) need no size-1 dims first: expand adds them."""
    if keepdim or dims != tuple(range(len(dims))):
        g = restore(g, shape, dims, keepdim)
    return g.expand(shape)


def _numel(shape: tuple, dims: tuple) -> int:
    return math.prod(shape[d] for d in dims)


def holds(mask) -> bool:
    """Whether a bool tensor has a True element; False on meta tensors (no values: a rule
    takes its value-free branch, whose result has the same geometry)."""
    return not mask.is_meta and mask.any().item()


def _overload(base: str):
    """torch's node name: ``<base>Backward0`` without a dim argument, ``Backward1`` with one."""
    names = (f"{base}Backward1", f"{base}Backward0")
    return lambda inputs, kw: names[kw["full"]]


def _sum_vjp(c, g):
    shape = c._meta[0][0]
    return (unreduce(g, shape, c.kw["dim"], c.kw["keepdim"]),)


def _nansum_vjp(c, g):
    x = c.args[0]
    return (unreduce(g, x.shape, c.kw["dim"], c.kw["keepdim"]).where(x.isnan().logical_not(), 0.0),)


def _mean_vjp(c, g):
    shape = c._meta[0][0]
    dims = c.kw["dim"]
    return (unreduce(g / _numel(shape, dims), shape, dims, c.kw["keepdim"]),)


def _nanmean_vjp(c, g):
    x = c.args[0]
    dims, keepdim = c.kw["dim"], c.kw["keepdim"]
    keep = x.isnan().logical_not()
    return ((restore(g, x.shape, dims, keepdim) / keep.sum(dims, keepdim=True)).where(keep, 0.0),)


# prod: g * prod / x without zeros; with zeros, products of the elements before and after each
# position (torch's prod_safe_zeros_backward, also correct for higher derivatives).

def _exclusive_prods(x, d: int):
    """prod of x along ``d`` leaving out each position in turn: the running products of
    (1, x0, ..., x[n-2]) times those of (x1, ..., x[n-1], 1) from the end."""
    n = x.shape[d]
    pos = x.new_ones(x.shape).cumsum(d)  # 1..n along d
    before = x.roll(1, d).where(pos != 1, 1.0).cumprod(d)
    after = x.roll(-1, d).where(pos != n, 1.0).flip(d).cumprod(d).flip(d)
    return before * after


def _prod_vjp(c, g):
    x, out = c.args[0], c.out
    shape = c._meta[0][0]
    if not len(shape):
        return (g,)
    dims, keepdim = c.kw["dim"], c.kw["keepdim"]
    if x.dtype is not g.dtype:
        x = x.to(g.dtype)
    g, out = restore(g, shape, dims, keepdim), restore(out, shape, dims, keepdim)
    zeros = x == 0
    if not holds(zeros):
        return (g * (out / x),)
    if len(dims) == 1:
        return (g * _exclusive_prods(x, dims[0]) if shape[dims[0]] > 1 else g,)
    if not dispatch.grad_state.enabled and zeros.sum().item() > 1:
        return (x.new_zeros(x.shape),)
    return ((g.reshape(-1) * _exclusive_prods(x.reshape(-1), 0)).reshape(shape),)


def _evenly(g, x, out):
    """torch's evenly_distribute_backward: the gradient split among the elements equal to the
    result (the nan elements when the result is nan)."""
    mask = x.isnan() if holds(out.isnan()) else x == out
    return (g / mask.sum()).where(mask, 0.0)


def _minmax_vjp(c, g):
    """amax/amin: split evenly among the ties; max()/min() as torch's
    evenly_distribute_backward (a nan result goes to the nan elements)."""
    x, out = c.args[0], c.out
    if c.kw["fn"] in ("max", "min"):
        return (_evenly(g, x, out),)
    return (_scale_by_count(g, x, out, c.kw["dim"], c.kw["keepdim"]),)


def _scale_by_count(g, x, out, dims: tuple, keepdim: bool):
    """torch's scale_grad_by_count: the gradient of a min/max split among its ties."""
    shape = x.shape
    mask = restore(out, shape, dims, keepdim) == x
    return restore(g, shape, dims, keepdim) / mask.sum(dims, keepdim=True) * mask


def _aminmax_vjp(c, g):
    x, (lo, hi) = c.args[0], c.out
    dims, keepdim = c.kw["dim"], c.kw["keepdim"]
    return (_scale_by_count(g[0], x, lo, dims, keepdim) + _scale_by_count(g[1], x, hi, dims, keepdim),)


def _amax_name(base: str):
    def name(inputs, kw):
        fn = kw["fn"]
        return fn.capitalize() + "Backward1" if fn in ("max", "min") else base
    return name


def select_back(c, g, dim: int, keepdim: bool):
    """Values picked by index (max(dim), sort, topk, median(dim), ...; the indices are the
    node's second output): the gradient goes back to the picked positions (torch's
    value_selecting_reduction_backward)."""
    shape = c._meta[0][0]
    if not len(shape):
        return g.reshape(())
    idx = c.out_at(1)
    if not keepdim:
        g, idx = g.unsqueeze(dim), idx.unsqueeze(dim)
    return g.new_zeros(shape).scatter(dim, idx, g)


def select_vjp(keepdim: bool | None = None):
    def vjp(c, g):
        d = c.kw["dim"]
        if d is None:  # median()/nanmedian() over all elements
            return (_evenly(g, c.args[0], c.out),)
        g = g[0] if isinstance(g, tuple) else g
        shape = c._meta[0][0]
        d = d + len(shape) if d < 0 else d
        return (select_back(c, g, d, c.kw["keepdim"] if keepdim is None else keepdim),)
    return vjp


# var/std (torch's var_backward, std_backward, var_mean_backward)

def _var_back(g, x, kw):
    dims = kw["dim"]
    dof = _numel(x.shape, dims) - kw["correction"]
    if kw["full"]:
        m = x.mean()
        if dof <= 0:  # 2 / dof is inf: nan where x is the mean, inf elsewhere
            return g * x.new_full(x.shape, math.inf).where(x != m, math.nan)
        return (2.0 / dof) * g * (x - m)
    g = restore(g, x.shape, dims, kw["keepdim"])
    scale = 2.0 / dof if dof else math.inf
    return scale * g * (x - x.mean(dims, keepdim=True))


def _std_grad(g, out):
    return (g / (out * 2)).where(out != 0, 0.0)


def _mean_back(g, x, kw):
    dims = kw["dim"]
    return unreduce(g / _numel(x.shape, dims), x.shape, dims, kw["keepdim"])


def _var_vjp(c, g):
    return (_var_back(g, c.args[0], c.kw),)


def _std_vjp(c, g):
    return (_var_back(_std_grad(g, c.out), c.args[0], c.kw),)


def _var_mean_vjp(c, g):
    x = c.args[0]
    return (_var_back(g[0], x, c.kw) + _mean_back(g[1], x, c.kw),)


def _std_mean_vjp(c, g):
    x = c.args[0]
    return (_var_back(_std_grad(g[0], c.out[0]), x, c.kw) + _mean_back(g[1], x, c.kw),)


# vector norms (torch's norm_backward)

def _norm_back(g, x, p: float, out, dims: tuple, keepdim: bool):
    if p == 0:
        return None
    g, out = restore(g, x.shape, dims, keepdim), restore(out, x.shape, dims, keepdim)
    if p == 1:
        return x.sgn() * g
    if p == 2:
        return g * (x / out).where(out != 0, 0.0)
    if math.isinf(p):  # the gradient of amax(abs(x)), split among ties and nans
        ax = x.abs()
        mask = (ax == out) | ax.isnan()
        return x.sgn() * (g / mask.sum(dims, keepdim=True) * mask)
    if p < 1:
        scaled = x.sgn() * x.abs().pow(p - 1).where(x != 0, 0.0)
        return scaled * g * out.pow(1 - p)
    scaled = x.sgn() * x.abs().pow(p - 1) if p < 2 else x * x.abs().pow(p - 2)
    return scaled * (g / out.pow(p - 1)).where(out != 0, 0.0)


def _norm_vjp(c, g):
    kw = c.kw
    return (_norm_back(g, c.args[0], float(kw["ord"]), c.out, kw["dim"], kw["keepdim"]),)


def _logsumexp_vjp(c, g):
    x = c.args[0]
    dims, keepdim = c.kw["dim"], c.kw["keepdim"]
    return (restore(g, x.shape, dims, keepdim) * (x - restore(c.out, x.shape, dims, keepdim)).exp(),)


defvjp(sum_op, _sum_vjp, "", name=_overload("Sum"))
defvjp(mean_op, _mean_vjp, "", name=_overload("Mean"))
defvjp(nansum_op, _nansum_vjp, "0")
defvjp(nanmean_op, _nanmean_vjp, "0", name="DivBackward0")  # torch: nansum(x) / count
defvjp(prod_op, holomorphic(_prod_vjp), "0o", name=_overload("Prod"))
defvjp(amax_op, _minmax_vjp, "0o", name=_amax_name("AmaxBackward0"))
defvjp(amin_op, _minmax_vjp, "0o", name=_amax_name("AminBackward0"))
defvjp(aminmax_op, _aminmax_vjp, "0o")
defvjp(max_op, select_vjp(), "o")
defvjp(min_op, select_vjp(), "o")
defvjp(var_op, _var_vjp, "0")
defvjp(std_op, _std_vjp, "0o")
defvjp(var_mean_op, _var_mean_vjp, "0")
defvjp(std_mean_op, _std_mean_vjp, "0o")
defvjp(norm_op, _norm_vjp, "0o")
defvjp(logsumexp_op, _logsumexp_vjp, "0o")
