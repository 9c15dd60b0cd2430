"""Loop templates for pointwise ops: a scalar function in, explicit Numba loops out.

For each (op, compute dtype, output dtype) one module is generated holding
- ``c_<pat>``/``p_<pat>``: contiguous loops (serial / chunks of it in ``prange``), where
  ``pat`` says per input whether it is a full contiguous array (``a``) or a broadcast scalar
  (``s``); ops with a fast scalar get block-guarded versions of both;
- ``s_n``/``ps_n``: strided loops over coalesced shapes, any rank, for broadcast and
  non-contiguous operands (operands are 1-D spans of storage plus element strides).
Functions compile lazily, so only the variants a program uses are ever compiled.
"""

from __future__ import annotations

import itertools

from .. import registry
from ..source import fingerprint, load
from . import calls

_NP_CTOR = {
    "bool": "np.bool_", "uint8": "np.uint8", "int8": "np.int8", "int16": "np.int16",
    "int32": "np.int32", "int64": "np.int64", "float32": "np.float32", "float64": "np.float64",
    "complex64": "np.complex64", "complex128": "np.complex128",
}

_cache: dict[tuple, object] = {}


_INTS = ("bool", "uint8", "int8", "int16", "int32", "int64")
_FLOATS = ("float32", "float64")
_BLOCK = 256  # elements per fast_ok decision (measured: 256 beat 64..1024)


def kernels(op: registry.OpDef, arity: int, compute: str, out: str):
    """The generated module of loops for this op and dtype pair (imported once per process)."""
    key = (op.name, arity, compute, out)
    mod = _cache.get(key)
    if mod is None:
        mod = _cache[key] = load(f"jt_{op.family}_{op.name}", _source(op, arity, compute, out))
    return mod


def scalar_variant(op: registry.OpDef, compute: str) -> str:
    """Which scalar function of the OpDef a compute dtype uses."""
    if compute.startswith("complex"):
        return "complex_scalar"
    if compute in _INTS and op.int_scalar is not None:
        return "int_scalar"
    return "scalar"


def _source(op, arity: int, compute: str, out: str) -> str:
    which = scalar_variant(op, compute)
    fn = getattr(op, which)
    from .. import fastmath_fingerprint

    guarded = which == "scalar" and op.fast_scalar is not None and compute in _FLOATS
    fast = (op.fast_scalar, op.fast_ok) if guarded else ()
    fp = fingerprint(fn, *fast, fastmath_fingerprint(), calls.fingerprint())
    int_div = op.int_div and compute not in ("float32", "float64", "complex64", "complex128")
    err = "python" if int_div else "numpy"
    opts = f"cache=True, nogil=True, error_model='{err}'"
    ins = [f"in{i}" for i in range(arity)]
    lines = [
        f"# {op.name}: {op.family} pointwise op, compute {compute} -> out {out} (arity {arity})",
        f"# scalar source fingerprint {fp[:12]}",
        "import numpy as np",
        "from numba import njit, prange",
        "from jtorch.kernels.cpu.calls import outlined",
        "from jtorch.kernels.registry import scalar_of",
        f"_f = scalar_of({op.name!r}, {which!r})",
        f"_ci = {_NP_CTOR[compute]}",
        f"_co = {_NP_CTOR[out]}",
        "",
    ]
    if guarded:
        lines += [f"_g = scalar_of({op.name!r}, 'fast_scalar')",
                  f"_ok = scalar_of({op.name!r}, 'fast_ok')", ""]
    for pat in itertools.product("as", repeat=arity):
        if "a" not in pat:
            continue
        pat = "".join(pat)
        if guarded:
            lines += _guarded(opts, pat)
            continue
        args = ", ".join(f"_ci({x}[i])" if p == "a" else f"_ci({x})" for x, p in zip(ins, pat))
        lines += [
            f"@njit({opts})",
            f"def c_{pat}(out0, {', '.join(ins)}):",
            "    for i in range(out0.size):",
            f"        out0[i] = _co(_f({args}))",
            "",
        ]
        if int_div:
            lines += [f"p_{pat} = c_{pat}", ""]
            continue
        # chunks of the serial loop above, each called out of line (``outlined``, calls.py)
        chunks = ", ".join(f"{x}[lo:hi]" if p == "a" else x for x, p in zip(ins, pat))
        lines += [
            f"_call_c_{pat} = outlined(c_{pat})",
            "",
            f"@njit({opts}, parallel=True)",
            f"def p_{pat}(out0, {', '.join(ins)}):",
            *_chunk_bounds(),
            f"        _call_c_{pat}(out0[lo:hi], {chunks})",
            "",
        ]
    lines += _strided(arity, opts)
    if int_div:
        lines += [f"ps_{arity} = s_{arity}", ""]
    return "\n".join(lines) + "\n"


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


def _guarded(opts: str, pat: str) -> list[str]:
    """Contiguous loops over blocks: one vectorised pass asks ``fast_ok`` of every element
    (a bool &-reduction, from L1 for the pass that follows), then the block runs the fast or
    the full scalar. (Computing the fast scalar into a buffer during the check and copying it
    out measured ~20% slower on log2, ~4% faster on sin.)
    ``pat`` names the operands as in ``c_<pat>`` (full array ``a`` or scalar ``s``).
    Indices are unsigned: a signed ``range(lo, hi)`` index gets wraparound checks that defeat
    the vectoriser; the bool &-reduction vectorises 8-wide (an int ``|=`` of 0/1 4-wide)."""
    B = _BLOCK
    ins = [f"in{i}" for i in range(len(pat))]
    args = ", ".join(f"_ci({x}[i])" if p == "a" else f"_ci({x})" for x, p in zip(ins, pat))
    return [
        f"@njit({opts})",
        f"def _span_{pat}(out0, {', '.join(ins)}, start, stop):",
        f"    for b in range(start, stop, {B}):",
        "        lo = np.uint64(b)",
        f"        hi = np.uint64(min(b + {B}, stop))",
        "        good = True",
        "        for i in range(lo, hi):",
        f"            good &= _ok({args})",
        "        if good:",
        "            for i in range(lo, hi):",
        f"                out0[i] = _co(_g({args}))",
        "        else:",
        "            for i in range(lo, hi):",
        f"                out0[i] = _co(_f({args}))",
        "",
        f"@njit({opts})",
        f"def c_{pat}(out0, {', '.join(ins)}):",
        f"    _span_{pat}(out0, {', '.join(ins)}, 0, out0.size)",
        "",
        f"_call_span_{pat} = outlined(_span_{pat})",
        "",
        f"@njit({opts}, parallel=True)",
        f"def p_{pat}(out0, {', '.join(ins)}):",
        *_chunk_bounds(),
        f"        _call_span_{pat}(out0, {', '.join(ins)}, lo, hi)",
        "",
    ]


def _inner_loops(arity: int, indent: str) -> list[str]:
    """The innermost loop over one row. A unit-stride output with every input at stride 1 or 0
    (a broadcast row, e.g. a bias) runs a specialised loop over row views, which LLVM
    vectorises (indexing the flat spans at ``p + j`` does not: 12x slower on a bias add);
    ``kind`` (computed once per call) numbers those 2**arity cases, -2 - k for a unit-stride
    output over other non-negative input strides (k: which are positive), -1 for anything
    else."""
    out = []
    for k, pat in enumerate(itertools.product((0, 1), repeat=arity)):
        head = "if" if k == 0 else "elif"
        out.append(f"{indent}{head} kind == {k}:")
        loads = [f"{indent}    r{i} = in{i}[p{i}:p{i} + inner]" if u else
                 f"{indent}    v{i} = _ci(in{i}[p{i}])" for i, u in enumerate(pat)]
        args = ", ".join(f"_ci(r{i}[j])" if u else f"v{i}" for i, u in enumerate(pat))
        out += loads + [f"{indent}    ro = out0[po:po + inner]",
                        f"{indent}    for j in range(inner):",
                        f"{indent}        ro[j] = _co(_f({args}))"]
    # a unit-stride output with inputs at other positive strides (x[:, ::2], a transposed
    # operand) or broadcast: rows as strided views (6x the flat-index loop below, whose index
    # arithmetic LLVM neither hoists nor vectorises); kind -2 - k, k the mask of strided inputs
    for k, pat in enumerate(itertools.product((0, 1), repeat=arity)):
        if not k:
            continue
        loads = [f"{indent}    r{i} = in{i}[p{i}:p{i} + (inner - 1) * s{i}[nd] + 1:s{i}[nd]]" if u
                 else f"{indent}    v{i} = _ci(in{i}[p{i}])" for i, u in enumerate(pat)]
        args = ", ".join(f"_ci(r{i}[j])" if u else f"v{i}" for i, u in enumerate(pat))
        out += [f"{indent}elif kind == {-2 - k}:", *loads,
                f"{indent}    ro = out0[po:po + inner]",
                f"{indent}    for j in range(inner):",
                f"{indent}        ro[j] = _co(_f({args}))"]
    call = ", ".join(f"_ci(in{i}[p{i} + j * s{i}[nd]])" for i in range(arity))
    out += [f"{indent}else:",
            f"{indent}    for j in range(inner):",
            f"{indent}        out0[po + j * so[nd]] = _co(_f({call}))"]
    return out


def _kind(arity: int) -> list[str]:
    terms = " + ".join(f"{1 << (arity - 1 - i)} * s{i}[nd]" for i in range(arity))
    unit = " and ".join(f"(s{i}[nd] == 0 or s{i}[nd] == 1)" for i in range(arity))
    mask = " + ".join(f"{1 << (arity - 1 - i)} * (s{i}[nd] > 0)" for i in range(arity))
    nonneg = " and ".join(f"s{i}[nd] >= 0" for i in range(arity))
    return [(f"    kind = {terms} if so[nd] == 1 and {unit} else -2 - ({mask}) if so[nd] == 1 "
             f"and {nonneg} else -1")]


def _strided(arity: int, opts: str) -> list[str]:
    """Strided loops: innermost dim is a plain loop, outer dims advance an odometer."""
    ops = ["out0"] + [f"in{i}" for i in range(arity)]
    st = ["so"] + [f"s{i}" for i in range(arity)]
    ptr = ["po"] + [f"p{i}" for i in range(arity)]
    sig = ", ".join(f"{o}, {s}" for o, s in zip(ops, st))
    serial = [
        f"@njit({opts})",
        f"def s_{arity}(shape, {sig}):",
        "    nd = shape.size - 1",
        "    inner = shape[nd]",
        "    nouter = 1",
        "    for d in range(nd):",
        "        nouter *= shape[d]",
        *_kind(arity),
        "    idx = np.zeros(nd + 1, np.int64)",
        "    " + " = ".join(ptr) + " = 0",
        "    for o in range(nouter):",
        *_inner_loops(arity, "        "),
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
    parallel = [
        f"@njit({opts}, parallel=True)",
        f"def ps_{arity}(shape, {sig}):",
        "    nd = shape.size - 1",
        "    inner = shape[nd]",
        "    nouter = 1",
        "    for d in range(nd):",
        "        nouter *= shape[d]",
        *_kind(arity),
        "    for o in prange(nouter):",
        "        " + " = ".join(ptr) + " = 0",
        "        rem = o * 1  # a copy: parfors forbid writing the loop index",
        "        for d in range(nd - 1, -1, -1):",
        "            q = rem % shape[d]",
        "            rem //= shape[d]",
        *[f"            {p} += q * {s}[d]" for p, s in zip(ptr, st)],
        *_inner_loops(arity, "        "),
        "",
    ]
    return serial + parallel
