"""Fill the on-disk kernel cache ahead of time: ``python -m jtorch.precompile``.

Runs every pointwise OpDef of the registry on tiny inputs of the common dtypes through the
public dispatch path, so exactly the loop variants a program uses (contiguous, tensor-scalar,
strided/broadcast) are compiled and cached. A later process then loads each in ~4 ms.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import jtorch
from jtorch import dispatch
from jtorch.kernels import registry

_POINTWISE = ("unary", "binary", "ternary")


def _inputs(dtype: jtorch.dtype, big: bool):
    """A contiguous vector, a non-contiguous matrix, and a row that broadcasts against it."""
    n = 40000 if big else 6
    x = jtorch.ones(n, dtype=dtype)
    m = jtorch.from_numpy(np.ones((3, 2) if not big else (300, 200), dtype.np).T)
    row = jtorch.ones(m.shape[1], dtype=dtype)
    return x, m, row


def precompile(dtypes, ops=None, parallel: bool = False, verbose: bool = False) -> int:
    """Compile (or load) the kernels of ``ops`` for ``dtypes``; returns how many ran."""
    count = 0
    names = ops or [n for n, op in registry.REGISTRY.items() if op.family in _POINTWISE]
    for name in names:
        op = registry.REGISTRY[name]
        # The family counts the tensor operands; ``where``'s condition is its parameter.
        tensors = {"unary": 1, "binary": 2, "ternary": 3}[op.family] - (name == "where")
        for d in dtypes:
            for big in (False, True) if parallel else (False,):
                x, m, row = _inputs(d, big)
                params = [0.5] * op.nparams
                if name == "where":
                    params = [jtorch.ones(x.shape, dtype=jtorch.bool)]
                calls = [(x,) * tensors + tuple(params)]  # contiguous
                if name != "where":
                    calls.append((m,) + (row,) * (tensors - 1) + tuple(params))  # strided
                if tensors >= 2:
                    calls.append((x,) + (1,) * (tensors - 1) + tuple(params))  # tensor-scalar
                for args in calls:
                    try:
                        dispatch.pointwise(op, args)
                        count += 1
                    except (RuntimeError, NotImplementedError, TypeError):
                        pass  # the op does not support this dtype: nothing to compile
                if verbose:
                    print(f"  {name} {d}", file=sys.stderr)
    return count


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m jtorch.precompile", description=__doc__)
    p.add_argument("--dtypes", default="float32,float64,int64,bool",
                   help="comma-separated dtype names (default: %(default)s)")
    p.add_argument("--ops", default=None, help="comma-separated op names (default: all pointwise)")
    p.add_argument("--parallel", action="store_true", help="also compile the parallel variants")
    p.add_argument("-v", "--verbose", action="store_true")
    a = p.parse_args(argv)
    dtypes = [getattr(jtorch, n) for n in a.dtypes.split(",")]
    t = time.perf_counter()
    n = precompile(dtypes, a.ops.split(",") if a.ops else None, a.parallel, a.verbose)
    print(f"jtorch.precompile: {n} op calls compiled or loaded in {time.perf_counter() - t:.1f} s; "
          f"cache: {jtorch.kernels.source.kernel_dir()}")


if __name__ == "__main__":
    main()
