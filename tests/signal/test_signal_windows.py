"""torch.signal.windows against torch: every window, length (0, 1, short, long), symmetric
and periodic, float32 and float64; errors; and requires_grad."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import jtorch

_EXTRA = {"general_cosine": {"a": [0.46, 0.23, 0.31]}, "gaussian": {"std": 1.7},
          "kaiser": {"beta": 5.5}, "general_hamming": {"alpha": 0.6}}
_NAMES = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
          "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


@pytest.mark.parametrize("name", _NAMES)
def test_windows_are_torchs(name):
    for m, sym, dt in itertools.product([0, 1, 2, 3, 7, 10, 64], [True, False],
                                        ["float32", "float64"]):
        extra = dict(_EXTRA.get(name, {}))
        if name == "exponential" and not sym:
            extra.update(center=2.5, tau=3.0)
        want = getattr(torch.signal.windows, name)(m, sym=sym, dtype=getattr(torch, dt), **extra)
        got = getattr(jtorch.signal.windows, name)(m, sym=sym, dtype=getattr(jtorch, dt),
                                                   **extra)
        assert got.dtype is getattr(jtorch, dt) and tuple(got.shape) == tuple(want.shape)
        # a few ulp: the windows' sin/cos/exp/i0 are jtorch's own vectorised functions
        tol = 4e-7 if dt == "float32" else 1e-15
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=tol, atol=tol,
                                   err_msg=f"{name} M={m} sym={sym} {dt}")


def test_bartlett_and_the_default_dtype_are_exact():
    np.testing.assert_array_equal(jtorch.signal.windows.bartlett(9, sym=False).numpy(),
                                  torch.signal.windows.bartlett(9, sym=False).numpy())
    assert jtorch.signal.windows.hann(4).dtype is jtorch.float32


@pytest.mark.parametrize("call", [
    lambda L: L.signal.windows.hann(-1),
    lambda L: L.signal.windows.hann(4, dtype=L.int64),
    lambda L: L.signal.windows.hann(4, dtype=L.float16),
    lambda L: L.signal.windows.gaussian(4, std=0),
    lambda L: L.signal.windows.kaiser(4, beta=-1.0),
    lambda L: L.signal.windows.exponential(4, tau=0),
    lambda L: L.signal.windows.exponential(4, center=1.0),
    lambda L: L.signal.windows.general_cosine(4, a=[]),
    lambda L: L.signal.windows.general_cosine(4, a=3),
    lambda L: L.signal.windows.cosine(4, layout=L.sparse_coo),
])
def test_window_errors_are_torchs(call):
    with pytest.raises((ValueError, TypeError)) as want:
        call(torch)
    with pytest.raises(want.type) as got:
        call(jtorch)
    assert str(got.value) == str(want.value)


def test_a_window_that_requires_grad_is_differentiable():
    w = jtorch.signal.windows.gaussian(8, std=2.0, requires_grad=True)
    assert w.requires_grad
    w.sum().backward()
