"""torch.func's transforms against torch.func on the same float64 NumPy inputs: values,
structures (tuples, lists, dicts, per-output/per-input nesting), requires_grad of the results,
and error types and messages."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.func as TF
from helpers import raises_like, same

import jtorch
import jtorch.func._transforms as JF

_RNG = np.random.default_rng(0)
_A = _RNG.standard_normal(3)
_B = _RNG.standard_normal((2, 3))
_C = _RNG.standard_normal(3)
_TOL = {"rtol": 1e-12, "atol": 1e-12}


def _pair(*arrays):
    """``(jtorch tensors, torch tensors)`` holding copies of the same arrays."""
    j = tuple(jtorch.from_numpy(np.array(a, dtype=np.float64)) for a in arrays)
    t = tuple(torch.from_numpy(np.array(a, dtype=np.float64)) for a in arrays)
    return (j, t) if len(arrays) > 1 else (j[0], t[0])


def _leaves(x) -> list:
    if isinstance(x, (tuple, list)):
        return [y for e in x for y in _leaves(e)]
    if isinstance(x, dict):
        return [y for e in x.values() for y in _leaves(e)]
    return [x]


def _same(j, t, requires_grad: bool = True) -> None:
    """Same structure and values (to rounding), and the same requires_grad on every tensor."""
    same(j, t, **_TOL)
    if requires_grad:
        for a, b in zip(_leaves(j), _leaves(t)):
            if isinstance(b, torch.Tensor):
                assert a.requires_grad == b.requires_grad, (a, b)


def _both(make, *arrays):
    """``make(module)`` applied to jtorch's and torch's copies of ``arrays``: the results."""
    js, ts = _pair(*arrays)
    js, ts = (js, ts) if len(arrays) > 1 else ((js,), (ts,))
    return make(JF, jtorch)(*js), make(TF, torch)(*ts)


def _f(x):
    return (x.sin() * x).sum()


def _g(x, y):
    return (x.exp() * y).sum() + (x * x).sum()


# -- grad / grad_and_value -------------------------------------------------------------------

@pytest.mark.parametrize("argnums", [0, 1, -1, (0,), (0, 1), (1, 0)])
def test_grad_argnums(argnums):
    _same(*_both(lambda F, T: F.grad(_g, argnums=argnums), _A, _C))


def test_grad_and_value_argnums():
    _same(*_both(lambda F, T: F.grad_and_value(_g, argnums=(0, 1)), _A, _C))
    _same(*_both(lambda F, T: F.grad_and_value(_f), _A))


def test_grad_has_aux():
    def f(x, y):
        return (x * y).sum(), {"prod": x * y, "list": [x.cos(), (y, y * 2)]}

    _same(*_both(lambda F, T: F.grad(f, argnums=(0, 1), has_aux=True), _A, _C))
    _same(*_both(lambda F, T: F.grad_and_value(f, has_aux=True), _A, _C))


def test_grad_pytree_inputs():
    def f(params, x):
        return (params["w"] * x).sum() * params["b"][0].sum() + params["b"][1].exp().sum()

    def make(F, T):
        return lambda w, b0, b1, x: F.grad(f)({"w": w, "b": (b0, b1)}, x)

    _same(*_both(make, _A, _C, _B, _C))

    def make_list(F, T):
        return lambda a, b: F.grad(lambda xs: (xs[0] * xs[1]).sum())([a, b])

    _same(*_both(make_list, _A, _C))


def test_grad_kwargs_and_unused_input():
    def f(x, y, scale=1.0):
        return (x * scale).sum()

    _same(*_both(lambda F, T: lambda x, y: F.grad(f, argnums=(0, 1))(x, y, scale=3.0), _A, _C))


def test_grad_of_grad():
    def make(F, T):
        return F.grad(lambda x: F.grad(_f)(x).sum())

    _same(*_both(make, _A))

    def third(F, T):
        return F.grad(F.grad(F.grad(lambda x: x.sin() * x * x)))

    _same(*_both(third, 0.7))


def test_grad_of_grad_argnums_and_closure():
    def make(F, T):
        # the inner gradient is taken at y with x held: x must not be confused with y
        def inner(x):
            return F.grad(lambda y: (x * y.sin()).sum())(x)

        return F.grad(lambda x, w: (inner(x) * w).sum(), argnums=(0, 1))

    _same(*_both(make, _A, _C))


def test_grad_requires_grad_of_results():
    """Results require grad only where they reach tensors requiring grad outside."""
    jx, tx = _pair(_A)
    jw, tw = _pair(_C)
    jw.requires_grad_()
    tw.requires_grad_()
    _same(JF.grad(lambda x: (x * jw).sum())(jx), TF.grad(lambda x: (x * tw).sum())(tx))
    _same(JF.grad(lambda x: (x * x).sum())(jx), TF.grad(lambda x: (x * x).sum())(tx))
    jp, tp = _pair(_A)
    jp.requires_grad_()
    tp.requires_grad_()
    _same(JF.grad_and_value(_f)(jp), TF.grad_and_value(_f)(tp))
    with jtorch.no_grad(), torch.no_grad():
        _same(JF.grad_and_value(_f)(jp), TF.grad_and_value(_f)(tp))


def test_gradient_penalty_backward():
    """The gradient is differentiable with respect to an outside parameter."""
    jp, tp = _pair(_A)
    jp.requires_grad_()
    tp.requires_grad_()
    (JF.grad(_f)(jp) ** 2).sum().backward()
    (TF.grad(_f)(tp) ** 2).sum().backward()
    same(jp.grad, tp.grad, **_TOL)


# -- vjp -------------------------------------------------------------------------------------

def test_vjp_single_and_multiple_primals():
    jx, tx = _pair(_A)
    jv, tv = _pair(_C)
    jo, jfn = JF.vjp(lambda x: x.sin() * x, jx)
    to, tfn = TF.vjp(lambda x: x.sin() * x, tx)
    _same(jo, to)
    _same(jfn(jv), tfn(tv))
    _same(jfn(jv * 2), tfn(tv * 2))  # called again: the graph is kept
    (jx, jy), (tx, ty) = _pair(_A, _C)
    jo, jfn = JF.vjp(lambda x, y: (x * y, x.exp()), jx, jy)
    to, tfn = TF.vjp(lambda x, y: (x * y, x.exp()), tx, ty)
    _same(jo, to)
    _same(jfn((jv, jv.cos())), tfn((tv, tv.cos())))


def test_vjp_pytrees_and_aux():
    def f(d):
        return {"a": d["x"] * d["y"][0], "b": [d["y"][1].sum()]}, d["x"].cos()

    (jx, jy0, jy1), (tx, ty0, ty1) = _pair(_A, _C, _B)
    jo, jfn, jaux = JF.vjp(f, {"x": jx, "y": (jy0, jy1)}, has_aux=True)
    to, tfn, taux = TF.vjp(f, {"x": tx, "y": (ty0, ty1)}, has_aux=True)
    _same(jo, to)
    _same(jaux, taux)
    jv, tv = _pair(_B[0])
    _same(jfn({"a": jv, "b": [jv.sum()]}), tfn({"a": tv, "b": [tv.sum()]}))


def test_vjp_fn_is_differentiable_in_cotangents():
    def make(F, T):
        def h(x, v):
            _, fn = F.vjp(lambda t: t.sin() * t, x)
            return (fn(v)[0] ** 2).sum()

        return F.grad(h, argnums=(0, 1))

    _same(*_both(make, _A, _C))


# -- jvp -------------------------------------------------------------------------------------

def test_jvp():
    (jx, jy, jv, jw), (tx, ty, tv, tw) = _pair(_A, _C, _C, _A)
    _same(JF.jvp(lambda x: x.sin() * x, (jx,), (jv,)), TF.jvp(lambda x: x.sin() * x, (tx,), (tv,)))
    _same(JF.jvp(lambda x, y: (x * y, (x.exp(), y.sum())), (jx, jy), (jv, jw)),
          TF.jvp(lambda x, y: (x * y, (x.exp(), y.sum())), (tx, ty), (tv, tw)))


def test_jvp_pytree_aux_and_independent_output():
    def f(d, y):
        return {"o": d["a"] * y, "c": y * 0 + 1}, d["a"].cos()

    (jx, jy, jv, jw), (tx, ty, tv, tw) = _pair(_A, _C, _C, _A)
    jres = JF.jvp(f, ({"a": jx}, jy), ({"a": jv}, jw), has_aux=True)
    tres = TF.jvp(f, ({"a": tx}, ty), ({"a": tv}, tw), has_aux=True)
    _same(jres, tres)
    _same(JF.jvp(lambda x: jtorch.ones(2), (jx,), (jv,)),
          TF.jvp(lambda x: torch.ones(2), (tx,), (tv,)), requires_grad=False)


def test_jvp_of_grad():
    """Forward-over-reverse: a Hessian-vector product."""
    (jx, jv), (tx, tv) = _pair(_A, _C)
    _same(JF.jvp(JF.grad(_f), (jx,), (jv,)), TF.jvp(TF.grad(_f), (tx,), (tv,)))


# -- jacobians -------------------------------------------------------------------------------

@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1,)])
def test_jacobian_argnums(jac, argnums):
    def f(x, y):
        return x.sin() * y.sum() + y[0] * x

    _same(*_both(lambda F, T: getattr(F, jac)(f, argnums=argnums), _A, _C))


@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobian_multiple_outputs_and_shapes(jac):
    def f(x, m):
        return (x * m).sum(), (m.exp() * x, x[0])

    _same(*_both(lambda F, T: getattr(F, jac)(f, argnums=(0, 1)), _A, _B))
    _same(*_both(lambda F, T: getattr(F, jac)(lambda x: {"s": x.sum(), "v": x * x}), _A))
    _same(*_both(lambda F, T: getattr(F, jac)(lambda m: m.t() @ m), _B))
    _same(*_both(lambda F, T: getattr(F, jac)(lambda s: s * s * _pair(_A)[0 if F is JF else 1]),
                 0.5))


@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobian_aux_and_pytree_input(jac):
    def f(d):
        return d["x"] * d["y"].sum(), {"norm": d["x"].norm()}

    def make(F, T):
        return lambda x, y: getattr(F, jac)(f, has_aux=True)({"x": x, "y": y})

    _same(*_both(make, _A, _C))


@pytest.mark.parametrize("jac", ["jacrev", "jacfwd"])
def test_jacobian_empty(jac):
    _same(*_both(lambda F, T: getattr(F, jac)(lambda x: x[:0]), _A))
    _same(*_both(lambda F, T: getattr(F, jac)(lambda x: x.sum()), _A[:0]))


def test_jacrev_chunk_size_and_nesting():
    _same(*_both(lambda F, T: F.jacrev(lambda x: x.sin() * x, chunk_size=1), _A))
    _same(*_both(lambda F, T: F.jacrev(F.jacrev(lambda x: (x ** 3).sum() * x)), _A))
    _same(*_both(lambda F, T: F.jacfwd(F.jacfwd(lambda x: x.sin() * x.sum())), _A))


def test_hessian():
    _same(*_both(lambda F, T: F.hessian(_f), _A))
    _same(*_both(lambda F, T: F.hessian(_g, argnums=(0, 1)), _A, _C))
    _same(*_both(lambda F, T: F.hessian(lambda m: (m.exp() * m).sum()), _B))


# -- errors ----------------------------------------------------------------------------------

def _errors(F, T, x):
    return [
        lambda: F.grad(lambda x: x * 2)(x),
        lambda: F.grad(lambda x: 3.0)(x),
        lambda: F.grad(lambda x: x.sum(), has_aux=True)(x),
        lambda: F.grad(lambda x: (x.sum(), 3), has_aux=True)(x),
        lambda: F.grad(lambda x: x.sum())(T.arange(3)),
        lambda: F.grad(lambda x: x)(3.0),
        lambda: F.grad(lambda x: x.sum(), argnums=2)(x),
        lambda: F.grad(lambda x: x.sum(), argnums=())(x),
        lambda: F.grad(lambda x, y: x.sum(), argnums=(0, 0))(x, x),
        lambda: F.grad(lambda x, y: x.sum(), argnums=[0])(x, x),
        lambda: F.grad(lambda x, y: x.sum(), argnums=(0.0,))(x, x),
        lambda: F.vjp(lambda x: (x > 0).long(), x),
        lambda: F.vjp(lambda x: None, x),
        lambda: F.vjp(lambda x: x, x, has_aux=True),
        lambda: F.vjp(lambda x: (x, 1.0), x),
        lambda: F.vjp(lambda x: (x, x * 2), x)[1](x),
        lambda: F.vjp(lambda x: {"a": x}, x)[1]([x]),
        lambda: F.jvp(lambda x: x, x, x),
        lambda: F.jvp(lambda x: x, (x,), [x]),
        lambda: F.jvp(lambda: 1, (), ()),
        lambda: F.jvp(lambda x: x, (1.0,), (1.0,)),
        lambda: F.jvp(lambda x: x, (x,), (x[:2],)),
        lambda: F.jvp(lambda x: T.ones(2), (x,), (x,), strict=True),
        lambda: F.jvp(lambda x: (x, 1.0), (x,), (x,)),
        lambda: F.jvp(lambda x: x, (x,), (x,), has_aux=True),
        lambda: F.jacrev(lambda x: x, chunk_size=0),
        lambda: F.jacrev(lambda x: x)(x.to(T.complex128)),
        lambda: F.jacfwd(lambda x: x)(x.to(T.complex128)),
        lambda: F.jacrev(lambda x: 2.0)(x),
        lambda: F.jacfwd(lambda x: 2.0)(x),
        lambda: F.jacrev(lambda x: (x > 0).long())(x),
        lambda: F.jacfwd(lambda x: x, randomness="x")(x),
        lambda: F.jacrev(lambda x: (x, 2), has_aux=True)(x),
    ]


@pytest.mark.parametrize("case", range(len(_errors(JF, jtorch, None))))
def test_errors(case):
    jx, tx = _pair(_A)
    raises_like(_errors(JF, jtorch, jx)[case], _errors(TF, torch, tx)[case])


def test_jvp_structure_error_message():
    jx, tx = _pair(_A)
    for args in (lambda x: ((x, {"a": [x, x]}), (x, {"a": (x, x)})),
                 lambda x: ((x,), ({"b": x},))):
        raises_like(lambda args=args: JF.jvp(lambda *a: a[0], *args(jx)),
                    lambda args=args: TF.jvp(lambda *a: a[0], *args(tx)))


# -- modules ---------------------------------------------------------------------------------

def _mlp(nn, seed: int = 0):
    rng = np.random.default_rng(seed)
    m = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    state = {k: rng.standard_normal(tuple(v.shape)) for k, v in m.state_dict().items()}
    m.load_state_dict({k: (jtorch if nn is jtorch.nn else torch).from_numpy(v).float()
                       for k, v in state.items()})
    return m.double()


def _params(lib, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    shapes = {"0.weight": (4, 3), "0.bias": (4,), "2.weight": (2, 4), "2.bias": (2,)}
    return {k: lib.from_numpy(rng.standard_normal(s)) for k, s in shapes.items()}


def test_functional_call_replaces_and_restores():
    jm, tm = _mlp(jtorch.nn), _mlp(torch.nn)
    jx, tx = _pair(_B)
    before = dict(jm.named_parameters())
    _same(JF.functional_call(jm, _params(jtorch, 1), (jx,)),
          TF.functional_call(tm, _params(torch, 1), (tx,)))
    assert all(p is before[k] for k, p in jm.named_parameters())
    # a tuple of dicts, one tensor given, and a single non-tuple arg
    jp, tp = _params(jtorch, 2), _params(torch, 2)
    _same(JF.functional_call(jm, ({"0.weight": jp["0.weight"]}, {"2.bias": jp["2.bias"]}), jx),
          TF.functional_call(tm, ({"0.weight": tp["0.weight"]}, {"2.bias": tp["2.bias"]}), tx))
    _same(jm(jx), tm(tx))


def test_functional_call_restores_after_exception():
    jm = _mlp(jtorch.nn)
    before = dict(jm.named_parameters())
    with pytest.raises(RuntimeError):
        JF.functional_call(jm, _params(jtorch, 1), (jtorch.zeros(2, 5, dtype=jtorch.float64),))
    assert all(p is before[k] for k, p in jm.named_parameters())
    assert list(dict(jm.named_parameters())) == list(before)


def test_functional_call_batchnorm_buffers():
    def model(nn):
        return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).double().eval()

    jm, tm = model(jtorch.nn), model(torch.nn)
    rng = np.random.default_rng(3)
    arrays = {"0.weight": rng.standard_normal((4, 3)), "0.bias": rng.standard_normal(4),
              "1.weight": rng.standard_normal(4), "1.bias": rng.standard_normal(4),
              "1.running_mean": rng.standard_normal(4), "1.running_var": rng.random(4) + 0.5}
    jx, tx = _pair(_B)
    jd = {k: jtorch.from_numpy(v.copy()) for k, v in arrays.items()}
    td = {k: torch.from_numpy(v.copy()) for k, v in arrays.items()}
    _same(JF.functional_call(jm, jd, (jx,)), TF.functional_call(tm, td, (tx,)))
    same(jm.get_buffer("1.running_mean"), tm.get_buffer("1.running_mean"))


def test_functional_call_errors_and_ties():
    jm, tm = _mlp(jtorch.nn), _mlp(torch.nn)
    jx, tx = _pair(_B)
    jp, tp = _params(jtorch, 1), _params(torch, 1)
    raises_like(lambda: JF.functional_call(jm, {"0.weight": jp["0.weight"]}, (jx,), strict=True),
                lambda: TF.functional_call(tm, {"0.weight": tp["0.weight"]}, (tx,), strict=True))
    raises_like(lambda: JF.functional_call(jm, dict(jp, extra=jx), (jx,), strict=True),
                lambda: TF.functional_call(tm, dict(tp, extra=tx), (tx,), strict=True))
    raises_like(lambda: JF.functional_call(jm, (jp, jp), (jx,)),
                lambda: TF.functional_call(tm, (tp, tp), (tx,)))
    raises_like(lambda: JF.functional_call(jm, 3, (jx,)), lambda: TF.functional_call(tm, 3, (tx,)))

    w0 = _RNG.standard_normal((3, 3))

    def tied(nn):
        m = nn.Sequential(nn.Linear(3, 3, bias=False), nn.Linear(3, 3, bias=False)).double()
        lib = jtorch if nn is jtorch.nn else torch
        m[0].weight = nn.Parameter(lib.from_numpy(w0.copy()))
        m[1].weight = m[0].weight
        return m

    jt, tt = tied(jtorch.nn), tied(torch.nn)
    (jw, jw2), (tw, tw2) = _pair(_RNG.standard_normal((3, 3)), _RNG.standard_normal((3, 3)))
    _same(JF.functional_call(jt, {"0.weight": jw}, (jx,)),
          TF.functional_call(tt, {"0.weight": tw}, (tx,)))
    _same(JF.functional_call(jt, {"0.weight": jw}, (jx,), tie_weights=False),
          TF.functional_call(tt, {"0.weight": tw}, (tx,), tie_weights=False))
    raises_like(lambda: JF.functional_call(jt, {"0.weight": jw, "1.weight": jw2}, (jx,)),
                lambda: TF.functional_call(tt, {"0.weight": tw, "1.weight": tw2}, (tx,)))


def test_grad_through_functional_call():
    jm, tm = _mlp(jtorch.nn), _mlp(torch.nn)
    (jx, jy), (tx, ty) = _pair(_B, _RNG.standard_normal((2, 2)))

    def make(F, T):
        m = jm if T is jtorch else tm

        def loss(params, x, y):
            return ((F.functional_call(m, params, (x,)) - y) ** 2).mean()

        return lambda x, y: F.grad_and_value(loss)(_params(T, 4), x, y)

    _same(*_both(make, _B, _RNG.standard_normal((2, 2))))
    del jx, jy, tx, ty


def test_stack_module_state():
    jms = [_mlp(jtorch.nn, s) for s in range(3)]
    tms = [_mlp(torch.nn, s) for s in range(3)]
    jparams, jbufs = JF.stack_module_state(jms)
    tparams, tbufs = TF.stack_module_state(tms)
    _same(jparams, tparams)
    _same(jbufs, tbufs)
    assert all(p.is_leaf and p.requires_grad for p in jparams.values())

    def bn(nn):
        return nn.BatchNorm1d(3).double()

    jb, tb = JF.stack_module_state([bn(jtorch.nn) for _ in range(3)]), \
        TF.stack_module_state([bn(torch.nn) for _ in range(3)])
    _same(jb, tb)
    raises_like(lambda: JF.stack_module_state([]), lambda: TF.stack_module_state([]))
    raises_like(lambda: JF.stack_module_state([jms[0], bn(jtorch.nn)]),
                lambda: TF.stack_module_state([tms[0], bn(torch.nn)]))
    raises_like(lambda: JF.stack_module_state([jms[0], _mlp(jtorch.nn).eval()]),
                lambda: TF.stack_module_state([tms[0], _mlp(torch.nn).eval()]))


def test_per_example_gradients():
    """The acceptance example: a loop over examples of grad(loss) through functional_call
    matches torch's vmap(grad(loss))."""
    rng = np.random.default_rng(5)
    xs, ys = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    jm, tm = _mlp(jtorch.nn), _mlp(torch.nn)
    jparams = {k: v.detach() for k, v in jm.named_parameters()}
    tparams = {k: v.detach() for k, v in tm.named_parameters()}

    def loss(F, m):
        def f(params, x, y):
            out = F.functional_call(m, params, (x.unsqueeze(0),))
            return ((out - y.unsqueeze(0)) ** 2).mean()

        return f

    (jx, jy), (tx, ty) = _pair(xs, ys)
    per_example = [JF.grad(loss(JF, jm))(jparams, jx[i], jy[i]) for i in range(4)]
    jstacked = {k: jtorch.stack([g[k] for g in per_example]) for k in jparams}
    tstacked = TF.vmap(TF.grad(loss(TF, tm)), in_dims=(None, 0, 0))(tparams, tx, ty)
    _same(jstacked, tstacked)
