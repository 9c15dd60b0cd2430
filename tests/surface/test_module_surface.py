"""The class-level surface of torch.nn against installed torch: every class torch defines in a
``torch.nn.modules.<file>`` is reachable at ``jtorch.nn.modules.<file>``, and every public
attribute of a torch nn Module class is on jtorch's class; gaps are listed with reasons in
``exclusions.MODULE_EXCLUDED`` (kept exact, as ``test_surface.py`` keeps its lists). Then
what those methods do, against torch: state_dict hooks, set_submodule, the RNN argument checks,
ParameterDict's dict methods, EmbeddingBag.from_pretrained, merge_masks, the no-device
conversions, Container and the data-parallel helpers."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import warnings
from collections import OrderedDict

import numpy as np
import pytest
import torch

import jtorch

from .exclusions import MODULE_EXCLUDED

LIBS = (torch, jtorch)


def _module_gaps() -> list:
    gaps = []
    for info in pkgutil.iter_modules(torch.nn.modules.__path__):
        tm = importlib.import_module("torch.nn.modules." + info.name)
        try:
            jm = importlib.import_module("jtorch.nn.modules." + info.name)
        except ImportError:
            gaps.append(info.name)
            continue
        for n, v in vars(tm).items():
            if (not n.startswith("_") and inspect.isclass(v) and v.__module__ == tm.__name__
                    and not hasattr(jm, n)):
                gaps.append(f"{info.name}.{n}")
    return gaps


def _class_gaps() -> list:
    gaps = []
    for n in dir(torch.nn):
        tc = getattr(torch.nn, n)
        if inspect.isclass(tc) and issubclass(tc, torch.nn.Module):
            jc = getattr(jtorch.nn, n, None)
            gaps += [f"{n}.{a}" for a in dir(tc) if not a.startswith("_") and not hasattr(jc, a)]
    return gaps


def test_every_module_path_and_class_attribute_is_there_or_listed():
    gaps = set(_module_gaps()) | set(_class_gaps())
    unlisted = sorted(gaps - set(MODULE_EXCLUDED))
    assert not unlisted, f"torch.nn names jtorch lacks, not in MODULE_EXCLUDED: {unlisted}"
    filled = sorted(set(MODULE_EXCLUDED) - gaps)
    assert not filled, f"in MODULE_EXCLUDED but present now (take them off): {filled}"
    assert all(MODULE_EXCLUDED.values()), "an exclusion without a reason"


# -- helpers --------------------------------------------------------------------------------

def _outcome(fn):
    """(value) or (error type name, message) of ``fn()``, with warnings silenced."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    except Exception as e:  # noqa: BLE001
        return (type(e).__name__, str(e))


def _same(fn):
    """``fn(lib)`` gives the same outcome (value, or error type and message) in both."""
    mine, theirs = (_outcome(lambda lib=lib: fn(lib)) for lib in (jtorch, torch))
    assert mine == theirs
    return mine


def _np(t):
    return t.detach().numpy()


def _net(lib):
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = lib.nn.Linear(2, 3)
            self.block = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.BatchNorm1d(3))

    return Net()


# -- Module ---------------------------------------------------------------------------------

def test_state_dict_hooks_order_and_arguments():
    logs = []
    for lib in LIBS:
        log = []
        net = _net(lib)
        for name, m in net.named_modules():
            m.register_state_dict_pre_hook(
                lambda mod, prefix, keep_vars, name=name, log=log:
                log.append(("pre", name, type(mod).__name__, prefix, keep_vars)))
            m.register_state_dict_post_hook(
                lambda mod, sd, prefix, meta, name=name, log=log:
                log.append(("post", name, prefix, list(sd), dict(meta))))
        sd = net.state_dict(keep_vars=True)
        net.state_dict(prefix="p.")
        log.append(list(sd))
        logs.append(log)
    assert logs[0] == logs[1]
    assert logs[0][0][:2] == ("pre", "") and logs[0][1][:2] == ("pre", "fc")


def test_state_dict_post_hook_edits_in_place_and_must_return_none():
    def edit(mod, sd, prefix, meta):
        sd[prefix + "extra"] = 1

    def returns(mod, sd, prefix, meta):
        return {}

    def run(lib, hook):
        net = _net(lib)
        h = net.block.register_state_dict_post_hook(hook)
        keys = list(net.state_dict())
        h.remove()
        return keys, list(net.state_dict()) == keys

    _same(lambda lib: run(lib, edit))
    assert _same(lambda lib: run(lib, returns)) == ("RuntimeError",
                                                    "state_dict post-hook must return None")


def test_private_state_dict_hook_may_replace_the_root_state_dict():
    def replace(mod, sd, prefix, meta):
        return OrderedDict(only=1)

    def run(lib):
        net = _net(lib)
        net._register_state_dict_hook(replace)
        return dict(net.state_dict())

    assert _same(run) == {"only": 1}

    def public_then_private(lib):
        def hook(mod, sd, prefix, meta):
            pass

        net = _net(lib)
        net.register_state_dict_post_hook(hook)
        net._register_state_dict_hook(hook)

    assert _same(public_then_private)[0] == "RuntimeError"


@pytest.mark.parametrize("target,strict", [
    ("fc", False), ("fc", True), ("block.0", True), ("block.new", False), ("block.new", True),
    ("new", False), ("", False), ("missing.x", False), ("fc.weight", False),
    ("training", False),
])
def test_set_submodule(target, strict):
    def run(lib):
        net = _net(lib)
        net.set_submodule(target, lib.nn.Tanh(), strict=strict)
        return [(n, type(m).__name__) for n, m in net.named_modules()]

    _same(run)
    _same(lambda lib: _net(lib).set_submodule("fc", 3))


def test_class_attributes():
    for lib in LIBS:
        assert lib.nn.Module.dump_patches is False
        assert lib.nn.Module.T_destination.__name__ == "T_destination"


def test_no_device_conversions_raise_torchs_errors():
    for method in ("cuda", "xpu", "ipu", "mtia"):
        _same(lambda lib, m=method: getattr(lib.nn.Linear(2, 2), m)())
        _same(lambda lib, m=method: type(getattr(lib.nn.ReLU(), m)()).__name__)
    for method in ("cuda", "xpu", "ipu", "mtia"):
        for arg in (0, "cpu", "cuda", "meta", method, f"{method}:1"):
            if (method, arg) == ("ipu", "ipu:1"):
                continue  # torch gets as far as its dispatcher's missing-backend error
            _same(lambda lib, m=method, a=arg: getattr(lib.nn.Linear(2, 2), m)(a))
    for arg in (0, "cpu", "meta", "cuda", "cuda:1"):
        _same(lambda lib, a=arg: lib.ones(2).cuda(a))
        _same(lambda lib, a=arg: lib.ones(2).cuda(lib.device(a) if isinstance(a, str) else a))


def test_bfloat16_casts_floating_tensors():
    m = jtorch.nn.Linear(2, 2).bfloat16()
    assert m.weight.dtype is jtorch.bfloat16 and m.bias.dtype is jtorch.bfloat16
    m = jtorch.nn.Embedding(3, 2)
    m.weight = None  # no floating tensor left: nothing to cast, as in torch
    assert m.bfloat16() is m


def test_replicate_for_data_parallel_shares_structure():
    net = jtorch.nn.Sequential(jtorch.nn.Linear(2, 2))
    r = net._replicate_for_data_parallel()
    assert type(r) is jtorch.nn.Sequential and r._modules == net._modules
    assert r._parameters == {} and r._is_replica


# -- RNN ------------------------------------------------------------------------------------

def _rnn(lib, cls, **kw):
    lib.manual_seed(0)
    return getattr(lib.nn, cls)(3, 4, num_layers=2, **kw)


RNNS = [("RNN", {}), ("GRU", {}), ("LSTM", {}), ("LSTM", {"proj_size": 2}),
        ("GRU", {"batch_first": True, "bidirectional": True}), ("RNN", {"bias": False}),
        ("LSTM", {"bias": False, "proj_size": 2, "bidirectional": True})]


@pytest.mark.parametrize("cls,kw", RNNS)
def test_rnn_weights_and_expected_sizes(cls, kw):
    _same(lambda lib: [[tuple(w.shape) for w in ws] for ws in _rnn(lib, cls, **kw).all_weights])
    _same(lambda lib: _rnn(lib, cls, **kw)._all_weights)
    _same(lambda lib: _rnn(lib, cls, **kw).flatten_parameters())
    x = np.zeros((5, 6, 3), np.float32)
    _same(lambda lib: _rnn(lib, cls, **kw).get_expected_hidden_size(lib.tensor(x), None))
    _same(lambda lib: _rnn(lib, cls, **kw).get_expected_hidden_size(
        lib.tensor(x[0]), lib.tensor([4, 2, 1])))
    if cls == "LSTM":
        _same(lambda lib: _rnn(lib, cls, **kw).get_expected_cell_size(lib.tensor(x), None))


@pytest.mark.parametrize("cls,kw", RNNS)
@pytest.mark.parametrize("shape,dtype,batch_sizes", [
    ((5, 6, 3), "float32", None), ((5, 6, 3), "float64", None), ((5, 6), "float32", None),
    ((5, 6, 2), "float32", None), ((7, 3), "float32", [4, 2, 1]), ((7, 3, 1), "float32", [4]),
])
def test_rnn_check_input(cls, kw, shape, dtype, batch_sizes):
    def run(lib):
        x = lib.zeros(shape, dtype=getattr(lib, dtype))
        sizes = None if batch_sizes is None else lib.tensor(batch_sizes)
        return _rnn(lib, cls, **kw).check_input(x, sizes)

    _same(run)


@pytest.mark.parametrize("cls,kw", RNNS)
@pytest.mark.parametrize("hidden", [(4, 6, 4), (4, 6, 2), (2, 6, 4), (4, 5, 4), (4, 6)])
def test_rnn_check_forward_args(cls, kw, hidden):
    def run(lib):
        rnn = _rnn(lib, cls, **kw)
        x = lib.zeros(5, 6, 3)
        h = lib.zeros(hidden)
        hx = (h, lib.zeros(hidden)) if cls == "LSTM" else h
        rnn.check_forward_args(x, hx, None)
        return rnn.check_hidden_size(h, hidden[:1] + (9,) + hidden[2:], "{} vs {}")

    _same(run)


def test_rnn_permute_hidden():
    perm = [2, 0, 1]
    for cls in ("GRU", "LSTM"):
        def run(lib, cls=cls):
            h = lib.arange(12.).reshape(2, 3, 2)
            rnn = _rnn(lib, cls)
            hx = (h, h + 100) if cls == "LSTM" else h
            out = rnn.permute_hidden(hx, lib.tensor(perm))
            same = rnn.permute_hidden(hx, None) is hx
            return same, [_np(t).tolist() for t in (out if cls == "LSTM" else (out,))]

        _same(run)


@pytest.mark.parametrize("cls", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("x_shape,h_shape", [
    ((5, 6, 3), (4, 6)), ((5, 3), (4, 1, 4)), ((5, 3), (4, 4)), ((5, 6, 3), (4, 6, 4)),
    ((5, 6, 3, 1), None), ((5, 3), None),
])
def test_rnn_forward_checks_hidden_dims(cls, x_shape, h_shape):
    def run(lib):
        rnn = lib.nn.RNN(3, 4, 2) if cls == "RNN" else getattr(lib.nn, cls)(3, 4, 2)
        x = lib.zeros(x_shape)
        if h_shape is None:
            hx = None
        else:
            hx = (lib.zeros(h_shape), lib.zeros(h_shape)) if cls == "LSTM" else lib.zeros(h_shape)
        out, h = rnn(x, hx)
        return tuple(out.shape), [tuple(t.shape) for t in (h if cls == "LSTM" else (h,))]

    _same(run)


def test_rnn_forward_runs_overridden_checks():
    logs = []
    for lib in LIBS:
        calls = []

        class Logged(lib.nn.LSTM):
            def check_forward_args(self, input, hidden, batch_sizes, calls=calls):
                calls.append((tuple(input.shape), batch_sizes is None))
                super().check_forward_args(input, hidden, batch_sizes)

        m = Logged(3, 4, batch_first=True)
        m(lib.zeros(2, 5, 3))
        m(lib.zeros(5, 3), (lib.zeros(1, 4), lib.zeros(1, 4)))
        logs.append(calls)
    assert logs[0] == logs[1] == [((2, 5, 3), True), ((1, 5, 3), True)]


# -- containers -----------------------------------------------------------------------------

def _pdict(lib):
    return lib.nn.ParameterDict({"b": lib.ones(2), "a": lib.zeros(3), "c": lib.ones(1)})


def _summary(d):
    return [(k, type(v).__name__, None if v is None else tuple(v.shape)) for k, v in d.items()]


def test_parameter_dict_methods():
    _same(lambda lib: _summary(_pdict(lib)))  # a plain dict is added in sorted key order

    def popitem(lib):
        d = _pdict(lib)
        k, v = d.popitem()
        return k, tuple(v.shape), list(d), [n for n, _ in d.named_parameters()]

    _same(popitem)
    _same(lambda lib: lib.nn.ParameterDict().popitem())

    def clear(lib):
        d = _pdict(lib)
        d.clear()
        return len(d), list(d.parameters()), list(d.keys())

    _same(clear)

    def copy(lib):
        d = _pdict(lib)
        c = d.copy()
        c["z"] = lib.ones(4)
        return _summary(c), list(d), all(c[k] is d[k] for k in d)

    _same(copy)

    def fromkeys(lib):
        d = _pdict(lib).fromkeys(["y", "x"], lib.zeros(2))
        return _summary(d), d["x"] is d["y"], type(d).__name__

    _same(fromkeys)
    _same(lambda lib: _summary(_pdict(lib).fromkeys(["y", "x"])))

    def setdefault(lib):
        d = _pdict(lib)
        a = d["a"]
        got = d.setdefault("a", lib.ones(7))
        new = d.setdefault("n", lib.ones(5))
        none = d.setdefault("m")
        return got is a, type(new).__name__, tuple(new.shape), none, _summary(d)

    _same(setdefault)

    def operators(lib):
        d, e = _pdict(lib), lib.nn.ParameterDict({"e": lib.ones(1)})
        d |= e
        return _summary(d | e), _summary(e | d), _summary(d), list(reversed(d))

    _same(operators)
    _same(lambda lib: _pdict(lib)[1])
    _same(lambda lib: _pdict(lib).update(3))
    _same(lambda lib: _pdict(lib).update([("k", lib.ones(1), 1)]))
    _same(lambda lib: repr(_pdict(lib)))
    _same(lambda lib: repr(lib.nn.ParameterList([lib.ones(2), "s"])))


def test_container_is_deprecated_and_registers_its_keywords():
    for lib in LIBS:
        with pytest.warns(FutureWarning, match="nn.Container` is deprecated"):
            c = lib.nn.Container(a=lib.nn.ReLU(), b=lib.nn.Linear(1, 1))
        assert [n for n, _ in c.named_children()] == ["a", "b"]
        with pytest.warns(FutureWarning, match="Subclass that instead"):
            class Sub(lib.nn.Container):
                pass
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert len(list(Sub(x=lib.nn.Linear(1, 2)).parameters())) == 2
    _same(lambda lib: repr(lib.nn.Container(a=lib.nn.ReLU())))


# -- layers ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kw", [{}, {"freeze": False, "mode": "sum"}, {"mode": "max"},
                                {"padding_idx": 1, "include_last_offset": True}])
def test_embedding_bag_from_pretrained(kw):
    w = np.arange(12, dtype=np.float32).reshape(4, 3)

    def run(lib):
        bag = lib.nn.EmbeddingBag.from_pretrained(lib.tensor(w), **kw)
        out = bag(lib.tensor([0, 1, 3, 2, 1]), lib.tensor([0, 2, 4]))
        return _np(out).tolist(), bag.weight.requires_grad, bag.mode, bag.padding_idx

    _same(run)
    _same(lambda lib: lib.nn.EmbeddingBag.from_pretrained(lib.ones(3)))
    _same(lambda lib: lib.nn.EmbeddingBag(2, 3, _weight=lib.ones(3, 2)))


@pytest.mark.parametrize("attn,kpm", [(None, None), ("2d", None), (None, "kpm"), ("2d", "kpm"),
                                      ("3d", "kpm"), ("3d", None)])
@pytest.mark.parametrize("dtype", ["bool", "float32"])
def test_multihead_attention_merge_masks(attn, kpm, dtype):
    rng = np.random.default_rng(0)
    n, heads, seq = 2, 2, 3
    masks = {"2d": rng.random((seq, seq)) > 0.5, "3d": rng.random((n * heads, seq, seq)) > 0.5,
             "kpm": rng.random((n, seq)) > 0.5}

    def run(lib):
        mha = lib.nn.MultiheadAttention(4, heads, batch_first=True)
        t = {k: lib.tensor(v).to(getattr(lib, dtype)) for k, v in masks.items()}
        merged, kind = mha.merge_masks(t.get(attn), t.get(kpm), lib.zeros(n, seq, 4))
        return None if merged is None else (_np(merged).tolist(), str(merged.dtype)), kind

    _same(run)


def test_module_paths_name_the_same_classes():
    from jtorch.nn.modules import (
        batchnorm,
        instancenorm,
        linear,
        linear_cross_entropy,
        linear_cross_entropy_options,
        pixelshuffle,
        transformer,
        upsampling,
    )

    assert instancenorm._InstanceNorm is batchnorm._InstanceNorm
    assert instancenorm.LazyInstanceNorm3d is jtorch.nn.LazyInstanceNorm3d
    assert pixelshuffle.PixelUnshuffle is upsampling.PixelUnshuffle is jtorch.nn.PixelUnshuffle
    assert (linear_cross_entropy_options.LinearCrossEntropyOptions
            is linear_cross_entropy.LinearCrossEntropyOptions)
    assert transformer.NonDynamicallyQuantizableLinear is linear.NonDynamicallyQuantizableLinear
    for lib in LIBS:
        mha = lib.nn.MultiheadAttention(4, 2)
        assert type(mha.out_proj).__name__ == "NonDynamicallyQuantizableLinear"
        assert isinstance(mha.out_proj, lib.nn.Linear)
        for m in ("instancenorm", "pixelshuffle", "linear_cross_entropy_options"):
            mod = importlib.import_module(f"{lib.__name__}.nn.modules.{m}")
            assert mod.__all__ == importlib.import_module(f"torch.nn.modules.{m}").__all__


def test_modules_utils_helpers():
    from torch.nn.modules import utils as tu

    from jtorch.nn.modules import utils as ju

    for name in ("_single", "_pair", "_triple", "_quadruple"):
        for arg in (3, (1, 2), [4]):
            assert getattr(ju, name)(arg) == getattr(tu, name)(arg)
        assert getattr(ju, name).__name__ == name
    assert ju._reverse_repeat_tuple((1, 2, 3), 2) == tu._reverse_repeat_tuple((1, 2, 3), 2)
    for out_size, defaults in ((5, [1, 2]), ([None, 3], [7, 8, 9]), ([None, 3], [8])):
        mine = _outcome(lambda o=out_size, d=defaults: ju._list_with_default(o, d))
        assert mine == _outcome(lambda o=out_size, d=defaults: tu._list_with_default(o, d))

    def consume(lib):
        net = lib.nn.DataParallel(lib.nn.Sequential(lib.nn.Linear(1, 1)))
        sd = net.state_dict()
        lib.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "module.")
        return list(sd), list(sd._metadata)

    importlib.import_module("jtorch.nn.modules.utils")
    _same(consume)


def test_backward_hook_function():
    def run(lib):
        fn = importlib.import_module(f"{lib.__name__}.nn.modules._functions").BackwardHookFunction
        x, y = lib.ones(2, requires_grad=True), lib.ones(3)
        a, b = fn.apply(x, y)
        (a * 3).sum().backward()
        return a.requires_grad, b.requires_grad, b.grad_fn is None, _np(x.grad).tolist()

    _same(run)


# -- nn.parallel ----------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda lib, dp, m, x: dp.scatter((1, "a"), {"k": 2}, [0, 1]),
    lambda lib, dp, m, x: dp.scatter((x,), None, ["cpu"]),
    lambda lib, dp, m, x: dp.scatter((), {}, []),
    lambda lib, dp, m, x: dp.replicate(m, []),
    lambda lib, dp, m, x: dp.replicate(m, [0]),
    lambda lib, dp, m, x: dp.replicate(m, ["cpu"]),
    lambda lib, dp, m, x: repr(dp.replicate(lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Tanh()),
                                            [0, 1])),
    lambda lib, dp, m, x: dp.parallel_apply([m], [(x,)], [{}]),
    lambda lib, dp, m, x: dp.parallel_apply([], [], None),
    lambda lib, dp, m, x: dp.gather([x, x], 0),
    lambda lib, dp, m, x: dp.gather([(None, None)], "cpu"),
    lambda lib, dp, m, x: dp.gather([{"a": 1}, {"a": 2, "b": 1}], 0),
    lambda lib, dp, m, x: lib.nn.parallel.parallel_apply([m], [(x,)], None, [0]),
    lambda lib, dp, m, x: lib.nn.parallel.parallel_apply([m], [(x,)], None, ["cpu"]),
    lambda lib, dp, m, x: lib.nn.parallel.parallel_apply([m], [(x,), (x,)]),
    lambda lib, dp, m, x: lib.nn.parallel.scatter({"k": 1, "j": "s"}, [0, 1]),
    lambda lib, dp, m, x: lib.nn.parallel.data_parallel(m, x),
    lambda lib, dp, m, x: _np(dp(x)).shape,
])
def test_data_parallel_helpers_as_torch_without_an_accelerator(call):
    def run(lib):
        m, x = lib.nn.Linear(2, 2), lib.ones(4, 2)
        dp = lib.nn.DataParallel(m)
        if lib is torch:
            dp.dim = 0  # torch sets it only with devices; its methods read it
        return call(lib, dp, m, x)

    _same(run)


def test_data_parallel_scatter_of_a_tensor_needs_an_accelerator():
    # (torch's CPU build fails in its missing C binding torch._C._scatter instead)
    dp = jtorch.nn.DataParallel(jtorch.nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
        dp.scatter((jtorch.ones(4, 2),), {}, [0])
