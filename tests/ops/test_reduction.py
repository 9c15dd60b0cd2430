"""Reductions, scans and sorting against torch: dtypes, dims, keepdim, 0-d, 0-size,
non-contiguous inputs, nan/inf, ties, errors, and the parallel kernel variants."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import jtorch
from jtorch.ops import reduction as R

from helpers import ULP32, exact_like, raises_as, raises_like

DTYPES = ("float32", "float64", "int64", "bool")
TOL = {"float16": (2e-3, 2e-3), "float32": (2e-5, 2e-5), "float64": (1e-12, 1e-12)}


def _data(shape, dtype, seed=0, special=False):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype in ("int64", "int32", "uint8"):
        return rng.integers(0 if dtype == "uint8" else -5, 6, size=shape).astype(dtype)
    a = rng.standard_normal(shape).astype(dtype)
    if special and a.size >= 4:
        flat = a.reshape(-1)
        flat[1], flat[-2] = np.nan, np.inf
        flat[len(flat) // 2] = -np.inf
    return a


def _layouts(a):
    """The same values as contiguous, transposed and sliced (non-contiguous) arrays."""
    yield "contiguous", a
    if a.ndim >= 2:
        yield "transposed", np.ascontiguousarray(np.moveaxis(a, 0, -1)).transpose(
            [a.ndim - 1] + list(range(a.ndim - 1)))
    if a.ndim >= 1:
        big = np.repeat(a, 2, axis=0)
        yield "sliced", big[::2]


def pair(a):
    """A jtorch and a torch tensor over the same (possibly strided) NumPy array."""
    return jtorch.from_numpy(a), torch.from_numpy(a)


def check(j, t, tol=None):
    if isinstance(t, tuple):
        assert isinstance(j, tuple) and len(j) == len(t)
        for x, y in zip(j, t):
            check(x, y, tol)
        return
    assert isinstance(j, jtorch.Tensor), type(j)
    assert str(j.dtype) == str(t.dtype), (j.dtype, t.dtype)
    assert tuple(j.shape) == tuple(t.shape), (j.shape, t.shape)
    rtol, atol = tol or TOL.get(str(t.dtype).split(".")[-1], (0, 0))
    jn, tn = j.numpy(), t.numpy()
    if rtol == 0:
        np.testing.assert_array_equal(jn, tn)
    else:
        np.testing.assert_allclose(jn, tn, rtol=rtol, atol=atol, equal_nan=True)


DIMS = (None, 0, 1, -1, (0, 2), (-1, 0), (0, 1, 2))


def _call(fn, x, dim, keepdim, **kw):
    if dim is None:
        return fn(x, **kw) if not keepdim else fn(x, dim=None, keepdim=True, **kw)
    return fn(x, dim, keepdim=keepdim, **kw)


SIMPLE = ["sum", "nansum", "mean", "prod", "amax", "amin", "all", "any"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", SIMPLE)
def test_simple_reductions(name, dtype):
    jf, tf = getattr(jtorch, name), getattr(torch, name)
    if name == "mean" and dtype in ("int64", "bool"):
        x = _data((3, 4), dtype)
        raises_like(lambda: jf(jtorch.from_numpy(x)), lambda: tf(torch.from_numpy(x)))
        return
    special = name in ("sum", "nansum", "amax", "amin", "mean")
    base = _data((3, 4, 5), dtype, special=special)
    for _, a in _layouts(base):
        jx, tx = pair(a)
        for dim in DIMS:
            if name == "prod" and isinstance(dim, tuple):
                continue
            for keepdim in (False, True):
                if dim is None and name in ("amax", "amin", "prod", "all", "any") and keepdim:
                    continue
                check(_call(jf, jx, dim, keepdim), _call(tf, tx, dim, keepdim))
        # the Tensor method
        check(getattr(jx, name)(), getattr(tx, name)())


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", SIMPLE + ["count_nonzero"])
@pytest.mark.parametrize("shape,dim", [((6, 5, 4, 3), (0, 2, 3)), ((6, 1, 5, 4), (0, 2, 3)),
                                       ((2, 3, 4, 5, 6), (0, 1, 3, 4)),
                                       ((2, 3, 4, 5), (0, 2)), ((3, 2, 16, 17), (0, 2, 3))])
def test_reductions_on_both_sides_of_a_kept_dim(name, dtype, shape, dim):
    """Dims before and after a kept one (a convolution's bias gradient): reduced in two
    stages where the reduction composes (sum, mean, prod, amax, amin, all, any), else
    through a transposed copy (nansum, count_nonzero)."""
    if name == "mean" and dtype in ("int64", "bool") or name == "prod":
        pytest.skip("mean takes floats; prod one dim (its two stages: the next test)")
    a = _data(shape, dtype, special=name in ("sum", "nansum", "amax", "amin", "mean"))
    if name == "nansum" and dtype.startswith("float"):
        a[1, :, 0, 0] = np.inf  # inf - inf within a part: nan, as torch
        a[1, :, 0, 1] = -np.inf
    jx, tx = pair(a)
    jf, tf = getattr(jtorch, name), getattr(torch, name)
    for keepdim in ((False, True) if name != "count_nonzero" else (False,)):
        kw = {"keepdim": keepdim} if name != "count_nonzero" else {}
        got, want = jf(jx, dim, **kw), tf(tx, dim, **kw)
        if want.dtype == torch.float32:  # torch's float32 rounding is its own
            ref = tf(torch.from_numpy(a.astype(np.float64)), dim, **kw).to(torch.float32)
            check(got, ref, (1e-5, 1e-5))
        check(got, want, (1e-4, 1e-4) if dtype == "float32" else None)


@pytest.mark.parametrize("shape", [(5, 3, 4, 4), (3, 2, 16, 17), (2, 3, 4, 2, 5)])
def test_staged_reductions_take_no_transposed_copy(shape, monkeypatch):
    """Over (0, 2, 3...): the outer dims first where the rows after the kept dim are short
    (under ``_SHORT_ROW``), else those rows first; either way no transposed copy, and the
    same values as float64 NumPy through the eager call and ``reduce_array``."""
    from jtorch import dtypes
    from jtorch.kernels.cpu import reduce as rk
    from jtorch.kernels.registry import REGISTRY

    dims = (0,) + tuple(range(2, len(shape)))
    monkeypatch.setattr(rk, "_permuted_copy", lambda *a: pytest.fail("transposed copy"))
    first = rk._stage_dims("sum", shape, dims)[0]
    assert first == ((0,) if math.prod(shape[2:]) < rk._SHORT_ROW else dims[1:])
    a = _data(shape, "float32")
    want = a.astype(np.float64).sum(dims)
    for got in (jtorch.from_numpy(a).sum(dims).numpy(),
                rk.reduce_array(REGISTRY["sum"], a, dims, dtypes.float32, dtypes.float32,
                                dtypes.float32)):
        np.testing.assert_allclose(got, want, rtol=1e-5)
    got = jtorch.from_numpy(a).amax(dims, keepdim=True).numpy()
    np.testing.assert_array_equal(got, a.max(dims, keepdims=True))


@pytest.mark.parametrize("dtype", ["float64", "int64"])
def test_prod_on_both_sides_of_a_kept_dim_in_two_stages(dtype, monkeypatch):
    from jtorch import dtypes
    from jtorch.kernels.cpu import reduce as rk
    from jtorch.kernels.registry import REGISTRY

    staged = []
    real = rk._in_stages
    monkeypatch.setattr(rk, "_in_stages", lambda *a: staged.append(a[2]) or real(*a))
    a = _data((4, 3, 2, 5), dtype)
    d = getattr(dtypes, dtype)
    got = rk.reduce_array(REGISTRY["prod"], a, (0, 2, 3), d, d, d)
    np.testing.assert_allclose(got, np.prod(a, axis=(0, 2, 3)), rtol=1e-12)
    assert staged == [(0, 2, 3)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_count_nonzero(dtype):
    a = _data((3, 4, 5), dtype)
    if dtype.startswith("float"):
        a[0, 0] = 0
    for _, v in _layouts(a):
        jx, tx = pair(v)
        for dim in (None, 0, -1, (0, 2)):
            check(jtorch.count_nonzero(jx, dim), torch.count_nonzero(tx, dim))


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "amin", "nansum", "all", "any"])
def test_zero_dim_and_empty(name):
    jf, tf = getattr(jtorch, name), getattr(torch, name)
    jx, tx = pair(np.array(2.5, np.float32))
    check(jf(jx), tf(tx))
    check(jf(jx, 0), tf(tx, 0))
    check(jf(jx, -1, keepdim=True), tf(tx, -1, keepdim=True))
    raises_like(lambda: jf(jx, 1), lambda: tf(tx, 1))
    je, te = pair(np.zeros((0, 3), np.float32))
    for args in [(), (0,), (1,), (-1,)]:
        try:
            expect = tf(te, *args)
        except (RuntimeError, IndexError):
            raises_like(lambda a=args: jf(je, *a), lambda a=args: tf(te, *a))
            continue
        check(jf(je, *args), expect)


def test_sum_dtypes_and_results():
    x = _data((3, 4), "float32")
    i = _data((3, 4), "int64")
    b = _data((3, 4), "bool")
    jx, tx = pair(x)
    ji, ti = pair(i)
    jb, tb = pair(b)
    check(jtorch.sum(jb), torch.sum(tb))
    check(jtorch.prod(jb), torch.prod(tb))
    check(jtorch.sum(ji, dtype=jtorch.float32), torch.sum(ti, dtype=torch.float32))
    check(jtorch.sum(ji, 0, dtype=jtorch.bool), torch.sum(ti, 0, dtype=torch.bool))
    check(jtorch.sum(jx, 1, dtype=jtorch.float64), torch.sum(tx, 1, dtype=torch.float64))
    check(jtorch.mean(ji, dtype=jtorch.float64), torch.mean(ti, dtype=torch.float64))
    check(jtorch.prod(jx, 0, dtype=jtorch.float64), torch.prod(tx, 0, dtype=torch.float64))
    check(jtorch.all(jtorch.from_numpy(i.astype(np.uint8)), 1),
          torch.all(torch.from_numpy(i.astype(np.uint8)), 1))
    check(jx.sum(axis=1), tx.sum(axis=1))
    check(jx.mean(dim=(0, 1), keepdim=True), tx.mean(dim=(0, 1), keepdim=True))
    raises_like(lambda: jtorch.mean(jx, dtype=jtorch.int64), lambda: torch.mean(tx, dtype=torch.int64))
    raises_like(lambda: jtorch.mean(ji), lambda: torch.mean(ti))
    raises_like(lambda: jtorch.mean(jb), lambda: torch.mean(tb))
    out = jtorch.empty(3)
    r = jtorch.sum(jx, 1, out=out)
    assert r is out
    check(out, torch.sum(tx, 1))


def test_float16():
    a = _data((4, 6), "float32").astype(np.float16)
    jx, tx = pair(a)
    check(jtorch.sum(jx, 1), torch.sum(tx, 1))
    check(jtorch.mean(jx), torch.mean(tx))
    check(jtorch.amax(jx, 0), torch.amax(tx, 0))
    check(jtorch.softmax(jx, 1), torch.softmax(tx, 1))
    check(jtorch.cumsum(jx, 1), torch.cumsum(tx, 1), (5e-3, 5e-3))
    check(jtorch.max(jx, 1), torch.max(tx, 1))


def test_dim_errors():
    jx, tx = pair(_data((2, 3), "float32"))
    for f in ("sum", "mean", "amax", "all", "any", "count_nonzero"):
        raises_like(lambda f=f: getattr(jtorch, f)(jx, 2), lambda f=f: getattr(torch, f)(tx, 2))
        raises_like(lambda f=f: getattr(jtorch, f)(jx, (0, 0)),
                    lambda f=f: getattr(torch, f)(tx, (0, 0)))
        raises_like(lambda f=f: getattr(jtorch, f)(jx, (0, -2)),
                    lambda f=f: getattr(torch, f)(tx, (0, -2)))
    raises_like(lambda: jtorch.prod(jx, (0, 1)), lambda: torch.prod(tx, (0, 1)))


def test_empty_errors():
    je, te = pair(np.zeros((0, 3), np.float32))
    for f in ("amax", "amin", "max", "min", "argmax", "argmin", "aminmax"):
        raises_like(lambda f=f: getattr(jtorch, f)(je), lambda f=f: getattr(torch, f)(te))
    for f in ("amax", "amin", "max", "min", "argmax", "argmin", "median"):
        raises_like(lambda f=f: getattr(jtorch, f)(je, 0), lambda f=f: getattr(torch, f)(te, 0))
        check(getattr(jtorch, f)(je, 1)[0] if f in ("max", "min", "median")
              else getattr(jtorch, f)(je, 1),
              getattr(torch, f)(te, 1)[0] if f in ("max", "min", "median")
              else getattr(torch, f)(te, 1))
    check(jtorch.median(je), torch.median(te))
    check(jtorch.logsumexp(je, 0), torch.logsumexp(te, 0))
    check(jtorch.var(je), torch.var(te))


# -- max / min / argmax --------------------------------------------------------------------

TIES = np.array([[1.0, 3.0, 3.0, 0.0],
                 [2.0, 2.0, 1.0, 1.0],
                 [np.nan, 5.0, np.nan, 5.0]], np.float32)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_max_min_with_dim(dtype):
    a = TIES.astype(dtype) if dtype != "int64" else np.nan_to_num(TIES, nan=9).astype("int64")
    for _, v in _layouts(a):
        jx, tx = pair(v)
        for fn in ("max", "min"):
            for dim in (0, 1, -1):
                for keepdim in (False, True):
                    j = getattr(jtorch, fn)(jx, dim, keepdim)
                    t = getattr(torch, fn)(tx, dim, keepdim)
                    check(j.values, t.values)
                    check(j.indices, t.indices)
                    check(tuple(j), tuple(t))
            check(getattr(jtorch, fn)(jx), getattr(torch, fn)(tx))
            check(getattr(jx, fn)(dim=1).indices, getattr(tx, fn)(dim=1).indices)
        for fn in ("argmax", "argmin"):
            for dim in (None, 0, 1, -1):
                for keepdim in (False, True):
                    check(getattr(jtorch, fn)(jx, dim, keepdim), getattr(torch, fn)(tx, dim, keepdim))


def test_max_misc():
    jx, tx = pair(TIES)
    r = jtorch.max(jx, 1)
    assert isinstance(r, tuple) and repr(r).startswith("torch.return_types.max(\nvalues=")
    jy, ty = pair(_data((3, 4), "float32", 1))
    check(jtorch.max(jx, jy), torch.max(tx, ty))
    check(jtorch.min(jx, jy), torch.min(tx, ty))
    jb, tb = pair(_data((3, 4), "bool"))
    check(jtorch.max(jb), torch.max(tb))
    check(jtorch.max(jb, 1).values, torch.max(tb, 1).values)
    raises_like(lambda: jtorch.argmax(jb), lambda: torch.argmax(tb))
    jz, tz = pair(np.array(3.0, np.float32))
    check(tuple(jtorch.max(jz, 0)), tuple(torch.max(tz, 0)))
    check(jtorch.argmax(jz, 0), torch.argmax(tz, 0))
    check(tuple(jtorch.aminmax(jx)), tuple(torch.aminmax(tx)))
    check(tuple(jtorch.aminmax(jx, dim=1, keepdim=True)), tuple(torch.aminmax(tx, dim=1, keepdim=True)))


# -- statistics ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_var_std(dtype):
    a = _data((3, 4, 5), dtype) * 3 + 1
    for _, v in _layouts(a):
        jx, tx = pair(v)
        for dim in (None, 0, -1, (0, 2)):
            for kw in ({}, {"correction": 0}, {"correction": 2}, {"keepdim": True}):
                check(jtorch.var(jx, dim, **kw), torch.var(tx, dim, **kw))
                check(jtorch.std(jx, dim, **kw), torch.std(tx, dim, **kw))
                check(jtorch.var_mean(jx, dim, **kw), torch.var_mean(tx, dim, **kw))
                check(jtorch.std_mean(jx, dim, **kw), torch.std_mean(tx, dim, **kw))
        check(jtorch.var(jx, 1, False), torch.var(tx, 1, False))
        check(jtorch.var(jx, unbiased=False), torch.var(tx, unbiased=False))
        check(jx.std(), tx.std())
    ji, ti = pair(_data((3,), "int64"))
    raises_like(lambda: jtorch.var(ji), lambda: torch.var(ti))
    j1, t1 = pair(np.ones(1, dtype))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(jtorch.var(j1), torch.var(t1))
    with pytest.warns(UserWarning, match="degrees of freedom"):
        jtorch.var(j1)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_nanmean_norm_logsumexp(dtype):
    a = _data((3, 4, 5), dtype)
    a[0, 1, 2] = np.nan
    jx, tx = pair(a)
    for dim in (None, 0, -1, (0, 2)):
        check(jtorch.nanmean(jx, dim), torch.nanmean(tx, dim))
    b = _data((3, 4, 5), dtype)
    for _, v in _layouts(b):
        jx, tx = pair(v)
        for p in (2, 1, math.inf, -math.inf, 0, 3, 0.5, "fro"):
            for dim in (None, 1, (0, 2)):
                check(jtorch.norm(jx, p, dim), torch.norm(tx, p, dim))
        check(jtorch.norm(jx, dim=-1, keepdim=True), torch.norm(tx, dim=-1, keepdim=True))
        for dim in (0, -1, (0, 2), (0, 1, 2)):
            check(jtorch.logsumexp(jx, dim), torch.logsumexp(tx, dim))
            check(jtorch.logsumexp(jx, dim, keepdim=True), torch.logsumexp(tx, dim, keepdim=True))
    inf = np.array([[np.inf, 1.0], [-np.inf, -np.inf], [np.inf, -np.inf], [np.nan, 1.0]], dtype)
    check(jtorch.logsumexp(jtorch.from_numpy(inf), 1), torch.logsumexp(torch.from_numpy(inf), 1))
    ji, ti = pair(_data((3, 4), "int64"))
    check(jtorch.logsumexp(ji, 1), torch.logsumexp(ti, 1))
    raises_like(lambda: jtorch.norm(ji), lambda: torch.norm(ti))
    raises_like(lambda: jtorch.nanmean(ji), lambda: torch.nanmean(ti))


def test_norms_without_an_identity_over_empty_reductions_raise_as_torch():
    """A negative or infinite order has no identity: torch raises where the reduction is
    empty (the whole tensor, or the first given dim that is empty, named as given), and
    reduces non-empty dims of an empty tensor to an empty result."""
    for shape, p, dim in [((0,), -1, None), ((0,), -0.5, None), ((2, 0), -3, None),
                          ((0, 3), -1.0, ()), ((3, 0), -1, -1), ((3, 0), -2, (0, 1)),
                          ((0, 3), math.inf, None), ((0,), -math.inf, None),
                          ((0, 3), math.inf, 0)]:
        raises_like(lambda s=shape, p=p, d=dim: jtorch.linalg.vector_norm(jtorch.zeros(s), p, d),
                    lambda s=shape, p=p, d=dim: torch.linalg.vector_norm(torch.zeros(s), p, d))
    raises_like(lambda: jtorch.zeros(3, 0).norm(-1, dim=1),
                lambda: torch.zeros(3, 0).norm(-1, dim=1))
    for shape, p, dim in [((3, 0), -1, 0), ((0, 3), math.inf, 1), ((0,), 2, None),
                          ((), -1, None)]:
        check(jtorch.linalg.vector_norm(jtorch.zeros(shape), p, dim=dim),
              torch.linalg.vector_norm(torch.zeros(shape), p, dim=dim))


# -- softmax -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax(dtype):
    a = _data((3, 4, 5), dtype) * 4
    for _, v in _layouts(a):
        jx, tx = pair(v)
        for dim in (0, 1, -1):
            check(jtorch.softmax(jx, dim), torch.softmax(tx, dim))
            check(jtorch.log_softmax(jx, dim), torch.log_softmax(tx, dim))
            check(jx.softmax(dim), tx.softmax(dim))
    special = np.array([[np.inf, 1.0, 2.0], [-np.inf, 1.0, 0.0], [-np.inf, -np.inf, -np.inf],
                        [np.nan, 1.0, 0.0]], dtype)
    jx, tx = pair(special)
    for dim in (0, 1):
        check(jtorch.softmax(jx, dim), torch.softmax(tx, dim))
        check(jtorch.log_softmax(jx, dim), torch.log_softmax(tx, dim))
    jz, tz = pair(np.array(1.5, dtype))
    check(jtorch.softmax(jz, 0), torch.softmax(tz, 0))
    je, te = pair(np.zeros((0, 3), dtype))
    check(jtorch.log_softmax(je, 1), torch.log_softmax(te, 1))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_rows_at_the_edge_of_the_exps_normal_range(dtype):
    """A row whose lowest exp(x - max) is normal runs the exp without the subnormal scaling;
    the others the full exp: rows on either side of the edge (where the fast form would give
    wrong subnormals), against float64 math."""
    edge = -86.5 if dtype == "float32" else -707.0
    rows = [[0.0, edge + d, -1.0] for d in (0.5, 0.01, -0.01, -0.5, -3.0, -20.0)]
    rows += [[5.0, 5.0 + edge + 0.25, 4.0], [0.0, -np.inf, -1.0], [0.0, np.nan, 1.0]]
    x = np.pad(np.array(rows, dtype), ((0, 0), (0, 13)), constant_values=-1.0)  # (no short rows)
    xd = x.astype(np.float64)
    with np.errstate(invalid="ignore"):
        e = np.exp(xd - xd.max(1, keepdims=True))
        want = e / e.sum(1, keepdims=True)
    got = jtorch.softmax(jtorch.from_numpy(x), 1).numpy()
    tiny = np.finfo(dtype).smallest_subnormal
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=tiny)
    got = jtorch.log_softmax(jtorch.from_numpy(x), 1).numpy()
    with np.errstate(invalid="ignore", divide="ignore"):
        np.testing.assert_allclose(got, np.log(want), rtol=1e-6)


def test_softmax_dtype_and_errors():
    ji, ti = pair(_data((3, 4), "int64"))
    check(jtorch.softmax(ji, 0, dtype=jtorch.float64), torch.softmax(ti, 0, dtype=torch.float64))
    jx, tx = pair(_data((3, 4), "float32"))
    check(jtorch.log_softmax(jx, 1, dtype=jtorch.float64), torch.log_softmax(tx, 1, dtype=torch.float64))
    for f in ("softmax", "log_softmax"):
        for dim in (0, 1):
            raises_like(lambda f=f, d=dim: getattr(jtorch, f)(ji, d),
                        lambda f=f, d=dim: getattr(torch, f)(ti, d))


# -- scans ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_cumsum_cumprod(dtype):
    a = _data((3, 4, 5), dtype, special=dtype.startswith("float"))
    if dtype.startswith("float"):
        a = a * 0.5
    for _, v in _layouts(a):
        jx, tx = pair(v)
        for dim in (0, 1, -1):
            check(jtorch.cumsum(jx, dim), torch.cumsum(tx, dim))
            check(jtorch.cumprod(jx, dim), torch.cumprod(tx, dim))
    jx, tx = pair(a)
    check(jtorch.cumsum(jx, 1, dtype=jtorch.float64), torch.cumsum(tx, 1, dtype=torch.float64))
    check(jx.cumsum(0), tx.cumsum(0))
    jz, tz = pair(np.array(3, dtype))
    check(jtorch.cumsum(jz, 0), torch.cumsum(tz, 0))
    je, te = pair(np.zeros((0, 3), dtype))
    check(jtorch.cumprod(je, 0), torch.cumprod(te, 0))
    raises_like(lambda: jtorch.cumsum(jx, None), lambda: torch.cumsum(tx, None))
    raises_like(lambda: jtorch.cumsum(jx, 3), lambda: torch.cumsum(tx, 3))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_cummax_cummin(dtype):
    base = np.array([[1.0, 3.0, np.nan, 3.0, np.nan, 0.0], [2.0, 2.0, 1.0, 5.0, 5.0, -1.0]])
    if dtype == "bool":
        base = np.nan_to_num(base) > 1.5
    elif dtype == "int64":
        base = np.nan_to_num(base, nan=4)
    a = base.astype(dtype)
    for _, v in _layouts(a):
        jx, tx = pair(v)
        for dim in (0, 1, -1):
            check(tuple(jtorch.cummax(jx, dim)), tuple(torch.cummax(tx, dim)))
            check(tuple(jtorch.cummin(jx, dim)), tuple(torch.cummin(tx, dim)))
    assert repr(jtorch.cummax(jx, 0)).startswith("torch.return_types.cummax(")


def test_logcumsumexp():
    a = _data((3, 5), "float64")
    a[0, 1], a[1, 2], a[2, 0] = -np.inf, np.inf, np.nan
    for dtype in ("float32", "float64"):
        for _, v in _layouts(a.astype(dtype)):
            jx, tx = pair(v)
            for dim in (0, 1):
                check(jtorch.logcumsumexp(jx, dim), torch.logcumsumexp(tx, dim))
    ji, ti = pair(_data((3,), "int64"))
    raises_like(lambda: jtorch.logcumsumexp(ji, 0), lambda: torch.logcumsumexp(ti, 0))


# -- sorting -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_sort(dtype):
    rng = np.random.default_rng(3)
    # many ties (compare with stable=True) and nan/inf for floats
    a = rng.integers(0, 4, size=(3, 40, 5)).astype(dtype)
    if dtype.startswith("float"):
        a[0, 3, 1] = a[1, 7, 2] = a[2, 0, 0] = np.nan
        a[0, 5, 1] = np.inf
    for _, v in _layouts(a):
        jx, tx = pair(v)
        for dim in (0, 1, -1):
            for desc in (False, True):
                j = jtorch.sort(jx, dim, desc, stable=True)
                t = torch.sort(tx, dim=dim, descending=desc, stable=True)
                check(tuple(j), tuple(t))
                check(jtorch.argsort(jx, dim, desc, stable=True),
                      torch.argsort(tx, dim=dim, descending=desc, stable=True))
                check(jtorch.sort(jx, dim, desc).values, torch.sort(tx, dim, desc).values)
    check(jtorch.msort(jx), torch.msort(tx))
    # rows of 64+ take the radix path: ties, nan, -0.0 and the dtype's extremes
    b = rng.integers(-3, 4, size=(4, 150)).astype(dtype)
    if dtype.startswith("float"):
        b[0, ::7], b[1, ::11], b[2, ::13] = np.nan, -0.0, -np.inf
        b[3, 5] = np.finfo(dtype).max
    elif dtype == "int64":
        b[0, 3], b[0, 9] = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    for _, v in _layouts(b):
        jx, tx = pair(v)
        for desc in (False, True):
            check(tuple(jtorch.sort(jx, 1, desc, stable=True)),
                  tuple(torch.sort(tx, dim=1, descending=desc, stable=True)))
        if dtype != "bool":  # values only: torch's median picks any index among ties
            check(jtorch.median(jx, 1).values, torch.median(tx, 1).values)
            check(jtorch.nanmedian(jx, 1).values, torch.nanmedian(tx, 1).values)
    jz, tz = pair(np.array(1, dtype))
    check(tuple(jtorch.sort(jz)), tuple(torch.sort(tz)))
    je, te = pair(np.zeros((0, 3), dtype))
    check(tuple(jtorch.sort(je, 0)), tuple(torch.sort(te, 0)))


def test_topk_kthvalue():
    rng = np.random.default_rng(5)
    a = rng.permutation(60).reshape(3, 4, 5).astype(np.float32)  # distinct: indices are unique
    a[1, 2, 3] = np.nan
    for dtype in ("float32", "float64", "int64"):
        b = np.nan_to_num(a, nan=99).astype(dtype) if dtype == "int64" else a.astype(dtype)
        for _, v in _layouts(b):
            jx, tx = pair(v)
            for dim in (0, 1, -1):
                n = v.shape[dim]
                for k in (0, 1, n):
                    for largest in (True, False):
                        check(tuple(jtorch.topk(jx, k, dim, largest)),
                              tuple(torch.topk(tx, k, dim, largest)))
                for k in (1, n):
                    for keepdim in (False, True):
                        check(tuple(jtorch.kthvalue(jx, k, dim, keepdim)),
                              tuple(torch.kthvalue(tx, k, dim, keepdim)))
    # rows of 64+ with small k take the heap selection: stable order among ties
    b = np.random.default_rng(6).integers(-20, 20, size=(3, 200)).astype(np.float32)
    b[0, ::9] = np.nan
    jb = jtorch.from_numpy(b)
    for largest in (True, False):
        for k in (1, 6, 25):
            j = jtorch.topk(jb, k, 1, largest)
            s = jtorch.sort(jb, 1, largest, stable=True)
            np.testing.assert_array_equal(j.values.numpy(), s.values.numpy()[:, :k])
            np.testing.assert_array_equal(j.indices.numpy(), s.indices.numpy()[:, :k])
            t = torch.topk(torch.from_numpy(b), k, 1, largest)
            np.testing.assert_array_equal(j.values.numpy(), t.values.numpy())
        check(jtorch.kthvalue(jb, 3, 1).values, torch.kthvalue(torch.from_numpy(b), 3, 1).values)
    jx, tx = pair(a)
    raises_like(lambda: jtorch.topk(jx, 6), lambda: torch.topk(tx, 6))
    raises_like(lambda: jtorch.kthvalue(jx, 0), lambda: torch.kthvalue(tx, 0))
    raises_like(lambda: jtorch.kthvalue(jx, 6, 1), lambda: torch.kthvalue(tx, 6, 1))


def test_median_mode():
    rng = np.random.default_rng(7)
    a = rng.permutation(60).reshape(3, 4, 5).astype(np.float64)
    for dtype in ("float32", "float64", "int64"):
        for _, v in _layouts(a.astype(dtype)):
            jx, tx = pair(v)
            check(jtorch.median(jx), torch.median(tx))
            for dim in (0, 1, -1):
                for keepdim in (False, True):
                    check(tuple(jtorch.median(jx, dim, keepdim)), tuple(torch.median(tx, dim, keepdim)))
    n = np.array([[1.0, 3.0, np.nan, 2.0, np.nan, 0.0], [np.nan, np.nan, np.nan, np.nan, 1, 2],
                  [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]], np.float32)
    jx, tx = pair(n)
    check(jtorch.median(jx), torch.median(tx))
    check(jtorch.nanmedian(jx), torch.nanmedian(tx))
    for dim in (0, 1):
        check(tuple(jtorch.median(jx, dim)), tuple(torch.median(tx, dim)))
        check(tuple(jtorch.nanmedian(jx, dim)), tuple(torch.nanmedian(tx, dim)))
    m = np.array([[3, 1, 2, 2, 1, 5], [3, 1, 1, 2, 2, 5], [7, 7, 7, 0, 0, 1]], np.int64)
    jm, tm = pair(m)
    check(tuple(jtorch.mode(jm)), tuple(torch.mode(tm)))
    check(tuple(jtorch.mode(jm, 0, True)), tuple(torch.mode(tm, 0, True)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_unique(dtype):
    a = _data((4, 6), dtype)
    if dtype.startswith("float"):
        a = np.round(a)
    jx, tx = pair(a)
    for inv in (False, True):
        for cnt in (False, True):
            check(jtorch.unique(jx, return_inverse=inv, return_counts=cnt),
                  torch.unique(tx, return_inverse=inv, return_counts=cnt))
            check(jtorch.unique_consecutive(jx, return_inverse=inv, return_counts=cnt),
                  torch.unique_consecutive(tx, return_inverse=inv, return_counts=cnt))
    check(jtorch.unique(jx.T if hasattr(jx, "T") else jx), torch.unique(tx.T))
    rows = np.array([[1, 2], [0, 5], [0, 5], [1, 2], [0, 1], [0, 5]]).astype(dtype)
    jr, tr = pair(rows)
    for dim in (0, 1):
        check(jtorch.unique(jr, dim=dim, return_inverse=True, return_counts=True),
              torch.unique(tr, dim=dim, return_inverse=True, return_counts=True))
        check(jtorch.unique_consecutive(jr, dim=dim, return_inverse=True, return_counts=True),
              torch.unique_consecutive(tr, dim=dim, return_inverse=True, return_counts=True))
    je, te = pair(np.zeros((0,), dtype))
    check(jtorch.unique(je), torch.unique(te))


# -- accuracy and parallel paths -------------------------------------------------------------

def test_float32_sum_accuracy():
    """Long float32 sums against the exact sum (torch's own float32 sum is not the oracle: its
    rounding depends on its thread count, 0.5 ulp off here with one thread, 0.2 with two)."""
    rng = np.random.default_rng(11)
    a = (rng.random(300_001) * 10).astype(np.float32)
    jx, tx = pair(a)
    exact = a.astype(np.float64).sum()
    assert abs(float(jtorch.sum(jx)) - exact) <= exact * ULP32  # within 1 ulp
    ones = np.full(20_000_000 // 8, 0.1, np.float32)
    assert abs(float(jtorch.sum(jtorch.from_numpy(ones))) - ones.size * float(np.float32(0.1))) < 1
    check(jtorch.mean(jx), exact_like(torch.mean, [tx], torch.mean(tx)), (ULP32, 0))


def test_parallel_variants(monkeypatch):
    """Small inputs through the prange kernels (GRAIN lowered) match torch."""
    monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 8)
    a = _data((6, 7, 9), "float32", special=False)
    for _, v in _layouts(a):
        jx, tx = pair(v)
        for dim in (None, 0, -1, (0, 2)):
            check(jtorch.sum(jx, dim), torch.sum(tx, dim))
        for dim in (0, 1, -1):
            check(tuple(jtorch.max(jx, dim)), tuple(torch.max(tx, dim)))
            check(jtorch.softmax(jx, dim), torch.softmax(tx, dim))
            check(jtorch.log_softmax(jx, dim), torch.log_softmax(tx, dim))
            check(jtorch.cumsum(jx, dim), torch.cumsum(tx, dim))
            check(tuple(jtorch.sort(jx, dim)), tuple(torch.sort(tx, dim)))
            check(tuple(jtorch.median(jx, dim)), tuple(torch.median(tx, dim)))
        check(jtorch.logsumexp(jx, -1), torch.logsumexp(tx, -1))
    big = torch.from_numpy(_data((40_000,), "float32"))  # exact sum: torch's depends on its threads
    check(jtorch.sum(jtorch.from_numpy(big.numpy())), exact_like(torch.sum, [big], torch.sum(big)))


def test_column_sums_of_one_block_run_serially(monkeypatch):
    """A sum over the rows of a (R, I <= 1024) matrix (a linear layer's bias gradient) is one
    block of columns: the parallel build would run it as one task on a woken pool. Two blocks
    go parallel, with the serial build's bits."""
    from jtorch.kernels.cpu import reduce as K

    monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 8)
    mod = K.kernels(K.registry.REGISTRY["sum"], "float32", "float64", "float32")
    assert mod.entries(1, 192, 384, 1, 192) == (mod.cols_s, mod.cols_s)
    assert mod.entries(2, 192, 384, 1, 192) == (mod.cols_s, mod.cols_p)
    assert mod.entries(1, 1500, 384, 1, 1500) == (mod.cols_s, mod.cols_p)
    a = _data((384, 1500), "float32", special=False)
    jx, _ = pair(a)
    want = a.astype(np.float64).sum(0).astype(np.float32)
    for cols in (192, 1500):
        got = jtorch.sum(jx[:, :cols], 0).numpy()
        np.testing.assert_allclose(got, want[:cols], rtol=2 * ULP32, atol=1e-6)
        monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 1 << 40)
        np.testing.assert_array_equal(jtorch.sum(jx[:, :cols], 0).numpy(), got)
        monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 8)


@pytest.mark.parametrize("log", [False, True])
def test_softmax_rows_go_parallel_from_a_quarter_of_the_grain(monkeypatch, log):
    """An exp per element weighs a softmax row as four elementwise passes: rows of n elements
    in all take the parallel builds from a grain of 4 n (the backward: log_softmax's, whose
    exp is per element too; softmax's backward from n), with the serial builds' bits."""
    from jtorch.kernels.cpu import reduce as K

    mod = K.softmax_kernels("float32")
    ran = []
    for name in ("rows_s", "rows_p", "bwd_rows_s", "bwd_rows_p"):
        fn = getattr(mod, name)
        monkeypatch.setattr(mod, name, lambda *a, _f=fn, _n=name: ran.append(_n) or _f(*a))
    a = _data((30, 40), "float32", special=False)
    f = jtorch.log_softmax if log else jtorch.softmax

    def run():
        x = jtorch.from_numpy(a.copy()).requires_grad_()
        y = f(x, -1)
        y.backward(jtorch.from_numpy(a[::-1].copy()))
        return y.detach().numpy(), x.grad.numpy()

    monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 4 * a.size + 1)
    serial = run()
    assert ran == ["rows_s", "bwd_rows_s"]
    ran.clear()
    monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 4 * a.size)
    par = run()
    assert ran == ["rows_p", "bwd_rows_p" if log else "bwd_rows_s"]
    for got, want in zip(par, serial):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "bool"])
def test_reductions_over_size_one_or_empty_dims_take_the_column_loops(dtype):
    """A reduced size of 1 (a broadcast gradient summed back, a keepdim over a size-1 dim) or
    0 is a vector pass along the kept contiguous elements, not a row call per element; the
    values, dtypes and signed zeros are torch's, serial and parallel builds alike."""
    from jtorch.kernels.cpu import reduce as K

    mod = K.kernels(K.registry.REGISTRY["sum"], "float32", "float64", "float32")
    assert mod.entries(1, 8192, 1, 1, 0) == (mod.cols_s, mod.cols_p)
    assert mod.entries(1, 1000, 0, 1, 1000) == (mod.cols_s, mod.cols_s)
    assert mod.entries(8192, 1, 1, 0, 0)[0] is mod.rows_s  # no contiguous run of outputs
    r = np.random.default_rng(3)
    for shape, dim in [((64, 1, 128), 1), ((1, 8192), 0), ((4096, 1), 1), ((7, 1, 1, 9), (1, 2)),
                       ((3, 0, 5), 1), ((1, 300_000), 0), ((3, 0), 0)]:
        a = (r.standard_normal(shape) * 3).astype(dtype)
        if a.size and dtype.startswith("float"):
            a.flat[0], a.flat[-1] = -0.0, np.nan
        for src in (a, np.asfortranarray(a)):
            for name in ("sum", "mean", "amax", "amin", "prod", "all", "any", "nansum"):
                tx, jx = torch.from_numpy(src), jtorch.from_numpy(src)
                try:
                    want = getattr(torch, name)(tx, dim)
                except (IndexError, RuntimeError, TypeError) as e:  # (amax of none, prod of dims)
                    raises_as(e, lambda name=name, jx=jx, dim=dim: getattr(jtorch, name)(jx, dim))
                    continue
                got = getattr(jtorch, name)(jx, dim)
                assert str(got.dtype) == str(want.dtype), (shape, name)
                np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=f"{shape} {name}")
                if dtype.startswith("float"):
                    assert (np.signbit(got.numpy()) == np.signbit(want.numpy())).all(), (shape, name)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=0, max_size=4), st.data(), st.booleans(),
       st.sampled_from(["sum", "mean", "amax"]), st.booleans())
def test_hypothesis_reductions(shape, data, keepdim, name, transpose):
    a = _data(tuple(shape), "float64", seed=len(shape))
    if transpose and a.ndim >= 2:
        a = a.T
    nd = a.ndim
    dims = data.draw(st.lists(st.integers(-builtins_max(nd, 1), builtins_max(nd, 1) - 1),
                              unique_by=lambda d: d % builtins_max(nd, 1), max_size=builtins_max(nd, 1)))
    dim = tuple(dims) if dims else None
    jx, tx = pair(a)
    jf, tf = getattr(jtorch, name), getattr(torch, name)
    try:
        expect = tf(tx, dim, keepdim) if dim is not None else tf(tx)
    except (RuntimeError, IndexError):
        raises_like(lambda: jf(jx, dim, keepdim) if dim is not None else jf(jx),
                    lambda: tf(tx, dim, keepdim) if dim is not None else tf(tx))
        return
    got = jf(jx, dim, keepdim) if dim is not None else jf(jx)
    check(got, expect)


builtins_max = max


@pytest.mark.parametrize("fname", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,dim", [((5, 7), 1), ((5, 7), 0), ((3, 4, 6), -1), ((3, 4, 6), 1),
                                       ((0, 3), 1), ((4, 1), 1), ((6,), 0)])
def test_softmax_backward_and_double_backward_match_torch(fname, dtype, shape, dim):
    """The backward rows (compiled over a contiguous last dim, composed elsewhere): gradients,
    second-order gradients in both the incoming gradient and the input, and node names."""
    rng = np.random.default_rng(0)
    x, gv, w = (rng.standard_normal(shape).astype(dtype) for _ in range(3))
    jx, tx = jtorch.from_numpy(x.copy()).requires_grad_(), torch.from_numpy(x.copy()).requires_grad_()
    jg, tg = jtorch.from_numpy(gv.copy()).requires_grad_(), torch.from_numpy(gv.copy()).requires_grad_()
    (ja,) = jtorch.autograd.grad(getattr(jx, fname)(dim), jx, jg, create_graph=True)
    (ta,) = torch.autograd.grad(getattr(tx, fname)(dim), tx, tg, create_graph=True)
    tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-13}
    np.testing.assert_allclose(ja.detach().numpy(), ta.detach().numpy(), **tol)
    assert type(ja.grad_fn).__name__ == type(ta.grad_fn).__name__
    (ja ** 2 * jtorch.from_numpy(w)).sum().backward()
    (ta ** 2 * torch.from_numpy(w)).sum().backward()
    tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-10, "atol": 1e-11}
    np.testing.assert_allclose(jx.grad.numpy(), tx.grad.numpy(), **tol)
    np.testing.assert_allclose(jg.grad.numpy(), tg.grad.numpy(), **tol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_softmax_backward_rows_in_and_out_of_the_normal_exp_range(dtype):
    """The backward rows (g - exp(y) * sum(g)) where exp(y) underflows (y near -100 and
    -800), y holds -inf or nan, or exp(y) overflows, against a float64 reference, as the rows
    where every exp(y) is normal."""
    rng = np.random.default_rng(3)
    y = -rng.uniform(0, 5, (8, 300))
    y[1, 4] = -100.0  # float32's exp underflows below -87 (a subnormal or zero)
    y[2, :] -= 95.0
    y[3, 7] = -np.inf
    y[4, 2] = np.nan
    y[5, 9] = -800.0  # (float64's underflow)
    y[6, 0] = 100.0  # (float32's exp overflows)
    y = y.astype(dtype)
    g = rng.standard_normal((8, 300)).astype(dtype)
    got = jtorch.ops.softmax.softmax_backward(jtorch.from_numpy(g), jtorch.from_numpy(y), 1,
                                              True).numpy()
    with np.errstate(over="ignore", invalid="ignore"):
        # (exp in y's dtype: its overflow to inf is the kernel's too)
        want = g - np.exp(y).astype(np.float64) * g.astype(np.float64).sum(1, keepdims=True)
    tol = {"rtol": 2e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-12, "atol": 1e-12}
    np.testing.assert_allclose(got, want, **tol)


def test_softmax_backward_of_a_non_contiguous_gradient():
    x = np.random.default_rng(1).standard_normal((6, 5)).astype(np.float32)
    g = np.random.default_rng(2).standard_normal((5, 6)).astype(np.float32)
    jx, tx = jtorch.from_numpy(x.copy()).requires_grad_(), torch.from_numpy(x.copy()).requires_grad_()
    jx.log_softmax(1).backward(jtorch.from_numpy(g).t())
    tx.log_softmax(1).backward(torch.from_numpy(g).t())
    np.testing.assert_allclose(jx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("layout", ["rows", "columns", "columns, parallel"])
def test_log_softmax_near_the_largest_floats(dtype, layout):
    """(x - max) - log(sum), as torch: x - (max + log(sum)) rounds log 2 away at 3e38."""
    big = 3.4e38
    n = 40_000 if layout == "columns, parallel" else 3
    x = np.full((2, n), big, dtype)
    x[1, 0] = 0.0
    if layout == "rows":
        x = np.ascontiguousarray(x.T)
    dim = 1 if layout == "rows" else 0
    got = jtorch.log_softmax(jtorch.from_numpy(x), dim).numpy()
    want = torch.log_softmax(torch.from_numpy(x), dim).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert got.flat[-1] == pytest.approx(-math.log(2))


@pytest.mark.parametrize("fname", ["softmax", "log_softmax"])
@pytest.mark.parametrize("r", [1, 2, 3, 7])
def test_short_rows_column_passes_match_torch_serial_and_parallel(fname, r, monkeypatch):
    """Rows shorter than 8 (a 3-class loss) run column by column over blocks of rows
    transposed into a scratch (vectorised across rows, several blocks here):
    equal to torch (nan, inf and -inf rows included), the parallel chunks give the serial
    bits, rows read in place from a wider array (row stride != length), and the gradient."""
    rng = np.random.default_rng(r)
    wide = rng.standard_normal((2500, 9)).astype(np.float32) * 4
    wide[3, 0], wide[4, :] = np.nan, -np.inf
    wide[5, 0], wide[6, r - 1] = np.inf, 80.0
    x = wide[:, :r]  # rows r long, 9 apart
    outs = []
    for grain in (1 << 60, 256):
        monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", grain)
        got = getattr(jtorch, fname)(jtorch.from_numpy(x), 1).numpy()
        want = getattr(torch, fname)(torch.from_numpy(x), 1).numpy()
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7)
        outs.append(got)
    np.testing.assert_array_equal(outs[0], outs[1])
    ok = np.isfinite(x).all(1)
    jx = jtorch.from_numpy(x[ok].copy()).requires_grad_()
    tx = torch.from_numpy(x[ok].copy()).requires_grad_()
    g = rng.standard_normal(jx.shape).astype(np.float32)
    getattr(jx, fname)(1).backward(jtorch.from_numpy(g))
    getattr(tx, fname)(1).backward(torch.from_numpy(g))
    np.testing.assert_allclose(jx.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)


_SIZE_ONE_OPS = {
    "sort": lambda L, x, d: L.sort(x, d), "sort_desc": lambda L, x, d: L.sort(x, d, descending=True),
    "argsort": lambda L, x, d: L.argsort(x, d), "topk": lambda L, x, d: L.topk(x, 1, d),
    "kthvalue": lambda L, x, d: L.kthvalue(x, 1, d), "max": lambda L, x, d: L.max(x, d),
    "min_keep": lambda L, x, d: L.min(x, d, keepdim=True), "argmax": lambda L, x, d: L.argmax(x, d),
    "argmin": lambda L, x, d: L.argmin(x, d), "softmax": lambda L, x, d: L.softmax(x, d),
    "log_softmax": lambda L, x, d: L.log_softmax(x, d),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool"])
def test_sorts_selections_and_softmax_along_a_size_one_dim(dtype, monkeypatch):
    """Along a size-1 dim every row holds one element: sorts, top-k and max/min give the
    values themselves at index 0 without the row kernels (a call per element), softmax runs
    the short-row kernel over all elements; values, signed zeros, nan, dtypes and strides are
    torch's, for row-major and column-major inputs."""
    from jtorch.kernels.cpu import reduce as K
    from jtorch.kernels.cpu import sort_entries as S

    def never(*_):
        raise AssertionError("a row kernel ran for rows of one element")

    for fn in ("sort_s", "sort_p", "select_s", "select_p"):
        monkeypatch.setattr(S._so, fn, never)
    monkeypatch.setattr(K, "arg_kernels", never)
    r = np.random.default_rng(5)
    for shape, d in [((64, 1, 128), 1), ((1, 4096), 0), ((4096, 1), 1), ((5, 1, 3), 1), ((1,), 0),
                     ((2, 1, 4), -2)]:
        a = (r.standard_normal(shape) * 3).astype(dtype)
        if dtype.startswith("float") and a.size > 2:
            a.flat[0], a.flat[1], a.flat[2] = np.nan, -0.0, -np.inf
        for src in (a, np.asfortranarray(a)):
            for name, f in _SIZE_ONE_OPS.items():
                if "softmax" in name and not dtype.startswith("float"):
                    continue
                try:
                    want = f(torch, torch.from_numpy(src), d)
                except RuntimeError as e:  # (topk of bool)
                    raises_as(e, lambda f=f, src=src, d=d: f(jtorch, jtorch.from_numpy(src), d))
                    continue
                got = f(jtorch, jtorch.from_numpy(src), d)
                for g, w in zip(*((got, want) if isinstance(want, tuple) else ((got,), (want,)))):
                    assert str(g.dtype) == str(w.dtype) and g.stride() == w.stride(), name
                    np.testing.assert_array_equal(g.numpy(), w.numpy(), err_msg=f"{name} {shape}")
                    if dtype.startswith("float"):
                        assert (np.signbit(g.numpy()) == np.signbit(w.numpy())).all(), name
