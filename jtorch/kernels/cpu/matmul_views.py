"""Products over two batch dims whose matrices BLAS reads where they are.

Attention splits its heads off a projection and transposes them: q, k and v are (B, H, T, D)
views whose batch dims do not merge, and each (T, D) matrix has a row stride of the
projection's width. ``np.dot`` inside ``njit`` copies every such matrix before calling BLAS
(an allocation and a copy per head: 192 of them per product in a minGPT step); BLAS itself
takes a row stride (its leading dimension) and a transpose flag, so ``products`` passes each
matrix's offset, flag and stride to ``conv_blas.gemm`` instead.

``layout`` says how a 4-D operand's matrices are stored: row-major with a row stride, or
column-major (a transposed view) with a column stride; anything else (a zero or non-unit inner
stride) is None, and the caller keeps the copying path.
"""

from __future__ import annotations

import numpy as np
from numba import prange

from ..jit import njit
from .conv_blas import gemm


def layout(x: np.ndarray) -> tuple | None:
    """(``x``, batch strides (s0, s1), transposed?, leading dim) of a 4-D ``x``'s (r, c)
    matrices for BLAS, in elements, or None where BLAS cannot read them in place. (``x``
    itself goes to the kernel, which reads from its first element: a span over its memory
    cost more Python than the products.)"""
    isz = x.itemsize
    b0, b1, br, bc = x.strides
    if min(b0, b1, br, bc) < 0 or (b0 | b1 | br | bc) % isz:
        return None
    s0, s1, sr, sc = b0 // isz, b1 // isz, br // isz, bc // isz
    r, c = x.shape[2], x.shape[3]
    if sc == 1 or c == 1:  # rows of c contiguous elements, sr apart
        ld = sr if r > 1 else c
        if ld >= c:
            return x, s0, s1, False, ld
    if sr == 1 or r == 1:  # columns of r contiguous elements, sc apart (x^T row-major)
        ld = sc if c > 1 else r
        if ld >= r:
            return x, s0, s1, True, ld
    return None


@njit(cache=True, nogil=True, inline="always")
def _one(a, sa0, sa1, ta, lda, b, sb0, sb1, tb, ldb, out, i, j, B1, M, N, K):
    gemm(ta, tb, M, N, K, a, i * sa0 + j * sa1, lda, b, i * sb0 + j * sb1, ldb, 0.0, out,
         (i * B1 + j) * M * N, N)


@njit(cache=True, nogil=True)
def products(a, sa0, sa1, ta, lda, b, sb0, sb1, tb, ldb, out, B0, B1, M, N, K):
    """out[i, j] = A[i, j] @ B[i, j] for the flat C-contiguous (B0, B1, M, N) ``out``."""
    for i in range(B0):
        for j in range(B1):
            _one(a, sa0, sa1, ta, lda, b, sb0, sb1, tb, ldb, out, i, j, B1, M, N, K)


@njit(cache=True, nogil=True, parallel=True)
def products_par(a, sa0, sa1, ta, lda, b, sb0, sb1, tb, ldb, out, B0, B1, M, N, K):
    for ij in prange(B0 * B1):
        i = ij // B1
        _one(a, sa0, sa1, ta, lda, b, sb0, sb1, tb, ldb, out, i, ij - i * B1, B1, M, N, K)
