"""Convolutions and sliding-block ops: conv1d/2d/3d, conv_transpose1d/2d/3d, unfold, fold.

Every convolution is one ``convolution`` OpDef call (``kernels/defs/conv.py``) whose kernel
runs im2col + GEMMs (BLAS inside Numba), per image on Numba's threads or as one batched GEMM
(``kernels/cpu/conv.py`` says when); conv1d and conv2d
run as 3-D convolutions over size-1 leading spatial dims. The argument checks follow torch's
``_convolution`` (its messages and their order); unbatched inputs are convolved as a batch of
one, as torch does. float16 is computed in float32 and rounded once.

>>> import jtorch
>>> import jtorch.nn.functional as F
>>> F.conv1d(jtorch.ones(1, 2, 5), jtorch.ones(3, 2, 3)).shape
torch.Size([1, 3, 3])
"""

from __future__ import annotations

import functools
import warnings

import numpy as np

from .. import dispatch
from .. import dtypes as _dt
from ..kernels.cpu import conv as _ck
from ..kernels.defs import conv as D
from ..tensor import Tensor

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "fold", "unfold"]

_float16 = _dt.float16


# -- kernel calls (no argument checks: the public functions and the gradient rules call these)

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


def _compute(d: _dt.dtype):
    """float16 (and bool, for unfold/fold) run the float32 kernels."""
    return np.dtype(np.float32) if d is _float16 or d is _dt.bool else d.np


def _result(a: np.ndarray, d: _dt.dtype) -> np.ndarray:
    if d is _float16:
        return a.astype(np.float16)
    return a != 0 if d is _dt.bool else a


def _convolution(x: Tensor, w: Tensor, b: Tensor | None, *, stride: tuple, padding: tuple,
                 dilation: tuple, groups: int, transposed: bool, size: tuple) -> Tensor:
    """The ``convolution`` OpDef on batched inputs: output spatial size ``size``, leading pad
    ``padding`` per dim."""
    d = x.dtype
    cd = _compute(d)
    xa, wa = _as5d(x._a.astype(cd, copy=False)), _as5d(w._a.astype(cd, copy=False))
    ba = None if b is None else b._a.astype(cd, copy=False)
    geo = _geo3(tuple(stride), tuple(padding), tuple(dilation), groups, tuple(size))
    fn = _ck.conv_transposed if transposed else _ck.conv_forward
    r = fn(xa, wa, ba, *geo)
    r = _result(r.reshape(r.shape[:2] + tuple(size)), d)
    kw = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups,
          "transposed": transposed, "size": tuple(size)}
    return dispatch.record(D.convolution_op, (x, w, b), Tensor._make(r, None, d), kw)


def _conv_weight(x: Tensor, g: Tensor, kernel: tuple, *, stride: tuple, padding: tuple,
                 dilation: tuple, groups: int) -> Tensor:
    """The weight gradient of conv(x, W) (weight spatial size ``kernel``) for output grad g."""
    d = x.dtype
    cd = _compute(d)
    r = _ck.conv_weight(_as5d(x._a.astype(cd, copy=False)), _as5d(g._a.astype(cd, copy=False)),
                        _pad3(kernel, 1), _pad3(stride, 1), _pad3(padding, 0),
                        _pad3(dilation, 1), groups)
    r = _result(r.reshape(r.shape[:2] + tuple(kernel)), d)
    kw = {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups}
    return dispatch.record(D.conv_weight_op, (x, g), Tensor._make(r, None, d), kw)


def _blocks(size: tuple, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple) -> tuple:
    return tuple((s + 2 * p - dl * (k - 1) - 1) // st + 1
                 for s, k, dl, p, st in zip(size, kernel, dilation, padding, stride))


def _im2col(x: Tensor, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple) -> Tensor:
    """unfold on a batched 4-D tensor: (N, C, H, W) -> (N, C*kH*kW, L)."""
    d = x.dtype
    size = tuple(x._a.shape[2:])
    blocks = _blocks(size, kernel, dilation, padding, stride)
    r = _ck.unfold(_as5d(x._a.astype(_compute(d), copy=False)), (1, *kernel), (1, *stride),
                   (0, *padding), (1, *dilation), (1, *blocks))
    kw = {"kernel": kernel, "dilation": dilation, "padding": padding, "stride": stride,
          "size": size}
    return dispatch.record(D.im2col_op, (x,), Tensor._make(_result(r, d), None, d), kw)


def _col2im(x: Tensor, size: tuple, kernel: tuple, dilation: tuple, padding: tuple,
            stride: tuple) -> Tensor:
    """fold on a batched 3-D tensor: (N, C*kH*kW, L) -> (N, C, *size)."""
    d = x.dtype
    blocks = _blocks(size, kernel, dilation, padding, stride)
    r = _ck.fold(x._a.astype(_compute(d), copy=False), (1, *size), (1, *kernel), (1, *stride),
                 (0, *padding), (1, *dilation), (1, *blocks))
    r = _result(r.reshape(r.shape[:2] + tuple(size)), d)
    kw = {"kernel": kernel, "dilation": dilation, "padding": padding, "stride": stride}
    return dispatch.record(D.col2im_op, (x,), Tensor._make(r, None, d), kw)


# -- argument parsing and torch's checks ------------------------------------------------------

def _ints(v, name: str, fname: str, nd: int) -> list:
    """torch's IntArrayRef[nd] argument: an int repeats, a sequence is taken as given."""
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return [int(v)] * nd
    if isinstance(v, (tuple, list)) and all(isinstance(e, (int, np.integer)) for e in v):
        return [int(e) for e in v]
    raise TypeError(f"{fname}(): argument '{name}' must be tuple of ints, not {type(v).__name__}")


def _expand(v: list, name: str, dim: int) -> tuple:
    if len(v) == 1:
        return tuple(v) * dim
    if len(v) != dim:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {dim} "
                           f"values to match the convolution dimensions, but got {name}={v}")
    return tuple(v)


def _sizes(t: Tensor) -> str:
    return "[" + ", ".join(str(s) for s in t._a.shape) + "]"


def _hw(names: str, vals: tuple, sep: str = " ", fill: int = 1) -> str:
    """torch's 2-D/3-D kernels name each dim: 'dilation_height: 1, dilation_width: 0' (1-D
    convolutions run as 2-D ones with a leading ``fill``)."""
    dims = ("depth", "height", "width")[-len(vals):] if len(vals) > 1 else ("height", "width")
    if len(vals) == 1:
        vals = (fill,) + tuple(vals)
    return sep.join(f"{names}_{n}: {v}" for n, v in zip(dims, vals))


def _check_tensor(x, name: str, fname: str, pos: int) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(x).__name__}")


def _batchify(x: Tensor, nd: int, fname: str) -> tuple:
    k = x.dim()
    if k not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{fname}, but got input of size: {_sizes(x)}")
    return (x, False) if k == nd + 2 else (x.unsqueeze(0), True)


def _check_shapes(x: Tensor, w: Tensor, b, stride, padding, dilation, groups, transposed,
                  output_padding=None) -> None:
    """torch's check_shape_forward, in its order."""
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    if output_padding is not None and any(p < 0 for p in output_padding):
        raise RuntimeError("negative output_padding is not supported")
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(dl < 0 for dl in dilation):
        raise RuntimeError("dilation should be greater than zero")
    ws, k = tuple(w._a.shape), x.dim()
    wsz = "[" + ", ".join(str(s) for s in ws) + "]"
    if len(ws) != k:
        raise RuntimeError(f"Expected {len(ws)}-dimensional input for {len(ws)}-dimensional weight "
                           f"{wsz}, but got {k}-dimensional input of size {_sizes(x)} instead")
    if ws[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {wsz} instead")
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} at "
                           f"dimension 0, but got weight of size [{wsz}] instead")
    c = x._a.shape[1]
    if not transposed:
        if c != ws[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {wsz}, expected input"
                               f"{_sizes(x)} to have {ws[1] * groups} channels, but got {c} "
                               f"channels instead")
        if b is not None and (b.dim() != 1 or b._a.shape[0] != ws[0]):
            raise RuntimeError(f"Given weight of size {wsz}, expected bias to be 1-dimensional "
                               f"with {ws[0]} elements, but got bias of size {_sizes(b)} instead")
        padded = [s + 2 * p for s, p in zip(x._a.shape[2:], padding)]
        kern = [dl * (kk - 1) + 1 for dl, kk in zip(dilation, ws[2:])]
        if any(p < kk for p, kk in zip(padded, kern)):
            raise RuntimeError(
                f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
                f"Kernel size: ({' x '.join(map(str, kern))}). Kernel size can't be greater than "
                "actual input size")
    else:
        if c != ws[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {wsz}, expected input"
                               f"{_sizes(x)} to have {ws[0]} channels, but got {c} channels "
                               "instead")
        if b is not None and (b.dim() != 1 or b._a.shape[0] != ws[1] * groups):
            raise RuntimeError(f"Given transposed=1, weight of size {wsz}, expected bias to be "
                               f"1-dimensional with {ws[1] * groups} elements, but got bias of "
                               f"size {_sizes(b)} instead")


def _check_dtypes(x: Tensor, w: Tensor, b, nd: int, transposed: bool) -> None:
    from ..kernels.defs.binary import _CPP_NAMES

    if w.dtype is not x.dtype:
        raise RuntimeError(f"expected scalar type {dispatch.torch_name(x.dtype)} but found "
                           f"{dispatch.torch_name(w.dtype)}")
    if b is not None and b.dtype is not x.dtype:
        raise RuntimeError(f"Input type ({_CPP_NAMES[x.dtype.name]}) and bias type "
                           f"({_CPP_NAMES[b.dtype.name]}) should be the same")
    d = x.dtype
    if transposed and d.category < 2 and d is not _dt.int64:
        name = "slow_conv_transpose3d_out_cpu" if nd == 3 else "slow_conv_transpose2d_out_cpu"
        raise NotImplementedError(f'"{name}" not implemented for \'{dispatch.torch_name(d)}\'')
    if d is _dt.bool:
        name = "compute_columns3d" if nd == 3 else "slow_conv2d_cpu"
        raise NotImplementedError(f'"{name}" not implemented for \'Bool\'')


def _check_zero_dilation(dilation: tuple, transposed: bool) -> None:
    if all(dl > 0 for dl in dilation):
        return
    if transposed:
        raise RuntimeError(f"dilation should be greater than zero, but got "
                           f"{_hw('dilation', dilation, ', ')}")
    shown = [1, *dilation] if len(dilation) == 1 else list(dilation)
    raise RuntimeError(f"dilation should be greater than zero, but got {shown}")


def _check_kernel(ws: tuple) -> None:
    if any(k <= 0 for k in ws[2:]):
        raise RuntimeError(f"kernel size should be greater than zero, but got "
                           f"{_hw('kernel', tuple(ws[2:]))}")


def _same_padding(w: Tensor, dilation: tuple, stride: tuple, nd: int) -> tuple:
    """'same': total pad d*(k-1) per dim, the odd one on the right (as torch)."""
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    totals = [dl * (k - 1) for dl, k in zip(dilation, w._a.shape[2:])]
    if any(t % 2 for t in totals):
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require "
                      "a zero-padded copy of the input be created", UserWarning, stacklevel=4)
    return tuple(t // 2 for t in totals), tuple(t - t // 2 for t in totals)


def _int_key(v):
    """``v`` as a key part when it is an int or a sequence of ints, exactly (a float or bool
    equal to an int must not find that int's plan: the checks reject it); else TypeError."""
    if type(v) is int:
        return v
    if type(v) in (tuple, list) and all(type(e) is int for e in v):
        return tuple(v)
    raise TypeError


# The checked geometry of a call, per argument values and input/weight/bias shapes and dtypes:
# a network convolves the same shapes every step, and the checks and size arithmetic cost
# ~25 us per call. Not kept: 'same' padding (its warning is per call), inputs with no channels.
_plans: dict = {}


def _conv(nd: int, fname: str, input, weight, bias, stride, padding, dilation, groups) -> Tensor:
    key = plan = None
    if not isinstance(padding, str):
        try:
            key = (nd, input._a.shape, input.dtype, weight._a.shape, weight.dtype,
                   None if bias is None else (bias._a.shape, bias.dtype), _int_key(stride),
                   _int_key(padding), _int_key(dilation), _int_key(groups))
            plan = _plans.get(key)
        except (AttributeError, TypeError):  # not tensors, not plain ints: checks say why
            key = None
    if plan is None:
        return _conv_checked(nd, fname, input, weight, bias, stride, padding, dilation, groups,
                             key)
    unbatched, stride, padding, dilation, size = plan
    x = input.unsqueeze(0) if unbatched else input
    out = _convolution(x, weight, bias, stride=stride, padding=padding, dilation=dilation,
                       groups=groups, transposed=False, size=size)
    return out.squeeze(0) if unbatched else out


def _conv_checked(nd: int, fname: str, input, weight, bias, stride, padding, dilation, groups,
                  key=None) -> Tensor:
    """conv{nd}d with torch's checks; the checked geometry is kept under ``key``."""
    _check_tensor(input, "input", fname, 1)
    _check_tensor(weight, "weight", fname, 2)
    if bias is not None:
        _check_tensor(bias, "bias", fname, 3)
    stride = _ints(stride, "stride", fname, nd)
    dilation = _ints(dilation, "dilation", fname, nd)
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        pad_str, padding = padding, [0]
    else:
        pad_str, padding = None, _ints(padding, "padding", fname, nd)
    x, unbatched = _batchify(input, nd, fname)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight.dim() < 3:
        raise RuntimeError("weight should have at least three dimensions")
    dim = weight.dim() - 2
    stride, dilation = _expand(stride, "stride", dim), _expand(dilation, "dilation", dim)
    padding = _expand(padding, "padding", dim)
    hi = padding
    if pad_str == "same":
        padding, hi = _same_padding(weight, dilation, stride, dim)
    _check_shapes(x, weight, bias, stride, padding, dilation, groups, False)
    _check_zero_dilation(dilation, False)
    _check_kernel(tuple(weight._a.shape))
    _check_dtypes(x, weight, bias, nd, False)
    size = tuple((s + lo + h - dl * (k - 1) - 1) // st + 1 for s, lo, h, dl, k, st in
                 zip(x._a.shape[2:], padding, hi, dilation, weight._a.shape[2:], stride))
    if key is not None and x._a.shape[1]:
        if len(_plans) >= 1024:
            _plans.clear()
        _plans[key] = (unbatched, stride, padding, dilation, size)
    if x._a.shape[1] == 0:  # torch's empty-input path keeps the input's 0 channels
        weight, bias = weight[:0], None if bias is None else bias[:0]
    out = _convolution(x, weight, bias, stride=stride, padding=padding, dilation=dilation,
                       groups=groups, transposed=False, size=size)
    return out.squeeze(0) if unbatched else out


def _conv_t(nd: int, fname: str, input, weight, bias, stride, padding, output_padding, groups,
            dilation) -> Tensor:
    _check_tensor(input, "input", fname, 1)
    _check_tensor(weight, "weight", fname, 2)
    if bias is not None:
        _check_tensor(bias, "bias", fname, 3)
    stride = _ints(stride, "stride", fname, nd)
    padding = _ints(padding, "padding", fname, nd)
    output_padding = _ints(output_padding, "output_padding", fname, nd)
    dilation = _ints(dilation, "dilation", fname, nd)
    x, unbatched = _batchify(input, nd, fname)
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight.dim() < 3:
        raise RuntimeError("weight should have at least three dimensions")
    dim = weight.dim() - 2
    stride, dilation = _expand(stride, "stride", dim), _expand(dilation, "dilation", dim)
    padding = _expand(padding, "padding", dim)
    output_padding = _expand(output_padding, "output_padding", dim)
    _check_shapes(x, weight, bias, stride, padding, dilation, groups, True, output_padding)
    _check_zero_dilation(dilation, True)
    _check_kernel(tuple(weight._a.shape))
    if any(op >= s and op >= dl for op, s, dl in zip(output_padding, stride, dilation)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but "
                           f"got {_hw('output_padding', output_padding, fill=0)} "
                           f"{_hw('stride', stride)} {_hw('dilation', dilation)}")
    size = tuple((s - 1) * st - 2 * p + dl * (k - 1) + 1 + op for s, st, p, dl, k, op in
                 zip(x._a.shape[2:], stride, padding, dilation, weight._a.shape[2:],
                     output_padding))
    if any(s < 1 for s in size):
        ins, outs = list(x._a.shape[2:]), list(size)
        if len(ins) == 1:
            ins, outs = [1] + ins, [1] + outs
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, ins))}). "
                           f"Calculated output size per channel: ({' x '.join(map(str, outs))}). "
                           "Output size is too small")
    _check_dtypes(x, weight, bias, nd, True)
    out = _convolution(x, weight, bias, stride=stride, padding=padding, dilation=dilation,
                       groups=groups, transposed=True, size=size)
    return out.squeeze(0) if unbatched else out


# -- public functions -------------------------------------------------------------------------

def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """1-D convolution over (N, C, L) or unbatched (C, L) input; ``padding`` may be 'same' or
    'valid'.

    >>> F.conv1d(jtorch.ones(20, 16, 50), jtorch.ones(33, 16, 3), stride=2).shape
    torch.Size([20, 33, 24])
    """
    return _conv(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """2-D convolution over (N, C, H, W) or unbatched (C, H, W) input.

    >>> F.conv2d(jtorch.ones(1, 3, 8, 8), jtorch.ones(4, 3, 3, 3), padding=1).shape
    torch.Size([1, 4, 8, 8])
    """
    return _conv(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """3-D convolution over (N, C, D, H, W) or unbatched (C, D, H, W) input.

    >>> F.conv3d(jtorch.ones(1, 2, 4, 4, 4), jtorch.ones(3, 2, 3, 3, 3)).shape
    torch.Size([1, 3, 2, 2, 2])
    """
    return _conv(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The adjoint of conv1d (weight (C_in, C_out/groups, k)); output_padding adds to one side.

    >>> F.conv_transpose1d(jtorch.ones(1, 4, 5), jtorch.ones(4, 3, 3), stride=2).shape
    torch.Size([1, 3, 11])
    """
    return _conv_t(1, "conv_transpose1d", input, weight, bias, stride, padding, output_padding,
                   groups, dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The adjoint of conv2d (weight (C_in, C_out/groups, kH, kW)).

    >>> F.conv_transpose2d(jtorch.ones(1, 4, 5, 5), jtorch.ones(4, 3, 3, 3), stride=2).shape
    torch.Size([1, 3, 11, 11])
    """
    return _conv_t(2, "conv_transpose2d", input, weight, bias, stride, padding, output_padding,
                   groups, dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The adjoint of conv3d (weight (C_in, C_out/groups, kD, kH, kW)).

    >>> F.conv_transpose3d(jtorch.ones(1, 4, 2, 2, 2), jtorch.ones(4, 3, 2, 2, 2)).shape
    torch.Size([1, 3, 3, 3, 3])
    """
    return _conv_t(3, "conv_transpose3d", input, weight, bias, stride, padding, output_padding,
                   groups, dilation)


def _pair(v, name: str) -> tuple:
    t = tuple(v) if isinstance(v, (tuple, list)) else (v, v)
    if len(t) != 2:
        raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(t)}")
    return t


def _check_blocks(kernel: tuple, dilation: tuple, padding: tuple, stride: tuple) -> None:
    if any(k <= 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got "
                           f"{_hw('kernel', kernel)}")
    if any(dl <= 0 for dl in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got "
                           f"{_hw('dilation', dilation)}")
    if any(p < 0 for p in padding):
        raise RuntimeError(f"padding should be non-negative, but got pad_height: {padding[0]} "
                           f"pad_width: {padding[1]}")
    if any(s <= 0 for s in stride):
        raise RuntimeError(f"stride should be greater than zero, but got {_hw('stride', stride)}")


def _tup(t: tuple) -> str:
    return "(" + ", ".join(map(str, t)) + ")"


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding blocks of a (N, C, H, W) (or (C, H, W)) tensor as columns (im2col):
    (N, C*kH*kW, L).

    >>> F.unfold(jtorch.ones(2, 3, 5, 5), 2).shape
    torch.Size([2, 12, 16])
    """
    _check_tensor(input, "input", "unfold", 1)
    k, dl, p, s = (_pair(kernel_size, "kernel_size"), _pair(dilation, "dilation"),
                   _pair(padding, "padding"), _pair(stride, "stride"))
    _check_blocks(k, dl, p, s)
    if input.dim() not in (3, 4) or any(n == 0 for n in input._a.shape[1:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {_sizes(input)}")
    size = tuple(input._a.shape[-2:])
    blocks = _blocks(size, k, dl, p, s)
    if any(b < 1 for b in blocks):
        raise RuntimeError(f"Given input with spatial size {_tup(size)}, kernel_size={_tup(k)}, "
                           f"dilation={_tup(dl)}, padding={_tup(p)}, calculated shape of the "
                           f"array of sliding blocks as {_tup(blocks)}, but its components must "
                           "be at least one.")
    if input.dtype.category == 1 and input.dtype is not _dt.bool:
        raise NotImplementedError(f'"im2col_out_cpu" not implemented for '
                                  f"'{dispatch.torch_name(input.dtype)}'")
    if input.dim() == 3:
        return _im2col(input.unsqueeze(0), k, dl, p, s).squeeze(0)
    return _im2col(input, k, dl, p, s)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sums sliding-block columns (N, C*kH*kW, L) back into (N, C, *output_size) (col2im, the
    adjoint of unfold).

    >>> F.fold(jtorch.ones(1, 12, 16), (5, 5), 2).shape
    torch.Size([1, 3, 5, 5])
    """
    _check_tensor(input, "input", "fold", 1)
    size, k = _pair(output_size, "output_size"), _pair(kernel_size, "kernel_size")
    dl, p, s = _pair(dilation, "dilation"), _pair(padding, "padding"), _pair(stride, "stride")
    _check_blocks(k, dl, p, s)
    if input.dim() not in (2, 3) or any(n == 0 for n in input._a.shape[-2:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
                           f"size and non-zero dimensions for input, but got: {_sizes(input)}")
    bd = 0  # torch checks after adding the batch dim
    ck, ll = input._a.shape[-2:]
    if ck % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension {bd + 1} to be divisible by the "
                           f"product of kernel_size, but got input.size({bd + 1})={ck} and "
                           f"kernel_size={_tup(k)}.")
    blocks = _blocks(size, k, dl, p, s)
    if any(b < 1 for b in blocks) or blocks[0] * blocks[1] != ll:
        raise RuntimeError(f"Given output_size={_tup(size)}, kernel_size={_tup(k)}, "
                           f"dilation={_tup(dl)}, padding={_tup(p)}, stride={_tup(s)}, expected "
                           f"size of input's dimension {bd + 2} to match the calculated number of "
                           f"sliding blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, "
                           f"but got input.size({bd + 2})={ll}.")
    if input.dtype.category == 1 and input.dtype is not _dt.bool:
        raise NotImplementedError(f'"col2im_out_cpu" not implemented for '
                                  f"'{dispatch.torch_name(input.dtype)}'")
    if input.dim() == 2:
        return _col2im(input.unsqueeze(0), size, k, dl, p, s).squeeze(0)
    return _col2im(input, size, k, dl, p, s)
