"""Creation ops vs torch: ranges (bit-exact values), eye, *_like, new_*, out=, complex/polar."""

import math
import warnings

import numba
import numpy as np
import pytest
import torch

import jtorch

from helpers import raises_like, same

F32, F64, I64 = (jtorch.float32, torch.float32), (jtorch.float64, torch.float64), \
    (jtorch.int64, torch.int64)


# -- arange ----------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [(5,), (1, 4), (10, 0, -3), (-7, 8, 3), (5, 5), (0, 0),
                                  (True,), (0, 5, True)])
def test_arange_integer_args_give_int64(args):
    same(jtorch.arange(*args), torch.arange(*args))


@pytest.mark.parametrize("args", [(5.0,), (0, 2, 0.1), (0, 100, 0.1), (-3.3, 50, 0.37),
                                  (0.5, -20, -0.3), (1, 1000, 0.7), (1e-3, 0.5, 1e-3),
                                  (2.5, 2.5, 1.0), (0, 1, 0.3), (-1, 1, 2 / 3)])
@pytest.mark.parametrize("dt", [None, F32, F64])
def test_arange_float_values_are_bit_exact(args, dt):
    kw = {} if dt is None else {"dtype": dt[0]}
    tkw = {} if dt is None else {"dtype": dt[1]}
    same(jtorch.arange(*args, **kw), torch.arange(*args, **tkw))


def test_arange_random_float_ranges_bit_exact():
    rng = np.random.default_rng(0)
    for _ in range(60):
        s = float(rng.uniform(-100, 100))
        st = float(rng.choice([-1, 1]) * 10 ** rng.uniform(-3, 1))
        e = s + st * int(rng.integers(0, 700))
        for jd, td in (F32, F64):
            same(jtorch.arange(s, e, st, dtype=jd), torch.arange(s, e, st, dtype=td))


def test_arange_large_parallel_matches_torch():
    n_threads = torch.get_num_threads()
    torch.set_num_threads(numba.get_num_threads())  # ATen's chunking shapes the rounding
    try:
        for jd, td in (F32, F64):
            same(jtorch.arange(0.3, 70000 * 0.37, 0.37, dtype=jd),
                 torch.arange(0.3, 70000 * 0.37, 0.37, dtype=td))
        same(jtorch.arange(-5, 100000, 3), torch.arange(-5, 100000, 3))
    finally:
        torch.set_num_threads(n_threads)


def test_arange_dtype_inference_and_conversion():
    same(jtorch.arange(0, 5, 1.0), torch.arange(0, 5, 1.0))
    same(jtorch.arange(jtorch.tensor(3)), torch.arange(torch.tensor(3)))
    same(jtorch.arange(jtorch.tensor(3.0, dtype=jtorch.float64)),
         torch.arange(torch.tensor(3.0, dtype=torch.float64)))
    same(jtorch.arange(np.int32(4)), torch.arange(4))
    same(jtorch.arange(end=4), torch.arange(end=4))
    same(jtorch.arange(start=1, end=4), torch.arange(start=1, end=4))
    prev = jtorch.get_default_dtype()
    jtorch.set_default_dtype(jtorch.float64)
    try:
        assert jtorch.arange(0.0, 1.0, 0.25).dtype is jtorch.float64
    finally:
        jtorch.set_default_dtype(prev)


@pytest.mark.parametrize("args,jd,td", [
    ((0.5, 5.5), jtorch.int64, torch.int64),        # truncated start/end
    ((-1.5, 2), jtorch.int64, torch.int64),
    ((0.5, 5.7, 1.5), jtorch.int32, torch.int32),   # size in double, step truncated
    ((0, 5, 0.5), jtorch.int32, torch.int32),       # step truncated to 0: all zeros
    ((-5, 5, 2), jtorch.uint8, torch.uint8),        # wraps
    ((0, 10, 3), jtorch.int16, torch.int16),
    ((0, 10, 3), jtorch.float16, torch.float16),
    ((-2**63, -2**63 + 3), jtorch.int64, torch.int64),
    ((0, 10, 2**62), jtorch.int64, torch.int64),
])
def test_arange_explicit_dtypes(args, jd, td):
    same(jtorch.arange(*args, dtype=jd), torch.arange(*args, dtype=td))


@pytest.mark.parametrize("args", [(-2.5, 3.1, 0.7), (0, 1, 0.1), (-90.3, 60.2, 0.37),
                                  (70000 * 0.01, 0, -0.01), (0, 65504, 7.3)])
def test_arange_float16_bit_exact(args):
    same(jtorch.arange(*args, dtype=jtorch.float16), torch.arange(*args, dtype=torch.float16))


@pytest.mark.parametrize("args,kw", [
    ((0, 1, 0), {}), ((0, -1), {}), ((0, 10, -1), {}), ((10, 0, 1.5), {}),
    ((0, math.inf), {}), ((0, math.nan), {}), ((-math.inf, 0), {}), ((0, 1, 1e-20), {}),
    ((0, 5, 0.5), {"dtype": "int64"}), ((0, 5), {"dtype": "bool"}),
    ((0, 5), {"dtype": "complex64"}), ((2**63,), {}),
])
def test_arange_errors(args, kw):
    jkw = {k: getattr(jtorch, v) for k, v in kw.items()}
    tkw = {k: getattr(torch, v) for k, v in kw.items()}
    raises_like(lambda: jtorch.arange(*args, **jkw), lambda: torch.arange(*args, **tkw))


def test_arange_argument_type_errors():
    raises_like(lambda: jtorch.arange(jtorch.ones(2)), lambda: torch.arange(torch.ones(2)))
    raises_like(lambda: jtorch.arange("3"), lambda: torch.arange("3"))


def test_arange_out():
    out = jtorch.empty(3)
    r = jtorch.arange(3, out=out)  # out's dtype wins over int inference
    assert r is out
    same(out, torch.arange(3, out=torch.empty(3)))
    out = jtorch.empty(2)
    with pytest.warns(UserWarning, match="does not match the computed number of elements 3"):
        jtorch.arange(3, out=out)
    same(out, torch.arange(3.0))
    out = jtorch.empty(2, 3)
    jtorch.arange(6, out=out)  # same numel: keeps its shape
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(out, torch.arange(6, out=torch.empty(2, 3)))
    raises_like(lambda: jtorch.arange(0, 3, out=jtorch.empty(3, dtype=jtorch.int64),
                                      dtype=jtorch.float32),
                lambda: torch.arange(0, 3, out=torch.empty(3, dtype=torch.int64),
                                     dtype=torch.float32))
    assert jtorch.arange(0, 3, out=jtorch.empty(0, dtype=jtorch.int64)).tolist() == [0, 1, 2]


def test_arange_requires_grad():
    assert jtorch.arange(3.0, requires_grad=True).requires_grad
    raises_like(lambda: jtorch.arange(3, requires_grad=True),
                lambda: torch.arange(3, requires_grad=True))


# -- linspace / logspace ---------------------------------------------------------------------

@pytest.mark.parametrize("steps", [0, 1, 2, 3, 5, 17, 100, 1001])
@pytest.mark.parametrize("se", [(-1.3, 7.9), (0, 1), (3, -2.2), (1e-3, 5e3), (2, 2)])
@pytest.mark.parametrize("dt", [F32, F64])
def test_linspace_bit_exact(steps, se, dt):
    same(jtorch.linspace(*se, steps, dtype=dt[0]), torch.linspace(*se, steps, dtype=dt[1]))


def test_linspace_random_and_large_bit_exact():
    rng = np.random.default_rng(1)
    for _ in range(40):
        s, e = rng.uniform(-100, 100, 2).tolist()
        n = int(rng.integers(2, 3000))
        for jd, td in (F32, F64):
            same(jtorch.linspace(s, e, n, dtype=jd), torch.linspace(s, e, n, dtype=td))
    same(jtorch.linspace(-3.1, 7.7, 100000), torch.linspace(-3.1, 7.7, 100000))


@pytest.mark.parametrize("args,jd,td", [
    ((0, 10, 4), jtorch.int64, torch.int64), ((0, 10, 4), jtorch.int32, torch.int32),
    ((10, 0, 4), jtorch.int64, torch.int64), ((0.7, 10.9, 4), jtorch.int64, torch.int64),
    ((-7, 300, 33), jtorch.int16, torch.int16), ((0, 255, 7), jtorch.uint8, torch.uint8),
])
def test_linspace_integer_dtypes(args, jd, td):
    same(jtorch.linspace(*args, dtype=jd), torch.linspace(*args, dtype=td))


def test_linspace_defaults_tensors_complex_half():
    same(jtorch.linspace(0, 3, 4), torch.linspace(0, 3, 4))
    same(jtorch.linspace(jtorch.tensor(0.0), 1, 3), torch.linspace(torch.tensor(0.0), 1, 3))
    same(jtorch.linspace(0, 1, jtorch.tensor(3)), torch.linspace(0, 1, torch.tensor(3)))
    for args, kw in (((0j, 1 + 1j, 5), {}), ((1, 2, 3), {"dtype": "complex64"}),
                     ((-1 + 2j, 3 - 1j, 7), {"dtype": "complex128"})):
        j = jtorch.linspace(*args, **{k: getattr(jtorch, v) for k, v in kw.items()})
        t = torch.linspace(*args, **{k: getattr(torch, v) for k, v in kw.items()})
        assert str(j.dtype) == str(t.dtype)
        np.testing.assert_allclose(j.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)
    for s, e, n in ((-1.3, 7.9, 50), (0, 1, 3), (-40.7, 33.1, 2999), (5, -5, 4)):
        same(jtorch.linspace(s, e, n, dtype=jtorch.float16),
             torch.linspace(s, e, n, dtype=torch.float16))


def test_linspace_out_and_errors():
    out = jtorch.empty(2, 2)
    jtorch.linspace(0, 1, 3, out=out)
    same(out, torch.linspace(0, 1, 3))
    out = jtorch.empty(3, dtype=jtorch.float64)
    jtorch.linspace(0, 1, 3, out=out)
    same(out, torch.linspace(0, 1, 3, dtype=torch.float64))
    raises_like(lambda: jtorch.linspace(0, 1, -1), lambda: torch.linspace(0, 1, -1))
    raises_like(lambda: jtorch.linspace(0, 1, 5, dtype=jtorch.bool),
                lambda: torch.linspace(0, 1, 5, dtype=torch.bool))
    for s, e in ((jtorch.zeros(1), 1), (0, jtorch.ones(2)), (jtorch.ones(2), jtorch.ones(2))):
        ts = torch.from_numpy(s.numpy()) if isinstance(s, jtorch.Tensor) else s
        te = torch.from_numpy(e.numpy()) if isinstance(e, jtorch.Tensor) else e
        raises_like(lambda s=s, e=e: jtorch.linspace(s, e, 3),
                    lambda ts=ts, te=te: torch.linspace(ts, te, 3))
    with pytest.raises(TypeError):
        jtorch.linspace(0, 1, 2.5)


@pytest.mark.parametrize("base", [10.0, 2.0, 0.5, math.e, 3.3])
@pytest.mark.parametrize("dt", [F32, F64])
def test_logspace_bit_exact(base, dt):
    for s, e, n in ((-5, 5, 11), (0, 2, 3), (4.2, -3.4, 215), (1.03, 3.03, 126), (-2.3, 3.1, 39)):
        same(jtorch.logspace(s, e, n, base=base, dtype=dt[0]),
             torch.logspace(s, e, n, base=base, dtype=dt[1]))


def test_logspace_special_cases():
    same(jtorch.logspace(0, 2, 3), torch.logspace(0, 2, 3))
    same(jtorch.logspace(0, 2, 1), torch.logspace(0, 2, 1))
    same(jtorch.logspace(0, 2, 0), torch.logspace(0, 2, 0))
    same(jtorch.logspace(0, 2, 3, base=-2), torch.logspace(0, 2, 3, base=-2))
    same(jtorch.logspace(0, 2, 3, dtype=jtorch.int64), torch.logspace(0, 2, 3, dtype=torch.int64))
    same(jtorch.logspace(0, 3, 4, base=2, dtype=jtorch.int32),
         torch.logspace(0, 3, 4, base=2, dtype=torch.int32))
    raises_like(lambda: jtorch.logspace(jtorch.ones(2), 2, 3),
                lambda: torch.logspace(torch.ones(2), 2, 3))


# -- eye ------------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [(3,), (2, 3), (4, 2), (0,), (0, 3), (1, 1)])
@pytest.mark.parametrize("dt", [F32, I64, (jtorch.bool, torch.bool), F64])
def test_eye(args, dt):
    same(jtorch.eye(*args, dtype=dt[0]), torch.eye(*args, dtype=dt[1]))


def test_eye_errors_and_out():
    raises_like(lambda: jtorch.eye(-1), lambda: torch.eye(-1))
    raises_like(lambda: jtorch.eye(2, -1), lambda: torch.eye(2, -1))
    raises_like(lambda: jtorch.eye(2.5), lambda: torch.eye(2.5))
    same(jtorch.eye(jtorch.tensor(2)), torch.eye(torch.tensor(2)))
    same(jtorch.eye(2, m=3), torch.eye(2, m=3))
    out = jtorch.empty(5)
    assert jtorch.eye(2, 3, out=out) is out
    same(out, torch.eye(2, 3))
    assert jtorch.eye(2, requires_grad=True).requires_grad


# -- constant fills with out= ----------------------------------------------------------------

def test_factories_out_and_size_kwarg():
    out = jtorch.empty(6)
    assert jtorch.zeros(2, 3, out=out) is out
    same(out, torch.zeros(2, 3))
    out = jtorch.empty(2, dtype=jtorch.int64)
    jtorch.ones(2, out=out)
    same(out, torch.ones(2, out=torch.empty(2, dtype=torch.int64)))
    out = jtorch.empty(2)
    jtorch.full((2,), 3, out=out)
    same(out, torch.full((2,), 3, out=torch.empty(2)))
    out = jtorch.empty(2, 3)
    jtorch.zeros(2, out=out)
    same(out, torch.zeros(2))
    raises_like(lambda: jtorch.ones(3, out=jtorch.empty(3), dtype=jtorch.int64),
                lambda: torch.ones(3, out=torch.empty(3), dtype=torch.int64))
    raises_like(lambda: jtorch.full((2,), 3, out=jtorch.empty(2), dtype=jtorch.int64),
                lambda: torch.full((2,), 3, out=torch.empty(2), dtype=torch.int64))
    same(jtorch.zeros(size=(2, 3)), torch.zeros(size=(2, 3)))
    same(jtorch.ones(size=[2]), torch.ones(size=[2]))
    assert jtorch.empty(size=(2,)).shape == (2,)
    same(jtorch.full((2,), jtorch.tensor(2.0)), torch.full((2,), torch.tensor(2.0)))
    same(jtorch.full((2,), 1 + 2j), torch.full((2,), 1 + 2j))
    raises_like(lambda: jtorch.zeros(2, dtype=jtorch.int64, requires_grad=True),
                lambda: torch.zeros(2, dtype=torch.int64, requires_grad=True))
    assert jtorch.ones(2, requires_grad=True).requires_grad


def test_factory_out_noncontiguous():
    base = jtorch.zeros(6)
    view = jtorch.from_numpy(base.numpy()[::2])
    jtorch.ones(3, out=view)
    assert base.tolist() == [1, 0, 1, 0, 1, 0]


# -- *_like, new_*, empty_strided ------------------------------------------------------------

def _pair(arr):
    return jtorch.from_numpy(arr.copy()), torch.from_numpy(arr.copy())


@pytest.mark.parametrize("view", [lambda a: a, lambda a: a.T, lambda a: a[:, :2],
                                  lambda a: a.transpose(2, 0, 1)[:, :, None] if a.ndim == 3
                                  else a[None]])
def test_like_preserves_dense_strides(view):
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    j = jtorch.from_numpy(view(base.copy()))
    t = torch.from_numpy(view(base.copy()))
    assert t.stride() == j.stride()
    for fn in ("empty_like", "zeros_like", "ones_like", "rand_like", "randn_like"):
        r, s = getattr(jtorch, fn)(j), getattr(torch, fn)(t)
        assert r.stride() == s.stride() and tuple(r.shape) == tuple(s.shape), fn
    same(jtorch.ones_like(j), torch.ones_like(t))
    same(jtorch.full_like(j, 7), torch.full_like(t, 7))


def test_like_dtypes():
    ji, ti = _pair(np.ones(3, np.int32))
    same(jtorch.zeros_like(ji), torch.zeros_like(ti))
    same(jtorch.full_like(ji, 2.7), torch.full_like(ti, 2.7))
    same(jtorch.full_like(jtorch.ones(2), 2, dtype=jtorch.int64),
         torch.full_like(torch.ones(2), 2, dtype=torch.int64))
    same(jtorch.ones_like(jtorch.ones(2), dtype=jtorch.bool),
         torch.ones_like(torch.ones(2), dtype=torch.bool))
    same(jtorch.full_like(jtorch.ones(2), True), torch.full_like(torch.ones(2), True))
    same(jtorch.zeros_like(jtorch.ones(0, 3)), torch.zeros_like(torch.ones(0, 3)))
    same(jtorch.ones_like(jtorch.tensor(3.0)), torch.ones_like(torch.tensor(3.0)))
    assert jtorch.empty_like(ji).dtype is jtorch.int32
    assert jtorch.zeros_like(jtorch.ones(2), requires_grad=True).requires_grad
    raises_like(lambda: jtorch.zeros_like(jtorch.ones(2), dtype=jtorch.int64, requires_grad=True),
                lambda: torch.zeros_like(torch.ones(2), dtype=torch.int64, requires_grad=True))


def test_new_factories():
    j, t = jtorch.ones(2, dtype=jtorch.int32), torch.ones(2, dtype=torch.int32)
    same(j.new_zeros(3), t.new_zeros(3))
    same(j.new_zeros((2, 3)), t.new_zeros((2, 3)))
    same(j.new_ones(2, 3, dtype=jtorch.float64), t.new_ones(2, 3, dtype=torch.float64))
    same(j.new_ones(size=(2,)), t.new_ones(size=(2,)))
    same(j.new_full((2,), 3.5), t.new_full((2,), 3.5))
    same(j.new_zeros(jtorch.Size([2, 2])), t.new_zeros(torch.Size([2, 2])))
    e = j.new_empty(2, 3)
    assert e.shape == (2, 3) and e.dtype is jtorch.int32
    assert jtorch.ones(2).new_zeros(2, requires_grad=True).requires_grad


def test_empty_strided():
    e = jtorch.empty_strided((2, 3), (1, 2))
    assert e.stride() == (1, 2) and e.shape == (2, 3)
    assert jtorch.empty_strided((2, 0), (1, 1)).numel() == 0
    raises_like(lambda: jtorch.empty_strided((2, 3), (1,)), lambda: torch.empty_strided((2, 3), (1,)))
    raises_like(lambda: jtorch.empty_strided((2, 3), (-1, 2)),
                lambda: torch.empty_strided((2, 3), (-1, 2)))


# -- complex / polar -------------------------------------------------------------------------

def test_complex_and_polar():
    rng = np.random.default_rng(0)
    for dt in (np.float32, np.float64):
        a, b = rng.standard_normal((2, 3)).astype(dt), rng.standard_normal(3).astype(dt)
        (ja, ta), (jb, tb) = _pair(a), _pair(b)
        same(jtorch.complex(ja, jb), torch.complex(ta, tb))
        jt, tt = jtorch.from_numpy(a.T), torch.from_numpy(a.T)  # non-contiguous parts
        assert not jt._a.flags.c_contiguous
        same(jtorch.complex(jt, jt), torch.complex(tt, tt))
        r = jtorch.polar(jtorch.from_numpy(np.abs(a)), ja)
        s = torch.polar(torch.from_numpy(np.abs(a)), ta)
        assert str(r.dtype) == str(s.dtype)
        np.testing.assert_allclose(r.numpy(), s.numpy(), rtol=1e-6, atol=1e-6)
    same(jtorch.complex(jtorch.tensor(1.0), jtorch.tensor(2.0)),
         torch.complex(torch.tensor(1.0), torch.tensor(2.0)))
    raises_like(lambda: jtorch.complex(jtorch.ones(2), jtorch.zeros(2, dtype=jtorch.float64)),
                lambda: torch.complex(torch.ones(2), torch.zeros(2, dtype=torch.float64)))
    raises_like(lambda: jtorch.complex(jtorch.ones(2, dtype=jtorch.int64), jtorch.ones(2, dtype=jtorch.int64)),
                lambda: torch.complex(torch.ones(2, dtype=torch.int64), torch.ones(2, dtype=torch.int64)))
    raises_like(lambda: jtorch.polar(jtorch.ones(2), jtorch.ones(2, dtype=jtorch.float64)),
                lambda: torch.polar(torch.ones(2), torch.ones(2, dtype=torch.float64)))
