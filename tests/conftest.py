"""Fixtures for the whole suite. Plain helpers (``same``, ``raises_like``, ``same_call``) live
in tests/helpers.py: conftest modules cannot be imported by name, so this file puts tests/ on
``sys.path`` and test files anywhere below write ``from helpers import same``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

# No compile workers (compile/workers.py) in the suite: a cold CI run would start one per
# first compiled training call, beside the tests on the same cores. tests/compile/
# test_workers.py turns them on in its own processes.
os.environ.setdefault("JTORCH_COMPILE_WORKERS", "0")

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:  # pytest's default import mode adds it too; importlib mode does not
    sys.path.insert(0, _TESTS)

# The devices tests can run on today: "cpu" runs kernels, "meta" computes shapes, dtypes and
# strides only. CUDA joins when its kernel table lands.
BACKENDS = ("cpu", "meta")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The device string a test runs on; a test that takes this fixture runs once per backend.

    Example::

        def test_add(backend):
            same(jtorch.ones(2, device=backend) + 1, torch.ones(2, device=backend) + 1)
    """
    return request.param
