"""conv2d forward and forward+backward (compute-bound: held against the sgemm peak), on the
layers of small and mid-sized CNNs: LeNet-5's two 5x5 layers, the demo CNN's second layer
(4x4 planes), a CIFAR-style 3x3 layer, and ResNet-18's first stage and its stride-2
transition (56x56 planes)."""

from __future__ import annotations

from typing import NamedTuple

from ..harness import Case, register
from ._util import functional, rand


class Shape(NamedTuple):
    """A conv2d layer: batch, in and out channels, input height = width, kernel, padding,
    stride. Formats as the case label (padding 1 and stride 1 unnamed)."""

    n: int
    c: int
    o: int
    hw: int
    k: int
    padding: int = 1
    stride: int = 1

    def __format__(self, spec: str) -> str:
        s = f"n{self.n}_c{self.c}_o{self.o}_hw{self.hw}_k{self.k}"
        s += f"_p{self.padding}" if self.padding != 1 else ""
        return s + (f"_s{self.stride}" if self.stride != 1 else "")

    @property
    def out_hw(self) -> int:
        return (self.hw + 2 * self.padding - self.k) // self.stride + 1


FULL = (
    Shape(64, 1, 6, 28, 5, padding=0),  # LeNet-5 conv1 (MNIST)
    Shape(64, 6, 16, 12, 5, padding=0),  # LeNet-5 conv2
    Shape(64, 16, 32, 4, 3),  # examples/demo.py's conv2 (8x8 digits, pooled)
    Shape(64, 32, 64, 32, 3),  # CIFAR-style
    Shape(8, 64, 64, 56, 3),  # ResNet-18 conv2_x
    Shape(8, 64, 128, 56, 3, stride=2),  # ResNet-18 conv3_1 (downsampling)
)
QUICK = (Shape(4, 8, 16, 16, 3),)


def _inputs(s: Shape):
    return [rand(s.n, s.c, s.hw, s.hw), rand(s.o, s.c, s.k, s.k, seed=1, scale=0.1),
            rand(s.o, seed=2)], 2 * s.n * s.o * s.c * s.k * s.k * s.out_hw ** 2


@register("conv/conv2d_fwd", full=FULL, quick=QUICK, label="{}")
def conv2d_fwd(s: Shape) -> Case:
    arrays, flops = _inputs(s)
    return Case(functional(lambda t, x, w, b: t.nn.functional.conv2d(
        x, w, b, stride=s.stride, padding=s.padding), arrays), kind="compute", flops=flops)


@register("conv/conv2d_fwd_bwd", full=FULL, quick=QUICK, label="{}")
def conv2d_fwd_bwd(s: Shape) -> Case:
    """Input, weight and bias gradients: three GEMMs' worth of work."""
    arrays, flops = _inputs(s)

    def fwd_bwd(t, x, w, b, g):
        t.nn.functional.conv2d(x, w, b, stride=s.stride, padding=s.padding).backward(g)
        x.grad = w.grad = b.grad = None

    return Case(functional(fwd_bwd, arrays + [rand(s.n, s.o, s.out_hw, s.out_hw, seed=3)],
                           grad=(0, 1, 2)), kind="compute", flops=3 * flops)
