"""Random number generators: ``Generator``, the default generator and torch.random's API.

A generator is torch's CPU engine, MT19937 (``kernels/cpu/mt19937.py``), and the sampling
ops draw from it as torch's CPU kernels do: after ``manual_seed(s)``, ``rand``, ``randn``,
``randint``, ``randperm``, ``uniform_``, ``normal_``, ``random_``, ``bernoulli`` and dropout
give torch's values bit for bit (float32 ``randn`` as torch's AVX2 build computes it).
Samplers without that guarantee (multinomial, exponential, cauchy, geometric, log-normal,
complex dtypes) take a 64-bit key from the engine and run a counter-based Philox stream in
parallel: reproducible from the seed, not torch's numbers. ``get_state`` is 2528 bytes: the
seed, the engine's words and counters, and the cached normal.

>>> g = jtorch.Generator().manual_seed(0)
>>> jtorch.rand(2, generator=g).equal(jtorch.rand(2, generator=jtorch.Generator().manual_seed(0)))
True
"""

from __future__ import annotations

import contextlib
import os
import sys
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
    "thread_safe_generator",
]

_DEFAULT_SEED = 67280421310721  # torch's seed of a fresh CPU generator
_STATE_BYTES = 8 + 624 * 4 + 16 + 8
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
    """A random generator (torch.Generator).

    On CPU: torch's MT19937 engine, so a seed gives torch's numbers
    (``kernels/cpu/mt19937.py``); ``get_state``/``set_state`` hold the seed, the engine's 624
    words and counters, and the cached second normal of a Box-Muller pair.

    On CUDA: torch's Philox state, a seed and an offset (``_philox``, ``[seed, offset]``): each
    call draws under the seed as key from the offset, which it advances by 4
    (``kernels/cuda/philox.py``); ``get_offset``/``set_offset`` (a multiple of 4) and 16 bytes
    of state (seed, offset) as torch's CUDA generator. The devices' default generators
    (``jtorch.cuda.default_generators``) share their state with ``jtorch.cuda.random``."""

    def __init__(self, device="cpu"):
        d = _device(device) if isinstance(device, str) else device
        cuda = getattr(d, "type", None) == "cuda"
        if cuda:
            from . import cuda as _cuda

            if not _cuda.is_available():
                raise RuntimeError("Cannot get CUDA generator without ATen_cuda library.")
        self._init(to_device(device), [_DEFAULT_SEED, 0] if cuda else None)

    @classmethod
    def _sharing(cls, device, philox: list) -> Generator:
        """A CUDA generator over an existing ``[seed, offset]`` (a device's default one)."""
        g = cls.__new__(cls)
        g._init(to_device(device), philox)
        return g

    def _init(self, device, philox) -> None:
        self._device = device
        self._lock = threading.Lock()
        self._philox = philox
        self._seed_engine(_DEFAULT_SEED if philox is None else philox[0])

    def _reseed(self, s: int) -> None:
        if self._philox is not None:
            self._philox[0], self._philox[1] = s, 0
        self._seed_engine(s)

    def _seed_engine(self, s: int) -> None:
        """The MT19937 engine (a CUDA generator's too: ops that run on the host draw from it)."""
        from .kernels.cpu.mt19937 import seeded

        self._seed = s
        self._mt, self._pos = seeded(s)
        self._normal = np.full(1, np.nan)  # torch's next_double_normal_sample

    @property
    def device(self) -> _device:
        """CPU, or the CUDA device it was made for (whose ops draw from this same engine)."""
        return self._device

    def manual_seed(self, seed) -> Generator:
        s = _as_seed(seed)
        with self._lock:
            self._reseed(s)
        return self

    def seed(self) -> int:
        s = _nondeterministic_seed()
        self.manual_seed(s)
        return s

    def initial_seed(self) -> int:
        return self._seed if self._philox is None else self._philox[0]

    def get_offset(self) -> int:
        if self._philox is None:
            raise RuntimeError("CPU Generator does not use offset")
        return self._philox[1]

    def set_offset(self, offset: int) -> Generator:
        if self._philox is None:
            raise RuntimeError("CPU Generator does not use offset")
        o = int(offset)
        if o % 4:
            raise RuntimeError("offset must be a multiple of 4")
        with self._lock:
            self._philox[1] = o
        return self

    def philox_take(self, increment: int) -> tuple[int, int]:
        """(seed, offset) for a CUDA call drawing ``increment`` numbers per thread, the offset
        advanced past them (to a multiple of 4, as torch's philox_cuda_state)."""
        with self._lock:
            seed, offset = self._philox
            self._philox[1] = offset + -(-increment // 4) * 4
        return seed, offset

    def get_state(self):
        from .tensor import Tensor

        if self._philox is not None:
            seed, offset = self._philox
            raw = seed.to_bytes(8, "little") + offset.to_bytes(8, "little", signed=True)
            return Tensor._make(np.frombuffer(raw, np.uint8).copy())
        with self._lock:
            raw = (self._seed.to_bytes(8, "little") + self._mt.tobytes() + self._pos.tobytes()
                   + self._normal.tobytes())
        return Tensor._make(np.frombuffer(raw, np.uint8).copy())

    def set_state(self, new_state) -> Generator:
        from . import dtypes
        from .tensor import Tensor

        if not isinstance(new_state, Tensor) or new_state.dtype is not dtypes.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if self._philox is not None:
            set_philox_state(self._philox, np.ascontiguousarray(new_state._a).tobytes(),
                             self._lock)
            self._seed_engine(self._philox[0])
            return self
        if new_state.numel() != _STATE_BYTES:
            raise RuntimeError(
                f"Expected a CPUGeneratorImplState of size {_STATE_BYTES} but found the input "
                f"RNG state size to be {new_state.numel()}"
            )
        raw = np.ascontiguousarray(new_state._a).reshape(-1).tobytes()
        mt = np.frombuffer(raw[8:2504], np.uint32).copy()
        pos = np.frombuffer(raw[2504:2520], np.int64).copy()
        if not (0 < pos[0] <= 624 and 0 <= pos[1] <= 624):
            raise RuntimeError("Invalid mt19937 state")
        with self._lock:
            self._seed = int.from_bytes(raw[:8], "little")
            self._mt, self._pos = mt, pos
            self._normal = np.frombuffer(raw[2520:], np.float64).copy()
        return self

    def clone_state(self) -> Generator:
        g = Generator._sharing(self._device, None if self._philox is None else list(self._philox))
        g.set_state(self.get_state())
        return g

    def _take(self, blocks: int) -> tuple[int, int]:
        """A fresh counter-based stream for the samplers that run in parallel (their numbers
        are not torch's): a 64-bit draw of the engine as its key, counters from 0."""
        from .kernels.cpu.mt19937 import key64

        with self._lock:
            return int(key64(self._mt, self._pos)), 0

    def __getstate__(self) -> dict:
        return {"state": self.get_state()._a.tobytes(), "device": str(self._device)}

    def __setstate__(self, state: dict) -> None:
        from .tensor import Tensor

        self._lock = threading.Lock()
        self._device = to_device(state.get("device", "cpu"))
        self._philox = [_DEFAULT_SEED, 0] if self._device.type == "cuda" else None
        self.set_state(Tensor._make(np.frombuffer(state["state"], np.uint8).copy()))

    def __repr__(self) -> str:
        return f"<jtorch.Generator object at {id(self):#x}>"


def set_philox_state(entry: list, raw: bytes, lock) -> None:
    """A CUDA generator's ``[seed, offset]`` from torch's 16 state bytes (or 8: the seed
    alone, offset 0), with torch's checks."""
    if len(raw) not in (8, 16):
        raise RuntimeError("RNG state is wrong size")
    seed = int.from_bytes(raw[:8], "little")
    offset = int.from_bytes(raw[8:], "little", signed=True) if len(raw) == 16 else 0
    if offset % 4:
        raise RuntimeError("offset must be a multiple of 4")
    with lock:
        entry[0], entry[1] = seed, offset


default_generator = Generator()
default_generator.manual_seed(_nondeterministic_seed())  # torch seeds its default randomly


# The seed ``manual_seed`` set last: every CUDA device's generator starts from it too, as in
# torch (``jtorch/cuda/random.py`` reads it; seeding touches no CUDA target).
cuda_seed: list = [None]


def manual_seed(seed) -> Generator:
    """Seed the default generator (``seed`` is converted with ``int()`` as torch does) and the
    CUDA generators."""
    s = _as_seed(int(seed))
    cuda_seed[0] = s
    cuda_random = sys.modules.get("jtorch.cuda.random")
    if cuda_random is not None:
        cuda_random.reset()
    return default_generator.manual_seed(s)


def seed() -> int:
    """Seed the default generator non-deterministically; returns the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor (see ``Generator.get_state``)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, _caller: str = "fork_rng",
             _devices_kw: str = "devices", device_type: str = "cuda"):
    """Restore the default generator's state on exit, and the CUDA generators' of ``devices``
    (all devices when None; none where CUDA is not available, as torch's)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    saved = []
    if device_type == "cuda":
        from . import cuda

        if cuda.is_available():
            if devices is None:
                devices = range(cuda.device_count())
            saved = [(d, cuda.get_rng_state(d)) for d in devices]
    try:
        yield
    finally:
        set_rng_state(state)
        if saved:
            from . import cuda

            for d, s in saved:
                cuda.set_rng_state(s, d)


def resolve(generator, fn: str) -> Generator:
    """The generator a sampling op uses (``None``: the default one), type-checked."""
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"{fn}(): argument 'generator' must be torch.Generator, not "
                        f"{type(generator).__name__}")
    return generator


def thread_safe_generator() -> Generator | None:
    """The generator a DataLoader thread worker draws from (its own, so workers do not share
    state); None elsewhere, which makes random ops use the default generator. jtorch's
    DataLoader workers are processes, so this is None."""
    from .utils.data import get_worker_info

    info = get_worker_info()
    rng = getattr(info, "rng", None)
    if info is not None and getattr(info, "worker_method", None) == "thread" and rng is not None:
        return rng.torch_generator
    return None
