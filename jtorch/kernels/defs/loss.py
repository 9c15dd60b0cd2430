"""Losses with ATen kernels of their own: ``nll_loss`` over (N, C) or (C,) inputs,
``nll_loss2d`` over (N, C, H, W), their backward ops, ``binary_cross_entropy``, and
``_ctc_loss`` with its backward (alpha / beta recursions in ``kernels/cpu/ctc.py``).

The nll ops have one output, the loss (ATen's ``nll_loss_forward`` also returns the summed
weight of the counted targets, which the 'mean' gradient divides by: the backward kernel
recounts it from the targets instead, so the forward records no second, non-differentiable
output whose zero gradient backward would have to make). The backward is an op whose gradient
with respect to the incoming gradient is the forward again, so a gradient of a gradient
follows. Targets are validated inside the kernels (data): meta tensors skip that check, as in
torch. The other losses of ``nn.functional`` are compositions of jtorch ops (``nn/losses.py``).
"""

from __future__ import annotations

import numpy as np

from ... import dispatch
from ... import dtypes as _dt
from ...shape import broadcast_shapes
from ..cpu import loss as _lk
from ..plan import Out, Plan, common_device, memo
from ..registry import defvjp, op
from ._lazy import lazy

_REDUCTIONS = ("none", "mean", "sum")


# -- nll_loss -----------------------------------------------------------------------------------

def check_nll(input, target, weight) -> int:
    """torch's nll_loss_nd / nll_loss / nll_loss2d checks; returns the number of classes."""
    ishape, tshape = list(input._a.shape), list(target._a.shape)
    nd, tnd = len(ishape), len(tshape)
    if nd < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {nd})")
    if nd != 1 and tnd and ishape[0] != tshape[0]:
        raise ValueError(f"Expected input batch_size ({ishape[0]}) to match target batch_size "
                         f"({tshape[0]}).")
    if nd <= 2:
        if tnd > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        if not (nd == 1 and tnd == 0) and (not tshape or ishape[0] != tshape[0]):
            raise RuntimeError(f"size mismatch (got input: {ishape}, target: {tshape})")
    elif nd == 4:
        if tnd != 3:
            raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {tnd}")
        if ishape[0] != tshape[0] or ishape[2:] != tshape[1:]:
            raise RuntimeError(f"size mismatch (got input: {ishape} , target: {tshape}")
    elif tshape[1:] != ishape[2:]:
        raise RuntimeError(f"Expected target size {[ishape[0]] + ishape[2:]}, got {tshape}")
    n_classes = ishape[0 if nd == 1 else 1]
    if weight is not None and (weight._a.ndim != 1 or weight._a.size != n_classes):
        raise RuntimeError(f"weight tensor should be defined either for all {n_classes} classes "
                           f"or no classes but got weight tensor of shape: {list(weight.shape)}")
    if target.dtype not in (_dt.int64, _dt.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{dispatch.torch_name(target.dtype)}")
    return n_classes


def _nll_dtype(input, weight, kernel: str) -> _dt.dtype:
    d = input.dtype
    if weight is not None and weight.dtype is not d:
        raise RuntimeError(f"expected scalar type {dispatch.torch_name(d)} but found "
                           f"{dispatch.torch_name(weight.dtype)}")
    if d.category != 2:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{dispatch.torch_name(d)}\'')
    return d


def _reduction(reduction: str) -> str:
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


_plans: dict = {}  # the nll plans of CPU arrays, by geometry, dtypes and arguments
_ND = np.ndarray


def _cpu_key(rule, tensors: tuple, reduction, ignore_index):
    """The memo key of a call whose tensors (None aside) are all CPU arrays (their device is
    then CPU, and their shapes and dtypes decide every check), else None."""
    if type(reduction) is not str or type(ignore_index) is not int:
        return None
    key = [rule, reduction, ignore_index]
    for t in tensors:
        if t is None:
            key.append(None)
            continue
        a = getattr(t, "_a", None)
        if a.__class__ is not _ND:
            return None
        key.append(a.shape)
        key.append(t.dtype)
    return tuple(key)


def _memoised(rule, tensors: tuple, reduction, ignore_index) -> Plan:
    """``rule(*tensors, reduction, ignore_index)``, kept for calls on CPU arrays."""
    key = _cpu_key(rule, tensors, reduction, ignore_index)
    plan = None if key is None else _plans.get(key)
    if plan is None:
        plan = rule(*tensors, reduction, ignore_index)
        if key is not None:
            memo(_plans, key, plan, 1024)
    return plan


def _nll_meta(input, target, weight, *, reduction: str, ignore_index: int) -> Plan:
    """The nll_loss plan, memoised for CPU arrays (a training step asks the same each time)."""
    return _memoised(_nll_plan, (input, target, weight), reduction, ignore_index)


def _nll_plan(input, target, weight, reduction: str, ignore_index: int) -> Plan:
    dev = common_device(input, target, weight)
    if input._a.ndim > 2:
        raise RuntimeError("input tensor should be 1D or 2D")
    check_nll(input, target, weight)
    d = _nll_dtype(input, weight, "nll_loss_out_frame")
    shape = target._a.shape if reduction == "none" and input._a.ndim == 2 else ()
    return Plan(Out(shape, d), {"reduction": _reduction(reduction), "ignore_index": ignore_index},
                dev)


def _nll2d_meta(input, target, weight, *, reduction: str, ignore_index: int) -> Plan:
    dev = common_device(input, target, weight)
    if target._a.ndim != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got "
                           f"targets of dimension: {target._a.ndim}")
    if input._a.ndim != 4:
        raise RuntimeError(f"only batches of spatial inputs supported (4D tensors), but got "
                           f"input of dimension: {input._a.ndim}")
    check_nll(input, target, weight)
    d = _nll_dtype(input, weight, "nll_loss2d_forward_out_frame")
    shape = target._a.shape if reduction == "none" else ()
    return Plan(Out(shape, d), {"reduction": _reduction(reduction), "ignore_index": ignore_index},
                dev)


def _nll_backward_meta(grad, input, target, weight, *, reduction: str,
                       ignore_index: int) -> Plan:
    """The gradient with respect to ``input``: zeros except at the targets (contiguous)."""
    return _memoised(_nll_backward_plan, (grad, input, target, weight), reduction, ignore_index)


def _nll_backward_plan(grad, input, target, weight, reduction: str, ignore_index: int) -> Plan:
    dev = common_device(grad, input, target, weight)
    return Plan(Out(input._a.shape, input.dtype),
                {"reduction": reduction, "ignore_index": ignore_index}, dev)


def _nll_vjp(c, g):
    if not c.needs[0]:
        return None, None, None
    x, target, weight = c.args
    return dispatch.call(c.op.pair, g, x, target, weight, **c.kw), None, None


def _nll_backward_vjp(c, gg):
    """The backward is linear in the incoming gradient: its gradient is the forward again."""
    _, _, target, weight = c.args
    return dispatch.call(c.op.pair, gg, target, weight, **c.kw), None, None, None


def _nll_pair(name: str, grad: str, meta, cpu, bcpu):
    fwd = op(name, "extern", meta, cpu)
    bwd = op(name + "_backward", "extern", _nll_backward_meta, bcpu)
    fwd.pair, bwd.pair = bwd, fwd
    defvjp(fwd, _nll_vjp, "012", name=f"{grad}Backward0")
    defvjp(bwd, _nll_backward_vjp, "23", name=f"{grad}BackwardBackward0")
    return fwd, bwd


# (input, target, weight | None) -> loss {reduction, ignore_index}
# backward: (grad_output, input, target, weight | None) -> grad_input (the same kw)
nll_loss_op, nll_loss_backward_op = _nll_pair(
    "nll_loss", "NllLoss", _nll_meta, _lk.nll_loss_cpu, _lk.nll_loss_backward_cpu)
nll_loss2d_op, nll_loss2d_backward_op = _nll_pair(
    "nll_loss2d", "NllLoss2D", _nll2d_meta, _lk.nll_loss2d_cpu, _lk.nll_loss2d_backward_cpu)


# -- binary_cross_entropy -----------------------------------------------------------------------

def _bce_meta(input, target, weight, *, reduction: str) -> Plan:
    dev = common_device(input, target, weight)
    d = input.dtype
    if d.category != 2:
        raise NotImplementedError(f'"binary_cross_entropy" not implemented for '
                                  f"'{dispatch.torch_name(d)}'")
    if target.dtype is not d:
        raise RuntimeError(f"Found dtype {dispatch.torch_name(target.dtype)} but expected "
                           f"{dispatch.torch_name(d)}")
    if weight is not None:  # the loss is multiplied by the weight in place: it must fit
        b = tuple(broadcast_shapes(input._a.shape, weight._a.shape))
        if b != tuple(input._a.shape):
            raise RuntimeError(f"output with shape {list(input._a.shape)} doesn't match the "
                               f"broadcast shape {list(b)}")
    if reduction == "none":
        shape = input._a.shape
        # the loss is ``empty_like(input)`` (then multiplied by the weight), as in ATen
        out = Out(shape, d, dispatch.result_strides((input,), shape))
    else:
        out = Out((), d)
    return Plan(out, {"reduction": _reduction(reduction)}, dev)


def _bce_vjp(c, g):
    x, t, w = c.args
    if c.kw["reduction"] == "mean":
        g = g / x.numel()
    gx = gt = None
    if c.needs[0]:
        gx = g * (x - t) / ((1 - x) * x).clamp_min(1e-12)
        gx = gx if w is None else gx * w
    if c.needs[1]:
        gt = g * ((-x).log1p() - x.log())
        gt = gt if w is None else gt * w
    return gx, gt, None


# (input, target, weight | None) -> loss {reduction}; the kernel checks 0 <= input <= 1
binary_cross_entropy_op = op("binary_cross_entropy", "extern", _bce_meta,
                             _lk.binary_cross_entropy_cpu)
defvjp(binary_cross_entropy_op, _bce_vjp, "012", name="BinaryCrossEntropyBackward0")


# -- ctc_loss ----------------------------------------------------------------------------------

_CK = "jtorch.kernels.cpu.ctc"  # imported at the first call (_lazy.py)
_CTC = "ctc_loss_allocate_outputs"


def _ctc_checks(log_probs, targets, il: tuple, tl: tuple, blank: int) -> int:
    """ATen's ``ctc_loss_allocate_outputs`` checks (shapes and lengths only, no data); returns
    the longest target."""
    lnd, tnd = log_probs._a.ndim, targets._a.ndim
    if lnd != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {lnd}-dimensional tensor for "
                           f"argument #1 'log_probs' (while checking arguments for {_CTC})")
    if not 1 <= tnd < 3:
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {tnd}-dimensional tensor for "
                           f"argument #2 'targets' (while checking arguments for {_CTC})")
    _, batch, labels = log_probs._a.shape
    if not 0 <= blank < labels:
        raise RuntimeError("blank must be in label range")
    if len(il) != batch:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tl) != batch:
        raise RuntimeError("target_lengths must be of size batch_size")
    for n in tl:
        if n < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value "
                               f"{n} (while checking arguments for {_CTC})")
    longest = max(tl, default=0)
    tshape = targets._a.shape
    want = sum(tl) if tnd == 1 else batch
    if tshape[0] != want:
        raise RuntimeError(f"Expected tensor to have size {want} at dimension 0, but got size "
                           f"{tshape[0]} for argument #2 'targets' (while checking arguments for "
                           f"{_CTC})")
    if tnd == 2 and tshape[1] < longest:
        raise RuntimeError(f"Expected tensor to have size at least {longest} at dimension 1, but "
                           f"got size {tshape[1]} for argument #2 'targets' (while checking "
                           f"arguments for {_CTC})")
    steps = log_probs._a.shape[0]
    for n in il:
        if n < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value "
                               f"{n} (while checking arguments for {_CTC})")
        if n > steps:
            raise RuntimeError(f"Expected input_lengths to have value at most {steps}, but got "
                               f"value {n} (while checking arguments for {_CTC})")
    return longest


def _ctc_dtype(log_probs) -> _dt.dtype:
    d = log_probs.dtype
    if d not in (_dt.float32, _dt.float64):
        raise NotImplementedError(f"\"ctc_loss_cpu\" not implemented for "
                                  f"'{dispatch.torch_name(d)}'")
    return d


def _ctc_kw(input_lengths, target_lengths, blank: int, zero_infinity: bool) -> dict:
    return {"input_lengths": tuple(input_lengths), "target_lengths": tuple(target_lengths),
            "blank": int(blank), "zero_infinity": bool(zero_infinity)}


def _ctc_meta(log_probs, targets, *, input_lengths: tuple, target_lengths: tuple, blank: int,
              zero_infinity: bool) -> Plan:
    dev = common_device(log_probs, targets)
    d = _ctc_dtype(log_probs)
    if targets.dtype is not _dt.int64:
        raise RuntimeError(f"Expected tensor for argument #2 'targets' to have scalar type Long; "
                           f"but got {dispatch.torch_name(targets.dtype)} instead (while checking "
                           f"arguments for {_CTC})")
    longest = _ctc_checks(log_probs, targets, input_lengths, target_lengths, blank)
    steps, batch, _ = log_probs._a.shape
    out = (Out((batch,), d), Out((batch, steps, 2 * longest + 1), d))
    return Plan(out, _ctc_kw(input_lengths, target_lengths, blank, zero_infinity), dev)


def _ctc_backward_meta(grad, log_probs, targets, nll, log_alpha, *, input_lengths: tuple,
                       target_lengths: tuple, blank: int, zero_infinity: bool) -> Plan:
    dev = common_device(grad, log_probs, targets, nll, log_alpha)
    return Plan(Out(log_probs._a.shape, _ctc_dtype(log_probs)),
                _ctc_kw(input_lengths, target_lengths, blank, zero_infinity), dev)


def _ctc_vjp(c, g):
    """The gradient of the per-item losses (the log_alpha output takes none, as in ATen)."""
    log_probs, targets = c.args
    nll, log_alpha = c.out
    return dispatch.call(ctc_loss_backward_op, g[0], log_probs, targets, nll, log_alpha,
                         **c.kw), None


# (log_probs (T, N, C), targets int64 (N, S) or (sum(target_lengths),))
#   -> (neg_log_likelihood (N,), log_alpha (N, T, 2 * max(target_lengths) + 1))
#   {input_lengths, target_lengths (tuples), blank, zero_infinity}
ctc_loss_op = op("_ctc_loss", "extern", _ctc_meta, lazy(_CK, "ctc_loss_cpu"))
# (grad (N,), log_probs, targets, neg_log_likelihood, log_alpha) -> grad log_probs (the same
# kw); no derivative of its own, as in torch
ctc_loss_backward_op = op("_ctc_loss_backward", "extern", _ctc_backward_meta,
                          lazy(_CK, "ctc_loss_backward_cpu"))
defvjp(ctc_loss_op, _ctc_vjp, "01o", name="CtcLossBackward0")
ctc_loss_op.pair, ctc_loss_backward_op.pair = ctc_loss_backward_op, ctc_loss_op
