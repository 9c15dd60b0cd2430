"""RNN/LSTM/GRU (and cells), MultiheadAttention and scaled_dot_product_attention against torch
with copied weights: outputs, hidden states, input and parameter gradients."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch

RNG = np.random.default_rng(0)


def copy_weights(j, t) -> None:
    with torch.no_grad():
        for (a, pa), (b, pb) in zip(j.named_parameters(), t.named_parameters()):
            assert a == b
            pb.copy_(torch.from_numpy(pa.detach().numpy().copy()))


def _close(a, b, rtol=1e-9, atol=1e-11, msg=""):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol,
                               err_msg=msg)


def _check_grads(j, t, jin, tin):
    for a, b in zip(jin, tin):
        _close(a.grad, b.grad)
    for (n, a), (_, b) in zip(j.named_parameters(), t.named_parameters()):
        _close(a.grad, b.grad, msg=n)


@pytest.mark.parametrize("cls,kw", [
    ("RNN", {}), ("RNN", {"nonlinearity": "relu", "num_layers": 2}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}), ("LSTM", {"proj_size": 2}),
    ("GRU", {"batch_first": True, "bidirectional": True}), ("GRU", {"bias": False}),
])
def test_recurrent_layers(cls, kw):
    j = getattr(jtorch.nn, cls)(3, 4, **kw).double()
    t = getattr(torch.nn, cls)(3, 4, **kw).double()
    copy_weights(j, t)
    assert repr(j) == repr(t)
    x = RNG.standard_normal((5, 2, 3))
    jx, tx = jtorch.from_numpy(x.copy()).requires_grad_(), torch.from_numpy(x.copy()).requires_grad_()
    jo, jh = j(jx)
    to, th = t(tx)
    _close(jo, to)
    if cls == "LSTM":
        _close(jh[0], th[0])
        _close(jh[1], th[1])
        (jo.sum() + jh[0].sum() * 2 + jh[1].sum()).backward()
        (to.sum() + th[0].sum() * 2 + th[1].sum()).backward()
    else:
        _close(jh, th)
        (jo.sum() + jh.sum() * 2).backward()
        (to.sum() + th.sum() * 2).backward()
    _check_grads(j, t, [jx], [tx])


def test_initial_state_unbatched_and_cells():
    j, t = jtorch.nn.GRU(3, 4).double(), torch.nn.GRU(3, 4).double()
    copy_weights(j, t)
    x, h0 = RNG.standard_normal((5, 3)), RNG.standard_normal((1, 4))
    jo, jh = j(jtorch.from_numpy(x), jtorch.from_numpy(h0))
    to, th = t(torch.from_numpy(x), torch.from_numpy(h0))
    _close(jo, to)
    _close(jh, th)
    for cls in ("RNNCell", "LSTMCell", "GRUCell"):
        jc, tc = getattr(jtorch.nn, cls)(3, 4).double(), getattr(torch.nn, cls)(3, 4).double()
        copy_weights(jc, tc)
        xb = RNG.standard_normal((2, 3))
        jr, tr = jc(jtorch.from_numpy(xb)), tc(torch.from_numpy(xb))
        for a, b in zip(jr if isinstance(jr, tuple) else [jr], tr if isinstance(tr, tuple) else [tr]):
            _close(a, b)
    for m in (jtorch, torch):
        with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size. "
                                               "Expected 3, got 2"):
            m.nn.LSTM(3, 4)(m.zeros(5, 1, 2))


@pytest.mark.parametrize("kw,call", [
    ({}, {}), ({"batch_first": True}, {"need_weights": False}),
    ({"kdim": 3, "vdim": 5, "add_bias_kv": True, "add_zero_attn": True}, {}),
    ({}, {"average_attn_weights": False}), ({"bias": False}, "masks"),
])
def test_multihead_attention(kw, call):
    j = jtorch.nn.MultiheadAttention(8, 2, **kw).double()
    t = torch.nn.MultiheadAttention(8, 2, **kw).double()
    copy_weights(j, t)
    q = RNG.standard_normal((4, 2, 8))
    k = RNG.standard_normal((5, 2, kw.get("kdim", 8)))
    v = RNG.standard_normal((5, 2, kw.get("vdim", 8)))
    if kw.get("batch_first"):
        q, k, v = (a.transpose(1, 0, 2).copy() for a in (q, k, v))
    jm = tm = {}
    if call == "masks":
        m = RNG.random((4, 5)) > 0.7
        kp = RNG.random((2, 5)) > 0.8
        m[:, 0] = kp[:, 0] = False
        jm = {"attn_mask": jtorch.from_numpy(m), "key_padding_mask": jtorch.from_numpy(kp)}
        tm = {"attn_mask": torch.from_numpy(m), "key_padding_mask": torch.from_numpy(kp)}
        call = {}
    jin = [jtorch.from_numpy(a.copy()).requires_grad_() for a in (q, k, v)]
    tin = [torch.from_numpy(a.copy()).requires_grad_() for a in (q, k, v)]
    jo, jw = j(*jin, **call, **jm)
    to, tw = t(*tin, **call, **tm)
    _close(jo, to)
    assert (jw is None) == (tw is None)
    if tw is not None:
        _close(jw, tw)
    jo.sum().backward()
    to.sum().backward()
    _check_grads(j, t, jin, tin)


@pytest.mark.parametrize("kw", [{}, {"is_causal": True}, {"scale": 0.3}, "bool_mask",
                                "float_mask"])
def test_scaled_dot_product_attention(kw):
    q, k = RNG.standard_normal((2, 3, 4, 8)), RNG.standard_normal((2, 3, 6, 8))
    jin = [jtorch.from_numpy(a.copy()).requires_grad_() for a in (q, k, k)]
    tin = [torch.from_numpy(a.copy()).requires_grad_() for a in (q, k, k)]
    if kw == "bool_mask":
        m = RNG.random((4, 6)) > 0.3
        m[:, 0] = True
        kw, tkw = {"attn_mask": jtorch.from_numpy(m)}, {"attn_mask": torch.from_numpy(m)}
    elif kw == "float_mask":
        m = RNG.standard_normal((4, 6))
        kw, tkw = {"attn_mask": jtorch.from_numpy(m)}, {"attn_mask": torch.from_numpy(m)}
    else:
        tkw = kw
    jo = jtorch.nn.functional.scaled_dot_product_attention(*jin, **kw)
    to = torch.nn.functional.scaled_dot_product_attention(*tin, **tkw)
    _close(jo, to)
    jo.sum().backward()
    to.sum().backward()
    for a, b in zip(jin, tin):
        _close(a.grad, b.grad)
