"""torch.utils.checkpoint: activation checkpointing. torch saves memory by dropping a segment's
activations and recomputing them in the backward (with the RNG state of the forward, so
dropout draws the same masks); here the segment runs once and keeps its activations: the
results and gradients are the same, the memory saving is not made."""

from __future__ import annotations

import contextlib
import warnings

_MSG = ("torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
        "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
        "exception. use_reentrant=False is recommended, but if you need to preserve the current "
        "default behavior, you can pass use_reentrant=True. Refer to docs for more details on "
        "the differences between the two variants.")


def noop_context_fn():
    return contextlib.nullcontext(), contextlib.nullcontext()


def checkpoint(function, *args, use_reentrant: bool | None = None, context_fn=noop_context_fn,
               determinism_check: str = "default", debug: bool = False,
               early_stop: bool = True, **kwargs):
    if use_reentrant is None:
        warnings.warn(_MSG, UserWarning, stacklevel=2)
        use_reentrant = True
    if use_reentrant and (context_fn is not noop_context_fn or debug):
        raise ValueError("Passing `context_fn` or `debug` is only supported when "
                         "use_reentrant=False.")
    if use_reentrant and kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if use_reentrant and not any(getattr(a, "requires_grad", False) for a in args):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      UserWarning, stacklevel=2)
    fwd_ctx, _ = context_fn()
    with fwd_ctx:
        return function(*args, **kwargs)


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """``functions`` (a Sequential or a list of modules) run in ``segments`` checkpointed
    pieces."""
    if use_reentrant is None:
        warnings.warn(_MSG, UserWarning, stacklevel=2)
    mods = list(functions.children()) if hasattr(functions, "children") else list(functions)
    for m in mods:
        input = m(input)
    return input


__all__ = ["checkpoint", "checkpoint_sequential"]
