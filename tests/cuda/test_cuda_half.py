"""float16 on CUDA: loaded and stored natively, computed in float32 as the CPU path computes it
(``sim_half.py`` in the simulator, bitwise against CPU), and the kernels that do it compile to
sm_90 PTX with the half conversions in them."""

import os

import pytest
from helpers import run_simulated

from jtorch.kernels import registry

SIM = os.path.join(os.path.dirname(__file__), "sim_half.py")


def test_float16_in_the_simulator():
    run_simulated(SIM)


def _target():
    if os.environ.get("NUMBA_ENABLE_CUDASIM"):
        pytest.skip("PTX needs the real CUDA target, not the simulator")
    from jtorch.kernels.cuda import target

    return target


@pytest.mark.parametrize("name", ["exp", "add", "mul", "lt", "where", "clamp", "copy"])
def test_half_pointwise_ptx(name):
    import jtorch  # noqa: F401
    from jtorch.kernels.cuda import pointwise

    target = _target()
    op = registry.get(name)
    arity = op.scalar.__code__.co_argcount
    out = "bool" if op.dtype_rule == registry.COMPARE else "float16"
    mod = pointwise.module(op, arity, "float32", out)
    for which, sig in pointwise.signatures(arity, "float32", out, ins="float16",
                                           nparams=op.nparams, param="bool" if name == "where"
                                           else "float64").items():
        ptx = target.compile_ptx(getattr(mod, which), sig, cc=(9, 0))
        assert "cvt.f32.f16" in ptx  # float16 operands widened
        if out == "float16":
            assert "cvt.rn.f16.f32" in ptx  # the result rounded once, to nearest even


@pytest.mark.parametrize("src,compute,dst", [("float16", "float32", "float32"),
                                             ("float16", "float32", "float64"),
                                             ("float32", "float32", "float16"),
                                             ("float64", "float64", "float16")])
def test_half_casts_ptx(src, compute, dst):
    import jtorch  # noqa: F401
    from jtorch.kernels.cuda import pointwise

    target = _target()
    op = registry.get("copy")
    mod = pointwise.module(op, 1, compute, dst)
    sig = pointwise.signatures(1, compute, dst, ins=src)["contiguous"]
    ptx = target.compile_ptx(mod.contiguous, sig, cc=(9, 0))
    if src == "float64":
        assert "cvt.rn.f16.f64" in ptx  # one rounding from float64, as NumPy's cast


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "prod"])
def test_half_reduction_ptx(name):
    import jtorch  # noqa: F401
    from jtorch.kernels.cuda import reduce

    target = _target()
    op = registry.get(name)
    fn = reduce.module(op, "float32", reduce.accumulator(op, "float32"), "float32",
                       widen=True).reduce  # (stored into float16: rounded by the store)
    ptx = target.compile_ptx(fn, reduce.signature("float32", "float16", ins="float16"), cc=(9, 0))
    assert "cvt.f32.f16" in ptx and "bar.sync" in ptx



def test_half_gemm_ptx():
    """float16 tiles staged as float32 in shared memory, summed with float32 FMAs."""
    from jtorch.kernels.cuda import matmul
    from jtorch.kernels.source import load

    target = _target()
    mod = load("jt_cuda_gemm_float16", matmul.source("float16", 16))
    ptx = target.compile_ptx(mod.gemm, matmul.signature("float16"), cc=(9, 0))
    assert "cvt.f32.f16" in ptx and "cvt.rn.f16.f32" in ptx and "fma.rn.f32" in ptx


@pytest.mark.parametrize("name", ["im2col", "col2im"])
def test_half_conv_kernels_ptx(name):
    """Convolution's column kernels on float16: col2im's gathers sum in float32."""
    from jtorch.kernels.cuda import conv

    target = _target()
    ptx = target.compile_ptx(conv.KERNELS[name], conv.signatures("float16")[name], cc=(9, 0))
    if name == "col2im":
        assert "add.f32" in ptx or "add.rn.f32" in ptx


def test_half_max_pool_ptx():
    from jtorch.kernels.cuda import pooling

    target = _target()
    ptx = target.compile_ptx(pooling.KERNELS["max_pool"], pooling.signatures("float16")[
        "max_pool"], cc=(9, 0))
    assert ".entry" in ptx
