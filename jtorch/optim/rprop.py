"""``optim.Rprop`` as torch's single-tensor algorithm; a group's updates run in one
multi-tensor kernel call unless ``foreach=False`` (torch has no ``fused`` Rprop)."""

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

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Implements resilient backpropagation: only the sign of the gradient is used; each
    element's step size grows by ``etas[1]`` while the sign holds and shrinks by ``etas[0]``
    (skipping that element's update) when it flips.

    >>> w = jtorch.nn.Parameter(jtorch.ones(2))
    >>> opt = jtorch.optim.Rprop([w], lr=0.1)
    >>> w.grad = jtorch.ones(2); opt.step(); w.detach()
    tensor([0.9000, 0.9000])
    """

    _group_setdefaults: ClassVar[dict] = {"foreach": None, "maximize": False, "differentiable": False,
                          "capturable": False}
    _has_step_state = True

    def __init__(self, params, lr: float | Tensor = 1e-2, etas: tuple = (0.5, 1.2),
                 step_sizes: tuple = (1e-6, 50), *, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _multi_operands(self, group: dict) -> tuple[str, list]:
        return "rprop", []  # (p, g, prev, step_size)

    def _init_state(self, p: Tensor, group: dict) -> dict:
        from ..ops.creation import full_like

        state = self.state[p]
        if len(state) == 0:
            lr = _scalar(group["lr"])
            state["step"] = _step_tensor()
            state["prev"] = _zeros_like(p)
            state["step_size"] = full_like(p, complex(lr, lr) if p.is_complex() else lr)
        return state

    @_use_no_grad
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            etaminus, etaplus = group["etas"]
            step_size_min, step_size_max = group["step_sizes"]
            scalars = (etaminus, etaplus, step_size_min, step_size_max, 1,
                       bool(group["maximize"]))
            batch = _multi_tensor(group)
            update, incr = (_update, _incr_step) if batch is None else (batch.add,
                                                                        _incr_step_fast)
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                state = self._init_state(p, group)
                incr(state["step"])
                update("rprop", (p, g, state["prev"], state["step_size"]), scalars)
            if batch is not None:
                batch.run()
        return loss
