"""Conv, pooling and upsampling modules against torch with copied weights."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch
from test_module import compare_layer

RNG = np.random.default_rng(5)

CONV = [
    ("Conv1d", (3, 4, 3), {"stride": 2}, (2, 3, 9)),
    ("Conv1d", (3, 4, 3), {"padding": "same", "padding_mode": "reflect"}, (2, 3, 7)),
    ("Conv2d", (4, 6, 3), {"padding": 1, "groups": 2}, (2, 4, 6, 5)),
    ("Conv2d", (3, 4, (3, 2)), {"padding": (1, 2), "dilation": (2, 1), "bias": False,
                                "padding_mode": "circular"}, (1, 3, 7, 6)),
    ("Conv2d", (3, 3, 3), {"padding": 1, "padding_mode": "replicate", "groups": 3}, (2, 3, 5, 5)),
    ("Conv3d", (2, 3, 2), {"stride": (1, 2, 1)}, (1, 2, 4, 5, 4)),
    ("ConvTranspose1d", (3, 4, 3), {"stride": 2, "output_padding": 1}, (2, 3, 5)),
    ("ConvTranspose2d", (4, 2, 3), {"stride": 2, "padding": 1, "groups": 2}, (1, 4, 4, 3)),
]


@pytest.mark.parametrize("name,args,kw,shape", CONV)
def test_conv_modules(name, args, kw, shape):
    jm, tm = compare_layer(lambda m: getattr(m.nn, name)(*args, **kw).double(),
                           RNG.standard_normal(shape), rtol=1e-9, atol=1e-11)
    assert repr(jm) == repr(tm)


def test_seed_shape_examples():
    m = jtorch.nn.Conv1d(16, 33, 3, stride=2)
    assert tuple(m(jtorch.randn(20, 16, 50)).shape) == (20, 33, 24)
    m = jtorch.nn.Conv2d(16, 33, (3, 5), stride=(2, 1), padding=(4, 2), dilation=(3, 1))
    assert tuple(m(jtorch.randn(20, 16, 50, 100)).shape) == (20, 33, 26, 100)


def test_conv_transpose_output_size():
    for m in (jtorch, torch):
        up = m.nn.ConvTranspose2d(2, 2, 3, stride=2, padding=1)
        assert tuple(up(m.ones(1, 2, 4, 4), output_size=[8, 8]).shape) == (1, 2, 8, 8)


POOL = [
    ("MaxPool1d", (3,), {"stride": 2, "padding": 1}, (2, 3, 9)),
    ("MaxPool2d", (2,), {}, (2, 3, 6, 6)),
    ("MaxPool2d", (3,), {"stride": 2, "ceil_mode": True, "dilation": 1}, (1, 2, 7, 8)),
    ("AvgPool1d", (3,), {"stride": 2}, (2, 3, 9)),
    ("AvgPool2d", (2,), {"count_include_pad": False, "padding": 1}, (2, 3, 5, 6)),
    ("AdaptiveAvgPool2d", ((2, 3),), {}, (2, 3, 7, 8)),
    ("AdaptiveMaxPool2d", (3,), {}, (2, 3, 7, 8)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 9)),
    ("LPPool2d", (2, 2), {}, (1, 2, 6, 6)),
    ("Upsample", (), {"scale_factor": 2, "mode": "bilinear"}, (1, 2, 3, 4)),
    ("Upsample", (), {"size": (5, 7), "mode": "nearest"}, (1, 2, 3, 4)),
    ("PixelShuffle", (2,), {}, (1, 8, 3, 3)),
    ("PixelUnshuffle", (2,), {}, (1, 2, 4, 6)),
]


@pytest.mark.parametrize("name,args,kw,shape", POOL)
def test_pool_and_upsample_modules(name, args, kw, shape):
    x = RNG.standard_normal(shape)
    if name == "LPPool2d":
        x = np.abs(x) + 0.1
    jm, tm = compare_layer(lambda m: getattr(m.nn, name)(*args, **kw), x, rtol=1e-9,
                           atol=1e-11)
    assert repr(jm) == repr(tm)


def test_max_unpool_round_trip():
    x = RNG.standard_normal((1, 2, 4, 4))
    for m in (jtorch, torch):
        pool = m.nn.MaxPool2d(2, return_indices=True)
        out, idx = pool(m.from_numpy(x.copy()))
        back = m.nn.MaxUnpool2d(2)(out, idx)
        if m is jtorch:
            j = back.numpy()
        else:
            np.testing.assert_allclose(j, back.numpy())


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_pool_gradient_of_an_empty_batch(nd):
    """An empty batch's max-pool gradient is an empty gradient (its planes once reshaped with
    -1, which an empty array cannot resolve)."""
    shape = (0, 2) + (4,) * nd
    grads = []
    for lib in (jtorch, torch):
        x = lib.zeros(*shape, requires_grad=True)
        getattr(lib.nn.functional, f"max_pool{nd}d")(x, 2).sum().backward()
        grads.append(tuple(x.grad.shape))
    assert grads[0] == grads[1] == shape
