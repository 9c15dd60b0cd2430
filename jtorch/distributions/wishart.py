"""The Wishart distribution over positive-definite matrices."""

from __future__ import annotations

import math
import warnings

import jtorch
from jtorch.shape import Size
from jtorch.tensor import Tensor

from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import _Number, lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x: Tensor, p: int) -> Tensor:
    if not x.gt((p - 1) / 2).all():
        raise AssertionError("Wrong domain for multivariate digamma function.")
    k = jtorch.arange(p, dtype=x.dtype, device=x.device).div(2).expand(x.shape + (-1,))
    return jtorch.digamma(x.unsqueeze(-1) - k).sum(-1)


def _clamp_above_eps(x: Tensor) -> Tensor:
    return x.clamp(min=jtorch.finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """Wishart(df, Sigma): the scatter matrix of ``df`` draws of N(0, Sigma); exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril``. Sampled by Bartlett's
    decomposition (rsample is differentiable).

    >>> Wishart(jtorch.tensor(3.0), covariance_matrix=jtorch.eye(2)).mean
    tensor([[3., 0.],
            [0., 3.]])
    """

    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args: bool | None = None) -> None:
        given = [m is not None for m in (covariance_matrix, scale_tril, precision_matrix)]
        if sum(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        param = next(p for p in (covariance_matrix, precision_matrix, scale_tril)
                     if p is not None)
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, _Number):
            batch_shape = Size(param.shape[:-2])
            self.df = jtorch.tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = jtorch.broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        if self.df.le(event_shape[-1] - 1).any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{event_shape[-1] - 1}.")
        if scale_tril is not None:
            self.scale_tril = param.expand(batch_shape + (-1, -1))
        elif covariance_matrix is not None:
            self.covariance_matrix = param.expand(batch_shape + (-1, -1))
        else:
            self.precision_matrix = param.expand(batch_shape + (-1, -1))
        if self.df.lt(event_shape[-1]).any():
            warnings.warn("Low df values detected. Singular samples are highly likely to occur "
                          "for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if scale_tril is not None:
            self._unbroadcasted_scale_tril = scale_tril
        elif covariance_matrix is not None:
            self._unbroadcasted_scale_tril = jtorch.linalg.cholesky(covariance_matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(precision_matrix)
        self._dist_chi2 = self._chi2(batch_shape)

    def _chi2(self, batch_shape) -> Chi2:
        """Bartlett's diagonal: Chi2(df - i) for i = 0..p-1."""
        ar = jtorch.arange(self._event_shape[-1], dtype=self._unbroadcasted_scale_tril.dtype,
                           device=self._unbroadcasted_scale_tril.device)
        return Chi2(df=self.df.unsqueeze(-1) - ar.expand(batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(
            batch_shape + self.event_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        new = self._expand_params(Wishart, batch_shape, new,
                                  ("df", "covariance_matrix", "scale_tril", "precision_matrix"))
        new._dist_chi2 = new._chi2(batch_shape)
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape

    @lazy_property
    def scale_tril(self) -> Tensor:
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self) -> Tensor:
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self) -> Tensor:
        identity = jtorch.eye(self._event_shape[-1], device=self._unbroadcasted_scale_tril.device,
                              dtype=self._unbroadcasted_scale_tril.dtype)
        return jtorch.cholesky_solve(identity, self._unbroadcasted_scale_tril).expand(
            self._matrix_shape())

    @property
    def mean(self) -> Tensor:
        return self.df.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def mode(self) -> Tensor:
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor[factor <= 0] = math.nan
        return factor.view(self._batch_shape + (1, 1)) * self.covariance_matrix

    @property
    def variance(self) -> Tensor:
        v = self.covariance_matrix
        diag_v = v.diagonal(dim1=-2, dim2=-1)
        return self.df.view(self._batch_shape + (1, 1)) * (
            v.pow(2) + jtorch.einsum("...i,...j->...ij", diag_v, diag_v))

    def _bartlett_sampling(self, sample_shape=()):
        p = self._event_shape[-1]
        noise = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(
            dim1=-2, dim2=-1)
        i, j = jtorch.tril_indices(p, p, offset=-1)
        noise[..., i, j] = jtorch.randn(Size(sample_shape) + self._batch_shape
                                        + (int(p * (p - 1) / 2),),
                                        dtype=noise.dtype, device=noise.device)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def rsample(self, sample_shape=(), max_try_correction=None) -> Tensor:
        """Bartlett samples; singular ones (numerically not positive definite) are drawn
        again, up to ``max_try_correction`` (10) times."""
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        # torch 2.13 takes the check's result itself here (so it warns and draws again on
        # every call); the draws are Wishart either way, and this redraws the singular ones
        is_singular = ~self.support.check(sample)
        if self._batch_shape:
            is_singular = is_singular.amax(self._batch_dims)
        if is_singular.any():
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                sample_new = self._bartlett_sampling(is_singular[is_singular].shape)
                sample[is_singular] = sample_new
                is_singular_new = ~self.support.check(sample_new)
                if self._batch_shape:
                    is_singular_new = is_singular_new.amax(self._batch_dims)
                is_singular[is_singular.clone()] = is_singular_new
                if not is_singular.any():
                    break
        return sample

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu = self.df
        p = self._event_shape[-1]
        log_det_l = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return (-nu * (p * _LOG_2 / 2 + log_det_l) - jtorch.mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * jtorch.linalg.slogdet(value).logabsdet
                - jtorch.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(
                    dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self):
        nu = self.df
        p = self._event_shape[-1]
        log_det_l = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return ((p + 1) * (p * _LOG_2 / 2 + log_det_l) + jtorch.mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self) -> tuple:
        nu = self.df
        p = self._event_shape[-1]
        return -self.precision_matrix / 2, (nu - p - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-jtorch.linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + jtorch.mvlgamma(y + (p + 1) / 2, p=p))
