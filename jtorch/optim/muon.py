"""``optim.Muon``: momentum orthogonalised by Newton-Schulz iterations, for 2-D parameters, in
tensor ops (its step is matrix products, not one elementwise loop). As in torch, the
iterations run in bfloat16."""

from __future__ import annotations

import math
from typing import ClassVar

from ..tensor import Tensor
from .optimizer import Optimizer, _eval_closure, _scalar, _use_no_grad, _zeros_like

__all__ = ["Muon"]

_NS = (3.4445, -4.775, 2.0315)


def _newton_schulz(grad: Tensor, coeffs: tuple, steps: int, eps: float) -> Tensor:
    """The orthogonal factor of ``grad`` (approximately ``U V^T`` of its SVD)."""
    from ..ops.linalg import addmm

    if grad.ndim != 2:
        raise ValueError("Input tensor gradient must be a 2D matrix")
    if len(coeffs) != 3:
        raise ValueError("Coefficients must be a tuple of exactly 3 values")
    a, b, c = coeffs
    x = grad.bfloat16()
    tall = grad.size(0) > grad.size(1)
    if tall:
        x = x.T
    x = x.div(x.norm().clamp(min=eps))  # spectral norm at most 1
    for _ in range(steps):
        gram = x @ x.T
        update = addmm(gram, gram, gram, beta=b, alpha=c)
        x = addmm(x, update, x, beta=a)
    return x.T if tall else x


def _adjust_lr(lr: float, adjust_lr_fn: str | None, shape) -> float:
    A, B = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        ratio = math.sqrt(max(1, A / B))
    elif adjust_lr_fn == "match_rms_adamw":
        ratio = 0.2 * math.sqrt(max(A, B))
    else:
        ratio = 1.0
    return lr * ratio


class Muon(Optimizer):
    """Implements Muon: SGD-momentum whose update is orthogonalised (Newton-Schulz), with
    decoupled weight decay and torch's learning-rate adjustment for rectangular matrices.

    >>> w = jtorch.nn.Parameter(jtorch.eye(2))
    >>> opt = jtorch.optim.Muon([w], lr=0.1)
    >>> w.grad = jtorch.eye(2); opt.step(); w.shape
    torch.Size([2, 2])
    """

    _group_setdefaults: ClassVar[dict] = {}

    def __init__(self, params, lr: float | Tensor = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True, ns_coefficients: tuple = _NS,
                 eps: float = 1e-7, ns_steps: int = 5, adjust_lr_fn: str | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ("original", "match_rms_adamw"):
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": ns_coefficients, "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    @_use_no_grad
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            lr, wd, mu = _scalar(group["lr"]), group["weight_decay"], group["momentum"]
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if p.is_complex():
                    raise RuntimeError("Muon does not support complex parameters")
                if g.is_sparse:
                    raise RuntimeError("Muon does not support sparse gradients")
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = _zeros_like(g)
                if g.ndim != 2:
                    raise ValueError("Param gradient must be a 2D matrix")
                buf = state["momentum_buffer"]
                buf.lerp_(g, 1 - mu)
                update = g.lerp(buf, mu) if group["nesterov"] else buf
                update = _newton_schulz(update, group["ns_coefficients"], group["ns_steps"],
                                        group["eps"])
                p.mul_(1 - lr * wd)
                p.add_(update, alpha=-_adjust_lr(lr, group["adjust_lr_fn"], p.shape))
        return loss
