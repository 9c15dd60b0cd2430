"""Every CUDA random kernel (``kernels/cuda/philox.py``) compiles to PTX for sm_90 for each
dtype its ops store (no GPU needed: the CUDA toolkit's NVVM does it). PTX compilation types
the uint64 Philox arithmetic as the device runs it, which the simulator does not check."""

import os

import pytest

DTYPES = ["float16", "float32", "float64", "int64", "int32", "int16", "int8", "uint8", "bool"]
_KEY = "uint64, uint64, uint64, uint64"
_GEO = "int64[:, ::1]"


def _nb(dt: str) -> str:
    return "boolean" if dt == "bool" else dt


def _signature(kernel: str, out: str, p: str = "float32") -> str:
    o = f"{_nb(out)}[::1]"
    return {
        "fill_float": f"void({_GEO}, {o}, int64, int64, {_KEY}, int64, float64, float64, float64, "
                      "boolean)",
        "fill_int": f"void({_GEO}, {o}, int64, int64, {_KEY}, uint64, int64, int64, boolean)",
        "fill_bernoulli": f"void({_GEO}, {o}, int64, int64, {p}[::1], int64, {_KEY}, boolean)",
        "outside": f"void({_GEO}, {o}, int64, int64, float64, float64, int32[::1])",
    }[kernel]


def _ptx(kernel: str, sig: str) -> str:
    if os.environ.get("NUMBA_ENABLE_CUDASIM"):
        pytest.skip("PTX needs the real CUDA target, not the simulator")
    from jtorch.kernels.cuda import philox, target

    ptx = target.compile_ptx(philox.KERNELS[kernel], sig, cc=(9, 0))
    assert ".target sm_90" in ptx and ".entry" in ptx
    return ptx


def test_every_kernel_is_listed():
    from jtorch.kernels.cuda import philox

    assert set(philox.KERNELS) == {"fill_float", "fill_int", "fill_bernoulli", "outside"}


@pytest.mark.parametrize("out", DTYPES)
@pytest.mark.parametrize("kernel", ["fill_float", "fill_int", "outside"])
def test_kernel_ptx(kernel, out):
    ptx = _ptx(kernel, _signature(kernel, out))
    if kernel == "fill_int" and out not in ("float32", "float64"):
        assert ".f64" not in ptx  # integer ranges stay integer arithmetic


@pytest.mark.parametrize("p", ["float16", "float32", "float64"])
@pytest.mark.parametrize("out", DTYPES)
def test_bernoulli_ptx(out, p):
    _ptx("fill_bernoulli", _signature("fill_bernoulli", out, p))
