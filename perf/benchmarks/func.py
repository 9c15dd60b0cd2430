"""Function transforms: per-example gradients of a 3-layer MLP (``vmap(grad(loss))`` over
``functional_call``) next to the batched forward+backward of the same model (the
``*_batched`` contenders): vmap runs the batch as batched kernel calls, so its time is a
small multiple of the batched step's."""

from __future__ import annotations

import importlib

import numpy as np

from ..harness import Case, Skip, register, require_torch
from ._util import rand

_D, _H, _C = 128, 128, 10


def _model(lib):
    nn = lib.nn
    lib.manual_seed(0)
    return nn.Sequential(nn.Linear(_D, _H), nn.ReLU(), nn.Linear(_H, _H), nn.ReLU(),
                         nn.Linear(_H, _C))


def _data(lib, batch: int):
    y = np.random.default_rng(1).integers(0, _C, batch)
    return lib.from_numpy(rand(batch, _D)), lib.from_numpy(y)


def _per_example(lib, batch: int):
    model = _model(lib)
    params = {k: v.detach() for k, v in model.named_parameters()}
    x, y = _data(lib, batch)
    F = lib.nn.functional

    def loss(p, xi, yi):
        out = lib.func.functional_call(model, p, (xi.unsqueeze(0),))
        return F.cross_entropy(out, yi.unsqueeze(0))

    per = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))
    return lambda: per(params, x, y)


def _batched(lib, batch: int):
    model = _model(lib)
    x, y = _data(lib, batch)
    params = list(model.parameters())
    F = lib.nn.functional
    return lambda: lib.autograd.grad(F.cross_entropy(model(x), y), params)


def _lib(name: str):
    return require_torch() if name == "torch" else importlib.import_module(name)


@register("func/per_example_grads", full=(64,), quick=(16,), label="b{}")
def per_example_grads(batch: int) -> Case:
    def make(rt):
        if rt.name == "numpy" or rt.compile:
            raise Skip("eager function transforms only")
        return _per_example(rt.lib, batch)

    return Case(make, kind="other", extra={
        f"{n}_batched": (lambda n=n: _batched(_lib(n), batch)) for n in ("jtorch", "torch")},
        pairs=(("jtorch", "jtorch_batched"), ("torch", "torch_batched")),
        note=f"MLP {_D}-{_H}-{_H}-{_C}; target: jtorch within 2x of jtorch_batched")
