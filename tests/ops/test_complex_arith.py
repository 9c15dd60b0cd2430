"""Complex pow, division, reciprocal and rsqrt against torch, special values included (zero
divisors, infinite and nan parts, zero bases), and ``number / tensor`` as torch's
``reciprocal(x) * number``; the other complex pointwise functions (trigonometric,
hyperbolic, exp/log variants, sigmoid, sgn, sinc, the predicates, isclose, nan_to_num,
lerp, logical ops) against torch."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch

_INF, _NAN = float("inf"), float("nan")
_VALUES = [0, -0.0, 1, -1, 0.5, 2, -2, 1j, -1j, 1 + 2j, 0.5 - 1j, -3 + 0.25j, 3.7 - 2.1j,
           _INF, _NAN, complex(_INF, 1), complex(0, _INF), complex(_NAN, 1), 1e-3 + 1e3j]
_DTYPES = [("complex64", 1e-5), ("complex128", 1e-12)]


def _same(got: np.ndarray, want: np.ndarray, rtol: float) -> None:
    """Equal within rtol part by part, nan where torch has nan, infinities of the same sign;
    zeros of either sign (the sign of a zero part follows the C library's rounding)."""
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=1e-30, equal_nan=True)


def _grid(dtype: str):
    base = np.array([complex(v) for v in _VALUES], np.dtype(dtype))
    b, e = np.meshgrid(base, base)
    return b, e


@pytest.mark.parametrize(("dtype", "rtol"), _DTYPES)
def test_pow_of_complex_tensors_is_torchs(dtype, rtol):
    b, e = _grid(dtype)
    want = torch.pow(torch.from_numpy(b), torch.from_numpy(e)).numpy()
    got = jtorch.pow(jtorch.from_numpy(b), jtorch.from_numpy(e)).numpy()
    assert got.dtype == want.dtype
    _same(got, want, rtol)
    assert np.isnan(got[_VALUES.index(0), _VALUES.index(0)])  # 0 ** 0 is C's cpow: nan


@pytest.mark.parametrize(("dtype", "rtol"), _DTYPES)
@pytest.mark.parametrize("exponent", [2, 3, 0.5, -0.5, -1, -2, 2.5, 1j, 1 + 1j, -3, 0.5 + 0j])
def test_pow_with_a_scalar_exponent_takes_torchs_kernel(dtype, rtol, exponent):
    base = np.array([complex(v) for v in _VALUES], np.dtype(dtype))
    want = torch.pow(torch.from_numpy(base), exponent)
    got = jtorch.pow(jtorch.from_numpy(base), exponent)
    assert str(got.dtype) == str(want.dtype)
    _same(got.numpy(), want.numpy(), rtol)


@pytest.mark.parametrize(("dtype", "rtol"), _DTYPES)
@pytest.mark.parametrize("base", [2, 2.5, 1j, -1 + 0.5j, 0, -2.0])
def test_pow_of_a_scalar_base(dtype, rtol, base):
    e = np.array([complex(v) for v in _VALUES], np.dtype(dtype))
    want = torch.pow(base, torch.from_numpy(e)).numpy()
    got = jtorch.pow(base, jtorch.from_numpy(e)).numpy()
    _same(got, want, rtol)


def test_real_and_complex_operands_promote_as_torch():
    r = np.array([1.5, -2.0, 0.0], np.float32)
    for a, b in [(r, 1j), (r, 0.5 - 2j)]:
        want = torch.pow(torch.from_numpy(a), b)
        got = jtorch.pow(jtorch.from_numpy(a), b)
        assert got.dtype is jtorch.complex64 and want.dtype is torch.complex64
        _same(got.numpy(), want.numpy(), 1e-5)
    z = np.array([1 + 1j, -2j], np.complex128)
    e = np.array([2.0, -0.5])
    _same(jtorch.pow(jtorch.from_numpy(z), jtorch.from_numpy(e)).numpy(),
          torch.pow(torch.from_numpy(z), torch.from_numpy(e)).numpy(), 1e-12)


@pytest.mark.parametrize(("dtype", "rtol"), _DTYPES)
@pytest.mark.parametrize("name", ["div", "rdiv_number", "reciprocal", "rsqrt", "addcdiv"])
def test_division_by_zero_and_infinite_parts_is_torchs(dtype, rtol, name):
    fns = {
        "div": lambda L, x: (1 + 2j) * L.ones_like(x) / x,
        "rdiv_number": lambda L, x: (1 + 2j) / x,
        "reciprocal": lambda L, x: L.reciprocal(x),
        "rsqrt": lambda L, x: L.rsqrt(x),
        "addcdiv": lambda L, x: L.addcdiv(x, x.flip(0), x, value=2),
    }
    vals = _VALUES + [1e-40, 1e30 + 1e30j, 5e-324j]
    z = np.array([complex(v) for v in vals], np.dtype(dtype))
    want = fns[name](torch, torch.from_numpy(z)).numpy()
    got = fns[name](jtorch, jtorch.from_numpy(z)).numpy()
    _same(got, want, rtol)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
def test_number_over_tensor_rounds_as_torchs_reciprocal_times_number(dtype):
    rng = np.random.default_rng(0)
    a = (rng.uniform(0.1, 10, 4096) if dtype != "int64" else rng.integers(1, 1000, 4096))
    a = a.astype(dtype)
    for num in (3.0, 7, -0.3):
        want = num / torch.from_numpy(a)
        got = num / jtorch.from_numpy(a)
        assert str(got.dtype) == str(want.dtype)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    x = jtorch.from_numpy(a.astype(np.float64)).requires_grad_()
    assert type((3 / x).grad_fn).__name__ == "MulBackward0"


def test_compiled_complex_pow_and_division_equal_eager():
    rng = np.random.default_rng(1)
    z = (rng.standard_normal(64) + 1j * rng.standard_normal(64)).astype(np.complex64)
    z[:3] = 0

    def f(x, y):
        return x ** y + 2 / x - x / y.exp()

    x, y = jtorch.from_numpy(z), jtorch.from_numpy(z[::-1].copy())
    want = f(x, y).numpy()
    got = jtorch.compile(f)(x, y).numpy()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    _same(got, want, 1e-6)


_FUNCS = ["tan", "tanh", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
          "expm1", "log1p", "log2", "log10", "exp2", "sigmoid", "sgn", "sinc"]
# finite values off the branch cuts' edges; where glibc and these algorithms differ (a nan
# part's propagation through atan, subnormal magnitudes) torch's own CPU and CUDA differ too
_MODERATE = [0, 1, -1, 0.5j, 1 + 2j, -0.5 + 0.25j, 3 - 1j, 1e-4 + 1e-4j, -2 - 3j, 0.9 + 0.05j,
             20 + 1j, -20 - 0.5j, 0.3 - 40j]


@pytest.mark.parametrize(("dtype", "rtol"), _DTYPES)
@pytest.mark.parametrize("name", _FUNCS)
def test_complex_functions_are_torchs(name, dtype, rtol):
    z = np.array([complex(v) for v in _MODERATE], np.dtype(dtype))
    want = getattr(torch, name)(torch.from_numpy(z)).numpy()
    got = getattr(jtorch, name)(jtorch.from_numpy(z)).numpy()
    assert got.dtype == want.dtype
    _same(got, want, rtol * 20)  # a few ulp: libm's complex functions against cmath's


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
def test_complex_predicates_and_selections_are_torchs(dtype):
    vals = [1 + 1j, complex(_NAN, 0), complex(0, _INF), complex(-_INF, 1), 2 - 3j, 0j]
    a = np.array([complex(v) for v in vals], np.dtype(dtype))
    b = a.copy()
    b[0] = 1 + 1.00001j
    b[4] = 0j

    def both(fn):
        return fn(torch, torch.from_numpy(a), torch.from_numpy(b)), \
            fn(jtorch, jtorch.from_numpy(a), jtorch.from_numpy(b))

    for fn in (lambda L, x, y: L.isfinite(x), lambda L, x, y: L.isinf(x),
               lambda L, x, y: L.isclose(x, y), lambda L, x, y: L.isclose(x, y, equal_nan=True),
               lambda L, x, y: L.isclose(x, y, rtol=0, atol=0),
               lambda L, x, y: L.logical_and(x, y), lambda L, x, y: L.logical_or(x, y),
               lambda L, x, y: L.logical_xor(x, y)):
        want, got = both(fn)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert jtorch.allclose(jtorch.from_numpy(a[[0, 4]]), jtorch.from_numpy(a[[0, 4]]))
    for fn in (lambda L, x, y: L.nan_to_num(x), lambda L, x, y: L.nan_to_num(x, 1.5, 7.0, -7.0),
               lambda L, x, y: L.lerp(x, y, 0.25), lambda L, x, y: L.lerp(x, y, 0.75),
               lambda L, x, y: L.lerp(x, y, L.full_like(x, 0.2 + 0.6j))):
        want, got = both(fn)
        _same(got.numpy(), want.numpy(), 1e-5 if dtype == "complex64" else 1e-12)
