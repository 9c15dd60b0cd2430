"""The modules programs probe on their first lines, against torch on this CPU-only machine:
torch.cuda / accelerator / mps / xpu / version, torch.onnx, torch.nn.parallel, torch.testing,
torch.amp (autocast, GradScaler)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import jtorch


def _both(fn):
    out = []
    for lib in (jtorch, torch):
        try:
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                r = fn(lib)
            out.append((r, [str(x.message).split(" (Triggered")[0] for x in w]))
        except Exception as e:  # noqa: BLE001
            out.append((type(e).__name__, str(e)))
    return out


@pytest.mark.parametrize("call", [
    lambda t: t.cuda.is_available(), lambda t: t.cuda.device_count(),
    lambda t: t.cuda.is_initialized(), lambda t: t.cuda.manual_seed(0),
    lambda t: t.cuda.manual_seed_all(0), lambda t: t.cuda.empty_cache(),
    lambda t: t.cuda.current_device(), lambda t: t.cuda.synchronize(),
    lambda t: t.cuda.get_device_name(), lambda t: t.cuda.is_bf16_supported(),
    lambda t: t.cuda.memory_allocated(), lambda t: t.cuda.max_memory_allocated(),
    lambda t: t.accelerator.is_available(), lambda t: t.accelerator.current_accelerator(),
    lambda t: t.accelerator.device_count(), lambda t: t.backends.mps.is_available(),
    lambda t: t.mps.device_count(), lambda t: t.mps.manual_seed(0),
    lambda t: t.xpu.is_available(), lambda t: (t.version.cuda, t.version.hip, t.version.debug),
    lambda t: t.version.__version__ == t.__version__,
    lambda t: t.cuda.amp.GradScaler().get_scale(), lambda t: t.amp.GradScaler("cuda").is_enabled(),
])
def test_device_queries_answer_as_torch_without_a_gpu(call):
    mine, theirs = _both(call)
    assert mine == theirs


def test_onnx_is_importable_and_export_says_it_is_not_supported():
    import jtorch.onnx

    with pytest.raises(NotImplementedError, match="ONNX"):
        jtorch.onnx.export(jtorch.nn.Linear(2, 1), (jtorch.ones(1, 2),), "m.onnx")


def test_data_parallel_runs_the_module():
    jtorch.manual_seed(0)
    lin = jtorch.nn.Linear(3, 2)
    dp = jtorch.nn.DataParallel(lin)
    x = jtorch.randn(4, 3)
    assert jtorch.equal(dp(x), lin(x)) and dp.module is lin
    assert [n for n, _ in dp.named_parameters()] == ["module.weight", "module.bias"]
    from jtorch.nn.parallel import DistributedDataParallel

    with pytest.raises(RuntimeError, match="process group"):
        DistributedDataParallel(lin)


# -- torch.testing --------------------------------------------------------------------------

def _pairs(t):
    nan = float("nan")
    return [
        (t.tensor([1., 2., 3.]), t.tensor([1., 2.5, 3.]), {}),
        (t.tensor([1., 2., 3.]), t.tensor([1., 2. + 1e-7, 3.]), {}),
        (t.tensor([1, 2]), t.tensor([1, 3]), {}),
        (t.tensor([1.]), t.tensor([1.], dtype=t.float64), {}),
        (t.tensor([1.]), t.tensor([1.], dtype=t.float64), {"check_dtype": False}),
        (t.ones(2), t.ones(3), {}),
        (1.0, 1.0 + 1e-9, {}), (1, 2, {}),
        ([t.ones(1)], [t.zeros(1)], {}),
        ({"a": t.ones(2)}, {"a": t.ones(2) * 2}, {}),
        (t.tensor([nan]), t.tensor([nan]), {}),
        (t.tensor([nan]), t.tensor([nan]), {"equal_nan": True}),
        (t.ones(2, 2), t.ones(2, 2).t(), {"check_stride": True}),
        (t.ones(2), t.ones(2), {"rtol": 1e-3}),
        (t.tensor([1.0, 2.0]), t.tensor([1.1, 2.0]), {"rtol": 0.0, "atol": 0.2}),
        (t.tensor([True, False]), t.tensor([True, True]), {}),
        (t.tensor([1., 2.]), t.tensor([1.5, 2.]), {"msg": "custom message"}),
    ]


@pytest.mark.parametrize("k", range(17))
def test_assert_close_follows_torch(k):
    mine, theirs = _both(lambda t: t.testing.assert_close(*_pairs(t)[k][:2], **_pairs(t)[k][2]))
    assert mine == theirs


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int8", "uint8", "bool",
                                   "complex64"])
def test_make_tensor(dtype):
    d = getattr(jtorch, dtype)
    jtorch.manual_seed(0)
    t = jtorch.testing.make_tensor(4, 5, dtype=d)
    jtorch.manual_seed(0)
    assert jtorch.equal(t, jtorch.testing.make_tensor((4, 5), dtype=d))  # seeded
    assert t.dtype is d and tuple(t.shape) == (4, 5) and t.is_contiguous()
    v = t.real if d.is_complex else t
    if d is not jtorch.bool:
        assert float(v.min()) >= -9 and float(v.max()) <= 9
    n = jtorch.testing.make_tensor(4, 5, dtype=d, noncontiguous=True, low=1, high=3,
                                   exclude_zero=True)
    assert not n.is_contiguous()
    if d is not jtorch.bool and not d.is_complex:
        assert float(n.min()) >= 1 and float(n.max()) <= 3
    g = jtorch.testing.make_tensor(3, dtype=jtorch.float32, requires_grad=True)
    assert g.requires_grad and g.is_leaf


# -- torch.amp ------------------------------------------------------------------------------

def test_autocast_regions_run_and_cast_matmuls():
    x = jtorch.ones(2, 3)
    with jtorch.autocast("cpu"):
        assert (x @ x.t()).dtype is jtorch.bfloat16  # as torch (tests/test_autocast_ops.py)
    with jtorch.amp.autocast("cpu", dtype=jtorch.float16, enabled=False):
        pass

    @jtorch.autocast("cpu")
    def f(a):
        return a * 2

    assert jtorch.equal(f(x), x * 2)
    mine, theirs = _both(lambda t: t.autocast("cuda").__class__.__name__)
    assert mine == theirs  # a warning that CUDA is unavailable, then disabled
    mine, theirs = _both(lambda t: t.autocast("tpu"))
    assert mine[0] == theirs[0] == "RuntimeError"


def _scaler_run(lib):
    """A few steps with a CPU GradScaler, one of them with an inf gradient."""
    lib.manual_seed(0)
    w = lib.nn.Parameter(lib.ones(3))
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=8.0, growth_interval=2)
    scales = []
    for step in range(5):
        opt.zero_grad()
        loss = (w * lib.tensor([1.0, 2.0, float("inf") if step == 2 else 3.0])).sum()
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    return scales, w.detach().numpy().tolist()


def test_grad_scaler_on_the_cpu_follows_torch():
    mine, theirs = _scaler_run(jtorch), _scaler_run(torch)
    assert mine[0] == theirs[0]
    np.testing.assert_allclose(mine[1], theirs[1], rtol=1e-6)


# -- legacy typed constructors, device flags ------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda t: isinstance(t.ones(2), t.FloatTensor), lambda t: isinstance(t.ones(2), t.DoubleTensor),
    lambda t: isinstance(t.ones(2, dtype=t.int64), t.LongTensor),
    lambda t: isinstance(3, t.FloatTensor),
    lambda t: tuple(t.FloatTensor(2, 3).shape), lambda t: t.LongTensor([1, 2]).tolist(),
    lambda t: str(t.FloatTensor([1, 2]).dtype), lambda t: tuple(t.DoubleTensor().shape),
    lambda t: str(t.BoolTensor([1, 0]).dtype), lambda t: str(t.IntTensor(t.ones(2, dtype=t.int32)).dtype),
    lambda t: t.FloatTensor(t.ones(2, dtype=t.float64)),
    lambda t: t.ones(2).cuda(),
    lambda t: [getattr(t.ones(2), n) for n in ("is_xpu", "is_mps", "is_mkldnn", "is_quantized",
                                                 "is_sparse", "is_nested", "is_ipu", "is_cuda")],
    lambda t: (t.ones(2).is_pinned(), t.ones(2).is_shared()),
])
def test_legacy_constructors_and_device_flags_follow_torch(call):
    mine, theirs = _both(call)
    if isinstance(theirs[0], str) and theirs[0] == "TypeError":
        assert mine[0] == "TypeError"  # torch words it in TensorOptions
        return
    assert mine == theirs


def test_set_default_tensor_type_sets_the_default_dtype():
    for lib in (jtorch, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            lib.set_default_tensor_type("torch.DoubleTensor")
        try:
            assert lib.get_default_dtype() is lib.float64 and len(w) == 1
            assert lib.tensor([1.0]).dtype is lib.float64
        finally:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                lib.set_default_tensor_type(lib.FloatTensor)
        assert lib.get_default_dtype() is lib.float32
    x = jtorch.ones(2)
    assert x.share_memory_() is x


def test_checkpoint_gives_the_segment_s_results_and_gradients():
    from jtorch.utils.checkpoint import checkpoint, checkpoint_sequential

    jtorch.manual_seed(0)
    net = jtorch.nn.Sequential(jtorch.nn.Linear(3, 4), jtorch.nn.Tanh(),
                               jtorch.nn.Linear(4, 2)).double()
    res = []
    for ckpt in (True, False):
        x = jtorch.from_numpy(np.linspace(-1, 1, 6).reshape(2, 3)).requires_grad_()
        if ckpt:
            y = checkpoint(lambda a: net(a).exp(), x, use_reentrant=False)
            z = checkpoint_sequential(net, 2, x, use_reentrant=False)
        else:
            y, z = net(x).exp(), net(x)
        (y.sum() + z.sum()).backward()
        res.append([y.detach().numpy(), z.detach().numpy(), x.grad.numpy()] +
                   [p.grad.numpy().copy() for p in net.parameters()])
        net.zero_grad()
    for a, b in zip(*res):
        np.testing.assert_array_equal(a, b)
    mine, theirs = _both(lambda t: __import__(f"{t.__name__}.utils.checkpoint", fromlist=["x"])
                         .checkpoint(lambda a: a * 2, t.ones(2)).tolist())
    assert mine == theirs  # the same result and the same warning without use_reentrant
    mine, theirs = _both(lambda t: __import__(f"{t.__name__}.utils.checkpoint", fromlist=["x"])
                         .checkpoint(lambda a: a, t.ones(2), use_reentrant=True, debug=True))
    assert mine == theirs
