"""The multinomial distribution: category counts of ``total_count`` draws."""

from __future__ import annotations

import math
from typing import ClassVar

import jtorch
from jtorch.shape import Size
from jtorch.tensor import Tensor

from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """Counts per category of ``total_count`` Categorical(probs or logits) draws (one
    total_count for the whole batch).

    >>> Multinomial(4, jtorch.tensor([0.5, 0.5])).mean
    tensor([2., 2.])
    """

    arg_constraints: ClassVar[dict] = {"probs": constraints.simplex,
                                       "logits": constraints.real_vector}
    total_count: int

    @property
    def mean(self) -> Tensor:
        return self.probs * self.total_count

    @property
    def variance(self) -> Tensor:
        return self.total_count * self.probs * (1 - self.probs)

    def __init__(self, total_count: int = 1, probs=None, logits=None,
                 validate_args: bool | None = None) -> None:
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Multinomial, _instance)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        return self._expand_params(Multinomial, batch_shape, new)

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self) -> Tensor:
        return self._categorical.logits

    @property
    def probs(self) -> Tensor:
        return self._categorical.probs

    @property
    def param_shape(self) -> Size:
        return self._categorical.param_shape

    def sample(self, sample_shape=()):
        sample_shape = Size(sample_shape)
        samples = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        # (total_count, *sample, *batch) draws: count them along a new last dim
        order = list(range(samples.dim()))
        order.append(order.pop(0))
        samples = samples.permute(*order)
        counts = samples.new(self._extended_shape(sample_shape)).zero_()
        counts.scatter_add_(-1, samples, jtorch.ones_like(samples))
        return counts.type_as(self.probs)

    def entropy(self):
        n = jtorch.tensor(self.total_count)
        term1 = n * self._categorical.entropy() - jtorch.lgamma(n + 1)
        support = self._binomial.enumerate_support(expand=False)[1:]
        binomial_probs = jtorch.exp(self._binomial.log_prob(support))
        term2 = (binomial_probs * jtorch.lgamma(support + 1)).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        logits = logits.clone(memory_format=jtorch.contiguous_format)
        log_factorial_n = jtorch.lgamma(value.sum(-1) + 1)
        log_factorial_xs = jtorch.lgamma(value + 1).sum(-1)
        logits[(value == 0) & (logits == -math.inf)] = 0  # 0 * log(0) is 0 here
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)
