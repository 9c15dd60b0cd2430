"""``vmap``: a function of one example run over a batch, as batched kernel calls.

While a vmapped function runs, a ``dispatch.mode`` (one ``_Level`` per nested vmap) takes every
op call. A batched value is a stand-in tensor with the example's geometry (a ``MetaArray``,
as the tracer's fakes are), so each op's meta rule checks the call per example and raises
torch's errors with the example's shapes; the level keeps the physical tensor behind it, with
the batch as its leading dim. An op over batched values runs once on the physical tensors by
its family's rule: pointwise ops align their operands (batch first, the example's dims
right-aligned) and broadcast; reductions, scans, softmax, sorts and views shift their dims
past the batch dim; matrix products become batched matmuls; convolutions fold the batch into
the images. Any other op runs once per example and the results are stacked (a slow but
correct path). Ops over no batched value run as they are, under the enclosing mode (an outer
vmap, a tracer), so nesting composes.

Gradients compose both ways: the physical computation records autograd as any eager code
does (gradients of a vmapped function's results reach its inputs), and an op over batched
values that require grad records its node on the stand-ins, so ``autograd.grad`` inside the
function (``func.grad``) differentiates per example, its gradient rules batched in turn.
"""

from __future__ import annotations

import contextlib
import functools
import weakref

import numpy as np

from .. import dispatch
from .. import dtypes as _dtypes
from .. import meta as _meta_mod
from ..amp import state as _amp
from ..device import CPU
from ..kernels.plan import Inplace, View
from ..meta import MetaArray, storage_for
from ..shape import elem_offset, wrap_dim
from ..tensor import Tensor

_TENSOR = Tensor
_NDARRAY = np.ndarray
_new = object.__new__
_REDISPATCH = object()  # ``_Level.run`` without the call's plan: the op is called again

_ITEM_MSG = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap "
             "over calling .item() on a Tensor, please try to rewrite what you're doing with "
             "other operations. If error is occurring somewhere inside PyTorch internals, "
             "please file a bug report.")
_FLOW_MSG = ("vmap: It looks like you're attempting to use a Tensor in some data-dependent "
             "control flow. We don't support that yet, please file an issue at "
             "https://github.com/pytorch/pytorch/issues .")
_RANDOM_MSG = ("vmap: called random operation while in randomness error mode. Please either "
               "use the 'same' or 'different' randomness flags on vmap or perform the "
               "randomness operation out of vmap")


def _meta_array(shape: tuple, dtype, strides: tuple, dev, dense: bool) -> MetaArray:
    """``MetaArray(shape, dtype, strides, 0, dev)`` from values already of its field types
    (a NumPy dtype, tuples), ``_dense`` given: a stand-in's geometry, made for every result."""
    m = _new(MetaArray)
    m.shape, m.dtype, m.strides, m.offset, m.fake, m._dense, m._flags = \
        shape, dtype, strides, 0, dev, dense, None
    return m


class _Entry(weakref.ref):
    """The weak reference of a ``_Level.vals`` entry to its stand-in's array: the entry goes
    when the array does (``_drop``)."""

    __slots__ = ("key", "vals")


def _drop(ref: _Entry) -> None:
    e = ref.vals.get(ref.key)
    if e is not None and e[0] is ref:  # (not an entry a new array of the same id made)
        del ref.vals[ref.key]


class _Level:
    """One running vmap: its batch size, randomness, the enclosing mode, and the physical
    tensor (batch dim first) behind each of its stand-ins."""

    def __init__(self, size: int, randomness: str) -> None:
        self.size = size
        self.randomness = randomness
        self.outer = dispatch.mode
        self.outer_read = _meta_mod.read_hook
        self.outer_detach = _meta_mod.detach_hook
        # id(stand-in's array) -> (weak reference to that array, physical tensor): an entry
        # lives as long as its array (any tensor viewing it: the stand-in, its aliases, saved
        # values), so a long vmapped function does not keep every value it made
        self.vals: dict = {}
        # tensors made inside the function by unbatched ops (``empty_like`` of a batched
        # value makes its result from the size alone): written from a batched value, such a
        # tensor becomes batched (``promote``) where an argument or a captured tensor raises
        self.fresh = weakref.WeakValueDictionary()
        # unbatched tensors that require grad for a transform inside this vmap only (the
        # leaves ``func.grad`` makes, and what unbatched ops make of them): batched ops over
        # them need no autograd record on the physical tensors, only on the stand-ins
        self.inner = weakref.WeakValueDictionary()

    # -- stand-ins -------------------------------------------------------------------------
    def wrap(self, phys: Tensor) -> Tensor:
        """The stand-in of physical ``phys`` (batch dim first): ``Tensor._make`` spelled out,
        a row-major example with a storage of its own size (the commonest case, cheaply)."""
        a = phys._a
        c = a.__class__
        dev = CPU if c is _NDARRAY else phys.device
        shape = a.shape[1:]
        dt = a.dtype
        if a.flags.c_contiguous:  # the example's strides are the batch's last ones
            fake = _meta_array(shape, dt, a.strides[1:], dev, True)
            n = 1
            for d in shape:
                n *= d
            st = _meta_array((n,), dt, (dt.itemsize,), dev, True)
        else:
            fake = _meta_array(shape, dt, a.strides[1:], dev, False)
            st = storage_for(fake)
        t = _new(Tensor)
        t._a, t._st, t.dtype = fake, st, phys.dtype
        t._requires_grad, t._grad, t.grad_fn, t._base = False, None, None, None
        t._vc, t._retains_grad, t._hooks, t._output_nr = [0], False, None, 0
        key = id(fake)
        ref = _Entry(fake, _drop)
        ref.key, ref.vals = key, self.vals
        self.vals[key] = (ref, phys)
        return t

    def phys(self, x):
        """The physical tensor behind stand-in ``x`` of this level, else None."""
        if x.__class__ is _TENSOR and x._a.__class__ is MetaArray:
            e = self.vals.get(id(x._a))  # aliases (x.detach()) share the stand-in's array
            if e is not None:
                return e[1]
        return None

    # -- the mode --------------------------------------------------------------------------
    def __call__(self, op, args: tuple, plan, params: dict):
        if op.family == "random":
            return self._random(op, args, plan, params)
        batched, outer_grad = self._scan(args)
        if not batched:
            return self.run(op, args, params, plan)
        if not outer_grad and plan is not None and plan.out.__class__ is View and \
                op.name in _GEOMETRY_VIEWS:
            res = self._view(plan.out, args)
            if res is not None:
                self._record(op, args, res, plan, params)
                return res
        rule = _RULES.get(op.name) or _FAMILY_RULES.get(op.family)
        res = None
        gs = dispatch.grad_state
        g0 = gs.enabled
        if g0 and not outer_grad:
            gs.enabled = False  # the physical values need no autograd record
        # the rule's calls run under the enclosing mode (``_Outer``, inlined: every call)
        prev = dispatch.mode, _meta_mod.read_hook, _meta_mod.detach_hook
        dispatch.mode, _meta_mod.read_hook, _meta_mod.detach_hook = \
            self.outer, self.outer_read, self.outer_detach
        try:
            if rule is not None:
                res = rule(self, op, args, plan, params)
            if res is None:
                res = self._per_example(op, args, plan, params)
        finally:
            dispatch.mode, _meta_mod.read_hook, _meta_mod.detach_hook = prev
            gs.enabled = g0
        self._record(op, args, res, plan, params)
        return res

    def _view(self, v: View, args: tuple):
        """A view of a batched stand-in made from the plan its meta rule gave for the example:
        the same geometry over the physical array, the batch dim (its stride) in front. No
        second dispatch; None where the physical value is not a CPU array."""
        x = args[v.src]
        e = self.vals.get(id(x._a))
        if e is None:
            return None
        p = e[1]
        a = p._a
        if a.__class__ is not _NDARRAY or v.dtype is not None:
            return None
        if v.perm is not None:
            r = a.transpose((0,) + tuple([d + 1 for d in v.perm]))
        elif v.key is not None:
            k = v.key
            r = a[(slice(None),) + (k if k.__class__ is tuple else (k,))]
        elif v.reshape is not None and a.flags.c_contiguous:
            r = a.reshape((a.shape[0],) + tuple(v.reshape))
        else:
            st = p._st
            isz = a.itemsize
            try:
                r = np.ndarray((a.shape[0],) + tuple(v.shape), a.dtype, st,
                               (elem_offset(a, st) + v.offset) * isz,
                               (a.strides[0],) + tuple([s * isz for s in v.strides]))
            except (TypeError, ValueError, BufferError):
                return None
        return self.wrap(p._view(r))

    def _scan(self, args) -> tuple:
        """(whether a value of ``args`` is batched here, whether a gradient outside this vmap
        may flow through the call): a batched value whose physical tensor requires grad, or
        an unbatched one that requires grad and is not this vmap's own (``inner``). One pass
        over the arguments, ``phys`` inlined: every op call under vmap asks both."""
        vals = self.vals
        batched = outer = False
        for a in args:
            c = a.__class__
            if c is _TENSOR:
                arr = a._a
                if arr.__class__ is MetaArray:
                    e = vals.get(id(arr))  # aliases (x.detach()) share the stand-in's array
                    if e is not None:
                        batched = True
                        if e[1]._requires_grad:
                            outer = True
                        continue
                if a._requires_grad and not outer and self.inner.get(id(a)) is not a:
                    outer = True
            elif c is tuple or c is list or isinstance(a, (tuple, list)):
                b, o = self._scan(a)
                batched, outer = batched or b, outer or o
            elif isinstance(a, _TENSOR) and a._requires_grad and not outer and \
                    self.inner.get(id(a)) is not a:  # a subclass (nn.Parameter): never batched
                outer = True
        return batched, outer

    def _batched(self, a) -> bool:
        if isinstance(a, (tuple, list)):
            return self._scan(a)[0]
        return self.phys(a) is not None

    def run(self, op, args: tuple, params: dict, plan=_REDISPATCH):
        """``op`` on ``args`` under the enclosing mode (physical values or unbatched ones).
        Given the call's ``plan`` (its meta rule already ran on these very arguments), the
        call goes on from there: to the enclosing mode, else to the kernel."""
        if plan is _REDISPATCH:
            with _outer(self):
                res = op(*args, **params)
        else:
            outer = self.outer
            prev = dispatch.mode, _meta_mod.read_hook, _meta_mod.detach_hook
            dispatch.mode, _meta_mod.read_hook, _meta_mod.detach_hook = \
                outer, self.outer_read, self.outer_detach
            try:
                if outer is not None:
                    res = outer(op, args, plan, params)
                elif plan is None:  # pointwise: its params are out= and inplace=
                    res = dispatch.pointwise(op, args, **params)
                else:
                    res = dispatch.run_plan(op, args, plan)
            finally:
                dispatch.mode, _meta_mod.read_hook, _meta_mod.detach_hook = prev
        inner = None
        for r in res if isinstance(res, tuple) else (res,):
            if r.__class__ is not _TENSOR:
                continue
            if r._base is None and not any(r is a for a in args):
                self.fresh[id(r)] = r
            if r._requires_grad:
                if inner is None:
                    inner = all(self.inner.get(id(a)) is a for a in args
                                if isinstance(a, _TENSOR) and a._requires_grad)
                if inner:
                    self.inner[id(r)] = r
        return res

    def promote(self, t, value=None) -> bool:
        """Make ``t``, an unbatched tensor this function made, batched in place: its physical
        tensor holds ``value`` (default: t's values) for every example. False for any
        other tensor (an argument, a captured one, a view)."""
        if t.__class__ is not _TENSOR or self.fresh.get(id(t)) is not t:
            return False
        with _outer(self):
            src = t if value is None else value
            p = src.unsqueeze(0).expand((self.size,) + tuple(t.shape)).clone()
        w = self.wrap(p)  # (its entry lives as long as t, which takes its array)
        t._a, t._st = w._a, w._st
        del self.fresh[id(t)]
        return True

    def _record(self, op, args: tuple, res, plan, params: dict) -> None:
        """Autograd over the stand-ins: gradients per example (``func.grad`` inside vmap)."""
        if dispatch.grad_hook is None or not dispatch.grad_state.enabled:
            return
        for a in args:
            if isinstance(a, _TENSOR) and a._requires_grad:
                break
        else:
            return
        if self.outer_read is not None:
            self._settle(args)
        if plan is None:  # pointwise
            dispatch.grad_hook(op, args, res, None)
        elif not op.differentiable:
            return
        else:
            dispatch.grad_hook(op, args, res, plan.kw)

    def _settle(self, args: tuple) -> None:
        """Under ``jtorch.compile``, an unbatched operand that requires grad may be a traced
        value whose node is the tracer's placeholder: the node recorded here would keep that
        placeholder as its edge after the graph runs (the gradient lost). Such an operand
        breaks the tracer's graph first, which makes it the real tensor with its real node."""
        for a in args:
            if isinstance(a, _TENSOR) and a.grad_fn is not None and a.grad_fn.placeholder:
                # ("requires_grad": an enclosing vmap passes it on to the tracer)
                self.outer_read(a, "Tensor.requires_grad (an autograd record under vmap)")
                return

    # -- operands ----------------------------------------------------------------------------
    def batch_first(self, x, nd: int | None = None):
        """Physical ``x`` with its example dims right-aligned to ``nd`` (batch dim first,
        size-1 dims between), or x itself when it is not batched."""
        p = self.phys(x)
        if p is None:
            return x
        if nd is not None and p._a.ndim - 1 < nd:
            with _outer(self):
                p = p.reshape((p.shape[0],) + (1,) * (nd - p._a.ndim + 1) + tuple(p.shape[1:]))
        return p

    def expanded(self, x):
        """Physical ``x``, or unbatched ``x`` expanded along a new batch dim."""
        p = self.phys(x)
        if p is not None:
            return p
        with _outer(self):
            return x.unsqueeze(0).expand((self.size,) + tuple(x.shape))

    def _per_example(self, op, args: tuple, plan, params: dict):
        """The slow path: ``op`` once per example, the results stacked."""
        if op.data_dependent:
            raise RuntimeError("vmap: We do not support batching operators that can output "
                               f"dynamic shape. Attempted to vmap over aten::{op.name}. Please "
                               "file an issue at https://github.com/pytorch/pytorch/issues if "
                               "you need this feature.")
        inplace = plan is None and (params.get("inplace") or params.get("out") is not None) or \
            plan is not None and isinstance(plan.out, Inplace)
        target = None
        if inplace:
            target = args[0] if plan is None else args[plan.out.src]
            if self.phys(target) is None and not self.promote(target):
                raise RuntimeError(_inplace_msg(op))
        outs = []
        with _outer(self):
            for b in range(self.size):
                ex = tuple(_example(self, a, b) for a in args)
                outs.append(op(*ex, **params))
            if inplace:
                target._vc[0] += 1
                return target
            from ..ops.views import stack

            first = outs[0]
            if isinstance(first, tuple):
                vals = [self.wrap(stack([o[k] for o in outs])) for k in range(len(first))]
                return type(first)(*vals) if hasattr(first, "_fields") else tuple(vals)
            return self.wrap(stack(outs))

    # -- random ops ------------------------------------------------------------------------
    def _random(self, op, args: tuple, plan, params: dict):
        if self.randomness == "error":
            raise RuntimeError(_RANDOM_MSG)
        inplace = plan is not None and isinstance(plan.out, Inplace)
        if self.randomness == "same":
            if not inplace:
                if any(self._batched(a) for a in args):
                    return self._per_example_same(op, args, params)
                return self.run(op, args, params)
            t = args[plan.out.src]
            p = self.phys(t)
            if p is None:
                return self.run(op, args, params)
            with _outer(self):
                one = op(*[p[0].clone() if a is t else a for a in args], **params)
                p.copy_(one.unsqueeze(0).expand(tuple(p.shape)))
            t._vc[0] += 1
            return t
        # "different": one draw over the whole batch
        if inplace:
            t = args[plan.out.src]
            if self.phys(t) is None and not self.promote(t):
                raise RuntimeError(_inplace_msg(op))
            with _outer(self):
                op(*[self.phys(a) if a is t else self.expanded(a) if isinstance(a, _TENSOR)
                     else a for a in args], **params)
            t._vc[0] += 1
            return t
        if not args:  # a factory: a batch of draws
            kw = dict(params)
            key = "size" if "size" in kw else "shape"
            if key in kw:
                kw[key] = (self.size,) + tuple(kw[key])
                with _outer(self):
                    return self.wrap(op(**kw))
        return self._per_example(op, args, plan, params)

    def _per_example_same(self, op, args, params):
        raise RuntimeError(f"vmap: randomness='same' does not support {op.name} over a batched "
                           "input")


class _Outer:
    """Runs a block under the enclosing mode (and its hooks)."""

    __slots__ = ("lvl", "prev")

    def __init__(self, lvl: _Level) -> None:
        self.lvl = lvl

    def __enter__(self):
        self.prev = dispatch.mode, _meta_mod.read_hook, _meta_mod.detach_hook
        lvl = self.lvl
        dispatch.mode, _meta_mod.read_hook, _meta_mod.detach_hook = \
            lvl.outer, lvl.outer_read, lvl.outer_detach

    def __exit__(self, *exc):
        dispatch.mode, _meta_mod.read_hook, _meta_mod.detach_hook = self.prev
        return False


_NULL = contextlib.nullcontext()


def _outer(lvl: _Level):
    """The enclosing mode for a block: a switch where ``lvl`` is the running mode, nothing
    where the block already runs outside it (a batching rule: ``_Level.__call__`` switched)."""
    return _Outer(lvl) if dispatch.mode is lvl else _NULL


_active: list = []  # the running levels, innermost last


def mark_inner(t: Tensor) -> None:
    """``t`` requires grad for a transform inside the innermost running vmap only."""
    if _active:
        _active[-1].inner[id(t)] = t


def _example(lvl: _Level, a, b: int):
    if isinstance(a, (tuple, list)):
        return type(a)(_example(lvl, x, b) for x in a)
    p = lvl.phys(a)
    return a if p is None else p[b]


def _inplace_msg(op) -> str:
    return (f"vmap: {op.name}_(self, *extra_args) is not possible because there exists a "
            "Tensor `other` in extra_args that has more elements than `self`. This happened "
            "due to `other` being vmapped over but `self` not being vmapped over in a vmap. "
            "Please try to use out-of-place operators instead of inplace arithmetic. If said "
            "operator is being called inside the PyTorch framework, please file a bug report "
            "instead.")


# -- batching rules ------------------------------------------------------------------------------

def _pointwise(lvl: _Level, op, args: tuple, plan, params: dict):
    nd = 0
    for a in args:
        if isinstance(a, _TENSOR):
            nd = max(nd, a._a.ndim)
    out = params.get("out")
    inplace = params.get("inplace", False) or (out is not None and args and out is args[0])
    if inplace or out is not None:
        target = args[0] if inplace else out
        if lvl.phys(target) is None and not lvl.promote(target):
            # an unbatched result written from batched operands: the shapes cannot agree
            shape = (lvl.size,) + tuple(target.shape)
            raise RuntimeError(f"output with shape {list(target.shape)} doesn't match the "
                               f"broadcast shape {list(shape)}")
        nd = max(nd, target._a.ndim)
    phys = tuple(lvl.batch_first(a, nd) if isinstance(a, _TENSOR) else a for a in args)
    with _outer(lvl):
        if inplace:
            dispatch.pointwise(op, phys, inplace=True)
            args[0]._vc[0] += 1
            return args[0]
        if out is not None:
            dispatch.pointwise(op, phys, out=lvl.batch_first(out, nd))
            return out
        return lvl.wrap(dispatch.pointwise(op, phys))


def _dims(d, nd: int):
    """Logical dim(s) ``d`` of an ``nd``-dim example as physical ones (past the batch dim)."""
    if isinstance(d, (tuple, list)):
        return tuple(wrap_dim(x, max(nd, 1)) + 1 for x in d)
    return wrap_dim(d, max(nd, 1)) + 1


def _reduce(lvl: _Level, op, args: tuple, plan, params: dict):
    if len([a for a in args if isinstance(a, _TENSOR)]) != 1 or op.name.startswith("norm"):
        return None
    x = args[0]
    nd = x._a.ndim
    p = lvl.phys(x)
    kw = dict(params)
    with _outer(lvl):
        if kw.get("dim") is None or (isinstance(kw.get("dim"), (tuple, list)) and not kw["dim"]):
            keep = kw.get("keepdim", False)
            flat = p.reshape(p.shape[0], -1)
            kw["dim"], kw["keepdim"] = 1, False
            res = op(flat, *args[1:], **kw)
            if keep:
                res = _map(res, lambda r: r.reshape((r.shape[0],) + (1,) * nd))
            return _map(res, lvl.wrap)
        kw["dim"] = _dims(kw["dim"], nd)
        if op.name == "sum" and _sums_ones(p, kw):
            # every summed dim has size 1 (a gradient summed to an example's shape): one
            # pointwise pass (0 + x, as the sum's accumulator) instead of the reduction's loops
            res = p + 0.0
            return lvl.wrap(res if kw.get("keepdim") else res.reshape(
                [n for d, n in enumerate(p.shape) if d not in _dim_set(kw["dim"])]))
        return _map(op(p, *args[1:], **kw), lvl.wrap)


def _dim_set(d) -> tuple:
    return tuple(d) if isinstance(d, (tuple, list)) else (d,)


def _sums_ones(p, kw: dict) -> bool:
    """Whether a physical sum over ``kw["dim"]`` adds one element per result (real floating
    dtypes, no dtype= cast), so the values pass through."""
    if kw.get("dtype") is not None or not p.dtype.is_floating_point or p.dtype.is_complex:
        return False
    shape = p._a.shape
    return all(shape[d] == 1 for d in _dim_set(kw["dim"]))


def _map(res, fn):
    if isinstance(res, tuple):
        vals = [fn(r) for r in res]
        return type(res)(*vals) if hasattr(res, "_fields") else tuple(vals)
    return fn(res)


def _ntensors(args: tuple) -> int:
    n = 0
    for a in args:
        if isinstance(a, _TENSOR):
            n += 1
    return n


def _phys_call(op, p: Tensor, kw: dict):
    """``op(p, **kw)`` on one physical tensor; a view op through ``dispatch.view``, whose
    NumPy fast path makes the commonest views without running the meta rule again."""
    if op.cpu_view is not None:
        return dispatch.view(op, p, **kw)
    return op(p, **kw)


def _dim_op(*names):
    """Ops over one batched tensor whose ``names`` params are dims (shifted past the batch)."""
    def rule(lvl, op, args, plan, params):
        x = args[0]
        p = lvl.phys(x)
        if p is None or _ntensors(args) != 1:
            return None
        kw = dict(params)
        for n in names:
            if kw.get(n) is not None:
                kw[n] = _dims(kw[n], x._a.ndim)
        with _outer(lvl):
            if len(args) == 1:
                return _map(_phys_call(op, p, kw), lvl.wrap)
            return _map(op(p, *args[1:], **kw), lvl.wrap)
    return rule


def _same_rank(*names):
    """Ops over several tensors of the example's rank (gathers, scatters, softmax's
    backward): every one gets the batch dim (unbatched ones expanded), dims shift."""
    def rule(lvl, op, args, plan, params):
        if plan is not None and isinstance(plan.out, Inplace) and \
                lvl.phys(args[plan.out.src]) is None:
            return None
        kw = dict(params)
        nd = args[0]._a.ndim
        for n in names:
            if kw.get(n) is not None:
                kw[n] = _dims(kw[n], nd)
        phys = tuple(lvl.expanded(a) if isinstance(a, _TENSOR) else a for a in args)
        with _outer(lvl):
            res = op(*phys, **kw)
        if plan is not None and isinstance(plan.out, Inplace):
            args[plan.out.src]._vc[0] += 1
            return args[plan.out.src]
        return _map(res, lvl.wrap)
    return rule


def _view(lvl, op, args, plan, params):
    x = args[0]
    p = lvl.phys(x)
    kw = dict(params)
    with _outer(lvl):
        kw["shape"] = (p._a.shape[0],) + tuple(kw["shape"])
        return lvl.wrap(_phys_call(op, p, kw))


def _expand(lvl, op, args, plan, params):
    x = args[0]
    size = tuple(params["size"])
    nd = len(size)
    p = lvl.batch_first(x, nd)
    with _outer(lvl):
        return lvl.wrap(op(p, size=(p.shape[0],) + size))


def _permute(lvl, op, args, plan, params):
    x = args[0]
    dims = _dims(tuple(params["dims"]), x._a.ndim) if x._a.ndim else ()
    with _outer(lvl):
        return lvl.wrap(_phys_call(op, lvl.phys(x), {"dims": (0,) + tuple(dims)}))


def _t(lvl, op, args, plan, params):
    x = args[0]
    p = lvl.phys(x)
    with _outer(lvl):
        return lvl.wrap(p.transpose(1, 2) if x._a.ndim == 2 else p)


def _unsqueeze(lvl, op, args, plan, params):
    x = args[0]
    d = wrap_dim(params["dim"], x._a.ndim + 1) + 1
    with _outer(lvl):
        return lvl.wrap(_phys_call(op, lvl.phys(x), {"dim": d}))


def _squeeze(lvl, op, args, plan, params):
    x = args[0]
    kw = dict(params)
    if kw.get("dim") is None:
        kw["dim"] = tuple(i for i, n in enumerate(x.shape) if n == 1)
    if x._a.ndim == 0:
        return lvl.wrap(lvl.phys(x))
    kw["dim"] = _dims(kw["dim"], x._a.ndim)
    with _outer(lvl):
        return _map(_phys_call(op, lvl.phys(x), kw), lvl.wrap)


def _basic_index(lvl, op, args, plan, params):
    """Basic indexing (ints, slices, None, Ellipsis): a view, the batch dim kept first."""
    if len(args) != 1 or params.get("items") is not None:
        return None  # advanced indexing: per example
    key = params["index"]
    key = key if isinstance(key, tuple) else (key,)
    with _outer(lvl):
        return lvl.wrap(_phys_call(op, lvl.phys(args[0]), {"index": (slice(None),) + key}))


def _roll(lvl, op, args, plan, params):
    x = args[0]
    if params.get("dims") is not None:
        return _dim_op("dims")(lvl, op, args, plan, params)
    p = lvl.phys(x)  # dims=None: the example flattened, rolled, reshaped
    with _outer(lvl):
        flat = p.reshape(p.shape[0], -1)
        res = op(flat, shifts=params["shifts"], dims=(1,))
        return lvl.wrap(res.reshape(tuple(p.shape)))


def _repeat(lvl, op, args, plan, params):
    x = args[0]
    reps = tuple(params["repeats"])
    p = lvl.batch_first(x, len(reps))
    with _outer(lvl):
        return lvl.wrap(op(p, repeats=(1,) + reps))


def _join(lvl, op, args, plan, params):
    """cat/stack: every member batched (unbatched ones expanded), the dim shifted."""
    nd = max(a._a.ndim for a in args) + (1 if op.name == "stack" else 0)
    kw = dict(params)
    kw["dim"] = _dims(kw.get("dim", 0), nd)
    phys = []
    for a in args:
        if op.name == "cat" and a._a.ndim == 1 and a._a.shape[0] == 0 and nd > 1:
            continue  # torch's legacy: an empty 1-D member is skipped
        phys.append(lvl.expanded(a))
    with _outer(lvl):
        return lvl.wrap(op(*phys, **kw))


def _matmul(lvl, op, args, plan, params):
    """mm/bmm/addmm as matmuls, which broadcast the batch dim; mm's commonest cases (a linear
    layer's rows, per-example outer products) straight to the product matmul would make."""
    with _outer(lvl):
        if op.name == "addmm":
            c, a, b = args
            pa = lvl.phys(a)
            if pa is not None and lvl.phys(b) is None and c.__class__ is _TENSOR and \
                    lvl.phys(c) is None and (c._a.ndim < 2 or c._a.shape[0] == 1):
                # a batch of inputs times one weight (a linear layer): one addmm of the rows
                sa = pa._a.shape
                res = op(c, pa.reshape(-1, sa[-1]), b, **params)
                return lvl.wrap(res.reshape(sa[0], sa[1], res._a.shape[-1]))
            prod = _linalg().matmul(lvl.batch_first(a, 2), lvl.batch_first(b, 2))
            beta, alpha = params.get("beta", 1), params.get("alpha", 1)
            cc = lvl.batch_first(c, 2) if lvl.phys(c) is not None else c
            res = prod * alpha if alpha != 1 else prod
            if beta != 0:
                res = res + (cc * beta if beta != 1 else cc)
            return lvl.wrap(res)
        a, b = args
        pa, pb = lvl.phys(a), lvl.phys(b)
        if op.name == "mm" and not _amp.on and pa is not None:
            # what ``matmul`` does with these ranks, its checks left to mm's meta rule (run on
            # the stand-ins): both batched, one batched product; else the rows, one mm
            if pb is not None:
                return lvl.wrap(dispatch.call(_linalg_defs().batched_matmul_op, pa, pb))
            sa = pa._a.shape
            res = dispatch.call(op, pa.reshape(-1, sa[-1]), b)
            return lvl.wrap(res.reshape(sa[0], sa[1], res._a.shape[-1]))
        return lvl.wrap(_linalg().matmul(pa if pa is not None else a,
                                         pb if pb is not None else b))


def _clone_like(lvl, op, args, plan, params):
    if len([a for a in args if isinstance(a, _TENSOR)]) != 1:
        return None
    with _outer(lvl):
        return lvl.wrap(op(lvl.phys(args[0]), **params))


def _copy_(lvl, op, args, plan, params):
    x, src = args
    if lvl.phys(x) is None:
        lvl.promote(x)
    p = lvl.phys(x)
    if p is None:
        return None  # an unbatched target of a batched source: the per-example path raises
    with _outer(lvl):
        p.copy_(lvl.batch_first(src, x._a.ndim) if lvl.phys(src) is not None else src)
    x._vc[0] += 1
    return x


def _fill_(lvl, op, args, plan, params):
    x = args[0]
    p = lvl.phys(x)
    if p is None or (len(args) > 1 and lvl.phys(args[1]) is not None):
        return None
    with _outer(lvl):
        op(p, *args[1:], **params)
    x._vc[0] += 1
    return x


def _embedding(lvl, op, args, plan, params):
    w, idx = args
    if lvl.phys(w) is not None:
        return None
    with _outer(lvl):
        return lvl.wrap(op(w, lvl.phys(idx), **params))


def _convolution(lvl, op, args, plan, params):
    """A batch of inputs (weights and bias unbatched): the batch folded into the images."""
    x, w, b = args
    if lvl.phys(w) is not None or (b is not None and lvl.phys(b) is not None):
        return None
    p = lvl.phys(x)
    nsp = w._a.ndim - 2
    with _outer(lvl):
        if x._a.ndim == nsp + 1:  # one image per example: the batch is the images
            res = op(p, w, b, **params)
            return lvl.wrap(res)
        B, n = p.shape[0], p.shape[1]
        res = op(p.reshape((B * n,) + tuple(p.shape[2:])), w, b, **params)
        return lvl.wrap(res.reshape((B, n) + tuple(res.shape[1:])))


def _constant_pad(lvl, op, args, plan, params):
    x = args[0]
    pad = params["pad"]
    if len(pad) // 2 > x._a.ndim:
        return None
    with _outer(lvl):
        return lvl.wrap(op(lvl.phys(x), **params))


def _linalg():
    """``ops.linalg`` (which imports much of jtorch: looked up once, on first use)."""
    m = _lazy.get("linalg")
    if m is None:
        from ..ops import linalg as m

        _lazy["linalg"] = m
    return m


def _linalg_defs():
    m = _lazy.get("defs")
    if m is None:
        from ..kernels.defs import linalg as m

        _lazy["defs"] = m
    return m


_lazy: dict = {}


def _nll_rows(lvl, args):
    """nll_loss's operands as rows: (input (B*N, C), targets (B*N,), weight, B, N)."""
    inp, tgt, w = args
    x, t = lvl.expanded(inp), lvl.expanded(tgt)
    xs, ts = x._a.shape, t._a.shape
    b = xs[0]
    if not b:  # (reshape's error for an empty batch)
        return x.reshape(-1, xs[-1]), t.reshape(-1), w, b, t.reshape(b, -1).shape[1]
    # reshapes only where the rows are not already there
    rows = x if len(xs) == 2 else x.reshape(-1, xs[-1])
    return rows, t if len(ts) == 1 else t.reshape(-1), w, b, t._a.size // b


def _nll_weights(t, w, ignore: int, c: int, b: int, dtype):
    """Per example, the summed weight of its counted targets (the mean's denominator), in
    ``dtype``; one target each and no weights: the 0/1 mask itself (a division by it
    promotes it to the other operand's floating dtype, the same quotients)."""
    valid = t != ignore
    if w is None and valid._a.shape[0] == b:
        return valid
    wt = valid.to(_dtypes.get_default_dtype()) if w is None else w[t.clamp(0, c - 1)] * valid
    wt = wt.reshape(b, -1).sum(1)
    return wt if wt.dtype is dtype else wt.to(dtype)


def _nll_loss(lvl, op, args, plan, params):
    """nll_loss over a batch: one unreduced call, reduced per example."""
    if args[2] is not None and lvl.phys(args[2]) is not None:
        return None
    red, ign = params["reduction"], params["ignore_index"]
    with _outer(lvl):
        x, t, w, b, n = _nll_rows(lvl, args)
        rows = op(x, t, w, reduction="none", ignore_index=ign)
        if red == "none":
            return lvl.wrap(rows.reshape((b,) + tuple(args[1].shape)))
        per = rows + 0.0 if n == 1 else rows.reshape(b, n).sum(1)  # 0 + x: a sum of one
        if red == "mean":
            per = per / _nll_weights(t, w, ign, x._a.shape[-1], b, per.dtype)
        return lvl.wrap(per)


def _nll_loss_backward(lvl, op, args, plan, params):
    g, inp, tgt, w = args
    if w is not None and lvl.phys(w) is not None:
        return None
    red, ign = params["reduction"], params["ignore_index"]
    with _outer(lvl):
        x, t, w, b, n = _nll_rows(lvl, (inp, tgt, w))
        if red == "mean" and g._a.ndim == 0 and lvl.phys(g) is None:
            # one gradient for every example (autograd's ones): divided by the weights, it
            # broadcasts to the batch, without the slow strided pass over an expanded one
            gg = g / _nll_weights(t, w, ign, x._a.shape[-1], b, g.dtype)
        else:
            gg = lvl.expanded(g)
            if red == "mean":
                gg = gg / _nll_weights(t, w, ign, x._a.shape[-1], b, gg.dtype)
        if red == "none":
            rows = gg.reshape(-1)
        else:
            rows = (gg if gg._a.shape == (b,) else gg.reshape(b)) if n == 1 else \
                gg.reshape(b, 1).expand(b, n).reshape(-1)
        gx = op(rows, x, t, w, reduction="none", ignore_index=ign)
        return lvl.wrap(gx.reshape((b,) + tuple(inp.shape)))


# views whose plan, made for one example, maps to the batch by its geometry alone (``_view``)
_GEOMETRY_VIEWS = frozenset(("view", "expand", "permute", "t", "transpose", "unsqueeze",
                             "squeeze", "select", "slice", "narrow", "diagonal", "index"))

_FAMILY_RULES = {
    "unary": _pointwise, "binary": _pointwise, "ternary": _pointwise,
    "reduction": _reduce,
    "scan": _dim_op("dim"),
    "softmax": _same_rank("dim"),
}

_RULES = {
    "view": _view, "expand": _expand, "permute": _permute, "t": _t,
    "transpose": _dim_op("dim0", "dim1"), "unsqueeze": _unsqueeze, "squeeze": _squeeze,
    "select": _dim_op("dim"), "slice": _dim_op("dim"), "narrow": _dim_op("dim"),
    "flip": _dim_op("dims"), "roll": _roll, "repeat": _repeat, "index": _basic_index,
    "diagonal": _dim_op("dim1", "dim2"), "unbind": _dim_op("dim"), "split": _dim_op("dim"),
    "split_with_sizes": _dim_op("dim"), "chunk": _dim_op("dim"), "unfold": _dim_op("dimension"),
    "tril": _clone_like, "triu": _clone_like, "cat": _join, "stack": _join,
    "sort": _dim_op("dim"), "argsort": _dim_op("dim"), "topk": _dim_op("dim"),
    "kthvalue": _dim_op("dim"), "cummax": _dim_op("dim"), "cummin": _dim_op("dim"),
    "gather": _same_rank("dim"), "scatter": _same_rank("dim"), "scatter_add": _same_rank("dim"),
    "mm": _matmul, "bmm": _matmul, "batched_matmul": _matmul, "addmm": _matmul,
    "clone": _clone_like, "_to_copy": _clone_like, "copy_": _copy_, "fill_": _fill_,
    "embedding": _embedding, "convolution": _convolution, "constant_pad_nd": _constant_pad,
    "nll_loss": _nll_loss, "nll_loss_backward": _nll_loss_backward,
}


# -- the transform ------------------------------------------------------------------------------

def _flatten(tree, out: list):
    """Leaves of a tuple/list/dict tree, in order."""
    if isinstance(tree, (tuple, list)):
        for x in tree:
            _flatten(x, out)
    elif isinstance(tree, dict):
        for x in tree.values():
            _flatten(x, out)
    else:
        out.append(tree)
    return out


def _unflatten(tree, leaves):
    if isinstance(tree, (tuple, list)):
        vals = [_unflatten(x, leaves) for x in tree]
        return type(tree)(*vals) if hasattr(tree, "_fields") else type(tree)(vals)
    if isinstance(tree, dict):
        return {k: _unflatten(v, leaves) for k, v in tree.items()}
    return next(leaves)


def _spec(tree) -> str:
    if isinstance(tree, (tuple, list)):
        return f"TreeSpec({type(tree).__name__}, None, [{', '.join(_spec(x) for x in tree)}])"
    if isinstance(tree, dict):
        return f"TreeSpec(dict, {list(tree)}, [{', '.join(_spec(x) for x in tree.values())}])"
    return "*"


def _broadcast_dims(dims, tree, where: str):
    """``dims`` (an int, None or a tree matching ``tree``'s prefix) as one dim per leaf."""
    if dims is None or isinstance(dims, int):
        return [dims] * len(_flatten(tree, []))
    if isinstance(dims, (tuple, list)) and isinstance(tree, (tuple, list)) and \
            len(dims) == len(tree):
        return [d for s, t in zip(dims, tree) for d in _broadcast_dims(s, t, where)]
    if isinstance(dims, dict) and isinstance(tree, dict) and set(dims) == set(tree):
        return [d for k in tree for d in _broadcast_dims(dims[k], tree[k], where)]
    raise ValueError(f"{where}: in_dims is not compatible with the structure of `inputs`. "
                     f"in_dims has structure {_spec(dims)} but inputs has structure "
                     f"{_spec(tree)}.")


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *, chunk_size=None):
    """torch.vmap: ``func`` over a dim of its inputs (``in_dims``: an int, None, or a tree
    like the arguments), its results stacked along ``out_dims``; ``randomness`` is "error",
    "different" or "same"; ``chunk_size`` runs the batch in chunks of that many examples."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")
    if not isinstance(in_dims, (int, tuple, list, dict)) and in_dims is not None:
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): expected "
                         f"`in_dims` to be int or a (potentially nested) tuple matching the "
                         f"structure of inputs, got: {type(in_dims)}.")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)

    return wrapped


def _name(func) -> str:
    return getattr(func, "__name__", repr(func))


def _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    where = f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>)"
    if not args:
        raise ValueError(f"vmap({_name(func)})(<inputs>): got no inputs. Maybe you forgot to "
                         "add inputs, or you are trying to vmap over a function with no inputs. "
                         "The latter is unsupported.")
    dims = _broadcast_dims(in_dims, args, where)
    leaves = _flatten(args, [])
    sizes = []
    for x, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(x, _TENSOR):
            raise ValueError(  # noqa: TRY004  (torch's type)
                f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got "
                f"in_dim={d} for an input but the input is of type {type(x)}. We "
                "cannot vmap over non-Tensor arguments, please use None as the respective in_dim")
        nd = x.dim()
        if not isinstance(d, int) or not -nd <= d < nd:
            raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): Got "
                             f"in_dim={d} for some input, but that input is a Tensor of "
                             f"dimensionality {nd} so expected in_dim to satisfy "
                             f"-{nd} <= in_dim < {nd}.")
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError(f"vmap({_name(func)}, in_dims={in_dims}, ...)(<inputs>): at least one "
                         "input must be a Tensor mapped over a dim (in_dims not None)")
    if len(set(sizes)) != 1:
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    size = sizes[0]
    if chunk_size is not None and chunk_size < size:
        parts = []
        for lo in range(0, size, chunk_size):
            sub = [x.narrow(d % x.dim(), lo, min(chunk_size, size - lo)) if d is not None else x
                   for x, d in zip(leaves, dims)]
            parts.append(_run_level(func, _unflatten(args, iter(sub)), dims, kwargs,
                                    min(chunk_size, size - lo), randomness, out_dims))
        return _concat(parts, out_dims)
    return _run_level(func, args, dims, kwargs, size, randomness, out_dims, leaves)


def _run_level(func, args, dims, kwargs, size: int, randomness: str, out_dims, leaves=None):
    lvl = _Level(size, randomness)
    if leaves is None:
        leaves = _flatten(args, [])
    ins = []
    for x, d in zip(leaves, dims):
        if d is None:
            ins.append(x)
        else:
            with _outer(lvl):
                ins.append(lvl.wrap(x.movedim(d, 0) if d % x.dim() else x))
    prev = dispatch.mode, _meta_mod.read_hook, _meta_mod.detach_hook
    dispatch.mode = lvl
    _meta_mod.read_hook = functools.partial(_read, lvl)
    _meta_mod.detach_hook = functools.partial(_detach, lvl)
    # autograd keeps a node's saved outputs as this stand-in's array, not as a detached alias:
    # a gradient computed from them stays differentiable (vmap of grad, then grad again)
    _meta_mod.detach_hook.keeps_outputs = True
    _active.append(lvl)
    try:
        out = func(*_unflatten(args, iter(ins)), **kwargs)
    finally:
        _active.pop()
        dispatch.mode, _meta_mod.read_hook, _meta_mod.detach_hook = prev
    return _unwrap(lvl, out, out_dims, func)


def _read(lvl: _Level, t, what: str) -> None:
    """A read of values (``item``, ``bool``, printing): refused for a stand-in; autograd
    state (``requires_grad_``) is no read here, but goes on to an enclosing mode for an
    unbatched tensor (a tracer's fake: jtorch.compile breaks its graph there, as it does
    outside vmap)."""
    if "requires_grad" in what:
        if lvl.outer_read is not None and lvl.phys(t) is None:
            lvl.outer_read(t, what)
        return
    if lvl.phys(t) is not None:
        raise RuntimeError(_ITEM_MSG if "item" in what else _FLOW_MSG)
    if lvl.outer_read is not None:
        lvl.outer_read(t, what)


def _detach(lvl: _Level, t):
    """A stand-in's detach: the stand-in of its physical tensor detached (an alias)."""
    p = lvl.phys(t)
    with _outer(lvl):
        if p is not None:
            return lvl.wrap(p.detach())
        return t.detach()


def _unwrap(lvl: _Level, out, out_dims, func):
    leaves = _flatten(out, [])
    dims = [out_dims] * len(leaves) if out_dims is None or isinstance(out_dims, int) else \
        _broadcast_out(out_dims, out, func)
    res = []
    for x, d in zip(leaves, dims):
        if d is None:
            if lvl.phys(x) is not None:
                raise ValueError(f"vmap({_name(func)}, ...): `{_name(func)}` can not return a "
                                 "BatchedTensor when out_dim is None")
            res.append(x)
            continue
        if not isinstance(x, _TENSOR):
            raise ValueError(  # noqa: TRY004  (torch's type)
                f"vmap({_name(func)}, ...): `{_name(func)}` must only return Tensors, got type "
                f"{type(x)}. Did you mean to set out_dims= to None for output?")
        p = lvl.phys(x)
        if p is None:  # a result that does not depend on the batch: broadcast
            p = x.unsqueeze(0).expand((lvl.size,) + tuple(x.shape))
        nd = p.dim()
        if not -nd <= d < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-nd}, {nd - 1}], but got {d})")
        res.append(p.movedim(0, d) if d % nd else p)
    return _unflatten(out, iter(res))


def _broadcast_out(out_dims, out, func):
    if out_dims is None or isinstance(out_dims, int):
        return [out_dims] * len(_flatten(out, []))
    if isinstance(out_dims, (tuple, list)) and isinstance(out, (tuple, list)) and \
            len(out_dims) == len(out):
        return [d for s, t in zip(out_dims, out) for d in _broadcast_out(s, t, func)]
    if isinstance(out_dims, (tuple, list)) and len(out_dims) == 1 and \
            not isinstance(out, (tuple, list)):
        return _broadcast_out(out_dims[0], out, func)
    raise ValueError(f"vmap({_name(func)}, ..., out_dims={out_dims})(<inputs>): out_dims is not "
                     f"compatible with the structure of `outputs`. out_dims has structure "
                     f"{_spec(out_dims)} but outputs has structure {_spec(out)}.")


def _concat(parts: list, out_dims):
    from ..ops.views import cat

    first = parts[0]
    dims = _broadcast_out(out_dims, first, None)
    leaves = [_flatten(p, []) for p in parts]
    res = []
    for k, d in enumerate(dims):
        if d is None:
            res.append(leaves[0][k])
        else:
            res.append(cat([ls[k] for ls in leaves], dim=d))
    return _unflatten(first, iter(res))


__all__ = ["vmap"]
