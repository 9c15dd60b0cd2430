"""Costs paid once per process, each measured in fresh interpreters: import time, kernel
compile latency (cold: empty jtorch/Numba caches; warm: the same on-disk cache in a new
process), the latency from ``import`` to a first result with warm caches, and the peak memory
of a training run.

Run as a script, it prints the warm-start latencies with their breakdown (the median of fresh
processes, after one process that fills the caches)::

    python -m perf.benchmarks.startup [--runs 3] [--no-bytecode-cache]
"""

from __future__ import annotations

import ast
import os
import statistics

from ..harness import Case, Runtime, Skip, register
from ._util import _REPO, fresh_cache_env, run_python


def _self_timed(code_for: callable, **kw) -> Case:
    """A case whose thunk runs ``code_for(runtime)`` in a fresh process and returns the
    number it prints (seconds, or MB)."""

    def make(rt: Runtime):
        code, env_factory = code_for(rt)
        return lambda: run_python(code, env_factory())["value"]

    return Case(make, self_timed=True, **kw)


_IMPORT = """
import time, json
t = time.perf_counter()
import {lib}
print(json.dumps({{"value": time.perf_counter() - t}}))
"""


@register("startup/import", quick=(None,))
def import_time() -> Case:
    def code_for(rt):
        if rt.compile:
            raise Skip("not a compile benchmark")
        return _IMPORT.format(lib=rt.name), dict
    return _self_timed(code_for, kind="latency", warm=True)


# First calls after import: a few eager pointwise ops and a reduction (each a new kernel).
_FIRST_OPS = """
import time, json
import {lib} as t
x = t.ones(1000)
t0 = time.perf_counter()
y = (t.exp(x) + x * 2).sum()
t1 = time.perf_counter()
print(json.dumps({{"value": t1 - t0}}))
"""

# One LeNet training step (forward, backward, Adam step): every kernel the demo needs.
_LENET_STEP = """
import time, json, sys
sys.path.insert(0, {repo!r})
import {lib} as t
from perf.benchmarks.train import demo_lenet
t.manual_seed(0)
model = demo_lenet(t)()
opt = t.optim.Adam(model.parameters(), lr=1e-2)
fwd = t.compile(model) if {compile} else model
x, y = t.randn(64, 1, 8, 8), t.randint(0, 10, (64,))
t0 = time.perf_counter()
opt.zero_grad()
t.nn.functional.cross_entropy(fwd(x), y).backward()
opt.step()
t1 = time.perf_counter()
print(json.dumps({{"value": t1 - t0}}))
"""


def _compile_case(code: str, cold: bool, **kw) -> Case:
    from ._util import _REPO

    def code_for(rt):
        if rt.name == "numpy":
            raise Skip("no NumPy version")
        src = code.format(lib=rt.name, repo=_REPO, compile=bool(rt.compile))
        if cold:
            def env():
                e, d = fresh_cache_env()
                _keep.append(d)
                return e
            return src, env
        # warm: one shared cache directory, filled by the untimed warm call
        e, d = fresh_cache_env()
        _keep.append(d)
        return src, lambda: e

    # a cold sample costs seconds (torch.compile: ~10 s): fewer of them
    return _self_timed(code_for, kind="latency", warm=not cold, rounds=1, samples=3 if cold else 5,
                       **kw)


_keep: list = []  # temporary cache directories live until the process ends


@register("startup/first_ops_cold", quick=(None,))
def first_ops_cold() -> Case:
    return _compile_case(_FIRST_OPS, cold=True,
                         note="exp, add, mul, sum on 1000 floats after import, empty caches")


@register("startup/first_ops_warm", quick=(None,))
def first_ops_warm() -> Case:
    return _compile_case(_FIRST_OPS, cold=False,
                         note="same, new process, caches filled by an earlier process")


@register("startup/lenet_step_cold")
def lenet_step_cold() -> Case:
    return _compile_case(_LENET_STEP, cold=True, compile=True,
                         note="first LeNet train step after import, empty caches")


@register("startup/lenet_step_warm")
def lenet_step_warm() -> Case:
    return _compile_case(_LENET_STEP, cold=False, compile=True,
                         note="same, new process, caches filled by an earlier process")


# -- import to first result, warm caches -------------------------------------------------------
# What a user waits for when a script starts: a fresh process from ``import`` to its first
# answer, with every cache an earlier process filled: jtorch's kernels, Numba's and Python's
# bytecode (PYTHONPYCACHEPREFIX, as an installed package has its .pyc files; a checkout run under
# PYTHONDONTWRITEBYTECODE would compile every module at each start instead). Each script prints
# the total, its phases and the CPU seconds of the whole process (all threads, interpreter
# start included), which other processes on the machine disturb less.

# a compiled pointwise chain on 2^16 floats
_CHAIN_FIRST = """
import time
t0 = time.perf_counter()
import {lib} as t
t1 = time.perf_counter()
import json
x = t.randn(2 ** 16)
t2 = time.perf_counter()
f = t.compile(lambda x: t.sin(x) + t.cos(x) * x - t.exp(-x * x))
float(f(x)[0])
t3 = time.perf_counter()
print(json.dumps({{"value": t3 - t0, "import": t1 - t0, "input": t2 - t1, "first_call": t3 - t2,
                  "cpu": time.process_time()}}))
"""

# one training step of the compiled demo CNN (examples/demo.py's LeNet, its source pasted in
# so that nothing else of the demo or of perf/ is imported), batch 64 of 1x8x8 images, Adam
_LENET_FIRST = """
import time
t0 = time.perf_counter()
import {lib} as torch
import {lib}.nn as nn
import {lib}.nn.functional as F
t1 = time.perf_counter()
import json
{lenet}
torch.manual_seed(0)
model = LeNet()
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
step_model = torch.compile(model)
x, y = torch.randn(64, 1, 8, 8), torch.randint(0, 10, (64,))
t2 = time.perf_counter()
opt.zero_grad()
loss = F.cross_entropy(step_model(x), y)
t3 = time.perf_counter()
loss.backward()
t4 = time.perf_counter()
opt.step()
loss.item()
t5 = time.perf_counter()
print(json.dumps({{"value": t5 - t0, "import": t1 - t0, "model": t2 - t1, "forward": t3 - t2,
                  "backward": t4 - t3, "step": t5 - t4, "cpu": time.process_time()}}))
"""


def _demo_lenet_source() -> str:
    """The text of ``class LeNet`` in examples/demo.py."""
    path = os.path.join(_REPO, "examples", "demo.py")
    with open(path) as f:
        text = f.read()
    for node in ast.parse(text).body:
        if isinstance(node, ast.ClassDef) and node.name == "LeNet":
            return ast.get_source_segment(text, node)
    raise LookupError(f"no class LeNet in {path}")


def _warm_script(which: str, lib: str) -> str:
    if which == "chain":
        return _CHAIN_FIRST.format(lib=lib)
    return _LENET_FIRST.format(lib=lib, lenet=_demo_lenet_source())


def _warm_env(bytecode: bool = True, root: str | None = None) -> dict:
    """The environment of a warm series: its cache directories under ``root`` (default: a
    fresh one, kept until the process ends); with ``bytecode``, Python's .pyc files are
    written and read there too."""
    if root is None:
        d = fresh_cache_env()[1]
        _keep.append(d)
        root = d.name
    env = {"JTORCH_CACHE_DIR": os.path.join(root, "jtorch"),
           "NUMBA_CACHE_DIR": os.path.join(root, "numba"),
           "TORCHINDUCTOR_CACHE_DIR": os.path.join(root, "inductor"),
           "TRITON_CACHE_DIR": os.path.join(root, "triton")}
    if bytecode:
        env["PYTHONPYCACHEPREFIX"] = os.path.join(root, "pycache")
        env["PYTHONDONTWRITEBYTECODE"] = ""  # empty: unset
    return env


def _first_result_case(which: str, note: str) -> Case:
    def code_for(rt):
        if rt.name == "numpy":
            raise Skip("no NumPy version")
        if rt.compile is None:
            raise Skip("compiled runtimes only")
        env = _warm_env()  # filled by the untimed warm call
        return _warm_script(which, rt.name), lambda: env

    return _self_timed(code_for, kind="latency", warm=True, rounds=1, samples=3, compile=True,
                       note=note)


@register("startup/chain_first_result_warm", quick=(None,))
def chain_first_result_warm() -> Case:
    return _first_result_case(
        "chain", "import to the first result of compiled sin(x)+cos(x)*x-exp(-x*x) on 2^16 "
                 "floats, new process, caches (kernels, bytecode) filled by an earlier one")


# A compiled function the caches have not seen, in a process whose library kernels they hold
# (an earlier process compiled other graphs): the chain above with a tail of eight mul/sub
# steps picked by the sample's number, at 2^22 floats (jtorch's parallel kernels). What a user
# waits for after editing a compiled function. The script waits, untimed, for jtorch's compile
# worker (it builds the parallel entry beside the first call) before it exits, so that the next
# sample starts on an idle machine.
_CHAIN_NEW = """
import time
import {lib} as t
import json
x = t.randn(2 ** 22)
def fn(x):
    y = t.sin(x) + t.cos(x) * x - t.exp(-x * x)
    for b in range(8):
        y = y * x if ({k} >> b) & 1 else y - x
    return y
t0 = time.perf_counter()
f = t.compile(fn)
float(f(x)[0])
t1 = time.perf_counter()
if {lib!r} == "jtorch":
    from jtorch.compile import workers
    workers.wait(600)
print(json.dumps({{"value": t1 - t0}}))
"""


@register("startup/chain_new_graph")
def chain_new_graph() -> Case:
    def make(rt):
        if rt.name == "numpy":
            raise Skip("no NumPy version")
        if rt.compile is None:
            raise Skip("compiled runtimes only")
        env = _warm_env(bytecode=False)  # filled by the untimed warm call
        graphs = iter(range(1, 256))  # a new graph each run

        return lambda: run_python(_CHAIN_NEW.format(lib=rt.name, k=next(graphs)), env)["value"]

    return Case(make, kind="latency", self_timed=True, warm=True, rounds=1, samples=3,
                compile=True, note="first call of a compiled sin/cos/exp chain never compiled "
                                   "before (2^22 floats), library kernels cached")


# The compiled demo CNN's first step is train/cold_compile[warm] (it also imports perf's
# training module); ``main`` below times it from a bare script, phase by phase.


def main(argv: list[str] | None = None) -> None:
    """Print the median warm-start latency and its phases, for the compiled chain and the
    compiled demo CNN step, each over ``--runs`` fresh processes after one that fills a new
    cache directory."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m perf.benchmarks.startup", description=main.__doc__)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--lib", default="jtorch")
    p.add_argument("--no-bytecode-cache", action="store_true",
                   help="leave Python's bytecode settings as they are (no .pyc prefix)")
    p.add_argument("--only", choices=("chain", "lenet"))
    p.add_argument("--cache-dir", help="keep the caches here (reused by later runs) instead of "
                                       "in a new temporary directory")
    a = p.parse_args(argv)
    for which in ("chain", "lenet"):
        if a.only and which != a.only:
            continue
        code = _warm_script(which, a.lib)
        env = _warm_env(bytecode=not a.no_bytecode_cache, root=a.cache_dir)
        run_python(code, env)  # fills the caches
        runs = [run_python(code, env) for _ in range(a.runs)]
        med = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        totals = ", ".join(f"{r['value']:.3f}" for r in runs)
        phases = "  ".join(f"{k} {v:.3f}" for k, v in med.items() if k != "value")
        print(f"{which:6s} median {med['value']:.3f} s of {a.runs} ({totals})   {phases}")


_MEMORY = """
import json, resource, sys
sys.path.insert(0, {repo!r})
import {lib} as t
def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20
def peak_mb():
    # VmHWM belongs to this process image; ru_maxrss would carry the (larger) high-water
    # mark of the perf runner that forked it across exec
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) for l in f if l.startswith("VmHWM:")) / 1024
t.manual_seed(0)
model = t.nn.Sequential(t.nn.Linear(784, 256), t.nn.ReLU(), t.nn.Linear(256, 256), t.nn.ReLU(),
                        t.nn.Linear(256, 10))
opt = t.optim.Adam(model.parameters(), lr=1e-3)
x, y = t.randn(128, 784), t.randint(0, 10, (128,))
before = rss_mb()
for _ in range({steps}):
    opt.zero_grad()
    t.nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
peak = peak_mb()
print(json.dumps({{"value": peak - before, "peak": peak, "before": before}}))
"""


def _memory(steps: int) -> Case:
    from ._util import _REPO

    def code_for(rt):
        if rt.name == "numpy" or rt.compile:
            raise Skip("not applicable")
        return _MEMORY.format(lib=rt.name, repo=_REPO, steps=steps), dict

    return _self_timed(code_for, kind="memory-use", unit="MB", warm=False, samples=1,
                       note=f"peak RSS minus RSS before training: MLP 784-256-256-10, Adam, "
                            f"batch 128, {steps} steps")


@register("startup/train_peak_memory", full=(100,), quick=(5,), label="steps={}")
def train_peak_memory(steps: int) -> Case:
    return _memory(steps)



if __name__ == "__main__":
    main()
