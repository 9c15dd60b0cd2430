"""torch.stft / torch.istft (and the Tensor methods) against torch: values, shapes, strides,
errors and warnings, round trips, and gradients with respect to the signal and the window."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
from helpers import raises_as

import jtorch

_RNG = np.random.default_rng(3)
_SIG = _RNG.standard_normal((2, 40)).astype(np.float32)
_SIGC = (_RNG.standard_normal((2, 40)) + 1j * _RNG.standard_normal((2, 40))).astype(np.complex64)
_SIGD = _RNG.standard_normal((3, 50))


def _win(n: int, dtype=np.float32) -> np.ndarray:
    """A Hann window made once, handed to both libraries (their hann_window differ by ulps)."""
    return (0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n)).astype(dtype)


def _t(lib, a: np.ndarray):
    return lib.from_numpy(a.copy())


def _run(f, lib):
    return f(lib, _t(lib, _SIG), _t(lib, _SIGC), _t(lib, _SIGD),
             lambda n=16, dtype=np.float32: _t(lib, _win(n, dtype)))


def _check(f):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = _run(f, torch)
        except Exception as e:  # noqa: BLE001  (the error itself is compared)
            raises_as(e, lambda: _run(f, jtorch))
            return
        res = _run(f, jtorch)
    assert str(res.dtype) == str(expected.dtype) and tuple(res.shape) == tuple(expected.shape)
    if expected.numel() > 1:
        assert res.stride() == expected.stride()
    a, b = res.detach().numpy(), expected.detach().resolve_conj().numpy()
    eps = 1e-5 if expected.dtype in (torch.float32, torch.complex64) else 1e-12
    assert np.abs(a - b).max() <= eps * max(1.0, float(np.abs(b).max()))


def _S(T, s, w):
    return T.stft(s, 16, window=w(), return_complex=True)


STFT = {
    "basic": lambda T, s, c, d, w: T.stft(s, 16, window=w(), return_complex=True),
    "no window": lambda T, s, c, d, w: T.stft(s, 16, return_complex=True),
    "return_complex missing": lambda T, s, c, d, w: T.stft(s, 16, window=w()),
    "return_complex False": lambda T, s, c, d, w: T.stft(s, 16, window=w(), return_complex=False),
    "1-d": lambda T, s, c, d, w: T.stft(s[0], 16, window=w(), return_complex=True),
    "3-d": lambda T, s, c, d, w: T.stft(s[None], 16, window=w(), return_complex=True),
    "0-d": lambda T, s, c, d, w: T.stft(T.tensor(1.0), 16, return_complex=True),
    "0-d constant": lambda T, s, c, d, w: T.stft(T.tensor(1.0), 16, pad_mode="constant",
                                                 return_complex=True),
    "integer": lambda T, s, c, d, w: T.stft(T.arange(40), 16, return_complex=True),
    "n_fft too big": lambda T, s, c, d, w: T.stft(s, 64, center=False, return_complex=True),
    "n_fft 0": lambda T, s, c, d, w: T.stft(s, 0, center=False, return_complex=True),
    "hop 0": lambda T, s, c, d, w: T.stft(s, 16, hop_length=0, return_complex=True),
    "win_length too big": lambda T, s, c, d, w: T.stft(s, 16, win_length=20, return_complex=True),
    "window size": lambda T, s, c, d, w: T.stft(s, 16, window=T.ones(10), return_complex=True),
    "window 2-d": lambda T, s, c, d, w: T.stft(s, 16, window=T.ones(1, 16), return_complex=True),
    "short window": lambda T, s, c, d, w: T.stft(s, 16, win_length=10, window=w(10),
                                                 return_complex=True),
    "short rectangle": lambda T, s, c, d, w: T.stft(s, 16, win_length=10, return_complex=True),
    "complex": lambda T, s, c, d, w: T.stft(c, 16, window=w()),
    "complex onesided": lambda T, s, c, d, w: T.stft(c, 16, window=w(), onesided=True),
    "complex short rectangle": lambda T, s, c, d, w: T.stft(c, 16, win_length=9),
    "complex window": lambda T, s, c, d, w: T.stft(s, 16, window=w().to(T.complex64)),
    "two-sided": lambda T, s, c, d, w: T.stft(s, 16, window=w(), onesided=False,
                                              return_complex=True),
    "constant pad": lambda T, s, c, d, w: T.stft(s, 16, window=w(), pad_mode="constant",
                                                 return_complex=True),
    "replicate pad": lambda T, s, c, d, w: T.stft(s, 15, hop_length=3, window=w(15),
                                                  pad_mode="replicate", return_complex=True),
    "circular pad": lambda T, s, c, d, w: T.stft(s, 16, window=w(), pad_mode="circular",
                                                 return_complex=True),
    "unknown pad": lambda T, s, c, d, w: T.stft(s, 16, window=w(), pad_mode="foo",
                                                return_complex=True),
    "reflect too short": lambda T, s, c, d, w: T.stft(T.ones(5), 16, window=w(),
                                                      return_complex=True),
    "align with center": lambda T, s, c, d, w: T.stft(s, 16, window=w(), align_to_window=True,
                                                      return_complex=True),
    "align": lambda T, s, c, d, w: T.stft(s, 16, win_length=10, window=w(10), center=False,
                                          align_to_window=True, return_complex=True),
    "align False": lambda T, s, c, d, w: T.stft(s, 16, win_length=10, window=w(10), center=False,
                                                align_to_window=False, return_complex=True),
    "align odd": lambda T, s, c, d, w: T.stft(s[:, :37], 16, hop_length=3, win_length=9,
                                              window=w(9), center=False, align_to_window=True,
                                              return_complex=True),
    "normalized": lambda T, s, c, d, w: T.stft(s, 16, window=w(), normalized=True,
                                               return_complex=True),
    "float64": lambda T, s, c, d, w: T.stft(d, 20, hop_length=5, window=w(20, np.float64),
                                            return_complex=True),
    "float64 signal, float32 window": lambda T, s, c, d, w: T.stft(d, 16, window=w(),
                                                                   return_complex=True),
    "float32 signal, float64 window": lambda T, s, c, d, w: T.stft(s, 16, window=w(16, np.float64),
                                                                   return_complex=True),
    "half": lambda T, s, c, d, w: T.stft(s.half(), 16, window=w().half(), return_complex=True),
    "strided signal": lambda T, s, c, d, w: T.stft(d.T.contiguous().T[:, ::2], 8,
                                                   window=w(8, np.float64), return_complex=True),
    "hop longer than frame": lambda T, s, c, d, w: T.stft(s, 8, hop_length=11, window=w(8),
                                                          return_complex=True),
    "method": lambda T, s, c, d, w: s.stft(16, window=w(), return_complex=True),
}

ISTFT = {
    "basic": lambda T, s, c, d, w: T.istft(_S(T, s, w), 16, window=w()),
    "length": lambda T, s, c, d, w: T.istft(_S(T, s, w), 16, window=w(), length=40),
    "length longer": lambda T, s, c, d, w: T.istft(_S(T, s, w), 16, window=w(), length=50),
    "length shorter": lambda T, s, c, d, w: T.istft(_S(T, s, w), 16, window=w(), length=30),
    "real input": lambda T, s, c, d, w: T.istft(s, 16, window=w()),
    "no window": lambda T, s, c, d, w: T.istft(T.stft(s, 16, return_complex=True), 16),
    "1-d": lambda T, s, c, d, w: T.istft(_S(T, s, w)[0, :, 0], 16, window=w()),
    "2-d": lambda T, s, c, d, w: T.istft(_S(T, s, w)[0], 16, window=w()),
    "4-d": lambda T, s, c, d, w: T.istft(_S(T, s, w)[None, None], 16, window=w()),
    "empty": lambda T, s, c, d, w: T.istft(_S(T, s, w)[:, :, :0], 16, window=w()),
    "frequencies": lambda T, s, c, d, w: T.istft(_S(T, s, w)[:, :5], 16, window=w()),
    "frequencies two-sided": lambda T, s, c, d, w: T.istft(_S(T, s, w), 16, window=w(),
                                                           onesided=False),
    "hop too big": lambda T, s, c, d, w: T.istft(_S(T, s, w), 16, hop_length=20, window=w()),
    "win_length too big": lambda T, s, c, d, w: T.istft(_S(T, s, w), 16, win_length=20),
    "window size": lambda T, s, c, d, w: T.istft(_S(T, s, w), 16, window=T.ones(10)),
    "NOLA": lambda T, s, c, d, w: T.istft(_S(T, s, w), 16, window=T.zeros(16)),
    "NOLA not centred": lambda T, s, c, d, w: T.istft(_S(T, s, w), 16, window=w(), center=False),
    "not centred": lambda T, s, c, d, w: T.istft(
        T.stft(s, 16, center=False, window=T.ones(16), return_complex=True), 16,
        window=T.ones(16), center=False),
    "complex result": lambda T, s, c, d, w: T.istft(T.stft(c, 16, window=w()), 16, window=w(),
                                                    return_complex=True),
    "complex result onesided": lambda T, s, c, d, w: T.istft(_S(T, s, w), 16, window=w(),
                                                             return_complex=True),
    "two-sided to real": lambda T, s, c, d, w: T.istft(T.stft(c, 16, window=w()), 16, window=w()),
    "complex window": lambda T, s, c, d, w: T.istft(T.stft(c, 16, window=w()), 16,
                                                    window=w().to(T.complex64)),
    "float64": lambda T, s, c, d, w: T.istft(T.stft(d, 20, hop_length=5, window=w(20, np.float64),
                                                    return_complex=True),
                                             20, hop_length=5, window=w(20, np.float64)),
    "short window": lambda T, s, c, d, w: T.istft(
        T.stft(s, 16, win_length=10, window=w(10), return_complex=True), 16, win_length=10,
        window=w(10)),
    "normalized": lambda T, s, c, d, w: T.istft(
        T.stft(s, 16, window=w(), normalized=True, return_complex=True), 16, window=w(),
        normalized=True),
    "one frame": lambda T, s, c, d, w: T.istft(_S(T, s, w)[:, :, :1], 16, window=w()),
    "two-sided given": lambda T, s, c, d, w: T.istft(
        T.stft(s, 16, window=w(), onesided=False, return_complex=True), 16, window=w(),
        onesided=False),
    "method": lambda T, s, c, d, w: _S(T, s, w).istft(16, window=w()),
}


@pytest.mark.parametrize("case", sorted(STFT))
def test_stft_matches_torch(case):
    _check(STFT[case])


@pytest.mark.parametrize("case", sorted(ISTFT))
def test_istft_matches_torch(case):
    _check(ISTFT[case])


def test_istft_inverts_stft():
    x = jtorch.from_numpy(_SIGD)
    w = jtorch.hann_window(20, dtype=jtorch.float64)
    y = jtorch.istft(jtorch.stft(x, 20, hop_length=5, window=w, return_complex=True), 20,
                     hop_length=5, window=w, length=50)
    np.testing.assert_allclose(y.numpy(), _SIGD, atol=1e-12)


def test_warnings_match_torchs():
    """torch warns once per process (TORCH_WARN_ONCE): the texts, when they first fire."""
    from jtorch.fft import _stft

    _stft._warned.clear()
    x = jtorch.from_numpy(_SIG)
    with pytest.warns(UserWarning, match="A window was not provided. A rectangular window will "
                                         "be applied,which is known"):
        jtorch.stft(x, 16, return_complex=True)
    with pytest.warns(UserWarning, match="stft with return_complex=False is deprecated"):
        jtorch.stft(x, 16, window=jtorch.ones(16), return_complex=False)
    with pytest.warns(UserWarning, match="Please provide the same window used by stft"):
        jtorch.istft(jtorch.stft(x, 16, window=jtorch.ones(16), return_complex=True), 16)
    with pytest.warns(UserWarning, match="The length of signal is shorter than the length"):
        jtorch.istft(jtorch.stft(x, 16, window=jtorch.ones(16), return_complex=True), 16,
                     window=jtorch.ones(16), length=60)


def _grads_match(f, a: np.ndarray, w: np.ndarray) -> None:
    tx, tw = torch.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(w.copy()).requires_grad_()
    jx, jw = jtorch.from_numpy(a.copy()).requires_grad_(), jtorch.from_numpy(w.copy()).requires_grad_()
    ty, jy = f(torch, tx, tw), f(jtorch, jx, jw)
    g = _RNG.standard_normal(tuple(ty.shape))
    if ty.dtype.is_complex:
        g = g + 1j * _RNG.standard_normal(tuple(ty.shape))
    tg = torch.autograd.grad(ty, (tx, tw), torch.from_numpy(g))
    jg = jtorch.autograd.grad(jy, (jx, jw), jtorch.from_numpy(g))
    for a_, b_ in zip(jg, tg):
        np.testing.assert_allclose(a_.numpy(), b_.resolve_conj().numpy(), atol=1e-11)


@pytest.mark.parametrize("case", ["stft", "stft normalized 1-d", "stft complex", "stft real pairs",
                                  "istft", "istft length", "istft of a spectrogram",
                                  "istft complex"])
def test_gradients_match_torch(case):
    a = _RNG.standard_normal((2, 40))
    ac = a + 1j * _RNG.standard_normal((2, 40))
    spec = _RNG.standard_normal((9, 11)) + 1j * _RNG.standard_normal((9, 11))
    spec2 = _RNG.standard_normal((16, 11)) + 1j * _RNG.standard_normal((16, 11))
    w = _RNG.random(16) + 0.5

    def S(T, x, w):
        return T.stft(x, 16, window=w, return_complex=True)

    f, x = {
        "stft": (S, a),
        "stft normalized 1-d": (lambda T, x, w: T.stft(x[0], 16, hop_length=3, window=w,
                                                       normalized=True, return_complex=True), a),
        "stft complex": (lambda T, x, w: T.stft(x, 16, window=w, return_complex=True), ac),
        "stft real pairs": (lambda T, x, w: T.stft(x, 16, window=w, return_complex=False), a),
        "istft": (lambda T, x, w: T.istft(S(T, x, w), 16, window=w), a),
        "istft length": (lambda T, x, w: T.istft(S(T, x, w), 16, window=w, length=45), a),
        "istft of a spectrogram": (lambda T, x, w: T.istft(x, 16, window=w), spec),
        "istft complex": (lambda T, x, w: T.istft(x, 16, window=w, return_complex=True), spec2),
    }[case]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _grads_match(f, x, w)
