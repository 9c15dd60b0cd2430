"""Special functions as pointwise ops (gamma family, incomplete gamma, Bessel I0/I1, normal
distribution, zeta, nextafter, frexp's parts; torch.special's Bessel, Airy and orthogonal
polynomial functions), so that they fuse in compiled graphs like any unary or binary op.

The scalar math is in ``kernels/special_math.py``, ``bessel_math.py`` and ``polynomial_math.py``
(float64 inside; ``fm.like`` rounds the result to the compute dtype). Integer inputs give the
default float dtype, as torch's.
"""
# ruff: noqa: PLR0124  (x != x is the nan test)

import math

import numpy as np

from ... import dispatch
from ...tensor import Tensor
from .. import bessel_math as bm
from .. import fastmath as fm
from .. import polynomial_math as pm
from .. import special_math as sp
from ..registry import INT_TO_FLOAT, REGISTRY, binary, defvjp, unary
from . import _prims as P

_FLOAT = frozenset({2})


def _frexp_check(common, args):
    if common.category != 2:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")


def _mvlgamma_check(common, args):
    x = args[0]
    if getattr(x, "dtype", None) is not None and x.dtype.category == 0:
        raise RuntimeError("The input tensor may not be a boolean tensor.")


lgamma_op = unary("lgamma", lambda x: fm.like(x, sp.lgamma(x)), rule=INT_TO_FLOAT)
digamma_op = unary("digamma", lambda x: fm.like(x, sp.digamma(x)), rule=INT_TO_FLOAT)
# polygamma(n, x): n is the trailing parameter (cast to the compute dtype; the scalar takes
# its integer part), so that x alone takes part in promotion as in torch.
polygamma_op = unary("polygamma", lambda x, n: fm.like(x, sp.polygamma(n, x)), rule=INT_TO_FLOAT,
                     nparams=1)
mvlgamma_op = unary("mvlgamma", lambda x, p: fm.like(x, sp.mvlgamma(x, p)), rule=INT_TO_FLOAT,
                    nparams=1, check=_mvlgamma_check)
i0_op = unary("i0", lambda x: fm.like(x, sp.i0(x)), rule=INT_TO_FLOAT)
i0e_op = unary("i0e", lambda x: fm.like(x, sp.i0e(x)), rule=INT_TO_FLOAT,
               kernel_name="special_i0e_cpu")
i1_op = unary("i1", lambda x: fm.like(x, sp.i1(x)), rule=INT_TO_FLOAT, kernel_name="special_i1_cpu")
i1e_op = unary("i1e", lambda x: fm.like(x, sp.i1e(x)), rule=INT_TO_FLOAT,
               kernel_name="special_i1e_cpu")
ndtr_op = unary("ndtr", lambda x: fm.like(x, sp.ndtr(x)), rule=INT_TO_FLOAT,
                kernel_name="special_ndtr_cpu")
ndtri_op = unary("ndtri", lambda x: fm.like(x, sp.ndtri(x)), rule=INT_TO_FLOAT,
                 kernel_name="special_ndtri_cpu")
log_ndtr_op = unary("log_ndtr", lambda x: fm.like(x, sp.log_ndtr(x)), rule=INT_TO_FLOAT,
                    kernel_name="special_log_ndtr_cpu")
erfcx_op = unary("erfcx", lambda x: fm.like(x, sp.erfcx(x)), rule=INT_TO_FLOAT,
                 kernel_name="special_erfcx_cpu")
entr_op = unary("entr", lambda x: fm.like(x, sp.entr(x)), rule=INT_TO_FLOAT,
                kernel_name="special_entr_cpu")
xlog1py_op = binary("xlog1py", lambda x, y: y if y != y else (
    fm.like(x, 0) if x == 0 else fm.like(x, x * math.log1p(y))), rule=INT_TO_FLOAT,
    kernel_name="special_xlog1py_cpu")
zeta_op = binary("zeta", lambda x, q: fm.like(x, sp.zeta(x, q)), rule=INT_TO_FLOAT,
                 kernel_name="special_zeta_cpu")
# The regularized incomplete gamma functions P(a, x) and Q(a, x): floating dtypes only, as torch's
# kernels ("igamma_cpu" not implemented for 'Long').
igamma_op = binary("igamma", lambda a, x: fm.like(a, sp.igamma(a, x)), cats=_FLOAT)
igammac_op = binary("igammac", lambda a, x: fm.like(a, sp.igammac(a, x)), cats=_FLOAT)
nextafter_op = binary("nextafter", lambda x, y: np.nextafter(x, y), cats=_FLOAT,
                      differentiable=False)
# torch.frexp's two results, one op each (the exponent is computed in the input's dtype and
# cast to int32 by jtorch.frexp)
frexp_mantissa_op = unary("frexp_mantissa", lambda x: fm.like(x, math.frexp(x)[0]), cats=_FLOAT,
                          check=_frexp_check)
frexp_exponent_op = unary("frexp_exponent", lambda x: fm.like(x, math.frexp(x)[1]), cats=_FLOAT,
                          check=_frexp_check, differentiable=False)


# torch.special's Bessel and Airy functions of x and orthogonal polynomials of (x, n): torch builds
# their kernels for float32 and float64 only, and defines no derivative (their results do not
# require grad). A polynomial's n is an operand like x (promoted with it; torch truncates it).


def _float32_64(name: str):
    def check(common, args):
        if common.category == 2 and common.itemsize < 4:
            raise NotImplementedError(f"\"{name}_cpu\" not implemented for '{common.scalar_name}'")

    return check


BESSEL_OPS = {name: unary(name, getattr(bm, name), rule=INT_TO_FLOAT, check=_float32_64(name),
                          differentiable=False)
              for name in ("airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
                           "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
                           "modified_bessel_k1", "scaled_modified_bessel_k0",
                           "scaled_modified_bessel_k1", "spherical_bessel_j0")}
POLYNOMIAL_OPS = {name: binary(name, getattr(pm, name), rule=INT_TO_FLOAT, check=_float32_64(name),
                               differentiable=False)
                  for name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u",
                               "chebyshev_polynomial_v", "chebyshev_polynomial_w",
                               "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
                               "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
                               "hermite_polynomial_h", "hermite_polynomial_he",
                               "laguerre_polynomial_l", "legendre_polynomial_p")}


# -- gradient rules (jtorch ops; the special functions' derivatives are special functions) ----

_SQRT_2PI = math.sqrt(2 * math.pi)
_2_SQRTPI = 2 / math.sqrt(math.pi)


def _pw(name, *args):
    return dispatch.pointwise(REGISTRY[name], args)


def _x(c):
    return c.args[0]


def _mvlgamma_vjp(c, g):
    x, p = c.args
    p = int(p)
    acc = None
    for j in range(p):
        d = _pw("digamma", x + (-p * 0.5 + 0.5 + j * 0.5))
        acc = d if acc is None else acc + d
    return (g * acc, None)


def _safe_tiny(x):
    """torch's i1/i1e backward: |x| <= eps is replaced by eps, whose gradient is set to 0.5."""
    eps = float(np.finfo(x.dtype.np).eps)
    tiny = x.abs() <= eps
    return tiny, P.where(tiny, eps, x)


def _i1_vjp(c, g):
    tiny, s = _safe_tiny(_x(c))
    return (g * P.where(tiny, 0.5, _pw("i0", s) - c.out * s.reciprocal()),)


def _i1e_vjp(c, g):
    tiny, s = _safe_tiny(_x(c))
    return (g * P.where(tiny, 0.5, _pw("i0e", s) - c.out * (P.sign(s) + s.reciprocal())),)


def _xlog1py_vjp(c, g):
    x, y = c.args
    gx = gy = None
    if c.needs[0]:
        gx = P.where((x == 0) & (y <= -1), 0.0, _pw("xlog1py", g, y))
    if c.needs[1]:
        gy = g * x / (y + 1)
    return gx, gy


def _zeta_vjp(c, g):
    x, q = c.args
    if c.needs[0]:
        raise NotImplementedError("the derivative for 'zeta' is not implemented.")
    return None, g * -x * _pw("zeta", x + 1.0, q)


def _igamma_vjp(sign: float, name: str):
    """d/dx P(a, x) = x^(a-1) e^-x / Gamma(a) = -d/dx Q(a, x); torch has no derivative in a."""
    def vjp(c, g):
        a, x = c.args
        if c.needs[0]:
            raise NotImplementedError(f"the derivative for '{name}: input' is not implemented.")
        d = P.exp((a - 1) * P.log(x) - x - _pw("lgamma", a))
        return None, (g * d if sign > 0 else -g * d)

    return vjp


def _frexp_vjp(c, g):
    return (g / P.exp2(_pw("frexp_exponent", _x(c))),)


for _op, _rule, _saves in [
    (lgamma_op, lambda c, g: (g * _pw("digamma", _x(c)),), "0"),
    (digamma_op, lambda c, g: (g * _pw("polygamma", _x(c), 1),), "0"),
    (polygamma_op, lambda c, g: (g * _pw("polygamma", _x(c), int(c.args[1]) + 1), None), "01"),
    (mvlgamma_op, _mvlgamma_vjp, "01"),
    (i0_op, lambda c, g: (g * _pw("i1", _x(c)),), "0"),
    (i0e_op, lambda c, g: (g * (_pw("i1e", _x(c)) - P.sign(_x(c)) * c.out),), "0o"),
    (i1_op, _i1_vjp, "0o"),
    (i1e_op, _i1e_vjp, "0o"),
    (ndtr_op, lambda c, g: (g * P.exp(_x(c) * _x(c) * -0.5) / _SQRT_2PI,), "0"),
    (ndtri_op, lambda c, g: (g * _SQRT_2PI * P.exp(c.out * c.out / 2),), "o"),
    (log_ndtr_op, lambda c, g: (g / _SQRT_2PI * P.exp(-(c.out + _x(c) * _x(c) / 2)),), "0o"),
    (erfcx_op, lambda c, g: ((2.0 * _x(c) * c.out - _2_SQRTPI) * g,), "0o"),
    (entr_op, lambda c, g: (g * -(1 + P.log(_x(c))),), "0"),
    (xlog1py_op, _xlog1py_vjp, "01"),
    (zeta_op, _zeta_vjp, "01"),
    (igamma_op, _igamma_vjp(1.0, "igamma"), "01"),
    (igammac_op, _igamma_vjp(-1.0, "igammac"), "01"),
    (frexp_mantissa_op, _frexp_vjp, "0"),
]:
    defvjp(_op, _rule, _saves)
i0e_op.grad_name = "SpecialI0EBackward0"
i1_op.grad_name = "SpecialI1Backward0"
i1e_op.grad_name = "SpecialI1EBackward0"
ndtr_op.grad_name = "MulBackward1"  # torch composes special_ndtr from erfc
ndtri_op.grad_name = "SpecialNdtriBackward0"
log_ndtr_op.grad_name = "SpecialLogNdtrBackward0"
erfcx_op.grad_name = "SpecialErfcxBackward0"
entr_op.grad_name = "SpecialEntrBackward0"
xlog1py_op.grad_name = "SpecialXlog1PyBackward0"
zeta_op.grad_name = lambda a, kw: ("SpecialZetaBackward1" if not isinstance(a[0], Tensor) else
                                   "SpecialZetaBackward2" if not isinstance(a[1], Tensor) else
                                   "SpecialZetaBackward0")
frexp_mantissa_op.grad_name = "FrexpBackward0"
