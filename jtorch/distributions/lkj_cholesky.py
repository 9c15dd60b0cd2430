"""The LKJ distribution over Cholesky factors of correlation matrices."""

from __future__ import annotations

import math
from typing import ClassVar

import jtorch
from jtorch.shape import Size

from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """LKJ(dim, concentration) over lower Cholesky factors L of dim x dim correlation
    matrices (density proportional to det(L L^T)**(concentration - 1)); sampled by the onion
    method (Ghosh and Henderson, 2003).

    >>> LKJCholesky(3, 0.5).sample().shape
    torch.Size([3, 3])
    """

    arg_constraints: ClassVar[dict] = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim: int, concentration=1.0, validate_args: bool | None = None) -> None:
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        batch_shape = self.concentration.size()
        # the Beta marginals of the squared row norms of the onion construction
        marginal_conc = self.concentration + 0.5 * (self.dim - 2)
        offset = jtorch.arange(self.dim - 1, dtype=self.concentration.dtype,
                               device=self.concentration.device)
        offset = jtorch.cat([offset.new_zeros((1,)), offset])
        beta_conc1 = offset + 0.5
        beta_conc0 = marginal_conc.unsqueeze(-1) - 0.5 * offset
        self._beta = Beta(beta_conc1, beta_conc0)
        super().__init__(batch_shape, Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LKJCholesky, _instance)
        batch_shape = Size(batch_shape)
        new.dim = self.dim
        new._beta = self._beta.expand(batch_shape + (self.dim,))
        return self._expand_params(LKJCholesky, batch_shape, new, ("concentration",))

    def sample(self, sample_shape=()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u_normal = jtorch.randn(self._extended_shape(sample_shape), dtype=y.dtype,
                                device=y.device).tril(-1)
        u_hypersphere = u_normal / u_normal.norm(dim=-1, keepdim=True)
        u_hypersphere[..., 0, :].fill_(0.0)  # the first row is (1, 0, ..., 0)
        w = jtorch.sqrt(y) * u_hypersphere
        eps = jtorch.finfo(w.dtype).tiny
        diag_elems = jtorch.clamp(1 - jtorch.sum(w**2, dim=-1), min=eps).sqrt()
        return w + jtorch.diag_embed(diag_elems)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diag_elems = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = jtorch.arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized_log_pdf = jtorch.sum(order * diag_elems.log(), dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        denominator = jtorch.lgamma(alpha) * dm1
        numerator = jtorch.mvlgamma(alpha - 0.5, dm1)
        pi_constant = 0.5 * dm1 * math.log(math.pi)
        return unnormalized_log_pdf - (pi_constant + numerator - denominator)
