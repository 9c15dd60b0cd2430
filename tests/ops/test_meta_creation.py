"""Creation and conversion on meta tensors: the range factories, eye, triangle indices,
complex/polar, tensor/as_tensor/asarray, ``to``/``clone``/``contiguous``/``copy_``/``fill_``:
meta results have the CPU results' geometry (and torch's meta results'), errors match, and
data reads of meta tensors raise torch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch
from test_op_path import check_meta_matches_cpu

pytestmark = pytest.mark.filterwarnings("ignore")

FACTORIES = [
    lambda L, dev: L.arange(5, device=dev),
    lambda L, dev: L.arange(0, 1, 0.25, device=dev),
    lambda L, dev: L.arange(10, 0, -3, dtype=L.int32, device=dev),
    lambda L, dev: L.arange(0, 5, -1, device=dev),
    lambda L, dev: L.arange(0, 5, 0, device=dev),
    lambda L, dev: L.arange(5, dtype=L.bool, device=dev),
    lambda L, dev: L.linspace(0, 1, 5, device=dev),
    lambda L, dev: L.linspace(0, 1j, 3, device=dev),
    lambda L, dev: L.linspace(0, 10, 4, dtype=L.int64, device=dev),
    lambda L, dev: L.linspace(0, 1, -1, device=dev),
    lambda L, dev: L.logspace(0, 2, 3, device=dev),
    lambda L, dev: L.logspace(0, 2, 3, dtype=L.bool, device=dev),
    lambda L, dev: L.eye(3, device=dev),
    lambda L, dev: L.eye(2, 4, dtype=L.bool, device=dev),
    lambda L, dev: L.eye(-1, device=dev),
    lambda L, dev: L.tril_indices(4, 3, device=dev),
    lambda L, dev: L.triu_indices(4, 5, 1, device=dev),
    lambda L, dev: L.tril_indices(3, 3, -1, dtype=L.int32, device=dev),
    lambda L, dev: L.triu_indices(0, 3, device=dev),
    lambda L, dev: L.scalar_tensor(3, device=dev),
    lambda L, dev: L.tensor([[1, 2], [3, 4]], device=dev),
    lambda L, dev: L.as_tensor([1.0, 2.0], device=dev),
    lambda L, dev: L.asarray([1, 2], dtype=L.float64, device=dev),
    lambda L, dev: L.full((2, 3), 1.5, device=dev),
    lambda L, dev: L.zeros(2, 3, device=dev).t().contiguous(),
]


@pytest.mark.parametrize("case", range(len(FACTORIES)))
def test_factories_match_cpu_and_torch_meta(case):
    fn = FACTORIES[case]
    try:
        c = fn(jtorch, "cpu")
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)) as got:
            fn(jtorch, "meta")
        assert str(got.value) == str(e)
        return
    m = fn(jtorch, "meta")
    t = fn(torch, "meta")
    assert m.is_meta
    assert (tuple(c.shape), c.dtype, c.stride()) == (tuple(m.shape), m.dtype, m.stride())
    assert (tuple(t.shape), str(t.dtype), t.stride()) == (tuple(m.shape), str(m.dtype), m.stride())


def _x(shape=(3, 4), dtype=jtorch.float32, variant="contiguous"):
    a = np.random.default_rng(0).standard_normal(shape[::-1] if variant != "contiguous" else shape)
    t = jtorch.tensor(a, dtype=dtype)
    if variant == "noncontig":
        return t.t()
    if variant == "strided":
        return t.t()[::2]
    return t


@pytest.mark.parametrize("variant", ["contiguous", "noncontig", "strided"])
def test_conversions_meta_matches_cpu(variant):
    x = _x(variant=variant)
    xi = _x(dtype=jtorch.int64, variant=variant)
    y = _x(variant=variant)
    calls = [
        (lambda t: t.to(jtorch.float64), [x]), (lambda t: t.float(), [x]),
        (lambda t: t.long(), [x]), (lambda t: t.half(), [x]), (lambda t: t.bool(), [xi]),
        (lambda t: t.to(jtorch.int32, copy=True), [x]), (lambda t: t.to(copy=True), [x]),
        (lambda t: t.to(t), [x]), (lambda t: t.type(jtorch.float64), [x]),
        (lambda t, o: t.type_as(o), [x, xi]),
        (lambda t: t.clone(), [x]), (lambda t: jtorch.clone(t), [x]),
        (lambda t: t.clone(memory_format=jtorch.contiguous_format), [x]),
        (lambda t: t.contiguous(), [x]),
        (lambda t, s: t.copy_(s), [x, y]), (lambda t, s: t.copy_(s), [x, xi]),
        (lambda t, s: t.copy_(s[0]), [x, y]), (lambda t, s: t[0].copy_(s), [x, y]),
        (lambda t: t.fill_(2), [x]), (lambda t: t.fill_(jtorch.tensor(2.0)), [x]),
        (lambda t: t.fill_(jtorch.ones(2)), [x]), (lambda t: t.zero_(), [x]),
        (lambda t: t.cfloat().real, [x]), (lambda t: t.cfloat().imag, [x]),
        (lambda t: t.cdouble().conj(), [x]), (lambda t: t.imag, [x]),
        (lambda t, s: jtorch.complex(t, s), [x, y]), (lambda t, s: jtorch.polar(t, s), [x, y]),
        (lambda t, s: jtorch.complex(t, s), [x, xi]),
        (lambda t: t.new_tensor([1, 2]), [x]),
        (lambda t: jtorch.as_tensor(t, dtype=jtorch.float64), [x]),
        (lambda t: jtorch.tensor(t), [x]),
    ]
    for fn, args in calls:
        check_meta_matches_cpu(fn, args)


def test_device_moves():
    for make in (lambda L: L.empty(4, 3).t()[::2], lambda L: L.empty(2, 3).t(),
                 lambda L: L.empty(2, 3)[:, 1:]):
        m, t = make(jtorch).to("meta"), make(torch).to("meta")
        assert m.is_meta and (m.shape, m.stride()) == (t.shape, t.stride())
    m = _x().to("meta")
    for fn in (lambda: m.to("cpu"), lambda: m.cpu(), lambda: m.tolist(),
               lambda: jtorch.zeros(3, 4)[:, :2].copy_(jtorch.zeros(3, 2, device="meta"))):
        with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor; no data!"):
            fn()
    # CPU data copied into meta: nothing to write, as in torch
    z = jtorch.zeros(3, device="meta")
    assert z.copy_(jtorch.ones(3)) is z
    with pytest.raises(RuntimeError, match="Tensor.item"):
        jtorch.tensor([z[0], z[1]])


def test_out_variants_of_factories_on_meta():
    out = jtorch.empty(0, device="meta")
    assert jtorch.arange(4, out=out) is out and out.shape == (4,) and out.dtype is jtorch.float32
    o2 = jtorch.empty(0, dtype=jtorch.int64, device="meta")
    assert jtorch.randint(3, (2, 2), out=o2) is o2 and o2.shape == (2, 2)
