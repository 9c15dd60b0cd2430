"""conv2d vs torch eager (oneDNN): N=64, 32 -> 64 channels, 32x32, k=3, padding=1, float32.

Forward (target within 1.5x of torch) and forward+backward with input, weight and bias
gradients (target within 2x). The machine is shared: run it when ``uptime`` load is below 1.

Run: python perf/bench_conv.py [--one-thread]   (--one-thread: every pool at one thread, a
comparison that a busy machine disturbs less)
"""

from __future__ import annotations

import os
import sys

if "--one-thread" in sys.argv:  # before numba/scipy/torch start their pools
    for var in ("NUMBA_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        os.environ[var] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402

import jtorch  # noqa: E402
import jtorch.nn.functional as JF  # noqa: E402
from _harness import measure, report  # noqa: E402


def main() -> None:
    if "--one-thread" in sys.argv:
        torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    n, c, o, hw, k = 64, 32, 64, 32, 3
    x = rng.standard_normal((n, c, hw, hw), dtype=np.float32)
    w = rng.standard_normal((o, c, k, k), dtype=np.float32) * 0.1
    b = rng.standard_normal(o, dtype=np.float32)
    g = rng.standard_normal((n, o, hw, hw), dtype=np.float32)
    jx, jw, jb, jg = (jtorch.from_numpy(a) for a in (x, w, b, g))
    tx, tw, tb, tg = (torch.from_numpy(a) for a in (x, w, b, g))
    flops = 2 * n * o * c * k * k * hw * hw
    print(f"load average {os.getloadavg()[0]:.2f}; torch threads {torch.get_num_threads()}; "
          f"{flops / 1e9:.2f} GFLOP per forward")

    res = measure({"jtorch": lambda: JF.conv2d(jx, jw, jb, padding=1),
                   "torch": lambda: torch.nn.functional.conv2d(tx, tw, tb, padding=1)})
    report("conv2d forward, float32", res, "torch",
           {key: f"{flops / v / 1e9:.0f} GFLOP/s" for key, v in res.items()})

    jxr, jwr, jbr = (t.detach().requires_grad_() for t in (jx, jw, jb))
    txr, twr, tbr = (t.detach().requires_grad_() for t in (tx, tw, tb))

    def j_step():
        JF.conv2d(jxr, jwr, jbr, padding=1).backward(jg)

    def t_step():
        torch.nn.functional.conv2d(txr, twr, tbr, padding=1).backward(tg)

    res = measure({"jtorch": j_step, "torch": t_step})
    report("conv2d forward+backward (input, weight, bias grads), float32", res, "torch",
           {key: f"{3 * flops / v / 1e9:.0f} GFLOP/s" for key, v in res.items()})


if __name__ == "__main__":
    main()
