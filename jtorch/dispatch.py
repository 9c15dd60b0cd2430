"""The one entry point of every op call.

``call(op, *tensors, **params)`` runs, in order: the op's meta rule (``op.meta``: torch's
argument checks, result shapes/dtypes/strides and aliasing, as a ``Plan``), the mode hook
(``mode``: tracing and vmap take the call here, always, when installed), the kernel looked up
per device in ``op.kernels`` (none runs for meta tensors: the plan's results are built from
their description; views are made from the plan on any device), then the autograd record.
``pointwise(op, args)`` is the same path for pointwise OpDefs with their promotion and
broadcasting rules inlined (the commonest calls). Keep both lean: their Python cost is a
product metric (see perf/benchmarks/dispatch.py).
"""

from __future__ import annotations

import threading

import numpy as np

from . import _allocator, _flags
from . import dtypes as _dt
from ._threads import use_parallel
from .cuda_array import CudaArray
from .device import META
from .kernels import registry
from .kernels.cpu import pointwise as _pw
from .kernels.plan import Inplace, Out, Plan, View, common_device, device_of  # noqa: F401
from .meta import MetaArray
from .shape import bcast_elem_strides, broadcast_shapes, data_ptr, elem_strides, iter_order, span
from .tensor import SparseOperandError, Tensor


class _GradState(threading.local):
    """Grad mode is per thread, as in torch (``autograd/grad_mode.py`` switches it)."""

    enabled = True
    inference = False


grad_state = _GradState()

# Hooks the autograd and compile layers install. ``grad_hook(op, inputs, out, kw)`` records a
# backward node when an input requires grad; ``mode`` (when not None) takes every op call
# after its meta rule as ``mode(op, args, plan, params)``: ``params`` are the call's keyword
# arguments, so ``op(*args, **params)`` repeats the call; ``plan`` is None for pointwise ops,
# whose params are ``{"out":, "inplace":}`` (tracing records a node, vmap batches).
grad_hook = None
mode = None


def needs_grad(inputs) -> bool:
    """Whether an op over ``inputs`` must be recorded for autograd (grad mode on and some
    tensor input requires grad)."""
    if grad_hook is None or not grad_state.enabled:
        return False
    for x in inputs:
        if isinstance(x, _TENSOR) and x._requires_grad:
            return True
    return False

_HALF = _dt.HALF
_HALF_NP = tuple(d.np for d in _HALF)
_float32 = _dt.float32
_bool = _dt.bool
_TENSOR = Tensor
_META = MetaArray
_CUDA = CudaArray
_NDARRAY = np.ndarray


def torch_name(d: _dt.dtype) -> str:
    """torch's C++ scalar-type name ("Float", "Long") used in its error messages."""
    return d.scalar_name


def not_implemented(op: registry.OpDef, d: _dt.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{op.kernel_name}" not implemented for \'{torch_name(d)}\'')


def check_cast(result: _dt.dtype, out: _dt.dtype) -> None:
    if result is not out and not _dt.can_cast(result, out):
        raise RuntimeError(
            f"result type {torch_name(result)} can't be cast to the desired output type "
            f"{torch_name(out)}"
        )


def pointwise_dtypes(op: registry.OpDef, args) -> tuple:
    """(common, compute, result) dtypes of a pointwise call, with torch's checks."""
    dims, zeros, scalars = [], [], []
    for x in args[: len(args) - op.nparams] if op.nparams else args:
        if isinstance(x, _TENSOR):
            (dims if x._a.ndim else zeros).append(x.dtype)
        else:
            scalars.append(_dt.scalar_dtype(x))
    if not zeros and not scalars and len(dims) == 1:
        common = dims[0]
    else:
        common = _dt.result_dtype(dims, zeros, scalars)
    rule = op.dtype_rule
    if rule == registry.INT_TO_FLOAT and common.category < 2:
        common = _dt.get_default_dtype()
    check = op.check
    if check is not None:  # torch's argument checks come before its dtype dispatch
        check(common, args)
    if common.category not in op.cats:
        raise not_implemented(op, common)
    if rule == registry.COMPARE:
        return common, common, _bool
    if rule == registry.LOGICAL:
        return common, _bool, _bool
    if rule == registry.TO_FLOAT64:
        return common, _dt.float64, _dt.float64
    if rule == registry.TO_FLOAT32:
        return common, _dt.float32, _dt.float32
    return common, common, common


_dtype_cache: dict = {}


def _kind(x):
    """The part of an operand that decides promotion: dtype and 0-d-ness, or the scalar type."""
    if isinstance(x, _TENSOR):
        return x.dtype if x._a.ndim else (x.dtype,)
    return type(x)


def resolve_dtypes(op: registry.OpDef, args: tuple) -> tuple:
    """``pointwise_dtypes`` memoised on the operands' kinds and the default dtype."""
    return _plan(op, args)[:3]


def _plan(op: registry.OpDef, args: tuple) -> list:
    """[common, compute, result, dense loop pattern, half, dense loops] of a call, memoised on
    the operands' kinds and the default dtype. The pattern names each operand's role in the
    contiguous loop variants when all tensors share one C-contiguous shape ('a' array,
    's' scalar); ``half`` says whether a 16-bit float is involved (those calls run through float32);
    the (serial, parallel) loops for that pattern are filled in on first use."""
    n = len(args)  # spelled out (``_kind`` inlined) for one and two operands: the common calls
    if n == 2:
        x, y = args
        key = (op, _dt._default.value,
               (x.dtype if x._a.ndim else (x.dtype,)) if isinstance(x, _TENSOR) else type(x),
               (y.dtype if y._a.ndim else (y.dtype,)) if isinstance(y, _TENSOR) else type(y))
    elif n == 1:
        x = args[0]
        key = (op, _dt._default.value,
               (x.dtype if x._a.ndim else (x.dtype,)) if isinstance(x, _TENSOR) else type(x))
    else:
        key = (op, _dt._default.value, *[_kind(x) for x in args])
    r = _dtype_cache.get(key)
    if r is None:
        common, compute, result = pointwise_dtypes(op, args)
        pat = "".join("a" if isinstance(x, _TENSOR) else "s" for x in args)
        half = compute in _HALF or result in _HALF or any(
            isinstance(x, _TENSOR) and x.dtype in _HALF for x in args)
        r = _dtype_cache[key] = [common, compute, result, pat, half, None]
    return r


_broadcasts: dict = {}  # operand shapes -> their broadcast shape


def pointwise(op: registry.OpDef, args: tuple, out: Tensor | None = None,
              inplace: bool = False) -> Tensor:
    """Run a pointwise OpDef over tensors and Python scalars (broadcast, promoted)."""
    try:
        plan = _plan(op, args)
    except SparseOperandError:  # a sparse operand (its data is no array): jtorch.sparse's call
        return _sparse().pointwise(op, args, out, inplace)
    if mode is not None:  # the broadcast check belongs to the meta rule: before the hook
        broadcast_shapes(*[x._a.shape for x in args if isinstance(x, _TENSOR)])
        return mode(op, args, None, {"out": out, "inplace": inplace})
    _, compute, result, pat, half, loops = plan
    shape = None
    dense = not half  # every tensor operand C-contiguous with the one common shape
    for x in args:
        if isinstance(x, _TENSOR):
            a = x._a
            if a.__class__ is not _NDARRAY:
                if a.__class__ is _META:
                    return _pointwise_meta(op, args, out, inplace, result)
                if a.__class__ is _CUDA:
                    return _cuda().pointwise(op, args, out, inplace, plan)
            if shape is None:
                shape = a.shape
                n = a.size
            elif a.shape != shape:
                shapes = tuple([y._a.shape for y in args if isinstance(y, _TENSOR)])
                shape = _broadcasts.get(shapes)
                if shape is None:  # (it raises torch's error for shapes that do not broadcast)
                    if len(_broadcasts) > 4096:
                        _broadcasts.clear()
                    shape = _broadcasts[shapes] = broadcast_shapes(*shapes)
                dense = False
                break
            if dense and not a.flags.c_contiguous:
                dense = False
    saved_self = None
    if out is not None and args and out is args[0]:
        inplace = True  # x.op_(...) written as op(x, ..., out=x)
    if inplace:
        out = args[0]
        if grad_hook is not None and grad_state.enabled:
            saved_self = _inplace_check(op, args)
    if out is not None:
        if out._a.__class__ is _META:  # CPU operands, a meta out=: the device check there
            return _pointwise_meta(op, args, out, inplace, result)
        if out._a.__class__ is _CUDA:  # CPU operands, a CUDA out=: the device check there
            return _cuda().pointwise(op, args, out, inplace, plan)
        if saved_self is None and not inplace and needs_grad(args):
            raise RuntimeError(f"{op.name}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires grad.")
        if inplace and dense and result is out.dtype and n and \
                _in_place_dense(op, args, out, compute, result, pat, n):
            bump_version(out)
            res = out
            if grad_hook is not None and grad_state.enabled:
                for x in args:
                    if isinstance(x, _TENSOR) and x._requires_grad:
                        grad_hook(op, args, res,
                                  None if saved_self is None else {"_self": saved_self})
                        break
            return res
        check_cast(result, out.dtype)
        check_overlap(out, args)
        if out._a.shape != shape:
            if inplace:
                raise RuntimeError(
                    f"output with shape {list(out._a.shape)} doesn't match the broadcast shape "
                    f"{list(shape)}"
                )
            resize_out(out, shape)
        run_pointwise(op, args, out._a, compute, out.dtype)
        bump_version(out)
        res = out
    elif dense and shape is not None:
        # the common case, inlined: a fresh C-contiguous result and one contiguous loop (1-D
        # operands are their own flat views; small results skip the caching allocator)
        np_dt = result.np
        flat1 = len(shape) == 1
        if not n:  # row-major strides for an empty result, as torch
            a = _allocator.empty(shape, np_dt)
            flat = a.reshape(-1)
        elif n * np_dt.itemsize < _allocator.MIN_CACHED_BYTES:
            flat = np.empty(n, np_dt)
            a = flat if flat1 else flat.reshape(shape)
        else:
            a = _allocator.empty(shape, np_dt)
            flat = a.reshape(-1)
        res = Tensor._make(a, flat, result)
        if n:
            if loops is None:
                loops = plan[5] = (kernel(op, len(args), compute, result, "c_" + pat),
                                   kernel(op, len(args), compute, result, "p_" + pat))
            loop = loops[1] if n >= _flags.GRAIN_SIZE and use_parallel(n) else loops[0]
            try:
                if flat1 and pat == "aa":  # spelled out: no list for the commonest calls
                    loop(flat, args[0]._a, args[1]._a)
                elif flat1 and pat == "a":
                    loop(flat, args[0]._a)
                elif flat1 and pat == "as":
                    loop(flat, args[0]._a, args[1])
                elif flat1:
                    loop(flat, *[x._a if isinstance(x, _TENSOR) else x for x in args])
                else:
                    loop(flat, *[x._a.reshape(-1) if isinstance(x, _TENSOR) else x for x in args])
            except ZeroDivisionError:
                raise RuntimeError("ZeroDivisionError") from None
    elif not half:
        res = _fresh(op, args, shape, compute, result)
    else:
        a, st = new_output(args, shape, result.np)
        res = Tensor._make(a, st, result)
        run_pointwise(op, args, a, compute, result)
    if grad_hook is not None and grad_state.enabled:
        for x in args:
            if isinstance(x, _TENSOR) and x._requires_grad:
                grad_hook(op, args, res, None if saved_self is None else {"_self": saved_self})
                break
    return res


def _in_place_dense(op: registry.OpDef, args: tuple, out: Tensor, compute: _dt.dtype,
                    result: _dt.dtype, pat: str, n: int) -> bool:
    """``x.op_(...)`` where every tensor operand is C-contiguous in x's shape and the result
    keeps x's dtype (an optimizer's ``p.add_(g, alpha=-lr)``, ``x += y``): the in-place loop
    run directly, without ``run_pointwise``'s layout search (5 -> 3 us a call). False where
    that loop does not apply (an operand on x's storage, which the overlap check judges; an
    op with no in-place loop): the general path runs instead."""
    st = out._st
    for x in args[1:]:
        if isinstance(x, _TENSOR) and x._st is st:
            return False
    loop = _in_place_loop(op, len(args), compute, result, pat, n)
    if loop is None:
        return False
    if compute in _WIDE_FLOATS:
        for x in args:
            if x.__class__ is int:
                args = _int_scalars_as_float(op, args)
                break
    try:
        if len(args) == 2:  # spelled out: no list for the commonest calls
            y = args[1]
            loop(out._a.reshape(-1), y._a.reshape(-1) if isinstance(y, _TENSOR) else y)
        else:
            loop(out._a.reshape(-1), *[x._a.reshape(-1) if isinstance(x, _TENSOR) else x
                                       for x in args[1:]])
    except ZeroDivisionError:
        raise RuntimeError("ZeroDivisionError") from None
    return True


# operands' geometry -> how a fresh result is laid out and filled (``_fresh``)
_fresh_recipes: dict = {}


def _fresh(op: registry.OpDef, args: tuple, shape: tuple, compute: _dt.dtype,
           result: _dt.dtype) -> Tensor:
    """A fresh result of a call whose operands differ in shape or layout (broadcasts, views;
    no 16-bit floats): what ``new_output`` and ``run_pointwise`` decide about it (layout, loop,
    coalesced strides) is memoised on the operands' shapes and strides, and replayed (a
    broadcast ``x + b`` spent 9 of its 12 us deciding). Parallel or serial is decided per call
    (the thread settings may change)."""
    # (each operand's dtype too: equal byte strides are other element strides in another
    # item size, a float32 x[::2] and a float64 x)
    if len(args) == 2:  # spelled out for the commonest calls
        x, y = args
        key = (op, compute, result,
               (x._a.shape, x._a.strides, x.dtype) if isinstance(x, _TENSOR) else x.__class__,
               (y._a.shape, y._a.strides, y.dtype) if isinstance(y, _TENSOR) else y.__class__)
    else:
        key = (op, compute, result, *[(x._a.shape, x._a.strides, x.dtype)
                                      if isinstance(x, _TENSOR) else x.__class__ for x in args])
    rec = _fresh_recipes.get(key)
    if rec is None:
        if len(_fresh_recipes) > 4096:
            _fresh_recipes.clear()
        rec = _fresh_recipes[key] = _fresh_recipe(args, shape, result)
    route, phys, axes, how = rec
    buf = _allocator.empty(phys, result.np)
    a = buf if axes is None else buf.transpose(axes)
    res = Tensor._make(a, buf.reshape(-1), result)
    if route is None:  # nothing to compute (an empty result)
        return res
    if compute in _WIDE_FLOATS and how[1]:
        args = _int_scalars_as_float(op, args)
    n = a.size
    try:
        if route == "flat":  # every operand dense in the result's shape, or one value
            pat = how[0]
            _flat_loop(op, len(args), compute, result, pat, n)(
                buf.reshape(-1), *[x if p == "s" and not isinstance(x, _TENSOR) else
                                   x._a.reshape(-1) if p == "a" else x._a.reshape(-1)[0]
                                   for x, p in zip(args, pat)])
        elif route == "one":
            _fill_one_value(op, args, a, compute, result)
        elif route == "pat":  # dense in the result's memory order (x.t() + y.t())
            pat = how[0]
            par = use_parallel(n)
            kernel(op, len(args), compute, result, ("p_" if par else "c_") + pat)(
                span(a), *[x if not isinstance(x, _TENSOR) else span(x._a) if p == "a" else
                           x._a[(0,) * x._a.ndim] for x, p in zip(args, pat)])
        else:  # the strided loop
            cshape, cstrides, kind = how[2]
            call = [cshape, span(a), cstrides[0]]
            for x, st in zip(args, cstrides[1:]):
                call += [span(x._a) if isinstance(x, _TENSOR) else np.asarray(x).reshape(1), st]
            strided_kernel(op, len(args), compute, result, kind, use_parallel(n))(*call)
    except ZeroDivisionError:
        raise RuntimeError("ZeroDivisionError") from None
    return res


def _fresh_recipe(args: tuple, shape: tuple, result: _dt.dtype) -> tuple:
    """(route, physical shape, axes viewing it as the result or None, (pattern, has a Python
    scalar, strided plan)) of ``_fresh``: the choices ``new_output`` and ``run_pointwise``
    make for these operands (their code is the reference)."""
    phys, axes = output_layout(args, shape)
    a = np.empty(phys, result.np)  # (its geometry only: the decisions below read strides)
    if axes is not None:
        a = a.transpose(axes)
    scalar = any(not isinstance(x, _TENSOR) for x in args)
    if not a.size:
        return None, phys, axes, ("", scalar, None)
    if a.flags.c_contiguous:
        pat = ""
        for x in args:
            if isinstance(x, _TENSOR):
                xa = x._a
                if xa.shape == a.shape and xa.flags.c_contiguous:
                    pat += "a"
                    continue
                if xa.size == 1:
                    pat += "s"
                    continue
                break
            pat += "s"
        else:
            if "a" in pat:
                return "flat", phys, axes, (pat, scalar, None)
        if a.size > 1 and _one_value(args):
            return "one", phys, axes, ("", scalar, None)
    pat, cshape, cstrides, kind = _strided_plan(a, args)
    if pat is not None:
        return "pat", phys, axes, (pat, scalar, None)
    return "strided", phys, axes, ("", scalar, (cshape, cstrides, kind))


def _pointwise_meta(op: registry.OpDef, args: tuple, out, inplace: bool, result) -> Tensor:
    """A pointwise call with a meta operand: the CPU path's checks and result layout, no kernel."""
    dev = common_device(*args)
    shape = broadcast_shapes(*[x._a.shape for x in args if isinstance(x, _TENSOR)])
    if out is not None and args and out is args[0]:
        inplace = True
    saved_self = None
    if inplace:
        out = args[0]
        if grad_hook is not None and grad_state.enabled:
            check_inplace(out)
    if out is not None:
        if not inplace and needs_grad(args):
            raise RuntimeError(f"{op.name}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires grad.")
        if out.device != dev:
            raise cross_device(dev, out.device)
        check_cast(result, out.dtype)
        check_overlap(out, args)
        if tuple(out._a.shape) != tuple(shape):
            if inplace:
                raise RuntimeError(
                    f"output with shape {list(out._a.shape)} doesn't match the broadcast shape "
                    f"{list(shape)}")
            resize_out(out, shape)
        bump_version(out)
        res = out
        if inplace and op.saves is not None and "0" in op.saves and needs_grad(args):
            saved_self = Tensor._make(MetaArray(out._a.shape, out._a.dtype))
    else:
        res = Tensor._make(MetaArray(tuple(shape), result.np,
                                     _byte_strides(result_strides(args, tuple(shape)),
                                                   result.itemsize)), None, result)
    if grad_hook is not None and grad_state.enabled:
        for x in args:
            if isinstance(x, _TENSOR) and x._requires_grad:
                grad_hook(op, args, res, None if saved_self is None else {"_self": saved_self})
                break
    return res


def check_inplace(t: Tensor) -> None:
    """torch refuses in-place writes to a leaf that requires grad, or to a view of one, while
    grad mode is on (optimizers write under ``no_grad``)."""
    if not grad_state.enabled:
        return
    if t._requires_grad and t.grad_fn is None:
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place "
                           "operation.")
    base = t._base
    if base is not None and base._requires_grad and base.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an "
                           "in-place operation.")


def _inplace_check(op: registry.OpDef, args: tuple):
    """torch's leaf check for in-place ops, and the old value of ``self`` where the op's vjp
    reads it (it is overwritten by the kernel)."""
    t = args[0]
    check_inplace(t)
    if op.saves is not None and "0" in op.saves and needs_grad(args):
        return Tensor._make(t._a.copy(), None, t.dtype)
    return None


def check_overlap(out: Tensor, args: tuple) -> None:
    """torch's memory-overlap checks for written-to tensors: no element written twice (an
    expanded output; an empty one writes nothing), and no input that partly overlaps the
    output (``x[1:] += x[:-1]``)."""
    a = out._a
    for n, st in zip(a.shape, a.strides):
        if st == 0 and n > 1 and a.size:
            raise RuntimeError(
                "unsupported operation: more than one element of the written-to tensor refers to a "
                "single memory location. Please clone() the tensor before performing the operation.")
    for x in args:
        if isinstance(x, _TENSOR) and x is not out and x._st is out._st and partial_overlap(a, x._a):
            raise RuntimeError(
                "unsupported operation: some elements of the input tensor and the written-to tensor "
                "refer to a single memory location. Please clone() the tensor before performing the "
                "operation.")


def _dense(a: np.ndarray) -> bool:
    """Non-overlapping and dense: the elements fill ``a.size`` consecutive slots in some order."""
    expected = a.itemsize
    for st, n in sorted((st, n) for n, st in zip(a.shape, a.strides) if n != 1):
        if st != expected:
            return False
        expected *= n
    return True


def partial_overlap(a: np.ndarray, b: np.ndarray) -> bool:
    """torch's get_overlap_status(a, b) == PARTIAL: both dense, their memory ranges intersect,
    and they are not the same elements in the same layout (layouts too hard to decide pass)."""
    if not a.size or not b.size or not (_dense(a) and _dense(b)):
        return False
    if a.__class__ is not _NDARRAY:  # meta or CUDA views of one storage: element offsets
        a0, b0 = a.offset * a.itemsize, b.offset * b.itemsize
    else:
        a0, b0 = data_ptr(a), data_ptr(b)
    a1, b1 = a0 + a.nbytes, b0 + b.nbytes
    if a0 == b0 and a1 == b1:
        return a.strides != b.strides
    return a0 < b1 and b0 < a1


def result_strides(args: tuple, shape: tuple) -> tuple | None:
    """Element strides of a fresh pointwise result (None: C-contiguous): laid out in the
    inputs' dimension order when one of them is not C-contiguous, as TensorIterator does."""
    for x in args:
        if isinstance(x, _TENSOR) and not x._a.flags.c_contiguous:
            break
    else:
        return None
    nd = len(shape)
    order = iter_order(shape, [bcast_elem_strides(x._a, shape) for x in args if isinstance(x, _TENSOR)])
    st = [0] * nd
    acc = 1
    for d in order:
        st[d] = acc
        acc *= max(shape[d], 1)
    return tuple(st)


def _byte_strides(strides: tuple | None, itemsize: int) -> tuple | None:
    return None if strides is None else tuple(s * itemsize for s in strides)


def new_output(args: tuple, shape: tuple, np_dtype) -> tuple:
    """(array, storage) of a fresh result: C-contiguous unless an input is not, then laid out
    in the inputs' dimension order as torch's TensorIterator does (``x.t() + 1`` is ``x.t()``-
    ordered)."""
    phys, axes = output_layout(args, shape)
    buf = _allocator.empty(phys, np_dtype)
    return (buf if axes is None else buf.transpose(axes)), buf.reshape(-1)


def output_layout(args: tuple, shape: tuple) -> tuple:
    """(physical shape, axes viewing it as the result, or None when it is row-major) of
    ``new_output``'s result."""
    for x in args:
        if isinstance(x, _TENSOR) and not x._a.flags.c_contiguous:
            break
    else:
        return tuple(shape), None
    nd = len(shape)
    order = iter_order(shape, [bcast_elem_strides(x._a, shape) for x in args if isinstance(x, _TENSOR)])
    phys = order[::-1]  # slowest dim first
    if phys == list(range(nd)):
        return tuple(shape), None
    return tuple(shape[d] for d in phys), tuple(phys.index(d) for d in range(nd))


def bump_version(t: Tensor) -> None:
    t._vc[0] += 1


def resize_out(out: Tensor, shape: tuple) -> None:
    """``out=`` tensors of the wrong shape are resized (torch warns when they were non-empty)."""
    if out._a.size:
        import warnings

        warnings.warn(
            f"An output with one or more elements was resized since it had shape "
            f"{list(out._a.shape)}, which does not match the required output shape "
            f"{list(shape)}. This behavior is deprecated.", UserWarning, stacklevel=4,
        )
    if out._a.__class__ is _META:
        fresh = MetaArray(tuple(shape), out._a.dtype, None, 0, out._a.fake)
        out._a, out._st = fresh, fresh
        return
    fresh = _allocator.empty(shape, out._a.dtype)
    out._a, out._st = fresh, fresh.reshape(-1)


def empty_tensor(shape: tuple, dtype: _dt.dtype) -> Tensor:
    a = _allocator.empty(shape, dtype.np)
    return Tensor._make(a, a.reshape(-1), dtype)


_kernel_cache: dict = {}


def kernel(op: registry.OpDef, arity: int, compute: _dt.dtype, out: _dt.dtype, variant: str):
    """The compiled loop ``variant`` (e.g. ``c_as``, ``s_2``) of an op for a dtype pair."""
    key = (op, compute, out, variant)
    k = _kernel_cache.get(key)
    if k is None:
        mod = _pw.kernels(op, arity, compute.name, out.name)
        k = _kernel_cache[key] = _parallel_beside(mod, variant, "c" + variant[1:]) \
            if variant[0] == "p" else getattr(mod, variant)
    return k


def _parallel_beside(mod, name: str, serial: str):
    """A parallel loop, run as its serial twin while a compile worker builds it in a cold
    process (``compile/workers.py``: the same values, one thread for the first calls instead
    of a 1-1.7 s compile of Numba's parfor pipeline)."""
    from .compile import workers

    return workers.beside(mod, name, serial)


def strided_kernel(op: registry.OpDef, arity: int, compute: _dt.dtype, out: _dt.dtype,
                   kind: int, par: bool):
    """The strided loop of one row kind (``pointwise.strided_kernels``): a program compiles
    the kinds it runs, not all 2 * 2**arity branches of ``s_<n>``."""
    key = (op, compute, out, kind, par)
    k = _kernel_cache.get(key)
    if k is None:
        mod = _pw.strided_kernels(op, arity, compute.name, out.name, kind)
        name = f"s_{arity}_{_pw.kind_tag(kind)}"
        k = _kernel_cache[key] = _parallel_beside(mod, "p" + name, name) if par else \
            getattr(mod, name)
    return k


# (op, compute, out dtype, pattern) -> (serial loop, parallel loop) of the contiguous variants
_flat_loops: dict = {}


def _flat_loop(op: registry.OpDef, arity: int, compute: _dt.dtype, out: _dt.dtype, pat: str,
               n: int):
    key = (op, compute, out, pat)
    loops = _flat_loops.get(key)
    if loops is None:
        loops = _flat_loops[key] = (kernel(op, arity, compute, out, "c_" + pat),
                                    kernel(op, arity, compute, out, "p_" + pat))
    return loops[1] if n >= _flags.GRAIN_SIZE and use_parallel(n) else loops[0]


def _in_place_loop(op: registry.OpDef, arity: int, compute: _dt.dtype, out: _dt.dtype, pat: str,
                   n: int):
    """The contiguous loop writing operand 0 in place (``c_i<pat>``), or None for an op
    that has none (guarded ops: their blocks keep the aliased call)."""
    key = (op, compute, out, "i" + pat)
    loops = _flat_loops.get(key, False)
    if loops is False:
        mod = _pw.kernels(op, arity, compute.name, out.name)
        c = getattr(mod, "c_i" + pat, None)
        loops = _flat_loops[key] = None if c is None else \
            (c, _parallel_beside(mod, "p_i" + pat, "c_i" + pat))
    if loops is None:
        return None
    return loops[1] if n >= _flags.GRAIN_SIZE and use_parallel(n) else loops[0]


def run_pointwise(op: registry.OpDef, args: tuple, out: np.ndarray, compute: _dt.dtype,
                  out_dtype: _dt.dtype | None = None) -> None:
    """Pick the loop variant (contiguous/scalar pattern or strided) and run it into ``out``."""
    n = out.size
    if n == 0:
        return
    if out_dtype is None:
        out_dtype = _dt._FROM_NP[out.dtype]
    if out_dtype in _HALF or compute in _HALF:
        return _run_half(op, args, out, compute)
    shape = out.shape
    if compute in _WIDE_FLOATS:
        args = _int_scalars_as_float(op, args)
    if out.flags.c_contiguous:
        pat = ""
        flat = [out.reshape(-1)]
        for x in args:
            if isinstance(x, _TENSOR):
                if x.dtype in _HALF:
                    return _run_half(op, args, out, compute)
                a = x._a
                if a.shape == shape and a.flags.c_contiguous:
                    pat += "a"
                    flat.append(a.reshape(-1))
                    continue
                if a.size == 1:
                    pat += "s"
                    flat.append(a.reshape(-1)[0])
                    continue
                break
            pat += "s"
            flat.append(x)
        else:
            if "a" in pat:
                loop = None
                if pat[0] == "a" and args[0]._a is out:  # in place: operand 0 is the output
                    loop = _in_place_loop(op, len(args), compute, out_dtype, pat, n)
                    if loop is not None:
                        del flat[1]
                if loop is None:
                    loop = _flat_loop(op, len(args), compute, out_dtype, pat, n)
                try:
                    loop(*flat)
                except ZeroDivisionError:
                    raise RuntimeError("ZeroDivisionError") from None
                return
    if any(isinstance(x, _TENSOR) and x.dtype in _HALF for x in args):
        return _run_half(op, args, out, compute)
    if n > 1 and out.flags.c_contiguous and _one_value(args):
        return _fill_one_value(op, args, out, compute, out_dtype)
    # Broadcast, non-contiguous, or all-scalar inputs: the strided loop fills ``out``.
    _strided(op, args, out, compute, out_dtype)


def _fill_one_value(op, args: tuple, out: np.ndarray, compute: _dt.dtype,
                    out_dtype: _dt.dtype) -> None:
    """Every operand one value broadcast over C-contiguous ``out`` (the expanded gradient of a
    sum): the op on that value once, ``out`` filled with it (a strided pass cost 4x)."""
    one = out.reshape(-1)[:1]
    loop = _flat_loop(op, len(args), compute, out_dtype,
                      "".join("a" if isinstance(x, _TENSOR) else "s" for x in args), 1)
    try:
        loop(one, *[_first(x._a) if isinstance(x, _TENSOR) else x for x in args])
    except ZeroDivisionError:
        raise RuntimeError("ZeroDivisionError") from None
    out.fill(one[0])


def _one_value(args: tuple) -> bool:
    """Whether some operand is a tensor and every tensor operand holds one value (a size-1
    array, or an expanded one: stride 0 along every dim longer than 1)."""
    seen = False
    for x in args:
        if isinstance(x, _TENSOR):
            a = x._a
            if a.size != 1 and any(a.strides):
                for n, st in zip(a.shape, a.strides):
                    if st and n > 1:
                        return False
            seen = True
    return seen


def _first(a: np.ndarray) -> np.ndarray:
    """The first element of ``a`` as a 1-element array viewing it."""
    return a.reshape(1) if a.size == 1 else a[(slice(0, 1),) * a.ndim].reshape(1)


_WIDE_FLOATS = frozenset({_dt.float32, _dt.float64})
_EXACT = 2 ** 53  # ints a float64 holds exactly


def _int_scalars_as_float(op: registry.OpDef, args: tuple) -> tuple:
    """Python int operands as floats where the op computes in float32/float64, off the dense
    fast path: the loop casts them to the compute dtype either way, and one scalar type per
    strided loop saves compiling it twice (``masked_fill(m, 0)`` and ``(m, -inf)`` over a
    broadcast mask). Parameters (``alpha``...) and ints a float64 would round keep their type.
    (The dense path's small loops compile in a tenth of a second; converting there cost 0.2 us
    per call.)"""
    if len(args) == 2 and not op.nparams:  # (x + 1: spelled out)
        a, b = args
        if b.__class__ is int and -_EXACT <= b <= _EXACT:
            b = float(b)
        elif a.__class__ is int and -_EXACT <= a <= _EXACT:
            a = float(a)
        return a, b
    n = len(args) - op.nparams
    return tuple(float(x) if i < n and x.__class__ is int and -_EXACT <= x <= _EXACT else x
                 for i, x in enumerate(args))


_strided_plans: dict = {}


def _strided_plan(out: np.ndarray, args: tuple) -> tuple:
    """How the strided path runs a call, memoised on the operands' geometry: (pattern of the
    contiguous loop or None, coalesced shape, per-operand element strides). Building it costs
    ~20 us of Python, more than the loop over a small broadcast operand (a softmax gradient's
    ``y * s`` with ``s`` of shape (N, 1))."""
    key = (out.shape, out.strides, out.itemsize,
           *[(x._a.shape, x._a.strides, x._a.itemsize) if isinstance(x, _TENSOR) else None
             for x in args])
    plan = _strided_plans.get(key)
    if plan is None:
        if len(_strided_plans) > 4096:
            _strided_plans.clear()
        plan = _strided_plans[key] = _make_strided_plan(out, args)
    return plan


def _make_strided_plan(out: np.ndarray, args: tuple) -> tuple:
    shape = out.shape or (1,)
    nd = len(shape)
    strides = [elem_strides(out) or [0] * nd]
    for x in args:
        strides.append(bcast_elem_strides(x._a, shape) if isinstance(x, _TENSOR) else [0] * nd)
    ost = strides[0]
    if any(ost[i] < ost[i + 1] for i in range(nd - 1)):  # walk in the output's memory order
        perm = sorted(range(nd), key=lambda d: -ost[d])
        shape = tuple(shape[d] for d in perm)
        strides = [[st[d] for d in perm] for st in strides]
    cshape, cstrides = coalesce(shape, strides)
    if len(cshape) == 1 and cstrides[0][0] == 1 and all(st[0] in (0, 1) for st in cstrides):
        # every operand is dense in the output's order (x.t() + y.t()): the contiguous loop
        pat = "".join("a" if st[0] else "s" for st in cstrides[1:])
        if "a" in pat:
            return pat, None, None, None
    kind = _pw.row_kind(len(args), cstrides[0][-1], [st[-1] for st in cstrides[1:]])
    return None, np.asarray(cshape, np.int64), [np.asarray(st, np.int64) for st in cstrides], \
        kind


def _strided(op, args, out: np.ndarray, compute: _dt.dtype, out_dtype: _dt.dtype) -> None:
    pat, cshape, cstrides, kind = _strided_plan(out, args)
    par = use_parallel(out.size)
    if pat is not None:
        flat = [x if not isinstance(x, _TENSOR) else span(x._a) if p == "a" else span(x._a)[0]
                for x, p in zip(args, pat)]
        fn = kernel(op, len(args), compute, out_dtype, ("p_" if par else "c_") + pat)
        call = (span(out), *flat)
    else:
        fn = strided_kernel(op, len(args), compute, out_dtype, kind, par)
        call = [cshape, span(out), cstrides[0]]
        for x, st in zip(args, cstrides[1:]):
            call += [span(x._a) if isinstance(x, _TENSOR) else np.asarray(x).reshape(1), st]
    try:
        fn(*call)
    except ZeroDivisionError:
        raise RuntimeError("ZeroDivisionError") from None


def coalesce(shape: tuple, strides: list) -> tuple:
    """Drop size-1 dims and merge dims that are contiguous for every operand."""
    dims = [i for i, n in enumerate(shape) if n != 1] or [len(shape) - 1]
    cshape = [shape[dims[0]]]
    cstr = [[st[dims[0]]] for st in strides]
    for i in dims[1:]:
        n = shape[i]
        if all(cs[-1] == st[i] * n for cs, st in zip(cstr, strides)):
            cshape[-1] *= n
            for cs, st in zip(cstr, strides):
                cs[-1] = st[i]
        else:
            cshape.append(n)
            for cs, st in zip(cstr, strides):
                cs.append(st[i])
    return cshape, cstr


# torch's kernels that read a scalar operand (by position) at full precision, its opmath, where
# the others cast every operand to the 16-bit common dtype first
_SCALAR_OPMATH = {"mul": 1, "div": 1, "floor_divide": 1, "lerp": 2}


def _run_half(op, args, out: np.ndarray, compute: _dt.dtype) -> None:
    """Numba has no float16 or bfloat16 on CPU: compute in float32 and round the result once
    (to nearest even, as torch). As in torch, operands of another dtype are first cast to a
    16-bit common dtype (``x + 0.3`` adds bfloat16's 0.30078125)."""
    half = compute if compute in _HALF else None
    if half is _dt.bfloat16 and out.dtype == half.np and (op.name == "cube" or (
            op.name == "pow" and args[1].__class__ is int and args[1] in (3, -2))):
        return _pow_bfloat16(args[0], 3 if op.name == "cube" else args[1], out)
    n_operands = len(args) - op.nparams
    conv = []
    for i, x in enumerate(args):
        if isinstance(x, _TENSOR):
            d = x.dtype
            a = x._a
            if half is not None and i < n_operands and d is not half and d is not _bool and \
                    not (a.ndim == 0 and _SCALAR_OPMATH.get(op.name) == i):
                with np.errstate(over="ignore", invalid="ignore"):
                    a = a.astype(np.float32).astype(half.np)
                d = half
            conv.append(Tensor._make(a.astype(np.float32)) if d in _HALF else x)
        elif half is not None and i < n_operands and x.__class__ in (float, int) and \
                _SCALAR_OPMATH.get(op.name) != i:
            with np.errstate(over="ignore"):
                r = float(half.np.type(np.float32(x)))
            conv.append(r if x.__class__ is float or r != x else x)
        else:
            conv.append(x)
    if half is not None:
        compute = _float32
    if out.dtype in _HALF_NP or half is not None and out.dtype.kind in "fc":
        # a 16-bit result, or one computed in a 16-bit dtype and cast into a wider out=
        tmp = np.empty(out.shape, np.float32)
        run_pointwise(op, tuple(conv), tmp, compute)
        with np.errstate(over="ignore"):  # values beyond the type's range round to inf, as in torch
            if out.dtype in _HALF_NP:
                out[...] = tmp
            else:
                out[...] = tmp.astype(half.np).astype(np.float32)
    else:
        run_pointwise(op, tuple(conv), out, compute)


def _pow_bfloat16(x: Tensor, exponent: int, out: np.ndarray) -> None:
    """x ** 3 and x ** -2 of bfloat16 as torch's kernel computes them: the square rounded to
    bfloat16 first, then times x or its reciprocal."""
    bf = _dt.bfloat16.np
    a = x._a.astype(np.float32)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        sq = (a * a).astype(bf).astype(np.float32)
        out[...] = (sq * a) if exponent == 3 else (np.float32(1) / sq)


# -- the generic op call --------------------------------------------------------------------

def call(op: registry.OpDef, *args, **params):
    """Run ``op`` on ``args`` (its tensor operands, None for an absent optional one) with
    keyword ``params``: meta rule, mode hook, kernel per device, autograd record."""
    try:
        plan = op.meta(*args, **params)
    except SparseOperandError:  # a sparse operand: jtorch.sparse's call
        return _sparse().call(op, args, params)
    if mode is not None:
        return mode(op, args, plan, params)
    out = plan.out  # the rest is ``run_plan``, spelled out: this is the hot path
    if out.__class__ is View:
        res = make_view(args[out.src], out)
    elif plan.device is META:
        res = meta_result(out, args, op)
    else:
        try:
            res = op.kernels[plan.device.type](plan, *args)
        except KeyError:
            if plan.device.type in op.kernels:
                raise
            res = no_kernel(op, plan.device)(plan, *args)
        if out.__class__ is Inplace:
            args[out.src]._vc[0] += 1
    for x in args:  # grad mode is read only where an input requires grad
        if isinstance(x, _TENSOR) and x._requires_grad:
            if grad_hook is not None and grad_state.enabled:
                grad_hook(op, args, res, plan.kw)
            break
    return res


def no_kernel(op: registry.OpDef, dev):
    """The kernel of an op that has none on ``dev``: on CUDA, the CPU kernel over host copies
    of the operands (``kernels/cuda/eager.py``); elsewhere torch's error."""
    if dev.type == "cuda" and "cpu" in op.kernels:
        eager = _cuda()  # (registers the CUDA kernels there are when first imported)
        return op.kernels.get("cuda") or eager.host_kernel(op)
    raise NotImplementedError(f"Could not run 'aten::{op.name}' with arguments from the "
                              f"'{dev.type.upper()}' backend.")


def _cuda():
    """CUDA tensors' eager kernels (imported with the first CUDA tensor's op)."""
    from .kernels.cuda import eager

    return eager


def _sparse():
    """The sparse layer's ops (``jtorch/sparse/_ops.py``; it imports this module)."""
    from .sparse import _ops

    return _ops


def view(op: registry.OpDef, x: Tensor, **params):
    """A view op's call: ``call``, with the op's ``cpu_view`` making the commonest CPU views
    directly where no mode takes the call and nothing is recorded (no plan is needed)."""
    try:
        a = x._a
    except SparseOperandError:  # a sparse operand: jtorch.sparse's call
        return _sparse().call(op, (x,), params)
    if mode is None and a.__class__ is _NDARRAY:
        if not (x._requires_grad and grad_state.enabled):
            r = op.cpu_view(a, **params)
            if r is not None:
                return x._view(r)
        elif op.cpu_view_kw is not None and grad_hook is not None:
            r = op.cpu_view(a, **params)
            if r is not None:  # made and recorded as ``call`` would, without the plan
                res = x._view(r)
                grad_hook(op, (x,), res, op.cpu_view_kw(a, **params))
                return res
    return call(op, x, **params)


def run_plan(op: registry.OpDef, args: tuple, plan: Plan):
    """The part of ``call`` after the mode hook: a mode that lets an op run (a spy, the
    tracer's eager fallback) hands the plan back here."""
    out = plan.out
    if out.__class__ is View:
        res = make_view(args[out.src], out)
    elif plan.device is META:
        res = meta_result(out, args, op)
    else:
        try:
            res = op.kernels[plan.device.type](plan, *args)
        except KeyError:
            if plan.device.type in op.kernels:
                raise
            res = no_kernel(op, plan.device)(plan, *args)
        if out.__class__ is Inplace:
            args[out.src]._vc[0] += 1
    if grad_hook is not None and grad_state.enabled:
        for x in args:
            if isinstance(x, _TENSOR) and x._requires_grad:
                grad_hook(op, args, res, plan.kw)
                break
    return res


def make_view(t: Tensor, v: View) -> Tensor:
    """A tensor viewing ``t``'s storage at the element geometry of ``v``."""
    st = t._st
    isz = st.itemsize
    if st.__class__ is _CUDA:
        if v.dtype is not None:
            return _dtype_view(t, v)
        return t._view(CudaArray(tuple(v.shape), st.dtype, tuple([s * isz for s in v.strides]),
                                 v.offset, st.buf, st.dev))
    if st.__class__ is not _META:
        if v.perm is not None:  # a permutation of the source: NumPy's transpose (~0.2 us)
            return t._view(t._a.transpose(v.perm))
        if v.key is not None:  # a basic index of the source's first dim
            return t._view(t._a[v.key])
        if v.reshape is not None:  # a row-major source reshaped
            return t._view(t._a.reshape(v.reshape))
        if v.dtype is not None:
            return _dtype_view(t, v)
        off = v.offset * isz
        if off <= st.nbytes:  # the storage is one dense 1-D buffer (arguments by position: 2x)
            try:
                return t._view(np.ndarray(v.shape, st.dtype, st, off,
                                          tuple([s * isz for s in v.strides])))
            except (TypeError, ValueError, BufferError):
                pass
        return t._view(np.lib.stride_tricks.as_strided(st[v.offset:], tuple(v.shape),
                                                       tuple([s * isz for s in v.strides])))
    if v.dtype is not None:
        return _dtype_view(t, v)
    return t._view(MetaArray(tuple(v.shape), st.dtype, tuple([s * isz for s in v.strides]),
                             v.offset, st.fake))


def _dtype_view(t: Tensor, v: View) -> Tensor:
    """``make_view`` for a view in another dtype: the storage read as ``v.dtype`` (same base
    and version counter), the view over it."""
    d, st = v.dtype, t._st
    n = st.nbytes // d.itemsize
    strides = tuple([s * d.itemsize for s in v.strides])
    if st.__class__ is _META:
        return Tensor._make(MetaArray(tuple(v.shape), d.np, strides, v.offset, st.fake),
                            MetaArray((n,), d.np, None, 0, st.fake), d,
                            t._base if t._base is not None else t)
    if st.__class__ is _CUDA:  # the storage's bytes read as ``d``
        buf = st.buf.view(np.uint8).view(d.np)[:n] if st.dtype.itemsize != d.itemsize else \
            st.buf.view(d.np)
        return Tensor._make(CudaArray(tuple(v.shape), d.np, strides, v.offset, buf, st.dev),
                            CudaArray((n,), d.np, None, 0, buf, st.dev), d,
                            t._base if t._base is not None else t)
    st = np.ndarray((n,), d.np, buffer=st) if st.flags.c_contiguous else st.view(d.np)
    a = np.ndarray(v.shape, d.np, buffer=st, offset=min(v.offset, n) * d.itemsize, strides=strides)
    return Tensor._make(a, st, d, t._base if t._base is not None else t)


def meta_result(out, args: tuple, op: registry.OpDef):
    """The meta tensors a plan describes (tuples of results as tuples)."""
    if out.__class__ is Out:
        d = out.dtype
        return Tensor._make(MetaArray(tuple(out.shape), d.np, _byte_strides(out.strides, d.itemsize)),
                            None, d)
    if out.__class__ is View:
        return make_view(args[out.src], out)
    if out.__class__ is Inplace:
        t = args[out.src]
        t._vc[0] += 1
        return t
    if out is None:
        raise NotImplementedError(
            f"{op.name}: the shape of the result depends on the input's values, which meta "
            "tensors do not have")
    return tuple(meta_result(o, args, op) for o in out)


def cross_device(src, dst) -> RuntimeError:
    """torch's error for a result written into an ``out=`` tensor on another device."""
    return RuntimeError(f"Attempting to copy from device {src} to device {dst}, but cross-device "
                        "copies are not allowed!")


def copy_into(out: Tensor, res: Tensor) -> Tensor:
    """Write a result into a user's ``out=`` tensor: resized to ``res``'s shape (torch warns
    when it held elements), cast by the copy kernel; on meta only the geometry changes. Under
    a mode the copy is the pointwise op ``copy`` into ``out`` (the same resize and cast)."""
    if mode is not None:
        return pointwise(_copy_op(), (res,), out)
    if out.device != res.device:
        raise cross_device(res.device, out.device)
    if out._a.__class__ is _CUDA:
        return _cuda().copy_into(out, res)
    if out._a.shape != res._a.shape:
        resize_out(out, res._a.shape)
    if out._a.__class__ is not _META and out._a.size:
        run_pointwise(_copy_op(), (res,), out._a, out.dtype)
    bump_version(out)
    return out


def _copy_op():
    return registry.REGISTRY["copy"]


def record(op: registry.OpDef, inputs: tuple, out, kw: dict | None = None):
    """Non-pointwise ops (reductions, movement, extern) call this after their kernel ran, so
    autograd can attach a node holding ``op`` (its vjp), the inputs and the kwargs."""
    if grad_hook is not None and grad_state.enabled:
        for x in inputs:
            if isinstance(x, _TENSOR) and x._requires_grad:
                grad_hook(op, inputs, out, kw)
                break
    return out
