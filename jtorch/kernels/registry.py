"""The op registry: one ``OpDef`` record per op, from which every path is derived.

Pointwise ops carry a scalar function (``math`` and ``fastmath`` only, so it compiles under
``njit`` and ``cuda.jit(device=True)``); backends own the loop templates that inline it.
Reductions carry a combine function and an identity. Extern ops (sort, gather, ...) carry a
hand-written kernel entry. ``vjp`` holds the gradient rule, written in jtorch ops.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

# Dtype rules of pointwise ops (what TensorIterator calls its config).
PROMOTE = "promote"          # result = promoted input dtype (add, mul, neg, maximum)
INT_TO_FLOAT = "int_to_float"  # integer/bool results become the default float (exp, true div)
COMPARE = "compare"          # compute in the promoted dtype, output bool (eq, lt, isnan)
LOGICAL = "logical"          # inputs read as bool, output bool (logical_and)

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
    dtype_rule: str = PROMOTE
    cats: frozenset = ALL_CATS
    # Reductions: combine(acc, x) -> acc over the compute dtype, starting from identity.
    combine: Callable | None = None
    identity: Any = None
    impl: Callable | None = None  # extern ops: the CPU kernel entry
    # Gradient rule ``vjp(node, grad) -> one grad (or None) per input``, written in jtorch ops;
    # ``node.args``/``node.out``/``node.kw`` hold what ``saves`` names: input positions as
    # digits, "o" for the output ("" saves nothing; None saves every input).
    vjp: Callable | None = None
    saves: str | None = None
    ref: Callable | None = None   # NumPy/Python reference used by the registry sweep
    decomposition: Callable | None = None
    # Domain hints for generated tests: e.g. (0.0, None) for log/sqrt.
    domain: tuple | None = None
    differentiable: bool = True
    nparams: int = 0  # trailing scalar parameters (slope, eps): cast, not promoted
    int_div: bool = False  # integer kernels must raise on division by zero
    kernel_name: str = ""  # torch's kernel name used in "... not implemented for" errors
    extra: dict = field(default_factory=dict)

    def __post_init__(self):
        if not self.kernel_name:
            self.kernel_name = f"{self.name}_cpu"

    def __repr__(self) -> str:
        return f"OpDef({self.name}, {self.family})"


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


def extern(name: str, impl: Callable | None = None, **kw) -> OpDef:
    return register(OpDef(name, "extern", impl=impl, **kw))


def defvjp(op: OpDef, vjp: Callable, saves: str | None = None, name: str | None = None) -> None:
    """Attach a gradient rule to ``op`` (``name``: torch's grad_fn name, e.g. "MulBackward0")."""
    op.vjp, op.saves = vjp, saves
    if name is not None:
        op.extra["grad_name"] = name


_jitted: dict[tuple, Callable] = {}


def scalar_of(name: str, which: str = "scalar") -> Callable:
    """The op's scalar function as an inlined njit function; generated kernels import this."""
    key = (name, which)
    fn = _jitted.get(key)
    if fn is None:
        import numba

        fn = numba.njit(inline="always", cache=False)(getattr(REGISTRY[name], which))
        _jitted[key] = fn
    return fn
