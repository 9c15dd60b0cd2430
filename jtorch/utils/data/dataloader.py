"""``DataLoader``: a dataset, a sampler and a collate function put together into an
iterable over batches, loaded in the main process or by worker processes.

With ``num_workers > 0`` each worker is a process (``fork`` on Linux unless another start
method is set or given) holding a copy of the dataset. The main process sends
``(task id, indices)`` to the workers round-robin through one index queue each, keeping
``prefetch_factor * num_workers`` tasks in flight, and reads ``(task id, data)`` from one
shared result queue, returning batches in the sampler's order. An exception in a worker
comes back wrapped with the worker's traceback and is raised again in the main process.

Shuffling draws from jtorch's generators: the order is reproducible under
``jtorch.manual_seed`` or with ``generator=``, but it is not the order torch gives for the
same seed, since the random streams differ.

>>> [b.tolist() for b in DataLoader(range(5), batch_size=2)]
[[0, 1], [2, 3], [4]]
"""

from __future__ import annotations

import itertools
import math
import multiprocessing
import os
import queue
import sys
import warnings
from collections.abc import Callable, Iterable
from typing import Any, Generic, TypeVar

from ... import dtypes as _dt
from ...ops import creation as _creation
from ...tensor import Tensor
from . import _utils
from ._utils.collate import default_collate, default_convert
from ._utils.fetch import _DatasetKind
from ._utils.worker import ExceptionWrapper, get_worker_info
from .dataset import Dataset, IterableDataset
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["DataLoader", "get_worker_info", "default_collate", "default_convert"]

_T_co = TypeVar("_T_co", covariant=True)


_LIVE_INDEX_QUEUES: dict[int, list] = {}
"""The index queues of iterators whose workers still run. Holding them here keeps them out
of a garbage cycle that holds their iterator: the cycle collector runs a queue's weakref
finalizer (which stops its feeder thread) before the iterator's ``__del__``, and the
``None`` that tells a worker to exit would never be sent."""


class _InfiniteConstantSampler(Sampler):
    """``None`` forever: the placeholder indices of an iterable-style dataset."""

    def __iter__(self):
        while True:
            yield None


def _default_context():
    """torch uses the platform's default start method, which is ``fork`` on Linux."""
    if multiprocessing.get_start_method(allow_none=True) is None and sys.platform.startswith("linux"):
        return multiprocessing.get_context("fork")
    return multiprocessing.get_context()


def _cpu_count() -> int | None:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count()


class DataLoader(Generic[_T_co]):
    """Iterate over ``dataset`` in batches, with torch's arguments and checks.

    ``batch_size=None`` turns automatic batching off (samples pass through
    ``default_convert``); ``batch_sampler`` replaces ``batch_size``/``shuffle``/``sampler``/
    ``drop_last``; an ``IterableDataset`` takes no sampler (shard it per worker with
    ``get_worker_info``). ``num_workers`` processes load in parallel, each seeded with
    ``base_seed + worker_id`` where ``base_seed`` is drawn from ``generator`` (or the
    default generator) per epoch, then ``worker_init_fn(worker_id)`` is called.
    ``persistent_workers`` keeps them across epochs; ``timeout`` bounds the wait for one
    batch. ``pin_memory`` is accepted; without an accelerator it does nothing (and warns
    as torch does).
    """

    dataset: Dataset[_T_co]
    batch_size: int | None
    num_workers: int
    pin_memory: bool
    drop_last: bool
    timeout: float
    sampler: Sampler | Iterable
    pin_memory_device: str
    prefetch_factor: int | None
    __initialized = False

    def __init__(self, dataset: Dataset[_T_co], batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler: Sampler | Iterable | None = None,
                 batch_sampler: Sampler[list] | Iterable[list] | None = None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False, drop_last: bool = False,
                 timeout: float = 0, worker_init_fn: Callable[[int], None] | None = None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor: int | None = None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError(
                "num_workers option should be non-negative; use num_workers=0 to disable multiprocessing."
            )
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError(
                "prefetch_factor option could only be specified in multiprocessing."
                "let num_workers > 0 to enable multiprocessing, otherwise set prefetch_factor to None."
            )
        if num_workers > 0 and prefetch_factor is None:
            prefetch_factor = 2
        elif prefetch_factor is not None and prefetch_factor < 0:
            raise ValueError("prefetch_factor option should be non-negative")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")

        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.in_order = in_order

        if isinstance(dataset, IterableDataset):
            self._dataset_kind = _DatasetKind.Iterable
            if shuffle not in {False, None}:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified shuffle option, "
                    f"but got shuffle={shuffle}"
                )
            if sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified sampler option, "
                    f"but got sampler={sampler}"
                )
            if batch_sampler is not None:
                raise ValueError(
                    "DataLoader with IterableDataset: expected unspecified batch_sampler option, "
                    f"but got batch_sampler={batch_sampler}"
                )
        else:
            shuffle = bool(shuffle)
            self._dataset_kind = _DatasetKind.Map

        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler, "
                    "and drop_last"
                )
            batch_size = None
            drop_last = False
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with drop_last"
            )

        if sampler is None:
            if self._dataset_kind == _DatasetKind.Iterable:
                sampler = _InfiniteConstantSampler()
            elif shuffle:
                sampler = RandomSampler(dataset, generator=generator)
            else:
                sampler = SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)

        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn
        self.persistent_workers = persistent_workers
        self.__initialized = True
        self._IterableDataset_len_called = None
        self._iterator = None
        self.check_worker_number_rationality()

    def _get_iterator(self) -> _BaseDataLoaderIter:
        if self.num_workers == 0:
            return _SingleProcessDataLoaderIter(self)
        self.check_worker_number_rationality()
        return _MultiProcessingDataLoaderIter(self)

    @property
    def multiprocessing_context(self):
        return self.__multiprocessing_context

    @multiprocessing_context.setter
    def multiprocessing_context(self, multiprocessing_context) -> None:
        if multiprocessing_context is not None:
            if self.num_workers <= 0:
                raise ValueError(
                    "multiprocessing_context can only be used with multi-process loading "
                    f"(num_workers > 0), but got num_workers={self.num_workers}"
                )
            if isinstance(multiprocessing_context, str):
                valid = multiprocessing.get_all_start_methods()
                if multiprocessing_context not in valid:
                    raise ValueError(
                        f"multiprocessing_context option should specify a valid start method in {valid!r}, "
                        f"but got multiprocessing_context={multiprocessing_context!r}"
                    )
                multiprocessing_context = multiprocessing.get_context(multiprocessing_context)
            if not isinstance(multiprocessing_context, multiprocessing.context.BaseContext):
                raise TypeError(
                    "multiprocessing_context option should be a valid context object or a string "
                    f"specifying the start method, but got multiprocessing_context={multiprocessing_context}"
                )
        self.__multiprocessing_context = multiprocessing_context

    def __setattr__(self, attr, val) -> None:
        if self.__initialized and attr in (
            "batch_size", "batch_sampler", "sampler", "drop_last", "dataset", "persistent_workers"
        ):
            raise ValueError(f"{attr} attribute should not be set after {type(self).__name__} is initialized")
        super().__setattr__(attr, val)

    def __iter__(self) -> _BaseDataLoaderIter:
        if not (self.persistent_workers and self.num_workers > 0):
            return self._get_iterator()
        if self._iterator is None:
            self._iterator = self._get_iterator()
        else:
            self._iterator._reset(self)
        return self._iterator

    @property
    def _auto_collation(self) -> bool:
        return self.batch_sampler is not None

    @property
    def _index_sampler(self):
        return self.batch_sampler if self._auto_collation else self.sampler

    def __len__(self) -> int:
        if self._dataset_kind != _DatasetKind.Iterable:
            return len(self._index_sampler)
        length = self._IterableDataset_len_called = len(self.dataset)
        if self.batch_size is not None:
            length = length // self.batch_size if self.drop_last else math.ceil(length / self.batch_size)
        return length

    def check_worker_number_rationality(self) -> None:
        """Warn, as torch does, when more workers are asked for than this process may use."""
        if not self.num_workers:
            return
        suggest = _cpu_count()
        if suggest is not None and self.num_workers <= suggest:
            return
        cpuset = "" if hasattr(os, "sched_getaffinity") else " (`cpuset` is not taken into account)"
        suggestion = (
            f"Our suggested max number of worker in current system is {suggest}{cpuset}, which is smaller "
            "than what this DataLoader is going to create."
            if suggest is not None
            else "DataLoader is not able to compute a suggested max number of worker in current system."
        )
        warnings.warn(
            f"This DataLoader will create {self.num_workers} worker processes in total. {suggestion} "
            "Please be aware that excessive worker creation might get DataLoader running slow or even "
            "freeze, lower the worker number to avoid potential slowness/freeze if necessary.",
            stacklevel=3,
        )


def _cuda_available() -> bool:
    from ... import cuda

    return cuda.is_available()


def _pin_batch(data):
    """torch's ``pin_memory`` of a batch: its CPU tensors (in tuples, lists, dicts, named
    tuples) copied into page-locked memory."""
    if isinstance(data, Tensor):
        return data.pin_memory() if data.device.type == "cpu" and not data.is_sparse else data
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*[_pin_batch(d) for d in data])
    if isinstance(data, (list, tuple)):
        return type(data)(_pin_batch(d) for d in data)
    if isinstance(data, dict):
        return type(data)({k: _pin_batch(v) for k, v in data.items()})
    return data


class _BaseDataLoaderIter:
    def __init__(self, loader: DataLoader) -> None:
        self._dataset = loader.dataset
        self._dataset_kind = loader._dataset_kind
        self._IterableDataset_len_called = loader._IterableDataset_len_called
        self._auto_collation = loader._auto_collation
        self._drop_last = loader.drop_last
        self._index_sampler = loader._index_sampler
        self._num_workers = loader.num_workers
        self._pin = False
        if loader.pin_memory and _cuda_available():
            self._pin = True  # batches are copied into page-locked memory (``_pin_batch``)
        elif loader.pin_memory:
            warnings.warn(
                "'pin_memory' argument is set as true but no accelerator is found, "
                "then device pinned memory won't be used.",
                stacklevel=3,
            )
        self._timeout = loader.timeout
        self._collate_fn = loader.collate_fn
        self._sampler_iter = iter(self._index_sampler)
        self._base_seed = int(
            _creation.empty((), dtype=_dt.int64).random_(generator=loader.generator).item()
        )
        self._persistent_workers = loader.persistent_workers
        self._num_yielded = 0

    def __iter__(self):
        return self

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        self._sampler_iter = iter(self._index_sampler)
        self._num_yielded = 0
        self._IterableDataset_len_called = loader._IterableDataset_len_called

    def _next_index(self):
        return next(self._sampler_iter)

    def _next_data(self):
        raise NotImplementedError

    def __next__(self) -> Any:
        data = self._next_data()
        if self._pin:
            data = _pin_batch(data)
        self._num_yielded += 1
        if (self._dataset_kind == _DatasetKind.Iterable and self._IterableDataset_len_called is not None
                and self._num_yielded > self._IterableDataset_len_called):
            msg = (
                f"Length of IterableDataset {self._dataset} was reported to be "
                f"{self._IterableDataset_len_called}(when accessing len(dataloader)), but "
                f"{self._num_yielded} samples have been fetched. "
            )
            if self._num_workers > 0:
                msg += (
                    "For multiprocessing data-loading, this could be caused by not properly configuring "
                    "the IterableDataset replica at each worker."
                )
            warnings.warn(msg, stacklevel=2)
        return data

    def __len__(self) -> int:
        return len(self._index_sampler)

    def __getstate__(self):
        raise NotImplementedError(f"{type(self).__name__} cannot be pickled")


class _SingleProcessDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        assert self._timeout == 0 and self._num_workers == 0
        self._dataset_fetcher = _DatasetKind.create_fetcher(
            self._dataset_kind, self._dataset, self._auto_collation, self._collate_fn, self._drop_last
        )

    def _next_data(self):
        index = self._next_index()  # may raise StopIteration
        return self._dataset_fetcher.fetch(index)  # may raise StopIteration


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    """Task bookkeeping as torch's: ``_task_info[task id]`` is ``(worker,)`` while in flight
    and ``(worker, data)`` once it arrived out of order; ``_rcvd_idx`` is the next task to
    return, ``_send_idx`` the next to send."""

    def __init__(self, loader: DataLoader) -> None:
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        assert self._num_workers > 0 and self._prefetch_factor > 0
        ctx = loader.multiprocessing_context or _default_context()
        self._worker_init_fn = loader.worker_init_fn
        self._worker_result_queue = ctx.Queue()
        self._shutdown = False
        self._workers_done_event = ctx.Event()
        self._index_queues = []
        self._workers = []
        for i in range(self._num_workers):
            index_queue = ctx.Queue()
            index_queue.cancel_join_thread()
            w = ctx.Process(
                target=_utils.worker._worker_loop,
                args=(self._dataset_kind, self._dataset, index_queue, self._worker_result_queue,
                      self._workers_done_event, self._auto_collation, self._collate_fn,
                      self._drop_last, self._base_seed, self._worker_init_fn, i, self._num_workers,
                      self._persistent_workers),
            )
            w.daemon = True
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        self._data_queue = self._worker_result_queue
        _LIVE_INDEX_QUEUES[id(self)] = self._index_queues
        self._reset(loader, first_iter=True)

    def _reset(self, loader: DataLoader, first_iter: bool = False) -> None:
        super()._reset(loader, first_iter)
        self._send_idx = 0
        self._rcvd_idx = 0
        self._task_info = {}
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:
            # persistent workers: restart each one's fetcher and wait for all to confirm
            for q in self._index_queues:
                q.put(_utils.worker._ResumeIteration())
            pending = self._num_workers
            while pending > 0:
                return_idx, _ = self._get_data()
                if isinstance(return_idx, _utils.worker._ResumeIteration):
                    pending -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout: float = _utils.MP_STATUS_CHECK_INTERVAL):
        try:
            return True, self._data_queue.get(timeout=timeout)
        except Exception as e:
            failed = [w for wid, w in enumerate(self._workers)
                      if self._workers_status[wid] and not w.is_alive()]
            for wid, w in enumerate(self._workers):
                if w in failed:
                    self._mark_worker_as_unavailable(wid)
            if failed:
                pids = ", ".join(str(w.pid) for w in failed)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids}) exited unexpectedly") from e
            if isinstance(e, queue.Empty):
                return False, None
            raise

    def _get_data(self):
        if self._timeout > 0:
            success, data = self._try_get_data(self._timeout)
            if success:
                return data
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            success, data = self._try_get_data()
            if success:
                return data

    def _next_data(self):
        while True:
            # skip tasks of workers that ended their iterable dataset
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration

            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

            assert not self._shutdown and self._tasks_outstanding > 0
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._dataset_kind == _DatasetKind.Iterable and isinstance(
                    data, _utils.worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    return self._process_data(data, self._task_info.pop(idx)[0])
                self._task_info[idx] += (data,)
                continue
            worker_id = self._task_info.pop(idx)[0]
            self._rcvd_idx += 1
            return self._process_data(data, worker_id)

    def _try_put_index(self) -> None:
        max_tasks = self._prefetch_factor * self._num_workers
        assert self._tasks_outstanding < max_tasks
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next active worker, if any
            worker = next(self._worker_queue_idx_cycle)
            if not self._workers_status[worker]:
                continue
            if self._in_order or self._workers_num_tasks[worker] < max_tasks // sum(self._workers_status):
                break
        else:
            return
        self._index_queues[worker].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker,)
        self._workers_num_tasks[worker] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_id: int):
        self._workers_num_tasks[worker_id] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id: int, shutdown: bool = False) -> None:
        """Tell worker ``worker_id`` to exit (``None`` on its queue) and stop sending to it."""
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self) -> None:
        if _utils is None or _utils.python_exit_status is not False or self._shutdown:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id, shutdown=True)
            for w in self._workers:
                w.join(timeout=_utils.MP_STATUS_CHECK_INTERVAL)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            _LIVE_INDEX_QUEUES.pop(id(self), None)
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=_utils.MP_STATUS_CHECK_INTERVAL)

    def __del__(self) -> None:
        if getattr(self, "_workers", None) is not None:
            self._shutdown_workers()
