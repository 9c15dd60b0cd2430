"""Gradient rules of the movement and indexing family (views, copies, __getitem__, the
gather/scatter and index_* ops, masked ops, take) against torch: outputs and input gradients
for a random upstream gradient, grad_fn names, and second order through the gradient ops."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from gradutil import compare_grads, to_torch

import jtorch

RNG = np.random.default_rng(4321)


def _x(*shape, dtype=np.float64, grad=True):
    a = np.array(RNG.standard_normal(shape), dtype=dtype)
    return jtorch.from_numpy(a).requires_grad_(grad)


def _name(t) -> str:
    return type(t.grad_fn).__name__


# -- views and __getitem__ ------------------------------------------------------------------

def _i(m, v):
    return m.tensor(v)


VIEWS = {
    "select": lambda m, x: x[1],
    "select_neg": lambda m, x: x[:, -1],
    "slice": lambda m, x: x[1:],
    "slice_step": lambda m, x: x[::2, 1:, ::3],
    "slice_empty": lambda m, x: x[2:1],
    "basic_mixed": lambda m, x: x[0, None, 1:3, -1],
    "ellipsis": lambda m, x: x[..., 1:2],
    "ellipsis_none": lambda m, x: x[None, ..., None],
    "int_tensor_0d": lambda m, x: x[:, m.tensor(2)],
    "adv": lambda m, x: x[_i(m, [0, 2, 0])],
    "adv_neg": lambda m, x: x[:, _i(m, [-1, 0])],
    "adv_list": lambda m, x: x[[1, 1, 2]],
    "adv_bcast": lambda m, x: x[_i(m, [[0], [2]]), :, _i(m, [1, 1, 4])],
    "adv_bcast_adjacent": lambda m, x: x[:, _i(m, [[0], [3]]), _i(m, [1, 1, 4])],
    "adv_slice": lambda m, x: x[1:, _i(m, [0, 0, 3])],
    "adv_then_slice": lambda m, x: x[_i(m, [2, 2]), ::2],
    "adv_empty": lambda m, x: x[_i(m, [[]]).long()],
    "mask": lambda m, x: x[x > 0],
    "mask_2d": lambda m, x: x[:, (x[0] > 0)],
    "mask_and_index": lambda m, x: x[_i(m, [True, False, True]), :, _i(m, [4, 0])],
    "bool_true": lambda m, x: x[True],
    "bool_false": lambda m, x: x[0, False],
    "diagonal": lambda m, x: x.diagonal(),
    "diagonal_neg": lambda m, x: x.diagonal(-1, -1, 0),
    "diagonal_off": lambda m, x: x.diagonal(2, 1, 2),
    "as_strided": lambda m, x: x.as_strided((3, 3), (2, 1), 1),
    "as_strided_overlap": lambda m, x: x.as_strided((4, 3), (1, 0)),
    "as_strided_expanded_input": lambda m, x: x[:1].expand(3, 4, 5).as_strided((2, 3), (1, 1)),
    "as_strided_of_view": lambda m, x: x[1].as_strided((2, 2), (5, 1), 22),
    "narrow": lambda m, x: x.narrow(-1, 1, 3),
    "unbind": lambda m, x: x.unbind(1),
    "unbind_partial": lambda m, x: x.unbind(-1)[1:3],
    "split": lambda m, x: x.split(2, -1),
    "split_sizes": lambda m, x: x.split([1, 3], 1),
    "chunk": lambda m, x: x.chunk(2, 0),
    "tensor_split": lambda m, x: x.tensor_split([1, 3], 2),
    "hsplit": lambda m, x: x.hsplit(2),
    "movedim": lambda m, x: x.movedim(0, -1),
    "flatten": lambda m, x: x.flatten(1),
    "unflatten": lambda m, x: x.unflatten(-1, (5, 1)),
    "squeeze": lambda m, x: x[:, :1].squeeze(),
    "squeeze_dim": lambda m, x: x[:, :1].squeeze(-2),
    "unsqueeze": lambda m, x: x.unsqueeze(-1),
    "reshape": lambda m, x: x.reshape(12, 5),
    "reshape_copy": lambda m, x: x.transpose(0, 2).reshape(-1),
    "view": lambda m, x: x.view(4, 15),
    "expand_as": lambda m, x: x[:1].expand_as(x),
    "broadcast_to": lambda m, x: x[:, :1].broadcast_to((2, 3, 4, 5)),
    "t": lambda m, x: x[0].t(),
    "T": lambda m, x: x[0].T,
    "mT": lambda m, x: x.mT,
    "transpose": lambda m, x: x.transpose(-1, 0),
    "permute": lambda m, x: x.permute(2, 0, 1),
    "chain": lambda m, x: x.permute(2, 0, 1)[1:, None, 2].flatten().unflatten(0, (-1, 2)),
}


@pytest.mark.parametrize("case", list(VIEWS))
def test_view_grads(case):
    compare_grads(VIEWS[case], _x(3, 4, 5))


def test_views_of_non_contiguous_inputs():
    x = _x(4, 3)
    compare_grads(lambda m, x: x.t()[1:, ::2][:, _i(m, [1, 0, 1])], x)
    compare_grads(lambda m, x: x.t().diagonal(1), x)
    compare_grads(lambda m, x: x.t().as_strided((2, 2), (1, 3), 1), x)
    compare_grads(lambda m, x: x.t().reshape(-1)[::5], x)


def test_views_float32():
    x = _x(3, 4, 5, dtype=np.float32)
    for case in ("adv_bcast", "mask", "slice_step", "as_strided_overlap", "split"):
        compare_grads(VIEWS[case], x, rtol=1e-5, atol=1e-5)


def test_zero_dim_and_empty_inputs():
    s = _x()
    compare_grads(lambda m, x: x[None], s)
    compare_grads(lambda m, x: x[...], s)
    compare_grads(lambda m, x: x[True], s)
    compare_grads(lambda m, x: x[False], s)
    compare_grads(lambda m, x: x.unsqueeze(0).expand(3), s)
    compare_grads(lambda m, x: m.stack([x, x * 2]), s)
    e = _x(0, 3)
    compare_grads(lambda m, x: x[:, 1:], e)
    compare_grads(lambda m, x: x[_i(m, []).long()], e)
    compare_grads(lambda m, x: m.cat([x, x], 1), e)


GRAD_FN_NAMES = {
    "x[0]": (lambda x: x[0], "SelectBackward0"),
    "x[:, 0]": (lambda x: x[:, 0], "SelectBackward0"),
    "x[1:]": (lambda x: x[1:], "SliceBackward0"),
    "x[:]": (lambda x: x[:], "SliceBackward0"),
    "x[0, 1:]": (lambda x: x[0, 1:], "SliceBackward0"),
    "x[1:, 0]": (lambda x: x[1:, 0], "SelectBackward0"),
    "x[:, :]": (lambda x: x[:, :], "AliasBackward0"),
    "x[...]": (lambda x: x[...], "AliasBackward0"),
    "x[None]": (lambda x: x[None], "UnsqueezeBackward0"),
    "x[None, 0]": (lambda x: x[None, 0], "SelectBackward0"),
    "x[idx]": (lambda x: x[jtorch.tensor([0, 1])], "IndexBackward0"),
    "x[mask]": (lambda x: x[x > 0], "IndexBackward0"),
    "x[True]": (lambda x: x[True], "IndexBackward0"),
    "unbind": (lambda x: x.unbind(1)[0], "UnbindBackward0"),
    "split": (lambda x: x.split(2)[1], "SplitBackward0"),
    "chunk": (lambda x: x.chunk(2, -1)[0], "SplitBackward0"),
    "split_sizes": (lambda x: x.split([1, 2])[0], "SplitWithSizesBackward0"),
    "tensor_split": (lambda x: x.tensor_split(2)[0], "SliceBackward0"),
    "view": (lambda x: x.view(-1), "ViewBackward0"),
    "reshape": (lambda x: x.reshape(-1), "ViewBackward0"),
    "reshape_copy": (lambda x: x.transpose(0, 1).reshape(-1), "UnsafeViewBackward0"),
    "permute": (lambda x: x.permute(2, 0, 1), "PermuteBackward0"),
    "movedim": (lambda x: x.movedim(0, 2), "PermuteBackward0"),
    "transpose": (lambda x: x.transpose(0, 1), "TransposeBackward0"),
    "mT": (lambda x: x.mT, "TransposeBackward0"),
    "expand": (lambda x: x[:1].expand(3, 4, 5), "ExpandBackward0"),
    "squeeze()": (lambda x: x[:1].squeeze(), "SqueezeBackward0"),
    "squeeze(0)": (lambda x: x[:1].squeeze(0), "SqueezeBackward1"),
    "squeeze((0,))": (lambda x: x[:1].squeeze((0,)), "SqueezeBackward2"),
    "unsqueeze": (lambda x: x.unsqueeze(1), "UnsqueezeBackward0"),
    "narrow": (lambda x: x.narrow(1, 0, 2), "SliceBackward0"),
    "diagonal": (lambda x: x.diagonal(), "DiagonalBackward0"),
    "as_strided": (lambda x: x.as_strided((2, 2), (1, 2)), "AsStridedBackward0"),
    "cat": (lambda x: jtorch.cat([x, x]), "CatBackward0"),
    "flip": (lambda x: x.flip(0), "FlipBackward0"),
    "roll": (lambda x: x.roll(1), "RollBackward0"),
    "repeat": (lambda x: x.repeat(2, 1, 1), "RepeatBackward0"),
    "tile": (lambda x: x.tile(2), "RepeatBackward0"),
    "tril": (lambda x: x.tril(), "TrilBackward0"),
    "gather": (lambda x: x.gather(0, jtorch.zeros(1, 1, 1, dtype=jtorch.long)), "GatherBackward0"),
    "scatter": (lambda x: x.scatter(0, jtorch.zeros(1, 1, 1, dtype=jtorch.long), x),
                "ScatterBackward0"),
    "scatter_value": (lambda x: x.scatter(0, jtorch.zeros(1, 1, 1, dtype=jtorch.long), 1.0),
                      "ScatterBackward1"),
    "index_put": (lambda x: x.index_put((jtorch.tensor([0]),), jtorch.tensor(1.0, dtype=jtorch.float64)),
                  "IndexPutBackward0"),
    "masked_select": (lambda x: x.masked_select(x > 0), "MaskedSelectBackward0"),
}


@pytest.mark.parametrize("case", list(GRAD_FN_NAMES))
def test_grad_fn_names(case):
    fn, name = GRAD_FN_NAMES[case]
    assert _name(fn(_x(3, 4, 5))) == name


# -- copying movement ops -------------------------------------------------------------------

COPIES = {
    "cat": lambda m, x, y: m.cat([x, y[:1], x], 0),
    "cat_neg_dim": lambda m, x, y: m.cat([x, y], -1),
    "cat_legacy_empty": lambda m, x, y: m.cat([x, m.zeros(0, dtype=x.dtype), y], 1),
    "cat_promote": lambda m, x, y: m.cat([x, y.float()], 0),
    "stack": lambda m, x, y: m.stack([x, y], -1),
    "hstack": lambda m, x, y: m.hstack([x, y]),
    "vstack": lambda m, x, y: m.vstack([x, y]),
    "dstack": lambda m, x, y: m.dstack([x, y]),
    "column_stack": lambda m, x, y: m.column_stack([x[0], y[1]]),
    "flip": lambda m, x, y: x.flip(0, -1),
    "roll": lambda m, x, y: x.roll((1, -2), (0, 1)),
    "roll_flat": lambda m, x, y: y.roll(5),
    "repeat": lambda m, x, y: x.repeat(2, 1, 3),
    "repeat_zero": lambda m, x, y: x.repeat(0, 2),
    "tile": lambda m, x, y: y.tile((2,)),
    "tril": lambda m, x, y: x.tril(1),
    "triu": lambda m, x, y: y.triu(-1),
    "non_contiguous": lambda m, x, y: m.cat([x.t(), y.t().flip(0)], 1).triu().roll(1, 0),
}


@pytest.mark.parametrize("case", list(COPIES))
def test_copy_grads(case):
    compare_grads(COPIES[case], _x(3, 4), _x(3, 4))


def test_copies_float32():
    x, y = _x(3, 4, dtype=np.float32), _x(3, 4, dtype=np.float32)
    for case in ("cat", "stack", "repeat", "roll"):
        compare_grads(COPIES[case], x, y)


# -- index ops ------------------------------------------------------------------------------

def _idx(m, v):
    return m.tensor(v, dtype=m.long)


INDEX_OPS = {
    "gather": lambda m, x, s: x.gather(1, _idx(m, [[0, 3, 3], [2, 2, 1], [1, 0, 0]])),
    "gather_neg_dim": lambda m, x, s: x.gather(-2, _idx(m, [[0, 2], [0, 0]])),
    "take_along_dim": lambda m, x, s: m.take_along_dim(x, _idx(m, [[3], [0], [3]]), 1),
    "index_select": lambda m, x, s: x.index_select(-1, _idx(m, [3, 0, 3])),
    "take": lambda m, x, s: x.take(_idx(m, [[0, -1], [5, 5]])),
    "scatter": lambda m, x, s: x.scatter(1, _idx(m, [[0, 3], [2, 1]]), s[:2, :2]),
    "scatter_value": lambda m, x, s: x.scatter(0, _idx(m, [[0, 2, 1]]), 2.5),
    "scatter_add": lambda m, x, s: x.scatter_add(1, _idx(m, [[0, 0], [2, 0]]), s[1:, 1:]),
    "scatter_add_neg": lambda m, x, s: x.scatter_add(-2, _idx(m, [[0, 0, 2]]), s[:1]),
    "index_add": lambda m, x, s: x.index_add(1, _idx(m, [3, 3, 0]), s),
    "index_add_alpha": lambda m, x, s: x.index_add(0, _idx(m, [2, 0, 2]), m.cat([s.t(), s[:, :1]], 1),
                                                      alpha=-1.5),
    "index_copy": lambda m, x, s: x.index_copy(1, _idx(m, [3, 1, 0]), s),
    "index_fill": lambda m, x, s: x.index_fill(-1, _idx(m, [1, 1, 0]), -2.0),
    "index_fill_tensor": lambda m, x, s: x.index_fill(1, _idx(m, [1, 1, 0]), s[0, 0]),
    "index_put": lambda m, x, s: x.index_put((_idx(m, [0, 2]), _idx(m, [1, 3])), s[0, :2]),
    "index_put_acc": lambda m, x, s: x.index_put((_idx(m, [0, 2, 0]),), s.t()[:, :1],
                                                   accumulate=True),
    "index_put_bcast": lambda m, x, s: x.index_put((_idx(m, [[0], [2]]), _idx(m, [1, 3])), s[0, :2]),
    "index_put_bcast_acc": lambda m, x, s: x.index_put((_idx(m, [1, 1]),), s[:1, :1], True),
    "index_put_mask": lambda m, x, s: x.index_put((x > 0,), s[0, 0]),
    "index_put_0d_idx": lambda m, x, s: x.index_put((m.tensor(1), _idx(m, [0, 2])), s[1, :2]),
    "masked_fill": lambda m, x, s: x.masked_fill(x > 0.2, 3.0),
    "masked_fill_bcast": lambda m, x, s: x.masked_fill(m.tensor([True, False, True, False]), 1.0),
    "masked_fill_tensor": lambda m, x, s: x.masked_fill(x > 0, s[1, 1]),
    "masked_select": lambda m, x, s: x.masked_select(x < 0.5),
    "masked_select_bcast": lambda m, x, s: x[0].masked_select(
        m.tensor([[True, False, True, True], [False, False, True, False]])),
    "masked_scatter": lambda m, x, s: x.masked_scatter(x > 0, s.repeat(2, 2)),
    "masked_scatter_bcast": lambda m, x, s: x[:1].masked_scatter(x > 0, s.repeat(2, 2)),
    "non_contiguous": lambda m, x, s: x.t().index_add(0, _idx(m, [1, 1, 3]), s.t()[:, :3].t()
                                                      .t()[:3]).gather(1, _idx(m, [[2], [0]] * 2)),
}


@pytest.mark.parametrize("case", list(INDEX_OPS))
def test_index_op_grads(case):
    compare_grads(INDEX_OPS[case], _x(3, 4), _x(3, 3))


def test_index_ops_float32():
    x, s = _x(3, 4, dtype=np.float32), _x(3, 3, dtype=np.float32)
    for case in ("gather", "scatter_add", "index_add_alpha", "index_put_acc", "masked_scatter"):
        compare_grads(INDEX_OPS[case], x, s, rtol=1e-5, atol=1e-5)


def test_index_ops_one_input_requires_grad():
    x, s = _x(3, 4), _x(3, 3)
    s0 = _x(3, 3, grad=False)
    x0 = _x(3, 4, grad=False)
    for case in ("scatter", "index_add", "index_copy", "index_put", "masked_scatter"):
        compare_grads(INDEX_OPS[case], x, s0)
        compare_grads(INDEX_OPS[case], x0, s)


def test_take_along_dim_negative_indices():
    """jtorch's take_along_dim wraps negative indices; the gradient goes to the same place."""
    x = _x(2, 3)
    y = jtorch.take_along_dim(x, jtorch.tensor([[-1, 0], [1, -3]]), 1)
    (gx,) = jtorch.autograd.grad(y, x, jtorch.ones(2, 2, dtype=jtorch.float64))
    np.testing.assert_array_equal(gx.numpy(), [[1, 0, 1], [1, 1, 0]])


def test_zero_dim_index_ops():
    s = _x()
    for fn in (lambda m, x: x.gather(0, _idx(m, [0, 0])), lambda m, x: x.take(_idx(m, [0, 0])),
               lambda m, x: x.index_select(0, _idx(m, 0)), lambda m, x: x.scatter(0, _idx(m, 0), 2.0),
               lambda m, x: x.masked_fill(m.tensor(True), 1.0),
               lambda m, x: x.masked_select(m.tensor([True, False])),
               lambda m, x: x.index_fill(0, _idx(m, [0]), 1.0),
               lambda m, x: x.scatter_add(0, _idx(m, [0]), x.reshape(1) * 2)):
        compare_grads(fn, s)


def test_src_larger_than_index():
    """Source elements the index does not reach get a zero gradient (torch raises here)."""
    x, s = _x(3, 4), _x(3, 4)
    idx = jtorch.tensor([[0, 1], [2, 0]])
    y = x.scatter_add(0, idx, s)
    (gs,) = jtorch.autograd.grad(y, s, jtorch.ones(3, 4))
    expect = np.zeros((3, 4))
    expect[:2, :2] = 1
    np.testing.assert_array_equal(gs.numpy(), expect)


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_grads(reduce, include_self):
    x = jtorch.tensor([[1.0, 2.0, 0.0, 4.0], [5.0, 5.0, 3.0, -1.0], [0.0, 7.0, 1.0, 2.0]],
                      dtype=jtorch.float64)
    s = jtorch.tensor([[2.0, 0.0, 5.0], [5.0, 0.5, 3.0], [0.0, 0.0, 7.0]], dtype=jtorch.float64)
    idx = jtorch.tensor([[0, 0, 3], [1, 0, 2], [2, 2, 2]])
    compare_grads(lambda m, x, s: x.scatter_reduce(-1, to_torch(idx) if m is torch else idx, s,
                                                   reduce, include_self=include_self),
                  x.requires_grad_(True), s.requires_grad_(True))


def test_scatter_with_reduce_has_no_derivative():
    x, s = _x(3), _x(2)
    y = x.scatter(0, jtorch.tensor([0, 0]), s, reduce="add")
    with pytest.raises(RuntimeError, match="derivative for aten::scatter is not implemented"):
        y.sum().backward()


def test_nonzero_is_not_differentiable():
    x = _x(3, 4)
    assert x.nonzero().grad_fn is None


def test_setitem_on_a_graph_tensor():
    """``y[index] = v`` on a non-view tensor of the graph (an index_put record)."""
    def fn(m, x, v):
        y = x * 1
        y[_idx(m, [0, 2, 0]), 1:] = v
        y[1] = 5.0
        return y * y

    compare_grads(fn, _x(3, 4), _x(3))
    compare_grads(fn, _x(3, 4), _x(1, 1, 3))


# -- second order ---------------------------------------------------------------------------

def _second_order(fn, *inputs, rtol=1e-6, atol=1e-8):
    """d/d(inputs, g) of <grad(fn(x), x, g), w>: checks that the gradient ops record."""
    res = []
    for m, xs in ((jtorch, inputs), (torch, [to_torch(x) for x in inputs])):
        rng = np.random.default_rng(7)
        y = fn(m, *xs)
        g = m.from_numpy(rng.standard_normal(tuple(y.shape))).requires_grad_(True)
        gx = m.autograd.grad(y, xs, g, create_graph=True)
        s = sum((a * m.from_numpy(rng.standard_normal(tuple(a.shape)))).sum() for a in gx)
        res.append(m.autograd.grad(s, [*xs, g], allow_unused=True))
    for a, b in zip(*res):
        if b is None:
            assert a is None or not np.any(a.numpy())
            continue
        assert a is not None
        np.testing.assert_allclose(a.numpy(), b.detach().numpy(), rtol=rtol, atol=atol)


SECOND_ORDER = {
    "select_slice": lambda m, x: x[1:, 2] * x[:2, 0],
    "index_bcast": lambda m, x: x[_idx(m, [[0], [2]]), _idx(m, [1, 1, 3])] ** 2,
    "mask": lambda m, x: x[x > 0] ** 3,
    "diagonal": lambda m, x: x.diagonal(1).exp(),
    "as_strided": lambda m, x: x.as_strided((3, 2), (1, 0)).sin(),
    "cat_repeat": lambda m, x: m.cat([x, x.repeat(1, 2)], 1) ** 2,
    "gather": lambda m, x: x.gather(1, _idx(m, [[0, 0], [3, 1], [2, 2]])) ** 2,
    "index_select": lambda m, x: x.index_select(1, _idx(m, [0, 0, 3])).exp(),
    "take": lambda m, x: x.take(_idx(m, [1, 1, -1])) ** 2,
    "scatter": lambda m, x: x.scatter(1, _idx(m, [[0], [3], [2]]), x[:, :1] ** 2) ** 2,
    "index_add": lambda m, x: x.index_add(1, _idx(m, [0, 0]), x[:, 1:3] ** 2, alpha=2) ** 2,
    "index_put_acc": lambda m, x: x.index_put((_idx(m, [0, 0]),), x[1] ** 2, True) ** 2,
    "masked_scatter": lambda m, x: x.masked_scatter(x > 0, x.flip(0) ** 2) ** 2,
    "masked_select": lambda m, x: x.masked_select(x > 0) ** 2,
    "scatter_reduce_amax": lambda m, x: x.scatter_reduce(1, _idx(m, [[0, 0], [1, 1], [2, 3]]),
                                                         x[:, 1:3] ** 2, "amax") ** 2,
    "scatter_reduce_prod": lambda m, x: x.scatter_reduce(1, _idx(m, [[0, 0], [1, 1], [2, 3]]),
                                                         x[:, 1:3], "prod"),
    "scatter_reduce_mean": lambda m, x: x.scatter_reduce(0, _idx(m, [[0, 0, 1, 1]]), x[:1] ** 2,
                                                         "mean", include_self=False) ** 2,
}


@pytest.mark.parametrize("case", list(SECOND_ORDER))
def test_second_order(case):
    _second_order(SECOND_ORDER[case], _x(3, 4))
