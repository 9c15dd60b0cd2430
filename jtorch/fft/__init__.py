"""torch.fft: discrete Fourier transforms with torch's names, signatures, dtypes and errors.

Each function does what torch's SpectralOps.cpp does before its transform primitive: promote
the input (integers and bool to the default float dtype, real to complex where a complex
transform needs it; float16 is torch's CPU "Unsupported dtype" error), wrap and check the dims,
zero-pad or trim each transformed dim to the requested length (``constant_pad_nd`` / ``narrow``,
so their gradients come with them), pick ATen's normalization code from ``norm`` and the
direction, then call one of the three OpDefs of ``kernels/defs/fft.py`` (``_fft_c2c``,
``_fft_r2c``, ``_fft_c2r``), which run DUCC0's transforms from compiled code and differentiate
as the adjoint transforms. ``fftfreq``/``rfftfreq`` and the shifts are jtorch ops.

>>> import jtorch
>>> jtorch.fft.rfft(jtorch.tensor([1.0, 2.0, 3.0, 4.0]))
tensor([10.+0.j, -2.+2.j, -2.+0.j])
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from .. import dispatch
from .. import dtypes as _dt
from ..amp import state as _amp
from ..kernels.defs import fft as _F
from ..tensor import Tensor

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft", "ifft2",
           "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2", "irfftn", "rfft",
           "rfft2", "rfftfreq", "rfftn"]

_NONE, _BY_ROOT_N, _BY_N = _F.NORM_NONE, _F.NORM_BY_ROOT_N, _F.NORM_BY_N


# -- torch's argument handling (SpectralOps.cpp) ------------------------------------------------

def _check_tensor(x, fn: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"fft_{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def _int_arg(value, fn: str, name: str):
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    if hasattr(value, "__index__") and not isinstance(value, (bool, float)):
        return value.__index__()
    raise TypeError(f"fft_{fn}(): argument '{name}' must be int, not {type(value).__name__}")


def _ints_arg(value, fn: str, name: str):
    """An int or a sequence of ints (torch's IntArrayRef), as a tuple; None stays None."""
    if value is None:
        return None
    if isinstance(value, Sequence) and not isinstance(value, str):
        if not all(isinstance(v, int) or (hasattr(v, "__index__") and not isinstance(v, float))
                   for v in value):
            raise TypeError(f"fft_{fn}(): argument '{name}' must be tuple of ints, not "
                            f"{type(value).__name__}")
        return tuple(v if isinstance(v, int) else v.__index__() for v in value)
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,)
    raise TypeError(f"fft_{fn}(): argument '{name}' must be tuple of ints, not "
                    f"{type(value).__name__}")


def _norm_arg(norm, fn: str):
    if norm is not None and not isinstance(norm, str):
        raise TypeError(f"fft_{fn}(): argument 'norm' must be str, not {type(norm).__name__}")
    return norm


def _wrap(dim: int, ndim: int) -> int:
    """maybe_wrap_dim(dim, ndim, wrap_scalar=False): a 0-d tensor has no dim to transform."""
    if ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if dim < -ndim or dim >= ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    return dim + ndim if dim < 0 else dim


def _promote(x: Tensor, require_complex: bool = False) -> Tensor:
    """promote_tensor_fft: integers/bool to the default float dtype, float32/float64 only (to
    complex where required)."""
    d = x.dtype
    if d.is_complex:
        return x
    target = d if d.is_floating_point else _dt.get_default_dtype()
    if target not in (_dt.float32, _dt.float64):
        raise RuntimeError(f"Unsupported dtype {target.scalar_name}")
    if require_complex:
        target = target.to_complex()
    return x if target is d else x.to(target)


def _norm_code(norm, forward: bool) -> int:
    """norm_from_string: NumPy's modes, whose meaning depends on the direction."""
    if norm is None or norm == "backward":
        return _NONE if forward else _BY_N
    if norm == "forward":
        return _BY_N if forward else _NONE
    if norm == "ortho":
        return _BY_ROOT_N
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _check_n(n: int) -> None:
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x: Tensor, dims: tuple, sizes: tuple) -> Tensor:
    """resize_fft_input: trim (a view) or zero-pad (one copy) each dim to its size."""
    pad = [0] * (2 * x.dim())
    must_pad = False
    for d, n in zip(dims, sizes):
        size = x.shape[d]
        if size < n:
            must_pad = True
            pad[len(pad) - 2 * d - 1] = n - size
        elif size > n:
            x = x.narrow(d, 0, n)
    if not must_pad:
        return x
    from ..ops.extras import constant_pad_nd

    return constant_pad_nd(x, pad)


def _write_out(res: Tensor, out, primitive: str, inputs: tuple) -> Tensor:
    """An ``out=`` result: torch's out variants refuse inputs that require grad, then resize
    ``out`` and copy (casting) into it."""
    if out is None:
        return res
    if dispatch.needs_grad(inputs):
        raise RuntimeError(f"{primitive}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    return dispatch.copy_into(out, res)


def _check_out(out, fn: str, complex_out: bool) -> None:
    if out is None:
        return
    d = out.dtype
    if complex_out and not d.is_complex:
        raise RuntimeError(f"{fn} expects a complex output tensor, but got {d.scalar_name}")
    if not complex_out and not d.is_floating_point:
        raise RuntimeError(f"{fn} expects a floating point output tensor, but got "
                           f"{d.scalar_name}")


# -- one-dimensional transforms ----------------------------------------------------------------

def _c2c_1d(fn: str, x: Tensor, n, dim: int, norm, forward: bool, out) -> Tensor:
    if not x.dtype.is_complex:
        raise RuntimeError(f"{fn} expects a complex input tensor, but got {x.dtype.scalar_name}")
    d = _wrap(dim, x.dim())
    size = x.shape[d] if n is None else n
    _check_n(size)
    if n is not None:
        x = _resize(x, (d,), (n,))
    code = _norm_code(norm, forward)
    _check_out(out, fn, True)
    return _write_out(_F.c2c(x, (d,), code, forward), out, "_fft_c2c", (x,))


def _r2c_1d(fn: str, x: Tensor, n, dim: int, norm, forward: bool, onesided: bool, out) -> Tensor:
    if x.dtype.is_complex:
        raise RuntimeError(f"{fn} expects a real input tensor, but got {x.dtype.scalar_name}")
    _check_out(out, fn, True)
    x = _promote(x)
    d = _wrap(dim, x.dim())
    size = x.shape[d] if n is None else n
    _check_n(size)
    if n is not None:
        x = _resize(x, (d,), (n,))
    code = _norm_code(norm, forward)
    res = _F.r2c(x, (d,), code, onesided, forward)
    return _write_out(res, out, "_fft_r2c" if forward else "conj_physical", (x,))


def _c2r_1d(fn: str, x: Tensor, n, dim: int, norm, forward: bool, out) -> Tensor:
    _check_out(out, fn, False)
    x = _promote(x, require_complex=True)
    d = _wrap(dim, x.dim())
    size = 2 * (x.shape[d] - 1) if n is None else n
    _check_n(size)
    if n is not None:
        x = _resize(x, (d,), (size // 2 + 1,))
    code = _norm_code(norm, forward)
    return _write_out(_F.c2r(x, (d,), code, size, forward), out, "_fft_c2r", (x,))


@_amp.fp32_op
def fft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
        out: Tensor | None = None) -> Tensor:
    """The 1-D discrete Fourier transform (real input gives the full complex spectrum).

    >>> jtorch.fft.fft(jtorch.tensor([1.0, 2.0, 0.0, 0.0]))
    tensor([ 3.+0.j,  1.-2.j, -1.+0.j,  1.+2.j])
    """
    _check_tensor(input, "fft")
    n, dim, norm = _int_arg(n, "fft", "n"), _int_arg(dim, "fft", "dim"), _norm_arg(norm, "fft")
    if input.dtype.is_complex:
        return _c2c_1d("fft", input, n, dim, norm, True, out)
    return _r2c_1d("fft", input, n, dim, norm, True, False, out)


@_amp.fp32_op
def ifft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The 1-D inverse discrete Fourier transform."""
    _check_tensor(input, "ifft")
    n, dim, norm = _int_arg(n, "ifft", "n"), _int_arg(dim, "ifft", "dim"), _norm_arg(norm, "ifft")
    if input.dtype.is_complex:
        return _c2c_1d("ifft", input, n, dim, norm, False, out)
    return _r2c_1d("ifft", input, n, dim, norm, False, False, out)


@_amp.fp32_op
def rfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The 1-D transform of real input: the n // 2 + 1 non-negative frequencies."""
    _check_tensor(input, "rfft")
    n, dim, norm = _int_arg(n, "rfft", "n"), _int_arg(dim, "rfft", "dim"), _norm_arg(norm, "rfft")
    return _r2c_1d("rfft", input, n, dim, norm, True, True, out)


@_amp.fp32_op
def irfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The inverse of rfft: n real values (default n = 2 * (input.size(dim) - 1))."""
    _check_tensor(input, "irfft")
    n, dim = _int_arg(n, "irfft", "n"), _int_arg(dim, "irfft", "dim")
    return _c2r_1d("irfft", input, n, dim, _norm_arg(norm, "irfft"), False, out)


@_amp.fp32_op
def hfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The transform of a Hermitian-symmetric signal given by its one-sided half: real output."""
    _check_tensor(input, "hfft")
    n, dim = _int_arg(n, "hfft", "n"), _int_arg(dim, "hfft", "dim")
    return _c2r_1d("hfft", input, n, dim, _norm_arg(norm, "hfft"), True, out)


@_amp.fp32_op
def ihfft(input: Tensor, n: int | None = None, dim: int = -1, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The inverse of hfft: the one-sided inverse transform of real input."""
    _check_tensor(input, "ihfft")
    n, dim = _int_arg(n, "ihfft", "n"), _int_arg(dim, "ihfft", "dim")
    return _r2c_1d("ihfft", input, n, dim, _norm_arg(norm, "ihfft"), False, True, out)


# -- n-dimensional transforms ------------------------------------------------------------------

def _shape_and_dims(x: Tensor, s, dim) -> tuple:
    """canonicalize_fft_shape_and_dim_args: (signal sizes, dims)."""
    ndim = x.dim()
    dims = None
    if dim is not None:
        dims = tuple(_wrap(d, ndim) for d in dim)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        if dim is not None and len(dim) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} "
                               "dimensions.")
        if dims is None:
            dims = tuple(range(ndim - len(s), ndim))
        shape = tuple(x.shape[d] if n == -1 else n for n, d in zip(s, dims))
    elif dims is None:
        dims, shape = tuple(range(ndim)), tuple(x.shape)
    else:
        shape = tuple(x.shape[d] for d in dims)
    for n in shape:
        if n <= 0:
            raise RuntimeError(f"Invalid number of data points ({n}) specified")
    return shape, dims


def _c2r_shape_and_dims(fn: str, x: Tensor, s, dim) -> tuple:
    """canonicalize_fft_c2r_shape_and_dim_args: (input sizes, dims, output's last size)."""
    shape, dims = _shape_and_dims(x, s, dim)
    if not shape:
        raise RuntimeError(f"{fn} must transform at least one axis")
    last = 2 * (x.shape[dims[-1]] - 1) if s is None or s[-1] == -1 else shape[-1]
    _check_n(last)
    return shape[:-1] + (last // 2 + 1,), dims, last


def _nd_args(fn: str, input, s, dim, norm) -> tuple:
    _check_tensor(input, fn)
    return _ints_arg(s, fn, "s"), _ints_arg(dim, fn, "dim"), _norm_arg(norm, fn)


def _fftn_c2c(fn: str, input, s, dim, norm, forward: bool, out) -> Tensor:
    s, dim, norm = _nd_args(fn, input, s, dim, norm)
    shape, dims = _shape_and_dims(input, s, dim)
    x = _promote(input, require_complex=True)
    x = _resize(x, dims, shape)
    code = _norm_code(norm, forward)
    _check_out(out, "fftn", True)
    return _write_out(_F.c2c(x, dims, code, forward), out, "_fft_c2c", (x,))


def _rfftn(fn: str, input, s, dim, norm, out) -> Tensor:
    s, dim, norm = _nd_args(fn, input, s, dim, norm)
    if input.dtype.is_complex:
        raise RuntimeError(f"rfftn expects a real-valued input tensor, but got "
                           f"{input.dtype.scalar_name}")
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("rfftn must transform at least one axis")
    x = _resize(_promote(input), dims, shape)
    code = _norm_code(norm, True)
    _check_out(out, "rfftn", True)
    return _write_out(_F.r2c(x, dims, code, True), out, "_fft_r2c", (x,))


def _irfftn(fn: str, input, s, dim, norm, out) -> Tensor:
    s, dim, norm = _nd_args(fn, input, s, dim, norm)
    shape, dims, last = _c2r_shape_and_dims("irfftn", input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    code = _norm_code(norm, False)
    _check_out(out, "irfftn", False)
    return _write_out(_F.c2r(x, dims, code, last), out, "_fft_c2r", (x,))


def _hfftn(fn: str, input, s, dim, norm, out) -> Tensor:
    s, dim, norm = _nd_args(fn, input, s, dim, norm)
    shape, dims, last = _c2r_shape_and_dims("hfftn", input, s, dim)
    x = _resize(_promote(input, require_complex=True), dims, shape)
    code = _norm_code(norm, True)
    _check_out(out, "hfftn", False)
    return _write_out(_F.c2r(x, dims, code, last, forward=True), out, "_fft_c2r", (x,))


def _ihfftn(fn: str, input, s, dim, norm, out) -> Tensor:
    s, dim, norm = _nd_args(fn, input, s, dim, norm)
    shape, dims = _shape_and_dims(input, s, dim)
    if not shape:
        raise RuntimeError("ihfftn must transform at least one axis")
    if input.dtype.is_complex:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: "
                           f"{input.dtype.scalar_name}")
    x = _resize(_promote(input), dims, shape)
    code = _norm_code(norm, False)
    res = _F.r2c(x, dims, code, True, forward=False)
    if len(dims) == 1:
        if out is not None and not out.dtype.is_complex:  # conj_physical_out's check
            raise RuntimeError(f"Found dtype {res.dtype.scalar_name} but expected "
                               f"{out.dtype.scalar_name}")
        return _write_out(res, out, "conj_physical", (x,))
    _check_out(out, "ihfftn", True)
    return _write_out(res, out, "_fft_c2c", (x,))


_2D = (-2, -1)


@_amp.fp32_op
def fftn(input: Tensor, s=None, dim=None, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """The n-D discrete Fourier transform over ``dim`` (all dims by default), each padded or
    trimmed to ``s``."""
    return _fftn_c2c("fftn", input, s, dim, norm, True, out)


@_amp.fp32_op
def ifftn(input: Tensor, s=None, dim=None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The n-D inverse discrete Fourier transform."""
    return _fftn_c2c("ifftn", input, s, dim, norm, False, out)


@_amp.fp32_op
def rfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The n-D transform of real input, one-sided in the last transformed dim."""
    return _rfftn("rfftn", input, s, dim, norm, out)


@_amp.fp32_op
def irfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """The inverse of rfftn."""
    return _irfftn("irfftn", input, s, dim, norm, out)


def hfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """The n-D transform of a Hermitian-symmetric signal given by its one-sided half."""
    return _hfftn("hfftn", input, s, dim, norm, out)


def ihfftn(input: Tensor, s=None, dim=None, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """The inverse of hfftn."""
    return _ihfftn("ihfftn", input, s, dim, norm, out)


@_amp.fp32_op
def fft2(input: Tensor, s=None, dim=_2D, norm: str | None = None, *,
         out: Tensor | None = None) -> Tensor:
    """fftn over the last two dims."""
    return _fftn_c2c("fft2", input, s, dim, norm, True, out)


@_amp.fp32_op
def ifft2(input: Tensor, s=None, dim=_2D, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """ifftn over the last two dims."""
    return _fftn_c2c("ifft2", input, s, dim, norm, False, out)


@_amp.fp32_op
def rfft2(input: Tensor, s=None, dim=_2D, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """rfftn over the last two dims."""
    return _rfftn("rfft2", input, s, dim, norm, out)


@_amp.fp32_op
def irfft2(input: Tensor, s=None, dim=_2D, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """irfftn over the last two dims."""
    return _irfftn("irfft2", input, s, dim, norm, out)


def hfft2(input: Tensor, s=None, dim=_2D, norm: str | None = None, *,
          out: Tensor | None = None) -> Tensor:
    """hfftn over the last two dims."""
    return _hfftn("hfft2", input, s, dim, norm, out)


def ihfft2(input: Tensor, s=None, dim=_2D, norm: str | None = None, *,
           out: Tensor | None = None) -> Tensor:
    """ihfftn over the last two dims."""
    return _ihfftn("ihfft2", input, s, dim, norm, out)


# -- helpers -----------------------------------------------------------------------------------

def _freq_dtype(dtype, out, fn: str):
    d = out.dtype if out is not None else (_dt.get_default_dtype() if dtype is None
                                           else _dt.to_dtype(dtype))
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"{fn} requires a floating point or complex dtype")
    if d.is_complex:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{d.scalar_name}'")
    return d


def _freqs(pieces: list, scale: float, d, out, device, requires_grad: bool) -> Tensor:
    from ..ops.creation import arange, require_grad
    from ..ops.views import cat

    parts = [arange(lo, hi, dtype=d, device=device) for lo, hi in pieces]
    res = parts[0] if len(parts) == 1 else cat(parts)
    res = res * scale
    if out is not None:
        return dispatch.copy_into(out, res)
    return require_grad(res, requires_grad)


def _count(n: int) -> None:
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")


def fftfreq(n: int, d: float = 1.0, *, out: Tensor | None = None, dtype=None, layout=None,
            device=None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an n-point fft: [0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1]
    / (d * n).

    >>> jtorch.fft.fftfreq(4)
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    n = _freq_n(n, "fftfreq")
    dt = _freq_dtype(dtype, out, "fftfreq")
    _count(n)
    return _freqs([(0, (n + 1) // 2), (-(n // 2), 0)], _inverse(n * float(d)), dt, out, device,
                  requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, out: Tensor | None = None, dtype=None, layout=None,
             device=None, requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an n-point rfft: [0, 1, ..., n // 2] / (d * n)."""
    n = _freq_n(n, "rfftfreq")
    dt = _freq_dtype(dtype, out, "rfftfreq")
    count = (n // 2 if n >= 0 else -(-n // 2)) + 1  # C++'s truncating division
    _count(count)
    return _freqs([(0, count)], _inverse(n * float(d)), dt, out, device, requires_grad)


def _inverse(x: float) -> float:
    """1 / x as C++ divides doubles (inf for zero)."""
    return 1.0 / x if x else math.copysign(math.inf, x)


def _freq_n(n, fn: str) -> int:
    if isinstance(n, bool) or not isinstance(n, int):
        if isinstance(n, Tensor) or not hasattr(n, "__index__"):
            raise TypeError(f"fft_{fn}(): argument 'n' (position 1) must be int, not "
                            f"{type(n).__name__}")
        n = n.__index__()
    return n


def _shift_dims(x: Tensor, dim) -> tuple:
    if dim is None:
        return tuple(range(x.dim()))
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(_wrap(d, x.dim()) for d in dim)


def _roll(x: Tensor, shifts: list, dims: tuple) -> Tensor:
    if not dims:  # roll's check (a 0-d input has no dim to shift)
        raise RuntimeError("`shifts` required")
    return x.roll(shifts, dims)


def fftshift(input: Tensor, dim=None) -> Tensor:
    """Reorder an fft's output so the zero frequency is in the middle (a roll by size // 2)."""
    dims = _shift_dims(input, dim)
    return _roll(input, [input.shape[d] // 2 for d in dims], dims)


def ifftshift(input: Tensor, dim=None) -> Tensor:
    """The inverse of fftshift (a roll by (size + 1) // 2)."""
    dims = _shift_dims(input, dim)
    return _roll(input, [(input.shape[d] + 1) // 2 for d in dims], dims)
