"""Constraints, transforms and the constraint registry against torch's: checks, forward,
inverse, log|det J|, shapes, signs, caching, equality and reprs; biject_to / transform_to;
TransformedDistribution built from them."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from dist_cases import spd, tril

import jtorch
import jtorch.distributions as D


def _both(fn):
    return fn(jtorch), fn(torch)


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _close(j, t, rtol=1e-10, atol=1e-12):
    a, b = _np(j), _np(t)
    assert a.shape == b.shape, (a.shape, b.shape)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


# -- constraints -----------------------------------------------------------------------------

_VALS = np.array([[-1.0, 0.0, 0.5, 1.0], [2.0, math.nan, 3.0, -0.0], [0.2, 0.3, 0.1, 0.4]])
CONSTRAINTS = [
    lambda C: C.real, lambda C: C.positive, lambda C: C.nonnegative, lambda C: C.boolean,
    lambda C: C.unit_interval, lambda C: C.nonnegative_integer, lambda C: C.positive_integer,
    lambda C: C.simplex, lambda C: C.one_hot, lambda C: C.real_vector,
    lambda C: C.greater_than(0.5), lambda C: C.greater_than_eq(0.5), lambda C: C.less_than(1.0),
    lambda C: C.interval(-1.0, 1.0), lambda C: C.half_open_interval(-1.0, 1.0),
    lambda C: C.integer_interval(0, 2), lambda C: C.independent(C.positive, 1),
    lambda C: C.multinomial(3), lambda C: C.cat([C.positive, C.real], dim=-1, lengths=[2, 2]),
    lambda C: C.stack([C.positive, C.real, C.unit_interval], dim=0),
]


@pytest.mark.parametrize("make", CONSTRAINTS)
def test_constraint_checks_match_torch(make):
    j, t = make(D.constraints), make(torch.distributions.constraints)
    assert repr(j) == repr(t)
    assert j.event_dim == t.event_dim and j.is_discrete == t.is_discrete
    _close(j.check(jtorch.from_numpy(_VALS.copy())), t.check(torch.from_numpy(_VALS.copy())))


@pytest.mark.parametrize("name", ["lower_triangular", "lower_cholesky", "corr_cholesky",
                                  "square", "symmetric", "positive_semidefinite",
                                  "positive_definite"])
def test_matrix_constraints_match_torch(name):
    rng = np.random.default_rng(0)
    mats = np.stack([spd(n=3), tril(n=3), -spd(n=3), rng.standard_normal((3, 3)), np.eye(3)])
    j = getattr(D.constraints, name).check(jtorch.from_numpy(mats))
    t = getattr(torch.distributions.constraints, name).check(torch.from_numpy(mats))
    _close(j, t)


def test_dependent_constraints():
    C = D.constraints
    assert C.is_dependent(C.dependent) and not C.is_dependent(C.real)
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        C.dependent.check(jtorch.ones(1))
    with pytest.raises(NotImplementedError, match=".event_dim cannot be determined statically"):
        _ = C.dependent.event_dim
    d = C.dependent(is_discrete=True, event_dim=1)
    assert d.is_discrete and d.event_dim == 1
    assert isinstance(D.Uniform.support, C._DependentProperty)
    assert C.is_dependent(D.Uniform.support) and D.Uniform.support.event_dim == 0
    u = D.Uniform(0.0, 2.0)
    assert repr(u.support) == repr(torch.distributions.Uniform(0.0, 2.0).support)


# -- transforms ------------------------------------------------------------------------------

def _x(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# (builder, input array): inputs lie in each transform's domain
TRANSFORMS = [
    (lambda T: T.ExpTransform(), _x((3, 4))),
    (lambda T: T.SigmoidTransform(), _x((3, 4))),
    (lambda T: T.TanhTransform(), _x((3, 4))),
    (lambda T: T.SoftplusTransform(), _x((3, 4))),
    (lambda T: T.AbsTransform(), _x((3, 4))),
    (lambda T: T.AffineTransform(0.5, -2.0), _x((3, 4))),
    (lambda T: T.AffineTransform(torch_or_j(T).from_numpy(_x((4,), 1)),
                                 torch_or_j(T).from_numpy(_x((4,), 2)), event_dim=1), _x((3, 4))),
    (lambda T: T.PowerTransform(torch_or_j(T).tensor(2.5, dtype=torch_or_j(T).float64)),
     np.abs(_x((3, 4))) + 0.1),
    (lambda T: T.SoftmaxTransform(), _x((3, 4))),
    (lambda T: T.StickBreakingTransform(), _x((3, 4))),
    (lambda T: T.LowerCholeskyTransform(), _x((2, 3, 3))),
    (lambda T: T.PositiveDefiniteTransform(), _x((2, 3, 3))),
    (lambda T: T.CorrCholeskyTransform(), _x((2, 6))),
    (lambda T: T.ReshapeTransform((4,), (2, 2)), _x((3, 4))),
    (lambda T: T.ComposeTransform([T.AffineTransform(0.3, 2.0), T.ExpTransform()]), _x((3, 4))),
    (lambda T: T.ComposeTransform([T.StickBreakingTransform(), T.AffineTransform(1.0, 2.0)]),
     _x((3, 4))),
    (lambda T: T.IndependentTransform(T.ExpTransform(), 1), _x((3, 4))),
    (lambda T: T.ExpTransform().inv, np.abs(_x((3, 4))) + 0.1),
    (lambda T: T.CatTransform([T.ExpTransform(), T.AffineTransform(0.0, 3.0)], dim=-1,
                              lengths=[1, 3]), _x((3, 4))),
    (lambda T: T.StackTransform([T.ExpTransform(), T.TanhTransform(), T.SigmoidTransform()],
                                dim=0), _x((3, 4))),
    (lambda T: T.identity_transform, _x((3, 4))),
]


def torch_or_j(T):
    return jtorch if T is D.transforms else torch


@pytest.mark.parametrize("case", TRANSFORMS, ids=range(len(TRANSFORMS)))
def test_transform_matches_torch(case):
    make, x = case
    jt, tt = make(D.transforms), make(torch.distributions.transforms)
    assert repr(jt) == repr(tt)
    assert jt.bijective == tt.bijective
    assert repr(jt.domain) == repr(tt.domain) and repr(jt.codomain) == repr(tt.codomain)
    xj, xt = jtorch.from_numpy(x.copy()), torch.from_numpy(x.copy())
    yj, yt = jt(xj), tt(xt)
    _close(yj, yt)
    assert tuple(jt.forward_shape(xj.shape)) == tuple(tt.forward_shape(xt.shape))
    assert tuple(jt.inverse_shape(yj.shape)) == tuple(tt.inverse_shape(yt.shape))
    yj2, yt2 = jtorch.from_numpy(yt.numpy().copy()), torch.from_numpy(yt.numpy().copy())
    _close(jt.inv(yj2), tt.inv(yt2), rtol=1e-9, atol=1e-10)
    try:
        want = tt.log_abs_det_jacobian(xt, yt)
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            jt.log_abs_det_jacobian(xj, yj)
        return
    _close(jt.log_abs_det_jacobian(xj, yj), want)
    try:
        ts = tt.sign
    except NotImplementedError:
        return
    js = jt.sign
    assert _np(js).tolist() == _np(ts).tolist()


def test_transform_gradients_match_torch():
    x = _x((3, 4))
    grads = []
    for lib, T in ((jtorch, D.transforms), (torch, torch.distributions.transforms)):
        xs = lib.from_numpy(x.copy()).requires_grad_()
        out = 0
        for t in (T.StickBreakingTransform(), T.TanhTransform(), T.SigmoidTransform(),
                  T.CorrCholeskyTransform()):
            inp = xs[..., :3] if isinstance(t, T.CorrCholeskyTransform) else xs
            y = t(inp)
            out = out + y.sum() + t.log_abs_det_jacobian(inp, y).sum()
        grads.append(lib.autograd.grad(out, xs)[0].numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-9)


def test_transform_cache_equality_and_errors():
    T = D.transforms
    t = T.TanhTransform(cache_size=1)
    x = jtorch.tensor([30.0])  # tanh rounds to 1: atanh would be inf
    y = t(x)
    assert t.inv(y) is x and t(x) is y
    assert T.ExpTransform() == T.ExpTransform() and T.ExpTransform() != T.TanhTransform()
    assert T.ExpTransform().inv == T.ExpTransform().inv
    assert T.AffineTransform(1.0, 2.0) == T.AffineTransform(1.0, 2.0)
    assert T.AffineTransform(jtorch.tensor(1.0), 2.0) != T.AffineTransform(1.0, 3.0)
    assert T.ExpTransform().with_cache(1)._cache_size == 1
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)
    with pytest.raises(TypeError, match="unhashable"):
        hash(T.ExpTransform())
    c = T.ComposeTransform([T.ExpTransform(), T.AffineTransform(0.0, 2.0)])
    assert c.inv.inv is c and c.with_cache(1).parts[0]._cache_size == 1
    with pytest.raises(ValueError, match="in_shape, out_shape have different numbers"):
        T.ReshapeTransform((3,), (2, 2))
    with pytest.raises(ValueError, match="Too few dimensions on input"):
        T.StickBreakingTransform().forward_shape(())


# -- constraint registry --------------------------------------------------------------------

REGISTRY_CASES = [
    lambda C: C.real, lambda C: C.positive, lambda C: C.nonnegative, lambda C: C.unit_interval,
    lambda C: C.greater_than(2.0), lambda C: C.greater_than_eq(-1.0), lambda C: C.less_than(3.0),
    lambda C: C.interval(-2.0, 5.0), lambda C: C.half_open_interval(0.0, 1.0),
    lambda C: C.simplex, lambda C: C.independent(C.positive, 1), lambda C: C.lower_cholesky,
    lambda C: C.positive_definite, lambda C: C.corr_cholesky,
    lambda C: C.cat([C.positive, C.real], dim=-1, lengths=[2, 4]),
    lambda C: C.stack([C.positive, C.real], dim=-1),
]


@pytest.mark.parametrize("make", REGISTRY_CASES)
@pytest.mark.parametrize("which", ["biject_to", "transform_to"])
def test_constraint_registry_matches_torch(make, which):
    jc, tc = make(D.constraints), make(torch.distributions.constraints)
    try:
        tt = getattr(torch.distributions, which)(tc)
    except NotImplementedError as e:
        with pytest.raises(NotImplementedError, match=str(e)):
            getattr(D, which)(jc)
        return
    jt = getattr(D, which)(jc)
    assert repr(jt) == repr(tt)
    shape = (2, 3, 3) if jc.event_dim == 2 else (2, 6)
    if isinstance(jt, D.transforms.CorrCholeskyTransform):
        shape = (2, 3)
    elif isinstance(jt, D.transforms.StackTransform):
        shape = (3, 2)
    x = _x(shape)
    yj, yt = jt(jtorch.from_numpy(x.copy())), tt(torch.from_numpy(x.copy()))
    _close(yj, yt)
    assert bool(jc.check(yj).all())


def test_registry_register_and_errors():
    reg = D.constraint_registry.ConstraintRegistry()
    with pytest.raises(NotImplementedError, match="Cannot transform _Real constraints"):
        reg(D.constraints.real)
    reg.register(D.constraints.real, lambda c: D.transforms.ExpTransform())
    assert isinstance(reg(D.constraints.real), D.transforms.ExpTransform)
    with pytest.raises(TypeError, match="Expected constraint to be either a Constraint"):
        reg.register(3, lambda c: None)


# -- TransformedDistribution -------------------------------------------------------------------

def test_transformed_distribution_matches_torch():
    loc, scale = _x((2, 3)), np.abs(_x((3,), 1)) + 0.3

    def make(lib):
        T = lib.distributions.transforms
        base = lib.distributions.Normal(lib.from_numpy(loc.copy()), lib.from_numpy(scale.copy()))
        return lib.distributions.TransformedDistribution(
            base, [T.AffineTransform(0.5, -2.0), T.ExpTransform(), T.PowerTransform(
                lib.tensor(0.5, dtype=lib.float64))])

    j, t = make(jtorch), make(torch)
    assert tuple(j.batch_shape) == tuple(t.batch_shape) and repr(j.support) == repr(t.support)
    torch.manual_seed(0)
    x = t.sample((4,))
    _close(j.log_prob(jtorch.from_numpy(x.numpy().copy())), t.log_prob(x))
    _close(j.cdf(jtorch.from_numpy(x.numpy().copy())), t.cdf(x))
    u = torch.rand(3, 2, 3, dtype=torch.float64)
    _close(j.icdf(jtorch.from_numpy(u.numpy().copy())), t.icdf(u))
    assert tuple(j.expand((5, 2, 3)).batch_shape) == (5, 2, 3)
    # a vector-valued transform turns batch dims into event dims
    base_j = D.Normal(jtorch.zeros(2, 3, dtype=jtorch.float64), 1.0)
    base_t = torch.distributions.Normal(torch.zeros(2, 3, dtype=torch.float64), 1.0)
    sj = D.TransformedDistribution(base_j, D.transforms.StickBreakingTransform())
    st = torch.distributions.TransformedDistribution(base_t,
                                                     torch.distributions.StickBreakingTransform())
    assert tuple(sj.batch_shape) == tuple(st.batch_shape)
    assert tuple(sj.event_shape) == tuple(st.event_shape)
    y = st.sample((2,))
    _close(sj.log_prob(jtorch.from_numpy(y.numpy().copy())), st.log_prob(y))
    with pytest.raises(ValueError, match="transforms must be a Transform or list"):
        D.TransformedDistribution(base_j, 3)
