"""``python -m perf run``: measure the limits, then every selected benchmark, and write JSON."""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

from . import harness, machine
from .harness import REGISTRY, Settings, measure_case, select, wait_for_quiet

SCHEMA = 1


def settings(quick: bool, contenders: str | None, max_wait: float | None = None) -> Settings:
    chosen = tuple(c.strip() for c in contenders.split(",")) if contenders else ()
    if quick:
        st = Settings(rounds=1, samples=3, min_time=0.01, gap=0.05, retry_budget=10.0,
                      self_timed_samples=1, contenders=chosen)
    else:
        st = Settings(contenders=chosen)
    if max_wait is not None:
        st.retry_budget = max_wait
    return st


class _Progress:
    """tqdm when it is installed, else one line per benchmark on stderr."""

    def __init__(self, items: list, desc: str):
        self.items, self.desc = items, desc
        try:
            from tqdm import tqdm

            self.bar = tqdm(items, desc=desc, file=sys.stderr, dynamic_ncols=True, leave=True)
        except ImportError:
            self.bar = None

    def __iter__(self):
        if self.bar is not None:
            yield from self.bar
            return
        for i, item in enumerate(self.items):
            yield item
            print(f"[{self.desc} {i + 1}/{len(self.items)}]", file=sys.stderr, flush=True)

    def label(self, text: str) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(text, refresh=True)
        else:
            print(f"  {text} ...", file=sys.stderr, flush=True)


def _json_default(o):
    import numpy as np

    if isinstance(o, np.generic):
        return o.item()
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


def write_json(obj: dict, path: str) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1, default=_json_default)
        f.write("\n")
    os.replace(tmp, path)


def run(quick: bool, patterns: list[str] | None, out: str, contenders: str | None = None,
        snapshot: str | None = None, no_limits: bool = False, max_wait: float | None = None,
        threads: int | None = None) -> dict:
    """Measure and write ``out``; ``threads``: the count the caller pinned every pool to
    (:func:`machine.pin_threads`, before the libraries loaded), recorded with the facts."""
    st = settings(quick, contenders, max_wait)
    entries = select(quick, patterns)
    if not entries:
        raise SystemExit(f"no benchmark matches {patterns} (see python -m perf list)")
    if snapshot:
        snapshots(entries, quick, snapshot)
    started = time.time()
    doc = {"schema": SCHEMA, "mode": "quick" if quick else "full",
           "created": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
           "argv": sys.argv[1:], "filter": patterns or [], "commit": machine.commit()}
    doc["settings"] = {k: getattr(st, k) for k in ("rounds", "samples", "min_time", "gap",
                                                   "load_threshold", "retry_budget",
                                                   "self_timed_samples")}
    doc["settings"]["contenders"] = list(st.contenders) or list(harness.CONTENDERS)
    limits = None
    if not no_limits:
        from . import limits as _limits

        print("measuring limits (triad bandwidth, sgemm peak) ...", file=sys.stderr, flush=True)
        t0 = time.perf_counter()
        limits = _limits.measure(quick, st)
        limits["wall_s"] = round(time.perf_counter() - t0, 2)
    doc["limits"] = limits
    doc["machine"] = machine.facts(threads)  # after the limits: thread pools have started
    doc["benchmarks"], doc["errors"] = {}, {}
    budget = st.retry_budget
    progress = _Progress(entries, "perf")
    for e in progress:
        progress.label(e.name)
        if budget > 0:
            _, waited = wait_for_quiet(st.load_threshold, min(budget, 10.0))
            budget -= waited
        try:
            res = _measure(e, st, limits)
            attempts = 1
            while res["foreign_cores"] > st.load_threshold and budget > 0:
                t0 = time.perf_counter()
                wait_for_quiet(st.load_threshold, min(budget, 10.0))
                again = _measure(e, st, limits)
                attempts += 1
                budget -= time.perf_counter() - t0
                if again["foreign_cores"] < res["foreign_cores"]:
                    res = again
            res["attempts"] = attempts
            res["disturbed"] = res["foreign_cores"] > st.load_threshold
            doc["benchmarks"][e.name] = res
        except Exception as exc:  # noqa: BLE001
            doc["errors"][e.name] = f"{type(exc).__name__}: {exc}"[:500]
        harness.release()
    loads = [b["foreign_cores"] for b in doc["benchmarks"].values()]
    doc["load"] = {"max_foreign_cores": max(loads, default=0.0),
                   "median_foreign_cores": sorted(loads)[len(loads) // 2] if loads else 0.0,
                   "threshold": st.load_threshold,
                   "disturbed": [k for k, b in doc["benchmarks"].items() if b["disturbed"]],
                   "loadavg_end": list(os.getloadavg())}
    doc["wall_s"] = round(time.time() - started, 1)
    if snapshot:
        doc["snapshot_dir"] = os.path.abspath(snapshot)
    write_json(doc, out)
    return doc


def _measure(e, st: Settings, limits) -> dict:
    case = e.factory()
    case.name, case.area = e.name, e.area
    return measure_case(case, st, limits)


# ---------------------------------------------------------------------------------------------
# kernel snapshots


def _slug(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.=" else "_" for c in name)


def snapshots(entries: list, quick: bool, root: str) -> None:
    """For each benchmark, a fresh process runs its jtorch contenders once with
    ``JTORCH_DUMP_DIR=<root>/<benchmark>``, so the directory holds the generated source of
    every kernel the benchmark uses; the hand-written kernel modules are copied once to
    ``<root>/_handwritten``. ``diff -r`` of two snapshot directories explains a slowdown."""
    os.makedirs(root, exist_ok=True)
    import jtorch

    kdir = os.path.join(os.path.dirname(jtorch.__file__), "kernels")
    hand = os.path.join(root, "_handwritten")
    shutil.rmtree(hand, ignore_errors=True)
    shutil.copytree(kdir, hand, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    index = {}
    progress = _Progress(entries, "snapshot")
    for e in progress:
        progress.label(e.name)
        d = os.path.join(root, _slug(e.name))
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        env = dict(os.environ, JTORCH_DUMP_DIR=d)
        cmd = [sys.executable, "-m", "perf", "_snapshot", e.name] + (["--quick"] if quick else [])
        r = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        files = {}
        for f in sorted(os.listdir(d)):
            with open(os.path.join(d, f), "rb") as fh:
                files[f] = hashlib.sha1(fh.read()).hexdigest()[:12]
        index[e.name] = {"dir": _slug(e.name), "kernels": files,
                         "status": r.stdout.strip().splitlines()[-1] if r.returncode == 0 and
                         r.stdout.strip() else f"error: {r.stderr.strip()[-300:]}"}
    write_json(index, os.path.join(root, "index.json"))


def snapshot_child(name: str, quick: bool) -> None:
    """Run one benchmark's jtorch contenders once (in a process whose dump dir is set)."""
    from .harness import CONTENDERS, Skip

    entry = next((e for e in select(quick, None) if e.name == name), None) or next(
        e for e in REGISTRY if e.name == name)
    case = entry.factory()
    case.name, case.area = entry.name, entry.area
    if case.self_timed:
        print("skipped: runs in its own processes")
        return
    ran = []
    for cname, build in CONTENDERS.items():
        if not cname.startswith("jtorch"):
            continue
        try:
            build(case)()
            ran.append(cname)
        except Skip:
            pass
    print("ran: " + ", ".join(ran))
