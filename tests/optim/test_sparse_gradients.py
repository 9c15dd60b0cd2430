"""Sparse gradients as torch makes them: ``nn.Embedding(..., sparse=True)`` gives a COO
gradient with a row per looked-up index; SparseAdam, SGD, Adagrad and LBFGS step with it as
torch's do, and the other optimizers raise torch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch


def _dense(g):
    return g.to_dense().numpy()


def test_embedding_sparse_gradient_matches_torch():
    for kw, idx in [({}, [[1, 2], [2, 5]]), ({"padding_idx": 2}, [[1, 2], [2, 5]]),
                    ({"padding_idx": 1}, [[1, 1]]), ({}, [[]])]:
        got = {}
        for lib in (torch, jtorch):
            lib.manual_seed(0)
            emb = lib.nn.Embedding(6, 3, sparse=True, **kw)
            out = emb(lib.tensor(idx, dtype=lib.int64))
            (out * lib.arange(3.0)).sum().backward()
            g = emb.weight.grad
            assert g.is_sparse and g.layout == lib.sparse_coo
            got[lib.__name__] = (g._indices().numpy(), g._values().numpy(), tuple(g.shape),
                                 g.is_coalesced())
        t, j = got["torch"], got["jtorch"]
        np.testing.assert_array_equal(j[0], t[0])
        np.testing.assert_array_equal(j[1], t[1])
        assert j[2:] == t[2:]


def test_sparse_gradients_accumulate_and_mix_with_dense_ones():
    for lib in (torch, jtorch):
        emb = lib.nn.Embedding(5, 2, sparse=True)
        emb(lib.tensor([1, 2])).sum().backward()
        emb(lib.tensor([2, 4])).sum().backward()  # sparse + sparse: the indices concatenated
        g = emb.weight.grad
        assert g.is_sparse and g._nnz() == 4
        np.testing.assert_array_equal(_dense(g)[:, 0], [0, 1, 2, 0, 1])
        emb.weight.grad = None
        (emb(lib.tensor([1])).sum() + emb.weight.sum()).backward()  # with a dense path: dense
        assert not emb.weight.grad.is_sparse
        np.testing.assert_array_equal(emb.weight.grad.numpy()[:, 0], [1, 2, 1, 1, 1])
        with pytest.raises(RuntimeError, match="scale_grad_by_freq not supported with sparse"):
            e2 = lib.nn.Embedding(5, 2, sparse=True, scale_grad_by_freq=True)
            e2(lib.tensor([1, 1])).sum().backward()


@pytest.mark.parametrize("name,kw", [
    ("SparseAdam", {"lr": 0.1}), ("SparseAdam", {"lr": 0.05, "betas": (0.8, 0.9),
                                                 "maximize": True}),
    ("SGD", {"lr": 0.1}), ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.5, "maximize": True}),
    ("Adagrad", {"lr": 0.1}), ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "maximize": True}),
    ("LBFGS", {"lr": 0.1}),
])
def test_optimizers_step_with_sparse_gradients_as_torch(name, kw):
    res = {}
    for lib in (torch, jtorch):
        lib.manual_seed(0)
        emb = lib.nn.Embedding(10, 3, sparse=True, padding_idx=0)
        opt = getattr(lib.optim, name)(emb.parameters(), **kw)
        for step in range(4):
            idx = lib.tensor([[1, 2], [2, 5], [0, 0]]) if step % 2 == 0 else lib.tensor([[7, 7]])

            def closure():
                opt.zero_grad()
                loss = (emb(idx) ** 2).sum() + emb(idx).sum()
                loss.backward()
                return loss

            if name == "LBFGS":
                opt.step(closure)
            else:
                closure()
                opt.step()
        res[lib.__name__] = emb.weight.detach().numpy().copy()
        if name == "SparseAdam":
            assert opt.state[emb.weight]["step"] == 4
    # rows no gradient touched stay exactly as initialised; the others agree to rounding
    np.testing.assert_allclose(res["jtorch"], res["torch"], rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(res["jtorch"][[3, 4, 6, 8, 9]], res["torch"][[3, 4, 6, 8, 9]])


def test_optimizers_without_a_sparse_update_raise_torch_s_errors():
    for lib in (torch, jtorch):
        emb = lib.nn.Embedding(4, 2, sparse=True)
        for name, msg in [("Adam", "Adam does not support sparse gradients, please consider "
                                   "SparseAdam instead"),
                          ("AdamW", "Adam does not support sparse gradients"),
                          ("RMSprop", "RMSprop does not support sparse gradients"),
                          ("NAdam", "NAdam does not support sparse gradients"),
                          ("Adadelta", "Adadelta does not support sparse gradients")]:
            opt = getattr(lib.optim, name)(emb.parameters())
            emb(lib.tensor([1])).sum().backward()
            with pytest.raises(RuntimeError, match=msg):
                opt.step()
            opt.zero_grad()
        emb(lib.tensor([1])).sum().backward()
        with pytest.raises(RuntimeError, match="add\\(sparse, dense\\) is not supported"):
            lib.optim.SGD(emb.parameters(), lr=0.1, weight_decay=0.1).step()
        with pytest.raises(RuntimeError, match="weight_decay option is not compatible"):
            lib.optim.Adagrad(emb.parameters(), lr=0.1, weight_decay=0.1).step()
        emb.weight.grad = lib.ones(4, 2)
        with pytest.raises(RuntimeError, match="SparseAdam does not support dense gradients"):
            lib.optim.SparseAdam(emb.parameters()).step()


def test_compiled_model_gives_the_sparse_gradient():
    jtorch.manual_seed(0)
    m = jtorch.nn.Sequential(jtorch.nn.Embedding(10, 4, sparse=True), jtorch.nn.Flatten(),
                             jtorch.nn.Linear(8, 2))
    x = jtorch.tensor([[1, 2], [3, 3]])
    jtorch.compile(m)(x).sum().backward()
    g = m[0].weight.grad
    assert g.is_sparse
    want = m[0].weight.grad.to_dense().numpy().copy()
    m.zero_grad()
    m(x).sum().backward()
    np.testing.assert_array_equal(want, m[0].weight.grad.to_dense().numpy())


@pytest.mark.parametrize("mode,pad,psw", [("sum", None, False), ("mean", None, False),
                                          ("sum", 2, False), ("sum", None, True)])
def test_embedding_bag_sparse_gradient_matches_torch(mode, pad, psw):
    got = {}
    for lib in (torch, jtorch):
        lib.manual_seed(0)
        e = lib.nn.EmbeddingBag(6, 2, mode=mode, sparse=True, padding_idx=pad)
        w = lib.tensor([0.5, 1.0, 2.0, 3.0]) if psw else None
        e(lib.tensor([1, 2, 4, 4]), lib.tensor([0, 2]), per_sample_weights=w).pow(2).sum() \
            .backward()
        g = e.weight.grad
        assert g.is_sparse
        got[lib.__name__] = (g._indices().numpy(), g._values().numpy())
        with pytest.raises(ValueError, match="max mode does not support sparse weights"):
            lib.nn.EmbeddingBag(6, 2, mode="max", sparse=True)(lib.tensor([[1, 2]]))
    np.testing.assert_array_equal(got["jtorch"][0], got["torch"][0])
    np.testing.assert_allclose(got["jtorch"][1], got["torch"][1], rtol=1e-6)


def test_a_dense_gradient_after_a_sparse_one_accumulates_dense():
    for lib in (torch, jtorch):
        e = lib.nn.Embedding(4, 2, sparse=True)
        e(lib.tensor([1])).sum().backward()
        e.weight.sum().backward()  # sparse .grad, then a dense gradient: a dense sum
        e(lib.tensor([2])).sum().backward()
        assert not e.weight.grad.is_sparse
        assert e.weight.grad[:, 0].tolist() == [1.0, 2.0, 2.0, 1.0]
