"""Convolution, pooling, resampling, contractions and distances on meta tensors.

Every public function of these families runs on CPU tensors and on meta twins of the same
geometry (batched and unbatched, 0-size, broadcast, non-contiguous and channels-last inputs):
the meta call runs no kernel, and its results have the CPU results' shapes, dtypes, strides,
storage offsets and aliasing; bad arguments raise the same error type and message on both.
Gradients on meta tensors are meta tensors of the CPU gradients' geometry, and the demo CNN
(Conv2d, MaxPool2d, Linear, cross_entropy) trains a step on meta. Where jtorch's CPU result has
torch's geometry, the meta result is also compared with torch's meta device.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch

import jtorch
from jtorch import dispatch

from helpers import as_on_meta, leaves, to_meta, tree_map
from jtorch.tensor import Tensor

JF = jtorch.nn.functional
TF = torch.nn.functional
RNG = np.random.default_rng(0)


# -- inputs and meta twins ----------------------------------------------------------------------

def t(shape, dtype="float32", grad=False, layout=None, lo=None, hi=None):
    """A CPU tensor of ``shape``: ``layout`` "T" (last two dims transposed in memory), "cl"
    (channels last) or "step" (every other element of a twice-as-long last dim)."""
    if lo is not None:
        a = RNG.integers(lo, hi, shape)
    else:
        a = RNG.standard_normal(shape) + 0.5
    a = np.asarray(a).astype(dtype)
    if layout == "T":
        x = jtorch.from_numpy(np.ascontiguousarray(np.swapaxes(a, -1, -2))).transpose(-1, -2)
    elif layout == "cl":
        x = jtorch.from_numpy(np.ascontiguousarray(np.moveaxis(a, 1, -1))).movedim(-1, 1)
    elif layout == "step":
        wide = np.repeat(a, 2, axis=-1)
        x = jtorch.from_numpy(wide)[..., ::2]
    else:
        x = jtorch.from_numpy(a)
    return x.requires_grad_() if grad else x


_map = tree_map
_leaves = leaves


def _outcome(fn, args, kwargs):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001  (the error itself is compared)
        return None, e


def _geometry(x: Tensor) -> tuple:
    return tuple(x.shape), x.dtype, x.stride() if x.numel() else None, \
        x.storage_offset() if x.numel() else None


def _aliases(out: Tensor, inputs: list) -> tuple:
    return tuple(i for i, x in enumerate(inputs) if isinstance(x, Tensor) and out._st is x._st)


def same_on_meta(fn, *args, grad: bool = False, **kwargs):
    """``fn`` on CPU ``args`` and on their meta twins: the same error, or results of the same
    geometry and aliasing (and with ``grad``, gradients of the same geometry). Returns the
    (CPU, meta) results."""
    storages: dict = {}
    margs, mkw = _map(lambda x: to_meta(x, storages), list(args)), \
        _map(lambda x: to_meta(x, storages), kwargs)
    res, err = _outcome(fn, args, kwargs)
    mres, merr = _outcome(fn, margs, mkw)
    if err is not None:
        assert merr is not None, f"CPU raised {err!r}, meta returned {mres!r}"
        assert (type(merr), str(merr)) == (type(err), str(err))
        return None, None
    if merr is not None:
        raise AssertionError(f"CPU ran, meta raised {merr!r}") from merr
    cin, min_ = _leaves([args, kwargs]), _leaves([margs, mkw])
    couts, mouts = _leaves(res), _leaves(mres)
    assert len(couts) == len(mouts)
    for c, m in zip(couts, mouts):
        if not isinstance(c, Tensor):
            assert type(c) is type(m) and c == m, (c, m)
            continue
        assert m.is_meta and not c.is_meta
        assert _geometry(c) == _geometry(m), (_geometry(c), _geometry(m))
        assert _aliases(c, cin) == _aliases(m, min_), "aliasing differs"
        assert c.requires_grad == m.requires_grad
        assert (c.grad_fn is None) == (m.grad_fn is None)
        if c.grad_fn is not None:
            assert type(c.grad_fn).__name__ == type(m.grad_fn).__name__
    if grad:
        _same_grads(couts, cin, mouts, min_)
    return res, mres


def _same_grads(couts, cin, mouts, min_) -> None:
    """Gradients of the outputs' sum with respect to the inputs that require grad (through
    ``autograd.grad``: what the engine does at the leaves is not these families' business)."""
    outs = [(c, m) for c, m in zip(couts, mouts) if isinstance(c, Tensor) and c.grad_fn]
    if not outs:
        return
    pairs = [(c, m) for c, m in zip(cin, min_) if isinstance(c, Tensor) and c.requires_grad]
    cg = jtorch.autograd.grad(sum(c.sum() for c, _ in outs), [c for c, _ in pairs],
                              allow_unused=True)
    mg = jtorch.autograd.grad(sum(m.sum() for _, m in outs), [m for _, m in pairs],
                              allow_unused=True)
    for a, b in zip(cg, mg):
        assert (a is None) == (b is None)
        if a is not None:
            assert b.is_meta
            assert _geometry(a) == _geometry(b), (_geometry(a), _geometry(b))


def torch_meta_same(jres, fn, *args, **kwargs):
    """jtorch's meta result has the geometry of torch's on its meta device (``args``: jtorch
    CPU tensors, remade in torch on meta)."""
    targs = _map(lambda x: torch.empty_strided(tuple(x.shape), x.stride(), dtype=getattr(
        torch, x.dtype.name), device="meta") if isinstance(x, Tensor) else x, list(args))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tres = fn(*targs, **kwargs)
    for j, tt in zip(_leaves(jres), _leaves(tres)):
        assert tuple(j.shape) == tuple(tt.shape) and j.dtype.name == str(tt.dtype)[6:]
        if j.numel():
            assert j.stride() == tt.stride(), (j.stride(), tt.stride())


def raises_alike(bad, shape=(2, 3, 6, 5), mod=JF, tmod=TF):
    """``bad(mod, x)`` raises the same error on a CPU tensor and on its meta twin, of the type
    torch raises (jtorch's messages are torch's but for a few Python-level ones)."""
    jx = t(shape)
    with pytest.raises(Exception) as expected:
        bad(tmod, torch.from_numpy(jx.numpy()))
    with pytest.raises(Exception) as cpu:
        bad(mod, jx)
    assert type(cpu.value) is type(expected.value), (cpu.value, expected.value)
    with pytest.raises(Exception) as meta:
        bad(mod, to_meta(jx, {}))
    assert (type(meta.value), str(meta.value)) == (type(cpu.value), as_on_meta(str(cpu.value)))


# -- convolution ---------------------------------------------------------------------------------

CONV = [
    ("conv1d", lambda F: F.conv1d, [(2, 3, 10), (4, 3, 3), (4,)], {"stride": 2, "padding": 1}),
    ("conv1d unbatched", lambda F: F.conv1d, [(3, 10), (4, 3, 3)], {"dilation": 2}),
    ("conv1d same", lambda F: F.conv1d, [(2, 3, 9), (4, 3, 4)], {"padding": "same"}),
    ("conv1d valid", lambda F: F.conv1d, [(2, 3, 9), (4, 3, 4)], {"padding": "valid"}),
    ("conv2d", lambda F: F.conv2d, [(2, 4, 6, 5), (6, 2, 3, 3), (6,)], {"groups": 2, "padding": 1}),
    ("conv2d stride", lambda F: F.conv2d, [(1, 3, 7, 7), (2, 3, 3, 2)],
     {"stride": (2, 1), "padding": (1, 0), "dilation": (1, 2)}),
    ("conv2d unbatched", lambda F: F.conv2d, [(3, 5, 5), (2, 3, 3, 3), (2,)], {}),
    ("conv2d 0-batch", lambda F: F.conv2d, [(0, 3, 5, 5), (2, 3, 3, 3)], {}),
    ("conv2d no channels", lambda F: F.conv2d, [(1, 0, 4, 4), (2, 0, 3, 3), (2,)], {}),
    ("conv3d", lambda F: F.conv3d, [(1, 2, 4, 5, 4), (3, 2, 2, 2, 2), (3,)], {"stride": (1, 2, 1)}),
    ("conv_transpose1d", lambda F: F.conv_transpose1d, [(2, 3, 5), (3, 4, 3), (4,)],
     {"stride": 2, "output_padding": 1}),
    ("conv_transpose2d", lambda F: F.conv_transpose2d, [(1, 4, 4, 3), (4, 2, 3, 3)],
     {"stride": 2, "padding": 1, "groups": 2}),
    ("conv_transpose2d unbatched", lambda F: F.conv_transpose2d, [(4, 4, 3), (4, 2, 3, 3), (2,)],
     {"dilation": 2}),
    ("conv_transpose3d", lambda F: F.conv_transpose3d, [(1, 2, 2, 3, 2), (2, 3, 2, 2, 2)], {}),
]


@pytest.mark.parametrize("layout", [None, "T", "cl"])
@pytest.mark.parametrize("name,fn,shapes,kw", CONV, ids=[c[0] for c in CONV])
def test_convolutions(name, fn, shapes, kw, layout):
    if layout == "cl" and len(shapes[0]) != 4:
        pytest.skip("channels last: 4-D inputs")
    x = t(shapes[0], "float64", grad=True, layout=layout)
    rest = [t(s, "float64", grad=True) for s in shapes[1:]]
    res, mres = same_on_meta(fn(JF), x, *rest, grad=x.numel() > 0 or len(shapes) > 2, **kw)
    if layout is None:
        torch_meta_same(mres, fn(TF), x, *rest, **kw)


def test_conv_dtypes_on_meta():
    for d in ("float32", "float16", "int64", "complex64"):
        same_on_meta(JF.conv2d, t((1, 2, 5, 5), d, lo=-3, hi=3), t((3, 2, 3, 3), d, lo=-3, hi=3))
    same_on_meta(JF.conv_transpose2d, t((1, 2, 5, 5), "int32", lo=0, hi=3),
                 t((2, 3, 3, 3), "int32", lo=0, hi=3))


CONV_ERRORS = [
    lambda F, T: F.conv2d(T.ones(1, 3, 5), T.ones(2, 3, 3, 3)),               # input dims
    lambda F, T: F.conv2d(T.ones(1, 3, 5, 5), T.ones(2, 4, 3, 3)),            # channels
    lambda F, T: F.conv2d(T.ones(1, 3, 5, 5), T.ones(2, 3, 3, 3), T.ones(3)),  # bias
    lambda F, T: F.conv2d(T.ones(1, 3, 2, 2), T.ones(2, 3, 3, 3)),            # kernel too big
    lambda F, T: F.conv2d(T.ones(1, 3, 5, 5), T.ones(2, 3, 3, 3), stride=0),
    lambda F, T: F.conv2d(T.ones(1, 3, 5, 5), T.ones(2, 3, 3, 3), stride=1.0),
    lambda F, T: F.conv2d(T.ones(1, 3, 5, 5), T.ones(2, 3, 3, 3), padding=-1),
    lambda F, T: F.conv2d(T.ones(1, 3, 5, 5), T.ones(2, 3, 3, 3), padding="full"),
    lambda F, T: F.conv2d(T.ones(1, 3, 5, 5), T.ones(2, 3, 3, 3), padding="same", stride=2),
    lambda F, T: F.conv2d(T.ones(1, 4, 5, 5), T.ones(4, 2, 3, 3), groups=3),
    lambda F, T: F.conv2d(T.ones(1, 3, 5, 5), T.ones(2, 3, 3, 3, dtype=T.float64)),
    lambda F, T: F.conv2d(T.ones(1, 3, 5, 5), T.ones(2, 3, 3, 3), T.ones(2, dtype=T.float64)),
    lambda F, T: F.conv2d(T.ones(1, 3, 5, 5, dtype=T.bool), T.ones(2, 3, 3, 3, dtype=T.bool)),
    lambda F, T: F.conv_transpose2d(T.ones(1, 3, 5, 5), T.ones(2, 3, 3, 3)),
    lambda F, T: F.conv_transpose2d(T.ones(1, 3, 5, 5), T.ones(3, 3, 3, 3), output_padding=2),
    lambda F, T: F.conv_transpose2d(T.ones(1, 3, 5, 5, dtype=T.int32),
                                    T.ones(3, 3, 3, 3, dtype=T.int32)),
    lambda F, T: F.conv3d(T.ones(1, 2, 3, 3, 3), T.ones(2, 2, 2, 2, 2), dilation=(1, 0, 1)),
    lambda F, T: F.conv2d(T.ones(1, 1, 0, 4), T.ones(2, 1, 1, 2), padding=1),  # empty planes
    lambda F, T: F.conv2d(T.ones(1, 1, 0, 4), T.ones(2, 1, 1, 2), T.ones(2, dtype=T.float64),
                          padding=1),
    lambda F, T: F.conv_transpose1d(T.ones(1, 1, 0), T.ones(1, 2, 1)),
]


@pytest.mark.parametrize("i", range(len(CONV_ERRORS)))
def test_conv_errors_on_meta(i):
    call = CONV_ERRORS[i]
    with pytest.raises(Exception) as expected:
        call(TF, torch)
    got = {}
    for dev in ("cpu", "meta"):
        def ones(*s, dtype=None, _dev=dev):
            x = jtorch.ones(*s, dtype=dtype)
            return to_meta(x, {}) if _dev == "meta" else x

        ns = type("T", (), {"ones": staticmethod(ones), "float64": jtorch.float64,
                            "bool": jtorch.bool, "int32": jtorch.int32})
        with pytest.raises(Exception) as err:
            call(JF, ns)
        got[dev] = err.value
    assert type(got["cpu"]) is type(expected.value)
    assert (type(got["meta"]), str(got["meta"])) == (type(got["cpu"]), str(got["cpu"]))


def test_conv_memoised_plans_keep_devices_apart():
    """The memoised plan of a CPU call is not served to a meta call of the same geometry (and
    mixing the two raises torch's error)."""
    x, w = t((1, 2, 5, 5)), t((3, 2, 3, 3))
    JF.conv2d(x, w)
    m = JF.conv2d(to_meta(x, {}), to_meta(w, {}))
    assert m.is_meta and tuple(m.shape) == (1, 3, 3, 3)
    with pytest.raises(RuntimeError, match="is not on the expected device"):
        JF.conv2d(x, to_meta(w, {}))


@pytest.mark.parametrize("layout", [None, "T", "step"])
def test_unfold_fold(layout):
    x = t((2, 3, 5, 6), "float64", grad=True, layout=layout)
    res, mres = same_on_meta(JF.unfold, x, (2, 3), dilation=1, padding=1, stride=(1, 2), grad=True)
    torch_meta_same(mres, TF.unfold, x, (2, 3), padding=1, stride=(1, 2))
    same_on_meta(JF.unfold, t((3, 5, 6), grad=True, layout=layout), 2, grad=True)
    cols = t((2, 12, 16), "float64", grad=True, layout=layout)
    res, mres = same_on_meta(JF.fold, cols, (5, 5), 2, grad=True)
    torch_meta_same(mres, TF.fold, cols, (5, 5), 2)
    same_on_meta(JF.fold, t((12, 16), grad=True, layout=layout), (5, 5), 2, grad=True)
    same_on_meta(JF.fold, t((0, 12, 16)), (5, 5), 2)
    same_on_meta(JF.unfold, t((0, 3, 4, 4)), 2)
    for bad in [lambda F, x: F.unfold(x, 7), lambda F, x: F.unfold(x[0, :0], 2),
                lambda F, x: F.unfold(x.long(), 2),
                lambda F, x: F.fold(x.reshape(2, 15, 4), (5, 5), 2),
                lambda F, x: F.fold(x.reshape(2, 12, 5), (5, 5), 2),
                lambda F, x: F.unfold(x, 0), lambda F, x: F.unfold(x, 2, stride=(1, 2, 3))]:
        raises_alike(bad, (2, 3, 5, 4))


def test_unbatched_unfold_is_one_op_as_in_torch():
    x = t((3, 4, 4), grad=True)
    assert type(JF.unfold(x, 2).grad_fn).__name__ == "Im2ColBackward0"
    assert type(JF.fold(t((12, 9), grad=True), (4, 4), 2).grad_fn).__name__ == "Col2ImBackward0"


def test_conv_double_backward_on_meta():
    x, w = t((2, 2, 5, 5), "float64", grad=True), t((3, 2, 3, 3), "float64", grad=True)

    def f(x, w):
        y = JF.conv2d(x, w, padding=1)
        gx, gw = jtorch.autograd.grad(y.pow(2).sum(), (x, w), create_graph=True)
        return gx.sum() + gw.sum()

    same_on_meta(f, x, w, grad=True)


# -- pooling ---------------------------------------------------------------------------------------

POOL = [
    ("max_pool1d", lambda F: F.max_pool1d, (2, 3, 9), (3,), {"stride": 2, "padding": 1}),
    ("max_pool1d indices", lambda F: F.max_pool1d, (3, 9), (2,),
     {"ceil_mode": True, "return_indices": True}),
    ("max_pool1d_with_indices", lambda F: F.max_pool1d_with_indices, (2, 3, 9), (3,),
     {"dilation": 2}),
    ("max_pool2d", lambda F: F.max_pool2d, (2, 3, 6, 7), (2,), {}),
    ("max_pool2d indices", lambda F: F.max_pool2d, (3, 7, 6), ((3, 2),),
     {"stride": (2, 1), "padding": 1, "dilation": (1, 2), "ceil_mode": True,
      "return_indices": True}),
    ("max_pool2d_with_indices", lambda F: F.max_pool2d_with_indices, (1, 2, 5, 5), (3,),
     {"stride": 2}),
    ("max_pool2d 0-batch", lambda F: F.max_pool2d, (0, 2, 4, 4), (2,), {}),
    ("max_pool3d", lambda F: F.max_pool3d, (1, 2, 4, 5, 4), (2,), {"return_indices": True}),
    ("max_pool3d_with_indices", lambda F: F.max_pool3d_with_indices, (2, 4, 5, 4), (2,),
     {"padding": 1}),
    ("avg_pool1d", lambda F: F.avg_pool1d, (2, 3, 9), (3,), {"padding": 1,
                                                              "count_include_pad": False}),
    ("avg_pool2d", lambda F: F.avg_pool2d, (2, 3, 6, 7), (2,), {}),
    ("avg_pool2d options", lambda F: F.avg_pool2d, (3, 7, 6), ((3, 2),),
     {"stride": 2, "padding": 1, "ceil_mode": True, "divisor_override": 3}),
    ("avg_pool3d", lambda F: F.avg_pool3d, (1, 2, 4, 5, 4), (2,), {"count_include_pad": False,
                                                                   "padding": 1}),
    ("adaptive_avg_pool1d", lambda F: F.adaptive_avg_pool1d, (2, 3, 9), (4,), {}),
    ("adaptive_avg_pool2d", lambda F: F.adaptive_avg_pool2d, (2, 3, 7, 5), ((3, None),), {}),
    ("adaptive_avg_pool2d mean", lambda F: F.adaptive_avg_pool2d, (2, 3, 7, 5), (1,), {}),
    ("adaptive_avg_pool3d", lambda F: F.adaptive_avg_pool3d, (2, 4, 5, 6), (2,), {}),
    ("adaptive_max_pool1d", lambda F: F.adaptive_max_pool1d, (2, 3, 9), (4,),
     {"return_indices": True}),
    ("adaptive_max_pool1d_with_indices", lambda F: F.adaptive_max_pool1d_with_indices, (3, 9),
     (4,), {}),
    ("adaptive_max_pool2d", lambda F: F.adaptive_max_pool2d, (2, 3, 7, 5), ((3, 2),), {}),
    ("adaptive_max_pool2d_with_indices", lambda F: F.adaptive_max_pool2d_with_indices,
     (3, 7, 5), (2,), {}),
    ("adaptive_max_pool3d", lambda F: F.adaptive_max_pool3d, (1, 2, 4, 5, 6), (2,),
     {"return_indices": True}),
    ("adaptive_max_pool3d_with_indices", lambda F: F.adaptive_max_pool3d_with_indices,
     (2, 4, 5, 6), (3,), {}),
    ("lp_pool1d", lambda F: F.lp_pool1d, (2, 3, 9), (2, 3), {}),
    ("lp_pool2d", lambda F: F.lp_pool2d, (2, 3, 6, 6), (3.0, 2), {"ceil_mode": True}),
    ("lp_pool2d inf", lambda F: F.lp_pool2d, (2, 3, 6, 6), (float("inf"), 2), {}),
    ("lp_pool3d", lambda F: F.lp_pool3d, (1, 2, 4, 4, 4), (2, 2), {}),
]


@pytest.mark.parametrize("layout", [None, "T", "cl"])
@pytest.mark.parametrize("name,fn,shape,args,kw", POOL, ids=[p[0] for p in POOL])
def test_pooling(name, fn, shape, args, kw, layout):
    if layout == "cl" and len(shape) != 4:
        pytest.skip("channels last: 4-D inputs")
    x = t(shape, "float64", grad=True, layout=layout)
    res, mres = same_on_meta(fn(JF), x, *args, grad=x.numel() > 0, **kw)
    if layout is None and not name.startswith("lp"):
        torch_meta_same(mres, fn(TF), x, *args, **kw)


def test_pooling_dtypes_and_top_level_names():
    for d in ("float32", "float16", "int64"):
        x = t((2, 3, 6, 6), d, lo=-5, hi=5)
        same_on_meta(JF.max_pool2d, x, 2, return_indices=True)
        same_on_meta(JF.avg_pool2d, x, 2)
        same_on_meta(JF.adaptive_avg_pool2d, x, 3)
    for name in ("max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
                 "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool1d"):
        x = t((2, 3, 4, 6, 6)[-(4 if "3d" in name else 3 if "2d" in name else 2) - 1:])
        same_on_meta(getattr(jtorch, name), x, 2)


POOL_ERRORS = [
    lambda F, x: F.max_pool2d(x, 2, padding=2),
    lambda F, x: F.max_pool2d(x, 0),
    lambda F, x: F.max_pool2d(x, 9),
    lambda F, x: F.max_pool2d(x[0, 0, 0], 2),
    lambda F, x: F.max_pool2d(x, (1, 2, 3)),
    lambda F, x: F.max_pool2d(x, 2.0),
    lambda F, x: F.max_pool2d(x.bool(), 2),
    lambda F, x: F.max_pool1d(x[0], 2, padding=2),
    lambda F, x: F.max_pool1d(x, 2),
    lambda F, x: F.max_pool3d(x[0], 2),
    lambda F, x: F.avg_pool2d(x, 2, divisor_override=0),
    lambda F, x: F.avg_pool2d(x.long(), 2, padding=3),
    lambda F, x: F.avg_pool3d(x[0].half(), 2),
    lambda F, x: F.avg_pool1d(x, 2),
    lambda F, x: F.adaptive_avg_pool2d(x, (2, 2, 2)),
    lambda F, x: F.adaptive_avg_pool2d(x, -1),
    lambda F, x: F.adaptive_avg_pool2d(x.long(), 2),
    lambda F, x: F.adaptive_max_pool2d(x[0, 0, 0], 2),
    lambda F, x: F.adaptive_max_pool2d(x[:, :0], 2),
    lambda F, x: F.adaptive_max_pool3d(x, (2, 2)),
    lambda F, x: F.lp_pool2d(x, 2, 0),
    lambda F, x: F.max_unpool2d(x, x.long(), 2, output_size=(1, 1)),
    lambda F, x: F.max_unpool2d(x, x, 2),
    lambda F, x: F.max_unpool2d(x, x.long()[:, :1], 2),
    lambda F, x: F.max_unpool2d(x[0, 0], x[0, 0].long(), 2),
]


@pytest.mark.parametrize("i", range(len(POOL_ERRORS)))
def test_pooling_errors_on_meta(i):
    raises_alike(POOL_ERRORS[i])


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_max_unpool(nd):
    x = t((2, 3) + (6,) * nd, "float64", grad=True)
    pool, unpool = getattr(JF, f"max_pool{nd}d"), getattr(JF, f"max_unpool{nd}d")
    v, i = pool(x, 2, return_indices=True)
    v = v.detach().requires_grad_()
    same_on_meta(unpool, v, i, 2, grad=True)
    same_on_meta(unpool, v, i, 2, output_size=(7,) * nd)
    same_on_meta(unpool, v[0], i[0], 2, 2, 0)


def test_max_unpool_bad_index_raises_on_cpu_only():
    """An out-of-range index is a value: the CPU kernel finds it, meta cannot (as torch's)."""
    v, i = t((1, 1, 2, 2)), jtorch.full((1, 1, 2, 2), 99, dtype=jtorch.int64)
    with pytest.raises(RuntimeError, match="Found an invalid max index: 99"):
        JF.max_unpool2d(v, i, 2)
    assert JF.max_unpool2d(to_meta(v, {}), to_meta(i, {}), 2).is_meta


def test_pooling_double_backward_on_meta():
    x = t((2, 2, 6, 6), "float64", grad=True)

    def f(x):
        y = JF.max_pool2d(x, 2) + JF.avg_pool2d(x, 2) + JF.adaptive_avg_pool2d(x, 3)
        (g,) = jtorch.autograd.grad(y.pow(2).sum(), x, create_graph=True)
        return g

    same_on_meta(f, x, grad=True)


# -- resampling ------------------------------------------------------------------------------------

INTERP = [
    ((2, 3, 5), {"size": 8}),
    ((2, 3, 5), {"scale_factor": 1.7, "mode": "linear"}),
    ((2, 3, 5, 4), {"scale_factor": 2}),
    ((2, 3, 5, 4), {"size": (3, 7), "mode": "nearest-exact"}),
    ((2, 3, 5, 4), {"size": (8, 3), "mode": "bilinear", "align_corners": True}),
    ((2, 3, 5, 4), {"scale_factor": (1.5, 2.5), "mode": "bicubic"}),
    ((2, 3, 5, 4), {"size": (3, 2), "mode": "area"}),
    ((1, 2, 3, 4, 5), {"scale_factor": 2, "mode": "trilinear", "recompute_scale_factor": True}),
    ((1, 2, 3, 4, 5), {"size": (2, 5, 3), "mode": "nearest"}),
    ((0, 2, 4, 4), {"scale_factor": 2}),
]


@pytest.mark.parametrize("layout", [None, "T"])
@pytest.mark.parametrize("shape,kw", INTERP)
def test_interpolate(shape, kw, layout):
    x = t(shape, "float64", grad=True, layout=layout)
    res, mres = same_on_meta(JF.interpolate, x, grad=x.numel() > 0, **kw)
    if layout is None and x.numel():
        torch_meta_same(mres, TF.interpolate, x, **kw)


def test_upsample_aliases():
    x = t((1, 2, 3, 4), grad=True)
    same_on_meta(JF.upsample, x, scale_factor=2, mode="bilinear", grad=True)
    same_on_meta(JF.upsample_nearest, x, size=(5, 6), grad=True)
    same_on_meta(JF.upsample_bilinear, x, scale_factor=2, grad=True)
    same_on_meta(JF.interpolate, t((1, 2, 4, 4), "uint8", lo=0, hi=9), scale_factor=2)
    same_on_meta(JF.interpolate, t((1, 2, 4, 4), "float16"), scale_factor=2, mode="bilinear")


PADS = [
    ((2, 3, 4), (1, 2), "constant", {"value": 1.5}),
    ((2, 3, 4), (1, -2, 0, 1), "constant", {}),
    ((2, 3, 4), (2, 1, 1, 0, 1, 1), "constant", {}),
    ((2, 3, 4), (2, 3), "reflect", {}),
    ((2, 3, 4, 5), (1, 2, 3, 0), "replicate", {}),
    ((1, 2, 3, 4, 5), (1, 1, 2, 0, 1, 2), "circular", {}),
    ((2, 3, 4), (-1, 2), "circular", {}),
    ((0, 3, 4), (1, 1), "circular", {}),
]


@pytest.mark.parametrize("layout", [None, "T"])
@pytest.mark.parametrize("shape,pads,mode,kw", PADS)
def test_pad(shape, pads, mode, kw, layout):
    x = t(shape, "float64", grad=True, layout=layout)
    res, mres = same_on_meta(JF.pad, x, pads, mode=mode, grad=x.numel() > 0, **kw)
    if layout is None:
        torch_meta_same(mres, TF.pad, x, pads, mode=mode, **kw)
    same_on_meta(JF.pad, t(shape, "bool", lo=0, hi=2), pads, mode=mode)
    same_on_meta(JF.pad, t(shape, "int64", lo=0, hi=9), pads, mode=mode)


RESAMPLE_ERRORS = [
    lambda F, x: F.interpolate(x.long(), scale_factor=2, mode="bilinear"),
    lambda F, x: F.interpolate(x[:, :, :0], scale_factor=2),
    lambda F, x: F.interpolate(x, size=(0, 2)),
    lambda F, x: F.interpolate(x, scale_factor=2, mode="linear"),
    lambda F, x: F.interpolate(x, size=2, scale_factor=2),
    lambda F, x: F.pad(x, (1, 2, 3)),
    lambda F, x: F.pad(x, (5, 5), mode="reflect"),
    lambda F, x: F.pad(x, (1, 1), mode="reflect", value=2.0),
    lambda F, x: F.pad(x, (1, 1), mode="wrap"),
    lambda F, x: F.pad(x, (1,) * 10),
    lambda F, x: F.pad(x, (1,) * 8, mode="replicate"),
    lambda F, x: F.pad(x, (-9, 1)),
    lambda F, x: F.pad(x, (7, 7), mode="circular"),
    lambda F, x: F.pad(x.bool(), (1, 1), mode="replicate"),
    lambda F, x: F.grid_sample(x, x[..., :3], align_corners=False),
    lambda F, x: F.grid_sample(x, x[:, :4, :, :2].permute(0, 2, 3, 1), align_corners=False),
    lambda F, x: F.grid_sample(x.long(), x[:, :3, :, :2].long(), align_corners=False),
    lambda F, x: F.grid_sample(x, x[:1, :3, :, :2], align_corners=False),
]


@pytest.mark.parametrize("i", range(len(RESAMPLE_ERRORS)))
def test_resample_errors_on_meta(i):
    raises_alike(RESAMPLE_ERRORS[i])


@pytest.mark.parametrize("mode,padding", [("bilinear", "zeros"), ("nearest", "border"),
                                          ("bilinear", "reflection")])
def test_grid_sample_and_affine_grid(mode, padding):
    x = t((2, 3, 5, 4), "float64", grad=True, layout="T")
    grid = t((2, 4, 6, 2), "float64", grad=True)
    res, mres = same_on_meta(JF.grid_sample, x, grid, mode=mode, padding_mode=padding,
                             align_corners=False, grad=True)
    torch_meta_same(mres, TF.grid_sample, x, grid, mode=mode, padding_mode=padding,
                    align_corners=False)
    theta = t((2, 2, 3), "float64", grad=True)
    for align in (False, True):
        res, mres = same_on_meta(JF.affine_grid, theta, (2, 3, 4, 5), align_corners=align,
                                 grad=True)
        torch_meta_same(mres, TF.affine_grid, theta, (2, 3, 4, 5), align_corners=align)
    same_on_meta(JF.affine_grid, t((1, 3, 4)), (1, 1, 2, 3, 4), align_corners=False)
    same_on_meta(JF.affine_grid, t((2, 2, 3), "float32"), (2, 3, 4, 5), align_corners=None)


def test_pixel_shuffle():
    x = t((2, 8, 3, 3), grad=True)
    same_on_meta(JF.pixel_shuffle, x, 2, grad=True)
    same_on_meta(JF.pixel_unshuffle, t((2, 2, 4, 6), grad=True), 2, grad=True)
    same_on_meta(JF.pixel_shuffle, x, 3)


# -- contractions ----------------------------------------------------------------------------------

MATMUL = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
          ((5, 2, 3), (3,)), ((3,), (5, 3, 4)), ((2, 3), (5, 3, 4)), ((5, 2, 3), (5, 3, 4)),
          ((5, 1, 2, 3), (7, 3, 4)), ((4, 2, 3), (1, 3, 4)), ((0, 3), (3, 2)), ((2, 0), (0, 3)),
          ((0, 2, 3), (3, 4)), ((2, 3), (4, 3))]


@pytest.mark.parametrize("layout", [None, "T"])
@pytest.mark.parametrize("sa,sb", MATMUL)
def test_matmul(sa, sb, layout):
    a = t(sa, "float64", grad=True, layout=layout if len(sa) > 1 else None)
    b = t(sb, "float64", grad=True, layout=layout if len(sb) > 1 else None)
    ok = 0 not in sa and 0 not in sb
    res, mres = same_on_meta(jtorch.matmul, a, b, grad=ok)
    same_on_meta(lambda a, b: a @ b, a, b)
    if res is not None and layout is None:
        torch_meta_same(mres, torch.matmul, a, b)


LINALG = [
    ("mm", lambda m: m.mm, [(2, 3), (3, 4)], {}),
    ("mm method", lambda m: m.Tensor.mm, [(2, 3), (3, 4)], {}),
    ("bmm", lambda m: m.bmm, [(5, 2, 3), (5, 3, 4)], {}),
    ("mv", lambda m: m.mv, [(2, 3), (3,)], {}),
    ("dot", lambda m: m.dot, [(3,), (3,)], {}),
    ("vdot", lambda m: m.vdot, [(3,), (3,)], {}),
    ("inner", lambda m: m.inner, [(2, 3), (5, 2, 3)], {}),
    ("outer", lambda m: m.outer, [(3,), (4,)], {}),
    ("ger", lambda m: m.ger, [(3,), (4,)], {}),
    ("addmm", lambda m: m.addmm, [(4,), (2, 3), (3, 4)], {"beta": 0.5, "alpha": 2}),
    ("addmm 0-d input", lambda m: m.addmm, [(), (2, 3), (3, 4)], {}),
    ("addmv", lambda m: m.addmv, [(2,), (2, 3), (3,)], {"alpha": 3}),
    ("baddbmm", lambda m: m.baddbmm, [(5, 1, 4), (5, 2, 3), (5, 3, 4)], {"beta": 2}),
    ("addbmm", lambda m: m.addbmm, [(2, 4), (5, 2, 3), (5, 3, 4)], {}),
    ("addr", lambda m: m.addr, [(2, 3), (2,), (3,)], {}),
    ("chain_matmul", lambda m: m.chain_matmul, [(2, 3), (3, 4), (4, 2)], {}),
    ("tensordot", lambda m: m.tensordot, [(2, 3, 4), (3, 4, 5)], {"dims": 2}),
    ("tensordot lists", lambda m: m.tensordot, [(2, 3, 4), (4, 2, 5)], {"dims": ([0, 2], [1, 0])}),
    ("kron", lambda m: m.kron, [(2, 3), (3, 2)], {}),
    ("trace", lambda m: m.trace, [(3, 4)], {}),
    ("linalg.matmul", lambda m: m.linalg.matmul, [(5, 2, 3), (3, 4)], {}),
    ("linalg.multi_dot", lambda m: lambda *a: m.linalg.multi_dot(list(a)),
     [(3,), (3, 4), (4, 2)], {}),
    ("linalg.vecdot", lambda m: m.linalg.vecdot, [(2, 3), (4, 1, 3)], {}),
    ("linalg.svdvals", lambda m: m.linalg.svdvals, [(2, 4, 3)], {}),
    ("linalg.svdvals empty", lambda m: m.linalg.svdvals, [(2, 0, 3)], {}),
    ("linalg.matrix_norm nuc empty", lambda m: m.linalg.matrix_norm, [(0, 3)], {"ord": "nuc"}),
    ("linalg.matrix_norm fro", lambda m: m.linalg.matrix_norm, [(2, 4, 3)], {}),
    ("linalg.matrix_norm nuc", lambda m: m.linalg.matrix_norm, [(4, 3)], {"ord": "nuc"}),
    ("linalg.matrix_norm 2", lambda m: m.linalg.matrix_norm, [(2, 4, 3)],
     {"ord": 2, "keepdim": True}),
    ("linalg.matrix_norm inf", lambda m: m.linalg.matrix_norm, [(2, 4, 3)],
     {"ord": float("inf"), "dim": (0, 2)}),
    ("linalg.norm", lambda m: m.linalg.norm, [(4, 3)], {"ord": 1}),
    ("linalg.norm vector", lambda m: m.linalg.norm, [(2, 4, 3)], {"dim": 1}),
    ("linear", lambda m: m.nn.functional.linear, [(5, 3), (4, 3), (4,)], {}),
    ("linear 3-d", lambda m: m.nn.functional.linear, [(2, 5, 3), (4, 3), (4,)], {}),
    ("linear no bias", lambda m: m.nn.functional.linear, [(2, 5, 3), (4, 3)], {}),
    ("linear vector", lambda m: m.nn.functional.linear, [(3,), (4, 3), (4,)], {}),
    ("bilinear", lambda m: m.nn.functional.bilinear, [(5, 3), (5, 2), (4, 3, 2), (4,)], {}),
    ("einsum", lambda m: lambda a, b: m.einsum("bij,bjk->bik", a, b), [(2, 3, 4), (2, 4, 5)], {}),
    ("einsum implicit", lambda m: lambda a, b: m.einsum("ij,kj", a, b), [(2, 3), (4, 3)], {}),
    ("einsum ellipsis", lambda m: lambda a, b: m.einsum("...ij,...j->...i", a, b),
     [(2, 3, 4), (4,)], {}),
    ("einsum diagonal", lambda m: lambda a: m.einsum("ii->i", a), [(3, 3)], {}),
    ("cdist", lambda m: m.cdist, [(4, 3), (5, 3)], {}),
    ("cdist mm", lambda m: m.cdist, [(30, 3), (5, 3)], {}),
    ("cdist batched", lambda m: m.cdist, [(2, 4, 3), (5, 3)], {"p": 1.0}),
    ("cdist p0", lambda m: m.cdist, [(4, 3), (5, 3)], {"p": 0}),
    ("cdist inf", lambda m: m.cdist, [(2, 4, 3), (2, 5, 3)], {"p": float("inf")}),
    ("pairwise_distance", lambda m: m.nn.functional.pairwise_distance, [(4, 3), (3,)], {}),
    ("pairwise_distance keepdim", lambda m: m.pairwise_distance, [(4, 3), (4, 3)],
     {"p": 1.0, "keepdim": True}),
    ("cosine_similarity", lambda m: m.nn.functional.cosine_similarity, [(4, 3), (1, 3)], {}),
    ("cosine_similarity dim", lambda m: m.cosine_similarity, [(4, 3, 2), (4, 3, 2)], {"dim": 0}),
]


@pytest.mark.parametrize("layout", [None, "T"])
@pytest.mark.parametrize("name,fn,shapes,kw", LINALG, ids=[c[0] for c in LINALG])
def test_contractions_and_distances(name, fn, shapes, kw, layout):
    args = [t(s, "float64", grad=True, layout=layout if len(s) >= 2 else None) for s in shapes]
    same_on_meta(fn(jtorch), *args, grad=True, **kw)


def test_contraction_dtypes_on_meta():
    for d in ("float32", "float16", "int64", "complex64"):
        a, b = t((2, 3), d, lo=-3, hi=3), t((3, 4), d, lo=-3, hi=3)
        same_on_meta(jtorch.mm, a, b)
        same_on_meta(jtorch.addmm, t((4,), d, lo=-3, hi=3), a, b)
        same_on_meta(jtorch.bmm, a[None], b[None])


def test_out_and_inplace_variants_on_meta():
    def mm_out(a, b, o):
        r = jtorch.mm(a, b, out=o)
        assert r is o
        return o

    same_on_meta(mm_out, t((2, 3)), t((3, 4)), t((2, 4)))
    same_on_meta(mm_out, t((2, 3)), t((3, 4)), t((0,)))
    same_on_meta(lambda a, b, o: jtorch.matmul(a, b, out=o), t((5, 2, 3)), t((3, 4)), t((1,)))
    same_on_meta(lambda a, b, o: jtorch.bmm(a, b, out=o), t((5, 2, 3)), t((5, 3, 4)),
                 t((5, 2, 4)))
    same_on_meta(lambda c, a, b: c.addmm_(a, b), t((2, 4)), t((2, 3)), t((3, 4)))


LINALG_ERRORS = [
    lambda m, a: m.mm(a, a),
    lambda m, a: m.mm(a, a.t().double()),
    lambda m, a: m.mm(a[0], a),
    lambda m, a: m.mm(a.bool(), a.t().bool()),
    lambda m, a: m.bmm(a[None], a[None]),
    lambda m, a: m.bmm(a, a),
    lambda m, a: m.matmul(a, a),
    lambda m, a: m.matmul(a[0, 0], a),
    lambda m, a: m.mv(a, a[:, 0]),
    lambda m, a: m.dot(a[0], a[1, :2]),
    lambda m, a: m.addmm(a[:, 0], a.t(), a),
    lambda m, a: m.addmm(a, a, a.t()),
    lambda m, a: m.addmm(a[None], a, a.t()),
    lambda m, a: m.addmm(a[0, :2].double(), a, a.t()),
    lambda m, a: m.outer(a, a[0]),
    lambda m, a: m.cdist(a, a[:, :2]),
    lambda m, a: m.cdist(a[0], a),
    lambda m, a: m.cdist(a.long(), a.long()),
    lambda m, a: m.cdist(a, a, p=-1),
    lambda m, a: m.linalg.svdvals(a[0]),
    lambda m, a: m.linalg.svdvals(a.long()),
    lambda m, a: m.linalg.svdvals(a.half()),
    lambda m, a: m.einsum("ij,jk->ik", a, a),
    lambda m, a: m.tensordot(a, a, dims=([0], [1])),
]


@pytest.mark.parametrize("i", range(len(LINALG_ERRORS)))
def test_contraction_errors_on_meta(i):
    raises_alike(LINALG_ERRORS[i], (2, 3), jtorch, torch)


# -- the demo CNN on meta --------------------------------------------------------------------------

def test_demo_cnn_trains_a_step_on_meta():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    from demo import LeNet

    jtorch.manual_seed(0)
    cpu = LeNet()
    with jtorch.device("meta"):
        meta = LeNet()
    x = t((64, 1, 8, 8))
    y = jtorch.from_numpy(RNG.integers(0, 10, 64))
    storages: dict = {}
    for model, xs, ys in ((cpu, x, y), (meta, to_meta(x, storages), to_meta(y, storages))):
        loss = JF.cross_entropy(model(xs), ys)
        loss.backward()
    for (name, p), q in zip(cpu.named_parameters(), meta.parameters()):
        assert q.is_meta and q.grad.is_meta, name
        assert _geometry(p.grad) == _geometry(q.grad), name


def test_no_kernel_runs_on_meta(monkeypatch):
    """Every op of these families called on meta tensors stops at its plan."""
    from jtorch.kernels.registry import REGISTRY

    ran = []
    for name in ("convolution", "convolution_backward_weight", "im2col", "col2im",
                 "max_pool2d_with_indices", "max_pool2d_with_indices_backward", "avg_pool2d",
                 "avg_pool2d_backward", "resample_taps", "resample_gather", "constant_pad_nd",
                 "grid_sampler_2d", "mm", "bmm", "addmm", "cdist", "linalg_svdvals"):
        op = REGISTRY[name]
        kernel = op.kernels["cpu"]
        monkeypatch.setitem(op.kernels, "cpu", lambda *a, _k=kernel, _n=name: ran.append(_n))
    storages: dict = {}
    x = to_meta(t((2, 3, 8, 8), grad=True), storages)
    w = to_meta(t((4, 3, 3, 3), grad=True), storages)
    y = JF.conv2d(x, w, padding=1)
    y = JF.max_pool2d(y, 2) + JF.avg_pool2d(y, 2)
    y = JF.interpolate(y, scale_factor=2, mode="bilinear") + JF.interpolate(y, scale_factor=2)
    y = JF.pad(y, (1, 1, 1, 1)) + JF.pad(y, (1, 1, 1, 1), mode="reflect")
    y = JF.grid_sample(y, to_meta(t((2, 3, 3, 2)), storages), align_corners=True)
    z = JF.linear(y.flatten(1), to_meta(t((5, 36), grad=True), storages), to_meta(t((5,)), {}))
    z = jtorch.cdist(z, z) + jtorch.bmm(z[None], z.t()[None])[0]
    (z.sum() + jtorch.linalg.svdvals(z).sum() + JF.unfold(x, 2).sum()).backward()
    assert not ran
    assert x.grad.is_meta and w.grad.is_meta


def test_dispatch_sees_every_call_of_the_family():
    """The mode hook takes each public call of these families (nothing runs around it)."""
    seen = []

    def take(op, args, plan, params):
        seen.append(op.name)
        return "taken"

    x, w = t((1, 2, 6, 6)), t((3, 2, 3, 3))
    wt, m, x3 = w.transpose(0, 1), x[0, 0], x[0]
    calls = [lambda: JF.conv2d(x, w), lambda: JF.conv_transpose2d(x, wt),
             lambda: JF.unfold(x, 2), lambda: JF.max_pool2d_with_indices(x, 2),
             lambda: JF.avg_pool3d(x, 2), lambda: JF.adaptive_max_pool2d_with_indices(x, 2),
             lambda: JF.interpolate(x, scale_factor=2),
             lambda: JF.pad(x3, (1, 1), mode="replicate"), lambda: JF.pad(x, (1, 1)),
             lambda: jtorch.mm(m, m), lambda: jtorch.addmm(m, m, m), lambda: jtorch.cdist(m, m)]
    prev, dispatch.mode = dispatch.mode, take
    try:
        for c in calls:
            assert c() == "taken"
    finally:
        dispatch.mode = prev
    assert seen == ["convolution", "convolution", "im2col", "max_pool2d_with_indices",
                    "avg_pool3d", "adaptive_max_pool2d", "resample_gather", "resample_gather",
                    "constant_pad_nd", "mm", "addmm", "cdist"]
