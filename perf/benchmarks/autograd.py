"""Autograd costs: a pointwise chain forward+backward, and the bookkeeping of recording one
node on a tiny op (next to the same op without grad, as extra contenders)."""

from __future__ import annotations

import importlib

import numpy as np

from ..harness import Case, Skip, register, require_torch
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


# -- per-op cost with autograd, by the op families a transformer uses ----------------------------
# Shapes are minGPT's (batch 64, sequence 6, width 48, 3 heads): small tensors, where the
# Python cost of recording and of the backward walk is most of an op's time.

def _families(lib) -> dict:
    """name -> (inputs as NumPy arrays (requiring grad where float), fn(lib, *tensors))."""
    F = lib.nn.functional
    r = np.random.default_rng(0)
    x = r.standard_normal((64, 6, 48)).astype(np.float32)
    h = r.standard_normal((64, 6, 192)).astype(np.float32)
    q = r.standard_normal((64, 3, 6, 16)).astype(np.float32)
    att = r.standard_normal((64, 3, 6, 6)).astype(np.float32)
    w = (r.standard_normal((144, 48)) * 0.1).astype(np.float32)
    b = r.standard_normal(144).astype(np.float32)
    ln_w, ln_b = np.ones(48, np.float32), np.zeros(48, np.float32)
    table = r.standard_normal((3, 48)).astype(np.float32)
    idx = r.integers(0, 3, (64, 6)).astype(np.int64)
    logits = r.standard_normal((384, 3)).astype(np.float32)
    tgt = r.integers(0, 3, 384).astype(np.int64)
    mask = np.tril(np.ones((6, 6), np.float32)).reshape(1, 1, 6, 6) == 0
    return {
        "add": ([x, x.copy()], lambda t, a, c: a + c),
        "mul": ([x, x.copy()], lambda t, a, c: a * c),
        "linear": ([x, w, b], lambda t, a, ww, bb: F.linear(a, ww, bb)),
        "bmm": ([q, q.copy()], lambda t, a, c: a @ c.transpose(-2, -1)),
        "softmax": ([att], lambda t, a: F.softmax(a, dim=-1)),
        "layer_norm": ([x, ln_w, ln_b], lambda t, a, ww, bb: F.layer_norm(a, (48,), ww, bb)),
        "gelu": ([h], lambda t, a: F.gelu(a)),
        "dropout": ([h], lambda t, a: F.dropout(a, 0.1, True)),
        "masked_fill": ([att, mask], lambda t, a, m: a.masked_fill(m, float("-inf"))),
        "view_transpose": ([x], lambda t, a: a.view(64, 6, 3, 16).transpose(1, 2)),
        "reshape": ([x], lambda t, a: a.transpose(0, 1).reshape(6, -1)),
        "embedding": ([table, idx], lambda t, ww, i: F.embedding(i, ww)),
        "cross_entropy": ([logits, tgt], lambda t, a, y: F.cross_entropy(a, y)),
    }


FAMILIES = ("add", "mul", "linear", "bmm", "softmax", "layer_norm", "gelu", "dropout",
            "masked_fill", "view_transpose", "reshape", "embedding", "cross_entropy")


def _family_make(name: str, phase: str, lib_name: str | None = None):
    """A thunk for one family: ``phase`` "step" (forward, then backward of the output against
    a fixed upstream gradient), "forward" (recorded, no backward) or "no_grad"."""

    def make(rt=None):
        lib = rt.lib if rt is not None else (
            require_torch() if lib_name == "torch" else importlib.import_module(lib_name))
        arrays, fn = _families(lib)[name]
        ts = [lib.from_numpy(a.copy()) for a in arrays]
        for t in ts:
            if t.is_floating_point() and phase != "no_grad":
                t.requires_grad_()
        g = fn(lib, *ts)
        g = lib.from_numpy(np.random.default_rng(1).standard_normal(tuple(g.shape))
                           .astype(np.float32))
        if phase == "no_grad":
            def run():
                with lib.no_grad():
                    return fn(lib, *ts)
        elif phase == "forward":
            def run():
                return fn(lib, *ts)
        else:
            def run():
                fn(lib, *ts).backward(g)
                for t in ts:
                    t.grad = None
        return run

    return make


@register("autograd/record_per_family", full=FAMILIES, quick=FAMILIES, label="{}")
def record_per_family(name: str) -> Case:
    """The op forward with recording and its backward (the headline), broken down by the
    extra contenders: ``*_forward`` (recorded forward only) and ``*_no_grad`` (the kernel
    path alone). Recording costs forward - no_grad; the backward walk, step - forward."""
    make = _family_make(name, "step")

    def main(rt):
        if rt.name == "numpy" or rt.compile:
            raise Skip("eager autograd: jtorch and torch")
        return make(rt)

    extra = {f"{lib}_{phase}": (lambda lib=lib, phase=phase: _family_make(name, phase, lib)())
             for lib in ("jtorch", "torch") for phase in ("forward", "no_grad")}
    return Case(main, kind="latency", extra=extra)
