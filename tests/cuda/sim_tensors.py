"""CUDA tensors in Numba's simulator against the same calls on CPU: creation, transfers,
views, native pointwise kernels, ops that run their CPU kernel over host copies, autograd,
modules and optimizers, and torch's errors.

Run by ``test_cuda_tensors.py`` in a subprocess with ``NUMBA_ENABLE_CUDASIM=1`` (the simulator
must be chosen before ``numba.cuda`` is first imported); the file name keeps pytest's default
collection away from it. Sizes are tiny: the simulator runs each thread as a Python thread.
"""

import os
import pickle

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("runs under NUMBA_ENABLE_CUDASIM=1 (test_cuda_tensors.py starts it)",
                allow_module_level=True)

import jtorch
import jtorch.nn.functional as F
from jtorch import nn
from jtorch.kernels.cuda import eager

CUDA = "cuda"


def same(c, x):
    """CUDA tensor ``c`` holds exactly CPU tensor ``x``'s values, dtype and shape."""
    assert c.device.type == "cuda", c.device
    h = c.detach().cpu()
    assert h.dtype == x.dtype and tuple(h.shape) == tuple(x.shape), (h.dtype, x.dtype, h.shape)
    a, b = h.numpy() if h.dtype != jtorch.bfloat16 else h.float().numpy(), \
        x.detach().numpy() if x.dtype != jtorch.bfloat16 else x.detach().float().numpy()
    np.testing.assert_array_equal(a, b)


def close(c, x, rtol=1e-5, atol=1e-6):
    """Equal up to rounding: products and reductions sum in another order on the device (a
    block tree, k-tiles) than on CPU (BLAS, blocked loops)."""
    assert c.device.type == "cuda", c.device
    h = c.detach().cpu()
    assert h.dtype == x.dtype and tuple(h.shape) == tuple(x.shape), (h.dtype, x.dtype, h.shape)
    np.testing.assert_allclose(h.double().numpy(), x.detach().double().numpy(), rtol=rtol,
                               atol=atol)


@pytest.fixture(autouse=True)
def _no_fallback_leak():
    eager.FALLBACKS.clear()
    yield


def test_availability_and_devices():
    assert jtorch.cuda.is_available()
    d = jtorch.device("cuda")
    x = jtorch.zeros(2, device=d)
    assert x.device == jtorch.device("cuda", 0) and str(x.device) == "cuda:0"
    assert x.is_cuda and not x.is_cpu and x.get_device() == 0
    assert jtorch.ones(2, device="cuda:0").device == x.device
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        jtorch.zeros(2, device="cuda:5")


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64, jtorch.int64, jtorch.bool,
                                   jtorch.float16, jtorch.bfloat16, jtorch.complex64])
def test_round_trip_keeps_values_dtype_and_strides(dtype):
    x = (jtorch.arange(24).reshape(2, 3, 4) - 7).to(dtype)
    for v in (x, x.transpose(0, 2)):  # dense layouts move as one block
        c = v.to(CUDA)
        same(c, v)
        assert c.stride() == v.stride() and c.cpu().stride() == v.stride()
    v = x[:, 1:, ::2]  # not dense: row-major on the device
    c = v.to(CUDA)
    same(c, v.contiguous())
    assert c.is_contiguous() and c.cpu().tolist() == v.tolist()
    m = jtorch.randn(2, 3, 4, 5).to(memory_format=jtorch.channels_last)
    c = m.cuda()
    assert c.stride() == m.stride() and c.is_contiguous(memory_format=jtorch.channels_last)
    assert c.to(CUDA) is c and c.cuda() is c and c.to(c.device, copy=True) is not c
    assert c.to(jtorch.float64).device == c.device


def test_creation_ops():
    jtorch.manual_seed(3)
    r = jtorch.randn(3, 4, device=CUDA)  # the device's own stream, reproducible by seed
    jtorch.manual_seed(3)
    same(jtorch.randn(3, 4, device=CUDA), r.cpu())
    same(jtorch.zeros(2, 3, device=CUDA), jtorch.zeros(2, 3))
    same(jtorch.full((2,), 7, device=CUDA), jtorch.full((2,), 7))
    same(jtorch.arange(5, device=CUDA), jtorch.arange(5))
    same(jtorch.eye(3, device=CUDA, dtype=jtorch.float64), jtorch.eye(3, dtype=jtorch.float64))
    same(jtorch.tensor([[1, 2], [3, 4]], device=CUDA), jtorch.tensor([[1, 2], [3, 4]]))
    c = jtorch.ones(2, 2, device=CUDA)
    same(jtorch.zeros_like(c), jtorch.zeros(2, 2))
    same(c.new_full((3,), 2.5), jtorch.full((3,), 2.5))


POINTWISE = [
    ("add", lambda a, b: a + b), ("sub_alpha", lambda a, b: jtorch.sub(a, b, alpha=2)),
    ("mul", lambda a, b: a * b), ("div", lambda a, b: a / b), ("pow", lambda a, b: a.abs() ** b),
    ("maximum", jtorch.maximum), ("atan2", jtorch.atan2), ("lt", lambda a, b: a < b),
    ("where", lambda a, b: jtorch.where(a > b, a, b)), ("exp", lambda a, b: a.exp()),
    ("sigmoid", lambda a, b: a.sigmoid()), ("floor", lambda a, b: (a * 3).floor()),
    ("relu_scalar", lambda a, b: F.relu(a) * 2.5 - 1), ("leaky", lambda a, b: F.leaky_relu(a, 0.1)),
    ("isnan", lambda a, b: (a / 0).isnan()), ("cpu_scalar", lambda a, b: a * jtorch.tensor(3.0)),
]


@pytest.mark.parametrize("name,f", POINTWISE, ids=[p[0] for p in POINTWISE])
@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
def test_pointwise_runs_cuda_kernels_bitwise_cpu(name, f, dtype):
    jtorch.manual_seed(0)
    a = jtorch.randn(3, 4, dtype=dtype)
    b = jtorch.randn(4, dtype=dtype) + 0.5  # broadcast along dim 0
    want = f(a, b)
    same(f(a.cuda(), b.cuda()), want)
    # a transposed view and a broadcast operand
    at = jtorch.randn(4, 3, dtype=dtype).t()
    same(f(at.cuda(), b.cuda()), f(at, b))
    assert not eager.FALLBACKS, dict(eager.FALLBACKS)  # no op ran on the host


def test_integer_and_bool_pointwise():
    x = jtorch.arange(-6, 6).reshape(3, 4)
    c = x.cuda()
    same(c * 3 + 1, x * 3 + 1)
    same(c // 4, x // 4)
    same(c % 5, x % 5)
    same(c & 6, x & 6)
    same((c > 0) | (c < -3), (x > 0) | (x < -3))
    same(c / 4, x / 4)  # true division promotes to the default float
    assert not eager.FALLBACKS, dict(eager.FALLBACKS)


@pytest.mark.parametrize("dtype", [jtorch.bfloat16, jtorch.complex64])
def test_pointwise_in_dtypes_the_kernels_lack_go_through_the_host(dtype):
    x = jtorch.linspace(-2, 2, 12).reshape(3, 4).to(dtype)
    same(x.cuda() * 3 - 1, x * 3 - 1)
    same((x.cuda() * x.cuda()).exp(), (x * x).exp())
    assert eager.FALLBACKS  # honest: these ran on the host


def test_views_share_storage_and_in_place_ops_write_through():
    x = jtorch.arange(12, dtype=jtorch.float32).reshape(3, 4)
    c = x.cuda()
    v = c[1:, ::2]
    v.mul_(-1)
    x[1:, ::2].mul_(-1)
    same(c, x)
    c.t()[0].add_(100)
    x.t()[0].add_(100)
    same(c, x)
    same(c.view(4, 3), x.view(4, 3))
    same(c.reshape(-1)[3:7], x.reshape(-1)[3:7])
    same(c.unsqueeze(1).expand(3, 2, 4), x.unsqueeze(1).expand(3, 2, 4))
    assert c[1].data_ptr() - c.data_ptr() == 4 * 4
    f = jtorch.zeros(5, device=CUDA)
    f[1:4].fill_(2.0)
    f[0:2].copy_(jtorch.tensor([7.0, 8.0]))  # from the host
    f[3:].copy_(f[0:2])  # within the device
    same(f, jtorch.tensor([7.0, 8.0, 2.0, 7.0, 8.0]))
    assert not eager.FALLBACKS, dict(eager.FALLBACKS)


def test_out_argument():
    a, b = jtorch.randn(3), jtorch.randn(3)
    o = jtorch.empty(3, device=CUDA)
    r = jtorch.add(a.cuda(), b.cuda(), out=o)
    assert r is o
    same(o, a + b)
    o64 = jtorch.empty(0, dtype=jtorch.float64, device=CUDA)
    jtorch.mul(a.cuda(), 2, out=o64)
    same(o64, (a * 2).double())
    with pytest.raises(RuntimeError, match="device"):
        jtorch.add(a.cuda(), b.cuda(), out=jtorch.empty(3))


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
def test_products_run_on_the_device(dtype):
    jtorch.manual_seed(4)
    a, b = jtorch.randn(5, 7, dtype=dtype), jtorch.randn(7, 6, dtype=dtype)
    c = jtorch.randn(6, dtype=dtype)
    A, B = jtorch.randn(3, 2, 5, 4, dtype=dtype), jtorch.randn(3, 2, 4, 6, dtype=dtype)
    close(a.cuda() @ b.cuda(), a @ b)
    close(a.cuda() @ b.t().contiguous().cuda().t(), a @ b)  # a transposed operand, in place
    close(A.cuda() @ B.cuda(), A @ B)
    close(A.cuda().transpose(0, 1) @ B.cuda().transpose(0, 1), A.transpose(0, 1) @ B.transpose(0, 1))
    close(jtorch.bmm(A[0].cuda(), B[0].cuda()), jtorch.bmm(A[0], B[0]))
    close(jtorch.addmm(c.cuda(), a.cuda(), b.cuda(), beta=0.5, alpha=2),
          jtorch.addmm(c, a, b, beta=0.5, alpha=2))
    nan = jtorch.full((6,), float("nan"), dtype=dtype)  # beta=0: the addend is not read
    close(jtorch.addmm(nan.cuda(), a.cuda(), b.cuda(), beta=0), a @ b)
    close(F.linear(a.cuda(), b.t().cuda(), c.cuda()), F.linear(a, b.t(), c))
    same(jtorch.zeros(3, 0, dtype=dtype).cuda() @ jtorch.zeros(0, 2, dtype=dtype).cuda(),
         jtorch.zeros(3, 2, dtype=dtype))
    assert not eager.FALLBACKS, dict(eager.FALLBACKS)


REDUCTIONS = [lambda t: t.sum(), lambda t: t.sum(1), lambda t: t.transpose(0, 2).sum((0, 1), keepdim=True),
              lambda t: t.double().mean(-1), lambda t: t.amax(0), lambda t: t.amin((1, 2)),
              lambda t: t.prod(2), lambda t: t.all(1), lambda t: t.any(),
              lambda t: t.count_nonzero(0), lambda t: t.nansum(0)]


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64, jtorch.int32, jtorch.bool])
def test_reductions_run_on_the_device(dtype):
    jtorch.manual_seed(5)
    x = (jtorch.randn(3, 4, 5) * 3).to(dtype)
    for f in REDUCTIONS:
        if dtype == jtorch.bool and f is REDUCTIONS[-1]:
            continue  # (nansum takes no bool, on either device)
        close(f(x.cuda()), f(x))
    e = jtorch.zeros(2, 0)
    same(e.cuda().sum(1), e.sum(1))
    assert e.cuda().mean().isnan().item()
    assert set(eager.FALLBACKS) == {"sum", "mean"}, dict(eager.FALLBACKS)  # the empty inputs


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
def test_softmax_cat_and_stack_run_on_the_device(dtype):
    jtorch.manual_seed(7)
    x = jtorch.randn(3, 5, dtype=dtype)
    for dim in (0, -1):
        close(x.cuda().softmax(dim), x.softmax(dim))
        close(x.cuda().log_softmax(dim), x.log_softmax(dim))
    g = jtorch.randn(3, 5, dtype=dtype)
    for f in (lambda t: t.softmax(1), lambda t: t.log_softmax(0)):
        xc, xx = x.cuda().requires_grad_(), x.clone().requires_grad_()
        close(jtorch.autograd.grad(f(xc), xc, g.cuda())[0], jtorch.autograd.grad(f(xx), xx, g)[0])
    close(jtorch.cat([x.cuda(), x[:1].cuda().double()]), jtorch.cat([x, x[:1].double()]))
    same(jtorch.cat([x.cuda().t(), x.cuda().t()], 1), jtorch.cat([x.t(), x.t()], 1))
    same(jtorch.stack([x.cuda(), x.cuda().exp()], 1), jtorch.stack([x, x.exp()], 1))
    assert not eager.FALLBACKS, dict(eager.FALLBACKS)


def test_ops_without_cuda_kernels_run_their_cpu_kernels_on_host_copies():
    jtorch.manual_seed(1)
    a = jtorch.randn(4, 5)
    img, w = jtorch.randn(2, 3, 6, 6).bfloat16(), jtorch.randn(4, 3, 3, 3).bfloat16()
    same(F.conv2d(img.cuda(), w.cuda(), padding=1), F.conv2d(img, w, padding=1))
    same(F.max_pool2d(img.cuda(), 2), F.max_pool2d(img, 2))
    idx = jtorch.tensor([2, 0])
    same(a.cuda()[idx.cuda()], a[idx])
    same(jtorch.cat([a.cuda(), a.cuda()]), jtorch.cat([a, a]))
    # an in-place CPU kernel's writes (through a view) reach the device storage
    c, x = a.cuda(), a.clone()
    c[1:].index_fill_(1, jtorch.tensor([0, 2]).cuda(), -5.0)
    x[1:].index_fill_(1, jtorch.tensor([0, 2]), -5.0)
    same(c, x)
    # side effects: batch norm's running statistics
    bn_c, bn = nn.BatchNorm1d(5).cuda(), nn.BatchNorm1d(5)
    close(bn_c(a.cuda()), bn(a))
    close(bn_c.running_mean, bn.running_mean)
    close(bn_c.running_var, bn.running_var)
    assert {"convolution", "max_pool2d_with_indices"} <= set(eager.FALLBACKS), \
        dict(eager.FALLBACKS)


def test_autograd_on_cuda_matches_cpu():
    jtorch.manual_seed(2)
    x = jtorch.randn(3, 4, requires_grad=True)
    w = jtorch.randn(4, 2, requires_grad=True)
    xc = x.detach().cuda().requires_grad_()
    wc = w.detach().cuda().requires_grad_()
    for xx, ww in ((x, w), (xc, wc)):
        y = ((xx @ ww).tanh() * 2 + xx.sum(1, keepdim=True)).sigmoid().sum()
        y.backward()
    assert xc.grad.device == xc.device
    close(xc.grad, x.grad)
    close(wc.grad, w.grad)
    # gradients flow back across the transfer, to the CPU leaf
    p = jtorch.randn(3, requires_grad=True)
    (p.cuda() * 3).exp().sum().backward()
    assert p.grad.device.type == "cpu"
    np.testing.assert_allclose(p.grad.numpy(), (3 * (3 * p.detach()).exp()).numpy(), rtol=1e-6)
    assert type(p.cuda().grad_fn).__name__ == "ToCopyBackward0"


@pytest.mark.parametrize("opt", ["sgd", "adam"])
def test_training_steps_on_cuda_equal_cpu(opt):
    def run(dev):
        jtorch.manual_seed(0)
        m = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
        params = list(m.parameters())
        m.to(dev)
        assert all(p is q for p, q in zip(params, m.parameters()))  # the Parameters move
        o = jtorch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9) if opt == "sgd" else \
            jtorch.optim.Adam(m.parameters(), lr=0.01)
        x = jtorch.randn(5, 4).to(dev)
        y = jtorch.tensor([0, 1, 2, 1, 0]).to(dev)
        losses = []
        for _ in range(3):
            o.zero_grad()
            loss = F.cross_entropy(m(x), y)
            loss.backward()
            o.step()
            losses.append(loss.item())
        return losses, m

    cpu_losses, m_cpu = run("cpu")
    cuda_losses, m_cuda = run(CUDA)
    np.testing.assert_allclose(cuda_losses, cpu_losses, rtol=1e-5)
    for p, q in zip(m_cuda.parameters(), m_cpu.parameters()):
        assert p.device.type == "cuda" and p.grad.device.type == "cuda"
        close(p, q)
    sd = m_cuda.state_dict()
    assert all(t.device.type == "cuda" for t in sd.values())
    assert all(t.device.type == "cpu" for t in m_cuda.cpu().state_dict().values())


def test_reading_values_and_printing():
    c = jtorch.tensor([1.5, -2.0], device=CUDA)
    assert c.tolist() == [1.5, -2.0] and c[0].item() == 1.5 and float(c[1]) == -2.0
    assert bool(c[0] > 0) and f"{c[1]:.1f}" == "-2.0"
    assert repr(c) == "tensor([ 1.5000, -2.0000], device='cuda:0')"
    r = c.clone().requires_grad_()
    assert repr(r) == "tensor([ 1.5000, -2.0000], device='cuda:0', requires_grad=True)"
    assert repr(jtorch.ones(2, dtype=jtorch.int64, device=CUDA)) == \
        "tensor([1, 1], device='cuda:0')"
    back = pickle.loads(pickle.dumps(c))
    same(back, c.cpu())


def test_numpy_refusal_and_mixed_device_errors():
    c = jtorch.ones(3, device=CUDA)
    msg = "can't convert cuda:0 device type tensor to numpy"
    with pytest.raises(TypeError, match=msg):
        c.numpy()
    with pytest.raises(TypeError, match=msg):
        np.asarray(c)
    assert c.numpy(force=True).tolist() == [1.0, 1.0, 1.0]
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but "
                                           "found at least two devices, cuda:0 and cpu!"):
        c + jtorch.ones(3)
    with pytest.raises(RuntimeError, match="same device"):
        jtorch.ones(2, 3, device=CUDA) @ jtorch.ones(3, 2)
    same(c + jtorch.tensor(1.0), jtorch.full((3,), 2.0))  # a CPU 0-d tensor is a scalar


def test_cuda_array_interface():
    c = jtorch.arange(6, dtype=jtorch.float32, device=CUDA).reshape(2, 3)
    ai = c.__cuda_array_interface__
    assert ai["shape"] == (2, 3) and ai["typestr"] == "<f4" and ai["strides"] is None
    assert ai["version"] == 2 and ai["data"] == (c.data_ptr(), False)
    t = c.t().__cuda_array_interface__
    assert t["strides"] == (4, 12) and t["data"][0] == c.data_ptr()
    with pytest.raises(AttributeError, match="non-CUDA tensor"):
        jtorch.ones(2).__cuda_array_interface__  # noqa: B018
    with pytest.raises(RuntimeError, match="requires grad"):
        c.clone().requires_grad_().__cuda_array_interface__  # noqa: B018


def test_compiled_pointwise_groups_launch_one_cuda_kernel():
    from jtorch.kernels.cuda import fused

    def f(x, y):
        return (x.sin() + y * 2).exp() * x, x.cos() > 0.5

    g = jtorch.compile(f)
    jtorch.manual_seed(6)
    x, y = jtorch.randn(3, 4), jtorch.randn(4)
    for xx, yy in ((x, y), (x, y[None])):  # row-major; a broadcast operand (strided kernel)
        before = fused.LAUNCHES[0]
        got = g(xx.cuda(), yy.cuda())
        assert fused.LAUNCHES[0] > before
        for a, b in zip(got, f(xx.cuda(), yy.cuda())):  # bitwise eager CUDA, and CPU
            same(a, b.cpu())
        for a, b in zip(got, f(xx, yy)):
            same(a, b)
    # a transposed operand: the group runs op by op on the device (eager's layouts)
    before = fused.LAUNCHES[0]
    got = g(x.cuda().t().contiguous().t(), y[:3, None].cuda())
    for a, b in zip(got, f(x.t().contiguous().t(), y[:3, None])):
        same(a, b)
    assert not eager.FALLBACKS, dict(eager.FALLBACKS)


def test_compiled_training_step_on_cuda():
    def run(dev):
        jtorch.manual_seed(0)
        m = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 1)).to(dev)
        o = jtorch.optim.SGD(m.parameters(), lr=0.05)
        cm = jtorch.compile(m)
        x = jtorch.randn(6, 4).to(dev)
        y = jtorch.randn(6, 1).to(dev)
        losses = []
        for _ in range(3):
            o.zero_grad()
            loss = ((cm(x) - y) ** 2).mean()
            loss.backward()
            o.step()
            losses.append(loss.item())
        return losses

    np.testing.assert_allclose(run(CUDA), run("cpu"), rtol=1e-5)


OPTIMIZERS = {
    "sgd": lambda ps: jtorch.optim.SGD(ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
    "adam": lambda ps: jtorch.optim.Adam(ps, lr=0.01, amsgrad=True),
    "adamw": lambda ps: jtorch.optim.AdamW(ps, lr=0.01),
    "rmsprop": lambda ps: jtorch.optim.RMSprop(ps, lr=0.01, centered=True, momentum=0.5),
    "adagrad": lambda ps: jtorch.optim.Adagrad(ps, lr=0.1),
    "rprop": lambda ps: jtorch.optim.Rprop(ps),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_optimizer_updates_run_on_the_device_bitwise_cpu(name):
    res = []
    for dev in ("cpu", CUDA):
        jtorch.manual_seed(0)
        p = jtorch.randn(7, 3).to(dev).requires_grad_()
        o = OPTIMIZERS[name]([p])
        for _ in range(3):
            o.zero_grad()
            (p * p * jtorch.arange(3.0).to(dev)).sum().backward()
            o.step()
        res.append(p)
    same(res[1], res[0])
    assert not eager.FALLBACKS, dict(eager.FALLBACKS)


def test_manual_seed_seeds_the_cuda_generators_too():
    jtorch.manual_seed(1234)
    assert jtorch.cuda.initial_seed() == 1234
    jtorch.cuda.manual_seed(7)
    assert jtorch.cuda.initial_seed() == 7
    jtorch.manual_seed(99)
    assert jtorch.cuda.initial_seed() == 99 and jtorch.initial_seed() == 99


def test_pinned_memory():
    x = jtorch.arange(12.0).reshape(3, 4).t()
    p = x.pin_memory()
    assert p.is_pinned() and not x.is_pinned() and p.pin_memory() is p
    assert p.stride() == x.stride() and p.tolist() == x.tolist()
    assert p[1:].is_pinned()  # a view of pinned storage
    same(p.to(CUDA, non_blocking=True), x)
    with pytest.raises(RuntimeError, match="only dense CPU tensors can be pinned"):
        x.cuda().pin_memory()
    data = [(jtorch.tensor([float(i)]), jtorch.tensor(i)) for i in range(4)]
    loader = jtorch.utils.data.DataLoader(data, batch_size=2, pin_memory=True)
    batches = list(loader)
    assert all(t.is_pinned() for b in batches for t in b)
    assert batches[1][0].tolist() == [[2.0], [3.0]]


def test_save_and_load_cuda_tensors():
    import io

    m = nn.Linear(3, 2).cuda()
    buf = io.BytesIO()
    jtorch.save({"sd": m.state_dict(), "w": m.weight, "row": m.weight[1:]}, buf)
    buf.seek(0)
    back = jtorch.load(buf)
    assert all(v.device.type == "cuda" for v in back["sd"].values())
    same(back["sd"]["weight"], m.weight.detach().cpu())
    assert back["row"].data_ptr() - back["w"].data_ptr() == 3 * 4  # one storage, as saved
    buf.seek(0)
    cpu = jtorch.load(buf, map_location="cpu")
    assert cpu["w"].device.type == "cpu" and cpu["w"].tolist() == m.weight.tolist()
    buf = io.BytesIO()
    jtorch.save(nn.Linear(3, 2).state_dict(), buf)
    buf.seek(0)
    assert all(v.is_cuda for v in jtorch.load(buf, map_location="cuda").values())


def test_simulated_blocks_share_their_shared_arrays():
    """Many threads of one block racing to create a shared array get the same one (a tree
    reduction over it is right on every launch), and device-function calls that raise NumPy
    warnings in several threads at once leave the module's ``cuda`` as it was."""
    import warnings

    from numba import cuda as numba_cuda

    from jtorch.kernels import registry
    from jtorch.kernels.cuda import reduce, target

    op = registry.REGISTRY["sum"]
    x = np.arange(1, 257, dtype=np.float64)
    d = target.to_device(x)
    for _ in range(20):
        out = target.to_device(np.zeros(1))
        reduce.run(op, "float64", "float64", d, (256,), (1,), 0, (0,), out, threads=16,
                   max_blocks=1)
        assert out.copy_to_host()[0] == x.sum()
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        a = jtorch.full((64,), 3e38, device=CUDA)
        same(a + a, jtorch.full((64,), float("inf")))  # (overflow warnings in every thread)
    assert target.cuda is numba_cuda


def test_reductions_over_dims_no_view_merges():
    """Reduced dims with a kept dim between them: a copy with the kept dims first."""
    x = jtorch.arange(60.0).reshape(3, 5, 4)
    close(x.cuda().sum((0, 2)), x.sum((0, 2)))
    close(x.cuda().amax((0, 2), keepdim=True), x.amax((0, 2), keepdim=True))
    close(x.cuda().transpose(0, 1).mean((0, 2)), x.transpose(0, 1).mean((0, 2)))
