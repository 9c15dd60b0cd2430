"""``nn.Parameter``: a tensor that a Module registers as a trainable parameter."""

from __future__ import annotations

from .. import dtypes as _dt
from ..tensor import Tensor

__all__ = ["Buffer", "Parameter", "UninitializedBuffer", "UninitializedParameter"]


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


class UninitializedTensorMixin:
    """A parameter or buffer whose shape is not known yet (lazy modules): it holds an empty
    tensor of the final device and dtype, refuses shape queries, and ``materialize`` turns it
    into its ``cls_to_become`` in place (modules and optimizers keep the same object)."""

    __slots__ = ()
    cls_to_become: type

    def materialize(self, shape, device=None, dtype=None) -> None:
        from ..ops.creation import empty

        device = self.data.device if device is None else device
        dtype = self.data.dtype if dtype is None else dtype
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
            "initialized one. Call `forward` to initialize the parameters before accessing their "
            "attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call "
                           "`forward` to initialize the parameters before calling "
                           "`module.share_memory()`.")

    def to(self, *args, **kwargs):
        """Same laziness at the new device or dtype (``Module.to`` before the first forward)."""
        moved = Tensor.to(self.data, *args, **kwargs)
        return self._like(moved.device, moved.dtype)

    def _cast(self, dtype):
        return self._like(self.data.device, dtype)

    def half(self):
        return self._cast(_dt.float16)

    def bfloat16(self):
        return self._cast(_dt.bfloat16)

    def float(self):
        return self._cast(_dt.float32)

    def double(self):
        return self._cast(_dt.float64)

    def cpu(self):
        return self._like("cpu", self.data.dtype)

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param) -> bool:
    """Whether ``param`` is an UninitializedParameter or UninitializedBuffer."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter of a lazy module whose shape the first forward decides.

    >>> p = jtorch.nn.UninitializedParameter()
    >>> p.materialize((2, 3)); type(p).__name__, tuple(p.shape)
    ('Parameter', (2, 3))
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        from ..ops.creation import empty

        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad: bool = True, device=None, dtype=None) -> None:
        pass

    def _like(self, device, dtype):
        return type(self)(self.requires_grad, device, dtype)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = memo[id(self)] = self._like(self.data.device, self.data.dtype)
        return out


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


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer of a lazy module whose shape the first forward decides (becomes a Tensor)."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None, persistent: bool = True):
        from ..ops.creation import empty

        data = empty(0, device=device, dtype=dtype)
        t = cls._make(data._a, data._st, data.dtype, vc=data._vc)
        if requires_grad:
            t.requires_grad_(True)
        t.__dict__["persistent"] = persistent
        return t

    def __init__(self, requires_grad: bool = False, device=None, dtype=None,
                 persistent: bool = True) -> None:
        pass

    def _like(self, device, dtype):
        return type(self)(self.requires_grad, device, dtype, self.persistent)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        out = memo[id(self)] = self._like(self.data.device, self.data.dtype)
        return out
