"""The Python cost of one small eager op (dispatch overhead): jtorch vs torch vs NumPy.

Run: python perf/bench_dispatch.py
"""

from __future__ import annotations

import numpy as np
import torch

import jtorch
from _harness import measure, report


def main() -> None:
    for n in (1, 100):
        xa = np.ones(n, np.float32)
        ja, jb = jtorch.from_numpy(xa.copy()), jtorch.from_numpy(xa.copy())
        ta, tb = torch.from_numpy(xa.copy()), torch.from_numpy(xa.copy())
        res = measure({"jtorch": lambda: ja + jb, "torch": lambda: ta + tb,
                       "numpy": lambda: xa + xa, "jtorch_scalar": lambda: ja + 1.0,
                       "torch_scalar": lambda: ta + 1.0})
        report(f"a + b, n={n} (whole Python cost per op; target jtorch <= 5 us)", res, "torch")


if __name__ == "__main__":
    main()
