"""Gradient clipping: by the total norm over all gradients (``clip_grad_norm_``) or
elementwise (``clip_grad_value_``), in place on ``.grad``, as torch.nn.utils.clip_grad.

The scale factor is applied unconditionally (clamped to 1), as torch does, so that clipping
never needs the norm's value on the host. ``foreach`` is accepted for torch's signature: the
per-gradient loop here is already one reduction or one pointwise kernel per gradient.
"""

from __future__ import annotations

import functools
import math
import types
import warnings

from ... import dispatch
from ... import dtypes as _dt
from ...autograd.grad_mode import no_grad
from ...ops import creation as _c
from ...ops import reduction as _red
from ...ops.views import stack
from ...tensor import Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_", "clip_grads_with_norm_",
           "get_total_norm"]


def _no_grad(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with no_grad():
            return fn(*args, **kwargs)
    return wrapper


def _as_list(tensors) -> list:
    return [tensors] if isinstance(tensors, Tensor) else list(tensors)


@_no_grad
def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach: bool | None = None) -> Tensor:
    """The ``norm_type`` norm of the norms of ``tensors`` (as if they were concatenated)."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not tensors:
        return _c.tensor(0.0)
    flats = _flats(tensors) if norm_type == 2.0 and foreach is not False else None
    if flats is not None:  # one compiled pass over every tensor
        d = tensors[0].dtype
        total = _c.tensor(math.sqrt(_om().sum_of_squares(flats, d.np)), dtype=d)
        if error_if_nonfinite and not math.isfinite(total.item()):
            raise RuntimeError(_NONFINITE.format(norm_type))
        return total
    norms = [_red.vector_norm(t, norm_type) for t in tensors]
    dtype = functools.reduce(_dt.promote_types, [n.dtype for n in norms])
    total = _red.vector_norm(stack([n.to(dtype) for n in norms]), norm_type)
    if error_if_nonfinite and (total.isnan() | total.isinf()).item():
        raise RuntimeError(_NONFINITE.format(norm_type))
    return total


_NONFINITE = ("The total norm of order {} for gradients from `parameters` is non-finite, so it "
              "cannot be clipped. To disable this error and scale the gradients by the non-finite "
              "norm anyway, set `error_if_nonfinite=False`")


def _om():
    from ...kernels.cpu import optim_multi

    return optim_multi


def _flats(tensors: list):
    """The tensors as flat arrays of one float dtype for the multi-tensor kernels (torch's
    foreach path), or None: another dtype or layout, a mode (tracing, vmap), or too few."""
    if dispatch.mode is not None or len(tensors) < 2:
        return None
    d = tensors[0].dtype
    if d not in (_dt.float32, _dt.float64):
        return None
    om = _om()
    out = []
    for t in tensors:
        a = om.flat(t._a, t._a.shape, d.np) if t.dtype is d else None
        if a is None:
            return None
        out.append(a)
    return out


@_no_grad
def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = None) -> None:
    """Scale every gradient by min(1, max_norm / (total_norm + 1e-6))."""
    grads = [p.grad for p in _as_list(parameters) if p.grad is not None]
    max_norm = float(max_norm)
    if not grads:
        return
    coef = (max_norm / (total_norm + 1e-6)).clamp(max=1.0)
    flats = _flats(grads) if foreach is not False and coef.dtype is grads[0].dtype else None
    if flats is not None:  # one compiled pass; each gradient's version moves as mul_'s would
        _om().scale_(flats, coef.item(), grads[0].dtype.np)
        for g in grads:
            g._vc[0] += 1
        return
    for g in grads:
        g.mul_(coef)


@_no_grad
def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Rescale the gradients of ``parameters`` so that their total norm is at most
    ``max_norm``; returns the total norm before clipping.

    >>> import jtorch
    >>> p = jtorch.nn.Parameter(jtorch.ones(4))
    >>> p.grad = jtorch.full((4,), 2.0)
    >>> jtorch.nn.utils.clip_grad_norm_([p], 1.0)
    tensor(4.)
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)
        if is_generator and not parameters:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will occur.",
                          stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(parameters, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm: float, norm_type: float = 2.0,
                   error_if_nonfinite: bool = False, foreach: bool | None = None) -> Tensor:
    """Deprecated alias of ``clip_grad_norm_``."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value: float, foreach: bool | None = None) -> None:
    """Clamp every gradient elementwise to [-clip_value, clip_value] in place."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            p.grad.clamp_(min=-clip_value, max=clip_value)
