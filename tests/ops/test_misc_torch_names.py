"""torch's remaining top-level names (ops/misc_numeric.py) against torch: gradient, histogram,
histogramdd, svd_lowrank, pca_lowrank, the ATen embedding_bag and embedding_renorm_, and the
whole-sequence recurrent forms lstm, gru, rnn_tanh, rnn_relu."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch


def _conv(lib, v):
    if isinstance(v, np.ndarray):
        return lib.from_numpy(v.copy())
    if isinstance(v, (list, tuple)):
        return type(v)(_conv(lib, e) for e in v)
    return v


def _both(name, args, kwargs=None):
    """``name`` run by torch and by jtorch on the same (NumPy-given) arguments: results or errors."""
    kwargs = kwargs or {}
    out = []
    for lib in (torch, jtorch):
        try:
            out.append(getattr(lib, name)(*_conv(lib, list(args)),
                                          **{k: _conv(lib, v) for k, v in kwargs.items()}))
        except Exception as e:  # noqa: BLE001 - the errors are compared
            out.append(e)
    return out


def _same_error(t, j):
    assert isinstance(t, Exception) and isinstance(j, Exception), (t, j)
    assert type(t) is type(j) and str(t) == str(j), (t, j)


def _same_tensor(a, b, exact=True, rtol=1e-6, atol=0.0):
    assert str(a.dtype) == str(b.dtype).replace("jtorch", "torch"), (a.dtype, b.dtype)
    assert tuple(a.shape) == tuple(b.shape), (a.shape, b.shape)
    if exact:
        np.testing.assert_array_equal(b.detach().numpy(), a.detach().numpy())
    else:
        np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=rtol, atol=atol)


# -- gradient ----------------------------------------------------------------------------------

_X3 = np.random.default_rng(0).standard_normal((4, 5, 3))
_GRADIENT_CASES = [
    (_X3, {}), (_X3, {"spacing": 2.0}), (_X3, {"spacing": [1.0, 2, 0.5]}), (_X3, {"dim": 1}),
    (_X3, {"dim": -1, "edge_order": 2}), (_X3, {"dim": [0, 2], "spacing": 3}),
    (_X3, {"dim": (2, 0), "spacing": [3, 0.25]}), (_X3, {"spacing": [2.0], "dim": 1}),
    (_X3, {"spacing": (np.array([0.0, 1, 3, 4.5]),), "dim": 0}),
    (_X3, {"spacing": (np.array([0.0, 1, 3, 4.5]), np.array([0, 0.5, 1, 3, 7.0]),
                       np.array([1.0, 2, 4])), "edge_order": 2}),
    (_X3.astype(np.float32), {"spacing": (np.array([0.0, 1, 3, 4.5]),), "dim": 0,
                              "edge_order": 2}),
    (np.array([1, 4, 9, 16]), {}), (np.array([1, 4, 9, 16]), {"edge_order": 2}),
    (np.array([[1, 4, 9], [2, 5, 7]]), {"spacing": (np.array([0, 1, 3]),), "dim": 1}),
    (_X3, {"spacing": 1j}), (_X3, {"spacing": None}), (np.ones((2, 0)), {"dim": 0}),
    (np.array(1.0), {}), (_X3[:, ::2, ::-1], {"edge_order": 2}),
    (np.array([1.0, np.nan, np.inf, 4.0, -np.inf]), {}),
]
_GRADIENT_ERRORS = [
    (_X3, {"edge_order": 3}), (_X3, {"spacing": [1.0, 2]}), (_X3, {"dim": (0, 0)}),
    (_X3, {"dim": 3}), (_X3[:2], {"edge_order": 2}), (_X3, {"spacing": [2.0, 1.0], "dim": 1}),
    (np.array([1, 2, 3], np.uint8), {}), (np.array([True, False, True]), {}),
    (_X3, {"spacing": (np.ones((2, 2)),), "dim": 0}), (np.array(1.0), {"dim": 0}),
    (np.ones((0, 3)), {}), (_X3, {"spacing": "a"}),
    (np.array([1.0, 2.0, 4.0]), {"spacing": [np.array(2.0)]}),
]


@pytest.mark.parametrize("case", range(len(_GRADIENT_CASES)))
def test_gradient_matches_torch(case):
    arr, kw = _GRADIENT_CASES[case]
    t, j = _both("gradient", (arr,), kw)
    assert type(j) is tuple and len(j) == len(t)
    for a, b in zip(t, j):
        _same_tensor(a, b)


@pytest.mark.parametrize("case", range(len(_GRADIENT_ERRORS)))
def test_gradient_errors_match_torch(case):
    arr, kw = _GRADIENT_ERRORS[case]
    _same_error(*_both("gradient", (arr,), kw))


def test_gradient_differentiates():
    x = np.random.default_rng(1).standard_normal((4, 5))
    coords = np.array([0.0, 0.5, 2.0, 2.5, 4.0])
    grads = []
    for lib in (torch, jtorch):
        xt = lib.from_numpy(x.copy()).requires_grad_()
        c = lib.from_numpy(coords.copy()).requires_grad_()
        g0, g1 = lib.gradient(xt, spacing=(lib.tensor([0.0, 1.0, 3.0, 4.0], dtype=lib.float64), c),
                              edge_order=2)
        grads.append([t.numpy() for t in lib.autograd.grad((g0 * g1).sum(), (xt, c))])
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)
    xt = jtorch.from_numpy(x.copy()).requires_grad_()
    assert jtorch.autograd.gradcheck(lambda t: jtorch.gradient(t, spacing=[0.5, 2.0]), (xt,))


# -- histogram and histogramdd -------------------------------------------------------------------

def _same_hist(t, j, exact=True):
    _same_tensor(t.hist, j.hist, exact, rtol=1e-5)
    te = t.bin_edges if isinstance(t.bin_edges, torch.Tensor) else list(t.bin_edges)
    je = j.bin_edges if isinstance(j.bin_edges, jtorch.Tensor) else list(j.bin_edges)
    for a, b in zip(te if isinstance(te, list) else [te], je if isinstance(je, list) else [je]):
        _same_tensor(a, b)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_histogram_puts_edge_values_where_torch_does(dtype):
    """Values on, just above and just below every edge of torch's linspace edges: the counts
    agree exactly (torch's interpolation with its local search over the edges)."""
    rng = np.random.default_rng(3)
    tdt = torch.float32 if dtype == np.float32 else torch.float64
    for _ in range(60):
        nb = int(rng.integers(1, 60))
        lo, hi = sorted(rng.standard_normal(2) * 10.0 ** rng.integers(-2, 3))
        edges = torch.linspace(lo, hi, nb + 1, dtype=tdt).numpy()
        vals = np.concatenate([edges, rng.uniform(lo, hi, 40).astype(dtype),
                               np.nextafter(edges, np.inf).astype(dtype),
                               np.nextafter(edges, -np.inf).astype(dtype)]).astype(dtype)
        rng.shuffle(vals)
        for args, kw in (((vals, nb), {"range": (float(lo), float(hi))}), ((vals, nb), {}),
                         ((vals, edges), {})):
            t, j = _both("histogram", args, kw)
            assert type(j).__name__ == "histogram"
            _same_hist(t, j)


def test_histogram_quantized_edges():
    """A range a few ulp wide: linspace's edges repeat, and interpolation alone would misplace
    values by several bins."""
    base = np.float32(1000.0)
    vals = (base + np.arange(-5, 6, dtype=np.float32) * np.spacing(base)).astype(np.float32)
    for nb in (10, 100, 1000):
        for v in (vals, vals.astype(np.float64)):
            _same_hist(*_both("histogram", (v, nb)))


def test_histogram_weights_density_layouts_and_out():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    w = rng.integers(0, 4, (6, 5)).astype(np.float32)
    _same_hist(*_both("histogram", (x, 7), {"weight": w}))
    _same_hist(*_both("histogram", (x.T, 7), {"weight": w.T, "density": True}), exact=False)
    _same_hist(*_both("histogram", (x, np.array([-1.0, 0.0, 0.5, 2.0], np.float32)),
                      {"weight": w, "density": True}), exact=False)
    _same_hist(*_both("histogram", (np.array(1.5, np.float32), 2)))
    _same_hist(*_both("histogram", (np.zeros(0, np.float32), 3)))
    _same_hist(*_both("histogram", (np.array([2.0, 2.0], np.float32), 2)))
    _same_hist(*_both("histogram", (np.array([3.0, 2.0, 1.0], np.float32),
                                    np.array([3.0, 2.0, 1.0], np.float32))))
    j = jtorch.histogram(jtorch.from_numpy(x), 3, range=(0.0, 1.0), out=(jtorch.empty(0),
                                                                         jtorch.empty(0)))
    t = torch.histogram(torch.from_numpy(x), 3, range=(0.0, 1.0), out=(torch.empty(0),
                                                                       torch.empty(0)))
    assert type(j).__name__ == type(t).__name__ == "histogram_out"
    _same_hist(t, j)
    jm = jtorch.from_numpy(x).histogram(4, range=(-1.0, 1.0))
    _same_hist(torch.from_numpy(x).histogram(4, range=(-1.0, 1.0)), jm)


_HIST_ERRORS = [
    ("histogram", (np.array([1, 2]), 3), {}),
    ("histogram", (np.array([1, 2]), 3), {"range": (0.0, 1.0)}),
    ("histogram", (np.array([1, 2]), np.array([0, 1, 2])), {}),
    ("histogram", (np.ones(3, np.float32), np.array([0.0, 1.5, 5.0])), {}),
    ("histogram", (np.ones(3, np.float32), 0), {}),
    ("histogram", (np.ones(3, np.float32), 3), {"range": (3.0, 0.0)}),
    ("histogram", (np.ones(3, np.float32), 3), {"range": (0.0, np.inf)}),
    ("histogram", (np.ones(3, np.float32), 3), {"range": (0.0, 1.0, 2.0)}),
    ("histogram", (np.array([1.0, np.nan], np.float32), 3), {}),
    ("histogram", (np.ones(3, np.float32), 3), {"weight": np.ones(3)}),
    ("histogram", (np.ones(3, np.float32), 3), {"weight": np.ones(2, np.float32)}),
    ("histogram", (np.ones(3, np.float32), np.ones((2, 2), np.float32)), {}),
    ("histogram", (np.ones(3, np.float32), np.ones(0, np.float32)), {}),
    ("histogram", (np.ones(3, np.float32), np.ones(1, np.float32)), {}),
    ("histogram", (np.ones(3, np.float32), 2.5), {}),
    ("histogramdd", (np.ones(2, np.float32), 2), {}),
    ("histogramdd", (np.ones((3, 2), np.float32), [3]), {}),
    ("histogramdd", (np.ones((3, 2), np.float32), [np.array([0.0, 1.0], np.float32)]), {}),
    ("histogramdd", (np.array([[1, 2]]), 2), {}),
    ("histogramdd", (np.ones((3, 2), np.float32), np.array([0.0, 1.0], np.float32)), {}),
    ("histogramdd", (np.ones((3, 2), np.float32), 2), {"weight": np.ones(4, np.float32)}),
    ("histogramdd", (np.ones((3, 2), np.float32), 2), {"range": [0.0, 1.0]}),
]


@pytest.mark.parametrize("case", range(len(_HIST_ERRORS)))
def test_histogram_errors_match_torch(case):
    name, args, kw = _HIST_ERRORS[case]
    _same_error(*_both(name, args, kw))


def test_histogramdd_matches_torch():
    rng = np.random.default_rng(5)
    for trial in range(40):
        dt = np.float32 if trial % 2 else np.float64
        d = int(rng.integers(1, 4))
        x = rng.integers(-3, 4, (int(rng.integers(0, 30)), d)).astype(dt) / 2
        bins = [int(b) for b in rng.integers(1, 6, d)]
        for args, kw, exact in (
                ((x, bins), {}, True), ((x, bins[0]), {"range": [-1.0, 1.0] * d}, True),
                ((x, bins), {"weight": rng.integers(0, 3, x.shape[0]).astype(dt)}, True),
                ((x, [np.sort(rng.uniform(-2, 2, 4)).astype(dt) for _ in range(d)]),
                 {"density": True}, False)):
            t, j = _both("histogramdd", args, kw)
            assert type(j).__name__ == "histogramdd" and isinstance(j.bin_edges, tuple)
            _same_hist(t, j, exact)
    x3 = rng.standard_normal((2, 3, 2)).astype(np.float32)
    _same_hist(*_both("histogramdd", (x3, 2), {"weight": np.ones((2, 3), np.float32)}))
    _same_hist(*_both("histogramdd", (np.ones((3, 0), np.float32), [])))
    edges = [jtorch.tensor([0.0, 1.0, 2.0])]
    assert jtorch.histogramdd(jtorch.ones(3, 1), edges).bin_edges[0] is edges[0]


def test_histogram_results_have_no_derivative():
    for lib in (torch, jtorch):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        res = lib.histogram(x, 3)
        assert res.hist.requires_grad and res.bin_edges.requires_grad
        assert type(res.hist.grad_fn).__name__ == "NotImplemented"
        with pytest.raises(RuntimeError, match="derivative for aten::histogram is not implemented"):
            res.hist.sum().backward()


# -- svd_lowrank and pca_lowrank -------------------------------------------------------------------

@pytest.mark.parametrize("shape,q,niter,dtype", [
    ((20, 8), 4, 2, np.float64), ((8, 20), 5, 3, np.float64), ((3, 12, 7), 6, 2, np.float64),
    ((30, 10), 3, 0, np.float32)])
def test_svd_lowrank_follows_torch_with_the_same_seed(shape, q, niter, dtype):
    """The same randn draws and steps: singular values and the rank-q product U S V^H agree
    with torch's to rounding (singular vectors up to sign: jtorch's LAPACK may choose other
    signs for the SVD of a wide matrix)."""
    a = np.random.default_rng(6).standard_normal(shape).astype(dtype)
    tol = 1e-10 if dtype == np.float64 else 2e-4
    for fn, kw in (("svd_lowrank", {"q": q, "niter": niter}), ("pca_lowrank", {"niter": niter})):
        outs = []
        for lib in (torch, jtorch):
            lib.manual_seed(3)
            u, s, v = getattr(lib, fn)(lib.from_numpy(a.copy()), **kw)
            outs.append((u.numpy(), s.numpy(), v.numpy()))
        (tu, ts, tv), (ju, js, jv) = outs
        assert ju.shape == tu.shape and js.shape == ts.shape and jv.shape == tv.shape
        np.testing.assert_allclose(js, ts, rtol=tol, atol=tol)
        np.testing.assert_allclose(np.abs(ju), np.abs(tu), rtol=tol, atol=tol)
        np.testing.assert_allclose((ju * js[..., None, :]) @ np.swapaxes(jv, -1, -2),
                                   (tu * ts[..., None, :]) @ np.swapaxes(tv, -1, -2),
                                   rtol=tol, atol=tol)


def test_svd_lowrank_reconstructs_a_low_rank_matrix():
    rng = np.random.default_rng(7)
    a = rng.standard_normal((40, 3)) @ rng.standard_normal((3, 25))
    m = rng.standard_normal(25)
    jtorch.manual_seed(0)
    u, s, v = jtorch.svd_lowrank(jtorch.from_numpy(a + m), q=5, M=jtorch.from_numpy(m))
    approx = (u * s) @ v.T
    np.testing.assert_allclose(approx.numpy(), a, atol=1e-9)
    np.testing.assert_allclose((u.T @ u).numpy(), np.eye(5), atol=1e-12)
    u, s, v = jtorch.pca_lowrank(jtorch.from_numpy(a), q=3)
    centered = a - a.mean(0)
    np.testing.assert_allclose(((u * s) @ v.T).numpy(), centered, atol=1e-9)
    with pytest.raises(ValueError, match=r"q\(=9\) must be non-negative integer and not greater"):
        jtorch.pca_lowrank(jtorch.from_numpy(a[:8, :8]), q=9)
    with pytest.raises(ValueError, match=r"niter\(=-1\) must be non-negative integer"):
        jtorch.pca_lowrank(jtorch.from_numpy(a), niter=-1)


def test_lowrank_on_sparse_input_matches_dense():
    rng = np.random.default_rng(8)
    a = rng.standard_normal((12, 6)) * (rng.random((12, 6)) < 0.4)
    outs = []
    for sparse in (False, True):
        jtorch.manual_seed(1)
        x = jtorch.from_numpy(a.copy())
        outs.append(jtorch.pca_lowrank(x.to_sparse() if sparse else x, q=3)[1].numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-10)


# -- embedding_bag and embedding_renorm_ -------------------------------------------------------------

def _embedding_bag_cases():
    rng = np.random.default_rng(9)
    w32 = rng.standard_normal((6, 3)).astype(np.float32)
    for trial in range(150):
        n = int(rng.integers(0, 9))
        nb = int(rng.integers(0, 4))
        off = np.sort(rng.integers(0, n + 1, nb))
        if nb:
            off[0] = 0
        mode, incl = int(rng.integers(0, 3)), bool(rng.integers(0, 2))
        pad = [None, None, 2, -1][trial % 4]
        dt = np.float64 if trial % 3 == 1 else np.float32
        w = np.asfortranarray(w32.astype(dt)) if trial % 7 == 0 else w32.astype(dt)
        fast = dt is np.float32 and pad is None and mode < 2 and not w.flags.f_contiguous
        if nb - incl <= 0 and n > 0 and not fast:
            continue  # torch's slow kernels write to bag -1 there (a segfault)
        psw = rng.standard_normal(n).astype(dt) if mode == 0 and trial % 5 == 0 else None
        odt = np.int32 if trial % 6 == 0 else np.int64
        yield (w, rng.integers(0, 6, n).astype(odt), off.astype(odt), False, mode, False, psw,
               incl, pad)


@pytest.mark.parametrize("args", list(_embedding_bag_cases()))
def test_embedding_bag_aten_form_matches_torch(args):
    """(output, offset2bag, bag_size, max_indices) as torch's CPU kernels leave them, on both of
    their paths (fast: float32 sum/mean; slow: float64, strided weights, padding, max)."""
    t, j = _both("embedding_bag", args)
    if isinstance(t, Exception):
        _same_error(t, j)
        return
    assert isinstance(j, tuple) and len(j) == 4
    for k, (a, b) in enumerate(zip(t, j)):
        _same_tensor(a, b, exact=k > 0, rtol=1e-6, atol=1e-6)


def test_embedding_bag_max_with_nan_and_ties():
    w = np.array([[1.0, np.nan], [np.nan, 2.0], [3.0, 5.0], [3.0, 5.0]], np.float32)
    for idx, off in (([0, 1, 2, 3], [0]), ([1, 0, 3, 2], [0, 2])):
        t, j = _both("embedding_bag", (w, np.array(idx), np.array(off), False, 2, False, None,
                                       False, None))
        for a, b in zip(t, j):
            np.testing.assert_array_equal(b.numpy(), a.numpy())


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_embedding_bag_gradients_match_torch(mode):
    """Including scale_grad_by_freq, whose divisor torch reads per distinct index i at the i-th
    sorted index (sum and mean), and which max mode ignores."""
    w = np.random.default_rng(10).standard_normal((6, 3))
    for idx in ([0, 2, 4, 1, 3, 3, 5], [5, 5, 5, 1, 0, 0, 2]):
        for pad in (None, 3):
            for incl in (False, True):
                res = []
                for lib in (torch, jtorch):
                    weight = lib.from_numpy(w.copy()).requires_grad_()
                    psw = lib.arange(7.0, dtype=lib.float64).requires_grad_() if mode == 0 \
                        else None
                    out = lib.embedding_bag(weight, lib.tensor(idx), lib.tensor([0, 2, 2, 5]),
                                            True, mode, False, psw, incl, pad)
                    g = lib.from_numpy(np.linspace(-1, 1, out[0].numel()).reshape(
                        tuple(out[0].shape)))
                    wrt = [weight] + ([psw] if psw is not None else [])
                    res.append([x.numpy() for x in lib.autograd.grad(out[0], wrt, g)])
                for a, b in zip(*res):
                    np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


_EB_ERRORS = [
    (np.ones((5, 3)), np.array([0, 1]), np.array([0]), False, 1, False, None, False, 7),
    (np.ones((5, 3)), np.array([0, 1]), np.array([[0]]), False, 1, False, None, False, None),
    (np.ones(3), np.array([0, 1]), np.array([0]), False, 1, False, None, False, None),
    (np.ones((5, 3)), np.array([0, 1]), np.array([0.0]), False, 1, False, None, False, None),
    (np.ones((5, 3), np.int64), np.array([0]), np.array([0]), False, 0, False, None, False, None),
    (np.ones((5, 3)), np.array([0, 1]), np.array([1]), False, 1, False, None, False, None),
    (np.ones((5, 3)), np.array([0, 1]), np.array([0, 3]), False, 1, False, None, False, None),
    (np.ones((5, 3)), np.array([0, 1]), np.array([0]), False, 1, False, np.ones(2), False, None),
    (np.ones((5, 3)), np.array([0, 1]), np.array([0]), False, 0, False, np.ones(2, np.float32),
     False, None),
    (np.ones((5, 3)), np.array([0, 1]), np.array([0]), False, 0, False, np.ones(3), False, None),
    (np.ones((5, 3)), np.array([0, 1]), np.array([0]), False, 3, False, None, False, None),
    (np.ones((5, 3)), np.array([0, 1]), np.zeros(0, np.int64), False, 1, False, None, True, None),
]


@pytest.mark.parametrize("case", range(len(_EB_ERRORS)))
def test_embedding_bag_errors_match_torch(case):
    _same_error(*_both("embedding_bag", _EB_ERRORS[case]))


def test_embedding_renorm_matches_torch():
    w = (np.random.default_rng(11).standard_normal((5, 3)) * 3).astype(np.float32)
    for p in (1.0, 2.0, 3.5):
        t = torch.from_numpy(w.copy())
        j = jtorch.from_numpy(w.copy())
        rt = torch.embedding_renorm_(t, torch.tensor([0, 2, 2, 4]), 2.0, p)
        rj = jtorch.embedding_renorm_(j, jtorch.tensor([0, 2, 2, 4]), 2.0, p)
        assert rj is j and rt is t
        np.testing.assert_allclose(j.numpy(), t.numpy(), rtol=3e-7)
    for args in ((w[0], np.array([0])), (w, np.array([0.0])),):
        _same_error(*_both("embedding_renorm_", (*args, 1.0, 2.0)))
    for lib in (torch, jtorch):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
            lib.embedding_renorm_(lib.ones(2, 2, requires_grad=True), lib.tensor([0]), 1.0, 2.0)


# -- lstm, gru, rnn_tanh, rnn_relu ----------------------------------------------------------------

_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _rnn_params(rng, gates, layers, ndir, bias, proj, dtype, inp=2, hidden=3):
    ps = []
    for layer in range(layers):
        for _ in range(ndir):
            size_in = inp if layer == 0 else (proj or hidden) * ndir
            ps += [rng.standard_normal((gates * hidden, size_in)),
                   rng.standard_normal((gates * hidden, proj or hidden))]
            if bias:
                ps += [rng.standard_normal(gates * hidden), rng.standard_normal(gates * hidden)]
            if proj:
                ps += [rng.standard_normal((proj, hidden))]
    return [p.astype(dtype) for p in ps]


@pytest.mark.parametrize("name", list(_GATES))
@pytest.mark.parametrize("packed", [False, True])
def test_recurrent_aten_forms_match_torch(name, packed):
    """Outputs and gradients (input and every parameter), over layers, directions, biases,
    batch_first, dtypes and (LSTM) projections, padded and packed."""
    rng = np.random.default_rng(12)
    for layers, bidir, bias, batch_first, dtype, proj in [
            (1, False, True, False, np.float64, 0), (2, True, False, True, np.float64, 0),
            (2, False, True, True, np.float32, 0), (1, True, True, False, np.float32, 0),
            (2, True, True, False, np.float64, 2)]:
        if proj and name != "lstm":
            continue
        ndir = 2 if bidir else 1
        params = _rnn_params(rng, _GATES[name], layers, ndir, bias, proj, dtype)
        h = rng.standard_normal((layers * ndir, 2, proj or 3)).astype(dtype)
        c = rng.standard_normal((layers * ndir, 2, 3)).astype(dtype)
        x = rng.standard_normal((5, 2) if packed else (2, 4, 2) if batch_first else (4, 2, 2))
        x = x.astype(dtype)
        res = []
        for lib in (torch, jtorch):
            ps = [lib.from_numpy(p.copy()).requires_grad_() for p in params]
            hx = lib.from_numpy(h.copy())
            hx = (hx, lib.from_numpy(c.copy())) if name == "lstm" else hx
            xt = lib.from_numpy(x.copy()).requires_grad_()
            fn = getattr(lib, name)
            if packed:
                out = fn(xt, lib.tensor([2, 2, 1]), hx, ps, bias, layers, 0.0, False, bidir)
            else:
                out = fn(xt, hx, ps, bias, layers, 0.0, False, bidir, batch_first)
            assert isinstance(out, tuple) and len(out) == (3 if name == "lstm" else 2)
            grads = lib.autograd.grad(sum((o * o).sum() for o in out), [xt, *ps])
            res.append([o.detach().numpy() for o in out] + [g.numpy() for g in grads])
        tol = 1e-4 if dtype == np.float32 else 1e-10
        for a, b in zip(*res):
            assert a.shape == b.shape
            np.testing.assert_allclose(b, a, rtol=tol, atol=tol)


def test_recurrent_dropout_draws_as_torch():
    rng = np.random.default_rng(13)
    params = _rnn_params(rng, 3, 3, 1, True, 0, np.float64)
    x = rng.standard_normal((4, 2, 2))
    outs = []
    for lib in (torch, jtorch):
        lib.manual_seed(7)
        outs.append(lib.gru(lib.from_numpy(x.copy()), lib.zeros(3, 2, 3, dtype=lib.float64),
                            [lib.from_numpy(p.copy()) for p in params], True, 3, 0.5, True, False,
                            False)[0].numpy())
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-12, atol=1e-12)


def test_recurrent_errors_match_torch():
    rng = np.random.default_rng(14)
    x = rng.standard_normal((4, 2, 2))
    h = np.zeros((1, 2, 3))
    p3 = _rnn_params(rng, 3, 1, 1, True, 0, np.float64)
    p4 = _rnn_params(rng, 4, 1, 1, True, 0, np.float64)
    for name, args in [
            ("gru", (x, h, p3[:2], True, 1, 0.0, False, False, False)),
            ("gru", (x, h, p3 + p3, True, 2, 0.0, False, False, False)),
            ("lstm", (x, (h,), p4, True, 1, 0.0, False, False, False)),
            ("gru", (np.zeros((0, 2, 2)), h, p3, True, 1, 0.0, False, False, False)),
            ("gru", (x, h, p3, True, 1, 0.0, False, False))]:
        _same_error(*_both(name, args))
