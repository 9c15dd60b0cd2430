"""Command line: ``python -m perf {run,compare,report,list,gpu}`` (see README's Performance
suite)."""

from __future__ import annotations

import argparse
import os
import sys


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m perf", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="measure limits and benchmarks, write JSON")
    r.add_argument("--quick", action="store_true", help="small sizes, 1 round, few samples")
    r.add_argument("--filter", action="append", metavar="PATTERN",
                   help="substring or glob of benchmark names; repeat or separate with commas")
    r.add_argument("--out", default="perf-results.json")
    r.add_argument("--contenders", help="comma-separated subset, e.g. jtorch,torch")
    r.add_argument("--snapshot", metavar="DIR", help="store each benchmark's generated kernels")
    r.add_argument("--no-limits", action="store_true", help="skip the bandwidth/sgemm ceilings")
    r.add_argument("--max-wait", type=float, metavar="SECONDS",
                   help="budget for waiting on quiet and re-measuring disturbed benchmarks "
                        "(default 60 full, 10 quick)")
    r.add_argument("--threads", type=_positive, metavar="N",
                   help="run every pool (Numba, torch, BLAS) at N threads; 1 gives a comparison "
                        "a busy machine disturbs less (default: each pool's own size)")
    c = sub.add_parser("compare", help="ratio changes between two runs; exit 1 on regression")
    c.add_argument("base", nargs="?",
                   help="baseline results (default: perf/baselines/<machine class of NEW>.json)")
    c.add_argument("new")
    c.add_argument("--min-change", type=float, default=0.10,
                   help="smallest relative slowdown that can count (default 0.10)")
    c.add_argument("--ignore-disturbed", action="store_true",
                   help="do not count slowdowns of benchmarks disturbed by other processes")
    rep = sub.add_parser("report", help="Markdown table and PNG charts from a results file")
    rep.add_argument("results")
    rep.add_argument("--out", help="Markdown path (default: next to the results)")
    rep.add_argument("--no-charts", action="store_true")
    ls = sub.add_parser("list", help="list benchmark names")
    ls.add_argument("--quick", action="store_true")
    ls.add_argument("--filter", action="append", metavar="PATTERN")
    g = sub.add_parser("gpu", help="CUDA correctness sweeps and GPU benchmarks (perf/gpu.py)")
    g.add_argument("--quick", action="store_true", help="small sizes, a few sweep calls")
    g.add_argument("--out", default="perf-gpu.json")
    g.add_argument("--simulator", action="store_true",
                   help="run in Numba's CUDA simulator (a smoke test of the command)")
    g.add_argument("--skip-sweeps", action="store_true", help="benchmarks only")
    snap = sub.add_parser("_snapshot")  # internal: one benchmark's kernels, in a fresh process
    snap.add_argument("name")
    snap.add_argument("--quick", action="store_true")
    return p


def _positive(v: str) -> int:
    n = int(v)
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a positive thread count, got {v}")
    return n


def _patterns(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [p.strip() for v in values for p in v.split(",") if p.strip()]


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.cmd == "run":
        if args.threads:
            from . import machine

            machine.pin_threads(args.threads)  # before the runner imports numpy and numba
        from . import report, runner

        doc = runner.run(args.quick, _patterns(args.filter), args.out, args.contenders,
                         args.snapshot, args.no_limits, args.max_wait, args.threads)
        print(report.markdown(doc))
        print(f"wrote {args.out}")
        print(_baseline_note(doc, args.out))
        return 0
    if args.cmd == "compare":
        from . import compare

        return compare.main(args.base, args.new, args.min_change, args.ignore_disturbed)
    if args.cmd == "report":
        from . import report

        return report.main(args.results, args.out, args.no_charts)
    if args.cmd == "list":
        from .harness import select

        for e in select(args.quick, _patterns(args.filter)):
            print(e.name)
        return 0
    if args.cmd == "gpu":
        from . import gpu

        return gpu.main(args.quick, args.out, args.simulator, args.skip_sweeps)
    if args.cmd == "_snapshot":
        from . import runner

        runner.snapshot_child(args.name, args.quick)
        return 0
    return 2


def _baseline_note(doc: dict, out: str) -> str:
    """The machine class, and how this run relates to the class's committed baseline."""
    from .compare import MAKE_BASELINE, baseline_path

    cls = doc["machine"]["class"]
    path = os.path.relpath(baseline_path(cls))
    if os.path.exists(path):
        return f"machine class {cls}: python -m perf compare {out}   (against {path})"
    if doc["mode"] == "full" and not doc["filter"] and not doc["machine"]["threads"]["pinned"]:
        how = f"if the run was quiet (load.max_foreign_cores), cp {out} {path}"
    else:
        how = MAKE_BASELINE
    return f"machine class {cls}: no baseline {path} yet; {how}"


if __name__ == "__main__":
    sys.exit(main())
