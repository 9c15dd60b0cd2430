"""The multivariate normal distribution, parameterised by a covariance, a precision or a
Cholesky factor of the covariance."""

from __future__ import annotations

import math
from typing import ClassVar

import jtorch
from jtorch.shape import Size
from jtorch.tensor import Tensor

from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """Matrix-vector products over broadcast batch dims."""
    return jtorch.matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """The squared Mahalanobis distance x^T (L L^T)^-1 x, for a lower-triangular L whose
    batch dims broadcast with x's. x's batch is reshaped so that L's batch dims lead in
    one triangular solve with all of x's remaining columns."""
    n = bx.size(-1)
    bx_batch_shape = bx.shape[:-1]
    bx_batch_dims = len(bx_batch_shape)
    bL_batch_dims = bL.dim() - 2
    outer = bx_batch_dims - bL_batch_dims
    old_batch_dims = outer + bL_batch_dims
    new_batch_dims = outer + 2 * bL_batch_dims
    # split each of x's dims matching one of L's into (sx // sL, sL)
    new_shape = bx.shape[:outer]
    for sL, sx in zip(bL.shape[:-2], bx.shape[outer:-1]):
        new_shape += (sx // sL, sL)
    new_shape += (n,)
    bx = bx.reshape(new_shape)
    # (outer dims, the sx // sL dims, the sL dims, n)
    permute_dims = (list(range(outer)) + list(range(outer, new_batch_dims, 2))
                    + list(range(outer + 1, new_batch_dims, 2)) + [new_batch_dims])
    bx = bx.permute(permute_dims)
    flat_L = bL.reshape(-1, n, n)
    flat_x = bx.reshape(-1, flat_L.size(0), n)
    flat_x_swap = flat_x.permute(1, 2, 0)  # (L batch, n, rest)
    M_swap = jtorch.linalg.solve_triangular(flat_L, flat_x_swap, upper=False).pow(2).sum(-2)
    permuted_M = M_swap.t().reshape(bx.shape[:-1])
    permute_inv_dims = list(range(outer))
    for i in range(bL_batch_dims):
        permute_inv_dims += [outer + i, old_batch_dims + i]
    return permuted_M.permute(permute_inv_dims).reshape(bx_batch_shape)


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of P^-1, from the Cholesky factor of P with reversed
    rows and columns (no inverse of P is formed)."""
    Lf = jtorch.linalg.cholesky(jtorch.flip(P, (-2, -1)))
    L_inv = jtorch.transpose(jtorch.flip(Lf, (-2, -1)), -2, -1)
    Id = jtorch.eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return jtorch.linalg.solve_triangular(L_inv, Id, upper=False)


class MultivariateNormal(Distribution):
    """N(loc, Sigma) over the last dim; exactly one of ``covariance_matrix``,
    ``precision_matrix`` or ``scale_tril`` (lower Cholesky factor of Sigma).

    >>> d = MultivariateNormal(jtorch.zeros(2), jtorch.eye(2))
    >>> d.log_prob(jtorch.zeros(2))
    tensor(-1.8379)
    """

    arg_constraints: ClassVar[dict] = {"loc": constraints.real_vector,
                                       "covariance_matrix": constraints.positive_definite,
                                       "precision_matrix": constraints.positive_definite,
                                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args: bool | None = None) -> None:
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        for name, m in (("scale_tril matrix", scale_tril), ("covariance_matrix", covariance_matrix),
                        ("precision_matrix", precision_matrix)):
            if m is None:
                continue
            if m.dim() < 2:
                raise ValueError(f"{name} must be at least two-dimensional, with optional "
                                 f"leading batch dimensions")
            batch_shape = jtorch.broadcast_shapes(m.shape[:-2], loc.shape[:-1])
            setattr(self, name.split()[0], m.expand(batch_shape + (-1, -1)))
        self.loc = loc.expand(batch_shape + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = jtorch.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        return self._expand_params(MultivariateNormal, batch_shape, new,
                                   ("loc", "covariance_matrix", "scale_tril",
                                    "precision_matrix"))

    def _matrix_shape(self) -> Size:
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return jtorch.matmul(L, L.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        inv = jtorch.cholesky_inverse(self._unbroadcasted_scale_tril)
        return inv.expand(self._matrix_shape())

    @property
    def mean(self) -> Tensor:
        return self.loc

    @property
    def mode(self) -> Tensor:
        return self.loc

    @property
    def variance(self) -> Tensor:
        v = self._unbroadcasted_scale_tril.pow(2).sum(-1)
        return v.expand(self._batch_shape + self._event_shape)

    def rsample(self, sample_shape=()) -> Tensor:
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return (-0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m)
                - self._half_log_det())

    def entropy(self):
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        if len(self._batch_shape) == 0:
            return h
        return h.expand(self._batch_shape)
