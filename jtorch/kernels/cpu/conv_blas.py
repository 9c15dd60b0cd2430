"""BLAS's GEMM with explicit leading dimensions, callable from compiled kernels.

``np.dot`` inside ``njit`` only takes C- or F-contiguous matrices (it copies anything else), so
it cannot multiply the strided windows that let a convolution skip im2col: the rows of a
padded input plane read at a kernel offset are a matrix whose row stride (the plane's size)
differs from its row length. ``gemm`` calls the same BLAS routine ``np.dot`` does (Numba's
``numba_xxgemm`` wrapper around scipy's BLAS, resolved by name, so kernels that use it keep
their disk cache) with the strides, the element offsets and ``beta`` given:

    C[c0 + i*ldc + j] = beta * C[...] + sum_p A(i, p) * B(p, j)      (row-major, i < m, j < n)

where A(i, p) = a[a0 + i*lda + p] (or a[a0 + p*lda + i] when ``ta``) and likewise for B.

    >>> import numpy as np
    >>> a = np.ones((2, 3), np.float32); b = np.ones((3, 4), np.float32)
    >>> c = np.zeros((2, 4), np.float32)
    >>> _ = gemm_check(a, b, c)  # c = a @ b
"""

from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic
from numba.np import linalg as _nl
from numba.np.arrayobj import make_array

from ..jit import njit
from ..source import _bind_blas

_bind_blas()  # scipy's BLAS extension without scipy.linalg's Python API (source.py)
_nl.ensure_blas()  # loads scipy's BLAS, whose symbols numba_xxgemm looks up

_KIND = {types.float32: "s", types.float64: "d", types.complex64: "c", types.complex128: "z"}
_i8 = ir.IntType(8)
_vp = cgutils.voidptr_t


@intrinsic
def gemm(typingctx, ta, tb, m, n, k, a, a0, lda, b, b0, ldb, beta, c, c0, ldc):
    """Row-major C (m, n) = op(A) @ op(B) + beta * C on flat element offsets and row strides
    (see the module docstring); ``ta``/``tb`` are booleans, the arrays share one BLAS dtype."""
    if not all(isinstance(t, types.Array) for t in (a, b, c)) or c.dtype not in _KIND:
        return None
    if a.dtype != c.dtype or b.dtype != c.dtype:
        return None
    sig = types.void(ta, tb, m, n, k, a, a0, lda, b, b0, ldb, beta, c, c0, ldc)

    def codegen(context, builder, sig, args):
        ta_v, tb_v, m_v, n_v, k_v, a_v, a0_v, lda_v, b_v, b0_v, ldb_v, beta_v, c_v, c0_v, ldc_v = args
        tys = sig.args
        intp = context.get_value_type(types.intp)
        dt = tys[12].dtype

        def ptr(arr_ty, arr, off_ty, off):
            data = make_array(arr_ty)(context, builder, arr).data
            off = context.cast(builder, off, off_ty, types.intp)
            return builder.bitcast(builder.gep(data, [off]), _vp)

        def as_intp(v, ty):
            return context.cast(builder, v, ty, types.intp)

        def flag(v, ty):
            v = context.cast(builder, v, ty, types.boolean)
            return builder.select(v, ir.Constant(_i8, ord("t")), ir.Constant(_i8, ord("n")))

        fnty = ir.FunctionType(ir.IntType(32), [_i8, _i8, _i8, intp, intp, intp, _vp, _vp, intp,
                                                _vp, intp, _vp, _vp, intp])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "numba_xxgemm")
        one = cgutils.alloca_once_value(builder, context.get_constant_generic(builder, dt, 1))
        beta_s = cgutils.alloca_once_value(builder, context.cast(builder, beta_v, tys[11], dt))
        # row-major C = A @ B is column-major C^T = B^T @ A^T: swap the operands
        res = builder.call(fn, (
            ir.Constant(_i8, ord(_KIND[dt])), flag(tb_v, tys[1]), flag(ta_v, tys[0]),
            as_intp(n_v, tys[3]), as_intp(m_v, tys[2]), as_intp(k_v, tys[4]),
            builder.bitcast(one, _vp),
            ptr(tys[8], b_v, tys[9], b0_v), as_intp(ldb_v, tys[10]),
            ptr(tys[5], a_v, tys[6], a0_v), as_intp(lda_v, tys[7]),
            builder.bitcast(beta_s, _vp),
            ptr(tys[12], c_v, tys[13], c0_v), as_intp(ldc_v, tys[14])))
        _nl.check_blas_return(context, builder, res)
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, nogil=True)
def gemm_check(a, b, c):
    """c = a @ b for C-contiguous 2-D arrays (a smoke test of ``gemm``)."""
    gemm(False, False, c.shape[0], c.shape[1], a.shape[1], a, 0, a.shape[1], b, 0, b.shape[1],
         0.0, c, 0, c.shape[1])
    return c
