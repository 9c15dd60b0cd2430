"""CUDA multinomial, randperm, poisson, binomial and _standard_gamma: the simulator suite
(``sim_sampling.py``) in a subprocess, since the simulator must be chosen before
``numba.cuda`` is first imported. The PTX of the kernels is checked by
``test_cuda_ptx_sampling.py``."""

import os

from helpers import run_simulated

SIM = os.path.join(os.path.dirname(__file__), "sim_sampling.py")


def test_cuda_sampling_in_the_simulator():
    run_simulated(SIM)
