"""torch's remaining numeric names, composed of registry ops: the incomplete gamma functions
(igamma, igammac: OpDefs of ``kernels/defs/special.py``), numerical gradients (gradient),
histograms (histogram, histogramdd), randomized low-rank factorisations (svd_lowrank,
pca_lowrank), and the ATen forms of embedding_bag, embedding_renorm_ and the whole-sequence
recurrent layers (lstm, gru, rnn_tanh, rnn_relu).

Loops here run over dims, layers or time steps, never over elements, so every path (CPU, meta,
autograd) is the ops' own.

>>> import jtorch as torch
>>> torch.gradient(torch.tensor([1.0, 4.0, 9.0, 16.0]))
(tensor([3., 4., 6., 7.]),)
"""

from __future__ import annotations

import builtins
import math

from .. import dispatch
from .. import dtypes as _dt
from ..autograd.function import Function
from ..kernels.defs import special as S
from ..shape import wrap_dim
from ..tensor import Tensor
from . import creation, pointwise, views
from ._util import is_number, type_name
from .extras import _into
from .numeric import searchsorted
from .reduction import _return_type, return_types

__all__ = ["embedding_bag", "embedding_renorm_", "gradient", "gru", "histogram", "histogramdd",
           "igamma", "igammac", "lstm", "pca_lowrank", "rnn_relu", "rnn_tanh", "svd_lowrank"]

_builtin_range = builtins.range  # ``range`` is histogram's argument name below
return_types.histogram = _return_type("histogram", ("hist", "bin_edges"))
return_types.histogram_out = _return_type("histogram_out", ("hist", "bin_edges"))
return_types.histogramdd = _return_type("histogramdd", ("hist", "bin_edges"))

_pw = dispatch.pointwise


# -- the regularized incomplete gamma functions ----------------------------------------------------

def _check_operands(name: str, input, other, method: bool = False) -> None:
    """torch's binding: both operands are tensors (a Python number is a TypeError)."""
    for pos, (arg, x) in enumerate((("input", input), ("other", other))):
        if method and pos == 0:
            continue
        if not isinstance(x, Tensor):
            raise TypeError(f"{name}(): argument '{arg}' (position {pos + 1 - method}) must be "
                            f"Tensor, not {type(x).__name__}")


def _igamma_fn(op, name: str, public: str | None = None):
    public = public or name

    def fn(input: Tensor, other: Tensor, *, out=None) -> Tensor:
        _check_operands(public, input, other)
        return _pw(op, (input, other), out)

    fn.__name__ = fn.__qualname__ = public.removeprefix("special_")
    return fn


igamma = _igamma_fn(S.igamma_op, "igamma")
igamma.__doc__ = """torch.igamma: the regularized lower incomplete gamma function
P(input, other) = 1 / Gamma(input) * integral_0^other t^(input - 1) e^-t dt (floating dtypes;
torch's values at the edges: nan for negative arguments, P(0, x > 0) = 1).

>>> import jtorch as torch
>>> torch.igamma(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))
tensor([0.6321, 0.2642])
"""
igammac = _igamma_fn(S.igammac_op, "igammac")
igammac.__doc__ = """torch.igammac: the regularized upper incomplete gamma function
Q(input, other) = 1 - P(input, other).

>>> import jtorch as torch
>>> torch.igammac(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 1.0]))
tensor([0.3679, 0.7358])
"""
gammainc = _igamma_fn(S.igamma_op, "igamma", "special_gammainc")
gammaincc = _igamma_fn(S.igammac_op, "igammac", "special_gammaincc")


def _igamma_method(op, name: str, inplace: bool):
    def method(self: Tensor, other: Tensor) -> Tensor:
        _check_operands(name, self, other, method=True)
        if inplace:
            dispatch.check_inplace(self)
            return _pw(op, (self, other), inplace=True)
        return _pw(op, (self, other))

    method.__name__ = method.__qualname__ = name
    return method



# -- gradient: central differences inside, one-sided at the edges ----------------------------------

_GRADIENT_SIGNATURES = (
    " * (Tensor input, *, tuple of ints dim, int edge_order = 1)\n"
    " * (Tensor input, *, Number spacing, tuple of ints dim, int edge_order = 1)\n"
    " * (Tensor input, *, Number spacing = None, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Scalars spacing, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Scalars spacing, tuple of ints dim, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Tensors spacing, int dim = None, int edge_order = 1)\n"
    " * (Tensor input, *, tuple of Tensors spacing, tuple of ints dim, int edge_order = 1)\n")


def _gradient_bad_args(input, spacing, dim, edge_order) -> TypeError:
    kw = {"spacing": spacing, "dim": dim, "edge_order": edge_order}
    given = {"spacing": spacing is not None and not (type(spacing) is int and spacing == 1),
             "dim": dim is not None, "edge_order": not (type(edge_order) is int and edge_order == 1)}
    got = ", ".join([type_name(input)] + [f"{k}={type_name(v)}" for k, v in kw.items() if given[k]])
    return TypeError(f"gradient() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{_GRADIENT_SIGNATURES}")


def _gradient_spacing(input, spacing, dim, edge_order):
    """("unit" | "scalars" | "tensors", values): torch's overload for this spacing."""
    if spacing is None:
        return "unit", None
    if isinstance(spacing, Tensor) and spacing.ndim == 0:
        spacing = spacing.item()
    if is_number(spacing) and not isinstance(spacing, Tensor):
        return "scalar", spacing
    if isinstance(spacing, (list, tuple)):
        if any(isinstance(s, Tensor) for s in spacing):
            for i, s in enumerate(spacing):
                if not isinstance(s, Tensor):
                    raise TypeError(f"expected Tensor as element {i} in argument 1, but got "
                                    f"{type_name(s)}")
            return "tensors", list(spacing)
        if all(is_number(s) for s in spacing):
            return "scalars", list(spacing)
    raise _gradient_bad_args(input, spacing, dim, edge_order)


def _gradient_check(input: Tensor, nspacing, dims, dim_given: bool, edge_order) -> None:
    """torch's pre_check_gradient, in its order."""
    if input.dtype is _dt.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    if nspacing is not None and not dim_given and nspacing != input.ndim:
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar, or a list of length "
            f"equal to 'self.dim() = {input.ndim}', since dim argument was not given, but got a "
            f"list of length {nspacing}")
    if nspacing is not None and dim_given and nspacing != len(dims):
        raise RuntimeError(
            "torch.gradient expected spacing to be unspecified, a scalar or it's spacing and dim "
            f"arguments to have the same length, but got a spacing argument of length {nspacing} "
            f"and a dim argument of length {len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    seen = set()
    for d in dims if dim_given else ():
        w = wrap_dim(d, input.ndim)
        if w in seen:
            raise RuntimeError(f"dim {w} appears multiple times in the list of dims")
        seen.add(w)
    for d in dims:
        if input.size(d) < edge_order + 1:
            raise RuntimeError(
                "torch.gradient expected each dimension size to be at least edge_order+1")


def _sl(x: Tensor, d: int, start: int, stop: int | None = None) -> Tensor:
    """at::slice(x, d, start, stop)."""
    n = x.shape[d]
    start = start + n if start < 0 else start
    stop = n if stop is None else stop + n if stop < 0 else stop
    return views.narrow(x, d, start, max(stop - start, 0))


def _gradient_uniform(x: Tensor, d: int, h, edge_order: int) -> Tensor:
    center = (_sl(x, d, 2) - _sl(x, d, 0, -2)) / h
    if edge_order == 1:
        first = (_sl(x, d, 1, 2) - _sl(x, d, 0, 1)) / h
        last = (_sl(x, d, -1) - _sl(x, d, -2, -1)) / h
    else:
        first = (-1.5 * _sl(x, d, 0, 1) + 2 * _sl(x, d, 1, 2) - 0.5 * _sl(x, d, 2, 3)) / h
        last = (0.5 * _sl(x, d, -3, -2) - 2 * _sl(x, d, -2, -1) + 1.5 * _sl(x, d, -1)) / h
    return views.cat([first, center / 2, last], d)


def _gradient_coordinates(x: Tensor, d: int, coords: Tensor, edge_order: int) -> Tensor:
    """Second-order differences on the non-uniform grid ``coords`` (torch's coefficients)."""
    if coords.ndim != 1:
        raise RuntimeError("torch.gradient expected each element of spacing to have one "
                           f"dimension, but got an element with {coords.ndim} dimensions!")
    shape = [1] * x.ndim
    shape[d] = -1
    dx = coords.diff(1, 0)
    dx1, dx2 = dx[:-1], dx[1:]
    a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
    b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
    c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
    center = a * _sl(x, d, 0, -2) + b * _sl(x, d, 1, -1) + c * _sl(x, d, 2)
    if edge_order == 1:
        first = (_sl(x, d, 1, 2) - _sl(x, d, 0, 1)) / dx[0]
        last = (_sl(x, d, -1) - _sl(x, d, -2, -1)) / dx[-1]
    else:
        h0, h1, hl, hl2 = dx[0], dx[1], dx[-1], dx[-2]
        a = -(2.0 * h0 + h1) / (h0 * (h0 + h1))
        b = (h0 + h1) / (h0 * h1)
        c = (-h0) / (h1 * (h0 + h1))
        first = a * _sl(x, d, 0, 1) + b * _sl(x, d, 1, 2) + c * _sl(x, d, 2, 3)
        a = hl / (hl2 * (hl + hl2))
        b = -(hl + hl2) / (hl * hl2)
        c = (2 * hl + hl2) / (hl * (hl + hl2))
        last = a * _sl(x, d, -3, -2) + b * _sl(x, d, -2, -1) + c * _sl(x, d, -1)
    return views.cat([first, center, last], d)


def gradient(input: Tensor, *, spacing=1, dim=None, edge_order=1) -> tuple:
    """torch.gradient: the derivative of the function sampled by ``input`` along each of ``dim``
    (every dim by default): second-order central differences inside, first- or second-order
    (``edge_order``) one-sided differences at the edges. ``spacing`` is a scalar sample distance,
    one per dim, or one tensor of coordinates per dim. Composed of jtorch ops, so it
    differentiates.

    >>> import jtorch as torch
    >>> torch.gradient(torch.tensor([1.0, 2.0, 4.0, 8.0]), spacing=2.0)
    (tensor([0.5000, 0.7500, 1.5000, 2.0000]),)
    """
    if not isinstance(input, Tensor):
        raise _gradient_bad_args(input, spacing, dim, edge_order)
    if not isinstance(edge_order, int) or isinstance(edge_order, bool):
        raise _gradient_bad_args(input, spacing, dim, edge_order)
    kind, values = _gradient_spacing(input, spacing, dim, edge_order)
    dim_given = dim is not None
    if dim is None:
        dims = list(range(input.ndim))
    elif isinstance(dim, int) and not isinstance(dim, bool):
        dims = [dim]
    elif isinstance(dim, (list, tuple)) and all(isinstance(d, int) for d in dim):
        dims = list(dim)
    else:
        raise _gradient_bad_args(input, spacing, dim, edge_order)
    if kind == "unit":
        nspacing, values = None, [1.0] * len(dims)
    elif kind == "scalar":
        nspacing, values = len(dims), [values] * len(dims)
    else:
        nspacing = len(values)
    _gradient_check(input, nspacing, dims, dim_given, edge_order)
    out = []
    for i, d in enumerate(dims):
        d = wrap_dim(d, input.ndim)
        if kind == "tensors":
            out.append(_gradient_coordinates(input, d, values[i], edge_order))
        else:
            out.append(_gradient_uniform(input, d, values[i], edge_order))
    return tuple(out)


# -- histograms -------------------------------------------------------------------------------------
# torch's binning (ATen HistogramKernel.cpp): an element x in [first edge, last edge] goes to the
# bin upper_bound(edges, x) - 1, the last bin closed on the right. Counted bins (edges from
# linspace) find it by interpolation, pos = (x - first) * bins / (last - first) in the input
# dtype, corrected by an upper_bound over the edges pos - 1 .. pos + 1 (the local search), so
# values on an edge land where torch puts them; given edges are searched in full.

class _NoDerivative(Function):
    """Results torch records with no derivative (its ``NotImplemented`` node): they require grad
    when an input does, and backward through them raises torch's error."""

    @staticmethod
    def forward(ctx, name, fn, *tensors):
        ctx.op_name = name
        return fn(*tensors)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(f"derivative for aten::{ctx.op_name} is not implemented")


_NoDerivative._backward_cls.__name__ = _NoDerivative._backward_cls.__qualname__ = "NotImplemented"


def _num(v: float) -> str:
    """A double as C++'s ostream writes it in torch's messages."""
    return f"{v:g}"


def _hist_fill(x2d: Tensor, edges: list, weight, density: bool, local_search: bool) -> Tensor:
    """The histogram of the rows of ``x2d`` (M, N) over the N edge sequences."""
    n = x2d.shape[1]
    counts = [e.shape[0] - 1 for e in edges]
    dtype, device = x2d.dtype, x2d.device
    if n == 0:
        hist = creation.zeros((), dtype=dtype, device=device)
        return hist / hist.sum() if density else hist
    flat, keep = None, None
    for d in range(n):
        col, e, nb = views.select(x2d, 1, d), edges[d], counts[d]
        lo, hi = e[0], e[-1]
        inside = (col >= lo) & (col <= hi)
        if local_search:
            col = pointwise.where(inside, col, lo)  # outside or nan: any bin (they are dropped)
            pos = ((col - lo) * nb / (hi - lo)).to(_dt.int64)
            pos_min, pos_max = (pos - 1).clamp_min(0), (pos + 2).clamp_max(nb + 1)
            found = None
            for j in range(3):
                k = pos_min + j
                hit = (k < pos_max) & (e.take(k.clamp(0, nb)) <= col)
                found = hit.to(_dt.int64) if found is None else found + hit.to(_dt.int64)
            pos = pos_min + found - 1
        else:
            pos = searchsorted(e, col, right=True) - 1
        pos = pointwise.where(pos == nb, nb - 1, pos)  # the last bin holds its right edge
        stride = math.prod(counts[d + 1:])
        flat = pos * stride if flat is None else flat + pos * stride
        keep = inside if keep is None else keep & inside
    w = creation.ones(x2d.shape[0], dtype=dtype, device=device) if weight is None else weight
    hist = creation.zeros(math.prod(counts), dtype=dtype, device=device).index_add(
        0, pointwise.where(keep, flat, 0), pointwise.where(keep, w, 0))
    hist = hist.reshape(counts)
    if density:
        hist = hist / hist.sum()
        for d in range(n):
            shape = [1] * n
            shape[d] = counts[d]
            hist = hist / edges[d].diff().reshape(shape)
    return hist


def _hist_outer_edges(x2d: Tensor, rng) -> list:
    """torch's select_outer_bin_edges: [(first, last)] per dim, from ``range`` or the data."""
    n = x2d.shape[1]
    if rng is not None:
        rng = [float(r) for r in rng]
        if len(rng) != 2 * n:
            raise RuntimeError(f"torch.histogramdd: for a {n}-dimensional histogram range should "
                               f"have {2 * n} elements, but got {len(rng)}")
        outer = [(rng[2 * d], rng[2 * d + 1]) for d in range(n)]
    elif x2d.numel():
        if x2d.dtype not in (_dt.float32, _dt.float64):
            raise NotImplementedError(f'"histogramdd" not implemented for '
                                      f"'{x2d.dtype.scalar_name}'")
        lo, hi = x2d.aminmax(dim=0)
        outer = list(zip(lo.tolist(), hi.tolist()))
    else:
        outer = [(0.0, 1.0)] * n
    out = []
    for d, (lo, hi) in enumerate(outer):
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension {d}'s range [{_num(lo)}, "
                               f"{_num(hi)}] is not finite")
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{_num(lo)} max {_num(hi)} for dimension {d}")
        out.append((lo - 0.5, hi + 0.5) if lo == hi else (lo, hi))
    return out


def _hist_check_inputs(x: Tensor, edges: list, weight) -> None:
    """torch's histogramdd_check_inputs (of the input and weight as torch passes them)."""
    n = x.shape[-1]
    if len(edges) != n:
        raise RuntimeError(f"torch.histogramdd: expected {n} sequences of bin edges for a {n}-"
                           f"dimensional histogram but got {len(edges)}")
    for d, e in enumerate(edges):
        if e.dtype is not x.dtype:
            raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have "
                               f"the same dtype, but got input with dtype {x.dtype.cpp_name} "
                               f"and bins for dimension {d} with dtype {e.dtype.cpp_name}")
        if e.ndim != 1:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but "
                               f"got {e.ndim} dimensions in the bins tensor for dimension {d}")
        if e.numel() == 0:
            raise RuntimeError(f"torch.histogramdd: bins tensor should have at least 1 element, "
                               f"but got 0 elements in the bins tensor for dimension {d}")
    if weight is None:
        return
    if weight.dtype is not x.dtype:
        raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and "
                           f"weight tensor should have the same dtype, but got "
                           f"input({x.dtype.cpp_name}), and weight({weight.dtype.cpp_name})")
    if list(x.shape[:-1]) != (list(weight.shape) or [1]):
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as "
            "the input tensor excluding its innermost dimension, but got input with shape "
            f"{list(x.shape)} and weight with shape {list(weight.shape)}")


def _hist_check_kernel_dtype(x: Tensor) -> None:
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f"\"histogram_cpu\" not implemented for '{x.dtype.scalar_name}'")


def _hist_check_counts(counts) -> None:
    for d, c in enumerate(counts):
        if c <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {c} for dimension {d}")


def _linspace_edges(outer, counts, x: Tensor) -> list:
    return [creation.linspace(lo, hi, c + 1, dtype=x.dtype, device=x.device)
            for (lo, hi), c in zip(outer, counts)]


def _hist_out(out, x: Tensor, hist: Tensor, edges: Tensor):
    if out is None:
        return return_types.histogram(hist, edges)
    if not isinstance(out, (list, tuple)) or len(out) != 2:
        raise TypeError("histogram(): argument 'out' must be tuple of Tensors of length 2")
    for name, t in (("hist", out[0]), ("bin_edges", out[1])):
        if t.dtype is not x.dtype:
            raise RuntimeError(f"torch.histogram: input tensor and {name} tensor should have the "
                               f"same dtype, but got input {x.dtype.cpp_name} and {name} "
                               f"{t.dtype.cpp_name}")
    return return_types.histogram_out(_into(out[0], hist), _into(out[1], edges))


def histogram(input: Tensor, bins=100, *, range=None, weight=None, density: bool = False,
              out=None):
    """torch.histogram: (hist, bin_edges) of the values of ``input`` (floating dtypes) in
    ``bins`` equal bins over ``range`` (the data's min and max by default), or in the bins whose
    edges the 1-D tensor ``bins`` gives. Values on an edge fall in the bin to its right, the last
    bin includes both of its edges, values outside are ignored; ``weight`` weighs each value,
    ``density`` normalises to a density.

    >>> import jtorch as torch
    >>> torch.histogram(torch.tensor([1.0, 2.0, 1.0]), bins=4, range=(0.0, 3.0))
    torch.return_types.histogram(
    hist=tensor([0., 2., 1., 0.]),
    bin_edges=tensor([0.0000, 0.7500, 1.5000, 2.2500, 3.0000]))
    """
    x2d = input.reshape(input.numel(), 1)
    w = None if weight is None else weight.reshape(weight.numel())
    if isinstance(bins, Tensor):
        _hist_check_inputs(x2d, [bins], w)
        _hist_check_counts([bins.numel() - 1])
        _hist_check_kernel_dtype(input)
        res = _NoDerivative.apply(
            "histogram", lambda x, b, w: (_hist_fill(x, [b.contiguous()], w, density, False),
                                          b.clone()), x2d, bins, w)
        return _hist_out(out, input, *res)
    if not isinstance(bins, int) or isinstance(bins, bool):
        raise TypeError(
            f"histogram() received an invalid combination of arguments - got (Tensor, "
            f"{type_name(bins)}), but expected one of:\n"
            " * (Tensor input, Tensor bins, *, Tensor weight = None, bool density = False, "
            "tuple of Tensors out = None)\n"
            " * (Tensor input, int bins = 100, *, tuple of floats range = None, Tensor weight = "
            "None, bool density = False, tuple of Tensors out = None)\n")
    _hist_check_counts([bins])
    edges = _linspace_edges(_hist_outer_edges(x2d, range), [bins], input)
    _hist_check_inputs(x2d, edges, w)
    _hist_check_kernel_dtype(input)
    res = _NoDerivative.apply(
        "histogram", lambda x, w: (_hist_fill(x, edges, w, density, True), edges[0]), x2d, w)
    return _hist_out(out, input, *res)


def _histogram_method(self: Tensor, bins=100, *, range=None, weight=None, density: bool = False):
    return histogram(self, bins, range=range, weight=weight, density=density)


def histogramdd(input: Tensor, bins, range=None, weight=None, density: bool = False):
    """torch.histogramdd: the N-dimensional histogram of the rows of ``input`` (its last dim
    has size N): ``bins`` is a count for every dim, one count per dim, or one tensor of edges per
    dim; (hist, bin_edges) with one edge tensor per dim. Binning as ``histogram``'s.

    >>> import jtorch as torch
    >>> torch.histogramdd(torch.tensor([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0]]), bins=[2, 2]).hist
    tensor([[0., 1.],
            [1., 1.]])
    """
    if input.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    n = input.shape[-1]
    x2d = input.reshape(math.prod(input.shape[:-1]), n)
    if isinstance(bins, (list, tuple)) and any(isinstance(b, Tensor) for b in bins):
        _hist_check_inputs(input, list(bins), weight)
        w = None if weight is None else weight.reshape(x2d.shape[0])
        _hist_check_counts([b.numel() - 1 for b in bins])
        _hist_check_kernel_dtype(input)
        hist = _NoDerivative.apply(
            "_histogramdd_from_bin_tensors",
            lambda x, w, *b: _hist_fill(x, [e.contiguous() for e in b], w, density, False),
            x2d, w, *bins)
        return return_types.histogramdd(hist, tuple(bins))
    if isinstance(bins, int) and not isinstance(bins, bool):
        bins = [bins] * n
    elif not (isinstance(bins, (list, tuple)) and all(isinstance(b, int) for b in bins)):
        raise TypeError(
            f"histogramdd() received an invalid combination of arguments - got (Tensor, "
            f"{type_name(bins)}), but expected one of:\n"
            " * (Tensor input, int bins, tuple of floats range = None, Tensor weight = None, "
            "bool density = False)\n"
            " * (Tensor input, tuple of ints bins, tuple of floats range = None, Tensor weight = "
            "None, bool density = False)\n"
            " * (Tensor input, tuple of Tensors bins, tuple of floats range = None, Tensor weight "
            "= None, bool density = False)\n")
    if len(bins) != n:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    edges = _linspace_edges(_hist_outer_edges(x2d, range), list(bins), input)
    _hist_check_inputs(input, edges, weight)
    w = None if weight is None else weight.reshape(x2d.shape[0])
    _hist_check_counts(list(bins))
    _hist_check_kernel_dtype(input)
    hist = _NoDerivative.apply("_histogramdd_from_bin_cts",
                               lambda x, w: _hist_fill(x, edges, w, density, True), x2d, w)
    if edges:
        edges = _NoDerivative.apply("_histogramdd_bin_edges", lambda x: tuple(edges), x2d)
    return return_types.histogramdd(hist, tuple(edges))


# -- randomized low-rank SVD and PCA (torch/_lowrank.py, Halko et al. 2009) -------------------------
# The same draws (one randn(n, q) in the floating dtype) and steps as torch's, so that after the
# same manual_seed the factors agree with torch's to rounding.

def _lr_matmul(a: Tensor, b: Tensor) -> Tensor:
    if a.layout is _dt.sparse_coo:
        from .. import sparse

        return sparse.mm(a, b)
    return a.matmul(b)


def _lr_float_dtype(a: Tensor):
    return a.dtype if a.dtype in (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64) else _dt.float32


def _approximate_basis(a: Tensor, q: int, niter, m_: Tensor | None) -> Tensor:
    """Q with q orthonormal columns such that Q Q^H (A - M) approximates A - M (Algorithm 4.4)."""
    from .. import linalg
    from . import random

    niter = 2 if niter is None else niter
    dtype = a.dtype if a.is_complex() else _lr_float_dtype(a)
    r = random.randn(a.shape[-1], q, dtype=dtype, device=a.device)
    x = _lr_matmul(a, r)
    if m_ is not None:
        x = x - _lr_matmul(m_, r)
    basis = linalg.qr(x).Q
    for _ in _builtin_range(niter):
        x = _lr_matmul(a.mH, basis)
        if m_ is not None:
            x = x - _lr_matmul(m_.mH, basis)
        basis = linalg.qr(x).Q
        x = _lr_matmul(a, basis)
        if m_ is not None:
            x = x - _lr_matmul(m_, basis)
        basis = linalg.qr(x).Q
    return basis


def _svd_lowrank(a: Tensor, q, niter, m_):
    from .. import linalg

    q = 6 if q is None else q
    m, n = a.shape[-2:]
    if m_ is not None:
        m_ = m_.broadcast_to(a.size())
    if m < n:
        a = a.mH
        if m_ is not None:
            m_ = m_.mH
    basis = _approximate_basis(a, q, niter, m_)
    b = _lr_matmul(basis.mH, a)
    if m_ is not None:
        b = b - _lr_matmul(basis.mH, m_)
    u, s, vh = linalg.svd(b, full_matrices=False)
    v = vh.mH
    u = basis.matmul(u)
    if m < n:
        u, v = v, u
    return u, s, v


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int | None = 2, M: Tensor | None = None):
    """torch.svd_lowrank: (U, S, V) with A - M ~ U diag(S) V^H of rank q, by randomized
    subspace iteration (``niter`` power steps) on a random n x q start; A may be batched or
    sparse. Results are random: seed the generator to repeat them.

    >>> import jtorch as torch
    >>> _ = torch.manual_seed(0)
    >>> U, S, V = torch.svd_lowrank(torch.ones(4, 3), q=2)
    >>> round(float(S[0]), 4)
    3.4641
    """
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True, niter: int = 2):
    """torch.pca_lowrank: the principal components of the rows of A (m samples, n features) as
    svd_lowrank of A less its column means (``center``): V holds the principal directions and
    S ** 2 / (m - 1) the variances along them; q defaults to min(6, m, n).

    >>> import jtorch as torch
    >>> _ = torch.manual_seed(0)
    >>> U, S, V = torch.pca_lowrank(torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    >>> tuple(V.shape)
    (2, 2)
    """
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)="
                         f"{min(m, n)}")
    if not (niter >= 0):
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    dtype = _lr_float_dtype(A)
    if not center:
        return _svd_lowrank(A, q, niter, None)
    if A.layout is _dt.sparse_coo:
        from .. import sparse

        if len(A.shape) != 2:
            raise ValueError("pca_lowrank input is expected to be 2-dimensional tensor")
        c = sparse.sum(A, dim=(-2,)) / m
        column_indices = c.indices()[0]
        indices = creation.zeros(2, len(column_indices), dtype=column_indices.dtype,
                                 device=column_indices.device)
        indices[0] = column_indices
        c_t = sparse.sparse_coo_tensor(indices, c.values(), (n, 1), dtype=dtype, device=A.device)
        ones_m1_t = creation.ones(A.shape[:-2] + (1, m), dtype=dtype, device=A.device)
        return _svd_lowrank(A, q, niter, sparse.mm(c_t, ones_m1_t).mT)
    c = A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A - c, q, niter, None)


# -- embedding_bag and embedding_renorm_: the ATen forms ----------------------------------------
# torch.embedding_bag returns (output, offset2bag, bag_size, max_indices) as its CPU kernels
# leave them. Those kernels take two paths: the fast one (sum or mean of float32/float16 rows of
# unit stride, no padding_idx) sums each bag up to the next offset and leaves offset2bag empty
# in sum mode; the other (float64, strided weights, padding_idx, max) walks every index with its
# offset2bag entry, so that with include_last_offset the indices past the last offset join the
# last bag. bag_size counts a bag's indices from the offsets (less its padding ones) where mean,
# max or a weight that requires grad asks for it, and is zeros in sum mode; max_indices is the
# word index of each bag's (first) maximum in max mode, bag_size's copy otherwise.

_EB_FLOATS = (_dt.float16, _dt.bfloat16, _dt.float32, _dt.float64)


def _eb_type_error(arg: str, pos: int, t: Tensor, wanted: str) -> RuntimeError:
    return RuntimeError(f"Expected tensor for argument #{pos} '{arg}' to have one of the following "
                        f"scalar types: {wanted}; but got {t.type()} instead (while checking "
                        f"arguments for embedding_bag)")


def _eb_check(weight, indices, offsets, mode, psw, include_last_offset) -> None:
    """torch's check_arguments (and the dims _embedding_bag_cpu_impl checks)."""
    for t in (indices, offsets):
        if t.dtype not in (_dt.int64, _dt.int32):
            promoted = _dt.promote_types(indices.dtype, offsets.dtype)
            raise _eb_type_error("indices", 1, indices.to(promoted), "Long, Int")
    if weight.dtype not in _EB_FLOATS:
        raise _eb_type_error("weight", 1, weight, "Half, BFloat16, Float, Double")
    if offsets.shape[0] > 0 and not offsets.is_meta:
        first, last = int(offsets[0]), int(offsets[-1])
        if first != 0:
            raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the "
                               f"mini-batch has to start from position 0. However, got {first}"
                               f"\n[ {offsets.type()}{{}} ]")
        if last > indices.shape[0]:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length "
                               f"{indices.shape[0]} but got offsets[-1] of {last}")
    if psw is not None:
        if mode != 0:
            raise RuntimeError("embedding_bag: per_sample_weights only supported with mode='sum'")
        if psw.dtype is not weight.dtype:
            raise RuntimeError(f"Expected tensor for argument #1 'weight' to have the same type as "
                               f"tensor for argument #1 'per_sample_weights'; but type "
                               f"{weight.type()} does not equal {psw.type()} (while checking "
                               f"arguments for embedding_bag)")
        if psw.ndim != 1:
            raise RuntimeError("Expected per_sample_weights.value().dim() == 1 to be true, but got "
                               "false.  (Could this error message be improved?  If so, please "
                               "report an enhancement request to PyTorch.)")
        if psw.numel() != indices.numel():
            raise RuntimeError("Expected per_sample_weights.value().numel() == indices.numel() to "
                               "be true, but got false.  (Could this error message be improved?  "
                               "If so, please report an enhancement request to PyTorch.)")
    if include_last_offset and offsets.shape[0] < 1:
        raise RuntimeError("include_last_offset: number of offset should be at least 1")


def _eb_bag_sizes(offsets: Tensor, n: int, nbags: int) -> Tensor:
    """torch's make_bag_size: offsets[i + 1] - offsets[i], and n - offsets[nbags - 1] last."""
    if nbags == 0:
        return offsets.new_zeros(0)
    tail = (n - offsets[nbags - 1]).reshape(1)
    return views.cat([offsets[1:nbags] - offsets[:nbags - 1], tail])


def _eb_max(rows: Tensor, keep: Tensor, bag: Tensor, indices: Tensor, nbags: int):
    """Per bag and feature: the first kept row's value, replaced by each strictly greater one
    (torch's loop: a nan first stays, a later nan is passed over); the word index with it."""
    n, dim = rows.shape
    if n == 0:
        return rows.new_zeros(nbags, dim), indices.new_zeros(nbags, dim)
    pos = creation.arange(n, device=rows.device)
    far = pointwise.where(keep, pos, n)
    first = creation.full((nbags,), n, dtype=_dt.int64, device=rows.device).scatter_reduce(
        0, bag, far, "amin")
    nonempty = first < n
    first_c = first.clamp_max(max(n - 1, 0))
    first_rows = rows.index_select(0, first_c)
    bag2 = bag.unsqueeze(1).expand(n, dim)
    clean = pointwise.where(keep.unsqueeze(1) & ~rows.isnan(), rows, float("-inf"))
    best = rows.new_full((nbags, dim), float("-inf")).scatter_reduce(0, bag2, clean, "amax")
    at = pointwise.where(keep.unsqueeze(1) & (rows == best.index_select(0, bag)),
                         pos.unsqueeze(1), n)
    at = creation.full((nbags, dim), n, dtype=_dt.int64, device=rows.device).scatter_reduce(
        0, bag2, at, "amin")
    first_nan = first_rows.isnan()
    value = pointwise.where(first_nan | (best == float("-inf")), first_rows, best)
    at = pointwise.where(first_nan | (at == n), first_c.unsqueeze(1), at)
    value = pointwise.where(nonempty.unsqueeze(1), value, 0.0)
    word = pointwise.where(nonempty.unsqueeze(1), indices.take(at.clamp_max(max(n - 1, 0))), 0)
    return value, word


def _eb_scale_grad(rows: Tensor, indices: Tensor, num_weights: int) -> Tensor:
    """The rows unchanged, their gradient divided as torch's sum/mean backward divides it: the
    i-th distinct index (in sorted order) by the count of the i-th sorted index (torch reads
    ``counts[indices[i]]`` with the group's number i, not its start), which is the index's own
    count only where no earlier index repeats. (Max mode does not scale.)"""
    from .numeric import bincount

    flat = indices.to(_dt.int64)
    ordered = flat.sort().values
    counts = bincount(flat, minlength=num_weights)
    rank = searchsorted(ordered.unique(), flat)
    divisor = counts.take(ordered.take(rank)).to(rows.dtype).unsqueeze(1)
    frozen = rows.detach()
    return frozen + (rows - frozen) / divisor


def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor,
                  scale_grad_by_freq: bool = False, mode: int = 0, sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None):
    """torch.embedding_bag, the ATen form behind F.embedding_bag: the sums (mode 0), means (1)
    or maxima (2) of the rows of ``weight`` picked by the 1-D ``indices``, in bags cut at
    ``offsets``; returns (output, offset2bag, bag_size, max_indices) as torch's CPU kernels do.

    >>> import jtorch as torch
    >>> torch.embedding_bag(torch.eye(3), torch.tensor([0, 1, 2]), torch.tensor([0, 2]),
    ...                     False, 1)[0]
    tensor([[0.5000, 0.5000, 0.0000],
            [0.0000, 0.0000, 1.0000]])
    """
    from .embedding import _bags_of_offsets
    from .embedding import embedding as _lookup

    nw = weight.shape[0] if weight.ndim else 0
    pad = padding_idx
    if pad is not None:
        if not -nw <= pad < nw:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{nw} "
                               f"through {nw - 1}, but got {pad}")
        pad = pad + nw if pad < 0 else pad
    if indices.ndim != 1:
        raise RuntimeError(f"input has to be a 1D Tensor, but got Tensor of dimension "
                           f"{indices.ndim}")
    if offsets.ndim != 1:
        raise RuntimeError(f"offsets has to be a 1D Tensor, but got Tensor of dimension "
                           f"{offsets.ndim}")
    if weight.ndim != 2:
        raise RuntimeError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                           f"{weight.ndim}")
    if mode not in (0, 1, 2):
        raise RuntimeError("`mode` must be sum, mean, or max.")
    _eb_check(weight, indices, offsets, mode, per_sample_weights, include_last_offset)
    n, dim = indices.shape[0], weight.shape[1]
    odt = offsets.dtype
    fast = mode in (0, 1) and weight.dtype in (_dt.float32, _dt.float16) and \
        weight.stride(1) == 1 and pad is None and \
        (per_sample_weights is None or per_sample_weights.stride(0) == 1)
    bag, nbags = _bags_of_offsets(offsets, n, include_last_offset)
    keep = bag >= 0
    if fast and include_last_offset:  # the fast kernel stops at the last offset
        keep = keep & (creation.arange(n, device=indices.device) < offsets[-1])
    is_pad = None if pad is None else indices == pad
    if is_pad is not None:
        keep = keep & ~is_pad
    rows = _lookup(indices, weight, None, None, 2.0, False)
    if scale_grad_by_freq and mode != 2 and rows.requires_grad:
        rows = _eb_scale_grad(rows, indices, nw)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.unsqueeze(1)
    bag_c = pointwise.where(keep, bag, 0)
    wants_sizes = weight.requires_grad or mode in (1, 2)
    sizes = _eb_bag_sizes(offsets, n, nbags) if wants_sizes else offsets.new_zeros(offsets.shape)
    if is_pad is not None and wants_sizes and nbags:
        counted = is_pad & (bag >= 0)
        sizes = sizes - offsets.new_zeros(nbags).index_add(
            0, pointwise.where(counted, bag, 0), counted.to(odt))
    offset2bag = bag.to(odt) if mode or not fast else offsets.new_zeros(0)
    if mode == 2:
        out, max_indices = _eb_max(rows, keep, bag_c, indices, nbags)
        return out, offset2bag, sizes, max_indices.to(odt)
    out = weight.new_zeros(nbags, dim)
    if nbags:
        out = out.index_add(0, bag_c, pointwise.where(keep.unsqueeze(1), rows, 0.0))
    if mode == 1:
        out = out / sizes.clamp_min(1).to(weight.dtype).unsqueeze(1)
    else:
        sizes = sizes.new_zeros(sizes.shape)
    return out, offset2bag, sizes, sizes.clone()


def embedding_renorm_(input: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> Tensor:
    """torch.embedding_renorm_: in place, each row of ``input`` that ``indices`` names and whose
    ``norm_type``-norm exceeds ``max_norm`` is scaled by max_norm / (norm + 1e-7).

    >>> import jtorch as torch
    >>> torch.embedding_renorm_(torch.tensor([[3.0, 4.0], [0.3, 0.4]]), torch.tensor([0, 1]), 1.0,
    ...                         2.0)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    from .reduction import vector_norm

    if input.ndim != 2:
        raise RuntimeError(f"Expected 2-dimensional tensor, but got {input.ndim}-dimensional tensor "
                           f"for argument #1 'self' (while checking arguments for "
                           f"embedding_renorm_)")
    if indices.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError(f"Expected tensor for argument #2 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {indices.type()} instead "
                           f"(while checking arguments for embedding_renorm_)")
    dispatch.check_inplace(input)
    rows = indices.reshape(-1).to(_dt.int64).unique()
    picked = input.index_select(0, rows)
    norms = vector_norm(picked, norm_type, 1, True).to(_dt.float64)
    scale = pointwise.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    return input.index_copy_(0, rows, picked * scale.to(input.dtype))


# -- the whole-sequence recurrent layers: torch.lstm, gru, rnn_tanh, rnn_relu (ATen forms) -----
# Each has two overloads: (input, hx, params, has_biases, num_layers, dropout, train,
# bidirectional, batch_first) for a padded (T, B, *) input, and (data, batch_sizes, hx, params,
# has_biases, num_layers, dropout, train, bidirectional) for a packed one. ``params`` lists per
# layer and direction w_ih, w_hh[, b_ih, b_hh][, w_hr]; they run through nn.LSTM/GRU/RNN's own
# layer machinery (the fused lstm_layer op, or the steps as jtorch ops).

_RNN_SIGNATURES = {
    "lstm": (" * (Tensor data, Tensor batch_sizes, tuple of Tensors hx, tuple of Tensors params, "
             "bool has_biases, int num_layers, float dropout, bool train, bool bidirectional)\n"
             " * (Tensor input, tuple of Tensors hx, tuple of Tensors params, bool has_biases, "
             "int num_layers, float dropout, bool train, bool bidirectional, bool batch_first)\n"),
    "other": (" * (Tensor data, Tensor batch_sizes, Tensor hx, tuple of Tensors params, bool "
              "has_biases, int num_layers, float dropout, bool train, bool bidirectional)\n"
              " * (Tensor input, Tensor hx, tuple of Tensors params, bool has_biases, int "
              "num_layers, float dropout, bool train, bool bidirectional, bool batch_first)\n"),
}


def _rnn_layers(mode: str, x: Tensor, batch_sizes: list, h0, c0, params, has_biases: bool,
                num_layers: int, dropout: float, train: bool, bidirectional: bool) -> tuple:
    """The packed steps ``x`` (N, in) through every layer: (output (N, D * H), h_n, c_n)."""
    from ..kernels.defs.rnn import lstm_layer_op, rnn_layer_steps
    from ..nn import functional as F
    from ..nn.modules.rnn import _fusable

    ndir = 2 if bidirectional else 1
    proj = mode == "LSTM" and h0.shape[-1] != c0.shape[-1]
    per = 2 + 2 * bool(has_biases) + proj
    params = list(params)
    if len(params) != per * num_layers * ndir:
        raise RuntimeError("got an incorrect number of RNN parameters")
    if h0.shape[0] < num_layers * ndir:
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    if not batch_sizes:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    hs, cs = [], []
    for layer in _builtin_range(num_layers):
        outs = []
        for d in _builtin_range(ndir):
            k = layer * ndir + d
            group = params[k * per:(k + 1) * per]
            w_ih, w_hh = group[0], group[1]
            b_ih, b_hh = (group[2], group[3]) if has_biases else (None, None)
            w_hr = group[-1] if proj else None
            weights = (w_ih, w_hh, b_ih, b_hh, w_hr)
            c_k = c0[k] if c0 is not None else None
            if mode == "LSTM" and _fusable(x, h0[k], c_k, weights):
                o, h, c, _ = lstm_layer_op(x, h0[k], c_k, *weights, batch_sizes=tuple(batch_sizes),
                                           reverse=d == 1)
            else:
                o, h, c = rnn_layer_steps(mode, x, h0[k], c_k, *weights, batch_sizes, d == 1)
            outs.append(o)
            hs.append(h)
            cs.append(c)
        x = outs[0] if ndir == 1 else views.cat(outs, 1)
        if dropout and train and layer < num_layers - 1:
            x = F.dropout(x, dropout, True)
    h_n = views.stack(hs)
    return x, h_n, (views.stack(cs) if mode == "LSTM" else None)


def _rnn_aten(mode: str, name: str, args: tuple) -> tuple:
    is_lstm = mode == "LSTM"
    packed = len(args) == 9 and isinstance(args[1], Tensor) and (
        isinstance(args[2], (list, tuple)) if is_lstm else isinstance(args[2], Tensor))
    if not packed and not (len(args) == 9 and isinstance(args[0], Tensor)):
        got = ", ".join(type_name(a) for a in args)
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), "
                        f"but expected one of:\n{_RNN_SIGNATURES['lstm' if is_lstm else 'other']}")
    if packed:
        data, sizes, hx, params, has_biases, num_layers, dropout, train, bidirectional = args
        batch_first = False
    else:
        data, hx, params, has_biases, num_layers, dropout, train, bidirectional, batch_first = args
        sizes = None
    if is_lstm:
        if len(hx) != 2:
            raise RuntimeError("lstm expects two hidden states")
        h0, c0 = hx
    else:
        h0, c0 = hx, None
    if packed:
        batch_sizes = sizes.tolist()
        x = data
    else:
        seq = data.transpose(0, 1) if batch_first else data
        steps, batch = seq.shape[0], seq.shape[1]
        batch_sizes = [batch] * steps
        x = seq.reshape(steps * batch, seq.shape[-1])
    out, h_n, c_n = _rnn_layers(mode, x, batch_sizes, h0, c0, params, has_biases, num_layers,
                                dropout, train, bidirectional)
    if not packed:
        out = out.reshape(steps, batch, out.shape[-1])
        if batch_first:
            out = out.transpose(0, 1)
    return (out, h_n, c_n) if is_lstm else (out, h_n)


def lstm(*args) -> tuple:
    """torch.lstm: the ATen form of nn.LSTM's forward, (output, h_n, c_n); ``hx`` is (h_0, c_0).

    >>> import jtorch as torch
    >>> x, h = torch.ones(5, 2, 3), torch.zeros(1, 2, 4)
    >>> params = [torch.full((16, 3), 0.1), torch.full((16, 4), 0.1)]
    >>> [tuple(t.shape) for t in torch.lstm(x, (h, h), params, False, 1, 0.0, False, False, False)]
    [(5, 2, 4), (1, 2, 4), (1, 2, 4)]
    """
    return _rnn_aten("LSTM", "lstm", args)


def gru(*args) -> tuple:
    """torch.gru: the ATen form of nn.GRU's forward, (output, h_n)."""
    return _rnn_aten("GRU", "gru", args)


def rnn_tanh(*args) -> tuple:
    """torch.rnn_tanh: the ATen form of nn.RNN's forward (tanh), (output, h_n)."""
    return _rnn_aten("RNN_TANH", "rnn_tanh", args)


def rnn_relu(*args) -> tuple:
    """torch.rnn_relu: the ATen form of nn.RNN's forward (relu), (output, h_n)."""
    return _rnn_aten("RNN_RELU", "rnn_relu", args)


# -- Tensor methods (installed by ops/tensor_methods.py) --------------------------------------------

METHODS = {
    "histogram": _histogram_method,
    "igamma": _igamma_method(S.igamma_op, "igamma", False),
    "igamma_": _igamma_method(S.igamma_op, "igamma_", True),
    "igammac": _igamma_method(S.igammac_op, "igammac", False),
    "igammac_": _igamma_method(S.igammac_op, "igammac_", True),
}
