"""The index family on meta tensors: every public function gives the CPU result's shape,
dtype, strides, storage offset and aliasing (views of the input stay views), raises the CPU
call's errors, and marks value-dependent shapes (boolean masks, nonzero, masked_select) as
data-dependent. Geometry is also compared with torch's own meta device."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch
from jtorch import dispatch
from jtorch.kernels.defs import indexing as D
from test_op_path import check_meta_matches_cpu, to_meta

F = jtorch.nn.functional

pytestmark = pytest.mark.filterwarnings("ignore")


def _x(shape=(3, 4), dtype=jtorch.float32, variant="contiguous", seed=0):
    rng = np.random.default_rng(seed)
    if variant == "noncontig" and len(shape) >= 2:
        a = rng.standard_normal(shape[:-2] + (shape[-1], shape[-2]))
        return jtorch.tensor(a, dtype=dtype).transpose(-1, -2)
    if variant == "view" and len(shape) >= 1:
        a = rng.standard_normal((shape[0] + 1,) + tuple(shape[1:]))
        return jtorch.tensor(a, dtype=dtype)[1:]
    return jtorch.tensor(rng.standard_normal(shape), dtype=dtype)


def _i(values, dtype=jtorch.int64):
    return jtorch.tensor(values, dtype=dtype)


VARIANTS = ("contiguous", "noncontig", "view")

GET = [
    0, -1, (1, 2), slice(1, None), (slice(None), slice(None, None, 2)), (Ellipsis, 1),
    (None, 0), (slice(None), None, 1), (0, True), True, False, (1, None, False),
    slice(5, 2), (slice(None), slice(10, None)),
    lambda: _i([1, 0, 1]), lambda: (slice(None), _i([2, 0])), lambda: _i([[0], [1]]),
    lambda: (_i([0, 1]), _i([3, 0])), lambda: (slice(None), _i([1, 2], jtorch.int32)),
    lambda: (_i([[0, 1]]).t(), slice(None)), lambda: (0, slice(None), None, _i([0, 2])),
    lambda: (None, _i([0, 1]), None, _i([1, 2])), lambda: _i(np.zeros((0,), np.int64)),
    [0, 1], [[0, 1], [1, 2]],
    # errors
    5, (0, 5), (0, 0, 0), lambda: _i([0.0], jtorch.float32), 1.5, "a",
    (slice(None, None, -1),), (slice(None, None, 0),),
    lambda: (_i([[0, 1]]), _i([0, 1, 2])),
]


def _index(spec):
    return spec() if callable(spec) else spec


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("spec", range(len(GET)))
def test_getitem(spec, variant):
    x = _x(variant=variant)
    check_meta_matches_cpu(lambda t: t[_index(GET[spec])], [x])


def test_basic_index_is_a_view_of_the_same_storage_on_meta():
    m = jtorch.empty(3, 4, device="meta")
    for index in (slice(1, None), 0, (slice(None), 1), (None, Ellipsis, slice(None, None, 2))):
        v = m[index]
        assert v.is_meta and v._base is m and v._st is m._st
    t = torch.empty(3, 4, device="meta")
    for index in (slice(1, None), 0, (slice(None), 1), (None, Ellipsis, slice(None, None, 2))):
        a, b = m[index], t[index]
        assert (tuple(a.shape), a.stride(), a.storage_offset()) == \
            (tuple(b.shape), b.stride(), b.storage_offset())


def test_advanced_index_geometry_matches_torch_meta():
    cases = [lambda L: (L.tensor([2, 0]),), lambda L: (slice(None), L.tensor([[0], [1]])),
             lambda L: (L.tensor([0, 1]), slice(None), L.tensor([1, 2])),
             lambda L: (None, L.tensor([0, 1]), None)]
    for case in cases:
        a = jtorch.empty(3, 4, 5, device="meta").transpose(0, 2)[case(jtorch)]
        b = torch.empty(3, 4, 5, device="meta").transpose(0, 2)[case(torch)]
        assert (tuple(a.shape), a.stride()) == (tuple(b.shape), b.stride())


def test_boolean_masks_are_data_dependent():
    m = jtorch.empty(3, 4, device="meta")
    mask = jtorch.empty(3, 4, dtype=jtorch.bool, device="meta")
    for fn in (lambda: m[mask], lambda: m.masked_select(mask), lambda: m.nonzero(),
               lambda: jtorch.argwhere(m), lambda: m.nonzero(as_tuple=True)):
        with pytest.raises(NotImplementedError):
            fn()
    assert D.nonzero_op.data_dependent and D.masked_select_op.data_dependent
    assert not D.index_op.data_dependent and not D.gather_op.data_dependent
    # the argument checks still come first
    with pytest.raises(IndexError, match="The shape of the mask"):
        m[jtorch.empty(2, dtype=jtorch.bool, device="meta")]
    # the CPU path of the same program works, and the sweep helper accepts the meta refusal
    x = _x()
    check_meta_matches_cpu(lambda t, k: t[k], [x, x > 0])
    check_meta_matches_cpu(lambda t, k: t.masked_select(k), [x, x > 0])
    check_meta_matches_cpu(lambda t: t.nonzero(), [x])


def test_cpu_index_tensors_index_meta_tensors_as_in_torch():
    m = jtorch.empty(3, 4, device="meta")
    assert m[jtorch.tensor([0, 2])].shape == (2, 4)
    assert m.index_select(1, jtorch.tensor([0, 2])).shape == (3, 2)
    with pytest.raises(RuntimeError, match="is not on the expected device cpu"):
        jtorch.zeros(3, 4)[jtorch.tensor([0, 2], device="meta")]


SET = [
    (0, 1.5), ((slice(None), 1), lambda: _x((3,), seed=1)), (slice(1, None), lambda: _x((4,))),
    (lambda: _i([0, 2]), 0.0), (lambda: (_i([0, 2]), _i([1, 3])), lambda: _x((2,))),
    (lambda: (slice(None), _i([1, 3])), lambda: _x((3, 1))),
    (0, [1.0, 2.0, 3.0, 4.0]), (True, 2.0), (None, lambda: _x((4,))),
    # errors
    (5, 1.0), (0, lambda: _x((5,))), (lambda: _i([0, 2]), lambda: _x((3,))),
    (lambda: _i([0, 2]), lambda: _x((2, 4), jtorch.float64)),
]


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("case", range(len(SET)))
def test_setitem(case, variant):
    index, value = SET[case]

    def run(t, v):
        t[_index(index)] = v
        return t

    x = _x(variant=variant)
    v = value() if callable(value) else value
    check_meta_matches_cpu(run, [x, v])


def test_setitem_leaf_and_meta_values():
    leaf = jtorch.zeros(3, device="meta", requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        leaf[0] = 1.0
    m = jtorch.zeros(3, device="meta")
    m[0] = jtorch.ones(())  # a CPU value into meta: nothing to copy, as torch
    with pytest.raises(NotImplementedError, match="no data"):
        x = jtorch.zeros(3)
        x[0:2] = jtorch.ones(2, device="meta")


def _calls(v):
    x = _x(variant=v)
    xi = _x(dtype=jtorch.int64, variant=v)
    idx = _i([[0, 1, 2, 0]])
    i2 = _i([[0, 1], [2, 0], [1, 1]])
    src = _x((3, 4), seed=2)
    mask = _x(variant=v) > 0
    return [
        (lambda t, i: t.gather(1, i), [x, i2]),
        (lambda t, i: jtorch.gather(t, 0, i), [x, idx]),
        (lambda t, i: t.gather(3, i), [x, i2]),
        (lambda t, i: t.gather(0, i.float()), [x, i2]),
        (lambda t, i, s: t.scatter(0, i, s), [x, idx, src]),
        (lambda t, i: t.scatter(1, i, 2.0), [x, i2]),
        (lambda t, i: t.clone().scatter_(1, i, 2.0, reduce="add"), [x, i2]),
        (lambda t, i, s: t.scatter_(0, i, s), [x, idx, src]),
        (lambda t, i, s: t.scatter(0, i, s.double()), [x, idx, src]),
        (lambda t, i, s: t.scatter_add(0, i, s), [x, idx, src]),
        (lambda t, i, s: t.scatter_add_(0, i, s), [x, idx, src]),
        (lambda t, i, s: t.scatter_reduce(0, i, s, "amax"), [x, idx, src]),
        (lambda t, i, s: t.scatter_reduce_(0, i, s, "mean", include_self=False), [x, idx, src]),
        (lambda t, i, s: t.scatter_reduce(0, i, s, "bad"), [x, idx, src]),
        (lambda t, i: t.index_select(1, i), [x, _i([0, 3, 3])]),
        (lambda t, i: jtorch.index_select(t, 0, i), [x, _i([2, 0], jtorch.int32)]),
        (lambda t, i: t.index_select(0, i), [x, _i([[0]])]),
        (lambda t, i, s: t.index_add(0, i, s), [x, _i([0, 2]), _x((2, 4))]),
        (lambda t, i, s: t.index_add_(1, i, s, alpha=2), [x, _i([0, 2]), _x((3, 2))]),
        (lambda t, i, s: t.index_add(0, i, s), [x, _i([0, 2]), _x((3, 4))]),
        (lambda t, i, s: t.index_copy(0, i, s), [x, _i([0, 2]), _x((2, 4))]),
        (lambda t, i, s: t.index_copy_(1, i, s), [x, _i([3, 1]), _x((3, 2))]),
        (lambda t, i: t.index_fill(1, i, -1.0), [x, _i([0, 2])]),
        (lambda t, i: t.index_fill_(0, i, jtorch.tensor(2.0)), [x, _i([1])]),
        (lambda t, i: t.index_fill(0, i, 1.0), [x, _i([1], jtorch.int32)]),
        (lambda t, m: t.masked_fill(m, 0.5), [x, mask]),
        (lambda t, m: t.masked_fill_(m, jtorch.tensor(0.5)), [x, mask]),
        (lambda t, m: t.masked_fill(m, 0.5), [x, mask[0]]),
        (lambda t, m: t[0].masked_fill_(m, 0.5), [x, mask]),
        (lambda t, m: t.masked_fill(m.int(), 0.5), [x, mask]),
        (lambda t, m, s: t.masked_scatter(m, s), [x, mask, src]),
        (lambda t, m, s: t.masked_scatter_(m, s), [x, mask, src]),
        (lambda t, i: t.take(i), [x, i2]),
        (lambda t, i: jtorch.take(t, i), [x, _i([0, 11, -1])]),
        (lambda t, i: t.take(i.int()), [x, i2]),
        (lambda t, i, s: t.put_(i, s), [x, _i([0, 5]), _x((2,))]),
        (lambda t, i, s: t.put(i, s, accumulate=True), [x, _i([0, 5]), _x((2,))]),
        (lambda t, i: jtorch.take_along_dim(t, i, 1), [x, i2]),
        (lambda t, i: jtorch.take_along_dim(t, i), [x, _i([0, 3])]),
        (lambda t, i, s: t.index_put_((i,), s), [x, _i([0, 2]), _x((4,))]),
        (lambda t, i, s: t.index_put((i, i), s, accumulate=True), [x, _i([0, 2]), _x(())]),
        (lambda t, i, s: t.index_put_((i,), s), [x, _i([0, 2]), _x((4,), jtorch.float64)]),
        (lambda t, i, s: t.index_put_((i,), s), [x, _i([0, 2]), _x((3,))]),
        (lambda t, i, s: t.index_put_((i,), s), [xi, _i(1), _x((4,)).long()]),
        (lambda t, i: F.embedding(i, t), [x, i2.t()]),
        (lambda t, i: F.embedding(i, t, padding_idx=-1), [x, _i([1, 2])]),
        (lambda t, i: F.embedding(i, t), [x, i2.float()]),
        (lambda t, i: F.embedding(i, t[0]), [x, i2]),
        (lambda t, i: F.one_hot(i, 4), [x, i2]),
    ]


@pytest.mark.parametrize("variant", VARIANTS)
def test_family_meta_matches_cpu(variant):
    n = len(_calls(variant))
    for k in range(n):
        fn, args = _calls(variant)[k]
        check_meta_matches_cpu(fn, args)


def test_0d_and_0size_operands():
    s = _x(())
    e = _x((0, 4))
    calls = [
        (lambda t: t[None], [s]), (lambda t: t[...], [s]), (lambda t: t[0], [s]),
        (lambda t: t[1:], [e]), (lambda t, i: t[i], [e, _i(np.zeros((0,), np.int64))]),
        (lambda t, i: t.gather(0, i), [s, _i(0)]), (lambda t, i: t.index_select(0, i), [s, _i([0])]),
        (lambda t, i: t.index_select(0, i), [e, _i([0])]),
        (lambda t, i, v: t.scatter(0, i, v), [s, _i(0), _x(())]),
        (lambda t, m: t.masked_fill(m, 1.0), [s, _i(True, jtorch.bool)]),
        (lambda t, i: t.take(i), [e, _i([0])]),
        (lambda t, i: F.embedding(i, t), [_x((3, 2)), _i(np.zeros((0, 2), np.int64))]),
    ]
    for fn, args in calls:
        check_meta_matches_cpu(fn, args)


def test_embedding_bag_runs_on_meta():
    w = _x((10, 3))
    for kw in ({"mode": "sum"}, {"mode": "mean", "padding_idx": 2}, {"mode": "max"}):
        check_meta_matches_cpu(lambda t, i, o: F.embedding_bag(i, t, o, **kw),
                               [w, _i([1, 2, 4, 5, 4, 3, 2, 9]), _i([0, 4, 4])])
        check_meta_matches_cpu(lambda t, i: F.embedding_bag(i, t, **kw), [w, _i([[1, 2], [0, 9]])])


def test_in_place_ops_bump_the_version_on_meta():
    m = jtorch.zeros(3, 4, device="meta")
    v = m._version
    m.index_fill_(0, jtorch.tensor([1]), 2.0)
    m.scatter_(0, jtorch.tensor([[0, 1, 2, 0]]), 1.0)
    m[0] = 1.0
    assert m._version == v + 3


def test_meta_gradients_of_gather_and_embedding():
    w = jtorch.empty(10, 3, device="meta", requires_grad=True)
    idx = jtorch.tensor([[1, 2], [0, 9]], device="meta")
    F.embedding(idx, w).sum().backward()
    assert w.grad.is_meta and w.grad.shape == (10, 3)


def test_out_variants_on_meta():
    x = _x()
    for fn in (lambda t, i, o: jtorch.gather(t, 1, i, out=o),
               lambda t, i, o: jtorch.index_select(t, 1, i[0], out=o)):
        check_meta_matches_cpu(fn, [x, _i([[0, 1], [2, 0], [1, 1]]), jtorch.empty(0)])
    check_meta_matches_cpu(lambda t, i, o: jtorch.gather(t, 1, i, out=o),
                           [x, _i([[0, 1], [2, 0], [1, 1]]), jtorch.empty(0, dtype=jtorch.int64)])


def test_to_meta_twin_helper_is_consistent():
    x = _x(variant="view")
    m = to_meta(x)
    assert m.storage_offset() == x.storage_offset() and dispatch.device_of(m).type == "meta"
