"""Resampling OpDefs: interpolation, padding and grid sampling.

Resizes and index-mapping pads share two kernel shapes (``kernels/cpu/resample.py``): a
*gather* (nearest, nearest-exact, reflect / replicate / circular padding) and a weighted *taps*
sum (linear, bilinear, trilinear, bicubic, area). Each op records a ``plan`` (the per-dimension
index and weight tables, computed once per call) so that its backward op reuses them. Both
forward maps are linear, so a backward op's own gradient is the forward op again: double
backward comes for free. Constant padding's gradient is constant padding by the negated pads.
"""

from __future__ import annotations

from ..cpu import resample as _rk
from ..registry import defvjp, extern

resample_gather_op = extern("resample_gather", impl=_rk.gather_into)  # (input,) {"plan"}
resample_gather_backward_op = extern("resample_gather_backward",
                                     impl=_rk.gather_backward_into)  # (grad,) {"plan"}
resample_taps_op = extern("resample_taps", impl=_rk.taps_into)  # (input,) {"plan"}
resample_taps_backward_op = extern("resample_taps_backward",
                                   impl=_rk.taps_backward_into)  # (grad,) {"plan"}
constant_pad_nd_op = extern("constant_pad_nd")  # (input,) {"pad"}
grid_sampler_2d_op = extern("grid_sampler_2d", impl=_rk.grid_sample_into)  # (input, grid)
grid_sampler_2d_backward_op = extern("grid_sampler_2d_backward",
                                     impl=_rk.grid_sample_backward_into)  # (grad, input, grid)


def _plan_name(inputs, kw) -> str:
    return kw["plan"].name


def _plan_backward_name(inputs, kw) -> str:
    return kw["plan"].name.replace("Backward0", "BackwardBackward0")


# -- gradient rules ----------------------------------------------------------------------------

def _gather_vjp(c, g):
    from ...ops import resample as R

    return (R._resample_backward(g, c.kw["plan"]),)


def _gather_backward_vjp(c, g):
    from ...ops import resample as R

    return (R._resample(g, c.kw["plan"]),)


def _constant_pad_vjp(c, g):
    from ...ops import resample as R

    return (R._constant_pad(g, [-p for p in c.kw["pad"]], 0),)


def _grid_sampler_vjp(c, g):
    from ...ops import resample as R

    x, grid = c.args
    gx, ggrid = R._grid_sampler_backward(g, x, grid, c.kw, c.needs[0])
    return (gx if c.needs[0] else None, ggrid if c.needs[1] else None)


for _op in (resample_gather_op, resample_taps_op):
    defvjp(_op, _gather_vjp, "", name=_plan_name)
for _op in (resample_gather_backward_op, resample_taps_backward_op):
    defvjp(_op, _gather_backward_vjp, "", name=_plan_backward_name)
defvjp(constant_pad_nd_op, _constant_pad_vjp, "", name="ConstantPadNdBackward0")
defvjp(grid_sampler_2d_op, _grid_sampler_vjp, "01", name="GridSampler2DBackward0")
