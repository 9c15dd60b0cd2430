"""Tensor printing, re-implementing ``torch/_tensor_str.py`` on NumPy arrays.

``format_tensor`` produces the same text as ``repr(tensor)`` in torch 2.13 for a strided,
dense, CPU tensor holding the same values.  The algorithm follows torch step by step (value
formatter, summarisation, line wrapping, suffix placement), including its quirks, so the
output matches character for character.

All floating values are formatted as Python floats (float64), which is what torch does via
``Tensor.item()`` / ``Tensor.tolist()``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from typing import Any

import numpy as np

__all__ = [
    "PRINT_OPTS", "set_printoptions", "get_printoptions", "printoptions", "format_tensor",
    "tensor_str",
]

inf = math.inf


@dataclasses.dataclass
class _PrinterOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = _PrinterOptions()


def set_printoptions(
    precision=None,
    threshold=None,
    edgeitems=None,
    linewidth=None,
    profile=None,
    sci_mode=None,
):
    """Set options for printing (same semantics as ``torch.set_printoptions``).

    ``profile`` is one of ``"default"``, ``"short"``, ``"full"`` and is applied first; the
    other arguments override it.  ``sci_mode`` is always reset to the given value (``None``
    means automatic choice).
    """
    if profile is not None:
        if profile == "default":
            PRINT_OPTS.precision = 4
            PRINT_OPTS.threshold = 1000
            PRINT_OPTS.edgeitems = 3
            PRINT_OPTS.linewidth = 80
        elif profile == "short":
            PRINT_OPTS.precision = 2
            PRINT_OPTS.threshold = 1000
            PRINT_OPTS.edgeitems = 2
            PRINT_OPTS.linewidth = 80
        elif profile == "full":
            PRINT_OPTS.precision = 4
            PRINT_OPTS.threshold = inf
            PRINT_OPTS.edgeitems = 3
            PRINT_OPTS.linewidth = 80

    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    """The current print options, as keyword arguments for ``set_printoptions``."""
    return dataclasses.asdict(PRINT_OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    """Context manager that temporarily changes the print options."""
    old_kwargs = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old_kwargs)


# --------------------------------------------------------------------------- dtype helpers

_ALIASES = {
    "float": "float32", "double": "float64", "half": "float16", "cfloat": "complex64",
    "cdouble": "complex128", "chalf": "complex32", "long": "int64", "int": "int32",
    "short": "int16",
}

_FLOATING = {"float16", "float32", "float64", "bfloat16"}
_COMPLEX = {"complex32", "complex64", "complex128"}


def _canon(name: str) -> str:
    name = str(name)
    if name.startswith("torch."):
        name = name[len("torch."):]
    return _ALIASES.get(name, name)


def _kind(name: str, arr: np.ndarray) -> str:
    """'f' (floating), 'c' (complex), 'b' (bool) or 'i' (integer)."""
    if name in _FLOATING or name.startswith("float"):
        return "f"
    if name in _COMPLEX or name.startswith("complex"):
        return "c"
    if name == "bool":
        return "b"
    if name.startswith(("int", "uint")):
        return "i"
    k = arr.dtype.kind
    return {"f": "f", "c": "c", "b": "b"}.get(k, "i")


def _as_values(arr: np.ndarray, kind: str) -> np.ndarray:
    """Convert to the array type whose ``tolist()`` gives torch's Python scalars."""
    if kind == "f":
        return arr.astype(np.float64, copy=False)
    if kind == "c":
        return arr.astype(np.complex128, copy=False)
    if kind == "b":
        return arr.astype(np.bool_, copy=False)
    if arr.dtype.kind in "iu":
        return arr
    return arr.astype(np.int64)


# --------------------------------------------------------------------------- formatter

class _Formatter:
    """Port of ``torch._tensor_str._Formatter``; ``values`` is a float64/int/bool array."""

    def __init__(self, values: np.ndarray, floating: bool):
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1

        flat = values.reshape(-1)

        if not self.floating_dtype:
            # the width of a value only depends on the value: format each distinct one once
            for value in np.unique(flat).tolist():
                self.max_width = max(self.max_width, len(f"{value}"))
            return

        nonzero_finite_vals = flat[np.isfinite(flat) & (flat != 0)]
        if nonzero_finite_vals.size == 0:
            # no valid number, do nothing
            return

        nonzero_finite_abs = np.abs(nonzero_finite_vals)
        nonzero_finite_min = float(nonzero_finite_abs.min())
        nonzero_finite_max = float(nonzero_finite_abs.max())

        if np.any(nonzero_finite_vals != np.ceil(nonzero_finite_vals)):
            self.int_mode = False

        self.sci_mode = (
            nonzero_finite_max / nonzero_finite_min > 1000.0
            or nonzero_finite_max > 1.0e8
            or nonzero_finite_min < 1.0e-4
            if PRINT_OPTS.sci_mode is None
            else PRINT_OPTS.sci_mode
        )

        distinct = np.unique(nonzero_finite_vals).tolist()
        if self.sci_mode:
            fmt = f"{{:.{PRINT_OPTS.precision}e}}"
            for value in distinct:
                self.max_width = max(self.max_width, len(fmt.format(value)))
        elif self.int_mode:
            # in int_mode for floats, all numbers are integers, and we append a decimal to
            # nonfinites to indicate that the tensor is of floating type. add 1 to the len
            # to account for this.
            for value in distinct:
                self.max_width = max(self.max_width, len(f"{value:.0f}") + 1)
        else:
            fmt = f"{{:.{PRINT_OPTS.precision}f}}"
            for value in distinct:
                self.max_width = max(self.max_width, len(fmt.format(value)))

    def width(self) -> int:
        return self.max_width

    def format(self, value) -> str:
        if self.floating_dtype:
            if self.sci_mode:
                ret = f"{{:{self.max_width}.{PRINT_OPTS.precision}e}}".format(value)
            elif self.int_mode:
                ret = f"{value:.0f}"
                if not (math.isinf(value) or math.isnan(value)):
                    ret += "."
            else:
                ret = f"{{:.{PRINT_OPTS.precision}f}}".format(value)
        else:
            ret = f"{value}"
        return (self.max_width - len(ret)) * " " + ret


# --------------------------------------------------------------------------- layout

def _val_str(val, formatter1, formatter2=None) -> str:
    if formatter2 is not None:
        real_str = formatter1.format(val.real)
        imag_str = (formatter2.format(val.imag) + "j").lstrip()
        # handles negative numbers, +0.0, -0.0
        if imag_str[0] == "+" or imag_str[0] == "-":
            return real_str + imag_str
        return real_str + "+" + imag_str
    return formatter1.format(val)


def _scalar_str(values: np.ndarray, formatter1, formatter2=None) -> str:
    return _val_str(values.item(), formatter1, formatter2)


def _vector_str(values, indent, summarize, formatter1, formatter2=None) -> str:
    # length includes spaces and comma between elements
    element_length = formatter1.width() + 2
    if formatter2 is not None:
        # width for imag_formatter + an extra j for complex
        element_length += formatter2.width() + 1

    elements_per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))

    def fmt(items):
        return [_val_str(v, formatter1, formatter2) for v in items.tolist()]

    edge = PRINT_OPTS.edgeitems
    if summarize and not edge:
        data = ["..."]
    elif summarize and values.shape[0] > 2 * edge:
        data = fmt(values[:edge]) + [" ..."] + fmt(values[-edge:])
    else:
        data = fmt(values)

    data_lines = [data[i:i + elements_per_line] for i in range(0, len(data), elements_per_line)]
    lines = [", ".join(line) for line in data_lines]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _tensor_str_with_formatter(values, indent, summarize, formatter1, formatter2=None) -> str:
    dim = values.ndim

    if dim == 0:
        return _scalar_str(values, formatter1, formatter2)

    if dim == 1:
        return _vector_str(values, indent, summarize, formatter1, formatter2)

    edge = PRINT_OPTS.edgeitems
    n = values.shape[0]
    if summarize and n > 2 * edge:
        slices = (
            [_tensor_str_with_formatter(values[i], indent + 1, summarize, formatter1, formatter2)
             for i in range(edge)]
            + ["..."]
            + [_tensor_str_with_formatter(values[i], indent + 1, summarize, formatter1, formatter2)
               for i in range(n - edge, n)]
        )
    else:
        slices = [
            _tensor_str_with_formatter(values[i], indent + 1, summarize, formatter1, formatter2)
            for i in range(n)
        ]

    tensor_str = ("," + "\n" * (dim - 1) + " " * (indent + 1)).join(slices)
    return "[" + tensor_str + "]"


def _get_summarized_data(values: np.ndarray) -> np.ndarray:
    dim = values.ndim
    edge = PRINT_OPTS.edgeitems
    if dim == 0:
        return values
    if dim == 1:
        if values.shape[0] > 2 * edge:
            return np.concatenate((values[:edge], values[-edge:]))
        return values
    if not edge:
        return values[tuple(slice(0, 0) for _ in range(dim))]
    n = values.shape[0]
    if n > 2 * edge:
        start = [values[i] for i in range(edge)]
        end = [values[i] for i in range(n - edge, n)]
        return np.stack([_get_summarized_data(x) for x in (start + end)])
    return np.stack([_get_summarized_data(x) for x in values])


def _tensor_str(values: np.ndarray, kind: str, indent: int) -> str:
    if values.size == 0:
        return "[]"

    summarize = values.size > PRINT_OPTS.threshold

    if kind == "c":
        src = _get_summarized_data(values) if summarize else values
        real_formatter = _Formatter(np.ascontiguousarray(src.real), True)
        imag_formatter = _Formatter(np.ascontiguousarray(src.imag), True)
        return _tensor_str_with_formatter(values, indent, summarize, real_formatter,
                                          imag_formatter)
    formatter = _Formatter(_get_summarized_data(values) if summarize else values, kind == "f")
    return _tensor_str_with_formatter(values, indent, summarize, formatter)


def _add_suffixes(tensor_str, suffixes, indent, force_newline) -> str:
    tensor_strs = [tensor_str]
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        suffix_len = len(suffix)
        if force_newline or last_line_len + suffix_len + 2 > PRINT_OPTS.linewidth:
            tensor_strs.append(",\n" + " " * indent + suffix)
            last_line_len = indent + suffix_len
            force_newline = False
        else:
            tensor_strs.append(", " + suffix)
            last_line_len += suffix_len + 2
    tensor_strs.append(")")
    return "".join(tensor_strs)


# --------------------------------------------------------------------------- entry points

def format_meta(shape: tuple, dtype_name: str, default_dtype_name: str = "float32",
                suffixes: list[str] | None = None, prefix: str = "tensor(") -> str:
    """``repr`` of a meta tensor as torch prints one: ``...`` for the values it does not have,
    then ``device='meta'``, ``size=``, the dtype unless it is the default floating dtype
    (int64 too: torch names every other dtype), and ``suffixes``, wrapped at the line width
    as every tensor's suffixes are.

    >>> print(format_meta((4,), "float64", suffixes=["grad_fn=<MulBackward0>"]))
    tensor(..., device='meta', size=(4,), dtype=torch.float64,
           grad_fn=<MulBackward0>)
    """
    out = ["device='meta'", "size=" + str(tuple(int(s) for s in shape))]
    name = _canon(dtype_name)
    if name != _canon(default_dtype_name):
        out.append("dtype=torch." + name)
    return _add_suffixes(prefix + "...", out + [str(s) for s in suffixes or ()], len(prefix),
                         force_newline=False)


def tensor_str(arr: np.ndarray, dtype_name: str, indent: int = 7) -> str:
    """Only the bracketed value text (torch's ``_tensor_str``), without prefix or suffixes."""
    arr = np.asarray(arr)
    name = _canon(dtype_name)
    kind = _kind(name, arr)
    return _tensor_str(_as_values(arr, kind), kind, indent)


def format_tensor(arr: np.ndarray, dtype_name: str, default_dtype_name: str = "float32",
                  suffixes: list[str] | None = None, prefix: str = "tensor(") -> str:
    """``repr`` of a dense CPU tensor with values ``arr`` and torch dtype ``dtype_name``.

    ``default_dtype_name`` is the current default floating dtype; ``suffixes`` (such as
    ``"requires_grad=True"`` or ``"grad_fn=<AddBackward0>"``) are appended after the ones
    torch adds itself (``size=``, ``dtype=``), using torch's line-wrapping rule.
    """
    arr = np.asarray(arr)
    name = _canon(dtype_name)
    default = _canon(default_dtype_name)
    kind = _kind(name, arr)
    indent = len(prefix)
    out_suffixes: list[str] = []

    default_complex = "complex128" if default == "float64" else "complex64"
    has_default_dtype = name in (default, default_complex, "int64", "bool")

    shape = tuple(int(s) for s in arr.shape)
    if arr.size == 0:
        # Explicitly print the shape if it is not (0,), to match NumPy behavior
        if arr.ndim != 1:
            out_suffixes.append("size=" + str(shape))
        # In an empty tensor there are no elements to infer the dtype from.
        if name != default:
            out_suffixes.append("dtype=torch." + name)
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            out_suffixes.append("size=" + str(shape))
        if not has_default_dtype:
            out_suffixes.append("dtype=torch." + name)
        body = _tensor_str(_as_values(arr, kind), kind, indent)

    if suffixes:
        out_suffixes.extend(str(s) for s in suffixes)

    return _add_suffixes(prefix + body, out_suffixes, indent, force_newline=False)
