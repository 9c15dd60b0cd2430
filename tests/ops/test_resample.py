"""interpolate, pad, pixel_shuffle/unshuffle, grid_sample and affine_grid against torch:
values and gradients in float64 over the modes and options, float32 values, non-contiguous
inputs, errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import jtorch
import jtorch.nn.functional as JF

RNG = np.random.default_rng(0)


def _pair(a: np.ndarray, grad: bool = True):
    j, t = jtorch.from_numpy(a.copy()), torch.from_numpy(a.copy())
    if grad:
        j.requires_grad_()
        t.requires_grad_()
    return j, t


def _check(fn_j, fn_t, *arrays, rtol=1e-12, atol=1e-12, grad=True, name=True):
    """Values, then gradients of sum(out * g) for every float input."""
    js, ts = zip(*(_pair(a, grad) for a in arrays))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        j, t = fn_j(*js), fn_t(*ts)
    assert tuple(j.shape) == tuple(t.shape)
    assert j.dtype.name == str(t.dtype).split(".")[1]
    np.testing.assert_allclose(j.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)
    if not grad:
        return
    g = RNG.standard_normal(tuple(t.shape)).astype(arrays[0].dtype)
    (j * jtorch.from_numpy(g)).sum().backward()
    (t * torch.from_numpy(g)).sum().backward()
    for a, b in zip(js, ts):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol)
    if name and type(t.grad_fn).__name__ not in ("CopySlices", "SqueezeBackward1"):
        assert type(j.grad_fn).__name__ == type(t.grad_fn).__name__


def _interp(**kw):
    return (lambda x: JF.interpolate(x, **kw)), (lambda x: TF.interpolate(x, **kw))


SIZES = [{"size": 7}, {"size": 3}, {"scale_factor": 1.7}, {"scale_factor": 0.6},
         {"scale_factor": 2.0}, {"scale_factor": 2.3, "recompute_scale_factor": True}]
SHAPES = {"linear": (2, 3, 5), "bilinear": (2, 3, 5, 4), "bicubic": (2, 2, 5, 4),
          "trilinear": (1, 2, 3, 4, 5)}


@pytest.mark.parametrize("mode", ["linear", "bilinear", "bicubic", "trilinear"])
@pytest.mark.parametrize("align", [False, True])
@pytest.mark.parametrize("size", SIZES, ids=str)
def test_interpolating_modes_float64(mode, align, size):
    x = RNG.standard_normal(SHAPES[mode])
    _check(*_interp(mode=mode, align_corners=align, **size), x)


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "area"])
@pytest.mark.parametrize("rank", [3, 4, 5])
@pytest.mark.parametrize("size", SIZES, ids=str)
def test_nearest_and_area_float64(mode, rank, size):
    x = RNG.standard_normal((2, 3, 6, 5, 4)[:rank])
    _check(*_interp(mode=mode, **size), x)


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear", "bicubic", "area"])
def test_float32_values_and_per_dim_scales(mode):
    x = RNG.standard_normal((2, 3, 9, 7)).astype(np.float32)
    for size in ({"scale_factor": (1.37, 0.71)}, {"size": (20, 5)}, {"scale_factor": 3}):
        _check(*_interp(mode=mode, **size), x, rtol=2e-5, atol=2e-6, grad=mode != "bicubic")


def test_float32_large_runs_parallel_kernels():
    x = RNG.standard_normal((4, 8, 40, 33)).astype(np.float32)
    for kw in ({"mode": "bilinear", "scale_factor": 2}, {"mode": "nearest", "size": (50, 70)},
               {"mode": "bicubic", "size": (61, 40), "align_corners": True}):
        _check(*_interp(**kw), x, rtol=2e-5, atol=2e-5)


def test_non_contiguous_input():
    x = RNG.standard_normal((3, 2, 6, 5))
    for kw in ({"mode": "bilinear", "size": (9, 4)}, {"mode": "nearest", "scale_factor": 1.5}):
        fj, ft = _interp(**kw)
        _check(lambda a: fj(a.transpose(2, 3)), lambda a: ft(a.transpose(2, 3)), x)
        _check(lambda a: fj(a[:, :, ::2]), lambda a: ft(a[:, :, ::2]), x)


def test_aliases_and_uint8_nearest():
    x = RNG.standard_normal((1, 2, 3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _check(lambda a: JF.upsample(a, scale_factor=2, mode="bilinear"),
               lambda a: TF.upsample(a, scale_factor=2, mode="bilinear"), x)
        _check(lambda a: JF.upsample_nearest(a, size=5), lambda a: TF.upsample_nearest(a, size=5), x)
        _check(lambda a: JF.upsample_bilinear(a, size=5),
               lambda a: TF.upsample_bilinear(a, size=5), x)
    u = RNG.integers(0, 255, (1, 2, 3, 4)).astype(np.uint8)
    assert (JF.interpolate(jtorch.from_numpy(u), size=(5, 7)).numpy() ==
            TF.interpolate(torch.from_numpy(u), size=(5, 7)).numpy()).all()


def test_double_backward_is_the_forward_map():
    x = jtorch.from_numpy(RNG.standard_normal((1, 2, 3, 4))).requires_grad_()
    y = JF.interpolate(x, scale_factor=2, mode="bilinear")
    g = jtorch.ones_like(y).requires_grad_()
    (gx,) = jtorch.autograd.grad(y, x, g, create_graph=True)
    (gg,) = jtorch.autograd.grad(gx.sum(), g)
    tx = torch.from_numpy(x.detach().numpy()).requires_grad_()
    ty = TF.interpolate(tx, scale_factor=2, mode="bilinear")
    tg = torch.ones_like(ty).requires_grad_()
    (tgx,) = torch.autograd.grad(ty, tx, tg, create_graph=True)
    (tgg,) = torch.autograd.grad(tgx.sum(), tg)
    np.testing.assert_allclose(gg.numpy(), tgg.numpy(), rtol=1e-12)


@pytest.mark.parametrize("call, exc", [
    ({}, ValueError),
    ({"size": 3, "scale_factor": 2}, ValueError),
    ({"size": 3, "mode": "nearest", "align_corners": True}, ValueError),
    ({"size": 3, "mode": "area", "align_corners": False}, ValueError),
    ({"size": 3, "mode": "linear"}, NotImplementedError),
    ({"size": 3, "mode": "trilinear"}, NotImplementedError),
    ({"size": 3, "mode": "foo"}, NotImplementedError),
    ({"size": (3,), "mode": "bilinear"}, ValueError),
    ({"size": (3.0, 3), "mode": "bilinear"}, TypeError),
    ({"scale_factor": (2.0,), "mode": "bilinear"}, ValueError),
    ({"size": 3, "mode": "bilinear", "recompute_scale_factor": True}, ValueError),
    ({"size": 0, "mode": "bilinear"}, RuntimeError),
    ({"scale_factor": 0.1, "mode": "nearest"}, RuntimeError),
    ({"size": 3, "mode": "nearest", "antialias": True}, ValueError),
])
def test_interpolate_errors(call, exc):
    x = RNG.standard_normal((1, 2, 4, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as et:
            TF.interpolate(torch.from_numpy(x), **call)
        with pytest.raises(Exception) as ej:
            JF.interpolate(jtorch.from_numpy(x), **call)
    assert et.type is exc and ej.type is exc
    assert str(ej.value) == str(et.value)


def test_interpolate_error_messages_for_rank_and_dtype():
    cases = [(np.zeros((2, 3)), {"size": 3}), (np.zeros((2, 3, 4), np.int64), {"size": 3}),
             (np.zeros((2, 3, 4, 4), np.int64), {"size": 3, "mode": "bilinear"}),
             (np.zeros((2, 3, 4, 4), np.int64), {"size": 3, "mode": "bicubic"}),
             (np.zeros((2, 0, 4, 4)), {"size": 3, "mode": "bilinear"}),
             (np.zeros((2, 3, 0, 4)), {"size": 3, "mode": "bilinear"}),
             (np.zeros((2, 3, 4)), {"size": 0, "mode": "linear"})]
    for a, kw in cases:
        with pytest.raises(Exception) as et:
            TF.interpolate(torch.from_numpy(a), **kw)
        with pytest.raises(et.type) as ej:
            JF.interpolate(jtorch.from_numpy(a), **kw)
        assert str(ej.value) == str(et.value)
    empty = JF.interpolate(jtorch.zeros(0, 3, 4, 4), size=3, mode="bilinear")
    assert tuple(empty.shape) == (0, 3, 3, 3)


# -- pad ---------------------------------------------------------------------------------------

PADS = {1: [(1, 2), (0, 3), (-1, 2), (2, -1)], 2: [(1, 2, 2, 1), (-1, 1, 2, 0)],
        3: [(1, 1, 0, 2, 2, 1)]}


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("batched", [False, True])
def test_pad_index_modes(mode, k, batched):
    x = RNG.standard_normal((2, 3, 4, 5, 4)[4 - k - batched:])
    for p in PADS[k]:
        _check(lambda a: JF.pad(a, p, mode=mode), lambda a: TF.pad(a, p, mode=mode), x)


@pytest.mark.parametrize("p", [(1, 2), (1, 1, 2, 0), (0, 1, 1, 0, 2, 1, 1, 1), (-1, 2, 1, -2),
                               (-2, -1), (2, -3, 0, 0, 1, 1)])
def test_pad_constant(p):
    x = RNG.standard_normal((2, 3, 4, 5))
    _check(lambda a: JF.pad(a, p, value=1.5), lambda a: TF.pad(a, p, value=1.5), x)
    _check(lambda a: JF.pad(a.transpose(1, 3), p), lambda a: TF.pad(a.transpose(1, 3), p), x)


def test_pad_integer_and_bool():
    x = RNG.integers(-5, 5, (2, 3, 4))
    for mode, kw in [("constant", {"value": 2.5}), ("reflect", {}), ("replicate", {}),
                     ("circular", {})]:
        for a in (x, x > 0):
            if mode in ("reflect", "replicate") and a.dtype == bool:
                with pytest.raises(NotImplementedError):
                    JF.pad(jtorch.from_numpy(a), (2, 1), mode=mode, **kw)
                continue
            j = JF.pad(jtorch.from_numpy(a), (2, 1), mode=mode, **kw)
            t = TF.pad(torch.from_numpy(a), (2, 1), mode=mode, **kw)
            assert j.dtype.name == str(t.dtype).split(".")[1]
            assert (j.numpy() == t.numpy()).all()


def test_pad_float32_large():
    x = RNG.standard_normal((4, 8, 40, 50)).astype(np.float32)
    for mode in ("reflect", "replicate", "circular", "constant"):
        _check(lambda a: JF.pad(a, (3, 2, 1, 4), mode=mode),
               lambda a: TF.pad(a, (3, 2, 1, 4), mode=mode), x, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("shape, p, kw", [
    ((1, 2, 3, 4), (5, 5, 1, 1), {"mode": "reflect"}),
    ((1, 2, 3, 4), (1, 1, 3, 1), {"mode": "reflect"}),
    ((1, 2, 3, 4), (5, 2, 1, 1), {"mode": "circular"}),
    ((1, 2, 3, 4), (1, 1), {"mode": "reflect"}),
    ((1, 2, 3, 4), (1, 1, 1, 1, 1, 1, 1, 1), {"mode": "replicate"}),
    ((4,), (1, 1), {"mode": "circular"}),
    ((1, 2, 3, 4), (1,), {}),
    ((1, 2, 3, 4), (1,) * 10, {}),
    ((1, 2, 3, 4), (1, 1), {"mode": "foo"}),
    ((1, 2, 3, 4), (1, 1, 1, 1), {"mode": "reflect", "value": 1.0}),
    ((1, 2, 3, 4), (1.5, 1), {}),
    ((1, 2, 3, 4), (-5, 1), {}),
    ((2, 0, 4), (1, 1), {"mode": "reflect"}),
    ((2, 3, 0, 4), (1, 1, 1, 1), {"mode": "replicate"}),
])
def test_pad_errors(shape, p, kw):
    with pytest.raises(Exception) as et:
        TF.pad(torch.zeros(shape), p, **kw)
    with pytest.raises(et.type) as ej:
        JF.pad(jtorch.zeros(shape), p, **kw)
    assert str(ej.value) == str(et.value)


# -- pixel shuffle -----------------------------------------------------------------------------

def test_pixel_shuffle_roundtrip_and_grads():
    x = RNG.standard_normal((2, 1, 8, 2, 3))
    _check(lambda a: JF.pixel_shuffle(a, 2), lambda a: TF.pixel_shuffle(a, 2), x, name=False)
    _check(lambda a: JF.pixel_unshuffle(a, 2), lambda a: TF.pixel_unshuffle(a, 2),
           RNG.standard_normal((2, 3, 4, 6)), name=False)
    _check(lambda a: JF.pixel_shuffle(a, 3), lambda a: TF.pixel_shuffle(a, 3),
           RNG.standard_normal((9, 2, 2)), name=False)


@pytest.mark.parametrize("fn, shape, r", [("pixel_shuffle", (1, 9, 2, 3), 2),
                                           ("pixel_shuffle", (9, 2), 2),
                                           ("pixel_shuffle", (1, 8, 2, 3), 0),
                                           ("pixel_unshuffle", (1, 2, 4, 5), 2),
                                           ("pixel_unshuffle", (1, 2, 3, 4), 2),
                                           ("pixel_unshuffle", (1, 8, 2, 3), 0)])
def test_pixel_shuffle_errors(fn, shape, r):
    with pytest.raises(RuntimeError) as et:
        getattr(TF, fn)(torch.zeros(shape), r)
    with pytest.raises(RuntimeError) as ej:
        getattr(JF, fn)(jtorch.zeros(shape), r)
    assert str(ej.value) == str(et.value)


# -- grid_sample / affine_grid -----------------------------------------------------------------

@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_float64(mode, padding, align):
    x = RNG.standard_normal((2, 3, 5, 6))
    grid = RNG.uniform(-1.3, 1.3, (2, 4, 7, 2))
    kw = {"mode": mode, "padding_mode": padding, "align_corners": align}
    _check(lambda a, g: JF.grid_sample(a, g, **kw), lambda a, g: TF.grid_sample(a, g, **kw),
           x, grid)


def test_grid_sample_float32_large_and_non_contiguous():
    x = RNG.standard_normal((3, 4, 20, 30)).astype(np.float32)
    grid = RNG.uniform(-1.1, 1.1, (3, 25, 35, 2)).astype(np.float32)
    kw = {"align_corners": False, "padding_mode": "border"}
    _check(lambda a, g: JF.grid_sample(a, g, **kw), lambda a, g: TF.grid_sample(a, g, **kw),
           x, grid, rtol=1e-4, atol=1e-3)  # grid grads sum over channels: float32 cancellation
    _check(lambda a, g: JF.grid_sample(a.transpose(2, 3), g, align_corners=True),
           lambda a, g: TF.grid_sample(a.transpose(2, 3), g, align_corners=True),
           x, grid, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("size, align", [((2, 3, 4, 5), False), ((2, 3, 4, 5), True),
                                         ((2, 3, 1, 5), False), ((2, 1, 3, 4, 2), False),
                                         ((2, 1, 3, 4, 2), True)])
def test_affine_grid(size, align):
    theta = RNG.standard_normal((2, 2, 3) if len(size) == 4 else (2, 3, 4))
    _check(lambda t: JF.affine_grid(t, size, align_corners=align),
           lambda t: TF.affine_grid(t, size, align_corners=align), theta, name=False)


def test_spatial_transformer_chain():
    x = RNG.standard_normal((2, 3, 6, 6))
    theta = RNG.standard_normal((2, 2, 3)) * 0.5

    def run(F, a, t):
        return F.grid_sample(a, F.affine_grid(t, (2, 3, 5, 4), align_corners=False),
                             align_corners=False)

    _check(lambda a, t: run(JF, a, t), lambda a, t: run(TF, a, t), x, theta)


@pytest.mark.parametrize("call", [
    lambda F, T: F.grid_sample(T.zeros(2, 3, 4, 5), T.zeros(2, 3, 3, 2, dtype=T.float64),
                               align_corners=False),
    lambda F, T: F.grid_sample(T.zeros(2, 3, 4, 5), T.zeros(1, 3, 3, 2), align_corners=False),
    lambda F, T: F.grid_sample(T.zeros(2, 3, 4, 5), T.zeros(2, 3, 3, 3), align_corners=False),
    lambda F, T: F.grid_sample(T.zeros(2, 3, 0, 5), T.zeros(2, 3, 3, 2), align_corners=False),
    lambda F, T: F.grid_sample(T.zeros(2, 3, 4, 5), T.zeros(2, 3, 3, 2), mode="foo"),
    lambda F, T: F.grid_sample(T.zeros(2, 3, 4, 5), T.zeros(2, 3, 3, 2), padding_mode="foo"),
    lambda F, T: F.affine_grid(T.zeros(2, 2, 3, dtype=T.int64), (2, 3, 4, 5), align_corners=False),
    lambda F, T: F.affine_grid(T.zeros(2, 2, 4), (2, 3, 4, 5), align_corners=False),
    lambda F, T: F.affine_grid(T.zeros(2, 2, 3), (2, 3, 4), align_corners=False),
    lambda F, T: F.affine_grid(T.zeros(2, 2, 3), (2, 3, 0, 4), align_corners=False),
])
def test_grid_errors(call):
    with pytest.raises(Exception) as et:
        call(TF, torch)
    with pytest.raises(et.type) as ej:
        call(JF, jtorch)
    assert str(ej.value) == str(et.value)


def test_bilinear_interpolation_of_uint8_images():
    """torch computes bilinear uint8 (images) with fixed-point weights: jtorch interpolates in
    float32 and rounds, within one level of torch's values and exact where no weight splits."""
    rng = np.random.default_rng(0)
    u = rng.integers(0, 256, (2, 3, 5, 7)).astype(np.uint8)
    for ac in (False, True):
        for size in ((10, 14), (3, 4), (5, 7)):
            want = torch.nn.functional.interpolate(torch.from_numpy(u), size=size,
                                                   mode="bilinear", align_corners=ac)
            got = jtorch.nn.functional.interpolate(jtorch.from_numpy(u), size=size,
                                                   mode="bilinear", align_corners=ac)
            assert got.dtype == jtorch.uint8 and tuple(got.shape) == tuple(want.shape)
            diff = np.abs(got.numpy().astype(int) - want.numpy().astype(int))
            assert diff.max() <= 1
    same = jtorch.nn.functional.interpolate(jtorch.from_numpy(u), size=(5, 7), mode="bilinear")
    np.testing.assert_array_equal(same.numpy(), u)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_pad_half_dtypes_match_torch(mode, dtype):
    x = np.random.default_rng(3).standard_normal((2, 3, 4, 5)).astype(np.float32)
    want = TF.pad(torch.from_numpy(x).to(getattr(torch, dtype)), (1, 2, 2, 1), mode=mode)
    xj = jtorch.from_numpy(x).to(getattr(jtorch, dtype)).requires_grad_()
    got = JF.pad(xj, (1, 2, 2, 1), mode=mode)
    assert got.dtype == getattr(jtorch, dtype)
    np.testing.assert_array_equal(got.float().detach().numpy(), want.float().numpy())
    got.float().sum().backward()
    xt = torch.from_numpy(x).to(getattr(torch, dtype)).requires_grad_()
    TF.pad(xt, (1, 2, 2, 1), mode=mode).float().sum().backward()
    assert xj.grad.dtype == xj.dtype
    np.testing.assert_array_equal(xj.grad.float().numpy(), xt.grad.float().numpy())
