"""The continuous Bernoulli distribution on [0, 1] (Loaiza-Ganem and Cunningham, 2019)."""

from __future__ import annotations

import math
from typing import ClassVar

import jtorch
from jtorch.shape import Size
from jtorch.tensor import Tensor

from . import constraints
from .exp_family import ExponentialFamily
from .utils import (
    _Number,
    _probs_xor_logits,
    broadcast_all,
    clamp_probs,
    lazy_property,
    logits_to_probs,
    probs_to_logits,
)

__all__ = ["ContinuousBernoulli"]

_w = jtorch.where


class ContinuousBernoulli(ExponentialFamily):
    """Density proportional to ``probs**x (1 - probs)**(1 - x)`` on [0, 1]. Near probs = 1/2
    (inside ``lims``) the normaliser and moments use Taylor expansions, where the closed forms
    lose precision.

    >>> ContinuousBernoulli(jtorch.tensor(0.5)).mean
    tensor(0.5000)
    """

    arg_constraints: ClassVar[dict] = {"probs": constraints.unit_interval,
                                       "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501),
                 validate_args: bool | None = None) -> None:
        _probs_xor_logits(probs, logits)
        if probs is not None:
            (self.probs,) = broadcast_all(probs)
            if validate_args is not None and not self.arg_constraints["probs"].check(
                    self.probs).all():
                raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            (self.logits,) = broadcast_all(logits)
        given = probs if probs is not None else logits
        self._param = self.probs if probs is not None else self.logits
        batch_shape = Size() if isinstance(given, _Number) else self._param.size()
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(ContinuousBernoulli, _instance)
        new._lims = self._lims
        return self._expand_params(ContinuousBernoulli, batch_shape, new, ("probs", "logits"))

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def _outside_unstable_region(self):
        return jtorch.max(jtorch.le(self.probs, self._lims[0]),
                          jtorch.gt(self.probs, self._lims[1]))

    def _cut_probs(self):
        return _w(self._outside_unstable_region(), self.probs,
                  self._lims[0] * jtorch.ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """The log normaliser log C(probs), as a function of probs."""
        cut = self._cut_probs()
        below = _w(jtorch.le(cut, 0.5), cut, jtorch.zeros_like(cut))
        above = _w(jtorch.ge(cut, 0.5), cut, jtorch.ones_like(cut))
        log_norm = (jtorch.log(jtorch.abs(jtorch.log1p(-cut) - jtorch.log(cut)))
                    - _w(jtorch.le(cut, 0.5), jtorch.log1p(-2.0 * below),
                         jtorch.log(2.0 * above - 1.0)))
        x = jtorch.pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return _w(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self) -> Tensor:
        cut = self._cut_probs()
        mus = cut / (2.0 * cut - 1.0) + 1.0 / (jtorch.log1p(-cut) - jtorch.log(cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * jtorch.pow(x, 2)) * x
        return _w(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self) -> Tensor:
        return jtorch.sqrt(self.variance)

    @property
    def variance(self) -> Tensor:
        cut = self._cut_probs()
        vars_ = (cut * (cut - 1.0) / jtorch.pow(1.0 - 2.0 * cut, 2)
                 + 1.0 / jtorch.pow(jtorch.log1p(-cut) - jtorch.log(cut), 2))
        x = jtorch.pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return _w(self._outside_unstable_region(), vars_, taylor)

    @lazy_property
    def logits(self) -> Tensor:
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self) -> Tensor:
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self) -> Size:
        return self._param.size()

    def sample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = jtorch.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with jtorch.no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        u = jtorch.rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        bce = jtorch.nn.functional.binary_cross_entropy_with_logits(logits, value,
                                                                    reduction="none")
        return -bce + self._cont_bern_log_norm()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut = self._cut_probs()
        cdfs = ((jtorch.pow(cut, value) * jtorch.pow(1.0 - cut, 1.0 - value) + cut - 1.0)
                / (2.0 * cut - 1.0))
        unbounded = _w(self._outside_unstable_region(), cdfs, value)
        return _w(jtorch.le(value, 0.0), jtorch.zeros_like(value),
                  _w(jtorch.ge(value, 1.0), jtorch.ones_like(value), unbounded))

    def icdf(self, value):
        cut = self._cut_probs()
        inv = ((jtorch.log1p(-cut + value * (2.0 * cut - 1.0)) - jtorch.log1p(-cut))
               / (jtorch.log(cut) - jtorch.log1p(-cut)))
        return _w(self._outside_unstable_region(), inv, value)

    def entropy(self):
        log_probs0 = jtorch.log1p(-self.probs)
        log_probs1 = jtorch.log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self) -> tuple:
        return (self.logits,)

    def _log_normalizer(self, x):
        """The log normaliser as a function of the natural parameter (the logits)."""
        outside = jtorch.max(jtorch.le(x, self._lims[0] - 0.5),
                              jtorch.gt(x, self._lims[1] - 0.5))
        cut = _w(outside, x, (self._lims[0] - 0.5) * jtorch.ones_like(x))
        log_norm = jtorch.log(jtorch.abs(jtorch.special.expm1(cut))) - jtorch.log(jtorch.abs(cut))
        taylor = 0.5 * x + jtorch.pow(x, 2) / 24.0 - jtorch.pow(x, 4) / 2880.0
        return _w(outside, log_norm, taylor)
