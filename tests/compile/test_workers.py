"""Compile workers (``compile/workers.py``): a cold process's first compiled training call
hands its backward and forward graphs to a worker process, which builds the very kernels the
parent runs (the same generated sources, compiled into the shared caches) and changes no
result; a warm process, a worker itself, or ``JTORCH_COMPILE_WORKERS=0`` starts none; graphs
their code cannot carry are not shipped.

The suite runs with workers off (conftest.py); the processes here turn them on."""

from __future__ import annotations

import glob
import json
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import jtorch
from jtorch.compile import workers
from jtorch.kernels import source

_PROGRAM = '''
import json, pickle, sys
import numpy as np
import jtorch
from jtorch.compile import workers
from jtorch.kernels import source

mode, out = sys.argv[1], sys.argv[2]
jobs = []
if mode == "capture":  # keep the job the worker would get, start none
    class _Started:
        pid = 0
        def poll(self):
            return 0
    workers._start = lambda job: jobs.append(job) or _Started()

jtorch.manual_seed(0)
model = jtorch.nn.Sequential(jtorch.nn.Conv2d(2, 4, 3, padding=1), jtorch.nn.ReLU(),
                             jtorch.nn.Flatten(), jtorch.nn.Linear(4 * 5 * 5, 3),
                             jtorch.nn.GELU())
x = jtorch.randn(2, 2, 5, 5)
misses = source.cache_misses()
loss = jtorch.compile(model)(x).square().sum()
loss.backward()
grads = [p.grad.numpy().tolist() for p in model.parameters()]
for p in model.parameters():
    p.grad = None
model(x).square().sum().backward()  # eager
want = [p.grad.numpy().tolist() for p in model.parameters()]
rc = workers.wait(300) if mode == "spawn" else None
if jobs:
    with open(out + ".job", "wb") as f:
        pickle.dump(jobs[0], f)
with open(out, "w") as f:
    json.dump({"grads": grads, "want": want, "rc": rc, "misses": misses, "jobs": len(jobs),
               "modules": sorted(m for m in source._modules if m.startswith("jt_fused"))}, f)
'''


def _env(cache: str, **extra) -> dict:
    env = dict(os.environ)
    env.update({"JTORCH_CACHE_DIR": os.path.join(cache, "jtorch"),
                "NUMBA_CACHE_DIR": os.path.join(cache, "numba")})
    env.pop("JTORCH_COMPILE_WORKER_CHILD", None)
    env.update(extra)
    return env


def _run(tmp_path, name: str, mode: str, env: dict) -> tuple[dict, str]:
    prog = tmp_path / "program.py"
    prog.write_text(_PROGRAM)
    out = str(tmp_path / f"{name}.json")
    r = subprocess.run([sys.executable, str(prog), mode, out], env=env, capture_output=True,
                       text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    with open(out) as f:
        return json.load(f), r.stderr


def _same_grads(res: dict) -> None:
    for got, want in zip(res["grads"], res["want"]):
        np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-6)


def test_worker_builds_the_kernels_its_parent_runs(tmp_path):
    # the parent keeps the job (cache A); a worker run on it alone (cache B) writes and
    # compiles every fused kernel the parent loaded: the graphs rebuilt from their code
    # fuse into the same sources
    res, _ = _run(tmp_path, "parent", "capture", _env(str(tmp_path / "a"),
                                                     JTORCH_COMPILE_WORKERS="1"))
    assert res["misses"] > 0 and res["jobs"] == 1
    assert res["modules"], "the graphs fused nothing: the test checks nothing"
    _same_grads(res)
    with open(str(tmp_path / "parent.json.job"), "rb") as f:
        job = pickle.load(f)
    assert [len(specs) for _, specs, _ in job["items"]][1] == 5  # the forward: x, 4 params
    job["parent"] = os.getpid()  # the worker's parent here
    cache_b = str(tmp_path / "b")
    r = subprocess.run([sys.executable, "-c", workers._ENTRY], input=pickle.dumps(job),
                       env=_env(cache_b, JTORCH_COMPILE_WORKER_CHILD="1", JTORCH_LOGS="workers"),
                       capture_output=True, timeout=600, check=False)
    err = r.stderr.decode()
    assert r.returncode == 0, err[-3000:]
    assert err.count("built in") == 2 and "not built" not in err, err[-3000:]
    written = {os.path.basename(p)[:-3]
               for p in glob.glob(os.path.join(cache_b, "jtorch", "kernels", "jt_fused_*.py"))}
    assert set(res["modules"]) <= written
    for m in res["modules"]:  # compiled, not only written
        assert glob.glob(os.path.join(cache_b, "numba", "**", f"{m}.*.nbi"), recursive=True), m


def test_a_cold_process_starts_one_and_keeps_its_results(tmp_path):
    res, err = _run(tmp_path, "spawn", "spawn", _env(str(tmp_path / "c"),
                                                    JTORCH_COMPILE_WORKERS="1",
                                                    JTORCH_LOGS="workers"))
    assert "compile worker" in err and "started for 2 graph(s)" in err, err[-3000:]
    assert res["rc"] == 0, err[-3000:]
    _same_grads(res)
    # warm now: the same program starts no worker
    res, err = _run(tmp_path, "warm", "spawn", _env(str(tmp_path / "c"),
                                                   JTORCH_COMPILE_WORKERS="1",
                                                   JTORCH_LOGS="workers"))
    assert res["misses"] == 0 and res["rc"] is None and "compile worker" not in err
    _same_grads(res)


def _graphs(f, *args, **kw) -> list:
    got = []

    def backend(gm, example_inputs):
        got.append(gm)
        return gm.forward

    jtorch.compile(f, backend=backend, **kw)(*args)
    return got


def test_payload_carries_code_and_input_geometry():
    x = jtorch.randn(3, 4).t()  # a transposed input keeps its strides
    b = jtorch.zeros(3, dtype=jtorch.float64)
    (gm,) = _graphs(lambda x, b: (x.sin() + b).to(jtorch.float32), x, b)
    code, specs, devices = workers.payload(gm)
    assert code.startswith("def forward(self, ")
    assert specs == [((4, 3), (1, 4), "float32"), ((3,), (1,), "float64")]
    assert list(devices.values()) == ["cpu"]  # _to_copy's device, by name


def test_payload_refuses_symbolic_sizes_and_large_graphs(monkeypatch):
    (gm,) = _graphs(lambda x: x.cos() * 2, jtorch.randn(5), dynamic=True)
    assert gm.graph.symbols and workers.payload(gm) is None
    (gm,) = _graphs(lambda x: x.cos() * 2, jtorch.randn(5))
    assert workers.payload(gm) is not None
    monkeypatch.setattr(workers, "_MAX_BYTES", 3 * 5 * 4 - 1)  # x, cos(x), the product
    assert workers.payload(gm) is None


def test_none_started_when_off_warm_or_inside_a_worker(monkeypatch):
    from jtorch import _flags

    monkeypatch.setattr(workers, "_start", lambda job: pytest.fail("a worker was started"))
    (gm,) = _graphs(lambda x: x.exp(), jtorch.randn(4))
    monkeypatch.setattr(_flags, "COMPILE_WORKERS", True)
    monkeypatch.setattr(source, "_misses", [0])  # warm: nothing compiled yet
    assert workers.enabled() and not workers.submit([gm])
    monkeypatch.setattr(source, "_misses", [3])
    monkeypatch.setattr(_flags, "COMPILE_WORKERS", False)
    assert not workers.enabled() and not workers.submit([gm])
    monkeypatch.setattr(_flags, "COMPILE_WORKERS", True)
    monkeypatch.setattr(_flags, "COMPILE_WORKER_CHILD", True)
    assert not workers.enabled() and not workers.submit([gm])
    monkeypatch.setattr(_flags, "COMPILE_WORKER_CHILD", False)
    monkeypatch.setattr(workers, "_proc", [subprocess.Popen([sys.executable, "-c", ""])])
    workers.wait(60)
    started = []
    monkeypatch.setattr(workers, "_start", lambda job: started.append(job) or _Running())
    assert workers.submit([gm]) and not workers.submit([gm])  # one at a time
    assert len(started) == 1 and started[0]["items"] == [workers.payload(gm)]


class _Running:
    pid = 0

    def poll(self):
        return None
