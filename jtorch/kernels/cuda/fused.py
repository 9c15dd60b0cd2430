"""Compiled pointwise groups on CUDA: the fusion backend's loop body under a grid-stride
stager, one body text and two launchers.

``compile/fusion.py`` builds each group's body once (``FusedKernel.template``): per op the SSA
line of ``codegen.ssa_line``, the line eager's CPU and CUDA loops inline, in segments whose
values cross through scratch rows (``t3[i] = v3`` / ``t3[i]``) on CPU. Here the segments run
as one body per element, every value in a register: a scratch row's store is dropped and its
reads become the register, an output row's store writes the output element, a tensor operand
``@X2@`` reads ``in2`` at its element index. The scalar functions come from
``cuda.scalars.scalar_of`` (CUDA twins where the CPU ones call what CUDA does not lower).

Two kernels per group: ``contiguous`` (every tensor operand row-major with the result's
shape: element ``i`` everywhere) and ``strided`` (``geo`` rows: the shape, then each tensor
operand's element strides, 0 along broadcast dims). Groups with reductions run op by op.
"""

from __future__ import annotations

import re

from ..source import load
from . import target

_STORE = re.compile(r"^([ot])(\d+)\[i\] = (v\d+)$")
_READ = re.compile(r"\b([ot]\d+)\[i\]")
_OPERAND = re.compile(r"@X(\d+)@")


def body(template) -> list | None:
    """The group's lines for one element (None: a group this stager does not take)."""
    loops, reds = template[3], template[6]
    if reds:
        return None
    reg: dict = {}
    lines = []
    for seg, _fast, _guard in loops:
        for line in seg:
            m = _STORE.match(line)
            if m:
                reg[m.group(1) + m.group(2)] = m.group(3)
                if m.group(1) == "o":
                    lines.append(f"out{m.group(2)}[q] = {m.group(3)}")
                continue
            line = _READ.sub(lambda r: reg[r.group(1)], line)
            lines.append(_OPERAND.sub(lambda r: f"in{r.group(1)}[p{r.group(1)}]", line))
    return lines


def source(template) -> str | None:
    lines = body(template)
    if lines is None:
        return None
    head, names, _, _, nout, tensors, _ = template
    outs = [f"out{j}" for j in range(nout)]
    nin = len(names) - nout
    params = [f"in{j}, b{j}" if j in tensors else f"in{j}" for j in range(nin)]
    cuda_head = []
    for line in head:
        if line.startswith(("from numba import", "from jtorch.kernels.cpu.calls",
                             "from jtorch.kernels.jit")):
            continue
        if line.startswith(("_g_", "_ok_")):  # guarded fast variants: CPU blocks only
            continue
        if line == "from jtorch.kernels.registry import scalar_of":
            line = "from jtorch.kernels.cuda.scalars import scalar_of"
        cuda_head.append(line)
    cuda_head.insert(2, "# CUDA stager of the fused group's loop body")
    cuda_head.append("from jtorch.kernels.cuda.target import cuda")
    sig = ", ".join(outs + params)
    contiguous = [f"def contiguous({sig}, n):",
                  "    i = cuda.grid(1)",
                  "    step = cuda.gridsize(1)",
                  "    while i < n:",
                  "        q = i",
                  *[f"        p{j} = b{j} + i" for j in tensors],
                  *[f"        {x}" for x in lines],
                  "        i += step"]
    strided = [f"def strided(geo, {sig}, n):",
               "    i = cuda.grid(1)",
               "    step = cuda.gridsize(1)",
               "    nd = geo.shape[1]",
               "    while i < n:",
               "        q = i",
               "        rem = i",
               *[f"        p{j} = b{j}" for j in tensors],
               "        for d in range(nd - 1, -1, -1):",
               "            k = rem % geo[0, d]",
               "            rem //= geo[0, d]",
               *[f"            p{j} += k * geo[{r + 1}, d]" for r, j in enumerate(tensors)],
               *[f"        {x}" for x in lines],
               "        i += step"]
    return "\n".join([*cuda_head, "", "", *contiguous, "", "", *strided]) + "\n"


_NUMBA = {"bool": "boolean"}


def signatures(template, out_dtypes: list, in_types: list) -> dict:
    """Numba signatures of both kernels (for ``compile_ptx``): ``in_types`` per operand, the
    dtype name of a tensor's elements or of a scalar."""
    tensors = template[5]
    outs = [f"{_NUMBA.get(d, d)}[::1]" for d in out_dtypes]
    ins = [f"{_NUMBA.get(t, t)}[::1], int64" if j in tensors else _NUMBA.get(t, t)
           for j, t in enumerate(in_types)]
    args = ", ".join(outs + ins)
    return {"contiguous": f"void({args}, int64)", "strided": f"void(int64[:, ::1], {args}, int64)"}


class Launcher:
    """A group's CUDA kernels, compiled on first launch."""

    def __init__(self, template) -> None:
        self.template = template
        self.text = source(template)
        self._mod = None
        self._kernels: dict = {}

    def kernel(self, which: str):
        k = self._kernels.get(which)
        if k is None:
            if self._mod is None:
                self._mod = load("jt_cuda_fused", self.text)
            k = self._kernels[which] = target.jit(getattr(self._mod, which))
        return k


def run(fk, args: tuple):
    """``FusedKernel.__call__`` for CUDA operands: one launch for the group when its tensor
    operands are row-major CUDA tensors (broadcasts read at stride 0) needing no autograd;
    else the group's ops one by one (eager's layouts and errors)."""
    from ... import dispatch
    from ...cuda_array import CudaArray, empty
    from ...shape import bcast_elem_strides, broadcast_shapes
    from ...tensor import Tensor
    from . import eager
    from . import pointwise as _pw

    if fk.red_outs or fk._half:
        return fk._eager(*args)
    la = fk._cuda_launcher
    if la is None:
        la = fk._cuda_launcher = Launcher(fk.template)
    if la.text is None:
        return fk._eager(*args)
    grad = dispatch.grad_state.enabled
    arrs = []
    for k in fk.tensor_pos:
        a = args[k]
        arr = a._a
        if arr.__class__ is not CudaArray or (grad and a._requires_grad) or \
                not arr.flags.c_contiguous or (arrs and arr.dev is not arrs[0].dev):
            return fk._eager(*args)
        arrs.append(arr)
    try:
        shape = tuple(broadcast_shapes(*[a.shape for a in arrs]))
    except (ValueError, RuntimeError):
        return fk._eager(*args)
    dev = arrs[0].dev
    n = 1
    for s in shape:
        n *= s
    res = [Tensor._make(*empty(shape, d.np, dev), d) for d in fk.out_dtypes]
    if not n:
        return tuple(res)
    pos = set(fk.tensor_pos)
    flat = []
    for j, a in enumerate(args):
        if j in pos:
            flat += [a._a.buf, a._a.offset]
        else:
            flat.append(a)
    outs = [t._st.buf[:n] for t in res]
    blocks = max(1, min(eager.MAX_BLOCKS, (n + eager.THREADS - 1) // eager.THREADS))
    LAUNCHES[0] += 1
    if all(a.shape == shape for a in arrs):
        la.kernel("contiguous")[blocks, eager.THREADS](*outs, *flat, n)
    else:
        geo = _pw._geometry(shape, [bcast_elem_strides(a, shape) for a in arrs])
        la.kernel("strided")[blocks, eager.THREADS](geo, *outs, *flat, n)
    return tuple(res)


# fused launches so far (tests read it: a compiled group ran as one kernel)
LAUNCHES = [0]
