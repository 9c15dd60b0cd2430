"""The convolution kernel families of ``kernels/cpu/conv.py`` (im2col + BLAS, the direct
micro-kernel, Winograd F(2x2, 3x3)), each forced over the geometries it can run and held
against torch in float64: float32 values and the input, weight and bias gradients; strides,
padding (asymmetric 'same' too), dilation, groups, 1x1 to 7x7 kernels, conv1d/3d, transposed
convolutions, non-contiguous inputs, batches of one and of none, serial and parallel kernels,
deterministic mode; the default choice per layer, and the strided-GEMM wrapper they use."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import jtorch
import jtorch.nn.functional as JF
from jtorch.kernels.cpu import conv as ck
from jtorch.kernels.cpu import conv_blas
from jtorch.kernels.cpu import conv_direct as dc

RNG = np.random.default_rng(7)
FAMILIES = ("im2col", "direct", "winograd")


@pytest.fixture
def force(monkeypatch):
    """force(family): every geometry that family can run takes it; records the passes that
    ran ("forward", "input", "weight" per family)."""
    ran = []
    for fn in ("_direct_forward", "_direct_weight", "_winograd_forward", "_winograd_weight"):
        real = getattr(ck, fn)
        monkeypatch.setattr(ck, fn, lambda *a, _f=real, _n=fn: (ran.append(_n), _f(*a))[1])

    def set_family(family):
        monkeypatch.setattr(ck, "_FORCE", family)
        return ran

    return set_family


def _run(name, shapes, kw, dtype=np.float32, noncontig=False):
    """(jtorch's output and gradients in ``dtype``, torch's in float64)."""
    arrays = [None if s is None else RNG.standard_normal(s) for s in shapes]
    if noncontig:  # the same values as a strided view (channel-major buffer, every 2nd column)
        a0 = arrays[0]
        big = np.zeros((a0.shape[1], a0.shape[0]) + a0.shape[2:-1] + (2 * a0.shape[-1],))
        big[..., ::2] = np.swapaxes(a0, 0, 1)
        arrays[0] = np.swapaxes(big, 0, 1)[..., ::2]
    outs = []
    for lib, fn, dt in ((jtorch, getattr(JF, name), dtype), (torch, getattr(TF, name),
                                                             np.float64)):
        xs = [None if a is None else lib.from_numpy(np.asarray(a, dt) if not noncontig or
                                                    a is not arrays[0] else a.astype(dt))
              for a in arrays]
        if noncontig and lib is jtorch:
            xs[0] = lib.from_numpy(np.swapaxes(np.swapaxes(arrays[0], 0, 1).astype(dt), 0, 1))
            assert not xs[0].is_contiguous() or xs[0].shape[0] == 1
        for t in xs:
            if t is not None:
                t.requires_grad_()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = fn(*xs, **kw)
        g = np.cos(np.arange(y.numel())).reshape(tuple(y.shape))
        y.backward(lib.from_numpy(g.astype(dt)))
        outs.append([y.detach().numpy()] + [None if t is None else t.grad.numpy() for t in xs])
    return outs


def _close(got, want, dtype=np.float32):
    tol = 2e-5 if dtype == np.float32 else 1e-11
    for a, b in zip(got, want):
        if b is None:
            continue
        assert a.shape == b.shape
        scale = max(1.0, float(np.abs(b).max()))
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * scale)


# (name, shapes, kwargs): every family's geometry features
GEOMETRIES = [
    ("conv2d", [(2, 16, 12, 12), (16, 16, 3, 3), (16,)], {"padding": 1}),  # Winograd's
    ("conv2d", [(2, 16, 13, 11), (20, 16, 3, 3), None], {}),  # odd sizes, no padding
    ("conv2d", [(3, 16, 9, 10), (18, 8, 3, 3), (18,)], {"padding": (2, 0), "groups": 2}),
    ("conv2d", [(2, 6, 12, 12), (16, 6, 5, 5), (16,)], {}),  # LeNet's 5x5
    ("conv2d", [(2, 1, 12, 12), (6, 1, 5, 5), (6,)], {"padding": 2}),  # 1 channel, 6 outputs
    ("conv2d", [(2, 8, 11, 9), (10, 8, 3, 3), (10,)], {"stride": 2, "padding": 1}),
    ("conv2d", [(2, 8, 11, 9), (10, 8, 3, 2), (10,)], {"stride": (2, 1), "dilation": (1, 2)}),
    ("conv2d", [(2, 8, 10, 10), (8, 8, 3, 3), None], {"dilation": 2, "padding": 2}),
    ("conv2d", [(2, 8, 9, 9), (8, 1, 3, 3), (8,)], {"groups": 8, "padding": 1}),  # depthwise
    ("conv2d", [(2, 8, 9, 7), (12, 8, 4, 4), (12,)], {"padding": "same"}),  # asymmetric
    ("conv2d", [(2, 24, 9, 9), (40, 24, 1, 1), (40,)], {}),  # 1x1
    ("conv2d", [(2, 3, 20, 20), (9, 3, 7, 7), (9,)], {"stride": 2, "padding": 3}),
    ("conv2d", [(1, 16, 10, 10), (17, 16, 3, 3), (17,)], {"padding": 1}),  # batch 1, O=17
    ("conv1d", [(3, 6, 30), (10, 6, 5), (10,)], {"padding": 2, "stride": 2}),
    ("conv3d", [(2, 4, 5, 6, 5), (6, 2, 3, 2, 2), (6,)], {"padding": (1, 0, 1), "groups": 2}),
    ("conv_transpose2d", [(2, 16, 7, 6), (16, 8, 3, 3), (8,)], {"padding": 1}),  # stride 1
    ("conv_transpose2d", [(2, 16, 7, 6), (16, 6, 3, 3), (12,)], {"groups": 2}),
    ("conv_transpose2d", [(2, 8, 7, 6), (8, 4, 5, 3), (4,)], {"dilation": (1, 2),
                                                              "padding": (2, 1)}),
    ("conv_transpose2d", [(2, 8, 5, 6), (8, 4, 3, 3), None], {"stride": 2, "padding": 1,
                                                              "output_padding": 1}),
]


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("name,shapes,kw", GEOMETRIES)
def test_family_against_torch(family, name, shapes, kw, force):
    ran = force(family)
    got, want = _run(name, shapes, kw)
    _close(got, want)
    if family == "im2col":
        assert not ran
    elif family == "direct":  # float32: every forward-direction and weight pass
        assert "_direct_forward" in ran and "_direct_weight" in ran
    else:
        fits = (len(shapes[1]) == 4 and shapes[1][2:] == (3, 3) and
                kw.get("stride", 1) == 1 and kw.get("dilation", 1) == 1)
        assert bool(ran) == fits
        if fits:
            assert "_winograd_weight" in ran


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("name,shapes,kw", [GEOMETRIES[0], GEOMETRIES[5], GEOMETRIES[15]])
def test_family_float64(family, name, shapes, kw, force):
    """float64 runs Winograd where it fits (no direct kernel: that is float32 only)."""
    ran = force(family)
    got, want = _run(name, shapes, kw, np.float64)
    _close(got, want, np.float64)
    assert not any("direct" in r for r in ran)


@pytest.mark.parametrize("family", FAMILIES)
def test_family_noncontiguous_input(family, force):
    force(family)
    got, want = _run("conv2d", [(3, 16, 9, 8), (16, 16, 3, 3), (16,)], {"padding": 1},
                     noncontig=True)
    _close(got, want)


@pytest.mark.parametrize("family", FAMILIES)
def test_family_parallel_kernels(family, force, monkeypatch):
    """The parallel twins (images or blocks split over the threads), taken at any size."""
    ran = force(family)
    monkeypatch.setattr(ck._threads, "use_parallel", lambda n: True)
    monkeypatch.setattr(ck, "_WEIGHT_ITEMS_PER_THREAD", 0)
    for name, shapes, kw in (GEOMETRIES[0], GEOMETRIES[3], GEOMETRIES[5], GEOMETRIES[15]):
        got, want = _run(name, shapes, kw)
        _close(got, want)
    assert bool(ran) == (family != "im2col")


@pytest.mark.parametrize("family", FAMILIES)
def test_family_empty_batch(family, force):
    force(family)
    for name, shapes, kw in (GEOMETRIES[0], GEOMETRIES[3], GEOMETRIES[15]):
        shapes = [(0,) + shapes[0][1:]] + shapes[1:]
        x, w, b = [None if s is None else RNG.standard_normal(s).astype(np.float32)
                   for s in shapes]
        j = getattr(JF, name)(*[None if a is None else jtorch.from_numpy(a) for a in (x, w, b)],
                              **kw)
        t = getattr(TF, name)(*[None if a is None else torch.from_numpy(a) for a in (x, w, b)],
                              **kw)
        assert tuple(j.shape) == tuple(t.shape)
        # a weight gradient of no images is zero, as torch's
        xj = jtorch.from_numpy(x).requires_grad_()
        wj = jtorch.from_numpy(w).requires_grad_()
        getattr(JF, name)(xj, wj, None, **kw).sum().backward()
        assert not wj.grad.numpy().any()


# the direct passes' wide blocks (AVX-512): O/G a multiple of 32 (16 for the forward's), with
# edge blocks
WIDE_GEOMETRIES = [
    ("conv2d", [(2, 8, 7, 9), (32, 8, 3, 3), (32,)], {"padding": 1}),  # 63 positions
    ("conv2d", [(2, 16, 6, 5), (64, 16, 3, 3), None], {"padding": 1, "stride": 2}),  # 2 blocks
    # two groups of 64 outputs; the input gradient a forward over 32 channels per group
    ("conv2d", [(2, 64, 5, 7), (128, 32, 3, 3), (128,)], {"padding": 1, "groups": 2}),
    ("conv2d", [(2, 6, 12, 11), (48, 6, 5, 5), (48,)], {}),  # 16 x 8 blocks, 56 positions
]


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("wide", [False, True])
@pytest.mark.parametrize("name,shapes,kw", WIDE_GEOMETRIES)
def test_direct_wide_blocks(name, shapes, kw, wide, parallel, force, monkeypatch):
    """The 32 x 8 blocks of the forward and weight-gradient passes and the forward's 16 x 8
    (an AVX-512 target's; forced here on any host, where LLVM splits their vectors) and the
    narrow ones give torch's values and gradients."""
    monkeypatch.setattr(dc, "WIDE", wide)
    if parallel:
        monkeypatch.setattr(ck._threads, "use_parallel", lambda n: True)
    blocks = []
    real = dc.block_shape
    monkeypatch.setattr(dc, "block_shape",
                        lambda *a, **k: blocks.append(real(*a, **k)) or blocks[-1])
    ran = force("direct")
    got, want = _run(name, shapes, kw)
    _close(got, want)
    assert "_direct_forward" in ran
    assert any(b in ((32, 8), (16, 8)) for b in blocks) == wide


def test_block_shape_wide(monkeypatch):
    monkeypatch.setattr(dc, "WIDE", True)
    assert [dc.block_shape(og, n) for og, n in ((64, 100), (128, 9), (32, 63), (96, 63),
                                                (48, 63), (16, 16), (24, 64), (6, 64))] == \
        [(32, 8), (32, 8), (32, 8), (32, 8), (16, 8), (16, 8), (16, 6), (8, 8)]
    assert dc.block_shape(64, weight=True) == (32, 8)
    assert dc.block_shape(48, weight=True) == (16, 6)  # the weight gradient's 16: narrow
    assert dc.block_shape(64) == (16, 6)  # (the input gradient's waste estimate)
    monkeypatch.setattr(dc, "WIDE", False)
    assert dc.block_shape(64, 100) == (16, 6) and dc.block_shape(64, weight=True) == (16, 6)


def test_deterministic_mode_same_bits_on_any_thread_count(force):
    """Winograd's and the direct weight gradients sum fixed parts in a fixed order."""
    for family in ("winograd", "direct"):
        force(family)
        x = jtorch.from_numpy(RNG.standard_normal((9, 16, 12, 12)).astype(np.float32))
        w = jtorch.from_numpy(RNG.standard_normal((16, 16, 3, 3)).astype(np.float32))
        w.requires_grad_()
        runs = []
        prev = jtorch.get_num_threads()
        jtorch.use_deterministic_algorithms(True)
        try:
            for n in (1, prev):
                jtorch.set_num_threads(n)
                w.grad = None
                JF.conv2d(x, w, padding=1).pow(2).sum().backward()
                runs.append(w.grad.numpy().copy())
        finally:
            jtorch.use_deterministic_algorithms(False)
            jtorch.set_num_threads(prev)
        np.testing.assert_array_equal(runs[0], runs[1])


# the layers of perf/benchmarks/conv.py: (C, O, kernel, stride, padding, input size) -> family
# of the forward, input-gradient and weight-gradient passes
LAYERS = [
    ((1, 6, 5, 1, 0, 28), ("direct", "im2col", "im2col")),  # LeNet-5 conv1 (25 taps)
    ((6, 16, 5, 1, 0, 12), ("direct", "im2col", "direct")),  # LeNet-5 conv2
    ((1, 16, 3, 1, 1, 8), ("direct", "im2col", "direct")),  # the demo CNN's conv1 (9k MACs an image)
    ((16, 32, 3, 1, 1, 4), ("direct", "direct", "direct")),  # the demo CNN's conv2
    ((32, 64, 3, 1, 1, 32), ("direct", "direct", "winograd")),  # CIFAR-style
    ((64, 64, 3, 1, 1, 56), ("direct", "direct", "winograd")),  # ResNet-18 conv2_x
    ((64, 128, 3, 2, 1, 56), ("direct", "im2col", "direct")),  # ResNet-18 conv3_1
]


def _families(layer) -> tuple:
    c, o, k, s, p, hw = layer
    out = (hw + 2 * p - k) // s + 1
    geo = ((1, k, k), (1, s, s), (1, 1, 1))
    f32 = np.dtype(np.float32)
    return (ck._strategy("forward", f32, c, o, 1, *geo, (1, hw, hw), (1, out, out)),
            ck._strategy("input", f32, o, c, 1, *geo, (1, out, out), (1, hw, hw))
            if s == 1 else "im2col",
            ck._strategy("weight", f32, c, o, 1, *geo, (1, hw, hw), (1, out, out)))


@pytest.mark.parametrize("layer,families", LAYERS)
def test_default_family_per_layer(layer, families):
    """On one thread (the families above); with two, LeNet conv2's input gradient (a direct
    pass wasting 3x its multiply-adds on the padding) goes direct too."""
    c, o, k, s, p, hw = layer
    prev = jtorch.get_num_threads()
    try:
        jtorch.set_num_threads(1)
        assert _families(layer) == families
        jtorch.set_num_threads(2)
        lenet2 = layer == LAYERS[1][0]
        assert _families(layer) == ((families[0], "direct", families[2]) if lenet2 else
                                    families)
    finally:
        jtorch.set_num_threads(prev)
    geo = ((1, k, k), (1, s, s), (1, 1, 1))
    out = (hw + 2 * p - k) // s + 1
    f32 = np.dtype(np.float32)
    before = ck._strategy_of.cache_info().hits
    ck._strategy("forward", f32, c, o, 1, *geo, (1, hw, hw), (1, out, out))
    assert ck._strategy_of.cache_info().hits == before + 1  # memoised per geometry


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("c,k,groups,family", [(3, 3, 1, "im2col"), (4, 3, 1, "direct"),
                                               (1, 5, 1, "im2col"), (2, 5, 1, "direct"),
                                               (8, 3, 2, "direct"), (6, 3, 2, "im2col")])
def test_weight_gradient_direct_from_32_taps(threads, c, k, groups, family):
    """The direct weight gradient from 32 taps per group (C/G * kernel) on; with fewer, im2col
    (see ``_DIRECT_MIN_WEIGHT_TAPS``)."""
    geo = ((1, k, k), (1, 1, 1), (1, 1, 1))
    f32 = np.dtype(np.float32)
    prev = jtorch.get_num_threads()
    try:
        jtorch.set_num_threads(threads)
        got = ck._strategy("weight", f32, c, 16, groups, *geo, (1, 16, 16),
                           (1, 17 - k, 17 - k))
    finally:
        jtorch.set_num_threads(prev)
    assert got == family


@pytest.mark.parametrize("hw,family", [(8, "direct"), (15, "direct"), (16, "im2col"),
                                       (28, "im2col")])
def test_weight_gradient_with_few_taps_on_small_planes_stays_direct(hw, family):
    """Below 32 taps im2col only from 2^15 multiply-adds an image (1->16 3x3, 'same'
    padding: 15x15 planes 32.4k, 16x16 36.9k)."""
    geo = ((1, 3, 3), (1, 1, 1), (1, 1, 1))
    f32 = np.dtype(np.float32)
    got = ck._strategy("weight", f32, 1, 16, 1, *geo, (1, hw, hw), (1, hw, hw))
    assert got == family


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_strided_gemm(dt, ta, tb):
    """conv_blas.gemm: row-major C = op(A) @ op(B) + beta*C on offsets and leading dims."""
    m, n, k = 5, 7, 4
    buf = RNG.standard_normal(400) + (1j * RNG.standard_normal(400) if np.iscomplexobj(
        np.zeros(1, dt)) else 0)
    a_buf, b_buf, c_buf = (np.asarray(buf[i * 130:(i + 1) * 130], dt) for i in range(3))
    lda, ldb, ldc = 9, 11, 10
    a0, b0, c0 = 3, 2, 5
    a_rows, a_cols = (k, m) if ta else (m, k)
    b_rows, b_cols = (n, k) if tb else (k, n)
    a = np.lib.stride_tricks.as_strided(a_buf[a0:], (a_rows, a_cols), (lda * a_buf.itemsize,
                                                                       a_buf.itemsize))
    b = np.lib.stride_tricks.as_strided(b_buf[b0:], (b_rows, b_cols), (ldb * b_buf.itemsize,
                                                                       b_buf.itemsize))

    def c_view(arr):
        return np.lib.stride_tricks.as_strided(arr[c0:], (m, n), (ldc * arr.itemsize,
                                                                  arr.itemsize))

    for beta in (0.0, 1.0):
        out = c_buf.copy()
        want = (a.T if ta else a) @ (b.T if tb else b) + beta * c_view(c_buf)
        _gemm(ta, tb, m, n, k, a_buf, a0, lda, b_buf, b0, ldb, beta, out, c0, ldc)
        tol = 1e-5 if dt in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(c_view(out), want, rtol=tol, atol=tol)
        mask = np.ones(out.shape, bool)
        mask[c0 + np.add.outer(np.arange(m) * ldc, np.arange(n)).ravel()] = False
        np.testing.assert_array_equal(out[mask], c_buf[mask])  # nothing else written


_gemm_kernel = None


def _gemm(*args):
    global _gemm_kernel
    if _gemm_kernel is None:
        import numba

        @numba.njit
        def k(ta, tb, m, n, kk, a, a0, lda, b, b0, ldb, beta, c, c0, ldc):
            conv_blas.gemm(ta, tb, m, n, kk, a, a0, lda, b, b0, ldb, beta, c, c0, ldc)

        _gemm_kernel = k
    _gemm_kernel(*args)


@pytest.mark.parametrize("c, o, groups", [(16, 32, 1), (1, 16, 1), (8, 32, 2), (4, 6, 1),
                                          (6, 20, 2), (3, 64, 1)])
@pytest.mark.parametrize("bias", [True, False])
def test_direct_forward_weight_blocks_whole_and_partial(force, c, o, groups, bias):
    """The direct forward's blocked weight: a transposed copy where the block divides the
    channels per group (16, 32), ``weight_blocks`` where the last block is part empty (6,
    10); with and without a bias, from a non-contiguous weight and bias, held in float64."""
    force("direct")
    x = RNG.standard_normal((3, c, 5, 6))
    w = RNG.standard_normal((o, c // groups, 3, 3))
    b = RNG.standard_normal(2 * o)[::2] if bias else None
    outs = []
    for lib, dt in ((jtorch, np.float32), (torch, np.float64)):
        wv = lib.from_numpy(np.ascontiguousarray(np.swapaxes(w, 2, 3)).astype(dt)).transpose(2, 3)
        bv = None if b is None else lib.from_numpy(np.repeat(b, 2).astype(dt))[::2]
        outs.append([lib.nn.functional.conv2d(lib.from_numpy(x.astype(dt)), wv, bv, padding=1,
                                              groups=groups).numpy()])
    _close(*outs)
