"""Source pieces both fused-kernel generators share: the module head, the njit decorators,
and loop functions.

A loop function holds one loop over a block (``for i in range(m)``) of SSA lines; the
kernel's outer loops call it once per block through a ``noinline`` call site. Measured: an
exp loop over rows of 1024 floats inlined into the row loop runs 35% slower than the same
loop over one flat array, called once per row it runs at the flat loop's speed (the inner
loop is vectorised alone, its constants and pointers set up by the call).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from . import fastmath_fingerprint
from .cpu import calls
from .source import fingerprint

NJIT = "@njit(cache=True, nogil=True, error_model='numpy')"
NJIT_PARALLEL = "@njit(cache=True, nogil=True, error_model='numpy', parallel=True)"
# a reduction's loop: ``reassoc`` lets the accumulation vectorise; the scalars it inlines are
# single operations (a combine, a cast), so their results do not change with it
NJIT_REASSOC = "@njit(cache=True, nogil=True, error_model='numpy', fastmath={'reassoc'})"

# ops whose scalar is a long polynomial or a division: a fused kernel never computes one twice
# per element, and a pointwise group starts a new loop where one takes another's result as
# operand (a long dependent body runs slower than a loop per link: compile/fusion.py)
EXPENSIVE = frozenset(["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
                        "tan", "tanh", "sigmoid", "sinh", "cosh", "asin", "acos", "atan",
                        "atan2", "asinh", "acosh", "atanh", "pow", "erf", "erfc", "erfinv",
                        "gelu", "softplus", "mish", "silu", "hypot", "logit", "lgamma",
                        "digamma", "fmod", "remainder", "sqrt", "rsqrt", "div", "reciprocal"])
_NAME = re.compile(r"\b([otxcva]\d+|in\d+)\b")
_ASSIGNED = re.compile(r"^\s*(\w+) = ")


def header(title: str, fns: list, consts: dict) -> list:
    """A kernel module's first lines: what it fuses, a fingerprint of the scalar functions it
    inlines (their source is not in it, so a change of theirs must change this source's
    hash, the disk-cache key), imports and the scalar functions it calls."""
    return [f"# {title}",
            f"# scalar sources {fingerprint(*fns, fastmath_fingerprint(), calls.fingerprint())[:16]}",
            "import numpy as np",
            "from numba import prange",
            "from jtorch.kernels.jit import njit",
            "from jtorch.kernels.cpu.calls import external, outlined",
            "from jtorch.kernels.registry import scalar_of",
            *[f"{k} = {v}" for k, v in consts.items()]]


def names_in(lines: list) -> list:
    """The operand names (``o1``, ``t2``, ``x0``, ``c3``, ``v5``, ``a6``, ``in4``) that ``lines`` use
    and do not assign, in first-use order: a loop function's parameters."""
    local = {m.group(1) for line in lines if (m := _ASSIGNED.match(line))}
    seen: dict = {}
    for line in lines:
        for m in _NAME.findall(line):
            if m not in local:
                seen.setdefault(m, None)
    return list(seen)


def loop_function(name: str, params: list, body: list, n: str = "m", guard: str | None = None,
                  fast: list | None = None, ret: str | None = None, init: list = (),
                  decorator: str = NJIT, size: str | None = None, checked: bool = False) -> list:
    """``def name(n, *params)``: one loop over ``i < n`` of ``body``, then ``return ret``. With
    ``guard`` (an expression true where the ``fast`` body is exact), the block is checked
    first and runs ``fast`` when every element passes, as eager's guarded kernels do. With
    ``checked``, ``fast`` asks its guards itself (``good &= ...`` lines before the fast lines
    they cover) and the block runs it first, then ``body`` over it where any check failed:
    only for loops whose stores never alias what they read. With ``size`` (an expression of
    the params, ``out0.size``) the count is no parameter: a flat eager loop is its own entry
    point, with no call layer around it; without, the function is only called by other
    kernels and has no CPython wrapper (``inner``)."""
    sig = ", ".join([n, *params] if size is None else params)
    if size is not None:
        init = [*init, f"{n} = {size}"]
    else:
        decorator = inner(decorator)
    out = [decorator, f"def {name}({sig}):", *[f"    {x}" for x in init]]
    if checked:
        out += ["    good = True", f"    for i in range({n}):", *[f"        {x}" for x in fast],
                "    if not good:", f"        for i in range({n}):", *[f"            {x}" for x in body]]
    elif guard is not None:
        out += ["    good = True", f"    for i in range({n}):", f"        good &= {guard}",
                "    if good:", f"        for i in range({n}):", *[f"            {x}" for x in fast],
                "    else:", f"        for i in range({n}):", *[f"            {x}" for x in body]]
    else:
        out += [f"    for i in range({n}):", *[f"        {x}" for x in body]]
    if ret is not None:
        out.append(f"    return {ret}")
    out += ["", f"_{name} = outlined({name})", ""]
    return out


# -- the body: one SSA line per op ---------------------------------------------------------

NP_CTOR = {
    "bool": "np.bool_", "uint8": "np.uint8", "int8": "np.int8", "int16": "np.int16",
    "int32": "np.int32", "int64": "np.int64", "float16": "np.float16", "float32": "np.float32",
    "float64": "np.float64",
    "complex64": "np.complex64", "complex128": "np.complex128",
}
_INTS = ("bool", "uint8", "int8", "int16", "int32", "int64")
_FLOATS = ("float32", "float64")


def scalar_variant(op, compute: str) -> str:
    """Which scalar function of the OpDef a compute dtype uses."""
    if compute.startswith("complex"):
        return "complex_scalar"
    if compute in _INTS and op.int_scalar is not None:
        return "int_scalar"
    return "scalar"


def guarded(op, compute: str) -> bool:
    """Whether loops of ``op`` check each block with ``fast_ok`` and run its cheaper
    ``fast_scalar`` when every element passes (exact there: sin without the huge-argument
    reduction)."""
    return op.fast_scalar is not None and compute in _FLOATS and \
        scalar_variant(op, compute) == "scalar"


# guarded unary ops whose ``fast_ok`` holds on one interval of the argument (lo < x < hi, or
# |x| < b; nan fails): where a row's least and greatest arguments pass, every one passes
OK_ON_AN_INTERVAL = frozenset(["exp", "log", "log2", "log10", "log1p", "sin", "cos", "tan"])


def guard_key(op):
    """What ``op``'s guard computes, equal for ops whose ``fast_ok`` are the same function or
    the same code over the same globals (the defs write ``lambda x: fm.trig_near(x)`` once
    per op): loops of such ops over the same operands can share one check per block."""
    f = op.fast_ok
    c = getattr(f, "__code__", None)
    if c is None or f.__closure__ or f.__defaults__:
        return ("id", id(f))
    return ("code", c.co_code, c.co_names, c.co_consts, c.co_argcount, id(f.__globals__))


class SsaLine(NamedTuple):
    """One op's line of a loop body: ``line`` through the full scalar; for a guarded op also
    ``fast`` through the fast scalar and ``guard``, true where ``fast`` is exact."""

    line: str
    fast: str | None = None
    guard: str | None = None


def ssa_line(op, compute: str, result: str, target: str, operands: list, consts: dict) -> SsaLine:
    """``target = op(operands)`` with eager's dtype rules, each operand cast to the compute
    dtype and the result rounded to the result dtype: eager loops and fused kernels take
    their bodies from here, so a fused result is bitwise the eager one. The scalar functions
    the line calls are added to ``consts`` (module-level name -> ``scalar_of`` call).

    >>> from jtorch.kernels import registry
    >>> ssa_line(registry.get("exp"), "float32", "float32", "v0", ["x0[i]"], {}).line
    'v0 = np.float32(_f_exp_scalar(np.float32(x0[i])))'
    """
    which = scalar_variant(op, compute)
    fname = f"_f_{op.name}_{which}"
    consts.setdefault(fname, f"scalar_of({op.name!r}, {which!r})")
    ci, co = NP_CTOR[compute], NP_CTOR[result]
    args = ", ".join(f"{ci}({a})" for a in operands)
    line = f"{target} = {co}({fname}({args}))"
    if not guarded(op, compute):
        return SsaLine(line)
    consts.setdefault(f"_g_{op.name}", f"scalar_of({op.name!r}, 'fast_scalar')")
    consts.setdefault(f"_ok_{op.name}", f"scalar_of({op.name!r}, 'fast_ok')")
    return SsaLine(line, f"{target} = {co}(_g_{op.name}({args}))", f"_ok_{op.name}({args})")


def inner(decorator: str) -> str:
    """``decorator`` for a function only other kernels call (never Python): no CPython
    wrapper, about 30 ms of each such function's cold compile."""
    assert decorator.endswith(")"), decorator
    return decorator[:-1] + ", no_cpython_wrapper=True)"


def decorator(error_model: str = "numpy", parallel: bool = False) -> str:
    """The njit line of a generated function (``NJIT``, ``NJIT_PARALLEL`` with an error model:
    ``python`` where integer division must raise)."""
    return f"@njit(cache=True, nogil=True, error_model={error_model!r}" + \
        (", parallel=True)" if parallel else ")")
