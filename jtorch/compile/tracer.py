"""The tracer: run a user's function once, recording every op into a ``Graph``.

It is a ``dispatch.mode``: each op's meta rule has already checked the call and described its
results, so the tracer records a node and returns stand-in tensors ("fakes": meta arrays that
report the device of the value they stand for) without running a kernel. Real tensors met as
operands (the call's inputs, module parameters, captured tensors) become placeholders. A real
tensor an op writes to becomes a fake until the graph runs, so no code reads a stale value.

When Python needs a value (``bool(t)``, ``t.item()``, printing, a data-dependent op, a
``backward()``) the tracer **breaks the graph**: it runs the graph recorded so far, turns every
live fake into the real tensor it stood for (in place: Python's references stay valid), and
goes on tracing into a new graph. Results therefore always equal eager execution's. With
``fullgraph=True`` a break raises ``Unsupported`` naming the reason and the user's line.

Calls whose effects live outside tensors (``backward()``, an optimizer's ``step`` and
``zero_grad``, setting a tensor's ``.grad``) reach ``effect``: they run eagerly and are
recorded, with the graphs, as the steps of a program (``steps``) that a cached call replays
without running the function's Python again, unless something in the trace makes a replay
unsafe (``unreplayable``: Python read a value, such a call returned one).
"""

from __future__ import annotations

import contextlib
import operator
import os
import sys
import weakref

from .. import dispatch
from .. import meta as _meta
from ..autograd.node import Node as _GradNode
from ..device import META
from ..kernels.plan import common_device
from ..meta import MetaArray
from ..tensor import Tensor
from . import symbolic
from .errors import Unsupported
from .graph import Graph

_TENSOR = Tensor
_META = MetaArray
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

active: list = []  # the tracers running now, innermost last


def mark_dynamic(t: Tensor, index, **kwargs) -> None:
    """torch._dynamo.mark_dynamic: trace ``t``'s dims ``index`` with symbolic sizes from the
    first call (a second size still confirms the graph before it serves other sizes)."""
    dims = t.__dict__.setdefault("_dynamo_dynamic_indices", set())
    dims.update(index if isinstance(index, (list, tuple)) else (index,))


def mark_static(t: Tensor, index=None) -> None:
    """torch._dynamo.mark_static: ``t``'s sizes are never made dynamic."""
    t.__dict__["_dynamo_static"] = True
    t.__dict__.pop("_dynamo_dynamic_indices", None)


def user_frame() -> str:
    """``file:line`` of the innermost frame outside jtorch (the user's code)."""
    f = sys._getframe(1)
    while f is not None:
        fn = f.f_code.co_filename
        if not os.path.abspath(fn).startswith(_PKG + os.sep):
            return f"{fn}:{f.f_lineno}"
        f = f.f_back
    return "<unknown>"


def meta_val(t: Tensor) -> Tensor:
    """A standalone meta tensor with ``t``'s geometry, device and requires_grad (node.meta["val"])."""
    a = t._a
    dev = (a.fake or META) if a.__class__ is _META else t.device
    v = Tensor._make(MetaArray(a.shape, a.dtype, a.strides, t.storage_offset(),
                               None if dev is META else dev),
                     None, t.dtype)
    v._requires_grad = t._requires_grad
    return v


def fake_of(t: Tensor) -> Tensor:
    """A fake with ``t``'s geometry that reports ``t``'s device."""
    v = meta_val(t)
    v._a.fake = t.device if t.device is not META else None
    return v


class TracedBackward(_GradNode):
    """The ``grad_fn`` of a traced value that requires grad, until its graph runs and the real
    tensor's node replaces it: such a value is no leaf (in-place ops on it are allowed, as
    in eager), and no saved value keeps a fake alive."""

    __slots__ = ()
    placeholder = True

    def apply(self, grads: list) -> list:
        raise RuntimeError("jtorch.compile: backward through a traced value before its graph ran")


_TRACED_NODE = TracedBackward()


class Segment:
    """One graph of a traced call: the nodes between two breaks."""

    def __init__(self, grad_entry: bool) -> None:
        self.graph = Graph()
        self.env: dict = {}  # id(array) -> [node, array, twin]: a tensor's current node
        self.inputs: list = []  # (placeholder node, real tensor) in graph order
        self.symbols: list = []  # (symbol name, placeholder node, dim): dynamic sizes
        self.fakes: list = []  # weakrefs to the fakes this graph produced
        self.grad_entry = grad_entry


class Tracer:
    """The mode of one traced call (see the module docstring)."""

    def __init__(self, sources: dict, names: dict, fullgraph: bool, run_graph,
                 on_break=None, shape_env=None, autograd: bool = False,
                 effects: bool = False) -> None:
        self.sources = sources  # id(tensor) -> where the tensor comes from (for replay)
        self.names = names  # id(tensor) -> placeholder name
        self.fullgraph = fullgraph
        self.run_graph = run_graph  # (graph, real inputs) -> real outputs
        self.on_break = on_break
        self.breaks: list = []  # (reason, user line)
        self.graphs: list = []  # finished graphs, in order
        self.unknown: list = []  # descriptions of tensors with no known origin
        self.proxied: dict = {}  # id(real tensor) -> (tensor, real array, real storage)
        self.retargeted = False
        self.seg = Segment(dispatch.grad_state.enabled)
        self.shape_env = shape_env  # symbolic sizes (symbolic.py), or None: static
        self.arg_shapes: list = []  # the argument tensors' sizes
        # record autograd nodes on the fakes (the joint trace of ``aot.py``): else a value
        # that requires grad gets the placeholder node ``TracedBackward``
        self.autograd = autograd
        # the call as a replayable program: ("graph", segment) and ("call", fn, args, kwargs)
        # steps, values as ``spec``s; ``unreplayable`` says why it cannot be (value reads)
        self.effects = effects  # record calls with effects (a user's call; not sub-traces)
        self.steps: list = []
        self.unreplayable: list = []
        self.produced: dict = {}  # id(real tensor) -> (graph number, output number, weakref)
        self.arg_leaves: list = []  # the call's tensor arguments (their ``.grad`` are known)
        self.passthrough = False  # inside ``eagerly``: ops run on real tensors, unrecorded

    # -- installing -----------------------------------------------------------------------
    def __enter__(self):
        self._prev = (dispatch.mode, _meta.read_hook, _meta.detach_hook, _meta.effect_hook,
                      _meta.eager_hook)
        dispatch.mode = self
        _meta.read_hook = self.read
        _meta.effect_hook = self.effect if self.effects else None
        _meta.eager_hook = self.eagerly
        # the joint trace's autograd saves results detached: no node for those
        _meta.detach_hook = None if self.autograd else self.detach
        active.append(self)
        if self.shape_env is not None:
            symbolic.current.append(self.shape_env)
        return self

    def __exit__(self, *exc) -> None:
        dispatch.mode, _meta.read_hook, _meta.detach_hook, _meta.effect_hook, \
            _meta.eager_hook = self._prev
        active.remove(self)
        if self.shape_env is not None:
            symbolic.current.remove(self.shape_env)
        self._restore_proxied()

    @contextlib.contextmanager
    def eagerly(self):
        """Run a block on real tensors, unrecorded: the graph so far runs first (its values
        become real), then every op, read and effect inside runs eagerly, also where a vmap
        level over this tracer passes its physical ops on to it. Breaks the graph (values are
        computed outside it: a cached call runs the function's Python again)."""
        if self.passthrough:
            yield
            return
        self.graph_break("an eager stretch (a double backward inside the function)")
        self.passthrough = True
        try:
            yield
        finally:
            self.passthrough = False

    def detach(self, t: Tensor) -> Tensor:
        """``t.detach()`` traced: a view of ``t`` recorded without grad (the same storage, no
        gradient), distinct from ``t`` in the graph."""
        if self.passthrough:
            with self._suspend():
                return t.detach()
        gs = dispatch.grad_state
        g0 = gs.enabled
        gs.enabled = False
        try:
            r = t.view(tuple(t._a.shape))
        finally:
            gs.enabled = g0
        # no autograd view of t (in-place ops on it are allowed, as on eager's detach()); the
        # graph still knows the alias (its node's ``view_of``)
        r._base = None
        return r

    def _suspend(self):
        return _Suspended(self)

    def _meta_only(self):
        return _Suspended(self, grad=False)

    # -- operands -------------------------------------------------------------------------
    def node_of(self, t: Tensor):
        """The node holding ``t``'s current value (a placeholder the first time a real tensor
        is met)."""
        a = t._a
        e = self.seg.env.get(id(a))
        if e is not None:
            return e[0]
        if a.__class__ is _META and a.fake is not None:
            raise RuntimeError("jtorch.compile: a traced tensor was used after its graph ended "
                               "(it escaped a previous trace)")
        name = self.names.get(id(t)) or ("input" if id(t) in self.sources else "captured")
        if id(t) not in self.sources and self._produced(t) is None and \
                self._grad_of(t) is None:
            what = f"{t.dtype.name}{list(a.shape)} first used at {user_frame()}"
            if self.fullgraph:
                raise Unsupported("jtorch.compile: a tensor of unknown origin (neither an "
                                  "argument nor a parameter, buffer, global or closure variable "
                                  f"of the compiled function): {what}")
            self.unknown.append(what)
        node = self.seg.graph.placeholder(name)
        node.meta["val"] = meta_val(t)
        self.seg.env[id(a)] = [node, a, None]
        self.seg.inputs.append((node, t))
        return node

    def twin(self, t: Tensor) -> Tensor:
        """``t`` as the fake an op's result is computed from (fakes are their own twins)."""
        a = t._a
        if a.__class__ is _META:
            return t
        self.node_of(t)
        e = self.seg.env[id(a)]
        if e[2] is None:
            e[2] = fake_of(t)
        return e[2]

    def proxy(self, t: Tensor) -> None:
        """A real tensor an op writes: it stands for its new value (a fake) until the graph
        runs, and is restored then."""
        a = t._a
        if a.__class__ is _META:
            return
        tw = self.twin(t)
        self.proxied[id(t)] = (t, a, t._st)
        t._a, t._st = tw._a, tw._st

    def symbolic_input(self, t: Tensor, leaf: int) -> bool:
        """Trace argument ``t`` (argument tensor number ``leaf``) with symbolic sizes: Python
        sees a stand-in whose sizes are ``SymInt``s until the graph runs. Only dense row-major
        tensors (their strides follow from their sizes)."""
        a = t._a
        if a.__class__ is _META or not a.ndim or not a.flags.c_contiguous or id(t) in self.proxied \
                or t.storage_offset() or t.__dict__.get("_dynamo_static"):
            return False
        node = self.node_of(t)
        shape = []
        for d, n in enumerate(a.shape):
            sym = self.shape_env.symbol(n, leaf, d)
            self.seg.symbols.append((sym.expr, node, d))
            shape.append(sym)
        fa = MetaArray(tuple(shape), a.dtype, None, 0, t.device)
        self.proxied[id(t)] = (t, a, t._st)
        t._a, t._st = fa, _meta.storage_for(fa)
        self.seg.env[id(fa)] = [node, fa, None]
        node.meta["val"] = meta_val(t)
        return True

    def inplace_view(self, t: Tensor, r: Tensor) -> Tensor:
        """``t.t_()``, ``t.unsqueeze_(0)``: ``t`` takes the geometry of view ``r`` of it; a real
        ``t`` is restored before the graph runs, then becomes the view's value."""
        if t._a.__class__ is not _META:
            self.proxied[id(t)] = (t, t._a, t._st)
        if id(t) in self.proxied:
            self.retargeted = True  # an input's geometry changes: no replay of a whole graph
        t._a, t._st = r._a, r._st
        self.seg.fakes.append(weakref.ref(t))
        return t

    def _lift(self, v):
        if isinstance(v, _TENSOR):
            return self.node_of(v)
        if isinstance(v, (tuple, list)):
            r = [self._lift(x) for x in v]
            return tuple(r) if isinstance(v, tuple) else r
        if isinstance(v, dict):
            return {k: self._lift(x) for k, x in v.items()}
        return v

    def _twins(self, v):
        if isinstance(v, _TENSOR):
            return self.twin(v)
        if isinstance(v, (tuple, list)):
            r = [self._twins(x) for x in v]
            return tuple(r) if isinstance(v, tuple) else r
        return v

    # -- the mode hook --------------------------------------------------------------------
    def __call__(self, op, args: tuple, plan, params: dict):
        if self.passthrough:
            with self._suspend():
                return op(*args, **params)
        if plan is not None and (plan.out is None or op.data_dependent):
            return self._run_eagerly(op, args, params, f"data-dependent operator {op.name}")
        seg = self.seg
        node_args = self._lift(args)
        mutates = False
        mutated = []
        if plan is None:  # pointwise: only the non-default params are spelled out
            out, inplace = params.get("out"), params.get("inplace", False)
            node_kwargs = {}
            if out is not None:
                node_kwargs["out"] = self._lift(out)
            if inplace:
                node_kwargs["inplace"] = True
            if out is not None and args and out is args[0]:
                inplace = True
            target = args[0] if inplace else out
            if target is not None:
                mutated = [node_args[0] if inplace else node_kwargs["out"]]
                self.proxy(target)
                mutates = True
            fargs = tuple(self._twins(x) for x in args)
            result = dispatch._plan(op, args)[2]
            if inplace:
                dispatch.check_inplace(args[0])
            with self._meta_only():
                if target is not None and op.name == "copy" and not inplace:
                    res = _copy_meta(fargs[0], target)
                else:
                    res = dispatch._pointwise_meta(op, fargs, None if inplace else target, inplace,
                                                   result)
            dev = common_device(*args)
        else:
            node_kwargs = self._lift(params)
            out = plan.out
            for o in (out if isinstance(out, tuple) else (out,)):
                if o.__class__ is dispatch.Inplace:
                    mutated.append(node_args[o.src])
                    self.proxy(args[o.src])
                    mutates = True
            fargs = tuple(self._twins(x) for x in args)
            with self._meta_only():
                res = dispatch.meta_result(out, fargs, op)
            # the operands' device (a memoised plan may have been made for a meta tensor)
            dev = common_device(*args) if any(isinstance(x, _TENSOR) for x in args) \
                else plan.device
        node = seg.graph.call_function(op, node_args, node_kwargs)
        if mutates:  # the node writes these inputs (its results are those tensors)
            node.meta["mutates"] = True
            node.meta["mutated"] = mutated
        if dispatch.grad_state.enabled != seg.grad_entry:
            node.meta["grad_enabled"] = dispatch.grad_state.enabled
        grad = op.differentiable and dispatch.needs_grad(args)
        if isinstance(res, tuple):
            vals = []
            outs = plan.out if plan is not None and isinstance(plan.out, tuple) else ()
            for i, r in enumerate(res):
                g = seg.graph.call_function(operator.getitem, (node, i))
                self._bind(r, g, dev, grad)
                g.meta["val"] = meta_val(r)
                if i < len(outs) and outs[i].__class__ is dispatch.View:
                    g.meta["view_of"] = node_args[outs[i].src]  # the getitem aliases it
                vals.append(g.meta["val"])
            node.meta["val"] = tuple(vals)
        else:
            self._bind(res, node, dev, grad)
            node.meta["val"] = meta_val(res)
            if plan is not None and plan.out.__class__ is dispatch.View:
                node.meta["view_of"] = node_args[plan.out.src]  # the result aliases this input
        if grad and self.autograd and dispatch.grad_hook is not None:
            dispatch.grad_hook(op, args, res, plan.kw if plan is not None else None)
        return res

    def custom_function(self, cls, args: tuple, kwargs: dict):
        """``Function.apply`` under the tracer (``autograd.Function`` calls this hook). The
        joint trace (``autograd``) runs it: its forward's ops are recorded and its node, with
        the user's backward, joins the fakes' autograd graph. A user's trace records one node
        calling ``cls.apply``, its results computed on the fakes; NotImplemented (a graph
        break) where the forward reads values, writes its inputs or returns other things."""
        if self.autograd:
            return cls._apply(*args, **kwargs)
        if self.passthrough:
            with self._suspend():
                return cls._apply(*args, **kwargs)
        if kwargs or not all(isinstance(a, (_TENSOR, bool, int, float, type(None))) for a in args):
            return NotImplemented
        fargs = tuple(self.twin(a) if isinstance(a, _TENSOR) else a for a in args)
        # the results' fakes: the forward traced into a scratch graph
        sub = Tracer({}, {}, True, no_values)
        for a in fargs:
            if isinstance(a, _TENSOR):
                sub.seg.env[id(a._a)] = [sub.seg.graph.placeholder("a"), a._a, None]
        try:
            with sub:
                res = cls._apply(*fargs)
        except Exception:  # noqa: BLE001  (values read, or an error eager will raise again)
            return NotImplemented
        outs = res if isinstance(res, tuple) else (res,)
        ids = {id(a) for a in fargs}
        if not outs or not all(isinstance(o, _TENSOR) and o._a.__class__ is _META and id(o) not in
                               ids for o in outs):
            return NotImplemented
        ctx = next((o.grad_fn for o in outs if o.grad_fn is not None), None)
        if ctx is not None and getattr(ctx, "_dirty", None):
            return NotImplemented
        node = self.seg.graph.call_function(function_call(cls), self._lift(args), {})
        dev = common_device(*[a for a in args if isinstance(a, _TENSOR)]) if any(
            isinstance(a, _TENSOR) for a in args) else outs[0].device
        if isinstance(res, tuple):
            vals = []
            for i, r in enumerate(res):
                g = self.seg.graph.call_function(operator.getitem, (node, i))
                self._bind(r, g, dev, False)
                g.meta["val"] = meta_val(r)
                vals.append(g.meta["val"])
            node.meta["val"] = tuple(vals)
        else:
            self._bind(res, node, dev, False)
            node.meta["val"] = meta_val(res)
        if dispatch.grad_state.enabled != self.seg.grad_entry:
            node.meta["grad_enabled"] = dispatch.grad_state.enabled
        return res

    def _bind(self, r: Tensor, node, dev, grad: bool) -> None:
        a = r._a
        if a.fake is None and dev is not META:
            a.fake = dev
            if r._st.__class__ is _META:
                r._st.fake = dev
        if grad and r.dtype.category >= 2:
            r._requires_grad = True
            if not self.autograd and r.grad_fn is None and id(r) not in self.proxied:
                r.grad_fn = _TRACED_NODE
        self.seg.env[id(a)] = [node, a, None]  # no strong reference: liveness is the user's
        self.seg.fakes.append(weakref.ref(r))

    # -- breaks ---------------------------------------------------------------------------
    def read(self, t, what: str) -> None:
        """``meta.read_hook``: Python is about to read tensor values."""
        if self.passthrough:  # (real values)
            return
        ts = list(t) if isinstance(t, (tuple, list)) else [t]
        fake = any(isinstance(x, _TENSOR) and x._a.__class__ is _META and x._a.fake is not None
                   for x in ts)
        if not fake:  # reading a real tensor's values: the result is specialised on them
            self.graph_break(what, materialize=False)
            return
        self.graph_break(what)

    def graph_break(self, reason: str, materialize: bool = True, replayable: bool = False
                    ) -> None:
        where = user_frame()
        if self.fullgraph:
            raise Unsupported(f"{reason} is a graph break (fullgraph=True): compiled code cannot "
                              f"read tensor values\n  at {where}")
        self.breaks.append((reason, where))
        if not replayable:  # Python read a value: later calls may take another path
            self.unreplayable.append(reason)
        if self.on_break is not None:
            self.on_break(reason, where)
        if materialize and (not replayable or len(self.seg.graph.nodes)):
            self.flush()

    def effect(self, what: str, fn, args: tuple, kwargs: dict, run=None, reads: bool = True):
        """``meta.effect_hook``: a call with effects outside the graph (``backward``, an
        optimizer's ``step``, ``zero_grad``, setting ``.grad``), run eagerly and recorded as a
        step of the program a cached call replays. A call that ``reads`` tensor values breaks
        the graph first (the graph so far runs, its operands become real tensors); one that
        only sets attributes (``zero_grad``, ``.grad = real tensor``) does not where the graph
        pending reads no ``.grad``: then it may replay after the call."""
        if self.passthrough:
            with self._suspend():
                return (run or fn)(*args, **kwargs)
        a = kw = None
        if not reads and not any(self._grad_of(x) is not None for _, x in self.seg.inputs):
            a, kw = self.spec(args), self.spec(kwargs)
        if a is None or kw is None:
            self.graph_break(what, replayable=True)
            a, kw = self.spec(args), self.spec(kwargs)
        if a is None or kw is None:
            self.unreplayable.append(f"{what} with a tensor of unknown origin")
        else:
            self.steps.append(("call", fn, a, kw))
        with self._suspend():
            r = (run or fn)(*args, **kwargs)
        if r is not None:  # the function may use it: a replay would not see a new one
            self.unreplayable.append(f"{what} returned a value")
        return r

    def _produced(self, t: Tensor):
        e = self.produced.get(id(t))
        return e if e is not None and e[2]() is t else None

    def _grad_of(self, t: Tensor):
        """("grad", owner spec) where ``t`` is the ``.grad`` of an argument or a scope tensor
        (a replay reads that attribute when it gets there), else None."""
        for i, x in enumerate(self.arg_leaves):
            if x._grad is t:
                return ("grad", ("arg", i))
        for src in self.sources.values():
            if src.__class__ is not int and src._grad is t:
                return ("grad", ("scope", src))
        return None

    def spec(self, v):
        """How a replay finds ``v`` (a real tensor, or a structure of them and constants):
        ("arg", leaf number), ("scope", tensor), ("out", graph, output), ("grad", owner spec),
        ("const", value), ("seq", type, specs), ("dict", keys, specs); None where a tensor has
        no known origin."""
        if isinstance(v, _TENSOR):
            if v._a.__class__ is _META and v._a.fake is not None:
                return None
            src = self.sources.get(id(v))
            if src is not None:
                return ("arg", src) if src.__class__ is int else ("scope", src)
            e = self._produced(v)
            if e is not None:
                return ("out", e[0], e[1])
            return self._grad_of(v)
        if type(v) in (tuple, list):
            parts = [self.spec(x) for x in v]
            return None if None in parts else ("seq", type(v), parts)
        if type(v) is dict:
            parts = [self.spec(x) for x in v.values()]
            return None if None in parts else ("dict", list(v), parts)
        return ("const", v)

    def _run_eagerly(self, op, args, params, reason: str):
        self.graph_break(reason)
        with self._suspend():
            res = op(*args, **params)
        return res

    def flush(self, extra: tuple = ()) -> list:
        """Run the graph recorded so far and turn every live fake (and ``extra`` tensors)
        into the real tensor it stands for; start a new graph. Returns the graph's outputs."""
        seg = self.seg
        live = []
        for w in seg.fakes:
            t = w()
            if t is not None and t._a.__class__ is _META and id(t._a) in seg.env:
                live.append(t)
        live.extend(x for x in extra if isinstance(x, _TENSOR))
        outs, index = [], {}
        nodes = [self.node_of(t) for t in live]
        for node in nodes:
            if node not in index:
                index[node] = len(outs)
                outs.append(node)
        proxied = {id(t) for t, _, _ in self.proxied.values()}
        self._restore_proxied()
        # where a replay finds each input, while it is so (a .grad may be reset later)
        seg.specs = [self.spec(x) for _, x in seg.inputs] if self.effects else None
        seg.graph.output(tuple(outs))
        seg.graph.symbols = seg.symbols
        self.graphs.append(seg)
        with self._suspend():
            vals = self.run_graph(seg, [real for _, real in seg.inputs])
        self.out_index = {}
        gi = len(self.graphs) - 1
        self.steps.append(("graph", seg))
        for t, node in zip(live, nodes):
            k = index[node]
            self.out_index[id(t)] = k
            if t._a.__class__ is _META:  # a value this graph made (not an input returned)
                self.produced[id(t)] = (gi, k, weakref.ref(t))
            real = vals[k]
            if real is not t:
                _adopt(t, real)
        returned = {id(x) for x in extra} | proxied
        self.escaped = [t for w in seg.fakes if (t := w()) is not None and id(t) not in returned]
        self.seg = Segment(dispatch.grad_state.enabled)
        return vals

    def _restore_proxied(self) -> None:
        for t, a, st in self.proxied.values():
            t._a, t._st = a, st
        self.proxied.clear()


def no_values(seg, inputs):
    """``run_graph`` of the tracers that record a graph and never run it (the joint trace, an
    ``autograd.Function``'s forward): a value read is refused, the caller falls back."""
    raise Unsupported("a trace that cannot run its graph read tensor values")


class FunctionCall:
    """The target of a traced ``autograd.Function`` call: ``cls.apply`` (one per class, so
    that graphs calling it compare equal)."""

    def __init__(self, cls) -> None:
        self.cls = cls
        self.__name__ = self.__qualname__ = f"{cls.__name__}_apply"

    def __call__(self, *args):
        return self.cls.apply(*args)

    def __repr__(self) -> str:
        return f"{self.cls.__qualname__}.apply"


_calls: dict = {}


def function_call(cls) -> FunctionCall:
    f = _calls.get(cls)
    if f is None:
        f = _calls[cls] = FunctionCall(cls)
    return f


def _adopt(t: Tensor, real: Tensor) -> None:
    """Make fake ``t`` the real tensor ``real`` (same object: Python's references stay valid)."""
    t._a, t._st, t.dtype = real._a, real._st, real.dtype
    t._requires_grad, t.grad_fn, t._vc = real._requires_grad, real.grad_fn, real._vc
    if real._base is not t:  # an in-place view of t (t.t_()) keeps t's own base
        t._base = real._base
    t._output_nr = real._output_nr


def _copy_meta(src: Tensor, out: Tensor) -> Tensor:
    """``copy_into`` on fakes: ``out`` takes ``src``'s shape (resized, as eager does)."""
    if tuple(out._a.shape) != tuple(src._a.shape):
        dispatch.resize_out(out, src._a.shape)
    return out


class _Suspended:
    """No tracing inside (computing a fake result, running a graph, an eager fallback)."""

    def __init__(self, tracer: Tracer, grad: bool = True) -> None:
        self.tracer, self.grad = tracer, grad

    def __enter__(self):
        self.prev = (dispatch.mode, _meta.read_hook, dispatch.grad_hook, _meta.detach_hook,
                     _meta.effect_hook, _meta.eager_hook)
        dispatch.mode = None
        _meta.read_hook = _meta.detach_hook = _meta.effect_hook = _meta.eager_hook = None
        if not self.grad:  # computing fakes: no autograd record on them
            dispatch.grad_hook = None

    def __exit__(self, *exc) -> None:
        (dispatch.mode, _meta.read_hook, dispatch.grad_hook, _meta.detach_hook,
         _meta.effect_hook, _meta.eager_hook) = self.prev

