"""Layers added for torch's nn surface, against torch: padding (constant, zero, reflection,
replication, circular; 1-3 d), PairwiseDistance, CosineSimilarity, Fold, Unfold,
ChannelShuffle (forward, gradient, repr), and MultiheadAttention's import path."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch

_PADS = [(name, d) for name in ("ConstantPad", "ZeroPad", "ReflectionPad", "ReplicationPad",
                                 "CircularPad") for d in (1, 2, 3)]


def _run(lib, make, *arrays):
    xs = [lib.from_numpy(a.copy()).requires_grad_() for a in arrays]
    m = make(lib)
    y = m(*xs)
    y.pow(2).sum().backward()
    return repr(m), y.detach().numpy(), [x.grad.numpy() for x in xs]


def _same(make, *arrays):
    (rm, ym, gm), (rt, yt, gt) = _run(jtorch, make, *arrays), _run(torch, make, *arrays)
    assert rm == rt
    np.testing.assert_allclose(ym, yt, rtol=1e-12)
    for a, b in zip(gm, gt):
        np.testing.assert_allclose(a, b, rtol=1e-12)


@pytest.mark.parametrize("name,d", _PADS)
@pytest.mark.parametrize("padding", ["int", "tuple"])
def test_padding_layers_follow_torch(name, d, padding):
    shape = (2, 3, 5, 6, 4)[:d + 2]
    x = np.random.default_rng(d).standard_normal(shape)
    pad = 2 if padding == "int" else tuple(range(1, 2 * d + 1))
    if name in ("ReflectionPad", "CircularPad") and padding == "tuple":  # within the size
        pad = tuple(min(p, 3) for p in pad)
    args = (pad, 1.5) if name == "ConstantPad" else (pad,)
    _same(lambda lib: getattr(lib.nn, f"{name}{d}d")(*args), x)


def test_distances_fold_unfold_and_channel_shuffle_follow_torch():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    _same(lambda lib: lib.nn.PairwiseDistance(p=3.0, keepdim=True), a, b)
    _same(lambda lib: lib.nn.CosineSimilarity(dim=1), a, b)
    x = rng.standard_normal((2, 3 * 4, 9))
    _same(lambda lib: lib.nn.Fold(output_size=(4, 4), kernel_size=2), x)
    _same(lambda lib: lib.nn.Unfold(kernel_size=2, padding=1), rng.standard_normal((2, 3, 4, 4)))
    _same(lambda lib: lib.nn.ChannelShuffle(3), rng.standard_normal((2, 6, 2, 3)))
    for lib in (jtorch, torch):
        with pytest.raises(RuntimeError, match="divisible by groups"):
            lib.nn.functional.channel_shuffle(lib.ones(1, 3, 2), 2)


def test_multihead_attention_imports_from_torch_s_module_path():
    from jtorch.nn.modules.activation import MultiheadAttention

    assert MultiheadAttention is jtorch.nn.MultiheadAttention


def test_multilabel_margin_loss_follows_torch():
    x = np.random.default_rng(2).standard_normal((4, 5))
    y = np.array([[3, 0, -1, 1, 2], [1, 1, -1, 0, 0], [4, 3, 2, 1, 0], [-1, 2, 3, 0, 0]])
    for red in ("mean", "sum", "none"):
        _same(lambda lib, red=red: _Bound(lib.nn.MultiLabelMarginLoss(reduction=red),
                                          lib.from_numpy(y.copy())), x)
    _same(lambda lib: _Bound(lib.nn.MultiLabelMarginLoss(), lib.from_numpy(y[0].copy())), x[0])
    for lib in (jtorch, torch):
        with pytest.raises(RuntimeError):
            lib.nn.functional.multilabel_margin_loss(lib.ones(2, 3), lib.ones(2, 3))


class _Bound:
    """A loss with its target bound, as a one-input module for ``_same``."""

    def __init__(self, loss, target, name: str | None = None) -> None:
        self.loss, self.target, self.name = loss, target, name

    def __call__(self, x):
        return self.loss(x, self.target)

    def __repr__(self) -> str:
        return self.name or repr(self.loss)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.0, float("inf")])
def test_pdist_follows_torch(p):
    x = np.random.default_rng(3).standard_normal((5, 3))
    _same(lambda lib: _Bound(lambda a, _t, lib=lib: lib.nn.functional.pdist(a, p), None, "pdist"),
          x)


def test_lppool3d_feature_alpha_dropout_gumbel_softmax_and_deprecated_inits():
    x = np.random.default_rng(4).random((1, 2, 4, 4, 4)) + 0.1
    _same(lambda lib: lib.nn.LPPool3d(2, 2), x)
    d = jtorch.nn.FeatureAlphaDropout(0.5)
    t = jtorch.randn(3, 4, 5, 6, dtype=jtorch.float64)
    assert jtorch.equal(d.eval()(t), t)
    y = d.train()(t)  # one draw per (sample, channel): the affine map is shared over a channel
    ratio = (y - y[..., :1, :1]) / (t - t[..., :1, :1])
    assert jtorch.allclose(ratio[..., 1:, 1:], ratio[..., 1:2, 1:2].expand_as(ratio[..., 1:, 1:]))
    g = jtorch.nn.functional.gumbel_softmax(jtorch.randn(4, 6, requires_grad=True), hard=True)
    assert jtorch.equal(g.sum(-1), jtorch.ones(4)) and set(g.detach().unique().tolist()) <= {0., 1.}
    g.sum().backward()
    soft = jtorch.nn.functional.gumbel_softmax(jtorch.randn(4, 6), tau=0.5)
    np.testing.assert_allclose(soft.sum(-1).numpy(), np.ones(4), rtol=1e-6)
    for name in ("eye", "dirac"):
        shape = (3, 3) if name == "eye" else (3, 3, 3)
        with pytest.warns(FutureWarning, match=f"nn.init.{name}` is now deprecated"):
            getattr(jtorch.nn.init, name)(jtorch.empty(*shape))
