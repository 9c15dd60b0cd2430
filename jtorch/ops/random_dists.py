"""``torch.poisson``, ``torch.binomial`` and the ATen samplers ``jtorch.distributions`` draws
through: ``_standard_gamma``, ``_sample_dirichlet`` and the reparameterised gradients
``_standard_gamma_grad`` and ``_dirichlet_grad`` (OpDefs in ``kernels/defs/random_dists.py``).
"""

from __future__ import annotations

from .. import dispatch
from .. import random as _random
from ..kernels.defs import random_dists as R
from ..tensor import Tensor

__all__ = ["binomial", "poisson"]

_call = dispatch.call


def _tensor(x, fn: str, name: str, pos: int) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _generator(fn: str, pos: int, args: tuple, generator):
    """The generator passed by position (torch's message then names the position) or by
    keyword."""
    if len(args) > 1 or (args and generator is not None):
        raise TypeError(f"{fn}() takes at most {pos} arguments ({pos - 1 + len(args)} given)")
    g, where = (args[0], f" (position {pos})") if args else (generator, "")
    if g is not None and not isinstance(g, _random.Generator):
        raise TypeError(f"{fn}(): argument 'generator'{where} must be torch.Generator, not "
                        f"{type(g).__name__}")
    return g


def poisson(input: Tensor, *args, generator=None) -> Tensor:
    """Poisson draws with the rates ``input`` (non-negative), in its dtype; the gradient is
    zero, as torch's.

    >>> jtorch.poisson(jtorch.zeros(3)).tolist()
    [0.0, 0.0, 0.0]
    """
    _tensor(input, "poisson", "input", 1)
    generator = _generator("poisson", 2, args, generator)
    return _call(R.poisson_op, input, generator=generator)


def binomial(count: Tensor, prob: Tensor, *args, generator=None) -> Tensor:
    """Binomial draws: successes in ``count`` trials of probability ``prob`` (broadcast, one
    floating dtype).

    >>> jtorch.binomial(jtorch.tensor([4.0]), jtorch.tensor([1.0])).tolist()
    [4.0]
    """
    _tensor(count, "binomial", "count", 1)
    _tensor(prob, "binomial", "prob", 2)
    generator = _generator("binomial", 3, args, generator)
    return _call(R.binomial_op, count, prob, generator=generator)


def _standard_gamma(input: Tensor, *args, generator=None) -> Tensor:
    """Gamma(input, 1) draws, differentiable through the implicit reparameterisation."""
    _tensor(input, "_standard_gamma", "input", 1)
    generator = _generator("_standard_gamma", 2, args, generator)
    return _call(R.standard_gamma_op, input, generator=generator)


def _sample_dirichlet(input: Tensor, *args, generator=None) -> Tensor:
    """Dirichlet(input) draws over the last dim (not differentiable: jtorch.distributions
    gives Dirichlet its gradient through ``_dirichlet_grad``)."""
    _tensor(input, "_sample_dirichlet", "input", 1)
    generator = _generator("_sample_dirichlet", 2, args, generator)
    return _call(R.sample_dirichlet_op, input, generator=generator)


def _standard_gamma_grad(input: Tensor, output: Tensor) -> Tensor:
    """d output / d input of Gamma(input, 1) draws ``output`` at fixed CDF value."""
    _tensor(input, "_standard_gamma_grad", "input", 1)
    _tensor(output, "_standard_gamma_grad", "output", 2)
    return _call(R.standard_gamma_grad_op, input, output)


def _dirichlet_grad(x: Tensor, alpha: Tensor, total: Tensor) -> Tensor:
    """The reparameterised gradient of Beta(alpha, total - alpha) draws ``x``, divided by
    ``1 - x`` (Dirichlet's backward)."""
    _tensor(x, "_dirichlet_grad", "x", 1)
    _tensor(alpha, "_dirichlet_grad", "alpha", 2)
    _tensor(total, "_dirichlet_grad", "total", 3)
    return _call(R.dirichlet_grad_op, x, alpha, total)
