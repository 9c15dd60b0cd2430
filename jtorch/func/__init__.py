"""torch.func: composable function transforms (vmap; grad, vjp, jvp, jacobians, hessian;
functional calls of modules)."""

from ._transforms import (functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, jvp,
                          stack_module_state, vjp)
from .vmap import vmap

__all__ = ["functional_call", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "stack_module_state", "vjp", "vmap"]
