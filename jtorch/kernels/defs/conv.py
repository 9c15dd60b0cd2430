"""Convolution: the OpDefs every conv, transposed conv, unfold and fold call lowers to.

``convolution`` (input, weight, bias) runs ``kernels/cpu/conv`` (im2col + one batched GEMM,
or GEMM + col2im when ``transposed``); its kwargs are the per-dim ``stride``, ``padding`` (the
leading pad; the trailing one is implied by ``size``, which lets 'same' pad asymmetrically),
``dilation``, ``groups``, ``transposed`` and ``size`` (the output's spatial size).
Gradients are convolutions again: the input gradient of a convolution is the transposed
convolution of the output gradient with the same weight (and vice versa), the weight gradient
is ``convolution_backward_weight`` (one GEMM against the input's columns), whose own gradients
are convolutions, so double backward needs no further rule. ``im2col``/``col2im`` (unfold and
fold) are each other's adjoints.
"""

from __future__ import annotations

from ..cpu import conv as _ck
from ..registry import defvjp, extern

convolution_op = extern("convolution", impl=_ck.conv_forward)  # (input, weight, bias)
conv_weight_op = extern("convolution_backward_weight", impl=_ck.conv_weight)  # (input, grad)
im2col_op = extern("im2col", impl=_ck.unfold)  # (input,) -> (N, C*K, L)
col2im_op = extern("col2im", impl=_ck.fold)  # (input,) -> (N, C, H, W)


def _geo(kw: dict) -> dict:
    return {k: kw[k] for k in ("stride", "padding", "dilation", "groups")}


def _space(t) -> tuple:
    return tuple(t._a.shape[2:])


# -- gradient rules: vjp(node, grad) in jtorch ops -------------------------------------------

def _convolution_vjp(c, g):
    from ...ops import conv as C

    x, w, _ = c.args
    need, kw = c.needs, c.kw
    if x.dtype.is_complex:  # the adjoint of a complex linear map uses the conjugate
        x, w = x.conj(), w.conj()
    tr = kw["transposed"]
    gx = gw = gb = None
    if need[0]:
        gx = C._convolution(g, w, None, transposed=not tr, size=_space(x), **_geo(kw))
    if need[1]:
        a, b = (g, x) if tr else (x, g)
        gw = C._conv_weight(a, b, tuple(w._a.shape[2:]), **_geo(kw))
    if need[2]:
        gb = g.flatten(2).sum(2).sum(0)  # trailing dims first: no transposing copy of g
    return gx, gw, gb


def _conv_weight_vjp(c, g):
    from ...ops import conv as C

    x, go = c.args
    need, kw = c.needs, c.kw
    if x.dtype.is_complex:
        x, go = x.conj(), go.conj()
    dx = dgo = None
    if need[0]:
        dx = C._convolution(go, g, None, transposed=True, size=_space(x), **_geo(kw))
    if need[1]:
        dgo = C._convolution(x, g, None, transposed=False, size=_space(go), **_geo(kw))
    return dx, dgo


def _im2col_vjp(c, g):
    from ...ops import conv as C

    kw = c.kw
    return (C._col2im(g, kw["size"], kw["kernel"], kw["dilation"], kw["padding"], kw["stride"]),)


def _col2im_vjp(c, g):
    from ...ops import conv as C

    kw = c.kw
    return (C._im2col(g, kw["kernel"], kw["dilation"], kw["padding"], kw["stride"]),)


defvjp(convolution_op, _convolution_vjp, "01", name="ConvolutionBackward0")
defvjp(conv_weight_op, _conv_weight_vjp, "01", name="ConvolutionBackwardBackward0")
defvjp(im2col_op, _im2col_vjp, "", name="Im2ColBackward0")
defvjp(col2im_op, _col2im_vjp, "", name="Col2ImBackward0")
