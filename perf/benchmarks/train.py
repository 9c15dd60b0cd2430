"""Whole training steps (zero_grad, forward, cross-entropy, backward, optimizer step): an MLP
784-256-256-10 at batch 128 with SGD+momentum, and the demo's LeNet (``examples/demo.py``,
1x8x8 digits) at batch 64 with Adam. The compiled contenders compile the model."""

from __future__ import annotations

import importlib.util
import os
import sys

import numpy as np

from ..harness import Case, Skip, register
from ._util import _REPO, rand

_DEMO = os.path.join(_REPO, "examples", "demo.py")
_demo_cache: dict = {}


def demo_lenet(lib):
    """The LeNet class of examples/demo.py, bound to ``lib``: the file is imported with
    ``jtorch`` (and the submodules it imports) resolving to ``lib``, so torch runs the very
    same model code."""
    name = lib.__name__
    if name in _demo_cache:
        return _demo_cache[name]
    import jtorch._datasets

    aliases = {"jtorch": lib, "jtorch.nn": lib.nn, "jtorch.nn.functional": lib.nn.functional,
               "jtorch.utils.data": lib.utils.data, "jtorch._datasets": jtorch._datasets}
    saved = {k: sys.modules.get(k) for k in aliases}
    try:
        sys.modules.update(aliases)
        spec = importlib.util.spec_from_file_location(f"_perf_demo_{name}", _DEMO)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    _demo_cache[name] = mod.LeNet
    return mod.LeNet


def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def _step(lib, model, opt, x, y, compile):
    fwd = compile(model) if compile else model
    F = lib.nn.functional

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(fwd(x), y)
        loss.backward()
        opt.step()

    return step


def _labels(n: int) -> np.ndarray:
    return np.random.default_rng(1).integers(0, 10, n).astype(np.int64)


# Each sample runs in a fresh interpreter that imports one library only, as a user's training
# script does: with torch loaded in the same process, jtorch finds GNU OpenMP already
# initialised with spinning workers and takes Numba's workqueue layer instead of its own
# OpenMP pool (see jtorch/_threads.py), which is not what a jtorch program runs.
_STEPS = """
import json, sys, time
sys.path.insert(0, {repo!r})
import numpy as np
import {lib} as lib
from perf.benchmarks import train
step = train.{builder}(lib, {batch}, {compile})
for _ in range({warm}):
    step()
times = []
for _ in range({steps}):
    t0 = time.perf_counter()
    step()
    times.append(time.perf_counter() - t0)
print(json.dumps({{"value": float(np.median(times))}}))
"""


def _isolated(builder: str, batch: int, **kw) -> Case:
    """A training-step case timed in fresh processes (the median of ``steps`` steps each)."""
    from ._util import run_python

    def make(rt):
        if rt.name == "numpy":
            raise Skip("no NumPy version")
        code = _STEPS.format(repo=_REPO, lib=rt.name, builder=builder, batch=batch,
                             compile=bool(rt.compile), warm=5, steps=30)
        return lambda: run_python(code)["value"]

    return Case(make, self_timed=True, rounds=1, **kw)


def mlp_step(lib, batch: int, compile: bool):
    x, y = rand(batch, 784), _labels(batch)
    lib.manual_seed(0)
    model = _mlp(lib)
    opt = lib.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
    return _step(lib, model, opt, lib.from_numpy(x), lib.from_numpy(y),
                 lib.compile if compile else None)


def lenet_step(lib, batch: int, compile: bool):
    x, y = rand(batch, 1, 8, 8), _labels(batch)
    lib.manual_seed(0)
    model = demo_lenet(lib)()
    opt = lib.optim.Adam(model.parameters(), lr=1e-2)
    return _step(lib, model, opt, lib.from_numpy(x), lib.from_numpy(y),
                 lib.compile if compile else None)


@register("train/mlp_784_256_256_10", full=(128,), quick=(16,), label="b{}")
def mlp(batch: int) -> Case:
    params = 784 * 256 + 256 + 256 * 256 + 256 + 256 * 10 + 10
    return _isolated("mlp_step", batch, kind="compute", flops=3 * 2 * batch * (params - 522),
                     compile=True, note="SGD(momentum=0.9); each runtime in its own process")


@register("train/lenet_demo", full=(64,), quick=(64,), label="b{}")
def lenet(batch: int) -> Case:
    return _isolated("lenet_step", batch, kind="other", compile=True,
                     note="examples/demo.py LeNet, Adam; each runtime in its own process")


@register("train/lenet_demo_meta", full=(64,), quick=(64,), label="b{}")
def lenet_meta(batch: int) -> Case:
    """The demo CNN's forward and backward on meta tensors: shapes only, no kernel (the cost
    of the meta rules and the autograd bookkeeping; the compiler traces this way)."""

    def make(rt):
        if rt.name == "numpy" or rt.compile:
            raise Skip("meta tensors: eager jtorch and torch only")
        lib = rt.lib
        with lib.device("meta"):
            model = demo_lenet(lib)()
        x = lib.empty(batch, 1, 8, 8, device="meta")
        y = lib.empty(batch, dtype=lib.int64, device="meta")

        def step():
            model.zero_grad(set_to_none=True)
            lib.nn.functional.cross_entropy(model(x), y).backward()

        return step

    return Case(make, kind="latency")
