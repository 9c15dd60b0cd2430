"""Helpers of the sparse tests: the same call under torch and jtorch, compared."""

from __future__ import annotations

import numpy as np
import torch
from helpers import same

import jtorch

LIBS = (torch, jtorch)


def same_sparse(j, t, *, rtol: float = 0.0, atol: float = 0.0, layout_only: bool = False) -> None:
    """``j`` is torch's sparse result ``t``: layout, size, dtype, sparse and dense dims, the
    dense tensor it stands for; and where both are coalesced, the same indices and values in
    the same order (uncoalesced ones may store their entries differently)."""
    assert isinstance(j, jtorch.Tensor) and j.is_sparse, f"not sparse: {j!r}"
    assert j.layout is jtorch.sparse_coo
    assert tuple(j.shape) == tuple(t.shape), (tuple(j.shape), tuple(t.shape))
    assert str(j.dtype) == str(t.dtype), (j.dtype, t.dtype)
    assert (j.sparse_dim(), j.dense_dim()) == (t.sparse_dim(), t.dense_dim())
    same(j.to_dense().detach(), t.to_dense().detach(), rtol=rtol, atol=atol)
    if not layout_only and j.is_coalesced() and t.is_coalesced():
        same(j._indices(), t._indices())
        same(j._values().detach(), t._values().detach(), rtol=rtol, atol=atol)


def compare(j, t, *, rtol: float = 0.0, atol: float = 0.0) -> None:
    """Results of one call: sparse ones by ``same_sparse``, anything else by ``same``."""
    if isinstance(t, torch.Tensor) and t.is_sparse:
        same_sparse(j, t, rtol=rtol, atol=atol)
    elif isinstance(t, torch.Tensor):
        assert not j.is_sparse, f"sparse where torch is dense: {j!r}"
        same(j.detach(), t.detach(), rtol=rtol, atol=atol)
    elif isinstance(t, (tuple, list)):
        assert len(j) == len(t)
        for a, b in zip(j, t):
            compare(a, b, rtol=rtol, atol=atol)
    else:
        assert j == t, (j, t)


def outcome(fn, lib):
    try:
        return fn(lib), None
    except Exception as e:  # noqa: BLE001  (the error is compared)
        return None, e


def check(fn, *, rtol: float = 0.0, atol: float = 0.0, message: bool = True) -> None:
    """``fn(lib)`` under torch and jtorch: equal results, or errors of one type (and message,
    unless ``message=False``: torch's overload suffixes, ``aten::eq.Tensor``, differ)."""
    t, te = outcome(fn, torch)
    j, je = outcome(fn, jtorch)
    if te is not None:
        assert je is not None, f"torch raised {te!r}, jtorch returned {j!r}"
        assert isinstance(je, type(te)), (te, je)
        if message:  # torch's first line may go on (its dispatch-key list): a prefix
            assert str(te).split("\n")[0].startswith(str(je).split("\n")[0]), (str(te), str(je))
        return
    if je is not None:
        raise AssertionError(f"jtorch raised, torch returned {t!r}") from je
    compare(j, t, rtol=rtol, atol=atol)


def sp(lib, indices, values, size=None, **kw):
    """A sparse COO tensor of ``lib`` from NumPy-able indices and values."""
    vals = values if isinstance(values, lib.Tensor) else lib.tensor(np.asarray(values))
    return lib.sparse_coo_tensor(lib.tensor(np.asarray(indices)), vals, size, **kw)


def rand_sparse(lib, shape, nnz: int, *, seed: int = 0, dtype=None, dense_dims=(),
                duplicates: bool = True):
    """A random sparse tensor over the first ``len(shape)`` dims (``dense_dims`` after them),
    uncoalesced (``duplicates``: some positions stored twice)."""
    rng = np.random.default_rng(seed)
    idx = np.stack([rng.integers(0, n, nnz) for n in shape]) if nnz else \
        np.zeros((len(shape), 0), np.int64)
    if duplicates and nnz > 3:
        idx[:, -2:] = idx[:, :2]
    vals = rng.standard_normal((nnz, *dense_dims))
    d = dtype if dtype is not None else lib.float32
    if d in (lib.int64, lib.int32):
        vals = np.round(vals * 3)
    return lib.sparse_coo_tensor(lib.tensor(idx), lib.tensor(vals, dtype=d),
                                 (*shape, *dense_dims))
