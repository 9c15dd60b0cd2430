"""jtorch.utils.data against torch.utils.data: datasets and splits, collation of every input
kind, samplers, and the DataLoader in one process and with worker processes (sharding,
seeding, init functions, errors, persistence, timeouts)."""

from __future__ import annotations

import collections
import math
import os
import time
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as TD

import jtorch
import jtorch.utils.data as JD
from jtorch.utils.data._utils import worker as jworker

from helpers import raises_like, same

Point = collections.namedtuple("Point", ["x", "y"])


# -- helpers -----------------------------------------------------------------------------------
def rows(batches) -> list:
    return [b.tolist() if hasattr(b, "tolist") else b for b in batches]


# -- datasets ----------------------------------------------------------------------------------
def test_tensor_dataset():
    ds = JD.TensorDataset(jtorch.arange(6).reshape(3, 2), jtorch.tensor([1.0, 2.0, 3.0]))
    assert len(ds) == 3
    x, y = ds[1]
    assert x.tolist() == [2, 3] and y.item() == 2.0
    raises_like(lambda: JD.TensorDataset(jtorch.zeros(3), jtorch.zeros(4)),
                lambda: TD.TensorDataset(torch.zeros(3), torch.zeros(4)))


class Squares(JD.Dataset):
    def __init__(self, n: int, base: int = 0):
        self.n, self.base = n, base

    def __getitem__(self, i):
        if not 0 <= i < self.n:
            raise IndexError(i)
        return self.base + i * i

    def __len__(self):
        return self.n


class Stream(JD.IterableDataset):
    """``range(start, end)``, sharded over workers when ``shard`` is set."""

    def __init__(self, start: int, end: int, shard: bool = True):
        self.start, self.end, self.shard = start, end, shard

    def __iter__(self):
        info = JD.get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.start, self.end))
        per = math.ceil((self.end - self.start) / info.num_workers)
        lo = self.start + info.id * per
        return iter(range(lo, min(lo + per, self.end)))

    def __len__(self):
        return self.end - self.start


def test_concat_subset_chain_stack():
    a, b = Squares(3), Squares(2, base=100)
    cat = a + b
    assert isinstance(cat, JD.ConcatDataset) and cat.cumulative_sizes == [3, 5]
    assert [cat[i] for i in range(5)] == [0, 1, 4, 100, 101] and cat[-1] == 101
    raises_like(lambda: cat[-6], lambda: TD.ConcatDataset([range(3), range(2)])[-6])
    raises_like(lambda: JD.ConcatDataset([]), lambda: TD.ConcatDataset([]))
    raises_like(lambda: JD.ConcatDataset([Stream(0, 2)]),
                lambda: TD.ConcatDataset([TorchStream(0, 2)]))

    sub = JD.Subset(cat, [4, 0, 2])
    assert len(sub) == 3 and [sub[i] for i in range(3)] == [101, 0, 4]
    assert sub.__getitems__([0, 1]) == [101, 0]

    chain = Stream(0, 2) + Stream(5, 7)
    assert isinstance(chain, JD.ChainDataset) and list(chain) == [0, 1, 5, 6] and len(chain) == 4
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(JD.ChainDataset([Squares(2)]))

    st = JD.StackDataset(a, Squares(3, base=7))
    assert st[2] == (4, 11) and len(st) == 3 and st.__getitems__([0, 1]) == [(0, 7), (1, 8)]
    named = JD.StackDataset(x=a, y=Squares(3, base=7))
    assert named[1] == {"x": 1, "y": 8} and named.__getitems__([2]) == [{"x": 4, "y": 11}]
    for args, kwargs in [((a, b), {}), ((a,), {"y": a}), ((), {})]:
        raises_like(lambda: JD.StackDataset(*args, **kwargs),
                    lambda: TD.StackDataset(*[range(len(d)) for d in args],
                                            **{k: range(len(d)) for k, d in kwargs.items()}))

    class Bad(JD.Subset):
        def __getitem__(self, i):
            return 0

    with pytest.raises(NotImplementedError, match="overrides __getitem__ but not __getitems__"):
        Bad(a, [0])


@pytest.mark.parametrize("n, lengths", [
    (10, [3, 7]), (10, [0.5, 0.5]), (10, [0.3, 0.3, 0.4]), (11, [0.3, 0.3, 0.4]),
    (7, [0.1, 0.2, 0.7]), (5, [1 / 3, 1 / 3, 1 / 3]), (3, [0.25, 0.25, 0.5]),
])
def test_random_split_lengths(n, lengths):
    with warnings.catch_warnings(record=True) as wt:
        warnings.simplefilter("always")
        t = TD.random_split(range(n), lengths, generator=torch.Generator().manual_seed(0))
    with warnings.catch_warnings(record=True) as wj:
        warnings.simplefilter("always")
        j = JD.random_split(range(n), lengths, generator=jtorch.Generator().manual_seed(0))
    assert [len(s) for s in j] == [len(s) for s in t]
    assert [str(w.message) for w in wj] == [str(w.message) for w in wt]
    assert sorted(i for s in j for i in s) == list(range(n))  # a partition of the dataset


def test_random_split_determinism_and_errors():
    def split(seed):
        return [list(s) for s in JD.random_split(range(20), [5, 15],
                                                    generator=jtorch.Generator().manual_seed(seed))]

    assert split(1) == split(1) and split(1) != split(2)
    jtorch.manual_seed(3)
    first = [list(s) for s in JD.random_split(range(20), [0.5, 0.5])]
    jtorch.manual_seed(3)
    assert [list(s) for s in JD.random_split(range(20), [0.5, 0.5])] == first
    raises_like(lambda: JD.random_split(range(5), [2, 2]), lambda: TD.random_split(range(5), [2, 2]))
    raises_like(lambda: JD.random_split(range(5), [1.5, -0.5]),
                lambda: TD.random_split(range(5), [1.5, -0.5]))


# -- collation ---------------------------------------------------------------------------------
def _batches(m):
    """(name, batch) pairs built with module ``m`` (jtorch or torch) for every input kind."""
    return [
        ("tensors", [m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])]),
        ("int tensors 0-d", [m.tensor(1), m.tensor(2)]),
        ("ints", [0, 1, 2]),
        ("floats", [0.5, 1.5]),
        ("bools", [True, False]),
        ("np float32 arrays", [np.ones((2, 2), np.float32), np.zeros((2, 2), np.float32)]),
        ("np int16 arrays", [np.arange(3, dtype=np.int16), np.arange(3, dtype=np.int16)]),
        ("np 0-d array", [np.array(1.5), np.array(2.5)]),
        ("np int32 scalars", [np.int32(1), np.int32(2)]),
        ("np float16 scalars", [np.float16(1), np.float16(2)]),
        ("np float64 scalars", [np.float64(1.5), np.float64(2)]),
        ("np uint8 scalars", [np.uint8(1), np.uint8(200)]),
        ("np bool scalars", [np.bool_(True), np.bool_(False)]),
        ("strings", ["a", "bc"]),
        ("bytes", [b"a", b"b"]),
        ("dicts", [{"x": 1, "y": m.tensor([1]), "s": "a"}, {"x": 2, "y": m.tensor([2]), "s": "b"}]),
        ("ordered dicts", [collections.OrderedDict(b=1.0, a=2), collections.OrderedDict(b=3.0, a=4)]),
        ("namedtuples", [Point(1, 2.0), Point(3, 4.0)]),
        ("namedtuple of tensors", [Point(m.tensor([1]), m.tensor(2.0)), Point(m.tensor([3]), m.tensor(4.0))]),
        ("tuples", [(0, 1.0, "a"), (2, 3.0, "b")]),
        ("lists", [[0, 1], [2, 3]]),
        ("nested", [{"a": [(1, np.float32(2))], "b": {"c": m.ones(2, 3)}},
                    {"a": [(3, np.float32(4))], "b": {"c": m.zeros(2, 3)}}]),
        ("tensor dataset rows", [(m.arange(2), m.tensor(1.0)), (m.arange(2) + 2, m.tensor(2.0))]),
    ]


@pytest.mark.parametrize("k", range(len(_batches(torch))))
def test_default_collate_matches_torch(k):
    name, jb = _batches(jtorch)[k]
    _, tb = _batches(torch)[k]
    same(JD.default_collate(jb), TD.default_collate(tb))


@pytest.mark.parametrize("make", [
    lambda m: [m.zeros(2), m.zeros(3)],  # stack's size error
    lambda m: [[1, 2], [3]],  # ragged sequences
    lambda m: [object(), object()],
    lambda m: [np.array(["a"]), np.array(["b"])],  # string arrays
    lambda m: [m.zeros(2), 1],  # mixed kinds
    lambda m: [{"a": 1}, {"b": 2}],
])
def test_default_collate_errors_match_torch(make):
    raises_like(lambda: JD.default_collate(make(jtorch)), lambda: TD.default_collate(make(torch)))


@pytest.mark.parametrize("make", [
    lambda m: np.arange(3, dtype=np.int32),
    lambda m: np.float32(2.5),
    lambda m: np.array(["a", "b"]),
    lambda m: (np.int64(1), "s", 2),
    lambda m: Point(np.array([1.0]), 3),
    lambda m: {"a": np.ones(2, np.float16), "b": [np.bool_(True)]},
    lambda m: m.tensor([1, 2]),
    lambda m: "text",
    lambda m: 7,
])
def test_default_convert_matches_torch(make):
    same(JD.default_convert(make(jtorch)), TD.default_convert(make(torch)))


def test_worker_seed_state_and_exception_wrapper_match_torch():
    from torch.utils.data._utils.worker import _generate_state

    for base, wid in [(0, 0), (12345678901234, 3), (2**63 - 1, 7)]:
        assert jworker._generate_state(base, wid) == _generate_state(base, wid)
    try:
        {}["missing"]
    except KeyError:
        w = jworker.ExceptionWrapper(where="in DataLoader worker process 0")
    with pytest.raises(KeyError) as e:
        w.reraise()
    assert "Caught KeyError in DataLoader worker process 0.\nOriginal Traceback" in str(e.value)


# -- samplers ----------------------------------------------------------------------------------
def test_sequential_and_random_sampler():
    assert list(JD.SequentialSampler(range(4))) == [0, 1, 2, 3]
    g = jtorch.Generator().manual_seed(0)
    perm = list(JD.RandomSampler(range(10), generator=g))
    assert sorted(perm) == list(range(10))
    assert list(JD.RandomSampler(range(10), generator=jtorch.Generator().manual_seed(0))) == perm
    jtorch.manual_seed(5)
    a = list(JD.RandomSampler(range(10)))
    jtorch.manual_seed(5)
    assert list(JD.RandomSampler(range(10))) == a

    more = list(JD.RandomSampler(range(4), num_samples=10, generator=g))
    assert len(more) == 10 and sorted(more[:4]) == sorted(more[4:8]) == [0, 1, 2, 3]
    rep = list(JD.RandomSampler(range(3), replacement=True, num_samples=70, generator=g))
    assert len(rep) == 70 and set(rep) == {0, 1, 2}
    assert len(JD.RandomSampler(range(3), num_samples=5)) == 5

    for kwargs in [{"replacement": 1}, {"num_samples": 0}, {"num_samples": 2.0}]:
        raises_like(lambda: JD.RandomSampler(range(3), **kwargs),
                    lambda: TD.RandomSampler(range(3), **kwargs))


def test_subset_and_weighted_sampler():
    g = jtorch.Generator().manual_seed(1)
    sub = list(JD.SubsetRandomSampler([10, 20, 30], generator=g))
    assert sorted(sub) == [10, 20, 30]
    assert len(JD.SubsetRandomSampler([1, 2])) == 2

    w = JD.WeightedRandomSampler([0.1, 0.0, 0.3, 0.6], 4000, generator=g)
    counts = np.bincount(list(w), minlength=4) / 4000
    np.testing.assert_allclose(counts, [0.1, 0.0, 0.3, 0.6], atol=0.04)
    assert w.weights.dtype == jtorch.float64 and len(w) == 4000
    drawn = list(JD.WeightedRandomSampler([1, 2, 3, 4, 5], 5, replacement=False, generator=g))
    assert sorted(drawn) == [0, 1, 2, 3, 4]

    for args, kwargs in [(([1.0], 0), {}), (([1.0], True), {}), (([1.0], 2), {"replacement": 0}),
                         (([[1.0, 2.0]], 1), {})]:
        raises_like(lambda: JD.WeightedRandomSampler(*args, **kwargs),
                    lambda: TD.WeightedRandomSampler(*args, **kwargs))


@pytest.mark.parametrize("n, bs, drop", [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False),
                                         (2, 5, True), (0, 2, False)])
def test_batch_sampler_matches_torch(n, bs, drop):
    j = JD.BatchSampler(JD.SequentialSampler(range(n)), bs, drop)
    t = TD.BatchSampler(TD.SequentialSampler(range(n)), bs, drop)
    assert list(j) == list(t) and len(j) == len(t)


def test_batch_sampler_errors():
    for args in [(range(3), 0, False), (range(3), True, False), (range(3), 2, None)]:
        raises_like(lambda: JD.BatchSampler(*args), lambda: TD.BatchSampler(*args))


@pytest.mark.parametrize("n, reps, drop", [(10, 3, False), (10, 3, True), (2, 5, False), (12, 4, True),
                                           (7, 2, False)])
def test_distributed_sampler(n, reps, drop):
    for rank in range(reps):
        j = JD.DistributedSampler(range(n), num_replicas=reps, rank=rank, shuffle=False, drop_last=drop)
        t = TD.DistributedSampler(range(n), num_replicas=reps, rank=rank, shuffle=False, drop_last=drop)
        assert list(j) == list(t) and len(j) == len(t)
    shares = []
    for rank in range(reps):
        s = JD.DistributedSampler(range(n), num_replicas=reps, rank=rank, seed=3, drop_last=drop)
        first = list(s)
        assert list(s) == first  # same epoch, same order
        s.set_epoch(1)
        assert len(list(s)) == len(s)
        shares += first
    if not drop:
        assert set(shares) == set(range(n))
    else:
        assert len(set(shares)) == len(shares)


def test_distributed_sampler_errors():
    raises_like(lambda: JD.DistributedSampler(range(4), num_replicas=2, rank=2),
                lambda: TD.DistributedSampler(range(4), num_replicas=2, rank=2))
    raises_like(lambda: JD.DistributedSampler(range(4)), lambda: TD.DistributedSampler(range(4)))
    s = JD.DistributedSampler(range(8), num_replicas=2, rank=0, seed=0)
    orders = set()
    for epoch in range(4):
        s.set_epoch(epoch)
        orders.add(tuple(s))
    assert len(orders) > 1


# -- DataLoader, one process -------------------------------------------------------------------
@pytest.mark.parametrize("n, bs, drop", [(10, 3, False), (10, 3, True), (4, 4, False), (3, 5, True)])
def test_loader_batches_match_torch(n, bs, drop):
    jx, tx = jtorch.arange(n * 2).reshape(n, 2), torch.arange(n * 2).reshape(n, 2)
    jl = JD.DataLoader(JD.TensorDataset(jx, jx[:, 0] * 1.5), batch_size=bs, drop_last=drop)
    tl = TD.DataLoader(TD.TensorDataset(tx, tx[:, 0] * 1.5), batch_size=bs, drop_last=drop)
    assert len(jl) == len(tl)
    jb, tb = list(jl), list(tl)
    assert len(jb) == len(tb)
    for a, b in zip(jb, tb):
        same(a, b)


def test_loader_shuffle_is_reproducible():
    ds = JD.TensorDataset(jtorch.arange(20))

    def epoch(loader):
        return [x for (b,) in loader for x in b.tolist()]

    jtorch.manual_seed(0)
    a = epoch(JD.DataLoader(ds, batch_size=4, shuffle=True))
    jtorch.manual_seed(0)
    b = epoch(JD.DataLoader(ds, batch_size=4, shuffle=True))
    assert a == b and sorted(a) == list(range(20)) and a != list(range(20))
    g1, g2 = jtorch.Generator().manual_seed(7), jtorch.Generator().manual_seed(7)
    l1, l2 = JD.DataLoader(ds, batch_size=4, shuffle=True, generator=g1), \
        JD.DataLoader(ds, batch_size=4, shuffle=True, generator=g2)
    e1, e2 = epoch(l1), epoch(l2)
    assert e1 == e2 and epoch(l1) != e1  # the next epoch reshuffles
    assert isinstance(l1.sampler, JD.RandomSampler)


def test_loader_without_auto_batching_and_batch_sampler():
    items = [{"a": np.float32(i), "b": (np.arange(2) + i, "s")} for i in range(3)]
    jout = list(JD.DataLoader(items, batch_size=None))
    tout = list(TD.DataLoader(items, batch_size=None))
    for a, b in zip(jout, tout):
        same(a, b)
    bs = [[0, 2], [1]]
    same(list(JD.DataLoader(list(range(10, 13)), batch_sampler=bs)),
         list(TD.DataLoader(list(range(10, 13)), batch_sampler=bs)))
    assert len(JD.DataLoader(range(3), batch_sampler=bs)) == 2
    custom = JD.DataLoader(range(5), batch_size=2, collate_fn=lambda b: sum(b))
    assert list(custom) == [1, 5, 4]
    sampled = JD.DataLoader(range(10, 15), sampler=[4, 0], batch_size=1)
    assert rows(sampled) == [[14], [10]]


def test_loader_iterable_dataset_one_process():
    for kw in [{"batch_size": 3}, {"batch_size": 3, "drop_last": True}, {"batch_size": None}]:
        j = JD.DataLoader(Stream(0, 7), **kw)
        t = TD.DataLoader(TorchStream(0, 7), **kw)
        assert len(j) == len(t)
        same(list(j), list(t))


class TorchStream(TD.IterableDataset):
    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        return iter(range(self.start, self.end))

    def __len__(self):
        return self.end - self.start


@pytest.mark.parametrize("kwargs", [
    {"num_workers": -1}, {"timeout": -1}, {"prefetch_factor": 2}, {"num_workers": 1, "prefetch_factor": -1},
    {"persistent_workers": True}, {"shuffle": True, "sampler": [0, 1]},
    {"batch_sampler": [[0]], "batch_size": 2}, {"batch_sampler": [[0]], "shuffle": True},
    {"batch_sampler": [[0]], "sampler": [0]}, {"batch_sampler": [[0]], "drop_last": True},
    {"batch_size": None, "drop_last": True}, {"multiprocessing_context": "fork"},
    {"num_workers": 1, "multiprocessing_context": "nope"}, {"num_workers": 1, "multiprocessing_context": 3},
])
def test_loader_argument_errors_match_torch(kwargs):
    raises_like(lambda: JD.DataLoader(list(range(4)), **kwargs),
                lambda: TD.DataLoader(list(range(4)), **kwargs))


@pytest.mark.parametrize("kwargs", [{"shuffle": True}, {"sampler": [0]}, {"batch_sampler": [[0]]}])
def test_loader_iterable_dataset_errors_match_torch(kwargs):
    with pytest.raises(ValueError) as et:
        TD.DataLoader(TorchStream(0, 2), **kwargs)
    with pytest.raises(ValueError) as ej:
        JD.DataLoader(Stream(0, 2), **kwargs)
    assert str(ej.value).split(" option")[0] == str(et.value).split(" option")[0]


def test_loader_frozen_attributes_and_pin_memory():
    loader = JD.DataLoader(range(3))
    with pytest.raises(ValueError, match="batch_size attribute should not be set after DataLoader is"):
        loader.batch_size = 2
    with pytest.warns(UserWarning, match="pin_memory"):
        assert rows(JD.DataLoader(range(3), batch_size=2, pin_memory=True)) == [[0, 1], [2]]


# -- DataLoader, worker processes --------------------------------------------------------------
class PidDataset(JD.Dataset):
    """Sample ``i`` is ``(i, pid, worker id, worker seed, init mark)``."""

    def __init__(self, n: int, fail_at: int | None = None, sleep: float = 0.0):
        self.n, self.fail_at, self.sleep, self.mark = n, fail_at, sleep, -1

    def __getitem__(self, i):
        if i == self.fail_at:
            raise ValueError(f"bad sample {i}")
        if self.sleep:
            time.sleep(self.sleep)
        info = JD.get_worker_info()
        return i, os.getpid(), info.id, info.seed, info.dataset.mark

    def __len__(self):
        return self.n


def _mark_init(worker_id: int) -> None:
    JD.get_worker_info().dataset.mark = 100 + worker_id


def test_workers_are_processes_in_order_with_seeds_and_init_fn():
    g = jtorch.Generator().manual_seed(11)
    loader = JD.DataLoader(PidDataset(9), batch_size=2, num_workers=2, worker_init_fn=_mark_init, generator=g)
    idx, pids, wids, seeds, marks = (sum((b.tolist() for b in col), []) for col in zip(*loader))
    assert idx == list(range(9))  # in the sampler's order
    assert os.getpid() not in pids and len(set(pids)) == 2
    assert wids == [0, 0, 1, 1, 0, 0, 1, 1, 0]  # round-robin over the two workers
    assert marks == [100 + w for w in wids]
    base = seeds[0]
    assert all(s == base + w for s, w in zip(seeds, wids))
    g2 = jtorch.Generator().manual_seed(11)
    again = next(iter(JD.DataLoader(PidDataset(2), batch_size=2, num_workers=2, generator=g2)))
    assert again[3].tolist() == [base, base]  # the base seed comes from the generator
    assert JD.get_worker_info() is None


def test_workers_shuffle_matches_one_process():
    ds = JD.TensorDataset(jtorch.arange(12))
    jtorch.manual_seed(4)
    one = rows(b for (b,) in JD.DataLoader(ds, batch_size=5, shuffle=True))
    jtorch.manual_seed(4)
    two = rows(b for (b,) in JD.DataLoader(ds, batch_size=5, shuffle=True, num_workers=2))
    assert one == two


def test_iterable_dataset_with_workers():
    sharded = sorted(x for b in JD.DataLoader(Stream(3, 14), batch_size=2, num_workers=2) for x in b.tolist())
    assert sharded == list(range(3, 14))  # no duplicates across workers
    unsharded = sorted(x.item() for x in JD.DataLoader(Stream(0, 3, shard=False), num_workers=2))
    assert unsharded == [0, 0, 1, 1, 2, 2]  # each worker iterates its own full copy
    dropped = list(JD.DataLoader(Stream(0, 7), batch_size=2, drop_last=True, num_workers=2))
    assert all(len(b) == 2 for b in dropped) and len(dropped) == 3  # shards of 4 and 3


def test_worker_exception_is_reraised_with_its_traceback():
    it = iter(JD.DataLoader(PidDataset(6, fail_at=3), batch_size=2, num_workers=2))
    assert next(it)[0].tolist() == [0, 1]
    with pytest.raises(ValueError) as e:
        next(it)
    msg = str(e.value)
    assert msg.startswith("Caught ValueError in DataLoader worker process 1.\nOriginal Traceback")
    assert "bad sample 3" in msg and "__getitem__" in msg
    it._shutdown_workers()
    assert not any(w.is_alive() for w in it._workers)


def _failing_init(worker_id: int) -> None:
    raise RuntimeError(f"init failed in {worker_id}")


def test_worker_init_fn_exception():
    with pytest.raises(RuntimeError, match="Caught RuntimeError in DataLoader worker process 0"):
        list(JD.DataLoader(range(4), num_workers=1, worker_init_fn=_failing_init))


def test_persistent_workers_two_epochs():
    loader = JD.DataLoader(PidDataset(5), batch_size=2, num_workers=2, persistent_workers=True)
    epochs = [[(b[0].tolist(), b[1].tolist()) for b in loader] for _ in range(2)]
    assert [sum((i for i, _ in e), []) for e in epochs] == [list(range(5))] * 2
    pids = [{p for _, ps in e for p in ps} for e in epochs]
    assert pids[0] == pids[1] and len(pids[0]) == 2  # the same processes served both epochs
    it = loader._iterator
    assert all(w.is_alive() for w in it._workers)
    stream = JD.DataLoader(Stream(0, 5), batch_size=2, num_workers=2, persistent_workers=True)
    assert [sorted(x for b in stream for x in b.tolist()) for _ in range(2)] == [list(range(5))] * 2
    it._shutdown_workers()
    stream._iterator._shutdown_workers()
    assert not any(w.is_alive() for w in it._workers)


def test_timeout_and_prefetch_factor():
    loader = JD.DataLoader(PidDataset(2, sleep=1.0), num_workers=1, timeout=0.2)
    with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.2 seconds"):
        next(iter(loader))
    it = iter(JD.DataLoader(range(10), num_workers=2, prefetch_factor=1))
    assert it._send_idx == 2  # prefetch_factor * num_workers tasks in flight
    assert rows(it) == [[i] for i in range(10)]


def test_workers_run_large_kernels_after_parent_used_parallel_ones():
    (jtorch.ones(200_000) * 2).sum()  # parallel kernels in the parent before the fork
    ds = JD.TensorDataset(jtorch.ones(4, 50_000))
    loader = JD.DataLoader(ds, batch_size=2, num_workers=2,
                           collate_fn=lambda b: (JD.default_collate(b)[0] * 3,))  # 100k-element kernels
    total = sum(b.sum().item() for (b,) in loader)
    assert total == 4 * 50_000 * 3


# -- collation in one stack kernel -------------------------------------------------------------
def _many(m, kind):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 20)).astype(np.float32)
    if kind == "rows and labels":  # a TensorDataset's samples
        tx, ty = m.from_numpy(x), m.from_numpy(np.arange(64) % 10)
        return [(tx[i], ty[i]) for i in range(64)]
    if kind == "transposed tensors":
        return [m.from_numpy(rng.standard_normal((3, 4))).t() for _ in range(64)]
    if kind == "mixed dtype tensors":
        return [m.ones(2, dtype=m.float32), m.ones(2, dtype=m.float64), m.ones(2, dtype=m.int64)]
    if kind == "numpy arrays":
        return [(x[i], i, 0.5 * i) for i in range(64)]
    if kind == "numpy images":
        return [rng.standard_normal((3, 8, 8)).astype(np.float32) for _ in range(64)]
    if kind == "numpy strided":
        return [x[i, ::2] for i in range(64)] + [x[0, 1::2]]
    if kind == "numpy 0-d":
        return [np.array(i, np.int16) for i in range(64)]
    if kind == "numpy mixed dtypes":
        return [np.ones(2, np.float32), np.ones(2, np.float64), np.ones(2, np.int32)]
    if kind == "numpy float16 and bool":
        return [{"h": np.full(3, i, np.float16), "b": np.arange(3) > i} for i in range(5)]
    if kind == "numpy empty":
        return [np.zeros((2, 0), np.float32)] * 3
    return [[i, 2 * i, 0.5] for i in range(64)]  # python sequences


@pytest.mark.parametrize("kind", ["rows and labels", "transposed tensors", "mixed dtype tensors",
                                  "numpy arrays", "numpy images", "numpy strided", "numpy 0-d",
                                  "numpy mixed dtypes", "numpy float16 and bool", "numpy empty",
                                  "sequences"])
def test_default_collate_of_many_samples_matches_torch(kind):
    got, want = JD.default_collate(_many(jtorch, kind)), TD.default_collate(_many(torch, kind))
    same(got, want, strides=True)


def test_default_collate_numpy_errors_and_copies():
    raises_like(lambda: JD.default_collate([np.zeros(2), np.zeros(3)]),
                lambda: TD.default_collate([np.zeros(2), np.zeros(3)]))
    a = np.zeros(3, np.float32)
    batch = JD.default_collate([a, a])
    batch[0, 0] = 1.0  # a fresh tensor: the samples are untouched
    assert a[0] == 0.0


def test_tensor_dataset_loader_epoch_matches_torch():
    """A shuffled epoch over a TensorDataset gives torch's batches for the same order."""
    x = np.random.default_rng(0).standard_normal((1000, 20)).astype(np.float32)
    y = np.arange(1000) % 7
    order = list(np.random.default_rng(1).permutation(1000))
    jl = JD.DataLoader(JD.TensorDataset(jtorch.from_numpy(x), jtorch.from_numpy(y)),
                       batch_size=64, sampler=order)
    tl = TD.DataLoader(TD.TensorDataset(torch.from_numpy(x), torch.from_numpy(y)),
                       batch_size=64, sampler=order)
    jb, tb = list(jl), list(tl)
    assert len(jb) == len(tb) == 16
    for j, t in zip(jb, tb):
        same(j, t, strides=True)
    shuffled = JD.DataLoader(JD.TensorDataset(jtorch.from_numpy(x)), batch_size=64, shuffle=True)
    seen = jtorch.cat([b for (b,) in shuffled])
    assert sorted(seen[:, 0].tolist()) == sorted(x[:, 0].tolist())
