"""jtorch.compile's front end: the per-call cost of a compiled function (guards + replay),
guard evaluation alone, and tracing time; and a compiled BLAS-bound block (a GELU MLP)."""

from __future__ import annotations

from ..harness import Case, Skip, register
from ._util import functional, rand


def _ten_ops(t, a, b, c, d):
    x = a * b + c
    x = t.sin(x) * d
    x = x - a
    x = t.exp(-x * x)
    x = x + b * c
    return t.tanh(x)


@register("compile/call_10op", full=(100,), quick=(100,), label="n={}")
def call_10op(n: int) -> Case:
    """A 10-op pointwise function on tiny inputs: eager vs compiled per-call cost."""
    arrays = [rand(n, seed=s) for s in range(4)]
    return Case(functional(_ten_ops, arrays), kind="latency", compile=True)


@register("compile/guard_4args", full=(100,), quick=(100,), label="n={}")
def guard_4args(n: int) -> Case:
    """Evaluating the guard key of a compiled function with 4 tensor arguments."""

    def make(rt):
        if rt.name != "jtorch" or rt.compile is not None:
            raise Skip("jtorch's guards only")
        from jtorch.compile.guards import call_key

        lib = rt.lib
        cf = lib.compile(lambda a, b, c, d: a + b + c + d)
        args = tuple(lib.from_numpy(rand(n, seed=s)) for s in range(4))
        cf(*args)
        return lambda: call_key(args, {}, cf.scope)

    return Case(make, kind="latency", ref="jtorch")


@register("compile/trace_200op", full=(16,), quick=(16,), label="n={}")
def trace_200op(n: int) -> Case:
    """Tracing (and running once) a 200-op function: a fresh compiled function per call."""

    def make(rt):
        if rt.name != "jtorch" or rt.compile is not None:
            raise Skip("jtorch's tracer only")
        lib = rt.lib
        x = lib.from_numpy(rand(n))

        def f(x):
            for _ in range(50):
                x = lib.sin(x) + x * 2 - 1
            return x

        return lambda: lib.compile(f, backend="eager")(x)

    return Case(make, kind="latency", ref="jtorch", rounds=5)


def _gelu_mlp(t, x, w1, b1, w2, b2):
    f = t.nn.functional
    return f.linear(f.gelu(f.linear(x, w1, b1)), w2, b2)


@register("compile/gelu_mlp", full=(512,), quick=(512,), label="m={}")
def gelu_mlp(m: int) -> Case:
    """A GELU MLP block, x (m, 1024) -> 4096 -> 1024: two addmm (BLAS-bound), the first with
    its bias and gelu fused as the product's epilogue."""
    k, h = 1024, 4096
    arrays = [rand(m, k), rand(h, k, seed=1, scale=0.03), rand(h, seed=2),
              rand(k, h, seed=3, scale=0.015), rand(k, seed=4)]
    return Case(functional(_gelu_mlp, arrays), kind="compute", flops=4.0 * m * k * h,
                compile=True)


def _conv_relu(t, x, w, b):
    f = t.nn.functional
    return f.relu(f.conv2d(x, w, b, padding=1))


@register("compile/conv_relu", full=((64, 32, 64, 32),), quick=((8, 16, 32, 16),),
          label="n{0[0]}_c{0[1]}_o{0[2]}_hw{0[3]}")
def conv_relu(shape) -> Case:
    """A CNN block, conv2d 3x3 (padding 1) then relu: the relu runs on each image's output
    while it is in cache (the convolution's epilogue)."""
    n, c, o, s = shape
    arrays = [rand(n, c, s, s), rand(o, c, 3, 3, seed=1, scale=0.06), rand(o, seed=2)]
    return Case(functional(_conv_relu, arrays), kind="compute", flops=2.0 * n * o * c * 9 * s * s,
                compile=True)
