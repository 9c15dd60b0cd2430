"""torch.nn.utils.rnn: packed variable-length batches for the recurrent layers.

A ``PackedSequence`` holds the time steps of a batch sorted by decreasing length, step after
step: ``data`` is (sum(lengths), *) and ``batch_sizes[t]`` says how many sequences are still
running at step t. Packing and padding are one ``index_select`` / ``index_copy`` over the
flattened (time, batch) rows whose indices come from ``arange(T)[:, None] < lengths``, so
autograd follows them with the ordinary rules.

>>> import jtorch
>>> from jtorch.nn.utils.rnn import pack_sequence, pad_packed_sequence
>>> p = pack_sequence([jtorch.tensor([1, 2, 3]), jtorch.tensor([4])])
>>> p.data, p.batch_sizes
(tensor([1, 4, 2, 3]), tensor([2, 1, 1]))
>>> pad_packed_sequence(p, batch_first=True)
(tensor([[1, 2, 3],
        [4, 0, 0]]), tensor([3, 1]))
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from ... import dtypes as _dt
from ...tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence",
           "pad_sequence", "unpad_sequence", "pack_sequence", "unpack_sequence"]


def _J():
    import jtorch

    return jtorch


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _bind(optional, fn):
    return None if optional is None else fn(optional)


class PackedSequence(PackedSequence_):
    """The data and ``batch_sizes`` of a packed batch (made by ``pack_padded_sequence`` or
    ``pack_sequence``); ``sorted_indices`` maps the packed order to the caller's batch."""

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            if not (isinstance(data, (list, tuple)) and len(data) == 2):
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        elif batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never be "
                "created manually. They should be instantiated by functions like pack_sequence "
                "and pack_padded_sequences in nn.utils.rnn. "
                "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """``data.to(...)``; the indices follow data's device. ``self`` when nothing changes."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = lambda t: t.to(data.device)  # noqa: E731
        return type(self)(data, self.batch_sizes, _bind(self.sorted_indices, move),
                          _bind(self.unsorted_indices, move))

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to(*args, **{"device": "cuda", **kwargs})

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to(*args, **{"device": "cpu", **kwargs})

    def pin_memory(self) -> PackedSequence:
        return self

    def double(self) -> PackedSequence:
        return self.to(dtype=_dt.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=_dt.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=_dt.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=_dt.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=_dt.int32)

    def short(self) -> PackedSequence:
        return self.to(dtype=_dt.int16)

    def char(self) -> PackedSequence:
        return self.to(dtype=_dt.int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=_dt.uint8)

    @property
    def is_cuda(self) -> bool:
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The permutation q with q[p[i]] = i."""
    if permutation is None:
        return None
    J = _J()
    return J.empty_like(permutation).scatter_(0, permutation, J.arange(permutation.numel()))


def _steps(lengths: Tensor, steps: int) -> Tensor:
    """(steps, B) bool: sequence b is running at step t."""
    return _J().arange(steps)[:, None] < lengths[None, :]


def _check_lengths(input: Tensor, lengths: Tensor, batch_first: bool) -> None:
    """torch's checks in _pack_padded_sequence, in its order."""
    if lengths.dim() != 1:
        raise RuntimeError(f"'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.dim()}D cpu Long tensor")
    batch = input.size(0 if batch_first else 1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    if lengths.shape[0] != batch:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got "
                           f"{lengths.shape[0]} (batch_size={batch})")
    if int(lengths[-1]) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element "
                           "in 'lengths' that is <= 0")
    if bool((lengths[1:] > lengths[:-1]).any()):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
            "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to "
            "sidestep this requirement if you do not need ONNX exportability.")
    steps = input.size(1 if batch_first else 0)
    if int(lengths[0]) > steps:  # torch reads past the input here
        raise RuntimeError(f"Expected all lengths to be at most the padded length {steps}, but "
                           f"got {int(lengths[0])}")


def pack_padded_sequence(input: Tensor, lengths: Tensor | list[int], batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded (T, B, *) batch (``batch_first``: (B, T, *)) of the given lengths.

    >>> import jtorch
    >>> x = jtorch.tensor([[1, 2, 3], [4, 0, 0]])
    >>> jtorch.nn.utils.rnn.pack_padded_sequence(x, [3, 1], batch_first=True).data
    tensor([1, 4, 2, 3])
    """
    J = _J()
    if isinstance(lengths, Tensor):
        lengths = lengths.to(dtype=_dt.int64)
    else:
        lengths = J.as_tensor(lengths, dtype=_dt.int64)
    sorted_indices = None
    if not enforce_sorted:
        lengths, sorted_indices = J.sort(lengths, descending=True)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    _check_lengths(input, lengths, batch_first)
    steps, batch = input.shape[1], input.shape[0]
    if not batch_first:
        steps, batch = batch, steps
    running = _steps(lengths, int(lengths[0]))
    t, b = running.nonzero(as_tuple=True)
    rows = b * steps + t if batch_first else t * batch + b
    data = input.reshape(steps * batch, *input.shape[2:]).index_select(0, rows)
    return PackedSequence(data, running.sum(1), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The inverse of ``pack_padded_sequence``: (padded batch, lengths) in the caller's order."""
    J = _J()
    data, batch_sizes = sequence.data, sequence.batch_sizes
    steps = batch_sizes.shape[0]
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
        steps = total_length
    batch = int(batch_sizes[0])
    running = J.arange(batch)[None, :] < batch_sizes[:, None]
    t, b = running.nonzero(as_tuple=True)
    flat = J.full((steps * batch, *data.shape[1:]), padding_value, dtype=data.dtype,
                  device=data.device)
    out = flat.index_copy(0, t * batch + b, data).reshape(steps, batch, *data.shape[1:])
    lengths = running.sum(0)
    if batch_first:
        out = out.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        return (out.index_select(0 if batch_first else 1, sequence.unsorted_indices),
                lengths[sequence.unsorted_indices])
    return out, lengths


def pad_sequence(sequences: Tensor | list[Tensor], batch_first: bool = False,
                 padding_value: float = 0.0, padding_side: str = "right") -> Tensor:
    """Stack sequences of lengths L_i (each (L_i, *)) into (max L, B, *), padding the rest.

    >>> import jtorch
    >>> jtorch.nn.utils.rnn.pad_sequence([jtorch.tensor([1, 2]), jtorch.tensor([3])], True)
    tensor([[1, 2],
            [3, 0]])
    """
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of "
                           f"type: {type(sequences)}")
    sequences = tuple(sequences)
    if not sequences:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    first = sequences[0]
    if first.dim() == 0:
        raise RuntimeError("ArrayRef: invalid slice, N = 1; size = 0")
    longest = max(s.shape[0] for s in sequences)
    shape = (len(sequences), longest) if batch_first else (longest, len(sequences))
    out = _J().full(shape + tuple(first.shape[1:]), padding_value, dtype=first.dtype,
                    device=first.device)
    for i, s in enumerate(sequences):
        n = s.shape[0]
        steps = slice(0, n) if padding_side == "right" else slice(longest - n, longest)
        (out[i, steps] if batch_first else out[steps, i]).copy_(s)
    return out


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor,
                   batch_first: bool = False) -> list[Tensor]:
    """The sequences of a padded batch, each cut to its length (torch also transposes the
    caller's tensor in place when not ``batch_first``; this leaves it as it is)."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    idx = _J().arange(padded_sequences.shape[1])
    return [seq[idx < length] for seq, length in zip(padded_sequences, lengths, strict=True)]


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of (L_i, *) sequences (sorted by decreasing length unless not
    ``enforce_sorted``)."""
    lengths = _J().as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a ``PackedSequence`` was packed from."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
