"""embedding, one_hot, embedding_bag against torch: values, gradients, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import jtorch
import jtorch.nn.functional as JF

RNG = np.random.default_rng(0)
W = RNG.standard_normal((10, 3))


def _run(fn_j, fn_t, w=W):
    jw, tw = jtorch.from_numpy(w.copy()).requires_grad_(), torch.from_numpy(w.copy()).requires_grad_()
    j, t = fn_j(jw), fn_t(tw)
    np.testing.assert_allclose(j.detach().numpy(), t.detach().numpy(), rtol=1e-12)
    g = RNG.standard_normal(tuple(t.shape))
    (j * jtorch.from_numpy(g)).sum().backward()
    (t * torch.from_numpy(g)).sum().backward()
    np.testing.assert_allclose(jw.grad.numpy(), tw.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("kw", [{}, {"padding_idx": 1}, {"scale_grad_by_freq": True},
                                {"padding_idx": -1, "scale_grad_by_freq": True}])
def test_embedding(kw):
    idx = np.array([[1, 2, 1], [9, 0, 2]])
    _run(lambda w: JF.embedding(jtorch.from_numpy(idx), w, **kw),
         lambda w: TF.embedding(torch.from_numpy(idx), w, **kw))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ["repeats", "padding", "negative_padding", "int32", "strided",
                                  "empty", "scalar_index"])
def test_embedding_weight_gradient_is_torchs_bitwise(dtype, case):
    """The one-kernel weight gradient (``embedding_dense_backward``): rows summed in index order,
    padding rows left out, as torch sums them."""
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 5, (7, 6))
    kw = {}
    if case == "padding":
        kw = {"padding_idx": 3}
    elif case == "negative_padding":
        kw = {"padding_idx": -2}
    elif case == "empty":
        idx = idx[:0]
    elif case == "scalar_index":
        idx = np.array(4)
    idx = idx.astype(np.int32 if case == "int32" else np.int64)
    w = rng.standard_normal((5, 8)).astype(dtype)
    g = rng.standard_normal(idx.shape + (8,)).astype(dtype)
    if case == "strided":  # the gradient reaches the rule as a transposed view
        g = np.ascontiguousarray(g.transpose(1, 0, 2)).transpose(1, 0, 2)
    grads = []
    for lib, F in ((jtorch, JF), (torch, TF)):
        wt = lib.from_numpy(w.copy()).requires_grad_()
        F.embedding(lib.from_numpy(idx), wt, **kw).backward(lib.from_numpy(g))
        grads.append(wt.grad.numpy())
    assert grads[0].dtype == grads[1].dtype
    np.testing.assert_array_equal(grads[0], grads[1])


def test_embedding_weight_gradient_takes_one_kernel_and_double_backward_composes():
    """First order runs ``embedding_dense_backward``; under create_graph the rule composes
    differentiable ops, so the second derivative exists (torch's: zero, the map is linear)."""
    from jtorch import dispatch

    seen = []

    class Spy:
        def __call__(self, op, args, plan, params):
            seen.append(op.name)
            prev, dispatch.mode = dispatch.mode, None
            try:
                if plan is None:
                    return dispatch.pointwise(op, args, **params)
                return dispatch.run_plan(op, args, plan)
            finally:
                dispatch.mode = prev

    idx = jtorch.tensor([[1, 0], [1, 2]])
    w = jtorch.from_numpy(W.copy()).requires_grad_()
    y = JF.embedding(idx, w)
    prev, dispatch.mode = dispatch.mode, Spy()
    try:
        y.sum().backward()
    finally:
        dispatch.mode = prev
    assert "embedding_dense_backward" in seen and "index_add" not in seen
    want = np.zeros_like(W)
    np.add.at(want, [1, 0, 1, 2], 1.0)
    np.testing.assert_array_equal(w.grad.numpy(), want)

    w2 = jtorch.from_numpy(W.copy()).requires_grad_()
    (gw,) = jtorch.autograd.grad((JF.embedding(idx, w2) ** 2).sum(), w2, create_graph=True)
    tw = torch.from_numpy(W.copy()).requires_grad_()
    (tg,) = torch.autograd.grad((TF.embedding(torch.from_numpy(idx.numpy()), tw) ** 2).sum(), tw,
                                create_graph=True)
    np.testing.assert_allclose(gw.detach().numpy(), tg.detach().numpy(), rtol=1e-12)
    (h,) = jtorch.autograd.grad(gw.sum(), w2)
    (th,) = torch.autograd.grad(tg.sum(), tw)
    np.testing.assert_allclose(h.numpy(), th.numpy(), rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "complex64"])
def test_embedding_dense_backward_other_dtypes_sum_in_order(dtype):
    """The op's NumPy branch (the rule calls it for float32/float64 only): the rows summed in
    index order (16-bit floats in float32, rounded once), padding rows left out."""
    from jtorch.kernels.defs.indexing import embedding_dense_backward_op

    rng = np.random.default_rng(2)
    idx = rng.integers(0, 5, (4, 3))
    wide = jtorch.complex128 if dtype == "complex64" else jtorch.float64
    g = jtorch.from_numpy(rng.standard_normal((4, 3, 2))).to(getattr(jtorch, dtype))
    got = embedding_dense_backward_op(g, jtorch.from_numpy(idx), num_weights=5, padding_idx=2)
    assert got.dtype is getattr(jtorch, dtype) and tuple(got.shape) == (5, 2)
    want = np.zeros((5, 2), wide.np)
    rows = g.to(wide).numpy().reshape(-1, 2)
    for i, k in enumerate(idx.reshape(-1)):
        if k != 2:
            want[k] += rows[i]
    tol = {"float16": 2e-3, "bfloat16": 1e-2, "complex64": 1e-6}[dtype]
    np.testing.assert_allclose(got.to(wide).numpy(), want, rtol=tol, atol=tol)
    assert not got.to(wide).numpy()[2].any()


def test_embedding_max_norm_renormalises_in_place():
    idx = np.array([1, 2, 1])
    jw, tw = jtorch.from_numpy(W.copy()), torch.from_numpy(W.copy())
    j = JF.embedding(jtorch.from_numpy(idx), jw, max_norm=1.0)
    t = TF.embedding(torch.from_numpy(idx), tw, max_norm=1.0)
    np.testing.assert_allclose(jw.numpy(), tw.numpy(), rtol=1e-6)
    np.testing.assert_allclose(j.numpy(), t.numpy(), rtol=1e-6)


def test_one_hot():
    for x in ([[0, 2], [1, 1]], [3]):
        assert JF.one_hot(jtorch.tensor(x)).tolist() == TF.one_hot(torch.tensor(x)).tolist()
    assert JF.one_hot(jtorch.tensor([1]), 4).dtype is jtorch.int64


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("kw", [{}, {"padding_idx": 2}, {"include_last_offset": True}])
def test_embedding_bag_offsets(mode, kw):
    x, off = np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 4, 4])
    _run(lambda w: JF.embedding_bag(jtorch.from_numpy(x), w, jtorch.from_numpy(off), mode=mode,
                                    **kw),
         lambda w: TF.embedding_bag(torch.from_numpy(x), w, torch.from_numpy(off), mode=mode, **kw))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_2d_and_per_sample_weights(mode):
    idx = np.array([[1, 2, 1], [9, 0, 2]])
    _run(lambda w: JF.embedding_bag(jtorch.from_numpy(idx), w, mode=mode),
         lambda w: TF.embedding_bag(torch.from_numpy(idx), w, mode=mode))
    if mode == "sum":
        psw = RNG.standard_normal(6)
        _run(lambda w: JF.embedding_bag(jtorch.from_numpy(idx), w, mode="sum",
                                        per_sample_weights=jtorch.from_numpy(psw.reshape(2, 3))),
             lambda w: TF.embedding_bag(torch.from_numpy(idx), w, mode="sum",
                                        per_sample_weights=torch.from_numpy(psw.reshape(2, 3))))


ERRORS = [
    (lambda m: m.nn.functional.embedding(m.tensor([[1, 10]]), m.ones(10, 3)), IndexError,
     "index out of range in self"),
    (lambda m: m.nn.functional.embedding(m.tensor([1.0]), m.ones(10, 3)), RuntimeError,
     "Expected tensor for argument #1 'indices' to have one of the following scalar types: "
     "Long, Int; but got torch.FloatTensor instead"),
    (lambda m: m.nn.functional.one_hot(m.tensor([1, -1])), RuntimeError,
     "Class values must be non-negative."),
    (lambda m: m.nn.functional.one_hot(m.tensor([1, 5]), 3), RuntimeError,
     "Class values must be smaller than num_classes."),
    (lambda m: m.nn.functional.one_hot(m.tensor([1.0, 2.0])), RuntimeError,
     "one_hot is only applicable to index tensor of type LongTensor."),
    (lambda m: m.nn.functional.one_hot(m.tensor([], dtype=m.long)), RuntimeError,
     "Can not infer total number of classes from empty tensor."),
    (lambda m: m.nn.functional.embedding(m.tensor([1]), m.ones(10, 3), padding_idx=20),
     AssertionError, "Padding_idx must be within num_embeddings"),
]


@pytest.mark.parametrize("case", range(len(ERRORS)))
def test_errors(case):
    fn, exc, msg = ERRORS[case]
    for m in (jtorch, torch):
        with pytest.raises(exc, match=msg):
            fn(m)


def test_embedding_bag_refuses_an_integer_weight_as_torch():
    for lib in (torch, jtorch):
        with pytest.raises(RuntimeError, match="'weight' to have one of the following scalar types"
                                               ": Half, BFloat16, Float, Double; but got "
                                               "torch.LongTensor instead"):
            lib.nn.functional.embedding_bag(lib.tensor([0, 1]), lib.ones(3, 2, dtype=lib.int64),
                                            lib.tensor([0]))
