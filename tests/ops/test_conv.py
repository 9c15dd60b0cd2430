"""conv1d/2d/3d, conv_transpose1d/2d/3d, unfold, fold against torch: values, gradients of
input, weight and bias, double backward, dtypes, empty sizes and torch's errors."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import jtorch
import jtorch.nn.functional as JF

RNG = np.random.default_rng(0)


def _pair(arrays, dtype=np.float64, grad=True):
    js = [None if a is None else jtorch.from_numpy(a.astype(dtype)).requires_grad_(grad)
          for a in arrays]
    ts = [None if a is None else torch.from_numpy(a.astype(dtype)).requires_grad_(grad)
          for a in arrays]
    return js, ts


def _check(name, shapes, kw, *, noncontig=False, tol=1e-10):
    """Values and gradients of every input against torch, in float64."""
    arrays = [None if s is None else RNG.standard_normal(s) for s in shapes]
    js, ts = _pair(arrays)
    jin, tin = js, ts
    if noncontig:  # the same values as a strided leaf (a channel-major buffer, every 2nd column)
        a0 = arrays[0]
        big = np.zeros((a0.shape[1], a0.shape[0]) + a0.shape[2:-1] + (2 * a0.shape[-1],))
        big[..., ::2] = np.swapaxes(a0, 0, 1)
        view = np.swapaxes(big, 0, 1)[..., ::2]
        js[0] = jin[0] = jtorch.from_numpy(view).requires_grad_()
        ts[0] = tin[0] = torch.from_numpy(view).requires_grad_()
        assert not jin[0].is_contiguous()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        j, t = getattr(JF, name)(*jin, **kw), getattr(TF, name)(*tin, **kw)
    assert tuple(j.shape) == tuple(t.shape)
    np.testing.assert_allclose(j.detach().numpy(), t.detach().numpy(), rtol=tol, atol=tol)
    g = RNG.standard_normal(tuple(t.shape))
    j.backward(jtorch.from_numpy(g))
    t.backward(torch.from_numpy(g))
    for a, b in zip(js, ts):
        if a is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)
    if len(shapes[0]) == ({"unfold": 4, "fold": 3}.get(name) or len(shapes[1])):
        assert type(j.grad_fn).__name__ == type(t.grad_fn).__name__  # unbatched: a squeeze


CONV1D = [
    ([(2, 4, 9), (6, 4, 3), (6,)], {}),
    ([(2, 4, 9), (6, 4, 3), None], {"stride": 2, "padding": 1}),
    ([(2, 4, 9), (6, 2, 3), (6,)], {"stride": 2, "padding": 2, "dilation": 2, "groups": 2}),
    ([(2, 4, 9), (4, 1, 3), (4,)], {"groups": 4, "padding": "same"}),  # depthwise
    ([(2, 4, 9), (6, 4, 4), (6,)], {"padding": "same"}),  # asymmetric 'same'
    ([(2, 4, 9), (6, 4, 3), None], {"padding": "valid", "stride": 3}),
    ([(4, 9), (6, 4, 3), (6,)], {"padding": 1}),  # unbatched
]

CONV2D = [
    ([(2, 4, 7, 6), (6, 4, 3, 2), (6,)], {"stride": (2, 1), "padding": (1, 2)}),
    ([(2, 4, 7, 6), (6, 2, 3, 3), None], {"groups": 2, "dilation": (2, 1), "padding": 1}),
    ([(2, 4, 7, 6), (8, 1, 3, 3), (8,)], {"groups": 4, "padding": "same"}),  # depthwise x2
    ([(2, 4, 7, 6), (5, 4, 2, 3), (5,)], {"padding": "same", "dilation": (1, 2)}),
    ([(2, 4, 7, 6), (5, 4, 1, 1), (5,)], {"stride": 2}),
    ([(4, 7, 6), (5, 4, 3, 3), (5,)], {"stride": (1, 2)}),  # unbatched
]

CONV3D = [
    ([(2, 4, 5, 6, 5), (6, 2, 3, 2, 2), (6,)], {"stride": (1, 2, 1), "padding": (1, 0, 1),
                                               "groups": 2}),
    ([(2, 3, 4, 5, 4), (4, 3, 2, 2, 2), None], {"padding": "same", "dilation": (1, 2, 1)}),
]

CONVT = [
    ("conv_transpose1d", [(2, 4, 9), (4, 3, 3), (3,)], {"stride": 2, "padding": 1,
                                                        "output_padding": 1}),
    ("conv_transpose1d", [(2, 4, 9), (4, 3, 3), (3,)], {"output_padding": 1, "dilation": 2}),
    ("conv_transpose1d", [(4, 9), (4, 2, 3), None], {"groups": 2, "stride": 3}),
    ("conv_transpose2d", [(2, 4, 5, 6), (4, 3, 3, 2), (6,)],
     {"stride": (2, 3), "padding": (1, 0), "output_padding": (1, 2), "groups": 2,
      "dilation": (1, 2)}),
    ("conv_transpose2d", [(2, 4, 5, 6), (4, 1, 3, 3), (4,)], {"groups": 4, "padding": 1}),
    ("conv_transpose3d", [(2, 4, 3, 4, 3), (4, 2, 2, 3, 2), None], {"stride": 2}),
]


@pytest.mark.parametrize("shapes,kw", CONV1D)
def test_conv1d(shapes, kw):
    _check("conv1d", shapes, kw)


@pytest.mark.parametrize("shapes,kw", CONV2D)
def test_conv2d(shapes, kw):
    _check("conv2d", shapes, kw)


@pytest.mark.parametrize("shapes,kw", CONV3D)
def test_conv3d(shapes, kw):
    _check("conv3d", shapes, kw)


@pytest.mark.parametrize("name,shapes,kw", CONVT)
def test_conv_transpose(name, shapes, kw):
    _check(name, shapes, kw)


# Output planes of >= 128 positions take the per-image kernels (im2col of one image into a
# cached buffer, its group GEMMs straight into the output), serial or split over the threads.
PER_IMAGE = [
    ("conv2d", [(2, 3, 12, 12), (4, 3, 3, 3), (4,)], {"padding": 1}, "conv_images"),
    ("conv2d", [(3, 4, 20, 18), (6, 2, 3, 3), None],
     {"groups": 2, "stride": (1, 2), "padding": (2, 1), "dilation": (2, 1)}, "conv_images"),
    ("conv2d", [(2, 4, 13, 14), (8, 1, 3, 3), (8,)], {"groups": 4, "padding": "same"},
     "conv_images"),
    ("conv2d", [(5, 8, 24, 24), (6, 8, 3, 3), (6,)], {"padding": 1}, "conv_images_par"),
    ("conv2d", [(6, 6, 40, 40), (4, 3, 3, 2), (4,)],
     {"groups": 2, "stride": (1, 2), "padding": (1, 0)}, "conv_images_par"),
    ("conv1d", [(2, 4, 300), (5, 4, 3), (5,)], {"padding": 2, "dilation": 2}, "conv_images"),
    ("conv3d", [(2, 2, 6, 8, 8), (3, 2, 2, 3, 3), (3,)], {"padding": (0, 1, 1)}, "conv_images"),
    ("conv_transpose2d", [(2, 4, 12, 11), (4, 3, 3, 2), (6,)],
     {"stride": (2, 1), "padding": (1, 0), "output_padding": (1, 0), "groups": 2},
     "conv_t_images"),
    ("conv_transpose2d", [(8, 8, 32, 32), (8, 3, 3, 3), (3,)], {"padding": 1}, "conv_t_images_par"),
    ("conv_transpose1d", [(2, 4, 140), (4, 3, 3), None], {"dilation": 2}, "conv_t_images"),
]
_SUFFIX = {"conv_images": "", "conv_images_par": "_par", "conv_t_images": "",
           "conv_t_images_par": "_par"}


@pytest.mark.parametrize("name,shapes,kw,kernel", PER_IMAGE)
def test_per_image_kernels(name, shapes, kw, kernel, monkeypatch):
    """Forward, input-gradient and weight-gradient kernels of one image at a time (serial or
    split over the threads) against torch, and that these kernels are the ones that ran."""
    from jtorch.kernels.cpu import conv as ck

    monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 1 << 17)  # (the shapes were sized for it)

    ran = []
    for base in ("conv_images", "conv_t_images", "weight_images"):
        for k in (base, base + "_par"):
            monkeypatch.setattr(ck, k, lambda *a, _f=getattr(ck, k), _k=k: (ran.append(_k),
                                                                          _f(*a)))
    _check(name, shapes, kw)
    suffix = _SUFFIX[kernel]
    adjoint = "conv_images" if kernel.startswith("conv_t") else "conv_t_images"
    assert ran[0] == kernel  # the forward, then input and weight gradients (in either order)
    assert sorted(ran[1:]) == sorted([adjoint + suffix, "weight_images" + suffix])
    # float32 and complex through the same kernels
    arrays = [None if sh is None else RNG.standard_normal(sh) for sh in shapes]
    for dt, tol in ((np.float32, 1e-5), (np.complex64, 1e-5)):
        js, ts = _pair(arrays, dt, grad=False)
        np.testing.assert_allclose(getattr(JF, name)(*js, **kw).numpy(),
                                   getattr(TF, name)(*ts, **kw).numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("name,shapes,kw", [
    ("conv1d", [(2, 4, 9), (6, 2, 3), (6,)], {"groups": 2, "stride": 2}),
    ("conv2d", [(2, 4, 7, 6), (6, 4, 3, 3), (6,)], {"padding": 1}),
    ("conv_transpose2d", [(2, 4, 5, 6), (4, 3, 3, 3), None], {"stride": 2}),
])
def test_noncontiguous_input(name, shapes, kw):
    _check(name, shapes, kw, noncontig=True)


def test_noncontiguous_weight():
    x, w = RNG.standard_normal((2, 3, 6, 6)), RNG.standard_normal((3, 4, 3, 3))
    (jx, jw), (tx, tw) = _pair([x, w])
    j = JF.conv2d(jx, jw.transpose(0, 1), padding=1)
    t = TF.conv2d(tx, tw.transpose(0, 1), padding=1)
    np.testing.assert_allclose(j.detach().numpy(), t.detach().numpy(), rtol=1e-10)
    j.sum().backward()
    t.sum().backward()
    np.testing.assert_allclose(jw.grad.numpy(), tw.grad.numpy(), rtol=1e-10)


def test_shape_examples():
    """The documented nn.Conv1d/Conv2d examples, through the functional forms."""
    y = JF.conv1d(jtorch.randn(20, 16, 50), jtorch.randn(33, 16, 3), stride=2)
    assert tuple(y.shape) == (20, 33, 24)
    y = JF.conv2d(jtorch.randn(20, 16, 50, 100), jtorch.randn(33, 16, 3, 5), stride=(2, 1),
                  padding=(4, 2), dilation=(3, 1))
    assert tuple(y.shape) == (20, 33, 26, 100)
    assert jtorch.conv2d is JF.conv2d and jtorch.conv_transpose1d is JF.conv_transpose1d


@pytest.mark.parametrize("name,shapes,kw", [
    ("conv1d", [(2, 4, 9), (6, 4, 3), (6,)], {"stride": 2, "padding": 1}),
    ("conv2d", [(2, 4, 7, 6), (6, 2, 3, 3), (6,)], {"groups": 2, "padding": "same"}),
    ("conv3d", [(1, 2, 4, 5, 4), (3, 2, 2, 2, 2), None], {}),
    ("conv_transpose2d", [(2, 4, 5, 6), (4, 3, 3, 3), (3,)], {"stride": 2, "output_padding": 1}),
])
def test_float32_values(name, shapes, kw):
    arrays = [None if s is None else RNG.standard_normal(s) for s in shapes]
    js, ts = _pair(arrays, np.float32, grad=False)
    j, t = getattr(JF, name)(*js, **kw), getattr(TF, name)(*ts, **kw)
    assert j.dtype is jtorch.float32
    np.testing.assert_allclose(j.numpy(), t.numpy(), rtol=1e-4, atol=1e-4)


def test_float16_computes_in_float32():
    x, w = RNG.standard_normal((2, 3, 6, 6)), RNG.standard_normal((4, 3, 3, 3))
    js, ts = _pair([x, w], np.float16, grad=False)
    j, t = JF.conv2d(*js, padding=1), TF.conv2d(*ts, padding=1)
    assert j.dtype is jtorch.float16
    np.testing.assert_allclose(j.numpy().astype(np.float32), t.numpy().astype(np.float32),
                               rtol=2e-2, atol=2e-2)


def test_integer_conv_is_exact():
    """torch runs integer convolutions on CPU (its slow_conv2d); so do we, exactly."""
    x = RNG.integers(-5, 5, (2, 3, 6)).astype(np.int64)
    w = RNG.integers(-5, 5, (4, 3, 3)).astype(np.int64) * 2 ** 40
    j = JF.conv1d(jtorch.from_numpy(x), jtorch.from_numpy(w), padding=1)
    t = TF.conv1d(torch.from_numpy(x), torch.from_numpy(w), padding=1)
    assert j.dtype is jtorch.int64 and j.tolist() == t.tolist()
    x32, w32 = x.astype(np.int32), (w // 2 ** 40).astype(np.int32)
    j = JF.conv2d(jtorch.from_numpy(x32[..., None]), jtorch.from_numpy(w32[..., None]))
    t = TF.conv2d(torch.from_numpy(x32[..., None]), torch.from_numpy(w32[..., None]))
    assert j.dtype is jtorch.int32 and j.tolist() == t.tolist()
    j = JF.conv_transpose1d(jtorch.from_numpy(x), jtorch.from_numpy(w.transpose(1, 0, 2).copy()))
    t = TF.conv_transpose1d(torch.from_numpy(x), torch.from_numpy(w.transpose(1, 0, 2).copy()))
    assert j.tolist() == t.tolist()


def test_complex_values_and_grads():
    x = RNG.standard_normal((2, 3, 7)) + 1j * RNG.standard_normal((2, 3, 7))
    w = RNG.standard_normal((4, 3, 3)) + 1j * RNG.standard_normal((4, 3, 3))
    js, ts = _pair([x, w], np.complex128)
    j, t = JF.conv1d(*js, padding=1), TF.conv1d(*ts, padding=1)
    np.testing.assert_allclose(j.detach().numpy(), t.detach().numpy(), rtol=1e-10)
    g = RNG.standard_normal(tuple(t.shape)) + 1j * RNG.standard_normal(tuple(t.shape))
    j.backward(jtorch.from_numpy(g))
    t.backward(torch.from_numpy(g))
    for a, b in zip(js, ts):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("name,shapes,kw", [
    ("conv2d", [(2, 4, 5, 5), (6, 2, 3, 3), (6,)], {"groups": 2, "stride": (2, 1),
                                                   "padding": 1}),
    ("conv_transpose1d", [(2, 4, 5), (4, 3, 3), (3,)], {"stride": 2, "output_padding": 1}),
])
def test_double_backward(name, shapes, kw):
    """Gradients of the input/weight gradients (through the weight-gradient op's rule)."""
    arrays = [RNG.standard_normal(s) for s in shapes]
    js, ts = _pair(arrays)
    outs = []
    for lib, fn, xs in ((jtorch, getattr(JF, name), js), (torch, getattr(TF, name), ts)):
        y = fn(*xs, **kw)
        g = lib.from_numpy(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))
        g.requires_grad_()
        grads = lib.autograd.grad(y, xs, g, create_graph=True)
        v = [lib.from_numpy(np.cos(np.arange(gr.numel())).reshape(tuple(gr.shape)))
             for gr in grads]
        total = sum((gr * vv).sum() for gr, vv in zip(grads, v))
        outs.append([o.detach().numpy() for o in lib.autograd.grad(total, [*xs[:2], g])])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


def test_gradgradcheck_conv2d():
    x = jtorch.from_numpy(RNG.standard_normal((1, 2, 4, 4))).requires_grad_()
    w = jtorch.from_numpy(RNG.standard_normal((2, 2, 2, 2))).requires_grad_()
    assert jtorch.autograd.gradgradcheck(lambda a, b: JF.conv2d(a, b, padding=1, stride=2),
                                         (x, w))


def test_explicit_pad_composes():
    """Module-level padding modes pad explicitly, then convolve without padding: the same as
    padding inside the convolution, with the gradient of the padded input's interior."""
    x, w = RNG.standard_normal((1, 2, 5, 5)), RNG.standard_normal((3, 2, 3, 3))
    (jp, jw), (_, tw) = _pair([np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), w])
    tx = torch.from_numpy(x).requires_grad_()
    j, t = JF.conv2d(jp, jw), TF.conv2d(tx, tw, padding=1)
    np.testing.assert_allclose(j.detach().numpy(), t.detach().numpy(), rtol=1e-10)
    j.sum().backward()
    t.sum().backward()
    np.testing.assert_allclose(jp.grad.numpy()[:, :, 1:-1, 1:-1], tx.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(jw.grad.numpy(), tw.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("shapes", [
    [(0, 4, 5, 5), (6, 4, 3, 3), (6,)],  # empty batch
    [(2, 0, 5, 5), (3, 0, 3, 3), (3,)],  # torch keeps the input's 0 channels
    [(0, 4, 5, 5), (4, 3, 3, 3), (3,), "conv_transpose2d"],
])
def test_empty(shapes):
    shapes = list(shapes)
    name = shapes.pop() if isinstance(shapes[-1], str) else "conv2d"
    arrays = [None if s is None else RNG.standard_normal(s) for s in shapes]
    js, ts = _pair(arrays, grad=False)
    j, t = getattr(JF, name)(*js), getattr(TF, name)(*ts)
    assert tuple(j.shape) == tuple(t.shape)
    np.testing.assert_allclose(j.numpy(), t.numpy(), rtol=1e-12)


# -- unfold / fold -----------------------------------------------------------------------------

@pytest.mark.parametrize("shape,kw", [
    ((2, 3, 6, 5), {"kernel_size": (2, 3), "dilation": (1, 2), "padding": 1, "stride": (2, 1)}),
    ((3, 5, 5), {"kernel_size": 2}),
])
def test_unfold(shape, kw):
    _check("unfold", [shape], kw)


@pytest.mark.parametrize("shape,kw", [
    ((2, 12, 21), {"output_size": (5, 6), "kernel_size": 2, "stride": (2, 1), "padding": 1}),
    ((18, 9), {"output_size": 5, "kernel_size": 3, "dilation": (1, 1), "stride": 1,
               "padding": 0}),
])
def test_fold(shape, kw):
    _check("fold", [shape], kw)


def test_fold_unfold_round_trip():
    """fold(unfold(x)) = x * (how many blocks cover each pixel); with non-overlapping blocks
    that is x itself, and unfold(fold(c)) = c."""
    x = jtorch.from_numpy(RNG.standard_normal((2, 3, 6, 6)))
    cols = JF.unfold(x, 2, stride=2)
    np.testing.assert_array_equal(JF.fold(cols, (6, 6), 2, stride=2).numpy(), x.numpy())
    np.testing.assert_array_equal(JF.unfold(JF.fold(cols, (6, 6), 2, stride=2), 2,
                                            stride=2).numpy(), cols.numpy())
    cover = JF.fold(JF.unfold(jtorch.ones(1, 1, 6, 6, dtype=jtorch.float64), 3, padding=1),
                    (6, 6), 3, padding=1)
    y = JF.fold(JF.unfold(x, 3, padding=1), (6, 6), 3, padding=1)
    np.testing.assert_allclose(y.numpy(), (x * cover).numpy(), rtol=1e-12)


def test_unfold_fold_dtypes():
    x = np.arange(2 * 9).reshape(1, 2, 3, 3) % 2 == 0
    j, t = JF.unfold(jtorch.from_numpy(x), 2), TF.unfold(torch.from_numpy(x), 2)
    assert j.dtype is jtorch.bool and j.tolist() == t.tolist()
    h = RNG.standard_normal((1, 8, 4)).astype(np.float16)
    j, t = JF.fold(jtorch.from_numpy(h), 3, 2), TF.fold(torch.from_numpy(h), 3, 2)
    assert j.dtype is jtorch.float16
    # jtorch sums in float32 and rounds once (the correctly rounded sum); torch rounds after
    # each float16 add, so it differs by a few half ulps where the sums cancel
    exact = TF.fold(torch.from_numpy(h.astype(np.float64)), 3, 2).numpy().astype(np.float16)
    np.testing.assert_array_equal(j.numpy(), exact)
    np.testing.assert_allclose(j.numpy(), t.numpy(), rtol=1e-3, atol=4e-3)


# -- errors: the same exception type and message as torch ---------------------------------------

def _f(*s):
    return RNG.standard_normal(s)


ERRORS = [
    ("conv1d", (_f(20, 3, 50), _f(33, 16, 3)), {}),
    ("conv1d", (_f(20, 16, 2), _f(33, 16, 3)), {}),
    ("conv2d", (_f(1, 3, 5, 5), _f(4, 3, 3, 3)), {"dilation": 3}),
    ("conv2d", (_f(2, 4, 5, 5), _f(6, 2, 3, 3)), {"groups": 3}),
    ("conv2d", (_f(2, 4, 5, 5), _f(6, 4, 3, 3)), {"groups": 0}),
    ("conv2d", (_f(1, 4, 5, 5), _f(3, 2, 3, 3)), {"groups": 2}),
    ("conv2d", (_f(2, 4, 5, 5), _f(6, 4, 3)), {}),
    ("conv2d", (_f(2, 4, 5, 5, 5), _f(6, 4, 3, 3)), {}),
    ("conv2d", (_f(5, 5), _f(6, 4, 3, 3)), {}),
    ("conv2d", (_f(2, 4, 5, 5), _f(0, 4, 3, 3)), {}),
    ("conv1d", (_f(1, 3, 5), _f(4, 3, 3, 3)), {}),
    ("conv1d", (_f(1, 3, 5), _f(4, 3)), {}),
    ("conv1d", (_f(1, 16, 5), _f(33, 16, 3), _f(3)), {}),
    ("conv2d", (_f(1, 3, 5, 5), _f(4, 3, 3, 3), _f(4, 1)), {}),
    ("conv1d", (_f(1, 16, 5), _f(33, 16, 3)), {"stride": 0}),
    ("conv1d", (_f(1, 16, 5), _f(33, 16, 3)), {"padding": -1}),
    ("conv1d", (_f(1, 16, 5), _f(33, 16, 3)), {"dilation": 0}),
    ("conv2d", (_f(1, 3, 5, 5), _f(4, 3, 3, 3)), {"dilation": -1}),
    ("conv1d", (_f(1, 16, 5), _f(33, 16, 3)), {"stride": 2, "padding": "same"}),
    ("conv1d", (_f(1, 16, 5), _f(33, 16, 3)), {"padding": "foo"}),
    ("conv1d", (_f(1, 16, 5), _f(33, 16, 3)), {"padding": (1, 2)}),
    ("conv2d", (_f(1, 3, 5, 5), _f(4, 3, 3, 3)), {"stride": (1, 2, 3)}),
    ("conv2d", (_f(1, 3, 5, 5), _f(4, 3, 0, 3)), {}),
    ("conv_transpose1d", (_f(1, 16, 5), _f(16, 4, 3)), {"stride": 2, "output_padding": 2}),
    ("conv_transpose2d", (_f(1, 3, 2, 2), _f(3, 3, 3, 3)), {"output_padding": 2}),
    ("conv_transpose1d", (_f(1, 15, 5), _f(16, 4, 3)), {}),
    ("conv_transpose1d", (_f(1, 16, 5), _f(16, 4, 3)), {"groups": 3}),
    ("conv_transpose1d", (_f(1, 4, 5), _f(4, 3, 3), _f(4)), {}),
    ("conv_transpose1d", (_f(1, 4, 5), _f(4, 3, 3)), {"output_padding": -1}),
    ("conv_transpose1d", (_f(1, 4, 5, 5), _f(4, 3, 3)), {}),
    ("conv_transpose1d", (_f(1, 3, 5), _f(3, 3, 3)), {"dilation": 0}),
    ("conv_transpose2d", (_f(1, 3, 1, 1), _f(3, 3, 1, 1)), {"padding": (1, 0)}),
    ("conv_transpose1d", (_f(1, 16, 1), _f(16, 4, 3)), {"padding": 3}),
    ("unfold", (_f(2, 3, 5, 5),), {"kernel_size": 7}),
    ("unfold", (_f(2, 3, 5, 5),), {"kernel_size": 2, "dilation": 0}),
    ("unfold", (_f(2, 3, 5, 5),), {"kernel_size": 2, "stride": 0}),
    ("unfold", (_f(2, 3, 5, 5),), {"kernel_size": 2, "padding": -1}),
    ("unfold", (_f(2, 3, 5, 5),), {"kernel_size": (2, 2, 2)}),
    ("unfold", (_f(2, 3, 5, 5, 2),), {"kernel_size": 2}),
    ("fold", (_f(2, 12, 15),), {"output_size": (5, 5), "kernel_size": 2}),
    ("fold", (_f(2, 13, 16),), {"output_size": (5, 5), "kernel_size": 2}),
    ("fold", (_f(13, 16),), {"output_size": (5, 5), "kernel_size": 2}),
    ("fold", (_f(1, 2, 12, 16),), {"output_size": 5, "kernel_size": 2}),
]


def _raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return None


@pytest.mark.parametrize("name,arrays,kw", ERRORS)
def test_errors_match_torch(name, arrays, kw):
    expected = _raised(lambda: getattr(TF, name)(*[torch.from_numpy(a) for a in arrays], **kw))
    assert expected is not None
    got = _raised(lambda: getattr(JF, name)(*[jtorch.from_numpy(a) for a in arrays], **kw))
    assert got == expected


@pytest.mark.parametrize("dtypes", [("float32", "float64", None), ("float64", "float32", None),
                                    ("int64", "float32", None), ("float32", "float32", "float64"),
                                    ("bool", "bool", None), ("int32", "int32", "T"),
                                    ("int8", "int8", "T3")])
def test_dtype_errors_match_torch(dtypes):
    dx, dw, extra = dtypes
    nd = 3 if extra == "T3" else 1
    name = ("conv_transpose%dd" if extra in ("T", "T3") else "conv%dd") % nd
    x, w = np.ones((1, 3) + (4,) * nd), np.ones((3, 3) + (2,) * nd)
    b = np.ones(3) if extra == "float64" else None

    def call(lib, fmod):
        args = [lib.from_numpy(x.astype(dx)), lib.from_numpy(w.astype(dw))]
        args.append(None if b is None else lib.from_numpy(b.astype(extra)))
        return getattr(fmod, name)(*args)

    expected = _raised(lambda: call(torch, TF))
    assert expected is not None
    assert _raised(lambda: call(jtorch, JF)) == expected


def test_same_padding_warns_for_even_kernels():
    with pytest.warns(UserWarning, match="even kernel lengths"):
        JF.conv1d(jtorch.ones(1, 2, 5), jtorch.ones(3, 2, 4), padding="same")


def test_memoised_geometry_still_rejects_what_the_checks_reject():
    """After a call has memoised its geometry, an argument equal to it but of another type
    (float, bool) or a tensor of another dtype still gets torch's error, and a repeat call is
    served from the memo with torch's values."""
    from jtorch.ops import conv as C

    x = np.random.default_rng(3).standard_normal((2, 3, 6, 6))
    w = np.random.default_rng(4).standard_normal((4, 3, 3, 3))
    want = TF.conv2d(torch.from_numpy(x), torch.from_numpy(w), stride=1, padding=1)
    xj, wj = jtorch.from_numpy(x), jtorch.from_numpy(w)
    for _ in range(2):
        got = JF.conv2d(xj, wj, stride=1, padding=1)
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    assert any(k[1] == (2, 3, 6, 6) for k in C._plans)
    for bad in ({"stride": 1.0}, {"stride": True}, {"padding": (1.0, 1)}, {"groups": 1.0}):
        kw = {"stride": 1, "padding": 1, **bad}
        with pytest.raises(TypeError) as t_err:
            TF.conv2d(torch.from_numpy(x), torch.from_numpy(w), **kw)
        with pytest.raises(type(t_err.value)):
            JF.conv2d(xj, wj, **kw)
    with pytest.raises(RuntimeError):
        JF.conv2d(xj, jtorch.from_numpy(w.astype(np.float32)), stride=1, padding=1)
