"""Costs paid once per process, each measured in fresh interpreters: import time, kernel
compile latency (cold: empty jtorch/Numba caches; warm: the same on-disk cache in a new
process) and the peak memory of a training run."""

from __future__ import annotations

from ..harness import Case, Runtime, Skip, register
from ._util import fresh_cache_env, run_python


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

