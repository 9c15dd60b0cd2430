"""Intra-op and inter-op thread counts (torch's ``set_num_threads`` family) and the one rule
every CPU kernel launcher uses to pick a kernel's ``prange`` build or its serial twin.

A launcher calls ``use_parallel(work)`` at each call (never a grain copied at import): the
parallel build runs for at least ``_flags.GRAIN_SIZE`` elements of work unless the process
asked for one thread.

Numba's thread pool is started here, on the first parallel launch, with OpenMP's passive wait
policy (unless OMP_WAIT_POLICY or GOMP_SPINCOUNT is set): GNU OpenMP's workers otherwise spin
after each region and fight BLAS's pool for the cores, which made training steps (GEMMs
between elementwise kernels) 5-15x slower; a region that wakes sleeping workers costs 55-60 us
here (1.6 with spinning ones), hence the large grain (``_flags.GRAIN_SIZE``). If another
library (torch) already loaded GNU OpenMP, Numba's OpenMP layer would bind to that runtime
(spinning), so the workqueue layer is used; it takes launches from one thread at a time, so
with it kernels called off the main thread run serially.

``set_num_threads`` also sets every OpenBLAS pool in the process (torch's governs its OpenMP
pool, which runs its BLAS), and OpenBLAS's workers are told to sleep soon after a GEMM
(``OPENBLAS_THREAD_TIMEOUT``, below) rather than spin for a tenth of a second.

``set_num_threads(1)`` is more than a tuning knob: a forked child (a DataLoader worker) must
not start a GNU OpenMP region after its parent ran one (the child is aborted), so workers call
it before touching a kernel, as torch's do.
"""

from __future__ import annotations

import os
import threading

import numba
import numpy as np

from . import _flags

# OpenBLAS's workers spin for 2^28 cycles (~0.1 s) after each GEMM before they sleep, taking a
# core from the caller's Python and elementwise kernels in between: with a competing process
# a GPT training step ran 3.4x slower. A GEMM that finds its worker asleep pays the wake-up
# (a 384x48x144 product 34 -> 68 us, no faster than one thread), and an eager training step
# runs a GEMM every 0.1-0.5 ms. Measured on the minGPT step (2 cores, idle / one core busy
# with another process): 2^18 cycles (~0.1 ms) 13.1-13.9 / 14-15 ms, 2^19 12.4-13.7 / 19-22,
# 2^20 (~0.4 ms) 11.6-11.7 / 26-29, 2^21 11.7-11.9 / 31-37, torch 10.2-12.3 / 38 (its OpenMP
# workers spin). 2^20 keeps the workers through a step's GEMMs and degrades less than torch
# under load; they sleep in any longer stretch without one.
# Read when scipy's OpenBLAS (the one Numba's ``np.dot`` calls) loads, after this import.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "20")

_MAIN_THREAD = threading.main_thread().ident
_start_lock = threading.Lock()


class _State:
    num_threads: int | None = None  # None: Numba's pool size, until set_num_threads
    serial = False  # set_num_threads(1): every launcher picks its serial kernel
    interop_threads: int | None = None  # set once, as torch allows
    started = False  # Numba's pool launched (by start_pool)
    main_only = False  # the layer takes launches from one thread (workqueue)


def use_parallel(n: int) -> bool:
    """Whether ``n`` elements of work run a kernel's ``prange`` build (else its serial twin)."""
    if n < _flags.GRAIN_SIZE or _State.serial:
        return False
    if not _State.started:
        start_pool()
    return not _State.main_only or threading.get_ident() == _MAIN_THREAD


def may_use_parallel(n: int) -> bool:
    """``use_parallel(n)`` as it would answer, without starting the pool (a process that has
    not started it may still fork: ``compile/workers.py``)."""
    if n < _flags.GRAIN_SIZE or _State.serial:
        return False
    return not _State.main_only or threading.get_ident() == _MAIN_THREAD


def start_pool() -> None:
    """Launch Numba's threads (a no-op once done) with OpenMP's passive wait policy."""
    from numba.np.ufunc import parallel

    with _start_lock:
        if _State.started:
            return
        own = "OMP_WAIT_POLICY" not in os.environ and "GOMP_SPINCOUNT" not in os.environ
        if own and numba.config.THREADING_LAYER == "default" and _gomp_loaded():
            # another library (torch) initialised GNU OpenMP with spinning workers, and
            # Numba's OpenMP layer would bind to it: use Numba's own pool instead
            numba.config.THREADING_LAYER = "workqueue"
        if own:  # read by libgomp when the layer loads it, here
            os.environ["OMP_WAIT_POLICY"] = "PASSIVE"
        try:
            parallel._launch_threads()
        finally:
            if own:
                del os.environ["OMP_WAIT_POLICY"]
        _State.main_only = numba.threading_layer() == "workqueue"
        _State.started = True


class _Blas:
    """The ``set_num_threads``/``get_num_threads`` pair of the BLAS that Numba's ``np.dot``
    calls (scipy's OpenBLAS), found on first use; None where it cannot be controlled."""

    fns = None
    looked = False
    setters = None  # every OpenBLAS's set_num_threads (``_blas_setters``)
    lock = threading.RLock()


_BLAS_SYMBOLS = (("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
                 ("openblas_set_num_threads", "openblas_get_num_threads"))


def _blas_fns():
    if not _Blas.looked:
        _Blas.looked = True
        try:
            import ctypes

            import scipy.linalg.cython_blas  # noqa: F401  (maps the library Numba binds to)

            with open("/proc/self/maps") as f:
                paths = sorted({line.split()[-1] for line in f
                                if "openblas" in line.rsplit("/", 1)[-1].lower()})
            # scipy's own copy where it bundles one (numpy may bundle another, which Numba
            # does not call), else a shared one
            own = [p for p in paths if "scipy" in p.rsplit("/", 2)[-2]]
            for path in own or paths:
                lib = ctypes.CDLL(path)
                for set_name, get_name in _BLAS_SYMBOLS:
                    if hasattr(lib, set_name) and hasattr(lib, get_name):
                        _Blas.fns = (getattr(lib, set_name), getattr(lib, get_name))
                        return _Blas.fns
        except (ImportError, OSError):
            pass
    return _Blas.fns


class serial_blas:
    """Context manager: BLAS runs in its calling thread, for kernels that call ``np.dot``
    from every thread of Numba's pool (one GEMM per image, each on its own core) instead of
    alternating Numba's pool with BLAS's. ``available()`` says whether BLAS's thread count
    can be set here; where it cannot, such kernels are not used."""

    @staticmethod
    def available() -> bool:
        return _blas_fns() is not None

    def __enter__(self):
        set_n, get_n = _blas_fns()
        _Blas.lock.acquire()
        self.prev = get_n()
        if self.prev != 1:
            set_n(1)
        return self

    def __exit__(self, *exc):
        if self.prev != 1:
            _blas_fns()[0](self.prev)
        _Blas.lock.release()
        return False


def _gomp_loaded() -> bool:
    """Whether a GNU OpenMP runtime is already mapped into this process (Linux)."""
    try:
        with open("/proc/self/maps") as f:
            return "libgomp" in f.read()
    except OSError:
        return False


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
    threads (Numba's count is per calling thread). BLAS's pool is set to ``n`` too.

    >>> import jtorch
    >>> n = jtorch.get_num_threads()
    >>> jtorch.set_num_threads(1); jtorch.get_num_threads()
    1
    >>> jtorch.set_num_threads(n)
    """
    n = _check("set_num_threads", n)
    if n > 1:
        start_pool()
        numba.set_num_threads(min(n, numba.config.NUMBA_NUM_THREADS))
    _State.num_threads = n
    _State.serial = n == 1
    _set_blas_threads(n)


def _set_blas_threads(n: int) -> None:
    """BLAS's pool follows ``set_num_threads`` (as torch's OpenMP pool runs its BLAS): with one
    thread no BLAS worker exists to spin between GEMMs and take a core from the caller."""
    with _Blas.lock:
        for set_n in _blas_setters():
            set_n(n)


def _blas_setters() -> list:
    """``set_num_threads`` of every OpenBLAS in the process: scipy's, which Numba's ``np.dot``
    calls, and NumPy's own copy (``@`` on arrays outside kernels)."""
    if _Blas.setters is None:
        setters = []
        fns = _blas_fns()
        if fns is not None:
            setters.append(fns[0])
        try:
            import ctypes

            with open("/proc/self/maps") as f:
                paths = sorted({line.split()[-1] for line in f
                                if "openblas" in line.rsplit("/", 1)[-1].lower()})
            for path in paths:
                lib = ctypes.CDLL(path)
                for name in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_"):
                    if hasattr(lib, name):
                        setters.append(getattr(lib, name))
                        break
        except OSError:
            pass
        _Blas.setters = setters
    return _Blas.setters


def get_num_threads() -> int:
    """The number of threads used for intra-op parallelism on CPU (the value last given to
    ``set_num_threads``, else Numba's pool size).

    >>> import jtorch
    >>> jtorch.get_num_threads() >= 1
    True
    """
    if _State.num_threads is None:
        start_pool()
        return numba.get_num_threads()
    return _State.num_threads


def planned_num_threads() -> int:
    """``get_num_threads()`` without starting Numba's pool: the count it will run once started
    (a process about to fork must not have started it)."""
    if _State.num_threads is not None:
        return _State.num_threads
    return numba.get_num_threads() if _State.started else numba.config.NUMBA_NUM_THREADS


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
