"""CUDA products routed through a stand-in cuBLAS binding (``cublas_stand_in``: cuBLAS's
column-major semantics over the simulator's host memory) against the same products on CPU:
operands reach it where they lie (transposed weights, strided batches, broadcast batches),
the addend and the alpha/beta scalars as cuBLAS reads them, TF32 as the precision setting
asks. Run by ``test_cuda_cublas.py`` under the simulator."""

import os

import numpy as np
import pytest
from cublas_stand_in import OP_T, StandIn

import jtorch
from jtorch.kernels.cuda import cublas, eager

assert os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


@pytest.fixture
def stand_in():
    s = StandIn()
    cublas.use(s)
    yield s
    cublas.use(None)


def _pair(*shape, dtype=jtorch.float32, seed=0):
    g = np.random.default_rng(seed)
    x = jtorch.from_numpy(g.standard_normal(shape)).to(dtype)
    return x, x.to("cuda")


def _close(got, want, dtype):
    tol = 1e-5 if dtype == jtorch.float32 else 1e-12
    assert got.device.type == "cuda" and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got.cpu().numpy(), want.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
def test_mm_bmm_matmul(stand_in, dtype):
    a, ca = _pair(5, 3, dtype=dtype)
    b, cb = _pair(3, 4, dtype=dtype, seed=1)
    _close(ca @ cb, a @ b, dtype)
    _close(ca.t().t() @ cb, a @ b, dtype)
    _close(jtorch.mm(cb.t(), ca.t()), jtorch.mm(b.t(), a.t()), dtype)
    x, cx = _pair(2, 3, 5, 3, dtype=dtype, seed=2)
    y, cy = _pair(3, 4, dtype=dtype, seed=3)
    _close(cx @ cy, x @ y, dtype)  # batch dims merged, B broadcast over the batch
    _close(cx.transpose(-1, -2).transpose(-1, -2) @ cy, x @ y, dtype)
    p, cp = _pair(4, 3, 2, dtype=dtype, seed=4)
    q, cq = _pair(4, 2, 5, dtype=dtype, seed=5)
    _close(jtorch.bmm(cp, cq), jtorch.bmm(p, q), dtype)
    _close(jtorch.bmm(cq.transpose(1, 2), cp.transpose(1, 2)),
           jtorch.bmm(q.transpose(1, 2), p.transpose(1, 2)), dtype)
    assert stand_in.calls and not eager.FALLBACKS["mm"] + eager.FALLBACKS["bmm"]


def test_transposed_operands_are_not_copied(stand_in):
    x, cx = _pair(6, 3)
    w, cw = _pair(4, 3, seed=1)
    _close(cx @ cw.t(), x @ w.t(), jtorch.float32)
    (_, flags, _), = stand_in.calls
    assert OP_T in flags  # the weight read in place, transposed by the op flag


def test_no_unit_stride_copies_first(stand_in):
    x, cx = _pair(6, 8)
    y, cy = _pair(4, 5, seed=1)
    _close(cx[::2, ::2] @ cy, x[::2, ::2] @ y, jtorch.float32)
    assert stand_in.calls


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
def test_addmm_and_linear(stand_in, dtype):
    c, cc = _pair(4, dtype=dtype)
    a, ca = _pair(3, 5, dtype=dtype, seed=1)
    b, cb = _pair(5, 4, dtype=dtype, seed=2)
    _close(jtorch.addmm(cc, ca, cb), jtorch.addmm(c, a, b), dtype)
    _close(jtorch.addmm(cc, ca, cb, beta=0.5, alpha=2.0),
           jtorch.addmm(c, a, b, beta=0.5, alpha=2.0), dtype)
    m, cm = _pair(3, 4, dtype=dtype, seed=3)
    _close(jtorch.addmm(cm, ca, cb, beta=-1.0), jtorch.addmm(m, a, b, beta=-1.0), dtype)
    nan = jtorch.full((3, 4), float("nan"), dtype=dtype)
    _close(jtorch.addmm(nan.cuda(), ca, cb, beta=0), jtorch.addmm(nan, a, b, beta=0), dtype)
    w, cw = _pair(4, 5, dtype=dtype, seed=4)
    bias, cbias = _pair(4, dtype=dtype, seed=5)
    _close(jtorch.nn.functional.linear(ca, cw, cbias),
           jtorch.nn.functional.linear(a, w, bias), dtype)
    assert not eager.FALLBACKS["addmm"]


def test_linear_backward(stand_in):
    x, cx = _pair(5, 3)
    w, cw = _pair(4, 3, seed=1)
    x.requires_grad_(), cx.requires_grad_(), w.requires_grad_(), cw.requires_grad_()
    (x @ w.t()).sum().backward()
    (cx @ cw.t()).sum().backward()
    _close(cx.grad, x.grad, jtorch.float32)
    _close(cw.grad, w.grad, jtorch.float32)


def test_empty_and_zero_k(stand_in):
    a, ca = _pair(3, 0)
    b, cb = _pair(0, 4, seed=1)
    _close(ca @ cb, a @ b, jtorch.float32)  # K == 0: zeros
    e, ce = _pair(0, 3)
    f, cf = _pair(3, 4, seed=2)
    _close(ce @ cf, e @ f, jtorch.float32)


def test_tf32_follows_the_matmul_precision(stand_in):
    _, ca = _pair(3, 3)
    try:
        jtorch.set_float32_matmul_precision("high")
        ca @ ca
        assert stand_in.math_modes[-1] == 3  # CUBLAS_TF32_TENSOR_OP_MATH
        jtorch.set_float32_matmul_precision("highest")
        ca @ ca
        assert stand_in.math_modes[-1] == 0
        n = len(stand_in.math_modes)
        ca.double() @ ca.double()
        assert len(stand_in.math_modes) == n  # float64 products: no TF32 question
    finally:
        jtorch.set_float32_matmul_precision("highest")


def test_without_a_binding_the_tiled_kernel_runs():
    assert cublas.binding() is None  # the simulator: no cuBLAS
    a, ca = _pair(3, 4)
    _close(ca @ ca.t(), a @ a.t(), jtorch.float32)


def test_kernels_calling_the_tiled_product_reach_cublas(stand_in):
    """Other kernels' GEMMs (convolution's) call ``matmul.run``: cuBLAS takes them too."""
    from jtorch.kernels.cuda import matmul

    a, ca = _pair(2, 3, 4)
    b, cb = _pair(4, 5, seed=1)
    out = jtorch.empty(2, 3, 5, device="cuda")
    A, B, C = ca._a, cb._a, out._a
    matmul.run("float32", (2, 3, 5, 4), (A.buf, A.offset, (12, 4, 1)), (B.buf, B.offset, (0, 5, 1)),
               (C.buf, C.offset, (15, 5, 1)))
    assert len(stand_in.calls) == 1
    _close(out, a @ b, jtorch.float32)


def test_float16_through_gemm_ex(stand_in):
    """float16 products go to cublasGemmStridedBatchedEx with float32 sums and scalars."""
    a, ca = _pair(5, 3, dtype=jtorch.float16)
    b, cb = _pair(4, 3, dtype=jtorch.float16, seed=1)
    got, want = ca @ cb.t(), a @ b.t()
    assert got.dtype == jtorch.float16 and stand_in.calls[-1][0] == "gemm_strided_batched_ex"
    np.testing.assert_allclose(got.cpu().float().numpy(), want.float().numpy(), rtol=2e-3,
                               atol=2e-3)
    c, cc = _pair(5, 4, dtype=jtorch.float16, seed=2)
    got = jtorch.addmm(cc, ca, cb.t(), beta=0.5)
    want = jtorch.addmm(c, a, b.t(), beta=0.5)
    np.testing.assert_allclose(got.cpu().float().numpy(), want.float().numpy(), rtol=2e-3,
                               atol=2e-3)
