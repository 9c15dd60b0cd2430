"""What ``import jtorch`` loads. Start-up latency is measured by perf/benchmarks/startup.py;
these tests time nothing: they check, in fresh interpreters, that the modules jtorch loads at
first use stay unimported until then, and that everything reached that way works as before."""

from __future__ import annotations

import json
import subprocess
import sys

import jtorch

# loaded by the first access of the attribute (jtorch/__init__.py's __getattr__), and kernel
# modules loaded by their ops' first call (jtorch/kernels/defs/_lazy.py)
LAZY = ("jtorch.optim", "jtorch.optim.lr_scheduler", "jtorch.utils", "jtorch.utils.data",
        "jtorch._dynamo", "jtorch.compiler", "jtorch.fx", "jtorch.serialization",
        "jtorch.kernels.cpu.sort_entries", "jtorch.kernels.cpu.resample_entries",
        "jtorch.kernels.cpu.pooling_entries", "jtorch.kernels.cpu.normalization",
        "jtorch.kernels.cpu.optim", "jtorch.kernels.cpu.indexing", "jtorch.kernels.cpu.fft",
        "jtorch.kernels.cpu.conv_entries", "jtorch.kernels.cpu.conv",
        "jtorch.kernels.cpu.matmul_entries", "jtorch.kernels.cpu.matmul",
        "jtorch.kernels.cpu.conv_blas", "jtorch.kernels.cpu.random_dists",
        "rocket_fft")

# scipy's linear-algebra package and what it pulls in: Numba's BLAS binding needs only the
# extension module scipy.linalg.cython_blas (jtorch/kernels/source.py's _bind_blas)
SCIPY_API = ("scipy.linalg._basic", "scipy._lib._array_api", "numpy.f2py", "numpy.testing")


def _modules_after(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; return its result and the modules it imported."""
    script = (f"import json, sys\n{code}\n"
              "print(json.dumps({'modules': sorted(sys.modules), 'out': globals().get('out')}))")
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=600, check=False)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_import_leaves_lazy_modules_unimported():
    loaded = set(_modules_after("import jtorch")["modules"])
    assert loaded.isdisjoint(LAZY), sorted(loaded.intersection(LAZY))
    assert "jtorch.nn" in loaded and "jtorch.compile.api" in loaded  # still eager


def test_first_kernel_does_not_import_scipy_linalg_package():
    r = _modules_after("import jtorch\n"
                       "out = (jtorch.ones(2, 3) @ jtorch.ones(3, 2) + 1).tolist()")
    assert r["out"] == [[4.0, 4.0], [4.0, 4.0]]
    loaded = set(r["modules"])
    assert "scipy.linalg.cython_blas" in loaded
    assert loaded.isdisjoint(SCIPY_API), sorted(loaded.intersection(SCIPY_API))


def test_scipy_linalg_still_imports_in_full_after_a_kernel():
    r = _modules_after(
        "import jtorch, numpy as np\n"
        "jtorch.ones(2, 3) @ jtorch.ones(3, 2)\n"
        "import scipy.linalg.cython_blas\n"
        "import scipy.linalg.cython_lapack as lapack\n"
        "import scipy.linalg\n"
        "out = [float(scipy.linalg.det(2 * np.eye(2))),\n"
        "       scipy.linalg.cython_blas is sys.modules['scipy.linalg.cython_blas'],\n"
        "       scipy.linalg.cython_lapack is lapack, type(scipy.linalg).__name__]")
    assert r["out"] == [4.0, True, True, "module"]
    assert "scipy.linalg._basic" in r["modules"]


def test_lazy_kernel_entries_resolve_at_first_call():
    r = _modules_after(
        "import jtorch\n"
        "from jtorch.kernels import registry\n"
        "x = jtorch.tensor([3.0, 1.0, 2.0])\n"
        "before = type(registry.get('median').kernels['cpu']).__name__\n"
        "out = [before, jtorch.median(x).item(), jtorch.sort(x).values.tolist(),\n"
        "       x[jtorch.tensor([2, 0])].tolist(), 'cpu' in registry.get('sort').kernels,\n"
        "       type(registry.get('median').kernels['cpu']).__name__]")
    assert r["out"] == ["LazyEntry", 2.0, [1.0, 2.0, 3.0], [2.0, 3.0], True, "function"]
    assert "jtorch.kernels.cpu.sort_entries" in r["modules"]
    assert "jtorch.kernels.cpu.resample_entries" not in r["modules"]


def test_products_and_samplers_load_at_their_first_call():
    """The product entries (and the BLAS binding under them) and the distribution samplers
    are imported by their first call, in eager code and in a compiled matmul epilogue."""
    r = _modules_after(
        "import jtorch\n"
        "from jtorch.kernels import registry\n"
        "before = [type(registry.get(n).kernels['cpu']).__name__ for n in ('addmm', 'poisson')]\n"
        "f = jtorch.compile(lambda a, b: (a @ b).relu() + 1)\n"
        "a, b = jtorch.ones(2, 3), -jtorch.ones(3, 2)\n"
        "jtorch.manual_seed(0)\n"
        "g = jtorch._standard_gamma(jtorch.full((4,), 2.0))\n"
        "out = before + [f(a, b).tolist(), jtorch.nn.functional.linear(a, b.t(), jtorch.ones(2)"
        ").tolist(), jtorch.poisson(jtorch.zeros(3)).tolist(), bool((g > 0).all()),\n"
        "       type(registry.get('addmm').kernels['cpu']).__name__,\n"
        "       type(registry.get('poisson').kernels['cpu']).__name__]")
    assert r["out"] == ["LazyEntry", "LazyEntry", [[1.0, 1.0], [1.0, 1.0]],
                        [[-2.0, -2.0], [-2.0, -2.0]], [0.0, 0.0, 0.0], True,
                        "function", "function"]
    assert {"jtorch.kernels.cpu.matmul", "jtorch.kernels.cpu.random_dists"} <= set(r["modules"])


def test_lazy_attributes_resolve_like_eager_ones():
    r = _modules_after(
        "import jtorch\n"
        "from jtorch.utils.data import DataLoader\n"
        "import jtorch.optim.lr_scheduler as sched\n"
        "out = [jtorch.optim.Adam.__module__, DataLoader is jtorch.utils.data.DataLoader,\n"
        "       sched is jtorch.optim.lr_scheduler, jtorch.save.__module__, jtorch.load.__module__,\n"
        "       jtorch.fx.GraphModule.__name__, callable(jtorch._dynamo.reset),\n"
        "       callable(jtorch.compiler.disable), callable(jtorch.compile),\n"
        "       type(jtorch.compile).__name__]")
    assert r["out"] == ["jtorch.optim.adam", True, True, "jtorch.serialization",
                        "jtorch.serialization", "GraphModule", True, True, True, "function"]


def test_dir_lists_lazy_names_and_unknown_names_raise():
    names = dir(jtorch)
    for name in ("optim", "utils", "_dynamo", "compiler", "fx", "serialization", "save", "load",
                 "nn", "compile", "Tensor"):
        assert name in names
    try:
        jtorch.no_such_name  # noqa: B018
    except AttributeError as e:
        assert "no_such_name" in str(e)
    else:
        raise AssertionError("jtorch.no_such_name did not raise")
    assert not hasattr(jtorch, "no_such_name")
