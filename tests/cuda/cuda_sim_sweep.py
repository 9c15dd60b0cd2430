"""CUDA kernels in Numba's simulator against jtorch's CPU eager results (run as a script by
``test_cuda_sim.py``: the simulator must be chosen before ``numba.cuda`` is first imported).
``--device`` runs them on a real GPU instead, at full block sizes and a tolerance for the
device's fused multiply-adds.

Ops whose CUDA scalar function is a rebuilt copy with CUDA twins (``cuda.scalars``: floor,
fmod, signbit, hardtanh, ...) also run on edge values (nan, -nan, +-inf, +-0.0, halfway points,
subnormals, the largest float, poles; every pair of a smaller set for binary ops), compared
bit for bit (any nan matches any nan; on a device, ops whose math differs from the CPU's
libm get the tolerance).

Usage: ``python tests/cuda/cuda_sim_sweep.py [--device] [--twins] [op names...]`` (no names:
every pointwise op; ``--twins``: those with CUDA twins). Prints one JSON object: the cases run,
the edge-value cases among them, the ops, and the failures, each with its op, dtype and error."""

import json
import os
import sys

DEVICE = "--device" in sys.argv
TWINS = "--twins" in sys.argv
if not DEVICE:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np  # noqa: E402

import jtorch  # noqa: E402
from jtorch.kernels import registry  # noqa: E402
from jtorch.kernels.cuda import pointwise, reduce, scalars, target  # noqa: E402

ARITY = {"unary": 1, "binary": 2, "ternary": 3}
THREADS = 256 if DEVICE else 8  # the simulator runs each thread as a Python thread
SHAPE = (3, 5)
# the simulator's barriers poll every thread: a reduction block of 4 threads still folds
# strided partials and runs a two-level tree
R_THREADS = 128 if DEVICE else 4
RTOL = 1e-5 if DEVICE else 1e-6


# the values of ops' trailing parameters (default 0.5 each); where's condition is an array
PARAMS = {"isclose": (1e-5, 1e-8, False), "polygamma": (1,), "mvlgamma": (1,),
          "nan_to_num": (0.0, 1e10, -1e10), "hardtanh": (-0.5, 0.5), "elu": (1.0, 1.0, 1.0),
          "softplus": (1.0, 20.0), "logit_eps": (0.1, 0.1), "leaky_relu": (0.01,)}


def _inputs(op, dtype: str, rng) -> list:
    """Arrays in (0.1, 0.9), inside every op's domain (log, acos, atanh, logit, erfinv)."""
    n = op.scalar.__code__.co_argcount - len(_params(op))
    xs = [rng.uniform(0.1, 0.9, SHAPE).astype(dtype) for _ in range(n)]
    if op.name == "where":
        xs[-1] = xs[-1] < 0.5
    return xs


def _params(op) -> tuple:
    if op.name == "where":
        return ()
    return PARAMS.get(op.name, (0.5,) * op.nparams)


def _dtypes(op, xs: list, params: tuple) -> tuple:
    ts = [jtorch.from_numpy(x) for x in xs]
    from jtorch import dispatch

    _, compute, out = dispatch.resolve_dtypes(op, (*ts, *params))
    return compute.name, out.name, ts


def _check(got, want, what: str, failures: list) -> None:
    if got.dtype != want.dtype or not np.allclose(got, want, rtol=RTOL, atol=0, equal_nan=True):
        failures.append({"case": what, "got": repr(got.ravel()[:4]), "want": repr(want.ravel()[:4])})


def pointwise_case(op, dtype: str, failures: list) -> None:
    rng = np.random.default_rng(0)
    xs = _inputs(op, dtype, rng)
    params = _params(op)
    compute, out, ts = _dtypes(op, xs, params)
    want = op(*ts, *params).numpy()
    full = [np.full(want.size, p) for p in params]
    # contiguous operands
    o = target.cuda.device_array(want.size, dtype=want.dtype)
    pointwise.run_contiguous(op, compute, out, o, *[target.to_device(x.ravel()) for x in xs],
                             *[target.to_device(p) for p in full], threads=THREADS)
    _check(o.copy_to_host().reshape(want.shape), want, f"{op.name} {dtype} contiguous", failures)
    # strided: input 0 a transposed view at an offset, the last input broadcast along dim 0,
    # the output two elements into its span
    ins = []
    for k, x in enumerate(xs):
        if k == 0:  # a transposed view one element into its storage
            store = np.concatenate([x[:1, 0], np.ascontiguousarray(x.T).ravel()])
            ins.append((target.to_device(store), 1, (1, SHAPE[0])))
        elif k == len(xs) - 1:
            row = x[0]
            ins.append((target.to_device(row), 0, (0, 1)))
        else:
            ins.append((target.to_device(x.ravel()), 0, (SHAPE[1], 1)))
    bxs = list(xs)
    if len(xs) > 1:
        bxs[-1] = np.broadcast_to(xs[-1][0], SHAPE)
    ins += [(target.to_device(np.array([p])), 0, (0, 0)) for p in params]
    want_b = op(*[jtorch.from_numpy(np.ascontiguousarray(x)) for x in bxs], *params).numpy()
    span = target.cuda.device_array(want.size + 2, dtype=want.dtype)
    pointwise.run_strided(op, compute, out, SHAPE, (span, 2, (SHAPE[1], 1)), ins, threads=THREADS)
    _check(span.copy_to_host()[2:].reshape(SHAPE), want_b, f"{op.name} {dtype} strided", failures)


# exact on a device too (rounding, IEEE remainder, sign bits, selects): compared bit for bit
EXACT = {"floor", "ceil", "trunc", "round", "frac", "div_trunc", "fmod", "remainder", "floor_divide",
         "signbit", "nextafter", "hardtanh", "hardsigmoid", "hardswish"}


def _edge_values(dtype: str, binary: bool) -> np.ndarray:
    fi = np.finfo(dtype)
    nan = np.array(np.nan, dtype)
    if binary:
        vals = [nan, -nan, np.inf, -np.inf, 0.0, -0.0, 1.5, -1.5, 2.0, -2.0, 5.3, -5.3,
                fi.smallest_subnormal, fi.max]
    else:  # halfway points (round to even), just below one half, poles of digamma, big values
        vals = [nan, -nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.5,
                np.nextafter(np.array(0.5, dtype), 0), 1.0, -1.0, -2.0, -3.0, 0.3, -7.25, 2.0 ** 22 + 0.5,
                -(2.0 ** 22 + 0.5), 1e30, -1e30, fi.smallest_subnormal, -fi.smallest_subnormal, fi.max,
                -fi.max, 1e-3]
    return np.array(vals, dtype=dtype)


def _mismatch(got, want, exact: bool) -> np.ndarray:
    """Where ``got`` differs from ``want``: in its bits (so -0.0 is not 0.0; any nan matches
    any nan) or, not ``exact``, beyond the tolerance."""
    if got.dtype.kind != "f":
        return got != want
    nan = np.isnan(got) & np.isnan(want)
    if not exact:
        return ~np.isclose(got, want, rtol=RTOL, atol=0, equal_nan=True)
    ints = f"u{got.dtype.itemsize}"
    return ~nan & (got.view(ints) != want.view(ints))


# more parameter values for the edge cases: signed zeros on both bounds (max/min ties)
EDGE_PARAMS = {"hardtanh": [(-0.0, 0.0), (0.0, -0.0)]}


def edge_case(op, dtype: str, failures: list) -> None:
    """``op`` on edge values, contiguous operands (every pair of edge values for two inputs),
    with its default parameters and any in ``EDGE_PARAMS``."""
    for params in [_params(op), *EDGE_PARAMS.get(op.name, [])]:
        _edge_case(op, dtype, params, failures)


def _edge_case(op, dtype: str, params: tuple, failures: list) -> None:
    n = op.scalar.__code__.co_argcount - len(params)
    v = _edge_values(dtype, n > 1)
    xs = [v] if n == 1 else [np.repeat(v, v.size), np.tile(v, v.size)]
    if n > 2:
        xs += [np.full(xs[0].size, 0.5, dtype)] * (n - 2)
    compute, out, ts = _dtypes(op, xs, params)
    with np.errstate(all="ignore"):
        want = op(*ts, *params).numpy()
    o = target.cuda.device_array(want.size, dtype=want.dtype)
    pointwise.run_contiguous(op, compute, out, o, *[target.to_device(x) for x in xs],
                             *[target.to_device(np.full(want.size, p)) for p in params], threads=THREADS)
    got = o.copy_to_host()
    bad = np.flatnonzero(_mismatch(got, want, not DEVICE or op.name in EXACT))[:4]
    if got.dtype != want.dtype or bad.size:
        at = [tuple(float(x[k]) for x in xs) for k in bad]
        failures.append({"case": f"{op.name} {dtype} edges {params}", "at": repr(at),
                         "got": repr(got[bad]), "want": repr(want[bad])})


def substituted(op) -> bool:
    """Whether ``op``'s CUDA scalar function is a rebuilt copy with CUDA twins in it."""
    from jtorch.kernels import codegen

    cpu = registry.scalar_of(op.name, codegen.scalar_variant(op, "float64"))
    return scalars.substitute(cpu) is not cpu


def reduce_case(name: str, dtype: str, failures: list) -> None:
    op = registry.get(name)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4)).astype(dtype)
    x[1, 2, 3] = 3.5  # an exact maximum
    fn = getattr(jtorch, name)
    t = jtorch.from_numpy(x)
    d = target.to_device(np.concatenate([np.zeros(3, dtype), x.ravel()]))
    strides = (12, 4, 1)
    for dims in [(0, 1, 2), (1,), (2,), (0, 1)]:
        want = fn(t, dim=dims).numpy()
        o = target.cuda.device_array(max(1, want.size), dtype=want.dtype)
        reduce.run(op, dtype, want.dtype.name, d, x.shape, strides, 3, dims, o, threads=R_THREADS)
        got = o.copy_to_host()[: want.size].reshape(want.shape)
        tol = 1e-5 if dtype == "float32" else 1e-12
        if not np.allclose(got, want, rtol=tol, atol=tol):
            failures.append({"case": f"{name} {dtype} dims={dims}", "got": repr(got.ravel()[:4]),
                             "want": repr(want.ravel()[:4])})
    # deterministic: two runs agree bitwise
    o1 = target.cuda.device_array(1, dtype=x.dtype)
    o2 = target.cuda.device_array(1, dtype=x.dtype)
    for o in (o1, o2):
        reduce.run(op, dtype, dtype, d, x.shape, strides, 3, (0, 1, 2), o, threads=R_THREADS)
    if o1.copy_to_host()[0] != o2.copy_to_host()[0]:
        failures.append({"case": f"{name} {dtype} repeat", "got": "runs differ", "want": ""})


def main(names: list) -> None:
    failures: list = []
    cases = edges = 0
    ops = [o for o in registry.REGISTRY.values() if o.family in ARITY and o.scalar is not None
           and 2 in o.cats]
    if names:
        ops = [o for o in ops if o.name in names]
    if TWINS:
        ops = [o for o in ops if substituted(o)]
    for op in ops:
        for dtype in ("float32", "float64"):
            cases += 1
            try:
                pointwise_case(op, dtype, failures)
            except Exception as e:  # noqa: BLE001  (reported, not raised: one sweep, all cases)
                failures.append({"case": f"{op.name} {dtype}", "error": f"{type(e).__name__}: {e}"[:300]})
            if not substituted(op):
                continue
            edges += 1
            try:
                edge_case(op, dtype, failures)
            except Exception as e:  # noqa: BLE001
                failures.append({"case": f"{op.name} {dtype} edges",
                                 "error": f"{type(e).__name__}: {e}"[:300]})
    for name in ("sum", "mean", "amax", "amin"):
        for dtype in ("float32", "float64"):
            cases += 1
            try:
                reduce_case(name, dtype, failures)
            except Exception as e:  # noqa: BLE001
                failures.append({"case": f"{name} {dtype}", "error": f"{type(e).__name__}: {e}"[:300]})
    print(json.dumps({"cases": cases, "edge_cases": edges, "ops": [o.name for o in ops],
                      "failures": failures}))


if __name__ == "__main__":
    main([a for a in sys.argv[1:] if not a.startswith("--")])
