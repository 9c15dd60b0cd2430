"""``optim.SGD``: stochastic gradient descent with momentum, dampening, Nesterov momentum,
weight decay and maximize, as torch's single-tensor algorithm."""

from __future__ import annotations

from ..tensor import Tensor
from .optimizer import (
    Optimizer,
    _check_foreach_fused,
    _check_fused,
    _eval_closure,
    _multi_tensor,
    _scalar,
    _update,
    _use_no_grad,
)

__all__ = ["SGD"]


class SGD(Optimizer):
    """Implements stochastic gradient descent (optionally with momentum).

    The momentum buffer starts as the first (decayed) gradient, as in torch. The update of a
    group's parameters is one multi-tensor kernel call unless ``foreach=False``.

    >>> w = jtorch.nn.Parameter(jtorch.ones(2))
    >>> opt = jtorch.optim.SGD([w], lr=0.1, momentum=0.9)
    >>> w.grad = jtorch.ones(2); opt.step(); w.detach()
    tensor([0.9000, 0.9000])
    """

    _group_setdefaults = {"nesterov": False, "maximize": False, "foreach": None,
                          "differentiable": False, "fused": False}
    _sparse_grads = True

    def __init__(self, params, lr: float | Tensor = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float | Tensor = 0, nesterov: bool = False,
                 *, maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        _check_foreach_fused(defaults)

    def _multi_operands(self, group: dict) -> tuple[str, list]:
        return "sgd", [2] if _scalar(group["momentum"]) == 0 else []  # (p, g, buf)

    @_use_no_grad
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            lr, momentum = _scalar(group["lr"]), _scalar(group["momentum"])
            wd, damp1 = _scalar(group["weight_decay"]), 1 - _scalar(group["dampening"])
            nesterov, maximize = bool(group["nesterov"]), bool(group["maximize"])
            scalars = {first: (lr, wd, momentum, damp1, nesterov, maximize, first)
                       for first in (False, True)}
            batch = _multi_tensor(group)
            update = _update if batch is None else batch.add
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if group["fused"] and getattr(self, "_need_device_dtype_check_for_fused", True):
                    _check_fused(p)
                    self._need_device_dtype_check_for_fused = False
                if g.is_sparse:  # embedding's sparse gradient
                    if wd != 0:  # torch's decay adds the dense parameter to it
                        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, "
                                           "sparse) instead.")
                    if momentum == 0:  # only the rows it holds move
                        p.add_(g, alpha=lr if maximize else -lr)
                        continue
                    g = g.to_dense()  # the buffer and the decay are dense (torch's sum, too)
                buf = None
                first = False
                if momentum != 0:
                    state = self.state[p]
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        from ..ops.creation import empty_like

                        buf = state["momentum_buffer"] = empty_like(p)
                        first = True
                update("sgd", (p, g, buf), scalars[first])
            if batch is not None:
                batch.run()
        return loss
