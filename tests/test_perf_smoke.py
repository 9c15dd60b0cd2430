"""Smoke tests of the perf suite (``python -m perf``): a quick run of two cheap benchmarks
writes well-formed JSON, and ``compare`` flags a slowed benchmark and passes an unchanged
one. No timing is asserted: speed lives in perf/, these only keep the tooling working."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _perf(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "perf", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def test_quick_run_writes_results(tmp_path):
    out = tmp_path / "tmp.json"
    r = _perf("run", "--quick", "--filter", "dispatch/add[n=1],pointwise/add", "--max-wait", "0",
              "--out", str(out))
    assert r.returncode == 0, r.stderr[-2000:]
    doc = json.loads(out.read_text())
    assert doc["schema"] == 1 and doc["mode"] == "quick"
    m = doc["machine"]
    for key in ("cpu_model", "cores", "threads", "versions", "class"):
        assert key in m
    assert "numba" in m["threads"]
    assert "sha" in doc["commit"]
    lim = doc["limits"]
    assert lim["bandwidth_gbps"] > 0 and lim["sgemm_gflops"] > 0
    assert set(doc["benchmarks"]) == {"dispatch/add[n=1]", "pointwise/add[n=2^16]"}
    assert "max_foreign_cores" in doc["load"]
    has_torch = doc["machine"]["versions"]["torch"] is not None
    for name, b in doc["benchmarks"].items():
        assert b["foreign_cores"] >= 0
        c = b["contenders"]
        assert c["jtorch"]["median"] > 0 and c["numpy"]["median"] > 0
        assert c["jtorch"]["q25"] <= c["jtorch"]["median"] <= c["jtorch"]["q75"]
        assert "jtorch/numpy" in b["ratios"]
        assert "jtorch_compile" in b["skipped"]  # compiled contenders skip with a reason
        if has_torch:
            assert "jtorch/torch" in b["ratios"]
    add = doc["benchmarks"]["pointwise/add[n=2^16]"]
    assert add["kind"] == "memory" and add["contenders"]["jtorch"]["frac_bw"] > 0


def _bench(jt: float, spread: float = 0.02) -> dict:
    def stat(v):
        return {"median": v, "q25": v * (1 - spread / 2), "q75": v * (1 + spread / 2),
                "spread": spread, "n": 3}

    return {"area": "pointwise", "kind": "memory", "unit": "s", "ref": "torch",
            "contenders": {"jtorch": stat(jt), "torch": stat(1e-3)},
            "ratios": {"jtorch/torch": stat(jt / 1e-3)}, "skipped": {},
            "foreign_cores": 0.0, "disturbed": False}


def _doc(times: dict) -> dict:
    return {"schema": 1, "mode": "full", "machine": {"class": "test-2c"},
            "commit": {"short": "x"}, "load": {"max_foreign_cores": 0.0},
            "benchmarks": {k: _bench(v) for k, v in times.items()}}


@pytest.fixture
def base_file(tmp_path):
    path = tmp_path / "base.json"
    path.write_text(json.dumps(_doc({"pointwise/exp": 1e-3, "pointwise/add": 2e-3})))
    return path


def test_compare_passes_unchanged(tmp_path, base_file):
    new = tmp_path / "new.json"
    new.write_text(json.dumps(_doc({"pointwise/exp": 1.03e-3, "pointwise/add": 1.95e-3})))
    r = _perf("compare", str(base_file), str(new))
    assert r.returncode == 0, r.stdout
    assert "no regression" in r.stdout


def test_compare_flags_slowed_benchmark(tmp_path, base_file):
    slowed = json.loads(base_file.read_text())
    slowed = copy.deepcopy(slowed)
    slowed["benchmarks"]["pointwise/exp"] = _bench(1.5e-3)  # a kernel got 1.5x slower
    new = tmp_path / "new.json"
    new.write_text(json.dumps(slowed))
    r = _perf("compare", str(base_file), str(new))
    assert r.returncode == 1, r.stdout
    assert "REGRESSION" in r.stdout and "pointwise/exp" in r.stdout


def test_compare_threshold_follows_spread(tmp_path, base_file):
    """A 15% slowdown inside a noisy run's spread is not a regression."""
    noisy = _doc({"pointwise/exp": 1.15e-3, "pointwise/add": 2e-3})
    noisy["benchmarks"]["pointwise/exp"]["ratios"]["jtorch/torch"]["spread"] = 0.3
    new = tmp_path / "new.json"
    new.write_text(json.dumps(noisy))
    assert _perf("compare", str(base_file), str(new)).returncode == 0
