"""The CUDA generators' state, one per device: torch's Philox seed and offset. CUDA random
kernels read ``philox_state`` (the seed and the offset to start at, advancing the offset past
the numbers they draw), as torch's ``philox_cuda_state`` hands them; ``get_rng_state`` is
torch's 16 bytes (seed, then offset, little-endian uint64s).

This module only keeps the numbers: ``jtorch.cuda``'s seeding functions check for a device
first (without one, seeding is a silent no-op as in torch)."""

from __future__ import annotations

import threading

from .. import random as _random
from ..random import _DEFAULT_SEED, _as_seed, _nondeterministic_seed

_lock = threading.Lock()
_seeds: dict[int, list] = {}  # device -> [seed, offset]


def _entry(device: int) -> list:
    e = _seeds.get(device)
    if e is None:  # a device's first use: the seed jtorch.manual_seed set, if any
        s = _random.cuda_seed[0]
        e = _seeds[device] = [_DEFAULT_SEED if s is None else s, 0]
    return e


def reset() -> None:
    """``jtorch.manual_seed`` ran: every device starts again from its seed."""
    with _lock:
        _seeds.clear()


def manual_seed(device: int, seed) -> None:
    s = _as_seed(seed)
    with _lock:
        _seeds[device] = [s, 0]


def seed(device: int) -> int:
    """Seeds ``device``'s generator from the OS's entropy; returns the seed."""
    s = _nondeterministic_seed()
    with _lock:
        _seeds[device] = [s, 0]
    return s


def initial_seed(device: int) -> int:
    with _lock:
        return _entry(device)[0]


def philox_state(device: int, increment: int) -> tuple:
    """(seed, offset) for a kernel that draws ``increment`` numbers per thread, the offset
    advanced past them (rounded up to a multiple of 4, as torch's Philox rounds)."""
    with _lock:
        e = _entry(device)
        seed, offset = e
        e[1] = offset + -(-increment // 4) * 4
    return seed, offset


def get_state(device: int) -> bytes:
    with _lock:
        seed, offset = _entry(device)
    return seed.to_bytes(8, "little") + offset.to_bytes(8, "little")


def set_state(device: int, state: bytes) -> None:
    if len(state) != 16:
        raise RuntimeError("RNG state is wrong size")
    with _lock:
        _seeds[device] = [int.from_bytes(state[:8], "little"), int.from_bytes(state[8:], "little")]
