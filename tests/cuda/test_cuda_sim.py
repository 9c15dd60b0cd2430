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
# ops whose scalar functions call what CUDA does not lower (np.floor, np.trunc, np.rint, np.fmod,
# np.signbit, np.nextafter, np.sqrt in fastmath's hypot, the builtin max/min): their CUDA
# kernels call copies with CUDA twins
TWIN_OPS = ["floor", "ceil", "trunc", "round", "frac", "div_trunc", "fmod", "remainder", "floor_divide",
            "signbit", "nextafter", "hypot", "logaddexp", "logaddexp2", "hardsigmoid", "hardswish",
            "hardtanh", "digamma", "polygamma"]


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


def test_simulator_twin_ops_match_cpu_on_edge_values():
    """Every op whose CUDA scalar has CUDA twins (``cuda.scalars``: np.floor, np.fmod,
    np.signbit, builtin max, ...), on random and edge values (nan, -nan, inf, -0.0, halfway
    points, subnormals, poles), bit for bit."""
    res = _sweep(["--twins"])
    assert set(TWIN_OPS) <= set(res["ops"]), res["ops"]
    assert res["edge_cases"] == 2 * len(res["ops"])
    assert res["failures"] == []


@pytest.mark.slow
def test_simulator_every_pointwise_op():
    res = _sweep([])
    assert res["failures"] == []
    assert res["edge_cases"] >= 2 * len(TWIN_OPS)
