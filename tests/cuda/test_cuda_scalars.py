"""``cuda.scalars``: the OpDefs' scalar functions rebuilt with CUDA twins for what Numba's CUDA
target does not lower. The copies run on the CPU here (the twins' CPU forms: the NumPy function
itself for the libdevice twins; the very code CUDA compiles for signbit and max/min), so
these checks need neither a GPU nor the simulator."""

import math

import numpy as np
import pytest

import jtorch  # noqa: F401  (registers the ops)
from jtorch.kernels import registry, special_math
from jtorch.kernels.cuda import scalars

NAN = math.nan
EDGES = [NAN, -NAN, math.inf, -math.inf, 0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 3.0, -7.25]


def _bits(v):
    """A value's bits (nan as one value), for comparisons that see -0.0 and nan."""
    v = np.asarray(v)
    if v.dtype.kind != "f":
        return v.item()
    return "nan" if np.isnan(v) else v.view(f"u{v.dtype.itemsize}").item()


def test_unaffected_functions_come_back_unchanged():
    for name in ("exp", "add", "sigmoid", "atan2", "where", "maximum"):
        cpu = registry.scalar_of(name)
        assert scalars.substitute(cpu) is cpu, name


def test_cpu_functions_are_untouched():
    """The copies have their own globals: the CPU scalar functions and helpers keep NumPy."""
    for name in ("floor", "fmod", "digamma", "hardtanh"):
        scalars.substitute(registry.scalar_of(name))
    assert registry.get("floor").scalar.__globals__["np"] is np
    assert special_math._digamma64.py_func.__globals__["np"] is np
    assert "max" not in registry.get("hardtanh").scalar.__globals__


def test_nested_helpers_are_rebuilt():
    """digamma's lambda -> sp.digamma -> _digamma64 -> np.trunc: each level is a copy."""
    fn = scalars.substitute(registry.scalar_of("digamma")).py_func
    sp = fn.__globals__["sp"]
    assert sp is not special_math and sp.digamma is not special_math.digamma
    inner = sp.digamma.py_func.__globals__["_digamma64"].py_func.__globals__
    assert inner["np"].trunc is scalars.TWINS[np.trunc]
    assert sp.lgamma is special_math.lgamma  # reaches no twin: the CPU's own


@pytest.mark.parametrize("name", ["floor", "ceil", "trunc", "round", "frac", "signbit", "hardsigmoid",
                                  "hardswish", "digamma"])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_unary_copies_match_cpu(name, dt):
    cpu, cuda = registry.scalar_of(name), scalars.scalar_of(name)
    assert cuda is not cpu
    for v in EDGES:
        x = dt(v) if v == v else (-dt(NAN) if math.copysign(1, v) < 0 else dt(NAN))
        with np.errstate(all="ignore"):
            assert _bits(cuda(x)) == _bits(cpu(x)), (name, x)


@pytest.mark.parametrize("name", ["fmod", "remainder", "floor_divide", "div_trunc", "nextafter", "hypot",
                                  "logaddexp", "logaddexp2"])
@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_binary_copies_match_cpu(name, dt):
    cpu, cuda = registry.scalar_of(name), scalars.scalar_of(name)
    assert cuda is not cpu
    vals = [dt(v) for v in (NAN, math.inf, -math.inf, 0.0, -0.0, 1.5, -1.5, 2.0, -5.25)]
    with np.errstate(all="ignore"):
        for x in vals:
            for y in vals:
                if y == 0 and name in ("remainder", "floor_divide", "div_trunc"):
                    continue  # njit's own error model raises on these, CUDA's does not
                assert _bits(cuda(x, y)) == _bits(cpu(x, y)), (name, x, y)


def test_signbit_twin():
    f = scalars.scalar_of("signbit")
    for dt in (np.float32, np.float64):
        assert [f(dt(v)) for v in (-0.0, 0.0, -1.0, math.inf, -math.inf)] == [True, False, True, False, True]
        assert f(-dt(NAN)) and not f(dt(NAN))


def test_max_min_twins_keep_cpu_nan_semantics():
    """Numba's CPU max(a, b) is ``b if b > a else a``: a nan first argument wins, a nan second
    one loses (CUDA's own float max, libdevice fmax, drops nans either way)."""
    cpu = registry.scalar_of("hardtanh")
    cuda = scalars.scalar_of("hardtanh")
    for dt in (np.float32, np.float64):
        for x in (NAN, -0.0, 0.0, -3.0, 0.25, 3.0, math.inf):
            assert _bits(cuda(dt(x), dt(-0.5), dt(0.5))) == _bits(cpu(dt(x), dt(-0.5), dt(0.5)))
        assert _bits(cuda(dt(0.25), dt(NAN), dt(0.5))) == _bits(cpu(dt(0.25), dt(NAN), dt(0.5)))
    assert scalars.maximum(NAN, 1.0) != scalars.maximum(NAN, 1.0)
    assert scalars.maximum(1.0, NAN) == 1.0 and scalars.minimum(1.0, NAN) == 1.0
    assert math.copysign(1, scalars.maximum(-0.0, 0.0)) == -1  # ties keep the first
    assert math.copysign(1, scalars.minimum(0.0, -0.0)) == 1
    assert cuda(np.int64(7), np.int64(-2), np.int64(3)) == 3  # integer hardtanh
