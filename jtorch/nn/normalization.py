"""torch.nn.functional's normalization functions as compositions of jtorch reductions and
pointwise ops, so autograd follows them (the gradient of the batch statistics included);
float32/float64 ``layer_norm`` is ATen's ``native_layer_norm`` op (``kernels/defs/
normalization.py``), one fused row kernel.

Calls autograd does not record (inference) apply batch, group and instance norm as torch's
CPU kernels do: one fused pass y = x * alpha + beta with per-channel alpha and beta
(``_transform``), bit for bit torch's in eval mode.

Statistics use the biased variance, as torch normalises; ``batch_norm`` and ``instance_norm``
move the running estimates toward the batch's mean and *unbiased* variance in place, outside
autograd, exactly as torch's kernels update the buffers.

>>> import jtorch
>>> F = jtorch.nn.functional
>>> F.layer_norm(jtorch.tensor([[1.0, 3.0]]), (2,))
tensor([[-1.0000,  1.0000]])
"""

from __future__ import annotations

import numbers

from .. import dispatch
from .. import dtypes as _dt
from ..amp import state as _amp
from ..autograd.grad_mode import no_grad
from ..kernels.defs import normalization as N
from ..ops import reduction as _red
from ..ops.pointwise import addcmul as _addcmul
from ..ops.views import cat
from ..tensor import Tensor

__all__ = ["batch_norm", "group_norm", "instance_norm", "layer_norm", "local_response_norm",
           "rms_norm"]


def _normalized_shape(normalized_shape, name: str) -> list:
    if isinstance(normalized_shape, numbers.Integral) or not isinstance(
            normalized_shape, (list, tuple)) and not hasattr(normalized_shape, "__iter__"):
        raise TypeError(f"{name}(): argument 'normalized_shape' (position 2) must be tuple of ints, "
                        f"not {type(normalized_shape).__name__}")
    return [int(n) for n in normalized_shape]


def _unrecorded(*ts) -> bool:
    """Whether autograd records nothing for a call over ``ts`` (float32/float64 tensors of one
    dtype, or None): grad mode is off or none of them requires grad."""
    d = ts[0].dtype
    if d not in _FUSED or any(t is not None and t.dtype is not d for t in ts):
        return False
    return not (dispatch.grad_state.enabled and any(t is not None and t.requires_grad for t in ts))


def _transform(x: Tensor, mean: Tensor, invstd: Tensor, weight: Tensor | None,
               bias: Tensor | None, per: tuple, shape: list) -> Tensor:
    """torch's CPU batch and group norm output for a call autograd does not record: per
    channel alpha = invstd * weight and beta = bias - mean * alpha (one rounding), then
    y = x * alpha + beta (one rounding) in one pass over x, where the composition takes four.
    The statistics and parameters broadcast to ``per`` (a value per channel, or per sample
    and channel), which ``shape`` lays over x. Recorded calls keep the centred composition:
    the gradient of this form subtracts sums of x * g from mean * sum(g), which loses digits
    when the mean is large against the spread."""
    alpha = invstd if weight is None else invstd * weight
    beta = (mean * alpha).neg() if bias is None else _addcmul(bias, mean, alpha, value=-1)
    alpha, beta = (t if tuple(t.shape) == per else t.expand(per) for t in (alpha, beta))
    return _addcmul(beta.reshape(shape), x, alpha.reshape(shape))


def _affine(y: Tensor, weight: Tensor | None, bias: Tensor | None) -> Tensor:
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def _normalize(x: Tensor, dims: tuple, eps: float) -> Tensor:
    """(x - mean) / sqrt(var + eps) over ``dims`` (biased variance)."""
    var, mean = _red.var_mean(x, dims, correction=0, keepdim=True)
    return (x - mean) * (var + eps).rsqrt()


_FUSED = (_dt.float32, _dt.float64)


def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the trailing ``normalized_shape`` dims, then scale and shift elementwise.

    float32/float64 inputs (with weight and bias of their dtype) run ATen's
    ``native_layer_norm`` op, one fused row kernel; the other dtypes compose jtorch ops.

    >>> import jtorch
    >>> jtorch.nn.functional.layer_norm(jtorch.tensor([[1.0, 3.0]]), (2,))
    tensor([[-1.0000,  1.0000]])
    """
    shape = _normalized_shape(normalized_shape, "layer_norm")
    if _amp.on:  # (CUDA autocast runs it in float32)
        input, weight, bias = _amp.fp32_cuda(input, weight, bias)
    d = input.dtype
    if d in _FUSED and input._a.size and (weight is None or weight.dtype is d) and \
            (bias is None or bias.dtype is d):
        return dispatch.call(N.native_layer_norm_op, input, weight, bias, normalized_shape=shape,
                             eps=eps)[0]
    dims = N.check_normalized(input, shape, weight, bias, "*, ")
    return _affine(_normalize(input, dims, eps), weight, bias)


def rms_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """x / sqrt(mean(x^2) + eps) over the trailing dims (eps None: the dtype's machine eps)."""
    shape = _normalized_shape(normalized_shape, "rms_norm")
    dims = N.check_normalized(input, shape, weight, None, "*")
    if eps is None:
        eps = _dt.finfo(input.dtype).eps
    y = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    return y if weight is None else y * weight


def _verify_batch_size(size) -> None:
    prod = size[0]
    for n in size[2:]:
        prod *= n
    if prod == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                         f"{size}")


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each of ``num_groups`` channel groups of each sample; per-channel affine."""
    if input.dim() < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    if _amp.on:
        input, weight, bias = _amp.fp32_cuda(input, weight, bias)
    ishape = list(input.shape)
    n, c = ishape[0], ishape[1]
    _verify_batch_size([n * c // num_groups, num_groups] + ishape[2:])
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {ishape} and num_groups={num_groups}")
    for what, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.dim() != 1 or t.numel() != c):
            raise RuntimeError(f"Expected {what} to be a vector of size equal to the number of "
                               f"channels in input, but got {what} of shape {list(t.shape)} and "
                               f"input of shape {ishape}")
    bshape = [c] + [1] * (len(ishape) - 2)
    if input.numel() and _unrecorded(input, weight, bias):
        var, mean = _red.var_mean(input.reshape(n, num_groups, -1), (2,), correction=0,
                                  keepdim=True)
        per = (n, num_groups, c // num_groups)  # (each group's statistics per channel)
        w, b = (None if t is None else t.reshape(per[1:]) for t in (weight, bias))
        return _transform(input, mean, (var + eps).sqrt().reciprocal(), w, b, per,
                          [n, c] + [1] * (len(ishape) - 2))
    y = _normalize(input.reshape(n, num_groups, -1), (2,), eps).reshape(ishape)
    return _affine(y, None if weight is None else weight.reshape(bshape),
                   None if bias is None else bias.reshape(bshape))


def _check_features(name: str, t: Tensor | None, c: int) -> None:
    if t is not None and t.numel() != c:
        raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")


def _update(running: Tensor, stat: Tensor, momentum: float) -> None:
    with no_grad():
        running.mul_(1 - momentum).add_(stat.detach().to(running.dtype) * momentum)


def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dim 1) over the batch and spatial dims.

    Training uses the batch's statistics and, when running buffers are given, moves them by
    ``momentum`` toward the batch mean and unbiased variance; evaluation uses the buffers.
    """
    if training:
        _verify_batch_size(input.size())
    if training and eps <= 0.0:
        raise ValueError(f"batch_norm eps must be positive during training, but got {eps}")
    if eps < 0.0:
        raise ValueError(f"batch_norm eps must be non-negative, but got {eps}")
    if input.dim() < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-max(input.dim(), 1)}, {max(input.dim(), 1) - 1}], but got 1)")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_features(name, t, c)
    bshape = [c] + [1] * (input.dim() - 2)
    dims = (0,) + tuple(range(2, input.dim()))
    fast = input.numel() and _unrecorded(input, weight, bias)
    if training:
        var, mean = _red.var_mean(input, dims, correction=0, keepdim=True)
        if running_mean is not None:
            _update(running_mean, mean.reshape(c), momentum)
        if running_var is not None:
            n = input.numel() // c
            _update(running_var, var.detach().reshape(c) * (n / (n - 1)), momentum)
        if fast:
            return _transform(input, mean.reshape(c), (var.reshape(c) + eps).sqrt().reciprocal(),
                              weight, bias, (c,), bshape)
        y = (input - mean) * (var + eps).rsqrt()
    else:
        if running_mean is None:
            raise RuntimeError("running_mean must be defined in evaluation mode")
        if running_var is None:
            raise RuntimeError("running_var must be defined in evaluation mode")
        if fast and _unrecorded(input, running_mean, running_var):
            return _transform(input, running_mean, (running_var + eps).sqrt().reciprocal(),
                              weight, bias, (c,), bshape)
        y = (input - running_mean.reshape(bshape)) * (running_var.reshape(bshape) + eps).rsqrt()
    return _affine(y, None if weight is None else weight.reshape(bshape),
                   None if bias is None else bias.reshape(bshape))


def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True, momentum: float = 0.1,
                  eps: float = 1e-5) -> Tensor:
    """Normalise each (sample, channel) over its spatial dims; running estimates, when given,
    move toward the batch average of the per-instance mean and unbiased variance."""
    if use_input_stats:
        size = input.size()
        prod = 1
        for n in size[2:]:
            prod *= n
        if prod == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input size "
                             f"{size}")
    elif running_mean is None or running_var is None:
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    c = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        _check_features(name, t, c)
    bshape = [c] + [1] * (input.dim() - 2)
    if use_input_stats:
        dims = tuple(range(2, input.dim()))
        var, mean = _red.var_mean(input, dims, correction=0, keepdim=True)
        if running_mean is not None:
            _update(running_mean, mean.reshape(-1, c).mean(0), momentum)
        if running_var is not None:
            n = input[0, 0].numel()
            _update(running_var, var.detach().reshape(-1, c).mean(0) * (n / (n - 1)), momentum)
        if input.numel() and _unrecorded(input, weight, bias):
            per = tuple(input.shape[:2])
            return _transform(input, mean.reshape(per), (var.reshape(per) + eps).sqrt()
                              .reciprocal(), weight, bias, per, list(per) + bshape[1:]).contiguous()
        y = (input - mean) * (var + eps).rsqrt()
    else:
        y = (input - running_mean.reshape(bshape)) * (running_var.reshape(bshape) + eps).rsqrt()
    # row-major whatever the input's layout, as torch's (it runs batch_norm on a reshaped copy)
    return _affine(y, None if weight is None else weight.reshape(bshape),
                   None if bias is None else bias.reshape(bshape)).contiguous()


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4, beta: float = 0.75,
                        k: float = 1.0) -> Tensor:
    """x / (k + alpha * mean of x^2 over ``size`` neighbouring channels)^beta (zero-padded)."""
    dim = input.dim()
    if dim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    sq = input * input
    c = input.shape[1]
    lo, hi = size // 2, (size - 1) // 2
    zeros = sq.narrow(1, 0, 1) * 0
    padded = cat([zeros.expand(*[lo if i == 1 else s for i, s in enumerate(sq.shape)]), sq,
                  zeros.expand(*[hi if i == 1 else s for i, s in enumerate(sq.shape)])], 1)
    acc = padded.narrow(1, 0, c)
    for j in range(1, size):
        acc = acc + padded.narrow(1, j, c)
    div = (acc / size * alpha + k).pow(beta)
    return input / div
