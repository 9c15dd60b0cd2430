"""Fractional max pooling (Graham, 2014): windows of a fixed size whose starts follow a
pseudo-random increasing sequence per (sample, channel), drawn from ``_random_samples`` (one
number in [0, 1) per spatial dimension) exactly as torch's CPU kernel does: with
``alpha = (in - k) / (out - 1)`` the i-th start is ``int((i + u) * alpha) - int(u * alpha)``
and the last one is ``in - k``, computed in the input's dtype.

The windows become one gather of the flattened input (the window of every output element at
once), a max over the window gives the index, and a second gather the values, so the
gradient is that gather's (each output's gradient added at its maximum's index).

>>> import jtorch
>>> x = jtorch.arange(16.0).reshape(1, 1, 4, 4)
>>> u = jtorch.full((1, 1, 2), 0.5)
>>> jtorch.nn.functional.fractional_max_pool2d(x, 2, output_size=2, _random_samples=u)
tensor([[[[ 5.,  7.],
          [13., 15.]]]])
"""

from __future__ import annotations

from .. import dtypes as _dt
from ..amp import state as _amp
from ..ops import creation as _c
from ..tensor import Tensor

__all__ = ["fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
           "fractional_max_pool3d_with_indices"]


def _tuple(v, n: int) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


def _intervals(sample: Tensor, size: int, out: int, k: int) -> Tensor:
    """The window starts (N, C, out) int64 of one spatial dimension."""
    n, c = sample.shape
    last = _c.full((n, c, 1), size - k, dtype=_dt.int64, device=sample.device)
    if out <= 1:
        return last[..., :out]
    dt = sample.dtype
    alpha = _c.tensor(float(size - k), dtype=dt, device=sample.device) / \
        _c.tensor(float(out - 1), dtype=dt, device=sample.device)
    i = _c.arange(out - 1, dtype=dt, device=sample.device)
    seq = ((i + sample.unsqueeze(-1)) * alpha).long() - (sample * alpha).long().unsqueeze(-1)
    from ..ops.views import cat

    return cat([seq, last], -1)


def _check(input: Tensor, nd: int, kernel_size, output_size, samples: Tensor, name: str) -> tuple:
    k, o = _tuple(kernel_size, nd), _tuple(output_size, nd)
    short = name if nd == 2 else f"{name}_out"
    of = "tuple of Ints" if nd == 2 else "tuple of three Ints"
    if len(k) != nd:
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or {of}")
    if len(o) != nd:
        raise RuntimeError(f"{name}: output_size must either be a single Int or {of}")
    ndim = input.dim()
    if ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"{short}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    for d in range(1, ndim):
        if input.shape[d] == 0:
            raise RuntimeError(f"{short}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{list(input.shape)} with dimension {d} being "
                               f"empty.")
    names = ("height", "width") if nd == 2 else ("time", "height", "width")
    spatial = input.shape[-nd:]
    for kk, oo, ii, nm in zip(k, o, spatial, names):
        if oo + kk - 1 > ii or (nd == 3 and oo + kk - 1 == ii):  # 3-D: torch's check is strict
            raise RuntimeError(f"{short}(): pool {nm} {kk} too large relative to input {nm} {ii}")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    batch = input.shape[0] if ndim == nd + 2 else 1
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{samples.shape[2]}.")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    return k, o


def _fractional(input: Tensor, nd: int, kernel_size, output_size, samples: Tensor,
                name: str) -> tuple:
    k, o = _check(input, nd, kernel_size, output_size, samples, name)
    batched = input.dim() == nd + 2
    x = input if batched else input.unsqueeze(0)
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    # torch's sample order: (w, h) in 2-D, (t, h, w) in 3-D
    order = (1, 0) if nd == 2 else (0, 1, 2)
    index = None
    stride = 1
    for d in range(nd - 1, -1, -1):
        starts = _intervals(samples[:n, :, order[d]], spatial[d], o[d], k[d])
        pos = starts.unsqueeze(-1) + _c.arange(k[d], device=x.device)  # (N, C, o_d, k_d)
        shape = [n, c] + [1] * (2 * nd)
        shape[2 + d], shape[2 + nd + d] = o[d], k[d]
        term = pos.reshape(shape) * stride
        index = term if index is None else index + term
        stride *= spatial[d]
    out_elems, win = 1, 1
    for v in o:
        out_elems *= v
    for v in k:
        win *= v
    full = [n, c, *o, *k]
    windows = index.expand(full).reshape(n, c, out_elems, win)
    plane = 1
    for v in spatial:
        plane *= v
    flat = x.reshape(n, c, plane)
    vals = flat.gather(2, windows.reshape(n, c, out_elems * win)).reshape(n, c, out_elems, win)
    arg = vals.argmax(-1, keepdim=True)
    idx = windows.gather(3, arg).reshape(n, c, out_elems)
    out = flat.gather(2, idx).reshape(n, c, *o)
    idx = idx.reshape(n, c, *o)
    if not batched:
        out, idx = out.squeeze(0), idx.squeeze(0)
    return out, idx


def _output_size(input: Tensor, nd: int, output_size, output_ratio, name: str):
    if output_size is None and output_ratio is None:
        raise ValueError(f"{name} requires specifying either an output_size or an output_ratio")
    if output_size is not None:
        return output_size
    if nd == 2 and len(output_ratio) > 2:
        raise ValueError(f"{name} requires output_ratio to either be a single Int or tuple of "
                         f"Ints.")
    ratio = _tuple(output_ratio, nd)
    return [int(input.size(d - nd) * ratio[d]) for d in range(nd)]


def _samples(input: Tensor, nd: int, samples):
    if samples is not None:
        return samples
    from ..ops.random import rand

    n_batch = 1 if input.dim() == nd + 1 else input.size(0)
    return rand(n_batch, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device)


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple:
    """(values, int64 flat indices into each H*W plane) of 2-D fractional max pooling."""
    size = _output_size(input, 2, output_size, output_ratio, "fractional_max_pool2d")
    return _fractional(input, 2, kernel_size, size, _samples(input, 2, _random_samples),
                       "fractional_max_pool2d")


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size, output_size=None,
                                       output_ratio=None, return_indices: bool = False,
                                       _random_samples: Tensor | None = None) -> tuple:
    """(values, int64 flat indices into each T*H*W volume) of 3-D fractional max pooling."""
    size = _output_size(input, 3, output_size, output_ratio, "fractional_max_pool3d")
    return _fractional(input, 3, kernel_size, size, _samples(input, 3, _random_samples),
                       "fractional_max_pool3d")


@_amp.fp32_op
def fractional_max_pool2d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """2-D fractional max pooling; ``return_indices`` adds the argmax indices."""
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return out if return_indices else out[0]


@_amp.fp32_op
def fractional_max_pool3d(input: Tensor, kernel_size, output_size=None, output_ratio=None,
                          return_indices: bool = False, _random_samples: Tensor | None = None):
    """3-D fractional max pooling; ``return_indices`` adds the argmax indices."""
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                             return_indices, _random_samples)
    return out if return_indices else out[0]
