"""CPU autocast against torch: each op of torch's lists runs in the dtype torch's autocast
gives it (the autocast dtype for matmuls, convolutions, linear, prelu and attention; float32
for losses, prod, linalg, fft and some pooling), other ops in their inputs' dtypes; values agree
with torch's to bfloat16/float16 rounding; gradients reach float32 parameters in float32."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest

import jtorch

torch = pytest.importorskip("torch")


def _inputs(lib, dtype_name: str):
    rng = np.random.default_rng(0)
    low = getattr(lib, dtype_name)

    def t(*shape, d=None, pos=False):
        a = rng.standard_normal(shape).astype(np.float32)
        if pos:
            a = np.abs(a) + 0.5
        return lib.from_numpy(a).to(d or lib.float32)

    return t, low


def _spd(lib, t):
    a = t(4, 4)
    return a @ a.T + 4 * lib.eye(4)


# (name, fn(lib, t, low)): t(*shape, d=dtype) makes the same float32 data in both libraries
CASES = [
    # lower precision
    ("matmul", lambda L, t, lo: t(3, 4) @ t(4, 5)),
    ("matmul_vec", lambda L, t, lo: L.matmul(t(4), t(4))),
    ("mm", lambda L, t, lo: L.mm(t(3, 4), t(4, 2))),
    ("bmm", lambda L, t, lo: L.bmm(t(2, 3, 4), t(2, 4, 2))),
    ("addmm", lambda L, t, lo: L.addmm(t(3, 2), t(3, 4), t(4, 2))),
    ("baddbmm", lambda L, t, lo: L.baddbmm(t(2, 3, 2), t(2, 3, 4), t(2, 4, 2))),
    ("addbmm", lambda L, t, lo: L.addbmm(t(3, 2), t(2, 3, 4), t(2, 4, 2))),
    ("linear", lambda L, t, lo: L.nn.functional.linear(t(3, 4), t(5, 4), t(5))),
    ("linear_3d", lambda L, t, lo: L.nn.functional.linear(t(2, 3, 4), t(5, 4))),
    ("vecdot", lambda L, t, lo: L.linalg.vecdot(t(3, 4), t(3, 4))),
    ("conv1d", lambda L, t, lo: L.nn.functional.conv1d(t(1, 2, 6), t(3, 2, 3), t(3))),
    ("conv2d", lambda L, t, lo: L.nn.functional.conv2d(t(1, 2, 5, 5), t(3, 2, 3, 3))),
    ("conv3d", lambda L, t, lo: L.nn.functional.conv3d(t(1, 1, 3, 3, 3), t(2, 1, 2, 2, 2))),
    ("conv_transpose2d",
     lambda L, t, lo: L.nn.functional.conv_transpose2d(t(1, 2, 3, 3), t(2, 3, 2, 2))),
    ("prelu", lambda L, t, lo: L.nn.functional.prelu(t(2, 3), t(1))),
    ("sdpa", lambda L, t, lo: L.nn.functional.scaled_dot_product_attention(
        t(1, 3, 4), t(1, 3, 4), t(1, 3, 4))),
    # float32
    ("cross_entropy", lambda L, t, lo: L.nn.functional.cross_entropy(
        t(4, 3, d=lo), L.tensor([0, 2, 1, 1]))),
    ("nll_loss", lambda L, t, lo: L.nn.functional.nll_loss(t(4, 3, d=lo),
                                                          L.tensor([0, 2, 1, 1]))),
    ("mse_loss", lambda L, t, lo: L.nn.functional.mse_loss(t(4, 3, d=lo), t(4, 3, d=lo))),
    ("l1_loss", lambda L, t, lo: L.nn.functional.l1_loss(t(4, 3, d=lo), t(4, 3))),
    ("smooth_l1_loss", lambda L, t, lo: L.nn.functional.smooth_l1_loss(t(4, 3, d=lo),
                                                                      t(4, 3, d=lo))),
    ("huber_loss", lambda L, t, lo: L.nn.functional.huber_loss(t(4, 3, d=lo), t(4, 3, d=lo))),
    ("kl_div", lambda L, t, lo: L.nn.functional.kl_div(t(4, 3, d=lo), t(4, 3, d=lo, pos=True),
                                                      reduction="batchmean")),
    ("bce", lambda L, t, lo: L.nn.functional.binary_cross_entropy(
        t(4, 3, d=lo).sigmoid(), t(4, 3, d=lo).sigmoid())),
    ("bce_logits", lambda L, t, lo: L.nn.functional.binary_cross_entropy_with_logits(
        t(4, 3, d=lo), t(4, 3, d=lo).sigmoid())),
    ("soft_margin_loss", lambda L, t, lo: L.nn.functional.soft_margin_loss(t(4, d=lo),
                                                                          t(4, d=lo).sign())),
    ("margin_ranking_loss", lambda L, t, lo: L.nn.functional.margin_ranking_loss(
        t(4, d=lo), t(4, d=lo), t(4, d=lo).sign())),
    ("hinge_embedding_loss", lambda L, t, lo: L.nn.functional.hinge_embedding_loss(
        t(4, d=lo), t(4, d=lo).sign())),
    ("cosine_embedding_loss", lambda L, t, lo: L.nn.functional.cosine_embedding_loss(
        t(4, 3, d=lo), t(4, 3, d=lo), t(4, d=lo).sign())),
    ("poisson_nll_loss", lambda L, t, lo: L.nn.functional.poisson_nll_loss(
        t(4, d=lo), t(4, d=lo, pos=True))),
    ("triplet_margin_loss", lambda L, t, lo: L.nn.functional.triplet_margin_loss(
        t(4, 3, d=lo), t(4, 3, d=lo), t(4, 3, d=lo))),
    ("multi_margin_loss", lambda L, t, lo: L.nn.functional.multi_margin_loss(
        t(4, 3, d=lo), L.tensor([0, 2, 1, 1]))),
    ("multilabel_margin_loss", lambda L, t, lo: L.nn.functional.multilabel_margin_loss(
        t(2, 3, d=lo), L.tensor([[0, 2, -1], [1, -1, 0]]))),
    ("prod", lambda L, t, lo: L.prod(t(4, d=lo, pos=True))),
    ("prod_dim", lambda L, t, lo: t(3, 4, d=lo, pos=True).prod(1)),
    ("cdist", lambda L, t, lo: L.cdist(t(3, 2, d=lo), t(4, 2, d=lo))),
    ("trace", lambda L, t, lo: L.trace(t(3, 3, d=lo))),
    ("quantile", lambda L, t, lo: L.quantile(t(5, d=lo), 0.3)),
    ("avg_pool3d", lambda L, t, lo: L.nn.functional.avg_pool3d(t(1, 1, 2, 2, 2, d=lo), 2)),
    ("max_pool3d", lambda L, t, lo: L.nn.functional.max_pool3d(t(1, 1, 2, 2, 2, d=lo), 2)),
    ("adaptive_avg_pool3d",
     lambda L, t, lo: L.nn.functional.adaptive_avg_pool3d(t(1, 1, 2, 2, 2, d=lo), 1)),
    ("adaptive_max_pool3d",
     lambda L, t, lo: L.nn.functional.adaptive_max_pool3d(t(1, 1, 2, 2, 2, d=lo), 1)),
    ("reflect_pad", lambda L, t, lo: L.nn.functional.pad(t(1, 2, 4, d=lo), (1, 1),
                                                         mode="reflect")),
    ("replicate_pad", lambda L, t, lo: L.nn.functional.pad(t(1, 1, 3, 3, d=lo), (1, 1, 1, 1),
                                                           mode="replicate")),
    ("grid_sample", lambda L, t, lo: L.nn.functional.grid_sample(
        t(1, 1, 3, 3, d=lo), t(1, 2, 2, 2, d=lo).tanh(), align_corners=False)),
    ("inverse", lambda L, t, lo: L.linalg.inv(_spd(L, t).to(lo))),
    ("cholesky", lambda L, t, lo: L.linalg.cholesky(_spd(L, t).to(lo))),
    ("solve", lambda L, t, lo: L.linalg.solve(_spd(L, t).to(lo), t(4, 2, d=lo))),
    ("svdvals", lambda L, t, lo: L.linalg.svdvals(_spd(L, t).to(lo))),
    ("eigvalsh", lambda L, t, lo: L.linalg.eigvalsh(_spd(L, t).to(lo))),
    ("qr", lambda L, t, lo: L.linalg.qr(_spd(L, t).to(lo))[1]),
    ("pinverse", lambda L, t, lo: L.pinverse(_spd(L, t).to(lo))),
    ("rfft", lambda L, t, lo: L.fft.rfft(t(8, d=lo))),
    ("fft", lambda L, t, lo: L.fft.fft(t(8, d=lo))),
    # outside the lists: the inputs' dtypes
    ("sum", lambda L, t, lo: t(4, 3, d=lo).sum()),
    ("softmax", lambda L, t, lo: L.softmax(t(4, 3, d=lo), 1)),
    ("layer_norm", lambda L, t, lo: L.nn.functional.layer_norm(t(4, 3, d=lo), (3,))),
    ("exp_f32", lambda L, t, lo: t(4).exp()),
    ("add_mixed", lambda L, t, lo: t(4, d=lo) + t(4)),
    ("cat_mixed", lambda L, t, lo: L.cat([t(2, d=lo), t(2)])),
    ("matmul_f64", lambda L, t, lo: t(2, 3, d=L.float64) @ t(3, 2, d=L.float64)),
    # promote: the widest floating operand (float64 takes no part)
    ("stack_mixed", lambda L, t, lo: L.stack([t(2, d=lo), t(2)])),
    ("stack_low", lambda L, t, lo: L.stack([t(2, d=lo), t(2, d=lo)])),
    ("cat_f64", lambda L, t, lo: L.cat([t(2, d=lo), t(2, d=L.float64)])),
    ("index_copy", lambda L, t, lo: t(4, 3).index_copy(0, L.tensor([0, 2]), t(2, 3, d=lo))),
    ("index_copy_low_self", lambda L, t, lo: t(4, 3, d=lo).index_copy(0, L.tensor([3, 1]),
                                                                      t(2, 3))),
    ("index_copy_low", lambda L, t, lo: t(4, 3, d=lo).index_copy(0, L.tensor([1]),
                                                                 t(1, 3, d=lo))),
    ("matmul_int", lambda L, t, lo: L.arange(6).view(2, 3) @ L.arange(6).view(3, 2)),
]


def _run(lib, fn, dtype_name: str):
    t, low = _inputs(lib, dtype_name)
    with lib.autocast("cpu", dtype=low):
        return fn(lib, t, low)


@pytest.mark.parametrize("dtype_name", ["bfloat16", "float16"])
@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_op_dtype_and_value_match_torch(name, fn, dtype_name):
    want = _run(torch, fn, dtype_name)
    got = _run(jtorch, fn, dtype_name)
    assert str(got.dtype) == str(want.dtype), name
    assert tuple(got.shape) == tuple(want.shape)
    w = want.detach().to(torch.complex128 if want.is_complex() else torch.float64).numpy()
    g = got.detach().to(jtorch.complex128 if got.is_complex() else jtorch.float64).numpy()
    np.testing.assert_allclose(g, w, rtol=3e-2, atol=3e-2)


@pytest.mark.parametrize("call", [
    lambda L, lo, other: L.cat([L.ones(2, dtype=lo), L.ones(2, dtype=other)]),
    lambda L, lo, other: L.stack([L.ones(2, dtype=other), L.ones(2, dtype=other)]),
    lambda L, lo, other: L.ones(3, 2, dtype=lo).index_copy(0, L.tensor([1]),
                                                           L.ones(1, 2, dtype=other)),
    lambda L, lo, other: L.ones(3, dtype=lo).index_copy_(0, L.tensor([1]),
                                                         L.ones(1, dtype=L.float32)),
])
def test_promote_errors_match_torch(call):
    """The other 16-bit dtype beside the autocast one is torch's error, and in-place ops are
    not autocast (index_copy_ keeps its dtype check)."""
    for lo, other in (("bfloat16", "float16"), ("float16", "bfloat16")):
        got = want = None
        try:
            with torch.autocast("cpu", dtype=getattr(torch, lo)):
                want = call(torch, getattr(torch, lo), getattr(torch, other))
        except RuntimeError as e:
            want = e
        try:
            with jtorch.autocast("cpu", dtype=getattr(jtorch, lo)):
                got = call(jtorch, getattr(jtorch, lo), getattr(jtorch, other))
        except RuntimeError as e:
            got = e
        if isinstance(want, Exception):
            assert isinstance(got, RuntimeError), (lo, got)
            assert str(got).split(",")[0] == str(want).split(",")[0]
        else:
            assert str(got.dtype) == str(want.dtype)


def test_gradients_reach_float32_parameters():
    # seeded, the global stream left as it was: the bfloat16 tolerance below held for 298 of
    # 300 seeds, so unseeded draws made the test depend on the tests run before it
    with jtorch.random.fork_rng():
        jtorch.manual_seed(0)
        model = jtorch.nn.Sequential(jtorch.nn.Linear(4, 8), jtorch.nn.ReLU(),
                                     jtorch.nn.Linear(8, 3))
        x, y = jtorch.randn(5, 4), jtorch.tensor([0, 1, 2, 0, 1])
    with jtorch.autocast("cpu"):
        out = model(x)
        loss = jtorch.nn.functional.cross_entropy(out, y)
    assert out.dtype == jtorch.bfloat16 and loss.dtype == jtorch.float32
    loss.backward()
    for p in model.parameters():
        assert p.grad.dtype == jtorch.float32
    # the same step without autocast: gradients agree to bfloat16 rounding
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    jtorch.nn.functional.cross_entropy(model(x), y).backward()
    for g, p in zip(grads, model.parameters()):
        np.testing.assert_allclose(g.numpy(), p.grad.numpy(), rtol=0.1, atol=3e-2)


def test_state_functions_match_torch():
    for lib in (torch, jtorch):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert lib.get_autocast_dtype("cpu") == lib.bfloat16
            assert lib.get_autocast_dtype("cuda") == lib.float16
            assert lib.get_autocast_cpu_dtype() == lib.bfloat16
            assert lib.get_autocast_gpu_dtype() == lib.float16
            assert lib.get_autocast_xla_dtype() == lib.bfloat16
        assert not lib.is_autocast_enabled("cpu")
        with lib.autocast("cpu", dtype=lib.bfloat16):
            assert lib.is_autocast_enabled("cpu") and not lib.is_autocast_enabled()
            with lib.autocast("cpu", dtype=lib.float16):
                assert lib.get_autocast_dtype("cpu") == lib.float16
                with lib.autocast("cpu", enabled=False):
                    assert not lib.is_autocast_enabled("cpu")
                    assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype == lib.float32
                assert (lib.ones(2, 2) @ lib.ones(2, 2)).dtype == lib.float16
            assert lib.get_autocast_dtype("cpu") == lib.bfloat16
        assert not lib.is_autocast_enabled("cpu")
        lib.set_autocast_dtype("cpu", lib.float16)
        assert lib.get_autocast_dtype("cpu") == lib.float16
        lib.set_autocast_dtype("cpu", lib.bfloat16)
        with pytest.raises(TypeError, match="must be torch.dtype"):
            lib.set_autocast_dtype("cpu", "float32")
        with pytest.raises(RuntimeError, match="device type at start of device string: foo"):
            lib.is_autocast_enabled("foo")
        with pytest.raises(RuntimeError, match="device type at start of device string: foo"):
            lib.autocast("foo")
        with pytest.warns(UserWarning, match="CPU Autocast only supports dtypes"):
            with lib.autocast("cpu", dtype=lib.float32):
                assert not lib.is_autocast_enabled("cpu")


def test_state_is_per_thread():
    seen = []
    with jtorch.autocast("cpu"):
        th = threading.Thread(target=lambda: seen.append(
            (jtorch.is_autocast_enabled("cpu"), (jtorch.ones(2, 2) @ jtorch.ones(2, 2)).dtype)))
        th.start()
        th.join()
        assert (jtorch.ones(2, 2) @ jtorch.ones(2, 2)).dtype == jtorch.bfloat16
    assert seen == [(False, jtorch.float32)]


def test_decorator_and_custom_fwd():
    @jtorch.autocast("cpu")
    def f(a, b):
        return a @ b

    assert f(jtorch.ones(2, 2), jtorch.ones(2, 2)).dtype == jtorch.bfloat16

    class Scale(jtorch.autograd.Function):
        @staticmethod
        @jtorch.amp.custom_fwd(device_type="cpu", cast_inputs=jtorch.float32)
        def forward(ctx, x):
            ctx.inner = jtorch.is_autocast_enabled("cpu")
            return x * 2

        @staticmethod
        @jtorch.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            return g * 2

    x = jtorch.ones(3, dtype=jtorch.bfloat16, requires_grad=True)
    with jtorch.autocast("cpu"):
        y = Scale.apply(x)
    assert y.dtype == jtorch.float32
    y.sum().backward()
    assert x.grad.dtype == jtorch.bfloat16 and x.grad.tolist() == [2.0, 2.0, 2.0]
    with pytest.raises(TypeError):
        jtorch.amp.custom_fwd(lambda ctx, x: x)  # device_type is required, as in torch


def test_compiled_function_autocasts_like_eager():
    def f(x, w):
        with jtorch.autocast("cpu"):
            return (x @ w).relu().float().sum(1)

    x, w = jtorch.randn(4, 3), jtorch.randn(3, 5)
    want = f(x, w)
    got = jtorch.compile(f)(x, w)
    assert got.dtype == want.dtype == jtorch.float32
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_compiled_function_guards_on_autocast_state():
    def f(x, w):
        return x @ w

    g = jtorch.compile(f)
    x, w = jtorch.randn(4, 3), jtorch.randn(3, 5)
    assert g(x, w).dtype == jtorch.float32
    with jtorch.autocast("cpu"):
        assert g(x, w).dtype == jtorch.bfloat16
        with jtorch.autocast("cpu", dtype=jtorch.float16):
            assert g(x, w).dtype == jtorch.float16
    assert g(x, w).dtype == jtorch.float32
