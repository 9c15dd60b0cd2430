"""``autograd.Function``: user-defined forward and backward.

``apply`` runs ``forward`` with grad mode off and, when an input requires grad, makes a node
(the ``ctx`` the user saw) whose ``backward`` the engine calls like any OpDef's vjp.

>>> class Exp(jtorch.autograd.Function):
...     @staticmethod
...     def forward(ctx, i):
...         result = i.exp()
...         ctx.save_for_backward(result)
...         return result
...     @staticmethod
...     def backward(ctx, grad_output):
...         result, = ctx.saved_tensors
...         return grad_output * result
"""

from __future__ import annotations

import functools

from .. import dispatch
from .. import meta as _meta
from ..tensor import Tensor
from .node import Node, SavedTensor, _FREED_MSG, anomaly, edge_of

__all__ = ["Function", "FunctionCtx", "InplaceFunction", "NestedIOFunction", "once_differentiable"]

_state = dispatch.grad_state


class FunctionCtx:
    """What ``forward``/``setup_context`` use to pass state to ``backward``."""

    def save_for_backward(self, *tensors) -> None:
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{tensors.index(t)} is of type {type(t).__name__}")
        self._to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        self._saved_for_forward = tensors

    def mark_dirty(self, *args) -> None:
        self._dirty = args

    def mark_non_differentiable(self, *args) -> None:
        self._non_diff = args

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize = bool(value)

    @property
    def saved_tensors(self) -> tuple:
        saved = getattr(self, "_saved", None)
        if saved is None:
            if getattr(self, "_freed", False):
                raise RuntimeError(_FREED_MSG)
            return tuple(getattr(self, "_to_save", ()))
        return tuple(None if s is None else s.get(self) for s in saved)

    saved_variables = saved_tensors


class BackwardCFunction(FunctionCtx, Node):
    """The node of one ``Function.apply`` call; it is also the ``ctx``."""

    _cls: type = None

    def __init__(self) -> None:
        Node.__init__(self)
        self._materialize = True

    def n_outputs(self) -> int:
        return len(self._out_meta)

    def release(self) -> None:
        if getattr(self, "_saved", None):
            self._saved = None
            self._freed = True

    def apply(self, grads: list) -> list:
        if self._materialize:
            from ..ops.creation import zeros

            grads = [g if g is not None or m is None else zeros(m[0], dtype=m[1])
                     for g, m in zip(grads, self._out_meta)]
        res = self._cls.backward(self, *grads)
        if not isinstance(res, tuple):
            res = (res,)
        n = len(self._edges)
        if len(res) != n:
            if len(res) > n and all(r is None for r in res[n:]):
                res = res[:n]
            else:
                raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                                   f"gradients (expected {n}, got {len(res)})")
        out = []
        for i, (r, (e, is_t), meta) in enumerate(zip(res, self._edges, self._in_meta)):
            if r is None or e is None:
                out.append(None)
                continue
            if not isinstance(r, Tensor):
                raise TypeError(f"function {self.name()} returned a gradient different than None "
                                f"at position {i + 1}, but the corresponding forward input was not "
                                "a Variable")
            if r._a.shape != meta[0]:
                from ..shape import Size

                try:
                    r = r.expand(meta[0]) if r._a.size == 1 else _sum_to(r, meta[0])
                except RuntimeError:
                    raise RuntimeError(f"Function {self.name()} returned an invalid gradient at "
                                       f"index {i} - got {list(r._a.shape)} but expected shape "
                                       f"compatible with {list(Size(meta[0]))}") from None
            if r.dtype is not meta[1]:
                r = r.to(meta[1])
            out.append(r)
        return out


def _sum_to(r: Tensor, shape: tuple) -> Tensor:
    from .node import sum_to

    if len(shape) > r._a.ndim or any(a != b and b != 1 for a, b in
                                     zip(r._a.shape[r._a.ndim - len(shape):], shape)):
        raise RuntimeError("shape")
    return sum_to(r, shape)


class FunctionMeta(type):
    """Gives each Function subclass its node class, named ``<Name>Backward`` as in torch."""

    def __init__(cls, name, bases, attrs):
        cls._backward_cls = type(name + "Backward", (BackwardCFunction,), {"_cls": cls})
        super().__init__(name, bases, attrs)


class Function(FunctionCtx, metaclass=FunctionMeta):
    """Subclass with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)``, then call
    ``apply``. ``forward(*args)`` with a separate ``setup_context(ctx, inputs, output)`` also
    works."""

    def __init__(self, *args, **kwargs) -> None:
        pass

    def __call__(self, *args, **kwargs):
        raise RuntimeError("Legacy autograd function with non-static forward method is "
                           "deprecated. Please use new-style autograd function with static "
                           "forward method. (Example: https://pytorch.org/docs/stable/autograd."
                           "html#torch.autograd.Function)")

    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your "
                                  "custom autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    @classmethod
    def apply(cls, *args, **kwargs):
        hook = getattr(dispatch.mode, "custom_function", None)
        if hook is not None:  # traced: one node, forward and backward traced by the compiler
            res = hook(cls, args, kwargs)
            if res is not NotImplemented:
                return res
        if _meta.read_hook is not None:  # traced, but not as a node: a graph break
            _meta.read_hook([a for a in args if isinstance(a, Tensor)] or [None],
                            f"autograd.Function {cls.__name__}.apply")
            prev = dispatch.mode, _meta.read_hook
            dispatch.mode = _meta.read_hook = None  # runs eagerly on the real inputs
            try:
                return cls.apply(*args, **kwargs)
            finally:
                dispatch.mode, _meta.read_hook = prev
        return cls._apply(*args, **kwargs)

    @classmethod
    def _apply(cls, *args, **kwargs):
        """The call itself: forward without autograd, then the node on the outputs."""
        if cls.backward is Function.backward and cls.vjp is not Function.vjp:
            cls.backward = cls.vjp
        ctx = cls._backward_cls()
        needs = tuple(isinstance(a, Tensor) and a._requires_grad for a in args)
        is_grad = _state.enabled and any(needs)
        ctx.needs_input_grad = needs if is_grad else tuple(False for _ in args)
        new_style = cls.setup_context is not Function.setup_context
        prev = _state.enabled
        _state.enabled = False
        try:
            if new_style:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        finally:
            _state.enabled = prev
        if not is_grad:
            return output
        return _attach(ctx, args, output)


def _attach(ctx: BackwardCFunction, args: tuple, output):
    """Make ``ctx`` the grad_fn of the differentiable outputs and save what it was given."""
    multi = isinstance(output, tuple)
    outs = list(output) if multi else [output]
    dirty = {id(t) for t in getattr(ctx, "_dirty", ())}
    non_diff = {id(t) for t in getattr(ctx, "_non_diff", ())}
    inputs = {id(a) for a in args if isinstance(a, Tensor)}
    edges, metas = [], []
    for a in args:
        if isinstance(a, Tensor):
            e = edge_of(a)
            edges.append((e, True))
            metas.append((a._a.shape, a.dtype))
        else:
            edges.append((None, False))
            metas.append(None)
    ctx._edges, ctx._in_meta = tuple(edges), metas
    non_diff_at = {i for i, o in enumerate(outs) if id(o) in non_diff}  # (inputs: views)
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            continue
        if id(o) in dirty:
            dispatch.check_inplace(o)
        elif id(o) in inputs:
            outs[i] = o = o.view_as(o) if o.dtype.category >= 2 else o
            o.grad_fn = None
    ctx._out_meta = tuple((o._a.shape, o.dtype) if isinstance(o, Tensor) and i not in non_diff_at
                          and o.dtype.category >= 2 else None for i, o in enumerate(outs))
    out_ids = {id(o): i for i, o in enumerate(outs) if isinstance(o, Tensor)}
    to_save = getattr(ctx, "_to_save", None)
    if to_save is not None:
        ctx._saved = tuple(None if t is None else SavedTensor(t, out_ids.get(id(t), -1))
                           for t in to_save)
        del ctx._to_save
    for i, o in enumerate(outs):
        if isinstance(o, Tensor) and ctx._out_meta[i] is not None:
            o.grad_fn, o._output_nr, o._requires_grad = ctx, i, True
    if anomaly.enabled:
        import traceback

        ctx._trace = traceback.format_stack()[:-3]
    return tuple(outs) if multi else outs[0]


def once_differentiable(fn):
    """A backward that is not itself differentiable: it runs with grad mode off."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _state.enabled
        _state.enabled = False
        try:
            return fn(ctx, *args)
        finally:
            _state.enabled = prev
    return wrapper


class InplaceFunction(Function):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    pass
