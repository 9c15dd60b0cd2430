"""Optimizer steps over a ~1M-parameter MLP's parameters (memory-bound): jtorch's kernels
against torch's single-tensor loop (the ``torch`` contender), foreach and fused paths.

The ``optim/model_*`` cases step a model's worth of parameters (20 tensors of five layers,
~330k elements): jtorch's multi-tensor kernel (one call per group) against its per-parameter
path (``jtorch_single``: ``foreach=False``), torch's default, foreach and fused steps, and a
NumPy step of in-place ufuncs per tensor."""

from __future__ import annotations

import math

import numpy as np

from ..harness import Case, Skip, register, require_torch
from ._util import rand

SHAPES = [(512, 1024), (512,), (512, 512), (512,), (256, 512), (256,), (10, 256), (10,)]
QUICK_SHAPES = [(64, 64), (64,)]
# five blocks of linear weight, bias and a norm's weight and bias: 20 tensors, 331,520 elements
MODEL_SHAPES = [s for _ in range(5) for s in ((256, 256), (256,), (256,), (256,))]
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


def _numpy_step(shapes, cls, kw):
    """torch's single-tensor Adam / SGD-momentum in NumPy: in-place ufuncs per tensor (float32
    scalars, as torch casts them)."""
    ps = [rand(*s, seed=i) for i, s in enumerate(shapes)]
    gs = [rand(*s, seed=100 + i) for i, s in enumerate(shapes)]
    f32, lr, t = np.float32, kw["lr"], [0]
    if cls == "SGD":
        bufs = [None] * len(ps)
        mom = f32(kw["momentum"])

        def sgd():
            for i, (p, g) in enumerate(zip(ps, gs)):
                if bufs[i] is None:
                    bufs[i] = g.copy()
                else:
                    bufs[i] *= mom
                    bufs[i] += g
                p -= f32(lr) * bufs[i]
        return sgd
    ms = [np.zeros_like(p) for p in ps]
    vs = [np.zeros_like(p) for p in ps]
    tmp = [np.empty_like(p) for p in ps]
    b1, b2, eps = 0.9, 0.999, 1e-8

    def adam():
        t[0] += 1
        bc1, bc2s = 1 - b1 ** t[0], (1 - b2 ** t[0]) ** 0.5
        for p, g, m, v, d in zip(ps, gs, ms, vs, tmp):
            m += f32(1 - b1) * (g - m)
            v *= f32(b2)
            np.multiply(g, g, out=d)
            d *= f32(1 - b2)
            v += d
            np.sqrt(v, out=d)
            d /= f32(bc2s)
            d += f32(eps)
            np.divide(m, d, out=d)
            d *= f32(-lr / bc1)
            p += d
    return adam


_MODEL_CASES = {"adam": ("Adam", {"lr": 1e-3}, 4), "sgd_momentum": ("SGD", {"lr": 1e-3, "momentum": 0.9}, 2)}


def _model(name):
    cls, kw, tensors = _MODEL_CASES[name]

    def make(rt):
        if rt.compile:
            raise Skip("not a compile benchmark")
        if rt.name == "numpy":
            return _numpy_step(MODEL_SHAPES, cls, kw)
        return _optimizer(rt.lib, MODEL_SHAPES, cls, kw).step

    @register(f"optim/model_{name}", quick=(None,))
    def case() -> Case:
        n = sum(math.prod(s) for s in MODEL_SHAPES)
        return Case(make, kind="memory", bytes=tensors * 2 * 4 * n,
                    extra={"jtorch_single": _jtorch_variant(MODEL_SHAPES, cls, kw,
                                                            {"foreach": False}),
                           "torch_foreach": _torch_variant(MODEL_SHAPES, cls, kw,
                                                           {"foreach": True}),
                           "torch_fused": _torch_variant(MODEL_SHAPES, cls, kw, {"fused": True})})


def _jtorch_variant(shapes, cls, kw, extra):
    def make():
        import jtorch

        return _optimizer(jtorch, shapes, cls, {**kw, **extra}).step
    return make


for _n in _MODEL_CASES:
    _model(_n)
