"""Optimizer updates on CUDA: the CPU drivers of ``cpu/optim.py`` restaged.

Each CPU driver (``_sgd``, ``_adam``, ...) picks its constant options in Python branches and
runs ``for i in prange(n): _sgd_i(p, g, buf, i, ...)``, the per-element body holding torch's
single-tensor arithmetic. The CUDA kernel is that driver's source with every such loop turned
into a grid-stride loop (``i = cuda.grid(1); while i < n: ...; i += cuda.gridsize(1)``): the
same branches, the same body functions (compiled as device functions; the simulator, which
hands them its stand-in arrays, calls their Python), so a CUDA step does the CPU step's
arithmetic in the same order.
"""

from __future__ import annotations

import inspect
import re

import numpy as np

from ..cpu import optim as _cpu
from ..source import load
from . import target

_LOOP = re.compile(r"^(\s*)for i in prange\((.+)\):\s*$")
_BODY_FN = re.compile(r"\b(_[a-z0-9]+_i)\b")
_kernels: dict = {}


def source(name: str) -> str:
    """The CUDA kernel module of optimizer ``name`` (``step(*arrays, *scalars)``)."""
    driver = getattr(_cpu, f"_{name}")
    lines = inspect.getsource(driver).splitlines()
    out: list = []
    open_loops: list = []  # indentation of the loops whose block is being copied

    def close(upto: int) -> None:
        while open_loops and open_loops[-1] >= upto:
            ind = open_loops.pop()
            out.append(" " * (ind + 4) + "i += cuda.gridsize(1)")

    for line in lines:
        if not line.strip():
            continue
        ind = len(line) - len(line.lstrip())
        close(ind)
        m = _LOOP.match(line)
        if m:
            out += [f"{m.group(1)}i = cuda.grid(1)", f"{m.group(1)}while i < {m.group(2)}:"]
            open_loops.append(len(m.group(1)))
            continue
        out.append(line)
    close(0)
    out[0] = re.sub(r"^def _\w+\(", "def step(", out[0])
    bodies = sorted(set(_BODY_FN.findall("\n".join(out))))
    head = [f"# {name}: optimizer update on CUDA, restaged from cpu/optim.py's _{name}",
            "from jtorch.kernels.cuda.target import cuda",
            "from jtorch.kernels.cpu import optim as _cpu",
            *[f"{b} = _cpu.{b}{'.py_func' if target.SIMULATOR else ''}" for b in bodies]]
    return "\n".join([*head, "", "", *out]) + "\n"


def kernel(name: str):
    k = _kernels.get(name)
    if k is None:
        k = _kernels[name] = target.jit(load(f"jt_cuda_optim_{name}", source(name)).step)
    return k


_empty: dict = {}


def _unused(dt: np.dtype):
    """An empty device array standing for a buffer an option does not use."""
    e = _empty.get(dt)
    if e is None:
        e = _empty[dt] = target.cuda.device_array(0, dtype=dt)
    return e


def run(name: str, arrays: list, scalars: tuple, threads: int, max_blocks: int) -> bool:
    """Update in place: ``arrays`` are (span, offset, size) of contiguous CUDA arrays in the
    compute dtype (None for unused buffers). False when the dtype is not one the kernels
    take (the caller's host path runs)."""
    span0, _, n = arrays[0]
    dt = span0.dtype
    if dt not in (np.float32, np.float64):
        return False
    views = [_unused(dt) if a is None else a[0][a[1]:a[1] + a[2]] for a in arrays]
    sc = tuple(s if isinstance(s, bool) else dt.type(s) for s in scalars)
    if n:
        blocks = max(1, min(max_blocks, (n + threads - 1) // threads))
        kernel(name)[blocks, threads](*views, *sc)
    return True
