"""``optim.Adam`` and ``optim.AdamW`` as torch's single-tensor algorithm: the step counter is a
tensor in state, bias corrections are computed from it in double precision, and each
parameter's update (weight decay, both moments, the AMSGrad maximum, the step) is one kernel
loop; a group's loops run in one multi-tensor kernel call unless ``foreach=False``."""

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
    _zeros_like,
)

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """Implements the Adam algorithm (AdamW's decoupled weight decay when
    ``decoupled_weight_decay=True``).

    >>> w = jtorch.nn.Parameter(jtorch.ones(2))
    >>> opt = jtorch.optim.Adam([w], lr=0.1)
    >>> w.grad = jtorch.ones(2); opt.step(); w.detach()
    tensor([0.9000, 0.9000])
    """

    _group_setdefaults = {"amsgrad": False, "maximize": False, "foreach": None,
                          "capturable": False, "differentiable": False,
                          "decoupled_weight_decay": False, "fused": None}
    _has_step_state = True

    def _sparse_error(self) -> str:
        return "Adam does not support sparse gradients, please consider SparseAdam instead"

    def __init__(self, params, lr: float | Tensor = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None,
                 decoupled_weight_decay: bool = False) -> None:
        if isinstance(lr, Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and "
                                 "foreach=True")
            if lr.numel() != 1:
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
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for i in (0, 1):
            if isinstance(betas[i], Tensor) and betas[i].numel() != 1:
                raise ValueError(f"Tensor betas[{i}] must be 1-element")
        betas = tuple(b.squeeze() if isinstance(b, Tensor) and b.dim() != 0 else b
                      for b in betas)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)
        _check_foreach_fused(defaults)

    def _multi_operands(self, group: dict) -> tuple[str, list]:
        return "adam", [] if group["amsgrad"] else [4]  # (p, g, m, v, vmax)

    def _init_state(self, p: Tensor, group: dict) -> dict:
        state = self.state[p]
        if len(state) == 0:
            if group["fused"]:
                _check_fused(p)
            state["step"] = _step_tensor(fused=group["fused"])
            state["exp_avg"] = _zeros_like(p)
            state["exp_avg_sq"] = _zeros_like(p)
            if group["amsgrad"]:
                state["max_exp_avg_sq"] = _zeros_like(p)
        return state

    @_use_no_grad
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = (_scalar(b) for b in group["betas"])
            lr, wd, eps = _scalar(group["lr"]), _scalar(group["weight_decay"]), group["eps"]
            amsgrad, maximize = bool(group["amsgrad"]), bool(group["maximize"])
            decoupled = bool(group["decoupled_weight_decay"]) and wd != 0
            l2 = wd != 0 and not decoupled
            decay = 1 - lr * wd if decoupled else 1
            batch = _multi_tensor(group)
            update, incr = (_update, _incr_step) if batch is None else (batch.add,
                                                                        _incr_step_fast)
            if (group["foreach"] and isinstance(group["lr"], Tensor) and not group["capturable"]
                    and any(p._grad is not None for p in group["params"])):
                raise RuntimeError("lr as a Tensor is not supported for capturable=False and "
                                   "foreach=True")
            by_step: dict = {}  # the scalars of each step count (the group's params share one)
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                state = self._init_state(p, group)
                step = incr(state["step"])
                scalars = by_step.get(step)
                if scalars is None:
                    bias_correction1 = 1 - beta1 ** step
                    bias_correction2 = 1 - beta2 ** step
                    step_size = lr / bias_correction1
                    scalars = by_step[step] = (-step_size, 1 - beta1, 1, beta2, 1 - beta2,
                                               bias_correction2 ** 0.5, eps, l2, wd, decay,
                                               maximize, amsgrad)
                vmax = state["max_exp_avg_sq"] if amsgrad else None
                update("adam", (p, g, state["exp_avg"], state["exp_avg_sq"], vmax), scalars)
            if batch is not None:
                batch.run()
        return loss


class AdamW(Adam):
    """Implements AdamW: Adam whose weight decay does not enter the moments.

    >>> w = jtorch.nn.Parameter(jtorch.ones(2))
    >>> opt = jtorch.optim.AdamW([w], lr=0.1, weight_decay=0.5)
    >>> w.grad = jtorch.ones(2); opt.step(); w.detach()
    tensor([0.8500, 0.8500])
    """

    def __init__(self, params, lr: float | Tensor = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable, differentiable=differentiable,
                         fused=fused, decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True
