"""nn.functional's grouped and scaled matrix products, as torch 2.13 runs them on CPU.

``grouped_mm`` computes (the ``_grouped_mm`` op, ``kernels/defs/grouped_mm.py``) after torch's
checks: float32 / bfloat16 / float16 operands, each with one unit stride and
its other stride a multiple of 16 bytes, int32 offsets where an operand is 2-D, no bias. Its
result is contiguous (torch pads the last dim's stride to 16 bytes). ``scaled_mm`` takes float8
(or float4) operands, which jtorch has no dtype for, so every call fails torch's scaling-recipe
check with its ValueError; ``scaled_grouped_mm`` has no CPU kernel in torch (its
NotImplementedError).

>>> import jtorch
>>> F = jtorch.nn.functional
>>> F.grouped_mm(jtorch.ones(2, 3, 4), jtorch.ones(2, 4, 4)).shape
torch.Size([2, 3, 4])
"""

from __future__ import annotations

import enum

from .. import dispatch
from .. import dtypes as _dt
from ..kernels.defs import grouped_mm as G
from ..tensor import Tensor

__all__ = ["grouped_mm", "scaled_grouped_mm", "scaled_mm"]


class ScalingType(enum.IntEnum):
    """How a scaled product's operand was scaled (torch's ``_ScalingType``)."""

    TensorWise = 0
    RowWise = 1
    BlockWise1x16 = 2
    BlockWise1x32 = 3
    BlockWise1x128 = 4
    BlockWise128x128 = 5


class SwizzleType(enum.IntEnum):
    """The layout of a scale tensor (torch's ``_SwizzleType``)."""

    NO_SWIZZLE = 0
    SWIZZLE_32_4_4 = 1


_GROUPED_DTYPES = (_dt.float32, _dt.float16, _dt.bfloat16)


def _check_strides(mat: Tensor) -> None:
    """One of the two inner dims is unit-stride and the other's stride a multiple of 16 bytes."""
    st, sz = mat.stride(), mat.shape
    sm, sn, m, n = st[-2], st[-1], sz[-2], sz[-1]
    align = 16 // mat.dtype.itemsize
    if sn == 1 and sm >= max(1, n):
        if sm % align:
            raise RuntimeError("strides should be multiple of 16 bytes")
        return
    if sm == 1 and sn >= max(1, m):
        if sn % align:
            raise RuntimeError("strides should be multiple of 16 bytes")
        return
    raise RuntimeError(f"Invalid strides/sizes, got {list(st)} for strides and {list(sz)} for "
                       f"sizes")


def grouped_mm(mat_a: Tensor, mat_b: Tensor, *, offs: Tensor | None = None,
               bias: Tensor | None = None, out_dtype=None) -> Tensor:
    """Grouped matrix products (mixture-of-experts layers): 3-D operands enumerate the groups,
    a 2-D operand is split along its jagged dim at the int32 ``offs`` (each group's end)."""
    for name, m in (("mat_a", mat_a), ("mat_b", mat_b)):
        if m.dtype not in _GROUPED_DTYPES:
            raise RuntimeError(f"Expected {name} to be Float32, BFloat16 or Float16 matrix, got "
                               f"{dispatch.torch_name(m.dtype)}")
    if mat_a.dim() not in (2, 3):
        raise RuntimeError("mat_a has to be 2 or 3d")
    if mat_b.dim() not in (2, 3):
        raise RuntimeError("mat_b has to be 2 or 3d")
    both2 = mat_a.dim() == 2 and mat_b.dim() == 2
    if mat_a.shape[-1] != mat_b.shape[0 if both2 else -2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    _check_strides(mat_a)
    _check_strides(mat_b)
    if (offs is None) != (mat_a.dim() == 3 and mat_b.dim() == 3):
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if "
                           "both matrices are 3d")
    if offs is not None:
        if offs.dim() != 1:
            raise RuntimeError("offs has to be 1D")
        if offs.dtype is not _dt.int32:
            raise RuntimeError("Offsets have to be int32")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    if out_dtype is not None and out_dtype is not mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    G.out_shape(tuple(mat_a.shape), tuple(mat_b.shape),
                None if offs is None else tuple(offs.shape))
    if mat_b.dtype is not mat_a.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {G.c10_name(mat_b.dtype)}, but "
                           f"got {G.c10_name(mat_a.dtype)} instead")
    return dispatch.call(G.grouped_mm_op, mat_a, mat_b, offs)


def _listed(v) -> list:
    return [] if v is None else list(v) if isinstance(v, list) else [v]


def _dims(t: Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def scaled_mm(mat_a: Tensor, mat_b: Tensor, scale_a, scale_recipe_a, scale_b, scale_recipe_b,
              swizzle_a=None, swizzle_b=None, bias: Tensor | None = None,
              output_dtype=None, contraction_dim=(), use_fast_accum: bool = False) -> Tensor:
    """mm(mat_a, mat_b) of float8 operands decoded by their scales (``ScalingType`` recipes).
    jtorch has no float8 dtype: the arguments are checked as torch checks them, and the
    recipe check (float8 operands) raises torch's ValueError."""
    scale_a, scale_b = _listed(scale_a), _listed(scale_b)
    recipe_a, recipe_b = _listed(scale_recipe_a), _listed(scale_recipe_b)
    for r in (*recipe_a, *recipe_b, *_listed(swizzle_a), *_listed(swizzle_b)):
        if not isinstance(r, enum.Enum):
            raise AttributeError(  # noqa: TRY004  (torch's error: it reads ``.value``)
                f"'{type(r).__name__}' object has no attribute 'value'")
    if mat_a.dim() != 2:
        raise ValueError("mat_a must be a matrix")
    if mat_b.dim() != 2:
        raise ValueError("mat_b must be a matrix")
    m, k = mat_a.shape
    if mat_b.shape[0] != k:
        raise ValueError(f"mat_a and mat_b shapes cannot be multiplied ({m}x{k} and "
                         f"{mat_b.shape[0]}x{mat_b.shape[1]})")
    sa, sb = scale_a[0], scale_b[0]
    n = mat_b.shape[1]
    raise ValueError(
        f"Invalid scaling configuration.\n- For TensorWise scaling, a and b should be float8, "
        f"scales should be float and singletons.\n- For RowWise scaling, a and b should be "
        f"float8, scales should be float, scale_a should be ({m}, 1) and scale_b should be "
        f"(1, {n}), and both should be contiguous.\nGot "
        f"mat_a.dtype()={dispatch.torch_name(mat_a.dtype)}, "
        f"scale_a.dtype()={dispatch.torch_name(sa.dtype)}, scale_a.size()={_dims(sa)}, "
        f"scale_a.stride()={list(sa.stride())}, mat_b.dtype()={dispatch.torch_name(mat_b.dtype)}, "
        f"scale_b.dtype()={dispatch.torch_name(sb.dtype)}, scale_b.size()={_dims(sb)} and "
        f"scale_b.stride()={list(sb.stride())}")


def scaled_grouped_mm(mat_a: Tensor, mat_b: Tensor, scale_a, scale_recipe_a, scale_b,
                      scale_recipe_b, swizzle_a=None, swizzle_b=None, bias: Tensor | None = None,
                      offs: Tensor | None = None, output_dtype=None, contraction_dim=(),
                      use_fast_accum: bool = False) -> Tensor:
    """grouped_mm of float8 operands decoded by their scales: torch has no CPU kernel for it
    (a CUDA op), so this raises torch's NotImplementedError."""
    for r in (*_listed(scale_recipe_a), *_listed(scale_recipe_b), *_listed(swizzle_a),
              *_listed(swizzle_b)):
        if not isinstance(r, enum.Enum):
            raise AttributeError(  # noqa: TRY004  (torch's error: it reads ``.value``)
                f"'{type(r).__name__}' object has no attribute 'value'")
    raise NotImplementedError("Could not run 'aten::_scaled_grouped_mm_v2' with arguments from "
                              "the 'CPU' backend. This could be because the operator doesn't "
                              "exist for this backend, or was omitted during the "
                              "selective/custom build process (if using custom build).")
