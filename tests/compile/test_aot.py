"""Compiled backward (``compile/aot.py``): the joint graph, its partition, and the one autograd
node a compiled call's results carry; gradients through compiled functions equal eager's."""

from __future__ import annotations

import gc
import weakref
import zlib

import numpy as np
import pytest
from autograd.test_gradcheck_sweep import SAMPLES as GRADCHECK_SAMPLES
from test_registry_grad_sweep import GRAD_OPS, NOT_IMPLEMENTED, PARAMS, _jtorch_fn, _operands

import jtorch
import jtorch.nn.functional as F
from jtorch.compile.aot import JointFunction

_NAME = "CompiledFunctionBackward"
# ops whose gradients stay on eager nodes (the joint trace does not apply), with the reason
_VIEW = "its result is a view of its input: the eager path keeps the alias"
_READS = "its gradient rule reads tensor values (.item())"
NO_JOINT: dict = {
    **dict.fromkeys(["as_strided", "diagonal", "expand", "permute", "select", "slice", "view"],
                    _VIEW),
    **dict.fromkeys(["cumprod", "prod", "min", "nanmedian"], _READS),
    **dict.fromkeys(["masked_select", "masked_scatter"], "a data-dependent op: a graph break"),
    "linalg_eig": "its gradient rule checks values (the eigenvectors' phase) and conjugates",
}


def _joints(cf) -> list:
    return [fn for fn, _ in cf.pieces.values() if isinstance(fn, JointFunction)]


def _graphs(j: JointFunction) -> tuple:
    """The forward and backward graphs a joint function's backend got."""
    return j.fw.__self__.graph, j.bw.__self__.graph


def _leaves(*arrays, grad=True) -> list:
    return [jtorch.from_numpy(np.array(a)).requires_grad_(grad) for a in arrays]


def _grads_of(fn, inputs: list, tangent_seed: int = 0) -> tuple:
    """(results, gradients of the inputs that require grad) for random tangents."""
    out = fn(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    rng = np.random.default_rng(tangent_seed)
    diff = [o for o in outs if isinstance(o, jtorch.Tensor) and o.requires_grad]
    tans = [jtorch.from_numpy(rng.standard_normal(tuple(o.shape))).to(o.dtype) for o in diff]
    req = [x for x in inputs if isinstance(x, jtorch.Tensor) and x.requires_grad]
    gs = jtorch.autograd.grad(diff, req, tans, allow_unused=True) if diff else ()
    return outs, gs


def _compare(fn, inputs: list, backend: str = "numba", rtol: float = 0.0) -> list:
    """The compiled function's results and gradients against eager's; returns its joints."""
    cf = jtorch.compile(fn, backend=backend)
    c_out, c_g = _grads_of(cf, inputs)
    e_out, e_g = _grads_of(fn, inputs)
    for a, b in zip(c_out, e_out):
        if isinstance(a, jtorch.Tensor):
            assert a.requires_grad == b.requires_grad
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=rtol,
                                       atol=rtol * 1e-3)
    assert len(c_g) == len(e_g)
    for a, b in zip(c_g, e_g):
        assert (a is None) == (b is None)
        if a is not None:
            assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=rtol, atol=rtol * 1e-3)
    return _joints(cf)


def _chain(x, w):
    return (jtorch.sin(x) + jtorch.cos(x) * x - jtorch.exp(-x * x)) * w


# -- the joint graph and its partition ---------------------------------------------------------

@pytest.mark.parametrize("backend", ["numba", "aot_eager"])
def test_a_chains_gradients_are_eagers_bitwise(backend):
    x, w = _leaves(np.linspace(-2, 2, 300, dtype=np.float32), np.linspace(1, 3, 300,
                                                                           dtype=np.float32))
    cf = jtorch.compile(_chain, backend=backend)
    y = cf(x, w)
    assert type(y.grad_fn).__name__ == _NAME
    y.sum().backward()
    gx, gw = x.grad, w.grad
    x.grad = w.grad = None
    _chain(x, w).sum().backward()
    np.testing.assert_array_equal(gx.numpy(), x.grad.numpy())
    np.testing.assert_array_equal(gw.numpy(), w.grad.numpy())


def test_a_pointwise_chain_saves_its_inputs_and_recomputes_the_rest():
    x, w = _leaves(np.ones(8, np.float32), np.ones(8, np.float32))
    cf = jtorch.compile(_chain, backend="aot_eager")
    cf(x, w)
    (j,) = _joints(cf)
    fw, bw = _graphs(j)
    (out,) = [n for n in fw.nodes if n.op == "output"]
    assert len(out.args[0]) == 1  # the result only: no intermediate is kept for backward
    names = [n.name for n in bw.nodes if n.op == "placeholder"]
    assert sorted(names) == ["saved_w", "saved_x", "tangent_0"]
    assert [k for k, _ in j.sources].count("in") == 2


def test_a_matmul_result_is_saved_not_recomputed():
    x, w = _leaves(np.ones((4, 3)), np.ones((3, 5)))
    cf = jtorch.compile(lambda x, w: (x @ w).exp(), backend="aot_eager")
    cf(x, w)
    (j,) = _joints(cf)
    fw, bw = _graphs(j)
    (out,) = [n for n in fw.nodes if n.op == "output"]
    assert [n.target.name for n in out.args[0]] == ["exp"]  # exp saves its own result
    assert not any(n.name.startswith("re_") for n in bw.nodes)  # nothing recomputed


def test_no_joint_without_grad_or_grad_mode():
    x = _leaves(np.ones(4))[0]
    cf = jtorch.compile(lambda x: x.sin() * 2)
    with jtorch.no_grad():
        assert cf(x).grad_fn is None
    assert not _joints(cf)
    y = jtorch.ones(4)
    assert cf(y).grad_fn is None and not _joints(cf)
    assert type(cf(x).grad_fn).__name__ == _NAME


# -- the node in the engine ----------------------------------------------------------------------

def test_retain_graph_and_the_freed_error():
    x = _leaves(np.linspace(0, 1, 5))[0]
    cf = jtorch.compile(lambda x: (x * x).exp())
    y = cf(x).sum()
    y.backward(retain_graph=True)
    g1 = x.grad.clone()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * g1.numpy())  # accumulated
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_autograd_grad_inputs_and_unused_inputs():
    a, b, c = _leaves(np.full(3, 2.0), np.full(3, 3.0), np.full(3, 5.0))
    cf = jtorch.compile(lambda a, b, c: (a * b, a + 1))
    p, q = cf(a, b, c)
    ga, gc_ = jtorch.autograd.grad(p.sum() + q.sum(), (a, c), allow_unused=True)
    assert ga.tolist() == [4.0, 4.0, 4.0] and gc_ is None
    p, q = cf(a, b, c)
    (p.sum() + q.sum()).backward(inputs=[b])
    assert b.grad.tolist() == [2.0, 2.0, 2.0] and a.grad is None


def test_an_unused_result_gets_a_zero_gradient():
    a = _leaves(np.arange(3.0))[0]
    cf = jtorch.compile(lambda a: (a.sin(), a.cos()))
    s, _ = cf(a)
    s.sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), np.cos(np.arange(3.0)))


def test_hooks_on_inputs_and_results_run():
    x = _leaves(np.ones(3))[0]
    seen = []
    x.register_hook(lambda g: seen.append(g.tolist()) or g * 10)
    cf = jtorch.compile(lambda x: x * 3)
    y = cf(x)
    y.register_hook(lambda g: g + 1)
    y.sum().backward()
    assert seen == [[6.0, 6.0, 6.0]] and x.grad.tolist() == [60.0, 60.0, 60.0]


def test_double_backward_through_a_compiled_function():
    x = _leaves(np.linspace(0.1, 1, 4))[0]
    f = lambda x: (x * x * x).sin()
    (g,) = jtorch.autograd.grad(jtorch.compile(f)(x).sum(), x, create_graph=True)
    (gg,) = jtorch.autograd.grad(g.sum(), x)
    (ge,) = jtorch.autograd.grad(f(x).sum(), x, create_graph=True)
    (gge,) = jtorch.autograd.grad(ge.sum(), x)
    np.testing.assert_allclose(g.detach().numpy(), ge.detach().numpy(), rtol=1e-14)
    np.testing.assert_allclose(gg.numpy(), gge.numpy(), rtol=1e-14)


def _bn_block(seed: int = 0):
    jtorch.manual_seed(seed)
    return jtorch.nn.Sequential(jtorch.nn.Linear(3, 4), jtorch.nn.BatchNorm1d(4),
                                jtorch.nn.Tanh()).double()


def _state(m) -> list:
    return [v.detach().numpy().copy() for v in m.state_dict().values()]


def test_double_backward_writes_batchnorm_statistics_once():
    """create_graph replays the graph eagerly: the replay writes copies of the buffers."""
    x = jtorch.from_numpy(np.random.default_rng(0).standard_normal((5, 3)))
    res = []
    for compiled in (False, True):
        m = _bn_block()
        xx = x.clone().requires_grad_()
        f = jtorch.compile(m) if compiled else m
        y = f(xx)
        assert (type(y.grad_fn).__name__ == _NAME) == compiled
        (g,) = jtorch.autograd.grad(y.pow(2).sum(), xx, create_graph=True)
        (gg,) = jtorch.autograd.grad(g.sum(), xx)
        res.append([g.detach().numpy(), gg.numpy(), *_state(m)])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    assert res[1][-1] == 1  # num_batches_tracked


def test_two_calls_before_one_backward_with_batchnorm_buffers():
    """Each call writes the running statistics; the first call's backward does not read them,
    so (as in eager) the second write is no error."""
    rng = np.random.default_rng(1)
    x1, x2 = (jtorch.from_numpy(rng.standard_normal((5, 3))) for _ in range(2))
    res = []
    for compiled in (False, True):
        m = _bn_block()
        f = jtorch.compile(m) if compiled else m
        (f(x1).sum() + f(x2).pow(2).sum()).backward()
        res.append([p.grad.numpy() for p in m.parameters()] + _state(m))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def test_double_backward_replays_from_an_input_s_value_before_the_graph_wrote_it():
    def f(x, buf):
        y = (x + buf).exp()  # exp's rule reads its result, computed from buf before the write
        buf.mul_(3)
        return y

    res = []
    for fn in (f, jtorch.compile(f)):
        buf = jtorch.tensor([0.5, -1.0, 2.0], dtype=jtorch.float64)
        x = jtorch.tensor([0.3, 0.2, -0.1], dtype=jtorch.float64, requires_grad=True)
        (g,) = jtorch.autograd.grad(fn(x, buf).sum(), x, create_graph=True)
        (gg,) = jtorch.autograd.grad(g.sum(), x)
        res.append((g.detach().numpy(), gg.numpy(), buf.numpy()))
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-14)
    np.testing.assert_allclose(res[1][2], [1.5, -3.0, 6.0])  # written once


def test_an_input_the_backward_reads_and_the_graph_writes_raises_as_in_eager():
    def f(x, buf):
        y = x * buf  # mul's rule reads buf, then the graph writes it
        buf.add_(1)
        return y

    for fn in (f, jtorch.compile(f)):
        x = jtorch.ones(2, requires_grad=True)
        y = fn(x, jtorch.tensor([2.0, 3.0]))
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_an_input_modified_after_the_call_is_caught():
    x = _leaves(np.ones(3))[0]
    w = jtorch.ones(3, requires_grad=True)
    y = jtorch.compile(lambda x, w: x.sin() * w)(x, w)
    with jtorch.no_grad():
        w.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_saved_values_are_freed_after_backward():
    x, w = _leaves(np.ones((4, 3)), np.ones((3, 5)))
    cf = jtorch.compile(lambda x, w: (x @ w).exp())
    y = cf(x, w)
    node = y.grad_fn
    saved = [s for s in node.saved if isinstance(s, jtorch.Tensor)] + \
        [s.data for s in node.saved if type(s).__name__ == "SavedTensor"]
    assert saved
    refs = [weakref.ref(s) for s in saved]
    del saved
    y.sum().backward()
    gc.collect()
    assert node.saved is None and all(r() is None or r() is y for r in refs)


@pytest.mark.parametrize("backend", ["eager", "numba"])
def test_a_detached_input_is_its_own_value_in_the_graph(backend):
    """``x.detach()`` shares x's array: traced, it is an alias without grad, not x itself (the
    gradient of ``x.detach() * x`` is ``x``, not ``2x`` or none)."""
    x = _leaves(np.array([1.0, -2.0, 3.0]))[0]
    y = jtorch.compile(lambda x: x.detach() * x, backend=backend)(x)
    assert y.requires_grad
    y.sum().backward()
    assert x.grad.tolist() == [1.0, -2.0, 3.0]


def test_results_that_alias_inputs_take_the_eager_path():
    x = _leaves(np.ones((2, 3)))[0]
    cf = jtorch.compile(lambda x: (x.view(6), x * 2))
    v, y = cf(x)
    (v.sum() + y.sum()).backward()
    assert x.grad.tolist() == [[3.0] * 3] * 2 and not _joints(cf)


def test_a_module_s_parameters_get_gradients():
    jtorch.manual_seed(0)
    m = jtorch.nn.Sequential(jtorch.nn.Linear(6, 8), jtorch.nn.Tanh(), jtorch.nn.Linear(8, 2))
    x = jtorch.randn(5, 6)
    loss = F.mse_loss(jtorch.compile(m)(x), jtorch.zeros(5, 2))
    loss.backward()
    got = [p.grad.clone() for p in m.parameters()]
    m.zero_grad()
    F.mse_loss(m(x), jtorch.zeros(5, 2)).backward()
    for a, p in zip(got, m.parameters()):
        np.testing.assert_allclose(a.numpy(), p.grad.numpy(), rtol=1e-6, atol=1e-7)


class _TwiceExp(jtorch.autograd.Function):
    """A backward that is not exp's derivative: only the user's rule gives it."""

    @staticmethod
    def forward(ctx, x):
        y = x.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y * 2


class _ReadsValues(jtorch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * float(x.sum())

    @staticmethod
    def backward(ctx, g):
        return g * 5


def test_a_custom_function_is_traced_through_its_forward_and_backward():
    x = _leaves(np.linspace(-1, 1, 6))[0]
    f = lambda x: _TwiceExp.apply(x.sin()) * 3
    cf = jtorch.compile(f, fullgraph=True, backend="aot_eager")
    y = cf(x)
    assert type(y.grad_fn).__name__ == _NAME
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * np.exp(np.sin(x.detach().numpy())) *
                               np.cos(x.detach().numpy()), rtol=1e-14)
    (j,) = _joints(cf)
    fw, _ = _graphs(j)
    assert [n.target.name for n in fw.nodes if n.op == "call_function"] == ["sin", "exp", "mul"]


def test_a_custom_function_that_reads_values_is_a_graph_break():
    x = _leaves(np.ones(3))[0]
    cf = jtorch.compile(lambda x: _ReadsValues.apply(x * 2) + 1)
    cf(x).sum().backward()
    assert x.grad.tolist() == [10.0, 10.0, 10.0]


# -- the unit-seeded forward of a scalar loss ---------------------------------------------------

def _loss(x, w):
    return _chain(x, w).sum()


def _seeded_case(dtype=np.float32):
    x, w = _leaves(np.linspace(-3, 3, 257, dtype=dtype), np.linspace(0.5, 2, 257, dtype=dtype))
    cf = jtorch.compile(_loss)
    return cf, x, w


def _eager_grads(fn, x, w, tangent=None) -> tuple:
    xe, we = _leaves(x.detach().numpy(), w.detach().numpy())
    fn(xe, we).backward(tangent)
    return xe.grad.numpy(), we.grad.numpy()


def _no_backward_graph(j: JointFunction) -> None:
    def fail(*args):
        raise AssertionError("the backward graph ran")
    j.bw = fail


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_scalar_loss_s_gradients_come_from_its_forward(dtype):
    """``loss.backward()`` seeds 1: the forward computed the gradients (in the same fused
    kernel as the loss), the backward graph does not run, and they are eager's bits."""
    cf, x, w = _seeded_case(dtype)
    y = cf(x, w)
    (j,) = _joints(cf)
    assert j.seeded is not None and len(y.grad_fn.unit) == 2  # x's and w's gradients
    _no_backward_graph(j)
    y.backward()
    ex, ew = _eager_grads(_loss, x, w)
    np.testing.assert_array_equal(x.grad.numpy(), ex)
    np.testing.assert_array_equal(w.grad.numpy(), ew)
    assert y.grad_fn is not None and x.grad.dtype == x.dtype
    # autograd.grad seeds 1 too
    gx, = jtorch.autograd.grad(cf(x, w), (x,))
    np.testing.assert_array_equal(gx.numpy(), ex)


def test_another_tangent_runs_the_backward_graph():
    cf, x, w = _seeded_case()
    y = cf(x, w)
    t = jtorch.tensor(2.5)
    y.backward(t)
    ex, ew = _eager_grads(_loss, x, w, jtorch.tensor(2.5))
    np.testing.assert_array_equal(x.grad.numpy(), ex)
    np.testing.assert_array_equal(w.grad.numpy(), ew)
    # a hook on the loss changes the seed: the backward graph again
    x.grad = w.grad = None
    y = cf(x, w)
    y.register_hook(lambda g: g * 2.5)
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), ex)


def test_retain_graph_hands_the_forward_s_gradients_out_once():
    cf, x, w = _seeded_case()
    y = cf(x, w)
    y.backward(retain_graph=True)
    g1 = x.grad.clone()
    y.backward(retain_graph=True)  # the backward graph, accumulated into the first result
    np.testing.assert_array_equal(x.grad.numpy(), 2 * g1.numpy())
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), 3 * g1.numpy())
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_a_seeded_input_modified_after_the_call_is_caught():
    cf, x, w = _seeded_case()
    y = cf(x, w)
    assert y.grad_fn.unit is not None
    with jtorch.no_grad():
        w.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_double_backward_through_a_seeded_loss():
    cf, x, w = _seeded_case(np.float64)
    (gx,) = jtorch.autograd.grad(cf(x, w), (x,), create_graph=True)
    (ggx,) = jtorch.autograd.grad(gx.sum(), (w,))
    xe, we = _leaves(x.detach().numpy(), w.detach().numpy())
    (egx,) = jtorch.autograd.grad(_loss(xe, we), (xe,), create_graph=True)
    (eggx,) = jtorch.autograd.grad(egx.sum(), (we,))
    np.testing.assert_allclose(gx.detach().numpy(), egx.detach().numpy(), rtol=1e-15)
    np.testing.assert_allclose(ggx.numpy(), eggx.numpy(), rtol=1e-15)


def test_a_seeded_gradient_sharing_an_input_s_memory_is_copied():
    from jtorch.compile.aot import _own

    x, w = _leaves(np.ones(3), np.ones(3))
    assert _own(w, (x,)) is w
    for g in (x, x.detach(), x.detach()[1:]):
        c = _own(g, (w, x))
        assert c is not g and not np.shares_memory(c.detach().numpy(), x.detach().numpy())


def test_no_seeded_forward_where_the_backward_has_products_or_results_are_not_scalars():
    x, w = _leaves(np.ones((4, 3)), np.ones((3, 5)))
    for fn in (lambda x, w: (x @ w).sum(), lambda x, w: (x.sin() * w[:, 0]).exp()):
        cf = jtorch.compile(fn)
        cf(x, w)
        (j,) = _joints(cf)
        assert j.seeded is None


# -- the sweeps ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", [n for n in GRAD_OPS if n not in NOT_IMPLEMENTED])
def test_pointwise_gradients_through_a_compiled_function(name):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    vals = _operands(name, rng)
    for params in PARAMS.get(name, [()]):
        ins = [jtorch.from_numpy(v.copy()).requires_grad_(v.dtype == np.float64) for v in vals]
        fn = _jtorch_fn(name)
        joints = _compare(lambda *a, fn=fn, params=params: fn(*a, *params), ins,
                          backend="aot_eager")
        assert joints, name


@pytest.mark.parametrize("name", [n for n in GRAD_OPS if n not in NOT_IMPLEMENTED])
def test_pointwise_gradients_of_a_scalar_loss_come_from_the_seeded_forward(name):
    """``fn(*x).sum()`` compiled: every pointwise op's backward joins the unit-seeded forward,
    whose gradients are eager's bits (the backward graph does not run)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    vals = _operands(name, rng)
    fn = _jtorch_fn(name)
    for params in PARAMS.get(name, [()]):
        loss = lambda *a, fn=fn, params=params: fn(*a, *params).sum()
        ins = [jtorch.from_numpy(v.copy()).requires_grad_(v.dtype == np.float64) for v in vals]
        cf = jtorch.compile(loss, backend="aot_eager")
        y = cf(*ins)
        (j,) = _joints(cf)
        assert j.seeded is not None and y.grad_fn.unit is not None, name
        _no_backward_graph(j)
        y.backward()
        eager = [jtorch.from_numpy(v.copy()).requires_grad_(v.dtype == np.float64) for v in vals]
        loss(*eager).backward()
        for a, b in zip(ins, eager):
            if b.grad is not None:
                np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy(), err_msg=name)


def _sweep_inputs(inputs: list) -> list:
    return [x.detach().clone().requires_grad_(x.requires_grad) if isinstance(x, jtorch.Tensor)
            else x for x in inputs]


@pytest.mark.parametrize("backend", ["aot_eager", "numba"])
@pytest.mark.parametrize("name", sorted(GRADCHECK_SAMPLES))
def test_gradients_of_every_differentiable_op_through_a_compiled_function(name, backend):
    fn, inputs = GRADCHECK_SAMPLES[name]
    joints = _compare(fn, _sweep_inputs(inputs), backend=backend, rtol=1e-12)
    assert joints or name in NO_JOINT, f"{name}: its gradients ran through eager nodes"
