"""float16 CUDA tensors against the same calls on CPU, bitwise: pointwise ops compute in
float32 from float16 operands and round once (Python numbers rounded to float16 first, except
at torch's opmath positions), reductions read float16 widened, casts round once from the wider
dtype. Run by ``test_cuda_half.py`` under the simulator."""

import os

import numpy as np
import pytest

import jtorch
import jtorch.nn.functional as F
from jtorch import dispatch
from jtorch.kernels import registry
from jtorch.kernels.cuda import eager

assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"

EDGE = [0.0, -0.0, 1.0, -1.5, 0.1, 3.0, 65504.0, -65504.0, 6e-8, 1e-4, float("inf"),
        float("-inf"), float("nan"), 0.5, 2.5, -7.25]


def _x(n_cols=4, seed=0):
    g = np.random.default_rng(seed)
    v = np.concatenate([EDGE, g.standard_normal(len(EDGE) * (n_cols - 1)) * 3])
    return jtorch.from_numpy(v.reshape(-1, n_cols)).half()


def _same(got, want):
    assert got.device.type == "cuda" and got.dtype == want.dtype and got.shape == want.shape
    g, w = got.cpu(), want
    if g.dtype == jtorch.float16:
        g, w = g.view(jtorch.int16), w.view(jtorch.int16)  # bitwise, signed zeros and nans too
        gn, wn = got.cpu().isnan(), want.isnan()
        assert bool((gn == wn).all())
        g, w = g[~gn], w[~wn]
    assert np.array_equal(g.numpy(), w.numpy(), equal_nan=g.dtype.is_floating_point)


def _unary_ops():
    return sorted(o.name for o in registry.REGISTRY.values()
                  if o.family == "unary" and o.scalar is not None and 2 in o.cats
                  and o.nparams == 0 and o.dtype_rule != registry.LOGICAL)


@pytest.fixture(autouse=True)
def _no_fallbacks():
    eager.FALLBACKS.clear()
    with np.errstate(all="ignore"):
        yield


def test_every_unary_float_op():
    x = _x()
    cx = x.cuda()
    ran = 0
    for name in _unary_ops():
        op = registry.REGISTRY[name]
        try:
            want = dispatch.pointwise(op, (x,))
        except (RuntimeError, TypeError, NotImplementedError):
            continue
        _same(dispatch.pointwise(op, (cx,)), want)
        ran += 1
    assert ran > 40
    assert not eager.FALLBACKS, eager.FALLBACKS


@pytest.mark.parametrize("call", [
    lambda a, b: a + b, lambda a, b: a - b * 2, lambda a, b: a * b, lambda a, b: a / b,
    lambda a, b: a * 0.1, lambda a, b: a / 3, lambda a, b: a + 0.1, lambda a, b: 0.3 - a,
    lambda a, b: a + 70000.0, lambda a, b: a ** 2, lambda a, b: jtorch.atan2(a, b),
    lambda a, b: jtorch.maximum(a, b), lambda a, b: a.lerp(b, 0.3), lambda a, b: a < b,
    lambda a, b: a == b, lambda a, b: jtorch.where(a > b, a, b), lambda a, b: a.clamp(-1, 1),
    lambda a, b: jtorch.hypot(a, b), lambda a, b: a[:, ::2] + b.t()[:2].t(),
    lambda a, b: a + b[:1], lambda a, b: a.relu_(), lambda a, b: a.mul_(b),
    lambda a, b: jtorch.nn.functional.gelu(a), lambda a, b: a.sigmoid() * b.tanh(),
])
def test_binary_and_composite(call):
    a, b = _x(), _x(seed=1)
    _same(call(a.cuda(), b.cuda()), call(a.clone(), b))
    assert not eager.FALLBACKS, eager.FALLBACKS


@pytest.mark.parametrize("call", [lambda t: t.amax(0), lambda t: t.amin(1, keepdim=True),
                                  lambda t: t.t().amax(1)])
def test_selecting_reductions(call):
    x = _x()
    _same(call(x.cuda()), call(x))
    assert not eager.FALLBACKS, eager.FALLBACKS


@pytest.mark.parametrize("call", [
    lambda t: t.sum(), lambda t: t.sum(0), lambda t: t.mean(1), lambda t: t.prod(1),
    lambda t: t.nansum(), lambda t: t.sum(dtype=jtorch.float32), lambda t: t.t().sum(1),
    lambda t: t[:8].mean(),
])
def test_summing_reductions(call):
    """Sums run in another order than the CPU's (which adds float32 blocks): against the float64
    sum of the same float16 values, within float16's rounding."""
    x = _x()
    x = x.masked_fill(x.abs() > 1000, 1.0)
    got = call(x.cuda())
    want = call(x.double())
    assert got.device.type == "cuda" and got.dtype == call(x).dtype
    np.testing.assert_allclose(got.cpu().double().numpy(), want.numpy(), rtol=1e-3, atol=1e-3)
    assert not eager.FALLBACKS, eager.FALLBACKS


@pytest.mark.parametrize("call", [
    lambda t: t.float(), lambda t: t.double(), lambda t: t.float().half(),
    lambda t: (t.double() / 3).half(), lambda t: (t.float() / 3).half(),
    lambda t: jtorch.full_like(t, 0.1), lambda t: jtorch.zeros_like(t).fill_(1 / 3),
    lambda t: t.clone(), lambda t: t.t().contiguous(), lambda t: t.float().copy_(t),
    lambda t: t.clone().copy_(t.double() / 7),
])
def test_casts_and_copies(call):
    x = _x()
    _same(call(x.cuda()), call(x))
    assert not eager.FALLBACKS, eager.FALLBACKS


def test_other_dtypes_keep_the_host_path():
    """Mixed operands (float16 with float32 tensors) follow the CPU's casting rules there."""
    a, b = _x(), _x(seed=1).float()
    _same(a.cuda() * b.cuda(), a * b)
    x = _x()
    _same(x.cuda().bfloat16().half(), x.bfloat16().half())


def test_autograd():
    x = _x(seed=2)
    x = x.clamp(-4, 4).nan_to_num(0.0)
    cx = x.cuda().requires_grad_()
    x.requires_grad_()
    ((x * x).sigmoid() * 3 - x).sum().backward()
    ((cx * cx).sigmoid() * 3 - cx).sum().backward()
    _same(cx.grad, x.grad)


@pytest.mark.parametrize("call", [
    lambda a, b: a @ b.t(), lambda a, b: a.t() @ b, lambda a, b: jtorch.mm(a[:3], b[:4].t()),
    lambda a, b: jtorch.bmm(a.reshape(2, 8, 4), b.reshape(2, 8, 4).transpose(1, 2)),
    lambda a, b: jtorch.addmm(b[0], a.t(), b, beta=0.5, alpha=2.0),
    lambda a, b: jtorch.nn.functional.linear(a, b[:3], b[5, :3]),
])
def test_products(call):
    """Products sum float16 operands in float32 and round once, as the CPU path (in another
    order: within one float16 rounding)."""
    a, b = (t.masked_fill(~t.isfinite() | (t.abs() > 100), 0.5) for t in (_x(), _x(seed=1)))
    got, want = call(a.cuda(), b.cuda()), call(a, b)
    assert got.device.type == "cuda" and got.dtype == want.dtype == jtorch.float16
    np.testing.assert_allclose(got.cpu().float().numpy(), want.float().numpy(), rtol=2e-3,
                               atol=2e-3)
    assert not eager.FALLBACKS, eager.FALLBACKS


@pytest.mark.parametrize("call", [
    lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=2),
    lambda x, w, b: F.conv2d(x[:, :2], w, None, stride=2),
    lambda x, w, b: F.conv_transpose2d(x[:, :, :5, :5], w[:4], b[:2], stride=2),
    lambda x, w, b: F.fold(F.unfold(x, 3), (7, 7), 3),
    lambda x, w, b: F.max_pool2d(x, 2), lambda x, w, b: F.max_pool2d(x, 3, 2, 1),
])
def test_convolution_and_pooling(call):
    """Columns hold float16, products and col2im's gathers sum in float32, one rounding per
    pass; max pooling compares float16 values (bitwise: it only selects)."""
    g = np.random.default_rng(3)
    x, w, b = (jtorch.from_numpy(g.standard_normal(s).astype(np.float32)).half()
               for s in ((2, 4, 7, 7), (6, 2, 3, 3), (6,)))
    got, want = call(x.cuda(), w.cuda(), b.cuda()), call(x, w, b)
    assert got.dtype == want.dtype == jtorch.float16
    np.testing.assert_allclose(got.cpu().float().numpy(), want.float().numpy(), rtol=4e-3,
                               atol=4e-3)
    assert not eager.FALLBACKS, eager.FALLBACKS


def test_convolution_gradients():
    g = np.random.default_rng(4)
    x, w = (jtorch.from_numpy(g.standard_normal(s).astype(np.float32)).half()
            for s in ((2, 4, 6, 6), (6, 2, 3, 3)))
    xc, wc = x.cuda().requires_grad_(), w.cuda().requires_grad_()
    x.requires_grad_(), w.requires_grad_()
    F.conv2d(xc, wc, padding=1, groups=2).float().square().sum().backward()
    F.conv2d(x, w, padding=1, groups=2).float().square().sum().backward()
    for a, b in ((xc.grad, x.grad), (wc.grad, w.grad)):
        np.testing.assert_allclose(a.cpu().float().numpy(), b.float().numpy(), rtol=1e-2,
                                   atol=1e-2 * float(b.float().abs().max()))
    assert not {"convolution", "convolution_backward_weight"} & set(eager.FALLBACKS)
