"""The resampling modes added beside the first ones, against torch on the same inputs:
grid_sample's bicubic mode (2-D) and its 5-D input (trilinear and nearest 3-D sampling), and
interpolate's antialias=True (bilinear, bicubic, lanczos; float32, float64 and uint8).

Values and gradients (input and grid) over every mode x padding_mode x align_corners, grids
reaching outside [-1, 1], non-contiguous inputs, empty batches; float64 within 1e-10
(relative), float32 against torch's float64 result within 1e-5, uint8 within one level (torch
rounds fixed-point sums; jtorch takes the same int16 weights); gradcheck in float64; meta
tensors and torch's errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from helpers import to_meta

import jtorch
import jtorch.nn.functional as JF
from jtorch.autograd import gradcheck

PADDINGS = ["zeros", "border", "reflection"]
RTOL64, ATOL64 = 1e-10, 1e-12
RTOL32, ATOL32 = 1e-5, 1e-6


def _rng(seed: int = 0):
    return np.random.default_rng(seed)


def _t(lib, a: np.ndarray, grad: bool = False, transpose: bool = False):
    """``a`` as a ``lib`` tensor; ``transpose``: the same values held with the last two dims
    swapped in memory (a non-contiguous view)."""
    if transpose:
        x = lib.from_numpy(np.ascontiguousarray(np.swapaxes(a, -1, -2)).copy()).transpose(-1, -2)
    else:
        x = lib.from_numpy(a.copy())
    return x.requires_grad_() if grad else x


def _close(j, t, rtol: float, atol: float) -> None:
    j = j.detach().numpy() if hasattr(j, "detach") else j
    t = t.detach().numpy() if hasattr(t, "detach") else t
    assert j.shape == t.shape
    np.testing.assert_allclose(j, t, rtol=rtol, atol=atol)


def _both(fn, arrays, grad=True, transpose=(), out_grad_seed=1, ref_dtype=None):
    """``fn(F, *tensors)`` under jtorch (on ``arrays``) and torch (on ``arrays`` cast to
    ``ref_dtype``, by default their own dtype): (jtorch out, torch out, jtorch grads, torch
    grads) of sum(out * g) over the float inputs."""
    js = [_t(jtorch, a, grad, i in transpose) for i, a in enumerate(arrays)]
    ts = [_t(torch, a if ref_dtype is None else a.astype(ref_dtype), grad, i in transpose)
          for i, a in enumerate(arrays)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        j, t = fn(JF, *js), fn(TF, *ts)
    if not grad:
        return j, t, None, None
    g = _rng(out_grad_seed).standard_normal(tuple(t.shape))
    (j * jtorch.from_numpy(g.astype(arrays[0].dtype))).sum().backward()
    (t * torch.from_numpy(g.astype(ts[0].detach().numpy().dtype))).sum().backward()
    return j, t, [x.grad for x in js], [x.grad for x in ts]


def _grid(shape, lo=-1.4, hi=1.4, seed=2, dtype=np.float64):
    return _rng(seed).uniform(lo, hi, shape).astype(dtype)


# -- grid_sample: bicubic (2-D) ------------------------------------------------------------------

def _sample(**kw):
    return lambda F, x, g: F.grid_sample(x, g, **kw)


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_bicubic_float64(padding, align):
    x = _rng().standard_normal((2, 3, 5, 6))
    g = _grid((2, 4, 7, 2), -1.6, 1.6)
    fn = _sample(mode="bicubic", padding_mode=padding, align_corners=align)
    j, t, jg, tg = _both(fn, [x, g])
    _close(j, t, RTOL64, ATOL64)
    for a, b in zip(jg, tg):
        _close(a, b, RTOL64, ATOL64)
    assert type(j.grad_fn).__name__ == type(t.grad_fn).__name__ == "GridSampler2DBackward0"


@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_bicubic_non_contiguous_and_one_pixel(padding, align):
    x = _rng(3).standard_normal((2, 2, 4, 7))
    g = _grid((2, 6, 3, 2), seed=4)
    fn = _sample(mode="bicubic", padding_mode=padding, align_corners=align)
    j, t, jg, tg = _both(fn, [x, g], transpose=(0, 1))
    assert j.grad_fn is not None
    _close(j, t, RTOL64, ATOL64)
    for a, b in zip(jg, tg):
        _close(a, b, RTOL64, ATOL64)
    one = _rng(5).standard_normal((1, 2, 1, 1))  # a one-pixel input: every tap is the border
    j, t, jg, tg = _both(fn, [one, _grid((1, 2, 3, 2), seed=6)])
    _close(j, t, RTOL64, ATOL64)
    for a, b in zip(jg, tg):
        _close(a, b, RTOL64, ATOL64)


# -- grid_sample: 5-D input (3-D sampling) --------------------------------------------------------

@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_3d_float64(mode, padding, align):
    x = _rng(7).standard_normal((2, 3, 4, 5, 6))
    g = _grid((2, 3, 4, 5, 3), -1.5, 1.5, seed=8)
    j, t, jg, tg = _both(_sample(mode=mode, padding_mode=padding, align_corners=align), [x, g])
    _close(j, t, RTOL64, ATOL64)
    for a, b in zip(jg, tg):
        _close(a, b, RTOL64, ATOL64)
    assert type(j.grad_fn).__name__ == type(t.grad_fn).__name__ == "GridSampler3DBackward0"


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
def test_grid_sample_3d_non_contiguous(mode):
    x = _rng(9).standard_normal((2, 2, 3, 4, 5))
    g = np.swapaxes(_grid((2, 2, 4, 3, 3), seed=10), 2, 3)
    fn = _sample(mode=mode, padding_mode="reflection", align_corners=False)
    j, t, jg, tg = _both(fn, [x, np.ascontiguousarray(g)], transpose=(0,))
    _close(j, t, RTOL64, ATOL64)
    for a, b in zip(jg, tg):
        _close(a, b, RTOL64, ATOL64)
    # a grid that is a strided view (every other point of a longer grid)
    long = _grid((2, 2, 3, 8, 3), seed=11)
    jx, tx = _t(jtorch, x), _t(torch, x)
    j = JF.grid_sample(jx, jtorch.from_numpy(long)[:, :, :, ::2], mode=mode, align_corners=True)
    t = TF.grid_sample(tx, torch.from_numpy(long)[:, :, :, ::2], mode=mode, align_corners=True)
    _close(j, t, RTOL64, ATOL64)


CASES32 = [("bicubic", 4), ("bilinear", 5), ("nearest", 5)]


@pytest.mark.parametrize("mode, rank", CASES32)
@pytest.mark.parametrize("padding", PADDINGS)
def test_grid_sample_float32_against_float64(mode, rank, padding):
    """float32 values and gradients within 1e-5 of torch's float64 result on the same data
    (nearest: exactly torch's float32 result)."""
    shape = (2, 3, 9, 11) if rank == 4 else (2, 3, 5, 6, 7)
    x = _rng(12).standard_normal(shape).astype(np.float32)
    g = _grid((2, 6, 8, 2) if rank == 4 else (2, 4, 5, 6, 3), -1.2, 1.2, seed=13, dtype=np.float32)
    fn = _sample(mode=mode, padding_mode=padding, align_corners=False)
    j, t, jg, tg = _both(fn, [x, g], ref_dtype=np.float64)
    assert j.dtype == jtorch.float32
    _close(j, t, RTOL32, ATOL32)
    for a, b in zip(jg, tg):
        _close(a, b, RTOL32, 1e-5)
    if mode == "nearest":
        j, t, _, _ = _both(fn, [x, g], grad=False)
        np.testing.assert_array_equal(j.numpy(), t.numpy())


@pytest.mark.parametrize("mode, rank", CASES32)
def test_grid_sample_float32_large_runs_the_parallel_kernels(mode, rank, monkeypatch):
    monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 1024)  # the prange builds, on small data
    shape = (3, 4, 20, 30) if rank == 4 else (3, 4, 8, 10, 12)
    gshape = (3, 25, 35, 2) if rank == 4 else (3, 9, 10, 11, 3)
    x = _rng(14).standard_normal(shape).astype(np.float32)
    g = _grid(gshape, -1.1, 1.1, seed=15, dtype=np.float32)
    fn = _sample(mode=mode, padding_mode="border", align_corners=True)
    j, t, jg, tg = _both(fn, [x, g], ref_dtype=np.float64)
    _close(j, t, RTOL32, ATOL32)
    for a, b in zip(jg, tg):
        _close(a, b, 1e-4, 1e-4)  # sums over many outputs in float32


@pytest.mark.parametrize("mode, rank", [("bicubic", 4), ("bilinear", 5), ("nearest", 5)])
def test_grid_sample_empty(mode, rank):
    """An empty batch and an empty output grid: torch's shapes, zero gradients."""
    for xs, gs in ([(0, 2, 3, 4), (0, 2, 5, 2)], [(1, 2, 3, 4), (1, 0, 5, 2)]):
        if rank == 5:
            xs, gs = xs[:2] + (2,) + xs[2:], gs[:2] + (2,) + gs[2:-1] + (3,)
        x, g = np.ones(xs), np.zeros(gs)
        j, t, jg, tg = _both(_sample(mode=mode, align_corners=False), [x, g])
        assert tuple(j.shape) == tuple(t.shape)
        for a, b in zip(jg, tg):
            _close(a, b, 0, 0)


def test_grid_sample_float16_computes_in_float32():
    x = _rng(16).standard_normal((1, 2, 4, 5, 6)).astype(np.float16)
    g = _grid((1, 2, 3, 4, 3), -1, 1, seed=17).astype(np.float16)
    j, t, _, _ = _both(_sample(mode="bilinear", align_corners=False), [x, g], grad=False,
                       ref_dtype=np.float64)
    assert j.dtype == jtorch.float16
    _close(j, t, 1e-3, 1e-3)


@pytest.mark.parametrize("mode, rank, padding", [
    ("bicubic", 4, "zeros"), ("bicubic", 4, "border"), ("bicubic", 4, "reflection"),
    ("bilinear", 5, "zeros"), ("bilinear", 5, "reflection"), ("nearest", 5, "border")])
@pytest.mark.parametrize("align", [False, True])
def test_grid_sample_gradcheck(mode, rank, padding, align):
    shape = (1, 2, 3, 4) if rank == 4 else (1, 2, 2, 3, 4)
    gshape = (1, 2, 3, 2) if rank == 4 else (1, 2, 2, 2, 3)
    x = jtorch.from_numpy(_rng(18).standard_normal(shape)).requires_grad_()
    g = jtorch.from_numpy(_grid(gshape, -1.3, 1.3, seed=19)).requires_grad_()
    kw = {"mode": mode, "padding_mode": padding, "align_corners": align}
    assert gradcheck(lambda a, b: JF.grid_sample(a, b, **kw), (x, g), eps=1e-6, atol=1e-6,
                     rtol=1e-4)


def test_grid_sampler_aten_spellings():
    """torch.grid_sampler with integer codes (2: bicubic), grid_sampler_2d / _3d."""
    x4, g4 = _rng(20).standard_normal((2, 3, 5, 6)), _grid((2, 4, 4, 2), seed=21)
    x5, g5 = _rng(22).standard_normal((2, 3, 3, 4, 5)), _grid((2, 2, 3, 4, 3), seed=23)
    for pad in (0, 1, 2):
        for align in (False, True):
            for mode in (0, 1, 2):
                j = jtorch.grid_sampler(_t(jtorch, x4), _t(jtorch, g4), mode, pad, align)
                t = torch.grid_sampler(_t(torch, x4), _t(torch, g4), mode, pad, align)
                _close(j, t, RTOL64, ATOL64)
            for mode in (0, 1):
                for lib_j, lib_t in ((jtorch.grid_sampler, torch.grid_sampler),
                                     (jtorch.grid_sampler_3d, torch.grid_sampler_3d)):
                    _close(lib_j(_t(jtorch, x5), _t(jtorch, g5), mode, pad, align),
                           lib_t(_t(torch, x5), _t(torch, g5), mode, pad, align), RTOL64, ATOL64)
    _close(jtorch.grid_sampler_2d(_t(jtorch, x4), _t(jtorch, g4), 2, 2, True),
           torch.grid_sampler_2d(_t(torch, x4), _t(torch, g4), 2, 2, True), RTOL64, ATOL64)


@pytest.mark.parametrize("call", [
    lambda F, T: F.grid_sample(T.zeros(1, 2, 3, 4, 5), T.zeros(1, 2, 2, 2, 3), mode="bicubic",
                               align_corners=False),
    lambda F, T: F.grid_sample(T.zeros(1, 2, 3, 4, 5), T.zeros(1, 2, 2, 2, 3, dtype=T.float64),
                               mode="bicubic", align_corners=False),
    lambda F, T: F.grid_sample(T.zeros(1, 2, 3, 4, 5), T.zeros(1, 2, 2, 2, 3, dtype=T.float64),
                               align_corners=False),
    lambda F, T: F.grid_sample(T.zeros(1, 2, 3, 4, 5, dtype=T.int64),
                               T.zeros(1, 2, 2, 2, 3, dtype=T.int64), align_corners=False),
    lambda F, T: F.grid_sample(T.zeros(1, 2, 3, 4, 5), T.zeros(1, 2, 2, 2, 2),
                               align_corners=False),
    lambda F, T: F.grid_sample(T.zeros(1, 2, 3, 0, 5), T.zeros(1, 2, 2, 2, 3),
                               align_corners=False),
    lambda F, T: T.grid_sampler_2d(T.zeros(1, 2, 3, 4, 5), T.zeros(1, 2, 2, 2, 3), 0, 0, False),
    lambda F, T: T.grid_sampler_3d(T.zeros(1, 2, 4, 5), T.zeros(1, 2, 2, 2), 0, 0, False),
    lambda F, T: T.grid_sampler_3d(T.zeros(1, 2, 3, 4, 5), T.zeros(1, 2, 2, 2, 3), 2, 0, False),
], ids=["bicubic-5d", "bicubic-5d-dtypes", "dtypes", "int64", "grid-last", "empty-dim",
        "2d-of-5d", "3d-of-4d", "3d-bicubic"])
def test_grid_sample_errors(call):
    with pytest.raises(Exception) as et:
        call(TF, torch)
    with pytest.raises(et.type) as ej:
        call(JF, jtorch)
    assert str(ej.value) == str(et.value)


# -- interpolate(antialias=True) -----------------------------------------------------------------

SIZES = [{"size": (4, 5)}, {"size": (3, 13)}, {"size": (20, 31)}, {"size": (1, 2)},
         {"scale_factor": 0.4}, {"scale_factor": 2.5}, {"scale_factor": (0.3, 1.7)},
         {"scale_factor": 0.55, "recompute_scale_factor": True}]
AA_MODES = [("bilinear", False), ("bilinear", True), ("bicubic", False), ("bicubic", True),
            ("lanczos", False)]


def _resize(mode, align, **kw):
    return lambda F, x: F.interpolate(x, mode=mode, antialias=True, align_corners=align, **kw)


@pytest.mark.parametrize("mode, align", AA_MODES)
@pytest.mark.parametrize("size", SIZES, ids=str)
def test_antialias_float64(mode, align, size):
    x = _rng(30).standard_normal((2, 3, 9, 13))
    j, t, jg, tg = _both(_resize(mode, align, **size), [x])
    _close(j, t, RTOL64, ATOL64)
    _close(jg[0], tg[0], RTOL64, ATOL64)
    assert type(j.grad_fn).__name__ == type(t.grad_fn).__name__


@pytest.mark.parametrize("mode, align", AA_MODES)
@pytest.mark.parametrize("size", SIZES[:6], ids=str)
def test_antialias_float32(mode, align, size):
    """float32 within 1e-5 of torch's float64 result and of its float32 result (the filter
    positions are float32 arithmetic in both: torch's own float32 result is ~3e-6 off its
    float64 one on upscales)."""
    x = _rng(31).standard_normal((2, 3, 9, 13)).astype(np.float32)
    for ref in (np.float64, None):
        j, t, jg, tg = _both(_resize(mode, align, **size), [x], ref_dtype=ref)
        assert j.dtype == jtorch.float32
        _close(j, t, RTOL32, 1e-5)
        _close(jg[0], tg[0], RTOL32, 1e-5)


def test_antialias_large_and_non_contiguous(monkeypatch):
    monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 1024)
    x = _rng(32).standard_normal((2, 3, 40, 50)).astype(np.float32)
    for mode in ("bilinear", "bicubic"):
        for size in ((13, 70), (90, 17)):
            j, t, jg, tg = _both(_resize(mode, False, size=size), [x], transpose=(0,),
                                 ref_dtype=np.float64)
            _close(j, t, RTOL32, 1e-5)
            _close(jg[0], tg[0], 1e-4, 1e-5)


def test_antialias_unchanged_sizes_and_empty_batch():
    x = _rng(33).standard_normal((2, 2, 6, 7))
    for mode in ("bilinear", "bicubic", "lanczos"):
        j, t, jg, tg = _both(_resize(mode, False, size=(6, 7)), [x])  # an exact copy
        np.testing.assert_array_equal(j.detach().numpy(), x)
        # (torch's backward runs the filter even here: lanczos' sinc(1) is 4e-17, not 0)
        _close(jg[0], tg[0], RTOL64, ATOL64)
        j, t, jg, tg = _both(_resize(mode, False, size=(6, 3)), [x])  # one dim left alone
        _close(j, t, RTOL64, ATOL64)
        _close(jg[0], tg[0], RTOL64, ATOL64)
        j, t, jg, tg = _both(_resize(mode, False, size=(3, 4)), [np.ones((0, 2, 6, 7))])
        assert tuple(j.shape) == tuple(t.shape) == (0, 2, 3, 4)


@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
@pytest.mark.parametrize("channels", [3, 5])  # torch: its AVX2 kernel (C <= 4), else generic
def test_antialias_uint8(mode, channels):
    """torch's uint8 kernels sum int16 fixed-point weights one dim at a time (width first)
    and round each pass; jtorch takes the same weights and passes: within one level, and
    nearly always exact."""
    u = _rng(34).integers(0, 256, (2, channels, 17, 19)).astype(np.uint8)
    diffs = []
    aligns = (False,) if mode == "lanczos" else (False, True)
    for align in aligns:
        for size in ({"size": (7, 5)}, {"size": (30, 41)}, {"size": (5, 33)}, {"size": (17, 9)},
                     {"scale_factor": 0.45}):
            j, t, _, _ = _both(_resize(mode, align, **size), [u], grad=False)
            assert j.dtype == jtorch.uint8 and tuple(j.shape) == tuple(t.shape)
            diffs.append(np.abs(j.numpy().astype(int) - t.numpy().astype(int)).ravel())
    d = np.concatenate(diffs)
    assert d.max() <= 1 and (d == 0).mean() > 0.99


@pytest.mark.parametrize("mode, align", AA_MODES)
def test_antialias_gradcheck(mode, align):
    for shape, size in (((1, 2, 7, 9), (3, 4)), ((1, 1, 3, 4), (5, 7)), ((1, 1, 5, 6), (5, 2))):
        x = jtorch.from_numpy(_rng(35).standard_normal(shape)).requires_grad_()
        def fn(a, size=size):
            return JF.interpolate(a, size=size, mode=mode, antialias=True, align_corners=align)

        assert gradcheck(fn, (x,), eps=1e-6, atol=1e-6, rtol=1e-4)


def test_antialias_double_backward_is_the_forward_map():
    x = jtorch.from_numpy(_rng(36).standard_normal((1, 2, 6, 7))).requires_grad_()
    def fn(a):
        return JF.interpolate(a, size=(3, 4), mode="bicubic", antialias=True)

    assert jtorch.autograd.gradgradcheck(fn, (x,), eps=1e-6, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("call", [
    lambda F, T: F.interpolate(T.zeros(1, 1, 4, 4, dtype=T.float16), size=2, mode="bilinear",
                               antialias=True),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4, 4, dtype=T.int64), size=2, mode="bicubic",
                               antialias=True),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4, 4), size=(0, 2), mode="bilinear",
                               antialias=True),
    lambda F, T: F.interpolate(T.zeros(1, 0, 4, 4), size=2, mode="bilinear", antialias=True),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4), size=2, mode="bilinear", antialias=True),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4, 4), size=2, mode="trilinear", antialias=True),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4, 4), size=2, mode="lanczos"),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4, 4), size=2, mode="lanczos", antialias=True,
                               align_corners=True),
    lambda F, T: F.interpolate(T.zeros(1, 1, 4), size=2, mode="lanczos"),
], ids=["half", "int64", "zero-size", "empty-channels", "3d", "trilinear", "lanczos-no-aa",
        "lanczos-align", "lanczos-3d"])
def test_antialias_errors(call):
    with pytest.raises(Exception) as et:
        call(TF, torch)
    with pytest.raises(et.type) as ej:
        call(JF, jtorch)
    assert str(ej.value) == str(et.value)


# -- meta tensors -------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda F, x4, x5, g4, g5: F.grid_sample(x4, g4, mode="bicubic", align_corners=False),
    lambda F, x4, x5, g4, g5: F.grid_sample(x5, g5, mode="bilinear", align_corners=True),
    lambda F, x4, x5, g4, g5: F.grid_sample(x5, g5, mode="nearest", padding_mode="border",
                                            align_corners=False),
    lambda F, x4, x5, g4, g5: F.interpolate(x4, size=(3, 11), mode="bicubic", antialias=True),
    lambda F, x4, x5, g4, g5: F.interpolate(x4, scale_factor=0.5, mode="bilinear",
                                            antialias=True),
])
def test_meta_results_have_torchs_geometry(call):
    arrays = [_rng(40).standard_normal(s) for s in ((2, 3, 5, 6), (2, 3, 4, 5, 6))]
    grids = [_grid((2, 4, 7, 2)), _grid((2, 3, 4, 5, 3))]
    js = [jtorch.from_numpy(a).requires_grad_() for a in arrays + grids]
    ms = [to_meta(x) for x in js]
    tms = [torch.empty(x.shape, dtype=torch.float64, device="meta", requires_grad=True)
           for x in js]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c, m, t = call(JF, *js), call(JF, *ms), call(TF, *tms)
    assert m.is_meta and tuple(m.shape) == tuple(c.shape) == tuple(t.shape)
    assert m.stride() == c.stride() and m.dtype == c.dtype
    m.sum().backward()
    for a in ms[:2]:
        if a.grad is not None:
            assert a.grad.is_meta and tuple(a.grad.shape) == tuple(a.shape)
