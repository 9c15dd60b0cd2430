"""conv2d forward and forward+backward (compute-bound: held against the sgemm peak)."""

from __future__ import annotations

from ..harness import Case, register
from ._util import functional, rand

# (batch, in channels, out channels, height = width, kernel)
FULL, QUICK = ((64, 32, 64, 32, 3),), ((4, 8, 16, 16, 3),)
LABEL = "n{0[0]}_c{0[1]}_o{0[2]}_hw{0[3]}_k{0[4]}"


def _inputs(shape):
    n, c, o, hw, k = shape
    return [rand(n, c, hw, hw), rand(o, c, k, k, seed=1, scale=0.1), rand(o, seed=2)], \
        2 * n * o * c * k * k * hw * hw


@register("conv/conv2d_fwd", full=FULL, quick=QUICK, label=LABEL)
def conv2d_fwd(shape) -> Case:
    arrays, flops = _inputs(shape)
    return Case(functional(lambda t, x, w, b: t.nn.functional.conv2d(x, w, b, padding=1), arrays),
                kind="compute", flops=flops)


def _fwd_bwd(t, x, w, b, g):
    t.nn.functional.conv2d(x, w, b, padding=1).backward(g)
    x.grad = w.grad = b.grad = None


@register("conv/conv2d_fwd_bwd", full=FULL, quick=QUICK, label=LABEL)
def conv2d_fwd_bwd(shape) -> Case:
    """Input, weight and bias gradients: three GEMMs' worth of work."""
    arrays, flops = _inputs(shape)
    n, _, o, hw, _ = shape
    return Case(functional(_fwd_bwd, arrays + [rand(n, o, hw, hw, seed=3)], grad=(0, 1, 2)),
                kind="compute", flops=3 * flops)
