"""Batched products over two batch dims whose operands are transposed views (attention's
heads split off a projection): read in place matrix by matrix, serially or over the threads,
and equal to NumPy's product; batch dims that merge are viewed, the others refused (they
used to be found out by a reshape, which copied them)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jtorch.kernels.cpu import matmul as M


def _heads(rng, b, t, h, d):
    """(b, h, t, d) transposed view of a (b, t, h, d) projection, as q/k/v in attention."""
    return rng.standard_normal((b, t, h, d)).astype(np.float32).transpose(0, 2, 1, 3)


@pytest.mark.parametrize("b", [1, 3, 64, 400])
def test_strided_heads_products_equal_numpy(b):
    rng = np.random.default_rng(b)
    q, k = _heads(rng, b, 6, 3, 16), _heads(rng, b, 6, 3, 16)
    out = np.empty((b, 3, 6, 6), np.float32)
    M.batched_into(q, k.transpose(0, 1, 3, 2), out)
    want = np.matmul(q.astype(np.float64), k.transpose(0, 1, 3, 2).astype(np.float64))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_the_parallel_strided_products_equal_the_serial_ones_bitwise():
    rng = np.random.default_rng(0)
    a, bm = _heads(rng, 200, 32, 4, 16), _heads(rng, 200, 32, 4, 16).transpose(0, 1, 3, 2)
    o1 = np.empty((200, 4, 32, 32), np.float32)
    o2 = np.empty_like(o1)
    M.gemm_strided4(a, bm, o1)
    M.gemm_strided4_par(a, bm, o2)
    np.testing.assert_array_equal(o1, o2)


def test_collapsed_views_mergeable_batches_and_refuses_the_others():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 5, 6, 7)).astype(np.float32)
    v = M._collapsed(x[:, :, ::2])  # batch dims (4, 5) still merge: a view
    assert v.shape == (20, 3, 7) and np.shares_memory(v, x)
    assert M._collapsed(x.transpose(0, 2, 1, 3)) is None  # (4, 6) batch over (5, 6): no merge
    assert M._collapsed(x[:, :1]).shape == (4, 6, 7)  # a size-1 batch dim merges with any


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64, 128, 128), (1, 30, 20), (5, 1, 7), (3, 4, 1)])
def test_outer_products_are_blas_bits(shape, dtype):
    """An inner size of 1 (per-example weight gradients) runs a product loop: each element is
    one product, as in BLAS's rank-1 update, so the bits are NumPy's (BLAS's) exactly."""
    b, m, n = shape
    rng = np.random.default_rng(2)
    a = rng.standard_normal((b, m, 1)).astype(dtype)
    c = rng.standard_normal((b, 1, n)).astype(dtype)
    a[0, 0, 0], c[0, 0, 0] = -0.0, np.inf  # signed zeros and non-finite values pass through
    out = np.empty((b, m, n), dtype)
    for x, y in ((a, c), (a[::-1], c[:, :, ::-1])):  # dense and strided operands
        M.bmm_into(x, y, out)
        np.testing.assert_array_equal(out, np.matmul(x, y))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("shape", [(64, 1, 128, 128), (5, 3, 7, 4), (2, 0, 3, 4), (3, 4, 5, 0)])
def test_a_matrix_broadcast_over_the_batch_is_one_product_of_the_rows(shape, dtype):
    """b expanded along the batch (stride 0, an expanded weight): the batch's rows are one
    product with it (no copy of it per batch entry), equal to NumPy's; rows that do not merge
    (a transposed batch) take the general path."""
    bsz, m, k, n = shape
    rng = np.random.default_rng(3)
    a = rng.standard_normal((bsz, m, k)).astype(dtype)
    w = rng.standard_normal((k, n)).astype(dtype)
    for bm in (np.broadcast_to(w, (bsz, k, n)), np.broadcast_to(w.T.copy().T, (bsz, k, n))):
        assert bm.strides[0] == 0
        for x in (a, np.ascontiguousarray(a.transpose(1, 0, 2)).transpose(1, 0, 2)):
            out = np.empty((bsz, m, n), dtype)
            M.bmm_into(x, bm, out)
            want = np.matmul(x.astype(np.complex128), bm.astype(np.complex128))
            np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_the_broadcast_matrix_goes_to_one_product(monkeypatch):
    """The fold is taken: one BLAS call over all rows, not one per batch entry."""
    calls = []
    real = M.gemm
    monkeypatch.setattr(M, "gemm", lambda a, b, o, ta, tb: (calls.append(a.shape),
                                                           real(a, b, o, ta, tb)))
    a = np.ones((8, 2, 3), np.float32)
    out = np.empty((8, 2, 4), np.float32)
    M.bmm_into(a, np.broadcast_to(np.ones((3, 4), np.float32), (8, 3, 4)), out)
    assert calls == [(1, 16, 3)]
    np.testing.assert_array_equal(out, np.full((8, 2, 4), 3, np.float32))


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1)])
def test_addmm_s_pass_after_the_product_runs_serially_below_its_size(monkeypatch, beta, alpha):
    """The bias pass follows BLAS's product, whose workers still spin: below
    ``EPILOGUE_PAR_SIZE`` it runs serially (a parallel pass would wait for them); above it,
    in parallel; both give the same bits as NumPy's beta * c + alpha * (a @ b) order."""
    rng = np.random.default_rng(7)
    a, b = rng.standard_normal((700, 64)).astype(np.float32), \
        rng.standard_normal((64, 100)).astype(np.float32)
    c = rng.standard_normal(100).astype(np.float32)
    monkeypatch.setattr(M._threads, "use_parallel", lambda n: True)
    calls = []

    def counted(name):
        fn = getattr(M, name)
        return lambda *x: calls.append(name) or fn(*x)

    for name in ("add_row_par", "scale_add_par"):
        monkeypatch.setattr(M, name, counted(name))
    got = np.empty((700, 100), np.float32)
    M.addmm_into(c, a, b, got, beta, alpha)
    assert not calls
    monkeypatch.setattr(M, "EPILOGUE_PAR_SIZE", 1000)
    par = np.empty_like(got)
    M.addmm_into(c, a, b, par, beta, alpha)
    assert len(calls) == 1
    np.testing.assert_array_equal(got, par)
    prod = np.empty_like(got)
    M.bmm_into(a[None], b[None], prod[None])
    t = np.float32
    want = (t(beta) * c + t(alpha) * prod) if beta else t(alpha) * prod
    if beta == alpha == 1:
        want = prod + c
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
def test_heads_read_in_place_by_blas(dtype, monkeypatch):
    """Products over two unmergeable batch dims whose matrices BLAS can read where they are
    (row-major with a row stride, or a transposed left operand; a batch dim broadcast with
    stride 0) go to ``matmul_views`` with no copy: equal to NumPy, the parallel build's bits
    the serial one's. A transposed right operand, or matrices with no unit stride, keep
    ``np.dot``'s copying path."""
    from jtorch.kernels.cpu import matmul_views as MV

    rng = np.random.default_rng(7)
    proj = rng.standard_normal((5, 6, 3 * 24)).astype(dtype)
    if np.iscomplexobj(proj):
        proj = proj + 1j * rng.standard_normal(proj.shape).astype(dtype)
    q = proj[:, :, :24].reshape(5, 6, 3, 8).transpose(0, 2, 1, 3)  # (5, 3, 6, 8), rows 72 apart
    v = proj[:, :, 24:48].reshape(5, 6, 3, 8).transpose(0, 2, 1, 3)
    att = rng.standard_normal((5, 3, 6, 6)).astype(dtype)
    wide = rng.standard_normal((3, 8, 10)).astype(dtype)[None].repeat(5, 0)[:, :, :, ::1]
    shared = np.broadcast_to(rng.standard_normal((1, 3, 8, 4)).astype(dtype), (5, 3, 8, 4))
    taken = []
    run = MV.products
    monkeypatch.setattr(MV, "products", lambda *a: taken.append(1) or run(*a))
    cases = [(att, v, True), (att.transpose(0, 1, 3, 2), q, True), (q, shared, True),
             (q, wide[:, :, :, :7], True), (q, v.transpose(0, 1, 3, 2), False),
             (att[:, :, :, ::2], v[:, :, ::2], False)]
    for a, b, in_place in cases:
        assert M._collapsed(a) is None or M._collapsed(b) is None
        out = np.empty(a.shape[:3] + b.shape[3:], dtype)
        taken.clear()
        M.batched_into(a, b, out)
        assert bool(taken) == in_place
        want = np.matmul(a.astype(np.complex128), b.astype(np.complex128))
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
        if in_place:
            lb, la = MV.layout(b), MV.layout(a)
            par = np.empty_like(out)
            MV.products_par(*la, *lb, par.reshape(-1), *a.shape[:3], b.shape[3], a.shape[3])
            np.testing.assert_array_equal(par, out)


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_products_over_any_4d_views_equal_numpy(data):
    """Random 4-D views (transposed matrices or batch dims, steps, size-1 dims, broadcast
    batch entries) through ``batched_into``, in place or copied, equal NumPy's product."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 16)))
    b0, b1, m, k, n = (data.draw(st.integers(1, 5)) for _ in range(5))

    def view(rows, cols):
        steps = [data.draw(st.sampled_from([1, 1, 2])) for _ in range(4)]
        perm = data.draw(st.permutations([0, 1, 2, 3]))
        shape = [b0, b1, rows, cols]
        base_shape = [s * st_ for s, st_ in zip(shape, steps)]
        inv = np.argsort(perm)
        base = rng.standard_normal([base_shape[i] for i in perm]).astype(np.float32)
        x = base.transpose(inv)[tuple(slice(None, None, s) for s in steps)]
        if data.draw(st.booleans()):
            x = np.broadcast_to(x[:1], x.shape)  # one batch entry for all
        assert x.shape == tuple(shape)
        return x

    a, b = view(m, k), view(k, n)
    out = np.empty((b0, b1, m, n), np.float32)
    M.batched_into(a, b, out)
    np.testing.assert_allclose(out, np.matmul(a.astype(np.float64), b.astype(np.float64)),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("m,k,n,serial", [(64, 128, 64, True), (100, 128, 128, True),
                                          (128, 128, 128, True), (255, 256, 128, True),
                                          (256, 256, 128, False), (256, 256, 256, False),
                                          (64, 127, 64, False), (10, 64, 64, False)])
def test_small_products_hold_blas_serial(m, k, n, serial, monkeypatch):
    """A product of 2^19 to 2^23 multiply-adds is held on BLAS's calling thread (waking its
    worker costs more than the split saves); a larger one keeps BLAS's threads, and a smaller
    one is left to OpenBLAS, which runs it on the calling thread by itself (the thread count
    calls would cost more than such a product)."""
    from jtorch import _threads

    if not _threads.serial_blas.available():
        pytest.skip("BLAS's thread count cannot be set here")
    held = []
    real = _threads.serial_blas

    class Recording(real):
        def __enter__(self):
            held.append((m, k, n))
            return super().__enter__()

    monkeypatch.setattr(_threads, "serial_blas", Recording)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1, m, k)).astype(np.float32)
    b = rng.standard_normal((1, k, n)).astype(np.float32)
    out = np.empty((1, m, n), np.float32)
    M.bmm_into(a, b, out)
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-4)
    assert bool(held) == serial
