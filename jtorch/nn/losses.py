"""torch.nn.functional's loss functions.

Each loss is written the way ATen writes it (``LossNLL.cpp``, ``Loss.cpp``): nll_loss is
ATen's ops (``kernels/defs/loss.py``): ``nll_loss_forward`` over (N, C) and (C,) inputs and
``nll_loss2d_forward`` over (N, C, H, W), which the other K-dimensional inputs are viewed as;
``binary_cross_entropy`` is an op with torch's gradient rule, whose
``(x - t) / max(x (1 - x), 1e-12)`` stays finite at 0 and 1 where the composed log would not.
The other losses are pointwise expressions followed by the shared reduction, compositions of
jtorch ops that autograd follows.

>>> import jtorch
>>> F = jtorch.nn.functional
>>> F.cross_entropy(jtorch.zeros(2, 4), jtorch.tensor([0, 3]))
tensor(1.3863)
"""

from __future__ import annotations

import math
import warnings

from .. import dispatch
from .. import dtypes as _dt
from ..amp import state as _amp
from ..kernels.defs import loss as L
from ..ops import pointwise as _pw
from ..ops import reduction as _red
from ..ops.creation import arange, ones_like
from ..ops.distance import pairwise_distance
from ..tensor import Tensor

__all__ = [
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "cosine_embedding_loss",
    "cross_entropy", "ctc_loss", "gaussian_nll_loss", "hinge_embedding_loss", "huber_loss",
    "kl_div", "l1_loss", "linear_cross_entropy", "margin_ranking_loss", "mse_loss",
    "multi_margin_loss", "multilabel_margin_loss", "multilabel_soft_margin_loss", "nll_loss", "poisson_nll_loss", "smooth_l1_loss",
    "soft_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
]


# -- reductions (torch's _Reduction) ------------------------------------------------------------

def _get_enum(reduction: str) -> str:
    if reduction == "elementwise_mean":
        warnings.warn("reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
                      "instead.", stacklevel=3)
        return "mean"
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _legacy(size_average, reduce, emit_warning: bool = True) -> str:
    """The reduction the deprecated ``size_average`` / ``reduce`` flags name."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    ret = "mean" if size_average and reduce else "sum" if reduce else "none"
    if emit_warning:
        warnings.warn(f"size_average and reduce args will be deprecated, please use "
                      f"reduction='{ret}' instead.", stacklevel=3)
    return ret


def _reduction(size_average, reduce, reduction: str) -> str:
    if size_average is not None or reduce is not None:
        return _legacy(size_average, reduce)
    return _get_enum(reduction)


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _size_warning(input: Tensor, target: Tensor) -> None:
    if target.size() != input.size():
        warnings.warn(f"Using a target size ({target.size()}) that is different to the input size "
                      f"({input.size()}). This will likely lead to incorrect results due to "
                      f"broadcasting. Please ensure they have the same size.", stacklevel=3)


def _weighted(loss: Tensor, input: Tensor, weight: Tensor | None, reduction: str,
              normalise: bool) -> Tensor:
    """The ``weight=`` branch of mse/l1/huber: mean is sum / sum(weight) (``normalise``) or the
    plain mean (huber), as torch's functional.py writes it."""
    if weight.size() != input.size():
        raise ValueError("Weights and input must have the same size.")
    loss = loss * weight
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight.sum() if normalise else loss.mean()
    raise ValueError(f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'.")


# -- class-index losses -------------------------------------------------------------------------

def _class_weights(weight: Tensor | None, safe: Tensor, valid: Tensor, dtype) -> Tensor:
    """Each target's class weight, 0 where ignored."""
    if weight is None:
        return valid.to(dtype)
    w = weight.gather(0, safe.reshape(-1)).reshape(safe.shape)
    return _pw.where(valid, w, 0.0)


def _nll(input: Tensor, target: Tensor, weight: Tensor | None, reduction: str,
         ignore_index: int) -> Tensor:
    """torch's nll_loss_nd: the (N, C) / (C,) op, the (N, C, H, W) op, and other K-dim inputs
    viewed as (N, C, 1, -1) for the latter."""
    nd = input._a.ndim
    if nd <= 2:
        return dispatch.call(L.nll_loss_op, input, target, weight, reduction=reduction,
                             ignore_index=ignore_index)
    if nd == 4:
        return dispatch.call(L.nll_loss2d_op, input, target, weight, reduction=reduction,
                             ignore_index=ignore_index)
    L.check_nll(input, target, weight)
    n, c = input.shape[0], input.shape[1]
    x = input.contiguous()
    x = x.view(n, c, 1, -1) if input.numel() else x.view(n, c, 0, 0)
    t = target.contiguous()
    t = t.view(n, 1, -1) if target.numel() else t.view(n, 0, 0)
    out = dispatch.call(L.nll_loss2d_op, x, t, weight, reduction=reduction,
                        ignore_index=ignore_index)
    return out.view((n, *input.shape[2:])) if reduction == "none" else out


def nll_loss(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
             ignore_index: int = -100, reduce=None, reduction: str = "mean") -> Tensor:
    """-input[n, target[n], ...] * weight[target[n]] (input holds log-probabilities); 'mean'
    divides by the summed weights of the targets that are not ``ignore_index``."""
    if _amp.on:
        input, weight = _amp.fp32(input, weight)
    reduction = _reduction(size_average, reduce, reduction)
    return _nll(input, target, weight, reduction, ignore_index)


def _weight_view(weight: Tensor, nd: int) -> Tensor:
    return weight if nd == 1 else weight.reshape([1, -1] + [1] * (nd - 2))


def _check_smoothing(label_smoothing: float) -> None:
    if label_smoothing > 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing:g}")


def _ce_probs(input: Tensor, target: Tensor, weight, reduction: str, ignore_index: int,
              label_smoothing: float) -> Tensor:
    """Class-probability targets: -sum(target * log_softmax(input)) over the class dim."""
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"Expected floating point type for target with class probabilities, "
                           f"got {dispatch.torch_name(target.dtype)}")
    if ignore_index >= 0:
        raise RuntimeError("ignore_index is not supported for floating point target")
    cd = 0 if input.dim() == 1 else 1
    n_classes = input.shape[cd]
    if weight is not None and (weight.dim() != 1 or weight.numel() != n_classes):
        raise RuntimeError(f"cross_entropy: weight tensor should be defined either for all "
                           f"{n_classes} classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    logp = _red.log_softmax(input, cd)
    if label_smoothing > 0.0:
        _check_smoothing(label_smoothing)
        target = target * (1 - label_smoothing) + label_smoothing / n_classes
    prod = logp * target
    if weight is not None:
        prod = prod * _weight_view(weight, input.dim())
    if reduction == "none":
        return -prod.sum(cd)
    if reduction == "sum":
        return -prod.sum()
    return -prod.sum() / (input.numel() // n_classes)


def _ce_smoothed(input: Tensor, target: Tensor, weight, reduction: str, ignore_index: int,
                 label_smoothing: float) -> Tensor:
    """(1 - eps) * nll + eps / C * (the uniform-target loss), as ATen's label-smoothing path."""
    _check_smoothing(label_smoothing)
    cd = 0 if input.dim() == 1 else 1
    logp = _red.log_softmax(input, cd)
    nll = _nll(logp, target, weight, reduction, ignore_index)
    n_classes = logp.shape[cd]
    if weight is not None:
        smooth = -(logp * _weight_view(weight, input.dim())).sum(cd)
    else:
        smooth = -logp.sum(cd)
    valid = target != ignore_index
    smooth = smooth.masked_fill(~valid, 0.0)
    if reduction == "sum":
        smooth = smooth.sum()
    elif reduction == "mean":
        safe = target.long().masked_fill(~valid, 0)
        smooth = smooth.sum() / _class_weights(weight, safe, valid, input.dtype).sum()
    return nll * (1 - label_smoothing) + smooth * (label_smoothing / n_classes)


def cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None, size_average=None,
                  ignore_index: int = -100, reduce=None, reduction: str = "mean",
                  label_smoothing: float = 0.0) -> Tensor:
    """nll_loss(log_softmax(input, class dim), target): class indices (with ``ignore_index``) or,
    when ``target`` has input's shape, class probabilities; input is (C), (N, C) or
    (N, C, d1, ...).

    >>> import jtorch
    >>> jtorch.nn.functional.cross_entropy(jtorch.zeros(2, 4), jtorch.tensor([0, 3]))
    tensor(1.3863)
    """
    if _amp.on:
        input, target, weight = _amp.fp32(input, target, weight)
    reduction = _reduction(size_average, reduce, reduction)
    if input.shape == target.shape:
        return _ce_probs(input, target, weight, reduction, ignore_index, label_smoothing)
    if label_smoothing > 0.0:
        return _ce_smoothed(input, target, weight, reduction, ignore_index, label_smoothing)
    return _nll(_red.log_softmax(input, 0 if input.dim() == 1 else 1), target, weight, reduction,
                ignore_index)


@_amp.fp32_op
def multi_margin_loss(input: Tensor, target: Tensor, p: int = 1, margin: float = 1.0,
                      weight: Tensor | None = None, size_average=None, reduce=None,
                      reduction: str = "mean") -> Tensor:
    """sum_{i != y} max(0, margin - x[y] + x[i])^p / C per sample (times weight[y])."""
    reduction = _reduction(size_average, reduce, reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    nd = input.dim()
    x = input.reshape(1, -1) if nd <= 1 else input
    n_classes = x.shape[1]
    if not (nd <= 1 and target.numel() == 1 or nd == 2 and target.dim() <= 1
            and target.numel() == x.shape[0]):
        raise RuntimeError(f"multi_margin_loss: target tensor should be 1-D with size equal to "
                           f"the number of input samples (batch size). Expected target size "
                           f"[{x.shape[0]}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if weight is not None and (weight.dim() > 1 or weight.numel() != n_classes):
        raise RuntimeError(f"inconsistent weight size, expected {n_classes} but got "
                           f"{list(weight.shape)}")
    t = target.long().reshape(-1, 1)
    if not t.is_meta and ((t < 0) | (t >= n_classes)).any().item():  # data: no check on meta
        raise IndexError("target out of range")
    xy = x.gather(1, t)
    z = (x - xy + margin).clamp_min(0)
    if p == 2:
        z = z * z
    if weight is not None:
        z = z * weight.gather(0, t.reshape(-1)).unsqueeze(1)
    other = arange(n_classes, device=input.device).unsqueeze(0) != t
    loss = z.masked_fill(~other, 0.0).sum(1) / n_classes
    if nd <= 1 and reduction == "none":
        loss = loss.reshape(target.shape if nd == 1 and target.dim() else ())
    return _reduce(loss, reduction)


# -- elementwise losses -------------------------------------------------------------------------

def mse_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
             reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """(input - target)^2; with ``weight``, 'mean' is sum(w * l) / sum(w)."""
    if _amp.on:
        input, target, weight = _amp.fp32(input, target, weight)
    _size_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce)
    diff = input - target
    if weight is not None:
        return _weighted(diff * diff, input, weight, reduction, True)
    _float_loss(diff, "mse_cpu")
    return _reduce(diff * diff, _get_enum(reduction))


def _float_loss(x: Tensor, kernel: str) -> None:
    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{dispatch.torch_name(x.dtype)}'")


@_amp.fp32_op
def l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
            reduction: str = "mean", weight: Tensor | None = None) -> Tensor:
    """|input - target|; with ``weight``, 'mean' is sum(w * l) / sum(w)."""
    _size_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce)
    err = (input - target).abs()
    if weight is not None:
        return _weighted(err, input, weight, reduction, True)
    return _reduce(err, _get_enum(reduction))


@_amp.fp32_op
def smooth_l1_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """0.5 z^2 / beta where z = |input - target| < beta, z - beta / 2 elsewhere."""
    _size_warning(input, target)
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce)
    reduction = _get_enum(reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    diff = input - target
    z = diff.abs()
    if beta == 0.0:
        return _reduce(z, reduction)
    return _reduce(_pw.where(z < beta, diff * diff * (0.5 / beta), z - 0.5 * beta), reduction)


@_amp.fp32_op
def huber_loss(input: Tensor, target: Tensor, reduction: str = "mean", delta: float = 1.0,
               weight: Tensor | None = None) -> Tensor:
    """0.5 z^2 where z = |input - target| < delta, delta * (z - delta / 2) elsewhere."""
    _size_warning(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    diff = input - target
    z = diff.abs()
    loss = _pw.where(z < delta, diff * diff * 0.5, (z - 0.5 * delta) * delta)
    if weight is not None:
        return _weighted(loss, input, weight, reduction, False)
    return _reduce(loss, _get_enum(reduction))


def binary_cross_entropy(input: Tensor, target: Tensor, weight: Tensor | None = None,
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """-(t log x + (1 - t) log(1 - x)) with each log clamped at -100, as torch does."""
    if _amp.on:  # CPU autocast runs it in float32; CUDA's bans it
        _amp.ban_cuda(input, "binary_cross_entropy")
        input, target, weight = _amp.fp32(input, target, weight, devices=("cpu",))
    reduction = _reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Using a target size ({target.size()}) that is different to the input "
                         f"size ({input.size()}) is deprecated. Please ensure they have the same "
                         f"size.")
    if weight is not None:
        weight = weight.expand(_broadcast(target.shape, weight.shape))
    return dispatch.call(L.binary_cross_entropy_op, input, target, weight, reduction=reduction)


def _broadcast(a: tuple, b: tuple) -> tuple:
    from ..shape import broadcast_shapes

    return broadcast_shapes(a, b)


@_amp.fp32_op
def binary_cross_entropy_with_logits(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """(1 - t) x - (1 + (pos_weight - 1) t) logsigmoid(x), the stable form ATen uses."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.size() != input.size():
        raise ValueError(f"Target size ({target.size()}) must be the same as input size "
                         f"({input.size()})")
    logsig = dispatch.pointwise(_logsigmoid_op(), (input,))
    if pos_weight is not None:
        loss = (1 - target) * input - ((pos_weight - 1) * target + 1) * logsig
    else:
        loss = (1 - target) * input - logsig
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _logsigmoid_op():
    from ..kernels.defs import unary as U

    return U.logsigmoid_op


@_amp.fp32_op
def kl_div(input: Tensor, target: Tensor, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """target * (log target - input) pointwise (input holds log-probabilities); 'batchmean'
    divides the sum by the batch size."""
    if size_average is not None or reduce is not None:
        red = _legacy(size_average, reduce)
    else:
        if reduction == "mean":
            warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                          "support size.'batchmean' divides only by the batch size, and aligns "
                          "with the KL div math definition.'mean' will be changed to behave the "
                          "same as 'batchmean' in the next major release.", stacklevel=2)
        red = "sum" if reduction == "batchmean" else _get_enum(reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        loss = _pw.xlogy(target, target) - target * input
    out = _reduce(loss, red)
    if reduction == "batchmean" and input.dim() != 0:
        out = out / input.shape[0]
    return out


@_amp.fp32_op
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool = True, full: bool = False,
                     size_average=None, eps: float = 1e-8, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """exp(input) - target * input (log_input) or input - target * log(input + eps), plus
    Stirling's approximation of log(target!) for targets > 1 when ``full``."""
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce)
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not a valid value for reduction")
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + (target * (2 * math.pi)).log() * 0.5
        loss = loss + stirling.masked_fill(target <= 1, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input: Tensor, target: Tensor, var, full: bool = False, eps: float = 1e-6,
                      reduction: str = "mean") -> Tensor:
    """0.5 (log max(var, eps) + (input - target)^2 / max(var, eps)) (+ 0.5 log 2 pi if full);
    the clamp passes var's gradient through unchanged, as torch's in-place no-grad clamp."""
    if isinstance(var, float):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        var = ones_like(input) * var
    if var.size() != input.size():
        if input.size()[:-1] == var.size():
            var = var.unsqueeze(-1)
        elif input.dim() == var.dim() and sum(
                y for x, y in zip(input.size(), var.size()) if x != y) == 1:
            pass
        else:
            raise ValueError("var is of incorrect size")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    if (var < 0).any().item():  # reads values, as torch's check does (it fails on meta too)
        raise ValueError("var has negative entry/entries")
    var = var + (var.detach().clamp_min(eps) - var.detach())
    loss = (var.log() + (input - target) ** 2 / var) * 0.5
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


# -- margin and embedding losses ---------------------------------------------------------------

@_amp.fp32_op
def soft_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                     reduction: str = "mean") -> Tensor:
    """log(1 + exp(-target * input))."""
    reduction = _reduction(size_average, reduce, reduction)
    return _reduce(_pw.log1p((-input * target).exp()), reduction)


def multilabel_soft_margin_loss(input: Tensor, target: Tensor, weight: Tensor | None = None,
                                size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """-(t logsigmoid(x) + (1 - t) logsigmoid(-x)) averaged over the classes."""
    if size_average is not None or reduce is not None:
        reduction = _legacy(size_average, reduce)
    lsig = _logsigmoid_op()
    loss = -(target * dispatch.pointwise(lsig, (input,))
             + (1 - target) * dispatch.pointwise(lsig, (-input,)))
    if weight is not None:
        loss = loss * weight
    class_dim = input.dim() - 1
    loss = loss.sum(class_dim) / input.shape[class_dim]
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(reduction + " is not valid")
    return _reduce(loss, reduction)


@_amp.fp32_op
def multilabel_margin_loss(input: Tensor, target: Tensor, size_average=None, reduce=None,
                           reduction: str = "mean") -> Tensor:
    """sum over target classes j and other classes i of max(0, 1 - (x[j] - x[i])), over the
    number of classes; a row's targets are its indices up to the first -1."""
    reduction = _reduction(size_average, reduce, reduction)
    if target.dtype is not _dt.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")
    if input.dim() not in (1, 2) or target.shape != input.shape:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")
    one = input.dim() == 1
    x, t = (input.unsqueeze(0), target.unsqueeze(0)) if one else (input, target)
    c = x.shape[1]
    listed = (t != -1).to(_dt.int64).cumprod(1).bool()  # up to the first -1
    hits = (t.unsqueeze(-1) == arange(c, device=x.device)) & listed.unsqueeze(-1)  # (N, K, C)
    count = hits.to(x.dtype).sum(1)  # how often each class is a target
    is_target = count > 0
    margins = (1 - x.unsqueeze(-1) + x.unsqueeze(1)).clamp_min(0)  # [n, j, i]: j target, i not
    pairs = count.unsqueeze(-1) * (~is_target).to(x.dtype).unsqueeze(1)
    loss = (margins * pairs).sum((1, 2)) / c
    if one:
        loss = loss.squeeze(0)
    return _reduce(loss, reduction)


@_amp.fp32_op
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                        size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """max(0, -target * (input1 - input2) + margin)."""
    reduction = _reduction(size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise RuntimeError(f"margin_ranking_loss : All input tensors should have same dimension "
                           f"but got sizes: input1: {input1.size()}, input2: {input2.size()}, "
                           f"target: {target.size()} ")
    return _reduce((-target * (input1 - input2) + margin).clamp_min(0), reduction)


@_amp.fp32_op
def hinge_embedding_loss(input: Tensor, target: Tensor, margin: float = 1.0, size_average=None,
                         reduce=None, reduction: str = "mean") -> Tensor:
    """input where target == 1, max(0, margin - input) where target == -1."""
    reduction = _reduction(size_average, reduce, reduction)
    zeros = input * 0
    margin_clamp = (margin - input).clamp_min(0)
    out = _pw.where(target != 1, margin_clamp, zeros) + _pw.where(target != -1, input, zeros)
    return _reduce(out, reduction)


@_amp.fp32_op
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0,
                          size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """1 - cos(x1, x2) where target == 1, max(0, cos(x1, x2) - margin) where target == -1."""
    reduction = _reduction(size_average, reduce, reduction)
    td = target.dim()
    if td not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = 2 if td == 1 else 1
    if input1.dim() != want or input2.dim() != want:
        raise RuntimeError(f"{td}D target tensor expects {want}D input tensors, but found inputs "
                           f"with sizes {list(input1.shape)} and {list(input2.shape)}.")
    prod = (input1 * input2).sum(td)
    mag1 = (input1 * input1).sum(td) + 1e-12
    mag2 = (input2 * input2).sum(td) + 1e-12
    cos = prod / (mag1 * mag2).sqrt()
    zeros = cos * 0
    out = _pw.where(target == 1, 1 - cos, zeros) + \
        _pw.where(target == -1, (cos - margin).clamp_min(0), zeros)
    return _reduce(out, reduction)


@_amp.fp32_op
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False, size_average=None,
                        reduce=None, reduction: str = "mean") -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)) with the pairwise p-norm distance d."""
    reduction = _reduction(size_average, reduce, reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    a, pd, nd = anchor.dim(), positive.dim(), negative.dim()
    if not a == pd == nd:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {pd}D, "
                           f"and negative {nd}D inputs")
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = _pw.minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce((d_pos - d_neg + margin).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor: Tensor, positive: Tensor, negative: Tensor, *,
                                      distance_function=None, margin: float = 1.0,
                                      swap: bool = False, reduction: str = "mean") -> Tensor:
    """triplet_margin_loss with any distance function (pairwise_distance by default)."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    if margin <= 0:
        raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater than 0, "
                         f"got {margin} instead")
    a, pd, nd = anchor.dim(), positive.dim(), negative.dim()
    if not a == pd == nd:
        raise RuntimeError(f"The anchor, positive, and negative tensors are expected to have the "
                           f"same number of dimensions, but got: anchor {a}D, positive {pd}D, "
                           f"and negative {nd}D inputs")
    dist = distance_function if distance_function is not None else pairwise_distance
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_neg = _pw.minimum(d_neg, dist(positive, negative))
    return _reduce((d_pos - d_neg + margin).clamp_min(0), reduction)


# -- ctc_loss ----------------------------------------------------------------------------------

def _ctc_lengths(lengths, what: str, got: tuple) -> tuple:
    """A lengths argument (a tuple or list of ints, or an integral tensor read as one)."""
    if isinstance(lengths, Tensor):
        if lengths.dtype.category != 1:
            raise RuntimeError(f"{what} must be integral")
        return tuple(lengths.reshape(-1).tolist())
    if isinstance(lengths, (tuple, list)) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in lengths):
        return tuple(int(v) for v in lengths)
    names = ", ".join("Tensor" if isinstance(a, Tensor) else type(a).__name__ for a in got)
    raise TypeError(f"ctc_loss() received an invalid combination of arguments - got ({names}), "
                    f"but expected (Tensor log_probs, Tensor targets, tuple of ints input_lengths, "
                    f"tuple of ints target_lengths, ...) or the same with Tensor lengths")


@_amp.fp32_op
def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths, target_lengths, blank: int = 0,
             reduction: str = "mean", zero_infinity: bool = False) -> Tensor:
    """The Connectionist Temporal Classification loss of log-probabilities (T, N, C) (or
    (T, C) unbatched) against padded (N, S) or concatenated targets; 'mean' divides each loss
    by its target length (at least 1), then averages over the batch, as torch does.

    >>> import jtorch
    >>> lp = jtorch.zeros(3, 1, 2).log_softmax(2)
    >>> jtorch.nn.functional.ctc_loss(lp, jtorch.tensor([[1]]), (3,), (1,), reduction="sum")
    tensor(1.0986)
    """
    reduction = _get_enum(reduction)
    got = (log_probs, targets, input_lengths, target_lengths, blank, reduction, zero_infinity)
    il = _ctc_lengths(input_lengths, "input_lengths", got)
    tl = _ctc_lengths(target_lengths, "target_lengths", got)
    batched = log_probs.dim() == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    if lp.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    tg = targets if targets.dtype is _dt.int64 else targets.to(_dt.int64)
    res, _ = dispatch.call(L.ctc_loss_op, lp, tg, input_lengths=il, target_lengths=tl,
                           blank=blank, zero_infinity=zero_infinity)
    if zero_infinity:
        res = _pw.where(res == math.inf, 0.0, res)
    if reduction == "mean":
        from ..ops.creation import tensor

        lengths = tensor(tl, dtype=res.dtype, device=res.device).clamp_min(1)
        return (res / lengths).mean()
    if reduction == "sum":
        return res.sum()
    return res if batched else res.squeeze(0)


# -- linear_cross_entropy ----------------------------------------------------------------------

def _lce_chunked(input: Tensor, linear_weight: Tensor, target: Tensor, linear_bias, weight,
                 reduction: str, ignore_index: int, options) -> Tensor:
    """cross_entropy(linear(input)) over row chunks of ``options.batch_chunk_size``, so the
    (N, C) logits are never whole; 'mean' divides by the counted targets' summed weight."""
    from ..ops.linalg import linear
    from ..ops.pointwise import where

    acc = options.acc_dtype
    dt = input.dtype
    if acc is not None and acc is not dt:
        input, linear_weight = input.to(acc), linear_weight.to(acc)
        linear_bias = None if linear_bias is None else linear_bias.to(acc)
        weight = None if weight is None else weight.to(acc)
    part = "none" if reduction == "none" else "sum"
    size = options.batch_chunk_size
    pieces = []
    for lo in range(0, input.shape[0], size):
        logits = linear(input[lo:lo + size], linear_weight, linear_bias)
        pieces.append(cross_entropy(logits, target[lo:lo + size], weight, reduction=part,
                                    ignore_index=ignore_index))
    if reduction == "none":
        from ..ops.views import cat

        out = cat(pieces) if len(pieces) > 1 else pieces[0]
        return out.to(dt)
    total = pieces[0]
    for p in pieces[1:]:
        total = total + p
    if reduction == "mean":
        valid = target != ignore_index
        if weight is None:
            denom = valid.sum().to(total.dtype)
        else:
            safe = where(valid, target, 0)
            denom = _class_weights(weight, safe, valid, total.dtype).sum()
        total = total / denom
    return total.to(dt)


def linear_cross_entropy(input: Tensor, linear_weight: Tensor, target: Tensor, *,
                         linear_bias: Tensor | None = None, weight: Tensor | None = None,
                         reduction: str = "mean", ignore_index: int | None = None,
                         label_smoothing: float = 0.0, options=None) -> Tensor:
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...): ``linear_weight``
    is (C, in) or (C, d1, ..., in) for a K-dimensional loss. With ``options``
    (``nn.LinearCrossEntropyOptions``) the batch runs in chunks, as torch's chunked path."""
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batches = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and {linear_weight.shape[-1]}, "
                           f"respectively")
    n_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (n_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(n_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batches:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, "
                           f"(N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*batches, n_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains probabilities")
    ignore_index = ignore_index if ignore_index is not None else -100
    chunked = (not out_features and reduction in ("mean", "sum", "none")
               and label_smoothing == 0.0 and target.dtype is _dt.int64)
    if options is not None and not chunked:
        warnings.warn(f"linear_cross_entropy: ``options`` ignored; chunked path needs reduction "
                      f"in {{'mean','sum','none'}}, label_smoothing == 0, target.dtype == int64, "
                      f"out_features == (). Got reduction={reduction!r}, "
                      f"label_smoothing={label_smoothing}, target.dtype={target.dtype}, "
                      f"out_features={out_features}, tracing=False, linear_bias.shape="
                      f"{tuple(linear_bias.shape) if linear_bias is not None else None}.",
                      stacklevel=2)
    if options is not None and chunked:
        rows = input if batches else input.unsqueeze(0)
        tg = target if batches else target.unsqueeze(0)
        opts = options._adjust(num_batches=rows.shape[0], in_features=in_features,
                               num_classes=n_classes, dtype=input.dtype, device=input.device)
        res = _lce_chunked(rows, linear_weight, tg, linear_bias, weight, reduction,
                           ignore_index, opts)
        return res if batches else res.squeeze(0)
    from ..ops.linalg import linear

    if out_features:
        flat = math.prod(out_features) * n_classes
        linear_weight = linear_weight.reshape(flat, in_features)
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(flat)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)
