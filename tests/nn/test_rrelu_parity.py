"""rrelu in training draws torch's slopes: after the same seed, ``F.rrelu``, ``rrelu_``,
``nn.RReLU`` and ``torch.rrelu``/``torch.rrelu_`` give torch's values bit for bit, and leave the
generator where torch leaves it (one 64-bit draw per element <= 0, none for the others)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch

_BITS = {np.dtype(np.float32): np.uint32, np.dtype(np.float64): np.uint64}


def _np(t) -> np.ndarray:
    t = t.detach()
    if str(t.dtype) == "torch.bfloat16":  # exact in float32
        t = t.float()
    return t.numpy()


def _same(a, b) -> None:
    """Bitwise equal values (nan payloads and signed zeros included), same shape and dtype."""
    assert str(a.dtype) == str(b.dtype) and tuple(a.shape) == tuple(b.shape)
    x, y = _np(a), _np(b)
    np.testing.assert_array_equal(x.view(_BITS[x.dtype]), y.view(_BITS[y.dtype]))


def _both(make, seed: int = 7):
    torch.manual_seed(seed)
    jtorch.manual_seed(seed)
    r = make(torch), make(jtorch)
    np.testing.assert_array_equal(torch.rand(6).numpy(), jtorch.rand(6).numpy())  # the stream
    return r


def _data(shape, seed: int = 0, sign: int = 0) -> np.ndarray:
    a = np.random.default_rng(seed).standard_normal(shape)
    return np.abs(a) * sign if sign else a


SHAPES = {
    "0d": lambda lib, d: lib.tensor(-1.5, dtype=d),
    "0d_positive": lambda lib, d: lib.tensor(2.0, dtype=d),
    "empty": lambda lib, d: lib.zeros(0, 3, dtype=d),
    "mixed": lambda lib, d: lib.tensor(_data((3, 4, 5)), dtype=d),
    "long": lambda lib, d: lib.tensor(_data(1500), dtype=d),
    "all_positive": lambda lib, d: lib.tensor(_data((4, 6), sign=1), dtype=d),
    "all_negative": lambda lib, d: lib.tensor(_data((4, 6), sign=-1), dtype=d),
    "transposed": lambda lib, d: lib.tensor(_data((5, 7)), dtype=d).t(),
    "strided": lambda lib, d: lib.tensor(_data((6, 9)), dtype=d)[::2, 1::3],
    "expanded": lambda lib, d: lib.tensor(_data((3, 1)), dtype=d).expand(3, 4),
    "specials": lambda lib, d: lib.tensor([0.0, -0.0, float("nan"), float("inf"), -float("inf"),
                                           -1e-30, 3.0, -2.0], dtype=d),
}
DTYPES = ["float32", "float64", "bfloat16"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_rrelu_training_matches_torch_bitwise(shape, dtype):
    make = SHAPES[shape]
    t, j = _both(lambda lib: lib.rrelu(make(lib, getattr(lib, dtype)), training=True))
    _same(t, j)
    assert j.is_contiguous()  # torch's result is contiguous (LEGACY_CONTIGUOUS_MEMORY_FORMAT)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower,upper", [(0.1, 0.3), (-0.5, 2.0), (0.25, 0.25), (0.0, 1.0),
                                         (1.0 / 3, 0.9)])
def test_functional_and_module_with_custom_bounds(lower, upper, dtype):
    def run(lib):
        d = getattr(lib, dtype)
        x = lib.tensor(_data((8, 16), seed=1), dtype=d)
        a = lib.nn.functional.rrelu(x, lower, upper, True)
        m = lib.nn.RReLU(lower, upper).train()
        b = m(x)
        c = lib.nn.RReLU(lower, upper, inplace=True).train()(x.clone())
        return a, b, c

    for t, j in zip(*_both(run)):
        _same(t, j)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", ["mixed", "transposed", "strided", "0d", "all_positive"])
def test_in_place_forms_match_torch(shape, dtype):
    make = SHAPES[shape]

    def run(lib):
        x = make(lib, getattr(lib, dtype)).clone() if shape in ("transposed", "strided") else \
            make(lib, getattr(lib, dtype))
        if shape == "transposed":
            x = x.t().clone().t()  # a non-contiguous tensor with storage of its own
        y = lib.rrelu_(x, training=True)
        assert y is x
        z = make(lib, getattr(lib, dtype)).clone()
        w = lib.nn.functional.rrelu(z, training=True, inplace=True)
        assert w is z
        return x, z

    for t, j in zip(*_both(run)):
        _same(t, j)


def test_all_positive_input_draws_nothing():
    x = jtorch.rand(50) + 0.5
    jtorch.manual_seed(3)
    before = jtorch.get_rng_state()
    y = jtorch.rrelu(x, training=True)
    assert bool((y == x).all())
    assert np.array_equal(jtorch.get_rng_state().numpy(), before.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_explicit_generator(dtype):
    def run(lib):
        d = getattr(lib, dtype)
        g = lib.Generator().manual_seed(11)
        x = lib.tensor(_data(300, seed=2), dtype=d)
        a = lib.rrelu(x, 0.2, 0.4, True, generator=g)
        b = lib.rrelu_(x.clone(), 0.2, 0.4, True, generator=g)
        return a, b, lib.rand(4, generator=g)  # the given generator moved as torch's did

    t, j = _both(run)
    for a, b in zip(t, j):
        _same(a, b)
    with pytest.raises(TypeError, match=r"rrelu\(\): argument 'generator' must be"):
        jtorch.rrelu(jtorch.ones(2), training=True, generator=5)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("inplace", [False, True])
def test_gradient_is_grad_times_noise(dtype, inplace):
    def run(lib):
        d = getattr(lib, dtype)
        x = lib.tensor(_data((6, 7), seed=4), dtype=d, requires_grad=True)
        g = lib.tensor(_data((6, 7), seed=5), dtype=d)
        if inplace:
            y = lib.rrelu_(x * 1, 0.1, 0.6, training=True)
        else:
            y = lib.nn.functional.rrelu(x, 0.1, 0.6, training=True)
        y.backward(g)
        return y, x.grad

    (ty, tg), (jy, jg) = _both(run)
    _same(ty, jy)
    _same(tg, jg)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradient_through_a_transposed_input(dtype):
    def run(lib):
        d = getattr(lib, dtype)
        x = lib.tensor(_data((5, 4), seed=6), dtype=d, requires_grad=True)
        y = lib.rrelu(x.t(), training=True)
        (y * lib.arange(20, dtype=d).reshape(4, 5)).sum().backward()
        return y, x.grad

    for t, j in zip(*_both(run)):
        _same(t, j)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
def test_eval_mode_is_leaky_relu_with_the_mean_slope(dtype):
    def run(lib):
        d = getattr(lib, dtype)
        x = lib.tensor(_data((4, 5), seed=8), dtype=d)
        a = lib.nn.functional.rrelu(x, 0.1, 0.5, training=False)
        b = lib.nn.RReLU(0.2, 0.3).eval()(x)
        c = lib.rrelu(x)
        return a, b, c

    torch.manual_seed(0)
    jtorch.manual_seed(0)
    before = jtorch.get_rng_state()
    t, j = run(torch), run(jtorch)
    assert np.array_equal(jtorch.get_rng_state().numpy(), before.numpy())
    for a, b in zip(t, j):
        assert str(a.dtype) == str(b.dtype)
        np.testing.assert_array_equal(a.float().numpy(), b.float().numpy())


def _error(fn, lib):
    try:
        fn(lib)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e)
    return None


ERRORS = {
    "half": lambda lib: lib.rrelu(lib.ones(3, dtype=lib.float16), training=True),
    "long": lambda lib: lib.rrelu(lib.ones(3, dtype=lib.int64), training=True),
    "bool": lambda lib: lib.nn.functional.rrelu(lib.ones(3, dtype=lib.bool), training=True),
    "leaf": lambda lib: lib.rrelu_(lib.ones(3, requires_grad=True), training=True),
    "leaf_functional": lambda lib: lib.nn.functional.rrelu(lib.ones(3, requires_grad=True),
                                                          training=True, inplace=True),
    "order": lambda lib: lib.rrelu(-lib.ones(3), 0.5, 0.1, training=True),
    "order_eval": lambda lib: lib.rrelu(-lib.ones(3), 0.5, 0.1, training=False),
    "lower_inf": lambda lib: lib.rrelu(-lib.ones(3), -float("inf"), 0.1, training=True),
    "upper_nan": lambda lib: lib.rrelu(-lib.ones(3), 0.1, float("nan"), training=False),
    "float_overflow": lambda lib: lib.rrelu(lib.ones(3), -1e39, 0.1, training=True),
    "double_range": lambda lib: lib.rrelu(-lib.ones(3, dtype=lib.float64), -1e308, 1e308,
                                          training=True),
}


@pytest.mark.parametrize("case", list(ERRORS))
def test_errors_as_torch(case):
    torch.manual_seed(1)
    jtorch.manual_seed(1)
    t = _error(ERRORS[case], torch)
    j = _error(ERRORS[case], jtorch)
    assert t is not None and j == t
    np.testing.assert_array_equal(torch.rand(3).numpy(), jtorch.rand(3).numpy())  # no draws


def test_double_range_overflow_with_positive_input_draws_nothing():
    def run(lib):
        return lib.rrelu(lib.ones(3, dtype=lib.float64), -1e308, 1e308, training=True)

    t, j = _both(run)
    _same(t, j)
