"""Convolution: the OpDefs every conv, transposed conv, unfold and fold call lowers to.

``convolution`` (input, weight, bias) runs ``kernels/cpu/conv`` (im2col + one batched GEMM,
or GEMM + col2im when ``transposed``); its kwargs are the per-dim ``stride``, ``padding`` (the
leading pad; the trailing one is implied by ``size``, which lets 'same' pad asymmetrically),
``dilation``, ``groups``, ``transposed`` and ``size`` (the output's spatial size).
Gradients are convolutions again: the input gradient of a convolution is the transposed
convolution of the output gradient with the same weight (and vice versa), the weight gradient
is ``convolution_backward_weight`` (one GEMM against the input's columns), whose own gradients
are convolutions, so double backward needs no further rule. ``im2col``/``col2im`` (unfold and
fold, batched or not) are each other's adjoints.

The meta rule of ``convolution`` takes the user's arguments (``nd`` names conv1d/2d/3d) and
runs torch's ``_convolution`` checks in its order and wording; a network convolves the same
shapes every step, so the checked plan is kept per argument values and operand geometry.
The gradient rules call it with the normalised arguments and ``size`` (no checks).
"""

from __future__ import annotations

import warnings

import numpy as np

from ... import dispatch
from ... import dtypes as _dt
from ...tensor import Tensor
from ..plan import Out, Plan, common_device, device_of, memo
from ..registry import defvjp, op
from ._lazy import lazy

_CK = "jtorch.kernels.cpu.conv_entries"  # imported at the first call (_lazy.py)

_float16 = _dt.float16


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
    ws, k = tuple(w._a.shape), x._a.ndim
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
        if b is not None and (b._a.ndim != 1 or b._a.shape[0] != ws[0]):
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
        if b is not None and (b._a.ndim != 1 or b._a.shape[0] != ws[1] * groups):
            raise RuntimeError(f"Given transposed=1, weight of size {wsz}, expected bias to be "
                               f"1-dimensional with {ws[1] * groups} elements, but got bias of "
                               f"size {_sizes(b)} instead")


def _check_dtypes(x: Tensor, w: Tensor, b, nd: int, transposed: bool) -> None:
    if w.dtype is not x.dtype:
        raise RuntimeError(f"expected scalar type {x.dtype.scalar_name} but found "
                           f"{w.dtype.scalar_name}")
    if b is not None and b.dtype is not x.dtype:
        raise RuntimeError(f"Input type ({x.dtype.cpp_name}) and bias type ({b.dtype.cpp_name}) "
                           "should be the same")
    d = x.dtype
    if transposed and d.category < 2 and d is not _dt.int64:
        name = "slow_conv_transpose3d_out_cpu" if nd == 3 else "slow_conv_transpose2d_out_cpu"
        raise NotImplementedError(f'"{name}" not implemented for \'{d.scalar_name}\'')
    if d is _dt.bool:
        name = "compute_columns3d" if nd == 3 else "slow_conv2d_cpu"
        raise NotImplementedError(f'"{name}" not implemented for \'Bool\'')


def _check_empty(x: Tensor, b, nd: int) -> None:
    """torch's backend choice: an input with no elements needs no batch or no channels (its
    bias type is checked first there)."""
    xs = x._a.shape
    if not (xs[0] and xs[1] and 0 in xs[2:]):
        return
    if b is not None and b.dtype is not x.dtype:
        raise RuntimeError(f"Input type ({x.dtype.cpp_name}) and bias type ({b.dtype.cpp_name}) "
                           "should be the same")
    shape = [xs[0], xs[1], 1, xs[2]] if nd == 1 else list(xs)
    raise RuntimeError(f"Only zero batch or zero channel inputs are supported, but got input "
                       f"shape: {shape}")


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


def _same_padding(w: Tensor, dilation: tuple, stride: tuple) -> tuple:
    """'same': total pad d*(k-1) per dim, the odd one on the right (as torch)."""
    if any(s != 1 for s in stride):
        raise RuntimeError("padding='same' is not supported for strided convolutions")
    totals = [dl * (k - 1) for dl, k in zip(dilation, w._a.shape[2:])]
    if any(t % 2 for t in totals):
        warnings.warn("Using padding='same' with even kernel lengths and odd dilation may require "
                      "a zero-padded copy of the input be created", UserWarning, stacklevel=7)
    return tuple(t // 2 for t in totals), tuple(t - t // 2 for t in totals)


def _int_key(v):
    """``v`` as a key part when it is an int or a sequence of ints, exactly (a float or bool
    equal to an int must not find that int's plan: the checks reject it); else TypeError."""
    if type(v) is int:
        return v
    if type(v) in (tuple, list) and all(type(e) is int for e in v):
        return tuple(v)
    raise TypeError


def _geo_kw(stride: tuple, padding: tuple, dilation: tuple, groups: int, transposed: bool,
            size: tuple) -> dict:
    return {"stride": stride, "padding": padding, "dilation": dilation, "groups": groups,
            "transposed": transposed, "size": size}


def _conv_plan(x, w, b, stride, padding, dilation, groups, nd: int) -> Plan:
    """conv{nd}d's plan with torch's checks (``x`` is batched unless the call is wrong)."""
    fname = f"conv{nd}d"
    _check_tensor(x, "input", fname, 1)
    _check_tensor(w, "weight", fname, 2)
    if b is not None:
        _check_tensor(b, "bias", fname, 3)
    stride = _ints(stride, "stride", fname, nd)
    dilation = _ints(dilation, "dilation", fname, nd)
    if isinstance(padding, str):
        if padding not in ("same", "valid"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
        pad_str, padding = padding, [0]
    else:
        pad_str, padding = None, _ints(padding, "padding", fname, nd)
    if x._a.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{fname}, but got input of size: {_sizes(x)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if w._a.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    dim = w._a.ndim - 2
    stride, dilation = _expand(stride, "stride", dim), _expand(dilation, "dilation", dim)
    padding = _expand(padding, "padding", dim)
    hi = padding
    if pad_str == "same":
        padding, hi = _same_padding(w, dilation, stride)
    _check_shapes(x, w, b, stride, padding, dilation, groups, False)
    _check_zero_dilation(dilation, False)
    _check_kernel(tuple(w._a.shape))
    _check_empty(x, b, nd)
    _check_dtypes(x, w, b, nd, False)
    xs, ws = x._a.shape, w._a.shape
    size = tuple((s + lo + h - dl * (k - 1) - 1) // st + 1 for s, lo, h, dl, k, st in
                 zip(xs[2:], padding, hi, dilation, ws[2:], stride))
    # torch's empty-input path keeps the input's 0 channels
    out = Out((xs[0], ws[0] if xs[1] else 0, *size), x.dtype)
    return Plan(out, _geo_kw(stride, padding, dilation, groups, False, size),
                common_device(x, w, b))


def _conv_t_plan(x, w, b, stride, padding, output_padding, groups, dilation, nd: int) -> Plan:
    """conv_transpose{nd}d's plan with torch's checks."""
    fname = f"conv_transpose{nd}d"
    _check_tensor(x, "input", fname, 1)
    _check_tensor(w, "weight", fname, 2)
    if b is not None:
        _check_tensor(b, "bias", fname, 3)
    stride = _ints(stride, "stride", fname, nd)
    padding = _ints(padding, "padding", fname, nd)
    output_padding = _ints(output_padding, "output_padding", fname, nd)
    dilation = _ints(dilation, "dilation", fname, nd)
    if x._a.ndim != nd + 2:
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{fname}, but got input of size: {_sizes(x)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if w._a.ndim < 3:
        raise RuntimeError("weight should have at least three dimensions")
    dim = w._a.ndim - 2
    stride, dilation = _expand(stride, "stride", dim), _expand(dilation, "dilation", dim)
    padding = _expand(padding, "padding", dim)
    output_padding = _expand(output_padding, "output_padding", dim)
    _check_shapes(x, w, b, stride, padding, dilation, groups, True, output_padding)
    _check_zero_dilation(dilation, True)
    _check_kernel(tuple(w._a.shape))
    if any(op >= s and op >= dl for op, s, dl in zip(output_padding, stride, dilation)):
        raise RuntimeError(f"output padding must be smaller than either stride or dilation, but "
                           f"got {_hw('output_padding', output_padding, fill=0)} "
                           f"{_hw('stride', stride)} {_hw('dilation', dilation)}")
    xs, ws = x._a.shape, w._a.shape
    size = tuple((s - 1) * st - 2 * p + dl * (k - 1) + 1 + op for s, st, p, dl, k, op in
                 zip(xs[2:], stride, padding, dilation, ws[2:], output_padding))
    if any(s < 1 for s in size):
        ins, outs = list(xs[2:]), list(size)
        if len(ins) == 1:
            ins, outs = [1] + ins, [1] + outs
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, ins))}). "
                           f"Calculated output size per channel: ({' x '.join(map(str, outs))}). "
                           "Output size is too small")
    _check_empty(x, b, nd)
    _check_dtypes(x, w, b, nd, True)
    out = Out((xs[0], ws[1] * groups, *size), x.dtype)
    return Plan(out, _geo_kw(stride, padding, dilation, groups, True, size),
                common_device(x, w, b))


# The checked plan of a call, per argument values and input/weight/bias geometry and device:
# the checks and size arithmetic cost ~25 us per call. Not kept: 'same'/'valid' padding (the
# warning is per call), arguments that are not plain ints (the checks say why).
_plans: dict = {}


def _convolution_meta(x, w, b, *, stride=1, padding=0, dilation=1, groups=1,
                      transposed: bool = False, output_padding=0, nd: int = 0,
                      size: tuple | None = None) -> Plan:
    if size is not None:  # the gradient rules: normalised arguments, output size given
        xs, ws = x._a.shape, w._a.shape
        c = ws[1] * groups if transposed else ws[0] if xs[1] else 0
        return Plan(Out((xs[0], c, *size), x.dtype),
                    _geo_kw(stride, padding, dilation, groups, transposed, size),
                    common_device(x, w, b))
    try:
        key = (nd, x._a.shape, x.dtype, w._a.shape, w.dtype,
               None if b is None else (b._a.shape, b.dtype, b._a.__class__),
               stride if type(stride) is int else _int_key(stride),
               padding if type(padding) is int else _int_key(padding),
               dilation if type(dilation) is int else _int_key(dilation),
               groups if type(groups) is int else _int_key(groups), transposed,
               output_padding if type(output_padding) is int else _int_key(output_padding),
               x._a.__class__, w._a.__class__)
        plan = _plans.get(key)
    except (AttributeError, TypeError):  # not tensors, not plain ints: the checks say why
        key = plan = None
    if plan is None:
        if transposed:
            plan = _conv_t_plan(x, w, b, stride, padding, output_padding, groups, dilation, nd)
        else:
            plan = _conv_plan(x, w, b, stride, padding, dilation, groups, nd)
        if key is not None:
            memo(_plans, key, plan, 1024)
    return plan


def _conv_weight_meta(x, g, *, kernel: tuple, stride: tuple, padding: tuple, dilation: tuple,
                      groups: int) -> Plan:
    """The weight gradient (O, C/G, *kernel) of conv(x, W) for the output gradient g."""
    kw = {"kernel": kernel, "stride": stride, "padding": padding, "dilation": dilation,
          "groups": groups}
    return Plan(Out((g._a.shape[1], x._a.shape[1] // groups, *kernel), x.dtype), kw,
                common_device(x, g))


# -- unfold / fold ----------------------------------------------------------------------------

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


def blocks(size: tuple, kernel: tuple, dilation: tuple, padding: tuple, stride: tuple) -> tuple:
    """The number of sliding blocks per spatial dim."""
    return tuple((s + 2 * p - dl * (k - 1) - 1) // st + 1
                 for s, k, dl, p, st in zip(size, kernel, dilation, padding, stride))


def _block_kw(kernel, dilation, padding, stride, size) -> dict:
    return {"kernel": kernel, "dilation": dilation, "padding": padding, "stride": stride,
            "size": size}


def _im2col_meta(x, *, kernel_size, dilation=1, padding=0, stride=1) -> Plan:
    """unfold: (N, C, H, W) (or (C, H, W)) -> (N, C*kH*kW, L) (or (C*kH*kW, L))."""
    _check_tensor(x, "input", "unfold", 1)
    k, dl, p, s = (_pair(kernel_size, "kernel_size"), _pair(dilation, "dilation"),
                   _pair(padding, "padding"), _pair(stride, "stride"))
    _check_blocks(k, dl, p, s)
    shape = x._a.shape
    if len(shape) not in (3, 4) or any(n == 0 for n in shape[len(shape) - 3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {_sizes(x)}")
    size = tuple(shape[-2:])
    nb = blocks(size, k, dl, p, s)
    if any(n < 1 for n in nb):
        raise RuntimeError(f"Given input with spatial size {_tup(size)}, kernel_size={_tup(k)}, "
                           f"dilation={_tup(dl)}, padding={_tup(p)}, calculated shape of the "
                           f"array of sliding blocks as {_tup(nb)}, but its components must "
                           "be at least one.")
    d = x.dtype
    if d.category == 1:
        raise NotImplementedError(f"\"im2col_out_cpu\" not implemented for '{d.scalar_name}'")
    out = shape[:-3] + (shape[-3] * k[0] * k[1], nb[0] * nb[1])
    return Plan(Out(out, d), _block_kw(k, dl, p, s, size), device_of(x))


def _col2im_meta(x, *, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Plan:
    """fold: (N, C*kH*kW, L) (or (C*kH*kW, L)) -> (N, C, *output_size) (or (C, ...))."""
    _check_tensor(x, "input", "fold", 1)
    size, k = _pair(output_size, "output_size"), _pair(kernel_size, "kernel_size")
    dl, p, s = _pair(dilation, "dilation"), _pair(padding, "padding"), _pair(stride, "stride")
    _check_blocks(k, dl, p, s)
    shape = x._a.shape
    if len(shape) not in (2, 3) or any(n == 0 for n in shape[-2:]):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch "
                           f"size and non-zero dimensions for input, but got: {_sizes(x)}")
    ck, ll = shape[-2:]  # torch checks after adding the batch dim: dims 1 and 2
    if ck % (k[0] * k[1]):
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={ck} and "
                           f"kernel_size={_tup(k)}.")
    nb = blocks(size, k, dl, p, s)
    if any(n < 1 for n in nb) or nb[0] * nb[1] != ll:
        raise RuntimeError(f"Given output_size={_tup(size)}, kernel_size={_tup(k)}, "
                           f"dilation={_tup(dl)}, padding={_tup(p)}, stride={_tup(s)}, expected "
                           f"size of input's dimension 2 to match the calculated number of "
                           f"sliding blocks {nb[0]} * {nb[1]} = {nb[0] * nb[1]}, "
                           f"but got input.size(2)={ll}.")
    d = x.dtype
    if d.category == 1:
        raise NotImplementedError(f"\"col2im_out_cpu\" not implemented for '{d.scalar_name}'")
    out = shape[:-2] + (ck // (k[0] * k[1]), *size)
    return Plan(Out(out, d), _block_kw(k, dl, p, s, size), device_of(x))


# (input, weight, bias | None) -> output {stride, padding, dilation, groups, transposed, size}
convolution_op = op("convolution", "extern", _convolution_meta, lazy(_CK, "convolution_cpu"))
# (input, grad_output) -> grad_weight {kernel, stride, padding, dilation, groups}
conv_weight_op = op("convolution_backward_weight", "extern", _conv_weight_meta,
                    lazy(_CK, "conv_weight_cpu"))
# (input,) -> (N, C*K, L) / (N, C*K, L) -> (N, C, H, W) {kernel, dilation, padding, stride, size}
im2col_op = op("im2col", "extern", _im2col_meta, lazy(_CK, "im2col_cpu"))
col2im_op = op("col2im", "extern", _col2im_meta, lazy(_CK, "col2im_cpu"))


# -- gradient rules: vjp(node, grad) in jtorch ops -------------------------------------------

def _geo(kw: dict) -> dict:
    return {"stride": kw["stride"], "padding": kw["padding"], "dilation": kw["dilation"],
            "groups": kw["groups"]}


def _convolution_vjp(c, g):
    x, w, _ = c.args
    need, kw = c.needs, c.kw
    tr = kw["transposed"]
    xshape = c._meta[0][0]
    if not tr and xshape[1] == 0:  # no input channels: the output depends on nothing
        return tuple(g.new_zeros(m[0]) if n else None for n, m in zip(need, c._meta))
    if x.dtype.is_complex:  # the adjoint of a complex linear map uses the conjugate
        x, w = x.conj(), w.conj()
    gx = gw = gb = None
    if need[0]:
        gx = dispatch.call(convolution_op, g, w, None, transposed=not tr, size=xshape[2:],
                           **_geo(kw))
    if need[1]:
        a, b = (g, x) if tr else (x, g)
        gw = dispatch.call(conv_weight_op, a, b, kernel=tuple(w._a.shape[2:]), **_geo(kw))
    if need[2]:
        gb = g.sum([0, *range(2, g.dim())])  # in stages, no transposing copy of g (reduce.py)
    return gx, gw, gb


def _conv_weight_vjp(c, g):
    x, go = c.args
    need, kw = c.needs, c.kw
    if x.dtype.is_complex:
        x, go = x.conj(), go.conj()
    dx = dgo = None
    if need[0]:
        dx = dispatch.call(convolution_op, go, g, None, transposed=True,
                           size=tuple(x._a.shape[2:]), **_geo(kw))
    if need[1]:
        dgo = dispatch.call(convolution_op, x, g, None, transposed=False,
                            size=tuple(go._a.shape[2:]), **_geo(kw))
    return dx, dgo


def _im2col_vjp(c, g):
    kw = c.kw
    return (dispatch.call(col2im_op, g, output_size=kw["size"], kernel_size=kw["kernel"],
                          dilation=kw["dilation"], padding=kw["padding"], stride=kw["stride"]),)


def _col2im_vjp(c, g):
    kw = c.kw
    return (dispatch.call(im2col_op, g, kernel_size=kw["kernel"], dilation=kw["dilation"],
                          padding=kw["padding"], stride=kw["stride"]),)


defvjp(convolution_op, _convolution_vjp, "01", name="ConvolutionBackward0")
defvjp(conv_weight_op, _conv_weight_vjp, "01", name="ConvolutionBackwardBackward0")
defvjp(im2col_op, _im2col_vjp, "", name="Im2ColBackward0")
defvjp(col2im_op, _col2im_vjp, "", name="Col2ImBackward0")
