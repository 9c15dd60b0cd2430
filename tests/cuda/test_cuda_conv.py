"""CUDA convolution and pooling kernels: the simulator suite (``sim_conv.py``) in a subprocess,
since the simulator must be chosen before ``numba.cuda`` is first imported."""

import os

from helpers import run_simulated

SIM = os.path.join(os.path.dirname(__file__), "sim_conv.py")


def test_cuda_conv_in_the_simulator():
    run_simulated(SIM)
