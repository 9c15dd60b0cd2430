"""``optim.Adagrad`` as torch's single-tensor algorithm (state is made at construction); a
group's updates run in one multi-tensor kernel call unless ``foreach=False``."""

from __future__ import annotations

from ..tensor import Tensor
from .optimizer import (
    Optimizer,
    _check_foreach_fused,
    _check_fused,
    _eval_closure,
    _incr_step,
    _incr_step_fast,
    _multi_tensor,
    _scalar,
    _step_tensor,
    _update,
    _use_no_grad,
)

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    """Implements Adagrad: the step ``lr / (1 + (t - 1) lr_decay)`` divides each gradient by
    the square root of its accumulated squares plus ``eps``.

    >>> w = jtorch.nn.Parameter(jtorch.ones(2))
    >>> opt = jtorch.optim.Adagrad([w], lr=0.1)
    >>> w.grad = jtorch.ones(2); opt.step(); w.detach()
    tensor([0.9000, 0.9000])
    """

    _sparse_grads = True

    _group_setdefaults = {"foreach": None, "maximize": False, "differentiable": False,
                          "fused": None}
    _has_step_state = True

    def __init__(self, params, lr: float | Tensor = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "fused": fused}
        super().__init__(params, defaults)
        _check_foreach_fused(defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, group)

    def _multi_operands(self, group: dict) -> tuple[str, list]:
        return "adagrad", []  # (p, g, sum)

    def _init_state(self, p: Tensor, group: dict) -> dict:
        from ..ops.creation import full_like

        state = self.state[p]
        if len(state) == 0:
            init = self.defaults["initial_accumulator_value"]
            state["step"] = _step_tensor(fused=group["fused"])
            state["sum"] = full_like(p, complex(init, init) if p.is_complex() else init)
        return state

    @_use_no_grad
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            lr, lr_decay = _scalar(group["lr"]), _scalar(group["lr_decay"])
            wd, eps, maximize = _scalar(group["weight_decay"]), group["eps"], group["maximize"]
            batch = _multi_tensor(group)
            update, incr = (_update, _incr_step) if batch is None else (batch.add,
                                                                        _incr_step_fast)
            by_step: dict = {}  # the scalars of each step count (the group's params share one)
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if group["fused"] and getattr(self, "_need_device_dtype_check_for_fused", True):
                    _check_fused(p)
                    self._need_device_dtype_check_for_fused = False
                state = self._init_state(p, group)
                step = incr(state["step"])
                scalars = by_step.get(step)
                if scalars is None:
                    clr = lr / (1 + (step - 1) * lr_decay)
                    scalars = by_step[step] = (-clr, eps, wd, bool(maximize))
                if g.is_sparse:
                    _sparse_update(p, g, state["sum"], *scalars)
                    continue
                update("adagrad", (p, g, state["sum"]), scalars)
            if batch is not None:
                batch.run()
        return loss


def _sparse_update(p: Tensor, g: Tensor, state_sum: Tensor, neg_clr: float, eps: float,
                   wd: float, maximize: bool) -> None:
    """torch's sparse Adagrad step: only the rows the (coalesced) gradient holds change."""
    from ..sparse._coo import sparse_coo_tensor

    if wd != 0:
        raise RuntimeError("weight_decay option is not compatible with sparse gradients")
    g = (-g if maximize else g).coalesce()
    idx, vals = g._indices(), g._values()
    size = tuple(g.shape)
    state_sum.add_(sparse_coo_tensor(idx, vals.pow(2), size))
    std = state_sum.sparse_mask(g)._values().sqrt_().add_(eps)
    p.add_(sparse_coo_tensor(idx, vals / std, size), alpha=neg_clr)
