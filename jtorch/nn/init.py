"""``nn.init``: in-place initialisers with torch's formulas (fans, gains, bounds).

All of them write under ``no_grad`` through the registry's random and fill kernels and take an
optional ``generator``. Meta tensors (a model built under ``with jtorch.device("meta")``) have
no values to write: the initialisers check their arguments and leave them as they are, as
torch's do.
"""

from __future__ import annotations

import math
import warnings

from ..autograd.grad_mode import no_grad
from ..tensor import Tensor

__all__ = ["calculate_gain", "constant_", "dirac_", "eye_", "kaiming_normal_", "kaiming_uniform_",
           "normal_", "ones_", "orthogonal_", "sparse_", "trunc_normal_", "uniform_",
           "xavier_normal_", "xavier_uniform_", "zeros_"]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d")


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for a nonlinearity (torch's table).

    >>> jtorch.nn.init.calculate_gain('leaky_relu', 0.2)
    1.3867504905630728
    """
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple:
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _no_data(tensor: Tensor) -> bool:
    """Whether ``tensor`` has no values to initialise (a meta tensor)."""
    return tensor.is_meta


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    if _no_data(tensor):
        return tensor
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    if _no_data(tensor):
        return tensor
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """Normal(mean, std) truncated to [a, b], by torch's inverse-CDF method."""
    def norm_cdf(x):
        return (1.0 + math.erf(x / math.sqrt(2.0))) / 2.0

    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    if _no_data(tensor):
        return tensor
    with no_grad():
        lo, hi = norm_cdf((a - mean) / std), norm_cdf((b - mean) / std)
        tensor.uniform_(2 * lo - 1, 2 * hi - 1, generator=generator)
        tensor.erfinv_()
        tensor.mul_(std * math.sqrt(2.0))
        tensor.add_(mean)
        tensor.clamp_(min=a, max=b)
        return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    if _no_data(tensor):
        return tensor
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    if _no_data(tensor):
        return tensor
    with no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    if _no_data(tensor):
        return tensor
    from ..ops.creation import eye

    with no_grad():
        return tensor.copy_(eye(*tensor.shape, dtype=tensor.dtype))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Identity-preserving conv weights (a centred 1 per output channel and group)."""
    d = tensor.dim()
    if d not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    if _no_data(tensor):
        return tensor
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for i in range(min_dim):
                idx = (g * out_per_group + i, i) + tuple(s // 2 for s in sizes[2:])
                tensor[idx] = 1
    return tensor


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    std = calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))
    return normal_(tensor, 0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1, generator=None) -> Tensor:
    """A (semi-)orthogonal matrix from the QR factors of a normal matrix (signs fixed by R's
    diagonal, as torch does)."""
    import numpy as np

    from ..ops.creation import empty

    if tensor.dim() < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0 or _no_data(tensor):
        return tensor
    if tensor.dtype.itemsize == 2 and tensor.dtype.is_floating_point:  # torch's QR has no half
        raise NotImplementedError(f'"geqrf_cpu" not implemented for '
                                  f"'{tensor.dtype.scalar_name}'")
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = empty(rows, cols, dtype=tensor.dtype).normal_(0, 1, generator=generator)
    a = flat.numpy().astype(np.float64)
    if rows < cols:
        a = a.T
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    from ..ops.creation import tensor as _tensor

    with no_grad():
        tensor.view_as(tensor).copy_(_tensor(q, dtype=tensor.dtype).reshape(tensor.shape))
        tensor.mul_(gain)
    return tensor


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """A 2-D tensor with ``sparsity`` of each column's entries zero, the rest Normal(0, std)."""
    from ..ops.random import randperm

    if tensor.dim() != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    num_zeros = int(math.ceil(sparsity * rows))
    if _no_data(tensor):
        return tensor
    with no_grad():
        tensor.normal_(0, std, generator=generator)
        for c in range(cols):
            idx = randperm(rows, generator=generator)[:num_zeros]
            tensor[idx, c] = 0
    return tensor


# torch's deprecated names
uniform = uniform_
normal = normal_
constant = constant_
xavier_uniform = xavier_uniform_
xavier_normal = xavier_normal_
kaiming_uniform = kaiming_uniform_
kaiming_normal = kaiming_normal_
orthogonal = orthogonal_


def _deprecated(new):
    def old(*args, **kwargs):
        warnings.warn(f"`nn.init.{new.__name__[:-1]}` is now deprecated in favor of "
                      f"`nn.init.{new.__name__}`.", FutureWarning, stacklevel=2)
        return new(*args, **kwargs)
    old.__name__ = old.__qualname__ = new.__name__[:-1]
    old.__doc__ = f"Deprecated: ``{new.__name__}``."
    return old


eye = _deprecated(eye_)
dirac = _deprecated(dirac_)
