"""Unary pointwise ops: scalar function + dtype rule per op (``fm`` = vectorisable math)."""
# ruff: noqa: PLR0124, FURB136  (x != x is the nan test that compiles for every dtype;
# the conditional forms keep nan semantics that min()/max() would change)

import cmath
import math

import numpy as np

from .. import fastmath as fm
from ..jit import njit
from ..registry import (
    ALL_CATS,
    COMPARE,
    FLOAT_CATS,
    INT_CATS,
    INT_TO_FLOAT,
    LOGICAL,
    REAL_CATS,
    TO_FLOAT32,
    TO_FLOAT64,
    binary,
    defvjp,
    holomorphic,
    unary,
)
from . import _complex as C
from . import _prims as P

_REAL_NOBOOL = frozenset({1, 2})
_FLOAT = frozenset({2})
_NONBOOL = frozenset({1, 2, 3})


@njit(inline="always")
def _nan_to_num(x, nan, posinf, neginf):
    return nan if x != x else posinf if x == math.inf else neginf if x == -math.inf else x


def _no_bool(message):
    def check(common, args):
        if common.category == 0:
            raise RuntimeError(message)
    return check


# integers wrap (fm._wrap_*): as eager's stored results and torch's, also inside fused loops
neg_op = unary("neg", lambda x: -x, cats=_NONBOOL, complex_scalar=lambda x: -x,
               int_scalar=lambda x: fm._wrap_neg(x), check=_no_bool(
    "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert "
    "a mask, use the `~` or `logical_not()` operator instead."))
abs_op = unary("abs", lambda x: abs(x), cats=_REAL_NOBOOL)
sign_op = unary("sign", lambda x: fm.like(x, x > 0) - fm.like(x, x < 0), cats=REAL_CATS)
sgn_op = unary("sgn", lambda x: fm.like(x, x > 0) - fm.like(x, x < 0), cats=ALL_CATS,
               complex_scalar=lambda x: C.csgn(x))
signbit_op = unary("signbit", lambda x: np.signbit(x), rule=COMPARE, cats=REAL_CATS)
# square of bool is int64 in torch (it is pow(x, 2)); jtorch.square casts bool inputs first.
square_op = unary("square", lambda x: x * x, cats=ALL_CATS, complex_scalar=lambda x: x * x,
                  int_scalar=lambda x: fm._wrap_mul(x, x))
# pow(x, 3) as torch computes it (x*x*x): 20x cheaper than the general pow (a GELU's cube)
cube_op = unary("cube", lambda x: x * x * x, cats=ALL_CATS, complex_scalar=lambda x: x * x * x,
                int_scalar=lambda x: fm._wrap_mul(fm._wrap_mul(x, x), x), kernel_name="pow")
sqrt_op = unary("sqrt", lambda x: math.sqrt(x) if x >= 0 else fm.like(x, math.nan) if x == x else x,
                rule=INT_TO_FLOAT, complex_scalar=lambda x: C.csqrt(x))
rsqrt_op = unary("rsqrt", lambda x: fm.like(x, 1) / math.sqrt(x) if x >= 0 else fm.like(x, math.nan),
                rule=INT_TO_FLOAT, complex_scalar=lambda x: C.crecip(C.csqrt(x)))
reciprocal_op = unary("reciprocal", lambda x: fm.like(x, 1) / x, rule=INT_TO_FLOAT,
                      complex_scalar=lambda x: C.crecip(x))
exp_op = unary("exp", lambda x: fm.exp(x), rule=INT_TO_FLOAT, complex_scalar=lambda x: cmath.exp(x),
               fast_scalar=lambda x: fm.exp_normal(x), fast_ok=lambda x: fm.exp_ok(x))
exp2_op = unary("exp2", lambda x: fm.exp2(x), rule=INT_TO_FLOAT,
                complex_scalar=lambda x: C.cexp2(x))
expm1_op = unary("expm1", lambda x: fm.expm1(x), rule=INT_TO_FLOAT,
                 complex_scalar=lambda x: C.cexpm1(x))
# Blocks of positive normal finite arguments skip subnormal scaling and special values.
log_op = unary("log", lambda x: fm.log(x), rule=INT_TO_FLOAT, complex_scalar=lambda x: cmath.log(x),
               fast_scalar=lambda x: fm.log_normal(x), fast_ok=lambda x: fm.log_ok(x))
log2_op = unary("log2", lambda x: fm.log2(x), rule=INT_TO_FLOAT,
                complex_scalar=lambda x: C.clog_base(x, 0.6931471805599453),
                fast_scalar=lambda x: fm.log2_normal(x), fast_ok=lambda x: fm.log_ok(x))
log10_op = unary("log10", lambda x: fm.log10(x), rule=INT_TO_FLOAT,
                 complex_scalar=lambda x: C.clog_base(x, 2.302585092994046),
                 fast_scalar=lambda x: fm.log10_normal(x), fast_ok=lambda x: fm.log_ok(x))
log1p_op = unary("log1p", lambda x: fm.log1p(x), rule=INT_TO_FLOAT,
                 complex_scalar=lambda x: C.clog1p(x),
                 fast_scalar=lambda x: fm.log1p_normal(x), fast_ok=lambda x: fm.log1p_ok(x))
# Blocks of moderate arguments skip the huge-argument reduction (see OpDef.fast_scalar).
sin_op = unary("sin", lambda x: fm.sin(x), rule=INT_TO_FLOAT, complex_scalar=lambda x: cmath.sin(x),
               fast_scalar=lambda x: fm.sin_near(x), fast_ok=lambda x: fm.trig_near(x))
cos_op = unary("cos", lambda x: fm.cos(x), rule=INT_TO_FLOAT, complex_scalar=lambda x: cmath.cos(x),
               fast_scalar=lambda x: fm.cos_near(x), fast_ok=lambda x: fm.trig_near(x))
tan_op = unary("tan", lambda x: fm.tan(x), rule=INT_TO_FLOAT, complex_scalar=lambda x: cmath.tan(x),
               fast_scalar=lambda x: fm.tan_near(x), fast_ok=lambda x: fm.trig_near(x))
asin_op = unary("asin", lambda x: fm.asin(x), rule=INT_TO_FLOAT, complex_scalar=lambda x: cmath.asin(x))
acos_op = unary("acos", lambda x: fm.acos(x), rule=INT_TO_FLOAT, complex_scalar=lambda x: cmath.acos(x))
atan_op = unary("atan", lambda x: fm.atan(x), rule=INT_TO_FLOAT, complex_scalar=lambda x: cmath.atan(x))
sinh_op = unary("sinh", lambda x: fm.sinh(x), rule=INT_TO_FLOAT, complex_scalar=lambda x: cmath.sinh(x))
cosh_op = unary("cosh", lambda x: fm.cosh(x), rule=INT_TO_FLOAT, complex_scalar=lambda x: cmath.cosh(x))
tanh_op = unary("tanh", lambda x: fm.tanh(x), rule=INT_TO_FLOAT, complex_scalar=lambda x: cmath.tanh(x))
asinh_op = unary("asinh", lambda x: fm.asinh(x), rule=INT_TO_FLOAT,
                 complex_scalar=lambda x: cmath.asinh(x))
acosh_op = unary("acosh", lambda x: fm.acosh(x), rule=INT_TO_FLOAT,
                 complex_scalar=lambda x: cmath.acosh(x))
atanh_op = unary("atanh", lambda x: fm.atanh(x), rule=INT_TO_FLOAT,
                 complex_scalar=lambda x: cmath.atanh(x))
sigmoid_op = unary("sigmoid", lambda x: fm.sigmoid(x), rule=INT_TO_FLOAT,
                   complex_scalar=lambda x: C.csigmoid(x))
erf_op = unary("erf", lambda x: fm.erf(x), rule=INT_TO_FLOAT)
erfc_op = unary("erfc", lambda x: fm.erfc(x), rule=INT_TO_FLOAT)
erfinv_op = unary("erfinv", lambda x: _erfinv(x), rule=INT_TO_FLOAT)
# Rounding: np.* keeps the float type (math.floor returns an int64 and overflows on inf);
# integers are already integral and pass through exactly.
floor_op = unary("floor", lambda x: np.floor(x), cats=_REAL_NOBOOL, int_scalar=lambda x: x,
                 kernel_name="floor_vml_cpu")
ceil_op = unary("ceil", lambda x: np.ceil(x), cats=_REAL_NOBOOL, int_scalar=lambda x: x,
                kernel_name="ceil_vml_cpu")
trunc_op = unary("trunc", lambda x: np.trunc(x), cats=_REAL_NOBOOL, int_scalar=lambda x: x,
                 kernel_name="trunc_vml_cpu")
round_op = unary("round", lambda x: np.rint(x), cats=_REAL_NOBOOL, int_scalar=lambda x: x,
                 kernel_name="round_vml_cpu")
frac_op = unary("frac", lambda x: x - np.trunc(x), cats=_FLOAT)
isnan_op = unary("isnan", lambda x: x != x, complex_scalar=lambda x: x != x, rule=COMPARE, differentiable=False)
isinf_op = unary("isinf", lambda x: abs(x) == math.inf, rule=COMPARE, cats=ALL_CATS,
                 complex_scalar=lambda x: abs(x.real) == math.inf or abs(x.imag) == math.inf,
                 differentiable=False)
isposinf_op = unary("isposinf", lambda x: x == math.inf, rule=COMPARE, cats=REAL_CATS,
                    differentiable=False)
isneginf_op = unary("isneginf", lambda x: x == -math.inf, rule=COMPARE, cats=REAL_CATS,
                    differentiable=False)
isfinite_op = unary("isfinite", lambda x: abs(x) < math.inf, rule=COMPARE, cats=ALL_CATS,
                    complex_scalar=lambda x: abs(x.real) < math.inf and abs(x.imag) < math.inf,
                    differentiable=False)
logical_not_op = unary("logical_not", lambda x: not x, rule=LOGICAL, complex_scalar=lambda x: not x, differentiable=False)
bitwise_not_op = unary("bitwise_not", lambda x: ~x, cats=INT_CATS, differentiable=False)
# relu is clamp_min(x, 0): nan and -0.0 pass through.
relu_op = unary("relu", lambda x: fm.like(x, 0) if x < 0 else x, cats=_REAL_NOBOOL, 
    check=_no_bool("Boolean inputs not supported for relu"))
# relu's gradient in one pass (torch's threshold_backward): g where y > threshold, else 0
threshold_backward_op = binary("threshold_backward", lambda g, y, t: fm.like(g, 0) if y <= t else g,
                               cats=_REAL_NOBOOL, nparams=1, kernel_name="threshold_cpu")
# tanh's and sigmoid's gradients from their outputs in one pass (torch's tanh_backward and
# sigmoid_backward): g * (1 - y^2), g * y * (1 - y), real floating dtypes
tanh_backward_op = binary("tanh_backward", lambda g, y: g * fm._fma(-y, y, fm.like(y, 1)), cats=_FLOAT | {3},
                          complex_scalar=lambda g, y: g * (C._one(y) - y * y))
# gelu's gradient in one pass (torch's gelu_backward): g * (Phi(x) + x * phi(x)), Phi as in gelu
gelu_backward_op = binary("gelu_backward", lambda g, x: g * fm.gelu_grad(x), cats=_FLOAT,
                          kernel_name="GeluBackwardKernelImpl")
sigmoid_backward_op = binary("sigmoid_backward", lambda g, y: g * (fm.like(y, 1) - y) * y,
                             cats=_FLOAT | {3}, complex_scalar=lambda g, y: g * (C._one(y) - y) * y)
silu_op = unary("silu", lambda x: x * fm.sigmoid(x), cats=FLOAT_CATS)
mish_op = unary("mish", lambda x: fm.mish(x), cats=FLOAT_CATS)
gelu_op = unary("gelu", lambda x: fm.gelu(x), cats=FLOAT_CATS, kernel_name="GeluKernelImpl")
gelu_tanh_op = unary("gelu_tanh", lambda x: fm.like(x, 0.5) * x * (fm.like(x, 1) + fm.tanh(
    fm.like(x, 0.7978845608028654) * (x + fm.like(x, 0.044715) * x * x * x))), cats=FLOAT_CATS,
    kernel_name="GeluKernelImpl")
# Parameterised activations: trailing scalar parameters are cast to the compute dtype.
leaky_relu_op = unary("leaky_relu", lambda x, s: x if x > 0 else x * s, cats=FLOAT_CATS, nparams=1)
hardtanh_op = unary("hardtanh", lambda x, lo, hi: min(max(x, lo), hi), cats=_REAL_NOBOOL, nparams=2,
                    check=_no_bool("Bool inputs not supported for hardtanh"))
hardsigmoid_op = unary("hardsigmoid", lambda x: min(max(x + fm.like(x, 3), fm.like(x, 0)), fm.like(x, 6)) / fm.like(x, 6),
                       cats=_FLOAT)
hardswish_op = unary("hardswish", lambda x: x * min(max(x + fm.like(x, 3), fm.like(x, 0)), fm.like(x, 6)) / fm.like(x, 6),
                     cats=_FLOAT)
# log(sigmoid(x)) = -softplus(-x); 0 - keeps +0 at x = +inf as torch's min(x, 0) - log1p(e^-|x|)
logsigmoid_op = unary("logsigmoid", lambda x: fm.like(x, 0) - fm.softplus(-x), cats=_FLOAT,
                      kernel_name="log_sigmoid_cpu")
elu_op = unary("elu", lambda x, alpha, scale, iscale: scale * x if x > 0 else
               scale * alpha * fm.expm1(x * iscale), cats=FLOAT_CATS, nparams=3)
softplus_op = unary("softplus", lambda x, beta, threshold: x if x * beta > threshold else
                    fm.softplus(x * beta) / beta, cats=FLOAT_CATS, nparams=2)
logit_op = unary("logit", lambda x: fm.log(x / (fm.like(x, 1) - x)), rule=INT_TO_FLOAT)
# logit with eps: the bounds (eps, 1 - eps) are passed rounded to the compute dtype, as torch
# computes them (jtorch.logit does this), so clamped values match torch's exactly.
logit_eps_op = unary("logit_eps", lambda x, lo, hi: _logit_clamped(x, lo, hi), rule=INT_TO_FLOAT,
                     nparams=2, kernel_name="logit_cpu")
sinc_op = unary("sinc", lambda x: fm.like(x, 1) if x == 0 else fm.sin(x * fm.like(x, math.pi)) / (x * fm.like(x, math.pi)),
                rule=INT_TO_FLOAT, complex_scalar=lambda x: C.csinc(x))
nan_to_num_op = unary("nan_to_num", lambda x, nan, posinf, neginf: _nan_to_num(x, nan, posinf, neginf),
                      cats=ALL_CATS, nparams=3, complex_scalar=lambda x, nan, posinf, neginf: C._pack(
                          _nan_to_num(x.real, nan.real, posinf.real, neginf.real),
                          _nan_to_num(x.imag, nan.real, posinf.real, neginf.real)))

# The identity (clone, dtype casts, copy_ and out= copies run its kernel; copy_ and fill_
# themselves are records of defs/conversion.py).
copy_op = unary("copy", lambda x: x, complex_scalar=lambda x: x)
# Conversions of real values to a float dtype as pointwise ops: the compiler's passes turn a
# ``_to_copy`` that only changes a float32 value to float64 or back into one, which fuses
# (the decompositions square float32 deviations in float64). The cast is the line's own
# conversion of the operand to the compute dtype.
to_float32_op = unary("_to_float32", lambda x: x, rule=TO_FLOAT32, cats=REAL_CATS)
to_float64_op = unary("_to_float64", lambda x: x, rule=TO_FLOAT64, cats=REAL_CATS)


@njit(inline="always")
def _logit_clamped(x, lo, hi):
    z = lo if x < lo else hi if x > hi else x
    return fm.log(z / (fm.like(z, 1) - z))


@njit(inline="always")
def _erfinv(y):
    """Giles' single-precision erfinv approximation refined by two Newton steps."""
    if not (-1 < y < 1):
        return math.copysign(math.inf, y) if abs(y) == 1 else math.nan
    w = -math.log((1.0 - y) * (1.0 + y))
    if w < 5.0:
        w -= 2.5
        p = 2.81022636e-08
        for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                  -0.00417768164, 0.246640727, 1.50140941):
            p = c + p * w
    else:
        w = math.sqrt(w) - 3.0
        p = -0.000200214257
        for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                  0.00943887047, 1.00167406, 2.83297682):
            p = c + p * w
    x = p * y
    for _ in range(2):
        x -= (math.erf(x) - y) / (1.1283791670955126 * math.exp(-x * x))
    return x


# -- gradient rules: vjp(node, grad) in jtorch ops (so they are differentiable themselves) ----
# ``saves`` names what a rule reads: input positions, "o" for the output.

_LN2, _LN10 = math.log(2.0), math.log(10.0)
_2_SQRTPI = 2.0 / math.sqrt(math.pi)
_INV_SQRT2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_PI = math.sqrt(2.0 / math.pi)


def _x(c):
    return c.args[0]


def _acosh_vjp(c, g):
    """1 / sqrt(x^2 - 1); for complex x torch takes the principal branch's product form."""
    x = _x(c)
    if x.dtype.category == 3:
        return (g * P.rsqrt(x + 1) * P.rsqrt(x - 1),)
    return (g * P.rsqrt(x * x - 1),)


def _tanh_vjp(c, g):
    y = c.out
    return (P.tanh_backward(g, y) if y.dtype.category == 2 else g * (1 - y * y),)


def _sigmoid_vjp(c, g):
    y = c.out
    return (P.sigmoid_backward(g, y) if y.dtype.category == 2 else g * y * (1 - y),)


def _tanh_backward_vjp(c, gg):
    """d/dg = 1 - y^2 (tanh_backward again), d/dy = -2 g y."""
    g, y = c.args
    return (P.tanh_backward(gg, y) if c.needs[0] else None,
            gg * g * y * -2 if c.needs[1] else None)


def _sigmoid_backward_vjp(c, gg):
    """d/dg = y (1 - y) (sigmoid_backward again), d/dy = g (1 - 2 y)."""
    g, y = c.args
    return (P.sigmoid_backward(gg, y) if c.needs[0] else None,
            gg * g * (1 - 2 * y) if c.needs[1] else None)


def _gelu_backward_vjp(c, gg):
    """d/dg = gelu'(x) (gelu_backward again), d/dx = g gelu''(x) = g phi(x) (2 - x^2)."""
    g, x = c.args
    return (P.gelu_backward(gg, x) if c.needs[0] else None,
            gg * g * (_INV_SQRT2PI * P.exp(-0.5 * x * x)) * (2 - x * x) if c.needs[1] else None)


def _threshold_backward_vjp(c, gg):
    """As torch: the same mask applied to gg for g, zeros for y."""
    _, y, t = c.args
    return (P.threshold_backward(gg, y, t) if c.needs[0] else None,
            P.zeros_like(y) if c.needs[1] else None, None)


def _zero_grad(c, g):
    return (P.zeros_like(g),)


def _gelu_tanh_vjp(c, g):
    x = _x(c)
    x_sq = x * x
    t = P.tanh(_SQRT_2_PI * (x + 0.044715 * x_sq * x))
    left = 0.5 * x
    dright = (1 - t * t) * _SQRT_2_PI * (1 + 3 * 0.044715 * x_sq)
    return (g * (0.5 * (1 + t) + left * dright),)


def _mish_vjp(c, g):
    x = _x(c)
    t = P.tanh(P.softplus(x))
    return (g * (t + x * P.sigmoid(x) * (1 - t * t)),)


def _elu_vjp(c, g):
    x, alpha, scale, iscale = c.args
    return (P.where(x > 0, g * scale, g * (iscale * (c.out + alpha * scale))),)


def _softplus_vjp(c, g):
    x, beta, threshold = c.args
    z = x * beta
    return (P.where(z > threshold, g, g * P.sigmoid(z)),)


def _hardswish_vjp(c, g):
    x = _x(c)
    return (P.where(x < -3, 0.0, P.where(x <= 3, g * (x / 3 + 0.5), g)),)


def _logit_eps_vjp(c, g):
    x, lo, hi = c.args
    return (P.where((x < lo) | (x > hi), 0.0, g / (x * (1 - x))),)


# rules written g * f'(z): for complex values torch's are g * conj(f'(z))
_HOLOMORPHIC = {square_op, cube_op, sqrt_op, rsqrt_op, reciprocal_op, exp_op, exp2_op, expm1_op,
                log_op, log2_op, log10_op, log1p_op, sin_op, cos_op, tan_op, asin_op, acos_op,
                atan_op, sinh_op, cosh_op, tanh_op, asinh_op, acosh_op, atanh_op, sigmoid_op}

for _op, _rule, _saves in [
    (neg_op, lambda c, g: (-g,), ""),
    (abs_op, lambda c, g: (g * P.sign(_x(c)),), "0"),
    (sign_op, _zero_grad, ""),
    (sgn_op, _zero_grad, ""),
    (square_op, lambda c, g: (g * _x(c) * 2,), "0"),
    (cube_op, lambda c, g: (g * 3 * _x(c).square(),), "0"),
    (sqrt_op, lambda c, g: (g / (2 * c.out),), "o"),
    (rsqrt_op, lambda c, g: (-0.5 * g * c.out ** 3,), "o"),
    (reciprocal_op, lambda c, g: (-g * c.out * c.out,), "o"),
    (exp_op, lambda c, g: (g * c.out,), "o"),
    (exp2_op, lambda c, g: (g * c.out * _LN2,), "o"),
    (expm1_op, lambda c, g: (g * (c.out + 1),), "o"),
    (log_op, lambda c, g: (g / _x(c),), "0"),
    (log2_op, lambda c, g: (g / (_x(c) * _LN2),), "0"),
    (log10_op, lambda c, g: (g / (_x(c) * _LN10),), "0"),
    (log1p_op, lambda c, g: (g / (_x(c) + 1),), "0"),
    (sin_op, lambda c, g: (g * P.cos(_x(c)),), "0"),
    (cos_op, lambda c, g: (-g * P.sin(_x(c)),), "0"),
    (tan_op, lambda c, g: (g * (1 + c.out * c.out),), "o"),
    (asin_op, lambda c, g: (g * P.rsqrt(1 - _x(c) * _x(c)),), "0"),
    (acos_op, lambda c, g: (-g * P.rsqrt(1 - _x(c) * _x(c)),), "0"),
    (atan_op, lambda c, g: (g / (1 + _x(c) * _x(c)),), "0"),
    (sinh_op, lambda c, g: (g * P.cosh(_x(c)),), "0"),
    (cosh_op, lambda c, g: (g * P.sinh(_x(c)),), "0"),
    (tanh_op, _tanh_vjp, "o"),
    (tanh_backward_op, _tanh_backward_vjp, "01"),
    (asinh_op, lambda c, g: (g * P.rsqrt(_x(c) * _x(c) + 1),), "0"),
    (acosh_op, _acosh_vjp, "0"),
    (atanh_op, lambda c, g: (g / (1 - _x(c) * _x(c)),), "0"),
    (sigmoid_op, _sigmoid_vjp, "o"),
    (sigmoid_backward_op, _sigmoid_backward_vjp, "01"),
    (erf_op, lambda c, g: (g * _2_SQRTPI * P.exp(-_x(c) * _x(c)),), "0"),
    (erfc_op, lambda c, g: (-g * _2_SQRTPI * P.exp(-_x(c) * _x(c)),), "0"),
    (erfinv_op, lambda c, g: (g * (0.5 * math.sqrt(math.pi)) * P.exp(c.out * c.out),), "o"),
    (floor_op, _zero_grad, ""),
    (ceil_op, _zero_grad, ""),
    (trunc_op, _zero_grad, ""),
    (round_op, _zero_grad, ""),
    (frac_op, lambda c, g: (g,), ""),
    (relu_op, lambda c, g: (P.threshold_backward(g, c.out, 0),), "o"),
    (threshold_backward_op, _threshold_backward_vjp, "1"),
    (silu_op, lambda c, g: (g * _silu_grad(_x(c)),), "0"),
    (mish_op, _mish_vjp, "0"),
    (gelu_op, lambda c, g: (P.gelu_backward(g, _x(c)),), "0"),
    (gelu_backward_op, _gelu_backward_vjp, "01"),
    (gelu_tanh_op, _gelu_tanh_vjp, "0"),
    (leaky_relu_op, lambda c, g: (P.where(_x(c) > 0, g, g * c.args[1]), None), "0"),
    (hardtanh_op, lambda c, g: (P.where((_x(c) <= c.args[1]) | (_x(c) >= c.args[2]), 0.0, g),),
     "0"),
    (hardsigmoid_op, lambda c, g: (P.where((_x(c) > -3) & (_x(c) < 3), g / 6, 0.0),), "0"),
    (hardswish_op, _hardswish_vjp, "0"),
    (logsigmoid_op, lambda c, g: (g * P.sigmoid(-_x(c)),), "0"),
    (elu_op, _elu_vjp, "0o"),
    (softplus_op, _softplus_vjp, "0"),
    (logit_op, lambda c, g: (g / (_x(c) * (1 - _x(c))),), "0"),
    (logit_eps_op, _logit_eps_vjp, "0"),
    (nan_to_num_op, lambda c, g: (g * P.isfinite(_x(c)),), "0"),
    (sinc_op, lambda c, g: (P.where(_x(c) == 0, 0.0, g * (P.cos(math.pi * _x(c)) - c.out) / _x(c)),),
     "0o"),
    (copy_op, lambda c, g: (g,), ""),
    (to_float32_op, lambda c, g: (g.to(c._meta[0][1]),), ""),
    (to_float64_op, lambda c, g: (g.to(c._meta[0][1]),), ""),
]:
    defvjp(_op, holomorphic(_rule) if _op in _HOLOMORPHIC else _rule, _saves)
copy_op.grad_name = lambda a, kw: "ToCopyBackward0" if kw else "CloneBackward0"
to_float32_op.grad_name = to_float64_op.grad_name = "ToCopyBackward0"
square_op.grad_name = "PowBackward0"
cube_op.grad_name = "PowBackward0"
logsigmoid_op.grad_name = "LogSigmoidBackward0"
gelu_tanh_op.grad_name = "GeluBackward0"
gelu_backward_op.grad_name = "GeluBackwardBackward0"


def _silu_grad(x):
    s = P.sigmoid(x)
    return s * (1 + x * (1 - s))
