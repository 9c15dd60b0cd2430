"""The machine's measured ceilings, taken in the same run as the benchmarks.

* memory bandwidth: a STREAM-style triad ``out = a + s * b`` (float32, 12 bytes per element)
  at several sizes, by a parallel Numba kernel and by torch's ``add(out=)``; the best of them
  at the footprint nearest a benchmark's is its ceiling (in-cache and DRAM differ by 4x);
* compute: sgemm (float32 matmul) by NumPy's BLAS and torch's MKL; the best GFLOP/s is the
  peak a compute-bound benchmark is held against.
"""

from __future__ import annotations

import numba
import numpy as np

from .harness import Case, Settings, Skip, _summary, _time_blocks, require_torch


@numba.njit(parallel=True, cache=True)
def _triad(a, b, s, out):
    for i in numba.prange(a.size):
        out[i] = a[i] + s * b[i]


@numba.njit(cache=True)
def _triad_serial(a, b, s, out):
    for i in range(a.size):
        out[i] = a[i] + s * b[i]


def _triad_thunks(n: int) -> dict:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(n, dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    out = np.empty_like(a)
    s = np.float32(0.5)
    # the serial kernel keeps the ceiling honest when other jobs take a core (parallel
    # regions then wait on scheduler ticks)
    thunks = {"numba": lambda: _triad(a, b, s, out), "numba_1thread": lambda: _triad_serial(a, b, s, out)}
    try:
        torch = require_torch()
        ta, tb, to = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(out)
        thunks["torch"] = lambda: torch.add(ta, tb, alpha=0.5, out=to)
    except Skip:
        pass
    return thunks


def _sgemm_thunks(n: int) -> dict:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, n), dtype=np.float32)
    out = np.empty_like(a)
    thunks = {"numpy": lambda: np.matmul(a, b, out=out)}
    try:
        torch = require_torch()
        ta, tb, to = torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(out)
        thunks["torch"] = lambda: torch.mm(ta, tb, out=to)
    except Skip:
        pass
    return thunks


def measure(quick: bool, st: Settings) -> dict:
    triad_sizes = (16, 20, 22) if quick else (16, 18, 20, 22, 24)
    sgemm_sizes = (512, 1024) if quick else (1024, 2048)
    case = Case(make=None)
    out = {"triad": {}, "sgemm": {}}
    for p in triad_sizes:
        n = 1 << p
        nbytes = 12 * n
        rounds = _time_blocks(_triad_thunks(n), case, st)
        row = {"n": n, "bytes": nbytes, "gbps": {}}
        for k, rs in rounds.items():
            t = _summary([v for r in rs for v in r])["median"]
            row["gbps"][k] = nbytes / t / 1e9
        row["best_gbps"] = max(row["gbps"].values())
        out["triad"][f"n=2^{p}"] = row
    for n in sgemm_sizes:
        flops = 2 * n**3
        rounds = _time_blocks(_sgemm_thunks(n), case, st)
        row = {"n": n, "flops": flops, "gflops": {}}
        for k, rs in rounds.items():
            t = _summary([v for r in rs for v in r])["median"]
            row["gflops"][k] = flops / t / 1e9
        row["best_gflops"] = max(row["gflops"].values())
        out["sgemm"][f"{n}^3"] = row
    # a bigger footprint never streams faster than a smaller one: carry the best of the larger
    # sizes down, so one disturbed small size cannot inflate fractions
    best = 0.0
    for row in sorted(out["triad"].values(), key=lambda r: -r["bytes"]):
        best = max(best, row["best_gbps"])
        row["best_gbps"] = best
    out["bandwidth_gbps"] = max(r["best_gbps"] for r in out["triad"].values())
    out["dram_bandwidth_gbps"] = out["triad"][f"n=2^{triad_sizes[-1]}"]["best_gbps"]
    out["sgemm_gflops"] = max(r["best_gflops"] for r in out["sgemm"].values())
    return out
