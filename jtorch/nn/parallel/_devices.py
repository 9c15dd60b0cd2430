"""What torch's data-parallel helpers do with device ids on a machine without an
accelerator (jtorch's only devices are the CPU and meta): ids parse as torch parses them, and
every step that would move a tensor to a device raises torch's CPU-only error."""

from __future__ import annotations

from ...tensor import Tensor

NO_ACCELERATOR = "Cannot access accelerator device when none is available."


def device_index(device, wording: str = "non cpu"):
    """torch's ``_get_device_index(device, optional=True)``: an int is the index, a device
    (or string) of an accelerator type its index (None without one), None stays None; a CPU
    device is refused ("Expected a non cpu device" / parallel_apply's "Expected a cuda
    device")."""
    if device is None or (isinstance(device, int) and not isinstance(device, bool)):
        return device
    text = device if isinstance(device, str) else str(device)
    kind, _, index = text.partition(":")
    if kind == "cpu":
        raise ValueError(f"Expected a {wording} device, but got: {device}")
    return int(index) if index else None


def refuse_cpu(what: str, tensors) -> None:
    """torch's Broadcast/Gather assert their tensors are on an accelerator; here no tensor
    is, so this always raises (jtorch's meta tensors: there is no accelerator either)."""
    if any(isinstance(t, Tensor) and t.device.type == "cpu" for t in tensors):
        raise AssertionError(f"{what} function not implemented for CPU tensors")
    raise RuntimeError(NO_ACCELERATOR)
