"""Row kernels lend their one full output's row to the last expensive scratch value (softmax's
exp is written to the output row and rescaled there in place, as eager's kernel does), fall
back to a scratch row where the output is written before the last loop, and sum an operand
read as it is (layer norm's mean) in float64: each against eager."""

from __future__ import annotations

import numpy as np
import pytest

import jtorch
from jtorch.compile.row_fusion import RowKernel


def _row_kernels(cf) -> list:
    gms = [fn.__self__ for fn, _ in cf.pieces.values() if hasattr(fn, "__self__")]
    return [n.target for gm in gms for n in gm.graph.nodes if isinstance(n.target, RowKernel)]


def _softmax(x):
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def _stored_output(x):
    # the output (tanh) is summed too: its row is written by the sum's loop, not the last
    t = x.exp()
    o = (t * 0.5).tanh()
    return o * 3, o.sum(dim=-1)


def _two_full_outputs(x):
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return e, e / e.sum(dim=-1, keepdim=True)


def _layer_norm_like(x):
    m = x.mean(dim=-1, keepdim=True)
    d = x - m
    return d * (d * d).mean(dim=-1, keepdim=True).add(1e-5).rsqrt()


# whether the kernel keeps a scratch row: softmax lends its output row to exp; where the
# output is written early (summed too) exp keeps its own row; an output exp needs none
@pytest.mark.parametrize("fn, scratch", [(_softmax, False), (_stored_output, True),
                                         (_two_full_outputs, False), (_layer_norm_like, False)])
@pytest.mark.parametrize("shape", [(3, 7), (2, 5, 300), (4, 1)])
def test_row_kernels_equal_eager(fn, scratch, shape):
    x = jtorch.randn(*shape) * 3
    cf = jtorch.compile(fn)
    got, want = cf(x), fn(x)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=2e-6, atol=1e-6)
    (k,) = _row_kernels(cf)
    assert ("np.empty(C" in k.source) is scratch, k.source


def test_softmax_writes_its_exp_to_the_output_row():
    cf = jtorch.compile(_softmax)
    cf(jtorch.randn(4, 8))
    (k,) = _row_kernels(cf)
    assert "o0[i] = w2" in k.source and "t2" not in k.source


def test_a_plain_mean_accumulates_in_float64():
    x = jtorch.full((2, 4097), 0.1) + jtorch.arange(4097.0) * 1e-3
    cf = jtorch.compile(_layer_norm_like)
    np.testing.assert_allclose(cf(x).numpy(), _layer_norm_like(x.double()).float().numpy(),
                               rtol=1e-5, atol=1e-5)
    (k,) = _row_kernels(cf)
    # (pipelined: summed by the output loop of the row before)
    assert "nacc = _r_add(nacc, np.float64(n0[i]))" in k.source
