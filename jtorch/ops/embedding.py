"""Embedding lookups: embedding, one_hot, embedding_bag.

``embedding`` is one OpDef (``kernels/defs/indexing``: a row gather through the index kernel)
with torch's gradient rule: rows accumulated by ``index_add`` (duplicates summed),
``padding_idx`` rows left at zero, ``scale_grad_by_freq`` dividing by each index's count.
``embedding_bag`` is a composition: the looked-up rows reduced per bag with ``index_add`` /
``scatter_reduce`` (no value-dependent shapes, so it runs on meta tensors too).
"""

from __future__ import annotations

from .. import dispatch
from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..kernels.defs import indexing as D
from ..tensor import Tensor

__all__ = ["embedding", "embedding_bag", "one_hot"]

embedding_op = D.embedding_op


def _renorm(weight: Tensor, idx: Tensor, max_norm: float, norm_type: float) -> None:
    """torch's embedding_renorm_: rows used by ``idx`` whose norm exceeds max_norm are scaled
    down in place (outside autograd)."""
    from .reduction import vector_norm

    with no_grad():
        rows = idx.reshape(-1).unique()
        w = weight.index_select(0, rows)
        norms = vector_norm(w, norm_type, 1, True)
        scale = (max_norm / (norms + 1e-7)).clamp_max(1.0)
        weight.index_copy_(0, rows, w * scale)


def embedding(input: Tensor, weight: Tensor, padding_idx=None, max_norm=None,
              norm_type: float = 2.0, scale_grad_by_freq: bool = False,
              sparse: bool = False) -> Tensor:
    """Rows of ``weight`` picked by the integer ``input`` (shape input.shape + (dim,)).

    >>> jtorch.nn.functional.embedding(jtorch.tensor([0, 2]), jtorch.eye(3)).shape
    torch.Size([2, 3])
    """
    if max_norm is not None:
        D.embedding_op.meta(weight, input, padding_idx=padding_idx)  # the checks come first
        _renorm(weight, input, max_norm, norm_type)
    return dispatch.call(D.embedding_op, weight, input, padding_idx=padding_idx,
                         scale_grad_by_freq=scale_grad_by_freq, sparse=bool(sparse))


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last dim (``num_classes=-1``: the largest class
    plus one, read from the data)."""
    if not isinstance(tensor, Tensor) or tensor.dtype is not _dt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max().item()) + 1
    return dispatch.call(D.one_hot_op, tensor, num_classes=num_classes)


def _bags_of_offsets(offsets: Tensor, n: int, include_last_offset: bool) -> tuple:
    """(bag of each of the ``n`` positions, number of bags) for a 1-D input cut at
    ``offsets``: position i belongs to the last bag whose offset is <= i."""
    off = offsets.to(_dt.int64)
    if include_last_offset:
        off = off[:-1]
    nbags = off._a.shape[0]
    marks = off.new_zeros(n + 1).index_add_(0, off.clamp(0, n), off.new_ones(nbags))
    return marks[:n].cumsum(0) - 1, nbags


_FLOATS = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm=None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean",
                  sparse: bool = False, per_sample_weights: Tensor | None = None,
                  include_last_offset: bool = False, padding_idx=None) -> Tensor:
    """Sums, means or maxes of bags of embedding rows: a 2-D ``input`` holds one bag per row,
    a 1-D ``input`` is cut into bags at ``offsets``."""
    if not isinstance(input, Tensor) or input.dtype not in (_dt.int64, _dt.int32):
        name = input.type() if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {name} instead (while "
                           f"checking arguments for embedding_bag)")
    if isinstance(weight, Tensor) and weight.dtype not in _FLOATS:
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have one of the following "
                           f"scalar types: Half, BFloat16, Float, Double; but got {weight.type()} "
                           f"instead (while checking arguments for embedding_bag)")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, but got {mode}")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated is "
                             "a mini-batch of fixed length sequences. However, found offsets of "
                             f"type {type(offsets).__name__}")
        nbags, length = input._a.shape
        from .creation import arange

        bag = arange(nbags, device=input.device).unsqueeze(1).expand(nbags, length).reshape(-1)
        flat = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        bag, nbags = _bags_of_offsets(offsets, input._a.shape[0], include_last_offset)
        flat = input
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    n = weight._a.shape[0]
    pad = padding_idx
    if pad is not None and pad < 0:
        pad += n
    rows = embedding(flat, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    dim = weight._a.shape[1]
    keep = None if pad is None else (flat != pad)
    if mode == "max":
        if keep is not None:
            rows = rows.masked_fill(~keep.unsqueeze(1), float("-inf"))
        init = weight.new_zeros(nbags, dim)
        out = init.scatter_reduce(0, bag.unsqueeze(1).expand(-1, dim), rows, "amax",
                                  include_self=False)
        if keep is not None:  # a bag of padding only is empty: zeros, as torch gives
            hit = keep.to(_dt.int64).new_zeros(nbags).index_add_(0, bag, keep.to(_dt.int64))
            out = out.masked_fill((hit == 0).unsqueeze(1), 0.0)
        return out
    if keep is not None:
        rows = rows.masked_fill(~keep.unsqueeze(1), 0.0)
    out = weight.new_zeros(nbags, dim).index_add(0, bag, rows)
    if mode == "mean":
        ones = flat.new_ones(flat.shape, dtype=weight.dtype) if keep is None \
            else keep.to(weight.dtype)
        counts = weight.new_zeros(nbags).index_add(0, bag, ones)
        out = out / counts.clamp_min(1).unsqueeze(1)
    return out
