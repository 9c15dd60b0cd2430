"""The one entry point of every op call.

``pointwise(op, args)`` runs the meta rule (dtype promotion, broadcasting, argument checks),
then the tracing hook, then the kernel (generated from the OpDef), then the autograd hook.
Keep this path lean: its Python cost is a product metric (see perf/bench_dispatch.py).
"""

from __future__ import annotations

import numpy as np

from . import _allocator, _flags
from . import dtypes as _dt
from .kernels import registry
from .kernels.cpu import pointwise as _pw
from .shape import broadcast_shapes
from .tensor import Tensor

# Hooks the autograd and compile layers install. ``grad_hook(op, inputs, out, kw)`` records a
# backward node; ``trace_hook`` (when not None) intercepts the call while a graph is traced.
grad_enabled = [True]
grad_hook = None
trace_hook = None

_GRAIN = _flags.GRAIN_SIZE
_float16 = _dt.float16
_float32 = _dt.float32
_bool = _dt.bool
_TENSOR = Tensor

_TORCH_NAMES = {
    "bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short", "int32": "Int",
    "int64": "Long", "float16": "Half", "float32": "Float", "float64": "Double",
    "complex64": "ComplexFloat", "complex128": "ComplexDouble",
}


def torch_name(d: _dt.dtype) -> str:
    """torch's C++ scalar-type name ("Float", "Long") used in its error messages."""
    return _TORCH_NAMES[d.name]


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
    if common.category not in op.cats:
        raise not_implemented(op, common)
    check = op.extra.get("check")
    if check is not None:
        check(common, args)
    if rule == registry.COMPARE:
        return common, common, _bool
    if rule == registry.LOGICAL:
        return common, _bool, _bool
    return common, common, common


def pointwise(op: registry.OpDef, args: tuple, out: Tensor | None = None,
              inplace: bool = False) -> Tensor:
    """Run a pointwise OpDef over tensors and Python scalars (broadcast, promoted)."""
    if trace_hook is not None:
        return trace_hook(op, args, {"out": out, "inplace": inplace})
    common, compute, result = pointwise_dtypes(op, args)
    shapes = [x._a.shape for x in args if isinstance(x, _TENSOR)]
    shape = shapes[0] if len(shapes) == 1 else broadcast_shapes(*shapes)
    if inplace:
        out = args[0]
    if out is not None:
        check_cast(result, out.dtype)
        if out._a.shape != shape:
            if inplace:
                raise RuntimeError(
                    f"output with shape {list(out._a.shape)} doesn't match the broadcast shape "
                    f"{list(shape)}"
                )
            resize_out(out, shape)
        run_pointwise(op, args, out._a, compute)
        bump_version(out)
        res = out
    else:
        res = empty_tensor(shape, result)
        run_pointwise(op, args, res._a, compute)
    if grad_hook is not None and grad_enabled[0] and op.vjp is not None:
        grad_hook(op, args, res, None)
    return res


def bump_version(t: Tensor) -> None:
    t._vc.value += 1


def resize_out(out: Tensor, shape: tuple) -> None:
    """``out=`` tensors of the wrong shape are resized (torch warns when they were non-empty)."""
    if out._a.size:
        import warnings

        warnings.warn(
            f"An output with one or more elements was resized since it had shape "
            f"{list(out._a.shape)}, which does not match the required output shape "
            f"{list(shape)}. This behavior is deprecated.", UserWarning, stacklevel=4,
        )
    fresh = _allocator.empty(shape, out._a.dtype)
    out._a, out._st = fresh, fresh.reshape(-1)


def empty_tensor(shape: tuple, dtype: _dt.dtype) -> Tensor:
    a = _allocator.empty(shape, dtype.np)
    return Tensor._make(a, a.reshape(-1), dtype)


def run_pointwise(op: registry.OpDef, args: tuple, out: np.ndarray, compute: _dt.dtype) -> None:
    """Pick the loop variant (contiguous/scalar pattern or strided) and run it into ``out``."""
    n = out.size
    if n == 0:
        return
    if out.dtype == np.float16 or any(isinstance(x, _TENSOR) and x.dtype is _float16 for x in args):
        return _run_half(op, args, out, compute)
    mod = _pw.kernels(op, len(args), compute.name, out.dtype.name)
    shape = out.shape
    if out.flags.c_contiguous:
        pat, flat = [], []
        for x in args:
            if isinstance(x, _TENSOR):
                a = x._a
                if a.shape == shape and a.flags.c_contiguous:
                    pat.append("a")
                    flat.append(a.reshape(-1))
                    continue
                if a.size == 1:
                    pat.append("s")
                    flat.append(a.reshape(-1)[0])
                    continue
                break
            pat.append("s")
            flat.append(x)
        else:
            if "a" not in pat:  # every input is a single value: the strided loop fills ``out``
                return _strided(mod, args, out)
            prefix = "p_" if n >= _GRAIN else "c_"
            with _errors(op):
                getattr(mod, prefix + "".join(pat))(out.reshape(-1), *flat)
            return
    _strided(mod, args, out)


def _strided(mod, args, out: np.ndarray) -> None:
    shape = out.shape or (1,)
    nd = len(shape)
    spans, strides = [], []
    for x in (out, *args):
        if isinstance(x, np.ndarray) and x is out:
            spans.append(_span(x))
            strides.append(_elem_strides(x, nd))
        elif isinstance(x, _TENSOR):
            a = x._a
            spans.append(_span(a))
            strides.append(_bcast_strides(a, shape))
        else:
            spans.append(np.asarray(x).reshape(1))
            strides.append([0] * nd)
    cshape, cstrides = coalesce(shape, strides)
    fn = mod.__dict__[("ps_" if out.size >= _GRAIN else "s_") + str(len(args))]
    call = []
    for sp, st in zip(spans, cstrides):
        call += [sp, np.asarray(st, np.int64)]
    with _errors(None):
        fn(np.asarray(cshape, np.int64), *call)


def _span(a: np.ndarray) -> np.ndarray:
    """A 1-D array over the memory ``a`` touches, starting at its first element."""
    if a.flags.c_contiguous:
        return a.reshape(-1)
    isz = a.itemsize
    span = 1 + sum((n - 1) * (s // isz) for n, s in zip(a.shape, a.strides)) if a.size else 0
    return np.lib.stride_tricks.as_strided(a, shape=(span,), strides=(isz,))


def _elem_strides(a: np.ndarray, nd: int) -> list:
    isz = a.itemsize
    st = [s // isz for s in a.strides]
    return st or [0] * nd


def _bcast_strides(a: np.ndarray, shape: tuple) -> list:
    isz = a.itemsize
    off = len(shape) - a.ndim
    st = [0] * len(shape)
    for i, (n, s) in enumerate(zip(a.shape, a.strides)):
        if n != 1:
            st[off + i] = s // isz
    return st


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


class _errors:
    """Translate Numba's integer-division error into torch's RuntimeError."""

    __slots__ = ("op",)

    def __init__(self, op):
        self.op = op

    def __enter__(self):
        return self

    def __exit__(self, et, e, tb):
        if et is ZeroDivisionError:
            raise RuntimeError("ZeroDivisionError") from None
        return False


def _run_half(op, args, out: np.ndarray, compute: _dt.dtype) -> None:
    """Numba has no float16 on CPU: compute in float32 and round the result to float16."""
    conv = []
    for x in args:
        if isinstance(x, _TENSOR) and x.dtype is _float16:
            conv.append(Tensor._make(x._a.astype(np.float32)))
        else:
            conv.append(x)
    if compute is _float16:
        compute = _float32
    if out.dtype == np.float16:
        tmp = np.empty(out.shape, np.float32)
        run_pointwise(op, tuple(conv), tmp, compute)
        out[...] = tmp
    else:
        run_pointwise(op, tuple(conv), out, compute)


def record(op: registry.OpDef, inputs: tuple, out, kw: dict | None = None):
    """Non-pointwise ops (reductions, movement, extern) call this after their kernel ran, so
    autograd can attach a node holding ``op`` (its vjp), the inputs and the kwargs."""
    if grad_hook is not None and grad_enabled[0] and op.vjp is not None:
        grad_hook(op, inputs, out, kw)
    return out
