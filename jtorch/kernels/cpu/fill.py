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

from ... import _allocator, _threads
from ...tensor import Tensor


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

@numba.njit(cache=True, nogil=True)
def _fill(out, v):
    for i in range(out.size):
        out[i] = v


@numba.njit(cache=True, nogil=True, parallel=True)
def _fill_par(out, v):
    for i in numba.prange(out.size):
        out[i] = v


def fill(a: np.ndarray, value) -> None:
    if a.dtype == np.float16:
        a[...] = value
        return
    flat = a.reshape(-1)
    v = a.dtype.type(value)
    (_fill_par if _threads.use_parallel(flat.size) else _fill)(flat, v)


# -- factory kernels (``defs/creation.py``): fresh tensors of a plan's geometry -------------

def empty_cpu(plan) -> Tensor:
    """Uninitialised memory of the plan's shape and element strides (dense layouts only)."""
    o = plan.out
    d = o.dtype
    if o.strides is None:
        a = _allocator.empty(o.shape, d.np)
        return Tensor._make(a, None, d)
    shape, strides = o.shape, o.strides
    span = 1 + sum((n - 1) * s for n, s in zip(shape, strides)) if all(shape) else 0
    st = _allocator.empty((span,), d.np)
    a = np.lib.stride_tricks.as_strided(st, shape, tuple(s * d.itemsize for s in strides))
    return Tensor._make(a, st, d)


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

@numba.njit(cache=True, nogil=True, inline="always")
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


@numba.njit(cache=True, nogil=True)
def _arange_float(out, start, step, width, chunk):
    n = out.size
    for c in range((n + chunk - 1) // chunk):
        _arange_chunk(out, start, step, width, c * chunk, min(n, (c + 1) * chunk))


@numba.njit(cache=True, nogil=True, parallel=True)
def _arange_float_par(out, start, step, width, chunk):
    n = out.size
    for c in numba.prange((n + chunk - 1) // chunk):
        _arange_chunk(out, start, step, width, c * chunk, min(n, (c + 1) * chunk))


@numba.njit(cache=True, nogil=True)
def _arange_int(out, start, step):
    for i in range(out.size):
        out[i] = start + step * i


@numba.njit(cache=True, nogil=True, parallel=True)
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


@numba.njit(cache=True, nogil=True, inline="always")
def round_half(x):
    """The float16 nearest to float32 ``x`` (ties to even), as a float32 (Numba has no half)."""
    a = abs(np.float64(x))
    if not a < 65520.0:  # overflow to inf, and nan
        return np.float32(x) if math.isnan(a) else np.float32(math.copysign(math.inf, x))
    _, e = math.frexp(a)
    ulp = math.ldexp(1.0, max(e - 11, -24))
    return np.float32(math.copysign(np.rint(a / ulp) * ulp, x))


@numba.njit(cache=True, nogil=True)
def _arange_half(out, start, step, chunk):
    """ATen's Half arange: float32 accumulation, 16-lane vectors whose base and lanes are
    rounded to half; ``out`` is float32 holding exactly representable half values."""
    n = out.size
    width = 16
    for c in range((n + chunk - 1) // chunk):
        lo, hi = c * chunk, min(n, (c + 1) * chunk)
        nv = (hi - lo) // (2 * width) * (2 * width)
        for j in range(0, nv, width):
            i0 = lo + j
            base = round_half(fma(step, np.float32(i0), start))
            out[i0] = base
            for k in range(1, width):
                out[i0 + k] = round_half(fma(np.float32(k), step, base))
        for i in range(lo + nv, hi):
            out[i] = round_half(fma(step, np.float32(i), start))


def arange_half(out: np.ndarray, start: float, step: float) -> None:
    """torch's float16 arange values, into the float32 array ``out`` (exact half values)."""
    _arange_half(out, np.float32(start), np.float32(step), _chunk(out.size))


def arange_int(out: np.ndarray, start: int, step: int) -> None:
    """``start + step * i`` in wrapping int64 arithmetic into the int64 array ``out``."""
    fn = _arange_int_par if _threads.use_parallel(out.size) else _arange_int
    fn(out, np.int64(start), np.int64(step))


# -- linspace / logspace ---------------------------------------------------------------------
# linspace: step = (end - start) / (steps - 1) in the output's float type; the first half is
# fma(step, i, start), the second half fma(-step, steps - 1 - i, end) (both ends are exact).

@numba.njit(cache=True, nogil=True, inline="always")
def _linspace_at(i, start, end, step, steps):
    if i < steps // 2:
        return fma(step, cast_like(step, i), start)
    return fma(-step, cast_like(step, steps - 1 - i), end)


@numba.njit(cache=True, nogil=True)
def _linspace(out, start, end, step):
    n = out.size
    for i in range(n):
        out[i] = _linspace_at(i, start, end, step, n)


@numba.njit(cache=True, nogil=True, parallel=True)
def _linspace_par(out, start, end, step):
    n = out.size
    for i in numba.prange(n):
        out[i] = _linspace_at(i, start, end, step, n)


def linspace(out: np.ndarray, start, end, step) -> None:
    """Fill the float32/float64 array ``out``; start/end/step already in its dtype."""
    fn = _linspace_par if _threads.use_parallel(out.size) else _linspace
    t = out.dtype.type
    fn(out, t(start), t(end), t(step))


@numba.njit(cache=True, nogil=True, inline="always")
def _logspace_at(i, base, start, end, step, steps):
    if i < steps // 2:
        return base ** (start + step * i)
    return base ** (end - step * (steps - 1 - i))


@numba.njit(cache=True, nogil=True)
def _logspace(out, base, start, end, step):
    n = out.size
    for i in range(n):
        out[i] = _logspace_at(i, base, start, end, step, n)


@numba.njit(cache=True, nogil=True, parallel=True)
def _logspace_par(out, base, start, end, step):
    n = out.size
    for i in numba.prange(n):
        out[i] = _logspace_at(i, base, start, end, step, n)


def logspace(out: np.ndarray, base: float, start: float, end: float, step: float) -> None:
    """``base ** (start + step * i)`` in float64, from both ends, without FMA (as ATen's
    logspace loop compiles), into the float32/float64 array ``out``."""
    fn = _logspace_par if _threads.use_parallel(out.size) else _logspace
    fn(out, np.float64(base), np.float64(start), np.float64(end), np.float64(step))
