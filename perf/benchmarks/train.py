"""Training: whole steps (zero_grad, forward, cross-entropy, backward, optimizer step) of the
demo CNN (``examples/demo.py``'s LeNet, 1x8x8 digits, batch 64, Adam) and of an MLP
784-256-256-10 (batch 128, SGD with momentum); a pointwise chain's forward and backward; and
how long a compiled training step takes to start, from ``import`` to the end of the first
step, with empty caches (cold) and with the caches a cold process filled (warm).

The compiled contenders compile the model (``model = lib.compile(model)``), as a user does.
Before anything is timed, each compiled contender runs a few steps next to an eager twin built
from the same seed and data, and a loss or parameter that differs beyond float32 rounding fails
the benchmark: a wrong compiled step is not timed."""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import types

import numpy as np

from ..harness import Case, Skip, register
from ._util import _REPO, fresh_cache_env, rand, run_python

_DEMO = os.path.join(_REPO, "examples", "demo.py")
_demo_cache: dict = {}


def demo_lenet(lib):
    """The LeNet class of examples/demo.py, bound to ``lib``: the file is imported with
    ``jtorch`` (and the submodules it imports) resolving to ``lib``, so torch runs the very
    same model code. For torch, the demo's dataset module is a stub, so that a torch process
    does not import jtorch (and Numba) with it."""
    name = lib.__name__
    if name in _demo_cache:
        return _demo_cache[name]
    if name == "jtorch":
        import jtorch._datasets

        datasets = jtorch._datasets
    else:
        datasets = types.ModuleType("jtorch._datasets")
        datasets.load_digits = None  # loaders() is not used by the benchmarks
    aliases = {"jtorch": lib, "jtorch.nn": lib.nn, "jtorch.nn.functional": lib.nn.functional,
               "jtorch.utils.data": lib.utils.data, "jtorch._datasets": datasets}
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
    # importable by its name: torch.compile of a whole step inlines LeNet.forward and imports
    # the module of the globals it reads
    sys.modules[spec.name] = mod
    _demo_cache[name] = mod.LeNet
    return mod.LeNet


def _mlp(lib):
    nn = lib.nn
    return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                         nn.Linear(256, 10))


def _step(lib, model, opt, x, y, compile):
    """One training step as a closure returning the loss; ``step.model`` is the (uncompiled)
    module, for the eager check."""
    fwd = compile(model) if compile else model
    F = lib.nn.functional

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(fwd(x), y)
        loss.backward()
        opt.step()
        return loss

    step.model = model
    return step


def _labels(n: int) -> np.ndarray:
    return np.random.default_rng(1).integers(0, 10, n).astype(np.int64)


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


def _whole_step(builder):
    """``builder``'s training step with the compiled contenders compiling the whole step
    function (zero_grad, forward, backward, the optimizer's step), not the model."""

    def build(lib, batch: int, compile: bool):
        step = builder(lib, batch, False)
        if not compile:
            return step
        compiled = lib.compile(step)
        compiled.model = step.model
        return compiled

    return build


mlp_whole_step = _whole_step(mlp_step)
lenet_whole_step = _whole_step(lenet_step)


def check_against_eager(compiled, eager, steps: int = 3) -> None:
    """Run ``steps`` training steps of a compiled step and of its eager twin (same seed, same
    data) and compare the losses and the parameters after them; raise on a difference.

    The parameters' bound is loose (1e-3): Adam moves a weight whose gradient is near zero by
    up to lr * g / (|g| + eps), so a rounding difference in a tiny gradient (another summation
    order) moves it by up to ~1e-3 at lr 1e-2; a wrong gradient moves many by ~lr and the loss."""
    got = [compiled().item() for _ in range(steps)]
    want = [eager().item() for _ in range(steps)]
    if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
        raise AssertionError(f"compiled losses {got} differ from eager {want}")
    pairs = zip(compiled.model.named_parameters(), eager.model.parameters())
    for (name, p), q in pairs:
        a, b = p.detach().numpy(), q.detach().numpy()
        if not np.allclose(a, b, rtol=1e-3, atol=1e-3):
            err = float(np.max(np.abs(a - b)))
            raise AssertionError(f"after {steps} steps, compiled parameter {name} differs from "
                                 f"eager's by up to {err:.3g}")


# Each sample runs in a fresh interpreter that imports one library only, as a user's training
# script does: with torch loaded in the same process, jtorch finds GNU OpenMP already
# initialised with spinning workers and takes Numba's workqueue layer instead of its own
# OpenMP pool (see jtorch/_threads.py), which is not what a jtorch program runs.
_STEPS = """
import json, sys, time
sys.path.insert(0, {repo!r})
import numpy as np
import {lib} as lib
from perf.benchmarks import train, {module} as builders
step = builders.{builder}(lib, {batch}, {compile})
if {compile}:
    train.check_against_eager(step, builders.{builder}(lib, {batch}, False))
for _ in range({warm}):
    step()
times = []
for _ in range({steps}):
    t0 = time.perf_counter()
    step()
    times.append(time.perf_counter() - t0)
print(json.dumps({{"value": float(np.median(times))}}))
"""


def _isolated(builder: str, batch: int, module: str = "train", compile: bool = True,
              **kw) -> Case:
    """A training-step case timed in fresh processes (the median of ``steps`` steps each);
    ``builder(lib, batch, compile)`` is a function of ``perf.benchmarks.<module>``."""

    def make(rt):
        if rt.name == "numpy":
            raise Skip("no NumPy version")
        code = _STEPS.format(repo=_REPO, lib=rt.name, builder=builder, batch=batch,
                             compile=bool(rt.compile), warm=5, steps=30, module=module)
        return lambda: run_python(code)["value"]

    # no untimed process first: each process warms up before it times its steps
    return Case(make, self_timed=True, warm=False, rounds=1, compile=compile, **kw)


@register("train/demo_cnn_step", full=(64,), quick=(64,), label="b{}")
def demo_cnn_step(batch: int) -> Case:
    return _isolated("lenet_step", batch, kind="other",
                     note="examples/demo.py LeNet, cross-entropy, Adam; each runtime in its own "
                          "process; compiled checked against eager first")


@register("train/mlp_step", full=(128,), quick=(128,), label="b{}")
def mlp_step_case(batch: int) -> Case:
    params = 784 * 256 + 256 + 256 * 256 + 256 + 256 * 10 + 10
    return _isolated("mlp_step", batch, kind="compute", flops=3 * 2 * batch * (params - 522),
                     note="MLP 784-256-256-10, cross-entropy, SGD(momentum=0.9); each runtime "
                          "in its own process; compiled checked against eager first")


@register("train/whole_step", full=("mlp", "demo_cnn"), quick=("mlp",), label="{}")
def whole_step(model: str) -> Case:
    builder, batch = {"mlp": ("mlp_whole_step", 128), "demo_cnn": ("lenet_whole_step", 64)}[model]
    return _isolated(builder, batch, kind="other",
                     note="the mlp_step / demo_cnn_step training step with the compiled "
                          "contenders compiling the whole step function (zero_grad, forward, "
                          "backward, optimizer step); each runtime in its own process")


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


# ---------------------------------------------------------------------------------------------
# a pointwise chain's forward and backward


def _chain(t, x):
    return t.sin(x) + t.cos(x) * x - t.exp(-x * x)


@register("train/chain_fwd_bwd", full=(22,), quick=(22,), label="n=2^{}")
def chain_fwd_bwd(p: int) -> Case:
    """``sin(x) + cos(x) * x - exp(-x * x)``, then ``.sum().backward()`` (x requires grad):
    compiled contenders compile the forward (up to the sum) and call ``backward`` on its
    result, as torch.compile's users do. Bytes: x read and grad written, a float32 each."""
    n = 1 << p
    a = rand(n)

    def make(rt):
        if rt.name == "numpy":
            raise Skip("no NumPy version")
        lib = rt.lib

        def loss(x):
            return _chain(lib, x).sum()

        fwd = rt.compile(loss) if rt.compile else loss
        x = lib.from_numpy(a.copy()).requires_grad_()

        def run():
            x.grad = None
            out = fwd(x)
            out.backward()
            return out

        if rt.compile:
            _check_chain(loss, run, x)
        return run

    return Case(make, kind="memory", bytes=8 * n, compile=True)


def _check_chain(loss, run, x) -> None:
    """The compiled forward's value and x's gradient against eager's, before timing."""
    got = run().item()
    got_grad = x.grad.numpy().copy()
    x2 = x.detach().clone().requires_grad_()
    want = loss(x2)
    want.backward()
    if not np.isclose(got, want.item(), rtol=1e-4, atol=1e-2):
        raise AssertionError(f"compiled loss {got} differs from eager {want.item()}")
    if not np.allclose(got_grad, x2.grad.numpy(), rtol=1e-5, atol=1e-5):
        err = float(np.max(np.abs(got_grad - x2.grad.numpy())))
        raise AssertionError(f"compiled gradient differs from eager's by up to {err:.3g}")


# ---------------------------------------------------------------------------------------------
# cold and warm start of a compiled training step

# from before `import` to the end of the first demo CNN training step (batch 64, Adam)
_FIRST_STEP = """
import time
t0 = time.perf_counter()
import json, sys
sys.path.insert(0, {repo!r})
import {lib} as lib
from perf.benchmarks import train
train.lenet_step(lib, 64, {compile})().item()
print(json.dumps({{"value": time.perf_counter() - t0}}))
"""

# per runtime, the cache directories its latest cold process filled (and their owner object)
_filled: dict = {}

# Python's bytecode, shared by every process of the series and written before the first timed
# one (as installing a package compiles its .pyc files): a checkout run under
# PYTHONDONTWRITEBYTECODE would otherwise compile each module from source at every start.
_bytecode: dict = {}


def _bytecode_env(lib: str) -> dict:
    if "dir" not in _bytecode:
        _bytecode["dir"] = tempfile.TemporaryDirectory(prefix="jtorch-perf-pycache-")
    env = {"PYTHONPYCACHEPREFIX": _bytecode["dir"].name, "PYTHONDONTWRITEBYTECODE": ""}
    if lib not in _bytecode:  # untimed: fill the bytecode of the library and the script
        cache_env, owner = fresh_cache_env()
        run_python(f"import sys, json; sys.path.insert(0, {_REPO!r}); import {lib}; "
                   "from perf.benchmarks import train; print(json.dumps({}))",
                   {**cache_env, **env})
        owner.cleanup()
        _bytecode[lib] = True
    return env


@register("train/cold_compile", full=("cold", "warm"), quick=("cold", "warm"), label="{}")
def cold_compile(phase: str) -> Case:
    """Seconds from ``import`` to the end of the demo CNN's first training step in a fresh
    process: ``cold`` with empty jtorch, Numba and Inductor caches (JTORCH_CACHE_DIR,
    NUMBA_CACHE_DIR, TORCHINDUCTOR_CACHE_DIR), ``warm`` reusing the directories the latest
    cold process of the same runtime filled (a cold one runs first, untimed, when none has).
    Both find Python's bytecode written, as an installed package has it.
    Eager jtorch's cold start is ``startup/lenet_step_cold``; torch eager is the reference.
    A cold jtorch process builds kernels in a compile worker on the second core (the optimizer's
    step kernel, then the backward and forward graphs' from their ends:
    ``jtorch/compile/workers.py``; ``JTORCH_COMPILE_WORKERS=0`` measures without).
    The script's own imports (perf.benchmarks, the demo file) add about 40 ms."""

    def make(rt):
        if rt.name == "numpy":
            raise Skip("no NumPy version")
        if rt.name == "jtorch" and not rt.compile:
            raise Skip("compiled runtimes only (eager jtorch: startup/lenet_step_cold)")
        key = rt.name + ("_compile" if rt.compile else "")
        code = _FIRST_STEP.format(repo=_REPO, lib=rt.name, compile=bool(rt.compile))

        def cold() -> float:
            env, owner = fresh_cache_env()
            env.update(_bytecode_env(rt.name))
            value = run_python(code, env)["value"]
            old = _filled.get(key)
            _filled[key] = env, owner
            if old is not None:
                old[1].cleanup()
            return value

        def warm() -> float:
            if key not in _filled:
                cold()
            return run_python(code, _filled[key][0])["value"]

        return cold if phase == "cold" else warm

    what = "empty caches" if phase == "cold" else "caches filled by a cold process"
    return Case(make, kind="latency", self_timed=True, warm=False, rounds=1,
                samples=3 if phase == "cold" else 5, compile=True,
                note=f"import to the end of the first demo CNN step (batch 64, Adam), {what}")
