"""Random number generators: ``Generator``, the default generator and torch.random's API.

A generator is a counter-based Philox4x32-10 stream (``kernels/cpu/random.py``): its whole
state is ``(seed, offset)``. Every sampling call takes a fresh range of counters by
advancing the offset, so the same seed gives the same numbers in every run, process and
thread count. ``get_state`` is 16 bytes: the seed and the offset as little-endian uint64.

>>> g = jtorch.Generator().manual_seed(0)
>>> jtorch.rand(2, generator=g).equal(jtorch.rand(2, generator=jtorch.Generator().manual_seed(0)))
True
"""

from __future__ import annotations

import contextlib
import os
import threading

import numpy as np

from .device import device as _device
from .device import to_device

__all__ = [
    "Generator",
    "default_generator",
    "fork_rng",
    "get_rng_state",
    "initial_seed",
    "manual_seed",
    "seed",
    "set_rng_state",
]

_DEFAULT_SEED = 67280421310721  # torch's seed of a fresh CPU generator
_STATE_BYTES = 16
_U64 = 1 << 64


def _nondeterministic_seed() -> int:
    return int.from_bytes(os.urandom(8), "little")


def _as_seed(seed) -> int:
    """torch's seed conversion: an int in [-2**63, 2**64), negatives wrapped to uint64."""
    if isinstance(seed, (float, str)) or not hasattr(seed, "__index__"):
        raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
    s = seed.__index__()
    if not -(1 << 63) <= s < _U64:
        raise ValueError("Overflow when unpacking long long")
    return s % _U64


class Generator:
    """A CPU random generator (torch.Generator): ``manual_seed``, ``seed``, ``initial_seed``,
    ``get_state``/``set_state`` and ``get_offset``/``set_offset``."""

    def __init__(self, device="cpu"):
        to_device(device)
        self._seed = _DEFAULT_SEED
        self._offset = 0
        self._lock = threading.Lock()

    @property
    def device(self) -> _device:
        return _device("cpu")

    def manual_seed(self, seed) -> Generator:
        s = _as_seed(seed)
        with self._lock:
            self._seed, self._offset = s, 0
        return self

    def seed(self) -> int:
        s = _nondeterministic_seed()
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed

    def get_offset(self) -> int:
        return self._offset

    def set_offset(self, offset: int) -> Generator:
        with self._lock:
            self._offset = int(offset) % _U64
        return self

    def get_state(self):
        from .tensor import Tensor

        raw = self._seed.to_bytes(8, "little") + self._offset.to_bytes(8, "little")
        return Tensor._make(np.frombuffer(raw, np.uint8).copy())

    def set_state(self, new_state) -> Generator:
        from . import dtypes
        from .tensor import Tensor

        if not isinstance(new_state, Tensor) or new_state.dtype is not dtypes.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if new_state.numel() != _STATE_BYTES:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the input "
                f"RNG state size to be {new_state.numel()}"
            )
        raw = np.ascontiguousarray(new_state._a).reshape(-1).tobytes()
        with self._lock:
            self._seed = int.from_bytes(raw[:8], "little")
            self._offset = int.from_bytes(raw[8:], "little")
        return self

    def clone_state(self) -> Generator:
        g = Generator()
        g._seed, g._offset = self._seed, self._offset
        return g

    def _take(self, blocks: int) -> tuple[int, int]:
        """Reserve ``blocks`` Philox counters: returns (seed, first counter)."""
        with self._lock:
            off = self._offset
            self._offset = (off + blocks) % _U64
            return self._seed, off

    def __getstate__(self) -> dict:
        return {"seed": self._seed, "offset": self._offset}

    def __setstate__(self, state: dict) -> None:
        self._seed, self._offset = state["seed"], state["offset"]
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<jtorch.Generator object at {id(self):#x}>"


default_generator = Generator()
default_generator.manual_seed(_nondeterministic_seed())  # torch seeds its default randomly


def manual_seed(seed) -> Generator:
    """Seed the default generator (``seed`` is converted with ``int()`` as torch does)."""
    return default_generator.manual_seed(_as_seed(int(seed)))


def seed() -> int:
    """Seed the default generator non-deterministically; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor (seed and offset, 16 bytes)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda"):
    """Restore the default generator's state on exit (only CPU generators exist here)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)


def resolve(generator, fn: str) -> Generator:
    """The generator a sampling op uses (``None``: the default one), type-checked."""
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"{fn}(): argument 'generator' must be torch.Generator, not "
                        f"{type(generator).__name__}")
    return generator
