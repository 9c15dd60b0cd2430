"""The data pipeline: collating samples into a batch, a DataLoader epoch over a
TensorDataset, and writing through a basic index (``y[:3] = -1``), the Python cost that sits
between a training step's kernels."""

from __future__ import annotations

from ..harness import Case, register
from ._util import rand, torch_only

BATCH = 64


def _samples(lib, n: int, features: int) -> tuple:
    """(X, labels) as the runtime's tensors: float32 features and int64 class labels."""
    x = lib.from_numpy(rand(n, features))
    y = lib.from_numpy((rand(n, seed=1) * 4).astype("int64") % 10)
    return x, y


@register("data/collate", full=(20,), quick=(20,), label="64x({})+label")
def collate(features: int) -> Case:
    """``default_collate`` of 64 ``(features tensor, 0-d label)`` samples, as a DataLoader over
    a TensorDataset makes them: two stacks of 64 inputs and the tuple's transposition."""

    def make(lib, compile):
        x, y = _samples(lib, BATCH, features)
        batch = [(x[i], y[i]) for i in range(BATCH)]
        fn = lib.utils.data.default_collate
        return lambda: fn(batch)

    return Case(torch_only(make), kind="latency", note="target: <= 1.5x torch")


@register("data/loader_epoch", full=(10000,), quick=(2000,), label="n={}")
def loader_epoch(n: int) -> Case:
    """One shuffled epoch of ``DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True)``
    over n samples of 20 float32 features and an int64 label: per-sample indexing, sampling,
    collation."""

    def make(lib, compile):
        x, y = _samples(lib, n, 20)
        data = lib.utils.data
        loader = data.DataLoader(data.TensorDataset(x, y), batch_size=BATCH, shuffle=True)

        def epoch():
            for _ in loader:
                pass

        return epoch

    return Case(torch_only(make), kind="other", note="target: <= 1.2x torch", rounds=3, samples=3)


def _setitem_scalar(lib):
    y = lib.zeros(10)

    def run():
        y[:3] = -1

    return run


def _setitem_tensor(lib):
    x, t = lib.zeros(8, 8), lib.ones(4)

    def run():
        x[1:5, 2] = t

    return run


def _getitem_ellipsis(lib):
    x = lib.zeros(4, 5, 3)
    return lambda: x[..., 0]


_INDEX_CASES = {"scalar": _setitem_scalar, "tensor": _setitem_tensor, "getitem": _getitem_ellipsis}


@register("data/setitem_slice", full=tuple(_INDEX_CASES), quick=("scalar",), label="{}")
def setitem_slice(key: str) -> Case:
    """Basic indexing on small CPU tensors: ``y[:3] = -1`` (scalar), ``x[1:5, 2] = t``
    (tensor) and the read ``x[..., 0]`` (getitem); the whole Python cost of one call (torch's
    is 2-5 us)."""
    build = _INDEX_CASES[key]
    return Case(torch_only(lambda lib, compile: build(lib)), kind="latency",
                note="target: <= 1x torch")
