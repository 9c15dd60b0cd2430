"""Every kernel of ``kernels/cuda/sampling.py`` (multinomial, randperm, poisson, binomial,
_standard_gamma and the gamma/Dirichlet gradients) compiles to PTX for sm_90 for each dtype its ops read
and store (no GPU needed: the CUDA toolkit's NVVM does it). The simulator runs the kernels as Python; only
this compilation types them as the device does (uint64 Philox words, float16 loads, the
int64 binary searches)."""

import os

import pytest

_KEY = "uint64, uint64, uint64, uint64"
_GEO = "int64[:, ::1]"
FLOATS = ["float16", "float32", "float64"]
PERM = ["float16", "float32", "float64", "int64", "int32", "int16", "int8", "uint8"]


def _ptx(kernel: str, sig: str) -> str:
    if os.environ.get("NUMBA_ENABLE_CUDASIM"):
        pytest.skip("PTX needs the real CUDA target, not the simulator")
    from jtorch.kernels.cuda import sampling, target

    ptx = target.compile_ptx(sampling.KERNELS[kernel], sig, cc=(9, 0))
    assert ".target sm_90" in ptx and ".entry" in ptx
    return ptx


def test_every_kernel_is_listed():
    from jtorch.kernels.cuda import sampling

    assert set(sampling.KERNELS) == {
        "gamma_fill", "gamma_grad_fill", "dirichlet_grad_fill", "poisson_fill", "binomial_fill",
        "cdf_chunks_f32", "cdf_chunks_f64",
        "cdf_rows_f32", "cdf_rows_f64", "cdf_finish_f32", "cdf_finish_f64", "check_rows",
        "multinomial_draw", "exponential_keys", "randperm_keys", "store"}


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_gamma_ptx(dt):
    _ptx("gamma_fill",
         f"void({_GEO}, {dt}[::1], int64, {dt}[::1], int64, int64, {_KEY}, float64)")


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_gamma_grad_ptx(dt):
    _ptx("gamma_grad_fill",
         f"void({_GEO}, {dt}[::1], int64, {dt}[::1], int64, {dt}[::1], int64, int64)")


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_dirichlet_grad_ptx(dt):
    _ptx("dirichlet_grad_fill", f"void({_GEO}, {dt}[::1], int64, {dt}[::1], int64, {dt}[::1], "
                                f"int64, {dt}[::1], int64, int64)")


@pytest.mark.parametrize("dt", FLOATS)
def test_poisson_ptx(dt):
    _ptx("poisson_fill", f"void({_GEO}, {dt}[::1], int64, {dt}[::1], int64, int64, {_KEY})")


@pytest.mark.parametrize("dt", ["float32", "float64"])
def test_binomial_ptx(dt):
    _ptx("binomial_fill", f"void({_GEO}, {dt}[::1], int64, {dt}[::1], int64, {dt}[::1], int64, "
                          f"int64, {_KEY})")


@pytest.mark.parametrize("dt", FLOATS)
def test_multinomial_ptx(dt):
    acc = "float64" if dt == "float64" else "float32"
    tag = "f64" if dt == "float64" else "f32"
    i64 = "int64[::1]"
    _ptx(f"cdf_chunks_{tag}", f"void({dt}[::1], int64, int64, int64, int64, int64, int64, "
                              f"{acc}[::1], {acc}[::1], {i64}, {i64})")
    _ptx(f"cdf_rows_{tag}", f"void(int64, int64, {acc}[::1], {i64}, {i64}, {acc}[::1], {i64}, "
                            f"{acc}[::1], {i64})")
    _ptx(f"cdf_finish_{tag}", f"void(int64, int64, int64, int64, {acc}[::1], {acc}[::1], "
                              f"{acc}[::1], {i64})")
    _ptx("check_rows", f"void({dt}[::1], int64, int64, int64, int64, int32[::1], int32[::1])")
    _ptx("multinomial_draw", f"void({acc}[::1], int64, int64, int64, int64[::1], {_KEY})")
    _ptx("exponential_keys", f"void({dt}[::1], int64, int64, int64, int64, float64[::1], {_KEY})")


@pytest.mark.parametrize("dt", PERM)
def test_randperm_ptx(dt):
    _ptx("randperm_keys", f"void(int64, int64[::1], int64[::1], {_KEY})")
    _ptx("store", f"void(int64[::1], {dt}[::1], int64)")


def test_merge_with_randperm_keys_ptx():
    """randperm sorts with ``sort.merge`` on int64 keys and indices."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM"):
        pytest.skip("PTX needs the real CUDA target, not the simulator")
    from jtorch.kernels.cuda import sort, target

    sig = "void(int64[::1], int64[::1], int64[::1], int64[::1], int64, int64, int64)"
    assert ".entry" in target.compile_ptx(sort.merge, sig, cc=(9, 0))
