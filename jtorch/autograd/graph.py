"""``autograd.graph``: hooks on saved tensors, and the Node type of ``grad_fn``.

>>> with jtorch.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
...     y = x.exp()
"""

from __future__ import annotations

import threading

__all__ = ["Node", "disable_saved_tensors_hooks", "save_on_cpu", "saved_tensors_hooks"]


class _HookState(threading.local):
    stack: list | None = None
    disabled: str | None = None


_state = _HookState()


def saved_hooks():
    """The innermost (pack, unpack) pair, or None (the common case: checked per saved tensor)."""
    st = _state.stack
    return st[-1] if st else None


class saved_tensors_hooks:
    """Inside the block, every tensor saved for backward goes through ``pack_hook`` and is
    read back through ``unpack_hook`` when the backward pass needs it."""

    def __init__(self, pack_hook, unpack_hook) -> None:
        self.pack_hook, self.unpack_hook = pack_hook, unpack_hook

    def __enter__(self):
        if _state.disabled is not None:
            raise RuntimeError(_state.disabled)
        if _state.stack is None:
            _state.stack = []
        _state.stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc) -> None:
        _state.stack.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors stay where they are (jtorch's CPU tensors already live on the CPU)."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(lambda t: t, lambda t: t)


class disable_saved_tensors_hooks:
    """Inside the block, registering saved-tensor hooks raises ``RuntimeError(error_message)``."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message

    def __enter__(self):
        self.prev = _state.disabled
        _state.disabled = self.error_message
        return self

    def __exit__(self, *exc) -> None:
        _state.disabled = self.prev


def __getattr__(name):
    if name == "Node":
        from .node import Node

        return Node
    raise AttributeError(name)
