"""``optim.NAdam`` as torch's single-tensor algorithm: the momentum-cache product ``mu_product``
is a tensor in state beside the step counter, and each parameter's update is one kernel loop;
a group's loops run in one multi-tensor kernel call unless ``foreach=False``."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

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

__all__ = ["NAdam"]


def _mul_state(t: Tensor, value: float, fast: bool) -> float:
    """``t *= value`` on a 0-d state tensor (rounded in its dtype as torch's ``mul_``); returns
    the new value. ``fast`` writes the array outside dispatch, as ``_incr_step_fast``."""
    a = t._a
    if fast and a.__class__ is np.ndarray and a.ndim == 0 and a.flags.writeable:
        a[()] = a * a.dtype.type(value)
        t._vc[0] += 1
        return a.item()
    return t.mul_(value).item()


class NAdam(Optimizer):
    """Implements NAdam: Adam with Nesterov momentum, whose momentum coefficient warms up with
    ``momentum_decay`` (AdamW-style decay with ``decoupled_weight_decay=True``).

    >>> w = jtorch.nn.Parameter(jtorch.ones(2))
    >>> opt = jtorch.optim.NAdam([w], lr=0.1)
    >>> w.grad = jtorch.ones(2); opt.step(); w.detach()
    tensor([0.8944, 0.8944])
    """

    _group_setdefaults: ClassVar[dict] = {"maximize": False, "foreach": None, "capturable": False,
                          "differentiable": False, "decoupled_weight_decay": False}
    _has_step_state = True

    def __init__(self, params, lr: float | Tensor = 2e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
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
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not isinstance(p_state["mu_product"], Tensor):
                    p_state["mu_product"] = _step_tensor(float(p_state["mu_product"]))

    def _multi_operands(self, group: dict) -> tuple[str, list]:
        return "nadam", []  # (p, g, exp_avg, exp_avg_sq)

    def _init_state(self, p: Tensor) -> dict:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["mu_product"] = _step_tensor(1.0)
            state["exp_avg"] = _zeros_like(p)
            state["exp_avg_sq"] = _zeros_like(p)
        return state

    @_use_no_grad
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = (_scalar(b) for b in group["betas"])
            lr, wd, eps = _scalar(group["lr"]), _scalar(group["weight_decay"]), group["eps"]
            momentum_decay, maximize = _scalar(group["momentum_decay"]), bool(group["maximize"])
            decoupled = bool(group["decoupled_weight_decay"]) and wd != 0
            l2 = wd != 0 and not decoupled
            decay = 1 - lr * wd if decoupled else 1
            batch = _multi_tensor(group)
            update, incr = (_update, _incr_step) if batch is None else (batch.add,
                                                                        _incr_step_fast)
            by_key: dict = {}  # the scalars of each (step, mu_product) the group's params have
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                state = self._init_state(p)
                step = incr(state["step"])
                mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
                mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
                mu_product = _mul_state(state["mu_product"], mu, batch is not None)
                scalars = by_key.get((step, mu_product))
                if scalars is None:
                    bias_correction2 = 1 - beta2 ** step
                    c_grad = -lr * (1.0 - mu) / (1.0 - mu_product)
                    c_avg = (-lr * mu_next) / (1.0 - mu_product * mu_next)
                    scalars = by_key[step, mu_product] = (
                        1 - beta1, 1, beta2, 1 - beta2, bias_correction2, eps, c_grad, c_avg,
                        l2, wd, decay, maximize)
                update("nadam", (p, g, state["exp_avg"], state["exp_avg_sq"]), scalars)
            if batch is not None:
                batch.run()
        return loss
