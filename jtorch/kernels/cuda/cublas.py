"""Matrix products through cuBLAS, when the ``cuda`` extra is installed.

The binding is nvmath-python's ``nvmath.bindings.cublas``: a thin layer over cuBLAS's C API
that takes raw device addresses, so operands stay the caching allocator's device arrays and
no second array library or memory pool sits beside ours (CuPy would bring both). NVIDIA
maintains it with the CUDA toolkit's releases.

cuBLAS is column-major. A row-major product ``C = A @ B`` (C row-major, ``ldc = N``) is the
column-major ``C^T = B^T @ A^T``: B's data goes first. An operand is passed where it lies when
one of its two matrix strides is 1 (the other is the leading dimension; the op flag says
which) and its batch dims merge into one stride (0 for a broadcast batch); otherwise the
caller copies it row-major first (``layout`` answers None for it). Without the binding, under the
simulator, or for other dtypes, products run the tiled kernel (``matmul.py``).
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import numpy as np

from ... import _settings
from . import target

OP_N, OP_T = 0, 1  # cublasOperation_t
_MATH_DEFAULT, _MATH_TF32 = 0, 3  # cublasMath_t: CUBLAS_DEFAULT_MATH, CUBLAS_TF32_TENSOR_OP_MATH
_INT_MAX = 2**31 - 1


class Gemm(NamedTuple):
    """One ``?gemmStridedBatched`` call in cuBLAS's terms: ``C = alpha op(X) op(Y) + beta C``
    with X, Y, C column-major at element offsets and batch strides."""
    trans_x: int
    trans_y: int
    m: int
    n: int
    k: int
    x_off: int
    ldx: int
    stride_x: int
    y_off: int
    ldy: int
    stride_y: int
    c_off: int
    ldc: int
    stride_c: int
    batch: int


def layout(rows: int, cols: int, s_rows: int, s_cols: int) -> tuple | None:
    """(op, ld) under which cuBLAS reads the ``rows x cols`` matrix whose element (i, j) lies
    at ``i * s_rows + j * s_cols``; None when neither stride is 1 (or a leading dimension
    would be out of cuBLAS's range). A size-1 dim's stride is free; an empty matrix is not
    read."""
    if not rows or not cols:
        return OP_N, max(rows, 1)
    if s_rows == 1 or rows == 1:  # column-major as it is
        ld = s_cols if cols > 1 else max(rows, 1)
        if max(rows, 1) <= ld <= _INT_MAX:
            return OP_N, ld
    if s_cols == 1 or cols == 1:  # its transpose is column-major
        ld = s_rows if rows > 1 else max(cols, 1)
        if max(cols, 1) <= ld <= _INT_MAX:
            return OP_T, ld
    return None


def plan(shape: tuple, a: tuple, b: tuple, c: tuple) -> Gemm | None:
    """The call computing row-major ``c = a @ b`` for ``shape = (nb, M, N, K)``; each operand
    is ``(offset, (batch, row, col) element strides)``, ``c`` row-major per matrix."""
    nb, M, N, K = shape
    a_off, (sab, sam, sak) = a
    b_off, (sbb, sbk, sbn) = b
    c_off, (scb, scm, scn) = c
    if scn != 1 and N > 1:
        return None
    ldc = scm if M > 1 and N else max(N, 1)
    if ldc < max(N, 1) or max(M, N, K, nb) > _INT_MAX:
        return None
    x = layout(N, K, sbn, sbk)  # op(X) = B^T, N x K
    y = layout(K, M, sak, sam)  # op(Y) = A^T, K x M
    if x is None or y is None:
        return None
    if nb == 1:
        sab = sbb = scb = 0
    return Gemm(x[0], y[0], N, M, K, b_off, x[1], sbb, a_off, y[1], sab, c_off, ldc, scb, nb)


class _Handles:
    """One cuBLAS handle per device and thread (handles are not thread-safe)."""

    def __init__(self) -> None:
        self.tls = threading.local()

    def get(self, binding, device: int) -> int:
        hs = getattr(self.tls, "handles", None)
        if hs is None:
            hs = self.tls.handles = {}
        h = hs.get(device)
        if h is None:
            with target.device_scope(device):
                h = hs[device] = binding.create()
        return h


_handles = _Handles()
_binding = None  # the nvmath.bindings.cublas module; False once its import failed
_override = None  # a stand-in binding (tests), used even under the simulator


def binding():
    """The cuBLAS binding, or None (no ``cuda`` extra, no device, or the simulator)."""
    global _binding
    if _override is not None:
        return _override
    if _binding is None:
        _binding = False
        if not target.SIMULATOR:
            try:
                from nvmath.bindings import cublas as _b  # (the optional extra)

                _binding = _b
            except Exception:  # noqa: BLE001  (absent, or its libraries do not load)
                _binding = False
    return _binding or None


def use(stand_in) -> None:
    """Route products through ``stand_in`` (a module with the binding's functions; None:
    back to the real binding). Tests check the call planning with it in the simulator."""
    global _override
    _override = stand_in


_ROUTINES = {"float32": "sgemm_strided_batched", "float64": "dgemm_strided_batched"}
# float16 through cublasGemmStridedBatchedEx, summed in float32 (as torch does by default)
_R_16F, _COMPUTE_32F, _GEMM_DEFAULT = 2, 68, -1  # cudaDataType, cublasComputeType_t, algo


def run(dtype: str, shape: tuple, a: tuple, b: tuple, c: tuple, alpha: float, beta: float,
        device: int) -> bool:
    """``c = alpha * a @ b + beta * c`` through cuBLAS; each operand ``(span, offset, (batch,
    row, col) element strides)``. False (nothing done) when cuBLAS cannot take it."""
    from ...cuda_array import buffer_ptr

    bnd = binding()
    routine = _ROUTINES.get(dtype)
    if bnd is None or (routine is None and dtype != "float16"):
        return False
    g = plan(shape, a[1:], b[1:], c[1:])
    if g is None:
        return False
    h = _handles.get(bnd, device)
    if dtype == "float32":
        tf32 = _settings.get_float32_matmul_precision() != "highest"
        bnd.set_math_mode(h, _MATH_TF32 if tf32 else _MATH_DEFAULT)
    base_a, base_b, base_c = buffer_ptr(a[0]), buffer_ptr(b[0]), buffer_ptr(c[0])
    if dtype == "float16":
        scalars = np.array([alpha, beta], np.float32)  # (the compute type's)
        p, size = scalars.ctypes.data, 2
        bnd.gemm_strided_batched_ex(
            h, g.trans_x, g.trans_y, g.m, g.n, g.k, p,
            base_b + g.x_off * size, _R_16F, g.ldx, g.stride_x,
            base_a + g.y_off * size, _R_16F, g.ldy, g.stride_y, p + 4,
            base_c + g.c_off * size, _R_16F, g.ldc, g.stride_c, g.batch, _COMPUTE_32F,
            _GEMM_DEFAULT)
        return True
    scalars = np.array([alpha, beta], dtype)
    size = scalars.itemsize
    p = scalars.ctypes.data
    getattr(bnd, routine)(h, g.trans_x, g.trans_y, g.m, g.n, g.k, p,
                          base_b + g.x_off * size, g.ldx, g.stride_x,
                          base_a + g.y_off * size, g.ldy, g.stride_y, p + size,
                          base_c + g.c_off * size, g.ldc, g.stride_c, g.batch)
    return True
