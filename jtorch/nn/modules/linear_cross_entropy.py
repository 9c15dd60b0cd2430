"""``LinearCrossEntropyOptions``: how ``F.linear_cross_entropy`` chunks the batch so that the
(N, C) logits of a large vocabulary head are never whole; torch's frozen dataclass, its
validation and its call-time resolution of the ``"auto"`` settings.

>>> import jtorch
>>> jtorch.nn.LinearCrossEntropyOptions(batch_chunk_size=4).batch_chunk_size
4
"""

from __future__ import annotations

import dataclasses
from typing import Literal, NamedTuple

from ... import dtypes as _dt

__all__ = ["LinearCrossEntropyOptions"]


class _AutoDefault(NamedTuple):
    acc_policy: str
    chunking_method: str


# torch's per-(device type, input dtype) picks for the "auto" settings, and the pick for every
# other pair.
_AUTO_DEFAULTS: dict = {
    ("cuda", "bfloat16"): _AutoDefault("compact", "aspect_ratio:2"),
    ("cuda", "float16"): _AutoDefault("compact", "aspect_ratio:2"),
    ("cpu", "bfloat16"): _AutoDefault("accurate", "aspect_ratio"),
    ("cpu", "float16"): _AutoDefault("accurate", "aspect_ratio"),
}
_AUTO_FALLBACK = _AutoDefault("compact", "aspect_ratio:2")
_ACC_DTYPES = ("float16", "bfloat16", "float32", "float64")


def _dtype_name(d) -> str:
    return getattr(d, "name", str(d))


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """Options of the chunked ``linear_cross_entropy``: rows per chunk (``batch_chunk_size``
    or a ``chunking_method``), the accumulation dtype and policy."""

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: Literal["accurate", "balanced", "compact", "auto"] = "auto"
    acc_dtype: object = None

    def __post_init__(self):
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            if not sep:
                factor = "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        if not (self.batch_chunk_size is None
                or (isinstance(self.batch_chunk_size, int) and self.batch_chunk_size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got "
                             f"{self.batch_chunk_size!r}")
        if self.acc_dtype is not None and (not isinstance(self.acc_dtype, _dt.dtype)
                                           or self.acc_dtype.name not in _ACC_DTYPES):
            raise ValueError(f"acc_dtype must be one of {{None, torch.float16, torch.bfloat16, "
                             f"torch.float32, torch.float64}}, got {self.acc_dtype!r}. Pass "
                             f"acc_dtype=None to let the op pick automatically.")

    @staticmethod
    def _ceil_div(a: int, b: int) -> int:
        return -(-a // b)

    @staticmethod
    def _resolve_auto_acc_dtype(dtype, device):
        """float32 for half-precision input on CPU (torch's mixed-precision pick), else None."""
        if device is None or _dtype_name(dtype) not in ("float16", "bfloat16"):
            return None
        return _dt.float32 if device.type == "cpu" else None

    def _compute_batch_chunk_size(self, num_batches: int, in_features: int, num_classes: int,
                                  method: str | None = None) -> int:
        """Rows whose (rows, C) logits take the memory of the (N, in) input, rounded up to a
        power of two and divided by the method's factor."""
        method = str(method if method is not None else self.chunking_method)
        if method.startswith("aspect_ratio"):
            factor = int(method.split(":", 1)[1]) if ":" in method else 1
            inc = self._ceil_div(num_classes, in_features)
            target = self._ceil_div(num_batches, inc)
            size = 1 << (target - 1).bit_length()
            return min(size // factor, num_batches)
        raise AssertionError(f"unhandled chunking_method: {method!r}")

    def _adjust(self, num_batches, in_features, num_classes, dtype, device=None):
        """A concrete copy for one call: "auto" settings and None defaults resolved."""
        acc_policy, method = self.acc_policy, self.chunking_method
        if method == "auto" and self.batch_chunk_size is not None:
            method = None
        if acc_policy == "auto" or method == "auto":
            key = (device.type, _dtype_name(dtype)) if device is not None else None
            ap, cm = _AUTO_DEFAULTS.get(key, _AUTO_FALLBACK)
            acc_policy = ap if acc_policy == "auto" else acc_policy
            method = cm if method == "auto" else method
        size = num_batches if self.batch_chunk_size is None else min(self.batch_chunk_size,
                                                                     num_batches)
        if method is not None:
            size = self._compute_batch_chunk_size(num_batches, in_features, num_classes, method)
            if self.batch_chunk_size is not None and self.batch_chunk_size != size:
                raise ValueError(f"batch_chunk_size (={self.batch_chunk_size}) and "
                                 f"chunking_method ('{method}') give different chunk sizes "
                                 f"({self.batch_chunk_size} vs {size}); pass only one.")
        acc = self.acc_dtype
        if acc is None:
            auto = (self._resolve_auto_acc_dtype(dtype, device) if self.acc_policy == "auto"
                    else None)
            acc = auto if auto is not None else dtype
        return dataclasses.replace(self, acc_policy=acc_policy, chunking_method=method,
                                   batch_chunk_size=max(1, size), acc_dtype=acc)
