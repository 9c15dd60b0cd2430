"""Convolution, pooling, unfold/fold and constant padding on CUDA tensors in Numba's simulator
against the same calls on CPU tensors: values, gradients, shapes and dtypes, and that the
native kernels ran (``eager.FALLBACKS`` stays empty for them).

Run by ``test_cuda_conv.py`` in a subprocess with ``NUMBA_ENABLE_CUDASIM=1``; sizes are tiny
(the simulator runs each thread as a Python thread).
"""

import os

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("runs under NUMBA_ENABLE_CUDASIM=1 (test_cuda_conv.py starts it)",
                allow_module_level=True)

import jtorch
import jtorch.nn.functional as F
from jtorch import nn
from jtorch.kernels.cuda import eager

CUDA = "cuda"
NATIVE = ("convolution", "convolution_backward_weight", "im2col", "col2im", "constant_pad_nd",
          "max_pool2d_with_indices", "max_pool2d_with_indices_backward",
          "max_pool3d_with_indices", "max_pool3d_with_indices_backward", "avg_pool2d",
          "avg_pool2d_backward", "avg_pool3d", "avg_pool3d_backward", "adaptive_avg_pool2d",
          "adaptive_avg_pool2d_backward", "adaptive_avg_pool3d", "adaptive_avg_pool3d_backward",
          "adaptive_max_pool2d", "adaptive_max_pool2d_backward", "adaptive_max_pool3d",
          "adaptive_max_pool3d_backward", "max_unpool2d", "max_unpool3d")


@pytest.fixture(autouse=True)
def _count_fallbacks():
    eager.FALLBACKS.clear()
    yield


def no_fallback():
    hit = {k: v for k, v in eager.FALLBACKS.items() if k in NATIVE}
    assert not hit, hit


def close(c, x, tol, strides=True):
    assert c.device.type == "cuda", c.device
    h = c.detach().cpu()
    assert h.dtype == x.dtype and tuple(h.shape) == tuple(x.shape), (h.dtype, x.dtype, h.shape,
                                                                     x.shape)
    assert not strides or c.stride() == x.stride(), (c.stride(), x.stride())
    np.testing.assert_allclose(h.double().numpy(), x.detach().double().numpy(), rtol=tol,
                               atol=tol)


def same(c, x):
    h = c.detach().cpu()
    assert h.dtype == x.dtype and tuple(h.shape) == tuple(x.shape)
    assert c.stride() == x.stride(), (c.stride(), x.stride())
    np.testing.assert_array_equal(h.numpy(), x.detach().numpy())


TOL = {jtorch.float32: 1e-4, jtorch.float64: 1e-10}


def twins(*tensors):
    """CPU leaves requiring grad and their CUDA copies."""
    cpu = [None if t is None else t.detach().requires_grad_() for t in tensors]
    cuda = [None if t is None else t.detach().to(CUDA).requires_grad_() for t in tensors]
    return cpu, cuda


def check_call(fn, inputs, dtype, grads=True):
    """fn on CPU and CUDA twins of ``inputs``: outputs and (with a random output gradient) the
    inputs' gradients agree."""
    cpu, cuda = twins(*inputs)
    y, yc = fn(*cpu), fn(*cuda)
    close(yc, y, TOL[dtype])
    if grads:
        g = jtorch.randn(*y.shape, dtype=y.dtype)
        y.backward(g)
        yc.backward(g.to(CUDA))
        for a, b in zip(cuda, cpu):
            if a is not None:  # (a gradient's layout follows its leaf's: not compared)
                close(a.grad, b.grad, TOL[dtype], strides=False)
    return yc


CONVS = [  # (nd, input shape, weight shape, kwargs)
    (2, (2, 3, 6, 5), (4, 3, 3, 3), {}),
    (2, (2, 4, 7, 6), (6, 2, 2, 3), {"stride": 2, "padding": 1, "dilation": 2, "groups": 2}),
    (2, (1, 4, 5, 5), (4, 1, 3, 3), {"padding": "same", "groups": 4}),
    (2, (3, 2, 5, 4), (2, 2, 2, 2), {"stride": (2, 1), "padding": (0, 1)}),
    (1, (2, 3, 9), (4, 3, 3), {"stride": 2, "padding": 2, "dilation": 2}),
    (1, (2, 4, 6), (2, 2, 2), {"groups": 2}),
    (3, (2, 2, 4, 3, 4), (3, 2, 2, 2, 2), {"padding": 1, "stride": (1, 2, 1)}),
    (3, (1, 4, 3, 3, 3), (4, 2, 1, 2, 2), {"groups": 2, "dilation": (1, 2, 1)}),
]


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
@pytest.mark.parametrize("case", range(len(CONVS)))
def test_convolution_forward_and_backward(case, dtype):
    nd, xs, ws, kw = CONVS[case]
    jtorch.manual_seed(case)
    conv = (F.conv1d, F.conv2d, F.conv3d)[nd - 1]
    x, w = jtorch.randn(*xs, dtype=dtype), jtorch.randn(*ws, dtype=dtype)
    b = jtorch.randn(ws[0], dtype=dtype) if case % 2 == 0 else None
    check_call(lambda x, w, b: conv(x, w, b, **kw), (x, w, b), dtype)
    no_fallback()


CONV_TS = [  # (nd, input shape, weight shape, kwargs)
    (2, (2, 3, 3, 4), (3, 2, 3, 3), {"stride": 2, "padding": 1, "output_padding": 1}),
    (2, (2, 4, 3, 3), (4, 3, 2, 2), {"groups": 2, "dilation": 2}),
    (1, (2, 2, 5), (2, 3, 3), {"stride": 3, "padding": 1, "output_padding": 2}),
    (3, (1, 2, 2, 3, 2), (2, 2, 2, 2, 2), {"stride": (2, 1, 2)}),
]


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
@pytest.mark.parametrize("case", range(len(CONV_TS)))
def test_transposed_convolution(case, dtype):
    nd, xs, ws, kw = CONV_TS[case]
    jtorch.manual_seed(10 + case)
    conv = (F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d)[nd - 1]
    x, w = jtorch.randn(*xs, dtype=dtype), jtorch.randn(*ws, dtype=dtype)
    b = jtorch.randn(ws[1] * kw.get("groups", 1), dtype=dtype)
    check_call(lambda x, w, b: conv(x, w, b, **kw), (x, w, b), dtype)
    no_fallback()


def test_convolution_non_contiguous_operands():
    jtorch.manual_seed(1)
    x = jtorch.randn(3, 5, 7, 4)[:, ::2].transpose(2, 3)  # (3, 3, 4, 7), strided
    w = jtorch.randn(3, 4, 3, 2).transpose(0, 1)[:, :3]  # (4, 3, 3, 2), not contiguous
    b = jtorch.randn(8)[::2]
    check_call(lambda x, w, b: F.conv2d(x, w, b, padding=1), (x, w, b), jtorch.float32)
    xc = jtorch.randn(2, 4, 5, 5).to(memory_format=jtorch.channels_last)
    check_call(lambda x, w: F.conv2d(x, w, stride=2, groups=2),
               (xc, jtorch.randn(6, 2, 3, 3)), jtorch.float32)
    g = jtorch.randn(2, 3, 6)[:, :, ::2]  # a strided input of the transposed convolution
    check_call(lambda x, w: F.conv_transpose1d(x, w, stride=2), (g, jtorch.randn(3, 2, 2)),
               jtorch.float32)
    no_fallback()


def test_convolution_in_chunks_of_images(monkeypatch):
    """A column buffer too small for the batch: the images go in chunks (the weight gradient
    adds each chunk's product to the last)."""
    from jtorch.kernels.cuda import conv

    monkeypatch.setattr(conv, "COLUMN_LIMIT", 40)
    jtorch.manual_seed(2)
    for groups in (1, 2):
        x, w = jtorch.randn(2, 2, 3, 3), jtorch.randn(4, 2 // groups, 2, 2)
        check_call(lambda x, w, b, g=groups: F.conv2d(x, w, b, padding=1, groups=g),
                   (x, w, jtorch.randn(4)), jtorch.float32)
        check_call(lambda x, w, g=groups: F.conv_transpose2d(x, w, stride=2, groups=g),
                   (x, w.transpose(0, 1).reshape(2, 4 // groups, 2, 2).contiguous()),
                   jtorch.float32)
    no_fallback()


def test_convolution_empty_batch_and_channels():
    x = jtorch.randn(0, 3, 5, 5)
    w = jtorch.randn(4, 3, 3, 3)
    check_call(lambda x, w: F.conv2d(x, w), (x, w), jtorch.float32)
    check_call(lambda x, w: F.conv_transpose2d(x, w), (jtorch.randn(0, 3, 3, 3), w.transpose(0, 1)),
               jtorch.float32)
    x0 = jtorch.randn(2, 0, 4)
    y, yc = F.conv1d(x0, jtorch.randn(3, 0, 2)), F.conv1d(x0.to(CUDA), jtorch.randn(3, 0, 2).to(CUDA))
    close(yc, y, 0)
    no_fallback()


def test_convolution_double_backward():
    jtorch.manual_seed(4)
    cpu, cuda = twins(jtorch.randn(2, 2, 5, 5, dtype=jtorch.float64),
                      jtorch.randn(3, 2, 3, 3, dtype=jtorch.float64))
    outs = []
    for x, w in (cpu, cuda):
        y = F.conv2d(x, w, stride=2, padding=1)
        gx, gw = jtorch.autograd.grad((y * y).sum(), (x, w), create_graph=True)
        (gx.sum() + (gw * gw).sum()).backward()
        outs.append((gx, gw, x.grad, w.grad))
    for a, b in zip(outs[1], outs[0]):
        close(a, b, 1e-9)
    no_fallback()


def test_backward_is_deterministic():
    jtorch.manual_seed(5)
    x = jtorch.randn(2, 2, 6, 6).to(CUDA).requires_grad_()
    w = jtorch.randn(3, 2, 3, 3).to(CUDA).requires_grad_()
    grads = []
    for _ in range(2):
        y = F.max_pool2d(F.conv2d(x, w, stride=2, padding=2), 2, 1)
        gx, gw = jtorch.autograd.grad(y.sum(), (x, w))
        grads.append((gx.cpu().numpy(), gw.cpu().numpy()))
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)


def test_other_dtypes_take_the_host_path():
    x, w = jtorch.randn(1, 2, 4, 4), jtorch.randn(2, 2, 3, 3)
    y = F.conv2d(x.bfloat16(), w.bfloat16())
    yc = F.conv2d(x.to(CUDA).bfloat16(), w.to(CUDA).bfloat16())
    close(yc, y, 1e-3)
    assert eager.FALLBACKS["convolution"] == 1
    h = jtorch.randn(2, 3, 4, 4).to(jtorch.bfloat16)
    close(F.max_pool2d(h.to(CUDA), 2), F.max_pool2d(h, 2), 0)
    assert eager.FALLBACKS["max_pool2d_with_indices"] == 1
    i = jtorch.arange(32.0).reshape(2, 4, 4).to(jtorch.int64)
    vals, idx = F.max_pool2d(i.to(CUDA), 2, return_indices=True)  # integers: native
    want, widx = F.max_pool2d(i, 2, return_indices=True)
    same(vals, want)
    same(idx, widx)
    assert eager.FALLBACKS["max_pool2d_with_indices"] == 1


POOLS = [  # (name, call, input shape)
    ("max2d", lambda x: F.max_pool2d(x, 2), (2, 3, 6, 7)),
    ("max2d_geo", lambda x: F.max_pool2d(x, 3, 2, 1, dilation=2, ceil_mode=True), (2, 2, 7, 6)),
    ("max1d", lambda x: F.max_pool1d(x, 3, 2, 1), (2, 3, 9)),
    ("max3d", lambda x: F.max_pool3d(x, 2, (1, 2, 2), (1, 0, 1)), (1, 2, 4, 4, 5)),
    ("avg2d", lambda x: F.avg_pool2d(x, 3, 2, 1), (2, 3, 6, 7)),
    ("avg2d_ceil", lambda x: F.avg_pool2d(x, 2, 3, 1, ceil_mode=True, count_include_pad=False),
     (2, 2, 7, 8)),
    ("avg2d_div", lambda x: F.avg_pool2d(x, 3, 1, divisor_override=4), (3, 5, 5)),
    ("avg1d", lambda x: F.avg_pool1d(x, 4, 2, 2), (2, 2, 9)),
    ("avg3d", lambda x: F.avg_pool3d(x, 2, 1, 1, count_include_pad=False), (1, 2, 3, 4, 3)),
    ("aavg2d", lambda x: F.adaptive_avg_pool2d(x, (4, 3)), (2, 3, 7, 5)),
    ("aavg3d", lambda x: F.adaptive_avg_pool3d(x, (2, 3, 2)), (1, 2, 3, 5, 4)),
    ("amax2d", lambda x: F.adaptive_max_pool2d(x, 3), (2, 2, 7, 5)),
    ("amax1d", lambda x: F.adaptive_max_pool1d(x, 4), (2, 3, 9)),
    ("amax3d", lambda x: F.adaptive_max_pool3d(x, (2, 2, 3)), (1, 2, 3, 4, 5)),
]


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
@pytest.mark.parametrize("case", [p[0] for p in POOLS])
def test_pooling_forward_and_backward(case, dtype):
    _, fn, shape = next(p for p in POOLS if p[0] == case)
    jtorch.manual_seed(len(case))
    check_call(fn, (jtorch.randn(*shape, dtype=dtype),), dtype)
    no_fallback()


def test_pooling_non_contiguous_empty_and_nan():
    jtorch.manual_seed(6)
    x = jtorch.randn(3, 4, 8, 6).transpose(2, 3)[:, 1:]  # strided leading and spatial dims
    check_call(lambda x: F.max_pool2d(x, 2, 2), (x,), jtorch.float32)
    check_call(lambda x: F.avg_pool2d(x, 2, 1), (x,), jtorch.float32)
    x = jtorch.randn(2, 3, 5, 5).to(memory_format=jtorch.channels_last)
    check_call(lambda x: F.adaptive_avg_pool2d(x, 2), (x,), jtorch.float32)
    check_call(lambda x: F.max_pool2d(x, 2), (jtorch.randn(0, 2, 4, 4),), jtorch.float32,
               grads=False)  # (the CPU backward fails on an empty batch)
    v = jtorch.tensor([[[1.0, 3.0, 3.0, float("nan")], [2.0, float("nan"), 0.0, 5.0],
                        [4.0, 4.0, -1.0, -2.0], [float("-inf"), 4.0, 1.0, 1.0]]])
    for fn in (lambda t: F.max_pool2d(t, 2, 1, return_indices=True),
               lambda t: F.adaptive_max_pool2d(t, 3, return_indices=True)):
        (a, ia), (b, ib) = fn(v.to(CUDA)), fn(v)
        same(a, b)
        same(ia, ib)
    no_fallback()


def test_max_unpool():
    jtorch.manual_seed(7)
    for pool, unpool, shape in ((F.max_pool2d, F.max_unpool2d, (2, 3, 4, 6)),
                                (F.max_pool3d, F.max_unpool3d, (1, 2, 4, 2, 4))):
        x = jtorch.randn(*shape)
        y, idx = pool(x, 2, return_indices=True)
        _yc, idxc = pool(x.to(CUDA), 2, return_indices=True)
        cpu, cuda = twins(y)
        u = unpool(cpu[0], idx, 2, output_size=shape[2:])
        uc = unpool(cuda[0], idxc, 2, output_size=shape[2:])
        same(uc, u)
        g = jtorch.randn(*u.shape)
        u.backward(g)
        uc.backward(g.to(CUDA))
        same(cuda[0].grad, cpu[0].grad)
    bad = jtorch.tensor([[[0, 9]]])
    with pytest.raises(RuntimeError, match="Found an invalid max index: 9"):
        F.max_unpool1d(jtorch.ones(1, 1, 2, device=CUDA), bad.to(CUDA), 2)
    no_fallback()


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
def test_unfold_and_fold(dtype):
    jtorch.manual_seed(8)
    kw = {"kernel_size": (2, 3), "dilation": (1, 2), "padding": 1, "stride": (2, 1)}
    x = jtorch.randn(2, 3, 5, 6, dtype=dtype)
    u = check_call(lambda x: F.unfold(x, **kw), (x,), dtype)
    check_call(lambda x: F.unfold(x, **kw), (x[0].transpose(1, 2),), dtype)  # unbatched, strided
    check_call(lambda c: F.fold(c, (5, 6), **kw), (u.detach().cpu(),), dtype)
    check_call(lambda c: F.fold(c, (5, 6), **kw), (u.detach().cpu()[1],), dtype)  # unbatched
    no_fallback()


def test_constant_pad():
    jtorch.manual_seed(9)
    x = jtorch.randn(2, 3, 4, 5)
    check_call(lambda x: F.pad(x, (1, 2, -1, 3), value=0.5), (x,), jtorch.float32)
    check_call(lambda x: F.pad(x, (2, -3)), (x.transpose(1, 3),), jtorch.float32)
    i = jtorch.arange(12).reshape(3, 4)
    same(F.pad(i.to(CUDA), (1, 1, 1, 0), value=7), F.pad(i, (1, 1, 1, 0), value=7))
    no_fallback()


class Net(nn.Module):
    """The demo's CNN, smaller."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 6, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(6 * 2 * 2, 3)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        return F.log_softmax(self.fc(x.flatten(1)), dim=1)


def test_cnn_training_steps_on_cuda_equal_cpu():
    def run(dev):
        jtorch.manual_seed(0)
        m = Net().to(dev)
        opt = jtorch.optim.Adam(m.parameters(), lr=0.01)
        x = jtorch.randn(4, 1, 8, 8).to(dev)
        y = jtorch.tensor([0, 2, 1, 0]).to(dev)
        loss = F.nll_loss(m(x), y)
        loss.backward()
        opt.step()
        return [loss.item()], m

    cpu_losses, m_cpu = run("cpu")
    cuda_losses, m_cuda = run(CUDA)
    np.testing.assert_allclose(cuda_losses, cpu_losses, rtol=1e-5)
    for p, q in zip(m_cuda.parameters(), m_cpu.parameters()):
        close(p, q, 1e-5)
    no_fallback()
