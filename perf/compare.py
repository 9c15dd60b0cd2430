"""``python -m perf compare [BASE.json] NEW.json``: ratio changes, and a non-zero exit status
when a benchmark slowed by more than the noise of both runs allows. Without BASE the
committed baseline of NEW's machine class is used (``perf/baselines/<class>.json``).

What is compared is the same-run ratio ``jtorch/<reference>`` (torch by default), which
survives machine drift far better than absolute times; a benchmark without a reference in
both runs falls back to jtorch's absolute median. A change counts as a regression when

    new / base - 1 > max(min_change, spread(base) + spread(new))

where a run's spread is the inter-quartile range of the pairwise ratios over their median.
A benchmark disturbed by other processes (foreign load above the run's threshold) in either
run is marked "(noisy)"; it still counts unless ``--ignore-disturbed`` (then re-run it).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass

BASELINES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "baselines")
MAKE_BASELINE = "a full run (no --filter, no --threads) on a quiet machine, copied there, becomes it"


def baseline_path(machine_class: str | None) -> str:
    """Where the committed baseline of a machine class lives."""
    return os.path.join(BASELINES, f"{machine_class}.json")


@dataclass
class Row:
    name: str
    metric: str
    base: float
    new: float
    threshold: float
    noisy: bool

    @property
    def change(self) -> float:
        return self.new / self.base if self.base > 0 else math.inf

    @property
    def status(self) -> str:
        if self.change > 1 + self.threshold:
            return "SLOWER" + (" (noisy)" if self.noisy else "")
        if self.change < 1 / (1 + self.threshold):
            return "faster" + (" (noisy)" if self.noisy else "")
        return "ok"


def load(path: str) -> dict:
    with open(path) as f:
        return json.load(f)


def _metrics(b: dict) -> dict[str, tuple[float, float]]:
    """metric name -> (median, relative spread) for the gated numbers of one benchmark."""
    out = {}
    ref = b.get("ref", "torch")
    for key, r in b.get("ratios", {}).items():
        num, den = key.split("/")
        if num.startswith("jtorch") and den == ref:
            out[key] = (r["median"], r.get("spread", 0.0))
    if not out and "jtorch" in b.get("contenders", {}):
        c = b["contenders"]["jtorch"]
        out["jtorch (abs)"] = (c["median"], c.get("spread", 0.0))
    return out


def rows(base: dict, new: dict, min_change: float = 0.10) -> tuple[list[Row], list[str], list[str]]:
    """Rows for benchmarks in both runs, and the names only in base / only in new."""
    bb, nb = base.get("benchmarks", {}), new.get("benchmarks", {})
    out = []
    for name in bb:
        if name not in nb:
            continue
        bm, nm = _metrics(bb[name]), _metrics(nb[name])
        noisy = bool(bb[name].get("disturbed") or nb[name].get("disturbed"))
        for metric in bm:
            if metric not in nm:
                continue
            (b, sb), (n, sn) = bm[metric], nm[metric]
            out.append(Row(name, metric, b, n, max(min_change, sb + sn), noisy))
    return out, sorted(set(bb) - set(nb)), sorted(set(nb) - set(bb))


def _fmt(v: float) -> str:
    return f"{v:.3g}"


def table(rs: list[Row]) -> str:
    head = ["benchmark", "metric", "base", "new", "change", "threshold", "status"]
    body = [[r.name, r.metric, _fmt(r.base), _fmt(r.new), f"{r.change:.2f}x",
             f"+{r.threshold:.0%}", r.status] for r in sorted(rs, key=lambda r: -r.change)]
    widths = [max(len(x) for x in col) for col in zip(head, *body)]
    lines = ["  ".join(x.ljust(w) for x, w in zip(line, widths)).rstrip() for line in [head] + body]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def main(base_path: str | None, new_path: str, min_change: float = 0.10,
         ignore_disturbed: bool = False) -> int:
    new = load(new_path)
    if base_path is None:
        base_path = baseline_path(new.get("machine", {}).get("class"))
        if not os.path.exists(base_path):
            print(f"no baseline for this machine class: {os.path.relpath(base_path)} does not "
                  f"exist; {MAKE_BASELINE}")
            return 2
    base = load(base_path)
    rs, only_base, only_new = rows(base, new, min_change)
    bc, nc = base.get("machine", {}).get("class"), new.get("machine", {}).get("class")
    print(f"base: {base_path} ({base.get('mode')}, {bc}, commit "
          f"{(base.get('commit') or {}).get('short')}, max foreign load "
          f"{(base.get('load') or {}).get('max_foreign_cores', 0):.2f} cores)")
    print(f"new:  {new_path} ({new.get('mode')}, {nc}, commit "
          f"{(new.get('commit') or {}).get('short')}, max foreign load "
          f"{(new.get('load') or {}).get('max_foreign_cores', 0):.2f} cores)")
    if bc != nc:
        print(f"warning: different machine classes ({bc} vs {nc}); ratios may not transfer")
    bt, nt = (d.get("machine", {}).get("threads", {}).get("pinned") for d in (base, new))
    if bt != nt:
        print(f"warning: thread pools pinned differently ({bt or 'default'} vs {nt or 'default'} "
              "threads); ratios may not transfer")
    if not rs:
        print("no benchmark in common")
        return 0
    print(table(rs))
    if only_base or only_new:
        print(f"\n{len(only_base)} benchmarks only in base, {len(only_new)} only in new")
    slower = [r for r in rs if r.status.startswith("SLOWER") and not (ignore_disturbed and r.noisy)]
    noisy = [r for r in rs if r.status.startswith("SLOWER") and r.noisy]
    if noisy:
        print(f"\n{len(noisy)} slowdowns in benchmarks disturbed by other processes"
              + (" not counted" if ignore_disturbed else "; re-run them on a quiet machine"))
    if slower:
        print(f"\nREGRESSION: {len(slower)} of {len(rs)} metrics slower beyond the noise "
              f"threshold: " + ", ".join(f"{r.name} {r.change:.2f}x" for r in slower))
        return 1
    print(f"\nno regression ({len(rs)} metrics compared)")
    return 0
