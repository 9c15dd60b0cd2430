"""torch.cuda over Numba's CUDA target: devices, streams, events, seeds and the caching
allocator's counters (``kernels/cuda/memory.py``).

Where no target answers (no driver and no ``NUMBA_ENABLE_CUDASIM=1``) every call answers as
torch's build without CUDA does: nothing is available, queries that need a device raise
``AssertionError("Torch not compiled with CUDA enabled")``, seeding and cache calls do nothing,
memory counters are 0. Nothing here imports ``numba.cuda`` until a function asks for the
target (``import jtorch.cuda`` stays cheap).

Under Numba's simulator there is one device, named ``"Numba CUDA simulator"``, of the compute
capability the simulator reports, with the host's memory and one multiprocessor; every launch
runs to completion before it returns, so streams are markers, ``synchronize`` has nothing to
wait for and events time with the host clock at ``record`` (``kernels/cuda/target.py``).

>>> import jtorch
>>> jtorch.cuda.is_available()  # doctest: +SKIP
False
"""

from __future__ import annotations

import collections
import contextlib
import sys
import threading
from typing import Any

from ..ops.aten import OutOfMemoryError  # noqa: F401  (torch.cuda.OutOfMemoryError)
from . import amp  # noqa: F401
from . import random as _random

_NOT_COMPILED = "Torch not compiled with CUDA enabled"
_INVALID_ORDINAL = "CUDA error: invalid device ordinal"

_available: bool | None = None
_initialized = False
_properties: dict = {}
_tls = threading.local()  # .streams: device -> the current Stream of this thread
_defaults: dict = {}  # device -> its default Stream


def _target():
    from ..kernels.cuda import target

    return target


def is_available() -> bool:
    """Whether a CUDA device answers, or Numba's simulator stands in for one."""
    global _available
    if _available is None:
        _available = _target().available()
    return _available


def device_count() -> int:
    return _target().device_count() if is_available() else 0


def _memory_used() -> bool:
    mem = sys.modules.get("jtorch.kernels.cuda.memory")
    return mem is not None and mem.initialized()


def is_initialized() -> bool:
    """Whether CUDA state is initialised: by ``init``, a device query or a device allocation."""
    return is_available() and (_initialized or _memory_used())


def _lazy_init() -> None:
    global _initialized
    if not is_available():
        raise AssertionError(_NOT_COMPILED)
    _initialized = True


def init() -> None:
    """Initialises CUDA state (torch does it lazily; this forces it)."""
    _lazy_init()


def _get_device_index(device: Any, optional: bool = False) -> int:
    """torch's ``_get_device_index``: an int as it is, a CUDA device's index, None or a device
    without index the current device where ``optional``."""
    from ..device import device as _device

    if isinstance(device, int) and not isinstance(device, bool):
        return device
    if isinstance(device, str):
        device = _device(device)
    if isinstance(device, _device):
        if device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
        if device.index is not None:
            return device.index
    elif isinstance(device, globals()["device"]):
        return device.idx
    elif device is not None:
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")
    if optional:
        return current_device()
    raise ValueError(f"Expected a torch.device with a specified index or an integer, but got:{device}")


def _checked_index(device: Any) -> int:
    """The index of ``device`` (None: the current one) after a range check."""
    _lazy_init()
    i = _get_device_index(device, optional=True)
    if not 0 <= i < device_count():
        raise AssertionError("Invalid device id")
    return i


def current_device() -> int:
    _lazy_init()
    return _target().current_device_index()


def set_device(device: Any) -> None:
    """Makes ``device`` current (a no-op for a negative index, as in torch)."""
    i = _get_device_index(device)
    if i < 0:
        return
    _lazy_init()
    if i >= device_count():
        raise RuntimeError(_INVALID_ORDINAL)
    _target().select_device(i)


class device(contextlib.AbstractContextManager):
    """``with torch.cuda.device(i)``: device ``i`` current inside the block (a no-op for a
    negative index or None)."""

    def __init__(self, device: Any) -> None:
        if device is None and not is_available():
            self.idx = -1
        else:
            self.idx = _get_device_index(device, optional=True)
        self._scope = None

    def __enter__(self):
        if self.idx < 0:
            return
        if not is_available():
            raise RuntimeError("PyTorch was compiled without CUDA support")
        if self.idx >= device_count():
            raise RuntimeError(_INVALID_ORDINAL)
        self._scope = _target().device_scope(self.idx)
        self._scope.__enter__()
        return

    def __exit__(self, *exc) -> bool:
        scope, self._scope = self._scope, None
        if scope is not None:
            scope.__exit__(*exc)
        return False


class device_of(device):
    """``with torch.cuda.device_of(t)``: the device of tensor ``t`` current inside the block (a
    no-op for a CPU tensor)."""

    def __init__(self, obj) -> None:
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def get_device_name(device: Any = None) -> str:
    return get_device_properties(device).name


def get_device_capability(device: Any = None) -> tuple:
    prop = get_device_properties(device)
    return prop.major, prop.minor


class _CudaDeviceProperties:
    """A device's properties under torch's attribute names (total_memory in bytes)."""

    __slots__ = (
        "L2_cache_size",
        "is_integrated",
        "major",
        "minor",
        "multi_processor_count",
        "name",
        "total_memory",
        "uuid",
        "warp_size",
    )

    def __init__(self, **fields) -> None:
        for k, v in fields.items():
            setattr(self, k, v)

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1 << 20)}MB, "
                f"multi_processor_count={self.multi_processor_count}, uuid={self.uuid}, "
                f"L2_cache_size={self.L2_cache_size // (1 << 20)}MB)")


def get_device_properties(device: Any = None) -> _CudaDeviceProperties:
    i = _checked_index(device)
    prop = _properties.get(i)
    if prop is None:
        prop = _properties[i] = _CudaDeviceProperties(**_target().device_properties(i))
    return prop


def mem_get_info(device: Any = None) -> tuple:
    """(free, total) bytes of the device's memory, as the driver counts them."""
    return _target().memory_info(_checked_index(device))


def synchronize(device: Any = None) -> None:
    """Waits for every kernel on the device to finish."""
    _lazy_init()
    with globals()["device"](device):
        _target().synchronize()


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the current device computes in bfloat16 (compute capability 8.0 or newer), or,
    with ``including_emulation``, at least stores it (a bfloat16 tensor can be made there)."""
    if not is_available():
        return False
    if get_device_properties(current_device()).major >= 8:
        return True
    if not including_emulation:
        return False
    try:
        import jtorch

        jtorch.tensor([1.0], dtype=jtorch.bfloat16, device="cuda")
    except Exception:  # noqa: BLE001  (torch's check: any failure reads as unsupported)
        return False
    return True


# -- streams and events ----------------------------------------------------------------------

class Stream:
    """A CUDA stream on a device (None or negative: the current one). Under the simulator a
    marker: launches there run to completion before they return."""

    def __init__(self, device: Any = None, priority: int = 0, **kwargs) -> None:
        if not is_available():
            raise RuntimeError("torch.cuda.Stream requires CUDA support")
        i = current_device() if device is None else _get_device_index(device, optional=True)
        if i < 0:
            i = current_device()
        with globals()["device"](i):
            s, handle = _target().new_stream()
        self._init(s, handle, i, priority)

    def _init(self, s, handle: int, index: int, priority: int = 0) -> None:
        from ..device import device as _device

        self._s = s
        self.cuda_stream = handle
        self.device_index = index
        self.device = _device("cuda", index)
        self.priority = priority

    @classmethod
    def _wrap(cls, s, handle: int, index: int) -> Stream:
        obj = cls.__new__(cls)
        obj._init(s, handle, index)
        return obj

    def query(self) -> bool:
        """Whether all work submitted to the stream has completed."""
        ev = _target().Event(False)
        ev.record(self._s)
        return ev.query()

    def synchronize(self) -> None:
        if self._s is None:
            _target().synchronize()
        else:
            self._s.synchronize()

    def wait_event(self, event: Event) -> None:
        event.wait(self)

    def wait_stream(self, stream: Stream) -> None:
        self.wait_event(stream.record_event())

    def record_event(self, event: Event | None = None) -> Event:
        if event is None:
            event = Event()
        event.record(self)
        return event

    def __enter__(self):
        self._ctx = StreamContext(self)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc) -> bool:
        self._ctx.__exit__(*exc)
        return False

    def __eq__(self, o) -> bool:
        return isinstance(o, Stream) and (o.cuda_stream, o.device) == (self.cuda_stream, self.device)

    def __hash__(self) -> int:
        return hash((self.cuda_stream, self.device))

    def __repr__(self) -> str:
        return f"<torch.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


def default_stream(device: Any = None) -> Stream:
    """The device's default stream (``cuda_stream == 0``), where jtorch's kernels run."""
    _lazy_init()
    i = _get_device_index(device, optional=True)
    s = _defaults.get(i)
    if s is None:
        with globals()["device"](i):
            s = _defaults[i] = Stream._wrap(*_target().default_stream(), i)
    return s


def current_stream(device: Any = None) -> Stream:
    """The stream this thread selected on the device (``stream``/``set_stream``), else its
    default stream."""
    _lazy_init()
    i = _get_device_index(device, optional=True)
    s = getattr(_tls, "streams", {}).get(i)
    return default_stream(i) if s is None else s


def set_stream(stream: Stream | None) -> None:
    """Selects ``stream`` as its device's current stream for this thread (None: a no-op)."""
    if stream is None:
        return
    if not hasattr(_tls, "streams"):
        _tls.streams = {}
    _tls.streams[stream.device_index] = stream


class StreamContext:
    """``with torch.cuda.stream(s)``: ``s`` current on its device inside the block (None: a
    no-op)."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self.idx = current_device() if is_available() else -1
        self.src_prev_stream = self.dst_prev_stream = None

    def __enter__(self):
        cur = self.stream
        if cur is None or self.idx == -1:
            return
        self.src_prev_stream = current_stream(None)
        if self.src_prev_stream.device != cur.device:
            self.dst_prev_stream = current_stream(cur.device)
        set_stream(cur)
        return

    def __exit__(self, *exc) -> bool:
        cur = self.stream
        if cur is None or self.idx == -1:
            return False
        if self.src_prev_stream.device != cur.device:
            set_stream(self.dst_prev_stream)
        set_stream(self.src_prev_stream)
        return False


def stream(stream: Stream | None) -> StreamContext:
    return StreamContext(stream)


class Event:
    """A CUDA event: a marker in a stream, created at its first ``record``; with
    ``enable_timing``, ``elapsed_time`` gives the milliseconds between two. Under the simulator
    the time is the host clock's at ``record`` (every launch before it has finished by then)."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False, external: bool = False) -> None:
        if not is_available():
            raise RuntimeError("Tried to instantiate dummy base class Event")
        self.enable_timing = enable_timing
        self.blocking = blocking
        self.interprocess = interprocess
        self.external = external
        self._ev = None
        self.device = None

    @property
    def cuda_event(self) -> int:
        return 0 if self._ev is None else self._ev.handle

    def record(self, stream: Stream | None = None) -> None:
        if stream is None:
            stream = current_stream()
        if self._ev is None:
            with globals()["device"](stream.device_index):
                self._ev = _target().Event(self.enable_timing)
            self.device = stream.device
        elif stream.device != self.device:
            raise RuntimeError(f"Event device {self.device} does not match recording stream's "
                               f"device {stream.device}.")
        self._ev.record(stream._s)

    def wait(self, stream: Stream | None = None) -> None:
        if stream is None:
            stream = current_stream()
        if self._ev is not None:
            self._ev.wait(stream._s)

    def query(self) -> bool:
        return True if self._ev is None else self._ev.query()

    def synchronize(self) -> None:
        if self._ev is not None:
            self._ev.synchronize()

    def elapsed_time(self, end_event: Event) -> float:
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        if self._ev is None or end_event._ev is None:
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        if not (self.query() and end_event.query()):
            raise RuntimeError("Both events must be completed before calculating elapsed time.")
        return self._ev.elapsed_ms(end_event._ev)

    def __repr__(self) -> str:
        if self.cuda_event:
            return f"<torch.cuda.Event {self.cuda_event:#x}>"
        return "<torch.cuda.Event uninitialized>"


# -- random ----------------------------------------------------------------------------------

def manual_seed(seed: int) -> None:
    """Seeds the current device's generator (a no-op without CUDA, as in torch)."""
    seed = int(seed)
    if is_available():
        _random.manual_seed(current_device(), seed)


def manual_seed_all(seed: int) -> None:
    seed = int(seed)
    if is_available():
        for i in range(device_count()):
            _random.manual_seed(i, seed)


def seed() -> None:
    """Seeds the current device's generator from the OS's entropy."""
    if is_available():
        _random.seed(current_device())


def seed_all() -> None:
    """Seeds every device's generator with one seed from the OS's entropy."""
    if is_available():
        s = _random.seed(current_device())
        for i in range(device_count()):
            _random.manual_seed(i, s)


def initial_seed() -> int:
    _lazy_init()
    return _random.initial_seed(current_device())


def _rng_index(device: Any) -> int:
    from ..device import device as _device

    if isinstance(device, str):
        device = _device(device)
    elif isinstance(device, int):
        device = _device("cuda", device)
    return current_device() if device.index is None else device.index


def get_rng_state(device: Any = "cuda"):
    """The device generator's state: torch's 16 bytes (seed, offset) as a uint8 tensor."""
    import numpy as np

    import jtorch

    _lazy_init()
    raw = _random.get_state(_rng_index(device))
    return jtorch.from_numpy(np.frombuffer(raw, dtype=np.uint8).copy())


def set_rng_state(new_state, device: Any = "cuda") -> None:
    """Sets the device generator's state from ``get_rng_state``'s bytes (a no-op without
    CUDA, as torch's deferred call that never runs)."""
    if not is_available():
        return
    _random.set_state(_rng_index(device), bytes(new_state.numpy().tobytes()))


def get_rng_state_all() -> list:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


# -- memory ----------------------------------------------------------------------------------

def _memory():
    from ..kernels.cuda import memory

    return memory


def memory_stats(device: Any = None) -> collections.OrderedDict:
    """The caching allocator's counters under torch's names, sorted (empty before CUDA state is
    initialised, as torch's)."""
    if not is_initialized():
        return collections.OrderedDict()
    return collections.OrderedDict(_memory().stats(_get_device_index(device, optional=True)))


def memory_allocated(device: Any = None) -> int:
    """Bytes in live device tensors (their blocks' rounded sizes)."""
    return memory_stats(device).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device: Any = None) -> int:
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def memory_reserved(device: Any = None) -> int:
    """Bytes the allocator holds from the driver: live and cached blocks."""
    return memory_stats(device).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device: Any = None) -> int:
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def reset_peak_memory_stats(device: Any = None) -> None:
    """Sets every peak counter to its current value."""
    _lazy_init()
    _memory().reset_peak(_get_device_index(device, optional=True))


def empty_cache() -> None:
    """Hands the allocator's cached blocks back to the driver (live tensors keep theirs)."""
    if is_initialized() and _memory_used():
        _memory().empty_cache()


def __getattr__(name: str):
    if name == "default_generators":  # torch's tuple, one Generator per device (empty without)
        if not is_available():
            return ()
        return tuple(_random.default_generator(i) for i in range(device_count()))
    raise AttributeError(f"module 'jtorch.cuda' has no attribute '{name}'")
