"""Indexing against torch: __getitem__ (basic views with torch's strides, advanced gathers),
__setitem__/index_put_, gather/scatter family, masked ops, take, nonzero, and errors."""

import math
import warnings

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import jtorch

from helpers import pair, raises_as, same, same_call

DTYPES = ["float32", "float64", "int64", "bool"]

# torch warns about some of the indices tried here (non-tuple sequences, uint8 masks).
pytestmark = pytest.mark.filterwarnings("ignore")


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return np.asarray(rng.random(shape) > 0.5)
    return np.asarray(rng.integers(-9, 10, size=shape).astype(dtype))


def _conv(lib, obj):
    """Index/value objects given as ('t', array) become tensors of the library."""
    if isinstance(obj, tuple) and len(obj) == 2 and obj[0] == "t":
        return lib.from_numpy(np.array(obj[1]).copy())
    if isinstance(obj, tuple):
        return tuple(_conv(lib, o) for o in obj)
    return obj


def _raises_same(fn_j, fn_t):
    """True when torch's call raises, after checking that jtorch's raises alike."""
    try:
        fn_t()
    except Exception as e:  # noqa: BLE001 - the oracle decides what is an error
        raises_as(e, fn_j)
        return True
    return False


# -- __getitem__ ----------------------------------------------------------------------------

# ("t", data) entries become tensors of each library (see ``_conv``).
GET_CASES = [
    0, -1, (1, 2), (0, -1, 3), slice(1, None), (slice(None), slice(None, None, 2)),
    (Ellipsis, 1), (None, 0), (slice(None), None, 1), (Ellipsis, None), (0, True), True, False,
    (1, None, False), ("t", 1), (("t", 1), 0), ("t", [1, 0, 1]), ("t", [[0], [1]]),
    ("t", [-1, -2]), (slice(None), ("t", [2, 0])), (("t", [0, 1]), slice(None), ("t", [3, 0])),
    (slice(None), ("t", [0, 1]), ("t", [1, 2])), (slice(None), ("t", [0, 1]), 0),
    (0, slice(None), ("t", [0, 1])), (("t", [[0], [1]]), ("t", [0, 2])),
    (slice(None), None, ("t", [0, 1]), None, ("t", [0, 2])), (Ellipsis, ("t", [[1, 0]])),
    (("t", [0, 1]), Ellipsis, ("t", [2, 3])), (1, slice(1, None), ("t", [3, 3, 0])),
    ("t", np.array([True, False])), (slice(None), ("t", np.array([True, False, True]))),
    ("t", np.array([[True, False, True], [False, False, True]])),
    (("t", np.array(True)),), (("t", np.array(False)), 0), ("t", np.array([1, 0], np.int32)),
    ("t", np.zeros((0,), np.int64)), (slice(None), ("t", np.zeros((2, 0), np.int64))),
    [0, 1], [[0, 1]], [[0, 1], [1, 2]], [True, False], [slice(None), 1],
    # errors
    5, (0, 5), (slice(None), 0, 5), (0, 0, 0, 0), ("t", [5]), ("t", [-3]),
    (("t", [[0, 1]]), ("t", [0, 1, 2])), ("t", np.array([0.0])), 1.5, "a",
    ("t", np.array([True, False, True])), (slice(None), ("t", np.array([True, False]))),
    (slice(None, None, -1),), (slice(None, None, 0),), (slice(None), ("t", [5]), ("t", [0])),
    (("t", [0]), slice(None), ("t", [5])),
]


def _getitem(lib, x, index):
    return x[_conv(lib, index)]


@pytest.mark.filterwarnings("ignore:Using a non-tuple sequence")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index", GET_CASES, ids=repr)
def test_getitem_matches_torch(index, dtype):
    arr = _data((2, 3, 4), dtype)
    j, t = pair(arr)
    if _raises_same(lambda: _getitem(jtorch, j, index), lambda: _getitem(torch, t, index)):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tr, jr = _getitem(torch, t, index), _getitem(jtorch, j, index)
    same(jr, tr)
    if not tr.numel():
        return
    if tr.untyped_storage().data_ptr() == t.untyped_storage().data_ptr():
        # Basic indexing: a view with torch's strides and offset.
        same(jr, tr, strides=True)
        assert jr._base is j
    else:
        assert jr._base is None and not np.shares_memory(jr.numpy(), j.numpy())
        assert jr.stride() == tr.stride()


@pytest.mark.parametrize("index", [(slice(1, None), 0), (Ellipsis, ("t", [0, 2])),
                                   ("t", [1, 0]), (0, slice(None, None, 2))], ids=repr)
def test_getitem_on_non_contiguous_and_empty(index):
    arr = _data((4, 3), "float64")
    same_call(lambda m, x: _getitem(m, x.t(), index), arr)
    same_call(lambda m, x: _getitem(m, x[:, 1:2].expand(4, 5), (slice(None), 1)), arr)
    empty = np.zeros((0, 3), np.float32)
    same_call(lambda m, x: x[:, _conv(m, ("t", [0, 2]))], empty)
    same_call(lambda m, x: x[_conv(m, ("t", [0]))], empty)
    same_call(lambda m, x: x[1:3][0], _data((4, 0), "int64"))


def test_list_of_sequences_is_a_tuple_with_torch_warning():
    j, t = pair(_data((2, 3), "float32"))
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        jr = j[[[0, 1], [2, 0]]]
    with pytest.warns(UserWarning, match="non-tuple sequence"):
        tr = t[[[0, 1], [2, 0]]]
    same(jr, tr)


ADV_LAYOUT_CASES = [
    lambda m, x: x.transpose(0, 2)[[0, 1]],
    lambda m, x: x.transpose(0, 2)[:, [0, 1]],
    lambda m, x: x.permute(2, 0, 1)[:, :, [1, 0]],
    lambda m, x: x.transpose(0, 1)[m.tensor([[0, 1], [1, 2]]).t()],
    lambda m, x: x.transpose(1, 2)[:, x[0].t() > 5],
    lambda m, x: x[0, m.tensor([[0, 1], [2, 0]]).t()],
    lambda m, x: x.transpose(0, 2)[m.tensor([[0, 1], [2, 0]]).t(), 1:],
    lambda m, x: x[:, 1:2].expand(2, 5, 4)[:, [0, 4]],
    lambda m, x: x.transpose(0, 2)[[0, 1], :, [0, 1]],
    lambda m, x: x.transpose(0, 1)[0, True],
]


@pytest.mark.parametrize("case", range(len(ADV_LAYOUT_CASES)))
def test_advanced_index_result_layout_follows_torch(case):
    """torch's index kernel lays its result out like its operands (TensorIterator order)."""
    same_call(ADV_LAYOUT_CASES[case], _data((2, 3, 4), "float32"), strides=True)


def test_getitem_on_0d():
    arr = np.asarray(np.float32(3.5))
    for index in [(), Ellipsis, None, True, False, (None, None), 0]:
        same_call(lambda m, x, index=index: x[index], arr)


def test_basic_index_view_writes_reach_base():
    j, t = pair(_data((3, 4), "float32"))
    jv, tv = j[1:, None, ::2], t[1:, None, ::2]
    jv.fill_(5)
    tv.fill_(5)
    np.testing.assert_array_equal(j.numpy(), t.numpy())
    assert j._version == jv._version > 0
    assert jv._base is j


# -- hypothesis: random basic index expressions ---------------------------------------------

@st.composite
def basic_indices(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=4)))
    n = draw(st.integers(0, len(shape) + 2))
    items = []
    ellipsis = False
    for _ in range(n):
        kind = draw(st.sampled_from(["int", "slice", "none", "ellipsis"]))
        if kind == "int":
            items.append(draw(st.integers(-5, 5)))
        elif kind == "slice":
            opt = st.one_of(st.none(), st.integers(-6, 6))
            step = draw(st.one_of(st.none(), st.integers(1, 3)))
            items.append(slice(draw(opt), draw(opt), step))
        elif kind == "none":
            items.append(None)
        elif not ellipsis:
            ellipsis = True
            items.append(Ellipsis)
    return shape, tuple(items)


@settings(max_examples=300, deadline=None)
@given(basic_indices())
def test_random_basic_indexing_matches_torch(case):
    shape, index = case
    arr = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    j, t = pair(arr)
    if _raises_same(lambda: j[index], lambda: t[index]):
        return
    jr, tr = j[index], t[index]
    same(jr, tr, strides=True)
    assert jr.is_contiguous() == tr.is_contiguous()
    # The same index on the left of an assignment writes through the view.
    j[index] = -1.0
    t[index] = -1.0
    np.testing.assert_array_equal(j.numpy(), t.numpy())


# -- __setitem__ / index_put_ ---------------------------------------------------------------

SET_CASES = [
    (0, 7), ((0, 1), 7), (slice(1, None), ("t", [1.0, 2.0, 3.0, 4.0])), (Ellipsis, 2),
    ((slice(None), None, 1), ("t", [[1.0], [2.0]])), (1, ("t", [[[5.0, 6.0, 7.0, 8.0]]])),
    (("t", [0, 0]), 3), (("t", [1, 0]), ("t", [[[1.0]], [[2.0]]])),
    ((slice(None), ("t", [2, 0]), ("t", [1, 3])), ("t", [9.0, 8.0])),
    ((("t", [0, 1]), slice(None), ("t", [0, 3])), ("t", [[1.0, 2.0, 3.0]])),
    (("t", np.array([True, False])), 4), (("t", np.array([[True, False, True], [False] * 3])),
                                           ("t", [1.0, 2.0])),
    (True, 1), (False, 1), ((0, True), 3), (("t", [[0], [1]]), ("t", [1.0, 2.0, 3.0, 4.0])),
    # errors
    (("t", [0, 1]), ("t", [1.0, 2.0, 3.0])), (("t", [7]), 1), (5, 1),
    (1, ("t", [[1.0, 2.0], [3.0, 4.0]])), (("t", [1]), ("t", [[[1.0, 2.0]]])),
]


def _setitem(lib, x, index, value):
    v = _conv(lib, value)
    if isinstance(v, lib.Tensor):
        v = v.to(x.dtype)
    x[_conv(lib, index)] = v
    return x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("index,value", SET_CASES, ids=repr)
def test_setitem_matches_torch(index, value, dtype):
    arr = _data((2, 3, 4), dtype)
    res = same_call(lambda m, x: _setitem(m, x, index, value), arr)
    if res is not None:
        assert res[0]._version > 0


def test_setitem_non_contiguous_target_and_dtype_casts():
    arr = _data((3, 4), "float64")
    same_call(lambda m, x: _setitem(m, x.t(), (slice(None), 1), ("t", [1.0, 2.0, 3.0])), arr)
    same_call(lambda m, x: _setitem(m, x.t(), (("t", [0, 3]),), 5), arr)
    # value of another dtype is cast; float scalars into ints truncate
    same_call(lambda m, x: _setitem(m, x.long(), 0, 2.7), arr)
    same_call(lambda m, x: _setitem(m, x, 0, m.tensor([1, 2, 3, 4])), arr)
    same_call(lambda m, x: _setitem(m, x.bool(), ("t", [0, 2]), 0), arr)
    same_call(lambda m, x: _setitem(m, x.half(), ("t", [0, 2]), 1.5), arr)


def test_setitem_overlap():
    arr = _data((3, 2), "float32")

    def partial(m, x):
        x[1:] = x[:2]
        return x

    def full(m, x):
        x[:] = x
        return x

    def strided(m, x):
        x[::2] = x[1:2]
        return x

    def advanced(m, x):
        x[m.tensor([1, 2])] = x[:2]
        return x

    for fn in (partial, full, strided, advanced):
        same_call(fn, arr)


def test_index_put():
    arr = _data((3, 4), "float64")
    idx = ("t", [0, 2, 0])

    def put(acc):
        return lambda m, x: x.index_put_((_conv(m, idx),), _conv(m, ("t", [1.0, 2.0, 3.0])
                                                                 ).view(3, 1), accumulate=acc)

    same_call(put(False), arr)
    same_call(put(True), arr)
    same_call(lambda m, x: m.index_put(x, (_conv(m, ("t", [0, 0])), _conv(m, ("t", [1, 1]))),
                                  m.tensor(1.0, dtype=m.float64), True), arr)
    same_call(lambda m, x: x.index_put_([_conv(m, ("t", 1))], m.tensor(5.0, dtype=m.float64)), arr)
    same_call(lambda m, x: x.half().index_put_((_conv(m, ("t", [1, 1])),), m.ones(4, dtype=m.half),
                                          accumulate=True), arr)
    same_call(lambda m, x: x.long().index_put_((_conv(m, ("t", [1, 1])),), m.ones(4, dtype=m.long),
                                          accumulate=True), arr)
    same_call(lambda m, x: x.bool().index_put_((_conv(m, ("t", [1, 1])),), m.ones(4, dtype=m.bool),
                                          accumulate=True), arr)
    # errors
    same_call(lambda m, x: x.index_put_((_conv(m, ("t", [5])),), m.tensor(1.0, dtype=m.float64)), arr)
    same_call(lambda m, x: x.index_put_((_conv(m, ("t", [1])),), m.tensor([1.0, 2.0])), arr)
    same_call(lambda m, x: x.index_put_((_conv(m, ("t", [1])),), 1.0), arr)
    same_call(lambda m, x: x.index_put_((None, _conv(m, ("t", [1]))), m.tensor(1.0, dtype=m.float64)),
              arr)


# -- gather / scatter family ----------------------------------------------------------------

def _i(m, v, dtype=np.int64):
    return m.from_numpy(np.array(v, dtype=dtype))


GATHER_CASES = [
    lambda m, x: x.gather(0, _i(m, [[1, 0, 1, 1], [0, 0, 1, 0]])),
    lambda m, x: m.gather(x, 1, _i(m, [[2, 0], [1, 1]])),
    lambda m, x: x.gather(-1, _i(m, [[3], [0]])),
    lambda m, x: x.t().gather(0, _i(m, [[3, 0], [1, 2]])),
    lambda m, x: x.gather(1, _i(m, [[0, 1]], np.int32)),
    lambda m, x: x.gather(1, _i(m, np.zeros((2, 0)))),
    lambda m, x: x.gather(1, _i(m, [[0, 1], [2, 3]]).t()),
    lambda m, x: x[0].gather(0, _i(m, 2)),
    lambda m, x: x.gather(0, _i(m, [[5]])),
    lambda m, x: x.gather(0, _i(m, [[-1]])),
    lambda m, x: x.gather(0, _i(m, [[0.0]], np.float32)),
    lambda m, x: x.gather(0, _i(m, [0])),
    lambda m, x: x.gather(0, _i(m, [[0, 0, 0, 0, 0]])),
    lambda m, x: x.gather(1, _i(m, [[0], [0], [0]])),
    lambda m, x: x.index_select(0, _i(m, [1, 0, 1])),
    lambda m, x: m.index_select(x, 1, _i(m, [3, 3], np.int32)),
    lambda m, x: x.t().index_select(1, _i(m, [1])),
    lambda m, x: x.index_select(1, _i(m, 2)),
    lambda m, x: x.index_select(1, _i(m, [])),
    lambda m, x: x.index_select(0, _i(m, [5])),
    lambda m, x: x.index_select(0, _i(m, [-1])),
    lambda m, x: x.index_select(0, _i(m, [[0]])),
    lambda m, x: x.index_select(0, _i(m, [0.0], np.float32)),
    lambda m, x: x.take(_i(m, [[0, 7], [-1, 3]])),
    lambda m, x: x.t().take(_i(m, [1, 2])),
    lambda m, x: m.take(x, _i(m, 5)),
    lambda m, x: x.take(_i(m, [8])),
    lambda m, x: x.take(_i(m, [-9])),
    lambda m, x: x.take(_i(m, [1], np.int32)),
    lambda m, x: x.take_along_dim(_i(m, [[0], [2]]), 1),
    lambda m, x: m.take_along_dim(x, _i(m, [[1, 0, 1, 0]]), 0),
    lambda m, x: x.take_along_dim(_i(m, [3, 0])),
    lambda m, x: x.take_along_dim(_i(m, [[-1]]), 1),
    lambda m, x: x.take_along_dim(_i(m, [0]), 1),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(GATHER_CASES)))
def test_gather_family_matches_torch(case, dtype):
    same_call(GATHER_CASES[case], _data((2, 4), dtype))


SCATTER_CASES = [
    lambda m, x: x.scatter(0, _i(m, [[1, 0, 1, 1]]), x[:1].flip(1)),
    lambda m, x: x.scatter_(1, _i(m, [[3, 0], [1, 1]]), x[:, 2:]),
    lambda m, x: m.scatter(x, 1, _i(m, [[2], [0]]), 1),
    lambda m, x: x.t().scatter_(0, _i(m, [[1, 0]], np.int32), x.t()[2:]),
    lambda m, x: x.scatter(0, _i(m, [[5]]), 1),
    lambda m, x: x.scatter(0, _i(m, [[-1]]), 1),
    lambda m, x: x.scatter(0, _i(m, [[0]], np.float32), 1),
    lambda m, x: x.scatter(0, _i(m, [0]), 1),
    lambda m, x: x.scatter(0, _i(m, [[0, 0]]), x.long() if x.dtype != m.int64 else x.float()),
    lambda m, x: x.scatter(0, _i(m, np.zeros((3, 1))), 1),
    lambda m, x: x.scatter(0, _i(m, np.zeros((2, 2))), x[:1]),
    lambda m, x: x.scatter_add(0, _i(m, [[1, 1, 0, 1], [1, 1, 1, 1]]), x),
    lambda m, x: x.scatter_add_(1, _i(m, [[0, 0, 0]]), x[:, :3]),
    lambda m, x: x.scatter_add(0, _i(m, [[2]]), x),
    lambda m, x: x.scatter(0, _i(m, [[1, 1]]), x[:1], reduce="add"),
    lambda m, x: x.scatter(1, _i(m, [[0, 0]]), x[:, :2], reduce="multiply"),
    lambda m, x: x.scatter(1, _i(m, [[0, 0]]), 3, reduce="multiply"),
    lambda m, x: x.scatter(1, _i(m, [[0, 0]]), 3, reduce="mean"),
    lambda m, x: x.index_add(0, _i(m, [1, 1, 0]), m.cat([x, x[:1]])),
    lambda m, x: x.index_add_(1, _i(m, [3, 0], np.int32), x[:, :2], alpha=2),
    lambda m, x: x.index_add(0, _i(m, [-1]), x[:1]),
    lambda m, x: x.index_add(0, _i(m, [5]), x[:1]),
    lambda m, x: x.index_add(0, _i(m, [0]), x),
    lambda m, x: x.index_add(0, _i(m, [0.0], np.float32), x[:1]),
    lambda m, x: x.index_add(0, _i(m, [0]), x[:1, :3]),
    lambda m, x: x.index_copy(0, _i(m, [1, 0]), x.flip(0)),
    lambda m, x: x.t().index_copy_(1, _i(m, [1]), x.t()[:, :1]),
    lambda m, x: x.index_copy(0, _i(m, [5]), x[:1]),
    lambda m, x: x.index_copy(0, _i(m, [-1]), x[:1]),
    lambda m, x: x.index_copy(0, _i(m, [0, 1]), x[:1]),
    lambda m, x: x.index_copy(0, _i(m, [0], np.int32), x[:1]),
    lambda m, x: x.index_fill(1, _i(m, [0, 3]), 7),
    lambda m, x: x.index_fill_(0, _i(m, [-1]), m.tensor(1)),
    lambda m, x: x.t().index_fill(0, _i(m, [2]), 0),
    lambda m, x: x.index_fill(0, _i(m, [5]), 1),
    lambda m, x: x.index_fill(0, _i(m, [0], np.int32), 1),
    lambda m, x: x.index_fill(0, _i(m, [0]), m.tensor([1.0])),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(SCATTER_CASES)))
def test_scatter_family_matches_torch(case, dtype):
    same_call(SCATTER_CASES[case], _data((2, 4), dtype))


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_scatter_reduce_matches_torch(reduce, include_self, dtype):
    arr = _data((3, 4), dtype)
    src = _data((3, 4), dtype, seed=1)
    idx = np.array([[0, 0, 2, 1], [2, 0, 0, 1], [0, 2, 2, 2]])
    jr = jtorch.from_numpy(arr.copy()).scatter_reduce(
        0, jtorch.from_numpy(idx), jtorch.from_numpy(src), reduce, include_self=include_self)
    tr = torch.from_numpy(arr.copy()).scatter_reduce(
        0, torch.from_numpy(idx), torch.from_numpy(src), reduce, include_self=include_self)
    same(jr, tr)


def test_scatter_reduce_nan_and_errors():
    arr = np.array([1.0, np.nan, 3.0], np.float32)
    src = np.array([np.nan, 5.0, 0.0, 7.0], np.float32)
    for reduce in ("amax", "amin", "sum"):
        same_call(lambda m, x, s, r=reduce: x.scatter_reduce(0, _i(m, [0, 1, 2, 2]), s, r), arr, src)
    same_call(lambda m, x, s: x.scatter_reduce(0, _i(m, [0]), s, "foo"), arr, src)


def test_half_scatter_arithmetic_and_complex_copy():
    arr = _data((2, 4), "float16")
    for fn in SCATTER_CASES[11:13] + SCATTER_CASES[18:20]:
        same_call(fn, arr)
    c = _data((2, 4), "complex128")
    same_call(SCATTER_CASES[0], c)
    same_call(GATHER_CASES[0], c)


# -- masked ops -----------------------------------------------------------------------------

MASK = np.array([[True, False, True, False], [False, False, True, True]])

MASKED_CASES = [
    lambda m, x, k: x.masked_fill(k, 7),
    lambda m, x, k: x.masked_fill(k[0], 2.5),
    lambda m, x, k: x.masked_fill_(k, m.tensor(3)),
    lambda m, x, k: m.masked_fill(x.t(), k.t(), 1),
    lambda m, x, k: x.masked_fill(k.expand(3, 2, 4), 1),
    lambda m, x, k: x.masked_fill_(k.expand(3, 2, 4), 1),
    lambda m, x, k: x.masked_fill(k.long(), 1),
    lambda m, x, k: x.masked_fill(k, m.tensor([1.0, 2.0])),
    lambda m, x, k: x.masked_select(k),
    lambda m, x, k: m.masked_select(x.t(), k.t()),
    lambda m, x, k: x.masked_select(k[1]),
    lambda m, x, k: x[0, 0].masked_select(k),
    lambda m, x, k: x.masked_select(k.long()),
    lambda m, x, k: x.masked_scatter(k, x.flip(0)),
    lambda m, x, k: x.masked_scatter_(k[0], m.cat([x, x]).reshape(-1)),
    lambda m, x, k: x.t().masked_scatter_(k.t(), x.reshape(-1).flip(0)),
    lambda m, x, k: x[0].masked_scatter(k, x.reshape(-1)),
    lambda m, x, k: x.masked_scatter(k, x[:1, :1]),
    lambda m, x, k: x.masked_scatter(k.long(), x),
    lambda m, x, k: x.masked_scatter(k, x.long() if x.dtype != m.int64 else x.float()),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(MASKED_CASES)))
def test_masked_ops_match_torch(case, dtype):
    same_call(MASKED_CASES[case], _data((2, 4), dtype), MASK)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_masked_fill_row_masks_match_torch(dtype, monkeypatch):
    """masked_fill's one-kernel path (a row-major bool mask over x's trailing dims, x of the
    result's shape): attention's causal mask, a mask of one row, in place, -inf, an int and
    NaN as values, x holding NaN and -0.0; and the cases it leaves to the general path."""
    from jtorch.kernels.cpu import indexing as ki

    calls = []
    kernel = ki.masked_rows
    monkeypatch.setattr(ki, "masked_rows", lambda *a: calls.append(1) or kernel(*a))
    x = _data((3, 2, 4, 4), dtype)
    x.flat[0], x.flat[5] = np.nan, -0.0
    causal = np.triu(np.ones((4, 4), bool), 1)[None, None]
    for fn in [lambda m, a, k: a.masked_fill(k, float("-inf")),
               lambda m, a, k: a.masked_fill(k[0, 0, 1], 3),
               lambda m, a, k: a.masked_fill_(k, float("nan")),
               lambda m, a, k: a.masked_fill(k.expand(3, 2, 4, 4).contiguous(), 0.5)]:
        same_call(fn, x, causal)
    assert len(calls) == 4
    for fn in [lambda m, a, k: a.transpose(2, 3).masked_fill(k, 1.0),  # x not row-major
               lambda m, a, k: a[0, 0].masked_fill(k, 1.0),  # the mask widens x
               lambda m, a, k: a.masked_fill(k.transpose(2, 3), 1.0),  # nor the mask
               lambda m, a, k: a.masked_fill(k, True)]:
        same_call(fn, x, causal)
    assert len(calls) == 4


def test_masked_fill_value_casts():
    for dtype, value in [("int64", 2.7), ("uint8", -1), ("bool", 0.5), ("float16", 1e-3)]:
        same_call(lambda m, x, k, v=value: x.masked_fill(k, v), _data((2, 4), dtype), MASK)
        same_call(lambda m, x, k, v=value: x.masked_fill(k, m.tensor(v)), _data((2, 4), dtype), MASK)


# -- nonzero --------------------------------------------------------------------------------

NONZERO_INPUTS = [
    np.array([1.0, -0.0, np.nan, 0.0, np.inf], np.float32), np.zeros((2, 0)), np.zeros((2, 3)),
    np.ones((2, 3), np.int64), MASK, _data((2, 3, 4), "int64"), np.array(3.0), np.array(0),
    np.array([[0, 1], [2, 0]], np.uint8),
]


@pytest.mark.parametrize("k", range(len(NONZERO_INPUTS)))
def test_nonzero_matches_torch(k):
    arr = NONZERO_INPUTS[k]
    jr, tr = same_call(lambda m, x: x.nonzero(), arr)
    assert jr.stride() == tr.stride() or tr.numel() == 0
    same_call(lambda m, x: m.nonzero(x, as_tuple=True), arr)
    same_call(lambda m, x: m.argwhere(x), arr)
    same_call(lambda m, x: x.t().nonzero() if x.dim() == 2 else x.nonzero(), arr)
    same_call(lambda m, x: m.where(x != 0) if x.dim() else (m.zeros(0),), arr)


# -- parallel variants and bounds inside kernels --------------------------------------------

def test_parallel_index_kernels_match_torch(monkeypatch):
    monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 8)
    monkeypatch.setattr(jtorch.kernels.cpu.movement, "BLOCK", 3)
    arr = _data((5, 7), "float32")
    cases = [
        lambda m, x: x[_i(m, [4, 0, 2, 2, 1])],
        lambda m, x: x.t()[:, _i(m, [4, 0, 2])],
        lambda m, x: x[x > 0],
        lambda m, x: x.nonzero(),
        lambda m, x: x.gather(1, _i(m, np.arange(14).reshape(2, 7) % 7)),
        lambda m, x: x.index_select(1, _i(m, [6, 5, 0, 1, 2])),
        lambda m, x: x[_i(m, [9])],
        lambda m, x: x.gather(1, _i(m, [[9] * 7] * 2)),
        lambda m, x: _setitem(m, x, ("t", [4, 0, 2]), ("t", [1.5] * 7)),
        lambda m, x: _setitem(m, x.t(), (slice(None), ("t", [4, 1])), 2.5),
        lambda m, x: x.index_copy(1, _i(m, [6, 5, 0]), x[:, :3].flip(1)),
        lambda m, x: _setitem(m, x, ("t", [9, 0]), 1.0),
    ]
    for fn in cases:
        same_call(fn, arr)


def test_index_errors_do_not_modify_or_crash():
    x = jtorch.zeros(3)
    for bad in ([3], [-4], [10**12]):
        with pytest.raises(IndexError, match="out of bounds"):
            x[jtorch.tensor(bad)]
        with pytest.raises(IndexError, match="out of bounds"):
            x[jtorch.tensor(bad)] = 1.0
    with pytest.raises(RuntimeError, match="out of bounds"):
        x.scatter_(0, jtorch.tensor([10**12]), 1.0)


# -- 0-d and 0-size operands ----------------------------------------------------------------

EDGE_CASES = [
    ((0, 3), lambda m, x: x.gather(0, _i(m, np.zeros((0, 3))))),
    ((0, 3), lambda m, x: x.gather(1, _i(m, np.zeros((0, 2))))),
    ((0, 3), lambda m, x: x.index_select(1, _i(m, [2, 0]))),
    ((0, 3), lambda m, x: x.index_select(0, _i(m, []))),
    ((0, 3), lambda m, x: x.index_select(0, _i(m, [0]))),
    ((0, 3), lambda m, x: x.scatter(1, _i(m, np.zeros((0, 2))), 1)),
    ((0, 3), lambda m, x: x.index_add(1, _i(m, [0]), x[:, :1])),
    ((0, 3), lambda m, x: x.index_fill(1, _i(m, [0]), 1)),
    ((0, 3), lambda m, x: x.masked_fill(x > 0, 1)),
    ((0, 3), lambda m, x: x.masked_select(m.ones(3, dtype=m.bool))),
    ((0, 3), lambda m, x: x.take(_i(m, []))),
    ((0, 3), lambda m, x: x.take(_i(m, [0]))),
    ((0, 3), lambda m, x: x[_i(m, [])]),
    ((0, 3), lambda m, x: x[:, _i(m, [1, 1])]),
    ((0, 3), lambda m, x: x.masked_scatter(m.zeros(3, dtype=m.bool), x)),
    ((), lambda m, x: x.gather(0, _i(m, 0))),
    ((), lambda m, x: x.gather(0, _i(m, [0, 0]))),
    ((), lambda m, x: x.gather(0, _i(m, 1))),
    ((), lambda m, x: x.index_select(0, _i(m, [0, 0]))),
    ((), lambda m, x: x.index_select(0, _i(m, 0))),
    ((), lambda m, x: x.take(_i(m, [0, -1]))),
    ((), lambda m, x: x.scatter(0, _i(m, 0), 5)),
    ((), lambda m, x: x.scatter_add(0, _i(m, [0, 0]), x.expand(2).contiguous())),
    ((), lambda m, x: x.index_fill(0, _i(m, [0]), 5)),
    ((), lambda m, x: x.index_add(0, _i(m, [0]), x.reshape(1))),
    ((), lambda m, x: x.masked_fill(m.tensor(True), 5)),
    ((), lambda m, x: x.masked_select(m.tensor(True))),
    ((), lambda m, x: x.masked_select(m.tensor([True, False]))),
    ((), lambda m, x: x.masked_scatter(m.tensor(True), x.reshape(1) + 1)),
    ((), lambda m, x: x.take_along_dim(_i(m, [0]))),
]


@pytest.mark.parametrize("dtype", ["float32", "int64"])
@pytest.mark.parametrize("case", range(len(EDGE_CASES)))
def test_0d_and_empty_operands(case, dtype):
    shape, fn = EDGE_CASES[case]
    same_call(fn, _data(shape, dtype))


def test_put_matches_torch():
    arr = _data((2, 3), "float64")
    same_call(lambda m, x: x.put_(_i(m, [0, 5, -1]), m.tensor([1.0, 2.0, 3.0], dtype=m.float64)), arr)
    same_call(lambda m, x: x.t().put_(_i(m, [0, 1]), m.tensor([1.0, 2.0], dtype=m.float64)), arr)
    same_call(lambda m, x: x.put(_i(m, [0, 0]), m.tensor([1.0, 2.0], dtype=m.float64), True), arr)
    same_call(lambda m, x: x.put_(_i(m, [0, 6]), m.tensor([1.0, 2.0], dtype=m.float64)), arr)


OUT_OF_PLACE_LAYOUT = [
    lambda m, x: x.scatter(0, _i(m, [[[0]]]), 1.0),
    lambda m, x: x.scatter_add(0, _i(m, [[[0]]]), x),
    lambda m, x: x.scatter_reduce(0, _i(m, [[[0]]]), x, "sum"),
    lambda m, x: x.index_add(0, _i(m, [0]), x[:1]),
    lambda m, x: x.index_copy(0, _i(m, [0]), x[:1]),
    lambda m, x: x.index_fill(0, _i(m, [0]), 1.0),
    lambda m, x: x.index_put((_i(m, [0]),), m.tensor(1.0)),
    lambda m, x: x.masked_scatter(x > 3, x),
    lambda m, x: x.masked_fill(x > 3, 1.0),
    lambda m, x: x.put(_i(m, [0]), m.tensor([1.0])),
]


@pytest.mark.parametrize("case", range(len(OUT_OF_PLACE_LAYOUT)))
def test_out_of_place_results_have_torchs_layout(case):
    same_call(lambda m, x: OUT_OF_PLACE_LAYOUT[case](m, x.transpose(0, 2)),
              _data((2, 3, 4), "float32"), strides=True)


# -- the CPU fast paths of basic indexing (no op call: NumPy's basic indexing) -------------------

ALL_DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
              "complex64", "complex128"]


def _no_op_calls(monkeypatch):
    from jtorch.kernels.defs import indexing as D

    for op in (D.index_op, D.index_put_op):
        monkeypatch.setattr(op, "meta", lambda *a, **k: pytest.fail("took the op path"))


def test_fast_paths_take_the_common_basic_keys(monkeypatch):
    x, y, t = jtorch.zeros(4, 5, 3), jtorch.zeros(10), jtorch.ones(4)
    _no_op_calls(monkeypatch)
    views = x[..., 0], x[1, 2], x[0], x[1:3, ..., 2], x[()], x[-1, 1:4]
    assert all(v._base is x for v in views)
    y[:3] = -1
    x[1:5, 2] = t[:3].reshape(3, 1)
    x[2] = 1.5
    x[..., 0] = t[:1]
    x[None, 0, ::2] = 7
    y[-1] = True
    assert y.tolist()[:4] == [-1.0, -1.0, -1.0, 0.0] and y[9].item() == 1.0


@pytest.mark.parametrize("make", [
    lambda x: x[None],  # NumPy's strides for a new dim are not torch's
    lambda x: x[:, ::2],  # nor for an empty stepped slice: the op path reads these
    lambda x: x[True],
    lambda x: x[[0, 1]],
    lambda x: x.requires_grad_()[0, 1],
])
def test_other_keys_take_the_op_path(make, monkeypatch):
    _no_op_calls(monkeypatch)
    with pytest.raises(pytest.fail.Exception):
        make(jtorch.zeros(4, 5, 3))


SCALARS = [0, 1, -1, 7, 255, 256, -128, -129, 2**31, 2**53, 2**53 + 1, 2**63, True, False, 2.5,
           -2.5, -0.0, float("nan"), float("inf"), -float("inf"), 1e30, 3.4028234663852886e38,
           3.5e38, 1e-40, 65504.0, 70000.0]


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_setitem_scalars_match_torch(dtype):
    """Every scalar torch writes, jtorch writes alike (fast fill or op path); torch's overflow
    errors are out of scope here (the op path's own behaviour)."""
    for v in SCALARS:
        t = torch.zeros(3, 2, dtype=getattr(torch, dtype))
        try:
            t[1:, 0] = v
        except (RuntimeError, ValueError, OverflowError):
            continue
        j = jtorch.zeros(3, 2, dtype=getattr(jtorch, dtype))
        j[1:, 0] = v
        same(j, t)
        bits = j.numpy().view(np.uint8), t.numpy().view(np.uint8)
        if dtype != "float16" or not math.isnan(v):  # float16 nan payloads: torch's rounding
            np.testing.assert_array_equal(*bits, err_msg=f"{dtype} {v!r}")
        assert j._version == 1


@pytest.mark.parametrize("value", [
    lambda m: m.ones(4), lambda m: m.arange(4.0).reshape(1, 1, 4), lambda m: m.tensor(3.0),
    lambda m: m.arange(8.0).reshape(4, 2)[:, 1], lambda m: m.ones(1).expand(4),
    lambda m: m.arange(4.0).reshape(4, 1), lambda m: m.ones(5), lambda m: m.ones(2, 4),
    lambda m: m.ones(4, dtype=m.float64), lambda m: m.ones(4, dtype=m.int64),
])
@pytest.mark.parametrize("key", [(slice(1, 5), 2), (Ellipsis, 0), (2, slice(None, 4)),
                                 (slice(None), slice(1, None, 3))], ids=repr)
def test_setitem_tensor_values_match_torch(key, value):
    """Broadcast, leading size-1 dims, 0-d, strided and expanded values; shape errors are
    torch's; other dtypes are cast (the op path)."""
    def run(m, x):
        x[key] = value(m)
        return x

    same_call(run, _data((6, 4), "float32"))


def test_setitem_fast_path_keeps_autograd_and_inplace_rules():
    leaf = jtorch.zeros(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        leaf[0] = 1.0
    with jtorch.no_grad():  # optimizers write leaves this way
        leaf[0] = 2.0
        view = leaf[1:]
    assert leaf.tolist() == [2.0, 0.0, 0.0]
    with pytest.raises(RuntimeError, match="view of a leaf Variable"):
        view[0] = 1.0
    # a value that requires grad is recorded: the gradient reaches it
    for m in (jtorch, torch):
        w = m.ones(2, requires_grad=True)
        x = m.zeros(3, 2)
        x[1] = w * 3
        x.sum().backward()
        assert w.grad.tolist() == [3.0, 3.0]
    # a write through the fast path is seen by views and bumps the shared version
    x = jtorch.zeros(4, 4)
    v = x[1]
    x[1, 1:3] = 5
    assert v.tolist() == [0.0, 5.0, 5.0, 0.0] and v._version == x._version == 1


def test_fast_getitem_views_share_storage_and_version():
    x = jtorch.arange(24.0).reshape(2, 3, 4)
    for key in [(Ellipsis, 0), (1, 2), (0, slice(1, None), Ellipsis), (-1, -1, -1), ()]:
        v = x[key]
        assert v._base is x._base and v._st is x._st and v._vc is x._vc
    j, t = pair(_data((2, 3, 4), "float32"))
    for key in [(Ellipsis, 0), (1, 2), (0, slice(1, None), Ellipsis), (-1, -1, -1), (),
                (slice(5, 2), 1), (1, slice(-9, 9)), (Ellipsis, slice(2, 2))]:
        same(j[key], t[key], strides=True)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "bool"])
def test_gather_rows_of_row_major_indices(dtype):
    """gather with a row-major index (the unit-stride loop) along every dim of 2-D and 3-D
    inputs, row-major or transposed, take_along_dim's negative indices, and the first bad
    index of a row reported as torch reports it."""
    r = np.random.default_rng(7)
    for shape in ((37, 300), (5, 6, 70)):
        a = (r.standard_normal(shape) * 4).astype(dtype)
        for src in (a, a.T.copy().T):
            jx, tx = jtorch.from_numpy(src), torch.from_numpy(src)
            for d in range(-len(shape), len(shape)):
                ishape = list(shape)
                ishape[d] = 9
                i = r.integers(0, shape[d], ishape)
                got = jx.gather(d, jtorch.from_numpy(i))
                np.testing.assert_array_equal(got.numpy(), tx.gather(d, torch.from_numpy(i)).numpy())
                neg = i - shape[d]  # take_along_dim wraps negative indices
                got = jtorch.take_along_dim(jx, jtorch.from_numpy(neg), d)
                np.testing.assert_array_equal(
                    got.numpy(), torch.take_along_dim(tx, torch.from_numpy(neg), d).numpy())
                for bad in (shape[d], -1):
                    b = i.copy()
                    b.reshape(-1)[3] = bad
                    b.reshape(-1)[5] = shape[d] + 7
                    with pytest.raises(RuntimeError) as e:
                        tx.gather(d, torch.from_numpy(b))
                    raises_as(e.value, lambda b=b, d=d, jx=jx: jx.gather(d, jtorch.from_numpy(b)))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_scatter_add_rows_of_row_major_indices(dtype):
    """scatter_add with row-major index and source rows (the unit-stride loop) along each dim,
    duplicates summed, a transposed target, and the first bad index reported as torch
    reports it."""
    r = np.random.default_rng(8)
    for shape in ((7, 40), (3, 5, 30)):
        base = (r.standard_normal(shape) * 3).astype(dtype)
        src = (r.standard_normal(shape) * 3).astype(dtype)
        for tgt in (base, base.T.copy().T):
            for d in range(len(shape)):
                i = r.integers(0, shape[d], shape)
                got = jtorch.from_numpy(tgt.copy()).scatter_add(d, jtorch.from_numpy(i),
                                                               jtorch.from_numpy(src))
                want = torch.from_numpy(tgt.copy()).scatter_add(d, torch.from_numpy(i),
                                                               torch.from_numpy(src))
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=1e-5)
                b = i.copy()
                b.reshape(-1)[4] = shape[d]
                b.reshape(-1)[9] = -1
                with pytest.raises(RuntimeError) as e:
                    torch.from_numpy(tgt.copy()).scatter_add(d, torch.from_numpy(b),
                                                            torch.from_numpy(src))
                raises_as(e.value, lambda b=b, d=d, tgt=tgt, src=src: jtorch.from_numpy(
                    tgt.copy()).scatter_add(d, jtorch.from_numpy(b), jtorch.from_numpy(src)))


def test_nonzero_and_masks_over_layouts_and_densities():
    """nonzero (each task's last coordinates, then its row coordinates as slice fills), x[mask]
    and masked_select against torch: empty, all and some set, 0-d to 3-D, transposed and
    strided masks, large enough for the parallel build."""
    r = np.random.default_rng(10)
    for shape in ((256, 256), (5,), (3, 4, 5), (0, 3), (2, 0), (), (7, 9000), (300000,),
                  (40, 1, 4000)):
        for p in (0.0, 0.1, 0.5, 1.0):
            a = np.asarray(r.random(shape) < p)
            for src in (a, a.T.copy().T, a[..., ::2] if a.ndim else a):
                jm, tm = jtorch.from_numpy(src), torch.from_numpy(src.copy())
                np.testing.assert_array_equal(jm.nonzero().numpy(), tm.nonzero().numpy())
                x = np.asarray(r.standard_normal(src.shape).astype(np.float32))
                jx, tx = jtorch.from_numpy(x), torch.from_numpy(x)
                np.testing.assert_array_equal(jx[jm].numpy(), tx[tm].numpy())
                np.testing.assert_array_equal(jx.nonzero().numpy(), tx.nonzero().numpy())
                np.testing.assert_array_equal(jx.masked_select(jm).numpy(),
                                              tx.masked_select(tm).numpy())
