"""Datasets: the map-style ``Dataset`` and stream-style ``IterableDataset`` protocols and
the wrappers torch builds on them (tensors, subsets, concatenation, chaining, stacking),
plus ``random_split``.

>>> ds = TensorDataset(jtorch.arange(4), jtorch.arange(4) * 10)
>>> ds[1]
(tensor(1), tensor(10))
"""

from __future__ import annotations

import bisect
import itertools
import math
import warnings
from collections.abc import Iterable, Sequence
from typing import Generic, TypeVar

from ...random import default_generator
from ...tensor import Tensor

__all__ = [
    "Dataset",
    "IterableDataset",
    "TensorDataset",
    "StackDataset",
    "ConcatDataset",
    "ChainDataset",
    "Subset",
    "random_split",
]

_T_co = TypeVar("_T_co", covariant=True)


class Dataset(Generic[_T_co]):
    """A map from keys to samples: subclasses define ``__getitem__`` (and usually
    ``__len__``, which samplers and ``len(DataLoader)`` rely on). An optional
    ``__getitems__(indices)`` returns a whole batch at once."""

    def __getitem__(self, index) -> _T_co:
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: Dataset[_T_co]) -> ConcatDataset[_T_co]:
        return ConcatDataset([self, other])


class IterableDataset(Dataset[_T_co], Iterable[_T_co]):
    """A stream of samples: subclasses define ``__iter__``. With ``num_workers > 0`` every
    worker iterates its own copy, so shard the stream with ``get_worker_info()`` (in
    ``__iter__`` or in ``worker_init_fn``) to avoid duplicates."""

    def __add__(self, other: Dataset[_T_co]):
        return ChainDataset([self, other])


class TensorDataset(Dataset[tuple[Tensor, ...]]):
    """Samples are the rows of ``tensors`` along their first dimension."""

    tensors: tuple[Tensor, ...]

    def __init__(self, *tensors: Tensor) -> None:
        if any(tensors[0].size(0) != tensor.size(0) for tensor in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple([tensor[index] for tensor in self.tensors])  # (a list: no generator frame)

    def __len__(self) -> int:
        return self.tensors[0].size(0)


def _check_lengths(datasets) -> int:
    n = len(datasets[0])
    if any(n != len(d) for d in datasets):
        raise ValueError("Size mismatch between datasets")
    return n


class StackDataset(Dataset):
    """Samples are tuples (``*args``) or dicts (``**kwargs``) of the datasets' samples."""

    datasets: tuple | dict

    def __init__(self, *args: Dataset, **kwargs: Dataset) -> None:
        if args and kwargs:
            raise ValueError(
                "Supported either ``tuple``- (via ``args``) or"
                "``dict``- (via ``kwargs``) like input/output, but both types are given."
            )
        if not args and not kwargs:
            raise ValueError("At least one dataset should be passed")
        self._length = _check_lengths(list(args or kwargs.values()))
        self.datasets = args or kwargs

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __getitems__(self, indices: list):
        named = isinstance(self.datasets, dict)
        items = self.datasets.items() if named else enumerate(self.datasets)
        columns = {k: _batch_of(d, indices) for k, d in items}
        if named:
            return [{k: col[i] for k, col in columns.items()} for i in range(len(indices))]
        return [tuple(col[i] for col in columns.values()) for i in range(len(indices))]

    def __len__(self) -> int:
        return self._length


def _batch_of(dataset, indices: list) -> list:
    if not callable(getattr(dataset, "__getitems__", None)):
        return [dataset[i] for i in indices]
    items = dataset.__getitems__(indices)
    if len(items) != len(indices):
        raise ValueError(
            f"Nested dataset's output size mismatch. Expected {len(indices)}, got {len(items)}"
        )
    return items


class ConcatDataset(Dataset[_T_co]):
    """The datasets one after another; ``cumulative_sizes[i]`` is where dataset ``i`` ends."""

    datasets: list[Dataset[_T_co]]
    cumulative_sizes: list[int]

    @staticmethod
    def cumsum(sequence) -> list[int]:
        return list(itertools.accumulate(len(e) for e in sequence))

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = list(datasets)
        if len(self.datasets) == 0:
            raise AssertionError("datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise AssertionError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = self.cumsum(self.datasets)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, idx):
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        dataset_idx = bisect.bisect_right(self.cumulative_sizes, idx)
        start = self.cumulative_sizes[dataset_idx - 1] if dataset_idx > 0 else 0
        return self.datasets[dataset_idx][idx - start]

    @property
    def cummulative_sizes(self) -> list[int]:
        warnings.warn("`cummulative_sizes` attribute is renamed to `cumulative_sizes`",
                      FutureWarning, stacklevel=2)
        return self.cumulative_sizes


class ChainDataset(IterableDataset):
    """The streams one after another, chained lazily."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        super().__init__()
        self.datasets = datasets

    def __iter__(self):
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            yield from d

    def __len__(self) -> int:
        total = 0
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise AssertionError("ChainDataset only supports IterableDataset")
            total += len(d)
        return total


class Subset(Dataset[_T_co]):
    """``dataset`` seen through ``indices``. A subclass that overrides ``__getitem__`` must
    override ``__getitems__`` too (the DataLoader calls the latter)."""

    dataset: Dataset[_T_co]
    indices: Sequence[int]

    def __init__(self, dataset: Dataset[_T_co], indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices
        cls = type(self)
        if cls.__getitem__ is not Subset.__getitem__ and cls.__getitems__ is Subset.__getitems__:
            raise NotImplementedError(
                f"{cls.__name__} overrides __getitem__ but not __getitems__. "
                "When subclassing Subset and overriding __getitem__, you must also override "
                "__getitems__ to ensure DataLoader works correctly with your custom logic. "
                "A simple implementation:\n\n"
                "def __getitems__(self, indices):\n"
                "    return [self.__getitem__(idx) for idx in indices]"
            )

    def __getitem__(self, idx):
        if isinstance(idx, list):
            return self.dataset[[self.indices[i] for i in idx]]
        return self.dataset[self.indices[idx]]

    def __getitems__(self, indices: list[int]) -> list:
        outer = [self.indices[i] for i in indices]
        if callable(getattr(self.dataset, "__getitems__", None)):
            return self.dataset.__getitems__(outer)
        return [self.dataset[i] for i in outer]

    def __len__(self) -> int:
        return len(self.indices)


def _fraction_lengths(n: int, fractions: Sequence[float]) -> list[int]:
    """torch's rule: floor(n * frac) each, then the remainder one by one, round-robin from
    the first split."""
    lengths = []
    for i, frac in enumerate(fractions):
        if frac < 0 or frac > 1:
            raise ValueError(f"Fraction at index {i} is not between 0 and 1")
        lengths.append(math.floor(n * frac))
    for i in range(n - sum(lengths)):
        lengths[i % len(lengths)] += 1
    for i, length in enumerate(lengths):
        if length == 0:
            warnings.warn(f"Length of split at index {i} is 0. This might result in an empty dataset.",
                          stacklevel=3)
    return lengths


def random_split(dataset: Dataset, lengths: Sequence[int | float],
                 generator=default_generator) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random subsets of the given lengths, or of
    fractions summing to 1 (floors, then the remainder one per split from the first).
    The permutation comes from ``jtorch.randperm``: reproducible under a seed, though not
    the same permutation as torch's (the random streams differ).

    >>> [len(s) for s in random_split(range(10), [0.5, 0.3, 0.2])]
    [5, 3, 2]
    """
    from ...ops.random import randperm

    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        lengths = _fraction_lengths(len(dataset), lengths)
    if sum(lengths) != len(dataset):
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    indices = randperm(sum(lengths), generator=generator).tolist()
    return [Subset(dataset, indices[end - n:end])
            for end, n in zip(itertools.accumulate(lengths), lengths)]
