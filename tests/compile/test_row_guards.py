"""Row kernels check each row before a loop that computes an op with a fast scalar (exp, log,
sin): rows where it is exact run the fast build, the others the full one. The two give the
same bits: each program's guarded kernel against the same kernel generated without guards,
on rows in and out of the fast range (the exp's normal range, nan, infinities)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import jtorch
from jtorch.compile.row_fusion import RowKernel
from jtorch.kernels import codegen


def _row_kernels(cf) -> list:
    gms = [fn.__self__ for fn, _ in cf.pieces.values() if hasattr(fn, "__self__")]
    return [n.target for gm in gms for n in gm.graph.nodes if isinstance(n.target, RowKernel)]


PROGRAMS = {
    "softmax": lambda x: jtorch.softmax(x, -1),
    "log_softmax": lambda x: jtorch.log_softmax(x, -1),
    "exp_rows": lambda x: (x - x.amax(-1, keepdim=True)).exp() / (x * 0.5).exp().sum(-1, keepdim=True),
    "log_rows": lambda x: (x.abs() + 0.5).log().sum(-1, keepdim=True) * x,
    "sin_rows": lambda x: (x.sin() * x).sum(-1, keepdim=True) + x.cos(),
    # checks from the row's extremes: exp of values monotonic in x (a product by a constant;
    # by a row's reciprocal, which may be inf or nan, then negated; by a row sum of either
    # sign); log of x shifted by a row value
    "scaled_softmax": lambda x: jtorch.softmax(x * 0.125, -1),
    "recip_row_neg": lambda x: (-(x * x.abs().amax(-1, keepdim=True).reciprocal())).exp()
    .sum(-1, keepdim=True),
    "mul_row_sum": lambda x: (x * x.sum(-1, keepdim=True) - 3.0).exp().sum(-1, keepdim=True) + x,
    "log_rows_shift": lambda x: (x - x.amin(-1, keepdim=True) + 1e-30).log().sum(-1, keepdim=True),
    # and from a loop over the row: exp of x * x is not monotonic in x; a quotient (an
    # expensive op) is stored to a row of its own, which the check reads
    "exp_square": lambda x: (x * x * -0.5).exp().sum(-1, keepdim=True) * x,
    "div_row_neg": lambda x: (-(x / x.abs().amax(-1, keepdim=True))).exp().sum(-1, keepdim=True),
}
# whether a program's row check reads the extremes an earlier loop found
RANGE_CHECKED = {"softmax": True, "log_softmax": True, "scaled_softmax": True,
                 "recip_row_neg": True, "mul_row_sum": True, "log_rows_shift": True,
                 "exp_square": False, "div_row_neg": False}


def _rows(dtype) -> np.ndarray:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((24, 300))
    x[1, 7] = -np.inf
    x[2, :] = -np.inf
    x[3, 9] = np.nan
    x[4, 0] = np.inf
    x[5] *= 60  # gaps beyond the exp's normal range
    x[6, :3] = 1e30  # sin beyond its Cody-Waite range
    x[7, 1] = -86.0  # just inside exp_normal's range against a max of 0
    x[7, 0] = 0.0
    x[8] = -x[8] ** 2 * 1e-3  # (all inside)
    x[9, :] = 0.0
    x[10, 5] = 1e30  # products with it overflow
    x[11, :] = 1e-3 * x[11]  # a row sum near 0
    x[12, :] = -x[12] ** 2  # (all of one sign)
    x[13, 3] = -1e30
    x[14, :] = np.abs(x[14]) + 1.0
    return x.astype(dtype)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_guarded_row_kernel_equals_unguarded(name, dtype, monkeypatch):
    fn = PROGRAMS[name]
    x = jtorch.from_numpy(_rows(dtype))
    cf = jtorch.compile(fn)
    got = cf(x)
    ks = _row_kernels(cf)
    assert ks and any(" else _seg" in k.source and "_ok_" in k.source for k in ks)
    monkeypatch.setattr(codegen, "guarded", lambda op, compute: False)
    plain = jtorch.compile(fn)
    want = plain(x)
    assert not any("_ok_" in k.source for k in _row_kernels(plain))
    np.testing.assert_array_equal(got.numpy().view(np.uint8), want.numpy().view(np.uint8))
    np.testing.assert_allclose(got.numpy(), fn(x).numpy(), rtol=1e-5, atol=1e-30)


@pytest.mark.parametrize("name", sorted(RANGE_CHECKED))
def test_row_check_from_extremes_where_the_guarded_value_is_monotonic(name):
    """Where each guarded op checks an interval of a value monotonic in one input's element,
    the row check reads that input's least and greatest elements, found by the first
    reduction's loop (a function of scalars: ``seg<k>r``), instead of a loop over the row."""
    cf = jtorch.compile(PROGRAMS[name])
    cf(jtorch.from_numpy(_rows(np.float32)))
    src = "\n".join(k.source for k in _row_kernels(cf))
    assert bool(re.search(r"def seg\d+r\(", src)) == RANGE_CHECKED[name]
    assert bool(re.search(r"def seg\d+g\(C", src)) != RANGE_CHECKED[name]
    if RANGE_CHECKED[name]:
        assert re.search(r"acc, mn0, mx0 = _seg\d+\(C", src)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("C", [7, 300])
def test_row_check_from_the_extremes_of_an_input_the_first_loop_does_not_reduce(dtype, C,
                                                                               monkeypatch):
    """The first reduction sums y; the guarded exp reads x: that loop (and the pipelined one,
    for the next row) also finds x's extremes, and the kernel equals the unguarded one."""
    def fn(x, y):
        return (x - y.sum(-1, keepdim=True) * 0.01).exp().sum(-1, keepdim=True) * x

    x, y = _rows(dtype)[:, :C].copy(), _rows(dtype)[::-1, :C].copy()
    args = (jtorch.from_numpy(x), jtorch.from_numpy(y))
    cf = jtorch.compile(fn)
    got = cf(*args)
    src = "\n".join(k.source for k in _row_kernels(cf))
    assert re.search(r"def seg\d+r\(", src) and not re.search(r"def seg\d+g\(C", src)
    monkeypatch.setattr(codegen, "guarded", lambda op, compute: False)
    want = jtorch.compile(fn)(*args)
    np.testing.assert_array_equal(got.numpy().view(np.uint8), want.numpy().view(np.uint8))
