"""Eager pointwise ops on large float32 tensors vs torch and NumPy, and vs triad bandwidth.

Run: python perf/bench_pointwise.py   (prints times and ratios measured in one run)
"""

from __future__ import annotations

import numba
import numpy as np
import torch

import jtorch
from _harness import measure, report


@numba.njit(parallel=True, cache=True)
def _triad(a, b, out):
    for i in numba.prange(a.size):
        out[i] = a[i] + b[i]


def main(n: int = 1 << 22) -> None:
    rng = np.random.default_rng(0)
    xa = rng.standard_normal(n, dtype=np.float32)
    xb = rng.standard_normal(n, dtype=np.float32)
    ja, jb = jtorch.from_numpy(xa), jtorch.from_numpy(xb)
    ta, tb = torch.from_numpy(xa), torch.from_numpy(xb)
    out = np.empty_like(xa)
    _triad(xa, xb, out)
    gb = 3 * 4 * n / 1e9
    res = measure({
        "numba_triad_out": lambda: _triad(xa, xb, out),
        "jtorch": lambda: ja + jb,
        "torch": lambda: ta + tb,
        "numpy": lambda: xa + xb,
    })
    report(f"a + b, float32 n=2^{n.bit_length() - 1}", res, "torch",
           {k: f"{gb / v:.1f} GB/s = {res['numba_triad_out'] / v:.2f} of triad" for k, v in res.items()})
    for name in ("exp", "sin", "tanh", "sigmoid"):
        jf, tf = getattr(jtorch, name), getattr(torch, name)
        npf = {"exp": np.exp, "sin": np.sin, "tanh": np.tanh,
               "sigmoid": lambda x: 1 / (1 + np.exp(-x))}[name]
        res = measure({"jtorch": lambda: jf(ja), "torch": lambda: tf(ta), "numpy": lambda: npf(xa)})
        report(f"{name}(a), float32 n=2^{n.bit_length() - 1}", res, "torch")


if __name__ == "__main__":
    main()
