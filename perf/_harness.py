"""A small same-run benchmark harness: blocked, rotated rounds with idle gaps, medians.

Spinning BLAS/OpenMP pools slow whichever runtime runs next on this 2-core machine, so each
contender's block starts after an idle gap and one untimed warm call.
"""

from __future__ import annotations

import statistics
import time


def _autorange(fn, min_time: float = 0.05) -> int:
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t >= min_time:
            return n
        n *= 2


def measure(contenders: dict, rounds: int = 3, samples: int = 3, gap: float = 0.15) -> dict:
    """Median seconds per call for each contender, measured in rotated blocks."""
    names = list(contenders)
    times = {k: [] for k in names}
    numbers = {}
    for r in range(rounds):
        order = names[r % len(names):] + names[: r % len(names)]
        for k in order:
            fn = contenders[k]
            time.sleep(gap)
            fn()
            n = numbers.get(k) or numbers.setdefault(k, _autorange(fn))
            for _ in range(samples):
                t = time.perf_counter()
                for _ in range(n):
                    fn()
                times[k].append((time.perf_counter() - t) / n)
    return {k: statistics.median(v) for k, v in times.items()}


def fmt_time(s: float) -> str:
    for unit, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s:.3g} s"


def report(case: str, res: dict, ref: str, extra: dict | None = None) -> None:
    """Print one case: time per contender and its ratio to ``ref`` (<1 means faster)."""
    print(f"\n## {case}")
    for k, v in res.items():
        ratio = f"t/t_{ref} = {v / res[ref]:.3f}" if k != ref else "(reference)"
        more = f"  {extra[k]}" if extra and k in extra else ""
        print(f"  {k:<22} {fmt_time(v):>10}  {ratio}{more}")
