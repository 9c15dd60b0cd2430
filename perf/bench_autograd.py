"""Autograd costs vs torch eager: a pointwise chain forward+backward on a large tensor, and
the per-op bookkeeping of recording a node next to the op's own Python overhead.

Run: python perf/bench_autograd.py   (targets: chain within 1.5x of torch eager; recording a
node costs at most 1x the op's own Python overhead)
"""

from __future__ import annotations

import numpy as np
import torch

import jtorch
from _harness import measure, report


def _chain(m, x):
    y = (x.sin() * x + x.exp() * 0.5).tanh()
    y.sum().backward()
    x.grad = None


def main(n: int = 1 << 22) -> None:
    xa = np.random.default_rng(0).standard_normal(n, dtype=np.float32)
    jx = jtorch.from_numpy(xa.copy()).requires_grad_()
    tx = torch.from_numpy(xa.copy()).requires_grad_()
    res = measure({"jtorch": lambda: _chain(jtorch, jx), "torch": lambda: _chain(torch, tx)})
    report(f"tanh(sin(x)*x + exp(x)*0.5).sum() forward+backward, float32 n=2^{n.bit_length() - 1}"
           " (target jtorch <= 1.5x torch)", res, "torch")

    ones = np.ones(100, np.float32)
    ja, jb = jtorch.from_numpy(ones.copy()), jtorch.from_numpy(ones.copy())
    jg = jtorch.from_numpy(ones.copy()).requires_grad_()
    ta, tg = torch.from_numpy(ones.copy()), torch.from_numpy(ones.copy()).requires_grad_()
    res = measure({"jtorch_no_grad": lambda: ja * jb, "jtorch_recorded": lambda: jg * jb,
                   "torch_no_grad": lambda: ta * ta, "torch_recorded": lambda: tg * ta})
    record = res["jtorch_recorded"] - res["jtorch_no_grad"]
    report("a * b, n=100: the cost of recording a node (target: record <= 1x the op's own cost)",
           res, "jtorch_no_grad",
           {"jtorch_recorded": f"record = {record * 1e6:.2f} us = "
                               f"{record / res['jtorch_no_grad']:.2f}x the op"})


if __name__ == "__main__":
    main()
