"""The shared test helpers (tests/helpers.py) and the backend fixture (tests/conftest.py): what
they accept and what they catch."""

import math

import numpy as np
import pytest
import torch

import jtorch

from helpers import ATOL32, RTOL32, exact_like, pair, raises_like, same, same_call


def _fails(fn):
    with pytest.raises(AssertionError):
        fn()


def test_same_compares_types_dtypes_shapes_and_values():
    j, t = pair(np.array([[1.0, math.nan], [-0.0, math.inf]], np.float32))
    same(j, t)
    same((j, [j.shape, j.dtype], {"n": 2}), (t, [t.shape, t.dtype], {"n": 2}))
    _fails(lambda: same(j.double(), t))
    _fails(lambda: same(j.reshape(4), t))
    _fails(lambda: same(j + 1e-6, t))
    same(j + 1e-6, t, rtol=1e-5, atol=1e-5)
    _fails(lambda: same([j], (t,)))  # the container type too
    _fails(lambda: same(1, 1.0))


def test_same_compares_strides_on_request():
    j, t = pair(np.arange(6.0).reshape(2, 3))
    same(j.t().contiguous(), t.t(), strides=False)
    _fails(lambda: same(j.t().contiguous(), t.t(), strides=True))
    same(jtorch.zeros(2, 0).t().contiguous(), torch.zeros(2, 0).t(), strides="numel>1")


def test_raises_like_compares_type_and_message():
    raises_like(lambda: jtorch.ones(2) + jtorch.ones(3), lambda: torch.ones(2) + torch.ones(3))
    _fails(lambda: raises_like(lambda: jtorch.ones(2) + jtorch.ones(3),
                               lambda: torch.ones(2) + torch.ones(4)))
    raises_like(lambda: jtorch.ones(2) + jtorch.ones(3), lambda: torch.ones(2) + torch.ones(4),
                message="type only")


def test_same_call_exact_holds_float32_to_the_exact_result():
    """torch's float32 gelu is ~4e-5 (relative) off near -3 on its vector path; the exact
    reference is not, and still catches an error of a few ulp."""
    x = np.linspace(-7, 7, 10_001, dtype=np.float32)
    same_call(lambda m, a: m.nn.functional.gelu(a), x, exact=True, rtol=RTOL32, atol=ATOL32)
    _fails(lambda: same_call(lambda m, a: m.exp(a) * (1 + 8 * RTOL32 * (m is jtorch)), x,
                             exact=True, rtol=RTOL32, atol=ATOL32))
    t = torch.from_numpy(x)
    want = exact_like(torch.nn.functional.gelu, [t], torch.nn.functional.gelu(t))
    assert want.dtype is torch.float32
    assert torch.equal(want, torch.nn.functional.gelu(t.double()).float())


def test_backend_fixture_runs_on_each_device(backend):
    j = jtorch.zeros(2, 3, device=backend).t() + 1
    t = torch.zeros(2, 3, device=backend).t() + 1
    same(j, t, strides=True)
