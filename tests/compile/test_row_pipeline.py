"""Pipelined row kernels: where a row group's first reduction reads the row's inputs only and
its last loop is not guarded, the kernel has pipelined entries, which rows of 256 or more run:
row r's last loop also computes row r + 1's first reduction.
Every row (the first of a chunk too, and a lone row) gets its reduction from that one loop:
rows alike give the same bits wherever they lie, in a batch of any size, on one thread or
two, and all agree with eager."""

from __future__ import annotations

import re

import numpy as np
import pytest

import jtorch
from jtorch import _flags
from jtorch.compile.row_fusion import _PIPE_MIN_C, RowKernel


def _row_kernel_of(piece) -> RowKernel:
    (k,) = [n.target for n in piece.__self__.graph.nodes if isinstance(n.target, RowKernel)]
    return k


def _row_kernel(cf) -> RowKernel:
    (piece,) = [fn for fn, _ in cf.pieces.values()]
    return _row_kernel_of(piece)


def _layer_norm(x, w, b):  # first reduction: a plain mean (float64 lanes)
    return jtorch.nn.functional.layer_norm(x, (x.shape[-1],), w, b)


def _softmax(x, w, b):  # first reduction: amax (its combine)
    return jtorch.softmax(x, -1)


def _log_softmax(x, w, b):
    return jtorch.log_softmax(x, -1)


def _rms_norm(x, w, b):  # first reduction: a sum of x * x (float32 blocks)
    return x * (x * x).mean(dim=-1, keepdim=True).add(1e-6).rsqrt() * w + b


def _reference(fn, x, w, b) -> np.ndarray:
    return fn(x.double(), w.double(), b.double()).numpy()


_FNS = [_layer_norm, _softmax, _log_softmax, _rms_norm]


@pytest.mark.parametrize("fn", _FNS)
@pytest.mark.parametrize("rows, C", [(1, 7), (2, 7), (1, 256), (2, 256), (3, 300), (5, 1000),
                                     (4, 257), (3, 20000)])
def test_pipelined_rows_equal_eager(fn, rows, C):
    g = np.random.default_rng(rows * 1000 + C)
    x = jtorch.from_numpy((g.standard_normal((rows, C)) * 3 + 1).astype(np.float32))
    w = jtorch.from_numpy(g.standard_normal(C).astype(np.float32))
    b = jtorch.from_numpy(g.standard_normal(C).astype(np.float32))
    cf = jtorch.compile(fn)
    got = cf(x, w, b).numpy()
    np.testing.assert_allclose(got, fn(x, w, b).numpy(), rtol=1e-5, atol=2e-5)
    np.testing.assert_allclose(got, _reference(fn, x, w, b), rtol=1e-5, atol=2e-5)
    # (its pipelined entries; softmax's also find the next row's least element)
    assert re.search(r"\bnacc(, nm[nx]\d+)* = _seg", _row_kernel(cf).source)


@pytest.mark.parametrize("fn", _FNS)
def test_rows_alike_give_the_same_bits_anywhere_on_one_thread_or_two(fn):
    # rows past the grain size: the parallel entry splits them into chunks, and each chunk's
    # first row takes its reduction from a pass of the same loop before its own
    C = 1024
    rows = _flags.GRAIN_SIZE // C + 3
    g = np.random.default_rng(7)
    row = (g.standard_normal(C) * np.exp(g.uniform(-6, 6, C))).astype(np.float32)
    x = jtorch.from_numpy(np.ascontiguousarray(np.broadcast_to(row, (rows, C))))
    w = jtorch.from_numpy(g.standard_normal(C).astype(np.float32))
    b = jtorch.from_numpy(g.standard_normal(C).astype(np.float32))
    cf = jtorch.compile(fn, dynamic=False)  # (a graph per shape: each a row kernel)
    n = jtorch.get_num_threads()
    try:
        jtorch.set_num_threads(2)
        two = cf(x, w, b).numpy()
        jtorch.set_num_threads(1)
        one = cf(x, w, b).numpy()
        few = cf(x[:5], w, b).numpy()  # the serial entry
        lone = cf(x[:1], w, b).numpy()
    finally:
        jtorch.set_num_threads(n)
    assert (two == two[0]).all() and (one == one[0]).all() and (few == few[0]).all()
    assert len(cf.pieces) == 3 and all(_row_kernel_of(fn_)._mod.serialp.signatures
                                       for fn_, _ in cf.pieces.values())
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(few[0], two[0])
    np.testing.assert_array_equal(lone[0], two[0])
    np.testing.assert_allclose(two[:2], _reference(fn, x[:2], w, b), rtol=1e-5, atol=2e-5)


@pytest.mark.parametrize("C", [_PIPE_MIN_C - 1, _PIPE_MIN_C])
def test_rows_of_256_or_more_run_the_pipelined_entry(C, monkeypatch):
    cf = jtorch.compile(_log_softmax, dynamic=False)
    x = jtorch.randn(3, C)
    w = b = jtorch.ones(C)
    cf(x, w, b)
    mod = _row_kernel(cf)._mod
    calls = []
    for name in ("serial", "serialp"):
        f = getattr(mod, name)
        monkeypatch.setattr(mod, name, lambda *a, f=f, name=name: calls.append(name) or f(*a))
    np.testing.assert_allclose(cf(x, w, b).numpy(), _log_softmax(x, w, b).numpy(), rtol=1e-5,
                               atol=1e-5)
    assert calls == ["serialp" if C >= _PIPE_MIN_C else "serial"]


def test_a_first_reduction_over_a_row_value_is_not_pipelined():
    # the sum reads x - c with c a row's value given as an input: its next row's c would have
    # to be read as well, which the pipeline does not do
    def fn(x, c):
        t = x - c
        return t / t.sum(dim=-1, keepdim=True)

    x = jtorch.rand(6, 300) + 1
    c = jtorch.rand(6, 1)
    cf = jtorch.compile(fn)
    np.testing.assert_allclose(cf(x, c).numpy(), fn(x, c).numpy(), rtol=1e-5, atol=1e-6)
    assert "nacc" not in _row_kernel(cf).source
