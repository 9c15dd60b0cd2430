"""The binomial distribution: successes in ``total_count`` Bernoulli trials."""

from __future__ import annotations

from typing import ClassVar

import jtorch
from jtorch.shape import Size
from jtorch.tensor import Tensor

from . import constraints
from .distribution import Distribution
from .utils import _probs_xor_logits, broadcast_all, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["Binomial"]


def _clamp_by_zero(x):
    """max(x, 0) with the gradient 1/2 at 0 (torch's form)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


def _homogeneous_count(d, what: str) -> int:
    n = int(d.total_count.max())
    if not d.total_count.min() == n:
        raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
    return n


class Binomial(Distribution):
    """Successes in ``total_count`` trials of probability ``probs`` (or ``sigmoid(logits)``).

    >>> Binomial(4, jtorch.tensor(0.5)).mean
    tensor(2.)
    """

    arg_constraints: ClassVar[dict] = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None,
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
        return self._expand_params(Binomial, batch_shape, _instance,
                                   ("total_count", "probs", "logits"))

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self) -> Tensor:
        return self.total_count * self.probs

    @property
    def mode(self) -> Tensor:
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return logits_to_probs(self.logits, is_binary=True)

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        with jtorch.no_grad():
            return jtorch.binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        log_factorial_n = jtorch.lgamma(n + 1)
        log_factorial_k = jtorch.lgamma(value + 1)
        log_factorial_nmk = jtorch.lgamma(n - value + 1)
        # n log(1 + exp(logits)), stably: n max(logits, 0) + n log1p(exp(-|logits|))
        normalize_term = (n * _clamp_by_zero(self.logits)
                          + n * jtorch.log1p(jtorch.exp(-jtorch.abs(self.logits)))
                          - log_factorial_n)
        return value * self.logits - log_factorial_k - log_factorial_nmk - normalize_term

    def entropy(self):
        _homogeneous_count(self, "entropy")
        log_prob = self.log_prob(self.enumerate_support(False))
        return -(jtorch.exp(log_prob) * log_prob).sum(0)

    def enumerate_support(self, expand=True):
        n = _homogeneous_count(self, "enumerate_support")
        values = jtorch.arange(1 + n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + self._batch_shape)
        return values
