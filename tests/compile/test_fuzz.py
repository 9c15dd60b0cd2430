"""A differential fuzzer: random programs of registry ops run compiled, eager and in torch.

Hypothesis draws a small program over one to three input tensors (a main shape with bias,
per-row, 0-d and strided operands; pointwise ops, comparisons and ``where``, reductions,
scans, softmax, layer norm, variances, casts, views and shape ops, matmul, in-place ops on
clones and on the inputs) and writes it as Python source, which is what a failure prints.
The same source runs under ``jtorch``, eagerly and compiled with the default "numba" backend,
and under ``torch``. The compiled function is called again on new values (the cached graph
replays) and, for some programs, at larger sizes (dynamic shapes).

A result that no reduction fed is compiled bitwise eager (nan positions, signed zeros,
dtype, shape), and so are the inputs a program writes. A result that went through a
reduction, whose order of accumulation is each implementation's own, agrees within
rounding, judged against torch in float64 where a cancellation amplified it. Eager agrees
with torch in dtype, shape and value, and raises where torch raises.

The default run draws the same examples each time (their kernels are then cached on disk);
``JTORCH_FUZZ=<n>`` draws n fresh ones.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from dataclasses import dataclass

import numpy as np
import pytest
import torch
from helpers import raises_like
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jtorch
import jtorch.nn.functional as JF
from jtorch import _flags

_FUZZ = int(os.environ.get("JTORCH_FUZZ", "0"))

_FLOATS = ("float32", "float64")
_EPS = {"float32": 2.0**-23, "float64": 2.0**-52}
_MAX_NUMEL = 200_000  # no broadcast grows a value past this


# -- known bugs: the steps that would hit them are not drawn ----------------------------------

_MOMENTS_BUG = ("the compiled layer_norm (its decomposition) squares float32 deviations in "
                "float32, as torch's kernel does: past |x - mean| ~ 1.8e19 the variance "
                "overflows to inf and the result is 0 (torch's: 0 or nan), where eager's kernel "
                "(float64 moments) normalises; squares in float64 cost the compiled layer norm "
                "13% (var and std take them: torch's std is finite there)")


# -- programs ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Val:
    """A value the program can read: a name (``v3``, ``x1``) or a view of one (``x1.t()``)."""

    expr: str
    shape: tuple
    dtype: str
    approx: bool = False  # a reduction fed it: its rounding is each implementation's own
    contig: bool = True  # row-major (``.view`` may reshape it)
    base: str | None = None  # the input it is a view of
    fuzzy: bool = False  # an op that is not correctly rounded fed it: torch may differ by ulps
    loose: bool = False  # a discontinuous op read a fuzzy value: torch may differ by anything
    big: bool = False  # may exceed 1e15 (huge inputs, exp, products...)
    coarse: str = ""  # the least precise float dtype its values went through (their rounding)

    @property
    def numel(self) -> int:
        return math.prod(self.shape)


def _role_shape(role: str, S: tuple) -> tuple:
    """An input's shape for the main shape ``S``: the main one, a bias, a value per row..."""
    C = S[-1] if S else 1
    return {"same": S, "scalar": (), "bias": (C,), "row": S[:-1] + (1,), "bias2": (1, C),
            "vec": S[:-1], "wide": S[:-1] + (C + 1,), "flat": (math.prod(S),),
            "tall": (2 * S[0],) + S[1:] if S else (), "T": S[::-1]}[role]


def _roles(S: tuple) -> list:
    """(role, views of such an input that have the main shape ``S`` or broadcast to it)."""
    nd = len(S)
    out = [("same", []), ("scalar", [])]
    if nd >= 1:
        out += [("bias", []), ("row", []), ("wide", [("{x}[..., 1:]", S)]),
                ("flat", [("{x}.view({S})", S), ("{x}.reshape({S})", S)]), ("tall", [("{x}[::2]", S)])]
    if nd >= 2:
        rev = "{x}.t()" if nd == 2 else f"{{x}}.permute{tuple(range(nd))[::-1]}"
        out += [("T", [(rev, S)]), ("bias2", []), ("vec", [("{x}.unsqueeze(-1)", S[:-1] + (1,))])]
    return out


def _grown(S: tuple, by: int) -> tuple:
    """``S`` with its dims longer than one grown by ``by``: broadcasts and equal dims hold."""
    return tuple(d + by if d > 1 else d for d in S)


@dataclass(frozen=True)
class Program:
    """A drawn program: its inputs, its source lines, and how its inputs are filled."""

    S: tuple  # the main shape, x0's
    inputs: tuple  # (role, dtype) per argument x0, x1, ...
    lines: tuple
    outs: tuple  # the returned values (_Val)
    seed: int
    edges: bool  # nan, infinities, signed zeros and huge values among the inputs
    fortran: bool  # the inputs are column-major (strided; the results' layouts follow them)
    grain: int | None  # JTORCH_GRAIN_SIZE for this example: small runs the parallel kernels
    resize: bool  # called again at larger sizes: dynamic shapes
    grad: bool = False  # float inputs require grad: results, then gradients of their sum
    dynamic: bool = False  # compiled with dynamic=True: symbolic sizes from the first call

    def source(self) -> str:
        args = ", ".join(f"x{j}" for j in range(len(self.inputs)))
        body = [f"    {line}" for line in self.lines]
        ret = ", ".join(o.expr for o in self.outs)
        return "\n".join([f"def f({args}):", *body, f"    return ({ret},)"])

    def __repr__(self) -> str:
        ins = ", ".join(f"x{j}: float" if r == "number" else f"x{j}: {d}{list(_role_shape(r, self.S))}"
                        for j, (r, d) in enumerate(self.inputs))
        opts = (f"seed={self.seed}, edges={self.edges}, fortran={self.fortran}, "
                f"grain={self.grain}, resize={self.resize}, grad={self.grad}, "
                f"dynamic={self.dynamic}")
        return f"\n# {ins}\n# {opts}\n{self.source()}\n"

    def _repr_pretty_(self, p, cycle) -> None:  # hypothesis prints the source, not the fields
        p.text(repr(self))

    def calls(self) -> list:
        """(main shape, seed) per call: a new graph, its replay, then larger sizes."""
        out = [(self.S, self.seed), (self.S, self.seed + 1)]
        if self.resize:
            out += [(_grown(self.S, 1), self.seed + 2), (_grown(self.S, 3), self.seed + 3)]
        return out

    def arrays(self, S: tuple, seed: int) -> list:
        """The arguments for main shape ``S``: arrays, and Python floats for "number" inputs
        (a new value each call: the compiled function guards on it)."""
        rng = np.random.default_rng(seed)
        return [float(rng.choice([0.5, -1.25, 3.0, 1e-3])) if r == "number" else
                _fill(rng, _role_shape(r, S), d, self.edges) for r, d in self.inputs]


def _fill(rng, shape: tuple, dtype: str, edges: bool) -> np.ndarray:
    n = math.prod(shape)
    if dtype == "int64":
        a = rng.integers(-9, 10, n)
        if edges and n:  # (products of the last two wrap: to 0, to a negative)
            a[rng.integers(0, n, max(1, n // 8))] = rng.choice([0, 4096, -4096, 2**32,
                                                                 3037000500])
        return a.reshape(shape)
    a = (rng.standard_normal(n) * rng.choice([0.5, 2.0, 10.0])).astype(dtype)
    if edges and n:
        big = 3e38 if dtype == "float32" else 1e300
        special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, big, -big, 1e-40, 88.0, -100.0],
                           dtype=dtype)
        at = rng.integers(0, n, max(1, n // 6))
        a[at] = rng.choice(special, len(at))
    return a.reshape(shape)


class _Builder:
    """The program being drawn: its pool of readable values and its lines."""

    def __init__(self, draw, resize: bool) -> None:
        self.draw = draw
        self.resize = resize
        self.pool: list = []
        self.lines: list = []
        self.k = 0
        self.numbers: list = []  # the arguments that are Python floats
        self.grad = False  # the inputs require grad: no writes to them

    def pick(self, pred=lambda v: True) -> _Val | None:
        c = [v for v in self.pool if pred(v)]
        return self.draw(st.sampled_from(c)) if c else None

    def choice(self, xs):
        return self.draw(st.sampled_from(list(xs)))

    def flip(self) -> bool:
        return self.draw(st.booleans())

    def size(self, shape_expr: str, value) -> str:
        """A size as the program spells it: a constant, or read off a tensor where the
        program runs at several sizes."""
        return shape_expr if self.resize else str(value)

    def emit(self, expr: str, shape: tuple, dtype: str, args: tuple = (), *, rounds: bool = False,
             step: bool = False, contig: bool = True, base: str | None = None) -> _Val:
        """Append ``v<k> = expr``, an op on the tensors ``args`` (``rounds``: a reduction whose
        rounding is each implementation's own; ``step``: discontinuous)."""
        shape = tuple(shape)
        approx = rounds or any(v.approx for v in args)
        fuzzy = approx or any(v.fuzzy for v in args) or bool(_FUZZY.search(expr))
        loose = any(v.loose for v in args) or (step and any(v.fuzzy or v.approx for v in args))
        big = (any(v.big for v in args) or bool(_GROWS.search(expr))) and not \
            (_BOUNDS.search(expr) and not _GROWS.search(expr))
        name = f"v{self.k}"
        self.k += 1
        self.lines.append(f"{name} = {expr}")
        floats = [v.coarse for v in args] + [dtype]
        coarse = "float32" if "float32" in floats else "float64" if "float64" in floats else ""
        v = _Val(name, shape, dtype, approx, contig, base, fuzzy, loose, big, coarse)
        self.pool.append(v)
        return v


# ops that are not correctly rounded (torch's and jtorch's may differ in the last ulps)
_FUZZY = re.compile(r"\b(exp|exp2|expm1|log|log1p|log2|sin|cos|tanh|sigmoid|gelu|silu|softplus|"
                    r"rsqrt|erf|sinh|asinh|atan|atan2|hardswish|elu|mish|logsigmoid|sinc|"
                    r"softsign|pow|hypot|logaddexp|lerp|addcmul|xlogy|remainder|linspace)\b|\*\*")
# ops whose results may be far larger than their operands, and ops that bound them
_GROWS = re.compile(r"\b(exp|exp2|expm1|sinh|pow|reciprocal|prod|cumprod|linear|addcmul|sum|"
                    r"nansum|cumsum|norm|xlogy)\b|\*|/|@")
_BOUNDS = re.compile(r"\b(clamp|tanh|sigmoid|sin|cos|erf|atan|softsign|hardtanh|relu6|sign|"
                     r"softmax|layer_norm|isnan|isinf|isfinite|signbit|frac)\b")


def _bshape(*shapes) -> tuple | None:
    try:
        s = tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        return None
    return s if math.prod(s) <= _MAX_NUMEL else None


def _cat(d: str) -> int:
    return {"bool": 0, "int64": 1}.get(d, 2)


def _promote(a: _Val, b) -> str:
    """torch's result dtype of a binary op on ``a`` and ``b`` (a _Val or a Python scalar): a
    0-d tensor or a scalar decides it only where it is of a higher category."""
    if not isinstance(b, _Val):
        if isinstance(b, float) and a.dtype not in _FLOATS:
            return "float32"
        return "int64" if a.dtype == "bool" else a.dtype
    if bool(a.shape) != bool(b.shape) and a.dtype != b.dtype:
        dim, zero = (a, b) if a.shape else (b, a)
        if _cat(zero.dtype) <= _cat(dim.dtype):
            return dim.dtype
        return "float32" if zero.dtype in _FLOATS else zero.dtype  # the default dtype
    for d in ("float64", "float32", "int64"):
        if d in (a.dtype, b.dtype):
            return d
    return "bool"


def _floats(d: str) -> str:
    return d if d in _FLOATS else "float32"


def _floats_only(d: str) -> str:
    return d if d in _FLOATS else ""


# Pointwise ops: (source, operand kinds: "f" floats, "i" int64; discontinuous). A
# discontinuous op is not drawn on a rounded (``approx``) value: a last-ulp difference there
# is a different answer, not a rounding.
_UNARY = [
    ("-{a}", "fi", False), ("{a}.abs()", "fi", False), ("torch.exp({a})", "f", False),
    ("torch.log({a}.abs() + 1)", "f", False), ("torch.sin({a})", "f", False),
    ("{a}.cos()", "f", False), ("torch.tanh({a})", "f", False), ("torch.sigmoid({a})", "f", False),
    ("torch.relu({a})", "fi", False), ("torch.sqrt({a}.abs())", "f", False),
    ("F.gelu({a})", "f", False), ("F.gelu({a}, approximate='tanh')", "f", False),
    ("F.silu({a})", "f", False), ("F.softplus({a})", "f", False), ("{a}.clamp(-1.5, 2.0)", "f", False),
    ("{a}.clamp(-3, 5)", "i", False), ("{a} * {a}", "fi", False), ("{a} ** 2", "fi", False),
    ("{a}.pow(3)", "fi", False), ("{a}.abs() ** 0.5", "f", False),
    ("torch.rsqrt({a}.abs() + 0.5)", "f", False), ("1 / {a}", "f", False),
    ("{a} * 0.5 - 1", "f", False), ("torch.erf({a})", "f", False), ("torch.expm1({a})", "f", False),
    ("torch.log1p({a}.abs())", "f", False), ("torch.log2({a}.abs() + 1)", "f", False),
    ("torch.sinh({a})", "f", False), ("torch.asinh({a})", "f", False), ("torch.atan({a})", "f", False),
    ("torch.exp2({a})", "f", False), ("F.hardswish({a})", "f", False), ("F.elu({a})", "f", False),
    ("F.leaky_relu({a}, 0.1)", "f", False), ("F.mish({a})", "f", False),
    ("F.logsigmoid({a})", "f", False), ("F.hardtanh({a})", "f", False), ("torch.sinc({a})", "f", False),
    ("torch.nan_to_num({a})", "f", False), ("{a}.square()", "fi", False), ("F.relu6({a})", "f", False),
    ("F.softsign({a})", "f", False), ("torch.reciprocal({a})", "f", False),
    ("{a}.floor()", "f", True), ("{a}.ceil()", "f", True), ("{a}.trunc()", "f", True),
    ("{a}.round()", "f", True), ("{a}.frac()", "f", True), ("torch.sign({a})", "fi", True),
    ("F.hardshrink({a})", "f", True), ("F.threshold({a}, 0.1, 2.0)", "f", True),
    ("{a} // 3", "i", True), ("{a} % 4", "i", True), ("{a} & 3", "i", True), ("{a} >> 1", "i", True),
    ("~{a}", "i", True), ("torch.bitwise_xor({a}, 5)", "i", True),
]
# Binary ops: (source, operand kinds, discontinuous, same dtypes only)
_BINARY = [
    ("{a} + {b}", "fi", False, False), ("{a} - {b}", "fi", False, False),
    ("{a} * {b}", "fi", False, False), ("{a} / {b}", "fi", False, False),
    ("torch.maximum({a}, {b})", "fi", False, False), ("torch.minimum({a}, {b})", "fi", False, False),
    ("torch.fmax({a}, {b})", "fi", False, False), ("torch.fmin({a}, {b})", "fi", False, False),
    ("torch.pow({a}.abs(), {b})", "f", False, False), ("torch.atan2({a}, {b})", "f", False, False),
    ("torch.hypot({a}, {b})", "f", False, True), ("torch.logaddexp({a}, {b})", "f", False, False),
    ("torch.lerp({a}, {b}, 0.3)", "f", False, True),
    ("torch.addcmul({a}, {a}, {b}, value=0.5)", "f", False, False),
    ("{a}.clamp(min={b})", "f", False, True), ("torch.xlogy({a}.abs(), {b})", "f", False, False),
    ("torch.where({a} > {b}, {a}, {b})", "fi", True, False), ("torch.fmod({a}, {b})", "f", True, False),
    ("torch.remainder({a}, {b})", "f", True, False), ("torch.copysign({a}, {b})", "f", True, False),
    ("torch.heaviside({a}, {b})", "f", True, True), ("{a}.masked_fill({a} < {b}, 0.5)", "f", True, False),
    ("{a} & {b}", "i", True, False), ("{a} | {b}", "i", True, False),
]
_SCALAR_OPS = ("+", "-", "*", "/")
_CMP = (">", "<", ">=", "<=", "==", "!=")


def _kinds(d: str) -> str:
    return "f" if d in _FLOATS else "i" if d == "int64" else "b"


def _unary(b: _Builder, a: _Val):
    ops = [o for o in _UNARY if _kinds(a.dtype) in o[1] and not (o[2] and a.approx)]
    if not ops:
        return None
    src, _, step = b.choice(ops)
    return b.emit(src.format(a=a.expr), a.shape, a.dtype, (a,), step=step, contig=a.contig)


def _operand(b: _Builder, a: _Val, exact: bool, kinds: str = "fi", same: bool = False):
    """Another tensor that broadcasts with ``a`` (a bias, a per-row value, a 0-d tensor...)."""
    return b.pick(lambda v: _kinds(v.dtype) in kinds and _bshape(a.shape, v.shape) is not None and
                  not (exact and v.approx) and (not same or v.dtype == a.dtype))


def _binary(b: _Builder, a: _Val):
    if a.dtype == "bool":
        return None
    if b.flip():  # a Python scalar
        op = b.choice(_SCALAR_OPS + ("**",))
        if op == "**":
            s = b.choice([2, 3, -1, 0.5, 2.5] if a.dtype in _FLOATS else [0, 1, 2, 3])
            expr = f"{a.expr}.abs() ** {s}" if isinstance(s, float) else f"{a.expr} ** {s}"
            return b.emit(expr, a.shape, a.dtype, (a,))
        s = b.choice([0.5, -2.0, 3, 1e-3, 7.25, 0.0, 2] if a.dtype in _FLOATS else [2, -3, 0.5, 1])
        if op == "/" and s == 0 and a.dtype == "int64":
            s = 2
        if b.numbers and b.draw(st.integers(0, 2)):  # a float argument: its value is guarded
            s = b.choice(b.numbers)
        expr = f"{a.expr} {op} {s}" if b.flip() else f"{s} {op} {a.expr}"
        s = 0.5 if isinstance(s, str) else s
        d = _promote(a, s)
        return b.emit(expr, a.shape, _floats(d) if op == "/" else d, (a,))
    ops = [o for o in _BINARY if _kinds(a.dtype) in o[1] and not (o[2] and a.approx)]
    src, kinds, step, same = b.choice(ops)
    other = _operand(b, a, exact=step, kinds=kinds, same=same)
    if other is None:
        return None
    d = _promote(a, other)
    if src.startswith(("{a} /", "torch.atan2", "torch.pow")):
        d = _floats(d)
    if "clamp(min=" in src or "masked_fill" in src:  # a's shape and dtype
        if _bshape(a.shape, other.shape) != a.shape:
            return None
        d = a.dtype
    return b.emit(src.format(a=a.expr, b=other.expr), _bshape(a.shape, other.shape), d,
                  (a, other), step=step)


def _compare(b: _Builder, a: _Val):
    """A mask: a comparison, or isnan / isinf / isfinite / signbit."""
    if a.approx or a.dtype == "bool":
        return None
    if a.dtype in _FLOATS and b.flip():
        fn = b.choice(["torch.isnan({a})", "{a}.isinf()", "torch.isfinite({a})", "torch.signbit({a})"])
        return b.emit(fn.format(a=a.expr), a.shape, "bool", (a,), step=True)
    other = _operand(b, a, exact=True)
    rhs = other.expr if other is not None else b.choice(["0", "0.5", "-1"])
    shape = a.shape if other is None else _bshape(a.shape, other.shape)
    return b.emit(f"{a.expr} {b.choice(_CMP)} {rhs}", shape, "bool",
                  (a,) if other is None else (a, other), step=True)


def _select(b: _Builder, a: _Val):
    """torch.where on a mask from the pool, or the logical ops on masks."""
    m = b.pick(lambda v: v.dtype == "bool" and _bshape(v.shape, a.shape) is not None)
    if m is None:
        return None
    if a.dtype == "bool":
        op = b.choice(["&", "|", "^", "~", "torch.logical_xor"])
        if op == "~":
            return b.emit(f"~{a.expr}", a.shape, "bool", (a,))
        expr = f"{op}({a.expr}, {m.expr})" if op.startswith("torch") else f"{a.expr} {op} {m.expr}"
        return b.emit(expr, _bshape(a.shape, m.shape), "bool", (a, m))
    other = _operand(b, a, exact=False)
    if other is None or _bshape(m.shape, a.shape, other.shape) is None or b.flip():
        s = "0.0" if a.dtype in _FLOATS else "0"
        return b.emit(f"torch.where({m.expr}, {a.expr}, {s})", _bshape(m.shape, a.shape),
                      a.dtype, (m, a))
    return b.emit(f"torch.where({m.expr}, {a.expr}, {other.expr})",
                  _bshape(m.shape, a.shape, other.shape), _promote(a, other), (m, a, other))


def _cast(b: _Builder, a: _Val):
    if a.dtype in ("bool", "int64"):
        d = b.choice(["float32", "float64"] + (["int64"] if a.dtype == "bool" else []))
        spell = b.choice([f".to(torch.{d})", {"float32": ".float()", "float64": ".double()",
                                               "int64": ".long()"}[d]])
        return b.emit(f"{a.expr}{spell}", a.shape, d, (a,), contig=a.contig)
    if not a.approx and b.flip():
        expr = (f"torch.nan_to_num({a.expr}, nan=0.0, posinf=50.0, neginf=-50.0)"
                ".clamp(-50, 50).to(torch.int64)")
        return b.emit(expr, a.shape, "int64", (a,), step=True)
    d = "float64" if a.dtype == "float32" else "float32"
    spell = b.choice([f".to(torch.{d})", ".double()" if d == "float64" else ".float()"])
    return b.emit(f"{a.expr}{spell}", a.shape, d, (a,), contig=a.contig)


def _factory(b: _Builder, a: _Val):
    """A new tensor made in the program (a constant the compiler may fold) combined with
    ``a``."""
    if a.dtype == "bool" or not a.shape:
        return None
    C = a.shape[-1]
    n = b.size(f"{a.expr}.shape[-1]", C)
    src, d = b.choice([(f"torch.arange({n})", "int64"), (f"torch.linspace(-1, 1, {n})", "float32"),
                       (f"torch.ones({n}) * 3", "float32"), ("torch.full_like({a}, 2.0)", "float32"),
                       ("torch.zeros_like({a})", a.dtype)])
    like = "{a}" in src
    made = _Val("", a.shape if like else (C,), _floats(a.dtype) if like and d == "float32" else d)
    op = b.choice(["+", "*", "-"])
    return b.emit(f"{a.expr} {op} {src.format(a=a.expr)}", a.shape, _promote(a, made), (a,))


def _dims(b: _Builder, a: _Val) -> tuple:
    """(dim source text or None, the reduced dims) for one dim, -1, several, or all."""
    nd = len(a.shape)
    how = b.choice(["last", "last", "one", "all", "several"])
    if how == "last":
        return "-1", (nd - 1,)
    if how == "one":
        d = b.draw(st.integers(0, nd - 1))
        return str(d), (d,)
    if how == "several" and nd >= 2:
        ds = tuple(sorted(b.draw(st.sets(st.integers(0, nd - 1), min_size=2, max_size=nd))))
        return str(ds), ds
    return None, tuple(range(nd))


def _kept(shape: tuple, dims: tuple, keepdim: bool) -> tuple:
    return tuple(1 if k in dims else n for k, n in enumerate(shape)) if keepdim else \
        tuple(n for k, n in enumerate(shape) if k not in dims)


def _reduce(b: _Builder, a: _Val):
    if a.dtype == "bool":
        if not a.shape:
            return None
        dim, dims = _dims(b, a)
        if dim is not None and "(" in dim:
            dim, dims = "-1", (len(a.shape) - 1,)
        fn = b.choice(["all", "any"])
        if dim is None:
            return b.emit(f"{a.expr}.{fn}()", (), "bool", (a,))
        return b.emit(f"{a.expr}.{fn}({dim})", _kept(a.shape, dims, False), "bool", (a,))
    if not a.shape:
        return b.emit(f"{a.expr}.sum()", (), a.dtype, (a,))
    f = a.dtype in _FLOATS
    names = ["sum", "sum", "amax", "amin", "prod"] + (["mean", "mean", "nansum", "norm"] if f else [])
    if not a.approx:
        names += ["argmax", "max.values", "count_nonzero"]
    name = b.choice(names)
    dim, dims = _dims(b, a)
    if name in ("prod", "argmax", "max.values") and dim is not None and "(" in dim:
        dim, dims = "-1", (len(a.shape) - 1,)  # one dim only
    if name in ("amax", "amin", "argmax", "max.values") and any(a.shape[k] == 0 for k in dims):
        return None  # torch raises: no identity
    keepdim = b.flip() and name != "count_nonzero"
    kd = ", keepdim=True" if keepdim else ""
    d = {"argmax": "int64", "count_nonzero": "int64"}.get(name, a.dtype)
    rounds = f and name not in ("amax", "amin", "max.values", "argmax", "count_nonzero")
    step = name in ("argmax", "count_nonzero")
    # in [-1, 1] no partial product overflows, in any order
    src = f"{a.expr}.clamp(-1, 1)" if name == "prod" and f else a.expr
    if dim is None:
        name = "amax" if name == "max.values" else name
        return b.emit(f"{src}.{name}()", (), d, (a,), rounds=rounds, step=step)
    if name == "max.values":
        expr = f"{src}.max({dim}{kd}).values"
    elif name == "count_nonzero":
        expr = f"torch.count_nonzero({src}, {dim})"
    elif name == "norm":
        order = b.choice(["1", "3", "-1", "float('inf')"])
        expr = b.choice([f"{src}.norm(dim={dim}{kd})",
                         f"torch.linalg.vector_norm({src}, {order}, {dim}{kd})"])
    elif f and name in ("sum", "mean") and b.draw(st.integers(0, 3)) == 0:
        expr, d = f"{src}.{name}({dim}{kd}, dtype=torch.float64)", "float64"
    else:
        expr = b.choice([f"{src}.{name}({dim}{kd})", f"torch.{name}({src}, dim={dim}{kd})"])
    return b.emit(expr, _kept(a.shape, dims, keepdim), d, (a,), rounds=rounds, step=step)


def _scan(b: _Builder, a: _Val):
    if a.dtype == "bool" or not a.shape:
        return None
    fn = b.choice(["cumsum", "cumprod"] + (["logcumsumexp"] if a.dtype in _FLOATS else []))
    src = f"{a.expr}.clamp(-1, 1)" if fn == "cumprod" and a.dtype in _FLOATS else a.expr
    return b.emit(f"torch.{fn}({src}, {b.choice(['-1', '0'])})", a.shape, a.dtype, (a,),
                  rounds=a.dtype in _FLOATS)


def _composite(b: _Builder, a: _Val):
    """softmax, log_softmax, layer_norm, var/std, logsumexp: the decomposed ops."""
    if a.dtype not in _FLOATS or not a.shape:
        return None
    nd = len(a.shape)
    name = b.choice(["softmax", "log_softmax", "layer_norm", "var", "std", "logsumexp", "var_mean"])
    d = b.choice(["-1", "-1", str(b.draw(st.integers(0, nd - 1)))])
    dk = nd - 1 if d == "-1" else int(d)
    src = a.expr
    if a.big and name == "layer_norm":
        src = f"{a.expr}.clamp(-1e15, 1e15)"  # squares past float32's range: _MOMENTS_BUG
    if name in ("softmax", "log_softmax"):
        expr = b.choice([f"{src}.{name}({d})", f"F.{name}({src}, dim={d})"])
        return b.emit(expr, a.shape, a.dtype, (a,), rounds=True)
    if name == "layer_norm":
        C = a.shape[-1]
        if C == 0:
            return None
        w = b.pick(lambda v: v.shape == (C,) and v.dtype == a.dtype)
        bias = b.pick(lambda v: v.shape == (C,) and v.dtype == a.dtype)
        extra, args = "", [a]
        if w is not None and b.flip():
            extra, args = f", {w.expr}", args + [w]
            if bias is not None and b.flip():
                extra, args = extra + f", {bias.expr}", args + [bias]
        elif bias is not None and b.flip():
            extra, args = f", bias={bias.expr}", args + [bias]
        ns = b.size(f"{a.expr}.shape[-1:]", f"({C},)")
        return b.emit(f"F.layer_norm({src}, {ns}{extra})", a.shape, a.dtype, tuple(args),
                      rounds=True)
    keepdim = b.flip()
    kd = ", keepdim=True" if keepdim else ""
    out = _kept(a.shape, (dk,), keepdim)
    if name == "logsumexp":
        return b.emit(f"torch.logsumexp({src}, {d}{kd})", out, a.dtype, (a,), rounds=True)
    if a.shape[dk] == 0 or a.numel == 0:
        return None  # no degrees of freedom: torch warns
    corr = b.choice(["", ", correction=0", ", unbiased=False"])
    if a.shape[dk] == 1 and not corr:
        corr = ", correction=0"  # no degrees of freedom: torch warns
    if name == "var_mean":
        expr = f"torch.var_mean({src}, {d}{corr}{kd})[{b.choice('01')}]"
    else:
        expr = f"{src}.{name}({d}{corr}{kd})"
    return b.emit(expr, out, a.dtype, (a,), rounds=True)


def _matmul(b: _Builder, a: _Val):
    if a.dtype not in _FLOATS or len(a.shape) not in (2, 3):
        return None
    C = a.shape[-1]
    how = b.choice(["vec", "aat", "ata", "linear"])
    if how == "linear" and len(a.shape) == 2:
        w = b.pick(lambda v: v.dtype == a.dtype and len(v.shape) == 2 and v.shape[1] == C)
        if w is not None:
            K = w.shape[0]
            bias = b.pick(lambda v: v.dtype == a.dtype and v.shape in ((K,), (1, K)))
            if bias is not None and b.flip():
                return b.emit(f"F.linear({a.expr}, {w.expr}, {bias.expr})", (a.shape[0], K),
                              a.dtype, (a, w, bias), rounds=True)
            return b.emit(f"F.linear({a.expr}, {w.expr})", (a.shape[0], K), a.dtype, (a, w),
                          rounds=True)
    if how == "vec":
        w = b.pick(lambda v: v.dtype == a.dtype and (
            v.shape == (C,) or (len(v.shape) == 2 and v.shape[0] == C)))
        if w is not None:
            return b.emit(f"{a.expr} @ {w.expr}", a.shape[:-1] + w.shape[1:], a.dtype, (a, w),
                          rounds=True)
    if how == "aat":
        return b.emit(f"{a.expr} @ {a.expr}.transpose(-1, -2)", a.shape[:-1] + a.shape[-2:-1],
                      a.dtype, (a,), rounds=True)
    return b.emit(f"{a.expr}.mT @ {a.expr}", a.shape[:-2] + (C, C), a.dtype, (a,),
                  rounds=True)


def _view(b: _Builder, a: _Val):
    s, nd = a.shape, len(a.shape)
    kinds = ["unsqueeze", "flatten"]
    if nd >= 2:
        kinds += ["t", "permute", "movedim"]
    if nd >= 1 and s[-1] > 1:
        kinds += ["slice", "narrow"]
    if nd >= 1 and s[0] > 1:
        kinds += ["step", "select"]
    if nd >= 1 and s[-1] == 1:
        kinds += ["expand", "squeeze"]
    kind = b.choice(kinds)
    base = a.base or (a.expr if a.expr.startswith("x") else None)

    def view(expr: str, shape: tuple, contig: bool = False) -> _Val | None:
        return b.emit(expr, shape, a.dtype, (a,), contig=contig, base=base)

    if kind == "unsqueeze":
        d = b.draw(st.integers(0, nd))
        return view(f"{a.expr}.unsqueeze({d})", s[:d] + (1,) + s[d:], a.contig)
    if kind == "flatten":
        how = b.choice([".view(-1)", ".flatten()"]) if a.contig else ".reshape(-1)"
        return view(f"{a.expr}{how}", (a.numel,), True)
    if kind == "t":
        expr = f"{a.expr}.t()" if nd == 2 else f"{a.expr}.transpose(0, -1)"
        return view(expr, (s[-1],) + s[1:-1] + (s[0],))
    if kind == "permute":
        p = tuple(b.draw(st.permutations(range(nd))))
        return view(f"{a.expr}.permute{p}", tuple(s[k] for k in p))
    if kind == "movedim":
        return view(f"{a.expr}.movedim(0, -1)", s[1:] + s[:1])
    if kind == "slice":
        return view(f"{a.expr}[..., 1:]", s[:-1] + (s[-1] - 1,))
    if kind == "narrow":
        return view(f"{a.expr}.narrow(-1, 1, 1)", s[:-1] + (1,))
    if kind == "step":
        return view(f"{a.expr}[::2]", ((s[0] + 1) // 2,) + s[1:])
    if kind == "select":
        return view(f"{a.expr}[1]", s[1:], a.contig)
    if kind == "squeeze":
        return view(f"{a.expr}.squeeze(-1)", s[:-1], a.contig)
    n = b.choice([2, 5])
    return view(f"{a.expr}.expand({', '.join(['-1'] * (nd - 1) + [str(n)])})", s[:-1] + (n,))


def _shape_op(b: _Builder, a: _Val):
    """cat, stack, flip, roll, tril, repeat, chunk, contiguous: copies, not views."""
    if not a.shape:
        return None
    s, nd = a.shape, len(a.shape)
    kind = b.choice(["cat", "stack", "flip", "roll", "tril", "repeat", "chunk", "contiguous"])
    if kind in ("cat", "stack"):
        other = b.pick(lambda v: v.shape == s and (v.dtype == "bool") == (a.dtype == "bool")) or a
        d = b.draw(st.integers(0, nd - 1))
        shape = s[:d] + (2 * s[d],) + s[d + 1:] if kind == "cat" else s[:d] + (2,) + s[d:]
        if math.prod(shape) > _MAX_NUMEL:
            return None
        return b.emit(f"torch.{kind}([{a.expr}, {other.expr}], {d})", shape, _promote(a, other),
                      (a, other))
    if kind == "flip":
        return b.emit(f"{a.expr}.flip(-1)", s, a.dtype, (a,))
    if kind == "roll":
        return b.emit(f"{a.expr}.roll(1, 0)", s, a.dtype, (a,))
    if kind == "tril" and nd >= 2:
        return b.emit(f"{a.expr}.{b.choice(['tril()', 'triu(1)'])}", s, a.dtype, (a,))
    if kind == "repeat" and s[0] * 2 * math.prod(s[1:]) <= _MAX_NUMEL:
        return b.emit(f"{a.expr}.repeat({', '.join(['2'] + ['1'] * (nd - 1))})",
                      (2 * s[0],) + s[1:], a.dtype, (a,))
    if kind == "chunk" and s[-1] >= 2:
        return b.emit(f"{a.expr}.chunk(2, -1)[1]", s[:-1] + (s[-1] // 2,), a.dtype, (a,),
                      contig=False)
    return b.emit(f"{a.expr}.contiguous()", s, a.dtype, (a,))


_INPLACE = ["add_", "mul_", "sub_", "clamp_", "div_", "relu_", "neg_"]


def _inplace_call(b: _Builder, target: str, tshape: tuple, a: _Val, exact: bool, avoid: str | None):
    """An in-place op on ``target`` (of ``a``'s dtype, shape ``tshape``): (line, operand).
    ``exact``: an operand torch computes bitwise alike (an input's new values)."""
    op = b.choice([o for o in _INPLACE if a.dtype in _FLOATS or o not in ("div_", "relu_")])
    if op in ("relu_", "neg_"):
        return f"{target}.{op}()", None
    if op == "clamp_":
        return f"{target}.clamp_(min={0 if a.dtype == 'int64' else 0.25})", None
    other = b.pick(lambda v: v.dtype != "bool" and _bshape(tshape, v.shape) == tshape and
                   (a.dtype in _FLOATS or v.dtype == "int64") and not (exact and v.fuzzy) and
                   (avoid is None or (v.base != avoid and v.expr != avoid and
                                      not v.expr.startswith(avoid + "."))))
    if other is None or b.flip():
        s = b.choice(b.numbers) if b.numbers and a.dtype in _FLOATS and b.flip() else 1.5
        return f"{target}.{op}({2 if a.dtype == 'int64' else s})", None
    return f"{target}.{op}({other.expr})", other


def _inplace(b: _Builder, a: _Val):
    """``y = a.clone()`` and an in-place op on it (or on a view of it)."""
    if a.dtype == "bool":
        return None
    name = f"v{b.k}"
    target, tshape = name, a.shape
    if a.shape and a.shape[-1] > 1 and b.flip():
        target, tshape = f"{name}[..., ::2]", a.shape[:-1] + ((a.shape[-1] + 1) // 2,)
    call, other = _inplace_call(b, target, tshape, a, exact=False, avoid=None)
    args = (a,) if other is None else (a, other)
    v = b.emit(f"{a.expr}.clone()", a.shape, a.dtype, args)
    b.lines.append(call)
    return v


def _mutate_input(b: _Builder, a: _Val):
    """An in-place op on an input (or a view of one): the caller sees it."""
    x = b.pick(lambda v: v.expr.startswith("x") and "." not in v.expr and "[" not in v.expr and
               v.dtype != "bool")
    if x is None or b.grad:
        return
    target, tshape = x.expr, x.shape
    if x.shape and x.shape[-1] > 1 and b.flip():
        target, tshape = f"{x.expr}[..., 1:]", x.shape[:-1] + (x.shape[-1] - 1,)
    call, _ = _inplace_call(b, target, tshape, x, exact=True, avoid=x.expr)
    b.lines.append(call)


_STEPS = {"unary": _unary, "binary": _binary, "compare": _compare, "select": _select,
          "cast": _cast, "factory": _factory, "reduce": _reduce, "scan": _scan,
          "composite": _composite, "matmul": _matmul, "view": _view, "shape": _shape_op,
          "inplace": _inplace, "mutate": _mutate_input}
# how often each kind is drawn: pointwise chains most
_WEIGHTS = ["unary"] * 5 + ["binary"] * 5 + ["compare", "select", "select", "cast", "factory"] + \
    ["reduce"] * 3 + ["composite"] * 3 + ["scan", "matmul", "view", "view", "shape", "inplace",
                                          "mutate"]


def _shape(draw) -> tuple:
    if draw(st.integers(0, 19)) == 19:  # rare: past the grain, the kernels' parallel paths
        return draw(st.sampled_from([(600, 300), (3, 250, 200)]))
    nd = draw(st.sampled_from([0, 1, 1, 2, 2, 2, 3, 3]))
    dims = st.integers(1, 9) | st.just(0) if draw(st.integers(0, 9)) == 9 else st.integers(1, 9)
    return tuple(draw(dims) for _ in range(nd))


@st.composite
def _programs(draw) -> Program:
    dtype = draw(st.sampled_from(["float32", "float32", "float32", "float64", "float64", "int64"]))
    S = _shape(draw)
    edges = draw(st.integers(0, 2)) == 2
    resize = math.prod(S) < 10_000 and any(d > 1 for d in S) and draw(st.integers(0, 3)) == 3
    b = _Builder(draw, resize)
    b.grad = dtype in _FLOATS and draw(st.integers(0, 5)) == 5
    inputs = [("same", dtype)]
    b.pool.append(_Val("x0", S, dtype, big=edges, coarse=_floats_only(dtype)))
    for j in range(1, draw(st.integers(1, 3))):
        if draw(st.integers(0, 7)) == 7:
            inputs.append(("number", "float"))
            b.numbers.append(f"x{j}")
            continue
        role, views = draw(st.sampled_from(_roles(S)))
        d = dtype
        if role == "scalar" or draw(st.integers(0, 5)) == 0:
            d = draw(st.sampled_from(["float32", "float64", "int64"]))
        inputs.append((role, d))
        b.pool.append(_Val(f"x{j}", _role_shape(role, S), d, big=edges, coarse=_floats_only(d)))
        for v, vs in views:
            expr = v.format(x=f"x{j}", S=b.size("x0.shape", ", ".join(map(str, S))))
            b.pool.append(_Val(expr, vs, d, contig=".view" in v or ".reshape" in v, base=f"x{j}",
                               big=edges, coarse=_floats_only(d)))
    for _ in range(draw(st.integers(2, 8))):
        kind = draw(st.sampled_from(_WEIGHTS))
        last = b.pool[-1]
        # mostly the newest value: chains, not a heap of dead code
        a = last if draw(st.integers(0, 3)) != 3 else b.pick()
        _STEPS[kind](b, a)
    if b.k == 0 and dtype != "bool":
        _unary(b, b.pool[0])
    named = [v for v in b.pool if v.expr.startswith("v")] or b.pool[:1]
    outs = [named[-1]]
    for v in draw(st.lists(st.sampled_from(b.pool), max_size=2)):
        if v not in outs:
            outs.append(v)
    return Program(S, tuple(inputs), tuple(b.lines), tuple(outs), draw(st.integers(0, 2**16)),
                   edges, draw(st.integers(0, 7)) == 7,
                   64 if draw(st.integers(0, 15)) == 15 else None, resize, b.grad,
                   draw(st.integers(0, 7)) == 7)


# -- running and comparing --------------------------------------------------------------------

def _functions(p: Program) -> tuple:
    """The program as a jtorch function and as a torch function."""
    code = compile(p.source(), "<fuzz program>", "exec")
    fs = []
    for lib, F in ((jtorch, JF), (torch, torch.nn.functional)):
        ns = {"torch": lib, "F": F}
        exec(code, ns)  # noqa: S102  (the program is the test's own source)
        fs.append(ns["f"])
    return tuple(fs)


def _copy(a: np.ndarray, fortran: bool) -> np.ndarray:
    return np.array(a, order="F" if fortran else "C")  # always a copy: the program may write it


def _jt(arrays: list, fortran: bool = False, grad: bool = False) -> list:
    # (an empty array's copy has zero strides: in-place ops write nothing there)
    out = [a if isinstance(a, float) else jtorch.from_numpy(_copy(a, fortran)) for a in arrays]
    return [_wants_grad(t, grad) for t in out]


def _th(arrays: list, fortran: bool = False, grad: bool = False) -> list:
    return [_wants_grad(a if isinstance(a, float) else torch.from_numpy(_copy(a, fortran)), grad)
            for a in arrays]


def _wants_grad(t, grad: bool):
    return t.requires_grad_() if grad and not isinstance(t, float) and t.dtype.is_floating_point \
        else t


def _np(t) -> np.ndarray:
    return t.detach().numpy()


def _backward(outs: tuple) -> None:
    """The sum of the results that need grad, backward (nothing where none does)."""
    parts = [o.sum() for o in outs if o.requires_grad]
    if parts:
        loss = parts[0]
        for x in parts[1:]:
            loss = loss + x
        loss.backward()


def _reference(p: Program, arrays: list, jitter: float = 0.0, seed: int = 0) -> list:
    """The program in torch over float64 copies of its floats (float32 casts made float64):
    the value a float32 result is judged against where roundings differ; then with
    ``p.grad`` the inputs' gradients. ``jitter``: the float inputs moved by up to that much,
    relatively (how much rounding moves a result)."""
    src = p.source().replace("torch.float32", "torch.float64").replace(".float()", ".double()")
    ns = {"torch": torch, "F": torch.nn.functional}
    exec(compile(src, "<fuzz reference>", "exec"), ns)  # noqa: S102
    rng = np.random.default_rng(seed)
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        ins = [_wants_grad(a if isinstance(a, float) else torch.from_numpy(
            np.array(a * (1 + jitter * rng.uniform(-1, 1, a.shape))) if a.dtype.kind == "f"
            else a.copy()), p.grad) for a in arrays]
        outs = ns["f"](*ins)
        if not p.grad:
            return [_np(r) for r in outs]
        if _run(_backward, [outs])[1] is not None:  # torch's own error: compared elsewhere
            return [_np(r) for r in outs] + [None] * len(ins)
        return [_np(r) for r in outs] + [_grad_of(x) for x in ins]
    finally:
        torch.set_default_dtype(old)


def _grad_of(x):
    g = None if isinstance(x, float) else x.grad
    return None if g is None else _np(g)


def _grad_coarse(p: Program) -> str:
    """The rounding of the gradients: float32 if any value was float32."""
    floats = [o.coarse for o in p.outs] + [d for _, d in p.inputs]
    return "float32" if "float32" in floats else "float64"


def _references(p: Program, arrays: list) -> list:
    """Per result, then per input's gradient: (the float64 reference, how far the inputs'
    rounding moves it) or None."""
    coarse = [o.coarse for o in p.outs] + [_grad_coarse(p)] * (len(p.inputs) if p.grad else 0)
    out = [None] * len(coarse)
    ref = _reference(p, arrays)
    for c in set(coarse) - {""}:
        moved = [_reference(p, arrays, _EPS[c] / 2, seed) for seed in (1, 2)]
        for k, ck in enumerate(coarse):
            if ck == c and ref[k] is not None:
                out[k] = (ref[k], np.maximum(*[_dist(m[k], ref[k]) for m in moved]))
    return out


def _bitwise(got, want, what: str) -> None:
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert tuple(got.shape) == tuple(want.shape), f"{what}: shape {got.shape} != {want.shape}"
    g, w = _np(got), _np(want)
    if g.dtype.kind == "f":  # signed zeros alike; a nan's sign is no promise
        nan = np.isnan(g) & np.isnan(w)
        same = nan | ((g == w) & (np.signbit(g) == np.signbit(w)))
    else:
        same = g == w
    if not same.all():
        bad = [tuple(i) for i in np.argwhere(~same)[:5]]
        raise AssertionError(f"{what}: not bitwise equal at {bad}: got {[g[i] for i in bad]}, "
                             f"want {[w[i] for i in bad]}")


def _dist(x: np.ndarray, r: np.ndarray) -> np.ndarray:
    """|x - r| elementwise, 0 where both are the same infinity or nan, inf where one is nan."""
    x, r = np.broadcast_arrays(np.asarray(x, np.float64), np.asarray(r, np.float64))
    with np.errstate(all="ignore"):
        d = np.abs(x - r)
        d = np.where((x == r) | (np.isnan(x) & np.isnan(r)), 0.0, d)
        return np.where(np.isnan(d), np.inf, d)


def _close(g: np.ndarray, w: np.ndarray, ref: tuple | None, others: list, what: str,
           coarse: str = "", scale: float = 0.0) -> None:
    """``g`` agrees with ``w`` within rounding (of ``coarse``, the least precise dtype the
    values went through): equal (nan where it is nan), within a few ulp of the value and of
    the result's scale, or of what rounding the inputs moves the float64 reference by, or no
    farther from the reference than ``w`` and ``others`` are. ``ref``: (the float64
    reference, how far the inputs' rounding moves it), or None. ``scale``: the size of terms
    that may cancel into ``g`` (a gradient of summed results: the results' size), whose
    rounding is then within a few ulp of it."""
    if g.dtype.kind != "f":
        np.testing.assert_array_equal(g, w, err_msg=what)
        return
    eps = _EPS[coarse or g.dtype.name]
    with np.errstate(all="ignore"):
        mag = np.where(np.isfinite(w), np.abs(w), 0.0)
        # ... and subnormal results, which hold few bits, within the smallest normal
        floor = 16 * eps * max(mag.max(initial=0.0), scale) + np.finfo(coarse or g.dtype).tiny
        if ref is not None:
            r, sens = np.asarray(ref[0], np.float64), 8 * ref[1]
            floor = floor + sens
        ok = _dist(g, w) <= 64 * eps * mag + floor
        if ref is not None:
            worst = _dist(w, r)
            for o in others:
                worst = np.maximum(worst, _dist(o, r))
            ok |= _dist(g, r) <= 4 * worst + 4 * eps * np.where(np.isfinite(r), np.abs(r), 0.0) + floor
    if not ok.all():
        bad = [tuple(i) for i in np.argwhere(~ok)[:5]]
        rv = [ref[0][i] for i in bad] if ref is not None else None
        raise AssertionError(f"{what}: not close at {bad}: got {[g[i] for i in bad]}, "
                             f"want {[w[i] for i in bad]}, float64 {rv}")


@contextlib.contextmanager
def _grain(n: int | None):
    old = _flags.GRAIN_SIZE
    if n is not None:
        _flags.GRAIN_SIZE = n
    try:
        yield
    finally:
        _flags.GRAIN_SIZE = old


def _run(f, args: list):
    """(results, None) or (None, the exception)."""
    try:
        return f(*args), None
    except Exception as e:  # noqa: BLE001  (compared with torch's)
        return None, e


def _check(p: Program) -> None:
    fj, ft = _functions(p)
    cf = jtorch.compile(fj, dynamic=True) if p.dynamic else jtorch.compile(fj)
    with np.errstate(all="ignore"), _grain(p.grain):
        for call, (S, seed) in enumerate(p.calls()):
            arrays = p.arrays(S, seed)
            t_in = _th(arrays, p.fortran, p.grad)
            tor, terr = _run(ft, t_in)
            if terr is not None and call >= 2:
                return  # the larger sizes broke a broadcast the program relied on
            e_in = _jt(arrays, p.fortran, p.grad)
            want, err = _run(fj, e_in)
            if terr is not None:
                _same_error(err, terr, "eager", "torch")
                _same_error(_run(cf, _jt(arrays, p.fortran, p.grad))[1], err, "compiled", "eager")
                return
            assert err is None, f"eager raised {err!r}, torch did not"
            c_in = _jt(arrays, p.fortran, p.grad)
            got = cf(*c_in)
            refs = _references(p, arrays)
            where = f"call {call} at x0 {list(S)}"
            _compare(p, got, want, tor, refs, where)
            for j, (c, e, t) in enumerate(zip(c_in, e_in, t_in)):  # inputs the program wrote
                if not isinstance(c, float):
                    _bitwise(c, e, f"compiled vs eager, {where}, input x{j} after the call")
                    _close(_np(e), _np(t), None, [], f"eager vs torch, {where}, input x{j}")
            if p.grad:
                _compare_grads(p, (c_in, e_in, t_in), (got, want, tor), refs[len(p.outs):], where)


def _same_error(err, want, who: str, other: str) -> None:
    assert err is not None, f"{other} raised {want!r}, {who} did not"
    assert isinstance(err, type(want)) or type(want).__name__ in type(err).__name__, \
        f"{who} raised {err!r}, {other} {want!r}"


def _compare(p: Program, got: tuple, want: tuple, tor: tuple, refs: list, where: str) -> None:
    assert len(got) == len(want) == len(tor)
    for k, (g, w, t, o) in enumerate(zip(got, want, tor, p.outs)):
        what = f"{where}, result {k} ({o.expr})"
        assert g.requires_grad == w.requires_grad == t.requires_grad, what
        assert p.grad or not w.requires_grad, what
        assert str(w.dtype) == str(t.dtype), f"{what}: eager {w.dtype}, torch {t.dtype}"
        assert tuple(w.shape) == tuple(t.shape), f"{what}: eager {w.shape}, torch {t.shape}"
        r = refs[k] if w.dtype.is_floating_point else None
        if not o.approx:
            _bitwise(g, w, f"compiled vs eager, {what}")
        else:
            assert g.dtype == w.dtype and tuple(g.shape) == tuple(w.shape), what
            _close(_np(g), _np(w), r, [_np(t)], f"compiled vs eager, {what}", o.coarse)
        if not o.loose:  # else a discontinuous op read ulp-level differences
            _close(_np(w), _np(t), r, [_np(g)], f"eager vs torch, {what}", o.coarse)


def _compare_grads(p: Program, ins: tuple, outs: tuple, refs: list, where: str) -> None:
    """Backward from each library's results: the same inputs get gradients, which agree."""
    errs = [_run(_backward, [o])[1] for o in outs]
    if errs[2] is not None:
        _same_error(errs[1], errs[2], "eager", "torch")
        _same_error(errs[0], errs[1], "compiled", "eager")
        return
    assert errs[0] is None and errs[1] is None, f"{where}: backward raised {errs[:2]}"
    loose = any(o.loose for o in p.outs)  # a mask or a step that torch may set otherwise
    # the backward sums the results: its terms are of their size, and may cancel (softmax's
    # gradient of a constant upstream is 0 up to their rounding)
    scale = max([float(np.abs(np.nan_to_num(_np(o).astype(np.float64), nan=0.0, posinf=0.0,
                                             neginf=0.0)).max(initial=0.0))
                 for o in outs[2] if o.dtype.is_floating_point], default=0.0)
    for j, (c, e, t) in enumerate(zip(*ins)):
        what = f"{where}, gradient of x{j}"
        gs = [_grad_of(x) for x in (c, e, t)]
        assert (gs[0] is None) == (gs[1] is None) == (gs[2] is None), f"{what}: {gs}"
        if gs[0] is None:
            continue
        coarse = _grad_coarse(p)
        _close(gs[0], gs[1], refs[j], [gs[2]], f"compiled vs eager, {what}", coarse, scale)
        if not loose:
            _close(gs[1], gs[2], refs[j], [gs[0]], f"eager vs torch, {what}", coarse, scale)


@settings(max_examples=_FUZZ or 100, deadline=None, derandomize=not _FUZZ, database=None,
          print_blob=bool(_FUZZ), suppress_health_check=[HealthCheck.too_slow,
                                                          HealthCheck.data_too_large])
@given(_programs())
def test_random_programs_compiled_equal_eager_equal_torch(program):
    """Compiled == eager (bitwise where no reduction rounds) and eager == torch."""
    _check(program)


def test_a_failure_prints_the_program_as_source():
    p = Program((3, 4), (("same", "float32"), ("bias", "float32")),
                ("v0 = torch.exp(x0) + x1", "v1 = v0.sum(-1)"),
                (_Val("v1", (3,), "float32", True),), 1, True, False, None, True)
    text = repr(p)
    assert "# x0: float32[3, 4], x1: float32[4]\n" in text
    assert "def f(x0, x1):\n    v0 = torch.exp(x0) + x1\n    v1 = v0.sum(-1)\n    return (v1,)" in text
    _check(p)


def test_a_cancelling_gradient_is_compared_at_its_terms_scale():
    """The fuzzer's own finding: softmax's gradient of a constant upstream is 0 up to the
    rounding of terms of the results' size (eager -5.7e-8, torch 0, float64 -2e-16)."""
    p = Program((3, 4), (("same", "float32"),), ("v0 = x0.softmax(-1)", "v1 = -v0"),
                (_Val("v1", (3, 4), "float32", True),), 0, False, False, None, False, grad=True)
    _check(p)


# -- bugs the fuzzer found: minimal reproducers (strict: each flips when fixed) ---------------

@pytest.mark.parametrize("f", [lambda x: x - x.mean(0), lambda x: JF.softmax(x, dim=0),
                               lambda x: jtorch.logsumexp(x, 0)],
                         ids=["centre", "softmax", "logsumexp"])
def test_a_full_op_may_read_a_reduction_over_the_leading_dims(f):
    x = jtorch.randn(4, 3)
    np.testing.assert_allclose(jtorch.compile(f)(x).numpy(), f(x).numpy(), rtol=1e-6, atol=1e-6)


def test_a_fused_group_reads_its_input_before_the_program_writes_it():
    def f(x, z):
        y = x * 2 + 1
        x.copy_(z)
        return y

    assert jtorch.compile(f)(jtorch.zeros(3), jtorch.ones(3)).tolist() == [1.0, 1.0, 1.0]


def test_an_epilogue_may_follow_a_product_of_a_value_with_itself():
    a = jtorch.randn(3, 3)
    f = lambda a: a @ a + 1
    np.testing.assert_allclose(jtorch.compile(f)(a).numpy(), f(a).numpy(), rtol=1e-6)


@pytest.mark.xfail(strict=True, reason=_MOMENTS_BUG)
def test_compiled_layer_norm_normalises_huge_rows_as_eager():
    x = jtorch.tensor([[0.0, 1e20]])
    f = lambda x: JF.layer_norm(x, (2,))
    assert f(x).tolist() == [[-1.0, 1.0]]
    assert jtorch.compile(f)(x).tolist() == [[-1.0, 1.0]]


def test_std_of_a_float32_row_whose_variance_overflows():
    """torch's float64 moments: a std (or a variance) past float32's squares is finite."""
    x = np.array([[0.0, 1e20], [1.0, 2.0]], dtype=np.float32)
    big = np.full((1, 100), 1e19, np.float32)
    big[0, ::2] = -1e19
    for a in (x, big):
        for f in (lambda t: t.std(-1), lambda t: t.var(-1), lambda t: t.std(-1, keepdim=True),
                  lambda t: (torch if isinstance(t, torch.Tensor) else jtorch).std_mean(t, -1)[0]):
            want = f(torch.from_numpy(a))
            for got in (f(jtorch.from_numpy(a)), jtorch.compile(f)(jtorch.from_numpy(a))):
                np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)
    h = np.array([0.0, 400.0], np.float16)  # (float16's squares overflow at 65504)
    np.testing.assert_allclose(jtorch.from_numpy(h).std().numpy(),
                               torch.from_numpy(h).std().numpy())


def test_a_fused_integer_product_wraps_as_eager():
    """Integer add, sub, mul and neg wrap inside fused loops too, as eager's stored results and
    torch's (Numba's own arithmetic is no-signed-wrap: LLVM folded sign(x * x) to x != 0)."""
    v = [2**32, 3037000500, 5, -2**63]
    for f in (lambda t, x: t.sign(x * x), lambda t, x: t.sign(x.square() + 0),
              lambda t, x: (x + x > x).long(), lambda t, x: ((-x) * 2 > 0).long(),
              lambda t, x: t.sign(x * x * x - x)):
        want = f(torch, torch.tensor(v)).tolist()
        x = jtorch.tensor(v)
        assert f(jtorch, x).tolist() == want
        assert jtorch.compile(lambda x, f=f: f(jtorch, x))(x).tolist() == want


def test_a_negative_norm_of_an_empty_tensor_raises():
    with pytest.raises(RuntimeError, match="cannot compute the -1 norm on an empty tensor"):
        torch.zeros(0).norm(-1)
    with pytest.raises(RuntimeError, match="cannot compute the -1 norm on an empty tensor"):
        jtorch.zeros(0).norm(-1)


def test_a_variance_of_a_slice_at_a_new_size():
    f = lambda x: x[1:].var(-1)
    cf = jtorch.compile(f)
    for n in (5, 6, 8):  # the second size makes the dim dynamic
        x = jtorch.randn(n)
        np.testing.assert_allclose(cf(x).numpy(), f(x).numpy(), rtol=1e-5)


def test_an_in_place_op_on_an_empty_tensor_with_zero_strides():
    """An empty tensor writes nothing: a zero stride is no overlap (torch's check too)."""
    for lib in (torch, jtorch):
        assert lib.zeros(0, 1).expand(0, 3).neg_().shape == (0, 3)
        assert lib.zeros(0, 1).expand(0, 3).copy_(lib.ones(3)).shape == (0, 3)
        assert lib.zeros(0, 1).expand(0, 3).add_(lib.ones(0, 3)).shape == (0, 3)
        assert lib.zeros(0, 1, device="meta").expand(0, 3).copy_(
            lib.ones(3, device="meta")).shape == (0, 3)
        with pytest.raises(RuntimeError, match="more than one element of the written-to"):
            lib.zeros(2, 1).expand(2, 3).neg_()
    empty = jtorch.from_numpy(np.array(np.zeros((0, 3), np.float32)))  # NumPy's 0 strides
    assert empty.mul_(2).shape == (0, 3)


def test_an_in_place_op_on_a_clone_of_an_input_that_requires_grad():
    def f(x):
        y = x.clone()
        y.mul_(2)
        return y

    x = jtorch.randn(3, requires_grad=True)
    jtorch.compile(f)(x).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0, 2.0]


def test_heaviside_of_a_tensor_that_requires_grad():
    t = torch.tensor([1.0, -1.0], requires_grad=True)
    assert torch.heaviside(t, t).requires_grad
    x = jtorch.tensor([1.0, -1.0], requires_grad=True)
    assert jtorch.heaviside(x, x).requires_grad
    f = lambda x: torch.heaviside(x, x).sum() if isinstance(x, torch.Tensor) else \
        jtorch.heaviside(x, x).sum()
    for y in (f(x), jtorch.compile(f)(x)):
        assert y.item() == 1.0
        raises_like(lambda y=y: y.backward(), lambda: f(t).backward())
