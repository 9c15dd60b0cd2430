"""Pooling: max, average and their adaptive forms, each a forward and a backward OpDef.

The kernels (``kernels/cpu/pooling``) work on (P, D, H, W) planes with window tables, so one
kernel pair serves 1-d (through 2-d, as torch), 2-d and 3-d pooling. The backward ops are
registry ops too, so a gradient of a gradient goes through them: the max-pool backward is a
scatter-add through the saved indices, whose own gradient is a gather through them; average
pooling is linear, so its backward's gradient is the forward again.

The functions the rules call (``ops/pooling``) run the kernel and record the op:
``max_pool_forward``, ``max_pool_backward``, ``avg_pool_forward``, ``avg_pool_backward``.
"""

from __future__ import annotations

from ..cpu import pooling as _pk
from ..registry import defvjp, extern


def _ops():
    from ...ops import pooling

    return pooling


def _max_vjp(c, g):
    gv = g[0] if isinstance(g, tuple) else g
    idx = c.out[1]
    return (_ops().max_pool_backward(c.op.pair, gv, idx, c._meta[0][0], c.kw["nd"]),)


def _max_backward_vjp(c, gg):
    """d(scatter-add through idx)/d(grad) is the gather through idx."""
    _, idx = c.args
    nd = c.kw["nd"]
    lead = idx._a.shape[:idx._a.ndim - nd]
    p = 1
    for n in lead:
        p *= n
    flat = gg.reshape(p, -1).gather(1, idx.reshape(p, -1))
    return flat.reshape(idx._a.shape), None


def _avg_vjp(c, g):
    return (_ops().avg_pool_backward(c.op.pair, g, c.kw["win"], c._meta[0][0],
                                     c.kw["nd"]),)


def _avg_backward_vjp(c, gg):
    return (_ops().avg_pool_forward(c.op.pair, gg, c.kw["win"], c.kw["nd"]),)


def _unpool_vjp(c, g):
    """The gradient of a scatter through idx is the gather through it."""
    _, idx = c.args
    nd = c.kw["nd"]
    lead = idx._a.shape[:idx._a.ndim - nd]
    p = 1
    for n in lead:
        p *= n
    return g.reshape(p, -1).gather(1, idx.reshape(p, -1)).reshape(idx._a.shape), None


def _pair(name: str, grad: str, kind: str, kernel_name: str):
    """A forward OpDef (torch's ``name``) and its backward OpDef, linked both ways."""
    impl, bimpl = ((_pk.max_pool, _pk.max_pool_backward) if kind == "max" else
                   (_pk.avg_pool, _pk.avg_pool_backward))
    fwd = extern(name, impl=impl, kernel_name=kernel_name)
    bwd = extern(name + "_backward", impl=bimpl, kernel_name=kernel_name + "_backward")
    fwd.pair, bwd.pair = bwd, fwd
    if kind == "max":
        defvjp(fwd, _max_vjp, "o", name=f"{grad}Backward0")
        defvjp(bwd, _max_backward_vjp, "1", name=f"{grad}BackwardBackward0")
    else:
        defvjp(fwd, _avg_vjp, "", name=f"{grad}Backward0")
        defvjp(bwd, _avg_backward_vjp, "", name=f"{grad}BackwardBackward0")
    return fwd, bwd


# (input,) -> (values, int64 indices) {"win", "nd"}; backward (grad, indices) -> grad_input
max_pool2d_op, max_pool2d_backward_op = _pair("max_pool2d_with_indices", "MaxPool2DWithIndices",
                                              "max", "max_pool2d")
max_pool3d_op, max_pool3d_backward_op = _pair("max_pool3d_with_indices", "MaxPool3DWithIndices",
                                              "max", "max_pool3d")
adaptive_max_pool2d_op, adaptive_max_pool2d_backward_op = _pair(
    "adaptive_max_pool2d", "AdaptiveMaxPool2D", "max", "adaptive_max_pool2d")
adaptive_max_pool3d_op, adaptive_max_pool3d_backward_op = _pair(
    "adaptive_max_pool3d", "AdaptiveMaxPool3D", "max", "adaptive_max_pool3d_cpu")
# (input,) -> output {"win", "nd"}; backward (grad,) -> grad_input
avg_pool2d_op, avg_pool2d_backward_op = _pair("avg_pool2d", "AvgPool2D", "avg", "avg_pool2d")
avg_pool3d_op, avg_pool3d_backward_op = _pair("avg_pool3d", "AvgPool3D", "avg",
                                              "avg_pool3d_out_frame")
adaptive_avg_pool2d_op, adaptive_avg_pool2d_backward_op = _pair(
    "adaptive_avg_pool2d", "AdaptiveAvgPool2D", "avg", "adaptive_avg_pool2d")
adaptive_avg_pool3d_op, adaptive_avg_pool3d_backward_op = _pair(
    "adaptive_avg_pool3d", "AdaptiveAvgPool3D", "avg", "adaptive_avg_pool3d_cpu")

# (input, indices) -> output {"nd"}: the values scattered to their indices in zeroed planes
max_unpool2d_op = extern("max_unpool2d", impl=_pk.unpool)
max_unpool3d_op = extern("max_unpool3d", impl=_pk.unpool)
defvjp(max_unpool2d_op, _unpool_vjp, "1", name="MaxUnpool2DBackward0")
defvjp(max_unpool3d_op, _unpool_vjp, "1", name="MaxUnpool3DBackward0")
