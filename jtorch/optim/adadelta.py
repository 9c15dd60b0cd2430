"""``optim.Adadelta`` as torch's single-tensor algorithm; a group's updates run in one
multi-tensor kernel call unless ``foreach=False`` (torch has no ``fused`` Adadelta)."""

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

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """Implements Adadelta: each step is the gradient scaled by the ratio of the running RMS of
    past updates to that of past gradients, so ``lr`` is only a final scale.

    >>> w = jtorch.nn.Parameter(jtorch.ones(2))
    >>> opt = jtorch.optim.Adadelta([w], lr=1.0)
    >>> w.grad = jtorch.ones(2); opt.step(); w.detach()
    tensor([0.9968, 0.9968])
    """

    _group_setdefaults: ClassVar[dict] = {"foreach": None, "maximize": False, "differentiable": False,
                          "capturable": False}
    _has_step_state = True

    def __init__(self, params, lr: float | Tensor = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _multi_operands(self, group: dict) -> tuple[str, list]:
        return "adadelta", []  # (p, g, square_avg, acc_delta)

    def _init_state(self, p: Tensor) -> dict:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["square_avg"] = _zeros_like(p)
            state["acc_delta"] = _zeros_like(p)
        return state

    @_use_no_grad
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            lr, rho = _scalar(group["lr"]), _scalar(group["rho"])
            scalars = (-lr, rho, 1 - rho, group["eps"], _scalar(group["weight_decay"]),
                       bool(group["maximize"]))
            batch = _multi_tensor(group)
            update, incr = (_update, _incr_step) if batch is None else (batch.add,
                                                                        _incr_step_fast)
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                state = self._init_state(p)
                incr(state["step"])
                update("adadelta", (p, g, state["square_avg"], state["acc_delta"]), scalars)
            if batch is not None:
                batch.run()
        return loss
