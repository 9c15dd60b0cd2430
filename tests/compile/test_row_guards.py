"""Row kernels check each row before a loop that computes an op with a fast scalar (exp, log,
sin): rows where it is exact run the fast build, the others the full one. The two give the
same bits: each program's guarded kernel against the same kernel generated without guards,
on rows in and out of the fast range (the exp's normal range, nan, infinities)."""

from __future__ import annotations

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
}


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
    return x.astype(dtype)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_guarded_row_kernel_equals_unguarded(name, dtype, monkeypatch):
    fn = PROGRAMS[name]
    x = jtorch.from_numpy(_rows(dtype))
    cf = jtorch.compile(fn)
    got = cf(x)
    ks = _row_kernels(cf)
    assert ks and any("if _seg" in k.source and "_ok_" in k.source for k in ks)
    monkeypatch.setattr(codegen, "guarded", lambda op, compute: False)
    plain = jtorch.compile(fn)
    want = plain(x)
    assert not any("_ok_" in k.source for k in _row_kernels(plain))
    np.testing.assert_array_equal(got.numpy().view(np.uint8), want.numpy().view(np.uint8))
    np.testing.assert_allclose(got.numpy(), fn(x).numpy(), rtol=1e-5, atol=1e-30)

