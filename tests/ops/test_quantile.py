"""quantile / nanquantile against torch: bitwise on float32 and float64 (the same ranks in the
input's dtype, the same fma lerp), every interpolation, NaN slices, keepdim, errors, grads."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch

_CASES = [((7,), None), ((7,), 0), ((3, 5), 1), ((3, 5), 0), ((2, 3, 4), 1), ((2, 3, 4), -1),
          ((), None), ((), 0), ((4, 1), 1), ((2, 3, 4), None)]


def _input(shape, dt):
    a = np.random.default_rng(len(shape) + 3 * sum(shape)).standard_normal(shape).astype(dt)
    if a.size > 3:
        a.flat[2] = np.nan  # a slice holding NaN
        a.flat[0] = a.flat[1]  # ties
    return a


@pytest.mark.parametrize("shape,dim", _CASES)
@pytest.mark.parametrize("dt", ["float32", "float64"])
@pytest.mark.parametrize("fn", ["quantile", "nanquantile"])
def test_quantile_is_torch_s_bitwise(shape, dim, dt, fn):
    a = _input(shape, dt)
    for qv in (0.3, 0.0, 1.0, [0.1, 0.5, 0.77], 0.5):
        for interp in ("linear", "lower", "higher", "midpoint", "nearest"):
            for keep in (False, True):
                r = []
                for lib in (torch, jtorch):
                    q = lib.tensor(qv, dtype=getattr(lib, dt)) if isinstance(qv, list) else qv
                    r.append(getattr(lib, fn)(lib.from_numpy(a.copy()), q, dim=dim, keepdim=keep,
                                              interpolation=interp).numpy())
                assert r[0].shape == r[1].shape, (qv, interp, keep)
                np.testing.assert_array_equal(r[1], r[0], err_msg=f"{qv} {interp} {keep}")


def test_all_nan_slices_and_method_forms():
    a = np.array([[np.nan, np.nan, np.nan], [1.0, np.nan, 3.0]])
    for fn in ("quantile", "nanquantile"):
        want = getattr(torch.from_numpy(a), fn)(torch.tensor([0.25, 0.5], dtype=torch.float64), 1)
        got = getattr(jtorch.from_numpy(a), fn)(jtorch.tensor([0.25, 0.5], dtype=jtorch.float64),
                                                axis=1)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    out = jtorch.empty(0)
    jtorch.quantile(jtorch.arange(5.0), 0.5, out=out)
    assert out.item() == 2.0


@pytest.mark.parametrize("call", [
    lambda t: t.quantile(t.ones(3, dtype=t.int64), 0.5),
    lambda t: t.quantile(t.ones(3), t.tensor([0.5], dtype=t.float64)),
    lambda t: t.quantile(t.ones(3), t.ones(2, 2)),
    lambda t: t.quantile(t.ones(3), 1.5),
    lambda t: t.quantile(t.ones(3), t.tensor([1.5])),
    lambda t: t.quantile(t.ones(0), 0.5),
    lambda t: t.quantile(t.ones(3), 0.5, interpolation="foo"),
    lambda t: t.nanquantile(t.ones(3, dtype=t.float16), 0.5),
    lambda t: t.quantile(t.ones(3, 4), 0.5, dim=5),
])
def test_errors_match_torch(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value)) as got:
        call(jtorch)
    assert str(got.value) == str(want.value)


def test_quantile_gradient():
    x = jtorch.tensor(np.random.default_rng(0).standard_normal((3, 6)), requires_grad=True)
    q = jtorch.tensor([0.2, 0.5, 0.9], dtype=jtorch.float64)
    assert jtorch.autograd.gradcheck(lambda t: jtorch.quantile(t, q, dim=1), (x,))
    assert jtorch.autograd.gradcheck(lambda t: jtorch.nanquantile(t, 0.3, interpolation="midpoint"),
                                     (x,))
