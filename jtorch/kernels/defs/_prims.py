"""The primitive ops that gradient rules are written in.

A gradient rule (``vjp(node, grad)`` beside its record in ``defs/<family>.py``) computes in
jtorch ops, so that it records for autograd itself (double backward), runs on the device of
its operands and is traced by ``jtorch.compile``. It calls the functions here and Tensor
methods and operators (``g * y``, ``g.sum()``, ``x.pow(e)``, ``g.new_zeros(shape)``); never
the public package (``import jtorch``) nor ``jtorch/ops``. Each function is the one
``dispatch`` call the public function of that name makes (the same dtype promotion, device
and Python-scalar handling), without the public wrapper's argument parsing.

The family modules import this one at their top, before their own records exist: the
OpDefs of those families are looked up by name in the registry at the call.

>>> import jtorch
>>> from jtorch.kernels.defs import _prims as P
>>> P.where(jtorch.tensor([True, False]), jtorch.tensor([1.0, 2.0]), 0.0)
tensor([1., 0.])
"""

from __future__ import annotations

from ... import dispatch
from ... import dtypes as _dt
from ...tensor import Tensor
from ..registry import REGISTRY as _OPS
from .creation import arange_op, full_op, like_strides, zeros_op

__all__ = ["arange", "cat", "cos", "cosh", "div_trunc", "erf", "exp", "exp2", "floor_divide",
           "gelu_backward", "isfinite", "isnan", "log", "ones_like", "rsqrt", "sigmoid",
           "sigmoid_backward", "sign", "sin", "sinh", "softplus", "stack", "tanh", "tanh_backward",
           "threshold_backward", "where", "xlogy", "zeros", "zeros_like"]


def _unary(name: str):
    def prim(x: Tensor) -> Tensor:
        return dispatch.pointwise(_OPS[name], (x,))

    prim.__name__ = prim.__qualname__ = name
    prim.__doc__ = f"torch.{name}(x)"
    return prim


cos = _unary("cos")
cosh = _unary("cosh")
erf = _unary("erf")
exp = _unary("exp")
exp2 = _unary("exp2")
isfinite = _unary("isfinite")
isnan = _unary("isnan")
log = _unary("log")
rsqrt = _unary("rsqrt")
sigmoid = _unary("sigmoid")
sign = _unary("sign")
sin = _unary("sin")
sinh = _unary("sinh")
tanh = _unary("tanh")


def softplus(x: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """torch.nn.functional.softplus."""
    return dispatch.pointwise(_OPS["softplus"], (x, beta, threshold))


def where(cond: Tensor, a, b) -> Tensor:
    """torch.where(cond, a, b): ``a`` and ``b`` tensors or Python scalars, promoted together."""
    return dispatch.pointwise(_OPS["where"], (a, b, cond))


def xlogy(x, y) -> Tensor:
    return dispatch.pointwise(_OPS["xlogy"], (x, y))


def floor_divide(x, y) -> Tensor:
    return dispatch.pointwise(_OPS["floor_divide"], (x, y))


def div_trunc(x, y) -> Tensor:
    """torch.div(x, y, rounding_mode="trunc")."""
    return dispatch.pointwise(_OPS["div_trunc"], (x, y))


def tanh_backward(g: Tensor, y: Tensor) -> Tensor:
    """tanh's gradient from its output ``y``: g * (1 - y^2) in one pass."""
    return dispatch.pointwise(_OPS["tanh_backward"], (g, y))


def gelu_backward(g: Tensor, x: Tensor) -> Tensor:
    """gelu's gradient from its input ``x``: g * (Phi(x) + x * phi(x)) in one pass."""
    return dispatch.pointwise(_OPS["gelu_backward"], (g, x))


def sigmoid_backward(g: Tensor, y: Tensor) -> Tensor:
    """sigmoid's gradient from its output ``y``: g * y * (1 - y) in one pass."""
    return dispatch.pointwise(_OPS["sigmoid_backward"], (g, y))


def threshold_backward(g: Tensor, y: Tensor, threshold) -> Tensor:
    """``g`` where ``y > threshold``, else 0 (relu's gradient in one pass, as torch's)."""
    return dispatch.pointwise(_OPS["threshold_backward"], (g, y, threshold))


# -- factories: a fresh tensor's dtype and device are given, or those of ``x`` ----------------

def _full_like(x: Tensor, value) -> Tensor:
    return dispatch.call(full_op, size=x._a.shape, dtype=x.dtype, device=x.device,
                         strides=like_strides(x, None, "full_like"), fill_value=value)


def zeros_like(x: Tensor) -> Tensor:
    """torch.zeros_like(x): x's dtype, device and (dense) layout."""
    return _full_like(x, 0)


def ones_like(x: Tensor) -> Tensor:
    return _full_like(x, 1)


def zeros(shape: tuple, dtype: _dt.dtype, device) -> Tensor:
    return dispatch.call(zeros_op, size=tuple(shape), dtype=dtype, device=device)


def arange(n: int, device) -> Tensor:
    """torch.arange(n, device=device): 0, 1, ..., n - 1 as int64."""
    return dispatch.call(arange_op, start=0, end=n, step=1, dtype=_dt.int64, device=device)


def cat(tensors, dim: int = 0) -> Tensor:
    return dispatch.call(_OPS["cat"], *tensors, dim=dim)


def stack(tensors, dim: int = 0) -> Tensor:
    return dispatch.call(_OPS["stack"], *tensors, dim=dim)
