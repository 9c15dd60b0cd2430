"""Pooling forward and forward+backward (memory-bound)."""

from __future__ import annotations

import numpy as np

from ..harness import Case, register
from ._util import functional, rand

FULL, QUICK = ((64, 64, 56, 56),), ((2, 8, 16, 16),)
LABEL = "{0[0]}x{0[1]}x{0[2]}x{0[3]}"

_CASES = {
    "max_pool2d_2x2": (lambda F, x: F.max_pool2d(x, 2), 4),
    "avg_pool2d_2x2": (lambda F, x: F.avg_pool2d(x, 2), 4),
    "max_pool2d_3x3_s2_p1": (lambda F, x: F.max_pool2d(x, 3, 2, 1), 4),
    "adaptive_avg_pool2d_7x7": (lambda F, x: F.adaptive_avg_pool2d(x, 7), None),
}


def _out_elems(shape, shrink):
    n, c, h, w = shape
    return n * c * 49 if shrink is None else n * c * h * w // shrink


def _pool(name, fn, shrink, quick):
    @register(f"pooling/{name}_fwd", full=FULL, quick=QUICK if quick else (), label=LABEL)
    def fwd(shape) -> Case:
        return Case(functional(lambda t, x: fn(t.nn.functional, x), [rand(*shape)]),
                    kind="memory", bytes=4 * (np.prod(shape) + _out_elems(shape, shrink)))

    @register(f"pooling/{name}_fwd_bwd", full=FULL, quick=QUICK if quick else (), label=LABEL)
    def fwd_bwd(shape) -> Case:
        out = _out_elems(shape, shrink)
        n, c = shape[:2]
        g = rand(out).reshape(n, c, -1)

        def run(t, x, gt):
            y = fn(t.nn.functional, x)
            y.backward(gt.reshape(y.shape))
            x.grad = None

        # forward reads x, writes y; backward reads g (and indices), writes dx
        return Case(functional(run, [rand(*shape), g], grad=(0,)), kind="memory",
                    bytes=4 * 2 * (np.prod(shape) + out))


for _n, (_f, _s) in _CASES.items():
    _pool(_n, _f, _s, _n == "max_pool2d_2x2")
