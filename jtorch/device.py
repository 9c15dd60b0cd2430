"""Devices. CPU tensors hold NumPy arrays, meta tensors only their geometry (``meta.py``),
CUDA tensors Numba device arrays (``cuda_array.py``), where a device or Numba's simulator
answers.

A device is also a context manager, as in torch: ``with torch.device("meta"):`` makes it the
default device of factory functions inside the block (how a model is built without memory).
"""

from __future__ import annotations


class device:
    __slots__ = ("type", "index")

    def __init__(self, type, index: int | None = None):
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({type!r})")
        if ":" in type:
            type, idx = type.split(":", 1)
            index = int(idx)
        if type not in ("cpu", "cuda", "meta"):
            raise RuntimeError(
                f"Expected one of cpu, cuda, meta device type at start of device string: {type}"
            )
        self.type, self.index = type, index

    def __eq__(self, other) -> bool:
        """Devices equal devices only: ``torch.device("meta") == "meta"`` is False in torch."""
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __repr__(self) -> str:
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{idx})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __enter__(self) -> device:
        _default.stack.append(_default.device)
        _default.device = to_device(self)
        return self

    def __exit__(self, *exc) -> None:
        _default.device = _default.stack.pop()


CPU = device("cpu")
META = device("meta")


class _Default:
    """The default device of factory functions (``set_default_device``, ``with device``)."""

    device = CPU
    stack: list = []


_default = _Default()


def to_device(d) -> device:
    """A ``device=`` argument as a device this build has (None: the default device)."""
    if d is None:
        return _default.device
    if d.__class__ is not device:
        d = device(d) if isinstance(d, str) else device("cuda", d) if isinstance(d, int) else \
            device(d)
    t = d.type
    if t == "cpu":
        return CPU
    if t == "meta":
        return META
    return cuda_device(d.index)


_CUDA: dict = {}


def cuda_device(index: int | None = None) -> device:
    """The one ``device("cuda", i)`` of CUDA device ``i`` (None: the current one), with torch's
    errors where there is no such device."""
    if index is not None:
        dev = _CUDA.get(index)
        if dev is not None:
            return dev
    from . import cuda

    if not cuda.is_available():
        raise AssertionError("Torch not compiled with CUDA enabled")
    i = cuda.current_device() if index is None else index
    if not 0 <= i < cuda.device_count():
        raise RuntimeError("CUDA error: invalid device ordinal")
    dev = _CUDA.get(i)
    if dev is None:
        dev = _CUDA[i] = device("cuda", i)
    return dev


def set_default_device(d) -> None:
    """torch.set_default_device: the device factory functions use when given none."""
    _default.device = CPU if d is None else to_device(d)


def get_default_device() -> device:
    return _default.device


def get_device_module(device=None):
    """The module of a device type (``jtorch.cpu``, ``jtorch.cuda``, ...); no device: the
    current accelerator's, or ``jtorch.cpu`` where there is none (here)."""
    import importlib

    cls = globals()["device"]  # (the argument shadows the class)
    if isinstance(device, cls):
        name = device.type
    elif isinstance(device, str):
        name = cls(device).type
    elif device is None:
        name = "cpu"
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or "
                           f"None")
    try:
        return importlib.import_module(f"jtorch.{name}")
    except ImportError:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered as "
                           f"'torch.{name}'.") from None
