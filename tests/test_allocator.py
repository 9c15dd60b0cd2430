"""The caching allocator reuses large blocks only after every view of them has died."""

import gc
import os
import platform
import subprocess
import sys

import numpy as np
import pytest

from jtorch import _allocator as A


@pytest.fixture(autouse=True)
def _cache_from_256k(monkeypatch):
    """Cache blocks from 256 KiB, as where malloc is untuned (tuned, only mmap-sized ones)."""
    monkeypatch.setattr(A, "MIN_CACHED_BYTES", 1 << 18)


def test_small_arrays_bypass_cache():
    a = A.empty((10,), np.dtype(np.float32))
    assert a.shape == (10,) and a.dtype == np.float32 and a.flags.owndata


def test_tuned_malloc_serves_everything_below_its_mmap_threshold():
    """Below the mmap threshold freed memory stays in malloc's heap: np.empty is as
    fault-free as the cache and much cheaper per call."""
    code = ("from jtorch import _allocator as A; print(A.TUNED, A.MIN_CACHED_BYTES, "
            "A.MMAP_THRESHOLD)")
    tuned, least, mmap = _run(code)
    if tuned == "True":
        assert least == mmap
    else:
        assert int(least) == 1 << 18


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


_STEP_FAULTS = """
import resource
import jtorch
from jtorch import nn
jtorch.manual_seed(0)
model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                      nn.Linear(256, 10))
opt = jtorch.optim.SGD(model.parameters(), lr=1e-2, momentum=0.9)
x, y = jtorch.randn(128, 784), jtorch.randint(0, 10, (128,))
def step():
    opt.zero_grad()
    nn.functional.cross_entropy(model(x), y).backward()
    opt.step()
for _ in range(10):
    step()
r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(20):
    step()
print(jtorch._allocator.TUNED, (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - r0) / 20)
"""


def _run(code: str, **env) -> list:
    """The words a fresh interpreter prints, run without the caller's MALLOC_* variables."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    full.update(env)
    return subprocess.run([sys.executable, "-c", code], env=full, capture_output=True, text=True,
                          check=True).stdout.split()


@pytest.mark.skipif(platform.system() != "Linux" or platform.libc_ver()[0] != "glibc",
                    reason="malloc tuning is for glibc")
def test_training_steps_do_not_page_fault():
    """With glibc's default trim policy an MLP step faulted ~100 pages (its freed activations
    went back to the kernel and came back each step)."""
    tuned, faults = _run(_STEP_FAULTS)
    assert tuned == "True"
    assert float(faults) < 10


@pytest.mark.skipif(platform.system() != "Linux", reason="glibc's variables")
def test_malloc_env_is_left_to_the_user():
    (tuned,) = _run("import jtorch; print(jtorch._allocator.TUNED)", MALLOC_TOP_PAD_="0")
    assert tuned == "False"


@pytest.mark.parametrize("op", ["mul", "exp", "max_pool"])
def test_leaf_gradients_from_cached_blocks(op):
    """A leaf's gradient in a cached block (an array whose NumPy base is the block, no array):
    the engine tracks it by that block, as any other (it took ``.base`` of the block)."""
    import jtorch

    x = jtorch.randn(4, 8, 48, 48, requires_grad=True)  # 288 KiB: a cached block
    x2 = x.detach().clone().requires_grad_()
    fn = {"mul": lambda t: t * 2, "exp": lambda t: t.exp(),
          "max_pool": lambda t: jtorch.nn.functional.max_pool2d(t, 3, 2, 1)}[op]
    for t in (x, x2):
        fn(t).sum().backward()
    root = x.grad._a
    while isinstance(root, np.ndarray) and root.base is not None:
        root = root.base
    assert isinstance(root, A._Block)
    np.testing.assert_array_equal(x.grad.numpy(), x2.grad.numpy())
    want = {"mul": lambda: np.full(x.shape, 2, np.float32),
            "exp": lambda: np.exp(x.detach().numpy()), "max_pool": None}[op]
    if want is not None:
        np.testing.assert_allclose(x.grad.numpy(), want(), rtol=1e-6)
