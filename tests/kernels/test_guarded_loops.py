"""Ops with a fast scalar (OpDef.fast_scalar): the guarded contiguous loops must give exactly the
full scalar's results, whatever mix of arguments a block holds, in place or not."""

import numpy as np
import pytest

import jtorch
from jtorch.kernels import registry
from jtorch.kernels.cpu import pointwise

GUARDED = sorted(op.name for op in registry.REGISTRY.values() if op.fast_scalar is not None)


def test_trig_ops_are_guarded():
    assert {"sin", "cos", "tan"} <= set(GUARDED)


def _inputs(dtype, n, seed):
    """Moderate values with, in some blocks, huge ones, +-inf, nan, zeros and subnormals."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal(n) * 300).astype(dtype)
    odd = np.array([1e6, -3e30, np.inf, -np.inf, np.nan, 0.0, -0.0, 1023.9, 1024.0, -1024.5,
                    2.0**40, np.finfo(dtype).tiny / 4], dtype)
    at = rng.choice(n, size=len(odd), replace=False)
    x[at] = odd
    x[: 300] = 2.5  # a whole clean block
    return x


def _full(op, dtype, x):
    """The full scalar through the strided loop (never guarded)."""
    mod = pointwise.kernels(op, 1, dtype, dtype)
    out = np.empty_like(x)
    mod.s_1(np.array(x.shape, np.int64), out, np.array([1], np.int64), x, np.array([1], np.int64))
    return out


@pytest.mark.parametrize("name", GUARDED)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kernel", ["c_a", "p_a"])
def test_guarded_loop_equals_full_scalar(name, dtype, kernel):
    op = registry.get(name)
    mod = pointwise.kernels(op, 1, dtype, dtype)
    for n in (0, 1, 255, 257, 40_000):
        x = _inputs(dtype, n, seed=n) if n > 300 else np.linspace(-2000, 2000, n).astype(dtype)
        want = _full(op, dtype, x)
        out = np.empty_like(x)
        getattr(mod, kernel)(out, x)
        np.testing.assert_array_equal(out, want)
        y = x.copy()  # in place: out is the input
        getattr(mod, kernel)(y, y)
        np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("name", GUARDED)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fast_scalar_equals_full_scalar_where_ok(name, dtype):
    """The fast scalar is exact wherever fast_ok holds: a dense sweep to the edge of its range."""
    import numba

    op = registry.get(name)
    f = numba.njit(op.scalar)
    g = numba.njit(op.fast_scalar)
    ok = numba.njit(op.fast_ok)
    edge = 1024.0 if dtype == np.float32 else 2.0**40

    @numba.njit
    def mismatches(x):
        bad = 0
        for v in x:
            if ok(v):
                a, b = f(v), g(v)
                if not (a == b or (np.isnan(a) and np.isnan(b))) or np.signbit(a) != np.signbit(b):
                    bad += 1
        return bad

    rng = np.random.default_rng(0)
    x = np.concatenate([
        np.linspace(-edge, edge, 200_001),
        rng.uniform(-10, 10, 100_000),
        np.nextafter(np.array([edge, -edge, 0.0, -0.0]), 0),
        np.array([0.0, -0.0, 1e-30, -1e-30]),
    ]).astype(dtype)
    assert mismatches(x) == 0


def test_guarded_ops_through_the_tensor_api():
    x = jtorch.tensor([0.5, -3.0, 1e6, float("inf"), float("nan"), -0.0])
    t = np.array([0.5, -3.0, 1e6, np.inf, np.nan, -0.0], np.float32)
    with np.errstate(invalid="ignore"):
        for name in GUARDED:
            got = getattr(jtorch, name)(x).numpy()
            np.testing.assert_allclose(got, getattr(np, name)(t), rtol=2e-7, equal_nan=True)
