"""autograd.functional against torch.autograd.functional: same values, shapes, nesting
(tuple vs list vs tensor), requires_grad, and error messages. Inputs are float64 NumPy
arrays converted to both libraries."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.autograd.functional as TF

import jtorch
import jtorch.autograd.functional as JF

_RNG = np.random.default_rng(0)
_A = _RNG.standard_normal(3)
_B = _RNG.standard_normal((2, 3))
_S = np.array([0.7])


def _both(*arrays):
    """``(jtorch inputs, torch inputs)``: one tensor per array (a tuple when several)."""
    j = tuple(jtorch.from_numpy(a.copy()) for a in arrays)
    t = tuple(torch.from_numpy(a.copy()) for a in arrays)
    return (j, t) if len(arrays) > 1 else (j[0], t[0])


def _same(jres, tres, path="res", requires_grad=True):
    """Same structure (container types included), shapes, values and requires_grad."""
    if isinstance(tres, (tuple, list)):
        assert type(jres) is type(tres), f"{path}: {type(jres)} vs {type(tres)}"
        assert len(jres) == len(tres), path
        for i, (a, b) in enumerate(zip(jres, tres)):
            _same(a, b, f"{path}[{i}]", requires_grad)
        return
    assert isinstance(jres, jtorch.Tensor), f"{path}: {type(jres)}"
    assert tuple(jres.shape) == tuple(tres.shape), f"{path}: {jres.shape} vs {tres.shape}"
    if requires_grad:
        assert jres.requires_grad == tres.requires_grad, path
    np.testing.assert_allclose(jres.detach().numpy(), tres.detach().numpy(), rtol=1e-10,
                               atol=1e-12, err_msg=path)


def _run(name, fn, args, targs, **kwargs):
    """The same call in both libraries; ``fn(module)`` builds the user function."""
    jres = getattr(JF, name)(fn(jtorch), *args, **kwargs)
    tres = getattr(TF, name)(fn(torch), *targs, **kwargs)
    _same(jres, tres)
    return jres, tres


def _same_error(name, fn, args, targs, **kwargs):
    with pytest.raises(Exception) as terr:
        getattr(TF, name)(fn(torch), *targs, **kwargs)
    with pytest.raises(type(terr.value)) as jerr:
        getattr(JF, name)(fn(jtorch), *args, **kwargs)
    assert str(jerr.value) == str(terr.value)


def exp_sum(m):
    return lambda x: (x.exp() * x).sum()


def two_in_three_out(m):
    return lambda x, y: (x * y, (y.exp() * x).sum(), y.sin())


def two_in_scalar(m):
    return lambda x, y: (x.exp() * y * y).sum()


def elementwise(m):
    return lambda x: x.exp() * x


# -- jacobian --------------------------------------------------------------------------------

@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("vectorize", [False, True])
def test_jacobian(create_graph, vectorize):
    kw = dict(create_graph=create_graph, vectorize=vectorize)
    _run("jacobian", exp_sum, (_both(_A)[0],), (_both(_A)[1],), **kw)
    _run("jacobian", elementwise, (_both(_B)[0],), (_both(_B)[1],), **kw)
    j, t = _both(_A, _B)
    _run("jacobian", two_in_three_out, (j,), (t,), **kw)
    _run("jacobian", lambda m: lambda x: (x * 2, x.sum()), (j[0],), (t[0],), **kw)
    _run("jacobian", lambda m: lambda x, y: x * y, (j,), (t,), **kw)


def test_jacobian_forward_mode():
    j, t = _both(_A, _B)
    kw = dict(vectorize=True, strategy="forward-mode")
    _run("jacobian", two_in_three_out, (j,), (t,), **kw)  # nested lists, as torch
    _run("jacobian", lambda m: lambda x: (x * 2, x.sum()), (j[0],), (t[0],), **kw)
    _run("jacobian", elementwise, (j[1],), (t[1],), **kw)


def test_jacobian_of_independent_input_is_zero():
    j, t = _both(_A, _B)
    jres, _ = _run("jacobian", lambda m: lambda x, y: x.exp(), (j,), (t,))
    assert not jres[1].detach().numpy().any()
    jres, _ = _run("jacobian", lambda m: lambda x, y: x.exp(), (j,), (t,), vectorize=True)
    assert not jres[1].detach().numpy().any()


def test_jacobian_create_graph_is_differentiable():
    ja, ta = _both(_A)
    ja.requires_grad_()
    ta.requires_grad_()
    jj = JF.jacobian(exp_sum(jtorch), ja, create_graph=True)
    tj = TF.jacobian(exp_sum(torch), ta, create_graph=True)
    (jg,) = jtorch.autograd.grad((jj * jj).sum(), ja)
    (tg,) = torch.autograd.grad((tj * tj).sum(), ta)
    np.testing.assert_allclose(jg.numpy(), tg.numpy(), rtol=1e-10)


# -- hessian ---------------------------------------------------------------------------------

@pytest.mark.parametrize("create_graph", [False, True])
def test_hessian(create_graph):
    _run("hessian", exp_sum, (_both(_A)[0],), (_both(_A)[1],), create_graph=create_graph)
    j, t = _both(_A, _B)
    _run("hessian", two_in_scalar, (j,), (t,), create_graph=create_graph)


def test_hessian_vectorized_and_forward_mode():
    j, t = _both(_A, _B)
    _run("hessian", two_in_scalar, (j,), (t,), vectorize=True)
    # torch's forward-mode hessian leaves requires_grad set; jtorch's does not
    kw = dict(vectorize=True, outer_jacobian_strategy="forward-mode")
    _same(JF.hessian(two_in_scalar(jtorch), j, **kw), TF.hessian(two_in_scalar(torch), t, **kw),
          requires_grad=False)


# -- vjp / jvp / vhp / hvp -------------------------------------------------------------------

@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp(create_graph):
    ja, ta = _both(_A)
    _run("vjp", exp_sum, (ja,), (ta,), create_graph=create_graph)
    _run("vjp", elementwise, (ja, ja * 0.5), (ta, ta * 0.5), create_graph=create_graph)
    j, t = _both(_A, _B)
    jv = (j[1], jtorch.tensor(0.3, dtype=jtorch.float64), j[1])
    tv = (t[1], torch.tensor(0.3, dtype=torch.float64), t[1])
    _run("vjp", two_in_three_out, (j, jv), (t, tv), create_graph=create_graph)


@pytest.mark.parametrize("create_graph", [False, True])
def test_jvp(create_graph):
    ja, ta = _both(_A)
    _run("jvp", exp_sum, (ja, ja), (ta, ta), create_graph=create_graph)
    _run("jvp", elementwise, (ja, ja * 0.5), (ta, ta * 0.5), create_graph=create_graph)
    j, t = _both(_A, _B)
    _run("jvp", two_in_three_out, (j, j), (t, t), create_graph=create_graph)
    js, ts = _both(_S)
    _run("jvp", elementwise, (js,), (ts,), create_graph=create_graph)  # v may be None


@pytest.mark.parametrize("name", ["vhp", "hvp"])
@pytest.mark.parametrize("create_graph", [False, True])
def test_vhp_hvp(name, create_graph):
    ja, ta = _both(_A)
    _run(name, exp_sum, (ja, ja * 0.5), (ta, ta * 0.5), create_graph=create_graph)
    j, t = _both(_A, _B)
    _run(name, two_in_scalar, (j, j), (t, t), create_graph=create_graph)
    js, ts = _both(_S)
    _run(name, lambda m: lambda x: (x.exp() * x).sum(), (js,), (ts,), create_graph=create_graph)


def test_inputs_requiring_grad_keep_their_graph_with_create_graph():
    ja, ta = _both(_A)
    ja.requires_grad_()
    ta.requires_grad_()
    for name, jv, tv in (("vjp", jtorch.tensor(0.5, dtype=jtorch.float64),
                          torch.tensor(0.5, dtype=torch.float64)),
                         ("vhp", ja * 0.5, ta * 0.5), ("hvp", ja * 0.5, ta * 0.5)):
        jout, jres = getattr(JF, name)(exp_sum(jtorch), ja, jv, create_graph=True)
        tout, tres = getattr(TF, name)(exp_sum(torch), ta, tv, create_graph=True)
        (jg,) = jtorch.autograd.grad(jres.sum() + jout, ja)
        (tg,) = torch.autograd.grad(tres.sum() + tout, ta)
        np.testing.assert_allclose(jg.numpy(), tg.numpy(), rtol=1e-10)
    # without create_graph the results are cut from the caller's graph
    _, jres = JF.vjp(exp_sum(jtorch), ja)
    assert not jres.requires_grad


# -- errors ----------------------------------------------------------------------------------

def test_v_required_for_non_scalar():
    ja, ta = _both(_A)
    _same_error("vjp", elementwise, (ja,), (ta,))
    for name in ("jvp", "vhp", "hvp"):
        _same_error(name, exp_sum, (ja,), (ta,))


def test_v_of_wrong_size_or_length():
    ja, ta = _both(_A)
    _same_error("vjp", elementwise, (ja, ja[:2]), (ta, ta[:2]))
    j, t = _both(_A, _B)
    _same_error("jvp", two_in_three_out, (j, j[0]), (t, t[0]))
    _same_error("jvp", two_in_three_out, (j, (j[0], j[0])), (t, (t[0], t[0])))
    _same_error("vhp", exp_sum, (ja, (ja, ja)), (ta, (ta, ta)))


def test_strict_mode_errors():
    j, t = _both(_A, _B)
    indep = lambda m: lambda x, y: x.exp().sum()  # noqa: E731
    _same_error("vjp", indep, (j,), (t,), strict=True)
    _same_error("jacobian", indep, (j,), (t,), strict=True)
    _same_error("jvp", indep, (j, j), (t, t), strict=True)
    _same_error("vhp", indep, (j, j), (t, t), strict=True)
    _same_error("jacobian", lambda m: lambda x: x.detach() * 2, (j[0],), (t[0],), strict=True)
    _same_error("hessian", lambda m: lambda x: (x * 2).sum(), (j[0],), (t[0],), strict=True)
    _same_error("jacobian", elementwise, (j[0],), (t[0],), strict=True, vectorize=True)
    _same_error("jacobian", elementwise, (j[0],), (t[0],), strict=True, vectorize=True,
                strategy="forward-mode")
    with pytest.raises(RuntimeError, match="The output of the user-provided function is "
                                           "independent of input 1. This is not allowed in "
                                           "strict mode."):
        JF.vjp(indep(jtorch), j, strict=True)


def test_argument_errors():
    ja, ta = _both(_A)
    _same_error("jacobian", elementwise, ((ja, 2.0),), ((ta, 2.0),))
    _same_error("jacobian", elementwise, ([ja],), ([ta],))
    _same_error("vjp", lambda m: lambda x: [x.sum()], (ja,), (ta,))
    _same_error("hessian", elementwise, (ja,), (ta,))
    _same_error("hessian", lambda m: lambda x: (x.sum(), x.sum()), (ja,), (ta,))
    _same_error("hvp", lambda m: lambda x: (x.sum(),), (ja, ja), (ta, ta))
    _same_error("jacobian", elementwise, (ja,), (ta,), strategy="sideways")
    _same_error("jacobian", elementwise, (ja,), (ta,), strategy="forward-mode")
    _same_error("jacobian", elementwise, (ja,), (ta,), strategy="forward-mode", create_graph=True)


def test_differentiating_through_stacked_rows():
    """A create_graph Jacobian with several rows is a stack of them: its gradient needs the
    rule of cat (skipped while that rule is missing)."""
    ja, ta = _both(_A)
    ja.requires_grad_()
    ta.requires_grad_()
    for vectorize in (False, True):
        jj = JF.jacobian(lambda x: x * x * x, ja, create_graph=True, vectorize=vectorize)
        tj = TF.jacobian(lambda x: x * x * x, ta, create_graph=True, vectorize=vectorize)
        try:
            (jg,) = jtorch.autograd.grad((jj * jj).sum(), ja)
        except RuntimeError as e:
            if "derivative for aten::cat is not implemented" in str(e):
                pytest.skip("cat has no gradient rule yet")
            raise
        (tg,) = torch.autograd.grad((tj * tj).sum(), ta)
        np.testing.assert_allclose(jg.numpy(), tg.numpy(), rtol=1e-10)
