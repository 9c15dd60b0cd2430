"""The Cauchy (Lorentz) distribution."""

from __future__ import annotations

import math
from typing import ClassVar

import jtorch
from jtorch.tensor import Tensor

from . import constraints
from .distribution import Distribution
from .utils import _batch_shape, broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """Density ``1 / (pi scale (1 + ((x - loc) / scale)**2))``: no mean, infinite variance.

    >>> Cauchy(0.0, 1.0).cdf(jtorch.tensor(1.0))
    tensor(0.7500)
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args: bool | None = None) -> None:
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(_batch_shape((loc, scale), self.loc), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Cauchy, batch_shape, _instance, ("loc", "scale"))

    @property
    def mean(self) -> Tensor:
        return jtorch.full(self._extended_shape(), math.nan, dtype=self.loc.dtype,
                           device=self.loc.device)

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        return jtorch.full(self._extended_shape(), math.inf, dtype=self.loc.dtype,
                           device=self.loc.device)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = self.loc.new(shape).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - (z**2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return jtorch.atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return jtorch.tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
