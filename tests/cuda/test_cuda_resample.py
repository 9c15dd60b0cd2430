"""CUDA interpolation, padding and grid sampling kernels: the simulator suite
(``sim_resample.py``) in a subprocess, since the simulator must be chosen before
``numba.cuda`` is first imported."""

import os

from helpers import run_simulated

SIM = os.path.join(os.path.dirname(__file__), "sim_resample.py")


def test_cuda_resample_in_the_simulator():
    run_simulated(SIM)
