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
from ..kernels import codegen
from ..kernels.codegen import EXPENSIVE
from ..kernels.codegen import NP_CTOR as _NP_CTOR
from ..kernels.registry import OpDef
from ..kernels.source import load
from ..shape import bcast_elem_strides, bcast_strides, iter_order
from ..tensor import Tensor
from . import col_fusion, decompositions, epilogue, logs, passes, row_fusion
from .functionalize import NotFunctionalizable, functionalize
from .graph import Graph, Node, arg_vals
from .graph_module import GraphModule, subgraph_module

_TENSOR = Tensor
_NDARRAY = np.ndarray
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


def fuse(graph: Graph, rows: bool = True) -> Graph:
    """A copy of ``graph`` where each group is one call of its kernel (its outputs taken with
    getitem): row groups (``RowKernel``), column groups (``ColumnKernel``), then groups of two
    or more pointwise nodes over one shape (``FusedKernel``).

    A pointwise group grows along a chain and across siblings (horizontal fusion: ``x.sin()``
    and ``x.cos()`` read x once). Its call stands before the first node outside it that reads
    it (or after its last member): a node after that reader joins only if every value it reads
    exists by then. ``rows=False``: no row groups."""
    nodes = list(graph.nodes)
    pos = {n: i for i, n in enumerate(nodes)}
    row_groups = row_fusion.find_groups(nodes, _pointwise) if rows else []
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

    def can_join(st, n) -> bool:
        members, reader = st
        if reader is None:
            return True
        return all(a in members or (a not in member and avail.get(a, pos[a]) < reader)
                   for a in n.all_input_nodes)

    for n in nodes:
        if _pointwise(n) and n not in in_rows:
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
    outs = [n for n in group if any(u not in gs for u in n.users) or
            any(n in u.all_input_nodes for u in later if u.op == "output")]
    ins: list = []
    index: dict = {}
    out_of = {o: j for j, o in enumerate(outs)}

    def buf(n: Node) -> str:
        return f"o{out_of[n]}" if n in out_of else f"t{group.index(n)}"

    # Blocks of ``_BLOCK`` elements in L1, cut into segments of at most one expensive op (one whose
    # scalar is a long polynomial: exp, sin, tanh...) plus the cheap ones around it, one loop
    # per segment: each loop vectorises as eager's kernels do, where one loop over a long body
    # can lose the vectoriser to register pressure. Values a later segment reads go through
    # scratch rows; the rest stay in registers. An op with a cheaper scalar that is exact
    # where ``fast_ok`` holds (sin without the huge-argument reduction) opens its segment and
    # checks the block first, as eager does.
    plan, consts = [], {}
    for k, n in enumerate(group):
        op = n.target
        _, compute, result = dispatch.resolve_dtypes(op, tuple(arg_vals(n.args)))
        plan.append((k, n, compute.name, result.name, _NP_CTOR[result.name],
                     codegen.guarded(op, compute.name)))
    # Guarded ops whose guard is the same function of the same operands (sin(x) and cos(x):
    # both ask ``trig_near(x)``) share the segment the first of them opened: one loop, one
    # check per block, and LLVM shares their argument reduction (sin alone 0.49 ns/element,
    # sin and cos of the same x in one loop 0.60). A later one may join an earlier segment:
    # its operands are the first one's, so they are ready there.
    segments: list = []
    guard_seg: dict = {}
    for step in plan:
        n, guarded = step[1], step[5]
        heavy = guarded or n.target.name in EXPENSIVE
        key = (codegen.guard_key(n.target), step[2], tuple(map(_arg_key, n.args))) \
            if guarded else None
        if key is not None and key in guard_seg:
            segments[guard_seg[key]][0].append(step)
        elif not segments or guarded or (heavy and segments[-1][1]):
            segments.append([[step], heavy])
            if key is not None:
                guard_seg[key] = len(segments) - 1
        else:
            segments[-1][0].append(step)
            segments[-1][1] |= heavy
    seg_of = {step[1]: si for si, (steps, _) in enumerate(segments) for step in steps}
    rows_needed = {a for n in group for a in n.args if isinstance(a, Node) and a in gs and
                   seg_of[a] != seg_of[n]} | set(outs)

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
    for si, (seg, _) in enumerate(segments):
        # each op's line as eager's loops have it (codegen.ssa_line)
        ssa = [(k, n, codegen.ssa_line(n.target, compute, result, f"v{k}",
                                       [operand(a, si) for a in n.args], consts))
               for k, n, compute, result, _, _ in seg]

        def body(fast: bool, ssa=ssa) -> list:
            out = []
            for k, n, line in ssa:
                out.append(line.fast if fast and line.fast else line.line)
                if n in rows_needed:
                    out.append(f"{buf(n)}[i] = v{k}")
            return out
        guard = ssa[0][2].guard  # the segment's first op, when guarded, opens it
        loops.append((body(False), body(True) if guard else None, guard))
    names = [f"out{j}" for j in range(len(outs))] + [f"in{j}" for j in range(len(ins))]
    desc = ", ".join(f"{n.name}={n.target.name}" for n in group)
    fns = [f for n in group for f in (n.target.scalar, n.target.int_scalar, n.target.fast_scalar,
                                      n.target.fast_ok) if f is not None]
    head = codegen.header(f"fused pointwise group: {desc}", fns, consts)
    tensors = [j for j, a in enumerate(ins) if isinstance(a, Node) and _is_tensor(a)]
    template = (head, names, scratch, loops, len(outs), tensors)
    return FusedKernel(template, group, ins, outs), ins, outs


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
    head, names, scratch, loops, nout, tensors = template
    kind = dict(zip(tensors, kinds))

    def sub(lines):
        if lines is None:
            return None
        text = "\n".join(lines)
        for j in tensors:
            text = text.replace(f"@X{j}@", f"x{j}[i]" if kind[j] in "frg" else f"c{j}")
        return text.split("\n")

    funcs, calls_ = [], []
    for si, (body, fast, guard) in enumerate(loops):
        body, fast = sub(body), sub(fast)
        guard = sub([guard])[0] if guard is not None else None
        params = codegen.names_in(([guard] if guard else []) + body + (fast or []))
        funcs += codegen.loop_function(f"seg{si}", params, body, guard=guard, fast=fast)
        calls_.append(f"_seg{si}(m, {', '.join(params)})")
    rows = [f"o{j} = out{j}[base + b:base + b + m]" for j in range(nout)]
    rows += [f"x{j} = in{j}[base + b:base + b + m]" if kind[j] == "f" else f"x{j} = in{j}[b:b + m]"
             for j in tensors if kind[j] in "fr"]
    # a strided operand's row is copied into a scratch row first: the loops over the block
    # then read it densely and vectorise (a strided read in them would not)
    for j in tensors:
        if kind[j] == "g":
            rows += [f"g{j}[:m] = in{j}[r, b:b + m]", f"x{j} = g{j}[:m]"]
    sig = ", ".join(names)
    lines = [*head, "",
             f"# operand layouts: {kinds}",
             *funcs,
             codegen.NJIT,
             f"def serial({sig}, r_lo, r_hi, j_lo, j_hi, inner):",
             *[f"    {x}" for x in scratch],
             *[f"    g{j} = np.empty({_BLOCK}, in{j}.dtype)" for j in tensors if kind[j] == "g"],
             *[f"    c{j} = in{j}[0]" for j in tensors if kind[j] == "s"],
             "    for r in range(r_lo, r_hi):",
             "        base = r * inner",
             *[f"        c{j} = in{j}[r]" for j in tensors if kind[j] == "c"],
             f"        for b in range(j_lo, j_hi, {_BLOCK}):",
             f"            m = min({_BLOCK}, j_hi - b)",
             *[f"            {x}" for x in rows + calls_],
             "",
             "_call = outlined(serial)",
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


def _is_tensor(n: Node) -> bool:
    return isinstance(n.meta.get("val"), Tensor)


class FusedKernel:
    """One fused group: call it with the group's operands; it returns the group's outputs.
    ``source(kinds)`` is its generated kernel for an operand layout (``kernel_source``)."""

    def __init__(self, template, group: list, ins: list, outs: list) -> None:
        self.template = template
        self.names = [n.name for n in group]
        self.out_dtypes = [o.meta["val"].dtype for o in outs]
        self.tensor_pos = [k for k, a in enumerate(ins) if isinstance(a, Node) and _is_tensor(a)]
        self.__name__ = "fused_" + "_".join(self.names)[:60]
        self._mods: dict = {}  # operand layouts -> the loaded kernel module
        self._layouts: dict = {}  # operand shapes -> (result shape, rows, inner, layouts)
        # the group's nodes, run one by one when an operand does not fit the fused loop
        self._eager = subgraph_module(group, ins, outs)
        # per node, its tensor operands: ("g", group index) or ("i", tensor operand number);
        # strided operands replay eager's layout rule over them (``_eager_order``)
        at = {k: t for t, k in enumerate(self.tensor_pos)}
        pos = {a: at[j] for j, a in enumerate(ins) if j in at}
        gi = {n: k for k, n in enumerate(group)}
        self._operands = [tuple([("g", gi[a]) if a in gi else ("i", pos[a]) for a in n.args
                                 if isinstance(a, Node) and (a in gi or a in pos)])
                          for n in group]
        self._out_idx = [gi[o] for o in outs]
        self._orders: dict = {}  # operand geometries -> the loop's order (or None: eager)
        # float16 is computed through float32 arrays by eager: its groups run eagerly (the
        # operands' dtypes are the traced ones: the graph's guards hold them)
        self._half = any(ins[k].meta["val"].dtype.np == _F16 for k in self.tensor_pos) or \
            any(d.np == _F16 for d in self.out_dtypes)

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
        if n >= _flags.GRAIN_SIZE and use_parallel(n):
            mod.parallel(*flats, *flat, rows, inner)
        else:
            mod.serial(*flats, *flat, 0, rows, 0, inner, inner)
        return tuple(res)

    def _run(self, kinds: str, flats: list, flat: list, rows: int, inner: int) -> None:
        mod = self._mods.get(kinds) or self._module(kinds)
        n = rows * inner
        if n >= _flags.GRAIN_SIZE and use_parallel(n):
            mod.parallel(*flats, *flat, rows, inner)
        else:
            mod.serial(*flats, *flat, 0, rows, 0, inner, inner)

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
        self._run("".join(kinds), [b.reshape(-1) for b in bufs], flat, rows, inner)
        inv = [phys.index(d) for d in range(nd)]
        return tuple([Tensor._make(b.transpose(inv), b.reshape(-1), d)
                      for b, d in zip(bufs, self.out_dtypes)])

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
