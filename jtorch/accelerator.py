"""torch.accelerator: the current accelerator (none: jtorch runs on the CPU)."""

from __future__ import annotations


def is_available() -> bool:
    return False


def current_accelerator(check_available: bool = False):
    return None


def device_count() -> int:
    return 0


def current_device_index() -> int:
    raise RuntimeError("No available accelerator detected")


def synchronize(device=None) -> None:
    raise RuntimeError("No available accelerator detected")
