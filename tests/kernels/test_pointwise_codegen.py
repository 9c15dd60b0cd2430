"""Eager pointwise modules are made of the compiler's pieces (kernels/codegen.py): loop
functions around the ops' SSA lines from ``codegen.ssa_line``, the same lines a fused kernel
holds, so an eager call is a fused group of one. Golden text of two modules is in
golden/<name>.kernel.txt; ``JTORCH_RECORD_GOLDEN=1`` rewrites it."""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest
from helpers import golden_kernel

import jtorch
from jtorch.compile.fusion import FusedKernel
from jtorch.kernels import codegen, registry
from jtorch.kernels.cpu import pointwise

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")


def _source(name: str, arity: int, compute: str, out: str | None = None) -> str:
    return pointwise._source(registry.get(name), arity, compute, out or compute)


def test_a_flat_loop_is_a_loop_function_of_the_ssa_line():
    """``c_as`` is the loop itself (no call layer around a flat loop); ``p_as`` calls it per
    chunk out of line."""
    mul = registry.get("mul")
    ssa = codegen.ssa_line(mul, "float32", "float32", "v0", ["in0[i]", "in1"], {})
    assert ssa.line == "v0 = np.float32(_f_mul_scalar(np.float32(in0[i]), np.float32(in1)))"
    assert ssa.fast is None and ssa.guard is None
    loop = codegen.loop_function("c_as", ["out0", "in0", "in1"], [ssa.line, "out0[i] = v0"],
                                 size="out0.size")
    src = _source("mul", 2, "float32")
    assert "\n".join(loop) in src
    assert "        _c_as(out0[lo:hi], in0[lo:hi], in1)\n" in src


def test_guarded_eager_loop_and_fused_segment_share_the_body():
    """sin's guarded loop function in the eager module holds the lines, fast lines and guard
    that the fused kernel of ``x.sin() * 2`` holds for its sin node."""
    sin = registry.get("sin")
    consts: dict = {}
    ssa = codegen.ssa_line(sin, "float32", "float32", "v0", ["x0[i]"], consts)
    assert list(consts) == ["_f_sin_scalar", "_g_sin", "_ok_sin"]
    eager = _source("sin", 1, "float32")
    assert "def blk_a(m, o0, x0):" in eager and "_blk_a(m, out0[b:b + m], in0[b:b + m])" in eager
    cf = jtorch.compile(lambda x: x.sin() * 2)
    cf(jtorch.randn(8))
    gms = [fn.__self__ for fn, _ in cf.pieces.values() if hasattr(fn, "__self__")]
    (k,) = [n.target for gm in gms for n in gm.graph.nodes if isinstance(n.target, FusedKernel)]
    fused = k.source_for("f")
    for text in (ssa.line, ssa.fast, f"good &= {ssa.guard}"):
        assert text in eager and text in fused, text


def test_integer_division_raises_through_serial_loops():
    """Integer division keeps Python's error model and no parallel or out-of-line loop (an
    exception raised there would be lost)."""
    src = _source("floor_divide", 2, "int64")
    assert "p_aa = c_aa\n" in src and "ps_2 = s_2\n" in src and "parallel=True" not in src
    mod = pointwise.kernels(registry.get("floor_divide"), 2, "int64", "int64")
    x = np.arange(40_000, dtype=np.int64)
    with pytest.raises(ZeroDivisionError):
        mod.p_aa(np.empty_like(x), x, np.zeros_like(x))


@pytest.mark.parametrize("pat", ["".join(p) for p in itertools.product("as", repeat=3) if "a" in p])
def test_contiguous_variants_equal_the_strided_loop(pat):
    """Each operand layout of a ternary op, serial and in chunks, against the strided loop."""
    op = registry.get("lerp")
    mod = pointwise.kernels(op, 3, "float32", "float32")
    rng = np.random.default_rng(0)
    one = np.array([1], np.int64)
    for n in (1, 17, 40_000):
        full = [rng.standard_normal(n).astype(np.float32) for _ in range(3)]
        args = [x if p == "a" else x[0] for x, p in zip(full, pat)]
        want = np.empty(n, np.float32)
        strided = [np.array([n], np.int64), want, one]
        for x, p in zip(full, pat):
            strided += [x if p == "a" else x[:1], one if p == "a" else np.zeros(1, np.int64)]
        mod.s_3(*strided)
        for kernel in (getattr(mod, f"c_{pat}"), getattr(mod, f"p_{pat}")):
            got = np.empty(n, np.float32)
            kernel(got, *args)
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("name,arity,compute", [("sin", 1, "float32"),
                                                ("floor_divide", 2, "int64")])
def test_eager_module_source_matches_golden(name, arity, compute):
    src = _source(name, arity, compute)
    compile(src, f"<{name} kernels>", "exec")  # valid Python
    golden_kernel(os.path.join(GOLDEN, f"eager_{name}_{compute}.kernel.txt"), src)


def _strided_call(shape, out, operands):
    """The strided loops' arguments: the coalesced shape, then each array with its element
    strides (a (1,)-shaped operand broadcast at stride 0 where its dim is 1)."""
    call = [np.asarray(shape, np.int64), out.reshape(-1),
            np.asarray([s // out.itemsize for s in out.strides], np.int64)]
    for x in operands:
        base = x if x.base is None else x.base
        flat = base.reshape(-1)
        off = (x.__array_interface__["data"][0] - base.__array_interface__["data"][0]) \
            // x.itemsize
        st = [0 if n == 1 else s // x.itemsize for n, s in zip(x.shape, x.strides)]
        call += [flat[off:], np.asarray(st, np.int64)]
    return call


@pytest.mark.parametrize("kind", [0, 3, 5, 7, -3, -6, -9, -1])
def test_one_kind_strided_loops_equal_the_general_loop(kind):
    """``strided_kernels``' loop of one row kind against ``s_3``, which branches over all."""
    op = registry.get("lerp")
    general = pointwise.kernels(op, 3, "float32", "float32")
    one = pointwise.strided_kernels(op, 3, "float32", "float32", kind)
    tag = pointwise.kind_tag(kind)
    assert not hasattr(one, "s_3")  # only its own kind
    rng = np.random.default_rng(1)
    shape = (3, 5)
    bits = kind if kind >= 0 else -2 - kind
    ops = []
    for i in range(3):
        on = (bits >> (2 - i)) & 1
        if kind == -1 and i == 0:  # the generic loop: a negative innermost stride
            ops.append(rng.standard_normal((3, 5)).astype(np.float32)[:, ::-1])
        elif not on:
            ops.append(rng.standard_normal((3, 1)).astype(np.float32))
        elif kind < -1:
            ops.append(rng.standard_normal((3, 10)).astype(np.float32)[:, ::2])
        else:
            ops.append(rng.standard_normal((3, 5)).astype(np.float32))
    strides = [0 if x.shape[1] == 1 else x.strides[1] // 4 for x in ops]
    assert pointwise.row_kind(3, 1, strides) == kind
    want = np.empty(shape, np.float32)
    general.s_3(*_strided_call(shape, want, ops))
    for fn in (getattr(one, f"s_3_{tag}"), getattr(one, f"ps_3_{tag}")):
        got = np.empty(shape, np.float32)
        fn(*_strided_call(shape, got, ops))
        np.testing.assert_array_equal(got, want)


def test_int_and_float_scalars_share_one_strided_loop():
    """A Python int operand of a float op off the dense path runs the strided loop a float
    one compiled (one signature)."""
    from jtorch import dispatch

    x = jtorch.ones(3, 8)[:, ::2]  # rows at stride 2
    z = x * 2.5
    fn = dispatch.strided_kernel(registry.get("mul"), 2, jtorch.float32, jtorch.float32,
                                 pointwise.row_kind(2, 1, [2, 0]), False)
    before = set(fn.signatures)  # (other tests may have run other scalar types through it)
    y = x * 2
    assert set(fn.signatures) == before and y.tolist() == [[2.0] * 4] * 3
    assert z.tolist() == [[2.5] * 4] * 3
    big = jtorch.ones(2, 4, dtype=jtorch.float64)[:, ::2] * (2 ** 60 + 1)  # (not exact: kept)
    assert big.tolist() == [[float(2 ** 60 + 1)] * 2] * 2
