"""The fused LSTM layer (``lstm_layer``, kernels/defs/rnn.py): nn.LSTM against torch with copied
weights on float32 and float64 (outputs, final states, gradients of the input, the initial
state and every weight), packed and edge-case shapes, gradcheck / gradgradcheck on tiny sizes,
and the step-by-step fallback for what the op does not take."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch
from jtorch.autograd import gradcheck, gradgradcheck
from jtorch.kernels.defs.rnn import lstm_layer_op, rnn_layer_steps

RNG = np.random.default_rng(0)
TOL = {"float32": (2e-5, 2e-6), "float64": (1e-9, 1e-11)}


def copy_weights(j, t) -> None:
    with torch.no_grad():
        for (a, pa), (b, pb) in zip(j.named_parameters(), t.named_parameters()):
            assert a == b
            pb.copy_(torch.from_numpy(pa.detach().numpy().copy()))


def _pair(a: np.ndarray, grad: bool = True):
    j, t = jtorch.from_numpy(a.copy()), torch.from_numpy(a.copy())
    return (j.requires_grad_(), t.requires_grad_()) if grad else (j, t)


def _close(a, b, dtype: str, msg: str = "") -> None:
    rtol, atol = TOL[dtype]
    a = a.detach().numpy() if hasattr(a, "detach") else a
    b = b.detach().numpy() if hasattr(b, "detach") else b
    scale = max(1.0, float(np.abs(b).max())) if b.size else 1.0
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol * scale, err_msg=msg)


def _node_names(t) -> set:
    seen, stack, names = set(), [t.grad_fn], set()
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        names.add(type(n).__name__)
        stack.extend(e[0] for e in n.next_functions)
    return names


def _compare(kw: dict, shape: tuple, dtype: str, with_hx: bool, noncontig: bool = False,
             input_size: int = 3, hidden: int = 4) -> None:
    j = jtorch.nn.LSTM(input_size, hidden, **kw).to(getattr(jtorch, dtype))
    t = torch.nn.LSTM(input_size, hidden, **kw).to(getattr(torch, dtype))
    copy_weights(j, t)
    x = RNG.standard_normal(shape).astype(dtype)
    jx, tx = _pair(x)
    ja, ta = jx, tx
    if noncontig:  # the same values through a transposed, strided view
        jbig, tbig = _pair(np.repeat(x.transpose(2, 1, 0), 2, axis=0))
        ja, ta = jbig[::2].permute(2, 1, 0), tbig[::2].permute(2, 1, 0)
        jx, tx = jbig, tbig
        assert not ja.is_contiguous()
    ndir = 2 if kw.get("bidirectional") else 1
    layers = kw.get("num_layers", 1)
    batch = shape[0] if kw.get("batch_first") else shape[1]
    real = kw.get("proj_size") or hidden
    jhx = thx = None
    leaves = []
    if with_hx:
        h0 = RNG.standard_normal((layers * ndir, batch, real)).astype(dtype)
        c0 = RNG.standard_normal((layers * ndir, batch, hidden)).astype(dtype)
        leaves = [_pair(h0), _pair(c0)]
        jhx, thx = tuple(p[0] for p in leaves), tuple(p[1] for p in leaves)
    jo, (jh, jc) = j(ja, jhx)
    to, (th, tc) = t(ta, thx)
    assert "LstmLayerBackward0" in _node_names(jo)
    for a, b, what in ((jo, to, "output"), (jh, th, "h_n"), (jc, tc, "c_n")):
        assert tuple(a.shape) == tuple(b.shape), what
        _close(a, b, dtype, what)
    go = RNG.standard_normal(tuple(to.shape)).astype(dtype)
    gh = RNG.standard_normal(tuple(th.shape)).astype(dtype)
    gc = RNG.standard_normal(tuple(tc.shape)).astype(dtype)
    ((jo * jtorch.from_numpy(go)).sum() + (jh * jtorch.from_numpy(gh)).sum()
     + (jc * jtorch.from_numpy(gc)).sum()).backward()
    ((to * torch.from_numpy(go)).sum() + (th * torch.from_numpy(gh)).sum()
     + (tc * torch.from_numpy(gc)).sum()).backward()
    _close(jx.grad, tx.grad, dtype, "input grad")
    for (a, b), what in zip(leaves, ("h0", "c0")):
        _close(a.grad, b.grad, dtype, what)
    for (n, a), (_, b) in zip(j.named_parameters(), t.named_parameters()):
        _close(a.grad, b.grad, dtype, n)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kw,shape", [
    ({}, (5, 2, 3)),
    ({}, (1, 3, 3)),                                     # one step
    ({}, (4, 1, 3)),                                     # batch 1
    ({"num_layers": 2}, (6, 3, 3)),
    ({"bidirectional": True}, (5, 2, 3)),
    ({"num_layers": 2, "bidirectional": True, "batch_first": True}, (2, 5, 3)),
    ({"bias": False}, (3, 2, 3)),
    ({"proj_size": 2}, (5, 2, 3)),
    ({"proj_size": 3, "num_layers": 2, "bidirectional": True}, (4, 3, 3)),
    ({"proj_size": 2, "bidirectional": True}, (3, 40, 3)),  # steps' products through BLAS
])
@pytest.mark.parametrize("with_hx", [False, True])
def test_lstm_matches_torch(kw, shape, dtype, with_hx):
    _compare(kw, shape, dtype, with_hx)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_lstm_noncontiguous_input(dtype):
    _compare({"num_layers": 2}, (5, 3, 3), dtype, True, noncontig=True)
    _compare({"batch_first": True, "bidirectional": True}, (3, 5, 3), dtype, False,
             noncontig=True)


def test_lstm_language_model_shape_float32():
    """The word-language-model layer (64 wide, 2 layers, bptt 35, batch 20)."""
    _compare({"num_layers": 2}, (35, 20, 64), "float32", True, input_size=64, hidden=64)


def test_noncontiguous_initial_state():
    j, t = jtorch.nn.LSTM(3, 4).double(), torch.nn.LSTM(3, 4).double()
    copy_weights(j, t)
    x = RNG.standard_normal((4, 2, 3))
    h = RNG.standard_normal((4, 2, 1))  # (hidden, batch, 1) -> transposed to (1, batch, hidden)
    c = RNG.standard_normal((4, 2, 1))
    (jh, th), (jc, tc) = _pair(h), _pair(c)
    jo, (jhn, jcn) = j(jtorch.from_numpy(x), (jh.permute(2, 1, 0), jc.permute(2, 1, 0)))
    to, (thn, tcn) = t(torch.from_numpy(x), (th.permute(2, 1, 0), tc.permute(2, 1, 0)))
    _close(jo, to, "float64")
    (jo.sum() + jhn.sum() + jcn.sum()).backward()
    (to.sum() + thn.sum() + tcn.sum()).backward()
    _close(jh.grad, th.grad, "float64")
    _close(jc.grad, tc.grad, "float64")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstm_packed_input(dtype, bidirectional):
    R = jtorch.nn.utils.rnn
    TR = torch.nn.utils.rnn
    kw = {"num_layers": 2, "bidirectional": bidirectional, "proj_size": 2}
    j = jtorch.nn.LSTM(3, 4, **kw).to(getattr(jtorch, dtype))
    t = torch.nn.LSTM(3, 4, **kw).to(getattr(torch, dtype))
    copy_weights(j, t)
    lengths = [2, 5, 1, 4]
    jx, tx = _pair(RNG.standard_normal((5, 4, 3)).astype(dtype))
    jo, (jh, jc) = j(R.pack_padded_sequence(jx, lengths, enforce_sorted=False))
    to, (th, tc) = t(TR.pack_padded_sequence(tx, lengths, enforce_sorted=False))
    _close(jo.data, to.data, dtype)
    _close(jh, th, dtype)
    _close(jc, tc, dtype)
    (jo.data.sum() + jh.sum() * 2 + jc.sum() * 3).backward()
    (to.data.sum() + th.sum() * 2 + tc.sum() * 3).backward()
    _close(jx.grad, tx.grad, dtype)
    for (n, a), (_, b) in zip(j.named_parameters(), t.named_parameters()):
        _close(a.grad, b.grad, dtype, n)


def test_zero_batch():
    """A batch of 0 sequences: torch returns empty outputs and states (and zero gradients)."""
    for kw in ({}, {"bidirectional": True, "num_layers": 2}):
        j, t = jtorch.nn.LSTM(3, 4, **kw), torch.nn.LSTM(3, 4, **kw)
        copy_weights(j, t)
        jx, tx = _pair(np.zeros((5, 0, 3), np.float32))
        jo, (jh, jc) = j(jx)
        to, (th, tc) = t(tx)
        for a, b in ((jo, to), (jh, th), (jc, tc)):
            assert tuple(a.shape) == tuple(b.shape)
        (jo.sum() + jh.sum()).backward()
        (to.sum() + th.sum()).backward()
        assert tuple(jx.grad.shape) == (5, 0, 3)
        for (n, a), (_, b) in zip(j.named_parameters(), t.named_parameters()):
            _close(a.grad, b.grad, "float32", n)


def test_unbatched_input_and_errors():
    j, t = jtorch.nn.LSTM(3, 4).double(), torch.nn.LSTM(3, 4).double()
    copy_weights(j, t)
    x = RNG.standard_normal((5, 3))
    jo, (jh, jc) = j(jtorch.from_numpy(x))
    to, (th, tc) = t(torch.from_numpy(x))
    for a, b in ((jo, to), (jh, th), (jc, tc)):
        assert tuple(a.shape) == tuple(b.shape)
        _close(a, b, "float64")
    for m in (jtorch, torch):
        lstm = m.nn.LSTM(3, 4)
        with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(1, 2, 4\), got "
                                               r"\[1, 2, 5\]"):
            lstm(m.zeros(5, 2, 3), (m.zeros(1, 2, 4), m.zeros(1, 2, 5)))
        with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0"):
            lstm(m.zeros(0, 2, 3))


def test_no_grad_and_eval_dropout():
    j = jtorch.nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = jtorch.randn(5, 2, 3)
    with jtorch.no_grad():
        o, _ = j(x)
    assert o.grad_fn is None and tuple(o.shape) == (5, 2, 4)
    j.eval()
    a, _ = j(x)
    b, _ = j(x)
    assert jtorch.equal(a, b)
    j.train()
    o, _ = j(x)  # dropout between the layers
    o.sum().backward()
    assert all(p.grad is not None for p in j.parameters())


def test_twice_backward_with_retain_graph():
    j = jtorch.nn.LSTM(3, 4).double()
    x = jtorch.randn(5, 2, 3, dtype=jtorch.float64, requires_grad=True)
    o, _ = j(x)
    loss = (o * o).sum()
    loss.backward(retain_graph=True)
    g1 = x.grad.clone()
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * g1.numpy(), rtol=1e-12)


def _layer_inputs(proj: bool, bias: bool, batch: int = 2, hidden: int = 2, isz: int = 2,
                  n: int = 6) -> list:
    real = 1 if proj else hidden
    shapes = [(n, isz), (batch, real), (batch, hidden), (4 * hidden, isz), (4 * hidden, real),
              (4 * hidden,) if bias else None, (4 * hidden,) if bias else None,
              (real, hidden) if proj else None]
    return [None if s is None else
            jtorch.from_numpy(RNG.standard_normal(s)).requires_grad_() for s in shapes]


@pytest.mark.parametrize("proj,bias", [(False, True), (True, True), (False, False)])
@pytest.mark.parametrize("batch_sizes,reverse", [
    ((2, 2, 2), False), ((2, 2, 2), True), ((2, 2, 1, 1), False), ((2, 2, 1, 1), True),
    ((2,) * 3, False),
])
def test_gradcheck_of_the_op(proj, bias, batch_sizes, reverse):
    ins = _layer_inputs(proj, bias, n=sum(batch_sizes))

    def fn(*ts):
        it = iter(ts)
        args = [None if a is None else next(it) for a in ins]
        return lstm_layer_op(*args, batch_sizes=batch_sizes, reverse=reverse)[:3]

    given = [a for a in ins if a is not None]
    assert gradcheck(fn, given, eps=1e-6, atol=1e-6)


@pytest.mark.parametrize("proj", [False, True])
def test_gradgradcheck_of_the_op(proj):
    """Double backward replays the layer step by step (the fused backward is not itself
    differentiated)."""
    ins = _layer_inputs(proj, True, n=4)
    sizes = (2, 1, 1)

    def fn(*ts):
        return lstm_layer_op(*ts, batch_sizes=sizes, reverse=False)[0]

    assert gradgradcheck(fn, ins, eps=1e-6, atol=1e-5)


def test_double_backward_matches_torch():
    j, t = jtorch.nn.LSTM(2, 3, num_layers=2).double(), torch.nn.LSTM(2, 3, num_layers=2).double()
    copy_weights(j, t)
    jx, tx = _pair(RNG.standard_normal((3, 2, 2)))
    for m, lstm, x in ((jtorch, j, jx), (torch, t, tx)):
        o, _ = lstm(x)
        (g,) = m.autograd.grad((o * o).sum(), x, create_graph=True)
        (g * g).sum().backward()
    _close(jx.grad, tx.grad, "float64")
    for (n, a), (_, b) in zip(j.named_parameters(), t.named_parameters()):
        _close(a.grad, b.grad, "float64", n)


def test_op_matches_the_step_by_step_layer():
    """``lstm_layer`` and ``rnn_layer_steps`` (the fallback and the replay) agree."""
    ins = _layer_inputs(True, True, batch=3, n=7)
    sizes = (3, 2, 1, 1)
    for reverse in (False, True):
        fused = lstm_layer_op(*ins, batch_sizes=sizes, reverse=reverse)[:3]
        steps = rnn_layer_steps("LSTM", *ins, sizes, reverse)
        for a, b in zip(fused, steps):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12,
                                       atol=1e-14)


def test_op_checks_its_operands():
    ins = _layer_inputs(False, True)
    with pytest.raises(RuntimeError, match="batch_sizes"):
        lstm_layer_op(*ins, batch_sizes=(2, 2), reverse=False)
    bad = list(ins)
    bad[2] = jtorch.zeros(2, 3, dtype=jtorch.float64)
    with pytest.raises(RuntimeError, match=r"expected cx of size \[2, 2\], got \[2, 3\]"):
        lstm_layer_op(*bad, batch_sizes=(2, 2, 2), reverse=False)


def test_fallbacks_run_step_by_step():
    """What the op does not take (float16) runs step by step, meta tensors through the op's
    meta rule; GRU and RNN keep their step-by-step layers; an input whose dtype is not the
    weights' raises torch's error."""
    j = jtorch.nn.LSTM(3, 4, num_layers=2, bidirectional=True, device="meta")
    o, (_, c) = j(jtorch.empty(5, 2, 3, device="meta"))
    assert o.is_meta and tuple(o.shape) == (5, 2, 8) and tuple(c.shape) == (4, 2, 4)
    j, t = jtorch.nn.LSTM(3, 4).half(), torch.nn.LSTM(3, 4).half()
    copy_weights(j, t)
    x = RNG.standard_normal((5, 2, 3)).astype(np.float16)
    jo, _ = j(jtorch.from_numpy(x))
    to, _ = t(torch.from_numpy(x))
    assert jo.dtype is jtorch.float16 and "LstmLayerBackward0" not in _node_names(jo)
    np.testing.assert_allclose(jo.detach().numpy(), to.detach().numpy(), atol=1e-2)
    for cls in ("GRU", "RNN"):
        m = getattr(jtorch.nn, cls)(3, 4)
        out, _ = m(jtorch.randn(5, 2, 3))
        assert "LstmLayerBackward0" not in _node_names(out)
        out.sum().backward()
    for m in (jtorch, torch):
        with pytest.raises(ValueError, match=r"RNN input dtype \(torch.float32\) does not match "
                                             r"weight dtype \(torch.float64\)"):
            m.nn.LSTM(3, 4).double()(m.zeros(5, 2, 3))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_parallel_row_blocks(monkeypatch, dtype):
    """With the grain at 1 the steps run in row blocks on Numba's threads (where it has more
    than one): packed, reversed and projected layers still match torch."""
    import jtorch._flags

    monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 1)
    _compare({"num_layers": 2, "bidirectional": True, "proj_size": 2}, (5, 3, 3), dtype, True)
    _compare({"batch_first": True}, (7, 6, 3), dtype, False)
    _compare({"proj_size": 2, "bidirectional": True}, (3, 70, 3), dtype, True)  # BLAS per block
    test_lstm_packed_input(dtype, True)
    if dtype == "float64":
        ins = _layer_inputs(True, True, batch=3, n=7)
        for reverse in (False, True):
            assert gradcheck(lambda *ts, r=reverse: lstm_layer_op(
                *ts, batch_sizes=(3, 2, 1, 1), reverse=r)[:3], ins, eps=1e-6, atol=1e-6)
