"""Exponential families: the distributions whose density is
``exp(<t(x), theta> - F(theta) + k(x))``, so that entropy and KL divergence follow from the
log normaliser ``F`` and its gradient (Bregman divergences)."""

from __future__ import annotations

import jtorch
from jtorch.tensor import Tensor

from .distribution import Distribution

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """Subclasses give ``_natural_params`` (theta), ``_log_normalizer(*theta)`` (F) and
    ``_mean_carrier_measure`` (E[k(x)])."""

    @property
    def _natural_params(self) -> tuple:
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> float:
        raise NotImplementedError

    def entropy(self) -> Tensor:
        """H = F(theta) - <theta, grad F(theta)> - E[k(x)]."""
        result = -self._mean_carrier_measure
        nparams = [p.detach().requires_grad_() for p in self._natural_params]
        lg_normal = self._log_normalizer(*nparams)
        gradients = jtorch.autograd.grad(lg_normal.sum(), nparams, create_graph=True)
        result = result + lg_normal
        for p, g in zip(nparams, gradients):
            result = result - (p * g).reshape(self._batch_shape + (-1,)).sum(-1)
        return result
