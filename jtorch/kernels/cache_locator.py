"""Where Numba caches jtorch's hand-written kernels: under the jtorch cache directory.

Numba's default puts ``cache=True`` functions in a ``__pycache__`` beside their source, i.e.
inside the package (or the source tree). This locator, tried before Numba's own, sends every
function defined in a jtorch module to ``<cache dir>/numba/<module path>``, next to the
generated kernels; functions defined elsewhere keep Numba's usual locations.
"""

from __future__ import annotations

import os

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


def install() -> None:
    """Put the locator first (idempotent); must run before jtorch's kernels are decorated."""
    classes = caching.CacheImpl._locator_classes
    if JtorchCacheLocator not in classes:
        classes.insert(0, JtorchCacheLocator)
