"""Resampling and padding: interpolate (and its upsample aliases), pad, pixel_shuffle,
pixel_unshuffle, grid_sample, affine_grid.

These are torch's Python-level functions: they parse the arguments (torch's ValueErrors and
TypeErrors) and call the resampling OpDefs (``kernels/defs/resample.py``), whose meta rules run
the kernel-level checks and build the index and weight tables (a resize or an index-mapping pad
is a gather or a weighted taps sum over (planes, D, H, W) views); pixel_shuffle and
pixel_unshuffle are views and a reshape.

>>> import jtorch
>>> jtorch.nn.functional.interpolate(jtorch.ones(1, 1, 2, 2), scale_factor=2).shape
torch.Size([1, 1, 4, 4])
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dispatch
from .. import dtypes as _dt
from ..amp import state as _amp
from ..kernels.defs import resample as R
from ..tensor import Tensor

__all__ = ["affine_grid", "channel_shuffle", "grid_sample", "interpolate", "pad", "pixel_shuffle",
           "pixel_unshuffle", "upsample", "upsample_bilinear", "upsample_nearest"]

_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_NEEDS = {"linear": 3, "bilinear": 4, "trilinear": 5, "bicubic": 4}


# -- interpolate -------------------------------------------------------------------------------

def _is_integer(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool) or (
        isinstance(x, Tensor) and x.dtype.category < 2)


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
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and nd == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos "
                         "modes and requires a 4-D tensor as input")
    if mode == "lanczos" and nd == 4:
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")
    if antialias:
        return _interpolate_aa(input, mode, tuple(out_sp), scales, align_corners)
    needs = _NEEDS.get(mode)
    if needs is not None and nd in (3, 4, 5) and nd != needs:
        raise NotImplementedError(f"Got {nd}D input, but {mode} mode needs {needs}D input")
    if nd not in (3, 4, 5) or mode not in R.INTERPOLATE_GRAD:
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {nd}D) for the modes: "
            f"{_MODES} (got {mode})")
    op = R.resample_gather_op if mode in ("nearest", "nearest-exact") else R.resample_taps_op
    if input.dtype is _dt.uint8 and mode == "bilinear":
        # images: interpolated in float32 and rounded to the nearest level (torch's uint8
        # kernel uses fixed-point weights: its values are within one level of these)
        res = dispatch.call(op, input.to(_dt.float32), mode=mode, size=tuple(out_sp),
                            scales=None if scales is None else tuple(scales),
                            align_corners=align_corners)
        return res.round_().clamp_(0, 255).to(_dt.uint8)
    return dispatch.call(op, input, mode=mode, size=tuple(out_sp),
                         scales=None if scales is None else tuple(scales),
                         align_corners=align_corners)


def _interpolate_aa(input: Tensor, mode: str, size: tuple, scales, align: bool) -> Tensor:
    """torch's antialiased resize: separable filter taps (one taps op). uint8 runs as torch's
    fixed-point kernel does: one pass per resized dim (width first), each rounded to uint8."""
    scales = None if scales is None else tuple(scales)
    kw = {"mode": mode, "scales": scales, "align_corners": align, "antialias": True}
    if input.dtype is _dt.uint8 and input.dim() == 4 and input._a.shape[3] != size[1] \
            and input._a.shape[2] != size[0]:
        input = dispatch.call(R.resample_taps_op, input, size=(input._a.shape[2], size[1]), **kw)
    return dispatch.call(R.resample_taps_op, input, size=size, **kw)


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
    if mode == "constant":
        return dispatch.call(R.constant_pad_nd_op, input, pad=pads,
                             value=0 if value is None else value)
    if _amp.on and (mode == "replicate" or (mode == "reflect" and len(pads) <= 4)):
        input, = _amp.fp32(input)  # torch autocasts reflection_pad1d/2d, replication_pad*
    return dispatch.call(R.resample_gather_op, input, pad=pads, mode=mode, value=value)


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


def channel_shuffle(input: Tensor, groups: int) -> Tensor:
    """(N, C, *) with C = g k -> the channels read as (k, g): channel i of group j moves to
    position i g + j (ShuffleNet); a copy."""
    g = int(groups)
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if g <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value of "
                           f"groups:{g}")
    n, c, *rest = input._a.shape
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels and "
                           f"{g} groups.")
    x = input.reshape(n, g, c // g, *rest).transpose(1, 2)
    return x.reshape(n, c, *rest).contiguous()


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

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False "
                  "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
                  "See the documentation of grid_sample for details.")


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` (N, C, H, W) at the normalised (x, y) locations of ``grid``
    (N, H_out, W_out, 2) (or (N, C, D, H, W) at the (x, y, z) of (N, D_out, H_out, W_out, 3)):
    bilinear (trilinear), nearest or (2-D only) bicubic, zeros / border / reflection padding."""
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in R.GRID_PADDING:
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if _amp.on:  # CPU autocast runs it in float32, CUDA's promotes
        input, grid = _amp.promote("cuda", *_amp.fp32(input, grid, devices=("cpu",)))
    op = R.grid_sampler_3d_op if input.dim() == 5 else R.grid_sampler_2d_op
    return dispatch.call(op, input, grid, mode=mode, padding_mode=padding_mode,
                         align_corners=bool(align_corners))


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
    k = len(spatial)
    base = dispatch.call(R.affine_grid_base_op, spatial=tuple(spatial), align=bool(align_corners),
                         dtype=theta.dtype, device=theta.device)
    nb = size[0]
    grid = base.expand(nb, -1, -1).bmm(theta.transpose(1, 2))
    return grid.reshape(nb, *spatial, k)
