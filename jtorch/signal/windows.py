"""``torch.signal.windows``: the eleven window functions, as torch builds them.

Each window is an elementwise function of one evenly spaced ramp (``linspace`` over the
window's own scaled positions) so that float32 and float64 windows round as torch's do: the
ramp's end points are computed in Python floats, then the registry ops run on the tensor.
``sym=False`` gives the periodic window (one point longer, last point dropped), as in torch
and SciPy.

>>> import jtorch as torch
>>> torch.signal.windows.bartlett(5).tolist()
[0.0, 0.5, 1.0, 0.5, 0.0]
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from .. import dtypes as _dt
from ..ops import creation, pointwise, reduction, special
from ..tensor import Tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checks(name: str, M: int, dtype, layout):
    """torch's common argument checks; the dtype resolved (default: the default dtype)."""
    dtype = _dt.get_default_dtype() if dtype is None else _dt.to_dtype(dtype)
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not _dt.strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (_dt.float32, _dt.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _trivial(M: int, dtype, device, requires_grad: bool, ones_at_one: bool) -> Tensor | None:
    """The empty window for M = 0, and the one-point window of ones where the window has one."""
    if M == 0:
        return creation.empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1 and ones_at_one:
        return creation.ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def _ramp(start, end, M: int, dtype, device, requires_grad: bool) -> Tensor:
    return creation.linspace(start, end, M, dtype=dtype, device=device,
                             requires_grad=requires_grad)


def _span(M: int, sym: bool) -> int:
    """The denominator of a window's positions: M - 1 for a symmetric window, M for a
    periodic one."""
    return M - 1 if sym else M


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,
                dtype=None, layout=_dt.strided, device=None, requires_grad: bool = False) -> Tensor:
    """The exponential (Poisson) window, ``exp(-|n - center| / tau)``."""
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    done = _trivial(M, dtype, device, requires_grad, False)
    if done is not None:
        return done
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    scale = 1 / tau
    k = _ramp(-center * scale, (-center + (M - 1)) * scale, M, dtype, device, requires_grad)
    return pointwise.exp(-pointwise.abs(k))


def cosine(M: int, *, sym: bool = True, dtype=None, layout=_dt.strided, device=None,
           requires_grad: bool = False) -> Tensor:
    """The cosine (sine) window, ``sin(pi (n + 1/2) / M)``."""
    dtype = _checks("cosine", M, dtype, layout)
    done = _trivial(M, dtype, device, requires_grad, False)
    if done is not None:
        return done
    scale = math.pi / (M + 1 if not sym and M > 1 else M)
    k = _ramp(0.5 * scale, (0.5 + (M - 1)) * scale, M, dtype, device, requires_grad)
    return pointwise.sin(k)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=_dt.strided,
             device=None, requires_grad: bool = False) -> Tensor:
    """The Gaussian window, ``exp(-(n - c)^2 / (2 std^2))`` about the window's centre."""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    done = _trivial(M, dtype, device, requires_grad, False)
    if done is not None:
        return done
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    scale = 1 / (std * math.sqrt(2))
    k = _ramp(start * scale, (start + (M - 1)) * scale, M, dtype, device, requires_grad)
    return pointwise.exp(-(k ** 2))


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=_dt.strided,
           device=None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window, ``I0(beta sqrt(1 - (2n / span - 1)^2)) / I0(beta)``; beta is taken
    in the window's dtype first (so its square cannot overflow into nan)."""
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    done = _trivial(M, dtype, device, requires_grad, True)
    if done is not None:
        return done
    b = creation.tensor(beta, dtype=dtype, device=device)
    step = 2.0 * b / _span(M, sym)
    end = pointwise.minimum(b, -b + (M - 1) * step)
    k = _ramp(-b, end, M, dtype, device, requires_grad)
    return special.i0(pointwise.sqrt(b * b - pointwise.pow(k, 2))) / special.i0(b)


def general_cosine(M, *, a: Iterable, sym: bool = True, dtype=None, layout=_dt.strided,
                   device=None, requires_grad: bool = False) -> Tensor:
    """The generalised cosine window, ``sum_i (-1)^i a_i cos(2 pi i n / span)``."""
    dtype = _checks("general_cosine", M, dtype, layout)
    done = _trivial(M, dtype, device, requires_grad, True)
    if done is not None:
        return done
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    step = 2 * math.pi / _span(M, sym)
    k = _ramp(0, (M - 1) * step, M, dtype, device, requires_grad)
    coef = creation.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype, device=device,
                           requires_grad=requires_grad)
    order = creation.arange(coef.shape[0], dtype=dtype, device=device,
                            requires_grad=requires_grad)
    terms = coef.unsqueeze(-1) * pointwise.cos(order.unsqueeze(-1) * k)
    return reduction.sum(terms, 0)


def general_hamming(M, *, alpha: float = 0.54, sym: bool = True, dtype=None,
                    layout=_dt.strided, device=None, requires_grad: bool = False) -> Tensor:
    """The generalised Hamming window: ``general_cosine`` with ``a = [alpha, 1 - alpha]``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=_dt.strided, device=None,
            requires_grad: bool = False) -> Tensor:
    """The Hamming window (``general_hamming`` with alpha 0.54)."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=_dt.strided, device=None,
         requires_grad: bool = False) -> Tensor:
    """The Hann window (``general_hamming`` with alpha 0.5)."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=_dt.strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """The Blackman window (``general_cosine`` with a = [0.42, 0.5, 0.08])."""
    dtype = _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=_dt.strided, device=None,
            requires_grad: bool = False) -> Tensor:
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device, requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=_dt.strided, device=None,
             requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular) window, ``1 - |2n / span - 1|``."""
    dtype = _checks("bartlett", M, dtype, layout)
    done = _trivial(M, dtype, device, requires_grad, True)
    if done is not None:
        return done
    step = 2 / _span(M, sym)
    k = _ramp(-1, -1 + (M - 1) * step, M, dtype, device, requires_grad)
    return 1 - pointwise.abs(k)
