"""Constant fill (creation ops): one compiled loop, serial or parallel by size."""

from __future__ import annotations

import numba
import numpy as np

from ... import _flags


@numba.njit(cache=True, nogil=True)
def _fill(out, v):
    for i in range(out.size):
        out[i] = v


@numba.njit(cache=True, nogil=True, parallel=True)
def _fill_par(out, v):
    for i in numba.prange(out.size):
        out[i] = v


def fill(a: np.ndarray, value) -> None:
    if a.dtype == np.float16:
        a[...] = value
        return
    flat = a.reshape(-1)
    v = a.dtype.type(value)
    (_fill_par if flat.size >= _flags.GRAIN_SIZE else _fill)(flat, v)
