"""softmax and log_softmax: torch-named functions and Tensor methods, and the gradient call
``softmax_backward`` (torch's ``_softmax_backward_data``).

Each is a call of its OpDef (``kernels/defs/softmax.py``) through ``dispatch.call``.

>>> import jtorch as torch
>>> torch.softmax(torch.tensor([0.0, 0.0]), dim=0)
tensor([0.5000, 0.5000])

``axis=`` and ``keepdims=`` are accepted for ``dim`` and ``keepdim``, as torch's argument parser
accepts NumPy's names.
"""

from __future__ import annotations

from .. import dispatch
from ..amp import state as _amp
from ..kernels.defs import softmax as D
from ..tensor import Tensor

__all__ = ["log_softmax", "softmax"]


def softmax(input, dim=None, dtype=None, *, axis=None):
    """torch.softmax: exp(x - max) / sum, one fused pass per row (vectorised fastmath exp).

    >>> import jtorch as torch
    >>> torch.softmax(torch.tensor([0.0, 0.0]), dim=0)
    tensor([0.5000, 0.5000])
    """
    if axis is not None:
        dim = axis
    if _amp.on and dtype is None:  # (CUDA autocast runs it in float32)
        input, = _amp.fp32_cuda(input)
    return dispatch.call(D.softmax_op, input, dim=dim, dtype=dtype)


def log_softmax(input, dim=None, dtype=None, *, axis=None):
    """torch.log_softmax: x - max - log(sum(exp(x - max))), fused per row."""
    if axis is not None:
        dim = axis
    if _amp.on and dtype is None:
        input, = _amp.fp32_cuda(input)
    return dispatch.call(D.log_softmax_op, input, dim=dim, dtype=dtype)


def softmax_backward(g: Tensor, y: Tensor, dim: int, log: bool) -> Tensor:
    """The gradient of softmax (``log``: log_softmax) at output ``y`` for the output gradient
    ``g``: one compiled pass per row where both are C-contiguous rows of one float dtype over
    the last dim, else composed of pointwise kernels and a sum."""
    return dispatch.call(D.log_softmax_backward_op if log else D.softmax_backward_op, g, y,
                         dim=dim)
