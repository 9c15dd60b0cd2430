"""``python -m perf report results.json``: a Markdown table of times, ratios against torch
and fractions of the machine's limits, plus PNG bar charts when matplotlib is installed."""

from __future__ import annotations

import json
import os

_ORDER = ("jtorch", "jtorch_compile", "torch", "torch_compile", "numpy")


def _t(v: float | None, unit: str = "s") -> str:
    if v is None:
        return ""
    if unit != "s":
        return f"{v:.3g} {unit}"
    for name, scale in (("s", 1), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if v >= scale:
            return f"{v / scale:.3g} {name}"
    return f"{v:.3g} s"


def _ratio(b: dict, key: str) -> str:
    r = b.get("ratios", {}).get(key)
    return f"{r['median']:.2f}" if r else ""


def _limit(c: dict | None) -> str:
    if not c:
        return ""
    if "frac_bw" in c:
        return f"{c['frac_bw']:.2f} bw ({c['gbps']:.3g} GB/s)"
    if "frac_peak" in c:
        return f"{c['frac_peak']:.2f} peak ({c['gflops']:.3g} GFLOP/s)"
    return ""


def markdown(doc: dict, charts: list[str] | None = None, note: str = "") -> str:
    m, lim, load = doc.get("machine", {}), doc.get("limits") or {}, doc.get("load", {})
    lines = [f"# jtorch performance report ({doc.get('mode')} run)", ""]
    commit = doc.get("commit") or {}
    lines.append(f"commit `{commit.get('short')}`{' (jtorch modified)' if commit.get('jtorch_dirty') else ''}"
                 f" - {doc.get('created')} - machine class `{m.get('class')}`: {m.get('cpu_model')}, "
                 f"{m.get('cores')} cores, threads {m.get('threads')}")
    v = m.get("versions", {})
    lines.append("versions: " + ", ".join(f"{k} {x}" for k, x in v.items() if x))
    if lim:
        lines.append(f"limits: triad bandwidth {lim.get('bandwidth_gbps', 0):.1f} GB/s best "
                     f"(DRAM-size {lim.get('dram_bandwidth_gbps', 0):.1f} GB/s), sgemm "
                     f"{lim.get('sgemm_gflops', 0):.1f} GFLOP/s")
    lines.append(f"load from other processes: max {load.get('max_foreign_cores', 0):.2f} cores, "
                 f"median {load.get('median_foreign_cores', 0):.2f}; disturbed benchmarks: "
                 f"{len(load.get('disturbed', []))}")
    lines += ["", "Ratios are median pairwise time ratios from the same run (<1: jtorch faster); "
              "limit is jtorch's fraction of the triad bandwidth (memory-bound) or sgemm peak "
              "(compute-bound).", ""]
    head = ["benchmark", "jtorch", "torch", "torch.compile", "numpy", "jtorch/torch",
            "jtorch/torch.compile", "jtorch/numpy", "jtorch limit", "torch limit", "fgn cores"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for name, b in doc.get("benchmarks", {}).items():
        c = b.get("contenders", {})
        unit = b.get("unit", "s")
        row = [f"`{name}`"] + [_t(c.get(k, {}).get("median"), unit) for k in
                               ("jtorch", "torch", "torch_compile", "numpy")]
        row += [_ratio(b, "jtorch/torch"), _ratio(b, "jtorch/torch_compile"),
                _ratio(b, "jtorch/numpy"), _limit(c.get("jtorch")), _limit(c.get("torch")),
                f"{b.get('foreign_cores', 0):.2f}" + (" !" if b.get("disturbed") else "")]
        lines.append("| " + " | ".join(row) + " |")
    extras = [(n, b) for n, b in doc.get("benchmarks", {}).items()
              if set(b.get("contenders", {})) - set(_ORDER)]
    if extras:
        lines += ["", "Case-specific contenders:", ""]
        for n, b in extras:
            parts = [f"{k} {_t(v['median'], b.get('unit', 's'))}"
                     for k, v in b["contenders"].items() if k not in _ORDER]
            parts += [f"{k} {v['median']:.2f}" for k, v in b.get("ratios", {}).items()
                      if k.split("/")[-1] not in _ORDER]  # the case's own pairs
            lines.append(f"- `{n}`: " + ", ".join(parts))
    if doc.get("errors"):
        lines += ["", "Errors:", ""] + [f"- `{k}`: {v}" for k, v in doc["errors"].items()]
    if charts:
        lines += [""] + [f"![{os.path.basename(c)}]({os.path.basename(c)})" for c in charts]
    if note:
        lines += ["", note]
    return "\n".join(lines) + "\n"


def charts(doc: dict, out_dir: str) -> list[str]:
    """One PNG per area: bars of jtorch/torch (log scale, 1 = parity) and one of jtorch's
    fraction of the machine limit. Raises ImportError without matplotlib."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    paths = []
    areas: dict[str, list] = {}
    for name, b in doc.get("benchmarks", {}).items():
        areas.setdefault(b.get("area", name.split("/")[0]), []).append((name, b))
    for area, items in areas.items():
        ratios = [(n, b["ratios"][k]) for n, b in items for k in ("jtorch/torch",)
                  if k in b.get("ratios", {})]
        fracs = [(n, b["contenders"]["jtorch"].get("frac_bw", b["contenders"]["jtorch"].get("frac_peak")))
                 for n, b in items if "jtorch" in b.get("contenders", {})]
        fracs = [(n, f) for n, f in fracs if f is not None]
        if not ratios and not fracs:
            continue
        panels = [p for p in (ratios, fracs) if p]
        fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 0.45 * max(
            len(ratios), len(fracs)) + 1.5), squeeze=False)
        col = 0
        if ratios:
            ax = axes[0][col]
            col += 1
            labels = [n.split("/", 1)[-1] for n, _ in ratios]
            med = [r["median"] for _, r in ratios]
            err = [[max(0.0, r["median"] - r["q25"]) for _, r in ratios],
                   [max(0.0, r["q75"] - r["median"]) for _, r in ratios]]
            colors = ["tab:green" if v <= 1 else "tab:red" for v in med]
            ax.barh(labels, med, xerr=err, color=colors)
            ax.axvline(1.0, color="black", lw=1)
            ax.set_xscale("log")
            ax.invert_yaxis()
            ax.set_title(f"{area}: jtorch time / torch time (<1 faster)")
        if fracs:
            ax = axes[0][col]
            ax.barh([n.split("/", 1)[-1] for n, _ in fracs], [f for _, f in fracs], color="tab:blue")
            ax.axvline(1.0, color="black", lw=1)
            ax.invert_yaxis()
            ax.set_title(f"{area}: jtorch fraction of bandwidth or sgemm peak")
        fig.tight_layout()
        path = os.path.join(out_dir, f"perf_{area}.png")
        fig.savefig(path, dpi=90)
        plt.close(fig)
        paths.append(path)
    return paths


def main(path: str, out: str | None = None, no_charts: bool = False) -> int:
    with open(path) as f:
        doc = json.load(f)
    out = out or os.path.splitext(path)[0] + ".md"
    out_dir = os.path.dirname(os.path.abspath(out))
    os.makedirs(out_dir, exist_ok=True)
    made, note = [], ""
    if no_charts:
        note = "Charts were not requested."
    else:
        try:
            made = charts(doc, out_dir)
        except ImportError:
            note = "Charts were skipped: matplotlib is not installed (pip install '.[perf]')."
    with open(out, "w") as f:
        f.write(markdown(doc, made, note))
    print(f"wrote {out}" + "".join(f"\nwrote {p}" for p in made))
    if note:
        print(note)
    return 0
