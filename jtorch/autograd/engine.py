"""The backward engine: a topological sort of the recorded nodes and one reverse walk.

Gradients flowing into a node are summed per output; a node runs once all its consumers
ran (reverse post-order of a depth-first search from the roots). Leaves' ``AccumulateGrad``
nodes add into ``.grad``. Without ``retain_graph`` each node drops its saved values as soon
as it ran. ``autograd.grad`` runs only the nodes on a path to the requested inputs and
captures their gradients instead of accumulating.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import _allocator, dispatch
from .. import dtypes as _dt
from ..tensor import Tensor
from .node import AccumulateGrad, anomaly, edge_of

_TENSOR = Tensor

_state = dispatch.grad_state


def _topo_order(roots: list) -> list:
    """Nodes reachable from ``roots``, each before every node it sends gradients to."""
    order, seen = [], set()  # (nodes hash by identity)
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(root._edges))]
        while stack:
            node, it = stack[-1]
            for e, _ in it:
                if e is not None and e[0] not in seen:
                    child = e[0]
                    seen.add(child)
                    stack.append((child, iter(child._edges)))
                    break
            else:
                stack.pop()
                order.append(node)
    order.reverse()
    return order


def _needed(order: list, targets: set) -> set:
    """Nodes from which some target node can be reached (the only ones autograd.grad runs)."""
    need = set()
    for node in reversed(order):  # children first
        if id(node) in targets or any(e is not None and id(e[0]) in need for e, _ in node._edges):
            need.add(id(node))
    return need


def _run_pre_hooks(node, grads: list) -> list:
    hooks = node._pre_hooks
    for nr, fns in hooks.items():
        if nr < 0:
            continue
        for fn in list(fns):
            if grads[nr] is not None:
                r = fn(grads[nr])
                if r is not None:
                    grads[nr] = r
    for fn in list(hooks.get(-1, ())):
        r = fn(tuple(grads))
        if r is not None:
            grads = list(r)
    return grads


def _retain(node, grads: list, create_graph: bool) -> None:
    for nr, ref in node._retain.items():
        t, g = ref(), grads[nr]
        if t is None or g is None:
            continue
        if not create_graph:
            g = g.detach()
        # torch stores a retained grad as a row-major clone
        t.grad = g.clone(memory_format=_dt.contiguous_format) if t.grad is None else t.grad + g


def _accumulate(acc: AccumulateGrad, g: Tensor, create_graph: bool, handed: set) -> None:
    t = acc.variable
    if t.__dict__ and "_grad_dtype" in t.__dict__:  # a leaf's grad_dtype: the grad's cast
        gd = t.__dict__["_grad_dtype"]
        if gd is not None and g.dtype is not gd:
            g = g.to(gd)
    if t.grad is None:
        if not create_graph and (g.__class__ is _TENSOR or not g.is_sparse):
            # torch's layout contract: .grad has the strides of a dense leaf (row-major for
            # others), so optimizers see the same layout in param and grad; and the engine
            # may hand one tensor (or views of it) to several leaves: own a copy
            if not _obeys_layout(g, t):
                g = _clone_like(g.detach(), t)
            elif _root(g) in handed or g.grad_fn is not None:
                g = _own_copy(g)
            elif g._base is not None:  # a view of a gradient buffer nothing else holds
                g = Tensor._make(g._a, dtype=g.dtype)
            handed.add(_root(g))
        t.grad = g
    elif t.grad.__class__ is not _TENSOR and t.grad.is_sparse:
        # a sparse sum is a new tensor (the indices concatenated); with a dense gradient,
        # dense + sparse (torch's order: sparse + dense is not defined)
        t.grad = t.grad + g if g.is_sparse else g + t.grad
    elif create_graph:
        t.grad = t.grad + g
    else:
        t.grad.add_(g)
    for fn in list(t.__dict__.get("_post_acc_hooks", ())):
        fn(t)


def _own_copy(g: Tensor) -> Tensor:
    """A detached copy of ``g`` with its strides: a row-major CPU one copied directly (the
    clone op's dispatch cost about as much as a (64, 6, 48) copy), any other by ``clone``."""
    a = g._a
    if g.__class__ is _TENSOR and a.__class__ is np.ndarray and a.flags.c_contiguous:
        out = _allocator.empty(a.shape, a.dtype)
        _movement().copy_array(out, a)
        return Tensor._make(out, None, g.dtype)
    return g.detach().clone()


def _movement():
    """``kernels.cpu.movement``, bound on first use (it imports the kernels' registry)."""
    global _movement_mod
    if _movement_mod is None:
        from ..kernels.cpu import movement

        _movement_mod = movement
    return _movement_mod


_movement_mod = None


def _root(t: Tensor) -> int:
    """Identity of the memory block under ``t`` (the end of NumPy's base chain, or the
    caching allocator's block that ends it, which is no array): gradients handed to leaves
    are tracked by block, so two leaves never share one."""
    b = t._a
    if not isinstance(b, np.ndarray):  # meta: the storage stand-in is the block
        return id(t._st)
    while isinstance(b, np.ndarray) and b.base is not None:
        b = b.base
    return id(b)


def _dense(t: Tensor) -> bool:
    """Non-overlapping and dense: the strides are a permutation of a row-major layout."""
    a = t._a
    if a.flags.c_contiguous or a.flags.f_contiguous:
        return True
    expected = a.itemsize
    for size, stride in sorted(zip(a.shape, a.strides), key=lambda p: p[1]):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _obeys_layout(g: Tensor, t: Tensor) -> bool:
    if t._a.strides == g._a.strides or t._a.size <= 1:
        return True
    return g._a.flags.c_contiguous if not _dense(t) else False


def _clone_like(g: Tensor, t: Tensor) -> Tensor:
    """A copy of ``g`` with ``t``'s strides if ``t`` is dense, else row-major."""
    if not _dense(t):
        return g.contiguous().clone() if g.is_contiguous() else g.contiguous()
    if t._a.flags.c_contiguous and not g._a.flags.c_contiguous:
        out = g.contiguous()  # row-major: the blocked copy kernel, no strided-empty detour
        if out._a.strides == t._a.strides:
            return out
    from .. import empty_strided

    out = empty_strided(tuple(t.shape), t.stride(), dtype=g.dtype, device=g.device)
    out.copy_(g)
    return out


def _check_nan(node, res: list) -> None:
    from .. import isnan

    for i, r in enumerate(res):
        if r is not None and r.dtype.category >= 2 and r._a.size and not r.is_meta \
                and isnan(r).any().item():
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def _apply(node, grads: list) -> list:
    if not anomaly.enabled:
        return node.apply(grads)
    try:
        res = node.apply(grads)
    except Exception:
        if node._trace:
            warnings.warn(f"Error detected in {node.name()}. Traceback of forward call that caused "
                          f"the error:\n{''.join(node._trace)}", UserWarning, stacklevel=2)
        raise
    if anomaly.check_nan:
        _check_nan(node, res)
    return res


def run_backward(roots: list, grads: list, retain_graph: bool, create_graph: bool,
                 inputs: tuple | None = None, accumulate: bool = True,
                 allow_unused: bool = True) -> list | None:
    """Propagate ``grads`` from the ``roots`` tensors. With ``inputs``, return their gradients
    (``accumulate=False``: autograd.grad) or accumulate only into them (backward(inputs=))."""
    edges = []
    for i, t in enumerate(roots):
        e = edge_of(t)
        if e is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a "
                               "grad_fn")
        edges.append(e)
    order = _topo_order([e[0] for e in edges])
    targets = None
    if inputs is not None:
        targets = {}
        for i, t in enumerate(inputs):
            e = edge_of(t)
            if e is None:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
            targets.setdefault((id(e[0]), e[1]), []).append(i)
        need = _needed(order, {k[0] for k in targets})
    captured = [None] * (len(inputs) if inputs is not None else 0)
    handed = {_root(g) for g in grads}
    buffers: dict = {}
    for (node, nr), g in zip(edges, grads):
        buf = buffers.setdefault(node, [None] * node.n_outputs())
        buf[nr] = g if buf[nr] is None else buf[nr] + g
    prev = _state.enabled
    _state.enabled = create_graph
    try:
        for node in order:
            gs = buffers.pop(node, None)
            if gs is None:
                continue
            if node._pre_hooks:
                gs = _run_pre_hooks(node, gs)
            if type(node) is AccumulateGrad and node.variable._hooks and gs[0] is not None:
                for fn in list(node.variable._hooks):  # a leaf's tensor hooks
                    r = fn(gs[0])
                    if r is not None:
                        gs[0] = r
            if node._retain:
                _retain(node, gs, create_graph)
            if targets is not None:
                for nr, g in enumerate(gs):
                    for i in targets.get((id(node), nr), ()):
                        captured[i] = g
                if id(node) not in need:
                    continue
            if type(node) is AccumulateGrad:
                if accumulate and gs[0] is not None:
                    _accumulate(node, gs[0], create_graph, handed)
                continue
            res = node.apply(gs) if not anomaly.enabled else _apply(node, gs)
            if node._hooks:
                for fn in list(node._hooks):
                    r = fn(tuple(res), tuple(gs))
                    if r is not None:
                        res = list(r)
            if not retain_graph:
                node.release()
            for (e, _), r in zip(node._edges, res):
                if e is None or r is None:
                    continue
                child, nr = e
                buf = buffers.get(child)
                if buf is None:
                    buf = buffers[child] = [None] * child.n_outputs()
                buf[nr] = r if buf[nr] is None else buf[nr] + r
    finally:
        _state.enabled = prev
    if inputs is None:
        return None
    if not accumulate:
        for t, g in zip(inputs, captured):
            if g is None and not allow_unused:
                raise RuntimeError("One of the differentiated Tensors appears to not have been "
                                   "used in the graph. Set allow_unused=True if this is the "
                                   "desired behavior.")
        return captured
    for t, g in zip(inputs, captured):  # backward(inputs=[non-leaf]) fills its .grad
        if g is not None and t.grad_fn is not None:
            g = g if create_graph else g.detach()
            t.grad = g.clone() if t.grad is None else t.grad + g
    return None


def _is_scalar_like(t: Tensor) -> bool:
    return t._a.size == 1


def _creation():
    """``ops.creation`` (it imports this package): bound on first use, a global read after
    (a function-level import statement cost ~2 us per backward call)."""
    global _creation_mod
    if _creation_mod is None:
        from ..ops import creation

        _creation_mod = creation
    return _creation_mod


_creation_mod = None


def make_grads(outputs: tuple, grads: tuple, is_grads_batched: bool = False) -> list:
    """The root gradients: ones for scalar outputs where none is given, with torch's checks."""
    out = []
    for i, (t, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if t._requires_grad and not _is_scalar_like(t):
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if t.dtype.category < 2:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs "
                                   f"but got {t.dtype}")
            a = t._a
            if a.__class__ is np.ndarray and not a.ndim and dispatch.mode is None:
                # a 0-d CPU output (a loss): its ones directly (ones_like's dispatch: 6 us)
                out.append(Tensor._make(np.ones((), a.dtype), None, t.dtype))
            else:
                out.append(_creation().ones_like(t))
            continue
        if not isinstance(g, Tensor):
            g = _creation().full_like(t, g)
        if g._a.shape != t._a.shape:
            from ..shape import Size

            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{Size(g._a.shape)} and output[{i}] has a shape of "
                               f"{Size(t._a.shape)}.")
        if g.dtype.is_complex != t.dtype.is_complex:
            raise RuntimeError(f"For complex Tensors, both grad_output and output are required to "
                               f"have the same dtype. Mismatch in dtype: grad_output[{i}] has a "
                               f"dtype of {g.dtype} and output[{i}] has a dtype of {t.dtype}.")
        if g.device != t.device:  # torch moves a 0-d gradient, and refuses any other
            if g._a.ndim:
                raise RuntimeError(f"invalid gradient at index {i} - expected device "
                                   f"{t.device} but got {g.device}")
            g = g.to(t.device)
        out.append(g)
    return out
