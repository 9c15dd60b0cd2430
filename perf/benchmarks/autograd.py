"""Autograd costs: a pointwise chain forward+backward, and the bookkeeping of recording one
node on a tiny op (next to the same op without grad, as extra contenders)."""

from __future__ import annotations

import importlib

import numpy as np

from ..harness import Case, register, require_torch
from ._util import functional, rand


def _chain_fwd_bwd(t, x):
    y = (x.sin() * x + x.exp() * 0.5).tanh()
    y.sum().backward()
    x.grad = None


@register("autograd/chain_fwd_bwd", full=(22,), quick=(14,), label="n=2^{}")
def chain_fwd_bwd(p: int) -> Case:
    n = 1 << p
    return Case(functional(_chain_fwd_bwd, [rand(n)], grad=(0,)), kind="memory", bytes=12 * n)


def _no_grad(lib_name: str, a: np.ndarray):
    def make():
        lib = require_torch() if lib_name == "torch" else importlib.import_module(lib_name)
        x, y = lib.from_numpy(a.copy()), lib.from_numpy(a.copy())
        return lambda: x * y
    return make


@register("autograd/record_mul", full=(100,), quick=(100,), label="n={}")
def record_mul(n: int) -> Case:
    """``x * y`` with x requiring grad; ``*_no_grad`` contenders run the same op unrecorded,
    so record cost = t(jtorch) - t(jtorch_no_grad)."""
    a = np.ones(n, np.float32)
    return Case(functional(lambda t, x, y: x * y, [a, a.copy()], grad=(0,)), kind="latency",
                extra={"jtorch_no_grad": _no_grad("jtorch", a), "torch_no_grad": _no_grad("torch", a)})
