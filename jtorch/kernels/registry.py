"""The op registry: one ``OpDef`` record per op, from which every path is derived.

Pointwise ops carry a scalar function (``math`` and ``fastmath`` only, so it compiles under
``njit`` and ``cuda.jit(device=True)``); backends own the loop templates that inline it.
Reductions carry a combine function and an identity. Every other op carries a ``meta`` rule
(argument checks, result geometry: a ``dispatch.Plan``) and hand-written kernels per device
(``kernels["cpu"]``), called by ``dispatch.call``. ``vjp`` holds the gradient rule, written
in jtorch ops.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .jit import njit

# Dtype rules of pointwise ops (what TensorIterator calls its config).
PROMOTE = "promote"          # result = promoted input dtype (add, mul, neg, maximum)
INT_TO_FLOAT = "int_to_float"  # integer/bool results become the default float (exp, true div)
COMPARE = "compare"          # compute in the promoted dtype, output bool (eq, lt, isnan)
LOGICAL = "logical"          # inputs read as bool, output bool (logical_and)
TO_FLOAT32 = "to_float32"    # computed and returned as float32 (a dtype conversion)
TO_FLOAT64 = "to_float64"    # computed and returned as float64

# Input dtype categories (bool=0, int=1, float=2, complex=3) an op accepts.
ALL_CATS = frozenset({0, 1, 2, 3})
REAL_CATS = frozenset({0, 1, 2})
INT_CATS = frozenset({0, 1})
FLOAT_CATS = frozenset({2, 3})


@dataclass(eq=False)
class OpDef:
    """One op: everything eager, autograd, compile and the tests need to know about it."""

    name: str
    family: str  # unary | binary | ternary | reduction | scan | movement | extern
    scalar: Callable | None = None
    complex_scalar: Callable | None = None
    int_scalar: Callable | None = None  # exact integer/bool variant where the float one is not
    # A cheaper float scalar, exact wherever ``fast_ok(*operands)`` holds (sin without the
    # huge-argument reduction, fmod without libm): contiguous loops check each block and run it
    # when every element qualifies.
    fast_scalar: Callable | None = None
    fast_ok: Callable | None = None
    # Pointwise: one of PROMOTE/INT_TO_FLOAT/COMPARE/LOGICAL; reductions and scans: one of
    # the rules in ``defs/reduction.py`` (SUM, SAME, FLOAT, BOOL, INT64).
    dtype_rule: str = PROMOTE
    cats: frozenset = ALL_CATS
    # torch's argument checks of a pointwise op, run before its dtype dispatch:
    # ``check(common_dtype, args)``.
    check: Callable | None = None
    # Reductions and scans: ``map(x)`` per element, ``combine(acc, x)`` over the accumulator
    # dtype from ``identity``, ``post(acc, n)`` per result; ``wide`` accumulates float32 in
    # float64 blocks; ``take(x, acc)`` (cummax/cummin) says when x replaces the running value;
    # ``select`` names the reduction whose combine a value-and-index op (max, argmax) reuses.
    combine: Callable | None = None
    identity: Any = None
    map: Callable | None = None
    post: Callable | None = None
    take: Callable | None = None
    wide: bool = False
    select: str | None = None
    # Every other op: ``meta(*args, **params) -> dispatch.Plan`` and its kernels per device
    # type, ``kernels["cpu"](plan, *args)``; ``dispatch.call`` runs them.
    meta: Callable | None = None
    kernels: dict = field(default_factory=dict)
    # A view op's commonest CPU calls, its meta rule inlined as NumPy does them:
    # ``cpu_view(array, **params)`` returns the view's array, or None for any other call (the
    # plan path then runs). ``dispatch.view`` uses it only where nothing needs the plan: no
    # mode hook and nothing to record (the inlined pointwise path's counterpart).
    cpu_view: Callable | None = None
    # ``cpu_view_kw(array, **params)``: the kwargs the gradient rule reads (the plan's ``kw``)
    # for a call ``cpu_view`` makes, so that a view of a tensor that requires grad is made and
    # recorded without its plan too; None: such calls take the plan path.
    cpu_view_kw: Callable | None = None
    # The output's shape depends on the input's values (nonzero, masked_select, unique): the
    # tracer breaks the graph here.
    data_dependent: bool = False
    # Gradient rule ``vjp(node, grad) -> one grad (or None) per input``, written in jtorch ops;
    # ``node.args``/``node.out``/``node.kw`` hold what ``saves`` names: input positions as
    # digits, "o" for the output ("" saves nothing; None saves every input).
    vjp: Callable | None = None
    saves: str | None = None
    # How many leading outputs' gradients ``vjp`` reads (0: all). The engine passes None for
    # the others instead of zeros made for outputs nothing flowed into (layer_norm's mean and
    # rstd: two allocations and kernel calls per backward otherwise).
    grad_outputs: int = 0
    # torch's grad_fn name ("MulBackward0"), or a function of (inputs, kw) giving it.
    grad_name: str | Callable | None = None
    # The op paired with this one: a pooling forward's backward op and vice versa.
    pair: OpDef | None = None
    differentiable: bool = True
    nparams: int = 0  # trailing scalar parameters (slope, eps): cast, not promoted
    int_div: bool = False  # integer kernels must raise on division by zero
    kernel_name: str = ""  # torch's kernel name used in "... not implemented for" errors
    _node_cls: Any = None  # the autograd node class, cached once named

    def __post_init__(self):
        if not self.kernel_name:
            self.kernel_name = f"{self.name}_cpu"

    def __repr__(self) -> str:
        return f"OpDef({self.name}, {self.family})"

    def __call__(self, *args, **params):
        """Call the op through ``dispatch`` (what a graph node does, like torch's op overloads):
        ``params`` are those the mode hook saw (``out``/``inplace`` for pointwise ops)."""
        d = _dispatch[0]
        if d is None:
            from .. import dispatch as d  # dispatch imports this module

            _dispatch[0] = d
        if self.meta is None:
            return d.pointwise(self, args, **params)
        return d.call(self, *args, **params)


_dispatch = [None]


REGISTRY: dict[str, OpDef] = {}


def register(op: OpDef) -> OpDef:
    if op.name in REGISTRY:
        raise ValueError(f"op {op.name!r} registered twice")
    REGISTRY[op.name] = op
    return op


def get(name: str) -> OpDef:
    return REGISTRY[name]


def _pointwise(family: str, name: str, scalar: Callable, rule: str, kw: dict) -> OpDef:
    op = OpDef(name, family, scalar=scalar, dtype_rule=rule, **kw)
    if op.complex_scalar is None:
        op.cats = op.cats - {3}  # complex needs its own scalar function (cmath)
    return register(op)


def unary(name: str, scalar: Callable, *, rule: str = PROMOTE, **kw) -> OpDef:
    return _pointwise("unary", name, scalar, rule, kw)


def binary(name: str, scalar: Callable, *, rule: str = PROMOTE, **kw) -> OpDef:
    return _pointwise("binary", name, scalar, rule, kw)


def ternary(name: str, scalar: Callable, *, rule: str = PROMOTE, **kw) -> OpDef:
    return _pointwise("ternary", name, scalar, rule, kw)


def reduction(name: str, combine: Callable, identity, **kw) -> OpDef:
    return register(OpDef(name, "reduction", combine=combine, identity=identity, **kw))


def op(name: str, family: str, meta: Callable, cpu: Callable | None = None, **kw) -> OpDef:
    """An op called through ``dispatch.call``: its meta rule and its CPU kernel (views have
    none: the plan's ``View`` is their whole effect)."""
    return register(OpDef(name, family, meta=meta, kernels={} if cpu is None else {"cpu": cpu},
                          **kw))


def defvjp(op: OpDef, vjp: Callable, saves: str | None = None, name: str | None = None) -> None:
    """Attach a gradient rule to ``op`` (``name``: torch's grad_fn name, e.g. "MulBackward0")."""
    op.vjp, op.saves = vjp, saves
    if name is not None:
        op.grad_name = name


def holomorphic(rule: Callable) -> Callable:
    """A rule written as ``g * f'(z)`` made torch's for complex values, ``g * conj(f'(z))``:
    the rules are linear in ``g``, so that is ``conj(rule(conj(g)))`` (a real input of a
    complex result then takes the real part, as its gradient's cast does)."""

    def vjp(c, g):
        if not g.dtype.is_complex:
            return rule(c, g)
        return tuple(None if r is None else r.conj() for r in rule(c, g.conj()))

    vjp.__name__ = getattr(rule, "__name__", "vjp")
    return vjp


_jitted: dict[tuple, Callable] = {}


def scalar_of(name: str, which: str = "scalar") -> Callable:
    """The op's scalar function as an inlined njit function; generated kernels import this."""
    key = (name, which)
    fn = _jitted.get(key)
    if fn is None:

        fn = njit(inline="always", cache=False)(getattr(REGISTRY[name], which))
        _jitted[key] = fn
    return fn
