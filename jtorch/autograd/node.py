"""Backward nodes (torch's ``grad_fn``): what the forward pass records for the engine.

``record`` is the hook ``dispatch`` calls after an op whose inputs require grad: it makes one
node holding the OpDef (whose ``vjp`` is the gradient rule), the values the rule reads (as
``OpDef.saves`` names them, with their version counters), the inputs' shapes and dtypes, and
one edge per input to the node that produced it. Nodes are named as torch names them
(``MulBackward0``) so that printed tensors and ``type(t.grad_fn).__name__`` match.
"""

from __future__ import annotations

import re
import traceback
import weakref

from .. import dispatch
from .. import meta as _meta
from ..tensor import Tensor
from . import graph as _graph

_TENSOR = Tensor
_hook_state = _graph._state
_FREED = object()
_FREED_MSG = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)


class anomaly:
    """Anomaly-mode switches, read at record time (trace) and in the engine (nan check)."""

    enabled = False
    check_nan = True


class RemovableHandle:
    """What ``register_hook`` returns: ``remove()`` takes the hook out again."""

    def __init__(self, hooks: list, hook) -> None:
        self._ref = (hooks, hook)

    def remove(self) -> None:
        hooks, hook = self._ref
        for i, h in enumerate(hooks):
            if h is hook:
                del hooks[i]
                break

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _describe(t: Tensor) -> str:
    """torch's name of a tensor's type and its sizes: ``[torch.FloatTensor [2, 3]]``, and
    ``[MetaFloatType [2, 3]]`` on meta."""
    kind = f"Meta{t.dtype.scalar_name}Type" if t.device.type == "meta" else \
        f"torch.{t.dtype._legacy}"
    return f"[{kind} [{', '.join(str(n) for n in t._a.shape)}]]"


class SavedTensor:
    """A tensor a gradient rule reads, with the version it had when saved.

    Outputs of the node itself are kept as detached data (no reference cycle node -> output ->
    node) and rebuilt with their ``grad_fn`` on unpack, so that ``create_graph`` sees them in
    the graph."""

    __slots__ = ("data", "version", "nr", "packed", "unpack")

    def __init__(self, t: Tensor, nr: int = -1) -> None:
        self.nr = nr
        self.version = t._vc[0]
        if _hook_state.stack:
            pack, self.unpack = _hook_state.stack[-1]
            self.packed = pack(t)
            self.data = None
            return
        self.packed = self.unpack = None
        if nr < 0:
            self.data = t
        elif _meta.detach_hook is None or getattr(_meta.detach_hook, "keeps_outputs", False):
            # the output's parts: the tensor is made if it is read (under vmap it is then the
            # same stand-in, whose physical tensor carries the graph second order needs)
            self.data = (t._a, t._st, t.dtype, t._vc)
        else:
            self.data = t.detach()

    def get(self, node: Node) -> Tensor:
        if self.unpack is not None:
            return self.unpack(self.packed)
        t = self.data
        if t.__class__ is tuple:
            t = Tensor._make(t[0], t[1], t[2], vc=t[3])
        if t._vc[0] != self.version:
            self._raise_modified(node, t)
        if self.nr >= 0 and dispatch.grad_state.enabled:
            t = Tensor._make(t._a, t._st, t.dtype, vc=t._vc)
            t.grad_fn, t._output_nr, t._requires_grad = node, self.nr, True
        return t

    def _raise_modified(self, node: Node, t: Tensor):
        if self.nr >= 0:
            what = f"{_describe(t)}, which is output {self.nr} of {_short(node)},"
        elif t.grad_fn is not None:
            what = f"{_describe(t)}, which is output {t._output_nr} of {_short(t.grad_fn)},"
        else:
            what = _describe(t)
        raise RuntimeError(
            "one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: {what} is at version {t._vc[0]}; expected version "
            f"{self.version} instead. Hint: enable anomaly detection to find the operation that "
            "failed to compute its gradient, with torch.autograd.set_detect_anomaly(True, "
            "check_nan=False)."
        )


def _short(node) -> str:
    """torch names the op in this message, not its node: ExpBackward0 -> Exp."""
    return re.sub(r"Backwards?\d*$", "", node.name())


class Node:
    """A backward function. ``next_functions`` lists, per tensor input, the node its gradient
    flows to and which of that node's outputs it is."""

    __slots__ = ("_edges", "_pre_hooks", "_hooks", "_retain", "_trace", "_meta_dict",
                 "__weakref__")
    # a stand-in node (jtorch.compile's traced values, until their graph runs): no edges yet
    placeholder = False

    def __init__(self) -> None:
        self._edges = ()
        self._pre_hooks = None  # {output index (-1: the node's own prehooks): [hooks]}
        self._hooks = None      # [fn(grad_inputs, grad_outputs)]
        self._retain = None     # {output index: weakref to a non-leaf that retains its grad}
        self._trace = None
        self._meta_dict = None

    @property
    def metadata(self) -> dict:
        if self._meta_dict is None:
            self._meta_dict = {}
        return self._meta_dict

    def name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"

    @property
    def next_functions(self) -> tuple:
        return tuple((None, 0) if e is None else e for e, is_t in self._edges if is_t)

    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node; it may return new
        grad_inputs."""
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(fn)
        return RemovableHandle(self._hooks, fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node; it may return new grad_outputs."""
        return self._add_pre_hook(-1, fn)

    def _add_pre_hook(self, nr: int, fn) -> RemovableHandle:
        if self._pre_hooks is None:
            self._pre_hooks = {}
        hooks = self._pre_hooks.setdefault(nr, [])
        hooks.append(fn)
        return RemovableHandle(hooks, fn)

    def n_outputs(self) -> int:
        return 1

    def release(self) -> None:
        """Drop saved values after a backward pass without ``retain_graph``."""

    def apply(self, grads: list) -> list:
        raise NotImplementedError


class OpNode(Node):
    """The node of one OpDef call. Gradient rules read ``args`` (saved inputs; Python scalars
    as given), ``out`` (saved output(s)), ``kw`` and ``needs`` (which inputs want a grad)."""

    __slots__ = ("op", "kw", "needs", "_args", "_out", "_meta", "_out_meta", "_freed")

    @property
    def args(self) -> tuple:
        a = self._args
        if self._freed:
            raise RuntimeError(_FREED_MSG)
        return tuple([x.get(self) if type(x) is SavedTensor else x for x in a])

    @property
    def out(self):
        o = self._out
        if o is None:
            if self._freed:
                raise RuntimeError(_FREED_MSG)
            raise RuntimeError(f"{self.name()}: the output was not saved for backward")
        if type(o) is tuple:
            return tuple([None if x is None else x.get(self) for x in o])
        return o.get(self)

    def out_at(self, i: int):
        """Saved output ``i`` of a multi-output op alone (a rule that reads one of them: no
        tensors made for the others)."""
        o = self._out
        if type(o) is not tuple:
            return self.out[i]  # (its errors where nothing is saved)
        x = o[i]
        return None if x is None else x.get(self)

    def n_outputs(self) -> int:
        return len(self._out_meta)

    def release(self) -> None:
        args = self._args
        if self._out is None:
            for x in args:
                if type(x) is SavedTensor:
                    break
            else:
                return  # nothing saved: nothing to free
        self._freed = True
        self._out = None
        self._args = tuple([_FREED if type(x) is SavedTensor else x for x in args])

    def apply(self, grads: list) -> list:
        op = self.op
        if op.vjp is None:
            raise RuntimeError(f"derivative for aten::{op.name} is not implemented")
        if len(grads) == 1:
            g = grads[0] if grads[0] is not None else _zeros(self._out_meta[0])
        elif op.grad_outputs == 1 and grads[0] is not None:  # (layer_norm's): nothing to fill
            g = tuple(grads)
        else:
            dev = next(x for x in grads if x is not None).device
            k = op.grad_outputs or len(grads)
            g = tuple(x if x is not None or m is None or i >= k else _zeros(m, dev)
                      for i, (x, m) in enumerate(zip(grads, self._out_meta)))
        res = op.vjp(self, g)
        if not isinstance(res, (tuple, list)):
            res = (res,)
        out = []
        for r, need, meta in zip(res, self.needs, self._meta):
            if r is None or not need:
                out.append(None)
                continue
            shape, dtype = meta
            if (r.__class__ is _TENSOR or not r.is_sparse) and r._a.shape != shape:
                r = sum_to(r, shape)  # (a sparse gradient, embedding's, has its input's shape)
            if r.dtype is not dtype:
                r = r.to(dtype)
            out.append(r)
        return out


def _zeros(meta, device=None) -> Tensor:
    """The zero gradient of an output nothing flowed into, on the device of those that did."""
    from ..ops.creation import zeros

    shape, dtype = meta
    return zeros(shape, dtype=dtype, device=device)


def sum_to(g: Tensor, shape: tuple) -> Tensor:
    """Reduce a broadcast gradient back to ``shape`` (sum over the broadcast dims)."""
    gs = g._a.shape
    lead = len(gs) - len(shape)
    kept = tuple([lead + i for i, n in enumerate(shape) if n == 1 and gs[lead + i] != 1])
    if lead > 0 and not kept and gs[lead:] == shape:  # leading dims only (a bias's rows)
        return g.sum(tuple(range(lead)))
    dims = tuple(range(lead)) + kept
    if dims:
        g = g.sum(dims, keepdim=True)
    if lead or g._a.shape != shape:
        g = g.reshape(shape)
    return g


class AccumulateGrad(Node):
    """The node of a leaf: the engine adds what reaches it into ``variable.grad``."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor) -> None:
        super().__init__()
        self.variable = variable

    def apply(self, grads: list) -> list:  # the engine accumulates (it knows create_graph)
        return []


_classes: dict[str, type] = {}


def node_class(name: str) -> type:
    """The OpNode subclass named like torch's grad_fn (``ExpBackward0``)."""
    cls = _classes.get(name)
    if cls is None:
        cls = _classes[name] = type(name, (OpNode,), {"__slots__": ()})
    return cls


def _grad_name(op, inputs: tuple, kw) -> str:
    """torch's node name: ``op.grad_name`` (a string, or a function of the inputs and
    kwargs where torch's name depends on the overload), else CamelCase(op) + "Backward0"."""
    name = op.grad_name
    if name is None:
        name = op.grad_name = "".join(p.capitalize() for p in op.name.split("_")) + \
            "Backward0"
    elif not isinstance(name, str):
        name = name(inputs, kw)
    return name


def accumulator(t: Tensor) -> AccumulateGrad:
    """The leaf's AccumulateGrad node; the leaf keeps only a weak reference to it (the graph
    keeps it alive), so every graph built on the leaf shares one node while any is alive."""
    ref = t.__dict__.get("_acc")
    acc = ref() if ref is not None else None
    if acc is None:  # (Node.__init__'s slots set here: a parameter's node is made every step)
        acc = _new(AccumulateGrad)
        acc._edges = ()
        acc._pre_hooks = acc._hooks = acc._retain = acc._trace = acc._meta_dict = None
        acc.variable = t
        t.__dict__["_acc"] = weakref.ref(acc)
    return acc


def edge_of(t: Tensor):
    fn = t.grad_fn
    if fn is not None:
        return (fn, t._output_nr)
    if t._requires_grad:
        return (accumulator(t), 0)
    return None


_NO_EDGE = (None, False)
_new = object.__new__


def _is_diff(x) -> bool:
    return isinstance(x, _TENSOR) and x.dtype.category >= 2


def record(op, inputs: tuple, out, kw: dict | None) -> None:
    """Attach a node for ``op`` to its differentiable outputs (dispatch calls this only when
    grad mode is on and some input requires grad)."""
    if not op.differentiable:
        return
    if isinstance(out, _TENSOR):
        if out.dtype.category < 2:
            return
        if inputs and out is inputs[0] and out._base is not None:
            from .inplace import record_view_inplace

            return record_view_inplace(op, inputs, out, kw)
        node = make_node(op, inputs, (out,), kw)
        out.grad_fn, out._output_nr, out._requires_grad = node, 0, True
        return
    outs = tuple(out)
    if not any(_is_diff(o) for o in outs):
        return
    node = make_node(op, inputs, outs, kw)
    for i, o in enumerate(outs):
        if _is_diff(o):
            o.grad_fn, o._output_nr, o._requires_grad = node, i, True


def _node_factory(op, inputs: tuple, kw) -> type:
    cls = op._node_cls
    if cls is None:
        name = _grad_name(op, inputs, kw)
        cls = node_class(name)
        if isinstance(op.grad_name, str):  # fixed name: cache the class on the op
            op._node_cls = cls
    return cls


# an OpDef's ``saves`` string -> (input positions it saves, whether it saves outputs, which
# outputs: None for all). Digits before "o" are inputs; "o" alone saves every output, "o"
# followed by digits those outputs only (layer_norm's "012o12": mean and rstd, not y).
_saves_parsed: dict = {}


def _parse_saves(saves: str) -> tuple:
    r = _saves_parsed.get(saves)
    if r is None:
        ins, _, outs = saves.partition("o")
        r = _saves_parsed[saves] = (frozenset(int(c) for c in ins), "o" in saves,
                                    frozenset(int(c) for c in outs) if outs else None)
    return r


def make_node(op, inputs: tuple, outs: tuple, kw: dict | None) -> OpNode:
    cls = op._node_cls
    # the slots set here rather than by Node.__init__ (a call frame per recorded op)
    node = _new(cls if cls is not None else _node_factory(op, inputs, kw))
    node._pre_hooks = node._hooks = node._retain = node._trace = node._meta_dict = None
    node.op, node.kw, node._freed = op, kw, False
    saves = op.saves
    if saves is None:
        pos, save_out, opos = None, False, None
    else:
        pos, save_out, opos = _parse_saves(saves)
    self_old = kw.get("_self") if kw else None
    if len(inputs) == 1 and isinstance(inputs[0], _TENSOR):  # views, unary ops: no lists
        x = inputs[0]
        fn = x.grad_fn
        e = (fn, x._output_nr) if fn is not None else \
            (accumulator(x), 0) if x._requires_grad else None
        node._edges, node.needs = ((e, True),), (e is not None,)
        node._meta = [(x._a.shape, x.dtype)]
        node._args = (SavedTensor(self_old if self_old is not None else x),) \
            if pos is None or 0 in pos else (None,)
    else:
        edges, needs, metas, args = [], [], [], []
        for i, x in enumerate(inputs):
            if isinstance(x, _TENSOR):
                fn = x.grad_fn
                if fn is not None:
                    e = (fn, x._output_nr)
                elif x._requires_grad:
                    e = (accumulator(x), 0)
                else:
                    e = None
                edges.append((e, True))
                needs.append(e is not None)
                metas.append((x._a.shape, x.dtype))
                if pos is None or i in pos:
                    args.append(SavedTensor(self_old if i == 0 and self_old is not None else x))
                else:
                    args.append(None)
            else:
                edges.append(_NO_EDGE)
                needs.append(False)
                metas.append(None)
                args.append(x)
        node._edges, node.needs, node._meta, node._args = tuple(edges), tuple(needs), metas, \
            tuple(args)
    if len(outs) == 1:
        o = outs[0]
        node._out_meta = ((o._a.shape, o.dtype),)
        node._out = SavedTensor(o, 0) if save_out else None
    else:  # (loops, not generators: a frame each)
        metas, saved = [], []
        for i, o in enumerate(outs):
            diff = _is_diff(o)
            metas.append((o._a.shape, o.dtype) if diff else None)
            if save_out:
                # integer outputs (indices) are saved like inputs: version-checked, released
                # after backward, and never given this node as grad_fn
                saved.append(None if opos is not None and i not in opos else
                             SavedTensor(o, i) if diff else SavedTensor(o)
                             if isinstance(o, _TENSOR) else None)
        node._out_meta = tuple(metas)
        node._out = tuple(saved) if save_out else None
    if anomaly.enabled:
        node._trace = traceback.format_stack()[:-3]
    return node
