"""The worker side of multi-process loading: ``get_worker_info``, per-worker seeding, and
the loop that reads ``(task id, indices)`` from its index queue and puts
``(task id, data or wrapped exception)`` on the shared result queue.

A worker seeds Python's ``random`` and jtorch with ``base_seed + worker_id`` and NumPy's
legacy generator with torch's ``_generate_state`` mix of the two, so each worker's streams
differ and are reproducible from the loader's generator.
"""

from __future__ import annotations

import os
import queue
import random
import sys
import traceback
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import MP_STATUS_CHECK_INTERVAL


@dataclass(frozen=True)
class WorkerInfo:
    """What a worker knows about itself: ``id`` (0 to ``num_workers - 1``),
    ``num_workers``, ``seed`` and ``dataset`` (this process's copy)."""

    id: int
    num_workers: int
    seed: int
    dataset: Any
    worker_method: str | None = "multiprocessing"


_worker_info: WorkerInfo | None = None


def get_worker_info() -> WorkerInfo | None:
    """This worker's ``WorkerInfo`` inside a DataLoader worker process; ``None`` in the main
    process. Use it in ``IterableDataset.__iter__`` or ``worker_init_fn`` to shard work.

    >>> get_worker_info() is None
    True
    """
    return _worker_info


class KeyErrorMessage(str):
    """A str whose repr is itself, so a re-raised KeyError shows the traceback readably."""

    def __repr__(self) -> str:
        return self


class ExceptionWrapper:
    """An exception with its formatted traceback, picklable across processes; ``reraise``
    raises the same type with "Caught <type> <where>.\\nOriginal Traceback ..." as torch."""

    def __init__(self, exc_info=None, where: str = "in background") -> None:
        if exc_info is None:
            exc_info = sys.exc_info()
        self.exc_type = exc_info[0]
        self.exc_msg = "".join(traceback.format_exception(*exc_info))
        self.where = where

    def reraise(self):
        msg = f"Caught {self.exc_type.__name__} {self.where}.\nOriginal {self.exc_msg}"
        if self.exc_type is KeyError:
            msg = KeyErrorMessage(msg)
        elif getattr(self.exc_type, "message", None):
            raise self.exc_type(message=msg)
        try:
            exception = self.exc_type(msg)
        except Exception:
            raise RuntimeError(msg) from None
        raise exception


@dataclass(frozen=True)
class _IterableDatasetStopIteration:
    """A worker's iterable dataset is exhausted."""

    worker_id: int


@dataclass(frozen=True)
class _ResumeIteration:
    """Sent to persistent workers at the start of each new epoch."""

    seed: int | None = None


class ManagerWatchdog:
    """Notices when the main process is gone (the worker is re-parented)."""

    def __init__(self) -> None:
        self.manager_pid = os.getppid()
        self.manager_dead = False

    def is_alive(self) -> bool:
        if not self.manager_dead:
            self.manager_dead = os.getppid() != self.manager_pid
        return not self.manager_dead


def _generate_state(base_seed: int, worker_id: int) -> list[int]:
    """torch's NumPy seed for a worker: four 32-bit words hashed from the base seed and the
    worker id (NumPy's SeedSequence mixing), so workers never share a NumPy stream."""
    init_a, mult_a, init_b, mult_b = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
    mix_mult_l, mix_mult_r, xshift, mask = 0xCA01F9DD, 0x4973F715, 16, 0xFFFFFFFF
    entropy = [worker_id, base_seed & mask, base_seed >> 32, 0]
    hash_const = [init_a]

    def hash32(value: int) -> int:
        value = (value ^ hash_const[0]) & mask
        hash_const[0] = (hash_const[0] * mult_a) & mask
        value = (value * hash_const[0]) & mask
        return (value ^ (value >> xshift)) & mask

    def mix(x: int, y: int) -> int:
        r = (((mix_mult_l * x) & mask) - ((mix_mult_r * y) & mask)) & mask
        return (r ^ (r >> xshift)) & mask

    pool = [hash32(e) for e in entropy]
    for i_src in range(4):
        for i_dst in range(4):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hash32(pool[i_src]))
    state, const_b = [], init_b
    for v in pool:
        v = (v ^ const_b) & mask
        const_b = (const_b * mult_b) & mask
        v = (v * const_b) & mask
        state.append((v ^ (v >> xshift)) & mask)
    return state


def _serial_kernels() -> None:
    """One intra-op thread per worker, as torch's workers run (``set_num_threads(1)``): every
    kernel launcher then picks its serial twin. Beyond oversubscription this is needed for
    safety: a forked child must not start a parallel region when the parent already used GNU
    OpenMP (Numba's ``omp`` layer aborts the process)."""
    from ...._threads import set_num_threads

    set_num_threads(1)


def _seed_worker(base_seed: int, worker_id: int) -> int:
    from ....random import manual_seed

    seed = base_seed + worker_id
    random.seed(seed)
    manual_seed(seed)
    np.random.seed(_generate_state(base_seed, worker_id))
    return seed


def _worker_loop(dataset_kind, dataset, index_queue, data_queue, done_event, auto_collation,
                 collate_fn, drop_last, base_seed, init_fn, worker_id, num_workers,
                 persistent_workers) -> None:
    """Serve tasks until the main process sends ``None`` (or dies). Results keep their task
    id so the main process can restore the sampler's order."""
    from .fetch import _DatasetKind

    global _worker_info
    try:
        _serial_kernels()
        seed = _seed_worker(base_seed, worker_id)
        _worker_info = WorkerInfo(id=worker_id, num_workers=num_workers, seed=seed, dataset=dataset)
        init_exception = None
        fetcher = None
        try:
            if init_fn is not None:
                init_fn(worker_id)
            fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn,
                                                  drop_last)
        except Exception:
            init_exception = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")

        iteration_end = False
        watchdog = ManagerWatchdog()
        while watchdog.is_alive():
            try:
                r = index_queue.get(timeout=MP_STATUS_CHECK_INTERVAL)
            except queue.Empty:
                continue
            if isinstance(r, _ResumeIteration):
                data_queue.put((r, None))
                iteration_end = False
                fetcher = _DatasetKind.create_fetcher(dataset_kind, dataset, auto_collation, collate_fn,
                                                      drop_last)
                continue
            if r is None:
                break
            if done_event.is_set() or iteration_end:
                continue  # drain what was sent before the end
            idx, index = r
            if init_exception is not None:
                data, init_exception = init_exception, None
            else:
                try:
                    data = fetcher.fetch(index)
                except StopIteration:
                    if dataset_kind != _DatasetKind.Iterable:
                        data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
                    else:
                        data = _IterableDatasetStopIteration(worker_id)
                        iteration_end = True
                except Exception:
                    data = ExceptionWrapper(where=f"in DataLoader worker process {worker_id}")
            data_queue.put((idx, data))
            del data, idx, index, r
    except KeyboardInterrupt:
        pass  # the main process handles Ctrl-C
    if done_event.is_set():
        data_queue.cancel_join_thread()
        data_queue.close()
