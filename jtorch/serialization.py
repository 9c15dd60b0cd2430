"""``jtorch.save`` / ``jtorch.load``: tensors, state_dicts and nested containers.

``save`` writes torch's zip format (``_torch_zip``), which torch and jtorch both read;
``load`` reads that format (files from torch included), plain safetensors files, and jtorch's
own format, which ``save(..., _use_new_zipfile_serialization=False)`` still writes:

Format (version 1): a safetensors file whose tensors are the saved tensors' data (keys "0",
"1", ...) and whose metadata holds ``{"format": "jtorch", "version": "1", "tree": JSON}``. The
JSON tree describes the saved object: JSON scalars, lists and strings as themselves; other
values as objects keyed first by a "$" tag — ``{"$t": key, "s": shape, "dt": dtype,
"rg": requires_grad, "p": is_parameter}`` for a tensor (its data flat and contiguous;
complex128 as float64 pairs; a meta tensor has no data: ``"dev": "meta"`` and its element
strides ``"st"`` instead, its key names no stored array), ``{"$d": [[key, value], ...]}`` for
a dict, ``{"$od": ...}`` an OrderedDict, ``{"$tu": [...]}`` a tuple, ``{"$sz": [...]}`` a
torch.Size, ``{"$dt": name}`` a dtype, ``{"$f": "nan" | "inf" | "-inf"}`` a non-finite float,
``{"$b": base64}`` bytes, ``{"$set": [...]}`` a set, and ``{"$pk": i}`` an object only pickle
can store, kept in the metadata entry "pickles" and restored only by
``load(..., weights_only=False)``.

Loading parses JSON and raw tensor bytes (the safetensors library): it never executes code
unless ``weights_only=False`` is asked for a file holding pickled objects. A truncated or
corrupt file raises ``RuntimeError`` naming the problem.
"""

from __future__ import annotations

import base64
import json
import math
import os
import pickle
import struct
import warnings
from collections import OrderedDict

import numpy as np

from . import dtypes as _dt
from .device import device as _device
from .device import to_device
from .meta import MetaArray
from .shape import Size
from .tensor import Tensor

__all__ = ["add_safe_globals", "clear_safe_globals", "get_safe_globals", "load", "safe_globals", "save"]

_MAGIC = "jtorch"
_VERSION = "1"


class _Writer:
    def __init__(self, allow_pickle: bool) -> None:
        self.arrays: dict = {}
        self.ids: dict = {}
        self.pickles: list = []
        self.allow_pickle = allow_pickle

    def enc(self, obj):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int) and not isinstance(obj, bool):
            return obj
        if isinstance(obj, float):
            if math.isfinite(obj):
                return obj
            return {"$f": "nan" if obj != obj else ("inf" if obj > 0 else "-inf")}
        if isinstance(obj, Tensor):
            from .nn.parameter import Parameter

            key = self.ids.get(id(obj))
            a = obj.detach()._a
            if a.__class__ is MetaArray:  # geometry only, as torch saves a meta tensor
                if key is None:
                    key = self.ids[id(obj)] = f"m{len(self.ids)}"
                return {"$t": key, "s": list(a.shape), "dt": obj.dtype.name,
                        "rg": bool(obj.requires_grad), "p": isinstance(obj, Parameter),
                        "dev": "meta", "st": list(obj.stride())}
            if key is None:
                key = self.ids[id(obj)] = str(len(self.arrays))
                flat = np.ascontiguousarray(a).reshape(-1)
                if flat.dtype == np.complex128:  # stored as (re, im) float64 pairs
                    flat = flat.view(np.float64)
                elif flat.dtype == _dt.bfloat16.np:  # (safetensors' NumPy side has no BF16)
                    flat = flat.view(np.uint16)
                self.arrays[key] = flat
            return {"$t": key, "s": list(a.shape), "dt": obj.dtype.name,
                    "rg": bool(obj.requires_grad), "p": isinstance(obj, Parameter)}
        if isinstance(obj, _dt.dtype):
            return {"$dt": obj.name}
        if isinstance(obj, Size):
            return {"$sz": list(obj)}
        if isinstance(obj, OrderedDict):
            return {"$od": [[self.enc(k), self.enc(v)] for k, v in obj.items()]}
        if type(obj) is dict:
            if all(isinstance(k, str) and not k.startswith("$") for k in obj):
                return {k: self.enc(v) for k, v in obj.items()}
            return {"$d": [[self.enc(k), self.enc(v)] for k, v in obj.items()]}
        if type(obj) is list:
            return [self.enc(v) for v in obj]
        if type(obj) is tuple:
            return {"$tu": [self.enc(v) for v in obj]}
        if isinstance(obj, (set, frozenset)):
            return {"$set": [self.enc(v) for v in obj]}
        if isinstance(obj, bytes):
            return {"$b": base64.b64encode(obj).decode()}
        if isinstance(obj, (np.integer, np.floating, np.bool_)):
            return self.enc(obj.item())
        self.pickles.append(obj)
        return {"$pk": len(self.pickles) - 1}


def save(obj, f, pickle_module=pickle, pickle_protocol: int = 2,
         _use_new_zipfile_serialization: bool = True) -> None:
    """Write ``obj`` (a tensor, a state_dict, nested containers of them) to ``f`` (a path or a
    writable binary file) in torch's zip format: ``torch.load(f, weights_only=True)`` reads
    it. Objects outside what weights-only loads rebuild (a whole Module, say) are pickled as
    they are and come back only with ``load(..., weights_only=False)``.
    ``_use_new_zipfile_serialization=False`` writes jtorch's own safetensors-based format
    (described above) instead.

    >>> jtorch.save({"w": jtorch.ones(2)}, "ckpt.pt")
    """
    if _use_new_zipfile_serialization:
        from ._torch_zip import write

        write(obj, f, pickle_protocol)
        return
    from safetensors.numpy import save as st_save

    w = _Writer(True)
    tree = w.enc(obj)
    meta = {"format": _MAGIC, "version": _VERSION, "tree": json.dumps(tree, allow_nan=False)}
    if w.pickles:
        meta["pickles"] = base64.b64encode(pickle_module.dumps(w.pickles,
                                                               protocol=pickle_protocol)).decode()
    data = st_save(w.arrays, metadata=meta)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            fh.write(data)
    else:
        f.write(data)


class _Reader:
    def __init__(self, arrays: dict, pickles: list | None, meta: bool = False) -> None:
        self.arrays = arrays
        self.pickles = pickles
        self.meta = meta  # map_location="meta": every tensor comes back without data
        self.made: dict = {}

    def dec(self, x):
        if isinstance(x, list):
            return [self.dec(v) for v in x]
        if not isinstance(x, dict):
            return x
        if len(x) >= 1:
            k = next(iter(x))
            if k == "$t":
                return self._tensor(x)
            if k == "$f":
                return float(x["$f"])
            if k == "$dt":
                return getattr(_dt, x["$dt"])
            if k == "$sz":
                return Size(x["$sz"])
            if k == "$od":
                return OrderedDict((self._key(a), self.dec(b)) for a, b in x["$od"])
            if k == "$d":
                return {self._key(a): self.dec(b) for a, b in x["$d"]}
            if k == "$tu":
                return tuple(self.dec(v) for v in x["$tu"])
            if k == "$set":
                return {self._key(v) for v in x["$set"]}
            if k == "$b":
                return base64.b64decode(x["$b"])
            if k == "$pk":
                if self.pickles is None:
                    raise RuntimeError(
                        "Weights only load failed: the file holds objects that only pickle can "
                        "restore, and unpickling can run arbitrary code. Load it with "
                        "weights_only=False only if you trust its source.")
                return self.pickles[x["$pk"]]
        return {k: self.dec(v) for k, v in x.items()}

    def _key(self, k):
        v = self.dec(k)
        return tuple(v) if isinstance(v, list) else v

    def _tensor(self, x) -> Tensor:
        t = self.made.get(x["$t"])
        if t is not None:
            return t
        if x.get("dev") == "meta" or self.meta:
            d = getattr(_dt, x["dt"])
            st = x.get("st")
            a = MetaArray(x["s"], d.np, None if st is None else [s * d.itemsize for s in st])
            t = Tensor._make(a, None, d)
        else:
            a = np.array(self.arrays[x["$t"]])  # own, writable memory
            d = getattr(_dt, x.get("dt", ""), None) or _dt._FROM_NP[a.dtype]
            if a.dtype != d.np:
                a = a.view(d.np)
            t = Tensor._make(a.reshape(x["s"]) if "s" in x else a, None, d)
        if x.get("p"):
            from .nn.parameter import Parameter

            t = Parameter(t, requires_grad=bool(x.get("rg")))
        elif x.get("rg"):
            t.requires_grad_(True)
        self.made[x["$t"]] = t
        return t


def _header(data: bytes) -> dict | None:
    """The jtorch metadata of a safetensors file (None: a safetensors file of another
    library); RuntimeError for anything that is not a safetensors file."""
    if len(data) < 8:
        raise RuntimeError(f"jtorch.load: the file is truncated ({len(data)} bytes): not a "
                           "checkpoint")
    (n,) = struct.unpack("<Q", data[:8])
    if len(data) > 8 and data[8:9] != b"{":
        raise RuntimeError("jtorch.load: not a checkpoint jtorch can read (neither torch's zip "
                           "format nor a safetensors file)")
    if n > len(data) - 8:
        raise RuntimeError(f"jtorch.load: the file is truncated or corrupt (its header claims "
                           f"{n} bytes, {len(data) - 8} follow)")
    try:
        header = json.loads(data[8:8 + n])
    except ValueError as e:
        raise RuntimeError(f"jtorch.load: corrupt file header ({e})") from None
    meta = header.get("__metadata__") or {}
    if meta.get("format") != _MAGIC:
        return None  # another library's safetensors file
    if meta.get("version") != _VERSION:
        raise RuntimeError(f"jtorch.load: unsupported checkpoint version {meta.get('version')!r}")
    return meta


def load(f, map_location=None, pickle_module=None, *, weights_only: bool | None = None,
         mmap=None, **pickle_load_args):
    """Read a checkpoint: torch's zip format (what ``torch.save`` and ``save`` write), a
    safetensors file (its tensors as a dict) or jtorch's own format. ``weights_only=True``
    (the default) rebuilds tensors, containers and allowlisted globals only: nothing in the
    file runs. ``map_location="meta"`` gives every tensor on meta (shapes and dtypes, no
    data); saved meta tensors come back on meta wherever ``map_location`` points, as in
    torch."""
    from safetensors import SafetensorError
    from safetensors.numpy import load as st_load

    from . import _torch_zip

    weights_only = _weights_only(weights_only, pickle_module)
    pickle_module = pickle if pickle_module is None else pickle_module
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as fh:
            data = fh.read()
    elif isinstance(f, (bytes, bytearray)):
        data = bytes(f)
    else:
        data = f.read()
    if _torch_zip.is_zip(data):
        return _torch_zip.read(data, map_location, weights_only, _safe, **pickle_load_args)
    if _torch_zip.is_legacy_torch(data):
        raise RuntimeError("jtorch.load: this is torch's legacy checkpoint format (torch < 1.6, "
                           "or _use_new_zipfile_serialization=False), which jtorch cannot "
                           "read; load it with torch and save it again with torch.save")
    meta = _header(data)
    if meta is None:  # a plain safetensors file: its tensors by name
        try:
            arrays = _plain_bf16(data) or st_load(data)
        except (SafetensorError, ValueError) as e:
            raise RuntimeError(f"jtorch.load: corrupt safetensors file ({e})") from None
        to_meta = _is_meta(map_location)
        return {k: _Reader({k: v}, None, to_meta)._tensor(
            {"$t": k, "s": list(v.shape), "dt": _dt._FROM_NP[v.dtype].name})
            for k, v in arrays.items()}
    try:
        arrays = st_load(data)
        tree = json.loads(meta["tree"])
    except (SafetensorError, ValueError, KeyError) as e:
        raise RuntimeError(f"jtorch.load: corrupt checkpoint ({e})") from None
    pickles = None
    if "pickles" in meta:
        raw = base64.b64decode(meta["pickles"])
        if not weights_only:
            pickles = pickle_module.loads(raw, **pickle_load_args)
        elif _safe:  # only the allowlisted globals may be rebuilt
            import io

            pickles = _SafeUnpickler(io.BytesIO(raw)).load()
    return _Reader(arrays, pickles, _is_meta(map_location)).dec(tree)


def _weights_only(weights_only: bool | None, pickle_module) -> bool:
    """torch's choice of ``weights_only``: True unless a ``pickle_module`` is given, forced
    either way by ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` or (when the call leaves it unset)
    ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD``."""
    unset = weights_only is None
    if unset:
        weights_only = pickle_module is None
    yes = ("1", "y", "yes", "true")
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in yes
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in yes
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set.")
    if force:
        weights_only = True
    elif force_no and unset:
        warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since the"
                      "`weights_only` argument was not explicitly passed to `torch.load`, forcing "
                      "weights_only=False.", UserWarning, stacklevel=3)
        weights_only = False
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    return weights_only


def _plain_bf16(data: bytes) -> dict | None:
    """The arrays of a plain safetensors file holding BF16 tensors, which safetensors' NumPy
    loader cannot read (None when it has none): each tensor's bytes viewed as bfloat16 or as
    the other dtypes' NumPy types."""
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    if not any(isinstance(v, dict) and v.get("dtype") == "BF16" for v in header.values()):
        return None
    arrays = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        d = _ST_DTYPES.get(info["dtype"])
        if d is None:
            raise ValueError(f"unsupported safetensors dtype {info['dtype']}")
        lo, hi = info["data_offsets"]
        raw = data[8 + n + lo:8 + n + hi]
        arrays[name] = np.frombuffer(bytearray(raw), d).reshape(info["shape"])
    return arrays


# safetensors' dtype names as NumPy dtypes (little-endian, as the format stores them)
_ST_DTYPES = {"BF16": _dt.bfloat16.np, "F16": np.dtype("<f2"), "F32": np.dtype("<f4"),
              "F64": np.dtype("<f8"), "I8": np.dtype(np.int8), "U8": np.dtype(np.uint8),
              "I16": np.dtype("<i2"), "I32": np.dtype("<i4"), "I64": np.dtype("<i8"),
              "BOOL": np.dtype(np.bool_), "C64": np.dtype("<c8")}


def _is_meta(map_location) -> bool:
    return isinstance(map_location, (str, _device)) and to_device(map_location).type == "meta"


# -- the allowlist of weights_only loads ---------------------------------------------------------
# Objects only pickle can store come back under weights_only=True when every global their pickle
# names is allowlisted (``add_safe_globals``, or ``safe_globals`` for a block), as in torch.

_safe: dict = {}  # "module.qualname" -> the object


def _safe_name(entry) -> tuple:
    if isinstance(entry, tuple):
        obj, name = entry
        return name, obj
    return f"{entry.__module__}.{entry.__qualname__}", entry


def add_safe_globals(safe_globals: list) -> None:
    """Allows these classes and functions in ``weights_only`` loads (an entry may be
    ``(obj, "module.name")`` for an object pickled under another name)."""
    for entry in safe_globals:
        name, obj = _safe_name(entry)
        _safe[name] = obj


def get_safe_globals() -> list:
    return list(_safe.values())


def clear_safe_globals() -> None:
    _safe.clear()


class safe_globals:
    """``with safe_globals([...]):`` allows them for the block only."""

    def __init__(self, safe_globals: list) -> None:
        self.entries = [_safe_name(e) for e in safe_globals]

    def __enter__(self):
        self.saved = dict(_safe)
        _safe.update(dict(self.entries))
        return self

    def __exit__(self, *exc) -> bool:
        _safe.clear()
        _safe.update(self.saved)
        return False


class _SafeUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        obj = _safe.get(f"{module}.{name}")
        if obj is None:
            from ._torch_zip import unsupported_global

            raise pickle.UnpicklingError(unsupported_global(module, name))
        return obj
