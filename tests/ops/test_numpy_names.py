"""``axis=`` and ``keepdims=`` for ``dim`` and ``keepdim``, as torch's parser accepts them."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch

_NAMES = ["sum", "mean", "prod", "min", "max", "amax", "amin", "argmax", "argmin", "var", "std",
          "any", "all", "logsumexp", "cumsum", "cumprod", "median", "nansum", "nanmean",
          "count_nonzero", "std_mean", "var_mean", "aminmax", "nanmedian", "mode", "sort",
          "argsort", "softmax", "log_softmax", "cummax", "cummin", "logcumsumexp"]
_KEEP = {"sum", "mean", "prod", "min", "max", "amax", "amin", "argmax", "argmin", "var", "std",
         "any", "all", "logsumexp", "median", "nansum", "nanmean", "nanmedian", "mode"}


def _vals(r):
    r = r if isinstance(r, tuple) else (r,)
    return [np.asarray(v.numpy()).tolist() for v in r]


@pytest.mark.parametrize("name", _NAMES)
@pytest.mark.parametrize("method", [False, True])
def test_axis_and_keepdims_follow_torch(name, method):
    if method and name in ("std_mean", "var_mean"):
        pytest.skip("functions only, in torch too")
    x = np.random.default_rng(0).standard_normal((3, 4))
    out = []
    for lib in (jtorch, torch):
        t = lib.from_numpy(x.copy())
        fn = getattr(t, name) if method else (
            lambda *a, lib=lib, t=t, **k: getattr(lib, name)(t, *a, **k))
        kw = {"axis": 1}
        if name in _KEEP:
            kw["keepdims"] = True
        out.append(_vals(fn(**kw)))
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-14)


def test_kthvalue_and_topk_take_axis():
    x = np.random.default_rng(1).standard_normal((3, 4))
    for name in ("kthvalue", "topk"):
        a = _vals(getattr(jtorch, name)(jtorch.from_numpy(x.copy()), 2, axis=0))
        b = _vals(getattr(torch, name)(torch.from_numpy(x.copy()), 2, axis=0))
        for u, v in zip(a, b):
            np.testing.assert_allclose(u, v, rtol=1e-14)


# (name, extra positional args as a function of the library, is also a Tensor method)
_AXIS_CASES = [
    ("squeeze", lambda lib: (), True), ("unsqueeze", lambda lib: (), True),
    ("unbind", lambda lib: (), True), ("diff", lambda lib: (), True),
    ("trapezoid", lambda lib: (), False), ("trapz", lambda lib: (), False),
    ("cumulative_trapezoid", lambda lib: (), False), ("chunk", lambda lib: (2,), True),
    ("tensor_split", lambda lib: (2,), True), ("unsafe_chunk", lambda lib: (2,), True),
    ("unsafe_split", lambda lib: (1,), True), ("split_copy", lambda lib: (1,), False),
    ("squeeze_copy", lambda lib: (), False), ("unsqueeze_copy", lambda lib: (), False),
    ("unbind_copy", lambda lib: (), False), ("repeat_interleave", lambda lib: (2,), True),
    ("take_along_dim", lambda lib: (lib.tensor([[0, 2, 1]]).T,), True),
    ("cosine_similarity", lambda lib: (lib.ones(3, 1),), False),
    ("cross", lambda lib: (lib.ones(3, 1, dtype=lib.float64),), True),
    ("norm_except_dim", lambda lib: (2,), False),
]


@pytest.mark.parametrize("name,extra,method", _AXIS_CASES, ids=[c[0] for c in _AXIS_CASES])
def test_axis_is_dim_for_shape_functions(name, extra, method):
    x = np.random.default_rng(2).standard_normal((3, 1))
    for as_method in (False, True) if method else (False,):
        out = []
        for lib in (jtorch, torch):
            t = lib.from_numpy(x.copy())
            fn = getattr(t, name) if as_method else (
                lambda *a, lib=lib, t=t, **k: getattr(lib, name)(t, *a, **k))
            out.append(_vals(fn(*extra(lib), axis=0)))
        assert len(out[0]) == len(out[1])
        for a, b in zip(*out):
            np.testing.assert_allclose(a, b, rtol=1e-14)


def test_axis_on_size_stride_and_in_place_scans():
    a, b = jtorch.zeros(2, 3), torch.zeros(2, 3)
    assert a.size(axis=1) == b.size(axis=1) and a.stride(axis=0) == b.stride(axis=0)
    assert a.unsqueeze_(axis=0).shape == b.unsqueeze_(axis=0).shape
    assert a.squeeze_(axis=0).shape == b.squeeze_(axis=0).shape
    np.testing.assert_array_equal(jtorch.ones(2, 3).cumsum_(axis=1).numpy(),
                                  torch.ones(2, 3).cumsum_(axis=1).numpy())
    with pytest.raises(TypeError):
        jtorch.unsqueeze(jtorch.ones(2))
