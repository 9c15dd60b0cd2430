"""Reductions, softmax, scans and sort on a (4096, 1024) float32 tensor: jtorch vs torch vs NumPy.

Run: python perf/bench_reduction.py [--quick] [--threads N]   (times and ratios, one run)
``--threads 1`` compares single-core kernels (steadier when other jobs share the machine).
Targets: sum over the last dim within 1.2x of torch; softmax and log_softmax within 1.0x.
"""

from __future__ import annotations

import sys

import numpy as np
import torch
from _harness import measure, report

import jtorch


def _np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _np_log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def main(quick: bool = False, threads: int | None = None) -> None:
    if threads:
        import numba

        torch.set_num_threads(threads)
        numba.set_num_threads(threads)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4096, 1024), dtype=np.float32)
    jx, tx = jtorch.from_numpy(x), torch.from_numpy(x)
    rounds = 2 if quick else 3
    cases = [
        ("sum(dim=-1)", lambda: jtorch.sum(jx, -1), lambda: torch.sum(tx, -1), lambda: x.sum(-1)),
        ("softmax(dim=-1)", lambda: jtorch.softmax(jx, -1), lambda: torch.softmax(tx, -1),
         lambda: _np_softmax(x)),
        ("log_softmax(dim=-1)", lambda: jtorch.log_softmax(jx, -1),
         lambda: torch.log_softmax(tx, -1), lambda: _np_log_softmax(x)),
        ("sum()", lambda: jtorch.sum(jx), lambda: torch.sum(tx), lambda: x.sum()),
        ("sum(dim=0)", lambda: jtorch.sum(jx, 0), lambda: torch.sum(tx, 0), lambda: x.sum(0)),
        ("mean(dim=-1)", lambda: jtorch.mean(jx, -1), lambda: torch.mean(tx, -1),
         lambda: x.mean(-1)),
        ("amax(dim=-1)", lambda: jtorch.amax(jx, -1), lambda: torch.amax(tx, -1),
         lambda: x.max(-1)),
        ("argmax(dim=-1)", lambda: jtorch.argmax(jx, -1), lambda: torch.argmax(tx, -1),
         lambda: x.argmax(-1)),
        ("logsumexp(dim=-1)", lambda: jtorch.logsumexp(jx, -1), lambda: torch.logsumexp(tx, -1),
         None),
        ("var(dim=-1)", lambda: jtorch.var(jx, -1), lambda: torch.var(tx, -1), lambda: x.var(-1)),
        ("cumsum(dim=-1)", lambda: jtorch.cumsum(jx, -1), lambda: torch.cumsum(tx, -1),
         lambda: x.cumsum(-1)),
    ]
    if not quick:
        xs = x[:512]
        jxs, txs = jtorch.from_numpy(xs), torch.from_numpy(xs)
        cases.append(("sort(dim=-1), (512, 1024)", lambda: jtorch.sort(jxs, -1),
                      lambda: torch.sort(txs, -1), lambda: np.sort(xs, -1)))
    for name, fj, ft, fn in cases:
        contenders = {"jtorch": fj, "torch": ft}
        if fn is not None:
            contenders["numpy"] = fn
        report(f"{name}, float32 (4096, 1024)", measure(contenders, rounds=rounds), "torch")


if __name__ == "__main__":
    argv = sys.argv[1:]
    n = int(argv[argv.index("--threads") + 1]) if "--threads" in argv else None
    main("--quick" in argv, n)
