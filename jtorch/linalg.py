"""``jtorch.linalg``: torch.linalg's names over the contraction, norm and decomposition ops."""

from __future__ import annotations

from .ops.linalg import matmul, matrix_norm, multi_dot, norm, svdvals, vecdot
from .ops.linalg_decomp import (
                                LinAlgError,
                                cholesky,
                                cholesky_ex,
                                cond,
                                cross,
                                det,
                                diagonal,
                                eig,
                                eigh,
                                eigvals,
                                eigvalsh,
                                householder_product,
                                inv,
                                inv_ex,
                                ldl_factor,
                                ldl_factor_ex,
                                ldl_solve,
                                lstsq,
                                lu,
                                lu_factor,
                                lu_factor_ex,
                                lu_solve,
                                matrix_exp,
                                matrix_power,
                                matrix_rank,
                                pinv,
                                qr,
                                slogdet,
                                solve,
                                solve_ex,
                                solve_triangular,
                                svd,
                                tensorinv,
                                tensorsolve,
                                vander,
)
from .ops.reduction import vector_norm

__all__ = [
    "LinAlgError", "cholesky", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig", "eigh",
    "eigvals", "eigvalsh", "householder_product", "inv", "inv_ex", "ldl_factor",
    "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor",
    "lu_factor_ex", "lu_solve", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
    "matrix_rank", "multi_dot", "norm", "pinv", "qr", "slogdet", "solve", "solve_ex",
    "solve_triangular", "svd", "svdvals", "tensorinv", "tensorsolve", "vander", "vecdot",
    "vector_norm",
]
