"""Dropout in training as torch's CPU path computes it (``at::_dropout``: ``noise =
empty_like(x).bernoulli_(1 - p); noise.div_(1 - p); x * noise``), in one pass: the same
``bernoulli_(1 - p)`` draws as ``mt19937.bernoulli_scalar``, the scaled noise and the
product written together, instead of four kernel calls and three passes over memory."""

from __future__ import annotations

import numpy as np

from ..jit import njit
from .mt19937 import _CHUNK, uniform64


@njit(cache=True, nogil=True)
def dropout_noise(mt, pos, x, noise, y, keep, scale):
    """For the contiguous ``x``: ``noise[i]`` = ``scale`` where a float64 uniform is below
    ``keep`` (``bernoulli_distribution<double>``), else 0; ``y[i] = x[i] * noise[i]``."""
    n = x.size
    u = np.empty(min(n, _CHUNK))
    zero = noise.dtype.type(0)
    for s in range(0, n, _CHUNK):
        m = min(_CHUNK, n - s)
        uniform64(mt, pos, u[:m], 0.0, 1.0)
        xs, ns, ys = x[s:s + m], noise[s:s + m], y[s:s + m]  # (indexed at s + i: scalar)
        for i in range(m):
            v = scale if u[i] < keep else zero
            ns[i] = v
            ys[i] = xs[i] * v
