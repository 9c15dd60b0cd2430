"""jtorch.fft against torch.fft: values, dtypes, shapes, strides (torch's CPU layout) and
errors of every transform, over dtypes, lengths (padded and trimmed), dims, norms and input
layouts; ``out=``; fftfreq/rfftfreq and the shifts; meta tensors."""

from __future__ import annotations

import itertools
import warnings
from functools import partial

import numpy as np
import pytest
import torch
from helpers import raises_as

import jtorch

ONE_D = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
N_D = ("fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn")
TWO_D = ("fft2", "ifft2", "rfft2", "irfft2", "hfft2", "ihfft2")
DTYPES = ("float32", "float64", "complex64", "complex128", "int64", "bool", "float16")


def _array(shape, dtype: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(shape)
    elif dtype == "int64":
        a = (a * 5).round()
    elif dtype == "bool":
        a = a > 0
    return a.astype(dtype)


def _pair(shape, dtype: str, perm=None, seed: int = 0):
    a = _array(shape, dtype, seed)
    j, t = jtorch.from_numpy(a.copy()), torch.from_numpy(a.copy())
    if perm is not None:
        j, t = j.permute(*perm), t.permute(*perm)
    return j, t


def _same(j, t, strides: bool = True, eps: float | None = None) -> None:
    """dtype, shape, strides (torch's for results of more than one element) and values: FFTs of
    different libraries round differently, so values within a few ulps of the largest one."""
    assert str(j.dtype) == str(t.dtype), (j.dtype, t.dtype)
    assert tuple(j.shape) == tuple(t.shape), (j.shape, t.shape)
    if strides and t.numel() > 1:
        assert j.stride() == t.stride(), (j.stride(), t.stride())
    if t.is_meta:
        return
    a = j.detach().numpy().astype(np.complex128)
    b = t.detach().resolve_conj().numpy().astype(np.complex128)
    if b.size:
        if eps is None:
            eps = 1e-5 if t.dtype in (torch.float32, torch.complex64) else 1e-12
        scale = max(1.0, float(np.abs(b).max()))
        assert np.abs(a - b).max() <= eps * scale, np.abs(a - b).max()


def _check(jfn, tfn, strides: bool = True):
    """jtorch's call matches torch's result, or raises torch's error (type and message)."""
    try:
        expected = tfn()
    except Exception as e:  # noqa: BLE001  (the error itself is compared)
        raises_as(e, jfn)
        return None
    res = jfn()
    _same(res, expected, strides)
    return res


@pytest.mark.parametrize("fn", ONE_D)
@pytest.mark.parametrize("dtype", DTYPES)
def test_one_dim_transforms_match_torch(fn, dtype):
    j, t = _pair((4, 6), dtype)
    for n, dim, norm in itertools.product((None, 3, 6, 9), (-1, 0), (None, "backward", "ortho",
                                                                       "forward")):
        kw = {"n": n, "dim": dim, "norm": norm}
        _check(partial(getattr(jtorch.fft, fn), j, **kw), partial(getattr(torch.fft, fn), t, **kw))


_S_DIM = [(None, None), ((3, 4), None), (None, (0, 2)), ((5, -1), (2, 0)), ((2,), (1,)),
          (None, (1,)), ((6, 3, 2), None), ((4, 4), (-1, -2)), (None, ())]


@pytest.mark.parametrize("fn", N_D)
@pytest.mark.parametrize("dtype", ("float32", "complex64", "float64", "complex128"))
@pytest.mark.parametrize("perm", (None, (2, 0, 1), (1, 2, 0)))
def test_n_dim_transforms_match_torch(fn, dtype, perm):
    """Every (s, dim) form over contiguous and permuted inputs: the results' strides follow
    torch's (batch dims outermost in the input's stride order)."""
    j, t = _pair((3, 4, 5), dtype, perm)
    for (s, dim), norm in itertools.product(_S_DIM, (None, "ortho", "forward")):
        kw = {"s": s, "dim": dim, "norm": norm}
        _check(partial(getattr(jtorch.fft, fn), j, **kw), partial(getattr(torch.fft, fn), t, **kw))


@pytest.mark.parametrize("fn", TWO_D)
def test_two_dim_transforms_match_torch(fn):
    j, t = _pair((3, 4, 5), "complex64" if fn in ("irfft2", "hfft2") else "float32")
    for s, dim in ((None, (-2, -1)), ((4, 6), (-2, -1)), (None, (0, 2)), ((3, 3), (2, 0))):
        _check(partial(getattr(jtorch.fft, fn), j, s=s, dim=dim),
               partial(getattr(torch.fft, fn), t, s=s, dim=dim))
        _check(partial(getattr(jtorch.fft, fn), j, s), partial(getattr(torch.fft, fn), t, s))


def test_transforms_of_non_contiguous_inputs():
    """Negative, stepped, broadcast (stride 0) and permuted operands."""
    jc, tc = _pair((4, 6), "complex64")
    jr, tr = _pair((4, 6), "float64")
    for f in (lambda T, x, z: T.fft.fft(z.flip(1)),
              lambda T, x, z: T.fft.fft(z[:1].expand(4, 6)),
              lambda T, x, z: T.fft.fft(z[:1].expand(4, 6), dim=0),
              lambda T, x, z: T.fft.rfft(x[:, ::2]),
              lambda T, x, z: T.fft.irfft(z[::2, ::2], dim=0),
              lambda T, x, z: T.fft.hfft(z.T),
              lambda T, x, z: T.fft.ihfft(x.T[1:], n=5),
              lambda T, x, z: T.fft.rfftn(x.reshape(1, 2, 3, 2, 2), dim=(0, 2, 4)),
              lambda T, x, z: T.fft.fftn(z.reshape(2, 3, 4).transpose(0, 2), dim=(0, 1)),
              lambda T, x, z: T.fft.fft(z.reshape(2, 3, 4), dim=1)):
        _check(partial(f, jtorch, jr, jc), partial(f, torch, tr, tc))


def test_large_and_odd_lengths():
    """Prime, odd and power-of-two lengths (DUCC0's Bluestein and radix paths)."""
    for n in (1, 2, 7, 97, 1000, 4096):
        j, t = _pair((2, n), "complex128")
        _check(lambda j=j: jtorch.fft.ifft(jtorch.fft.fft(j)),
               lambda t=t: torch.fft.ifft(torch.fft.fft(t)))
        jr, tr = _pair((n,), "float32")
        _check(partial(jtorch.fft.rfft, jr), partial(torch.fft.rfft, tr))
        _check(lambda jr=jr, n=n: jtorch.fft.irfft(jtorch.fft.rfft(jr), n=n),
               lambda tr=tr, n=n: torch.fft.irfft(torch.fft.rfft(tr), n=n))


@pytest.mark.parametrize("dtype", ("complex64", "complex128"))
def test_long_one_dim_transforms_on_threads(dtype):
    """A single long 1-D transform runs as four batched passes over DUCC0's threads (the
    four-step decomposition, kernels/cpu/fft.py) where threads exist; one thread runs DUCC0's
    own 1-D transform: both are torch's results."""
    a = _array((1 << 18) * 3, dtype)
    j, t = jtorch.from_numpy(a), torch.from_numpy(a)
    threads = jtorch.get_num_threads()
    try:
        for n_threads in (max(threads, 2), 1):
            jtorch.set_num_threads(n_threads)
            for f, kw in (("fft", {}), ("ifft", {"norm": "ortho"}), ("fft", {"n": 1 << 18})):
                _check(partial(getattr(jtorch.fft, f), j, **kw),
                       partial(getattr(torch.fft, f), t, **kw))
            _check(partial(jtorch.fft.fft, j.flip(0)[::2].reshape(1, -1, 1), dim=1),
                   partial(torch.fft.fft, t.flip(0)[::2].reshape(1, -1, 1), dim=1))
    finally:
        jtorch.set_num_threads(threads)


def test_batched_transforms_large_enough_for_threads():
    """A batch past the grain size (DUCC0 runs its threads over the batch)."""
    j, t = _pair((64, 4096), "complex64")
    _check(lambda: jtorch.fft.fft2(j), lambda: torch.fft.fft2(t))
    jr, tr = _pair((64, 4096), "float32")
    _check(lambda: jtorch.fft.rfft(jr, dim=0), lambda: torch.fft.rfft(tr, dim=0))


def test_round_trips_are_identities():
    j, _ = _pair((3, 8, 5), "float64")
    np.testing.assert_allclose(jtorch.fft.irfftn(jtorch.fft.rfftn(j), s=j.shape).numpy(), j.numpy(),
                               atol=1e-12)
    np.testing.assert_allclose(jtorch.fft.hfft(jtorch.fft.ihfft(j), n=5).numpy(), j.numpy(),
                               atol=1e-12)
    z, _ = _pair((3, 8, 5), "complex128")
    np.testing.assert_allclose(jtorch.fft.ifftn(jtorch.fft.fftn(z, norm="ortho"),
                                                norm="ortho").numpy(), z.numpy(), atol=1e-12)


# -- errors ----------------------------------------------------------------------------------

_ERRORS = {
    "norm": lambda T, x, z: T.fft.fft(x, norm="bad"),
    "n before norm": lambda T, x, z: T.fft.fft(x, n=0, norm="bad"),
    "n negative": lambda T, x, z: T.fft.fft(x, n=-1),
    "dim out of range": lambda T, x, z: T.fft.fft(x, dim=2),
    "0-d": lambda T, x, z: T.fft.fft(T.tensor(1.0)),
    "0-d irfft": lambda T, x, z: T.fft.irfft(T.tensor(1 + 1j)),
    "0-d fft2": lambda T, x, z: T.fft.fft2(T.tensor(1.0)),
    "0-d rfftn": lambda T, x, z: T.fft.rfftn(T.tensor(1.0)),
    "empty signal": lambda T, x, z: T.fft.fft(T.zeros(3, 0)),
    "irfft of one value": lambda T, x, z: T.fft.irfft(T.ones(1, dtype=T.complex64)),
    "rfft of complex": lambda T, x, z: T.fft.rfft(z),
    "ihfft of complex": lambda T, x, z: T.fft.ihfft(z),
    "rfftn of complex": lambda T, x, z: T.fft.rfftn(z),
    "ihfftn of complex": lambda T, x, z: T.fft.ihfftn(z),
    "ihfft2 of complex": lambda T, x, z: T.fft.ihfft2(z),
    "half": lambda T, x, z: T.fft.fft(x.half()),
    "half rfftn": lambda T, x, z: T.fft.rfftn(x.half()),
    "repeated dims": lambda T, x, z: T.fft.fftn(x, dim=(0, 0)),
    "repeated negative dims": lambda T, x, z: T.fft.fftn(x, dim=(1, -1)),
    "s and dim lengths": lambda T, x, z: T.fft.fftn(x, s=(3,), dim=(0, 1)),
    "s too long": lambda T, x, z: T.fft.fftn(x, s=(3, 3, 3)),
    "s zero": lambda T, x, z: T.fft.fftn(x, s=(0, 3)),
    "dims out of range": lambda T, x, z: T.fft.fftn(x, dim=(0, 5)),
    "fft2 of 1-d": lambda T, x, z: T.fft.fft2(T.ones(4)),
    "rfftn no dims": lambda T, x, z: T.fft.rfftn(x, dim=()),
    "irfftn no dims": lambda T, x, z: T.fft.irfftn(z, dim=()),
    "hfftn no dims": lambda T, x, z: T.fft.hfftn(z, dim=()),
    "ihfftn no dims": lambda T, x, z: T.fft.ihfftn(x, dim=()),
    "irfftn bad last": lambda T, x, z: T.fft.irfftn(T.ones(3, 1, dtype=T.complex64)),
    "input list": lambda T, x, z: T.fft.fft([1.0, 2.0]),
    "fftn input list": lambda T, x, z: T.fft.fftn([1.0, 2.0]),
    "dim float": lambda T, x, z: T.fft.fft(x, dim=1.0),
    "n float": lambda T, x, z: T.fft.rfft(x, n=2.0),
    "norm int": lambda T, x, z: T.fft.fft(x, norm=1),
    "s floats": lambda T, x, z: T.fft.fftn(x, s=(2.0,)),
    "out real for complex": lambda T, x, z: T.fft.fft(x, out=T.empty(0)),
    "c2c out real": lambda T, x, z: T.fft.fft(z, out=T.empty(0)),
    "rfft out real": lambda T, x, z: T.fft.rfft(x, out=T.empty(0)),
    "irfft out complex": lambda T, x, z: T.fft.irfft(z, out=T.empty(0, dtype=T.complex64)),
    "hfft out complex": lambda T, x, z: T.fft.hfft(z, out=T.empty(0, dtype=T.complex64)),
    "ihfft out real": lambda T, x, z: T.fft.ihfft(x, out=T.empty(0)),
    "fftn out real": lambda T, x, z: T.fft.fftn(x, out=T.empty(0)),
    "ifftn out real": lambda T, x, z: T.fft.ifftn(x, out=T.empty(0)),
    "fft2 out real": lambda T, x, z: T.fft.fft2(x, out=T.empty(0)),
    "rfftn out real": lambda T, x, z: T.fft.rfftn(x, out=T.empty(0)),
    "rfft2 out real": lambda T, x, z: T.fft.rfft2(x, out=T.empty(0)),
    "irfftn out complex": lambda T, x, z: T.fft.irfftn(z, out=T.empty(0, dtype=T.complex64)),
    "hfftn out complex": lambda T, x, z: T.fft.hfftn(z, out=T.empty(0, dtype=T.complex64)),
    "ihfftn out real": lambda T, x, z: T.fft.ihfftn(x, out=T.empty(0)),
    "ihfftn one dim out real": lambda T, x, z: T.fft.ihfftn(x, dim=(1,), out=T.empty(0)),
    "out with grad": lambda T, x, z: T.fft.fft(x.requires_grad_(),
                                               out=T.empty(4, 6, dtype=T.complex64)),
    "c2c out with grad": lambda T, x, z: T.fft.fft(z.requires_grad_(),
                                                   out=T.empty(4, 6, dtype=T.complex64)),
    "c2r out with grad": lambda T, x, z: T.fft.irfft(z.requires_grad_(), out=T.empty(0)),
}


@pytest.mark.parametrize("case", sorted(_ERRORS))
def test_errors_match_torch(case):
    f = _ERRORS[case]
    jx, tx = _pair((4, 6), "float32")
    jz, tz = _pair((4, 6), "complex64")
    with pytest.raises(Exception) as expected:
        f(torch, tx, tz)
    raises_as(expected.value, lambda: f(jtorch, jx, jz))


# -- special inputs ---------------------------------------------------------------------------

@pytest.mark.parametrize("case", ["fftn 0-d", "fftn 0-d real", "fftn no dims", "s -1",
                                  "irfftn s -1", "irfftn s -1 first", "s int", "dim int",
                                  "s list", "fft of one value", "irfft n=1", "hfft n=1",
                                  "irfftn last n=1", "norm backward"])
def test_special_arguments_match_torch(case):
    f = {
        "fftn 0-d": lambda T, x, z: T.fft.fftn(T.tensor(1 + 1j)),
        "fftn 0-d real": lambda T, x, z: T.fft.fftn(T.tensor(2.0)),
        "fftn no dims": lambda T, x, z: T.fft.fftn(x, dim=()),
        "s -1": lambda T, x, z: T.fft.fftn(x, s=(-1, 3)),
        "irfftn s -1": lambda T, x, z: T.fft.irfftn(z, s=(-1, -1)),
        "irfftn s -1 first": lambda T, x, z: T.fft.irfftn(z, s=(-1, 5)),
        "s int": lambda T, x, z: T.fft.fftn(x, s=3),
        "dim int": lambda T, x, z: T.fft.fftn(x, dim=0),
        "s list": lambda T, x, z: T.fft.fftn(x, s=[3]),
        "fft of one value": lambda T, x, z: T.fft.fft(T.ones(1)),
        "irfft n=1": lambda T, x, z: T.fft.irfft(z, n=1),
        "hfft n=1": lambda T, x, z: T.fft.hfft(z, n=1),
        "irfftn last n=1": lambda T, x, z: T.fft.irfftn(z, s=(2, 1)),
        "norm backward": lambda T, x, z: T.fft.ifft(x, norm="backward"),
    }[case]
    jx, tx = _pair((4, 6), "float32")
    jz, tz = _pair((4, 6), "complex64")
    _check(lambda: f(jtorch, jx, jz), lambda: f(torch, tx, tz))


def test_empty_batch_gives_an_empty_result():
    """A 0-size batch dim (torch's MKL backend raises there; NumPy and pocketfft return an
    empty result, as jtorch does)."""
    for fn in ONE_D:
        x = jtorch.zeros(0, 4, dtype=jtorch.complex64 if fn in ("irfft", "hfft", "fft", "ifft")
                         else jtorch.float32)
        y = getattr(jtorch.fft, fn)(x)
        assert y.shape[0] == 0 and y.numel() == 0


def test_out_resizes_and_casts_like_torch():
    jz, tz = _pair((4, 6), "complex64")
    jx, tx = _pair((4, 6), "float32")
    for f in (lambda T, x, z, o: T.fft.fft(z, out=o(T.complex64, 3)),
              lambda T, x, z, o: T.fft.fft(x, out=o(T.complex128, 0)),
              lambda T, x, z, o: T.fft.fft(z.to(T.complex128), out=o(T.complex64, 0)),
              lambda T, x, z, o: T.fft.irfft(z, out=o(T.float64, 0)),
              lambda T, x, z, o: T.fft.ihfft(x, out=o(T.complex64, 0)),
              lambda T, x, z, o: T.fft.ihfftn(x, out=o(T.complex64, 0)),
              lambda T, x, z, o: T.fft.rfftn(x, out=o(T.complex64, 24)),
              lambda T, x, z, o: T.fft.hfft2(z, out=o(T.float32, 0))):
        outs: dict = {}

        def make(lib, outs=outs):
            def o(dtype, n):
                outs[lib] = lib.empty(n, dtype=dtype)
                return outs[lib]
            return o

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = f(torch, tx, tz, make(torch))
            res = f(jtorch, jx, jz, make(jtorch))
        assert res is outs[jtorch] and expected is outs[torch]
        _same(res, expected, strides=False, eps=1e-5)  # float32 transforms cast to out's dtype


# -- fftfreq, rfftfreq, fftshift, ifftshift --------------------------------------------------

_HELPERS = {
    "fftfreq": lambda T: T.fft.fftfreq(5),
    "fftfreq even": lambda T: T.fft.fftfreq(6, 0.3),
    "fftfreq d": lambda T: T.fft.fftfreq(5, 0.1, dtype=T.float64),
    "fftfreq 0": lambda T: T.fft.fftfreq(0),
    "fftfreq 1": lambda T: T.fft.fftfreq(1),
    "fftfreq big": lambda T: T.fft.fftfreq(1001, 0.37),
    "fftfreq big f64": lambda T: T.fft.fftfreq(1001, 0.37, dtype=T.float64),
    "fftfreq d tensor": lambda T: T.fft.fftfreq(4, T.tensor(0.5)),
    "fftfreq negative": lambda T: T.fft.fftfreq(-1),
    "fftfreq int dtype": lambda T: T.fft.fftfreq(5, dtype=T.int64),
    "fftfreq complex dtype": lambda T: T.fft.fftfreq(4, dtype=T.complex64),
    "fftfreq float n": lambda T: T.fft.fftfreq(5.0),
    "rfftfreq": lambda T: T.fft.rfftfreq(5),
    "rfftfreq even": lambda T: T.fft.rfftfreq(8, 2.5),
    "rfftfreq big": lambda T: T.fft.rfftfreq(1001, 0.37),
    "rfftfreq -1": lambda T: T.fft.rfftfreq(-1),
    "rfftfreq -3": lambda T: T.fft.rfftfreq(-3),
    "rfftfreq int dtype": lambda T: T.fft.rfftfreq(5, dtype=T.int64),
    "fftshift": lambda T: T.fft.fftshift(T.arange(5)),
    "fftshift 2-d": lambda T: T.fft.fftshift(T.arange(15).view(3, 5)),
    "ifftshift 2-d": lambda T: T.fft.ifftshift(T.arange(15).view(3, 5)),
    "fftshift dim": lambda T: T.fft.fftshift(T.arange(6).view(2, 3), dim=1),
    "fftshift negative dim": lambda T: T.fft.fftshift(T.arange(6).view(2, 3), dim=-1),
    "ifftshift dims": lambda T: T.fft.ifftshift(T.arange(12).view(3, 4), dim=(0, 1)),
    "fftshift dim list": lambda T: T.fft.fftshift(T.arange(6).view(2, 3), dim=[1]),
    "fftshift bad dim": lambda T: T.fft.fftshift(T.arange(6).view(2, 3), dim=3),
    "fftshift 0-d": lambda T: T.fft.fftshift(T.tensor(1.0)),
    "ifftshift 0-d": lambda T: T.fft.ifftshift(T.tensor(1.0)),
    "fftshift empty": lambda T: T.fft.fftshift(T.zeros(0, 3)),
}


@pytest.mark.parametrize("case", sorted(_HELPERS))
def test_helpers_match_torch(case):
    f = _HELPERS[case]
    try:
        expected = f(torch)
    except Exception as e:  # noqa: BLE001
        raises_as(e, lambda: f(jtorch))
        return
    res = f(jtorch)
    assert str(res.dtype) == str(expected.dtype) and tuple(res.shape) == tuple(expected.shape)
    np.testing.assert_array_equal(res.numpy(), expected.numpy())


def test_fftfreq_factory_arguments():
    x = jtorch.fft.fftfreq(4, requires_grad=True, dtype=jtorch.float64)
    assert x.requires_grad and x.dtype is jtorch.float64 and x.is_leaf
    m = jtorch.fft.rfftfreq(7, device="meta")
    assert m.is_meta and tuple(m.shape) == (4,)
    out = jtorch.empty(1, dtype=jtorch.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = jtorch.fft.fftfreq(4, out=out)
    assert r is out
    np.testing.assert_array_equal(out.numpy(), [0.0, 0.25, -0.5, -0.25])


# -- meta tensors -----------------------------------------------------------------------------

@pytest.mark.parametrize("fn", ONE_D + N_D)
def test_meta_results_have_torchs_geometry(fn):
    """Shapes, dtypes and strides without data (torch's meta kernels agree with its CPU
    strides only for some layouts; jtorch's meta results are its CPU results' geometry)."""
    real_only = fn in ("rfft", "ihfft", "rfftn", "ihfftn")
    dtypes = ("float32", "float64") if real_only else ("float32", "complex128")
    for dtype, perm in itertools.product(dtypes, (None, (2, 0, 1))):
        j, _ = _pair((3, 4, 5), dtype, perm)
        m = jtorch.empty_strided(j.shape, j.stride(), dtype=j.dtype, device="meta")
        f = getattr(jtorch.fft, fn)
        for kw in ({}, {"dim": 0} if fn in ONE_D else {"dim": (0, 2)},
                   {"n": 4} if fn in ONE_D else {"s": (2, 6)}):
            c, r = f(j, **kw), f(m, **kw)
            assert r.is_meta
            assert (tuple(r.shape), r.dtype, r.stride()) == (tuple(c.shape), c.dtype, c.stride())
