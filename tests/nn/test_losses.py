"""nn.functional losses and the loss modules against torch: values and gradients for every
option, reductions, torch's errors and warnings, module reprs and buffers."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

import jtorch

F, TF = jtorch.nn.functional, torch.nn.functional
R = np.random.default_rng(0)


def _np(t):
    return t.detach().numpy()


def _conv(lib, v, grad: bool):
    if isinstance(v, np.ndarray):
        t = lib.from_numpy(v.copy())
        return t.requires_grad_(grad and v.dtype.kind == "f")
    return v


def compare(name: str, args: tuple, kw: dict | None = None, rtol=1e-7, atol=1e-9,
            grad_args: tuple | None = None):
    """Run ``name`` in both libraries on copies of the NumPy arrays in ``args`` (floating ones
    require grad unless ``grad_args`` says which) and in ``kw`` (constants); compare outputs and
    input gradients."""
    kw = kw or {}
    grad_args = grad_args if grad_args is not None else tuple(range(len(args)))
    res = []
    for lib, fns in ((jtorch, F), (torch, TF)):
        xs = [_conv(lib, a, i in grad_args) for i, a in enumerate(args)]
        k = {n: _conv(lib, v, False) for n, v in kw.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = getattr(fns, name)(*xs, **k)
        res.append((xs, y))
    (jx, jy), (tx, ty) = res
    assert tuple(jy.shape) == tuple(ty.shape)
    assert str(jy.dtype) == str(ty.dtype)
    np.testing.assert_allclose(_np(jy), _np(ty), rtol=rtol, atol=atol)
    if not ty.requires_grad:
        return
    g = R.standard_normal(tuple(ty.shape)).astype(_np(ty).dtype)
    jy.backward(jtorch.from_numpy(g.copy()))
    ty.backward(torch.from_numpy(g.copy()))
    for a, b in zip(jx, tx):
        if isinstance(b, torch.Tensor) and b.requires_grad:
            if b.grad is None:  # used only in comparisons (targets of the margin losses)
                assert a.grad is None
                continue
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol)


def randn(*shape, dtype=np.float64):
    return R.standard_normal(shape).astype(dtype)


def rand(*shape, dtype=np.float64):
    return R.random(shape).astype(dtype)


def ints(high, *shape):
    return R.integers(0, high, shape).astype(np.int64)


REDS = ["mean", "sum", "none"]


# -- class-index losses ------------------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_2d(reduction, weighted):
    t = np.array([0, 4, 2, -100, 1])
    kw = {"reduction": reduction, "weight": rand(5) + 0.1 if weighted else None}
    compare("cross_entropy", (randn(5, 5), t), kw)
    compare("nll_loss", (randn(5, 5), t), kw)


@pytest.mark.parametrize("reduction", REDS)
def test_cross_entropy_kdim(reduction):
    x = randn(2, 3, 4, 2)
    t = ints(3, 2, 4, 2)
    t[0, 1, 1] = 1
    kw = {"reduction": reduction, "weight": rand(3) + 0.1, "ignore_index": 1}
    compare("cross_entropy", (x, t), kw)
    compare("cross_entropy", (randn(2, 3, 4), ints(3, 2, 4)), {"reduction": reduction})
    compare("cross_entropy", (randn(2, 3, 2, 2, 2), ints(3, 2, 2, 2, 2)), {"reduction": reduction})


@pytest.mark.parametrize("reduction", REDS)
def test_cross_entropy_unbatched(reduction):
    compare("cross_entropy", (randn(4), np.array(2)), {"reduction": reduction})
    compare("nll_loss", (randn(4), np.array(3)), {"reduction": reduction, "weight": rand(4)})


@pytest.mark.parametrize("reduction", REDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_label_smoothing(reduction, weighted):
    t = np.array([0, 4, 2, -100, 1, 3])
    kw = {"reduction": reduction, "label_smoothing": 0.15,
          "weight": rand(5) + 0.1 if weighted else None}
    compare("cross_entropy", (randn(6, 5), t), kw)
    x, tk = randn(2, 3, 4), ints(3, 2, 4)
    tk[1, 2] = -100
    compare("cross_entropy", (x, tk), kw | {"weight": rand(3) if weighted else None})


@pytest.mark.parametrize("reduction", REDS)
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_probabilities(reduction, weighted):
    p = rand(4, 5)
    p /= p.sum(1, keepdims=True)
    kw = {"reduction": reduction, "weight": rand(5) if weighted else None}
    compare("cross_entropy", (randn(4, 5), p), kw)
    compare("cross_entropy", (randn(4, 5), p), kw | {"label_smoothing": 0.3})
    compare("cross_entropy", (randn(2, 5, 3), rand(2, 5, 3)), kw)
    compare("cross_entropy", (randn(5), rand(5)), kw)


def test_cross_entropy_float32_and_edge_cases():
    x = randn(8, 10, dtype=np.float32)
    compare("cross_entropy", (x, ints(10, 8)), rtol=1e-5, atol=1e-6)
    compare("cross_entropy", (x, ints(10, 8)), {"label_smoothing": 0.1}, rtol=1e-5, atol=1e-6)
    # every target ignored: 0 / 0 in 'mean', 0 in 'sum'
    compare("nll_loss", (randn(3, 4), np.full(3, -100)))
    compare("nll_loss", (randn(3, 4), np.full(3, -100)), {"reduction": "sum"})
    compare("cross_entropy", (randn(3, 4), np.full(3, 5)), {"ignore_index": 5})
    compare("cross_entropy", (randn(0, 4), np.zeros(0, np.int64)))
    compare("cross_entropy", (randn(0, 4), randn(0, 4)))
    compare("nll_loss", (randn(3, 4), np.array([0, 1, 2], np.uint8)))
    # large logits stay finite through log_softmax
    compare("cross_entropy", (np.array([[1000.0, -1000.0, 0.0]]), np.array([1])))


def test_cross_entropy_grad_fn_and_legacy_args():
    x = jtorch.randn(3, 4, requires_grad=True)
    assert F.cross_entropy(x, jtorch.tensor([0, 1, 2])).requires_grad
    with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
        compare_legacy = F.nll_loss(x, jtorch.tensor([0, 1, 2]), size_average=False)
    ref = F.nll_loss(x, jtorch.tensor([0, 1, 2]), reduction="sum")
    assert compare_legacy.item() == ref.item()
    with pytest.warns(UserWarning):
        assert F.mse_loss(x, x, reduce=False).shape == (3, 4)


def _errors(fn, *args, **kw):
    """Call fn(*args) in both libraries; both must raise the same type and message."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            getattr(TF, fn)(*[torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a
                              for a in args],
                            **{k: torch.from_numpy(v) if isinstance(v, np.ndarray) else v
                               for k, v in kw.items()})
    except Exception as e:  # noqa: BLE001
        exc = e
    else:
        raise AssertionError("torch did not raise")
    jargs = [jtorch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a for a in args]
    jkw = {k: jtorch.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(type(exc), match=re.escape(str(exc).split("\n")[0])):
            getattr(F, fn)(*jargs, **jkw)


@pytest.mark.parametrize("case", [
    ("nll_loss", (randn(3, 4), np.array([0, 1, 5])), {}),
    ("nll_loss", (randn(3, 4), np.array([0, -1, 2])), {}),
    ("cross_entropy", (randn(2, 3, 4), np.array([[0, 1, 2, 3], [0, 0, 0, 0]])), {}),
    ("nll_loss", (randn(3, 4), np.array([0, 1, 2], np.int32)), {}),
    ("nll_loss", (randn(3, 4), np.array([0.0, 1, 2])), {}),
    ("nll_loss", (randn(3, 4), np.array([0, 1])), {}),
    ("nll_loss", (randn(3, 4), np.zeros((3, 2), np.int64)), {}),
    ("nll_loss", (randn(3, 4, 5), np.array([0, 1, 2])), {}),
    ("nll_loss", (randn(3, 4, 5, 6), np.zeros((3, 5, 7), np.int64)), {}),
    ("nll_loss", (randn(3, 4, 5, 6), np.zeros((3, 5), np.int64)), {}),
    ("nll_loss", (randn(3, 4, 5, 6, 2), np.zeros((3, 5, 6, 3), np.int64)), {}),
    ("nll_loss", (np.array(1.0), np.array(0)), {}),
    ("nll_loss", (randn(3, 4), np.array([0, 1, 2])), {"weight": np.ones(3)}),
    ("nll_loss", (randn(3, 4), np.array([0, 1, 2])), {"reduction": "foo"}),
    ("nll_loss", (randn(3, 4), np.array([0, 1, 2])), {"weight": np.ones(4, np.float32)}),
    ("cross_entropy", (randn(3, 4), randn(3, 4)), {"ignore_index": 1}),
    ("cross_entropy", (randn(3, 4), np.zeros((3, 4), np.int64)), {}),
    ("cross_entropy", (randn(3, 4), np.array([0, 1, 2])), {"label_smoothing": 1.5}),
    ("cross_entropy", (randn(3, 4), randn(3, 4)), {"label_smoothing": 1.5}),
    ("cross_entropy", (randn(3, 4), randn(3, 4)), {"weight": np.ones(3)}),
    ("mse_loss", (randn(3, 4), randn(3, 5)), {}),
    ("mse_loss", (randn(3, 4), randn(3, 4)), {"weight": np.ones(4)}),
    ("mse_loss", (np.ones((2, 2), np.int64), np.ones((2, 2), np.int64)), {}),
    ("l1_loss", (randn(3, 4), randn(3, 4)), {"reduction": "avg"}),
    ("binary_cross_entropy", (randn(3, 4) + 2, rand(3, 4)), {}),
    ("binary_cross_entropy", (rand(3, 4), rand(3, 5)), {}),
    ("binary_cross_entropy_with_logits", (randn(3, 4), rand(3, 5)), {}),
    ("smooth_l1_loss", (randn(3), randn(3)), {"beta": -1.0}),
    ("huber_loss", (randn(3), randn(3)), {"delta": 0.0}),
    ("cosine_embedding_loss", (randn(3, 4), randn(3, 4), np.ones((3, 1))), {}),
    ("cosine_embedding_loss", (randn(3, 4), randn(3, 4), np.array(1.0)), {}),
    ("cosine_embedding_loss", (randn(4), randn(4), np.ones(3)), {}),
    ("margin_ranking_loss", (randn(3), randn(3), np.ones((3, 1))), {}),
    ("triplet_margin_loss", (randn(3, 4), randn(3, 4), randn(3, 4)), {"margin": 0.0}),
    ("triplet_margin_loss", (randn(3, 4), randn(3, 4), randn(4)), {}),
    ("gaussian_nll_loss", (randn(3, 4), randn(3, 4), rand(3, 2)), {}),
    ("gaussian_nll_loss", (randn(3, 4), randn(3, 4), -rand(3, 4)), {}),
    ("gaussian_nll_loss", (randn(3, 4), randn(3, 4), -1.0), {}),
    ("poisson_nll_loss", (randn(3), randn(3)), {"reduction": "x"}),
    ("multi_margin_loss", (randn(3, 4), np.array([0, 1])), {}),
    ("multi_margin_loss", (randn(3, 4), np.array([0, 1, 2])), {"p": 3}),
], ids=lambda c: c[0])
def test_errors(case):
    fn, args, kw = case
    _errors(fn, *args, **kw)


def test_size_warnings():
    x = jtorch.zeros(3, 1)
    for fn in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"):
        with pytest.warns(UserWarning, match=re.escape(
                "Using a target size (torch.Size([3])) that is different to the input size "
                "(torch.Size([3, 1])). This will likely lead to incorrect results due to "
                "broadcasting. Please ensure they have the same size.")):
            getattr(F, fn)(x, jtorch.zeros(3))
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        F.kl_div(x, x)


# -- elementwise losses ------------------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDS)
def test_regression_losses(reduction):
    x, y = randn(3, 4), randn(3, 4)
    y[0, 0] = x[0, 0]
    kw = {"reduction": reduction}
    for fn in ("mse_loss", "l1_loss"):
        compare(fn, (x, y), kw)
        compare(fn, (x, y), kw | {"weight": rand(3, 4)})
        compare(fn, (x, randn(4)), kw)  # broadcast target (warns)
    for beta in (1.0, 0.5, 0.0):
        compare("smooth_l1_loss", (x, y), kw | {"beta": beta})
    for delta in (1.0, 0.3):
        compare("huber_loss", (x, y), kw | {"delta": delta})
    compare("huber_loss", (x, y), kw | {"weight": rand(3, 4)})


def test_regression_losses_float32():
    x, y = randn(5, 3, dtype=np.float32), randn(5, 3, dtype=np.float32)
    for fn in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss"):
        compare(fn, (x, y), rtol=1e-5, atol=1e-6, grad_args=(0,))


@pytest.mark.parametrize("reduction", REDS)
def test_binary_cross_entropy(reduction):
    x, t = rand(3, 4), rand(3, 4)
    kw = {"reduction": reduction}
    compare("binary_cross_entropy", (x, t), kw)
    compare("binary_cross_entropy", (x, t), kw | {"weight": rand(3, 4)})
    compare("binary_cross_entropy", (x, t), kw | {"weight": rand(4)})
    # log clamped at -100 and torch's finite gradient at 0 and 1
    compare("binary_cross_entropy", (np.array([0.0, 1.0, 0.0, 1.0, 1e-50]),
                                     np.array([0.0, 1.0, 1.0, 0.0, 0.5])), kw)
    compare("binary_cross_entropy", (rand(6, dtype=np.float32), rand(6, dtype=np.float32)), kw,
            rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", REDS)
def test_binary_cross_entropy_with_logits(reduction):
    x, t = randn(3, 4) * 5, rand(3, 4)
    x[0, 0], x[0, 1] = 200.0, -200.0
    kw = {"reduction": reduction}
    compare("binary_cross_entropy_with_logits", (x, t), kw)
    compare("binary_cross_entropy_with_logits", (x, t), kw | {"weight": rand(4)})
    compare("binary_cross_entropy_with_logits", (x, t), kw | {"pos_weight": rand(4) * 3})
    compare("binary_cross_entropy_with_logits", (x, t),
            kw | {"pos_weight": rand(4) * 3, "weight": rand(3, 1)})
    compare("binary_cross_entropy_with_logits", (randn(5, dtype=np.float32),
                                                 rand(5, dtype=np.float32)), kw,
            rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("reduction", REDS + ["batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction, log_target):
    logp = np.log(rand(3, 4) + 0.1)
    t = np.log(rand(3, 4) + 0.1) if log_target else rand(3, 4)
    if not log_target:
        t[0, 0] = 0.0  # xlogy(0, 0) = 0
    compare("kl_div", (logp, t), {"reduction": reduction, "log_target": log_target})
    compare("kl_div", (np.array(-0.5), np.array(0.3)), {"reduction": reduction})


@pytest.mark.parametrize("reduction", REDS)
def test_poisson_and_gaussian_nll(reduction):
    kw = {"reduction": reduction}
    t = R.poisson(2.0, (3, 4)).astype(np.float64)
    compare("poisson_nll_loss", (randn(3, 4), t), kw)
    compare("poisson_nll_loss", (randn(3, 4), t), kw | {"full": True})
    compare("poisson_nll_loss", (rand(3, 4), t), kw | {"log_input": False, "full": True})
    x, y = randn(3, 4), randn(3, 4)
    var = rand(3, 4)
    var[0, 0] = 1e-9  # clamped to eps; its gradient passes through
    compare("gaussian_nll_loss", (x, y, var), kw)
    compare("gaussian_nll_loss", (x, y, rand(3)), kw | {"full": True})
    compare("gaussian_nll_loss", (x, y, rand(3, 1)), kw)
    compare("gaussian_nll_loss", (x, y, 0.7), kw)


@pytest.mark.parametrize("reduction", REDS)
def test_margin_losses(reduction):
    kw = {"reduction": reduction}
    sign = np.where(R.random(4) > 0.5, 1.0, -1.0)
    x, y = randn(4), randn(4)
    compare("soft_margin_loss", (x, sign), kw, grad_args=(0,))
    compare("margin_ranking_loss", (x, y, sign), kw | {"margin": 0.3})
    compare("hinge_embedding_loss", (randn(2, 4), np.stack([sign, -sign])), kw | {"margin": 0.5})
    compare("cosine_embedding_loss", (randn(4, 3), randn(4, 3), sign), kw | {"margin": 0.2})
    compare("cosine_embedding_loss", (randn(3), randn(3), np.array(-1.0)), kw)
    compare("multilabel_soft_margin_loss", (randn(3, 4), rand(3, 4).round()), kw)
    compare("multilabel_soft_margin_loss", (randn(3, 4), rand(3, 4).round()),
            kw | {"weight": rand(4)})
    for p in (1, 2):
        compare("multi_margin_loss", (randn(3, 4), np.array([0, 3, 1])),
                kw | {"p": p, "margin": 0.7, "weight": rand(4)})
    compare("multi_margin_loss", (randn(4), np.array([2])), kw)


@pytest.mark.parametrize("reduction", REDS)
def test_triplet_losses(reduction):
    kw = {"reduction": reduction}
    a, p, n = randn(4, 3), randn(4, 3), randn(4, 3)
    compare("triplet_margin_loss", (a, p, n), kw)
    compare("triplet_margin_loss", (a, p, n), kw | {"p": 1.0, "swap": True, "margin": 2.0})
    compare("triplet_margin_loss", (randn(3), randn(3), randn(3)), kw | {"margin": 3.0})
    compare("triplet_margin_with_distance_loss", (a, p, n), kw | {"swap": True, "margin": 2.0})


def test_cosine_embedding_distance_function():
    a, p, n = randn(4, 3), randn(4, 3), randn(4, 3)
    ja, jp, jn = (jtorch.from_numpy(v) for v in (a, p, n))
    ta, tp, tn = (torch.from_numpy(v) for v in (a, p, n))
    j = F.triplet_margin_with_distance_loss(
        ja, jp, jn, distance_function=lambda u, v: 1 - F.cosine_similarity(u, v), margin=0.5)
    t = TF.triplet_margin_with_distance_loss(
        ta, tp, tn, distance_function=lambda u, v: 1 - TF.cosine_similarity(u, v), margin=0.5)
    np.testing.assert_allclose(j.item(), t.item(), rtol=1e-12)


# -- modules -----------------------------------------------------------------------------------

MODULES = [
    ("CrossEntropyLoss", {"label_smoothing": 0.1, "ignore_index": 2}, "ce"),
    ("CrossEntropyLoss", {"weight": "w5", "reduction": "sum"}, "ce"),
    ("NLLLoss", {"weight": "w5", "reduction": "none"}, "ce"),
    ("MSELoss", {}, "reg"), ("L1Loss", {"reduction": "sum"}, "reg"),
    ("SmoothL1Loss", {"beta": 0.5}, "reg"), ("HuberLoss", {"delta": 0.5}, "reg"),
    ("SoftMarginLoss", {}, "reg"),
    ("BCELoss", {"weight": "w5"}, "bce"),
    ("BCEWithLogitsLoss", {"pos_weight": "w5"}, "logits"),
    ("BCEWithLogitsLoss", {"weight": "w5", "reduction": "none"}, "logits"),
    ("MultiLabelSoftMarginLoss", {}, "logits"),
    ("KLDivLoss", {"reduction": "batchmean", "log_target": False}, "bce"),
    ("PoissonNLLLoss", {"full": True}, "bce"),
    ("HingeEmbeddingLoss", {"margin": 2.0}, "reg"),
    ("MultiMarginLoss", {"p": 2}, "ce"),
    ("CosineEmbeddingLoss", {"margin": 0.1}, "pair"),
    ("MarginRankingLoss", {"margin": 0.1}, "rank"),
    ("TripletMarginLoss", {"swap": True}, "triplet"),
    ("TripletMarginWithDistanceLoss", {"margin": 0.5}, "triplet"),
    ("GaussianNLLLoss", {"full": True}, "gauss"),
]

_W5 = rand(5) + 0.1


def _inputs(kind: str) -> tuple:
    x = randn(4, 5)
    return {
        "ce": (x, np.array([0, 2, 4, 1])),
        "reg": (x, randn(4, 5)),
        "bce": (rand(4, 5), rand(4, 5)),
        "logits": (x, rand(4, 5)),
        "pair": (randn(4, 5), randn(4, 5), np.array([1.0, -1.0, 1.0, -1.0])),
        "rank": (randn(4), randn(4), np.array([1.0, -1.0, 1.0, -1.0])),
        "triplet": (randn(4, 5), randn(4, 5), randn(4, 5)),
        "gauss": (x, randn(4, 5), rand(4, 5)),
    }[kind]


GRADS = {"pair": (0, 1), "rank": (0, 1), "triplet": (0, 1, 2), "gauss": (0, 2)}
GRADS = {k: GRADS.get(k, (0,)) for k in ("ce", "reg", "bce", "logits", *GRADS)}


@pytest.mark.parametrize("case", MODULES, ids=lambda c: c[0])
def test_loss_modules(case):
    name, kw, kind = case
    args = _inputs(kind)
    out = []
    for lib in (jtorch, torch):
        k = {n: lib.from_numpy(_W5.copy()) if v == "w5" else v for n, v in kw.items()}
        m = getattr(lib.nn, name)(**k)
        xs = [lib.from_numpy(a.copy()).requires_grad_(i in GRADS[kind]) for i, a in enumerate(args)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = m(*xs)
        y.sum().backward()
        out.append((m, xs, y))
    (jm, jx, jy), (tm, tx, ty) = out
    assert repr(jm) == repr(tm)
    assert list(jm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in jm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    np.testing.assert_allclose(_np(jy), _np(ty), rtol=1e-7, atol=1e-9)
    for a, b in zip(jx, tx):
        if b.grad is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-7, atol=1e-9)


def test_module_legacy_reduction_and_errors():
    with pytest.warns(UserWarning):
        assert jtorch.nn.MSELoss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning):
        assert jtorch.nn.NLLLoss(reduce=False).reduction == "none"
    with pytest.raises(ValueError, match="TripletMarginLoss: expected margin to be greater than 0"):
        jtorch.nn.TripletMarginLoss(margin=0)
    with pytest.raises(ValueError, match="only p == 1 and p == 2 supported"):
        jtorch.nn.MultiMarginLoss(p=3)
    m = jtorch.nn.CrossEntropyLoss(weight=jtorch.ones(3)).double()
    assert m.weight.dtype is jtorch.float64


@pytest.mark.parametrize("reduction", REDS)
def test_nll_loss_kernel_second_order_and_layouts(reduction):
    """The fused nll_loss kernels: a transposed (non-contiguous) input, and the gradient of the
    input gradient with respect to the incoming gradient (double backward) against torch."""
    w, tgt, x0 = rand(5) + 0.5, np.array([4, 0, -100]), randn(3, 5)
    grads = []
    for lib, fns in ((jtorch, F), (torch, TF)):
        a = lib.from_numpy(x0.copy()).t().contiguous().t().requires_grad_()
        assert not a.is_contiguous()
        loss = fns.cross_entropy(a, lib.from_numpy(tgt), lib.from_numpy(w), reduction=reduction)
        gout = lib.ones_like(loss).requires_grad_()
        (ga,) = lib.autograd.grad(loss, a, gout, create_graph=True)
        (gg,) = lib.autograd.grad((ga * lib.from_numpy(x0)).sum(), gout)
        grads.append((_np(loss), _np(ga), _np(gg)))
    for j, t in zip(*grads):
        np.testing.assert_allclose(j, t, rtol=1e-7, atol=1e-9)


def test_nll_plans_are_memoised_for_cpu_arrays_and_still_check_each_call():
    """A training step asks nll_loss the same question each time: the plan of CPU arrays is
    kept per geometry, dtypes and arguments, and a call that differs in any of them is
    checked afresh (torch's errors), before and after a memoised call."""
    from jtorch.kernels.defs import loss as L

    x = jtorch.randn(6, 4).log_softmax(1).requires_grad_()
    y = jtorch.tensor([0, 3, 1, 2, 3, 0])
    w = jtorch.rand(4)
    first = L._nll_meta(x, y, None, reduction="mean", ignore_index=-100)
    assert L._nll_meta(x, y, None, reduction="mean", ignore_index=-100) is first
    assert L._nll_meta(x, y, w, reduction="mean", ignore_index=-100) is not first
    assert L._nll_meta(x, y, None, reduction="none", ignore_index=-100).out.shape == (6,)
    tx, ty, tw = torch.from_numpy(_np(x)), torch.from_numpy(y.numpy()), torch.from_numpy(w.numpy())
    for _ in range(2):  # the second round runs after the plans above are memoised
        for red, wt in (("mean", None), ("sum", w), ("none", w)):
            got = F.nll_loss(x, y, wt, reduction=red)
            want = TF.nll_loss(tx, ty, None if wt is None else tw, reduction=red)
            np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-6, atol=1e-7)
        with pytest.raises(RuntimeError, match="expected target dtype to be Long"):
            F.nll_loss(x, y.int())
        with pytest.raises(ValueError, match=re.escape("Expected input batch_size (6) to match "
                                                       "target batch_size (5)")):
            F.nll_loss(x, y[:5])
        with pytest.raises(RuntimeError, match="weight tensor should be defined"):
            F.nll_loss(x, y, jtorch.rand(3))
        with pytest.raises(ValueError, match="not a valid value for reduction"):
            F.nll_loss(x, y, reduction="avg")
    F.cross_entropy(x, y).backward()
    g = x.grad.clone()
    x.grad = None
    F.cross_entropy(x, y).backward()  # the memoised backward plan
    np.testing.assert_array_equal(_np(x.grad), _np(g))
    tx.requires_grad_()
    TF.cross_entropy(tx, ty).backward()
    np.testing.assert_allclose(_np(x.grad), tx.grad.numpy(), rtol=1e-6, atol=1e-7)
