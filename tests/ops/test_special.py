"""Special functions (lgamma, digamma, polygamma, mvlgamma, i0, frexp, nextafter and
jtorch.special) against torch: values over wide ranges (poles, large arguments, nan, inf, -0.0),
float32 and float64, integer inputs, and gradients."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import jtorch

_EDGES = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.0, 2.0, -1.0, -2.0, -3.0, -0.5, 0.5, 1.4616,
          -2.5, -3.7, -10.3, 1e-8, -1e-8, 9.999, 10.0, 10.001, 30.0, 171.5, 1e6, 1e17, 1e300]


def _values(lo=-12.0, hi=40.0, n=400, seed=0):
    rng = np.random.default_rng(seed)
    return np.concatenate([np.array(_EDGES), rng.uniform(lo, hi, n), np.linspace(-5.05, 5.05, 102),
                           -np.arange(1, 6) + 1e-9])


def _check(jfn, tfn, vals, dtype, rtol=None, atol=None):
    """jtorch on ``dtype`` against torch computed in float64 and rounded to ``dtype``."""
    x = vals.astype(dtype)
    got = jfn(jtorch.from_numpy(x.copy())).numpy()
    want = tfn(torch.from_numpy(x.astype(np.float64))).to(getattr(torch, np.dtype(dtype).name)).numpy()
    assert got.dtype == want.dtype
    f32 = dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=rtol or (4e-6 if f32 else 1e-12),
                               atol=atol or (1e-6 if f32 else 1e-13), equal_nan=True)
    # infinities keep their sign, zeros need not
    assert np.array_equal(np.isposinf(got), np.isposinf(want))
    assert np.array_equal(np.isneginf(got), np.isneginf(want))


UNARY = {
    "lgamma": (jtorch.lgamma, torch.lgamma),
    "digamma": (jtorch.digamma, torch.digamma),
    "trigamma": (lambda x: jtorch.polygamma(1, x), lambda x: torch.polygamma(1, x)),
    "polygamma2": (lambda x: jtorch.polygamma(2, x), lambda x: torch.polygamma(2, x)),
    "polygamma5": (lambda x: jtorch.polygamma(5, x), lambda x: torch.polygamma(5, x)),
    "i0": (jtorch.i0, torch.i0),
    "i0e": (jtorch.special.i0e, torch.special.i0e),
    "i1": (jtorch.special.i1, torch.special.i1),
    "i1e": (jtorch.special.i1e, torch.special.i1e),
    "ndtr": (jtorch.special.ndtr, torch.special.ndtr),
    "log_ndtr": (jtorch.special.log_ndtr, torch.special.log_ndtr),
    "erfcx": (jtorch.special.erfcx, torch.special.erfcx),
    "entr": (jtorch.special.entr, torch.special.entr),
    "mvlgamma3": (lambda x: jtorch.mvlgamma(x, 3), lambda x: torch.mvlgamma(x, 3)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_values_match_torch(name, dtype):
    jfn, tfn = UNARY[name]
    vals = _values()
    if name in ("digamma", "trigamma", "polygamma2", "polygamma5"):
        vals = vals[(vals > 0) | (np.abs(vals - np.round(vals)) > 1e-3)]  # the reflection's slope
    _check(jfn, tfn, vals, dtype, rtol=1e-9 if dtype == np.float64 and name != "lgamma" else None)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ndtri_matches_torch(dtype):
    vals = np.concatenate([[0.0, 1.0, -0.1, 1.1, math.nan, 1e-300, 1e-20, 0.5, 0.135, 0.865],
                           np.random.default_rng(1).uniform(0, 1, 300)])
    _check(jtorch.special.ndtri, torch.special.ndtri, vals, dtype)


def test_poles_and_special_values_are_torchs():
    x = jtorch.tensor([0.0, -0.0, -1.0, -2.0, math.inf, -math.inf, math.nan], dtype=jtorch.float64)
    t = torch.tensor(x.tolist(), dtype=torch.float64)
    for name in ("lgamma", "digamma", "i0"):
        np.testing.assert_array_equal(getattr(jtorch, name)(x).numpy(), getattr(torch, name)(t).numpy())
    np.testing.assert_array_equal(jtorch.polygamma(3, x).numpy(), torch.polygamma(3, t).numpy())
    assert np.signbit(jtorch.digamma(x).numpy()[0])  # -inf at +0, +inf at -0


@pytest.mark.parametrize("fn", ["lgamma", "digamma", "i0"])
def test_integer_and_bool_inputs_give_the_default_float(fn):
    for vals in ([1, 2, 3, -4, 0], [True, False]):
        j = getattr(jtorch, fn)(jtorch.tensor(vals))
        t = getattr(torch, fn)(torch.tensor(vals))
        assert j.dtype is jtorch.float32
        np.testing.assert_allclose(j.numpy(), t.numpy(), rtol=1e-6)
    assert jtorch.polygamma(1, jtorch.tensor([1, 2])).dtype is jtorch.float32
    assert jtorch.mvlgamma(jtorch.tensor([3, 4]), 2).dtype is jtorch.float32


def test_binary_special_functions():
    rng = np.random.default_rng(2)
    x = rng.uniform(-3, 3, 50)
    y = rng.uniform(-0.99, 5, 50)
    x[:5] = [0.0, 0.0, 1.0, 2.0, -1.0]
    y[:5] = [-1.0, math.nan, -1.0, math.inf, 0.0]
    for dt in (np.float32, np.float64):
        a, b = x.astype(dt), y.astype(dt)
        got = jtorch.special.xlog1py(jtorch.from_numpy(a), jtorch.from_numpy(b)).numpy()
        want = torch.special.xlog1py(torch.from_numpy(a), torch.from_numpy(b)).numpy()
        np.testing.assert_allclose(got, want, rtol=2e-6, equal_nan=True)
    s = np.array([1.0, 0.5, 2.0, 3.0, 4.5, 2.0, 2.0, 3.0, 10.0])
    q = np.array([1.0, 1.0, 1.0, -2.0, 2.5, -1.5, 0.3, 100.0, 1e-3])
    got = jtorch.special.zeta(jtorch.from_numpy(s), jtorch.from_numpy(q)).numpy()
    want = torch.special.zeta(torch.from_numpy(s), torch.from_numpy(q)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
    assert jtorch.special.zeta(2.0, jtorch.tensor([1.0])).item() == pytest.approx(math.pi ** 2 / 6)


def test_frexp_and_nextafter():
    v = np.array([0.0, -0.0, 1.0, -3.5, 1e-310, 1e300, math.inf, -math.inf, math.nan, 0.75])
    for dt in (np.float32, np.float64):
        a = v.astype(dt)
        jm, je = jtorch.frexp(jtorch.from_numpy(a))
        tm, te = torch.frexp(torch.from_numpy(a))
        np.testing.assert_array_equal(jm.numpy(), tm.numpy())
        assert je.dtype is jtorch.int32
        np.testing.assert_array_equal(je.numpy(), te.numpy())
        b = np.roll(a, 3)
        np.testing.assert_array_equal(
            jtorch.nextafter(jtorch.from_numpy(a), jtorch.from_numpy(b)).numpy(),
            torch.nextafter(torch.from_numpy(a), torch.from_numpy(b)).numpy())
    m, e = jtorch.tensor([3.0]).frexp()
    assert (m.item(), e.item()) == (0.75, 2)
    with pytest.raises(RuntimeError, match="only supports floating-point"):
        jtorch.frexp(jtorch.tensor([1, 2]))


def test_in_place_forms_and_methods():
    x = np.array([0.3, 1.5, 4.0])
    for name, args in [("lgamma", ()), ("digamma", ()), ("i0", ()), ("polygamma", (2,)),
                       ("mvlgamma", (2,))]:
        j, t = jtorch.from_numpy(x + 1.0), torch.from_numpy(x + 1.0)
        want = getattr(t, name)(*args)
        np.testing.assert_allclose(getattr(j, name)(*args).numpy(), want.numpy(), rtol=1e-12)
        r = getattr(j, name + "_")(*args)
        assert r is j
        np.testing.assert_allclose(j.numpy(), want.numpy(), rtol=1e-12)
    j = jtorch.tensor([1.0, 2.0])
    j.nextafter_(jtorch.tensor([2.0, 1.0]))
    assert j[0].item() > 1.0 and j[1].item() < 2.0
    assert jtorch.i0_(jtorch.tensor([0.0])).item() == 1.0


def test_argument_errors_are_torchs():
    with pytest.raises(RuntimeError, match="does not support negative n"):
        jtorch.polygamma(-1, jtorch.tensor([1.0]))
    with pytest.raises(RuntimeError, match="greater than or equal to 1"):
        jtorch.mvlgamma(jtorch.tensor([1.0]), 0)


GRADS = {
    "lgamma": (lambda T, x: T.lgamma(x), (0.1, 5.0)),
    "digamma": (lambda T, x: T.digamma(x), (0.1, 5.0)),
    "polygamma": (lambda T, x: T.polygamma(2, x), (0.1, 5.0)),
    "mvlgamma": (lambda T, x: T.mvlgamma(x, 3), (1.2, 5.0)),
    "i0": (lambda T, x: T.i0(x), (-10.0, 10.0)),
    "i0e": (lambda T, x: T.special.i0e(x), (-10.0, 10.0)),
    "i1": (lambda T, x: T.special.i1(x), (-10.0, 10.0)),
    "i1e": (lambda T, x: T.special.i1e(x), (-10.0, 10.0)),
    "ndtr": (lambda T, x: T.special.ndtr(x), (-4.0, 4.0)),
    "ndtri": (lambda T, x: T.special.ndtri(x), (0.01, 0.99)),
    "log_ndtr": (lambda T, x: T.special.log_ndtr(x), (-8.0, 4.0)),
    "erfcx": (lambda T, x: T.special.erfcx(x), (-3.0, 30.0)),
    "entr": (lambda T, x: T.special.entr(x), (0.05, 3.0)),
    "frexp": (lambda T, x: T.frexp(x)[0], (-9.0, 9.0)),
    "xlog1py": (lambda T, x: T.special.xlog1py(x, x * x), (-2.0, 2.0)),
    "zeta_q": (lambda T, x: T.special.zeta(3.0, x), (0.5, 4.0)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_match_torch(name):
    fn, (lo, hi) = GRADS[name]
    v = np.random.default_rng(3).uniform(lo, hi, 20)
    jx = jtorch.from_numpy(v.copy()).requires_grad_()
    tx = torch.from_numpy(v.copy()).requires_grad_()
    jy, ty = fn(jtorch, jx), fn(torch, tx)
    g = np.random.default_rng(4).standard_normal(v.shape)
    (jg,) = jtorch.autograd.grad(jy, jx, jtorch.from_numpy(g.copy()))
    (tg,) = torch.autograd.grad(ty, tx, torch.from_numpy(g.copy()))
    np.testing.assert_allclose(jg.numpy(), tg.numpy(), rtol=1e-9, atol=1e-12)
    assert type(jy.grad_fn).__name__ == type(ty.grad_fn).__name__


def test_i1_gradient_at_zero_is_one_half():
    x = jtorch.tensor([0.0, 0.0], dtype=jtorch.float64, requires_grad=True)
    (g,) = jtorch.autograd.grad(jtorch.special.i1(x).sum(), x)
    assert g.tolist() == [0.5, 0.5]


def test_zeta_has_no_gradient_in_its_first_argument():
    x = jtorch.tensor([2.0], dtype=jtorch.float64, requires_grad=True)
    with pytest.raises(NotImplementedError, match="derivative for 'zeta'"):
        jtorch.special.zeta(x, 2.0).sum().backward()


def test_special_module_reuses_the_ops():
    x = jtorch.tensor([[0.2, 0.7], [0.4, 0.9]])
    t = torch.tensor(x.tolist())
    pairs = [("gammaln", ()), ("psi", ()), ("expit", ()), ("logit", ()), ("sinc", ()), ("erf", ()),
             ("erfc", ()), ("erfinv", ()), ("exp2", ()), ("expm1", ()), ("log1p", ()),
             ("round", ()), ("multigammaln", (1,)), ("logsumexp", (1,)), ("softmax", (0,)),
             ("log_softmax", (1,))]
    for name, args in pairs:
        np.testing.assert_allclose(getattr(jtorch.special, name)(x, *args).numpy(),
                                   getattr(torch.special, name)(t, *args).numpy(), rtol=1e-6,
                                   err_msg=name)
    np.testing.assert_allclose(jtorch.special.polygamma(1, x).numpy(),
                               torch.special.polygamma(1, t).numpy(), rtol=1e-6)
    np.testing.assert_allclose(jtorch.special.xlogy(x, x).numpy(), torch.special.xlogy(t, t).numpy(),
                               rtol=1e-6)


def test_special_ops_fuse_in_a_compiled_graph():
    def f(x):
        return jtorch.special.i0e(jtorch.lgamma(x) + jtorch.digamma(x)).sum()

    x = jtorch.linspace(0.5, 5.0, 64, dtype=jtorch.float64)
    np.testing.assert_allclose(jtorch.compile(f)(x).item(), f(x).item(), rtol=1e-12)
