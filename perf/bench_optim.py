"""Optimizer steps vs torch: Adam (and SGD with momentum) over a ~1M-parameter MLP's
parameters (512x1024, 512x512, 256x512, 10x256 weights and biases), float32, gradients set
once. jtorch runs one compiled kernel per parameter; torch runs its single-tensor loop
(``foreach=False``), its multi-tensor path (``foreach=True``) and its fused CPU kernel.

Run: python perf/bench_optim.py
"""

from __future__ import annotations

import numpy as np
import torch

import jtorch
import jtorch.optim  # noqa: F401
from _harness import measure, report

SHAPES = [(512, 1024), (512,), (512, 512), (512,), (256, 512), (256,), (10, 256), (10,)]


def _params(lib, arrays, grads):
    ps = [lib.nn.Parameter(lib.from_numpy(a.copy())) for a in arrays]
    for p, g in zip(ps, grads):
        p.grad = lib.from_numpy(g.copy())
    return ps


def main() -> None:
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s, dtype=np.float32) for s in SHAPES]
    grads = [rng.standard_normal(s, dtype=np.float32) for s in SHAPES]
    n = sum(a.size for a in arrays)
    for name, kw in [("Adam", {"lr": 1e-3}), ("Adam", {"lr": 1e-3, "amsgrad": True,
                                                       "weight_decay": 1e-2}),
                     ("SGD", {"lr": 1e-3, "momentum": 0.9})]:
        j = getattr(jtorch.optim, name)(_params(jtorch, arrays, grads), **kw)
        contenders = {"jtorch": j.step}
        for label, extra in [("torch single-tensor", {"foreach": False}),
                             ("torch foreach", {"foreach": True}),
                             ("torch fused", {"fused": True})]:
            opt = getattr(torch.optim, name)(_params(torch, arrays, grads), **kw, **extra)
            contenders[label] = opt.step
        res = measure(contenders)
        nbytes = {"Adam": 4 + (1 if kw.get("amsgrad") else 0), "SGD": 2}[name] * 2 * 4 * n
        report(f"{name}({', '.join(f'{k}={v}' for k, v in kw.items())}).step, {n / 1e6:.2f}M "
               "float32 params", res, "torch single-tensor",
               {k: f"{nbytes / v / 1e9:.1f} GB/s" for k, v in res.items()})
        print(f"  jtorch / torch foreach = {res['jtorch'] / res['torch foreach']:.3f}, "
              f"jtorch / torch fused = {res['jtorch'] / res['torch fused']:.3f}")


if __name__ == "__main__":
    main()
