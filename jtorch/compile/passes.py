"""Graph passes the "numba" backend runs before fusion: common-subexpression elimination,
view-chain simplification, tensors of one known value made numbers, algebraic
simplification, constant folding and dead-code elimination. Each keeps the graph valid
(``lint``) and its results those of the Interpreter on the graph before it (the sweep
checks).

None of them may change what a caller sees of a result: values, dtype, shape, strides, and
aliasing (a result is a new tensor where eager's is, a view of the same storage where eager's
is). ``_aliased_by_results`` names the nodes a caller holds through the results.
"""

from __future__ import annotations

import operator
import warnings

from .. import dispatch
from .. import dtypes as _dt
from ..kernels.plan import View
from ..kernels.registry import REGISTRY, OpDef
from ..shape import contiguous_strides
from ..tensor import Tensor
from .graph import Graph, Node, is_impure, map_arg
from .symbolic import SymInt

_TO_COPY = REGISTRY["_to_copy"]
_FLOAT_CASTS = {(_dt.float32, _dt.float64): REGISTRY["_to_float64"],
                (_dt.float64, _dt.float32): REGISTRY["_to_float32"]}


def run(graph: Graph) -> Graph:
    """The passes, on a graph without mutation (where a node writes memory, two equal
    expressions may be two buffers that later differ, and a constant may be written: merging
    and folding are left out)."""
    if not any(n.meta.get("mutates") for n in graph.nodes):
        eliminate_common_subexpressions(graph)
        simplify_views(graph)
        scalar_operands(graph)
        simplify(graph)
        fold_constants(graph)
    float_casts(graph)
    graph.eliminate_dead_code()
    graph.lint()
    return graph


def float_casts(graph: Graph) -> int:
    """A ``_to_copy`` that only converts a row-major float32 value to float64, or back, is the
    pointwise op ``_to_float64`` (``_to_float32``): the same values and layout, and fusion
    then inlines the conversion into its neighbours' loop, where the copy was a kernel and a
    buffer of its own (float32 moments squared in float64: a float64 copy of every row)."""
    done = 0
    for n in graph.nodes:
        if n.op != "call_function" or n.target is not _TO_COPY or len(n.args) != 1 or \
                "grad_enabled" in n.meta or set(n.kwargs) - {"dtype", "device", "memory_format"}:
            continue
        x, val = n.args[0], n.meta.get("val")
        xv = x.meta.get("val") if isinstance(x, Node) else None
        if not isinstance(xv, Tensor) or not isinstance(val, Tensor):
            continue
        kw = n.kwargs
        to = _FLOAT_CASTS.get((xv.dtype, kw.get("dtype")))
        if to is None or kw.get("memory_format") is not None or \
                kw.get("device", xv.device) != xv.device or not xv.is_contiguous() or \
                not val.is_contiguous() or val.dtype is not kw["dtype"]:
            continue
        n.target, n.kwargs = to, {}
        done += 1
    return done


def _results(graph: Graph) -> set:
    out = [n for n in graph.nodes if n.op == "output"]
    return set(out[0].all_input_nodes) if out else set()


def _add_aliases(aliased: set, n) -> None:
    while isinstance(n, Node) and n not in aliased:
        aliased.add(n)
        n = n.meta.get("view_of")


def _aliased_by_results(graph: Graph) -> set:
    """The results and the nodes whose memory they view (``meta["view_of"]``, transitively):
    the caller holds these, so none may become another of them or a graph input."""
    aliased: set = set()
    for r in _results(graph):
        _add_aliases(aliased, r)
    return aliased


def _aliased_by_others(n: Node) -> set:
    """What the results other than ``n`` hold (see ``_aliased_by_results``)."""
    aliased: set = set()
    for r in _results(n.graph):
        if r is not n:
            _add_aliases(aliased, r)
    return aliased


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
    """Nodes that call the same pure op on the same arguments become one (the first), unless
    both reach the caller: eager returns ``x * 2, x * 2`` as two tensors, and writing one must
    not change the other."""
    aliased = _aliased_by_results(graph)
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
        if n in aliased:
            if first in aliased:
                continue
            _add_aliases(aliased, first)
        n.replace_all_uses_with(first)
        graph.erase_node(n)
        merged += 1
    return merged


def _scalar_value(n):
    """The one value of a node that is a ``full`` of it (of any size), or an ``expand`` or a
    ``neg`` of such a node, as a Python int or float of the node's dtype; None otherwise (and
    for bool and complex values)."""
    if not isinstance(n, Node) or n.op != "call_function" or not isinstance(n.target, OpDef) \
            or is_impure(n) or n.meta.get("mutates"):
        return None
    val = n.meta.get("val")
    if not isinstance(val, Tensor) or val.dtype.is_complex or val.dtype.category < 1:
        return None
    name = n.target.name
    if name == "full" and not n.args:
        v = n.kwargs.get("fill_value")
        if type(v) not in (int, float):
            return None
        return float(v) if val.dtype.is_floating_point else v if type(v) is int else None
    if name in ("expand", "neg") and len(n.args) == 1:
        v = _scalar_value(n.args[0])
        if v is None or name == "expand" and set(n.kwargs) - {"size", "implicit"}:
            return None
        return -v if name == "neg" else v
    return None


_SCALAR_OPS = {"mul": True, "add": True, "sub": False, "div": False}  # name -> commutes


def scalar_operands(graph: Graph) -> int:
    """A tensor of one known value (a unit-seeded backward's ``expand(full((), 1))``, and its
    negation) as an operand of mul, add, sub or div whose other operand already has the
    result's dtype and shape becomes that Python number: the same values (the dtypes agree,
    so promotion does not change), and ``simplify`` then drops ``x * 1``. The number goes in
    the second place (mul and add swap their operands: exact in IEEE arithmetic)."""
    done = 0
    for n in list(graph.nodes):
        if n.op != "call_function" or not isinstance(n.target, OpDef) or n.kwargs or \
                len(n.args) != 2 or n.target.name not in _SCALAR_OPS:
            continue
        val = n.meta.get("val")
        if not isinstance(val, Tensor):
            continue
        commutes = _SCALAR_OPS[n.target.name]
        for p in ((1, 0) if commutes else (1,)):
            other = n.args[1 - p]
            v = _scalar_value(n.args[p])
            if v is None or not isinstance(other, Node):
                continue
            ov = other.meta.get("val")
            sv = n.args[p].meta["val"]
            if not isinstance(ov, Tensor) or ov.dtype is not val.dtype or \
                    sv.dtype is not val.dtype or tuple(ov.shape) != tuple(val.shape):
                continue
            n.args = (other, v)
            done += 1
            break
    return done


# op name -> (the neutral operand, the position it may take): x * 1, 1 * x, x / 1, x - 0
_NEUTRAL = {"mul": (1, (0, 1)), "div": (1, (1,)), "sub": (0, (1,))}


def simplify(graph: Graph) -> int:
    """x * 1, x / 1, x - 0 and -(-x) are x where that changes nothing eager would show: the
    same dtype, shape and strides (``x.expand(3, 4) * 1`` is dense, ``x.expand(3, 4)`` is
    not: a later ``view`` would fail), and not reaching the caller (eager returns a new
    tensor, not ``x``). (x + 0 stays: -0.0 + 0 is +0.0.)"""
    aliased = _aliased_by_results(graph)
    done = 0
    for n in list(graph.nodes):
        if n.op != "call_function" or not isinstance(n.target, OpDef) or n.kwargs or \
                n in aliased or is_impure(n):
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
        if x is None or not _same_geometry(x, n):
            continue
        n.replace_all_uses_with(x)
        graph.erase_node(n)
        done += 1
    return done


def _same_value_type(x: Node, n: Node) -> bool:
    a, b = x.meta.get("val"), n.meta.get("val")
    return isinstance(a, Tensor) and isinstance(b, Tensor) and a.dtype is b.dtype and \
        tuple(a.shape) == tuple(b.shape) and a.requires_grad == b.requires_grad


def _same_geometry(x: Node, n: Node) -> bool:
    """``n``'s value can be ``x``'s: dtype, shape, strides, storage offset, requires_grad."""
    if not _same_value_type(x, n):
        return False
    a, b = x.meta["val"], n.meta["val"]
    return a.stride() == b.stride() and a.storage_offset() == b.storage_offset()


# -- view chains ---------------------------------------------------------------------------

def simplify_views(graph: Graph) -> int:
    """Chains of views become one view: permute/transpose/t of one become one permute (none
    where the dims come back in order), unsqueeze(d) then squeeze(d) is the input, and
    view/reshape of a view/reshape is one view/reshape of the first input (a reshape where
    either was). A rewritten node keeps its value's geometry and whether it aliases the
    chain's input (checked with the view rule); a node is replaced by the chain's input only
    where it is no result (eager returns a new tensor object). Graphs with symbolic sizes are
    left as they are: comparing their sizes here would add shape guards."""
    if any(not s[1]._erased for s in graph.symbols):
        return 0
    results = _results(graph)
    done = 0
    for n in list(graph.nodes):
        while not n._erased and _simplify_view(graph, n, results):
            done += 1
    return done


def _simplify_view(graph: Graph, n: Node, results: set) -> bool:
    """One step on ``n``: True where it was rewritten or replaced."""
    p = _perm(n)
    if p is not None:
        x = n.args[0]
        if p == tuple(range(len(p))):
            return _replace(graph, n, x, results)
        q = _perm(x)
        if q is None or not _chainable(x, n, results):
            return False
        dims = tuple(q[i] for i in p)
        base = x.args[0]
        if dims == tuple(range(len(dims))):
            return _replace(graph, n, base, results)
        _rewrite(n, REGISTRY["permute"], base, {"dims": dims}, view=True)
        return True
    if _is(n, "squeeze", {"dim"}) and _is(n.args[0], "unsqueeze", {"dim"}):
        x = n.args[0]
        nd = x.meta["val"].dim()
        d, e = n.kwargs["dim"], x.kwargs["dim"]
        if type(d) is int and type(e) is int and d % nd == e % nd and \
                x.meta.get("grad_enabled") == n.meta.get("grad_enabled"):
            return _replace(graph, n, x.args[0], results)
        return False
    if _view_shape(n) is None:
        return False
    x = n.args[0]
    if tuple(n.meta["val"].shape) == tuple(x.meta["val"].shape) and _replace(graph, n, x, results):
        return True
    if _view_shape(x) is None or not _chainable(x, n, results):
        return False
    return _merge_views(n, x, x.args[0], results)


def _merge_views(n: Node, x: Node, base: Node, results: set) -> bool:
    """``n = view(x = view(base))`` as one view/reshape of ``base``, where the view rule
    gives it the same geometry and aliasing."""
    kw = {"shape": n.kwargs["shape"]}
    if n.kwargs.get("reshape") or x.kwargs.get("reshape"):
        kw["reshape"] = True
    b = base.meta.get("val")
    if not isinstance(b, Tensor):
        return False
    try:
        out = REGISTRY["view"].meta(b, **kw).out
    except Exception:  # noqa: BLE001  (no view fits: leave the chain)
        return False
    view = out.__class__ is View
    was_view = "view_of" in n.meta and "view_of" in x.meta
    if view != was_view or (n in results and not view):  # a result's _base would change
        return False
    strides = out.strides if view or out.strides is not None else contiguous_strides(out.shape)
    v = n.meta["val"]
    if tuple(out.shape) != tuple(v.shape) or tuple(strides) != v.stride() or \
            (out.offset if view else 0) != v.storage_offset():
        return False
    _rewrite(n, REGISTRY["view"], base, kw, view)
    return True


def _is(n, name: str, keys: set) -> bool:
    return isinstance(n, Node) and n.op == "call_function" and isinstance(n.target, OpDef) and \
        n.target.name == name and set(n.kwargs) == keys and len(n.args) == 1 and \
        isinstance(n.args[0], Node) and isinstance(n.args[0].meta.get("val"), Tensor) and \
        isinstance(n.meta.get("val"), Tensor)


def _perm(n) -> tuple | None:
    """The dims a permute/transpose/t node takes its input's dims in (wrapped), else None."""
    if _is(n, "t", set()):
        return tuple(range(n.args[0].meta["val"].dim()))[::-1]
    if _is(n, "permute", {"dims"}):
        dims = n.kwargs["dims"]
        nd = n.args[0].meta["val"].dim()
        if not all(type(d) is int for d in dims) or len(dims) != nd:
            return None
        return tuple(d % nd for d in dims) if nd else ()
    if _is(n, "transpose", {"dim0", "dim1"}):
        a, b = n.kwargs["dim0"], n.kwargs["dim1"]
        nd = n.args[0].meta["val"].dim()
        if type(a) is not int or type(b) is not int:
            return None
        dims = list(range(nd))
        if nd:
            dims[a % nd], dims[b % nd] = b % nd, a % nd
        return tuple(dims)
    return None


def _view_shape(n) -> tuple | None:
    """The shape of a view/reshape node with static sizes, else None."""
    if not (_is(n, "view", {"shape"}) or _is(n, "view", {"shape", "reshape"})):
        return None
    shape = n.kwargs["shape"]
    return tuple(shape) if all(type(s) is int for s in shape) else None


def _chainable(x: Node, n: Node, results: set) -> bool:
    """``n`` (a view of view ``x``) may read ``x``'s input instead: both under one grad mode
    (so the new view needs grad as ``n`` does), and no autograd history a caller can see."""
    if x.meta.get("grad_enabled") != n.meta.get("grad_enabled"):
        return False
    return not (n in results and n.meta["val"].requires_grad)  # grad_fn.next_functions


def _rewrite(n: Node, op: OpDef, base: Node, kwargs: dict, view: bool) -> None:
    n.target = op
    n.args, n.kwargs = (base,), kwargs
    if view:
        n.meta["view_of"] = base
    else:
        n.meta.pop("view_of", None)


def _replace(graph: Graph, n: Node, x: Node, results: set) -> bool:
    """A view of ``x`` with ``x``'s geometry is ``x``, where no caller holds it or, in a graph
    whose results are fresh (a backward's gradients: ``transpose(transpose(mm))`` of a linear
    layer's weight), where ``x`` is new memory no other result holds."""
    if "view_of" not in n.meta or not _same_geometry(x, n):
        return False
    if n in results:
        if not (graph.results_fresh and _new_memory(x) and x not in _aliased_by_others(n)):
            return False
        results.discard(n)
        results.add(x)
    n.replace_all_uses_with(x)
    graph.erase_node(n)
    return True


# the families whose kernels always write a new tensor (in-place and out= calls mutate, and a
# graph that mutates is not simplified)
_NEW_MEMORY = frozenset(["extern", "reduction", "unary", "binary", "ternary", "softmax"])


def _new_memory(x: Node) -> bool:
    return x.op == "call_function" and isinstance(x.target, OpDef) and \
        x.target.family in _NEW_MEMORY and "view_of" not in x.meta and \
        isinstance(x.meta.get("val"), Tensor)


# -- constant folding -----------------------------------------------------------------------

# The most elements a folded constant may hold (its storage, for a view). A folded constant
# stays in memory as long as the compiled function, and each call then reads it instead of
# writing a fill: for big tensors that is no cheaper, only more memory held (inductor keeps
# bare constructor calls for the same reason). What folding saves is the ops' per-call
# dispatch, which dominates only for small tensors: 4096 elements (16 KiB of float32) keeps
# masks, positions, small eyes and tables, and leaves image-sized ``zeros`` as they are.
FOLD_LIMIT = 4096

# ops whose result has no defined value (uninitialised memory): computing them once would turn
# garbage into a promise
_UNINITIALISED = frozenset(["empty", "empty_like", "empty_strided", "new_empty"])


def fold_constants(graph: Graph, limit: int = FOLD_LIMIT) -> int:
    """Nodes computed only from factory ops (``full``, ``arange``, ``eye``...) are computed
    once, here, and read from the module (a ``get_attr`` of a buffer ``_tensor_constantN``, as
    torch.fx and inductor hold constants). Random, uninitialised, mutating or grad-requiring
    nodes never fold, nor anything reading a placeholder or a ``get_attr`` (parameters and
    buffers change between calls). A node folds where a node that still runs reads it, it
    holds at most ``limit`` elements, it is no bare factory call (nothing to save) and no
    caller holds it (a result or a view of one): results stay fresh tensors each call.
    The nodes only the folded ones read are left to dead-code elimination; a graph no module
    owns is left as it is (nowhere to keep the constants)."""
    gm = graph.owning_module
    if gm is None or dispatch.mode is not None:
        return 0
    nodes = list(graph.nodes)
    held = _aliased_by_results(graph)
    bad: set = set()
    while True:
        const: set = set()
        for n in nodes:
            if n not in bad and _foldable(n) and all(a in const for a in n.all_input_nodes):
                const.add(n)
        chosen = _frontier(nodes, const, held, limit)
        env, failed = _evaluate(nodes, chosen)
        if failed is None:
            break
        bad.add(failed)  # it raises or warns, or differs from its traced value: it runs
    for n in chosen:
        name = _free_name(gm)
        gm.register_buffer(name, env[n], persistent=False)
        with graph.inserting_before(n):
            c = graph.get_attr(name)
        c.meta["val"] = n.meta["val"]
        n.replace_all_uses_with(c)
        graph.erase_node(n)
    return len(chosen)


def _foldable(n: Node) -> bool:
    """A call that gives the same value every call when its inputs do."""
    if n.op != "call_function" or n.meta.get("mutates") or is_impure(n):
        return False
    t = n.target
    if t is not operator.getitem and (not isinstance(t, OpDef) or t.name in _UNINITIALISED
                                      or t.data_dependent):
        return False
    if _has_symbol((n.args, n.kwargs)):  # a size read from an input
        return False
    val = n.meta.get("val")
    vals = val if isinstance(val, tuple) else (val,)
    return all(isinstance(v, Tensor) and not v.requires_grad and not _has_symbol(tuple(v.shape))
               for v in vals)


def _has_symbol(a) -> bool:
    found = []

    def visit(v):
        if isinstance(v, SymInt):
            found.append(v)
        elif isinstance(v, (tuple, list)):
            for x in v:
                visit(x)
        elif isinstance(v, dict):
            for x in v.values():
                visit(x)
        elif isinstance(v, slice):
            visit((v.start, v.stop, v.step))

    visit(a)
    return bool(found)


def _frontier(nodes: list, const: set, held: set, limit: int) -> list:
    """The constant nodes to fold: read by a node that still runs, small, no factory call,
    not held by the caller. Walked from the end: a node runs where one of its users does."""
    runs: dict = {}
    chosen = []
    for n in reversed(nodes):
        if n not in const:
            runs[n] = True
        elif not any(runs.get(u, True) for u in n.users):
            runs[n] = False  # only folded nodes read it
        elif n in held or not n.all_input_nodes or not _small(n, limit):
            runs[n] = True
        else:
            chosen.append(n)
            runs[n] = False
    return chosen[::-1]


def _small(n: Node, limit: int) -> bool:
    """A single tensor of at most ``limit`` elements, in a storage of at most that many (a
    view keeps its base's storage alive)."""
    if not isinstance(n.meta.get("val"), Tensor):
        return False
    root = n
    while isinstance(root.meta.get("view_of"), Node):
        root = root.meta["view_of"]
    return all(isinstance(m.meta.get("val"), Tensor) and m.meta["val"].numel() <= limit
               for m in (n, root))


def _evaluate(nodes: list, chosen: list) -> tuple:
    """(values of ``chosen`` and what they read, None), or (partial, the node that failed):
    run without grad, with the eager kernels, checked against the traced values."""
    need: set = set()
    stack = list(chosen)
    while stack:
        n = stack.pop()
        if n not in need:
            need.add(n)
            stack.extend(n.all_input_nodes)
    env: dict = {}
    gs = dispatch.grad_state
    g0 = gs.enabled
    gs.enabled = False
    try:
        for n in nodes:
            if n not in need:
                continue
            try:
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    v = n.target(*map_arg(n.args, env.__getitem__),
                                 **map_arg(n.kwargs, env.__getitem__))
            except Exception:  # noqa: BLE001  (eager raises it each call: let it run)
                return env, n
            if caught or not _matches(v, n.meta.get("val")):
                return env, n
            env[n] = v
    finally:
        gs.enabled = g0
    return env, None


def _matches(v, val) -> bool:
    if isinstance(val, tuple):
        return isinstance(v, tuple) and len(v) == len(val) and \
            all(_matches(a, b) for a, b in zip(v, val))
    return isinstance(v, Tensor) and isinstance(val, Tensor) and v.dtype is val.dtype and \
        tuple(v.shape) == tuple(val.shape) and v.stride() == val.stride() and \
        v.storage_offset() == val.storage_offset() and v.grad_fn is None


def _free_name(gm) -> str:
    i = 0
    while hasattr(gm, f"_tensor_constant{i}"):
        i += 1
    return f"_tensor_constant{i}"
