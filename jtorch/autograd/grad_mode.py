"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

Each is a context manager and a decorator, and the state is per thread (``dispatch.grad_state``)
as in torch. ``set_grad_enabled(mode)`` also takes effect when called as a plain function.
"""

from __future__ import annotations

import functools
import inspect

from ..dispatch import grad_state

__all__ = ["enable_grad", "inference_mode", "is_grad_enabled", "is_inference_mode_enabled",
           "no_grad", "set_grad_enabled"]


def is_grad_enabled() -> bool:
    return grad_state.enabled


def is_inference_mode_enabled() -> bool:
    return grad_state.inference


class _DecoratorContextManager:
    """Context manager usable as a decorator (also of generator functions), like torch's."""

    def __call__(self, fn):
        if inspect.isclass(fn):
            raise RuntimeError(f"{type(self).__name__} cannot decorate a class")
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen(*args, **kwargs):
                with self.clone():
                    yield from fn(*args, **kwargs)
            return gen

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.clone():
                return fn(*args, **kwargs)
        return wrapper

    def clone(self):
        return type(self)()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also usable as a bare decorator (``@no_grad``, without parentheses)."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Ops run inside record no graph: results do not require grad.

    >>> x = jtorch.ones(2, requires_grad=True)
    >>> with jtorch.no_grad():
    ...     (x * 2).requires_grad
    False
    """

    def __init__(self) -> None:
        self.prev = False

    def __enter__(self) -> None:
        self.prev = grad_state.enabled
        grad_state.enabled = False

    def __exit__(self, *exc) -> None:
        grad_state.enabled = self.prev


class enable_grad(_NoParamDecoratorContextManager):
    """Turns recording back on inside a ``no_grad`` block."""

    def __enter__(self) -> None:
        self.prev = grad_state.enabled
        grad_state.enabled = True

    def __exit__(self, *exc) -> None:
        grad_state.enabled = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """``set_grad_enabled(mode)``: switches grad mode now; as a context manager it restores the
    previous mode on exit."""

    def __init__(self, mode: bool) -> None:
        self.prev = grad_state.enabled
        self.mode = bool(mode)
        grad_state.enabled = self.mode

    def __enter__(self) -> None:
        grad_state.enabled = self.mode

    def __exit__(self, *exc) -> None:
        grad_state.enabled = self.prev

    def clone(self):
        return type(self)(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like ``no_grad`` (``inference_mode(False)`` is a no-op); tensors made inside are
    inference tensors."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)  # bare @inference_mode on a function

    def __enter__(self) -> None:
        self.prev = (grad_state.enabled, grad_state.inference)
        if self.mode:
            grad_state.enabled, grad_state.inference = False, True

    def __exit__(self, *exc) -> None:
        grad_state.enabled, grad_state.inference = self.prev

    def clone(self):
        return type(self)(self.mode)
