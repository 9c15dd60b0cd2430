"""Golden text of the "numba" backend's generated kernels for a few representative graphs:
a diff in review shows what a change to fusion or row fusion does to the code that runs.
Compared with tests/compile/golden/<name>.kernel.txt; ``JTORCH_RECORD_GOLDEN=1`` rewrites
them.

The ``# scalar sources <hash>`` line is masked: it hashes the files that define the inlined
scalar functions (every op definition module, the fastmath package, calls.py) so that their
edits reach the disk cache, and it would change the goldens on every such edit while the
generated code stays the same."""

from __future__ import annotations

import os

import numpy as np
import pytest
from helpers import golden_kernel

import jtorch
from jtorch.compile.fusion import FusedKernel
from jtorch.compile.row_fusion import RowKernel

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")


def _kernels(cf) -> list:
    """The fused kernels of a compiled function's graphs, in graph order."""
    gms = [fn.__self__ for fn, _ in cf.pieces.values() if hasattr(fn, "__self__")]
    return [n.target for gm in gms for n in gm.graph.nodes
            if isinstance(n.target, (FusedKernel, RowKernel))]


def _golden(name: str, src: str) -> None:
    golden_kernel(os.path.join(GOLDEN, name + ".kernel.txt"), src)


def _bias_chain(x, b):
    return ((x * b).exp() + b) * 0.5


def _sin(x):
    return x.sin() * 2 + 1


def _chain(x):
    # sin and cos share one guarded loop, exp has its own
    return x.sin() + x.cos() * x - (-x * x).exp()


def _softmax(x):
    e = (x - x.amax(dim=-1, keepdim=True)).exp()
    return e / e.sum(dim=-1, keepdim=True)


def _two_outputs(x, y):
    t = x * y + 1
    return t, (t * t).relu()


_CASES = {
    # name: (function, operand shapes, kernel class, operand layouts of a fused kernel)
    "bias_chain": (_bias_chain, [(4, 8), (8,)], FusedKernel, "fr"),
    "guarded_sin": (_sin, [(8,)], FusedKernel, "f"),
    "sin_cos_exp_chain": (_chain, [(8,)], FusedKernel, "f"),
    # (with its pipelined entries, which rows of 256 or more run: the scale loop also finds
    # the next row's max)
    "softmax_rows": (_softmax, [(4, 8)], RowKernel, None),
    "two_outputs": (_two_outputs, [(8,), (8,)], FusedKernel, "ff"),
}


@pytest.mark.parametrize("name", list(_CASES))
def test_generated_kernel_source_matches_golden(name):
    fn, shapes, cls, kinds = _CASES[name]
    args = [jtorch.randn(*s) for s in shapes]
    cf = jtorch.compile(fn)
    cf(*args)
    (k,) = _kernels(cf)
    assert isinstance(k, cls)
    if cls is FusedKernel:
        assert list(k._mods) == [kinds]  # the layout the call ran with
        src = k.source_for(kinds)
    else:
        src = k.source
    compile(src, f"<{name} kernel>", "exec")  # valid Python
    head = src.splitlines()[0]
    assert head.startswith("# fused") and \
        len(head.split(": ", 1)[1].split(", ")) == len(k.names), head  # an op per node
    _golden(name, src)


def test_groups_alike_share_one_module():
    """Two groups of the same ops over the same layouts (one per layer) are one source: the
    header names the ops, not the nodes, so the second loads the first one's module."""

    def f(x, w):
        h = ((x * 2).sin()).cumsum(0)  # (a scan: no epilogue takes the groups in)
        return (h * 2).sin(), w

    cf = jtorch.compile(f)
    x, w = jtorch.randn(4, 4), jtorch.randn(4, 4)
    got = cf(x, w)[0]
    a, b = _kernels(cf)
    assert a.names != b.names and a.source_for("ff") == b.source_for("ff")
    assert a._module("ff") is b._module("ff")
    np.testing.assert_allclose(got.numpy(), f(x, w)[0].numpy(), rtol=1e-6)
