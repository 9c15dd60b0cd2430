"""CUDA autocast and GradScaler on CUDA tensors, in the simulator: torch's CUDA lists (products
and convolutions in float16, softmax, layer norm, losses and the float32 pointwise ops in
float32), CPU tensors untouched by a CUDA region, nesting, and a mixed-precision training step
with loss scaling that tracks the float32 one. Run by ``test_cuda_amp.py``."""

import os
import warnings

import numpy as np
import pytest

import jtorch
import jtorch.nn.functional as F
from jtorch import nn
from jtorch.kernels.cuda import eager

assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


def _t(*shape, seed=0):
    g = np.random.default_rng(seed)
    return jtorch.from_numpy(g.standard_normal(shape).astype(np.float32)).cuda()


def test_available_and_enabled():
    assert jtorch.amp.is_autocast_available("cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with jtorch.autocast("cuda") as ac:
            assert jtorch.is_autocast_enabled("cuda") and ac.fast_dtype == jtorch.float16
            assert jtorch.get_autocast_dtype("cuda") == jtorch.float16
    assert not jtorch.is_autocast_enabled("cuda")


def test_lower_precision_list():
    x, w, b = _t(4, 6), _t(3, 6, seed=1), _t(3, seed=2)
    img, k = _t(2, 3, 6, 6, seed=3), _t(4, 3, 3, 3, seed=4)
    with jtorch.autocast("cuda"):
        assert (x @ w.t()).dtype == jtorch.float16
        assert F.linear(x, w, b).dtype == jtorch.float16
        assert jtorch.mm(x, w.t()).dtype == jtorch.float16
        assert jtorch.addmm(b, x, w.t()).dtype == jtorch.float16
        assert F.conv2d(img, k, padding=1).dtype == jtorch.float16
        assert (x + 1).dtype == jtorch.float32  # not on a list: its inputs' dtype
        assert (x.cpu() @ w.cpu().t()).dtype == jtorch.float32  # CPU tensors: CPU's autocast
    got = F.linear(x, w, b)
    with jtorch.autocast("cuda"):
        half = F.linear(x, w, b)
    np.testing.assert_allclose(half.float().cpu().numpy(), got.cpu().numpy(), rtol=1e-2,
                               atol=1e-2)


def test_float32_list():
    x = _t(4, 6).half()
    ln = nn.LayerNorm(6).cuda()
    with jtorch.autocast("cuda"):
        assert F.softmax(x, -1).dtype == jtorch.float32
        assert jtorch.log_softmax(x, -1).dtype == jtorch.float32
        assert ln(x).dtype == jtorch.float32
        assert F.group_norm(x.reshape(4, 6, 1), 2).dtype == jtorch.float32
        assert x.exp().dtype == jtorch.float32 and jtorch.log(x.abs()).dtype == jtorch.float32
        assert (x ** 2).dtype == jtorch.float32
        assert x.sum().dtype == x.sum(0).dtype == x.cumsum(1).dtype == jtorch.float32
        assert x.cumprod(0).dtype == jtorch.norm(x).dtype == x.prod().dtype == jtorch.float32
        assert x.sum(dtype=jtorch.float16).dtype == jtorch.float16  # an explicit dtype wins
        assert (x * 2).dtype == jtorch.float16  # not on the list
        assert x.amax().dtype == jtorch.float16
        assert x.exp_().dtype == jtorch.float16  # in-place ops keep their tensor's dtype
        target = jtorch.tensor([0, 1, 2, 3]).cuda()
        assert F.cross_entropy(x, target).dtype == jtorch.float32
        assert F.mse_loss(x, x * 0).dtype == jtorch.float32
    assert F.softmax(x, -1).dtype == jtorch.float16  # outside the region


def test_nesting_and_disable():
    x, w = _t(4, 6), _t(3, 6, seed=1)
    with jtorch.autocast("cuda"):
        with jtorch.autocast("cuda", enabled=False):
            assert (x @ w.t()).dtype == jtorch.float32
        assert (x @ w.t()).dtype == jtorch.float16
        with jtorch.autocast("cuda", dtype=jtorch.bfloat16):
            assert (x @ w.t()).dtype == jtorch.bfloat16
    with pytest.warns(UserWarning, match="CUDA Autocast only supports"):
        ac = jtorch.autocast("cuda", dtype=jtorch.float64)
    with ac:
        assert (x @ w.t()).dtype == jtorch.float32


def test_gradients_flow_in_the_inputs_dtypes():
    x = _t(4, 6).requires_grad_()
    w = _t(3, 6, seed=1).requires_grad_()
    with jtorch.autocast("cuda"):
        y = F.softmax(x @ w.t(), -1)
    y.sum().backward()
    assert x.grad.dtype == jtorch.float32 and w.grad.dtype == jtorch.float32
    x2 = x.detach().clone().requires_grad_()
    w2 = w.detach().clone().requires_grad_()
    F.softmax(x2 @ w2.t(), -1).sum().backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), x2.grad.cpu().numpy(), atol=2e-3)


def test_mixed_precision_training_step_with_grad_scaler():
    jtorch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)).cuda()
    ref = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)).cuda()
    ref.load_state_dict(model.state_dict())
    opt = jtorch.optim.SGD(model.parameters(), lr=0.1)
    opt_ref = jtorch.optim.SGD(ref.parameters(), lr=0.1)
    scaler = jtorch.amp.GradScaler("cuda")
    assert scaler.is_enabled()
    x, y = _t(16, 8, seed=5), jtorch.tensor(np.arange(16) % 3).cuda()
    for _ in range(3):
        opt.zero_grad()
        with jtorch.autocast("cuda"):
            out = model(x)
            assert out.dtype == jtorch.float16
            loss = F.cross_entropy(out, y)
            assert loss.dtype == jtorch.float32
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt_ref.zero_grad()
        F.cross_entropy(ref(x), y).backward()
        opt_ref.step()
        np.testing.assert_allclose(loss.item(), F.cross_entropy(ref(x), y).item(), rtol=0.05,
                                   atol=0.05)
    for p, q in zip(model.parameters(), ref.parameters()):
        assert p.dtype == jtorch.float32
        np.testing.assert_allclose(p.detach().cpu().numpy(), q.detach().cpu().numpy(),
                                   atol=2e-2)
    assert scaler.get_scale() == 2.0 ** 16


def test_products_and_pointwise_stay_on_the_device():
    eager.FALLBACKS.clear()
    x, w = _t(4, 6), _t(3, 6, seed=1)
    with jtorch.autocast("cuda"):
        (F.relu(x @ w.t()) * 2).exp().sum()
    assert not eager.FALLBACKS, eager.FALLBACKS


# -- the promote list: the widest floating operand wins ---------------------------------------

def test_promote_list():
    h, f = _t(4, 3).half(), _t(4, 3, seed=1)
    v16, v32 = _t(3, seed=2).half(), _t(3, seed=3)
    idx = jtorch.tensor([0, 2]).cuda()
    with jtorch.autocast("cuda"):
        assert jtorch.addcmul(f, h, h).dtype == jtorch.float32
        assert jtorch.addcdiv(h, h, f).dtype == jtorch.float32
        assert jtorch.addcmul(h, h, h).dtype == jtorch.float16  # all at the autocast dtype
        assert jtorch.atan2(h, f).dtype == jtorch.float32
        # ops that refuse mixed dtypes outside a region run in the widest one inside it
        assert jtorch.dot(v16, v32).dtype == jtorch.float32
        assert f.scatter_add(0, jtorch.zeros(2, 3, dtype=jtorch.long).cuda(), h[:2]).dtype \
            == jtorch.float32
        assert h.index_put((idx,), f[:2]).dtype == jtorch.float32
        assert jtorch.tensordot(h, f, dims=([1], [1])).dtype == jtorch.float32
        w = _t(2, 3, 3, seed=4)
        assert F.bilinear(h, h, w).dtype == jtorch.float32
        assert jtorch.cross(_t(2, 3).half(), _t(2, 3, seed=5), dim=1).dtype == jtorch.float32
        img, grid = _t(1, 2, 4, 4).half(), (_t(1, 3, 3, 2, seed=6) * 0.5).half()
        assert F.grid_sample(img, grid, align_corners=False).dtype == jtorch.float16
        assert F.grid_sample(img, grid.float(), align_corners=False).dtype == jtorch.float32
        # float64 takes no part; bfloat16 beside a float16 region is torch's error
        assert jtorch.atan2(h, f.double()).dtype == jtorch.float64  # (ordinary promotion)
        with pytest.raises(RuntimeError, match="same dtype"):  # float16 stays: torch's error
            jtorch.dot(v16, v32.double())
        with pytest.raises(RuntimeError, match="Unexpected floating ScalarType"):
            jtorch.dot(v16, v16.bfloat16())
        # a CPU tensor in a CUDA region is not cast (the devices then differ, as in torch)
        assert jtorch.dot(v32.cpu(), v32.cpu()).dtype == jtorch.float32
    want = jtorch.dot(v16.float(), v32)
    with jtorch.autocast("cuda"):
        got = jtorch.dot(v16, v32)
    assert got.cpu().item() == want.cpu().item()
    with pytest.raises(RuntimeError, match="same dtype"):  # outside a region: torch's error
        jtorch.dot(v16, v32)


def test_promote_is_not_applied_in_place_or_to_linalg_cross():
    h, f = _t(4, 3).half(), _t(4, 3, seed=1)
    with jtorch.autocast("cuda"):
        assert h.clone().addcmul_(f, f).dtype == jtorch.float16
        assert jtorch.linalg.cross(_t(2, 3).half(), _t(2, 3, seed=5).half()).dtype \
            == jtorch.float16


def test_binary_cross_entropy_is_banned():
    p = jtorch.sigmoid(_t(4))
    t = jtorch.ones(4).cuda()
    with jtorch.autocast("cuda"):
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            F.binary_cross_entropy(p, t)
        with pytest.raises(RuntimeError, match="unsafe to autocast"):
            nn.BCELoss()(p, t)
        assert F.binary_cross_entropy_with_logits(_t(4), t).dtype == jtorch.float32
        # CPU tensors: CPU autocast runs it in float32
        assert F.binary_cross_entropy(p.cpu(), t.cpu()).dtype == jtorch.float32
    assert F.binary_cross_entropy(p, t).dtype == jtorch.float32
