"""The legacy typed constructors (``torch.FloatTensor(2, 3)``, ``torch.LongTensor([1, 2])``)
and ``set_default_tensor_type``: each name is a class whose instances are the CPU tensors of
its dtype (``isinstance(x, torch.FloatTensor)``), built from sizes, data or a tensor of that
dtype."""

from __future__ import annotations

import warnings

from . import dtypes as _dt
from .tensor import Tensor


class _TensorType(type):
    """The metaclass: ``isinstance`` asks the tensor's dtype and device."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, Tensor) and obj.dtype is cls.dtype and obj.device.type == "cpu" \
            and not obj.is_sparse

    def __call__(cls, *args, **kwargs):
        from .ops import creation

        d = cls.dtype
        if len(args) == 1 and isinstance(args[0], Tensor):
            if args[0].dtype is not d:
                raise TypeError(f"expected {d} (got {args[0].dtype})")
            return args[0]
        if len(args) == 1 and not isinstance(args[0], int):
            return creation.tensor(args[0], dtype=d)
        if "size" in kwargs:
            args = tuple(kwargs.pop("size"))
        if not args:
            return creation.empty(0, dtype=d)
        return creation.empty(*args, dtype=d)

    def __repr__(cls) -> str:
        return f"<class 'torch.{cls.__name__}'>"


def _make(name: str, dtype) -> type:
    return _TensorType(name, (), {"dtype": dtype, "__module__": "torch"})


FloatTensor = _make("FloatTensor", _dt.float32)
DoubleTensor = _make("DoubleTensor", _dt.float64)
HalfTensor = _make("HalfTensor", _dt.float16)
BFloat16Tensor = _make("BFloat16Tensor", _dt.bfloat16)
ByteTensor = _make("ByteTensor", _dt.uint8)
CharTensor = _make("CharTensor", _dt.int8)
ShortTensor = _make("ShortTensor", _dt.int16)
IntTensor = _make("IntTensor", _dt.int32)
LongTensor = _make("LongTensor", _dt.int64)
BoolTensor = _make("BoolTensor", _dt.bool)
ComplexFloatTensor = _make("ComplexFloatTensor", _dt.complex64)
ComplexDoubleTensor = _make("ComplexDoubleTensor", _dt.complex128)

_BY_NAME = {c.__name__: c for c in (FloatTensor, DoubleTensor, HalfTensor, BFloat16Tensor, ByteTensor,
                                     CharTensor, ShortTensor, IntTensor, LongTensor, BoolTensor,
                                     ComplexFloatTensor, ComplexDoubleTensor)}


class _SparseTensorType(_TensorType):
    """``torch.sparse.FloatTensor`` and its kin: sparse COO CPU tensors, built from
    ``(indices, values[, size])`` (the values keep their own dtype, as in torch's legacy
    constructor) or from sizes (no elements stored)."""

    def __instancecheck__(cls, obj) -> bool:
        return getattr(obj, "is_sparse", False) and obj.dtype is cls.dtype and \
            obj.device.type == "cpu"

    def __call__(cls, *args, **kwargs):
        from .ops import creation
        from .sparse import sparse_coo_tensor

        if len(args) in (2, 3) and all(isinstance(a, Tensor) for a in args[:2]):
            size = tuple(args[2]) if len(args) == 3 else None
            return sparse_coo_tensor(args[0], args[1], size)
        if not all(isinstance(a, int) for a in args) or set(kwargs) - {"device"}:
            raise TypeError(
                "new() received an invalid combination of arguments - expected one of: (), "
                "(Tensor indices, Tensor values), (Tensor indices, Tensor values, tuple of ints "
                "size), (tuple of ints size)")
        sizes = args or (0,)
        return sparse_coo_tensor(creation.zeros((len(sizes), 0), dtype=_dt.int64),
                                 creation.zeros(0, dtype=cls.dtype), sizes)

    def __repr__(cls) -> str:
        return f"<class 'torch.sparse.{cls.__name__}'>"


def _make_sparse(name: str, dtype) -> type:
    return _SparseTensorType(name, (), {"dtype": dtype, "__module__": "torch.sparse"})


SPARSE = {c.__name__: c for c in (
    _make_sparse(n, c.dtype) for n, c in _BY_NAME.items() if n not in ("BoolTensor",)
    and not n.startswith("Complex"))}


def set_default_tensor_type(t) -> None:
    """Deprecated in torch for ``set_default_dtype``: sets the default dtype to t's."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    if isinstance(t, str):
        cls = _BY_NAME.get(t.rsplit(".", 1)[-1])
        if cls is None or not t.startswith("torch."):
            raise TypeError(f"invalid type: '{t}'")
        t = cls
    _dt.set_default_dtype(t.dtype)


__all__ = ["BFloat16Tensor", "BoolTensor", "ByteTensor", "CharTensor", "ComplexDoubleTensor", "ComplexFloatTensor",
           "DoubleTensor", "FloatTensor", "HalfTensor", "IntTensor", "LongTensor", "ShortTensor",
           "set_default_tensor_type"]
