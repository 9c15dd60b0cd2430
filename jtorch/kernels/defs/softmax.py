"""softmax, log_softmax and their gradients (torch's ``_softmax_backward_data`` and
``_log_softmax_backward_data``): records, meta rules and gradient rules.

The forward ops run one fused max / exp-sum / write pass per row (``kernels/cpu/reduce.py``'s
``softmax_kernels``) into a fresh C-contiguous result of the input's shape, in ``dtype=``
when given (the input is cast first). The backward ops take (g, y) and give dx, also
C-contiguous (torch's CPU kernels): one compiled pass per contiguous last-dim row, else
composed of pointwise kernels and a sum inside the kernel entry.
"""

from __future__ import annotations

from ... import dispatch
from ... import dtypes as _dt
from ...shape import broadcast_shapes, wrap_dim
from ..cpu import reduce as _rk
from ..cpu.half import via_float32
from ..plan import Out, Plan, common_device, device_of
from ..registry import OpDef, defvjp, register
from .reduction import _plans, cacheable, check_tensor, memo, not_implemented

_FLOATS = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)


def _softmax_plan(name: str, x, dim, dtype) -> Plan:
    check_tensor(x, name)
    if dim is None:
        raise TypeError(f"{name}() missing required argument 'dim'")
    d = x.dtype if dtype is None else _dt.to_dtype(dtype)
    shape = x._a.shape
    nd = len(shape)
    dim = wrap_dim(dim, nd)
    if d not in _FLOATS and x._a.size:  # (torch checks the dtype of non-empty inputs only)
        last = dim == max(nd - 1, 0)
        raise not_implemented(f"{name}_lastdim_kernel_impl" if last else f"{name}_kernel_impl", d)
    return Plan(Out(shape, d), {"dim": dim, "dtype": dtype}, device_of(x))


def _softmax_meta(name: str):
    """``(x, dim, dtype)``: float results (float16 computed in float32), the input's shape."""

    def meta(x, dim=None, dtype=None) -> Plan:
        try:
            key = (name, x._a.__class__, x._a.shape, x.dtype, dim, dtype)
            plan = _plans.get(key)
        except (AttributeError, TypeError):
            return _softmax_plan(name, x, dim, dtype)
        if plan is None:
            plan = _softmax_plan(name, x, dim, dtype)
            if cacheable(dtype):
                memo(key, plan)
        return plan

    return meta


def _backward_meta(g, y, dim) -> Plan:
    """(g, y) -> dx of y's (broadcast) shape in the promoted dtype, C-contiguous."""
    try:
        ga, ya = g._a, y._a
        key = ("softmax_backward", ga.__class__, ga.shape, g.dtype, ya.__class__, ya.shape, y.dtype,
               dim)
        return _plans[key]
    except KeyError:
        return memo(key, _backward_plan(g, y, dim))
    except (AttributeError, TypeError):
        return _backward_plan(g, y, dim)


def _backward_plan(g, y, dim) -> Plan:
    dev = common_device(g, y)
    shape = tuple(broadcast_shapes(g._a.shape, y._a.shape))
    d = y.dtype if g.dtype is y.dtype else _dt.promote_types(g.dtype, y.dtype)
    return Plan(Out(shape, d), {"dim": dim}, dev)


def _op(name: str, meta, cpu, **kw) -> OpDef:
    return register(OpDef(name, "softmax", meta=meta, kernels={"cpu": via_float32(cpu)}, **kw))


softmax_op = _op("softmax", _softmax_meta("softmax"), _rk.softmax_cpu(False),
                 kernel_name="softmax_kernel_impl")
log_softmax_op = _op("log_softmax", _softmax_meta("log_softmax"), _rk.softmax_cpu(True),
                     kernel_name="log_softmax_kernel_impl")
softmax_backward_op = _op("_softmax_backward_data", _backward_meta,
                          _rk.softmax_backward_cpu(False))
log_softmax_backward_op = _op("_log_softmax_backward_data", _backward_meta,
                              _rk.softmax_backward_cpu(True))


# -- gradient rules ------------------------------------------------------------------------

def _softmax_vjp(c, g):
    return (dispatch.call(softmax_backward_op, g, c.out, dim=c.kw["dim"]),)


def _log_softmax_vjp(c, g):
    return (dispatch.call(log_softmax_backward_op, g, c.out, dim=c.kw["dim"]),)


def _softmax_backward_vjp(c, gg):
    """Of dx = y * (g - sum(g * y)): d/dg is the same rule applied to gg; d/dy is
    gg * (g - sum(g * y)) - g * sum(gg * y)."""
    g, y = c.args
    d = c.kw["dim"]
    gg_g = dispatch.call(softmax_backward_op, gg, y, dim=d) if c.needs[0] else None
    gg_y = None
    if c.needs[1]:
        gg_y = gg * (g - (g * y).sum(d, keepdim=True)) - g * (gg * y).sum(d, keepdim=True)
    return gg_g, gg_y


def _log_softmax_backward_vjp(c, gg):
    """Of dx = g - exp(y) * sum(g): d/dg is gg - sum(gg * exp(y)); d/dy is
    -gg * exp(y) * sum(g)."""
    g, y = c.args
    d = c.kw["dim"]
    e = y.exp()
    gg_g = gg - (gg * e).sum(d, keepdim=True) if c.needs[0] else None
    gg_y = -(gg * e) * g.sum(d, keepdim=True) if c.needs[1] else None
    return gg_g, gg_y


defvjp(softmax_op, _softmax_vjp, "o")
defvjp(log_softmax_op, _log_softmax_vjp, "o")
defvjp(softmax_backward_op, _softmax_backward_vjp, "01", name="SoftmaxBackwardDataBackward0")
defvjp(log_softmax_backward_op, _log_softmax_backward_vjp, "01",
       name="LogSoftmaxBackwardDataBackward0")
