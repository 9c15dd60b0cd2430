"""torch.nn.parallel.parallel_apply: each replica on its inputs, one thread per device. torch
checks the counts, then takes each device's stream, which a machine without an accelerator
does not have: here (as in a CPU-only torch) the call ends in that error."""

from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from ._devices import NO_ACCELERATOR, device_index

__all__ = ["get_a_var", "parallel_apply"]


def get_a_var(obj) -> Tensor | None:
    """The first tensor in ``obj`` (searching lists, tuples and dict items), or None."""
    if isinstance(obj, Tensor):
        return obj
    if isinstance(obj, (list, tuple)):
        for result in map(get_a_var, obj):
            if isinstance(result, Tensor):
                return result
    if isinstance(obj, dict):
        for result in map(get_a_var, obj.items()):
            if isinstance(result, Tensor):
                return result
    return None


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None) -> list[Any]:
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of inputs {len(inputs)}")
    if kwargs_tup is not None and len(modules) != len(kwargs_tup):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the number "
                             f"of kwargs_tup {len(kwargs_tup)}")
    if devices is not None:
        if len(modules) != len(devices):
            raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                                 f"number of devices {len(devices)}")
    else:
        devices = [None] * len(modules)
    devices = [device_index(d, "cuda") for d in devices]
    if devices:  # each device's current stream
        raise RuntimeError(NO_ACCELERATOR)
    raise AssertionError("No available accelerator found.")
