"""``optim.SparseAdam``: torch's lazy Adam for sparse gradients (``nn.Embedding(...,
sparse=True)``'s): the moments and the parameter change only in the rows a step's gradient
holds. Dense gradients raise torch's error."""

from __future__ import annotations

import math

from ..tensor import Tensor
from .optimizer import Optimizer, _eval_closure, _scalar, _use_no_grad

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Implements the lazy Adam of sparse gradients (only the rows a gradient touches are
    updated). Dense gradients are an error, as in torch: use ``Adam`` instead.

    >>> w = jtorch.nn.Parameter(jtorch.ones(2))
    >>> opt = jtorch.optim.SparseAdam([w], lr=0.1)
    >>> opt.step()  # no gradients: nothing to do
    """

    def __init__(self, params, lr: float | Tensor = 1e-3, betas: tuple = (0.9, 0.999),
                 eps: float = 1e-8, maximize: bool = False) -> None:
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize}
        super().__init__(params, defaults)
        sparse_params, complex_params = [], []
        for index, param_group in enumerate(self.param_groups):
            for d_index, d_param in enumerate(param_group["params"]):
                if d_param.is_sparse:
                    sparse_params.append([index, d_index])
                if d_param.is_complex():
                    complex_params.append([index, d_index])
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires "
                             "dense parameter tensors")
        if complex_params:
            raise ValueError(f"Complex params at indices {complex_params}: SparseAdam does not "
                             "support complex parameters")

    _sparse_grads = True

    @_use_no_grad
    def step(self, closure=None):
        """Perform a single optimization step."""
        from ..ops.creation import zeros_like

        loss = _eval_closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            lr, eps, maximize = _scalar(group["lr"]), group["eps"], group.get("maximize", False)
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if not g.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
                state = self.state[p]
                if len(state) == 0:
                    state["step"] = 0
                    state["exp_avg"] = zeros_like(p)
                    state["exp_avg_sq"] = zeros_like(p)
                state["step"] += 1
                _sparse_adam(p, -g if maximize else g, state["exp_avg"], state["exp_avg_sq"],
                             state["step"], lr, beta1, beta2, eps)
        return loss


def _sparse_adam(p: Tensor, g: Tensor, exp_avg: Tensor, exp_avg_sq: Tensor, step: int,
                 lr: float, beta1: float, beta2: float, eps: float) -> None:
    """torch's ``F.sparse_adam`` for one parameter: the moments move toward the coalesced
    gradient's rows, and those rows of ``p`` take the bias-corrected step."""
    from ..sparse._coo import sparse_coo_tensor

    g = g.coalesce()  # the update is not linear: one value per row
    idx, vals = g._indices(), g._values()
    if vals.numel() == 0:
        return
    size = tuple(g.shape)
    old_avg = exp_avg.sparse_mask(g)._values()
    avg_update = vals.sub(old_avg).mul_(1 - beta1)
    exp_avg.add_(sparse_coo_tensor(idx, avg_update, size))
    old_sq = exp_avg_sq.sparse_mask(g)._values()
    sq_update = vals.pow(2).sub_(old_sq).mul_(1 - beta2)
    exp_avg_sq.add_(sparse_coo_tensor(idx, sq_update, size))
    numer = avg_update.add_(old_avg)
    denom = sq_update.add_(old_sq).sqrt_().add_(eps)
    bias_correction1 = 1 - beta1 ** step
    bias_correction2 = 1 - beta2 ** step
    step_size = lr * math.sqrt(bias_correction2) / bias_correction1
    p.add_(sparse_coo_tensor(idx, -step_size * numer.div_(denom), size))
