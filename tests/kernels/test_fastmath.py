"""Accuracy, special values and vectorisation of jtorch.kernels.fastmath.

float32 results are compared with the float64 result of NumPy (libm), float64 results with the
80-bit long double result (or mpmath where NumPy has no long double function); errors are
measured in ulps of the target type at the exact value. One njit sweep kernel per function is
compiled (once per dtype) and reused by every test.
"""

import math
import os
import re
import warnings

import numba
import numpy as np
import pytest

from jtorch.kernels import fastmath as fm

MAX_ULP = 2.0
# mish is not one of the 2-ulp math functions: its float64 chain (exp, a quotient of two
# roundings, the product) stays within 3.5 ulp, torch's float64 mish within 3.1
MAX_ULP_OF = {("mish", np.float64): 4.0}
# float32 sin and cos are held to 1 ulp (exhaustively 0.907)
MAX_ULP_OF.update({("sin", np.float32): 1.0, ("cos", np.float32): 1.0})
LD = np.longdouble
HAVE_LD = np.finfo(LD).nmant >= 63
F32_MAX = float(np.finfo(np.float32).max)


# --------------------------------------------------------------------------------------------
# kernels
# --------------------------------------------------------------------------------------------

_KERNELS = {}


def kernel(name):
    """One njit loop per public function, applied elementwise."""
    if name in _KERNELS:
        return _KERNELS[name]
    f = getattr(fm, name)
    if f.__code__.co_argcount == 1:

        @numba.njit
        def k(a, out):
            for i in range(a.size):
                out[i] = f(a[i])

    else:

        @numba.njit
        def k(a, b, out):
            for i in range(a.size):
                out[i] = f(a[i], b[i])

    _KERNELS[name] = k
    return k


def apply(name, *args):
    out = np.empty_like(args[0])
    kernel(name)(*args, out)
    return out


# --------------------------------------------------------------------------------------------
# references and inputs
# --------------------------------------------------------------------------------------------


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


def _mish(x):
    """x tanh(softplus(x)), softplus with torch's threshold 20 (float64 or long double)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.where(x > 20, x, x * np.tanh(np.log1p(np.exp(np.minimum(x, 20)))))


def _softplus(x):
    return np.logaddexp(x.dtype.type(0), x)


def _vec(fn):
    return np.frompyfunc(fn, 1, 1)


def _erf64(x):
    return _vec(math.erf)(x).astype(np.float64)


def _erfc64(x):
    return _vec(math.erfc)(x).astype(np.float64)


class _MpRef:
    """float64 reference from mpmath (for functions without a long double NumPy version); used on
    a smaller sample because it is slow."""

    def __init__(self, name):
        self.name = name

    def __call__(self, x):
        import mpmath

        mpmath.mp.prec = 100
        fn = getattr(mpmath, self.name)
        out = []
        for v in np.clip(x.astype(np.float64), -1e4, 1e4):  # erf/erfc saturate long before
            y = fn(mpmath.mpf(float(v))) if not math.isnan(v) else mpmath.nan
            with warnings.catch_warnings():  # long double parsing of tiny values warns
                warnings.simplefilter("ignore", RuntimeWarning)
                out.append(LD(mpmath.nstr(y, 30)) if mpmath.isfinite(y) else LD(float(y)))
        return np.array(out, dtype=LD)


# name -> (f32 reference on float64 input, f64 reference on long double input,
#          dense float32 ranges [(lo, hi, n)], float64 uniform range)
UNARY = {
    "exp": (np.exp, np.exp, [(-104, 89, 1_000_000), (-1, 1, 200_000)], (-750, 750)),
    "exp2": (np.exp2, np.exp2, [(-151, 129, 1_000_000), (-1, 1, 200_000)], (-1080, 1030)),
    "expm1": (
        np.expm1,
        np.expm1,
        [(-20, 89, 1_000_000), (-1, 1, 200_000), (-1e-3, 1e-3, 100_000)],
        (-50, 720),
    ),
    "log": (np.log, np.log, [(0, 4, 1_000_000), (0.5, 2, 1_000_000)], (0, 5)),
    "log2": (np.log2, np.log2, [(0, 4, 1_000_000), (0.5, 2, 1_000_000)], (0, 5)),
    "log10": (np.log10, np.log10, [(0, 4, 1_000_000), (0.5, 2, 1_000_000)], (0, 5)),
    "log1p": (np.log1p, np.log1p, [(-1, 4, 1_000_000), (-0.5, 0.5, 1_000_000)], (-1, 5)),
    "sin": (np.sin, np.sin, [(-10, 10, 1_000_000), (-1e5, 1e5, 500_000)], (-100, 100)),
    "cos": (np.cos, np.cos, [(-10, 10, 1_000_000), (-1e5, 1e5, 500_000)], (-100, 100)),
    "tan": (np.tan, np.tan, [(-10, 10, 1_000_000), (-1e5, 1e5, 500_000)], (-100, 100)),
    "tanh": (np.tanh, np.tanh, [(-10, 10, 1_000_000), (-1, 1, 500_000)], (-20, 20)),
    "sigmoid": (_sigmoid, _sigmoid, [(-110, 50, 1_000_000), (-5, 5, 500_000)], (-750, 50)),
    "sinh": (np.sinh, np.sinh, [(-90, 90, 1_000_000), (-2, 2, 500_000)], (-712, 712)),
    "cosh": (np.cosh, np.cosh, [(-90, 90, 1_000_000), (-2, 2, 500_000)], (-712, 712)),
    "atan": (np.arctan, np.arctan, [(-5, 5, 1_000_000)], (-5, 5)),
    "asin": (np.arcsin, np.arcsin, [(-1, 1, 1_000_000)], (-1, 1)),
    "acos": (np.arccos, np.arccos, [(-1, 1, 1_000_000)], (-1, 1)),
    "asinh": (np.arcsinh, np.arcsinh, [(-5, 5, 1_000_000)], (-5, 5)),
    "acosh": (np.arccosh, np.arccosh, [(1, 5, 1_000_000), (1, 1.01, 500_000)], (1, 5)),
    "atanh": (np.arctanh, np.arctanh, [(-1, 1, 1_000_000)], (-1, 1)),
    "erf": (_erf64, _MpRef("erf"), [(-5, 5, 1_000_000), (0.7, 2.1, 500_000)], (-6, 6)),
    "erfc": (_erfc64, _MpRef("erfc"), [(-5, 11, 1_000_000), (0.7, 2.1, 500_000)], (-6, 28)),
    "mish": (_mish, _mish, [(-130, 30, 1_000_000), (-5, 5, 500_000)], (-760, 40)),
    "softplus": (_softplus, _softplus, [(-110, 30, 1_000_000), (-2, 2, 500_000)], (-750, 750)),
}
UNARY = {k: v for k, v in UNARY.items() if hasattr(fm, k)}


def f32_inputs(dense, stride=1 << 11):
    """Every stride-th float32 bit pattern (both signs, nan and inf included) + dense ranges."""
    bits = np.arange(0, 1 << 32, stride, dtype=np.uint64).astype(np.uint32)
    xs = [bits.view(np.float32)]
    xs += [np.linspace(lo, hi, n, dtype=np.float64).astype(np.float32) for lo, hi, n in dense]
    return np.concatenate(xs)


def f64_inputs(lo, hi, n=300_000, seed=0):
    rng = np.random.default_rng(seed)
    sign = rng.choice([-1.0, 1.0], n // 3)
    bits = rng.integers(0, 1 << 64, n // 3, dtype=np.uint64, endpoint=False)
    edges = np.array(
        [
            0.0,
            -0.0,
            np.inf,
            -np.inf,
            np.nan,
            5e-324,
            -5e-324,
            2.2250738585072014e-308,
            1.0,
            -1.0,
            0.5,
            2.0,
            1e-300,
            -1e-300,
            1.7976931348623157e308,
        ]
    )
    return np.concatenate(
        [rng.uniform(lo, hi, n), np.exp(rng.uniform(-745, 709, n // 3)) * sign, bits.view(np.float64), edges]
    )


def ulp_errors(y, ref, dtype):
    """(max ulp error over finite reference values, bad-special mask, index of the max)."""
    ref = np.asarray(ref, LD if dtype == np.float64 else np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        rounded = ref.astype(dtype)
    # nan and overflow to inf must match exactly
    bad = (np.isnan(rounded) != np.isnan(y)) | (np.isinf(rounded) & (rounded != y))
    fin = np.isfinite(rounded)
    mant, min_e = (24, -149) if dtype == np.float32 else (53, -1074)
    e = np.frexp(rounded[fin].astype(np.float64))[1]
    ulp = np.ldexp(ref.dtype.type(1), np.maximum(e - mant, min_e))
    err = (np.abs(y[fin].astype(ref.dtype) - ref[fin]) / ulp).astype(np.float64)
    err[~np.isfinite(y[fin])] = np.inf
    return err, bad, fin


def check(name, x_args, y, ref, dtype, vacuous_ok=False):
    """The max ulp error; ``vacuous_ok`` lets an all-exact or mostly non-finite chunk pass (an
    exhaustive sweep's subnormal chunks, where tanh(x) = x; the chunks of asin beyond 1, of
    nan and inf inputs): the sweep checks non-vacuity over its whole range."""
    err, bad, fin = ulp_errors(y, ref, dtype)
    assert not bad.any(), (
        f"{name}: nan/inf mismatch at {[a[bad][:5] for a in x_args]}: got {y[bad][:5]}, "
        f"want {np.asarray(ref)[bad][:5]}"
    )
    if not fin.any():
        assert vacuous_ok, f"{name}: no finite result to compare"
        return 0.0
    i = int(np.argmax(err))
    where = [a[fin][i] for a in x_args]
    assert err[i] <= MAX_ULP_OF.get((name, dtype), MAX_ULP), f"{name}: {err[i]:.3f} ulp at {where}: got {y[fin][i]!r}, want {ref[fin][i]!r}"
    # guard against a vacuous comparison
    assert vacuous_ok or (fin.sum() > 0.5 * y.size and err.max() > 0)
    return err[i]


# --------------------------------------------------------------------------------------------
# accuracy sweeps
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float32_sweep(name):
    ref32, _, dense, _ = UNARY[name]
    x = f32_inputs(dense)
    y = apply(name, x)
    assert y.dtype == np.float32
    with np.errstate(all="ignore"):
        ref = ref32(x.astype(np.float64))
    check(name, [x], y, ref, np.float32)


@pytest.mark.skipif(not HAVE_LD, reason="needs 80-bit long double as the float64 reference")
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float64_sweep(name):
    _, ref64, _, (lo, hi) = UNARY[name]
    x = f64_inputs(lo, hi)
    if isinstance(ref64, _MpRef):  # slow reference: a sample plus a dense range
        x = np.concatenate([x[:1500], x[300_000:300_500], x[-600:], np.linspace(-1, 8, 2500)])
    y = apply(name, x)
    assert y.dtype == np.float64
    with np.errstate(all="ignore"):
        ref = ref64(x.astype(LD))
    check(name, [x], y, ref, np.float64)


def _gelu_ref(x):
    """x * Phi(x) in float64 through erfc (no cancellation for negative x)."""
    return x * 0.5 * _erfc64(-x / math.sqrt(2.0))


def test_gelu_float32_sweep():
    """float32 gelu writes Phi(-|x|) as e^{-x^2/2} H(v): bounds per range as documented in
    fastmath (the negative side keeps relative accuracy where x * (1 + erf) / 2 cancels)."""
    x = f32_inputs([(-13.5, 13.5, 1_000_000), (-0.5, 0.5, 200_000)])
    x = x[np.isfinite(x)]
    y = apply("gelu", x)
    assert y.dtype == np.float32
    ref = _gelu_ref(x.astype(np.float64))
    err, bad, fin = ulp_errors(y, ref, np.float32)
    assert not bad.any()
    xf = x[fin]
    for lo, hi, bound in ((-2, 2, 4.5), (-13, -2, 12.0), (2, np.inf, 1.5)):
        m = (xf >= lo) & (xf < hi)
        i = int(np.argmax(np.where(m, err, -1)))
        assert m.sum() > 1000 and err[i] <= bound, f"gelu [{lo}, {hi}): {err[i]:.2f} ulp at {xf[i]!r}"
    tail = x < -13  # |gelu| < 1e-37: rounds to -0 (torch's float32 gelu is -0 below about -5.6)
    assert tail.sum() > 1000 and (np.abs(y[tail]) <= 1e-36).all() and (np.abs(ref[tail]) < 1e-37).all()
    # x = -5: x * (1 + erf(x / sqrt 2)) / 2 is off by 4% in float32; the fused form is not
    assert abs(apply("gelu", np.float32([-5.0]))[0] / _gelu_ref(np.array([-5.0]))[0] - 1) < 1e-6


def test_gelu_float64_sample():
    """float64 gelu is x * erfc(-x / sqrt 2) / 2: the rounding of x / sqrt 2 costs ~x^2 / 2 ulp
    for negative x (the function's own conditioning there), as torch's erf form does."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 120
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-30, 10, 1000), rng.uniform(-3, 3, 1000)])
    ref = np.array([LD(mpmath.nstr(mpmath.mpf(float(v)) * mpmath.ncdf(mpmath.mpf(float(v))), 30))
                    for v in x])
    err, bad, fin = ulp_errors(apply("gelu", x), ref, np.float64)
    assert not bad.any() and fin.all()
    assert (err <= 4 * (1 + x**2 / 2)).all(), float(np.max(err / (1 + x**2 / 2)))


def _bit_patterns(dtype, n, rng):
    if dtype == np.float32:
        return rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    return rng.integers(0, 1 << 64, n, dtype=np.uint64, endpoint=False).view(np.float64)


def binary_inputs(name, dtype):
    rng = np.random.default_rng(2)
    n = 2_000_000 if dtype == np.float32 else 400_000
    q = n // 4
    a, b = _bit_patterns(dtype, q, rng), _bit_patterns(dtype, q, rng)
    if name == "atan2":
        xs = [
            a,
            rng.uniform(-5, 5, q),
            rng.uniform(-5, 5, q),
            np.exp(rng.uniform(-80, 80, q)) * rng.choice([-1, 1], q),
        ]
        ys = [
            b,
            rng.uniform(-5, 5, q),
            np.exp(rng.uniform(-80, 80, q)) * rng.choice([-1, 1], q),
            rng.uniform(-5, 5, q),
        ]
    elif name == "hypot":  # random bits, moderate values, operands of very different scale
        xs = [a, rng.uniform(-5, 5, q), rng.uniform(-5, 5, q) * 1e30, np.exp(rng.uniform(-80, 80, q))]
        ys = [b, rng.uniform(-5, 5, q), rng.uniform(-5, 5, q) * 1e-30, np.exp(rng.uniform(-80, 80, q))]
    else:  # pow: random bits, moderate values, x near 1 with large y, negative x with integer y
        near = 1e-3 if dtype == np.float32 else 1e-6
        big = 3e4 if dtype == np.float32 else 3e8
        xs = [a, rng.uniform(0, 4, q), 1 + rng.uniform(-near, near, q), -rng.uniform(0, 4, q)]
        ys = [b, rng.uniform(-50, 50, q), rng.uniform(-big, big, q), np.round(rng.uniform(-60, 60, q))]
    with np.errstate(invalid="ignore", over="ignore"):
        return np.concatenate(xs).astype(dtype), np.concatenate(ys).astype(dtype)


BINARY = {"atan2": np.arctan2, "pow": np.power, "hypot": np.hypot}
BINARY = {k: v for k, v in BINARY.items() if hasattr(fm, k)}


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_sweep(name, dtype):
    if dtype == np.float64 and not HAVE_LD:
        pytest.skip("needs 80-bit long double as the float64 reference")
    x, y = binary_inputs(name, dtype)
    out = apply(name, x, y)
    assert out.dtype == dtype
    with np.errstate(all="ignore"):
        ref = BINARY[name](
            x.astype(np.float64 if dtype == np.float32 else LD),
            y.astype(np.float64 if dtype == np.float32 else LD),
        )
    check(name, [x, y], out, ref, dtype)


# --------------------------------------------------------------------------------------------
# special values (exact, sign of zero included)
# --------------------------------------------------------------------------------------------

INF, NAN = math.inf, math.nan
SPECIALS = {
    "exp": [(NAN, NAN), (INF, INF), (-INF, 0.0), (0.0, 1.0), (-0.0, 1.0), (1000.0, INF), (-1000.0, 0.0)],
    "exp2": [
        (NAN, NAN),
        (INF, INF),
        (-INF, 0.0),
        (0.0, 1.0),
        (-0.0, 1.0),
        (10.0, 1024.0),
        (-3.0, 0.125),
        (2000.0, INF),
        (-2000.0, 0.0),
    ],
    "expm1": [
        (NAN, NAN),
        (INF, INF),
        (-INF, -1.0),
        (0.0, 0.0),
        (-0.0, -0.0),
        (1000.0, INF),
        (-1000.0, -1.0),
        (1e-30, 1e-30),
        (-1e-30, -1e-30),
    ],
    "log": [(NAN, NAN), (INF, INF), (-INF, NAN), (0.0, -INF), (-0.0, -INF), (-1.0, NAN), (1.0, 0.0)],
    "log2": [
        (NAN, NAN),
        (INF, INF),
        (-INF, NAN),
        (0.0, -INF),
        (-0.0, -INF),
        (-1.0, NAN),
        (1.0, 0.0),
        (8.0, 3.0),
        (0.25, -2.0),
        (2.0**-140, -140.0),
    ],
    "log10": [
        (NAN, NAN),
        (INF, INF),
        (-INF, NAN),
        (0.0, -INF),
        (-0.0, -INF),
        (-1.0, NAN),
        (1.0, 0.0),
        (1000.0, 3.0),
        (0.01, -2.0),
    ],
    "log1p": [
        (NAN, NAN),
        (INF, INF),
        (-INF, NAN),
        (0.0, 0.0),
        (-0.0, -0.0),
        (-1.0, -INF),
        (-2.0, NAN),
        (1e-30, 1e-30),
        (-1e-30, -1e-30),
    ],
    "sin": [(NAN, NAN), (INF, NAN), (-INF, NAN), (0.0, 0.0), (-0.0, -0.0), (1e-30, 1e-30), (-1e-30, -1e-30)],
    "cos": [(NAN, NAN), (INF, NAN), (-INF, NAN), (0.0, 1.0), (-0.0, 1.0), (1e-30, 1.0)],
    "tan": [(NAN, NAN), (INF, NAN), (-INF, NAN), (0.0, 0.0), (-0.0, -0.0), (1e-30, 1e-30), (-1e-30, -1e-30)],
    "tanh": [
        (NAN, NAN),
        (INF, 1.0),
        (-INF, -1.0),
        (0.0, 0.0),
        (-0.0, -0.0),
        (1e-30, 1e-30),
        (30.0, 1.0),
        (-30.0, -1.0),
    ],
    "sigmoid": [(NAN, NAN), (INF, 1.0), (-INF, 0.0), (0.0, 0.5), (-0.0, 0.5), (100.0, 1.0), (-1000.0, 0.0)],
    "sinh": [
        (NAN, NAN),
        (INF, INF),
        (-INF, -INF),
        (0.0, 0.0),
        (-0.0, -0.0),
        (1e-30, 1e-30),
        (1000.0, INF),
        (-1000.0, -INF),
    ],
    "cosh": [(NAN, NAN), (INF, INF), (-INF, INF), (0.0, 1.0), (-0.0, 1.0), (1000.0, INF), (-1000.0, INF)],
    "atan": [
        (NAN, NAN),
        (INF, math.pi / 2),
        (-INF, -math.pi / 2),
        (0.0, 0.0),
        (-0.0, -0.0),
        (1e-30, 1e-30),
        (1.0, math.pi / 4),
        (-1.0, -math.pi / 4),
    ],
    "asin": [
        (NAN, NAN),
        (INF, NAN),
        (2.0, NAN),
        (-1.5, NAN),
        (1.0, math.pi / 2),
        (-1.0, -math.pi / 2),
        (0.0, 0.0),
        (-0.0, -0.0),
        (1e-30, 1e-30),
    ],
    "acos": [
        (NAN, NAN),
        (INF, NAN),
        (2.0, NAN),
        (-1.5, NAN),
        (1.0, 0.0),
        (-1.0, math.pi),
        (0.0, math.pi / 2),
        (-0.0, math.pi / 2),
    ],
    "asinh": [(NAN, NAN), (INF, INF), (-INF, -INF), (0.0, 0.0), (-0.0, -0.0), (1e-30, 1e-30)],
    "acosh": [(NAN, NAN), (INF, INF), (-INF, NAN), (1.0, 0.0), (0.5, NAN), (0.0, NAN)],
    "erf": [(NAN, NAN), (INF, 1.0), (-INF, -1.0), (0.0, 0.0), (-0.0, -0.0), (10.0, 1.0), (-10.0, -1.0)],
    "erfc": [(NAN, NAN), (INF, 0.0), (-INF, 2.0), (0.0, 1.0), (-0.0, 1.0), (30.0, 0.0), (-10.0, 2.0)],
    # mish(-inf) is nan as in torch (-inf * 0); x > 20 is x (softplus's threshold)
    "softplus": [(NAN, NAN), (INF, INF), (-INF, 0.0), (0.0, math.log(2)), (-0.0, math.log(2)),
                 (1e30, 1e30), (-1000.0, 0.0)],
    "mish": [(NAN, NAN), (INF, INF), (-INF, NAN), (0.0, 0.0), (-0.0, -0.0), (30.0, 30.0), (-1000.0, -0.0)],
    # gelu(-inf) is nan as in torch (-inf * 0)
    "gelu": [(NAN, NAN), (INF, INF), (-INF, NAN), (0.0, 0.0), (-0.0, -0.0), (30.0, 30.0), (1e-30, 5e-31)],
    "atanh": [
        (NAN, NAN),
        (1.0, INF),
        (-1.0, -INF),
        (2.0, NAN),
        (-INF, NAN),
        (0.0, 0.0),
        (-0.0, -0.0),
        (1e-30, 1e-30),
    ],
    # hypot: an infinite operand wins over nan (C99)
    "hypot": [(INF, NAN, INF), (NAN, -INF, INF), (NAN, 1.0, NAN), (1.0, NAN, NAN), (0.0, -0.0, 0.0),
              (-3.0, 4.0, 5.0), (1e-45, 0.0, 1e-45), (-INF, 0.0, INF)],
    # atan2(y, x): every signed-zero / infinity quadrant case of C99 (as math.atan2)
    "atan2": [
        (y, x, math.atan2(y, x))
        for y in (0.0, -0.0, 1.0, -1.0, INF, -INF)
        for x in (0.0, -0.0, 2.0, -2.0, INF, -INF)
    ]
    + [(NAN, 1.0, NAN), (1.0, NAN, NAN), (NAN, NAN, NAN), (0.0, NAN, NAN), (INF, NAN, NAN)],
    # pow(x, y): C99 special cases (as math.pow / numpy)
    "pow": [(x, 0.0, 1.0) for x in (NAN, INF, -INF, 0.0, -2.0)]
    + [(x, -0.0, 1.0) for x in (NAN, 3.0)]
    + [(1.0, y, 1.0) for y in (NAN, INF, -INF, 2.5)]
    + [
        (-1.0, INF, 1.0),
        (-1.0, -INF, 1.0),
        (NAN, 1.0, NAN),
        (2.0, NAN, NAN),
        (0.0, -3.0, INF),
        (-0.0, -3.0, -INF),
        (0.0, -2.0, INF),
        (-0.0, -2.0, INF),
        (-0.0, -0.5, INF),
        (0.0, 3.0, 0.0),
        (-0.0, 3.0, -0.0),
        (-0.0, 2.0, 0.0),
        (-0.0, 0.5, 0.0),
        (0.0, -INF, INF),
        (0.5, -INF, INF),
        (-0.5, -INF, INF),
        (2.0, -INF, 0.0),
        (-2.0, -INF, 0.0),
        (0.5, INF, 0.0),
        (-0.5, INF, 0.0),
        (2.0, INF, INF),
        (-2.0, INF, INF),
        (-INF, -3.0, -0.0),
        (-INF, -2.0, 0.0),
        (-INF, -0.5, 0.0),
        (-INF, 3.0, -INF),
        (-INF, 2.0, INF),
        (-INF, 0.5, INF),
        (INF, -1.0, 0.0),
        (INF, 0.5, INF),
        (-2.0, 0.5, NAN),
        (-2.0, -1.5, NAN),
        (-2.0, 3.0, -8.0),
        (-2.0, -3.0, -0.125),
        (-2.0, 2.0, 4.0),
        (-3.0, 1e30, INF),
        (-0.5, 1e30, 0.0),
        (2.0, 3.0, 8.0),
        (4.0, 0.5, 2.0),
        (10.0, -2.0, 0.01),
        (2.0, 1e4, INF),
        (2.0, -1e4, 0.0),
        (-2.0, 1e4, INF),
        (-2.0, -1e4, 0.0),
    ],
}
SPECIAL_CASES = [
    (name, dt, args, want)
    for name, rows in SPECIALS.items()
    if hasattr(fm, name)
    for dt in (np.float32, np.float64)
    for *args, want in rows
]


def _same(got, want):
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1, got) == math.copysign(1, want)


@pytest.mark.parametrize("name,dtype", sorted({(c[0], c[1]) for c in SPECIAL_CASES}, key=str))
def test_special_values(name, dtype):
    rows = [(args, want) for n, dt, args, want in SPECIAL_CASES if n == name and dt == dtype]
    cols = [np.array([args[j] for args, _ in rows], dtype) for j in range(len(rows[0][0]))]
    with np.errstate(all="ignore"):
        want = np.array([w for _, w in rows], dtype)
    got = apply(name, *cols)
    wrong = [
        (tuple(float(c[i]) for c in cols), float(got[i]), float(want[i]))
        for i in range(len(rows))
        if not _same(float(got[i]), float(want[i]))
    ]
    assert not wrong, f"{name} {np.dtype(dtype).name}: (args, got, want) {wrong}"


def test_subnormal_inputs():
    x32 = np.array([1e-45, 1e-40, 1.1754942e-38], np.float32)
    x64 = np.array([5e-324, 1e-310, 2.225073858507201e-308])
    for name in ("log", "log2", "log10"):
        for x, ref, dt in ((x32, x32.astype(np.float64), np.float32), (x64, x64.astype(LD), np.float64)):
            with np.errstate(all="ignore"):
                check(name, [x], apply(name, x), getattr(np, name)(ref), dt)
    for name in ("expm1", "log1p", "sin", "tan", "tanh", "sinh", "atan", "asin", "asinh", "atanh"):
        # f(x) == x for tiny x, subnormals included
        assert (apply(name, x32) == x32).all() and (apply(name, x64) == x64).all()


def test_trig_huge_arguments_float64():
    """Hard cases for the argument reduction (incl. the double closest to a multiple of pi/2)."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 2200
    xs = np.array(
        [
            6381956970095103 * 2.0**797,
            5261692873635770 * 2.0**499,
            2.0**1023 * 1.9999999999999998,
            1e22,
            1e300,
            2.0**40,
            np.nextafter(2.0**40, 0),
            355.0,
            103993.0,
            1.5707963267948966,
        ]
    )
    for name in ("sin", "cos", "tan"):
        ref = np.array([LD(mpmath.nstr(getattr(mpmath, name)(mpmath.mpf(float(v))), 30)) for v in xs])
        check(name, [xs], apply(name, xs), ref, np.float64)


def test_trig_huge_arguments_float32():
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 400
    rng = np.random.default_rng(1)
    xs = np.concatenate(
        [
            np.float32([3.4028235e38, 1e38, 2.0**127, 10680707.0, 16367173.0, 1023.9999, 1024.0]),
            np.exp(rng.uniform(0, 88, 2000)).astype(np.float32),
        ]
    )
    for name in ("sin", "cos", "tan"):
        ref = np.array([float(getattr(mpmath, name)(mpmath.mpf(float(v)))) for v in xs])
        check(name, [xs], apply(name, xs), ref, np.float32)


def test_trig_near_multiples_of_pio2_float32():
    """The hardest float32 Cody-Waite cases: every float32 next to a multiple of pi/2 below
    2^10 (the smallest remainder is 2^-27.8, at x = 252.8982), both signs, through the near
    variants and the full functions (which must agree bitwise below 2^10), against mpmath."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 200
    m = np.float32(np.arange(1, 652) * (np.pi / 2))
    xs = np.concatenate([m, np.nextafter(m, np.float32(0)), np.nextafter(m, np.float32(2048))])
    xs = np.concatenate([xs, -xs, np.float32([1023.99994, -1023.99994])])
    assert (xs == np.uint32(0x437CE5F1).view(np.float32)).any()  # 252.89821, k = 161
    for name in ("sin", "cos"):
        ref = np.array([float(getattr(mpmath, name)(mpmath.mpf(float(v)))) for v in xs])
        y, y_near = apply(name, xs), apply(f"{name}_near", xs)
        np.testing.assert_array_equal(y_near.view(np.int32), y.view(np.int32))
        check(name, [xs], y, ref, np.float32)


def test_trig_reduction_every_exponent_float32():
    """The float32 huge-argument reduction reads a window of 2/pi chosen by the exponent (two
    64-bit words out of four, funnel-shifted): every exponent from the Cody-Waite bound (1024)
    up, the mantissa extremes and random mantissas, and the neighbours of the bound."""
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.prec = 400
    rng = np.random.default_rng(3)
    mants = np.concatenate([[1.0, 2 - 2.0**-23, 1.5], 1 + rng.integers(0, 1 << 23, 5) / 2.0**23])
    xs = np.array([m * 2.0**e for e in range(9, 128) for m in mants], np.float32)
    bound = np.float32(1024.0)
    near = [np.nextafter(bound, np.float32(0)), bound, np.nextafter(bound, np.float32(np.inf))]
    xs = np.concatenate([xs, -xs, np.float32(near)])
    for name in ("sin", "cos", "tan"):
        ref = np.array([float(getattr(mpmath, name)(mpmath.mpf(float(v)))) for v in xs])
        check(name, [xs], apply(name, xs), ref, np.float32)


def test_sigmoid_tails():
    """sigmoid near the exp overflow of e^-x and in the subnormal tail (scaling split), both types."""
    for dt, lo in ((np.float32, -104.0), (np.float64, -746.0)):
        x = [np.linspace(lo, lo + 30, 200_001), np.linspace(-2, 2, 100_001), np.linspace(15, 40, 10_001)]
        x = np.concatenate(x).astype(dt)
        ref = _sigmoid(x.astype(np.float64 if dt == np.float32 else LD))
        check("sigmoid", [x], apply("sigmoid", x), ref, dt)


# --------------------------------------------------------------------------------------------
# vectorisation and other compile targets
# --------------------------------------------------------------------------------------------

_VEC_OP = re.compile(r"= (?:fmul|fadd|fsub|fdiv|select)\b[^<\n]*<(\d+) x (float|double)>")


@pytest.mark.parametrize("name", sorted(set(UNARY) | set(BINARY) | {"gelu"}))
def test_loop_vectorises(name):
    k = kernel(name)
    nargs = getattr(fm, name).__code__.co_argcount
    # float32 hypot and mish compute in float64 by design: their float32 loops run 8 double lanes
    cases = [(np.float32, "double" if name in ("hypot", "mish") else "float", 8), (np.float64, "double", 4)]
    if name in fm.SCALAR_FLOAT64:  # documented math.* fallbacks (none at the moment)
        cases = cases[:1]
    for dt, ty, width in cases:
        a = np.ones(16, dt)
        k(*([a] * nargs), np.empty_like(a))
        sig = next(s for s in k.signatures if s[0].dtype == numba.from_dtype(np.dtype(dt)))
        llvm = k.inspect_llvm(sig)
        widths = {int(w) for w, t in _VEC_OP.findall(llvm) if t == ty}
        assert widths and max(widths) >= width, f"{name} {dt.__name__}: vector widths {sorted(widths)}"


def test_python_fallback_keeps_dtype():
    """The stubs run without JIT (plain calls, NUMBA_DISABLE_JIT=1) and keep the float type."""
    assert abs(fm.exp(np.float32(1.0)) - np.float32(np.e)) <= np.spacing(np.float32(np.e))
    assert isinstance(fm.log(2.0), np.float64)
    for name in fm.__all__:
        f = getattr(fm, name)
        v = 1.5 if name == "acosh" else 0.5
        args32 = [np.float32(v)] * f.__code__.co_argcount
        args64 = [v] * f.__code__.co_argcount
        assert isinstance(f(*args32), np.float32), name
        assert isinstance(f(*args64), np.float64), name
        assert f(*args64) == pytest.approx(float(apply(name, *[np.array([a]) for a in args64])[0]), rel=1e-15)
    assert fm.pow(2.0, 10.0) == 1024.0 and fm.sigmoid(0.0) == 0.5


def test_mixed_argument_types_promote_like_numpy():
    @numba.njit
    def f(x):
        return fm.pow(x, 2), fm.pow(x, 0.5), fm.exp(3), fm.atan2(x, 1)

    got = f(np.float32(3.0))
    (sig,) = f.nopython_signatures
    assert [str(t) for t in sig.return_type] == ["float32", "float64", "float64", "float32"]
    assert (
        got[0] == 9.0 and got[1] == pytest.approx(3**0.5, rel=1e-15) and got[2] == pytest.approx(math.exp(3))
    )


@pytest.mark.skipif(os.environ.get("NUMBA_ENABLE_CUDASIM") == "1", reason="compile_ptx needs the real target")
def test_compiles_for_cuda(monkeypatch):
    cuda = pytest.importorskip("numba.cuda")
    import numba.cuda.dispatcher as cuda_dispatcher
    from numba import types

    class _Sm90:
        compute_capability = (9, 0)

    # Without a driver, compiling the overloads as device functions asks for the current device.
    monkeypatch.setattr(cuda_dispatcher, "get_current_device", lambda: _Sm90())

    def device_fn32(x, y):
        # integer reduction (sin: 64-bit products, funnel shifts), double-word paths (pow, erfc),
        # selects (atan2), float exponent arithmetic (sigmoid, gelu)
        return fm.sin(x) + fm.pow(x, y) + fm.atan2(y, x) + fm.erfc(x) + fm.sigmoid(y) + fm.gelu(x)

    def device_fn64(x, y):
        # table-driven reduction (sin)
        return fm.sin(x) + fm.pow(x, y) + fm.sigmoid(y) + fm.gelu(x)

    for fn, ty in ((device_fn32, types.float32), (device_fn64, types.float64)):
        ptx, resty = cuda.compile_ptx(fn, (ty, ty), device=True, cc=(9, 0))
        assert resty == ty and ".target sm_90" in ptx and "fma.rn" in ptx


# --------------------------------------------------------------------------------------------
# exhaustive float32 (slow)
# --------------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_float32_exhaustive(name):
    ref32 = UNARY[name][0]
    worst = 0.0
    for start in range(0, 1 << 32, 1 << 24):
        x = np.arange(start, start + (1 << 24), dtype=np.uint64).astype(np.uint32).view(np.float32)
        with np.errstate(all="ignore"):
            ref = ref32(x.astype(np.float64))
        worst = max(worst, check(name, [x], apply(name, x), ref, np.float32, vacuous_ok=True))
    assert worst > 0
    print(f"{name} float32 exhaustive max ulp {worst:.3f}")
