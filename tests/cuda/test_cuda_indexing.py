"""The CUDA kernels of indexing, scatter/gather and nll_loss: the simulator suite
(``sim_indexing.py``) in a subprocess, since the simulator must be chosen before
``numba.cuda`` is first imported."""

import os

from helpers import run_simulated

SIM = os.path.join(os.path.dirname(__file__), "sim_indexing.py")


def test_cuda_indexing_in_the_simulator():
    run_simulated(SIM)
