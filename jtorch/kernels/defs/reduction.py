"""Reductions, scans and sort-like ops.

A reduction is ``map`` (per element, before the combine; default identity), ``combine`` (an
associative binary function over the accumulator dtype), ``identity`` (a number, or
``"lowest"``/``"highest"`` resolved per dtype) and ``post(acc, n)`` (applied to each result,
``n`` = number of reduced elements). ``dtype_rule`` names the dtype rule of the result;
``wide`` accumulates float32 block sums in float64 (torch's accuracy).
Scans reuse the same fields over a running accumulator. Sort, top-k, median, unique and the
fused softmax rows are extern: hand-written kernels in ``kernels/cpu``.

``maximum``/``minimum`` propagate nan and compile to ``llvm.maximum``/``llvm.minimum`` for
floats, which LLVM vectorises as reductions (a compare-and-select with a nan test does not).
Combine functions call them through a lambda so that jitted code picks up the overload.
"""
# ruff: noqa: PLR0124, FURB136  (x != x is the nan test that compiles for every dtype;
# the conditional forms keep nan semantics that min()/max() would change)

from __future__ import annotations

import math

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, overload

from .. import fastmath as fm
from ..registry import OpDef, extern, reduction, register

# Dtype rules (see ops/reduction.py): how the input dtype and ``dtype=`` give the result.
SUM = "sum"        # ints and bool -> int64, floats keep their dtype
SAME = "same"      # the input dtype (amax, amin)
FLOAT = "float"    # floating/complex only (mean): ints raise
BOOL = "bool"      # bool result; uint8 stays uint8 (all, any)
INT64 = "int64"    # always int64 (count_nonzero)


def _float_binary(llvm_name: str):
    def typer(typingctx, a, b):
        if not (isinstance(a, types.Float) and a == b):
            return None

        def codegen(context, builder, sig, args):
            lty = args[0].type
            suffix = "f32" if lty == ir.FloatType() else "f64"
            fnty = ir.FunctionType(lty, [lty, lty])
            fn = cgutils.get_or_insert_function(builder.module, fnty, f"{llvm_name}.{suffix}")
            return builder.call(fn, args)

        return a(a, b), codegen

    return typer


_llvm_maximum = intrinsic(target="generic")(_float_binary("llvm.maximum"))
_llvm_minimum = intrinsic(target="generic")(_float_binary("llvm.minimum"))


def maximum(a, b):
    """The larger of a and b; nan if either is nan."""
    return a if (a != a or a >= b) else b


def minimum(a, b):
    """The smaller of a and b; nan if either is nan."""
    return a if (a != a or a <= b) else b


@overload(maximum, target="generic", inline="always")
def _ov_maximum(a, b):
    if isinstance(a, types.Float) and a == b:
        return lambda a, b: _llvm_maximum(a, b)
    return lambda a, b: a if a >= b else b


@overload(minimum, target="generic", inline="always")
def _ov_minimum(a, b):
    if isinstance(a, types.Float) and a == b:
        return lambda a, b: _llvm_minimum(a, b)
    return lambda a, b: a if a <= b else b


def logaddexp(a, b):
    """log(exp(a) + exp(b)) without overflow; equal infinities return a (torch's helper)."""
    lo = a if a < b else b
    hi = b if a < b else a
    if a != a or b != b:
        return a + b
    if lo != hi or abs(lo) < math.inf:
        return hi + fm.log1p(fm.exp(lo - hi))
    return a


def _add(a, b):
    return a + b


def _mean_post(acc, n):
    return acc / n


def _sqrt_post(acc, n):
    return math.sqrt(acc)



def _take_max(x, acc):
    return x != x or x >= acc


def _take_min(x, acc):
    return x != x or x <= acc


# -- reductions ----------------------------------------------------------------------------

sum_op = reduction("sum", _add, 0, dtype_rule=SUM, wide=True)
nansum_op = reduction("nansum", _add, 0, dtype_rule=SUM, wide=True,
                                                map=lambda x: x if x == x else 0)
mean_op = reduction("mean", _add, 0, dtype_rule=FLOAT, wide=True, post=_mean_post)
prod_op = reduction("prod", lambda a, b: a * b, 1, dtype_rule=SUM)
amax_op = reduction("amax", lambda a, b: maximum(a, b), "lowest", dtype_rule=SAME)
amin_op = reduction("amin", lambda a, b: minimum(a, b), "highest", dtype_rule=SAME)
all_op = reduction("all", lambda a, b: a & b, True, differentiable=False,
                   dtype_rule=BOOL, map=lambda x: x != 0)
any_op = reduction("any", lambda a, b: a | b, False, differentiable=False,
                   dtype_rule=BOOL, map=lambda x: x != 0)
count_nonzero_op = reduction("count_nonzero", _add, 0, differentiable=False,
                             dtype_rule=INT64, map=lambda x: x != 0)
# Vector norms by order (ord 0 and general p are composed in ops/reduction.py).
norm_l1_op = reduction("norm_l1", _add, 0, dtype_rule=FLOAT, wide=True,
                                                  map=lambda x: abs(x))
norm_l2_op = reduction("norm_l2", _add, 0, dtype_rule=FLOAT, wide=True,
                                                  map=lambda x: x * x,
                                                  post=_sqrt_post)
norm_linf_op = reduction("norm_linf", lambda a, b: maximum(a, b), 0, dtype_rule=FLOAT, map=lambda x: abs(x))
norm_lninf_op = reduction("norm_lninf", lambda a, b: minimum(a, b), "highest", dtype_rule=FLOAT,
                                                                   map=lambda x: abs(x))
# Sum of squares: the second pass of var/std (over x - mean).
sumsq_op = reduction("sumsq", _add, 0, dtype_rule=FLOAT, wide=True, map=lambda x: x * x)


def _scan(name: str, combine, identity, **kw) -> OpDef:
    return register(OpDef(name, "scan", combine=combine, identity=identity, **kw))


cumsum_op = _scan("cumsum", _add, 0, dtype_rule=SUM, wide=True)
cumprod_op = _scan("cumprod", lambda a, b: a * b, 1, dtype_rule=SUM, wide=True)
logcumsumexp_op = _scan("logcumsumexp", logaddexp, -math.inf,
                        kernel_name="logcumsumexp_out_cpu", dtype_rule=FLOAT, wide=True)
# Running max/min with indices: ``take(x, acc)`` says when x replaces the running value
# (torch: ties and nan take the later index).
cummax_op = _scan("cummax", lambda a, b: maximum(a, b), "lowest", dtype_rule=SAME,
                                                      take=_take_max)
cummin_op = _scan("cummin", lambda a, b: minimum(a, b), "highest", dtype_rule=SAME,
                                                       take=_take_min)

# -- value-and-index reductions, composites and extern kernels -------------------------------
# argmax/max(dim) reuse amax's combine: the row kernel reduces with it, then finds the first
# index holding the result.
argmax_op = extern("argmax", differentiable=False, select="amax")
argmin_op = extern("argmin", differentiable=False, select="amin")
max_op = extern("max", select="amax")
min_op = extern("min", select="amin")
aminmax_op = extern("aminmax")
var_op = extern("var")
std_op = extern("std")
var_mean_op = extern("var_mean")
std_mean_op = extern("std_mean")
nanmean_op = extern("nanmean")
norm_op = extern("norm")
logsumexp_op = extern("logsumexp")
softmax_op = extern("softmax", kernel_name="softmax_kernel_impl")
log_softmax_op = extern("log_softmax", kernel_name="log_softmax_kernel_impl")
# their gradients (torch's _softmax_backward_data / _log_softmax_backward_data): (g, y) -> dx
softmax_backward_op = extern("_softmax_backward_data")
log_softmax_backward_op = extern("_log_softmax_backward_data")
sort_op = extern("sort")
argsort_op = extern("argsort", differentiable=False)
topk_op = extern("topk")
kthvalue_op = extern("kthvalue")
median_op = extern("median")
nanmedian_op = extern("nanmedian")
mode_op = extern("mode")
unique_op = extern("unique", differentiable=False)
unique_consecutive_op = extern("unique_consecutive", differentiable=False)


# -- gradient rules: vjp(node, grad) in jtorch ops -------------------------------------------

import jtorch as J  # noqa: E402  (the rules run after the package is imported)

from ..registry import defvjp  # noqa: E402


def restore(t, shape: tuple, dims: tuple, keepdim: bool):
    """A reduction's result (or gradient) with its reduced ``dims`` back as size-1 dims."""
    if not keepdim and len(shape):
        for d in dims:
            t = t.unsqueeze(d)
    return t


def unreduce(g, shape: tuple, dims: tuple, keepdim: bool):
    """A reduction's gradient broadcast back over the reduced ``dims`` of ``shape``."""
    return restore(g, shape, dims, keepdim).expand(shape)


def _numel(shape: tuple, dims: tuple) -> int:
    return math.prod(shape[d] for d in dims)


def _overload(base: str):
    """torch's node name: ``<base>Backward0`` without a dim argument, ``Backward1`` with one."""
    names = (f"{base}Backward1", f"{base}Backward0")
    return lambda inputs, kw: names[kw["full"]]


def _sum_vjp(c, g):
    shape = c._meta[0][0]
    return (unreduce(g, shape, c.kw["dim"], c.kw["keepdim"]),)


def _nansum_vjp(c, g):
    x = c.args[0]
    return (J.where(J.isnan(x), 0.0, unreduce(g, x.shape, c.kw["dim"], c.kw["keepdim"])),)


def _mean_vjp(c, g):
    shape = c._meta[0][0]
    dims = c.kw["dim"]
    return (unreduce(g / _numel(shape, dims), shape, dims, c.kw["keepdim"]),)


def _nanmean_vjp(c, g):
    x = c.args[0]
    dims, keepdim = c.kw["dim"], c.kw["keepdim"]
    keep = J.logical_not(J.isnan(x))
    return (J.where(keep, restore(g, x.shape, dims, keepdim) / keep.sum(dims, keepdim=True), 0.0),)


# prod: g * prod / x without zeros; with zeros, products of the elements before and after each
# position (torch's prod_safe_zeros_backward, also correct for higher derivatives).

def _exclusive_prods(x, d: int):
    """prod of x along ``d`` leaving out each position in turn."""
    n = x.shape[d]
    ones = J.ones(x.shape[:d] + (1,) + x.shape[d + 1:], dtype=x.dtype)
    before = J.cat([ones, x.narrow(d, 0, n - 1)], d).cumprod(d)
    after = J.cat([ones, x.narrow(d, 1, n - 1).flip(d)], d).cumprod(d).flip(d)
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
    if not zeros.any().item():
        return (g * (out / x),)
    if len(dims) == 1:
        return (g * _exclusive_prods(x, dims[0]) if shape[dims[0]] > 1 else g,)
    if not J.is_grad_enabled() and zeros.sum().item() > 1:
        return (J.zeros_like(x),)
    return ((g.reshape(-1) * _exclusive_prods(x.reshape(-1), 0)).reshape(shape),)


def _minmax_vjp(c, g):
    """amax/amin: split evenly among the ties; max()/min() as torch's
    evenly_distribute_backward (a nan result goes to the nan elements)."""
    x, out = c.args[0], c.out
    if c.kw["fn"] in ("max", "min"):
        return (_evenly(g, x, out),)
    shape = x.shape
    dims, keepdim = c.kw["dim"], c.kw["keepdim"]
    mask = restore(out, shape, dims, keepdim) == x
    return (restore(g, shape, dims, keepdim) / mask.sum(dims, keepdim=True) * mask,)


def _evenly(g, x, out):
    mask = J.isnan(x) if J.isnan(out).item() else x == out
    return J.where(mask, g / mask.sum(), 0.0)


def _amax_name(base: str):
    def name(inputs, kw):
        fn = kw["fn"]
        if fn in ("max", "min"):
            return fn.capitalize() + "Backward1"
        return "AminmaxBackward0" if fn == "aminmax" else base
    return name


def _select_back(c, g, dim: int, keepdim: bool):
    """Values picked by index (max(dim), sort, topk, median(dim), ...): the gradient goes back
    to the picked positions (torch's value_selecting_reduction_backward)."""
    shape = c._meta[0][0]
    if not len(shape):
        return g.reshape(())
    idx = c.kw["indices"]
    if not keepdim:
        g, idx = g.unsqueeze(dim), idx.unsqueeze(dim)
    return J.zeros(shape, dtype=g.dtype).scatter(dim, idx, g)


def _select_vjp(keepdim: bool | None = None):
    def vjp(c, g):
        d = c.kw["dim"]
        if d is None:  # median()/nanmedian() over all elements
            return (_evenly(g, c.args[0], c.out),)
        g = g[0] if isinstance(g, tuple) else g
        shape = c._meta[0][0]
        d = d + len(shape) if d < 0 else d
        return (_select_back(c, g, d, c.kw["keepdim"] if keepdim is None else keepdim),)
    return vjp


def _median_name(base: str):
    names = (f"{base}Backward1", f"{base}Backward0")
    return lambda inputs, kw: names[kw["dim"] is None]


def _cummaxmin_vjp(c, g):
    shape, dtype = c._meta[0]
    g = g[0]
    if not len(shape) or not g.numel():
        return (g,)
    return (J.zeros(shape, dtype=g.dtype).scatter_add(c.kw["dim"], c.kw["indices"], g),)


# var/std (torch's var_backward, std_backward, var_mean_backward)

def _var_back(g, x, kw):
    dims = kw["dim"]
    dof = _numel(x.shape, dims) - kw["correction"]
    if kw["full"]:
        m = x.mean()
        if dof <= 0:  # 2 / dof is inf: nan where x is the mean, inf elsewhere
            return g * J.where(x == m, math.nan, math.inf)
        return (2.0 / dof) * g * (x - m)
    g = restore(g, x.shape, dims, kw["keepdim"])
    scale = 2.0 / dof if dof else math.inf
    return scale * g * (x - x.mean(dims, keepdim=True))


def _std_grad(g, out):
    return J.where(out == 0, 0.0, g / (out * 2))


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
        return g * J.where(out == 0, 0.0, x / out)
    if math.isinf(p):  # the gradient of amax(abs(x)), split among ties and nans
        ax = x.abs()
        mask = (ax == out) | J.isnan(ax)
        return x.sgn() * (g / mask.sum(dims, keepdim=True) * mask)
    if p < 1:
        scaled = x.sgn() * J.where(x == 0, 0.0, x.abs().pow(p - 1))
        return scaled * g * out.pow(1 - p)
    scaled = x.sgn() * x.abs().pow(p - 1) if p < 2 else x * x.abs().pow(p - 2)
    return scaled * J.where(out == 0, 0.0, g / out.pow(p - 1))


def _norm_vjp(p=None):
    def vjp(c, g):
        kw = c.kw
        return (_norm_back(g, c.args[0], float(kw["ord"]) if p is None else p, c.out, kw["dim"],
                           kw["keepdim"]),)
    return vjp


def _sumsq_vjp(c, g):
    x = c.args[0]
    return (2 * x * unreduce(g, x.shape, c.kw["dim"], c.kw["keepdim"]),)


# logsumexp and the softmax family

def _logsumexp_vjp(c, g):
    x = c.args[0]
    dims, keepdim = c.kw["dim"], c.kw["keepdim"]
    return (restore(g, x.shape, dims, keepdim) * (x - restore(c.out, x.shape, dims, keepdim)).exp(),)


def _softmax_vjp(c, g):
    return (J.ops.reduction.softmax_backward(g, c.out, c.kw["dim"], False),)


def _log_softmax_vjp(c, g):
    return (J.ops.reduction.softmax_backward(g, c.out, c.kw["dim"], True),)


def _softmax_backward_vjp(c, gg):
    """Of dx = y * (g - sum(g * y)): d/dg is the same rule applied to gg; d/dy is
    gg * (g - sum(g * y)) - g * sum(gg * y)."""
    g, y = c.args
    d = c.kw["dim"]
    gg_g = J.ops.reduction.softmax_backward(gg, y, d, False) if c.needs[0] else None
    gg_y = None
    if c.needs[1]:
        gg_y = gg * (g - (g * y).sum(d, keepdim=True)) - g * (gg * y).sum(d, keepdim=True)
    return gg_g, gg_y


def _log_softmax_backward_vjp(c, gg):
    """Of dx = g - exp(y) * sum(g): d/dg is gg - sum(gg * exp(y)); d/dy is
    -gg * exp(y) * sum(g)."""
    g, y = c.args
    d = c.kw["dim"]
    e = y.exp()
    gg_g = gg - (gg * e).sum(d, keepdim=True) if c.needs[0] else None
    gg_y = -(gg * e) * g.sum(d, keepdim=True) if c.needs[1] else None
    return gg_g, gg_y


# scans

def _rev_cumsum(w, d: int):
    return w.flip(d).cumsum(d).flip(d)


def _cumsum_vjp(c, g):
    shape, dtype = c._meta[0]
    d = c.kw["dim"]
    if g.dtype is not dtype:
        g = g.to(dtype)
    if g.numel() <= 1 or shape[d] == 1:
        return (g,)
    return (_rev_cumsum(g, d),)


def _cumprod_vjp(c, g):
    """torch's cumprod_backward: sum_{j>=k} g_j y_j / x_k without zeros; with zeros an O(n)
    masked form (first-order only) or, when the gradient itself is differentiated, the
    O(n^2) products that leave out each position."""
    x = c.args[0]
    d = c.kw["dim"]
    if x.numel() <= 1 or x.shape[d] == 1:
        return (g,)
    g = g.to(x.dtype) if g.dtype is not x.dtype else g
    y = c.out
    y = y.to(x.dtype) if y.dtype is not x.dtype else y
    zero = x == 0
    if not zero.any().item():
        return (_rev_cumsum(y * g, d) / x,)
    if J.is_grad_enabled():
        return (_cumprod_back_quadratic(g, x, d),)
    nz = zero.cumsum(d)
    before = nz == 0                  # positions before the first zero
    first = zero & (nz == 1)          # the first zero
    through = J.where(first, 1.0, x).cumprod(d)  # products skipping the first zero
    g_before = _rev_cumsum(y * g, d) / J.where(before, x, 1.0)
    g_first = _rev_cumsum(g * through, d)
    return (J.where(before, g_before, J.where(first, g_first, 0.0)),)


def _cumprod_back_quadratic(g, x, d: int):
    n = x.shape[d]
    xm, gm = x.movedim(d, -1), g.movedim(d, -1)
    eye = J.eye(n, dtype=J.bool)
    # row k: the running products of x with x_k left out; only columns j >= k reach y_j
    left_out = J.where(eye, 1.0, xm.unsqueeze(-2)).cumprod(-1)
    upper = J.ones((n, n), dtype=J.bool).triu()
    res = J.where(upper, left_out * gm.unsqueeze(-2), 0.0).sum(-1)
    return res.movedim(-1, d)


def _logcumsumexp_vjp(c, g):
    """torch's logcumsumexp_backward: positive and negative parts of g in log space."""
    x, out = c.args[0], c.out
    d = c.kw["dim"]
    if g.dim() == 0 or g.numel() == 0:
        return (g,)
    lowest = J.finfo(g.dtype).min
    log_abs = g.abs().log()
    pos = J.where(g > 0, log_abs, lowest)
    neg = J.where(g < 0, log_abs, lowest)

    def rev(t):
        return t.flip(d).logcumsumexp(d).flip(d)

    return ((rev(pos - out) + x).exp() - (rev(neg - out) + x).exp(),)


defvjp(sum_op, _sum_vjp, "", name=_overload("Sum"))
defvjp(mean_op, _mean_vjp, "", name=_overload("Mean"))
defvjp(nansum_op, _nansum_vjp, "0")
defvjp(nanmean_op, _nanmean_vjp, "0", name="DivBackward0")  # torch: nansum(x) / count
defvjp(prod_op, _prod_vjp, "0o", name=_overload("Prod"))
defvjp(amax_op, _minmax_vjp, "0o", name=_amax_name("AmaxBackward0"))
defvjp(amin_op, _minmax_vjp, "0o", name=_amax_name("AminBackward0"))
defvjp(max_op, _select_vjp(), "")
defvjp(min_op, _select_vjp(), "")
defvjp(var_op, _var_vjp, "0")
defvjp(std_op, _std_vjp, "0o")
defvjp(var_mean_op, _var_mean_vjp, "0")
defvjp(std_mean_op, _std_mean_vjp, "0o")
defvjp(norm_op, _norm_vjp(), "0o", name="LinalgVectorNormBackward0")
defvjp(norm_l1_op, _norm_vjp(1.0), "0o")
defvjp(norm_l2_op, _norm_vjp(2.0), "0o")
defvjp(norm_linf_op, _norm_vjp(math.inf), "0o")
defvjp(norm_lninf_op, _norm_vjp(-math.inf), "0o")
defvjp(sumsq_op, _sumsq_vjp, "0")
defvjp(logsumexp_op, _logsumexp_vjp, "0o")
defvjp(softmax_op, _softmax_vjp, "o")
defvjp(log_softmax_op, _log_softmax_vjp, "o")
defvjp(softmax_backward_op, _softmax_backward_vjp, "01", name="SoftmaxBackwardDataBackward0")
defvjp(log_softmax_backward_op, _log_softmax_backward_vjp, "01",
       name="LogSoftmaxBackwardDataBackward0")
defvjp(cumsum_op, _cumsum_vjp, "")
defvjp(cumprod_op, _cumprod_vjp, "0o")
defvjp(logcumsumexp_op, _logcumsumexp_vjp, "0o")
defvjp(cummax_op, _cummaxmin_vjp, "")
defvjp(cummin_op, _cummaxmin_vjp, "")
defvjp(sort_op, _select_vjp(keepdim=True), "")
defvjp(topk_op, _select_vjp(keepdim=True), "")
defvjp(kthvalue_op, _select_vjp(), "")
defvjp(median_op, _select_vjp(), "0o", name=_median_name("Median"))
defvjp(nanmedian_op, _select_vjp(), "0o", name=_median_name("Nanmedian"))
defvjp(mode_op, _select_vjp(), "")
