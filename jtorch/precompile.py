"""Fill the on-disk kernel cache ahead of time: ``python -m jtorch.precompile``.

Two modes.

``python -m jtorch.precompile [--dtypes ...] [--ops ...] [--parallel]`` runs every pointwise
OpDef of the registry on tiny inputs of the common dtypes through the public dispatch path,
so exactly the loop variants a program uses (contiguous, tensor-scalar, strided/broadcast)
are compiled and cached. A later process then loads each in ~4 ms.

``python -m jtorch.precompile script.py [args...]`` (or ``-m package.module [args...]``, as
``python -m cProfile`` takes them) runs a program once as ``__main__``, its
``jtorch.compile`` functions included, then warms every kernel module it loaded: generated
fused groups (``jt_fused_*``, ``jt_rows_*``), generated eager loops and jtorch's hand-written
kernels alike. A kernel comes as a serial entry point and a parallel (``prange``) twin, and a
run compiles only the one its sizes picked; a later run past ``JTORCH_GRAIN_SIZE`` elements
would compile the other cold (seconds each). So each twin is compiled here for the operand
types its sibling ran with. A small run warms the kernels a big one will use::

    python -m jtorch.precompile train.py --epochs 1
    python train.py --epochs 100   # loads every kernel from the cache

Options given after the script (or module) name are the program's own.
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import runpy
import sys
import time

import numpy as np
from numba.core import types
from numba.core.caching import NullCache
from numba.core.dispatcher import Dispatcher

import jtorch
from jtorch import dispatch
from jtorch.kernels import registry, source

_POINTWISE = ("unary", "binary", "ternary")
_DTYPES = "float32,float64,int64,bool"


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


# -- warming what a program loaded ------------------------------------------------------------
# The serial name of a parallel entry point, by the generators' naming: fused and row groups
# (``parallel``/``serial``; a pipelined row group's ``parallelp`` is the twin of ``serialp``
# and of ``serial``, so that a run over short rows warms it too), eager pointwise loops
# (``p_<pat>``/``c_<pat>``, strided ``ps_<n>``/``s_<n>``), softmax, sorts and scans
# (``<name>_p``/``<name>_s``, ``p``/``s``), and the hand-written kernels
# (``<name>_par``/``<name>``).
_SERIAL_OF = ((r"^parallel$", "serial"), (r"^parallelp$", "serialp|serial"), (r"^ps_", "s_"),
              (r"^p_", "c_"), (r"_p$", "_s"), (r"^p$", "s"), (r"_par$", ""))


def twins(mod) -> list:
    """(serial, parallel) pairs of cached Numba dispatchers defined in module ``mod``."""
    own = {k: v for k, v in vars(mod).items() if isinstance(v, Dispatcher) and
           v.py_func.__module__ == mod.__name__ and not isinstance(v._cache, NullCache)}
    pairs = []
    for name, par in own.items():
        if not par.targetoptions.get("parallel"):
            continue
        for pat, reps in _SERIAL_OF:
            if not re.search(pat, name):
                continue
            found = [ser for rep in reps.split("|") if (ser := own.get(re.sub(pat, rep, name)))
                     is not None and ser is not par and not ser.targetoptions.get("parallel")]
            pairs += [(ser, par) for ser in found]
            if found:
                break
    return pairs


def twin_signature(sig: tuple, ran, other, generated: bool) -> tuple | None:
    """``other``'s argument types for the operands ``ran`` was called with, or None when
    unknown. Twins with one parameter list take the same types. A generated twin also has
    launch bounds of its own (``r_lo``, ``j_hi`` beside ``rows``): its parameters match by
    name, and the rest are Python ints like the size that ends both lists."""
    mine = list(inspect.signature(ran.py_func).parameters)
    theirs = list(inspect.signature(other.py_func).parameters)
    if mine == theirs:
        return tuple(sig)
    if not generated or not sig or not isinstance(sig[-1], types.Integer):
        return None
    have = dict(zip(mine, sig))
    return tuple(have.get(p, sig[-1]) for p in theirs)


def kernel_modules() -> list:
    """(name, module, generated?) of every kernel module this process loaded: the generated
    ones (``kernels.source``) and jtorch's hand-written ``jtorch.kernels.*``."""
    mods = [(name, mod, True) for name, mod in list(source._modules.items())]
    mods += [(name, mod, False) for name, mod in list(sys.modules.items())
             if name.startswith("jtorch.kernels.") and mod is not None]
    return mods


def warm(verbose: bool = False) -> tuple[int, list]:
    """Compile (or load from the cache) the missing twin of every entry point that ran in a
    kernel module this process loaded: (how many, failures as messages)."""
    count, failed = 0, []
    for name, mod, generated in kernel_modules():
        for ser, par in twins(mod):
            for ran, other in ((ser, par), (par, ser)):
                for sig in list(ran.signatures):
                    want = twin_signature(sig, ran, other, generated)
                    if want is None or want in other.overloads:
                        continue
                    label = f"{name}.{other.py_func.__name__}{want}"
                    try:
                        other.compile(want)
                    except Exception as e:  # noqa: BLE001  (one bad twin must not stop the rest)
                        failed.append(f"{label}: {type(e).__name__}: {e}")
                        continue
                    count += 1
                    if verbose:
                        print(f"  {label}", file=sys.stderr)
    return count, failed


def run_program(target: str, args: list, module: bool) -> int:
    """Run a script (or a module) as ``__main__`` with its own ``sys.argv``, as ``python``
    would; its exit status (0 when it returns)."""
    argv, path = sys.argv[:], sys.path[:]
    sys.argv = [target, *args]
    try:
        if module:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
            runpy.run_path(target, run_name="__main__")
    except SystemExit as e:  # the program's sys.exit(): warm what it loaded all the same
        if e.code is None or isinstance(e.code, int):
            return e.code or 0
        print(e.code, file=sys.stderr)  # sys.exit("message"), as python reports it
        return 1
    finally:
        sys.argv, sys.path[:] = argv, path
    return 0


def main(argv=None) -> None:
    p = argparse.ArgumentParser(prog="python -m jtorch.precompile", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dtypes", default=None,
                   help=f"registry sweep: comma-separated dtype names (default: {_DTYPES})")
    p.add_argument("--ops", default=None,
                   help="registry sweep: comma-separated op names (default: all pointwise)")
    p.add_argument("--parallel", action="store_true",
                   help="registry sweep: also compile the parallel variants")
    p.add_argument("-v", "--verbose", action="store_true")
    p.add_argument("-m", dest="module", nargs=argparse.REMAINDER, metavar="MODULE",
                   help="run a library module as a script (what follows is its argv), then "
                        "warm its kernels")
    p.add_argument("script", nargs="?", help="a program to run, then warm its kernels")
    p.add_argument("args", nargs=argparse.REMAINDER, help="the program's arguments")
    a = p.parse_args(argv)
    t = time.perf_counter()
    if a.module is None and a.script is None:
        dtypes = [getattr(jtorch, n) for n in (a.dtypes or _DTYPES).split(",")]
        n = precompile(dtypes, a.ops.split(",") if a.ops else None, a.parallel, a.verbose)
        print(f"jtorch.precompile: {n} op calls compiled or loaded in "
              f"{time.perf_counter() - t:.1f} s; cache: {source.kernel_dir()}")
        return
    if a.module == []:
        p.error("argument -m: expected a module name")
    if a.dtypes or a.ops or a.parallel:
        p.error("--dtypes, --ops and --parallel choose the registry sweep; a program warms "
                "the kernels it runs")
    target, args = (a.module[0], a.module[1:]) if a.module else (a.script, a.args)
    code = run_program(target, args, module=a.module is not None)
    n, failed = warm(a.verbose)
    for msg in failed:  # that twin compiles on first use instead, as without this
        print(f"jtorch.precompile: could not compile {msg}", file=sys.stderr)
    print(f"jtorch.precompile: ran {target}; {n} twin entry points compiled or loaded in "
          f"{time.perf_counter() - t:.1f} s; cache: {source.kernel_dir()}", file=sys.stderr)
    if code:
        sys.exit(code)


if __name__ == "__main__":
    main()
