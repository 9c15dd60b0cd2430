"""jtorch.linalg.ldl_factor(_ex) and ldl_solve against torch: LAPACK's sytrf/hetrf pivots and
info exactly, the factors to rounding (torch's LAPACK is MKL, ours scipy's: the same algorithm,
its last bits may differ), torch's column-major layout, the errors and the missing gradient."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import random_array

import jtorch

_DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


_mk = random_array


def _tol(dtype):
    return 1e-4 if dtype in (np.float32, np.complex64) else 1e-11


def _same_factor(j, t, dtype):
    """(LD, pivots, info) of jtorch against torch's."""
    assert tuple(j[0].shape) == tuple(t[0].shape) and j[0].stride() == t[0].stride()
    assert str(j[0].dtype) == str(t[0].dtype)
    for k in (1, 2):
        assert j[k].dtype == jtorch.int32 and tuple(j[k].shape) == tuple(t[k].shape)
        assert j[k].stride() == t[k].stride()
        np.testing.assert_array_equal(j[k].numpy(), t[k].numpy())
    ld_t = t[0].numpy()
    scale = max(1.0, float(np.abs(ld_t).max())) if ld_t.size else 1.0
    np.testing.assert_allclose(j[0].numpy(), ld_t, rtol=0, atol=_tol(dtype) * scale)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 5, 5), (1, 1), (0, 3, 3), (2, 0, 0), (9, 9)])
def test_ldl_factor_ex_matches_torch(dtype, hermitian, shape):
    a = _mk(*shape, dtype=dtype)
    _same_factor(jtorch.linalg.ldl_factor_ex(jtorch.tensor(a), hermitian=hermitian),
                 torch.linalg.ldl_factor_ex(torch.from_numpy(a), hermitian=hermitian), dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_ldl_factor_of_non_contiguous_input(dtype):
    base = _mk(2, 7, 7, dtype=dtype, seed=3)
    j = jtorch.tensor(base).mT[:, 1:, 1:]
    t = torch.from_numpy(base).mT[:, 1:, 1:]
    assert not j.is_contiguous()
    _same_factor(jtorch.linalg.ldl_factor_ex(j), torch.linalg.ldl_factor_ex(t), dtype)
    res = jtorch.linalg.ldl_factor(j, hermitian=True)
    assert type(res).__name__ == "linalg_ldl_factor" and res._fields == ("LD", "pivots")
    np.testing.assert_array_equal(res.pivots.numpy(),
                                  torch.linalg.ldl_factor(t, hermitian=True).pivots.numpy())


def test_ldl_factor_batch_over_threads():
    """A batch large enough for Numba's threads gives each matrix's own factors."""
    a = _mk(24, 32, 32, seed=1)
    j = jtorch.linalg.ldl_factor_ex(jtorch.tensor(a))
    _same_factor(j, torch.linalg.ldl_factor_ex(torch.from_numpy(a)), np.float64)
    b = _mk(24, 32, 3, seed=2)
    x = jtorch.linalg.ldl_solve(j.LD, j.pivots, jtorch.tensor(b))
    sym = np.tril(a) + np.swapaxes(np.tril(a, -1), -1, -2)
    np.testing.assert_allclose(sym @ x.numpy(), b, atol=1e-9)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("hermitian", [False, True])
def test_ldl_solve_matches_torch(dtype, hermitian):
    a = _mk(3, 6, 6, dtype=dtype, seed=4)
    b = _mk(3, 6, 2, dtype=dtype, seed=5)
    tl = torch.linalg.ldl_factor(torch.from_numpy(a), hermitian=hermitian)
    jl = jtorch.linalg.ldl_factor(jtorch.tensor(a), hermitian=hermitian)
    want = torch.linalg.ldl_solve(*tl, torch.from_numpy(b), hermitian=hermitian)
    got = jtorch.linalg.ldl_solve(*jl, jtorch.tensor(b), hermitian=hermitian)
    assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=_tol(dtype) * 100,
                               atol=_tol(dtype) * 100)
    # torch's factors and int64 pivots give the same solution
    got2 = jtorch.linalg.ldl_solve(jtorch.tensor(tl.LD.numpy()),
                                   jtorch.tensor(tl.pivots.numpy()).long(), jtorch.tensor(b),
                                   hermitian=hermitian)
    np.testing.assert_allclose(got2.numpy(), want.numpy(), rtol=_tol(dtype) * 100,
                               atol=_tol(dtype) * 100)


def test_ldl_solve_broadcasts_and_writes_out():
    a, b = _mk(5, 5, seed=6), _mk(2, 5, 3, seed=7)
    tl = torch.linalg.ldl_factor(torch.from_numpy(a))
    jl = jtorch.linalg.ldl_factor(jtorch.tensor(a))
    want = torch.linalg.ldl_solve(*tl, torch.from_numpy(b))
    out = jtorch.empty(0, dtype=jtorch.float64)
    got = jtorch.linalg.ldl_solve(*jl, jtorch.tensor(b), out=out)
    assert got is out and tuple(got.shape) == tuple(want.shape)  # (out= is resized row-major)
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-12)
    # a batched LD against one right-hand side
    a2 = _mk(2, 5, 5, seed=8)
    want = torch.linalg.ldl_solve(*torch.linalg.ldl_factor(torch.from_numpy(a2)),
                                  torch.from_numpy(b[0]))
    got = jtorch.linalg.ldl_solve(*jtorch.linalg.ldl_factor(jtorch.tensor(a2)), jtorch.tensor(b[0]))
    assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()
    np.testing.assert_allclose(got.numpy(), want.numpy(), atol=1e-12)


def test_ldl_solve_empty():
    for ld, piv, b in [((0, 4, 4), (0, 4), (0, 4, 3)), ((2, 0, 0), (2, 0), (2, 0, 3))]:
        want = torch.linalg.ldl_solve(torch.empty(ld, dtype=torch.float64),
                                      torch.empty(piv, dtype=torch.int32),
                                      torch.empty(b, dtype=torch.float64))
        got = jtorch.linalg.ldl_solve(jtorch.empty(ld, dtype=jtorch.float64),
                                      jtorch.empty(piv, dtype=jtorch.int32),
                                      jtorch.empty(b, dtype=jtorch.float64))
        assert tuple(got.shape) == tuple(want.shape) and got.stride() == want.stride()


def test_ldl_factor_ex_out():
    a = _mk(4, 4, seed=9)
    out = (jtorch.empty(0, dtype=jtorch.float64), jtorch.empty(0, dtype=jtorch.int32),
           jtorch.empty(0, dtype=jtorch.int32))
    res = jtorch.linalg.ldl_factor_ex(jtorch.tensor(a), out=out)
    assert all(r is o for r, o in zip(res, out))
    want = torch.linalg.ldl_factor_ex(torch.from_numpy(a))
    for r, w in zip(res, want):  # (out= is resized row-major)
        np.testing.assert_allclose(r.numpy(), w.numpy(), atol=1e-12)


# -- singular input: info, and torch's (generic) error ------------------------------------------

def test_singular_info_and_errors():
    z = np.zeros((4, 4))
    z[0, 0] = 1.0
    _same_factor(jtorch.linalg.ldl_factor_ex(jtorch.tensor(z)),
                 torch.linalg.ldl_factor_ex(torch.from_numpy(z)), np.float64)
    assert int(jtorch.linalg.ldl_factor_ex(jtorch.tensor(z)).info) == 2
    for fn, kw, name in [("ldl_factor", {}, "torch.linalg.ldl_factor"),
                         ("ldl_factor_ex", {"check_errors": True}, "torch.linalg.ldl_factor_ex")]:
        with pytest.raises(RuntimeError) as t_err:
            getattr(torch.linalg, fn)(torch.from_numpy(z), **kw)
        with pytest.raises(RuntimeError, match=f"^{name}: Unknown error code: 2.$") as j_err:
            getattr(jtorch.linalg, fn)(jtorch.tensor(z), **kw)
        assert str(t_err.value).endswith(str(j_err.value))
    batch = np.stack([np.eye(3), np.zeros((3, 3))])
    t = torch.linalg.ldl_factor_ex(torch.from_numpy(batch))
    _same_factor(jtorch.linalg.ldl_factor_ex(jtorch.tensor(batch)), t, np.float64)
    with pytest.raises(RuntimeError, match="Unknown error code: 1"):
        jtorch.linalg.ldl_factor(jtorch.tensor(batch))
    # an exactly singular 2x2 block is not an error: D's block is [[0, 1], [1, 0]]
    swap = np.array([[0.0, 1.0], [1.0, 0.0]])
    _same_factor(jtorch.linalg.ldl_factor_ex(jtorch.tensor(swap)),
                 torch.linalg.ldl_factor_ex(torch.from_numpy(swap)), np.float64)


# -- bad input: torch's exception types and messages --------------------------------------------

def _same_error(fn_j, fn_t):
    with pytest.raises(Exception) as t_err:
        fn_t()
    with pytest.raises(Exception) as j_err:
        fn_j()
    assert type(j_err.value).__name__ == type(t_err.value).__name__, (j_err.value, t_err.value)
    assert str(j_err.value) == str(t_err.value)


@pytest.mark.parametrize("fn", ["ldl_factor", "ldl_factor_ex"])
@pytest.mark.parametrize("make", [
    lambda m: m.randn(3, 4), lambda m: m.randn(3), lambda m: m.ones(3, 3, dtype=m.int64),
    lambda m: m.ones(3, 3, dtype=m.bool), lambda m: m.ones(3, 3, dtype=m.float16),
    lambda m: m.ones(3, 3, dtype=m.bfloat16)], ids=["nonsquare", "1d", "long", "bool", "half",
                                                     "bfloat16"])
def test_factor_errors(fn, make):
    _same_error(lambda: getattr(jtorch.linalg, fn)(make(jtorch)),
                lambda: getattr(torch.linalg, fn)(make(torch)))


@pytest.mark.parametrize("case", [
    lambda m, ld, p, b: (ld, p.float(), b), lambda m, ld, p, b: (ld, p.bool(), b),
    lambda m, ld, p, b: (ld, p, b.float()), lambda m, ld, p, b: (ld, p, b[..., 0]),
    lambda m, ld, p, b: (ld, p, m.zeros(5, 2, dtype=m.float64)),
    lambda m, ld, p, b: (ld, p[:3], b), lambda m, ld, p, b: (ld[:, :3], p, b),
    lambda m, ld, p, b: (ld[0], p, b), lambda m, ld, p, b: (ld.int(), p, b.int()),
    lambda m, ld, p, b: (ld.half(), p, b.half())],
    ids=["float-pivots", "bool-pivots", "dtype", "1d-b", "rows", "pivot-shape", "nonsquare",
         "1d-ld", "int", "half"])
def test_solve_errors(case):
    a = _mk(4, 4, seed=10)
    b = _mk(4, 2, seed=11)

    def call(m):
        ld, piv = m.linalg.ldl_factor(m.tensor(a))
        return lambda: m.linalg.ldl_solve(*case(m, ld, piv, m.tensor(b)))

    _same_error(call(jtorch), call(torch))


# -- autograd: torch has no derivative for these ------------------------------------------------

def test_no_derivative_as_torch():
    a = _mk(4, 4, seed=12)
    for m in (torch, jtorch):
        x = m.tensor(a, requires_grad=True)
        ld, piv, _ = m.linalg.ldl_factor_ex(x)
        assert ld.requires_grad
        with pytest.raises(RuntimeError,
                           match="derivative for aten::linalg_ldl_factor_ex is not implemented"):
            ld.sum().backward()
        b = m.tensor(_mk(4, 2, seed=13), requires_grad=True)
        sol = m.linalg.ldl_solve(ld.detach(), piv, b)
        assert sol.requires_grad
        with pytest.raises(RuntimeError,
                           match="derivative for aten::linalg_ldl_solve is not implemented"):
            sol.sum().backward()


def test_meta_geometry():
    j = jtorch.linalg.ldl_factor_ex(jtorch.empty(2, 5, 5, device="meta"))
    t = torch.linalg.ldl_factor_ex(torch.randn(2, 5, 5))
    for a, b in zip(j, t):
        assert a.is_meta and tuple(a.shape) == tuple(b.shape) and a.stride() == b.stride()
    x = jtorch.linalg.ldl_solve(j.LD, j.pivots, jtorch.empty(5, 3, device="meta"))
    assert tuple(x.shape) == (2, 5, 3) and x.stride() == (15, 1, 5)
