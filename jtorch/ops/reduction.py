"""Reductions and scans: torch-named functions and Tensor methods.

Each is a call of its OpDef (``kernels/defs/reduction.py``, ``scan.py``) through
``dispatch.call``: the meta rule wraps the dims, applies the dtype rule and torch's checks,
the kernel entry runs the generated loops; ``out=`` tensors are written by
``dispatch.copy_into``. The sort family lives in ``ops/sort.py``, softmax in
``ops/softmax.py``.

>>> import jtorch as torch
>>> torch.tensor([[1.0, 2.0], [3.0, 4.0]]).sum(dim=1)
tensor([3., 7.])

``axis=`` and ``keepdims=`` are accepted for ``dim`` and ``keepdim``, as torch's argument parser
accepts NumPy's names.
"""

from __future__ import annotations

import collections

from .. import dispatch
from ..amp import state as _amp
from ..kernels.defs import binary as B
from ..kernels.defs import reduction as D
from ..kernels.defs import scan as S
from ..tensor import Tensor
from .softmax import log_softmax, softmax, softmax_backward  # noqa: F401  (their old home)

__all__ = [
    "all",
    "amax",
    "amin",
    "aminmax",
    "any",
    "argmax",
    "argmin",
    "count_nonzero",
    "cummax",
    "cummin",
    "cumprod",
    "cumsum",
    "logcumsumexp",
    "logsumexp",
    "max",
    "mean",
    "min",
    "nanmean",
    "nansum",
    "norm",
    "prod",
    "return_types",
    "std",
    "std_mean",
    "sum",
    "var",
    "var_mean",
]

# -- return types --------------------------------------------------------------------------

def _return_type(name: str, fields: tuple):
    cls = collections.namedtuple(name, fields)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    cls.__repr__ = __repr__
    cls.__module__ = "torch.return_types"
    return cls


class return_types:
    """Named-tuple result types of the value-and-index ops (torch.return_types)."""

    max = _return_type("max", ("values", "indices"))
    min = _return_type("min", ("values", "indices"))
    aminmax = _return_type("aminmax", ("min", "max"))
    cummax = _return_type("cummax", ("values", "indices"))
    cummin = _return_type("cummin", ("values", "indices"))
    median = _return_type("median", ("values", "indices"))
    nanmedian = _return_type("nanmedian", ("values", "indices"))
    mode = _return_type("mode", ("values", "indices"))
    sort = _return_type("sort", ("values", "indices"))
    topk = _return_type("topk", ("values", "indices"))
    kthvalue = _return_type("kthvalue", ("values", "indices"))


def _check(x, name: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def pair_out(rt, res: tuple, out):
    """A (values, indices) result as the named tuple ``rt``, written into ``out`` if given."""
    if out is None:
        return rt(*res)
    dispatch.copy_into(out[0], res[0])
    dispatch.copy_into(out[1], res[1])
    return rt(out[0], out[1])


# -- simple reductions ---------------------------------------------------------------------

def sum(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None,
           keepdims=None):
    """torch.sum: ints and bool sum to int64; float32 accumulates in float32 blocks whose
    sums are added in float64 (torch's cascade-sum accuracy).

    >>> import jtorch as torch
    >>> torch.sum(torch.tensor([[1, 2], [3, 4]]), dim=0)
    tensor([4, 6])
    """
    if axis is not None and dim is None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    if _amp.on and dtype is None and out is None:  # (CUDA autocast sums in float32)
        input, = _amp.fp32_cuda(input)
    if dim is None and not keepdim and dtype is None:  # the commonest call: no keywords to pass
        res = dispatch.call(D.sum_op, input)
    else:
        res = dispatch.call(D.sum_op, input, dim=dim, keepdim=keepdim, dtype=dtype)
    return res if out is None else dispatch.copy_into(out, res)


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None, keepdims=None):
    """torch.nansum: sum treating nan as zero."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    res = dispatch.call(D.nansum_op, input, dim=dim, keepdim=keepdim, dtype=dtype)
    return res if out is None else dispatch.copy_into(out, res)


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None,
            keepdims=None):
    """torch.mean: floating point and complex only (or with a floating ``dtype``)."""
    if axis is not None and dim is None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    if dim is None and not keepdim and dtype is None:
        res = dispatch.call(D.mean_op, input)
    else:
        res = dispatch.call(D.mean_op, input, dim=dim, keepdim=keepdim, dtype=dtype)
    return res if out is None else dispatch.copy_into(out, res)


@_amp.fp32_op
def prod(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None, keepdims=None):
    """torch.prod over all elements or one dim; ints and bool multiply in int64."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"prod() received an invalid combination of arguments - got (Tensor, "
                        f"{type(dim).__name__}), but expected one of:\n * (Tensor input, *, "
                        f"torch.dtype dtype = None)\n * (Tensor input, int dim, bool keepdim = "
                        f"False, *, torch.dtype dtype = None, Tensor out = None)\n")
    res = dispatch.call(D.prod_op, input, dim=dim, keepdim=keepdim, dtype=dtype)
    return res if out is None else dispatch.copy_into(out, res)


def amax(input, dim=(), keepdim=False, *, out=None, axis=None, keepdims=None):
    """torch.amax: the largest value over dims (nan if any is nan)."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    res = dispatch.call(D.amax_op, input, dim=dim, keepdim=keepdim)
    return res if out is None else dispatch.copy_into(out, res)


def amin(input, dim=(), keepdim=False, *, out=None, axis=None, keepdims=None):
    """torch.amin: the smallest value over dims (nan if any is nan)."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    res = dispatch.call(D.amin_op, input, dim=dim, keepdim=keepdim)
    return res if out is None else dispatch.copy_into(out, res)


def aminmax(input, *, dim=None, keepdim=False, out=None, axis=None, keepdims=None):
    """torch.aminmax: (min, max) over all elements or one dim."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return pair_out(return_types.aminmax, dispatch.call(D.aminmax_op, input, dim=dim, keepdim=keepdim),
                    out)


def all(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """torch.all: True where every element is nonzero (uint8 input gives uint8)."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    res = dispatch.call(D.all_op, input, dim=dim, keepdim=keepdim)
    return res if out is None else dispatch.copy_into(out, res)


def any(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """torch.any: True where some element is nonzero (uint8 input gives uint8)."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    res = dispatch.call(D.any_op, input, dim=dim, keepdim=keepdim)
    return res if out is None else dispatch.copy_into(out, res)


def count_nonzero(input, dim=None, *, axis=None):
    """torch.count_nonzero: int64 counts over all elements or the given dims."""
    if axis is not None:
        dim = axis
    return dispatch.call(D.count_nonzero_op, input, dim=dim)


# -- value-and-index reductions ------------------------------------------------------------

def argmax(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """torch.argmax: index of the first maximum (of the first nan if any) along ``dim``, or
    into the flattened input when ``dim`` is None."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return dispatch.call(D.argmax_op, input, dim=dim, keepdim=keepdim)


def argmin(input, dim=None, keepdim=False, *, axis=None, keepdims=None):
    """torch.argmin: index of the first minimum (of the first nan if any)."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return dispatch.call(D.argmin_op, input, dim=dim, keepdim=keepdim)


def _max_min(name: str, full_op, dim_op, binary_op, rt, input, dim, keepdim, out):
    if isinstance(dim, Tensor):  # max(x, other): torch.maximum
        _check(input, name)
        return dispatch.pointwise(binary_op, (input, dim), out)
    if dim is None:
        if keepdim:
            raise TypeError(f"{name}() received an invalid combination of arguments - got "
                            f"(Tensor, keepdim=bool)")
        res = dispatch.call(full_op, input, fn=name)
        return res if out is None else dispatch.copy_into(out, res)
    return pair_out(rt, dispatch.call(dim_op, input, dim=dim, keepdim=keepdim), out)


def max(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """torch.max: the maximum value; with ``dim`` a (values, indices) named tuple (first index
    of ties); with a tensor second argument, torch.maximum."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return _max_min("max", D.amax_op, D.max_op, B.maximum_op, return_types.max, input, dim,
                    keepdim, out)


def min(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """torch.min: the minimum value; with ``dim`` a (values, indices) named tuple."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return _max_min("min", D.amin_op, D.min_op, B.minimum_op, return_types.min, input, dim,
                    keepdim, out)


# -- statistics ----------------------------------------------------------------------------

def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None, axis=None, keepdims=None):
    """torch.var: sum of squared deviations / max(0, N - correction); correction=1 default
    (``unbiased=False`` means 0)."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    res = dispatch.call(D.var_op, input, dim=dim, unbiased=unbiased, keepdim=keepdim,
                correction=correction)
    return res if out is None else dispatch.copy_into(out, res)


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None, axis=None, keepdims=None):
    """torch.std: sqrt of var."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    res = dispatch.call(D.std_op, input, dim=dim, unbiased=unbiased, keepdim=keepdim,
                correction=correction)
    return res if out is None else dispatch.copy_into(out, res)


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):
    """torch.var_mean: (var, mean) as a tuple."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return tuple(dispatch.call(D.var_mean_op, input, dim=dim, unbiased=unbiased, keepdim=keepdim,
                       correction=correction))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None, keepdims=None):
    """torch.std_mean: (std, mean) as a tuple."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    return tuple(dispatch.call(D.std_mean_op, input, dim=dim, unbiased=unbiased, keepdim=keepdim,
                       correction=correction))


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None, axis=None, keepdims=None):
    """torch.nanmean: mean over the non-nan elements."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    res = dispatch.call(D.nanmean_op, input, dim=dim, keepdim=keepdim, dtype=dtype)
    return res if out is None else dispatch.copy_into(out, res)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """torch.linalg.vector_norm: ord 2, 1, inf, -inf, 0 and any other real p."""
    res = dispatch.call(D.norm_op, x, ord=ord, dim=dim, keepdim=keepdim, dtype=dtype)
    return res if out is None else dispatch.copy_into(out, res)


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: vector p-norms over all elements or ``dim`` ('fro' is the 2-norm)."""
    _check(input, "norm")
    if _amp.on and dtype is None and out is None:  # (CUDA autocast: float32)
        input, = _amp.fp32_cuda(input)
    if p == "fro" or p is None:
        p = 2
    elif isinstance(p, str):
        raise NotImplementedError(f"norm(p={p!r}) is not implemented in jtorch")
    return vector_norm(input, p, dim, keepdim, dtype=dtype, out=out)


def logsumexp(input, dim=None, keepdim=False, *, out=None, axis=None, keepdims=None):
    """torch.logsumexp: max + log(sum(exp(x - max))) (an infinite max counts as 0); integer
    inputs give the default float dtype."""
    if axis is not None:
        dim = axis
    if keepdims is not None:
        keepdim = keepdims
    res = dispatch.call(D.logsumexp_op, input, dim=dim, keepdim=keepdim)
    return res if out is None else dispatch.copy_into(out, res)


# -- scans ---------------------------------------------------------------------------------

def cumsum(input, dim=None, *, dtype=None, out=None, axis=None):
    """torch.cumsum: running sums along ``dim`` (float32 accumulates in float64, like torch)."""
    if axis is not None:
        dim = axis
    if _amp.on and dtype is None and out is None:  # (CUDA autocast: float32)
        input, = _amp.fp32_cuda(input)
    res = dispatch.call(S.cumsum_op, input, dim=dim, dtype=dtype)
    return res if out is None else dispatch.copy_into(out, res)


def cumprod(input, dim=None, *, dtype=None, out=None, axis=None):
    """torch.cumprod: running products along ``dim``."""
    if axis is not None:
        dim = axis
    if _amp.on and dtype is None and out is None:  # (CUDA autocast: float32)
        input, = _amp.fp32_cuda(input)
    res = dispatch.call(S.cumprod_op, input, dim=dim, dtype=dtype)
    return res if out is None else dispatch.copy_into(out, res)


def logcumsumexp(input, dim=None, *, out=None, axis=None):
    """torch.logcumsumexp: running log(sum(exp)) along ``dim`` (floating point only)."""
    if axis is not None:
        dim = axis
    res = dispatch.call(S.logcumsumexp_op, input, dim=dim)
    return res if out is None else dispatch.copy_into(out, res)


def cummax(input, dim=None, *, out=None, axis=None):
    """torch.cummax: running maximum and the index where it was taken (ties and nan take the
    later index)."""
    if axis is not None:
        dim = axis
    return pair_out(return_types.cummax, dispatch.call(S.cummax_op, input, dim=dim), out)


def cummin(input, dim=None, *, out=None, axis=None):
    """torch.cummin: running minimum and its index."""
    if axis is not None:
        dim = axis
    return pair_out(return_types.cummin, dispatch.call(S.cummin_op, input, dim=dim), out)


def _scan_inplace(fn):
    def inplace(self, dim=None, *, dtype=None, axis=None):
        from .conversion import copy_

        dim = dim if axis is None else axis

        return copy_(self, fn(self, dim, dtype=dtype))

    return inplace
