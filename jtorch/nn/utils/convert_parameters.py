"""Flatten parameters into one vector and copy a vector back into them."""

from __future__ import annotations

from ...ops.views import cat
from ...tensor import Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def _typename(obj) -> str:
    """torch.typename: the tensor type for tensors, else module.qualname (builtins bare)."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = obj if hasattr(obj, "__qualname__") else type(obj)
    module = getattr(cls, "__module__", "") or ""
    return cls.__qualname__ if module in ("", "builtins") else f"{module}.{cls.__qualname__}"


def _check_device(param: Tensor, device):
    if device is None:
        return param.device
    if param.device != device:
        raise TypeError("Found two parameters on different devices, this is currently not "
                        "supported.")
    return device


def parameters_to_vector(parameters) -> Tensor:
    """One 1-D tensor holding every parameter, flattened, in order (differentiable)."""
    device, vec = None, []
    for param in parameters:
        device = _check_device(param, device)
        vec.append(param.view(-1))
    return cat(vec)


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Make each parameter's data the next ``numel()`` elements of ``vec`` (a view of it)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    device, pointer = None, 0
    for param in parameters:
        device = _check_device(param, device)
        n = param.numel()
        param.data = vec[pointer:pointer + n].view_as(param).data
        pointer += n
