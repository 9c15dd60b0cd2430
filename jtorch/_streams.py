"""torch.Stream and torch.Event for the devices jtorch has: CPU kernels run in program order,
so a CPU stream is a name for that order (queries are true, synchronising returns at once) and
a CPU event cannot be recorded, as torch's CPU backend answers; CUDA raises torch's error for a
build without it."""

from __future__ import annotations

from .device import device as _device

_NO_EVENTS = "cpu backend doesn't support events."


def _device_of(device) -> _device:
    d = _device("cpu") if device is None else device if isinstance(device, _device) \
        else _device(device)
    if d.type == "cuda":
        raise RuntimeError("PyTorch is not linked with support for cuda devices")
    return d


class Stream:
    """Stream(device, *, priority) -> Stream: an in-order queue of work on ``device``."""

    def __init__(self, device=None, *, priority: int = 0) -> None:
        d = _device_of(device)
        self.device_type, self.device_index, self.stream_id = d.type, -1, 0
        self.priority = priority

    @property
    def device(self) -> _device:
        return _device(self.device_type)

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        """Every op has finished when its call returns."""

    def wait_event(self, event) -> None:
        """Nothing is queued behind the event."""

    def wait_stream(self, stream) -> None:
        raise RuntimeError(_NO_EVENTS)

    def record_event(self, event=None):
        raise RuntimeError(_NO_EVENTS)

    def is_capturing(self) -> bool:
        return False

    @property
    def native_handle(self):
        raise RuntimeError("Backend doesn't support getting stream native handle.")

    def __eq__(self, other) -> bool:
        return isinstance(other, Stream) and (self.device_type, self.device_index,
                                              self.stream_id) == (other.device_type,
                                                                  other.device_index,
                                                                  other.stream_id)

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_index, self.stream_id))

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        return None

    def __repr__(self) -> str:
        return (f"torch.Stream device_type={self.device_type}, device_index={self.device_index}, "
                f"stream_id={self.stream_id}")


class Event:
    """Event(device=None, *, enable_timing=False, blocking=False, interprocess=False)."""

    def __init__(self, device=None, *, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        d = _device_of(device)
        self.device_type, self.device_index, self.event_id = d.type, -1, 0
        self.enable_timing = enable_timing

    @property
    def device(self) -> _device:
        return _device(self.device_type)

    def record(self, stream=None) -> None:
        raise RuntimeError(_NO_EVENTS)

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        """Nothing was recorded: nothing to wait for."""

    def wait(self, stream=None) -> None:
        """Nothing was recorded: nothing to wait for."""

    def elapsed_time(self, end_event) -> float:
        if not (self.enable_timing and getattr(end_event, "enable_timing", False)):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        raise RuntimeError(_NO_EVENTS)

    def __repr__(self) -> str:
        return (f"torch.Event device_type={self.device_type}, device_index={self.device_index}, "
                f"event_flag=0, event_id={self.event_id}")
