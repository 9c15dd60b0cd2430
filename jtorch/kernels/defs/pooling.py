"""Pooling: max, average and their adaptive forms, each a forward and a backward OpDef, and
max unpooling.

A pooling op's meta rule runs torch's checks (its order and wording) and describes the windows
as per-dim tables (``Windows``); the kernels (``kernels/cpu/pooling``) work on (P, D, H, W)
planes with those tables, so one kernel pair serves 1-d (through 2-d, as torch), 2-d and 3-d
pooling. A network pools the same shapes every step: the checked plan is kept per argument
values and input geometry, the windows per geometry.

The backward ops are registry ops too, so a gradient of a gradient goes through them: the
max-pool backward is a scatter-add through the saved indices, whose own gradient is a gather
through them; average pooling is linear, so its backward's gradient is the forward again.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import dispatch
from ... import dtypes as _dt
from ...tensor import Tensor
from ..plan import Out, Plan, common_device, device_of, memo
from ..registry import defvjp, op
from ._lazy import lazy

_PK = "jtorch.kernels.cpu.pooling_entries"  # imported at the first call (_lazy.py)

_int64 = _dt.int64


# -- windows ---------------------------------------------------------------------------------

class Windows:
    """Per spatial dim (always 3: D, H, W; 1 where the op has fewer): the input range
    ``range(lo[o], hi[o], step)`` of each output ``o``, and the divisor factor ``f[o]``
    of average pooling (divisor = product over dims, or ``override``)."""

    __slots__ = ("lo", "hi", "step", "f", "override", "out_size", "fast22", "sep", "_cache")

    def __init__(self, lo, hi, step, f, override: int = 0) -> None:
        self.lo, self.hi, self.step, self.f = lo, hi, step, f
        self.override = override
        self.out_size = tuple(len(x) for x in lo)
        # every window a whole 2x2 block at stride 2 (1-element D): the kernels' fast path
        self.fast22 = self.out_size[0] == 1 and len(lo[0]) == 1 and lo[0][0] == 0 and \
            hi[0][0] == 1 and all(step[i] == 1 and np.array_equal(lo[i], 2 * np.arange(len(lo[i])))
                                  and np.array_equal(hi[i], lo[i] + 2) and np.all(f[i] == 2) for i in (1, 2))
        # a 2-D max pool's two-pass arguments (``pooling.max_sep``: each H and W window's
        # first and last tap and the step), where the depth is one element and no window is
        # empty; else None
        self.sep = None
        if self.out_size[0] == 1 and lo[0][0] == 0 and hi[0][0] == 1 and \
                all(len(lo[i]) and np.all(hi[i] > lo[i]) for i in (1, 2)):
            last = [lo[i] + (hi[i] - lo[i] - 1) // step[i] * step[i] for i in (1, 2)]
            self.sep = (lo[1], last[0], step[1], lo[2], last[1], step[2])
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


def _windows(dims: list, override: int = 0) -> Windows:
    dims = [_ONE] * (3 - len(dims)) + list(dims)
    return Windows(*(tuple(d[i] for d in dims) for i in range(4)), override=override)


# Building the tables (NumPy calls on a few elements) costs ~70 us: they are kept per geometry.
# Shared Windows are only read (their _cache holds per-dtype divisor tables, equal for every
# user).
@functools.lru_cache(maxsize=512)
def regular_windows(dims: tuple, override: int = 0) -> Windows:
    """``dims``: per spatial dim, ``_regular``'s arguments."""
    return _windows([_regular(*d) for d in dims], override)


@functools.lru_cache(maxsize=512)
def adaptive_windows(dims: tuple) -> Windows:
    """``dims``: per spatial dim, (input size, output size)."""
    return _windows([_adaptive(n, o) for n, o in dims])


# -- argument checks (torch's order and wording) ---------------------------------------------

def ints(v, fn: str, arg: str, pos: int) -> list:
    """torch's int-list argument ``arg`` of ``fn``: an int (or index) or a sequence of them."""
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


def expand(v: list, n: int) -> list:
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


def fmt(shape) -> str:
    return "[" + ", ".join(str(n) for n in shape) + "]"


def not_implemented(name: str, d: _dt.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{name}" not implemented for \'{d.scalar_name}\'')


def check_dtype(x: Tensor, name: str, ints: bool) -> None:
    d = x.dtype
    if d.is_complex or d is _dt.bool or (not d.is_floating_point and not ints):
        raise not_implemented(name, d)


def check_tensor(x, fn: str) -> None:
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
                           f"for input, but got:{fmt(a.shape)}")
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
                               f"length, but input has a shape of {fmt(a.shape)} and non-batch "
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
    k = ints(kernel_size, fn, "kernel_size", 2)
    s = [] if stride is None else ints(stride, fn, "stride", 3)
    p = ints(padding, fn, "padding", 4)
    d = ints(dilation, fn, "dilation", 5)
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
    k = expand(k, nd)
    return k, expand(s, nd) if s else k, expand(p, nd), expand(d, nd)


def _int_key(v):
    """``v`` as a key part when it is an int or a sequence of ints, exactly (a float or bool
    equal to an int must not find that int's plan); else TypeError."""
    if type(v) is int:
        return v
    if type(v) in (tuple, list) and all(type(e) is int for e in v):
        return tuple(v)
    raise TypeError


def _flag_key(v):
    if type(v) is bool:
        return v
    raise TypeError


# The checked plan of a call, per argument values and input geometry and device: the checks
# cost ~20 us per call. Arguments that are not plain ints and bools are not kept.
_plans: dict = {}


def _memo(key, plan: Plan) -> Plan:
    return memo(_plans, key, plan, 1024)


def _pool_out(x: Tensor, nd: int, win: Windows) -> tuple:
    return x._a.shape[:x._a.ndim - nd] + win.out_size[3 - nd:]


# -- max pooling -----------------------------------------------------------------------------

def _max_pool_plan(x, nd: int, kernel_size, stride, padding, dilation, ceil_mode) -> Plan:
    fn = f"max_pool{nd}d"
    check_tensor(x, fn)
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
    check_dtype(x, fn, True)
    win = regular_windows(tuple((sp[i], k[i], s[i], p[i], d[i], out[i], True)
                                for i in range(nd)))
    shape = _pool_out(x, nd, win)
    return Plan((Out(shape, x.dtype), Out(shape, _int64)), {"win": win, "nd": nd}, device_of(x))


def _max_pool_meta(nd: int):
    def meta(x, *, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False) -> Plan:
        try:
            key = (nd, x._a.shape, x.dtype, x._a.__class__, _int_key(kernel_size),
                   None if stride is None else _int_key(stride), _int_key(padding),
                   _int_key(dilation), _flag_key(ceil_mode))
            plan = _plans.get(key)
        except (AttributeError, TypeError):
            key = plan = None
        if plan is None:
            plan = _max_pool_plan(x, nd, kernel_size, stride, padding, dilation, ceil_mode)
            if key is not None:
                _memo(key, plan)
        return plan
    return meta


# -- average pooling -------------------------------------------------------------------------

def _avg_pool_plan(x, nd: int, kernel_size, stride, padding, ceil_mode, count_include_pad,
                   divisor_override) -> Plan:
    fn = f"avg_pool{nd}d"
    check_tensor(x, fn)
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
    if x.dtype is not _dt.int64 and (nd == 2 or x.dtype not in _dt.HALF):
        check_dtype(x, "avg_pool2d" if nd == 2 else "avg_pool3d_out_frame", False)
    elif x.dtype in _dt.HALF:
        raise not_implemented("avg_pool3d_out_frame", x.dtype)
    win = regular_windows(tuple((sp[i], k[i], s[i], p[i], 1, out[i], bool(count_include_pad))
                                for i in range(nd)), int(divisor_override or 0))
    return Plan(Out(_pool_out(x, nd, win), x.dtype), {"win": win, "nd": nd}, device_of(x))


def _avg_pool_meta(nd: int):
    def meta(x, *, kernel_size=None, stride=None, padding=0, ceil_mode=False,
             count_include_pad=True, divisor_override=None, win: Windows | None = None) -> Plan:
        if win is not None:  # the gradient rule of the backward op: the forward's windows
            return Plan(Out(_pool_out(x, nd, win), x.dtype), {"win": win, "nd": nd},
                        device_of(x))
        try:
            key = (nd, x._a.shape, x.dtype, x._a.__class__, _int_key(kernel_size),
                   None if stride is None else _int_key(stride), _int_key(padding),
                   _flag_key(ceil_mode), _flag_key(count_include_pad),
                   None if divisor_override is None else _int_key(divisor_override))
            plan = _plans.get(key)
        except (AttributeError, TypeError):
            key = plan = None
        if plan is None:
            plan = _avg_pool_plan(x, nd, kernel_size, stride, padding, ceil_mode,
                                  count_include_pad, divisor_override)
            if key is not None:
                _memo(key, plan)
        return plan
    return meta


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


def adaptive_checks(x, output_size, nd: int, kind: str) -> list:
    """torch's checks of adaptive_{kind}_pool{nd}d; the output's spatial sizes."""
    fn = f"adaptive_{kind}_pool{nd}d"
    check_tensor(x, fn)
    out = _out_list(output_size, x, nd)
    a = x._a
    if kind == "avg" and len(out) != nd:
        raise RuntimeError(f"{fn}: output_size must be {nd}")
    if kind == "max" and len(out) != nd:
        raise RuntimeError(f"{fn}(): internal error: output_size.size() must be {nd}")
    if a.ndim not in (nd + 1, nd + 2):
        sep = ": " if kind == "max" else " "
        raise RuntimeError(f"{fn}(): Expected {nd + 1}D or {nd + 2}D tensor, but got{sep}"
                           f"{fmt(a.shape)}")
    for i in range(1, a.ndim):
        if a.shape[i] == 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but input has sizes {fmt(a.shape)} with dimension "
                               f"{i} being empty")
    if kind == "avg" and min(out) < 0:
        got = ", ".join(str(v) for v in out[:2]) + "".join(f",{v}" for v in out[2:])
        raise RuntimeError(f"{fn}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{got}}}")
    if kind == "max" and min(out) < 0:
        neg = min(out)
        raise RuntimeError(f"Trying to create tensor with negative dimension {neg}: "
                           f"{fmt(a.shape[:a.ndim - nd] + tuple(out))}")
    check_dtype(x, fn if nd == 2 else f"{fn}_cpu", False)
    return out


def _adaptive_windows_of(x: Tensor, out: list, nd: int) -> Windows:
    sp = x._a.shape[x._a.ndim - nd:]
    return adaptive_windows(tuple((sp[i], out[i]) for i in range(nd)))


def _adaptive_meta(nd: int, kind: str):
    def meta(x, *, output_size=None, win: Windows | None = None) -> Plan:
        if win is None:
            win = _adaptive_windows_of(x, adaptive_checks(x, output_size, nd, kind), nd)
        shape = _pool_out(x, nd, win)
        outs = (Out(shape, x.dtype), Out(shape, _int64)) if kind == "max" else Out(shape, x.dtype)
        return Plan(outs, {"win": win, "nd": nd}, device_of(x))
    return meta


# -- backward ops ----------------------------------------------------------------------------

def _max_backward_meta(g, idx, *, shape: tuple, nd: int) -> Plan:
    """(grad, indices) -> the input gradient of shape ``shape``."""
    return Plan(Out(shape, g.dtype), {"nd": nd, "shape": shape}, common_device(g, idx))


def _avg_backward_meta(g, *, win: Windows, shape: tuple, nd: int) -> Plan:
    return Plan(Out(shape, g.dtype), {"win": win, "nd": nd, "shape": shape}, device_of(g))


# -- max unpooling ---------------------------------------------------------------------------

def _unpool_meta(x, idx, *, size: tuple, nd: int) -> Plan:
    """(input, indices) -> each value at its index in zeroed planes of spatial ``size``."""
    fn = f"max_unpool{nd}d"
    a = x._a
    if not isinstance(idx, Tensor) or idx.dtype is not _int64:
        name = idx.dtype.scalar_name if isinstance(idx, Tensor) else "?"
        raise RuntimeError(f"elements in indices should be type int64 but got: {name}")
    if a.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Input to max_unpooling{nd}d should be a {nd + 1}d or {nd + 2}d "
                           f"Tensor, but got a tensor with {a.ndim} dimensions.")
    if idx._a.shape != a.shape:
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({fmt(a.shape)}) but got indices tensor with shape: "
                           f"{fmt(idx._a.shape)}")
    for i in range(1, a.ndim):
        if a.shape[i] <= 0:
            raise RuntimeError(f"{fn}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got {fmt(a.shape)} with dimension {i} being "
                               "empty.")
    check_dtype(x, fn, False)
    shape = a.shape[:a.ndim - nd] + tuple(size)
    return Plan(Out(shape, x.dtype), {"nd": nd}, common_device(x, idx))


# -- the OpDefs --------------------------------------------------------------------------------

def _max_vjp(c, g):
    gv = g[0] if isinstance(g, tuple) else g
    idx = c.out_at(1)
    return (dispatch.call(c.op.pair, gv, idx, shape=c._meta[0][0], nd=c.kw["nd"]),)


def _gather_through(gg, idx, nd: int):
    """gg's values at idx within each plane (the adjoint of a scatter through idx)."""
    lead = idx._a.shape[:idx._a.ndim - nd]
    p = 1
    for n in lead:
        p *= n
    return gg.reshape(p, -1).gather(1, idx.reshape(p, -1)).reshape(idx._a.shape)


def _max_backward_vjp(c, gg):
    """d(scatter-add through idx)/d(grad) is the gather through idx."""
    _, idx = c.args
    return _gather_through(gg, idx, c.kw["nd"]), None


def _avg_vjp(c, g):
    return (dispatch.call(c.op.pair, g, win=c.kw["win"], shape=c._meta[0][0], nd=c.kw["nd"]),)


def _avg_backward_vjp(c, gg):
    return (dispatch.call(c.op.pair, gg, win=c.kw["win"]),)


def _unpool_vjp(c, g):
    """The gradient of a scatter through idx is the gather through it."""
    _, idx = c.args
    return _gather_through(g, idx, c.kw["nd"]), None


def _pair(name: str, grad: str, kind: str, kernel_name: str, meta):
    """A forward OpDef (torch's ``name``) and its backward OpDef, linked both ways."""
    if kind == "max":
        fwd = op(name, "extern", meta, lazy(_PK, "max_pool_cpu"), kernel_name=kernel_name)
        bwd = op(name + "_backward", "extern", _max_backward_meta, lazy(_PK, "max_pool_backward_cpu"),
                 kernel_name=kernel_name + "_backward")
        defvjp(fwd, _max_vjp, "o", name=f"{grad}Backward0")
        defvjp(bwd, _max_backward_vjp, "1", name=f"{grad}BackwardBackward0")
    else:
        fwd = op(name, "extern", meta, lazy(_PK, "avg_pool_cpu"), kernel_name=kernel_name)
        bwd = op(name + "_backward", "extern", _avg_backward_meta, lazy(_PK, "avg_pool_backward_cpu"),
                 kernel_name=kernel_name + "_backward")
        defvjp(fwd, _avg_vjp, "", name=f"{grad}Backward0")
        defvjp(bwd, _avg_backward_vjp, "", name=f"{grad}BackwardBackward0")
    fwd.pair, bwd.pair = bwd, fwd
    return fwd, bwd


# (input,) -> (values, int64 indices) {"win", "nd"}; backward (grad, indices) -> grad_input
max_pool2d_op, max_pool2d_backward_op = _pair("max_pool2d_with_indices", "MaxPool2DWithIndices",
                                              "max", "max_pool2d", _max_pool_meta(2))
max_pool3d_op, max_pool3d_backward_op = _pair("max_pool3d_with_indices", "MaxPool3DWithIndices",
                                              "max", "max_pool3d", _max_pool_meta(3))
adaptive_max_pool2d_op, adaptive_max_pool2d_backward_op = _pair(
    "adaptive_max_pool2d", "AdaptiveMaxPool2D", "max", "adaptive_max_pool2d",
    _adaptive_meta(2, "max"))
adaptive_max_pool3d_op, adaptive_max_pool3d_backward_op = _pair(
    "adaptive_max_pool3d", "AdaptiveMaxPool3D", "max", "adaptive_max_pool3d_cpu",
    _adaptive_meta(3, "max"))
# (input,) -> output {"win", "nd"}; backward (grad,) -> grad_input
avg_pool2d_op, avg_pool2d_backward_op = _pair("avg_pool2d", "AvgPool2D", "avg", "avg_pool2d",
                                              _avg_pool_meta(2))
avg_pool3d_op, avg_pool3d_backward_op = _pair("avg_pool3d", "AvgPool3D", "avg",
                                              "avg_pool3d_out_frame", _avg_pool_meta(3))
adaptive_avg_pool2d_op, adaptive_avg_pool2d_backward_op = _pair(
    "adaptive_avg_pool2d", "AdaptiveAvgPool2D", "avg", "adaptive_avg_pool2d",
    _adaptive_meta(2, "avg"))
adaptive_avg_pool3d_op, adaptive_avg_pool3d_backward_op = _pair(
    "adaptive_avg_pool3d", "AdaptiveAvgPool3D", "avg", "adaptive_avg_pool3d_cpu",
    _adaptive_meta(3, "avg"))

# (input, indices) -> output {"nd"}: the values scattered to their indices in zeroed planes
max_unpool2d_op = op("max_unpool2d", "extern", _unpool_meta, lazy(_PK, "unpool_cpu"))
max_unpool3d_op = op("max_unpool3d", "extern", _unpool_meta, lazy(_PK, "unpool_cpu"))
defvjp(max_unpool2d_op, _unpool_vjp, "1", name="MaxUnpool2DBackward0")
defvjp(max_unpool3d_op, _unpool_vjp, "1", name="MaxUnpool3DBackward0")
