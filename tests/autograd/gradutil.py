"""Shared by the autograd tests: run one function under jtorch and torch, compare values and
gradients (and a numerical check where torch is not the reference)."""

from __future__ import annotations

import numpy as np
import torch

import jtorch


def to_torch(x):
    if isinstance(x, jtorch.Tensor):
        t = torch.from_numpy(np.array(x.detach().numpy()))
        return t.requires_grad_(x.requires_grad)
    if isinstance(x, (list, tuple)):
        return type(x)(to_torch(v) for v in x)
    return x


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [o for o in out if o is not None and o.dtype.is_floating_point]
    return [out]


def compare_grads(fn, *inputs, mod_kwargs=None, rtol=1e-5, atol=1e-6, seed=0):
    """``fn(mod, *inputs)`` under jtorch and torch: same outputs, same input gradients for a
    random upstream gradient. ``inputs`` are jtorch tensors (requires_grad set as wanted)."""
    tin = [to_torch(x) for x in inputs]
    jout = _flat(fn(jtorch, *inputs))
    tout = _flat(fn(torch, *tin))
    assert len(jout) == len(tout)
    rng = np.random.default_rng(seed)
    jg, tg = [], []
    for j, t in zip(jout, tout):
        np.testing.assert_allclose(j.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)
        assert tuple(j.shape) == tuple(t.shape)
        g = rng.standard_normal(tuple(t.shape)).astype(t.detach().numpy().dtype)
        jg.append(jtorch.from_numpy(g.copy()))
        tg.append(torch.from_numpy(g.copy()))
    jx = [x for x in inputs if isinstance(x, jtorch.Tensor) and x.requires_grad]
    tx = [x for x in tin if isinstance(x, torch.Tensor) and x.requires_grad]
    if not jx:
        return
    pairs = [(j, g) for j, g in zip(jout, jg) if j.requires_grad]
    tpairs = [(t, g) for t, g in zip(tout, tg) if t.requires_grad]
    jr = jtorch.autograd.grad([p[0] for p in pairs], jx, [p[1] for p in pairs], allow_unused=True)
    tr = torch.autograd.grad([p[0] for p in tpairs], tx, [p[1] for p in tpairs], allow_unused=True)
    for a, b in zip(jr, tr):
        if b is None:
            assert a is None or not np.any(a.numpy())
            continue
        assert a is not None, "jtorch gave no gradient where torch gives one"
        assert a.dtype.name == str(b.dtype).split(".")[1]
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol)
