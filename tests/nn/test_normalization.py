"""Normalization functions and layers against torch: outputs and gradients (inputs, weights,
biases), BatchNorm/InstanceNorm running statistics over several training steps and eval
outputs, reprs, state_dict keys and torch's errors."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
import torch

import jtorch

F, TF = jtorch.nn.functional, torch.nn.functional
R = np.random.default_rng(1)


def _np(t):
    return t.detach().numpy()


def randn(*shape, dtype=np.float64):
    return R.standard_normal(shape).astype(dtype)


def copy_weights(jm, tm) -> None:
    """Give torch module ``tm`` the parameters and buffers of jtorch module ``jm``."""
    with torch.no_grad():
        for (jn, jp), (tn, tp) in zip(jm.state_dict().items(), tm.state_dict().items()):
            assert jn == tn
            tp.copy_(torch.from_numpy(np.array(jp.numpy())))


def compare_layer(make, x: np.ndarray, rtol=1e-7, atol=1e-9):
    """Build the layer in both libraries with jtorch's weights; compare reprs, outputs and the
    gradients of the input and parameters."""
    jm, tm = make(jtorch), make(torch)
    assert repr(jm) == repr(tm)
    copy_weights(jm, tm)
    jx = jtorch.from_numpy(x.copy()).requires_grad_()
    tx = torch.from_numpy(x.copy()).requires_grad_()
    jy, ty = jm(jx), tm(tx)
    np.testing.assert_allclose(_np(jy), _np(ty), rtol=rtol, atol=atol)
    g = R.standard_normal(tuple(ty.shape)).astype(x.dtype)
    jy.backward(jtorch.from_numpy(g.copy()))
    ty.backward(torch.from_numpy(g.copy()))
    np.testing.assert_allclose(jx.grad.numpy(), tx.grad.numpy(), rtol=rtol, atol=atol)
    for (n, a), (_, b) in zip(jm.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol,
                                   err_msg=n)
    return jm, tm


def _randomise(jm) -> None:
    """Non-trivial affine parameters (torch starts from ones and zeros)."""
    for p in jm.parameters():
        with jtorch.no_grad():
            p.copy_(jtorch.from_numpy(R.standard_normal(tuple(p.shape)).astype(
                np.dtype(str(p.dtype).split(".")[1]))))


def compare_random(make, x, **kw):
    def build(lib):
        m = make(lib)
        if lib is jtorch:
            _randomise(m)
        return m
    return compare_layer(build, x, **kw)


# -- LayerNorm / RMSNorm / GroupNorm -----------------------------------------------------------

@pytest.mark.parametrize("affine,bias", [(True, True), (True, False), (False, False)])
def test_layer_norm(affine, bias):
    mk = lambda shape: lambda m: m.nn.LayerNorm(shape, eps=1e-4, elementwise_affine=affine,  # noqa
                                                bias=bias, dtype=m.float64)
    compare_random(mk(5), randn(3, 5))
    compare_random(mk((3, 4)), randn(2, 3, 4))
    compare_random(mk([4]), randn(4))


def test_layer_norm_float32_and_functional():
    compare_random(lambda m: m.nn.LayerNorm(16), randn(4, 16, dtype=np.float32), rtol=1e-5,
                   atol=1e-5)
    x, w, b = randn(2, 3, 4), randn(4), randn(4)
    j = F.layer_norm(jtorch.from_numpy(x), (4,), jtorch.from_numpy(w), jtorch.from_numpy(b), 1e-3)
    t = TF.layer_norm(torch.from_numpy(x), (4,), torch.from_numpy(w), torch.from_numpy(b), 1e-3)
    np.testing.assert_allclose(_np(j), _np(t), rtol=1e-12, atol=1e-12)
    # a constant row: var = 0 gives zeros, not nan
    z = F.layer_norm(jtorch.ones(2, 3), (3,))
    assert (z == 0).all().item()


def test_layer_norm_float32_rows_far_from_zero():
    """float32 rows with a large mean against a float64 reference on the same inputs (the
    output pass runs in float32; centring must not lose the row's small spread)."""
    rng = np.random.default_rng(0)
    x = (1000 + rng.standard_normal((3, 300)) * 1e-2).astype(np.float32)
    w, b = rng.standard_normal(300).astype(np.float32), rng.standard_normal(300).astype(np.float32)
    got = _np(F.layer_norm(jtorch.from_numpy(x), (300,), jtorch.from_numpy(w), jtorch.from_numpy(b)))
    x64 = x.astype(np.float64)
    m = x64.mean(1, keepdims=True)
    want = (x64 - m) / np.sqrt(((x64 - m) ** 2).mean(1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5)


@pytest.mark.parametrize("rows,n", [(97, 48), (40, 300), (3, 9000), (1, 5), (1, 256)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_row_blocks(rows, n, dtype):
    """The forward kernel runs narrow rows in blocks phase by phase (full blocks, a partial
    last one) and wide rows pipelined (a row's output pass sums the next row): serial and
    parallel give the same bits, the statistics and outputs match a float64 reference, and
    the affine and plain kernels agree."""
    from jtorch.kernels.cpu import normalization as kn

    rng = np.random.default_rng(rows * n)
    x = (rng.standard_normal((rows, n)) * 3 + rng.standard_normal((rows, 1)) * 50).astype(dtype)
    w, b = rng.standard_normal(n).astype(dtype), rng.standard_normal(n).astype(dtype)
    runs = []
    for fn in (kn.layer_norm_fwd, kn.layer_norm_fwd_par):
        for affine in (True, False):
            y, mean, rstd = np.empty_like(x), np.empty(rows, dtype), np.empty(rows, dtype)
            fn(x, w if affine else w[:0], b if affine else b[:0], 1e-5, y, mean, rstd, affine,
               affine)
            runs.append((y, mean, rstd))
    for got, want in zip(runs[2:], runs[:2]):  # parallel against serial
        for a, c in zip(got, want):
            assert np.array_equal(a, c)
    x64 = x.astype(np.float64)
    m = x64.mean(1)
    r = 1 / np.sqrt(((x64 - m[:, None]) ** 2).mean(1) + 1e-5)
    plain = (x64 - m[:, None]) * r[:, None]
    tol = 3e-6 if dtype == np.float32 else 1e-12
    (y, mean, rstd), (y0, _, _) = runs[0], runs[1]
    np.testing.assert_allclose(mean, m, rtol=tol)
    np.testing.assert_allclose(rstd, r, rtol=tol)
    np.testing.assert_allclose(y0, plain, rtol=0, atol=4 * tol)
    np.testing.assert_allclose(y, plain * w + b, rtol=0, atol=20 * tol)


@pytest.mark.parametrize("n", [255, 256, 1024])
def test_layer_norm_rows_alike_give_the_same_bits_in_any_batch(n):
    """A pipelined row's sum comes from the previous row's output pass, the first row's from
    a pass of that loop before its own: a row gives the same bits wherever it lies, in a
    batch of any size, serial or parallel."""
    from jtorch.kernels.cpu import normalization as kn

    rng = np.random.default_rng(n)
    row = (rng.standard_normal(n) * np.exp(rng.uniform(-5, 5, n)) + 7).astype(np.float32)
    w, b = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    outs = []
    for rows in (1, 2, 7, 300):
        x = np.ascontiguousarray(np.broadcast_to(row, (rows, n)))
        for fn in (kn.layer_norm_fwd, kn.layer_norm_fwd_par):
            y, mean, rstd = np.empty_like(x), np.empty(rows, np.float32), np.empty(rows, np.float32)
            fn(x, w, b, 1e-5, y, mean, rstd, True, True)
            outs += [(a, c, d) for a, c, d in zip(y, mean, rstd)]
    for a, c, d in outs:
        np.testing.assert_array_equal(a, outs[0][0])
        assert c == outs[0][1] and d == outs[0][2]


@pytest.mark.parametrize("rows,n", [(97, 48), (40, 300), (3, 9000), (1, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_backward_row_blocks(rows, n, dtype):
    """The backward kernel runs blocks of rows (every row's sums, then one pass for gx, gw and
    gb, or gx alone and the sums' own pass when only some are asked): each mask gives what the
    full one gives for its parts, the serial run's gw/gb equal the one-chunk parallel run's,
    and all match a float64 reference, as do the parallel kernel's with rows in chunks."""
    from jtorch.kernels.cpu import normalization as kn

    rng = np.random.default_rng(rows + n)
    x = (rng.standard_normal((rows, n)) * 3 + rng.standard_normal((rows, 1)) * 50).astype(dtype)
    g = rng.standard_normal((rows, n)).astype(dtype)
    w = rng.standard_normal(n).astype(dtype)
    y, mean, rstd = np.empty_like(x), np.empty(rows, dtype), np.empty(rows, dtype)
    kn.layer_norm_fwd(x, w, w, 1e-5, y, mean, rstd, True, True)

    def run(fn, affine, mask, *chunks):  # (the parallel kernel's last argument: chunks)
        gx = np.zeros_like(x)
        gw, gb = np.zeros(n, dtype), np.zeros(n, dtype)
        fn(g, x, mean, rstd, w if affine else w[:0], gx, gw, gb, affine, *mask, *chunks)
        return gx, gw, gb

    for affine in (True, False):
        full = run(kn.layer_norm_bwd, affine, (True, True, True))
        assert all(np.array_equal(a, c) for a, c in
                   zip(run(kn.layer_norm_bwd_par, affine, (True, True, True), 1), full))
        for mask in [(True, False, False), (False, True, True), (False, True, False),
                     (True, True, False)]:
            got = run(kn.layer_norm_bwd, affine, mask)
            for part, a, c in zip(mask, got, full):
                assert np.array_equal(a, c if part else np.zeros_like(c))
        x64, g64, m, r = (a.astype(np.float64) for a in (x, g, mean, rstd))
        xhat = (x64 - m[:, None]) * r[:, None]
        gh = g64 * w if affine else g64
        gx = (gh - gh.mean(1, keepdims=True) - xhat * (gh * xhat).mean(1, keepdims=True)) * \
            r[:, None]
        tol = 2e-5 if dtype == np.float32 else 1e-11
        scale = np.abs(gx).max()
        np.testing.assert_allclose(full[0], gx, rtol=0, atol=tol * scale)
        np.testing.assert_allclose(full[1], (g64 * xhat).sum(0), rtol=0,
                                   atol=tol * np.abs(g64 * xhat).sum(0).max())
        np.testing.assert_allclose(full[2], g64.sum(0), rtol=0, atol=tol * np.abs(g64).sum(0).max())
        # rows split into chunks (the parallel kernel's float64 partials, added at the end)
        split = run(kn.layer_norm_bwd_par, affine, (True, True, True), min(rows, 3))
        assert np.array_equal(split[0], full[0])
        for a, c in zip(split[1:], full[1:]):
            np.testing.assert_allclose(a, c, rtol=0, atol=tol * np.abs(c).max())


@pytest.mark.parametrize("eps", [None, 1e-3])
def test_rms_norm(eps):
    compare_random(lambda m: m.nn.RMSNorm(5, eps=eps, dtype=m.float64), randn(3, 5))
    compare_random(lambda m: m.nn.RMSNorm((2, 5), eps=eps, elementwise_affine=False,
                                          dtype=m.float64), randn(3, 2, 5))
    compare_random(lambda m: m.nn.RMSNorm(6, eps=eps), randn(2, 6, dtype=np.float32) * 1e-3,
                   rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("affine,bias", [(True, True), (True, False), (False, True)])
def test_group_norm(affine, bias):
    mk = lambda g, c: lambda m: m.nn.GroupNorm(g, c, eps=1e-4, affine=affine,  # noqa: E731
                                               dtype=m.float64, bias=bias)
    compare_random(mk(2, 4), randn(3, 4, 5))
    compare_random(mk(3, 6), randn(2, 6, 2, 3))
    compare_random(mk(1, 3), randn(2, 3))
    compare_random(mk(3, 3), randn(2, 3, 4))


def test_local_response_norm():
    for size in (1, 2, 3, 4):
        compare_layer(lambda m: m.nn.LocalResponseNorm(size, alpha=0.3, beta=0.6, k=1.5),
                      randn(2, 5, 3))
    compare_layer(lambda m: m.nn.LocalResponseNorm(3), randn(2, 4, 3, 2))
    compare_layer(lambda m: m.nn.LocalResponseNorm(2), randn(1, 3, 2, 2, 2))


# -- BatchNorm / InstanceNorm ------------------------------------------------------------------

def _run_steps(jm, tm, shape, steps: int = 3, rtol=1e-7, atol=1e-9, dtype=np.float64):
    """Train for a few steps (outputs, input and parameter grads), compare every buffer, then
    compare eval outputs."""
    for _ in range(steps):
        x = R.standard_normal(shape).astype(dtype) * 2 + 0.5
        jx = jtorch.from_numpy(x.copy()).requires_grad_()
        tx = torch.from_numpy(x.copy()).requires_grad_()
        jy, ty = jm(jx), tm(tx)
        np.testing.assert_allclose(_np(jy), _np(ty), rtol=rtol, atol=atol)
        g = R.standard_normal(shape).astype(dtype)
        jy.backward(jtorch.from_numpy(g.copy()))
        ty.backward(torch.from_numpy(g.copy()))
        np.testing.assert_allclose(jx.grad.numpy(), tx.grad.numpy(), rtol=rtol, atol=atol)
        for (n, a), (_, b) in zip(jm.named_parameters(), tm.named_parameters()):
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol,
                                       err_msg=n)
        for (n, a), (_, b) in zip(jm.named_buffers(), tm.named_buffers()):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=atol, err_msg=n)
    jm.eval()
    tm.eval()
    x = R.standard_normal(shape).astype(dtype)
    jx = jtorch.from_numpy(x.copy()).requires_grad_()
    tx = torch.from_numpy(x.copy()).requires_grad_()
    jy, ty = jm(jx), tm(tx)
    np.testing.assert_allclose(_np(jy), _np(ty), rtol=rtol, atol=atol)
    jy.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(jx.grad.numpy(), tx.grad.numpy(), rtol=rtol, atol=atol)


def _pair(make):
    jm, tm = make(jtorch), make(torch)
    assert repr(jm) == repr(tm)
    assert list(jm.state_dict()) == list(tm.state_dict())
    _randomise(jm)
    copy_weights(jm, tm)
    return jm, tm


BN_CASES = [
    ("BatchNorm1d", (6, 3), {}),
    ("BatchNorm1d", (4, 3, 5), {"momentum": None}),
    ("BatchNorm1d", (4, 3), {"affine": False}),
    ("BatchNorm1d", (4, 3), {"bias": False, "momentum": 0.3}),
    ("BatchNorm1d", (4, 3), {"track_running_stats": False}),
    ("BatchNorm2d", (2, 3, 2, 3), {"eps": 1e-3}),
    ("BatchNorm2d", (2, 3, 2, 2), {"momentum": None, "affine": False}),
    ("BatchNorm3d", (2, 2, 2, 2, 3), {}),
    ("InstanceNorm1d", (2, 3, 5), {}),
    ("InstanceNorm1d", (3, 5), {"affine": True}),
    ("InstanceNorm1d", (2, 3, 5), {"track_running_stats": True, "affine": True}),
    ("InstanceNorm2d", (2, 3, 2, 3), {"track_running_stats": True, "momentum": 0.5}),
    ("InstanceNorm3d", (2, 2, 2, 2, 3), {"affine": True, "bias": False}),
]


@pytest.mark.parametrize("case", BN_CASES, ids=lambda c: f"{c[0]}-{c[2]}")
def test_batch_and_instance_norm(case):
    name, shape, kw = case
    c = shape[1] if name.startswith("Batch") or len(shape) > int(name[-2]) + 1 else shape[0]
    jm, tm = _pair(lambda m: getattr(m.nn, name)(c, dtype=m.float64, **kw))
    _run_steps(jm, tm, shape)


def test_batch_norm_float32():
    jm, tm = _pair(lambda m: m.nn.BatchNorm1d(4))
    _run_steps(jm, tm, (8, 4), rtol=1e-5, atol=1e-5, dtype=np.float32)


def test_batch_norm_buffers():
    m = jtorch.nn.BatchNorm1d(3)
    m(jtorch.randn(4, 3))
    m(jtorch.randn(4, 3))
    assert m.num_batches_tracked.item() == 2 and m.num_batches_tracked.dtype is jtorch.int64
    m.reset_running_stats()
    assert m.num_batches_tracked.item() == 0
    assert (m.running_var == 1).all().item() and (m.running_mean == 0).all().item()
    m.eval()
    x = jtorch.randn(4, 3)
    np.testing.assert_allclose(_np(m(x)), _np(x) / np.sqrt(1 + 1e-5), rtol=1e-6)
    # eval without running buffers normalises with the batch's statistics
    m2 = jtorch.nn.BatchNorm1d(3, track_running_stats=False).eval()
    t2 = torch.nn.BatchNorm1d(3, track_running_stats=False).eval()
    x = randn(5, 3, dtype=np.float32)
    np.testing.assert_allclose(_np(m2(jtorch.from_numpy(x))), _np(t2(torch.from_numpy(x))),
                               rtol=1e-5, atol=1e-6)
    # an old checkpoint (no version metadata, no num_batches_tracked) still loads, as in torch;
    # a current one missing the key is an error in both
    for mod in (jtorch, torch):
        sd = mod.nn.BatchNorm1d(3).state_dict()
        del sd["num_batches_tracked"]
        with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: '
                                               '"num_batches_tracked"'):
            mod.nn.BatchNorm1d(3).load_state_dict(sd)
        old = dict(sd)
        mod.nn.BatchNorm1d(3).load_state_dict(old)
        assert "num_batches_tracked" not in old
    # running stats do not take part in autograd
    assert not m.running_mean.requires_grad and m.running_mean.grad_fn is None


def test_functional_batch_norm():
    x = randn(5, 3, 2)
    rm, rv, w, b = randn(3), np.abs(randn(3)), randn(3), randn(3)
    for training in (True, False):
        res = []
        for lib, f in ((jtorch, F), (torch, TF)):
            m, v = lib.from_numpy(rm.copy()), lib.from_numpy(rv.copy())
            y = f.batch_norm(lib.from_numpy(x), m, v, lib.from_numpy(w), lib.from_numpy(b),
                             training=training, momentum=0.2, eps=1e-3)
            res.append((y, m, v))
        for a, bb in zip(res[0], res[1]):
            np.testing.assert_allclose(_np(a), _np(bb), rtol=1e-12, atol=1e-12)
    j = F.instance_norm(jtorch.from_numpy(x), use_input_stats=True)
    t = TF.instance_norm(torch.from_numpy(x), use_input_stats=True)
    np.testing.assert_allclose(_np(j), _np(t), rtol=1e-12, atol=1e-12)


# -- errors ------------------------------------------------------------------------------------

def _same_error(fn_j, fn_t):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn_t()
    except Exception as e:  # noqa: BLE001
        exc = e
    else:
        raise AssertionError("torch did not raise")
    with pytest.raises(type(exc), match=re.escape(str(exc))):
        fn_j()


def _both(fn):
    return lambda lib: fn(lib, lib.nn.functional)


ERRORS = [
    lambda m, f: f.layer_norm(m.zeros(2, 3, 4), [3]),
    lambda m, f: f.layer_norm(m.zeros(2, 3, 4), (3, 4), m.ones(4)),
    lambda m, f: f.layer_norm(m.zeros(2, 3, 4), (4,), None, m.ones(3)),
    lambda m, f: f.layer_norm(m.zeros(2, 3, 4), (2, 3, 4, 5)),
    lambda m, f: f.layer_norm(m.zeros(2, 3, 4), 4),
    lambda m, f: f.layer_norm(m.zeros(2, 3, 4), []),
    lambda m, f: f.rms_norm(m.zeros(2, 3, 4), [3]),
    lambda m, f: f.rms_norm(m.zeros(2, 3, 4), [3, 5]),
    lambda m, f: f.rms_norm(m.zeros(2, 3, 4), [4], m.ones(3)),
    lambda m, f: f.group_norm(m.zeros(2, 3, 4), 2),
    lambda m, f: f.group_norm(m.zeros(2, 6, 4), 3, m.ones(4)),
    lambda m, f: f.group_norm(m.zeros(6), 3),
    lambda m, f: f.group_norm(m.zeros(1, 3), 3),
    lambda m, f: f.batch_norm(m.zeros(2, 3), m.zeros(4), m.ones(3), training=True),
    lambda m, f: f.batch_norm(m.zeros(2, 3), m.zeros(3), m.ones(4), training=True),
    lambda m, f: f.batch_norm(m.zeros(2, 3), m.zeros(3), m.ones(3), m.ones(4), training=True),
    lambda m, f: f.batch_norm(m.zeros(2, 3), None, None, None, m.ones(4), training=True),
    lambda m, f: f.batch_norm(m.zeros(2, 3), None, None, training=False),
    lambda m, f: f.batch_norm(m.zeros(1, 3), None, None, training=True),
    lambda m, f: f.batch_norm(m.zeros(4, 3), None, None, training=True, eps=0),
    lambda m, f: f.batch_norm(m.zeros(4, 3), None, None, training=False, eps=-1.0),
    lambda m, f: f.instance_norm(m.zeros(4, 3, 1)),
    lambda m, f: f.instance_norm(m.zeros(4, 3, 5), use_input_stats=False),
    lambda m, f: f.local_response_norm(m.zeros(4, 3), 2),
    lambda m, f: m.nn.BatchNorm1d(3)(m.zeros(4)),
    lambda m, f: m.nn.BatchNorm1d(3)(m.zeros(4, 4)),
    lambda m, f: m.nn.BatchNorm2d(3)(m.zeros(4, 3, 2)),
    lambda m, f: m.nn.BatchNorm3d(3)(m.zeros(4, 3, 2, 2)),
    lambda m, f: m.nn.InstanceNorm1d(3)(m.zeros(4, 3, 2, 2)),
    lambda m, f: m.nn.InstanceNorm2d(3, affine=True)(m.zeros(4, 2, 2, 2)),
    lambda m, f: m.nn.GroupNorm(4, 6),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_errors(i):
    fn = ERRORS[i]
    _same_error(lambda: fn(jtorch, F), lambda: fn(torch, TF))


def test_instance_norm_feature_warning():
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        jtorch.nn.InstanceNorm1d(3)(jtorch.zeros(4, 2, 5))


def test_layer_norm_fused_path_details():
    x = randn(3, 4, 5)
    for weight, bias in ((randn(5), None), (None, randn(5)), (randn(4, 5), randn(4, 5))):
        shape = (5,) if weight is None or weight.ndim == 1 else (4, 5)
        if bias is not None and bias.ndim == 2:
            shape = (4, 5)
        res = []
        for lib, f in ((jtorch, F), (torch, TF)):
            xs = lib.from_numpy(x.copy()).transpose(0, 1).requires_grad_()  # non-contiguous
            w = None if weight is None else lib.from_numpy(weight.copy()).requires_grad_()
            b = None if bias is None else lib.from_numpy(bias.copy()).requires_grad_()
            y = f.layer_norm(xs.transpose(0, 1) if shape == (4, 5) else xs, shape, w, b)
            (y * lib.from_numpy(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)))).sum() \
                .backward()
            res.append([y] + [t.grad for t in (xs, w, b) if t is not None])
            if lib is jtorch:
                assert type(y.grad_fn).__name__ == "NativeLayerNormBackward0"
        for a, b in zip(*res):
            np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12)
    assert F.layer_norm(jtorch.zeros(0, 4), (4,)).shape == (0, 4)


def test_layer_norm_double_backward():
    x = jtorch.from_numpy(randn(2, 4)).requires_grad_()
    w = jtorch.from_numpy(randn(4)).requires_grad_()
    b = jtorch.from_numpy(randn(4)).requires_grad_()
    fn = lambda x, w, b: F.layer_norm(x, (4,), w, b)  # noqa: E731
    assert jtorch.autograd.gradcheck(fn, (x, w, b))
    assert jtorch.autograd.gradgradcheck(fn, (x, w, b))


@pytest.mark.parametrize("mask", [(False, True, True), (True, False, False), (False, False, True),
                                  (True, True, True)])
def test_layer_norm_gradients_of_some_inputs(mask):
    """Only the parameters asking for a gradient get one: a LayerNorm over data (no input
    gradient) once failed in its backward kernel, which took the row count from the empty
    grad_input."""
    x, w, b = randn(3, 4, 5), randn(5), randn(5)
    res = []
    for lib, f in ((jtorch, F), (torch, TF)):
        ts = [lib.from_numpy(a.copy()).requires_grad_(m) for a, m in zip((x, w, b), mask)]
        f.layer_norm(ts[0], (5,), ts[1], ts[2]).square().sum().backward()
        res.append([t.grad for t in ts])
    for a, b_ in zip(*res):
        assert (a is None) == (b_ is None)
        if a is not None:
            np.testing.assert_allclose(_np(a), _np(b_), rtol=1e-10, atol=1e-12)


def _stats_case(dtype, shape):
    c = shape[1]
    x = (R.standard_normal(shape) * 3 + 1).astype(dtype)
    rm, rv = R.standard_normal(c).astype(dtype), (R.random(c) + 0.1).astype(dtype)
    return x, rm, rv, R.standard_normal(c).astype(dtype), R.standard_normal(c).astype(dtype)


def _both(x: np.ndarray, layout: str):
    jx, tx = jtorch.from_numpy(x.copy()), torch.from_numpy(x.copy())
    if layout == "channels_last":
        return (jx.contiguous(memory_format=jtorch.channels_last),
                tx.contiguous(memory_format=torch.channels_last))
    return jx, tx


_LAYOUTS = [((6, 5, 4, 3), "contiguous"), ((6, 5, 4, 3), "channels_last"), ((9, 5), "contiguous"),
            ((3, 5, 7), "contiguous")]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "layout"), _LAYOUTS)
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm_eval_without_autograd_is_torchs_transform(dtype, shape, layout, affine):
    """Unrecorded eval batch norm is torch's CPU transform, bit for bit: per channel
    alpha = invstd * w, beta = b - mean * alpha, then x * alpha + beta, each rounded once; the
    output keeps the input's layout."""
    x, rm, rv, w, b = _stats_case(dtype, shape)
    jx, tx = _both(x, layout)
    j = [jtorch.from_numpy(a) if affine or k < 2 else None for k, a in enumerate((rm, rv, w, b))]
    t = [torch.from_numpy(a) if affine or k < 2 else None for k, a in enumerate((rm, rv, w, b))]
    got = F.batch_norm(jx, *j, training=False, eps=1e-3)
    want = TF.batch_norm(tx, *t, training=False, eps=1e-3)
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert got.stride() == want.stride()
    with jtorch.no_grad():  # (also where the input requires grad)
        got = F.batch_norm(jx.requires_grad_(), *j, training=False, eps=1e-3)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("shape", "layout"), _LAYOUTS)
@pytest.mark.parametrize("affine", [True, False])
def test_batch_group_instance_norm_statistics_without_autograd(dtype, shape, layout, affine):
    """Training batch norm, group norm and instance norm from the batch's statistics: the
    unrecorded transform against torch (its float64 statistics round differently, so within
    a few ulp of the output's scale) and against the recorded composition, the running
    buffers moved as torch's, the layout torch's."""
    x, rm, rv, w, b = _stats_case(dtype, shape)
    jx, tx = _both(x, layout)
    jw, jb = (jtorch.from_numpy(w), jtorch.from_numpy(b)) if affine else (None, None)
    tw, tb = (torch.from_numpy(w), torch.from_numpy(b)) if affine else (None, None)
    tol = 8 * np.finfo(dtype).eps
    cases = [(lambda L, x, rm, rv, w, b: L.nn.functional.batch_norm(x, rm, rv, w, b, True, 0.3),
              True)]
    if len(shape) > 2:
        cases.append((lambda L, x, rm, rv, w, b: L.nn.functional.instance_norm(
            x, rm, rv, w, b, use_input_stats=True, momentum=0.3), True))
    cases.append((lambda L, x, rm, rv, w, b: L.nn.functional.group_norm(x, 1, w, b), False))
    for fn, buffers in cases:
        jr = [jtorch.from_numpy(rm.copy()), jtorch.from_numpy(rv.copy())]
        tr = [torch.from_numpy(rm.copy()), torch.from_numpy(rv.copy())]
        got = fn(jtorch, jx, *jr, jw, jb)
        want = fn(torch, tx, *tr, tw, tb)
        scale = float(np.abs(want.numpy()).max())
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=0, atol=tol * scale)
        assert got.stride() == want.stride()
        if buffers:
            for a, e in zip(jr, tr):
                np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=0,
                                           atol=tol * np.abs(e.numpy()).max())
        recorded = fn(jtorch, jx.detach().requires_grad_(), *jr, jw, jb)
        assert recorded.grad_fn is not None
        np.testing.assert_allclose(got.numpy(), recorded.detach().numpy(), rtol=0,
                                   atol=tol * scale)


def test_group_norm_groups_of_channels_without_autograd():
    """Several groups, weight alone, bias alone: each channel takes its group's statistics."""
    x = randn(3, 6, 5, dtype=np.float32) * 2 + 4
    w, b = randn(6, dtype=np.float32), randn(6, dtype=np.float32)
    for jw, tw, jb, tb in ((jtorch.from_numpy(w), torch.from_numpy(w), None, None),
                           (None, None, jtorch.from_numpy(b), torch.from_numpy(b))):
        for g in (2, 3, 6):
            got = F.group_norm(jtorch.from_numpy(x), g, jw, jb).numpy()
            want = TF.group_norm(torch.from_numpy(x), g, tw, tb).numpy()
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-6 * np.abs(want).max())
