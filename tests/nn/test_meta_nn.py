"""nn on meta tensors: the loss, normalization and optimizer ops (``kernels/defs/loss.py``,
``normalization.py``, ``optim.py``) give on meta exactly the geometry (shape, dtype, strides,
storage offset) the CPU path gives, and torch's meta device gives; they raise the CPU path's
errors and run no kernel. Modules move to meta and back (``Module.to("meta")``,
``to_empty``, construction under ``with jtorch.device("meta")``) as torch's do.

Cases whose path goes through another family's op (reductions, matmul, pooling, random
fills) are skipped, naming that op, while it does not run on meta yet.
"""

from __future__ import annotations

import pathlib
import re
import warnings

import numpy as np
import pytest
import torch

import jtorch
from jtorch import dispatch
from jtorch.kernels.defs import loss as L
from jtorch.kernels.defs import normalization as N
from jtorch.kernels.defs import optim as O
from jtorch.kernels.registry import REGISTRY

F, TF = jtorch.nn.functional, torch.nn.functional
R = np.random.default_rng(0)
MY_OPS = (L.nll_loss_op, L.nll_loss_backward_op, L.nll_loss2d_op,
          L.nll_loss2d_backward_op, L.binary_cross_entropy_op, N.native_layer_norm_op,
          O.sgd_op, O.adam_op, O.rmsprop_op, O.adagrad_op)


# -- helpers ---------------------------------------------------------------------------------

def to_meta(t: jtorch.Tensor) -> jtorch.Tensor:
    """A meta tensor with ``t``'s shape, dtype, strides, offset and requires_grad."""
    assert t.storage_offset() == 0
    m = jtorch.empty_strided(tuple(t.shape), t.stride(), dtype=t.dtype, device="meta")
    return m.requires_grad_(t.requires_grad)


def geometry(x):
    """What a meta result must share with the CPU result (nested for tuples): shape, dtype,
    and for results of more than one element strides and storage offset (NumPy gives empty
    arrays zero strides, torch row-major ones; no layout depends on them)."""
    if isinstance(x, (tuple, list)):
        return tuple(geometry(y) for y in x)
    if isinstance(x, (jtorch.Tensor, torch.Tensor)):
        if x.numel() <= 1:
            return (tuple(x.shape), str(x.dtype))
        return (tuple(x.shape), str(x.dtype), x.stride(), x.storage_offset())
    return x


def on_both(fn, *tensors):
    """``fn`` on the CPU tensors and on meta copies of them: the two results' geometry, and
    that every meta result is on meta."""
    cpu = fn(*tensors)
    metas = [to_meta(t) if isinstance(t, jtorch.Tensor) else t for t in tensors]
    meta = fn(*metas)
    assert geometry(meta) == geometry(cpu)
    for m in meta if isinstance(meta, tuple) else (meta,):
        assert not isinstance(m, jtorch.Tensor) or m.is_meta
    return cpu, meta, metas


def errors_alike(fn, *tensors):
    """``fn`` raises on meta copies of the inputs what it raises on the CPU tensors."""
    with pytest.raises(Exception) as cpu:
        fn(*tensors)
    metas = [to_meta(t) if isinstance(t, jtorch.Tensor) else t for t in tensors]
    with pytest.raises(Exception) as meta:
        fn(*metas)
    assert type(meta.value) is type(cpu.value)
    assert str(meta.value) == str(cpu.value)


def requires(what: str, fn) -> None:
    """Skip the test while ``fn`` (another family's op on meta tensors) does not run."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"{what} does not run on meta yet: {type(e).__name__}: {str(e)[:80]}")


def meta_empty(*shape, dtype=jtorch.float32):
    return jtorch.empty(*shape, dtype=dtype, device="meta")


def requires_kdim_views(ishape) -> None:
    """nll_loss over 3-d and 5-d inputs views them as (N, C, 1, -1) for the 2-d op."""
    if len(ishape) in (3, 5):
        requires("view", lambda: meta_empty(2, 3, 0).contiguous().view(2, 3, 0, 0))
        requires("view", lambda: meta_empty(2, 3, 4).contiguous().view(2, 3, 1, -1))


@pytest.fixture
def no_cpu_kernels(monkeypatch):
    """Every op of this family fails if its CPU kernel runs."""

    def boom(*args, **kwargs):
        raise AssertionError("a CPU kernel ran on meta tensors")

    for op in MY_OPS:
        monkeypatch.setitem(op.kernels, "cpu", boom)


def randn(*shape, dtype=np.float32):
    return jtorch.from_numpy(R.standard_normal(shape).astype(dtype))


def targets(shape, n_classes, ignore=None):
    t = R.integers(0, n_classes, shape)
    if ignore is not None and t.size:
        t.reshape(-1)[0] = ignore
    return jtorch.from_numpy(t)


# -- the records ------------------------------------------------------------------------------

def test_ops_are_records_with_meta_rules_and_cpu_kernels():
    names = {"nll_loss", "nll_loss_backward", "nll_loss2d", "nll_loss2d_backward",
             "binary_cross_entropy", "native_layer_norm", "_fused_sgd_", "_fused_adam_",
             "_fused_rmsprop_", "_fused_adagrad_"}
    for name in names:
        op = REGISTRY[name]
        assert op.meta is not None and "cpu" in op.kernels, name
    assert L.nll_loss_op.pair is L.nll_loss_backward_op
    assert L.nll_loss2d_backward_op.pair is L.nll_loss2d_op


def test_nn_and_optim_define_no_opdefs():
    """OpDefs live in kernels/defs; nn/ and optim/ only call them."""
    root = pathlib.Path(jtorch.__file__).parent
    pat = re.compile(r"\b(extern|register|registry\.(unary|binary|ternary|reduction|op))\(")
    for path in [*root.glob("nn/**/*.py"), *root.glob("optim/*.py")]:
        assert not pat.search(path.read_text()), path


# -- nll_loss / cross_entropy ---------------------------------------------------------------

NLL_CASES = [  # input shape, target shape
    ((5,), ()), ((4, 5), (4,)), ((0, 5), (0,)), ((3, 5, 4), (3, 4)), ((2, 5, 3, 4), (2, 3, 4)),
    ((2, 5, 2, 3, 2), (2, 2, 3, 2)), ((2, 5, 0), (2, 0)),
]


@pytest.mark.parametrize("shapes", NLL_CASES, ids=str)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_meta_matches_cpu(shapes, reduction, weighted):
    ishape, tshape = shapes
    requires_kdim_views(ishape)
    n_classes = 5
    x, t = randn(*ishape), targets(tshape, n_classes, ignore=-100)
    w = jtorch.from_numpy(R.uniform(0.5, 2, n_classes).astype(np.float32)) if weighted else None
    fn = (lambda x, t, w: F.nll_loss(x, t, w, reduction=reduction)) if weighted else \
        (lambda x, t: F.nll_loss(x, t, reduction=reduction))
    on_both(fn, *((x, t, w) if weighted else (x, t)))


@pytest.mark.parametrize("shapes", NLL_CASES[:5], ids=str)
def test_nll_loss_meta_matches_torch_meta(shapes):
    ishape, tshape = shapes
    requires_kdim_views(ishape)
    for reduction in ("mean", "none"):
        j = F.nll_loss(meta_empty(*ishape), meta_empty(*tshape, dtype=jtorch.int64),
                       reduction=reduction)
        t = TF.nll_loss(torch.empty(ishape, device="meta"),
                        torch.empty(tshape, dtype=torch.int64, device="meta"), reduction=reduction)
        assert geometry(j) == geometry(t) and j.is_meta


def test_nll_loss_op_matches_aten():
    x, t = randn(4, 5), targets((4,), 5, ignore=-100)
    w = jtorch.from_numpy(R.uniform(0.5, 2, 5).astype(np.float32))
    for reduction, code in (("none", 0), ("mean", 1), ("sum", 2)):
        cpu = dispatch.call(L.nll_loss_op, x, t, w, reduction=reduction, ignore_index=-100)
        ref, _ = torch.ops.aten.nll_loss_forward(torch.from_numpy(x.numpy()),
                                                 torch.from_numpy(t.numpy()),
                                                 torch.from_numpy(w.numpy()), code, -100)
        assert geometry(cpu) == geometry(ref)
        np.testing.assert_allclose(cpu.numpy(), ref.numpy(), rtol=1e-6)
        meta = dispatch.call(L.nll_loss_op, to_meta(x), to_meta(t), to_meta(w),
                             reduction=reduction, ignore_index=-100)
        assert geometry(meta) == geometry(cpu)


def test_nll_loss_mean_gradient_recounts_the_target_weights():
    """The backward kernel divides by the summed weight of the counted targets."""
    x, t = randn(6, 5).double(), targets((6,), 5, ignore=2)
    w = jtorch.from_numpy(R.uniform(0.5, 2, 5))
    for ignore in (2, -100):
        jx = x.clone().requires_grad_()
        F.nll_loss(jx, t, w, ignore_index=ignore).backward()
        tx = torch.from_numpy(x.numpy()).requires_grad_()
        TF.nll_loss(tx, torch.from_numpy(t.numpy()), torch.from_numpy(w.numpy()),
                    ignore_index=ignore).backward()
        np.testing.assert_allclose(jx.grad.numpy(), tx.grad.numpy(), rtol=1e-12)


def test_nll_loss_non_contiguous_and_float64_and_float16():
    x = randn(5, 4).t()
    on_both(lambda x, t: F.nll_loss(x, t), x, targets((4,), 5))
    on_both(lambda x, t: F.nll_loss(x, t, reduction="none"), randn(4, 5, dtype=np.float64),
            targets((4,), 5))
    on_both(lambda x, t: F.nll_loss(x, t, reduction="none"),
            randn(2, 5, 3, 1, dtype=np.float16), targets((2, 3, 1), 5))


@pytest.mark.parametrize("shapes", [((4, 5), (4,)), ((2, 5, 3, 4), (2, 3, 4)),
                                    ((3, 5, 4), (3, 4)), ((5,), ())], ids=str)
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_nll_loss_backward_on_meta_gives_meta_gradients(shapes, reduction):
    ishape, tshape = shapes
    requires_kdim_views(ishape)
    x, t = randn(*ishape).requires_grad_(), targets(tshape, 5)
    loss = F.nll_loss(x, t, reduction=reduction)
    loss.backward(jtorch.ones_like(loss))
    mx = to_meta(x)
    loss = F.nll_loss(mx, to_meta(t), reduction=reduction)
    loss.backward(jtorch.ones_like(loss))
    assert mx.grad.is_meta and geometry(mx.grad) == geometry(x.grad)
    ref = TF.nll_loss(torch.empty(ishape, device="meta", requires_grad=True),
                      torch.empty(tshape, dtype=torch.int64, device="meta"), reduction=reduction)
    assert type(loss.grad_fn).__name__ == type(ref.grad_fn).__name__


def test_nll_loss_runs_no_kernel_on_meta(no_cpu_kernels):
    x = meta_empty(4, 5).requires_grad_()
    loss = F.nll_loss(x, meta_empty(4, dtype=jtorch.int64))
    loss.backward()
    assert x.grad.is_meta and x.grad.shape == (4, 5)
    F.nll_loss(meta_empty(2, 5, 3, 3), meta_empty(2, 3, 3, dtype=jtorch.int64), reduction="none")


NLL_ERRORS = [
    (lambda: (randn(3, 4), targets((3,), 4).int()), {}),
    (lambda: (randn(3, 4), jtorch.tensor([0.0, 1, 2])), {}),
    (lambda: (randn(3, 4), targets((2,), 4)), {}),
    (lambda: (randn(3, 4), targets((3, 2), 4)), {}),
    (lambda: (randn(3, 4, 5), targets((3,), 4)), {}),
    (lambda: (randn(3, 4, 5, 6), targets((3, 5, 7), 4)), {}),
    (lambda: (randn(3, 4, 5, 6), targets((3, 5), 4)), {}),
    (lambda: (randn(3, 4, 5, 6, 2), targets((3, 5, 6, 3), 4)), {}),
    (lambda: (jtorch.tensor(1.0), jtorch.tensor(0)), {}),
    (lambda: (randn(3, 4), targets((3,), 4)), {"reduction": "foo"}),
    (lambda: (jtorch.zeros(3, 4, dtype=jtorch.int64), targets((3,), 4)), {}),
    (lambda: (jtorch.zeros(3, 4, 2, 2, dtype=jtorch.int64), targets((3, 2, 2), 4)), {}),
]


@pytest.mark.parametrize("case", range(len(NLL_ERRORS)))
def test_nll_loss_errors_on_meta_are_the_cpu_errors(case):
    make, kw = NLL_ERRORS[case]
    errors_alike(lambda x, t: F.nll_loss(x, t, **kw), *make())


@pytest.mark.parametrize("weight", [jtorch.ones(3), jtorch.ones(4, dtype=jtorch.float64),
                                    jtorch.ones(2, 2)], ids=["size", "dtype", "dims"])
def test_nll_loss_weight_errors_on_meta(weight):
    errors_alike(lambda x, t, w: F.nll_loss(x, t, w), randn(3, 4), targets((3,), 4), weight)


def test_nll_loss_mixed_devices_raise():
    with pytest.raises(RuntimeError, match="is not on the expected device"):
        F.nll_loss(meta_empty(3, 4), targets((3,), 4))


def test_cross_entropy_on_meta():
    requires("log_softmax", lambda: F.log_softmax(meta_empty(2, 3), 1))
    requires("to(dtype)", lambda: meta_empty(2, dtype=jtorch.bool).to(jtorch.float32))
    requires_kdim_views((3, 4, 5))
    for ishape, tshape in NLL_CASES:
        x, t = randn(*ishape), targets(tshape, 5)
        on_both(lambda x, t: F.cross_entropy(x, t, reduction="none"), x, t)
        on_both(lambda x, t: F.cross_entropy(x, t, label_smoothing=0.1), x, t)
    on_both(lambda x, p: F.cross_entropy(x, p), randn(4, 5), randn(4, 5).softmax(1))


# -- binary_cross_entropy -----------------------------------------------------------------------

def _probs(*shape):
    return jtorch.from_numpy(R.uniform(0.05, 0.95, shape).astype(np.float32))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "0-d", "0-size", "sliced"])
def test_binary_cross_entropy_meta_matches_cpu_and_torch(reduction, layout):
    x, t = {"contiguous": (_probs(3, 4), _probs(3, 4)),
            "transposed": (_probs(4, 3).t(), _probs(3, 4)),
            "0-d": (_probs(), _probs()),
            "0-size": (_probs(0, 4), _probs(0, 4)),
            "sliced": (_probs(3, 8)[:, ::2], _probs(3, 4))}[layout]
    w = _probs(4) if x.dim() == 2 else None
    cpu, _, _ = on_both(lambda x, t: F.binary_cross_entropy(x, t, reduction=reduction), x, t)
    ref = TF.binary_cross_entropy(torch.from_numpy(x.numpy()), torch.from_numpy(t.numpy()),
                                  reduction=reduction)
    assert geometry(cpu) == geometry(ref)
    np.testing.assert_allclose(cpu.numpy(), ref.numpy(), rtol=1e-5, atol=1e-6)
    if w is not None:
        on_both(lambda x, t, w: F.binary_cross_entropy(x, t, w, reduction=reduction), x, t, w)


def test_binary_cross_entropy_gradients_and_node_name():
    x = _probs(3, 4).double().requires_grad_()
    t = _probs(3, 4).double()
    loss = F.binary_cross_entropy(x, t)
    assert type(loss.grad_fn).__name__ == "BinaryCrossEntropyBackward0"
    tx = torch.from_numpy(x.detach().numpy()).requires_grad_()
    ref = TF.binary_cross_entropy(tx, torch.from_numpy(t.numpy()))
    loss.backward()
    ref.backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-10)
    mx = to_meta(x).requires_grad_()
    F.binary_cross_entropy(mx, to_meta(t), reduction="sum").backward()
    assert mx.grad.is_meta and geometry(mx.grad) == geometry(x.grad)


@pytest.mark.parametrize("case", ["long", "target dtype", "size"])
def test_binary_cross_entropy_errors_on_meta(case):
    x, t = {"long": (jtorch.zeros(3, dtype=jtorch.int64), jtorch.zeros(3, dtype=jtorch.int64)),
            "target dtype": (_probs(3), _probs(3).double()),
            "size": (_probs(3), _probs(4))}[case]
    errors_alike(lambda x, t: F.binary_cross_entropy(x, t), x, t)
    with pytest.raises(Exception) as ours:
        F.binary_cross_entropy(x, t)
    with pytest.raises(Exception) as theirs:
        TF.binary_cross_entropy(torch.from_numpy(x.numpy()), torch.from_numpy(t.numpy()))
    assert type(ours.value) is type(theirs.value) and str(ours.value) == str(theirs.value)


def test_binary_cross_entropy_range_check_is_data():
    """0 <= input <= 1 is checked by the kernel (CPU); meta tensors have no values to check."""
    bad = jtorch.tensor([0.5, 1.5])
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(bad, jtorch.tensor([0.0, 1.0]))
    assert F.binary_cross_entropy(to_meta(bad), meta_empty(2)).is_meta


def test_binary_cross_entropy_runs_no_kernel_on_meta(no_cpu_kernels):
    assert F.binary_cross_entropy(meta_empty(3), meta_empty(3), reduction="none").is_meta


# -- layer_norm -------------------------------------------------------------------------------

LN_CASES = [  # input shape, normalized shape, transpose the input
    ((3, 4), (4,), False), ((2, 3, 4), (3, 4), False), ((4, 3), (3,), True),
    ((2, 3, 4), (4,), True), ((5,), (5,), False),
]


@pytest.mark.parametrize("case", LN_CASES, ids=str)
@pytest.mark.parametrize("affine", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_meta_matches_cpu_and_torch(case, affine, dtype):
    ishape, nshape, transpose = case
    x = randn(*ishape, dtype=dtype)
    if transpose:
        x = randn(*ishape[::-1], dtype=dtype).permute(*range(len(ishape) - 1, -1, -1))
    wb = (randn(*nshape, dtype=dtype), randn(*nshape, dtype=dtype)) if affine else ()
    fn = lambda x, *wb: F.layer_norm(x, nshape, *wb)  # noqa: E731
    cpu, _, _ = on_both(fn, x, *wb)
    ref = TF.layer_norm(torch.from_numpy(x.numpy()), nshape,
                        *[torch.from_numpy(t.numpy()) for t in wb])
    assert geometry(cpu) == geometry(ref)
    tm = TF.layer_norm(torch.empty_strided(tuple(x.shape), x.stride(), dtype=ref.dtype,
                                           device="meta"), nshape)
    assert geometry(tm) == geometry(cpu)
    stats = lambda x, *wb: dispatch.call(N.native_layer_norm_op, x, *(wb or (None, None)),  # noqa: E731
                                         normalized_shape=list(nshape), eps=1e-5)
    cpu_stats, _, _ = on_both(stats, x, *wb)
    ref_stats = torch.ops.aten.native_layer_norm(torch.from_numpy(x.numpy()), nshape, None, None,
                                                 1e-5)
    assert geometry(cpu_stats) == geometry(ref_stats)


@pytest.mark.parametrize("case", ["empty shape", "weight shape", "input shape", "bias shape"])
def test_layer_norm_errors_on_meta(case):
    x, shape, w, b = {"empty shape": (randn(3, 4), [], None, None),
                      "weight shape": (randn(3, 4), [4], randn(3), None),
                      "input shape": (randn(3, 4), [3], None, None),
                      "bias shape": (randn(3, 4), [4], randn(4), randn(2))}[case]
    errors_alike(lambda x, *wb: F.layer_norm(x, shape, *wb), x, *[t for t in (w, b)
                                                                   if t is not None])


def test_layer_norm_runs_no_kernel_on_meta(no_cpu_kernels):
    assert F.layer_norm(meta_empty(2, 3), (3,), meta_empty(3), meta_empty(3)).is_meta


def test_layer_norm_backward_on_meta():
    requires("mean", lambda: meta_empty(2, 3).mean(-1, keepdim=True))
    x = randn(2, 3, 4).requires_grad_()
    w, b = randn(4).requires_grad_(), randn(4).requires_grad_()
    F.layer_norm(x, (4,), w, b).sum().backward()
    mx, mw, mb = (to_meta(t).requires_grad_() for t in (x, w, b))
    F.layer_norm(mx, (4,), mw, mb).sum().backward()
    for m, c in ((mx, x), (mw, w), (mb, b)):
        assert m.grad.is_meta and geometry(m.grad) == geometry(c.grad)


def test_normalizations_on_meta():
    requires("var_mean", lambda: jtorch.var_mean(meta_empty(2, 3), 1))
    x = randn(4, 6, 5)
    on_both(lambda x: F.group_norm(x, 3), x)
    on_both(lambda x: F.layer_norm(x, (5,)), x.half())
    on_both(lambda x: F.rms_norm(x, (5,)), x)
    on_both(lambda x, m, v: F.batch_norm(x, m, v, training=True), x, jtorch.zeros(6),
            jtorch.ones(6))
    on_both(lambda x: F.instance_norm(x), x)


# -- attention, dropout -------------------------------------------------------------------------

def test_scaled_dot_product_attention_on_meta():
    requires("matmul", lambda: meta_empty(2, 3, 4) @ meta_empty(2, 4, 3))
    requires("softmax", lambda: meta_empty(2, 3).softmax(-1))
    q, k, v = randn(2, 3, 5, 8), randn(2, 3, 6, 8), randn(2, 3, 6, 4)
    on_both(lambda q, k, v: F.scaled_dot_product_attention(q, k, v), q, k, v)
    on_both(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v)
    mask = jtorch.from_numpy(R.uniform(size=(5, 6)) > 0.5)
    on_both(lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), q, k, v,
            mask)
    t = TF.scaled_dot_product_attention(*(torch.empty(s, device="meta") for s in
                                          ((2, 3, 5, 8), (2, 3, 6, 8), (2, 3, 6, 4))))
    j = F.scaled_dot_product_attention(to_meta(q), to_meta(k), to_meta(v))
    assert geometry(j) == geometry(t)


def test_dropout_on_meta():
    requires("bernoulli_", lambda: meta_empty(3).bernoulli_(0.5))
    x = randn(2, 3, 4, 5)
    for fn in (F.dropout, F.dropout1d, F.dropout2d, F.alpha_dropout):
        if fn is F.dropout1d:
            x = randn(2, 3, 4)
        on_both(lambda x: fn(x, 0.5, True), x)
    on_both(lambda x: F.dropout(x, 0.5, False), x)


# -- optimizers -------------------------------------------------------------------------------

OPTIMIZERS = [
    (jtorch.optim.SGD, {"lr": 0.1}), (jtorch.optim.SGD, {"lr": 0.1, "momentum": 0.9}),
    (jtorch.optim.SGD, {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.1}),
    (jtorch.optim.Adam, {"lr": 0.1}), (jtorch.optim.Adam, {"lr": 0.1, "amsgrad": True}),
    (jtorch.optim.AdamW, {"lr": 0.1}), (jtorch.optim.RMSprop, {"lr": 0.1}),
    (jtorch.optim.RMSprop, {"lr": 0.1, "centered": True, "momentum": 0.5}),
    (jtorch.optim.Adagrad, {"lr": 0.1}),
]


def _params(device: str) -> list:
    ps = []
    for shape, stride in (((3, 4), None), ((4, 3), (1, 4)), ((5,), None), ((), None)):
        t = jtorch.empty_strided(shape, stride or jtorch.empty(shape).stride(), device=device)
        if device == "cpu":
            t.copy_(jtorch.randn(shape))
        p = jtorch.nn.Parameter(t)
        g = jtorch.empty_strided(shape, t.stride(), device=device)
        p.grad = g.copy_(jtorch.randn(shape)) if device == "cpu" else g
        ps.append(p)
    return ps


@pytest.mark.parametrize("case", range(len(OPTIMIZERS)),
                         ids=[f"{c.__name__}{kw}" for c, kw in OPTIMIZERS])
def test_optimizer_step_on_meta_parameters(case):
    cls, kw = OPTIMIZERS[case]
    states = {}
    for device in ("cpu", "meta"):
        ps = _params(device)
        opt = cls(ps, **kw)
        versions = [p._version for p in ps]
        opt.step()
        opt.step()
        states[device] = ([geometry(p) for p in ps], [p._version - v for p, v in zip(ps, versions)],
                          [{k: (v.device.type, geometry(v)) for k, v in opt.state[p].items()}
                           for p in ps])
        assert all(p.device.type == device for p in ps)
    cpu, meta = states["cpu"], states["meta"]
    assert meta[0] == cpu[0] and meta[1] == cpu[1]
    for c, m in zip(cpu[2], meta[2]):
        assert c.keys() == m.keys()
        for k in c:
            dev = "cpu" if k == "step" else "meta"  # torch keeps the step count on the CPU
            assert m[k] == (dev, c[k][1]), k


def test_optimizer_step_runs_no_kernel_on_meta(no_cpu_kernels):
    ps = _params("meta")
    jtorch.optim.Adam(ps, lr=0.1).step()
    assert all(p.is_meta for p in ps)


def test_fused_update_rejects_mixed_devices():
    p = jtorch.nn.Parameter(meta_empty(3))
    with pytest.raises(RuntimeError, match="Tensor on device cpu is not on the expected device "
                                           "meta!"):
        dispatch.call(O.sgd_op, p, jtorch.zeros(3), None,
                      scalars=(0.1, 0.0, 0.0, 1.0, False, False, False))


def test_fused_update_bumps_versions_of_written_tensors():
    p = jtorch.nn.Parameter(jtorch.ones(3))
    g, m, v = jtorch.ones(3), jtorch.zeros(3), jtorch.zeros(3)
    before = [t._version for t in (p, g, m, v)]
    with jtorch.no_grad():
        res = dispatch.call(O.adam_op, p, g, m, v, None, scalars=(
            -0.1, 0.1, 1, 0.999, 0.001, 0.001 ** 0.5, 1e-8, False, 0.0, 1, False, False))
    assert res[0] is p and res[1] is m and res[2] is v
    assert [t._version - b for t, b in zip((p, g, m, v), before)] == [1, 0, 1, 1]


# -- modules on meta ----------------------------------------------------------------------------

def _tensor_to_meta_works() -> bool:
    try:
        return jtorch.ones(2).to("meta").is_meta
    except Exception:  # noqa: BLE001
        return False


needs_to_meta = pytest.mark.skipif(not _tensor_to_meta_works(),
                                   reason="Tensor.to('meta') (ops/conversion.py) not on meta yet")


def _net(lib):
    nn = lib.nn
    return nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.ReLU(), nn.Flatten(),
                         nn.Linear(2 * 4 * 4, 3), nn.LayerNorm(3), nn.Embedding(5, 3, padding_idx=0))


def _tensors(m) -> dict:
    return {**dict(m.named_parameters()), **dict(m.named_buffers())}


@needs_to_meta
def test_module_to_meta_and_back_with_to_empty():
    jtorch.manual_seed(0)
    net = _net(jtorch)
    ref = _net(torch)
    old = dict(net.named_parameters())
    net[0].weight.grad = jtorch.ones_like(net[0].weight)
    assert net.to("meta") is net
    ref.to("meta")
    got, want = _tensors(net), _tensors(ref)
    assert list(got) == list(want)
    for name, t in got.items():
        assert t.is_meta and geometry(t) == geometry(want[name]), name
    for name, p in net.named_parameters():  # torch: a new Parameter when the device changes
        assert type(p) is jtorch.nn.Parameter and p is not old[name] and p.requires_grad
    assert net[0].weight.grad.is_meta and net[0].weight.grad.shape == (2, 1, 3, 3)
    net.to_empty(device="cpu")
    ref.to_empty(device="cpu")
    for name, t in _tensors(net).items():
        assert not t.is_meta and geometry(t) == geometry(_tensors(ref)[name]), name


@needs_to_meta
def test_module_to_meta_keeps_strides():
    lin = jtorch.nn.Linear(3, 4)
    lin.weight.data = jtorch.randn(3, 4).t()
    lin.to("meta")
    assert lin.weight.is_meta and lin.weight.stride() == (1, 4)


@needs_to_meta
@pytest.mark.parametrize("how", ["to", "cpu"])
def test_module_from_meta_to_cpu_raises_like_torch(how):
    def run(lib):
        m = lib.nn.Linear(2, 3).to("meta")
        return m.to("cpu") if how == "to" else m.cpu()

    with pytest.raises(NotImplementedError) as theirs:
        run(torch)
    with pytest.raises(NotImplementedError) as ours:
        run(jtorch)
    assert str(ours.value) == str(theirs.value)


def test_meta_model_takes_a_checkpoint_with_assign():
    """The usual meta workflow: build on meta, then load real weights with ``assign=True``."""
    def net(lib):
        return lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))

    with jtorch.device("meta"):
        model = net(jtorch)
    source = net(jtorch)
    model.load_state_dict(source.state_dict(), assign=True)
    for name, t in _tensors(model).items():
        assert not t.is_meta and geometry(t) == geometry(_tensors(source)[name]), name
    assert type(model[0].weight) is jtorch.nn.Parameter and model[0].weight.requires_grad
    x = jtorch.randn(4, 2)
    np.testing.assert_array_equal(model.eval()(x).detach().numpy(),
                                  source.eval()(x).detach().numpy())


def test_module_built_under_meta_device_matches_torch():
    with jtorch.device("meta"):
        net = _net(jtorch)
    with torch.device("meta"):
        ref = _net(torch)
    got, want = _tensors(net), _tensors(ref)
    assert list(got) == list(want)
    for name, t in got.items():
        assert t.is_meta and geometry(t) == geometry(want[name]), name
        assert isinstance(t, jtorch.nn.Parameter) == isinstance(want[name], torch.nn.Parameter)
    assert net.to_empty(device="cpu") is net
    for name, t in _tensors(net).items():
        assert t.device.type == "cpu" and geometry(t) == geometry(want[name]), name


def test_to_empty_on_the_same_device_keeps_the_parameters():
    lin = jtorch.nn.Linear(3, 4)
    w = lin.weight
    lin.to_empty(device="cpu")
    ref = torch.nn.Linear(3, 4)
    tw = ref.weight
    ref.to_empty(device="cpu")
    assert (lin.weight is w) == (ref.weight is tw)
    assert geometry(lin.weight) == geometry(ref.weight)


def test_module_to_parses_torch_arguments():
    lin = jtorch.nn.Linear(2, 3)
    lin.to(jtorch.float64)
    assert lin.weight.dtype is jtorch.float64
    lin.to(device="cpu", dtype=jtorch.float32, non_blocking=True)
    assert lin.weight.dtype is jtorch.float32
    lin.to(jtorch.zeros(1, dtype=jtorch.float64))
    assert lin.weight.dtype is jtorch.float64
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        lin.to(jtorch.int32)
    with pytest.raises(TypeError):
        lin.to(devices="cpu")


def test_init_functions_leave_meta_tensors_alone():
    init = jtorch.nn.init
    t = meta_empty(4, 6)
    for fn in (init.uniform_, init.normal_, init.trunc_normal_, init.zeros_, init.ones_,
               init.eye_, init.xavier_uniform_, init.xavier_normal_, init.kaiming_uniform_,
               init.kaiming_normal_, init.orthogonal_, lambda t: init.constant_(t, 2.0),
               lambda t: init.sparse_(t, 0.5)):
        assert fn(t) is t and t.is_meta
    assert init.dirac_(meta_empty(2, 2, 3)).is_meta
    with pytest.raises(ValueError, match="Fan in and fan out"):
        init.xavier_uniform_(meta_empty(3))


def test_modules_forward_on_meta_with_own_compositions():
    """Modules whose forward is this family's code on top of pointwise ops."""
    with jtorch.device("meta"):
        ln = jtorch.nn.LayerNorm(4)
        x = jtorch.empty(2, 3, 4)
    y = ln(x)
    assert y.is_meta and geometry(y) == ((2, 3, 4), "torch.float32", (12, 4, 1), 0)
    loss = jtorch.nn.NLLLoss(reduction="none")(meta_empty(3, 5), meta_empty(3, dtype=jtorch.int64))
    assert loss.is_meta and loss.shape == (3,)


# -- the demo CNN -------------------------------------------------------------------------------

class _LeNet(jtorch.nn.Module):  # examples/demo.py's model
    def __init__(self) -> None:
        super().__init__()
        nn = jtorch.nn
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(32 * 2 * 2, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = jtorch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


def test_demo_cnn_trains_on_meta():
    requires("max_pool2d", lambda: F.max_pool2d(meta_empty(1, 1, 4, 4), 2))
    requires("linear", lambda: F.linear(meta_empty(2, 3), meta_empty(4, 3), meta_empty(4)))
    requires("log_softmax", lambda: F.log_softmax(meta_empty(2, 3), 1))
    with jtorch.device("meta"):
        model = _LeNet()
        x = jtorch.empty(64, 1, 8, 8)
        y = jtorch.empty(64, dtype=jtorch.int64)
    opt = jtorch.optim.Adam(model.parameters(), lr=1e-2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    assert loss.is_meta and loss.shape == ()
    for p in model.parameters():
        assert p.is_meta and p.grad.is_meta and p.grad.shape == p.shape
