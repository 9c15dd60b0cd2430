"""The less common names of torch.nn, nn.functional and nn.utils against torch: lazy modules
(class change, initial values, state_dict both ways), UninitializedParameter/Buffer,
factory_kwargs, NLLLoss2d, RNNCellBase, SyncBatchNorm, fractional max pooling (values,
indices, gradients with the same ``_random_samples``), conv_tbc, native_channel_shuffle,
weight_norm, spectral_norm, fusion, skip_init and weight memory formats."""

from __future__ import annotations

import copy
import warnings

import numpy as np
import pytest
import torch

import jtorch

R = np.random.default_rng(7)


def _t(lib, a, grad=False):
    t = lib.tensor(a)
    return t.requires_grad_() if grad else t


def _close(j, t, rtol=1e-6, atol=1e-7):
    np.testing.assert_allclose(j.detach().numpy(), t.detach().numpy(), rtol=rtol, atol=atol)


def _raises(fn_j, fn_t):
    """Both raise: the same exception type and message."""
    with pytest.raises(Exception) as et:
        fn_t()
    with pytest.raises(type(et.value)) as ej:
        fn_j()
    assert str(ej.value) == str(et.value)


# -- structural names --------------------------------------------------------------------------

def test_factory_kwargs():
    for kw in [None, {}, {"dtype": torch.float64}, {"device": "cpu", "memory_format": None},
               {"factory_kwargs": {"dtype": 1}, "device": "cpu"}]:
        assert jtorch.nn.factory_kwargs(kw) == torch.nn.factory_kwargs(kw)
    _raises(lambda: jtorch.nn.factory_kwargs({"foo": 1}),
            lambda: torch.nn.factory_kwargs({"foo": 1}))
    bad = {"dtype": 1, "factory_kwargs": {"dtype": 2}}
    _raises(lambda: jtorch.nn.factory_kwargs(bad), lambda: torch.nn.factory_kwargs(bad))


def test_functional_constants_and_helpers():
    F, TF = jtorch.nn.functional, torch.nn.functional
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == TF.GRID_SAMPLE_INTERPOLATION_MODES
    assert F.GRID_SAMPLE_PADDING_MODES == TF.GRID_SAMPLE_PADDING_MODES
    F.assert_int_or_pair(3, "k", "{} bad")
    F.assert_int_or_pair((1, 2), "k", "{} bad")
    _raises(lambda: F.assert_int_or_pair((1, 2, 3), "k", "{} bad"),
            lambda: TF.assert_int_or_pair((1, 2, 3), "k", "{} bad"))

    class Wrapped:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return ("handled", func.__name__, len(args))

    def api(a, b):
        return a

    assert F.handle_torch_function(api, (Wrapped(),), Wrapped(), 2) == ("handled", "api", 2)
    assert TF.handle_torch_function(api, (Wrapped(),), Wrapped(), 2) == ("handled", "api", 2)


def test_native_channel_shuffle():
    a = R.standard_normal((2, 6, 3)).astype(np.float32)
    _close(jtorch.nn.functional.native_channel_shuffle(_t(jtorch, a), 3),
           torch.nn.functional.native_channel_shuffle(_t(torch, a), 3))
    _raises(lambda: jtorch.nn.functional.native_channel_shuffle(_t(jtorch, a), 4),
            lambda: torch.nn.functional.native_channel_shuffle(_t(torch, a), 4))


@pytest.mark.parametrize("pad", [0, 1, 2, -1])
def test_conv_tbc(pad):
    x, w, b = (R.standard_normal(s) for s in ((6, 2, 3), (3, 3, 4), (4,)))
    jx, jw, jb = (_t(jtorch, a, True) for a in (x, w, b))
    tx, tw, tb = (_t(torch, a, True) for a in (x, w, b))
    jy = jtorch.nn.functional.conv_tbc(jx, jw, jb, pad)
    ty = torch.nn.functional.conv_tbc(tx, tw, tb, pad)
    assert jy.shape == ty.shape
    _close(jy, ty, 1e-10, 1e-12)
    g = R.standard_normal(tuple(ty.shape))
    jy.backward(_t(jtorch, g))
    ty.backward(_t(torch, g))
    for j, t in ((jx, tx), (jw, tw), (jb, tb)):
        _close(j.grad, t.grad, 1e-10, 1e-12)


def test_conv_tbc_errors():
    t3, w3, b1 = (5, 2, 3), (2, 3, 4), (4,)
    for shapes in [((5, 3), w3, b1), (t3, (2, 3), b1), (t3, w3, (4, 1)), (t3, (2, 2, 4), b1),
                   (t3, w3, (3,)), (t3, (9, 3, 4), b1)]:
        args = [np.zeros(s) for s in shapes]
        _raises(lambda args=args: jtorch.nn.functional.conv_tbc(*[_t(jtorch, a) for a in args]),
                lambda args=args: torch.nn.functional.conv_tbc(*[_t(torch, a) for a in args]))


def test_nll_loss_2d_is_deprecated_nll_loss():
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        jm = jtorch.nn.NLLLoss2d(ignore_index=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = torch.nn.NLLLoss2d(ignore_index=1)
    assert isinstance(jm, jtorch.nn.NLLLoss) and repr(jm) == repr(tm)
    x = R.standard_normal((2, 3, 4, 4))
    y = R.integers(0, 3, (2, 4, 4))
    _close(jm(_t(jtorch, x), _t(jtorch, y)), tm(_t(torch, x), _t(torch, y)), 1e-12)


def test_rnn_cell_base():
    for name in ("RNNCell", "LSTMCell", "GRUCell"):
        assert issubclass(getattr(jtorch.nn, name), jtorch.nn.RNNCellBase)
    jtorch.manual_seed(0)
    j = jtorch.nn.RNNCellBase(3, 4, False, 2)
    t = torch.nn.RNNCellBase(3, 4, False, 2)
    assert repr(j) == repr(t)
    assert {k: tuple(v.shape) for k, v in j.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in t.state_dict().items()}


def test_uninitialized_parameter_and_buffer():
    for lib in (jtorch, torch):
        p = lib.nn.UninitializedParameter(dtype=lib.float64)
        b = lib.nn.UninitializedBuffer()
        assert repr(p) == "<UninitializedParameter>" and repr(b) == "<UninitializedBuffer>"
        assert p.requires_grad and not b.requires_grad
        with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized"):
            _ = p.shape
        q = copy.deepcopy(p)
        assert type(q) is lib.nn.UninitializedParameter and q.dtype == lib.float64
        p.materialize((2, 3))
        b.materialize((4,), dtype=lib.float64)
        assert type(p) is lib.nn.Parameter and tuple(p.shape) == (2, 3)
        assert p.dtype == lib.float64 and p.requires_grad
        assert type(b) is lib.Tensor and tuple(b.shape) == (4,) and b.dtype == lib.float64


# -- lazy modules ------------------------------------------------------------------------------

_LAZY = [
    ("LazyLinear", "Linear", (3,), (2, 5), lambda s: (s[-1], 3)),
    ("LazyLinear", "Linear", (3, False), (4, 2, 6), lambda s: (s[-1], 3, False)),
    ("LazyConv1d", "Conv1d", (4, 3), (2, 6, 9), lambda s: (s[1], 4, 3)),
    ("LazyConv2d", "Conv2d", (4, 3, 2, 1), (2, 6, 7, 7), lambda s: (s[1], 4, 3, 2, 1)),
    ("LazyConv2d", "Conv2d", (4, 3), (6, 7, 7), lambda s: (s[0], 4, 3)),  # unbatched
    ("LazyConv3d", "Conv3d", (2, 2), (1, 3, 4, 4, 4), lambda s: (s[1], 2, 2)),
    ("LazyConvTranspose1d", "ConvTranspose1d", (4, 3), (2, 6, 5), lambda s: (s[1], 4, 3)),
    ("LazyConvTranspose2d", "ConvTranspose2d", (4, 3, 2), (2, 6, 5, 5),
     lambda s: (s[1], 4, 3, 2)),
    ("LazyConvTranspose3d", "ConvTranspose3d", (2, 2), (1, 3, 3, 3, 3), lambda s: (s[1], 2, 2)),
    ("LazyBatchNorm1d", "BatchNorm1d", (), (4, 5), lambda s: (s[1],)),
    ("LazyBatchNorm2d", "BatchNorm2d", (), (2, 3, 4, 4), lambda s: (s[1],)),
    ("LazyBatchNorm3d", "BatchNorm3d", (1e-3, None), (2, 3, 2, 2, 2), lambda s: (s[1], 1e-3, None)),
    ("LazyInstanceNorm1d", "InstanceNorm1d", (1e-5, 0.1, True, True), (2, 3, 6),
     lambda s: (s[1], 1e-5, 0.1, True, True)),
    ("LazyInstanceNorm2d", "InstanceNorm2d", (), (2, 3, 4, 4),
     lambda s: (s[1], 1e-5, 0.1, True, True)),
    ("LazyInstanceNorm3d", "InstanceNorm3d", (1e-5, 0.1, True, False), (2, 3, 2, 2, 2),
     lambda s: (s[1], 1e-5, 0.1, True, False)),
]


@pytest.mark.parametrize("lazy, regular, args, shape, regular_args", _LAZY)
def test_lazy_module_becomes_the_regular_one(lazy, regular, args, shape, regular_args):
    jl, tl = getattr(jtorch.nn, lazy)(*args), getattr(torch.nn, lazy)(*args)
    assert repr(jl) == repr(tl)
    assert jl.has_uninitialized_params()
    jsd, tsd = jl.state_dict(), tl.state_dict()
    assert list(jsd) == list(tsd)
    assert [type(v).__name__ for v in jsd.values()] == [type(v).__name__ for v in tsd.values()]
    x = R.standard_normal(shape).astype(np.float32)
    jtorch.manual_seed(3)
    jy = jl(_t(jtorch, x))
    tl(_t(torch, x))
    jtorch.manual_seed(3)
    jr = getattr(jtorch.nn, regular)(*regular_args(shape))
    ry = jr(_t(jtorch, x))  # the same first step (batch norm updates its statistics)
    assert type(jl) is getattr(jtorch.nn, regular) and type(tl) is getattr(torch.nn, regular)
    assert repr(jl) == repr(tl) == repr(jr)
    assert not jl._forward_pre_hooks
    jsd, tsd, rsd = jl.state_dict(), tl.state_dict(), jr.state_dict()
    assert list(jsd) == list(tsd) == list(rsd)
    for k in jsd:  # same seed, same initial values as the regular module
        assert tuple(jsd[k].shape) == tuple(tsd[k].shape)
        assert jsd[k].dtype == rsd[k].dtype
        np.testing.assert_array_equal(jsd[k].numpy(), rsd[k].numpy())
    np.testing.assert_array_equal(jy.detach().numpy(), ry.detach().numpy())
    _close(jl(_t(jtorch, x)), jr(_t(jtorch, x)))


def test_lazy_state_dict_loads_both_ways():
    t = torch.nn.Linear(5, 3)
    j = jtorch.nn.LazyLinear(3)
    j.load_state_dict({k: jtorch.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    assert type(j) is jtorch.nn.LazyLinear and not j.has_uninitialized_params()
    x = R.standard_normal((2, 5)).astype(np.float32)
    _close(j(_t(jtorch, x)), t(_t(torch, x)))
    assert type(j) is jtorch.nn.Linear
    # an uninitialised checkpoint into an uninitialised module stays lazy
    j2 = jtorch.nn.LazyConv2d(4, 3)
    j2.load_state_dict(jtorch.nn.LazyConv2d(4, 3).state_dict())
    assert j2.has_uninitialized_params()


def test_lazy_module_dtype_device_and_errors():
    j = jtorch.nn.LazyLinear(3, dtype=jtorch.float64)
    j(jtorch.ones(2, 4, dtype=jtorch.float64))
    assert j.weight.dtype == jtorch.float64
    j = jtorch.nn.LazyLinear(3).double()
    assert type(j.weight) is jtorch.nn.UninitializedParameter
    j(jtorch.ones(2, 4, dtype=jtorch.float64))
    assert j.weight.dtype == jtorch.float64
    _raises(lambda: jtorch.nn.LazyConv2d(4, 3)(jtorch.ones(2, 3)),
            lambda: torch.nn.LazyConv2d(4, 3)(torch.ones(2, 3)))
    _raises(lambda: jtorch.nn.LazyConv2d(4, 3, groups=2)(jtorch.ones(1, 3, 5, 5)),
            lambda: torch.nn.LazyConv2d(4, 3, groups=2)(torch.ones(1, 3, 5, 5)))
    lazy = jtorch.nn.LazyBatchNorm1d(affine=False, track_running_stats=False)
    assert not lazy.has_uninitialized_params()
    lazy(jtorch.ones(2, 3))
    assert type(lazy) is jtorch.nn.BatchNorm1d


# -- SyncBatchNorm -----------------------------------------------------------------------------

def test_sync_batch_norm_is_batch_norm_in_one_process():
    j, t = jtorch.nn.SyncBatchNorm(3, momentum=None), torch.nn.SyncBatchNorm(3, momentum=None)
    assert repr(j) == repr(t) and list(j.state_dict()) == list(t.state_dict())
    x = R.standard_normal((4, 3, 2, 2))
    for train in (True, True, False):
        j.train(train)
        t.train(train)
        jx, tx = _t(jtorch, x, True), _t(torch, x, True)
        jy, ty = j.double()(jx), t.double()(tx)
        _close(jy, ty, 1e-10, 1e-12)
        jy.square().sum().backward()
        ty.square().sum().backward()
        _close(jx.grad, tx.grad, 1e-8, 1e-10)
    for k, v in t.state_dict().items():
        _close(j.state_dict()[k], v, 1e-12)
    for shape in ((4,), (4, 0, 2)):
        _raises(lambda s=shape: j(jtorch.zeros(s)), lambda s=shape: t(torch.zeros(s)))


def test_convert_sync_batchnorm():
    def net(lib):
        return lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3, bias=False),
                                 lib.nn.Sequential(lib.nn.BatchNorm2d(4)))

    jn, tn = net(jtorch), net(torch)
    bn = jn[1]
    js = jtorch.nn.SyncBatchNorm.convert_sync_batchnorm(jn)
    ts = torch.nn.SyncBatchNorm.convert_sync_batchnorm(tn)
    assert repr(js) == repr(ts)
    assert js[1].weight is bn.weight and js[1].running_mean is bn.running_mean
    assert list(js.state_dict()) == list(ts.state_dict())


# -- fractional max pooling --------------------------------------------------------------------

_FRAC = [
    (2, (2, 3, 7, 8), 2, {"output_size": (3, 4)}),
    (2, (3, 9, 9), 3, {"output_size": 4}),
    (2, (2, 3, 7, 8), (1, 3), {"output_size": (7, 1)}),
    (2, (2, 2, 8, 10), 2, {"output_ratio": (0.5, 0.7)}),
    (2, (2, 3, 7, 8), 2, {"output_size": (0, 4)}),
    (2, (0, 3, 7, 8), 2, {"output_size": 3}),
    (3, (2, 2, 5, 6, 7), 2, {"output_size": 3}),
    (3, (2, 6, 5, 7), (2, 1, 3), {"output_size": (3, 4, 2)}),
    (3, (1, 2, 9, 9, 9), 3, {"output_ratio": 0.5}),
]


@pytest.mark.parametrize("nd, shape, k, kw", _FRAC)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fractional_max_pool(nd, shape, k, kw, dtype):
    x = R.standard_normal(shape).astype(dtype)
    n = shape[0] if len(shape) == nd + 2 else 1
    u = R.random((max(n, 1), shape[-nd - 1], nd)).astype(dtype)
    name = f"fractional_max_pool{nd}d"
    jx, tx = _t(jtorch, x, True), _t(torch, x, True)
    jo, ji = getattr(jtorch.nn.functional, name)(jx, k, return_indices=True,
                                                 _random_samples=_t(jtorch, u), **kw)
    to, ti = getattr(torch.nn.functional, name)(tx, k, return_indices=True,
                                                _random_samples=_t(torch, u), **kw)
    assert jo.shape == to.shape and jo.dtype == jtorch.float64 if dtype == np.float64 else True
    assert ji.dtype == jtorch.int64
    np.testing.assert_array_equal(jo.detach().numpy(), to.detach().numpy())
    np.testing.assert_array_equal(ji.numpy(), ti.numpy())
    g = R.standard_normal(tuple(to.shape)).astype(dtype)
    jo.backward(_t(jtorch, g))
    to.backward(_t(torch, g))
    _close(jx.grad, tx.grad, 1e-6, 1e-6)
    only = getattr(jtorch.nn.functional, name)(jx, k, _random_samples=_t(jtorch, u), **kw)
    assert only.shape == jo.shape
    _close(getattr(jtorch.nn.functional, name + "_with_indices")(
        jx, k, _random_samples=_t(jtorch, u), **kw)[0], to)


def test_fractional_max_pool_errors():
    F, TF = jtorch.nn.functional, torch.nn.functional
    x = R.standard_normal((2, 3, 7, 8)).astype(np.float32)
    u = R.random((2, 3, 2)).astype(np.float32)
    cases = [
        ("fractional_max_pool2d", (2,), {}),
        ("fractional_max_pool2d", (5,), {"output_size": 4, "_u": u}),
        ("fractional_max_pool2d", (2,), {"output_ratio": 0.5}),
        ("fractional_max_pool2d", (2,), {"output_size": 3, "_u": u[:1]}),
        ("fractional_max_pool2d", (2,), {"output_size": 3, "_u": u[..., :1]}),
        ("fractional_max_pool2d", (2,), {"output_size": 3, "_u": u[0]}),
        ("fractional_max_pool2d", (2,), {"output_size": 3, "_u": u.astype(np.float64)}),
        ("fractional_max_pool2d", ((2, 2, 2),), {"output_size": 3, "_u": u}),
        ("fractional_max_pool2d", (2,), {"output_size": (3, 3, 3), "_u": u}),
    ]
    for name, args, kw in cases:
        kw = dict(kw)
        uu = kw.pop("_u", None)
        extra_j = {} if uu is None else {"_random_samples": _t(jtorch, uu)}
        extra_t = {} if uu is None else {"_random_samples": _t(torch, uu)}
        fj, ft = getattr(F, name), getattr(TF, name)
        _raises(lambda f=fj, a=args, k=kw, e=extra_j: f(_t(jtorch, x), *a, **k, **e),
                lambda f=ft, a=args, k=kw, e=extra_t: f(_t(torch, x), *a, **k, **e))
    for xs in [(3, 7), (2, 3, 0, 7)]:
        _raises(lambda s=xs: F.fractional_max_pool2d(jtorch.zeros(s), 2, output_size=3),
                lambda s=xs: TF.fractional_max_pool2d(torch.zeros(s), 2, output_size=3))
    x3, u3 = jtorch.zeros(1, 1, 7, 8, 9), jtorch.full((1, 1, 3), 0.5)
    with pytest.raises(RuntimeError, match="pool height 3 too large relative to input height 8"):
        F.fractional_max_pool3d(x3, (1, 3, 1), output_size=(6, 6, 8), _random_samples=u3)


def test_fractional_max_pool_modules():
    for nd in (2, 3):
        name = f"FractionalMaxPool{nd}d"
        for args, kw in [((2,), {"output_size": 3}), ((2,), {"output_ratio": 0.5}),
                         ((3,), {"output_ratio": (0.5,) * nd, "return_indices": True})]:
            j, t = getattr(jtorch.nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
            assert repr(j) == repr(t) and j.kernel_size == t.kernel_size
            assert j.output_size == t.output_size and j.output_ratio == t.output_ratio
            assert list(j.state_dict()) == list(t.state_dict())
            x = R.standard_normal((2, 3) + (8,) * nd).astype(np.float32)
            out = j(_t(jtorch, x))
            ref = t(_t(torch, x))
            if kw.get("return_indices"):
                out, ref = out[0], ref[0]
            assert out.shape == ref.shape
        for kw in [{}, {"output_size": 2, "output_ratio": 0.5}, {"output_ratio": 1.5}]:
            cj, ct = getattr(jtorch.nn, name), getattr(torch.nn, name)
            _raises(lambda c=cj, k=kw: c(2, **k), lambda c=ct, k=kw: c(2, **k))
    _raises(lambda: jtorch.nn.FractionalMaxPool3d(0, output_size=2),
            lambda: torch.nn.FractionalMaxPool3d(0, output_size=2))
    # a fixed _random_samples buffer makes the module deterministic and equal to torch's
    u = R.random((2, 3, 2)).astype(np.float32)
    j = jtorch.nn.FractionalMaxPool2d(2, output_size=3, _random_samples=_t(jtorch, u))
    t = torch.nn.FractionalMaxPool2d(2, output_size=3, _random_samples=_t(torch, u))
    assert list(j.state_dict()) == list(t.state_dict()) == ["_random_samples"]
    x = R.standard_normal((2, 3, 8, 8)).astype(np.float32)
    np.testing.assert_array_equal(j(_t(jtorch, x)).numpy(), t(_t(torch, x)).numpy())


# -- nn.utils ----------------------------------------------------------------------------------

def _pair(cls, *args):
    t = getattr(torch.nn, cls)(*args).double()
    j = getattr(jtorch.nn, cls)(*args).double()
    j.load_state_dict({k: jtorch.tensor(v.numpy()) for k, v in t.state_dict().items()})
    return j, t


@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm(dim):
    j, t = _pair("Conv2d", 3, 4, 3)
    with pytest.warns(FutureWarning, match="weight_norm` is deprecated"):
        assert jtorch.nn.utils.weight_norm(j, dim=dim) is j
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.nn.utils.weight_norm(t, dim=dim)
    assert list(j.state_dict()) == list(t.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert j.weight_g.shape == t.weight_g.shape
    x = R.standard_normal((2, 3, 5, 5))
    for _ in range(2):
        jy, ty = j(_t(jtorch, x)), t(_t(torch, x))
        _close(jy, ty, 1e-10, 1e-12)
        jy.square().sum().backward()
        ty.square().sum().backward()
    for n in ("weight_g", "weight_v", "bias"):
        _close(getattr(j, n).grad, getattr(t, n).grad, 1e-9, 1e-10)
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"), \
            warnings.catch_warnings():
        warnings.simplefilter("ignore")
        jtorch.nn.utils.weight_norm(j, dim=dim)
    assert jtorch.nn.utils.remove_weight_norm(j) is j
    torch.nn.utils.remove_weight_norm(t)
    assert list(j.state_dict()) == list(t.state_dict())
    assert isinstance(j.weight, jtorch.nn.Parameter)
    _close(j.weight, t.weight, 1e-12)
    _raises(lambda: jtorch.nn.utils.remove_weight_norm(j),
            lambda: torch.nn.utils.remove_weight_norm(t))


@pytest.mark.parametrize("cls, args, xshape", [("Linear", (5, 4), (2, 5)),
                                               ("Conv2d", (3, 4, 2), (2, 3, 4, 4)),
                                               ("ConvTranspose2d", (3, 4, 2), (2, 3, 4, 4))])
def test_spectral_norm(cls, args, xshape):
    j, t = _pair(cls, *args)
    jtorch.nn.utils.spectral_norm(j, n_power_iterations=2)
    torch.nn.utils.spectral_norm(t, n_power_iterations=2)
    assert list(j.state_dict()) == list(t.state_dict()) == \
        ["bias", "weight_orig", "weight_u", "weight_v"]
    assert j.state_dict()._metadata == t.state_dict()._metadata
    assert j.weight_u.shape == t.weight_u.shape and j.weight_v.shape == t.weight_v.shape
    with jtorch.no_grad():  # the same starting vectors (the draws are the RNG's business)
        j.weight_u.copy_(_t(jtorch, t.weight_u.numpy()))
        j.weight_v.copy_(_t(jtorch, t.weight_v.numpy()))
    x = R.standard_normal(xshape)
    for _ in range(3):
        jy, ty = j(_t(jtorch, x)), t(_t(torch, x))
        _close(jy, ty, 1e-9, 1e-11)
        jy.square().sum().backward()
        ty.square().sum().backward()
        _close(j.weight_u, t.weight_u, 1e-9, 1e-11)
    _close(j.weight_orig.grad, t.weight_orig.grad, 1e-8, 1e-10)
    j.eval()
    t.eval()
    _close(j(_t(jtorch, x)), t(_t(torch, x)), 1e-9, 1e-11)
    # the state_dict reloads into a fresh spectral-normed module
    j2 = getattr(jtorch.nn, cls)(*args).double()
    jtorch.nn.utils.spectral_norm(j2)
    j2.load_state_dict(j.state_dict())
    j2.eval()
    _close(j2(_t(jtorch, x)), t(_t(torch, x)), 1e-9, 1e-11)
    jtorch.nn.utils.remove_spectral_norm(j)
    torch.nn.utils.remove_spectral_norm(t)
    assert list(j.state_dict()) == list(t.state_dict()) and not j._state_dict_hooks
    _close(j.weight, t.weight, 1e-9, 1e-11)
    _raises(lambda: jtorch.nn.utils.remove_spectral_norm(j),
            lambda: torch.nn.utils.remove_spectral_norm(t))
    _raises(lambda: jtorch.nn.utils.spectral_norm(jtorch.nn.Linear(2, 2), n_power_iterations=0),
            lambda: torch.nn.utils.spectral_norm(torch.nn.Linear(2, 2), n_power_iterations=0))


def _bn_pair(cls, n):
    j, t = _pair(cls, n)
    rm, rv = R.standard_normal(n), R.random(n) + 0.5
    w, b = R.standard_normal(n), R.standard_normal(n)
    for m, lib in ((j, jtorch), (t, torch)):
        with lib.no_grad():
            m.running_mean.copy_(_t(lib, rm))
            m.running_var.copy_(_t(lib, rv))
            m.weight.copy_(_t(lib, w))
            m.bias.copy_(_t(lib, b))
        m.eval()
    return j, t


@pytest.mark.parametrize("conv, bn, args, xshape, transpose", [
    ("Conv2d", "BatchNorm2d", (3, 4, 3), (2, 3, 5, 5), False),
    ("Conv1d", "BatchNorm1d", (3, 4, 2), (2, 3, 5), False),
    ("ConvTranspose2d", "BatchNorm2d", (3, 4, 2), (2, 3, 4, 4), True),
])
def test_fuse_conv_bn(conv, bn, args, xshape, transpose):
    jc, tc = _pair(conv, *args)
    jc.eval()
    tc.eval()
    jb, tb = _bn_pair(bn, args[1])
    jf = jtorch.nn.utils.fuse_conv_bn_eval(jc, jb, transpose)
    tf = torch.nn.utils.fuse_conv_bn_eval(tc, tb, transpose)
    assert type(jf) is type(jc) and jf is not jc and isinstance(jf.weight, jtorch.nn.Parameter)
    for k, v in tf.state_dict().items():
        _close(jf.state_dict()[k], v, 1e-12)
    x = _t(jtorch, R.standard_normal(xshape))
    _close(jf(x), jb(jc(x)), 1e-9, 1e-10)
    jc.train()
    with pytest.raises(AssertionError, match="Fusion only for eval!"):
        jtorch.nn.utils.fuse_conv_bn_eval(jc, jb)
    w, b = jtorch.nn.utils.fuse_conv_bn_weights(jc.weight, None, jb.running_mean, jb.running_var,
                                                1e-5, None, None, transpose)
    tw, tb_ = torch.nn.utils.fuse_conv_bn_weights(tc.weight, None, tb.running_mean,
                                                  tb.running_var, 1e-5, None, None, transpose)
    _close(w, tw, 1e-12)
    _close(b, tb_, 1e-12)
    assert w.requires_grad and b.requires_grad == tb_.requires_grad


def test_fuse_linear_bn():
    jl, tl = _pair("Linear", 4, 3)
    jl.eval()
    tl.eval()
    jb, tb = _bn_pair("BatchNorm1d", 3)
    jf, tf = jtorch.nn.utils.fuse_linear_bn_eval(jl, jb), torch.nn.utils.fuse_linear_bn_eval(tl, tb)
    for k, v in tf.state_dict().items():
        _close(jf.state_dict()[k], v, 1e-12)
    x = _t(jtorch, R.standard_normal((5, 4)))
    _close(jf(x), jb(jl(x)), 1e-9, 1e-10)
    w, b = jtorch.nn.utils.fuse_linear_bn_weights(jl.weight, None, jb.running_mean,
                                                  jb.running_var, 1e-5, jb.weight, jb.bias)
    tw, tb_ = torch.nn.utils.fuse_linear_bn_weights(tl.weight, None, tb.running_mean,
                                                    tb.running_var, 1e-5, tb.weight, tb.bias)
    _close(w, tw, 1e-12)
    _close(b, tb_, 1e-12)
    jb2, tb2 = _bn_pair("BatchNorm1d", 2)
    _raises(lambda: jtorch.nn.utils.fuse_linear_bn_eval(jl, jb2),
            lambda: torch.nn.utils.fuse_linear_bn_eval(tl, tb2))


def test_skip_init():
    m = jtorch.nn.utils.skip_init(jtorch.nn.Linear, 5, 3, bias=False)
    t = torch.nn.utils.skip_init(torch.nn.Linear, 5, 3, bias=False)
    assert repr(m) == repr(t) and m.weight.device.type == "cpu" and tuple(m.weight.shape) == (3, 5)
    assert isinstance(m.weight, jtorch.nn.Parameter)
    _raises(lambda: jtorch.nn.utils.skip_init(int), lambda: torch.nn.utils.skip_init(int))
    _raises(lambda: jtorch.nn.utils.skip_init(jtorch.nn.ReLU),
            lambda: torch.nn.utils.skip_init(torch.nn.ReLU))


def test_convert_conv_weight_memory_format():
    for nd, fmt_name in ((2, "channels_last"), (3, "channels_last_3d")):
        j = jtorch.nn.Sequential(getattr(jtorch.nn, f"Conv{nd}d")(3, 4, 2),
                                 jtorch.nn.Sequential(getattr(jtorch.nn, f"ConvTranspose{nd}d")(4, 2, 2)),
                                 jtorch.nn.Linear(2, 2))
        t = torch.nn.Sequential(getattr(torch.nn, f"Conv{nd}d")(3, 4, 2),
                                torch.nn.Sequential(getattr(torch.nn, f"ConvTranspose{nd}d")(4, 2, 2)),
                                torch.nn.Linear(2, 2))
        before = [j[0].weight, j[1][0].weight]
        values = [p.detach().clone() for p in before]
        fn = f"convert_conv{nd}d_weight_memory_format"
        assert getattr(jtorch.nn.utils, fn)(j, getattr(jtorch, fmt_name)) is j
        getattr(torch.nn.utils, fn)(t, getattr(torch, fmt_name))
        for p, v, tp in zip((j[0].weight, j[1][0].weight), values, (t[0].weight, t[1][0].weight)):
            assert p is before[values.index(v) if False else 0] or p is before[1]
            assert p.stride() == tp.stride()
            np.testing.assert_array_equal(p.detach().numpy(), v.numpy())
        assert j[2].weight.stride() == t[2].weight.stride()
