"""Optimizer updates: one op per optimizer that updates one parameter and its state buffers in
place (torch's ``_fused_sgd_``, ``_fused_adam_``, ``_fused_adagrad_``; the optimizers torch has
no fused kernel for, RMSprop, Adadelta, Adamax, NAdam, RAdam, ASGD and Rprop, as
``_fused_<name>_``).

Operands are ``(param, grad, *state)`` with None for the buffers the options do not use; the
hyperparameters arrive as ``scalars`` in the order the kernel reads them
(``kernels/cpu/optim.py``). The results are the written tensors themselves (``Inplace``): on
meta parameters nothing runs.
"""

from __future__ import annotations

from ..plan import Inplace, Plan, common_device, device_of
from ..registry import op
from ._lazy import lazy

_OK = "jtorch.kernels.cpu.optim"  # imported at the first call (_lazy.py)

_written_cache: dict = {}


def _written(tensors: tuple) -> tuple:
    """``Inplace`` for the param and every state buffer present (not the grad), memoised on
    which operands are present."""
    key = tuple([t is None for t in tensors])
    w = _written_cache.get(key)
    if w is None:
        w = _written_cache[key] = tuple(Inplace(i) for i, t in enumerate(tensors)
                                        if t is not None and i != 1)
    return w


def _fused_meta(*tensors, scalars: tuple) -> Plan:
    """Every operand on the param's device with its shape (one pass: this runs per parameter
    per step)."""
    p = tensors[0]._a
    shape, cls = p.shape, p.__class__
    dev = None
    for t in tensors:
        if t is not None:
            a = t._a
            if a.__class__ is not cls and dev is None:
                dev = common_device(*tensors)  # torch's error when the devices differ
            if a.shape != shape:
                raise RuntimeError(f"The size of tensor a ({list(a.shape)}) must match the size "
                                   f"of tensor b ({list(shape)})")
    return Plan(_written(tensors), {"scalars": scalars},
                device_of(tensors[0]) if dev is None else dev)


def _fused(name: str):
    return op(f"_fused_{name}_", "extern", _fused_meta, lazy(_OK, "fused_cpu", name), differentiable=False)


# (param, grad, momentum_buffer | None) {scalars: lr, wd, momentum, 1 - dampening, nesterov,
# maximize, first}
sgd_op = _fused("sgd")
# (param, grad, exp_avg, exp_avg_sq, max_exp_avg_sq | None) {scalars: -step_size, 1 - beta1, 1,
# beta2, 1 - beta2, sqrt(bias_correction2), eps, l2, wd, decay, maximize, amsgrad}
adam_op = _fused("adam")
# (param, grad, square_avg, grad_avg | None, momentum_buffer | None) {scalars: -lr, alpha,
# 1 - alpha, 1, eps, wd, momentum, maximize, centered}
rmsprop_op = _fused("rmsprop")
# (param, grad, sum) {scalars: -clr, eps, wd, maximize}
adagrad_op = _fused("adagrad")

# (param, grad, square_avg, acc_delta) {scalars: -lr, rho, 1 - rho, eps, wd, maximize}
adadelta_op = _fused("adadelta")
# (param, grad, exp_avg, exp_inf) {scalars: -clr, 1 - beta1, 1, beta2, eps, wd, maximize}
adamax_op = _fused("adamax")
# (param, grad, exp_avg, exp_avg_sq) {scalars: 1 - beta1, 1, beta2, 1 - beta2,
# bias_correction2, eps, grad coefficient, exp_avg coefficient, l2, wd, decay, maximize}
nadam_op = _fused("nadam")
# (param, grad, exp_avg, exp_avg_sq) {scalars: 1 - beta1, 1, beta2, 1 - beta2,
# bias_correction1, lr, sqrt(bias_correction2), eps, rect, l2, wd, decay, maximize, rectify}
radam_op = _fused("radam")
# (param, grad, ax) {scalars: 1 - lambd * eta, -eta, mu, wd, maximize, mu != 1}
asgd_op = _fused("asgd")
# (param, grad, prev, step_size) {scalars: etaminus, etaplus, step_size_min, step_size_max, 1,
# maximize}
rprop_op = _fused("rprop")

OPS = {"sgd": sgd_op, "adam": adam_op, "rmsprop": rmsprop_op, "adagrad": adagrad_op,
       "adadelta": adadelta_op, "adamax": adamax_op, "nadam": nadam_op, "radam": radam_op,
       "asgd": asgd_op, "rprop": rprop_op}
