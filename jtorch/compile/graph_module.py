"""``GraphModule``: a graph as a module whose ``forward`` is generated Python.

The generated source is ordinary Python (``.code``), registered with ``linecache`` so
tracebacks and pdb show it; each op node is one line calling its OpDef through ``aten``
(``aten.sin(x)`` is ``REGISTRY["sin"]``, run through dispatch as in eager mode). Constants
that have no literal spelling (dtypes, devices, arrays) are named globals of the generated
function.
"""

from __future__ import annotations

import itertools
import linecache
import math
import operator

from .. import dtypes as _dt
from ..kernels.registry import REGISTRY, OpDef
from ..nn.modules.module import Module
from .graph import Graph, Node, _sanitize, target_name
from .symbolic import SymInt, names_in


class _Aten:
    """``aten.<name>``: the registry's OpDefs by name, as generated code spells them."""

    def __getattr__(self, name: str) -> OpDef:
        try:
            op = REGISTRY[name]
        except KeyError:
            raise AttributeError(f"no op named {name!r}") from None
        object.__setattr__(self, name, op)  # later lookups are plain attribute reads
        return op

    def __repr__(self) -> str:
        return "aten"


aten = _Aten()
_counter = itertools.count()


def python_code(graph: Graph, name: str = "forward") -> tuple[str, dict]:
    """(source of ``def forward(self, <placeholders>)``, the globals it needs)."""
    glb: dict = {"aten": aten, "getitem": operator.getitem}
    consts: dict = {}
    symbols = [(s, n, d) for s, n, d in graph.symbols if not n._erased]
    defined = {s for s, _, _ in symbols}
    used: set = set()

    def const(v) -> str:
        if isinstance(v, SymInt):  # a dynamic size: its expression over the inputs' sizes
            names = names_in(v.expr)
            if names <= defined:
                used.update(names)
                return v.expr
            return repr(int.__int__(v))
        if v is None or isinstance(v, (bool, int, str)) or v is Ellipsis:
            return repr(v)
        if isinstance(v, float):
            return repr(v) if math.isfinite(v) else f"float({str(v)!r})"
        if isinstance(v, Node):
            return v.name
        if isinstance(v, tuple):
            inner = ", ".join(const(x) for x in v)
            return f"({inner},)" if len(v) == 1 else f"({inner})"
        if isinstance(v, list):
            return "[" + ", ".join(const(x) for x in v) + "]"
        if isinstance(v, dict) and all(isinstance(k, str) for k in v):
            return "{" + ", ".join(f"{k!r}: {const(x)}" for k, x in v.items()) + "}"
        if isinstance(v, slice):
            return f"slice({const(v.start)}, {const(v.stop)}, {const(v.step)})"
        if isinstance(v, _dt.dtype):
            glb.setdefault("torch", _torch_ns())
            return f"torch.{v.name}"
        key = id(v)
        if key not in consts:
            cname = f"_c{len(consts)}_{_sanitize(type(v).__name__.lower())}"
            consts[key] = cname
            glb[cname] = v
        return consts[key]

    params = [n.name for n in graph.nodes if n.op == "placeholder"]
    # a value is dropped after its last use (``del``): its buffer goes back to the caching
    # allocator while the graph runs, for a later node of the graph to reuse
    last_use: dict = {}
    for n in graph.nodes:
        for a in n.all_input_nodes:
            last_use[a] = n
    dead_after: dict = {}
    for a, n in last_use.items():
        if n.op != "output":
            dead_after.setdefault(n, []).append(a.name)
    body: list[str] = []
    switched = False  # a node runs under another grad mode than the call's (no_grad inside)
    state = None
    ret = "return None"
    for n in graph.nodes:
        if n.op == "placeholder":
            continue
        if n.op == "output":
            ret = f"return {const(n.args[0])}"
            break
        want = n.meta.get("grad_enabled")  # set only where it differs from the call's mode
        if want != state:
            switched = True
            body.append("_gs.enabled = _g0" if want is None else f"_gs.enabled = {want}")
            state = want
        args = [const(a) for a in n.args] + [f"{k}={const(v)}" for k, v in n.kwargs.items()]
        if n.op == "call_function":
            t = n.target
            if t is operator.getitem:
                line = f"{n.name} = {const(n.args[0])}[{const(n.args[1])}]"
            elif isinstance(t, OpDef) and REGISTRY.get(t.name) is t:
                line = f"{n.name} = aten.{t.name}({', '.join(args)})"
            else:
                short = target_name(t).split(".")[-1]
                if getattr(_torch_ns(), short, None) is t:  # a public function: torch.<name>
                    glb.setdefault("torch", _torch_ns())
                    fname = f"torch.{short}"
                else:  # another callable: a named global that no node name can shadow
                    fname = f"_fn_{_sanitize(short)}"
                    if glb.get(fname, t) is not t:
                        fname = f"{fname}_{id(t)}"
                    glb[fname] = t
                line = f"{n.name} = {fname}({', '.join(args)})"
        elif n.op == "call_method":
            line = f"{n.name} = {args[0]}.{n.target}({', '.join(args[1:])})"
        elif n.op == "call_module":
            line = f"{n.name} = self.{n.target}({', '.join(args)})"
        else:  # get_attr
            line = f"{n.name} = self.{n.target}"
        body.append(line)
        if n in dead_after:
            body.append(f"del {', '.join(dead_after[n])}")
    if switched:
        glb["_gs"] = _grad_state()
        body = ["_g0 = _gs.enabled", "try:", *["    " + b for b in body], f"    {ret}",
                "finally:", "    _gs.enabled = _g0"]
    else:
        body.append(ret)
    body = [f"{s} = {n.name}.size({d})" for s, n, d in symbols if s in used] + body
    src = f"def {name}(self{''.join(', ' + p for p in params)}):\n"
    src += "".join(f"    {line}\n" for line in body)
    return src, glb


def _grad_state():
    from ..dispatch import grad_state

    return grad_state


def _torch_ns():
    import jtorch

    return jtorch


class GraphModule(Module):
    """A module that runs a graph: ``forward`` is generated from ``graph`` (``.code``)."""

    def __init__(self, root, graph: Graph, class_name: str = "GraphModule") -> None:
        super().__init__()
        self.__class__ = type(class_name, (GraphModule,), {})
        if isinstance(root, Module):
            for n in graph.nodes:
                if n.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, n.target)
        elif isinstance(root, dict):
            for k, v in root.items():
                _set_qualified(self, k, v)
        self.graph = graph

    @property
    def graph(self) -> Graph:
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        object.__setattr__(self, "_graph", g)
        g.owning_module = self
        self.recompile()

    def recompile(self) -> str:
        """Regenerate ``forward`` from the graph (after a pass changed it)."""
        src, glb = python_code(self._graph)
        fname = f"<jtorch_graph_{next(_counter)}>"
        linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
        exec(compile(src, fname, "exec"), glb)  # noqa: S102  (generated from our own graph)
        object.__setattr__(self, "_code", src)
        object.__setattr__(self, "_forward", glb["forward"])
        return src

    @property
    def code(self) -> str:
        return self._code

    def forward(self, *args):
        return self._forward(self, *args)

    def __call__(self, *args, **kwargs):
        if kwargs or self._forward_pre_hooks or self._forward_hooks:
            return super().__call__(*args, **kwargs)
        return self._forward(self, *args)

    def print_readable(self, print_output: bool = True) -> str:
        name = type(self).__name__
        text = f"class {name}(jtorch.nn.Module):\n" + "".join(
            f"    {line}\n" for line in self._code.splitlines())
        ann = {n.name: n.meta.get("val") for n in self._graph.nodes}
        lines = []
        for line in text.splitlines():
            stripped = line.strip()
            head = stripped.split(" = ", 1)[0]
            if " = " in stripped and head in ann and ann[head] is not None:
                from .graph import describe

                line = f"{line}  # {describe(ann[head])}"
            lines.append(line)
        text = "\n".join(lines) + "\n"
        if print_output:
            print(text)
        return text

    def __repr__(self) -> str:
        return f"{type(self).__name__}()\n\n\n\n{self._code}"


def subgraph_module(nodes: list, inputs: list, outputs: list) -> GraphModule:
    """The nodes of a group as a module of their own: ``inputs`` (nodes, or Python values
    standing in the group's calls) become placeholders ``in0``, ``in1``..., ``outputs`` its
    results (the eager path of a fused kernel)."""
    sub = Graph()
    phs = [sub.placeholder(f"in{j}") for j in range(len(inputs))]
    env = {a: phs[j] for j, a in enumerate(inputs) if isinstance(a, Node)}
    for n in nodes:
        env[n] = sub.node_copy(n, lambda a: env[a])
    sub.output(tuple(env[o] for o in outputs))
    return GraphModule(None, sub)


def _copy_attr(src, dst, qualname: str) -> None:
    *path, last = qualname.split(".")
    for p in path:
        src = getattr(src, p)
    _set_qualified(dst, qualname, getattr(src, last))


def _set_qualified(dst, qualname: str, value) -> None:
    *path, last = qualname.split(".")
    for p in path:
        nxt = getattr(dst, p, None)
        if nxt is None:
            nxt = Module()
            setattr(dst, p, nxt)
        dst = nxt
    setattr(dst, last, value)

