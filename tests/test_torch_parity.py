"""Foundation-layer parity with torch: thread controls, tensor attributes (layout, memory
format), construction from NumPy scalars, argument errors, dtype views and small composite ops."""

from __future__ import annotations

import os

import numba
import numpy as np
import pytest
import torch

import jtorch
import jtorch.nn.functional as JF
from jtorch import _threads
from jtorch.utils import data as JD

from helpers import raises_like, same


# -- threads ---------------------------------------------------------------------------------

@pytest.fixture
def restore_threads():
    saved = (_threads._State.num_threads, _threads._State.serial, numba.get_num_threads())
    blas = _threads._blas_fns()
    saved_blas = blas[1]() if blas else None
    yield
    _threads._State.num_threads, _threads._State.serial = saved[:2]
    numba.set_num_threads(saved[2])
    if blas:
        _threads._set_blas_threads(saved_blas)


def test_set_num_threads_governs_blas(restore_threads):
    """BLAS's pool follows set_num_threads (torch's OpenMP pool runs its BLAS), and its
    workers sleep soon after a GEMM instead of spinning for ~0.1 s."""
    assert "OPENBLAS_THREAD_TIMEOUT" in os.environ  # (ours, or one the user set)
    blas = _threads._blas_fns()
    if blas is None:
        pytest.skip("BLAS's thread count cannot be set here")
    jtorch.set_num_threads(1)
    assert blas[1]() == 1
    jtorch.set_num_threads(2)
    assert blas[1]() == 2
    y = jtorch.ones(64, 64) @ jtorch.ones(64, 64)  # still right after the switches
    assert (y == 64).all()


def test_set_num_threads_semantics(restore_threads):
    assert jtorch.get_num_threads() == numba.get_num_threads()
    jtorch.set_num_threads(1)
    assert jtorch.get_num_threads() == 1
    assert not _threads.use_parallel(1 << 40)
    jtorch.set_num_threads(1000)  # recorded as given, as torch; Numba's pool is capped
    assert jtorch.get_num_threads() == 1000
    assert numba.get_num_threads() == numba.config.NUMBA_NUM_THREADS
    assert _threads.use_parallel(jtorch._flags.GRAIN_SIZE)
    jtorch.set_num_threads(np.int64(2))
    assert jtorch.get_num_threads() == 2
    for bad in (0, -1, 2.5, "a", True, np.float64(2), jtorch.tensor(2)):
        raises_like(lambda: jtorch.set_num_threads(bad), lambda: torch.set_num_threads(
            torch.tensor(2) if isinstance(bad, jtorch.Tensor) else bad))


def test_set_num_interop_threads_once(monkeypatch):
    monkeypatch.setattr(_threads._State, "interop_threads", None)
    assert jtorch.get_num_interop_threads() >= 1
    for bad in (0, True, 2.0, None):
        with pytest.raises(RuntimeError, match="set_num_interop_threads expects"):
            jtorch.set_num_interop_threads(bad)
    jtorch.set_num_interop_threads(3)
    assert jtorch.get_num_interop_threads() == 3
    with pytest.raises(RuntimeError, match=r"^Error: cannot set number of interop threads after "
                                           r"parallel work has started or set_num_interop_threads "
                                           r"called$"):
        jtorch.set_num_interop_threads(2)


def test_one_thread_runs_every_kernel_serially(restore_threads, monkeypatch):
    """With one thread a parallel build is never launched, whatever the size."""
    monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 1)
    jtorch.set_num_threads(1)
    x = jtorch.arange(2 * 4 * 9 * 9, dtype=jtorch.float32).reshape(2, 4, 9, 9) / 100
    w = jtorch.ones(3, 4, 3, 3)
    tx, tw = torch.from_numpy(x.numpy()), torch.from_numpy(w.numpy())
    np.testing.assert_allclose(JF.conv2d(x, w, padding=1).numpy(),
                               torch.nn.functional.conv2d(tx, tw, padding=1).numpy(), rtol=1e-5)
    same(jtorch.arange(0.5, 7000.5, 0.25), torch.arange(0.5, 7000.5, 0.25))
    np.testing.assert_allclose(x.sum(dim=1).numpy(), tx.sum(dim=1).numpy(), rtol=1e-6)
    same(x.sort(dim=-1).values, tx.sort(dim=-1).values)
    np.testing.assert_allclose(x.cumsum(-1).numpy(), tx.cumsum(-1).numpy(), rtol=1e-5)


class _ConvDataset(JD.Dataset):
    """Each item runs a convolution and elementwise/reduction kernels large enough to be
    parallel in the main process."""

    def __len__(self) -> int:
        return 4

    def __getitem__(self, i):
        y = JF.conv2d(jtorch.ones(1, 8, 32, 32), jtorch.ones(4, 8, 3, 3), padding=1)
        return y.sum() + (jtorch.ones(100_000) * 2).sum() + i


def test_dataloader_workers_run_conv_after_parent_ran_parallel_kernels():
    """A forked worker may not start a GNU OpenMP region once the parent ran one: workers run
    with one thread, so every launcher (conv's im2col and swaps included) picks serial."""
    (jtorch.ones(200_000) * 2).sum()
    JF.conv2d(jtorch.ones(1, 8, 32, 32), jtorch.ones(4, 8, 3, 3), padding=1)
    expected = float(JF.conv2d(jtorch.ones(1, 8, 32, 32), jtorch.ones(4, 8, 3, 3), padding=1).sum()) \
        + 200_000.0
    got = [v for b in JD.DataLoader(_ConvDataset(), batch_size=2, num_workers=2) for v in b.tolist()]
    assert got == [expected + i for i in range(4)]
    assert jtorch.get_num_threads() > 1 or numba.config.NUMBA_NUM_THREADS == 1  # parent unchanged


_THREADS_PROGRAM = """
import threading, numba, jtorch
x = jtorch.ones(2_000_000)
errors = []
def work():
    try:
        for _ in range(200):
            assert float((x * 2).sum()) == 4_000_000.0
    except Exception as e:
        errors.append(e)
ts = [threading.Thread(target=work) for _ in range(2)]
for t in ts: t.start()
for _ in range(200):
    assert float((x + 1).sum()) == 4_000_000.0
for t in ts: t.join()
assert not errors, errors
print(numba.threading_layer())
"""


def _run(code: str, **env) -> str:
    import os
    import subprocess
    import sys

    full = {k: v for k, v in os.environ.items() if k not in ("NUMBA_THREADING_LAYER", "OMP_WAIT_POLICY")}
    full.update(env)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout.split()[-1]


@pytest.mark.parametrize("layer", ["default", "workqueue"])
def test_kernels_from_several_threads(layer):
    """Kernels launched from several threads at once neither abort nor miscompute; the
    workqueue layer takes launches from one thread, so other threads run serial twins."""
    env = {} if layer == "default" else {"NUMBA_THREADING_LAYER": layer}
    got = _run(_THREADS_PROGRAM, **env)
    assert got == layer or layer == "default"


_LAYER_PROGRAM = """
import os, sys
before = os.environ.get("OMP_WAIT_POLICY")
if sys.argv[-1] == "torch":
    import torch
import numba, jtorch
assert float((jtorch.ones(2_000_000) * 2).sum()) == 4_000_000.0
assert os.environ.get("OMP_WAIT_POLICY") == before  # set only while the pool starts
print(numba.threading_layer())
"""


def test_threading_layer_choice():
    """Numba's OpenMP layer (started with a passive wait policy) unless another library already
    initialised GNU OpenMP (torch): Numba's layer would bind to that runtime, whose workers
    spin, so jtorch takes the workqueue layer instead."""
    import numba.np.ufunc.omppool  # noqa: F401  (the OpenMP layer exists here)

    assert _run(_LAYER_PROGRAM.replace("sys.argv[-1]", "'none'")) == "omp"
    assert _run(_LAYER_PROGRAM.replace("sys.argv[-1]", "'torch'")) == "workqueue"
    assert _run(_LAYER_PROGRAM.replace("sys.argv[-1]", "'torch'"), OMP_WAIT_POLICY="PASSIVE") == "omp"


# -- formatting, construction, argument errors -----------------------------------------------

def test_format_spec_on_non_scalar_raises_like_torch():
    assert f"{jtorch.tensor(1.5):.2f}" == f"{torch.tensor(1.5):.2f}"
    assert format(jtorch.ones(3), "") == format(torch.ones(3), "")
    raises_like(lambda: f"{jtorch.ones(3):.2f}", lambda: f"{torch.ones(3):.2f}")
    raises_like(lambda: format(jtorch.ones(0), "10"), lambda: format(torch.ones(0), "10"))


@pytest.mark.parametrize("data", [
    [np.int32(1), np.int32(2)], [np.float16(1.5), np.float16(2)], [[np.uint8(1)], [np.uint8(2)]],
    [np.float64(1), np.float64(2)], [np.int8(1)], [np.int16(3)], [np.float32(1)], [np.bool_(True)],
    [np.complex64(1j)], [np.int32(1), np.int64(2)], [np.int32(1), 2], [np.float16(1), 2.0],
    [np.int32(1), 2.0], [np.int32(1), np.float16(2)], [np.uint8(1), np.int8(2)],
    [1.0, np.float64(2)], [[np.int32(1), np.int32(2)], [np.int32(3), np.int32(4)]],
    ((np.float16(1), np.float16(2)),), [np.array([1, 2], np.int32)], [],
])
def test_tensor_keeps_numpy_scalar_dtypes(data):
    for jfn, tfn in ((jtorch.tensor, torch.tensor), (jtorch.as_tensor, torch.as_tensor)):
        same(jfn(data), tfn(np.array(data) if isinstance(data[0:1] and data[0], np.ndarray)
                            else data))


def test_stack_and_cat_reject_non_tensors_like_torch():
    x, tx = jtorch.ones(3), torch.ones(3)
    for fn in ("stack", "cat"):
        for bad in (1, 1.5, "a", [1.0], np.ones(3)):
            raises_like(lambda: getattr(jtorch, fn)([x, bad]), lambda: getattr(torch, fn)([tx, bad]))
        raises_like(lambda: getattr(jtorch, fn)((1, x)), lambda: getattr(torch, fn)((1, tx)))


def test_clamp_mixing_tensor_and_number_raises_like_torch():
    x, tx = jtorch.ones(3), torch.ones(3)
    lo, tlo = jtorch.zeros(3), torch.zeros(3)
    raises_like(lambda: jtorch.clamp(x, lo, 1), lambda: torch.clamp(tx, tlo, 1))
    raises_like(lambda: jtorch.clamp(x, 0, jtorch.ones(3)), lambda: torch.clamp(tx, 0, torch.ones(3)))
    raises_like(lambda: jtorch.clip(x, lo, 1.0), lambda: torch.clip(tx, tlo, 1.0))
    raises_like(lambda: jtorch.clamp(x, lo, 1, out=jtorch.empty(3)),
                lambda: torch.clamp(tx, tlo, 1, out=torch.empty(3)))
    raises_like(lambda: x.clamp(lo, 1), lambda: tx.clamp(tlo, 1))
    raises_like(lambda: x.clip(lo, 1), lambda: tx.clip(tlo, 1))
    raises_like(lambda: x.clone().clamp_(0.0, jtorch.ones(3)), lambda: tx.clone().clamp_(0.0, torch.ones(3)))
    with pytest.raises(TypeError, match=r"^clamp\(\) received an invalid combination of arguments"):
        jtorch.clamp(x, min=lo, max=1.0)
    same(jtorch.clamp(x, lo, None), torch.clamp(tx, tlo, None))
    same(jtorch.clamp(x, lo, jtorch.full((3,), 0.5)), torch.clamp(tx, tlo, torch.full((3,), 0.5)))
    same(x.clip(0, 0.5), tx.clip(0, 0.5))
    same(x.clone().clamp_(max=0.5), tx.clone().clamp_(max=0.5))


# -- layouts and memory formats --------------------------------------------------------------

def test_layout_and_memory_format_objects():
    names = ("strided", "sparse_coo", "contiguous_format", "channels_last", "channels_last_3d",
             "preserve_format")
    for n in names:
        assert repr(getattr(jtorch, n)) == repr(getattr(torch, n)) == str(getattr(jtorch, n))
    assert jtorch.ones(2).layout is jtorch.strided and repr(jtorch.ones(2).layout) == "torch.strided"
    assert isinstance(jtorch.strided, jtorch.layout)
    assert isinstance(jtorch.channels_last, jtorch.memory_format)
    assert jtorch.strided != jtorch.sparse_coo and jtorch.strided == jtorch.strided
    import pickle

    assert pickle.loads(pickle.dumps(jtorch.channels_last)) is jtorch.channels_last
    assert pickle.loads(pickle.dumps(jtorch.strided)) is jtorch.strided


def test_memory_format_arguments_follow_torch():
    x = jtorch.arange(24.0).reshape(1, 2, 3, 4)
    tx = torch.arange(24.0).reshape(1, 2, 3, 4)
    cl, tcl = jtorch.channels_last, torch.channels_last
    for jy, ty in ((x.contiguous(memory_format=cl), tx.contiguous(memory_format=tcl)),
                   (jtorch.empty_like(x, memory_format=cl), torch.empty_like(tx, memory_format=tcl)),
                   (x.clone(memory_format=cl), tx.clone(memory_format=tcl)),
                   (x.to(memory_format=cl), tx.to(memory_format=tcl)),
                   (jtorch.zeros_like(x, memory_format=cl), torch.zeros_like(tx, memory_format=tcl)),
                   (jtorch.empty(1, 2, 3, 4, memory_format=cl), torch.empty(1, 2, 3, 4, memory_format=tcl))):
        assert jy.stride() == ty.stride()
        assert jy.is_contiguous(memory_format=cl) and not jy.is_contiguous()
    y, ty = x.contiguous(memory_format=cl), tx.contiguous(memory_format=tcl)
    same(y, ty)
    assert y.contiguous().stride() == ty.contiguous().stride()
    assert jtorch.empty_like(y).stride() == torch.empty_like(ty).stride()
    assert y.contiguous(memory_format=cl) is y
    z = jtorch.zeros(2, 2, 2, 2, 2).contiguous(memory_format=jtorch.channels_last_3d)
    assert z.stride() == torch.zeros(2, 2, 2, 2, 2).contiguous(memory_format=torch.channels_last_3d).stride()
    t = jtorch.ones(3, 2).t()
    assert t.to(memory_format=jtorch.contiguous_format) is t  # torch aliases: a 2-D tensor's format
    assert t.to(jtorch.float64, memory_format=jtorch.contiguous_format).stride() == (3, 1)
    assert x.contiguous(memory_format=jtorch.contiguous_format) is x
    assert x.clone(memory_format=jtorch.preserve_format).stride() == x.stride()
    one, tone = jtorch.ones(3), torch.ones(3)
    assert one.is_contiguous(memory_format=cl) is tone.is_contiguous(memory_format=tcl) is False
    raises_like(lambda: one.contiguous(memory_format=cl), lambda: tone.contiguous(memory_format=tcl))
    raises_like(lambda: jtorch.empty_like(one, memory_format=cl),
                lambda: torch.empty_like(tone, memory_format=tcl))
    raises_like(lambda: one.to(memory_format=jtorch.channels_last_3d),
                lambda: tone.to(memory_format=torch.channels_last_3d))
    raises_like(lambda: t.contiguous(memory_format=jtorch.preserve_format),
                lambda: torch.ones(3, 2).t().contiguous(memory_format=torch.preserve_format))
    raises_like(lambda: jtorch.empty(3, memory_format=jtorch.preserve_format),
                lambda: torch.empty(3, memory_format=torch.preserve_format))
    raises_like(lambda: one.contiguous(memory_format="x"), lambda: tone.contiguous(memory_format="x"))
    raises_like(lambda: one.is_contiguous(memory_format="x"), lambda: tone.is_contiguous(memory_format="x"))
    raises_like(lambda: jtorch.empty(2, layout="x"), lambda: torch.empty(2, layout="x"))
    for fn in (jtorch.empty, jtorch.zeros, jtorch.ones):
        assert fn(2, layout=jtorch.strided).layout is jtorch.strided
    assert jtorch.full((2,), 1.0, layout=jtorch.strided).layout is jtorch.strided
    assert jtorch.ones_like(one, layout=jtorch.strided).layout is jtorch.strided
    with pytest.raises(NotImplementedError, match="sparse_coo"):
        jtorch.zeros(2, layout=jtorch.sparse_coo)


# -- view(dtype) -----------------------------------------------------------------------------

def _view_cases():
    u = lambda m: m.arange(24, dtype=m.uint8).reshape(2, 12)  # noqa: E731
    i32 = lambda m: m.arange(12, dtype=m.int32).reshape(3, 4)  # noqa: E731
    return [
        (u, "int32"), (u, "int16"), (u, "float64"), (u, "float32"),
        (lambda m: m.arange(32, dtype=m.uint8), "complex128"),
        (lambda m: m.arange(6, dtype=m.int32).reshape(2, 3), "uint8"),
        (lambda m: m.arange(6, dtype=m.int32).reshape(2, 3).t(), "uint8"),
        (lambda m: i32(m)[:, 1:3], "int16"), (lambda m: i32(m)[:, 1:3], "int64"),
        (lambda m: i32(m)[::2, 2:], "int64"), (lambda m: i32(m)[:, ::2], "int16"),
        (lambda m: m.arange(12, dtype=m.int32)[1:5], "int64"),
        (lambda m: m.tensor(3, dtype=m.uint8), "int32"), (lambda m: m.tensor(3, dtype=m.int32), "uint8"),
        (lambda m: m.tensor(3, dtype=m.int32), "float32"),
        (lambda m: m.arange(6, dtype=m.uint8), "int32"), (lambda m: u(m).t(), "int32"),
        (lambda m: m.arange(16, dtype=m.uint8)[::2], "int16"),
        (lambda m: m.arange(4.0), "complex64"), (lambda m: m.arange(4.0, dtype=m.float64), "float16"),
        (lambda m: m.tensor([True, False]), "uint8"), (lambda m: m.zeros(0, 4, dtype=m.uint8), "int32"),
        (lambda m: m.zeros(4, 0, dtype=m.uint8), "int32"),
        (lambda m: m.zeros(4, 8, dtype=m.int16)[1:], "int64"),
    ]


@pytest.mark.parametrize("make,dt", _view_cases())
def test_view_dtype_across_item_sizes(make, dt):
    try:
        t = make(torch).view(getattr(torch, dt))
    except RuntimeError as e:
        with pytest.raises(RuntimeError) as je:
            make(jtorch).view(getattr(jtorch, dt))
        assert str(je.value) == str(e)
        return
    j = make(jtorch).view(getattr(jtorch, dt))
    assert j.dtype.name == dt and tuple(j.shape) == tuple(t.shape)
    if t.numel():
        assert j.stride() == t.stride() and j.storage_offset() == t.storage_offset()
        assert j.numpy().tobytes() == t.numpy().tobytes()


def test_view_dtype_shares_storage():
    a = jtorch.ones(2, 4, dtype=jtorch.uint8)
    v = a.view(jtorch.int32)
    assert v.tolist() == [[0x01010101], [0x01010101]]
    v.fill_(0)
    assert a.sum().item() == 0
    w = jtorch.zeros(4, dtype=jtorch.int32).view(jtorch.uint8)
    w[5] = 1
    assert w.view(jtorch.int32).tolist() == [0, 256, 0, 0]


# -- composites and their gradients ----------------------------------------------------------

def _grads(fn, jins, tins):
    """Values and input gradients (of a fixed random weighting of the output) match torch."""
    jout, tout = fn(jtorch, *jins), fn(torch, *tins)
    same(jout.detach(), tout.detach())
    w = np.random.default_rng(0).standard_normal(tuple(tout.shape))
    jg = jtorch.autograd.grad((jout * jtorch.from_numpy(w)).sum(), jins)
    tg = torch.autograd.grad((tout * torch.from_numpy(w)).sum(), tins)
    for a, b in zip(jg, tg):
        same(a, b, rtol=1e-12, atol=1e-12)


def _leaves(*shapes):
    rng = np.random.default_rng(1)
    arrs = [rng.standard_normal(s) for s in shapes]
    return ([jtorch.from_numpy(a.copy()).requires_grad_() for a in arrs],
            [torch.from_numpy(a.copy()).requires_grad_() for a in arrs])


@pytest.mark.parametrize("args", [(), (1,), (-1, 0, 2), (2, -1, -2), (0, 1, 0), (-2, 2, 0)])
def test_diag_embed(args):
    _grads(lambda m, x: m.diag_embed(x, *args), *_leaves((2, 3)))
    _grads(lambda m, x: x.diag_embed(*args), *_leaves((2, 3)))
    raises_like(lambda: jtorch.diag_embed(jtorch.ones(2, 3), 0, 1, 1),
                lambda: torch.diag_embed(torch.ones(2, 3), 0, 1, 1))


@pytest.mark.parametrize("offset", [0, 2, -3])
def test_diagflat(offset):
    _grads(lambda m, x: m.diagflat(x, offset), *_leaves((2, 3)))
    _grads(lambda m, x: x.diagflat(offset), *_leaves(()))


def test_cartesian_prod():
    _grads(lambda m, a, b, c: m.cartesian_prod(a, b, c), *_leaves((2,), (3,), (1,)))
    _grads(lambda m, a, b: m.cartesian_prod(a, b), *_leaves((2,), (0,)))
    same(jtorch.cartesian_prod(jtorch.tensor([1, 2])), torch.cartesian_prod(torch.tensor([1, 2])))
    for args in ((jtorch.ones(2, 2),), (), (jtorch.ones(2), jtorch.ones(2, dtype=jtorch.float64))):
        targs = [torch.from_numpy(a.numpy()) for a in args]
        raises_like(lambda: jtorch.cartesian_prod(*args), lambda: torch.cartesian_prod(*targs))


def test_block_diag():
    _grads(lambda m, a, b, c, d: m.block_diag(a, b, c, d), *_leaves((2, 2), (3,), (), (0, 2)))
    _grads(lambda m, a, b: m.block_diag(a, b), *_leaves((1, 3), (2, 1)))
    same(jtorch.block_diag(), torch.block_diag())
    for parts in (([1.0], [[2]]), (5, [1, 2])):
        j = [jtorch.tensor(p) for p in parts]
        t = [torch.tensor(p) for p in parts]
        same(jtorch.block_diag(*j), torch.block_diag(*t))
    same(jtorch.block_diag(jtorch.ones(2, 2, dtype=jtorch.int32), jtorch.tensor(2.5, dtype=jtorch.float64)),
         torch.block_diag(torch.ones(2, 2, dtype=torch.int32), torch.tensor(2.5, dtype=torch.float64)))
    raises_like(lambda: jtorch.block_diag(jtorch.ones(1), jtorch.ones(2, 2, 2)),
                lambda: torch.block_diag(torch.ones(1), torch.ones(2, 2, 2)))


@pytest.mark.parametrize("r,rep", [(2, False), (3, False), (2, True), (3, True), (1, False), (0, False),
                                   (5, False), (5, True)])
def test_combinations(r, rep):
    if r:  # r == 0 gives a fresh empty tensor, outside the graph in both
        _grads(lambda m, x: m.combinations(x, r, rep), *_leaves((4,)))
    else:
        same(jtorch.combinations(jtorch.arange(4), 0, rep), torch.combinations(torch.arange(4), 0, rep))
    same(jtorch.combinations(jtorch.tensor([], dtype=jtorch.int64), r, rep),
         torch.combinations(torch.tensor([], dtype=torch.int64), r, rep))
    for args in ((jtorch.ones(2, 2),), (jtorch.ones(3), -1)):
        targs = [torch.from_numpy(a.numpy()) if isinstance(a, jtorch.Tensor) else a for a in args]
        raises_like(lambda: jtorch.combinations(*args), lambda: torch.combinations(*targs))


# -- 0-d and index edge cases ----------------------------------------------------------------

def test_index_select_on_0d_input_is_0d():
    for index in ([0], 0):
        same(jtorch.index_select(jtorch.tensor(5.0), 0, jtorch.tensor(index)),
             torch.index_select(torch.tensor(5.0), 0, torch.tensor(index)))
    same(jtorch.tensor(5.0).index_select(-1, jtorch.tensor([0])),
         torch.tensor(5.0).index_select(-1, torch.tensor([0])))
    raises_like(lambda: jtorch.index_select(jtorch.tensor(5.0), 0, jtorch.tensor([0, 0])),
                lambda: torch.index_select(torch.tensor(5.0), 0, torch.tensor([0, 0])))
    _grads(lambda m, x: m.index_select(x, 0, m.tensor([0])), *_leaves(()))


def test_tile_of_0d_with_empty_dims():
    x, tx = jtorch.tensor(5.0), torch.tensor(5.0)
    for dims in ((), (2,), (1, 3)):
        same(jtorch.tile(x, dims), torch.tile(tx, dims))
        same(x.tile(dims), tx.tile(dims))
    y = jtorch.tile(x, ())
    assert y is not x and y.data_ptr() != x.data_ptr()
    same(jtorch.tile(jtorch.tensor([5.0]), ()), torch.tile(torch.tensor([5.0]), ()))
    _grads(lambda m, x: m.tile(x, ()), *_leaves(()))


def test_take_along_dim_without_dim_rejects_negative_indices():
    a, ta = jtorch.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3)
    for idx in ([-1], [6], [-6]):
        raises_like(lambda: jtorch.take_along_dim(a, jtorch.tensor(idx)),
                    lambda: torch.take_along_dim(ta, torch.tensor(idx)))
    same(jtorch.take_along_dim(a, jtorch.tensor([5, 0])), torch.take_along_dim(ta, torch.tensor([5, 0])))
    same(jtorch.take_along_dim(a, jtorch.tensor([[-1], [0]]), 1),  # torch wraps with a dim
         torch.take_along_dim(ta, torch.tensor([[-1], [0]]), 1))


def test_var_rejects_unbiased_with_correction():
    x, tx = jtorch.ones(2), torch.ones(2)
    for fn in ("var", "std"):
        for kw in ({"correction": 0, "unbiased": True}, {"correction": 1, "unbiased": False}):
            with pytest.raises(TypeError) as te:
                getattr(tx, fn)(**kw)
            with pytest.raises(TypeError, match=rf"^{fn}\(\) received an invalid combination of arguments"):
                getattr(x, fn)(**kw)
            with pytest.raises(TypeError, match=rf"^{fn}\(\) received an invalid combination of arguments"):
                getattr(jtorch, fn)(x, 0, **kw)
            assert str(te.value).startswith(f"{fn}() received an invalid combination of arguments")
    for fn in ("var_mean", "std_mean"):
        raises_like(lambda: getattr(jtorch, fn)(x, correction=0, unbiased=True),
                    lambda: getattr(torch, fn)(tx, correction=0, unbiased=True))
    same(x.var(correction=0), tx.var(correction=0))
    same(x.var(unbiased=False), tx.var(unbiased=False))
