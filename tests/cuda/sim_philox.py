"""CUDA random numbers (``kernels/cuda/philox.py``) in Numba's simulator: Philox4x32-10 against
Random123's known answers, the stream's definition, seeding and generator state, independence
from the launch geometry, distributions, dtypes, views written in place, and dropout on the
device.

Run by ``test_cuda_philox.py`` in a subprocess with ``NUMBA_ENABLE_CUDASIM=1`` (the simulator
must be chosen before ``numba.cuda`` is first imported). Sizes are a few thousand elements at
most (the simulator runs each thread as a Python thread); every seed is fixed, and the bounds
on moments are many standard errors wide.
"""

import os

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("runs under NUMBA_ENABLE_CUDASIM=1 (test_cuda_philox.py starts it)",
                allow_module_level=True)

import jtorch
import jtorch.nn.functional as F
from jtorch import nn
from jtorch.kernels.cuda import eager, philox

CUDA = "cuda"
NATIVE_OPS = ("uniform_", "normal_", "bernoulli_", "bernoulli", "rand", "randn", "randint",
              "random_", "exponential_", "cauchy_", "log_normal_", "geometric_", "normal")

# Random123's kat_vectors, "philox4x32 10" lines: counter (4 words), key (2 words), result
KAT = [
    ((0x00000000, 0x00000000, 0x00000000, 0x00000000), (0x00000000, 0x00000000),
     (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF),
     (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.fixture(autouse=True)
def _fresh_counts():
    eager.FALLBACKS.clear()
    philox.DRAWS.clear()
    yield
    native = {k: v for k, v in eager.FALLBACKS.items() if k in NATIVE_OPS}
    assert not native, native  # every native sampler drew on the device


def host(t) -> np.ndarray:
    assert t.device.type == "cuda", t.device
    return t.cpu().numpy()


# -- the generator --------------------------------------------------------------------------------

@pytest.mark.parametrize(("ctr", "key", "want"), KAT)
def test_philox_known_answers(ctr, key, want):
    """The block function the kernels call: counter (block lo, block hi, offset lo, offset hi),
    key (seed lo, seed hi); a 2**32 range reads the raw words."""
    u = [np.uint64(v) for v in (*ctr, *key)]
    assert tuple(int(w) for w in philox.philox(*u)) == want
    blk = np.uint64(ctr[0] | ctr[1] << 32)
    words = philox.integers(blk, u[4], u[5], u[2], u[3], np.uint64(1 << 32), 0, 0, False)
    assert tuple(int(w) for w in words) == want


def test_stream_definition_through_the_public_api():
    """After manual_seed(0) the first call reads block 0 at offset 0 under key (0, 0): the
    first known answer (int32 integers on [-2**31, 2**31): word - 2**31), and the offset
    advances by 4 per call."""
    jtorch.cuda.manual_seed(0)
    got = host(jtorch.randint(-2**31, 2**31, (6,), dtype=jtorch.int32, device=CUDA))
    want = [w - 2**31 for w in KAT[0][2]]
    assert got[:4].tolist() == want
    state = jtorch.cuda.get_rng_state().numpy().tobytes()
    assert int.from_bytes(state[:8], "little") == 0 and int.from_bytes(state[8:], "little") == 4
    # a launch of one element that writes the raw words (a direct kernel call)
    out = jtorch.zeros(4, dtype=jtorch.int64, device=CUDA)
    geo = philox._geometry((4,), [(1,)])
    z = np.uint64(0)
    philox._launch("fill_int", 4, 4, geo, out._a.buf, 0, 4, z, z, z, z, np.uint64(1 << 32), 0, 0,
                   False)
    assert host(out).tolist() == list(KAT[0][2])


def test_manual_seed_reproduces_and_seeds_differ():
    jtorch.manual_seed(7)
    a = host(jtorch.rand(64, device=CUDA))
    b = host(jtorch.rand(64, device=CUDA))  # the next call: another offset
    jtorch.manual_seed(7)
    np.testing.assert_array_equal(host(jtorch.rand(64, device=CUDA)), a)
    np.testing.assert_array_equal(host(jtorch.rand(64, device=CUDA)), b)
    assert not np.array_equal(a, b)
    jtorch.cuda.manual_seed(7)  # the CUDA generator alone
    np.testing.assert_array_equal(host(jtorch.rand(64, device=CUDA)), a)
    jtorch.cuda.manual_seed(8)
    assert not np.array_equal(host(jtorch.rand(64, device=CUDA)), a)
    assert philox.DRAWS["rand"] == 6


def test_rng_state_round_trip():
    jtorch.cuda.manual_seed(11)
    jtorch.randn(5, device=CUDA)
    s = jtorch.cuda.get_rng_state()
    a = host(jtorch.randn(40, device=CUDA))
    b = host(jtorch.randint(0, 100, (9,), device=CUDA))
    jtorch.cuda.set_rng_state(s)
    np.testing.assert_array_equal(host(jtorch.randn(40, device=CUDA)), a)
    np.testing.assert_array_equal(host(jtorch.randint(0, 100, (9,), device=CUDA)), b)
    assert not np.array_equal(host(jtorch.randn(40, device=CUDA)), a)  # the stream goes on


def test_cuda_generator_objects():
    g = jtorch.Generator(device=CUDA).manual_seed(3)
    a = host(jtorch.rand(32, device=CUDA, generator=g))
    b = host(jtorch.empty(32, device=CUDA).normal_(generator=g))
    g2 = jtorch.Generator(device=CUDA).manual_seed(3)
    np.testing.assert_array_equal(host(jtorch.rand(32, device=CUDA, generator=g2)), a)
    np.testing.assert_array_equal(host(jtorch.empty(32, device=CUDA).normal_(generator=g2)), b)
    s = g.get_state()
    c = host(jtorch.rand(32, device=CUDA, generator=g))
    g.set_state(s)
    np.testing.assert_array_equal(host(jtorch.rand(32, device=CUDA, generator=g)), c)
    assert not np.array_equal(a, c)
    # a generator's draws leave the default stream alone
    jtorch.cuda.manual_seed(5)
    d = host(jtorch.rand(8, device=CUDA))
    jtorch.cuda.manual_seed(5)
    jtorch.rand(8, device=CUDA, generator=g)
    np.testing.assert_array_equal(host(jtorch.rand(8, device=CUDA)), d)


def test_cuda_generator_seed_and_offset_state():
    """torch's CUDA generator state: a seed and an offset advanced by 4 per call, 16 bytes of
    state (or 8: the seed), offsets in multiples of 4."""
    g = jtorch.Generator(device=CUDA)
    assert g.initial_seed() == 67280421310721 and g.get_offset() == 0
    assert g.device == jtorch.device("cuda", 0)  # (torch gives the index too)
    g.manual_seed(9)
    a = host(jtorch.randn(16, device=CUDA, generator=g))
    assert g.get_offset() == 4
    b = host(jtorch.randn(16, device=CUDA, generator=g))
    assert g.get_offset() == 8
    g.set_offset(4)  # rewind to the second call
    np.testing.assert_array_equal(host(jtorch.randn(16, device=CUDA, generator=g)), b)
    raw = g.get_state().numpy().tobytes()
    assert len(raw) == 16 and int.from_bytes(raw[:8], "little") == 9
    assert int.from_bytes(raw[8:], "little") == 8
    with pytest.raises(RuntimeError, match="offset must be a multiple of 4"):
        g.set_offset(6)
    g.set_state(jtorch.from_numpy(np.frombuffer((9).to_bytes(8, "little"), np.uint8).copy()))
    assert g.get_offset() == 0  # the seed alone: offset 0
    np.testing.assert_array_equal(host(jtorch.randn(16, device=CUDA, generator=g)), a)
    with pytest.raises(RuntimeError, match="RNG state is wrong size"):
        g.set_state(jtorch.zeros(12, dtype=jtorch.uint8))
    with pytest.raises(RuntimeError, match="offset must be a multiple of 4"):
        g.set_state(jtorch.from_numpy(np.frombuffer(
            (9).to_bytes(8, "little") + (2).to_bytes(8, "little"), np.uint8).copy()))
    c = g.clone_state()
    assert c.get_offset() == g.get_offset() and c.initial_seed() == 9
    np.testing.assert_array_equal(host(jtorch.rand(8, device=CUDA, generator=c)),
                                  host(jtorch.rand(8, device=CUDA, generator=g)))
    import pickle

    p = pickle.loads(pickle.dumps(g))
    assert p.device.type == "cuda" and p.get_offset() == g.get_offset()
    # ops that run on the host draw from the generator's own engine, reproducibly
    g.manual_seed(4)
    r = jtorch.randperm(10, device=CUDA, generator=g).cpu().tolist()
    g.manual_seed(4)
    assert jtorch.randperm(10, device=CUDA, generator=g).cpu().tolist() == r
    with pytest.raises(RuntimeError, match="CPU Generator does not use offset"):
        jtorch.Generator().get_offset()


def test_default_generators_share_the_device_state():
    gens = jtorch.cuda.default_generators
    assert len(gens) == jtorch.cuda.device_count() and gens[0].device.type == "cuda"
    assert jtorch.cuda.default_generators[0] is gens[0]
    jtorch.cuda.manual_seed(12)
    assert gens[0].initial_seed() == 12 and gens[0].get_offset() == 0
    a = host(jtorch.rand(8, device=CUDA))
    assert gens[0].get_offset() == 4
    assert gens[0].get_state().numpy().tobytes() == jtorch.cuda.get_rng_state().numpy().tobytes()
    gens[0].set_offset(0)
    np.testing.assert_array_equal(host(jtorch.rand(8, device=CUDA)), a)
    gens[0].manual_seed(13)
    assert jtorch.cuda.initial_seed() == 13
    jtorch.manual_seed(12)  # the global seed reaches the device generator in place
    assert gens[0].initial_seed() == 12 and gens[0].get_offset() == 0
    np.testing.assert_array_equal(host(jtorch.rand(8, device=CUDA, generator=gens[0])), a)


def test_cpu_generator_with_cuda_operands_is_torchs_error():
    g = jtorch.Generator()
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
        jtorch.rand(3, device=CUDA, generator=g)
    with pytest.raises(RuntimeError, match="Expected a 'cuda' device type for generator"):
        jtorch.ones(3, device=CUDA).bernoulli_(0.5, generator=g)


# -- launch geometry ------------------------------------------------------------------------------

def _draws() -> list:
    jtorch.cuda.manual_seed(123)
    p = jtorch.linspace(0, 1, 7, device=CUDA)
    base = jtorch.zeros(9, 7, device=CUDA, dtype=jtorch.float64)
    return [host(x) for x in (
        jtorch.rand(37, device=CUDA),
        jtorch.randn(5, 7, device=CUDA, dtype=jtorch.float64),
        jtorch.randint(-9, 9, (41,), device=CUDA, dtype=jtorch.int16),
        jtorch.empty(9, 7, device=CUDA).bernoulli_(p),
        base[1:, ::2].t().exponential_(),
        jtorch.empty(23, device=CUDA, dtype=jtorch.int64).random_(),
    )]


@pytest.mark.parametrize(("threads", "blocks"), [(1, 1), (3, 5), (32, 1)])
def test_values_do_not_depend_on_the_launch_geometry(monkeypatch, threads, blocks):
    want = _draws()
    monkeypatch.setattr(philox, "THREADS", threads)
    monkeypatch.setattr(philox, "MAX_BLOCKS", blocks)
    for got, w in zip(_draws(), want):
        np.testing.assert_array_equal(got, w)


def test_values_follow_the_logical_index_not_the_layout():
    """A transposed view drawn in place holds the values a row-major tensor of its shape gets
    from the same stream position."""
    jtorch.cuda.manual_seed(9)
    dense = host(jtorch.empty(6, 5, device=CUDA).uniform_())
    jtorch.cuda.manual_seed(9)
    t = jtorch.empty(5, 6, device=CUDA).t().uniform_()
    assert not t.is_contiguous()
    np.testing.assert_array_equal(host(t), dense)


# -- distributions --------------------------------------------------------------------------------

N = 4096


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
def test_uniform_and_normal_moments(dtype):
    jtorch.cuda.manual_seed(2024)
    u = host(jtorch.rand(N, device=CUDA, dtype=dtype))
    assert u.dtype == jtorch.empty(0, dtype=dtype).numpy().dtype
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.03 and abs(u.var() - 1 / 12) < 0.01
    z = host(jtorch.randn(N, device=CUDA, dtype=dtype))
    assert abs(z.mean()) < 0.1 and abs(z.std() - 1.0) < 0.08
    assert 0.6 < np.mean(np.abs(z) < 1.0) < 0.76  # P(|z| < 1) = 0.683
    w = host(jtorch.empty(N, device=CUDA, dtype=dtype).uniform_(-3.0, 5.0))
    assert w.min() >= -3.0 and w.max() < 5.0 and abs(w.mean() - 1.0) < 0.25
    m = host(jtorch.empty(N, device=CUDA, dtype=dtype).normal_(10.0, 0.5))
    assert abs(m.mean() - 10.0) < 0.05 and abs(m.std() - 0.5) < 0.05


@pytest.mark.parametrize(("dtype", "eps"), [(jtorch.float32, 2**-23), (jtorch.float64, 2**-52)])
def test_uniform_never_returns_to(dtype, eps):
    """[1, 1 + ulp): about half the float64 values round up to ``to``; those become ``from``."""
    x = host(jtorch.empty(256, device=CUDA, dtype=dtype).uniform_(1.0, 1.0 + eps))
    assert (x == 1.0).all()


def test_other_distributions():
    jtorch.cuda.manual_seed(99)
    e = host(jtorch.empty(N, device=CUDA).exponential_(2.0))
    assert e.min() >= 0.0 and abs(e.mean() - 0.5) < 0.05
    c = host(jtorch.empty(N, device=CUDA, dtype=jtorch.float64).cauchy_(3.0, 0.5))
    assert abs(np.median(c) - 3.0) < 0.1 and abs(np.mean(np.abs(c - 3.0) < 0.5) - 0.5) < 0.05
    ln = host(jtorch.empty(N, device=CUDA).log_normal_(1.0, 0.25))
    assert ln.min() > 0 and abs(np.log(ln).mean() - 1.0) < 0.03 and abs(np.log(ln).std() - 0.25) < 0.03
    g = host(jtorch.empty(N, device=CUDA).geometric_(0.25))
    assert g.min() >= 1 and (g == np.round(g)).all() and abs(g.mean() - 4.0) < 0.3
    gi = host(jtorch.empty(N, device=CUDA, dtype=jtorch.int32).geometric_(0.5))
    assert gi.dtype == np.int32 and gi.min() >= 1 and abs(gi.mean() - 2.0) < 0.15
    b = host(jtorch.empty(N, device=CUDA).bernoulli_(0.3))
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.04
    assert host(jtorch.empty(64, device=CUDA).bernoulli_(0.0)).sum() == 0
    assert host(jtorch.empty(64, device=CUDA).bernoulli_(1.0)).sum() == 64


def test_bernoulli_with_tensor_probabilities():
    jtorch.cuda.manual_seed(4)
    p = jtorch.tensor([0.0, 0.1, 0.5, 0.9, 1.0], dtype=jtorch.float64, device=CUDA)
    pp = p.expand(800, 5)
    hit = host(jtorch.bernoulli(pp))
    assert hit.dtype == np.float64 and set(np.unique(hit)) <= {0.0, 1.0}
    np.testing.assert_allclose(hit.mean(0), [0.0, 0.1, 0.5, 0.9, 1.0], atol=0.06)
    into = host(jtorch.zeros(800, 5, dtype=jtorch.bool, device=CUDA).bernoulli_(p.float()))
    assert into.dtype == np.bool_
    np.testing.assert_allclose(into.mean(0), [0.0, 0.1, 0.5, 0.9, 1.0], atol=0.06)
    with pytest.raises(RuntimeError, match="p_in >= 0 && p_in <= 1"):
        jtorch.bernoulli(jtorch.tensor([0.5, 1.5], device=CUDA))
    with pytest.raises(RuntimeError, match="p_in >= 0 && p_in <= 1"):
        jtorch.zeros(2, device=CUDA).bernoulli_(jtorch.tensor([float("nan"), 0.5], device=CUDA))


def test_normal_with_tensor_parameters():
    jtorch.cuda.manual_seed(6)
    mean = jtorch.arange(4, dtype=jtorch.float32, device=CUDA).expand(1000, 4)
    std = jtorch.tensor([0.0, 0.5, 1.0, 2.0], device=CUDA)
    z = host(jtorch.normal(mean, std))
    assert z.shape == (1000, 4) and z.dtype == np.float32
    assert (z[:, 0] == 0.0).all()
    np.testing.assert_allclose(z.mean(0), [0, 1, 2, 3], atol=0.25)
    np.testing.assert_allclose(z.std(0), [0, 0.5, 1, 2], atol=0.15)
    s = host(jtorch.normal(2.0, jtorch.full((1000,), 3.0, dtype=jtorch.float64, device=CUDA)))
    assert s.dtype == np.float64 and abs(s.mean() - 2.0) < 0.4 and abs(s.std() - 3.0) < 0.3
    with pytest.raises(RuntimeError, match="normal expects all elements of std >= 0.0"):
        jtorch.normal(jtorch.zeros(3, device=CUDA), jtorch.tensor([1.0, -1.0, 1.0], device=CUDA))


@pytest.mark.parametrize("dtype", [jtorch.int8, jtorch.int16, jtorch.int32, jtorch.int64,
                                   jtorch.uint8, jtorch.float32, jtorch.float64])
def test_integer_ranges_are_exact(dtype):
    jtorch.cuda.manual_seed(1)
    low = 3 if dtype == jtorch.uint8 else -3
    x = host(jtorch.randint(low, low + 7, (700,), dtype=dtype, device=CUDA))
    assert x.dtype == jtorch.empty(0, dtype=dtype).numpy().dtype
    x = x.astype(np.int64) - (low + 3)
    assert sorted(np.unique(x).tolist()) == list(range(-3, 4))
    assert np.bincount((x + 3).astype(np.int64)).min() > 60  # 100 expected per value
    r = host(jtorch.empty(500, dtype=dtype, device=CUDA).random_(5, 9))
    assert sorted(np.unique(r).tolist()) == [5, 6, 7, 8]
    r = host(jtorch.empty(500, dtype=dtype, device=CUDA).random_(3))  # random_(to): [0, 3)
    assert sorted(np.unique(r).tolist()) == [0, 1, 2]


def test_integer_full_ranges():
    jtorch.cuda.manual_seed(12)
    b = host(jtorch.empty(200, dtype=jtorch.bool, device=CUDA).random_())
    assert 60 < b.sum() < 140
    i8 = host(jtorch.empty(2000, dtype=jtorch.int8, device=CUDA).random_())
    assert i8.min() >= 0 and i8.max() == 127 and len(np.unique(i8)) > 120
    full = host(jtorch.empty(1000, dtype=jtorch.int64, device=CUDA).random_(-2**63, None))
    assert (full < 0).mean() > 0.4 and (full > 0).mean() > 0.4
    big = host(jtorch.empty(1000, dtype=jtorch.int64, device=CUDA).random_(-2**62, 2**62))
    assert big.min() >= -2**62 and big.max() < 2**62 and abs(big).max() > 2**61
    top = host(jtorch.empty(1000, dtype=jtorch.int64, device=CUDA).random_())  # [0, 2**63)
    assert top.min() >= 0 and top.max() > 2**62
    f = host(jtorch.empty(1000, dtype=jtorch.float32, device=CUDA).random_())  # [0, 2**24]
    assert f.min() >= 0 and f.max() <= 2**24 and (f == np.round(f)).all()


# -- dtypes and layouts -------------------------------------------------------------------------

def test_result_dtypes_and_bfloat16_on_the_host_path():
    for d in (jtorch.float16, jtorch.float32, jtorch.float64):
        assert jtorch.rand(3, device=CUDA, dtype=d).dtype == d
        assert jtorch.randn(3, device=CUDA, dtype=d).dtype == d
    assert jtorch.randint(0, 2, (3,), device=CUDA, dtype=jtorch.bool).dtype == jtorch.bool
    assert jtorch.bernoulli(jtorch.full((3,), 0.5, device=CUDA), 0.5).dtype == jtorch.float32
    assert not eager.FALLBACKS
    h = jtorch.rand(16, device=CUDA, dtype=jtorch.bfloat16)
    assert h.dtype == jtorch.bfloat16 and h.device.type == "cuda"
    assert eager.FALLBACKS["rand"] == 1  # computed on the host, as documented
    c = jtorch.randn(4, device=CUDA, dtype=jtorch.complex64)
    assert c.dtype == jtorch.complex64 and c.device.type == "cuda"
    assert dict(eager.FALLBACKS) == {"rand": 1, "randn": 1}
    eager.FALLBACKS.clear()  # (the fixture's check is for the native dtypes)


def test_float16_samples():
    """float16 results: the float64 sample rounded by the store; uniform's [from, to) holds
    after that rounding too, and dropout on float16 activations draws on the device."""
    jtorch.cuda.manual_seed(5)
    u = host(jtorch.empty(4096, device=CUDA, dtype=jtorch.float16).uniform_(1.0, 1.0009765625))
    assert u.dtype == np.float16 and (u >= 1.0).all() and (u < np.float16(1.0009765625)).all()
    z = host(jtorch.randn(4096, device=CUDA, dtype=jtorch.float16)).astype(np.float64)
    assert abs(z.mean()) < 0.1 and abs(z.std() - 1) < 0.1
    b = host(jtorch.empty(4096, device=CUDA, dtype=jtorch.float16).bernoulli_(0.25))
    assert set(np.unique(b)) <= {0, 1} and abs(b.astype(np.float64).mean() - 0.25) < 0.05
    p = jtorch.full((4096,), 0.75, device=CUDA, dtype=jtorch.float16)
    assert abs(host(jtorch.bernoulli(p)).astype(np.float64).mean() - 0.75) < 0.05
    x = jtorch.ones(64, 64, device=CUDA, dtype=jtorch.float16)
    y = host(jtorch.nn.functional.dropout(x, 0.5, training=True))
    assert set(np.unique(y)) <= {0, 2} and 0.4 < (y == 0).mean() < 0.6
    assert not eager.FALLBACKS


def test_in_place_views_write_only_their_elements():
    jtorch.cuda.manual_seed(21)
    base = jtorch.zeros(6, 8, device=CUDA)
    v = base[1:5, 1:7:2]
    v.uniform_(1.0, 2.0)
    b = host(base)
    inside = np.zeros((6, 8), bool)
    inside[1:5, 1:7:2] = True
    assert (b[inside] >= 1.0).all() and (b[inside] < 2.0).all() and (b[~inside] == 0).all()
    for fill in (lambda t: t.normal_(5.0, 1.0), lambda t: t.bernoulli_(1.0),
                 lambda t: t.exponential_(), lambda t: t.geometric_(0.5),
                 lambda t: t.random_(1, 3), lambda t: t.bernoulli_(jtorch.ones(3, device=CUDA))):
        base = jtorch.zeros(6, 8, device=CUDA)
        r = fill(base.t()[2:5, ::2])
        assert r.shape == (3, 3)
        b = host(base)
        inside = np.zeros((6, 8), bool)
        inside.T[2:5, ::2] = True
        assert (b[inside] != 0).all() and (b[~inside] == 0).all()
    ints = jtorch.zeros(5, 6, dtype=jtorch.int32, device=CUDA)
    ints[:, 1::2].random_(7, 9)
    h = host(ints)
    assert set(np.unique(h[:, 1::2])) <= {7, 8} and (h[:, ::2] == 0).all()


def test_empty_results_draw_nothing():
    jtorch.cuda.manual_seed(0)
    assert jtorch.rand(0, 3, device=CUDA).shape == (0, 3)
    jtorch.empty(0, device=CUDA).normal_()
    state = jtorch.cuda.get_rng_state().numpy().tobytes()
    assert int.from_bytes(state[8:], "little") == 0


# -- dropout --------------------------------------------------------------------------------------

def test_dropout_draws_its_mask_on_the_device():
    jtorch.cuda.manual_seed(31)
    x = jtorch.ones(2000, device=CUDA, requires_grad=True)
    y = F.dropout(x, 0.3, training=True)
    h = host(y.detach())
    assert set(np.unique(h).tolist()) <= {0.0, np.float32(1 / 0.7)}
    assert abs((h == 0).mean() - 0.3) < 0.04
    assert philox.DRAWS["bernoulli_"] == 1 and not eager.FALLBACKS.get("bernoulli_")
    y.sum().backward()
    np.testing.assert_array_equal(host(x.grad), h)  # the gradient is the scaled mask
    m = nn.Dropout(0.5).to(CUDA)
    z = jtorch.randn(64, device=CUDA)
    m.eval()
    np.testing.assert_array_equal(host(m(z)), host(z))
    m.train()
    out = host(m(z))
    kept = out != 0
    np.testing.assert_allclose(out[kept], 2 * host(z)[kept], rtol=1e-6)
    jtorch.cuda.manual_seed(31)
    again = host(F.dropout(jtorch.ones(2000, device=CUDA), 0.3))
    np.testing.assert_array_equal(again, h)
    f = host(F.dropout2d(jtorch.ones(4, 6, 3, 3, device=CUDA), 0.5))
    per_channel = f.reshape(24, 9)
    assert ((per_channel == 0).all(1) | (per_channel == 2.0).all(1)).all()


def test_fork_rng_restores_the_cuda_generators():
    jtorch.cuda.manual_seed(7)
    with jtorch.random.fork_rng():
        a = host(jtorch.rand(8, device=CUDA))
    b = host(jtorch.rand(8, device=CUDA))
    assert np.array_equal(a, b)
    with jtorch.random.fork_rng(devices=[]):  # the CPU generator only
        jtorch.rand(8, device=CUDA)
    assert not np.array_equal(host(jtorch.rand(8, device=CUDA)), b)
