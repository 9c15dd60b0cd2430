"""Factories: fresh tensors of a given geometry (``empty``, ``full``, ``zeros``).

They take no tensor operands, so the call's device is a parameter; on ``meta`` they describe
the result and allocate nothing. ``strides`` (element strides, None for row-major) covers
``empty_strided``, the channels-last formats and the dense layouts ``*_like`` preserve.
"""

from __future__ import annotations

from ..cpu import fill as _fk
from ..plan import Out, Plan
from ..registry import op


def _factory_meta(*, size: tuple, dtype, device, strides: tuple | None = None,
                  fill_value=None) -> Plan:
    return Plan(Out(size, dtype, strides), {"fill_value": fill_value}, device)


empty_op = op("empty", "creation", _factory_meta, _fk.empty_cpu, differentiable=False)
full_op = op("full", "creation", _factory_meta, _fk.full_cpu, differentiable=False)
zeros_op = op("zeros", "creation", _factory_meta, _fk.zeros_cpu, differentiable=False)


# -- ranges, eye, triangle indices, complex (meta rules: torch's checks and sizes) -----------

import math  # noqa: E402

from ... import dtypes as _dt  # noqa: E402
from ...shape import broadcast_shapes  # noqa: E402
from ..plan import common_device  # noqa: E402
from ..registry import defvjp  # noqa: E402


def _tn(d) -> str:
    from ...dispatch import torch_name

    return torch_name(d)


def _fmt(x: float) -> str:
    """A double as C++ streams print it (torch's error messages)."""
    return f"{x:g}"


def int64_arg(x) -> int:
    """Scalar.to<int64_t>(): truncation toward zero, with torch's overflow error."""
    v = int(x)
    if not -(1 << 63) <= v < 1 << 63:
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return v


def arange_size(start, end, step, d) -> int:
    """torch's ``compute_arange_size``: checks in double, the count exact for int64."""
    ds, de, dstep = float(start), float(end), float(step)
    if dstep == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(ds) and math.isfinite(de)):
        raise RuntimeError(f"unsupported range: {_fmt(ds)} -> {_fmt(de)}")
    if not ((dstep > 0 and de >= ds) or (dstep < 0 and de <= ds)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if d is _dt.int64:
        xs, xe, xst = int64_arg(start), int64_arg(end), int64_arg(step)
        if xst == 0:
            raise ValueError("step must be nonzero")
        num = xe - xs + xst - (1 if xst > 0 else -1)
        size = abs(num) // abs(xst) * (1 if (num >= 0) == (xst > 0) else -1)
        size_d = float(size)
    else:
        size_d = math.ceil((de - ds) / dstep)
    if not 0 <= size_d <= 9.223372036854775807e18:
        raise RuntimeError("invalid size, possible overflow?")
    return int(size_d)


def _arange_meta(*, start, end, step, dtype, device) -> Plan:
    if dtype is _dt.bool or dtype.is_complex:
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{_tn(dtype)}\'')
    n = arange_size(start, end, step, dtype)
    return Plan(Out((n,), dtype), {"start": start, "step": step}, device)


def _linspace_meta(*, start, end, steps: int, dtype, device) -> Plan:
    if dtype is _dt.bool:
        raise NotImplementedError('"linspace_cpu" not implemented for \'Bool\'')
    return Plan(Out((steps,), dtype), {"start": start, "end": end}, device)


def _logspace_meta(*, start, end, steps: int, base: float, dtype, device) -> Plan:
    if dtype is _dt.bool or dtype.is_complex:
        raise NotImplementedError(f'"logspace_cpu" not implemented for \'{_tn(dtype)}\'')
    return Plan(Out((steps,), dtype), {"start": start, "end": end, "base": base}, device)


def _eye_meta(*, n: int, m: int, dtype, device) -> Plan:
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    return Plan(Out((n, m), dtype), {}, device)


def tri_count(row: int, col: int, offset: int, upper: bool) -> int:
    """How many (r, c) of a row x col grid lie in the lower (c <= r + offset) or upper
    (c >= r + offset) triangle."""
    if upper:
        return sum(max(col - max(r + offset, 0), 0) for r in range(row))
    return sum(min(max(r + offset + 1, 0), col) for r in range(row))


def _tri_meta(*, row: int, col: int, offset: int, dtype, device, upper: bool) -> Plan:
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    return Plan(Out((2, tri_count(row, col, offset, upper)), dtype),
                {"row": row, "col": col, "offset": offset, "upper": upper}, device)


def _complex_meta(real, imag, *, fn: str = "complex") -> Plan:
    from ...dispatch import result_strides
    from ...tensor import Tensor

    for x, name, pos in ((real, "real" if fn == "complex" else "abs", 1),
                         (imag, "imag" if fn == "complex" else "angle", 2)):
        if not isinstance(x, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                            f"{type(x).__name__}")
    floats = (_dt.float16, _dt.float32, _dt.float64)
    if real.dtype not in floats or imag.dtype not in floats:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{_tn(real.dtype)} and {_tn(imag.dtype)}")
    if real.dtype is not imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {_tn(real.dtype)} but got scalar "
                           f"type {_tn(imag.dtype)} for second argument")
    dev = common_device(real, imag)
    shape = tuple(broadcast_shapes(real._a.shape, imag._a.shape))
    return Plan(Out(shape, real.dtype.to_complex(), result_strides((real, imag), shape)), {},
                dev)


arange_op = op("arange", "creation", _arange_meta, _fk.arange_cpu, differentiable=False)
linspace_op = op("linspace", "creation", _linspace_meta, _fk.linspace_cpu,
                 differentiable=False)
logspace_op = op("logspace", "creation", _logspace_meta, _fk.logspace_cpu,
                 differentiable=False)
eye_op = op("eye", "creation", _eye_meta, _fk.eye_cpu, differentiable=False)
tril_indices_op = op("tril_indices", "creation", _tri_meta, _fk.tri_indices_cpu,
                     differentiable=False)
triu_indices_op = op("triu_indices", "creation", _tri_meta, _fk.tri_indices_cpu,
                     differentiable=False)
complex_op = op("complex", "creation", _complex_meta, _fk.complex_cpu)


def _complex_vjp(c, g):
    from ...autograd.node import sum_to

    res = []
    for need, m, part in zip(c.needs, c._meta, ("real", "imag")):
        if not need:
            res.append(None)
            continue
        p = g.real if part == "real" else g.imag
        res.append(sum_to(p, m[0]).to(m[1]))
    return tuple(res)


defvjp(complex_op, _complex_vjp, "", "ComplexBackward0")
