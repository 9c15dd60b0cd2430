"""CUDA random numbers: the simulator suite (``sim_philox.py``) in a subprocess, since the
simulator must be chosen before ``numba.cuda`` is first imported. The PTX of the kernels is
checked by ``test_cuda_ptx_philox.py``."""

import os

from helpers import run_simulated

SIM = os.path.join(os.path.dirname(__file__), "sim_philox.py")


def test_cuda_random_numbers_in_the_simulator():
    run_simulated(SIM)
