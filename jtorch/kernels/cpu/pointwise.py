"""Eager pointwise loops: an eager call is a fused group of one.

For each (op, compute dtype, output dtype) one module is generated from the pieces the
compiler's fused kernels are made of (``kernels/codegen.py``): the body is the op's SSA line
(``codegen.ssa_line``), inside loop functions whose operands each have a layout class, a
full array (``a``, read as ``in0[i]``) or one value (``s``, read as ``in1``). It holds
- ``c_<pat>``: the loop over contiguous operands of layouts ``pat`` (``as``: a full first
  operand, a scalar second), itself a loop function; an op with a fast scalar runs blocks of
  ``_BLOCK`` elements through the guarded loop function ``blk_<pat>`` instead;
- ``p_<pat>``: chunks of ``c_<pat>`` in ``prange``, each called out of line;
- ``s_n``/``ps_n``: strided loops over coalesced shapes, any rank, for broadcast and
  non-contiguous operands (operands are 1-D spans of storage plus element strides), whose
  rows run the same body over row views.
Functions compile lazily, so only the variants a program uses are ever compiled. The strided
loops branch over 2 * 2**arity row kinds (which operands are broadcast, unit-stride or
strided in the innermost dim); compiling every branch cost 1.5-4 s per op on a cold cache, so
``dispatch`` calls the one-kind loops of ``strided_kernels`` (a module per op, dtypes and
kind, ``s_n_<tag>``/``ps_n_<tag>``), picking the kind from the call's strides.
"""

from __future__ import annotations

import itertools

from .. import codegen, registry
from ..codegen import scalar_variant
from ..source import load

_cache: dict[tuple, object] = {}

# elements per fast_ok decision: each block is one out-of-line call of the guarded loop
# (measured: 512 beat 256 by 2-4% on sin, remainder, fmod; 256 had beaten 64..1024 when the
# block loops were inlined into the loop over blocks, which ran sin, cos, log ~10% slower)
_BLOCK = 512


def kernels(op: registry.OpDef, arity: int, compute: str, out: str):
    """The generated module of loops for this op and dtype pair (imported once per process)."""
    key = (op.name, arity, compute, out)
    mod = _cache.get(key)
    if mod is None:
        mod = _cache[key] = load(f"jt_{op.family}_{op.name}", _source(op, arity, compute, out))
    return mod


class _Gen:
    """What every loop of one module shares: the op, its dtypes, the decorators, and the
    module-level names its SSA lines call (collected while the loops are written)."""

    def __init__(self, op, arity: int, compute: str, out: str) -> None:
        self.op, self.arity, self.compute, self.out = op, arity, compute, out
        # integer division raises ZeroDivisionError: Python's error model, no prange (an
        # exception raised inside it, or in a call made out of line, is lost)
        self.raises = op.int_div and compute not in ("float32", "float64", "complex64",
                                                    "complex128")
        err = "python" if self.raises else "numpy"
        self.njit = codegen.decorator(err)
        self.njit_parallel = codegen.decorator(err, parallel=True)
        self.guarded = codegen.guarded(op, compute) and not self.raises  # (float ops only)
        self.consts: dict = {}

    def body(self, operands: list, store: str, fast: bool = False) -> list:
        """The op's SSA line over ``operands`` (expressions), its value stored to ``store``."""
        ssa = codegen.ssa_line(self.op, self.compute, self.out, "v0", operands, self.consts)
        return [ssa.fast if fast else ssa.line, f"{store} = v0"]

    def guard(self, operands: list) -> str:
        return codegen.ssa_line(self.op, self.compute, self.out, "v0", operands, self.consts).guard


def row_kind(arity: int, so: int, strides: list) -> int:
    """The row kind of the strided loops for an output's and the inputs' innermost element
    strides (the generated ``kind =`` line, in Python)."""
    if so == 1 and all(s in (0, 1) for s in strides):
        return sum(s << (arity - 1 - i) for i, s in enumerate(strides))
    if so == 1 and all(s >= 0 for s in strides):
        return -2 - sum((s > 0) << (arity - 1 - i) for i, s in enumerate(strides))
    return -1


def kind_tag(kind: int) -> str:
    return f"k{kind}" if kind >= 0 else "g" if kind == -1 else f"r{-2 - kind}"


def strided_kernels(op: registry.OpDef, arity: int, compute: str, out: str, kind: int):
    """The module of the strided loops of one row kind (``s_<n>_<tag>``, ``ps_<n>_<tag>``)."""
    key = (op.name, arity, compute, out, kind)
    mod = _cache.get(key)
    if mod is None:
        g = _Gen(op, arity, compute, out)
        lines = _strided(g, kind)
        fns = [getattr(op, scalar_variant(op, compute))]
        title = (f"{op.name}: {op.family} pointwise op, compute {compute} -> out {out} "
                 f"(arity {arity}), strided rows of kind {kind}")
        src = "\n".join([*codegen.header(title, fns, g.consts), "", *lines]) + "\n"
        mod = _cache[key] = load(f"jt_{op.family}_{op.name}_{kind_tag(kind)}", src)
    return mod


def _source(op, arity: int, compute: str, out: str) -> str:
    g = _Gen(op, arity, compute, out)
    lines: list = []
    for pat in itertools.product("as", repeat=arity):
        if "a" in pat:
            lines += _contiguous(g, "".join(pat))
        if pat[0] == "a" and not g.guarded:
            lines += _in_place(g, "".join(pat))
    lines += _strided(g)
    fns = [getattr(op, scalar_variant(op, compute))]
    if g.guarded:
        fns += [op.fast_scalar, op.fast_ok]
    title = f"{op.name}: {op.family} pointwise op, compute {compute} -> out {out} (arity {arity})"
    return "\n".join([*codegen.header(title, fns, g.consts), "", *lines]) + "\n"


def _contiguous(g: _Gen, pat: str) -> list:
    """``c_<pat>`` and ``p_<pat>``: full operands are read at ``i``, scalars as they are.
    A flat loop has no outer loop to gain from a call layer: ``c_<pat>`` is the loop itself."""
    ins = [f"in{k}" for k in range(g.arity)]
    refs = [f"{x}[i]" if p == "a" else x for x, p in zip(ins, pat)]
    params = ["out0", *ins]
    if g.guarded:
        lines = _blocks(g, pat)
    else:
        lines = codegen.loop_function(f"c_{pat}", params, g.body(refs, "out0[i]"),
                                      size="out0.size", decorator=g.njit)
    if g.raises:
        return lines + [f"p_{pat} = c_{pat}", ""]
    # chunks of the serial loop, each called out of line (``outlined``, calls.py): inlined into
    # the prange body, its constants would be rematerialised inside the vector loop
    chunks = ", ".join(f"{x}[lo:hi]" if p == "a" else x for x, p in zip(ins, pat))
    return lines + [
        g.njit_parallel,
        f"def p_{pat}({', '.join(params)}):",
        *_chunk_bounds(),
        f"        _c_{pat}(out0[lo:hi], {chunks})",
        "",
    ]


def _in_place(g: _Gen, pat: str) -> list:
    """``c_i<pat>`` and ``p_i<pat>``: ``c_<pat>`` with operand 0 the output itself
    (``x.add_(y)``, a gradient accumulated in place). Called as ``c_<pat>(x, x, y)`` the loop
    runs scalar: the output and operand 0 overlap, so LLVM's runtime alias check fails its
    vector loop (2.5x slower on an add)."""
    ins = [f"in{k}" for k in range(1, g.arity)]
    refs = ["out0[i]"] + [f"{x}[i]" if p == "a" else x for x, p in zip(ins, pat[1:])]
    params = ["out0", *ins]
    lines = codegen.loop_function(f"c_i{pat}", params, g.body(refs, "out0[i]"), size="out0.size",
                                  decorator=g.njit)
    if g.raises:
        return lines + [f"p_i{pat} = c_i{pat}", ""]
    chunks = ", ".join(f"{x}[lo:hi]" if p == "a" else x for x, p in zip(ins, pat[1:]))
    return lines + [
        g.njit_parallel,
        f"def p_i{pat}({', '.join(params)}):",
        *_chunk_bounds(),
        f"        _c_i{pat}(out0[lo:hi]{', ' if chunks else ''}{chunks})",
        "",
    ]


def _blocks(g: _Gen, pat: str) -> list:
    """An op with a fast scalar: ``c_<pat>`` runs blocks of ``_BLOCK`` elements, each through
    ``blk_<pat>``, a guarded loop function: one vectorised pass asks ``fast_ok`` of every
    element (a bool &-reduction, from L1 for the pass that follows), then the block runs the
    fast or the full scalar. (Computing the fast scalar into a buffer during the check and
    copying it out measured ~20% slower on log2, ~4% faster on sin.)"""
    ops = [f"x{k}" if p == "a" else f"c{k}" for k, p in enumerate(pat)]
    refs = [f"{x}[i]" if p == "a" else x for x, p in zip(ops, pat)]
    blk = codegen.loop_function(f"blk_{pat}", ["o0", *ops], g.body(refs, "o0[i]"),
                                guard=g.guard(refs), fast=g.body(refs, "o0[i]", fast=True),
                                decorator=g.njit)
    ins = [f"in{k}" for k in range(g.arity)]
    views = ", ".join(f"{x}[b:b + m]" if p == "a" else x for x, p in zip(ins, pat))
    return blk + [
        g.njit,
        f"def c_{pat}(out0, {', '.join(ins)}):",
        "    n = out0.size",
        f"    for b in range(0, n, {_BLOCK}):",
        f"        m = min({_BLOCK}, n - b)",
        f"        _blk_{pat}(m, out0[b:b + m], {views})",
        "",
        f"_c_{pat} = outlined(c_{pat})",
        "",
    ]


def _chunk_bounds() -> list[str]:
    """The head of a parallel loop over chunks (2 to 64 of them, at least 8192 elements each
    where possible; the schedule hands each thread a run of them): ``lo``/``hi`` cut at
    multiples of 16 elements so the vector loops start aligned. (``get_num_threads()`` in a
    kernel would bake an address into it, which the disk cache refuses.)"""
    return [
        "    n = out0.size",
        "    nc = min(64, max(2, n // 8192))",
        "    for c in prange(nc):",
        "        lo = (c * n // nc) // 16 * 16",
        "        hi = n if c == nc - 1 else ((c + 1) * n // nc) // 16 * 16",
    ]


# -- strided loops --------------------------------------------------------------------------

def _row(g: _Gen, pat: tuple, strided: bool, indent: str) -> list:
    """One row over views: input ``k`` is a row view ``x<k>`` where ``pat[k]`` (unit stride,
    or with ``strided`` its own positive stride), else the value ``c<k>``. Row views let LLVM
    vectorise (indexing the flat spans at ``p + i`` does not: 12x slower on a bias add)."""
    loads = []
    for k, u in enumerate(pat):
        if not u:
            loads.append(f"c{k} = in{k}[p{k}]")
        elif strided:
            loads.append(f"x{k} = in{k}[p{k}:p{k} + (inner - 1) * s{k}[nd] + 1:s{k}[nd]]")
        else:
            loads.append(f"x{k} = in{k}[p{k}:p{k} + inner]")
    refs = [f"x{k}[i]" if u else f"c{k}" for k, u in enumerate(pat)]
    return [f"{indent}{x}" for x in [*loads, "o0 = out0[po:po + inner]", "for i in range(inner):"]] \
        + [f"{indent}    {x}" for x in g.body(refs, "o0[i]")]


def _inner_loops(g: _Gen, indent: str, only: int | None = None) -> list[str]:
    """The innermost loop over one row, picked by ``kind`` (computed once per call): a
    unit-stride output with every input at stride 1 or 0 (a broadcast row, e.g. a bias) is
    case k < 2**arity (bit set: a unit-stride input); with inputs at other non-negative
    strides (x[:, ::2], a transposed operand) -2 - k (bit set: a positive stride; strided
    views run 6x the flat-index loop, whose index arithmetic LLVM neither hoists nor
    vectorises); anything else (negative strides, a strided output) is -1.
    Rows keep the body inline: calling the contiguous loop per row out of line measured 0.73x
    on a bias add over rows of 16, but 1.25x on broadcast rows and 2.5-3.7x on rows of strided
    views (exp over x[:, ::2])."""
    n = g.arity
    if only is not None:  # one kind's row loop alone
        if only == -1:
            refs = [f"in{k}[p{k} + i * s{k}[nd]]" for k in range(n)]
            return [f"{indent}for i in range(inner):",
                    *[f"{indent}    {x}" for x in g.body(refs, "out0[po + i * so[nd]]")]]
        k = only if only >= 0 else -2 - only
        pat = tuple((k >> (n - 1 - i)) & 1 for i in range(n))
        return _row(g, pat, only < 0, indent)
    out = []
    for k, pat in enumerate(itertools.product((0, 1), repeat=n)):
        out += [f"{indent}{'if' if k == 0 else 'elif'} kind == {k}:", *_row(g, pat, False, indent + "    ")]
    for k, pat in enumerate(itertools.product((0, 1), repeat=n)):
        if k:
            out += [f"{indent}elif kind == {-2 - k}:", *_row(g, pat, True, indent + "    ")]
    refs = [f"in{k}[p{k} + i * s{k}[nd]]" for k in range(n)]
    out += [f"{indent}else:", f"{indent}    for i in range(inner):",
            *[f"{indent}        {x}" for x in g.body(refs, "out0[po + i * so[nd]]")]]
    return out


def _kind(arity: int) -> list[str]:
    terms = " + ".join(f"{1 << (arity - 1 - i)} * s{i}[nd]" for i in range(arity))
    unit = " and ".join(f"(s{i}[nd] == 0 or s{i}[nd] == 1)" for i in range(arity))
    mask = " + ".join(f"{1 << (arity - 1 - i)} * (s{i}[nd] > 0)" for i in range(arity))
    nonneg = " and ".join(f"s{i}[nd] >= 0" for i in range(arity))
    return [(f"    kind = {terms} if so[nd] == 1 and {unit} else -2 - ({mask}) if so[nd] == 1 "
             f"and {nonneg} else -1")]


def _strided(g: _Gen, kind: int | None = None) -> list[str]:
    """Strided loops: innermost dim is a row loop, outer dims advance an odometer (serial) or
    are recomputed from the row number (parallel); ``kind``: only that kind's rows."""
    n = g.arity
    name = str(n) if kind is None else f"{n}_{kind_tag(kind)}"
    ops = ["out0"] + [f"in{i}" for i in range(n)]
    st = ["so"] + [f"s{i}" for i in range(n)]
    ptr = ["po"] + [f"p{i}" for i in range(n)]
    sig = ", ".join(f"{o}, {s}" for o, s in zip(ops, st))
    head = [
        "    nd = shape.size - 1",
        "    inner = shape[nd]",
        "    nouter = 1",
        "    for d in range(nd):",
        "        nouter *= shape[d]",
        *(_kind(n) if kind is None else []),
    ]
    serial = [
        g.njit,
        f"def s_{name}(shape, {sig}):",
        *head,
        "    idx = np.zeros(nd + 1, np.int64)",
        "    " + " = ".join(ptr) + " = 0",
        "    for o in range(nouter):",
        *_inner_loops(g, "        ", kind),
        "        d = nd - 1",
        "        while d >= 0:",
        "            idx[d] += 1",
        *[f"            {p} += {s}[d]" for p, s in zip(ptr, st)],
        "            if idx[d] < shape[d]:",
        "                break",
        *[f"            {p} -= {s}[d] * shape[d]" for p, s in zip(ptr, st)],
        "            idx[d] = 0",
        "            d -= 1",
        "",
    ]
    if g.raises:
        return serial + [f"ps_{name} = s_{name}", ""]
    parallel = [
        g.njit_parallel,
        f"def ps_{name}(shape, {sig}):",
        *head,
        "    for o in prange(nouter):",
        "        " + " = ".join(ptr) + " = 0",
        "        rem = o * 1  # a copy: parfors forbid writing the loop index",
        "        for d in range(nd - 1, -1, -1):",
        "            q = rem % shape[d]",
        "            rem //= shape[d]",
        *[f"            {p} += q * {s}[d]" for p, s in zip(ptr, st)],
        *_inner_loops(g, "        ", kind),
        "",
    ]
    return serial + parallel
