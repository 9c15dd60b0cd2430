"""The whole Python cost of one small eager op (dispatch overhead)."""

from __future__ import annotations

import numpy as np

from ..harness import Case, register
from ._util import functional


@register("dispatch/add", full=(1, 100), quick=(1,), label="n={}")
def add(n: int) -> Case:
    a = np.ones(n, np.float32)
    return Case(functional(lambda t, x, y: x + y, [a, a.copy()], numpy=np.add), kind="latency")


@register("dispatch/add_scalar", full=(1, 100), label="n={}")
def add_scalar(n: int) -> Case:
    a = np.ones(n, np.float32)
    return Case(functional(lambda t, x: x + 1.0, [a], numpy=lambda x: x + np.float32(1.0)),
                kind="latency")


@register("dispatch/exp", full=(100,), label="n={}")
def exp(n: int) -> Case:
    a = np.ones(n, np.float32)
    return Case(functional(lambda t, x: t.exp(x), [a], numpy=np.exp), kind="latency")


@register("dispatch/sum", full=(100,), label="n={}")
def sum_(n: int) -> Case:
    a = np.ones(n, np.float32)
    return Case(functional(lambda t, x: x.sum(), [a], numpy=np.sum), kind="latency")


@register("dispatch/view_ops", full=(100,), label="n={}")
def view_ops(n: int) -> Case:
    """reshape, transpose, slice: no kernel, only the tensor wrapper."""
    a = np.ones((n, 4), np.float32)
    return Case(functional(lambda t, x: x.reshape(4, n).t()[1:], [a],
                           numpy=lambda x: x.reshape(4, n).T[1:]), kind="latency")


@register("dispatch/conv2d_tiny", full=(4,), quick=(4,), label="hw={}")
def conv2d_tiny(n: int) -> Case:
    """A tiny conv2d call (1x1x4x4, 3x3 kernel, bias): the checks and plan, not the GEMM."""
    x, w, b = np.ones((1, 1, n, n), np.float32), np.ones((1, 1, 3, 3), np.float32), np.ones(1, np.float32)
    return Case(functional(lambda t, x, w, b: t.nn.functional.conv2d(x, w, b), [x, w, b]),
                kind="latency")


@register("dispatch/max_pool2d_tiny", full=(4,), quick=(4,), label="hw={}")
def max_pool2d_tiny(n: int) -> Case:
    """A tiny max_pool2d call (1x1x4x4, 2x2 window)."""
    x = np.ones((1, 1, n, n), np.float32)
    return Case(functional(lambda t, x: t.nn.functional.max_pool2d(x, 2), [x]), kind="latency")
