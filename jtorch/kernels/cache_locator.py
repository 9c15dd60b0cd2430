"""Where Numba caches jtorch's hand-written kernels: under the jtorch cache directory.

Numba's default puts ``cache=True`` functions in a ``__pycache__`` beside their source, i.e.
inside the package (or the source tree). This locator, tried before Numba's own, sends every
function defined in a jtorch module to ``<cache dir>/numba/<module path>``, next to the
generated kernels; functions defined elsewhere keep Numba's usual locations.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import types

from numba.core import caching

from .. import _flags

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_checked_dirs: set = set()  # cache directories found writable by this process


class JtorchCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        rel = os.path.relpath(os.path.dirname(os.path.abspath(py_file)), _PACKAGE_DIR)
        self._cache_path = os.path.join(_flags.CACHE_DIR, "numba", "jtorch", rel)

    def get_cache_path(self):
        return self._cache_path

    def ensure_cache_path(self):
        # Numba checks the directory (makedirs and a temporary file) for every function it
        # decorates and before every save: its writability once per directory and process is
        # enough (the ~300 kernels decorated at import share a few directories); one removed
        # since (a cleared cache) is made and checked again.
        path = self._cache_path
        if path not in _checked_dirs or not os.path.isdir(path):
            super().ensure_cache_path()
            _checked_dirs.add(path)

    @classmethod
    def from_function(cls, py_func, py_file):
        path = os.path.abspath(py_file)
        if not path.startswith(_PACKAGE_DIR + os.sep):
            return None
        return super().from_function(py_func, py_file)


# The fastmath implementations are closures made per dtype by factories, whose cells hold
# nested helper functions. Numba keys a closure's cache entry by a pickle of its cells, and a
# pickled nested function differs from process to process: every lookup missed and appended
# another entry. Their key is the fastmath sources' fingerprint (which decides every constant
# and helper a cell holds, and covers helpers in the package's other modules, which Numba's
# check of the function's own file does not) and the cells' plain values.
_FASTMATH = "jtorch.kernels.fastmath"


def _cell_token(value, depth: int = 0):
    """A value of a closure cell as the same bytes in every process: a function by its name,
    code and (to a few levels) its own cells, so that two factory-made helpers of one name
    differ by what they hold; other named objects (dispatchers, intrinsics, classes) by name."""
    if isinstance(value, types.FunctionType):
        code = value.__code__
        cells = () if depth > 4 else tuple(_cell_token(c.cell_contents, depth + 1)
                                           for c in value.__closure__ or ())
        consts = tuple(repr(c) for c in code.co_consts if not isinstance(c, types.CodeType))
        return ("fn", value.__module__, value.__qualname__, code.co_code, consts, cells)
    if isinstance(value, type) or hasattr(value, "py_func") or hasattr(value, "_defn"):
        name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
        return ("named", type(value).__name__, getattr(value, "__module__", None), name)
    try:
        return ("value", pickle.dumps(value, protocol=4))
    except Exception:  # noqa: BLE001  (an unpicklable value: its type and repr)
        return ("repr", type(value).__name__, repr(value))


def _index_key(self, sig, codegen):
    fn = self._py_func
    if not (getattr(fn, "__module__", None) or "").startswith(_FASTMATH):
        return _numba_index_key(self, sig, codegen)
    from . import fastmath_fingerprint

    cells = tuple(_cell_token(c.cell_contents) for c in fn.__closure__ or ())
    digest = hashlib.sha256(repr((fastmath_fingerprint(), cells)).encode()).hexdigest()
    return (sig, codegen.magic_tuple(),
            (hashlib.sha256(fn.__code__.co_code).hexdigest(), digest))


_numba_index_key = caching.Cache._index_key
if getattr(_numba_index_key, "__module__", None) == __name__:  # (a reloaded module)
    _numba_index_key = _numba_index_key.__globals__["_numba_index_key"]


def install() -> None:
    """Put the locator first (idempotent); must run before jtorch's kernels are decorated."""
    classes = caching.CacheImpl._locator_classes
    if JtorchCacheLocator not in classes:
        classes.insert(0, JtorchCacheLocator)
    caching.Cache._index_key = _index_key
