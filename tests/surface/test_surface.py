"""The surface audit: jtorch's public names against torch 2.13's (``torch_names.json``, written
by ``snapshot.py``). Every torch name jtorch lacks is listed in ``exclusions.py``, excluded with
a reason or missing (still to build); both lists stay exact, so a new gap fails and so does a
listed gap that is now filled (remove it from the list). ``coverage()`` gives the figures
the README quotes: present names over torch's names that are not excluded."""

from __future__ import annotations

import json
import os

import pytest

import jtorch

from .exclusions import EXCLUDED, MISSING
from .snapshot import NAMESPACES, resolve

with open(os.path.join(os.path.dirname(__file__), "torch_names.json")) as _f:
    _SNAPSHOT = json.load(_f)


def _gaps(ns: str) -> list:
    have = set(dir(resolve(jtorch, ns)))
    return [n for n in _SNAPSHOT["names"][ns] if n not in have]


def coverage() -> dict:
    """{namespace: (present, counted)}: counted are torch's names less the excluded ones."""
    out = {}
    for ns in NAMESPACES:
        counted = len(_SNAPSHOT["names"][ns]) - len(EXCLUDED[ns])
        missing = [n for n in _gaps(ns) if n not in EXCLUDED[ns]]
        out[ns] = (counted - len(missing), counted)
    return out


@pytest.mark.parametrize("ns", NAMESPACES)
def test_every_gap_is_listed_with_a_reason(ns):
    gaps = set(_gaps(ns))
    listed = set(EXCLUDED[ns]) | set(MISSING[ns])
    assert not gaps - listed, f"{ns}: torch names jtorch lacks, not listed: {sorted(gaps - listed)}"
    filled = listed - gaps
    assert not filled, f"{ns}: listed as absent but present now (take them off): {sorted(filled)}"
    assert all(EXCLUDED[ns].values()), f"{ns}: an exclusion without a reason"
    assert not set(EXCLUDED[ns]) & set(MISSING[ns])


def test_the_snapshot_is_torch_2_13s():
    assert _SNAPSHOT["torch"].startswith("2.13")
    assert set(_SNAPSHOT["names"]) == set(NAMESPACES)


def test_coverage_figures():
    """The README's figures; printed with ``-s``. Never below these floors."""
    cov = coverage()
    for ns, (present, counted) in cov.items():
        print(f"{ns}: {present}/{counted} = {100 * present / counted:.1f}%")
    floors = {"torch.nn": 0.83, "torch.nn.functional": 0.86, "torch.optim": 0.88,
              "torch.optim.lr_scheduler": 1.0, "torch.nn.init": 0.92, "Tensor": 0.79,
              "torch": 0.58}
    for ns, floor in floors.items():
        present, counted = cov[ns]
        assert present / counted >= floor, ns
