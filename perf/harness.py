"""The measurement core: cases, contenders, blocked rotated rounds, pairwise ratios, load.

The method is the one that holds on a shared 2-core machine (see the perf anchors):

* each contender of a case runs in its own block, after an idle gap and one untimed warm call
  (BLAS and OpenMP pools keep spinning after a call and slow whichever runtime runs next);
* blocks are rotated over rounds, each block takes ``samples`` timings of an auto-sized
  number of calls, and the reported time is the median with its inter-quartile range;
* ratios are taken pair by pair (sample i of A in round r over sample i of the reference in
  round r), so slow drift between rounds cancels, and the median of those pairs is reported;
* the CPU used by other processes during a case (/proc/stat busy time minus our own rusage)
  is recorded; a disturbed case is waited on and re-measured while a retry budget lasts.

A contender is one function ``(case) -> thunk`` registered with :func:`contender`; a case
describes its workload once (``case.make(runtime)``), so a new runtime (``jtorch.compile``)
joins every benchmark by adding one function.
"""

from __future__ import annotations

import fnmatch
import functools
import gc
import os
import resource
import statistics
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

# ---------------------------------------------------------------------------------------------
# cases and the registry


class Skip(Exception):
    """A contender does not apply to a case (the message says why; it lands in the JSON)."""


@dataclass
class Runtime:
    """What a case's ``make`` is asked to build for: a library and an optional compiler."""

    name: str  # "jtorch", "torch" or "numpy"
    lib: object  # the module
    compile: Callable | None = None  # torch.compile / jtorch.compile, or None for eager


@dataclass
class Case:
    """One measured workload. ``make(runtime) -> thunk`` builds the callable for a runtime
    (raise :class:`Skip` where it does not apply); ``extra`` adds case-specific contenders."""

    make: Callable[[Runtime], Callable]
    kind: str = "other"  # "memory" (bytes -> fraction of triad bandwidth), "compute" (flops
    # -> fraction of sgemm peak), "latency", "memory-use" or "other"
    bytes: float | None = None  # bytes an ideal kernel moves per call
    flops: float | None = None  # floating-point operations per call
    ref: str = "torch"  # the denominator of the headline ratio
    compile: bool = False  # whether compiled contenders (torch.compile, jtorch.compile) apply
    unit: str = "s"  # "s" (time per call) or "MB"
    self_timed: bool = False  # the thunk returns its own measurement (subprocess cases)
    warm: bool = True  # make one untimed call before each block
    extra: dict = field(default_factory=dict)  # name -> () -> thunk
    pairs: tuple = ()  # extra (numerator, denominator) contender pairs to ratio, e.g. a target
    note: str = ""
    rounds: int | None = None  # at most this many rounds / samples (expensive cases)
    samples: int | None = None
    # filled in by the registry
    name: str = ""
    area: str = ""


@dataclass
class Entry:
    name: str
    area: str
    factory: Callable[[], Case]
    quick: bool
    full: bool


REGISTRY: list[Entry] = []


def register(name: str, full=(None,), quick=(), label: str = "{}"):
    """Register ``fn(param) -> Case`` once per parameter: ``full`` for the full run, ``quick``
    for ``--quick`` (usually smaller sizes). The case name is ``name[label.format(param)]``."""

    def deco(fn):
        area = name.split("/", 1)[0]
        seen = {}
        for p in list(full) + list(quick):
            key = name if p is None else f"{name}[{label.format(p)}]"
            if key not in seen:
                seen[key] = p
                REGISTRY.append(Entry(key, area, functools.partial(fn, p) if p is not None else fn,
                                      p in quick, p in full))
        return fn

    return deco


def select(quick: bool, patterns: list[str] | None) -> list[Entry]:
    """Registered benchmarks of a mode whose names match any pattern (a glob when it has
    wildcards, else a substring). Quick mode takes only the entries registered for it;
    the full run takes those registered for it."""
    from . import benchmarks  # noqa: F401  (registers everything)

    out = []
    for e in REGISTRY:
        if not (e.quick if quick else e.full):
            continue
        if patterns and not any(_match(e.name, p) for p in patterns):
            continue
        out.append(e)
    return out


def _match(name: str, pattern: str) -> bool:
    if "*" in pattern or "?" in pattern:
        return fnmatch.fnmatchcase(name, pattern)
    return pattern in name


# ---------------------------------------------------------------------------------------------
# contenders


CONTENDERS: dict[str, Callable[[Case], Callable]] = {}


def contender(name: str):
    """Register a contender: ``fn(case) -> thunk``, raising :class:`Skip` when it does not
    apply. Order of registration is the order of the JSON and the tables."""

    def deco(fn):
        CONTENDERS[name] = fn
        return fn

    return deco


def require_torch():
    try:
        import torch
    except ImportError as e:  # torch is a test oracle, not a dependency
        raise Skip("torch is not installed") from e
    return torch


@contender("jtorch")
def _jtorch_eager(case: Case) -> Callable:
    import jtorch

    return case.make(Runtime("jtorch", jtorch))


@contender("jtorch_compile")
def _jtorch_compile(case: Case) -> Callable:
    import jtorch

    if not hasattr(jtorch, "compile"):
        raise Skip("jtorch.compile does not exist yet")
    if not case.compile:
        raise Skip("not a compile benchmark")
    return case.make(Runtime("jtorch", jtorch, jtorch.compile))


@contender("numpy")
def _numpy(case: Case) -> Callable:
    return case.make(Runtime("numpy", np))


@contender("torch")
def _torch_eager(case: Case) -> Callable:
    return case.make(Runtime("torch", require_torch()))


@contender("torch_compile")
def _torch_compile(case: Case) -> Callable:
    torch = require_torch()
    if not case.compile:
        raise Skip("not a compile benchmark")
    # every case's wrapper shares one code object: without these, dynamo would turn later
    # sizes into dynamic-shape kernels and stop recompiling after its limit
    cfg = torch._dynamo.config
    for knob in ("cache_size_limit", "recompile_limit"):
        if hasattr(cfg, knob):
            setattr(cfg, knob, max(getattr(cfg, knob), 256))
    return case.make(Runtime("torch", torch, functools.partial(torch.compile, dynamic=False)))


# ---------------------------------------------------------------------------------------------
# load from other processes


def _cpu_busy_s() -> float:
    """Busy CPU seconds of the whole machine since boot (/proc/stat, all cores)."""
    try:
        with open("/proc/stat") as f:
            parts = f.readline().split()
    except OSError:
        return float("nan")
    user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in parts[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def _own_cpu_s() -> float:
    s = resource.getrusage(resource.RUSAGE_SELF)
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return s.ru_utime + s.ru_stime + c.ru_utime + c.ru_stime


class LoadMeter:
    """Cores' worth of CPU used by other processes between ``start()`` and ``stop()``."""

    def start(self) -> None:
        self.t, self.busy, self.own = time.perf_counter(), _cpu_busy_s(), _own_cpu_s()

    def stop(self) -> float:
        wall = time.perf_counter() - self.t
        foreign = (_cpu_busy_s() - self.busy) - (_own_cpu_s() - self.own)
        return max(0.0, foreign / wall) if wall > 0 else 0.0


def foreign_load(window: float = 0.25) -> float:
    m = LoadMeter()
    m.start()
    time.sleep(window)
    return m.stop()


def wait_for_quiet(threshold: float, budget: float) -> tuple[float, float]:
    """Sleep in short windows until foreign load is below ``threshold`` or ``budget`` seconds
    have passed; returns (last load, seconds waited)."""
    t0 = time.perf_counter()
    load = foreign_load()
    while load > threshold and time.perf_counter() - t0 < budget:
        load = foreign_load(0.5)
    return load, time.perf_counter() - t0


# ---------------------------------------------------------------------------------------------
# timing


@dataclass
class Settings:
    rounds: int = 3
    samples: int = 3
    min_time: float = 0.05  # seconds per sample (calls are batched up to it)
    gap: float = 0.15  # idle seconds before each block
    load_threshold: float = 0.3  # foreign cores above which a case counts as disturbed
    retry_budget: float = 60.0  # seconds of waiting/re-measuring disturbed cases per run
    self_timed_samples: int = 3  # samples per block of a case run in fresh processes
    contenders: tuple = tuple()  # empty: all registered


def _autorange(fn: Callable, min_time: float) -> int:
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t
        if dt >= min_time or n >= 1 << 20:
            return n
        # jump close to the target instead of doubling from 1 each time
        n = max(n * 2, min(n * 100, int(n * min_time / max(dt, 1e-9) * 1.2)))


def _time_blocks(thunks: dict[str, Callable], case: Case, st: Settings) -> dict[str, list]:
    """Per contender, a list of rounds, each a list of per-call values."""
    names = list(thunks)
    rounds: dict[str, list] = {k: [] for k in names}
    numbers: dict[str, int] = {}
    n_rounds = min(st.rounds, case.rounds or st.rounds)
    n_samples = min(st.samples, case.samples or st.samples)
    if case.self_timed:
        return _time_interleaved(thunks, case, st, n_rounds,
                                 min(n_samples, st.self_timed_samples))
    for r in range(n_rounds):
        order = names[r % len(names):] + names[: r % len(names)]
        for k in order:
            fn = thunks[k]
            time.sleep(st.gap)
            if case.warm:
                fn()
            if k not in numbers:
                numbers[k] = _autorange(fn, st.min_time)
            n = numbers[k]
            block = []
            for _ in range(n_samples):
                t = time.perf_counter()
                for _ in range(n):
                    fn()
                block.append((time.perf_counter() - t) / n)
            rounds[k].append(block)
    return rounds


def _time_interleaved(thunks: dict[str, Callable], case: Case, st: Settings, n_rounds: int,
                      n_samples: int) -> dict[str, list]:
    """Self-timed cases (each sample a fresh process, seconds long): sample i of every
    contender runs back to back, in a rotating order, so that a slow phase of a shared host
    (seen here to last seconds and to double a training step) lands on both sides of the
    paired ratio rather than on one contender's whole block."""
    names = list(thunks)
    rounds: dict[str, list] = {k: [] for k in names}
    if case.warm:
        for k in names:
            thunks[k]()
    for r in range(n_rounds):
        for k in names:
            rounds[k].append([])
        for i in range(n_samples):
            j = (r * n_samples + i) % len(names)
            for k in names[j:] + names[:j]:
                time.sleep(st.gap)
                rounds[k][-1].append(float(thunks[k]()))
    return rounds


def _summary(values: list[float]) -> dict:
    q = np.percentile(values, [25, 50, 75]) if len(values) > 1 else [values[0]] * 3
    med = float(q[1])
    return {"median": med, "q25": float(q[0]), "q75": float(q[2]),
            "spread": float((q[2] - q[0]) / med) if med else 0.0, "n": len(values)}


def pair_ratios(a_rounds: list[list[float]], b_rounds: list[list[float]]) -> list[float]:
    """Sample i of A in round r over sample i of B in round r."""
    out = []
    for ra, rb in zip(a_rounds, b_rounds):
        out.extend(x / y for x, y in zip(ra, rb) if y > 0)
    return out


REFERENCES = ("torch", "torch_compile", "numpy")


def measure_case(case: Case, st: Settings, limits: dict | None) -> dict:
    """Build every contender, time them, and summarise (times, ratios, limit fractions)."""
    thunks, skipped = {}, {}
    names = [n for n in CONTENDERS if not st.contenders or n in st.contenders]
    builders = {n: functools.partial(CONTENDERS[n], case) for n in names}
    builders.update({n: f for n, f in case.extra.items()
                     if not st.contenders or n in st.contenders or n.split("_")[0] in st.contenders})
    for n, build in builders.items():
        try:
            fn = build()
            if not case.self_timed:
                fn()  # first call: compiles kernels; its errors are reported as skips
            thunks[n] = fn
        except Skip as e:
            skipped[n] = str(e)
        except Exception as e:  # noqa: BLE001  (one broken contender must not end the run)
            skipped[n] = f"error: {type(e).__name__}: {e}"[:300]
    meter = LoadMeter()
    meter.start()
    t0 = time.perf_counter()
    rounds = _time_blocks(thunks, case, st) if thunks else {}
    wall = time.perf_counter() - t0
    foreign = meter.stop()
    res = {"area": case.area, "kind": case.kind, "unit": case.unit, "ref": case.ref,
           "bytes": case.bytes, "flops": case.flops, "note": case.note,
           "contenders": {}, "skipped": skipped, "ratios": {},
           "foreign_cores": round(foreign, 3), "wall_s": round(wall, 3)}
    for n, rs in rounds.items():
        flat = [v for r in rs for v in r]
        s = _summary(flat)
        s["rounds"] = [statistics.median(r) for r in rs]
        _add_rates(s, case, limits)
        res["contenders"][n] = s
    for den in REFERENCES:
        if den not in rounds:
            continue
        for num in rounds:
            if num == den or (num in REFERENCES and REFERENCES.index(num) < REFERENCES.index(den)):
                continue
            pr = pair_ratios(rounds[num], rounds[den])
            if pr:
                res["ratios"][f"{num}/{den}"] = _summary(pr)
    for num, den in case.pairs:
        pr = pair_ratios(rounds[num], rounds[den]) if num in rounds and den in rounds else []
        if pr:
            res["ratios"][f"{num}/{den}"] = _summary(pr)
    return res


def _add_rates(s: dict, case: Case, limits: dict | None) -> None:
    t = s["median"]
    if case.unit != "s" or t <= 0:
        return
    if case.bytes:
        s["gbps"] = case.bytes / t / 1e9
        if limits and case.kind == "memory":
            bw = bandwidth_for(limits, case.bytes)
            if bw:
                s["frac_bw"] = s["gbps"] / bw
    if case.flops:
        s["gflops"] = case.flops / t / 1e9
        peak = (limits or {}).get("sgemm_gflops")
        if peak and case.kind == "compute":
            s["frac_peak"] = s["gflops"] / peak


def bandwidth_for(limits: dict, nbytes: float) -> float | None:
    """The triad ceiling measured at the footprint nearest (in log scale) to ``nbytes``:
    bandwidth depends on whether the data fits in cache, so compare like with like."""
    table = limits.get("triad") or {}
    best = None
    for row in table.values():
        d = abs(np.log(row["bytes"]) - np.log(max(nbytes, 1)))
        if row.get("best_gbps") and (best is None or d < best[0]):
            best = (d, row["best_gbps"])
    return best[1] if best else None


def release() -> None:
    gc.collect()
