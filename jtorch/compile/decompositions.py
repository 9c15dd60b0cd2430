"""Decompositions: composite ops rewritten into registry primitives so that fusion groups them.

Softmax, layer norm or a variance is one opaque node when traced, and the "numba" backend
cannot see into it: it fuses pointwise chains and row groups (pointwise ops with sum, mean,
amax, amin or prod over the last dim), so such a node is a wall between two runs it could
have made one kernel. Each decomposition here is a Python function written with jtorch ops;
``decompose`` traces it over the node's fake values with the tracer (which records the
nodes and their ``meta["val"]`` as it does for a user's function) and splices those nodes in
where the op stood.

A decomposition computes what the op's kernel computes, to rounding: float16 in float32,
rounded once at the end, as the kernels do. A node stays as it is where that cannot be
promised: other dtypes, a result layout other than the op's, symbolic sizes, gradients (the
op's own backward is better and fused kernels run eagerly with grads anyway), edge cases
eager answers with a warning, and whatever the function declines (it raises ``Skip``).
The backend calls ``decompose(graph, DEFAULT)``: a new graph, ``graph`` itself unchanged.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable

from .. import dispatch
from .. import dtypes as _dt
from ..kernels.defs.reduction import kept_shape, reduced_dims
from ..kernels.registry import OpDef
from ..shape import wrap_dim
from ..tensor import Tensor
from . import logs
from .errors import Unsupported
from .graph import Graph, Node, map_arg
from .symbolic import has_symbols
from .tracer import Tracer, fake_of

_F16, _F32, _F64 = _dt.float16, _dt.float32, _dt.float64
_FLOATS = (_F16, _F32, _F64)
_I64 = _dt.int64


class Skip(Exception):
    """A decomposition declines this call: the node stays as it is."""


# -- helpers the decompositions share ---------------------------------------------------------

def _upcast(x: Tensor, d) -> Tensor:
    """``x`` cast to the op's result dtype ``d`` (as the kernels cast their input first), then
    to the dtype they compute in (float16 runs in float32)."""
    if d not in _FLOATS:
        raise Skip
    if x.dtype is not d:
        x = x.to(d)
    return x.to(_F32) if d is _F16 else x


def _round(r: Tensor, d) -> Tensor:
    """The result rounded once to the op's dtype."""
    return r if r.dtype is d else r.to(d)


def _shaped(t: Tensor, shape: tuple) -> Tensor:
    return t if tuple(t.shape) == tuple(shape) else t.reshape(shape)


def _trailing(dims: tuple, nd: int) -> bool:
    return dims == tuple(range(nd - len(dims), nd))


# -- softmax, log_softmax, logsumexp ----------------------------------------------------------

def _softmax(x: Tensor, dim=None, dtype=None, *, log: bool = False) -> Tensor:
    """exp(x - max) / sum; log: (x - max) - log(sum(exp(x - max))). The max keeps exp from
    overflowing; an all -inf or a +inf row gives nan, as the kernel does."""
    if dim is None:
        raise Skip
    d = x.dtype if dtype is None else _dt.to_dtype(dtype)
    if x.ndim and x.shape[wrap_dim(dim, x.ndim)] == 0:
        raise Skip  # amax of an empty dim raises; softmax gives an empty result
    xc = _upcast(x, d)
    s = xc - xc.amax(dim, keepdim=True)
    if log:
        r = s - s.exp().sum(dim, keepdim=True).log()
    else:
        e = s.exp()
        r = e * e.sum(dim, keepdim=True).reciprocal()  # one division a row, as the kernel
    return _round(r, d)


def _log_softmax(x: Tensor, dim=None, dtype=None) -> Tensor:
    return _softmax(x, dim, dtype, log=True)


def _logsumexp(x: Tensor, dim=None, keepdim: bool = False) -> Tensor:
    """log(sum(exp(x - m))) + m with m the max, taken as 0 where it is infinite (an all -inf
    slice gives -inf, a +inf gives +inf, as the kernel does)."""
    if x.dtype not in _FLOATS:
        raise Skip  # integer inputs give the default float dtype
    nd = x.ndim
    dims = reduced_dims(dim, nd)
    if any(x.shape[k] == 0 for k in dims):
        raise Skip  # amax of an empty slice raises; logsumexp gives -inf
    xc, red, shape = _rows_view(_upcast(x, x.dtype), dims)
    m = xc.amax(red, keepdim=True)
    m = m.where(m.isfinite(), 0.0)  # a nan max: x - 0 keeps the nan
    r = (xc - m).exp().sum(red, keepdim=True).log() + m
    return _round(_shaped(r, kept_shape(shape, dims, keepdim)), x.dtype)


def _rows_view(x: Tensor, dims: tuple) -> tuple:
    """(x, the dims to reduce, x's shape): trailing reduced dims flattened into one last dim,
    so that the reductions run over rows (a view when ``x`` is contiguous)."""
    nd = x.ndim
    shape = tuple(x.shape)
    if not _trailing(dims, nd) or (len(dims) == 1 and nd):
        return x, dims, shape
    lead = shape[:nd - len(dims)]
    return x.reshape(*lead, math.prod(shape[nd - len(dims):])), -1, shape


# -- moments: var, std, var_mean, std_mean ----------------------------------------------------

def _wide(dev: Tensor) -> Tensor:
    """Float32 deviations from the mean in float64, as they are squared: past |x - mean| ~
    1.8e19 a float32 square overflows where the variance or its root may be finite (torch's
    moments are float64). The cast fuses (``passes.float_casts``); the squares' loop runs at
    half the float32 width (a compiled var of (4096, 1024) 0.60 -> 0.86 ms on one thread)."""
    return dev.to(_F64)


def _moments(x: Tensor, dim=None, unbiased=None, keepdim: bool = False, correction=None, *,
             root: bool = False, with_mean: bool = False):
    """The kernel's two passes: the mean, then the squared deviations from it, over
    N - correction. Trailing dims (group and instance norm) are flattened into rows."""
    if dim.__class__ is bool:  # var(x, False): the unbiased flag
        unbiased, dim = dim, None
    c = correction if correction is not None else (0 if unbiased is False else 1)
    d = x.dtype
    nd = x.ndim
    dims = reduced_dims(dim, nd)
    n = math.prod(x.shape[k] for k in dims)
    if n - c <= 0:
        raise Skip  # eager warns and gives inf or nan
    xc, red, shape = _rows_view(_upcast(x, d), dims)
    m = xc.mean(red, keepdim=True)
    dev = _wide(xc - m) if d is _F32 else xc - m  # (float16's squares fit float32)
    sq = dev * dev
    v = sq.mean(red, keepdim=True) if c == 0 else sq.sum(red, keepdim=True) / float(n - c)
    if root:
        v = v.sqrt()
    out = kept_shape(shape, dims, keepdim)
    v = _round(_shaped(v, out), d)
    return (v, _round(_shaped(m, out), d)) if with_mean else v


def _var(x, dim=None, unbiased=None, keepdim=False, correction=None):
    return _moments(x, dim, unbiased, keepdim, correction)


def _std(x, dim=None, unbiased=None, keepdim=False, correction=None):
    return _moments(x, dim, unbiased, keepdim, correction, root=True)


def _var_mean(x, dim=None, unbiased=None, keepdim=False, correction=None):
    return _moments(x, dim, unbiased, keepdim, correction, with_mean=True)


def _std_mean(x, dim=None, unbiased=None, keepdim=False, correction=None):
    return _moments(x, dim, unbiased, keepdim, correction, root=True, with_mean=True)


def _moments_rows(x: Tensor, dim=None, unbiased=None, keepdim=False, correction=None) -> bool:
    if dim.__class__ is bool:
        dim = None
    return x.ndim > 0 and _trailing(reduced_dims(dim, x.ndim), x.ndim)


# -- layer norm -------------------------------------------------------------------------------

def _layer_norm(x: Tensor, weight, bias, *, normalized_shape, eps: float) -> tuple:
    """(out, mean, rstd): the row mean, the biased variance, rsqrt(var + eps), then weight and
    bias. A normalized shape of several dims is one flattened row."""
    d = x.dtype
    if d not in (_F32, _F64):
        raise Skip  # the op's kernel is float32/float64 only
    k = len(normalized_shape)
    n = math.prod(normalized_shape)
    if n == 0:
        raise Skip  # the kernel's 0/0 statistics
    shape = tuple(x.shape)
    lead = shape[:len(shape) - k]
    xv = x if k == 1 else x.reshape(*lead, n)
    mean = xv.mean(-1, keepdim=True)
    dev = xv - mean
    rstd = ((dev * dev).mean(-1, keepdim=True) + eps).rsqrt()
    y = dev * rstd
    if weight is not None:
        y = y * (weight if k == 1 else weight.reshape(n))
    if bias is not None:
        y = y + (bias if k == 1 else bias.reshape(n))
    stat = lead + (1,) * k
    return _shaped(y, shape), _shaped(mean, stat), _shaped(rstd, stat)


# -- nll_loss ---------------------------------------------------------------------------------

def _nll_loss(x: Tensor, target: Tensor, weight=None, *, reduction: str = "mean",
              ignore_index: int = -100) -> Tensor:
    """-x[n, target[n]] * weight[target[n]] by ``gather``, 0 where the target is ignored;
    'mean' divides by the summed weight of the counted targets (nan when it is 0). A target
    out of range raises gather's RuntimeError, not the kernel's IndexError."""
    d = x.dtype
    if reduction not in ("none", "mean", "sum"):
        raise Skip
    cdim = 0 if x.ndim == 1 else 1
    t = target if target.dtype is _I64 else target.to(_I64)
    valid = t != ignore_index
    safe = t.where(valid, 0)
    xc = _upcast(x, d)
    picked = xc.gather(cdim, safe.unsqueeze(cdim)).squeeze(cdim)
    if weight is None:
        losses = (-picked).where(valid, 0.0)
        total_weight = valid.to(xc.dtype).sum() if reduction == "mean" else None
    else:
        w = _upcast(weight, d).take(safe).where(valid, 0.0)
        losses = (-(picked * w)).where(valid, 0.0)
        total_weight = w.sum() if reduction == "mean" else None
    if reduction == "none":
        return _round(losses, d)
    total = losses.sum()
    if reduction == "sum":
        return _round(total, d)
    return _round((total / total_weight).where(total_weight != 0, math.nan), d)


# -- the table --------------------------------------------------------------------------------

DECOMPOSITIONS: dict[str, Callable] = {
    "softmax": _softmax,
    "log_softmax": _log_softmax,
    "logsumexp": _logsumexp,
    "native_layer_norm": _layer_norm,
    "var": _var,
    "std": _std,
    "var_mean": _var_mean,
    "std_mean": _std_mean,
    "nll_loss": _nll_loss,
    "nll_loss2d": _nll_loss,
}

# Per op, the calls worth decomposing (ops not listed: every call). Row fusion takes
# reductions over the last dim (trailing dims are flattened into it); elsewhere the pieces
# run as separate reduction and pointwise kernels. Measured (float32, one thread, a loaded
# 2-core machine): softmax over dim 0 of 1024x1024 went from 5.8 ms eager to 1.6 ms and
# logsumexp from 13.9 ms to 1.4 ms (the kernels' strided paths are slow), but batch norm's
# var_mean over (0, 2, 3) of (32, 64, 28, 28) from 1.3 ms to 1.6 ms: the moments only over
# trailing dims (layer, group and instance norm), where group norm went from 1.25 to 1.2 ms.
PROFITABLE: dict[str, Callable[..., bool]] = {
    "var": _moments_rows,
    "std": _moments_rows,
    "var_mean": _moments_rows,
    "std_mean": _moments_rows,
}

# What the "numba" backend applies. nll_loss stays whole: its gather is no fusion gain, and a
# target out of range would raise another error than eager's IndexError.
DEFAULT: frozenset = frozenset(["softmax", "log_softmax", "logsumexp", "native_layer_norm",
                                "var", "std", "var_mean", "std_mean"])


# -- the pass ---------------------------------------------------------------------------------

# decompositions that divide by a reduced size (N - correction): not in graphs with dynamic
# sizes, where a node's traced size may stand for a dynamic one
_BAKES_SIZE = frozenset(["var", "std", "var_mean", "std_mean"])


def decompose(graph: Graph, names: Iterable[str] | None = None, *,
              profitable_only: bool = True) -> Graph:
    """A copy of ``graph`` where each call of an op in ``names`` (default: every op in
    ``DECOMPOSITIONS``) is the nodes its decomposition records; ``graph`` itself is not
    changed (it is returned when no node was decomposed). ``profitable_only``: only the
    calls ``PROFITABLE`` admits; False: every call the decomposition computes exactly
    enough."""
    table = DECOMPOSITIONS
    if names is not None:
        names = set(names)
        unknown = names - set(DECOMPOSITIONS)
        if unknown:
            raise ValueError(f"no decomposition for {sorted(unknown)}; known: "
                             f"{sorted(DECOMPOSITIONS)}")
        table = {k: v for k, v in DECOMPOSITIONS.items() if k in names}
    plans: dict = {}
    for n in graph.nodes:
        name = _op_name(n)
        if name in _BAKES_SIZE and graph.symbols:
            continue  # a value's traced size may stand for a dynamic one (a slice's does)
        if name in table and _eligible(n, name, profitable_only):
            traced = _trace(table[name], n)
            if traced is not None:
                plans[n] = traced
    if not plans:
        return graph
    g2 = Graph()
    g2.results_fresh = graph.results_fresh  # (a decomposition's last node is new memory)
    env: dict = {}
    for n in graph.nodes:
        if n in plans:
            env[n] = _splice(g2, n, plans[n], env)
        elif n.op == "call_function" and n.target is operator.getitem and n.args[0] in plans:
            env[n] = env[n.args[0]][n.args[1]]
        else:
            new = env[n] = g2.node_copy(n, lambda a: env[a])
            _remap_meta(new, lambda a: env[a])
    g2.symbols = [(s, env[p], d) for s, p, d in graph.symbols if p in env]
    g2.lint()
    return g2


def _op_name(n: Node) -> str | None:
    return n.target.name if n.op == "call_function" and isinstance(n.target, OpDef) else None


def _eligible(n: Node, name: str, profitable_only: bool) -> bool:
    """Whether the node may be replaced at all: no writes, tensor values of static sizes,
    results that need no gradient, and getitem as the only user of a tuple of results."""
    val = n.meta.get("val")
    outs = val if isinstance(val, tuple) else (val,)
    if n.meta.get("mutates") or not all(isinstance(v, Tensor) for v in outs):
        return False
    if isinstance(val, tuple) and not all(
            u.op == "call_function" and u.target is operator.getitem and u.args[0] is n and
            isinstance(u.args[1], int) and 0 <= u.args[1] < len(val) for u in n.users):
        return False
    ins = [a.meta.get("val") for a in n.all_input_nodes]
    if not all(isinstance(v, Tensor) for v in ins):
        return False
    if any(v.requires_grad for v in outs) or \
            any(has_symbols(tuple(v.shape)) for v in ins + list(outs)):
        return False
    if profitable_only and name in PROFITABLE:
        args = map_arg(n.args, lambda a: a.meta["val"])
        kwargs = map_arg(n.kwargs, lambda a: a.meta["val"])
        try:
            return bool(PROFITABLE[name](*args, **kwargs))
        except (TypeError, ValueError, IndexError, RuntimeError):
            return False
    return True


def _no_run(seg, inputs):
    raise Unsupported("a decomposition read tensor values")


def _trace(fn: Callable, n: Node):
    """(the traced nodes' graph, its placeholders' original nodes, its result nodes) for
    ``fn`` over the fake values of ``n``'s arguments, or None where it does not apply."""
    gs = dispatch.grad_state
    g0 = gs.enabled
    gs.enabled = False  # no autograd: the values need no gradient (``_eligible``)
    try:
        t = Tracer({}, {}, True, _no_run)
        origin: dict = {}  # placeholder of the traced graph -> the node it stands for
        fakes: dict = {}

        def fake(a: Node) -> Tensor:
            f = fakes.get(a)
            if f is None:
                f = fakes[a] = fake_of(a.meta["val"])
                p = t.seg.graph.placeholder(a.name)
                p.meta["val"] = a.meta["val"]
                t.seg.env[id(f._a)] = [p, f._a, None]
                origin[p] = a
            return f

        args, kwargs = map_arg(n.args, fake), map_arg(n.kwargs, fake)
        with t:
            res = fn(*args, **kwargs)
    except Skip:
        return None
    except (Unsupported, RuntimeError, ValueError, TypeError, IndexError) as e:
        logs.log("graph", f"decompose: {n.name} ({_op_name(n)}) kept: {type(e).__name__}: {e}")
        return None
    finally:
        gs.enabled = g0
    res_t = res if isinstance(res, tuple) else (res,)
    val = n.meta["val"]
    want = val if isinstance(val, tuple) else (val,)
    if len(res_t) != len(want) or not all(isinstance(r, Tensor) for r in res_t):
        return None
    nodes = []
    for r, w in zip(res_t, want):
        e = t.seg.env.get(id(r._a))
        if e is None or _aliases_input(e[0]) or not _same_value(e[0].meta.get("val"), w):
            return None  # an input itself, or a value the op would not give
        nodes.append(e[0])
    if any(p.op == "placeholder" and p not in origin for p in t.seg.graph.nodes):
        return None  # a tensor the function made outside the graph
    return t.seg.graph, origin, tuple(nodes) if isinstance(res, tuple) else nodes[0]


def _aliases_input(node: Node) -> bool:
    while "view_of" in node.meta:
        node = node.meta["view_of"]
    return node.op == "placeholder"


def _same_value(a, b) -> bool:
    """Same shape, dtype, gradient flag and layout (strides of dims longer than one)."""
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        return False
    if tuple(a.shape) != tuple(b.shape) or a.dtype is not b.dtype or \
            a.requires_grad != b.requires_grad:
        return False
    if a.numel() == 0:
        return True
    return all(s == t for n, s, t in zip(a.shape, a.stride(), b.stride()) if n > 1)


def _splice(g2: Graph, n: Node, traced, env: dict):
    """The traced nodes copied into ``g2`` (named after ``n``); returns the result node(s)."""
    sub, origin, results = traced
    local: dict = {p: env[a] for p, a in origin.items()}
    grad = n.meta.get("grad_enabled")
    for s in sub.nodes:
        if s.op == "placeholder":
            continue
        new = local[s] = g2.create_node(s.op, s.target, map_arg(s.args, local.__getitem__),
                                        map_arg(s.kwargs, local.__getitem__),
                                        name=f"{n.name}_{s.name}")
        new.meta = dict(s.meta)
        _remap_meta(new, local.__getitem__)
        if grad is not None:
            new.meta["grad_enabled"] = grad
    return map_arg(results, local.__getitem__)


def _remap_meta(node: Node, fn: Callable) -> None:
    """Node references in meta (the input a view aliases, the inputs an op writes) moved to
    the new graph's nodes."""
    if "view_of" in node.meta:
        node.meta["view_of"] = fn(node.meta["view_of"])
    if "mutated" in node.meta:
        node.meta["mutated"] = [fn(m) for m in node.meta["mutated"]]
