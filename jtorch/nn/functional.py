"""torch.nn.functional: activations over the registry's pointwise OpDefs.

Each activation is one ``dispatch.pointwise`` call on an OpDef from ``kernels/defs/unary.py``
(parameterised ones pass their scalars as trailing parameters), so they get the same kernels,
dtype checks and autograd hook as every other pointwise op.

>>> import jtorch
>>> jtorch.nn.functional.relu(jtorch.tensor([-1.0, 2.0]))
tensor([0., 2.])
"""

from __future__ import annotations

from .. import dispatch
from ..kernels.defs import unary as U
from ..ops.pointwise import _check_inplace, _check_tensor
from ..tensor import Tensor

__all__ = [
    "celu", "celu_", "elu", "elu_", "gelu", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_",
    "leaky_relu", "leaky_relu_", "logsigmoid", "mish", "relu", "relu6", "relu_", "selu", "selu_",
    "sigmoid", "silu", "softplus", "tanh",
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
