"""Compiled functions across processes: a warm on-disk cache compiles no generated kernel,
``python -m jtorch.precompile script.py`` warms the parallel twins a bigger run will use,
processes filling one cache at once all succeed, and a corrupt entry of a fused kernel is
rebuilt; a process that only loads cached kernels never refreshes Numba's registries (a
warm start's largest cost). Each process runs ``_PROGRAM`` (written to a file, so precompile can run it too),
which records every Numba compilation through Numba's ``numba:compile`` event."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import jtorch
from jtorch import _flags

_PROGRAM = '''
import json, sys
import numpy as np
from numba.core import base, event

refreshes = []  # Numba's registry refresh: every compile pays it, a cache load need not
_refresh = base.BaseContext.refresh
base.BaseContext.refresh = lambda self: refreshes.append(1) or _refresh(self)
import jtorch
from jtorch.kernels import source

compiled = []


class _Record(event.Listener):
    def on_start(self, ev):
        f = ev.data["dispatcher"].py_func
        compiled.append(f"{f.__module__}.{f.__qualname__}")

    def on_end(self, ev):
        pass


event.register("numba:compile", _Record())


def f(z, b, x):
    y = (z * b).sin() + 1.0  # a pointwise chain over a bias operand
    e = (x - x.amax(dim=-1, keepdim=True)).exp()  # softmax written out: a row group
    return y, e / e.sum(dim=-1, keepdim=True)


n = int(sys.argv[1])
rng = np.random.default_rng(0)  # numpy inputs: no random kernel to compile
z, b, x = (jtorch.from_numpy(rng.standard_normal(s).astype(np.float32))
           for s in ((2, n), (n,), (2, n + 1)))
y, s = jtorch.compile(f)(z, b, x)
zn, bn, xn = z.numpy(), b.numpy(), x.numpy()  # numpy's values: no eager kernel to compile
en = np.exp(xn - xn.max(-1, keepdims=True))
want_y, want_s = np.sin(zn * bn) + 1, en / en.sum(-1, keepdims=True)
ran = {name: {k: [len(d.signatures), sum(d.stats.cache_hits.values())]
              for k, d in vars(mod).items() if k in ("serial", "parallel", "serialp", "parallelp")}
       for name, mod in source._modules.items() if name.startswith(("jt_fused_", "jt_rows_"))}
print("RESULT " + json.dumps({
    "ok": np.allclose(y.numpy(), want_y, rtol=1e-5, atol=1e-6) and
          np.allclose(s.numpy(), want_s, rtol=1e-5, atol=1e-7),
    "compiled": [c for c in compiled if c.startswith("jt_")],
    "ran": ran,
    "refreshed": len(refreshes),
}))
'''


def _setup(tmp_path) -> tuple[dict, str]:
    """An environment with empty caches under ``tmp_path``, and the program's path."""
    env = dict(os.environ, JTORCH_CACHE_DIR=str(tmp_path / "jt"),
               NUMBA_CACHE_DIR=str(tmp_path / "numba"),
               # the jtorch under test in every process: ``-m jtorch.precompile`` would import
               # the one in the working directory, the program the installed one
               PYTHONPATH=os.path.dirname(os.path.dirname(jtorch.__file__)))
    path = tmp_path / "program.py"
    path.write_text(_PROGRAM)
    return env, str(path)


def _check(p: subprocess.CompletedProcess) -> dict:
    assert p.returncode == 0, p.stderr
    line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")][-1]
    res = json.loads(line[len("RESULT "):])
    assert res["ok"], p.stdout
    assert {k.split("_")[1] for k in res["ran"]} == {"fused", "rows"}, res  # both groups ran
    return res


def _run(env, *args) -> dict:
    p = subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                       check=False, timeout=600)
    res = _check(p)
    res["stderr"] = p.stderr
    return res


def _entries(res: dict, entry: str) -> list:
    """[signatures, cache hits] of ``entry`` (serial or parallel) per generated module: a row
    module's pipelined one (``serialp``, ``parallelp``) where that one ran (rows of 256 or
    more)."""
    piped = [mod.get(entry + "p") for mod in res["ran"].values()]
    return [p if p is not None and p[0] else mod[entry]
            for p, mod in zip(piped, res["ran"].values())]


def test_a_warm_cache_compiles_no_generated_kernel(tmp_path):
    env, prog = _setup(tmp_path)
    first = _run(env, prog, "8")
    assert first["compiled"]  # a cold cache: the generated kernels were compiled
    second = _run(env, prog, "8")
    assert second["compiled"] == []
    assert second["refreshed"] == 0  # loading cached kernels skips Numba's registry refresh
    assert all(sigs == 1 and hits >= 1 for sigs, hits in _entries(second, "serial"))
    # past the grain size the parallel twins run: compiled now (what precompile spares); the
    # row group's rows are long, so its pipelined entries, with the loop they add
    big = _run(env, prog, str(_flags.GRAIN_SIZE // 2 + 16))
    names = sorted(c.split(".")[1] for c in big["compiled"])
    assert [n for n in names if not n.startswith(("_r_", "seg"))] == \
        ["parallel", "parallelp", "serialp"], names


def test_precompile_a_script_warms_the_parallel_twins(tmp_path):
    """A small run through precompile; a run past the grain size then takes the parallel
    entry points, loaded from the cache."""
    env, prog = _setup(tmp_path)
    pre = _run(env, "-m", "jtorch.precompile", prog, "8")
    assert "jtorch.precompile: ran" in pre["stderr"] and "could not" not in pre["stderr"]
    big = _run(env, prog, str(_flags.GRAIN_SIZE // 2 + 16))
    assert big["compiled"] == [] and big["refreshed"] == 0
    assert all(sigs == 1 and hits >= 1 for sigs, hits in _entries(big, "parallel"))


def test_two_processes_fill_one_empty_cache_at_once(tmp_path):
    env, prog = _setup(tmp_path)
    procs = [subprocess.Popen([sys.executable, prog, "8"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=600)
        _check(subprocess.CompletedProcess(p.args, p.returncode, out, err))
    third = _run(env, prog, "8")
    assert third["compiled"] == []


def test_a_truncated_fused_kernel_entry_is_rebuilt(tmp_path):
    env, prog = _setup(tmp_path)
    first = _run(env, prog, "8")
    entries = [p for p in glob.glob(str(tmp_path / "**" / "*.nbc"), recursive=True)
               if os.path.basename(p).startswith(("jt_fused_", "jt_rows_"))]
    assert entries
    for path in entries:  # as a killed writer would leave them
        with open(path, "r+b") as f:
            f.truncate(7)
    second = _run(env, prog, "8")
    assert "could not be read" in second["stderr"] and "compiling it again" in second["stderr"]
    assert second["compiled"] and set(second["compiled"]) <= set(first["compiled"])
    third = _run(env, prog, "8")  # the rebuilt entries were saved and load cleanly
    assert third["compiled"] == [] and "could not be read" not in third["stderr"]
