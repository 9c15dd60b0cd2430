"""torch's checkpoint format (``torch.save`` since 1.6): a zip archive whose ``data.pkl`` is a
protocol-2 pickle of the object, each tensor reduced to ``torch._utils._rebuild_tensor_v2``
over a storage that a persistent id names and whose bytes are the record ``data/<key>``.

``write`` produces what torch writes (records aligned to 64 bytes, ``byteorder``,
``version``), naming only the globals torch's ``weights_only`` unpickler admits, so
``torch.load(f, weights_only=True)`` reads a jtorch state_dict. ``read`` takes torch's files
apart with an unpickler that rebuilds tensors, parameters, sizes, dtypes, devices and
containers, and under ``weights_only=True`` nothing else (the ``add_safe_globals``
allowlist aside): no code in the file runs. Tensors that shared a storage share memory again.
"""

from __future__ import annotations

import importlib
import io
import os
import pickle
import secrets
import struct
import zipfile
import zlib
from collections import OrderedDict

import numpy as np

from . import dtypes as _dt
from .cuda_array import CudaArray, mirror, upload
from .device import device as _device
from .device import to_device
from .meta import MetaArray
from .shape import Size
from .tensor import Tensor

# torch's typed storage class per dtype (the persistent id names it)
_STORAGE = {"float32": "FloatStorage", "float64": "DoubleStorage", "float16": "HalfStorage",
            "bfloat16": "BFloat16Storage", "int64": "LongStorage", "int32": "IntStorage",
            "int16": "ShortStorage", "int8": "CharStorage", "uint8": "ByteStorage",
            "bool": "BoolStorage", "complex64": "ComplexFloatStorage",
            "complex128": "ComplexDoubleStorage"}
_DTYPE_OF_STORAGE = {v: k for k, v in _STORAGE.items()}
_ALIGN = 64
_LEGACY_MAGIC = b"\x80\x02\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19"  # pickled 0x1950a86a20f9469cfc6c


def is_zip(data: bytes) -> bool:
    return data[:4] == b"PK\x03\x04"


def is_legacy_torch(data: bytes) -> bool:
    """torch's pre-1.6 format: a stream of pickles after a magic number."""
    return data[:len(_LEGACY_MAGIC)] == _LEGACY_MAGIC


# -- writing ------------------------------------------------------------------------------------

class _Global:
    """A reference to ``module.name`` written as pickle's GLOBAL opcode (torch need not be
    importable here, so pickle cannot look the object up)."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name


class _Reduce:
    """An object pickled as ``func(*args)`` (then ``state`` by BUILD, when given)."""

    def __init__(self, func: _Global, args: tuple, state=None) -> None:
        self.func, self.args, self.state = func, args, state


_REBUILD_TENSOR = _Global("torch._utils", "_rebuild_tensor_v2")
_REBUILD_PARAMETER = _Global("torch._utils", "_rebuild_parameter")
_REBUILD_META = _Global("torch._utils", "_rebuild_meta_tensor_no_storage")
_REBUILD_SPARSE = _Global("torch._utils", "_rebuild_sparse_tensor")
_GET_LAYOUT = _Global("torch.serialization", "_get_layout")
_ORDERED_DICT = _Global("collections", "OrderedDict")


class _Pickler(pickle._Pickler):
    """pickle's Python pickler, which lets ``_Global``/``_Reduce`` write opcodes directly and
    tensors become storage references (``persistent_id``)."""

    dispatch = dict(pickle._Pickler.dispatch)  # noqa: RUF012  (pickle's own protocol)

    def __init__(self, file, protocol: int, storages) -> None:
        super().__init__(file, protocol)
        self.storages = storages

    def save_global_ref(self, obj: _Global) -> None:
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode())
        self.memoize(obj)

    def save_reduce_obj(self, obj: _Reduce) -> None:
        self.save(obj.func)
        self.save(obj.args)
        self.write(pickle.REDUCE)
        self.memoize(obj)  # a tensor saved twice is one tensor again (``_Storages.made``)
        if obj.state is not None:
            self.save(obj.state)
            self.write(pickle.BUILD)

    dispatch[_Global] = save_global_ref
    dispatch[_Reduce] = save_reduce_obj

    def persistent_id(self, obj):
        return obj if type(obj) is tuple and len(obj) == 5 and isinstance(obj[1], _Global) \
            and obj[0] == "storage" else None

    def save(self, obj, save_persistent_id=True):
        if isinstance(obj, Tensor):
            obj = self.storages.reduce_tensor(obj)
        elif isinstance(obj, _dt.dtype):
            obj = _Global("torch", obj.name)
        elif isinstance(obj, Size):
            obj = _Reduce(_Global("torch", "Size"), (tuple(obj),))
        elif type(obj) is OrderedDict or (isinstance(obj, OrderedDict) and
                                          type(obj).__module__ == "collections"):
            state = dict(obj.__dict__) or None
            return self._save_ordered_dict(obj, state)
        elif isinstance(obj, _device):
            obj = _Reduce(_Global("torch", "device"), (str(obj),))
        elif isinstance(obj, (np.integer, np.floating, np.bool_)):  # as Python numbers:
            obj = obj.item()  # weights-only loads refuse NumPy's globals
        super().save(obj, save_persistent_id)

    def _save_ordered_dict(self, obj, state) -> None:
        # torch writes ``OrderedDict()`` then its items, then a state_dict's ``_metadata``
        x = self.memo.get(id(obj))
        if x is not None:
            self.write(self.get(x[0]))
            return
        self.save(_ORDERED_DICT)
        self.write(pickle.EMPTY_TUPLE + pickle.REDUCE)
        self.memoize(obj)
        self._batch_setitems(iter(obj.items()))
        if state is not None:
            self.save(state)
            self.write(pickle.BUILD)


class _Storages:
    """Each tensor's storage: the root buffer of its array (views of one array share it, as
    in torch), or a contiguous copy where the view cannot be described over its root."""

    def __init__(self) -> None:
        self.keys: dict = {}  # id(root array) -> key
        self.data: list = []  # (key, bytes-like)
        self.alive: list = []  # roots and tensors kept alive while their ids are keys
        self.made: dict = {}  # id(tensor) -> its _Reduce
        self.cuda_roots: dict = {}  # a CUDA storage -> its host copy

    def reduce_tensor(self, t: Tensor):
        r = self.made.get(id(t))
        if r is None:
            r = self.made[id(t)] = self._reduce_tensor(t)
            self.alive.append(t)
        return r

    def _reduce_tensor(self, t: Tensor):
        from .nn.parameter import Parameter

        if t.is_sparse:  # torch's form: the layout, then (indices, values, size, coalesced)
            return _Reduce(_REBUILD_SPARSE, (_Reduce(_GET_LAYOUT, ("torch.sparse_coo",)), (
                t._indices(), t._values().detach(), t.shape, t.is_coalesced())))
        d = t.dtype
        a = t.detach()._a
        rg = bool(t.requires_grad)
        if a.__class__ is MetaArray:
            inner = _Reduce(_REBUILD_META, (_Global("torch", d.name), tuple(a.shape),
                                            tuple(t.stride()), rg and not isinstance(t, Parameter)))
        elif a.__class__ is CudaArray:  # the storage read back, saved at the device's location
            inner = _Reduce(_REBUILD_TENSOR, (self._cuda_ref(t._st, d), a.offset if a.size else 0,
                                              tuple(a.shape), tuple(t.stride()),
                                              rg and not isinstance(t, Parameter),
                                              _Reduce(_ORDERED_DICT, ())))
        else:
            storage, offset, strides = self._storage(np.asarray(a), d)
            inner = _Reduce(_REBUILD_TENSOR, (storage, offset, tuple(a.shape), strides,
                                              rg and not isinstance(t, Parameter),
                                              _Reduce(_ORDERED_DICT, ())))
        if isinstance(t, Parameter):
            return _Reduce(_REBUILD_PARAMETER, (inner, rg, _Reduce(_ORDERED_DICT, ())))
        return inner

    def _storage(self, a: np.ndarray, d) -> tuple:
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        item = a.itemsize
        if root.flags.c_contiguous and root.dtype == a.dtype and a.size:
            off = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
            if off % item == 0 and all(s % item == 0 and s >= 0 for s in a.strides) and \
                    0 <= off and off + item * (1 + sum((n - 1) * s // item for n, s in
                                                       zip(a.shape, a.strides))) <= root.nbytes:
                return self._ref(root, d), off // item, tuple(s // item for s in a.strides)
        flat = np.ascontiguousarray(a).reshape(-1)
        strides, step = [], 1
        for n in reversed(a.shape):
            strides.append(step)
            step *= n
        return self._ref(flat, d), 0, tuple(reversed(strides))

    def _ref(self, root: np.ndarray, d, location: str = "cpu") -> tuple:
        key = self.keys.get(id(root))
        if key is None:
            key = self.keys[id(root)] = str(len(self.data))
            self.alive.append(root)
            self.data.append((key, root.reshape(-1).view(np.uint8)))
        return ("storage", _Global("torch", _STORAGE[d.name]), key, location,
                root.size if root.dtype == d.np else root.nbytes // d.itemsize)

    def _cuda_ref(self, st: CudaArray, d) -> tuple:
        """A CUDA storage's record: its values copied to the host once per storage."""
        k = ("cuda", st.data_ptr() if st.shape[0] else id(st), st.shape[0], st.dtype.str)
        root = self.cuda_roots.get(k)
        if root is None:
            root = self.cuda_roots[k] = mirror(st)
        return self._ref(root, d, str(st.dev))


def write(obj, f, pickle_protocol: int = 2) -> None:
    """Write ``obj`` to ``f`` (a path or a writable binary file) in torch's zip format."""
    storages = _Storages()
    buf = io.BytesIO()
    _Pickler(buf, pickle_protocol, storages).dump(obj)
    name = "archive"
    if isinstance(f, (str, os.PathLike)):
        name = os.path.splitext(os.path.basename(os.fspath(f)))[0] or "archive"
    records = [("data.pkl", buf.getvalue()), (".format_version", b"1"),
               (".storage_alignment", str(_ALIGN).encode()), ("byteorder", b"little")]
    records += [(f"data/{k}", v) for k, v in storages.data]
    records += [("version", b"3\n"),
                (".data/serialization_id", str(secrets.randbits(128)).zfill(40).encode())]
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as fh:
            _write_zip(fh, name, records)
    else:
        _write_zip(f, name, records)


def _write_zip(fh, name: str, records: list) -> None:
    """Stored (uncompressed) records, each one's data aligned to 64 bytes by an ``FB`` extra
    field in its local header, as torch's writer does (mmap loads need the alignment)."""
    start = fh.tell() if fh.seekable() else 0
    with zipfile.ZipFile(fh, "w", zipfile.ZIP_STORED) as z:
        for rec, data in records:
            path = f"{name}/{rec}"
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            here = z.fp.tell() - start
            pad = -(here + 30 + len(path.encode()) + 4) % _ALIGN
            info.extra = b"FB" + struct.pack("<H", pad) + b"\0" * pad
            z.writestr(info, bytes(data) if not isinstance(data, bytes) else data)


# -- reading ------------------------------------------------------------------------------------

def _rebuild_tensor(storage, offset, size, stride, requires_grad=False, hooks=None,
                    metadata=None):
    arr, d = storage
    if arr.__class__ is CudaArray:
        if any(not isinstance(v, int) or v < 0 for v in (offset, *size, *stride)) or \
                len(size) != len(stride) or (all(size) and offset + sum(
                    (n - 1) * s for n, s in zip(size, stride)) >= arr.shape[0]):
            raise RuntimeError(f"jtorch.load: a tensor of size {tuple(size)}, stride "
                               f"{tuple(stride)} and offset {offset}: not a valid view of its "
                               "storage (corrupt checkpoint)")
        t = Tensor._make(CudaArray(tuple(size), d.np, tuple(s * d.itemsize for s in stride),
                                   offset, arr.buf, arr.dev), arr, d)
        if requires_grad:
            t.requires_grad_(True)
        return t
    if isinstance(arr, MetaArray) or arr is None:
        strides = [s * d.itemsize for s in stride]
        return Tensor._make(MetaArray(tuple(size), d.np, strides), None, d)
    if any(not isinstance(v, int) or v < 0 for v in (offset, *size, *stride)) or \
            len(size) != len(stride):
        raise RuntimeError(f"jtorch.load: a tensor of size {tuple(size)}, stride {tuple(stride)} "
                           f"and offset {offset}: not a valid view (corrupt checkpoint)")
    if any(s == 0 for s in size):
        a = np.empty(tuple(size), d.np)
    elif offset + sum((n - 1) * s for n, s in zip(size, stride)) >= arr.size:
        raise RuntimeError(f"jtorch.load: a tensor of size {tuple(size)}, stride {tuple(stride)} "
                           f"and offset {offset} reaches past its storage of {arr.size} "
                           "elements (corrupt checkpoint)")
    else:
        a = np.lib.stride_tricks.as_strided(arr[offset:], tuple(size),
                                            tuple(s * d.itemsize for s in stride), writeable=True)
    t = Tensor._make(a, None, d)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(storage, offset, size, stride, requires_grad, hooks, dtype,
                       metadata=None):
    arr, _ = storage
    if arr is not None and arr.__class__ is CudaArray and arr.dtype != dtype.np:
        arr = CudaArray(arr.shape, dtype.np, None, 0, arr.buf.view(dtype.np), arr.dev)
    return _rebuild_tensor((arr if arr is None or isinstance(arr, MetaArray) else
                            arr.view(dtype.np), dtype), offset, size, stride, requires_grad)


def _rebuild_parameter(data, requires_grad, hooks, state=None):
    from .nn.parameter import Parameter

    return Parameter(data, requires_grad=requires_grad)


def _get_layout(name: str):
    """A layout by torch's name ("torch.sparse_coo"), as torch pickles layouts."""
    layout = getattr(_dt, name.rsplit(".", 1)[-1], None)
    if not isinstance(layout, _dt.layout):
        raise TypeError(f"jtorch.load: unknown layout {name!r}")
    return layout


def _rebuild_sparse(layout, data):
    from .sparse import sparse_coo_tensor

    if layout is not _dt.sparse_coo:
        raise RuntimeError(f"jtorch.load: a sparse tensor of layout {layout} (only sparse_coo "
                           "is supported)")
    indices, values, size, *rest = data
    return sparse_coo_tensor(indices, values, size, is_coalesced=rest[0] if rest else None)


def _rebuild_meta(dtype, size, stride, requires_grad):
    t = Tensor._make(MetaArray(tuple(size), dtype.np, [s * dtype.itemsize for s in stride]),
                     None, dtype)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_from_type_v2(func, new_type, args, state):
    return func(*args)


def _size(t=()):
    return Size(t)


def _device_of(*args):
    from .device import device

    return device(*args)


def _encode(s, enc="latin1"):
    return s.encode(enc)


class _StorageType:
    def __init__(self, dtype_name: str | None) -> None:
        self.dtype_name = dtype_name  # None: UntypedStorage (bytes)


_BUILTINS = frozenset(["set", "frozenset", "complex", "slice", "bytearray", "tuple", "list", "dict",
                       "int", "float", "bool", "str"])


def _torch_global(module: str, name: str):
    """The jtorch object a torch global of a weights-only checkpoint stands for, or None."""
    if module == "torch._utils":
        return {"_rebuild_tensor_v2": _rebuild_tensor, "_rebuild_tensor_v3": _rebuild_tensor_v3,
                "_rebuild_parameter": _rebuild_parameter,
                "_rebuild_parameter_with_state": _rebuild_parameter,
                "_rebuild_meta_tensor_no_storage": _rebuild_meta,
                "_rebuild_sparse_tensor": _rebuild_sparse}.get(name)
    if module == "torch.serialization" and name == "_get_layout":
        return _get_layout
    if module == "torch._tensor" and name == "_rebuild_from_type_v2":
        return _rebuild_from_type_v2
    if module == "torch":
        if name in _DTYPE_OF_STORAGE:
            return _StorageType(_DTYPE_OF_STORAGE[name])
        if name == "UntypedStorage":
            return _StorageType(None)
        if name == "Size":
            return _size
        if name == "device":
            return _device_of
        d = getattr(_dt, name, None)
        if isinstance(d, _dt.dtype):
            return d
    if module == "torch.nn.parameter" and name == "Parameter":
        from .nn.parameter import Parameter

        return Parameter
    if module == "torch.storage" and name == "UntypedStorage":
        return _StorageType(None)
    if module == "collections" and name == "OrderedDict":
        return OrderedDict
    if module in ("builtins", "__builtin__") and name in _BUILTINS:  # protocol 2 names both
        import builtins

        return getattr(builtins, name)
    if module == "_codecs" and name == "encode":
        return _encode
    return None


def unsupported_global(module: str, name: str) -> str:
    """torch's message for a global that a weights-only load refuses."""
    return (f"Weights only load failed. Unsupported global: GLOBAL {module}.{name} was not an "
            f"allowed global by default. Please use `torch.serialization.add_safe_globals"
            f"([{module}.{name}])` or the `torch.serialization.safe_globals([{module}.{name}])` "
            f"context manager "
            f"to allowlist this global if you trust this class/function.")


def _allowed_as_jtorch(module: str, name: str, safe: dict):
    """The jtorch object at torch's ``module.name`` (a class torch pickled) when the allowlist
    holds it, else None."""
    try:
        obj = getattr(importlib.import_module("j" + module), name)
    except (ImportError, AttributeError):
        return None
    return obj if any(obj is v for v in safe.values()) else None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file, records, location, weights_only: bool, safe: dict, **kw) -> None:
        super().__init__(file, **kw)
        self.records = records
        self.location = location  # (saved location) -> "cpu" | "meta" | "cuda:i"
        self.weights_only = weights_only
        self.safe = safe
        self.loaded: dict = {}

    def find_class(self, module: str, name: str):
        obj = _torch_global(module, name)
        if obj is not None:
            return obj
        obj = self.safe.get(f"{module}.{name}")
        if obj is None and (module == "torch" or module.startswith("torch.")):
            obj = _allowed_as_jtorch(module, name, self.safe)
        if obj is not None:
            return obj
        if self.weights_only:
            raise pickle.UnpicklingError(unsupported_global(module, name))
        if module == "torch" or module.startswith("torch."):  # torch's classes: jtorch's
            module = "j" + module
        return super().find_class(module, name)

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError(f"jtorch.load: unsupported persistent id {pid!r}")
        _, stype, key, location, numel = pid
        name = getattr(stype, "dtype_name", None)
        d = getattr(_dt, name) if name else _dt.uint8
        where = self.location(location)
        got = self.loaded.get(key)
        if got is None:
            if where == "meta":
                got = MetaArray((numel,), d.np, None)
            else:
                raw = self.records(f"data/{key}")
                got = np.frombuffer(bytearray(raw), d.np) if raw else np.empty(0, d.np)
                if where != "cpu":  # a CUDA device: the storage uploaded once
                    got = upload(got, to_device(where))[1]
            self.loaded[key] = got
        return got, d


def read(data: bytes, map_location, weights_only: bool, safe: dict, pickle_module=pickle,
         **pickle_load_args):
    """Load a torch zip checkpoint held in ``data``."""
    try:
        z = zipfile.ZipFile(io.BytesIO(data))
        names = z.namelist()
    except (zipfile.BadZipFile, EOFError, ValueError) as e:
        raise RuntimeError(f"jtorch.load: the zip checkpoint is truncated or corrupt ({e})") \
            from None
    pkl = [n for n in names if n.endswith("/data.pkl") or n == "data.pkl"]
    if any(n.endswith("constants.pkl") or "/code/" in n for n in names):
        raise RuntimeError("jtorch.load: this is a TorchScript archive (torch.jit.save), which "
                           "jtorch cannot load; load it with torch and save its state_dict() "
                           "with torch.save")
    if not pkl:
        raise RuntimeError("jtorch.load: a zip file without data.pkl: not a torch checkpoint")
    prefix = pkl[0][:-len("data.pkl")]

    def record(name: str) -> bytes:
        try:
            return z.read(prefix + name)
        except KeyError:
            raise RuntimeError(f"jtorch.load: the checkpoint lacks its record {name!r} "
                               "(truncated or corrupt)") from None
        except (zipfile.BadZipFile, EOFError, ValueError, zlib.error) as e:
            raise RuntimeError(f"jtorch.load: the record {name!r} of the checkpoint is "
                               f"truncated or corrupt ({e})") from None

    if prefix + "byteorder" in names and record("byteorder") != b"little":
        raise RuntimeError("jtorch.load: a big-endian checkpoint, which jtorch cannot read")
    location = _locator(map_location)
    up = _Unpickler(io.BytesIO(record("data.pkl")), record, location, weights_only, safe,
                    **pickle_load_args)
    return up.load()


def _cuda_available() -> bool:
    from . import cuda

    return cuda.is_available()


def _locator(map_location):
    """(saved location string) -> "cpu", "meta" or "cuda:i", as ``map_location`` asks; torch's
    error for a CUDA tensor with no mapping where there is no CUDA device."""
    device = _device

    def fixed(loc):
        return str(to_device(loc))

    if map_location is None:
        def where(loc):
            if loc.startswith("cuda") and _cuda_available():
                return loc
            if loc.startswith("cuda"):
                raise RuntimeError(
                    "Attempting to deserialize object on a CUDA device but "
                    "torch.cuda.is_available() is False. If you are running on a CPU-only "
                    "machine, please use torch.load with map_location=torch.device('cpu') to "
                    "map your storages to the CPU.")
            return "meta" if loc == "meta" else "cpu"
        return where
    if isinstance(map_location, (str, device)):
        target = fixed(map_location)
        return lambda loc: "meta" if loc == "meta" else target
    if isinstance(map_location, dict):
        def mapped(loc):
            t = map_location.get(loc, loc)
            return fixed(t) if isinstance(t, (str, device)) else "cpu"
        return mapped
    if callable(map_location):
        return lambda loc: "meta" if loc == "meta" else "cpu"
    raise ValueError(f"jtorch.load: map_location should be a string, a device, a dict or a "
                     f"callable, got {type(map_location).__name__}")
