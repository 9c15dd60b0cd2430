"""The autograd engine and its user surface, checked against torch's behaviour."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pytest
import torch

import jtorch
from jtorch.autograd import Function

MODS = [jtorch, torch]


def _t(m, data, rg=True, dtype=None):
    return m.tensor(data, dtype=dtype or m.float64, requires_grad=rg)


def _np(x):
    return None if x is None else x.detach().numpy()


def both(fn):
    """fn(m) under jtorch and torch; return the two results converted to NumPy."""
    return [fn(m) for m in MODS]


def assert_same(fn, rtol=1e-7):
    a, b = both(fn)
    if isinstance(a, (tuple, list)):
        for x, y in zip(a, b):
            np.testing.assert_allclose(_np(x), _np(y), rtol=rtol)
    else:
        np.testing.assert_allclose(_np(a), _np(b), rtol=rtol)


# -- basic backward, accumulation, broadcasting ---------------------------------------------

def test_backward_chain_matches_torch():
    def f(m):
        x = _t(m, [0.5, -1.0, 2.0])
        y = _t(m, [[1.0], [2.0]])
        ((x * y).exp() / (y + 3) - x.sin() ** 2).sum().backward()
        return x.grad, y.grad
    assert_same(f)


def test_grad_accumulates_and_retain_graph():
    def f(m):
        x = _t(m, [1.0, 2.0])
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        return x.grad
    assert_same(f)


def test_second_backward_without_retain_graph_raises():
    x = _t(jtorch, [1.0, 2.0])
    y = (x.exp()).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()


def test_nodes_without_saved_values_can_run_twice():
    x = _t(jtorch, [1.0, 2.0])
    y = (x + 1).sum()
    y.backward()
    y.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])


def test_broadcast_and_dtype_of_grads():
    x = jtorch.ones(3, 1, requires_grad=True)                      # float32
    y = jtorch.ones(4, dtype=jtorch.float64, requires_grad=True)
    (x * y).sum().backward()
    assert x.grad.dtype is jtorch.float32 and tuple(x.grad.shape) == (3, 1)
    assert y.grad.dtype is jtorch.float64 and tuple(y.grad.shape) == (4,)
    np.testing.assert_array_equal(x.grad.numpy(), np.full((3, 1), 4.0))
    np.testing.assert_array_equal(y.grad.numpy(), np.full(4, 3.0))


def test_scalar_operands_and_shared_inputs():
    def f(m):
        x = _t(m, [1.0, 2.0, 3.0])
        (2.0 ** x + x * x + 3 - x / 2 + (1 - x) * 0.5).sum().backward()
        return x.grad
    assert_same(f)


def test_grads_of_two_leaves_do_not_alias():
    a = _t(jtorch, [1.0, 2.0])
    b = _t(jtorch, [3.0, 4.0])
    (a + b).sum().backward()
    a.grad.zero_()
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 1.0])


def test_create_graph_higher_derivatives():
    def f(m):
        x = _t(m, [0.3, 1.7])
        y = (x ** 3 * x.exp()).sum()
        (g,) = m.autograd.grad(y, x, create_graph=True)
        (gg,) = m.autograd.grad(g.sum(), x, create_graph=True)
        (ggg,) = m.autograd.grad(gg.sum(), x)
        return g, gg, ggg
    assert_same(f)


def test_backward_inputs_restricts_accumulation():
    def f(m):
        x, y = _t(m, [1.0, 2.0]), _t(m, [3.0, 4.0])
        (x * y).sum().backward(inputs=[x])
        return x.grad, (y.grad if y.grad is not None else m.zeros(2, dtype=m.float64))
    assert_same(f)
    y = _t(jtorch, [3.0])
    x = _t(jtorch, [1.0])
    (x * y).sum().backward(inputs=[x])
    assert y.grad is None


def test_backward_with_gradient_argument():
    def f(m):
        x = _t(m, [1.0, 2.0, 3.0])
        y = x * x
        y.backward(m.tensor([1.0, 0.5, -1.0], dtype=m.float64))
        return x.grad
    assert_same(f)


# -- autograd.grad --------------------------------------------------------------------------

def test_autograd_grad_unused_and_materialize():
    x, z = _t(jtorch, [1.0, 2.0]), _t(jtorch, [5.0])
    y = (x * 2).sum()
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        jtorch.autograd.grad(y, [x, z], retain_graph=True)
    gx, gz = jtorch.autograd.grad(y, [x, z], allow_unused=True, retain_graph=True)
    assert gz is None and x.grad is None
    gx, gz = jtorch.autograd.grad(y, [x, z], materialize_grads=True)
    np.testing.assert_array_equal(gz.numpy(), [0.0])
    np.testing.assert_array_equal(gx.numpy(), [2.0, 2.0])


def test_autograd_grad_non_leaf_input_and_multiple_outputs():
    def f(m):
        x = _t(m, [1.0, 2.0])
        h = x * 3
        a, b = (h * h).sum(), h.exp().sum()
        return m.autograd.grad([a, b], [h, x], grad_outputs=[m.tensor(1.0, dtype=m.float64),
                                                             m.tensor(2.0, dtype=m.float64)])
    assert_same(f)


def test_autograd_grad_is_grads_batched():
    def f(m):
        x = _t(m, [1.0, 2.0, 3.0])
        y = x * x
        return m.autograd.grad(y, x, m.eye(3, dtype=m.float64), is_grads_batched=True)
    assert_same(f)


def test_errors_match_torch():
    for m in MODS:
        x = m.tensor([1.0, 2.0])
        with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and "
                                               "does not have a grad_fn"):
            x.sum().backward()
        w = m.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar "
                                               "outputs"):
            (w * 2).backward()
        with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not "
                                               "require grad"):
            m.autograd.grad((w * 2).sum(), [w, x])
        with pytest.raises(RuntimeError, match="only Tensors of floating point"):
            m.tensor([1, 2]).requires_grad_()
        with pytest.raises(RuntimeError, match="Mismatch in shape"):
            (w * 2).backward(m.ones(3))


# -- graph structure ------------------------------------------------------------------------

def test_grad_fn_names_and_next_functions():
    for m in MODS:
        x = m.tensor([1.0, 2.0], requires_grad=True)
        c = m.tensor([3.0, 4.0])
        y = x * c
        assert type(y.grad_fn).__name__ == "MulBackward0"
        assert y.grad_fn.name() == "MulBackward0"
        (acc, nr), (none, _) = y.grad_fn.next_functions
        assert type(acc).__name__ == "AccumulateGrad" and nr == 0 and acc.variable is x
        assert none is None
        z = y.exp().sum()
        assert type(z.grad_fn).__name__ == "SumBackward0"
        assert type(z.grad_fn.next_functions[0][0]).__name__ == "ExpBackward0"
        assert "grad_fn=<SumBackward0>" in repr(z)
        assert not y.is_leaf and x.is_leaf and c.is_leaf
        assert repr(x).endswith("requires_grad=True)")


def test_non_differentiable_outputs():
    x = jtorch.tensor([1.0, -2.0], requires_grad=True)
    assert not (x > 0).requires_grad
    assert not x.argmax().requires_grad
    assert not x.isnan().requires_grad
    assert x.floor().requires_grad  # torch: zero gradient, still recorded
    assert x.sign().requires_grad


def test_detach_and_data():
    x = _t(jtorch, [1.0, 2.0])
    y = x * 2
    d = y.detach()
    assert not d.requires_grad and d.grad_fn is None and d._version == y._version
    d[0] = 7.0
    assert y[0].item() == 7.0  # shares storage
    y2 = x * 3
    y2.detach_()
    assert y2.grad_fn is None and not y2.requires_grad
    x.data.mul_(10)  # outside the graph, allowed on a leaf
    np.testing.assert_array_equal(x.detach().numpy(), [10.0, 20.0])
    x.data = jtorch.tensor([5.0], dtype=jtorch.float64)
    assert tuple(x.shape) == (1,)


# -- hooks ----------------------------------------------------------------------------------

def test_tensor_hooks_and_retain_grad():
    def f(m):
        x = _t(m, [1.0, 2.0])
        seen = []
        x.register_hook(lambda g: g * 10)
        y = x * x
        y.retain_grad()
        h = y.register_hook(lambda g: seen.append(g.detach().clone()))
        y.register_hook(lambda g: g + 1)
        (y * 3).sum().backward(retain_graph=True)
        h.remove()
        (y * 3).sum().backward()
        assert len(seen) == 1 and y.retains_grad
        return x.grad, y.grad, seen[0]
    assert_same(f)


def test_hook_on_tensor_without_grad_raises():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                           "require gradient"):
        jtorch.tensor([1.0]).register_hook(lambda g: g)


def test_node_hooks_and_post_accumulate_hook():
    x = _t(jtorch, [1.0, 2.0])
    y = x.exp()
    calls = []
    y.grad_fn.register_hook(lambda gi, go: calls.append(("post", len(gi), len(go))))
    y.grad_fn.register_prehook(lambda go: calls.append(("pre", len(go))))
    x.register_post_accumulate_grad_hook(lambda t: calls.append(("acc", t is x)))
    y.sum().backward()
    assert calls == [("pre", 1), ("post", 1, 1), ("acc", True)]


def test_saved_tensors_hooks():
    packed = []

    def pack(t):
        packed.append(tuple(t.shape))
        return t

    x = _t(jtorch, [1.0, 2.0])
    with jtorch.autograd.graph.saved_tensors_hooks(pack, lambda t: t * 1):
        y = (x * x).sum()
    y.backward()
    assert packed == [(2,), (2,)]
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 4.0])


# -- in-place ops and version counters -------------------------------------------------------

def test_modified_saved_tensor_raises():
    for m in MODS:
        x = m.tensor([1.0, 2.0], requires_grad=True)
        y = x.exp()
        z = y.sum() * 1
        y.add_(1)
        with pytest.raises(RuntimeError, match="one of the variables needed for gradient "
                                               "computation has been modified by an inplace "
                                               r"operation: \[torch.FloatTensor \[2\]\], which is "
                                               "output 0 of Exp, is at version 1; "
                                               "expected version 0 instead"):
            (y * z).sum().backward()


def test_modified_input_names_its_current_op():
    for m in MODS:
        w = m.tensor([1.0, 2.0], requires_grad=True) * 1
        y = w * w
        w.add_(1)
        with pytest.raises(RuntimeError, match=r"which is output 0 of Add, is at version 1"):
            y.sum().backward()


def test_inplace_on_input_not_saved_is_fine():
    def f(m):
        x = _t(m, [1.0, 2.0])
        a = x * 1
        y = a + 2
        a.mul_(3)
        (y * y).sum().backward()
        return x.grad
    assert_same(f)


def test_inplace_chain_on_non_leaf():
    def f(m):
        x = _t(m, [0.5, -1.0, 2.0])
        w = _t(m, [2.0])
        y = x * 1
        y.mul_(w).add_(x).clamp_(-1.5, 1.5)
        y.sigmoid_()
        y.sum().backward()
        return x.grad, w.grad
    assert_same(f)


def test_inplace_on_leaf_raises_unless_no_grad():
    for m in MODS:
        x = m.tensor([1.0, 2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used "
                                               "in an in-place operation."):
            x.add_(1)
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is "
                                               "being used in an in-place operation."):
            x[0:1].mul_(2)
        with m.no_grad():
            x.add_(1)
            x[0] = 5.0
        assert x.tolist() == [5.0, 3.0]


def test_out_argument_with_grad_raises():
    x = jtorch.tensor([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="functions with out=... arguments don't support "
                                           "automatic differentiation"):
        jtorch.exp(x, out=jtorch.empty(1))


def test_copy_and_fill_on_non_leaf():
    def f(m):
        x, w = _t(m, [1.0, 2.0, 3.0]), _t(m, [4.0])
        c = x * 2
        c.copy_(w * m.ones(3, dtype=m.float64))
        d = x * 2
        d.fill_(w.sum())
        e = x * 3
        e.zero_()
        (c * c + d + e * x).sum().backward()
        return x.grad, w.grad
    assert_same(f)


def test_copy_into_saved_output_raises():
    for m in MODS:
        x = m.tensor([1.0, 2.0], requires_grad=True)
        c = x.exp()
        c.copy_(m.ones(2))
        with pytest.raises(RuntimeError, match="which is output 0 of Exp, is at version 1"):
            c.sum().backward()


def test_clone_and_casts_carry_gradients():
    def f(m):
        x = _t(m, [1.0, 2.0])
        (x.clone() * x.float().double() + x.to(m.float32).sum()).sum().backward()
        return x.grad
    assert_same(f, rtol=1e-6)
    assert type(jtorch.tensor([1.0], requires_grad=True).clone().grad_fn).__name__ == \
        "CloneBackward0"


# -- grad modes -----------------------------------------------------------------------------

def test_grad_modes_as_context_managers_and_decorators():
    x = jtorch.tensor([1.0], requires_grad=True)
    with jtorch.no_grad():
        assert not (x * 2).requires_grad
        assert not jtorch.is_grad_enabled()
        with jtorch.enable_grad():
            assert (x * 2).requires_grad
    assert jtorch.is_grad_enabled()

    @jtorch.no_grad()
    def f():
        return x * 2

    @jtorch.no_grad
    def g():
        return x * 2

    @jtorch.enable_grad()
    def h():
        return x * 2

    assert not f().requires_grad and not g().requires_grad
    with jtorch.no_grad():
        assert h().requires_grad
    jtorch.set_grad_enabled(False)
    assert not (x * 2).requires_grad
    jtorch.set_grad_enabled(True)
    with jtorch.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert (x * 2).requires_grad
    with jtorch.inference_mode():
        assert not (x * 2).requires_grad and jtorch.is_inference_mode_enabled()
    with jtorch.inference_mode(False):
        assert (x * 2).requires_grad


def test_grad_mode_is_thread_local():
    seen = []
    with jtorch.no_grad():
        t = threading.Thread(target=lambda: seen.append(jtorch.is_grad_enabled()))
        t.start()
        t.join()
        assert not jtorch.is_grad_enabled()
    assert seen == [True]


def test_set_multithreading_enabled():
    with jtorch.autograd.set_multithreading_enabled(False):
        assert not jtorch.autograd.is_multithreading_enabled()
    assert jtorch.autograd.is_multithreading_enabled()


# -- autograd.Function ----------------------------------------------------------------------

class Exp(Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        result, = ctx.saved_tensors
        return grad_output * result


def test_function_exp_example():
    x = jtorch.tensor([0.5, 1.0], requires_grad=True)
    output = Exp.apply(x)
    assert type(output.grad_fn).__name__ == "ExpBackward"
    output.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, 1.0]), rtol=1e-6)
    with jtorch.no_grad():
        assert Exp.apply(x).grad_fn is None


def test_function_ctx_features():
    class F(Function):
        @staticmethod
        def forward(ctx, x, k, y):
            ctx.k = k
            ctx.mark_non_differentiable  # noqa: B018
            ctx.set_materialize_grads(False)
            idx = x.argmax()
            ctx.mark_non_differentiable(idx)
            ctx.save_for_backward(x, y)
            return x * k + y, idx

        @staticmethod
        def backward(ctx, g, gidx):
            x, y = ctx.saved_tensors
            assert ctx.needs_input_grad == (True, False, False)
            assert gidx is None
            return g * ctx.k, None, None

    x = jtorch.tensor([1.0, 3.0], requires_grad=True)
    y = jtorch.tensor([1.0, 1.0])
    out, idx = F.apply(x, 2.5, y)
    assert not idx.requires_grad and out.requires_grad
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.5, 2.5])


def test_function_mark_dirty_and_wrong_grad_count():
    class AddOne(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g, g

    a = jtorch.tensor([1.0], requires_grad=True)
    b = a * 2
    c = AddOne.apply(b)
    assert c is b and b.item() == 3.0
    with pytest.raises(RuntimeError, match="returned an incorrect number of gradients"):
        c.sum().backward()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        AddOne.apply(a)


def test_function_setup_context_and_once_differentiable():
    class Sq(Function):
        @staticmethod
        def forward(x):
            return x * x

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0])

        @staticmethod
        @jtorch.autograd.function.once_differentiable
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            assert not jtorch.is_grad_enabled()
            return 2 * x * g

    x = jtorch.tensor([3.0], requires_grad=True)
    (g,) = jtorch.autograd.grad(Sq.apply(x).sum(), x, create_graph=True)
    assert g.item() == 6.0 and not g.requires_grad


# -- anomaly mode ---------------------------------------------------------------------------

def test_detect_anomaly_warns_and_checks_nan():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        ctx = jtorch.autograd.detect_anomaly()
    x = jtorch.tensor([0.0, 1.0], requires_grad=True)
    with ctx:
        assert jtorch.is_anomaly_enabled()
        y = x.sqrt() * 0 + x.log()  # d/dx log(0) * ... gives inf; sqrt'(0) * 0 gives nan
        with pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan values in "
                                               "its 0th output."):
            y.sum().backward()
    assert not jtorch.is_anomaly_enabled()


def test_anomaly_reports_forward_trace():
    class Bad(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            raise ValueError("boom")

    x = jtorch.tensor([1.0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        jtorch.autograd.set_detect_anomaly(True)
    try:
        y = Bad.apply(x)
        with pytest.warns(UserWarning, match="Error detected in BadBackward"), \
                pytest.raises(ValueError, match="boom"):
            y.sum().backward()
    finally:
        jtorch.autograd.set_detect_anomaly(False)


# -- no op drops the graph ------------------------------------------------------------------

def test_special_cased_ops_keep_the_graph():
    def f(m):
        x = _t(m, [0.5, 1.5, -2.0])
        F = m.nn.functional
        parts = [x ** 0, x ** 1, x ** 2, x.abs() ** 0.5, x.abs() ** -0.5, 2 ** x,
                 m.add(x, x, alpha=2), m.sub(x, x * x, alpha=0.5), 1 - x, x.float().double(),
                 F.relu(x), F.gelu(x), F.silu(x), F.elu(x), F.selu(x), F.celu(x), F.relu6(x),
                 F.leaky_relu(x), F.hardtanh(x), F.softplus(x), F.mish(x), F.logsigmoid(x),
                 F.hardswish(x), m.lerp(x, x * 2, 0.3), m.nan_to_num(x), x.clamp(min=0)]
        for p in parts:
            assert p.requires_grad
        sum(p.sum() * (i + 1) for i, p in enumerate(parts)).backward()
        return x.grad
    assert_same(f, rtol=1e-6)


# -- memory: graphs and saved tensors are freed ---------------------------------------------

def test_graph_is_freed_without_cycles():
    import gc
    import weakref

    gc.disable()
    try:
        x = _t(jtorch, [1.0, 2.0])
        h = x.exp()
        z = (h.sin() * h).sum()
        refs = [weakref.ref(h), weakref.ref(z.grad_fn), weakref.ref(h.grad_fn)]
        del h, z
        assert all(r() is None for r in refs)  # plain reference counting frees the graph
    finally:
        gc.enable()


def test_saved_tensors_are_released_after_backward():
    import weakref

    x = _t(jtorch, [1.0, 2.0])
    h = x.exp()
    z = h.sin().sum()
    ref = weakref.ref(h)
    del h
    assert ref() is not None  # SinBackward0 saved it
    z.backward()
    assert ref() is None      # released by the backward pass
    z2 = x.exp().sin().sum()
    h_ref = weakref.ref(z2.grad_fn.next_functions[0][0])
    z2.backward(retain_graph=True)
    z2.backward()
    del z2
    assert h_ref() is None


def test_training_loop_does_not_grow():
    import gc

    w = _t(jtorch, [0.5, -0.5])
    for _ in range(3):
        loss = ((w * 3).tanh() ** 2).sum()
        loss.backward()
        with jtorch.no_grad():
            w -= 0.1 * w.grad
        w.grad = None
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(20):
        loss = ((w * 3).tanh() ** 2).sum()
        loss.backward()
        with jtorch.no_grad():
            w -= 0.1 * w.grad
        w.grad = None
    gc.collect()
    assert len(gc.get_objects()) - before < 50


def test_grad_attribute_checks_and_non_leaf_warning():
    for m in MODS:
        x = m.ones(2, requires_grad=True)
        with pytest.raises(RuntimeError, match=r"attempting to assign a gradient of size '\[3\]' "
                                               r"to a tensor of size '\[2\]'"):
            x.grad = m.ones(3)
        with pytest.raises(RuntimeError, match="attempting to assign a gradient with dtype "
                                               "'double' to a tensor with grad_dtype 'Float'"):
            x.grad = m.ones(2, dtype=m.float64)
        with pytest.raises(TypeError, match="assigned grad expected to be a Tensor or None but "
                                            "got grad of type int"):
            x.grad = 3
        x.grad = m.ones(2)
        del x.grad
        assert x.grad is None
        y = x * 2
        with pytest.warns(UserWarning, match="The .grad attribute of a Tensor that is not a leaf"):
            assert y.grad is None


def test_tensor_hooks_apply_to_autograd_grad_results():
    for m in MODS:
        x = m.ones(2, requires_grad=True)
        x.register_hook(lambda g: g * 10)
        assert m.autograd.grad((x * 3).sum(), x)[0].tolist() == [30.0, 30.0]
        y = x * 2
        y.register_hook(lambda g: g * 100)
        assert m.autograd.grad((y * 3).sum(), y)[0].tolist() == [300.0, 300.0]


def test_index_outputs_saved_by_a_rule_are_version_checked():
    from jtorch.autograd.node import make_node
    from jtorch.kernels.registry import OpDef

    op = OpDef("probe", "extern", saves="o")
    x = _t(jtorch, [1.0, 2.0])
    vals, idx = x * 1, jtorch.tensor([0, 1])
    node = make_node(op, (x,), (vals, idx), None)
    assert node.out[1] is idx
    idx.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        node.out  # noqa: B018


def test_a_rule_can_save_some_outputs_and_read_one():
    """``saves`` "0o1" keeps input 0 and output 1 only (layer_norm saves mean and rstd, not
    its result); ``out_at`` unpacks one saved output, None for one not saved."""
    import weakref

    from jtorch.autograd.node import make_node
    from jtorch.kernels.registry import OpDef

    op = OpDef("probe_some", "extern", saves="0o1")
    x = _t(jtorch, [1.0, 2.0])
    y, stat = x * 2, x * 3
    node = make_node(op, (x,), (y, stat), None)
    assert node.args[0] is x
    assert node.out_at(0) is None
    assert np.array_equal(node.out_at(1).detach().numpy(), stat.detach().numpy())
    assert [o is None for o in node.out] == [True, False]
    ref = weakref.ref(y)
    del y
    assert ref() is None  # the node holds no reference to the unsaved output
    # layer_norm's node: the result is not kept, the gradient is unchanged
    w = jtorch.ones(3, requires_grad=True)
    h = jtorch.randn(2, 3, requires_grad=True)
    out = jtorch.nn.functional.layer_norm(h, (3,), w)
    assert out.grad_fn.out_at(0) is None
    out.sum().backward()
    assert h.grad.shape == (2, 3) and w.grad.shape == (3,)

def test_leaf_grad_takes_the_leaf_layout_like_torch():
    """torch's layout contract: .grad has a dense leaf's strides (linear's weight gradient is
    row-major although it flows through weight.t()); a non-dense leaf gets a row-major grad."""
    import torch

    for make in (lambda m: m.randn(5, 3), lambda m: m.randn(3, 5).t(), lambda m: m.randn(2, 3, 4).permute(2, 0, 1)):
        torch.manual_seed(0)
        tw = make(torch).requires_grad_()
        jw = jtorch.from_numpy(tw.detach().numpy().copy()).as_strided(tuple(tw.shape), tw.stride()) \
            .detach().requires_grad_()
        assert jw.stride() == tw.stride()
        x = torch.randn(4, tw.shape[-1])
        (x @ tw.mT).sum().backward()
        (jtorch.from_numpy(x.numpy()) @ jw.mT).sum().backward()
        assert jw.grad.stride() == tw.grad.stride()
        np.testing.assert_allclose(jw.grad.numpy(), tw.grad.numpy(), rtol=1e-5)
    w = jtorch.randn(5, 3, requires_grad=True)
    jtorch.nn.functional.linear(jtorch.randn(4, 3), w, jtorch.zeros(5)).sum().backward()
    assert w.grad.is_contiguous()
    base = jtorch.randn(4, 6)
    leaf = base[:, ::2].detach().requires_grad_()  # not dense: a row-major grad
    (leaf * 2).sum().backward()
    assert leaf.grad.is_contiguous()


def test_leaf_grads_never_share_memory():
    """Gradient buffers are handed to leaves without copies when nothing else holds them, but
    two leaves (or a leaf and the caller's ``gradient``) never share one block."""
    a = jtorch.randn(3, 2, requires_grad=True)
    b = jtorch.randn(2, 3, requires_grad=True)
    (a.t() + b).sum().backward()  # add hands one buffer to both; a's is its transpose
    c = jtorch.randn(2, 3, requires_grad=True)
    d = jtorch.randn(1, 3, requires_grad=True)
    jtorch.cat([c, d]).sum().backward()  # slices of one buffer
    x = jtorch.randn(2, 3, requires_grad=True)
    gu = jtorch.ones(6)
    x.view(6).backward(gu)
    e = jtorch.randn(2, 3, requires_grad=True)
    f = jtorch.randn(2, 3, requires_grad=True)
    ge = jtorch.randn(2, 3)
    (e + f).backward(ge)  # the caller's gradient, handed on to both leaves: two copies
    np.testing.assert_array_equal(e.grad.numpy(), ge.numpy())
    np.testing.assert_array_equal(f.grad.numpy(), ge.numpy())
    for p, q in ((a.grad, b.grad), (c.grad, d.grad), (x.grad, gu), (e.grad, ge), (f.grad, ge),
                 (e.grad, f.grad)):
        assert not np.shares_memory(p.numpy(), q.numpy())
        assert p._base is None
    a.grad.add_(1)
    np.testing.assert_array_equal(b.grad.numpy(), np.ones((2, 3), np.float32))


def test_post_accumulate_grad_hook_needs_a_tensor_that_requires_grad():
    for lib in (torch, jtorch):
        with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                               "require gradient"):
            lib.ones(2).register_post_accumulate_grad_hook(lambda t: None)
