"""FFTs (jtorch.fft: DUCC0's transforms through rocket-fft from compiled code): one long 1-D
transform of complex64 and of float32 data (2^20 points), and a batch of short real
transforms (an STFT's frames), forward and with the input's gradient. Flops are the usual
5 n log2(n) per complex transform (half that for a real one). Target: within 1.5x torch."""

from __future__ import annotations

import math

import numpy as np

from ..harness import Case, register
from ._util import functional, rand

FULL = (1 << 20,)
QUICK = (1 << 16,)


def _complex(n: int) -> np.ndarray:
    return (rand(n) + 1j * rand(n, seed=1)).astype(np.complex64)


def _flops(n: int, batch: int = 1, real: bool = False) -> float:
    return batch * 5.0 * n * math.log2(n) / (2 if real else 1)


@register("fft/fft", full=FULL, quick=QUICK, label="c64_{}")
def fft(n: int) -> Case:
    """``torch.fft.fft(x)``: x complex64 of n points."""
    return Case(functional(lambda lib, x: lib.fft.fft(x), [_complex(n)], numpy=np.fft.fft),
                kind="compute", flops=_flops(n), note="target: <= 1.5x torch")


@register("fft/rfft", full=FULL, quick=QUICK, label="f32_{}")
def rfft(n: int) -> Case:
    """``torch.fft.rfft(x)``: x float32 of n points."""
    return Case(functional(lambda lib, x: lib.fft.rfft(x), [rand(n)], numpy=np.fft.rfft),
                kind="compute", flops=_flops(n, real=True), note="target: <= 1.5x torch")


@register("fft/rfft_batch_fwd_bwd", full=((512, 1024),), quick=((64, 1024),),
          label="{0[0]}x{0[1]}")
def rfft_batch_fwd_bwd(shape: tuple) -> Case:
    """``torch.fft.rfft(x).abs().sum().backward()`` over a (batch, n) float32 batch."""
    batch, n = shape

    def step(lib, x):
        lib.fft.rfft(x).abs().sum().backward()
        x.grad = None

    return Case(functional(step, [rand(batch, n)], grad=(0,)), kind="compute",
                flops=3 * _flops(n, batch, real=True), note="target: <= 1.5x torch")
