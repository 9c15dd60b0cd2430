"""Reverse-mode automatic differentiation over the op registry.

``dispatch`` calls ``node.record`` after every op whose inputs require grad; the node holds
the OpDef, whose ``vjp`` (written in jtorch ops) is the gradient rule. ``backward`` and
``grad`` run the engine (``engine.py``): a topological sort and one reverse walk.

>>> x = jtorch.tensor([1.0, 2.0], requires_grad=True)
>>> (x * x).sum().backward()
>>> x.grad
tensor([2., 4.])
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import dispatch
from .. import meta as _meta
from ..tensor import Tensor
from . import engine as _engine
from . import functional, graph
from .anomaly_mode import detect_anomaly, set_detect_anomaly
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import gradcheck, gradgradcheck
from .node import record as _record

__all__ = ["Function", "FunctionCtx", "Variable", "backward", "detect_anomaly", "enable_grad",
           "functional", "grad", "gradcheck", "gradgradcheck", "graph", "inference_mode",
           "is_grad_enabled", "no_grad", "once_differentiable", "set_detect_anomaly",
           "set_grad_enabled", "set_multithreading_enabled"]

Variable = Tensor
dispatch.grad_hook = _record


def _tensors(x, name: str) -> tuple:
    if isinstance(x, Tensor):
        return (x,)
    if isinstance(x, Sequence) and all(isinstance(t, Tensor) for t in x):
        return tuple(x)
    raise TypeError(f"{name} must be a Tensor or a sequence of Tensors")


def _grads_arg(grads, n: int) -> tuple:
    if grads is None:
        return (None,) * n
    if isinstance(grads, Tensor):
        grads = (grads,)
    grads = tuple(grads)
    if len(grads) != n:
        raise RuntimeError("grad can be implicitly created only for scalar outputs" if not grads
                           else f"Mismatch in number of gradients: expected {n}, got {len(grads)}")
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False,
             grad_variables=None, inputs=None) -> None:
    """Accumulate d(tensors)/d(leaves) into the leaves' ``.grad`` (``inputs``: only those)."""
    tensors = _tensors(tensors, "tensors")
    if grad_tensors is None:
        grad_tensors = grad_variables
    if _meta.effect_hook is not None:
        # traced: the graph so far runs, then the backward, on real tensors (compiled pieces'
        # backward graphs), so the leaves get real gradients; a cached call replays it
        return _meta.effect_hook("backward()", backward, (tensors, grad_tensors, retain_graph,
                                                          create_graph, None, inputs), {})
    if _meta.read_hook is not None:
        _meta.read_hook(tensors, "backward()")
        prev = dispatch.mode, _meta.read_hook
        dispatch.mode = _meta.read_hook = None
        try:
            return backward(tensors, grad_tensors, retain_graph, create_graph, None, inputs)
        finally:
            dispatch.mode, _meta.read_hook = prev
    grads = _engine.make_grads(tensors, _grads_arg(grad_tensors, len(tensors)))
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is not None:
        inputs = _tensors(inputs, "inputs")
        if not inputs:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    _engine.run_backward(list(tensors), grads, retain_graph, create_graph, inputs)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph: bool = False,
         only_inputs: bool = True, allow_unused=None, is_grads_batched: bool = False,
         materialize_grads: bool = False) -> tuple:
    """The gradients of ``outputs`` with respect to ``inputs`` (nothing is accumulated).

    >>> x = jtorch.tensor(3.0, requires_grad=True)
    >>> jtorch.autograd.grad(x * x, x)
    (tensor(6.),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, "
                         "but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _tensors(outputs, "outputs")
    inputs = _tensors(inputs, "inputs")
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if _meta.read_hook is not None:
        _meta.read_hook(outputs, "autograd.grad()")
    if create_graph and _meta.eager_hook is not None:
        with _meta.eager_hook():
            return _grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                         is_grads_batched, materialize_grads)
    return _grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                 is_grads_batched, materialize_grads)


def _grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
          is_grads_batched, materialize_grads) -> tuple:
    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    grads = _engine.make_grads(outputs, _grads_arg(grad_outputs, len(outputs)))
    if retain_graph is None:
        retain_graph = create_graph
    res = _engine.run_backward(list(outputs), grads, retain_graph, create_graph, inputs,
                               accumulate=False, allow_unused=allow_unused)
    if materialize_grads:
        from ..ops.creation import zeros_like

        res = [zeros_like(t) if g is None else g for t, g in zip(inputs, res)]
    return tuple(res)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads) -> tuple:
    """``is_grads_batched``: the first dim of each grad_output indexes independent vjps."""
    from ..ops.views import stack

    grad_outputs = _grads_arg(grad_outputs, len(outputs))
    n = grad_outputs[0]._a.shape[0]
    rows = [grad(outputs, inputs, [g[i] for g in grad_outputs], retain_graph=True,
                 create_graph=create_graph, allow_unused=allow_unused,
                 materialize_grads=materialize_grads) for i in range(n)]
    return tuple(None if rows[0][j] is None else stack([r[j] for r in rows])
                 for j in range(len(inputs)))


class set_multithreading_enabled:
    """The engine runs backward on the calling thread; the switch is kept for torch's API."""

    _enabled = True

    def __init__(self, mode: bool) -> None:
        self.prev = set_multithreading_enabled._enabled
        set_multithreading_enabled._enabled = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        set_multithreading_enabled._enabled = self.prev


def is_multithreading_enabled() -> bool:
    return set_multithreading_enabled._enabled


# -- Tensor methods -------------------------------------------------------------------------

def _tensor_backward(self, gradient=None, retain_graph=None, create_graph: bool = False,
                     inputs=None) -> None:
    """d(self)/d(leaves) accumulated into the leaves' ``.grad``."""
    backward(self, None if gradient is None else (gradient,), retain_graph, create_graph,
             inputs=inputs)


def _register_hook(self, hook):
    """``hook(grad)`` runs when the gradient of this tensor is computed; it may return a
    replacement."""
    if _meta.read_hook is not None:  # autograd state of a traced tensor: a graph break
        _meta.read_hook(self, "Tensor.register_hook()")
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    fn = self.grad_fn
    if fn is None:
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        from .node import RemovableHandle

        return RemovableHandle(self._hooks, hook)
    return fn._add_pre_hook(self._output_nr, hook)


def _register_post_accumulate_grad_hook(self, hook):
    if _meta.read_hook is not None:  # autograd state of a traced tensor: a graph break
        _meta.read_hook(self, "Tensor.register_post_accumulate_grad_hook()")
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    from .node import RemovableHandle

    hooks = self.__dict__.setdefault("_post_acc_hooks", [])
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def _retain_grad(self) -> None:
    if _meta.read_hook is not None:  # autograd state of a traced tensor: a graph break
        _meta.read_hook(self, "Tensor.retain_grad()")
    if not self._requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    fn = self.grad_fn
    if fn is None or self._retains_grad:
        return
    import weakref

    if fn._retain is None:
        fn._retain = {}
    fn._retain[self._output_nr] = weakref.ref(self)
    self._retains_grad = True
