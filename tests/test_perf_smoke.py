"""Smoke tests of the perf suite (``python -m perf``): a quick run of three cheap benchmarks
writes well-formed JSON (torch comparisons, limit fractions, machine facts), ``--threads``
pins every pool, and ``compare`` flags a deliberately slowed benchmark in that very JSON and
passes an unchanged one. No timing is asserted: the compare tests fix every spread, so their
outcome never depends on how fast or noisy this machine was."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUICK = {"dispatch/add[n=1]", "pointwise/add[n=2^16]", "matmul/mm_256"}


def _perf(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "perf", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("perf") / "quick.json"
    r = _perf("run", "--quick", "--filter", ",".join(QUICK), "--max-wait", "0", "--out", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    return json.loads(out.read_text()), r.stdout


def test_quick_run_writes_results(quick_run):
    doc, stdout = quick_run
    assert doc["schema"] == 1 and doc["mode"] == "quick"
    m = doc["machine"]
    for key in ("cpu_model", "cores", "threads", "versions", "class"):
        assert key in m
    assert "numba" in m["threads"] and m["threads"]["pinned"] is None
    assert f"machine class {m['class']}" in stdout  # the name of its baseline file
    assert "sha" in doc["commit"]
    lim = doc["limits"]
    assert lim["bandwidth_gbps"] > 0 and lim["sgemm_gflops"] > 0
    assert set(doc["benchmarks"]) == QUICK
    assert "max_foreign_cores" in doc["load"]
    for b in doc["benchmarks"].values():
        assert b["foreign_cores"] >= 0
        c = b["contenders"]
        assert c["jtorch"]["median"] > 0 and c["numpy"]["median"] > 0 and c["torch"]["median"] > 0
        assert c["jtorch"]["q25"] <= c["jtorch"]["median"] <= c["jtorch"]["q75"]
        assert {"jtorch/torch", "jtorch/numpy", "numpy/torch"} <= set(b["ratios"])
        assert "jtorch_compile" in b["skipped"]  # compiled contenders skip with a reason
    add = doc["benchmarks"]["pointwise/add[n=2^16]"]
    assert add["kind"] == "memory"
    assert add["contenders"]["jtorch"]["frac_bw"] > 0 and add["contenders"]["torch"]["frac_bw"] > 0
    mm = doc["benchmarks"]["matmul/mm_256"]
    assert mm["kind"] == "compute"
    assert mm["contenders"]["jtorch"]["frac_peak"] > 0 and mm["contenders"]["torch"]["frac_peak"] > 0


def test_threads_pins_every_pool(tmp_path):
    out = tmp_path / "one.json"
    r = _perf("run", "--quick", "--threads", "1", "--no-limits", "--filter", "dispatch/add[n=1]",
              "--contenders", "jtorch,torch", "--max-wait", "0", "--out", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    m = json.loads(out.read_text())["machine"]
    assert m["threads"]["pinned"] == 1
    assert m["threads"]["numba"] == m["threads"]["jtorch"] == m["threads"]["torch_intra_op"] == 1
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
        assert m["env"][var] == "1"


# --- compare: on the quick run's own JSON, with every spread fixed small ---------------------


def _steady(doc: dict, spread: float = 0.02) -> dict:
    """The run as a quiet machine would have measured it: small spreads, nothing disturbed."""
    doc = copy.deepcopy(doc)
    for b in doc["benchmarks"].values():
        b["disturbed"] = False
        for s in list(b["contenders"].values()) + list(b["ratios"].values()):
            s["spread"] = spread
    return doc


def _slowed(doc: dict, bench: str, contender: str, factor: float) -> dict:
    """``doc`` with one contender of one benchmark ``factor`` times slower."""
    doc = copy.deepcopy(doc)
    b = doc["benchmarks"][bench]
    c = b["contenders"][contender]
    for k in ("median", "q25", "q75"):
        c[k] *= factor
    c["rounds"] = [v * factor for v in c["rounds"]]
    for key, r in b["ratios"].items():
        num, den = key.split("/")
        scale = factor if num == contender else 1 / factor if den == contender else 1.0
        for k in ("median", "q25", "q75"):
            r[k] *= scale
    return doc


def _compare(tmp_path, base: dict, new: dict, *flags):
    paths = []
    for name, doc in (("base", base), ("new", new)):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(doc))
    return _perf("compare", *map(str, paths), *flags)


def _regression_line(stdout: str) -> str:
    return next((line for line in stdout.splitlines() if line.startswith("REGRESSION")), "")


def test_compare_passes_unchanged(tmp_path, quick_run):
    base = _steady(quick_run[0])
    r = _compare(tmp_path, base, base)
    assert r.returncode == 0, r.stdout
    assert "no regression" in r.stdout and not _regression_line(r.stdout)


@pytest.mark.parametrize("contender", ["jtorch", "torch"])
def test_compare_flags_slowed_benchmark(tmp_path, quick_run, contender):
    """jtorch's kernel 2x slower is a regression; torch 2x slower makes jtorch look faster."""
    base = _steady(quick_run[0])
    r = _compare(tmp_path, base, _slowed(base, "pointwise/add[n=2^16]", contender, 2.0))
    if contender == "torch":
        assert r.returncode == 0, r.stdout
        return
    assert r.returncode == 1, r.stdout
    line = _regression_line(r.stdout)
    assert "pointwise/add[n=2^16] 2.00x" in line
    assert "dispatch/add" not in line and "matmul/mm_256" not in line


def test_compare_slowdown_of_disturbed_benchmark(tmp_path, quick_run):
    """A slowdown in a disturbed run counts, marked noisy, unless --ignore-disturbed."""
    base = _steady(quick_run[0])
    new = _slowed(base, "matmul/mm_256", "jtorch", 2.0)
    new["benchmarks"]["matmul/mm_256"]["disturbed"] = True
    r = _compare(tmp_path, base, new)
    assert r.returncode == 1 and "SLOWER (noisy)" in r.stdout, r.stdout
    assert _compare(tmp_path, base, new, "--ignore-disturbed").returncode == 0


def test_compare_threshold_follows_spread(tmp_path, quick_run):
    """A 15% slowdown is a regression in quiet runs and not inside a noisy run's spread."""
    base = _steady(quick_run[0])
    new = _slowed(base, "dispatch/add[n=1]", "jtorch", 1.15)
    assert _compare(tmp_path, base, new).returncode == 1
    new["benchmarks"]["dispatch/add[n=1]"]["ratios"]["jtorch/torch"]["spread"] = 0.3
    assert _compare(tmp_path, base, new).returncode == 0


def test_compare_without_base_uses_the_class_baseline(tmp_path, quick_run):
    new = copy.deepcopy(quick_run[0])
    new["machine"]["class"] = "no-such-machine-1c"
    path = tmp_path / "new.json"
    path.write_text(json.dumps(new))
    r = _perf("compare", str(path))
    assert r.returncode == 2 and "perf/baselines/no-such-machine-1c.json" in r.stdout, r.stdout


def test_self_timed_samples_interleave_contenders():
    """Processes of a self-timed case alternate between contenders (rotating who goes first),
    so each paired ratio compares neighbours in time."""
    sys.path.insert(0, ROOT)
    from perf.harness import Case, Settings, _time_blocks, pair_ratios

    calls = []

    def thunk(name, value):
        def run():
            calls.append(name)
            return value
        return run

    case = Case(make=None, self_timed=True, warm=False, rounds=1)
    st = Settings(rounds=3, samples=4, gap=0.0, self_timed_samples=4)
    rounds = _time_blocks({"a": thunk("a", 2.0), "b": thunk("b", 1.0)}, case, st)
    assert calls == ["a", "b", "b", "a", "a", "b", "b", "a"]
    assert rounds == {"a": [[2.0] * 4], "b": [[1.0] * 4]}
    assert pair_ratios(rounds["a"], rounds["b"]) == [2.0] * 4
