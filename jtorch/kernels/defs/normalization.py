"""Normalization with a fused CPU kernel: ``native_layer_norm``.

As in ATen it returns ``(output, mean, rstd)``: the row statistics are outputs (their shape is
the input's leading dims followed by ones), so the gradient rule reads them and a compiled
graph sees them. The rule is written in jtorch ops (xhat, the row means of g*w and g*w*xhat),
so double backward follows it. Batch, group and instance norm are compositions of jtorch
reductions and pointwise ops (``nn/normalization.py``).
"""

from __future__ import annotations

import numpy as np

from ... import dispatch
from ... import dtypes as _dt
from ..plan import Out, Plan, common_device, memo
from ..registry import defvjp, op
from ._lazy import lazy

_NK = "jtorch.kernels.cpu.normalization"  # imported at the first call (_lazy.py)
_FUSED = (_dt.float32, _dt.float64)


def _check_affine(what: str, t, shape: list) -> None:
    if t is not None and list(t._a.shape) != shape:
        raise RuntimeError(f"Expected {what} to be of same shape as normalized_shape, but got {what} "
                           f"of shape {list(t._a.shape)} and normalized_shape = {shape}")


def check_normalized(input, shape: list, weight, bias, star: str) -> tuple:
    """torch's _check_layer_norm_inputs; returns the normalised dims (negative)."""
    if not shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    _check_affine("weight", weight, shape)
    _check_affine("bias", bias, shape)
    k = len(shape)
    ishape = list(input._a.shape)
    if len(ishape) < k or ishape[-k:] != shape:
        raise RuntimeError(f"Given normalized_shape={shape}, expected input with shape "
                           f"[{star}{', '.join(str(n) for n in shape)}], but got input of size"
                           f"{ishape}")
    return tuple(range(-k, 0))


_plans: dict = {}
_NDARRAY = np.ndarray


def _key(t):
    """A CPU operand's part of a plan key (None for an absent one); anything else raises."""
    if t is None:
        return None
    if t._a.__class__ is not _NDARRAY:
        raise AttributeError
    return t._a.shape, t.dtype


def _layer_norm_meta(input, weight, bias, *, normalized_shape: list, eps: float) -> Plan:
    # memoised on CPU operands' geometry (the checks and outputs are functions of it): a
    # transformer calls it with the same few shapes every step
    try:
        key = ("ln", _key(input), _key(weight), _key(bias), tuple(normalized_shape), eps)
    except (AttributeError, TypeError):  # other devices, unhashable arguments
        return _layer_norm_plan(input, weight, bias, normalized_shape, eps)
    plan = _plans.get(key)
    return plan if plan is not None else \
        memo(_plans, key, _layer_norm_plan(input, weight, bias, normalized_shape, eps), 1024)


def _layer_norm_plan(input, weight, bias, normalized_shape: list, eps: float) -> Plan:
    dev = common_device(input, weight, bias)
    dims = check_normalized(input, normalized_shape, weight, bias, "*, ")
    shape = input._a.shape
    d = input.dtype
    stat = shape[:len(shape) - len(dims)] + (1,) * len(dims)
    return Plan((Out(shape, d), Out(stat, d), Out(stat, d)), {"dims": dims, "eps": eps}, dev)


def _layer_norm_vjp(c, g):
    g = g[0]
    x, w, b = c.args
    dims = c.kw["dims"]
    if dispatch.grad_state.enabled:  # create_graph: statistics as functions of x
        mean = x.mean(dims, keepdim=True)
        rstd = (x.var(dims, correction=0, keepdim=True) + c.kw["eps"]).rsqrt()
    else:
        mean, rstd = c.out_at(1), c.out_at(2)
        if x.dtype in _FUSED and x.device.type == "cpu":  # one kernel for the three
            gx, gw, gb = native_layer_norm_backward_op(
                g, x, mean, rstd, w, dims=dims,
                mask=(c.needs[0], w is not None and c.needs[1], b is not None and c.needs[2]))
            return gx if c.needs[0] else None, gw if w is not None and c.needs[1] else None, \
                gb if b is not None and c.needs[2] else None
    xhat = (x - mean) * rstd
    lead = tuple(range(x.dim() - len(dims)))
    gx = gw = gb = None
    if c.needs[0]:
        gh = g if w is None else g * w
        gx = (gh - gh.mean(dims, keepdim=True) - xhat * (gh * xhat).mean(dims, keepdim=True)) * rstd
    if w is not None and c.needs[1]:
        gw = (g * xhat).sum(lead) if lead else g * xhat
    if b is not None and c.needs[2]:
        gb = g.sum(lead) if lead else g
    return gx, gw, gb


# (input, weight | None, bias | None) -> (output, mean, rstd) {normalized_shape, eps}; CPU
# kernel for float32/float64 (``nn.functional.layer_norm`` composes the other dtypes)
native_layer_norm_op = op("native_layer_norm", "extern", _layer_norm_meta, lazy(_NK, "layer_norm_cpu"))
defvjp(native_layer_norm_op, _layer_norm_vjp, "012o12", name="NativeLayerNormBackward0")
native_layer_norm_op.grad_outputs = 1  # (torch's rule reads the output's gradient alone)


def _layer_norm_backward_meta(grad, input, mean, rstd, weight, *, dims: tuple, mask: tuple) -> Plan:
    try:
        key = ("ln_bwd", _key(grad), _key(input), _key(mean), _key(rstd), _key(weight), dims,
               mask)
    except (AttributeError, TypeError):
        return _layer_norm_backward_plan(grad, input, mean, rstd, weight, dims, mask)
    plan = _plans.get(key)
    return plan if plan is not None else memo(
        _plans, key, _layer_norm_backward_plan(grad, input, mean, rstd, weight, dims, mask), 1024)


def _layer_norm_backward_plan(grad, input, mean, rstd, weight, dims: tuple, mask: tuple) -> Plan:
    dev = common_device(grad, input, mean, rstd, weight)
    d = input.dtype
    n = input._a.shape[len(input._a.shape) - len(dims):]
    return Plan((Out(input._a.shape if mask[0] else (0,), d), Out(n if mask[1] else (0,), d),
                 Out(n if mask[2] else (0,), d)), {"dims": dims, "mask": mask}, dev)


# (grad, input, mean, rstd, weight | None) -> (grad_input, grad_weight, grad_bias) {dims,
# mask}: the first-order gradient in one pass (``mask`` says which to compute; the others
# are empty); double backward goes through the rule above, written in jtorch ops
native_layer_norm_backward_op = op("native_layer_norm_backward", "extern", _layer_norm_backward_meta,
                                   lazy(_NK, "layer_norm_backward_cpu"), differentiable=False)
