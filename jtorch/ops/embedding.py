"""Embedding lookups: embedding, one_hot, embedding_bag.

``embedding`` is one OpDef (a row gather through the index kernel) with torch's gradient rule:
rows accumulated by ``index_add`` (duplicates summed), ``padding_idx`` rows left at zero,
``scale_grad_by_freq`` dividing by each index's count. ``embedding_bag`` reduces the gathered
rows per bag with the registry's index_add / scatter_reduce kernels.
"""

from __future__ import annotations

import numpy as np

from .. import dispatch
from .. import dtypes as _dt
from ..autograd.grad_mode import no_grad
from ..kernels.registry import defvjp, extern
from ..tensor import Tensor

__all__ = ["embedding", "embedding_bag", "one_hot"]

embedding_op = extern("embedding")  # (weight, indices) {"padding_idx", "scale_grad_by_freq"}


def _check_indices(input: Tensor, what: str) -> None:
    if not isinstance(input, Tensor) or input.dtype not in (_dt.int64, _dt.int32):
        name = input.type() if isinstance(input, Tensor) else type(input).__name__
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {name} instead (while "
                           f"checking arguments for {what})")


def _padding_idx(padding_idx, n: int):
    if padding_idx is None:
        return None
    if padding_idx > 0:
        assert padding_idx < n, "Padding_idx must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -n, "Padding_idx must be within num_embeddings"
        padding_idx += n
    return padding_idx


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
    _check_indices(input, "embedding")
    if weight.dim() != 2:
        raise RuntimeError("'weight' must be 2-D")
    n = weight._a.shape[0]
    pad = _padding_idx(padding_idx, n)
    if max_norm is not None:
        _renorm(weight, input, max_norm, norm_type)
    flat = input.reshape(-1)
    if flat._a.size and (int(flat._a.max()) >= n or int(flat._a.min()) < -n):
        raise IndexError("index out of range in self")
    with no_grad():
        rows = weight.index_select(0, flat.to(_dt.int64) % n if flat._a.size else flat)
    out = rows.reshape(*input._a.shape, weight._a.shape[1])
    return dispatch.record(embedding_op, (weight, input), out,
                           {"padding_idx": pad, "scale_grad_by_freq": scale_grad_by_freq})


def _embedding_vjp(c, g):
    import jtorch as J

    weight_shape = c._meta[0][0]
    _, idx = c.args
    flat = idx.reshape(-1).to(J.int64)
    g2 = g.reshape(-1, weight_shape[1])
    if c.kw["scale_grad_by_freq"]:
        counts = J.zeros(weight_shape[0], dtype=J.int64).index_add_(0, flat, J.ones_like(flat))
        g2 = g2 / counts.index_select(0, flat).unsqueeze(1).to(g2.dtype)
    pad = c.kw["padding_idx"]
    if pad is not None:
        g2 = g2.masked_fill((flat == pad).unsqueeze(1), 0.0)
    gw = J.zeros(weight_shape, dtype=g.dtype).index_add(0, flat % weight_shape[0], g2)
    return gw, None


defvjp(embedding_op, _embedding_vjp, "1")


def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """int64 one-hot encoding along a new last dim."""
    if not isinstance(tensor, Tensor) or tensor.dtype is not _dt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    a = tensor._a
    if num_classes == -1:
        if a.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(a.max()) + 1
    if a.size:
        if int(a.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        if int(a.max()) >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    import jtorch as J

    out = J.zeros(*a.shape, num_classes, dtype=J.int64)
    return out.scatter_(-1, tensor.unsqueeze(-1), 1)


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None, max_norm=None,
                  norm_type: float = 2, scale_grad_by_freq: bool = False, mode: str = "mean",
                  sparse: bool = False, per_sample_weights: Tensor | None = None,
                  include_last_offset: bool = False, padding_idx=None) -> Tensor:
    """Sums, means or maxes of bags of embedding rows: a 2-D ``input`` holds one bag per row,
    a 1-D ``input`` is cut into bags at ``offsets``."""
    import jtorch as J

    _check_indices(input, "embedding_bag")
    if mode not in ("sum", "mean", "max"):
        raise ValueError(f"mode has to be one of sum, mean or max, but got {mode}")
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
        bag = np.repeat(np.arange(nbags), length)
        flat = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        off = offsets._a.astype(np.int64)
        n = input._a.shape[0]
        if include_last_offset:
            off = off[:-1]
        nbags = off.shape[0]
        bag = np.searchsorted(off, np.arange(n), side="right") - 1
        flat = input
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    pad = _padding_idx(padding_idx, weight._a.shape[0])
    keep = np.ones(flat._a.shape[0], bool) if pad is None else flat._a != pad
    rows = embedding(flat, weight, pad, max_norm, norm_type, scale_grad_by_freq)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    sel = J.from_numpy(np.nonzero(keep)[0])
    bag_t = J.from_numpy(bag[keep].astype(np.int64))
    rows = rows.index_select(0, sel)
    dim = weight._a.shape[1]
    if mode == "max":
        init = J.zeros(nbags, dim, dtype=weight.dtype)
        return init.scatter_reduce(0, bag_t.unsqueeze(1).expand(-1, dim), rows, "amax",
                                   include_self=False)
    out = J.zeros(nbags, dim, dtype=weight.dtype).index_add(0, bag_t, rows)
    if mode == "mean":
        counts = np.bincount(bag[keep], minlength=nbags).astype(np.float64)
        out = out / J.from_numpy(np.maximum(counts, 1)).to(weight.dtype).unsqueeze(1)
    return out
