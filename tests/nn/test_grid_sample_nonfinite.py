"""grid_sample at NaN, +-inf and huge grid coordinates (and ties of nearest) against torch:
values, input gradients and grid gradients, 2-d (bilinear / nearest / bicubic) and 3-d
(trilinear / nearest), every padding_mode x align_corners, float32 and float64.

torch's CPU 2-d sampler is ATen's vectorised kernel (GridSamplerKernel.cpp): its clip sends NaN
to 0 (``clamp_min(Vec(0), in)``), its reflection of inf is NaN (then clipped to 0), and a NaN
weight makes the zeros-padded and the bicubic outputs NaN. The 3-d sampler is GridSampler.h's
scalar code: ``std::min(size - 1, std::max(in, 0))`` sends NaN to size - 1 in the forward, and
the backward's ``clip_coordinates_set_grad`` lets it through to ``safe_downgrade_to_int_range``
(-100: no corner in bounds). Float32 coordinates from 2**23 on follow float32 arithmetic, as
torch's (reflection of 3e9 reads the pixel float32 rounding picks).

torch's own 2-d bilinear backward reads out of bounds (and may crash) for a NaN coordinate with
border padding and a non-finite one with reflection padding, so those backwards are not run.
"""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import jtorch
import jtorch.nn.functional as JF

NAN, INF = math.nan, math.inf
SPECIAL = [NAN, INF, -INF, 1e10, -1e10, 3e9, -3e9, 2.5e9, 1e30]
PADDINGS = ["zeros", "border", "reflection"]
CASES = [("bilinear", 4), ("nearest", 4), ("bicubic", 4), ("bilinear", 5), ("nearest", 5)]
DTYPES = [np.float32, np.float64]


def _points(v, rank):
    """Grid points holding ``v`` in each coordinate, alone and together, beside normal ones."""
    if rank == 4:
        return [[v, 0.1], [0.2, v], [v, v], [0.3, -0.4], [-0.95, 1.05]]
    return [[v, 0.1, 0.2], [0.2, v, -0.3], [0.1, 0.2, v], [v, v, v], [0.3, -0.4, 0.5]]


def _torch_backward_is_undefined(rank, mode, padding, v):
    return rank == 4 and mode == "bilinear" and (
        (padding == "border" and math.isnan(v)) or (padding == "reflection" and not math.isfinite(v)))


def _run(lib, F, x, g, grad, **kw):
    xt = lib.from_numpy(x.copy()).requires_grad_(grad)
    gt = lib.from_numpy(g.copy()).requires_grad_(grad)
    y = F.grid_sample(xt, gt, **kw)
    if not grad:
        return y.detach().numpy(), None, None
    w = lib.from_numpy(np.linspace(-1.0, 1.5, y.numel()).reshape(tuple(y.shape)).astype(x.dtype))
    (y * w).sum().backward()
    return y.detach().numpy(), xt.grad.numpy(), gt.grad.numpy()


def _close(a, b, dtype):
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(a, b, rtol=tol, atol=tol, equal_nan=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("mode, rank", CASES, ids=[f"{m}-{r}d" for m, r in CASES])
def test_special_coordinates_match_torch(mode, rank, padding, align, dtype):
    rng = np.random.default_rng(3)
    shape = (1, 2, 4, 5) if rank == 4 else (1, 2, 3, 4, 5)
    x = rng.standard_normal(shape).astype(dtype)
    kw = dict(mode=mode, padding_mode=padding, align_corners=align)
    for v in SPECIAL:
        pts = np.array(_points(v, rank), dtype)
        g = pts.reshape((1, 1, len(pts), rank - 2) if rank == 4 else (1, 1, 1, len(pts), 3))
        grad = not _torch_backward_is_undefined(rank, mode, padding, v)
        jy, jgx, jgg = _run(jtorch, JF, x, g, grad, **kw)
        ty, tgx, tgg = _run(torch, TF, x, g, grad, **kw)
        _close(jy, ty, dtype)
        if grad:
            _close(jgx, tgx, dtype)
            _close(jgg, tgg, dtype)
        if rank == 5 and dtype == np.float64:  # (torch's scalar arithmetic, matched bit for bit)
            np.testing.assert_array_equal(jy, ty)
            if grad:
                np.testing.assert_array_equal(jgx, tgx)
                np.testing.assert_array_equal(jgg, tgg)


def test_reflection_of_huge_float32_coordinates_reads_torchs_pixel():
    """The reported case: reflection at 3e9 (float32) reads the pixel torch's float32 rounding
    picks, not the float64 reflection's."""
    x = np.arange(1.0, 21.0, dtype=np.float32).reshape(1, 1, 4, 5)
    for v in (3e9, -3e9, 1e10, 2.5e9, 123456789.0):
        g = np.array([[[[v, 0.1], [0.1, v]]]], np.float32)
        for mode in ("bilinear", "nearest", "bicubic"):
            for align in (False, True):
                kw = dict(mode=mode, padding_mode="reflection", align_corners=align)
                jy, _, _ = _run(jtorch, JF, x, g, False, **kw)
                ty, _, _ = _run(torch, TF, x, g, False, **kw)
                _close(jy, ty, np.float32)


def test_nan_border_2d_is_the_first_pixel_3d_the_last():
    """2-d (vectorised clip): NaN -> 0; 3-d forward (std::min / std::max): NaN -> size - 1."""
    x4 = np.arange(20.0).reshape(1, 1, 4, 5)
    g4 = np.array([[[[NAN, -1.0]]]])
    y4 = JF.grid_sample(jtorch.from_numpy(x4), jtorch.from_numpy(g4), mode="nearest",
                        padding_mode="border", align_corners=True)
    assert y4.item() == 0.0
    x5 = np.arange(60.0).reshape(1, 1, 3, 4, 5)
    g5 = np.array([[[[[NAN, -1.0, -1.0]]]]])
    y5 = JF.grid_sample(jtorch.from_numpy(x5), jtorch.from_numpy(g5), mode="nearest",
                        padding_mode="border", align_corners=True)
    assert y5.item() == 4.0
    assert y5.item() == TF.grid_sample(torch.from_numpy(x5), torch.from_numpy(g5), mode="nearest",
                                       padding_mode="border", align_corners=True).item()


def test_3d_reflection_flip_count_past_the_int_range():
    """``int flips = static_cast<int>(std::floor(in / span))``: a quotient past 2**31 converts
    to INT_MIN (even) on x86, so the reflection does not flip where the true count is odd."""
    x = np.random.default_rng(5).standard_normal((1, 1, 2, 3, 5))
    span = 5.0  # align_corners=False, W = 5: reflections about -0.5 and 4.5
    vals = []
    for q in (2 ** 31 + 1, 2 ** 31 + 3, 2 ** 32 + 7, 2 ** 40 + 1):
        u = q * span + 1.25 - 0.5  # the unnormalised coordinate: 1.25 past an odd flip count
        vals.append((2 * u + 1) / 5 - 1)
    g = np.array([[[[[v, 0.0, 0.0] for v in vals]]]])
    for mode in ("bilinear", "nearest"):
        kw = dict(mode=mode, padding_mode="reflection", align_corners=False)
        jy, jgx, jgg = _run(jtorch, JF, x, g, True, **kw)
        ty, tgx, tgg = _run(torch, TF, x, g, True, **kw)
        np.testing.assert_array_equal(jy, ty)
        np.testing.assert_array_equal(jgx, tgx)
        np.testing.assert_array_equal(jgg, tgg)


@pytest.mark.parametrize("dtype", DTYPES, ids=["float32", "float64"])
@pytest.mark.parametrize("rank", [4, 5])
@pytest.mark.parametrize("padding", PADDINGS)
def test_nearest_ties_follow_the_grids_dtype(rank, padding, dtype):
    """Nearest rounds half to even the coordinate torch computes in the grid's dtype: grid
    values whose float32 unnormalisation lands exactly on .5 read torch's pixel."""
    rng = np.random.default_rng(7)
    shape = (1, 2, 4, 5) if rank == 4 else (1, 2, 3, 4, 5)
    x = rng.standard_normal(shape).astype(dtype)
    ticks = np.arange(-12, 13, dtype=np.float64) / 10  # -1.2 ... 1.2: many land on .5 ties
    k = rank - 2
    pts = np.stack(np.meshgrid(*[ticks] * k, indexing="ij"), -1).reshape(-1, k)[:, ::-1]
    g = pts.astype(dtype).reshape((1, 1, -1, k) if rank == 4 else (1, 1, 1, -1, 3))
    for align in (False, True):
        kw = dict(mode="nearest", padding_mode=padding, align_corners=align)
        jy, jgx, _ = _run(jtorch, JF, x, g, True, **kw)
        ty, tgx, _ = _run(torch, TF, x, g, True, **kw)
        np.testing.assert_array_equal(jy, ty)
        np.testing.assert_array_equal(jgx, tgx)


@pytest.mark.parametrize("mode, rank", CASES, ids=[f"{m}-{r}d" for m, r in CASES])
@pytest.mark.parametrize("padding", PADDINGS)
def test_normal_coordinates(mode, rank, padding):
    """Normal grids: float64 within 1e-12 of torch (3-d: its bits); float32 within 1e-5 of
    torch's float64 result on the same data (torch's float32 rounds its coordinates)."""
    rng = np.random.default_rng(11)
    shape = (2, 3, 5, 6) if rank == 4 else (2, 2, 3, 4, 5)
    x = rng.standard_normal(shape)
    g = rng.uniform(-1.4, 1.4, (2, 3, 4, 2) if rank == 4 else (2, 2, 3, 4, 3))
    for align in (False, True):
        kw = dict(mode=mode, padding_mode=padding, align_corners=align)
        j64 = _run(jtorch, JF, x, g, True, **kw)
        t64 = _run(torch, TF, x, g, True, **kw)
        j32 = _run(jtorch, JF, x.astype(np.float32), g.astype(np.float32), True, **kw)
        for a, b, c in zip(j64, t64, j32):
            _close(a, b, np.float64)
            if rank == 5:
                np.testing.assert_array_equal(a, b)
            np.testing.assert_allclose(c, b, rtol=1e-4, atol=1e-4)
