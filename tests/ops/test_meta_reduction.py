"""Reductions, scans, the sort family and softmax on meta tensors.

Every public function of the family runs on CPU tensors and on meta twins of the same
geometry (0-d, 0-size, broadcast, non-contiguous and non-dense inputs; several dtypes): the
meta call runs no kernel, and its results have the CPU results' shapes, dtypes, strides and
storage offsets (fresh storage: none of these ops returns a view); bad arguments raise the
same error type and message on both, and as torch. Where jtorch's CPU result has torch's
geometry (everywhere in these calls), the meta result is also compared with torch's meta
device. Then ``out=``, autograd on meta tensors (meta gradients), the data-dependent ops,
and that every call reaches its OpDef through ``dispatch.call``.

Strides of empty results are not compared: jtorch's CPU arrays of zero elements carry
NumPy's strides (all zero), its meta tensors C-contiguous ones, and torch's reductions give
their size-1 dims other strides (a (1, 0, 1) sum has strides (0, 1, 1)).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch

import jtorch
from jtorch import dispatch
from jtorch.kernels.registry import REGISTRY
from jtorch.meta import MetaArray
from jtorch.tensor import Tensor

# -- the calls: (name, fn(module, x)) -- every public function / method / overload ----------------

F32 = ("float32",)
NUM = ("float32", "int64", "bool")
ALL = ("float32", "int64", "bool", "float16", "complex64")

CALLS = [
    ("sum", lambda m, x: m.sum(x), ALL),
    ("sum dim", lambda m, x: x.sum(1), NUM),
    ("sum dims keepdim", lambda m, x: x.sum((0, -1), keepdim=True), F32),
    ("sum dtype", lambda m, x: x.sum(-1, dtype=m.float64), NUM),
    ("sum axis", lambda m, x: m.sum(x, axis=0), F32),
    ("sum list", lambda m, x: x.sum([0, 1]), F32),
    ("sum repeated dim", lambda m, x: x.sum((1, -2)), F32),
    ("nansum", lambda m, x: x.nansum(1, keepdim=True), NUM),
    ("mean", lambda m, x: x.mean(), ALL),
    ("mean dim", lambda m, x: m.mean(x, (1, 2)), F32),
    ("mean int dtype", lambda m, x: x.mean(1, dtype=m.int64), F32),
    ("prod", lambda m, x: x.prod(), NUM),
    ("prod dim", lambda m, x: x.prod(1, keepdim=True), NUM),
    ("amax", lambda m, x: x.amax(), ALL),
    ("amax dim", lambda m, x: x.amax(1), NUM),
    ("amin dims", lambda m, x: m.amin(x, (0, 1), keepdim=True), F32),
    ("aminmax", lambda m, x: m.aminmax(x), ALL),
    ("aminmax dim", lambda m, x: m.aminmax(x, dim=1, keepdim=True), F32),
    ("all", lambda m, x: x.all(), NUM),
    ("all dim", lambda m, x: x.all(1), ("float32", "bool", "uint8")),
    ("any dim", lambda m, x: m.any(x, -1, keepdim=True), ("float32", "uint8")),
    ("count_nonzero", lambda m, x: x.count_nonzero(), NUM),
    ("count_nonzero dims", lambda m, x: m.count_nonzero(x, (0, 2)), F32),
    ("max", lambda m, x: x.max(), ALL),
    ("max dim", lambda m, x: x.max(1), ALL),
    ("max dim keepdim", lambda m, x: m.max(x, -1, keepdim=True), NUM),
    ("max other", lambda m, x: m.max(x, x), F32),
    ("min", lambda m, x: m.min(x), F32),
    ("min dim", lambda m, x: x.min(0), NUM),
    ("argmax", lambda m, x: x.argmax(), ALL),
    ("argmax dim", lambda m, x: x.argmax(1, keepdim=True), NUM),
    ("argmin dim", lambda m, x: m.argmin(x, -1), F32),
    ("var", lambda m, x: x.var(), ALL),
    ("var dim", lambda m, x: x.var(1), F32),
    ("var correction", lambda m, x: m.var(x, (0, 1), correction=0, keepdim=True), F32),
    ("var unbiased", lambda m, x: x.var(False), F32),
    ("std", lambda m, x: x.std(0), F32),
    ("var_mean", lambda m, x: m.var_mean(x, 1), F32),
    ("std_mean", lambda m, x: m.std_mean(x, (0, 1), keepdim=True), F32),
    ("norm", lambda m, x: x.norm(), ALL),
    ("norm dim", lambda m, x: m.norm(x, dim=1), F32),
    ("norm 1", lambda m, x: x.norm(1, 1), F32),
    ("norm inf", lambda m, x: x.norm(float("inf"), -1), F32),
    ("norm 3 keepdim", lambda m, x: x.norm(3, 1, keepdim=True), F32),
    ("vector_norm 0", lambda m, x: m.linalg.vector_norm(x, 0, 1), F32),
    ("vector_norm -inf", lambda m, x: m.linalg.vector_norm(x, float("-inf")), F32),
    ("vector_norm dtype", lambda m, x: m.linalg.vector_norm(x, 2, dtype=m.float64), F32),
    ("nanmean", lambda m, x: x.nanmean(1), NUM),
    ("nanmean dtype", lambda m, x: m.nanmean(x, dtype=m.float64), F32),
    ("logsumexp", lambda m, x: m.logsumexp(x, 1), ALL),
    ("logsumexp keepdim", lambda m, x: x.logsumexp((0, 1), keepdim=True), F32),
    ("median", lambda m, x: x.median(), ALL),
    ("median dim", lambda m, x: x.median(1), NUM),
    ("nanmedian", lambda m, x: m.nanmedian(x), F32),
    ("nanmedian dim", lambda m, x: x.nanmedian(0, keepdim=True), F32),
    ("mode", lambda m, x: x.mode(1), ALL),
    ("kthvalue", lambda m, x: x.kthvalue(2, 1), ALL),
    ("kthvalue keepdim", lambda m, x: m.kthvalue(x, 1, -1, keepdim=True), F32),
    ("kthvalue out of range", lambda m, x: x.kthvalue(9, 0), F32),
    ("cumsum", lambda m, x: x.cumsum(1), ALL),
    ("cumsum dtype", lambda m, x: m.cumsum(x, 0, dtype=m.float64), NUM),
    ("cumprod", lambda m, x: x.cumprod(-1), NUM),
    ("logcumsumexp", lambda m, x: x.logcumsumexp(1), ("float32", "int64")),
    ("cummax", lambda m, x: x.cummax(1), ALL),
    ("cummin", lambda m, x: m.cummin(x, 0), NUM),
    ("sort", lambda m, x: x.sort(), ALL),
    ("sort dim", lambda m, x: m.sort(x, 1, descending=True), NUM),
    ("sort stable", lambda m, x: x.sort(stable=True, dim=0), F32),
    ("argsort", lambda m, x: x.argsort(0), NUM),
    ("msort", lambda m, x: m.msort(x), F32),
    ("topk", lambda m, x: x.topk(2, 1), ALL),
    ("topk smallest", lambda m, x: m.topk(x, 1, 0, largest=False), F32),
    ("topk out of range", lambda m, x: x.topk(7, 1), F32),
    ("softmax", lambda m, x: x.softmax(1), ALL),
    ("softmax last", lambda m, x: m.softmax(x, -1), F32),
    ("softmax dtype", lambda m, x: m.softmax(x, 0, dtype=m.float64), NUM),
    ("log_softmax", lambda m, x: x.log_softmax(-1), ("float32", "float16", "int64")),
    ("log_softmax dim", lambda m, x: m.log_softmax(x, 1), F32),
]
# The input geometries: a (3, 4, 5) tensor laid out in different ways, and edge shapes.
GEOMETRIES = ("contiguous", "permuted", "sliced", "broadcast", "0-d", "0-size", "empty dim")


def _values(shape, dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.integers(-3, 4, shape) if dtype in ("int64", "uint8", "bool") else \
        rng.standard_normal(shape) + 0.5
    if dtype == "bool":
        return a > 0
    if dtype == "uint8":
        return np.abs(a).astype(np.uint8)
    if dtype == "complex64":
        return (a + 1j * rng.standard_normal(shape)).astype(np.complex64)
    return a.astype(dtype)


def _pair(geometry: str, dtype: str) -> tuple:
    """(jtorch CPU tensor, torch CPU tensor) of one geometry."""

    def both(a):
        a = np.asarray(a)
        return jtorch.from_numpy(a.copy()), torch.from_numpy(a.copy())

    if geometry == "contiguous":
        return both(_values((3, 4, 5), dtype))
    if geometry == "permuted":
        j, t = both(_values((5, 3, 4), dtype))
        return j.permute(1, 2, 0), t.permute(1, 2, 0)
    if geometry == "sliced":
        j, t = both(_values((3, 8, 5), dtype))
        return j[:, ::2], t[:, ::2]
    if geometry == "broadcast":
        j, t = both(_values((1, 4, 5), dtype))
        return j.expand(3, 4, 5), t.expand(3, 4, 5)
    if geometry == "0-d":
        return both(_values((), dtype))
    if geometry == "0-size":
        return both(_values((3, 0, 5), dtype))
    return both(_values((0, 4, 5), dtype))  # "empty dim": the first dim empty


def to_meta(x: Tensor) -> Tensor:
    """A meta tensor with ``x``'s shape, dtype, strides and storage offset."""
    st = MetaArray((x._st.size,), x._a.dtype)
    a = MetaArray(x._a.shape, x._a.dtype, x._a.strides, x.storage_offset() if x._a.size else 0)
    t = Tensor._make(a, st, x.dtype)
    t._requires_grad = x._requires_grad
    return t


def _outcome(fn, *args):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args), None
    except Exception as e:  # noqa: BLE001  (the error itself is compared)
        return None, e


def _leaves(obj) -> list:
    if isinstance(obj, (tuple, list)):
        return [x for o in obj for x in _leaves(o)]
    return [obj]


def _geometry(t) -> tuple:
    return tuple(t.shape), str(t.dtype).replace("torch.", ""), t.stride()


def _check_meta_matches_cpu(fn, x):
    """Run ``fn(jtorch, x)`` on CPU and on the meta twin; returns (cpu result, meta result,
    the error both raised)."""
    m = to_meta(x)
    res, err = _outcome(fn, jtorch, x)
    mres, merr = _outcome(fn, jtorch, m)
    if err is not None:
        assert merr is not None, f"CPU raised {err!r}, meta returned {mres!r}"
        assert (type(merr), str(merr)) == (type(err), str(err))
        return None, None, err
    assert merr is None, f"CPU ran, meta raised {merr!r}"
    couts, mouts = _leaves(res), _leaves(mres)
    assert len(couts) == len(mouts)
    for c, r in zip(couts, mouts):
        assert isinstance(r, Tensor) and r.is_meta
        assert (tuple(c.shape), c.dtype) == (tuple(r.shape), r.dtype)
        if c.numel():
            assert c.stride() == r.stride(), (c.stride(), r.stride())
            assert c.storage_offset() == r.storage_offset() == 0
        assert c._st is not x._st and r._st is not m._st  # fresh results, no views
        assert c.requires_grad == r.requires_grad
    return res, mres, None


# complex kernels jtorch does not have yet (torch computes these)
UNSUPPORTED = {("var", "complex64"), ("norm", "complex64"), ("logsumexp", "complex64")}


@pytest.mark.parametrize("geometry", GEOMETRIES)
@pytest.mark.parametrize("name,fn,dtypes", CALLS, ids=[c[0] for c in CALLS])
def test_meta_matches_cpu_and_torch_meta(name, fn, dtypes, geometry):
    for dtype in dtypes:
        x, tx = _pair(geometry, dtype)
        res, mres, err = _check_meta_matches_cpu(fn, x)
        tres, terr = _outcome(fn, torch, tx)
        if (name, dtype) in UNSUPPORTED:
            continue
        if err is not None or terr is not None:  # torch's error, raised by the meta rule
            assert (type(err), str(err)) == (type(terr), str(terr)), (dtype, err, terr)
            continue
        tmeta, tmerr = _outcome(fn, torch, tx.to("meta"))
        if tmerr is not None:
            continue
        for c, r, tc, tm in zip(_leaves(res), _leaves(mres), _leaves(tres), _leaves(tmeta)):
            # where jtorch's CPU result has torch's CPU geometry, its meta result has torch's
            # meta geometry (torch's CPU and meta agree for every call here)
            assert _geometry(tc) == _geometry(tm) or not tc.numel()
            if not c.numel():
                assert _geometry(r)[:2] == _geometry(tm)[:2], (dtype, _geometry(r), _geometry(tm))
                continue
            if _geometry(c) != _geometry(tc):
                continue
            assert _geometry(r) == _geometry(tm), (dtype, _geometry(r), _geometry(tm))


def test_sort_keeps_the_input_layout_on_meta():
    """sort/argsort lay their results out like the input (torch's empty_like); everything
    else is C-contiguous whatever the input's layout."""
    x = jtorch.empty(5, 3, 4, device="meta").permute(1, 2, 0)
    assert x.sort(1).values.stride() == x.stride() == (4, 1, 12)
    assert x.argsort(0).stride() == x.stride()
    assert x.sum(1, keepdim=True).stride() == (5, 5, 1)
    assert x.cumsum(1).stride() == x.softmax(1).stride() == (20, 5, 1)
    assert x.topk(2, 1).values.stride() == (10, 5, 1)


@pytest.mark.parametrize("call", [
    lambda m, x, o: m.sum(x, 1, out=o),
    lambda m, x, o: m.mean(x, (0, 1), keepdim=True, out=o),
    lambda m, x, o: m.amax(x, 1, out=o),
    lambda m, x, o: m.logsumexp(x, 1, out=o),
    lambda m, x, o: m.cumsum(x, 1, out=o),
    lambda m, x, o: m.var(x, 1, out=o),
    lambda m, x, o: m.norm(x, 2, 1, out=o),
    lambda m, x, o: m.max(x, out=o),
    lambda m, x, o: m.median(x, out=o),
])
def test_out_is_written_on_meta_as_on_cpu(call):
    x, _ = _pair("permuted", "float32")
    for dev in ("cpu", "meta"):
        xx = x if dev == "cpu" else to_meta(x)
        o = jtorch.empty(0, device=dev)
        r = call(jtorch, xx, o)
        assert r is o and o.device.type == dev
        if dev == "cpu":
            expect = (tuple(o.shape), o.dtype, o.stride())
            ref = call(jtorch, x, None)
            np.testing.assert_array_equal(o.numpy(), ref.numpy())
        else:
            assert (tuple(o.shape), o.dtype, o.stride()) == expect


@pytest.mark.parametrize("call,second", [
    (lambda m, x, o: m.max(x, 1, out=o), "int64"),
    (lambda m, x, o: m.sort(x, 1, out=o), "int64"),
    (lambda m, x, o: m.topk(x, 2, 1, out=o), "int64"),
    (lambda m, x, o: m.cummax(x, 0, out=o), "int64"),
    (lambda m, x, o: m.aminmax(x, dim=0, out=o), "float32"),
])
def test_pair_out_is_written_on_meta_as_on_cpu(call, second):
    x, _ = _pair("contiguous", "float32")
    geo = {}
    for dev in ("cpu", "meta"):
        xx = x if dev == "cpu" else to_meta(x)
        o = (jtorch.empty(0, device=dev), jtorch.empty(0, dtype=getattr(jtorch, second), device=dev))
        r = call(jtorch, xx, o)
        assert r[0] is o[0] and r[1] is o[1]
        geo[dev] = [(tuple(t.shape), t.dtype, t.stride()) for t in o]
    assert geo["cpu"] == geo["meta"]


GRAD_CALLS = [
    lambda x: x.sum(1), lambda x: x.mean((0, 2), keepdim=True), lambda x: x.nansum(),
    lambda x: x.prod(1), lambda x: x.amax(1), lambda x: x.max(), lambda x: x.max(1).values,
    lambda x: jtorch.aminmax(x, dim=1).max, lambda x: x.var(1), lambda x: x.std(),
    lambda x: jtorch.var_mean(x, 1)[0], lambda x: jtorch.std_mean(x, 0)[1], lambda x: x.norm(dim=1),
    lambda x: x.norm(3), lambda x: x.nanmean(1), lambda x: x.logsumexp(1),
    lambda x: x.median(), lambda x: x.median(1).values, lambda x: x.nanmedian(0).values,
    lambda x: x.mode(1).values, lambda x: x.kthvalue(2, 1).values, lambda x: x.cumsum(1),
    lambda x: x.cumprod(0), lambda x: x.logcumsumexp(1), lambda x: x.cummax(1).values,
    lambda x: x.sort(1).values, lambda x: x.topk(2, 0).values, lambda x: x.softmax(1),
    lambda x: x.log_softmax(-1),
]


@pytest.mark.parametrize("fn", GRAD_CALLS)
def test_backward_on_meta_gives_meta_gradients(fn):
    x, _ = _pair("contiguous", "float64")
    x = x.detach().requires_grad_()
    m = to_meta(x.detach()).requires_grad_()
    r, mr = fn(x), fn(m)
    assert mr.is_meta and type(mr.grad_fn).__name__ == type(r.grad_fn).__name__
    (g,) = jtorch.autograd.grad(r.sum(), x)
    (mg,) = jtorch.autograd.grad(mr.sum(), m)
    assert mg.is_meta and (mg.shape, mg.dtype) == (g.shape, g.dtype)


def test_double_backward_of_softmax_on_meta():
    x = jtorch.empty(3, 4, device="meta", dtype=jtorch.float64).requires_grad_()
    (g,) = jtorch.autograd.grad(x.log_softmax(1).sum(), x, create_graph=True)
    assert type(g.grad_fn).__name__ == "LogSoftmaxBackwardDataBackward0"
    (gg,) = jtorch.autograd.grad(g.sum(), x)
    assert gg.is_meta and gg.shape == (3, 4)


@pytest.mark.parametrize("fn", [
    lambda m, x: m.unique(x), lambda m, x: m.unique(x, return_counts=True, dim=0),
    lambda m, x: x.unique_consecutive(return_inverse=True),
])
def test_unique_is_data_dependent(fn):
    x, _ = _pair("contiguous", "int64")
    assert REGISTRY["unique"].data_dependent and REGISTRY["unique_consecutive"].data_dependent
    fn(jtorch, x)  # runs on CPU
    with pytest.raises(NotImplementedError, match="depends on the input's values"):
        fn(jtorch, to_meta(x))
    with pytest.raises(NotImplementedError, match="ComplexFloat"):  # the checks still run
        fn(jtorch, to_meta(_pair("contiguous", "complex64")[0]))


def test_every_call_goes_through_dispatch():
    """Each public function reaches its OpDef through ``dispatch.call``: the mode hook sees
    the call (here it runs the CPU kernel itself)."""
    seen = []

    def spy(op, args, plan, params):
        seen.append(op.name)
        return op.kernels["cpu"](plan, *args)

    x = jtorch.ones(3, 4)
    expect = {
        "sum": lambda: x.sum(1), "nansum": lambda: x.nansum(), "mean": lambda: x.mean(),
        "prod": lambda: x.prod(), "amax": lambda: x.max(), "amin": lambda: x.amin(1),
        "all": lambda: x.all(), "any": lambda: x.any(1), "count_nonzero": lambda: x.count_nonzero(),
        "max": lambda: x.max(1), "min": lambda: x.min(0), "argmax": lambda: x.argmax(),
        "argmin": lambda: x.argmin(1), "aminmax": lambda: jtorch.aminmax(x), "var": lambda: x.var(),
        "std": lambda: x.std(), "var_mean": lambda: jtorch.var_mean(x),
        "std_mean": lambda: jtorch.std_mean(x), "nanmean": lambda: x.nanmean(),
        "norm": lambda: x.norm(), "logsumexp": lambda: x.logsumexp(1),
        "cumsum": lambda: x.cumsum(0), "cumprod": lambda: x.cumprod(0),
        "logcumsumexp": lambda: x.logcumsumexp(0), "cummax": lambda: x.cummax(0),
        "cummin": lambda: x.cummin(0), "sort": lambda: x.sort(), "argsort": lambda: x.argsort(),
        "topk": lambda: x.topk(1), "kthvalue": lambda: x.kthvalue(1), "median": lambda: x.median(),
        "nanmedian": lambda: x.nanmedian(1), "mode": lambda: x.mode(), "unique": lambda: x.unique(),
        "unique_consecutive": lambda: x.unique_consecutive(), "softmax": lambda: x.softmax(1),
        "log_softmax": lambda: x.log_softmax(1),
        "_softmax_backward_data": lambda: jtorch.ops.softmax.softmax_backward(x, x, 1, False),
        "_log_softmax_backward_data": lambda: jtorch.ops.softmax.softmax_backward(x, x, 1, True),
    }
    dispatch.mode = spy
    try:
        for name, call in expect.items():
            seen.clear()
            call()
            assert seen[:1] == [name], (name, seen)
    finally:
        dispatch.mode = None


def test_meta_rules_run_no_kernel():
    """Meta tensors have no data: a kernel reached on them would fail on the MetaArray."""
    x = jtorch.empty(4, 6, device="meta")
    for r in (x.sum(0), x.var(1), x.sort(1)[0], x.cumsum(1), x.softmax(0), x.norm(dim=0),
              x.median(1)[0], x.logsumexp(1), jtorch.aminmax(x).max):
        assert r.is_meta
    with pytest.raises(RuntimeError, match="Tensor on device"):
        jtorch.ops.softmax.softmax_backward(x, jtorch.ones(4, 6), 1, False)
