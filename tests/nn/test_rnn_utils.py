"""torch.nn.utils.rnn (PackedSequence, pack/pad helpers) and the recurrent layers on packed
input, against torch: values, lengths and indices, gradients, and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.nn.utils import rnn as TR

import jtorch
from jtorch.nn.utils import rnn as JR

from test_rnn_attention import _close, copy_weights

RNG = np.random.default_rng(0)


def _pair(a: np.ndarray, grad: bool = True):
    j, t = jtorch.from_numpy(a.copy()), torch.from_numpy(a.copy())
    return (j.requires_grad_(), t.requires_grad_()) if grad else (j, t)


def _same(j, t):
    assert j.dtype.__repr__() == t.dtype.__repr__() and tuple(j.shape) == tuple(t.shape)
    np.testing.assert_allclose(j.detach().numpy(), t.detach().numpy(), rtol=1e-12, atol=0)


def _same_packed(j, t, data_check=_same):
    data_check(j.data, t.data)
    _same(j.batch_sizes, t.batch_sizes)
    for a, b in [(j.sorted_indices, t.sorted_indices), (j.unsorted_indices, t.unsorted_indices)]:
        assert (a is None) == (b is None)
        if a is not None:
            _same(a, b)


def _backward_both(j, t, jx, tx):
    g = RNG.standard_normal(tuple(t.shape))
    j.backward(jtorch.from_numpy(g.copy()))
    t.backward(torch.from_numpy(g.copy()))
    _same(jx.grad, tx.grad)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths,enforce_sorted", [
    ([5, 3, 3, 1], True), ([2, 5, 1, 3], False), ([3, 3, 3, 3], False), ([4, 2, 4, 1], False),
])
@pytest.mark.parametrize("as_tensor", [False, True])
def test_pack_and_pad_match_torch(batch_first, lengths, enforce_sorted, as_tensor):
    shape = (4, 5, 3) if batch_first else (5, 4, 3)
    jx, tx = _pair(RNG.standard_normal(shape))
    jl = jtorch.tensor(lengths, dtype=jtorch.int32) if as_tensor else lengths
    tl = torch.tensor(lengths, dtype=torch.int32) if as_tensor else lengths
    jp = JR.pack_padded_sequence(jx, jl, batch_first, enforce_sorted)
    tp = TR.pack_padded_sequence(tx, tl, batch_first, enforce_sorted)
    assert isinstance(jp, JR.PackedSequence) and isinstance(jp, tuple)
    _same_packed(jp, tp)
    for kw in [{}, {"padding_value": -2.5}, {"total_length": 7}]:
        jo, jn = JR.pad_packed_sequence(jp, batch_first, **kw)
        to, tn = TR.pad_packed_sequence(tp, batch_first, **kw)
        _same(jo, to)
        _same(jn, tn)
        assert jo.stride() == to.stride()
    jo, _ = JR.pad_packed_sequence(jp, batch_first, 1.5)
    to, _ = TR.pad_packed_sequence(tp, batch_first, 1.5)
    _backward_both(jo, to, jx, tx)


def test_pack_integer_data_and_trailing_dims():
    a = RNG.integers(-5, 5, (3, 2, 2, 2))
    jp = JR.pack_padded_sequence(jtorch.from_numpy(a), [3, 2])
    tp = TR.pack_padded_sequence(torch.from_numpy(a), [3, 2])
    _same_packed(jp, tp)
    _same(JR.pad_packed_sequence(jp, padding_value=7)[0], TR.pad_packed_sequence(tp, padding_value=7)[0])


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first, padding_side):
    arrays = [RNG.standard_normal((n, 2, 3)) for n in (3, 5, 1, 0)]
    js, ts = zip(*[_pair(a) for a in arrays])
    jo = JR.pad_sequence(list(js), batch_first, -1.0, padding_side)
    to = TR.pad_sequence(list(ts), batch_first, -1.0, padding_side)
    _same(jo, to)
    assert jo.stride() == to.stride()
    g = RNG.standard_normal(tuple(to.shape))
    jo.backward(jtorch.from_numpy(g.copy()))
    to.backward(torch.from_numpy(g.copy()))
    for a, b in zip(js, ts):
        _same(a.grad, b.grad)


def test_pad_sequence_dtype_broadcast_and_tensor_input():
    for mk in [lambda T: [T.ones(2), T.arange(3)], lambda T: [T.arange(2), T.ones(3)],
               lambda T: [T.ones(2, 3), T.arange(3.0).reshape(3, 1)],
               lambda T: T.arange(6.0).reshape(2, 3)]:
        _same(JR.pad_sequence(mk(jtorch), padding_value=9), TR.pad_sequence(mk(torch), padding_value=9))


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_unpack_unpad_sequence(enforce_sorted):
    lengths = [4, 3, 1] if enforce_sorted else [1, 4, 3]
    js, ts = zip(*[_pair(RNG.standard_normal((n, 2))) for n in lengths])
    jp = JR.pack_sequence(list(js), enforce_sorted)
    tp = TR.pack_sequence(list(ts), enforce_sorted)
    _same_packed(jp, tp)
    ju, tu = JR.unpack_sequence(jp), TR.unpack_sequence(tp)
    assert len(ju) == len(tu)
    for a, b in zip(ju, tu):
        _same(a, b)
    sum((a * a).sum() for a in ju).backward()
    sum((b * b).sum() for b in tu).backward()
    for a, b in zip(js, ts):
        _same(a.grad, b.grad)
    for batch_first in (False, True):
        jpad = JR.pad_sequence(list(js), batch_first)
        tpad = TR.pad_sequence(list(ts), batch_first)
        jl, tl = jtorch.tensor(lengths), torch.tensor(lengths)
        for a, b in zip(JR.unpad_sequence(jpad, jl, batch_first),
                        TR.unpad_sequence(tpad, tl, batch_first)):
            _same(a, b)


def test_packed_sequence_object():
    jp = JR.pack_sequence([jtorch.ones(3, 2), jtorch.ones(1, 2)])
    tp = TR.pack_sequence([torch.ones(3, 2), torch.ones(1, 2)])
    assert jp._fields == tp._fields and len(jp) == 4
    assert repr(jp) == repr(tp)
    assert jp.to(jtorch.float32) is jp and jp.float() is jp and jp.cpu() is jp
    for name in ["double", "half", "long", "int", "short", "char", "byte"]:
        assert repr(getattr(jp, name)().data.dtype) == repr(getattr(tp, name)().data.dtype)
    assert jp.is_cuda is False and jp.is_pinned() is False
    data, bs, si, ui = jp
    assert si is None and ui is None and bs.tolist() == [2, 1, 1]
    built = JR.PackedSequence((data, bs))
    _same(built.batch_sizes, tp.batch_sizes)
    perm = JR.PackedSequence(data, bs, jtorch.tensor([2, 0, 1]))
    _same(perm.unsorted_indices, TR.PackedSequence(tp.data, tp.batch_sizes,
                                                     torch.tensor([2, 0, 1])).unsorted_indices)
    _same(JR.invert_permutation(jtorch.tensor([3, 0, 2, 1])),
          TR.invert_permutation(torch.tensor([3, 0, 2, 1])))
    assert JR.invert_permutation(None) is None
    assert jtorch.nn.utils.rnn is JR


def _x(T):
    return T.ones(4, 3, 2)


ERRORS = [
    lambda R, T: R.pack_padded_sequence(_x(T), [4, 2, 3]),
    lambda R, T: R.pack_padded_sequence(_x(T), [4, 3]),
    lambda R, T: R.pack_padded_sequence(_x(T), [4, 3, 0]),
    lambda R, T: R.pack_padded_sequence(_x(T), [4, 3, -1]),
    lambda R, T: R.pack_padded_sequence(_x(T), [0, 4, 2], enforce_sorted=False),
    lambda R, T: R.pack_padded_sequence(_x(T), [[4, 3, 1]]),
    lambda R, T: R.pack_padded_sequence(T.ones(0, 3, 2), [4, 3, 1]),
    lambda R, T: R.pack_padded_sequence(T.ones(4), [4]),
    lambda R, T: R.pad_packed_sequence(R.pack_padded_sequence(_x(T), [4, 2, 1]), total_length=3),
    lambda R, T: R.pad_sequence([T.ones(2, 3), T.ones(3, 2)]),
    lambda R, T: R.pad_sequence([T.ones(2, 3), T.ones(3, 3, 1)]),
    lambda R, T: R.pad_sequence([]),
    lambda R, T: R.pad_sequence(3),
    lambda R, T: R.pad_sequence([T.ones(2)], padding_side="up"),
    lambda R, T: R.pad_sequence([T.ones(())]),
    lambda R, T: R.PackedSequence(T.ones(3)),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors_match_torch(i):
    with pytest.raises(Exception) as te:
        ERRORS[i](TR, torch)
    with pytest.raises(type(te.value)) as je:
        ERRORS[i](JR, jtorch)
    assert str(je.value) == str(te.value)


def test_lengths_past_the_padded_length_raise():
    """torch reads past the input here; jtorch refuses."""
    with pytest.raises(RuntimeError, match="at most the padded length 4, but got 5"):
        JR.pack_padded_sequence(_x(jtorch), [5, 3, 2])


# -- recurrent layers on packed input -------------------------------------------------------

@pytest.mark.parametrize("cls", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("enforce_sorted,batch_first,bidirectional", [
    (True, False, False), (False, False, True), (False, True, False), (True, True, True),
])
@pytest.mark.parametrize("with_hx", [False, True])
def test_recurrent_layers_on_packed_input(cls, enforce_sorted, batch_first, bidirectional, with_hx):
    kw = {"num_layers": 2, "batch_first": batch_first, "bidirectional": bidirectional}
    j = getattr(jtorch.nn, cls)(3, 4, **kw).double()
    t = getattr(torch.nn, cls)(3, 4, **kw).double()
    copy_weights(j, t)
    lengths = [5, 4, 2, 2, 1] if enforce_sorted else [2, 5, 1, 4, 2]
    shape = (5, 5, 3)
    jx, tx = _pair(RNG.standard_normal(shape))
    jp = JR.pack_padded_sequence(jx, lengths, batch_first, enforce_sorted)
    tp = TR.pack_padded_sequence(tx, lengths, batch_first, enforce_sorted)
    ndir = 2 if bidirectional else 1
    jhx = thx = None
    hx_leaves = []
    if with_hx:
        hx_leaves = pairs = [_pair(RNG.standard_normal((2 * ndir, 5, 4)))
                             for _ in range(2 if cls == "LSTM" else 1)]
        jhx = tuple(p[0] for p in pairs) if cls == "LSTM" else pairs[0][0]
        thx = tuple(p[1] for p in pairs) if cls == "LSTM" else pairs[0][1]
    jo, jh = j(jp, jhx)
    to, th = t(tp, thx)
    assert isinstance(jo, JR.PackedSequence)
    _same_packed(jo, to, _close)
    jh, th = (jh, th) if cls == "LSTM" else ((jh,), (th,))
    for a, b in zip(jh, th):
        _close(a, b)
    jpad, _ = JR.pad_packed_sequence(jo, batch_first)
    tpad, _ = TR.pad_packed_sequence(to, batch_first)
    _close(jpad, tpad)
    g = RNG.standard_normal(tuple(tpad.shape))
    gh = [RNG.standard_normal(tuple(b.shape)) for b in th]
    jloss = (jpad * jtorch.from_numpy(g)).sum() + sum((a * jtorch.from_numpy(w)).sum()
                                                     for a, w in zip(jh, gh))
    tloss = (tpad * torch.from_numpy(g)).sum() + sum((b * torch.from_numpy(w)).sum()
                                                    for b, w in zip(th, gh))
    jloss.backward()
    tloss.backward()
    _close(jx.grad, tx.grad)
    for a, b in hx_leaves:
        _close(a.grad, b.grad)
    for (n, a), (_, b) in zip(j.named_parameters(), t.named_parameters()):
        _close(a.grad, b.grad, msg=n)


def test_lstm_with_projection_on_packed_input():
    j, t = jtorch.nn.LSTM(3, 5, proj_size=2).double(), torch.nn.LSTM(3, 5, proj_size=2).double()
    copy_weights(j, t)
    arrays = [RNG.standard_normal((n, 3)) for n in (2, 4, 3)]
    js, ts = zip(*[_pair(a) for a in arrays])
    jo, (jh, jc) = j(JR.pack_sequence(list(js), enforce_sorted=False))
    to, (th, tc) = t(TR.pack_sequence(list(ts), enforce_sorted=False))
    _same_packed(jo, to, _close)
    _close(jh, th)
    _close(jc, tc)
    (jo.data.sum() + jh.sum() + jc.sum()).backward()
    (to.data.sum() + th.sum() + tc.sum()).backward()
    for a, b in zip(js, ts):
        _close(a.grad, b.grad)


def test_packed_input_errors():
    j = jtorch.nn.GRU(3, 4)
    bad = JR.PackedSequence(jtorch.ones(4, 1, 3), jtorch.tensor([2, 2]))
    with pytest.raises(RuntimeError, match="input must have 2 dimensions, got 3"):
        j(bad)
    p = JR.pack_sequence([jtorch.ones(2, 3), jtorch.ones(1, 3)])
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[1, 3, 4\]"):
        j(p, jtorch.zeros(1, 3, 4))


@pytest.mark.parametrize("bidirectional", [False, True])
def test_empty_sequences(bidirectional):
    for T in (torch, jtorch):
        with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0"):
            T.nn.GRU(3, 4, bidirectional=bidirectional)(T.ones(0, 2, 3))
    j = jtorch.nn.LSTM(3, 4, bidirectional=bidirectional)
    t = torch.nn.LSTM(3, 4, bidirectional=bidirectional)
    jo, (jh, jc) = j(jtorch.ones(2, 0, 3))
    to, (th, tc) = t(torch.ones(2, 0, 3))
    assert (tuple(jo.shape), tuple(jh.shape), tuple(jc.shape)) == \
        (tuple(to.shape), tuple(th.shape), tuple(tc.shape))
