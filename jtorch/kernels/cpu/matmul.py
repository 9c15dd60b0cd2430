"""Matrix products.

float32/float64/complex go through BLAS from inside Numba (scipy's, as ``np.dot`` in ``njit``
calls it; ``conv_blas.gemm``): one kernel call per op, the batch loop inside it, so Numba's
thread pool never alternates with BLAS's. BLAS wants each matrix C- or F-contiguous: a batch
whose matrices are transposed views is passed as its C-contiguous transpose plus a flag
(``t``), which becomes BLAS's transpose flag.
Integer dtypes use a compiled triple loop, parallel over output rows when it pays.
"""

from __future__ import annotations

import math
import warnings

import numba
import numpy as np
from numba import prange

from ... import _settings, _threads
from ..jit import njit
from .conv_blas import gemm as _gemm

# gemm_strided4 hands np.dot strided matrices on purpose (it copies each small one)
warnings.filterwarnings("ignore", message=r".*is faster on contiguous arrays",
                        category=numba.NumbaPerformanceWarning)


@njit(cache=True, nogil=True)
def gemm(a, b, out, ta, tb):
    """out[i] = op(a[i]) @ op(b[i]) for C-contiguous batches, op the transpose where ``ta``/
    ``tb`` say the matrices are stored transposed: BLAS's own flags, so that one kernel serves
    every layout (a kernel per layout calling ``np.dot`` on ``.T`` views, which BLAS reads the
    same way, compiled three for a linear layer's forward and backward: 0.6 s more, cold)."""
    M, N = out.shape[1], out.shape[2]
    K = a.shape[1] if ta else a.shape[2]
    for i in range(out.shape[0]):
        _gemm(ta, tb, M, N, K, a, i * a.shape[1] * a.shape[2], a.shape[2], b,
              i * b.shape[1] * b.shape[2], b.shape[2], 0.0, out, i * M * N, N)


@njit(cache=True, nogil=True, parallel=True)
def gemm_par(a, b, out, ta, tb):
    """``gemm`` with the batch split over Numba's threads."""
    M, N = out.shape[1], out.shape[2]
    K = a.shape[1] if ta else a.shape[2]
    for i in prange(out.shape[0]):
        _gemm(ta, tb, M, N, K, a, i * a.shape[1] * a.shape[2], a.shape[2], b,
              i * b.shape[1] * b.shape[2], b.shape[2], 0.0, out, i * M * N, N)


# batches split over Numba's threads (``gemm_par``), each product on one core (BLAS held
# serial): for many small matrices this beats BLAS's own threading of each (bmm 64x128^3:
# 2.5-3.7 -> 2.3 ms)


def _loop_body(a, b, out, r):
    m_rows = a.shape[1]
    i = r // m_rows
    m = r - i * m_rows
    for n in range(out.shape[2]):
        out[i, m, n] = 0
    for k in range(a.shape[2]):
        av = a[i, m, k]
        for n in range(out.shape[2]):
            out[i, m, n] += av * b[i, k, n]


_loop_row = njit(cache=True, nogil=True, inline="always")(_loop_body)


@njit(cache=True, nogil=True)
def gemm_loop(a, b, out):
    for r in range(out.shape[0] * out.shape[1]):
        _loop_row(a, b, out, r)


@njit(cache=True, nogil=True, parallel=True)
def gemm_loop_par(a, b, out):
    for r in prange(out.shape[0] * out.shape[1]):
        _loop_row(a, b, out, r)


def _as_blas(x: np.ndarray) -> tuple:
    """(array whose matrices are C-contiguous, transposed?) for a 3-D operand."""
    if x.flags.c_contiguous:
        return x, False
    xt = x.transpose(0, 2, 1)
    if xt.flags.c_contiguous:
        return xt, True
    return np.ascontiguousarray(x), False


_BLAS = {np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64),
         np.dtype(np.complex128)}


@njit(cache=True, nogil=True)
def outer(a, b, out):
    """out[i] = a[i] @ b[i] for an inner size of 1: each element one product, as BLAS's.
    Serial: the loop is store-bound, and a parallel region next to torch's spinning OpenMP
    workers (both libraries in one process) ran 2x slower than this."""
    for i in range(out.shape[0]):
        o = out[i]
        for r in range(o.shape[0]):
            v = a[i, r, 0]
            for c in range(o.shape[1]):
                o[r, c] = v * b[i, 0, c]


_REAL = {np.dtype(np.float32), np.dtype(np.float64)}


# Products below this many multiply-adds run on BLAS's calling thread. OpenBLAS splits from
# 2^18; its worker, asleep after 2^20 cycles without a product (_threads), costs more to wake
# than the split saves: the demo CNN's first linear layer (64 x 128 x 64) took 46 us in its
# training step against 20 on one thread (12 with the worker awake, one thread or two);
# 384 x 48 x 144 after 0.5 ms without a product 75 us on two threads, 61 on one. The minGPT
# step's products (384 x 48 x 192, 48 x 384 x 192, 384 x 144 x 48: 2.6-3.5M) took ~200 us in
# situ on two threads, 2.7x their time in a loop; on one, the step ran 3.5-6% faster
# (alternating blocks of steps in one process)
_SERIAL_GEMM = 1 << 23
# OpenBLAS runs a product of fewer multiply-adds than this on the calling thread whatever its
# thread count (interface/gemm.c gives a product MNK / 2^18 threads: 65536 times the default
# GEMM_MULTITHREAD_THRESHOLD of 4; its worker took no CPU time over 20000 64x127x64 products,
# and did from 64x128x64), so such products skip ``serial_blas``: its two thread-count calls
# cost 2.3-2.7 us, more than an 8 x 8 product's whole kernel
_BLAS_SERIAL_MNK = 1 << 19


def bmm_into(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out[i] = a[i] @ b[i] for 3-D arrays of one dtype; ``out`` is C-contiguous."""
    if out.size == 0:
        return
    if a.shape[2] == 0:
        out[...] = 0
        return
    if a.shape[2] == 1 and a.dtype in _REAL:
        # outer products (per-example weight gradients): a store-bound loop, 1.4x faster than
        # BLAS's rank-1 products over a (64, 128, 128) batch on one thread, the same bits
        outer(a, b, out)
        return
    if b.strides[0] == 0 and a.shape[0] > 1 and a.dtype in _BLAS:
        # one matrix broadcast over the batch (an expanded weight): the batch's rows are one
        # product with it, where they merge, instead of a copy of it per batch entry
        try:
            rows = a.reshape((1, a.shape[0] * a.shape[1], a.shape[2]), copy=False)
        except ValueError:
            rows = None
        if rows is not None:
            bmm_into(rows, b[:1], out.reshape((1, rows.shape[1], out.shape[2])))
            return
    work = a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]
    if a.dtype in _BLAS:
        a, ta = _as_blas(a)
        b, tb = _as_blas(b)
        # a batch split over the threads pays from ~4M multiply-adds (a launch is 10-50 us)
        if a.shape[0] > 1 and _threads.use_parallel(work >> 5) and \
                _threads.serial_blas.available():
            with _threads.serial_blas():
                gemm_par(a, b, out, ta, tb)
        elif work >= _BLAS_SERIAL_MNK * a.shape[0] and \
                (work < _SERIAL_GEMM or _settings._State.deterministic) and \
                _threads.serial_blas.available():
            # OpenBLAS's threaded products round differently from its serial ones: in
            # deterministic mode every product runs serially, whatever set_num_threads says
            with _threads.serial_blas():
                gemm(a, b, out, ta, tb)
        else:
            gemm(a, b, out, ta, tb)
        return
    (gemm_loop_par if _threads.use_parallel(work // 8) else gemm_loop)(a, b, out)


@njit(cache=True, nogil=True)
def gemm_strided4(a, b, out):
    """Products over two batch dims of operands in any strides (each matrix made contiguous
    by ``np.dot`` where BLAS cannot read it as it is, a copy of one small matrix)."""
    for i in range(a.shape[0]):
        for j in range(a.shape[1]):
            np.dot(a[i, j], b[i, j], out[i, j])


@njit(cache=True, nogil=True, parallel=True)
def gemm_strided4_par(a, b, out):
    for ij in prange(a.shape[0] * a.shape[1]):
        i = ij // a.shape[1]
        j = ij - i * a.shape[1]
        np.dot(a[i, j], b[i, j], out[i, j])


def _collapsed(x: np.ndarray):
    """``x`` (..., m, k) as a (batch, m, k) view, or None where its batch dims do not merge."""
    shape = (math.prod(x.shape[:-2]),) + x.shape[-2:]
    if x.ndim == 3:
        return x
    if x.flags.c_contiguous:
        return x.reshape(shape)
    # the batch dims merge where each one's stride is the next one's times its size (size-1
    # dims aside): then reshape is a view; else it would copy (asked first: no copy made)
    prev = None
    for n, st in zip(x.shape[:-2], x.strides[:-2]):
        if n == 1:
            continue
        if prev is not None and prev != st * n:
            return None
        prev = st
    return x.reshape(shape)


_mv = None  # matmul_views, imported at its first use (its BLAS binding costs ~20 ms)


def _views_in_place(a: np.ndarray, b: np.ndarray, out: np.ndarray, work: int) -> bool:
    """``out`` = a @ b over two batch dims with every matrix read in place by BLAS
    (``matmul_views``), where ``np.dot`` copied each one: minGPT's att @ v and its gradients
    23-30 -> 15.5 us a product. False where the matrices are not BLAS-readable in place,
    or the right ones only transposed."""
    global _mv
    if _mv is None:
        from . import matmul_views as mv

        _mv = mv
    lb = _mv.layout(b)
    la = None if lb is None or lb[3] else _mv.layout(a)
    if la is None:
        # (a transposed right operand: OpenBLAS's small products with it ran slower than
        # np.dot's copy and a plain product, q @ k^T's heads 36 -> 38 us, g @ v^T 31 -> 38)
        return False
    B0, B1, M, K = a.shape
    args = (*la, *lb, out.reshape(-1), B0, B1, M, b.shape[3], K)
    if B0 * B1 > 1 and _threads.use_parallel(work >> 5) and _threads.serial_blas.available():
        with _threads.serial_blas():
            _mv.products_par(*args)
    elif _settings._State.deterministic and _threads.serial_blas.available():
        with _threads.serial_blas():
            _mv.products(*args)
    else:
        _mv.products(*args)
    return True


def batched_into(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """out[...] = a[...] @ b[...] over equal batch dims; ``out`` C-contiguous. Batches that
    merge into one dim go to ``bmm_into``; two batch dims that do not (heads split off a
    projection, then transposed) are read in place, matrix by matrix."""
    if out.size == 0:
        return
    a3, b3 = _collapsed(a), _collapsed(b)
    o3 = out.reshape((math.prod(out.shape[:-2]),) + out.shape[-2:])
    if a3 is not None and b3 is not None:
        bmm_into(a3, b3, o3)
        return
    if a.ndim == 4 and a.dtype in _BLAS and a.shape[3]:
        # read in place, matrix by matrix (a copy of each operand costs more than the products
        # of attention's small heads); over the threads from the work bmm_into splits at
        work = o3.shape[0] * a.shape[2] * a.shape[3] * b.shape[3]
        if _views_in_place(a, b, out, work):
            return
        if o3.shape[0] > 1 and _threads.use_parallel(work >> 5) and \
                _threads.serial_blas.available():
            with _threads.serial_blas():
                gemm_strided4_par(a, b, out)
        elif _settings._State.deterministic and _threads.serial_blas.available():
            with _threads.serial_blas():
                gemm_strided4(a, b, out)
        else:
            gemm_strided4(a, b, out)
        return
    bmm_into(np.ascontiguousarray(a).reshape(o3.shape[:1] + a.shape[-2:]) if a3 is None else a3,
             np.ascontiguousarray(b).reshape(o3.shape[:1] + b.shape[-2:]) if b3 is None else b3, o3)


# -- addmm's epilogue: out = beta * c + alpha * out on the product already in ``out`` ----------

EPILOGUE_PAR_SIZE = 1 << 23  # elements (see addmm_into)

def _scale_add_body(out, c, beta, alpha, use_c, use_out, i):
    """Row i; ``use_c``/``use_out`` false drop a term whatever its values (nan too), as BLAS
    does for a zero beta/alpha."""
    o = out[i]
    zero = out.dtype.type(0)
    for j in range(o.shape[0]):
        v = alpha * o[j] if use_out else zero
        o[j] = beta * c[i, j] + v if use_c else v


def _add_row_body(out, row, i):
    o = out[i]
    for j in range(o.shape[0]):
        o[j] += row[j]


_scale_add_row = njit(cache=True, nogil=True, inline="always")(_scale_add_body)
_add_row = njit(cache=True, nogil=True, inline="always")(_add_row_body)


@njit(cache=True, nogil=True)
def scale_add(out, c, beta, alpha, use_c, use_out):
    for i in range(out.shape[0]):
        _scale_add_row(out, c, beta, alpha, use_c, use_out, i)


@njit(cache=True, nogil=True, parallel=True)
def scale_add_par(out, c, beta, alpha, use_c, use_out):
    for i in prange(out.shape[0]):
        _scale_add_row(out, c, beta, alpha, use_c, use_out, i)


@njit(cache=True, nogil=True)
def add_row(out, row):
    for i in range(out.shape[0]):
        _add_row(out, row, i)


@njit(cache=True, nogil=True, parallel=True)
def add_row_par(out, row):
    for i in prange(out.shape[0]):
        _add_row(out, row, i)


def addmm_into(c: np.ndarray, a: np.ndarray, b: np.ndarray, out: np.ndarray, beta, alpha) -> None:
    """out (M, N) = beta * c + alpha * (a @ b) for a (M, K), b (K, N) and c broadcastable to
    (M, N): the product by ``bmm_into``, then one pass adding c (a plain bias row when
    beta == alpha == 1, ``linear``'s case)."""
    if alpha != 0:
        bmm_into(a[None], b[None], out[None])
    if out.size == 0:
        return
    # the pass follows BLAS's threaded product, whose workers spin on the other cores for
    # ~0.4 ms after it (OPENBLAS_THREAD_TIMEOUT): a parallel pass waits for them (the bias of a
    # (700, 1000) decoder: 26 us alone, 470 us right after its product; serially 60 us), so
    # it runs serially unless it is long enough to pay that wait
    par = out.size >= EPILOGUE_PAR_SIZE and _threads.use_parallel(out.size)
    if beta == 1 and alpha == 1 and c.shape == out.shape[1:] and c.flags.c_contiguous:
        (add_row_par if par else add_row)(out, c)
        return
    t = out.dtype.type
    (scale_add_par if par else scale_add)(out, np.broadcast_to(c, out.shape), t(beta), t(alpha),
                                          beta != 0, alpha != 0)


@njit(cache=True, nogil=True)
def svd_batched(a, u, s, vh):
    """Thin SVD of each matrix of a C-contiguous (B, M, N) batch (LAPACK through Numba)."""
    for i in range(a.shape[0]):
        uu, ss, vv = np.linalg.svd(a[i], full_matrices=False)
        u[i] = uu
        s[i] = ss
        vh[i] = vv
