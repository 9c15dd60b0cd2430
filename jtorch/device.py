"""Devices. CPU tensors hold NumPy arrays; CUDA support comes with the CUDA backend."""

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
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __repr__(self) -> str:
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{idx})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"


CPU = device("cpu")


def to_device(d) -> device:
    if d is None:
        return CPU
    d = d if isinstance(d, device) else device(d) if isinstance(d, str) else device("cuda", d)
    if d.type != "cpu":
        raise RuntimeError(f"jtorch has no {d.type} backend in this build; only 'cpu' tensors exist")
    return d
