"""No array-to-slice assignment inside a compiled CPU kernel.

``a[i:j] = b`` (and ``a[i:j] += b``, which assigns the slice back) with an array ``b`` makes
Numba compile its shape-mismatch error, whose message formats the shapes with Python string
code: 1-3 s of a cold process's first call (the first ``randn`` took 5.7 s, an embedding 2.3 s).
Kernels copy with element loops instead. A scalar fill (``a[:] = 0``) is cheap and allowed."""

import ast
import pathlib

import jtorch

ROOT = pathlib.Path(jtorch.__file__).parent / "kernels" / "cpu"


def _compiled(fn: ast.FunctionDef) -> bool:
    for d in fn.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        name = ast.unparse(target)
        if "jit" in name and "cuda" not in name:
            return True
    return False


def _has_slice(target: ast.expr) -> bool:
    if not isinstance(target, ast.Subscript):
        return False
    idx = target.slice
    parts = idx.elts if isinstance(idx, ast.Tuple) else [idx]
    return any(isinstance(p, ast.Slice) for p in parts)


def _array_valued(value: ast.expr) -> bool:
    """Values that are arrays for sure: a subscript or transpose of one, a call, arithmetic.
    (A bare name may be a scalar; constants, ``np.nan`` and ``-x`` of those are scalars.)"""
    if isinstance(value, ast.Attribute):
        return value.attr == "T"
    return isinstance(value, (ast.Subscript, ast.Call, ast.BinOp))


def _offences(path: pathlib.Path) -> list:
    tree = ast.parse(path.read_text())
    found = []
    for fn in ast.walk(tree):
        if not (isinstance(fn, ast.FunctionDef) and _compiled(fn)):
            continue
        for node in ast.walk(fn):
            assign = isinstance(node, ast.Assign) and \
                any(_has_slice(t) for t in node.targets) and _array_valued(node.value)
            if assign or (isinstance(node, ast.AugAssign) and _has_slice(node.target)):
                found.append(f"{path.name}:{node.lineno} {ast.unparse(node)}")
    return found


def test_no_array_slice_assignment_in_cpu_kernels():
    found = [o for p in sorted(ROOT.glob("*.py")) for o in _offences(p)]
    assert not found, "copy with element loops instead:\n" + "\n".join(found)


def test_the_lint_sees_the_forms_it_forbids(tmp_path):
    src = tmp_path / "k.py"
    src.write_text("import numba\n@numba.njit(cache=True)\ndef f(a, b, c):\n"
                   "    a[1:3] = b[0:2]\n    a[:, :] = c.T\n    a[0:2] += b[0:2]\n"
                   "    a[:] = 0\n    a[0] = b[1]\n")
    got = _offences(src)
    assert [g.split()[0] for g in got] == ["k.py:4", "k.py:5", "k.py:6"]
