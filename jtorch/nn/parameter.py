"""``nn.Parameter``: a tensor that a Module registers as a trainable parameter."""

from __future__ import annotations

from ..tensor import Tensor

__all__ = ["Buffer", "Parameter", "UninitializedParameter"]


class Parameter(Tensor):
    """Shares ``data``'s storage; ``requires_grad`` defaults to True.

    >>> p = jtorch.nn.Parameter(jtorch.zeros(2))
    >>> p.requires_grad, isinstance(p, jtorch.Tensor)
    (True, True)
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True):
        if data is None:
            from ..ops.creation import empty

            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): argument 'data' must be Tensor, not "
                            f"{type(data).__name__}")
        t = cls._make(data._a, data._st, data.dtype, vc=data._vc)
        if requires_grad:
            t.requires_grad_(True)
        return t

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass

    def __repr__(self, *, tensor_contents=None) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = type(self)(self.detach().clone(), self._requires_grad)
        memo[id(self)] = out
        return out

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (Tensor.__reduce_ex__(self, proto), self._requires_grad))


def _rebuild_parameter(reduced, requires_grad: bool):
    fn, args = reduced
    return Parameter(fn(*args), requires_grad)


class UninitializedParameter(Parameter):
    """Placeholder for lazily shaped parameters (shape decided on the first forward)."""


class Buffer(Tensor):
    """``nn.Buffer(data, persistent=True)``: marks a tensor to be registered as a buffer when
    assigned to a Module attribute."""

    def __new__(cls, data: Tensor | None = None, *, persistent: bool = True):
        if data is None:
            from ..ops.creation import empty

            data = empty(0)
        t = cls._make(data._a, data._st, data.dtype, vc=data._vc)
        t.__dict__["persistent"] = persistent
        return t

    def __init__(self, data=None, *, persistent: bool = True) -> None:
        pass
