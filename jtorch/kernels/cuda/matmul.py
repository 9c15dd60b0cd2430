"""CUDA matrix products: one tiled kernel for mm, bmm, matmul's batched products and addmm.

``C[b] = alpha * A[b] @ B[b] + beta * Z[b]`` over operands read at their own element strides
(transposed weights and attention's strided heads are not copied first). Each block computes
a ``T x T`` tile of one matrix of the batch: it stages ``T x T`` tiles of A and B in shared
memory, every thread accumulates one output element in the compute dtype, in k order. The
order of every sum depends only on K and T, never on scheduling. This is the portable path:
it runs in Numba's simulator and on any device; with the ``cuda`` extra installed, cuBLAS
takes the products whose operands it can read in place (``cublas.py``).
"""

from __future__ import annotations

import math

from ..source import load
from . import cublas as _cublas
from . import target

TILE = 4 if target.SIMULATOR else 16
MAX_GRID = 2 if target.SIMULATOR else 65535  # (blocks stride over tiles and the batch)

_kernels: dict = {}

_SOURCE = """\
# tiled matrix product on CUDA, {dtype} operands computed in {compute}, {tile}x{tile} tiles
import numpy as np
from jtorch.kernels.cuda.target import cuda

_T = {tile}
_dt = np.{compute}
_do = np.{dtype}


def gemm(A, oa, sab, sam, sak, B, ob, sbb, sbk, sbn, C, oc, scb, scm, scn,
         Z, oz, szb, szm, szn, M, N, K, nb, alpha, beta, has_z):
    sA = cuda.shared.array((_T, _T), _dt)
    sB = cuda.shared.array((_T, _T), _dt)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    b = cuda.blockIdx.z
    while b < nb:
        ti = cuda.blockIdx.y
        while ti * _T < M:
            row = ti * _T + ty
            tj = cuda.blockIdx.x
            while tj * _T < N:
                col = tj * _T + tx
                acc = _dt(0)
                for t0 in range(0, K, _T):
                    k = t0 + tx
                    if row < M and k < K:
                        sA[ty, tx] = _dt(A[oa + b * sab + row * sam + k * sak])
                    else:
                        sA[ty, tx] = _dt(0)
                    k = t0 + ty
                    if k < K and col < N:
                        sB[ty, tx] = _dt(B[ob + b * sbb + k * sbk + col * sbn])
                    else:
                        sB[ty, tx] = _dt(0)
                    cuda.syncthreads()
                    for kk in range(_T):
                        acc += sA[ty, kk] * sB[kk, tx]
                    cuda.syncthreads()
                if row < M and col < N:
                    v = _dt(alpha) * acc
                    if has_z:
                        v += _dt(beta) * _dt(Z[oz + b * szb + row * szm + col * szn])
                    C[oc + b * scb + row * scm + col * scn] = _do(v)
                tj += cuda.gridDim.x
            ti += cuda.gridDim.y
        b += cuda.gridDim.z
"""


def compute_dtype(dtype: str) -> str:
    """float16 operands are multiplied and summed in float32 and the result rounded once (as
    the CPU path does); other dtypes in their own."""
    return "float32" if dtype == "float16" else dtype


def source(dtype: str, tile: int = TILE) -> str:
    return _SOURCE.format(dtype=dtype, compute=compute_dtype(dtype), tile=tile)


def kernel(dtype: str, tile: int = TILE):
    key = (dtype, tile)
    k = _kernels.get(key)
    if k is None:
        k = _kernels[key] = target.jit(load(f"jt_cuda_gemm_{dtype}", source(dtype, tile)).gemm)
    return k


def signature(dtype: str) -> str:
    """The Numba signature of ``gemm`` for ``compile_ptx`` (every operand a 1-D span)."""
    span, i = f"{dtype}[::1]", "int64"
    ops = ", ".join([f"{span}, {i}, {i}, {i}, {i}"] * 4)
    return f"void({ops}, {i}, {i}, {i}, {i}, float64, float64, boolean)"


def run(dtype: str, shape: tuple, a: tuple, b: tuple, c: tuple, z: tuple | None = None,
        alpha: float = 1.0, beta: float = 0.0, device: int = 0) -> None:
    """``c = alpha * a @ b + beta * z`` for ``shape = (nb, M, N, K)``; each operand is
    ``(span, offset, (batch, row, col) element strides)``; ``z`` None or ``beta == 0``: no
    addend (its values, nan included, are not read, as in torch). Without an addend, cuBLAS
    takes the product when it is installed and can read the operands where they lie."""
    nb, M, N, K = shape
    if not (nb and M and N):
        return
    has_z = z is not None and beta != 0
    if not has_z and _cublas.run(dtype, shape, a, b, c, alpha, 0.0, device):
        return
    if not has_z:
        z = c
    grid = (min(MAX_GRID, math.ceil(N / TILE)), min(MAX_GRID, math.ceil(M / TILE)),
            min(MAX_GRID, nb))
    args = []
    for span, off, st in (a, b, c, z):
        args += [span, off, *st]
    kernel(dtype)[grid, (TILE, TILE)](*args, M, N, K, nb, float(alpha), float(beta), has_z)
