"""The FFT family: ATen's three transform primitives, their meta rules and gradient rules.

``_fft_c2c`` (complex -> complex), ``_fft_r2c`` (real -> complex, one-sided or full) and
``_fft_c2r`` (one-sided complex -> real) transform over a tuple of dims with ATen's
normalization code (0 none, 1 by 1/sqrt(n), 2 by 1/n; n the product of the signal sizes).
``forward`` picks the exponent's sign: ``_fft_r2c(forward=False)`` is the conjugate of the
forward transform (ihfft's ``conj(r2c)``) and ``_fft_c2r(forward=True)`` transforms the
conjugate input (hfft's ``c2r(conj)``), so neither needs a conjugation pass. jtorch.fft's public
functions (``jtorch/fft``) promote, resize and pick the normalization as torch's SpectralOps.cpp
does, then call these.

Results have the strides of torch's CPU (MKL) backend, ``fft_strides``: the batch dims
outermost, in the input's stride order, then the transformed dims row-major in the order the
transform sorts them (by the input's strides, the halved dim of r2c kept last); a
multi-dim c2r is a c2c of the leading dims followed by a 1-D c2r, and its layout follows that
chain. Gradient rules are the adjoint transforms (torch's fft_r2c_backward /
fft_c2r_backward): the adjoint of an unnormalised DFT is the unnormalised DFT of the other
sign; c2r's doubles the bins whose mirror image the one-sided input stands for, and one-sided
r2c's (the real part of the zero-padded gradient's c2c in torch) is the c2r of the gradient
with those bins halved.
"""

from __future__ import annotations

from ... import dtypes as _dt
from ..plan import Out, Plan, device_of
from ..plan import memo as _memo
from ..registry import defvjp, op
from ._lazy import lazy

_E = "jtorch.kernels.cpu.fft"  # imported at the first call (_lazy.py): needs rocket-fft

NORM_NONE, NORM_BY_ROOT_N, NORM_BY_N = 0, 1, 2


def _defer_rocket_fft() -> None:
    """rocket-fft declares itself a Numba extension (entry point ``numba_extensions``), so
    Numba imports it, and scipy.fft with it (~0.5 s), at the first compilation of every process
    where it is installed. jtorch imports it at its first FFT instead (``kernels/cpu/fft.py``,
    which registers its overloads): Numba's extension loader is replaced by one that loads
    every other extension as before and skips this one."""
    import importlib.metadata
    import warnings

    from numba.core import entrypoints

    if entrypoints._already_initialized or getattr(entrypoints.init_all, "_jtorch", False):
        return

    def init_all() -> None:
        if entrypoints._already_initialized:
            return
        entrypoints._already_initialized = True
        for ep in importlib.metadata.entry_points(group="numba_extensions", name="init"):
            if ep.value.split(":")[0].split(".")[0] == "rocket_fft":
                continue
            try:
                ep.load()()
            except Exception as e:  # noqa: BLE001  (Numba's own loader warns, as here)
                warnings.warn(f"Numba extension module '{ep.module}' failed to load due to "
                              f"'{type(e).__name__}({e})'.", stacklevel=3)

    init_all._jtorch = True
    entrypoints.init_all = init_all


_defer_rocket_fft()


# -- torch's output layout (aten/src/ATen/native/mkl/SpectralOps.cpp: _exec_fft, _sort_dims) --

def _partition(ndim: int, dims: tuple) -> list:
    """libstdc++'s std::partition of 0..ndim-1 with the batch dims first (not stable: torch's
    batch order, hence its strides, comes from it where batch strides tie)."""
    perm = list(range(ndim))
    first, last = 0, ndim
    while True:
        while first != last and perm[first] not in dims:
            first += 1
        if first == last:
            return perm[:first]
        last -= 1
        while first != last and perm[last] in dims:
            last -= 1
        if first == last:
            return perm[:first]
        perm[first], perm[last] = perm[last], perm[first]
        first += 1


def _sort_dims(strides: tuple, dims: tuple, exclude_last: bool = False) -> tuple:
    """The transformed dims by decreasing input stride (the halved dim stays last)."""
    if exclude_last:
        return tuple(sorted(dims[:-1], key=lambda d: -strides[d])) + dims[-1:]
    return tuple(sorted(dims, key=lambda d: -strides[d]))


def exec_strides(in_strides: tuple, out_shape: tuple, dims: tuple) -> tuple:
    """Element strides of one transform's result: the batch dims (sorted by the input's
    strides) collapsed into one outer dim, the transformed dims ``dims`` row-major after it."""
    batch = sorted(_partition(len(out_shape), dims), key=lambda d: -in_strides[d])
    st = [0] * len(out_shape)
    inner = 1
    for d in reversed(dims):
        st[d] = inner
        inner *= max(out_shape[d], 1)
    numel = 1
    for d in reversed(batch):
        st[d] = numel * inner
        numel *= out_shape[d]
    return tuple(st)


def fft_strides(kind: str, in_strides: tuple, in_shape: tuple, out_shape: tuple, dims: tuple,
                forward: bool = True) -> tuple:
    """The strides torch gives the result of transform ``kind`` (c2c, r2c, c2r) of an input of
    element strides ``in_strides``; ``forward=False`` r2c is ihfftn's r2c-then-c2c chain."""
    if kind == "c2c":
        return exec_strides(in_strides, out_shape, _sort_dims(in_strides, dims))
    if kind == "r2c":
        if forward or len(dims) == 1:
            return exec_strides(in_strides, out_shape, _sort_dims(in_strides, dims, True))
        mid = exec_strides(in_strides, out_shape, dims[-1:])
        return exec_strides(mid, out_shape, _sort_dims(mid, dims[:-1]))
    if len(dims) > 1:  # c2r: a c2c of the leading dims, then a 1-D c2r
        in_strides = exec_strides(in_strides, in_shape, _sort_dims(in_strides, dims[:-1]))
        dims = dims[-1:]
    return exec_strides(in_strides, out_shape, dims)


# -- meta rules --------------------------------------------------------------------------------

_plans: dict = {}


def _elem_strides(a) -> tuple:
    isz = a.itemsize
    return tuple(s // isz for s in a.strides)


def _memo_meta(kind: str, rule):
    """``rule`` memoised on the input's geometry and the call's parameters."""

    def meta(x, **kw):
        try:
            a = x._a
            key = (kind, a.__class__, a.shape, a.strides, x.dtype, *kw.items())
            return _plans[key]
        except KeyError:
            return _memo(_plans, key, rule(x, **kw))
        except (AttributeError, TypeError):  # not a tensor, or an unhashable argument
            return rule(x, **kw)

    return meta


def _check(x, fn: str, dims: tuple, complex_in: bool) -> None:
    d = x.dtype
    if complex_in and not d.is_complex:
        raise RuntimeError(f"{fn} expects a complex input tensor, but got {d.scalar_name}")
    if not complex_in and d not in (_dt.float32, _dt.float64):
        raise RuntimeError(f"{fn} expects a float32 or float64 input tensor, but got "
                           f"{d.scalar_name}")
    nd = x._a.ndim
    if any(not 0 <= k < nd for k in dims) or len(set(dims)) != len(dims):
        raise RuntimeError(f"{fn}: dims {list(dims)} are not distinct dims of a {nd}-d tensor")


def _c2c_meta(x, *, dim: tuple, normalization: int, forward: bool) -> Plan:
    dims = tuple(dim)
    _check(x, "_fft_c2c", dims, True)
    a = x._a
    st = fft_strides("c2c", _elem_strides(a), a.shape, a.shape, dims)
    return Plan(Out(a.shape, x.dtype, st),
                {"dim": dims, "normalization": normalization, "forward": forward}, device_of(x))


def _r2c_meta(x, *, dim: tuple, normalization: int, onesided: bool, forward: bool = True) -> Plan:
    dims = tuple(dim)
    if not dims:
        raise RuntimeError("_fft_r2c: must transform at least one dim")
    _check(x, "_fft_r2c", dims, False)
    a = x._a
    n = a.shape[dims[-1]]
    shape = list(a.shape)
    if onesided:
        shape[dims[-1]] = n // 2 + 1
    shape = tuple(shape)
    st = fft_strides("r2c", _elem_strides(a), a.shape, shape, dims, forward)
    kw = {"dim": dims, "normalization": normalization, "onesided": onesided, "forward": forward,
          "last_dim_size": n}
    return Plan(Out(shape, x.dtype.to_complex(), st), kw, device_of(x))


def _c2r_meta(x, *, dim: tuple, normalization: int, last_dim_size: int,
              forward: bool = False) -> Plan:
    dims = tuple(dim)
    if not dims:
        raise RuntimeError("_fft_c2r: must transform at least one dim")
    _check(x, "_fft_c2r", dims, True)
    a = x._a
    if last_dim_size < 1 or a.shape[dims[-1]] != last_dim_size // 2 + 1:
        raise RuntimeError(f"_fft_c2r: last_dim_size {last_dim_size} does not match the "
                           f"one-sided input's {a.shape[dims[-1]]} values")
    shape = list(a.shape)
    shape[dims[-1]] = last_dim_size
    shape = tuple(shape)
    st = fft_strides("c2r", _elem_strides(a), a.shape, shape, dims)
    kw = {"dim": dims, "normalization": normalization, "last_dim_size": last_dim_size,
          "forward": forward}
    return Plan(Out(shape, x.dtype.to_real(), st), kw, device_of(x))


fft_c2c_op = op("_fft_c2c", "extern", _memo_meta("c2c", _c2c_meta), lazy(_E, "c2c_cpu"),
                kernel_name="_fft_c2c")
fft_r2c_op = op("_fft_r2c", "extern", _memo_meta("r2c", _r2c_meta), lazy(_E, "r2c_cpu"),
                kernel_name="_fft_r2c")
fft_c2r_op = op("_fft_c2r", "extern", _memo_meta("c2r", _c2r_meta), lazy(_E, "c2r_cpu"),
                kernel_name="_fft_c2r")


# -- the calls the public functions and the gradient rules make ------------------------------

def c2c(x, dim: tuple, normalization: int, forward: bool):
    return fft_c2c_op(x, dim=tuple(dim), normalization=normalization, forward=forward)


def r2c(x, dim: tuple, normalization: int, onesided: bool, forward: bool = True):
    return fft_r2c_op(x, dim=tuple(dim), normalization=normalization, onesided=onesided,
                      forward=forward)


def c2r(x, dim: tuple, normalization: int, last_dim_size: int, forward: bool = False):
    return fft_c2r_op(x, dim=tuple(dim), normalization=normalization,
                      last_dim_size=last_dim_size, forward=forward)


# -- gradient rules: vjp(node, grad) in jtorch ops ---------------------------------------------

def _as_complex(g, like_dtype):
    return g if g.dtype.is_complex else g.to(like_dtype)


def _c2c_vjp(c, g):
    kw = c.kw
    g = _as_complex(g, c._out_meta[0][1])
    return (c2c(g, kw["dim"], kw["normalization"], not kw["forward"]),)


def _mirror_weights(g, last: int, count: int, value: float):
    """g times ``value`` at bins 1 .. count of dim ``last`` (the one-sided bins whose mirror
    image the other half of the spectrum holds)."""
    from ...ops.creation import arange

    k = arange(g.shape[last], device=g.device)
    w = ((k >= 1) & (k <= count)).to(g.dtype.to_real()) * (value - 1.0) + 1.0
    return g * w.reshape([-1] + [1] * (g.dim() - 1 - last))


def _r2c_vjp(c, g):
    """Re(DFT^H of the gradient). One-sided: the gradient is the one-sided half of a Hermitian
    spectrum's, so Re(DFT^H) of it zero-padded is the c2r (the real inverse transform) of it
    with the mirrored bins halved: half the work of torch's pad + c2c + real, the same values."""
    kw = c.kw
    dims, n = kw["dim"], kw["last_dim_size"]
    g = _as_complex(g, c._out_meta[0][1])
    if not kw["onesided"]:
        gi = c2c(g, dims, kw["normalization"], not kw["forward"])
        return (gi.to(gi.dtype.to_real()),)
    last = dims[-1]
    halve = n - g.shape[last]  # bins 1 .. n - (n // 2 + 1)
    if halve > 0:
        g = _mirror_weights(g, last, halve, 0.5)
    return (c2r(g, dims, kw["normalization"], n, not kw["forward"]),)


def _c2r_vjp(c, g):
    """The one-sided r2c of the gradient, the bins whose mirror the input stands for doubled."""
    kw = c.kw
    dims = kw["dim"]
    last = dims[-1]
    gi = r2c(g, dims, kw["normalization"], True, not kw["forward"])
    double = kw["last_dim_size"] - gi.shape[last]  # bins 1 .. n - (n // 2 + 1)
    if double > 0:
        gi = _mirror_weights(gi, last, double, 2.0)
    return (gi,)


defvjp(fft_c2c_op, _c2c_vjp, "", name="FftC2CBackward0")
defvjp(fft_r2c_op, _r2c_vjp, "", name="FftR2CBackward0")
defvjp(fft_c2r_op, _c2r_vjp, "", name="FftC2RBackward0")
