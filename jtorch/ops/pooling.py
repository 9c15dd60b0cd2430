"""nn.functional's pooling ops: max, average, adaptive, unpooling and power-average pooling.

Each 2-d and 3-d op is one call of its OpDef (``kernels/defs/pooling.py``), whose meta rule
runs torch's checks in its order and wording and describes the windows; the kernels run over
(P, D, H, W) planes. 1-d pooling runs the 2-d op on an unsqueezed view, as torch does (so
grad_fn is ``SqueezeBackward1`` there too), with torch's own 1-d checks first; lp pooling is
torch's composition of average (or max) pooling and pointwise ops.

>>> import jtorch as torch
>>> torch.nn.functional.max_pool2d(torch.arange(16.).reshape(1, 4, 4), 2)
tensor([[[ 5.,  7.],
         [13., 15.]]])
"""

from __future__ import annotations

import math

from .. import dispatch
from ..amp import state as _amp
from ..kernels.defs import pooling as D
from ..tensor import Tensor

__all__ = ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d",
           "adaptive_max_pool2d_with_indices", "adaptive_max_pool3d",
           "adaptive_max_pool3d_with_indices", "avg_pool1d", "avg_pool2d", "avg_pool3d",
           "lp_pool1d", "lp_pool2d", "lp_pool3d", "max_pool1d", "max_pool1d_with_indices",
           "max_pool2d", "max_pool2d_with_indices", "max_pool3d", "max_pool3d_with_indices",
           "max_unpool1d", "max_unpool2d", "max_unpool3d"]

_ints, _expand, _fmt = D.ints, D.expand, D.fmt


# -- max pooling -----------------------------------------------------------------------------

def max_pool2d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple:
    """max_pool2d's (values, int64 indices into each H*W plane)."""
    return dispatch.call(D.max_pool2d_op, input, kernel_size=kernel_size, stride=stride,
                         padding=padding, dilation=dilation, ceil_mode=ceil_mode)


def max_pool3d_with_indices(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode: bool = False, return_indices: bool = False) -> tuple:
    """max_pool3d's (values, int64 indices into each D*H*W volume)."""
    return dispatch.call(D.max_pool3d_op, input, kernel_size=kernel_size, stride=stride,
                         padding=padding, dilation=dilation, ceil_mode=ceil_mode)


def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """Maxima over (dilated) kH x kW windows of (N, C, H, W) or (C, H, W) input; ties keep the
    first maximum, NaN wins.

    >>> jtorch.nn.functional.max_pool2d(jtorch.arange(16.).reshape(1, 4, 4), 2).shape
    torch.Size([1, 2, 2])
    """
    res = dispatch.call(D.max_pool2d_op, input, kernel_size=kernel_size, stride=stride,
                        padding=padding, dilation=dilation, ceil_mode=ceil_mode)
    return res if return_indices else res[0]


@_amp.fp32_op
def max_pool3d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """Maxima over kT x kH x kW windows of (N, C, D, H, W) or (C, D, H, W) input."""
    res = dispatch.call(D.max_pool3d_op, input, kernel_size=kernel_size, stride=stride,
                        padding=padding, dilation=dilation, ceil_mode=ceil_mode)
    return res if return_indices else res[0]


def _check1d(fn: str, arg: str, v: list) -> None:
    if len(v) != 1:
        raise RuntimeError(f"{fn}() argument '{arg}' should contain one int (got {len(v)})")


def _check_dim_range(x: Tensor, fn: str) -> None:
    D.check_tensor(x, fn)
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
    v, i = max_pool2d_with_indices(input.unsqueeze(-2), [1, k[0]], [1, s[0]], [0, p[0]],
                                   [1, d[0]], ceil_mode)
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
        D.check_dtype(x, "max_pool1d_impl", False)
    return max_pool1d_with_indices(x, kw, sw, pw, dw, ceil_mode)[0]


def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """Maxima over (dilated) windows of the last dim of (N, C, L) or (C, L) input."""
    D.check_tensor(input, "max_pool1d")
    if return_indices:
        return max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return _max_pool1d_plain(input, kernel_size, stride, padding, dilation, ceil_mode)


# -- average pooling -------------------------------------------------------------------------

def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None) -> Tensor:
    """Means over kH x kW windows of (N, C, H, W) or (C, H, W) input (zero padding counted
    unless ``count_include_pad=False``; ``divisor_override`` replaces the window size).

    >>> jtorch.nn.functional.avg_pool2d(jtorch.ones(1, 4, 4), 2, padding=1).shape
    torch.Size([1, 3, 3])
    """
    return dispatch.call(D.avg_pool2d_op, input, kernel_size=kernel_size, stride=stride,
                         padding=padding, ceil_mode=ceil_mode,
                         count_include_pad=count_include_pad, divisor_override=divisor_override)


@_amp.fp32_op
def avg_pool3d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override=None) -> Tensor:
    """Means over kT x kH x kW windows of (N, C, D, H, W) or (C, D, H, W) input."""
    return dispatch.call(D.avg_pool3d_op, input, kernel_size=kernel_size, stride=stride,
                         padding=padding, ceil_mode=ceil_mode,
                         count_include_pad=count_include_pad, divisor_override=divisor_override)


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
    out = avg_pool2d(input.unsqueeze(-2), [1, k[0]], [1, s[0]], [0, p[0]], ceil_mode,
                     count_include_pad)
    return out.squeeze(-2)


# -- adaptive pooling ------------------------------------------------------------------------

_ADAPTIVE = {("avg", 2): D.adaptive_avg_pool2d_op, ("avg", 3): D.adaptive_avg_pool3d_op,
             ("max", 2): D.adaptive_max_pool2d_op, ("max", 3): D.adaptive_max_pool3d_op}


def _adaptive_avg(x, output_size, nd: int) -> Tensor:
    out = D.adaptive_checks(x, output_size, nd, "avg")
    if all(o == 1 for o in out):  # torch's shortcut: a mean (grad_fn MeanBackward1)
        return x.mean(tuple(range(-nd, 0)), keepdim=True)
    return dispatch.call(_ADAPTIVE["avg", nd], x, output_size=out)


def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """Means over the windows that split H and W into ``output_size`` near-equal parts
    (window o: floor(o*H/oH) to ceil((o+1)*H/oH)).

    >>> jtorch.nn.functional.adaptive_avg_pool2d(jtorch.ones(1, 5, 7), (2, 3)).shape
    torch.Size([1, 2, 3])
    """
    return _adaptive_avg(input, output_size, 2)


@_amp.fp32_op
def adaptive_avg_pool3d(input: Tensor, output_size) -> Tensor:
    """Adaptive means over D, H and W."""
    return _adaptive_avg(input, output_size, 3)


def adaptive_avg_pool1d(input: Tensor, output_size) -> Tensor:
    """Adaptive means over the last dim of (N, C, L) or (C, L) input."""
    _check_dim_range(input, "adaptive_avg_pool1d")
    o = _ints(output_size, "adaptive_avg_pool1d", "output_size", 2)
    _check1d("adaptive_avg_pool1d", "output_size", o)
    return _adaptive_avg(input.unsqueeze(-2), [1, o[0]], 2).squeeze(-2)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple:
    """adaptive_max_pool2d's (values, int64 indices into each H*W plane)."""
    return dispatch.call(D.adaptive_max_pool2d_op, input, output_size=output_size)


def adaptive_max_pool3d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple:
    """adaptive_max_pool3d's (values, int64 indices into each D*H*W volume)."""
    return dispatch.call(D.adaptive_max_pool3d_op, input, output_size=output_size)


def adaptive_max_pool1d_with_indices(input: Tensor, output_size,
                                     return_indices: bool = False) -> tuple:
    """adaptive_max_pool1d's (values, int64 indices into each row)."""
    _check_dim_range(input, "adaptive_max_pool1d")
    o = _ints(output_size, "adaptive_max_pool1d", "output_size", 2)
    _check1d("adaptive_max_pool1d", "output_size", o)
    v, i = dispatch.call(D.adaptive_max_pool2d_op, input.unsqueeze(-2), output_size=[1, o[0]])
    return v.squeeze(-2), i.squeeze(-2)


def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False):
    """Maxima over the adaptive windows of H and W (see adaptive_avg_pool2d)."""
    res = adaptive_max_pool2d_with_indices(input, output_size)
    return res if return_indices else res[0]


@_amp.fp32_op
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


def _max_unpool(x: Tensor, idx, out: list, nd: int) -> Tensor:
    op = D.max_unpool2d_op if nd == 2 else D.max_unpool3d_op
    return dispatch.call(op, x, idx, size=tuple(out), nd=nd)


def _unpool(x, indices, nd: int, kernel_size, stride, padding, output_size) -> Tensor:
    D.check_tensor(x, f"max_unpool{nd}d")
    k = _expand(_ints(kernel_size, f"max_unpool{nd}d", "kernel_size", 3), nd)
    s = k if stride is None else _expand(_ints(stride, f"max_unpool{nd}d", "stride", 4), nd)
    p = _expand(_ints(padding, f"max_unpool{nd}d", "padding", 5), nd)
    return _max_unpool(x, indices, _unpool_size(x, k, s, p, output_size), nd)


@_amp.fp32_op
def max_unpool2d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of max_pool2d: each value put back at its index, zeros elsewhere.

    >>> v, i = jtorch.nn.functional.max_pool2d(jtorch.arange(16.).reshape(1, 4, 4), 2,
    ...                                        return_indices=True)
    >>> jtorch.nn.functional.max_unpool2d(v, i, 2).shape
    torch.Size([1, 4, 4])
    """
    return _unpool(input, indices, 2, kernel_size, stride, padding, output_size)


@_amp.fp32_op
def max_unpool3d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of max_pool3d."""
    return _unpool(input, indices, 3, kernel_size, stride, padding, output_size)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size, stride=None, padding=0,
                 output_size=None) -> Tensor:
    """The partial inverse of max_pool1d (through the 2-d op on (L, 1) planes, as torch)."""
    D.check_tensor(input, "max_unpool1d")
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
