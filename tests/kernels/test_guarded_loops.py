"""Ops with a fast scalar (OpDef.fast_scalar): the guarded contiguous loops must give exactly the
full scalar's results, whatever mix of arguments a block holds, in place or not."""

import numpy as np
import pytest

import jtorch
from jtorch.kernels import registry
from jtorch.kernels.cpu import pointwise

GUARDED = sorted(op.name for op in registry.REGISTRY.values() if op.fast_scalar is not None)
UNARY_GUARDED = [n for n in GUARDED if registry.get(n).family == "unary"]
BINARY_GUARDED = [n for n in GUARDED if registry.get(n).family == "binary"]


def test_guarded_ops():
    assert {"exp", "sin", "cos", "tan", "log", "log2", "log10", "log1p"} <= set(UNARY_GUARDED)
    assert {"fmod", "remainder", "floor_divide"} <= set(BINARY_GUARDED)


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


def _full(op, dtype, *xs):
    """The full scalar through the strided loop (never guarded)."""
    mod = pointwise.kernels(op, len(xs), dtype, dtype)
    out = np.empty_like(xs[0])
    one = np.array([1], np.int64)
    args = [np.array(out.shape, np.int64), out, one]
    for x in xs:
        args += [x, one]
    getattr(mod, f"s_{len(xs)}")(*args)
    return out


def _assert_same(got, want):
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("name", UNARY_GUARDED)
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
        _assert_same(out, want)
        y = x.copy()  # in place: out is the input
        getattr(mod, kernel)(y, y)
        _assert_same(y, want)


@pytest.mark.parametrize("name", BINARY_GUARDED)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kernel", ["c_aa", "p_aa", "c_as", "p_as", "c_sa", "p_sa"])
def test_binary_guarded_loop_equals_full_scalar(name, dtype, kernel):
    """Array/array and array/scalar patterns, blocks with and without operands outside
    fast_ok (huge quotients, zero and infinite divisors, nan), in place or not."""
    op = registry.get(name)
    mod = pointwise.kernels(op, 2, dtype, dtype)
    for n in (0, 1, 255, 257, 40_000):
        x = _inputs(dtype, n, seed=n) if n > 300 else np.linspace(-2000, 2000, n).astype(dtype)
        y = _inputs(dtype, n, seed=n + 1) / 7 if n > 300 else np.linspace(-3, 5, n).astype(dtype)
        pat = kernel[2:]
        for s in ((dtype_scalar := np.dtype(dtype).type)(2.5), dtype_scalar(0.0), dtype_scalar(-1e-30)):
            a = x if pat[0] == "a" else s
            b = y if pat[1] == "a" else s
            want = _full(op, dtype, *[v if isinstance(v, np.ndarray) else np.full(n, v, dtype)
                                      for v in (a, b)])
            out = np.empty(n, dtype)
            with np.errstate(all="ignore"):
                getattr(mod, kernel)(out, a, b)
            _assert_same(out, want)
            if pat[0] == "a":  # in place: out is the first operand
                z = x.copy()
                getattr(mod, kernel)(z, z, b)
                _assert_same(z, want)


def _steps_around(points, dtype, n=2000):
    """The n representable values of ``dtype`` on either side of each point."""
    out = []
    for p in points:
        v = np.array([p], dtype)
        lo = hi = v
        for _ in range(n):
            lo, hi = np.nextafter(lo, dtype(-np.inf)), np.nextafter(hi, dtype(np.inf))
            out += [lo, hi]
    return np.concatenate(out)


@pytest.mark.parametrize("name", GUARDED)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fast_scalar_equals_full_scalar_where_ok(name, dtype):
    """The fast scalar is exact wherever fast_ok holds: a dense sweep to the edge of its range
    (binary ops: divisors of every scale, quotients near integers up to the 2^22 edge)."""
    import numba

    op = registry.get(name)
    f = numba.njit(op.scalar)
    g = numba.njit(op.fast_scalar)
    ok = numba.njit(op.fast_ok)
    rng = np.random.default_rng(0)

    if op.family == "binary":
        @numba.njit
        def mismatches(x, y):
            bad = checked = 0
            for i in range(x.size):
                if ok(x[i], y[i]):
                    checked += 1
                    a, b = f(x[i], y[i]), g(x[i], y[i])
                    if not (a == b or (np.isnan(a) and np.isnan(b))) or np.signbit(a) != np.signbit(b):
                        bad += 1
            return bad, checked

        n = 400_000
        y = (rng.standard_normal(n) * 10.0 ** rng.uniform(-30, 30, n)).astype(dtype)
        q = np.round(rng.uniform(-2**22, 2**22, n) * 10.0 ** rng.uniform(-7, 0, n))
        x = (y.astype(np.float64) * q).astype(dtype)
        x[: n // 3] = np.nextafter(x[: n // 3], np.inf)
        x[n // 3: 2 * n // 3] = np.nextafter(x[n // 3: 2 * n // 3], -np.inf)
        x[-10:], y[-10:] = [0.0, -0.0, 5.0, -5.0, 1.0, 3.0, -0.0, 2.0, 7.0, -7.0], \
            [3.0, 3.0, -3.0, 3.0, 1e-30, 1e30, -2.0, 2.0, 7.0, 7.0]
        bad, checked = mismatches(x, y)
        assert bad == 0 and checked > 0.9 * n
        return

    edge = 1024.0 if dtype == np.float32 else 2.0**40
    fi = np.finfo(dtype)

    @numba.njit
    def mismatches1(x):
        bad = 0
        for v in x:
            if ok(v):
                a, b = f(v), g(v)
                if not (a == b or (np.isnan(a) and np.isnan(b))) or np.signbit(a) != np.signbit(b):
                    bad += 1
        return bad

    x = np.concatenate([
        np.linspace(-edge, edge, 200_001),
        rng.uniform(-10, 10, 100_000),
        np.nextafter(np.array([edge, -edge, 0.0, -0.0]), 0),
        np.array([0.0, -0.0, 1e-30, -1e-30]),
        # the edges of the logarithms' fast range: the smallest normal, the largest finite,
        # just above -1 (log1p), and a dense sweep over (0, 4)
        np.array([fi.tiny, np.nextafter(fi.tiny, 1), np.nextafter(fi.tiny, 0), fi.max,
                  np.nextafter(dtype(-1), 0), -0.5, 1.0, 2.0**-30]),
        np.exp(rng.uniform(np.log(fi.tiny) - 10, np.log(fi.max), 100_000)),
        rng.uniform(0, 4, 100_000),
        # exp: its whole normal range and the ends of exp_ok's (where 2^k meets the
        # exponent's limits: the largest and smallest k, 1 + s below and above 1)
        rng.uniform(np.log(fi.tiny) - 5, np.log(fi.max) + 5, 200_000),
        _steps_around([-86.5, 88.0, -707.0, 709.0, 87.68, -86.3, 708.4, -706.5], dtype),
    ]).astype(dtype)
    assert mismatches1(x) == 0


def test_guarded_ops_through_the_tensor_api():
    """Against NumPy's float64 result of the float32 inputs (its float32 loops are SIMD code
    that rounds differently by CPU): within 2e-7, under 2 ulp."""
    x = jtorch.tensor([0.5, -3.0, 1e6, float("inf"), float("nan"), -0.0])
    t = np.array([0.5, -3.0, 1e6, np.inf, np.nan, -0.0], np.float32).astype(np.float64)
    with np.errstate(invalid="ignore"):
        for name in UNARY_GUARDED:
            got = getattr(jtorch, name)(x).numpy()
            np.testing.assert_allclose(got, getattr(np, name)(t), rtol=2e-7, equal_nan=True)
