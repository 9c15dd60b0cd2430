"""The one op-call path, kept true by sweeps.

* Every public function (the ``jtorch`` namespace, Tensor methods, ``nn.functional``) is called
  on CPU tensors and on meta tensors of the same geometry: the meta call runs no kernel (a
  meta tensor has no data: any computation outside ``dispatch`` raises), and its results have
  exactly the CPU results' shapes, dtypes, strides, storage offsets and aliasing; bad
  arguments raise the same error on both. A function that cannot be called this way is in
  ``SAMPLES`` (a hand-written call) or in ``NOT_SWEPT`` with the reason.
* Every registered OpDef is reached by some sampled call (a spy mode records each op that
  passes through ``dispatch``), so an op cannot sit beside the path unobserved.
* The mode hook sees every op of a program, pointwise and not, and may take the call.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import jtorch
from jtorch import dispatch
from jtorch.kernels import registry
from jtorch.tensor import Tensor

from helpers import as_on_meta
from helpers import leaves as _leaves
from helpers import to_meta
from helpers import tree_map as _tree_map

F = jtorch.nn.functional


# -- inputs -----------------------------------------------------------------------------------

def _cpu(shape, dtype=jtorch.float32, seed=0, noncontig=False):
    rng = np.random.default_rng(seed)
    if noncontig and len(shape) >= 2:
        base = rng.standard_normal(shape[:-2] + (shape[-1], shape[-2])) + 1.5
        t = jtorch.tensor(base, dtype=dtype).transpose(-1, -2)
    else:
        t = jtorch.tensor(rng.standard_normal(shape) + 1.5, dtype=dtype)
    return t


# -- the spy: records every op that passes through dispatch and lets it run ------------------

class Spy:
    def __init__(self):
        self.ops: list = []

    def __call__(self, op, args, plan, params):
        self.ops.append(op)
        prev = dispatch.mode
        dispatch.mode = None
        try:
            if plan is None:  # pointwise: params are {"out":, "inplace":}
                return dispatch.pointwise(op, args, **params)
            return dispatch.run_plan(op, args, plan)
        finally:
            dispatch.mode = prev

    def __enter__(self):
        self._prev = dispatch.mode
        dispatch.mode = self
        return self

    def __exit__(self, *exc):
        dispatch.mode = self._prev


# -- comparing a CPU call with its meta twin ---------------------------------------------------

def _outcome(fn, args, kwargs):
    try:
        return fn(*args, **kwargs), None
    except Exception as e:  # noqa: BLE001  (the error itself is compared)
        return None, e


def _aliases(out: Tensor, inputs: list) -> tuple:
    return tuple(i for i, x in enumerate(inputs) if isinstance(x, Tensor) and out._st is x._st)


def check_meta_matches_cpu(fn, args, kwargs=None):
    """Run ``fn`` on CPU ``args`` and on their meta twins; assert the results agree in
    geometry and aliasing, or that both raise the same error. Returns the ops seen."""
    kwargs = kwargs or {}
    storages: dict = {}
    margs = _tree_map(lambda x: to_meta(x, storages), list(args))
    mkw = _tree_map(lambda x: to_meta(x, storages), kwargs)
    with Spy() as spy:
        res, err = _outcome(fn, args, kwargs)
    mres, merr = _outcome(fn, margs, mkw)
    if err is not None:
        assert merr is not None, f"CPU raised {err!r}, meta returned {mres!r}"
        assert type(merr) is type(err) and str(merr) == as_on_meta(str(err)), (err, merr)
        return spy.ops
    if merr is not None:
        data_dependent = any(op.data_dependent for op in spy.ops)
        if data_dependent and (isinstance(merr, NotImplementedError) or "meta tensor" in str(merr)):
            return spy.ops  # no shape without values: torch's meta error (repeat_interleave's own)
        raise AssertionError(f"CPU ran, meta raised {merr!r}") from merr
    cin, min_ = _leaves(list(args) + list(kwargs.values())), _leaves(margs + list(mkw.values()))
    couts, mouts = _leaves(res), _leaves(mres)
    assert len(couts) == len(mouts)
    for c, m in zip(couts, mouts):
        if not isinstance(c, Tensor):
            assert not isinstance(m, Tensor) and type(c) is type(m), (c, m)
            continue
        assert isinstance(m, Tensor) and m.is_meta, m
        assert (tuple(c.shape), c.dtype, c.stride()) == (tuple(m.shape), m.dtype, m.stride()), \
            (tuple(c.shape), c.dtype, c.stride(), tuple(m.shape), m.dtype, m.stride())
        if c.numel():
            assert c.storage_offset() == m.storage_offset()
        assert _aliases(c, cin) == _aliases(m, min_), "aliasing differs"
        assert c.requires_grad == m.requires_grad
    return spy.ops


def test_meta_twin_of_a_view_keeps_the_geometry():
    x = _cpu((3, 4), noncontig=True)[1:]
    m = to_meta(x)
    assert (m.shape, m.stride(), m.storage_offset()) == (x.shape, x.stride(), x.storage_offset())


# -- the mode hook ---------------------------------------------------------------------------

def test_mode_hook_sees_every_op_and_may_take_the_call():
    x, w = _cpu((2, 1, 6, 6)), _cpu((3, 1, 3, 3), seed=1)
    seen = []

    def take(op, args, plan, params):
        seen.append(op.name)
        return "taken"

    dispatch.mode = take
    try:
        assert jtorch.exp(x) == "taken"
        assert x.sum() == "taken"
        assert F.conv2d(x, w) == "taken"
    finally:
        dispatch.mode = None
    assert seen == ["exp", "sum", "convolution"]


def test_meta_rule_runs_before_the_mode_hook():
    """Bad arguments raise before a tracer would record the call."""
    x, y = jtorch.ones(2, 3), jtorch.ones(3, 2)
    dispatch.mode = lambda *a: pytest.fail("the mode hook saw an invalid call")
    try:
        with pytest.raises(RuntimeError):
            x + y
        with pytest.raises(IndexError):
            x.sum(5)
        with pytest.raises(RuntimeError):
            jtorch.nn.functional.conv2d(x, y)
    finally:
        dispatch.mode = None


def test_spy_runs_the_program_unchanged():
    x = _cpu((3, 4))
    with Spy() as spy:
        y = (x.exp() + 1).sum(1)
    assert [op.name for op in spy.ops] == ["exp", "add", "sum"]
    np.testing.assert_allclose(y.numpy(), (np.exp(x.numpy()) + 1).sum(1), rtol=1e-6)


# -- the public surface ------------------------------------------------------------------------

def _public(ns) -> list:
    return sorted(n for n in dir(ns) if not n.startswith("_") and callable(getattr(ns, n))
                  and not inspect.isclass(getattr(ns, n)) and not inspect.ismodule(getattr(ns, n)))


# Calls tried in order until one runs on CPU: ``x``/``y``/``z`` float32 (3, 4), ``i`` int64,
# ``b`` bool, numbers as dims or scalars.
_PATTERNS = ("x", "x y", "x 1", "x 0", "x y z", "x 0.5", "x -1", "i", "b", "x i", "x b", "i i",
             "b b", "x 1 1", "x 0 1", "x 2 1")


def _inputs(variant: str) -> dict:
    """Named operands for one geometry variant."""
    if variant == "contiguous":
        shp = (3, 4)
        f = lambda seed: _cpu(shp, seed=seed)  # noqa: E731
    elif variant == "noncontig":
        shp = (3, 4)
        f = lambda seed: _cpu(shp, seed=seed, noncontig=True)  # noqa: E731
    elif variant == "0-d":
        shp = ()
        f = lambda seed: _cpu(shp, seed=seed)  # noqa: E731
    else:  # "0-size"
        shp = (0, 4)
        f = lambda seed: _cpu(shp, seed=seed)  # noqa: E731
    rng = np.random.default_rng(3)
    hi = 1 if variant == "0-d" else 3  # indices valid for every operand of the variant
    return {"x": f(0), "y": f(1), "z": f(2),
            "i": jtorch.tensor(rng.integers(0, hi, shp), dtype=jtorch.int64),
            "b": jtorch.tensor(rng.integers(0, 2, shp).astype(bool))}


def _args(pattern: str, ops: dict) -> list:
    out = []
    for tok in pattern.split():
        out.append(ops[tok] if tok in ops else float(tok) if "." in tok else int(tok))
    return out


def _target(kind: str, name: str):
    if kind == "method":
        return lambda self, *a, **k: getattr(self, name)(*a, **k)
    return getattr(jtorch if kind == "torch" else F, name)


def _discover(kind: str, name: str):
    """The first pattern that runs on contiguous CPU operands, or None."""
    fn = _target(kind, name)
    for pat in _PATTERNS:
        try:
            with np.errstate(all="ignore"):
                fn(*_args(pat, _inputs("contiguous")))
        except Exception:  # noqa: BLE001, S112  (a pattern that does not fit: try the next)
            continue
        return pat
    return None


from op_samples import FACTORIES, NOT_SWEPT, PATTERNS, SAMPLES  # noqa: E402

_KINDS = (("torch", jtorch), ("method", Tensor), ("F", F))
_VARIANTS = ("contiguous", "noncontig", "0-d", "0-size")


def _surface() -> list:
    return [f"{kind}:{n}" for kind, ns in _KINDS for n in _public(ns)]


def test_every_public_callable_is_swept_or_excused():
    listed = set(PATTERNS) | set(SAMPLES) | set(FACTORIES) | set(NOT_SWEPT)
    missing = [n for n in _surface() if n not in listed]
    assert not missing, f"public callables with no sweep entry: {missing}"
    todo = [n for n, why in NOT_SWEPT.items() if not why or why == "TODO"]
    assert not todo, f"NOT_SWEPT entries without a reason: {todo}"


@pytest.mark.parametrize("variant", _VARIANTS)
@pytest.mark.parametrize("key", sorted(PATTERNS))
def test_meta_matches_cpu_on_patterns(key, variant):
    kind, name = key.split(":", 1)
    ops = _inputs(variant)
    with np.errstate(all="ignore"):
        check_meta_matches_cpu(_target(kind, name), _args(PATTERNS[key], ops))


@pytest.mark.parametrize("key", sorted(SAMPLES))
def test_meta_matches_cpu_on_samples(key):
    for variant in _VARIANTS:
        for sample in SAMPLES[key]:
            fn, args, kwargs = sample(_inputs(variant))
            with np.errstate(all="ignore"):
                check_meta_matches_cpu(fn, args, kwargs)


@pytest.mark.parametrize("key", sorted(FACTORIES))
def test_meta_factories_match_cpu(key):
    for sample in FACTORIES[key]:
        c, ce = _outcome(sample, ("cpu",), {})
        m, me = _outcome(sample, ("meta",), {})
        if ce is not None:
            assert me is not None and type(me) is type(ce) and str(me) == str(ce), (ce, me)
            continue
        assert me is None, me
        for a, b in zip(_leaves(c), _leaves(m)):
            assert b.is_meta and not a.is_meta
            assert (tuple(a.shape), a.dtype, a.stride()) == (tuple(b.shape), b.dtype, b.stride())
            assert a.requires_grad == b.requires_grad


def test_every_opdef_is_reached_by_the_sweep():
    """Each registered op passes through dispatch for some sampled call (the spy sees it)."""
    seen: set = set()
    for key, pat in PATTERNS.items():
        kind, name = key.split(":", 1)
        with Spy() as spy, np.errstate(all="ignore"):
            _outcome(_target(kind, name), _args(pat, _inputs("contiguous")), {})
        seen.update(op.name for op in spy.ops)
    for key, samples in SAMPLES.items():
        for sample in samples:
            fn, args, kwargs = sample(_inputs("contiguous"))
            with Spy() as spy, np.errstate(all="ignore"):
                _outcome(fn, args, kwargs)
            seen.update(op.name for op in spy.ops)
    for key, samples in FACTORIES.items():
        for sample in samples:
            with Spy() as spy:
                _outcome(sample, ("cpu",), {})
            seen.update(op.name for op in spy.ops)
    # backward ops are reached through gradients
    x = _cpu((2, 1, 6, 6)).requires_grad_()
    with Spy() as spy:
        F.max_pool2d(F.conv2d(x, _cpu((2, 1, 3, 3), seed=1)), 2).sum().backward()
        F.layer_norm(x, (6, 6)).sum().backward()
        x.tanh().sigmoid().sum().backward()
        F.gelu(x).sum().backward()
        F.embedding(jtorch.tensor([[1, 0], [1, 2]]), _cpu((3, 4), seed=2).requires_grad_()) \
            .sum().backward()
    seen.update(op.name for op in spy.ops)
    missing = sorted(set(registry.REGISTRY) - seen - set(KERNEL_PARTS) - set(COMPILER_OPS))
    assert not missing, f"OpDefs no sampled call reaches: {missing}"
    for name in KERNEL_PARTS:
        assert registry.REGISTRY[name].meta is None and not registry.REGISTRY[name].differentiable
    for name in COMPILER_OPS:  # (their kernels against torch: test_registry_sweep)
        assert registry.REGISTRY[name].family == "unary" and name not in seen


# Reductions registered only so that the kernels of norm and var can inline them by name: no
# call reaches them through dispatch, and they have no meta rule or gradient of their own.
KERNEL_PARTS = {"norm_l1": "norm(p=1)", "norm_l2": "norm(p=2)", "norm_linf": "norm(p=inf)",
                "norm_lninf": "norm(p=-inf)", "sumsq": "var/std's second pass"}
# Pointwise ops that the compiler's passes put in graphs (``passes.float_casts``): no public
# call dispatches them.
COMPILER_OPS = {"_to_float32": "a float64 -> float32 _to_copy", "_to_float64": "float32 -> float64"}


@pytest.mark.parametrize("fn", [
    lambda t, x: x.item(), lambda t, x: x.tolist(), lambda t, x: x.numpy(),
    lambda t, x: x.cpu(), lambda t, x: float(x), lambda t, x: bool(x),
    lambda t, x: t.allclose(x, x), lambda t, x: np.asarray(x)])
def test_reading_meta_values_raises_torchs_errors(fn):
    """Each data read raises what torch raises on a meta tensor (no value is made up)."""
    import torch

    def outcome(lib):
        x = lib.ones((), device="meta")
        try:
            fn(lib, x)
        except Exception as e:  # noqa: BLE001
            return type(e), str(e)
        return None

    assert outcome(jtorch) == outcome(torch) != None  # noqa: E711


def test_equal_on_meta_raises():
    """torch has no meta kernel for ``equal`` (NotImplementedError); jtorch's reads values."""
    x = jtorch.ones(2, device="meta")
    with pytest.raises((NotImplementedError, RuntimeError)):
        jtorch.equal(x, x)
