"""Graph passes the "numba" backend runs before fusion: common-subexpression elimination,
algebraic simplification and dead-code elimination. Each keeps the graph valid (``lint``)
and its results those of the Interpreter on the graph before it (the sweep checks)."""

from __future__ import annotations

from ..kernels.registry import OpDef
from ..tensor import Tensor
from .graph import Graph, Node, is_impure


def run(graph: Graph) -> Graph:
    """The passes, on a graph without mutation (where a node writes memory, two equal
    expressions may be two buffers that later differ: merging them is left out)."""
    if not any(n.meta.get("mutates") for n in graph.nodes):
        eliminate_common_subexpressions(graph)
        simplify(graph)
    graph.eliminate_dead_code()
    graph.lint()
    return graph


def _key(v):
    """A hashable stand-in for an argument (nodes by identity, floats by bits: -0.0 is not 0.0
    and a nan equals itself here)."""
    if isinstance(v, Node):
        return ("n", id(v))
    if isinstance(v, (tuple, list)):
        return (type(v).__name__, tuple(_key(x) for x in v))
    if isinstance(v, dict):
        return ("d", tuple((k, _key(x)) for k, x in v.items()))
    if isinstance(v, float):
        return ("f", v.hex())
    if isinstance(v, slice):
        return ("s", _key(v.start), _key(v.stop), _key(v.step))
    try:
        hash(v)
    except TypeError:
        return ("id", id(v))
    return (type(v).__name__, v)


def eliminate_common_subexpressions(graph: Graph) -> int:
    """Nodes that call the same pure op on the same arguments become one (the first)."""
    seen: dict = {}
    merged = 0
    for n in graph.nodes:
        if n.op != "call_function" or is_impure(n) or n.meta.get("mutates"):
            continue
        k = (id(n.target), _key(n.args), _key(n.kwargs), n.meta.get("grad_enabled"))
        first = seen.get(k)
        if first is None:
            seen[k] = n
            continue
        n.replace_all_uses_with(first)
        graph.erase_node(n)
        merged += 1
    return merged


# op name -> (the neutral operand, the position it may take): x * 1, 1 * x, x / 1, x - 0
_NEUTRAL = {"mul": (1, (0, 1)), "div": (1, (1,)), "sub": (0, (1,))}


def simplify(graph: Graph) -> int:
    """x * 1, x / 1, x - 0 and -(-x) are x where that changes nothing eager would show: the
    same dtype and shape, and not a graph result (eager returns a new tensor, not ``x``).
    (x + 0 stays: -0.0 + 0 is +0.0.)"""
    out = [n for n in graph.nodes if n.op == "output"]
    results = set(out[0].all_input_nodes) if out else set()
    done = 0
    for n in list(graph.nodes):
        if n.op != "call_function" or not isinstance(n.target, OpDef) or n.kwargs or \
                n in results or is_impure(n):
            continue
        x = None
        name = n.target.name
        if name in _NEUTRAL and len(n.args) == 2:
            neutral, positions = _NEUTRAL[name]
            for p in positions:
                other = n.args[1 - p]
                if type(n.args[p]) in (int, float) and n.args[p] == neutral and \
                        isinstance(other, Node):
                    x = other
        elif name == "neg" and isinstance(n.args[0], Node) and n.args[0].op == "call_function" \
                and getattr(n.args[0].target, "name", None) == "neg" and not n.args[0].kwargs:
            x = n.args[0].args[0]
        if x is None or not _same_value_type(x, n):
            continue
        n.replace_all_uses_with(x)
        graph.erase_node(n)
        done += 1
    return done


def _same_value_type(x: Node, n: Node) -> bool:
    a, b = x.meta.get("val"), n.meta.get("val")
    return isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype is b.dtype and \
        tuple(a.shape) == tuple(b.shape) and a.requires_grad == b.requires_grad
