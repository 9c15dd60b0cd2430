"""Interpolation, reflect / replicate / circular padding, grid_sample and affine_grid on CUDA
tensors in Numba's simulator against the same calls on CPU tensors: values and gradients bit
for bit (the kernels sum in the CPU kernels' order), and that the native kernels ran
(``eager.FALLBACKS`` stays empty for them).

Run by ``test_cuda_resample.py`` in a subprocess with ``NUMBA_ENABLE_CUDASIM=1``; sizes are
tiny (the simulator runs each thread as a Python thread).
"""

import os

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("runs under NUMBA_ENABLE_CUDASIM=1 (test_cuda_resample.py starts it)",
                allow_module_level=True)

import jtorch
import jtorch.nn.functional as F
from jtorch import dispatch
from jtorch.kernels.cuda import eager
from jtorch.kernels.defs import resample as R

CUDA = "cuda"
NATIVE = ("resample_gather", "resample_gather_backward", "resample_taps",
          "resample_taps_backward", "grid_sampler_2d", "grid_sampler_2d_backward",
          "grid_sampler_3d", "grid_sampler_3d_backward", "affine_grid_base")


@pytest.fixture(autouse=True)
def _count_fallbacks():
    eager.FALLBACKS.clear()
    yield


def no_fallback():
    hit = {k: v for k, v in eager.FALLBACKS.items() if k in NATIVE}
    assert not hit, hit


def same(c, x, strides=True):
    """CUDA tensor ``c`` holds ``x``'s bits (signed zeros included)."""
    assert c.device.type == "cuda", c.device
    h = c.detach().cpu()
    assert h.dtype == x.dtype and tuple(h.shape) == tuple(x.shape), (h.dtype, x.dtype, h.shape,
                                                                     x.shape)
    assert not strides or c.stride() == x.stride(), (c.stride(), x.stride())
    if h.dtype is jtorch.bfloat16:  # (NumPy has none: its bits)
        h, x = h.view(jtorch.int16), x.detach().view(jtorch.int16)
    a, b = h.numpy(), x.detach().numpy()
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(np.ascontiguousarray(a).view(np.uint8),
                                  np.ascontiguousarray(b).view(np.uint8))


def twins(*tensors):
    """CPU leaves requiring grad and their CUDA copies (``None``: a leaf without grad)."""
    cpu = [t.detach().requires_grad_(t.dtype.is_floating_point) for t in tensors]
    cuda = [t.detach().to(CUDA).requires_grad_(t.dtype.is_floating_point) for t in tensors]
    return cpu, cuda


def check_call(fn, inputs, grads=True, seed=0):
    """fn on CPU and CUDA twins of ``inputs``: the outputs and (with a random output gradient)
    the inputs' gradients are the same bits."""
    cpu, cuda = twins(*inputs)
    y, yc = fn(*cpu), fn(*cuda)
    same(yc, y)
    if grads:
        jtorch.manual_seed(seed)
        g = jtorch.randn(*y.shape, dtype=jtorch.float64).to(y.dtype)
        y.backward(g)
        yc.backward(g.to(CUDA))
        for a, b in zip(cuda, cpu):
            if b.requires_grad:  # (a gradient's layout follows its leaf's: not compared)
                same(a.grad, b.grad, strides=False)
    return yc


INTERPOLATE = [  # (name, input shape, kwargs)
    ("nearest1d", (2, 3, 5), {"size": 7, "mode": "nearest"}),
    ("nearest2d_x2", (1, 2, 3, 4), {"scale_factor": 2, "mode": "nearest"}),
    ("nearest3d", (1, 2, 3, 2, 4), {"size": (2, 5, 3), "mode": "nearest"}),
    ("nearest_exact", (2, 2, 5, 4), {"size": (3, 7), "mode": "nearest-exact"}),
    ("linear", (2, 2, 5), {"size": 8, "mode": "linear", "align_corners": False}),
    ("linear_align", (2, 2, 6), {"size": 4, "mode": "linear", "align_corners": True}),
    ("bilinear", (2, 2, 4, 6), {"size": (7, 3), "mode": "bilinear", "align_corners": False}),
    ("bilinear_align", (1, 3, 5, 4), {"size": (3, 7), "mode": "bilinear",
                                      "align_corners": True}),
    ("bilinear_scale", (1, 2, 3, 5), {"scale_factor": (1.7, 0.6), "mode": "bilinear"}),
    ("bicubic", (1, 2, 4, 6), {"size": (7, 3), "mode": "bicubic", "align_corners": False}),
    ("bicubic_align", (2, 1, 5, 3), {"size": (3, 6), "mode": "bicubic",
                                     "align_corners": True}),
    ("trilinear", (1, 2, 3, 4, 3), {"size": (4, 3, 5), "mode": "trilinear"}),
    ("area", (2, 2, 7, 5), {"size": (3, 4), "mode": "area"}),
    ("area1d", (1, 3, 9), {"size": 4, "mode": "area"}),
    ("antialias", (1, 2, 9, 8), {"size": (4, 5), "mode": "bilinear", "antialias": True}),
    ("antialias_bicubic", (1, 1, 7, 9), {"size": (3, 4), "mode": "bicubic", "antialias": True}),
]


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
@pytest.mark.parametrize("case", [c[0] for c in INTERPOLATE])
def test_interpolate_forward_and_backward(case, dtype):
    _, shape, kw = next(c for c in INTERPOLATE if c[0] == case)
    jtorch.manual_seed(len(case))
    check_call(lambda x: F.interpolate(x, **kw), (jtorch.randn(*shape, dtype=dtype),))
    no_fallback()


PADS = [  # (input shape, pads)
    ((2, 3, 6), (2, 3)),
    ((3, 5), (4, 1)),  # unbatched
    ((2, 2, 4, 5), (1, 2, 3, 1)),
    ((1, 2, 3, 4, 3), (1, 1, 2, 0, 2, 2)),
]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("case", range(len(PADS)))
def test_pad_modes(case, mode):
    shape, pads = PADS[case]
    jtorch.manual_seed(case)
    check_call(lambda x: F.pad(x, pads, mode=mode), (jtorch.randn(*shape, dtype=jtorch.float64),))
    no_fallback()


def test_pad_crops_and_other_dtypes():
    """Circular padding with negative pads crops first; a gather moves any dtype's bits."""
    jtorch.manual_seed(3)
    check_call(lambda x: F.pad(x, (-1, 2, 1, -2), mode="circular"), (jtorch.randn(2, 1, 4, 5),))
    check_call(lambda x: F.pad(x, (-1, -1), mode="circular"), (jtorch.randn(1, 2, 2),))  # (empty)
    i = jtorch.arange(24).reshape(2, 3, 4)
    same(F.pad(i.to(CUDA), (2, 1), mode="reflect"), F.pad(i, (2, 1), mode="reflect"))
    b = jtorch.randn(2, 2, 3).bfloat16()
    same(F.pad(b.to(CUDA), (1, 2), mode="replicate"), F.pad(b, (1, 2), mode="replicate"))
    u = jtorch.arange(12).reshape(1, 1, 3, 4).to(jtorch.uint8)
    same(F.interpolate(u.to(CUDA), size=(5, 7)), F.interpolate(u, size=(5, 7)))
    m = jtorch.rand(1, 3, 4) > 0.5
    same(F.pad(m.to(CUDA), (2, 2), mode="circular"), F.pad(m, (2, 2), mode="circular"))
    no_fallback()


def test_non_contiguous_and_empty():
    jtorch.manual_seed(4)
    x = jtorch.randn(3, 5, 6, 4)[:, 1::2].transpose(2, 3)  # strided channels and spatial dims
    check_call(lambda x: F.interpolate(x, size=(5, 7), mode="bilinear"), (x,))
    check_call(lambda x: F.interpolate(x, size=(3, 3), mode="nearest"), (x,))
    check_call(lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect"), (x,))
    x = jtorch.randn(2, 3, 4, 5).to(memory_format=jtorch.channels_last)
    check_call(lambda x: F.interpolate(x, scale_factor=1.5, mode="bicubic"), (x,))
    for fn in (lambda t: F.interpolate(t, size=(5, 3), mode="bilinear"),
               lambda t: F.interpolate(t, size=(5, 3), mode="nearest"),
               lambda t: F.pad(t, (1, 1, 1, 1), mode="replicate")):
        check_call(fn, (jtorch.randn(0, 2, 4, 4),))
    no_fallback()


def test_float16_computes_in_float32():
    jtorch.manual_seed(5)
    x = jtorch.randn(1, 2, 5, 4).half()
    for kw in ({"size": (7, 3), "mode": "bilinear"}, {"size": (3, 6), "mode": "bicubic"},
               {"size": (3, 3), "mode": "area"}, {"size": (7, 3), "mode": "nearest"}):
        check_call(lambda t, kw=kw: F.interpolate(t, **kw), (x,))
    check_call(lambda t: F.pad(t, (2, 1, 1, 3), mode="reflect"), (x,))
    grid = (jtorch.rand(1, 3, 4, 2) * 2.4 - 1.2).half()
    check_call(lambda t, g: F.grid_sample(t, g, align_corners=False), (x, grid))
    no_fallback()


def test_other_dtypes_take_the_host_path():
    jtorch.manual_seed(6)
    x = jtorch.randn(1, 2, 4, 4)
    y = F.interpolate(x.bfloat16().to(CUDA), size=(6, 5), mode="bilinear")
    same(y, F.interpolate(x.bfloat16(), size=(6, 5), mode="bilinear"))
    assert eager.FALLBACKS["resample_taps"] == 1
    u = (x.abs() * 60).to(jtorch.uint8)
    kw = {"size": (3, 3), "mode": "bilinear", "antialias": True}
    same(F.interpolate(u.to(CUDA), **kw), F.interpolate(u, **kw))
    assert eager.FALLBACKS["resample_taps"] == 3  # (uint8 runs one pass per resized dim)


GRID_CASES = [(m, p, a) for m in ("bilinear", "nearest", "bicubic")
              for p in ("zeros", "border", "reflection") for a in (False, True)]


def _grid(shape, seed):
    """Grid points past the edges (padding) and on half-pixel ties (nearest's rounding)."""
    jtorch.manual_seed(seed)
    g = jtorch.rand(*shape, dtype=jtorch.float64) * 2.8 - 1.4
    g.view(-1)[:4] = jtorch.tensor([0.5, -0.25, 1.0, -1.0], dtype=jtorch.float64)
    return g


@pytest.mark.parametrize(("mode", "padding", "align"), GRID_CASES,
                         ids=[f"{m}-{p}-{a}" for m, p, a in GRID_CASES])
def test_grid_sample_2d(mode, padding, align):
    x = jtorch.randn(2, 2, 4, 5, dtype=jtorch.float64)
    grid = _grid((2, 3, 3, 2), 7).float()
    check_call(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding,
                                          align_corners=align), (x.float(), grid))
    no_fallback()


@pytest.mark.parametrize(("mode", "padding", "align"),
                         [c for c in GRID_CASES if c[0] != "bicubic"],
                         ids=[f"{m}-{p}-{a}" for m, p, a in GRID_CASES if m != "bicubic"])
def test_grid_sample_3d(mode, padding, align):
    jtorch.manual_seed(8)
    x = jtorch.randn(1, 2, 3, 4, 3, dtype=jtorch.float64)
    grid = _grid((1, 2, 2, 3, 3), 9)
    check_call(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=padding,
                                          align_corners=align), (x, grid))
    no_fallback()


def test_grid_sample_strided_float64_and_empty():
    jtorch.manual_seed(10)
    x = jtorch.randn(2, 4, 5, 3, dtype=jtorch.float64).transpose(2, 3)[:, ::2]
    grid = _grid((2, 2, 4, 3), 11)[..., ::2].transpose(1, 2)  # (2, 4, 2, 2), strided
    check_call(lambda x, g: F.grid_sample(x, g, mode="bicubic", padding_mode="border",
                                          align_corners=False), (x, grid))
    check_call(lambda x, g: F.grid_sample(x, g, align_corners=True), (x, grid))
    x3 = jtorch.randn(1, 2, 2, 3, 4).half()
    check_call(lambda x, g: F.grid_sample(x, g, align_corners=False),
               (x3, _grid((1, 2, 1, 2, 3), 12).half()))
    check_call(lambda x, g: F.grid_sample(x, g, align_corners=False),
               (jtorch.randn(0, 2, 3, 3), jtorch.rand(0, 2, 2, 2)))
    no_fallback()


def test_grid_sample_one_gradient_and_nonfinite():
    """Only one operand's gradient asked for; NaN and huge grid values (the CPU kernel's
    out-of-range handling)."""
    x = jtorch.randn(1, 2, 3, 4)
    grid = jtorch.tensor([[[[float("nan"), 0.2], [3e9, -0.3]], [[0.1, -7.5], [1e30, 1e30]]]])
    for mode, padding in (("bilinear", "zeros"), ("bilinear", "reflection"),
                          ("nearest", "border"), ("bicubic", "reflection")):
        check_call(lambda x, g, m=mode, p=padding: F.grid_sample(x, g, mode=m, padding_mode=p,
                                                                 align_corners=False),
                   (x, grid.requires_grad_(False)))
    cpu, cuda = twins(x)
    y = F.grid_sample(cpu[0], grid.abs() % 1, align_corners=True)
    yc = F.grid_sample(cuda[0], (grid.abs() % 1).to(CUDA), align_corners=True)
    y.sum().backward()
    yc.sum().backward()
    same(cuda[0].grad, cpu[0].grad, strides=False)
    cpu, cuda = twins(grid.abs() % 1)
    y = F.grid_sample(x, cpu[0], mode="bicubic", align_corners=False)
    yc = F.grid_sample(x.to(CUDA), cuda[0], mode="bicubic", align_corners=False)
    y.sum().backward()
    yc.sum().backward()
    same(cuda[0].grad, cpu[0].grad, strides=False)
    no_fallback()


@pytest.mark.parametrize("dtype", [jtorch.float16, jtorch.float32, jtorch.float64])
def test_affine_grid(dtype):
    jtorch.manual_seed(13)
    for size, align in (((2, 3, 4, 5), False), ((1, 1, 3, 2, 4), True), ((1, 2, 1, 3, 2), False)):
        k = len(size) - 2
        base = dispatch.call(R.affine_grid_base_op, spatial=tuple(size[2:]), align=align,
                             dtype=dtype, device=jtorch.device(CUDA))
        want = dispatch.call(R.affine_grid_base_op, spatial=tuple(size[2:]), align=align,
                             dtype=dtype, device=jtorch.device("cpu"))
        same(base, want)
        if dtype is not jtorch.float16:
            theta = jtorch.randn(size[0], k, k + 1, dtype=dtype)
            g, gc = F.affine_grid(theta, size, align), F.affine_grid(theta.to(CUDA), size, align)
            np.testing.assert_allclose(gc.cpu().numpy(), g.numpy(), rtol=1e-5, atol=1e-6)
    no_fallback()


def test_double_backward_and_deterministic_mode():
    """The backward ops' gradient is the forward op again; deterministic mode needs nothing
    (no kernel here scatters with atomics), and two runs give the same bits."""
    jtorch.manual_seed(14)
    outs = []
    x0 = jtorch.randn(1, 2, 3, 4, dtype=jtorch.float64)
    for dev in ("cpu", CUDA):
        x = x0.detach().to(dev).requires_grad_()
        y = F.interpolate(x, size=(5, 3), mode="bicubic", align_corners=False)
        (gx,) = jtorch.autograd.grad((y * y).sum(), (x,), create_graph=True)
        (gx * gx).sum().backward()
        outs.append((gx, x.grad))
    for a, b in zip(outs[1], outs[0]):
        same(a, b, strides=False)
    x = jtorch.randn(1, 2, 4, 4).to(CUDA).requires_grad_()
    grid = (jtorch.rand(1, 3, 3, 2) * 2 - 1).to(CUDA).requires_grad_()
    prev = jtorch.are_deterministic_algorithms_enabled()
    jtorch.use_deterministic_algorithms(True)
    try:
        runs = []
        for _ in range(2):
            y = F.grid_sample(F.interpolate(x, size=(6, 5), mode="bilinear"), grid,
                              align_corners=False)
            runs.append([t.cpu().numpy() for t in jtorch.autograd.grad(y.sum(), (x, grid))])
    finally:
        jtorch.use_deterministic_algorithms(prev)
    for a, b in zip(*runs):
        np.testing.assert_array_equal(a, b)
    no_fallback()
