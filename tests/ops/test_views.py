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


# -- cat / stack: one kernel call over all inputs ------------------------------------------------

MANY_DTYPES = ["float32", "float64", "float16", "int64", "int8", "uint8", "bool", "complex64"]


def _samples(lib, n, shape, dtype, layout):
    """``n`` tensors of ``shape`` laid out as ``layout``: row-major, views of one storage (the
    rows a DataLoader indexes), transposed, stepped, or broadcast (expanded)."""
    base = lib.from_numpy(_data((n,) + shape, dtype))
    if layout == "contiguous":
        return [base[i].clone() for i in range(n)]
    if layout == "rows":
        return [base[i] for i in range(n)]
    if layout == "transposed":
        return [base[i].t() if len(shape) >= 2 else base[i] for i in range(n)]
    if layout == "stepped":
        wide = lib.from_numpy(_data((n,) + shape[:-1] + (2 * shape[-1],), dtype)) if shape else base
        return [wide[i][..., ::2] if shape else wide[i] for i in range(n)]
    return [base[i][..., :1].expand(shape) if shape else base[i] for i in range(n)]


@pytest.mark.parametrize("dtype", MANY_DTYPES)
@pytest.mark.parametrize("layout", ["contiguous", "rows", "transposed", "stepped", "broadcast"])
@pytest.mark.parametrize("shape", [(6,), (2, 3), (), (0, 3)])
def test_stack_and_cat_of_many_inputs_match_torch(shape, layout, dtype):
    js, ts = _samples(jtorch, 64, shape, dtype, layout), _samples(torch, 64, shape, dtype, layout)
    for d in range(-len(shape) - 1, len(shape) + 1):
        same(jtorch.stack(js, d), torch.stack(ts, d), strides=True)
    for d in range(-len(shape), len(shape)):
        same(jtorch.cat(js, d), torch.cat(ts, d), strides=True)


@pytest.mark.parametrize("da,db", [("int64", "float32"), ("float16", "int64"), ("uint8", "int8"),
                                   ("bool", "uint8"), ("float32", "complex64"),
                                   ("float16", "float64"), ("int32", "bool"),
                                   ("complex64", "float64")])
def test_stack_and_cat_promote_mixed_dtypes_as_torch(da, db):
    a, b = _data((3, 4), da), _data((3, 4), db, seed=1)
    for fn in (lambda m, x, y: m.cat([x, y, x]), lambda m, x, y: m.cat([x.t(), y.t()], 1),
               lambda m, x, y: m.stack([x, y, x], 1), lambda m, x, y: m.stack([y, x.t().t()], 2),
               lambda m, x, y: m.cat([x[:0], y]), lambda m, x, y: m.stack([x[0, 0], y[1, 1]])):
        same_call(fn, a, b, strides=True)


def test_stack_and_cat_keep_negative_zero_and_nan_bits():
    vals = np.array([-0.0, np.nan, -np.nan, np.inf, 1.5], np.float32)
    vals.view(np.uint32)[2] = 0x7FC12345  # a payload
    for dtype in (np.float32, np.float16, np.float64):
        a = vals.astype(dtype)
        if dtype is np.float32:
            a = vals
        x = jtorch.from_numpy(a)
        for r, parts in [(jtorch.cat([x, x[1:]]), [a, a[1:]]), (jtorch.stack([x, x]), [a, a])]:
            want = np.concatenate([p.reshape(-1) for p in parts])
            np.testing.assert_array_equal(r.numpy().reshape(-1).view(np.uint8), want.view(np.uint8))
    # a widening cast keeps the sign of zero and makes nan a nan
    r = jtorch.cat([jtorch.from_numpy(vals), jtorch.zeros(1, dtype=jtorch.float64)])
    assert np.signbit(r.numpy()[0]) and np.isnan(r.numpy()[1]) and r.dtype is jtorch.float64


def test_stack_and_cat_errors_match_torch():
    for make in (lambda m: m.stack([m.zeros(2), m.zeros(3)]),
                 lambda m: m.stack([m.zeros(2)] * 40 + [m.zeros(2, 1)]),
                 lambda m: m.cat([m.zeros(2, 3), m.zeros(2, 4), m.tensor(1.0)]),
                 lambda m: m.cat([m.zeros(2, 3)] * 5 + [m.zeros(3, 3)], 1),
                 lambda m: m.cat([m.zeros(2, 3), m.zeros(2, 3, 1)]),
                 lambda m: m.cat([m.zeros(0), m.tensor(1.0)]),
                 lambda m: m.cat([m.zeros(2), 3]),
                 lambda m: m.stack((m.zeros(2), [1, 2])),
                 lambda m: m.stack(m.zeros(2, 2)),
                 lambda m: m.stack([m.zeros(2)], 2)):
        raises_like(lambda make=make: make(jtorch), lambda make=make: make(torch))


def test_stack_and_cat_accept_tuples_and_parameters():
    with jtorch.no_grad():
        p = jtorch.nn.Parameter(jtorch.ones(2))
        assert jtorch.stack((p, jtorch.zeros(2))).tolist() == [[1.0, 1.0], [0.0, 0.0]]
        assert jtorch.cat((jtorch.zeros(1), p)).tolist() == [0.0, 1.0, 1.0]
    raises_like(lambda: jtorch.cat(x for x in [jtorch.ones(1)]),
                lambda: torch.cat(x for x in [torch.ones(1)]))


def test_stack_and_cat_gradients_match_torch():
    """Inputs that do not require grad get none; a mixed-dtype input gets its own dtype back;
    1-D empty inputs (skipped by cat) get an empty gradient."""
    rng = np.random.default_rng(0)
    arrs = [rng.standard_normal((2, 3)) for _ in range(5)]
    for fn in (lambda m, xs: m.stack(xs, 1), lambda m, xs: m.stack(xs, -1),
               lambda m, xs: m.cat(xs, 1), lambda m, xs: m.cat([xs[0], xs[4][0, :0], xs[2]], 0),
               lambda m, xs: m.cat([x.t() for x in xs], 0),
               lambda m, xs: m.stack([xs[0].float(), xs[2]], 0)):
        grads = []
        for m in (jtorch, torch):
            xs = [m.tensor(a, requires_grad=i % 2 == 0) for i, a in enumerate(arrs)]
            out = fn(m, xs)
            w = m.from_numpy(np.random.default_rng(1).standard_normal(tuple(out.shape)))
            (out * w.to(out.dtype)).sum().backward()
            grads.append([x.grad for x in xs])
        same(grads[0], grads[1], rtol=1e-6)


def test_stack_and_cat_backward_is_one_view_op(monkeypatch):
    """The vjp of a stack of 64 is one ``unbind`` (and of a cat one ``split_with_sizes``): views
    of the gradient, not one select or narrow per input."""
    from jtorch.kernels.defs import view as V

    calls = []

    def spy(meta, name):
        return lambda *a, **k: calls.append(name) or meta(*a, **k)

    for name in ("unbind_op", "split_with_sizes_op", "select_op", "narrow_op"):
        op = getattr(V, name)
        monkeypatch.setattr(op, "meta", spy(op.meta, name))
    xs = [jtorch.ones(3, requires_grad=True) for _ in range(64)]
    jtorch.stack(xs).sum().backward()
    jtorch.cat(xs).sum().backward()
    assert sorted(calls) == ["split_with_sizes_op", "unbind_op"]
    assert all(x.grad.tolist() == [2.0, 2.0, 2.0] for x in xs)


def test_axis_alias_of_select_narrow_gather_index_select():
    """torch's argument parser takes ``axis=`` for ``dim`` in these too (function and method)."""
    x = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    idx = np.array([[2, 0, 1, 1]])
    for lib in (torch, jtorch):
        t, i = lib.from_numpy(x.copy()), lib.from_numpy(idx.copy())
        got = [lib.select(t, axis=1, index=2), t.select(axis=0, index=1),
               lib.narrow(t, axis=1, start=1, length=2), t.narrow(axis=0, start=1, length=1),
               lib.gather(t, axis=0, index=i), t.gather(axis=0, index=i),
               lib.index_select(t, axis=1, index=i[0]), t.index_select(axis=0, index=i[0, :2])]
        if lib is torch:
            want = [g.numpy() for g in got]
        else:
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g.numpy(), w)
        with pytest.raises(TypeError):
            lib.select(t, index=1)
        with pytest.raises(TypeError):
            lib.gather(t)


def test_a_strided_reshape_is_decided_once_per_geometry():
    """Whether a strided reshape is a view or a copy is memoised per geometry (``_view_meta``,
    ``_view_cpu``): the second call decides as the first, for each dtype."""
    for dtype in (jtorch.float32, jtorch.float64, jtorch.int16):
        a = jtorch.arange(24, dtype=dtype).reshape(4, 6)
        ta = torch.arange(24, dtype=getattr(torch, str(dtype).split(".")[1])).reshape(4, 6)
        for _ in range(2):
            c = a.t().reshape(-1)  # no view fits: a copy
            assert c._base is None and c.tolist() == ta.t().reshape(-1).tolist()
            v = a[::2].reshape(2, 2, 3)  # a view of the strided rows
            assert v._base is a._base and v.stride() == ta[::2].reshape(2, 2, 3).stride()
            with pytest.raises(RuntimeError, match="view size is not compatible"):
                a.t().view(-1)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "complex64"])
def test_tril_triu_split_each_row_at_its_diagonal(dtype):
    """Each row is a copy up to (tril) or from (triu) column i + k and zeros on the other
    side, for diagonals off either edge, wide, tall and batched inputs, strided sources and
    the in-place forms, against torch."""
    r = np.random.default_rng(9)
    for shape in ((5, 7), (7, 5), (2, 3, 4, 6), (1, 1), (0, 3), (3, 300)):
        a = (r.standard_normal(shape) * 3).astype(dtype)
        for src in (a, a.T.copy().T, a[..., ::2]):
            for k in (-400, -3, -1, 0, 1, 2, 5, 400):
                for f in ("tril", "triu"):
                    want = getattr(torch.from_numpy(src.copy()), f)(k).numpy()
                    np.testing.assert_array_equal(getattr(jtorch.from_numpy(src), f)(k).numpy(),
                                                  want)
                    t = jtorch.from_numpy(src.copy())
                    getattr(t, f + "_")(k)
                    np.testing.assert_array_equal(t.numpy(), want)


def test_span_of_strided_views_is_the_memory_they_touch():
    """``shape.span``: a row-major 1-D array from a view's first element over every element it
    touches (a slice of its base where that is a row-major array of its dtype, else a strided
    view), the same memory and values as the reference; a read-only view stays read-only."""
    from jtorch.shape import data_ptr, span

    def reference(a):
        isz = a.itemsize
        n = 1 + sum((k - 1) * (s // isz) for k, s in zip(a.shape, a.strides)) if a.size else 0
        return np.lib.stride_tricks.as_strided(a, shape=(n,), strides=(isz,))

    base = np.arange(10000, dtype=np.float32)
    m = base.reshape(100, 100)
    views = [m[:, ::2], m.T, base[5:].reshape(5, 1999)[:, 3:10], m[10:20, 5:7].T, m[:, :0],
             base.view(np.int32).reshape(100, 100)[:, ::3],
             base.view(np.uint8).reshape(400, 100)[:, ::2], np.broadcast_to(base[:10], (5, 10)),
             m[::2], jtorch.from_numpy(m).t()[3:]._a]
    for v in views:
        got, want = span(v), reference(v)
        assert got.flags.c_contiguous and got.dtype == want.dtype and got.shape == want.shape
        assert not got.size or data_ptr(got) == data_ptr(want)
        assert got.flags.writeable == v.flags.writeable
        np.testing.assert_array_equal(got, want)
