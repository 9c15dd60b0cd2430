"""Acceptance programs: small torch-style programs run once with ``jtorch`` and once with
``torch`` (the same function, the module passed in), comparing values, dtypes, shapes,
strides and exception types. Sizes and dtype/shape combinations are kept few, so the set
compiles few kernels."""

from __future__ import annotations

import importlib
import math

import pytest

import jtorch

from helpers import same_call


# Tolerances for float results, per dtype ("float": Python floats); other dtypes compare exactly.
_TOL = {"float16": 1e-3, "float32": 1e-5, "complex64": 1e-5, "float64": 1e-10, "complex128": 1e-10}
_RTOL = {**_TOL, "float": 1e-6}


def same(fn) -> None:
    """Run ``fn(module)`` under both libraries: the same results (with the strides of every
    result that has more than one element), or the same exception."""
    same_call(fn, rtol=_RTOL, atol=_TOL, strides="numel>1")


def F(mod):
    return importlib.import_module(mod.__name__ + ".nn.functional")


# --- tensor core: Size, shapes, conversions -------------------------------------------------


def test_size_arithmetic_keeps_size():
    same(lambda t: (t.Size([2, 3]) * 2, 2 * t.Size([2]), (1,) + t.Size([2]), t.Size([2, 3])[::-1],
                    t.Size([2]) + t.Size([3]), repr(t.zeros(2, 3).shape[1:] * 2)))
    same(lambda t: t.Size([2]) + [3])
    same(lambda t: t.broadcast_shapes((2, 1), (3,), (4, 1, 1)))


@pytest.mark.parametrize("shapes", [((2, 3), (3, 2)), ((2, 3), (4,)), ((5, 1, 3), (2, 4))])
def test_broadcast_error_names_last_mismatching_dim(shapes):
    same(lambda t: t.ones(*shapes[0]) + t.ones(*shapes[1]))


def test_masked_fill_broadcast_error():
    same(lambda t: t.ones(3).masked_fill(t.tensor([True, False]), 0.0))


# --- nn.functional: softmax family and compositions -----------------------------------------


def test_functional_softmax_family():
    x = [[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]]
    same(lambda t: (F(t).softmax(t.tensor(x), dim=1), F(t).log_softmax(t.tensor(x), -1),
                    F(t).softmax(t.tensor(x), 0), F(t).softmin(t.tensor(x), 1),
                    F(t).softmax(t.tensor(x), dim=1, dtype=t.float64),
                    F(t).log_softmax(t.tensor(x).t(), 1)))
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        same(lambda t: F(t).softmax(t.tensor(x)))
    same(lambda t: F(t).softmax(t.tensor([1, 2]), 0))


def test_functional_shrink_threshold_softsign_glu():
    x = [[-1.0, float("nan"), 0.5, 2.0]]

    def prog(t):
        f, a = F(t), t.tensor(x)
        y = a.clone()
        f.threshold_(y, 0.5, -3)
        z = a.clone()
        r = f.threshold(z, 0.0, 7.0, inplace=True)
        return (f.threshold(a, 0.5, 9), f.threshold(t.tensor([1, 5]), 2, 0.5), y, z, r is z,
                f.hardshrink(a), f.softshrink(a, 0.25), f.tanhshrink(t.tensor([1, 2])),
                f.softsign(t.tensor([-3, 1])), f.glu(t.ones(2, 4), 0), f.rrelu(a), f.relu(a.int()))

    same(prog)
    for bad in (lambda t: F(t).hardshrink(t.tensor([1, 2])), lambda t: F(t).softshrink(t.ones(2), -1),
                lambda t: F(t).threshold(t.tensor([True]), 0, 1), lambda t: F(t).glu(t.ones(3)),
                lambda t: F(t).dropout(t.ones(2), 1.5)):
        same(bad)


def test_functional_normalize_dropout():
    x = [[3.0, 4.0], [0.0, 0.0]]

    def prog(t):
        f, a, o = F(t), t.tensor(x), t.empty(2, 2)
        return (f.normalize(a), f.normalize(a, dim=0), f.normalize(a, p=1),
                f.normalize(a, p=float("inf"), dim=1), f.normalize(a, out=o) is o, o,
                f.dropout(a, 0.5, training=False) is a, f.dropout(a, 1.0), f.dropout(a, 0.0))

    same(prog)
    jtorch.manual_seed(0)
    y = jtorch.nn.functional.dropout(jtorch.ones(1000), 0.3)
    assert bool(((y == 0) | ((y - 1 / 0.7).abs() < 1e-6)).all()) and 200 < int((y == 0).sum()) < 400


# --- pointwise results take the inputs' memory order (TensorIterator) -----------------------


def test_pointwise_result_layout_follows_inputs():
    def prog(t):
        x = t.arange(6.0).reshape(2, 3).t()
        y = t.arange(24.0).reshape(4, 6)[::2, 1::2]
        p = t.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1)
        e = t.tensor([1.0, 2.0, 3.0]).expand(2, 3)
        return (x + 1, x.exp(), x + x, y.t() * 2, y * 2, p.add(1), x + t.ones(3, 2), t.ones(3, 2) + x,
                e * 2, e.t() + 1, x > 1, t.where(x > 1, x, 0.0), x.float().int(), x.clamp(1, 3),
                (x + 1).reshape(-1), x.sigmoid().neg_())

    same(prog)
    same(lambda t: (t.arange(6.0).reshape(2, 3).t() + 1).view(6))


# --- pointwise functions: logaddexp, xlogy, heaviside, gcd/lcm, addcmul/addcdiv, sinc, ... ----


def test_more_pointwise_functions():
    def prog(t):
        x = t.tensor([1.0, 2.0, 3.0])
        a, c = t.tensor([2.0, -1.0, 0.5]), t.tensor([4.0, 2.0, 8.0])
        i = t.tensor([12, -8, 0])
        y, z = x.clone(), x.clone()
        y.addcmul_(a, c, value=2)
        z.addcdiv_(a, c, value=-1)
        return (t.logaddexp(x, a), x.logaddexp2(c), t.xlogy(2, x), t.xlogy(t.tensor([0.0, 2.0]), 3),
                t.xlogy(i, i), t.heaviside(t.tensor([-1.0, 0.0, 2.0]), t.tensor(0.5)),
                t.gcd(i, t.tensor([18, 4, 0])), i.lcm(t.tensor([5, 6, 7])),
                t.addcmul(x, a, c, value=0.5), x.addcdiv(a, c, value=2), y, z,
                t.addcmul(i, i, i, value=0.5), t.addcdiv(i, x, c),
                t.addcmul(t.tensor([-math.inf]), t.tensor([1e30]), t.tensor([1e30])),
                t.deg2rad(i), x.rad2deg(), t.sinc(t.tensor([0.0, 0.5, 1.5])), t.sinc(i), t.positive(i),
                t.logical_and(i, t.tensor(0)))

    same(prog)
    for bad in (lambda t: t.logaddexp(t.ones(2), 2.0), lambda t: t.logaddexp(t.tensor([1]), t.tensor([1])),
                lambda t: t.heaviside(t.ones(2), 0.5), lambda t: t.heaviside(t.ones(2), t.tensor(1)),
                lambda t: t.gcd(t.ones(2), t.ones(2)), lambda t: t.logical_and(t.ones(2), 1),
                lambda t: t.ones(2).logical_or(1), lambda t: t.addcdiv(t.ones(2), t.tensor([1]), t.tensor([1])),
                lambda t: t.addcmul(t.tensor([True]), t.tensor([True]), t.tensor([True])),
                lambda t: t.positive(t.tensor([True])), lambda t: t.deg2rad(t.tensor([1j]))):
        same(bad)


# --- tensor core: nested-data errors, complex parts, type_as --------------------------------


@pytest.mark.parametrize("data", [[[1], [2, 3]], [[1, 2], [3]], [[[1, 2], [3, 4]], [[1, 2], [3]]],
                                  [[1, 2], 3], [1, [2]], [1, "a"], [[1, "a"]]])
def test_tensor_from_bad_nested_data(data):
    same(lambda t: t.tensor(data))


def test_real_imag_views_conj_type_as():
    def prog(t):
        z = t.tensor([1 + 2j, 3 - 1j, 0.5j])
        r, i = z.real, z.imag
        r[0] = 10.0
        i[1] += 5
        x = t.tensor([[1 + 1j, 2], [3, 4j]]).t()
        f = t.ones(2)
        return (z, r, i, x.real, x.imag, t.real(z), t.imag(z[1:]), f.real is f, z.conj(), f.conj() is f,
                z[1:].imag.storage_offset(), t.tensor([1.5, -2.0]).type_as(t.tensor([1])),
                t.tensor([1]).type_as(t.ones(1, dtype=t.float64)))

    same(prog)
    same(lambda t: t.ones(2).imag)


# --- memory overlap of written-to tensors ---------------------------------------------------


def _overlap_programs():
    def shifted_iadd(t):
        x = t.arange(6.0)
        x[1:] += x[:-1]
        return x

    def shifted_copy(t):
        x = t.arange(6.0)
        x[1:].copy_(x[:-1])
        return x

    def transposed_copy(t):
        x = t.arange(4.0).reshape(2, 2)
        return x.copy_(x.t())

    def out_overlap(t):
        x = t.arange(6.0)
        return t.add(x[:3], 1, out=x[1:4])

    def scalar_view_overlap(t):
        x = t.arange(6.0)
        return x[:3].add_(x[2])

    def expanded_inplace(t):
        return t.zeros(3).expand(2, 3).add_(1)

    def expanded_copy(t):
        return t.zeros(3).expand(2, 3).copy_(t.ones(2, 3))

    def disjoint_and_full(t):
        x = t.arange(6.0)
        x[::2].add_(x[1::2])
        x[:3].add_(x[3:])
        x.add_(x.view(2, 3).view(6))
        return x, t.zeros(3).expand(2, 3).fill_(1), t.arange(4.0).reshape(2, 2).clone().copy_(
            t.arange(4.0).reshape(2, 2))

    return [shifted_iadd, shifted_copy, transposed_copy, out_overlap, scalar_view_overlap,
            expanded_inplace, expanded_copy, disjoint_and_full]


@pytest.mark.parametrize("prog", _overlap_programs(), ids=lambda f: f.__name__)
def test_written_to_tensor_overlap(prog):
    same(prog)


# --- sort keeps the input's layout ----------------------------------------------------------


def test_sort_results_laid_out_like_input():
    def prog(t):
        x = t.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, -1.0]]).t()
        p = t.arange(24.0).reshape(2, 3, 4).permute(2, 0, 1).neg()
        return (x.sort(0), x.sort(1, descending=True), x.half().sort(1), (x > 1).sort(0), x.long().argsort(0),
                t.msort(x), [p.sort(d) for d in range(3)], x.topk(1, 0),
                x.sort(0).indices.reshape(-1))

    same(prog)


# --- more movement ops: rot90, repeat_interleave, diag, unfold, meshgrid, tri indices --------


def _grid(t, *s):
    return t.arange(math.prod(s)).reshape(*s)


def test_rot90_repeat_interleave_diag_unfold():
    def prog(t):
        x = _grid(t, 2, 3)
        return (x.rot90(), x.rot90(2), x.rot90(-1), x.rot90(4), t.rot90(_grid(t, 2, 3, 4), 1, [2, 0]),
                x.repeat_interleave(2), t.repeat_interleave(x, 2, dim=0),
                x.repeat_interleave(t.tensor([1, 2]), dim=0), t.repeat_interleave(t.tensor([2, 0, 1])),
                x.t().repeat_interleave(2, dim=0), t.tensor(5).repeat_interleave(3),
                t.diag(t.tensor([1, 2])), t.diag(t.tensor([1.0, 2.0]), -1), t.diag(_grid(t, 3, 3), 1),
                t.diag(_grid(t, 3, 3).t(), -2), x.unfold(1, 2, 1), x.t().unfold(0, 3, 2), x.ravel(),
                x.t().ravel())

    same(prog)
    for bad in (lambda t: _grid(t, 2, 3).rot90(1, [0, 0]), lambda t: t.arange(3).rot90(),
                lambda t: _grid(t, 2, 3).repeat_interleave(-1),
                lambda t: _grid(t, 2, 3).repeat_interleave(t.tensor([1, 2]), dim=1),
                lambda t: _grid(t, 2, 3).repeat_interleave(t.tensor([1.0, 2.0]), dim=0),
                lambda t: t.diag(t.zeros(2, 2, 2)), lambda t: _grid(t, 2, 3).unfold(1, 4, 1),
                lambda t: _grid(t, 2, 3).unfold(1, 2, 0)):
        same(bad)


def test_meshgrid_and_triangle_indices():
    def prog(t):
        a, b = t.arange(3), t.arange(2)
        return (t.meshgrid(a, b, indexing="ij"), t.meshgrid([a, b], indexing="xy"),
                t.meshgrid(a, b, t.arange(4), indexing="xy"), t.tril_indices(3, 3),
                t.triu_indices(3, 4, 1), t.tril_indices(4, 3, -1), t.tril_indices(3, 3, dtype=t.int32),
                t.triu_indices(0, 3))

    same(prog)
    with pytest.warns(UserWarning, match="indexing argument"):
        jtorch.meshgrid(jtorch.arange(2), jtorch.arange(2))
    same(lambda t: t.meshgrid(t.zeros(2), t.zeros(2, dtype=t.int64), indexing="ij"))
    same(lambda t: t.meshgrid(t.arange(2), indexing="foo"))
    same(lambda t: t.tril_indices(-1, 3))
