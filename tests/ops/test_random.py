"""Random sampling: the Philox streams of the parallel samplers, reproducibility, state,
distributions, torch's argument checks, and serial == parallel streams. Bitwise parity with
torch's numbers is ``test_random_parity.py``."""

import math
import subprocess
import sys
import warnings

import numba
import numpy as np
import pytest
import torch

import jtorch
from jtorch import _flags
from jtorch.kernels.cpu import random as K

from helpers import raises_like

N = 100_000


def ks_uniform(x: np.ndarray) -> float:
    x = np.sort(x.astype(np.float64))
    n = x.size
    i = np.arange(1, n + 1)
    return float(max(np.max(i / n - x), np.max(x - (i - 1) / n)))


def ks_normal(x: np.ndarray) -> float:
    cdf = np.vectorize(lambda v: 0.5 * (1 + math.erf(v / math.sqrt(2))))
    return ks_uniform(cdf(x.astype(np.float64)))


KS_BOUND = 1.95 / math.sqrt(N)  # alpha = 0.001 (and the streams are seeded: no flakiness)


# -- the bit generator -----------------------------------------------------------------------

@numba.njit
def _philox(c0, c1, c2, c3, k0, k1):
    u = np.uint64
    return K.philox(u(c0), u(c1), u(c2), u(c3), u(k0), u(k1))


def test_philox_known_answers():
    """Random123's published Philox4x32-10 test vectors."""
    cases = [
        ((0, 0, 0, 0, 0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
        ((0xFFFFFFFF,) * 6, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
        ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344, 0xA4093822, 0x299F31D0),
         (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
    ]
    for args, want in cases:
        assert tuple(int(x) for x in _philox(*args)) == want


# -- reproducibility and state ---------------------------------------------------------------

def _draws():
    return [jtorch.rand(7), jtorch.randn(5, dtype=jtorch.float64), jtorch.randint(0, 100, (6,)),
            jtorch.randperm(9), jtorch.normal(jtorch.zeros(3), jtorch.ones(3)),
            jtorch.bernoulli(jtorch.full((8,), 0.5)),
            jtorch.multinomial(jtorch.tensor([1.0, 2, 3, 4]), 3),
            jtorch.empty(5).exponential_(), jtorch.rand(3, dtype=jtorch.complex64)]


def test_manual_seed_reproduces_every_sampler():
    jtorch.manual_seed(1234)
    a = _draws()
    jtorch.manual_seed(1234)
    b = _draws()
    jtorch.manual_seed(1235)
    c = _draws()
    for x, y, z in zip(a, b, c):
        assert x.dtype == y.dtype and x.tolist() == y.tolist()
    assert sum(x.tolist() != z.tolist() for x, z in zip(a, c)) >= len(a) - 1


def test_generator_objects_are_independent():
    g1, g2 = jtorch.Generator().manual_seed(7), jtorch.Generator(device="cpu").manual_seed(7)
    jtorch.manual_seed(0)
    ref = jtorch.rand(4).tolist()
    jtorch.manual_seed(0)
    x = jtorch.rand(5, generator=g1)
    assert jtorch.rand(4).tolist() == ref  # the default generator did not move
    assert jtorch.rand(5, generator=g2).tolist() == x.tolist()
    assert jtorch.randn(3, generator=g1).tolist() == jtorch.randn(3, generator=g2).tolist()
    assert str(g1.device) == "cpu"
    assert g1.manual_seed(3) is g1 and g1.initial_seed() == 3
    with pytest.raises(TypeError, match="must be torch.Generator"):
        jtorch.rand(2, generator=3)
    with pytest.raises(RuntimeError):
        jtorch.Generator(device="cuda")


def test_same_numbers_in_another_process():
    code = ("import jtorch; jtorch.manual_seed(99); "
            "print(jtorch.rand(4).tolist(), jtorch.randint(0, 10**12, (3,)).tolist())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    jtorch.manual_seed(99)
    here = f"{jtorch.rand(4).tolist()} {jtorch.randint(0, 10**12, (3,)).tolist()}"
    assert out == here


def test_rng_state_roundtrip():
    jtorch.manual_seed(5)
    jtorch.rand(3)
    state = jtorch.get_rng_state()
    assert state.dtype is jtorch.uint8 and state.shape == (2528,)
    a = jtorch.randn(10).tolist()
    jtorch.set_rng_state(state)
    assert jtorch.randn(10).tolist() == a
    g = jtorch.Generator().manual_seed(11)
    s = g.get_state()
    x = jtorch.randint(0, 1000, (5,), generator=g).tolist()
    assert g.set_state(s) is g
    assert jtorch.randint(0, 1000, (5,), generator=g).tolist() == x
    h = g.clone_state()
    assert jtorch.rand(4, generator=g).tolist() == jtorch.rand(4, generator=h).tolist()
    import copy
    import pickle

    for dup in (copy.deepcopy, lambda x: pickle.loads(pickle.dumps(x))):
        c = dup(g)
        assert jtorch.rand(3, generator=c).tolist() == jtorch.rand(3, generator=h).tolist()
        jtorch.rand(3, generator=g)
    raises_like(g.get_offset, torch.Generator().get_offset)  # CPU generators have no offset
    with jtorch.random.fork_rng():
        jtorch.rand(100)
    assert jtorch.randn(10).tolist() != a  # moved on, but fork_rng restored its state
    jtorch.set_rng_state(state)
    with jtorch.random.fork_rng():
        jtorch.rand(100)
    assert jtorch.randn(10).tolist() == a


def test_rng_state_errors():
    raises_like(lambda: jtorch.set_rng_state(jtorch.zeros(3)),
                lambda: torch.set_rng_state(torch.zeros(3)))
    with pytest.raises(RuntimeError, match="input RNG state size to be 3"):
        jtorch.set_rng_state(jtorch.zeros(3, dtype=jtorch.uint8))


def test_seed_conversions_match_torch():
    for s in (-1, 2**64 - 1, -2**63, 0, True):
        assert jtorch.manual_seed(s).initial_seed() == torch.manual_seed(s).initial_seed()
    assert jtorch.manual_seed(1.5).initial_seed() == 1
    assert jtorch.manual_seed("3").initial_seed() == 3
    assert jtorch.manual_seed(jtorch.tensor(4)).initial_seed() == 4
    assert jtorch.random.initial_seed() == 4
    for bad in (2**64, -2**63 - 1):
        raises_like(lambda b=bad: jtorch.manual_seed(b), lambda b=bad: torch.manual_seed(b))
    raises_like(lambda: jtorch.Generator().manual_seed(1.5),
                lambda: torch.Generator().manual_seed(1.5))
    assert jtorch.Generator().initial_seed() == torch.Generator().initial_seed()
    s = jtorch.seed()
    assert isinstance(s, int) and jtorch.initial_seed() == s
    g = jtorch.Generator()
    assert g.seed() == g.initial_seed()


# -- serial == parallel, prefixes ------------------------------------------------------------

def _sample_all(seed_):
    g = jtorch.Generator().manual_seed(seed_)
    return [jtorch.rand(50_001, generator=g), jtorch.randn(50_003, generator=g),
            jtorch.rand(40_001, dtype=jtorch.float64, generator=g),
            jtorch.randn(40_001, dtype=jtorch.float64, generator=g),
            jtorch.randint(-5, 17, (40_003,), generator=g),
            jtorch.randint(0, 2**40, (40_001,), generator=g),
            jtorch.bernoulli(jtorch.full((40_000,), 0.3), generator=g),
            jtorch.multinomial(jtorch.ones(400, 100), 30, generator=g),
            jtorch.multinomial(jtorch.ones(400, 100), 120, True, generator=g)]


def test_parallel_stream_equals_serial(monkeypatch):
    monkeypatch.setattr(_flags, "GRAIN_SIZE", 1 << 60)
    serial = _sample_all(3)
    monkeypatch.setattr(_flags, "GRAIN_SIZE", 1)
    parallel = _sample_all(3)
    for s, p in zip(serial, parallel):
        np.testing.assert_array_equal(s.numpy(), p.numpy())


@pytest.mark.parametrize("make", [
    lambda n, g: jtorch.rand(n, generator=g),
    lambda n, g: jtorch.rand(n, dtype=jtorch.float64, generator=g),
    lambda n, g: jtorch.randint(0, 2**50, (n,), generator=g),
])
def test_short_draw_is_prefix_of_long_draw(make):
    a = make(101, jtorch.Generator().manual_seed(8))
    b = make(60_000, jtorch.Generator().manual_seed(8))
    np.testing.assert_array_equal(a.numpy(), b.numpy()[:101])


# -- distributions ---------------------------------------------------------------------------

@pytest.mark.parametrize("dt", [jtorch.float32, jtorch.float64])
def test_rand_is_uniform(dt):
    jtorch.manual_seed(0)
    x = jtorch.rand(N, dtype=dt)
    assert x.dtype is dt
    a = x.numpy()
    assert a.min() >= 0 and a.max() < 1
    assert abs(a.mean() - 0.5) < 0.005 and abs(a.var() - 1 / 12) < 0.002
    assert ks_uniform(a) < KS_BOUND
    assert len(np.unique(a)) > 0.99 * N


def test_rand_half_and_complex():
    jtorch.manual_seed(1)
    h = jtorch.rand(N, dtype=jtorch.float16).numpy().astype(np.float64)
    assert h.min() >= 0 and h.max() < 1 and abs(h.mean() - 0.5) < 0.005
    assert ks_uniform(h) < KS_BOUND + 1 / 2048  # 11-bit grid
    c = jtorch.rand(N, dtype=jtorch.complex64).numpy()
    assert ks_uniform(c.real) < KS_BOUND and ks_uniform(c.imag) < KS_BOUND
    z = jtorch.randn(N, dtype=jtorch.complex128).numpy()
    assert abs(z.real.var() - 0.5) < 0.01 and abs(z.imag.var() - 0.5) < 0.01
    assert abs(np.corrcoef(z.real, z.imag)[0, 1]) < 0.02


@pytest.mark.parametrize("dt", [jtorch.float32, jtorch.float64])
def test_randn_is_standard_normal(dt):
    jtorch.manual_seed(2)
    a = jtorch.randn(N, dtype=dt).numpy()
    assert abs(a.mean()) < 0.016 and abs(a.std() - 1) < 0.01
    assert ks_normal(a) < KS_BOUND
    assert a.max() > 3.5 and a.min() < -3.5
    assert abs(np.corrcoef(a[:-1], a[1:])[0, 1]) < 0.02  # Box-Muller pairs uncorrelated


def test_normal_overloads():
    jtorch.manual_seed(3)
    m = jtorch.from_numpy(np.tile(np.array([0.0, 10.0], np.float32), (N // 2, 1)))
    s = jtorch.tensor([1.0, 3.0])
    a = jtorch.normal(m, s).numpy()
    assert a.shape == (N // 2, 2) and a.dtype == np.float32
    assert np.allclose(a.mean(0), [0, 10], atol=0.05) and np.allclose(a.std(0), [1, 3], rtol=0.02)
    b = jtorch.normal(2.0, 0.5, (N,)).numpy()
    assert abs(b.mean() - 2) < 0.01 and abs(b.std() - 0.5) < 0.01
    c = jtorch.normal(m, 2.0).numpy()
    assert np.allclose(c.std(0), [2, 2], rtol=0.02)
    d = jtorch.normal(-1.0, jtorch.full((N,), 4.0, dtype=jtorch.float64))
    assert d.dtype is jtorch.float64 and abs(d.numpy().std() - 4) < 0.05
    e = jtorch.normal(jtorch.zeros(3), jtorch.ones(3, dtype=jtorch.int64))
    assert e.dtype is jtorch.float32
    assert jtorch.normal(2.0, jtorch.zeros(2)).tolist() == [2.0, 2.0]
    assert jtorch.normal(0.0, 1.0, (2,), dtype=jtorch.float64).dtype is jtorch.float64
    assert jtorch.normal(jtorch.zeros(2, 1), jtorch.ones(3)).shape == (2, 3)
    assert jtorch.normal(mean=jtorch.zeros(2)).shape == (2,)
    x = jtorch.zeros(N).normal_(5, 2).numpy()
    assert abs(x.mean() - 5) < 0.03 and abs(x.std() - 2) < 0.02


def test_randint_range_dtype_and_uniformity():
    jtorch.manual_seed(4)
    x = jtorch.randint(3, 10, (N,))
    assert x.dtype is jtorch.int64
    a = x.numpy()
    assert a.min() == 3 and a.max() == 9
    counts = np.bincount(a - 3)
    chi2 = ((counts - N / 7) ** 2 / (N / 7)).sum()
    assert chi2 < 25  # 6 degrees of freedom, p ~ 3e-4
    assert jtorch.randint(5, (4,)).numpy().max() < 5
    for jd in (jtorch.int32, jtorch.int16, jtorch.uint8, jtorch.float32, jtorch.float16,
               jtorch.float64, jtorch.bool):
        hi = 2 if jd is jtorch.bool else 100
        y = jtorch.randint(0, hi, (1000,), dtype=jd)
        assert y.dtype is jd
        v = y.numpy().astype(np.int64)
        assert v.min() >= 0 and v.max() < hi and len(np.unique(v)) == hi
    w = jtorch.randint(-2**62, 2**62, (N,)).numpy()
    assert (w < 0).mean() == pytest.approx(0.5, abs=0.01)
    assert abs(w.astype(np.float64).mean()) < 0.01 * 2**62
    full = jtorch.randint(-2**63, 2**63 - 1, (N,)).numpy()
    assert (full < 0).mean() == pytest.approx(0.5, abs=0.01)
    assert jtorch.randint(high=5, size=(3,)).shape == (3,)
    assert jtorch.randint(low=1, high=5, size=(3,)).numpy().min() >= 1
    assert jtorch.randint(3, size=(2,)).shape == (2,)
    assert jtorch.randint(jtorch.tensor(3), (2,)).shape == (2,)
    assert jtorch.randint(3, jtorch.Size([2, 1])).shape == (2, 1)


def test_random_inplace_ranges():
    jtorch.manual_seed(5)
    assert jtorch.zeros(1000).random_(3).numpy().max() < 3
    assert sorted(set(jtorch.zeros(1000, dtype=jtorch.int8).random_(-3, 2).tolist())) == \
        [-3, -2, -1, 0, 1]
    b = jtorch.zeros(N, dtype=jtorch.bool).random_().numpy()
    assert abs(b.mean() - 0.5) < 0.01
    i8 = jtorch.zeros(N, dtype=jtorch.int8).random_().numpy()
    assert i8.min() == 0 and i8.max() == 127
    f = jtorch.zeros(N, dtype=jtorch.float16).random_().numpy()
    assert f.min() >= 0 and f.max() <= 2048
    f32 = jtorch.zeros(N).random_(0, 2**20).numpy()
    assert f32.max() < 2**20 and np.all(f32 == np.round(f32))
    with pytest.warns(UserWarning, match="Due to precision limitations c10::Half"):
        h = jtorch.zeros(1000, dtype=jtorch.float16).random_(65000, 65504).numpy()
    assert h.min() >= 65000 and h.max() < 65504
    i64 = jtorch.zeros(N, dtype=jtorch.int64).random_().numpy()
    assert i64.min() >= 0 and i64.max() > 2**62
    assert jtorch.zeros(10, dtype=jtorch.int32).random_(-5, None).numpy().min() >= -5
    assert jtorch.zeros(10).random_(to=4).numpy().max() < 4


def test_randperm_is_a_permutation():
    jtorch.manual_seed(6)
    for n in (0, 1, 2, 10, 1001, 40_000):
        p = jtorch.randperm(n)
        assert p.dtype is jtorch.int64 and sorted(p.tolist()) == list(range(n))
    assert jtorch.randperm(1001).tolist() != list(range(1001))
    counts = {}
    for _ in range(3000):
        k = tuple(jtorch.randperm(3).tolist())
        counts[k] = counts.get(k, 0) + 1
    assert len(counts) == 6 and all(abs(c - 500) < 100 for c in counts.values())
    f = jtorch.randperm(5, dtype=jtorch.float32)
    assert f.dtype is jtorch.float32 and sorted(f.tolist()) == [0, 1, 2, 3, 4]
    assert sorted(jtorch.randperm(256, dtype=jtorch.uint8).tolist()) == list(range(256))


def test_multinomial_frequencies():
    jtorch.manual_seed(7)
    p = jtorch.tensor([0.1, 0.2, 0.3, 0.4, 0.0])
    s = jtorch.multinomial(p, N, replacement=True)
    assert s.dtype is jtorch.int64 and s.shape == (N,)
    freq = np.bincount(s.numpy(), minlength=5) / N
    np.testing.assert_allclose(freq, [0.1, 0.2, 0.3, 0.4, 0.0], atol=0.006)
    rows = jtorch.from_numpy(np.tile(np.array([1.0, 2, 3, 4, 0], np.float32), (20_000, 1)))
    w = jtorch.multinomial(rows, 2).numpy()
    assert w.shape == (20_000, 2) and np.all(w[:, 0] != w[:, 1]) and np.all(w != 4)
    np.testing.assert_allclose(np.bincount(w[:, 0], minlength=5) / 20_000,
                               [0.1, 0.2, 0.3, 0.4, 0], atol=0.012)
    # second draw given the first = 3 (weight 4): proportional to the rest (1, 2, 3)
    second = w[w[:, 0] == 3, 1]
    np.testing.assert_allclose(np.bincount(second, minlength=4)[:3] / second.size,
                               [1 / 6, 2 / 6, 3 / 6], atol=0.02)
    allk = jtorch.multinomial(jtorch.tensor([1.0, 0, 0, 0]), 4).tolist()
    assert allk[0] == 0 and sorted(allk) == [0, 1, 2, 3]
    two = jtorch.multinomial(jtorch.tensor([[1.0, 0, 0], [0, 0, 1.0]]), 1, True).tolist()
    assert two == [[0], [2]]
    assert jtorch.multinomial(jtorch.ones(0, 3), 2).shape == (0, 2)
    assert jtorch.ones(3, dtype=jtorch.float64).multinomial(2).shape == (2,)
    assert jtorch.multinomial(jtorch.ones(3, dtype=jtorch.float16), 2).dtype is jtorch.int64
    nc = jtorch.from_numpy(np.ones((4, 3), np.float32).T)  # non-contiguous rows
    assert jtorch.multinomial(nc, 4).shape == (3, 4)


def test_bernoulli_rates_and_dtypes():
    jtorch.manual_seed(8)
    x = jtorch.bernoulli(jtorch.full((N,), 0.3))
    assert x.dtype is jtorch.float32 and abs(x.numpy().mean() - 0.3) < 0.006
    p = jtorch.from_numpy(np.tile(np.array([0.0, 0.25, 1.0], np.float64), N // 3))
    y = jtorch.bernoulli(p).numpy().reshape(-1, 3)
    assert y.dtype == np.float64 and np.all(y[:, 0] == 0) and np.all(y[:, 2] == 1)
    assert abs(y[:, 1].mean() - 0.25) < 0.01
    z = jtorch.bernoulli(jtorch.ones(N, dtype=jtorch.int64), 0.7)
    assert z.dtype is jtorch.int64 and abs(z.numpy().mean() - 0.7) < 0.006
    b = jtorch.zeros(N, dtype=jtorch.bool).bernoulli_(0.1).numpy()
    assert abs(b.mean() - 0.1) < 0.005
    t = jtorch.zeros(N, dtype=jtorch.int32).bernoulli_(jtorch.full((N,), 0.6)).numpy()
    assert abs(t.mean() - 0.6) < 0.006
    assert jtorch.ones(3).bernoulli_(jtorch.full((1,), 1.0)).tolist() == [1, 1, 1]
    assert jtorch.zeros(2, 2).bernoulli(0.5).shape == (2, 2)
    assert jtorch.zeros(2, 2).bernoulli().tolist() == [[0, 0], [0, 0]]
    out = jtorch.empty(3, dtype=jtorch.int64)
    assert jtorch.bernoulli(jtorch.ones(3), out=out) is out and out.tolist() == [1, 1, 1]


def test_other_distributions():
    jtorch.manual_seed(9)
    e = jtorch.empty(N).exponential_(2.0).numpy()
    assert e.min() >= 0 and abs(e.mean() - 0.5) < 0.01 and abs(e.std() - 0.5) < 0.01
    ks = ks_uniform(1 - np.exp(-2.0 * e.astype(np.float64)))
    assert ks < KS_BOUND
    c = jtorch.empty(N, dtype=jtorch.float64).cauchy_(1.0, 2.0).numpy()
    assert abs(np.median(c) - 1.0) < 0.05
    assert abs(np.percentile(c, 75) - 3.0) < 0.1  # median + sigma
    ln = jtorch.empty(N).log_normal_(0.5, 0.25).numpy()
    assert ln.min() > 0 and abs(np.log(ln).mean() - 0.5) < 0.01
    assert abs(np.log(ln).std() - 0.25) < 0.01
    g = jtorch.empty(N).geometric_(0.25).numpy()
    assert g.min() >= 1 and np.all(g == np.round(g)) and abs(g.mean() - 4) < 0.06
    gi = jtorch.empty(N, dtype=jtorch.int32).geometric_(0.5)
    assert gi.dtype is jtorch.int32 and abs(gi.numpy().mean() - 2) < 0.03
    u = jtorch.empty(N, dtype=jtorch.float64).uniform_(-2, 3).numpy()
    assert u.min() >= -2 and u.max() < 3 and ks_uniform((u + 2) / 5) < KS_BOUND
    assert jtorch.empty(2).uniform_(1, 1).tolist() == [1.0, 1.0]
    cu = jtorch.zeros(2, dtype=jtorch.complex64).uniform_(1, 2).numpy()
    assert np.all((cu.real >= 1) & (cu.real < 2) & (cu.imag >= 1) & (cu.imag < 2))
    assert jtorch.zeros(3).normal_(mean=1, std=0).tolist() == [1.0, 1.0, 1.0]
    assert jtorch.zeros(2).uniform_(**{"from": 4.0, "to": 5.0}).numpy().min() >= 4


def test_like_variants():
    jtorch.manual_seed(10)
    x = jtorch.ones(2, 3, dtype=jtorch.float64)
    r = jtorch.rand_like(x)
    assert r.dtype is jtorch.float64 and r.shape == (2, 3) and r.numpy().max() < 1
    assert jtorch.randn_like(x, dtype=jtorch.float32).dtype is jtorch.float32
    ri = jtorch.randint_like(x, 5)
    assert ri.dtype is jtorch.float64 and ri.numpy().max() < 5
    ri = jtorch.randint_like(jtorch.ones(1000), 3, 5)
    assert set(ri.tolist()) == {3.0, 4.0}
    assert jtorch.randint_like(x, high=5).shape == (2, 3)
    assert jtorch.rand_like(x, requires_grad=True).requires_grad
    g = jtorch.Generator().manual_seed(1)
    h = jtorch.Generator().manual_seed(1)
    assert jtorch.randn_like(x, generator=g).tolist() == jtorch.randn_like(x, generator=h).tolist()


def test_inplace_on_views_and_versions():
    base = jtorch.zeros(4, 3)
    view = jtorch.from_numpy(base.numpy().T)  # a transposed (dense) view of base's memory
    v0 = view._version
    view.uniform_(5, 6)
    assert view._version > v0
    assert base.numpy().min() >= 5
    strided = jtorch.zeros(8)
    sv = jtorch.from_numpy(strided.numpy()[::2])  # not dense: sampled then copied
    sv.normal_(10, 1)
    s = strided.numpy()
    assert np.all(s[1::2] == 0) and np.all(s[::2] > 4)
    leaf = jtorch.zeros(3, requires_grad=True)
    raises_like(lambda: leaf.uniform_(), lambda: torch.zeros(3, requires_grad=True).uniform_())
    x = jtorch.zeros(3)
    assert x.uniform_() is x and x.normal_() is x and x.random_() is x and x.exponential_() is x


def test_factory_kwargs_out_requires_grad():
    r = jtorch.rand(2, 3)
    assert r.shape == (2, 3) and r.dtype is jtorch.float32
    assert jtorch.rand((2, 3)).shape == (2, 3) and jtorch.rand([]).shape == ()
    assert jtorch.rand(size=(4,)).shape == (4,)
    out = jtorch.empty(2, dtype=jtorch.float64)
    assert jtorch.rand(2, out=out) is out and out.dtype is jtorch.float64
    out = jtorch.empty(3)
    assert jtorch.randn(2, out=out).shape == (2,)
    out = jtorch.empty(2, dtype=jtorch.int32)
    assert jtorch.randint(3, (2,), out=out).dtype is jtorch.int32
    assert jtorch.randint(5, (2,), out=jtorch.empty(2)).dtype is jtorch.float32
    assert jtorch.randperm(4, out=jtorch.empty(4)).dtype is jtorch.float32
    assert jtorch.rand(2, requires_grad=True).requires_grad
    assert jtorch.randint(3, (2,), dtype=jtorch.float32, requires_grad=True).requires_grad
    assert jtorch.rand(0).shape == (0,) and jtorch.randn(3, 0).shape == (3, 0)
    assert jtorch.zeros(0).uniform_().shape == (0,)


# -- torch's argument checks -----------------------------------------------------------------

ERRORS = [
    "rand(2, dtype={m}.int64)", "rand(2, dtype={m}.bool)", "randn(2, dtype={m}.int32)",
    "randint(5, 3, (3,))", "randint(5, 5, (3,))", "randint(-1, 2**8, (3,), dtype={m}.uint8)",
    "randint(0, 300, (3,), dtype={m}.uint8)", "randint(5, 3)", "randint(5.5, (3,))",
    "randint(0, 2**70, (2,))", "randint(0, 3, (2,), dtype={m}.complex64)",
    "randint(5, (2,), requires_grad=True)", "randint(3, (-1,))",
    "randint(3, (2,), out={m}.empty(2, dtype={m}.int32), dtype={m}.int64)",
    "randn(2, out={m}.empty(3, dtype={m}.float64), dtype={m}.float32)",
    "randperm(-1)", "randperm(3, dtype={m}.bool)", "randperm(300, dtype={m}.uint8)",
    "randperm(40000, dtype={m}.int16)", "randperm(3000, dtype={m}.float16)",
    "randperm(3, dtype={m}.complex64)", "randperm(3, requires_grad=True)",
    "normal({m}.zeros(2), {m}.ones(3))", "normal({m}.zeros(3), -{m}.ones(3))",
    "normal(0., -1., (2,))", "normal({m}.zeros(3, dtype={m}.int64), 1.)",
    "normal(0, 1, (2,), dtype={m}.int64)", "normal({m}.zeros(3), {m}.ones(3, dtype={m}.complex64))",
    "normal({m}.zeros(3), float('nan'))",
    "bernoulli({m}.full((3,), 1.5))", "bernoulli({m}.full((3,), float('nan')))",
    "bernoulli({m}.ones(3, dtype={m}.int64))", "bernoulli({m}.zeros(2, dtype={m}.complex64))",
    "bernoulli({m}.zeros(2, dtype={m}.complex64), 0.5)",
    "multinomial({m}.tensor([1., 1.]), 3)", "multinomial({m}.tensor([0., 0.]), 1)",
    "multinomial({m}.tensor([-1., 1.]), 1)", "multinomial({m}.tensor([float('nan'), 1.]), 1)",
    "multinomial({m}.tensor([float('inf'), 1.]), 1)", "multinomial({m}.ones(2, 2, 2), 1)",
    "multinomial({m}.tensor(1.), 1)", "multinomial({m}.ones(3), 0)", "multinomial({m}.ones(3), -1)",
    "multinomial({m}.ones(3, dtype={m}.int64), 1)", "multinomial({m}.ones(3, 0), 2)",
    "multinomial({m}.ones(3, 0), 2, True)", "multinomial({m}.tensor([[1., 0], [0, 0]]), 1, True)",
    "rand_like({m}.ones(2, dtype={m}.int64))", "randn_like({m}.ones(2, dtype={m}.int64))",
    "zeros(3).uniform_(2, 1)", "zeros(3).uniform_(0, float('inf'))",
    "zeros(3, dtype={m}.int64).uniform_()", "zeros(2).uniform_(float('nan'), 1)",
    "zeros(2).uniform_(-1e39, 1)", "zeros(2, dtype={m}.float64).uniform_(-1e308, 1e308)",
    "zeros(3, dtype={m}.float16).uniform_(0, 1e5)",
    "zeros(3).normal_(0, -1)", "zeros(3, dtype={m}.int32).normal_()",
    "zeros(3, dtype={m}.bool).normal_()", "zeros(3).normal_(0, float('nan'))",
    "zeros(3).exponential_(0)", "zeros(3).exponential_(-1)", "zeros(2).exponential_(float('nan'))",
    "zeros(3, dtype={m}.int64).exponential_()", "zeros(3, dtype={m}.complex64).exponential_()",
    "zeros(3).random_(5, 3)", "zeros(3, dtype={m}.uint8).random_(0, 300)",
    "zeros(3, dtype={m}.int8).random_(-200, 5)", "zeros(3, dtype={m}.int16).random_(0, 2**40)",
    "zeros(3, dtype={m}.int32).random_(-2**40, 5)", "zeros(3, dtype={m}.bool).random_(0, 3)",
    "zeros(3, dtype={m}.float16).random_(0, 2**40)", "zeros(3, dtype={m}.complex64).random_()",
    "zeros(3, dtype={m}.complex64).random_(0, 3)", "empty(2).random_(2**70)",
    "zeros(3).bernoulli_(1.5)", "zeros(3).bernoulli_(float('nan'))",
    "zeros(3).bernoulli_({m}.tensor([0.1, 2, 0.2]))", "ones(3).bernoulli_({m}.full((2,), 0.5))",
    "zeros(3).bernoulli_({m}.tensor([1, 0, 1]))", "zeros(2, dtype={m}.complex64).bernoulli_(0.5)",
    "zeros(3).geometric_(0)", "zeros(3).geometric_(1)", "zeros(3, dtype={m}.bool).geometric_(0.5)",
    "zeros(3, dtype={m}.complex64).geometric_(0.5)",
    "zeros(3).cauchy_(0, 0)", "zeros(3, dtype={m}.int32).cauchy_()",
    "zeros(3, dtype={m}.int64).cauchy_()", "zeros(3, dtype={m}.complex64).cauchy_()",
    "zeros(3).log_normal_(std=-1)", "zeros(3, dtype={m}.int32).log_normal_()",
]


@pytest.mark.parametrize("expr", ERRORS)
def test_errors_match_torch(expr):
    def run(m):
        ns = {"m": m}
        code = expr.format(m="m")
        return eval(("m." + code) if not code.startswith("m.") else code, ns)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        raises_like(lambda: run(jtorch), lambda: run(torch))


def test_float_random_bounds_warn():
    with pytest.warns(UserWarning, match=r"to - 1 is out of bounds \[-\(2\^24\), 2\^24\]"):
        jtorch.zeros(3).random_(0, 2**25)
