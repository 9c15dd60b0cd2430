"""The gamma distribution."""

from __future__ import annotations

from typing import ClassVar

import jtorch
from jtorch.tensor import Tensor

from . import constraints
from .exp_family import ExponentialFamily
from .utils import _batch_shape, broadcast_all

__all__ = ["Gamma"]


def _standard_gamma(concentration):
    return jtorch._standard_gamma(concentration)


class Gamma(ExponentialFamily):
    """Shape ``concentration`` and ``rate`` (inverse scale); rsample is differentiable in both
    (the implicit reparameterisation of ``_standard_gamma``).

    >>> Gamma(jtorch.tensor(2.0), jtorch.tensor(4.0)).mean
    tensor(0.5000)
    """

    arg_constraints: ClassVar[dict] = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args: bool | None = None) -> None:
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(_batch_shape((concentration, rate), self.concentration),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Gamma, batch_shape, _instance, ("concentration", "rate"))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.rate

    @property
    def mode(self) -> Tensor:
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self) -> Tensor:
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=jtorch.finfo(value.dtype).tiny)  # do not record the clamp
        return value

    def log_prob(self, value):
        value = jtorch.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        c, r = self.concentration, self.rate
        return jtorch.xlogy(c, r) + jtorch.xlogy(c - 1, value) - r * value - jtorch.lgamma(c)

    def entropy(self):
        c = self.concentration
        return c - jtorch.log(self.rate) + jtorch.lgamma(c) + (1.0 - c) * jtorch.digamma(c)

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return jtorch.lgamma(x + 1) + (x + 1) * jtorch.log(-y.reciprocal())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        gammainc = getattr(jtorch.special, "gammainc", None)
        if gammainc is None:
            raise NotImplementedError("Gamma.cdf needs torch.special.gammainc (the regularized "
                                      "incomplete gamma function), which jtorch lacks yet")
        return gammainc(self.concentration, self.rate * value)
