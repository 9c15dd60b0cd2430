"""Convolutions and sliding-block ops: conv1d/2d/3d, conv_transpose1d/2d/3d, unfold, fold.

Every convolution is one ``convolution`` OpDef call (``kernels/defs/conv.py``): its meta rule
runs torch's ``_convolution`` checks (its messages and their order) and keeps the checked
geometry per call signature; its kernel runs im2col + GEMMs (BLAS inside Numba), per image on
Numba's threads or as one batched GEMM (``kernels/cpu/conv.py`` says when). conv1d and conv2d
run as 3-D convolutions over size-1 leading spatial dims; unbatched inputs are convolved as a
batch of one, as torch does. unfold and fold are the ``im2col`` and ``col2im`` OpDefs (batched
or not). float16 is computed in float32 and rounded once.

>>> import jtorch
>>> import jtorch.nn.functional as F
>>> F.conv1d(jtorch.ones(1, 2, 5), jtorch.ones(3, 2, 3)).shape
torch.Size([1, 3, 3])
"""

from __future__ import annotations

from .. import dispatch
from ..amp import state as _amp
from ..kernels.defs import conv as D
from ..kernels.defs.conv import _plans  # noqa: F401  (the memoised plans; tests read them)
from ..tensor import Tensor

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "fold", "unfold"]


def _conv_t(nd: int, input, weight, bias, stride, padding, output_padding, groups,
            dilation) -> Tensor:
    """One transposed ``convolution`` call; an unbatched input as a batch of one."""
    if _amp.on:
        input, weight, bias = _amp.lower(input, weight, bias)
    if isinstance(input, Tensor) and input._a.ndim == nd + 1:
        return _conv_t(nd, input.unsqueeze(0), weight, bias, stride, padding, output_padding,
                       groups, dilation).squeeze(0)
    return dispatch.call(D.convolution_op, input, weight, bias, stride=stride, padding=padding,
                         output_padding=output_padding, groups=groups, dilation=dilation,
                         transposed=True, nd=nd)


# -- public functions -------------------------------------------------------------------------

def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """1-D convolution over (N, C, L) or unbatched (C, L) input; ``padding`` may be 'same' or
    'valid'.

    >>> F.conv1d(jtorch.ones(20, 16, 50), jtorch.ones(33, 16, 3), stride=2).shape
    torch.Size([20, 33, 24])
    """
    if _amp.on:
        input, weight, bias = _amp.lower(input, weight, bias)
    if isinstance(input, Tensor) and input._a.ndim == 2:  # unbatched: a batch of one
        return conv1d(input.unsqueeze(0), weight, bias, stride, padding, dilation,
                      groups).squeeze(0)
    return dispatch.call(D.convolution_op, input, weight, bias, stride=stride, padding=padding,
                         dilation=dilation, groups=groups, nd=1)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """2-D convolution over (N, C, H, W) or unbatched (C, H, W) input.

    >>> F.conv2d(jtorch.ones(1, 3, 8, 8), jtorch.ones(4, 3, 3, 3), padding=1).shape
    torch.Size([1, 4, 8, 8])
    """
    if _amp.on:
        input, weight, bias = _amp.lower(input, weight, bias)
    if isinstance(input, Tensor) and input._a.ndim == 3:  # unbatched: a batch of one
        return conv2d(input.unsqueeze(0), weight, bias, stride, padding, dilation,
                      groups).squeeze(0)
    return dispatch.call(D.convolution_op, input, weight, bias, stride=stride, padding=padding,
                         dilation=dilation, groups=groups, nd=2)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """3-D convolution over (N, C, D, H, W) or unbatched (C, D, H, W) input.

    >>> F.conv3d(jtorch.ones(1, 2, 4, 4, 4), jtorch.ones(3, 2, 3, 3, 3)).shape
    torch.Size([1, 3, 2, 2, 2])
    """
    if _amp.on:
        input, weight, bias = _amp.lower(input, weight, bias)
    if isinstance(input, Tensor) and input._a.ndim == 4:  # unbatched: a batch of one
        return conv3d(input.unsqueeze(0), weight, bias, stride, padding, dilation,
                      groups).squeeze(0)
    return dispatch.call(D.convolution_op, input, weight, bias, stride=stride, padding=padding,
                         dilation=dilation, groups=groups, nd=3)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The adjoint of conv1d (weight (C_in, C_out/groups, k)); output_padding adds to one side.

    >>> F.conv_transpose1d(jtorch.ones(1, 4, 5), jtorch.ones(4, 3, 3), stride=2).shape
    torch.Size([1, 3, 11])
    """
    return _conv_t(1, input, weight, bias, stride, padding, output_padding, groups,
                   dilation)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The adjoint of conv2d (weight (C_in, C_out/groups, kH, kW)).

    >>> F.conv_transpose2d(jtorch.ones(1, 4, 5, 5), jtorch.ones(4, 3, 3, 3), stride=2).shape
    torch.Size([1, 3, 11, 11])
    """
    return _conv_t(2, input, weight, bias, stride, padding, output_padding, groups,
                   dilation)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """The adjoint of conv3d (weight (C_in, C_out/groups, kD, kH, kW)).

    >>> F.conv_transpose3d(jtorch.ones(1, 4, 2, 2, 2), jtorch.ones(4, 3, 2, 2, 2)).shape
    torch.Size([1, 3, 3, 3, 3])
    """
    return _conv_t(3, input, weight, bias, stride, padding, output_padding, groups,
                   dilation)


def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sliding blocks of a (N, C, H, W) (or (C, H, W)) tensor as columns (im2col):
    (N, C*kH*kW, L).

    >>> F.unfold(jtorch.ones(2, 3, 5, 5), 2).shape
    torch.Size([2, 12, 16])
    """
    return dispatch.call(D.im2col_op, input, kernel_size=kernel_size, dilation=dilation,
                         padding=padding, stride=stride)


def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """Sums sliding-block columns (N, C*kH*kW, L) back into (N, C, *output_size) (col2im, the
    adjoint of unfold).

    >>> F.fold(jtorch.ones(1, 12, 16), (5, 5), 2).shape
    torch.Size([1, 3, 5, 5])
    """
    return dispatch.call(D.col2im_op, input, output_size=output_size, kernel_size=kernel_size,
                         dilation=dilation, padding=padding, stride=stride)
