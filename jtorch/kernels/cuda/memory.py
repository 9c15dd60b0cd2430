"""A caching allocator for CUDA device memory, after torch's CUDACachingAllocator: a freed
array's block goes back to a per-device cache and the next request of a fitting size takes it,
so a training loop that repeats its allocations makes no driver allocations after the first
step.

Sizes: requests of at most 1 MiB (``SMALL_SIZE``) round up to 512 bytes and come from the small
pool, larger ones round up to 2 MiB and come from the large pool, as torch rounds its segments.
A request takes the smallest cached block of its pool that holds it and is not more than twice
its rounded size (nor more than 20 MiB larger, torch's ``kLargeBuffer``), else a new block from
the driver; unlike torch, a block is never split, so one block is one driver allocation.

A block goes back to the cache when the array ``empty`` returned and every view of it are gone
(``target.typed_view``); the release is queued by the finalizer and applied under the lock by
the next call here, so a finalizer that runs inside a locked section cannot deadlock. Counters
follow torch's ``memory_stats`` names (``allocated_bytes.all.current``, ...) plus
``num_device_alloc``/``num_device_free``, the driver allocations and frees.

>>> import numpy as np
>>> a = empty(100, np.float32)      # doctest: +SKIP
>>> allocated() == 512              # doctest: +SKIP
True
"""

from __future__ import annotations

import bisect
import collections
import gc
import threading

import numpy as np

from . import target

SMALL_SIZE = 1 << 20  # torch's kSmallSize: requests up to this size use the small pool
MIN_BLOCK = 512  # kMinBlockSize: every block is a multiple of it
ROUND_LARGE = 2 << 20  # kRoundLarge: large blocks are multiples of 2 MiB
LARGE_SLACK = 20 << 20  # kLargeBuffer: a cached block at most this much larger may serve

_POOLS = ("all", "small_pool", "large_pool")
_STATS = ("allocation", "segment", "active", "allocated_bytes", "reserved_bytes", "active_bytes",
          "requested_bytes")
_COUNTERS = ("num_alloc_retries", "num_ooms", "num_device_alloc", "num_device_free")

# (stat, small?) -> the (current, peak, allocated, freed) keys of its "all" and pool entries
_KEYS = {(s, small): [tuple(f"{s}.{p}.{k}" for k in ("current", "peak", "allocated", "freed"))
                      for p in ("all", "small_pool" if small else "large_pool")]
         for s in _STATS for small in (True, False)}

_lock = threading.Lock()
_pending: collections.deque = collections.deque()  # blocks whose arrays died, not yet cached
_states: dict[int, _DeviceState] = {}


def round_size(nbytes: int) -> int:
    """The block size that serves a request of ``nbytes`` bytes."""
    if nbytes <= SMALL_SIZE:
        return max(MIN_BLOCK, -(-nbytes // MIN_BLOCK) * MIN_BLOCK)
    return -(-nbytes // ROUND_LARGE) * ROUND_LARGE


def _fits(block_size: int, size: int) -> bool:
    return block_size <= size + min(size, LARGE_SLACK)


class _Block:
    __slots__ = ("device", "raw", "requested", "size", "small")

    def __init__(self, raw, size: int, device: int) -> None:
        self.raw = raw  # the driver's allocation, a uint8 device array of ``size`` bytes
        self.size = size
        self.device = device
        self.small = size <= SMALL_SIZE
        self.requested = 0


class _DeviceState:
    """One device's cached blocks (per pool: the sorted sizes and the blocks of each size) and
    counters."""

    def __init__(self) -> None:
        self.sizes = {True: [], False: []}  # small?: sorted distinct sizes with cached blocks
        self.free = {True: {}, False: {}}  # small?: size -> [block, ...]
        self.stat = {f"{s}.{p}.{k}": 0 for s in _STATS for p in _POOLS
                     for k in ("current", "peak", "allocated", "freed")}
        self.stat.update(dict.fromkeys(_COUNTERS, 0))

    def add(self, name: str, block: _Block, amount: int) -> None:
        """Moves stat ``name`` by ``amount`` in the "all" and the block's pool entries."""
        st = self.stat
        for cur_key, peak_key, alloc_key, freed_key in _KEYS[name, block.small]:
            cur = st[cur_key] = st[cur_key] + amount
            st[peak_key] = max(st[peak_key], cur)
            if amount > 0:
                st[alloc_key] += amount
            else:
                st[freed_key] -= amount

    def take(self, size: int) -> _Block | None:
        """The best-fitting cached block for a request of ``size`` rounded bytes, removed from
        the cache."""
        small = size <= SMALL_SIZE
        sizes = self.sizes[small]
        i = bisect.bisect_left(sizes, size)
        if i == len(sizes) or not _fits(sizes[i], size):
            return None
        blocks = self.free[small][sizes[i]]
        block = blocks.pop()
        if not blocks:
            del self.free[small][sizes[i]]
            del sizes[i]
        return block

    def put(self, block: _Block) -> None:
        blocks = self.free[block.small].setdefault(block.size, [])
        if not blocks:
            bisect.insort(self.sizes[block.small], block.size)
        blocks.append(block)

    def drop_cached(self) -> None:
        """Hands every cached block back to the driver (drops the last reference to it)."""
        for small in (True, False):
            for blocks in self.free[small].values():
                for block in blocks:
                    self.add("reserved_bytes", block, -block.size)
                    self.add("segment", block, -1)
                    self.stat["num_device_free"] += 1
            self.free[small].clear()
            self.sizes[small].clear()


def _state(device: int) -> _DeviceState:
    st = _states.get(device)
    if st is None:
        st = _states[device] = _DeviceState()
    return st


def _drain() -> None:
    """Caches the blocks whose arrays have died (call with the lock held)."""
    while _pending:
        block = _pending.popleft()
        st = _state(block.device)
        st.add("allocated_bytes", block, -block.size)
        st.add("active_bytes", block, -block.size)
        st.add("requested_bytes", block, -block.requested)
        st.add("allocation", block, -1)
        st.add("active", block, -1)
        st.put(block)


def _release(block: _Block) -> None:
    """The finalizer of a block's array: queue the block (no lock: finalizers run anywhere)."""
    _pending.append(block)


def _fmt(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.2f} {unit}"
        n /= 1024
    return str(n)


def _malloc(st: _DeviceState, device: int, size: int):
    """A new block from the driver; on out-of-memory, frees the cache, collects garbage (arrays
    in reference cycles) and tries once more, as torch does."""
    try:
        return target.device_array(size)
    except Exception as exc:
        if not target.is_oom(exc):
            raise
    st.stat["num_alloc_retries"] += 1
    gc.collect()
    _drain()
    st.drop_cached()
    target.flush_frees()
    try:
        return target.device_array(size)
    except Exception as exc:
        if not target.is_oom(exc):
            raise
        st.stat["num_ooms"] += 1
        from ...ops.aten import OutOfMemoryError

        alloc = st.stat["allocated_bytes.all.current"]
        cached = st.stat["reserved_bytes.all.current"] - alloc
        raise OutOfMemoryError(
            f"CUDA out of memory. Tried to allocate {_fmt(size)}. GPU {device}: {_fmt(alloc)} is "
            f"allocated by PyTorch, and {_fmt(cached)} is reserved by PyTorch but unallocated."
        ) from exc


def empty(n: int, dtype) -> object:
    """A 1-D contiguous device array of ``n`` elements of NumPy ``dtype`` on the current device,
    from the cache where a block fits (``n`` may be 0: no block)."""
    dtype = np.dtype(dtype)
    if n == 0:
        return target.empty_array(dtype)
    requested = n * dtype.itemsize
    size = round_size(requested)
    device = target.current_device_index()
    with _lock:
        _drain()
        st = _state(device)
        block = st.take(size)
        if block is None:
            block = _Block(_malloc(st, device, size), size, device)
            st.add("reserved_bytes", block, size)
            st.add("segment", block, 1)
            st.stat["num_device_alloc"] += 1
        block.requested = requested
        st.add("allocated_bytes", block, block.size)
        st.add("active_bytes", block, block.size)
        st.add("requested_bytes", block, requested)
        st.add("allocation", block, 1)
        st.add("active", block, 1)
    return target.typed_view(block.raw, n, dtype, lambda: _release(block))


def _device(device: int | None) -> int:
    return target.current_device_index() if device is None else device


def stats(device: int | None = None) -> dict:
    """torch's ``memory_stats`` counters of ``device`` (None: the current one), flat and sorted
    by name: ``{stat}.{all|small_pool|large_pool}.{current|peak|allocated|freed}`` for
    allocation, segment, active, allocated_bytes, reserved_bytes, active_bytes, requested_bytes,
    plus num_alloc_retries, num_ooms, num_device_alloc, num_device_free."""
    with _lock:
        _drain()
        return dict(sorted(_state(_device(device)).stat.items()))


def allocated(device: int | None = None) -> int:
    """Bytes in live arrays (their blocks' sizes)."""
    return stats(device)["allocated_bytes.all.current"]


def max_allocated(device: int | None = None) -> int:
    return stats(device)["allocated_bytes.all.peak"]


def reserved(device: int | None = None) -> int:
    """Bytes held from the driver: live and cached blocks."""
    return stats(device)["reserved_bytes.all.current"]


def max_reserved(device: int | None = None) -> int:
    return stats(device)["reserved_bytes.all.peak"]


def reset_peak(device: int | None = None) -> None:
    """Sets every peak to its current value (torch's ``reset_peak_memory_stats``)."""
    with _lock:
        _drain()
        st = _state(_device(device)).stat
        for key in st:
            if key.endswith(".peak"):
                st[key] = st[key[:-len("peak")] + "current"]


def empty_cache() -> None:
    """Hands every cached block of every device back to the driver; live arrays keep theirs."""
    with _lock:
        _drain()
        for st in _states.values():
            st.drop_cached()
        target.flush_frees()


def initialized() -> bool:
    """Whether any device array has been allocated here (torch's CUDA state is initialised by
    then)."""
    return bool(_states)
