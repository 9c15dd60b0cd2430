"""Functionalisation: a traced graph without mutation, plus the write-backs eager would do.

The tracer records in-place ops as they ran (``meta["mutates"]``, the written inputs in
``meta["mutated"]``) and views with the input they alias (``meta["view_of"]``). This pass
rewrites such a graph so that every value is computed once and never overwritten, which is
what fusion needs:

* an in-place pointwise op becomes its out-of-place op (cast back to the written tensor's
  dtype where they differ); ``out=`` the same;
* other in-place ops (``index_put_``, ``fill_``, ``uniform_``, a fused optimizer step) write a
  private clone of their input, never a graph input or a value another node reads;
* a write through a view updates its base: a private clone of the base, the view replayed on
  it, the new values copied in (``meta["scatter"]``); later reads of the base or of any other
  view of it see the new values (views are replayed from the base's current value);
* graph inputs that were written (arguments, module buffers such as BatchNorm's running
  statistics) get one ``copy_`` each at the end, so the caller sees what eager execution
  leaves; results that are those inputs (or views of them) are the inputs again.

``as_strided`` views (absolute geometry) and ``out=`` tensors that are resized (their
storage is replaced) are left as they are: ``functionalize`` raises ``NotFunctionalizable``
and the caller keeps the graph with its in-place nodes.
"""

from __future__ import annotations

import operator

from .. import dispatch
from ..kernels.defs import conversion as _C
from ..kernels.registry import OpDef
from .graph import Graph, Node, map_arg
from .graph_module import GraphModule


class NotFunctionalizable(RuntimeError):
    """A graph this pass cannot rewrite (it keeps its in-place nodes)."""


def functionalize(gm: GraphModule) -> GraphModule:
    """A new GraphModule computing the same results and writes with no mutation inside."""
    return GraphModule(gm, _Functionalizer(gm.graph).run())


class _Functionalizer:
    def __init__(self, graph: Graph) -> None:
        self.old = graph
        self.g = Graph()
        self.tensor: dict = {}  # old node -> the tensor it denotes (an old node)
        self.base: dict = {}  # view tensor -> (base tensor, chain of old view nodes)
        self.cur: dict = {}  # tensor -> new node holding its current value
        self.version: dict = {}  # base tensor -> how many writes it has had
        self.seen: dict = {}  # view tensor -> the base version its cur was made at
        self.placeholders: dict = {}  # old placeholder -> new placeholder
        self.written: list = []  # placeholder base tensors that were written

    # -- values ---------------------------------------------------------------------------
    def val(self, node: Node) -> Node:
        """The new node holding the current value of what ``node`` denotes."""
        t = self.tensor.get(node, node)
        b = self.base.get(t)
        if b is None:
            return self.cur[t]
        base, chain = b
        if self.seen.get(t) != self.version.get(base, 0):
            self._replay(base, chain, self.cur[base])
        return self.cur[t]

    def _replay(self, base: Node, chain: list, src: Node) -> Node:
        """The views of ``chain`` made again from ``src`` (the base's current value)."""
        prev = src
        for v in chain:
            new = self._copy_view(v, prev)
            self.cur[v] = new
            self.seen[v] = self.version.get(base, 0)
            prev = new
        return prev

    def _copy_view(self, v: Node, src: Node) -> Node:
        parent = v.meta["view_of"]
        if v.target is operator.getitem:  # an element of a multi-view op (split, unbind)
            op = v.args[0]
            args = tuple(src if a is parent else self._arg(a) for a in op.args)
            tup = self.g.create_node("call_function", op.target, args, self._arg(op.kwargs),
                                     name=op.name)
            tup.meta = dict(op.meta)
            new = self.g.call_function(operator.getitem, (tup, v.args[1]))
        else:
            args = tuple(src if a is parent else self._arg(a) for a in v.args)
            new = self.g.create_node("call_function", v.target, args, self._arg(v.kwargs),
                                     name=v.name)
        new.meta = {k: x for k, x in v.meta.items() if k != "view_of"}
        return new

    def _arg(self, a):
        return map_arg(a, self.val)

    # -- the walk ---------------------------------------------------------------------------
    def run(self) -> Graph:
        out_node = None
        for n in self.old.nodes:
            if n.op == "placeholder":
                p = self.g.placeholder(n.name)
                p.meta = dict(n.meta)
                self.placeholders[n] = p
                self.cur[n] = p
            elif n.op == "output":
                out_node = n
            elif n.op != "call_function":
                raise NotFunctionalizable(f"node {n} ({n.op})")
            elif n.meta.get("mutates"):
                self._mutation(n)
            elif "view_of" in n.meta:
                self._view(n)
            elif n.target is operator.getitem and n.args[0].meta.get("mutates"):
                self.tensor[n] = self.tensor.get(n.args[0].meta["mutated"][n.args[1]],
                                                 n.args[0].meta["mutated"][n.args[1]])
            else:
                new = self.g.create_node("call_function", n.target, self._arg(n.args),
                                         self._arg(n.kwargs), name=n.name)
                new.meta = dict(n.meta)
                self.cur[n] = new
        self.g.symbols = [(s, self.placeholders[p], d) for s, p, d in self.old.symbols
                          if p in self.placeholders]
        self._write_back()
        self.g.output(map_arg(out_node.args[0], self._result) if out_node is not None else ())
        self.g.lint()
        return self.g

    def _view(self, n: Node) -> None:
        if getattr(n.target, "name", "") in ("as_strided", "as_strided_"):
            raise NotFunctionalizable("as_strided views address the storage directly")
        parent = self.tensor.get(n.meta["view_of"], n.meta["view_of"])
        pb = self.base.get(parent)
        base, chain = (parent, []) if pb is None else pb
        new = self._copy_view(n, self.val(parent))
        self.tensor[n] = n
        self.base[n] = (base, chain + [n])
        self.cur[n] = new
        self.seen[n] = self.version.get(base, 0)

    def _mutation(self, n: Node) -> None:
        op = n.target
        targets = [self.tensor.get(m, m) for m in n.meta["mutated"]]
        for m in n.meta["mutated"]:
            before, after = m.meta.get("val"), n.meta.get("val")
            if not isinstance(after, tuple) and (before is None or before.shape != after.shape):
                raise NotFunctionalizable("an out= tensor is resized")
        if isinstance(op, OpDef) and op.meta is None:  # pointwise: the out-of-place op
            (t,) = targets
            kwargs = dict(n.kwargs)
            kwargs.pop("inplace", None)
            kwargs.pop("out", None)
            new = self.g.create_node("call_function", op, self._arg(n.args), self._arg(kwargs),
                                     name=n.name)
            new.meta = {k: x for k, x in n.meta.items() if k not in ("mutates", "mutated")}
            want = n.meta["val"]
            have = self._result_dtype(op, n)
            if have is not None and have is not want.dtype:
                new = self.g.call_function(_C.to_copy_op, (new,), {"dtype": want.dtype,
                                                                   "device": want.device})
                new.meta["val"] = want
            self._assign(t, new)
            self.tensor[n] = t
            return
        # any other in-place op writes private clones of its targets
        privates = {}
        for t in targets:
            c = self.g.call_function(_C.clone_op, (self.val(t),))
            c.meta["val"] = n.meta["val"][len(privates)] if isinstance(n.meta["val"], tuple) \
                else n.meta["val"]
            privates[t] = c
        args = tuple(privates.get(self.tensor.get(a, a), None) or self._arg(a)
                     if isinstance(a, Node) else self._arg(a) for a in n.args)
        new = self.g.create_node("call_function", op, args, self._arg(n.kwargs), name=n.name)
        new.meta = {k: x for k, x in n.meta.items() if k != "mutated"}
        new.meta["mutates"] = True  # a private clone: kept by dead-code elimination
        for t, c in privates.items():
            self._assign(t, c)
        if len(targets) == 1:
            self.tensor[n] = targets[0]

    @staticmethod
    def _result_dtype(op: OpDef, n: Node):
        vals = tuple(a.meta.get("val") if isinstance(a, Node) else a for a in n.args)
        try:
            return dispatch.resolve_dtypes(op, vals)[2]
        except Exception:  # noqa: BLE001  (the eager call ran: it cannot fail here)
            return None

    def _assign(self, t: Node, value: Node) -> None:
        """Tensor ``t`` now holds ``value``; through a view, its base is rewritten."""
        b = self.base.get(t)
        if b is None:
            self.cur[t] = value
            self.version[t] = self.version.get(t, 0) + 1
            if t.op == "placeholder" and t not in self.written:
                self.written.append(t)
            return
        base, chain = b
        priv = self.g.call_function(_C.clone_op, (self.val(base),))
        priv.meta["val"] = base.meta.get("val")
        view = self._replay(base, chain, priv)
        cp = self.g.call_function(_C.copy_inplace_op, (view, value))
        cp.meta.update(mutates=True, scatter=True, val=view.meta.get("val"))
        self.cur[base] = priv
        self.version[base] = self.version.get(base, 0) + 1
        if base.op == "placeholder" and base not in self.written:
            self.written.append(base)
        self.cur[t] = value
        self.seen[t] = self.version[base]

    def _write_back(self) -> None:
        """Each written graph input gets its final value, in place, as eager leaves it."""
        for p in self.written:
            new = self.g.call_function(_C.copy_inplace_op, (self.placeholders[p], self.cur[p]))
            val = p.meta.get("val")
            new.meta.update(mutates=True, mutated=[self.placeholders[p]], val=val)
            if val is not None and val.requires_grad:  # a parameter's update: under no_grad
                new.meta["grad_enabled"] = False
            self.cur[p] = new  # the input itself, written
            self.version[p] = self.version.get(p, 0) + 1

    def _result(self, node: Node) -> Node:
        return self.val(node)
