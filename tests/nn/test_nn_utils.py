"""nn.utils against torch: clip_grad_norm_ (every norm type, error_if_nonfinite, foreach,
generators, single tensors), get_total_norm, clip_grads_with_norm_, clip_grad_value_,
parameters_to_vector and vector_to_parameters."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch

import jtorch

R = np.random.default_rng(2)


def _params(lib, arrays, grads):
    ps = []
    for a, g in zip(arrays, grads):
        p = lib.nn.Parameter(lib.from_numpy(a.copy()))
        p.grad = None if g is None else lib.from_numpy(g.copy())
        ps.append(p)
    return ps


def _pair(shapes=((3, 2), (4,), (1,)), scale=1.0, dtype=np.float64, none_at=None):
    arrays = [R.standard_normal(s).astype(dtype) for s in shapes]
    grads = [None if i == none_at else (R.standard_normal(s) * scale).astype(dtype)
             for i, s in enumerate(shapes)]
    return _params(jtorch, arrays, grads), _params(torch, arrays, grads)


def _same_grads(jp, tp, rtol=1e-12):
    for a, b in zip(jp, tp):
        assert (a.grad is None) == (b.grad is None)
        if a.grad is not None:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=1e-15)


@pytest.mark.parametrize("norm_type", [2.0, 1, 3.5, 0.5, math.inf, -math.inf, "inf", 0])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm(norm_type, max_norm):
    jp, tp = _pair(none_at=2)
    jt = jtorch.nn.utils.clip_grad_norm_(jp, max_norm, norm_type)
    tt = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type)
    assert str(jt.dtype) == str(tt.dtype) and jt.shape == tt.shape
    np.testing.assert_allclose(jt.numpy(), tt.numpy(), rtol=1e-12)
    _same_grads(jp, tp)


def test_clip_grad_norm_variants():
    # single tensor, generator, foreach flags, float32, returned norm is not a graph node
    for foreach in (None, False, True):
        jp, tp = _pair(dtype=np.float32, scale=10)
        jt = jtorch.nn.utils.clip_grad_norm_(iter(jp), 1.0, foreach=foreach)
        tt = torch.nn.utils.clip_grad_norm_(iter(tp), 1.0, foreach=foreach)
        np.testing.assert_allclose(jt.numpy(), tt.numpy(), rtol=1e-6)
        _same_grads(jp, tp, rtol=1e-6)
        assert jt.grad_fn is None and str(jt.dtype) == "torch.float32"
    jp, tp = _pair(shapes=((5,),), scale=3)
    np.testing.assert_allclose(jtorch.nn.utils.clip_grad_norm_(jp[0], 2.0).numpy(),
                               torch.nn.utils.clip_grad_norm_(tp[0], 2.0).numpy())
    _same_grads(jp, tp)
    # no gradients at all: a zero norm, nothing touched
    jn = jtorch.nn.utils.clip_grad_norm_([jtorch.nn.Parameter(jtorch.ones(2))], 1.0)
    assert jn.item() == 0.0 and str(jn.dtype) == "torch.float32"
    with pytest.warns(UserWarning, match="`parameters` is an empty generator"):
        jtorch.nn.utils.clip_grad_norm_((p for p in []), 1.0)
    with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
        jtorch.nn.utils.clip_grad_norm(jp, 1.0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_clip_grad_norm_multi_tensor_kernels(dtype):
    """The 2-norm over many same-dtype gradients and their scaling are one compiled call each
    (torch's foreach path): results as torch's (and as the per-tensor path's), every
    gradient's version bumped as mul_ would; other layouts take the per-tensor path."""
    from jtorch.kernels.cpu import optim_multi

    shapes = [(7, 5), (5,), (3, 4, 2), (1,), (0,), (40,)]
    for scale, max_norm in ((10.0, 1.0), (1e-3, 1.0), (1.0, 0.0)):
        jp, tp = _pair(shapes=shapes, dtype=dtype, scale=scale)
        versions = [p.grad._version for p in jp]
        before = optim_multi.calls[0]
        jt = jtorch.nn.utils.clip_grad_norm_(jp, max_norm)
        tt = torch.nn.utils.clip_grad_norm_(tp, max_norm)
        assert optim_multi.calls[0] == before + 2
        rtol = 1e-6 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(jt.numpy(), tt.numpy(), rtol=rtol)
        assert str(jt.dtype) == str(tt.dtype) and jt.grad_fn is None
        _same_grads(jp, tp, rtol=rtol)
        assert [p.grad._version for p in jp] == [v + 1 for v in versions]
        jq, tq = _pair(shapes=shapes, dtype=dtype, scale=scale)
        before = optim_multi.calls[0]
        jtorch.nn.utils.clip_grad_norm_(jq, max_norm, foreach=False)  # the per-tensor path
        torch.nn.utils.clip_grad_norm_(tq, max_norm, foreach=False)
        assert optim_multi.calls[0] == before
        _same_grads(jq, tq, rtol=rtol)
    jp, tp = _pair(shapes=((4, 3), (3,)), dtype=dtype)
    for p in jp:  # transposed gradients: the per-tensor path
        p.grad = p.grad.mT.contiguous().mT if p.grad.dim() == 2 else p.grad
    before = optim_multi.calls[0]
    np.testing.assert_allclose(jtorch.nn.utils.clip_grad_norm_(jp, 0.5).numpy(),
                               torch.nn.utils.clip_grad_norm_(tp, 0.5).numpy(), rtol=1e-6)
    assert optim_multi.calls[0] == before
    _same_grads(jp, tp, rtol=1e-6)
    jp, _ = _pair(shapes=((3,), (2,)), dtype=dtype)
    jp[0].grad[0] = math.inf
    with pytest.raises(RuntimeError, match="total norm of order 2.0 for gradients"):
        jtorch.nn.utils.clip_grad_norm_(jp, 1.0, error_if_nonfinite=True)


def test_clip_grad_norm_mixed_dtypes_and_model():
    a = jtorch.nn.Parameter(jtorch.ones(3))
    b = jtorch.nn.Parameter(jtorch.ones(3, dtype=jtorch.float64))
    a.grad, b.grad = jtorch.ones(3), jtorch.ones(3, dtype=jtorch.float64)
    ta = torch.nn.Parameter(torch.ones(3))
    tb = torch.nn.Parameter(torch.ones(3, dtype=torch.float64))
    ta.grad, tb.grad = torch.ones(3), torch.ones(3, dtype=torch.float64)
    jt = jtorch.nn.utils.clip_grad_norm_([a, b], 1.0)
    tt = torch.nn.utils.clip_grad_norm_([ta, tb], 1.0)
    assert str(jt.dtype) == str(tt.dtype)
    np.testing.assert_allclose(jt.numpy(), tt.numpy(), rtol=1e-7)
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-6)
    # on a model after backward
    lin = jtorch.nn.Linear(3, 2)
    (lin(jtorch.randn(4, 3)) * 100).sum().backward()
    jtorch.nn.utils.clip_grad_norm_(lin.parameters(), 0.1)
    total = jtorch.nn.utils.get_total_norm([p.grad for p in lin.parameters()])
    assert abs(total.item() - 0.1) < 1e-6


def test_clip_grad_norm_nonfinite():
    for bad in (math.inf, math.nan):
        jp, tp = _pair()
        jp[0].grad[0, 0] = bad
        tp[0].grad[0, 0] = bad
        with pytest.raises(RuntimeError) as te:
            torch.nn.utils.clip_grad_norm_(tp, 1.0, error_if_nonfinite=True)
        with pytest.raises(RuntimeError, match=re.escape(str(te.value))):
            jtorch.nn.utils.clip_grad_norm_(jp, 1.0, error_if_nonfinite=True)
        # without the flag the gradients are scaled by the non-finite norm anyway
        jt = jtorch.nn.utils.clip_grad_norm_(jp, 1.0)
        tt = torch.nn.utils.clip_grad_norm_(tp, 1.0)
        np.testing.assert_equal(jt.numpy(), tt.numpy())
        np.testing.assert_equal(jp[1].grad.numpy(), tp[1].grad.numpy())


def test_get_total_norm_and_clip_with_norm():
    jp, tp = _pair()
    jt = jtorch.nn.utils.get_total_norm([p.grad for p in jp], 3.0)
    tt = torch.nn.utils.get_total_norm([p.grad for p in tp], 3.0)
    np.testing.assert_allclose(jt.numpy(), tt.numpy(), rtol=1e-12)
    jtorch.nn.utils.clip_grads_with_norm_(jp, 0.3, jt)
    torch.nn.utils.clip_grads_with_norm_(tp, 0.3, tt)
    _same_grads(jp, tp)
    assert jtorch.nn.utils.get_total_norm([]).item() == 0.0


@pytest.mark.parametrize("clip", [0.5, 2])
def test_clip_grad_value(clip):
    jp, tp = _pair(scale=2, none_at=1)
    assert jtorch.nn.utils.clip_grad_value_(jp, clip) is None
    torch.nn.utils.clip_grad_value_(tp, clip)
    _same_grads(jp, tp)
    jp, tp = _pair(scale=2)
    jtorch.nn.utils.clip_grad_value_(jp[0], clip, foreach=True)
    torch.nn.utils.clip_grad_value_(tp[0], clip, foreach=True)
    _same_grads(jp, tp)


def test_parameters_to_vector_roundtrip():
    jl, tl = jtorch.nn.Linear(3, 2).double(), torch.nn.Linear(3, 2).double()
    with torch.no_grad():
        for (_, a), (_, b) in zip(jl.named_parameters(), tl.named_parameters()):
            b.copy_(torch.from_numpy(a.detach().numpy().copy()))
    jv = jtorch.nn.utils.parameters_to_vector(jl.parameters())
    tv = torch.nn.utils.parameters_to_vector(tl.parameters())
    np.testing.assert_array_equal(jv.detach().numpy(), tv.detach().numpy())
    assert jv.requires_grad
    (jv * jtorch.arange(8.0, dtype=jtorch.float64)).sum().backward()
    np.testing.assert_array_equal(jl.bias.grad.numpy(), [6.0, 7.0])

    new = np.arange(8.0)
    jtorch.nn.utils.vector_to_parameters(jtorch.from_numpy(new.copy()), jl.parameters())
    torch.nn.utils.vector_to_parameters(torch.from_numpy(new.copy()), tl.parameters())
    for (n, a), (_, b) in zip(jl.named_parameters(), tl.named_parameters()):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy(), err_msg=n)
        assert isinstance(a, jtorch.nn.Parameter) and a.requires_grad
    assert tuple(jl.weight.shape) == (2, 3)


def test_vector_to_parameters_type_error():
    for bad in ([1.0, 2.0], np.zeros(2)):
        with pytest.raises(TypeError) as te:
            torch.nn.utils.vector_to_parameters(bad, [])
        with pytest.raises(TypeError, match=re.escape(str(te.value))):
            jtorch.nn.utils.vector_to_parameters(bad, [])
