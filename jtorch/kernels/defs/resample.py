"""Resampling OpDefs: interpolation, padding and grid sampling.

A resize or an index-mapping pad becomes a *plan* (``ResamplePlan``): per spatial dim, the
source indices (and for interpolating modes the weights) of every output position, computed
in the meta rule with torch's arithmetic (``area_pixel_compute_source_index`` in the input's
dtype, the nearest rules in float32, bicubic A = -0.75 with clamped border taps,
adaptive-average windows for ``area``). Two kernel shapes run every plan
(``kernels/cpu/resample.py``): a *gather* (nearest, nearest-exact, reflect / replicate /
circular padding) and a weighted *taps* sum (linear, bilinear, trilinear, bicubic, area).
The backward op scatters through the same plan. Both forward maps are linear, so a backward
op's own gradient is the forward op again: double backward comes for free. Constant padding's
gradient is constant padding by the negated pads.

Antialiased interpolation (``antialias=True``: bilinear, bicubic, lanczos) is a taps plan too:
torch's separable filter tables (``_compute_indices_min_size_weights_aa``: the filter's
support widened by the downscale factor, weights normalised per output pixel; Keys' cubic
with A = -0.5, Lanczos-3), a dim whose size does not change left alone. uint8 takes torch's
fixed-point weights (int16 with a per-table precision, rounded half up per pass).

grid_sample has its own kernels (2-D: bilinear, nearest, bicubic; 3-D: trilinear, nearest)
following ATen's GridSampler formulas, with one backward op per rank giving the input and the
grid gradients.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ... import dispatch
from ... import dtypes as _dt
from ..plan import Out, Plan, common_device, device_of
from ..registry import defvjp, op
from ._lazy import lazy

_RK = "jtorch.kernels.cpu.resample_entries"  # imported at the first call (_lazy.py)

_F32 = np.float32
_FLOATS = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)


@dataclass(eq=False)
class ResamplePlan:
    """What a resample op and its backward need: kernel kind, per-dim tables (padded to three
    dims, outermost first), the full input/output shapes, and torch's grad_fn name."""

    kind: str  # "gather" | "taps"
    tables: tuple
    in_shape: tuple
    out_shape: tuple
    name: str
    compute: np.dtype
    nsp: int  # number of spatial (trailing) dims


def _pad_tables(tables: list, kind: str, dt) -> tuple:
    """Prepend trivial tables so that there are three (outermost first). Indices become
    unsigned: the kernels then index without Numba's negative-index wraparound test."""
    if kind == "gather":
        trivial = np.zeros(1, np.int64)
        tables = [t.astype(np.uint64) for t in [trivial] * (3 - len(tables)) + tables]
    else:
        trivial = (np.zeros((1, 1), np.int64), np.ones((1, 1), dt), np.ones(1, np.int64))
        tables = [(i.astype(np.uint64), w, c) for i, w, c in [trivial] * (3 - len(tables)) + tables]
    return tuple(tables)


# -- torch's source-index arithmetic (UpSample.h) ----------------------------------------------

def _scales_value(scale, n_in: int, n_out: int, dt):
    """compute_scales_value<dt>: 1/scale when a positive scale was given, else in/out."""
    if scale is not None and scale > 0:
        return dt(1.0 / scale)
    return dt(n_in) / dt(n_out)


def _area_scale(n_in: int, n_out: int, align: bool, scale, dt):
    if align:
        return dt(n_in - 1) / dt(n_out - 1) if n_out > 1 else dt(0)
    return _scales_value(scale, n_in, n_out, dt)


def _source_index(scale, n_out: int, align: bool, cubic: bool, dt) -> np.ndarray:
    i = np.arange(n_out)
    if align:
        return (dt(scale) * i.astype(dt)).astype(dt)
    src = (np.float64(scale) * (i + 0.5) - 0.5).astype(dt)
    return src if cubic else np.where(src < 0, dt(0), src).astype(dt)


def _guard(real: np.ndarray, n_in: int, dt) -> tuple:
    """guard_index_and_lambda: floorf index capped at n_in - 1, lambda clamped to [0, 1]."""
    idx = np.minimum(np.floor(real.astype(_F32)).astype(np.int64), n_in - 1)
    lam = np.clip(real - idx.astype(dt), 0, 1).astype(dt)
    return idx, lam


def _linear_table(n_in: int, n_out: int, align: bool, scale, dt) -> tuple:
    if n_in == n_out:
        idx = np.stack([np.arange(n_out)] * 2, 1)
        w = np.stack([np.ones(n_out, dt), np.zeros(n_out, dt)], 1)
    else:
        real = _source_index(_area_scale(n_in, n_out, align, scale, dt), n_out, align, False, dt)
        i0, l1 = _guard(real, n_in, dt)
        idx = np.stack([i0, i0 + (i0 < n_in - 1)], 1)
        w = np.stack([(dt(1) - l1).astype(dt), l1], 1)
    return idx.astype(np.int64), w, np.full(n_out, 2, np.int64)


def _cubic_table(n_in: int, n_out: int, align: bool, scale, dt) -> tuple:
    real = _source_index(_area_scale(n_in, n_out, align, scale, dt), n_out, align, True, dt)
    i0, t = _guard(real, n_in, dt)
    a = dt(-0.75)

    def conv1(x):  # cubic_convolution1, |x| <= 1
        return ((a + dt(2)) * x - (a + dt(3))) * x * x + dt(1)

    def conv2(x):  # cubic_convolution2, 1 < |x| < 2
        return ((a * x - dt(5) * a) * x + dt(8) * a) * x - dt(4) * a

    x2 = (dt(1) - t).astype(dt)
    w = np.stack([conv2((t + dt(1)).astype(dt)), conv1(t), conv1(x2), conv2((x2 + dt(1)))], 1)
    idx = np.clip(i0[:, None] - 1 + np.arange(4), 0, n_in - 1)
    return idx.astype(np.int64), w.astype(dt), np.full(n_out, 4, np.int64)


def _area_table(n_in: int, n_out: int, dt) -> tuple:
    """Adaptive average pooling windows: [floor(i*in/out), ceil((i+1)*in/out))."""
    i = np.arange(n_out)
    start = i * n_in // n_out
    end = ((i + 1) * n_in + n_out - 1) // n_out
    cnt = end - start
    taps = int(cnt.max())
    idx = np.minimum(start[:, None] + np.arange(taps), n_in - 1)
    w = np.broadcast_to((dt(1) / cnt.astype(dt))[:, None], idx.shape).astype(dt)
    return idx.astype(np.int64), w, cnt.astype(np.int64)


def _nearest_index(n_in: int, n_out: int, scale, exact: bool) -> np.ndarray:
    i = np.arange(n_out)
    if not exact:
        if n_out == n_in:
            return i
        if n_out == 2 * n_in:
            return i >> 1
    s = _scales_value(scale, n_in, n_out, _F32)
    prod = (i + 0.5) * np.float64(s) if exact else i.astype(_F32) * s
    return np.minimum(np.floor(prod.astype(_F32)).astype(np.int64), n_in - 1)


def _dim_table(mode: str, n_in: int, n_out: int, align: bool, scale, dt):
    if mode in ("nearest", "nearest-exact"):
        return _nearest_index(n_in, n_out, scale, mode == "nearest-exact")
    if mode == "area":
        return _area_table(n_in, n_out, dt)
    if mode == "bicubic":
        return _cubic_table(n_in, n_out, align, scale, dt)
    return _linear_table(n_in, n_out, align, scale, dt)


# -- antialiased interpolation (UpSampleKernel.cpp's separable aa path) ------------------------

_AA_TAPS = {"bilinear": 2, "bicubic": 4, "lanczos": 6}  # interp_size of each filter


def _aa_filter(mode: str, x: np.ndarray, dt) -> np.ndarray:
    """HelperInterp<Linear|Cubic|Lanczos>::aa_filter: the triangle, Keys' cubic (A = -0.5,
    as PIL) and the Lanczos-3 windowed sinc."""
    x = np.abs(x)
    if mode == "bilinear":
        return np.where(x < 1, 1.0 - x.astype(np.float64), 0).astype(dt)
    if mode == "bicubic":
        a = dt(-0.5)
        near = ((a + dt(2)) * x - (a + dt(3))) * x * x + dt(1)
        far = ((a * x - dt(5) * a) * x + dt(8) * a) * x - dt(4) * a
        return np.where(x < 1, near, np.where(x < 2, far, 0)).astype(dt)
    px = np.pi * x.astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        sinc = np.where(x == 0, 1.0, np.sin(px) / px) * np.where(
            x == 0, 1.0, np.sin(px / 3) / (px / 3))
    return np.where(x < 3, sinc, 0).astype(dt)


def _aa_table(mode: str, n_in: int, n_out: int, align: bool, scale, dt) -> tuple:
    """One dim's taps: output i reads inputs [xmin, xmin + xsize) around its centre
    scale * (i + 0.5), weighted by the filter at (j - centre + 0.5) / scale (scale >= 1: the
    support widened by the downscale factor), normalised to sum to one. Arithmetic in ``dt``
    (the input's dtype; float64 for uint8) where torch's is."""
    if n_in == n_out:  # torch leaves a dim of unchanged size alone
        return np.arange(n_out)[:, None], np.ones((n_out, 1), dt), np.ones(n_out, np.int64)
    s = _area_scale(n_in, n_out, align, scale, dt)
    s64 = np.float64(s)
    half = _AA_TAPS[mode] * 0.5
    support = dt(half * s64) if s >= 1 else dt(half)
    taps = math.ceil(support) * 2 + 1
    invscale = dt(1.0 / s64) if s >= 1 else dt(1)
    i = np.arange(n_out)
    center = (s64 * (i + 0.5)).astype(dt)
    lo = ((center - support).astype(dt).astype(np.float64) + 0.5).astype(np.int64)
    hi = ((center + support).astype(dt).astype(np.float64) + 0.5).astype(np.int64)
    xmin = np.maximum(lo, 0)
    xsize = np.clip(np.minimum(hi, n_in) - xmin, 0, taps)
    j = np.arange(taps)
    rel = ((j + xmin[:, None]).astype(dt) - center[:, None]).astype(dt)
    w = _aa_filter(mode, ((rel.astype(np.float64) + 0.5) * np.float64(invscale)).astype(dt), dt)
    w = np.where(j < xsize[:, None], w, 0).astype(dt)
    total = np.zeros(n_out, dt)
    for k in range(taps):  # summed in order, in dt, as torch
        total = (total + w[:, k]).astype(dt)
    w = np.where(total[:, None] != 0, w / np.where(total == 0, dt(1), total)[:, None], w)
    idx = np.minimum(xmin[:, None] + j, n_in - 1)
    return idx.astype(np.int64), w.astype(dt), xsize.astype(np.int64)


def _int16_weights(table: tuple) -> tuple:
    """torch's uint8 weights: each float64 weight rounded (half away from zero) to a multiple of
    2**-p, p the most bits (up to 22) keeping the largest weight below 2**15 (int16); the
    kernel then sums exactly and rounds half up, as torch's shift does."""
    idx, w, cnt = table
    wmax = float(w.max()) if w.size else 0.0
    p = 0
    while p < 22 and int(0.5 + wmax * (1 << (p + 1))) < (1 << 15):
        p += 1
    v = w * float(1 << p)
    q = np.where(v < 0, np.trunc(v - 0.5), np.trunc(v + 0.5))
    return idx, q / float(1 << p), cnt


# -- interpolate: torch's kernel-level checks and the plan --------------------------------------

# torch's grad_fn name per interpolation mode (the modes interpolate knows)
INTERPOLATE_GRAD = {
    "nearest": "UpsampleNearest{}DBackward0", "nearest-exact": "UpsampleNearestExact{}DBackward0",
    "linear": "UpsampleLinear1DBackward0", "bilinear": "UpsampleBilinear2DBackward0",
    "trilinear": "UpsampleTrilinear3DBackward0", "bicubic": "UpsampleBicubic2DBackward0",
    "area": "AdaptiveAvgPool{}DBackward0"}
AA_GRAD = {"bilinear": "UpsampleBilinear2DAaBackward0", "bicubic": "UpsampleBicubic2DAaBackward0",
           "lanczos": "UpsampleLanczos2DAaBackward0"}
_KERNEL = {("nearest", 1): "compute_indices_weights_nearest",
           ("nearest", 2): "upsample_nearest2d_channels_last",
           ("nearest", 3): "upsample_nearest3d_channels_last",
           ("linear", 1): "compute_indices_weights_linear",
           ("bilinear", 2): "upsample_bilinear2d_channels_last",
           ("trilinear", 3): "compute_indices_weights_linear",
           ("bicubic", 2): "compute_indices_weights_cubic"}


def _check_sizes(in_sp: list, out_sp: list, shape: tuple) -> None:
    names = "DHW"[3 - len(in_sp):]
    if min(in_sp) > 0 and min(out_sp) > 0:
        if math.prod(shape) == 0 and math.prod(shape[1:]) == 0:
            raise RuntimeError(f"Non-empty {len(shape)}D data tensor expected but got a tensor "
                               f"with sizes {list(shape)}")
        return
    if len(in_sp) == 1:
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"(W: {in_sp[0]}) and output (W: {out_sp[0]})")
    fi = ", ".join(f"{n}: {v}" for n, v in zip(names, in_sp))
    fo = ", ".join(f"{n}: {v}" for n, v in zip(names, out_sp))
    raise RuntimeError(f"Input and output sizes should be greater than 0, but got input ({fi}) "
                       f"output ({fo})")


def _check_dtype(x, mode: str, dim: int, antialias: bool = False) -> None:
    d = x.dtype
    if antialias:
        if d in (_dt.float32, _dt.float64, _dt.uint8):
            return
        raise NotImplementedError(f'"compute_index_ranges_weights" not implemented for '
                                  f"'{d.scalar_name}'")
    if d in _FLOATS or (d is _dt.uint8 and mode in ("nearest", "nearest-exact")):
        return
    name = f"adaptive_avg_pool{dim}d" if mode == "area" else _KERNEL.get(
        ("nearest" if mode == "nearest-exact" else mode, dim), "upsample")
    raise NotImplementedError(f'"{name}" not implemented for \'{d.scalar_name}\'')


def _interpolate_plan(x, mode: str, size: tuple, scales, align: bool,
                      antialias: bool = False) -> ResamplePlan:
    """``x`` (N, C, *spatial) resized to ``size`` by ``mode`` (``scales``: the user's scale
    factors handed to the index arithmetic, or None); ``antialias``: torch's aa filters (a
    uint8 input then takes fixed-point weights, computed in float64)."""
    shape = tuple(x._a.shape)
    dim = len(shape) - 2
    _check_dtype(x, mode, dim, antialias)
    _check_sizes(list(shape[2:]), list(size), shape)
    compute = np.dtype(np.float32) if x.dtype in _dt.HALF else x.dtype.np
    if x.dtype is _dt.uint8 and antialias:
        compute = np.dtype(np.float64)
    dt = compute.type
    scales = scales or [None] * dim
    dims = list(zip(shape[2:], size, scales))
    if antialias:
        tables = [_aa_table(mode, n, o, align, s, dt) for n, o, s in dims]
        if x.dtype is _dt.uint8:
            tables = [_int16_weights(t) for t in tables]
        return ResamplePlan("taps", _pad_tables(tables, "taps", dt), shape,
                            shape[:2] + tuple(size), AA_GRAD[mode], compute, dim)
    tables = [_dim_table(mode, n, o, align, s, dt) for n, o, s in dims]
    kind = "gather" if mode in ("nearest", "nearest-exact") else "taps"
    return ResamplePlan(kind, _pad_tables(tables, kind, dt), shape, shape[:2] + tuple(size),
                        INTERPOLATE_GRAD[mode].format(dim), compute, dim)


# -- pad: reflect / replicate / circular --------------------------------------------------------

_PAD_NAME = {"reflect": "ReflectionPad{}DBackward0", "replicate": "ReplicationPad{}DBackward0",
             "circular": "CircularPad{}DBackward0"}


def _pad_index(n: int, lo: int, hi: int, mode: str) -> np.ndarray:
    if mode == "circular":  # torch wraps around the input left after negative pads crop it
        start = max(-lo, 0)
        core = max(n - start - max(-hi, 0), 1)
        return start + (np.arange(n + lo + hi) - max(lo, 0)) % core
    o = np.arange(n + lo + hi) - lo
    if mode == "replicate":
        return np.clip(o, 0, n - 1)
    o = np.abs(o)
    return np.where(o >= n, 2 * (n - 1) - o, o)


def _check_pad_dims(shape: list, k: int, mode: str, pads: list) -> None:
    nd = len(shape)
    if mode == "circular":
        for j in range(k):
            n = shape[nd - 1 - j]
            if pads[2 * j] > n or pads[2 * j + 1] > n:
                raise RuntimeError("Padding value causes wrapping around more than once.")
        return
    if any(n == 0 for n in (shape[1:] if nd == k + 2 else shape)):
        raise RuntimeError(f"Expected {k + 1}D or {k + 2}D (batch mode) tensor with possibly 0 "
                           f"batch size and other non-zero dimensions for input, but got: "
                           f"{shape}")
    if mode == "reflect":
        for j in range(k):
            lo, hi = pads[2 * j], pads[2 * j + 1]
            n = shape[nd - 1 - j]
            if lo >= n or hi >= n:
                raise RuntimeError(f"Argument #{4 + 2 * j}: Padding size should be less than the "
                                   f"corresponding input dimension, but got: padding ({lo}, {hi})"
                                   f" at dimension {nd - 1 - j} of input {shape}")


def _pad_plan(x, pads: list, mode: str, value) -> ResamplePlan:
    """torch's pad checks for a non-constant ``mode``, and its index tables."""
    if mode not in _PAD_NAME:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    shape = tuple(x._a.shape)
    nd = len(shape)
    k = len(pads) // 2
    if not (1 <= k <= 3 and nd in (k + 1, k + 2)):
        raise NotImplementedError(
            f"Padding size {len(pads)} is not supported for {nd}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode != "circular" and x.dtype is _dt.bool:
        kernel = "reflection" if mode == "reflect" else "replication"
        raise NotImplementedError(f'"{kernel}_pad{k}d" not implemented for \'Bool\'')
    _check_pad_dims(list(shape), k, mode, pads)
    tables, out_sp = [], []
    for j in reversed(range(k)):
        n = shape[nd - 1 - j]
        lo, hi = pads[2 * j], pads[2 * j + 1]
        out_sp.append(max(n + lo + hi, 0))
        tables.append(_pad_index(n, lo, hi, mode)[: out_sp[-1]].astype(np.int64))
    # bool (circular only) is gathered as bytes, float16/bfloat16 (no Numba type) as float32
    compute = np.dtype(np.uint8) if x.dtype is _dt.bool else np.dtype(np.float32) \
        if x.dtype in _dt.HALF else x.dtype.np
    return ResamplePlan("gather", _pad_tables(tables, "gather", None), shape,
                        shape[: nd - k] + tuple(out_sp), _PAD_NAME[mode].format(k), compute, k)


def _resample_meta(x, *, plan: ResamplePlan | None = None, mode: str | None = None,
                   size: tuple | None = None, scales=None, align_corners=None, pad=None,
                   value=None, antialias: bool = False) -> Plan:
    """interpolate (``mode``, ``size``, ``scales``, ``align_corners``, ``antialias``) or a
    non-constant pad (``pad``, ``mode``, ``value``); the gradient rules pass the forward's
    ``plan``."""
    if plan is None:
        plan = _pad_plan(x, pad, mode, value) if pad is not None else \
            _interpolate_plan(x, mode, size, scales, align_corners, antialias)
    return Plan(Out(plan.out_shape, x.dtype), {"plan": plan}, device_of(x))


def _resample_backward_meta(g, *, plan: ResamplePlan) -> Plan:
    return Plan(Out(plan.in_shape, g.dtype), {"plan": plan}, device_of(g))


# -- constant padding --------------------------------------------------------------------------

def _constant_pad_meta(x, *, pad: list, value=0) -> Plan:
    """torch.constant_pad_nd: negative pads crop (from the last dim backwards)."""
    shape = x._a.shape
    nd = len(shape)
    if len(pad) // 2 > nd:
        raise RuntimeError(f"Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{nd}")
    lead = nd - len(pad) // 2
    for j in range(len(pad) // 2):
        lo, hi = pad[2 * j], pad[2 * j + 1]
        if shape[nd - 1 - j] + min(lo, 0) + min(hi, 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    out = list(shape[:lead])
    for d in range(lead, nd):
        j = nd - 1 - d
        out.append(shape[d] + pad[2 * j] + pad[2 * j + 1])
    return Plan(Out(tuple(out), x.dtype), {"pad": list(pad), "value": value}, device_of(x))


# -- grid_sample / affine_grid -----------------------------------------------------------------

_GRID_MODES = {"bilinear": 0, "nearest": 1, "bicubic": 2}
GRID_PADDING = {"zeros": 0, "border": 1, "reflection": 2}


def _grid_sampler_meta(x, grid, *, mode: str, padding_mode: str, align_corners: bool,
                       rank: int) -> Plan:
    """torch's grid_sampler checks; the output (N, C, *grid.shape[1:-1]). ``rank``: the input
    rank of the op (4: grid_sampler_2d, 5: grid_sampler_3d)."""
    xs, gs = list(x._a.shape), list(grid._a.shape)
    if len(xs) not in (4, 5):
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number "
                           f"of dimensions, but got input with sizes {xs} and grid with sizes "
                           f"{gs}")
    if gs[0] != xs[0] or len(gs) != len(xs):
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {xs} and grid with sizes {gs}")
    if gs[-1] != len(xs) - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {len(xs) - 2} in last "
                           f"dimension, but got grid with sizes {gs}")
    for d, n in enumerate(xs[2:]):
        if n == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {xs} with dimension {d + 2} "
                               "being empty")
    if len(xs) != rank:
        raise RuntimeError(f"grid_sampler(): expected {rank}D input and grid with same number of "
                           f"dimensions, but got input with sizes {xs} and grid with sizes {gs}")
    if rank == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if x.dtype is not grid.dtype:
        raise RuntimeError(f"expected scalar type {x.dtype.scalar_name} but found "
                           f"{grid.dtype.scalar_name}")
    if x.dtype not in _FLOATS:
        kernel = "grid_sampler_2d_cpu_kernel_impl" if rank == 4 else "grid_sampler3d_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for \'{x.dtype.scalar_name}\'')
    kw = {"mode": _GRID_MODES[mode], "padding": GRID_PADDING[padding_mode],
          "align": bool(align_corners)}
    return Plan(Out((xs[0], xs[1], *gs[1:-1]), x.dtype), kw, common_device(x, grid))


def _grid_sampler_2d_meta(x, grid, *, mode: str, padding_mode: str, align_corners: bool) -> Plan:
    return _grid_sampler_meta(x, grid, mode=mode, padding_mode=padding_mode,
                              align_corners=align_corners, rank=4)


def _grid_sampler_3d_meta(x, grid, *, mode: str, padding_mode: str, align_corners: bool) -> Plan:
    return _grid_sampler_meta(x, grid, mode=mode, padding_mode=padding_mode,
                              align_corners=align_corners, rank=5)


def _grid_sampler_backward_meta(g, x, grid, *, mode: int, padding: int, align: bool,
                                need_x: bool) -> Plan:
    """(grad, input, grid) -> (input gradient, grid gradient)."""
    kw = {"mode": mode, "padding": padding, "align": align, "need_x": need_x}
    return Plan((Out(x._a.shape, x.dtype), Out(grid._a.shape, grid.dtype)), kw,
                common_device(g, x, grid))


def _affine_base_meta(*, spatial: tuple, align: bool, dtype, device) -> Plan:
    """The base grid of affine_grid: (1, prod(spatial), k + 1) rows (x, y[, z], 1) over the
    normalised output coordinates."""
    return Plan(Out((1, math.prod(spatial), len(spatial) + 1), dtype),
                {"spatial": tuple(spatial), "align": align}, device)


# -- the OpDefs --------------------------------------------------------------------------------

# (input,) -> output {"plan"}: the forward gather / taps sum and their adjoints
resample_gather_op = op("resample_gather", "extern", _resample_meta, lazy(_RK, "gather_cpu"))
resample_gather_backward_op = op("resample_gather_backward", "extern", _resample_backward_meta,
                                 lazy(_RK, "gather_backward_cpu"))
resample_taps_op = op("resample_taps", "extern", _resample_meta, lazy(_RK, "taps_cpu"))
resample_taps_backward_op = op("resample_taps_backward", "extern", _resample_backward_meta,
                               lazy(_RK, "taps_backward_cpu"))
resample_gather_op.pair, resample_gather_backward_op.pair = (resample_gather_backward_op,
                                                             resample_gather_op)
resample_taps_op.pair, resample_taps_backward_op.pair = (resample_taps_backward_op,
                                                         resample_taps_op)
constant_pad_nd_op = op("constant_pad_nd", "extern", _constant_pad_meta,
                        lazy(_RK, "constant_pad_cpu"))  # (input,) {"pad", "value"}
# (input, grid) -> output {"mode", "padding", "align"}; its backward (grad, input, grid)
# -> (input gradient, grid gradient). 2-D: bilinear / nearest / bicubic; 3-D: trilinear / nearest
grid_sampler_2d_op = op("grid_sampler_2d", "extern", _grid_sampler_2d_meta,
                        lazy(_RK, "grid_sampler_cpu"))
grid_sampler_2d_backward_op = op("grid_sampler_2d_backward", "extern",
                                 _grid_sampler_backward_meta, lazy(_RK, "grid_sampler_backward_cpu"))
grid_sampler_3d_op = op("grid_sampler_3d", "extern", _grid_sampler_3d_meta,
                        lazy(_RK, "grid_sampler_cpu"))
grid_sampler_3d_backward_op = op("grid_sampler_3d_backward", "extern",
                                 _grid_sampler_backward_meta, lazy(_RK, "grid_sampler_backward_cpu"))
grid_sampler_2d_op.pair, grid_sampler_3d_op.pair = (grid_sampler_2d_backward_op,
                                                    grid_sampler_3d_backward_op)
# () -> the base grid of affine_grid {"spatial", "align"} (a factory: device and dtype given)
affine_grid_base_op = op("affine_grid_base", "creation", _affine_base_meta,
                         lazy(_RK, "affine_grid_base_cpu"), differentiable=False)


def _plan_name(inputs, kw) -> str:
    return kw["plan"].name


def _plan_backward_name(inputs, kw) -> str:
    return kw["plan"].name.replace("Backward0", "BackwardBackward0")


# -- gradient rules ----------------------------------------------------------------------------

def _resample_vjp(c, g):
    """The forward's adjoint (the backward op), or for a backward op the forward again."""
    return (dispatch.call(c.op.pair, g, plan=c.kw["plan"]),)


def _constant_pad_vjp(c, g):
    return (dispatch.call(constant_pad_nd_op, g, pad=[-p for p in c.kw["pad"]], value=0),)


def _grid_sampler_vjp(c, g):
    x, grid = c.args
    kw = c.kw
    gx, ggrid = dispatch.call(c.op.pair, g, x, grid, mode=kw["mode"],
                              padding=kw["padding"], align=kw["align"], need_x=c.needs[0])
    return (gx if c.needs[0] else None, ggrid if c.needs[1] else None)


for _op in (resample_gather_op, resample_taps_op):
    defvjp(_op, _resample_vjp, "", name=_plan_name)
for _op in (resample_gather_backward_op, resample_taps_backward_op):
    defvjp(_op, _resample_vjp, "", name=_plan_backward_name)
defvjp(constant_pad_nd_op, _constant_pad_vjp, "", name="ConstantPadNdBackward0")
defvjp(grid_sampler_2d_op, _grid_sampler_vjp, "01", name="GridSampler2DBackward0")
defvjp(grid_sampler_3d_op, _grid_sampler_vjp, "01", name="GridSampler3DBackward0")
