"""Matrix products vs torch (MKL) and NumPy: sgemm 1024^2 (target within 1.05x of torch) and
bmm 64 x 128^3 (target within 1.2x).

Run: python perf/bench_matmul.py
"""

from __future__ import annotations

import numpy as np
import torch

import jtorch
from _harness import measure, report


def main() -> None:
    rng = np.random.default_rng(0)
    for shape_a, shape_b, what in [((1024, 1024), (1024, 1024), "sgemm 1024^2"),
                                   ((64, 128, 128), (64, 128, 128), "bmm 64 x 128^3"),
                                   ((4096, 512), (512, 512), "linear 4096x512 @ 512x512"),
                                   ((4096, 512), (512, 512), "x @ W.T (transposed weight)")]:
        a = rng.standard_normal(shape_a, dtype=np.float32)
        b = rng.standard_normal(shape_b, dtype=np.float32)
        ja, jb, ta, tb = jtorch.from_numpy(a), jtorch.from_numpy(b), torch.from_numpy(a), \
            torch.from_numpy(b)
        if "W.T" in what:
            jb, tb, b = jb.T, tb.T, b.T
        flops = 2 * np.prod(shape_a) * (b.shape[-1])
        res = measure({"jtorch": lambda: ja @ jb, "torch": lambda: ta @ tb,
                       "numpy": lambda: a @ b})
        report(f"{what}, float32", res, "torch",
               {k: f"{flops / v / 1e9:.0f} GFLOP/s" for k, v in res.items()})


if __name__ == "__main__":
    main()
