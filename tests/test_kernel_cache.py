"""The on-disk kernel cache survives a corrupt entry: the kernel is compiled again, with a
warning, instead of every later run failing (a truncated Numba data file once did that); and
it serves fastmath's implementations to later processes (kernels/cache_locator.py's key)."""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

_RUN = ("import warnings, jtorch; warnings.simplefilter('always'); "
        "print(jtorch.exp(jtorch.ones(3, dtype=jtorch.float64)).tolist())")


def _run(env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", _RUN], env=env, capture_output=True, text=True,
                          check=False, timeout=600)


def test_a_truncated_cache_entry_is_rebuilt(tmp_path):
    env = dict(os.environ, JTORCH_CACHE_DIR=str(tmp_path / "jt"),
               NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    first = _run(env)
    assert first.returncode == 0, first.stderr
    entries = glob.glob(str(tmp_path / "**" / "*.nbc"), recursive=True)
    assert entries
    for path in entries:  # truncate every data file, as a killed writer would leave it
        with open(path, "r+b") as f:
            f.truncate(7)
    second = _run(env)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert "could not be read" in second.stderr and "compiling it again" in second.stderr
    third = _run(env)  # the rebuilt entry is saved again and loads cleanly
    assert third.returncode == 0 and "could not be read" not in third.stderr, third.stderr


# a new kernel calling fastmath (its implementation a closure with nested helper functions in
# its cells): the second process loads that implementation from the cache instead of compiling
_FASTMATH = """
import gc, json, numba, numpy as np
import jtorch
from jtorch.kernels import fastmath as fm

@numba.njit
def f(x):
    return fm.exp(x) + fm.sin(x)

value = float(f(np.float32(0.5)))
stats = {}
for o in gc.get_objects():
    if isinstance(o, numba.core.dispatcher.Dispatcher) and \\
            (o.py_func.__module__ or "").startswith("jtorch.kernels.fastmath") and \\
            type(o._cache).__name__ == "FunctionCache":
        s = o.stats
        stats[o.py_func.__qualname__] = [sum(s.cache_hits.values()), sum(s.cache_misses.values())]
print(json.dumps([value, stats]))
"""


def test_fastmath_implementations_load_from_the_cache(tmp_path):
    env = dict(os.environ, JTORCH_CACHE_DIR=str(tmp_path / "jt"),
               NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    runs = []
    for _ in range(2):
        r = subprocess.run([sys.executable, "-c", _FASTMATH], env=env, capture_output=True,
                           text=True, check=False, timeout=600)
        assert r.returncode == 0, r.stderr
        runs.append(json.loads(r.stdout.strip().splitlines()[-1]))
    (v1, first), (v2, second) = runs
    assert v1 == v2
    assert first and set(first) == set(second), (first, second)
    assert all(m == 1 and h == 0 for h, m in first.values()), first  # compiled and saved
    assert all(h == 1 and m == 0 for h, m in second.values()), second  # loaded
