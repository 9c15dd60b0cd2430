"""torch.nn.parallel's scatter / scatter_kwargs / gather: torch's recursion over tuples,
namedtuples, lists and dicts, with the tensor steps (chunking onto devices, concatenating
from them) as a CPU-only torch has them: the structure of non-tensor arguments is split
and merged as in torch, a tensor raises torch's no-accelerator errors."""

from __future__ import annotations

from typing import Any

from ...tensor import Tensor
from ._devices import NO_ACCELERATOR, device_index, refuse_cpu

__all__ = ["gather", "scatter", "scatter_kwargs"]


def _is_namedtuple(obj: Any) -> bool:
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def _scatter_tensor(target_gpus, dim: int, tensor: Tensor):
    for d in target_gpus:
        device_index(d)
    raise RuntimeError(NO_ACCELERATOR)


def scatter(inputs, target_gpus, dim: int = 0):
    """Split ``inputs`` into one piece per device in ``target_gpus``: tensors in chunks along
    ``dim`` (which needs an accelerator), any other object repeated; tuples, lists and
    dicts are split per element.

    >>> jtorch.nn.parallel.scatter((1, "a"), [0, 1])
    [(1, 'a'), (1, 'a')]
    """

    def scatter_map(obj):
        if isinstance(obj, Tensor):
            return _scatter_tensor(target_gpus, dim, obj)
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]

    return scatter_map(inputs)


def scatter_kwargs(inputs: tuple, kwargs: dict | None, target_gpus, dim: int = 0) -> tuple:
    """``scatter`` of the positional and keyword arguments, padded to the same count."""
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(inputs):
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs, target_device, dim: int = 0):
    """Merge one output per device into one: tensors concatenated along ``dim`` on
    ``target_device`` (which needs an accelerator), dicts by key, sequences by element;
    None stays None."""

    def gather_map(outputs):
        out = outputs[0]
        if isinstance(out, Tensor):
            refuse_cpu("Gather", outputs)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outputs, strict=True)))
        return type(out)(map(gather_map, zip(*outputs, strict=True)))

    return gather_map(outputs)
