"""view_as_real / view_as_complex (and their _copy variants) against torch: geometry, shared
storage and version counter, torch's errors, gradients (also of in-place writes through the
views), meta tensors, and compiled calls equal to eager ones."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch

_RNG = np.random.default_rng(3)


def _c(*shape):
    return _RNG.standard_normal(shape) + 1j * _RNG.standard_normal(shape)


def _r(*shape):
    return _RNG.standard_normal(shape)


# name -> (array, f(lib, tensor) giving the operand of the view)
INPUTS = {
    "complex128": (_c(3, 4), lambda L, x: x),
    "complex64": (_c(2, 3).astype(np.complex64), lambda L, x: x),
    "complex_0d": (np.array(1 + 2j), lambda L, x: x),
    "complex_empty": (_c(3, 0), lambda L, x: x),
    "complex_transposed": (_c(3, 4), lambda L, x: x.mT),
    "complex_sliced": (_c(4, 5), lambda L, x: x[1:, ::2]),
    "complex_expanded": (_c(3, 1), lambda L, x: x.expand(3, 4)),
    "float64": (_r(3, 2), lambda L, x: x),
    "float32": (_r(2, 3, 2).astype(np.float32), lambda L, x: x),
    "float_sliced_even": (_r(3, 4, 2), lambda L, x: x[1:, ::2]),
    "float_odd_offset": (_r(10), lambda L, x: x[1:].as_strided((2, 2), (2, 1))),
    "float_odd_stride": (_r(3, 3, 2), lambda L, x: x.as_strided((3, 2), (3, 1))),
    "float_last_not_2": (_r(3, 3), lambda L, x: x),
    "float_last_stride": (_r(2, 4), lambda L, x: x.mT[:, :2]),
    "float_0d": (np.array(1.0), lambda L, x: x),
    "float_empty": (_r(0, 2), lambda L, x: x),
    "float_expanded": (_r(2, 1, 2), lambda L, x: x.expand(2, 3, 2)),
    "int": (np.arange(6).reshape(3, 2), lambda L, x: x),
}
FNS = ["view_as_real", "view_as_complex", "view_as_real_copy", "view_as_complex_copy"]


def _outcome(lib, fn, name):
    arr, prep = INPUTS[name]
    x = prep(lib, lib.from_numpy(arr.copy()))
    try:
        return getattr(lib, fn)(x), None
    except Exception as e:  # noqa: BLE001 - the error is what is compared
        return None, e


@pytest.mark.parametrize("name", sorted(INPUTS))
@pytest.mark.parametrize("fn", FNS)
def test_result_or_error_matches_torch(fn, name):
    j, je = _outcome(jtorch, fn, name)
    t, te = _outcome(torch, fn, name)
    if te is not None:
        assert je is not None, f"torch raised {te!r}, jtorch returned"
        assert type(je) is type(te) and str(je) == str(te)
        return
    assert je is None, je
    assert (tuple(j.shape), j.stride(), j.storage_offset()) == \
        (tuple(t.shape), t.stride(), t.storage_offset())
    assert str(j.dtype) == str(t.dtype)
    np.testing.assert_array_equal(j.numpy(), t.numpy())


def test_views_share_storage_and_version():
    x = jtorch.tensor([1 + 2j, 3 + 4j, 5 + 6j])
    r = jtorch.view_as_real(x)
    assert r._base is x
    v0 = x._version
    r[1, 0] = 100
    assert x[1].item() == 100 + 4j and x._version == v0 + 1
    c = jtorch.view_as_complex(r)
    c[0] = 7 - 7j
    assert x[0].item() == 7 - 7j and r[0, 1].item() == -7
    x.mul_(2)
    assert r[2].tolist() == [10.0, 12.0] and c[2].item() == 10 + 12j
    copy = jtorch.view_as_real_copy(x)
    copy.zero_()
    assert x[2].item() == 10 + 12j


def test_complex_half_is_not_supported_here():
    with pytest.raises(RuntimeError, match="complex32"):
        jtorch.view_as_complex(jtorch.zeros(3, 2, dtype=jtorch.float16))


def test_meta_tensors_keep_the_geometry():
    m = jtorch.empty(3, 4, dtype=jtorch.complex64, device="meta")[1:]
    r = jtorch.view_as_real(m)
    assert r.is_meta and r.dtype == jtorch.float32
    assert (tuple(r.shape), r.stride(), r.storage_offset()) == ((2, 4, 2), (8, 2, 1), 8)
    c = jtorch.view_as_complex(r)
    assert (tuple(c.shape), c.stride(), c.storage_offset()) == ((2, 4), (4, 1), 4)


def _twin(fn, arr):
    """fn(lib, x) on jtorch and torch: results and gradients of a random linear loss."""
    res = []
    for lib in (jtorch, torch):
        rng = np.random.default_rng(0)
        x = lib.from_numpy(arr.copy()).requires_grad_()
        out = fn(lib, x)
        shape = tuple(out.shape)
        w = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if out.is_complex() else 0)
        (out * lib.from_numpy(w)).real.sum().backward()
        res.append((out.detach().numpy(), x.grad.numpy(), type(out.grad_fn).__name__
                    if lib is torch else out.grad_fn.name()))
    return res


def _inplace_real(L, x):
    y = x.clone()
    L.view_as_real(y).mul_(L.arange(1.0, 3.0, dtype=L.float64))
    return y


def _inplace_real_slice(L, x):
    y = x.clone()
    L.view_as_real(y)[1:, :, 0].mul_(3.0)
    return y * y


def _inplace_complex(L, x):
    y = x.clone()
    L.view_as_complex(y[1:]).mul_(1 + 2j)
    return y


def _inplace_then_view(L, x):
    y = x.clone()
    r = L.view_as_real(y)
    r.add_(1.0)
    return r


GRADS = {
    "view_as_real": (lambda L, x: L.view_as_real(x), _c(3, 4)),
    "view_as_real_transposed": (lambda L, x: L.view_as_real(x.mT) * 2, _c(3, 4)),
    "view_as_real_expanded_grad": (lambda L, x: L.view_as_real(x).sum(-1), _c(2, 3)),
    "view_as_complex": (lambda L, x: L.view_as_complex(x), _r(3, 4, 2)),
    "view_as_complex_sliced": (lambda L, x: L.view_as_complex(x[:, 1:]) * (2 - 1j), _r(3, 4, 2)),
    "view_as_real_copy": (lambda L, x: L.view_as_real_copy(x) * 3, _c(2, 2)),
    "round_trip": (lambda L, x: L.view_as_complex(L.view_as_real(x) * 2), _c(4)),
    "inplace_real": (_inplace_real, _c(3, 4)),
    "inplace_real_slice": (_inplace_real_slice, _c(3, 4)),
    "inplace_complex": (_inplace_complex, _r(3, 4, 2)),
    "inplace_then_view": (_inplace_then_view, _c(2, 3)),
}


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_match_torch(name):
    fn, arr = GRADS[name]
    (jo, jg, jname), (to, tg, tname) = _twin(fn, arr)
    np.testing.assert_allclose(jo, to, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jg, tg, rtol=1e-12, atol=1e-12)
    if name in ("view_as_real", "view_as_complex"):
        assert jname == tname


def test_gradcheck():
    x = jtorch.from_numpy(_r(3, 2, 2)).requires_grad_()
    assert jtorch.autograd.gradcheck(
        lambda t: jtorch.view_as_real(jtorch.view_as_complex(t) * (1 + 2j)), [x])


@pytest.mark.parametrize("lib", [torch, jtorch])
def test_view_as_complex_copy_refuses_gradients(lib):
    x = lib.from_numpy(_r(3, 2)).requires_grad_()
    with pytest.raises(RuntimeError, match="view_as_complex_copy does not support automatic "
                                           "differentiation for outputs with complex dtype"):
        lib.view_as_complex_copy(x)
    with lib.no_grad():
        assert not lib.view_as_complex_copy(x).requires_grad


def _c_write_input(x):
    jtorch.view_as_real(x)[0, 0, 0] = 5.0
    return x


def _c_inplace(x):
    y = x * 1
    jtorch.view_as_real(y)[1:, :, 1].add_(1.0)
    return y, jtorch.view_as_real(y)


def _c_complex(x):
    y = x + 0
    c = jtorch.view_as_complex(y)
    c.mul_(1j)
    return y + 1, jtorch.view_as_complex_copy(y.detach()) * 1


def _c_plain(x):
    return jtorch.view_as_real(x * 2).sum(-1) + 1, jtorch.view_as_real_copy(x)


COMPILED = {
    "plain": (_c_plain, _c(3, 4)),
    "inplace": (_c_inplace, _c(3, 4)),
    "complex": (_c_complex, _r(3, 4, 2)),
}


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("name", sorted(COMPILED))
def test_compiled_equals_eager(name, grad):
    fn, arr = COMPILED[name]
    res = []
    for f in (fn, jtorch.compile(fn)):
        x = jtorch.from_numpy(arr.copy()).requires_grad_(grad)
        outs = f(x)
        g = None
        if grad:
            sum((o * o.conj()).real.sum() if o.is_complex() else o.sum()
                for o in outs if o.requires_grad).backward()
            g = x.grad.numpy()
        res.append(([o.detach().numpy() for o in outs], g))
    for a, b in zip(res[0][0], res[1][0]):
        np.testing.assert_array_equal(a, b)
    if grad:
        np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-12, atol=1e-12)


def test_compiled_write_into_an_input_shows_in_the_caller():
    a = _c(2, 3)
    x, y = jtorch.from_numpy(a.copy()), jtorch.from_numpy(a.copy())
    _c_write_input(x)
    jtorch.compile(_c_write_input)(y)
    np.testing.assert_array_equal(x.numpy(), y.numpy())
    assert y[0, 0].item().real == 5.0
