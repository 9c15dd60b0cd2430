"""Products through cuBLAS: how a row-major, strided product becomes one column-major
``?gemmStridedBatched`` call (checked here against NumPy through a stand-in with cuBLAS's
semantics), and the CUDA product ops routed through the stand-in in the simulator."""

import os

import numpy as np
from cublas_stand_in import gemm_strided_batched
from helpers import run_simulated
from hypothesis import given, settings
from hypothesis import strategies as st

from jtorch.kernels.cuda import cublas

SIM = os.path.join(os.path.dirname(__file__), "sim_cublas.py")


def _operand(draw, nb: int, rows: int, cols: int, rng):
    """A flat buffer holding a (nb, rows, cols) operand in a drawn layout: row-major, its
    transpose, a broadcast batch, padded leading dims, an offset, or no unit stride at all."""
    kind = draw(st.sampled_from(["row", "col", "bcast", "padded", "strided"]))
    off = draw(st.integers(0, 3))
    pad = draw(st.integers(0, 2)) if kind == "padded" else 0
    if kind in ("row", "bcast", "padded"):
        s_row, s_col = cols + pad, 1
    elif kind == "col":
        s_row, s_col = 1, rows
    else:
        s_row, s_col = 2 * cols, 2
    mat = max((rows - 1) * s_row + (cols - 1) * s_col + 1, 0) if rows and cols else 0
    s_b = 0 if kind == "bcast" else mat
    size = off + (max(nb - 1, 0) * s_b + mat if nb else 0) + 1
    flat = rng.standard_normal(size)
    view = np.lib.stride_tricks.as_strided(flat[off:], (nb, rows, cols),
                                           (s_b * 8, s_row * 8, s_col * 8))
    return flat, (off, (s_b, s_row, s_col)), kind, view


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_planned_call_computes_the_row_major_product(data):
    nb, M, N, K = (data.draw(st.integers(1, 3)),) + tuple(data.draw(st.integers(0, 4))
                                                          for _ in range(3))
    rng = np.random.default_rng(0)
    fa, a, ka, va = _operand(data.draw, nb, M, K, rng)
    fb, b, kb, vb = _operand(data.draw, nb, K, N, rng)
    c = np.full(nb * M * N + 1, np.nan)
    g = cublas.plan((nb, M, N, K), a, b, (0, (M * N, N, 1)))
    if g is None:
        assert K > 1 and (ka == "strided" and M > 1 or kb == "strided" and N > 1)
        return
    size = 8
    p = np.array([1.0, 0.0])
    gemm_strided_batched(np.float64, g.trans_x, g.trans_y, g.m, g.n, g.k, p.ctypes.data,
                         fb.ctypes.data + g.x_off * size, g.ldx, g.stride_x,
                         fa.ctypes.data + g.y_off * size, g.ldy, g.stride_y,
                         p.ctypes.data + size, c.ctypes.data + g.c_off * size, g.ldc,
                         g.stride_c, g.batch)
    want = np.matmul(va, vb)
    np.testing.assert_allclose(c[:nb * M * N].reshape(nb, M, N), want, rtol=1e-12, atol=1e-12)
    assert np.isnan(c[-1])  # nothing written past C


def test_layout_choices():
    assert cublas.layout(3, 4, 1, 3) == (cublas.OP_N, 3)  # column-major
    assert cublas.layout(3, 4, 4, 1) == (cublas.OP_T, 4)  # row-major: its transpose
    assert cublas.layout(3, 4, 8, 2) is None  # no unit stride
    assert cublas.layout(3, 4, 1, 2) is None  # column-major, but columns 2 apart overlap 3 rows
    assert cublas.layout(1, 4, 7, 1) == (cublas.OP_N, 1)  # a row: any stride is free


def test_without_the_extra_products_use_the_tiled_kernel():
    if cublas._override is None and not cublas.target.SIMULATOR:
        try:
            import nvmath.bindings.cublas  # noqa: F401
        except Exception:  # noqa: BLE001
            assert cublas.binding() is None


def test_products_through_cublas_in_the_simulator():
    run_simulated(SIM)
