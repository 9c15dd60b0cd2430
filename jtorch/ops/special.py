"""torch's special functions at the top level and as Tensor methods (lgamma, digamma, polygamma,
mvlgamma, i0, frexp, nextafter); ``jtorch.special`` holds the rest of torch.special.

Each is one OpDef of ``kernels/defs/special.py`` called through ``dispatch.pointwise``.
"""

from __future__ import annotations

from .. import dispatch
from .. import dtypes as _dt
from ..kernels.defs import special as S
from ..tensor import Tensor
from .pointwise import _check_tensor
from .reduction import _return_type

__all__ = ["digamma", "frexp", "i0", "i0_", "lgamma", "mvlgamma", "nextafter", "polygamma"]

_pw = dispatch.pointwise
_check_inplace = dispatch.check_inplace
frexp_type = _return_type("frexp", ("mantissa", "exponent"))


def _unary(op, name: str):
    def fn(input, *, out=None):
        _check_tensor(input, name)
        return _pw(op, (input,), out)

    def inplace(self):
        _check_inplace(self)
        return _pw(op, (self,), inplace=True)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: elementwise, integers give the default float dtype."
    inplace.__name__ = inplace.__qualname__ = name + "_"
    return fn, inplace


lgamma, lgamma_ = _unary(S.lgamma_op, "lgamma")
digamma, digamma_ = _unary(S.digamma_op, "digamma")
i0, i0_ = _unary(S.i0_op, "i0")


def _check_n(n: int) -> None:
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")


def polygamma(n: int, input: Tensor, *, out=None) -> Tensor:
    """torch.polygamma: the n-th derivative of digamma.

    >>> jtorch.polygamma(1, jtorch.tensor([1.0]))
    tensor([1.6449])
    """
    _check_tensor(input, "polygamma")
    _check_n(n)
    return _pw(S.polygamma_op, (input, int(n)), out)


def _polygamma_method(self, n: int) -> Tensor:
    return polygamma(n, self)


def _polygamma_(self, n: int) -> Tensor:
    _check_n(n)
    _check_inplace(self)
    return _pw(S.polygamma_op, (self, int(n)), inplace=True)


def _check_p(p: int) -> None:
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


def mvlgamma(input: Tensor, p: int, *, out=None) -> Tensor:
    """torch.mvlgamma: the multivariate log-gamma of dimension p."""
    _check_tensor(input, "mvlgamma")
    _check_p(p)
    return _pw(S.mvlgamma_op, (input, int(p)), out)


def _mvlgamma_method(self, p: int) -> Tensor:
    return mvlgamma(self, p)


def _mvlgamma_(self, p: int) -> Tensor:
    _check_p(p)
    _check_inplace(self)
    return _pw(S.mvlgamma_op, (self, int(p)), inplace=True)


def nextafter(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """torch.nextafter: the next float after input towards other."""
    _check_tensor(input, "nextafter")
    return _pw(S.nextafter_op, (input, other), out)


def _nextafter_method(self, other: Tensor) -> Tensor:
    return nextafter(self, other)


def _nextafter_(self, other: Tensor) -> Tensor:
    _check_inplace(self)
    return _pw(S.nextafter_op, (self, other), inplace=True)


def frexp(input: Tensor, *, out=None):
    """torch.frexp: (mantissa, exponent) with input = mantissa * 2**exponent, |mantissa| in
    [0.5, 1); the exponent is int32."""
    _check_tensor(input, "frexp")
    m = _pw(S.frexp_mantissa_op, (input,), None if out is None else out[0])
    e = _pw(S.frexp_exponent_op, (input,)).to(_dt.int32)
    if out is not None:
        out[1].copy_(e)
        e = out[1]
    return frexp_type(m, e)


def _frexp_method(self):
    return frexp(self)


METHODS = {
    "lgamma": lambda self: lgamma(self), "lgamma_": lgamma_,
    "digamma": lambda self: digamma(self), "digamma_": digamma_,
    "i0": lambda self: i0(self), "i0_": i0_,
    "polygamma": _polygamma_method, "polygamma_": _polygamma_,
    "mvlgamma": _mvlgamma_method, "mvlgamma_": _mvlgamma_,
    "nextafter": _nextafter_method, "nextafter_": _nextafter_,
    "frexp": _frexp_method,
}
