"""The generalised Pareto distribution."""

from __future__ import annotations

import math
from numbers import Number, Real
from typing import ClassVar

import jtorch

from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """GPD(loc, scale, concentration): exponential tails for concentration 0, heavy for > 0,
    bounded above for < 0.

    >>> GeneralizedPareto(0.0, 1.0, 0.0).cdf(jtorch.tensor(1.0))
    tensor(0.6321)
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real, "scale": constraints.positive,
                                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        if all(isinstance(a, Number) for a in (loc, scale, concentration)):
            batch_shape = jtorch.Size()
        else:
            batch_shape = self.loc.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(GeneralizedPareto, batch_shape, _instance,
                                   ("loc", "scale", "concentration"))

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        u = jtorch.rand(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.icdf(u)

    def _safe_concentration(self):
        """(concentration == 0, concentration with its zeros replaced by ones)."""
        eq_zero = jtorch.isclose(self.concentration, jtorch.tensor(0.0))
        return eq_zero, jtorch.where(eq_zero, jtorch.ones_like(self.concentration),
                                     self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        y = 1 / safe_conc + jtorch.ones_like(z)
        where_nonzero = jtorch.where(y == 0, y, y * jtorch.log1p(safe_conc * z))
        log_scale = math.log(self.scale) if isinstance(self.scale, Real) else self.scale.log()
        return -log_scale - jtorch.where(eq_zero, z, where_nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, safe_conc = self._safe_concentration()
        where_nonzero = -jtorch.log1p(safe_conc * z) / safe_conc
        return jtorch.where(eq_zero, -z, where_nonzero)

    def log_cdf(self, value):
        return jtorch.log1p(-jtorch.exp(self.log_survival_function(value)))

    def cdf(self, value):
        return jtorch.exp(self.log_cdf(value))

    def icdf(self, value):
        loc, scale, concentration = self.loc, self.scale, self.concentration
        eq_zero = jtorch.isclose(concentration, jtorch.zeros_like(concentration))
        safe_conc = jtorch.where(eq_zero, jtorch.ones_like(concentration), concentration)
        logu = jtorch.log1p(-value)
        where_nonzero = loc + scale / safe_conc * jtorch.expm1(-safe_conc * logu)
        return jtorch.where(eq_zero, loc - scale * logu, where_nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        safe_conc = jtorch.where(valid, self.concentration, 0.5)
        return jtorch.where(valid, self.loc + self.scale / (1 - safe_conc), math.nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        safe_conc = jtorch.where(valid, self.concentration, 0.25)
        result = self.scale**2 / ((1 - safe_conc) ** 2 * (1 - 2 * safe_conc))
        return jtorch.where(valid, result, math.nan)

    def entropy(self):
        ans = jtorch.log(self.scale) + self.concentration + 1
        return jtorch.broadcast_to(ans, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = jtorch.where(self.concentration < 0, lower - self.scale / self.concentration,
                             math.inf)
        return constraints.interval(lower, upper)
