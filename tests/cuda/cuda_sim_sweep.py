"""CUDA kernels in Numba's simulator against jtorch's CPU eager results (run as a script by
``test_cuda_sim.py``: the simulator must be chosen before ``numba.cuda`` is first imported).
``--device`` runs them on a real GPU instead, at full block sizes and a tolerance for the
device's fused multiply-adds.

Usage: ``python tests/cuda/cuda_sim_sweep.py [--device] [op names...]`` (no names: every
pointwise op). Prints one JSON object: the cases run and the failures, each with its op,
dtype and error."""

import json
import os
import sys

DEVICE = "--device" in sys.argv
if not DEVICE:
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

import numpy as np  # noqa: E402

import jtorch  # noqa: E402
from jtorch.kernels import registry  # noqa: E402
from jtorch.kernels.cuda import pointwise, reduce, target  # noqa: E402

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
    cases = 0
    ops = [o for o in registry.REGISTRY.values() if o.family in ARITY and o.scalar is not None
           and 2 in o.cats]
    if names:
        ops = [o for o in ops if o.name in names]
    for op in ops:
        for dtype in ("float32", "float64"):
            cases += 1
            try:
                pointwise_case(op, dtype, failures)
            except Exception as e:  # noqa: BLE001  (reported, not raised: one sweep, all cases)
                failures.append({"case": f"{op.name} {dtype}", "error": f"{type(e).__name__}: {e}"[:300]})
    for name in ("sum", "mean", "amax", "amin"):
        for dtype in ("float32", "float64"):
            cases += 1
            try:
                reduce_case(name, dtype, failures)
            except Exception as e:  # noqa: BLE001
                failures.append({"case": f"{name} {dtype}", "error": f"{type(e).__name__}: {e}"[:300]})
    print(json.dumps({"cases": cases, "failures": failures}))


if __name__ == "__main__":
    main([a for a in sys.argv[1:] if a != "--device"])
