"""Backends: what turns a traced ``GraphModule`` into the callable that runs it.

torch's contract: ``backend(gm, example_inputs) -> callable``. "eager" runs the graph's
generated Python (each node an eager op call); "numba" is the fusing backend, which runs as
"eager" until the fusion backend lands; a callable is a user's backend.
"""

from __future__ import annotations

import math
import os
import sys
import warnings

import numpy as np

from .. import _settings
from ..kernels.registry import OpDef
from .graph import Graph, Node
from .symbolic import SymInt, names_in


def eager(gm, example_inputs):
    """Run the graph's generated Python: every node an eager op call through dispatch."""
    return gm.forward


def numba(gm, example_inputs):
    """Pointwise chains fused into generated Numba kernels (``fusion.py``); the rest eager."""
    from .fusion import numba_backend  # fusion builds on the graph modules this module serves

    return numba_backend(gm, example_inputs)


def aot_eager(gm, example_inputs):
    """As "eager", with gradients by the compiled backward's joint graph (``aot.py``): the
    forward and backward graphs run as generated Python."""
    return gm.forward


# backends whose graphs needing gradients are split into compiled forward and backward graphs
numba.joint = aot_eager.joint = True

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_BACKENDS = {"eager": eager, "numba": numba, "aot_eager": aot_eager}
_ALIASES = {"inductor": "numba"}
_warned: set = set()


def lookup(backend):
    if callable(backend):
        return backend
    if not isinstance(backend, str):
        raise TypeError(f"backend must be a string or a callable, not {type(backend).__name__}")
    name = _ALIASES.get(backend, backend)
    if name not in _BACKENDS:
        raise ValueError(f"unknown backend {backend!r}: jtorch.compile knows "
                         f"{sorted(_BACKENDS)} or a callable backend(gm, example_inputs)")
    if name != backend:
        _warn_once(f"backend {backend!r} runs as jtorch's {name!r} backend")
    return _BACKENDS[name]


def list_backends() -> list:
    return sorted(_BACKENDS)


_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def note_unused(mode, options, backend) -> None:
    """Modes and options that do not apply here are accepted with one warning, as torch does."""
    if mode is not None:
        if mode not in _MODES:
            raise RuntimeError(f"Unrecognized mode={mode}, should be one of: {', '.join(_MODES)}")
        if mode != "default":
            _warn_once(f"jtorch.compile: mode={mode!r} has no effect on this backend")
    if options:
        if not isinstance(options, dict):
            raise RuntimeError(f"options must be a dict, not {type(options).__name__}")
        _warn_once("jtorch.compile: options " + ", ".join(sorted(map(str, options)))
                   + " have no effect on this backend")


def _warn_once(msg: str) -> None:
    if msg not in _warned or _settings.is_warn_always_enabled():
        _warned.add(msg)
        warnings.warn(msg, UserWarning, stacklevel=user_stacklevel())


def user_stacklevel() -> int:
    """The ``stacklevel`` that points a warning at the user's line (the first frame outside
    jtorch), whatever the path through the decorator forms."""
    f, level = sys._getframe(2), 2
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        f, level = f.f_back, level + 1
    return level


def reset() -> None:
    _warned.clear()


def graph_key(graph: Graph, at=None) -> tuple:
    """A hashable key of a graph's structure: equal keys compile to the same code. ``at``:
    a function giving each symbolic size's value (the key the graph has at those sizes)."""
    index: dict = {}
    out = []
    defined = {s for s, n, _ in graph.symbols if not n._erased} if at is None else at
    for i, n in enumerate(graph.nodes):
        index[n] = i
        out.append((n.op, _target_key(n.target), _arg_key(n.args, index, defined),
                    _arg_key(n.kwargs, index, defined), n.meta.get("grad_enabled")))
    if at is None:
        out.append(tuple((s, index[n], d) for s, n, d in graph.symbols if not n._erased))
    return tuple(out)


def _target_key(t):
    if isinstance(t, OpDef):
        return ("op", t.name, id(t))
    return t


def _arg_key(a, index: dict, defined: set):
    if isinstance(a, SymInt):
        if callable(defined):
            return ("int", defined(a.expr))
        return ("sym", a.expr) if names_in(a.expr) <= defined else ("int", int.__int__(a))
    if isinstance(a, Node):
        return ("n", index[a])
    if isinstance(a, (tuple, list)):
        return (type(a).__name__, tuple(_arg_key(x, index, defined) for x in a))
    if isinstance(a, dict):
        return ("d", tuple((k, _arg_key(v, index, defined)) for k, v in a.items()))
    if isinstance(a, slice):
        return ("s", _arg_key(a.start, index, defined), _arg_key(a.stop, index, defined),
                _arg_key(a.step, index, defined))
    if isinstance(a, float) and math.isnan(a):
        return ("nan",)
    if isinstance(a, np.ndarray):
        return ("a", a.shape, a.dtype.str, a.tobytes()) if a.nbytes <= 4096 else ("id", id(a))
    try:
        hash(a)
    except TypeError:
        return ("id", id(a))
    return (type(a).__name__, a)
