"""The von Mises distribution on the circle."""

from __future__ import annotations

import math
from typing import ClassVar

import jtorch
from jtorch.tensor import Tensor

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _eval_poly(y, coef):
    coef = list(coef)
    result = coef.pop()
    while coef:
        result = coef.pop() + y * result
    return result


# Abramowitz and Stegun's polynomial approximations of I0 and I1 (9.8.1-9.8.4)
_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813]
_I0_COEF_LARGE = [0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281, -0.02057706,
                  0.02635537, -0.01647633, 0.00392377]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532, 0.00032411]
_I1_COEF_LARGE = [0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555, 0.02282967,
                  -0.02895312, 0.01787654, -0.00420059]
_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for x > 0 (order 0 or 1)."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = (x / 3.75) ** 2
    small = _eval_poly(y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return jtorch.where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, x):
    """Best and Fisher's (1979) wrapped-Cauchy rejection sampler, all elements at once until
    every one is accepted."""
    done = jtorch.zeros(x.shape, dtype=jtorch.bool, device=loc.device)
    while not done.all():
        u1, u2, u3 = jtorch.rand((3,) + tuple(x.shape), dtype=loc.dtype,
                                 device=loc.device).unbind()
        z = jtorch.cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if accept.any():
            x = jtorch.where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """The circular normal: density ``exp(concentration cos(x - loc)) / (2 pi I0(k))`` on
    [-pi, pi).

    >>> VonMises(jtorch.tensor(0.0), jtorch.tensor(1.0)).mean
    tensor(0.)
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real,
                                       "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args: bool | None = None) -> None:
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, jtorch.Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * jtorch.cos(value - self.loc)
        return (log_prob - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    @lazy_property
    def _loc(self) -> Tensor:
        return self.loc.to(jtorch.double)

    @lazy_property
    def _concentration(self) -> Tensor:
        return self.concentration.to(jtorch.double)

    @lazy_property
    def _proposal_r(self) -> Tensor:
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa**2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho**2) / (2 * rho)
        taylor = 1 / kappa + kappa  # for small kappa, where rho loses precision
        return jtorch.where(kappa < 1e-5, taylor, proposal_r)

    def sample(self, sample_shape=()):
        """Draws in float64 (for the rejection test's accuracy), cast to loc's dtype."""
        with jtorch.no_grad():
            shape = self._extended_shape(sample_shape)
            x = jtorch.empty(shape, dtype=self._loc.dtype, device=self.loc.device)
            x = _rejection_sample(self._loc, self._concentration, self._proposal_r, x)
            return x.to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            loc = self.loc.expand(batch_shape)
            concentration = self.concentration.expand(batch_shape)
            return type(self)(loc, concentration, validate_args=validate_args)

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @lazy_property
    def variance(self) -> Tensor:
        k = self.concentration
        return 1 - (_log_modified_bessel_fn(k, order=1)
                    - _log_modified_bessel_fn(k, order=0)).exp()
