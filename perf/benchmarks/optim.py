"""Optimizer steps over a ~1M-parameter MLP's parameters (memory-bound): jtorch's kernels
against torch's single-tensor loop (the ``torch`` contender), foreach and fused paths."""

from __future__ import annotations

import math

from ..harness import Case, Skip, register, require_torch
from ._util import rand

SHAPES = [(512, 1024), (512,), (512, 512), (512,), (256, 512), (256,), (10, 256), (10,)]
QUICK_SHAPES = [(64, 64), (64,)]
_CASES = {
    "adam": ("Adam", {"lr": 1e-3}, 4),
    "adam_amsgrad_wd": ("Adam", {"lr": 1e-3, "amsgrad": True, "weight_decay": 1e-2}, 5),
    "sgd_momentum": ("SGD", {"lr": 1e-3, "momentum": 0.9}, 2),
    "adamw": ("AdamW", {"lr": 1e-3}, 4),
}


def _optimizer(lib, shapes, cls, kw):
    ps = []
    for i, s in enumerate(shapes):
        p = lib.nn.Parameter(lib.from_numpy(rand(*s, seed=i)))
        p.grad = lib.from_numpy(rand(*s, seed=100 + i))
        ps.append(p)
    return getattr(lib.optim, cls)(ps, **kw)


def _make(shapes, cls, kw):
    def make(rt):
        if rt.name == "numpy":
            raise Skip("no NumPy version")
        if rt.compile:
            raise Skip("not a compile benchmark")
        return _optimizer(rt.lib, shapes, cls, kw).step
    return make


def _torch_variant(shapes, cls, kw, extra):
    def make():
        torch = require_torch()
        return _optimizer(torch, shapes, cls, {**kw, **extra}).step
    return make


def _opt(name):
    cls, kw, tensors = _CASES[name]

    @register(f"optim/{name}")
    def case() -> Case:
        shapes = SHAPES
        n = sum(math.prod(s) for s in shapes)
        # each state tensor (param, grad, moments) read, and the updated ones written
        return Case(_make(shapes, cls, kw), kind="memory", bytes=tensors * 2 * 4 * n,
                    extra={"torch_foreach": _torch_variant(shapes, cls, kw, {"foreach": True}),
                           "torch_fused": _torch_variant(shapes, cls, kw, {"fused": True})})


for _n in _CASES:
    _opt(_n)


@register("optim/adam_small", full=(), quick=(None,))
def adam_small() -> Case:
    cls, kw, tensors = _CASES["adam"]
    n = sum(math.prod(s) for s in QUICK_SHAPES)
    return Case(_make(QUICK_SHAPES, cls, kw), kind="memory", bytes=tensors * 2 * 4 * n)
