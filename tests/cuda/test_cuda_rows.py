"""Row-wise CUDA ops (reductions with indices, statistics, layer norm, scans, sorts): the
simulator suite (``sim_rows.py``) in a subprocess, since the simulator must be chosen before
``numba.cuda`` is first imported."""

import os

from helpers import run_simulated

SIM = os.path.join(os.path.dirname(__file__), "sim_rows.py")


def test_row_ops_in_the_simulator():
    run_simulated(SIM)
