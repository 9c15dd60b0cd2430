"""Resampling and padding: interpolate (and its upsample aliases), pad, pixel_shuffle,
pixel_unshuffle, grid_sample, affine_grid.

A resize or an index-mapping pad becomes a *plan*: per spatial dim, the source indices (and for
interpolating modes the weights) of every output position, computed here once with torch's
arithmetic (``area_pixel_compute_source_index`` in the input's dtype, the nearest rules in
float32, bicubic A = -0.75 with clamped border taps, adaptive-average windows for ``area``).
The compiled kernels (``kernels/cpu/resample.py``) then run the gather or the tap sums over
(planes, D, H, W) views, and the backward op scatters through the same plan.

>>> import jtorch
>>> jtorch.nn.functional.interpolate(jtorch.ones(1, 1, 2, 2), scale_factor=2).shape
torch.Size([1, 1, 4, 4])
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from .. import _allocator, dispatch
from .. import dtypes as _dt
from ..kernels.defs import resample as R
from ..tensor import Tensor

__all__ = ["affine_grid", "grid_sample", "interpolate", "pad", "pixel_shuffle", "pixel_unshuffle",
           "upsample", "upsample_bilinear", "upsample_nearest"]

_F32 = np.float32
_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_FLOATS = (_dt.float16, _dt.float32, _dt.float64)


@dataclass(eq=False)
class _Plan:
    """What a resample op and its backward need: kernel kind, per-dim tables (padded to three
    dims, outermost first), the full input/output shapes, and torch's grad_fn name."""

    kind: str  # "gather" | "taps"
    tables: tuple
    in_shape: tuple
    out_shape: tuple
    name: str
    compute: np.dtype
    nsp: int  # number of spatial (trailing) dims


def _planes(shape: tuple, k: int) -> tuple:
    """(P, D, H, W) of a shape whose last ``k`` (1 to 3) dims are the spatial ones."""
    return (math.prod(shape[:len(shape) - k]),) + (1,) * (3 - k) + tuple(shape[len(shape) - k:])


# -- running a plan ----------------------------------------------------------------------------

def _run(op, src: np.ndarray, dst_shape: tuple, plan: _Plan, zero: bool) -> np.ndarray:
    src = np.ascontiguousarray(src, dtype=plan.compute)
    s4 = src.reshape(_planes(src.shape, plan.nsp))
    d4 = _allocator.empty(_planes(dst_shape, plan.nsp), plan.compute)
    if zero:
        d4.fill(0)
    op.impl(s4, d4, plan.tables)
    return d4.reshape(dst_shape)


def _wrap(a: np.ndarray, like: Tensor) -> Tensor:
    if a.dtype != like.dtype.np:
        a = a.astype(like.dtype.np)
    return Tensor._make(a, None, like.dtype)


def _resample(x: Tensor, plan: _Plan) -> Tensor:
    """Run ``plan`` forward on ``x`` (shape plan.in_shape)."""
    op = R.resample_gather_op if plan.kind == "gather" else R.resample_taps_op
    out = _run(op, x._a, plan.out_shape, plan, False)
    return dispatch.record(op, (x,), _wrap(out, x), {"plan": plan})


def _resample_backward(g: Tensor, plan: _Plan) -> Tensor:
    """The adjoint of ``plan``: g (shape plan.out_shape) scattered back to plan.in_shape."""
    op = R.resample_gather_backward_op if plan.kind == "gather" else R.resample_taps_backward_op
    gx = _run(op, g._a, plan.in_shape, plan, True)
    return dispatch.record(op, (g,), _wrap(gx, g), {"plan": plan})


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


# -- interpolate -------------------------------------------------------------------------------

_GRAD = {"nearest": "UpsampleNearest{}DBackward0", "nearest-exact": "UpsampleNearestExact{}DBackward0",
         "linear": "UpsampleLinear1DBackward0", "bilinear": "UpsampleBilinear2DBackward0",
         "trilinear": "UpsampleTrilinear3DBackward0", "bicubic": "UpsampleBicubic2DBackward0",
         "area": "AdaptiveAvgPool{}DBackward0"}
_KERNEL = {("nearest", 1): "compute_indices_weights_nearest",
           ("nearest", 2): "upsample_nearest2d_channels_last",
           ("nearest", 3): "upsample_nearest3d_channels_last",
           ("linear", 1): "compute_indices_weights_linear",
           ("bilinear", 2): "upsample_bilinear2d_channels_last",
           ("trilinear", 3): "compute_indices_weights_linear",
           ("bicubic", 2): "compute_indices_weights_cubic"}
_NEEDS = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}


def _is_integer(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool) or (
        isinstance(x, Tensor) and x.dtype.category < 2)


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


def _output_size(input: Tensor, dim: int, size, scale_factor, recompute) -> tuple:
    """(output spatial sizes, scales handed to the kernel or None) as F.interpolate."""
    in_sp = list(input._a.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {in_sp} and output size of {size}. "
                    "Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format.")
            if not all(_is_integer(s) for s in size):
                raise TypeError(
                    "expected size to be one of int or Tuple[int] or Tuple[int, int] or "
                    f"Tuple[int, int, int], but got size with types {[type(s) for s in size]}")
            out = [int(s) for s in size]
        else:
            out = [int(size)] * dim
        if recompute:
            raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
        return out, None
    if scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if isinstance(scale_factor, (list, tuple)):
        if len(scale_factor) != dim:
            raise ValueError(
                "Input and scale_factor must have the same number of spatial dimensions, but "
                f"got input with spatial dimensions of {in_sp} and scale_factor of shape "
                f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) format "
                "and scale_factor in (s1, s2, ...,sK) format.")
        scales = [float(s) for s in scale_factor]
    else:
        scales = [float(scale_factor)] * dim
    if recompute:
        return [math.floor(n * s) for n, s in zip(in_sp, scales)], None
    return [int(n * s) for n, s in zip(in_sp, scales)], scales


def _dim_table(mode: str, n_in: int, n_out: int, align: bool, scale, dt):
    if mode in ("nearest", "nearest-exact"):
        return _nearest_index(n_in, n_out, scale, mode == "nearest-exact")
    if mode == "area":
        return _area_table(n_in, n_out, dt)
    if mode == "bicubic":
        return _cubic_table(n_in, n_out, align, scale, dt)
    return _linear_table(n_in, n_out, align, scale, dt)


def _check_dtype(input: Tensor, mode: str, dim: int) -> None:
    d = input.dtype
    if d in _FLOATS or (d is _dt.uint8 and mode in ("nearest", "nearest-exact")):
        return
    name = f"adaptive_avg_pool{dim}d" if mode == "area" else _KERNEL.get(
        ("nearest" if mode == "nearest-exact" else mode, dim), "upsample")
    raise NotImplementedError(f'"{name}" not implemented for \'{dispatch.torch_name(d)}\'')


def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor: bool | None = None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims of an (N, C, [D, [H,]] W) tensor by ``size`` or ``scale_factor``
    with torch's index and weight rules for every mode.

    >>> x = jtorch.arange(4.0).reshape(1, 1, 2, 2)
    >>> jtorch.nn.functional.interpolate(x, size=(3, 3), mode="bilinear", align_corners=True)[0, 0]
    tensor([[0.0000, 0.5000, 1.0000],
            [1.0000, 1.5000, 2.0000],
            [2.0000, 2.5000, 3.0000]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    nd = input.dim()
    dim = nd - 2
    out_sp, scales = _output_size(input, dim, size, scale_factor, recompute_scale_factor)
    if mode == "area" and scales is not None:  # area always works from an explicit size
        out_sp, scales = _output_size(input, dim, None, scale_factor, True)
    if antialias:
        if not (mode in ("bilinear", "bicubic", "lanczos") and nd == 4):
            raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                             "modes and requires a 4-D tensor as input")
        raise NotImplementedError("interpolate: antialias=True is not supported")
    needs = _NEEDS.get(mode)
    if needs is not None and nd in (3, 4, 5) and nd != needs:
        raise NotImplementedError(f"Got {nd}D input, but {mode} mode needs {needs}D input")
    if nd not in (3, 4, 5) or mode not in _GRAD:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {nd}D) for the modes: "
            f"{_MODES} (got {mode})")
    _check_dtype(input, mode, dim)
    shape = tuple(input._a.shape)
    _check_sizes(list(shape[2:]), out_sp, shape)
    compute = np.dtype(np.float32) if input.dtype is _dt.float16 else input.dtype.np
    dt = compute.type
    scales = scales or [None] * dim
    tables = [_dim_table(mode, n, o, align_corners, s, dt)
              for n, o, s in zip(shape[2:], out_sp, scales)]
    kind = "gather" if mode in ("nearest", "nearest-exact") else "taps"
    plan = _Plan(kind, _pad_tables(tables, kind, dt), shape, shape[:2] + tuple(out_sp),
                 _GRAD[mode].format(dim), compute, dim)
    return _resample(input, plan)


def upsample(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
             align_corners: bool | None = None) -> Tensor:
    """Deprecated alias of :func:`interpolate`."""
    warnings.warn("`nn.functional.upsample` is deprecated. Use `nn.functional.interpolate` "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: interpolate(..., mode='nearest')."""
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size=None, scale_factor=None) -> Tensor:
    """Deprecated: interpolate(..., mode='bilinear', align_corners=True)."""
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# -- pad ---------------------------------------------------------------------------------------

_PAD_NAME = {"reflect": "ReflectionPad{}DBackward0", "replicate": "ReplicationPad{}DBackward0",
             "circular": "CircularPad{}DBackward0"}


def _constant_pad(x: Tensor, pads: list, value) -> Tensor:
    """torch.constant_pad_nd: negative pads crop (from the last dim backwards)."""
    shape = list(x._a.shape)
    lead = len(shape) - len(pads) // 2
    src, dst, out_shape = [slice(None)] * lead, [slice(None)] * lead, shape[:lead]
    for j in range(len(pads) // 2):
        d = len(shape) - 1 - j
        lo, hi = pads[2 * j], pads[2 * j + 1]
        n = shape[d]
        if n + min(lo, 0) + min(hi, 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    for d in range(lead, len(shape)):
        j = len(shape) - 1 - d
        lo, hi = pads[2 * j], pads[2 * j + 1]
        n = shape[d]
        m = n + lo + hi
        out_shape.append(m)
        src.append(slice(max(-lo, 0), n - max(-hi, 0)))
        dst.append(slice(max(lo, 0), m - max(hi, 0)))
    out = _allocator.empty(tuple(out_shape), x.dtype.np)
    out[...] = value
    out[tuple(dst)] = x._a[tuple(src)]
    return dispatch.record(R.constant_pad_nd_op, (x,), Tensor._make(out, None, x.dtype),
                           {"pad": list(pads)})


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


def _check_pad_dims(input: Tensor, k: int, mode: str, pads: list) -> None:
    shape = list(input._a.shape)
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


def pad(input: Tensor, pad, mode: str = "constant", value=None) -> Tensor:
    """Pad the last ``len(pad) // 2`` dims (pairs given from the last dim backwards).

    ``constant`` pads any dims with ``value`` (negative pads crop); ``reflect``, ``replicate``
    and ``circular`` pad the last 1-3 dims of a (batched) tensor through an index gather whose
    backward accumulates, as torch's kernels do.

    >>> jtorch.nn.functional.pad(jtorch.arange(3.0), (2, 1), mode="constant", value=-1.0)
    tensor([-1., -1.,  0.,  1.,  2., -1.])
    """
    pads = list(pad)
    for i, p in enumerate(pads):
        if not _is_integer(p):
            raise TypeError(f"pad(): argument 'pad' (position 2) must be tuple of ints, but found "
                            f"element of type {type(p).__name__} at pos {i}")
    pads = [int(p) for p in pads]
    if len(pads) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    nd = input.dim()
    k = len(pads) // 2
    if mode == "constant":
        if k > nd:
            raise RuntimeError(f"Padding length should be less than or equal to two times the "
                               f"input dimension but got padding length {len(pads)} and input "
                               f"of dimension {nd}")
        return _constant_pad(input, pads, 0 if value is None else value)
    if mode not in _PAD_NAME:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    if not (1 <= k <= 3 and nd in (k + 1, k + 2)):
        raise NotImplementedError(
            f"Padding size {len(pads)} is not supported for {nd}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    if mode != "circular" and input.dtype is _dt.bool:
        kernel = "reflection" if mode == "reflect" else "replication"
        raise NotImplementedError(f'"{kernel}_pad{k}d" not implemented for \'Bool\'')
    _check_pad_dims(input, k, mode, pads)
    shape = tuple(input._a.shape)
    tables, out_sp = [], []
    for j in reversed(range(k)):
        n = shape[nd - 1 - j]
        lo, hi = pads[2 * j], pads[2 * j + 1]
        out_sp.append(max(n + lo + hi, 0))
        tables.append(_pad_index(n, lo, hi, mode)[: out_sp[-1]].astype(np.int64))
    out_shape = shape[: nd - k] + tuple(out_sp)
    plan = _Plan("gather", _pad_tables(tables, "gather", None), shape, out_shape,
                 _PAD_NAME[mode].format(k), input.dtype.np, k)
    if input.dtype is _dt.bool:  # circular only: gathered as bytes
        plan.compute = np.dtype(np.uint8)
        return _resample(input.to(_dt.uint8), plan).to(_dt.bool)
    return _resample(input, plan)


# -- pixel shuffle -----------------------------------------------------------------------------

def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r): channel blocks become r x r pixel blocks."""
    r = int(upscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *lead, c, h, w = input._a.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    nl = len(lead)
    x = input.reshape(*lead, c // (r * r), r, r, h, w)
    x = x.permute(*range(nl), nl, nl + 3, nl + 1, nl + 4, nl + 2)
    return x.reshape(*lead, c // (r * r), h * r, w * r)


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W): the inverse of pixel_shuffle."""
    r = int(downscale_factor)
    if input.dim() < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.dim()} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *lead, c, h, w = input._a.shape
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, "
                           f"but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, "
                           f"but input.size(-1)={w} is not divisible by {r}")
    nl = len(lead)
    x = input.reshape(*lead, c, h // r, r, w // r, r)
    x = x.permute(*range(nl), nl, nl + 2, nl + 4, nl + 1, nl + 3)
    return x.reshape(*lead, c * r * r, h // r, w // r)


# -- grid_sample / affine_grid -----------------------------------------------------------------

_GRID_MODES = {"bilinear": 0, "nearest": 1}
_GRID_PADDING = {"zeros": 0, "border": 1, "reflection": 2}
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False "
                  "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
                  "See the documentation of grid_sample for details.")


def _grid_arrays(x: Tensor, grid: Tensor) -> tuple:
    compute = np.dtype(np.float32) if x.dtype is _dt.float16 else x.dtype.np
    return (np.ascontiguousarray(x._a, dtype=compute),
            np.ascontiguousarray(grid._a, dtype=compute), compute)


def _grid_sampler_backward(g: Tensor, x: Tensor, grid: Tensor, kw: dict, need_x: bool) -> tuple:
    src, gr, compute = _grid_arrays(x, grid)
    ga = np.ascontiguousarray(g._a, dtype=compute)
    gsrc = _allocator.empty(src.shape, compute)
    gsrc.fill(0)
    ggrid = _allocator.empty(gr.shape, compute)
    ggrid.fill(0)
    R.grid_sampler_2d_backward_op.impl(ga, src, gr, gsrc, ggrid, kw["mode"], kw["padding"],
                                       kw["align"], need_x)
    outs = (_wrap(gsrc, x), _wrap(ggrid, grid))
    return dispatch.record(R.grid_sampler_2d_backward_op, (g, x, grid), outs, dict(kw))


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, H, W) at the normalised (x, y) locations of ``grid``
    (N, H_out, W_out, 2): bilinear or nearest, zeros / border / reflection padding."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _GRID_PADDING:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if input.dim() not in (4, 5):
        raise RuntimeError(f"grid_sampler(): expected 4D or 5D input and grid with same number "
                           f"of dimensions, but got input with sizes {list(input._a.shape)} and "
                           f"grid with sizes {list(grid._a.shape)}")
    if grid._a.shape[0] != input._a.shape[0] or grid.dim() != input.dim():
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {list(input._a.shape)} and grid with sizes "
                           f"{list(grid._a.shape)}")
    if grid._a.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last "
                           f"dimension, but got grid with sizes {list(grid._a.shape)}")
    for d, n in enumerate(input._a.shape[2:]):
        if n == 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {list(input._a.shape)} with "
                               f"dimension {d + 2} being empty")
    if input.dtype is not grid.dtype:
        raise RuntimeError(f"expected scalar type {dispatch.torch_name(input.dtype)} but found "
                           f"{dispatch.torch_name(grid.dtype)}")
    if input.dim() != 4:
        raise NotImplementedError("grid_sample: only 4-D input (2-D sampling) is supported")
    if mode == "bicubic":
        raise NotImplementedError("grid_sample: mode='bicubic' is not supported")
    if input.dtype not in _FLOATS:
        raise NotImplementedError(f'"grid_sampler_2d_cpu_kernel_impl" not implemented for '
                                  f"'{dispatch.torch_name(input.dtype)}'")
    src, gr, compute = _grid_arrays(input, grid)
    out = _allocator.empty(input._a.shape[:2] + gr.shape[1:3], compute)
    kw = {"mode": _GRID_MODES[mode], "padding": _GRID_PADDING[padding_mode],
          "align": bool(align_corners)}
    R.grid_sampler_2d_op.impl(src, gr, out, kw["mode"], kw["padding"], kw["align"])
    return dispatch.record(R.grid_sampler_2d_op, (input, grid), _wrap(out, input), kw)


def _base_coords(n: int, align: bool, dt) -> np.ndarray:
    if n <= 1:
        return np.zeros(max(n, 1), dt)[:n] if n == 0 else np.zeros(1, dt)
    r = np.linspace(-1, 1, n).astype(dt)
    return r if align else (r * (n - 1) / n).astype(dt)


def affine_grid(theta: Tensor, size, align_corners: bool | None = None) -> Tensor:
    """Sampling grid (N, H, W, 2) (or (N, D, H, W, 3)) of the affine maps ``theta``
    (N, 2, 3) (or (N, 3, 4)) applied to the normalised output coordinates."""
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.dtype.is_floating_point:
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    given, size = size, list(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta._a.shape[-2] != 2 or theta._a.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{given}. Got {theta.shape}.")
        spatial = size[-2:]
    elif len(size) == 5:
        if theta.dim() != 3 or theta._a.shape[-2] != 3 or theta._a.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{given}. Got {theta.shape}.")
        spatial = size[-3:]
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {given}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                      "when align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {given}")
    dt = theta.dtype.np.type
    axes = [_base_coords(s, align_corners, dt) for s in reversed(spatial)]  # x, y[, z]
    mesh = np.meshgrid(*reversed(axes), indexing="ij")  # z, y, x order of spatial dims
    base = np.stack([*reversed(mesh), np.ones_like(mesh[0])], -1).astype(dt)
    k = len(spatial)
    base_t = Tensor._make(np.ascontiguousarray(base.reshape(1, -1, k + 1)), None, theta.dtype)
    nb = size[0]
    grid = base_t.expand(nb, -1, -1).bmm(theta.transpose(1, 2))
    return grid.reshape(nb, *spatial, k)
