"""Views and movement ops against torch: values, shapes, strides, storage offsets, storage
sharing (writes through a view reach the base), and torch's errors."""

import numpy as np
import pytest
import torch

import jtorch

from helpers import pair, raises_like, same, same_call

DTYPES = ["float32", "float64", "int64", "bool"]


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return np.asarray(rng.random(shape) > 0.5)
    a = rng.integers(-9, 10, size=shape)
    return np.asarray(a.astype(dtype))


def _transposed(lib, x):
    return x.transpose(0, 1) if x.dim() >= 2 else x


# -- views ----------------------------------------------------------------------------------

VIEW_CASES = [
    ((2, 3), lambda m, x: x.view(6)),
    ((2, 3), lambda m, x: x.view(-1, 2)),
    ((2, 3), lambda m, x: x.view(3, -1)),
    ((2, 3), lambda m, x: x.view(4)),
    ((2, 3), lambda m, x: x.view(-1, 4)),
    ((2, 3), lambda m, x: x.view(-1, -1)),
    ((2, 3), lambda m, x: x.view(-2, 3)),
    ((2, 3), lambda m, x: x.t().view(6)),
    ((2, 3, 4), lambda m, x: x.transpose(1, 2).view(2, 12)),
    ((2, 3, 4), lambda m, x: x.transpose(1, 2).view(2, 4, 3)),
    ((2, 3, 4), lambda m, x: x[:, 1:].view(2, 8)),
    ((2, 3, 4), lambda m, x: x[:, :, 1:3].reshape(6, 2)),
    ((4, 6), lambda m, x: x[::2].view(2, 2, 3)),
    ((2, 1, 3), lambda m, x: x.view(3, 2)),
    ((3, 1), lambda m, x: x.expand(3, 4).view(12)),
    ((3, 1), lambda m, x: x.expand(3, 4).view(3, 2, 2)),
    ((0, 3), lambda m, x: x.view(3, 0)),
    ((0, 3), lambda m, x: x.view(-1)),
    ((0, 3), lambda m, x: x.view(-1, 0)),
    ((), lambda m, x: x.view(1, 1)),
    ((), lambda m, x: x.view(-1)),
    ((6,), lambda m, x: x.view_as(m.zeros(2, 3))),
    ((2, 3), lambda m, x: x.reshape(3, 2)),
    ((2, 3), lambda m, x: x.reshape(-1)),
    ((2, 3), lambda m, x: x.t().reshape(-1)),
    ((2, 3), lambda m, x: m.reshape(x.t(), (3, 2))),
    ((2, 3), lambda m, x: x.reshape(5)),
    ((2, 3), lambda m, x: x.reshape_as(m.zeros(3, 2))),
    ((2, 3, 4), lambda m, x: x.permute(2, 0, 1)),
    ((2, 3, 4), lambda m, x: x.permute((1, 2, 0))),
    ((2, 3, 4), lambda m, x: m.permute(x, (-1, 0, 1))),
    ((2, 3), lambda m, x: x.permute(0)),
    ((2, 3), lambda m, x: x.permute(0, 0)),
    ((2, 3), lambda m, x: x.permute(0, 2)),
    ((2, 3, 4), lambda m, x: x.transpose(0, 2)),
    ((2, 3, 4), lambda m, x: x.transpose(-1, 0)),
    ((2, 3), lambda m, x: x.transpose(0, 5)),
    ((2, 3), lambda m, x: x.swapaxes(0, 1)),
    ((2, 3), lambda m, x: m.swapdims(x, 1, 0)),
    ((), lambda m, x: x.transpose(0, -1)),
    ((2, 3), lambda m, x: x.t()),
    ((3,), lambda m, x: x.t()),
    ((), lambda m, x: x.t()),
    ((2, 3, 4), lambda m, x: x.t()),
    ((2, 3), lambda m, x: x.T),
    ((2, 3, 4), lambda m, x: x.mT),
    ((2, 1, 3, 1), lambda m, x: x.squeeze()),
    ((2, 1, 3, 1), lambda m, x: x.squeeze(1)),
    ((2, 1, 3, 1), lambda m, x: x.squeeze(0)),
    ((2, 1, 3, 1), lambda m, x: x.squeeze((1, -1))),
    ((2, 1, 3, 1), lambda m, x: x.squeeze(4)),
    ((2, 1, 3, 1), lambda m, x: x.squeeze((1, 1))),
    ((), lambda m, x: x.squeeze(0)),
    ((1, 1), lambda m, x: x.squeeze()),
    ((2, 3), lambda m, x: x.unsqueeze(0)),
    ((2, 3), lambda m, x: x.unsqueeze(1)),
    ((2, 3), lambda m, x: x.unsqueeze(-1)),
    ((2, 3), lambda m, x: x.t().unsqueeze(1)),
    ((3, 1), lambda m, x: x.unsqueeze(1)),
    ((2, 3), lambda m, x: x.unsqueeze(3)),
    ((), lambda m, x: x.unsqueeze(0)),
    ((3, 1), lambda m, x: x.expand(3, 4)),
    ((3, 1), lambda m, x: x.expand(2, -1, 5)),
    ((3,), lambda m, x: x.expand(1, 2, 3)),
    ((), lambda m, x: x.expand(1)),
    ((), lambda m, x: x.expand(3, 1)),
    ((2, 3), lambda m, x: x.expand(3, 2)),
    ((2, 3), lambda m, x: x.expand(2)),
    ((2, 3), lambda m, x: x.expand(-1, 2, 3)),
    ((2, 3), lambda m, x: x.expand(1, -1, -1)),
    ((3, 1), lambda m, x: x.expand_as(m.zeros(2, 3, 4))),
    ((3, 1), lambda m, x: m.broadcast_to(x, (3, 3))),
    ((3, 1), lambda m, x: m.broadcast_tensors(x, m.zeros(2, 1, 5))[0]),
    ((2, 3, 4), lambda m, x: x.flatten()),
    ((2, 3, 4), lambda m, x: x.flatten(1)),
    ((2, 3, 4), lambda m, x: x.flatten(0, 1)),
    ((2, 3, 4), lambda m, x: x.transpose(0, 1).flatten(1)),
    ((2, 3, 4), lambda m, x: x.flatten(1, 0)),
    ((2, 3), lambda m, x: x.flatten(0, 5)),
    ((), lambda m, x: x.flatten()),
    ((2, 6), lambda m, x: x.unflatten(1, (2, 3))),
    ((2, 6), lambda m, x: x.unflatten(-1, (-1, 3))),
    ((2, 6), lambda m, x: m.unflatten(x, 0, (1, 2))),
    ((2, 3), lambda m, x: x.unflatten(1, (2, 2))),
    ((2, 3), lambda m, x: x.unflatten(-1, (2, -1))),
    ((2, 3), lambda m, x: x.unflatten(1, ())),
    ((2, 3, 4), lambda m, x: x.narrow(1, 1, 2)),
    ((2, 3, 4), lambda m, x: x.narrow(-1, -2, 2)),
    ((2, 3, 4), lambda m, x: m.narrow(x, 2, 4, 0)),
    ((2, 3), lambda m, x: x.narrow(1, 2, 2)),
    ((2, 3), lambda m, x: x.narrow(1, 4, 0)),
    ((2, 3), lambda m, x: x.narrow(1, 0, -1)),
    ((2, 3, 4), lambda m, x: x.select(1, 2)),
    ((2, 3, 4), lambda m, x: x.select(-1, -1)),
    ((2, 3), lambda m, x: x.select(1, 3)),
    ((), lambda m, x: x.select(0, 0)),
    ((2, 3, 4), lambda m, x: x.unbind(1)),
    ((2, 3, 4), lambda m, x: m.unbind(x)),
    ((5, 2), lambda m, x: x.split(2)),
    ((5, 2), lambda m, x: x.split([1, 4])),
    ((5, 2), lambda m, x: m.split(x, 1, 1)),
    ((5, 2), lambda m, x: x.split(0)),
    ((5, 2), lambda m, x: x.split([1, 1], 1)),
    ((0, 2), lambda m, x: x.split(2)),
    ((5, 2), lambda m, x: x.chunk(2)),
    ((5, 2), lambda m, x: x.chunk(3)),
    ((2, 3, 4), lambda m, x: x.chunk(5, 1)),
    ((0, 2), lambda m, x: x.chunk(3)),
    ((5, 2), lambda m, x: x.chunk(0)),
    ((5,), lambda m, x: x.tensor_split(3)),
    ((5,), lambda m, x: x.tensor_split([1, 7, 3])),
    ((5, 4), lambda m, x: m.tensor_split(x, (1, -1), 1)),
    ((4, 4), lambda m, x: m.hsplit(x, 2)),
    ((4, 4), lambda m, x: m.vsplit(x, [1])),
    ((2, 3, 4), lambda m, x: x.movedim(0, -1)),
    ((2, 3, 4), lambda m, x: m.movedim(x, (0, 1), (2, 0))),
    ((2, 3, 4), lambda m, x: m.moveaxis(x, -1, 0)),
    ((2, 3), lambda m, x: x.movedim((0, 1), (1,))),
    ((2, 3), lambda m, x: x.movedim((0, 0), (1, 0))),
    ((3, 4), lambda m, x: x.as_strided((2, 2), (1, 2), 1)),
    ((3, 4), lambda m, x: m.as_strided(x, (3, 3), (4, 1))),
    ((3, 4), lambda m, x: x[1:].as_strided((2, 2), (2, 1))),
    ((3, 4), lambda m, x: x.as_strided((2, 2), (1, 2), 10)),
    ((3, 4), lambda m, x: x.as_strided((2, 2), (-1, 2))),
    ((3, 4), lambda m, x: x.diagonal()),
    ((3, 4), lambda m, x: x.diagonal(1)),
    ((3, 4), lambda m, x: x.diagonal(-2)),
    ((3, 4), lambda m, x: x.diagonal(5)),
    ((2, 3, 4), lambda m, x: x.diagonal(1, 1, 2)),
    ((2, 3, 4), lambda m, x: m.diagonal(x, -1, 2, 1)),
    ((2, 3, 4), lambda m, x: x.diagonal(0, 0, -1)),
    ((2, 3), lambda m, x: x.diagonal(0, 0, 0)),
    ((2, 3), lambda m, x: x.view(size=(3, 2))),
    ((2, 3), lambda m, x: x.reshape(shape=(6,))),
    ((2, 3), lambda m, x: x.permute(dims=(1, 0))),
    ((2, 3), lambda m, x: x.expand(size=(2, 2, 3))),
    ((2, 3), lambda m, x: x.transpose(dim0=0, dim1=1)),
    ((1, 3), lambda m, x: x.squeeze(dim=0)),
    ((2, 3), lambda m, x: x.unsqueeze(dim=0)),
    ((2, 3), lambda m, x: x.narrow(dim=0, start=1, length=1)),
    ((2, 3), lambda m, x: x.select(dim=1, index=2)),
    ((2, 3), lambda m, x: x.split(split_size=1)),
    ((3,), lambda m, x: m.atleast_2d(x)),
    ((), lambda m, x: m.atleast_3d(x)),
    ((2, 3), lambda m, x: m.atleast_3d(x)),
]


def _torch_is_view(t_res, t_base):
    if not isinstance(t_res, torch.Tensor):
        return False
    return t_res.untyped_storage().data_ptr() == t_base.untyped_storage().data_ptr()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape,fn", VIEW_CASES)
def test_view_ops_match_torch(shape, fn, dtype):
    arr = _data(shape, dtype)
    same_call(fn, arr, strides=True)


@pytest.mark.parametrize("shape,fn", [c for c in VIEW_CASES])
def test_views_share_storage_and_version(shape, fn):
    """A write through the view is seen by the base, as in torch; version counters shared."""
    arr = _data(shape, "float32")
    j, t = pair(arr)
    try:
        tr = fn(torch, t)
    except Exception:  # noqa: BLE001
        return
    jr = fn(jtorch, j)
    trs = tr if isinstance(tr, (tuple, list)) else [tr]
    jrs = jr if isinstance(jr, (tuple, list)) else [jr]
    for a, b in zip(jrs, trs):
        if not _torch_is_view(b, t) or b.numel() == 0:
            continue
        assert a.untyped_storage().data_ptr() == j.untyped_storage().data_ptr()
        v0 = j._version
        a.fill_(42)
        b.fill_(42)
        np.testing.assert_array_equal(j.numpy(), t.numpy())
        assert j._version == a._version > v0


def test_reshape_copies_only_when_needed():
    j = jtorch.arange(6).reshape(2, 3) if hasattr(jtorch, "arange") else jtorch.tensor(
        [[0, 1, 2], [3, 4, 5]])
    assert j.reshape(3, 2)._base is (j._base if j._base is not None else j)
    c = j.t().reshape(6)
    assert c._base is None and c.is_contiguous()
    assert c.tolist() == [0, 3, 1, 4, 2, 5]


def test_view_of_view_keeps_one_base_and_offset():
    j, t = pair(_data((4, 5), "float64"))
    jv, tv = j[1:][:, 2:].t()[1], t[1:][:, 2:].t()[1]
    same(jv, tv, strides=True)
    assert jv._base is j


def test_inplace_view_methods():
    for name, args in [("t_", ()), ("transpose_", (0, 1)), ("unsqueeze_", (1,)),
                       ("squeeze_", ()), ("as_strided_", ((2, 2), (1, 2)))]:
        arr = _data((2, 3), "float32")
        j, t = pair(arr)
        getattr(j, name)(*args)
        getattr(t, name)(*args)
        same(j, t, strides=True)


# -- copying movement ops -------------------------------------------------------------------

COPY_CASES = [
    ([(2, 3), (2, 3)], lambda m, a, b: m.cat([a, b])),
    ([(2, 3), (2, 3)], lambda m, a, b: m.cat((a, b), 1)),
    ([(2, 3), (2, 3)], lambda m, a, b: m.cat([a, b], -1)),
    ([(2, 3), (2, 3)], lambda m, a, b: m.cat([a.t(), b.t()], 1)),
    ([(2, 3), (2, 3)], lambda m, a, b: m.concat([a[:, ::2], b[:, 1:]], 1)),
    ([(2, 3), (2, 3)], lambda m, a, b: m.concatenate([a, b[:1]], 0)),
    ([(2, 3), (0,)], lambda m, a, b: m.cat([a, b])),
    ([(2, 3), (0,)], lambda m, a, b: m.cat([b, a, b], 1)),
    ([(0,), (0,)], lambda m, a, b: m.cat([a, b])),
    ([(2, 0), (2, 3)], lambda m, a, b: m.cat([a, b], 1)),
    ([(2, 3), (2, 2)], lambda m, a, b: m.cat([a, b])),
    ([(2, 3), (2,)], lambda m, a, b: m.cat([a, b])),
    ([(2, 3), (2, 3)], lambda m, a, b: m.cat([a, b], 2)),
    ([(), ()], lambda m, a, b: m.cat([a, b])),
    ([(2, 3)], lambda m, a: m.cat([])),
    ([(2, 3)], lambda m, a: m.cat(a)),
    ([(2, 3), (2, 3)], lambda m, a, b: m.cat([a, b], axis=1)),
    ([(2, 3), (2, 3)], lambda m, a, b: m.stack([a, b], axis=2)),
    ([(2, 3)], lambda m, a: a.flip(dims=[0])),
    ([(2, 3)], lambda m, a: m.roll(a, shifts=1, dims=0)),
    ([(2, 3)], lambda m, a: a.repeat(repeats=(1, 2))),
    ([(2, 3)], lambda m, a: a.tile(dims=(2,))),
    ([(2, 3), (2, 3)], lambda m, a, b: m.stack([a, b])),
    ([(2, 3), (2, 3)], lambda m, a, b: m.stack([a, b], 2)),
    ([(2, 3), (2, 3)], lambda m, a, b: m.stack([a, b.t()], 1)),
    ([(2, 3), (2, 3)], lambda m, a, b: m.stack([a, b], 3)),
    ([(), ()], lambda m, a, b: m.stack([a, b])),
    ([(2, 3)], lambda m, a: m.stack([])),
    ([(3,), (3,)], lambda m, a, b: m.hstack([a, b])),
    ([(2, 3), (2, 3)], lambda m, a, b: m.hstack([a, b])),
    ([(3,), (3,)], lambda m, a, b: m.vstack([a, b])),
    ([(3,), (2, 3)], lambda m, a, b: m.vstack([a, b])),
    ([(3,), (3,)], lambda m, a, b: m.dstack([a, b])),
    ([(3,), (3, 1)], lambda m, a, b: m.column_stack([a, b])),
    ([(2, 3, 4)], lambda m, a: a.flip(0)),
    ([(2, 3, 4)], lambda m, a: m.flip(a, (0, 2))),
    ([(2, 3, 4)], lambda m, a: a.flip(-1, 1)),
    ([(2, 3, 4)], lambda m, a: a.transpose(0, 2).flip(1)),
    ([(2, 3, 4)], lambda m, a: a[:, ::2].flip(0, 1, 2)),
    ([(2, 3)], lambda m, a: a.flip(0, 0)),
    ([(2, 3)], lambda m, a: a.flip(2)),
    ([()], lambda m, a: a.flip(0)),
    ([(0, 3)], lambda m, a: a.flip(1)),
    ([(2, 3)], lambda m, a: m.fliplr(a)),
    ([(2, 3)], lambda m, a: m.flipud(a)),
    ([(3,)], lambda m, a: m.fliplr(a)),
    ([(2, 3, 4)], lambda m, a: a.roll(1, 0)),
    ([(2, 3, 4)], lambda m, a: a.roll(-1, 2)),
    ([(2, 3, 4)], lambda m, a: a.roll(5)),
    ([(2, 3, 4)], lambda m, a: m.roll(a, (1, 2), (2, 1))),
    ([(2, 3, 4)], lambda m, a: a.roll((1, 1), (2, 2))),
    ([(2, 3, 4)], lambda m, a: a.t().roll(1, 0) if a.dim() == 2 else a.transpose(0, 1).roll(2, 1)),
    ([(2, 3)], lambda m, a: a.roll(1, (0, 1))),
    ([(2, 3)], lambda m, a: a.roll((1, 1), 0)),
    ([(3,)], lambda m, a: a.roll(1, 1)),
    ([(0, 3)], lambda m, a: a.roll(1, 0)),
    ([()], lambda m, a: a.roll(1)),
    ([(2, 3)], lambda m, a: a.repeat(2, 1)),
    ([(2, 3)], lambda m, a: a.repeat(2, 3, 2)),
    ([(2, 3)], lambda m, a: a.t().repeat((1, 2))),
    ([(2, 3)], lambda m, a: a.repeat(0, 2)),
    ([(2, 3)], lambda m, a: a.repeat(2)),
    ([(3,)], lambda m, a: a.repeat(-1)),
    ([()], lambda m, a: a.repeat(3)),
    ([(2, 3)], lambda m, a: a.tile(2)),
    ([(2, 3)], lambda m, a: m.tile(a, (2, 1, 2))),
    ([(3,)], lambda m, a: a.tile((2, 2))),
    ([(3, 4)], lambda m, a: a.tril()),
    ([(3, 4)], lambda m, a: a.triu()),
    ([(3, 4)], lambda m, a: m.tril(a, 1)),
    ([(3, 4)], lambda m, a: m.triu(a, -1)),
    ([(2, 3, 4)], lambda m, a: a.tril(-2)),
    ([(2, 3, 4)], lambda m, a: a.transpose(1, 2).triu(1)),
    ([(2, 3, 4)], lambda m, a: a.triu(10)),
    ([(0, 3)], lambda m, a: a.triu()),
    ([(3,)], lambda m, a: a.tril()),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes,fn", COPY_CASES)
def test_copying_movement_ops_match_torch(shapes, fn, dtype):
    arrays = [_data(s, dtype, seed=i) for i, s in enumerate(shapes)]
    result = same_call(fn, *arrays)
    if result is None:
        return  # torch raised, and jtorch raised alike
    jr, tr = result
    if isinstance(tr, torch.Tensor) and tr.is_contiguous() and tr.numel():
        assert jr.is_contiguous() and jr.stride() == tr.stride()
        # A copy: writing it does not touch the inputs.
        assert jr._base is None or jr.numel() == 0


def test_flip_keeps_a_dense_layout():
    arr = _data((2, 3, 4), "float32")
    for fn in (lambda m, a: a.transpose(0, 2).flip(1), lambda m, a: a.permute(1, 2, 0).flip(0, 2)):
        jr, tr = same_call(fn, arr)
        assert jr.stride() == tr.stride()


def test_cat_promotes_dtypes():
    for da, db in [("int64", "float32"), ("bool", "int64"), ("float32", "float64"),
                   ("bool", "float32"), ("int64", "bool")]:
        same_call(lambda m, a, b: m.cat([a, b]), _data((2, 2), da), _data((3, 2), db, 1))


def test_cat_out_and_float16():
    a, b = _data((2, 2), "float32"), _data((1, 2), "float32")
    jo, to = jtorch.empty(0), torch.empty(0)
    jtorch.cat([jtorch.from_numpy(a), jtorch.from_numpy(b)], out=jo)
    torch.cat([torch.from_numpy(a), torch.from_numpy(b)], out=to)
    same(jo, to, strides=True)
    h = _data((2, 3), "float16")
    same_call(lambda m, x: m.cat([x, x.flip(0)], 1), h)
    same_call(lambda m, x: m.cat([x, x.long()]) if False else m.cat([x.double(), x], 1), h)
    with pytest.raises(TypeError, match="can't be cast"):
        jtorch.cat([jtorch.ones(2)], out=jtorch.empty(0, dtype=jtorch.int64))


def test_inplace_tril_triu_bump_version():
    for name in ("tril_", "triu_"):
        arr = _data((3, 4), "float64")
        j, t = pair(arr)
        v = j._version
        getattr(j.t(), name)(1)
        getattr(t.t(), name)(1)
        np.testing.assert_array_equal(j.numpy(), t.numpy())
        assert j._version > v


@pytest.mark.parametrize("dtype", ["float16", "int8", "int32", "uint8", "complex64",
                                   "complex128"])
def test_other_dtypes_move_bits(dtype):
    arr = (_data((3, 4), "int64")).astype(dtype)
    for fn in (lambda m, a: a.flip(1), lambda m, a: m.cat([a, a.t().t()], 0),
               lambda m, a: a.t().roll(1, 0), lambda m, a: a.repeat(2, 1),
               lambda m, a: a.triu(1), lambda m, a: a.t().reshape(12)):
        same_call(fn, arr)


def test_parallel_kernels_match_serial(monkeypatch):
    """Above the grain size the prange variants run; they must give the same results."""
    monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 16)
    monkeypatch.setattr(jtorch.kernels.cpu.movement, "BLOCK", 5)
    arr = _data((3, 7, 11), "float32")
    for fn in (lambda m, a: a.flip(2), lambda m, a: a.transpose(0, 2).flip(0),
               lambda m, a: a.tril(2), lambda m, a: m.cat([a, a], 2)):
        same_call(fn, arr)


def test_view_dtype_same_itemsize():
    arr = _data((2, 3), "float32")
    jr, _ = same_call(lambda m, x: x.view(m.int32), arr, strides=True)
    assert jr._base is not None


def test_ops_report_to_the_autograd_hook(monkeypatch):
    """Views and copies call dispatch.record with their OpDef, inputs and kwargs (the hook
    runs when an input requires grad)."""
    from jtorch import dispatch

    seen = []
    monkeypatch.setattr(dispatch, "grad_hook", lambda op, ins, out, kw: seen.append((op, kw)))
    x = jtorch.zeros(2, 3, requires_grad=True)
    x.permute(1, 0)
    x.reshape(6)
    jtorch.cat([x, x], 1)
    x[jtorch.tensor([1, 0])]
    x.gather(1, jtorch.tensor([[0], [2]]))
    names = [op.name for op, _ in seen]
    assert names == ["permute", "view", "cat", "index", "gather"]
    assert seen[0][1] == {"dims": (1, 0)} and seen[2][1] == {"dim": 1}


@pytest.mark.parametrize("call", [
    lambda m: m.as_strided(m.arange(6.0), 2, (1,)),
    lambda m: m.as_strided(m.arange(6.0), (2,), 1),
    lambda m: m.arange(6.0).as_strided(2, (1,)),
    lambda m: m.arange(6.0).as_strided_((2,), 1),
    lambda m: m.arange(6.0).as_strided([2], [1], 1.5),
    lambda m: m.flip(m.arange(6.0)),
    lambda m: m.flip(m.arange(6.0), 0),
    lambda m: m.arange(6.0).flip(),
    lambda m: m.arange(6.0).flip(dims=0),
    lambda m: m.tile(m.arange(6.0)),
    lambda m: m.tile(m.arange(6.0), 2),
    lambda m: m.arange(6.0).tile(),
    lambda m: m.arange(6.0).tile(dims=2),
])
def test_tuple_of_ints_arguments_refuse_what_torch_refuses(call):
    raises_like(lambda: call(jtorch), lambda: call(torch))


@pytest.mark.parametrize("call", [
    lambda m: m.arange(6.0).flip(0),
    lambda m: m.arange(6.0).reshape(2, 3).flip(0, 1),
    lambda m: m.arange(6.0).flip(dims=[0]),
    lambda m: m.arange(6.0).tile(2),
    lambda m: m.arange(6.0).tile(2, 3),
    lambda m: m.arange(6.0).as_strided(m.Size([2]), [2], 1),
])
def test_tuple_of_ints_argument_forms_torch_accepts(call):
    same(call(jtorch), call(torch), strides=True)


def test_data_ptr_reads_numpy_arrays_address():
    """shape.data_ptr (the view rules' storage offsets) against NumPy's own report."""
    from jtorch.shape import data_ptr, elem_offset

    base = np.arange(60.0)
    for a in (base, base[7:], base.reshape(3, 4, 5)[:, 1:, ::2], base.reshape(6, 10).T[2:, 3:],
              np.empty(0), base[60:]):
        assert data_ptr(a) == a.__array_interface__["data"][0]
    x = jtorch.arange(60.0).reshape(3, 4, 5)
    for v, t in ((x[1:, 2], torch.arange(60.0).reshape(3, 4, 5)[1:, 2]),
                 (x.transpose(0, 2)[3:], torch.arange(60.0).reshape(3, 4, 5).transpose(0, 2)[3:])):
        assert v.storage_offset() == t.storage_offset() == elem_offset(v._a, v._st)
