"""CUDA autocast and loss scaling: ``sim_amp.py`` under the simulator; without a device (this
process), torch's warnings and disabled regions."""

import os
import warnings

import pytest
from helpers import run_simulated

import jtorch

SIM = os.path.join(os.path.dirname(__file__), "sim_amp.py")


def test_cuda_autocast_in_the_simulator():
    run_simulated(SIM)


def test_without_cuda_autocast_and_scaler_disable_themselves():
    if jtorch.cuda.is_available():
        pytest.skip("a CUDA target answers here")
    assert not jtorch.amp.is_autocast_available("cuda")
    with pytest.warns(UserWarning, match="CUDA is not available"):
        ac = jtorch.autocast("cuda")
    x = jtorch.ones(2, 2)
    with ac:
        assert (x @ x).dtype == jtorch.float32
    with pytest.warns(UserWarning, match="GradScaler is enabled, but CUDA is not available"):
        assert not jtorch.amp.GradScaler("cuda").is_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert jtorch.amp.GradScaler("cpu").is_enabled()
