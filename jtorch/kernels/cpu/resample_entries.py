"""CPU kernel entries of the resampling OpDefs: ``(plan, *tensors) -> Tensor(s)``.

The gather / taps kernels (``kernels/cpu/resample.py``) run over (P, D, H, W) views with the
tables of the op's ``ResamplePlan`` (``kw["plan"]``); float16 and bfloat16 compute in float32 and rounds
once, bool (circular padding) is gathered as bytes, uint8 taps (antialiased) sum in float64
and round half up.
"""

from __future__ import annotations

import math

import numpy as np

from ... import _allocator
from ... import dtypes as _dt
from ...tensor import Tensor
from . import resample as _rk


def _planes(shape: tuple, k: int) -> tuple:
    """(P, D, H, W) of a shape whose last ``k`` (1 to 3) dims are the spatial ones."""
    return (math.prod(shape[:len(shape) - k]),) + (1,) * (3 - k) + tuple(shape[len(shape) - k:])


def _run(fn, src: np.ndarray, dst_shape: tuple, rp, zero: bool) -> np.ndarray:
    src = np.ascontiguousarray(src, dtype=rp.compute)
    s4 = src.reshape(_planes(src.shape, rp.nsp))
    d4 = _allocator.empty(_planes(dst_shape, rp.nsp), rp.compute)
    if zero:
        d4.fill(0)
    fn(s4, d4, rp.tables)
    return d4.reshape(dst_shape)


def _wrap(a: np.ndarray, like: Tensor) -> Tensor:
    if a.dtype != like.dtype.np:
        a = a.astype(like.dtype.np)
    return Tensor._make(a, None, like.dtype)


def gather_cpu(plan, x: Tensor) -> Tensor:
    rp = plan.kw["plan"]
    return _wrap(_run(_rk.gather_into, x._a, rp.out_shape, rp, False), x)


def gather_backward_cpu(plan, g: Tensor) -> Tensor:
    rp = plan.kw["plan"]
    return _wrap(_run(_rk.gather_backward_into, g._a, rp.in_shape, rp, True), g)


def taps_cpu(plan, x: Tensor) -> Tensor:
    rp = plan.kw["plan"]
    out = _run(_rk.taps_into, x._a, rp.out_shape, rp, False)
    if x.dtype.np == np.uint8:  # antialiased uint8: torch's fixed-point sum rounds half up
        out = np.clip(np.floor(out + 0.5), 0, 255)
    return _wrap(out, x)


def taps_backward_cpu(plan, g: Tensor) -> Tensor:
    rp = plan.kw["plan"]
    return _wrap(_run(_rk.taps_backward_into, g._a, rp.in_shape, rp, True), g)


def constant_pad_cpu(plan, x: Tensor) -> Tensor:
    """The input copied into a ``value``-filled output; negative pads crop."""
    pads, value = plan.kw["pad"], plan.kw["value"]
    shape = x._a.shape
    nd = len(shape)
    lead = nd - len(pads) // 2
    src, dst = [slice(None)] * lead, [slice(None)] * lead
    for d in range(lead, nd):
        j = nd - 1 - d
        lo, hi = pads[2 * j], pads[2 * j + 1]
        n = shape[d]
        src.append(slice(max(-lo, 0), n - max(-hi, 0)))
        dst.append(slice(max(lo, 0), n + lo + hi - max(hi, 0)))
    out = _allocator.empty(plan.out.shape, x.dtype.np)
    out[...] = value
    out[tuple(dst)] = x._a[tuple(src)]
    return Tensor._make(out, None, x.dtype)


def _grid_arrays(x: Tensor, grid: Tensor) -> tuple:
    compute = np.dtype(np.float32) if x.dtype in _dt.HALF else x.dtype.np
    return (np.ascontiguousarray(x._a, dtype=compute),
            np.ascontiguousarray(grid._a, dtype=compute), compute)


def grid_sampler_cpu(plan, x: Tensor, grid: Tensor) -> Tensor:
    kw = plan.kw
    src, gr, compute = _grid_arrays(x, grid)
    out = _allocator.empty(plan.out.shape, compute)
    _rk.grid_sample_into(src, gr, out, kw["mode"], kw["padding"], kw["align"])
    return _wrap(out, x)


def grid_sampler_backward_cpu(plan, g: Tensor, x: Tensor, grid: Tensor) -> tuple:
    kw = plan.kw
    src, gr, compute = _grid_arrays(x, grid)
    ga = np.ascontiguousarray(g._a, dtype=compute)
    gsrc = _allocator.empty(src.shape, compute)
    gsrc.fill(0)
    ggrid = _allocator.empty(gr.shape, compute)
    ggrid.fill(0)
    _rk.grid_sample_backward_into(ga, src, gr, gsrc, ggrid, kw["mode"], kw["padding"],
                                  kw["align"], kw["need_x"])
    return _wrap(gsrc, x), _wrap(ggrid, grid)


def _base_coords(n: int, align: bool, dt) -> np.ndarray:
    if n <= 1:
        return np.zeros(max(n, 1), dt)[:n] if n == 0 else np.zeros(1, dt)
    r = np.linspace(-1, 1, n).astype(dt)
    return r if align else (r * (n - 1) / n).astype(dt)


def affine_grid_base_cpu(plan) -> Tensor:
    """Rows (x, y[, z], 1) of the output coordinates, x fastest."""
    kw = plan.kw
    spatial = kw["spatial"]
    d = plan.out.dtype
    dt = d.np.type
    axes = [_base_coords(s, kw["align"], dt) for s in reversed(spatial)]  # x, y[, z]
    mesh = np.meshgrid(*reversed(axes), indexing="ij")  # z, y, x order of spatial dims
    base = np.stack([*reversed(mesh), np.ones_like(mesh[0])], -1).astype(dt)
    return Tensor._make(np.ascontiguousarray(base.reshape(plan.out.shape)), None, d)
