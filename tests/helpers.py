"""Helpers shared by the tests: torch is the oracle, and these say what "the same" means.

- ``same(j, t)``: jtorch's result ``j`` is torch's result ``t`` (types, dtypes, shapes,
  values; strides on request; tolerances on request).
- ``raises_like(jfn, tfn)``: jtorch's call raises what torch's call raises.
- ``same_call(fn, *arrays)``: ``fn(lib, *tensors)`` run under both libraries agrees, result
  or error, and leaves its inputs alike; with ``exact=True`` the values are held to the exact
  result (``exact_like``) instead of torch's rounding of it.
- ``exact_like(call, args, result)``: ``call`` on float64 copies of ``args``, rounded to the
  dtypes of torch's ``result``: the reference for float32 math.

Test files import them by name (``from helpers import same``); tests/conftest.py puts this
folder on ``sys.path`` and holds the fixtures.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

import numpy as np
import pytest
import torch

import jtorch

# A tolerance: one number for every floating dtype, or one per dtype name ("float32"; "float"
# for Python floats). Names a mapping leaves out compare exactly.
Tol = float | Mapping[str, float]
# How much of an exception's text must match torch's.
Message = Literal["full", "first line", "type only"]
# One ulp of 1.0 in float32, and float32's accuracy for a result held to the exact value:
# within 4 ulp, and near zero within 2 ulp of 1.0 (where a result cancels, sin(x) * 2 - x,
# the rounding of its operands, not of the result, sets the error).
ULP32 = 2.0**-23
RTOL32, ATOL32 = 4 * ULP32, 2 * ULP32
# Which tensors' strides, contiguity and storage offset must match torch's: none, all, or
# those with more than one element (torch's strides for empty and one-element results are
# its own choice; no data layout depends on them).
Strides = bool | Literal["numel>1"]


def pair(array: Any) -> tuple[jtorch.Tensor, torch.Tensor]:
    """The same data as a jtorch and a torch tensor, each with its own copy."""
    array = np.asarray(array)
    return jtorch.from_numpy(array.copy()), torch.from_numpy(array.copy())


def same(j: Any, t: Any, *, rtol: Tol = 0.0, atol: Tol = 0.0, strides: Strides = False,
         path: str = "") -> None:
    """Assert that jtorch's result ``j`` is torch's result ``t``.

    Tensors: a jtorch Tensor on the same device with the same dtype, shape and values (nan
    equals nan; exact unless ``rtol``/``atol`` say otherwise; integers and bools always
    exact), and with ``strides`` also the same strides, contiguity and storage offset. Meta
    tensors have no values: their geometry is the whole comparison. dtypes, devices and Sizes
    are jtorch's of the same name; lists, tuples (named ones too) and dicts have the same type
    name and the same entries, compared recursively; Python floats are equal, both nan, or
    within the "float" tolerance; anything else has the same type and compares ==. ``path``
    names the part of a nested result in failure messages.
    """
    if isinstance(t, torch.Tensor):
        _same_tensor(j, t, rtol, atol, strides, path)
    elif isinstance(t, torch.dtype):
        assert isinstance(j, jtorch.dtype) and str(j) == str(t), f"{path}: {j!r} vs {t!r}"
    elif isinstance(t, torch.device):
        assert isinstance(j, jtorch.device) and str(j) == str(t), f"{path}: {j!r} vs {t!r}"
    elif isinstance(t, torch.Size):
        assert isinstance(j, jtorch.Size) and tuple(j) == tuple(t), f"{path}: {j!r} vs {t!r}"
    elif isinstance(t, (list, tuple, dict)):
        assert _type_name(j) == _type_name(t) and len(j) == len(t), f"{path}: {j!r} vs {t!r}"
        if isinstance(t, dict):
            assert list(j) == list(t), f"{path}: keys {list(j)} vs {list(t)}"
            j, t = list(j.values()), list(t.values())
        for i, (a, b) in enumerate(zip(j, t)):
            same(a, b, rtol=rtol, atol=atol, strides=strides, path=f"{path}[{i}]")
    elif isinstance(t, np.ndarray):
        assert isinstance(j, np.ndarray) and j.dtype == t.dtype, f"{path}: {j!r} vs {t!r}"
        _same_values(j, t, rtol, atol, path)
    elif isinstance(t, float):
        assert type(j) is float, f"{path}: {type(j).__name__} is not a float"
        close = math.isclose(j, t, rel_tol=_tol(rtol, "float"), abs_tol=_tol(atol, "float"))
        assert j == t or close or math.isnan(j) and math.isnan(t), f"{path}: {j} vs {t}"
    else:
        assert type(j) is type(t) and j == t, f"{path}: {j!r} vs {t!r}"


def raises_like(jfn: Callable[[], Any], tfn: Callable[[], Any], *,
                message: Message = "full") -> None:
    """``jfn()`` (jtorch) raises what ``tfn()`` (torch) raises: the same exception type and
    the same message (all of it, its first line, or none of it, as ``message`` says)."""
    with pytest.raises(Exception) as expected:
        tfn()
    raises_as(expected.value, jfn, message=message)


def raises_as(expected: BaseException, jfn: Callable[[], Any], *,
              message: Message = "full") -> None:
    """``jfn()`` raises an exception of ``expected``'s type with its message."""
    with pytest.raises(Exception) as got:
        jfn()
    assert type(got.value) is type(expected), (got.value, expected)
    if message == "full":
        assert str(got.value) == str(expected)
    elif message == "first line":
        assert str(got.value).split("\n")[0] == str(expected).split("\n")[0]


def as_on_meta(message: str) -> str:
    """A CPU error message as the same check words it for a meta tensor: type names name the
    device, ``Tensor::toString()``'s (``torch.FloatTensor{[2]}``, ``CPUBoolType``) as
    ``MetaFloatType``, ``Tensor.type()``'s as ``torch.meta.FloatTensor``."""
    message = re.sub(r"\btorch\.(\w+)Tensor\{", r"Meta\1Type{", message)
    message = re.sub(r"\bCPU(\w+Type)\b", r"Meta\1", message)
    return re.sub(r"\btorch\.(\w+Tensor)\b", r"torch.meta.\1", message)


def same_call(fn: Callable[..., Any], *arrays: Any, message: Message = "full", rtol: Tol = 0.0,
              atol: Tol = 0.0, strides: Strides = False,
              exact: bool = False) -> tuple[Any, Any] | None:
    """Run ``fn(lib, *tensors)`` with ``lib`` torch, then jtorch, on tensors made from
    ``arrays`` (each library gets its own copy). If torch raises, jtorch must raise alike
    (``raises_as`` with ``message``) and the result is None; otherwise the results are
    ``same`` (with ``rtol``, ``atol``, ``strides``), the inputs end alike (in-place ops), and
    the result is (jtorch's, torch's). With ``exact`` jtorch's values are held to the exact
    result (``exact_like``) instead of torch's, which is then the result returned: for
    float32 math (transcendentals, long sums) whose torch results round differently by its
    vector and scalar paths and its thread count."""
    js, ts = zip(*[pair(a) for a in arrays]) if arrays else ((), ())
    try:
        expected = fn(torch, *ts)
    except Exception as e:  # noqa: BLE001 - the oracle decides what is an error
        raises_as(e, lambda: fn(jtorch, *js), message=message)
        return None
    got = fn(jtorch, *js)
    if exact:  # fresh float64 copies: fn may have written to ts
        expected = exact_like(lambda *xs: fn(torch, *xs), [pair(a)[1] for a in arrays], expected)
    same(got, expected, rtol=rtol, atol=atol, strides=strides)
    for i, (j, t) in enumerate(zip(js, ts)):
        same(j, t, rtol=rtol, atol=atol, path=f"input {i}")
    return got, expected


def exact_like(call: Callable[..., Any], args: Any, result: Any) -> Any:
    """``call(*args)`` (a torch computation) on float64 (complex128) copies of the floating
    tensors among ``args``, rounded to the dtypes of torch's own float32 ``result``: the
    correctly rounded value a float32 result is held to where torch's is itself inexact (its
    vector and scalar paths, and its thread count, round differently). Other arguments pass
    unchanged; float64 results come back as computed.

    >>> x = torch.linspace(-7, 7, 100_003)
    >>> want = exact_like(torch.nn.functional.gelu, [x], torch.nn.functional.gelu(x))
    """
    return _round_like(call(*[_widened(a) for a in args]), result)


def _widened(t: Any) -> Any:
    if isinstance(t, torch.Tensor) and t.is_complex():
        return t.to(torch.complex128)
    if isinstance(t, torch.Tensor) and t.is_floating_point():
        return t.to(torch.float64)
    return t


def _round_like(ref: Any, result: Any) -> Any:
    if isinstance(result, torch.Tensor):
        return ref.to(result.dtype)
    if isinstance(result, (list, tuple)):
        rounded = [_round_like(r, t) for r, t in zip(ref, result)]
        return rounded if type(result) is list else type(ref)(rounded)  # tuple or return type
    return ref


def _tol(tol: Tol, name: str) -> float:
    return tol.get(name, 0.0) if isinstance(tol, Mapping) else tol


def _type_name(x: Any) -> str:
    """jtorch builds torch's result types (torch.return_types.sort) as its own classes."""
    return f"{type(x).__module__}.{type(x).__qualname__}"


def _same_tensor(j: Any, t: torch.Tensor, rtol: Tol, atol: Tol, strides: Strides, path: str) -> None:
    assert isinstance(j, jtorch.Tensor), f"{path}: {type(j).__name__} is not a jtorch Tensor"
    assert str(j.device) == str(t.device), f"{path}: device {j.device} vs {t.device}"
    assert str(j.dtype) == str(t.dtype), f"{path}: dtype {j.dtype} vs {t.dtype}"
    assert tuple(j.shape) == tuple(t.shape), f"{path}: shape {tuple(j.shape)} vs {tuple(t.shape)}"
    if strides is True or strides == "numel>1" and t.numel() > 1:
        assert j.stride() == t.stride(), f"{path}: stride {j.stride()} vs {t.stride()}"
        assert j.is_contiguous() == t.is_contiguous(), f"{path}: is_contiguous differs"
        if t.numel():
            assert j.storage_offset() == t.storage_offset(), \
                f"{path}: storage offset {j.storage_offset()} vs {t.storage_offset()}"
    if t.is_meta:
        return
    if t.dtype == torch.bfloat16:  # neither numpy() takes it: compare the exact float32 values
        j, t = j.float(), t.float()
    _same_values(j.detach().numpy(), t.detach().resolve_conj().numpy(), rtol, atol, path)


def _same_values(a: np.ndarray, b: np.ndarray, rtol: Tol, atol: Tol, path: str) -> None:
    if b.dtype.kind not in "fc":
        np.testing.assert_array_equal(a, b, err_msg=path)
        return
    wide = np.complex128 if b.dtype.kind == "c" else np.float64
    np.testing.assert_allclose(a.astype(wide), b.astype(wide), rtol=_tol(rtol, b.dtype.name),
                               atol=_tol(atol, b.dtype.name), equal_nan=True, err_msg=path)


# -- meta twins ----------------------------------------------------------------------------------

def to_meta(x, storages: dict | None = None):
    """A meta tensor with ``x``'s shape, dtype, strides and storage offset; tensors sharing a
    storage get meta twins sharing one (pass one ``storages`` dict per call)."""
    from jtorch.meta import MetaArray
    from jtorch.tensor import Tensor

    if not isinstance(x, Tensor):
        return x
    storages = {} if storages is None else storages
    st = storages.get(id(x._st))
    if st is None:
        st = storages[id(x._st)] = MetaArray((x._st.size,), x._a.dtype)
    a = MetaArray(x._a.shape, x._a.dtype, x._a.strides, x.storage_offset() if x._a.size else 0)
    t = Tensor._make(a, st, x.dtype)
    t._requires_grad = x._requires_grad
    return t


def tree_map(fn, obj):
    """``fn`` over the leaves of nested tuples (named ones too), lists and dicts."""
    if isinstance(obj, (tuple, list)):
        return type(obj)(tree_map(fn, o) for o in obj) if not hasattr(obj, "_fields") \
            else type(obj)(*[tree_map(fn, o) for o in obj])
    if isinstance(obj, dict):
        return {k: tree_map(fn, v) for k, v in obj.items()}
    return fn(obj)


def leaves(obj) -> list:
    if isinstance(obj, (tuple, list)):
        return [x for o in obj for x in leaves(o)]
    if isinstance(obj, dict):
        return [x for o in obj.values() for x in leaves(o)]
    return [obj]



_FINGERPRINT = re.compile(r"^(# scalar sources )([0-9a-f]{16})$", re.MULTILINE)


def golden(path: str, text: str) -> None:
    """``text`` equals the file at ``path`` (``JTORCH_RECORD_GOLDEN=1`` rewrites it)."""
    if os.environ.get("JTORCH_RECORD_GOLDEN"):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    with open(path) as f:
        assert text == f.read()


def golden_kernel(path: str, src: str) -> None:
    """A generated kernel's source against its golden file, with the fingerprint of the scalar
    sources masked: it hashes whole files (every op definition, fastmath), so it changes on
    edits that leave the generated code as it is."""
    assert len(_FINGERPRINT.findall(src)) == 1, src
    golden(path, _FINGERPRINT.sub(r"\1<fingerprint>", src))


def intel_cpu() -> bool:
    """Whether this is an Intel CPU: torch then draws ``bernoulli_(p)`` (and so dropout masks)
    from MKL's own stream, not from its generator's transforms."""
    try:
        with open("/proc/cpuinfo") as f:
            return "GenuineIntel" in f.read(4096)
    except OSError:
        return False


def random_array(*shape, dtype=np.float64, seed: int = 0) -> np.ndarray:
    """Standard normal values of ``shape`` in ``dtype`` (complex: normal real and imaginary
    parts), the same for a seed."""
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def run_simulated(path: str) -> None:
    """Run the pytest file ``path`` in a subprocess under Numba's CUDA simulator (it must be
    chosen before ``numba.cuda`` is first imported) and assert that every test passed."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(path))))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", path],
                       check=False, capture_output=True, text=True, env=env, timeout=1800,
                       cwd=root)
    tail = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-2000:]
    assert " passed" in tail and "skipped" not in tail and "failed" not in tail, tail

