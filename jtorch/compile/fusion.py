"""The "numba" backend: chains of pointwise ops fused into one generated Numba kernel.

The scheduler walks a (functionalised) graph in order and groups consecutive pointwise
nodes that compute values of one shape: each group becomes a ``FusedKernel``: generated
Python source, a loop over rows x inner blocks of the result with one SSA line per op,
built from the OpDefs' scalar functions with eager's dtype rules (each op's operands cast to
its compute dtype, its result rounded to its result dtype), so a fused result is bitwise the
eager one. Values read outside the group are its outputs; the rest never reach memory.

A group runs fused when, at call time, no operand needs autograd (nor is float16 or empty);
otherwise it runs its nodes eagerly. Row-major operands that broadcast to the result as a
full operand, a row over the rows (a bias), a value per row or one value are read flat; with
any other strides or broadcasts the loop runs in the results' memory order (eager's) and reads
such operands as 2-D strided views. Kernels are shape-generic (rows and inner are arguments):
a new size reuses them; one kernel per operand layout, cached on disk by its source.
"""

from __future__ import annotations

import operator

import numpy as np

from .. import _allocator, _flags, _settings, dispatch
from .._threads import use_parallel
from ..cuda_array import CudaArray
from ..kernels import codegen
from ..kernels.codegen import EXPENSIVE
from ..kernels.codegen import NP_CTOR as _NP_CTOR
from ..kernels.cpu.reduce import literal
from ..kernels.registry import OpDef
from ..kernels.source import load
from ..shape import bcast_elem_strides, bcast_strides, iter_order
from ..tensor import Tensor
from . import col_fusion, decompositions, epilogue, logs, passes, row_fusion, workers
from .functionalize import NotFunctionalizable, functionalize
from .graph import Graph, Node, arg_vals
from .graph_module import GraphModule, subgraph_module

_TENSOR = Tensor
_NDARRAY = np.ndarray
_CUDA = CudaArray
_gs = dispatch.grad_state
_F16 = np.dtype(np.float16)
_FUSABLE = ("bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64")


def numba_backend(gm: GraphModule, example_inputs):
    """torch's backend contract: ``(gm, example_inputs) -> callable``."""
    try:
        # a module of its own: the passes rewrite its graph and hold folded constants on it
        gm = functionalize(gm) if _mutates(gm.graph) else GraphModule(gm, gm.graph.copy())
    except NotFunctionalizable:
        return gm.forward
    # deterministic mode: results bitwise eager's, so no reduction is rewritten into row
    # kernels (their sums run in another order than eager's); pointwise groups and column
    # groups (each column summed in eager's order) still fuse
    det = _settings.are_deterministic_algorithms_enabled()
    if not det:
        g = decompositions.decompose(gm.graph, decompositions.DEFAULT)
        if g is not gm.graph:
            gm = GraphModule(gm, g)
    fused = GraphModule(gm, fuse(epilogue.fuse_epilogues(passes.run(gm.graph)), rows=not det))
    return fused.forward


def _mutates(g: Graph) -> bool:
    return any(n.meta.get("mutates") for n in g.nodes)


# -- scheduling ----------------------------------------------------------------------------

def _pointwise(n: Node) -> bool:
    t = n.target
    if n.op != "call_function" or not isinstance(t, OpDef) or t.meta is not None:
        return False
    if n.kwargs or n.meta.get("mutates") or "grad_enabled" in n.meta:
        return False
    val = n.meta.get("val")
    if not isinstance(val, Tensor) or val.dtype.name not in _FUSABLE:
        return False
    try:
        _, compute, result = dispatch.resolve_dtypes(t, tuple(arg_vals(n.args)))
    except Exception:  # noqa: BLE001  (eager would raise here too: leave it to eager)
        return False
    if compute.name not in _FUSABLE or result is not val.dtype:
        return False
    if t.int_div and compute.category < 2:  # integer division raises: eager's loops
        return False
    return all(isinstance(a, (Node, bool, int, float)) for a in n.args)


def _full_reduction(n: Node) -> bool:
    """Whether ``n`` reduces a value over all its dims (``x.sum()``, ``x.mean(dim=(0, 1))``)
    with the operand's dtype (float32 summed in float64 blocks, as eager's ``wide`` sums)."""
    t = n.target
    if n.op != "call_function" or getattr(t, "name", None) not in row_fusion._REDUCTIONS or \
            getattr(t, "meta", 1) is None or len(n.args) != 1 or not isinstance(n.args[0], Node):
        return False
    kw = n.kwargs
    if kw.get("dtype") is not None or set(kw) - {"dim", "keepdim", "dtype"} or \
            n.meta.get("grad_enabled") is not None:
        return False
    S = row_fusion._shape(n.args[0])
    val = n.meta.get("val")
    if not S or not isinstance(val, Tensor) or \
            val.dtype.name not in ("int64", "float32", "float64") or \
            n.args[0].meta["val"].dtype is not val.dtype:
        return False
    dim = kw.get("dim")
    if dim is None or dim == () or dim == []:  # torch's "all dims"
        return True
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    nd = len(S)
    return all(isinstance(d, int) and -nd <= d < nd for d in dims) and \
        sorted({d % nd for d in dims}) == list(range(nd))


def _one_row_tail(group: list) -> bool:
    """A row group over a 1-D value whose reductions no member reads (``(x * x).sum(-1)`` of
    a vector): it is one row, which a row kernel runs on one thread; as a pointwise group with
    reductions over all dims its loop runs in parallel chunks."""
    reds = {n for n in group if not _pointwise(n)}
    return all(len(row_fusion._shape(r.args[0]) or ()) == 1 and _full_reduction(r)
               for r in reds) and not any(a in reds for n in group for a in n.args)


def fuse(graph: Graph, rows: bool = True) -> Graph:
    """A copy of ``graph`` where each group is one call of its kernel (its outputs taken with
    getitem): row groups (``RowKernel``), column groups (``ColumnKernel``), then groups of two
    or more pointwise nodes over one shape (``FusedKernel``).

    A pointwise group grows along a chain and across siblings (horizontal fusion: ``x.sin()``
    and ``x.cos()`` read x once). Its call stands before the first node outside it that reads
    it (or after its last member): a node after that reader joins only if every value it reads
    exists by then. A reduction of a member over all dims joins too (its loop accumulates
    it). ``rows=False``: no row groups, no reductions in pointwise groups."""
    nodes = list(graph.nodes)
    pos = {n: i for i, n in enumerate(nodes)}
    row_groups = row_fusion.find_groups(nodes, _pointwise) if rows else []
    row_groups = [g for g in row_groups if not _one_row_tail(g)]
    in_rows = {n for g in row_groups for n in g}
    col_groups = col_fusion.find_groups(nodes, _pointwise, in_rows)
    in_rows |= {n for g in col_groups for n in g}
    # where each value exists: a grouped node's where its group's call stands
    avail = {m: pos[g[-1]] for g in row_groups + col_groups for m in g}
    anchor = {id(g): pos[g[-1]] for g in row_groups + col_groups}  # its call stands before
    groups: list = [*row_groups, *col_groups]
    open_: dict = {}  # shape -> [members, index of the first outside reader or None]
    member: dict = {}  # node -> the open group it is in

    def close(st) -> None:
        members, reader = st
        for m in members:
            member.pop(m, None)
        if len(members) > 1:
            at = reader if reader is not None else pos[members[-1]] + 1
            anchor[id(members)] = at
            groups.append(members)
            for m in members:
                avail[m] = at - 0.5

    def read_by(n) -> None:
        for a in n.all_input_nodes:
            st = member.get(a)
            if st is not None and n not in st[0] and st[1] is None:
                st[1] = pos[n]

    reduced: set = set()  # full reductions in a pointwise group: their value exists after it

    def can_join(st, n) -> bool:
        members, reader = st
        if any(a in reduced for a in n.all_input_nodes):
            return False
        if reader is None:
            return True
        return all(a in members or (a not in member and avail.get(a, pos[a]) < reader)
                   for a in n.all_input_nodes)

    for n in nodes:
        if rows and n not in in_rows and _full_reduction(n) and n.args[0] in member and \
                open_.get(row_fusion._shape(n.args[0])) is member[n.args[0]] and \
                can_join(member[n.args[0]], n):
            # a sum/mean/amax... of all of a group value: the prologue's loop accumulates it
            st = member[n.args[0]]
            st[0].append(n)
            member[n] = st
            reduced.add(n)
        elif _pointwise(n) and n not in in_rows:
            s = row_fusion._shape(n)
            st = open_.get(s)
            if st is not None and can_join(st, n):
                st[0].append(n)
            else:
                if st is not None:
                    close(st)
                st = open_[s] = [[n], None]
            member[n] = st
            read_by(n)
        elif n.op not in ("placeholder", "get_attr"):
            if n.meta.get("mutates"):  # a write (an input's copy-back): every open group's
                for st in list(open_.values()):  # call stands before it, and none grows past it
                    if st[1] is None:
                        st[1] = pos[n]
                    close(st)
                open_.clear()
            read_by(n)
    for st in list(open_.values()):
        close(st)
    if not groups:
        return graph
    builders = {id(g): row_fusion.build for g in row_groups}
    builders.update({id(g): col_fusion.build for g in col_groups})
    grouped = {n for g in groups for n in g}
    due: dict = {}  # node index -> the groups whose calls stand before it
    for g in sorted(groups, key=lambda g: (anchor[id(g)], pos[g[0]])):
        due.setdefault(anchor[id(g)], []).append(g)
    g2 = Graph()
    env: dict = {}

    def emit(group) -> None:
        build = builders.get(id(group))
        kernel, ins, outs = build(group, nodes, _pointwise) if build else _build(group, nodes)
        call = g2.call_function(kernel, tuple(env[i] if isinstance(i, Node) else i for i in ins))
        call.meta["val"] = tuple(o.meta["val"] for o in outs)
        for k, o in enumerate(outs):
            get = g2.call_function(operator.getitem, (call, k))
            get.meta["val"] = o.meta["val"]
            env[o] = get

    for i, n in enumerate(nodes):
        for group in due.get(i, ()):
            emit(group)
        if n not in grouped:
            env[n] = g2.node_copy(n, lambda a: env[a])
    for group in due.get(len(nodes), ()):
        emit(group)
    g2.symbols = [(s, env[p], d) for s, p, d in graph.symbols if p in env]
    g2.lint()
    return g2


# -- code generation ----------------------------------------------------------------------

def _build(group: list, nodes: list):
    """(FusedKernel, its operands: nodes and scalars, the group's output nodes)."""
    gs = set(group)
    later = nodes[nodes.index(group[-1]) + 1:]
    reds = [n for n in group if not _pointwise(n)]  # reductions over all dims (``fuse``)
    group = [n for n in group if n not in reds]
    outs = [n for n in group if any(u not in gs for u in n.users) or
            any(n in u.all_input_nodes for u in later if u.op == "output")]
    ins: list = []
    index: dict = {}
    out_of = {o: j for j, o in enumerate(outs)}

    def buf(n: Node) -> str:
        return f"o{out_of[n]}" if n in out_of else f"t{group.index(n)}"

    # Blocks of ``_BLOCK`` elements in L1, cut into segments, one loop each: a segment ends where
    # an expensive op (one whose scalar is a long polynomial: exp, sin, tanh...) would take as
    # operand a value computed from another expensive op of the segment. Expensive ops side by
    # side (sin(x), cos(x), exp(-x*x)) share one loop, whose long body gives the core
    # independent work; a chain of them (tanh(tanh(x))) runs as one loop per link, short
    # bodies whose iterations overlap (tanh o tanh o tanh in one loop: 1.3x the time; sin, cos
    # and exp in one loop: 0.75x that of a loop each). Values a later segment reads go through
    # scratch rows; the rest stay in registers. An op with a cheaper scalar that is exact
    # where ``fast_ok`` holds (sin without the huge-argument reduction) runs it and asks
    # ``fast_ok`` of its operands in the same loop; a segment where any check failed runs
    # again over the block through the full scalars (its stores are scratch rows and fresh
    # outputs, never an operand it reads), so a guard costs no pass of its own.
    plan, consts = [], {}
    for k, n in enumerate(group):
        op = n.target
        _, compute, result = dispatch.resolve_dtypes(op, tuple(arg_vals(n.args)))
        plan.append((k, n, compute.name, result.name, _NP_CTOR[result.name],
                     codegen.guarded(op, compute.name)))
    # Guarded ops whose guard is the same function of the same operands (sin(x) and cos(x):
    # both ask ``trig_near(x)``) share the segment of the first of them: one loop, one
    # check per block, and LLVM shares their argument reduction (sin alone 0.49 ns/element,
    # sin and cos of the same x in one loop 0.60). A later one may join an earlier segment:
    # its operands are the first one's, so they are ready there.
    segments: list = []
    guard_seg: dict = {}
    chained: set = set()  # nodes of the last segment computed from an expensive op of it
    for step in plan:
        n, guarded = step[1], step[5]
        heavy = guarded or n.target.name in EXPENSIVE
        key = (codegen.guard_key(n.target), step[2], tuple(map(_arg_key, n.args))) \
            if guarded else None
        if key is not None and key in guard_seg:
            segments[guard_seg[key]].append(step)
            if guard_seg[key] == len(segments) - 1:
                chained.add(n)
            continue
        after = any(a in chained for a in n.args if isinstance(a, Node))
        if not segments or (heavy and after):
            segments.append([step])
            chained = set()
        else:
            segments[-1].append(step)
        if key is not None:
            guard_seg[key] = len(segments) - 1
        if heavy or after:
            chained.add(n)
    seg_of = {step[1]: si for si, steps in enumerate(segments) for step in steps}
    rows_needed = {a for n in group for a in n.args if isinstance(a, Node) and a in gs and
                   seg_of[a] != seg_of[n]} | set(outs) | {r.args[0] for r in reds}

    def operand(a, si: int) -> str:
        if isinstance(a, Node) and a in gs:
            return f"v{group.index(a)}" if seg_of[a] == si else f"{buf(a)}[i]"
        key = ("n", a) if isinstance(a, Node) else ("s", type(a), a)
        if key not in index:
            index[key] = len(ins)
            ins.append(a)
        j = index[key]
        return f"@X{j}@" if isinstance(a, Node) and _is_tensor(a) else f"in{j}"

    scratch = [f"t{k} = np.empty({_BLOCK}, {co})" for k, n, _, _, co, _ in plan
               if n in rows_needed and n not in out_of]
    loops: list = []
    for si, seg in enumerate(segments):
        # each op's line as eager's loops have it (codegen.ssa_line)
        ssa = [(k, n, codegen.ssa_line(n.target, compute, result, f"v{k}",
                                       [operand(a, si) for a in n.args], consts))
               for k, n, compute, result, _, _ in seg]

        def body(fast: bool, ssa=ssa) -> list:
            out, asked = [], set()
            for k, n, line in ssa:
                if fast and line.fast:
                    # sin and cos of one x: one check (their guards are one function)
                    ask = (codegen.guard_key(n.target), line.guard[line.guard.index("("):])
                    if ask not in asked:
                        asked.add(ask)
                        out.append(f"good &= {line.guard}")
                    out.append(line.fast)
                else:
                    out.append(line.line)
                if n in rows_needed:
                    out.append(f"{buf(n)}[i] = v{k}")
            return out
        guarded_seg = any(line.fast for _, _, line in ssa)
        loops.append((body(False), body(True) if guarded_seg else None, guarded_seg))
    # each reduction: a loop over its operand's row in the block, in the operand's dtype and
    # reassociated (it vectorises: eager's ``span``), gives the block's value, combined into
    # the chunk's in the accumulate dtype (float64 for float32 sums, as eager combines its
    # blocks); the chunks' values are combined in chunk order after the parallel loop
    red_info = []
    for r in reds:
        op, res = r.target, r.meta["val"].dtype.name
        acc = "float64" if res == "float32" and op.wide else res
        consts[f"_c_{op.name}"] = f"scalar_of({op.name!r}, 'combine')"
        if op.post is not None:
            consts[f"_p_{op.name}"] = f"scalar_of({op.name!r}, 'post')"
        red_info.append((buf(r.args[0]), op.name, _NP_CTOR[acc], literal(op.identity, acc),
                         _NP_CTOR[res], op.post is not None, literal(op.identity, res)))
    names = [f"out{j}" for j in range(len(outs))] + [f"in{j}" for j in range(len(ins))]
    # the ops, not the nodes' names: groups alike in two places (each layer's relu) are one
    # source, one module, one compile
    desc = ", ".join(n.target.name for n in group + reds)
    fns = [f for n in group for f in (n.target.scalar, n.target.int_scalar, n.target.fast_scalar,
                                      n.target.fast_ok) if f is not None]
    fns += [f for r in reds for f in (r.target.combine, r.target.post) if f is not None]
    head = codegen.header(f"fused pointwise group: {desc}", fns, consts)
    tensors = [j for j, a in enumerate(ins) if isinstance(a, Node) and _is_tensor(a)]
    template = (head, names, scratch, loops, len(outs), tensors, red_info)
    return FusedKernel(template, group, ins, outs, reds), ins, outs + reds


def _arg_key(a):
    """An operand as a guard-sharing key: a node by identity, a scalar by type and value."""
    return ("n", id(a)) if isinstance(a, Node) else ("s", type(a), a)


# elements per block: a loop function's call and its values' trip through L1 scratch rows
# cost little against a block's work
_BLOCK = 512


def kernel_source(template, kinds: str) -> str:
    """The kernel of a group for its tensor operands' layouts ``kinds`` (a letter each, over
    rows x inner of the result): ``f`` full, ``r`` one row broadcast over the rows (a bias),
    ``c`` one value per row (an (N, 1) operand), ``s`` one value, ``g`` any strides (a 2-D
    view, rows x inner, each block of a row copied to a scratch row). Each segment is a loop
    function over one block (``codegen.loop_function``), called per block of each row."""
    head, names, scratch, loops, nout, tensors, reds = template
    kind = dict(zip(tensors, kinds))

    def sub(lines):
        if lines is None:
            return None
        text = "\n".join(lines)
        for j in tensors:
            text = text.replace(f"@X{j}@", f"x{j}[i]" if kind[j] in "frg" else f"c{j}")
        return text.split("\n")

    funcs, calls_ = [], []
    for si, (body, fast, checked) in enumerate(loops):
        body, fast = sub(body), sub(fast)
        params = codegen.names_in(body + (fast or []))
        funcs += codegen.loop_function(f"seg{si}", params, body, fast=fast, checked=checked)
        calls_.append(f"_seg{si}(m, {', '.join(params)})")
    for k, (row, op, actor, _, ctor, _, ident) in enumerate(reds):
        funcs += codegen.loop_function(f"red{k}", [row], [f"acc = _c_{op}(acc, {ctor}({row}[i]))"],
                                       ret="acc", init=[f"acc = {ctor}({ident})"],
                                       decorator=codegen.NJIT_REASSOC)
        calls_.append(f"acc{k} = _c_{op}(acc{k}, {actor}(_red{k}(m, {row})))")
    rows = [f"o{j} = out{j}[base + b:base + b + m]" for j in range(nout)]
    rows += [f"x{j} = in{j}[base + b:base + b + m]" if kind[j] == "f" else f"x{j} = in{j}[b:b + m]"
             for j in tensors if kind[j] in "fr"]
    # a strided operand's row is copied into a scratch row first: the loops over the block
    # then read it densely and vectorise (a strided read in them would not)
    for j in tensors:
        if kind[j] == "g":
            rows += [f"g{j}[:m] = in{j}[r, b:b + m]", f"x{j} = g{j}[:m]"]
    sig = ", ".join(names)

    def serial(params: str, init: list = (), tail: list = ()) -> list:
        """The chunk function: rows r_lo..r_hi, columns j_lo..j_hi, block by block."""
        return [codegen.NJIT,
                f"def serial({params}, r_lo, r_hi, j_lo, j_hi, inner):",
                *[f"    {x}" for x in scratch],
                *[f"    g{j} = np.empty({_BLOCK}, in{j}.dtype)" for j in tensors if kind[j] == "g"],
                *[f"    c{j} = in{j}[0]" for j in tensors if kind[j] == "s"],
                *init,
                "    for r in range(r_lo, r_hi):",
                "        base = r * inner",
                *[f"        c{j} = in{j}[r]" for j in tensors if kind[j] == "c"],
                f"        for b in range(j_lo, j_hi, {_BLOCK}):",
                f"            m = min({_BLOCK}, j_hi - b)",
                *[f"            {x}" for x in rows + calls_],
                *tail]

    if reds:
        return _reducing_source(head, sig, kinds, funcs, serial, reds)
    lines = [*head, "",
             f"# operand layouts: {kinds}",
             *funcs,
             *serial(sig),
             "",
             "_call = external(serial)",
             "",
             codegen.NJIT_PARALLEL,
             f"def parallel({sig}, rows, inner):",
             "    if rows == 1:  # one long row: chunks of it",
             "        nc = min(64, max(2, inner // 8192))",
             "        for c in prange(nc):",
             "            lo = (c * inner // nc) // 16 * 16",
             "            hi = inner if c == nc - 1 else ((c + 1) * inner // nc) // 16 * 16",
             f"            _call({sig}, 0, 1, lo, hi, inner)",
             "    else:  # runs of rows",
             "        nc = min(rows, 64, max(2, rows * inner // 8192))",
             "        for c in prange(nc):",
             f"            _call({sig}, c * rows // nc, (c + 1) * rows // nc, 0, inner, inner)",
             ""]
    return "\n".join(lines)


def _reducing_source(head, sig: str, kinds: str, funcs: list, serial, reds: list) -> str:
    """``kernel_source`` for a group with reductions over all dims: each chunk's ``serial``
    leaves its values in ``p<k>[c]``; ``finish`` combines them in chunk order into the
    one-element results ``q<k>``. ``whole`` is the serial entry (one chunk)."""
    parts = ", ".join(f"p{k}" for k in range(len(reds)))
    qs = ", ".join(f"q{k}" for k in range(len(reds)))
    fin = []
    for k, (_, op, actor, ident, res, post, _) in enumerate(reds):
        fin += [f"    acc{k} = {actor}({ident})", "    for c in range(nc):",
                f"        acc{k} = _c_{op}(acc{k}, p{k}[c])",
                f"    q{k}[0] = {res}(_p_{op}(acc{k}, n))" if post else
                f"    q{k}[0] = {res}(acc{k})"]

    def alloc(size: str) -> list:
        return [f"    p{k} = np.empty({size}, {r[2]})" for k, r in enumerate(reds)]
    rows_call = f"_call({sig}, {parts}, c, c * rows // nc, (c + 1) * rows // nc, 0, inner, inner)"
    lines = [*head, "",
             f"# operand layouts: {kinds}",
             *funcs,
             *serial(f"{sig}, {parts}, c", [f"    acc{k} = {r[2]}({r[3]})" for k, r in
                                             enumerate(reds)],
                     [f"    p{k}[c] = acc{k}" for k in range(len(reds))]),
             "",
             "_call = external(serial)",
             "",
             codegen.NJIT,
             f"def finish({parts}, {qs}, nc, n):",
             *fin,
             "",
             "_finish = outlined(finish)",
             "",
             codegen.NJIT,
             f"def whole({sig}, {qs}, rows, inner):",
             *alloc("1"),
             f"    _call({sig}, {parts}, 0, 0, rows, 0, inner, inner)",
             f"    _finish({parts}, {qs}, 1, rows * inner)",
             "",
             codegen.NJIT_PARALLEL,
             f"def parallel({sig}, {qs}, rows, inner):",
             "    if rows == 1:  # one long row: chunks of it",
             "        nc = min(64, max(2, inner // 8192))",
             "    else:  # runs of rows",
             "        nc = min(rows, 64, max(2, rows * inner // 8192))",
             *alloc("nc"),
             "    if rows == 1:",
             "        for c in prange(nc):",
             "            lo = (c * inner // nc) // 16 * 16",
             "            hi = inner if c == nc - 1 else ((c + 1) * inner // nc) // 16 * 16",
             f"            _call({sig}, {parts}, c, 0, 1, lo, hi, inner)",
             "    else:",
             "        for c in prange(nc):",
             f"            {rows_call}",
             f"    _finish({parts}, {qs}, nc, rows * inner)",
             ""]
    return "\n".join(lines)


def _is_tensor(n: Node) -> bool:
    return isinstance(n.meta.get("val"), Tensor)


class FusedKernel:
    """One fused group: call it with the group's operands; it returns the group's outputs.
    ``source(kinds)`` is its generated kernel for an operand layout (``kernel_source``)."""

    def __init__(self, template, group: list, ins: list, outs: list, reds: list = ()) -> None:
        self.template = template
        self.names = [n.name for n in group + list(reds)]
        self.out_dtypes = [o.meta["val"].dtype for o in outs]
        # reductions over all dims: one-element results, after the pointwise outputs
        self.red_outs = [(r.meta["val"].dtype, tuple(r.meta["val"].shape)) for r in reds]
        self.tensor_pos = [k for k, a in enumerate(ins) if isinstance(a, Node) and _is_tensor(a)]
        self.__name__ = "fused_" + "_".join(self.names)[:60]
        self._mods: dict = {}  # operand layouts -> the loaded kernel module
        self._layouts: dict = {}  # operand shapes -> (result shape, rows, inner, layouts)
        # the group's nodes, run one by one when an operand does not fit the fused loop
        self._eager = subgraph_module(group + list(reds), ins, outs + list(reds))
        # per node, its tensor operands: ("g", group index) or ("i", tensor operand number);
        # strided operands replay eager's layout rule over them (``_eager_order``)
        at = {k: t for t, k in enumerate(self.tensor_pos)}
        pos = {a: at[j] for j, a in enumerate(ins) if j in at}
        gi = {n: k for k, n in enumerate(group)}
        self._operands = [tuple([("g", gi[a]) if a in gi else ("i", pos[a]) for a in n.args
                                 if isinstance(a, Node) and (a in gi or a in pos)])
                          for n in group]
        # the values whose memory order the loop follows: the outputs and the reduced ones
        self._out_idx = [gi[o] for o in outs] + [gi[r.args[0]] for r in reds]
        self._orders: dict = {}  # operand geometries -> the loop's order (or None: eager)
        # float16 is computed through float32 arrays by eager: its groups run eagerly (the
        # operands' dtypes are the traced ones: the graph's guards hold them)
        self._half = any(ins[k].meta["val"].dtype.np == _F16 for k in self.tensor_pos) or \
            any(d.np == _F16 for d in self.out_dtypes)
        self._cuda_launcher = None  # the group's CUDA kernels (``kernels/cuda/fused.py``)

    @property
    def source(self) -> str:
        """The kernel for operands that all have the result's shape."""
        return self.source_for("f" * len(self.tensor_pos))

    def source_for(self, kinds: str) -> str:
        return kernel_source(self.template, kinds)

    def _module(self, kinds: str):
        mod = self._mods.get(kinds)
        if mod is None:
            src = self.source_for(kinds)
            mod = self._mods[kinds] = load("jt_fused", src)
            logs.log("kernels", f"{self.__name__} ({mod.__file__}):\n{src}")
        return mod

    def __call__(self, *args):
        """Run fused when every tensor operand is row-major and its shape broadcasts to the
        result as one of the kernel's layouts, and none needs autograd; else eagerly."""
        if self._half:
            return self._eager(*args)
        grad = _gs.enabled
        flat = list(args)
        shapes = []
        expanded = None
        for k in self.tensor_pos:
            a = args[k]
            arr = a._a
            if arr.__class__ is not _NDARRAY or (grad and a._requires_grad):
                if arr.__class__ is _CUDA:  # the same loop body, staged for CUDA
                    from ..kernels.cuda import fused

                    return fused.run(self, args)
                return self._eager(*args)
            if not arr.flags.c_contiguous:
                if not arr.size:
                    return self._eager(*args)
                if any(arr.strides):
                    return self._strided(args)
                # one value expanded (a sum's gradient): read as one value
                expanded = (*(expanded or ()), arr.shape)
                arr = arr[(slice(0, 1),) * arr.ndim]
            shapes.append(arr.shape)
            flat[k] = arr if arr.ndim == 1 else arr.reshape(-1)
        key = tuple(shapes) if expanded is None else (tuple(shapes), expanded)
        lay = self._layouts.get(key)
        if lay is None:
            lay = _layout(shapes)
            if lay is not None and expanded is not None and \
                    lay[0] != tuple(np.broadcast_shapes(lay[0], *expanded)):
                lay = None  # the expanded operands set the result's shape
            if len(self._layouts) > 256:
                self._layouts.clear()
            self._layouts[key] = lay
        if lay is None:
            return self._strided(args)  # a broadcast the row layouts do not cover
        shape, rows, inner, kinds = lay
        n = rows * inner
        if not n:  # empty: row-major strides, as eager gives them
            if self.red_outs:
                return self._eager(*args)  # empty reductions: eager's values and errors
            return tuple([Tensor._make(_allocator.empty(shape, d.np), None, d)
                          for d in self.out_dtypes])
        mod = self._mods.get(kinds) or self._module(kinds)
        res, flats = [], []
        for d in self.out_dtypes:  # small results skip the caching allocator, as eager's do
            npd = d.np
            if n * npd.itemsize < _allocator.MIN_CACHED_BYTES:
                f = np.empty(n, npd)
                o = f if len(shape) == 1 else f.reshape(shape)
            else:
                o = _allocator.empty(shape, npd)
                f = o.reshape(-1)
            flats.append(f)
            res.append(Tensor._make(o, f, d))
        if self.red_outs:
            return self._reduce(mod, res, flats, flat, rows, inner)
        self._pointwise(mod, flats, flat, rows, inner)
        return tuple(res)

    @staticmethod
    def _pointwise(mod, flats: list, flat: list, rows: int, inner: int) -> None:
        """Run a pointwise group's kernel: its parallel entry past the grain size, unless a
        compile worker is building that entry (``workers.parallel_ready``): the serial one
        gives the same values meanwhile."""
        n = rows * inner
        if n >= _flags.GRAIN_SIZE and \
                workers.use_parallel_entry(mod, "parallel", n, (*flats, *flat, rows, inner)):
            mod.parallel(*flats, *flat, rows, inner)
        else:
            mod.serial(*flats, *flat, 0, rows, 0, inner, inner)

    def _reduce(self, mod, res: list, flats: list, flat: list, rows: int, inner: int) -> tuple:
        """Run a group with reductions: their results are one-element arrays after ``res``."""
        qs = []
        for d, shape in self.red_outs:
            q = np.empty(1, d.np)
            qs.append(q)
            res.append(Tensor._make(q.reshape(shape), q, d))
        n = rows * inner
        if n >= _flags.GRAIN_SIZE and use_parallel(n):
            mod.parallel(*flats, *flat, *qs, rows, inner)
        else:
            mod.whole(*flats, *flat, *qs, rows, inner)
        return tuple(res)

    def _run(self, kinds: str, flats: list, flat: list, rows: int, inner: int) -> None:
        self._pointwise(self._mods.get(kinds) or self._module(kinds), flats, flat, rows, inner)

    def _strided(self, args: tuple):
        """The group over operands of any strides and broadcasts: the loop runs in the
        results' memory order, eager's (TensorIterator's order over the operands), reading an
        operand that is dense in that order flat (``f``), one value (``s``), or else as rows
        of the order's last dim (``g``: a 2-D strided view; one whose dims do not merge is
        copied into one)."""
        arrs = [args[k]._a for k in self.tensor_pos]
        try:
            shape = tuple(np.broadcast_shapes(*[a.shape for a in arrs]))
        except ValueError:
            return self._eager(*args)  # eager's error
        nd = len(shape)
        if not nd or 0 in shape:
            return self._eager(*args)
        key = tuple([(a.shape, a.strides) for a in arrs])
        phys = self._orders.get(key, False)
        if phys is False:
            if len(self._orders) > 256:
                self._orders.clear()
            phys = self._orders[key] = self._eager_order(arrs)
        if phys is None:
            return self._eager(*args)  # outputs eager lays out differently: eager's layouts
        pshape = tuple(shape[d] for d in phys)
        n = 1
        for d in pshape:
            n *= d
        inner = pshape[-1]
        rows = n // inner
        flat, kinds = list(args), []
        for k, a in zip(self.tensor_pos, arrs):
            if not any(a.strides) or a.size == 1:
                flat[k], kind = a[(slice(0, 1),) * a.ndim].reshape(1), "s"
            else:
                v = np.broadcast_to(a, shape).transpose(phys)
                if v.flags.c_contiguous:
                    flat[k], kind = v.reshape(-1), "f"
                else:
                    flat[k], kind = v.reshape(rows, inner), "g"
            kinds.append(kind)
        bufs = [_allocator.empty(pshape, d.np) for d in self.out_dtypes]
        inv = [phys.index(d) for d in range(nd)]
        res = [Tensor._make(b.transpose(inv), b.reshape(-1), d)
               for b, d in zip(bufs, self.out_dtypes)]
        if self.red_outs:
            mod = self._mods.get("".join(kinds)) or self._module("".join(kinds))
            return self._reduce(mod, res, [b.reshape(-1) for b in bufs], flat, rows, inner)
        self._run("".join(kinds), [b.reshape(-1) for b in bufs], flat, rows, inner)
        return tuple(res)

    def _eager_order(self, arrs: list) -> list | None:
        """The memory order (slowest dim first) eager gives the group's outputs for operands
        ``arrs``: each node's result is row-major when its tensor operands all are, else
        laid out in TensorIterator's order over them (``dispatch.new_output``); None when the
        outputs' orders differ (one loop writes all of them)."""
        vals = [(a.shape, bcast_elem_strides(a, a.shape), a.flags.c_contiguous) for a in arrs]
        done: list = []
        for refs in self._operands:
            ops = [done[k] if w == "g" else vals[k] for w, k in refs]
            shape = tuple(np.broadcast_shapes(*[o[0] for o in ops]))
            nd = len(shape)
            if all(o[2] for o in ops):
                phys = list(range(nd))
            else:
                phys = iter_order(shape, [bcast_strides(o[0], o[1], shape) for o in ops])[::-1]
            st, step = [0] * nd, 1
            for d in reversed(phys):
                st[d] = step
                step *= shape[d]
            done.append((shape, st, _row_major(shape, st), phys))
        orders = {tuple(done[k][3]) for k in self._out_idx}
        return list(orders.pop()) if len(orders) == 1 else None

    def __repr__(self) -> str:
        return f"FusedKernel({', '.join(self.names)})"


def _row_major(shape: tuple, strides: list) -> bool:
    """NumPy's C-contiguity over element strides (size-1 dims may have any stride)."""
    step = 1
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1:
            if s != step:
                return False
            step *= n
    return True


def _layout(shapes: list):
    """(result shape, rows, inner, layout letters) for operands of ``shapes``: the result
    split as rows x inner at a dim where every operand is full, broadcast (one row), per-row
    (one value a row) or one value; None when no split fits."""
    try:
        shape = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None
    nd = len(shape)
    padded = [(1,) * (nd - len(s)) + tuple(s) for s in shapes]
    for k in [0, *range(nd - 1, 0, -1)]:  # one long row first, then the fewest rows
        lead, tail = shape[:k], shape[k:]
        kinds = []
        for p in padded:
            pl, pt = p[:k], p[k:]
            lf, lo = pl == lead, all(d == 1 for d in pl)
            tf, to = pt == tail, all(d == 1 for d in pt)
            kinds.append("f" if lf and tf else "r" if lo and tf else "c" if lf and to else
                         "s" if lo and to else "")
        if all(kinds):
            rows = 1
            for d in lead:
                rows *= d
            inner = 1
            for d in tail:
                inner *= d
            return shape, rows, inner, "".join(kinds)
    return None
