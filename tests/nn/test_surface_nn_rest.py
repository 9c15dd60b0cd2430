"""The last nn names against torch: CTC loss (values, gradients, input forms, errors),
AdaptiveLogSoftmaxWithLoss, CrossMapLRN2d, linear_cross_entropy and its options and module,
and the grouped / scaled matrix products as torch runs them on CPU."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import jtorch
import jtorch.nn.functional as JF

RNG = np.random.default_rng(0)


def _pair(a: np.ndarray, grad: bool = False):
    return torch.tensor(a, requires_grad=grad), jtorch.tensor(a, requires_grad=grad)


def _close(a, b, rtol=1e-5, atol=1e-6):
    a = a.detach().numpy() if isinstance(a, torch.Tensor) else a
    b = b.detach().numpy() if isinstance(b, jtorch.Tensor) else b
    np.testing.assert_allclose(b, a, rtol=rtol, atol=atol)


def _same_error(ft, fj):
    with pytest.raises(Exception) as et:
        ft()
    with pytest.raises(Exception) as ej:
        fj()
    assert type(ej.value) is type(et.value)
    assert str(ej.value) == str(et.value)


# -- ctc_loss ----------------------------------------------------------------------------------

def _log_probs(t, n, c, dtype=np.float64, seed=0):
    a = np.random.default_rng(seed).standard_normal((t, n, c))
    a = a - np.log(np.exp(a).sum(-1, keepdims=True))
    return a.astype(dtype)


_TARGETS = np.array([[1, 2, 3], [2, 2, 0], [4, 1, 1]])
_CASES = [  # (input_lengths, target_lengths)
    ((6, 5, 4), (3, 2, 2)),
    ((6, 6, 6), (3, 3, 3)),
    ((6, 2, 3), (3, 2, 2)),  # item 1: two repeated labels need three steps -> inf
    ((6, 0, 4), (3, 0, 0)),  # empty target and empty input
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("case", range(len(_CASES)))
def test_ctc_loss_values_and_gradients(dtype, reduction, zero_infinity, case):
    il, tl = _CASES[case]
    tx, jx = _pair(_log_probs(6, 3, 5, dtype), grad=True)
    tt, jt = _pair(_TARGETS)
    a = TF.ctc_loss(tx, tt, torch.tensor(il), torch.tensor(tl), reduction=reduction,
                    zero_infinity=zero_infinity)
    b = JF.ctc_loss(jx, jt, jtorch.tensor(il), jtorch.tensor(tl), reduction=reduction,
                    zero_infinity=zero_infinity)
    assert b.dtype == jx.dtype and tuple(b.shape) == tuple(a.shape)
    tol = 1e-5 if dtype == np.float32 else 1e-10
    _close(a, b, rtol=tol, atol=tol)
    g = np.random.default_rng(1).standard_normal(a.shape).astype(dtype)
    a.backward(torch.tensor(g))
    b.backward(jtorch.tensor(g))
    _close(tx.grad, jx.grad, rtol=tol, atol=tol)


def test_ctc_loss_input_forms_agree():
    """Padded and concatenated targets, tuple / list / tensor lengths, int32 targets."""
    lp = _log_probs(6, 3, 5)
    tx, jx = _pair(lp)
    il, tl = (6, 5, 4), (3, 2, 2)
    cat = np.concatenate([_TARGETS[i, :n] for i, n in enumerate(tl)])
    want = TF.ctc_loss(tx, torch.tensor(_TARGETS), il, tl, reduction="none")
    for tg in (_TARGETS, cat, _TARGETS.astype(np.int32)):
        for lens in ((il, tl), (list(il), list(tl)),
                     (jtorch.tensor(il, dtype=jtorch.int32), jtorch.tensor(tl))):
            _close(want, JF.ctc_loss(jx, jtorch.tensor(tg), *lens, reduction="none"))


def test_ctc_loss_blank_and_top_level():
    lp = _log_probs(6, 3, 5)
    tx, jx = _pair(lp)
    tg = np.array([[0, 1, 2], [1, 1, 3], [2, 0, 0]])
    args = ((6, 5, 4), (3, 2, 1))
    _close(TF.ctc_loss(tx, torch.tensor(tg), *args, blank=4),
           JF.ctc_loss(jx, jtorch.tensor(tg), *args, blank=4))
    for red in (0, 1, 2):
        _close(torch.ctc_loss(tx, torch.tensor(tg), *args, 4, red),
               jtorch.ctc_loss(jx, jtorch.tensor(tg), *args, 4, red))
    # the binding's default reduction is 0 (none)
    _close(torch.ctc_loss(tx, torch.tensor(tg), *args, 4),
           jtorch.ctc_loss(jx, jtorch.tensor(tg), *args, 4))


def test_ctc_loss_unbatched():
    lp = _log_probs(6, 1, 5)[:, 0]
    tx, jx = _pair(lp, grad=True)
    for red in ("none", "mean", "sum"):
        a = TF.ctc_loss(tx, torch.tensor([1, 2]), torch.tensor(6), torch.tensor(2), reduction=red)
        b = JF.ctc_loss(jx, jtorch.tensor([1, 2]), jtorch.tensor(6), jtorch.tensor(2),
                        reduction=red)
        assert tuple(a.shape) == tuple(b.shape) == ()
        _close(a, b, rtol=1e-10)
    a.backward()
    b.backward()
    _close(tx.grad, jx.grad, rtol=1e-10, atol=1e-12)


def test_ctc_loss_grad_fn_and_no_double_backward():
    jx = jtorch.tensor(_log_probs(6, 3, 5), requires_grad=True)
    res = JF.ctc_loss(jx, jtorch.tensor(_TARGETS), (6, 5, 4), (3, 2, 2), reduction="none")
    assert type(res.grad_fn).__name__ == "CtcLossBackward0"
    (g,) = jtorch.autograd.grad(res.sum(), jx, create_graph=True)
    with pytest.raises(RuntimeError, match="derivative for aten::_ctc_loss_backward is not "
                                           "implemented"):
        g.sum().backward()


@pytest.mark.parametrize("call", [
    lambda F, T, lp, tg: F.ctc_loss(lp.to(T.float16), tg, (6, 5, 4), (3, 2, 2)),
    lambda F, T, lp, tg: F.ctc_loss(lp, tg, (6, 5), (3, 2, 2)),
    lambda F, T, lp, tg: F.ctc_loss(lp, tg, (6, 5, 4), (3, 2)),
    lambda F, T, lp, tg: F.ctc_loss(lp, tg, (7, 5, 4), (3, 2, 2)),
    lambda F, T, lp, tg: F.ctc_loss(lp, tg, (-1, 5, 4), (3, 2, 2)),
    lambda F, T, lp, tg: F.ctc_loss(lp, tg, (6, 5, 4), (4, 2, 2)),
    lambda F, T, lp, tg: F.ctc_loss(lp, tg, (6, 5, 4), (3, -1, 2)),
    lambda F, T, lp, tg: F.ctc_loss(lp, tg, (6, 5, 4), (3, 2, 2), blank=5),
    lambda F, T, lp, tg: F.ctc_loss(lp, tg, (6, 5, 4), (3, 2, 2), blank=-1),
    lambda F, T, lp, tg: F.ctc_loss(lp, tg, (6, 5, 4), (3, 2, 2), reduction="avg"),
    lambda F, T, lp, tg: F.ctc_loss(lp, tg, T.tensor([6.0, 5, 4]), T.tensor([3, 2, 2])),
    lambda F, T, lp, tg: F.ctc_loss(lp[0, 0], tg, (6, 5, 4), (3, 2, 2)),
    lambda F, T, lp, tg: F.ctc_loss(lp, tg[None], (6, 5, 4), (3, 2, 2)),
    lambda F, T, lp, tg: F.ctc_loss(lp, tg.reshape(-1)[:6], (6, 5, 4), (3, 2, 2)),
    lambda F, T, lp, tg: F.ctc_loss(lp[:, :0], tg[:0], (), ()),
])
def test_ctc_loss_errors_match_torch(call):
    tx, jx = _pair(_log_probs(6, 3, 5))
    tt, jt = _pair(_TARGETS)
    _same_error(lambda: call(TF, torch, tx, tt), lambda: call(JF, jtorch, jx, jt))


def test_ctc_loss_int_lengths_are_a_type_error():
    with pytest.raises(TypeError):
        JF.ctc_loss(jtorch.zeros(4, 3), jtorch.tensor([1]), 4, 1)


def test_ctc_module():
    tm, jm = torch.nn.CTCLoss(blank=4, zero_infinity=True), jtorch.nn.CTCLoss(4, zero_infinity=True)
    assert repr(tm) == repr(jm) and jm.__constants__ == tm.__constants__
    assert dict(jm.state_dict()) == {}
    tx, jx = _pair(_log_probs(6, 3, 5))
    tg = np.array([[0, 1, 2], [1, 1, 3], [2, 0, 0]])
    _close(tm(tx, torch.tensor(tg), (6, 2, 4), (3, 2, 1)),
           jm(jx, jtorch.tensor(tg), (6, 2, 4), (3, 2, 1)))


# -- AdaptiveLogSoftmaxWithLoss ----------------------------------------------------------------

def _asm_pair(**kw):
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [4, 7, 10], **kw)
    jm = jtorch.nn.AdaptiveLogSoftmaxWithLoss(8, 12, [4, 7, 10], **kw)
    assert list(jm.state_dict()) == list(tm.state_dict())
    jm.load_state_dict({k: jtorch.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    return tm, jm


@pytest.mark.parametrize("kw", [{}, {"div_value": 2.0, "head_bias": True}])
def test_adaptive_log_softmax_forward_backward(kw):
    tm, jm = _asm_pair(**kw)
    assert repr(tm) == repr(jm)
    tx, jx = _pair(RNG.standard_normal((9, 8)).astype(np.float32), grad=True)
    tgt = np.array([0, 5, 11, 3, 8, 9, 7, 1, 10])
    a, b = tm(tx, torch.tensor(tgt)), jm(jx, jtorch.tensor(tgt))
    assert type(b).__name__ == "_ASMoutput" and b._fields == ("output", "loss")
    _close(a.output, b.output)
    _close(a.loss, b.loss)
    a.loss.backward()
    b.loss.backward()
    _close(tx.grad, jx.grad)
    for (n, tp), jp in zip(tm.named_parameters(), jm.parameters()):
        _close(tp.grad, jp.grad, atol=1e-6)
    _close(tm.log_prob(tx), jm.log_prob(jx))
    assert tm.predict(tx).tolist() == jm.predict(jx).tolist()
    a, b = tm(tx[0], torch.tensor(5)), jm(jx[0], jtorch.tensor(5))
    assert tuple(b.output.shape) == ()
    _close(a.output, b.output)


def test_adaptive_log_softmax_errors():
    tm, jm = _asm_pair()
    for args in [((3, 8), [0, 12, 1]), ((3, 8), [0, 1]), ((3, 8), [[0]]), ((8,), [1, 2])]:
        shape, tgt = args
        x = np.zeros(shape, np.float32)
        _same_error(lambda x=x, tgt=tgt: tm(torch.tensor(x), torch.tensor(tgt)),
                    lambda x=x, tgt=tgt: jm(jtorch.tensor(x), jtorch.tensor(tgt)))
    for cut in ([], [4, 3], [0, 5], [12], [4, 4]):
        _same_error(lambda cut=cut: torch.nn.AdaptiveLogSoftmaxWithLoss(8, 12, cut),
                    lambda cut=cut: jtorch.nn.AdaptiveLogSoftmaxWithLoss(8, 12, cut))


# -- CrossMapLRN2d -----------------------------------------------------------------------------

@pytest.mark.parametrize("shape,size", [((2, 5, 3, 4), 3), ((2, 7, 3, 3), 5), ((1, 3, 2, 2), 4),
                                        ((2, 2, 3, 3), 5), ((1, 4, 2, 2), 2)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cross_map_lrn2d_matches_torch(shape, size, dtype):
    tm = torch.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.8, k=2)
    jm = jtorch.nn.CrossMapLRN2d(size, alpha=0.5, beta=0.8, k=2)
    assert repr(tm) == repr(jm)
    tx, jx = _pair(RNG.standard_normal(shape).astype(dtype), grad=True)
    g = RNG.standard_normal(shape).astype(dtype)
    a, b = tm(tx), jm(jx)
    tol = 1e-6 if dtype == np.float32 else 1e-14
    _close(a, b, rtol=tol, atol=tol)
    a.backward(torch.tensor(g))
    b.backward(jtorch.tensor(g))
    _close(tx.grad, jx.grad, rtol=tol, atol=tol)


def test_cross_map_lrn2d_errors():
    _same_error(lambda: torch.nn.CrossMapLRN2d(3)(torch.zeros(2, 3, 4)),
                lambda: jtorch.nn.CrossMapLRN2d(3)(jtorch.zeros(2, 3, 4)))
    tx, jx = _pair(np.ones((1, 3, 2, 2)), grad=True)  # torch's backward fails for size 1
    _same_error(lambda: torch.nn.CrossMapLRN2d(1)(tx).sum().backward(),
                lambda: jtorch.nn.CrossMapLRN2d(1)(jx).sum().backward())


# -- linear_cross_entropy ----------------------------------------------------------------------

def _lce_inputs(n=7, d=5, c=11):
    x, w, b = (RNG.standard_normal(s).astype(np.float32) for s in ((n, d), (c, d), (c,)))
    t = RNG.integers(0, c, n)
    t[2] = -100
    return x, w, b, t


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("chunk", [None, 3, "auto"])
def test_linear_cross_entropy_matches_torch(reduction, chunk):
    x, w, b, t = _lce_inputs()
    cw = RNG.uniform(0.5, 2, 11).astype(np.float32)
    tx, jx = _pair(x, grad=True)
    tw, jw = _pair(w, grad=True)
    tb, jb = _pair(b, grad=True)
    opts = {} if chunk is None else {"options": (torch.nn.LinearCrossEntropyOptions(),
                                                 jtorch.nn.LinearCrossEntropyOptions())
                                     if chunk == "auto" else
                                     (torch.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk),
                                      jtorch.nn.LinearCrossEntropyOptions(batch_chunk_size=chunk))}
    a = TF.linear_cross_entropy(tx, tw, torch.tensor(t), linear_bias=tb, weight=torch.tensor(cw),
                                reduction=reduction, **{k: v[0] for k, v in opts.items()})
    r = JF.linear_cross_entropy(jx, jw, jtorch.tensor(t), linear_bias=jb,
                                weight=jtorch.tensor(cw), reduction=reduction,
                                **{k: v[1] for k, v in opts.items()})
    assert tuple(r.shape) == tuple(a.shape) and r.dtype == jtorch.float32
    _close(a, r, rtol=1e-5, atol=1e-5)
    a.sum().backward()
    r.sum().backward()
    for p, q in ((tx, jx), (tw, jw), (tb, jb)):
        _close(p.grad, q.grad, rtol=1e-4, atol=1e-5)


def test_linear_cross_entropy_other_forms():
    x, w, _, t = _lce_inputs()
    jx = jtorch.tensor(x)
    # unbatched, K-dimensional weight, class probabilities, label smoothing
    w3 = RNG.standard_normal((4, 3, 5)).astype(np.float32)
    t3 = RNG.integers(0, 4, (7, 3))
    probs = RNG.uniform(size=(7, 11)).astype(np.float32)
    cases = [
        (lambda F, T: F.linear_cross_entropy(T.tensor(x[0]), T.tensor(w), T.tensor(t[0]))),
        (lambda F, T: F.linear_cross_entropy(T.tensor(x), T.tensor(w3), T.tensor(t3))),
        (lambda F, T: F.linear_cross_entropy(T.tensor(x), T.tensor(w), T.tensor(probs))),
        (lambda F, T: F.linear_cross_entropy(T.tensor(x), T.tensor(w), T.tensor(t),
                                             label_smoothing=0.2, ignore_index=-100)),
    ]
    for f in cases:
        _close(f(TF, torch), f(JF, jtorch), rtol=1e-5, atol=1e-6)
    with pytest.warns(UserWarning, match="options`` ignored"):
        JF.linear_cross_entropy(jx, jtorch.tensor(w), jtorch.tensor(t), label_smoothing=0.1,
                                options=jtorch.nn.LinearCrossEntropyOptions())


@pytest.mark.parametrize("call", [
    lambda F, T, x, w, t: F.linear_cross_entropy(x[None], w, t),
    lambda F, T, x, w, t: F.linear_cross_entropy(x, w[0], t),
    lambda F, T, x, w, t: F.linear_cross_entropy(x[:, :4], w, t),
    lambda F, T, x, w, t: F.linear_cross_entropy(x, w, t, linear_bias=w[:, 0][:3]),
    lambda F, T, x, w, t: F.linear_cross_entropy(x[0], w[:, None].expand(11, 2, 5), t),
    lambda F, T, x, w, t: F.linear_cross_entropy(x, w, (x @ w.T).softmax(1), ignore_index=1),
])
def test_linear_cross_entropy_errors(call):
    x, w, _, t = _lce_inputs()
    _same_error(lambda: call(TF, torch, torch.tensor(x), torch.tensor(w), torch.tensor(t)),
                lambda: call(JF, jtorch, jtorch.tensor(x), jtorch.tensor(w), jtorch.tensor(t)))


def test_linear_cross_entropy_options():
    T, J = torch.nn.LinearCrossEntropyOptions, jtorch.nn.LinearCrossEntropyOptions
    assert repr(T()) == repr(J())
    assert repr(T(batch_chunk_size=3, acc_policy="compact")) == \
        repr(J(batch_chunk_size=3, acc_policy="compact"))
    for kw in ({"acc_policy": "x"}, {"chunking_method": "bad"}, {"batch_chunk_size": 0},
               {"chunking_method": "aspect_ratio:0"}):
        _same_error(lambda kw=kw: T(**kw), lambda kw=kw: J(**kw))
    for kw in ({}, {"chunking_method": "aspect_ratio"}, {"batch_chunk_size": 5},
               {"chunking_method": None}):
        a = T(**kw)._adjust(100, 16, 1000, torch.float32, torch.device("cpu"))
        b = J(**kw)._adjust(100, 16, 1000, jtorch.float32, jtorch.device("cpu"))
        assert (a.batch_chunk_size, a.chunking_method, a.acc_policy) == \
            (b.batch_chunk_size, b.chunking_method, b.acc_policy)
    with pytest.raises(dataclasses.FrozenInstanceError):
        T().__setattr__("batch_chunk_size", 2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        J().__setattr__("batch_chunk_size", 2)


def test_linear_cross_entropy_module():
    opts = (torch.nn.LinearCrossEntropyOptions(batch_chunk_size=2),
            jtorch.nn.LinearCrossEntropyOptions(batch_chunk_size=2))
    for kw in ({}, {"bias": True, "out_features": (3,)}):
        for o in (None, opts):
            tm = torch.nn.LinearCrossEntropyLoss(5, 4, options=o and o[0], **kw)
            jm = jtorch.nn.LinearCrossEntropyLoss(5, 4, options=o and o[1], **kw)
            assert repr(tm) == repr(jm)
            assert list(tm.state_dict()) == list(jm.state_dict())
            jm.load_state_dict({k: jtorch.tensor(v.numpy()) for k, v in tm.state_dict().items()})
            x = RNG.standard_normal((6, 5)).astype(np.float32)
            t = RNG.integers(0, 4, (6, 3) if kw else 6)
            _close(tm(torch.tensor(x), torch.tensor(t)), jm(jtorch.tensor(x), jtorch.tensor(t)))
    _same_error(lambda: torch.nn.LinearCrossEntropyLoss(5, 4, weight=torch.ones(3)),
                lambda: jtorch.nn.LinearCrossEntropyLoss(5, 4, weight=jtorch.ones(3)))
    _same_error(lambda: torch.nn.LinearCrossEntropyLoss(5, 4, label_smoothing=2.0),
                lambda: jtorch.nn.LinearCrossEntropyLoss(5, 4, label_smoothing=2.0))


# -- grouped_mm, scaled_mm, scaled_grouped_mm --------------------------------------------------

def _offs(*v):
    return torch.tensor(v, dtype=torch.int32), jtorch.tensor(v, dtype=jtorch.int32)


@pytest.mark.parametrize("sa,sb,offs", [
    ((2, 3, 8), (2, 8, 4), None),
    ((6, 8), (2, 8, 4), (2, 5)),       # rows past offs[-1] are torch's uninitialised memory
    ((6, 8), (3, 8, 4), (2, 2, 6)),    # an empty group
    ((2, 4, 8), (8, 8), (4, 8)),
    ((4, 8), (8, 4), (3, 8)),
])
def test_grouped_mm_values_and_gradients(sa, sb, offs):
    ta, ja = _pair(RNG.standard_normal(sa).astype(np.float32), grad=True)
    tb, jb = _pair(RNG.standard_normal(sb).astype(np.float32), grad=True)
    to, jo = (None, None) if offs is None else _offs(*offs)
    a, b = TF.grouped_mm(ta, tb, offs=to), JF.grouped_mm(ja, jb, offs=jo)
    assert tuple(a.shape) == tuple(b.shape) and b.dtype == jtorch.float32
    assert type(b.grad_fn).__name__ == "GroupedMmBackward0"
    keep = np.ones(a.shape, bool)
    if len(sa) == 2 and len(sb) == 3:
        keep[offs[-1]:] = False
    _close(a.detach().numpy()[keep], b.detach().numpy()[keep], rtol=1e-5, atol=1e-5)
    g = RNG.standard_normal(a.shape).astype(np.float32) * keep
    a.backward(torch.tensor(g))
    b.backward(jtorch.tensor(g))
    rows = slice(None) if keep.all() else slice(0, offs[-1])
    _close(ta.grad[rows], jx_rows(ja.grad, rows), rtol=1e-5, atol=1e-5)
    _close(tb.grad, jb.grad, rtol=1e-5, atol=1e-5)


def jx_rows(t, rows):
    return t.numpy()[rows]


def test_grouped_mm_column_major_and_float16():
    b = RNG.standard_normal((2, 5, 8)).astype(np.float32)
    a = RNG.standard_normal((2, 3, 8)).astype(np.float32)
    tb, jb = _pair(b)
    ta, ja = _pair(a)
    _close(TF.grouped_mm(ta, tb.transpose(1, 2)), JF.grouped_mm(ja, jb.transpose(1, 2)),
           rtol=1e-5, atol=1e-5)
    _close(TF.grouped_mm(ta.half(), tb.half().transpose(1, 2)).float(),
           JF.grouped_mm(ja.half(), jb.half().transpose(1, 2)).float(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("call", [
    lambda F, T, o: F.grouped_mm(T.ones(2, 3, 8), T.ones(2, 8, 5)),
    lambda F, T, o: F.grouped_mm(T.ones(2, 3, 8).double(), T.ones(2, 8, 4)),
    lambda F, T, o: F.grouped_mm(T.ones(2, 3, 8), T.ones(2, 8, 4).long()),
    lambda F, T, o: F.grouped_mm(T.ones(8), T.ones(2, 8, 4)),
    lambda F, T, o: F.grouped_mm(T.ones(2, 3, 8), T.ones(2, 8, 4, 1)),
    lambda F, T, o: F.grouped_mm(T.ones(2, 3, 12), T.ones(2, 8, 4)),
    lambda F, T, o: F.grouped_mm(T.ones(6, 8), T.ones(2, 8, 4)),
    lambda F, T, o: F.grouped_mm(T.ones(2, 3, 8), T.ones(2, 8, 4), offs=o),
    lambda F, T, o: F.grouped_mm(T.ones(6, 8), T.ones(2, 8, 4), offs=o.long()),
    lambda F, T, o: F.grouped_mm(T.ones(6, 8), T.ones(2, 8, 4), offs=o[None]),
    lambda F, T, o: F.grouped_mm(T.ones(6, 8), T.ones(3, 8, 4), offs=o),
    lambda F, T, o: F.grouped_mm(T.ones(3, 3, 8), T.ones(2, 8, 4)),
    lambda F, T, o: F.grouped_mm(T.ones(2, 3, 8), T.ones(2, 8, 4), bias=T.ones(4)),
    lambda F, T, o: F.grouped_mm(T.ones(2, 3, 8), T.ones(2, 8, 4), out_dtype=T.float16),
    lambda F, T, o: F.grouped_mm(T.ones(2, 3, 8), T.ones(2, 8, 8).half()),
    lambda F, T, o: F.grouped_mm(T.ones(2, 8, 3).transpose(1, 2), T.ones(2, 8, 4)),
])
def test_grouped_mm_errors_match_torch(call):
    to, jo = _offs(2, 6)
    _same_error(lambda: call(TF, torch, to), lambda: call(JF, jtorch, jo))


@pytest.mark.parametrize("call", [
    lambda F, T: F.scaled_mm(T.ones(16, 32), T.ones(32, 16), T.tensor(1.0),
                             F.ScalingType.TensorWise, T.tensor(1.0), F.ScalingType.TensorWise),
    lambda F, T: F.scaled_mm(T.ones(16, 32), T.ones(32, 8), T.ones(16, 1), F.ScalingType.RowWise,
                             T.ones(1, 16), F.ScalingType.RowWise, output_dtype=T.float32),
    lambda F, T: F.scaled_mm(T.ones(16, 32).double(), T.ones(32, 8), [T.ones(16, 1)],
                             [F.ScalingType.BlockWise1x32], T.ones(1, 16),
                             F.ScalingType.RowWise),
    lambda F, T: F.scaled_mm(T.ones(16, 32), T.ones(30, 8), T.ones(16, 1), F.ScalingType.RowWise,
                             T.ones(1, 8), F.ScalingType.RowWise),
    lambda F, T: F.scaled_mm(T.ones(3, 16, 32), T.ones(32, 8), T.ones(16, 1),
                             F.ScalingType.RowWise, T.ones(1, 8), F.ScalingType.RowWise),
    lambda F, T: F.scaled_mm(T.ones(16, 32), T.ones(32, 16), T.tensor(1.0), 0, T.tensor(1.0), 0),
])
def test_scaled_mm_raises_torchs_cpu_errors(call):
    _same_error(lambda: call(TF, torch), lambda: call(JF, jtorch))


def test_scaled_grouped_mm_has_no_cpu_kernel():
    args = lambda F, T: (T.ones(16, 32), T.ones(2, 32, 16), T.ones(16),
                         F.ScalingType.RowWise, T.ones(2, 16), F.ScalingType.RowWise)
    for F, T in ((TF, torch), (JF, jtorch)):
        with pytest.raises(NotImplementedError, match="Could not run "
                           "'aten::_scaled_grouped_mm_v2' with arguments from the 'CPU' backend"):
            F.scaled_grouped_mm(*args(F, T), offs=T.tensor([8, 16], dtype=T.int32))
    assert [e.name for e in JF.ScalingType] == list(TF.ScalingType.__members__)
    assert [e.value for e in JF.SwizzleType] == [e.value for e in
                                                 TF.SwizzleType.__members__.values()]
