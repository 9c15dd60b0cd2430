"""Generated kernel source: written to real files, imported, cached on disk by content.

Numba's on-disk cache needs a real source file, and its index is keyed by that file's path
and timestamp; so each generated module is written once under a content-hash name and never
rewritten. The file is also what tracebacks, pdb and ``JTORCH_DEBUG=4`` show.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.machinery
import importlib.util
import inspect
import os
import sys
import tempfile
import threading
import warnings
from types import ModuleType

import numba.cpython.hashing  # noqa: F401  (adds the hash secret's symbols to LLVM)
from numba.core import caching
from numba.core.cpu import CPUContext
from numba.core.runtime import rtsys

from .. import _flags

_modules: dict[str, ModuleType] = {}
_src_hash_cache: dict[object, str] = {}


def kernel_dir() -> str:
    d = os.path.join(_flags.CACHE_DIR, "kernels")
    os.makedirs(d, exist_ok=True)
    return d


def fingerprint(*objs) -> str:
    """A hash over source texts of functions/modules a kernel inlines (so edits invalidate).
    A function counts with the whole file that defines it: a scalar lambda calls helpers of
    its module (``_fmod_fast``), whose edits must reach the kernels too; and with the files of
    the kernel modules it names (``sp.digamma`` in a lambda of ``defs/special.py``)."""
    h = hashlib.sha1()
    for o in objs:
        key = o
        cached = _src_hash_cache.get(key)
        if cached is None:
            o = getattr(o, "py_func", o)  # a Numba dispatcher: its Python function's source
            try:
                text = inspect.getsource(o) if not isinstance(o, str) else o
                if not isinstance(o, str):
                    text += _file_hash(inspect.getsourcefile(o))
                    text += "".join(_file_hash(p) for p in _named_kernel_files(o))
            except (OSError, TypeError):
                text = repr(o)
            cached = hashlib.sha1(text.encode()).hexdigest()
            _src_hash_cache[key] = cached
        h.update(cached.encode())
    return h.hexdigest()


def _named_kernel_files(fn) -> list:
    """The files of the ``jtorch.kernels`` modules a function names as globals (fastmath has
    its own fingerprint in every kernel header)."""
    names, env = getattr(getattr(fn, "__code__", None), "co_names", ()), getattr(fn, "__globals__", {})
    files = []
    for n in names:
        m = env.get(n)
        if isinstance(m, ModuleType) and m.__name__.startswith("jtorch.kernels.") and \
                not m.__name__.startswith("jtorch.kernels.fastmath"):
            files.append(getattr(m, "__file__", None))
    return files


_file_hashes: dict = {}


def _file_hash(path: str | None) -> str:
    if not path:
        return ""
    d = _file_hashes.get(path)
    if d is None:
        with open(path, "rb") as f:
            d = _file_hashes[path] = hashlib.sha1(f.read()).hexdigest()
    return d


def load(prefix: str, source: str) -> ModuleType:
    """Import ``source`` as module ``<prefix>_<hash6>`` from the kernel cache directory."""
    digest = hashlib.sha1(source.encode()).hexdigest()
    name = f"{prefix}_{digest[:6]}"
    mod = _modules.get(name)
    if mod is not None:
        return mod
    path = os.path.join(kernel_dir(), name + ".py")
    if _read(path) != source:
        _write_once(path, source)
    if _flags.DEBUG >= 4:
        print(f"[jtorch] kernel {name} ({path}):\n{source}", file=sys.stderr)
    if _flags.DUMP_DIR:
        os.makedirs(_flags.DUMP_DIR, exist_ok=True)
        with open(os.path.join(_flags.DUMP_DIR, name + ".py"), "w") as f:
            f.write(source)
    # Numba's cache rebuilds a kernel's environment by importing its module by name, so the
    # module must be findable in sys.modules (a nameless module disables caching).
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    _modules[name] = mod
    return mod


def _write_once(path: str, source: str) -> None:
    """Create ``path`` holding ``source`` unless another process just did. Numba keys its cache
    entries by the source file's mtime: rewriting an identical file would make every entry of
    it stale, so an existing file is only replaced when it differs (a truncated write)."""
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
    with os.fdopen(fd, "w") as f:
        f.write(source)
    try:
        os.link(tmp, path)  # atomic create-if-absent
    except FileExistsError:
        if _read(path) != source:
            os.replace(tmp, path)
            return
    except OSError:  # a file system without hard links
        os.replace(tmp, path)
        return
    os.unlink(tmp)


def _read(path: str) -> str | None:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return None


# -- a corrupt cache entry is rebuilt, not fatal -------------------------------------------------
# Numba loads a cached kernel by unpickling its index and data files; one truncated or
# corrupt file (a killed process, a full disk) would make every later run that needs the
# kernel fail with UnpicklingError. A failed load now warns, empties that function's index
# and compiles again (the new entry is saved as usual; Numba writes files atomically).
#
# A load does not first refresh the CPU target's registries. Numba's own load begins with
# ``target_context.refresh()``, which imports every typing and lowering module it has (about
# 0.2 s, once per process) though rebuilding a cached library needs none of them, only the NRT
# and the symbols those modules add to LLVM (hashing's secret, imported here). Every compile
# still refreshes first (Numba's compiler does), so a process that loads only cached kernels,
# a warm start, never pays it.

def _load_unrefreshed(cache: caching.Cache, sig, ctx):
    rtsys.initialize(ctx)  # once; Numba's refresh starts with it too
    with cache._guard_against_spurious_io_errors():
        return cache._load_overload(sig, ctx)


_misses = [0]  # Numba cache lookups that found no entry (each a compile), this process


def cache_misses() -> int:
    """Kernels this process looked up in the on-disk cache and had to compile: nonzero in a
    cold process."""
    return _misses[0]


# Hooks of the compile workers (``compile/workers.py``), each a callable or None:
# ``on_miss[0](key, retry)`` when a lookup finds no entry (it may wait for another process to
# write it and return ``retry()``), ``on_save[0](key)`` after an entry is written.
on_miss: list = [None]
on_save: list = [None]


def entry_key(cache: caching.Cache, sig) -> str:
    """One cache entry's name, the same in every process: its index file and signature."""
    return f"{cache._cache_file._index_path}|{sig}"


def _install_cache_recovery() -> None:
    load, save = caching.Cache.load_overload, caching.Cache.save_overload
    if getattr(load, "_jtorch_recovers", False):
        return

    def load_overload(self, sig, target_context):
        res = _load_or_none(self, sig, target_context)
        if res is None and on_miss[0] is not None:
            res = on_miss[0](entry_key(self, sig), lambda: _load_or_none(self, sig, target_context))
        if res is None:
            _misses[0] += 1
        return res

    def save_overload(self, sig, data):
        save(self, sig, data)
        if on_save[0] is not None:
            on_save[0](entry_key(self, sig))

    def _load_or_none(self, sig, target_context):
        if not _blas_bound:
            _bind_blas()
        try:
            if isinstance(target_context, CPUContext):
                # on any failure Numba's own path decides, after its refresh
                with contextlib.suppress(Exception):
                    return _load_unrefreshed(self, sig, target_context)
            return load(self, sig, target_context)
        except Exception as e:  # noqa: BLE001  (any failure to read an entry: rebuild it)
            warnings.warn(f"jtorch: the Numba cache entry of {self._name} could not be read "
                          f"({type(e).__name__}: {e}); compiling it again", RuntimeWarning,
                          stacklevel=2)
            try:
                self._cache_file.flush()
            except OSError:
                pass
            return None

    load_overload._jtorch_recovers = True
    caching.Cache.load_overload = load_overload
    caching.Cache.save_overload = save_overload


# -- Numba's BLAS without scipy.linalg's Python API -------------------------------------------
# Numba's first compile or cache load in a process imports ``numba.np.arraymath``, which checks
# for BLAS with ``import scipy.linalg.cython_blas``; compiled ``np.dot`` later fetches its BLAS
# functions from that module by name. That import runs the package ``scipy.linalg`` first:
# scipy's whole linear-algebra API, which pulls in numpy.f2py and numpy.testing through scipy's
# array-API layer, about 0.2 s of a warm start that uses none of it. So before the first load
# (the first step of every cached or generated kernel's compile), ``scipy.linalg`` is entered
# in sys.modules as a lazy module (importlib's LazyLoader: its package code runs at the first
# attribute access, e.g. ``import scipy.linalg`` or ``scipy.linalg.inv``) and the extension
# module is loaded on its own into it, as the import system would.

_blas_bound = False
_blas_lock = threading.Lock()


def _bind_blas() -> None:
    global _blas_bound
    with _blas_lock:
        if not _blas_bound:
            _blas_bound = True
            _load_cython_blas()


def _load_cython_blas() -> None:
    if "scipy.linalg" in sys.modules or "numba.np.arraymath" in sys.modules:
        return  # imported already, or Numba's check has run
    try:
        import scipy

        spec = importlib.util.find_spec("scipy.linalg")
        blas = importlib.machinery.PathFinder.find_spec("scipy.linalg.cython_blas",
                                                        spec.submodule_search_locations or [])
        if blas is None or not hasattr(spec.loader, "exec_module"):
            return
        spec.loader = importlib.util.LazyLoader(spec.loader)
        linalg = importlib.util.module_from_spec(spec)
        sys.modules["scipy.linalg"] = linalg
        spec.loader.exec_module(linalg)  # deferred
        mod = importlib.util.module_from_spec(blas)
        sys.modules[blas.name] = mod
        blas.loader.exec_module(mod)
        linalg.cython_blas = mod
        scipy.linalg = linalg
    except Exception:  # noqa: BLE001  (any surprise: leave it to the regular import)
        for name in ("scipy.linalg.cython_blas", "scipy.linalg"):
            sys.modules.pop(name, None)


_install_cache_recovery()
