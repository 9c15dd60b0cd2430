"""torch.func: composable function transforms (vmap; grad, vjp, jvp, jacobians, hessian;
functional calls of modules)."""

from .vmap import vmap

__all__ = ["vmap"]
