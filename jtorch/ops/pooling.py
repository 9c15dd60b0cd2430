"""nn.functional's pooling ops: max, average, adaptive, unpooling and power-average pooling.

Each op checks its arguments in torch's order and wording, describes its windows as per-dim
tables (``_Windows``), and runs one kernel over (P, D, H, W) planes (``kernels/cpu/pooling``);
1-d pooling runs the 2-d op on an unsqueezed view, as torch does (so grad_fn is
``SqueezeBackward1`` there too). float16 computes in float32 and rounds once.

>>> import jtorch as torch
>>> torch.nn.functional.max_pool2d(torch.arange(16.).reshape(1, 4, 4), 2)
tensor([[[ 5.,  7.],
         [13., 15.]]])
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import _allocator, dispatch
from .. import dtypes as _dt
from ..kernels.defs import pooling as D
from ..tensor import Tensor

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d",
           "adaptive_max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d",
           "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_pool1d", "max_pool1d_with_indices",
           "max_pool2d", "max_pool2d_with_indices", "max_pool3d", "max_pool3d_with_indices",
           "max_unpool1d", "max_unpool2d", "max_unpool3d"]


# -- windows ---------------------------------------------------------------------------------

class _Windows:
    """Per spatial dim (always 3: D, H, W; 1 where the op has fewer): the input range
    ``range(lo[o], hi[o], step)`` of each output ``o``, and the divisor factor ``f[o]``
    of average pooling (divisor = product over dims, or ``override``)."""

    __slots__ = ("lo", "hi", "step", "f", "override", "out_size", "fast22", "_cache")

    def __init__(self, lo, hi, step, f, override: int = 0) -> None:
        self.lo, self.hi, self.step, self.f = lo, hi, step, f
        self.override = override
        self.out_size = tuple(len(x) for x in lo)
        # every window a whole 2x2 block at stride 2 (1-element D): the kernels' fast path
        self.fast22 = self.out_size[0] == 1 and len(lo[0]) == 1 and lo[0][0] == 0 and \
            hi[0][0] == 1 and all(step[i] == 1 and np.array_equal(lo[i], 2 * np.arange(len(lo[i])))
                                  and np.array_equal(hi[i], lo[i] + 2) and np.all(f[i] == 2) for i in (1, 2))
        self._cache = {}

    def max_args(self, dt: np.dtype) -> tuple:
        lowest = dt.type(-np.inf) if dt.kind == "f" else dt.type(np.iinfo(dt).min)
        lo, hi, s = self.lo, self.hi, self.step
        return (lowest, lo[0], hi[0], s[0], lo[1], hi[1], s[1], lo[2], hi[2], s[2])

    def avg_args(self, dt: np.dtype) -> tuple:
        """Divisor tables in the compute dtype (floats divide in it, integers truncate)."""
        args = self._cache.get(dt)
        if args is None:
            ct = dt if dt.kind == "f" else np.dtype(np.int64)
            f = [x.astype(ct) for x in self.f]
            lo, hi = self.lo, self.hi
            args = self._cache[dt] = (lo[0], hi[0], f[0], lo[1], hi[1], f[1], lo[2], hi[2],
                                      f[2], ct.type(self.override))
        return args


_ONE = (np.zeros(1, np.int64), np.ones(1, np.int64), 1, np.ones(1, np.int64))


def _regular(n: int, k: int, s: int, pad: int, dil: int, out: int, include_pad: bool) -> tuple:
    """(lo, hi, step, f) of sliding windows: start o*s - pad, k taps dil apart."""
    start = np.arange(out, dtype=np.int64) * s - pad
    if dil != 1:  # max pooling only: first tap inside the input, last tap + 1
        first = np.where(start < 0, (-start + dil - 1) // dil, 0)
        lo = start + first * dil
        hi = np.minimum(start + (k - 1) * dil + 1, n)
        return lo, hi, dil, hi - lo
    end = np.minimum(start + k, n + pad)
    lo, hi = np.maximum(start, 0), np.minimum(end, n)
    return lo, hi, 1, (end - start) if include_pad else (hi - lo)


def _adaptive(n: int, out: int) -> tuple:
    o = np.arange(out, dtype=np.int64)
    lo = (o * n) // out
    hi = ((o + 1) * n + out - 1) // out
    return lo, hi, 1, hi - lo


def _windows(dims: list, override: int = 0) -> _Windows:
    dims = [_ONE] * (3 - len(dims)) + list(dims)
    return _Windows(*(tuple(d[i] for d in dims) for i in range(4)), override=override)


# A network pools the same shapes every step, and building the tables (NumPy calls on a few
# elements) cost ~70 us per call: the windows are kept per geometry. Shared _Windows are only
# read (their _cache holds per-dtype divisor tables, equal for every user).
@functools.lru_cache(maxsize=512)
def _regular_windows(dims: tuple, override: int = 0) -> _Windows:
    """``dims``: per spatial dim, ``_regular``'s arguments."""
    return _windows([_regular(*d) for d in dims], override)


@functools.lru_cache(maxsize=512)
def _adaptive_windows(dims: tuple) -> _Windows:
    """``dims``: per spatial dim, (input size, output size)."""
    return _windows([_adaptive(n, o) for n, o in dims])


# -- kernels run and recorded (the gradient rules call these too) ----------------------------

def _compute(d: _dt.dtype) -> np.dtype:
    return np.dtype(np.float32) if d is _dt.float16 else d.np


def _planes(a: np.ndarray, nd: int, ct: np.dtype) -> np.ndarray:
    """(P, D, H, W) C-contiguous planes of the last ``nd`` dims of ``a``, in dtype ``ct``."""
    sp = a.shape[a.ndim - nd:]
    return np.ascontiguousarray(a, dtype=ct).reshape(-1, *(1,) * (3 - nd), *sp)


def _wrap(r: np.ndarray, shape: tuple, d: _dt.dtype) -> Tensor:
    r = r.reshape(shape)
    if r.dtype != d.np:
        r = r.astype(d.np)
    return Tensor._make(r, None, d)


def max_pool_forward(op, x: Tensor, win: _Windows, nd: int) -> tuple:
    """(values, int64 flat indices) of the windows over the last ``nd`` dims of ``x``."""
    a = _planes(x._a, nd, _compute(x.dtype))
    osz = win.out_size[3 - nd:]
    out = _allocator.empty((a.shape[0], *win.out_size), a.dtype)
    idx = _allocator.empty((a.shape[0], *win.out_size), np.dtype(np.int64))
    if out.size:
        op.impl(a, out, idx, win)
    shape = x._a.shape[:x._a.ndim - nd] + osz
    res = (_wrap(out, shape, x.dtype), Tensor._make(idx.reshape(shape), None, _dt.int64))
    dispatch.record(op, (x,), res, {"win": win, "nd": nd})
    return res


def max_pool_backward(op, g: Tensor, idx: Tensor, in_shape: tuple, nd: int) -> Tensor:
    """The input gradient: ``g`` scatter-added through ``idx`` into zeroed planes."""
    ct = _compute(g.dtype)
    n = math.prod(in_shape[len(in_shape) - nd:])
    p = math.prod(in_shape[:len(in_shape) - nd])
    g2 = np.ascontiguousarray(g._a, dtype=ct).reshape(p, -1)
    i2 = np.ascontiguousarray(idx._a).reshape(p, -1)
    gi = _allocator.empty((p, n), ct)
    if gi.size:
        op.impl(g2, i2, gi)
    res = _wrap(gi, in_shape, g.dtype)
    return dispatch.record(op, (g, idx), res, {"nd": nd})


def avg_pool_forward(op, x: Tensor, win: _Windows, nd: int) -> Tensor:
    a = _planes(x._a, nd, _compute(x.dtype))
    out = _allocator.empty((a.shape[0], *win.out_size), a.dtype)
    if out.size:
        op.impl(a, out, win)
    shape = x._a.shape[:x._a.ndim - nd] + win.out_size[3 - nd:]
    return dispatch.record(op, (x,), _wrap(out, shape, x.dtype), {"win": win, "nd": nd})


def avg_pool_backward(op, g: Tensor, win: _Windows, in_shape: tuple, nd: int) -> Tensor:
    """The input gradient: each output's gradient / its divisor over its window."""
    g4 = _planes(g._a, nd, _compute(g.dtype))
    sp = in_shape[len(in_shape) - nd:]
    gi = _allocator.empty((g4.shape[0], *(1,) * (3 - nd), *sp), g4.dtype)
    if gi.size:
        op.impl(g4, gi, win)
    return dispatch.record(op, (g,), _wrap(gi, in_shape, g.dtype), {"win": win, "nd": nd})


# -- argument checks (torch's order and wording) ---------------------------------------------

def _ints(v, fn: str, arg: str, pos: int) -> list:
    if isinstance(v, bool) or not isinstance(v, (int, tuple, list)) and not (
            hasattr(v, "__index__") and not isinstance(v, Tensor)):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be tuple of ints, not "
                        f"{type(v).__name__}")
    if isinstance(v, (tuple, list)):
        for e in v:
            if isinstance(e, bool) or not isinstance(e, int) and not hasattr(e, "__index__"):
                raise TypeError(f"{fn}(): argument '{arg}' failed to unpack the object at pos "
                                f"{pos} with error \"type must be tuple of ints,but got "
                                f"{type(e).__name__}\"")
        return [int(e) for e in v]
    return [int(v)]


def _expand(v: list, n: int) -> list:
    return v * n if len(v) == 1 else v


def _cdiv2(x: int) -> int:
    """C's x / 2 (truncating)."""
    return -((-x) // 2) if x < 0 else x // 2


def _out_size(n: int, k: int, pad: int, s: int, dil: int, ceil: bool) -> int:
    """torch's pooling_output_shape (with its checks)."""
    if s == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > _cdiv2((k - 1) * dil + 1):
        raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                           f"pad={pad}, kernel_size={k} and dilation={dil}")
    o = (n + 2 * pad - dil * (k - 1) - 1 + (s - 1 if ceil else 0)) // s + 1
    if ceil and (o - 1) * s >= n + pad:
        o -= 1
    return o


def _fmt(shape) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def _check_dtype(x: Tensor, name: str, ints: bool) -> None:
    d = x.dtype
    if d.is_complex or d is _dt.bool or (not d.is_floating_point and not ints):
        raise dispatch.not_implemented(_named(name), d)


class _named:  # torch's kernel name, as dispatch.not_implemented reads it from an OpDef
    def __init__(self, name: str) -> None:
        self.kernel_name = name


def _check_tensor(x, fn: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fn}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def _pool2d_shape_check(x: Tensor, k, s, pad, dil, out) -> None:
    a = x._a
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = k, s, pad, dil
    if kw <= 0 or kh <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kh} kW: {kw}")
    if sw <= 0 or sh <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dH: {sh} dW: {sw}")
    if dh <= 0 or dw <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dh} "
                           f"dilationW: {dw}")
    ok = a.shape[1] != 0 and a.shape[2] != 0
    if not ((a.ndim == 3 and a.shape[0] != 0 and ok) or (a.ndim == 4 and ok and a.shape[3] != 0)):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size "
                           f"for input, but got:{_fmt(a.shape)}")
    if not (kw // 2 >= pw and kh // 2 >= ph):
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"padW = {pw}, padH = {ph}, kW = {kw}, kH = {kh}")
    if out[0] < 1 or out[1] < 1:
        c, h, w = a.shape[-3:]
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{out[0]}x{out[1]}). Output size is too small")


def _pool3d_shape_check(x: Tensor, k, s, pad, dil, out, fn: str, check_size: bool) -> None:
    a = x._a
    (kt, kh, kw), (st, sh, sw), (pt, ph, pw), (dt, dh, dw) = k, s, pad, dil
    if kt <= 0 or kw <= 0 or kh <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kT: {kt} kH: {kh} "
                           f"kW: {kw}")
    if st <= 0 or sw <= 0 or sh <= 0:
        raise RuntimeError(f"stride should be greater than zero, but got dT: {st} dH: {sh} "
                           f"dW: {sw}")
    if dt <= 0 or dw <= 0 or dh <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationT: {dt} "
                           f"dilationH: {dh} dilationW: {dw}")
    for i, n in enumerate(a.shape):
        if not (a.ndim == 5 and i == 0) and n <= 0:
            raise RuntimeError(f"{fn}: Expected input's non-batch dimensions to have positive "
                               f"length, but input has a shape of {_fmt(a.shape)} and non-batch "
                               f"dimension {n} has length zero!")
    t_, h_, w_ = a.shape[-3:]
    if check_size and not (t_ >= kt and h_ >= kh and w_ >= kw):
        raise RuntimeError(f"input image (T: {t_} H: {h_} W: {w_}) smaller than kernel size "
                           f"(kT: {kt} kH: {kh} kW: {kw})")
    if not (kt // 2 >= pt and kw // 2 >= pw and kh // 2 >= ph):
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got "
                           f"kT: {kt} kW: {kw} kH: {kh} padT: {pt} padW: {pw} padH: {ph}")
    if min(out) < 1:
        c = a.shape[-4]
        raise RuntimeError(f"Given input size: ({c}x{t_}x{h_}x{w_}). Calculated output size: "
                           f"({c}x{out[0]}x{out[1]}x{out[2]}). Output size is too small")


_NAMES = {2: "two", 3: "three"}


def _params(fn: str, nd: int, kernel_size, stride, padding, dilation, avg: bool) -> tuple:
    """kernel, stride, padding, dilation as nd-lists, with torch's arity errors."""
    n = _NAMES[nd]
    k = _ints(kernel_size, fn, "kernel_size", 2)
    s = [] if stride is None else _ints(stride, fn, "stride", 3)
    p = _ints(padding, fn, "padding", 4)
    d = _ints(dilation, fn, "dilation", 5)
    if avg and nd == 3:
        msgs = ("kernel_size must be a single int, or a tuple of three ints",
                "stride must be omitted, a single int, or a tuple of three ints",
                "padding must be a single int, or a tuple of three ints")
    else:
        msgs = (f"kernel_size must either be a single int, or a tuple of {n} ints",
                f"stride must either be omitted, a single int, or a tuple of {n} ints",
                f"padding must either be a single int, or a tuple of {n} ints")
    if len(k) not in (1, nd):
        raise RuntimeError(f"{fn}: {msgs[0]}")
    if len(s) not in (0, 1, nd):
        raise RuntimeError(f"{fn}: {msgs[1]}")
    if len(p) not in (1, nd):
        raise RuntimeError(f"{fn}: {msgs[2]}")
    if not avg and len(d) not in (1, nd):
        raise RuntimeError(f"{fn}: dilation must be either a single int, or a tuple of {n} ints")
    k = _expand(k, nd)
    return k, _expand(s, nd) if s else k, _expand(p, nd), _expand(d, nd)


# -- max pooling -----------------------------------------------------------------------------

def _max_pool(x: Tensor, nd: int, kernel_size, stride, padding, dilation, ceil_mode) -> tuple:
    fn = f"max_pool{nd}d"
    _check_tensor(x, fn)
    k, s, p, d = _params(fn, nd, kernel_size, stride, padding, dilation, False)
    a = x._a
    if a.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for "
                           "input")
    sp = a.shape[a.ndim - nd:]
    out = [_out_size(sp[i], k[i], p[i], s[i], d[i], ceil_mode) for i in range(nd)]
    if nd == 2:
        _pool2d_shape_check(x, k, s, p, d, out)
    else:
        _pool3d_shape_check(x, k, s, p, d, out, "max_pool3d_with_indices_out_cpu_template()",
                            False)
    _check_dtype(x, fn, True)
    win = _regular_windows(tuple((sp[i], k[i], s[i], p[i], d[i], out[i], True)
                                 for i in range(nd)))
    op = D.max_pool2d_op if nd == 2 else D.max_pool3d_op
    return max_pool_forward(op, x, win, nd)


def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple:
    """max_pool2d's (values, int64 indices into each H*W plane)."""
    return _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple:
    """max_pool3d's (values, int64 indices into each D*H*W volume)."""
    return _max_pool(input, 3, kernel_size, stride, padding, dilation, ceil_mode)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """Maxima over (dilated) kH x kW windows of (N, C, H, W) or (C, H, W) input; ties keep the
    first maximum, NaN wins.

    >>> jtorch.nn.functional.max_pool2d(jtorch.arange(16.).reshape(1, 4, 4), 2).shape
    torch.Size([1, 2, 2])
    """
    res = _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode)
    return res if return_indices else res[0]


def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """Maxima over kT x kH x kW windows of (N, C, D, H, W) or (C, D, H, W) input."""
    res = _max_pool(input, 3, kernel_size, stride, padding, dilation, ceil_mode)
    return res if return_indices else res[0]


def _check1d(fn: str, arg: str, v: list) -> None:
    if len(v) != 1:
        raise RuntimeError(f"{fn}() argument '{arg}' should contain one int (got {len(v)})")


def _check_dim_range(x: Tensor, fn: str) -> None:
    _check_tensor(x, fn)
    if x._a.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {x._a.ndim}-dimensional tensor "
                           f"for argument #1 'self' (while checking arguments for {fn})")


def max_pool1d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple:
    """max_pool1d's (values, int64 indices into each row)."""
    k = _ints(kernel_size, "max_pool1d", "kernel_size", 2)
    s = k if stride is None or stride == [] or stride == () else _ints(stride, "max_pool1d",
                                                                        "stride", 3)
    p = _ints(padding, "max_pool1d", "padding", 4)
    d = _ints(dilation, "max_pool1d", "dilation", 5)
    _check_dim_range(input, "max_pool1d")
    for arg, v in (("kernel_size", k), ("stride", s), ("padding", p), ("dilation", d)):
        _check1d("max_pool1d", arg, v)
    v, i = _max_pool(input.unsqueeze(-2), 2, [1, k[0]], [1, s[0]], [0, p[0]], [1, d[0]],
                     ceil_mode)
    return v.squeeze(-2), i.squeeze(-2)


def _max_pool1d_plain(x: Tensor, kernel_size, stride, padding, dilation, ceil_mode) -> Tensor:
    """torch's max_pool1d (no indices): its own checks and messages, then the 2-d kernel."""
    fn = "max_pool1d()"
    a = x._a
    nonempty = all(n != 0 for n in a.shape[a.ndim - 2:]) and (a.ndim == 3 or a.shape[0] != 0)
    if a.ndim not in (2, 3) or not nonempty:
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{_fmt(a.shape)}")
    k = _ints(kernel_size, "max_pool1d", "kernel_size", 2)
    s = [] if stride is None else _ints(stride, "max_pool1d", "stride", 3)
    p = _ints(padding, "max_pool1d", "padding", 4)
    d = _ints(dilation, "max_pool1d", "dilation", 5)
    if len(k) != 1:
        raise RuntimeError(f"{fn} kernel_size must be an int, list of ints or tuple of ints of "
                           f"size 1 but got size {len(k)}")
    if len(s) not in (0, 1):
        raise RuntimeError(f"{fn} stride must be None, an int, list of ints, or tuple of ints of "
                           f"size 1 but got size {len(s)}")
    if len(p) != 1:
        raise RuntimeError(f"{fn} padding must be an int, list of ints, or tuple of ints of size "
                           f"1 but got size {len(p)}")
    if len(d) != 1:
        raise RuntimeError(f"{fn} dilation must be an int, list of ints, or tuple of ints of "
                           f"size 1 but got size {len(d)}")
    kw, sw, pw, dw = k[0], (s or k)[0], p[0], d[0]
    if kw <= 0:
        raise RuntimeError(f"{fn} kernel_size must be greater than zero, but got {kw}")
    if sw <= 0:
        raise RuntimeError(f"{fn} stride must be greater than zero, but got {sw}")
    if pw < 0:
        raise RuntimeError(f"{fn} padding must be non-negative, but got {pw}")
    if pw > kw // 2:
        raise RuntimeError(f"{fn} padding should be at most half of kernel size, but got "
                           f"padding={pw} and kernel_size={kw}")
    if dw <= 0:
        raise RuntimeError(f"{fn} dilation must be greater than zero, but got {dw}")
    num = a.shape[-1] + 2 * pw - dw * (kw - 1) - 1
    ow = (num + sw - 1) // sw + 1 if ceil_mode and sw - dw * (kw - 1) <= num % sw else \
        num // sw + 1
    if ow <= 0:
        raise RuntimeError(f"{fn} Invalid computed output size: {ow}")
    if not (x._requires_grad and dispatch.grad_state.enabled):
        _check_dtype(x, "max_pool1d_impl", False)
    return max_pool1d_with_indices(x, kw, sw, pw, dw, ceil_mode)[0]


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """Maxima over (dilated) windows of the last dim of (N, C, L) or (C, L) input."""
    _check_tensor(input, "max_pool1d")
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _max_pool1d_plain(input, kernel_size, stride, padding, dilation, ceil_mode)


# -- average pooling -------------------------------------------------------------------------

def _avg_pool(x: Tensor, nd: int, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override) -> Tensor:
    fn = f"avg_pool{nd}d"
    _check_tensor(x, fn)
    k, s, p, _ = _params(fn, nd, kernel_size, stride, padding, 1, True)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    a = x._a
    if nd == 2 and a.ndim < 3:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-a.ndim}, "
                         f"{a.ndim - 1}], but got -3)")
    if nd == 3 and a.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    sp = a.shape[a.ndim - nd:]
    out = [_out_size(sp[i], k[i], p[i], s[i], 1, ceil_mode) for i in range(nd)]
    if nd == 2:
        _pool2d_shape_check(x, k, s, p, (1, 1), out)
    else:
        _pool3d_shape_check(x, k, s, p, (1, 1, 1), out, "avg_pool3d()", True)
    if x.dtype is not _dt.int64 and (nd == 2 or x.dtype is not _dt.float16):
        _check_dtype(x, "avg_pool2d" if nd == 2 else "avg_pool3d_out_frame", False)
    elif x.dtype is _dt.float16:
        raise dispatch.not_implemented(_named("avg_pool3d_out_frame"), x.dtype)
    win = _regular_windows(tuple((sp[i], k[i], s[i], p[i], 1, out[i], bool(count_include_pad))
                                 for i in range(nd)), int(divisor_override or 0))
    return avg_pool_forward(D.avg_pool2d_op if nd == 2 else D.avg_pool3d_op, x, win, nd)


def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None) -> Tensor:
    """Means over kH x kW windows of (N, C, H, W) or (C, H, W) input (zero padding counted
    unless ``count_include_pad=False``; ``divisor_override`` replaces the window size).

    >>> jtorch.nn.functional.avg_pool2d(jtorch.ones(1, 4, 4), 2, padding=1).shape
    torch.Size([1, 3, 3])
    """
    return _avg_pool(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None) -> Tensor:
    """Means over kT x kH x kW windows of (N, C, D, H, W) or (C, D, H, W) input."""
    return _avg_pool(input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """Means over windows of the last dim of (N, C, L) or (C, L) input."""
    k = _ints(kernel_size, "avg_pool1d", "kernel_size", 2)
    s = k if stride is None or stride == [] or stride == () else _ints(stride, "avg_pool1d",
                                                                        "stride", 3)
    p = _ints(padding, "avg_pool1d", "padding", 4)
    _check_dim_range(input, "avg_pool1d")
    for arg, v in (("kernel_size", k), ("stride", s), ("padding", p)):
        _check1d("avg_pool1d", arg, v)
    out = _avg_pool(input.unsqueeze(-2), 2, [1, k[0]], [1, s[0]], [0, p[0]], ceil_mode,
                    count_include_pad, None)
    return out.squeeze(-2)


# -- adaptive pooling ------------------------------------------------------------------------

def _out_list(output_size, x: Tensor, nd: int) -> list:
    """torch's _list_with_default: None entries take the input's size."""
    if isinstance(output_size, int) or hasattr(output_size, "__index__"):
        return [int(output_size)] * nd
    out = list(output_size)
    if x._a.ndim <= len(out):
        raise ValueError(f"Input dimension should be at least {len(out) + 1}")
    tail = x._a.shape[x._a.ndim - len(out):]
    return [t if v is None else int(v) for v, t in zip(out, tail)]


def _adaptive_checks(x: Tensor, out: list, nd: int, kind: str) -> None:
    fn = f"adaptive_{kind}_pool{nd}d"
    a = x._a
    if kind == "avg" and len(out) != nd:
        raise RuntimeError(f"{fn}: output_size must be {nd}")
    if kind == "max" and len(out) != nd:
        raise RuntimeError(f"{fn}(): internal error: output_size.size() must be {nd}")
    if a.ndim not in (nd + 1, nd + 2):
        sep = ": " if kind == "max" else " "
        raise RuntimeError(f"{fn}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{sep}"
                           f"{_fmt(a.shape)}")
    for i in range(1, a.ndim):
        if a.shape[i] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {_fmt(a.shape)} with dimension "
                               f"{i} being empty")
    if kind == "avg" and min(out) < 0:
        got = ", ".join(str(v) for v in out[:2]) + "".join(f",{v}" for v in out[2:])
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{got}}}")
    if kind == "max" and min(out) < 0:
        neg = min(out)
        raise RuntimeError(f"Trying to create tensor with negative dimension {neg}: "
                           f"{_fmt(a.shape[:a.ndim - nd] + tuple(out))}")
    _check_dtype(x, fn if nd == 2 else f"{fn}_cpu", False)


def _adaptive_avg(x: Tensor, out: list, nd: int) -> Tensor:
    _adaptive_checks(x, out, nd, "avg")
    if all(o == 1 for o in out):
        return x.mean(tuple(range(-nd, 0)), keepdim=True)
    sp = x._a.shape[x._a.ndim - nd:]
    win = _adaptive_windows(tuple((sp[i], out[i]) for i in range(nd)))
    op = D.adaptive_avg_pool2d_op if nd == 2 else D.adaptive_avg_pool3d_op
    return avg_pool_forward(op, x, win, nd)


def _adaptive_max(x: Tensor, out: list, nd: int) -> tuple:
    _adaptive_checks(x, out, nd, "max")
    sp = x._a.shape[x._a.ndim - nd:]
    win = _adaptive_windows(tuple((sp[i], out[i]) for i in range(nd)))
    op = D.adaptive_max_pool2d_op if nd == 2 else D.adaptive_max_pool3d_op
    return max_pool_forward(op, x, win, nd)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Means over the windows that split H and W into ``output_size`` near-equal parts
    (window o: floor(o*H/oH) to ceil((o+1)*H/oH)).

    >>> jtorch.nn.functional.adaptive_avg_pool2d(jtorch.ones(1, 5, 7), (2, 3)).shape
    torch.Size([1, 2, 3])
    """
    _check_tensor(input, "adaptive_avg_pool2d")
    return _adaptive_avg(input, _out_list(output_size, input, 2), 2)


def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Adaptive means over D, H and W."""
    _check_tensor(input, "adaptive_avg_pool3d")
    return _adaptive_avg(input, _out_list(output_size, input, 3), 3)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Adaptive means over the last dim of (N, C, L) or (C, L) input."""
    _check_dim_range(input, "adaptive_avg_pool1d")
    o = _ints(output_size, "adaptive_avg_pool1d", "output_size", 2)
    _check1d("adaptive_avg_pool1d", "output_size", o)
    return _adaptive_avg(input.unsqueeze(-2), [1, o[0]], 2).squeeze(-2)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple:
    """adaptive_max_pool2d's (values, int64 indices into each H*W plane)."""
    _check_tensor(input, "adaptive_max_pool2d")
    return _adaptive_max(input, _out_list(output_size, input, 2), 2)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple:
    """adaptive_max_pool3d's (values, int64 indices into each D*H*W volume)."""
    _check_tensor(input, "adaptive_max_pool3d")
    return _adaptive_max(input, _out_list(output_size, input, 3), 3)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple:
    """adaptive_max_pool1d's (values, int64 indices into each row)."""
    _check_dim_range(input, "adaptive_max_pool1d")
    o = _ints(output_size, "adaptive_max_pool1d", "output_size", 2)
    _check1d("adaptive_max_pool1d", "output_size", o)
    v, i = _adaptive_max(input.unsqueeze(-2), [1, o[0]], 2)
    return v.squeeze(-2), i.squeeze(-2)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Maxima over the adaptive windows of H and W (see adaptive_avg_pool2d)."""
    res = adaptive_max_pool2d_with_indices(input, output_size)
    return res if return_indices else res[0]


def adaptive_max_pool3d(input: Tensor, output_size, return_indices: bool = False):
    """Maxima over the adaptive windows of D, H and W."""
    res = adaptive_max_pool3d_with_indices(input, output_size)
    return res if return_indices else res[0]


def adaptive_max_pool1d(input: Tensor, output_size, return_indices: bool = False):
    """Maxima over the adaptive windows of the last dim."""
    res = adaptive_max_pool1d_with_indices(input, output_size)
    return res if return_indices else res[0]


def _adaptive_max_pool1d_top(input: Tensor, output_size) -> tuple:
    """torch.adaptive_max_pool1d: always (values, indices)."""
    return adaptive_max_pool1d_with_indices(input, output_size)


_adaptive_max_pool1d_top.__name__ = "adaptive_max_pool1d"


# -- unpooling -------------------------------------------------------------------------------

def _unpool_size(x: Tensor, k: list, s: list, p: list, output_size) -> list:
    """torch's _unpool_output_size."""
    n = len(k)
    shape = x._a.shape
    default = [(shape[x._a.ndim - n + i] - 1) * s[i] + k[i] - 2 * p[i] for i in range(n)]
    if output_size is None:
        ret = default
    else:
        output_size = list(output_size)
        if len(output_size) == n + 2:
            output_size = output_size[2:]
        if len(output_size) != n:
            raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        for i in range(n):
            lo, hi = default[i] - s[i], default[i] + s[i]
            if not lo < output_size[i] < hi:
                raise ValueError(f'invalid output_size "{tuple(output_size)}" (dim {i} must be '
                                 f"between {lo} and {hi})")
        ret = output_size
    for i in range(n):
        if ret[i] < 0:
            raise ValueError("max_unpooling: output_size must contain non-negative spatial "
                             f"dimensions, but got output_size[{i}]={ret[i]}")
    return [int(v) for v in ret]


def _max_unpool(x: Tensor, idx: Tensor, out: list, nd: int) -> Tensor:
    fn = f"max_unpool{nd}d"
    a = x._a
    if not isinstance(idx, Tensor) or idx.dtype is not _dt.int64:
        name = dispatch.torch_name(idx.dtype) if isinstance(idx, Tensor) else "?"
        raise RuntimeError(f"elements in indices should be type int64 but got: {name}")
    if a.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d "
                           f"Tensor, but got a tensor with {a.ndim} dimensions.")
    if idx._a.shape != a.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({_fmt(a.shape)}) but got indices tensor with shape: "
                           f"{_fmt(idx._a.shape)}")
    for i in range(1, a.ndim):
        if a.shape[i] <= 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got {_fmt(a.shape)} with dimension {i} being "
                               "empty.")
    _check_dtype(x, fn, False)
    ct = _compute(x.dtype)
    lead = a.shape[:a.ndim - nd]
    p = math.prod(lead)
    x2 = np.ascontiguousarray(a, dtype=ct).reshape(p, -1)
    i2 = np.ascontiguousarray(idx._a).reshape(p, -1)
    res = _allocator.empty((p, math.prod(out)), ct)
    op = D.max_unpool2d_op if nd == 2 else D.max_unpool3d_op
    if res.size or x2.size:
        bad = op.impl(x2, i2, res)
        if bad != -1:  # (torch reports the last bad index its loop met)
            raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                               f"{'x'.join(str(v) for v in out)})")
    r = _wrap(res, lead + tuple(out), x.dtype)
    return dispatch.record(op, (x, idx), r, {"nd": nd})


def _unpool(x, indices, nd: int, kernel_size, stride, padding, output_size) -> Tensor:
    _check_tensor(x, f"max_unpool{nd}d")
    k = _expand(_ints(kernel_size, f"max_unpool{nd}d", "kernel_size", 3), nd)
    s = k if stride is None else _expand(_ints(stride, f"max_unpool{nd}d", "stride", 4), nd)
    p = _expand(_ints(padding, f"max_unpool{nd}d", "padding", 5), nd)
    return _max_unpool(x, indices, _unpool_size(x, k, s, p, output_size), nd)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of max_pool2d: each value put back at its index, zeros elsewhere.

    >>> v, i = jtorch.nn.functional.max_pool2d(jtorch.arange(16.).reshape(1, 4, 4), 2,
    ...                                        return_indices=True)
    >>> jtorch.nn.functional.max_unpool2d(v, i, 2).shape
    torch.Size([1, 4, 4])
    """
    return _unpool(input, indices, 2, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of max_pool3d."""
    return _unpool(input, indices, 3, kernel_size, stride, padding, output_size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of max_pool1d (through the 2-d op on (L, 1) planes, as torch)."""
    _check_tensor(input, "max_unpool1d")
    k = _ints(kernel_size, "max_unpool1d", "kernel_size", 3)[:1]
    s = k if stride is None else _ints(stride, "max_unpool1d", "stride", 4)[:1]
    p = _ints(padding, "max_unpool1d", "padding", 5)[:1]
    out = _unpool_size(input, k, s, p, output_size) + [1]
    ind = indices.unsqueeze(-1) if isinstance(indices, Tensor) else indices
    return _max_unpool(input.unsqueeze(-1), ind, out, 2).squeeze(-1)


# -- power-average pooling (torch's composition) ---------------------------------------------

def _lp(x: Tensor, norm_type, kernel_size, stride, ceil_mode, nd: int) -> Tensor:
    from .pointwise import relu

    mx = (max_pool1d, max_pool2d, max_pool3d)[nd - 1]
    avg = (avg_pool1d, avg_pool2d, avg_pool3d)[nd - 1]
    if isinstance(norm_type, (int, float)):
        if norm_type == float("inf"):
            return mx(x.abs(), kernel_size, stride, 0, 1, ceil_mode)
        if norm_type == -float("inf"):
            return -mx(-x.abs(), kernel_size, stride, 0, 1, ceil_mode)
    k = _expand(_ints(kernel_size, f"lp_pool{nd}d", "kernel_size", 3), nd)
    out = avg(x.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * relu(out.abs())).mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input: Tensor, norm_type, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """(sum over each window of x^p)^(1/p) along the last dim."""
    return _lp(input, norm_type, kernel_size, stride, ceil_mode, 1)


def lp_pool2d(input: Tensor, norm_type, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """(sum over each kH x kW window of x^p)^(1/p).

    >>> jtorch.nn.functional.lp_pool2d(jtorch.ones(1, 4, 4), 2, 2)
    tensor([[[2., 2.],
             [2., 2.]]])
    """
    return _lp(input, norm_type, kernel_size, stride, ceil_mode, 2)


def lp_pool3d(input: Tensor, norm_type, kernel_size, stride=None,
              ceil_mode: bool = False) -> Tensor:
    """(sum over each kT x kH x kW window of x^p)^(1/p)."""
    return _lp(input, norm_type, kernel_size, stride, ceil_mode, 3)


# torch's top-level pooling names (torch.adaptive_max_pool1d always returns the indices too)
TOP_LEVEL = {"max_pool1d": max_pool1d, "max_pool2d": max_pool2d, "max_pool3d": max_pool3d,
             "max_pool1d_with_indices": max_pool1d_with_indices, "avg_pool1d": avg_pool1d,
             "adaptive_avg_pool1d": adaptive_avg_pool1d,
             "adaptive_max_pool1d": _adaptive_max_pool1d_top}
