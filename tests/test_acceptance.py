"""Acceptance programs: small torch-style programs run once with ``jtorch`` and once with
``torch`` (the same function, the module passed in), comparing values, dtypes, shapes,
strides and exception types. Sizes and dtype/shape combinations are kept few, so the set
compiles few kernels."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
import torch

import jtorch


_TOL = {"float16": 1e-3, "float32": 1e-5, "complex64": 1e-5}


def _same(j, t, path: str = "") -> None:
    if isinstance(t, torch.Tensor):
        assert isinstance(j, jtorch.Tensor), f"{path}: {type(j).__name__} is not a Tensor"
        assert str(j.dtype) == str(t.dtype), f"{path}: dtype {j.dtype} vs {t.dtype}"
        assert tuple(j.shape) == tuple(t.shape), f"{path}: shape {tuple(j.shape)} vs {tuple(t.shape)}"
        if t.numel() > 1:
            assert j.stride() == t.stride(), f"{path}: stride {j.stride()} vs {t.stride()}"
        a, b = j.numpy(), t.resolve_conj().numpy()
        if a.dtype.kind in "fc":
            tol = _TOL.get(a.dtype.name, 1e-10)
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=path)
        else:
            np.testing.assert_array_equal(a, b, err_msg=path)
    elif isinstance(t, (torch.dtype, torch.device)):
        assert str(j) == str(t), f"{path}: {j} vs {t}"
    elif isinstance(t, torch.Size):
        assert isinstance(j, jtorch.Size) and tuple(j) == tuple(t), f"{path}: {j!r} vs {t!r}"
    elif isinstance(t, (tuple, list)):
        assert isinstance(j, (tuple, list)) and len(j) == len(t), f"{path}: {j!r} vs {t!r}"
        for i, (x, y) in enumerate(zip(j, t)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(t, str):
        assert j == t, f"{path}:\n{j}\nvs\n{t}"
    elif isinstance(t, float):
        assert isinstance(j, float) and (j == t or math.isclose(j, t, rel_tol=1e-6)
                                         or math.isnan(j) and math.isnan(t)), f"{path}: {j} vs {t}"
    else:
        assert type(j) is type(t) and j == t, f"{path}: {j!r} vs {t!r}"


def same(fn, message: bool = False) -> None:
    """Run ``fn(module)`` under both libraries; results, or exception types, must agree."""
    try:
        expected = fn(torch)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)) as info:
            fn(jtorch)
        if message:
            assert str(info.value).splitlines()[0] == str(e).splitlines()[0]
        return
    _same(fn(jtorch), expected)


def F(mod):
    return importlib.import_module(mod.__name__ + ".nn.functional")


# --- tensor core: Size, shapes, conversions -------------------------------------------------


def test_size_arithmetic_keeps_size():
    same(lambda t: (t.Size([2, 3]) * 2, 2 * t.Size([2]), (1,) + t.Size([2]), t.Size([2, 3])[::-1],
                    t.Size([2]) + t.Size([3]), repr(t.zeros(2, 3).shape[1:] * 2)))
    same(lambda t: t.Size([2]) + [3])
    same(lambda t: t.broadcast_shapes((2, 1), (3,), (4, 1, 1)))


@pytest.mark.parametrize("shapes", [((2, 3), (3, 2)), ((2, 3), (4,)), ((5, 1, 3), (2, 4))])
def test_broadcast_error_names_last_mismatching_dim(shapes):
    same(lambda t: t.ones(*shapes[0]) + t.ones(*shapes[1]), message=True)


def test_masked_fill_broadcast_error():
    same(lambda t: t.ones(3).masked_fill(t.tensor([True, False]), 0.0), message=True)
