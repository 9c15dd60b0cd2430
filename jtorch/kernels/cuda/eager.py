"""CUDA tensors' eager kernels, as ``dispatch`` calls them.

- Pointwise ops run the OpDefs' generated CUDA kernels (``pointwise.py``: the CPU loops'
  body under a grid-stride stager), over the operands' storages at their strides, with Python
  numbers and CPU 0-d tensors as one-element arrays read at stride 0.
- ``_to_copy`` moves storage blocks between host and device (``cuda_array.upload`` and
  ``download``); within the device it is the ``copy`` kernel.
- Every other op with a CPU kernel runs it over host copies of its CUDA operands' storages
  and writes changed storages back (``host_kernel``): correct for views, in-place ops and
  side effects (running statistics), and slow; a bridge until the op has a CUDA kernel.
  ``FALLBACKS`` counts those calls per op, so tests and users see which ops take it.
16-bit floats and complex numbers take the host path for pointwise ops too (Numba's CUDA
target has no bfloat16, and the CPU path computes halves through float32).
"""

from __future__ import annotations

import collections
import itertools
import math

import numpy as np

from ... import dispatch
from ...amp import state as _amp
from ...cuda_array import CudaArray, download, empty, mirror, upload, write_back
from ...device import CPU
from ...shape import bcast_elem_strides, broadcast_shapes
from ...tensor import Tensor
from .. import registry
from ..plan import Plan, common_device
from . import cublas as _cublas
from . import matmul as _mm
from . import optim as _opt
from . import pointwise as _pw
from . import reduce as _rd
from . import target

# The simulator runs every thread as a Python thread (a launch of 8 x 4 threads costs 26 ms, of
# 4 x 2 threads 2 ms): few, and grid-stride loops cover any size.
THREADS = 4 if target.SIMULATOR else _pw.THREADS
MAX_BLOCKS = 2 if target.SIMULATOR else _pw.MAX_BLOCKS

FALLBACKS: collections.Counter = collections.Counter()

_NATIVE = frozenset({"bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64"})
# float16 is loaded and stored natively but computed in float32 (as the CPU path does); casts
# between it and the other float dtypes run on the device too
_HALF = "float16"
_FLOATS = frozenset({"float16", "float32", "float64"})
# torch's opmath operands: a scalar there is not rounded to the 16-bit dtype first
_SCALAR_OPMATH = dispatch._SCALAR_OPMATH
_CUDA = CudaArray
_TENSOR = Tensor


# -- pointwise ------------------------------------------------------------------------------

def pointwise(op: registry.OpDef, args: tuple, out, inplace: bool, plan) -> Tensor:
    """``dispatch.pointwise`` where an operand or ``out=`` is a CUDA tensor."""
    _, compute, result, _, half, _ = plan
    if half and _amp.on and op.name in _amp.CUDA_FP32 and out is None and not inplace and \
            _amp.state.enabled.get("cuda"):  # CUDA autocast's float32 list
        return dispatch.pointwise(op, _amp.fp32_cuda(*args))
    if half and _amp.on and op.name in _amp.CUDA_PROMOTE and out is None and not inplace:
        cast = _amp.promote("cuda", *args)  # CUDA autocast's promote list
        if any(a is not b for a, b in zip(cast, args)):
            return dispatch.pointwise(op, cast)
    dev = common_device(*args)
    shape = tuple(broadcast_shapes(*[x._a.shape for x in args if isinstance(x, _TENSOR)]))
    if out is not None and args and out is args[0]:
        inplace = True
    saved_self = None
    grad = dispatch.grad_hook is not None and dispatch.grad_state.enabled
    if inplace:
        out = args[0]
        if grad:
            dispatch.check_inplace(out)
            if op.saves is not None and "0" in op.saves and dispatch.needs_grad(args):
                saved_self = _copy(out)
    if out is not None:
        if not inplace and dispatch.needs_grad(args):
            raise RuntimeError(f"{op.name}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires grad.")
        if out.device != dev:
            raise dispatch.cross_device(dev, out.device)
        dispatch.check_cast(result, out.dtype)
        dispatch.check_overlap(out, args)
        if tuple(out._a.shape) != shape:
            if inplace:
                raise RuntimeError(f"output with shape {list(out._a.shape)} doesn't match the "
                                   f"broadcast shape {list(shape)}")
            resize(out, shape)
        res, out_dtype = out, out.dtype
    else:
        out_dtype = result
        a, st = empty(shape, result.np, dev, dispatch.result_strides(args, shape))
        res = Tensor._make(a, st, result)
    if not half and compute.name in _NATIVE and out_dtype.name in _NATIVE:
        launch(op, compute.name, out_dtype.name, shape, res._a, args)
    elif half and (ops := _half_operands(op, args, compute, out_dtype)) is not None:
        launch(op, "float32", out_dtype.name, shape, res._a, ops)
    else:
        _on_host_into(op, args, res, compute)
    if out is not None:
        dispatch.bump_version(out)
    if grad:
        for x in args:
            if isinstance(x, _TENSOR) and x._requires_grad:
                dispatch.grad_hook(op, args, res,
                                   None if saved_self is None else {"_self": saved_self})
                break
    return res


_TO_FLOAT = (registry.TO_FLOAT32, registry.TO_FLOAT64)


def _half_operands(op: registry.OpDef, args: tuple, compute, out_dtype) -> tuple | None:
    """The operands of a float16 call computed in float32 on the device, as the CPU path
    computes it (``dispatch._run_half``): Python numbers rounded to float16 first except at an
    opmath position, the result rounded once. None where that path differs from this one
    (operands of other dtypes, a result wider than float16, CPU 0-d tensors). A conversion to
    float32 or float64 (``_to_float32``) widens exactly through float32."""
    if op.dtype_rule not in _TO_FLOAT and (compute.name != _HALF or
                                           out_dtype.name not in (_HALF, "bool")):
        return None
    n = len(args) - op.nparams
    operands = []
    for i, x in enumerate(args):
        if isinstance(x, _TENSOR):
            if x._a.__class__ is not _CUDA or (i < n and x.dtype.name != _HALF) or (
                    i >= n and x.dtype.name not in _NATIVE):
                return None
        elif i < n and x.__class__ in (float, int) and _SCALAR_OPMATH.get(op.name) != i:
            with np.errstate(over="ignore"):
                r = float(np.float16(np.float32(x)))
            x = r if x.__class__ is float or r != x else x
        operands.append(x)
    return tuple(operands)


def launch(op: registry.OpDef, compute: str, out: str, shape: tuple, o: CudaArray,
           args: tuple) -> None:
    """``o[...] = op(*args)`` over the broadcast ``shape`` on the device."""
    n = 1
    for s in shape:
        n *= s
    if not n:
        return
    nd = len(shape)
    blocks = max(1, min(MAX_BLOCKS, (n + THREADS - 1) // THREADS))
    dense = o.flags.c_contiguous
    ins = []
    for x in args:
        a = x._a if isinstance(x, _TENSOR) else None
        if a is not None and a.__class__ is _CUDA:
            dense = dense and a.shape == shape and a.flags.c_contiguous
            ins.append((a.buf, a.offset, bcast_elem_strides(a, shape)))
        else:  # a Python number or a CPU 0-d tensor: one element read at stride 0
            dense = False
            ins.append((_const(x), 0, [0] * nd))
    if dense:
        views = [buf[off:off + n] for buf, off, _ in ins]
        k = _pw.kernel(op, len(args), compute, out, "contiguous")
        k[blocks, THREADS](o.buf[o.offset:o.offset + n], *views)
        return
    geo = _pw._geometry(shape, [o.element_strides(), *[s for _, _, s in ins]])
    flat = [geo, o.buf, o.offset]
    for buf, off, _ in ins:
        flat += [buf, off]
    _pw.kernel(op, len(args), compute, out, "strided")[blocks, THREADS](*flat)


_consts: dict = {}


def _const(x):
    """A one-element device array holding operand ``x`` (kept per type and bits: uploading a
    scalar per call would cost a transfer)."""
    if isinstance(x, _TENSOR):  # a CPU 0-d tensor: its value in its dtype
        v = x._a.reshape(()).item()
        dt = x._a.dtype
    else:
        v = x
        dt = np.dtype(np.bool_ if isinstance(x, (bool, np.bool_)) else
                      np.int64 if isinstance(x, (int, np.integer)) else np.float64)
    key = (dt.str, repr(v))
    d = _consts.get(key)
    if d is None:
        if len(_consts) > 4096:
            _consts.clear()
        d = _consts[key] = target.to_device(np.array([v], dtype=dt))
    return d


def resize(out: Tensor, shape: tuple) -> None:
    """An ``out=`` CUDA tensor of another shape gets fresh row-major storage (torch warns when
    it held elements)."""
    if out._a.size:
        import warnings

        warnings.warn(
            f"An output with one or more elements was resized since it had shape "
            f"{list(out._a.shape)}, which does not match the required output shape "
            f"{list(shape)}. This behavior is deprecated.", UserWarning, stacklevel=5)
    out._a, out._st = empty(shape, out._a.dtype, out._a.dev)


def _copy(x: Tensor) -> Tensor:
    """A fresh CUDA tensor with ``x``'s values (row-major)."""
    a, st = empty(x._a.shape, x._a.dtype, x._a.dev)
    t = Tensor._make(a, st, x.dtype)
    _copy_values(t, x)
    return t


def _copy_values(dst: Tensor, src: Tensor) -> None:
    """dst[...] = src (broadcast, cast) on the device, or through the host for dtypes the CUDA
    kernels lack."""
    op = registry.REGISTRY["copy"]
    if _device_cast(src.dtype.name, dst.dtype.name):
        compute = "float32" if src.dtype.name == _HALF else src.dtype.name  # (exact widening)
        launch(op, compute, dst.dtype.name, tuple(dst._a.shape), dst._a, (src,))
    else:
        _on_host_into(op, (src,), dst, src.dtype)


def _device_cast(src: str, dst: str) -> bool:
    """Whether the copy kernel converts ``src`` to ``dst`` on the device: the native dtypes,
    and float16 to and from floats (one rounding, to nearest even, as NumPy's)."""
    if _HALF in (src, dst):
        return src in _FLOATS and dst in _FLOATS
    return src in _NATIVE and dst in _NATIVE


def copy_into(out: Tensor, res: Tensor) -> Tensor:
    """``dispatch.copy_into`` for a CUDA ``out=`` tensor."""
    if out.device != res.device:
        raise dispatch.cross_device(res.device, out.device)
    if tuple(out._a.shape) != tuple(res._a.shape):
        resize(out, tuple(res._a.shape))
    if out._a.size:
        _copy_values(out, res)
    dispatch.bump_version(out)
    return out


# -- transfers ------------------------------------------------------------------------------

def to_copy_cuda(plan: Plan, x: Tensor) -> Tensor:
    """``_to_copy`` onto a CUDA device: a CPU tensor is converted on the host (dtype, the
    plan's layout) and its storage uploaded; a CUDA one is copied by the device's kernel."""
    from ..cpu.fill import to_copy_cpu

    o = plan.out
    if x._a.__class__ is not _CUDA:
        host = to_copy_cpu(plan, x)
        a, st = upload(host._a, plan.device)
        return Tensor._make(a, st, o.dtype)
    if x.device != plan.device:  # another device: through the host
        return to_copy_cuda(plan, Tensor._make(download(x._a), None, x.dtype))
    if _device_cast(x.dtype.name, o.dtype.name):
        a, st = empty(tuple(o.shape), o.dtype.np, plan.device, o.strides)
        t = Tensor._make(a, st, o.dtype)
        _copy_values(t, x)
        return t
    host = to_copy_cpu(plan, Tensor._make(download(x._a), None, x.dtype))
    a, st = upload(host._a, plan.device)
    return Tensor._make(a, st, o.dtype)


def clone_cuda(plan: Plan, x: Tensor) -> Tensor:
    o = plan.out
    a, st = empty(tuple(o.shape), o.dtype.np, plan.device, o.strides)
    t = Tensor._make(a, st, o.dtype)
    _copy_values(t, x)
    return t


def copy_inplace_cuda(plan: Plan, x: Tensor, src: Tensor) -> Tensor:
    """x[...] = src: a CPU ``src`` is uploaded first, a CUDA one that shares memory with x
    copied first."""
    if src._a.__class__ is not _CUDA:
        a, st = upload(src._a, x.device)
        src = Tensor._make(a, st, src.dtype)
    elif src.device != x.device:
        a, st = upload(download(src._a), x.device)
        src = Tensor._make(a, st, src.dtype)
    elif _overlap(src._a, x._a):
        src = _copy(src)
    _copy_values(x, src)
    return x


def _overlap(a: CudaArray, b: CudaArray) -> bool:
    if not a.size or not b.size:
        return False
    a0, b0 = a.data_ptr(), b.data_ptr()
    return a0 < b0 + b.extent() * b.itemsize and b0 < a0 + a.extent() * a.itemsize


def fill_cuda(plan: Plan, x: Tensor, value_t=None) -> Tensor:
    value = plan.kw["value"] if value_t is None else value_t.item()
    if x._a.size:
        d = x.dtype
        if d.name in _NATIVE:
            launch(registry.REGISTRY["copy"], d.name, d.name, tuple(x._a.shape), x._a, (value,))
        elif d.name == _HALF and isinstance(value, (int, float)):  # rounded once, from float64
            launch(registry.REGISTRY["copy"], "float64", d.name, tuple(x._a.shape), x._a,
                   (float(value),))
        else:
            _on_host_into(registry.REGISTRY["copy"], (value,), x, d)
    return x


def empty_cuda(plan: Plan) -> Tensor:
    """Uninitialised device memory (filled as on CPU in deterministic mode)."""
    from ... import _settings
    from ..cpu.fill import _uninitialized

    o = plan.out
    a, st = empty(tuple(o.shape), o.dtype.np, plan.device, o.strides)
    t = Tensor._make(a, st, o.dtype)
    if _settings.fill_empty():
        _fill_storage(t, _uninitialized(o.dtype))
    return t


def full_cuda(plan: Plan) -> Tensor:
    t = empty_cuda(plan)
    _fill_storage(t, plan.kw["fill_value"])
    return t


def zeros_cuda(plan: Plan) -> Tensor:
    t = empty_cuda(plan)
    _fill_storage(t, 0)
    return t


def _fill_storage(t: Tensor, value) -> None:
    """Every element of ``t``'s storage (a fresh dense tensor's: exactly its elements)."""
    st = t._st
    fill_cuda(Plan(None, {"value": value}, st.dev), Tensor._make(st, st, t.dtype))


# -- reductions -----------------------------------------------------------------------------

R_THREADS = 2 if target.SIMULATOR else _rd.THREADS  # (the tree: one level)
_BOOL_COMPUTE = frozenset({"all", "any"})


def reduction_cuda(op: registry.OpDef):
    """A generated reduction's CUDA kernel (``reduce.py``: one block per result, a fixed
    combine tree, so a result is the same on every run); float16 is read widened to float32
    and the result rounded once, as on CPU; bfloat16 and complex dtypes take the host path."""
    host = host_kernel(op)
    bool_compute = op.name in _BOOL_COMPUTE

    def run(plan: Plan, x: Tensor) -> Tensor:
        o = plan.out
        d = o.dtype
        compute = "bool" if bool_compute else d.name
        if x.dtype.name == _HALF and not bool_compute and d.name in _FLOATS and x._a.size:
            compute = "float32" if d.name == _HALF else d.name  # (read widened, as on CPU)
        elif compute not in _NATIVE or d.name not in _NATIVE or x.dtype.name not in _NATIVE \
                or not x._a.size:  # (an empty input: the identity's result, from the host)
            return host(plan, x)
        a = x._a
        dims = tuple(plan.kw["dim"])
        if _rd.plan_reduce(tuple(a.shape), a.element_strides(), dims) is None:
            # reduced dims no 3-D view merges: a copy with the kept dims first, the reduced
            # ones last (the result's order is the kept dims' either way)
            kept = [k for k in range(a.ndim) if k not in dims]
            with _Unrecorded():
                x = _copy(x.permute(*kept, *dims))
            a = x._a
            dims = tuple(range(len(kept), a.ndim))
        ra, rst = empty(tuple(o.shape), d.np, plan.device)
        res = Tensor._make(ra, rst, d)
        if ra.size:
            out0 = rst.buf[:ra.size]
            # a float16 result is computed as float32 and rounded by the store, as on CPU
            _rd.run(op, compute, "float32" if d.name == _HALF else d.name, a.buf,
                    tuple(a.shape), a.element_strides(), a.offset,
                    dims, out0, threads=R_THREADS, max_blocks=MAX_BLOCKS,
                    widen=x.dtype.name == _HALF)
        return res

    return run


# -- products -------------------------------------------------------------------------------

_GEMM = frozenset({"float16", "float32", "float64"})  # (float16 summed in float32)


def _batched(x: Tensor, nbatch: int) -> tuple:
    """(tensor, (span, offset, (batch, row, col) element strides)) of a product operand whose
    first ``nbatch`` dims are its batch: they must merge into one stride, else it is copied
    row-major first."""
    a = x._a
    st = a.element_strides()
    shape = tuple(a.shape)
    dims = [(n, s) for n, s in zip(shape[:nbatch], st[:nbatch]) if n != 1]
    for (_, s0), (n1, s1) in itertools.pairwise(dims):
        if s0 != s1 * n1:
            x = _copy(x)
            return _batched(x, nbatch)
    sb = dims[-1][1] if dims else 0
    return x, (a.buf, a.offset, (sb, st[nbatch], st[nbatch + 1]))


def _product(plan: Plan, a: Tensor, b: Tensor, nbatch: int, z=None, alpha=1.0, beta=0.0):
    o = plan.out
    d = o.dtype
    shape = tuple(o.shape)
    ra, rst = empty(shape, d.np, plan.device)
    res = Tensor._make(ra, rst, d)
    M, N = shape[-2], shape[-1]
    K = a._a.shape[-1]
    nb = math.prod(shape[:-2])
    _, sa = _batched(a, nbatch)
    _, sb = _batched(b, nbatch)
    zs = None
    if z is not None:
        zst = bcast_elem_strides(z._a, (M, N))
        zs = (z._a.buf, z._a.offset, (0, zst[0], zst[1]))
    sc = (rst.buf, 0, (M * N, N, 1))
    if _cublas.binding() is not None and nb and M and N:
        if _cublas.layout(M, K, *sa[2][1:]) is None:  # no unit stride: row-major for cuBLAS
            _, sa = _batched(_copy(a), nbatch)
        if _cublas.layout(K, N, *sb[2][1:]) is None:
            _, sb = _batched(_copy(b), nbatch)
        with_z = zs is not None and beta != 0
        if with_z:  # cuBLAS adds beta * C: C starts as the addend
            _copy_values(res, z)
        if _cublas.run(d.name, (nb, M, N, K), sa, sb, sc, alpha, beta if with_z else 0.0,
                       plan.device.index or 0):
            return res
    _mm.run(d.name, (nb, M, N, K), sa, sb, sc, zs, alpha, beta, plan.device.index or 0)
    return res


def _gemm_kernel(op_name: str, nbatch_of):
    host = host_kernel(registry.REGISTRY[op_name])

    def run(plan: Plan, a: Tensor, b: Tensor) -> Tensor:
        if plan.out.dtype.name not in _GEMM:
            return host(plan, a, b)
        return _product(plan, a, b, nbatch_of(a))

    return run


def addmm_cuda(plan: Plan, c: Tensor, a: Tensor, b: Tensor) -> Tensor:
    if plan.out.dtype.name not in _GEMM:
        return host_kernel(registry.REGISTRY["addmm"])(plan, c, a, b)
    return _product(plan, a, b, 0, c, plan.kw["alpha"], plan.kw["beta"])


# -- composites: ops written as the device's kernels -------------------------------------------

_FLOAT = frozenset({"float32", "float64"})


class _Unrecorded:
    """Calls inside a kernel are the kernel's: autograd records the op that called it."""

    def __enter__(self):
        self.g = dispatch.grad_state.enabled
        dispatch.grad_state.enabled = False

    def __exit__(self, *exc):
        dispatch.grad_state.enabled = self.g


def _apply(name: str, *args) -> Tensor:
    return dispatch.pointwise(registry.REGISTRY[name], args)


def _red(name: str, x: Tensor, dim: int) -> Tensor:
    return dispatch.call(registry.REGISTRY[name], x, dim=(dim,), keepdim=True)


def softmax_cuda(log: bool):
    """softmax / log_softmax from the device's reductions and pointwise kernels: x - max, its
    exp, their sum per row (the CPU kernel's formula, summed in the device's order)."""
    host = host_kernel(registry.REGISTRY["log_softmax" if log else "softmax"])

    def run(plan: Plan, x: Tensor) -> Tensor:
        d = plan.out.dtype
        if d.name not in _FLOAT or not x._a.ndim or not x._a.size:
            return host(plan, x)
        dim = plan.kw["dim"] % x._a.ndim
        with _Unrecorded():
            if x.dtype is not d:
                x = x.to(d)
            z = _apply("sub", x, _red("amax", x, dim))
            e = _apply("exp", z)
            s = _red("sum", e, dim)
            return _apply("sub", z, _apply("log", s)) if log else _apply("div", e, s)

    return run


def softmax_backward_cuda(log: bool):
    """The gradients: g - exp(y) * sum(g) (log_softmax), y * (g - sum(g * y)) (softmax)."""
    host = host_kernel(registry.REGISTRY["_log_softmax_backward_data" if log else
                                         "_softmax_backward_data"])

    def run(plan: Plan, g: Tensor, y: Tensor) -> Tensor:
        if plan.out.dtype.name not in _FLOAT or not y._a.ndim or not plan.out.shape or \
                0 in plan.out.shape:
            return host(plan, g, y)
        dim = plan.kw["dim"] % len(plan.out.shape)
        with _Unrecorded():
            if log:
                res = _apply("sub", g, _apply("mul", _apply("exp", y), _red("sum", g, dim)))
            else:
                res = _apply("mul", y, _apply("sub", g, _red("sum", _apply("mul", g, y), dim)))
            if res.dtype is not plan.out.dtype:
                res = res.to(plan.out.dtype)
        return res if res._a.flags.c_contiguous else _copy(res)

    return run


def cat_cuda(plan: Plan, *tensors: Tensor) -> Tensor:
    """One copy kernel per input into its slice of the result."""
    res = empty_cuda(plan)
    o = res._a
    if not o.size:
        return res
    dim = plan.kw["dim"]
    step = o.element_strides()
    off = 0
    for x in tensors:
        if o.ndim != 1 and tuple(x._a.shape) == (0,):
            continue  # (legacy 1-D empty inputs add nothing)
        n = x._a.shape[dim]
        if n:
            shape = list(o.shape)
            shape[dim] = n
            _write_part(res, x, tuple(shape), o.strides, o.offset + off * step[dim])
        off += n
    return res


def _write_part(res: Tensor, x: Tensor, shape: tuple, strides: tuple, offset: int) -> None:
    """``x`` copied into the view (``shape``, byte ``strides``, element ``offset``) of ``res``."""
    o = res._a
    view = CudaArray(shape, o.dtype, strides, offset, o.buf, o.dev)
    _copy_values(Tensor._make(view, res._st, res.dtype), x)


def stack_cuda(plan: Plan, *tensors: Tensor) -> Tensor:
    """One copy kernel per input into its index of the new dim."""
    res = empty_cuda(plan)
    o = res._a
    if not o.size:
        return res
    dim = plan.kw["dim"]
    step = o.element_strides()
    shape = tuple(n for k, n in enumerate(o.shape) if k != dim)
    strides = tuple(s for k, s in enumerate(o.strides) if k != dim)
    for k, x in enumerate(tensors):
        _write_part(res, x, shape, strides, o.offset + k * step[dim])
    return res


# -- optimizer updates ----------------------------------------------------------------------

def fused_optim_cuda(name: str):
    """``_fused_<name>_``'s CUDA kernel (``optim.py``: the CPU driver restaged); tensors that
    are not row-major in the parameter's float dtype take the host path."""
    host = host_kernel(registry.REGISTRY[f"_fused_{name}_"])

    def kernel(plan: Plan, *tensors) -> tuple:
        p = tensors[0]
        dt = p._a.dtype
        arrays = []
        for k, t in enumerate(tensors):
            if t is None or (k and not t._a.size):
                arrays.append(None)
                continue
            a = t._a
            if a.__class__ is not _CUDA or a.dtype != dt or not a.flags.c_contiguous:
                return host(plan, *tensors)
            arrays.append((a.buf, a.offset, a.size))
        if not _opt.run(name, arrays, plan.kw["scalars"], THREADS, MAX_BLOCKS):
            return host(plan, *tensors)
        written = tuple([tensors[w.src] for w in plan.out])
        for t in written:
            t._vc[0] += 1
        return written

    return kernel


# -- the host path --------------------------------------------------------------------------

class _Mirrors:
    """Host copies of the CUDA storages one call reads, each made once (views of one storage
    share it), and the host tensors standing for the call's CUDA tensors."""

    def __init__(self) -> None:
        self.stores: dict = {}  # key -> [device storage, host copy, the copy as read]
        self.tensors: dict = {}  # id(host tensor) -> (host tensor, CUDA tensor)

    def host(self, x):
        if isinstance(x, _TENSOR):
            a = x._a
            if a.__class__ is not _CUDA:
                return x
            st = x._st
            key = (st.data_ptr() if st.shape[0] else id(st), st.dtype.str, st.shape[0])
            m = self.stores.get(key)
            if m is None:
                h = mirror(st)
                m = self.stores[key] = [st, h, h.copy()]
            hst = m[1]
            if a.size:
                ha = np.ndarray(a.shape, a.dtype, hst, a.offset * a.itemsize, a.strides)
            else:
                ha = np.empty(a.shape, a.dtype)
            t = Tensor._make(ha, hst if a.size else None, x.dtype, vc=x._vc)  # (bumps reach x)
            self.tensors[id(t)] = (t, x)
            return t
        if isinstance(x, (list, tuple)) and any(isinstance(y, (_TENSOR, list, tuple)) for y in x):
            return type(x)(self.host(y) for y in x)
        return x

    def write_back(self) -> None:
        """Storages the host kernel changed go back to the device."""
        for st, h, before in self.stores.values():
            if h.size and not np.array_equal(h.view(np.uint8), before.view(np.uint8)):
                write_back(st, h)

    def device(self, r, dev):
        """A host kernel's result as CUDA tensors: a host stand-in is its CUDA tensor, a view
        of a mirrored storage views the device storage, anything else is uploaded."""
        if isinstance(r, _TENSOR):
            e = self.tensors.get(id(r))
            if e is not None and e[0] is r:
                return e[1]
            a = r._a
            if a.__class__ is not np.ndarray:
                return r
            for st, h, _ in self.stores.values():
                if r._st is h:
                    off = (a.__array_interface__["data"][0] - h.__array_interface__["data"][0]) \
                        // a.itemsize if a.size else 0
                    v = CudaArray(a.shape, a.dtype, a.strides, off, st.buf, st.dev)
                    return Tensor._make(v, st, r.dtype)
            ca, cst = upload(a, dev)
            return Tensor._make(ca, cst, r.dtype)
        if isinstance(r, (list, tuple)):
            return type(r)(self.device(y, dev) for y in r)
        return r


def host_kernel(op: registry.OpDef):
    """The kernel ``dispatch`` runs for an op with no CUDA kernel: its CPU kernel over host
    copies of the CUDA operands."""

    def run(plan: Plan, *args):
        FALLBACKS[op.name] += 1
        m = _Mirrors()
        hargs = tuple(m.host(x) for x in args)
        res = op.kernels["cpu"](Plan(plan.out, plan.kw, CPU), *hargs)
        m.write_back()
        return m.device(res, plan.device)

    return run


def _on_host_into(op: registry.OpDef, args: tuple, res: Tensor, compute) -> None:
    """A pointwise op into CUDA tensor ``res`` through the host (dtypes CUDA kernels lack)."""
    FALLBACKS[op.name] += 1
    m = _Mirrors()
    hargs = tuple(m.host(x) for x in args)
    hres = m.host(res)
    dispatch.run_pointwise(op, hargs, hres._a, compute, res.dtype)
    m.write_back()


for _name, _kernel in (("_to_copy", to_copy_cuda), ("clone", clone_cuda),
                      ("copy_", copy_inplace_cuda), ("fill_", fill_cuda),
                      ("empty", empty_cuda), ("full", full_cuda), ("zeros", zeros_cuda)):
    registry.REGISTRY[_name].kernels["cuda"] = _kernel
registry.REGISTRY["mm"].kernels["cuda"] = _gemm_kernel("mm", lambda a: a._a.ndim - 2)
registry.REGISTRY["bmm"].kernels["cuda"] = _gemm_kernel("bmm", lambda a: a._a.ndim - 2)
registry.REGISTRY["batched_matmul"].kernels["cuda"] = _gemm_kernel("batched_matmul",
                                                                   lambda a: a._a.ndim - 2)
registry.REGISTRY["addmm"].kernels["cuda"] = addmm_cuda
registry.REGISTRY["softmax"].kernels["cuda"] = softmax_cuda(False)
registry.REGISTRY["log_softmax"].kernels["cuda"] = softmax_cuda(True)
registry.REGISTRY["_softmax_backward_data"].kernels["cuda"] = softmax_backward_cuda(False)
registry.REGISTRY["_log_softmax_backward_data"].kernels["cuda"] = softmax_backward_cuda(True)
registry.REGISTRY["cat"].kernels["cuda"] = cat_cuda
registry.REGISTRY["stack"].kernels["cuda"] = stack_cuda
for _name in _opt._cpu.KERNELS:
    registry.REGISTRY[f"_fused_{_name}_"].kernels["cuda"] = fused_optim_cuda(_name)
for _name in ("sum", "nansum", "mean", "prod", "amax", "amin", "all", "any", "count_nonzero"):
    registry.REGISTRY[_name].kernels["cuda"] = reduction_cuda(registry.REGISTRY[_name])

from . import conv, indexing, philox, resample, rows, sampling  # noqa: F401  (each registers its kernels)
