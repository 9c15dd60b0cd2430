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
