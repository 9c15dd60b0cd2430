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
