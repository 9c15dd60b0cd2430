"""``optim.Adafactor`` as torch's single-tensor algorithm, in tensor ops: its factored second
moment (row and column means of the squared gradient) and its update clipping are reductions,
not one elementwise loop, so it has no fused kernel. ``foreach`` is accepted and runs the
same per-parameter algorithm."""

from __future__ import annotations

from typing import ClassVar

from .. import dtypes as _dt
from ..tensor import Tensor
from .optimizer import (
    Optimizer,
    _eval_closure,
    _incr_step,
    _scalar,
    _step_tensor,
    _use_no_grad,
    _zeros_like,
)

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    """Implements Adafactor: the second moment of a matrix (or a batch of them) is kept as its
    row and column means, so the state is sublinear in the parameter size; the step is
    relative to the parameter's RMS and clipped to RMS ``d``.

    >>> w = jtorch.nn.Parameter(jtorch.ones(2))
    >>> opt = jtorch.optim.Adafactor([w], lr=0.1)
    >>> w.grad = jtorch.ones(2); opt.step(); w.detach()
    tensor([0.9000, 0.9000])
    """

    _group_setdefaults: ClassVar[dict] = {"foreach": None}
    _has_step_state = True

    def __init__(self, params, lr: float | Tensor = 1e-2, beta2_decay: float = -0.8,
                 eps: tuple = (None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: bool | None = None, maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": eps, "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def _init_state(self, p: Tensor, g: Tensor) -> dict:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor()
            if g.dim() > 1:
                row_shape = list(g.shape)
                row_shape[-1] = 1
                state["row_var"] = g.new_zeros(row_shape)
                col_shape = list(g.shape)
                col_shape[-2] = 1
                state["col_var"] = g.new_zeros(col_shape)
            else:
                state["variance"] = _zeros_like(g)
        return state

    @_use_no_grad
    def step(self, closure=None):
        """Perform a single optimization step."""
        from ..ops.reduction import norm

        loss = _eval_closure(closure)
        for group in self.param_groups:
            lr, wd, d = _scalar(group["lr"]), group["weight_decay"], group["d"]
            eps1, eps2 = group["eps"]
            beta2_decay, maximize = group["beta2_decay"], group["maximize"]
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                if g.is_sparse:
                    raise RuntimeError("Adafactor does not support sparse gradients")
                state = self._init_state(p, g)
                grad = -g if maximize else g
                if eps1 is None:  # as torch, the first parameter's dtype sets it for the group
                    eps1 = _dt.finfo(p.dtype).eps
                step = _incr_step(state["step"])
                one_minus_beta2_t = step ** beta2_decay
                rho_t = min(lr, 1 / (step ** 0.5))
                alpha = max(eps2, p.norm(2).item() / (p.numel() ** 0.5)) * rho_t
                if wd != 0:
                    p.mul_(1 - lr * wd)
                if grad.dim() > 1:
                    row_var, col_var = state["row_var"], state["col_var"]
                    row_mean = norm(grad, dim=-1, keepdim=True).square_().div_(grad.size(-1))
                    row_var.lerp_(row_mean, one_minus_beta2_t)
                    col_mean = norm(grad, dim=-2, keepdim=True).square_().div_(grad.size(-2))
                    col_var.lerp_(col_mean, one_minus_beta2_t)
                    var_estimate = row_var @ col_var
                    var_estimate.div_(row_var.mean(dim=-2, keepdim=True).clamp_(min=eps1))
                else:
                    variance = state["variance"]
                    variance.lerp_(grad * grad, one_minus_beta2_t)
                    var_estimate = variance.clone()
                update = var_estimate.clamp_(min=eps1 * eps1).rsqrt_()
                update.mul_(grad)
                denom = max(1.0, update.norm(2).item() / ((update.numel() ** 0.5) * d))
                p.add_(update, alpha=-alpha / denom)
        return loss
