"""Creation loops: constant fill, arange, linspace, logspace. Serial or parallel by size.

arange and linspace reproduce torch's CPU values bit for bit, which means reproducing how
ATen computes them: with fused multiply-adds (its kernels are built with FMA contraction),
linspace from both ends, and arange through 256-bit vectors whose lanes are
``base + k * step`` from a base rounded to the output dtype (see ``arange_float``).
"""

from __future__ import annotations

import math

import numba
import numpy as np
from numba.core import types
from numba.extending import intrinsic

from ... import _allocator, _settings, _threads, dispatch
from ... import dtypes as _dt
from ...cuda_array import CudaArray, download
from ...tensor import Tensor
from ..jit import njit


@intrinsic
def fma(typingctx, a, b, c):
    """``a * b + c`` with one rounding (LLVM's ``llvm.fma``), for float32 or float64."""
    if not (isinstance(a, types.Float) and a == b == c):
        return None

    def codegen(context, builder, signature, args):
        ty = context.get_value_type(a)
        fn = builder.module.declare_intrinsic("llvm.fma", [ty, ty, ty])
        return builder.call(fn, args)

    return a(a, b, c), codegen


@intrinsic
def cast_like(typingctx, like, x):
    """``x`` converted to the type of ``like`` (a scalar-type parameter for generic kernels)."""

    def codegen(context, builder, signature, args):
        return context.cast(builder, args[1], signature.args[1], signature.return_type)

    return like(like, x), codegen


# -- constant fill ---------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def _fill(out, v):
    for i in range(out.size):
        out[i] = v


@njit(cache=True, nogil=True, parallel=True)
def _fill_par(out, v):
    for i in numba.prange(out.size):
        out[i] = v


def fill(a: np.ndarray, value) -> None:
    if a.dtype == np.float16 or a.dtype == _dt.bfloat16.np:  # (no Numba type)
        a[...] = value
        return
    flat = a.reshape(-1)
    v = a.dtype.type(value)
    (_fill_par if _threads.use_parallel(flat.size) else _fill)(flat, v)


# -- factory kernels (``defs/creation.py``): fresh tensors of a plan's geometry -------------

def empty_cpu(plan) -> Tensor:
    """Uninitialised memory of the plan's shape and element strides (dense layouts only);
    filled with NaN (the largest integer, True) in deterministic mode, as torch does."""
    t = alloc(plan.out)
    if _settings.fill_empty() and t._st.size:
        t._st.fill(_uninitialized(t.dtype))
    return t


def _uninitialized(d: _dt.dtype):
    if d.is_floating_point or d.is_complex:
        return np.nan
    if d is _dt.bool:
        return True
    return np.iinfo(d.np).max


def alloc(o) -> Tensor:
    """A fresh tensor of an ``Out``'s shape, dtype and element strides (dense layouts)."""
    d = o.dtype
    if o.strides is None:
        a = _allocator.empty(o.shape, d.np)
        return Tensor._make(a, None, d)
    shape, strides = o.shape, o.strides
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
    st = _allocator.empty((span,), d.np)
    a = np.lib.stride_tricks.as_strided(st, shape, tuple(s * d.itemsize for s in strides))
    t = Tensor._make(a, st, d)
    t._a = a  # the strides asked for, exactly (empty tensors' included)
    return t


def full_cpu(plan) -> Tensor:
    t = empty_cpu(plan)
    if t._st.size:
        fill(t._st, plan.kw["fill_value"])  # a dense layout covers exactly its storage
    return t


def zeros_cpu(plan) -> Tensor:
    o = plan.out
    if o.strides is None:  # calloc'd pages are already zero
        return Tensor._make(np.zeros(o.shape, o.dtype.np), None, o.dtype)
    t = empty_cpu(plan)
    if t._st.size:
        fill(t._st, 0)
    return t


# -- arange ----------------------------------------------------------------------------------
# ATen runs arange as a parallel_for over chunks; inside a chunk, pairs of W-lane vectors
# (W = 32 bytes / itemsize) get lanes ``fma(k, step, base)`` with ``base`` the value at the
# vector's first index rounded to the output dtype; the chunk's tail is ``fma(step, i, start)``.
# start/step are float64 (ATen's CPU accumulate type for float32 and float64).

@njit(cache=True, nogil=True, inline="always")
def _arange_chunk(out, start, step, width, lo, hi):
    nv = (hi - lo) // (2 * width) * (2 * width)
    for j in range(0, nv, width):
        i0 = lo + j
        out[i0] = fma(step, np.float64(i0), start)
        base = np.float64(out[i0])
        for k in range(1, width):
            out[i0 + k] = fma(np.float64(k), step, base)
    for i in range(lo + nv, hi):
        out[i] = fma(step, np.float64(i), start)


@njit(cache=True, nogil=True)
def _arange_float(out, start, step, width, chunk):
    n = out.size
    for c in range((n + chunk - 1) // chunk):
        _arange_chunk(out, start, step, width, c * chunk, min(n, (c + 1) * chunk))


@njit(cache=True, nogil=True, parallel=True)
def _arange_float_par(out, start, step, width, chunk):
    n = out.size
    for c in numba.prange((n + chunk - 1) // chunk):
        _arange_chunk(out, start, step, width, c * chunk, min(n, (c + 1) * chunk))


@njit(cache=True, nogil=True)
def _arange_int(out, start, step):
    for i in range(out.size):
        out[i] = start + step * i


@njit(cache=True, nogil=True, parallel=True)
def _arange_int_par(out, start, step):
    for i in numba.prange(out.size):
        out[i] = start + step * i


def _chunk(n: int) -> int:
    """ATen's parallel_for split: one chunk per thread, each at least GRAIN_SIZE long."""
    grain = 32768  # ATen's internal::GRAIN_SIZE (fixed: the values depend on it)
    if n <= grain:
        return max(n, 1)
    tasks = min(_threads.get_num_threads(), -(-n // grain))
    return -(-n // tasks)


def arange_float(out: np.ndarray, start: float, step: float) -> None:
    """torch's float arange values into the contiguous float32/float64 array ``out``."""
    n = out.size
    width = 32 // out.itemsize
    fn = _arange_float_par if _threads.use_parallel(n) else _arange_float
    fn(out, np.float64(start), np.float64(step), width, _chunk(n))


@njit(cache=True, nogil=True, inline="always")
def round_half(x):
    """The float16 nearest to float32 ``x`` (ties to even), as a float32 (Numba has no half)."""
    a = abs(np.float64(x))
    if not a < 65520.0:  # overflow to inf, and nan
        return np.float32(x) if math.isnan(a) else np.float32(math.copysign(math.inf, x))
    _, e = math.frexp(a)
    ulp = math.ldexp(1.0, max(e - 11, -24))
    return np.float32(math.copysign(np.rint(a / ulp) * ulp, x))


@njit(cache=True, nogil=True, inline="always")
def round_bfloat16(x):
    """The bfloat16 nearest to float32 ``x`` (ties to even), as a float32."""
    a = abs(np.float64(x))
    if not a < 3.3961775292304e38:  # 2**128 - 2**119: overflow to inf, and nan
        return np.float32(x) if math.isnan(a) else np.float32(math.copysign(math.inf, x))
    _, e = math.frexp(a)
    ulp = math.ldexp(1.0, max(e - 8, -133))
    return np.float32(math.copysign(np.rint(a / ulp) * ulp, x))


@njit(cache=True, nogil=True, inline="always")
def _round16(x, bf):
    return round_bfloat16(x) if bf else round_half(x)


@njit(cache=True, nogil=True)
def _arange_half(out, start, step, chunk, bf):
    """ATen's Half and BFloat16 arange: float32 accumulation, 16-lane vectors whose base and
    lanes are rounded to the type (``bf``: bfloat16); ``out`` is float32 holding exactly
    representable values."""
    n = out.size
    width = 16
    for c in range((n + chunk - 1) // chunk):
        lo, hi = c * chunk, min(n, (c + 1) * chunk)
        nv = (hi - lo) // (2 * width) * (2 * width)
        for j in range(0, nv, width):
            i0 = lo + j
            base = _round16(fma(step, np.float32(i0), start), bf)
            out[i0] = base
            for k in range(1, width):
                out[i0 + k] = _round16(fma(np.float32(k), step, base), bf)
        for i in range(lo + nv, hi):
            out[i] = _round16(fma(step, np.float32(i), start), bf)


def arange_half(out: np.ndarray, start: float, step: float, bfloat16: bool = False) -> None:
    """torch's float16 (bfloat16) arange values, into the float32 array ``out`` (exact values
    of the type)."""
    _arange_half(out, np.float32(start), np.float32(step), _chunk(out.size), bfloat16)


def arange_int(out: np.ndarray, start: int, step: int) -> None:
    """``start + step * i`` in wrapping int64 arithmetic into the int64 array ``out``."""
    fn = _arange_int_par if _threads.use_parallel(out.size) else _arange_int
    fn(out, np.int64(start), np.int64(step))


# -- linspace / logspace ---------------------------------------------------------------------
# linspace: step = (end - start) / (steps - 1) in the output's float type; the first half is
# fma(step, i, start), the second half fma(-step, steps - 1 - i, end) (both ends are exact).

@njit(cache=True, nogil=True, inline="always")
def _linspace_at(i, start, end, step, steps):
    if i < steps // 2:
        return fma(step, cast_like(step, i), start)
    return fma(-step, cast_like(step, steps - 1 - i), end)


@njit(cache=True, nogil=True)
def _linspace(out, start, end, step):
    n = out.size
    for i in range(n):
        out[i] = _linspace_at(i, start, end, step, n)


@njit(cache=True, nogil=True, parallel=True)
def _linspace_par(out, start, end, step):
    n = out.size
    for i in numba.prange(n):
        out[i] = _linspace_at(i, start, end, step, n)


def linspace(out: np.ndarray, start, end, step) -> None:
    """Fill the float32/float64 array ``out``; start/end/step already in its dtype."""
    fn = _linspace_par if _threads.use_parallel(out.size) else _linspace
    t = out.dtype.type
    fn(out, t(start), t(end), t(step))


@njit(cache=True, nogil=True, inline="always")
def _logspace_at(i, base, start, end, step, steps):
    if i < steps // 2:
        return base ** (start + step * i)
    return base ** (end - step * (steps - 1 - i))


@njit(cache=True, nogil=True)
def _logspace(out, base, start, end, step):
    n = out.size
    for i in range(n):
        out[i] = _logspace_at(i, base, start, end, step, n)


@njit(cache=True, nogil=True, parallel=True)
def _logspace_par(out, base, start, end, step):
    n = out.size
    for i in numba.prange(n):
        out[i] = _logspace_at(i, base, start, end, step, n)


def logspace(out: np.ndarray, base: float, start: float, end: float, step: float) -> None:
    """``base ** (start + step * i)`` in float64, from both ends, without FMA (as ATen's
    logspace loop compiles), into the float32/float64 array ``out``."""
    fn = _logspace_par if _threads.use_parallel(out.size) else _logspace
    fn(out, np.float64(base), np.float64(start), np.float64(end), np.float64(step))


# -- copies and conversions (``defs/conversion.py``) ----------------------------------------

_COPY = []


def _copy_kernel():
    """The registry's copy op (the identity pointwise op every cast and copy runs)."""
    if not _COPY:
        from ..registry import REGISTRY

        _COPY.append(REGISTRY["copy"])
    return _COPY[0]


def copy_array(dst: np.ndarray, dst_dtype, src: Tensor) -> None:
    """dst[...] = src (broadcast, cast with torch's rules) through the registry copy kernel."""
    s = src.dtype
    if dst_dtype is _dt.bool or s is _dt.bool:
        compute = dst_dtype if dst_dtype not in _dt.HALF else _dt.float32
    elif s.category == dst_dtype.category:
        compute = _dt.promote_types(s, dst_dtype)
    else:
        compute = dst_dtype
    dispatch.run_pointwise(_copy_kernel(), (src,), dst, compute, dst_dtype)


def to_copy_cpu(plan, x: Tensor) -> Tensor:
    """``x`` converted to the plan's dtype (complex to real keeps the real parts); a CUDA
    ``x`` is read back first."""
    if x._a.__class__ is CudaArray:
        x = Tensor._make(download(x._a), None, x.dtype)
    out = alloc(plan.out)
    src = x
    if x.dtype.is_complex and not out.dtype.is_complex:
        src = Tensor._make(np.ascontiguousarray(x._a.real))
    copy_array(out._a, out.dtype, src)
    return out


def clone_cpu(plan, x: Tensor) -> Tensor:
    """A copy in the plan's layout: the movement copy (NumPy's for small arrays, a blocked
    transpose or threads for large ones) where the dtype is kept, as ``contiguous`` does."""
    out = alloc(plan.out)
    if x._a.__class__ is np.ndarray and out._a.dtype == x._a.dtype:
        from .movement import copy_array as move  # (movement imports this module)

        move(out._a, x._a)
    else:
        dispatch.run_pointwise(_copy_kernel(), (x,), out._a, x.dtype)
    return out


def copy_inplace_cpu(plan, x: Tensor, src: Tensor) -> Tensor:
    """x[...] = src: cast first, and read a copy when the two share memory (a CUDA ``src`` is
    read back first)."""
    if src._a.__class__ is CudaArray:
        src = Tensor._make(download(src._a), None, src.dtype)
    if src.dtype is not x.dtype:
        c = np.empty(src._a.shape, x.dtype.np)
        s = src
        if src.dtype.is_complex and not x.dtype.is_complex:
            s = Tensor._make(np.ascontiguousarray(src._a.real))
        copy_array(c, x.dtype, s)
        src = Tensor._make(c, None, x.dtype)
    elif src._st is x._st or np.shares_memory(src._st, x._st):
        src = Tensor._make(src._a.copy(), None, src.dtype)
    dispatch.run_pointwise(_copy_kernel(), (src,), x._a, x.dtype)
    return x


def fill_inplace_cpu(plan, x: Tensor, value_t=None) -> Tensor:
    value = plan.kw["value"] if value_t is None else value_t.item()
    a = x._a
    if a.flags.c_contiguous:
        if a.size:
            fill(a, value)
    elif a.size:
        dispatch.run_pointwise(_copy_kernel(), (value,), a, x.dtype)
    return x


# -- ranges, eye, triangle indices, complex (``defs/creation.py``) ---------------------------

def arange_cpu(plan) -> Tensor:
    res = alloc(plan.out)
    n = plan.out.shape[0]
    if not n:
        return res
    start, step = plan.kw["start"], plan.kw["step"]
    d, a = res.dtype, res._a
    if d is _dt.float32 or d is _dt.float64:
        arange_float(a, float(start), float(step))
    elif d in _dt.HALF:
        tmp = np.empty(a.shape, np.float32)
        arange_half(tmp, float(start), float(step), d is _dt.bfloat16)
        copy_array(a, d, Tensor._make(tmp))
    elif d is _dt.int64:
        arange_int(a, int(start), int(step))
    else:  # narrower integers: ATen accumulates in int64, then casts (wrapping)
        tmp = np.empty(a.shape, np.int64)
        arange_int(tmp, int(start), int(step))
        copy_array(a, d, Tensor._make(tmp))
    return res


def _real(x, d):
    """Scalar.to<scalar_t>() of a real dtype: the real part, truncated for integers."""
    x = x.real if isinstance(x, complex) else x
    return int(x) if d.category < 2 else float(x)


def _fill_value(t: Tensor, value) -> None:
    if t._a.size:
        dispatch.run_pointwise(_copy_kernel(), (value,), t._a, t.dtype)


def _linspace_values(a: np.ndarray, d, start, end, n: int) -> None:
    if d.is_complex:  # real and imaginary parts as two real linspaces
        rd = d.to_real()
        s, e = complex(start), complex(end)
        _linspace_values(a.real, rd, s.real, e.real, n)
        _linspace_values(a.imag, rd, s.imag, e.imag, n)
    elif d is _dt.float32 or d is _dt.float64:
        t = d.np.type
        s, e = t(_real(start, d)), t(_real(end, d))
        if a.flags.c_contiguous:
            linspace(a, s, e, (e - s) / t(n - 1))
        else:
            tmp = np.empty(n, d.np)
            linspace(tmp, s, e, (e - s) / t(n - 1))
            a[...] = tmp
    elif d in _dt.HALF:
        _linspace_half(a, d, start, end, n)
    else:  # integers: the step in double, values truncated toward zero
        s, e = float(_real(start, d)), float(_real(end, d))
        tmp = np.empty(n, np.float64)
        linspace(tmp, s, e, (e - s) / (n - 1))
        copy_array(a, d, Tensor._make(tmp))


def _linspace_half(a: np.ndarray, d, start, end, n: int) -> None:
    """ATen's Half and BFloat16 linspace round every operation to the type: start + step *
    half(i) from the front, end - step * half(n - 1 - i) from the back (NumPy's float16 and
    ml_dtypes' bfloat16 arithmetic round each operation the same way)."""
    h = d.np.type
    s, e = h(_real(start, d)), h(_real(end, d))
    step = h(np.float32(h(e - s)) / np.float32(h(n - 1)))
    half = n // 2
    with np.errstate(over="ignore", invalid="ignore"):
        a[:half] = np.arange(half).astype(h) * step + s
        a[half:] = e - np.arange(n - 1 - half, -1, -1).astype(h) * step


def linspace_cpu(plan) -> Tensor:
    res = alloc(plan.out)
    n = plan.out.shape[0]
    start, end = plan.kw["start"], plan.kw["end"]
    d = res.dtype
    if n == 1:
        _fill_value(res, start if d.is_complex else _real(start, d))
    elif n > 1:
        _linspace_values(res._a, d, start, end, n)
    return res


def logspace_cpu(plan) -> Tensor:
    res = alloc(plan.out)
    n = plan.out.shape[0]
    kw = plan.kw
    start, end, base = kw["start"], kw["end"], float(kw["base"])
    d = res.dtype
    if n == 1:
        _fill_value(res, base ** float(_real(start, _dt.float64)))
    elif n > 1:
        s, e = _real(start, d), _real(end, d)
        if d.is_floating_point:  # scalar_t endpoints; their difference in scalar_t
            t = d.np.type
            s, e = t(s), t(e)
        diff = float(e - s)
        tmp = res._a if d is _dt.float32 or d is _dt.float64 else np.empty(n, np.float64)
        logspace(tmp, base, float(s), float(e), diff / (n - 1))
        if tmp is not res._a:
            copy_array(res._a, d, Tensor._make(tmp))
    return res


def eye_cpu(plan) -> Tensor:
    res = alloc(plan.out)
    a = res._a
    n, m = a.shape
    if a.size:
        fill(a, 0)
        k = min(n, m)
        a.reshape(-1)[:k * (m + 1):m + 1] = 1
    return res


def tri_indices_cpu(plan) -> Tensor:
    kw = plan.kw
    fn = np.triu_indices if kw["upper"] else np.tril_indices
    rows, cols = fn(kw["row"], kw["offset"], kw["col"])
    res = alloc(plan.out)
    if res._a.size:
        copy_array(res._a, res.dtype, Tensor._make(np.stack([rows, cols]).astype(np.int64)))
    return res


def complex_cpu(plan, real: Tensor, imag: Tensor) -> Tensor:
    """``real + 1j * imag`` (broadcast) into the plan's layout."""
    res = alloc(plan.out)
    if res._a.size:
        rd = real.dtype
        copy_array(res._a.real, rd, real)
        copy_array(res._a.imag, rd, imag)
    return res
