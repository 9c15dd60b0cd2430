"""Row-wise CUDA ops in Numba's simulator against the same calls on CPU: reductions with
indices, statistics, layer norm, scans and sorts (``kernels/cuda/rows.py``, ``scan.py``,
``sort.py``). Indices must be the CPU's exactly (ties, nan, stable sorts); float values agree
up to rounding where a sum runs in another order. Every natively covered call must run with no
host fallback.

Run by ``test_cuda_rows.py`` in a subprocess with ``NUMBA_ENABLE_CUDASIM=1``. Sizes are tiny:
the simulator runs each thread as a Python thread.
"""

import math
import os

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("runs under NUMBA_ENABLE_CUDASIM=1 (test_cuda_rows.py starts it)",
                allow_module_level=True)

import jtorch
import jtorch.nn.functional as F
from jtorch.kernels.cuda import eager

NAN = math.nan
INF = math.inf

pytestmark = [pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0"),
              # (the simulator computes in NumPy scalars: var of one element is 0 * inf)
              pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")]


def _host(t):
    h = t.detach().cpu()
    return h.float().numpy() if h.dtype in (jtorch.bfloat16, jtorch.float16) else h.numpy()


def same(c, x):
    """CUDA tensor ``c`` holds exactly CPU tensor ``x``'s values, dtype, shape and strides."""
    assert c.device.type == "cuda", c.device
    assert c.dtype == x.dtype and tuple(c.shape) == tuple(x.shape), (c.dtype, x.dtype, c.shape,
                                                                     x.shape)
    assert c.stride() == x.stride(), (c.stride(), x.stride())
    np.testing.assert_array_equal(_host(c), _host(x))


def close(c, x, rtol=1e-5, atol=1e-6):
    assert c.device.type == "cuda", c.device
    assert c.dtype == x.dtype and tuple(c.shape) == tuple(x.shape), (c.dtype, x.dtype, c.shape,
                                                                     x.shape)
    np.testing.assert_allclose(_host(c).astype(np.float64), _host(x).astype(np.float64),
                               rtol=rtol, atol=atol)


def both(fn, x, exact=True, **tol):
    """fn on CPU tensor ``x`` and on its CUDA copy: every result tensor compared (or both
    raise the same error)."""
    try:
        want = fn(x)
    except (RuntimeError, NotImplementedError, IndexError) as e:
        with pytest.raises(type(e)):
            fn(x.cuda())
        return
    got = fn(x.cuda())
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(want) == len(got)
    for g, w in zip(got, want):
        if exact or w.dtype in (jtorch.int64, jtorch.bool):
            same(g, w)
        else:
            close(g, w, **tol)


def native(*names):
    assert not any(eager.FALLBACKS[n] for n in names), dict(eager.FALLBACKS)


@pytest.fixture(autouse=True)
def _fresh():
    eager.FALLBACKS.clear()
    yield


def _data():
    """A row with ties, nan, infinities and signed zeros, and its integer twin."""
    x = jtorch.tensor([[1.0, 3.0, 3.0, NAN, 2.0, -0.0, 0.0, NAN],
                       [5.0, -0.0, 0.0, 5.0, 1.0, -1e-40, INF, -INF],
                       [2.0, 2.0, -1.0, -1.0, 7.0, 7.0, 0.5, 0.5]])
    xi = jtorch.tensor([[3, 1, 3, -2, 7, 7, 0, 0], [0, 0, -5, 2, 2, 1, 9, -9],
                        [4, 4, 4, 4, 1, 1, 1, 1]])
    return x, xi


# -- value-and-index reductions ----------------------------------------------------------------

@pytest.mark.parametrize("dt", [jtorch.float32, jtorch.float64, jtorch.int64, jtorch.int32,
                                jtorch.uint8])
def test_max_min_argmax_ties_and_nan(dt):
    x, xi = _data()
    t = x.to(dt) if dt.is_floating_point else xi.abs().to(dt)
    for f in (lambda a: a.max(1), lambda a: a.min(0), lambda a: a.max(-1, keepdim=True),
              lambda a: a.argmax(), lambda a: a.argmin(), lambda a: a.argmax(0),
              lambda a: a.argmin(-1, keepdim=True), lambda a: a.t().max(0),
              lambda a: a[:, ::3].argmin(1), lambda a: a.t()[1:].min(1)):
        both(f, t)
    native("max", "min", "argmax", "argmin")


def test_long_rows_in_segments():
    """One long row: segments reduced by a block each, then their results."""
    g = np.random.default_rng(9)
    x = jtorch.tensor(g.integers(-3, 4, 70).astype(np.float32))
    x[40] = 3.0
    both(lambda a: a.argmax(), x)
    both(lambda a: a.max(0), x)
    both(lambda a: a.argmin(0, keepdim=True), x)
    x[50] = NAN
    x[66] = NAN
    both(lambda a: a.argmax(), x)
    both(lambda a: a.min(0), x)
    both(lambda a: a.argmax(), x.reshape(7, 10).t())  # (the flattened logical order)
    both(lambda a: a.max(0), jtorch.tensor(g.integers(0, 3, 45), dtype=jtorch.int64))
    native("max", "min", "argmax", "argmin")


def test_max_bool_0d_and_empty_rows():
    both(lambda a: a.max(0), jtorch.tensor([[True, False], [True, True]]))
    both(lambda a: a.min(1), jtorch.tensor([[True, False], [True, True]]))
    both(lambda a: a.max(0), jtorch.tensor(2.5))
    both(lambda a: a.argmax(keepdim=True), jtorch.tensor(2.5))
    both(lambda a: a.max(1), jtorch.zeros(0, 3))
    both(lambda a: a.argmin(1), jtorch.zeros(0, 3))
    native("max", "min", "argmax", "argmin")


def test_full_max_min_are_native():
    x, xi = _data()
    for t in (x, xi, x.t()):
        both(lambda a: a.max(), t)
        both(lambda a: a.min(), t)
    native("amax", "amin")


def test_aminmax():
    x, xi = _data()
    for t in (x, xi, x.t()):
        both(lambda a: a.aminmax(), t)
        both(lambda a: a.aminmax(dim=-1, keepdim=True), t)
    both(lambda a: a.aminmax(dim=1), jtorch.zeros(0, 3))
    native("aminmax")


# -- statistics ------------------------------------------------------------------------------

def _floats(seed=0, shape=(3, 5, 4)):
    g = np.random.default_rng(seed)
    return jtorch.tensor(g.standard_normal(shape).astype(np.float32) * 3 + 1)


@pytest.mark.parametrize("dt", [jtorch.float32, jtorch.float64])
def test_var_std_and_means(dt):
    x = _floats().to(dt)
    tol = {"rtol": 2e-5, "atol": 1e-5} if dt is jtorch.float32 else {"rtol": 1e-12, "atol": 1e-12}
    for f in (lambda a: a.var(), lambda a: a.std(1), lambda a: a.var((0, 2), keepdim=True),
              lambda a: a.std(-1, correction=0), lambda a: a.var(1, correction=2),
              lambda a: jtorch.var_mean(a, 0), lambda a: jtorch.std_mean(a, (1, 2), keepdim=True),
              lambda a: a.transpose(0, 2).var(1), lambda a: a[:, ::2].std(0, unbiased=False)):
        both(f, x, exact=False, **tol)
    both(lambda a: a.var(), jtorch.tensor(3.0, dtype=dt), exact=False)
    native("var", "std", "var_mean", "std_mean")


def test_logsumexp_norm_nanmean():
    x = _floats()
    y, xi = _data()
    for f in (lambda a: a.logsumexp(1), lambda a: a.logsumexp((0, 2), keepdim=True),
              lambda a: a.norm(), lambda a: a.norm(1, dim=1), lambda a: a.norm(INF, dim=(0, 1)),
              lambda a: a.norm(-INF, dim=2), lambda a: a.norm(0, dim=0),
              lambda a: jtorch.linalg.vector_norm(a, 0.5, -1, keepdim=True),
              lambda a: a.nanmean(), lambda a: a.nanmean((0, 1), keepdim=True)):
        both(f, x, exact=False, rtol=1e-5, atol=1e-5)
    both(lambda a: a.logsumexp(1), y, exact=False)   # rows with nan and +-inf
    both(lambda a: a.nanmean(1), y, exact=False)
    both(lambda a: a.logsumexp(0), xi, exact=False)  # ints: the default float
    empty = jtorch.zeros(0, 3)  # reductions of no elements
    for f in (lambda a: a.logsumexp(0), lambda a: a.norm(dim=0), lambda a: a.norm(-2.0, dim=0),
              lambda a: a.nanmean(0), lambda a: a.var(0), lambda a: jtorch.std_mean(a, 0),
              lambda a: a.median(), lambda a: a.long().median(), lambda a: a.var(1)):
        both(f, empty, exact=False)
    native("logsumexp", "norm", "nanmean", "var", "std_mean", "median")


# -- layer norm ------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [jtorch.float32, jtorch.float64])
def test_layer_norm_forward_and_gradients(dt):
    g = np.random.default_rng(1)
    x = jtorch.tensor(g.standard_normal((3, 2, 5)) * 2 + 4, dtype=dt)
    w = jtorch.tensor(g.standard_normal((2, 5)), dtype=dt)
    b = jtorch.tensor(g.standard_normal((2, 5)), dtype=dt)
    gy = jtorch.tensor(g.standard_normal((3, 2, 5)), dtype=dt)
    res = []
    for dev in ("cpu", "cuda"):
        xs, ws, bs = (t.to(dev).detach().requires_grad_() for t in (x, w, b))
        y = F.layer_norm(xs, (2, 5), ws, bs, 1e-5)
        y.backward(gy.to(dev))
        res.append((y, xs.grad, ws.grad, bs.grad))
    for c, h in zip(res[1], res[0]):
        close(c, h, rtol=1e-4, atol=1e-5)
    both(lambda a: jtorch.native_layer_norm(a, [5], None, None, 1e-5), x.transpose(0, 1),
         exact=False, rtol=1e-4, atol=1e-5)
    native("native_layer_norm")


def test_layer_norm_rows_far_from_zero():
    """float64 moments: rows at 1e4 with unit spread keep float32's accuracy."""
    x = _floats(7, (4, 16)) + 1e4
    both(lambda a: F.layer_norm(a, (16,)), x, exact=False, rtol=1e-4, atol=2e-5)
    native("native_layer_norm")


def test_layer_norm_backward_kernel():
    from jtorch import dispatch
    from jtorch.kernels import registry

    op = registry.REGISTRY["native_layer_norm_backward"]
    g = np.random.default_rng(2)
    x = jtorch.tensor(g.standard_normal((4, 6)), dtype=jtorch.float64)
    w = jtorch.tensor(g.standard_normal(6), dtype=jtorch.float64)
    gy = jtorch.tensor(g.standard_normal((4, 6)), dtype=jtorch.float64)
    _, mean, rstd = jtorch.native_layer_norm(x, [6], w, None, 1e-5)
    for mask in ((True, True, True), (True, False, False), (True, False, True)):
        want = dispatch.call(op, gy, x, mean, rstd, w, dims=(-1,), mask=mask)
        got = dispatch.call(op, gy.cuda(), x.cuda(), mean.cuda(), rstd.cuda(), w.cuda(),
                            dims=(-1,), mask=mask)
        for c, h in zip(got, want):
            close(c, h, rtol=1e-10, atol=1e-12)
    native("native_layer_norm_backward")


# -- scans -----------------------------------------------------------------------------------

def test_scans():
    x, xi = _data()
    f64 = x.double()
    for t in (x, f64, x.t()):
        for f in (lambda a: a.cumsum(1), lambda a: a.cumsum(0), lambda a: a.cumprod(-1),
                  lambda a: a.logcumsumexp(1), lambda a: a.cumsum(1, dtype=jtorch.float64)):
            both(f, t, exact=False)
        for f in (lambda a: a.cummax(1), lambda a: a.cummin(0), lambda a: a.cummin(-1)):
            both(f, t)  # the values are picked, not computed
    for t in (xi, xi > 2, xi.to(jtorch.uint8)):
        for f in (lambda a: a.cumsum(1), lambda a: a.cumprod(0), lambda a: a.cummax(1),
                  lambda a: a.cummin(0)):
            both(f, t)
    # long rows: a block per row, in chunks
    g = np.random.default_rng(8)
    long = jtorch.tensor(g.integers(-3, 4, (2, 41)).astype(np.float32))
    long[0, 5] = NAN
    long[1, 30] = NAN
    for t in (long, long.t(), long.to(jtorch.int64)):
        d = 1 if t.shape[1] == 41 else 0
        for f in (lambda a, d=d: a.cummax(d), lambda a, d=d: a.cummin(d),
                  lambda a, d=d: a.cumsum(d), lambda a, d=d: a.cumprod(d).clamp(-1e6, 1e6)):
            both(f, t, exact=False)
    both(lambda a: a.logcumsumexp(1), long, exact=False)
    both(lambda a: a.cumsum(0), jtorch.tensor(2.0))
    both(lambda a: a.cummax(0), jtorch.tensor(2.0))
    both(lambda a: a.cumsum(1), jtorch.zeros(2, 0))
    native("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp")


# -- sorts -----------------------------------------------------------------------------------

def test_sorts():
    x, xi = _data()
    for t in (x, xi, xi > 0, x.t()[:, ::2]):
        for f in (lambda a: a.sort(-1), lambda a: a.sort(0, descending=True),
                  lambda a: a.sort(1, descending=True, stable=True),
                  lambda a: a.argsort(1), lambda a: a.argsort(0, descending=True),
                  lambda a: a.msort()):
            both(f, t)
        if t.dtype is not jtorch.bool:
            for f in (lambda a: a.topk(2, 0), lambda a: a.topk(2, -1, largest=False)):
                both(f, t)
        for f in (lambda a: a.kthvalue(2, 0), lambda a: a.median(), lambda a: a.median(0),
                  lambda a: a.nanmedian(-1, keepdim=True), lambda a: a.nanmedian(),
                  lambda a: a.mode(0), lambda a: a.mode(-1)):
            both(f, t)
    for t in (x.double(), xi.to(jtorch.int16), xi.to(jtorch.uint8)):
        both(lambda a: a.sort(1, descending=True), t)
        both(lambda a: a.median(1), t)
    long = jtorch.tensor(np.random.default_rng(3).integers(-4, 4, 37).astype(np.float32))
    both(lambda a: a.sort(stable=True), long)
    both(lambda a: a.topk(5), long)
    both(lambda a: a.sort(0), jtorch.tensor(1.5))
    both(lambda a: a.sort(1), jtorch.zeros(3, 0))
    native("sort", "argsort", "topk", "kthvalue", "median", "nanmedian", "mode")


def test_sort_keeps_the_input_layout():
    x = _floats(4, (4, 5)).t()  # a transposed (column-major) input: results laid out alike
    both(lambda a: a.sort(1), x)
    both(lambda a: a.argsort(0), x)
    native("sort", "argsort")


# -- autograd through the native kernels -------------------------------------------------------

def test_gradients_through_max_sort_cumsum_norm():
    x = _floats(5, (3, 4))
    fns = (lambda a: a.max(1)[0].sum(), lambda a: (a.sort(0, descending=True)[0] * 2).sum(),
           lambda a: a.cumsum(1).pow(2).sum(), lambda a: a.topk(2)[0].sum(),
           lambda a: a.norm(dim=1).sum(), lambda a: a.std(0).sum(),
           lambda a: a.logsumexp(1).sum(), lambda a: a.cumprod(0).sum())
    for fn in fns:
        grads = []
        for dev in ("cpu", "cuda"):
            a = x.to(dev).detach().requires_grad_()
            fn(a).backward()
            grads.append(a.grad)
        close(grads[1], grads[0], rtol=1e-5, atol=1e-5)
    native("max", "sort", "cumsum", "topk", "norm", "std", "logsumexp", "cumprod")


# -- what takes the host path ------------------------------------------------------------------

def test_16_bit_floats_take_the_host_path():
    x = _floats(6, (2, 4))
    for dt in (jtorch.float16, jtorch.bfloat16):
        both(lambda a: a.max(1), x.to(dt))
        both(lambda a: a.sort(1), x.to(dt))
        both(lambda a: a.cumsum(1), x.to(dt), exact=False, rtol=1e-2, atol=1e-2)
    assert eager.FALLBACKS["max"] == 2 and eager.FALLBACKS["sort"] == 2
