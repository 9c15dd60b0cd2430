"""Facts about the machine and the code a run measured: CPU, cores, thread pools, versions,
commit. ``machine_class`` names the committed baseline (``perf/baselines/<class>.json``);
``pin_threads`` runs every thread pool at a chosen size (``python -m perf run --threads N``)."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import subprocess
import sys

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# read by Numba, torch's OpenMP and the BLAS libraries when they load
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


def _cpuinfo() -> dict:
    info = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if ":" not in line:
                    if info:
                        break  # the first processor is enough
                    continue
                k, v = (s.strip() for s in line.split(":", 1))
                info.setdefault(k, v)
    except OSError:
        pass
    return info


def _meminfo_gib() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        return None
    return None


def _version(pkg: str) -> str | None:
    try:
        return importlib.metadata.version(pkg)
    except importlib.metadata.PackageNotFoundError:
        return None


def machine_class(cpu_model: str, cores: int) -> str:
    """A short, stable name for 'this kind of machine': CPU model slug and core count."""
    model = re.sub(r"\(r\)|\(tm\)|cpu|processor|@.*$|\d+-core", " ", cpu_model.lower())
    slug = re.sub(r"[^a-z0-9]+", "-", model).strip("-") or platform.machine() or "unknown"
    return f"{slug}-{cores}c"


def pin_threads(n: int) -> None:
    """Every pool (Numba's, torch's, BLAS's) at ``n`` threads; at one thread a comparison is
    one that a busy machine disturbs less. The pools size themselves when their libraries
    load, so this runs before numpy, numba, scipy or torch is imported."""
    loaded = sorted(m for m in ("numpy", "numba", "scipy", "torch") if m in sys.modules)
    if loaded:
        raise RuntimeError(f"thread counts must be set before {', '.join(loaded)} is imported")
    for var in THREAD_VARS:
        os.environ[var] = str(n)
    import jtorch

    jtorch.set_num_threads(n)
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(n)
    torch.set_num_interop_threads(n)


def facts(threads: int | None = None) -> dict:
    """Everything that explains a number: CPU, cores, memory, thread pools, versions;
    ``threads`` is the count the pools were pinned to (None: their defaults)."""
    cpu = _cpuinfo()
    model = cpu.get("model name") or platform.processor() or platform.machine()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    flags = set(cpu.get("flags", "").split())
    out = {
        "cpu_model": model,
        "cpu_family": cpu.get("cpu family"), "cpu_model_number": cpu.get("model"),
        "cpu_mhz_listed": cpu.get("cpu MHz"),
        "simd": [f for f in ("avx512f", "avx2", "fma", "avx", "neon") if f in flags],
        "cores": cores, "cpu_count": os.cpu_count(),
        "memory_gib": _meminfo_gib(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "class": machine_class(model, cores),
        "versions": {p: _version(p) for p in ("jtorch", "numpy", "numba", "llvmlite", "scipy",
                                               "torch", "matplotlib", "tqdm")},
        "threads": {"pinned": threads},
        "env": {k: v for k, v in os.environ.items()
                if k.startswith(("JTORCH_", "NUMBA_", "OMP_", "MKL_", "OPENBLAS_"))},
    }
    try:
        import numba

        out["threads"]["numba"] = numba.get_num_threads()
        try:
            out["threads"]["numba_layer"] = numba.threading_layer()
        except ValueError:  # no parallel region has run yet
            out["threads"]["numba_layer"] = numba.config.THREADING_LAYER
    except ImportError:
        pass
    try:
        import jtorch

        out["threads"]["jtorch"] = jtorch.get_num_threads()
    except (ImportError, AttributeError):
        pass
    try:
        import torch

        out["threads"]["torch_intra_op"] = torch.get_num_threads()
        out["threads"]["torch_inter_op"] = torch.get_num_interop_threads()
    except ImportError:
        pass
    return out


def commit() -> dict:
    """The commit measured and whether the working tree differed from it."""

    def git(*args):
        r = subprocess.run(["git", "-C", _REPO, *args], capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else None

    sha = git("rev-parse", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", "jtorch")
    return {"sha": sha, "short": sha[:10] if sha else None,
            "branch": git("rev-parse", "--abbrev-ref", "HEAD"),
            "subject": git("log", "-1", "--format=%s"),
            "jtorch_dirty": bool(dirty) if dirty is not None else None}
