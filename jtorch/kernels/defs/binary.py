"""Binary and ternary pointwise ops (arithmetic, comparisons, logical, bitwise, min/max)."""

import math

import numpy as np
from numba import njit

from .. import fastmath as fm
from ..registry import (ALL_CATS, COMPARE, INT_CATS, INT_TO_FLOAT, LOGICAL, REAL_CATS, binary,
                        ternary)

_REAL_NOBOOL = frozenset({1, 2})
_FLOAT = frozenset({2})


def _sub_check(common, args):
    if common.category == 0:
        both = all(getattr(a, "dtype", None) is common for a in args)
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead." if both else
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead."
        )


def _same(f):
    """Scalar functions that are valid for complex numbers as written."""
    return {"complex_scalar": f}


add_op = binary("add", lambda x, y: x + y, **_same(lambda x, y: x + y))
sub_op = binary("sub", lambda x, y: x - y, extra={"check": _sub_check},
                **_same(lambda x, y: x - y))
mul_op = binary("mul", lambda x, y: x * y, **_same(lambda x, y: x * y))
div_op = binary("div", lambda x, y: x / y, rule=INT_TO_FLOAT, **_same(lambda x, y: x / y))
div_trunc_op = binary("div_trunc", lambda x, y: np.trunc(x / y), cats=REAL_CATS, int_div=True,
                      int_scalar=lambda x, y: _int_div_trunc(x, y), kernel_name="div_trunc_cpu")
# Integer variants divide exactly; float variants follow torch's formulas.
floor_divide_op = binary("floor_divide", lambda x, y: x // y, cats=REAL_CATS, int_div=True,
                         kernel_name="div_floor_cpu")
remainder_op = binary("remainder", lambda x, y: x % y, cats=REAL_CATS, int_div=True)
fmod_op = binary("fmod", lambda x, y: math.fmod(x, y), cats=REAL_CATS, int_div=True,
                 int_scalar=lambda x, y: _int_fmod(x, y))
pow_op = binary("pow", lambda x, y: fm.pow(x, y), cats=REAL_CATS, int_scalar=lambda x, y: _ipow(x, y),
                complex_scalar=lambda x, y: x ** y)
atan2_op = binary("atan2", lambda y, x: fm.atan2(y, x), rule=INT_TO_FLOAT)
hypot_op = binary("hypot", lambda x, y: math.hypot(x, y), cats=_FLOAT)
copysign_op = binary("copysign", lambda x, y: math.copysign(x, y), rule=INT_TO_FLOAT)
maximum_op = binary("maximum", lambda x, y: x if x != x or x > y else y, cats=REAL_CATS)
minimum_op = binary("minimum", lambda x, y: x if x != x or x < y else y, cats=REAL_CATS)
fmax_op = binary("fmax", lambda x, y: y if x != x or y > x else x, cats=REAL_CATS)
fmin_op = binary("fmin", lambda x, y: y if x != x or y < x else x, cats=REAL_CATS)
clamp_min_op = binary("clamp_min", lambda x, lo: x if x != x or x > lo else lo, cats=REAL_CATS,
                      kernel_name="clamp_cpu")
clamp_max_op = binary("clamp_max", lambda x, hi: x if x != x or x < hi else hi, cats=REAL_CATS,
                      kernel_name="clamp_cpu")
clamp_op = ternary("clamp", lambda x, lo, hi: x if x != x else (hi if lo > hi else (
    lo if x < lo else hi if x > hi else x)), cats=REAL_CATS)
lerp_op = ternary("lerp", lambda s, e, w: s + w * (e - s) if abs(w) < 0.5 else
                  e - (e - s) * (1 - w), cats=_FLOAT)

eq_op = binary("eq", lambda x, y: x == y, rule=COMPARE, differentiable=False,
               **_same(lambda x, y: x == y))
ne_op = binary("ne", lambda x, y: x != y, rule=COMPARE, differentiable=False,
               **_same(lambda x, y: x != y))
lt_op = binary("lt", lambda x, y: x < y, rule=COMPARE, differentiable=False)
le_op = binary("le", lambda x, y: x <= y, rule=COMPARE, differentiable=False)
gt_op = binary("gt", lambda x, y: x > y, rule=COMPARE, differentiable=False)
ge_op = binary("ge", lambda x, y: x >= y, rule=COMPARE, differentiable=False)
isclose_op = binary("isclose", lambda x, y, rtol, atol, equal_nan: (x == y) or (
    equal_nan and x != x and y != y) or (abs(x - y) <= atol + rtol * abs(y)), rule=COMPARE,
    nparams=3, differentiable=False)

logical_and_op = binary("logical_and", lambda x, y: x and y, rule=LOGICAL, differentiable=False)
logical_or_op = binary("logical_or", lambda x, y: x or y, rule=LOGICAL, differentiable=False)
logical_xor_op = binary("logical_xor", lambda x, y: x != y, rule=LOGICAL, differentiable=False)
bitwise_and_op = binary("bitwise_and", lambda x, y: x & y, cats=INT_CATS, differentiable=False)
bitwise_or_op = binary("bitwise_or", lambda x, y: x | y, cats=INT_CATS, differentiable=False)
bitwise_xor_op = binary("bitwise_xor", lambda x, y: x ^ y, cats=INT_CATS, differentiable=False)
# torch shifts by >= the bit width give 0 (or -1 for negative right shifts), not UB.
bitwise_left_shift_op = binary("bitwise_left_shift", lambda x, y: x << y if 0 <= y < 64 else x * 0,
                               cats=frozenset({1}), differentiable=False,
                               kernel_name="lshift_cpu")
bitwise_right_shift_op = binary("bitwise_right_shift", lambda x, y: x >> y if 0 <= y < 64 else (
    x * 0 - 1 if x < 0 else x * 0), cats=frozenset({1}), differentiable=False,
    kernel_name="rshift_cpu")
# The condition is the trailing parameter, so it takes no part in type promotion.
where_op = ternary("where", lambda x, y, c: x if c else y, cats=ALL_CATS, nparams=1,
                   complex_scalar=lambda x, y, c: x if c else y, differentiable=True)


@njit(inline="always")
def _int_div_trunc(x, y):
    q = x // y
    return q + 1 if q < 0 and q * y != x else q


@njit(inline="always")
def _int_fmod(x, y):
    return x - _int_div_trunc(x, y) * y


@njit(inline="always")
def _ipow(x, y):
    r = x * 0 + 1
    if y < 0:
        return r if x == 1 else (r if y % 2 == 0 else -r) if x == -1 else r * 0
    b = x
    e = y
    while e > 0:
        if e & 1:
            r = r * b
        b = b * b
        e >>= 1
    return r
