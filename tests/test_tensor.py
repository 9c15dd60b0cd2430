"""The Tensor core surface vs torch: metadata, conversion to Python/NumPy, construction,
dtype conversion, in-place ops and ``out=``, operators with Python scalars, and the errors."""

from __future__ import annotations

import math
import operator
import warnings

import numpy as np
import pytest
import torch

import jtorch

from helpers import raises_like

DTYPES = ["float32", "float64", "int64", "int32", "uint8", "bool", "float16"]


def _both(arr: np.ndarray, view=None):
    """The same data (and the same NumPy view of it) as a jtorch and a torch tensor."""
    j, t = jtorch.from_numpy(arr.copy()), torch.from_numpy(arr.copy())
    if view is not None:
        j, t = jtorch.from_numpy(view(j.numpy())), torch.from_numpy(view(t.numpy()))
    return j, t


def assert_same(j, t):
    assert isinstance(j, jtorch.Tensor)
    assert str(j.dtype) == str(t.dtype), (j.dtype, t.dtype)
    assert tuple(j.shape) == tuple(t.shape)
    np.testing.assert_array_equal(j.numpy(), t.numpy())


def raises_same(fn):
    """fn(jtorch) raises what fn(torch) raises."""
    raises_like(lambda: fn(jtorch), lambda: fn(torch))


_BASE = np.arange(24, dtype=np.float32).reshape(4, 6) - 7.5
LAYOUTS = {
    "1d": (np.arange(5.0, dtype=np.float32), None),
    "0d": (np.array(3.5, np.float32), None),
    "0size": (np.zeros((2, 0, 3), np.float32), None),
    "2d": (_BASE, None),
    "transposed": (_BASE, lambda a: a.T),
    "step-sliced": (_BASE, lambda a: a[::2, 1::2]),
    "offset-row": (_BASE, lambda a: a[1:, 2:]),
    "size1-dims": (_BASE.reshape(4, 1, 6), lambda a: a[:, :, ::3]),
}


# -- metadata ----------------------------------------------------------------------------------

@pytest.mark.parametrize("layout", LAYOUTS)
def test_metadata_matches_torch(layout):
    arr, view = LAYOUTS[layout]
    j, t = _both(arr, view)
    assert j.shape == t.shape and isinstance(j.shape, tuple)
    assert repr(j.shape) == repr(t.shape) and repr(j.size()) == repr(t.size())
    assert j.dim() == t.dim() == j.ndim == j.ndimension()
    assert j.numel() == t.numel() == j.nelement()
    assert j.stride() == t.stride()
    assert j.storage_offset() == t.storage_offset()
    assert j.is_contiguous() == t.is_contiguous()
    assert str(j.dtype) == str(t.dtype)
    assert str(j.device) == str(t.device) == "cpu" and repr(j.device) == repr(t.device)
    assert j.is_cuda is False and j.is_cpu is True
    assert j.element_size() == t.element_size() and j.itemsize == t.itemsize
    assert j.nbytes == t.nbytes
    for d in range(-j.dim(), j.dim()):
        assert j.size(d) == t.size(d) and j.stride(d) == t.stride(d)
    for d in (j.dim(), -j.dim() - 1):
        raises_like(lambda d=d: j.size(d), lambda d=d: t.size(d))
        raises_like(lambda d=d: j.stride(d), lambda d=d: t.stride(d))


@pytest.mark.parametrize("layout", LAYOUTS)
def test_contiguous_and_clone(layout):
    arr, view = LAYOUTS[layout]
    j, t = _both(arr, view)
    c = j.contiguous()
    assert c.is_contiguous() and (c is j) == j.is_contiguous()
    assert c.stride() == t.contiguous().stride()
    np.testing.assert_array_equal(c.numpy(), t.contiguous().numpy())
    k = j.clone()
    assert k.stride() == t.clone().stride() and k.dtype is j.dtype
    np.testing.assert_array_equal(k.numpy(), j.numpy())
    if k.numel():
        k.fill_(100)  # a clone owns its memory
        assert not np.any(j.numpy() == 100)


def test_is_contiguous_ignores_strides_of_size_one_dims():
    a = np.zeros((3, 1, 4), np.float32)
    j = jtorch.from_numpy(np.lib.stride_tricks.as_strided(a, (3, 1, 4), (16, 4, 4)))
    t = torch.from_numpy(np.lib.stride_tricks.as_strided(a.copy(), (3, 1, 4), (16, 4, 4)))
    assert j.is_contiguous() == t.is_contiguous() is True


# -- Python / NumPy conversion -----------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_item_and_tolist_types(dtype):
    arr = np.array([[1, 0, 3]], dtype=dtype)
    j, t = _both(arr)
    assert j.tolist() == t.tolist()
    assert [type(v) for v in j.tolist()[0]] == [type(v) for v in t.tolist()[0]]
    j0, t0 = _both(np.array(arr[0, 2]))
    assert j0.item() == t0.item() and type(j0.item()) is type(t0.item())
    assert j0.tolist() == t0.tolist() and type(j0.tolist()) is type(t0.tolist())
    assert type(j[0, 0].item()) is type(t[0, 0].item())


def test_item_errors_match_torch():
    raises_like(lambda: jtorch.tensor([1, 2]).item(), lambda: torch.tensor([1, 2]).item())
    raises_like(lambda: jtorch.tensor([]).item(), lambda: torch.tensor([]).item())
    assert jtorch.tensor([[7]]).item() == 7


def test_python_number_conversions():
    for v in (3.7, -2.5, 0.0):
        assert int(jtorch.tensor(v)) == int(torch.tensor(v))
        assert float(jtorch.tensor([v])) == float(torch.tensor([v]))
    assert complex(jtorch.tensor(2.0)) == complex(torch.tensor(2.0))
    raises_like(lambda: int(jtorch.tensor([1, 2])), lambda: int(torch.tensor([1, 2])))
    raises_like(lambda: float(jtorch.tensor([1.0, 2.0])), lambda: float(torch.tensor([1.0, 2.0])))
    assert [10, 20, 30][jtorch.tensor(1)] == 20
    assert operator.index(jtorch.tensor([2])) == 2
    raises_like(lambda: operator.index(jtorch.tensor(2.0)), lambda: operator.index(torch.tensor(2.0)))
    raises_like(lambda: operator.index(jtorch.tensor([1, 2])),
                lambda: operator.index(torch.tensor([1, 2])))
    assert f"{jtorch.tensor(1.5):.2f}" == f"{torch.tensor(1.5):.2f}"


def test_numpy_shares_memory_and_requires_grad_error():
    j = jtorch.tensor([1.0, 2.0])
    a = j.numpy()
    a[0] = 5.0
    assert j.tolist() == [5.0, 2.0]
    assert np.asarray(j).base is not None or np.shares_memory(np.asarray(j), a)
    assert np.array(j, dtype=np.float64).dtype == np.float64
    np.testing.assert_array_equal(np.asarray(j), [5.0, 2.0])
    g = jtorch.tensor([1.0], requires_grad=True)
    raises_like(lambda: g.numpy(), lambda: torch.tensor([1.0], requires_grad=True).numpy())
    np.testing.assert_array_equal(g.detach().numpy(), [1.0])


def test_len_iter_bool():
    j, t = _both(np.arange(6, dtype=np.int64).reshape(3, 2))
    assert len(j) == len(t) == 3
    rows = list(j)
    assert len(rows) == 3 and all(isinstance(r, jtorch.Tensor) for r in rows)
    assert [r.tolist() for r in rows] == [r.tolist() for r in t]
    assert [type(x) for x in jtorch.tensor([1.0, 2.0])] == [jtorch.Tensor] * 2
    raises_like(lambda: len(jtorch.tensor(1)), lambda: len(torch.tensor(1)))
    raises_like(lambda: iter(jtorch.tensor(1)), lambda: iter(torch.tensor(1)))
    for v in ([0.0], [2], [True], [False], 0.5, [[0]]):
        assert bool(jtorch.tensor(v)) == bool(torch.tensor(v))
    raises_like(lambda: bool(jtorch.tensor([1, 2])), lambda: bool(torch.tensor([1, 2])))
    raises_like(lambda: bool(jtorch.tensor([])), lambda: bool(torch.tensor([])))
    assert bool(jtorch.tensor(math.nan)) == bool(torch.tensor(math.nan))


@pytest.mark.parametrize("make", [
    lambda m: m.tensor([1.0, 2.5, -3.0]), lambda m: m.tensor([1, 2, 3]), lambda m: m.tensor(True),
    lambda m: m.tensor([[1.5, 2.0], [3.0, 4.0]], dtype=m.float64), lambda m: m.tensor([]),
    lambda m: m.zeros(2, 0), lambda m: m.tensor(3.25), lambda m: m.tensor([1e10, 1e-5]),
    lambda m: m.tensor([math.nan, math.inf, -math.inf, 0.0]), lambda m: m.arange(2000.0),
    lambda m: m.tensor([1, 2], dtype=m.int32), lambda m: m.tensor([0.5], dtype=m.float16),
    lambda m: m.tensor([1.0], requires_grad=True),
])
def test_repr_matches_torch(make):
    assert repr(make(jtorch)) == repr(make(torch))
    assert str(make(jtorch)) == str(make(torch))


# -- construction ------------------------------------------------------------------------------

@pytest.mark.parametrize("data", [
    1, 2.5, True, [1, 2], [1.0, 2], [True, False], [True, 2], [[1, 2], [3, 4]], [],
    [[], []], np.array([1, 2], np.int32), np.array([1.5], np.float64), np.float32(2.5),
    np.array(True), (1, 2.5), 1 + 2j,
    [np.float64(1.0), 2], [np.float32(1.0), 2], [np.int16(3), np.int16(4)],
], ids=repr)
def test_tensor_infers_dtype_and_values_like_torch(data):
    j, t = jtorch.tensor(data), torch.tensor(data)
    assert_same(j, t)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "int16", "uint8", "bool", "float16"])
def test_tensor_with_dtype(dtype):
    data = [[0.0, 1.5], [-2.7, 3.0]]
    if dtype == "uint8":
        data = [[0.0, 1.5], [2.7, 3.0]]
    assert_same(jtorch.tensor(data, dtype=getattr(jtorch, dtype)),
                torch.tensor(data, dtype=getattr(torch, dtype)))


def test_tensor_copies_and_errors():
    a = np.array([1.0, 2.0])
    j = jtorch.tensor(a)
    a[0] = 9.0
    assert j.tolist() == [1.0, 2.0]
    src = jtorch.tensor([1, 2])
    assert jtorch.tensor(src).tolist() == [1, 2] and jtorch.tensor(src)._st is not src._st
    for bad in ([[1, 2], [3]], "abc"):
        with pytest.raises(Exception) as te:
            torch.tensor(bad)
        with pytest.raises(type(te.value)):
            jtorch.tensor(bad)


def test_as_tensor_and_from_numpy_share_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    f = jtorch.from_numpy(a)
    a[0, 0] = 42.0
    assert f[0, 0].item() == 42.0
    f.add_(1.0)
    assert a[0, 0] == 43.0
    assert np.shares_memory(jtorch.as_tensor(a).numpy(), a)
    assert not np.shares_memory(jtorch.as_tensor(a, dtype=jtorch.float64).numpy(), a)
    t = jtorch.tensor([1.0])
    assert jtorch.as_tensor(t) is t
    assert jtorch.as_tensor([1, 2]).dtype is jtorch.int64
    strided = np.arange(10.0)[::2]
    g = jtorch.from_numpy(strided)
    assert g.stride() == torch.from_numpy(strided).stride() == (2,)
    strided[1] = -1.0
    assert g[1].item() == -1.0
    raises_like(lambda: jtorch.from_numpy(np.arange(3.0)[::-1]),
                lambda: torch.from_numpy(np.arange(3.0)[::-1]))
    with pytest.raises(TypeError):
        jtorch.from_numpy([1, 2])
    with pytest.raises(TypeError):
        torch.from_numpy(np.array(["a"]))
    with pytest.raises(TypeError):
        jtorch.from_numpy(np.array(["a"]))


def test_isinstance_and_is_tensor():
    j = jtorch.tensor([1.0])
    assert isinstance(j, jtorch.Tensor) and type(j) is jtorch.Tensor
    assert jtorch.is_tensor(j) and not jtorch.is_tensor([1.0]) and not jtorch.is_tensor(1.0)
    assert isinstance(j + 1, jtorch.Tensor) and isinstance(j[0], jtorch.Tensor)
    assert isinstance(jtorch.Tensor([1.0, 2.0]), jtorch.Tensor)
    assert jtorch.Tensor([1, 2]).dtype is jtorch.float32
    assert jtorch.Tensor(2, 3).shape == (2, 3)


# -- dtype conversion --------------------------------------------------------------------------

_CONVERT = ["float", "double", "half", "long", "int", "short", "char", "byte", "bool"]


@pytest.mark.parametrize("method", _CONVERT)
@pytest.mark.parametrize("src", ["float32", "float64", "int64", "bool"])
def test_dtype_conversion_methods_match_torch(method, src):
    vals = {"float32": [0.0, 1.5, -1.5, 2.7, -0.0, 100.25], "float64": [0.0, 1.5, -1.5, 2.7, -0.0, 100.25],
            "int64": [0, 1, -1, 7, 100, -128], "bool": [True, False, True, True, False, False]}[src]
    if method == "byte" and src != "bool":
        vals = [abs(v) for v in vals]  # negative float -> uint8 is undefined in C++
    j = jtorch.tensor(vals, dtype=getattr(jtorch, src))
    t = torch.tensor(vals, dtype=getattr(torch, src))
    assert_same(getattr(j, method)(), getattr(t, method)())
    jt, tt = j._view(j._a[::2]), t[::2]  # non-contiguous source
    assert_same(getattr(jt, method)(), getattr(tt, method)())


def test_to_and_type():
    j, t = jtorch.tensor([1.5, -2.5]), torch.tensor([1.5, -2.5])
    assert j.to(jtorch.float32) is j
    assert j.to(jtorch.float32, copy=True) is not j
    assert_same(j.to(jtorch.int32), t.to(torch.int32))
    assert_same(j.to(dtype=jtorch.float64), t.to(dtype=torch.float64))
    assert_same(j.to(jtorch.tensor([1])), t.to(torch.tensor([1])))
    assert_same(j.to("cpu", jtorch.float16), t.to("cpu", torch.float16))
    assert j.to("cpu") is j
    assert j.type() == t.type() == "torch.FloatTensor"
    assert jtorch.tensor([1]).type() == torch.tensor([1]).type()
    assert jtorch.tensor([True]).type() == torch.tensor([True]).type()
    assert_same(j.type(jtorch.int64), t.type(torch.int64))
    assert_same(j.type("torch.DoubleTensor"), t.type("torch.DoubleTensor"))
    raises_like(lambda: j.type("foo"), lambda: t.type("foo"))
    assert_same(jtorch.tensor([1, 2]).float(), torch.tensor([1, 2]).float())


def test_float_to_int_conversion_truncates_and_float16_rounds():
    vals = [0.5, 1.5, 2.5, -0.5, -1.5, 65519.0, 65520.0, 1e-8, 70000.0]
    assert_same(jtorch.tensor(vals).half(), torch.tensor(vals).half())
    assert_same(jtorch.tensor(vals).half().float(), torch.tensor(vals).half().float())
    vals = [0.9, -0.9, 1.99, -1.99, 1e9]
    assert_same(jtorch.tensor(vals, dtype=jtorch.float64).long(),
                torch.tensor(vals, dtype=torch.float64).long())
    assert_same(jtorch.tensor([math.nan, 0.0, -0.0, 0.1]).bool(),
                torch.tensor([math.nan, 0.0, -0.0, 0.1]).bool())


# -- in-place ops and out= ---------------------------------------------------------------------

def test_inplace_returns_self_and_bumps_version():
    j = jtorch.tensor([1.0, 2.0])
    v = j._version
    r = j.add_(1)
    assert r is j and j.tolist() == [2.0, 3.0] and j._version > v
    j.mul_(jtorch.tensor([2.0, 0.5])).sub_(1, alpha=2).div_(2)
    t = torch.tensor([1.0, 2.0]).add_(1).mul_(torch.tensor([2.0, 0.5])).sub_(1, alpha=2).div_(2)
    assert_same(j, t)
    i = jtorch.tensor([7, -7])
    i //= 2
    i %= 3
    i <<= 1
    ti = torch.tensor([7, -7])
    ti //= 2
    ti %= 3
    ti <<= 1
    assert_same(i, ti)


def test_inplace_through_a_view_writes_the_base():
    base = np.arange(12.0).reshape(3, 4)
    j, t = _both(base)
    jv, tv = j.T, t.T
    jv.mul_(2.0)
    tv.mul_(2.0)
    assert_same(j, t)
    j[1:, ::2].add_(100)
    t[1:, ::2].add_(100)
    assert_same(j, t)


@pytest.mark.parametrize("jfn, tfn", [
    (lambda: jtorch.tensor([1, 2]).add_(1.5), lambda: torch.tensor([1, 2]).add_(1.5)),
    (lambda: jtorch.tensor([1, 2]).div_(2), lambda: torch.tensor([1, 2]).div_(2)),
    (lambda: jtorch.tensor([True]).add_(2), lambda: torch.tensor([True]).add_(2)),
    (lambda: jtorch.tensor([1, 2]).mul_(jtorch.tensor([1.0, 2.0])),
     lambda: torch.tensor([1, 2]).mul_(torch.tensor([1.0, 2.0]))),
    (lambda: jtorch.tensor([1.0]).add_(jtorch.tensor([[1.0], [2.0]])),
     lambda: torch.tensor([1.0]).add_(torch.tensor([[1.0], [2.0]]))),
    (lambda: jtorch.tensor(1.0).add_(jtorch.tensor([1.0, 2.0])),
     lambda: torch.tensor(1.0).add_(torch.tensor([1.0, 2.0]))),
    (lambda: jtorch.tensor([1.0, 2.0]).add_(jtorch.tensor([1.0, 2.0, 3.0])),
     lambda: torch.tensor([1.0, 2.0]).add_(torch.tensor([1.0, 2.0, 3.0]))),
    (lambda: jtorch.tensor([True]).square_(), lambda: torch.tensor([True]).square_()),
    (lambda: jtorch.tensor([1, 2]).exp_(), lambda: torch.tensor([1, 2]).exp_()),
], ids=["int+=float", "int/=int", "bool+=int", "int*=float tensor", "broadcast grows",
        "0-d grows", "mismatch", "bool square_", "int exp_"])
def test_inplace_errors_match_torch(jfn, tfn):
    raises_like(jfn, tfn)


def test_inplace_broadcasting_other_is_fine():
    j, t = jtorch.ones(2, 3), torch.ones(2, 3)
    j.add_(jtorch.tensor([1.0, 2.0, 3.0]))
    t.add_(torch.tensor([1.0, 2.0, 3.0]))
    assert_same(j, t)
    j.mul_(jtorch.tensor(2.0))
    t.mul_(torch.tensor(2.0))
    assert_same(j, t)
    f = jtorch.tensor([1.5, 2.5])
    f.add_(jtorch.tensor([1, 2]))  # int into float: allowed
    assert f.tolist() == [2.5, 4.5] and f.dtype is jtorch.float32


def test_out_argument_dtype_rules():
    a, b = [1, 2], [3, 4]
    out = jtorch.empty(2, dtype=jtorch.float64)
    r = jtorch.add(jtorch.tensor(a), jtorch.tensor(b), out=out)
    assert r is out and out.dtype is jtorch.float64 and out.tolist() == [4.0, 6.0]
    raises_like(lambda: jtorch.add(jtorch.tensor([1.0]), 1, out=jtorch.empty(1, dtype=jtorch.int64)),
                lambda: torch.add(torch.tensor([1.0]), 1, out=torch.empty(1, dtype=torch.int64)))
    raises_like(lambda: jtorch.exp(jtorch.tensor([1]), out=jtorch.empty(1, dtype=jtorch.int64)),
                lambda: torch.exp(torch.tensor([1]), out=torch.empty(1, dtype=torch.int64)))
    o = jtorch.empty(1, dtype=jtorch.int64)  # bool results may go into any dtype
    jtorch.eq(jtorch.tensor([1.0]), 1, out=o)
    assert o.tolist() == [1]


def test_out_argument_is_resized():
    out = jtorch.empty(0)
    jtorch.mul(jtorch.tensor([[1.0], [2.0]]), jtorch.tensor([1.0, 2.0, 3.0]), out=out)
    assert out.shape == (2, 3) and out.tolist() == [[1, 2, 3], [2, 4, 6]]
    out = jtorch.zeros(5)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        jtorch.add(jtorch.tensor([1.0, 2.0]), 1, out=out)
    assert out.shape == (2,) and out.tolist() == [2.0, 3.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jtorch.add(jtorch.tensor([1.0, 2.0]), 1, out=jtorch.empty(2))
    out = jtorch.zeros(3)
    with pytest.warns(UserWarning):
        jtorch.add(jtorch.tensor(2.0), 1.0, out=out)
    assert out.shape == () and out.item() == 3.0


def test_out_aliasing_an_input():
    j, t = jtorch.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 3.0])
    jtorch.mul(j, j, out=j)
    torch.mul(t, t, out=t)
    assert_same(j, t)


# -- operators with Python scalars -------------------------------------------------------------

_OPERATORS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
              operator.mod, operator.pow, operator.and_, operator.or_, operator.xor,
              operator.lshift, operator.rshift, operator.eq, operator.ne, operator.lt,
              operator.le, operator.gt, operator.ge]
_TENSOR_VALUES = {"float32": [1.5, -2.0, 0.0, 3.0], "int64": [3, -4, 1, 7], "bool": [True, False, True, True],
                  "int32": [3, -4, 1, 7], "float64": [1.5, -2.0, 0.25, 3.0]}
_SCALARS = [2, -3, 2.5, True, 0.5]


def _call(fn, *args):
    try:
        return fn(*args), None
    except Exception as e:  # noqa: BLE001
        return None, e


# Every operator on float32/int64/bool; a few on the other widths (promotion keeps int32 and
# float64 tensors' dtypes against same-category scalars). Each scalar type compiles a kernel.
_OPERATOR_CASES = [(op, d) for op in _OPERATORS for d in ("float32", "int64", "bool")] + [
    (op, d) for op in (operator.add, operator.truediv, operator.floordiv, operator.lt, operator.pow)
    for d in ("int32", "float64")]


@pytest.mark.parametrize("op, dtype", _OPERATOR_CASES, ids=lambda x: getattr(x, "__name__", x))
def test_operators_with_python_scalars_on_both_sides(op, dtype):
    j, t = _both(np.array(_TENSOR_VALUES[dtype], dtype))
    for s in _SCALARS:
        for args_j, args_t in (((j, s), (t, s)), ((s, j), (s, t))):
            expected, err = _call(op, *args_t)
            got, jerr = _call(op, *args_j)
            what = f"{op.__name__}{tuple(type(a).__name__ for a in args_t)} s={s!r}"
            if err is not None:
                assert jerr is not None, f"{what}: torch raised {err!r}, jtorch did not"
                assert type(jerr) is type(err) and str(jerr) == str(err), (what, jerr, err)
                continue
            assert jerr is None, f"{what}: jtorch raised {jerr!r}"
            assert str(got.dtype) == str(expected.dtype), (what, got.dtype, expected.dtype)
            np.testing.assert_allclose(got.numpy().astype(np.float64),
                                       expected.numpy().astype(np.float64),
                                       rtol=1e-6, equal_nan=True, err_msg=what)


def test_integer_division_by_zero_raises_runtime_error():
    for fn in (lambda m: m.tensor([1, 2]) // 0, lambda m: m.tensor([1, 2]) % 0,
               lambda m: m.tensor([5]) % m.tensor([0]), lambda m: 5 // m.tensor([0]),
               lambda m: m.div(m.tensor([1]), 0, rounding_mode="trunc"),
               lambda m: m.fmod(m.tensor([1], dtype=m.int32), 0),
               lambda m: m.tensor([1], dtype=m.uint8) // m.tensor([0], dtype=m.uint8)):
        raises_same(fn)
    assert_same(jtorch.tensor([1, -1, 0]) / 0, torch.tensor([1, -1, 0]) / 0)
    assert_same(jtorch.tensor([1.0, -1.0]) // 0, torch.tensor([1.0, -1.0]) // 0)


def test_bitwise_on_float_raises_not_implemented():
    for fn in (lambda m: m.tensor([1.5]) & 1, lambda m: m.tensor([1.5]) | m.tensor([1.0]),
               lambda m: m.tensor([1.5]) ^ True, lambda m: m.tensor([1.5]) << 1,
               lambda m: 1 >> m.tensor([1.5]), lambda m: m.bitwise_not(m.tensor([1.5])),
               lambda m: ~m.tensor([1.5]), lambda m: m.tensor([1]) & 1.5):
        raises_same(fn)


def test_bool_subtraction_and_negation_errors():
    for fn in (lambda m: m.tensor([True]) - m.tensor([False]), lambda m: m.tensor([True]) - 1,
               lambda m: 1 - m.tensor([True]), lambda m: m.tensor([1.0]) - True,
               lambda m: -m.tensor([True]), lambda m: m.neg(m.tensor(True)),
               lambda m: m.tensor([True]).sub_(m.tensor([True])), lambda m: m.tensor([2]) - m.tensor(True),
               lambda m: m.sub(m.tensor([1.0]), m.tensor([True]), alpha=2)):
        raises_same(fn)
    assert_same(~jtorch.tensor([True, False]), ~torch.tensor([True, False]))
    assert_same(jtorch.tensor([True]) + jtorch.tensor([True]), torch.tensor([True]) + torch.tensor([True]))


def test_unsupported_operand_types_fall_back_to_python():
    j = jtorch.tensor([1, 2])
    assert (j == None) is False
    assert (j != "a") is True
    with pytest.raises(TypeError):
        j + "a"
    with pytest.raises(TypeError):
        j + [1]
    with pytest.raises(TypeError):
        "a" * j


def test_zero_dim_behaviour():
    j, t = jtorch.tensor(2.5), torch.tensor(2.5)
    assert j.shape == () and j.dim() == 0 and j.numel() == 1 and j.stride() == ()
    assert (j + 1).shape == () and (j * jtorch.ones(3)).shape == (3,)
    assert_same(j * jtorch.tensor([1, 2]), t * torch.tensor([1, 2]))
    assert_same(jtorch.tensor(3) + jtorch.tensor([1, 2], dtype=jtorch.int8),
                torch.tensor(3) + torch.tensor([1, 2], dtype=torch.int8))
    assert_same(jtorch.tensor(3.5, dtype=jtorch.float64) * jtorch.tensor([2]),
                torch.tensor(3.5, dtype=torch.float64) * torch.tensor([2]))
    assert j.item() == 2.5 and j.tolist() == 2.5 and float(j) == 2.5
    assert_same(-j, -t)
