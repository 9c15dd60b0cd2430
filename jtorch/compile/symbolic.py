"""Symbolic sizes: how one graph serves every size of a dynamic dimension.

A dynamic input dimension is traced as a ``SymInt``: an ``int`` (its example value, so every
Python decision is taken as eager would take it) that also carries an expression over the
input sizes (``s0``, ``(s0 * 4)``). Arithmetic keeps the expression; a comparison, ``bool``
or an explicit ``int()``/``index`` records a guard (the expression's outcome must be the same
for a replay). Sizes that reach op parameters (``x.view(x.shape[0], -1)``) are emitted as
their expressions in the generated code, which reads the symbols from its inputs.

Python can also use a ``SymInt`` as a plain int without asking it (C code reading the
value, ``range(n)``): the tracer therefore traces a second time at other sizes and keeps the
graph dynamic only when both traces give the same graph and the same guards.
"""

from __future__ import annotations

import operator
import re

current: list = []  # the ShapeEnv of the trace running now (innermost last)


class ShapeEnv:
    """The symbols of one trace (which input dimension each stands for) and its guards."""

    def __init__(self) -> None:
        self.symbols: list = []  # (name, leaf index, dim)
        self.guards: list = []  # (expression, expected bool)
        self._seen: set = set()

    def symbol(self, value: int, leaf: int, dim: int) -> SymInt:
        name = f"s{len(self.symbols)}"
        self.symbols.append((name, leaf, dim))
        return SymInt(value, name)

    def record(self, expr: str, result: bool) -> None:
        if (expr, result) not in self._seen:
            self._seen.add((expr, result))
            self.guards.append((expr, result))

    def checker(self):
        """``check(shapes) -> bool``: the guards hold for the argument tensors of these sizes."""
        names = [n for n, _, _ in self.symbols]
        reads = [f"{n} = shapes[{i}][{d}]" for n, i, d in self.symbols]
        conds = [e if r else f"not ({e})" for e, r in self.guards] or ["True"]
        src = "def check(shapes):\n" + "".join(f"    {r}\n" for r in reads)
        src += "    return " + " and ".join(f"({c})" for c in conds) + "\n"
        glb: dict = {}
        exec(compile(src, "<jtorch_shape_guards>", "exec"), glb)  # noqa: S102  (our own guards)
        check = glb["check"]
        check.source = src
        check.names = names
        return check


def _note(expr: str, result: bool) -> None:
    if current:
        current[-1].record(expr, result)


def _expr(v) -> str:
    return v.expr if isinstance(v, SymInt) else repr(int(v))


def _binary(name: str, sym: str, reverse: bool = False):
    op = getattr(operator, name)

    def method(self, other):
        if not isinstance(other, int):
            if isinstance(other, float):
                return op(other, int(self)) if reverse else op(int(self), other)
            return NotImplemented
        a, b = (other, self) if reverse else (self, other)
        if not isinstance(other, SymInt):  # x * 1, x + 0, x - 0, x // 1 stay x
            k = int(other)
            if (k == 1 and name in ("mul", "floordiv") and not reverse) or \
                    (k == 1 and name == "mul") or (k == 0 and name == "add") or \
                    (k == 0 and name == "sub" and not reverse):
                return self
        value = op(int.__int__(a) if isinstance(a, SymInt) else a,
                   int.__int__(b) if isinstance(b, SymInt) else b)
        return SymInt(value, f"({_expr(a)} {sym} {_expr(b)})")

    return method


def _compare(name: str, sym: str):
    op = getattr(operator, name)

    def method(self, other):
        if isinstance(other, SymInt):
            if other.expr == self.expr:
                return op(0, 0)
            result = op(int.__int__(self), int.__int__(other))
        elif isinstance(other, (int, float)):
            result = op(int.__int__(self), other)
        else:
            return NotImplemented
        _note(f"{self.expr} {sym} {_expr(other)}", result)
        return result

    return method


class SymInt(int):
    """An int standing for a dynamic size: its example value plus an expression."""

    def __new__(cls, value: int, expr: str) -> SymInt:  # noqa: PYI034
        o = int.__new__(cls, value)
        o.expr = expr
        return o

    __add__ = _binary("add", "+")
    __radd__ = _binary("add", "+", True)
    __sub__ = _binary("sub", "-")
    __rsub__ = _binary("sub", "-", True)
    __mul__ = _binary("mul", "*")
    __rmul__ = _binary("mul", "*", True)
    __floordiv__ = _binary("floordiv", "//")
    __rfloordiv__ = _binary("floordiv", "//", True)
    __mod__ = _binary("mod", "%")
    __rmod__ = _binary("mod", "%", True)
    __eq__ = _compare("eq", "==")
    __ne__ = _compare("ne", "!=")
    __lt__ = _compare("lt", "<")
    __le__ = _compare("le", "<=")
    __gt__ = _compare("gt", ">")
    __ge__ = _compare("ge", ">=")

    def __neg__(self) -> SymInt:
        return SymInt(-int.__int__(self), f"(-{self.expr})")

    def __pos__(self) -> SymInt:
        return self

    def __abs__(self):
        return self if self >= 0 else -self

    def __bool__(self) -> bool:
        r = int.__int__(self) != 0
        _note(f"{self.expr} != 0", r)
        return r

    def _specialize(self) -> int:
        v = int.__int__(self)
        _note(f"{self.expr} == {v}", True)
        return v

    def __int__(self) -> int:
        return self._specialize()

    def __index__(self) -> int:
        return self._specialize()

    def __float__(self) -> float:
        return float(self._specialize())

    def __truediv__(self, other):
        return self._specialize() / (other._specialize() if isinstance(other, SymInt) else other)

    def __rtruediv__(self, other):
        return other / self._specialize()

    def __pow__(self, other):
        return self._specialize() ** other

    def __hash__(self) -> int:
        # not an int's hash: caches keyed by sizes (meta rules memoise geometry) never match
        # a symbol against a plain size, which would specialise it silently or leak it
        return hash((int.__int__(self), self.expr))

    def __repr__(self) -> str:
        return int.__repr__(self)

    __str__ = __repr__

    def __reduce__(self):
        return (int, (int.__int__(self),))


def evaluate(expr: str, env: ShapeEnv, shapes: list) -> int:
    """The value of a symbolic expression for argument tensors of ``shapes``."""
    values = {n: shapes[i][d] for n, i, d in env.symbols}
    return eval(expr, {"__builtins__": {}}, values)


def names_in(expr: str) -> set:
    """The symbols an expression reads."""
    return set(_NAME.findall(expr))


_NAME = re.compile(r"\bs\d+\b")


def has_symbols(v) -> bool:
    if isinstance(v, SymInt):
        return True
    if isinstance(v, (tuple, list)):
        return any(has_symbols(x) for x in v)
    if isinstance(v, dict):
        return any(has_symbols(x) for x in v.values())
    return False
