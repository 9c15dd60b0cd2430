"""Reductions, scans and sort-like ops.

A reduction is ``map`` (per element, before the combine; default identity), ``combine`` (an
associative binary function over the accumulator dtype), ``identity`` (a number, or
``"lowest"``/``"highest"`` resolved per dtype) and ``post(acc, n)`` (applied to each result,
``n`` = number of reduced elements). ``extra["rule"]`` names the dtype rule the ops layer
applies; ``extra["wide"]`` accumulates float32 block sums in float64 (torch's accuracy).
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


# -- reductions ----------------------------------------------------------------------------

sum_op = reduction("sum", _add, 0, extra={"rule": SUM, "wide": True})
nansum_op = reduction("nansum", _add, 0, extra={"rule": SUM, "wide": True,
                                                "map": lambda x: x if x == x else 0})
mean_op = reduction("mean", _add, 0, extra={"rule": FLOAT, "wide": True, "post": _mean_post})
prod_op = reduction("prod", lambda a, b: a * b, 1, extra={"rule": SUM})
amax_op = reduction("amax", lambda a, b: maximum(a, b), "lowest", extra={"rule": SAME})
amin_op = reduction("amin", lambda a, b: minimum(a, b), "highest", extra={"rule": SAME})
all_op = reduction("all", lambda a, b: a & b, True, differentiable=False,
                   extra={"rule": BOOL, "map": lambda x: x != 0})
any_op = reduction("any", lambda a, b: a | b, False, differentiable=False,
                   extra={"rule": BOOL, "map": lambda x: x != 0})
count_nonzero_op = reduction("count_nonzero", _add, 0, differentiable=False,
                             extra={"rule": INT64, "map": lambda x: x != 0})
# Vector norms by order (ord 0 and general p are composed in ops/reduction.py).
norm_l1_op = reduction("norm_l1", _add, 0, extra={"rule": FLOAT, "wide": True,
                                                  "map": lambda x: abs(x)})
norm_l2_op = reduction("norm_l2", _add, 0, extra={"rule": FLOAT, "wide": True,
                                                  "map": lambda x: x * x,
                                                  "post": lambda acc, n: math.sqrt(acc)})
norm_linf_op = reduction("norm_linf", lambda a, b: maximum(a, b), 0, extra={"rule": FLOAT, "map": lambda x: abs(x)})
norm_lninf_op = reduction("norm_lninf", lambda a, b: minimum(a, b), "highest", extra={"rule": FLOAT,
                                                                   "map": lambda x: abs(x)})
# Sum of squares: the second pass of var/std (over x - mean).
sumsq_op = reduction("sumsq", _add, 0, extra={"rule": FLOAT, "wide": True, "map": lambda x: x * x})


def _scan(name: str, combine, identity, **kw) -> OpDef:
    return register(OpDef(name, "scan", combine=combine, identity=identity, **kw))


cumsum_op = _scan("cumsum", _add, 0, extra={"rule": SUM, "wide": True})
cumprod_op = _scan("cumprod", lambda a, b: a * b, 1, extra={"rule": SUM, "wide": True})
logcumsumexp_op = _scan("logcumsumexp", logaddexp, -math.inf,
                        kernel_name="logcumsumexp_out_cpu", extra={"rule": FLOAT, "wide": True})
# Running max/min with indices: ``take(x, acc)`` says when x replaces the running value
# (torch: ties and nan take the later index).
cummax_op = _scan("cummax", lambda a, b: maximum(a, b), "lowest", extra={"rule": SAME,
                                                      "take": lambda x, acc: x != x or x >= acc})
cummin_op = _scan("cummin", lambda a, b: minimum(a, b), "highest", extra={"rule": SAME,
                                                       "take": lambda x, acc: x != x or x <= acc})

# -- value-and-index reductions, composites and extern kernels -------------------------------
# argmax/max(dim) reuse amax's combine: the row kernel reduces with it, then finds the first
# index holding the result.
argmax_op = extern("argmax", differentiable=False, extra={"select": "amax"})
argmin_op = extern("argmin", differentiable=False, extra={"select": "amin"})
max_op = extern("max", extra={"select": "amax"})
min_op = extern("min", extra={"select": "amin"})
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


def unreduce(g, shape: tuple, dims: tuple, keepdim: bool):
    """A reduction's gradient broadcast back over the reduced ``dims`` of ``shape``."""
    if not keepdim and len(shape):
        for d in dims:
            g = g.unsqueeze(d)
    return g.expand(shape)


def _sum_vjp(c, g):
    shape = c._meta[0][0]
    return (unreduce(g, shape, c.kw["dim"], c.kw["keepdim"]),)


def _mean_vjp(c, g):
    shape = c._meta[0][0]
    dims = c.kw["dim"]
    n = 1
    for d in dims:
        n *= shape[d]
    return (unreduce(g / n, shape, dims, c.kw["keepdim"]),)


defvjp(sum_op, _sum_vjp, "", name="SumBackward0")
defvjp(mean_op, _mean_vjp, "", name="MeanBackward0")
