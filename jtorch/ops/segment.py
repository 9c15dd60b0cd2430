"""torch.segment_reduce: one reduction per run of consecutive rows of an axis.

The segments are given by ``lengths`` (checked as torch checks them unless ``unsafe``) or by
``offsets`` (boundaries, not checked); the record and its gradient are in
``kernels/defs/segment.py``.
"""

from __future__ import annotations

from .. import dispatch
from ..kernels.defs import segment as S
from ..shape import wrap_dim
from ..tensor import Tensor
from ._util import type_name

__all__ = ["segment_reduce"]

_REDUCE = {"sum": "sum", "mean": "mean", "max": "max", "amax": "max", "min": "min",
           "amin": "min", "prod": "prod"}


def _tensor_arg(x, name: str) -> None:
    if x is not None and not isinstance(x, Tensor):
        raise TypeError(f"segment_reduce(): argument '{name}' must be Tensor, not {type_name(x)}")


def _check_lengths(lengths: Tensor, size: int) -> None:
    """torch's value checks (not done on meta tensors, which have no values)."""
    if lengths.is_meta:
        return
    if not lengths.numel():
        raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() == 0. "
                           "Specify the reduction dim with the 'dim' argument.")
    if lengths.min().item() < 0:
        raise RuntimeError("lengths contains negative value!")
    if not bool((lengths.sum(-1) == size).all()):
        raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                           "data.size(lengths.dim()-1) when !unsafe.")


def segment_reduce(data: Tensor, reduce: str, *, lengths: Tensor | None = None,
                   indices: Tensor | None = None, offsets: Tensor | None = None, axis: int = 0,
                   unsafe: bool = False, initial=None) -> Tensor:
    """Reduce (sum, mean, max, min, prod) each segment of ``axis``; ``initial`` starts every
    segment's reduction (an empty segment gives it, or the reduction's identity; NaN for mean).

    >>> import jtorch as torch
    >>> torch.segment_reduce(torch.tensor([1.0, 2.0, 3.0]), "sum", lengths=torch.tensor([2, 1]))
    tensor([3., 3.])
    """
    _tensor_arg(data, "data")
    _tensor_arg(lengths, "lengths")
    _tensor_arg(offsets, "offsets")
    _tensor_arg(indices, "indices")
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"segment_reduce(): argument 'axis' must be int, not {type_name(axis)}")
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if reduce not in _REDUCE:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    axis = wrap_dim(axis, data.ndim)
    kind, seg = ("lengths", lengths) if lengths is not None else ("offsets", offsets)
    if data.ndim < seg.ndim:
        raise RuntimeError(f"Expected data.dim() >= {kind}_value.dim() to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    if axis != seg.ndim - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of {kind} "
                           f"but got {axis}.")
    if kind == "lengths" and not unsafe:
        _check_lengths(lengths, data.shape[axis])
    if isinstance(initial, Tensor):
        initial = initial.item()
    return dispatch.call(S.segment_reduce_op, data, seg, reduce=_REDUCE[reduce], kind=kind,
                         axis=axis, initial=initial)
