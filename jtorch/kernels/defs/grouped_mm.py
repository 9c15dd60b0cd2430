"""``_grouped_mm``: one matrix product per group (the experts of a mixture-of-experts layer),
over 3-D operands (a batch of groups) or 2-D ones sliced along a jagged dim by the int32
``offs`` (each group's end). The four forms:

* 3d x 3d: out[g] = a[g] @ b[g]                     (G, M, N)
* 2d x 3d: out[s:e] = a[s:e] @ b[g]                 (M, N), rows past offs[-1] are 0
* 3d x 2d: out[:, s:e] = a[g] @ b[:, s:e]           (M, N)
* 2d x 2d: out[g] = a[:, s:e] @ b[s:e]              (G, M, N)

Each gradient is again a grouped product of one of these forms, so the op's vjp calls the op.
The CPU kernel runs one BLAS product per group. The public checks (dtypes, 16-byte strides) are
``nn.functional.grouped_mm``'s; this record checks shapes only.
"""

from __future__ import annotations

from ... import dispatch
from ... import dtypes as _dt
from ..plan import Out, Plan, common_device
from ..registry import defvjp, op
from ._lazy import lazy

_GK = "jtorch.kernels.cpu.grouped_mm"  # imported at the first call (_lazy.py)


def out_shape(a_shape: tuple, b_shape: tuple, offs_shape: tuple | None) -> tuple:
    """The result's shape, with torch's errors for groups that do not match."""
    a2, b2 = len(a_shape) == 2, len(b_shape) == 2
    if a2 and b2:
        return (offs_shape[0], a_shape[0], b_shape[1])
    if a2:
        if offs_shape[0] != b_shape[0]:
            raise RuntimeError("matrix batch sizes have to match")
        return (a_shape[0], b_shape[-1])
    if b2:
        if offs_shape[0] != a_shape[0]:
            raise RuntimeError("matrix batch sizes have to match")
        return (a_shape[1], b_shape[1])
    if a_shape[0] != b_shape[0]:
        raise RuntimeError("batched dimension has to match")
    return (a_shape[0], a_shape[1], b_shape[-1])


def _meta(a, b, offs) -> Plan:
    dev = common_device(a, b, offs)
    sa, sb = a._a.shape, b._a.shape
    if len(sa) not in (2, 3) or len(sb) not in (2, 3):
        raise RuntimeError(f"_grouped_mm: expected 2-D or 3-D operands, got {list(sa)} and "
                           f"{list(sb)}")
    if sa[-1] != sb[-2 if len(sa) == 3 or len(sb) == 3 else 0]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    if (offs is None) != (len(sa) == 3 and len(sb) == 3):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if a.dtype is not b.dtype or a.dtype.category != 2:
        raise RuntimeError(f"_grouped_mm: expected float operands of one dtype, got {a.dtype} "
                           f"and {b.dtype}")
    shape = out_shape(sa, sb, None if offs is None else offs._a.shape)
    return Plan(Out(shape, a.dtype), {}, dev)


def _t(x):
    return x.transpose(-1, -2)


def _vjp(c, g):
    """Each operand's gradient as one grouped product (the form follows from the operands')."""
    a, b, offs = c.args
    ga = gb = None
    if c.needs[0]:  # g @ b^T in every form: 2d x 3d -> 2d x 3d, 3d x 2d -> 2d x 2d, ...
        ga = grouped_mm_op(g, _t(b), offs)
    if c.needs[1]:  # a^T @ g: 2d x 3d -> 2d x 2d, 2d x 2d -> 2d x 3d, 3d x 2d -> 3d x 2d
        gb = grouped_mm_op(_t(a), g, offs)
    return ga, gb, None


# (mat_a, mat_b, offs int32 (G,) | None) -> the grouped products
grouped_mm_op = op("_grouped_mm", "extern", _meta, lazy(_GK, "grouped_mm_cpu"))
defvjp(grouped_mm_op, _vjp, "012", name="GroupedMmBackward0")


def c10_name(d: _dt.dtype) -> str:
    """The dtype as torch's out-dtype check prints it ("float", "c10::Half")."""
    return {"float32": "float", "float64": "double"}.get(d.name, f"c10::{dispatch.torch_name(d)}")
