"""torch.nn.functional: activations over the registry's pointwise OpDefs.

Each activation is one ``dispatch.pointwise`` call on an OpDef from ``kernels/defs/unary.py``
(parameterised ones pass their scalars as trailing parameters), so they get the same kernels,
dtype checks and autograd hook as every other pointwise op. The softmax family, shrinkage,
normalisation and dropout functions are compositions of jtorch ops, as they are in torch's
``functional.py``, so autograd follows them without rules of their own.

>>> import jtorch
>>> jtorch.nn.functional.relu(jtorch.tensor([-1.0, 2.0]))
tensor([0., 2.])
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import _allocator, dispatch
from .. import dtypes as _dt
from .. import random as _random
from ..amp import state as _amp
from ..autograd.grad_mode import no_grad as _no_grad
from ..kernels.cpu import dropout as _dropout
from ..kernels.cpu import mt19937 as _mt
from ..kernels.defs import binary as _B
from ..kernels.defs import unary as U
from ..ops import creation as _creation
from ..ops import reduction as _red
from ..ops import views as _views
from ..ops.pointwise import _check_inplace, _check_tensor
from ..ops.conv import *  # noqa: F401,F403  (structured kernels: each file owns its names)
from ..ops.distance import cosine_similarity, pairwise_distance  # noqa: F401
from ..ops.embedding import *  # noqa: F401,F403
from ..ops.pooling import *  # noqa: F401,F403
from ..ops.resample import *  # noqa: F401,F403
from ..tensor import Tensor

# Defined here; __all__ (at the end) adds the names each re-exported module lists.
_OWN = [
    "alpha_dropout", "celu", "celu_", "dropout", "dropout1d", "dropout2d", "dropout3d", "elu",
    "elu_", "feature_alpha_dropout", "gelu", "glu", "gumbel_softmax", "pdist", "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_",
    "leaky_relu", "leaky_relu_", "log_softmax", "logsigmoid", "mish", "normalize", "prelu", "relu",
    "relu6", "relu_", "rrelu", "rrelu_", "selu", "selu_", "sigmoid", "silu", "softmax", "softmin",
    "softplus", "softshrink", "softsign", "tanh", "tanhshrink", "threshold", "threshold_",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _apply(name: str, op, input: Tensor, params: tuple = (), inplace: bool = False) -> Tensor:
    _check_tensor(input, name)
    if inplace:
        _check_inplace(input)
        return dispatch.pointwise(op, (input, *params), inplace=True)
    return dispatch.pointwise(op, (input, *params))


def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(input, 0); nan propagates. Integer inputs stay integer; bool raises as in torch."""
    return _apply("relu", U.relu_op, input, inplace=inplace)


def relu_(input: Tensor) -> Tensor:
    return relu(input, inplace=True)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(input, 0), 6) (torch implements it as hardtanh(input, 0, 6))."""
    return _apply("relu6", U.hardtanh_op, input, (0.0, 6.0), inplace)


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """Clamp to [min_val, max_val] (the bounds are cast to input's dtype)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _apply("hardtanh", U.hardtanh_op, input, (min_val, max_val), inplace)


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:
    return hardtanh(input, min_val, max_val, inplace=True)


def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x) with the exact normal CDF (``'none'``) or its tanh approximation (``'tanh'``)."""
    if approximate == "none":
        return _apply("gelu", U.gelu_op, input)
    if approximate == "tanh":
        return _apply("gelu", U.gelu_tanh_op, input)
    raise RuntimeError("approximate argument must be either none or tanh.")


def silu(input: Tensor, inplace: bool = False) -> Tensor:
    """x * sigmoid(x)."""
    return _apply("silu", U.silu_op, input, inplace=inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    return _apply("mish", U.mish_op, input, inplace=inplace)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold."""
    return _apply("softplus", U.softplus_op, input, (beta, threshold))


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    return _apply("elu", U.elu_op, input, (alpha, 1.0, 1.0), inplace)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return elu(input, alpha, inplace=True)


def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with the self-normalising constants."""
    return _apply("selu", U.elu_op, input, (_SELU_ALPHA, _SELU_SCALE, 1.0), inplace)


def selu_(input: Tensor) -> Tensor:
    return selu(input, inplace=True)


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1))."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _apply("celu", U.elu_op, input, (alpha, 1.0, 1.0 / alpha), inplace)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return celu(input, alpha, inplace=True)


def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x for x > 0, negative_slope * x otherwise."""
    return _apply("leaky_relu", U.leaky_relu_op, input, (negative_slope,), inplace)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    return leaky_relu(input, negative_slope, inplace=True)


def sigmoid(input: Tensor) -> Tensor:
    return _apply("sigmoid", U.sigmoid_op, input)


def tanh(input: Tensor) -> Tensor:
    return _apply("tanh", U.tanh_op, input)


def logsigmoid(input: Tensor) -> Tensor:
    """log(sigmoid(x)), computed stably as min(x, 0) - log1p(exp(-|x|))."""
    return _apply("logsigmoid", U.logsigmoid_op, input)


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """min(max(x + 3, 0), 6) / 6."""
    return _apply("hardsigmoid", U.hardsigmoid_op, input, inplace=inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """x * hardsigmoid(x)."""
    return _apply("hardswish", U.hardswish_op, input, inplace=inplace)


def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """value where input <= threshold, input elsewhere (nan passes; input's dtype is kept)."""
    _check_tensor(input, "threshold")
    if input.dtype is _dt.bool:
        raise _not_implemented("threshold_cpu", input.dtype)
    mask = input <= threshold
    if inplace:
        _check_inplace(input)
        return input.masked_fill_(mask, value)
    return input.masked_fill(mask, value)


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return globals()["threshold"](input, threshold, value, inplace=True)


def _not_implemented(kernel: str, d) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{dispatch.torch_name(d)}\'')


def _float_only(input: Tensor, kernel: str) -> None:
    _check_tensor(input, kernel.split("_")[0])
    if not input.dtype.is_floating_point:
        raise _not_implemented(kernel, input.dtype)


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """0 where -lambd <= x <= lambd, x elsewhere."""
    _float_only(input, "hardshrink_cpu")
    return input.masked_fill((input >= -lambd) & (input <= lambd), 0)


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:
    """x - lambd above lambd, x + lambd below -lambd, 0 between: x - clamp(x, -lambd, lambd)."""
    _float_only(input, "softshrink_check")
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, {_dt.finfo(input.dtype).max:g}] for input "
                           f"dtype {dispatch.torch_name(input.dtype)}, but found {lambd:g}")
    return input - input.clamp(-lambd, lambd)


def tanhshrink(input: Tensor) -> Tensor:
    """x - tanh(x)."""
    return input - input.tanh()


def softsign(input: Tensor) -> Tensor:
    """x / (1 + |x|)."""
    return input / (input.abs() + 1)


def _softmax_dim(name: str, ndim: int) -> int:
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call to "
                  f"include dim=X as an argument.", UserWarning, stacklevel=3)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """exp(x) / sum(exp(x)) along ``dim`` (torch picks a dim, with a warning, when omitted).

    >>> import jtorch
    >>> jtorch.nn.functional.softmax(jtorch.tensor([0.0, 0.0]), dim=0)
    tensor([0.5000, 0.5000])
    """
    if dim is None:
        dim = _softmax_dim("softmax", input.dim())
    return _red.softmax(input, dim, dtype=dtype)


def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmax(-x)."""
    if dim is None:
        dim = _softmax_dim("softmin", input.dim())
    return _red.softmax(-input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """x - logsumexp(x) along ``dim``."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim())
    return _red.log_softmax(input, dim, dtype=dtype)


def glu(input: Tensor, dim: int = -1) -> Tensor:
    """a * sigmoid(b) where a, b are the two halves of ``input`` along ``dim``."""
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    n = input.shape[dim]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension "
                           f"{dim % input.dim()} is size {n}")
    a, b = _views.chunk(input, 2, dim)
    return a * b.sigmoid()


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out: Tensor | None = None) -> Tensor:
    """x / max(||x||_p, eps) along ``dim``."""
    denom = _red.norm(input, p, dim, keepdim=True).clamp_min(eps).expand_as(input)
    if out is None:
        return input / denom
    from ..ops.pointwise import div

    return div(input, denom, out=out)


def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False) -> Tensor:
    """Zero each element with probability p and scale the rest by 1 / (1 - p) (training only)."""
    _check_p(p)
    if not training or p == 0 or input.numel() == 0:  # torch returns the input and draws nothing
        return input
    if not inplace and p < 1 and dispatch.mode is None and input._a.__class__ is np.ndarray and \
            input.dtype in _DROPOUT_FUSED and input._a.flags.c_contiguous:
        return _dropout_cpu(input, p)
    keep = _creation.empty_like(input).bernoulli_(1 - p) if p < 1 else _creation.zeros_like(input)
    scale = keep.div_(1 - p) if p < 1 else keep
    if inplace:
        _check_inplace(input)
        return input.mul_(scale)
    return input * scale


_DROPOUT_FUSED = {_dt.float32: np.float32, _dt.float64: np.float64}


def _dropout_cpu(input: Tensor, p: float) -> Tensor:
    """``dropout``'s composite (bernoulli_, div_, mul) in one kernel over a contiguous CPU
    tensor: the same draws, noise and product, and the product's node recorded as the
    composite's ``input * noise`` records it (MulBackward0 reading the noise)."""
    t = _DROPOUT_FUSED[input.dtype]
    gen = _random.default_generator
    x = input._a.reshape(-1)
    noise = np.empty(x.size, t)
    y = _allocator.empty(x.shape, x.dtype)
    with gen._lock:
        _dropout.dropout_noise(gen._mt, gen._pos, x, noise, y, 1.0 - p, t(1) / t(1.0 - p))
    shape = input._a.shape
    noise_t = Tensor._make(noise.reshape(shape), noise, input.dtype)
    res = Tensor._make(y.reshape(shape), y, input.dtype)
    if input._requires_grad and dispatch.grad_hook is not None and dispatch.grad_state.enabled:
        dispatch.grad_hook(_B.mul_op, (input, noise_t), res, None)
    return res


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3, training: bool = False,
          inplace: bool = False) -> Tensor:
    """leaky_relu with slope (lower + upper) / 2 in eval; a uniform slope per element in training."""
    return _rrelu(input, lower, upper, training, inplace)


def _rrelu(input: Tensor, lower: float, upper: float, training: bool, inplace: bool,
           generator=None) -> Tensor:
    """``rrelu`` with the slopes drawn from ``generator`` (torch.rrelu's argument).

    In training, CPU tensors get torch's numbers (``_rrelu_train_cpu``); under a mode
    (tracing, vmap) or on another device the slopes come from ``uniform_`` (same law)."""
    _check_rrelu_bounds(lower, upper)
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    gen = _random.resolve(generator, "rrelu_" if inplace else "rrelu")
    if dispatch.mode is None and isinstance(input, Tensor) and input._a.__class__ is np.ndarray:
        return _rrelu_train_cpu(input, lower, upper, inplace, gen)
    if inplace:
        _check_inplace(input)
    slope = _creation.empty_like(input).uniform_(lower, upper, generator=gen)
    res = input.where(input > 0, input * slope)
    return input.copy_(res) if inplace else res


def _check_rrelu_bounds(lower: float, upper: float) -> None:
    """torch's checks of at::rrelu, in training and eval alike."""
    for v, what in ((lower, "lower"), (upper, "upper")):
        if not math.isfinite(v):
            raise RuntimeError(f"rrelu: {what} bound must be finite, got {float(v)}")
    if not lower <= upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")


_RRELU_OPMATH = {_dt.float32: np.float32, _dt.float64: np.float64, _dt.bfloat16: np.float32}
_F32_MAX = float(np.finfo(np.float32).max)


def _rrelu_train_cpu(input: Tensor, lower: float, upper: float, inplace: bool, gen) -> Tensor:
    """rrelu in training as torch's CPU kernel computes it (``rrelu_with_noise_out_cpu``): the
    elements of ``input.contiguous()`` in order, a slope drawn for each x <= 0 (``mt19937``'s
    ``rrelu_noise``, in the dtype's opmath type: float32 for float32 and bfloat16), 1 for the
    others; the result is ``x * noise`` and its gradient ``grad * noise``, as torch's."""
    if inplace:
        _check_inplace(input)
    d = input.dtype
    acc = _RRELU_OPMATH.get(d)
    if acc is None:
        raise NotImplementedError(f"\"rrelu_with_noise_out_cpu\" not implemented for "
                                  f"'{dispatch.torch_name(d)}'")
    if acc is np.float32:  # lower_.to<float>(): a checked conversion
        for v in (lower, upper):
            if abs(v) > _F32_MAX:
                raise RuntimeError("value cannot be converted to type float without overflow")
        lower, upper = float(np.float32(lower)), float(np.float32(upper))
    xc = input.contiguous()
    x = xc._a.reshape(-1)
    if x.dtype != acc:
        x = x.astype(acc)
    noise = np.empty(x.shape, acc)
    with gen._lock:
        bad = _mt.rrelu_noise(gen._mt, gen._pos, x, noise, float(lower), float(upper))
    if bad:
        raise RuntimeError("Expected to - from <= std::numeric_limits<T>::max() to be true, but "
                           "got false.  (Could this error message be improved?  If so, please "
                           "report an enhancement request to PyTorch.)")
    shape = xc._a.shape
    slopes = Tensor._make(noise.reshape(shape) if noise.dtype == d.np else
                          noise.astype(d.np).reshape(shape))
    res = input.mul_(slopes) if inplace else xc * slopes
    if acc is not d.np.type:  # bfloat16: torch rounds x * r (float32) once, not x * bf16(r)
        exact = Tensor._make((x * noise).astype(d.np).reshape(shape))
        with _no_grad():
            res.copy_(exact)
    return res


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
           training: bool = False) -> Tensor:
    return rrelu(input, lower, upper, training, inplace=True)


# -- layers' functional forms (contractions live in ops/linalg.py) -----------------------------

from ..ops.linalg import bilinear, linear  # noqa: E402
from .attention import multi_head_attention_forward, scaled_dot_product_attention  # noqa: E402,F401


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """max(0, x) + weight * min(0, x); weight has 1 element or one per channel (dim 1)."""
    if _amp.on:
        input, weight = _amp.lower(input, weight)
    if weight.numel() != 1:
        if input.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = input.shape[1] if input.dim() >= 2 else 1
        if weight.numel() != channels:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {weight.numel()} and channel size = "
                               f"{channels}.")
        if input.dim() >= 2:
            weight = weight.reshape([channels] + [1] * (input.dim() - 2))
    return _red_where(input > 0, input, weight * input)


def _red_where(cond, a, b):
    from ..ops.pointwise import where

    return where(cond, a, b)


def _feature_dropout(input: Tensor, p: float, training: bool, inplace: bool) -> Tensor:
    """Zero whole channels: one Bernoulli draw per (dim 0, dim 1) broadcast over the rest."""
    _check_p(p)
    if not training or p == 0:
        return input
    nd = input.dim()
    if nd < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    shape = list(input.shape[:2]) + [1] * (nd - 2)
    keep = _creation.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p) \
        if p < 1 else _creation.zeros(shape, dtype=input.dtype, device=input.device)
    scale = keep.div_(1 - p) if p < 1 else keep
    if inplace:
        _check_inplace(input)
        return input.mul_(scale)
    return input * scale


def _unbatched_feature_dropout(input, p, training, inplace, batched):
    """torch's 1d/3d forms: an input one dim short is one sample (unsqueezed, then squeezed)."""
    if input.dim() == batched:
        return _feature_dropout(input, p, training, inplace)
    out = _feature_dropout(input.unsqueeze(0), p, training, inplace)
    if inplace:
        return input
    return out.squeeze(0)


def _warn_dims(name, nd, spatial, low):
    warnings.warn(
        f"{name}: Received a {nd}-D input to {name}, which is deprecated and will result in an "
        "error in a future release. To retain the behavior and silence this warning, please use "
        f"dropout instead. Note that {name} exists to provide channel-wise dropout on inputs with "
        f"{spatial} spatial dimensions, a channel dimension, and an optional batch dimension "
        f"(i.e. {low}D or {low + 1}D inputs).", stacklevel=3)


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    _check_p(p)
    nd = input.dim()
    if nd not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {nd}D input. Note that dropout1d "
            "exists to provide channel-wise dropout on inputs with 1 spatial dimension, a channel "
            "dimension, and an optional batch dimension (i.e. 2D or 3D inputs).")
    return _unbatched_feature_dropout(input, p, training, inplace, 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    """torch keeps the historic reading: any rank runs as (N, C, ...); a 3-D input is (N, C, L)."""
    _check_p(p)
    nd = input.dim()
    if nd not in (3, 4):
        _warn_dims("dropout2d", nd, 2, 3)
    if nd == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D dropout "
            "behavior is desired - input is interpreted as shape (N, C, L), where C is the channel "
            "dim. This behavior will change in a future release to interpret the input as one "
            "without a batch dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise "
            "dropout behavior, please switch to using dropout1d instead.", stacklevel=2)
    return _feature_dropout(input, p, training, inplace)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False):
    _check_p(p)
    nd = input.dim()
    if nd not in (4, 5):
        _warn_dims("dropout3d", nd, 3, 4)
    return _unbatched_feature_dropout(input, p, training, inplace, 5)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                  inplace: bool = False) -> Tensor:
    """Dropout that keeps SELU's self-normalising mean and variance (torch's formula)."""
    _check_p(p)
    if not training or p == 0:
        return input
    if p == 1:
        return input * 0
    alpha = 1.7580993408473766
    a = 1.0 / ((alpha * alpha * p + 1) * (1 - p)) ** 0.5
    keep = _creation.empty_like(input).bernoulli_(1 - p)
    b = (keep - 1) * (alpha * a) + alpha * a * p
    return input * (keep * a) + b
def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,
                          inplace: bool = False) -> Tensor:
    """alpha_dropout of whole channels: one draw per (sample, channel), as torch's."""
    _check_p(p)
    if not training or p == 0:
        return input
    if p == 1:
        return input * 0
    alpha = 1.7580993408473766
    a = 1.0 / ((alpha * alpha * p + 1) * (1 - p)) ** 0.5
    shape = tuple(input.shape[:2]) + (1,) * (input.dim() - 2)
    keep = _creation.empty(shape, dtype=input.dtype, device=input.device).bernoulli_(1 - p)
    b = (keep - 1) * (alpha * a) + alpha * a * p
    return input * (keep * a) + b


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """softmax((logits + g) / tau) with g ~ Gumbel(0, 1); ``hard``: the one-hot argmax in the
    forward, the soft sample's gradient in the backward (straight-through)."""
    gumbels = -_creation.empty_like(logits).exponential_().log()
    y = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y
    index = y.max(dim, keepdim=True)[1]
    y_hard = _creation.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y.detach() + y


def pdist(input: Tensor, p: float = 2) -> Tensor:
    """The p-norm distances between the rows of an (N, M) input, pairs i < j in row order."""
    if input.dim() != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.dim()}D")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    i, j = _creation.triu_indices(n, n, 1, device=input.device)
    from ..linalg import vector_norm

    diff = input[i] - input[j]
    if p == 0:  # a count: torch's gradient is zero (not absent)
        return vector_norm(diff, 0, dim=1) + diff.sum(1) * 0
    return vector_norm(diff, p, dim=1)


# -- less common forms -------------------------------------------------------------------------

GRID_SAMPLE_INTERPOLATION_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_SAMPLE_PADDING_MODES = {"zeros": 0, "border": 1, "reflection": 2}


def assert_int_or_pair(arg, arg_name: str, message: str) -> None:
    """torch's argument check: an int or a pair, else AssertionError(message.format(arg_name))."""
    if not (isinstance(arg, int) or len(arg) == 2):
        raise AssertionError(message.format(arg_name))


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call the first ``__torch_function__`` override among ``relevant_args`` (subclasses
    before their bases) that does not return NotImplemented, as torch.overrides does."""
    overloaded: list = []
    for a in relevant_args:
        t = type(a)
        if not hasattr(t, "__torch_function__") or any(type(o) is t for o in overloaded):
            continue
        at = next((i for i, o in enumerate(overloaded) if issubclass(t, type(o))), len(overloaded))
        overloaded.insert(at, a)
    types = tuple(type(a) for a in overloaded)
    for a in overloaded:
        result = a.__torch_function__(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {[type(a) for a in overloaded]}")


def native_channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """channel_shuffle (torch's native kernel of it: same values and checks)."""
    return channel_shuffle(input, groups)


def conv_tbc(input: Tensor, weight: Tensor, bias: Tensor, pad: int = 0) -> Tensor:
    """1-D convolution of a (time, batch, channels) sequence with a (kernel width,
    in_channels, out_channels) filter: conv1d in (batch, channels, time) layout.

    >>> import jtorch
    >>> F = jtorch.nn.functional
    >>> F.conv_tbc(jtorch.ones(5, 2, 3), jtorch.ones(2, 3, 4), jtorch.zeros(4), 1).shape
    torch.Size([6, 2, 4])
    """
    if input.dim() != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.dim() != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.dim() != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    t, b = input.shape[:2]
    out_t = t + 2 * pad - weight.shape[0] + 1
    if out_t < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {out_t}: "
                           f"[{out_t}, {b}, {weight.shape[2]}]")
    x = input if pad >= 0 else input[-pad:t + pad]
    y = conv1d(x.permute(1, 2, 0), weight.permute(2, 1, 0), bias,
               padding=max(pad, 0))
    return y.permute(2, 0, 1)


from .fractional_pool import *  # noqa: E402,F401,F403
from .grouped_mm import *  # noqa: E402,F401,F403
from .grouped_mm import ScalingType, SwizzleType  # noqa: E402,F401
from .losses import *  # noqa: E402,F401,F403
from .normalization import *  # noqa: E402,F401,F403

from ..ops.conv import __all__ as _conv_all  # noqa: E402
from ..ops.embedding import __all__ as _embedding_all  # noqa: E402
from ..ops.pooling import __all__ as _pooling_all  # noqa: E402
from ..ops.resample import __all__ as _resample_all  # noqa: E402
from .attention import __all__ as _attention_all  # noqa: E402
from .fractional_pool import __all__ as _fractional_all  # noqa: E402
from .grouped_mm import __all__ as _grouped_mm_all  # noqa: E402
from .losses import __all__ as _losses_all  # noqa: E402
from .normalization import __all__ as _normalization_all  # noqa: E402

__all__ = sorted({*_OWN, "bilinear", "linear", "cosine_similarity", "pairwise_distance",
                  *_conv_all, *_embedding_all, *_pooling_all, *_resample_all, *_attention_all,
                  *_losses_all, *_normalization_all, *_fractional_all, *_grouped_mm_all,
                  "assert_int_or_pair",
                  "conv_tbc", "handle_torch_function", "native_channel_shuffle"})
