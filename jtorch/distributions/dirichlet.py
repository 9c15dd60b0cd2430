"""The Dirichlet distribution over the simplex."""

from __future__ import annotations

from typing import ClassVar

import jtorch
from jtorch.autograd import Function
from jtorch.autograd.function import once_differentiable
from jtorch.tensor import Tensor

from . import constraints
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


def _Dirichlet_backward(x, concentration, grad_output):
    total = concentration.sum(-1, True).expand_as(concentration)
    grad = jtorch._dirichlet_grad(x, concentration, total)
    return grad * (grad_output - (x * grad_output).sum(-1, True))


class _Dirichlet(Function):
    """Dirichlet draws with the implicit reparameterisation gradient of their Beta marginals."""

    @staticmethod
    def forward(ctx, concentration):
        x = jtorch._sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, concentration = ctx.saved_tensors
        return _Dirichlet_backward(x, concentration, grad_output)


class Dirichlet(ExponentialFamily):
    """Dirichlet with ``concentration`` over the last dim; rsample is differentiable.

    >>> Dirichlet(jtorch.tensor([1.0, 3.0])).mean
    tensor([0.2500, 0.7500])
    """

    arg_constraints: ClassVar[dict] = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args: bool | None = None) -> None:
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expand_params(Dirichlet, batch_shape, _instance, ("concentration",))

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        return _Dirichlet.apply(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return (jtorch.xlogy(c - 1.0, value).sum(-1) + jtorch.lgamma(c.sum(-1))
                - jtorch.lgamma(c).sum(-1))

    @property
    def mean(self) -> Tensor:
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self) -> Tensor:
        cm1 = (self.concentration - 1).clamp(min=0.0)
        mode = cm1 / cm1.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        mode[mask] = jtorch.nn.functional.one_hot(mode[mask].argmax(dim=-1),
                                                  cm1.shape[-1]).to(mode)
        return mode

    @property
    def variance(self) -> Tensor:
        c = self.concentration
        con0 = c.sum(-1, True)
        return c * (con0 - c) / (con0.pow(2) * (con0 + 1))

    def entropy(self):
        c = self.concentration
        k = c.size(-1)
        a0 = c.sum(-1)
        return (jtorch.lgamma(c).sum(-1) - jtorch.lgamma(a0) - (k - a0) * jtorch.digamma(a0)
                - ((c - 1.0) * jtorch.digamma(c)).sum(-1))

    @property
    def _natural_params(self) -> tuple:
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - jtorch.lgamma(x.sum(-1))


