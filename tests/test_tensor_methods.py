"""The one table of Tensor's op methods (jtorch/ops/tensor_methods.py): every entry is installed,
nothing else in jtorch attaches methods to Tensor, and each method torch also has can be
called on a small tensor without an AttributeError (a smoke check: behaviour is checked by
tests/test_op_path.py and the sweeps over tests/op_samples.py)."""

from __future__ import annotations

import ast
import re
import warnings
from pathlib import Path

import pytest
import torch

import jtorch
from jtorch.ops import pointwise
from jtorch.ops.tensor_methods import METHODS

PACKAGE = Path(jtorch.__file__).parent
ALLOWED = {PACKAGE / "tensor.py", PACKAGE / "ops" / "tensor_methods.py"}
ASSIGNS = re.compile(r"\bTensor\.\w+\s*=(?!=)|setattr\(\s*Tensor\b")


def test_every_entry_is_installed():
    missing = [n for n, fn in METHODS.items() if jtorch.Tensor.__dict__.get(n) is not fn]
    assert not missing


def test_generated_pointwise_methods_are_listed():
    assert set(pointwise.GENERATED_METHODS) <= set(METHODS)


def test_table_leaves_the_class_body_alone():
    """The table adds op methods; what tensor.py defines is not replaced from outside."""
    tree = ast.parse((PACKAGE / "tensor.py").read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    body = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
    body |= {t.id for n in cls.body if isinstance(n, ast.Assign) for t in n.targets
             if isinstance(t, ast.Name)}
    assert not body & set(METHODS)


def test_nothing_else_assigns_tensor_attributes():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path in ALLOWED:
            continue
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if ASSIGNS.search(line):
                offenders.append(f"{path.relative_to(PACKAGE.parent)}:{i}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_the_scan_sees_the_forms_it_forbids():
    for line in ("Tensor.exp = _exp", "Tensor.sub = Tensor.subtract = f", "setattr(Tensor, n, f)",
                 "    setattr(Tensor, name + '_', inplace)"):
        assert ASSIGNS.search(line), line
    for line in ("if Tensor.exp == f:", "x = Tensor._make(a)", "_Tensor.x = 1"):
        assert not ASSIGNS.search(line), line


@pytest.mark.parametrize("name", sorted(n for n in METHODS if hasattr(torch.Tensor, n)))
def test_method_is_reachable_on_a_small_tensor(name):
    """``x.<name>`` exists and runs far enough to parse its arguments: called with none, then
    with one tensor; any error but AttributeError (missing arguments, dtype errors) is fine."""
    if isinstance(jtorch.Tensor.__dict__[name], property):  # real, imag; output_nr; name
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # volatile's removal warning
            got = getattr(jtorch.tensor([1 + 2j]), name)
            want = getattr(torch.tensor([1 + 2j]), name)
        assert type(got).__name__ == type(want).__name__  # Tensor, int, dtype, bool or None
        return
    method = getattr(jtorch.tensor([[0.5, 1.5], [2.0, 3.0]]), name)
    assert callable(method)
    for args in ((), (jtorch.tensor([[1.0, 2.0], [3.0, 4.0]]),)):
        if _runs(name, method, args):
            break


def _runs(name: str, method, args: tuple) -> bool:
    try:
        method(*args)
    except AttributeError as e:
        raise AssertionError(f"Tensor.{name}{args!r}: {e}") from e
    except (TypeError, RuntimeError, ValueError, IndexError, NotImplementedError):
        return False  # wrong arguments for this method: not what is checked here
    return True
