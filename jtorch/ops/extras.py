"""torch's top-level spellings of ops jtorch has elsewhere: nn.functional ops under their ATen
signatures (``torch.kl_div(input, target, reduction=1)`` takes the reduction as an int,
``torch.embedding(weight, indices)`` swaps the operands), in-place forms of Tensor methods,
tensor predicates, constants, and the ``*_copy`` variants of views.

Each composes existing ops, so dispatch, meta tensors and autograd come with them.

>>> import jtorch as torch
>>> torch.celu(torch.tensor([-1.0, 2.0]))
tensor([-0.6321,  2.0000])
"""

from __future__ import annotations

import builtins
import math
import warnings

from .. import dtypes as _dt
from ..tensor import Tensor
from . import conversion, creation, views

__all__ = [
    "batch_norm",
    "binary_cross_entropy_with_logits",
    "celu",
    "celu_",
    "channel_shuffle",
    "clamp_",
    "clamp_max_",
    "clamp_min_",
    "clip_",
    "constant_pad_nd",
    "convolution",
    "cosine_embedding_loss",
    "ctc_loss",
    "detach",
    "detach_",
    "e",
    "embedding",
    "empty_permuted",
    "fill",
    "fill_",
    "gcd_",
    "get_device",
    "group_norm",
    "hardshrink",
    "hinge_embedding_loss",
    "index_put_",
    "instance_norm",
    "is_conj",
    "is_inference",
    "is_neg",
    "is_same_size",
    "is_signed",
    "is_storage",
    "kl_div",
    "layer_norm",
    "lcm_",
    "logit_",
    "margin_ranking_loss",
    "nan",
    "nan_to_num_",
    "native_channel_shuffle",
    "native_layer_norm",
    "newaxis",
    "pdist",
    "pi",
    "pixel_shuffle",
    "pixel_unshuffle",
    "poisson_nll_loss",
    "prelu",
    "range",
    "resolve_neg",
    "row_stack",
    "selu",
    "selu_",
    "split_with_sizes",
    "threshold",
    "threshold_",
    "triplet_margin_loss",
    "typename",
    "unsafe_chunk",
    "unsafe_split",
    "unsafe_split_with_sizes",
    "xlogy_",
    "zero_",
]

e = math.e
pi = math.pi
nan = math.nan
newaxis = None

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}
# torch's Python binding reads the losses' schema default (``at::Reduction::Mean``) as 0: called
# without ``reduction``, ``torch.kl_div`` and the rest return the unreduced loss. So do these.
_NONE = 0


def _F():
    """nn.functional, imported at call time: ``jtorch.nn`` is built on the op modules."""
    from ..nn import functional

    return functional


def _reduction(value: int, fn: str) -> str:
    """ATen's reduction enum (0 none, 1 mean, 2 sum) as nn.functional's string."""
    if builtins.isinstance(value, builtins.bool) or not builtins.isinstance(value, builtins.int):
        raise TypeError(f"{fn}(): argument 'reduction' must be int, not {type(value).__name__}")
    if value not in _REDUCTIONS:
        raise ValueError(f"{value} is not a valid value for reduction")
    return _REDUCTIONS[value]


# -- normalization and embedding under ATen's signatures ---------------------------------------

def batch_norm(input: Tensor, weight, bias, running_mean, running_var, training: bool,
               momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    return _F().batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def instance_norm(input: Tensor, weight, bias, running_mean, running_var, use_input_stats: bool,
                  momentum: float, eps: float, cudnn_enabled: bool) -> Tensor:
    return _F().instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                              momentum, eps)


def layer_norm(input: Tensor, normalized_shape, weight=None, bias=None, eps: float = 1e-05,
               cudnn_enable: bool = True) -> Tensor:
    return _F().layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input: Tensor, num_groups: int, weight=None, bias=None, eps: float = 1e-05,
               cudnn_enabled: bool = True) -> Tensor:
    return _F().group_norm(input, num_groups, weight, bias, eps)


def native_layer_norm(input: Tensor, normalized_shape, weight, bias, eps: float) -> tuple:
    """(output, mean, rstd); mean and rstd keep the normalized dims as size 1."""
    dims = tuple(builtins.range(-1, -len(normalized_shape) - 1, -1))
    out = _F().layer_norm(input, normalized_shape, weight, bias, eps)
    mean = input.mean(dims, keepdim=True)
    rstd = (input.var(dims, unbiased=False, keepdim=True) + eps).rsqrt()
    return out, mean, rstd


def embedding(weight: Tensor, indices: Tensor, padding_idx: int = -1,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """torch.embedding(weight, indices): a negative ``padding_idx`` means none, as in ATen."""
    return _F().embedding(indices, weight, padding_idx if padding_idx >= 0 else None,
                          scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


# -- activations ------------------------------------------------------------------------------

def celu(input: Tensor, alpha: float = 1.0) -> Tensor:
    return _F().celu(input, alpha)


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:
    return _F().celu_(input, alpha)


def selu(input: Tensor) -> Tensor:
    return _F().selu(input)


def selu_(input: Tensor) -> Tensor:
    return _F().selu_(input)


def threshold(input: Tensor, threshold: float, value: float, *, out=None) -> Tensor:
    return _into(out, _F().threshold(input, threshold, value))


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:
    return _F().threshold_(input, threshold, value)


def prelu(input: Tensor, weight: Tensor) -> Tensor:
    return _F().prelu(input, weight)


def hardshrink(input: Tensor, lambd: float = 0.5, *, out=None) -> Tensor:
    return _into(out, _F().hardshrink(input, lambd))


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    return _F().pixel_shuffle(input, upscale_factor)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    return _F().pixel_unshuffle(input, downscale_factor)


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    return _F().channel_shuffle(input, groups)


native_channel_shuffle = channel_shuffle


def pdist(input: Tensor, p: float = 2.0) -> Tensor:
    return _F().pdist(input, p)


# -- losses with ATen's int reduction -----------------------------------------------------------

def kl_div(input: Tensor, target: Tensor, reduction: int = _NONE, *, log_target: bool = False) -> Tensor:
    red = _reduction(reduction, "kl_div")  # ATen's mean is the plain mean: no batchmean warning
    loss = _F().kl_div(input, target, reduction="none" if red == "mean" else red,
                       log_target=log_target)
    return loss.mean() if red == "mean" else loss


def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = _NONE) -> Tensor:
    return _F().margin_ranking_loss(input1, input2, target, margin,
                                    reduction=_reduction(reduction, "margin_ranking_loss"))


def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = _NONE) -> Tensor:
    return _F().cosine_embedding_loss(input1, input2, target, margin,
                                      reduction=_reduction(reduction, "cosine_embedding_loss"))


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: int = _NONE, zero_infinity: bool = False) -> Tensor:
    return _F().ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                         _reduction(reduction, "ctc_loss"), zero_infinity)


def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0,
                         reduction: int = _NONE) -> Tensor:
    return _F().hinge_embedding_loss(input, target, margin,
                                     reduction=_reduction(reduction, "hinge_embedding_loss"))


def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2.0, eps: float = 1e-06, swap: bool = False,
                        reduction: int = _NONE) -> Tensor:
    return _F().triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                    reduction=_reduction(reduction, "triplet_margin_loss"))


def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:
    return _F().poisson_nll_loss(input, target, log_input, full, eps=eps,
                                 reduction=_reduction(reduction, "poisson_nll_loss"))


def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight=None, pos_weight=None,
                                     reduction: int = _NONE) -> Tensor:
    return _F().binary_cross_entropy_with_logits(
        input, target, weight, reduction=_reduction(reduction, "binary_cross_entropy_with_logits"),
        pos_weight=pos_weight)


# -- padding and convolution --------------------------------------------------------------------

def constant_pad_nd(input: Tensor, pad, value=0) -> Tensor:
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    return _F().pad(input, tuple(pad), value=value)


def convolution(input: Tensor, weight: Tensor, bias, stride, padding, dilation, transposed: bool,
                output_padding, groups: int) -> Tensor:
    """ATen's one convolution entry: the spatial rank comes from ``weight``."""
    F = _F()
    nd = weight.ndim - 2
    if nd not in (1, 2, 3):
        raise RuntimeError(f"convolution: expected a 3-D, 4-D or 5-D weight, but got "
                           f"{weight.ndim}-D weight of size {list(weight.shape)}")
    if transposed:
        fn = getattr(F, f"conv_transpose{nd}d")
        return fn(input, weight, bias, tuple(stride), tuple(padding), tuple(output_padding), groups,
                  tuple(dilation))
    return getattr(F, f"conv{nd}d")(input, weight, bias, tuple(stride), tuple(padding),
                                    tuple(dilation), groups)


# -- in-place forms and plain functions of Tensor methods ----------------------------------------

def detach(input: Tensor) -> Tensor:
    return input.detach()


def detach_(input: Tensor) -> Tensor:
    return input.detach_()


def fill(input: Tensor, value) -> Tensor:
    """A new tensor like ``input`` filled with ``value`` (a number or a 0-d tensor)."""
    if builtins.isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"fill only supports 0-dimension value tensor but got tensor with "
                           f"{value.ndim} dimensions.")
    if builtins.isinstance(value, Tensor):  # copy_ carries the gradient to value
        return conversion.copy_(creation.empty_like(input), value.expand(input.shape))
    return conversion.fill_(creation.empty_like(input), value)


def fill_(input: Tensor, value) -> Tensor:
    return input.fill_(value)


def zero_(input: Tensor) -> Tensor:
    return input.zero_()


def clamp_(input: Tensor, min=None, max=None) -> Tensor:
    return input.clamp_(min, max)


def clip_(input: Tensor, min=None, max=None) -> Tensor:
    return input.clip_(min, max)


def clamp_max_(input: Tensor, max) -> Tensor:
    return input.clamp_max_(max)


def clamp_min_(input: Tensor, min) -> Tensor:
    return input.clamp_min_(min)


def xlogy_(input: Tensor, other) -> Tensor:
    return input.xlogy_(other)


def gcd_(input: Tensor, other: Tensor) -> Tensor:
    return input.gcd_(other)


def lcm_(input: Tensor, other: Tensor) -> Tensor:
    return input.lcm_(other)


def logit_(input: Tensor, eps=None) -> Tensor:
    return input.logit_(eps)


def nan_to_num_(input: Tensor, nan: float = 0.0, posinf=None, neginf=None) -> Tensor:
    return input.nan_to_num_(nan, posinf, neginf)


def index_put_(input: Tensor, indices, values: Tensor, accumulate: bool = False) -> Tensor:
    return input.index_put_(indices, values, accumulate)


def split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    return input.split_with_sizes(split_sizes, dim)


def unsafe_split(input: Tensor, split_size, dim: int = 0, *, axis=None) -> tuple:
    """split without the views' aliasing checks in torch; here the same views."""
    return views.split(input, split_size, dim if axis is None else axis)


def unsafe_split_with_sizes(input: Tensor, split_sizes, dim: int = 0) -> tuple:
    return input.split_with_sizes(split_sizes, dim)


def unsafe_chunk(input: Tensor, chunks: int, dim: int = 0, *, axis=None) -> tuple:
    return views.chunk(input, chunks, dim if axis is None else axis)


def row_stack(tensors, *, out=None) -> Tensor:
    """An alias of vstack."""
    return views.vstack(tensors, out=out)


def range(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
          requires_grad: bool = False) -> Tensor:
    """Deprecated in torch: like arange, but ``end`` is included and the default dtype is the
    default float dtype even for integer arguments."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its "
                  "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
                  "which produces values in [start, end).", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    dtype = dtype or (out.dtype if out is not None else _dt.get_default_dtype())
    n = math.floor((end - start) / step) + 1
    res = (creation.arange(n, dtype=_dt.float64, device=device) * step + start).to(dtype)
    res.requires_grad_(requires_grad)
    return _into(out, res)


# -- predicates and metadata --------------------------------------------------------------------

def is_conj(input: Tensor) -> bool:
    return input.is_conj()


def is_neg(input: Tensor) -> bool:
    """jtorch has no lazy negation bit: never set."""
    return False


def resolve_neg(input: Tensor) -> Tensor:
    return input


def is_signed(input: Tensor) -> bool:
    return input.is_signed()


def is_storage(obj) -> bool:
    """jtorch has no typed storages; an untyped storage is not one of torch's storage types."""
    return False


def is_same_size(input: Tensor, other: Tensor) -> bool:
    return tuple(input.shape) == tuple(other.shape)


def is_inference(input: Tensor) -> bool:
    """jtorch tensors made under inference_mode are ordinary tensors without grad."""
    return False


def get_device(input: Tensor) -> int:
    return input.get_device()


def typename(obj) -> str:
    """'torch.FloatTensor' for a float32 CPU tensor; the qualified type name otherwise."""
    if builtins.isinstance(obj, Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qual = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    if not builtins.isinstance(obj, type):
        module, qual = type(obj).__module__, type(obj).__qualname__
    return qual if module in ("", "builtins") else f"{module}.{qual}"


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An empty tensor of ``size`` whose memory holds its dims in ``physical_layout`` order."""
    size, perm = tuple(size), tuple(physical_layout)
    if builtins.len(perm) != builtins.len(size) or sorted(perm) != list(builtins.range(len(size))):
        raise RuntimeError("Number of dimensions in size does not match the length of the "
                           "physical_layout; or physical_layout is not a permutation")
    phys = creation.empty([size[p] for p in perm], dtype=dtype, device=device)
    inverse = [perm.index(d) for d in builtins.range(len(size))]
    res = phys.permute(inverse)
    return res.requires_grad_(requires_grad) if requires_grad else res


def _into(out, res: Tensor) -> Tensor:
    """``out=``: the result resized into ``out`` (torch's rule for composite ops)."""
    if out is None:
        return res
    from ..dispatch import check_cast, resize_out

    check_cast(res.dtype, out.dtype)
    if tuple(out.shape) != tuple(res.shape):
        resize_out(out, tuple(res.shape))
    return conversion.copy_(out, res)


# -- *_copy: the views as new contiguous tensors ------------------------------------------------

def _copy_variant(name: str, view):
    def fn(input: Tensor, *args, out=None, **kwargs):
        res = view(input, *args, **kwargs)
        if builtins.isinstance(res, (tuple, list)):
            res = tuple(r.clone(memory_format=_dt.contiguous_format) for r in res)
            if out is not None:
                for o, r in zip(out, res):
                    _into(o, r)
                return None
            return res
        return _into(out, res.clone(memory_format=_dt.contiguous_format))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: ``{name[:-5]}`` as a new contiguous tensor (differentiable)."
    globals()[name] = fn
    __all__.append(name)
    return fn


def _no_complex_grad(x):
    """torch's view_as_complex_copy records no gradient for its complex result: it refuses."""
    from .. import dispatch

    if builtins.isinstance(x, Tensor) and dispatch.needs_grad((x,)):
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation for "
                           "outputs with complex dtype.")
    return x


for _name, _view in [
    ("alias_copy", lambda x: x.view(x.shape)),
    ("as_strided_copy", lambda x, size, stride, storage_offset=None:
        x.as_strided(size, stride, storage_offset)),
    ("detach_copy", lambda x: x.detach()),
    ("diagonal_copy", lambda x, offset=0, dim1=0, dim2=1: x.diagonal(offset, dim1, dim2)),
    ("expand_copy", lambda x, size, *, implicit=False: x.expand(size)),
    ("permute_copy", lambda x, dims: x.permute(dims)),
    ("select_copy", lambda x, dim, index: x.select(dim, index)),
    ("slice_copy", lambda x, dim=0, start=None, end=None, step=1, *, axis=None:
        x[(slice(None),) * ((dim if axis is None else axis) % builtins.max(x.ndim, 1))
          + (slice(start, end, step),)]),
    ("split_copy", lambda x, split_size, dim=0, *, axis=None:
        views.split(x, split_size, dim if axis is None else axis)),
    ("split_with_sizes_copy", lambda x, split_sizes, dim=0: x.split_with_sizes(split_sizes, dim)),
    ("squeeze_copy", lambda x, *dim, axis=None: x.squeeze(*dim, axis=axis)),
    ("t_copy", lambda x: x.t()),
    ("transpose_copy", lambda x, dim0, dim1: x.transpose(dim0, dim1)),
    ("unbind_copy", lambda x, dim=0, *, axis=None: x.unbind(dim if axis is None else axis)),
    ("unfold_copy", lambda x, dimension, size, step: x.unfold(dimension, size, step)),
    ("unsqueeze_copy", lambda x, dim=None, *, axis=None: x.unsqueeze(dim, axis=axis)),
    ("view_copy", lambda x, size: x.view(size)),
    ("view_as_real_copy", lambda x: views.view_as_real(x)),
    ("view_as_complex_copy", lambda x: views.view_as_complex(_no_complex_grad(x))),
    ("narrow_copy", lambda x, dim, start, length: x.narrow(dim, start, length)),
]:
    _copy_variant(_name, _view)

del _name, _view
