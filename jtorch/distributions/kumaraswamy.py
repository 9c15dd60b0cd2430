"""The Kumaraswamy distribution on (0, 1)."""

from __future__ import annotations

import math
from typing import ClassVar

import jtorch
from jtorch.tensor import Tensor

from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """The n-th moment: b B(1 + n / a, b)."""
    arg1 = 1 + n / a
    log_value = jtorch.lgamma(arg1) + jtorch.lgamma(b) - jtorch.lgamma(arg1 + b)
    return b * jtorch.exp(log_value)


class Kumaraswamy(TransformedDistribution):
    """Density ``a b x**(a - 1) (1 - x**a)**(b - 1)``: ``(1 - U**(1 / b))**(1 / a)`` for U
    uniform.

    >>> Kumaraswamy(jtorch.tensor(1.0), jtorch.tensor(1.0)).mean
    tensor(0.5000)
    """

    arg_constraints: ClassVar[dict] = {"concentration1": constraints.positive,
                                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args: bool | None = None) -> None:
        self.concentration1, self.concentration0 = broadcast_all(concentration1, concentration0)
        base = Uniform(jtorch.full_like(self.concentration0, 0),
                       jtorch.full_like(self.concentration0, 1), validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self) -> Tensor:
        c0, c1 = self.concentration0, self.concentration1
        log_mode = c0.reciprocal() * (-c0).log1p() - (-c0 * c1).log1p()
        log_mode[(c0 < 1) | (c1 < 1)] = math.nan
        return log_mode.exp()

    @property
    def variance(self) -> Tensor:
        return _moments(self.concentration1, self.concentration0, 2) - jtorch.pow(self.mean, 2)

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = jtorch.digamma(self.concentration0 + 1) + euler_constant
        return (t0 + t1 * h0 - jtorch.log(self.concentration1)
                - jtorch.log(self.concentration0))
