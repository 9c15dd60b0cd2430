"""torch's ``nn/modules/utils.py``: the argument-tuple helpers that layer code (jtorch's and
third parties') imports from here, ``_pair`` and the like, and
``consume_prefix_in_state_dict_if_present`` for loading a (Distributed)DataParallel
checkpoint into a bare model.

>>> from jtorch.nn.modules.utils import _pair
>>> _pair(3), _pair((1, 2))
((3, 3), (1, 2))
"""

from __future__ import annotations

import collections.abc
from itertools import repeat
from typing import Any

__all__ = ["consume_prefix_in_state_dict_if_present"]


def _ntuple(n: int, name: str = "parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))

    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n: int) -> tuple:
    """``t`` reversed with each element repeated ``n`` times: a conv or pooling layer's
    padding as ``F.pad`` takes it ((1, 2), 2 -> (2, 2, 1, 1))."""
    return tuple(x for x in reversed(t) for _ in range(n))


def _list_with_default(out_size, defaults: list) -> list:
    """An adaptive pooling ``output_size`` with its None entries taken from the input's
    trailing sizes ``defaults``."""
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    return [v if v is not None else d for v, d in zip(out_size, defaults[-len(out_size):])]


def consume_prefix_in_state_dict_if_present(state_dict: dict[str, Any], prefix: str) -> None:
    """Strip ``prefix`` from the keys of ``state_dict`` (and of its ``_metadata``) in place:
    ``consume_prefix_in_state_dict_if_present(sd, "module.")`` before ``load_state_dict``
    loads a DataParallel model's checkpoint into the bare model."""
    for key in list(state_dict.keys()):
        if key.startswith(prefix):
            state_dict[key[len(prefix):]] = state_dict.pop(key)
    metadata = getattr(state_dict, "_metadata", None)
    if metadata is None:
        return
    for key in list(metadata.keys()):
        # '' is the wrapper's own entry; 'module' (the prefix without its dot) and
        # 'module.xx' are the model's
        if len(key) == 0:
            continue
        if key == prefix.replace(".", "") or key.startswith(prefix):
            metadata[key[len(prefix):]] = metadata.pop(key)
