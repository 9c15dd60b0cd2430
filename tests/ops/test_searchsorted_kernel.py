"""searchsorted / bucketize / isin run one binary-search kernel (``kernels/cpu/search.py``):
sizes whose all-pairs comparison would need terabytes work, and eager, compiled and vmapped
calls agree with torch even on unsorted sequences (torch's search, step for step)."""

from __future__ import annotations

import numpy as np
import torch

import jtorch


def test_large_inputs_need_no_pairwise_memory():
    rng = np.random.default_rng(0)
    seq = np.sort(rng.standard_normal(400_000)).astype(np.float32)  # pairs: 1.6e11 bytes
    vals = rng.standard_normal(400_000).astype(np.float32)
    for right in (False, True):
        got = jtorch.searchsorted(jtorch.from_numpy(seq), jtorch.from_numpy(vals), right=right)
        want = torch.searchsorted(torch.from_numpy(seq), torch.from_numpy(vals), right=right)
        np.testing.assert_array_equal(got.numpy(), want.numpy())
    te = rng.integers(0, 10**9, 300_000)
    el = np.concatenate([te[:1000], rng.integers(0, 10**9, 300_000)])
    np.testing.assert_array_equal(jtorch.isin(jtorch.from_numpy(el), jtorch.from_numpy(te)).numpy(),
                                  torch.isin(torch.from_numpy(el), torch.from_numpy(te)).numpy())


def test_unsorted_rows_agree_eager_compiled_vmapped_and_torch():
    rng = np.random.default_rng(1)
    seq = rng.integers(-5, 5, (4, 9)).astype(np.float64)  # unsorted rows
    seq[0, 3] = np.nan
    vals = rng.integers(-6, 6, (4, 7)).astype(np.float64)
    want = torch.searchsorted(torch.from_numpy(seq), torch.from_numpy(vals), right=True).numpy()
    s, v = jtorch.from_numpy(seq), jtorch.from_numpy(vals)
    eager = jtorch.searchsorted(s, v, right=True)
    compiled = jtorch.compile(lambda a, b: jtorch.searchsorted(a, b, right=True))(s, v)
    vmapped = jtorch.vmap(lambda a, b: jtorch.searchsorted(a, b, right=True))(s, v)
    for got in (eager, compiled, vmapped):
        np.testing.assert_array_equal(got.numpy(), want)
    isin = jtorch.vmap(lambda a, b: jtorch.isin(a, b))(v, s)
    np.testing.assert_array_equal(
        isin.numpy(), np.stack([torch.isin(torch.from_numpy(vals[i]), torch.from_numpy(seq[i]))
                                .numpy() for i in range(4)]))


def test_meta_and_out_int32():
    m = jtorch.searchsorted(jtorch.empty(3, 5, device="meta"), jtorch.empty(3, 2, device="meta"),
                            out_int32=True)
    assert m.shape == (3, 2) and m.dtype == jtorch.int32 and m.device.type == "meta"
