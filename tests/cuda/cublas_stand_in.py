"""A stand-in for ``nvmath.bindings.cublas`` with cuBLAS's column-major semantics, in NumPy
over host addresses (the simulator's device arrays live in host memory). It checks how
``kernels/cuda/cublas.py`` plans a call: operands, op flags, leading dimensions, batch
strides, offsets and the alpha/beta pointers, as cuBLAS would read them."""

import ctypes

import numpy as np

OP_N, OP_T = 0, 1
_DTYPES = {"sgemm_strided_batched": np.float32, "dgemm_strided_batched": np.float64}


def col_major(base: int, rows: int, cols: int, ld: int, dtype) -> np.ndarray:
    """The ``rows x cols`` column-major matrix with leading dimension ``ld`` at ``base``."""
    isz = np.dtype(dtype).itemsize
    if not rows or not cols:
        return np.zeros((rows, cols), dtype)
    n = (cols - 1) * ld + rows
    flat = np.ctypeslib.as_array((ctypes.c_char * (n * isz)).from_address(base))
    return np.lib.stride_tricks.as_strided(flat.view(dtype), (rows, cols), (isz, ld * isz))


def gemm_strided_batched(dtype, trans_x, trans_y, m, n, k, p_alpha, px, ldx, sx, py, ldy, sy,
                         p_beta, pc, ldc, sc, batch):
    """``C[b] = alpha op(X[b]) op(Y[b]) + beta C[b]``; C is not read when beta is 0."""
    isz = np.dtype(dtype).itemsize
    alpha = col_major(p_alpha, 1, 1, 1, dtype)[0, 0]
    beta = col_major(p_beta, 1, 1, 1, dtype)[0, 0]
    for b in range(batch):
        rx, cx = (m, k) if trans_x == OP_N else (k, m)
        ry, cy = (k, n) if trans_y == OP_N else (n, k)
        for rows, ld in ((rx, ldx), (ry, ldy), (m, ldc)):
            assert ld >= max(1, rows), (rows, ld)
        x = col_major(px + b * sx * isz, rx, cx, ldx, dtype)
        y = col_major(py + b * sy * isz, ry, cy, ldy, dtype)
        c = col_major(pc + b * sc * isz, m, n, ldc, dtype)
        x = x if trans_x == OP_N else x.T
        y = y if trans_y == OP_N else y.T
        prod = alpha * (x.astype(np.float64) @ y.astype(np.float64))
        c[...] = prod + beta * c if beta != 0 else prod


class StandIn:
    """The binding's functions the product path calls, recording each call."""

    def __init__(self) -> None:
        self.calls: list = []
        self.math_modes: list = []

    def create(self) -> int:
        return 1

    def set_math_mode(self, handle: int, mode: int) -> None:
        self.math_modes.append(mode)

    def gemm_strided_batched_ex(self, handle, trans_x, trans_y, m, n, k, p_alpha, px, x_type,
                                ldx, sx, py, y_type, ldy, sy, p_beta, pc, c_type, ldc, sc,
                                batch, compute_type, algo):
        """float16 operands (cudaDataType 2) with float32 scalars and sums (compute 68)."""
        assert (x_type, y_type, c_type, compute_type, algo) == (2, 2, 2, 68, -1)
        self.calls.append(("gemm_strided_batched_ex", (trans_x, trans_y), (m, n, k)))
        alpha = col_major(p_alpha, 1, 1, 1, np.float32)[0, 0]
        beta = col_major(p_beta, 1, 1, 1, np.float32)[0, 0]
        for b in range(batch):
            rx, cx = (m, k) if trans_x == OP_N else (k, m)
            ry, cy = (k, n) if trans_y == OP_N else (n, k)
            x = col_major(px + b * sx * 2, rx, cx, ldx, np.float16).astype(np.float32)
            y = col_major(py + b * sy * 2, ry, cy, ldy, np.float16).astype(np.float32)
            c = col_major(pc + b * sc * 2, m, n, ldc, np.float16)
            x = x if trans_x == OP_N else x.T
            y = y if trans_y == OP_N else y.T
            prod = alpha * (x @ y)
            c[...] = prod + beta * c.astype(np.float32) if beta != 0 else prod

    def __getattr__(self, name: str):
        dtype = _DTYPES.get(name)
        if dtype is None:
            raise AttributeError(name)

        def call(handle, *args):
            self.calls.append((name, args[:2], args[2:5]))
            gemm_strided_batched(dtype, *args)

        return call
