"""The "numba" backend's pointwise fusion: groups, generated kernels, exactness, fallbacks."""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jtorch
import jtorch.nn.functional as F
from jtorch.compile import fusion as _fusion
from jtorch.compile.fusion import FusedKernel


def _fused_graphs(cf) -> list:
    return [fn.__self__ for fn, _ in cf.pieces.values() if hasattr(fn, "__self__")]


def _bitwise(a, b) -> None:
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def _chain(x):
    return jtorch.sin(x) + jtorch.cos(x) * x - jtorch.exp(-x * x)


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
@pytest.mark.parametrize("n", [0, 1, 7, 1000, 200_003])
def test_a_fused_chain_is_bitwise_eager(dtype, n):
    x = jtorch.randn(n, dtype=dtype) * 3
    x[: min(n, 3)] = jtorch.tensor([1e6, float("nan"), float("-inf")][: min(n, 3)], dtype=dtype)
    cf = jtorch.compile(_chain)
    _bitwise(cf(x), _chain(x))
    gm = _fused_graphs(cf)[0]
    fused = [n for n in gm.graph.nodes if isinstance(n.target, FusedKernel)]
    assert len(fused) == 1 and len(fused[0].target.names) == 8


def test_generated_source_is_a_block_loop_of_ssa_lines():
    cf = jtorch.compile(lambda x, y: (x * y + 1).relu())
    cf(jtorch.randn(5), jtorch.randn(5))
    (k,) = [n.target for n in _fused_graphs(cf)[0].graph.nodes if isinstance(n.target, FusedKernel)]
    src = k.source
    assert "def serial(out0, in0, in1, in2, r_lo, r_hi, j_lo, j_hi, inner):" in src
    assert src.count("for i in range(m):") == 1  # cheap ops share one loop function
    loop = src.split("def seg0(m, x0, x1, in2, o0):")[1].split("_seg0 = outlined(seg0)")[0]
    assert "v0 = np.float32(_f_mul_scalar(np.float32(x0[i]), np.float32(x1[i])))" in loop
    assert "v2 = np.float32(_f_relu_scalar(np.float32(v1)))" in loop
    assert loop.count("o0[i] = v2") == 1 and "parallel=True" in src
    serial = src.split("def serial")[1].split("_call = ")[0]
    assert "_seg0(m, x0, x1, in2, o0)" in serial  # called once per block


def _loops(src: str) -> dict:
    """Each loop function of a fused kernel's source: its name -> its text."""
    return {part.split("(")[0]: part for part in src.split("def ")[1:] if part.startswith("seg")}


def _apart(x, y):
    # sin and cos of x apart, with an expensive op between; tan(x) has the same guard, cos(y)
    # and sin(x * 2) its guard over other operands, log(x) another guard
    t = x.sin() + x.exp()
    return t + x.cos() + y.cos() + x.tan() + (x * 2).sin() + x.log()


def test_ops_with_one_guard_over_one_operand_share_a_loop():
    cf = jtorch.compile(_chain)
    for bad in (1e6, 30.0):  # the trig and exp checks fail / only exp's (exp(-900) underflows)
        x = jtorch.randn(2000) * 3
        x[700] = bad  # one block runs again through the full scalars
        _bitwise(cf(x), _chain(x))
    (k,) = [n.target for n in _fused_graphs(cf)[0].graph.nodes if isinstance(n.target, FusedKernel)]
    loops = _loops(k.source)
    assert list(loops) == ["seg0"]  # sin, cos and exp side by side: one loop
    loop = loops["seg0"]
    fast, full = loop.split("if not good:")
    assert fast.count("good &= _ok_sin(") == 1 and "_ok_cos(" not in fast  # one check for both
    assert fast.count("good &= _ok_exp(") == 1
    assert "_g_sin(" in fast and "_g_cos(" in fast and "_g_exp(" in fast and "_f_" + "sin" not in fast
    assert "_f_sin_scalar(" in full and "_f_cos_scalar(" in full and "_f_exp_scalar(" in full
    assert "_g_" not in full and "good" not in full

    cf = jtorch.compile(_apart)
    x, y = jtorch.rand(3000) + 0.5, jtorch.randn(3000)
    x[1500] = 3e7
    _bitwise(cf(x, y), _apart(x, y))
    (k,) = [n.target for n in _fused_graphs(cf)[0].graph.nodes if isinstance(n.target, FusedKernel)]
    (loop,) = _loops(k.source).values()
    fast = loop.split("if not good:")[0]
    assert "_g_cos(np.float32(x0[i]))" in fast and "_g_tan(np.float32(x0[i]))" in fast
    assert fast.count("good &=") == 5  # x; exp's; y; x * 2; log's
    assert fast.count("good &= _ok_sin(np.float32(x0[i]))") == 1


def test_a_chain_of_expensive_ops_takes_a_loop_per_link():
    """tanh(tanh(x)) in one loop ran 1.3x a loop each (a long dependent body); expensive ops
    side by side share one (0.75x)."""
    def f(x):
        return jtorch.tanh(jtorch.tanh(x) * 2 + x.exp()) + x.sin()

    cf = jtorch.compile(f)
    x = jtorch.randn(3000)
    x[5] = 100.0  # exp's check fails in the first block
    _bitwise(cf(x), f(x))
    (k,) = [n.target for n in _fused_graphs(cf)[0].graph.nodes if isinstance(n.target, FusedKernel)]
    loops = list(_loops(k.source).values())
    assert len(loops) == 2
    assert "_f_tanh_scalar(np.float32(x0[i]))" in loops[0] and "_g_exp(" in loops[0]
    assert "_g_sin(" in loops[1]  # after the second tanh, which starts the second loop
    # the second tanh reads the first loop's value from a scratch row, sin reads x
    assert loops[1].count("_f_tanh_scalar(np.float32(t") == 2 and "_g_sin(np.float32(x0[i]))" in loops[1]


def test_promotion_scalars_ints_and_comparisons_follow_eager():
    def f(a, b, c):
        return ((a * 3 + b) > 2.5) & (c.abs() < 4), (a // 2 + b) * 0.5, (c + 1).neg()

    a = jtorch.randint(-5, 5, (9,))
    b = jtorch.randint(-5, 5, (9,), dtype=jtorch.int32)
    c = jtorch.randn(9, dtype=jtorch.float64)
    cf = jtorch.compile(f)
    for r, e in zip(cf(a, b, c), f(a, b, c)):
        _bitwise(r, e)


@pytest.mark.parametrize("shapes", [
    ((4, 3), (3,)), ((4, 3), (4, 1)), ((2, 5, 3), (3,)), ((2, 5, 3), (2, 5, 1)),
    ((4, 3), (1, 1)), ((4, 3), (1, 1, 1)), ((3,), (4, 1)), ((600, 300), (300,)),
    ((600, 300), (600, 1)), ((5, 70000), (1,))])
def test_broadcast_operands_fuse_as_rows_and_columns(shapes):
    """A bias over the rows, a value per row, one value: layouts of the fused loop (the last
    three sizes run the parallel variants)."""
    f = lambda x, b: ((x * b).exp() + b) * 0.5
    x, b = jtorch.randn(*shapes[0]), jtorch.randn(*shapes[1])
    cf = jtorch.compile(f)
    _bitwise(cf(x, b), f(x, b))
    (k,) = [n.target for n in _fused_graphs(cf)[0].graph.nodes if isinstance(n.target, FusedKernel)]
    assert k._mods  # it ran fused


def _strided_cases():
    r = lambda *s: jtorch.randn(*s)
    return [
        ("transposed", r(3, 4).t(), r(4, 3)),
        ("both transposed", r(30, 40).t(), r(30, 40).t()),
        ("a stepped slice", r(40, 60)[:, ::2], r(40, 30)),
        ("a stepped slice, transposed", r(60, 40)[::2].t(), r(40, 30)),
        ("permuted 3-D", r(5, 6, 7).permute(2, 0, 1), r(7, 1, 6)),
        ("a middle dim broadcast", r(2, 1, 3), r(2, 4, 3)),
        ("a column over transposed rows", r(300, 20).t(), r(20, 1)),
        ("an expanded row, transposed", r(1, 30).expand(40, 30).t(), r(30, 40)),
        ("an offset view", r(9, 9)[2:, 3:], r(7, 6)),
        ("one value expanded, a stepped slice", jtorch.full((1, 1), 0.5).expand(8, 9),
         r(8, 18)[:, ::2]),
    ]


@pytest.mark.parametrize("case", range(10))
def test_strided_and_broadcast_operands_run_fused_in_eager_s_layout(case):
    """Any strides and broadcasts: the loop runs in eager's result order, reading an operand
    flat where it is dense in that order and a row at a time (through a scratch row) where not;
    results are eager's bitwise, with eager's strides."""
    name, x, b = _strided_cases()[case]
    f = lambda x, b: (x + b).exp() * 2 - x.sin()
    cf = jtorch.compile(f)
    got, want = cf(x, b), f(x, b)
    _bitwise(got, want)
    assert got.stride() == want.stride(), name
    (k,) = _fused(cf)
    assert k._mods, name  # fused, not eager


def test_strided_operands_run_the_parallel_loop():
    f = lambda x, b: (x * b).tanh() + 1
    cf = jtorch.compile(f)
    x, b = jtorch.randn(600, 300).t(), jtorch.randn(300, 1200)[:, ::2]  # above the grain size
    got, want = cf(x, b), f(x, b)
    _bitwise(got, want)
    assert got.stride() == want.stride() and any("g" in k for k in _fused(cf)[0]._mods)


def test_operands_the_loop_cannot_take_run_eagerly():
    f = lambda x, b: (x + b).exp() * 2
    cf = jtorch.compile(f)
    for x, b in ((jtorch.randn(4, 3, dtype=jtorch.float16), jtorch.randn(3)),  # float16
                 (jtorch.randn(0, 3).t(), jtorch.randn(3, 1))):  # empty and strided
        _bitwise(cf(x, b), f(x, b))


def test_one_element_operands_everywhere():
    cf = jtorch.compile(lambda x, y: (x * y).exp() - 1)
    for x, y in ((jtorch.randn(()), jtorch.randn(1, 1)), (jtorch.randn(1), jtorch.randn(()))):
        _bitwise(cf(x, y), (x * y).exp() - 1)


def test_gradients_take_the_eager_path():
    x = jtorch.randn(6, requires_grad=True)
    cf = jtorch.compile(lambda x: (x.sin() * x).sum())
    cf(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), (x.cos() * x + x.sin()).detach().numpy(),
                               rtol=1e-6)


def test_a_new_size_loads_no_new_kernel(monkeypatch):
    cf = jtorch.compile(_chain)
    cf(jtorch.randn(10))
    cf(jtorch.randn(11))  # the size becomes dynamic
    loads = []
    real = _fusion.load
    monkeypatch.setattr(_fusion, "load", lambda *a: loads.append(a) or real(*a))
    for n in (12, 50, 3000):
        x = jtorch.randn(n)
        _bitwise(cf(x), _chain(x))
    assert not loads and cf.mask == {0: {0}}
    cf2 = jtorch.compile(lambda x: x.sin() * 2 + 1)  # a new graph: its kernel is loaded
    cf2(jtorch.randn(5))
    assert len(loads) == 1


_UNARY = ["neg", "abs", "exp", "sin", "cos", "tanh", "sigmoid", "relu", "sqrt", "log1p",
          "floor", "square"]
_BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "atan2"]


# The default run draws the same examples each time (their kernels are then cached on disk);
# JTORCH_FUZZ=<n> draws n fresh ones.
_FUZZ = int(os.environ.get("JTORCH_FUZZ", "0"))


@settings(max_examples=_FUZZ or 20, deadline=None, derandomize=not _FUZZ)
@given(st.lists(st.tuples(st.sampled_from(_UNARY + _BINARY), st.integers(0, 3),
                          st.floats(-3, 3, allow_nan=False, width=32)), min_size=2, max_size=7),
       st.sampled_from(["float32", "float64"]), st.integers(1, 40))
def test_random_pointwise_graphs_compiled_equal_eager(ops, dtype, n):
    """A differential fuzzer: random chains of registry ops, compiled vs eager, bitwise."""
    def f(x, y):
        vals = [x, y]
        for name, k, c in ops:
            a = vals[k % len(vals)]
            if name in _BINARY:
                b = vals[(k + 1) % len(vals)] if k % 2 else c
                vals.append(getattr(jtorch, name)(a, b) if not isinstance(b, float) or
                            name not in ("atan2", "maximum", "minimum")
                            else getattr(jtorch, name)(a, jtorch.full_like(a, b)))
            else:
                vals.append(getattr(jtorch, name)(a))
        return vals[-1], vals[len(vals) // 2]

    d = getattr(jtorch, dtype)
    x, y = jtorch.randn(n, dtype=d), jtorch.randn(n, dtype=d)
    with np.errstate(all="ignore"):
        got = jtorch.compile(f)(x, y)
        want = f(x, y)
    for g, w in zip(got, want):
        _bitwise(g, w)


def test_passes_merge_common_subexpressions_and_drop_neutral_ops():
    from jtorch.compile import passes

    seen = []

    def backend(gm, example_inputs):
        passes.run(gm.graph)
        seen.append([n.target.name for n in gm.graph.nodes if n.op == "call_function"])
        gm.recompile()
        return gm.forward

    def f(x):
        a = jtorch.sin(x) * 1 - 0
        b = jtorch.sin(x)
        return jtorch.neg(jtorch.neg(a + b)), (x + 0)  # x + 0 stays: -0.0 + 0 is +0.0

    x = jtorch.tensor([-0.0, 1.0, 2.0])
    got = jtorch.compile(f, backend=backend)(x)
    for g, w in zip(got, f(x)):
        _bitwise(g, w)
    assert seen == [["sin", "add", "neg", "neg", "add"]]  # the result's neg(neg) is kept


# -- row groups: pointwise ops and reductions over the last dim ------------------------------

def _rows(cf) -> list:
    from jtorch.compile.row_fusion import RowKernel

    return [n.target for g in _fused_graphs(cf) for n in g.graph.nodes
            if isinstance(n.target, RowKernel)]


def _softmax(x):
    e = (x - x.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)


def _layer_norm(x, w, b):
    mu = x.mean(-1, keepdim=True)
    d = x - mu
    var = (d * d).mean(-1, keepdim=True)
    return d * (var + 1e-5).rsqrt() * w + b


@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 33), (300, 512)])
def test_row_groups_compute_softmax_and_layer_norm(shape):
    x = jtorch.randn(*shape) * 4
    w, b = jtorch.randn(shape[-1]), jtorch.randn(1, shape[-1])
    for f, args in ((_softmax, (x,)), (_layer_norm, (x, w, b))):
        cf = jtorch.compile(f)
        np.testing.assert_allclose(cf(*args).numpy(), f(*args).numpy(), rtol=2e-6, atol=2e-6)
        assert len(_rows(cf)) == 1


def test_row_loops_recompute_cheap_values_and_store_expensive_ones_once():
    """Layer norm reads x three times and writes only its output (its centred values are
    computed again in each loop); softmax stores its exp once, in the loop that sums it, to
    its output row (no scratch row), which its last loop rescales in place."""
    x, w, b = jtorch.randn(6, 40), jtorch.randn(40), jtorch.randn(40)
    cf = jtorch.compile(_layer_norm)
    np.testing.assert_allclose(cf(x, w, b).numpy(), _layer_norm(x, w, b).numpy(), rtol=2e-6,
                               atol=2e-6)
    (k,) = _rows(cf)
    # (and the pipelined entries' loop: the output loop summing the next row)
    assert "np.empty" not in k.source and k.source.count("for i in range(") == 4
    cf = jtorch.compile(_softmax)
    _bitwise(cf(x).isnan(), _softmax(x).isnan())
    (k,) = _rows(cf)
    assert k.source.count("np.empty(C") == 0
    # one loop function computes exp (in its full blocks and its remainder) and stores it,
    # built twice: with exp's fast scalar (rows where it is exact, which a check finds) and
    # its full one
    fns = k.source.split("\ndef ")[1:]
    assert sum("_f_exp_scalar(" in f for f in fns) == 1
    assert sum("_g_exp(" in f for f in fns) == 1 and sum("_ok_exp(" in f for f in fns) == 1
    # max (and the row's least element); exp, its store and sum (two builds); the scale; and
    # the pipelined entries' scale finding the next row's max and least element. The check
    # that picks a build reads those extremes, no loop of its own
    assert k.source.count("for i in range(") == 5 and "def seg3r(v0, mn0, mx0):" in k.source


def test_compiled_softmax_and_layer_norm_decompose_into_one_row_kernel():
    x, w, b = jtorch.randn(5, 33) * 3, jtorch.randn(33), jtorch.randn(33)
    for f, args in ((lambda x: F.softmax(x, -1), (x,)), (lambda x: F.log_softmax(x, 1), (x,)),
                    (lambda x, w, b: F.layer_norm(x, (33,), w, b), (x, w, b))):
        cf = jtorch.compile(f)
        np.testing.assert_allclose(cf(*args).numpy(), f(*args).numpy(), rtol=1e-5, atol=1e-6)
        assert len(_rows(cf)) == 1


def test_a_group_never_starts_at_a_node_whose_operands_do_not_fit_its_rows():
    """(x + mask) with a (1, 1, T, T) mask over (B, H, T, T) is no row op: it stays out of the
    softmax's row group (it used to start one and fail to build)."""
    x, m = jtorch.randn(2, 3, 4, 4), jtorch.randn(1, 1, 4, 4)
    f = lambda x, m: (x + m).softmax(-1)
    cf = jtorch.compile(f)
    np.testing.assert_allclose(cf(x, m).numpy(), f(x, m).numpy(), rtol=1e-6, atol=1e-7)
    (k,) = _rows(cf)
    assert "add" not in k.names


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_row_reductions_match_eager(dtype):
    d = getattr(jtorch, dtype)
    x = (jtorch.randn(6, 9) * 5).to(d)
    fs = [lambda x: (x * 2).sum(-1), lambda x: (x + 1).amax(1, keepdim=True) - x.amin(-1, True),
          lambda x: (x * x).sum(dim=-1) + 1, lambda x: (x - 1).prod(-1)]
    if dtype != "int64":
        fs.append(lambda x: (x * 3).mean(-1, keepdim=True) * x)
    for f in fs:
        cf = jtorch.compile(f)
        got, want = cf(x), f(x)
        assert got.dtype == want.dtype and got.shape == want.shape
        # float32 row sums may cancel: an absolute term of a few ulp of the summands' size
        atol = 1e-5 if dtype == "float32" else 0
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6, atol=atol)
        assert _rows(cf)


def test_row_groups_propagate_nan_and_fall_back_where_they_must():
    x = jtorch.randn(4, 6)
    x[1, 2] = float("nan")
    cf = jtorch.compile(_softmax)
    np.testing.assert_array_equal(np.isnan(cf(x).numpy()), np.isnan(_softmax(x).numpy()))
    for y in (x.t().contiguous().t(), x.requires_grad_()):  # strided; autograd
        np.testing.assert_allclose(cf(y).detach().numpy(), _softmax(y).detach().numpy(),
                                   rtol=2e-6, atol=2e-6)
    with pytest.raises(IndexError, match="non-zero size"):  # empty rows: eager's error
        cf(jtorch.randn(4, 0))
    f = lambda x: (x * 2).sum(-1) + 1
    _bitwise(jtorch.compile(f)(jtorch.randn(4, 0)), f(jtorch.randn(4, 0)))  # the identity


def _cols(cf) -> list:
    from jtorch.compile.col_fusion import ColumnKernel

    return [n.target for g in _fused_graphs(cf) for n in g.graph.nodes
            if isinstance(n.target, ColumnKernel)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_column_groups_reduce_leading_dims_with_prologue_and_epilogue(dtype):
    """A bias gradient, batch moments, a mean over the batch: one kernel each, results within
    rounding of eager (pointwise outputs bitwise), dtypes and shapes eager's."""
    d = getattr(jtorch, dtype)
    g, x, b = ((jtorch.randn(*s) * 4).to(d) for s in ((9, 7), (9, 7), (7,)))
    fs = [lambda g, x, b: (g * x + b).sum(0),
          lambda g, x, b: ((g - b) * 2).sum(0, keepdim=True) + b,
          lambda g, x, b: ((g * x).amax(0), (g + 1).amin(dim=(0,)) * 3)]
    def moments(g, x, b):
        y = g * x + b
        return y, (y * y).mean((0,)), y.sum(0)

    if dtype != "int64":
        fs += [lambda g, x, b: (g.exp() * x).mean(0) * 0.5, moments]
    for f in fs:
        cf = jtorch.compile(f)
        got, want = cf(g, x, b), f(g, x, b)
        got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
        for a, e in zip(got, want):
            assert a.dtype == e.dtype and a.shape == e.shape
            np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-6, atol=1e-5)
        assert len(_cols(cf)) == 1


def test_column_groups_of_3d_values_big_blocks_and_nan():
    x = jtorch.randn(5, 3, 4)
    x[2, 1, 1] = float("nan")
    cf = jtorch.compile(lambda x: ((x * 2).sum((0, 1)), (x - 1).amax(0)))
    for a, e in zip(cf(x), ((x * 2).sum((0, 1)), (x - 1).amax(0))):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-6, equal_nan=True)
    big = jtorch.randn(70, 5000)  # several column blocks, the parallel path
    cf = jtorch.compile(lambda x: (x * x).sum(0))
    np.testing.assert_allclose(cf(big).numpy(), (big * big).sum(0).numpy(), rtol=1e-5)
    assert len(_cols(cf)) == 1


def test_column_groups_fall_back_where_they_must():
    f = lambda x: (x * 2).sum(0)
    cf = jtorch.compile(f)
    x = jtorch.randn(6, 5)
    np.testing.assert_array_equal(cf(x).numpy(), f(x).numpy())
    xt = jtorch.randn(5, 6).t()  # strided: the group runs eagerly
    np.testing.assert_allclose(cf(xt).numpy(), f(xt).numpy(), rtol=1e-6)
    e = jtorch.randn(0, 5)  # no rows: eager's identities
    np.testing.assert_array_equal(jtorch.compile(f)(e).numpy(), f(e).numpy())


def _fused(cf) -> list:
    return [n.target for g in _fused_graphs(cf) for n in g.graph.nodes
            if isinstance(n.target, FusedKernel)]


def test_siblings_fuse_across_a_reader_of_the_group():
    """Horizontal fusion: x.sin() and x.cos() share one kernel although a cumsum reading the
    first stands between them; the kernel's call stands before that cumsum."""
    def f(x):
        a = x.sin() * 2
        m = a.cumsum(0)
        b = x.cos() + 1
        return m.relu(), b * a

    x = jtorch.randn(5, 5)
    cf = jtorch.compile(f)
    for got, want in zip(cf(x), f(x)):
        _bitwise(got, want)
    assert [k.names for k in _fused(cf)] == [["sin", "mul", "cos", "add"], ["relu", "mul_1"]]


def test_a_sibling_that_reads_a_later_value_does_not_join():
    """b reads m, which exists only after the cumsum that reads the group: b cannot join."""
    def f(x):
        a = x.sin()
        m = a.cumsum(1)
        b = (x + m).cos()
        return b

    x = jtorch.randn(4, 4)
    cf = jtorch.compile(f)
    _bitwise(cf(x), f(x))
    assert [k.names for k in _fused(cf)] == [["add", "cos"]]


def test_an_expanded_value_is_read_as_one_value():
    """A gradient of a sum is one value expanded (all strides 0): the fused kernel reads it as
    one value; where only expanded operands set the result's shape, the group runs eagerly."""
    f = lambda g, x: (g * 2 + 1) * x.sin()
    cf = jtorch.compile(f)
    g, x = jtorch.full((1, 1), 0.5).expand(40, 50), jtorch.randn(40, 50)
    _bitwise(cf(g, x), f(g, x))
    (kern,) = [n.target for n in _fused_graphs(cf)[0].graph.nodes
               if isinstance(n.target, FusedKernel)]
    assert kern._mods  # fused, not eager
    h = lambda g: (g * 2 + 1).exp()
    _bitwise(jtorch.compile(h)(g), h(g))


def _reducing(cf) -> list:
    return [k for k in _fused(cf) if k.red_outs]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
@pytest.mark.parametrize("shape", [(7,), (3, 5), (2, 3, 4), (200_003,), (300, 700)])
def test_reductions_over_all_dims_join_the_pointwise_group(dtype, shape):
    """A loss's ``.sum()``/``.mean()``, a global max: accumulated by the group's own loop
    (serial and parallel chunks), within rounding of the eager pointwise value reduced in
    float64, pointwise outputs bitwise eager's, dtypes and shapes eager's."""
    d = getattr(jtorch, dtype)
    x = (jtorch.randn(*shape) * 4).to(d)
    every = tuple(range(x.ndim))
    # (the pointwise part, the reductions of its value, whether the value is an output too)
    cases = [(lambda x: x * 2 + 1, [lambda v: v.sum()], False),
             (lambda x: x - 1, [lambda v: v.amax()], False),
             (lambda x: x + 1, [lambda v: v.amin(dim=every, keepdim=True)], False),
             (lambda x: (x * 3 - 2).abs(), [lambda v: v.sum(), lambda v: v.amax()], True)]
    if dtype != "int64":
        cases += [(lambda x: x * x, [lambda v: v.mean()], False),
                  (lambda x: x.sin() * x, [lambda v: v.sum(dim=None)], False),
                  (lambda x: x * 1e-5 + 1, [lambda v: v.prod()], False)]
    # float32 products accumulate in float32 (eager's too): each order rounds differently
    for pre, reds, keep in cases:
        def f(x, pre=pre, reds=reds, keep=keep):
            v = pre(x)
            return ((v,) if keep else ()) + tuple(r(v) for r in reds)

        cf = jtorch.compile(f)
        got, want = cf(x), f(x)
        v = pre(x)
        wide = v.double() if dtype == "float32" else v
        ref = ((v,) if keep else ()) + tuple(r(wide) for r in reds)
        # each reduction of |v|: a sum that cancels is off by its terms' rounding
        scale = ((0.0,) if keep else ()) + tuple(float(r(wide.abs())) for r in reds)
        for a, e, r, sc in zip(got, want, ref, scale):
            assert a.dtype == e.dtype and a.shape == e.shape
            if a.numel() > 1:
                _bitwise(a, e)  # the pointwise output
            elif dtype == "int64":
                _bitwise(a, e)
            elif pre is cases[-1][0] and dtype == "float32":
                np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=1e-4)
            else:
                np.testing.assert_allclose(a.double().numpy(), r.double().numpy(), rtol=1e-6,
                                           atol=1e-6 * sc)
        assert len(_reducing(cf)) == 1


def test_reductions_over_all_dims_nan_strided_empty_and_readers():
    x = jtorch.randn(300, 700)
    x[5, 9] = float("nan")
    for f in (lambda x: (x * 2).sum(), lambda x: (x + 1).amax(), lambda x: (x - 1).amin()):
        assert jtorch.compile(f)(x).isnan().item()
    y = jtorch.randn(700, 300).t()  # strided: the loop in the operand's memory order
    f = lambda x: ((x * 2).exp() * x, (x * 2).exp().sum())
    cf = jtorch.compile(f)
    for a, e in zip(cf(y), f(y)):
        np.testing.assert_allclose(a.numpy(), e.numpy(), rtol=2e-6)
    assert _reducing(cf)
    with pytest.raises(RuntimeError, match="numel\\(\\) == 0"):  # empty: eager's error
        jtorch.compile(lambda x: (x + 1).amax())(jtorch.randn(0, 3))
    e = jtorch.randn(0, 3)
    _bitwise(jtorch.compile(lambda x: (x + 1).sum())(e), (e + 1).sum())
    # a value read after the reduction is computed by another kernel (the sum exists after)
    def g(x):
        y = x * 2
        return y - y.sum()

    z = jtorch.randn(64, 64)
    np.testing.assert_allclose(jtorch.compile(g)(z).numpy(), g(z).numpy(), rtol=1e-5, atol=1e-4)


def test_deterministic_mode_leaves_reductions_over_all_dims_to_eager():
    f = lambda x: (x * 2 + 1).sum()
    x = jtorch.randn(100_000)
    jtorch.use_deterministic_algorithms(True)
    try:
        cf = jtorch.compile(f)
        _bitwise(cf(x), f(x))
        assert not _reducing(cf)
    finally:
        jtorch.use_deterministic_algorithms(False)


def test_row_sums_of_long_float32_rows_keep_float64_accuracy_across_blocks():
    """A float32 row sum accumulates in float32 within blocks of 256 and in float64 across
    them: a row of 2^20 values sums as accurately as a short one. One float32 accumulator per
    vector lane would reach 2^15 here, where 2^-10 is below half an ulp: 5e-4 lost."""
    x = jtorch.full((2, 1 << 20), 1 + 2.0**-10) + jtorch.rand(2, 1 << 20) * 2.0**-12
    cf = jtorch.compile(lambda x: (x * 2.0).sum(-1) + (x * 0.5).mean(-1))
    got = cf(x).numpy()
    (k,) = _rows(cf)
    assert "for j in range(256):" in k.source and "acc += np.float64(part)" in k.source
    x64 = x.numpy().astype(np.float64)
    np.testing.assert_allclose(got, (x64 * 2).sum(-1) + (x64 * 0.5).mean(-1), rtol=3e-7)
