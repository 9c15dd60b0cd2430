"""Import time and the first op of a new process with a warm kernel cache.

Targets: ``import jtorch`` < 1.5 s; first op after import < 0.5 s with a warm cache.
Run: python perf/bench_coldstart.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys

_SCRIPT = r"""
import time
t0 = time.perf_counter()
import jtorch
t1 = time.perf_counter()
x = jtorch.ones(1000)
y = jtorch.exp(x) + x * 2
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def run_once() -> tuple[float, float]:
    out = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, check=True)
    a, b = out.stdout.split()
    return float(a), float(b)


def main(repeats: int = 5) -> None:
    run_once()  # fills the cache if it is cold
    imports, firsts = zip(*(run_once() for _ in range(repeats)))
    print("\n## cold start, warm kernel cache (new process each)")
    print(f"  import jtorch          {statistics.median(imports) * 1e3:8.1f} ms   (target < 1500 ms)")
    print(f"  first ops after import {statistics.median(firsts) * 1e3:8.1f} ms   (target < 500 ms)")


if __name__ == "__main__":
    main()
