"""torch.igamma / torch.igammac (and torch.special.gammainc / gammaincc, the Tensor methods):
values against torch's on a grid of a in [1e-3, 1e3] and x in [0, 1e3] with the edge values,
dtypes and errors, layouts, and the gradient in x (torch has none in a)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch

_A = np.concatenate([np.logspace(-3, 3, 70), [0.0, 1.0, 20.0, 20.5, 199.5, 200.0, 250.0, 1e5,
                                               np.inf, np.nan, -1.0, -0.0, 1e-300]])
_X = np.concatenate([np.logspace(-4, 3, 70), np.linspace(0, 1000, 25),
                     [0.0, 0.5, 1.0, 1.1, 1e-300, np.inf, np.nan, -1.0, -0.0]])
_NAMES = ("igamma", "igammac")


def _grid(dtype):
    a, x = (g.ravel().astype(dtype) for g in np.meshgrid(_A, _X))
    return a, x


@pytest.mark.parametrize("name", _NAMES)
def test_float64_matches_torch_bit_for_bit(name):
    """The same algorithm step for step (Cephes igam/igamc, the asymptotic series for large a ~ x,
    and torch's fused multiply-adds in igammac): equal, nan positions included."""
    a, x = _grid(np.float64)
    assert a.size % 8 == 0  # all of it through torch's vector loop (see the layouts test)
    got = getattr(jtorch, name)(jtorch.from_numpy(a), jtorch.from_numpy(x))
    want = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(x))
    assert got.dtype is jtorch.float64
    if torch.backends.cpu.get_cpu_capability() == "AVX2":
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    else:  # torch's AVX512 build contracts other products into FMAs: last-bit differences
        np.testing.assert_array_equal(np.isnan(got.numpy()), np.isnan(want.numpy()))
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-11, atol=1e-300)


@pytest.mark.parametrize("name", _NAMES)
def test_float32_is_the_float64_result_rounded(name):
    """float32 computes in float64 and rounds once: torch's float64 value rounded, and within
    torch's own float32 error (its float32 series) of torch's float32 value."""
    a, x = _grid(np.float32)
    got = getattr(jtorch, name)(jtorch.from_numpy(a), jtorch.from_numpy(x))
    assert got.dtype is jtorch.float32
    t32 = getattr(torch, name)(torch.from_numpy(a), torch.from_numpy(x))
    t64 = getattr(torch, name)(torch.from_numpy(a).double(), torch.from_numpy(x).double())
    np.testing.assert_array_equal(got.numpy(), t64.float().numpy())
    np.testing.assert_allclose(got.numpy(), t32.numpy(), rtol=0, atol=2e-6)


def test_edge_values_follow_torchs_conventions():
    a = jtorch.tensor([0.0, 0.0, 2.0, -1.0, 1.0, float("inf"), float("inf"), 3.0, float("nan"), 2.0])
    x = jtorch.tensor([1.0, 0.0, 0.0, 1.0, -1.0, 5.0, float("inf"), float("inf"), 0.0, float("nan")])
    ta, tx = torch.from_numpy(a.numpy()), torch.from_numpy(x.numpy())
    for name in _NAMES:
        np.testing.assert_array_equal(getattr(jtorch, name)(a, x).numpy(),
                                      getattr(torch, name)(ta, tx).numpy())
    p = jtorch.igamma(a, x).numpy()
    assert p[0] == 1 and np.isnan(p[1]) and p[2] == 0 and np.isnan(p[3]) and np.isnan(p[4])
    assert p[5] == 0 and np.isnan(p[6]) and p[7] == 1


def test_dtypes_promotion_and_broadcasting():
    a = jtorch.tensor([[0.5], [2.0], [7.0]], dtype=jtorch.float64)
    x = jtorch.tensor([0.25, 1.0, 4.0, 9.0])
    out = jtorch.igamma(a, x)
    assert out.dtype is jtorch.float64 and tuple(out.shape) == (3, 4)
    want = torch.igamma(torch.from_numpy(a.numpy()), torch.from_numpy(x.numpy()))
    np.testing.assert_array_equal(out.numpy(), want.numpy())
    # an integer tensor with a float one promotes to the float dtype; a 0-d float64 one does not
    assert jtorch.igamma(jtorch.tensor([1, 2]), x[:2]).dtype is jtorch.float32
    assert jtorch.igammac(x, jtorch.tensor(2.5, dtype=jtorch.float64)).dtype is jtorch.float32
    np.testing.assert_array_equal(
        jtorch.igamma(jtorch.tensor([1, 2]), x[:2]).numpy(),
        torch.igamma(torch.tensor([1.0, 2.0], dtype=torch.float64),
                     torch.from_numpy(x[:2].numpy()).double()).float().numpy())


def _raises_like(jcall, tcall):
    with pytest.raises(Exception) as te:  # the oracle decides the type
        tcall()
    with pytest.raises(type(te.value)) as je:
        jcall()
    assert str(je.value) == str(te.value)


@pytest.mark.parametrize("lib_call", [
    lambda T: T.igamma(T.tensor([1, 2]), T.tensor([1, 2])),
    lambda T: T.igammac(T.tensor([True]), T.tensor([False])),
    lambda T: T.igamma(T.tensor([1.0, 2.0]), 2),
    lambda T: T.igammac(2.0, T.tensor([1.0, 2.0])),
    lambda T: T.special.gammainc(T.tensor([1.0]), 2),
    lambda T: T.special.gammaincc(2.0, T.tensor([1.0])),
    lambda T: T.tensor([1.0, 2.0]).igamma(2),
    lambda T: T.tensor([1.0, 2.0]).igammac_(3),
    lambda T: T.tensor([1, 2]).igamma_(T.tensor([1.0, 2.0])),
    lambda T: T.igamma(T.tensor([1.0, 2.0]), T.tensor([1.0, 2.0, 3.0])),
])
def test_errors_match_torch(lib_call):
    _raises_like(lambda: lib_call(jtorch), lambda: lib_call(torch))


def test_layouts_out_and_in_place():
    """Strided operands give the contiguous values. (torch's own strided results, and the last
    n % 8 elements of a contiguous float64 tensor, come from its scalar loop, whose igamma fuses
    multiply-adds where its vector loop does not: up to 1e-12 relative apart, so those are
    compared within that; jtorch's values are its vector loop's.)"""
    rng = np.random.default_rng(0)
    base_a = rng.uniform(0.1, 30, (6, 5))
    base_x = rng.uniform(0.0, 40, (5, 6))
    ja, jx = jtorch.from_numpy(base_a)[::2], jtorch.from_numpy(base_x).T[::2]
    ta, tx = torch.from_numpy(base_a)[::2].contiguous(), torch.from_numpy(base_x).T[::2].contiguous()
    for name in _NAMES:
        got = getattr(jtorch, name)(ja, jx).numpy()
        np.testing.assert_array_equal(got, getattr(torch, name)(ta, tx).numpy())
        strided = getattr(torch, name)(torch.from_numpy(base_a)[::2], torch.from_numpy(base_x).T[::2])
        np.testing.assert_allclose(got, strided.numpy(), rtol=1e-12, atol=1e-15)
        # 0-d and 0-size
        z = getattr(jtorch, name)(jtorch.tensor(3.0, dtype=jtorch.float64), jtorch.tensor(2.0))
        want = getattr(torch, name)(torch.tensor(3.0, dtype=torch.float64), torch.tensor(2.0))
        assert z.shape == () and z.dtype is jtorch.float64
        assert z.item() == pytest.approx(want.item(), rel=1e-12)  # torch's scalar loop, above
        assert tuple(getattr(jtorch, name)(jtorch.ones(0, 3), jtorch.ones(3)).shape) == (0, 3)
        # out= and the in-place method
        out = jtorch.empty(3, 5, dtype=jtorch.float64)
        res = getattr(jtorch, name)(ja, jx, out=out)
        assert res is out
        np.testing.assert_array_equal(out.numpy(), getattr(torch, name)(ta, tx).numpy())
        y = ja.clone()
        assert getattr(y, name + "_")(jx) is y
        np.testing.assert_array_equal(y.numpy(), getattr(torch, name)(ta, tx).numpy())
        np.testing.assert_array_equal(getattr(ja, name)(jx).numpy(),
                                      getattr(torch, name)(ta, tx).numpy())
    np.testing.assert_array_equal(jtorch.special.gammainc(ja, jx).numpy(),
                                  torch.special.gammainc(ta, tx).numpy())
    np.testing.assert_array_equal(jtorch.special.gammaincc(ja, jx).numpy(),
                                  torch.special.gammaincc(ta, tx).numpy())


@pytest.mark.parametrize("name", _NAMES)
def test_gradient_in_x_matches_torch(name):
    rng = np.random.default_rng(1)
    a = rng.uniform(0.2, 5.0, (3, 4))
    x = rng.uniform(0.1, 6.0, (4,))
    g = rng.standard_normal((3, 4))
    jx = jtorch.from_numpy(x.copy()).requires_grad_()
    tx = torch.from_numpy(x.copy()).requires_grad_()
    jy = getattr(jtorch, name)(jtorch.from_numpy(a), jx)
    ty = getattr(torch, name)(torch.from_numpy(a), tx)
    assert type(jy.grad_fn).__name__ == type(ty.grad_fn).__name__
    (jg,) = jtorch.autograd.grad(jy, jx, jtorch.from_numpy(g))
    (tg,) = torch.autograd.grad(ty, tx, torch.from_numpy(g))
    np.testing.assert_allclose(jg.numpy(), tg.numpy(), rtol=1e-12, atol=1e-15)
    fn = getattr(jtorch, name)
    assert jtorch.autograd.gradcheck(lambda t: fn(jtorch.from_numpy(a), t), (jx,))
    assert jtorch.autograd.gradgradcheck(lambda t: fn(jtorch.from_numpy(a), t), (jx,))


@pytest.mark.parametrize("name", _NAMES)
def test_no_derivative_in_a(name):
    """torch's backward raises for a that requires grad (the forward records the node)."""
    def run(T):
        a = T.tensor([1.5, 2.0], dtype=T.float64, requires_grad=True)
        x = T.tensor([0.5, 3.0], dtype=T.float64, requires_grad=True)
        getattr(T, name)(a, x).sum().backward()

    _raises_like(lambda: run(jtorch), lambda: run(torch))
