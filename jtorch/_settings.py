"""Process-wide switches that torch keeps in its global context: deterministic algorithms, the
float32 matmul precision, and whether once-per-process warnings repeat.

Determinism on the CPU: jtorch's kernels split their work by size, never by thread count, so
results are bitwise the same across runs and across ``set_num_threads`` values; the few
choices that do depend on the thread count (the per-image convolution kernels, which let BLAS
thread or not and sum weight gradients per thread) take a fixed path while the switch is on.
As in torch, ``put_`` without ``accumulate`` has no deterministic implementation (duplicate
indices: which write wins is unspecified) and raises (or warns with ``warn_only``), and
``empty`` fills its memory with NaN (the largest integer, True) while
``jtorch.utils.deterministic.fill_uninitialized_memory`` is set. ``jtorch.compile`` guards on
the switch; while it is on, compiled reductions run eager's kernels (no row kernels), so
compiled results are bitwise eager's.
"""

from __future__ import annotations

import warnings


class _State:
    deterministic = False
    warn_only = False
    matmul_precision = "highest"
    warn_always = False


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Sets whether operations must use deterministic algorithms (``warn_only``: an operation
    without one warns instead of raising)."""
    if type(mode) is not bool:
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    if type(warn_only) is not bool:
        raise TypeError("_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _State.deterministic, _State.warn_only = mode, warn_only


def are_deterministic_algorithms_enabled() -> bool:
    return _State.deterministic


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _State.warn_only


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode: str | int) -> None:
    """``"default"``/0 (off), ``"warn"``/1 (on, warn only) or ``"error"``/2 (on)."""
    if type(debug_mode) not in (str, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode() -> int:
    if not _State.deterministic:
        return 0
    return 1 if _State.warn_only else 2


def alert_not_deterministic(name: str) -> None:
    """What an operation without a deterministic implementation does while the switch is on:
    torch's RuntimeError, or its warning with ``warn_only``."""
    if not _State.deterministic:
        return
    if _State.warn_only:
        warnings.warn(f"{name} does not have a deterministic implementation, but you set "
                      "'torch.use_deterministic_algorithms(True, warn_only=True)'. You can file "
                      "an issue at https://github.com/pytorch/pytorch/issues to help us "
                      "prioritize adding deterministic support for this operation.",
                      UserWarning, stacklevel=3)
        return
    raise RuntimeError(f"{name} does not have a deterministic implementation, but you set "
                       "'torch.use_deterministic_algorithms(True)'. You can turn off determinism "
                       "just for this operation, or you can use the 'warn_only=True' option, if "
                       "that's acceptable for your application. You can also file an issue at "
                       "https://github.com/pytorch/pytorch/issues to help us prioritize adding "
                       "deterministic support for this operation.")


def fill_empty() -> bool:
    """Whether ``empty`` must fill its memory (determinism on and
    ``jtorch.utils.deterministic.fill_uninitialized_memory`` set)."""
    if not _State.deterministic:
        return False
    from .utils import deterministic

    return bool(deterministic.fill_uninitialized_memory)


_PRECISIONS = ("highest", "high", "medium")


def set_float32_matmul_precision(precision: str) -> None:
    """The internal precision of float32 matrix products: ``"highest"`` (the default),
    ``"high"`` or ``"medium"`` (TF32 or bfloat16 passes where a GPU has them). jtorch's CPU
    kernels always compute in full float32; CUDA matmuls will read it."""
    if precision not in _PRECISIONS:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    _State.matmul_precision = precision


def get_float32_matmul_precision() -> str:
    return _State.matmul_precision


def set_warn_always(b: bool) -> None:
    """When on, warnings jtorch gives once per process are given every time."""
    _State.warn_always = bool(b)


def is_warn_always_enabled() -> bool:
    return _State.warn_always


class WarnOnce:
    """A warning given once per process (torch's ``TORCH_WARN_ONCE``), every time while
    ``set_warn_always(True)``."""

    def __init__(self, message: str) -> None:
        self.message, self.done = message, False

    def warn(self, stacklevel: int = 3) -> None:
        if not self.done or _State.warn_always:
            self.done = True
            warnings.warn(self.message, UserWarning, stacklevel=stacklevel)


__all__ = ["are_deterministic_algorithms_enabled", "get_deterministic_debug_mode",
           "get_float32_matmul_precision", "is_deterministic_algorithms_warn_only_enabled",
           "is_warn_always_enabled", "set_deterministic_debug_mode",
           "set_float32_matmul_precision", "set_warn_always", "use_deterministic_algorithms"]
