"""Numeric utilities composed of registry ops: differences and integrals (diff, trapezoid),
statistics (cov, corrcoef), binning (bucketize, searchsorted, bincount, histc), scatters into
views (diagonal_scatter, ...), window functions, and small pointwise helpers (ldexp, angle).

Loops here run over dims or polynomial orders, never over elements, so every path (CPU,
meta, autograd) is the ops' own.

>>> import jtorch as torch
>>> torch.diff(torch.tensor([1, 4, 9]))
tensor([3, 5])
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import dispatch
from .. import dtypes as _dt
from ..amp import state as _amp
from ..kernels.defs import sort as _sort_defs
from ..tensor import Tensor
from . import creation, pointwise, views
from .extras import _into

__all__ = [
    "angle",
    "as_strided_scatter",
    "bartlett_window",
    "bincount",
    "blackman_window",
    "bucketize",
    "corrcoef",
    "cov",
    "cross",
    "cumulative_trapezoid",
    "diagonal_scatter",
    "diff",
    "dist",
    "hamming_window",
    "hann_window",
    "histc",
    "index_reduce",
    "isin",
    "isreal",
    "kaiser_window",
    "ldexp",
    "ldexp_",
    "nanquantile",
    "quantile",
    "renorm",
    "searchsorted",
    "select_scatter",
    "slice_scatter",
    "trapezoid",
    "trapz",
    "unravel_index",
    "vander",
]


def _wrap(dim: int, ndim: int) -> int:
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


# -- quantiles -----------------------------------------------------------------------------------

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input: Tensor, q, dim, keepdim: bool, interpolation: str, out, ignore_nan: bool,
              name: str) -> Tensor:
    """torch's quantile_compute: sort along ``dim`` (NaN last), ranks ``q * (n - 1)`` in the
    input's dtype (a slice holding NaN ranks its last element; nanquantile counts only the
    non-NaN ones), rounded per ``interpolation``, then gather and lerp."""
    if input.dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        scalar_q = q.ndim == 0
    else:
        q = float(q)
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
        scalar_q = True
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint "
                           f"or nearest, but got {interpolation}")
    if dim is None:
        x = input.reshape(-1)
    else:
        dim = _wrap(dim, input.ndim)
        x = input.reshape(1) if input.ndim == 0 else input.movedim(dim, -1)
    if x.shape[-1] == 0:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    if isinstance(q, Tensor):
        if q.numel() and not bool(((q >= 0) & (q <= 1)).all()):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
        qt = q.reshape(-1)
    else:
        qt = creation.tensor([q], dtype=input.dtype, device=input.device)
    srt = x.sort(-1)[0]
    if ignore_nan:
        ranks = qt * (srt.isnan().logical_not().sum(-1, keepdim=True) - 1)
        ranks = ranks.masked_fill(ranks < 0, 0)
    else:
        last = srt.shape[-1] - 1
        ranks = (qt * last).expand(*srt.shape[:-1], qt.shape[0])
        ranks = ranks.masked_fill(srt.isnan().any(-1, keepdim=True), last)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.long()
    res = srt.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        weights = creation.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        res = res.lerp(srt.gather(-1, ranks.ceil().long()), weights)
    if keepdim:  # the reduced dims as size 1, in place of the sorted one
        if dim is None:
            res = res.reshape(*srt.shape[:-1], *([1] * input.ndim), qt.shape[0])
        elif input.ndim:
            res = res.unsqueeze(-2).movedim(-2, dim)
    res = res.squeeze(-1) if scalar_q else res.movedim(-1, 0)
    return _into(out, res)


@_amp.fp32_op
def quantile(input: Tensor, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear",
             out=None, axis=None, keepdims=None) -> Tensor:
    """The q-th quantiles of each slice along ``dim`` (of all elements for None); NaN where a
    slice holds one."""
    return _quantile(input, q, dim if axis is None else axis,
                     keepdim if keepdims is None else keepdims, interpolation, out, False,
                     "quantile")


@_amp.fp32_op
def nanquantile(input: Tensor, q, dim=None, keepdim: bool = False, *,
                interpolation: str = "linear", out=None, axis=None, keepdims=None) -> Tensor:
    """quantile ignoring NaN (NaN only where a slice is all NaN)."""
    return _quantile(input, q, dim if axis is None else axis,
                     keepdim if keepdims is None else keepdims, interpolation, out, True,
                     "quantile")  # (torch's messages name quantile for both)


# -- differences, products, integrals ------------------------------------------------------------

def diff(input: Tensor, n: int = 1, dim: int = -1, prepend=None, append=None, *, out=None,
         axis=None) -> Tensor:
    """The n-th forward difference along ``dim`` (bool inputs: logical xor, as torch)."""
    dim = dim if axis is None else axis
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    dim = _wrap(dim, input.ndim)
    parts = [t for t in (prepend, input, append) if t is not None]
    x = views.cat(parts, dim) if len(parts) > 1 else input
    for _ in range(n):
        length = x.shape[dim]
        if length == 0:
            break
        hi, lo = x.narrow(dim, 1, length - 1), x.narrow(dim, 0, length - 1)
        x = pointwise.ne(hi, lo) if x.dtype is _dt.bool else hi - lo
    return _into(out, x)


def cross(input: Tensor, other: Tensor, dim=None, *, out=None, axis=None) -> Tensor:
    """The 3-vector cross product along ``dim`` (default: the first dim of size 3)."""
    if _amp.on and out is None:  # CUDA autocast's promote list (torch.cross, not linalg.cross)
        input, other = _amp.promote("cuda", input, other)
    return cross_product(input, other, dim, out=out, axis=axis)


def cross_product(input: Tensor, other: Tensor, dim=None, *, out=None, axis=None) -> Tensor:
    """``cross`` without autocast's casts (``linalg.cross``)."""
    dim = dim if axis is None else axis
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    shape = views.broadcast_shapes(input.shape, other.shape)
    if dim is None:
        dim = next((d for d, s in enumerate(input.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    dim = _wrap(dim, len(shape))
    if input.shape[dim] != 3 or other.shape[dim] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{input.shape[dim]} and {other.shape[dim]}")
    a, b = input.expand(shape), other.expand(shape)
    res = a.roll(-1, dim) * b.roll(-2, dim) - a.roll(-2, dim) * b.roll(-1, dim)
    return _into(out, res)


def cov(input: Tensor, *, correction: int = 1, fweights=None, aweights=None) -> Tensor:
    """The covariance of the variables in the rows of ``input`` (observations in columns)."""
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    obs = input if input.ndim == 2 else input.reshape(1, -1)
    n_obs = obs.shape[1]
    w = None
    if fweights is not None:
        if fweights.dtype.is_floating_point or fweights.dtype.is_complex:
            raise RuntimeError(f"cov(): expected fweights to have integral dtype but got "
                               f"fweights with {str(fweights.dtype).split('.')[-1].capitalize()} dtype")
        w = fweights
    if aweights is not None:
        if not aweights.dtype.is_floating_point:
            raise RuntimeError("cov(): expected aweights to have floating point dtype")
        w = aweights if w is None else w * aweights
    if w is None:
        w_sum = float(n_obs)
        avg = obs.mean(1) if obs.dtype.is_floating_point or obs.dtype.is_complex else \
            obs.to(_dt.get_default_dtype()).mean(1)
        norm = w_sum - correction
    else:
        w_sum = w.sum()
        avg = (obs * w).sum(1) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights).sum() / w_sum
    if not isinstance(norm, Tensor) and norm <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = 0.0
    elif isinstance(norm, Tensor):
        norm = norm.clamp_min(0)
    centered = obs - avg.unsqueeze(1)
    rhs = centered if w is None else centered * w
    c = centered.matmul(rhs.t().conj() if rhs.dtype.is_complex else rhs.t())
    return (c / norm).squeeze()


def corrcoef(input: Tensor) -> Tensor:
    """Pearson correlation coefficients of the rows of ``input``, clipped to [-1, 1]."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    return c if c.dtype.is_complex else c.clamp(-1, 1)


def _spacing(y: Tensor, x: Tensor, dim: int, fn: str) -> Tensor:
    if x.ndim == 1:
        if x.shape[0] != y.shape[dim]:
            raise RuntimeError(f"{fn}: There must be one `x` value for each sample point")
        x = x.reshape([-1 if d == dim else 1 for d in range(y.ndim)])
        return diff(x, dim=dim)
    return diff(x, dim=dim if dim - y.ndim >= -x.ndim else -1)


def trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1, axis=None) -> Tensor:
    """The trapezoid rule along ``dim``, with sample points ``x`` or a constant spacing ``dx``."""
    dim = dim if axis is None else axis
    if x is not None and dx is not None:
        raise TypeError("trapezoid() received an invalid combination of arguments")
    if y.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    dim = _wrap(dim, y.ndim)
    if isinstance(x, Tensor):
        if y.shape[dim] == 0:
            return y.sum(dim) * 0.0
        mid = y.narrow(dim, 1, y.shape[dim] - 1) + y.narrow(dim, 0, y.shape[dim] - 1)
        return (_spacing(y, x, dim, "trapezoid") * mid).sum(dim) / 2
    dx = 1 if dx is None else dx
    if y.shape[dim] == 0:
        return y.sum(dim) * dx * 0.0
    ends = y.select(dim, 0) + y.select(dim, -1)
    return (y.sum(dim) - ends * 0.5) * dx


def trapz(y: Tensor, x=None, *, dx=None, dim: int = -1, axis=None) -> Tensor:
    """An alias of trapezoid."""
    return trapezoid(y, x, dx=dx, dim=dim, axis=axis)


def cumulative_trapezoid(y: Tensor, x=None, *, dx=None, dim: int = -1, axis=None) -> Tensor:
    """The running trapezoid rule along ``dim`` (one element fewer than ``y`` there)."""
    dim = dim if axis is None else axis
    if y.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    dim = _wrap(dim, y.ndim)
    n = max(y.shape[dim] - 1, 0)
    mid = y.narrow(dim, 1, n) + y.narrow(dim, 0, n) if n else y.narrow(dim, 0, 0) * 1.0
    if isinstance(x, Tensor):
        return (_spacing(y, x, dim, "cumulative_trapezoid") * mid / 2).cumsum(dim)
    return (mid * ((1 if dx is None else dx) / 2)).cumsum(dim)


def vander(x: Tensor, N=None, increasing: bool = False) -> Tensor:
    """Columns are powers of ``x`` (decreasing unless ``increasing``)."""
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    dtype = _dt.promote_types(x.dtype, _dt.int64)
    ones = creation.ones(x.shape[0], 1, dtype=dtype, device=x.device)
    if n == 0:
        return ones[:, :0]
    res = views.cat([ones, x.to(dtype).unsqueeze(1).expand(x.shape[0], n - 1)], 1)[:, :n].cumprod(1)
    return res if increasing else res.flip(1)


# -- norms and predicates ----------------------------------------------------------------------

def dist(input: Tensor, other: Tensor, p=2) -> Tensor:
    """The p-norm of ``input - other``."""
    from ..linalg import vector_norm

    return vector_norm(input - other, p)


def renorm(input: Tensor, p, dim: int, maxnorm, *, out=None) -> Tensor:
    """Each slice along ``dim`` scaled so that its p-norm is at most ``maxnorm``."""
    from ..linalg import vector_norm

    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if not input.dtype.is_floating_point and not input.dtype.is_complex:
        raise RuntimeError(f'"renorm_cpu" not implemented for {_name(input.dtype)!r}')
    dim = _wrap(dim, input.ndim)
    dims = [d for d in range(input.ndim) if d != dim]
    norm = vector_norm(input, p, dims, keepdim=True) if dims else input.abs()
    factor = pointwise.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.0).to(input.dtype)
    return _into(out, input * factor)


def _renorm_(self: Tensor, p, dim: int, maxnorm) -> Tensor:
    return self.copy_(renorm(self, p, dim, maxnorm))


def isreal(input: Tensor) -> Tensor:
    """True where the imaginary part is 0 (everywhere for real dtypes)."""
    if input.dtype.is_complex:
        return input.imag == 0
    return creation.ones_like(input, dtype=_dt.bool)


def angle(input: Tensor, *, out=None) -> Tensor:
    """The argument of each element: pi for negative reals, 0 for the rest, nan kept."""
    if input.dtype.is_complex:
        return _into(out, pointwise.atan2(input.imag, input.real))
    x = input if input.dtype.is_floating_point else input.to(_dt.get_default_dtype())
    res = pointwise.where(x < 0, math.pi, 0.0).to(x.dtype)
    return _into(out, pointwise.where(x.isnan(), x, res))


def _name(dtype) -> str:
    return {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
            "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte",
            "bool": "Bool"}.get(str(dtype).split(".")[-1], str(dtype))


# -- membership and binning ----------------------------------------------------------------------

def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False) -> Tensor:
    """Whether each element of ``elements`` is in ``test_elements`` (either may be a number):
    a binary search of each element in the sorted test elements (memory of their sizes' sum)."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin() received an invalid combination of arguments - got (Number, Number)")
    ref = elements if isinstance(elements, Tensor) else test_elements
    if not isinstance(elements, Tensor):
        elements = creation.tensor(elements, device=ref.device)
    if not isinstance(test_elements, Tensor):
        test_elements = creation.tensor(test_elements, device=ref.device)
    d = _dt.promote_types(elements.dtype, test_elements.dtype)
    if d is _dt.bool or d.is_complex:
        raise RuntimeError(f"Unsupported input type encountered for isin(): {d.scalar_name}")
    e, t = elements.to(d), test_elements.reshape(-1).to(d)
    n = t.shape[0]
    if n == 0:
        hit = creation.zeros(e.shape, dtype=_dt.bool, device=e.device)
    else:
        srt = t.sort()[0]
        # NaN sorts last but breaks the search's order (nothing is >= NaN): search with NaN
        # read as +inf, then compare with the true values (NaN equals nothing)
        key = srt.masked_fill(srt.isnan(), math.inf) if d.is_floating_point else srt
        at = dispatch.call(_sort_defs.searchsorted_op, key, e.reshape(-1), right=False,
                           out_int32=False)
        hit = (srt.index_select(0, at.clamp(max=n - 1)) == e.reshape(-1)).reshape(e.shape)
    return hit.logical_not() if invert else hit


def searchsorted(sorted_sequence: Tensor, input, *, out_int32: bool = False, right: bool = False,
                 side=None, sorter=None, out=None) -> Tensor:
    """Insertion points of ``input`` in the last dim of ``sorted_sequence``."""
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but "
                               f"got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    scalar = not isinstance(input, Tensor)
    values = creation.tensor(input, device=sorted_sequence.device) if scalar else input
    if sorted_sequence.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    if sorted_sequence.ndim > 1 and (scalar or tuple(sorted_sequence.shape[:-1]) !=
                                     tuple(values.shape[:-1])):
        raise RuntimeError(
            f"torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 "
            f"dimensions of boundaries tensor and input value tensor must match, but we got "
            f"boundaries tensor {list(sorted_sequence.shape)} and input value tensor "
            f"{list(values.shape)}")
    if sorter is not None:
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    d = _dt.promote_types(sorted_sequence.dtype, values.dtype)
    if d is _dt.bool or d.is_complex:
        raise NotImplementedError(f"\"searchsorted_out_cpu\" not implemented for '{d.scalar_name}'")
    res = dispatch.call(_sort_defs.searchsorted_op, sorted_sequence.to(d), values.to(d),
                        right=right, out_int32=out_int32)
    return _into(out, res)


def bucketize(input, boundaries: Tensor, *, out_int32: bool = False, right: bool = False,
              out=None) -> Tensor:
    """The bucket of each element of ``input`` among the 1-D sorted ``boundaries``."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


def unravel_index(indices: Tensor, shape) -> tuple:
    """Flat indices into ``shape`` as a tuple of coordinate tensors."""
    if not isinstance(indices, Tensor):
        raise TypeError(f"expected 'indices' to be integer dtype, but got {type(indices)}")
    if indices.dtype.is_floating_point or indices.dtype.is_complex or indices.dtype is _dt.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got {indices.dtype}")
    shape = (shape,) if isinstance(shape, int) else tuple(int(s) for s in shape)
    if any(s < 0 for s in shape):
        raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    numel = math.prod(shape)
    idx = indices.to(_dt.int64)
    idx = pointwise.where(idx < 0, idx + numel, idx)
    coords = []
    for s in reversed(shape):
        coords.append(pointwise.remainder(idx, s) if s else idx * 0)
        idx = pointwise.floor_divide(idx, s) if s else idx
    return tuple(reversed(coords))


def bincount(input: Tensor, weights=None, minlength: int = 0) -> Tensor:
    """Counts of each non-negative integer in the 1-D ``input`` (sums of ``weights``)."""
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if input.ndim != 1 or input.dtype.is_floating_point or input.dtype.is_complex or \
            input.dtype is _dt.bool:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if not input.numel():  # (torch: int64 zeros, weights or not)
        return creation.zeros(minlength, dtype=_dt.int64, device=input.device)
    if input._a.__class__ is np.ndarray and (weights is None or (
            weights._a.__class__ is np.ndarray and not (weights.requires_grad and
                                                        dispatch.grad_state.enabled))):
        return _bincount_cpu(input, weights, minlength)
    if bool(input.min() < 0):  # (other devices: composed)
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    n = max(int(input.max()) + 1, minlength)
    if weights is None:
        src, dtype = creation.ones(input.shape[0], dtype=_dt.int64, device=input.device), _dt.int64
    else:
        dtype = weights.dtype if weights.dtype in (_dt.float32, _dt.float64) else _dt.float64
        src = weights.to(dtype)
    return creation.zeros(n, dtype=dtype, device=input.device).index_add(0, input.to(_dt.int64), src)


def _bincount_cpu(input: Tensor, weights, minlength: int) -> Tensor:
    """bincount of CPU arrays in two compiled passes (range, then counts or weighted sums in
    order), where the composition ran seven ops and two reads of single values."""
    from ..kernels.cpu import indexing as _ix

    a = np.ascontiguousarray(input._a, np.int64)  # (not empty)
    lo, hi = _ix.value_range(a)
    if lo < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    n = max(int(hi) + 1, minlength)
    if weights is None:
        out = np.zeros(n, np.int64)
        _ix.count_into(a, out)
        return Tensor._make(out, None, _dt.int64)
    dtype = weights.dtype if weights.dtype in (_dt.float32, _dt.float64) else _dt.float64
    out = np.zeros(n, dtype.np)
    _ix.count_weighted_into(a, np.ascontiguousarray(weights._a, dtype.np), out)
    return Tensor._make(out, None, dtype)


def histc(input: Tensor, bins: int = 100, min=0, max=0, *, out=None) -> Tensor:
    """A histogram of ``bins`` equal bins over [min, max] (the data's range when equal);
    values outside are ignored."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f'"histogram_cpu" not implemented for {_name(input.dtype)!r}')
    if bins <= 0:
        raise RuntimeError(f"torch.histc(): bins must be > 0, but got {bins} for dim 0")
    lo, hi = float(min), float(max)
    if lo == hi and input.numel():
        lo, hi = float(input.min()), float(input.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if lo > hi:
        raise RuntimeError(f"torch.histc(): max must be larger than min, but got min {lo} max {hi}")
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc(): range of [{lo}, {hi}] is not finite")
    x = input.reshape(-1)
    pos = ((x - lo) * bins / (hi - lo)).floor().to(_dt.int64)
    inside = (x >= lo) & (x <= hi)
    idx = pointwise.where(inside, pos.clamp(0, bins - 1), 0)
    res = creation.zeros(bins, dtype=input.dtype, device=input.device).index_add(
        0, idx, inside.to(input.dtype))
    return _into(out, res)


# -- small pointwise helpers ---------------------------------------------------------------------

def ldexp(input: Tensor, other: Tensor, *, out=None) -> Tensor:
    """input * 2 ** other."""
    return pointwise.mul(input, pointwise.pow(2.0, other), out=out)


def ldexp_(input: Tensor, other: Tensor) -> Tensor:
    return input.mul_(pointwise.pow(2.0, other))


def _float_power_(self: Tensor, exponent) -> Tensor:
    """In place: the result is double (complex double), so self must be too."""
    want = _dt.complex128 if self.dtype.is_complex or (
        isinstance(exponent, Tensor) and exponent.dtype.is_complex) or isinstance(exponent, complex) \
        else _dt.float64
    if self.dtype is not want:
        raise RuntimeError(f"the base given to float_power_ has dtype {_name(self.dtype)} but the "
                           f"operation's result requires dtype {_name(want)}")
    return self.copy_(pointwise.float_power(self, exponent))


def _fill_diagonal_(self: Tensor, fill_value, wrap: bool = False) -> Tensor:
    """In place: the main diagonal (of a square tensor, or a 2-D one, wrapping when asked)."""
    if self.ndim < 2:
        raise RuntimeError("dimensions must larger than 1")
    if self.ndim > 2 and len(set(self.shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    rows, cols = self.shape[0], self.shape[1]
    if self.ndim == 2 and wrap and rows > cols + 1:
        pos = creation.arange(0, rows * cols, cols + 1, device=self.device)
        idx = (pointwise.floor_divide(pos, cols), pointwise.remainder(pos, cols))
    else:
        k = creation.arange(min(self.shape), device=self.device)
        idx = (k,) * self.ndim
    return self.index_put_(idx, creation.tensor(fill_value, dtype=self.dtype, device=self.device))


# -- scatters into views: a copy of input with a view of it replaced by src ----------------------

def _scatter_into(input: Tensor, src: Tensor, view) -> Tensor:
    res = input.clone()
    target = view(res)
    if tuple(target.shape) != tuple(src.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(target.shape)}")
    target.copy_(src)
    return res


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,
                     dim2: int = 1) -> Tensor:
    return _scatter_into(input, src, lambda t: t.diagonal(offset, dim1, dim2))


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int) -> Tensor:
    return _scatter_into(input, src, lambda t: t.select(dim, index))


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start=None, end=None,
                  step: int = 1, *, axis=None) -> Tensor:
    dim = dim if axis is None else axis
    def view(t):
        d = _wrap(dim, t.ndim)
        return t[(slice(None),) * d + (slice(start, end, step),)]

    return _scatter_into(input, src, view)


def as_strided_scatter(input: Tensor, src: Tensor, size, stride, storage_offset=None) -> Tensor:
    return _scatter_into(input, src, lambda t: t.as_strided(size, stride, storage_offset))


_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def _index_reduce_args(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str):
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if index.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    d = _wrap(dim, input.ndim)
    if source.ndim and index.numel() != source.shape[d]:
        raise RuntimeError(f"index_reduce_(): Number of indices ({index.numel()}) should be equal "
                           f"to source.size(dim) ({source.shape[d]})")
    shape = [-1 if k == d else 1 for k in range(source.ndim)]
    idx = index.reshape(shape).expand(source.shape) if source.ndim else index.reshape(())
    return d, idx


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                 include_self: bool = True, out=None) -> Tensor:
    """Reduce the slices of ``source`` into ``input``'s slices named by ``index`` along ``dim``."""
    d, idx = _index_reduce_args(input, dim, index, source, reduce)
    return _into(out, input.scatter_reduce(d, idx, source, reduce, include_self=include_self))


def _index_reduce_(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str, *,
                   include_self: bool = True) -> Tensor:
    d, idx = _index_reduce_args(self, dim, index, source, reduce)
    return self.scatter_reduce_(d, idx, source, reduce, include_self=include_self)


# -- window functions --------------------------------------------------------------------------

def _window(name: str, window_length: int, periodic: bool, dtype, device, requires_grad: bool,
            fn) -> Tensor:
    dtype = dtype or _dt.get_default_dtype()
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: {dtype}")
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if window_length <= 1:
        res = creation.ones(window_length, dtype=dtype, device=device)
    else:
        n = window_length + 1 if periodic else window_length
        k = creation.arange(window_length, dtype=_dt.float64, device=device)
        res = fn(k, n).to(dtype)
    return res.requires_grad_() if requires_grad else res


def _cosine_sum(*coeffs):
    def fn(k, n):
        res = k * 0.0 + coeffs[0]
        for j, a in enumerate(coeffs[1:], 1):
            res = res + (-1) ** j * a * (k * (2 * math.pi * j / (n - 1))).cos()
        return res
    return fn


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                device=None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.5, 0.5))


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype=None, layout=None, device=None,
                   pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(alpha, beta))


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum(0.42, 0.5, 0.08))


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, pin_memory: bool = False, requires_grad: bool = False) -> Tensor:
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, n: 1 - (k * (2 / (n - 1)) - 1).abs())


def _i0_series(x: Tensor, terms: int) -> Tensor:
    """I0(x) = sum_k ((x/2)^k / k!)^2, summed over a fixed number of terms (x bounded here)."""
    q = (x / 2) ** 2
    term, total = x * 0.0 + 1.0, x * 0.0 + 1.0
    for k in range(1, terms):
        term = term * q / (k * k)
        total = total + term
    return total


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *, dtype=None,
                  layout=None, device=None, pin_memory: bool = False,
                  requires_grad: bool = False) -> Tensor:
    terms = int(2 * abs(beta)) + 40

    def fn(k, n):
        alpha = (n - 1) / 2
        r = (1 - ((k - alpha) / alpha) ** 2).clamp_min(0).sqrt()
        return _i0_series(r * beta, terms) / _i0_series(creation.tensor(float(beta),
                                                                       dtype=_dt.float64), terms)

    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad, fn)

