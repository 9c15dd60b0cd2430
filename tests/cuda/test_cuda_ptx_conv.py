"""Every convolution and pooling kernel compiles to PTX for sm_90 (no GPU needed: the CUDA
toolkit's NVVM does it), for each dtype its entries launch it with: typing the simulator lets
through fails here."""

import os

import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM"):
    pytest.skip("PTX needs the real CUDA target, not the simulator", allow_module_level=True)

from jtorch.kernels.cuda import conv, pooling, target

INTEGER_KERNELS = ((pooling, "max_pool"), (pooling, "unpool"))  # (they also take integers)
CASES = [(mod, name, dt) for mod in (conv, pooling) for dt in ("float32", "float64")
         for name in mod.KERNELS] + \
        [(mod, name, dt) for mod, name in INTEGER_KERNELS for dt in ("int64", "int32", "uint8")]


@pytest.mark.parametrize(("mod", "name", "dtype"), CASES,
                         ids=[f"{m.__name__.rsplit('.', 1)[1]}.{n}-{d}" for m, n, d in CASES])
def test_kernel_compiles_to_ptx(mod, name, dtype):
    ptx = target.compile_ptx(mod.KERNELS[name], mod.signatures(dtype)[name], cc=(9, 0))
    assert ".target sm_90" in ptx and ".entry" in ptx
