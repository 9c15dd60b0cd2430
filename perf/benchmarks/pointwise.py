"""Eager pointwise ops and chains on large float32 tensors (memory-bound: held against the
triad bandwidth at the same footprint)."""

from __future__ import annotations

import numpy as np

from ..harness import Case, register
from ._util import functional, rand

SIZES, QUICK = (20, 22, 24), (16,)


@register("pointwise/add", full=SIZES, quick=QUICK, label="n=2^{}")
def add(p: int) -> Case:
    n = 1 << p
    return Case(functional(lambda t, a, b: a + b, [rand(n), rand(n, seed=1)], numpy=np.add),
                kind="memory", bytes=12 * n)


@register("pointwise/mul_scalar", full=(22,), label="n=2^{}")
def mul_scalar(p: int) -> Case:
    n = 1 << p
    return Case(functional(lambda t, a: a * 0.5, [rand(n)], numpy=lambda a: a * np.float32(0.5)),
                kind="memory", bytes=8 * n)


def _np_sigmoid(x):
    return 1 / (1 + np.exp(-x))


# name -> NumPy version (None: NumPy has none); compute-bound ones (trig, erf) show the math
_UNARY = {"exp": np.exp, "sin": np.sin, "cos": np.cos, "tan": np.tan, "tanh": np.tanh,
          "sigmoid": _np_sigmoid, "erf": None, "erfc": None, "log2": np.log2, "log10": np.log10,
          "log1p": np.log1p, "gelu": None, "mish": None, "softplus": lambda x: np.logaddexp(0, x)}
_FUNCTIONAL = frozenset({"gelu", "mish", "softplus"})  # torch.nn.functional names
_POSITIVE = frozenset({"log2", "log10", "log1p"})


def _lib_fn(t, name: str):
    return getattr(t.nn.functional, name) if name in _FUNCTIONAL else getattr(t, name)


def _positive(n: int) -> np.ndarray:
    return np.abs(rand(n)) + np.float32(0.1)


def _unary(name: str):
    @register(f"pointwise/{name}", full=(22,), quick=(16,) if name == "exp" else (),
              label="n=2^{}")
    def case(p: int) -> Case:
        n = 1 << p
        x = _positive(n) if name in _POSITIVE else rand(n)
        return Case(functional(lambda t, a: _lib_fn(t, name)(a), [x], numpy=_UNARY[name]),
                    kind="memory", bytes=8 * n)


for _name in _UNARY:
    _unary(_name)


# binary float ops whose libm versions are scalar calls: the % operator (fmod underneath) and
# hypot, against a divisor / second operand of mixed scale
_BINARY = {"remainder": (lambda t, a, b: a % b, np.remainder),
           "hypot": (lambda t, a, b: t.hypot(a, b), np.hypot)}


def _binary(name: str):
    @register(f"pointwise/{name}", full=(22,), label="n=2^{}")
    def case(p: int) -> Case:
        n = 1 << p
        fn, ref = _BINARY[name]
        return Case(functional(fn, [rand(n, scale=100.0), _positive(n)], numpy=ref),
                    kind="memory", bytes=12 * n)


for _name in _BINARY:
    _binary(_name)


def _chain(t, x):
    return (x.sin() * x + x.exp() * 0.5).tanh()


def _np_chain(x):
    return np.tanh(np.sin(x) * x + np.exp(x) * np.float32(0.5))


@register("pointwise/chain", full=SIZES, quick=QUICK, label="n=2^{}")
def chain(p: int) -> Case:
    """tanh(sin(x)*x + exp(x)*0.5): five eager kernels and four temporaries, or one fused
    kernel reading x and writing y (the bytes counted)."""
    n = 1 << p
    return Case(functional(_chain, [rand(n)], numpy=_np_chain), kind="memory", bytes=8 * n,
                compile=True)


def _sincos_chain(t, x):
    return t.sin(x) + t.cos(x) * x - t.exp(-x * x)


def _np_sincos_chain(x):
    return np.sin(x) + np.cos(x) * x - np.exp(-x * x)


@register("pointwise/sincos_chain", full=(22, 24), quick=(16,), label="n=2^{}")
def sincos_chain(p: int) -> Case:
    """sin(x) + cos(x)*x - exp(-x*x), x standard normal: the fusion backend's headline chain (six
    eager kernels, or one fused kernel reading x and writing y: the bytes counted)."""
    n = 1 << p
    return Case(functional(_sincos_chain, [rand(n)], numpy=_np_sincos_chain), kind="memory",
                bytes=8 * n, compile=True)
