"""The copy kernels of ``kernels/cpu/movement``: every geometry (transposes, broadcast
sources, negative strides, strided destinations) moves exactly the bits NumPy's copy moves,
through the row kernel and the blocked transpose kernel, serial and parallel; and the plan
picks the blocked kernel where the destination's inner dim is strided in the source."""

from __future__ import annotations

import numpy as np
import pytest

from jtorch.kernels.cpu import movement as mv

# one NumPy dtype per raw width the kernels specialise on (1, 2, 4, 8 and 16 bytes)
WIDTHS = [np.uint8, np.float16, np.float32, np.float64, np.complex128]


def _data(shape, dtype, seed=0) -> np.ndarray:
    """Distinct bit patterns of ``dtype`` (nan payloads and -0.0 included for floats)."""
    n = int(np.prod(shape))
    isz = np.dtype(dtype).itemsize
    raw = np.random.default_rng(seed).integers(0, 256, size=n * isz, dtype=np.uint8)
    return raw.view(dtype).reshape(shape).copy()


def _bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(np.uint8)


def _strides(a: np.ndarray) -> list:
    return [s // a.itemsize for s in a.strides]


def _offset(a: np.ndarray, storage: np.ndarray) -> int:
    return (a.__array_interface__["data"][0] - storage.__array_interface__["data"][0]) // a.itemsize


def _kernel_copy(storage: np.ndarray, src: np.ndarray, dst: np.ndarray) -> None:
    """dst[...] = src through ``copy`` (the plan's kernel, never NumPy): src views the
    C-contiguous ``storage``, dst is C-contiguous."""
    mv.copy(src.shape, mv.raw(storage.reshape(-1)), _offset(src, storage), _strides(src),
            mv.raw(dst.reshape(-1)), 0, _strides(dst))


GEOMETRIES = [
    ((37, 53), lambda a: a.T),                                 # a 2-D transpose, odd sizes
    ((5, 70, 33), lambda a: a.transpose(2, 0, 1)),             # blocks under an outer dim
    ((4, 40, 50), lambda a: a.transpose(0, 2, 1)),
    ((64, 3, 6, 16), lambda a: a.transpose(0, 2, 1, 3)),       # rows of 16 (attention heads)
    ((200, 300), lambda a: a.T[::3]),                          # stepped transpose
    ((6, 7), lambda a: a[:, ::-1]),                            # negative strides (flip)
    ((6, 7, 8), lambda a: a[::-1, :, ::-2]),
    ((1, 50), lambda a: np.broadcast_to(a, (40, 50)).T),      # a broadcast source
    ((3, 1, 5), lambda a: np.broadcast_to(a, (3, 4, 5))),
    ((3,), lambda a: a),
    ((), lambda a: a),
    ((0, 5), lambda a: a.T),
    ((17, 16, 3), lambda a: a.transpose(1, 0, 2)),
]


@pytest.mark.parametrize("dtype", WIDTHS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape,view", GEOMETRIES)
@pytest.mark.parametrize("parallel", [False, True])
def test_copy_moves_the_bits_numpy_moves(shape, view, dtype, parallel, monkeypatch):
    monkeypatch.setattr(mv, "use_parallel", lambda n: parallel)
    monkeypatch.setattr(mv, "BLOCK", 7)  # several tasks per row, and runs of rows per task
    storage = _data(shape, dtype)
    src = view(storage)
    dst = np.zeros(src.shape, dtype)
    _kernel_copy(storage, src, dst)
    np.testing.assert_array_equal(_bits(dst), _bits(src))


@pytest.mark.parametrize("parallel", [False, True])
def test_copy_into_a_strided_destination(parallel, monkeypatch):
    """A destination that is itself a transpose or a slice (``out.t()[...] = x`` shapes)."""
    monkeypatch.setattr(mv, "use_parallel", lambda n: parallel)
    cases = [((40, 60), lambda d: d.T, (60, 40), lambda s: s),
             ((40, 60), lambda d: d[:, 5:45], (40, 40), lambda s: s.T),
             ((30, 20, 24), lambda d: d.transpose(2, 0, 1), (24, 30, 20), lambda s: s),
             ((30, 20, 24), lambda d: d.transpose(2, 0, 1), (20, 30, 24), lambda s: s.transpose(2, 1, 0)),
             ((40, 80), lambda d: d[:, ::2], (40, 40), lambda s: s.T)]  # blocks, strided stores
    tiled = []
    for dshape, dview, sshape, sview in cases:
        for dtype in (np.float32, np.int8, np.complex128):
            big = np.zeros(dshape, dtype)
            dst = dview(big)
            storage = _data(sshape, dtype)
            src = sview(storage)
            want = big.copy()
            dview(want)[...] = src
            mv.copy(dst.shape, mv.raw(storage.reshape(-1)), _offset(src, storage), _strides(src),
                    mv.raw(big.reshape(-1)), _offset(dst, big), _strides(dst))
            np.testing.assert_array_equal(_bits(big), _bits(want))
            tiled.append(mv.plan(dst.shape, _strides(src), _strides(dst)).tiled)
    assert tiled.count(True) >= 9  # the blocked kernel ran, with unit and strided stores


def test_plan_picks_the_blocked_kernel_for_transposes():
    t = mv.plan((1024, 1024), (1, 1024), (1024, 1))  # x.t() into a row-major result
    assert t.tiled and t.size == 1024 * 1024
    assert not mv.plan((1024, 1024), (1024, 1), (1024, 1)).tiled  # a plain copy: one run
    # rows of 16 contiguous elements (q.transpose(1, 2)): runs, not blocks
    assert not mv.plan((64, 6, 3, 16), (288, 16, 96, 1), (288, 48, 16, 1)).tiled
    assert not mv.plan((40, 50), (0, 1), (50, 1)).tiled  # a broadcast row
    assert mv.plan((3, 4), (1, 3), (4, 1)) is mv.plan([3, 4], [1, 3], [4, 1])  # memoised


@pytest.mark.parametrize("n", [0, 5, mv.SMALL_COPY + 1])
def test_copy_array_small_and_large(n, monkeypatch):
    """Small copies take NumPy's copy, large ones the kernels: the same bits either way."""
    for dtype in (np.float32, np.complex128, np.bool_):
        a = _data((n, 3), dtype) if dtype is not np.bool_ else _data((n, 3), np.uint8) > 128
        for src in (a, a.T.copy().T, a[::-1] if n else a):
            dst = np.empty(src.shape, dtype)
            if src.strides and min(src.strides) < 0 and n > mv.SMALL_COPY:
                continue  # tensors never have negative strides (copy() takes them)
            mv.copy_array(dst, src)
            np.testing.assert_array_equal(_bits(dst), _bits(src))


def test_copy_array_blocks_aliasing_transposes(monkeypatch):
    """A transpose whose source stride is a multiple of 2 KiB takes the blocked kernel (NumPy's
    row copy thrashes there); others NumPy's copy, unless threads run the kernels."""
    ran = []
    run = mv.CopyPlan.run
    monkeypatch.setattr(mv.CopyPlan, "run", lambda self, *a: ran.append(self.tiled) or run(self, *a))
    for parallel in (False, True):
        monkeypatch.setattr(mv, "use_parallel", lambda n, parallel=parallel: parallel)
        for shape, dtype, aliasing in [((512, 512), np.float32, True),
                                       ((256, 1024), np.float64, True),
                                       ((512, 500), np.float32, False),
                                       ((512, 512), np.int8, False)]:
            ran.clear()
            src = _data(shape, dtype).T
            dst = np.empty(src.shape, dtype)
            mv.copy_array(dst, src)
            np.testing.assert_array_equal(_bits(dst), _bits(src))
            assert ran == ([True] if aliasing or parallel else []), (shape, dtype, ran)
