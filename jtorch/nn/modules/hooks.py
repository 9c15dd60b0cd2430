"""Full backward hooks of a Module: identity Functions wrapped around the call's tensor inputs
and outputs see the gradients flowing through, so ``hook(module, grad_input, grad_output)``
runs once the inputs' gradients are known."""

from __future__ import annotations

from ...autograd.function import Function
from ...tensor import Tensor


class _Identity(Function):
    @staticmethod
    def forward(ctx, fn, *xs):
        ctx.fn = fn
        return tuple(x.view_as(x) for x in xs)

    @staticmethod
    def backward(ctx, *grads):
        r = ctx.fn(grads)
        return (None, *(grads if r is None else r))


class BackwardHook:
    def __init__(self, module) -> None:
        self.module = module
        self.grad_outputs = None
        self.n_inputs = 0

    def _on_inputs(self, grads):
        m = self.module
        res = None
        for hook in m._backward_hooks.values():
            r = hook(m, tuple(grads), self.grad_outputs)
            if r is not None:
                res = grads = tuple(r)
        return res

    def _on_outputs(self, grads):
        m = self.module
        res = None
        for hook in m._backward_pre_hooks.values():
            r = hook(m, tuple(grads))
            if r is not None:
                res = grads = tuple(r) if isinstance(r, (tuple, list)) else (r,)
        self.grad_outputs = tuple(grads)
        if self.n_inputs == 0:  # no input needs a gradient: the hook runs with None inputs
            for hook in m._backward_hooks.values():
                hook(m, (None,), self.grad_outputs)
        return res

    def _wrap(self, values, fn):
        idx = [i for i, v in enumerate(values) if isinstance(v, Tensor) and v.requires_grad]
        if not idx:
            return values, 0
        outs = _Identity.apply(fn, *[values[i] for i in idx])
        values = list(values)
        for i, o in zip(idx, outs):
            values[i] = o
        return tuple(values), len(idx)

    def setup_input_hook(self, args: tuple) -> tuple:
        args, self.n_inputs = self._wrap(args, self._on_inputs)
        return args

    def setup_output_hook(self, result):
        single = isinstance(result, Tensor)
        vals, _ = self._wrap((result,) if single else tuple(result), self._on_outputs)
        return vals[0] if single else type(result)(vals) if isinstance(result, tuple) else vals
