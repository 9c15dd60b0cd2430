"""``optim.ASGD`` as torch's single-tensor algorithm: ``eta`` and ``mu`` are 0-d tensors in
state (of the default dtype, so the kernel reads them rounded as torch does) and are updated
from the step count after each step; a group's updates run in one multi-tensor kernel call
unless ``foreach=False``."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor
from .optimizer import (
    Optimizer,
    _eval_closure,
    _incr_step,
    _incr_step_fast,
    _multi_tensor,
    _scalar,
    _scalar_dtype,
    _step_tensor,
    _update,
    _use_no_grad,
    _zeros_like,
)

__all__ = ["ASGD"]


def _set_state(t: Tensor, value: float, fast: bool) -> None:
    """torch's ``t.copy_(torch.as_tensor(value))`` on a 0-d state tensor: the value is rounded
    to the default dtype first, even where ``t`` is float64 (a state dict loaded onto float64
    params casts ``eta`` and ``mu`` to float64). ``fast`` writes the array outside dispatch,
    as ``_incr_step_fast``."""
    value = float((np.float64 if _scalar_dtype() is _dt.float64 else np.float32)(value))
    a = t._a
    if fast and a.__class__ is np.ndarray and a.ndim == 0 and a.flags.writeable:
        a[()] = value
        t._vc[0] += 1
    else:
        t.fill_(value)


class ASGD(Optimizer):
    """Implements averaged SGD: SGD with a decaying step ``eta`` whose iterates are averaged
    into ``ax`` once the step count passes ``t0``.

    >>> w = jtorch.nn.Parameter(jtorch.ones(2))
    >>> opt = jtorch.optim.ASGD([w], lr=0.1)
    >>> w.grad = jtorch.ones(2); opt.step(); w.detach()
    tensor([0.9000, 0.9000])
    """

    _group_setdefaults: ClassVar[dict] = {"foreach": None, "maximize": False, "differentiable": False,
                          "capturable": False}
    _has_step_state = True

    def __init__(self, params, lr: float | Tensor = 1e-2, lambd: float = 1e-4,
                 alpha: float = 0.75, t0: float = 1e6, weight_decay: float = 0,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False, capturable: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            for p in group["params"]:
                p_state = self.state.get(p, [])
                for key in ("eta", "mu") if len(p_state) != 0 else ():
                    if not isinstance(p_state[key], Tensor):
                        p_state[key] = _step_tensor(float(p_state[key]))

    def _multi_operands(self, group: dict) -> tuple[str, list]:
        return "asgd", []  # (p, g, ax)

    def _init_state(self, p: Tensor, group: dict) -> dict:
        state = self.state[p]
        if len(state) == 0:
            state["step"] = _step_tensor()
            state["eta"] = _step_tensor(_scalar(group["lr"]))
            state["mu"] = _step_tensor(1.0)
            state["ax"] = _zeros_like(p)
        return state

    @_use_no_grad
    def step(self, closure=None):
        """Perform a single optimization step."""
        loss = _eval_closure(closure)
        for group in self.param_groups:
            lr, lambd, alpha = _scalar(group["lr"]), group["lambd"], group["alpha"]
            t0, wd, maximize = group["t0"], _scalar(group["weight_decay"]), group["maximize"]
            batch = _multi_tensor(group)
            update, incr = (_update, _incr_step) if batch is None else (batch.add,
                                                                        _incr_step_fast)
            by_key: dict = {}  # the scalars of each (eta, mu) the group's params have
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                state = self._init_state(p, group)
                step = incr(state["step"])
                eta, mu = state["eta"].item(), state["mu"].item()
                scalars = by_key.get((eta, mu))
                if scalars is None:
                    scalars = by_key[eta, mu] = (1 - lambd * eta, -eta, mu, wd, bool(maximize),
                                                 mu != 1)
                update("asgd", (p, g, state["ax"]), scalars)
                fast = batch is not None
                _set_state(state["eta"], lr / ((1 + lambd * lr * step) ** alpha), fast)
                _set_state(state["mu"], 1 / max(1, step - t0), fast)
            if batch is not None:
                batch.run()
        return loss
