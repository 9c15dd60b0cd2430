"""The caching allocator reuses large blocks only after every view of them has died."""

import gc

import numpy as np

from jtorch import _allocator as A


def test_small_arrays_bypass_cache():
    a = A.empty((10,), np.dtype(np.float32))
    assert a.shape == (10,) and a.dtype == np.float32


def test_block_returns_when_last_view_dies():
    A.empty_cache()
    shape = (512, 1024)
    a = A.empty(shape, np.dtype(np.float32))
    assert a.flags.c_contiguous and a.shape == shape
    ptr = a.__array_interface__["data"][0]
    view = a[3:, ::2].T
    del a
    gc.collect()
    assert A.stats()["cached_bytes"] == 0  # the view still holds the block
    b = A.empty(shape, np.dtype(np.float32))
    assert b.__array_interface__["data"][0] != ptr
    b_ptr = b.__array_interface__["data"][0]
    view[...] = 1.0  # still valid memory
    del view, b
    gc.collect()
    assert A.stats()["cached_bytes"] >= 2 * 512 * 1024 * 4
    hits = A.stats()["hits"]
    c = A.empty(shape, np.dtype(np.float32))
    assert A.stats()["hits"] == hits + 1
    assert c.__array_interface__["data"][0] in (ptr, b_ptr)


def test_buckets_round_up_by_at_most_a_quarter():
    for n in (1 << 18, (1 << 18) + 1, 3 * (1 << 20) + 5, 10**8):
        b = A._bucket(n)
        assert n <= b <= n * 1.25 + 8


def test_reused_block_holds_a_different_dtype_and_shape():
    A.empty_cache()
    a = A.empty((256, 256), np.dtype(np.float64))
    del a
    b = A.empty((128, 512), np.dtype(np.float64))
    b[...] = 2.0
    assert b.sum() == 2.0 * 128 * 512
    assert A.stats()["hits"] >= 1
