"""The graph IR: ``Graph`` of ``Node``s in torch.fx's public shape.

A node's ``op`` is one of placeholder, get_attr, call_function, call_method, call_module,
output; ``target`` is what it calls (an ``OpDef`` for traced ops: OpDefs are callable, so
``node.target(*args, **kwargs)`` runs the op through dispatch, as a torch op overload does);
``args``/``kwargs`` refer to other nodes; ``meta["val"]`` is a meta tensor (shape, dtype,
strides, device, requires_grad) or a tuple of them. Users' passes and backends written for
torch.fx carry over: ``graph.nodes``, ``node.users``, ``inserting_before``,
``replace_all_uses_with``, ``erase_node``, ``lint``, ``print_tabular``.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable

from ..kernels.registry import OpDef
from ..tensor import Tensor

_OPS = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")


class Node:
    """One value of the program: an input, an op call, or the output."""

    def __init__(self, graph: Graph, name: str, op: str, target, args: tuple, kwargs: dict) -> None:
        if op not in _OPS:
            raise ValueError(f"unknown node op {op!r}: expected one of {_OPS}")
        self.graph, self.name, self.op, self.target = graph, name, op, target
        self._args: tuple = ()
        self._kwargs: dict = {}
        self.users: dict[Node, None] = {}
        self.meta: dict = {}
        self._prev: Node | None = None
        self._next: Node | None = None
        self._erased = False
        self._update(args, kwargs)

    # -- arguments and uses ---------------------------------------------------------------
    @property
    def args(self) -> tuple:
        return self._args

    @args.setter
    def args(self, value) -> None:
        self._update(tuple(value), self._kwargs)

    @property
    def kwargs(self) -> dict:
        return self._kwargs

    @kwargs.setter
    def kwargs(self, value) -> None:
        self._update(self._args, dict(value))

    @property
    def all_input_nodes(self) -> list[Node]:
        seen: dict[Node, None] = {}
        map_arg((self._args, self._kwargs), lambda n: seen.setdefault(n))
        return list(seen)

    def _update(self, args: tuple, kwargs: dict) -> None:
        for n in self.all_input_nodes if self._args or self._kwargs else ():
            n.users.pop(self, None)
        self._args, self._kwargs = args, kwargs
        for n in self.all_input_nodes:
            n.users[self] = None

    def replace_all_uses_with(self, other: Node) -> list[Node]:
        """Every user of this node reads ``other`` instead; returns those users."""
        users = list(self.users)
        for u in users:
            u._update(map_arg(u._args, lambda n: other if n is self else n),
                      map_arg(u._kwargs, lambda n: other if n is self else n))
        return users

    def replace_input_with(self, old: Node, new: Node) -> None:
        self._update(map_arg(self._args, lambda n: new if n is old else n),
                     map_arg(self._kwargs, lambda n: new if n is old else n))

    # -- order ----------------------------------------------------------------------------
    @property
    def next(self) -> Node | None:
        return self._next

    @property
    def prev(self) -> Node | None:
        return self._prev

    def prepend(self, node: Node) -> None:
        """Move ``node`` to just before this one."""
        self.graph._unlink(node)
        self.graph._link_before(node, self)

    def append(self, node: Node) -> None:
        """Move ``node`` to just after this one."""
        self.graph._unlink(node)
        nxt = self._next
        if nxt is None:
            self.graph._link_last(node)
        else:
            self.graph._link_before(node, nxt)

    def format_node(self) -> str:
        val = self.meta.get("val")
        ann = f": {describe(val)}" if val is not None else ""
        if self.op == "placeholder":
            return f"%{self.name}{ann} = placeholder[target={self.target}]"
        if self.op == "output":
            return f"return {_fmt_arg(self._args[0])}"
        args = ", ".join([_fmt_arg(a) for a in self._args]
                         + [f"{k}={_fmt_arg(v)}" for k, v in self._kwargs.items()])
        return f"%{self.name}{ann} = {self.op}[target={target_name(self.target)}]({args})"

    def __repr__(self) -> str:
        return self.name


class _NodeList:
    """The graph's nodes in program order (a view that tolerates erasure while iterating)."""

    def __init__(self, graph: Graph, reverse: bool = False) -> None:
        self.graph, self.reverse = graph, reverse

    def __iter__(self):
        n = self.graph._last if self.reverse else self.graph._first
        while n is not None:
            nxt = n._prev if self.reverse else n._next
            if not n._erased:
                yield n
            n = nxt

    def __len__(self) -> int:
        return self.graph._len

    def __reversed__(self):
        return iter(_NodeList(self.graph, not self.reverse))


class Graph:
    """A program as a list of nodes (SSA: each node defined once, before its uses)."""

    def __init__(self) -> None:
        self._first: Node | None = None
        self._last: Node | None = None
        self._len = 0
        self._names: dict[str, int] = {}
        self._insert: tuple | None = None  # (before_node or None for the end)
        self.owning_module = None
        self.symbols: list = []  # (name, placeholder node, dim): dynamic sizes it reads
        # its results go to one consumer that holds no other reference (a backward graph's
        # gradients, to the autograd engine): a result may become any new value it computes
        self.results_fresh = False

    @property
    def nodes(self) -> _NodeList:
        return _NodeList(self)

    # -- creating nodes -------------------------------------------------------------------
    def create_node(self, op: str, target, args: tuple = (), kwargs: dict | None = None,
                    name: str | None = None) -> Node:
        node = Node(self, self._unique(name or _default_name(op, target)), op, target,
                    tuple(args), dict(kwargs or {}))
        before = self._insert
        if before is None:
            self._link_last(node)
        else:
            self._link_before(node, before)
        return node

    def placeholder(self, name: str, type_expr=None, default_value=None) -> Node:
        node = self.create_node("placeholder", name, name=name)
        node.target = node.name
        return node

    def get_attr(self, qualified_name: str) -> Node:
        return self.create_node("get_attr", qualified_name)

    def call_function(self, the_function: Callable, args: tuple = (), kwargs: dict | None = None
                      ) -> Node:
        return self.create_node("call_function", the_function, args, kwargs)

    def call_method(self, method_name: str, args: tuple = (), kwargs: dict | None = None) -> Node:
        return self.create_node("call_method", method_name, args, kwargs)

    def call_module(self, module_name: str, args: tuple = (), kwargs: dict | None = None) -> Node:
        return self.create_node("call_module", module_name, args, kwargs)

    def output(self, result) -> Node:
        return self.create_node("output", "output", (result,))

    def inserting_before(self, node: Node | None = None):
        return _InsertPoint(self, node)

    def inserting_after(self, node: Node | None = None):
        return _InsertPoint(self, node._next if node is not None else self._first,
                            at_end=node is not None and node._next is None)

    def erase_node(self, node: Node) -> None:
        if node.users:
            raise RuntimeError(f"Tried to erase Node {node} but it still had {len(node.users)} "
                               f"users in the graph: {dict(node.users)}!")
        node._update((), {})
        self._unlink(node)
        node._erased = True

    def node_copy(self, node: Node, arg_transform: Callable = lambda n: n) -> Node:
        new = self.create_node(node.op, node.target, map_arg(node.args, arg_transform),
                               map_arg(node.kwargs, arg_transform), name=node.name)
        new.meta = dict(node.meta)
        return new

    def copy(self) -> Graph:
        """A new graph of copies of these nodes (their meta shared shallowly): a pass can
        rewrite it while this one stays as traced (the compile cache compares traced graphs)."""
        g = Graph()
        env: dict = {}
        for n in self.nodes:
            new = env[n] = g.node_copy(n, lambda a: env[a])
            if "view_of" in new.meta:  # node references in meta: the copy's nodes
                new.meta["view_of"] = env.get(new.meta["view_of"], new.meta["view_of"])
            if "mutated" in new.meta:
                new.meta["mutated"] = [env.get(m, m) for m in new.meta["mutated"]]
        g.symbols = [(s, env[p], d) for s, p, d in self.symbols]
        g.results_fresh = self.results_fresh
        return g

    def eliminate_dead_code(self) -> bool:
        """Drop nodes nobody uses that have no effect (ops that write their inputs stay)."""
        changed = False
        for node in reversed(self.nodes):
            if node.op in ("placeholder", "output") or node.users or is_impure(node):
                continue
            self.erase_node(node)
            changed = True
        return changed

    # -- checking and printing -----------------------------------------------------------
    def lint(self) -> None:
        """Verify the graph: known ops, unique names, each argument defined before its use and
        in this graph, users consistent with arguments, exactly one output at the end."""
        seen: set = set()
        names: set = set()
        outputs = 0
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node {node} does not belong to this graph")
            if node.op not in _OPS:
                raise RuntimeError(f"Node {node} has unknown op {node.op!r}")
            if node.name in names:
                raise RuntimeError(f"Node name {node.name!r} is not unique")
            names.add(node.name)
            for a in node.all_input_nodes:
                if a._erased or a.graph is not self:
                    raise RuntimeError(f"Node {node} reads {a}, which is not in this graph")
                if a not in seen:
                    raise RuntimeError(f"Node {node} reads {a} before it is defined")
                if node not in a.users:
                    raise RuntimeError(f"Node {a} does not list its user {node}")
            for u in node.users:
                if node not in u.all_input_nodes:
                    raise RuntimeError(f"Node {node} lists {u} as a user, which does not read it")
            if node.op == "call_function" and not callable(node.target):
                raise RuntimeError(f"Node {node} calls {node.target!r}, which is not callable")
            if node.op == "output":
                outputs += 1
            elif outputs:
                raise RuntimeError(f"Node {node} comes after the output")
            seen.add(node)
        if outputs != 1:
            raise RuntimeError(f"Graph has {outputs} output nodes; expected 1")

    def print_tabular(self) -> None:
        rows = [("opcode", "name", "target", "args", "kwargs")]
        for n in self.nodes:
            rows.append((n.op, n.name, target_name(n.target) if n.op != "placeholder" else n.target,
                         _fmt_arg(n.args), _fmt_arg(n.kwargs)))
        widths = [max(len(str(r[i])) for r in rows) for i in range(5)]
        lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
        lines.insert(1, "  ".join("-" * w for w in widths))
        print("\n".join(lines))

    def __str__(self) -> str:
        ins = [n for n in self.nodes if n.op == "placeholder"]
        head = ", ".join(f"{n.name}: {describe(n.meta.get('val'))}" if "val" in n.meta else n.name
                         for n in ins)
        lines = [f"graph({head}):"]
        for n in self.nodes:
            if n.op == "placeholder":
                continue
            if n.op == "output":
                lines.append(f"  return {_fmt_arg(n.args[0])}")
                continue
            val = n.meta.get("val")
            ann = f": {describe(val)}" if val is not None else ""
            args = ", ".join([_fmt_arg(a) for a in n.args]
                             + [f"{k}={_fmt_arg(v)}" for k, v in n.kwargs.items()])
            lines.append(f"  %{n.name}{ann} = {target_name(n.target)}({args})")
        return "\n".join(lines)

    __repr__ = __str__

    # -- the linked list ------------------------------------------------------------------
    def _unique(self, name: str) -> str:
        base = _sanitize(name)
        k = self._names.get(base)
        if k is None:
            self._names[base] = 0
            return base
        while True:
            k += 1
            cand = f"{base}_{k}"
            if cand not in self._names:
                self._names[base] = k
                self._names[cand] = 0
                return cand

    def _link_last(self, node: Node) -> None:
        node._prev, node._next = self._last, None
        if self._last is None:
            self._first = node
        else:
            self._last._next = node
        self._last = node
        self._len += 1

    def _link_before(self, node: Node, before: Node) -> None:
        node._prev, node._next = before._prev, before
        if before._prev is None:
            self._first = node
        else:
            before._prev._next = node
        before._prev = node
        self._len += 1

    def _unlink(self, node: Node) -> None:
        if node._prev is None:
            self._first = node._next
        else:
            node._prev._next = node._next
        if node._next is None:
            self._last = node._prev
        else:
            node._next._prev = node._prev
        node._prev = node._next = None
        self._len -= 1


class _InsertPoint:
    def __init__(self, graph: Graph, node: Node | None, at_end: bool = False) -> None:
        self.graph, self.node = graph, None if at_end else node
        self.prev = graph._insert

    def __enter__(self):
        self.graph._insert = self.node
        return self

    def __exit__(self, *exc) -> None:
        self.graph._insert = self.prev


# -- helpers ---------------------------------------------------------------------------------

def arg_vals(args) -> list:
    """The traced values of arguments (``meta["val"]`` of nodes, other values as they are)."""
    return [a.meta.get("val") if isinstance(a, Node) else a for a in args]


def map_arg(a, fn: Callable):
    """Apply ``fn`` to every Node inside ``a`` (nested tuples, lists, dicts, slices)."""
    if isinstance(a, Node):
        return fn(a)
    if isinstance(a, tuple):
        return tuple(map_arg(x, fn) for x in a)
    if isinstance(a, list):
        return [map_arg(x, fn) for x in a]
    if isinstance(a, dict):
        return {k: map_arg(v, fn) for k, v in a.items()}
    if isinstance(a, slice):
        return slice(map_arg(a.start, fn), map_arg(a.stop, fn), map_arg(a.step, fn))
    return a


def is_impure(node: Node) -> bool:
    """Nodes that write memory or draw random numbers: never dropped or merged."""
    if node.op != "call_function":
        return node.op in ("call_module", "call_method")
    t = node.target
    if isinstance(t, OpDef):
        return bool(node.meta.get("mutates")) or t.family == "random" or t.name in _RANDOM
    return False


_RANDOM = frozenset(["rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial",
                     "uniform_", "normal_", "bernoulli_", "random_", "exponential_",
                     "geometric_", "cauchy_", "log_normal_", "dropout", "native_dropout",
                     "rrelu_with_noise", "poisson"])


def target_name(t) -> str:
    if isinstance(t, OpDef):
        return t.name
    if t is operator.getitem:
        return "getitem"
    if isinstance(t, str):
        return t
    return getattr(t, "__qualname__", None) or getattr(t, "__name__", repr(t))


def _default_name(op: str, target) -> str:
    if op == "output":
        return "output"
    return target_name(target).split(".")[-1]


def _sanitize(name: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    if not out or out[0].isdigit():
        out = "_" + out
    if out in _RESERVED:
        out += "_1"
    return out


_RESERVED = frozenset(["self", "None", "True", "False", "def", "return", "lambda", "class", "if",
                       "else", "for", "in", "is", "not", "and", "or", "del", "global", "pass",
                       "import", "from", "as", "with", "while", "try", "except", "raise",
                       "yield", "assert", "break", "continue", "finally", "elif", "nonlocal",
                       "async", "await", "aten", "torch", "_gs", "_g0"])


def describe(val) -> str:
    """``f32[2, 3]`` for a tensor value (tuples of them in parentheses)."""
    if isinstance(val, Tensor):
        dims = ",".join(getattr(d, "expr", None) or str(d) for d in val.shape)  # symbols by name
        return f"{_SHORT.get(val.dtype.name, val.dtype.name)}[{dims}]"
    if isinstance(val, (tuple, list)):
        return "(" + ", ".join(describe(v) for v in val) + ")"
    return type(val).__name__


_SHORT = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
          "int64": "i64", "int32": "i32", "int16": "i16", "int8": "i8", "uint8": "u8",
          "bool": "b8", "complex64": "c64", "complex128": "c128"}


def _fmt_arg(a) -> str:
    if isinstance(a, Node):
        return f"%{a.name}"
    if isinstance(a, tuple):
        inner = ", ".join(_fmt_arg(x) for x in a)
        return f"({inner},)" if len(a) == 1 else f"({inner})"
    if isinstance(a, list):
        return "[" + ", ".join(_fmt_arg(x) for x in a) + "]"
    if isinstance(a, dict):
        return "{" + ", ".join(f"{k!r}: {_fmt_arg(v)}" for k, v in a.items()) + "}"
    if isinstance(a, float) and not math.isfinite(a):
        return repr(a)
    return repr(a)

