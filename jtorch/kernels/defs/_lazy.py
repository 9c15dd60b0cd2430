"""CPU kernel entries imported at their op's first call.

A kernel module costs its import at ``import jtorch`` even when a program never calls its ops:
each Numba function in it is built then (about 0.2 ms apiece; sorting, resampling, pooling and
indexing hold a hundred). Their records bind ``lazy(module, name)`` as ``kernels["cpu"]``
instead of the entry itself; the first call imports the module, puts the real entry into every
record holding this placeholder (later calls go straight to it) and runs it.
tests/test_import_time.py checks that ``import jtorch`` leaves these modules unimported.
"""

from __future__ import annotations

import importlib

from ..registry import REGISTRY


class LazyEntry:
    """``getattr(import_module(module), name)``, called with ``factory_args`` when given (an
    entry made by a factory, e.g. ``median_cpu(False)``), at the first call."""

    __slots__ = ("_entry", "factory_args", "module", "name")

    def __init__(self, module: str, name: str, factory_args: tuple | None = None):
        self.module, self.name, self.factory_args, self._entry = module, name, factory_args, None

    def resolve(self):
        if self._entry is None:
            entry = getattr(importlib.import_module(self.module), self.name)
            if self.factory_args is not None:
                entry = entry(*self.factory_args)
            self._entry = entry
            for op in REGISTRY.values():
                for device, kernel in op.kernels.items():
                    if kernel is self:
                        op.kernels[device] = entry
        return self._entry

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)

    def __repr__(self) -> str:
        call = "" if self.factory_args is None else repr(self.factory_args)
        return f"<lazy {self.module}.{self.name}{call}>"


def lazy(module: str, name: str, *factory_args) -> LazyEntry:
    return LazyEntry(module, name, factory_args if factory_args else None)
