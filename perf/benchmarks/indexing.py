"""Gathers, scatters and triangles over a (1024, 1024) float32 matrix, and the selection
ops along a size-1 dim (one element per row): eager kernels whose loops once ran at a
runtime stride or a call per element."""

from __future__ import annotations

import numpy as np

from ..harness import Case, register
from ._util import functional, rand

FULL, QUICK = ((1024, 1024),), ((256, 256),)
LABEL = "{0[0]}x{0[1]}"


def _index(rows: int, cols: int) -> np.ndarray:
    return np.random.default_rng(3).integers(0, cols, (rows, cols))


def _np_scatter_add(x, i):
    out = np.zeros_like(x)
    np.add.at(out, (np.arange(x.shape[0])[:, None], i), x)
    return out


# name, torch-API function of (x, index), NumPy version, bytes moved per element
_CASES = [
    ("gather_lastdim", lambda t, x, i: x.gather(1, i),
     lambda x, i: np.take_along_axis(x, i, 1), 16),
    ("scatter_add_lastdim", lambda t, x, i: t.zeros_like(x).scatter_add(1, i, x),
     _np_scatter_add, 20),
    ("tril", lambda t, x, i: x.tril(), lambda x, i: np.tril(x), 8),
]


def _indexing(name, fn, np_fn, per):
    @register(f"indexing/{name}", full=FULL, quick=QUICK, label=LABEL)
    def case(shape) -> Case:
        rows, cols = shape
        return Case(functional(fn, [rand(rows, cols), _index(rows, cols)], numpy=np_fn),
                    kind="memory", bytes=per * rows * cols)


for _c in _CASES:
    _indexing(*_c)


@register("indexing/select_size1_dim", full=((4096, 1, 256),), quick=((256, 1, 64),),
          label="{0[0]}x{0[1]}x{0[2]}")
def select_size1_dim(shape) -> Case:
    """sort + argmax + softmax + sum along a dim of size 1 (each a copy or a constant)."""
    def fn(t, x):
        return x.sort(1)[0], x.argmax(1), x.softmax(1), x.sum(1)

    def np_fn(x):
        return np.sort(x, 1), x.argmax(1), np.ones_like(x), x.sum(1)

    n = shape[0] * shape[2]
    return Case(functional(fn, [rand(*shape)], numpy=np_fn), kind="memory", bytes=4 * 8 * n)
