"""Compile workers (``compile/workers.py``): a cold process's first compiled training call
hands its forward and backward graphs to a worker process, which builds the very kernels the
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
import time

import numpy as np
import pytest

import jtorch
from jtorch.compile import workers

_PROGRAM = '''
import glob, json, os, pickle, sys
import numba
import numpy as np
import jtorch
from jtorch.compile import workers
from jtorch.kernels import source

mode, out = sys.argv[1], sys.argv[2]
jobs = []
if mode == "thread":  # another Python thread runs: no fork, a new process
    import threading, time
    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
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
x = jtorch.rand(2, 2, 5, 5)
opt = jtorch.optim.Adam(model.parameters())  # announces its step's kernel
misses = source.cache_misses()  # (0: the initialisation and rand drew through NumPy)
loss = jtorch.compile(model)(x).square().sum()
loss.backward()
grads = [p.grad.numpy().tolist() for p in model.parameters()]
for p in model.parameters():
    p.grad = None
model(x).square().sum().backward()  # eager
want = [p.grad.numpy().tolist() for p in model.parameters()]
rc = workers.wait(300) if mode in ("start", "thread") else None
if jobs:
    with open(out + ".job", "wb") as f:
        pickle.dump(jobs[0], f)
with open(out, "w") as f:
    json.dump({"grads": grads, "want": want, "rc": rc, "misses": misses, "jobs": len(jobs),
               "marks": len(glob.glob(os.path.join(numba.config.CACHE_DIR,
                                                   "jtorch_worker_marks", "*"))),
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
    # nothing compiled before the graphs were built, and still a cold cache: a worker
    assert res["misses"] == 0 and res["jobs"] == 1
    assert res["modules"], "the graphs fused nothing: the test checks nothing"
    _same_grads(res)
    with open(str(tmp_path / "parent.json.job"), "rb") as f:
        job = pickle.load(f)
    assert len(job["items"][0][1]) == 5  # the forward first: x, 4 params
    job["parent"] = os.getpid()  # the worker's parent here
    cache_b = str(tmp_path / "b")
    r = subprocess.run([sys.executable, "-c", workers._ENTRY], input=pickle.dumps(job),
                       env=_env(cache_b, JTORCH_COMPILE_WORKER_CHILD="1", JTORCH_LOGS="workers"),
                       capture_output=True, timeout=600, check=False)
    err = r.stderr.decode()
    assert r.returncode == 0, err[-3000:]
    assert err.count("built in") == 3 and "not built" not in err, err[-3000:]
    assert "kernel jtorch.kernels.cpu.optim_multi:adam_plain:serial built" in err
    assert glob.glob(os.path.join(cache_b, "jtorch", "numba", "**", "optim_multi.adam_plain_multi*.nbi"),
                     recursive=True)
    written = {os.path.basename(p)[:-3]
               for p in glob.glob(os.path.join(cache_b, "jtorch", "kernels", "jt_fused_*.py"))}
    assert set(res["modules"]) <= written
    for m in res["modules"]:  # compiled, not only written
        assert glob.glob(os.path.join(cache_b, "numba", "**", f"{m}.*.nbi"), recursive=True), m


@pytest.mark.parametrize("mode", ["start", "thread"])
def test_a_cold_process_starts_one_and_keeps_its_results(tmp_path, mode):
    # one Python thread and no Numba pool yet: the worker is a fork (with jtorch imported);
    # with another thread running, a new process
    res, err = _run(tmp_path, "start", mode, _env(str(tmp_path / "c"),
                                                 JTORCH_COMPILE_WORKERS="1",
                                                 JTORCH_LOGS="workers"))
    how = "forked" if mode == "start" else "started"
    assert "compile worker" in err and f"{how} for 2 graph(s)" in err, err[-3000:]
    assert err.count("built in") == 3 and "not built" not in err, err[-3000:]
    assert res["rc"] == 0, err[-3000:]
    assert res["marks"] == 1  # the graphs ran here (and the worker built them): marked
    _same_grads(res)
    # warm now: the same program starts no worker
    res, err = _run(tmp_path, "warm", "start", _env(str(tmp_path / "c"),
                                                   JTORCH_COMPILE_WORKERS="1",
                                                   JTORCH_LOGS="workers"))
    assert res["misses"] == 0 and res["rc"] is None and "compile worker" not in err
    _same_grads(res)


def test_a_forked_worker_leaves_the_kernel_its_parent_compiles_to_it(monkeypatch):
    """The parent keeps its outermost compile's kernel in the page it shares with a forked
    worker (cleared when that compile ends, nested compiles aside); a worker about to
    compile the same kernel raises ``_ParentBuilds`` (its graph run leaves that call to the
    parent) and compiles any other."""
    import mmap

    import numba
    from numba.core import event

    page = mmap.mmap(-1, workers._PAGE)
    seen = []

    class Spy(event.Listener):
        def on_start(self, ev):
            seen.append(bytes(page[1:1 + page[0]]))

        def on_end(self, ev):
            pass

    listener, spy = workers._Compiles(), Spy()
    event.register("numba:compile", listener)
    event.register("numba:compile", spy)
    try:
        monkeypatch.setattr(workers, "_page", [(page, os.getpid())])  # this process: a parent

        @numba.njit
        def inner(x):
            return x + 1

        @numba.njit
        def outer(x):
            return inner(x) * 2

        assert outer(1) == 4
        name = workers._kernel_name(outer)
        assert name.endswith(b"outer") and seen == [name, name] and page[0] == 0

        @numba.njit
        def taken(x):
            return x * 3

        name = workers._kernel_name(taken)
        page[:1 + len(name)] = bytes((len(name),)) + name  # the parent compiles ``taken``
        monkeypatch.setattr(workers, "_page", [(page, os.getpid() + 1)])  # this: its worker
        monkeypatch.setattr(workers._flags, "COMPILE_WORKER_CHILD", True)
        with pytest.raises(workers._ParentBuilds):
            taken(1)

        @numba.njit
        def other(x):
            return inner(x) - 1

        assert other(2) == 2  # any other kernel compiles (and the depth is back at 0)
        with pytest.raises(workers._ParentBuilds):
            taken(1)
    finally:
        event.unregister("numba:compile", listener)
        event.unregister("numba:compile", spy)


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


def test_none_started_when_off_marked_running_or_inside_a_worker(monkeypatch, tmp_path):
    import numba

    from jtorch import _flags

    monkeypatch.setattr(workers, "_start", lambda job: pytest.fail("a worker was started"))
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))  # marks in a fresh place
    (gm,) = _graphs(lambda x: x.exp(), jtorch.randn(4))
    monkeypatch.setattr(_flags, "COMPILE_WORKERS", False)
    assert not workers.enabled() and workers.submit([gm]) is None
    monkeypatch.setattr(_flags, "COMPILE_WORKERS", True)
    monkeypatch.setattr(_flags, "COMPILE_WORKER_CHILD", True)
    assert not workers.enabled() and workers.submit([gm]) is None
    monkeypatch.setattr(_flags, "COMPILE_WORKER_CHILD", False)
    monkeypatch.setattr(workers, "_proc", [subprocess.Popen([sys.executable, "-c", ""])])
    workers.wait(60)
    started = []
    monkeypatch.setattr(workers, "_start", lambda job: started.append(job) or _Running())
    path = workers.submit([gm])
    assert path and path.startswith(str(tmp_path)) and not os.path.exists(path)
    assert workers.submit([gm]) == path  # one at a time
    assert len(started) == 1 and started[0]["items"] == [workers.payload(gm)]
    assert started[0]["mark"] == path
    monkeypatch.setattr(workers, "_proc", [None])
    workers.mark(path)  # the graphs ran: their kernels are in the cache
    assert os.path.exists(path) and workers.submit([gm]) == path and len(started) == 1
    monkeypatch.setattr(workers._threads, "planned_num_threads", lambda: 7)  # other kernels,
    # another mark
    other = workers.submit([gm])
    assert other != path and len(started) == 2


class _Running:
    pid = 0

    def poll(self):
        return None


_OPTIMIZERS = [lambda ps: jtorch.optim.Adam(ps),
               lambda ps: jtorch.optim.AdamW(ps, amsgrad=True),
               lambda ps: jtorch.optim.SGD(ps, lr=0.1),
               lambda ps: jtorch.optim.SGD(ps, lr=0.1, momentum=0.9),
               lambda ps: jtorch.optim.RMSprop(ps),
               lambda ps: jtorch.optim.RMSprop(ps, centered=True, momentum=0.5),
               lambda ps: jtorch.optim.RMSprop(ps, momentum=0.5),
               lambda ps: jtorch.optim.Adagrad(ps), lambda ps: jtorch.optim.Adadelta(ps),
               lambda ps: jtorch.optim.Adamax(ps), lambda ps: jtorch.optim.NAdam(ps),
               lambda ps: jtorch.optim.RAdam(ps), lambda ps: jtorch.optim.ASGD(ps),
               lambda ps: jtorch.optim.Rprop(ps)]


@pytest.mark.parametrize("make", _OPTIMIZERS)
def test_optimizers_announce_the_kernel_their_step_calls(monkeypatch, make):
    from jtorch import _flags
    from jtorch.kernels.cpu import optim_multi

    monkeypatch.setattr(_flags, "COMPILE_WORKERS", True)
    monkeypatch.setattr(workers, "_expected", [])
    model = jtorch.nn.Sequential(jtorch.nn.Linear(3, 4), jtorch.nn.Linear(4, 2))
    opt = make(model.parameters())
    assert len(workers._expected) == 1
    (module, key, sig), = workers._expected
    model(jtorch.ones(5, 3)).sum().backward()
    opt.step()
    assert module == optim_multi.__name__
    assert sig in optim_multi.expected_kernel(key).signatures  # the very one it compiled
    assert workers._build_kernel(workers._expected[0]).endswith(key)


def test_the_parent_waits_for_an_entry_the_worker_is_building(monkeypatch):
    """A cache miss in the parent on an entry the worker has started waits for its "done"
    and loads it; other entries, and any entry once the worker is idle or gone, do not wait."""
    key, other = "/cache/a.nbi|(float32,)", "/cache/b.nbi|(float32,)"
    a, b = workers._short(key), workers._short(other)
    script = (f"import os, time; os.write(1, b'start {a}\\nstart {b}\\n'); time.sleep(0.6); "
              f"os.write(1, b'done {a}\\n'); time.sleep(0.6); os.write(1, b'idle\\n'); "
              f"time.sleep(0.3)")
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
    monkeypatch.setattr(workers, "_reports", [workers._Reports(p)])
    r = workers._reports[0]
    r.read(10.0)
    assert r.building == {a, b}
    t0 = time.monotonic()
    assert workers._parent_miss(key, lambda: "loaded") == "loaded"
    waited = time.monotonic() - t0
    assert 0.2 < waited < 5 and r.building == {b}
    assert workers._parent_miss("/cache/c.nbi|()", lambda: "loaded") is None  # not its work
    assert workers._parent_miss(other, lambda: None) is None  # "idle": given up, not written
    assert not r.building
    p.wait(30)
    r.read(1.0)
    assert r.closed and workers._parent_miss(other, lambda: "loaded") is None


# -- parallel entries built beside their serial twins -------------------------------------------

_ENTRIES = '''
import glob, json, os, sys
import numba
import numpy as np
import jtorch
from jtorch.compile import workers
from jtorch.kernels import source

mode, out = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(0)
x = jtorch.from_numpy(rng.standard_normal(1 << 13).astype(np.float32))  # past the grain
m = jtorch.from_numpy(rng.standard_normal((32, 256)).astype(np.float32))
w = jtorch.from_numpy(rng.standard_normal((3, 2048)).astype(np.float32))

def chain(x):
    return jtorch.sin(x) + jtorch.cos(x) * x - jtorch.exp(-x * x)

def rows(m):
    return jtorch.softmax(m * 2, dim=-1)

def cols(w):
    return (w * w).sum(dim=0)

f, g, h = jtorch.compile(chain), jtorch.compile(rows), jtorch.compile(cols)
first = [f(x).numpy(), g(m).numpy(), h(w).numpy()]

def parallel_here():  # the parallel entries this process has compiled or loaded
    return sorted(f"{n}.{e}" for n, mod in source._modules.items() if n.startswith("jt_")
                  for e in ("parallel", "parallelp") if hasattr(mod, e) and getattr(mod, e).overloads)

from jtorch import _flags
grain, _flags.GRAIN_SIZE = _flags.GRAIN_SIZE, 1 << 40  # eager's serial loops (no workers)
res = {"first_parallel": parallel_here(),
       "modules": sorted(n for n in source._modules if n.startswith(("jt_fused", "jt_rows",
                                                                         "jt_cols"))),
       "eager": [bool((first[0] == chain(x).numpy()).all()),
                 bool(np.allclose(first[1], rows(m).numpy(), rtol=1e-6, atol=1e-7)),
                 bool(np.allclose(first[2], cols(w).numpy(), rtol=1e-6, atol=1e-6))]}
_flags.GRAIN_SIZE = grain
if mode == "wait":
    res["rc"] = [workers.wait(300)]
    f(x), g(m), h(w)  # the chain's entry is ready; the queued two get one worker now
    res["rc"].append(workers.wait(300))
    misses = source.cache_misses()
    again = [f(x).numpy(), g(m).numpy(), h(w).numpy()]
    res["misses"] = source.cache_misses() - misses
    res["same"] = [bool((a == b).all()) for a, b in zip(first, again)]
    res["then_parallel"] = parallel_here()
with open(out, "w") as fh:
    json.dump(res, fh)
'''


def _run_entries(tmp_path, name: str, mode: str, cache: str) -> tuple[dict, str]:
    prog = tmp_path / "entries.py"
    prog.write_text(_ENTRIES)
    out = str(tmp_path / f"{name}.json")
    env = _env(cache, JTORCH_COMPILE_WORKERS="1", JTORCH_LOGS="workers", JTORCH_GRAIN_SIZE="4096")
    r = subprocess.run([sys.executable, str(prog), mode, out], env=env, capture_output=True,
                       text=True, timeout=600, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    with open(out) as f:
        return json.load(f), r.stderr


def _indexed(cache: str, entry: str) -> bool:
    return bool(glob.glob(os.path.join(cache, "numba", "**", f"{entry}-*.nbi"), recursive=True))


def test_a_cold_parallel_entry_is_built_by_a_worker_while_the_serial_one_runs(tmp_path):
    cache = str(tmp_path / "c")
    res, err = _run_entries(tmp_path, "cold", "wait", cache)
    # the first calls ran the serial entries (the same values as eager) while workers built
    # the parallel ones: the pointwise chain's, then the softmax rows' and the column sum's
    # (queued while the first worker ran, taken by one worker at the next call)
    assert res["first_parallel"] == [] and res["eager"] == [True, True, True]
    assert [m[:7] for m in res["modules"]] == ["jt_cols", "jt_fuse", "jt_rows"], res["modules"]
    assert err.count("for 1 parallel entry") == 1 and err.count("for 2 parallel entries") == 1
    assert err.count("built in") == 3, err[-3000:]
    assert res["rc"] == [0, 0]
    # once the workers have ended, the parallel entries load from the cache (nothing
    # compiled) and give the serial ones' values bit for bit
    assert len(res["then_parallel"]) == 3 and res["misses"] == 0
    assert res["same"] == [True, True, True]
    # a warm process runs them at once and starts no worker
    res, err = _run_entries(tmp_path, "warm", "first", cache)
    assert len(res["first_parallel"]) == 3 and "compile worker" not in err, err[-3000:]


def test_a_worker_finishes_its_parallel_entries_after_its_parent_exits(tmp_path):
    cache = str(tmp_path / "c")
    res, err = _run_entries(tmp_path, "exit", "first", cache)
    assert res["first_parallel"] == [] and "parallel entry" in err, err[-3000:]
    # the parent has exited (at once: its worker's compile takes seconds) and the worker is
    # not killed: the first entry appears in the cache
    fused = next(m for m in res["modules"] if m.startswith("jt_fused"))
    end = time.monotonic() + 120
    while not _indexed(cache, f"{fused}.parallel") and time.monotonic() < end:
        time.sleep(0.2)
    assert _indexed(cache, f"{fused}.parallel")


def test_parallel_ready_queues_entries_for_one_worker_at_a_time(monkeypatch, tmp_path):
    import types

    from jtorch import _flags

    class _Disp:
        def __init__(self, path):
            self.overloads = {}
            self._cache = types.SimpleNamespace(
                _cache_file=types.SimpleNamespace(_index_path=str(path)))

    def module(name):
        return types.SimpleNamespace(__name__=f"jt_fused_{name}", __file__=f"/k/jt_fused_{name}.py",
                                     parallel=_Disp(tmp_path / f"{name}.nbi"))

    a, b, c = module("aaaaaa"), module("bbbbbb"), module("cccccc")
    args = (np.zeros(3, np.float32), 3, 1)
    monkeypatch.setattr(_flags, "COMPILE_WORKERS", False)  # off: ready at once, no worker
    assert workers.parallel_ready(a, "parallel", args) and a.parallel_ready
    del a.parallel_ready
    monkeypatch.setattr(_flags, "COMPILE_WORKERS", True)
    started = []
    running = _Running()
    monkeypatch.setattr(workers, "_start", lambda job: started.append(job) or running)
    monkeypatch.setattr(workers, "_proc", [None])
    monkeypatch.setattr(workers, "_reports", [None])
    for k in ("_entries", "_queued", "_taken"):
        monkeypatch.setattr(workers, k, type(getattr(workers, k))())
    assert not workers.parallel_ready(a, "parallel", args)  # a worker builds it
    assert len(started) == 1 and not hasattr(a, "parallel_ready")
    (entry,) = started[0]["entries"]
    assert entry[:3] == ("jt_fused", "/k/jt_fused_aaaaaa.py", "parallel")
    assert [str(t) for t in entry[3]] == ["array(float32, 1d, C)", "int64", "int64"]
    assert not workers.parallel_ready(b, "parallel", args)  # queued: one worker at a time
    assert not workers.parallel_ready(c, "parallel", args)
    assert not workers.parallel_ready(a, "parallel", args) and len(started) == 1
    (tmp_path / "cccccc.nbi").write_text("")  # c written meanwhile (another process)
    running.poll = lambda: 0  # the worker has ended
    assert workers.parallel_ready(a, "parallel", args) and a.parallel_ready  # from the cache
    assert len(started) == 2 and [e[1] for e in started[1]["entries"]] == ["/k/jt_fused_bbbbbb.py"]
    running.poll = lambda: None  # (the second worker runs)
    assert workers.parallel_ready(c, "parallel", args)  # in the cache: no worker needed it
    assert not workers.parallel_ready(b, "parallel", args)  # the running worker's
    workers._taken[0].since -= workers._WAIT_LIMIT + 1  # a worker past the limit: given up,
    assert workers.parallel_ready(b, "parallel", args)  # the caller compiles it
    assert not workers._entries and not workers._queued and not workers._taken
    # a worker (over graphs, say) that reports writing a queued entry makes it ready at once
    d, e = module("dddddd"), module("eeeeee")
    reports = types.SimpleNamespace(pid=os.getpid(), done=set(), read=lambda: None)
    monkeypatch.setattr(workers, "_reports", [reports])
    assert not workers.parallel_ready(d, "parallel", args)  # queued (the worker runs)
    assert not workers.parallel_ready(e, "parallel", args)
    reports.done.add(workers._entries[("jt_fused_dddddd", "parallel")].key)
    assert workers.parallel_ready(d, "parallel", args)
    assert not workers.parallel_ready(e, "parallel", args) and len(started) == 2


_EAGER = '''
import json, sys
import numpy as np
import jtorch
from jtorch import dispatch
from jtorch.compile import workers

rng = np.random.default_rng(0)
x = jtorch.from_numpy(rng.standard_normal(1 << 13).astype(np.float32))  # past the grain
y = jtorch.from_numpy(rng.standard_normal(1 << 13).astype(np.float32))

def ops():
    acc = x.clone()
    acc += y  # in place
    return [x.exp(), x + y, x.view(64, 128).t() * 2, acc]

def besides():
    loops = [*dispatch._kernel_cache.values(),
             *[k for pair in dispatch._flat_loops.values() if pair for k in pair]]
    return list({id(k): k for k in loops if isinstance(k, workers.Beside)}.values())

first = [r.numpy().copy() for r in ops()]
res = {"besides": len(besides()), "ready_first": sum(b.ready for b in besides()),
       "compiled_first": sum(bool(b.parallel.overloads) for b in besides()), "rounds": 0}
while not all(b.ready for b in besides()) and res["rounds"] < 5:  # each call pumps the queue
    workers.wait(300)
    again = [r.numpy() for r in ops()]
    res["rounds"] += 1
res["ready"] = all(b.ready for b in besides())
res["same"] = all(bool((a == b).all()) for a, b in zip(first, [r.numpy() for r in ops()]))
res["want"] = [bool(np.allclose(first[0], np.exp(x.numpy()), rtol=1e-6)),
               bool(np.array_equal(first[1], x.numpy() + y.numpy()))]
with open(sys.argv[1], "w") as fh:
    json.dump(res, fh)
'''


def test_eager_parallel_loops_run_their_serial_twins_while_a_worker_builds_them(tmp_path):
    prog = tmp_path / "eager.py"
    prog.write_text(_EAGER)
    out = str(tmp_path / "eager.json")
    env = _env(str(tmp_path / "c"), JTORCH_COMPILE_WORKERS="1", JTORCH_LOGS="workers",
               JTORCH_GRAIN_SIZE="4096")
    r = subprocess.run([sys.executable, str(prog), out], env=env, capture_output=True, text=True,
                       timeout=900, check=False)
    assert r.returncode == 0, r.stderr[-3000:]
    with open(out) as f:
        res = json.load(f)
    # exp's, add's, the strided mul's and the in-place add's parallel loops: none compiled
    # here for the first calls (their serial twins ran), all built by workers and then taken,
    # with the same values
    assert res["besides"] == 4 and res["ready_first"] == 0 and res["compiled_first"] == 0
    assert "parallel entr" in r.stderr and res["ready"] and res["rounds"] >= 1, r.stderr[-3000:]
    assert res["same"] and res["want"] == [True, True]
