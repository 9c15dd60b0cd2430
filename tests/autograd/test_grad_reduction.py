"""Gradient rules of the reduction family (reductions, scans, softmax, sort-like ops) against
torch: outputs and input gradients for a random upstream gradient, first and second order."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from gradutil import compare_grads, to_torch

import jtorch

RNG = np.random.default_rng(1234)


def _x(shape=(3, 4), dtype=np.float64, data=None):
    a = RNG.standard_normal(shape) if data is None else np.asarray(data, dtype=np.float64)
    return jtorch.from_numpy(np.ascontiguousarray(a.astype(dtype))).requires_grad_(True)


# -- simple reductions ------------------------------------------------------------------------

REDUCTIONS = {
    "sum": lambda m, x: x.sum(),
    "sum_dim": lambda m, x: x.sum(1),
    "sum_dims_keep": lambda m, x: x.sum((0, -1), keepdim=True),
    "sum_dtype": lambda m, x: x.sum(-1, dtype=m.float32),
    "mean": lambda m, x: x.mean(),
    "mean_neg_keep": lambda m, x: x.mean(-2, keepdim=True),
    "mean_dtype": lambda m, x: m.mean(x, 0, dtype=m.float32),
    "nansum": lambda m, x: m.nansum(x, 1),
    "prod": lambda m, x: x.prod(),
    "prod_dim": lambda m, x: x.prod(1),
    "prod_keep": lambda m, x: x.prod(-2, keepdim=True),
    "prod_dtype": lambda m, x: x.prod(0, dtype=m.float32),
    "amax": lambda m, x: x.amax(),
    "amax_dims": lambda m, x: x.amax((0, 1), keepdim=True),
    "amin_dim": lambda m, x: x.amin(-1),
    "max": lambda m, x: x.max(),
    "min": lambda m, x: x.min(),
    "max_dim": lambda m, x: x.max(1),
    "min_dim_keep": lambda m, x: x.min(-2, keepdim=True),
    "aminmax": lambda m, x: m.aminmax(x),
    "aminmax_dim": lambda m, x: m.aminmax(x, dim=-1, keepdim=True),
    "var": lambda m, x: x.var(),
    "var_dim": lambda m, x: x.var(1),
    "var_corr_keep": lambda m, x: x.var((0, 1), correction=0, keepdim=True),
    "var_unbiased_false": lambda m, x: x.var(0, unbiased=False),
    "var_bool": lambda m, x: x.var(False),
    "std": lambda m, x: x.std(),
    "std_dim": lambda m, x: x.std(-1, correction=2, keepdim=True),
    "var_mean": lambda m, x: m.var_mean(x, 1),
    "var_mean_full": lambda m, x: m.var_mean(x, correction=0),
    "std_mean": lambda m, x: m.std_mean(x, -1, keepdim=True),
    "std_mean_full": lambda m, x: m.std_mean(x),
    "std_mean_corr": lambda m, x: m.std_mean(x, 0, correction=0),
    "nanmean": lambda m, x: x.nanmean(),
    "nanmean_dim": lambda m, x: x.nanmean(1, keepdim=True),
    "norm": lambda m, x: m.norm(x),
    "norm_fro": lambda m, x: m.norm(x, p="fro", dim=(0, 1)),
    "norm_dtype": lambda m, x: m.linalg.vector_norm(x.float(), 2, dim=0, dtype=m.float64),
    "norm_dim": lambda m, x: m.norm(x, dim=1),
    "norm_p1": lambda m, x: m.norm(x, p=1, dim=-1, keepdim=True),
    "norm_p3": lambda m, x: m.norm(x, p=3, dim=0),
    "norm_p1_5": lambda m, x: m.linalg.vector_norm(x, 1.5),
    "norm_p0_5": lambda m, x: m.linalg.vector_norm(x, 0.5, dim=1),
    "norm_inf": lambda m, x: m.linalg.vector_norm(x, math.inf, dim=1),
    "norm_ninf": lambda m, x: m.linalg.vector_norm(x, -math.inf),
    "norm_0": lambda m, x: m.linalg.vector_norm(x, 0),
    "logsumexp": lambda m, x: m.logsumexp(x, 1),
    "logsumexp_keep": lambda m, x: m.logsumexp(x, (0, 1), keepdim=True),
    "softmax": lambda m, x: m.softmax(x, 1),
    "softmax_dtype": lambda m, x: m.softmax(x, 0, dtype=m.float32),
    "log_softmax": lambda m, x: m.log_softmax(x, -1),
    "f_softmax": lambda m, x: m.nn.functional.softmax(x, dim=0),
    "f_log_softmax": lambda m, x: m.nn.functional.log_softmax(x, dim=1),
    "cumsum": lambda m, x: x.cumsum(1),
    "cumsum_dtype": lambda m, x: x.cumsum(0, dtype=m.float32),
    "cumprod": lambda m, x: x.cumprod(-1),
    "cumprod_dtype": lambda m, x: x.cumprod(0, dtype=m.float32),
    "logcumsumexp": lambda m, x: x.logcumsumexp(0),
    "cummax": lambda m, x: x.cummax(1),
    "cummin": lambda m, x: x.cummin(0),
    "sort": lambda m, x: x.sort(1),
    "sort_desc": lambda m, x: x.sort(0, descending=True),
    "msort": lambda m, x: x.msort(),
    "topk": lambda m, x: x.topk(2),
    "topk_small": lambda m, x: x.topk(2, 0, largest=False),
    "kthvalue": lambda m, x: x.kthvalue(2, 1),
    "kthvalue_keep": lambda m, x: x.kthvalue(3, 0, keepdim=True),
    "median": lambda m, x: x.median(),
    "median_dim": lambda m, x: x.median(1),
    "nanmedian": lambda m, x: x.nanmedian(),
    "nanmedian_dim": lambda m, x: x.nanmedian(0, keepdim=True),
    "mode": lambda m, x: x.mode(1),
}


@pytest.mark.parametrize("name", list(REDUCTIONS))
def test_grad_matches_torch(name):
    compare_grads(REDUCTIONS[name], _x(), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", ["sum", "mean", "prod", "amax", "max", "var_mean", "norm",
                                  "norm_inf", "logsumexp", "softmax", "log_softmax", "cumsum",
                                  "cumprod", "logcumsumexp", "cummax", "sort", "median_dim"])
def test_grad_float32(name):
    compare_grads(REDUCTIONS[name], _x(dtype=np.float32), rtol=1e-4, atol=1e-5)


def test_grad_fn_names_follow_torch():
    x = _x()
    tx = to_torch(x)
    for fn in [lambda m, x: x.max(), lambda m, x: x.max(1)[0], lambda m, x: x.amax(0),
               lambda m, x: m.aminmax(x)[0], lambda m, x: x.sum(), lambda m, x: x.sum(1),
               lambda m, x: x.mean(), lambda m, x: x.mean(0), lambda m, x: x.prod(),
               lambda m, x: x.prod(1), lambda m, x: x.median(), lambda m, x: x.median(0)[0],
               lambda m, x: x.nanmedian(), lambda m, x: m.norm(x), lambda m, x: x.var(1),
               lambda m, x: m.var_mean(x)[1], lambda m, x: x.softmax(1),
               lambda m, x: x.log_softmax(1), lambda m, x: x.cummax(0)[0],
               lambda m, x: x.sort()[0], lambda m, x: x.nansum(), lambda m, x: x.nanmean()]:
        assert type(fn(jtorch, x).grad_fn).__name__ == type(fn(torch, tx).grad_fn).__name__


# -- 0-d, empty, negative dims --------------------------------------------------------------

ZERO_D = {
    "sum": lambda m, x: x.sum(), "mean": lambda m, x: x.mean(0), "prod": lambda m, x: x.prod(),
    "amax": lambda m, x: x.amax(), "max": lambda m, x: x.max(), "min": lambda m, x: x.min(0),
    "var_mean_full": lambda m, x: m.var_mean(x, correction=0), "std": lambda m, x: x.std(),
    "nanmean": lambda m, x: x.nanmean(), "norm": lambda m, x: m.norm(x),
    "norm_inf": lambda m, x: m.linalg.vector_norm(x, math.inf),
    "softmax": lambda m, x: x.softmax(0), "log_softmax": lambda m, x: x.log_softmax(-1),
    "cumsum": lambda m, x: x.cumsum(0), "cumprod": lambda m, x: x.cumprod(0),
    "logcumsumexp": lambda m, x: x.logcumsumexp(0), "cummax": lambda m, x: x.cummax(0),
    "sort": lambda m, x: x.sort(), "topk": lambda m, x: x.topk(1),
    "median": lambda m, x: x.median(), "median_dim": lambda m, x: x.median(0),
    "mode": lambda m, x: x.mode(), "kthvalue": lambda m, x: x.kthvalue(1),
}


@pytest.mark.filterwarnings("ignore:std")
@pytest.mark.parametrize("name", list(ZERO_D))
def test_grad_zero_dim(name):
    with np.errstate(all="ignore"):
        compare_grads(ZERO_D[name], _x(data=1.5))


EMPTY = {
    "sum": lambda m, x: x.sum(0), "mean_kept": lambda m, x: x.mean(1),
    "prod": lambda m, x: x.prod(0), "nansum": lambda m, x: x.nansum(),
    "logsumexp": lambda m, x: m.logsumexp(x, 0), "softmax": lambda m, x: x.softmax(0),
    "cumsum": lambda m, x: x.cumsum(0), "cumprod": lambda m, x: x.cumprod(1),
    "logcumsumexp": lambda m, x: x.logcumsumexp(0), "sort": lambda m, x: x.sort(0),
    "norm": lambda m, x: m.norm(x, dim=0),
    "amax_kept": lambda m, x: x.amax(1),
}


@pytest.mark.parametrize("name", list(EMPTY))
def test_grad_empty(name):
    compare_grads(EMPTY[name], _x((0, 3)))


def test_grad_empty_cummax():
    # torch hands back the input itself here (cummaxmin_backward); the values are the same
    x = _x((0, 3))
    (g,) = jtorch.autograd.grad(x.cummax(0).values, x, jtorch.zeros((0, 3), dtype=jtorch.float64))
    assert g.shape == (0, 3) and not g.requires_grad


def test_grad_three_dims_negative_and_multiple_dims():
    x = _x((2, 3, 4))
    for fn in [lambda m, x: x.sum((-1, 0)), lambda m, x: x.amax((2, 0), keepdim=True),
               lambda m, x: x.var((0, 2)), lambda m, x: m.logsumexp(x, (-1, -3)),
               lambda m, x: x.softmax(-2), lambda m, x: x.cumprod(-2),
               lambda m, x: x.max(-2), lambda m, x: x.topk(2, -2), lambda m, x: m.std_mean(x, 1),
               lambda m, x: x.mean((0, 1)), lambda m, x: m.norm(x, 3, (0, 2), True)]:
        compare_grads(fn, x, rtol=1e-6, atol=1e-9)


def test_grad_non_contiguous_input():
    x = _x((4, 3))
    compare_grads(lambda m, x: x.t().prod(1), x)
    compare_grads(lambda m, x: x.t().cumsum(1), x)
    compare_grads(lambda m, x: x.t().softmax(1), x)


# -- ties, zeros and nan ------------------------------------------------------------------------

TIES = [[1.0, 3.0, 3.0, -2.0], [0.5, 0.5, 0.5, 0.5], [-1.0, 2.0, -1.0, 2.0]]


@pytest.mark.parametrize("name", ["amax", "amax_dims", "amin_dim", "max", "min", "aminmax",
                                  "aminmax_dim", "norm_inf", "norm_ninf", "max_dim",
                                  "min_dim_keep", "median", "median_dim", "mode", "cummax",
                                  "cummin", "sort"])
def test_grad_ties(name):
    # (topk and kthvalue pick other tied indices than torch's CPU kernels: not compared)
    compare_grads(REDUCTIONS[name], _x(data=TIES))


def test_grad_ties_inf_norm_with_signs():
    compare_grads(lambda m, x: m.linalg.vector_norm(x, math.inf, dim=1),
                  _x(data=[[2.0, -2.0, 1.0], [0.0, 0.0, 0.0]]))


ZEROS = [[1.5, 0.0, 2.0, -1.0], [0.0, 3.0, 0.0, 0.5], [2.0, -0.5, 1.0, 0.0]]
ONE_ZERO = [1.5, 0.0, 2.0, -1.0]
TWO_ZEROS = [0.0, 3.0, 0.0, 0.5]
ALL_ZERO = [[0.0, 0.0, 0.0], [1.0, 0.0, 2.0]]


@pytest.mark.parametrize("fn,data", [
    (lambda m, x: x.prod(), ZEROS), (lambda m, x: x.prod(1), ZEROS),
    (lambda m, x: x.prod(0, keepdim=True), ZEROS), (lambda m, x: x.prod(), ONE_ZERO),
    (lambda m, x: x.prod(), TWO_ZEROS), (lambda m, x: x.prod(0), TWO_ZEROS),
    (lambda m, x: x.cumprod(1), ZEROS), (lambda m, x: x.cumprod(0), ZEROS),
    (lambda m, x: x.cumprod(0), TWO_ZEROS), (lambda m, x: x.cumprod(0), ONE_ZERO),
    (lambda m, x: m.norm(x, p=0.5, dim=1), ZEROS), (lambda m, x: m.norm(x, dim=1), ALL_ZERO),
    (lambda m, x: m.norm(x, p=3, dim=1), ALL_ZERO), (lambda m, x: m.norm(x, p=1.5, dim=1), ALL_ZERO),
    (lambda m, x: m.norm(x, p=1, dim=1), ALL_ZERO), (lambda m, x: m.norm(x, p=0.5, dim=1), ALL_ZERO),
    (lambda m, x: x.std(1), ALL_ZERO), (lambda m, x: m.std_mean(x, 1), ALL_ZERO),
])
def test_grad_zeros(fn, data):
    compare_grads(fn, _x(data=data))


NANS = [[1.0, math.nan, 2.0], [math.nan, math.nan, 0.5]]


@pytest.mark.parametrize("fn", [
    lambda m, x: x.nansum(1), lambda m, x: x.nanmean(1), lambda m, x: x.nanmean(),
    lambda m, x: x.max(), lambda m, x: x.median(), lambda m, x: x.nanmedian(),
    lambda m, x: x.nanmedian(1), lambda m, x: x.nanmedian(0), lambda m, x: x.amax(1),
    lambda m, x: x.max(), lambda m, x: x.min(), lambda m, x: m.linalg.vector_norm(x, math.inf),
])
def test_grad_nan(fn):
    compare_grads(fn, _x(data=NANS), atol=1e-9)


def test_grad_nanmedian_all_nan():
    compare_grads(lambda m, x: x.nanmedian(), _x(data=[math.nan, math.nan]))


def test_grad_variance_without_degrees_of_freedom():
    with pytest.warns(UserWarning):
        compare_grads(lambda m, x: x.var(1, correction=4), _x(data=[[1.0, 2.0, 2.0, 3.0]]))
    with pytest.warns(UserWarning):
        compare_grads(lambda m, x: x.var(correction=4), _x(data=[[1.0, 2.0, 2.0, 3.0]]))
    with pytest.warns(UserWarning):
        compare_grads(lambda m, x: x.std(1, correction=5), _x(data=[[1.0, 2.0, 2.0, 3.0]]))
    with pytest.warns(UserWarning):
        compare_grads(lambda m, x: x.var(correction=5), _x(data=[[1.0, 2.0, 2.0, 3.0]]))


# -- non-differentiable outputs ---------------------------------------------------------------

def test_non_differentiable_outputs_do_not_require_grad():
    x = _x()
    for out in [x.argmax(), x.argmin(1), x.all(), x.any(0), x.count_nonzero(), x.argsort(1),
                jtorch.unique(x), jtorch.unique_consecutive(x), x.max(1).indices,
                x.sort().indices, x.topk(2).indices,
                x.cummax(0).indices, x.mode(1).indices, x.median(0).indices]:
        assert not out.requires_grad and out.grad_fn is None


# -- second order ---------------------------------------------------------------------------

def _second_order(fn, x, rtol=1e-6):
    """grad of (grad . v) for a fixed v, jtorch vs torch."""
    results = []
    for m, xx in [(jtorch, x), (torch, to_torch(x))]:
        y = fn(m, xx)
        w = m.from_numpy(np.linspace(-1.0, 1.5, y.numel()).reshape(tuple(y.shape)))
        (g,) = m.autograd.grad(y, xx, w, create_graph=True)
        v = m.from_numpy(np.cos(np.arange(g.numel(), dtype=np.float64)).reshape(tuple(g.shape)))
        (gg,) = m.autograd.grad((g * v).sum(), xx)
        results.append((g.detach().numpy(), gg.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-9)


@pytest.mark.parametrize("fn", [
    lambda m, x: x.softmax(1), lambda m, x: x.log_softmax(0), lambda m, x: m.logsumexp(x, 1),
    lambda m, x: x.var(1), lambda m, x: x.std(), lambda m, x: m.var_mean(x, 0)[0],
    lambda m, x: x.prod(1), lambda m, x: x.prod(), lambda m, x: m.norm(x, dim=1),
    lambda m, x: m.norm(x, p=3), lambda m, x: x.nanmean(0) ** 2, lambda m, x: x.amax(1) ** 2,
    lambda m, x: x.mean(1) ** 2, lambda m, x: x.sum(0, keepdim=True).exp(),
])
def test_second_order(fn):
    _second_order(fn, _x())


def test_second_order_cumprod_with_zeros():
    _second_order(lambda m, x: x.cumprod(1), _x(data=ZEROS))
    _second_order(lambda m, x: x.cumprod(0), _x(data=TWO_ZEROS))


def _without_vjp(*names):
    from jtorch.kernels.registry import REGISTRY

    missing = [n for n in names if REGISTRY[n].vjp is None]
    return pytest.mark.skipif(bool(missing), reason=f"no gradient rule yet for {missing}")


@_without_vjp("flip", "cat", "slice")
@pytest.mark.parametrize("fn,data", [
    (lambda m, x: x.prod(1), ZEROS), (lambda m, x: x.prod(), ONE_ZERO),
    (lambda m, x: x.prod(), TWO_ZEROS), (lambda m, x: x.cumsum(1) ** 2, None),
    (lambda m, x: x.cumprod(1), None), (lambda m, x: x.logcumsumexp(1), None),
])
def test_second_order_through_movement(fn, data):
    _second_order(fn, _x(data=data) if data is not None else _x())


@_without_vjp("scatter", "scatter_add")
@pytest.mark.parametrize("fn", [
    lambda m, x: x.max(1)[0] ** 2, lambda m, x: x.sort(1)[0] ** 2,
    lambda m, x: x.cummax(1)[0] ** 2, lambda m, x: x.topk(2, 0)[0] ** 2,
])
def test_second_order_through_scatter(fn):
    _second_order(fn, _x())
