"""jtorch/_gc.py: objects alive after ``import jtorch`` are frozen (``JTORCH_GC_FREEZE=0`` opts
out), and Python's collector pauses while Numba's compiler lock is held, whatever ends the
compile, and resumes only where it was running before."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys

import numba
import pytest
from numba.core import compiler_lock

import jtorch  # noqa: F401  (installs the pause on Numba's compiler lock)


def _fresh(code: str, **env) -> dict:
    r = subprocess.run([sys.executable, "-c", f"import gc, json\n{code}"], capture_output=True,
                       text=True, timeout=600, check=False, env={**os.environ, **env})
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_import_freezes_what_it_made():
    r = _fresh("before = gc.get_freeze_count()\nimport jtorch\n"
               "print(json.dumps([before, gc.get_freeze_count(), gc.isenabled()]))")
    before, after, on = r
    assert before == 0 and after > 20000 and on


def test_freeze_opt_out():
    r = _fresh("import jtorch\nprint(json.dumps([gc.get_freeze_count(), gc.isenabled()]))",
               JTORCH_GC_FREEZE="0")
    assert r == [0, True]


def test_import_keeps_a_disabled_collector_disabled():
    r = _fresh("gc.disable()\nimport jtorch\nx = jtorch.ones(3) + 1\n"
               "print(json.dumps(gc.isenabled()))")
    assert r is False


def test_collector_pauses_in_the_compiler_lock_and_resumes():
    lock = compiler_lock.global_compiler_lock
    assert gc.isenabled()
    with lock:
        assert not gc.isenabled()
        with lock:  # (reentrant: only the outermost release resumes)
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_collector_resumes_after_a_failing_compile():
    seen = []

    @numba.njit
    def f(x):
        seen.append(gc.isenabled())  # (untypable: the compile raises)
        return x

    with pytest.raises(numba.core.errors.TypingError):
        f(1.0)
    assert gc.isenabled()


def test_compile_inside_a_disabled_collector_leaves_it_disabled():
    @numba.njit
    def g(x):
        return x + 1

    gc.disable()
    try:
        assert g(1) == 2
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_collector_is_paused_while_numba_compiles():
    states = []

    def probe(x):
        return x

    @numba.extending.overload(probe)
    def _probe(x):
        states.append(gc.isenabled())  # (typing runs inside the compile)
        return lambda x: x

    @numba.njit
    def h(x):
        return probe(x) * 2

    assert h(3) == 6
    assert states and not any(states)
    assert gc.isenabled()
