"""torch.stft / torch.istft, written in jtorch ops over the FFT OpDefs (so they differentiate
and trace like any composite): torch's functional.py padding for ``center``, then SpectralOps.cpp's
framing (a strided view of the signal), windowing, one batched transform over the last dim,
and for istft the inverse transform, an overlap-add (``fold``) and the division by the summed
squared window, with torch's argument checks and messages.

>>> import jtorch
>>> x = jtorch.arange(32.0)
>>> jtorch.stft(x, 8, window=jtorch.hann_window(8), return_complex=True).shape
torch.Size([5, 17])
"""

from __future__ import annotations

import warnings

from .. import dtypes as _dt
from ..amp import state as _amp
from ..kernels.defs import fft as _F
from ..tensor import Tensor

_warned: set = set()


def _warn_once(key: str, message: str) -> None:
    """TORCH_WARN_ONCE: the first time in the process."""
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


def _tstr(t: Tensor, braces: bool = False) -> str:
    """Tensor::toString as torch prints it in these messages (``torch.FloatTensor``,
    ``CPUComplexFloatType``; on meta ``torch.meta.FloatTensor``, ``MetaFloatType`` before a
    window's braces, ``MetaComplexFloatType``)."""
    d = t.dtype
    meta = t.device.type == "meta"
    if d.is_complex:
        return f"{'Meta' if meta else 'CPU'}{d.scalar_name}Type"
    if meta:
        return f"Meta{d.scalar_name}Type" if braces else f"torch.meta.{d.scalar_name}Tensor"
    return f"torch.{d.scalar_name}Tensor"


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def _opt(v) -> str:
    return "None" if v is None else str(int(v))


def _window_str(window) -> str:
    return "None" if window is None else f"{_tstr(window, True)}{{{_sizes(window)}}}"


@_amp.fp32_op
def stft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
         window: Tensor | None = None, center: bool = True, pad_mode: str = "reflect",
         normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
    """The short-time Fourier transform: (B?, L) -> (B?, n_fft // 2 + 1 or n_fft, n_frames)."""
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if input.dtype in _dt.HALF and (window is None or window.dtype is input.dtype):
        # (the frames' dtype)
        raise RuntimeError(f"MKL FFT doesn't support tensors of type: {input.dtype.scalar_name}")
    if center:
        from ..nn import functional as F

        signal_dim = input.dim()
        extended = [1] * (3 - signal_dim) + list(input.shape)
        pad = int(n_fft // 2)
        input = F.pad(input.view(extended), [pad, pad], pad_mode)
        input = input.view(input.shape[-signal_dim:] if signal_dim else input.shape)
    return _stft(input, n_fft, hop_length, win_length, window, normalized, onesided,
                 return_complex, align_to_window)


def _stft(x: Tensor, n_fft: int, hop_length, win_length, window, normalized: bool, onesided,
          return_complex, align_to_window) -> Tensor:
    if window is None:
        _warn_once("stft_window", "A window was not provided. A rectangular window will be "
                   "applied,which is known to cause spectral leakage. Other windows such as "
                   "torch.hann_window or torch.hamming_window are recommended to reduce spectral "
                   "leakage.To suppress this warning and use a rectangular window, explicitly set "
                   "`window=torch.ones(n_fft, device=<device>)`.")
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if return_complex is None:
        rc = x.dtype.is_complex or (window is not None and window.dtype.is_complex)
    else:
        rc = bool(return_complex)
    if not rc:
        if return_complex is None:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in a "
                               "future PyTorch release.")
        _warn_once("stft_real", "stft with return_complex=False is deprecated. In a future "
                   "pytorch release, stft will return complex tensors for all inputs, and "
                   "return_complex=False will raise an error.\nNote: you can still call "
                   "torch.view_as_real on the complex output to recover the old return format.")

    def fail(msg: str):
        return RuntimeError(
            f"stft({_tstr(x)}{_sizes(x)}, n_fft={n_fft}, hop_length={hop}, win_length={win}, "
            f"window={_window_str(window)}, normalized={int(bool(normalized))}, "
            f"onesided={_opt(onesided)}, return_complex={_opt(return_complex)}, "
            f"align_to_window={_opt(align_to_window)}) : {msg}")

    if not (x.dtype.is_floating_point or x.dtype.is_complex):
        raise fail("expected a tensor of floating point or complex values")
    if x.dim() not in (1, 2):
        raise fail("expected a 1D or 2D tensor")
    y = x.unsqueeze(0) if x.dim() == 1 else x
    length = y.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise fail(f"expected 0 < n_fft < {length}, but got n_fft={win}")
    if hop <= 0:
        raise fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise fail(f"expected a 1D window tensor of size equal to win_length={win}, but got window "
                   f"with size {_sizes(window)}")
    left = (n_fft - win) // 2
    w = window
    if win < n_fft:  # the window centred in n_fft zeros
        from ..ops.creation import ones
        from ..ops.extras import constant_pad_nd

        w = ones(win, dtype=x.dtype, device=x.device) if window is None else window
        w = constant_pad_nd(w, [left, n_fft - win - left])
    if align_to_window:  # frames start where their (centred) window does
        frames = 1 + (length - win) // hop
        y = _pad_right(_pad_left(y, left), max(left, (frames - 1) * hop + n_fft - length - left))
    else:
        frames = 1 + (length - n_fft) // hop
    y = _frames(y, n_fft, hop, frames)  # (batch, frames, n_fft)
    if w is not None:
        y = y * w
    is_complex = y.dtype.is_complex
    sided = (not is_complex) if onesided is None else bool(onesided)
    code = _F.NORM_BY_ROOT_N if normalized else _F.NORM_NONE
    if is_complex:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = _F.c2c(y, (2,), code, True)
    else:
        out = _F.r2c(y, (2,), code, sided)
    out = out.transpose(1, 2)
    if x.dim() == 1:
        out = out.squeeze(0)
    return out if rc else _as_real(out)


def _as_real(z: Tensor) -> Tensor:
    """view_as_real's values and strides (jtorch has no view_as_real yet: a copy here)."""
    from ..ops.creation import empty_strided

    res = empty_strided((*z.shape, 2), tuple(2 * s for s in z.stride()) + (1,),
                        dtype=z.dtype.to_real(), device=z.device)
    res[..., 0] = z.real
    res[..., 1] = z.imag
    return res


def _frames(y: Tensor, n_fft: int, hop: int, frames: int) -> Tensor:
    """The frames y[:, t * hop : t * hop + n_fft], t < frames: im2col (``F.unfold``), whose
    gradient (an overlap-add, ``fold``) also serves complex signals."""
    from ..nn import functional as F

    batch, length = y.shape
    cols = F.unfold(y.reshape(batch, 1, 1, length), (1, n_fft), stride=(1, hop))
    return cols.transpose(1, 2).narrow(1, 0, frames)


def _pad_left(y: Tensor, n: int) -> Tensor:
    if n <= 0:
        return y
    from ..ops.extras import constant_pad_nd

    return constant_pad_nd(y, [n, 0])


def _pad_right(y: Tensor, n: int) -> Tensor:
    if n <= 0:
        return y
    from ..ops.extras import constant_pad_nd

    return constant_pad_nd(y, [0, n])


def _overlap_add(frames: Tensor, hop: int, length: int) -> Tensor:
    """(C, n_frames, n_fft) frames summed at offsets t * hop into (C, length) (unfold_backward)."""
    from ..nn import functional as F

    c, _, n_fft = frames.shape
    folded = F.fold(frames.transpose(1, 2), (1, length), (1, n_fft), stride=(1, hop))
    return folded.reshape(c, length)


def istft(input: Tensor, n_fft: int, hop_length: int | None = None, win_length: int | None = None,
          window: Tensor | None = None, center: bool = True, normalized: bool = False,
          onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """The inverse short-time Fourier transform (least-squares overlap-add of stft's frames)."""
    if window is None:
        _warn_once("istft_window", "A window was not provided. A rectangular window will be "
                   "applied.Please provide the same window used by stft to make the inversion "
                   "lossless.To suppress this warning and use a rectangular window, explicitly set "
                   "`window=torch.ones(n_fft, device=<device>)`.")
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output from "
                           "stft with return_complex=True.")
    real_dim = input.dim() + 1  # the dims of torch's view_as_real(input)
    if real_dim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-real_dim}, "
                         f"{real_dim - 1}], but got -3)")
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    expected = n_fft + hop * (n_frames - 1)

    def fail(msg: str):
        return RuntimeError(
            f"istft({_tstr(input)}{_sizes(input)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_window_str(window)}, center={int(bool(center))}, "
            f"normalized={int(bool(normalized))}, onesided={_opt(onesided)}, "
            f"length={'None' if length is None else length}, "
            f"return_complex={int(bool(return_complex))}) {msg}")

    if input.numel() == 0:
        raise fail(": input tensor cannot be empty.")
    if real_dim not in (3, 4):
        raise fail(f": expected a tensor with 3 or 4 dimensions, but got {real_dim}")
    sided = fft_size != n_fft if onesided is None else bool(onesided)
    if sided and n_fft // 2 + 1 != fft_size:
        raise fail(": expected the frequency dimension (3rd to the last) of the input tensor to "
                   f"match n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not sided and n_fft != fft_size:
        raise fail(": expected the frequency dimension (3rd to the last) of the input tensor to "
                   f"match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        raise fail(": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        raise fail(": expected 0 < win_length <= n_fft")
    if window is not None and (window.dim() != 1 or window.shape[0] != win):
        raise fail(": Invalid window shape. window has to be 1D and length of `win_length`")
    from ..ops.creation import ones
    from ..ops.extras import constant_pad_nd

    w = ones(win, dtype=input.dtype.to_real(), device=input.device) if window is None else window
    if win != n_fft:
        left = (n_fft - win) // 2
        w = constant_pad_nd(w, [left, n_fft - win - left])
    x = input.unsqueeze(0) if real_dim == 3 else input
    x = x.transpose(1, 2)  # (channel, n_frames, fft_size)
    code = _F.NORM_BY_ROOT_N if normalized else _F.NORM_BY_N
    if return_complex:
        if sided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        x = _F.c2c(x, (2,), code, False)
    else:
        if window is not None and window.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not sided:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        x = _F.c2r(x, (2,), code, n_fft)
    y = _overlap_add(x * w.view(1, 1, n_fft), hop, expected)
    envelope = _overlap_add((w * w).expand(1, n_frames, n_fft), hop, expected)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = -(n_fft // 2) if center else expected
    y = y[:, start:end]
    envelope = envelope[:, start:end]
    if bool(envelope.abs().min() < 1e-11):
        raise fail("window overlap add min: 1\n[ CPUBoolType{} ]")
    y = y / envelope
    if real_dim == 3:
        y = y.squeeze(0)
    if end > expected:
        _warn_once("istft_length", "The length of signal is shorter than the length parameter. "
                   "Result is being padded with zeros in the tail. Please check your center and "
                   "hop_length settings.")
        y = constant_pad_nd(y, [0, end - expected])
    return y
