"""Row fusion: pointwise ops and reductions over the last dim, one row at a time.

A row group is a run of nodes over one shape ``S = (..., C)``: pointwise ops over ``S``,
reductions (sum, mean, amax, amin, prod) of such values over the last dim, and pointwise ops
on those per-row results, which full ops may read again (keepdim). Softmax's ``x - max``,
``exp``, ``sum``, ``/``, layer norm's mean and variance, a loss's row sums: each becomes one
kernel that reads its inputs once per row and keeps the row in L1 between its passes. Rows
of 256 or more run pipelined where the group allows (``_pipeline``): a row's last pass, which
writes the outputs, also makes the next row's first pass, which reads it from memory.
A loop computing an op with a fast scalar (exp, log, sin) runs its fast build on rows that
a check finds in range; where the checked value is monotonic in one input (softmax's
``x - max``), the check reads that input's least and greatest elements, which the first
loop finds, instead of passing over the row (``extremes``).

Pointwise lines use eager's scalars and dtype rules (bitwise eager for those values);
float32 sums accumulate in float32 blocks added in float64 (``_blocked_sum``) and agree with
eager's float64 accumulation within rounding.
"""

from __future__ import annotations

import re

import numpy as np

from .. import _allocator, _flags, dispatch
from ..kernels import codegen
from ..kernels.codegen import EXPENSIVE, scalar_variant
from ..kernels.codegen import NP_CTOR as _NP_CTOR
from ..kernels.cpu.reduce import literal
from ..kernels.registry import REGISTRY
from ..kernels.source import load
from ..tensor import Tensor
from . import logs, workers
from .graph import Node, arg_vals
from .graph_module import subgraph_module

_REDUCTIONS = frozenset(["sum", "mean", "amax", "amin", "prod"])
# full ops monotonic in an operand that varies along the row where every other is constant
# along it (a quotient in its numerator only): ``extremes``
_MONOTONE = frozenset(["add", "sub", "mul", "div", "neg"])


def _shape(n) -> tuple | None:
    """A node's shape as plain ints: the groups are chosen at the traced sizes without
    guarding on them (a symbolic size compared here would pin the graph to its value); the
    kernels check their operands' layouts at each call and run eagerly where one differs."""
    v = n.meta.get("val") if isinstance(n, Node) else None
    return tuple(int.__int__(d) for d in v.shape) if isinstance(v, Tensor) else None


def _last_dim(dim, nd: int) -> bool:
    if isinstance(dim, (tuple, list)):
        if len(dim) != 1:
            return False
        dim = dim[0]
    return isinstance(dim, int) and nd > 0 and dim in (-1, nd - 1)


def reduction(n: Node, pointwise) -> tuple | None:
    """(operand shape S, keepdim) when ``n`` reduces a value over its last dim, else None."""
    t = n.target
    if n.op != "call_function" or getattr(t, "name", None) not in _REDUCTIONS or \
            getattr(t, "meta", 1) is None or len(n.args) != 1 or not isinstance(n.args[0], Node):
        return None
    kw = n.kwargs
    s = _shape(n.args[0])
    if s is None or not _last_dim(kw.get("dim"), len(s)) or kw.get("dtype") is not None or \
            set(kw) - {"dim", "keepdim", "dtype"} or n.meta.get("grad_enabled") is not None:
        return None
    val = n.meta.get("val")
    if not isinstance(val, Tensor) or val.dtype.name not in ("int64", "float32", "float64") or \
            n.args[0].meta["val"].dtype is not val.dtype:
        return None
    return s, bool(kw.get("keepdim", False))


def role(n: Node, S: tuple, pointwise) -> str | None:
    """How ``n`` fits a row group over ``S``: "full", "row" or "reduce" (None: it does not)."""
    r = reduction(n, pointwise)
    if r is not None:
        return "reduce" if r[0] == S else None
    if not pointwise(n):
        return None
    out = _shape(n)
    R1, R0 = S[:-1] + (1,), S[:-1]
    shapes = [_shape(a) for a in n.args if isinstance(a, Node)]
    if out == S:
        return "full" if all(s in (S, R1) or _one(s) or _across(s, S) for s in shapes) else None
    if out in (R1, R0):
        return "row" if all(s == out or _one(s) for s in shapes) else None
    return None


def _across(s, S: tuple) -> bool:
    """A value per column, the same for every row (a bias or a weight: ``(C,)``, ``(1, C)``)."""
    return s is not None and 0 < len(s) <= len(S) and s[-1] == S[-1] and _one(s[:-1])


def _one(s) -> bool:
    if s is None:
        return False
    n = 1
    for d in s:
        n *= d
    return n == 1


def find_groups(nodes: list, pointwise) -> list:
    """Runs of nodes that make a row group with at least one reduction (in program order)."""
    groups, cur, S = [], [], None

    def close():
        if len(cur) > 1 and any(reduction(n, pointwise) for n in cur):
            groups.append(list(cur))

    for n in nodes:
        if n.op in ("placeholder", "get_attr"):
            continue
        if cur and role(n, S, pointwise):
            cur.append(n)
            continue
        if cur and n.op == "call_function" and not any(a in cur for a in n.all_input_nodes) \
                and role(n, S, pointwise) is None and not reduction(n, pointwise) \
                and not pointwise(n) and not n.meta.get("mutates"):
            continue  # an unrelated node between two members: the group stays open
        close()
        cur, S = [], None
        r = reduction(n, pointwise)
        if r is not None and len(r[0]) >= 1:
            cur, S = [n], r[0]
        elif pointwise(n) and _shape(n) and role(n, _shape(n), pointwise) == "full":
            cur, S = [n], _shape(n)
    close()
    return groups


def build(group: list, nodes: list, pointwise):
    """(RowKernel, its operands, its outputs) for a row group."""
    r = _build(group, nodes, pointwise, True)
    return r if r is not None else _build(group, nodes, pointwise, False)


def _build(group: list, nodes: list, pointwise, lend: bool, ext: tuple = ()):
    """``build``; with ``lend``, the one full output's row holds the last expensive scratch
    value until the last loop (None where the output is written before). ``ext``: (input
    index, dtype) of the inputs whose least and greatest elements the first reduction's loop
    also finds (``extremes``); a build that finds a guard they would decide builds again
    with them."""
    first_red = next(n for n in group if reduction(n, pointwise))
    S = reduction(first_red, pointwise)[0]
    gs = set(group)
    later = nodes[nodes.index(group[-1]) + 1:]
    outs = [n for n in group if any(u not in gs for u in n.users) or
            any(n in u.all_input_nodes for u in later if u.op == "output")]
    kinds = {n: role(n, S, pointwise) for n in group}
    ins: list = []
    index: dict = {}
    # per operand: "f" full, "r" one value per row, "b" one value per column (a bias), "s" one
    # value, "" a Python scalar
    in_kind: list = []
    out_of = {o: j for j, o in enumerate(outs)}

    def ref(a) -> str:
        if isinstance(a, Node) and a in gs:
            return f"v{group.index(a)}" if kinds[a] != "full" else f"{dst(a)}[i]"
        key = ("n", a) if isinstance(a, Node) else ("s", type(a), a)
        if key not in index:
            index[key] = len(ins)
            ins.append(a)
            s = _shape(a) if isinstance(a, Node) else None
            in_kind.append("" if s is None else "f" if s == S else "s" if _one(s) else
                           "r" if s in (S[:-1] + (1,), S[:-1]) else "b")
        j = index[key]
        k = in_kind[j]
        return f"x{j}[i]" if k in ("f", "b") else f"c{j}" if k in ("r", "s") else f"in{j}"

    def dst(n) -> str:
        return alias.get(n) or (f"o{out_of[n]}" if n in out_of else f"t{group.index(n)}")

    # Loops over the row, each a loop function (``codegen``): a reduction's loop computes its
    # operand from the row's inputs and accumulates it; a last loop writes the full outputs.
    # Cheap full values (a sub, a mul) are computed again in each loop that reads them, which
    # costs less than a scratch row's store and load (layer norm reads x three times and
    # writes only its output, as eager's kernel). An expensive value (exp, tanh) is computed
    # once and stored to a scratch row (or its output row), so a loop computes at most one:
    # by the reduction's loop that first reads it (softmax's exp and its sum, one pass), or
    # by a loop of its own before a loop that needs it.
    consts, scratch, steps, row_stores, loops = {}, [], [], [], []
    first = None  # the first reduction's loop where it reads the row's inputs only
    vctor: dict = {}  # row value name -> its constructor
    guards: dict = {}  # guarded full node -> (fast scalar name, its check's name)
    ready: set = set()  # inputs whose row extremes (mn{j}, mx{j}) the row has by now
    want: dict = {}  # input index -> dtype: inputs whose extremes would decide a guard
    stored: set = set()  # full values in a row (scratch or output) by now
    full_ops: dict = {}  # full node -> (fname, compute ctor, result ctor)

    def deps(targets) -> list:
        """The full nodes a loop computing ``targets`` computes, in group order (a stored
        value is read, not computed)."""
        need: set = set()
        todo = [t for t in targets if t not in stored]
        while todo:
            n = todo.pop()
            if n not in need:
                need.add(n)
                todo += [a for a in n.args if isinstance(a, Node) and a in gs and
                         kinds[a] == "full" and a not in stored]
        return [n for n in group if n in need]

    def heavy(n) -> bool:
        return n.target.name in EXPENSIVE

    # The one full output, written by the last loop, lends its row to the last expensive
    # scratch value of its dtype (softmax's exp): the last loop then rescales that row in place,
    # as eager's kernel does, a loop over one array that vectorises (two names for one row
    # fail LLVM's overlap check and run scalar), and the output's first write joins the exp
    # loop's arithmetic instead of a store-only pass (softmax 17% faster at one thread).
    alias: dict = {}
    full_outs = [o for o in outs if kinds[o] == "full"]
    if lend and len(full_outs) == 1:
        o = full_outs[0]
        cands = [n for n in group if kinds[n] == "full" and n not in out_of and heavy(n) and
                 n.meta["val"].dtype is o.meta["val"].dtype]
        if cands:
            alias[cands[-1]] = f"o{out_of[o]}"

    def loop(name: str, body: list, **kw) -> str:
        """Add a loop function; the arguments of its call."""
        params = codegen.names_in(body)
        loops.extend(codegen.loop_function(name, params, body, n="C", **kw))
        return f"_{name}(C, {', '.join(params)})"

    def ssa(nodes, fast: bool = False) -> tuple:
        """SSA lines computing ``nodes`` in order (``fast``: guarded ops through their fast
        scalars); their names."""
        body, local = [], {}
        for n in nodes:
            fname, ci, co = full_ops[n]
            if fast and n in guards:
                fname = guards[n][0]
            args = ", ".join(f"{ci}({local.get(a) or ref(a)})" for a in n.args)
            local[n] = f"w{group.index(n)}"
            body.append(f"{local[n]} = {co}({fname}({args}))")
        return body, local

    def compute(targets, fast: bool = False) -> tuple:
        """SSA lines computing ``targets``; the names of their values."""
        body, local = ssa(deps(targets), fast)
        return body, [local.get(t) or ref(t) for t in targets]

    def guard(targets) -> list | None:
        """The lines of a loop that asks each guarded op computing ``targets`` whether its
        fast scalar is exact for the row (``good``), computing only their operands; None
        where no guarded op is computed."""
        ds = deps(targets)
        gs_ = [n for n in ds if n in guards]
        if not gs_:
            return None
        need: set = set()
        todo = [a for n in gs_ for a in n.args if isinstance(a, Node) and a in ds]
        while todo:
            n = todo.pop()
            if n not in need:
                need.add(n)
                todo += [a for a in n.args if isinstance(a, Node) and a in ds]
        body, local = ssa([n for n in ds if n in need])
        for n in gs_:
            ci = full_ops[n][1]
            args = ", ".join(f"{ci}({local.get(a) or ref(a)})" for a in n.args)
            body.append(f"good &= {guards[n][1]}({args})")
        return body

    def varies(a) -> bool:
        """Whether operand ``a`` of a full op changes along the row."""
        if not isinstance(a, Node):
            return False
        return kinds[a] == "full" if a in gs else ref(a).endswith("[i]")

    def extremes(targets) -> dict | None:
        """{input index: dtype} of the full inputs whose least and greatest elements in the
        row decide the guard of a loop computing ``targets``: each guarded op checks one
        interval (``codegen.OK_ON_AN_INTERVAL``) of a value monotonic in one element of one
        input (adds, subs, products and quotients by values constant along the row,
        negations: rounding keeps them monotonic, and a nan they make at an inner element
        they make at an extreme), so the values at the two extremes bound every other; a nan
        element makes the extremes nan, which fails. None where a guarded op is not such."""
        ds = deps(targets)
        js: dict = {}
        for n in ds:
            if n not in guards:
                continue
            if n.target.name not in codegen.OK_ON_AN_INTERVAL or len(n.args) != 1 or n.kwargs:
                return None
            a = n.args[0]
            while isinstance(a, Node) and a in gs:
                if a not in ds or a.kwargs or a.target.name not in _MONOTONE:
                    return None
                var = [i for i, b in enumerate(a.args) if varies(b)]
                if len(var) != 1 or (a.target.name == "div" and var[0] != 0):
                    return None
                a = a.args[var[0]]
            dt = a.meta["val"].dtype.name if isinstance(a, Node) else None
            if dt not in ("float32", "float64") or not ref(a).endswith("[i]"):
                return None
            j = index[("n", a)]
            if in_kind[j] != "f":
                return None
            js[j] = dt
        return js

    def range_check(name: str, g: list, js) -> str:
        """The call of a check of the row from its inputs' extremes: guard body ``g`` (the
        check loop's) run on each input's least element in place of the element, then on
        its greatest."""
        lines = []
        for tag in ("mn", "mx"):
            for line in g:
                line = re.sub(r"\bx(\d+)\[i\]", lambda m, tag=tag: tag + m.group(1), line)
                lines.append(re.sub(r"\bw(\d+)\b", tag + r"w\1", line))
        params = codegen.names_in(lines) + [f"{t}{j}" for j in sorted(js) for t in ("mn", "mx")]
        loops.extend([codegen.inner(codegen.NJIT), f"def {name}({', '.join(params)}):",
                      "    good = True", *[f"    {x}" for x in lines],
                      "    return np.int64(good)", ""])
        return f"{name}({', '.join(params)})"

    def guarded_call(name: str, targets, make) -> str:
        """The call of loop ``name``, whose body ``make(fast)`` builds: where it computes a
        guarded op, a check of the row picks the fast-scalar build or the full one, as the
        pointwise kernels check each block (the same values, bitwise). Where the row's
        input extremes decide the check (``extremes``) and the first reduction's loop, which
        comes before, finds them, the check costs no pass over the row."""
        g = guard(targets)
        full = make(name, False)
        if g is None:
            return full
        fast = make(f"{name}f", True)
        js = extremes(targets)
        if js is not None and js.keys() <= ready:
            check = range_check(f"{name}r", g, js)
        else:
            if js is not None and first is not None:
                want.update(js)
            # (an int: the call site of a function returning a bool is not found in its block)
            check = loop(f"{name}g", g, ret="np.int64(good)", init=["good = True"])
        return f"{fast} if {check} else {full}"

    def store(n) -> None:
        """A loop of its own writing full value ``n`` to its row, after the expensive values
        it reads (so it computes one)."""
        for d in deps([n]):
            if d is not n and heavy(d) and d not in stored:
                store(d)
        k = group.index(n)
        if n not in out_of and n not in alias:
            scratch.append(f"t{k} = np.empty(C, {full_ops[n][2]})")
        def make(name, fast):
            body, (v,) = compute([n], fast)
            return loop(name, body + [f"{dst(n)}[i] = {v}"])

        steps.append(guarded_call(f"seg{k}", [n], make))
        stored.add(n)

    for k, n in enumerate(group):
        op = n.target
        if kinds[n] == "reduce":
            res = acc = n.meta["val"].dtype.name
            consts[f"_c_{op.name}"] = f"scalar_of({op.name!r}, 'combine')"
            src = n.args[0]
            pending = [d for d in (deps([src]) if isinstance(src, Node) and src in gs else ())
                       if heavy(d)]
            for d in pending[:-1]:
                if d not in stored:
                    store(d)
            h = pending[-1] if pending and pending[-1] not in stored else None
            if h is not None and h not in out_of and h not in alias:
                scratch.append(f"t{group.index(h)} = np.empty(C, {full_ops[h][2]})")
            targets = [src] if h is None else [h, src]
            is_first = first is None and not pending and guard(targets) is None
            # the first reduction's loop also finds the extremes of the inputs ``ext``
            xt = ext if is_first else ()
            more, more_init, more_ret = [], [], ""
            if xt:
                for o in ("amin", "amax"):
                    consts.setdefault(f"_c_{o}", f"scalar_of({o!r}, 'combine')")
                more, more_init, more_ret = _extreme_lines(xt, "_c_", op, compute(targets)[1][0],
                                                           acc_dt=acc)

            def make(name, fast, h=h, targets=targets, op=op, acc=acc, res=res, more=more,
                     more_init=more_init, more_ret=more_ret):
                if h is None:
                    body, (v,) = compute(targets, fast)
                else:
                    # the last expensive value is stored by the reduction's own loop, which
                    # then reads its row once (softmax's exp, written and summed in one pass
                    # as eager's)
                    body, (hv, v) = compute(targets, fast)
                    body.append(f"{dst(h)}[i] = {hv}")
                # compiled with ``reassoc`` (as eager's row sums): the accumulation vectorises
                form = _sum_form(op, res, body)
                if form == "f64":
                    # a sum of an operand as it is (layer norm's mean): float64 lanes, as
                    # eager's row sum, beat float32 blocks (their per-block reductions) by 20%
                    return loop(name, [f"acc += np.float64({v})", *more], ret="acc" + more_ret,
                                init=["acc = np.float64(0)", *more_init],
                                decorator=codegen.NJIT_REASSOC)
                if form == "blocked":
                    return _blocked_sum(name, body, v, op.name, loops, more, more_init, more_ret)
                body.append(f"acc = _c_{op.name}(acc, {_NP_CTOR[acc]}({v}))")
                return loop(name, body + more, ret="acc" + more_ret,
                            init=[f"acc = {_NP_CTOR[acc]}({literal(op.identity, acc)})",
                                  *more_init],
                            decorator=codegen.NJIT_REASSOC)

            if is_first:
                body, (v,) = compute(targets)
                first = {"step": len(steps), "op": op, "acc": acc, "v": v, "body": body,
                         "form": _sum_form(op, res, body), "ext": xt}
            steps.append(f"acc{_ext_names(xt)} = " + guarded_call(f"seg{k}", targets, make))
            ready.update(j for j, _ in xt)
            if h is not None:
                stored.add(h)
            vctor[f"v{k}"] = _NP_CTOR[res]
            if op.post is not None:
                consts[f"_p_{op.name}"] = f"scalar_of({op.name!r}, 'post')"
                steps.append(f"v{k} = {_NP_CTOR[res]}(_p_{op.name}(acc, C))")
            else:
                steps.append(f"v{k} = {_NP_CTOR[res]}(acc)")
        else:
            _, compute_dt, result = dispatch.resolve_dtypes(op, tuple(arg_vals(n.args)))
            which = scalar_variant(op, compute_dt.name)
            fname = f"_f_{op.name}_{which}"
            consts[fname] = f"scalar_of({op.name!r}, {which!r})"
            ci, co = _NP_CTOR[compute_dt.name], _NP_CTOR[result.name]
            if kinds[n] == "full":
                full_ops[n] = (fname, ci, co)
                if codegen.guarded(op, compute_dt.name):
                    consts.setdefault(f"_g_{op.name}", f"scalar_of({op.name!r}, 'fast_scalar')")
                    consts.setdefault(f"_ok_{op.name}", f"scalar_of({op.name!r}, 'fast_ok')")
                    guards[n] = (f"_g_{op.name}", f"_ok_{op.name}")
            else:
                args = ", ".join(f"{ci}({ref(a)})" for a in n.args)
                vctor[f"v{k}"] = co
                steps.append(f"v{k} = {co}({fname}({args}))")
        if n in out_of and kinds[n] != "full":
            row_stores.append(f"out{out_of[n]}[r] = v{k}")
    # the full outputs not stored yet: one last loop, after all but one expensive value
    last = [n for n in group if n in out_of and kinds[n] == "full" and n not in stored]
    if alias and not last:
        return None  # the output is written before the last loop: no row to lend
    while sum(map(heavy, deps(last))) > 1:
        store(next(n for n in deps(last) if heavy(n)))
        last = [n for n in last if n not in stored]
    if alias and not last:
        return None
    final = None  # the last loop's name and body where it is not guarded
    if last:
        def make(name, fast):
            body, vals = compute(last, fast)
            return loop(name, body + [f"{dst(n)}[i] = {v}" for n, v in zip(last, vals)])

        name = f"seg{group.index(last[0])}"
        steps.append(guarded_call(name, last, make))
        if guard(last) is None:
            body, vals = compute(last)
            final = (name, body + [f"{dst(n)}[i] = {v}" for n, v in zip(last, vals)])
    if want.keys() - {j for j, _ in ext}:
        return _build(group, nodes, pointwise, lend, tuple(sorted({**dict(ext), **want}.items())))
    names = [f"out{j}" for j in range(len(outs))] + [f"in{j}" for j in range(len(ins))]
    sig = ", ".join(names)
    fns = [f for n in group for f in (n.target.scalar, n.target.int_scalar, n.target.combine,
                                      n.target.post, n.target.fast_scalar, n.target.fast_ok)
           if f is not None]
    if ext:
        fns += [REGISTRY["amin"].combine, REGISTRY["amax"].combine]
    desc = ", ".join(n.target.name for n in group)  # (ops only: one source for groups alike)
    rows = [f"x{j} = in{j}[base:base + C]" for j, k in enumerate(in_kind) if k == "f"]
    rows += [f"c{j} = in{j}[r]" for j, k in enumerate(in_kind) if k == "r"]
    rows += [f"o{j} = out{j}[base:base + C]" for j, o in enumerate(outs) if kinds[o] == "full"]
    piped = _pipeline(first, final, steps, rows, row_stores, in_kind, outs, kinds, vctor, loops) \
        if first is not None and final is not None else None
    head = [*[f"    {x}" for x in scratch],
            *[f"    c{j} = in{j}[0]" for j, k in enumerate(in_kind) if k == "s"],
            *[f"    x{j} = in{j}" for j, k in enumerate(in_kind) if k == "b"]]
    lines = [*codegen.header(f"fused row group over the last dim: {desc}", fns, consts),
             "",
             *loops,
             codegen.NJIT,
             f"def serial({sig}, r_lo, r_hi, C):",
             *head,
             "    for r in range(r_lo, r_hi):",
             "        base = r * C",
             *[f"        {x}" for x in rows + steps + row_stores],
             "",
             "_call = external(serial)",
             "",
             codegen.NJIT_PARALLEL,
             f"def parallel({sig}, rows, C):",
             "    nc = min(rows, 64, max(2, rows * C // 8192))",
             "    for c in prange(nc):",
             f"        _call({sig}, c * rows // nc, (c + 1) * rows // nc, C)",
             ""]
    if piped:
        # the pipelined entries, for rows of _PIPE_MIN_C or more (``RowKernel`` picks them at
        # each call: one source for every size, each entry compiled where it first runs)
        lines += [codegen.NJIT,
                  f"def serialp({sig}, r_lo, r_hi, C):",
                  *head,
                  *[f"    {x}" for x in piped],
                  "",
                  "_callp = external(serialp)",
                  "",
                  codegen.NJIT_PARALLEL,
                  f"def parallelp({sig}, rows, C):",
                  # (chunks of two rows where it can: a chunk's first row costs a pass more)
                  "    nc = min(max(2, rows // 2), 64, max(2, rows * C // 8192))",
                  "    for c in prange(nc):",
                  f"        _callp({sig}, c * rows // nc, (c + 1) * rows // nc, C)",
                  ""]
    return RowKernel("\n".join(lines), group, ins, in_kind, outs, kinds, S), ins, outs


# float32 sums accumulate in float32 over blocks of this many elements (8-lane vectors, the
# exp beside them at full width), and the blocks' sums in float64: the float32 error stays
# that of a 256-element sum, however long the row (layer norm of rows around 1000: within
# torch's float32 error). Softmax and layer norm rows of 1024 ran 8% and 35% faster than
# with one float64 accumulator (4 lanes, a conversion per element) on an AVX2 host. A sum of an
# operand read as it is (no arithmetic in its loop) takes the float64 accumulator: there the
# blocks' reductions cost more than the conversions (layer norm 20% faster on AVX-512).
_SUM_BLOCK = 256


def _extreme_lines(ext: tuple, prefix: str, op=None, v: str = "", acc: str = "acc",
                   acc_dt: str = "") -> tuple:
    """(loop lines, their initialisations, the return's tail) finding the least and greatest
    elements of the inputs ``ext`` ((index, dtype) pairs) as ``mn{j}``/``mx{j}``, through
    ``{prefix}amin``/``{prefix}amax`` (nan-propagating). Where the loop's reduction ``op`` of
    ``v`` is already one of them (softmax's max: ``v`` the element, accumulated in its own
    dtype ``acc_dt``), its accumulator ``acc`` is returned."""
    lines, init, ret = [], [], ""
    for j, dt in ext:
        for t, o, start in (("mn", "amin", "np.inf"), ("mx", "amax", "-np.inf")):
            if op is not None and op.name == o and v == f"x{j}[i]" and acc_dt == dt:
                ret += f", {acc}"
                continue
            lines.append(f"{t}{j} = {prefix}{o}({t}{j}, x{j}[i])")
            init.append(f"{t}{j} = {_NP_CTOR[dt]}({start})")
            ret += f", {t}{j}"
    return lines, init, ret


def _ext_names(ext: tuple, prefix: str = "") -> str:
    """The tail of the names a loop with ``_extreme_lines`` assigns: ", mn0, mx0"."""
    return "".join(f", {prefix}mn{j}, {prefix}mx{j}" for j, _ in ext)


def _blocked_sum(name: str, body: list, v: str, op: str, loops: list, more: list = (),
                 more_init: list = (), more_ret: str = "") -> str:
    """A loop function summing ``v`` (computed by ``body``) over the row in float32 blocks
    into a float64 total; the arguments of its call. ``more``: lines each element also runs
    (``_extreme_lines``), ``more_init`` before the loop, ``more_ret`` returned after the
    total."""
    step = f"part = _c_{op}(part, np.float32({v}))"
    body = [*body, *more]
    params = codegen.names_in(body + [step])
    # full blocks run a fixed-length inner loop, which LLVM vectorises; a loop bounded by
    # min(C, lo + block) was left scalar on AVX-512 hosts (5x slower: softmax compiled at 4x
    # eager's time)
    loops.extend([codegen.inner(codegen.NJIT_REASSOC), f"def {name}({', '.join(['C', *params])}):",
                  "    acc = np.float64(0)", *[f"    {x}" for x in more_init],
                  f"    nb = C // {_SUM_BLOCK}",
                  "    for b in range(nb):",
                  f"        lo = b * {_SUM_BLOCK}",
                  "        part = np.float32(0)",
                  f"        for j in range({_SUM_BLOCK}):",
                  "            i = lo + j",
                  *[f"            {x}" for x in body],
                  f"            {step}",
                  "        acc += np.float64(part)",
                  "    part = np.float32(0)",
                  f"    for i in range(nb * {_SUM_BLOCK}, C):",
                  *[f"        {x}" for x in body],
                  f"        {step}",
                  "    acc += np.float64(part)",
                  f"    return acc{more_ret}", "", f"_{name} = outlined({name})", ""])
    return f"_{name}(C, {', '.join(params)})"


def _sum_form(op, res: str, body: list) -> str:
    """How a reduction's loop accumulates: "f64" (a float32 operand as it is, summed in float64
    lanes), "blocked" (``_blocked_sum``) or "plain" (the op's combine, in its own dtype)."""
    if op.wide and res == "float32":
        return "f64" if not body and op.name in ("sum", "mean") else "blocked"
    return "plain"


_NEXT = re.compile(r"\bn\d+\b")
# Rows at least this long run the pipelined entries: a narrower row's reads and writes are few,
# and would pay the pipelined entry's cold compile (0.3-0.5 s) for nothing.
_PIPE_MIN_C = 256


def _pipeline(first: dict, final: tuple, steps: list, rows: list, row_stores: list,
              in_kind: list, outs: list, kinds: dict, vctor: dict, loops: list) -> list | None:
    """The body of ``serialp``: ``serial``'s loop over rows with the first reduction of row
    r + 1 computed by row r's last loop, where the first reduction reads the row's inputs
    only and the last loop (which writes the outputs) is not guarded; None where it cannot.

    Why: a row's first pass reads it from memory, its last pass writes the output; one after
    the other, the core streams in one direction at a time. Interleaved, the next row's reads
    overlap this row's writes (layer norm of 4096 x 1024 rows 20% faster at two threads). The
    first row of a chunk goes through the same loop first (a pass over its own output rows,
    written again after), so that every row's reduction is summed in one order, whatever the
    number of rows or threads; the last row sums itself again."""
    fbody, v = first["body"], first["v"]
    name, lbody = final
    allowed = {f"x{j}" for j, k in enumerate(in_kind) if k in ("f", "b")} | \
        {f"c{j}" for j, k in enumerate(in_kind) if k == "s"} | \
        {f"in{j}" for j, k in enumerate(in_kind) if not k}
    if not set(codegen.names_in([*fbody, f"_ = {v}"])) <= allowed:
        return None
    full_x = {f"x{j}" for j, k in enumerate(in_kind) if k == "f"}

    def nxt(line: str) -> str:
        line = re.sub(r"\bw(\d+)\b", r"u\1", line)
        return re.sub(r"\bx(\d+)\b", lambda m: "n" + m.group(1) if m.group(0) in full_x
                      else m.group(0), line)

    fbody, v = [nxt(x) for x in fbody], nxt(v)
    # the next row's input extremes too (``_build``'s ``ext``), through reassoc helpers
    more, more_init, more_ret = _extreme_lines(first["ext"], "_r_", first["op"], first["v"],
                                               "nacc", first["acc"])
    more = [nxt(x) for x in more]
    op, acc, form = first["op"], first["acc"], first["form"]
    nparams = sorted(set(_NEXT.findall(" ".join([*fbody, *more, v]))))
    params = codegen.names_in([*lbody, *fbody, *more, f"_ = {v}"]) + nparams
    helper = "_r_add" if form == "f64" else f"_r_{op.name}"
    for name_, expr in [(helper, "a + b" if form == "f64" else f"_c_{op.name}(a, b)"),
                        *[(f"_r_{o}", f"_c_{o}(a, b)") for o in ("amin", "amax") if more]]:
        if not any(f"def {name_}(" in x for x in loops):
            loops.extend([codegen.inner(codegen.NJIT_REASSOC), f"def {name_}(a, b):",
                          f"    return {expr}", ""])
    pname = f"{name}p"
    head = [codegen.inner(codegen.NJIT), f"def {pname}({', '.join(['C', *params])}):"]
    if form == "blocked":
        step = f"part = {helper}(part, np.float32({v}))"
        loops.extend([*head, "    nacc = np.float64(0)", *[f"    {x}" for x in more_init],
                      f"    nb = C // {_SUM_BLOCK}",
                      "    for b in range(nb):", f"        lo = b * {_SUM_BLOCK}",
                      "        part = np.float32(0)", f"        for j in range({_SUM_BLOCK}):",
                      "            i = lo + j",
                      *[f"            {x}" for x in [*lbody, *fbody, step, *more]],
                      "        nacc += np.float64(part)", "    part = np.float32(0)",
                      f"    for i in range(nb * {_SUM_BLOCK}, C):",
                      *[f"        {x}" for x in [*lbody, *fbody, step, *more]],
                      "    nacc += np.float64(part)"])
    else:
        if form == "f64":
            init, step = "np.float64(0)", f"nacc = {helper}(nacc, np.float64({v}))"
        else:
            init = f"{_NP_CTOR[acc]}({literal(op.identity, acc)})"
            step = f"nacc = {helper}(nacc, {_NP_CTOR[acc]}({v}))"
        loops.extend([*head, f"    nacc = {init}", *[f"    {x}" for x in more_init],
                      "    for i in range(C):",
                      *[f"        {x}" for x in [*lbody, *fbody, step, *more]]])
    loops.extend([f"    return nacc{more_ret}", "", f"_{pname} = outlined({pname})", ""])
    call = f"_{pname}(C, {', '.join(params)})"
    nret = "nacc" + _ext_names(first["ext"], "n")  # (the next row's: nmn0, nmx0)
    k0 = first["step"]
    assert steps[k0].startswith("acc") and not steps[-1].startswith("acc")
    used_v = [x for x in codegen.names_in(lbody) if x.startswith("v")]
    same = [f"{n} = {'x' + n[1:]}" for n in nparams]
    return ["r = r_lo",
            "base = r * C",
            # the pass over row r_lo's output rows before its own: what it writes there is
            # written again (every value the last loop reads is written before it in a row)
            *rows,
            *[f"{x} = {vctor[x]}(0)" for x in used_v],
            *same,
            f"{nret} = {call}",
            "for r in range(r_lo, r_hi):",
            "    base = r * C",
            *[f"    {x}" for x in [*rows, *steps[:k0], f"acc{_ext_names(first['ext'])} = {nret}",
                                   *steps[k0 + 1:-1]]],
            "    if r + 1 < r_hi:",
            *[f"        {n} = {'in' + n[1:]}[base + C:base + 2 * C]" for n in nparams],
            "    else:",  # (the last row sums itself again, from L1: no loop of its own)
            *[f"        {x}" for x in same],
            f"    {nret} = {call}",
            *[f"    {x}" for x in row_stores],
            "return"]


class RowKernel:
    """One row group: call it with the group's operands; it returns the group's outputs."""

    def __init__(self, source: str, group: list, ins: list, in_kind: list, outs: list,
                 kinds: dict, S: tuple) -> None:
        self.source = source
        self.names = [n.name for n in group]
        self.in_kind = in_kind
        self.out_dtypes = [o.meta["val"].dtype for o in outs]
        self.out_rank = [(kinds[o], len(o.meta["val"].shape)) for o in outs]
        self.rank = len(S)
        self.__name__ = "rows_" + "_".join(self.names)[:60]
        self._mod = None
        self._eager = subgraph_module(group, ins, outs)

    def __call__(self, *args):
        grad = dispatch.grad_state.enabled
        S = None
        for a, k in zip(args, self.in_kind):
            if k == "f":
                S = a._a.shape
                break
        if S is None or len(S) != self.rank:
            return self._eager(*args)
        R1, R0 = S[:-1] + (1,), S[:-1]
        flat = list(args)
        for j, (a, k) in enumerate(zip(args, self.in_kind)):
            if not k:
                continue
            arr = a._a
            if arr.__class__ is not np.ndarray or (grad and a._requires_grad) or \
                    not arr.flags.c_contiguous or arr.dtype == np.float16 or \
                    (k == "f" and arr.shape != S) or (k == "r" and arr.shape not in (R1, R0)) or \
                    (k == "s" and arr.size != 1) or (k == "b" and not _across(arr.shape, S)):
                return self._eager(*args)
            flat[j] = arr.reshape(-1)
        C = S[-1]
        rows = 1
        for d in R0:
            rows *= d
        outs = [_allocator.empty(S if kind == "full" else R1 if rk == len(S) else R0, d.np)
                for (kind, rk), d in zip(self.out_rank, self.out_dtypes)]
        if rows and C:
            if self._mod is None:
                self._mod = load("jt_rows", self.source)
                logs.log("kernels", f"{self.__name__} ({self._mod.__file__}):\n{self.source}")
            flats = [o.reshape(-1) for o in outs]
            mod = self._mod
            piped = C >= _PIPE_MIN_C and hasattr(mod, "serialp")
            par = "parallelp" if piped else "parallel"
            if rows > 1 and rows * C >= _flags.GRAIN_SIZE and \
                    workers.use_parallel_entry(mod, par, rows * C, (*flats, *flat, rows, C)):
                # (while a compile worker builds the parallel entry: the serial one, whose
                # rows are the same code)
                getattr(mod, par)(*flats, *flat, rows, C)
            else:
                (mod.serialp if piped else mod.serial)(*flats, *flat, 0, rows, C)
        elif rows and not C:
            return self._eager(*args)  # empty rows: the reductions' identities and errors
        return tuple([Tensor._make(o, None, d) for o, d in zip(outs, self.out_dtypes)])

    def __repr__(self) -> str:
        return f"RowKernel({', '.join(self.names)})"
