"""Reductions and normalisations over a (4096, 1024) float32 tensor (memory-bound)."""

from __future__ import annotations

import numpy as np

from ..harness import Case, register
from ._util import functional, rand

FULL, QUICK = ((4096, 1024),), ((256, 256),)
LABEL = "{0[0]}x{0[1]}"


def _np_softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _np_log_softmax(x):
    m = x.max(-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))


def _np_layer_norm(x, w, b):
    m = x.mean(-1, keepdims=True)
    v = x.var(-1, keepdims=True)
    return (x - m) / np.sqrt(v + np.float32(1e-5)) * w + b


# name, torch-API function, NumPy version, output elements per row (for the bytes moved),
# whether compiled runtimes apply, in quick mode
_CASES = [
    ("sum_lastdim", lambda t, x: x.sum(-1), lambda x: x.sum(-1), 1, False, True),
    ("sum_all", lambda t, x: x.sum(), lambda x: x.sum(), 0, False, False),
    ("sum_dim0", lambda t, x: x.sum(0), lambda x: x.sum(0), 0, False, False),
    ("mean_lastdim", lambda t, x: x.mean(-1), lambda x: x.mean(-1), 1, False, False),
    ("amax_lastdim", lambda t, x: x.amax(-1), lambda x: x.max(-1), 1, False, False),
    ("argmax_lastdim", lambda t, x: x.argmax(-1), lambda x: x.argmax(-1), 1, False, False),
    ("var_lastdim", lambda t, x: x.var(-1), lambda x: x.var(-1, ddof=1), 1, False, False),
    ("logsumexp_lastdim", lambda t, x: t.logsumexp(x, -1), None, 1, False, False),
    ("cumsum_lastdim", lambda t, x: t.cumsum(x, -1), lambda x: x.cumsum(-1), None, False, False),
    ("softmax", lambda t, x: t.softmax(x, -1), _np_softmax, None, True, True),
    ("log_softmax", lambda t, x: t.log_softmax(x, -1), _np_log_softmax, None, True, False),
]


def _reduction(name, fn, np_fn, out_per_row, comp, quick):
    @register(f"reduction/{name}", full=FULL, quick=QUICK if quick else (), label=LABEL)
    def case(shape) -> Case:
        rows, cols = shape
        out = rows * cols if out_per_row is None else rows * out_per_row
        return Case(functional(fn, [rand(rows, cols)], numpy=np_fn), kind="memory",
                    bytes=4 * (rows * cols + out), compile=comp)


for _c in _CASES:
    _reduction(*_c)


@register("reduction/layer_norm", full=FULL, quick=QUICK, label=LABEL)
def layer_norm(shape) -> Case:
    rows, cols = shape
    return Case(functional(lambda t, x, w, b: t.nn.functional.layer_norm(x, (cols,), w, b),
                           [rand(rows, cols), rand(cols, seed=1), rand(cols, seed=2)],
                           numpy=_np_layer_norm),
                kind="memory", bytes=4 * 2 * rows * cols, compile=True)


@register("reduction/sort_lastdim", full=((512, 1024),), label=LABEL)
def sort(shape) -> Case:
    rows, cols = shape
    return Case(functional(lambda t, x: t.sort(x, -1), [rand(rows, cols)],
                           numpy=lambda x: np.sort(x, -1)),
                kind="other", bytes=4 * 3 * rows * cols)


def _np_batch_norm_eval(x, m, v, w, b):
    s = (w / np.sqrt(v + np.float32(1e-5)))[:, None, None]
    return x * s + (b[:, None, None] - m[:, None, None] * s)


def _np_group_norm(x, w, b, groups=8):
    g = x.reshape(x.shape[0], groups, -1)
    y = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + np.float32(1e-5))
    return y.reshape(x.shape) * w[:, None, None] + b[:, None, None]


_NCHW = ((64, 64, 28, 28),)
_NCHW_LABEL = "{0[0]}x{0[1]}x{0[2]}x{0[3]}"


@register("reduction/batch_norm_eval", full=_NCHW, quick=((8, 16, 32, 32),), label=_NCHW_LABEL)
def batch_norm_eval(shape) -> Case:
    """Inference batch norm (running statistics, affine): one pass x * alpha + beta."""
    c = shape[1]
    stats = [rand(c, seed=1), np.abs(rand(c, seed=2)) + np.float32(0.5), rand(c, seed=3),
             rand(c, seed=4)]
    return Case(functional(lambda t, x, m, v, w, b: t.nn.functional.batch_norm(x, m, v, w, b),
                           [rand(*shape)] + stats, numpy=_np_batch_norm_eval),
                kind="memory", bytes=4 * 2 * int(np.prod(shape)))


@register("reduction/group_norm", full=_NCHW, quick=((8, 16, 32, 32),), label=_NCHW_LABEL)
def group_norm(shape) -> Case:
    """Group norm (8 groups, affine) without autograd: statistics, then one fused pass."""
    c = shape[1]
    return Case(functional(lambda t, x, w, b: t.nn.functional.group_norm(x, 8, w, b),
                           [rand(*shape), rand(c, seed=1), rand(c, seed=2)], numpy=_np_group_norm),
                kind="memory", bytes=4 * 2 * int(np.prod(shape)))
