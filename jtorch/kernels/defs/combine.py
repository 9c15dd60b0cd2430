"""The scalar parts of reductions and scans: ``combine``, ``map``, ``post`` and ``take``.

A reduction is ``map`` (per element, before the combine; default identity), ``combine`` (an
associative binary function over the accumulator dtype), an identity and ``post(acc, n)``
(applied to each result, ``n`` = number of reduced elements); scans reuse them over a running
accumulator, and ``take(x, acc)`` (cummax/cummin) says when x replaces the running value.
The generated loops (``kernels/cpu/reduce.py``, ``scan.py``) inline these functions, and their
on-disk cache is keyed by a fingerprint of the file that defines them: they live here, apart
from the records and their meta and gradient rules (``reduction.py``, ``scan.py``), so that
editing a rule does not invalidate the compiled kernels.

``maximum``/``minimum`` propagate nan and compile to ``llvm.maximum``/``llvm.minimum`` for
floats, which LLVM vectorises as reductions (a compare-and-select with a nan test does not).
Combine functions call them through a wrapper so that jitted code picks up the overload.
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


# -- combine ---------------------------------------------------------------------------------

def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def larger(a, b):
    return maximum(a, b)


def smaller(a, b):
    return minimum(a, b)


def both(a, b):
    return a & b


def either(a, b):
    return a | b


# -- map -------------------------------------------------------------------------------------

def nan_as_zero(x):
    return x if x == x else 0


def nonzero(x):
    return x != 0


def magnitude(x):
    return abs(x)


def square(x):
    return x * x


# -- post ------------------------------------------------------------------------------------

def mean_post(acc, n):
    return acc / n


def sqrt_post(acc, n):
    return math.sqrt(acc)


# -- take (cummax, cummin: ties and nan take the later index, as torch) ----------------------

def take_max(x, acc):
    return x != x or x >= acc


def take_min(x, acc):
    return x != x or x <= acc
