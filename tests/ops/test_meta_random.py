"""Random ops on meta tensors: factories give the CPU result's geometry on ``device="meta"``
and draw nothing (the generator does not advance); in-place samplers keep the tensor and
raise the CPU call's argument errors."""

from __future__ import annotations

import numpy as np
import pytest

import jtorch
from test_op_path import check_meta_matches_cpu

pytestmark = pytest.mark.filterwarnings("ignore")

FACTORIES = [
    lambda dev: jtorch.rand(2, 3, device=dev),
    lambda dev: jtorch.rand((2, 3), dtype=jtorch.float64, device=dev, requires_grad=True),
    lambda dev: jtorch.rand(2, dtype=jtorch.complex64, device=dev),
    lambda dev: jtorch.rand(2, dtype=jtorch.int64, device=dev),
    lambda dev: jtorch.randn(4, device=dev),
    lambda dev: jtorch.randn(4, dtype=jtorch.bool, device=dev),
    lambda dev: jtorch.randint(5, (2, 2), device=dev),
    lambda dev: jtorch.randint(3, 5, (2,), dtype=jtorch.float32, device=dev),
    lambda dev: jtorch.randint(5, 2, (2,), device=dev),
    lambda dev: jtorch.randint(0, 300, (2,), dtype=jtorch.uint8, device=dev),
    lambda dev: jtorch.randperm(6, device=dev),
    lambda dev: jtorch.randperm(6, dtype=jtorch.float32, device=dev),
    lambda dev: jtorch.randperm(-1, device=dev),
    lambda dev: jtorch.randperm(3, dtype=jtorch.bool, device=dev),
    lambda dev: jtorch.normal(0.0, 1.0, (3,), device=dev),
    lambda dev: jtorch.normal(0.0, -1.0, (3,), device=dev),
    lambda dev: jtorch.rand(2, generator=3, device=dev),
]


@pytest.mark.parametrize("case", range(len(FACTORIES)))
def test_factories(case):
    fn = FACTORIES[case]
    try:
        c = fn("cpu")
    except Exception as e:  # noqa: BLE001  (the meta call must raise alike)
        with pytest.raises(type(e)) as got:
            fn("meta")
        assert str(got.value) == str(e)
        return
    m = fn("meta")
    assert m.is_meta and not c.is_meta
    assert (tuple(c.shape), c.dtype, c.stride(), c.requires_grad) == \
        (tuple(m.shape), m.dtype, m.stride(), m.requires_grad)


def test_meta_draws_do_not_advance_the_generator():
    g = jtorch.Generator().manual_seed(3)
    start = g.get_state()
    jtorch.rand(5, generator=g, device="meta")
    jtorch.empty(4, device="meta").normal_(generator=g)
    assert g.get_state().equal(start)
    jtorch.rand(5, generator=g)
    assert not g.get_state().equal(start)


def _x(shape=(3, 4), dtype=jtorch.float32, noncontig=False):
    a = np.random.default_rng(0).random(shape[::-1] if noncontig else shape)
    t = jtorch.tensor(a, dtype=dtype)
    return t.t() if noncontig else t


def _calls(nc):
    x = _x(noncontig=nc)
    p = _x(noncontig=nc)
    xi = _x(dtype=jtorch.int64, noncontig=nc)
    return [
        (lambda t: t.uniform_(), [x]), (lambda t: t.uniform_(2, 1), [x]),
        (lambda t: t.uniform_(), [xi]),
        (lambda t: t.normal_(1.0, 2.0), [x]), (lambda t: t.normal_(0, -1), [x]),
        (lambda t: t.random_(), [xi]), (lambda t: t.random_(3, 9), [x]),
        (lambda t: t.random_(5, 2), [xi]), (lambda t: t.random_(0, 300), [xi.byte()]),
        (lambda t: t.bernoulli_(0.3), [x]), (lambda t: t.bernoulli_(2.0), [x]),
        (lambda t, q: t.bernoulli_(q), [x, p]), (lambda t, q: t.bernoulli_(q), [x, p[0]]),
        (lambda t, q: t.bernoulli_(q), [x, p.t() if not nc else p[:, :2]]),
        (lambda t: t.exponential_(2.0), [x]), (lambda t: t.exponential_(-1), [x]),
        (lambda t: t.exponential_(), [xi]),
        (lambda t: t.cauchy_(), [x]), (lambda t: t.log_normal_(), [x]),
        (lambda t: t.geometric_(0.5), [x]), (lambda t: t.geometric_(1.5), [x]),
        (lambda t: jtorch.bernoulli(t), [p]), (lambda t: jtorch.bernoulli(t, 0.5), [p]),
        (lambda t: jtorch.bernoulli(t), [xi]),
        (lambda t: jtorch.multinomial(t, 2), [p]), (lambda t: jtorch.multinomial(t[0], 3), [p]),
        (lambda t: jtorch.multinomial(t, 9), [p]), (lambda t: t.multinomial(2, True), [p]),
        (lambda t: jtorch.normal(t, 1.0), [x]), (lambda t, s: jtorch.normal(t, s), [x, p]),
        (lambda t: jtorch.normal(0.5, t), [p]), (lambda t: jtorch.normal(t, -1.0), [x]),
        (lambda t: jtorch.rand_like(t), [x]), (lambda t: jtorch.randn_like(t, dtype=jtorch.float64), [x]),
        (lambda t: jtorch.randint_like(t, 4), [x]), (lambda t: jtorch.rand_like(t), [xi]),
    ]


@pytest.mark.parametrize("nc", [False, True])
def test_samplers_meta_matches_cpu(nc):
    for fn, args in _calls(nc):
        check_meta_matches_cpu(fn, args)


def test_normal_with_tensor_parameters_has_zero_gradients_as_torch():
    import torch

    m = jtorch.zeros(3, requires_grad=True)
    s = jtorch.ones(3, requires_grad=True)
    y = jtorch.normal(m, s)
    assert type(y.grad_fn).__name__ == "NormalBackward3"
    y.sum().backward()
    assert m.grad.tolist() == [0.0] * 3 and s.grad.tolist() == [0.0] * 3
    tm = torch.zeros(3, requires_grad=True)
    assert type(jtorch.normal(m, 1.0).grad_fn).__name__ == type(torch.normal(tm, 1.0).grad_fn).__name__
