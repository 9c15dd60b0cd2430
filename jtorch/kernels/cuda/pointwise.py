"""CUDA pointwise kernels: the CPU loops' body, under a grid-stride stager.

The body is the op's SSA line from ``codegen.ssa_line``, the very line the CPU loops of
``kernels/cpu/pointwise.py`` and the fused kernels inline (the operands cast to the compute
dtype, the scalar function, the result cast to the output dtype), calling the same
``scalar_of`` functions; Numba compiles those as device functions here (``scalars.scalar_of``:
where they call what CUDA does not lower, ``np.floor`` or the builtin ``max``, copies that
call CUDA twins of the same semantics). One module per (op, arity, compute dtype, output
dtype) holds two kernels:
- ``contiguous(out0, in0, ...)``: every operand a contiguous array of the output's size;
- ``strided(geo, out0, bo, in0, b0, ...)``: operands are 1-D spans of storage with a base
  offset each; ``geo`` rows are the shape, then the output's and each input's element
  strides (0 along broadcast dims). Each thread decodes its flat index into them.
Both loop ``i`` over ``cuda.grid(1)`` in steps of ``cuda.gridsize(1)``, so any grid covers
any size. Ops whose integer loops must raise on division by zero cannot raise on a device:
there, as in torch's CUDA kernels, the result of a zero divisor is undefined.
"""

from __future__ import annotations

import numpy as np

from .. import codegen, fastmath_fingerprint, registry
from ..codegen import scalar_variant
from ..source import fingerprint, load
from . import target

_mods: dict[tuple, object] = {}
_kernels: dict[tuple, object] = {}

THREADS = 256
MAX_BLOCKS = 65535


def module(op: registry.OpDef, arity: int, compute: str, out: str):
    """The generated module of kernels (plain Python functions) for this op and dtype pair."""
    key = (op.name, arity, compute, out)
    mod = _mods.get(key)
    if mod is None:
        mod = _mods[key] = load(f"jt_cuda_{op.family}_{op.name}", source(op, arity, compute, out))
    return mod


def kernel(op: registry.OpDef, arity: int, compute: str, out: str, which: str):
    """The launchable kernel ``which`` (``contiguous``/``strided``), compiled on first launch."""
    key = (op.name, arity, compute, out, which)
    k = _kernels.get(key)
    if k is None:
        k = _kernels[key] = target.jit(getattr(module(op, arity, compute, out), which))
    return k


def source(op: registry.OpDef, arity: int, compute: str, out: str) -> str:
    """``arity`` counts every operand, the op's trailing parameters too (``op.nparams``:
    isclose's rtol, where's condition; cast to the compute dtype, not promoted, as on CPU).
    Every operand is an array: a Python number is a one-element array read at stride 0."""
    consts: dict = {}
    ins = [f"in{k}" for k in range(arity)]

    def body(refs: list, store: str) -> list:
        ssa = codegen.ssa_line(op, compute, out, "v0", refs, consts)
        return [ssa.line, f"{store} = v0"]

    contiguous = [
        f"def contiguous(out0, {', '.join(ins)}):",
        "    i = cuda.grid(1)",
        "    step = cuda.gridsize(1)",
        "    n = out0.size",
        "    while i < n:",
        *[f"        {x}" for x in body([f"{x}[i]" for x in ins], "out0[i]")],
        "        i += step",
    ]
    ptrs = ["po", *[f"p{k}" for k in range(arity)]]
    bases = ["bo", *[f"b{k}" for k in range(arity)]]
    spans = [f"{x}, b{k}" for k, x in enumerate(ins)]
    strided = [
        f"def strided(geo, out0, bo, {', '.join(spans)}):",
        "    i = cuda.grid(1)",
        "    step = cuda.gridsize(1)",
        "    nd = geo.shape[1]",
        "    n = 1",
        "    for d in range(nd):",
        "        n *= geo[0, d]",
        "    while i < n:",
        "        rem = i",
        *[f"        {p} = {b}" for p, b in zip(ptrs, bases)],
        "        for d in range(nd - 1, -1, -1):",
        "            q = rem % geo[0, d]",
        "            rem //= geo[0, d]",
        *[f"            {p} += q * geo[{r + 1}, d]" for r, p in enumerate(ptrs)],
        *[f"        {x}" for x in body([f"{x}[p{k}]" for k, x in enumerate(ins)], "out0[po]")],
        "        i += step",
    ]
    # only the full scalar is called: a warp runs one path, so a per-block fast path gains
    # nothing here; its names are dropped from the module
    consts = {k: v for k, v in consts.items() if not k.startswith(("_g_", "_ok_"))}
    fp = fingerprint(getattr(op, scalar_variant(op, compute)), fastmath_fingerprint())
    title = f"{op.name}: {op.family} pointwise op on CUDA, compute {compute} -> out {out} (arity {arity})"
    head = [f"# {title}",
            f"# scalar sources {fp[:16]}",
            "import numpy as np",
            "from jtorch.kernels.cuda.target import cuda",
            "from jtorch.kernels.cuda.scalars import scalar_of",
            *[f"{k} = {v}" for k, v in consts.items()]]
    return "\n".join([*head, "", "", *contiguous, "", "", *strided]) + "\n"


_NUMBA_TYPE = {"bool": "boolean"}


def signatures(arity: int, compute: str, out: str, ins: str | None = None, nparams: int = 0,
               param: str = "float64") -> dict:
    """Numba signatures of both kernels with inputs of dtype ``ins`` (default: ``compute``),
    the last ``nparams`` of them of dtype ``param``, for ``compile_ptx``."""
    ti = _NUMBA_TYPE.get(ins or compute, ins or compute)
    to = _NUMBA_TYPE.get(out, out)
    tp = _NUMBA_TYPE.get(param, param)
    types = [ti] * (arity - nparams) + [tp] * nparams
    contiguous = [f"{to}[::1]", *[f"{t}[::1]" for t in types]]
    strided = ["int64[:, ::1]", f"{to}[::1]", "int64", *[f"{t}[::1], int64" for t in types]]
    return {"contiguous": f"void({', '.join(contiguous)})", "strided": f"void({', '.join(strided)})"}


def grid(n: int, threads: int = THREADS) -> tuple:
    """(blocks, threads) of a grid-stride launch over ``n`` elements."""
    return max(1, min(MAX_BLOCKS, (n + threads - 1) // threads)), threads


def run_contiguous(op, compute: str, out: str, out0, *ins, threads: int = THREADS) -> None:
    """``out0[i] = op(ins[k][i] ...)`` over contiguous device arrays of one size."""
    blocks, t = grid(out0.size, threads)
    kernel(op, len(ins), compute, out, "contiguous")[blocks, t](out0, *ins)


def run_strided(op, compute: str, out: str, shape: tuple, out0: tuple, ins: list,
                threads: int = THREADS) -> None:
    """``op`` over a broadcast ``shape``: ``out0`` and each of ``ins`` is ``(span, base offset,
    element strides)``, a 1-D device array of storage and its view (stride 0 where an input
    broadcasts)."""
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return
    geo = _geometry(shape, [out0[2], *[x[2] for x in ins]])
    args = [geo, out0[0], out0[1]]
    for span, base, _ in ins:
        args += [span, base]
    blocks, t = grid(n, threads)
    kernel(op, len(ins), compute, out, "strided")[blocks, t](*args)


_geo: dict[tuple, object] = {}


def _geometry(shape: tuple, strides: list):
    """The ``geo`` device array of a launch (shape and strides; a 0-d launch is shape (1,)),
    kept per geometry so that repeated launches copy nothing."""
    key = (tuple(shape), *map(tuple, strides))
    g = _geo.get(key)
    if g is None:
        rows = [list(shape) or [1], *[list(s) or [0] for s in strides]]
        if len(_geo) > 1024:
            _geo.clear()
        g = _geo[key] = target.to_device(np.array(rows, dtype=np.int64))
    return g
