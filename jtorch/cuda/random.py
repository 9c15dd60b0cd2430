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
_seeds: dict[int, list] = {}  # device -> [seed, offset] (one list per device, updated in place)
_generators: dict[int, _random.Generator] = {}  # device -> its default generator


def _entry(device: int) -> list:
    e = _seeds.get(device)
    if e is None:  # a device's first use: the seed jtorch.manual_seed set, if any
        s = _random.cuda_seed[0]
        e = _seeds[device] = [_DEFAULT_SEED if s is None else s, 0]
    return e


def default_generator(device: int) -> _random.Generator:
    """Device ``device``'s default generator (``jtorch.cuda.default_generators``): a
    ``Generator`` over this module's ``[seed, offset]`` of the device."""
    with _lock:
        g = _generators.get(device)
        if g is None:
            g = _generators[device] = _random.Generator._sharing(f"cuda:{device}",
                                                                 _entry(device))
    return g


def _set(device: int, seed: int, offset: int = 0) -> None:
    e = _entry(device)
    e[0], e[1] = seed, offset
    g = _generators.get(device)
    if g is not None:
        g._seed_engine(seed)


def reset() -> None:
    """``jtorch.manual_seed`` ran: every device starts again from its seed."""
    s = _random.cuda_seed[0]
    with _lock:
        for device in list(_seeds):
            _set(device, _DEFAULT_SEED if s is None else s)


def manual_seed(device: int, seed) -> None:
    s = _as_seed(seed)
    with _lock:
        _set(device, s)


def seed(device: int) -> int:
    """Seeds ``device``'s generator from the OS's entropy; returns the seed."""
    s = _nondeterministic_seed()
    with _lock:
        _set(device, s)
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
    return seed.to_bytes(8, "little") + offset.to_bytes(8, "little", signed=True)


def set_state(device: int, state: bytes) -> None:
    """torch's 16 bytes (or 8: the seed, offset 0), with its checks."""
    with _lock:
        e = _entry(device)
    _random.set_philox_state(e, state, _lock)
    g = _generators.get(device)
    if g is not None:
        g._seed_engine(e[0])
