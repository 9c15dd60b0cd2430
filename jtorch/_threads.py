"""Intra-op and inter-op thread counts (torch's ``set_num_threads`` family) and the one rule
every CPU kernel launcher uses to pick a kernel's ``prange`` build or its serial twin.

A launcher calls ``use_parallel(work)`` at each call (never a grain copied at import): the
parallel build runs for at least ``_flags.GRAIN_SIZE`` elements of work, on the main thread,
unless the process asked for one thread. Numba's threading layer is ``_flags.THREADING_LAYER``
(workqueue unless NUMBA_THREADING_LAYER says otherwise); workqueue takes launches from one
thread at a time, so kernels called from other threads run their serial twins (as a
DataLoader's pin-memory thread or a user's thread pool would). ``set_num_threads(1)`` is more
than a tuning knob: a forked child (a DataLoader worker) must not start a parallel region
after its parent ran one (GNU OpenMP aborts it), so workers call it before touching a kernel,
as torch's do.
"""

from __future__ import annotations

import threading

import numba
import numpy as np

from . import _flags

# Read by Numba when the first parallel kernel launches (not at import), so setting it here
# decides the layer for the process unless a kernel already ran.
numba.config.THREADING_LAYER = _flags.THREADING_LAYER
_MAIN_THREAD = threading.main_thread().ident


class _State:
    num_threads: int | None = None  # None: Numba's pool size, until set_num_threads
    serial = False  # set_num_threads(1): every launcher picks its serial kernel
    interop_threads: int | None = None  # set once, as torch allows


def use_parallel(n: int) -> bool:
    """Whether ``n`` elements of work run a kernel's ``prange`` build (else its serial twin)."""
    return n >= _flags.GRAIN_SIZE and not _State.serial and threading.get_ident() == _MAIN_THREAD


def _check(name: str, n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        from .ops._util import type_name

        raise RuntimeError(f"{name} expects an int, but got {type_name(n)}")
    n = int(n)
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    return n


def set_num_threads(n: int) -> None:
    """Sets the number of threads used for intra-op parallelism on CPU. With one thread every
    kernel runs its serial build; with more, Numba's pool runs ``min(n, NUMBA_NUM_THREADS)``
    threads (Numba's count is per calling thread).

    >>> import jtorch
    >>> n = jtorch.get_num_threads()
    >>> jtorch.set_num_threads(1); jtorch.get_num_threads()
    1
    >>> jtorch.set_num_threads(n)
    """
    n = _check("set_num_threads", n)
    if n > 1:
        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    _State.num_threads = n
    _State.serial = n == 1


def get_num_threads() -> int:
    """The number of threads used for intra-op parallelism on CPU (the value last given to
    ``set_num_threads``, else Numba's pool size).

    >>> import jtorch
    >>> jtorch.get_num_threads() >= 1
    True
    """
    if _State.num_threads is None:
        return numba.get_num_threads()
    return _State.num_threads


def set_num_interop_threads(n: int) -> None:
    """Sets the number of threads used for inter-op parallelism on CPU. As in torch it can be
    set once; jtorch runs no inter-op pool, so the value is only recorded.

    >>> import jtorch
    >>> jtorch.get_num_interop_threads() >= 1
    True
    """
    n = _check("set_num_interop_threads", n)
    if _State.interop_threads is not None:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has started "
                           "or set_num_interop_threads called")
    _State.interop_threads = n


def get_num_interop_threads() -> int:
    """The number of threads used for inter-op parallelism on CPU (default: the CPU count)."""
    if _State.interop_threads is None:
        return numba.config.NUMBA_NUM_THREADS
    return _State.interop_threads
