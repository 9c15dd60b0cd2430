"""Helpers the distributions share (torch.distributions.utils): parameter broadcasting, the
probs/logits conversions, ``lazy_property`` and the lower-triangle packing."""

from __future__ import annotations

from collections.abc import Callable
from functools import update_wrapper
from typing import Any

import jtorch
from jtorch.tensor import Tensor

__all__ = ["broadcast_all", "clamp_probs", "lazy_property", "logits_to_probs",
           "probs_to_logits", "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # Euler-Mascheroni
_Number = (int, float, bool)  # torch.types._Number


def _is_tensor_like(v) -> bool:
    return isinstance(v, Tensor) or hasattr(type(v), "__torch_function__")


def broadcast_all(*values) -> tuple:
    """Broadcast tensors and numbers together; numbers become tensors of the first tensor's
    dtype and device (the default dtype when every value is a number).

    >>> [t.shape for t in broadcast_all(jtorch.zeros(2, 1), 1.0, jtorch.ones(3))]
    [torch.Size([2, 3]), torch.Size([2, 3]), torch.Size([2, 3])]
    """
    if not all(_is_tensor_like(v) or isinstance(v, _Number) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or "
                         "objects implementing __torch_function__.")
    if not all(_is_tensor_like(v) for v in values):
        first = next((v for v in values if isinstance(v, Tensor)), None)
        opts = ({"dtype": jtorch.get_default_dtype()} if first is None
                else {"dtype": first.dtype, "device": first.device})
        values = [v if _is_tensor_like(v) else jtorch.tensor(v, **opts) for v in values]
    # torch's broadcast_tensors hands back a tensor already of the broadcast shape itself
    # (so a parameter stays the caller's leaf, with its grad, even made under no_grad)
    shape = jtorch.broadcast_shapes(*(v.shape for v in values))
    if all(v.shape == shape for v in values):
        return tuple(values)
    return tuple(v if v.shape == shape else v.expand(shape) for v in values)


def _standard_normal(shape, dtype, device) -> Tensor:
    return jtorch.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value: Tensor, dim: int) -> Tensor:
    """Sum out the ``dim`` rightmost dims of ``value``."""
    if dim == 0:
        return value
    return value.reshape(value.shape[:-dim] + (-1,)).sum(-1)


def logits_to_probs(logits: Tensor, is_binary: bool = False) -> Tensor:
    """Probabilities from log-odds (binary) or from unnormalised log-probabilities over the
    last dim."""
    if is_binary:
        return jtorch.sigmoid(logits)
    return jtorch.nn.functional.softmax(logits, dim=-1)


def clamp_probs(probs: Tensor) -> Tensor:
    """``probs`` clamped to [eps, 1 - eps] of its dtype.

    >>> clamp_probs(jtorch.tensor([0.0, 0.5, 1.0]))
    tensor([1.1921e-07, 5.0000e-01, 1.0000e+00])
    """
    eps = jtorch.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs: Tensor, is_binary: bool = False) -> Tensor:
    """Log-odds (binary) or log-probabilities, from clamped probabilities."""
    ps = clamp_probs(probs)
    if is_binary:
        return jtorch.log(ps) - jtorch.log1p(-ps)
    return jtorch.log(ps)


class lazy_property:
    """A property computed on first access (with grad enabled) and then stored on the
    instance, so it is computed once; distributions use it for their derived parameters."""

    def __init__(self, wrapped: Callable) -> None:
        self.wrapped = wrapped
        update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type: Any = None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with jtorch.enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy_property looks like on the class: a property for documentation tools and a
    lazy_property for argument validation (which skips lazy parameters)."""

    def __init__(self, wrapped: Callable) -> None:
        property.__init__(self, wrapped)


def _tril_mask(n: int, diag: int, device) -> Tensor:
    arange = jtorch.arange(n, device=device)
    return arange < arange.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat: Tensor, diag: int = 0) -> Tensor:
    """The lower triangle (below diagonal ``diag``) of a (batched) square matrix, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec: Tensor, diag: int = 0) -> Tensor:
    """The (batched) square lower-triangular matrix whose triangle below diagonal ``diag``
    holds ``vec`` row by row: the inverse of ``tril_matrix_to_vec``."""
    # n is the positive root of n**2 + (1 + 2 diag) n - |diag| (diag + 1) - 2 len = 0
    b = 1 + 2 * diag
    n = (-b + (b * b + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1)) ** 0.5) / 2
    if round(n) - n > jtorch.finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         f"expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(vec.shape[:-1] + jtorch.Size((n, n)))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat


def _batch_shape(args: tuple, broadcast: Tensor):
    """A family's batch shape: () when every parameter was given as a number, else that of
    the broadcast parameters."""
    return jtorch.Size() if all(isinstance(a, _Number) for a in args) else broadcast.size()


def _probs_xor_logits(probs, logits) -> None:
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
