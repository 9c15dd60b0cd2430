"""The negative binomial distribution."""

from __future__ import annotations

from typing import ClassVar

import jtorch
from jtorch.shape import Size
from jtorch.tensor import Tensor

from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _probs_xor_logits, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["NegativeBinomial"]


class NegativeBinomial(Distribution):
    """Successes of Bernoulli(probs) trials before ``total_count`` failures (a Poisson with a
    Gamma-distributed rate).

    >>> NegativeBinomial(jtorch.tensor(3.0), probs=jtorch.tensor(0.5)).mean
    tensor(3.)
    """

    arg_constraints: ClassVar[dict] = {"total_count": constraints.greater_than_eq(0),
                                       "probs": constraints.half_open_interval(0.0, 1.0),
                                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None,
                 validate_args: bool | None = None) -> None:
        _probs_xor_logits(probs, logits)
        if probs is not None:
            self.total_count, self.probs = broadcast_all(total_count, probs)
            self.total_count = self.total_count.type_as(self.probs)
        else:
            self.total_count, self.logits = broadcast_all(total_count, logits)
            self.total_count = self.total_count.type_as(self.logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(self._param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(NegativeBinomial, batch_shape, _instance,
                                   ("total_count", "probs", "logits"))

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @property
    def mean(self) -> Tensor:
        return self.total_count * jtorch.exp(self.logits)

    @property
    def mode(self) -> Tensor:
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self) -> Tensor:
        return self.mean / jtorch.sigmoid(-self.logits)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    @lazy_property
    def _gamma(self) -> Gamma:
        # the mixing distribution of the rate
        return Gamma(concentration=self.total_count, rate=jtorch.exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=()):
        with jtorch.no_grad():
            return jtorch.poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        F = jtorch.nn.functional
        n = self.total_count
        log_unnormalized = n * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        log_normalization = (-jtorch.lgamma(n + value) + jtorch.lgamma(1.0 + value)
                             + jtorch.lgamma(n))
        # the normaliser is 1 (log 0) where total_count + value == 0
        log_normalization = log_normalization.masked_fill(n + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
