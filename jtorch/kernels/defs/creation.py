"""Factories: fresh tensors of a given geometry (``empty``, ``full``, ``zeros``).

They take no tensor operands, so the call's device is a parameter; on ``meta`` they describe
the result and allocate nothing. ``strides`` (element strides, None for row-major) covers
``empty_strided``, the channels-last formats and the dense layouts ``*_like`` preserve
(``like_strides``: also the layout of ``to`` and ``clone`` results).
"""

from __future__ import annotations

import math

from ... import dispatch
from ... import dtypes as _dt
from ...shape import broadcast_shapes, contiguous_strides, is_dense
from ...tensor import Tensor
from ..cpu import fill as _fk
from ..plan import Out, Plan, common_device
from ..registry import defvjp, op


def _factory_meta(*, size: tuple, dtype, device, strides: tuple | None = None,
                  fill_value=None) -> Plan:
    return Plan(Out(size, dtype, strides), {"fill_value": fill_value}, device)


empty_op = op("empty", "creation", _factory_meta, _fk.empty_cpu, differentiable=False)
full_op = op("full", "creation", _factory_meta, _fk.full_cpu, differentiable=False)
zeros_op = op("zeros", "creation", _factory_meta, _fk.zeros_cpu, differentiable=False)


def like_strides(x, memory_format, fn: str) -> tuple | None:
    """Element strides of a fresh tensor like ``x`` (None: row-major): ``preserve_format``
    (the default) keeps a dense input's strides and otherwise its dimension order (torch's
    ``empty_like``); ``channels_last`` / ``channels_last_3d`` give those stride orders,
    ``contiguous_format`` is row-major."""
    a = x._a
    if memory_format is not None:
        fmt = _dt.check_memory_format(memory_format, fn)
        if fmt is not _dt.preserve_format:
            return _dt.format_strides(a.shape, fmt)
    shape = a.shape
    if a.flags.c_contiguous:
        if a.size and 1 not in shape:
            return None
        # contiguous up to the strides of size-1 dims (or empty): torch keeps them as they are
        isz = a.itemsize
        st = tuple([s // isz for s in a.strides])
        return None if st == contiguous_strides(shape) else st
    isz = a.itemsize
    st = tuple([s // isz for s in a.strides])
    if is_dense(shape, st):
        return st
    return dispatch.result_strides((x,), a.shape)


# -- ranges, eye, triangle indices, complex (meta rules: torch's checks and sizes) -----------

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
        raise NotImplementedError(f'"arange_cpu" not implemented for \'{dtype.scalar_name}\'')
    n = arange_size(start, end, step, dtype)
    return Plan(Out((n,), dtype), {"start": start, "step": step}, device)


def _linspace_meta(*, start, end, steps: int, dtype, device) -> Plan:
    if dtype is _dt.bool:
        raise NotImplementedError('"linspace_cpu" not implemented for \'Bool\'')
    return Plan(Out((steps,), dtype), {"start": start, "end": end}, device)


def _logspace_meta(*, start, end, steps: int, base: float, dtype, device) -> Plan:
    if dtype is _dt.bool or dtype.is_complex:
        raise NotImplementedError(f'"logspace_cpu" not implemented for \'{dtype.scalar_name}\'')
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
    for x, name, pos in ((real, "real" if fn == "complex" else "abs", 1),
                         (imag, "imag" if fn == "complex" else "angle", 2)):
        if not isinstance(x, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                            f"{type(x).__name__}")
    floats = (_dt.float16, _dt.float32, _dt.float64)
    if real.dtype not in floats or imag.dtype not in floats:
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{real.dtype.scalar_name} and {imag.dtype.scalar_name}")
    if real.dtype is not imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {real.dtype.scalar_name} but got scalar "
                           f"type {imag.dtype.scalar_name} for second argument")
    dev = common_device(real, imag)
    shape = tuple(broadcast_shapes(real._a.shape, imag._a.shape))
    return Plan(Out(shape, real.dtype.to_complex(), dispatch.result_strides((real, imag), shape)), {},
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
    """The real and imaginary parts of the gradient (the node sums them to each input's
    shape and casts them to its dtype)."""
    return (g.real if c.needs[0] else None, g.imag if c.needs[1] else None)


defvjp(complex_op, _complex_vjp, "", "ComplexBackward0")
