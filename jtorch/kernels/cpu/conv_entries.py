"""CPU kernel entries of the convolution OpDefs: ``(plan, *tensors) -> Tensor``.

Every convolution runs in 3-D form (``kernels/cpu/conv.py``): conv1d and conv2d arrays are
viewed as (N, C, 1, [1,] L) with size-1 leading spatial dims. float16 and bfloat16 (and bool, for unfold
and fold) run the float32 kernels and round once.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import dtypes as _dt
from ...tensor import Tensor
from . import conv as _ck

_HALF = _dt.HALF
_bool = _dt.bool
_F32 = np.dtype(np.float32)


def _as5d(a: np.ndarray) -> np.ndarray:
    """A C-contiguous (N, C, D, H, W) view/copy of an (N, C, *spatial) array."""
    a = np.ascontiguousarray(a)
    return a.reshape(a.shape[:2] + (1,) * (5 - a.ndim) + a.shape[2:])


def _pad3(t: tuple, fill: int) -> tuple:
    return (fill,) * (3 - len(t)) + tuple(t)


@functools.lru_cache(maxsize=1024, typed=True)  # typed: groups=1.0 must not find groups=1
def _geo3(stride: tuple, padding: tuple, dilation: tuple, groups: int, size: tuple) -> tuple:
    """The kernels' 3-D geometry arguments (memoised: the same every step of a network)."""
    return (_pad3(stride, 1), _pad3(padding, 0), _pad3(dilation, 1), groups, _pad3(size, 1))


def _compute(d: _dt.dtype) -> np.dtype:
    """float16 and bfloat16 and bfloat16 (and bool, for unfold/fold) run the float32 kernels."""
    return _F32 if d in _HALF or d is _bool else d.np


def _result(a: np.ndarray, d: _dt.dtype) -> Tensor:
    if d in _HALF:
        a = a.astype(d.np)
    elif d is _bool:
        a = a != 0
    return Tensor._make(a, None, d)


def convolution_cpu(plan, x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    kw = plan.kw
    d = x.dtype
    size = kw["size"]
    xa, wa, ba = x._a, w._a, None if b is None else b._a
    if d in _HALF:  # (the checks allow no bool)
        xa, wa, ba = xa.astype(_F32), wa.astype(_F32), None if ba is None else ba.astype(_F32)
    xa, wa = _as5d(xa), _as5d(wa)
    tr = kw["transposed"]
    if not tr and xa.shape[1] == 0:  # torch's empty-input path keeps the input's 0 channels
        wa, ba = wa[:0], None if ba is None else ba[:0]
    geo = _geo3(kw["stride"], kw["padding"], kw["dilation"], kw["groups"], size)
    r = (_ck.conv_transposed if tr else _ck.conv_forward)(xa, wa, ba, *geo)
    return _result(r.reshape(r.shape[:2] + size), d)


def conv_weight_cpu(plan, x: Tensor, g: Tensor) -> Tensor:
    """The weight gradient of conv(x, W) (weight spatial size ``kernel``) for output grad g."""
    kw = plan.kw
    d = x.dtype
    cd = _compute(d)
    kernel = kw["kernel"]
    r = _ck.conv_weight(_as5d(x._a.astype(cd, copy=False)), _as5d(g._a.astype(cd, copy=False)),
                        _pad3(kernel, 1), _pad3(kw["stride"], 1), _pad3(kw["padding"], 0),
                        _pad3(kw["dilation"], 1), kw["groups"])
    return _result(r.reshape(r.shape[:2] + kernel), d)


def _blocks(kw: dict) -> tuple:
    return tuple((s + 2 * p - dl * (k - 1) - 1) // st + 1 for s, k, dl, p, st in
                 zip(kw["size"], kw["kernel"], kw["dilation"], kw["padding"], kw["stride"]))


def im2col_cpu(plan, x: Tensor) -> Tensor:
    """unfold: (N, C, H, W) -> (N, C*kH*kW, L); an unbatched (C, H, W) input as a batch of one."""
    kw = plan.kw
    d = x.dtype
    a = x._a if x._a.ndim == 4 else x._a[None]
    r = _ck.unfold(_as5d(a.astype(_compute(d), copy=False)), (1, *kw["kernel"]),
                   (1, *kw["stride"]), (0, *kw["padding"]), (1, *kw["dilation"]),
                   (1, *_blocks(kw)))
    return _result(r if x._a.ndim == 4 else r[0], d)


def col2im_cpu(plan, x: Tensor) -> Tensor:
    """fold: (N, C*kH*kW, L) -> (N, C, *size); an unbatched (C*kH*kW, L) input as a batch of
    one."""
    kw = plan.kw
    d = x.dtype
    size = kw["size"]
    a = x._a if x._a.ndim == 3 else x._a[None]
    r = _ck.fold(a.astype(_compute(d), copy=False), (1, *size), (1, *kw["kernel"]),
                 (1, *kw["stride"]), (0, *kw["padding"]), (1, *kw["dilation"]),
                 (1, *_blocks(kw)))
    r = r.reshape(r.shape[:2] + size)
    return _result(r if x._a.ndim == 3 else r[0], d)
