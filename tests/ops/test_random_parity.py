"""After the same seed, jtorch's samplers give torch's CPU numbers bit for bit: the MT19937
engine, its 32/64-bit draws and the transforms of torch's CPU kernels (uniform, Box-Muller
normals in their three paths, integer ranges, permutations, bernoulli), and what is built on
them: dropout masks and the initial weights of nn modules."""

from __future__ import annotations

import itertools
import types

import numpy as np
import pytest
import torch
from helpers import intel_cpu
from hypothesis import given, settings
from hypothesis import strategies as st

import jtorch
from jtorch.kernels.cpu import mt19937 as mt
from jtorch.kernels.cpu import random as jrandom

# torch's float32 normal_fill is avx_mathfun's vector code in its AVX2 and AVX512 builds
# (the same values on both), scalar libm code in its DEFAULT build
_AVX2 = torch.backends.cpu.get_cpu_capability() in ("AVX2", "AVX512")


def _same(make, seed: int = 5, gen: bool = False) -> None:
    """``make(lib, generator)`` gives the same values and dtypes with torch and jtorch."""
    def run(lib):
        if gen:
            return make(lib, lib.Generator().manual_seed(seed))
        lib.manual_seed(seed)
        return make(lib, None)

    want, got = run(torch), run(jtorch)
    want = want if isinstance(want, (list, tuple)) else [want]
    got = got if isinstance(got, (list, tuple)) else [got]
    assert len(want) == len(got)
    for w, g in zip(want, got):
        assert str(w.dtype) == str(g.dtype) and tuple(w.shape) == tuple(g.shape)
        np.testing.assert_array_equal(g.detach().numpy(), w.detach().numpy())


@pytest.mark.parametrize("seed", [0, 7, 2**40 + 3, -1])
def test_uniform_matches_torch(seed):
    _same(lambda t, g: [t.rand(3, 5, generator=g), t.rand(1000, dtype=t.float64, generator=g),
                        t.rand(300, dtype=t.float16, generator=g),
                        t.empty(40, 30).uniform_(-0.3, 0.7, generator=g),
                        t.empty(30, 40, dtype=t.float64).t().uniform_(2, 5, generator=g),
                        t.empty(20, 30)[:, ::3].uniform_(generator=g),
                        t.rand_like(t.zeros(4, 0, 3))], seed, gen=True)


@pytest.mark.parametrize("engine", ["numpy", "compiled", "alternating"])
def test_uniform_matches_torch_through_either_engine(monkeypatch, engine):
    """A process's first float32 uniform_ and normal_ calls draw through NumPy's MT19937,
    later ones through the compiled kernels: both give torch's numbers, and hand the stream
    on."""
    turns = itertools.cycle([True, False])
    monkeypatch.setattr(jrandom, "_numpy_start", lambda n, kernel: engine == "numpy" or
                        engine == "alternating" and next(turns))
    if _AVX2:
        _same(lambda t, g: [t.randn(16, generator=g), t.rand(5, generator=g),
                            t.randn(4, 17, generator=g), t.empty(1000).normal_(2.0, 0.5, generator=g),
                            t.randn(33, generator=g), t.randn(64, 1, 8, 8, generator=g),
                            t.randn(7, generator=g), t.randn(3, 16, generator=g)[:, ::2]],
              9, gen=True)
    _same(lambda t, g: [t.randint(0, 10, (64,), generator=g), t.rand(3, generator=g),
                        t.randint(-5, 5, (3, 700), dtype=t.int32, generator=g),
                        t.randint(5, 5 + 2**40, (50,), generator=g),
                        t.randint(0, 2**33, (20,), dtype=t.float64, generator=g),
                        t.randint(3, (10,), dtype=t.float32, generator=g),
                        t.empty(9, dtype=t.bool).random_(generator=g),
                        t.randint(0, 7, (3, 4), generator=g).t()], 4, gen=True)
    _same(lambda t, g: [t.rand(3, 5, generator=g), t.rand(700, generator=g),
                        t.empty(40, 30).uniform_(-0.3, 0.7, generator=g),
                        t.empty(20, 30)[:, ::3].uniform_(generator=g),
                        t.empty(30, 40).t().uniform_(-1e38, 2e38, generator=g),
                        t.rand(300, dtype=t.float16, generator=g), t.rand(7, generator=g),
                        t.rand(0, generator=g)], 5, gen=True)
    _same(lambda t, g: [p for m in (t.nn.Linear(20, 30), t.nn.Conv2d(3, 8, 3))
                        for p in m.parameters()], 3)


_floats32 = st.floats(-1e6, 1e6, width=32) | st.floats(width=32, allow_nan=False,
                                                        allow_infinity=False)


@settings(max_examples=60, deadline=None)
@given(a=_floats32, b=_floats32, n=st.integers(0, 1500), skip=st.integers(0, 1300),
       clamp=st.booleans(), chunk=st.sampled_from([7, 624, 1 << 16]))
def test_numpy_uniform_is_the_compiled_kernel_bit_for_bit(a, b, n, skip, clamp, chunk):
    """``uniform32_numpy`` (NumPy's MT19937 and an emulated FMA) against ``uniform32``: the
    same values and engine state from any position of the stream (the 624-word twists
    included), in chunks of any size, for any float32 range; a range whose width is not
    finite is refused."""
    state = mt.seeded(11)
    mt.uniform32(*state, np.empty(skip, np.float32), 0.0, 1.0, True)
    other = (state[0].copy(), state[1].copy())
    want, got = np.empty(n, np.float32), np.full(n, 7, np.float32)
    mt.uniform32(*state, want, a, b, clamp)
    real, mt._NP_CHUNK = mt._NP_CHUNK, chunk
    try:
        drawn = mt.uniform32_numpy(*other, got, a, b, clamp)
    finally:
        mt._NP_CHUNK = real
    if not drawn:
        assert not np.isfinite(np.float32(b) - np.float32(a))
        return
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    np.testing.assert_array_equal(other[0], state[0])
    np.testing.assert_array_equal(other[1], state[1])


@settings(max_examples=60, deadline=None)
@given(mean=_floats32 | st.sampled_from([np.inf, -np.inf, np.nan, -0.0]),
       std=st.floats(0, 1e6, width=32) | st.sampled_from([0.0, 3e38, np.inf, np.nan]),
       n=st.integers(16, 1500), skip=st.integers(0, 1300), chunk=st.sampled_from([7, 624, 1 << 16]))
def test_numpy_normal_is_the_compiled_kernel_bit_for_bit(mean, std, n, skip, chunk):
    """``normal_fill32_numpy`` (the cephes log and sincos with emulated FMAs) against
    ``normal_fill32``: the same values (NaNs where it has NaNs) and engine state from any
    position of the stream, with the last 16 redrawn or not, any mean and std."""
    state = mt.seeded(13)
    mt.uniform32(*state, np.empty(skip, np.float32), 0.0, 1.0, True)
    other = (state[0].copy(), state[1].copy())
    want, got = np.empty(n, np.float32), np.full(n, 7, np.float32)
    mt.normal_fill32(*state, want, mean, std)
    real, mt._NP_CHUNK = mt._NP_CHUNK, chunk
    try:
        mt.normal_fill32_numpy(*other, got, mean, std)
    finally:
        mt._NP_CHUNK = real
    nan = np.isnan(want)
    np.testing.assert_array_equal(np.isnan(got), nan)
    np.testing.assert_array_equal(got.view(np.int32)[~nan], want.view(np.int32)[~nan])
    np.testing.assert_array_equal(other[0], state[0])
    np.testing.assert_array_equal(other[1], state[1])


@settings(max_examples=60, deadline=None)
@given(rng=st.integers(1, 2**32 - 1), base=st.integers(-2**62, 2**62), n=st.integers(0, 1500),
       skip=st.integers(0, 1300), chunk=st.sampled_from([7, 624, 1 << 16]))
def test_numpy_integers_are_the_compiled_kernel_bit_for_bit(rng, base, n, skip, chunk):
    """``from_to_numpy`` against ``from_to`` with 32-bit draws: the same integers and engine
    state from any position of the stream."""
    state = mt.seeded(17)
    mt.uniform32(*state, np.empty(skip, np.float32), 0.0, 1.0, True)
    other = (state[0].copy(), state[1].copy())
    want, got = np.empty(n, np.int64), np.full(n, 7, np.int64)
    mt.from_to(*state, want, np.uint64(rng), np.int64(base), False)
    real, mt._NP_CHUNK = mt._NP_CHUNK, chunk
    try:
        mt.from_to_numpy(*other, got, rng, base)
    finally:
        mt._NP_CHUNK = real
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(other[0], state[0])
    np.testing.assert_array_equal(other[1], state[1])


@pytest.mark.parametrize("kernel", ["uniform32", "normal_fill32", "from_to"])
def test_numpy_start_is_a_budget_and_ends_once_the_kernel_is_loaded(monkeypatch, kernel):
    fresh = types.SimpleNamespace(**{k: types.SimpleNamespace(signatures=[])
                                     for k in ("uniform32", "normal_fill32", "from_to")})
    monkeypatch.setattr(jrandom, "_mt", fresh)  # as in a process that has not loaded them
    other = {"calls": 9, "elements": 999}
    monkeypatch.setattr(jrandom, "_NUMPY_START", {kernel: {"calls": 2, "elements": 100},
                                                  "other": other})
    assert not jrandom._numpy_start(101, kernel)
    assert jrandom._numpy_start(60, kernel) and jrandom._numpy_start(40, kernel)
    assert not jrandom._numpy_start(0, kernel)  # calls spent
    assert other == {"calls": 9, "elements": 999}  # each kernel its own budget
    monkeypatch.setattr(jrandom, "_NUMPY_START", {kernel: {"calls": 5, "elements": 100}})
    getattr(fresh, kernel).signatures.append("loaded")
    assert not jrandom._numpy_start(1, kernel)


@pytest.mark.parametrize("n", [1, 5, 15, 16, 17, 40, 1003])
def test_normal_matches_torch_in_each_path(n):
    # fewer than 16 (one Box-Muller pair per two values, the second cached in the generator),
    # 16 or more contiguous (normal_fill, the last 16 redrawn), non-contiguous (per value)
    _same(lambda t, g: [t.randn(n, dtype=t.float64), t.randn(n, dtype=t.float64),
                        t.empty(n, 3, dtype=t.float64).t().normal_(1.5, 0.5),
                        t.normal(2.0, 3.0, (n,), dtype=t.float64), t.randn(n, 2)[:, 0]])
    if _AVX2:
        _same(lambda t, g: [t.randn(n), t.empty(n).normal_(-1.0, 0.25),
                            t.randn(n, dtype=t.float16), t.randn_like(t.zeros(n, 2))])


def test_integers_and_permutations_match_torch():
    _same(lambda t, g: [t.randint(0, 10, (40,)), t.randint(-5, 5, (3, 3), dtype=t.int32),
                        t.randint(3, (10,), dtype=t.float32), t.randint(5, 5 + 2**40, (50,)),
                        t.randint(0, 2**33, (20,), dtype=t.float64),
                        t.empty(20, dtype=t.int64).random_(), t.empty(20).random_(),
                        t.empty(20, dtype=t.float64).random_(), t.empty(9, dtype=t.bool).random_(),
                        t.empty(9, dtype=t.uint8).random_(), t.empty(9, dtype=t.int16).random_(-3, 9),
                        t.empty(5, dtype=t.int64).random_(-2**63, None),
                        t.randperm(1), t.randperm(10), t.randperm(1000, dtype=t.int32),
                        t.randint_like(t.zeros(3, 4), 7)])


def test_bernoulli_with_probability_tensors_matches_torch():
    p32 = np.random.default_rng(0).random((6, 7)).astype(np.float32)
    _same(lambda t, g: [t.bernoulli(t.from_numpy(p32)),
                        t.bernoulli(t.from_numpy(p32.astype(np.float64))),
                        t.zeros(6, 7, dtype=t.float64).bernoulli_(t.from_numpy(p32)),
                        t.zeros(7, 6).t().bernoulli_(t.from_numpy(p32[:, :1]))])


@pytest.mark.skipif(intel_cpu(), reason="torch's bernoulli_(p) uses MKL's stream on Intel CPUs")
def test_bernoulli_and_dropout_masks_match_torch():
    _same(lambda t, g: [t.empty(100).bernoulli_(0.3), t.empty(7, 9, dtype=t.int64).bernoulli_(0.5),
                        t.nn.functional.dropout(t.ones(10, 10), 0.3),
                        t.nn.Dropout(0.5)(t.ones(4, 33)),
                        t.nn.functional.dropout2d(t.ones(2, 5, 3, 3), 0.5)])


@pytest.mark.skipif(intel_cpu(), reason="torch's bernoulli_(p) uses MKL's stream on Intel CPUs")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("p", [0.1, 1 / 3, 0.5, 0.9])
def test_fused_dropout_is_torch_s_composite(dtype, p):
    """Contiguous float32/float64 inputs run one kernel (draws, noise, product): its values,
    node and gradients are torch's ``input * (bernoulli_(1 - p) / (1 - p))``, and the stream
    goes on where torch's does. Non-contiguous and float16 inputs take the composite path."""
    r = np.random.default_rng(0)
    arrays = [r.standard_normal(s).astype(dtype) for s in [(1,), (7, 9), (64, 6, 48), (40000,)]]
    arrays[1][0, :3] = [np.nan, np.inf, -0.0]

    def run(t, g):
        xs = [t.from_numpy(a.copy()).requires_grad_() for a in arrays]
        ys = [t.nn.functional.dropout(x, p) for x in xs]
        ys.append(t.nn.functional.dropout(t.from_numpy(arrays[2].copy()).transpose(0, 2), p))
        ys.append(t.nn.functional.dropout(t.ones(3, 5, dtype=t.float16), p))
        for x, y in zip(xs, ys):
            y.backward(t.ones_like(y) * 3)
        return [y.detach() for y in ys] + [x.grad for x in xs] + [t.rand(5)]

    _same(run)
    x = jtorch.ones(3, requires_grad=True)
    fn = jtorch.nn.functional.dropout(x, p).grad_fn
    assert type(fn).__name__ == "MulBackward0"
    assert fn.next_functions[1] == (None, 0)
    with jtorch.no_grad():
        assert jtorch.nn.functional.dropout(x, p).grad_fn is None


@pytest.mark.skipif(intel_cpu(), reason="torch's bernoulli_(p) uses MKL's stream on Intel CPUs")
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("shape", [(4, 6), (2, 3, 4), (2, 3, 4, 5), (3, 2, 2, 2, 2), (2, 2, 2, 2, 2, 2)])
def test_feature_dropout_masks_match_torch_at_every_rank(shape):
    """dropout2d reads any rank as (N, C, ...) (a 3-D input as (N, C, L)); 1d/3d unsqueeze a
    sample one dim short. The mask's shape decides which draws land where."""
    def masks(t, g):
        F, out = t.nn.functional, []
        for fn in (F.dropout1d, F.dropout2d, F.dropout3d):
            if fn is F.dropout1d and len(shape) > 3:
                continue
            out.append(fn(t.ones(shape), 0.4))
            x = t.ones(shape)
            fn(x, 0.4, inplace=True)
            out.append(x)
        return out

    _same(masks)


def test_feature_dropout_needs_two_dims_only_in_training():
    x = jtorch.ones(5)
    assert jtorch.nn.functional.dropout2d(x, 0.5, training=False) is x
    with pytest.raises(RuntimeError, match="at least 2 dimensions"), pytest.warns(UserWarning):
        jtorch.nn.functional.dropout2d(x, 0.5)


def test_modules_initialise_to_torch_s_weights():
    def params(t, g):
        ms = [t.nn.Linear(20, 30), t.nn.Conv2d(3, 8, 3), t.nn.LSTM(8, 16, 2), t.nn.GRU(4, 6),
              t.nn.Bilinear(3, 4, 5), t.nn.ConvTranspose1d(4, 2, 3),
              t.nn.MultiheadAttention(16, 4)]
        if _AVX2:
            ms += [t.nn.Embedding(100, 16)]
        return [p for m in ms for p in m.parameters()]

    _same(params, 3)
    _same(lambda t, g: [t.nn.init.xavier_uniform_(t.empty(10, 20)),
                        t.nn.init.kaiming_uniform_(t.empty(7, 5), a=0.1),
                        t.nn.init.kaiming_normal_(t.empty(10, 20, dtype=t.float64)),
                        t.nn.init.normal_(t.empty(3, 4), 0.0, 0.02),
                        t.nn.init.uniform_(t.empty(50), -1, 1)], 11)


def test_state_round_trips_and_generators_are_independent():
    g = jtorch.Generator().manual_seed(9)
    jtorch.randn(3, dtype=jtorch.float64, generator=g)  # leaves a cached normal behind
    s = g.get_state()
    a = jtorch.randn(5, dtype=jtorch.float64, generator=g)
    g.set_state(s)
    np.testing.assert_array_equal(jtorch.randn(5, dtype=jtorch.float64, generator=g).numpy(),
                                  a.numpy())
    tg = torch.Generator().manual_seed(9)
    torch.randn(3, dtype=torch.float64, generator=tg)
    np.testing.assert_array_equal(a.numpy(), torch.randn(5, dtype=torch.float64,
                                                         generator=tg).numpy())
    jtorch.manual_seed(1)  # the default generator does not move a private one
    h = jtorch.Generator().manual_seed(1)
    jtorch.rand(10)
    np.testing.assert_array_equal(jtorch.rand(4, generator=h).numpy(),
                                  torch.rand(4, generator=torch.Generator().manual_seed(1)).numpy())


def test_dropout_with_p_zero_returns_the_input_and_draws_nothing():
    # torch's CPU dropout returns the input itself for p=0 or no elements: the stream stays put
    for lib in (torch, jtorch):
        x = lib.ones(3, 4)
        assert lib.nn.functional.dropout(x, 0.0) is x
        assert lib.nn.Dropout(0.0)(x) is x
    _same(lambda t, g: [t.nn.functional.dropout(t.ones(5, 5), 0.0), t.nn.functional.dropout(t.ones(0, 3)),
                        t.dropout(t.ones(2, 2), 0.0, True), t.rand(4)])


@pytest.mark.skipif(intel_cpu(), reason="torch may draw exponential_ from MKL's stream on Intel "
                                        "CPUs, as it does bernoulli_")
@pytest.mark.parametrize("gen", [False, True])
def test_exponential_cauchy_log_normal_geometric_and_multinomial_match_torch(gen):
    def make(t, g):
        p = t.rand(3, 9, generator=g)
        return [t.empty(40, 3).exponential_(generator=g),
                t.empty(5, 7, dtype=t.float64).t().exponential_(0.7, generator=g),
                t.empty(33, dtype=t.bfloat16).exponential_(3.0, generator=g).float(),
                t.multinomial(p, 1, generator=g), t.multinomial(p, 5, generator=g),
                t.multinomial(p[0].double(), 9, generator=g),
                t.multinomial(p, 40, replacement=True, generator=g),
                t.multinomial(p[1].half(), 12, True, generator=g),
                t.multinomial(p.double(), 20, True, generator=g),
                t.empty(6, 4).t().cauchy_(1.0, 2.0, generator=g),
                t.empty(30, dtype=t.float64).log_normal_(0.5, 1.5, generator=g),
                t.empty(5, 3).log_normal_(generator=g),
                t.empty(40, dtype=t.float64).geometric_(0.3, generator=g),
                t.empty(9, dtype=t.int64).geometric_(0.6, generator=g),
                t.rand(3, generator=g)]  # the stream after them is torch's too

    _same(make, 11, gen=gen)


def test_multinomial_errors_match_torch():
    for t in (torch, jtorch):
        for p, k, r, msg in [([1.0, -1.0], 2, True, "encountering probability entry < 0"),
                             ([1.0, float("inf")], 2, True, "entry = infinity or NaN"),
                             ([1.0, float("nan")], 2, True, "encountering probability entry < 0"),
                             ([0.0, 0.0], 2, True, "sum of probabilities <= 0"),
                             ([1.0, -1.0], 1, False, "contains either `inf`, `nan` or element"),
                             ([0.0, 0.0], 1, False, "sum of probabilities <= 0")]:
            with pytest.raises(RuntimeError, match=msg.replace("(", "\\(").replace(")", "\\)")):
                t.multinomial(t.tensor(p), k, r)
