"""Pooling vs torch eager: max_pool2d and avg_pool2d 2x2 on (64, 64, 56, 56) float32, forward and
forward+backward (target: at most 0.5x torch's time; torch's NCHW max pool is slow on CPU).

Run: python perf/bench_pooling.py
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as TF

import jtorch
import jtorch.nn.functional as JF
from _harness import measure, report

SHAPE = (64, 64, 56, 56)


def _fwd_bwd(F, x, g, fn):
    def run():
        y = fn(F, x)
        y.backward(g)
        x.grad = None
    return run


def main() -> None:
    rng = np.random.default_rng(0)
    a = rng.standard_normal(SHAPE, dtype=np.float32)
    nbytes = a.nbytes
    cases = [("max_pool2d 2x2", lambda F, x: F.max_pool2d(x, 2)),
             ("avg_pool2d 2x2", lambda F, x: F.avg_pool2d(x, 2)),
             ("max_pool2d 3x3 s2 p1", lambda F, x: F.max_pool2d(x, 3, 2, 1)),
             ("adaptive_avg_pool2d 7x7", lambda F, x: F.adaptive_avg_pool2d(x, 7))]
    for what, fn in cases:
        xj, xt = jtorch.from_numpy(a), torch.from_numpy(a)
        res = measure({"jtorch": lambda: fn(JF, xj), "torch": lambda: fn(TF, xt)})
        report(f"{what} forward, {SHAPE} float32", res, "torch",
               {k: f"{nbytes / v / 1e9:.1f} GB/s (input read)" for k, v in res.items()})
        gshape = tuple(fn(TF, xt).shape)
        g = rng.standard_normal(gshape, dtype=np.float32)
        xj = jtorch.from_numpy(a).requires_grad_()
        xt = torch.from_numpy(a).requires_grad_()
        res = measure({"jtorch": _fwd_bwd(JF, xj, jtorch.from_numpy(g), fn),
                       "torch": _fwd_bwd(TF, xt, torch.from_numpy(g), fn)})
        report(f"{what} forward+backward, {SHAPE} float32", res, "torch")


if __name__ == "__main__":
    main()
