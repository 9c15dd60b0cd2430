"""torch.testing: ``assert_close`` (tensors, numbers and nested sequences / mappings of them,
with torch's default tolerances per dtype and its messages) and ``make_tensor``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from .. import dtypes as _dt
from ..tensor import Tensor

# torch's default (rtol, atol) per dtype
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex32": (1e-3, 1e-5), "complex64": (1.3e-6, 1e-5),
               "complex128": (1e-7, 1e-7)}


def _values(t: Tensor) -> np.ndarray:
    """A tensor's values as a NumPy array (bfloat16, which ``numpy()`` refuses, as float32)."""
    t = t.detach().resolve_conj()
    return np.asarray((t.float() if t.dtype is _dt.bfloat16 else t).numpy())


def assert_close(actual, expected, *, allow_subclasses: bool = True, rtol=None, atol=None,
                 equal_nan: bool = False, check_device: bool = True, check_dtype: bool = True,
                 check_layout: bool = True, check_stride: bool = False, msg=None) -> None:
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but got "
                         f"no {'rtol' if rtol is None else 'atol'}.")
    _compare(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, check_stride,
             msg, [])


def _fail(msg, default: str, path: list):
    text = default if msg is None else msg(default) if callable(msg) else msg
    if path and msg is None:
        text += "\n\nThe failure occurred for item " + "".join(f"[{p!r}]" for p in path)
    raise AssertionError(text)


def _compare(a, e, rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg, path):
    if isinstance(e, Tensor) or isinstance(a, Tensor):
        return _tensors(a, e, rtol, atol, equal_nan, check_device, check_dtype, check_stride,
                        msg, path)
    if isinstance(e, Mapping) and isinstance(a, Mapping):
        if set(a) != set(e):
            _fail(msg, f"The keys of the mappings do not match:\n{sorted(map(str, a))} != "
                       f"{sorted(map(str, e))}", path)
        for k in e:
            _compare(a[k], e[k], rtol, atol, equal_nan, check_device, check_dtype, check_stride,
                     msg, [*path, k])
        return None
    if isinstance(e, Sequence) and not isinstance(e, str) and isinstance(a, Sequence) and \
            not isinstance(a, str):
        if len(a) != len(e):
            _fail(msg, f"The length of the sequences mismatch: {len(a)} != {len(e)}", path)
        for i, (x, y) in enumerate(zip(a, e)):
            _compare(x, y, rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg,
                     [*path, i])
        return None
    if isinstance(e, (bool, int, float, complex)) and isinstance(a, (bool, int, float, complex)):
        if check_dtype and type(a) is not type(e):
            _fail(msg, f"The values for attribute 'dtype' do not match: {type(a)} != {type(e)}.",
                  path)
        r, t = (rtol, atol) if rtol is not None else \
            _TOLERANCES["float64"] if isinstance(e, (float, complex)) else (0.0, 0.0)
        if not _close_scalar(a, e, r, t, equal_nan):
            tol = r or t
            rel = abs(a - e) / abs(e) if e else math.inf
            _fail(msg, f"Scalars are not {'close' if tol else 'equal'}!\n\nExpected {e} but "
                       f"got {a}.\nAbsolute difference: {abs(a - e)}" +
                       (f" (up to {t} allowed)" if tol else "") + f"\nRelative difference: {rel}" +
                       (f" (up to {r} allowed)" if tol else ""), path)
        return None
    if a != e:
        _fail(msg, f"Objects are not equal!\n\nExpected {e!r} but got {a!r}.", path)
    return None


def _close_scalar(a, e, rtol, atol, equal_nan) -> bool:
    if a == e:
        return True
    if isinstance(a, complex) or isinstance(e, complex):
        return abs(a - e) <= atol + rtol * abs(e)
    if math.isnan(a) or math.isnan(e):
        return equal_nan and math.isnan(a) and math.isnan(e)
    return abs(a - e) <= atol + rtol * abs(e)


def _tensors(a, e, rtol, atol, equal_nan, check_device, check_dtype, check_stride, msg, path):
    if not isinstance(a, Tensor) or not isinstance(e, Tensor):
        _fail(msg, f"No comparison pair was able to handle inputs of type {type(a)} and "
                   f"{type(e)}.", path)
    if a.shape != e.shape:
        _fail(msg, f"The values for attribute 'shape' do not match: {a.shape} != {e.shape}.",
              path)
    if check_device and a.device != e.device:
        _fail(msg, f"The values for attribute 'device' do not match: {a.device} != {e.device}.",
              path)
    if check_dtype and a.dtype != e.dtype:
        _fail(msg, f"The values for attribute 'dtype' do not match: {a.dtype} != {e.dtype}.",
              path)
    if check_stride and a.stride() != e.stride():
        _fail(msg, f"The values for attribute 'stride()' do not match: {a.stride()} != "
                   f"{e.stride()}.", path)
    if rtol is None:
        rtol, atol = _TOLERANCES.get(a.dtype.name, (0.0, 0.0)) if check_dtype else \
            max(_TOLERANCES.get(a.dtype.name, (0.0, 0.0)), _TOLERANCES.get(e.dtype.name,
                                                                           (0.0, 0.0)))
    x, y = _values(a), _values(e)
    if x.dtype.kind == "b":
        x, y = x.astype(np.int64), y.astype(np.int64)
    with np.errstate(all="ignore"):
        ok = np.isclose(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan) if (rtol or atol) \
            else (x == y) | (equal_nan & np.isnan(x) & np.isnan(y) if x.dtype.kind in "fc"
                             else np.zeros(x.shape, bool))
        if ok.all():
            return
        cd = x.dtype if x.dtype.kind in "fc" else np.float32  # torch's: the dtype, or float
        xd, yd = x.astype(cd), y.astype(cd)
        diff = np.abs(xd - yd)
        rel = diff / np.abs(yd)
    bad = int((~ok).sum())
    n = ok.size
    word = "close" if rtol or atol else "equal"
    ia = np.unravel_index(int(np.nanargmax(np.where(ok, -1, diff))) if not np.isnan(diff[~ok]).all()
                          else int(np.argmax(~ok)), x.shape)
    ir = np.unravel_index(int(np.nanargmax(np.where(ok, -1, rel))) if not np.isnan(rel[~ok]).all()
                          else int(np.argmax(~ok)), x.shape)

    def num(v):
        v = float(v)
        return str(int(v)) if x.dtype.kind in "iub" and v == int(v) else repr(v)

    lines = [f"Tensor-likes are not {word}!", "",
             f"Mismatched elements: {bad} / {n} ({bad / n * 100:.1f}%)",
             f"Greatest absolute difference: {num(diff[ia])} at index {tuple(map(int, ia))}" +
             (f" (up to {atol} allowed)" if rtol or atol else ""),
             f"Greatest relative difference: {float(rel[ir])!r} at index {tuple(map(int, ir))}" +
             (f" (up to {rtol} allowed)" if rtol or atol else "")]
    _fail(msg, "\n".join(lines), path)


def make_tensor(*shape, dtype, device=None, low=None, high=None, requires_grad: bool = False,
                noncontiguous: bool = False, exclude_zero: bool = False, memory_format=None):
    """A tensor of ``shape`` with values drawn from jtorch's generator, uniform in [low, high)
    (torch's defaults: [-9, 9) for floats, [-9, 10) for ints, {0, 1} for bool)."""
    from ..ops import creation, random
    from ..ops.views import cat

    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    d = _dt.to_dtype(dtype)
    if d is _dt.bool:
        t = random.randint(0, 2, shape, device=device).to(_dt.bool)
    elif d.is_floating_point or d.is_complex:
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        t = creation.empty(shape, dtype=d, device=device).uniform_(lo, hi) if not d.is_complex \
            else creation.complex(*(creation.empty(shape, dtype=_dt.float64, device=device)
                                    .uniform_(lo, hi) for _ in range(2))).to(d)
        if exclude_zero:
            t = t.masked_fill(t == 0, float(_dt.np_finfo(d).tiny) if not d.is_complex else 1e-30)
    else:
        info = np.iinfo(d.np)
        lo = max(int(info.min), -9 if low is None else math.ceil(low))
        hi = min(int(info.max), 10 if high is None else math.ceil(high))
        t = random.randint(lo, hi, shape, dtype=d, device=device)
        if exclude_zero:
            t = t.masked_fill(t == 0, 1)
    if noncontiguous and t.numel() > 1:
        t = cat([t.reshape(-1, 1), t.reshape(-1, 1)], 1)[:, 0].reshape(shape)
    if requires_grad:
        t.requires_grad_()
    return t


__all__ = ["assert_close", "make_tensor"]
