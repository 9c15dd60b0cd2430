"""The on-disk kernel cache survives a corrupt entry: the kernel is compiled again, with a
warning, instead of every later run failing (a truncated Numba data file once did that)."""

from __future__ import annotations

import glob
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
