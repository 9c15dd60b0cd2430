"""torch.segment_reduce against torch: values and gradients for every reduction (lengths and
offsets, ``initial``, an inner axis, empty segments, NaN, ties and zeros), dtypes, torch's
errors, gradcheck, and compiled calls equal to eager ones."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch
from jtorch import _flags

_RNG = np.random.default_rng(11)
REDUCES = ["sum", "mean", "max", "min", "prod", "amax", "amin"]


def _ties():
    a = _RNG.standard_normal(9)
    a[[1, 2]] = a[0]  # tied maxima or minima
    a[5] = 0.0
    return a


# name -> (data, keyword arguments (arrays become int64 tensors))
CASES = {
    "lengths": (_RNG.standard_normal(7), {"lengths": np.array([2, 0, 3, 2])}),
    "initial": (_RNG.standard_normal(7), {"lengths": np.array([2, 0, 3, 2]), "initial": 0.5}),
    "offsets": (_RNG.standard_normal(7), {"offsets": np.array([0, 2, 2, 5, 7])}),
    "offsets_from_1": (_RNG.standard_normal(7), {"offsets": np.array([1, 2, 2, 5, 6])}),
    "inner_axis": (_RNG.standard_normal((2, 5, 3)),
                   {"lengths": np.array([[1, 4, 0], [2, 2, 1]]), "axis": 1}),
    "inner_axis_negative": (_RNG.standard_normal((2, 5, 3)),
                            {"lengths": np.array([[5, 0], [2, 3]]), "axis": -2,
                             "initial": 2}),
    "trailing_dims": (_RNG.standard_normal((4, 2, 3)), {"lengths": np.array([3, 1])}),
    "inner_offsets": (_RNG.standard_normal((2, 5, 3)),
                      {"offsets": np.array([[0, 1, 5], [0, 3, 3]]), "axis": 1}),
    "ties_and_zero": (_ties(), {"lengths": np.array([3, 3, 3])}),
    "ties_and_zero_initial": (_ties(), {"lengths": np.array([3, 3, 3]), "initial": -1.5}),
    "unsafe_short": (_RNG.standard_normal(6), {"lengths": np.array([2, 2]), "unsafe": True}),
    "int32_lengths": (_RNG.standard_normal(5), {"lengths": np.array([2, 3], np.int32)}),
}


def _run(lib, reduce, data, kw, dtype=None):
    x = lib.from_numpy(data.copy())
    if dtype is not None:
        x = x.to(getattr(lib, dtype))
    x.requires_grad_()
    kws = {k: lib.from_numpy(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    out = lib.segment_reduce(x, reduce, **kws)
    g = np.random.default_rng(1).standard_normal(tuple(out.shape))
    out.backward(lib.from_numpy(g).to(out.dtype))
    return out.detach().double().numpy(), x.grad.double().numpy(), out


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("reduce", REDUCES)
def test_values_and_gradients_match_torch(reduce, case):
    data, kw = CASES[case]
    jo, jg, jout = _run(jtorch, reduce, data, kw)
    to, tg, tout = _run(torch, reduce, data, kw)
    np.testing.assert_allclose(jo, to, rtol=1e-12, atol=1e-12, equal_nan=True)
    np.testing.assert_allclose(jg, tg, rtol=1e-12, atol=1e-12, equal_nan=True)
    assert jout.grad_fn.name() == type(tout.grad_fn).__name__ == "SegmentReduceBackward0"


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "prod"])
def test_other_dtypes(reduce, dtype):
    data, kw = CASES["inner_axis"]
    jo, jg, jout = _run(jtorch, reduce, data, kw, dtype)
    to, tg, _ = _run(torch, reduce, data, kw, dtype)
    assert str(jout.dtype) == f"torch.{dtype}"
    tol = 1e-5 if dtype == "float32" else 2e-2
    np.testing.assert_allclose(jo, to, rtol=tol, atol=tol)
    np.testing.assert_allclose(jg, tg, rtol=tol, atol=tol)


def test_nan_propagates():
    for lib in (jtorch, torch):
        x = lib.tensor([1.0, float("nan"), 3.0])
        for reduce in ("max", "min", "mean", "sum"):
            out = lib.segment_reduce(x, reduce, lengths=lib.tensor([2, 1]))
            assert np.isnan(out[0].item()) and out[1].item() == 3.0


def test_parallel_kernel_matches_torch(monkeypatch):
    monkeypatch.setattr(_flags, "GRAIN_SIZE", 1)
    data, kw = CASES["inner_axis"]
    for reduce in ("max", "prod", "mean"):
        jo, jg, _ = _run(jtorch, reduce, data, kw)
        to, tg, _ = _run(torch, reduce, data, kw)
        np.testing.assert_allclose(jo, to, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(jg, tg, rtol=1e-12, atol=1e-12)


def _d(L):
    return L.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])


ERRORS = {
    "indices": lambda L: L.segment_reduce(_d(L), "sum", indices=L.tensor([0, 0, 1, 1, 2, 2])),
    "no_segments": lambda L: L.segment_reduce(_d(L), "sum"),
    "bad_reduce": lambda L: L.segment_reduce(_d(L), "foo", lengths=L.tensor([6])),
    "wrong_sum": lambda L: L.segment_reduce(_d(L), "sum", lengths=L.tensor([2, 2])),
    "negative": lambda L: L.segment_reduce(_d(L), "sum", lengths=L.tensor([7, -1])),
    "float_lengths": lambda L: L.segment_reduce(_d(L), "sum", lengths=L.tensor([2.0, 4.0])),
    "short_offsets": lambda L: L.segment_reduce(_d(L), "sum", offsets=L.tensor([0, 6]).short()),
    "int_data": lambda L: L.segment_reduce(_d(L).int(), "sum", lengths=L.tensor([6])),
    "complex_data": lambda L: L.segment_reduce(_d(L).to(L.complex64), "sum",
                                               lengths=L.tensor([6])),
    "axis_range": lambda L: L.segment_reduce(_d(L), "sum", lengths=L.tensor([6]), axis=1),
    "lengths_rank": lambda L: L.segment_reduce(_d(L), "sum", lengths=L.tensor([[3, 3]])),
    "axis_not_last": lambda L: L.segment_reduce(L.ones(2, 3), "sum", lengths=L.tensor([[3], [3]]),
                                                axis=0),
    "scalar_offsets": lambda L: L.segment_reduce(_d(L), "sum", offsets=L.tensor(6)),
    "decreasing_offsets": lambda L: L.segment_reduce(_d(L), "sum", offsets=L.tensor([4, 2])),
    "empty_lengths": lambda L: L.segment_reduce(_d(L), "sum", lengths=L.tensor([], dtype=L.long)),
    "list_lengths": lambda L: L.segment_reduce(_d(L), "sum", lengths=[6]),
    "axis_none": lambda L: L.segment_reduce(_d(L), "sum", lengths=L.tensor([6]), axis=None),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    errs = []
    for lib in (torch, jtorch):
        with pytest.raises(Exception) as info:
            ERRORS[name](lib)
        errs.append(info.value)
    assert type(errs[1]) is type(errs[0]) and str(errs[1]) == str(errs[0])


def test_accepts_what_torch_accepts():
    for lib in (torch, jtorch):
        out = lib.segment_reduce(_d(lib), "sum", lengths=lib.tensor([6]), initial=lib.tensor(2.0))
        assert out.tolist() == [23.0]
        assert lib.segment_reduce(lib.empty(0), "sum", lengths=lib.tensor([0])).tolist() == [0.0]


def test_gradcheck():
    x = jtorch.from_numpy(_RNG.standard_normal((2, 4, 3))).requires_grad_()
    lengths = jtorch.tensor([[1, 3, 0], [2, 1, 1]])
    for reduce in ("sum", "mean", "max", "prod"):
        assert jtorch.autograd.gradcheck(
            lambda t, r=reduce: jtorch.segment_reduce(t, r, lengths=lengths, axis=1,
                                                      initial=0.5), [x])


@pytest.mark.parametrize("reduce", ["sum", "max", "prod"])
def test_compiled_equals_eager(reduce):
    data = _RNG.standard_normal((3, 6, 2))
    offsets = jtorch.tensor([[0, 2, 6], [0, 0, 6], [1, 3, 4]])

    def f(x):
        return jtorch.segment_reduce(x * 2, reduce, offsets=offsets, axis=1).sin()

    res = []
    for fn in (f, jtorch.compile(f)):
        x = jtorch.from_numpy(data.copy()).requires_grad_()
        out = fn(x)
        out.sum().backward()
        res.append((out.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12, atol=0)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-12, atol=0)
