"""Dtypes and torch's type-promotion rules; layouts and memory formats.

A ``dtype`` wraps a NumPy dtype (the storage format) with torch's name and category.
Promotion follows torch: operands are split into dimensioned tensors, zero-dim tensors and
Python scalars; a lower-priority group only changes the result when it is of a higher
category (bool < integer < floating < complex).
"""

from __future__ import annotations

import builtins
import threading

import ml_dtypes
import numpy as np

__all__ = [
    "bfloat16", "bool", "can_cast", "cdouble", "cfloat", "chalf", "channels_last", "channels_last_3d",
    "complex64", "complex128", "contiguous_format", "double", "dtype", "finfo", "float", "float16",
    "float32", "float64", "get_default_dtype", "half", "iinfo", "int", "int8", "int16", "int32",
    "int64", "layout", "long", "memory_format", "preserve_format", "promote_types", "result_type",
    "set_default_dtype", "short", "sparse_coo", "strided", "uint8",
]

_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type; compare with ``is``/``==`` against ``jtorch.float32`` etc."""

    __slots__ = (
        "_legacy",
        "_short",
        "category",
        "cpp_name",
        "is_complex",
        "is_floating_point",
        "is_signed",
        "itemsize",
        "name",
        "np",
        "scalar_name",
    )

    def __init__(self, name: str, np_dtype, category: int, short: str, legacy: str,
                 scalar_name: str, cpp_name: str):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.category = category
        self.is_floating_point = category == _FLOAT
        self.is_complex = category == _COMPLEX
        self.is_signed = name not in ("bool", "uint8")
        self._short = short
        self._legacy = legacy
        # torch's names of the type in its error messages: the ScalarType ("Float", "Long")
        # and the C++ element type ("float", "long int")
        self.scalar_name = scalar_name
        self.cpp_name = cpp_name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    @property
    def abbr(self) -> str:
        """torch's short name ("f32", "i64", "b8") used in printed graphs."""
        return self._short

    def __reduce__(self):
        return (_by_name, (self.name,))

    def to_real(self) -> dtype:
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self) -> dtype:
        return {float32: complex64, float64: complex128, float16: complex64,
                bfloat16: complex64}.get(self, self)


def _by_name(name: str) -> dtype:
    return _NAMES[name]


bool = dtype("bool", np.bool_, _BOOL, "b8", "BoolTensor", "Bool", "bool")
uint8 = dtype("uint8", np.uint8, _INT, "u8", "ByteTensor", "Byte", "unsigned char")
int8 = dtype("int8", np.int8, _INT, "i8", "CharTensor", "Char", "signed char")
int16 = dtype("int16", np.int16, _INT, "i16", "ShortTensor", "Short", "short int")
int32 = dtype("int32", np.int32, _INT, "i32", "IntTensor", "Int", "int")
int64 = dtype("int64", np.int64, _INT, "i64", "LongTensor", "Long", "long int")
float16 = dtype("float16", np.float16, _FLOAT, "f16", "HalfTensor", "Half", "c10::Half")
# bfloat16 is ml_dtypes' NumPy dtype: arrays hold its bits and ``astype`` rounds to nearest even
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT, "bf16", "BFloat16Tensor", "BFloat16",
                 "c10::BFloat16")
float32 = dtype("float32", np.float32, _FLOAT, "f32", "FloatTensor", "Float", "float")
float64 = dtype("float64", np.float64, _FLOAT, "f64", "DoubleTensor", "Double", "double")
complex64 = dtype("complex64", np.complex64, _COMPLEX, "c64", "ComplexFloatTensor", "ComplexFloat",
                  "c10::complex<float>")
complex128 = dtype("complex128", np.complex128, _COMPLEX, "c128", "ComplexDoubleTensor",
                   "ComplexDouble", "c10::complex<double>")

half, float, double = float16, float32, float64
short, int, long = int16, int32, int64
cfloat, cdouble, chalf = complex64, complex128, complex64

ALL = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64,
       complex128)
# the 16-bit floats: Numba has no CPU type for them, so kernels compute in float32 and round once
HALF = (float16, bfloat16)
_NAMES = {d.name: d for d in ALL}
_FROM_NP = {d.np: d for d in ALL}
_ORDER = {d: i for i, d in enumerate(ALL)}


def from_numpy_dtype(np_dtype) -> dtype:
    try:
        return _FROM_NP[np.dtype(np_dtype)]
    except KeyError:
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).name}. The only supported "
            "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
            "int8, uint8, and bool."
        ) from None


def to_dtype(d) -> dtype:
    """Accept a jtorch dtype, a NumPy dtype, or a Python type."""
    if isinstance(d, dtype):
        return d
    if d is builtins.float:
        return get_default_dtype()
    if d is builtins.int:
        return int64
    if d is builtins.bool:
        return bool
    if d is builtins.complex:
        return get_default_dtype().to_complex()
    return from_numpy_dtype(d)


# -- promotion -------------------------------------------------------------------------------

def _promote_table() -> dict:
    """torch's promote_types lattice, built from a few rules rather than a literal table."""
    table = {}
    for a in ALL:
        for b in ALL:
            table[a, b] = _promote_pair(a, b)
    return table


def _promote_pair(a: dtype, b: dtype) -> dtype:
    if a is b:
        return a
    if a.category != b.category:
        hi, lo = (a, b) if a.category > b.category else (b, a)
        if hi.category == _COMPLEX and lo.category == _FLOAT and lo is float64:
            return complex128
        if hi.category == _FLOAT or hi.category == _COMPLEX:
            return hi
        return hi  # bool with an integer
    if a.category == _FLOAT and a in HALF and b in HALF:
        return float32  # neither 16-bit float holds the other
    if a.category == _INT:
        if uint8 in (a, b):
            other = b if a is uint8 else a
            # uint8 with a signed type needs a wider signed type.
            return int16 if other is int8 else other
        return a if a.itemsize > b.itemsize else b
    return a if a.itemsize > b.itemsize else b


_PROMOTE = _promote_table()


def promote_types(type1: dtype, type2: dtype) -> dtype:
    """Smallest dtype to which both can be cast (torch.promote_types)."""
    return _PROMOTE[type1, type2]


class _DefaultDtype(threading.local):
    value = float32


_default = _DefaultDtype()


def get_default_dtype() -> dtype:
    return _default.value


def set_default_dtype(d: dtype) -> None:
    d = to_dtype(d)
    if d not in (float32, float64, float16, bfloat16):
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default.value = d


def scalar_dtype(value) -> dtype:
    """The dtype torch gives a Python scalar when it is wrapped into a tensor."""
    t = type(value)
    if t is builtins.bool or isinstance(value, np.bool_):
        return bool
    if t is builtins.int or isinstance(value, np.integer):
        return int64
    if t is builtins.float or isinstance(value, np.floating):
        return get_default_dtype()
    if t is builtins.complex or isinstance(value, np.complexfloating):
        return get_default_dtype().to_complex()
    if isinstance(value, builtins.int):  # an int subclass (a traced symbolic size)
        return int64
    raise TypeError(f"expected a number, got {t.__name__}")


def _promote_all(dtypes) -> dtype | None:
    res = None
    for d in dtypes:
        res = d if res is None else _PROMOTE[res, d]
    return res


def _combine_categories(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """c10's combine_categories: a lower tier only matters if it is of a higher category."""
    if higher is None:
        return lower
    if lower is None or higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return _PROMOTE[higher, lower]
    return higher


def result_dtype(dim_dtypes, zero_dim_dtypes, scalar_dtypes) -> dtype:
    """torch's three-tier promotion: dimensioned > zero-dim > Python scalar."""
    lower = _combine_categories(_promote_all(zero_dim_dtypes), _promote_all(scalar_dtypes))
    return _combine_categories(_promote_all(dim_dtypes), lower)


def result_type(tensor1, tensor2) -> dtype:
    """torch.result_type for a pair of tensors or scalars."""
    dims, zeros, scalars = [], [], []
    for x in (tensor1, tensor2):
        classify_operand(x, dims, zeros, scalars)
    return result_dtype(dims, zeros, scalars)


def classify_operand(x, dims: list, zeros: list, scalars: list) -> None:
    d = getattr(x, "dtype", None)
    if isinstance(d, dtype):
        (dims if x.ndim else zeros).append(d)
    else:
        scalars.append(scalar_dtype(x))


def can_cast(from_: dtype, to: dtype) -> builtins.bool:
    """torch.can_cast: no casting to a lower category."""
    return from_.category <= to.category


def np_finfo(d: dtype):
    """NumPy's machine limits of a real float dtype (ml_dtypes' for bfloat16, which NumPy's
    ``finfo`` does not know)."""
    return (ml_dtypes.finfo if d is bfloat16 else np.finfo)(d.np)


class finfo:
    """Machine limits of a floating dtype (of the real part for complex), as torch.finfo."""

    def __init__(self, type: dtype | None = None):
        type = get_default_dtype() if type is None else to_dtype(type)
        if not (type.is_floating_point or type.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use torch.iinfo to "
                            "handle 'torch.finfo'")
        info = np_finfo(type.to_real())
        self.dtype = type.to_real().name
        self.bits = info.bits
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.tiny)
        self.resolution = 10.0 ** -info.precision  # torch: a power of ten, not rounded to the dtype

    def __eq__(self, other) -> builtins.bool:
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self) -> builtins.int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype, as torch.iinfo."""

    def __init__(self, type: dtype):
        type = to_dtype(type)
        if type is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if type.category != _INT:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo to "
                            "handle 'torch.iinfo'")
        info = np.iinfo(type.np)
        self.dtype = type.name
        self.bits = info.bits
        self.max = builtins.int(info.max)
        self.min = builtins.int(info.min)

    def __eq__(self, other) -> builtins.bool:
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self) -> builtins.int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={builtins.float(self.min):g}, max={builtins.float(self.max):g}, dtype={self.dtype})"


# -- layouts and memory formats --------------------------------------------------------------
# The other two tensor attributes torch pairs with dtype. Every jtorch tensor is ``strided``;
# a memory format names the stride order a factory or copy should produce.

class _NamedConstant:
    """A singleton printed as ``torch.<name>`` and pickled as a reference to this module's
    global of that name."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __reduce__(self):
        return self.name


class layout(_NamedConstant):
    """How a tensor's elements are stored (torch.layout); jtorch tensors are ``strided``."""

    __slots__ = ()


class memory_format(_NamedConstant):
    """A requested stride order (torch.memory_format): ``contiguous_format`` (row-major),
    ``channels_last`` (NHWC for rank 4), ``channels_last_3d`` (NDHWC for rank 5) or
    ``preserve_format`` (keep a dense input's strides)."""

    __slots__ = ()


strided = layout("strided")
sparse_coo = layout("sparse_coo")
contiguous_format = memory_format("contiguous_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
preserve_format = memory_format("preserve_format")

# channels-last formats: (rank they need, dim order from outermost to innermost stride)
_CHANNELS_LAST = {channels_last: (4, (0, 2, 3, 1)), channels_last_3d: (5, (0, 2, 3, 4, 1))}


def check_memory_format(fmt, fn: str) -> memory_format | None:
    """``fmt`` if it is None or a memory_format, else torch's TypeError for ``fn``."""
    if fmt is None or isinstance(fmt, memory_format):
        return fmt
    raise TypeError(f"{fn}(): argument 'memory_format' must be torch.memory_format, not "
                    f"{type(fmt).__name__}")


def format_strides(shape: tuple, fmt: memory_format | None) -> tuple | None:
    """Element strides of a dense tensor of ``shape`` in a channels-last format (None for the
    row-major ones); torch's error when the rank does not fit the format."""
    if fmt not in _CHANNELS_LAST:
        return None
    rank, order = _CHANNELS_LAST[fmt]
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt.name} format")
    strides, step = [0] * rank, 1
    for d in reversed(order):
        strides[d] = step
        step *= max(shape[d], 1)
    return tuple(strides)
