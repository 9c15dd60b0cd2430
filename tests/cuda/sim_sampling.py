"""multinomial, randperm, poisson, binomial, _standard_gamma and _sample_dirichlet on CUDA
(``kernels/cuda/sampling.py``) in Numba's simulator: the values the stream definition gives
(recomputed here on the host), seeding and generator objects, independence from the launch
geometry and from the operands' layout, distributions, zero-probability categories,
permutations, the CPU's errors, and that none of them runs the CPU kernel over host copies.

Run by ``test_cuda_sampling.py`` in a subprocess with ``NUMBA_ENABLE_CUDASIM=1``. Sizes are a
few thousand draws at most (the simulator runs each thread as a Python thread); every seed is
fixed, and the bounds are chi-square p-values above 1e-4 or moments within 5 standard errors.
"""

import math
import os

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("runs under NUMBA_ENABLE_CUDASIM=1 (test_cuda_sampling.py starts it)",
                allow_module_level=True)

from scipy import special, stats

import jtorch
from jtorch.kernels.cuda import eager, philox, sampling

CUDA = "cuda"
DEVICE_OPS = ("multinomial", "randperm", "poisson", "binomial", "_standard_gamma",
              "_sample_dirichlet", "_standard_gamma_grad", "_dirichlet_grad")
_LO = 0xFFFFFFFF


@pytest.fixture(autouse=True)
def _fresh_counts():
    eager.FALLBACKS.clear()
    philox.DRAWS.clear()
    yield
    hosted = {k: v for k, v in eager.FALLBACKS.items() if k in DEVICE_OPS}
    assert not hosted, hosted  # every call drew on the device


def host(t) -> np.ndarray:
    assert t.device.type == "cuda", t.device
    return t.cpu().numpy()


def cuda_t(values, dtype=jtorch.float32):
    return jtorch.tensor(values, dtype=dtype, device=CUDA)


# -- the stream, recomputed on the host --------------------------------------------------------

def _key(seed: int, offset: int = 0) -> tuple:
    return tuple(np.uint64(v) for v in (seed & _LO, seed >> 32, offset & _LO, offset >> 32))


def _words(blk: int, key: tuple) -> tuple:
    k0, k1, c0, c1 = key
    return tuple(int(w) for w in philox.philox(np.uint64(blk & _LO), np.uint64(blk >> 32), c0, c1,
                                               k0, k1))


def _pairs64(count: int, key: tuple) -> np.ndarray:
    """The 64-bit word pair of each of ``count`` elements (``per`` 2)."""
    out = []
    for b in range((count + 1) // 2):
        x0, x1, x2, x3 = _words(b, key)
        out += [x0 << 32 | x1, x2 << 32 | x3]
    return np.array(out[:count], dtype=np.uint64)


def _u53(count: int, key: tuple) -> np.ndarray:
    return (_pairs64(count, key) >> np.uint64(11)).astype(np.float64) * 2.0**-53


def test_multinomial_with_replacement_follows_the_stream():
    p = np.array([[0.1, 0.0, 0.6, 0.3, 0.0], [1.0, 2.0, 0.0, 3.0, 4.0]], np.float32)
    jtorch.cuda.manual_seed(21)
    got = host(jtorch.multinomial(cuda_t(p), 7, replacement=True))
    u = 1.0 - _u53(14, _key(21)).reshape(2, 7)
    for r in range(2):
        cum = np.cumsum(p[r], dtype=np.float32)
        cum = cum / cum[-1]
        cum[np.flatnonzero(p[r] > 0)[-1]:] = 1
        np.testing.assert_array_equal(got[r], np.searchsorted(cum, u[r], side="left"))


@pytest.mark.parametrize("k", [1, 3])
def test_multinomial_without_replacement_follows_the_stream(k):
    p = np.array([[0.1, 0.0, 0.6, 0.3], [1.0, 2.0, 5.0, 3.0]])
    jtorch.cuda.manual_seed(22)
    got = host(jtorch.multinomial(cuda_t(p, jtorch.float64), k))
    keys = p.reshape(-1) / -np.log(_u53(8, _key(22)) + 2.0**-54)
    want = np.argsort(-keys.reshape(2, 4), axis=1, kind="stable")[:, :k]
    np.testing.assert_array_equal(got, want)


def test_randperm_follows_the_stream():
    jtorch.cuda.manual_seed(23)
    got = host(jtorch.randperm(37, device=CUDA))
    keys = _pairs64(37, _key(23)) >> np.uint64(1)
    np.testing.assert_array_equal(got, np.lexsort((np.arange(37), keys)))


def test_rejection_samplers_follow_the_stream():
    """Element i of n takes block j n + i for its attempt j: the njit samplers on the host
    give the device's values."""
    rates = np.array([0.0, 0.3, 4.0, 9.5, 10.0, 55.0, 1e4], np.float64)
    alphas = np.array([0.05, 0.5, 1.0, 3.0, 40.0, 0.0, np.nan], np.float64)
    counts = np.array([0.0, 5.0, 20.0, 100.0, 100.0, 7.0, 1e3], np.float64)
    probs = np.array([0.5, 0.2, 0.3, 0.2, 0.95, 1.0, 0.7], np.float64)
    n = 7
    jtorch.cuda.manual_seed(2**40 + 5)  # a seed with both words
    pois = host(jtorch.poisson(cuda_t(rates, jtorch.float64)))
    gam = host(jtorch._standard_gamma(cuda_t(alphas, jtorch.float64)))
    bino = host(jtorch.binomial(cuda_t(counts, jtorch.float64), cuda_t(probs, jtorch.float64)))
    s = 2**40 + 5
    tiny = np.finfo(np.float64).tiny
    for i in range(n):
        assert pois[i] == sampling.poisson_one(rates[i], i, n, *_key(s, 0))
        g = sampling.gamma_one(alphas[i], i, n, *_key(s, 4))
        assert gam[i] == (g if g >= tiny else tiny)
        assert bino[i] == sampling.binomial_one(counts[i], probs[i], i, n, *_key(s, 8))


# -- seeding and generators ----------------------------------------------------------------------

def _all_ops(gen=None) -> list:
    p = cuda_t([[0.2, 0.0, 0.5, 0.3], [1.0, 1.0, 1.0, 1.0], [0.0, 0.0, 0.0, 2.0]])
    rate = cuda_t([[0.5, 3.0, 12.0], [40.0, 0.0, 7.0]])
    alpha = cuda_t([0.3, 1.0, 2.0, 9.0, 0.05], jtorch.float64)
    return [host(x) for x in (
        jtorch.multinomial(p, 9, replacement=True, generator=gen),
        jtorch.multinomial(p, 3, generator=gen),
        jtorch.multinomial(p[0], 1, generator=gen),
        jtorch.randperm(29, device=CUDA, generator=gen),
        jtorch.randperm(11, device=CUDA, dtype=jtorch.int16, generator=gen),
        jtorch.poisson(rate, generator=gen),
        jtorch.binomial(cuda_t([[10.0], [200.0]]), cuda_t([0.1, 0.5, 0.97]).expand(2, 3),
                        generator=gen),
        jtorch._standard_gamma(alpha, generator=gen),
        jtorch._sample_dirichlet(alpha.reshape(1, 5).expand(2, 5), generator=gen),
    )]


def _assert_same(a: list, b: list) -> None:
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_manual_seed_reproduces_and_seeds_differ():
    jtorch.cuda.manual_seed(5)
    a = _all_ops()
    b = _all_ops()  # later calls: other offsets
    jtorch.cuda.manual_seed(5)
    _assert_same(_all_ops(), a)
    _assert_same(_all_ops(), b)
    assert not all(np.array_equal(x, y) for x, y in zip(a, b))
    jtorch.manual_seed(5)  # the global seed reaches the CUDA generator
    _assert_same(_all_ops(), a)
    jtorch.cuda.manual_seed(6)
    assert not all(np.array_equal(x, y) for x, y in zip(_all_ops(), a))
    for name in DEVICE_OPS[:-2]:  # (the gradients draw nothing)
        assert philox.DRAWS[name] > 0


def test_each_call_advances_the_offset_by_four():
    jtorch.cuda.manual_seed(0)
    jtorch.multinomial(cuda_t([0.5, 0.5]), 4, replacement=True)
    jtorch.randperm(5, device=CUDA)
    jtorch.poisson(cuda_t([1.0]))
    assert jtorch.cuda.default_generators[0].get_offset() == 12


def test_generator_objects():
    g = jtorch.Generator(device=CUDA).manual_seed(17)
    a = _all_ops(g)
    g2 = jtorch.Generator(device=CUDA).manual_seed(17)
    _assert_same(_all_ops(g2), a)
    s = g.get_state()
    c = _all_ops(g)
    g.set_state(s)
    _assert_same(_all_ops(g), c)
    # a generator's draws leave the default stream alone, and equal it at the same state
    jtorch.cuda.manual_seed(17)
    _assert_same(_all_ops(), a)
    jtorch.cuda.manual_seed(3)
    d = _all_ops()
    jtorch.cuda.manual_seed(3)
    _all_ops(jtorch.Generator(device=CUDA).manual_seed(99))
    _assert_same(_all_ops(), d)


def test_cpu_generator_with_cuda_operands_is_torchs_error():
    g = jtorch.Generator()
    msg = "Expected a 'cuda' device type for generator"
    with pytest.raises(RuntimeError, match=msg):
        jtorch.multinomial(cuda_t([0.5, 0.5]), 1, generator=g)
    with pytest.raises(RuntimeError, match=msg):
        jtorch.randperm(4, device=CUDA, generator=g)
    with pytest.raises(RuntimeError, match=msg):
        jtorch.poisson(cuda_t([1.0]), generator=g)
    with pytest.raises(RuntimeError, match=msg):
        jtorch.binomial(cuda_t([1.0]), cuda_t([0.5]), generator=g)
    with pytest.raises(RuntimeError, match=msg):
        jtorch._standard_gamma(cuda_t([1.0]), generator=g)


# -- launch geometry and layout -------------------------------------------------------------------

@pytest.mark.parametrize(("threads", "blocks"), [(1, 1), (3, 5), (32, 1)])
def test_values_do_not_depend_on_the_launch_geometry(monkeypatch, threads, blocks):
    jtorch.cuda.manual_seed(123)
    want = _all_ops()
    monkeypatch.setattr(sampling, "THREADS", threads)
    monkeypatch.setattr(sampling, "MAX_BLOCKS", blocks)
    jtorch.cuda.manual_seed(123)
    _assert_same(_all_ops(), want)


def test_values_follow_the_logical_index_not_the_layout():
    rng = np.random.default_rng(0)
    p = rng.random((4, 6)).astype(np.float32)
    rate = (rng.random((5, 3)) * 20).astype(np.float32)
    for fn in (lambda x: jtorch.multinomial(x, 8, replacement=True),
               lambda x: jtorch.multinomial(x, 4),
               lambda x: jtorch.multinomial(x, 1)):
        jtorch.cuda.manual_seed(9)
        dense = host(fn(cuda_t(p)))
        jtorch.cuda.manual_seed(9)
        view = cuda_t(p.T.copy()).t()
        assert not view.is_contiguous()
        np.testing.assert_array_equal(host(fn(view)), dense)
    jtorch.cuda.manual_seed(9)
    dense = host(jtorch.poisson(cuda_t(rate)))
    jtorch.cuda.manual_seed(9)
    np.testing.assert_array_equal(host(jtorch.poisson(cuda_t(rate.T.copy()).t())), dense)
    jtorch.cuda.manual_seed(9)
    dense = host(jtorch._standard_gamma(cuda_t(np.full((3, 4), 2.5, np.float32))))
    jtorch.cuda.manual_seed(9)
    np.testing.assert_array_equal(host(jtorch._standard_gamma(cuda_t([2.5]).expand(3, 4))), dense)


# -- multinomial ------------------------------------------------------------------------------

def _chi2_ok(counts: np.ndarray, probs: np.ndarray) -> None:
    keep = probs > 0
    total = counts.sum()
    assert (counts[~keep] == 0).all(), counts
    expected = probs[keep] / probs[keep].sum() * total
    chi2 = ((counts[keep] - expected) ** 2 / expected).sum()
    pval = stats.chi2.sf(chi2, keep.sum() - 1)
    assert pval > 1e-4, (counts, expected, pval)


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64, jtorch.float16])
def test_multinomial_with_replacement_distribution(dtype):
    w = np.array([[0.0, 3.0, 1.0, 0.0, 6.0, 2.0, 0.0], [5.0, 0.0, 0.0, 1.0, 1.0, 1.0, 2.0]])
    jtorch.cuda.manual_seed(31)
    got = host(jtorch.multinomial(cuda_t(w, dtype), 1500, replacement=True))
    assert got.shape == (2, 1500) and got.dtype == np.int64
    for r in range(2):
        _chi2_ok(np.bincount(got[r], minlength=7), w[r])
    one_d = host(jtorch.multinomial(cuda_t(w[0], dtype), 1500, replacement=True))
    assert one_d.shape == (1500,)
    _chi2_ok(np.bincount(one_d, minlength=7), w[0])


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64, jtorch.float16])
def test_multinomial_without_replacement_distribution(dtype):
    """The first draw follows p; the pair (first, second) follows p_a p_b / (1 - p_a); the k
    draws of a row are distinct."""
    p = np.array([0.1, 0.0, 0.2, 0.3, 0.4])
    jtorch.cuda.manual_seed(32)
    rows = 600
    got = host(jtorch.multinomial(cuda_t(np.tile(p, (rows, 1)), dtype), 3))
    assert got.shape == (rows, 3)
    assert all(len(set(r)) == 3 for r in got.tolist())
    assert (got != 1).all()  # three positive categories remain for three draws
    _chi2_ok(np.bincount(got[:, 0], minlength=5), p)
    pairs = np.zeros((5, 5))
    np.add.at(pairs, (got[:, 0], got[:, 1]), 1)
    want = np.array([[p[a] * p[b] / (1 - p[a]) if a != b else 0.0 for b in range(5)]
                     for a in range(5)])
    _chi2_ok(pairs.reshape(-1), want.reshape(-1))
    first = host(jtorch.multinomial(cuda_t(np.tile(p, (rows, 1)), dtype), 1))
    assert first.shape == (rows, 1)
    _chi2_ok(np.bincount(first[:, 0], minlength=5), p)


def test_multinomial_zero_probabilities_are_never_drawn():
    """Leading, inner and trailing zeros, beside tiny probabilities (float32 running sums that
    round below 1 before the last category)."""
    w = np.array([[0.0, 1e-30, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0, 1.0],
                  [1.0, 0.1, 0.7, 1e-7, 0.0], [0.3, 0.0, 0.0, 0.0, 0.0]], np.float32)
    jtorch.cuda.manual_seed(33)
    for dtype in (jtorch.float32, jtorch.float16, jtorch.float64):
        got = host(jtorch.multinomial(cuda_t(w, dtype), 500, replacement=True))
        assert (np.take_along_axis(w, got, 1) > 0).all()
        assert (got[1] == 4).all() and (got[3] == 0).all()
    got = host(jtorch.multinomial(cuda_t(w), 2))
    assert got[0].tolist() in ([3, 1], [1, 3]) and got[1, 0] == 4 and got[3, 0] == 0
    # more draws than positive categories: the zeros come after, in index order
    got = host(jtorch.multinomial(cuda_t(w), 5))
    assert got[1].tolist() == [4, 0, 1, 2, 3] and got[3].tolist() == [0, 1, 2, 3, 4]
    assert sorted(got[0, :2].tolist()) == [1, 3] and got[0, 2:].tolist() == [0, 2, 4]


def _message(fn) -> str:
    with pytest.raises(RuntimeError) as e:
        fn()
    return str(e.value)


ERROR_ROWS = [
    [[0.2, -0.1, 0.5]], [[0.2, math.nan, 0.5]], [[0.2, math.inf, 0.5]], [[0.0, 0.0, 0.0]],
    [[0.0, 0.0, 0.0], [1.0, -1.0, 0.0]], [[1.0, 2.0, 1.0], [1.0, math.inf, -1.0]],
    [[1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [1.0, math.nan, 1.0]], [[math.nan, 0.0, -1.0]],
    [[1.0, 1.0, 1.0, 0.0, math.inf, -1.0], [1.0, 1.0, -1.0, 1.0, 1.0, math.inf]],
]


@pytest.mark.parametrize("replacement", [True, False])
@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("rows", ERROR_ROWS)
def test_multinomial_errors_match_the_cpu(rows, k, replacement):
    for dtype in (jtorch.float32, jtorch.float64, jtorch.float16):
        want = _message(lambda: jtorch.multinomial(jtorch.tensor(rows, dtype=dtype), k,
                                                   replacement=replacement))
        x = cuda_t(rows, dtype)
        jtorch.cuda.manual_seed(0)
        assert _message(lambda: jtorch.multinomial(x, k, replacement=replacement)) == want
        row = rows[-1]  # a bad row, 1-d
        assert _message(lambda: jtorch.multinomial(x[-1], k, replacement=replacement)) == \
            _message(lambda: jtorch.multinomial(jtorch.tensor(row, dtype=dtype), k,
                                                replacement=replacement))
        assert jtorch.cuda.default_generators[0].get_offset() == 0  # nothing drawn


@pytest.mark.parametrize("chunk", [1, 2, 3])
def test_multinomial_running_sums_in_chunks(monkeypatch, chunk):
    """With replacement, rows summed in chunks of any length give the same draws (integer
    weights: every sum exact), never a zero-probability category, and the first bad entry's
    error."""
    w = np.array([[0, 3, 1, 0, 0, 6, 2, 0, 5], [2, 0, 0, 0, 1, 1, 0, 4, 0]], np.float32)
    jtorch.cuda.manual_seed(34)
    want = host(jtorch.multinomial(cuda_t(w), 40, replacement=True))
    monkeypatch.setattr(sampling, "CHUNK", chunk)
    jtorch.cuda.manual_seed(34)
    np.testing.assert_array_equal(host(jtorch.multinomial(cuda_t(w), 40, replacement=True)),
                                  want)
    test_multinomial_zero_probabilities_are_never_drawn()
    for rows in ERROR_ROWS:
        cpu = _message(lambda: jtorch.multinomial(jtorch.tensor(rows), 3, replacement=True))
        assert _message(lambda: jtorch.multinomial(cuda_t(rows), 3, replacement=True)) == cpu


def test_multinomial_argument_errors_match_the_cpu():
    cases = [
        (jtorch.ones(2, 2, 2), 1, False), (jtorch.ones(3), 0, True), (jtorch.ones(3), 4, False),
        (jtorch.ones(3, dtype=jtorch.int64), 1, True),
    ]
    for x, k, rep in cases:
        want = _message(lambda: jtorch.multinomial(x, k, replacement=rep))
        assert _message(lambda: jtorch.multinomial(x.to(CUDA), k, replacement=rep)) == want


def test_multinomial_empty_and_single_category():
    jtorch.cuda.manual_seed(0)
    e = jtorch.multinomial(jtorch.ones(0, 4, device=CUDA), 3, replacement=True)
    assert e.shape == (0, 3) and e.device.type == "cuda"
    assert host(jtorch.multinomial(cuda_t([[2.0]]), 4, replacement=True)).tolist() == [[0] * 4]
    assert host(jtorch.multinomial(cuda_t([2.0]), 1)).tolist() == [0]
    assert host(cuda_t([0.0, 2.0]).multinomial(1)).tolist() == [1]  # the Tensor method
    for rep, k in ((True, 2), (True, 1)):  # no categories: the CPU's error
        want = _message(lambda: jtorch.multinomial(jtorch.ones(2, 0), k, replacement=rep))
        assert _message(lambda: jtorch.multinomial(jtorch.ones(2, 0, device=CUDA), k,
                                                   replacement=rep)) == want


def test_multinomial_bfloat16_takes_the_host_path():
    jtorch.cuda.manual_seed(0)
    got = host(jtorch.multinomial(cuda_t([0.0, 1.0, 3.0], jtorch.bfloat16), 50, replacement=True))
    assert got.shape == (50,) and set(got.tolist()) <= {1, 2}
    assert eager.FALLBACKS["multinomial"] == 1
    eager.FALLBACKS.clear()


# -- randperm ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [jtorch.int64, jtorch.int32, jtorch.int16, jtorch.int8,
                                   jtorch.uint8, jtorch.float16, jtorch.float32,
                                   jtorch.float64])
def test_randperm_is_a_permutation_in_every_dtype(dtype):
    jtorch.cuda.manual_seed(41)
    for n in (0, 1, 2, 3, 17, 100):
        r = jtorch.randperm(n, device=CUDA, dtype=dtype)
        assert r.dtype == dtype and r.shape == (n,) and r.device.type == "cuda"
        np.testing.assert_array_equal(np.sort(host(r).astype(np.int64)), np.arange(n))
    # the largest n each 16-bit-or-smaller dtype holds
    top = {jtorch.int8: 128, jtorch.uint8: 256, jtorch.float16: 2049}.get(dtype)
    if top is not None:
        r = host(jtorch.randperm(top, device=CUDA, dtype=dtype)).astype(np.int64)
        np.testing.assert_array_equal(np.sort(r), np.arange(top))


def test_randperm_looks_uniform():
    """Over a permutation of 2000: Spearman's rank correlation ~ N(0, 1/n), the inversion
    count ~ N(n(n-1)/4, n(n-1)(2n+5)/72); over 300 permutations of 4, every position of
    each value equally likely."""
    jtorch.cuda.manual_seed(42)
    n = 2000
    r = host(jtorch.randperm(n, device=CUDA))
    rho = np.corrcoef(np.arange(n), r)[0, 1]
    assert abs(rho) < 5 / math.sqrt(n)
    inv = sum(int((r[i + 1:] < r[i]).sum()) for i in range(n))
    mean, sd = n * (n - 1) / 4, math.sqrt(n * (n - 1) * (2 * n + 5) / 72)
    assert abs(inv - mean) < 5 * sd
    counts = np.zeros((4, 4))
    for _ in range(75):
        big = host(jtorch.randperm(4, device=CUDA))
        counts[np.arange(4), big] += 1
    for v in range(4):
        _chi2_ok(counts[:, v], np.full(4, 0.25))


def test_randperm_errors_match_the_cpu():
    for n, dtype in ((-1, jtorch.int64), (129, jtorch.int8), (2050, jtorch.float16),
                     (3, jtorch.bool)):
        with pytest.raises((RuntimeError, NotImplementedError)) as cpu_err:
            jtorch.randperm(n, dtype=dtype)
        with pytest.raises(type(cpu_err.value)) as cuda_err:
            jtorch.randperm(n, dtype=dtype, device=CUDA)
        assert str(cuda_err.value) == str(cpu_err.value)


def test_randperm_bfloat16_takes_the_host_path():
    r = host(jtorch.randperm(9, device=CUDA, dtype=jtorch.bfloat16).long())
    np.testing.assert_array_equal(np.sort(r), np.arange(9))
    assert eager.FALLBACKS["randperm"] == 1
    eager.FALLBACKS.clear()


# -- poisson, binomial, gamma -------------------------------------------------------------------

def _moments_ok(x: np.ndarray, mean: float, var: float, mu4: float) -> None:
    """Sample mean and variance within 5 standard errors (mu4: the fourth central moment)."""
    m = x.size
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / m) + 1e-12, (x.mean(), mean)
    assert abs(x.var() - var) < 5 * math.sqrt(max(mu4 - var * var, 0.0) / m) + 1e-12, \
        (x.var(), var)


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64, jtorch.float16])
def test_poisson_moments(dtype):
    """Products of uniforms below rate 10, PTRS from 10 on."""
    rates = [0.0, 0.3, 4.0, 9.9, 10.0, 37.5, 800.0]
    m = 400
    x = cuda_t(np.repeat(rates, m).reshape(len(rates), m), dtype)
    jtorch.cuda.manual_seed(51)
    got = host(jtorch.poisson(x))
    assert got.dtype == np.dtype(dtype.np)
    g = got.astype(np.float64)
    assert (g == np.round(g)).all() and (g >= 0).all()
    assert (g[0] == 0).all()
    for lam, row in zip(host(x)[1:, 0].astype(np.float64), g[1:]):
        _moments_ok(row, lam, lam, lam * (1 + 3 * lam))


def test_poisson_small_rate_distribution():
    jtorch.cuda.manual_seed(52)
    got = host(jtorch.poisson(cuda_t(np.full(2000, 2.5), jtorch.float64))).astype(np.int64)
    counts = np.bincount(np.minimum(got, 9), minlength=10).astype(np.float64)
    probs = stats.poisson.pmf(np.arange(10), 2.5)
    probs[-1] = stats.poisson.sf(8, 2.5)  # the tail: 9 and above
    _chi2_ok(counts, probs)


def test_poisson_errors_and_infinite_rate():
    msg = "invalid Poisson rate, expected rate to be non-negative"
    for bad in ([1.0, -0.5], [math.nan, 1.0]):
        with pytest.raises(RuntimeError, match=msg):
            jtorch.poisson(jtorch.tensor(bad))
        jtorch.cuda.manual_seed(0)
        with pytest.raises(RuntimeError, match=msg):
            jtorch.poisson(cuda_t(bad))
        assert jtorch.cuda.default_generators[0].get_offset() == 0  # nothing drawn
    cpu = jtorch.poisson(jtorch.tensor([math.inf], dtype=jtorch.float64)).numpy()
    np.testing.assert_array_equal(host(jtorch.poisson(cuda_t([math.inf], jtorch.float64))), cpu)
    e = jtorch.poisson(jtorch.ones(0, 3, device=CUDA))
    assert e.shape == (0, 3)


def test_poisson_bfloat16_takes_the_host_path():
    got = host(jtorch.poisson(cuda_t([1.0, 2.0], jtorch.bfloat16)).float())
    assert (got >= 0).all()
    assert eager.FALLBACKS["poisson"] == 1
    eager.FALLBACKS.clear()


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
def test_binomial_moments_and_edges(dtype):
    """Inversion (n p < 10) and BTRS (n p >= 10), p above and below 1/2, broadcast counts."""
    cases = [(5.0, 0.3), (30.0, 0.2), (50.0, 0.5), (200.0, 0.1), (1000.0, 0.97), (12.0, 0.9),
             (7.0, 0.999)]
    m = 400
    counts = np.repeat([c for c, _ in cases], m).reshape(-1, m)
    probs = np.repeat([p for _, p in cases], m).reshape(-1, m)
    jtorch.cuda.manual_seed(61)
    got = host(jtorch.binomial(cuda_t(counts, dtype), cuda_t(probs, dtype))).astype(np.float64)
    assert (got == np.round(got)).all() and (got >= 0).all() and (got <= counts).all()
    for (n, p), row in zip(cases, got):
        var = n * p * (1 - p)
        _moments_ok(row, n * p, var, 3 * var * var + var * (1 - 6 * p * (1 - p)))
    edge = host(jtorch.binomial(cuda_t([0.0, 5.0, 5.0, math.nan, 4.0, -2.0], dtype),
                                cuda_t([0.5, 0.0, 1.0, 0.5, math.nan, 0.5], dtype)))
    want = jtorch.binomial(jtorch.tensor([0.0, 5.0, 5.0, math.nan, 4.0, -2.0], dtype=dtype),
                           jtorch.tensor([0.5, 0.0, 1.0, 0.5, math.nan, 0.5], dtype=dtype))
    np.testing.assert_array_equal(edge, want.numpy())
    bc = host(jtorch.binomial(cuda_t([[20.0]], dtype).expand(3, 300), cuda_t([0.25], dtype)
                              .expand(3, 300)))
    _moments_ok(bc.reshape(-1).astype(np.float64), 5.0, 3.75, 3 * 3.75**2 + 3.75 * (1 - 6 * 0.1875))


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
def test_standard_gamma_moments(dtype):
    """Mean alpha, variance alpha, E[log x] = digamma(alpha) (var trigamma), the alpha < 1
    boost included; alpha 0 gives the smallest normal of the dtype."""
    alphas = [0.05, 0.4, 1.0, 2.5, 12.0, 150.0]
    m = 400
    jtorch.cuda.manual_seed(71)
    got = host(jtorch._standard_gamma(cuda_t(np.repeat(alphas, m).reshape(-1, m), dtype)))
    tiny = np.finfo(got.dtype).tiny
    assert (got >= tiny).all()
    g = got.astype(np.float64)
    for a, row in zip(alphas, g):
        _moments_ok(row, a, a, 3 * a * a + 6 * a)
        lg = np.log(row)
        trig = float(special.polygamma(1, a))
        assert abs(lg.mean() - special.digamma(a)) < 5 * math.sqrt(trig / m)
    zero = host(jtorch._standard_gamma(cuda_t([0.0, -1.0, math.nan], dtype)))
    np.testing.assert_array_equal(zero, np.full(3, tiny, zero.dtype))


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
def test_sample_dirichlet_rows_are_dirichlet_draws(dtype):
    """Rows sum to 1 and hold Dirichlet(alpha)'s means and variances; entries stay in
    [smallest normal, the float below 1] of the dtype; batch dims and a 1-d alpha too."""
    alpha = np.array([0.3, 1.0, 2.5, 6.0])
    a0 = alpha.sum()
    m = 500
    jtorch.cuda.manual_seed(73)
    got = host(jtorch._sample_dirichlet(cuda_t(np.tile(alpha, (m, 1)), dtype)))
    assert got.dtype == (np.float32 if dtype is jtorch.float32 else np.float64)
    info = np.finfo(got.dtype)
    assert (got >= info.tiny).all() and (got < 1).all()
    np.testing.assert_allclose(got.astype(np.float64).sum(1), 1.0,
                               atol=8 * info.eps)
    g = got.astype(np.float64)
    for k, a in enumerate(alpha):
        mean, var = a / a0, a * (a0 - a) / (a0 * a0 * (a0 + 1))
        assert abs(g[:, k].mean() - mean) < 5 * math.sqrt(var / m)
    batched = host(jtorch._sample_dirichlet(cuda_t(np.full((2, 3, 5), 1.5), dtype)))
    assert batched.shape == (2, 3, 5)
    np.testing.assert_allclose(batched.astype(np.float64).sum(-1), 1.0, atol=8 * info.eps)
    one = host(jtorch._sample_dirichlet(cuda_t([2.0, 3.0], dtype)))
    assert one.shape == (2,) and abs(float(one.sum()) - 1) < 8 * info.eps
    assert host(jtorch._sample_dirichlet(cuda_t(np.zeros((0, 3)), dtype))).shape == (0, 3)
    assert philox.DRAWS["_sample_dirichlet"] == 3  # (an empty alpha draws nothing)


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
def test_standard_gamma_grad_is_the_cpu_kernels(dtype):
    """The three regimes (x < 0.8, alpha > 8, the rational approximation) and broadcasting:
    bitwise the CPU's in the simulator (one float64 function per element)."""
    alpha = np.array([[0.3], [1.7], [9.0], [40.0]])
    x = np.array([0.05, 0.5, 0.9, 2.0, 9.5, 38.0])
    want = jtorch._standard_gamma_grad(jtorch.tensor(alpha, dtype=dtype),
                                       jtorch.tensor(x, dtype=dtype))
    got = host(jtorch._standard_gamma_grad(cuda_t(alpha, dtype), cuda_t(x, dtype)))
    assert got.shape == (4, 6)
    np.testing.assert_array_equal(got, want.numpy())


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
def test_dirichlet_grad_is_the_cpu_kernels(dtype):
    """Every branch (small x, x near 1, both concentrations large, the rational correction),
    broadcast: bitwise the CPU's in the simulator."""
    x = np.array([0.02, 0.3, 0.6, 0.97, 0.45])
    alpha = np.array([[0.5], [2.0], [9.0]])
    total = np.array([[3.0], [4.5], [20.0]])
    want = jtorch._dirichlet_grad(*(jtorch.tensor(v, dtype=dtype) for v in (x, alpha, total)))
    got = host(jtorch._dirichlet_grad(*(cuda_t(v, dtype) for v in (x, alpha, total))))
    assert got.shape == (3, 5)
    np.testing.assert_array_equal(got, want.numpy())


def test_gamma_rsample_gradients_on_the_device():
    jtorch.cuda.manual_seed(75)
    conc = cuda_t([0.7, 3.0]).requires_grad_()
    s = jtorch.distributions.Gamma(conc, cuda_t([1.0, 1.0])).rsample((50,))
    s.sum().backward()
    g = host(conc.grad)
    assert g.shape == (2,) and np.isfinite(g).all() and (g > 0).all()
    c = cuda_t([1.5, 2.0, 4.0]).requires_grad_()
    jtorch.distributions.Dirichlet(c).rsample((20,))[:, 0].sum().backward()
    assert np.isfinite(host(c.grad)).all()


def test_dirichlet_and_beta_distributions_sample_on_the_device():
    jtorch.cuda.manual_seed(74)
    s = host(jtorch.distributions.Dirichlet(cuda_t([2.0, 3.0, 5.0])).sample((400,)))
    assert s.shape == (400, 3)
    np.testing.assert_allclose(s.sum(1), 1.0, atol=1e-5)
    assert abs(s[:, 2].mean() - 0.5) < 5 * math.sqrt(0.5 * 0.5 / 11 / 400)
    b = host(jtorch.distributions.Beta(cuda_t([2.0]), cuda_t([6.0])).sample((400,)))
    assert (b > 0).all() and (b < 1).all()
    assert abs(b.mean() - 0.25) < 5 * math.sqrt(0.25 * 0.75 / 9 / 400)


def test_gamma_distributions_sample_on_the_device():
    jtorch.cuda.manual_seed(72)
    d = jtorch.distributions.Gamma(cuda_t([2.0, 0.5]), cuda_t([1.0, 4.0]))
    s = host(d.sample((600,)))
    assert s.shape == (600, 2) and (s > 0).all()
    _moments_ok(s[:, 0].astype(np.float64), 2.0, 2.0, 3 * 4 + 12)
    _moments_ok(s[:, 1].astype(np.float64), 0.125, 0.5 / 16, (3 * 0.25 + 3) / 256)
    p = host(jtorch.distributions.Poisson(cuda_t([3.0])).sample((500,)))
    _moments_ok(p.astype(np.float64).reshape(-1), 3.0, 3.0, 3 * 10)
    assert philox.DRAWS["_standard_gamma"] == 1 and philox.DRAWS["poisson"] == 1


def _chi2_counts_ok(draws: np.ndarray, dist) -> None:
    """Chi-square of integer ``draws`` against scipy's ``dist`` over its central 99% (the
    tails pooled into the end bins)."""
    lo, hi = int(dist.ppf(0.005)), int(dist.ppf(0.995))
    hi = hi if hi > lo else lo + 1
    ks = np.arange(lo, hi + 1)
    c = np.array([(draws == k).sum() for k in ks], np.float64)
    c[0] += (draws < lo).sum()
    c[-1] += (draws > hi).sum()
    p = dist.pmf(ks)
    p[0], p[-1] = dist.cdf(lo), dist.sf(hi - 1)
    e = p * draws.size
    assert stats.chi2.sf(((c - e) ** 2 / e).sum(), ks.size - 1) > 1e-4, (c, e)


def test_sampler_distributions_at_scale():
    """The per-element samplers the kernels compile (njit, run here on the host) over 20000
    elements of one call: chi-square against the Poisson and binomial pmfs, Kolmogorov-Smirnov
    against the gamma cdf, every algorithm branch."""
    key = _key(2**33 + 77, 8)
    n = 20000
    for lam in (0.3, 4.0, 9.9, 10.0, 37.5, 800.0):
        d = np.array([sampling.poisson_one(lam, i, n, *key) for i in range(n)])
        _chi2_counts_ok(d, stats.poisson(lam))
    for cnt, p in ((5.0, 0.3), (30.0, 0.2), (50.0, 0.5), (200.0, 0.1), (1000.0, 0.97),
                   (12.0, 0.9), (7.0, 0.999), (100.0, 0.7)):
        d = np.array([sampling.binomial_one(cnt, p, i, n, *key) for i in range(n)])
        _chi2_counts_ok(d, stats.binom(cnt, p))
    for a in (0.05, 0.4, 1.0, 2.5, 12.0, 150.0):
        d = np.array([sampling.gamma_one(a, i, n, *key) for i in range(n)])
        assert stats.kstest(d, stats.gamma(a).cdf).pvalue > 1e-4, a
