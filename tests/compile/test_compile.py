"""jtorch.compile's front end: the API, the graph IR, guards and recompiles, graph breaks,
mutation write-back, modules sharing state with their compiled wrapper, custom backends, logs
and explain. Compiled results are compared with eager ones."""

from __future__ import annotations

import copy
import os
import warnings

import numpy as np
import pytest
from helpers import golden

import jtorch
import jtorch.nn.functional as F
from jtorch import nn
from jtorch.compile import Graph, GraphModule, Interpreter, Unsupported, api, config

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")


def _eq(a, b) -> None:
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def _golden(name: str, text: str) -> None:
    golden(os.path.join(GOLDEN, name + ".txt"), text)


def _graphs(cf) -> list:
    return [e.gm for e in cf.entries.values() if isinstance(e, api._Entry)]


# -- the API ----------------------------------------------------------------------------------

def test_the_seed_example_runs_as_written():
    with pytest.warns(UserWarning, match="matmul-padding"):
        @jtorch.compile(options={"matmul-padding": True}, fullgraph=True)
        def foo(x):
            return jtorch.sin(x) + jtorch.cos(x)
    x = jtorch.randn(10)
    _eq(foo(x), jtorch.sin(x) + jtorch.cos(x))
    _eq(foo(x), jtorch.sin(x) + jtorch.cos(x))  # the cached graph


def test_decorator_forms_lambdas_and_bound_methods():
    x = jtorch.randn(4)

    @jtorch.compile
    def f(x):
        return x * 2

    @jtorch.compile()
    def g(x):
        return x + 1

    class Holder:
        k = 3.0

        def scale(self, x):
            return x * self.k

    h = Holder()
    _eq(f(x), x * 2)
    _eq(g(x), x + 1)
    _eq(jtorch.compile(lambda t: t.exp())(x), x.exp())
    _eq(jtorch.compile(h.scale)(x), x * 3.0)
    assert jtorch.compile(f, disable=True) is f
    assert f.__name__ == "f"


def test_modes_and_options_warn_once_and_bad_ones_raise():
    api.reset()
    with pytest.warns(UserWarning, match="max-autotune") as rec:
        jtorch.compile(lambda x: x, mode="max-autotune")
    assert rec[0].filename == __file__  # the warning names the user's line
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jtorch.compile(lambda x: x, mode="max-autotune")  # once
    with pytest.raises(RuntimeError, match="Unrecognized mode"):
        jtorch.compile(lambda x: x, mode="fastest")
    with pytest.raises(RuntimeError, match="Either mode or options"):
        jtorch.compile(lambda x: x, mode="default", options={})
    with pytest.raises(ValueError, match="unknown backend"):
        jtorch.compile(lambda x: x, backend="tvm")


class _Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.fc2 = nn.Linear(8, 3)
        self.scale = 1.0

    def forward(self, x):
        return self.fc2(F.relu(self.bn(self.fc1(x)))) * self.scale


def test_module_shares_state_with_its_compiled_wrapper():
    jtorch.manual_seed(0)
    m = _Net()
    ref = copy.deepcopy(m)
    cm = jtorch.compile(m)
    assert cm._orig_mod is m
    assert list(cm.state_dict()) == ["_orig_mod." + k for k in m.state_dict()]
    assert [p for p in cm.parameters()] == [p for p in m.parameters()]
    x = jtorch.randn(5, 4)
    for _ in range(2):  # the second call replays: running statistics still update
        _eq(cm(x), ref(x))
        _eq(m.bn.running_mean, ref.bn.running_mean)
        _eq(m.bn.num_batches_tracked, ref.bn.num_batches_tracked)
    assert len(_graphs(cm._compiled)) == 1
    # an optimizer step and load_state_dict are seen without a retrace
    with jtorch.no_grad():
        m.fc1.weight.add_(1.0)
        ref.fc1.weight.add_(1.0)
    _eq(cm(x), ref(x))
    ref2 = _Net()
    m.load_state_dict(ref2.state_dict())
    ref.load_state_dict(ref2.state_dict())
    _eq(cm(x), ref(x))
    # training flag and plain attributes are guarded
    m.eval()
    ref.eval()
    _eq(cm(x), ref(x))
    m.scale = ref.scale = 2.0
    _eq(cm(x), ref(x))
    assert len(_graphs(cm._compiled)) == 3
    # gradients flow to the shared parameters
    cm(x).sum().backward()
    ref(x).sum().backward()
    _eq(m.fc1.weight.grad, ref.fc1.weight.grad)


def test_module_compile_in_place_and_hooks():
    m = nn.Linear(3, 2)
    x = jtorch.randn(4, 3)
    ref = m(x)
    m.compile()
    _eq(m(x), ref)
    assert list(m.state_dict()) == ["weight", "bias"]
    m.register_forward_hook(lambda mod, inp, out: out * 0)  # a new hook: guarded
    _eq(m(x), ref * 0)


# -- the graph IR -----------------------------------------------------------------------------

def test_printed_graph_and_code_are_golden():
    @jtorch.compile(backend="eager")
    def f(x, w):
        return jtorch.exp(x @ w).sum(dim=1)

    f(jtorch.randn(64, 128), jtorch.randn(128, 10))
    (gm,) = _graphs(f)
    _golden("matmul_exp_sum", f"{gm.graph}\n\n{gm.code}")
    node = next(n for n in gm.graph.nodes if n.name == "exp")
    val = node.meta["val"]
    assert val.device == jtorch.device("cpu") and val._a.__class__.__name__ == "MetaArray"
    assert tuple(val.shape) == (64, 10) and val.stride() == (10, 1)


def test_graph_editing_lint_and_interpreter():
    g = Graph()
    x = g.placeholder("x")
    s = g.call_function(jtorch.sin, (x,))
    c = g.call_function(jtorch.cos, (x,))
    a = g.call_function(jtorch.add, (s, c))
    g.output(a)
    g.lint()
    gm = GraphModule(nn.Module(), g)
    t = jtorch.randn(5)
    _eq(gm(t), jtorch.sin(t) + jtorch.cos(t))
    _eq(Interpreter(gm).run(t), gm(t))
    with g.inserting_before(a):
        m = g.call_function(jtorch.mul, (s, 2.0))
    s.replace_all_uses_with(m)  # also rewires m itself: restore its input
    m.replace_input_with(m, s)
    g.lint()
    gm.recompile()
    _eq(gm(t), jtorch.sin(t) * 2.0 + jtorch.cos(t))
    with pytest.raises(RuntimeError, match="still had"):
        g.erase_node(c)
    a.replace_input_with(c, x)
    g.erase_node(c)
    g.lint()
    assert [n.name for n in g.nodes] == ["x", "sin", "mul", "add", "output"]
    bad = g.call_function(jtorch.neg, (x,))  # after the output
    with pytest.raises(RuntimeError, match="after the output"):
        g.lint()
    g.erase_node(bad)
    g.print_tabular()
    assert "print_readable" and "class GraphModule" in gm.print_readable(print_output=False)


# -- guards and recompiles ----------------------------------------------------------------------

def test_guards_recompile_on_new_keys_and_never_replay_stale_graphs():
    calls = []

    def f(x, n):
        calls.append(1)
        return x * n if x.shape[0] > 2 else x - n

    cf = jtorch.compile(f)
    a, b = jtorch.randn(3), jtorch.randn(2)
    _eq(cf(a, 2), a * 2)
    _eq(cf(a, 2), a * 2)
    assert len(calls) == 1  # replayed
    _eq(cf(a, 3), a * 3)  # Python constant changed
    _eq(cf(b, 3), b - 3)  # shape changed: the branch changes too
    _eq(cf(a.double(), 3), a.double() * 3)  # dtype
    with jtorch.no_grad():
        cf(a, 3)  # grad mode
    assert len(calls) == 5


def test_recompile_limit_falls_back_to_eager_with_one_warning(monkeypatch):
    monkeypatch.setattr(config, "recompile_limit", 2)
    cf = jtorch.compile(lambda x: x + 1)
    cf(jtorch.ones(1))
    cf(jtorch.ones(2))
    with pytest.warns(UserWarning, match="size mismatch at index 0. expected 2, actual 3"):
        _eq(cf(jtorch.ones(3)), jtorch.ones(3) + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _eq(cf(jtorch.ones(4)), jtorch.ones(4) + 1)
    assert len(cf.entries) == 2


def test_captured_tensors_are_inputs_not_constants():
    w = jtorch.ones(3)

    @jtorch.compile
    def f(x):
        return x * w

    x = jtorch.randn(3)
    _eq(f(x), x)
    w.mul_(2)  # in place: the graph reads the current value
    _eq(f(x), x * 2)
    (gm,) = _graphs(f)
    assert [n.op for n in gm.graph.nodes].count("placeholder") == 2


def test_guard_evaluation_names_failing_guards():
    from jtorch.compile.guards import explain_miss

    cf = jtorch.compile(lambda x, flag: x if flag else -x)
    cf(jtorch.ones(2), True)
    k1 = cf.last_key
    cf(jtorch.ones(2), False)
    assert "argument 'flag' changed: expected True, got False" == explain_miss(k1, cf.last_key,
                                                                              cf.names)


# -- graph breaks ---------------------------------------------------------------------------

def _branchy(x):
    y = x * 2
    if y.sum() > 0:
        return y + 1
    return y - 1


def test_graph_breaks_compute_eager_results_and_reuse_pieces():
    cf = jtorch.compile(_branchy)
    for sign in (1, -1, 1, -1):
        x = jtorch.ones(3) * sign
        _eq(cf(x), _branchy(x))
    assert len(cf.pieces) == 3  # before the break, and each branch after it


@pytest.mark.parametrize("read", [
    lambda t: t.item(), lambda t: bool(t.sum() > 0), lambda t: t.tolist(), lambda t: t.numpy(),
    lambda t: float(t.sum()), lambda t: repr(t), lambda t: t.nonzero(),
])
def test_fullgraph_raises_at_a_break_naming_the_line(read):
    def f(x):
        y = x + 1
        read(y[:1] if y.ndim else y)
        return y

    with pytest.raises(Unsupported, match=r"test_compile\.py:\d+"):
        jtorch.compile(f, fullgraph=True)(jtorch.ones(2))
    x = jtorch.ones(2)
    _eq(jtorch.compile(f)(x), x + 1)


def test_explain_reports_graphs_and_breaks():
    out = jtorch.compiler.explain(_branchy)(jtorch.ones(3))
    assert out.graph_count == 2 and out.graph_break_count == 1
    assert "bool(Tensor)" in out.break_reasons[0].reason
    assert "test_compile.py" in out.break_reasons[0].user_stack
    assert "Graph Count: 2" in str(out)


def test_logs_print_graphs_breaks_and_recompiles(capsys):
    jtorch.compiler.set_logs(graph=True, graph_breaks=True, recompiles=True)
    try:
        cf = jtorch.compile(_branchy)
        cf(jtorch.ones(3))
        cf(jtorch.ones(4))
    finally:
        jtorch.compiler.set_logs(graph=False, graph_breaks=False, recompiles=False)
    err = capsys.readouterr().err
    assert "TRACED GRAPH" in err and "Graph break in _branchy: bool(Tensor)" in err
    assert "Recompiling function _branchy: tensor 'x' size mismatch at index 0" in err


def test_backward_inside_a_compiled_function():
    m = nn.Linear(3, 1)
    ref = copy.deepcopy(m)
    x = jtorch.randn(4, 3)

    @jtorch.compile
    def step(x):
        loss = m(x).pow(2).mean()
        loss.backward()
        return loss

    _eq(step(x), ref(x).pow(2).mean())
    ref(x).pow(2).mean().backward()
    _eq(m.weight.grad, ref.weight.grad)


# -- mutation ---------------------------------------------------------------------------------

def test_mutations_are_written_back_as_eager_does():
    def f(x, buf, out):
        buf.add_(x)
        x[0].mul_(10)  # through a view
        v = x.t_() if x.ndim == 2 else x
        jtorch.sum(v, 0, out=out)
        return buf.sum()

    cf = jtorch.compile(f)
    for _ in range(2):
        args = [jtorch.arange(6.0).reshape(2, 3), jtorch.zeros(2, 3), jtorch.empty(3)]
        ref = [a.clone() for a in args]
        _eq(cf(*args), f(*ref))
        for a, b in zip(args, ref):
            _eq(a, b)
            assert a.shape == b.shape and a.stride() == b.stride()


def test_inplace_registry_ops_compiled_equal_eager():
    names = [n for n in dir(jtorch.Tensor) if n.endswith("_") and not n.startswith("_")
             and n[:-1] in ("add", "mul", "sub", "div", "clamp", "exp", "neg", "abs", "sqrt",
                            "relu", "sigmoid", "tanh", "fill", "zero", "copy", "masked_fill",
                            "index_fill", "lerp", "addcmul", "pow", "floor", "round")]
    assert len(names) >= 15
    for name in names:
        def f(x, y, name=name):
            meth = getattr(x, name)
            if name in ("fill_",):
                return meth(2.0)
            if name in ("zero_", "exp_", "neg_", "abs_", "sqrt_", "relu_", "sigmoid_", "tanh_",
                        "floor_", "round_"):
                return meth()
            if name == "clamp_":
                return meth(-0.5, 0.5)
            if name == "masked_fill_":
                return meth(y > 0, 1.0)
            if name == "index_fill_":
                return meth(0, jtorch.tensor([0]), 3.0)
            if name in ("lerp_", "addcmul_"):
                return meth(y, y * 0.5) if name == "addcmul_" else meth(y, 0.3)
            return meth(y)

        x, y = jtorch.rand(3, 4) + 0.5, jtorch.randn(3, 4)
        xe = x.clone()
        res = jtorch.compile(f)(x, y)
        f(xe, y)
        assert res is x, name
        _eq(x, xe)


# -- backends -------------------------------------------------------------------------------

def test_custom_backend_contract():
    seen = []

    def backend(gm, example_inputs):
        seen.append(([n.op for n in gm.graph.nodes], [tuple(t.shape) for t in example_inputs]))
        assert isinstance(gm, GraphModule)
        return gm.forward

    @jtorch.compile(backend=backend)
    def f(x, y):
        return (x * y).relu()

    x, y = jtorch.randn(2, 3), jtorch.randn(2, 3)
    _eq(f(x, y), (x * y).relu())
    _eq(f(x, y), (x * y).relu())
    assert seen == [(["placeholder", "placeholder", "call_function", "call_function", "output"],
                     [(2, 3), (2, 3)])]


def test_no_kernel_runs_while_tracing():
    from jtorch import dispatch

    ran = []

    def backend(gm, example_inputs):
        def run(*args):
            ran.append(dispatch.mode)
            return gm.forward(*args)
        return run

    jtorch.compile(lambda x: jtorch.exp(x).sum(), backend=backend)(jtorch.ones(3))
    assert ran == [None]


def test_is_compiling_disable_and_reset():
    seen = []

    @jtorch.compiler.disable
    def eager_only(x):
        seen.append(jtorch.compiler.is_compiling())
        return x.tolist()

    @jtorch.compile
    def f(x):
        seen.append(jtorch.compiler.is_compiling())
        return jtorch.tensor(eager_only(x + 1)) * 2

    x = jtorch.ones(2)
    _eq(f(x), (x + 1) * 2)
    assert seen == [True, False]
    with jtorch.compiler.disable():
        f(x)
    assert seen[-1] is False
    jtorch.compiler.reset()
    assert not f.entries


# -- dynamic shapes -------------------------------------------------------------------------

def test_a_size_that_changes_becomes_dynamic():
    calls = []
    w = jtorch.randn(12, 5)

    @jtorch.compile
    def f(x):
        calls.append(1)
        y = x.view(x.shape[0], -1) @ w
        return (y.relu() + 1).sum(1) / x.shape[0]

    for n in (8, 9, 10, 16, 3):
        x = jtorch.randn(n, 3, 4)
        np.testing.assert_allclose(f(x).numpy(), ((x.view(n, -1) @ w).relu() + 1).sum(1).numpy() / n,
                                   rtol=1e-6)
    assert len(calls) == 2  # 8, then 9 made dim 0 dynamic: one graph for every other size
    assert f.mask == {0: {0}}
    f(jtorch.randn(1, 3, 4))  # size 1 is specialised (broadcasting decides on it), as in torch
    assert len(calls) == 3
    with pytest.raises(RuntimeError, match=r"8x15 and 12x5"):  # eager's error, not a stale graph
        f(jtorch.randn(8, 3, 5))
    (gm,) = [e.gm for e in f.dynamic_entries[next(iter(f.dynamic_entries))]]
    assert "s0 = x.size(0)" in gm.code and "shape=(s0, -1)" in gm.code


def test_sizes_python_used_as_plain_ints_stay_static():
    """``range(x.shape[0])`` unrolls into the graph: both traces differ, nothing is dynamic."""
    calls = []

    @jtorch.compile
    def g(x):
        calls.append(1)
        return jtorch.stack([x[i] * i for i in range(x.shape[0])]).sum(0)

    for n in (3, 4, 5, 4):
        x = jtorch.randn(n, 2)
        _eq(g(x), jtorch.stack([x[i] * i for i in range(n)]).sum(0))
    assert len(calls) == 3 and not g.mask


def test_dynamic_false_keeps_every_size_static():
    calls = []

    @jtorch.compile(dynamic=False)
    def f(x):
        calls.append(1)
        return x * x.shape[0]

    for n in (2, 3, 4):
        _eq(f(jtorch.ones(n)), jtorch.ones(n) * n)
    assert len(calls) == 3 and not f.mask


def test_shape_guards_branch_on_symbolic_sizes():
    @jtorch.compile
    def f(x):
        if x.shape[0] > 4:
            return x * 2
        return x - 1

    for n in (6, 7, 8, 3, 2, 9):
        x = jtorch.ones(n)
        _eq(f(x), x * 2 if n > 4 else x - 1)


def test_dynamic_true_traces_symbolic_sizes_from_the_first_call():
    calls = []

    @jtorch.compile(dynamic=True)
    def f(x):
        calls.append(1)
        return x.reshape(-1, 2).sum(1) * x.shape[0]

    for n in (4, 6, 8, 10):
        x = jtorch.arange(float(n * 2)).reshape(n, 2)
        _eq(f(x), x.reshape(-1, 2).sum(1) * n)
    assert len(calls) == 2  # the second size confirms the symbolic graph; then it is reused
    first = next(e for e in f.entries.values() if isinstance(e, api._Entry))
    assert "s0" in str(first.gm.graph)


def test_custom_autograd_functions_keep_their_backward():
    class Cube(jtorch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    def f(x):
        return Cube.apply(x * 2).sum()

    x = jtorch.randn(4, requires_grad=True)
    xe = x.detach().clone().requires_grad_()
    cf = jtorch.compile(f)
    for _ in range(2):
        x.grad = xe.grad = None
        cf(x).backward()
        f(xe).backward()
        _eq(x.grad, xe.grad)
    x.grad = None
    jtorch.compile(f, fullgraph=True)(x).backward()  # one node in the graph: no break
    _eq(x.grad, xe.grad)


_SCALE = 2.0


def _helper(x):
    return x * _SCALE


def test_globals_read_by_helpers_and_methods_are_guarded():
    global _SCALE

    @jtorch.compile
    def f(x):
        return _helper(x) + 1

    class M(nn.Module):
        def part(self, x):
            return x * _SCALE

        def forward(self, x):
            return self.part(x) - 1

    m = jtorch.compile(M())
    x = jtorch.ones(3)
    try:
        _eq(f(x), x * 2 + 1)
        _eq(m(x), x * 2 - 1)
        _SCALE = 3.0  # read by a helper, not by the compiled function itself
        _eq(f(x), x * 3 + 1)
        _eq(m(x), x * 3 - 1)
    finally:
        _SCALE = 2.0


def test_torch_dynamo_names():
    x = jtorch.randn(4, 3)
    jtorch._dynamo.mark_dynamic(x, 0)
    calls = []

    @jtorch.compile
    def f(x):
        calls.append(1)
        return x.sum(0) * x.shape[0]

    for n in (4, 5, 7):
        t = x if n == 4 else jtorch.randn(n, 3)
        np.testing.assert_allclose(f(t).numpy(), (t.sum(0) * n).numpy(), rtol=1e-6)
    assert len(calls) == 2 and f.mask == {0: {0}}
    assert jtorch._dynamo.exc.Unsupported is Unsupported
    assert jtorch._dynamo.config is config and jtorch._dynamo.allow_in_graph(len) is len
    jtorch._dynamo.reset()
    assert not f.entries


def test_generated_code_drops_each_value_after_its_last_use():
    """Buffer planning: a dead intermediate's buffer returns to the caching allocator while
    the graph runs (a ``del`` after its last use); results and inputs read later stay."""
    from jtorch.compile.graph_module import python_code

    captured = []

    def backend(gm, ex):
        captured.append(gm)
        return gm.forward

    def f(x, w):
        y = x @ w
        z = y.relu() @ w
        return z * 2, y

    x, w = jtorch.randn(3, 4), jtorch.randn(4, 4)
    cf = jtorch.compile(f, backend=backend)
    for a, b in zip(cf(x, w), f(x, w)):
        assert jtorch.equal(a, b)
    src, _ = python_code(captured[0].graph)
    dropped = [name.strip() for ln in src.splitlines() if ln.strip().startswith("del ")
               for name in ln.strip()[4:].split(",")]
    assert sorted(dropped) == ["mm_1", "relu", "w", "x"]  # mm (y) is a result: kept
    assert src.index("del mm_1") > src.index("mul = ")
