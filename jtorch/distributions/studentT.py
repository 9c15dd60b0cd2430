"""Student's t distribution."""
# ruff: noqa: N999  (torch's module name)

from __future__ import annotations

import math
from typing import ClassVar

import jtorch
from jtorch.tensor import Tensor

from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t with ``df`` degrees of freedom, location ``loc`` and scale ``scale``;
    rsample is a normal over the root of a scaled Chi2 draw (differentiable in df too).

    >>> StudentT(jtorch.tensor(3.0)).variance
    tensor(3.)
    """

    arg_constraints: ClassVar[dict] = {"df": constraints.positive, "loc": constraints.real,
                                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args: bool | None = None) -> None:
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(StudentT, _instance)
        new._chi2 = self._chi2.expand(batch_shape)
        return self._expand_params(StudentT, batch_shape, new, ("df", "loc", "scale"))

    @property
    def mean(self) -> Tensor:
        m = self.loc.clone(memory_format=jtorch.contiguous_format)
        m[self.df <= 1] = math.nan
        return m

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        df = self.df
        m = df.clone(memory_format=jtorch.contiguous_format)
        big = df > 2
        m[big] = self.scale[big].pow(2) * df[big] / (df[big] - 2)
        m[(df <= 2) & (df > 1)] = math.inf
        m[df <= 1] = math.nan
        return m

    def rsample(self, sample_shape=()) -> Tensor:
        # X ~ Normal(0, 1), Z ~ Chi2(df): Y = X / sqrt(Z / df) ~ StudentT(df)
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * x * jtorch.rsqrt(z / self.df)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + jtorch.lgamma(0.5 * self.df) - jtorch.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * jtorch.log1p(y**2.0 / self.df) - z

    def entropy(self):
        df = self.df
        lbeta = jtorch.lgamma(0.5 * df) + math.lgamma(0.5) - jtorch.lgamma(0.5 * (df + 1))
        return (self.scale.log()
                + 0.5 * (df + 1) * (jtorch.digamma(0.5 * (df + 1)) - jtorch.digamma(0.5 * df))
                + 0.5 * df.log() + lbeta)
