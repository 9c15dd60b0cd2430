"""Binary and ternary pointwise ops (arithmetic, comparisons, logical, bitwise, min/max)."""
# ruff: noqa: PLR0124, FURB136  (x != x is the nan test that compiles for every dtype;
# the conditional forms keep nan semantics that min()/max() would change)

import cmath
import math

import numpy as np

from ... import dtypes as _dt
from ...tensor import Tensor
from .. import fastmath as fm
from ..jit import njit
from ..registry import (
    ALL_CATS,
    COMPARE,
    INT_CATS,
    INT_TO_FLOAT,
    LOGICAL,
    REAL_CATS,
    binary,
    defvjp,
    holomorphic,
    ternary,
)
from . import _complex as C
from . import _prims as P

_REAL_NOBOOL = frozenset({1, 2})
_FLOAT = frozenset({2})


def _operand_dtype(x):
    return x.dtype if hasattr(x, "dtype") and hasattr(x, "_a") else _dt.scalar_dtype(x)


def _sub_check(common, args):
    """torch's sub_check: any bool operand (a Python bool counts) is an error."""
    kinds = [_operand_dtype(a) is _dt.bool for a in args]
    if all(kinds):
        raise RuntimeError(
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
            "or `logical_xor()` operator instead.")
    if any(kinds):
        raise RuntimeError(
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
            "trying to invert a mask, use the `~` or `logical_not()` operator instead.")


def _kernel_error(name: str, cats, scalar_name: str, scalar_cats):
    """A check raising torch's NotImplementedError where torch's kernel (name and dtypes)
    depends on whether the operands after the first are Python scalars (clamp_scalar_cpu)."""
    def check(common, args):
        scalar = not any(hasattr(a, "_a") for a in args[1:])
        kname, ok = (scalar_name, scalar_cats) if scalar else (name, cats)
        if common.category not in ok:
            raise NotImplementedError(f'"{kname}" not implemented for \'{_torch_name(common)}\'')
    return check


def _torch_name(d) -> str:
    return d.scalar_name



def _lerp_check(common, args):
    """lerp does not promote: end (and a weight tensor with dims) must have start's dtype."""
    start, end, weight = args
    d = start.dtype
    for what, x in (("end", end), ("weight", weight)):
        if hasattr(x, "_a") and x.dtype is not d and (what == "end" or x._a.ndim):
            raise RuntimeError(f"expected dtype {d.cpp_name} for `{what}` but got dtype "
                               f"{x.dtype.cpp_name}")
    # torch dispatches on start's dtype (a float scalar weight does not make ints valid).
    _kernel_error("lerp_kernel_tensor", _FLOAT | {3}, "lerp_kernel_scalar", _FLOAT | {3})(
        d, (start, weight))


def _same(f):
    """Scalar functions that are valid for complex numbers as written."""
    return {"complex_scalar": f}


# integers wrap (fm._wrap_*): as eager's stored results and torch's, also inside fused loops
add_op = binary("add", lambda x, y: x + y, int_scalar=lambda x, y: fm._wrap_add(x, y),
                **_same(lambda x, y: x + y))
sub_op = binary("sub", lambda x, y: x - y, check=_sub_check,
                int_scalar=lambda x, y: fm._wrap_sub(x, y), **_same(lambda x, y: x - y))
mul_op = binary("mul", lambda x, y: x * y, int_scalar=lambda x, y: fm._wrap_mul(x, y),
                **_same(lambda x, y: x * y))
# add/sub with alpha != 1 in one pass, as torch's add_kernel: fma(other, alpha, self) for
# floats (its vector loop's fmadd, and its scalar tail contracts to the same), self + alpha *
# other for integers and complex; alpha is the trailing parameter (cast to the compute dtype)
add_alpha_op = binary("add_alpha", lambda x, y, a: fm._fma(a, y, x), cats=frozenset({1, 2, 3}),
                      nparams=1, int_scalar=lambda x, y, a: fm._wrap_add(x, fm._wrap_mul(a, y)),
                      complex_scalar=lambda x, y, a: x + a * y, kernel_name="add_stub")
sub_alpha_op = binary("sub_alpha", lambda x, y, a: fm._fma(-a, y, x), cats=frozenset({1, 2, 3}),
                      nparams=1, int_scalar=lambda x, y, a: fm._wrap_sub(x, fm._wrap_mul(a, y)),
                      complex_scalar=lambda x, y, a: x - a * y, kernel_name="sub_stub")
div_op = binary("div", lambda x, y: x / y, rule=INT_TO_FLOAT,
                complex_scalar=lambda x, y: C.cdiv(x, y))
div_trunc_op = binary("div_trunc", lambda x, y: np.trunc(x / y), cats=_REAL_NOBOOL, int_div=True,
                      int_scalar=lambda x, y: _int_div_trunc(x, y), kernel_name="div_trunc_cpu")
# Integer variants divide exactly; float variants follow torch's formulas.
# np.fmod is a scalar libm call (4.6x torch's time): contiguous float loops take the fused
# form of _fmod_fast, exact where _fmod_ok holds, block by block (pointwise._guarded).
floor_divide_op = binary("floor_divide", lambda x, y: _div_floor(x, y), cats=_REAL_NOBOOL, int_div=True,
                         int_scalar=lambda x, y: _int_div_floor(x, y), kernel_name="div_floor_cpu",
                         fast_scalar=lambda x, y: _div_floor_fast(x, y),
                         fast_ok=lambda x, y: _fmod_ok(x, y),
                         grad_name="NotImplemented")  # (no derivative in torch)
remainder_op = binary("remainder", lambda x, y: _remainder(x, y), cats=_REAL_NOBOOL, int_div=True,
                      int_scalar=lambda x, y: _int_remainder(x, y),
                      fast_scalar=lambda x, y: _remainder_fast(x, y), fast_ok=lambda x, y: _fmod_ok(x, y))
fmod_op = binary("fmod", lambda x, y: np.fmod(x, y), cats=_REAL_NOBOOL, int_div=True,
                 int_scalar=lambda x, y: _int_fmod(x, y),
                 fast_scalar=lambda x, y: _fmod_fast(x, y), fast_ok=lambda x, y: _fmod_ok(x, y))
pow_op = binary("pow", lambda x, y: fm.pow(x, y), cats=_REAL_NOBOOL | {3}, int_scalar=lambda x, y: _ipow(x, y),
                complex_scalar=lambda x, y: C.cpow(x, y), kernel_name="pow")
atan2_op = binary("atan2", lambda y, x: fm.atan2(y, x), rule=INT_TO_FLOAT)
hypot_op = binary("hypot", lambda x, y: fm.hypot(x, y), cats=_FLOAT)
copysign_op = binary("copysign", lambda x, y: math.copysign(x, y), rule=INT_TO_FLOAT)
maximum_op = binary("maximum", lambda x, y: x if x != x or x > y else y, cats=REAL_CATS)
minimum_op = binary("minimum", lambda x, y: x if x != x or x < y else y, cats=REAL_CATS)
fmax_op = binary("fmax", lambda x, y: y if x != x or y > x else x, cats=REAL_CATS)
fmin_op = binary("fmin", lambda x, y: y if x != x or y < x else x, cats=REAL_CATS)
# clamp: nan in the input or a bound propagates; a lower bound above the upper one gives the
# upper (torch's min(max(x, lo), hi)). Bool is allowed only with tensor bounds of clamp_min/max.
clamp_min_op = binary("clamp_min", lambda x, lo: x if x != x or x > lo else lo, cats=REAL_CATS,
                      check=_kernel_error("clamp_min_cpu", REAL_CATS, "clamp_min_scalar_cpu",
                                                    _REAL_NOBOOL))
clamp_max_op = binary("clamp_max", lambda x, hi: x if x != x or x < hi else hi, cats=REAL_CATS,
                      check=_kernel_error("clamp_max_cpu", REAL_CATS, "clamp_max_scalar_cpu",
                                                    _REAL_NOBOOL))
clamp_op = ternary("clamp", lambda x, lo, hi: _clamp(x, lo, hi), cats=REAL_CATS, 
    check=_kernel_error("clamp_cpu", _REAL_NOBOOL, "clamp_scalar_cpu", _REAL_NOBOOL))
# torch's lerp_vec: fmadd(w < 0.5 ? w : w - 1, end - start, w < 0.5 ? start : end) (its scalar
# tail contracts to the same fmas)
lerp_op = ternary("lerp", lambda s, e, w: fm._fma(w, e - s, s) if abs(w) < 0.5 else
                  fm._fma(w - fm.like(w, 1), e - s, e), cats=REAL_CATS | {3}, check=_lerp_check,
                  complex_scalar=lambda s, e, w: s + w * (e - s) if abs(w) < 0.5 else
                  e - (e - s) * (C._one(w) - w))

eq_op = binary("eq", lambda x, y: x == y, rule=COMPARE, differentiable=False,
               **_same(lambda x, y: x == y))
ne_op = binary("ne", lambda x, y: x != y, rule=COMPARE, differentiable=False,
               **_same(lambda x, y: x != y))
lt_op = binary("lt", lambda x, y: x < y, rule=COMPARE, differentiable=False)
le_op = binary("le", lambda x, y: x <= y, rule=COMPARE, differentiable=False)
gt_op = binary("gt", lambda x, y: x > y, rule=COMPARE, differentiable=False)
ge_op = binary("ge", lambda x, y: x >= y, rule=COMPARE, differentiable=False)
# Floating isclose (jtorch.isclose composes the integer/bool case from sub/abs/le as torch does).
isclose_op = binary("isclose", lambda x, y, rtol, atol, equal_nan: _isclose(x, y, rtol, atol, equal_nan),
                    rule=COMPARE, cats=_FLOAT | {3}, nparams=3, differentiable=False,
                    complex_scalar=lambda x, y, rtol, atol, equal_nan: _cisclose(x, y, rtol, atol,
                                                                                equal_nan))

logical_and_op = binary("logical_and", lambda x, y: x and y, rule=LOGICAL, differentiable=False,
                        **_same(lambda x, y: x and y))
logical_or_op = binary("logical_or", lambda x, y: x or y, rule=LOGICAL, differentiable=False,
                       **_same(lambda x, y: x or y))
logical_xor_op = binary("logical_xor", lambda x, y: x != y, rule=LOGICAL, differentiable=False,
                        **_same(lambda x, y: x != y))
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
def _clamp(x, lo, hi):
    if x != x:
        return x
    if lo != lo:
        return lo
    if hi != hi:
        return hi
    m = lo if x < lo else x
    return hi if hi < m else m


@njit(inline="always")
def _isclose(x, y, rtol, atol, equal_nan):
    if x == y:
        return True
    if x != x or y != y:
        return equal_nan != 0 and x != x and y != y
    err = abs(x - y)
    return err != math.inf and err <= atol + abs(rtol * y)


@njit(inline="always")
def _cisclose(x, y, rtol, atol, equal_nan):
    """torch's complex isclose: a nan part makes a value nan; the error is |x - y|."""
    if x == y:
        return True
    xn = x.real != x.real or x.imag != x.imag
    yn = y.real != y.real or y.imag != y.imag
    if xn or yn:
        return equal_nan != 0 and xn and yn
    err = abs(x - y)
    return err != math.inf and err <= atol.real + abs(rtol * y)


# Float floor division and remainder: torch's formulas (c10::div_floor_floating), which keep the
# quotient consistent with fmod and give IEEE results for zero and infinite divisors.
@njit(inline="always")
def _div_floor(a, b):
    if b == 0:
        return a / b
    mod = np.fmod(a, b)
    div = (a - mod) / b
    if mod != 0 and (b < 0) != (mod < 0):
        div -= fm.like(div, 1)
    if div == 0:
        return math.copysign(fm.like(div, 0.0), a / b)
    floordiv = np.floor(div)
    if div - floordiv > 0.5:
        floordiv += fm.like(floordiv, 1)
    return floordiv


@njit(inline="always")
def _fmod_ok(a, b):
    """Where _fmod_fast is exact: finite a, finite nonzero b, |a / b| < 2^22 (float32's
    significand less 2 bits), so that the rounded quotient is within 1 of the true one."""
    return abs(a) < abs(b) * fm.like(a, 4194304.0) and abs(b) < fm.like(b, math.inf)


@njit(inline="always")
def _fmod_fast(a, b):
    """fmod where _fmod_ok holds: a - q b for q = trunc(a / b) is exact in one fma (the result
    fits the format), and q is at most one too large (a / b rounded up to an integer), which
    gives a remainder of the wrong sign that adding |b| back repairs."""
    r = fm._fma(-np.trunc(a / b), b, a)
    # (the signs compared, not r * a < 0: that product underflows for tiny operands)
    r = r + (abs(b) if a > 0 else -abs(b)) if r != 0 and (r < 0) != (a < 0) else r
    return math.copysign(abs(r), a)  # fmod carries a's sign, zeros included


@njit(inline="always")
def _remainder_fast(a, b):
    mod = _fmod_fast(a, b)
    return mod + b if mod != 0 and (b < 0) != (mod < 0) else mod


@njit(inline="always")
def _div_floor_fast(a, b):
    """_div_floor where _fmod_ok holds (b finite and nonzero), branch-free."""
    mod = _fmod_fast(a, b)
    div = (a - mod) / b
    div = div - fm.like(div, 1) if mod != 0 and (b < 0) != (mod < 0) else div
    floordiv = np.floor(div)
    floordiv = floordiv + fm.like(floordiv, 1) if div - floordiv > 0.5 else floordiv
    return math.copysign(fm.like(div, 0.0), a / b) if div == 0 else floordiv


@njit(inline="always")
def _remainder(a, b):
    mod = np.fmod(a, b)
    if mod != 0 and (b < 0) != (mod < 0):
        mod += b
    return mod


# Integer division: y == -1 is answered without dividing (INT_MIN / -1 traps on x86; torch
# wraps to INT_MIN); y == 0 still reaches the division so that it raises.
@njit(inline="always")
def _int_div_floor(x, y):
    if y == -1:
        return -x
    return x // y


@njit(inline="always")
def _int_div_trunc(x, y):
    if y == -1:
        return -x
    q = x // y
    return q + 1 if q < 0 and q * y != x else q


@njit(inline="always")
def _int_remainder(x, y):
    if y == -1:
        return x * 0
    return x % y


@njit(inline="always")
def _int_fmod(x, y):
    if y == -1:
        return x * 0
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



def _heaviside_check(common, args):
    x, v = args
    if _operand_dtype(x) is not _operand_dtype(v):
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    if common.category == 3:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")


def _addcdiv_check(common, args):
    if all(_operand_dtype(t).category < 2 for t in args[1:3]):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
            "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior "
            "can be implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) "
            "for integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The "
            "future addcdiv behavior is just the latter implementation: (input + value * tensor1 / "
            "tensor2), for all dtypes.")


_INT_NOBOOL = frozenset({1})
# log(exp(x) + exp(y)) as max + log1p(exp(-|x - y|)); equal infinities return themselves.
logaddexp_op = binary("logaddexp", lambda x, y: x if abs(x) == math.inf and x == y else max(x, y) + fm.log1p(
    fm.exp(-abs(x - y))), cats=_FLOAT)
logaddexp2_op = binary("logaddexp2", lambda x, y: x if abs(x) == math.inf and x == y else max(x, y) + fm.log1p(
    fm.exp2(-abs(x - y))) * fm.like(x, 1.4426950408889634), cats=_FLOAT)
xlogy_op = binary("xlogy", lambda x, y: y if y != y else (fm.like(x, 0) if x == 0 else x * fm.log(y)),
                  rule=INT_TO_FLOAT)
# torch has no derivative (``not_implemented``): the result records a node whose backward
# raises "derivative for aten::heaviside is not implemented", as torch's NotImplemented does
heaviside_op = binary("heaviside", lambda x, v: v if x == 0 else (x > 0),
                      check=_heaviside_check, grad_name="NotImplemented")
gcd_op = binary("gcd", lambda x, y: _gcd(x, y), cats=_INT_NOBOOL, differentiable=False)
lcm_op = binary("lcm", lambda x, y: _lcm(x, y), cats=_INT_NOBOOL, differentiable=False)
# value is a trailing parameter: cast to the common dtype (torch casts it, 0.5 on ints is 0).
# torch's compiled kernel contracts the float form to fma(value * a, b, x): so does this one.
addcmul_op = ternary("addcmul", lambda x, a, b, v: fm._fma(v * a, b, x), cats=frozenset({1, 2, 3}),
                     nparams=1, int_scalar=lambda x, a, b, v: x + v * a * b,
                     complex_scalar=lambda x, a, b, v: x + v * a * b, kernel_name="addcmul_cpu_out")
addcdiv_op = ternary("addcdiv", lambda x, a, b, v: x + v * a / b, cats=frozenset({1, 2, 3}), nparams=1,
                     complex_scalar=lambda x, a, b, v: x + C.cdiv(v * a, b), kernel_name="addcdiv_cpu_out",
                     check=_addcdiv_check)


@njit(inline="always")
def _gcd(a, b):
    a, b = abs(a), abs(b)
    while a != 0:
        a, b = b % a, a
    return b


@njit(inline="always")
def _lcm(a, b):
    g = _gcd(a, b)
    return 0 if g == 0 else abs(a // g * b)

# -- gradient rules: vjp(node, grad) in jtorch ops (so they are differentiable themselves) ----
# Inputs may be Python scalars (no gradient); the node reduces broadcast gradients back to
# each input's shape and casts them to its dtype.


def _zeros2(c, g):
    return tuple(P.zeros_like(g) if n else None for n in c.needs)


def _cj(v):
    """A complex operand conjugated, as torch's rules write it (grad * other.conj()); real ones
    as they are."""
    if isinstance(v, Tensor):
        return v.conj() if v.dtype.is_complex else v
    return v.conjugate() if isinstance(v, complex) else v


def _mul_vjp(c, g):
    x, y = c.args
    n = c.needs
    return (g * _cj(y) if n[0] else None, g * _cj(x) if n[1] else None)


def _div_vjp(c, g):
    """Saves the operands, not the quotient (as torch), so the result may be written in place
    (Gamma.rsample clamps its draws so)."""
    x, y = c.args
    n = c.needs
    return (g / _cj(y) if n[0] else None, -g * _cj(x / y) / _cj(y) if n[1] else None)


def _pow_vjp(c, g):
    x, y = c.args
    n = c.needs
    gx = gy = None
    if n[0]:
        gx = P.where(y == 0, 0.0, g * y * x.pow(y - 1)) if isinstance(y, Tensor) else (
            g * 0 if y == 0 else g * y * x.pow(y - 1))
    if n[1]:
        if not isinstance(x, Tensor):  # scalar base: d/dy x**y = x**y * log(x)
            if x == 0:  # 0**y: no slope where y is real and >= 0, as torch
                return gx, P.where(_real_nonneg(y), 0.0, g * c.out * -math.inf)
            if isinstance(x, complex) or y.is_complex():  # a negative base's log is complex
                return gx, g * c.out * cmath.log(x)
            if x > 0:
                return gx, g * c.out * math.log(x)
            return gx, g * c.out * math.nan  # log of a negative base: nan, as torch
        gy = P.where((x == 0) & _real_nonneg(y), 0.0, g * c.out * P.log(x))
    return gx, gy


def _real_nonneg(y):
    """torch's exponent condition for a zero base: real and >= 0 (a complex y's imaginary
    part 0)."""
    if isinstance(y, Tensor) and y.is_complex():
        return (y.imag == 0) & (y.real >= 0)
    return y >= 0


def _atan2_vjp(c, g):
    y, x = c.args
    r = g / (x * x + y * y)
    return (r * x, -r * y)


def _copysign_vjp(c, g):
    x, _ = c.args
    return (P.where(x == 0, 0.0, g * (c.out / x)), None if not c.needs[1] else P.zeros_like(g))


def _max_min_vjp(pick):
    def vjp(c, g):
        x, y = c.args
        half = P.where(x == y, g / 2, g)
        n = c.needs
        return (P.where(pick(y, x), 0.0, half) if n[0] else None,
                P.where(pick(x, y), 0.0, half) if n[1] else None)
    return vjp


def _fmax_fmin_vjp(pick):
    def vjp(c, g):
        x, y = c.args
        take_x = pick(x, y) | P.isnan(y)
        return (P.where(take_x, g, 0.0), P.where(take_x, 0.0, g))
    return vjp


def _clamp_vjp(c, g):
    x, lo, hi = c.args
    inside = None
    if lo is not None:
        inside = x >= lo
    if hi is not None:
        inside = x <= hi if inside is None else inside & (x <= hi)
    gx = g if inside is None else P.where(inside, g, 0.0)
    # where lo > hi the result is hi: the gradient goes to hi (torch's clamp_backward_min_max)
    glo = ghi = None
    if c.needs[1]:
        glo = P.where((x < lo) if hi is None else (x < lo) & (lo < hi), g, 0.0)
    if c.needs[2]:
        ghi = P.where((x > hi) if lo is None else (x > hi) | (hi < lo), g, 0.0)
    return gx, glo, ghi


def _lerp_vjp(c, g):
    s, e, w = c.args
    n = c.needs
    return (g * (1 - w) if n[0] else None, g * w if n[1] else None,
            g * (e - s) if n[2] else None)


def _where_vjp(c, g):
    cond = c.args[2]
    n = c.needs
    return (P.where(cond, g, 0.0) if n[0] else None, P.where(cond, 0.0, g) if n[1] else None, None)


for _op, _rule, _saves in [
    (add_op, lambda c, g: (g, g), ""),
    (sub_op, lambda c, g: (g, -g if c.needs[1] else None), ""),
    (mul_op, _mul_vjp, "01"),
    (add_alpha_op, lambda c, g: (g, g * c.args[2].conjugate() if c.needs[1] else None, None), ""),
    (sub_alpha_op, lambda c, g: (g, g * -c.args[2].conjugate() if c.needs[1] else None, None),
     ""),
    (div_op, _div_vjp, "01"),
    (div_trunc_op, _zeros2, ""),
    (remainder_op, lambda c, g: (g, -g * P.floor_divide(c.args[0], c.args[1])
                                 if c.needs[1] else None), "01"),
    (fmod_op, lambda c, g: (g, -g * P.div_trunc(c.args[0], c.args[1])
                            if c.needs[1] else None), "01"),
    (pow_op, holomorphic(_pow_vjp), "01o"),
    (atan2_op, _atan2_vjp, "01"),
    (hypot_op, lambda c, g: (g * c.args[0] / c.out, g * c.args[1] / c.out), "01o"),
    (copysign_op, _copysign_vjp, "0o"),
    (maximum_op, _max_min_vjp(lambda a, b: a > b), "01"),
    (minimum_op, _max_min_vjp(lambda a, b: a < b), "01"),
    (fmax_op, _fmax_fmin_vjp(lambda a, b: a >= b), "01"),
    (fmin_op, _fmax_fmin_vjp(lambda a, b: a <= b), "01"),
    (clamp_min_op, lambda c, g: (P.where(c.args[0] >= c.args[1], g, 0.0),
                                 P.where(c.args[0] < c.args[1], g, 0.0) if c.needs[1] else None),
     "01"),
    (clamp_max_op, lambda c, g: (P.where(c.args[0] <= c.args[1], g, 0.0),
                                 P.where(c.args[0] > c.args[1], g, 0.0) if c.needs[1] else None),
     "01"),
    (clamp_op, _clamp_vjp, "012"),
    (lerp_op, _lerp_vjp, "012"),
    (where_op, _where_vjp, "2"),
]:
    defvjp(_op, _rule, _saves)


def _is_t(x) -> bool:
    return isinstance(x, Tensor)


# torch's node names where they depend on the overload (scalar or tensor operands)
sub_op.grad_name = lambda a, kw: "SubBackward0" if _is_t(a[0]) else "RsubBackward1"
add_alpha_op.grad_name = "AddBackward0"
sub_alpha_op.grad_name = "SubBackward0"
div_op.grad_name = lambda a, kw: "DivBackward0" if _is_t(a[0]) else "MulBackward0"
pow_op.grad_name = lambda a, kw: ("PowBackward2" if not _is_t(a[0]) else
                                           "PowBackward1" if _is_t(a[1]) else "PowBackward0")
clamp_op.grad_name = lambda a, kw: ("ClampBackward0" if _is_t(a[1]) or _is_t(a[2])
                                             else "ClampBackward1")
for _op in (clamp_min_op, clamp_max_op):
    _op.grad_name = lambda a, kw: "ClampBackward0" if _is_t(a[1]) else "ClampBackward1"
lerp_op.grad_name = lambda a, kw: "LerpBackward1" if _is_t(a[2]) else "LerpBackward0"


def _addcmul_vjp(c, g):
    _, a, b, v = c.args
    n = c.needs
    return (g if n[0] else None, g * b * v if n[1] else None, g * a * v if n[2] else None)


def _addcdiv_vjp(c, g):
    _, a, b, v = c.args
    n = c.needs
    return (g if n[0] else None, g * v / b if n[1] else None, -g * v * a / (b * b) if n[2] else None)


for _op, _rule, _saves in [
    (logaddexp_op, lambda c, g: (g / (1 + P.exp(c.args[1] - c.args[0])),
                                 g / (1 + P.exp(c.args[0] - c.args[1]))), "01"),
    (logaddexp2_op, lambda c, g: (g / (1 + P.exp2(c.args[1] - c.args[0])),
                                  g / (1 + P.exp2(c.args[0] - c.args[1]))), "01"),
    (xlogy_op, lambda c, g: (g * P.xlogy(c.args[0] != 0, c.args[1]) if c.needs[0] else None,
                             g * c.args[0] / c.args[1] if c.needs[1] else None), "01"),
    (addcmul_op, _addcmul_vjp, "12"),
    (addcdiv_op, _addcdiv_vjp, "12"),
]:
    defvjp(_op, _rule, _saves)
