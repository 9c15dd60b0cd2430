"""Compiled backward: a traced graph's forward and backward as two compiled graphs joined by
one autograd node (torch's AOTAutograd).

When a graph runs with grad mode on and some input requires grad, ``compile_piece`` does not
hand the graph to the backend as it is (whose nodes would then run eagerly, one autograd
node each). It traces the **joint graph**: the graph is replayed over fake inputs under a
tracer that also records autograd nodes on the fakes (their gradient rules are the OpDefs'
``vjp``s, as in eager), then the autograd engine itself runs over those nodes under a second
tracer, which records every op the gradient rules call into the **backward graph**. A value
of the forward that a rule reads becomes an input of the backward graph (saved) and an
extra output of the forward graph; the backward's outputs are the inputs' gradients.

Pointwise values are cheap to recompute and expensive to keep: a saved value computed by a
chain of pointwise nodes from values that are saved anyway (or are inputs) is recomputed in
the backward graph (``_partition``), so a fused forward writes its result only and the fused
backward reads the inputs again.

A scalar result (a loss) whose backward graph is pointwise work, views and reductions also
gets a **unit-seeded forward**: the forward graph with the backward graph appended for a
tangent of 1 (``_seeded``), which the backend fuses into the forward's kernels, so sin, exp
and the like are computed once for the value and its derivative. ``loss.backward()`` seeds
exactly 1, and the backward then hands out the gradients computed by the forward, the same
bits as the backward graph computes for 1; any other tangent runs the backward graph.

Both graphs go through the same backend. At run time the forward runs without autograd and
its differentiable results get one ``CompiledFunctionBackward`` node whose backward runs the
compiled backward graph; the engine sees an ordinary node (hooks, ``retain_graph``,
``autograd.grad``, ``inputs=``, accumulation). A double backward (``create_graph=True``)
replays the graph eagerly with autograd from the saved inputs; inputs the graph writes
(BatchNorm's running statistics) are replayed from copies, taken before the write where the
write's old value reaches a differentiable result, so they are written once.

A graph falls back to the backend as it is (gradients through eager nodes) where the joint
trace does not apply: symbolic sizes, results that alias inputs, rules that read values or
fail on fakes.
"""

from __future__ import annotations

import numpy as np

from .. import dispatch
from ..autograd import engine
from ..autograd.node import _FREED_MSG, Node, SavedTensor, edge_of
from ..kernels import registry as _registry
from ..kernels.registry import OpDef
from ..meta import MetaArray
from ..tensor import Tensor
from . import logs, workers
from .errors import Unsupported
from .functionalize import NotFunctionalizable, functionalize
from .graph import Graph, map_arg
from .graph_module import GraphModule
from .interpreter import Interpreter
from .tracer import Tracer, fake_of, meta_val, no_values

_TENSOR = Tensor
_gs = dispatch.grad_state


def compile_piece(backend, gm: GraphModule, inputs: list):
    """``backend(gm, inputs)``, or the joint forward/backward pair when this call needs
    gradients and the backend compiles backward graphs too (``backend.joint``)."""
    if getattr(backend, "joint", False) and _gs.enabled and any(
            isinstance(x, _TENSOR) and x._requires_grad for x in inputs):
        try:
            j = build_joint(backend, gm, inputs)
        except (Unsupported, NotFunctionalizable, RuntimeError, NotImplementedError, TypeError,
                ValueError, IndexError, KeyError) as e:
            logs.log("graph", f"joint graph not traced ({type(e).__name__}: {e}): gradients "
                              "through eager nodes")
            j = None
        if j is not None:
            return j
    return backend(gm, inputs)


class _BackwardTracer(Tracer):
    """Records the backward graph: a forward fake a gradient rule reads becomes a placeholder
    (a saved value); a real tensor a rule makes (a constant) one too."""

    def __init__(self, fw_env: dict) -> None:
        super().__init__({}, {}, True, no_values)
        self.fw_env = fw_env
        self.saved: list = []  # (placeholder, forward node) in placeholder order
        self.consts: list = []  # (placeholder, real tensor)

    def node_of(self, t: Tensor):
        a = t._a
        e = self.seg.env.get(id(a))
        if e is not None:
            return e[0]
        fe = self.fw_env.get(id(a))
        g = self.seg.graph
        if fe is not None:
            p = g.placeholder(f"saved_{fe[0].name}")
            self.saved.append((p, fe[0]))
        elif a.__class__ is not MetaArray:
            p = g.placeholder("constant")
            self.consts.append((p, t))
        else:
            raise Unsupported("a gradient rule read a fake of unknown origin")
        p.meta["val"] = _plain(meta_val(t))
        self.seg.env[id(a)] = [p, a, None]
        return p


def _plain(v):
    """A meta value without the gradient flag (the compiled graphs run without autograd)."""
    if isinstance(v, tuple):
        return tuple(_plain(x) for x in v)
    if isinstance(v, _TENSOR):
        v._requires_grad = False
        v.grad_fn = None
    return v


def _aliases_input(node) -> bool:
    """Whether the node's value is an input or a view of one (or an input it wrote)."""
    if node.meta.get("mutates"):
        return any(_aliases_input(m) for m in node.meta.get("mutated", ()))
    while "view_of" in node.meta:
        node = node.meta["view_of"]
    return node.op == "placeholder"


def _fake_input(t: Tracer, name: str, x: Tensor) -> Tensor:
    f = fake_of(x)
    f._requires_grad = x._requires_grad and x.dtype.category >= 2
    p = t.seg.graph.placeholder(name)
    p.meta["val"] = _plain(meta_val(x))
    t.seg.env[id(f._a)] = [p, f._a, None]
    return f


def build_joint(backend, gm: GraphModule, inputs: list):
    """The ``JointFunction`` of ``gm`` for inputs like ``inputs``, or None where the graph
    has no differentiable result (the backend alone serves it)."""
    if gm.graph.symbols:
        return None
    written: set = set()
    if any(n.meta.get("mutates") for n in gm.graph.nodes):
        gm = functionalize(gm)
        written = _written_inputs(gm)
    g0 = _gs.enabled
    try:
        _gs.enabled = True
        fw = Tracer({}, {}, True, no_values, autograd=True)
        names = [n.name for n in gm.graph.nodes if n.op == "placeholder"]
        fakes = [_fake_input(fw, nm, x) for nm, x in zip(names, inputs)]
        with fw:
            res = Interpreter(gm, garbage_collect_values=False).run(*fakes)
        res = res if isinstance(res, tuple) else (res,)
        out_nodes = [fw.node_of(r) for r in res]
        diff = [k for k, r in enumerate(res) if r._requires_grad and r.grad_fn is not None]
        if any(_aliases_input(out_nodes[k]) for k in diff) or \
                len(set(out_nodes)) != len(out_nodes):
            return None
        req = [i for i, f in enumerate(fakes) if f._requires_grad]
        if not diff or not req:
            return None
        _gs.enabled = False
        bw = _BackwardTracer(fw.seg.env)
        tangents = []
        for k in diff:
            r = res[k]
            tf = Tensor._make(MetaArray(tuple(r._a.shape), r._a.dtype, None, 0, r.device), None,
                              r.dtype)
            p = bw.seg.graph.placeholder(f"tangent_{k}")
            p.meta["val"] = _plain(meta_val(tf))
            bw.seg.env[id(tf._a)] = [p, tf._a, None]
            tangents.append(tf)
        with bw:
            grads = engine.run_backward([res[k] for k in diff], tangents, True, False,
                                        tuple(fakes[i] for i in req), accumulate=False)
            grad_nodes = [None if gr is None else bw.node_of(gr) for gr in grads]
    finally:
        _gs.enabled = g0
    fw_graph, bw_graph = fw.seg.graph, bw.seg.graph
    bw_graph.results_fresh = True  # (the gradients, handed to the engine alone)
    _hoist_placeholders(bw_graph)
    bw_graph.output(tuple(n for n in grad_nodes if n is not None))  # before the partition
    placeholders = [n for n in fw_graph.nodes if n.op == "placeholder"]
    saved_nodes = _partition(fw_graph, bw_graph, bw, out_nodes,
                             {placeholders[i] for i in written})
    # the forward graph's outputs: its results, then the saved values it computes
    fw_outs = list(out_nodes)
    index = {n: k for k, n in enumerate(fw_outs)}
    sources = []  # per backward placeholder: ("fw", k) | ("in", i) | ("const", t) | ("tan", j)
    saved_of = dict(saved_nodes)
    const_of = dict(bw.consts)
    tangent_ph = [n for n in bw_graph.nodes if n.op == "placeholder"
                  and n.name.startswith("tangent_")]
    for p in bw_graph.nodes:
        if p.op != "placeholder":
            continue
        if p in saved_of:
            f = saved_of[p]
            if f.op == "placeholder":
                sources.append(("in", placeholders.index(f)))
                continue
            if f not in index:
                index[f] = len(fw_outs)
                fw_outs.append(f)
            sources.append(("fw", index[f]))
        elif p in const_of:
            sources.append(("const", const_of[p]))
        else:
            sources.append(("tan", tangent_ph.index(p)))
    fw_graph.output(tuple(fw_outs))
    for graph in (fw_graph, bw_graph):
        for n in graph.nodes:
            n.meta.pop("grad_enabled", None)  # each graph runs whole without autograd
            if "val" in n.meta:
                _plain(n.meta["val"])
        graph.eliminate_dead_code()
        graph.lint()
    fw_gm, bw_gm = GraphModule(gm, fw_graph), GraphModule(gm, bw_graph)
    logs.log("graph", f"JOINT GRAPH forward\n{fw_gm.code}\nbackward\n{bw_gm.code}")
    seeded = None
    if len(diff) == 1 and not written and res[diff[0]]._a.shape == () and \
            res[diff[0]].device.type == "cpu":
        try:
            sg = _seeded(fw_graph, bw_graph, sources, res[diff[0]])
        except (Unsupported, RuntimeError, KeyError, ValueError) as e:
            logs.log("graph", f"no unit-seeded forward ({type(e).__name__}: {e})")
            sg = None
        if sg is not None:
            sd_gm = GraphModule(gm, sg)
            logs.log("graph", f"UNIT-SEEDED forward\n{sd_gm.code}")
            seeded = backend(sd_gm, list(inputs))
    mark = None
    if seeded is None and res[diff[0]].device.type == "cpu":
        mark = workers.submit([fw_gm, bw_gm])  # a cold cache: built beside (workers._work)
    return JointFunction(
        fw=backend(fw_gm, list(inputs)), bw=backend(bw_gm, None), eager=gm.forward,
        seeded=seeded, n_fw=len(fw_outs), mark=mark,
        n_out=len(out_nodes), diff=diff, req=req, sources=sources,
        grad_slots=[i for i, n in zip(req, grad_nodes) if n is not None],
        out_meta=[(tuple(res[k]._a.shape), res[k].dtype) for k in diff], n_in=len(inputs),
        written=written, pre=_read_before_written(gm, written, diff))


def _fuses(n) -> bool:
    """A backward node the fusion backend folds into the forward's kernels: pointwise, a
    view, a reduction (a gradient's ``sum_to``), a fill (a zero gradient)."""
    t = n.target
    if n.op in ("placeholder", "output"):
        return True
    if n.op != "call_function" or not isinstance(t, OpDef) or n.meta.get("mutates"):
        return False
    return t.meta is None or t.family in ("reduction", "creation") or "view_of" in n.meta


def _seeded(fw_graph: Graph, bw_graph: Graph, sources: list, result: Tensor) -> Graph | None:
    """The forward graph with the backward graph appended for the tangent 1 (a ``full``
    node): its outputs are the forward's, then the inputs' gradients. None where the
    backward holds work that fusion would not share with the forward (products,
    convolutions: moving them earlier gains nothing and holds their results longer) or reads
    a constant the forward does not have."""
    if any(kind == "const" for kind, _ in sources) or not all(_fuses(n) for n in bw_graph.nodes):
        return None
    g = fw_graph.copy()
    out = next(n for n in reversed(g.nodes) if n.op == "output")
    fw_outs = out.args[0]
    phs = [n for n in g.nodes if n.op == "placeholder"]
    env: dict = {}
    grads = ()
    with g.inserting_before(out):
        for p, (kind, v) in zip((n for n in bw_graph.nodes if n.op == "placeholder"), sources):
            if kind == "in":
                env[p] = phs[v]
            elif kind == "fw":
                env[p] = fw_outs[v]
            else:
                one = g.create_node("call_function", _registry.get("full"), (),
                                    {"size": (), "dtype": result.dtype, "device": result.device,
                                     "fill_value": 1}, name="unit_tangent")
                one.meta["val"] = p.meta["val"]
                env[p] = one
        for n in bw_graph.nodes:
            if n.op == "placeholder":
                continue
            if n.op == "output":
                grads = map_arg(n.args[0], lambda a: env[a])
                continue
            new = env[n] = g.node_copy(n, lambda a: env[a])
            if "view_of" in new.meta:
                new.meta["view_of"] = env.get(new.meta["view_of"], new.meta["view_of"])
    out.args = (tuple(fw_outs) + tuple(grads),)
    g.eliminate_dead_code()
    g.lint()
    return g


def _written_inputs(gm: GraphModule) -> set:
    """The numbers of the inputs a functionalized graph writes (the final write-backs)."""
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    return {phs.index(m) for n in gm.graph.nodes if n.meta.get("mutates")
            for m in n.meta.get("mutated", ()) if m.op == "placeholder"}


def _read_before_written(gm: GraphModule, written: set, diff: list) -> list:
    """The written inputs whose values before the write reach a differentiable result: a
    double backward replays the graph from those values."""
    if not written:
        return []
    phs = [n for n in gm.graph.nodes if n.op == "placeholder"]
    res = next(n for n in reversed(gm.graph.nodes) if n.op == "output").args[0]
    res = res if isinstance(res, tuple) else (res,)
    seen: set = set()
    stack = [res[k] for k in diff]
    while stack:
        n = stack.pop()
        if n not in seen:
            seen.add(n)
            stack.extend(n.all_input_nodes)
    return sorted(i for i in written if phs[i] in seen)


def _numel(n) -> int | None:
    v = n.meta.get("val")
    if not isinstance(v, _TENSOR):
        return None
    size = 1
    for d in v._a.shape:
        size *= int(d)
    return size


def _hoist_placeholders(g: Graph) -> None:
    """Placeholders (made as the rules first read a saved value) moved before every op."""
    first = None
    for n in list(g.nodes):
        if n.op != "placeholder":
            if first is None:
                first = n
        elif first is not None:
            first.prepend(n)


# -- partition: recompute pointwise chains -----------------------------------------------------

def _cheap(n) -> bool:
    """A node the backward may recompute: a pointwise op (or a view) of one value."""
    t = n.target
    if n.op != "call_function" or not isinstance(t, OpDef):
        return False
    if n.meta.get("mutates") or "out" in n.kwargs or n.kwargs.get("inplace"):
        return False
    if t.meta is None:  # pointwise
        return t.name not in _NEVER_RECOMPUTE
    return "view_of" in n.meta


_NEVER_RECOMPUTE = frozenset(["rand_like", "bernoulli", "dropout"])


def _partition(fw_graph: Graph, bw_graph: Graph, bw: _BackwardTracer, out_nodes: list,
               written: set) -> list:
    """The saved values, after moving into the backward graph every saved value that a
    chain of cheap nodes computes from inputs and from values the backward gets anyway (the
    forward's results, other saved values): such a chain is recomputed where the backward
    reads it. Inputs the forward writes (``written``: their values are gone by then) are
    never a chain's leaf. Returns [(backward placeholder, forward node)]."""
    saved = list(bw.saved)
    kept = set(out_nodes) | {n for n in fw_graph.nodes
                             if n.op == "placeholder" and n not in written}
    order = {n: i for i, n in enumerate(fw_graph.nodes)}
    # a saved value is recomputed when its cheap chain reaches only values the backward
    # gets anyway, or values much smaller than it (a row's statistics): those are saved
    chains: dict = {}

    def chain(f, root_size: int, seen: list, root: bool = False) -> bool:
        if f in kept or f in seen:
            return True
        if _cheap(f) and len(seen) <= 64:
            mark = len(seen)
            seen.append(f)
            if all(chain(a, root_size, seen) for a in f.all_input_nodes):
                return True
            del seen[mark:]
        if root:
            return False
        size = _numel(f)
        return size is not None and size * 8 <= root_size  # small: saved, a leaf of the chain

    # in forward order: a value that cannot be recomputed is kept, and later chains may
    # end at it
    for _, f in sorted(saved, key=lambda pf: order[pf[1]]):
        if f in kept:
            continue
        nodes: list = []
        size = _numel(f)
        if size is not None and chain(f, size, nodes, root=True):
            chains[f] = nodes
        else:
            kept.add(f)
    if not chains:
        return saved
    # copy each chain into the backward graph before its first user; its leaves become
    # saved placeholders (kept nodes)
    ph_of = {f: p for p, f in saved}
    first = next(n for n in bw_graph.nodes if n.op != "placeholder")
    in_chains = {n for nodes in chains.values() for n in nodes}
    copied: dict = {}

    def leaf(a):
        if a in copied:
            return copied[a]
        p = ph_of.get(a)
        if p is None:
            with bw_graph.inserting_before(_first_node(bw_graph)):
                p = bw_graph.placeholder(f"saved_{a.name}")
            p.meta["val"] = _plain(meta_val(a.meta["val"]))
            ph_of[a] = p
            saved.append((p, a))
        return p

    def copy(f):
        if f in copied:
            return copied[f]
        if f not in in_chains:
            return leaf(f)
        args = map_arg(f.args, copy)
        kwargs = map_arg(f.kwargs, copy)
        with bw_graph.inserting_before(first):
            new = bw_graph.create_node(f.op, f.target, args, kwargs, name=f"re_{f.name}")
        new.meta = {k: v for k, v in f.meta.items() if k not in ("view_of",)}
        if "view_of" in f.meta:
            new.meta["view_of"] = copy(f.meta["view_of"])
        copied[f] = new
        return new

    for f in list(chains):
        p = ph_of[f]
        new = copy(f)
        p.replace_all_uses_with(new)
        bw_graph.erase_node(p)
        saved = [(q, g) for q, g in saved if q is not p]
    return saved


def _first_node(g: Graph):
    return next(iter(g.nodes))


# -- run time ----------------------------------------------------------------------------------

class JointFunction:
    """The compiled forward (results and saved values, run without autograd) and backward of
    one graph; calling it runs the forward and attaches ``CompiledFunctionBackward``."""

    def __init__(self, fw, bw, eager, n_out: int, diff: list, req: list, sources: list,
                 grad_slots: list, out_meta: list, n_in: int, written: set,
                 pre: list, seeded=None, n_fw: int = 0, mark: str | None = None) -> None:
        self.fw, self.bw, self.eager = fw, bw, eager
        self.mark = mark  # ``workers.mark``ed after the first backward: kernels all cached
        self.seeded, self.n_fw = seeded, n_fw  # the unit-seeded forward (``_seeded``)
        self.n_out, self.diff, self.req, self.sources = n_out, diff, req, sources
        self.grad_slots, self.out_meta, self.n_in = grad_slots, out_meta, n_in
        # inputs the graph writes (BatchNorm's running statistics) are version-checked only
        # where the backward reads them, as eager's saved tensors are: a second call before
        # the backward writes them again
        read = {v for kind, v in sources if kind == "in"}
        self.unchecked = frozenset(i for i in written if i not in read)
        self.written, self.pre = written, pre

    def __call__(self, *inputs):
        g0 = _gs.enabled
        _gs.enabled = False
        try:
            # a double backward replays the graph from these values (taken before the write)
            pre = {i: inputs[i].clone() for i in self.pre} if g0 else None
            seeded = self.seeded if g0 else None
            vals = (seeded or self.fw)(*inputs)
        finally:
            _gs.enabled = g0
        vals = tuple(vals) if isinstance(vals, (tuple, list)) else (vals,)
        outs = vals[:self.n_out]
        if not g0:
            return outs
        node = CompiledFunctionBackward()
        node.joint = self
        node.unit = None
        if seeded is not None:  # the gradients for the tangent 1, then the forward's values
            node.unit = [_own(u, inputs) for u in vals[self.n_fw:]]
            vals = vals[:self.n_fw]
        node.inputs = [x if i in self.unchecked else SavedTensor(x)
                       for i, x in enumerate(inputs)]
        node.pre = pre
        saved = []
        for kind, v in self.sources:
            if kind == "fw":
                saved.append(SavedTensor(vals[v].detach()) if v < self.n_out else vals[v])
            elif kind in ("in", "const"):
                saved.append(v)  # an input's number (node.inputs is version-checked), a constant
            else:
                saved.append(None)  # the tangent
        node.saved = saved
        node.kinds = [k for k, _ in self.sources]
        node._freed = False
        edges = [(None, True)] * len(inputs)
        for i in self.req:
            edges[i] = (edge_of(inputs[i]), True)
        node._edges = tuple(edges)
        meta = [None] * self.n_out
        for j, k in enumerate(self.diff):
            meta[k] = self.out_meta[j]
            o = outs[k]
            o.grad_fn, o._output_nr, o._requires_grad = node, k, True
        node._out_meta = meta
        return outs


class CompiledFunctionBackward(Node):
    """The one autograd node of a compiled function's call: its backward runs the compiled
    backward graph on the saved values and the results' gradients."""

    __slots__ = ("_freed", "_out_meta", "inputs", "joint", "kinds", "pre", "saved", "unit")

    def n_outputs(self) -> int:
        return len(self._out_meta)

    def release(self) -> None:
        self._freed = True
        self.saved = self.inputs = self.pre = self.unit = None

    def apply(self, grads: list) -> list:
        if self._freed:
            raise RuntimeError(_FREED_MSG)
        j = self.joint
        tangents = []
        for k in j.diff:
            g = grads[k]
            if g is None:
                from ..ops.creation import zeros

                shape, dtype = self._out_meta[k]
                dev = next((x.device for x in grads if x is not None), None)
                g = zeros(shape, dtype=dtype, device=dev)
            elif g.dtype is not self._out_meta[k][1]:
                g = g.to(self._out_meta[k][1]).contiguous()
            elif not g._a.flags.c_contiguous and any(g._a.strides):
                g = g.contiguous()  # the fused kernels read dense operands (or one value)
            tangents.append(g)
        if _gs.enabled:  # create_graph: the graph again, eagerly with autograd
            return self._double(tangents)
        args = []
        ti = iter(tangents)
        for kind, s in zip(self.kinds, self.saved):  # (reading them checks their versions)
            if kind == "in":
                args.append(self.inputs[s].get(self))
            elif kind == "tan":
                args.append(next(ti))
            else:
                args.append(s.get(self) if type(s) is SavedTensor else s)
        unit, self.unit = self.unit, None  # handed out once (the engine may own them)
        if unit is not None and _is_one(tangents[0]):
            res = unit
        else:
            res = j.bw(*args)
            if j.mark is not None:
                workers.mark(j.mark)
                j.mark = None
        res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
        out = [None] * j.n_in
        for i, r in zip(j.grad_slots, res):
            out[i] = r
        return out

    def _double(self, tangents: list) -> list:
        self.unit = None
        j = self.joint
        inputs = []
        for i, s in enumerate(self.inputs):
            if i in j.written:  # the replay writes a copy: the input was written once
                inputs.append(self.pre.get(i, s if i in j.unchecked else s.get(self)).clone())
            else:
                inputs.append(s.get(self))
        res = j.eager(*inputs)
        res = res if isinstance(res, tuple) else (res,)
        grads = engine.run_backward([res[k] for k in j.diff], tangents, True, True,
                                    tuple(inputs[i] for i in j.req), accumulate=False)
        out = [None] * j.n_in
        for i, g in zip(j.req, grads):
            out[i] = g
        return out


def _own(g, inputs: tuple):
    """``g``, or a copy where it shares memory with an input (a pass may fold ``x * 1`` to
    ``x``): the engine may make a gradient a leaf's ``.grad`` as it is."""
    a = g._a
    for x in inputs:
        if isinstance(x, _TENSOR) and x._a.__class__ is np.ndarray and \
                np.may_share_memory(a, x._a):
            return g.clone()
    return g


def _is_one(g: Tensor) -> bool:
    """Whether the tangent is exactly 1 (``backward()``'s seed), on the CPU."""
    a = g._a
    return a.__class__ is np.ndarray and a.ndim == 0 and a == 1


__all__ = ["CompiledFunctionBackward", "JointFunction", "build_joint", "compile_piece"]
