"""CPU kernels of the FFT OpDefs (``kernels/defs/fft.py``): DUCC0's transforms called from
compiled code through rocket-fft's low-level interface.

rocket-fft registers DUCC0 (the C++ library behind ``scipy.fft``, pocketfft's successor) for
Numba: ``rocket_fft.c2c(ain, aout, axes, forward, fct, nthreads)`` and its ``r2c`` / ``c2r`` /
``c2c_sym`` siblings transform strided arrays of any rank over ``axes`` in one call (the batch
dims are looped inside DUCC0), scale by ``fct`` and write into ``aout``, whose layout the meta
rule chose (torch's). Each entry allocates the result, picks the factor and the thread count,
and calls one ``@njit(cache=True)`` wrapper; Numba specialises the wrappers per dtype, rank and
layout, cached on disk. DUCC0 runs its own threads, over the batch or the other axes of a
transform: ``nthreads`` > 1 where there are some and enough work to pay for waking them; one
long 1-D complex transform is split into batched passes (the four-step decomposition, below)
so that it too runs on them.

rocket-fft is an optional dependency (the ``jtorch[fft]`` extra): this module is imported at
the first FFT call (``defs/_lazy.py``), which raises an ImportError naming the extra if it is
missing.
"""

from __future__ import annotations

import math

import numpy as np

from ... import _allocator, _flags
from ..._threads import _State, get_num_threads
from ...tensor import Tensor
from ..jit import njit
from .fill import alloc

try:
    import rocket_fft
except ImportError as e:  # pragma: no cover - exercised only without the extra
    raise ImportError("jtorch.fft computes its transforms with rocket-fft, which is not installed: "
                      "pip install 'jtorch[fft]' (or pip install rocket-fft)") from e


@njit(cache=True)
def _c2c(a, out, axes, forward, fct, nthreads):
    rocket_fft.c2c(a, out, axes, forward, fct, nthreads)


@njit(cache=True)
def _r2c(a, out, axes, forward, fct, nthreads):
    rocket_fft.r2c(a, out, axes, forward, fct, nthreads)


@njit(cache=True)
def _r2c_full(a, out, axes, forward, fct, nthreads):
    rocket_fft.c2c_sym(a, out, axes, forward, fct, nthreads)


@njit(cache=True)
def _c2r(a, out, axes, forward, fct, nthreads):
    rocket_fft.c2r(a, out, axes, forward, fct, nthreads)


def _factor(normalization: int, n: int) -> float:
    """ATen's normalization codes: 0 none, 1 by 1/sqrt(n), 2 by 1/n."""
    if normalization == 0:
        return 1.0
    return 1.0 / math.sqrt(n) if normalization == 1 else 1.0 / n


def _threads(out: np.ndarray, longest: int) -> int:
    """DUCC0's thread count: one for a single 1-D transform (it does not split one) and for
    small work; else jtorch's intra-op count."""
    if out.size < _flags.GRAIN_SIZE or out.size <= longest or _State.serial:
        return 1
    return get_num_threads()


def _run(fn, plan, x: Tensor, n: int, longest: int) -> Tensor:
    kw = plan.kw
    res = alloc(plan.out)
    out = res._a
    if out.size:
        fct = _factor(kw["normalization"], n)
        dims = kw["dim"]
        if dims:
            fn(x._a, out, np.array(dims, np.int64), kw["forward"], fct, _threads(out, longest))
        else:  # no dims: a copy (ATen's clone)
            np.copyto(out, x._a)
    return res


def c2c_cpu(plan, x: Tensor) -> Tensor:
    sizes = [x._a.shape[d] for d in plan.kw["dim"]]
    n = math.prod(sizes)
    if len(sizes) == 1 and n >= _FOUR_STEP_MIN and x._a.size == n:
        res = _four_step(plan, x, n)
        if res is not None:
            return res
    return _run(_c2c, plan, x, n, max(sizes, default=1))


# -- one long 1-D complex transform on several threads: the four-step decomposition -----------
# DUCC0 runs a single 1-D transform on one thread. For a long one, n = n1 * n2: the n2 columns
# of x viewed as (n1, n2) are transformed (length n1: a batch DUCC0 spreads over its threads),
# multiplied in place by the twiddle factors w^(k1 * j), w = exp(-+2 pi i / n), then its n1
# rows are transformed (length n2) straight into the result viewed as the transpose of
# (n2, n1): X[k1 + n1 * k2] = sum_j w^(k1 j) (sum_i x[n2 i + j] w1^(k1 i)) w2^(j k2) (Bailey's
# algorithm). 2^20 complex64 points on 2 cores: 12.8 ms -> 8 ms.

_FOUR_STEP_MIN = 1 << 18  # below this a single-threaded transform is as fast
_AX0, _AX1 = np.zeros(1, np.int64), np.ones(1, np.int64)
_TABLE_BYTES = 64 << 20  # twiddle tables kept, and the largest transform taking this path
_tables: dict = {}  # (n1, n2, dtype) -> the forward twiddle factors


def _split(n: int) -> tuple | None:
    """n = n1 * n2 with n1 the largest divisor <= sqrt(n) / 8: short strided columns for the
    first pass, rows of a few ten thousand bytes for the second (2^20 points on 2 cores: n1 =
    128 took 9.2 ms, n1 = 1024 12.1 ms). None where n has no divisor in [16, sqrt(n) / 8]."""
    n1 = math.isqrt(n) // 8
    while n1 >= 16 and n % n1:
        n1 -= 1
    return (n1, n // n1) if n1 >= 16 else None


def _twiddles(n1: int, n2: int, dtype) -> np.ndarray:
    """The forward factors w^(i j) as an (n1, n2) table, computed in float64 once per size
    (the last few kept: at most _TABLE_BYTES)."""
    key = (n1, n2, dtype)
    t = _tables.get(key)
    if t is None:
        k = np.arange(n1, dtype=np.int64)[:, None] * np.arange(n2, dtype=np.int64) % (n1 * n2)
        t = np.exp(k * (-2j * math.pi / (n1 * n2))).astype(dtype)
        while _tables and sum(v.nbytes for v in _tables.values()) + t.nbytes > _TABLE_BYTES:
            _tables.pop(next(iter(_tables)))
        _tables[key] = t
    return t


@njit(cache=True)
def _twiddle(b, tw, forward):
    """b *= tw (its conjugate for the inverse transform). Serial (it vectorises; one pass over
    memory): a parallel region here can leave Numba's OpenMP workers spinning (where its pool
    was started without jtorch's passive wait policy) while DUCC0's threads run the second
    pass, which then ran several times slower."""
    n1, n2 = b.shape
    for i in range(n1):
        if forward:
            for j in range(n2):
                b[i, j] *= tw[i, j]
        else:
            for j in range(n2):
                b[i, j] *= tw[i, j].conjugate()


def _four_step(plan, x: Tensor, n: int):
    """The four-step transform where threads are there to use; None where it does not apply."""
    split = _split(n)
    if split is None or _State.serial or n * x._a.itemsize > _TABLE_BYTES \
            or get_num_threads() < 2:
        return None
    kw = plan.kw
    res = alloc(plan.out)
    out = res._a.reshape(-1)  # the transformed dim is the result's innermost: a view
    a = x._a.reshape(-1)  # the other dims have size 1: a view
    n1, n2 = split
    step = a.strides[0]
    cols = np.lib.stride_tricks.as_strided(a, (n1, n2), (n2 * step, step))
    nthreads = get_num_threads()
    forward = kw["forward"]
    b = _allocator.empty((n1, n2), a.dtype)
    _c2c(cols, b, _AX0, forward, 1.0, nthreads)
    _twiddle(b, _twiddles(n1, n2, a.dtype), forward)
    _c2c(b, out.reshape(n2, n1).T, _AX1, forward, _factor(kw["normalization"], n), nthreads)
    return res


def r2c_cpu(plan, x: Tensor) -> Tensor:
    sizes = [x._a.shape[d] for d in plan.kw["dim"]]
    fn = _r2c if plan.kw["onesided"] else _r2c_full
    return _run(fn, plan, x, math.prod(sizes), max(sizes))


def c2r_cpu(plan, x: Tensor) -> Tensor:
    shape = plan.out.shape
    sizes = [shape[d] for d in plan.kw["dim"]]
    return _run(_c2r, plan, x, math.prod(sizes), max(sizes))
