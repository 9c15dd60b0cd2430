"""``optim.Adamax`` as torch's single-tensor algorithm; a group's updates run in one
multi-tensor kernel call unless ``foreach=False`` (torch has no ``fused`` Adamax)."""

from __future__ import annotations

from typing import ClassVar

from ..tensor import Tensor
from .optimizer import (
    Optimizer,
    _eval_closure,
    _incr_step,
    _incr_step_fast,
    _multi_tensor,
    _scalar,
    _step_tensor,
    _update,
    _use_no_grad,
    _zeros_like,
)

__all__ = ["Adamax"]


class Adamax(Optimizer):
    """Implements Adamax: Adam with the second moment replaced by a decaying infinity norm,
    which needs no bias correction.

    >>> w = jtorch.nn.Parameter(jtorch.ones(2))
    >>> opt = jtorch.optim.Adamax([w], lr=0.1)
    >>> w.grad = jtorch.ones(2); opt.step(); w.detach()
    tensor([0.9000, 0.9000])
    """

    _group_setdefaults: ClassVar[dict] = {"foreach": None, "maximize": False, "differentiable": False,
                          "capturable": False}
    _has_step_state = True

    def __init__(self, params, lr: float | Tensor = 2e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _multi_operands(self, group: dict) -> tuple[str, list]:
        return "adamax", []  # (p, g, exp_avg, exp_inf)

    def _init_state(self, p: Tensor) -> dict:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["exp_avg"] = _zeros_like(p)
            state["exp_inf"] = _zeros_like(p)
        return state

    @_use_no_grad
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = (_scalar(b) for b in group["betas"])
            lr, wd, eps = _scalar(group["lr"]), _scalar(group["weight_decay"]), group["eps"]
            maximize = bool(group["maximize"])
            batch = _multi_tensor(group)
            update, incr = (_update, _incr_step) if batch is None else (batch.add,
                                                                        _incr_step_fast)
            by_step: dict = {}  # the scalars of each step count (the group's params share one)
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                state = self._init_state(p)
                step = incr(state["step"])
                scalars = by_step.get(step)
                if scalars is None:
                    clr = lr / (1 - beta1 ** step)
                    scalars = by_step[step] = (-clr, 1 - beta1, 1, beta2, eps, wd, maximize)
                update("adamax", (p, g, state["exp_avg"], state["exp_inf"]), scalars)
            if batch is not None:
                batch.run()
        return loss
