"""torch.special's Bessel, modified Bessel, spherical Bessel and Airy functions and its orthogonal
polynomials (Chebyshev T/U/V/W and shifted, Hermite H/He, Laguerre, Legendre) against torch.

float64 values are torch's bit for bit where torch's kernels are its FMA builds (AVX2, AVX512:
the scalar functions fuse the products those builds fuse), within a few ulp elsewhere; grids
cross every branch of the approximations (the breakpoints, small and large |x|, negative x, the
poles, nan, +-inf, -0.0) and of the polynomials (|x| = 1, x = 0 and 1 for the shifted forms,
n < 0, fractional and out-of-range n, the trigonometric forms past degree 6/8, the Hermite
limits). float32 values are held to torch's float64 result on the same float32 inputs, rounded:
torch's own float32 kernels compute in float32 and lose digits near zeros and in long
recurrences (its recurrences also overflow to nan where the exact value is +-inf).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from helpers import raises_as

import jtorch

BESSEL = ["airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
          "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
          "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0"]
CHEBYSHEV = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
             "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
             "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
             "shifted_chebyshev_polynomial_w"]
POLYNOMIALS = [*CHEBYSHEV, "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
               "legendre_polynomial_p"]
# torch's kernels contract a * b + c to one rounding in its AVX2/AVX512 builds only
FMA_BUILD = torch.backends.cpu.get_cpu_capability() != "DEFAULT"

_SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-310, -1e-310, 1e-300, 1e-20, 1e-5,
            0.99999e-5, 0.5, 0.49999999, -0.5, 1.0, 2.0, 2.09, 2.0899999, -2.09, -2.0900001, 5.0,
            5.0000001, 4.9999999, 8.0, 8.0000001, 8.3203353, 103.892, 103.8921, 700.0, 710.0,
            746.0, 1e6, 1e17, 1e300, -1e300]


def _bessel_grid() -> np.ndarray:
    rng = np.random.default_rng(0)
    vals = [_SPECIAL, np.linspace(-130.0, 130.0, 20011), np.geomspace(1e-12, 1e4, 3000),
            -np.geomspace(1e-12, 1e4, 3000), rng.standard_normal(2000) * 4]
    # both sides of every breakpoint: J/Y 5, K 2, I 8, Airy +-2.09, spherical 0.5
    for b in (5.0, 2.0, 8.0, 2.09, -2.09, 0.5, -0.5, 1e-5, 103.892):
        vals.append(b + np.linspace(-1e-6, 1e-6, 41))
    return np.concatenate([np.asarray(v, np.float64) for v in vals])


def _torch(name, *args, **kw):
    return getattr(torch.special, name)(*args, **kw)


def _jtorch(name, *args, **kw):
    return getattr(jtorch.special, name)(*args, **kw)


def _assert_float64(got: np.ndarray, want: np.ndarray, what: str) -> None:
    """Bit for bit (zeros' signs too) on torch's FMA builds; a few ulp elsewhere."""
    assert got.dtype == want.dtype == np.float64
    if FMA_BUILD:
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15, equal_nan=True, err_msg=what)
    fixed = (want == 0) | np.isinf(want)
    assert np.array_equal(np.signbit(got[fixed]), np.signbit(want[fixed])), what


def _assert_float32(got: np.ndarray, want64: np.ndarray, what: str) -> None:
    """The float64 result rounded once (what torch's float64 kernel gives on the same inputs)."""
    assert got.dtype == np.float32
    with np.errstate(over="ignore"):
        want = want64.astype(np.float32)
    if FMA_BUILD:
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        np.testing.assert_allclose(got, want, rtol=4 * 2.0**-23, atol=2.0**-22, equal_nan=True,
                                   err_msg=what)
    fixed = (want == 0) | np.isinf(want)
    assert np.array_equal(np.signbit(got[fixed]), np.signbit(want[fixed])), what


# -- Bessel and Airy functions --------------------------------------------------------------------

@pytest.mark.parametrize("name", BESSEL)
def test_bessel_float64_is_torchs(name):
    x = _bessel_grid()
    with np.errstate(all="ignore"):
        got = _jtorch(name, jtorch.from_numpy(x.copy())).numpy()
    _assert_float64(got, _torch(name, torch.from_numpy(x)).numpy(), name)


@pytest.mark.parametrize("name", BESSEL)
def test_bessel_float32_is_the_rounded_float64(name):
    with np.errstate(over="ignore"):
        x = _bessel_grid().astype(np.float32)
    got = _jtorch(name, jtorch.from_numpy(x.copy())).numpy()
    _assert_float32(got, _torch(name, torch.from_numpy(x.astype(np.float64))).numpy(), name)


def test_bessel_special_values():
    """The poles, the domain (nan below 0 for Y and K), the limits at +-inf and the signs of
    zeros, as torch's."""
    x = np.array([0.0, -0.0, -1.0, -1e-300, math.inf, -math.inf, math.nan, 1e-300, 1e-40])
    for name in BESSEL:
        want = _torch(name, torch.from_numpy(x)).numpy()
        _assert_float64(_jtorch(name, jtorch.from_numpy(x.copy())).numpy(), want, name)
        x32 = x.astype(np.float32)
        want = _torch(name, torch.from_numpy(x32.astype(np.float64))).numpy()
        _assert_float32(_jtorch(name, jtorch.from_numpy(x32)).numpy(), want, name)


# -- orthogonal polynomials ------------------------------------------------------------------------

_X_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, 0.25, 0.75, 2.0, -2.0, 10.0, -30.0, 1 - 2**-52,
              -1 + 2**-52, 2**-52, 1e-300, math.inf, -math.inf, math.nan]
_N_SPECIAL = [0.5, 2.7, 7.9, -0.5, -1.5, 100.0, 128.0, 129.0, 200.0, 512.0, 513.0, 1e19, -1e19,
              1e30, math.inf, -math.inf, math.nan]


def _polynomial_grid(name: str) -> tuple[np.ndarray, np.ndarray]:
    """All pairs of x (dense over [-1.5, 1.5] or, shifted, [-0.25, 1.25], and the special values)
    and n (-2..64, fractional, the Hermite limits, out of int64's range, nan, +-inf)."""
    lo, hi = (-0.25, 1.25) if name.startswith("shifted") else (-1.5, 1.5)
    xs = np.concatenate([np.linspace(lo, hi, 241), _X_SPECIAL])
    ns = np.concatenate([np.arange(-2, 65), _N_SPECIAL])
    x, n = np.meshgrid(xs, ns)
    return x.ravel(), n.ravel().astype(np.float64)


# Where x is nan and n >= 2, these recurrences never start (their first value is nan) and torch
# returns its uninitialised result variable: whatever the register holds (nan, or the previous
# element's value); jtorch returns nan. Chebyshev T starts from x, Hermite has no nan check.
UNINITIALISED = {*CHEBYSHEV, "laguerre_polynomial_l", "legendre_polynomial_p"} - {
    "chebyshev_polynomial_t"}


def _defined(name, x, n):
    keep = ~(np.isnan(x) & (n >= 2)) if name in UNINITIALISED else np.ones(x.shape, bool)
    return x[keep], n[keep]


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_float64_is_torchs(name):
    x, n = _defined(name, *_polynomial_grid(name))
    got = _jtorch(name, jtorch.from_numpy(x.copy()), jtorch.from_numpy(n.copy())).numpy()
    _assert_float64(got, _torch(name, torch.from_numpy(x), torch.from_numpy(n)).numpy(), name)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_float32_is_the_rounded_float64(name):
    x, n = (a.astype(np.float32) for a in _defined(name, *_polynomial_grid(name)))
    if name.startswith("hermite"):
        n = np.where((n > 128) & (n <= 512), 64, n)  # float32's own limit: next test
    got = _jtorch(name, jtorch.from_numpy(x.copy()), jtorch.from_numpy(n.copy())).numpy()
    want = _torch(name, torch.from_numpy(x.astype(np.float64)), torch.from_numpy(n.astype(np.float64)))
    _assert_float32(got, want.numpy(), name)


@pytest.mark.parametrize("name", ["hermite_polynomial_h", "hermite_polynomial_he"])
def test_hermite_degree_limits_are_per_dtype(name):
    """torch's Hermite kernels give nan past degree 128 in float32 and 512 in float64."""
    n = np.array([127, 128, 129, 300, 512, 513, 1000])
    for dt, limit in ((np.float32, 128), (np.float64, 512)):
        x = np.full(n.shape, 0.01, dt)
        got = _jtorch(name, jtorch.from_numpy(x), jtorch.from_numpy(n.astype(dt))).numpy()
        assert np.isnan(got[n > limit]).all()
        assert not np.isnan(got[n <= min(limit, 129)]).any()  # float64 overflows past ~300
        want = _torch(name, torch.from_numpy(x), torch.from_numpy(n.astype(dt))).numpy()
        assert np.isnan(want[n > limit]).all()


@pytest.mark.parametrize("name", CHEBYSHEV)
def test_chebyshev_huge_degrees(name):
    """Degrees that fit int64 use the trigonometric forms inside the interval and overflow to nan
    quickly outside; torch truncates them as this does (float64)."""
    xs = [-0.9, -0.3, 0.0, 0.3, 0.7, 0.99, 2.0, -3.0, 10.0]
    x, n = (a.ravel() for a in np.meshgrid(xs, [2.0**40, 1e15, 2.0**62, 12345.0]))
    got = _jtorch(name, jtorch.from_numpy(x.copy()), jtorch.from_numpy(n.copy())).numpy()
    _assert_float64(got, _torch(name, torch.from_numpy(x), torch.from_numpy(n)).numpy(), name)


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_degree_is_truncated(name):
    """n = 3.9 is degree 3, -0.5 is 0 (truncation toward 0), -1.5 gives 0 (n < 0)."""
    x = jtorch.tensor([0.3, 0.3, 0.3, 0.3], dtype=jtorch.float64)
    n = jtorch.tensor([3.9, 3.0, -0.5, -1.5], dtype=jtorch.float64)
    got = _jtorch(name, x, n).numpy()
    assert got[0] == got[1]
    assert got[2] == 1.0 and got[3] == 0.0


# -- dtypes, operands, layouts -------------------------------------------------------------------

class _Wide:
    """torch with every tensor it makes widened to float64 (after rounding to the dtype asked
    for): the reference run of a call, the exact result, rounded afterwards to the dtype of
    torch's own result."""

    float32, float64, int32 = torch.float32, torch.float64, torch.int32
    special = torch.special

    @staticmethod
    def tensor(data, dtype=None):
        return torch.tensor(data, dtype=dtype).double()

    @staticmethod
    def zeros(*shape):
        return torch.zeros(*shape, dtype=torch.float64)

    @staticmethod
    def arange(n):
        return torch.arange(n, dtype=torch.float64)

    @staticmethod
    def from_numpy(a):
        return torch.from_numpy(a).double()


def _both(fn):
    """fn(lib) for torch and jtorch: jtorch's result has torch's dtype and shape, and the values
    of torch's float64 computation on the same operands rounded to that dtype."""
    want = fn(torch)
    ref = fn(_Wide).to(want.dtype).numpy()
    got = fn(jtorch)
    assert isinstance(got, jtorch.Tensor) and str(got.dtype) == str(want.dtype)
    assert tuple(got.shape) == tuple(want.shape)
    check = _assert_float64 if want.dtype == torch.float64 else _assert_float32
    check(got.numpy().ravel(), ref.astype(np.float64).ravel() if want.dtype == torch.float32
          else ref.ravel(), "")


def _x(lib, dtype="float32", shape=(3, 4), seed=0):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal(shape) * 3).astype(dtype)
    return lib.from_numpy(a)


@pytest.mark.parametrize("name", BESSEL)
def test_bessel_dtypes_and_layouts(name):
    # integers and bools give the default float dtype
    _both(lambda L: getattr(L.special, name)(L.tensor([0, 1, 2, -3, 7])))
    _both(lambda L: getattr(L.special, name)(L.tensor([True, False])))
    _both(lambda L: getattr(L.special, name)(_x(L, "float64")))
    # 0-d, 0-size, non-contiguous (transposed, step-sliced)
    _both(lambda L: getattr(L.special, name)(L.tensor(1.5)))
    _both(lambda L: getattr(L.special, name)(L.zeros(0, 3)))
    _both(lambda L: getattr(L.special, name)(_x(L).t()))
    _both(lambda L: getattr(L.special, name)(_x(L, "float64", (6, 5))[::2, 1::2]))


@pytest.mark.parametrize("name", POLYNOMIALS)
def test_polynomial_operands_dtypes_and_layouts(name):
    def f(L, x, n):
        return getattr(L.special, name)(x, n)

    # n a Python number (int, float) or a tensor of either kind; x a Python number
    _both(lambda L: f(L, _x(L) / 4, 5))
    _both(lambda L: f(L, _x(L) / 4, 5.7))
    _both(lambda L: f(L, 0.375, L.tensor([0, 1, 2, 9, 30])))
    _both(lambda L: f(L, 0.3, L.tensor([0.0, 1.5, 9.0], dtype=L.float64)))
    # promotion: int x gives float32, a 0-d float64 n does not lift float32 x, a 1-d one does
    _both(lambda L: f(L, L.tensor([0, 1, 2, -1]), 3))
    _both(lambda L: f(L, L.tensor([True, False]), L.tensor([2, 3])))
    _both(lambda L: f(L, _x(L) / 4, L.tensor(7.0, dtype=L.float64)))
    _both(lambda L: f(L, _x(L, shape=(4,)) / 4, L.tensor([1.0, 2.0, 8.0, 12.0], dtype=L.float64)))
    _both(lambda L: f(L, _x(L, "float64") / 4, L.tensor([[3], [9], [20]], dtype=L.int32)))
    # broadcast, 0-d, 0-size, non-contiguous
    _both(lambda L: f(L, _x(L, shape=(3, 1)) / 4, L.tensor([0, 2, 7, 11])))
    _both(lambda L: f(L, L.tensor(0.4), L.tensor(10)))
    _both(lambda L: f(L, L.zeros(0, 4), L.tensor([0, 2, 7, 11])))
    _both(lambda L: f(L, (_x(L, "float64", (5, 4)) / 4).t(), L.arange(5)))
    _both(lambda L: f(L, (_x(L, "float64", (6, 8)) / 4)[::2, ::3], L.arange(3)))


@pytest.mark.parametrize("name", ["bessel_j0", "scaled_modified_bessel_k1", "chebyshev_polynomial_u",
                                  "laguerre_polynomial_l"])
def test_out(name):
    """out= of either float dtype takes the float32 result (cast); an integer out raises."""
    args = (lambda L: (_x(L).abs(),)) if name in BESSEL else (lambda L: (_x(L) / 4, 9))
    ref = _torch(name, *args(_Wide)).float()
    for dt in ("float32", "float64"):
        out = jtorch.empty(3, 4, dtype=getattr(jtorch, dt))
        assert _jtorch(name, *args(jtorch), out=out) is out
        want = _torch(name, *args(torch), out=torch.empty(3, 4, dtype=getattr(torch, dt)))
        assert str(out.dtype) == str(want.dtype)
        _assert_float32(out.numpy().astype(np.float32), ref.double().numpy(), name)
    out = jtorch.empty(3, 4, dtype=jtorch.int64)
    raises_as(_outcome(lambda: _torch(name, *args(torch), out=torch.empty(3, 4, dtype=torch.int64))),
              lambda: _jtorch(name, *args(jtorch), out=out))


def _outcome(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the error is the oracle)
        return e
    raise AssertionError("torch did not raise")


@pytest.mark.parametrize("name", BESSEL + POLYNOMIALS)
def test_unsupported_dtypes_raise_like_torch(name):
    extra = (2,) if name in POLYNOMIALS else ()
    for dt in ("float16", "bfloat16", "complex64"):
        if not hasattr(jtorch, dt):
            continue
        t = torch.tensor([0.5, 1.0], dtype=getattr(torch, dt))
        j = jtorch.tensor([0.5, 1.0], dtype=getattr(jtorch, dt))
        raises_as(_outcome(lambda t=t: _torch(name, t, *extra)), lambda j=j: _jtorch(name, j, *extra))


@pytest.mark.parametrize("name", BESSEL + POLYNOMIALS)
def test_python_number_operands_raise_like_torch(name):
    if name in POLYNOMIALS:
        raises_as(_outcome(lambda: _torch(name, 0.5, 2)), lambda: _jtorch(name, 0.5, 2))
    else:
        raises_as(_outcome(lambda: _torch(name, 0.5)), lambda: _jtorch(name, 0.5))


def test_keyword_names_are_torchs():
    """airy_ai, scaled_modified_bessel_k0/k1 and spherical_bessel_j0 take ``x``; the other Bessel
    functions ``input``; the polynomials ``x`` and ``n``."""
    for name in BESSEL:
        kw = "x" if name in ("airy_ai", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
                             "spherical_bessel_j0") else "input"
        _both(lambda L, name=name, kw=kw: getattr(L.special, name)(**{kw: L.tensor([0.5, 3.0])}))
    _both(lambda L: L.special.legendre_polynomial_p(x=L.tensor([0.5, 0.3]), n=L.tensor(4)))


@pytest.mark.parametrize("name", BESSEL + POLYNOMIALS)
def test_not_differentiable_as_in_torch(name):
    """torch defines no derivative: the result does not require grad, and backward through it
    raises torch's error."""
    def run(L):
        x = L.tensor([0.5, 1.5], requires_grad=True)
        y = _jtorch(name, x, *((3,) if name in POLYNOMIALS else ())) if L is jtorch else \
            _torch(name, x, *((3,) if name in POLYNOMIALS else ()))
        assert not y.requires_grad and y.grad_fn is None
        return y

    run(torch)
    run(jtorch)
    raises_as(_outcome(lambda: run(torch).sum().backward()), lambda: run(jtorch).sum().backward())
