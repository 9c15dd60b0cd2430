"""Samplers the distributions of ``jtorch.distributions`` draw through, as torch's do:
``_standard_gamma`` (Gamma, Beta, Dirichlet, Chi2, StudentT...), ``_sample_dirichlet``,
``poisson`` and ``binomial``, and the reparameterised gradients ``_standard_gamma_grad`` and
``_dirichlet_grad`` that make Gamma, Beta and Dirichlet samples differentiable.

The meta rules hold torch's argument checks (dtypes ``AT_DISPATCH_FLOATING_TYPES`` takes, the
operands' common dtype, broadcasting); the kernels are in ``kernels/cpu/random_dists.py``.
Results are contiguous, in the first operand's dtype. On meta tensors nothing is drawn.
"""

from __future__ import annotations

from ... import dtypes as _dt
from ... import random as _random
from ...shape import broadcast_shapes
from ..plan import Out, Plan, common_device, device_of
from ..registry import defvjp, op
from ._lazy import lazy
from .random import not_impl

_WIDE = (_dt.float32, _dt.float64)  # AT_DISPATCH_FLOATING_TYPES
_POISSON = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)
_K = "jtorch.kernels.cpu.random_dists"  # imported at the first call (_lazy.py)


def _floating(x, kernel: str, dtypes=_WIDE) -> None:
    if x.dtype not in dtypes:
        raise not_impl(kernel, x.dtype)


def _same_dtype(first, *others) -> None:
    """TensorIterator's check that every operand has the output's (the first's) dtype."""
    for t in others:
        if t.dtype is not first.dtype:
            raise RuntimeError(f"Found dtype {t.dtype.scalar_name} but expected "
                               f"{first.dtype.scalar_name}")


def _sampler_meta(kernel: str, dtypes, name: str):
    def meta(x, *, generator=None) -> Plan:
        _floating(x, kernel, dtypes)
        gen = _random.resolve(generator, name)
        return Plan(Out(tuple(x._a.shape), x.dtype), {"generator": gen}, device_of(x))

    return meta


def _binomial_meta(count, prob, *, generator=None) -> Plan:
    for t, what in ((count, "count"), (prob, "prob")):
        if not t.dtype.is_floating_point:
            raise ValueError(f"binomial only supports floating-point dtypes for {what}, got: "
                             f"{t.dtype.scalar_name}")
    _same_dtype(count, prob)
    shape = tuple(broadcast_shapes(count._a.shape, prob._a.shape))
    _floating(count, "binomial_cpu")
    gen = _random.resolve(generator, "binomial")
    return Plan(Out(shape, count.dtype), {"generator": gen}, common_device(count, prob))


def _grad_meta(kernel: str):
    def meta(*xs) -> Plan:
        _same_dtype(*xs)
        shape = tuple(broadcast_shapes(*(x._a.shape for x in xs)))
        _floating(xs[0], kernel)
        return Plan(Out(shape, xs[0].dtype), {}, common_device(*xs))

    return meta


standard_gamma_op = op("_standard_gamma", "random",
                       _sampler_meta("gamma_cpu", _WIDE, "_standard_gamma"),
                       lazy(_K, "standard_gamma_cpu"))
sample_dirichlet_op = op("_sample_dirichlet", "random",
                         _sampler_meta("dirichlet", _WIDE, "_sample_dirichlet"),
                         lazy(_K, "sample_dirichlet_cpu"), grad_name="NotImplemented")
poisson_op = op("poisson", "random", _sampler_meta("poisson_cpu", _POISSON, "poisson"),
                lazy(_K, "poisson_cpu"))
binomial_op = op("binomial", "random", _binomial_meta, lazy(_K, "binomial_cpu"),
                 grad_name="NotImplemented")
# torch has no derivative of these two (``not_implemented`` in derivatives.yaml): the record
# is differentiable without a rule, so a second derivative through rsample raises as torch's.
standard_gamma_grad_op = op("_standard_gamma_grad", "extern",
                            _grad_meta("_standard_gamma_grad_cpu"),
                            lazy(_K, "standard_gamma_grad_cpu"), grad_name="NotImplemented")
dirichlet_grad_op = op("_dirichlet_grad", "extern", _grad_meta("_dirichlet_grad_cpu"),
                       lazy(_K, "dirichlet_grad_cpu"), grad_name="NotImplemented")


def _standard_gamma_vjp(c, g):
    """The implicit reparameterisation: d sample / d alpha at fixed CDF value."""
    x = c.args[0]
    return (g * standard_gamma_grad_op(x, c.out),)


def _poisson_vjp(c, g):
    """torch's derivative of poisson: zero (the draws are not reparameterised)."""
    return (g.new_zeros(c._meta[0][0]),)


defvjp(standard_gamma_op, _standard_gamma_vjp, "0o", "StandardGammaBackward0")
defvjp(poisson_op, _poisson_vjp, "", "PoissonBackward0")
