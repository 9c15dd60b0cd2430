"""Pooling against torch: values, indices and gradients over the parameter grids, errors.

Every grid case runs the same call in torch and jtorch: where torch raises, jtorch must raise
the same exception type with the same message; otherwise values (and indices) must match, and
the input gradients for a random upstream gradient. Tensors stay small: each dtype/variant
compiles its kernels once.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import jtorch
import jtorch.nn.functional as JF
from jtorch import _flags

RNG = np.random.default_rng(0)


def _run(mod, fname, x, args, kw):
    fn = getattr(mod, fname) if mod in (TF, JF) else fname(mod)
    return fn(x, *args, **kw)


def _tuple(r):
    return r if isinstance(r, tuple) else (r,)


def check(fname, x: np.ndarray, *args, grad=True, rtol=1e-7, atol=1e-9, **kw):
    """Same call in torch and jtorch: same error, or same values/indices/gradients."""
    xt = torch.from_numpy(x.copy())
    xj = jtorch.from_numpy(x.copy())
    grad = grad and x.dtype.kind == "f"
    if grad:
        xt.requires_grad_()
        xj.requires_grad_()
    try:
        rt = _tuple(_run(TF, fname, xt, args, kw))
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)) as info:
            _run(JF, fname, xj, args, kw)
        assert str(info.value) == str(e), (fname, args, kw)
        return None
    rj = _tuple(_run(JF, fname, xj, args, kw))
    assert len(rj) == len(rt)
    for a, b in zip(rj, rt):
        assert tuple(a.shape) == tuple(b.shape), (fname, args, kw)
        assert a.dtype.name == str(b.dtype).split(".")[1], (a.dtype, b.dtype)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"{fname} {args} {kw}")
    if grad and rt[0].numel():
        g = RNG.standard_normal(tuple(rt[0].shape)).astype(x.dtype)
        gt, = torch.autograd.grad(rt[0], xt, torch.from_numpy(g))
        gj, = jtorch.autograd.grad(rj[0], xj, jtorch.from_numpy(g))
        np.testing.assert_allclose(gj.numpy(), gt.numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"grad {fname} {args} {kw}")
    return rj


def _x(*shape, dtype=np.float64, ties=False):
    if ties:
        return RNG.integers(0, 3, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


# -- max pooling -----------------------------------------------------------------------------

def test_max_pool2d_grid():
    x = _x(2, 3, 7, 6)
    tied = _x(2, 2, 7, 6, ties=True)
    for k, s, p, d, ceil in itertools.product([1, 2, 3, (2, 3)], [None, 1, 2, (1, 2)], [0, 1],
                                              [1, 2], [False, True]):
        check("max_pool2d", x, k, s, p, d, ceil, return_indices=True)
        if s == 2 and p == 1:
            check("max_pool2d", tied, k, s, p, d, ceil, return_indices=True)


def test_max_pool1d_and_3d_grid():
    x1, x3 = _x(2, 3, 9), _x(2, 2, 5, 4, 6)
    for k, s, p, d, ceil in itertools.product([1, 2, 3], [None, 2], [0, 1], [1, 2],
                                              [False, True]):
        check("max_pool1d", x1, k, s, p, d, ceil, return_indices=True)
        check("max_pool1d", x1, k, s, p, d, ceil)
        check("max_pool3d", x3, k, s, p, d, ceil, return_indices=True)
    check("max_pool3d", x3, (1, 2, 3), (2, 1, 2), (0, 1, 1), (2, 1, 1), True,
          return_indices=True)


def test_max_pool_ties_take_the_first_maximum_and_nan_wins():
    x = np.zeros((1, 2, 4, 4))
    x[0, 1, 1, 1] = np.nan
    x[0, 1, 2, 3] = np.nan
    x[0, 1, 3, 3] = np.nan
    (v, i) = check("max_pool2d", x, 2, return_indices=True, grad=False)
    assert i.numpy()[0, 0].tolist() == [[0, 2], [8, 10]]
    check("max_pool2d", x, 3, 1, 1, return_indices=True, grad=False)
    check("max_pool1d", np.array([[[1.0, 3.0, 3.0, -np.inf, -np.inf, 2.0]]]), 2,
          return_indices=True)
    # a window with no input element (large dilation): -inf at its first tap
    check("max_pool1d", np.array([[[1.0, 2.0]]]), 2, 1, 1, 3, return_indices=True, grad=False)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool_2x2_fast_path_nan_inf_ties_match_torch(dtype):
    """The 2x2/stride-2 kernel finds the index by comparing with the window's maximum: every
    mix of NaN (the last one wins), +-inf, -0.0 and ties (the first wins), odd sizes too."""
    vals = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 1.0, -2.0])
    rng = np.random.default_rng(5)  # not RNG: the later cases' data stay as they were
    for shape in ((3, 4, 8, 8), (2, 3, 5, 7)):
        x = rng.choice(vals, size=shape).astype(dtype)
        check("max_pool2d", x, 2, return_indices=True, grad=False)
        check("max_pool2d", x, 2, 2, 0, 1, True, return_indices=True, grad=False)
        check("max_pool2d", x, 3, 2, 1, return_indices=True, grad=False)  # the generic kernel
        check("max_pool3d", x, (1, 2, 3), 1, (0, 1, 1), (1, 2, 1), return_indices=True,
              grad=False)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("hw", [4, 8, 16, 12])
def test_max_pool_2x2_small_planes_in_two_passes_match_torch_bitwise(dtype, hw, monkeypatch):
    """4x4, 8x8 and 16x16 planes run ``pairs22`` and a row kernel of their width (12x12 the
    one of any width, ``rows22_n``): values bit for bit torch's (the first of equal zeros, its
    sign too; the last NaN) and its indices, on every mix of NaN, +-inf, +-0.0 and ties."""
    from jtorch.kernels.cpu import pooling as pk

    vals = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 1.0, -2.0])
    rng = np.random.default_rng(hw)
    x = rng.choice(vals, size=(5, 7, hw, hw)).astype(dtype)
    ran = []
    for w, fn in list(pk._ROWS22.items()):
        monkeypatch.setitem(pk._ROWS22, w, lambda *a, _f=fn, _w=w: ran.append(_w) or _f(*a))
    any_width = pk.rows22_n
    monkeypatch.setattr(pk, "rows22_n", lambda *a: ran.append(a[-1]) or any_width(*a))
    vj, ij = jtorch.nn.functional.max_pool2d(jtorch.from_numpy(x), 2, return_indices=True)
    vt, it = torch.nn.functional.max_pool2d(torch.from_numpy(x), 2, return_indices=True)
    assert ran == [hw // 2]
    np.testing.assert_array_equal(ij.numpy(), it.numpy())
    a, b = vj.numpy(), vt.numpy()
    np.testing.assert_array_equal(a, b)  # (NaN equal to NaN)
    np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


def test_max_pool_unbatched_noncontiguous_float32_and_parallel(monkeypatch):
    x = _x(3, 6, 7)
    check("max_pool2d", x, 2, 1, 1, return_indices=True)
    xt = _x(2, 7, 6, 3).transpose(0, 3, 1, 2)  # channels-last memory
    check("max_pool2d", xt, 3, 2, 1, return_indices=True)
    check("max_pool2d", _x(2, 3, 8, 9)[:, :, ::2, 1:], 2, return_indices=True)
    check("max_pool2d", _x(2, 3, 8, 9, dtype=np.float32), 3, 2, 1, rtol=1e-6,
          return_indices=True)
    check("max_pool3d", _x(2, 4, 5, 6, dtype=np.float32), 2, rtol=1e-6)
    monkeypatch.setattr(_flags, "GRAIN_SIZE", 1)  # the parallel kernels
    check("max_pool2d", _x(4, 3, 8, 9), 3, 2, 1, 2, return_indices=True)
    check("avg_pool2d", _x(4, 3, 8, 9), 3, 2, 1, count_include_pad=False)
    x = _x(4, 3, 7, 8, ties=True)  # 2x2 windows at stride 2: the kernels' fast path
    check("max_pool2d", x, 2, return_indices=True)
    check("avg_pool2d", x, 2)
    check("avg_pool2d", x, 2, divisor_override=3)
    check("adaptive_avg_pool2d", x[..., :6, :], (3, 4))
    check("max_pool2d", x.astype(np.float32), 2, return_indices=True, rtol=1e-6)


def test_max_pool_dtypes():
    xi = RNG.integers(-50, 50, (2, 3, 6, 6))
    for dt in (np.int64, np.int32, np.uint8, np.int16):
        check("max_pool2d", xi.astype(dt) if dt is not np.uint8 else np.abs(xi).astype(dt), 2,
              return_indices=True)
    check("max_pool3d", xi.astype(np.int64)[None], 2)
    check("max_pool2d", xi.astype(np.int64), 3, 1, 1)  # padding: the lowest value never wins
    check("max_pool1d", xi[0].astype(np.int64), 2)  # "max_pool1d_impl" not implemented
    check("max_pool1d", xi[0].astype(np.int64), 2, return_indices=True)
    check("max_pool2d", xi.astype(bool), 2)
    check("max_pool2d", _x(2, 3, 6, 6, dtype=np.float16), 3, 2, 1, return_indices=True,
          rtol=1e-3)


def test_empty_batch():
    check("max_pool2d", _x(0, 3, 6, 6), 2, return_indices=True)
    check("avg_pool2d", _x(0, 3, 6, 6), 2)
    check("adaptive_avg_pool2d", _x(0, 3, 6, 6), 4)
    check("adaptive_max_pool2d", _x(0, 3, 6, 6), 4)
    check("adaptive_avg_pool2d", _x(2, 3, 6, 6), 0)


# -- average pooling -------------------------------------------------------------------------

def test_avg_pool2d_grid():
    x = _x(2, 3, 7, 6)
    for k, s, p, ceil, cip, div in itertools.product([1, 2, 3, (3, 2)], [None, 1, 2, (2, 1)],
                                                     [0, 1, (1, 0)], [False, True],
                                                     [True, False], [None, 3]):
        check("avg_pool2d", x, k, s, p, ceil, cip, div)


def test_avg_pool1d_and_3d_grid():
    x1, x3 = _x(2, 3, 9), _x(2, 2, 5, 4, 6)
    for k, s, p, ceil, cip in itertools.product([1, 2, 3], [None, 2], [0, 1], [False, True],
                                                [True, False]):
        check("avg_pool1d", x1, k, s, p, ceil, cip)
        check("avg_pool3d", x3, k, s, p, ceil, cip)
    check("avg_pool3d", x3, (1, 2, 3), (2, 1, 2), (0, 1, 1), True, False, 5)
    check("avg_pool3d", x3[0], 2, 1, 1, divisor_override=-2)


def test_avg_pool_dtypes_and_layouts():
    xi = RNG.integers(-50, 50, (2, 3, 6, 6))
    check("avg_pool2d", xi, 3, 2, 1)  # int64: C's truncating division
    check("avg_pool2d", xi, 2, count_include_pad=False, divisor_override=3)
    check("avg_pool3d", xi[None], 2)
    check("avg_pool1d", xi[0], 3)
    check("avg_pool2d", xi.astype(np.int32), 2)
    check("avg_pool3d", _x(2, 3, 4, 4, dtype=np.float16), 2)
    # torch's float16 backward rounds per step; ours computes in float32 and rounds once
    check("avg_pool2d", _x(2, 3, 6, 6, dtype=np.float16), 3, 2, 1, rtol=1e-3, atol=1e-3)
    check("avg_pool2d", _x(2, 3, 8, 9, dtype=np.float32), 3, 2, 1, rtol=1e-5)
    check("avg_pool2d", _x(2, 7, 6, 3).transpose(0, 3, 1, 2), 3, 2, 1)
    check("avg_pool2d", _x(3, 7, 6), 2, 1, 1)


# -- adaptive pooling ------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["avg", "max"])
def test_adaptive_pool(kind):
    x2, x3 = _x(2, 3, 7, 5), _x(2, 2, 5, 4, 7)
    kw = {"return_indices": True} if kind == "max" else {}
    for out in [1, 2, 3, (4, 2), (7, 5), (10, 6), (None, 3), (3, None), (1, 1)]:
        check(f"adaptive_{kind}_pool2d", x2, out, **kw)
        check(f"adaptive_{kind}_pool2d", x2[0], out, **kw)
    for out in [1, 2, 3, 5, 8]:
        check(f"adaptive_{kind}_pool1d", x2[0], out, **kw)
        check(f"adaptive_{kind}_pool1d", x2[0, 0], (out,), **kw)
    for out in [1, 2, (3, 2, 5), (None, 3, 4)]:
        check(f"adaptive_{kind}_pool3d", x3, out, **kw)
    check(f"adaptive_{kind}_pool2d", _x(2, 3, 9, 7, dtype=np.float32), (4, 3), rtol=1e-5, **kw)
    check(f"adaptive_{kind}_pool2d", _x(2, 3, 9, 7, ties=True)[:, :, ::2], (2, 3), **kw)
    check(f"adaptive_{kind}_pool2d", _x(2, 3, 9, 7, dtype=np.float16), (4, 3), rtol=1e-3,
          atol=1e-3, **kw)
    check(f"adaptive_{kind}_pool2d", RNG.integers(0, 9, (2, 3, 4, 4)), 2, **kw)


# -- unpooling and power-average pooling -----------------------------------------------------

def _unpool_both(nd, x, k, s=None, p=0, output_size=None):
    vt, it = getattr(TF, f"max_pool{nd}d")(torch.from_numpy(x), k, s, p, return_indices=True)
    vj, ij = getattr(JF, f"max_pool{nd}d")(jtorch.from_numpy(x), k, s, p, return_indices=True)
    vt.requires_grad_()
    vj = vj.detach().requires_grad_()
    fn = f"max_unpool{nd}d"
    try:
        rt = getattr(TF, fn)(vt, it, k, s, p, output_size)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)) as info:
            getattr(JF, fn)(vj, ij, k, s, p, output_size)
        assert str(info.value) == str(e)
        return
    rj = getattr(JF, fn)(vj, ij, k, s, p, output_size)
    np.testing.assert_array_equal(rj.detach().numpy(), rt.detach().numpy())
    g = RNG.standard_normal(tuple(rt.shape))
    gt, = torch.autograd.grad(rt, vt, torch.from_numpy(g))
    gj, = jtorch.autograd.grad(rj, vj, jtorch.from_numpy(g))
    np.testing.assert_array_equal(gj.numpy(), gt.numpy())
    assert type(rj.grad_fn).__name__ == type(rt.grad_fn).__name__


def test_max_unpool():
    x2 = _x(2, 3, 6, 6)
    for k, s, p, osz in [(2, None, 0, None), (3, 2, 1, (6, 6)), (2, None, 0, (7, 7)),
                         (2, None, 0, (2, 3, 6, 7)), (2, None, 0, (9, 9)), (2, None, 0, (7,))]:
        _unpool_both(2, x2, k, s, p, osz)
        _unpool_both(2, x2[0], k, s, p, osz)
    _unpool_both(1, x2[0], 2)
    _unpool_both(1, x2[0], 3, 2, 1, (6, 7))
    _unpool_both(3, _x(2, 2, 4, 4, 6), 2)
    v, i = TF.max_pool2d(torch.from_numpy(x2), 2, return_indices=True)
    vj, ij = jtorch.from_numpy(v.numpy()), jtorch.from_numpy(i.numpy())
    bad = i.clone()
    bad[1, 2, 1, 0] = 40  # torch reports the last bad index its (parallel) loop met: one only
    for args, targs in [((vj, jtorch.from_numpy(bad.numpy()), 2), (v, bad, 2)), ((vj, ij.int(), 2), (v, i.int(), 2)),
                        ((vj, ij[:, :, :1], 2), (v, i[:, :, :1], 2)),
                        ((vj[0, 0], ij[0, 0], 2), (v[0, 0], i[0, 0], 2)),
                        ((vj.long(), ij, 2), (v.long(), i, 2))]:
        with pytest.raises(Exception) as te:
            TF.max_unpool2d(*targs)
        with pytest.raises(type(te.value)) as je:
            JF.max_unpool2d(*args)
        assert str(je.value) == str(te.value)


def test_lp_pool():
    x = np.abs(_x(2, 3, 7, 6)) + 0.1
    for p, k, s, ceil in [(2, 2, None, False), (3, 3, 2, True), (1.5, (2, 3), 1, False),
                          (float("inf"), 2, None, False)]:
        check("lp_pool2d", x, p, k, s, ceil)
        check("lp_pool1d", x[0], p, k if isinstance(k, int) else 2, s, ceil)
    check("lp_pool3d", x[None], 2, 2)


# -- autograd details ------------------------------------------------------------------------

@pytest.mark.parametrize("fname, args", [("max_pool2d", (3, 2, 1)), ("avg_pool2d", (3, 2, 1)),
                                         ("adaptive_avg_pool2d", ((3, 4),)),
                                         ("adaptive_max_pool2d", ((3, 4),)),
                                         ("max_pool3d", (2,)), ("avg_pool3d", (2, 1, 1))])
def test_double_backward_and_grad_fn_names(fname, args):
    x = _x(2, 2, 5, 6, 4) if "3d" in fname else _x(2, 3, 7, 6)
    xt = torch.from_numpy(x).requires_grad_()
    xj = jtorch.from_numpy(x).requires_grad_()
    yt, yj = getattr(TF, fname)(xt, *args), getattr(JF, fname)(xj, *args)
    assert type(yj.grad_fn).__name__ == type(yt.grad_fn).__name__
    g = RNG.standard_normal(tuple(yt.shape))
    gt, = torch.autograd.grad(yt, xt, torch.from_numpy(g).requires_grad_(), create_graph=True)
    gj, = jtorch.autograd.grad(yj, xj, jtorch.from_numpy(g).requires_grad_(), create_graph=True)
    assert type(gj.grad_fn).__name__ == type(gt.grad_fn).__name__
    w = RNG.standard_normal(x.shape)
    # second order: d/dg <grad_x, w> is the forward pool of w (avg) or the gather of w (max)
    gg_t = torch.from_numpy(g).requires_grad_()
    gg_j = jtorch.from_numpy(g).requires_grad_()
    gt, = torch.autograd.grad(getattr(TF, fname)(xt, *args), xt, gg_t, create_graph=True)
    gj, = jtorch.autograd.grad(getattr(JF, fname)(xj, *args), xj, gg_j, create_graph=True)
    st, = torch.autograd.grad((gt * torch.from_numpy(w)).sum(), gg_t)
    sj, = jtorch.autograd.grad((gj * jtorch.from_numpy(w)).sum(), gg_j)
    np.testing.assert_allclose(sj.numpy(), st.numpy(), rtol=1e-7, atol=1e-9)


def test_one_d_ops_go_through_two_d_like_torch():
    x = _x(2, 3, 8)
    xt = torch.from_numpy(x).requires_grad_()
    xj = jtorch.from_numpy(x).requires_grad_()
    for name, args in [("max_pool1d", (2,)), ("avg_pool1d", (2,)), ("adaptive_avg_pool1d", (3,)),
                       ("adaptive_max_pool1d", (3,))]:
        yt, yj = getattr(TF, name)(xt, *args), getattr(JF, name)(xj, *args)
        assert type(yj.grad_fn).__name__ == type(yt.grad_fn).__name__ == "SqueezeBackward1"


def test_top_level_names():
    pooling = [n for n in dir(torch) if "pool" in n and not n.startswith(("_", "mkldnn",
                                                                          "quantized"))]
    missing = [n for n in pooling if not hasattr(jtorch, n)]
    assert not missing
    x = _x(2, 3, 8)
    vt, it = torch.adaptive_max_pool1d(torch.from_numpy(x), 3)
    vj, ij = jtorch.adaptive_max_pool1d(jtorch.from_numpy(x), 3)
    np.testing.assert_array_equal(ij.numpy(), it.numpy())
    vt, it = torch.max_pool1d_with_indices(torch.from_numpy(x), 3)
    vj, ij = jtorch.max_pool1d_with_indices(jtorch.from_numpy(x), 3)
    np.testing.assert_array_equal(ij.numpy(), it.numpy())
    np.testing.assert_array_equal(jtorch.max_pool2d(jtorch.from_numpy(x), 2).numpy(),
                                  torch.max_pool2d(torch.from_numpy(x), 2).numpy())


# -- errors ----------------------------------------------------------------------------------

BAD = [
    ("max_pool2d", (1, 2, 5, 5), (2,), {"padding": 2}),
    ("max_pool2d", (1, 2, 5, 5), (3,), {"padding": 2, "dilation": 2}),
    ("max_pool2d", (5, 5), (2,), {}),
    ("max_pool2d", (1, 1, 2, 5, 5), (2,), {}),
    ("max_pool2d", (1, 2, 5, 5), (6,), {}),
    ("max_pool2d", (1, 2, 5, 5), (3,), {"dilation": 3}),
    ("max_pool2d", (1, 2, 5, 5), (0,), {}),
    ("max_pool2d", (1, 2, 5, 5), (-1, 1), {}),
    ("max_pool2d", (1, 2, 5, 5), (2, -1), {}),
    ("max_pool2d", (1, 2, 5, 5), (2, 0), {}),
    ("max_pool2d", (1, 2, 5, 5), (2,), {"dilation": 0}),
    ("max_pool2d", (1, 2, 5, 5), (2, 1, 1, 0), {}),
    ("max_pool2d", (1, 2, 5, 5), (2,), {"padding": -1}),
    ("max_pool2d", (1, 2, 5, 5), ((2, 2, 2),), {}),
    ("max_pool2d", (1, 2, 5, 5), (2, (1, 1, 1)), {}),
    ("max_pool2d", (1, 2, 5, 5), (2, 2, (1, 1, 1)), {}),
    ("max_pool2d", (1, 2, 5, 5), (2, 2, 0, (1, 1, 1)), {}),
    ("max_pool2d", (1, 0, 4, 4), (2,), {}),
    ("max_pool2d", (1, 2, 0, 4), (2,), {}),
    ("max_pool2d", (2, 3, 7), ((1, 3), 2, 1), {"ceil_mode": True}),
    ("max_pool1d", (5,), (2,), {}),
    ("max_pool1d", (1, 2, 5, 5), (2,), {}),
    ("max_pool1d", (2, 5), (2,), {"padding": 2}),
    ("max_pool1d", (2, 5), (6,), {}),
    ("max_pool1d", (2, 5), (0,), {}),
    ("max_pool1d", (2, 5), (2, 0), {}),
    ("max_pool1d", (2, 3, 7), (2,), {"dilation": 0}),
    ("max_pool1d", (2, 3, 7), (2,), {"padding": -1}),
    ("max_pool1d", (2, 3, 7), ((2, 2),), {}),
    ("max_pool1d", (2, 3, 7), (2, (2, 2)), {}),
    ("max_pool1d", (2, 0, 7), (2,), {}),
    ("max_pool1d", (2, 3, 0), (2,), {}),
    ("max_pool1d", (2, 5), (6,), {"return_indices": True}),
    ("max_pool1d", (2, 5), (2,), {"padding": 2, "return_indices": True}),
    ("max_pool1d", (2, 3, 0), (2,), {"return_indices": True}),
    ("max_pool1d", (2, 3, 7), (2,), {"dilation": 0, "return_indices": True}),
    ("max_pool1d", (2, 3, 7), ((2, 2),), {"return_indices": True}),
    ("max_pool1d", (1, 2, 3, 7), (2,), {"return_indices": True}),
    ("max_pool3d", (2, 5, 5), (2,), {}),
    ("max_pool3d", (1, 2, 5, 5), (2,), {"padding": 2}),
    ("max_pool3d", (1, 2, 5, 5), (6,), {}),
    ("max_pool3d", (1, 2, 0, 3, 3), (2,), {}),
    ("max_pool3d", (1, 1, 2, 3, 7), ((2, 2),), {}),
    ("max_pool3d", (2, 3, 7, 7), (2,), {"dilation": 0}),
    ("max_pool3d", (1, 9, 9, 9), (3,), {"padding": 2, "dilation": 2}),
    ("avg_pool2d", (1, 2, 5, 5), (2,), {"padding": 2}),
    ("avg_pool2d", (1, 2, 5, 5), (6,), {}),
    ("avg_pool2d", (5, 5), (2,), {}),
    ("avg_pool2d", (1, 2, 5, 5), (2,), {"divisor_override": 0}),
    ("avg_pool2d", (1, 2, 5, 5), (0,), {}),
    ("avg_pool2d", (1, 2, 5, 5), (-1, 1), {}),
    ("avg_pool2d", (1, 2, 5, 5), ((1, 1, 1),), {}),
    ("avg_pool2d", (1, 2, 5, 5), (2.0,), {}),
    ("avg_pool2d", (1, 2, 5, 5), ((2, 2.0),), {}),
    ("max_pool2d", (1, 2, 5, 5), ((2, 2.0),), {}),
    ("avg_pool2d", (1, 1, 2, 5, 5), (2,), {}),
    ("avg_pool1d", (2, 5), (2,), {"padding": 2}),
    ("avg_pool1d", (2, 5), (6,), {}),
    ("avg_pool1d", (1, 2, 5, 5), (2,), {}),
    ("avg_pool1d", (2, 5), (0,), {}),
    ("avg_pool3d", (1, 2, 5, 5), (2,), {"padding": 2}),
    ("avg_pool3d", (1, 2, 5, 5), (6,), {}),
    ("avg_pool3d", (2, 5, 5), (2,), {}),
    ("avg_pool3d", (1, 2, 3, 5, 5), ((2, 2),), {}),
    ("avg_pool3d", (1, 2, 3, 5, 5), (2, 2, (1, 1)), {}),
    ("avg_pool3d", (1, 2, 3, 5, 5), (2, (1, 1)), {}),
    ("avg_pool3d", (1, 2, 3, 5, 5), (0,), {}),
    ("avg_pool3d", (1, 2, 3, 5, 5), (2,), {"padding": (0, 2, 0)}),
    ("avg_pool3d", (1, 2, 0, 3, 3), (2,), {}),
    ("avg_pool3d", (1, 1, 1, 2, 3, 7, 7), (2,), {}),
    ("avg_pool3d", (1, 2, 3, 5, 5), (1,), {"divisor_override": 0}),
    ("adaptive_avg_pool2d", (5, 5), (2,), {}),
    ("adaptive_avg_pool2d", (1, 2, 5, 5), (-1,), {}),
    ("adaptive_avg_pool2d", (1, 2, 5, 5), ((1, 2, 3),), {}),
    ("adaptive_avg_pool2d", (5, 5), ((1, 2, 3),), {}),
    ("adaptive_avg_pool2d", (1, 2, 0, 4), (2,), {}),
    ("adaptive_avg_pool2d", (1, 2, 3, 5, 5), (2,), {}),
    ("adaptive_avg_pool1d", (1, 2, 5, 5), (2,), {}),
    ("adaptive_avg_pool1d", (2, 5), ((2, 2),), {}),
    ("adaptive_avg_pool1d", (2, 5), (-1,), {}),
    ("adaptive_avg_pool3d", (2, 5, 5), (2,), {}),
    ("adaptive_avg_pool3d", (1, 2, 3, 5, 5), (-1,), {}),
    ("adaptive_avg_pool3d", (1, 2, 3, 5, 5), ((2, 2),), {}),
    ("adaptive_avg_pool3d", (1, 2, 0, 3, 3), (2,), {}),
    ("adaptive_max_pool2d", (5, 5), (2,), {}),
    ("adaptive_max_pool2d", (1, 2, 5, 5), (-1,), {}),
    ("adaptive_max_pool2d", (1, 2, 5, 5), ((1, 2, 3),), {}),
    ("adaptive_max_pool2d", (2, 0, 3, 3), (2,), {}),
    ("adaptive_max_pool1d", (2, 5), ((2, 2),), {}),
    ("adaptive_max_pool1d", (2, 5), (-1,), {}),
    ("adaptive_max_pool1d", (1, 2, 5, 5), (2,), {}),
    ("adaptive_max_pool3d", (2, 5, 5), (2,), {}),
    ("adaptive_max_pool3d", (1, 2, 3, 5, 5), (-1,), {}),
    ("adaptive_max_pool3d", (1, 2, 3, 5, 5), ((2, 2),), {}),
    ("adaptive_max_pool3d", (1, 2, 0, 3, 3), (2,), {}),
]


@pytest.mark.parametrize("fname, shape, args, kw", BAD)
def test_errors_match_torch(fname, shape, args, kw):
    x = _x(*shape)
    with pytest.raises(Exception) as te:
        getattr(TF, fname)(torch.from_numpy(x), *args, **kw)
    with pytest.raises(type(te.value)) as je:
        getattr(JF, fname)(jtorch.from_numpy(x), *args, **kw)
    assert str(je.value) == str(te.value)
    if kw.get("return_indices") is None and "max_pool1d" == fname:  # the autograd path too
        with pytest.raises(Exception) as te:
            getattr(TF, fname)(torch.from_numpy(x).requires_grad_(), *args, **kw)
        with pytest.raises(type(te.value)) as je:
            getattr(JF, fname)(jtorch.from_numpy(x).requires_grad_(), *args, **kw)
        assert str(je.value) == str(te.value)


@pytest.mark.parametrize("fname", ["avg_pool2d", "avg_pool3d", "adaptive_avg_pool2d",
                                   "adaptive_max_pool2d", "adaptive_avg_pool3d",
                                   "adaptive_max_pool3d", "max_pool3d"])
@pytest.mark.parametrize("dt", [np.int32, np.uint8, np.bool_, np.complex64])
def test_unsupported_dtypes_match_torch(fname, dt):
    check(fname, np.ones((1, 2, 4, 4, 4), dt), 2, grad=False)


_SPECIALS = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, 1.0, -2.0])


def _same_bits(j, t) -> None:
    for a, b in zip(j, t):
        a, b = a.numpy(), b.numpy()
        np.testing.assert_array_equal(a, b)  # (NaN equal to NaN; indices exactly)
        if a.dtype.kind == "f":
            np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32])
def test_max_pool_two_pass_kernel_matches_torch_bitwise(dtype, parallel, monkeypatch):
    """Rows of 8 or more windows take the two-pass kernel (``max_sep``: row windows, then
    column windows of their maxima): torch's values (the first maximum's own zero sign, the
    last NaN) and indices for windows with padding, dilation, ceil_mode and adaptive ones,
    on strided input too, serial and parallel. Narrower rows keep the plane kernel, which
    now also returns the first maximum's own value (it returned -0.0 for [0.0, -0.0])."""
    from jtorch.kernels.cpu import pooling as pk

    ran = []

    def counted(name):
        fn = getattr(pk, name)
        return lambda *a: ran.append(name) or fn(*a)

    for name in ("max_sep", "max_sep_par", "max_fwd", "max_fwd_par"):
        monkeypatch.setattr(pk, name, counted(name))
    if parallel:
        monkeypatch.setattr(_flags, "GRAIN_SIZE", 1)
    rng = np.random.default_rng(7)
    if dtype == np.int32:
        x = rng.integers(-3, 3, (2, 3, 9, 21)).astype(dtype)
    else:
        x = rng.choice(_SPECIALS, size=(2, 3, 9, 21)).astype(dtype)
    cases = [((3, 2, 1), {}), ((2, 1, 0, 2), {}), ((3, 2, 1, 1, True), {}), ((2,), {}),
             ((3, 1, 1), {}), ((2, 3), {"padding": 1})]
    for xx in (x, x[:, :, ::2, 1:], x.transpose(0, 1, 3, 2)):
        xt, xj = torch.from_numpy(xx.copy()), jtorch.from_numpy(xx)
        for args, kw in cases:
            _same_bits(JF.max_pool2d(xj, *args, return_indices=True, **kw),
                       TF.max_pool2d(xt, *args, return_indices=True, **kw))
        if dtype != np.int32:  # (torch has no integer adaptive max pool)
            for size in ((3, 10), (4, 8)):
                _same_bits(JF.adaptive_max_pool2d(xj, size, return_indices=True),
                           TF.adaptive_max_pool2d(xt, size, return_indices=True))
    two_pass = "max_sep_par" if parallel else "max_sep"
    assert two_pass in ran and ("max_fwd_par" if parallel else "max_fwd") in ran
