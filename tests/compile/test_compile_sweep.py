"""Every public op, compiled, equals eager: the op-path sweep's calls (``tests/op_samples.py``)
run once eagerly and once through ``jtorch.compile`` (the traced graph run by the
Interpreter; once more functionalised), each from the same seed on its own copy of the
inputs. Results,
errors and the values left in mutated inputs must be the same, and every OpDef the sweep
reaches must appear in some traced graph (graph breaks included), so new ops are covered.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers import leaves
from op_samples import PATTERNS, SAMPLES
from test_op_path import _args, _inputs, _outcome, _target

import jtorch
from jtorch.compile import GraphModule, Interpreter, api, passes
from jtorch.compile.functionalize import NotFunctionalizable, functionalize
from jtorch.kernels.registry import REGISTRY, OpDef
from jtorch.tensor import Tensor

_TRACED: set = set()


def _copy(v):
    """The eager and the compiled call each get their own copy (in-place ops write them)."""
    if isinstance(v, Tensor):
        c = v.detach().clone()  # a dense layout is kept, so both copies have one geometry
        return c.requires_grad_(v.requires_grad) if v.is_leaf else c
    if isinstance(v, (list, tuple)):
        return type(v)(_copy(x) for x in v)
    return v


def _run(fn, args, kwargs, compiled, backend=None):
    jtorch.manual_seed(0)
    if not compiled:
        return _outcome(fn, args, kwargs)
    cf = api.CompiledFunction(fn, fullgraph=False, dynamic=None, backend=backend or _record_backend)
    return _outcome(cf, args, kwargs)


def _record_backend(gm, example_inputs):
    """Notes the traced ops, and runs the graph with the Interpreter (the reference)."""
    for n in gm.graph.nodes:
        if n.op == "call_function" and isinstance(n.target, OpDef):
            _TRACED.add(n.target.name)
    return lambda *args: Interpreter(gm).run(*args)


_KEPT: set = set()  # graphs functionalize() refused, by reason
_REFUSED = {"as_strided views address the storage directly", "an out= tensor is resized"}


def _functional_backend(gm, example_inputs):
    """Run the functionalised graph: no node writes a graph input or another node's value
    (only private clones), and inputs are written back once, at the end."""
    try:
        f = functionalize(gm)
    except NotFunctionalizable as e:
        _KEPT.add(str(e))
        return gm.forward
    nodes = list(f.graph.nodes)
    written = {n.args[0] for n in nodes if n.op == "call_function" and n.meta.get("mutates")}
    for n in nodes:
        if n.op == "call_function" and isinstance(n.target, OpDef) and n.target.meta is None:
            assert not n.kwargs.get("inplace") and n.kwargs.get("out") is None, n.format_node()
    tail = False
    for n in nodes:  # write-backs into placeholders come last, nothing reads after them
        if n.op == "call_function" and n.meta.get("mutates") and n.args[0].op == "placeholder":
            tail = True
        elif tail and n.op == "call_function":
            assert all(a.op != "placeholder" or a not in written for a in n.all_input_nodes), \
                n.format_node()
    return f.forward


def _same_tensor(a: Tensor, b: Tensor, what: str, values: bool = True,
                 rounding: bool = False) -> None:
    assert (tuple(a.shape), a.dtype, a.stride()) == (tuple(b.shape), b.dtype, b.stride()), what
    assert a.requires_grad == b.requires_grad, what
    if not values:
        return
    if a.dtype is jtorch.bfloat16:  # no NumPy view of it, as in torch: compare its float32 values
        a, b = a.float(), b.float()
    x, y = a.detach().numpy(), b.detach().numpy()
    if rounding and a.dtype.is_floating_point:  # fused reductions sum in another order
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6, err_msg=what)
        return
    np.testing.assert_array_equal(x, y, err_msg=what)


def _check(fn, args: list, kwargs: dict, values: bool = True, backend=None,
           rounding: bool = False) -> None:
    ea, ca = [_copy(a) for a in args], [_copy(a) for a in args]
    ek, ck = {k: _copy(v) for k, v in kwargs.items()}, {k: _copy(v) for k, v in kwargs.items()}
    with np.errstate(all="ignore"):
        e, eerr = _run(fn, ea, ek, False)
        c, cerr = _run(fn, ca, ck, True, backend)
    if eerr is not None:
        assert cerr is not None and type(cerr) is type(eerr) and str(cerr) == str(eerr), (eerr, cerr)
        return
    assert cerr is None, cerr
    el, cl = leaves(e), leaves(c)
    assert len(el) == len(cl)
    for a, b in zip(el, cl):
        if isinstance(a, Tensor):
            assert isinstance(b, Tensor)
            _same_tensor(a, b, "result", values, rounding)
        elif values:
            assert a == b or (_isnan(a) and _isnan(b)), (a, b)
    for a, b in zip(leaves(ea) + leaves(list(ek.values())), leaves(ca) + leaves(list(ck.values()))):
        if isinstance(a, Tensor):
            _same_tensor(a, b, "input after the call", True, rounding)


def _isnan(v) -> bool:
    return isinstance(v, float) and math.isnan(v)


_VARIANTS = ("contiguous", "noncontig", "0-d")
# results that are objects or addresses (a storage, a hook handle, a pointer), not values
_IDENTITY = ("data_ptr", "untyped_storage", "register_post_accumulate_grad_hook",
             "register_hook")


@pytest.mark.parametrize("variant", _VARIANTS)
@pytest.mark.parametrize("key", sorted(PATTERNS))
def test_compiled_equals_eager_on_patterns(key, variant):
    kind, name = key.split(":", 1)
    _check(_target(kind, name), _args(PATTERNS[key], _inputs(variant)), {},
           values="empty" not in name and name not in _IDENTITY)  # uninitialised memory


@pytest.mark.parametrize("key", sorted(PATTERNS))
def test_functionalized_graphs_equal_eager(key):
    """The same sweep through functionalize(): in-place ops, out= and views written through."""
    kind, name = key.split(":", 1)
    for variant in ("contiguous", "noncontig"):
        _check(_target(kind, name), _args(PATTERNS[key], _inputs(variant)), {},
               values="empty" not in name and name not in _IDENTITY, backend=_functional_backend)
    assert _KEPT <= _REFUSED, _KEPT


def _passes_backend(gm, example_inputs):
    """The passes on a copy of the graph (its own module holds folded constants), run by the
    Interpreter."""
    try:
        m = functionalize(gm) if any(n.meta.get("mutates") for n in gm.graph.nodes) \
            else GraphModule(gm, gm.graph.copy())
    except NotFunctionalizable:
        return gm.forward
    passes.run(m.graph)
    return lambda *args: Interpreter(GraphModule(m, m.graph)).run(*args)


@pytest.mark.parametrize("key", sorted(PATTERNS))
def test_graph_passes_keep_results(key):
    kind, name = key.split(":", 1)
    _check(_target(kind, name), _args(PATTERNS[key], _inputs("contiguous")), {},
           values="empty" not in name and name not in _IDENTITY, backend=_passes_backend)


@pytest.mark.parametrize("key", sorted(PATTERNS) + sorted(SAMPLES))
def test_the_numba_backend_equals_eager(key):
    """The default backend (functionalise, passes, fusion) over every sweep call."""
    kind, name = key.split(":", 1)
    values = "empty" not in name and name not in _IDENTITY
    if key in PATTERNS:
        for variant in ("contiguous", "noncontig"):
            _check(_target(kind, name), _args(PATTERNS[key], _inputs(variant)), {},
                   values=values, backend="numba", rounding=True)
    else:
        for sample in SAMPLES[key]:
            fn, args, kwargs = sample(_inputs("contiguous"))
            _check(fn, list(args), dict(kwargs), values=values, backend="numba", rounding=True)


@pytest.mark.parametrize("key", sorted(SAMPLES))
def test_functionalized_samples_equal_eager(key):
    for sample in SAMPLES[key]:
        fn, args, kwargs = sample(_inputs("contiguous"))
        _check(fn, list(args), dict(kwargs), values="empty" not in key and
               key.split(":")[1] not in _IDENTITY, backend=_functional_backend)
    assert _KEPT <= _REFUSED, _KEPT


@pytest.mark.parametrize("key", sorted(SAMPLES))
def test_compiled_equals_eager_on_samples(key):
    for variant in ("contiguous", "noncontig"):
        for sample in SAMPLES[key]:
            fn, args, kwargs = sample(_inputs(variant))
            _check(fn, list(args), dict(kwargs), values="empty" not in key)


def test_every_swept_opdef_is_traced():
    """Runs after the sweeps above (same module): each op they reach appears in a graph."""
    from test_op_path import Spy

    reached: set = set()
    for key, pat in PATTERNS.items():
        kind, name = key.split(":", 1)
        with Spy() as spy, np.errstate(all="ignore"):
            _outcome(_target(kind, name), _args(pat, _inputs("contiguous")), {})
        reached.update(op.name for op in spy.ops)
    if not _TRACED:
        pytest.skip("run with the sweeps above")
    breaks = {n for n, o in REGISTRY.items() if o.data_dependent}  # graph breaks: run eagerly
    missing = sorted(reached - _TRACED - breaks)
    assert not missing, f"ops reached eagerly but never traced: {missing}"
