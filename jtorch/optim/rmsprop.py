"""``optim.RMSprop`` (plain, centered, with momentum) as torch's single-tensor algorithm; a
group's updates run in one multi-tensor kernel call unless ``foreach=False`` (torch has no
``fused`` RMSprop)."""

from __future__ import annotations

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

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """Implements RMSprop: the square root of the running mean square is taken before ``eps``
    is added, as in torch.

    >>> w = jtorch.nn.Parameter(jtorch.ones(2))
    >>> opt = jtorch.optim.RMSprop([w], lr=0.01)
    >>> w.grad = jtorch.ones(2); opt.step(); w.detach()
    tensor([0.9000, 0.9000])
    """

    _group_setdefaults = {"momentum": 0, "centered": False, "foreach": None, "maximize": False,
                          "differentiable": False, "capturable": False}
    _has_step_state = True

    def __init__(self, params, lr: float | Tensor = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False, foreach: bool | None = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _multi_operands(self, group: dict) -> tuple[str, list]:
        absent = [] if group["centered"] else [3]
        absent += [4] if _scalar(group["momentum"]) <= 0 else []
        return "rmsprop", absent  # (p, g, square_avg, grad_avg, momentum_buffer)

    def _init_state(self, p: Tensor, group: dict) -> dict:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["square_avg"] = _zeros_like(p)
            if group["momentum"] > 0:
                state["momentum_buffer"] = _zeros_like(p)
            if group["centered"]:
                state["grad_avg"] = _zeros_like(p)
        return state

    @_use_no_grad
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            lr, alpha, eps = _scalar(group["lr"]), _scalar(group["alpha"]), group["eps"]
            wd, momentum = _scalar(group["weight_decay"]), _scalar(group["momentum"])
            centered, maximize = bool(group["centered"]), bool(group["maximize"])
            scalars = (-lr, alpha, 1 - alpha, 1, eps, wd, momentum, maximize, centered)
            batch = _multi_tensor(group)
            update, incr = (_update, _incr_step) if batch is None else (batch.add,
                                                                        _incr_step_fast)
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                state = self._init_state(p, group)
                incr(state["step"])
                update("rmsprop", (p, g, state["square_avg"], state.get("grad_avg") if centered
                                   else None,
                                   state["momentum_buffer"] if momentum > 0 else None), scalars)
            if batch is not None:
                batch.run()
        return loss
