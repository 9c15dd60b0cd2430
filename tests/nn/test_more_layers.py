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
