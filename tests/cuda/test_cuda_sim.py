"""CUDA kernels run in Numba's simulator and match jtorch's CPU results. The simulator must
be chosen before ``numba.cuda`` is first imported, so the sweep runs in one subprocess."""

import json
import os
import subprocess
import sys

import pytest

SWEEP = os.path.join(os.path.dirname(__file__), "cuda_sim_sweep.py")
# unary, binary, ternary; promote, int-to-float, compare, logical rules
OPS = ["neg", "exp", "sigmoid", "atan2", "maximum", "lt", "logical_and", "where", "isclose"]


def _sweep(names: list) -> dict:
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    r = subprocess.run([sys.executable, SWEEP, *names], capture_output=True, text=True, env=env,
                       timeout=1800)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_simulator_matches_cpu():
    res = _sweep(OPS)
    assert res["cases"] == 2 * len(OPS) + 8  # float32/float64 per op, 4 reductions x 2
    assert res["failures"] == []


@pytest.mark.slow
def test_simulator_every_pointwise_op():
    from test_cuda_ptx import KNOWN_UNSUPPORTED  # noqa: PLC0415

    res = _sweep([])
    bad = {f["case"].split()[0] for f in res["failures"]}
    assert bad <= set(KNOWN_UNSUPPORTED), res["failures"]
