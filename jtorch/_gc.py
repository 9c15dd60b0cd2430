"""Python's cyclic garbage collector around jtorch's start-up and Numba's compiles.

A warm start (import, then a compiled training step loading its cached kernels) spent ~0.2 s
of ~1.1 s in collections, a cold one 1.2-1.4 s of 11-12.5 s: Numba's import and jtorch's
leave ~80k long-lived objects (types, dispatchers, overload tables) that every full
collection walks again, and a compile allocates objects fast enough to trigger one every
few hundred milliseconds.

- ``freeze_import``: the objects alive once ``import jtorch`` is done move to the permanent
  generation (``gc.freeze``), as servers do before forking: no later collection walks
  them. Everything alive at that moment is frozen, including what the program made before
  importing jtorch, so a reference cycle among those objects that later becomes garbage is
  never collected (it is still freed where reference counting frees it). ``JTORCH_GC_FREEZE=0``
  leaves the collector alone.
- ``pause_in_compiles``: the collector pauses while Numba holds its compiler lock (every
  compile and every cached-kernel load, eager, generated or compiled, on any thread) and
  resumes when the outermost one ends; what a compile left as garbage goes at the next
  collection.
"""

from __future__ import annotations

import gc
import os


class _State:
    depth = 0  # nesting of Numba's compiler lock (read and written while holding it)
    paused = False  # the collector was enabled when the outermost compile began
    installed = False


def enabled() -> bool:
    """Whether jtorch may freeze and pause the collector (``JTORCH_GC_FREEZE`` not 0)."""
    return os.environ.get("JTORCH_GC_FREEZE", "1").strip().lower() not in ("0", "false", "no")


def freeze_import() -> None:
    """Move every object alive now to the permanent generation (``gc.freeze``)."""
    if enabled():
        gc.freeze()


def pause_in_compiles() -> None:
    """Pause collections while Numba's global compiler lock is held (once per process)."""
    if _State.installed or not enabled():
        return
    from numba.core import compiler_lock

    lock = compiler_lock.global_compiler_lock
    acquire, release = lock.acquire, lock.release

    def acquire_paused():
        acquire()
        _State.depth += 1
        if _State.depth == 1 and gc.isenabled():
            gc.disable()
            _State.paused = True

    def release_resumed():
        _State.depth -= 1
        if _State.depth == 0 and _State.paused:
            _State.paused = False
            gc.enable()
        release()

    # the lock's ``__enter__``/``__exit__`` and its decorator call these through the instance
    lock.acquire, lock.release = acquire_paused, release_resumed
    _State.installed = True
