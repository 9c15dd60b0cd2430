"""Column fusion: reductions over the leading dims with their pointwise prologue and epilogue.

A column group is a run of nodes over one shape ``S`` split after its first ``k`` dims:
pointwise ops over ``S`` (the prologue), reductions (sum, mean, amax, amin, prod) of such
values over dims ``0..k-1``, and pointwise ops on the reduced values (the epilogue). A bias
gradient ``g.sum(0)``, batch statistics, a loss's mean over the batch: each becomes one kernel
that reads its inputs once. The leading dims are rows, the kept dims columns: the kernel
walks the rows and accumulates every column in a vector (its loop over columns vectorises
with no reassociation: each column sums in row order, the same on every run), then runs the
epilogue over the columns. Column blocks run in parallel.

Pointwise lines use eager's scalars and dtype rules (bitwise eager for those values);
reductions accumulate float32 in float64 and agree with eager within rounding.
"""

from __future__ import annotations

import numpy as np

from .. import _allocator, _flags, dispatch
from ..kernels import codegen
from ..kernels.codegen import NP_CTOR as _NP_CTOR
from ..kernels.codegen import scalar_variant
from ..kernels.cpu.reduce import literal
from ..kernels.source import load
from ..tensor import Tensor
from . import logs, workers
from .graph import Node, arg_vals
from .graph_module import subgraph_module
from .row_fusion import _REDUCTIONS, _one, _shape

# columns per block: its accumulators stay in L1/L2 while the rows stream past them
_BLOCK = 2048


def reduction(n: Node) -> tuple | None:
    """(S, k, keepdim) when ``n`` reduces its operand of shape S over dims 0..k-1 (0 < k <
    len(S)), else None."""
    t = n.target
    if n.op != "call_function" or getattr(t, "name", None) not in _REDUCTIONS or \
            getattr(t, "meta", 1) is None or len(n.args) != 1 or not isinstance(n.args[0], Node):
        return None
    kw = n.kwargs
    S = _shape(n.args[0])
    dim = kw.get("dim")
    if S is None or dim is None or kw.get("dtype") is not None or \
            set(kw) - {"dim", "keepdim", "dtype"} or n.meta.get("grad_enabled") is not None:
        return None
    nd = len(S)
    dims = tuple(dim) if isinstance(dim, (tuple, list)) else (dim,)
    if not all(isinstance(d, int) and -nd <= d < nd for d in dims):
        return None
    dims = sorted({d % nd for d in dims})
    k = len(dims)
    if dims != list(range(k)) or not 0 < k < nd:
        return None
    val = n.meta.get("val")
    if not isinstance(val, Tensor) or val.dtype.name not in ("int64", "float32", "float64") or \
            n.args[0].meta["val"].dtype is not val.dtype:
        return None
    return S, k, bool(kw.get("keepdim", False))


def _kept(s, S: tuple, k: int) -> bool:
    """A value per column: the kept dims' shape, with or without the leading ones."""
    if s is None or len(s) > len(S):
        return False
    pad = (1,) * (len(S) - len(s)) + tuple(s)
    return pad[k:] == S[k:] and _one(pad[:k])


def role(n: Node, S: tuple, k: int, pointwise) -> str | None:
    """How ``n`` fits a column group over ``S`` split at ``k``: "full", "reduce" or "col"."""
    r = reduction(n)
    if r is not None:
        return "reduce" if r[:2] == (S, k) else None
    if not pointwise(n):
        return None
    out = _shape(n)
    shapes = [_shape(a) for a in n.args if isinstance(a, Node)]
    if out == S:
        return "full" if all(s == S or _one(s) or _kept(s, S, k) for s in shapes) else None
    if out in (S[k:], (1,) * k + S[k:]):
        return "col" if all(_one(s) or _kept(s, S, k) for s in shapes) else None
    return None


def find_groups(nodes: list, pointwise, taken: set) -> list:
    """Runs of nodes (not in ``taken``) that make a column group with a reduction."""
    groups: list = []
    cur: list = []
    split = None

    def close():
        if any(reduction(n) for n in cur) and len(cur) > 1:
            groups.append(list(cur))

    for i, n in enumerate(nodes):
        if n.op in ("placeholder", "get_attr"):
            continue
        r = role(n, *split, pointwise) if cur and n not in taken else None
        # a full op runs in the row loop, before the reductions exist: it may read full members only
        if r and (r != "full" or all(role(a, *split, pointwise) == "full"
                                     for a in n.all_input_nodes if a in cur)):
            cur.append(n)
            continue
        if cur and n.op == "call_function" and not n.meta.get("mutates") and \
                not any(a in cur for a in n.all_input_nodes):
            continue  # an unrelated node between two members: the group stays open
        close()
        cur, split = [], None
        if n in taken:
            continue
        r = reduction(n)
        if r is not None:
            cur, split = [n], r[:2]
        elif pointwise(n) and _shape(n):
            # a prologue's first node: the split of the first reduction after it that reads it
            for m in nodes[i + 1:]:
                r = reduction(m)
                if r is not None and r[0] == _shape(n) and role(n, *r[:2], pointwise) == "full":
                    cur, split = [n], r[:2]
                    break
    close()
    return groups


def build(group: list, nodes: list, pointwise):
    """(ColumnKernel, its operands, its outputs) for a column group."""
    S, k = next(reduction(n) for n in group if reduction(n))[:2]
    gs = set(group)
    later = nodes[nodes.index(group[-1]) + 1:]
    outs = [n for n in group if any(u not in gs for u in n.users) or
            any(n in u.all_input_nodes for u in later if u.op == "output")]
    kinds = {n: role(n, S, k, pointwise) for n in group}
    out_of = {o: j for j, o in enumerate(outs)}
    ins: list = []
    index: dict = {}
    in_kind: list = []  # "f" full, "b" a value per column, "s" one value, "" a Python scalar

    def ref(a) -> str:
        key = ("n", a) if isinstance(a, Node) else ("s", type(a), a)
        if key not in index:
            index[key] = len(ins)
            ins.append(a)
            s = _shape(a) if isinstance(a, Node) else None
            in_kind.append("" if s is None else "f" if s == S else "s" if _one(s) else "b")
        j = index[key]
        kind = in_kind[j]
        return f"x{j}[i]" if kind in ("f", "b") else f"c{j}" if kind == "s" else f"in{j}"

    consts: dict = {}
    ops: dict = {}  # node -> (fname, compute ctor, result ctor)
    for n in group:
        op = n.target
        if kinds[n] == "reduce":
            consts[f"_c_{op.name}"] = f"scalar_of({op.name!r}, 'combine')"
            if op.post is not None:
                consts[f"_p_{op.name}"] = f"scalar_of({op.name!r}, 'post')"
            continue
        _, compute, result = dispatch.resolve_dtypes(op, tuple(arg_vals(n.args)))
        which = scalar_variant(op, compute.name)
        consts[f"_f_{op.name}_{which}"] = f"scalar_of({op.name!r}, {which!r})"
        ops[n] = (f"_f_{op.name}_{which}", _NP_CTOR[compute.name], _NP_CTOR[result.name])

    def acc_of(n) -> str:
        res = n.meta["val"].dtype.name
        return "float64" if res == "float32" and n.target.wide else res

    # the row loop: the prologue's values (each once), the accumulations, the full outputs
    local: dict = {}
    row_body: list = []

    def value(a) -> str:
        return local[a] if isinstance(a, Node) and a in gs else ref(a)

    for n in group:
        j = group.index(n)
        if kinds[n] == "full":
            fname, ci, co = ops[n]
            args = ", ".join(f"{ci}({value(a)})" for a in n.args)
            local[n] = f"w{j}"
            row_body.append(f"w{j} = {co}({fname}({args}))")
            if n in out_of:
                row_body.append(f"o{out_of[n]}[i] = w{j}")
        elif kinds[n] == "reduce":
            src = n.args[0]
            v = local[src] if src in gs else ref(src)
            row_body.append(f"a{j}[i] = _c_{n.target.name}(a{j}[i], {_NP_CTOR[acc_of(n)]}({v}))")
    # the column loop: the reduced values, the epilogue, the column outputs
    col_body: list = []
    for n in group:
        j = group.index(n)
        if kinds[n] == "reduce":
            res = _NP_CTOR[n.meta["val"].dtype.name]
            post = f"_p_{n.target.name}(a{j}[i], R)" if n.target.post is not None else f"a{j}[i]"
            local[n] = f"v{j}"
            col_body.append(f"v{j} = {res}({post})")
        elif kinds[n] == "col":
            fname, ci, co = ops[n]
            args = ", ".join(f"{ci}({value(a)})" for a in n.args)
            local[n] = f"v{j}"
            col_body.append(f"v{j} = {co}({fname}({args}))")
        else:
            continue
        if n in out_of:
            col_body.append(f"o{out_of[n]}[i] = v{j}")
    accs = [(group.index(n), acc_of(n), n.target.identity) for n in group if kinds[n] == "reduce"]
    row_params = codegen.names_in(row_body)
    col_params = codegen.names_in(col_body)
    fulls = [j for o, j in out_of.items() if kinds[o] == "full"]
    # a per-column operand (``x<j>``) is the block's slice of it in both loops
    names = [f"out{j}" for j in range(len(outs))] + [f"in{j}" for j in range(len(ins))]
    sig = ", ".join(names)
    desc = ", ".join(n.target.name for n in group)  # (ops only: one source for groups alike)
    fns = [f for n in group for f in (n.target.scalar, n.target.int_scalar, n.target.combine,
                                      n.target.post) if f is not None]
    lines = [*codegen.header(f"fused column group over the leading dims: {desc}", fns, consts),
             "",
             *codegen.loop_function("rows", row_params, row_body),
             *codegen.loop_function("cols", ["R", *col_params], col_body),
             codegen.NJIT,
             f"def serial({sig}, c_lo, c_hi, R, C):",
             *[f"    a{j}_ = np.empty(min({_BLOCK}, c_hi - c_lo), np.{acc})" for j, acc, _ in accs],
             *[f"    c{j} = in{j}[0]" for j, kd in enumerate(in_kind) if kd == "s"],
             f"    for b in range(c_lo, c_hi, {_BLOCK}):",
             f"        m = min({_BLOCK}, c_hi - b)",
             *[f"        a{j} = a{j}_[:m]" for j, _, _ in accs],
             *[f"        a{j}[:] = {literal(ident, acc)}" for j, acc, ident in accs],
             *[f"        x{j} = in{j}[b:b + m]" for j, kd in enumerate(in_kind) if kd == "b"],
             "        for r in range(R):",
             "            base = r * C + b",
             *[f"            x{j} = in{j}[base:base + m]" for j, kd in enumerate(in_kind)
               if kd == "f"],
             *[f"            o{j} = out{j}[base:base + m]" for j in fulls],
             f"            _rows(m, {', '.join(row_params)})",
             *[f"        o{j} = out{j}[b:b + m]" for o, j in out_of.items() if kinds[o] != "full"],
             f"        _cols(m, R, {', '.join(col_params)})",
             "",
             "_call = external(serial)",
             "",
             codegen.NJIT_PARALLEL,
             f"def parallel({sig}, R, C):",
             "    nc = min(64, max(2, C // 1024))",
             "    for c in prange(nc):",
             "        lo = (c * C // nc) // 16 * 16",
             "        hi = C if c == nc - 1 else ((c + 1) * C // nc) // 16 * 16",
             f"        _call({sig}, lo, hi, R, C)",
             ""]
    src = "\n".join(lines)
    return ColumnKernel(src, group, ins, in_kind, outs, kinds, S, k), ins, outs


class ColumnKernel:
    """One column group: call it with the group's operands; it returns the group's outputs."""

    def __init__(self, source: str, group: list, ins: list, in_kind: list, outs: list,
                 kinds: dict, S: tuple, k: int) -> None:
        self.source = source
        self.names = [n.name for n in group]
        self.in_kind = in_kind
        self.out_dtypes = [o.meta["val"].dtype for o in outs]
        self.out_rank = [(kinds[o], len(o.meta["val"].shape)) for o in outs]
        self.rank, self.k = len(S), k
        self.__name__ = "cols_" + "_".join(self.names)[:60]
        self._mod = None
        self._eager = subgraph_module(group, ins, outs)

    def __call__(self, *args):
        grad = dispatch.grad_state.enabled
        S = next((a._a.shape for a, kd in zip(args, self.in_kind) if kd == "f"), None)
        if S is None or len(S) != self.rank:
            return self._eager(*args)
        k = self.k
        R, C = 1, 1
        for d in S[:k]:
            R *= d
        for d in S[k:]:
            C *= d
        if not R or not C:
            return self._eager(*args)  # the reductions' identities, warnings and errors
        flat = list(args)
        for j, (a, kd) in enumerate(zip(args, self.in_kind)):
            if not kd:
                continue
            arr = a._a
            if arr.__class__ is not np.ndarray or (grad and a._requires_grad) or \
                    not arr.flags.c_contiguous or arr.dtype == np.float16 or \
                    (kd == "f" and arr.shape != S) or (kd == "s" and arr.size != 1) or \
                    (kd == "b" and not _kept(arr.shape, S, k)):
                return self._eager(*args)
            flat[j] = arr.reshape(-1)
        kept = S[k:]
        outs = [_allocator.empty(S if kind == "full" else (1,) * k + kept if rk == len(S)
                                 else kept, d.np)
                for (kind, rk), d in zip(self.out_rank, self.out_dtypes)]
        if self._mod is None:
            self._mod = load("jt_cols", self.source)
            logs.log("kernels", f"{self.__name__} ({self._mod.__file__}):\n{self.source}")
        flats = [o.reshape(-1) for o in outs]
        mod = self._mod
        if C >= 2048 and R * C >= _flags.GRAIN_SIZE and \
                workers.use_parallel_entry(mod, "parallel", R * C, (*flats, *flat, R, C)):
            # (while a compile worker builds the parallel entry: the serial one, which sums
            # each column over the rows in the same order)
            mod.parallel(*flats, *flat, R, C)
        else:
            mod.serial(*flats, *flat, 0, C, R, C)
        return tuple([Tensor._make(o, None, d) for o, d in zip(outs, self.out_dtypes)])

    def __repr__(self) -> str:
        return f"ColumnKernel({', '.join(self.names)})"
