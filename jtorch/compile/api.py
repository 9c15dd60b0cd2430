"""``jtorch.compile``: the decorator, its cache of guarded graphs, and compiled modules.

A call computes its guard key (``guards.call_key``); a hit replays the cached graph (the whole
function as one compiled callable); a miss traces the call (``tracer.Tracer``), which also
computes this call's results. A trace without graph breaks, whose tensors all come from the
arguments or the function's scope, is cached as one graph. A trace that broke only at calls
with effects outside the graph (``backward()``, ``opt.step()``, ``zero_grad()``, setting
``.grad``: a whole training step) is cached as a ``_Program``, its graphs and those calls in
order. Otherwise the key is marked "traced": later calls trace again, breaking where Python
reads values, and reuse the compiled graphs of pieces seen before (keyed by their structure).
After ``config.recompile_limit`` keys the function runs eagerly with one warning that names the
guard that kept failing.
"""

from __future__ import annotations

import functools
import warnings

from .. import _settings, dispatch
from ..nn.modules.module import Module
from ..tensor import Tensor
from . import aot, backends, logs, tracer
from .config import config
from .errors import RecompileLimitExceeded
from .graph_module import GraphModule
from .guards import Scope, arg_names, call_key, explain_miss, masked_key, tensor_leaves
from .symbolic import ShapeEnv, evaluate
from .tracer import Tracer

_TENSOR = Tensor
_all_functions: list = []  # weakly: every CompiledFunction, for reset()
_state = {"disabled": 0}


class _Entry:
    """A cached graph for one guard key: the compiled callable, where each input comes from
    (an argument leaf index, or a scope tensor object), and how to rebuild the result."""

    __slots__ = ("check", "env", "fn", "gm", "graph", "inputs", "out", "shapes", "signature")

    def __init__(self, fn, inputs: list, out, gm) -> None:
        self.fn, self.inputs, self.out, self.gm = fn, inputs, out, gm


_TRACED = "traced"  # a key whose calls trace every time (graph breaks, escaping tensors)


class CompiledFunction:
    """What ``jtorch.compile(fn)`` returns: call it like ``fn``."""

    def __init__(self, fn, *, fullgraph: bool, dynamic, backend, module: Module | None = None
                 ) -> None:
        self.fn = fn
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.backend_name = backend if isinstance(backend, str) else getattr(
            backend, "__name__", "custom")
        self.backend = backends.lookup(backend)
        self.module = module
        self.entries: dict = {}
        self.pieces: dict = {}  # structural key of a graph piece -> compiled callable
        self.scope = Scope()
        self.scope_ready = False
        self.warned_limit = False
        self.last_key = None
        self.names: list = []
        self.seen_breaks: set = set()
        # automatic dynamic shapes: argument tensor number -> the dims seen with two sizes whose
        # traces agreed; graphs for them are keyed with those sizes masked, plus shape guards
        self.mask: dict = {}
        self.dynamic_entries: dict = {}
        functools.update_wrapper(self, fn, updated=())
        _all_functions.append(self)

    # -- the call -------------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if _state["disabled"] or tracer.active or dispatch.mode is not None:
            # inside a trace: inlined into the caller's graph; under another mode (vmap): run
            # by it, op by op
            return self.fn(*args, **kwargs)
        if not self.scope_ready:
            self._build_scope()
        key = call_key(args, kwargs, self.scope)
        e = self.entries.get(key)
        if e is None and self.mask:  # a graph for every size of the dynamic dims
            e = self._dynamic_entry(args, kwargs)
        if e is None:
            return self._miss(key, args, kwargs)
        if e is _TRACED:
            return self._retrace(args, kwargs, self.dynamic is True)[0]
        if e.__class__ is _Program:
            return e.run(args, kwargs)
        ins = tensor_leaves(kwargs, tensor_leaves(args, [])) if kwargs else \
            tensor_leaves(args, [])
        vals = e.fn(*[ins[i] if i.__class__ is int else i[0] for i in e.inputs])
        return _rebuild(e.out, vals)

    def _build_scope(self) -> None:
        s = Scope()
        if self.module is not None:
            s.add_module("self", self.module)
            s.add_function(type(self.module).forward)
        fn = self.fn
        owner = getattr(fn, "__self__", None)
        if isinstance(owner, Module) and owner is not self.module:
            s.add_module("self", owner)
        s.add_function(getattr(fn, "__func__", fn))
        self.scope, self.scope_ready = s, True

    def _miss(self, key, args, kwargs):
        if self.entries:
            reason = explain_miss(self.last_key, key, self.names) if self.last_key else "new key"
            if len(self.entries) >= config.recompile_limit:
                if config.fail_on_recompile_limit_hit:
                    raise RecompileLimitExceeded(
                        f"{self.__name__}: hit config.recompile_limit ({config.recompile_limit}); "
                        f"last failing guard: {reason}")
                if not self.warned_limit:
                    self.warned_limit = True
                    warnings.warn(
                        f"jtorch.compile: {self.__name__} hit config.recompile_limit "
                        f"({config.recompile_limit}); it now runs eagerly for new inputs. The "
                        f"guard that kept failing: {reason}", UserWarning,
                        stacklevel=backends.user_stacklevel())
                return self.fn(*args, **kwargs)
            logs.log("recompiles", f"Recompiling function {self.__name__}: {reason}")
        self._build_scope()
        key = call_key(args, kwargs, self.scope)
        self.names = arg_names(self.fn, args, kwargs)
        # symbolic sizes from the start (dynamic=True), or once a size has changed (automatic)
        symbolic = self.dynamic is True or (self.dynamic is None and (any(
            isinstance(e, _Entry) and _size_change(k, key, range(len(key[2]) + 64))
            for k, e in self.entries.items()) or any(
            "_dynamo_dynamic_indices" in x.__dict__
            for x in tensor_leaves(kwargs, tensor_leaves(args, [])))))
        res, t = self._retrace(args, kwargs, symbolic)
        self.last_key = key
        if any(s[0] == "call" for s in t.steps) or any(  # calls with effects, or .grad inputs
                id(x) not in t.sources for seg in t.graphs for _, x in seg.inputs):
            self.entries[key] = _program(t, res) or _TRACED
        elif t.breaks or t.unknown or t.escaped or t.retargeted or len(t.graphs) != 1:
            self.entries[key] = _TRACED
        else:
            e = self.entries[key] = self._entry(t, res)
            self._promote(key, e, args, kwargs)
        logs.log("guards", f"guards of {self.__name__}: {len(key[2])} arguments "
                           f"{key[2]!r}, grad_mode={key[0]}, default_dtype={key[1].name}")
        return res

    def _retrace(self, args, kwargs, symbolic: bool = False) -> tuple:
        """Trace this call (with symbolic sizes if asked): (results, tracer)."""
        try:
            res, t, _ = self._trace(args, kwargs, symbolic=symbolic)
        except Exception:
            t = self._tracer
            if t.shape_env is None or t.graphs:
                raise
            # a trace with symbolic sizes failed before any graph ran: trace with plain ones
            res, t, _ = self._trace(args, kwargs, symbolic=False)
        return res, t

    def _trace(self, args, kwargs, symbolic: bool = False):
        sources = {}
        names = {}
        leaves = tensor_leaves(kwargs, tensor_leaves(args, []))
        argn = self.names or arg_names(self.fn, args, kwargs)
        for i, x in enumerate(leaves):
            sources.setdefault(id(x), i)
            names.setdefault(id(x), argn[i] if len(leaves) == len(argn) and i < len(argn)
                             else f"arg{i}")
        for tid, (t, name) in self.scope.tensors.items():
            sources.setdefault(tid, t)
            names.setdefault(tid, name)

        def on_break(reason, where):
            if (reason, where) not in self.seen_breaks:  # traced calls break every time
                self.seen_breaks.add((reason, where))
                logs.log("graph_breaks", f"Graph break in {self.__name__}: {reason}\n  at {where}")

        t = Tracer(sources, names, self.fullgraph, self._run_piece, on_break,
                   ShapeEnv() if symbolic else None, effects=True)
        self._tracer = t
        t.arg_leaves = leaves
        t.arg_shapes = [tuple(int(n) for n in x._a.shape) for x in leaves]
        with t:
            if symbolic:
                for i, x in enumerate(leaves):
                    t.symbolic_input(x, i)
            res = self.fn(*args, **kwargs)
            ret = tensor_leaves(res, [])
            t.flush(tuple(ret))
        return res, t, ret

    def _run_piece(self, seg, inputs: list):
        """Compile (or reuse) one traced graph and run it on the real inputs."""
        g = seg.graph
        sym = {n for _, n, _ in g.symbols}
        k = (backends.graph_key(g), tuple([_ikey(x, node in sym) for (node, _), x in
                                           zip(seg.inputs, inputs)]), dispatch.grad_state.enabled,
             _settings._State.deterministic)
        piece = self.pieces.get(k)
        if piece is None:
            g.eliminate_dead_code()
            g.lint()
            gm = GraphModule(Module(), g)
            logs.log("graph", f"TRACED GRAPH ({self.__name__})\n{g}\n\n{gm.code}")
            piece = self.pieces[k] = (aot.compile_piece(self.backend, gm, list(inputs)), gm)
        seg.fn, seg.gm = piece
        return seg.fn(*inputs)

    def _entry(self, t: Tracer, res) -> _Entry:
        seg = t.graphs[0]
        inputs = []
        for _, x in seg.inputs:
            src = t.sources[id(x)]
            inputs.append(src if src.__class__ is int else (src,))
        e = _Entry(seg.fn, inputs, result_spec(res, t.out_index), getattr(seg, "gm", None))
        env = t.shape_env
        e.graph, e.env, e.shapes = seg.graph, env, t.arg_shapes
        e.signature = (backends.graph_key(seg.graph), tuple(env.guards)) if env else None
        e.check = env.checker() if env else None
        return e

    # -- automatic dynamic shapes ------------------------------------------------------------
    def _promote(self, key, e: _Entry, args, kwargs) -> None:
        """After a trace, look for a cached graph whose key differs from this one only in the
        sizes of some argument tensors: if both traces, made with symbolic sizes, gave the
        same graph and the same shape guards, those dims become dynamic and this graph serves
        every size the guards admit (torch's automatic dynamic shapes)."""
        if self.dynamic is False or e.signature is None:
            return
        sym_leaves = {i for _, i, _ in e.env.symbols}
        for k, old in list(self.entries.items()):
            if old is e or not isinstance(old, _Entry):
                continue
            dims = _size_change(k, key, sym_leaves)
            if not dims or not _agree(e, old):
                continue
            for i, ds in dims.items():
                self.mask.setdefault(i, set()).update(ds)
            mk = masked_key(args, kwargs, self.scope, self.mask)
            self.dynamic_entries.setdefault(mk, []).insert(0, e)
            logs.log("recompiles", f"{self.__name__}: dims {dict(dims)} of its tensor arguments "
                                   "are dynamic now")
            return

    def _dynamic_entry(self, args, kwargs):
        cands = self.dynamic_entries.get(masked_key(args, kwargs, self.scope, self.mask))
        if not cands:
            return None
        shapes = [x._a.shape for x in tensor_leaves(kwargs, tensor_leaves(args, []))]
        for e in cands:
            if e.check(shapes):
                return e
        return None

    # -- reset ----------------------------------------------------------------------------
    def reset(self) -> None:
        self.entries.clear()
        self.pieces.clear()
        self.scope_ready = False
        self.warned_limit = False
        self.last_key = None


class _Program:
    """A cached call whose trace broke only at calls with effects outside the graph
    (``backward``, an optimizer's ``step``, ``zero_grad``): its graphs and those calls in
    order, replayed without running the function's Python again. Values are ``Tracer.spec``s
    over the call's tensor arguments, scope tensors and earlier graphs' outputs."""

    __slots__ = ("result", "steps")

    def __init__(self, steps: list, result) -> None:
        self.steps, self.result = steps, result

    def run(self, args, kwargs):
        leaves = tensor_leaves(kwargs, tensor_leaves(args, [])) if kwargs else \
            tensor_leaves(args, [])
        outs: list = []
        for kind, fn, a, kw in self.steps:
            if kind == "graph":
                ins = [_resolve(x, leaves, outs) for x in a]
                if kw is not None and not _same_geometry(ins, kw):
                    fn = _eager_graph(fn, ins, kw)  # a .grad of another layout than traced
                outs.append(fn(*ins))
            else:
                fn(*_resolve(a, leaves, outs), **_resolve(kw, leaves, outs))
        return _resolve(self.result, leaves, outs)


def _geometry(t: Tensor) -> tuple:
    return (t._a.shape, t._a.strides, t.dtype, t._requires_grad)


def _same_geometry(ins: list, checks: list) -> bool:
    """Whether the ``.grad`` inputs of a graph (``checks``: (input number, geometry, gm))
    have the geometry the graph was compiled for."""
    for i, geo, _ in checks:
        x = ins[i]
        if not isinstance(x, _TENSOR) or _geometry(x) != geo:
            return False
    return True


def _eager_graph(fn, ins: list, checks: list):
    """The graph run op by op (any layout); an error where a ``.grad`` the traced call read
    is missing now (the function's Python would have taken another path)."""
    for i, _, _ in checks:
        if ins[i] is None:
            raise RuntimeError("jtorch.compile: a cached call read a .grad that is None now (set "
                               "to None outside the compiled function?); call "
                               "jtorch.compiler.reset() to trace it again")
    return checks[0][2]


def _resolve(spec, leaves: list, outs: list):
    kind = spec[0]
    if kind == "arg":
        return leaves[spec[1]]
    if kind == "out":
        return outs[spec[1]][spec[2]]
    if kind == "scope" or kind == "const":
        return spec[1]
    if kind == "grad":
        return _resolve(spec[1], leaves, outs)._grad
    if kind == "seq":
        parts = [_resolve(x, leaves, outs) for x in spec[2]]
        return parts if spec[1] is list else tuple(parts) if spec[1] is tuple else \
            spec[1](parts)
    return dict(zip(spec[1], [_resolve(x, leaves, outs) for x in spec[2]]))


def _program(t: Tracer, res) -> _Program | None:
    """The replayable program of trace ``t``, or None where a replay could differ from
    running the function: a value read, tensors of unknown origin, results or graph outputs
    kept elsewhere (escaped), an input's geometry changed, symbolic sizes."""
    if t.unreplayable or t.unknown or t.retargeted or t.shape_env is not None:
        return None
    result = t.spec(res)
    if result is None:
        return None
    returned = {id(x) for x in tensor_leaves(res, [])}
    if any(w() is not None and i not in returned for i, (_, _, w) in t.produced.items()):
        return None  # a graph's output outlives the call elsewhere (a global, an attribute)
    steps = []
    renum: dict = {}  # graph number -> its number in the program, or {output: input spec}
    for step in t.steps:
        if step[0] == "call":
            steps.append(step)
            continue
        seg = step[1]
        ins = seg.specs
        if None in ins:
            return None
        gi = len(renum)
        if any(n.op == "call_function" for n in seg.graph.nodes):
            renum[gi] = sum(1 for s in steps if s[0] == "graph")
            # a ``.grad`` input is checked at each replay: its layout may change
            checks = [(i, _geometry(x), seg.gm) for i, ((_, x), sp) in
                      enumerate(zip(seg.inputs, ins)) if sp[0] == "grad"] or None
            steps.append(("graph", seg.fn, ins, checks))
        else:  # no ops (the results handed back at the end): its outputs are its inputs
            place = {node: i for i, (node, _) in enumerate(seg.inputs)}
            out = next(n for n in seg.graph.nodes if n.op == "output")
            renum[gi] = {k: ins[place[a]] for k, a in enumerate(out.args[0])}
    return _Program([_renumber(s, renum) for s in steps], _renumber_spec(result, renum))


def _renumber(step, renum: dict):
    kind, fn, a, kw = step
    if kind == "graph":
        return (kind, fn, [_renumber_spec(x, renum) for x in a], kw)
    return (kind, fn, _renumber_spec(a, renum), _renumber_spec(kw, renum))


def _renumber_spec(spec, renum: dict):
    kind = spec[0]
    if kind == "out":
        r = renum[spec[1]]
        return r[spec[2]] if r.__class__ is dict else ("out", r, spec[2])
    if kind == "seq":
        return ("seq", spec[1], [_renumber_spec(x, renum) for x in spec[2]])
    if kind == "dict":
        return ("dict", spec[1], [_renumber_spec(x, renum) for x in spec[2]])
    if kind == "grad":
        return ("grad", _renumber_spec(spec[1], renum))
    return spec


def _ikey(x: Tensor, dynamic: bool = False) -> tuple:
    a = x._a
    if dynamic:  # its sizes are symbols: any size, dense row-major
        return (a.__class__, a.ndim, a.flags.c_contiguous, x.dtype, x._requires_grad)
    return (a.__class__, a.shape, a.strides, x.dtype, x._requires_grad)


def _agree(new: _Entry, old: _Entry) -> bool:
    """Whether a graph traced with symbolic sizes is the graph ``old`` was traced to at its
    sizes: the same graph and guards (both symbolic), or, evaluated at old's sizes, the
    same ops and parameters with guards that hold there (old static)."""
    if old.signature is not None:
        return old.signature == new.signature
    if not new.check(old.shapes):
        return False
    at = functools.partial(evaluate, env=new.env, shapes=old.shapes)
    return backends.graph_key(new.graph, at) == backends.graph_key(old.graph)[:-1]  # no symbols


def _size_change(old_key: tuple, new_key: tuple, sym_leaves: set) -> dict:
    """{argument tensor number: dims whose size differs} when the two keys differ only in the
    sizes of symbolic tensors' dims (same everything else), else {}."""
    if old_key[0] != new_key[0] or old_key[1] is not new_key[1] or old_key[3:] != new_key[3:]:
        return {}
    ol, nl = [], []
    if _tensor_keys(old_key[2], ol) != _tensor_keys(new_key[2], nl) or len(ol) != len(nl):
        return {}
    dims: dict = {}
    for i, (o, n) in enumerate(zip(ol, nl)):
        if o == n:
            continue
        if i not in sym_leaves or (o[0], len(o[1]), o[3], o[4]) != (n[0], len(n[1]), n[3], n[4]):
            return {}
        dims[i] = {d for d, (a, b) in enumerate(zip(o[1], n[1])) if a != b}
    return dims


def _tensor_keys(k, out: list):
    """The key with every tensor's key taken out into ``out`` (the structure stays)."""
    if isinstance(k, tuple) and len(k) == 5 and isinstance(k[0], type) and isinstance(k[1], tuple):
        out.append(k)
        return "T"
    if isinstance(k, tuple):
        return tuple(_tensor_keys(x, out) for x in k)
    return k


def _rebuild(spec, vals):
    kind = spec[0]
    if kind == 0:
        return vals[spec[1]]
    if kind == 1:
        return spec[1]
    parts = [_rebuild(s, vals) for s in spec[2]]
    return spec[1](parts) if spec[1] is not tuple else tuple(parts)


def result_spec(res, out_index: dict):
    """How to rebuild ``res`` from a graph's outputs: (0, k) a tensor output, (1, v) a constant,
    (2, type, parts) a list/tuple."""
    if isinstance(res, _TENSOR):
        return (0, out_index[id(res)])
    if type(res) in (tuple, list):
        return (2, type(res), [result_spec(x, out_index) for x in res])
    if type(res) is dict:
        keys = list(res)
        return (2, lambda parts, keys=keys: dict(zip(keys, parts)),
                [result_spec(res[k], out_index) for k in keys])
    return (1, res)


class OptimizedModule(Module):
    """A compiled module: shares parameters, buffers, hooks and state with ``_orig_mod``."""

    def __init__(self, mod: Module, compiled: CompiledFunction) -> None:
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_compiled", compiled)

    def __getattr__(self, name: str):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        return getattr(self._modules["_orig_mod"], name)

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def __repr__(self) -> str:
        return f"OptimizedModule(\n  (_orig_mod): {self._orig_mod!r}\n)".replace(
            "\n  (_orig_mod): ", "\n  (_orig_mod): ", 1)


def compile(model=None, *, fullgraph: bool = False, dynamic=None, backend="numba", mode=None,
            options=None, disable: bool = False):
    """Compile a function or module (torch.compile's signature): trace it into a graph, guard
    it, run it through ``backend``.

    >>> @jtorch.compile
    ... def f(x):
    ...     return jtorch.sin(x) + jtorch.cos(x)
    >>> f(jtorch.zeros(2))
    tensor([1., 1.])
    """
    if model is None:
        def decorate(m):
            return compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                           options=options, disable=disable)
        return decorate
    if not callable(model):
        raise RuntimeError("compile() expects a callable or an nn.Module")  # noqa: TRY004  (torch's type)
    if mode is not None and options is not None:
        raise RuntimeError("Either mode or options can be specified, but both can't be specified "
                           "at the same time.")
    backends.note_unused(mode, options, backend)
    if disable:
        return model
    if isinstance(model, Module):
        cf = CompiledFunction(model._call_impl, fullgraph=fullgraph, dynamic=dynamic,
                              backend=backend, module=model)
        return OptimizedModule(model, cf)
    return CompiledFunction(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend)


def compile_options(fullgraph: bool = False, dynamic=None, backend="numba", mode=None,
                    options=None, disable: bool = False) -> dict:
    """``Module.compile``'s arguments (torch.compile's, less the model) as CompiledFunction's."""
    backends.note_unused(mode, options, backend)
    return {"fullgraph": fullgraph, "dynamic": dynamic, "backend": backend}


def reset() -> None:
    """Forget every compiled graph (jtorch.compiler.reset)."""
    for f in _all_functions:
        f.reset()
    backends.reset()


def is_compiling() -> bool:
    """True while jtorch.compile traces a function (not inside a disabled function it calls)."""
    return bool(tracer.active) and dispatch.mode is tracer.active[-1]


class disable:
    """``@jtorch.compiler.disable``: the function runs eagerly, also when a compiled function
    calls it (a graph break around the call). As a context manager: compiled functions called
    inside run eagerly."""

    def __init__(self, fn=None, recursive: bool = True, *, reason: str | None = None) -> None:
        self.fn = fn
        self.reason = reason
        if fn is not None:
            functools.update_wrapper(self, fn)

    def __call__(self, *args, **kwargs):
        if self.fn is None:  # @disable() with parentheses
            return disable(args[0], reason=self.reason)
        if tracer.active:
            t = tracer.active[-1]
            # run eagerly, and again by each replay of the cached call
            return t.effect(f"call to jtorch.compiler.disable'd function "
                            f"{getattr(self.fn, '__qualname__', self.fn)}", self, args, kwargs,
                            run=self._run_disabled)
        return self._run_disabled(*args, **kwargs)

    def _run_disabled(self, *args, **kwargs):
        _state["disabled"] += 1
        try:
            return self.fn(*args, **kwargs)
        finally:
            _state["disabled"] -= 1

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self.__call__, obj)

    def __enter__(self):
        _state["disabled"] += 1
        return self

    def __exit__(self, *exc) -> None:
        _state["disabled"] -= 1

