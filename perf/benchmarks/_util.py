"""Builders shared by the benchmark files: a case written once against the torch API runs
under every runtime (jtorch, torch, compiled), with an optional NumPy version."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from typing import Callable, Sequence

import numpy as np

from ..harness import Runtime, Skip


def rand(*shape, seed: int = 0, scale: float = 1.0) -> np.ndarray:
    a = np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)
    return a * np.float32(scale) if scale != 1.0 else a


def functional(fn: Callable, arrays: Sequence[np.ndarray], numpy: Callable | None = None,
               grad: Sequence[int] = ()) -> Callable[[Runtime], Callable]:
    """``make`` for ``fn(lib, *tensors)``: the arrays become tensors of the runtime's library
    (sharing memory; those at ``grad`` positions are copies that require grad), and a
    compiled runtime compiles ``fn`` with the library bound."""

    def make(rt: Runtime) -> Callable:
        if rt.name == "numpy":
            if numpy is None:
                raise Skip("no NumPy version")
            return lambda: numpy(*arrays)
        lib = rt.lib
        args = [lib.from_numpy(a.copy()).requires_grad_() if i in grad else lib.from_numpy(a)
                for i, a in enumerate(arrays)]

        def bound(*xs):
            return fn(lib, *xs)

        f = rt.compile(bound) if rt.compile else bound
        return lambda: f(*args)

    return make


def torch_only(make_torch: Callable[[object, Callable | None], Callable]) -> Callable:
    """``make`` for a case with no NumPy version: ``make_torch(lib, compile)``."""

    def make(rt: Runtime) -> Callable:
        if rt.name == "numpy":
            raise Skip("no NumPy version")
        return make_torch(rt.lib, rt.compile)

    return make


def run_python(code: str, env: dict | None = None, timeout: float = 600) -> dict:
    """Run ``code`` in a fresh interpreter; it prints one JSON object as its last line."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=full_env, timeout=timeout, cwd=_REPO)
    if r.returncode != 0:
        raise RuntimeError(f"subprocess failed ({r.returncode}): {r.stderr.strip()[-500:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def fresh_cache_env() -> tuple[dict, tempfile.TemporaryDirectory]:
    """Environment with empty jtorch and Numba caches (a cold start); keep the returned
    directory object alive while the env is used."""
    d = tempfile.TemporaryDirectory(prefix="jtorch-perf-cache-")
    return {"JTORCH_CACHE_DIR": os.path.join(d.name, "jtorch"),
            "NUMBA_CACHE_DIR": os.path.join(d.name, "numba"),
            "TORCHINDUCTOR_CACHE_DIR": os.path.join(d.name, "inductor"),
            "TRITON_CACHE_DIR": os.path.join(d.name, "triton")}, d


_REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
