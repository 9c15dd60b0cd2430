"""Every resampling kernel compiles to PTX for sm_90 (no GPU needed: the CUDA toolkit's NVVM
does it), for each dtype its entries launch it with: typing the simulator lets through fails
here. No kernel holds a fused multiply-add: the CPU kernels round every product, and the
results are meant to be theirs bit for bit."""

import os

import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM"):
    pytest.skip("PTX needs the real CUDA target, not the simulator", allow_module_level=True)

from jtorch.kernels.cuda import resample, target

DTYPES = ("float32", "float64", "float16", "uint8", "uint16", "uint32", "uint64")
CASES = [(name, dt) for dt in DTYPES for name in resample.signatures(dt)]


@pytest.mark.parametrize(("name", "dtype"), CASES, ids=[f"{n}-{d}" for n, d in CASES])
def test_kernel_compiles_to_ptx(name, dtype):
    ptx = target.compile_ptx(resample.KERNELS[name], resample.signatures(dtype)[name], cc=(9, 0))
    assert ".target sm_90" in ptx and ".entry" in ptx
    assert "fma.rn" not in ptx


def test_every_kernel_is_covered():
    assert {n for n, _ in CASES} == set(resample.KERNELS)
