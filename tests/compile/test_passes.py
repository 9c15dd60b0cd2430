"""The graph passes (``compile/passes.py``): each fires where it should (node counts after it),
leaves alone what it must not touch (random ops, parameters, inputs, ``empty``, results, big
constants, mutation), and keeps results bitwise: the Interpreter on the graph before and after
a pass, and ``jtorch.compile`` (the numba backend) against eager."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import jtorch
from jtorch.compile import GraphModule, Interpreter, passes
from jtorch.compile.graph import Graph
from jtorch.kernels.registry import REGISTRY, OpDef
from jtorch.tensor import Tensor

_PERMUTES = ("permute", "transpose", "t")


def _trace(f, *args) -> GraphModule:
    """The first graph ``f`` traces to (a backend that keeps it and runs it as traced)."""
    graphs: list = []
    jtorch.compile(f, backend=lambda gm, ex: (graphs.append(gm), gm.forward)[1])(*args)
    return graphs[0]


def _ops(gm: GraphModule) -> list:
    return [n.target.name for n in gm.graph.nodes
            if n.op == "call_function" and isinstance(n.target, OpDef)]


def _constants(gm: GraphModule) -> list:
    return [n for n in gm.graph.nodes if n.op == "get_attr"]


def _same(a, b) -> None:
    """Bitwise equal with the same geometry (tensors inside tuples too)."""
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    assert isinstance(a, Tensor) and isinstance(b, Tensor)
    assert (a.dtype, tuple(a.shape), a.stride()) == (b.dtype, tuple(b.shape), b.stride())
    assert a.requires_grad == b.requires_grad
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def _after(f, args, run=passes.run) -> GraphModule:
    """``f``'s graph after ``run``, checked: lint passes, and the Interpreter gives what it
    gave before; the compiled function (numba backend) gives what eager gives."""
    gm = _trace(f, *args)
    before = Interpreter(gm).run(*args)
    run(gm.graph)
    gm.graph.lint()
    gm.recompile()
    _same(Interpreter(gm).run(*args), before)
    _same(jtorch.compile(f)(*args), f(*args))
    return gm


def _views(graph: Graph) -> None:
    passes.simplify_views(graph)
    graph.eliminate_dead_code()


def _numba_graph(cf) -> Graph:
    """The graph the numba backend runs (after passes and fusion)."""
    (fn, _), = cf.pieces.values()
    return fn.__self__.graph


# -- constant folding ------------------------------------------------------------------------

def _factory_chain(x):
    return x + (jtorch.ones(4, 8).t() * 2) @ jtorch.eye(4)


def test_a_factory_chain_folds_to_one_constant():
    x = jtorch.randn(8, 4)
    gm = _after(_factory_chain, [x])
    assert _ops(gm) == ["add"] and len(_constants(gm)) == 1
    c = getattr(gm, _constants(gm)[0].target)
    _same(c, (jtorch.ones(4, 8).t() * 2) @ jtorch.eye(4))
    cf = jtorch.compile(_factory_chain)
    _same(cf(x), _factory_chain(x))
    g = _numba_graph(cf)
    assert [n.op for n in g.nodes].count("get_attr") == 1
    assert not {"full", "eye", "mm", "t", "mul"} & {getattr(n.target, "name", "") for n in g.nodes}


def test_a_folded_view_keeps_its_dtype_and_strides():
    def f(x):
        return x + (jtorch.arange(6) * 3).view(2, 3).t()

    gm = _after(f, [jtorch.ones(3, 2, dtype=jtorch.int64)])
    (c,) = _constants(gm)
    v = getattr(gm, c.target)
    assert (v.dtype, tuple(v.shape), v.stride()) == (jtorch.int64, (3, 2), (1, 3))
    assert _ops(gm) == ["add"]


def test_folding_under_no_grad_and_with_grad_flowing_around_it():
    def f(x):
        with jtorch.no_grad():
            c = jtorch.linspace(0, 1, 6).view(2, 3) * 2
        return (x * (c + 1)).sum()

    x = jtorch.randn(2, 3, requires_grad=True)
    gm = _after(f, [x])
    assert len(_constants(gm)) == 1 and "linspace" not in _ops(gm)
    x2 = x.detach().clone().requires_grad_()
    jtorch.compile(f)(x).backward()
    f(x2).backward()
    _same(x.grad, x2.grad)


def test_a_dynamic_graph_folds_only_what_no_size_reaches():
    def f(x):
        return x + jtorch.ones(x.shape[0]) * 2 + (jtorch.arange(4.0) * 3).sum()

    cf = jtorch.compile(f, dynamic=True)
    for n in (3, 5, 7):
        x = jtorch.randn(n)
        _same(cf(x), f(x))
    assert len(cf.pieces) == 1
    g = _numba_graph(cf)
    assert [n.op for n in g.nodes].count("get_attr") == 1
    assert "full" in [getattr(n.target, "name", "") for n in g.nodes]  # its size is x's


def test_results_are_not_folded_and_stay_fresh_tensors():
    def f():
        c = jtorch.ones(2, 3) * 2
        return c, c.t() + 1, (jtorch.eye(2) * 3).t()

    gm = _after(f, [])
    (out,) = [n for n in gm.graph.nodes if n.op == "output"]
    assert all(n.op == "call_function" for n in out.all_input_nodes)  # results: computed
    assert _ops(gm).count("mul") == 2  # c and eye * 3 are results (the latter a view's base)
    cf = jtorch.compile(f)
    first = cf()
    for r in first:
        r.add_(100)  # the caller owns its results
    second = cf()
    _same(second, f())
    assert all(a is not b for a, b in zip(first, second))


def test_a_constant_read_by_a_result_folds_and_the_result_is_new_each_call():
    def f():
        return (jtorch.ones(3) * 2).exp() + 0.5

    gm = _after(f, [])
    assert len(_constants(gm)) == 1 and _ops(gm) == ["add"]
    cf = jtorch.compile(f)
    a = cf()
    a.zero_()
    _same(cf(), f())


def test_random_ops_never_fold():
    def f(x):
        return x + jtorch.rand(3) * 2 + jtorch.randn(3).exp() + \
            jtorch.nn.functional.dropout(jtorch.ones(3), 0.5, True) * 3

    x = jtorch.zeros(3)
    gm = _trace(f, x)
    assert passes.fold_constants(gm.graph) == 0
    cf = jtorch.compile(f)
    jtorch.manual_seed(0)
    a, b = cf(x), cf(x)
    assert not jtorch.equal(a, b)  # new draws each call
    jtorch.manual_seed(1)
    got = cf(x)
    jtorch.manual_seed(1)
    _same(got, f(x))


def test_parameters_never_fold():
    lin = jtorch.nn.Linear(3, 2)

    def f():
        return lin(jtorch.ones(1, 3)) * 2

    gm = _trace(f)
    assert passes.fold_constants(gm.graph) == 0  # weight and bias are inputs of the graph
    cf = jtorch.compile(f)
    _same(cf(), f())
    with jtorch.no_grad():  # an optimizer step: the compiled function must see it
        lin.weight.mul_(-3)
        lin.bias.add_(1)
    _same(cf(), f())


def test_get_attr_buffers_never_fold():
    root = jtorch.nn.Module()
    root.register_buffer("scale", jtorch.ones(3))
    g = Graph()
    x = g.placeholder("x")
    b = g.get_attr("scale")
    m = g.call_function(REGISTRY["mul"], (b, 2))
    g.output((g.call_function(REGISTRY["add"], (x, m)),))
    gm = GraphModule(root, g)
    for n, v in ((x, jtorch.ones(3)), (b, root.scale), (m, root.scale * 2)):
        n.meta["val"] = v
    assert passes.fold_constants(gm.graph) == 0
    assert [n.op for n in gm.graph.nodes].count("get_attr") == 1


def test_inputs_never_fold():
    gm = _trace(lambda x: (x * 2).t() @ jtorch.ones(3, 3), jtorch.ones(3, 3))
    assert passes.fold_constants(gm.graph) == 0


def test_empty_never_folds():
    def f(x):  # uninitialised memory: a folded value would be one draw of garbage forever
        return x + jtorch.empty(3) * 0 + jtorch.empty_like(x, dtype=jtorch.float64) * 0

    gm = _trace(f, jtorch.ones(3))
    passes.run(gm.graph)
    assert not _constants(gm) and _ops(gm).count("empty") == 2


@pytest.mark.parametrize("n,folds", [(64, True), (65, False)])
def test_constants_over_the_limit_are_not_folded(n, folds):
    def f(x):
        return x + jtorch.ones(64, n) * 2

    gm = _after(f, [jtorch.ones(64, n)])
    assert 64 * 64 == passes.FOLD_LIMIT
    assert bool(_constants(gm)) is folds
    assert ("full" in _ops(gm)) is not folds


def test_a_small_view_of_a_big_constant_is_not_folded():
    def f(x):
        return x + jtorch.arange(float(passes.FOLD_LIMIT + 1))[2:5]

    gm = _after(f, [jtorch.ones(3)])
    assert not _constants(gm) and "arange" in _ops(gm)


def test_graphs_that_mutate_are_left_as_they_are():
    def f(x):
        x.add_(jtorch.ones(3) * 2)
        return x.view(3, 1).view(3) * 1

    gm = _trace(f, jtorch.zeros(3))
    ops = _ops(gm)
    passes.run(gm.graph)
    assert _ops(gm) == ops and not _constants(gm)
    a, b = jtorch.zeros(3), jtorch.zeros(3)
    _same(jtorch.compile(f)(a), f(b))
    _same(a, b)


def test_a_constant_that_raises_is_left_to_raise_each_call():
    def f(x):
        return x + jtorch.arange(3) // jtorch.zeros(3, dtype=jtorch.int64)

    x = jtorch.ones(3, dtype=jtorch.int64)
    graphs: list = []
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        jtorch.compile(f, backend=lambda gm, ex: (graphs.append(gm), gm.forward)[1])(x)
    gm = graphs[0]
    assert passes.fold_constants(gm.graph) == 0 and not _constants(gm)
    cf = jtorch.compile(f)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            cf(x)


# -- what the other passes may not merge or drop ------------------------------------------------

def test_equal_results_stay_two_tensors():
    def f(x):
        return x * 2, x * 2

    x = jtorch.ones(3)
    a, b = jtorch.compile(f)(x)
    a.add_(1)
    _same(b, x * 2)


def test_a_neutral_op_on_a_strided_input_keeps_its_dense_result():
    def f(x):
        return (x.expand(3, 4) * 1).view(12) + 0

    x = jtorch.randn(1, 4)
    _after(f, [x])


def _scalars(graph: Graph) -> None:
    passes.scalar_operands(graph)
    passes.simplify(graph)
    graph.eliminate_dead_code()


def test_a_broadcast_one_becomes_a_number_and_folds():
    """``expand(full((), 1))`` (a unit-seeded backward's tangent) times x is x, its negation
    a number -1: the factory nodes go, the values stay bitwise."""
    def f(x):
        one = jtorch.full((), 1.0).expand(5, 3)
        return (x * one + 1) * 2, (-one) * x.exp(), (x.sin() / one - 1.5) * 3

    x = jtorch.randn(5, 3)
    gm = _after(f, [x], _scalars)
    ops = _ops(gm)
    assert "full" not in ops and "expand" not in ops and "neg" not in ops
    assert ops.count("mul") == 3  # (x * 1 folded), * 2, * -1, * 3; / 1 folded


@pytest.mark.parametrize("case", ["int_into_float", "float_into_int", "broadcasting", "bool",
                                  "alpha", "first_of_sub"])
def test_a_number_replaces_a_tensor_only_where_nothing_changes(case):
    """Kept where the number would change the result's dtype or shape, or the op's form."""
    def f(x, i):
        one = jtorch.full((), 1.0)
        if case == "int_into_float":  # an int64 tensor of ones times float x: promotion
            return x * jtorch.full((), 1, dtype=jtorch.int64).expand(5, 3)
        if case == "float_into_int":
            return i * one
        if case == "broadcasting":  # the ones give the result its shape
            return x[:1] * one.expand(5, 3)
        if case == "bool":
            return x * jtorch.full((), True)
        if case == "alpha":
            return jtorch.sub(x, one.expand(5, 3), alpha=2)
        return jtorch.sub(one.expand(5, 3), x)

    x, i = jtorch.randn(5, 3), jtorch.arange(15).reshape(5, 3)
    gm = _trace(f, x, i)
    assert passes.scalar_operands(gm.graph) == 0
    _after(f, [x, i], _scalars)


def test_the_unit_seeded_forward_drops_its_products_by_one():
    """``loss.backward()`` on a compiled scalar: the seeded gradient kernel multiplies by the
    tangent nowhere, and the gradient equals eager's."""
    def loss(x):
        return (jtorch.sin(x) + jtorch.cos(x) * x - jtorch.exp(-x * x)).sum()

    x = jtorch.randn(64, requires_grad=True)
    x2 = x.detach().clone().requires_grad_()
    cf = jtorch.compile(loss)
    cf(x).backward()
    loss(x2).backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-6, atol=1e-6)
    (joint, _), = cf.pieces.values()
    kernels = [n.target for n in joint.seeded.__self__.graph.nodes if n.op == "call_function"
               and hasattr(n.target, "names")]
    assert len(kernels) == 1  # one fused kernel: the loss and the gradient
    ops = [name.rstrip("_0123456789") for name in kernels[0].names]
    # forward: 2 mul, 1 neg; the gradient 4 mul (one by -1) and 2 neg, where the tangent's
    # ones, kept (folded to a constant the kernel reads), took 8 mul
    assert "full" not in ops and "expand" not in ops
    assert ops.count("mul") == 6 and ops.count("neg") == 3


# -- view chains ---------------------------------------------------------------------------------

def test_a_view_chain_becomes_one_view():
    def f(x):
        return x.view(2, 6).view(3, 4).reshape(4, 3).flatten().view(2, 6) + 1

    gm = _after(f, [jtorch.randn(12)], run=_views)
    views = [n for n in gm.graph.nodes if getattr(n.target, "name", "") == "view"]
    assert len(views) == 1 and views[0].args[0].op == "placeholder"
    assert views[0].kwargs == {"shape": (2, 6)}  # the reshapes between were views


def test_a_reshape_in_the_chain_keeps_the_merged_node_a_reshape():
    gm = _after(lambda x: x.view(2, 6).reshape(3, 4) + 1, [jtorch.randn(12)], run=_views)
    (v,) = [n for n in gm.graph.nodes if getattr(n.target, "name", "") == "view"]
    assert v.args[0].op == "placeholder" and v.kwargs == {"shape": (3, 4), "reshape": True}


def test_view_of_a_copy_stays_two_nodes():
    def f(x):  # reshape of a transpose copies; view of that copy is no view of x
        return x.t().reshape(6).view(3, 2) + 1

    gm = _after(f, [jtorch.randn(2, 3)], run=_views)
    assert _ops(gm) == ["t", "view", "view", "add"]


def test_a_result_viewing_a_copy_keeps_its_base():
    def f(x):  # the result views the reshape's copy (its _base): one reshape would have none
        return x.t().reshape(6).reshape(2, 3)

    x = jtorch.randn(2, 3)
    gm = _after(f, [x], run=_views)
    assert _ops(gm) == ["t", "view", "view"]
    r, e = jtorch.compile(f)(x), f(x)
    assert e._base is not None and r._base is not None


@pytest.mark.parametrize("result", [False, True])
def test_permutes_compose_into_one(result):
    def f(x):  # as a result too: the merged permute is still a new view of x
        y = x.permute(2, 0, 1).transpose(0, -1).permute(1, 2, 0)
        return y if result else y * 2

    x = jtorch.randn(2, 3, 4)
    gm = _after(f, [x], run=_views)
    (p,) = [n for n in gm.graph.nodes if getattr(n.target, "name", "") in _PERMUTES]
    assert p.target.name == "permute" and p.args[0].op == "placeholder"
    _same(x.permute(p.kwargs["dims"]), x.permute(2, 0, 1).transpose(0, -1).permute(1, 2, 0))


@pytest.mark.parametrize("chain", [
    lambda x: x.t().t(),
    lambda x: x.transpose(0, 1).transpose(0, 1),
    lambda x: x.transpose(0, 1).transpose(1, 0),
    lambda x: x.permute(1, 0).permute(1, 0),
    lambda x: x.permute(0, 1),
    lambda x: x.unsqueeze(1).squeeze(1),
    lambda x: x.unsqueeze(-1).squeeze(2),
    lambda x: x.view(2, 3),
    lambda x: x.reshape(2, 3),
    lambda x: x.view(6).view(2, 3),
])
def test_identity_chains_read_the_input(chain):
    gm = _after(lambda x: chain(x) * 2, [jtorch.randn(2, 3)], run=_views)
    assert _ops(gm) == ["mul"]


def test_a_result_is_never_replaced_by_its_input():
    def f(x):
        return x.t().t(), x.view(2, 3), x.unsqueeze(0).squeeze(0)

    x = jtorch.randn(2, 3)
    gm = _after(f, [x], run=_views)
    (out,) = [n for n in gm.graph.nodes if n.op == "output"]
    assert [n.op for n in out.args[0]] == ["call_function"] * 3
    x0 = x.clone()
    res = jtorch.compile(f)(x)
    assert all(r is not x for r in res)
    res[0].add_(1)  # views of x, as eager's
    _same(x, x0 + 1)


def _fresh(graph: Graph) -> None:
    graph.results_fresh = True
    _views(graph)


def _fresh_graph(f, n_results: int, *args) -> tuple:
    """``f``'s traced graph returning its last ``n_results`` results only (a traced view
    result brings its base along first, which a backward graph's gradients do not), after
    the pass (the Interpreter's results checked against before) and its results' nodes."""
    gm = _trace(f, *args)
    (out,) = [n for n in gm.graph.nodes if n.op == "output"]
    out.args = (tuple(out.args[0][-n_results:]),)
    gm.graph.eliminate_dead_code()
    gm.recompile()
    before = Interpreter(gm).run(*args)
    _fresh(gm.graph)
    gm.graph.lint()
    gm.recompile()
    _same(Interpreter(gm).run(*args), before)
    (out,) = [n for n in gm.graph.nodes if n.op == "output"]
    return gm, list(out.args[0])


def test_a_fresh_result_becomes_the_new_memory_it_views():
    """In a graph whose results are fresh (a backward's gradients), an identity view chain
    of a value the graph computes is that value, as a result too."""
    a, b = jtorch.randn(3, 4), jtorch.randn(4, 5)
    gm, res = _fresh_graph(lambda a, b: (a @ b).t().t(), 1, a, b)
    assert _ops(gm) == ["mm"] and [n.target.name for n in res] == ["mm"]


def _shared(a, b):
    m = a @ b
    return m.t().t(), m.t()


@pytest.mark.parametrize("f", [
    _shared,  # another result views the product
    lambda a, b: (a.t().t(), b * 2),  # an input is no new memory
])
def test_a_fresh_result_never_becomes_memory_another_holds(f):
    a, b = jtorch.randn(3, 4), jtorch.randn(4, 5)
    _, res = _fresh_graph(f, 2, a, b)
    assert res[0].op == "call_function" and "view_of" in res[0].meta


def test_a_linear_layers_weight_gradient_is_the_product():
    """The compiled backward of a linear layer returns its weight gradient as the product
    (``t``'s and ``addmm``'s transposes cancel), equal to eager's gradients."""
    lin = jtorch.nn.Linear(6, 4)
    x = jtorch.randn(5, 6)
    cf = jtorch.compile(lambda x: jtorch.relu(lin(x)).sum())
    cf(x).backward()
    got = [p.grad.clone() for p in lin.parameters()]
    lin.zero_grad()
    jtorch.relu(lin(x)).sum().backward()
    for g, p in zip(got, lin.parameters()):
        np.testing.assert_allclose(g.numpy(), p.grad.numpy(), rtol=1e-6, atol=1e-6)
    (joint, _), = cf.pieces.values()
    bw = joint.bw.__self__.graph
    (out,) = [n for n in bw.nodes if n.op == "output"]
    names = [getattr(n.target, "name", "") for n in out.args[0]]
    assert not set(names) & set(_PERMUTES), names


@pytest.mark.parametrize("dims", [(1, 0), (1, 0, 2)])
def test_a_view_chain_under_no_grad_keeps_requires_grad(dims):
    def f(x):
        with jtorch.no_grad():
            y = x.permute(dims)
        return y.transpose(-1, -2) * 2

    x = jtorch.randn(*(2, 3, 4)[:len(dims)], requires_grad=True)
    gm = _after(f, [x], run=_views)
    assert "permute" in _ops(gm) and "transpose" in _ops(gm)
    assert not jtorch.compile(f)(x).requires_grad


def test_a_result_with_grad_keeps_its_history():
    def f(x):
        return x.view(2, 6).view(12)

    x = jtorch.randn(12, requires_grad=True)
    gm = _after(f, [x], run=_views)
    assert _ops(gm) == ["view", "view"]
    r, e = jtorch.compile(f)(x), f(x)
    assert r.grad_fn.name() == e.grad_fn.name()
    assert r.grad_fn.next_functions[0][0].name() == e.grad_fn.next_functions[0][0].name()


def _apply(x, steps):
    """``steps`` on ``x``, and the dims of ``x`` the result takes, in order."""
    order = list(range(x.dim()))
    for kind, arg in steps:
        nd = x.dim()
        if kind == "permute":
            x, order = x.permute(*arg), [order[i] for i in arg]
        elif kind == "transpose":
            x = x.transpose(*arg)
            if nd:
                a, b = arg[0] % nd, arg[1] % nd
                order[a], order[b] = order[b], order[a]
        else:
            x, order = x.t(), order[::-1]
    return x, tuple(order)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), nd=st.integers(0, 4))
def test_permute_chains_compose(data, nd):
    n = max(nd, 1)
    steps = []
    for _ in range(data.draw(st.integers(1, 4))):
        kind = data.draw(st.sampled_from(("permute", "transpose", "t") if nd <= 2
                                         else ("permute", "transpose")))
        if kind == "permute":
            steps.append((kind, tuple(data.draw(st.permutations(range(nd))))))
        elif kind == "transpose":
            steps.append((kind, (data.draw(st.integers(-n, n - 1)), data.draw(st.integers(-n, n - 1)))))
        else:
            steps.append((kind, None))
    x = jtorch.arange(float(np.prod((2, 3, 4, 5)[:nd], dtype=int))).reshape((2, 3, 4, 5)[:nd])
    gm = _after(lambda t: _apply(t, steps)[0] + 0.5, [x], run=_views)
    left = [m for m in gm.graph.nodes if getattr(m.target, "name", "") in _PERMUTES]
    order = _apply(x, steps)[1]
    if order == tuple(range(nd)):
        assert not left
    else:
        (p,) = left
        assert p.args[0].op == "placeholder"
        assert p.target.name != "permute" or tuple(p.kwargs["dims"]) == order


# -- float casts ------------------------------------------------------------------------------

@pytest.mark.parametrize("f, cast", [
    (lambda x: x.double() * 2, "_to_float64"),
    (lambda x: (x.to(jtorch.float64) - 1).sum(-1), "_to_float64"),
    (lambda x: x.double().exp().float() + 1, "_to_float32"),
])
def test_a_float_conversion_becomes_a_pointwise_cast(f, cast):
    """A ``_to_copy`` that only converts a row-major float32 value to float64 (or back) is
    the cast op, which fuses; the values are the copy's (exact widening, one rounding)."""
    x = jtorch.tensor([[1.5, -2.25e30, float("nan")], [1e-40, -0.0, 3.0]])
    gm = _after(f, (x,), run=lambda g: passes.float_casts(g))
    assert cast in _ops(gm) and "_to_copy" not in _ops(gm)


@pytest.mark.parametrize("f", [
    lambda x: x.t().double(),          # a strided value: the copy keeps its own layout rule
    lambda x: x.long().double(),       # an integer source
    lambda x: x.to(jtorch.float16),    # another dtype
    lambda x: x.double().contiguous(memory_format=jtorch.channels_last) if x.dim() == 4
    else x.to(jtorch.float64, memory_format=jtorch.preserve_format),
])
def test_other_conversions_stay_copies(f):
    x = jtorch.tensor([[1.5, -2.25], [4.0, 3.0]])
    gm = _after(f, (x,), run=lambda g: passes.float_casts(g))
    assert "_to_float64" not in _ops(gm) and "_to_float32" not in _ops(gm)


def test_the_cast_ops_gradients_come_back_in_the_input_dtype():
    """``_to_float64``/``_to_float32`` (the casts ``float_casts`` writes) record ToCopyBackward0
    and hand the gradient back in the input's dtype, as torch's ``to`` does."""
    from jtorch import dispatch

    for name, src, dst in (("_to_float64", "float32", "float64"),
                           ("_to_float32", "float64", "float32")):
        v = np.array([1.5, -2.0, 3.25])
        x = jtorch.tensor(v, dtype=getattr(jtorch, src), requires_grad=True)
        tx = torch.tensor(v, dtype=getattr(torch, src), requires_grad=True)
        y = dispatch.pointwise(REGISTRY[name], (x,))
        ty = tx.to(getattr(torch, dst))
        assert y.dtype == getattr(jtorch, dst) and y.grad_fn.name() == ty.grad_fn.name()
        g = np.array([0.5, -1.0, 2.0])
        y.backward(jtorch.tensor(g, dtype=y.dtype))
        ty.backward(torch.tensor(g, dtype=ty.dtype))
        assert x.grad.dtype == x.dtype
        np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
