"""Weight normalisation (Salimans & Kingma, 2016) as torch's hook-based form: ``weight`` is
replaced by a magnitude ``weight_g`` and a direction ``weight_v``, and a forward pre-hook
recomputes ``weight = g * v / ||v||`` (the norm over every dim but ``dim``) before each call.

>>> m = jtorch.nn.utils.weight_norm(jtorch.nn.Linear(20, 40))  # doctest: +SKIP
>>> m.weight_g.shape, m.weight_v.shape  # doctest: +SKIP
(torch.Size([40, 1]), torch.Size([40, 20]))
"""

from __future__ import annotations

import warnings

from ...linalg import vector_norm
from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "remove_weight_norm", "weight_norm"]


def _norm_except_dim(v, pow: float, dim: int):
    """The ``pow``-norm of ``v`` over every dim but ``dim`` (keepdim); dim -1: over all."""
    if dim == -1:
        return vector_norm(v, pow)
    dims = [d for d in range(v.dim()) if d != dim]
    return vector_norm(v, pow, dim=dims, keepdim=True)


def _weight_norm(v, g, dim: int):
    return v * (g / _norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``name`` from ``name_g`` and ``name_v``."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        return _weight_norm(getattr(module, self.name + "_v"), getattr(module, self.name + "_g"),
                            self.dim)

    @staticmethod
    def apply(module, name: str, dim: int) -> WeightNorm:
        warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                      "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=3)
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter "
                                   f"{name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError(  # noqa: TRY004  (torch's error type)
                "The module passed to `WeightNorm` can't have uninitialized "
                "parameters. Make sure to run the dummy forward before applying "
                "weight normalization")
        del module._parameters[name]
        module.register_parameter(name + "_g", Parameter(_norm_except_dim(weight, 2, fn.dim).data))
        module.register_parameter(name + "_v", Parameter(weight.data))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module) -> None:
        weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.data))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim: int = 0):
    """Reparameterise ``module.<name>`` as ``g * v / ||v||`` (deprecated in torch, kept for
    the programs and checkpoints that use it)."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name: str = "weight"):
    """Fold ``name_g`` and ``name_v`` back into a plain ``name`` parameter."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
