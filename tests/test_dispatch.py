"""Dispatch: loop-variant selection, dim coalescing, and the strided path vs NumPy/torch."""

import numpy as np
import pytest
import torch

import jtorch
from jtorch import dispatch
from jtorch.kernels import registry


def test_coalesce_merges_contiguous_dims_and_drops_ones():
    shape, strides = dispatch.coalesce((2, 1, 3, 4), [[12, 0, 4, 1], [12, 0, 4, 1]])
    assert shape == [24] and strides == [[1], [1]]
    shape, strides = dispatch.coalesce((2, 3, 4), [[12, 4, 1], [0, 4, 1]])
    assert shape == [2, 12] and strides == [[12, 1], [0, 1]]


@pytest.mark.parametrize("make", [
    lambda a: a.T,                 # transposed
    lambda a: a[::2, 1:],          # sliced with a step
    lambda a: a[:, None, ::2],     # size-1 dim in between, strided
])
def test_strided_inputs_match_torch(make):
    base = np.arange(48, dtype=np.float32).reshape(6, 8) - 20
    # Views are made on the NumPy side so this test does not depend on the view ops.
    j = jtorch.from_numpy(make(base.copy()))
    t = make(torch.from_numpy(base.copy()))
    assert j.shape == t.shape and not j._a.flags.c_contiguous
    np.testing.assert_array_equal((j * 2 + 1).numpy(), (t * 2 + 1).numpy())
    row = jtorch.from_numpy(make(base.copy())[:1])
    np.testing.assert_array_equal(jtorch.maximum(j, row).numpy(), torch.maximum(t, t[:1]).numpy())


def test_inplace_into_non_contiguous_view_writes_base():
    base = jtorch.zeros(4, 5)
    view = base._view(base._a.T)
    view.add_(1.0)
    assert base.numpy().sum() == 20.0
    assert base._version == view._version > 0


def test_all_scalar_operands_fill_every_element():
    x = jtorch.tensor(2.0)
    y = jtorch.zeros(3)
    jtorch.add(x, 1.0, out=y)
    np.testing.assert_array_equal(y.numpy(), [3.0, 3.0, 3.0])


def test_parallel_variant_above_grain_size_matches_serial():
    n = jtorch._flags.GRAIN_SIZE + 17
    a = jtorch.from_numpy(np.linspace(-3, 3, n, dtype=np.float32))
    b = jtorch.from_numpy(np.linspace(-3, 3, n, dtype=np.float32)[: n - 1])
    big = (a * 3 - 1).numpy()
    small = (b * 3 - 1).numpy()
    np.testing.assert_array_equal(big[: n - 1], small)


_IN_PLACE_OPS = ["add", "sub", "mul", "div", "maximum", "pow", "atan2", "remainder",
                  "bitwise_and", "floor_divide", "copysign", "lerp", "addcmul", "clamp_min"]


@pytest.mark.parametrize("name,dtype,n", [
    *[(name, d, 37) for name in _IN_PLACE_OPS for d in ("float32", "float64", "int64")],
    ("add", "float32", "grain"), ("addcmul", "float64", "grain"),
    ("floor_divide", "int64", "grain")])
def test_in_place_loop_equals_the_out_of_place_one(name, dtype, n):
    """``x.op_(...)`` runs ``c_i<pat>`` (operand 0 is the output: no aliased call, which
    LLVM runs scalar): bitwise the out-of-place loop, with tensor, scalar and 0-d operands,
    ``x.op_(x)`` (the output aliased twice) and, past the grain size, the parallel loop."""
    op = registry.REGISTRY[name]
    n = jtorch._flags.GRAIN_SIZE + 19 if n == "grain" else n
    r = np.random.default_rng(3)
    arity = {"binary": 2, "ternary": 3}[op.family]
    arrays = [(r.standard_normal(n) * 4 + 0.5).astype(dtype) for _ in range(arity)]
    if dtype == "int64":
        arrays = [np.where(a == 0, 3, a) for a in arrays]  # (integer division by zero raises)
    extra = [0.5] * op.nparams
    cases = [[jtorch.from_numpy(a) for a in arrays],
             [jtorch.from_numpy(arrays[0])] + [2] * (arity - 1),
             [jtorch.from_numpy(arrays[0])] + [jtorch.tensor(3).to(getattr(jtorch, dtype))] * (arity - 1)]
    for args in cases:
        args = args + extra
        try:
            want = dispatch.pointwise(op, tuple(args))
        except (RuntimeError, NotImplementedError):
            continue  # (the op does not take the dtype)
        if want.dtype is not args[0].dtype:
            continue  # (no in-place form: the result would not fit operand 0)
        x = args[0].clone()
        got = dispatch.pointwise(op, (x, *args[1:]), inplace=True)
        assert got is x
        np.testing.assert_array_equal(x.numpy(), want.numpy())
    x = jtorch.from_numpy(arrays[0].copy())
    try:
        want = dispatch.pointwise(op, (x,) * arity + tuple(extra))
    except (RuntimeError, NotImplementedError):
        return
    if want.dtype is not x.dtype:
        return
    dispatch.pointwise(op, (x,) * arity + tuple(extra), inplace=True)
    np.testing.assert_array_equal(x.numpy(), want.numpy())


def test_in_place_calls_take_the_in_place_loop():
    x, y = jtorch.ones(40), jtorch.ones(40)
    x.add_(y)
    d = jtorch.float32
    assert dispatch._in_place_loop(registry.REGISTRY["add"], 2, d, d, "aa", 40) is \
        dispatch._pw.kernels(registry.REGISTRY["add"], 2, "float32", "float32").c_iaa
    assert dispatch._in_place_loop(registry.REGISTRY["sin"], 1, d, d, "a", 40) is None  # guarded


def test_dense_in_place_calls_skip_the_layout_search(monkeypatch):
    """``x.op_(y)`` with every operand C-contiguous in x's shape runs its in-place loop
    directly (``run_pointwise`` is not called); operands on x's storage, views and dtype
    changes still go through it, with its overlap and cast checks; gradients recorded on the
    direct route are torch's."""
    calls = []
    run = dispatch.run_pointwise
    monkeypatch.setattr(dispatch, "run_pointwise", lambda *a, **k: calls.append(1) or run(*a, **k))
    x, y = jtorch.arange(6.0).reshape(2, 3), jtorch.full((2, 3), 2.0)
    v = x._version
    assert x.add_(y, alpha=3) is x and x.mul_(2).sub_(1).div_(y).addcmul_(y, y, value=0.5) is x
    i = jtorch.arange(6).reshape(2, 3)
    i.add_(4).mul_(jtorch.arange(6).reshape(2, 3))
    assert calls == [] and x._version == v + 5
    np.testing.assert_array_equal(
        x.numpy(), ((np.arange(6.0).reshape(2, 3) + 6) * 2 - 1) / 2 + 2)
    np.testing.assert_array_equal(i.numpy(), (np.arange(6) + 4).reshape(2, 3) * np.arange(6).reshape(2, 3))
    x.add_(x)  # (the same storage: the general route, which allows an exact alias)
    assert calls == [1]
    with pytest.raises(RuntimeError, match="single memory location"):
        s = jtorch.arange(8.0)
        s[1:].add_(s[:-1])
    x.t().add_(1)  # (not C-contiguous)
    with pytest.raises(RuntimeError, match="can't be cast"):
        i.add_(jtorch.ones(2, 3))  # (float into int64: the cast check)
    w, wt = jtorch.ones(3, requires_grad=True), torch.ones(3, requires_grad=True)
    for lib, leaf in ((jtorch, w), (torch, wt)):
        h = leaf * 2
        h.mul_(lib.tensor([1.0, 2.0, 3.0]))
        h.add_(leaf, alpha=2)
        assert type(h.grad_fn).__name__ == "AddBackward0"
        h.sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), wt.grad.numpy())


def test_strided_parallel_variant():
    base = np.arange(300 * 240, dtype=np.float64).reshape(300, 240)
    j = jtorch.from_numpy(base.T)
    np.testing.assert_array_equal((j - 1).numpy(), base.T - 1)


def test_strided_plan_is_reused_across_values_dtypes_and_offsets():
    """The strided path's plan is memoised on geometry only: calls sharing it with other data,
    dtypes, scalars and storage offsets still get their own answers."""
    rng = np.random.default_rng(0)
    base = rng.standard_normal((5, 9, 7))
    for dtype in (np.float32, np.float64, np.int64):
        for off in (0, 1):
            a = base.astype(dtype)[off:off + 4, 1::2]  # non-contiguous, offset in storage
            col = base.astype(dtype)[off:off + 4, :1, :1]  # broadcast over dims 1 and 2
            for s in (2, 0.5, -3):
                ja, jc = jtorch.from_numpy(a), jtorch.from_numpy(col)
                ta, tc = torch.from_numpy(a), torch.from_numpy(col)
                for f in (lambda x, y, s=s: x * y + s, lambda x, y: y - x,
                          lambda x, y, s=s: x.transpose(0, 2) * s):
                    np.testing.assert_allclose(f(ja, jc).numpy(), f(ta, tc).numpy(), rtol=1e-6)
    n = len(dispatch._strided_plans)
    ja * jc
    assert len(dispatch._strided_plans) == n  # the same geometry found its plan


def test_dtype_resolution_is_memoised_per_default_dtype():
    op = registry.get("add")
    x = jtorch.tensor([1, 2])
    assert dispatch.resolve_dtypes(op, (x, 1.5))[2] is jtorch.float32
    jtorch.set_default_dtype(jtorch.float64)
    try:
        assert dispatch.resolve_dtypes(op, (x, 1.5))[2] is jtorch.float64
    finally:
        jtorch.set_default_dtype(jtorch.float32)


def test_unsupported_dtype_raises_not_implemented_with_torch_name():
    with pytest.raises(NotImplementedError, match="\"bitwise_and_cpu\" not implemented for 'Float'"):
        jtorch.bitwise_and(jtorch.ones(2), jtorch.ones(2))


# -- views made by an OpDef's cpu_view (dispatch.view) equal the plan path's ---------------

def _layouts():
    base = np.arange(2 * 3 * 4, dtype=np.float32).reshape(2, 3, 4)
    yield "contiguous", jtorch.from_numpy(base.copy())
    yield "transposed", jtorch.from_numpy(base.copy()).transpose(0, 2)
    yield "offset slice", jtorch.from_numpy(base.copy())[1:]
    yield "stepped", jtorch.from_numpy(base.copy())[:, ::2]
    yield "matrix", jtorch.arange(12.0).reshape(3, 4)
    yield "matrix.t", jtorch.arange(12.0).reshape(3, 4).t()
    yield "empty", jtorch.zeros(0, 4)
    yield "vector", jtorch.arange(5.0)
    yield "0-d", jtorch.tensor(3.0)


_VIEW_CALLS = [
    ("view", lambda x: {"shape": (-1,)}),
    ("view", lambda x: {"shape": (x.numel(), 1), "reshape": True}),
    ("view", lambda x: {"shape": (2, -1)}),
    ("t", lambda x: {}),
    ("transpose", lambda x: {"dim0": 0, "dim1": -1}),
    ("transpose", lambda x: {"dim0": 1, "dim1": 0}),
    ("permute", lambda x: {"dims": tuple(range(x.dim()))[::-1]}),
    ("index", lambda x: {"index": 1}),
    ("index", lambda x: {"index": -1}),
    ("index", lambda x: {"index": 7}),
    ("index", lambda x: {"index": slice(1, None)}),
    ("index", lambda x: {"index": slice(-2, 9, 2)}),
    ("index", lambda x: {"index": slice(None, None, 3)}),
    ("index", lambda x: {"index": slice(3, 1)}),
]


def _geometry(t):
    return (tuple(t.shape), t.stride(), t.storage_offset(), t.dtype, t.numpy().tolist())


@pytest.mark.parametrize("name,params", _VIEW_CALLS, ids=lambda v: v if isinstance(v, str) else "")
def test_cpu_view_shortcut_equals_the_plan_path(name, params):
    op = registry.REGISTRY[name]
    hits = []
    shortcut = op.cpu_view

    def spy(a, **kw):
        r = shortcut(a, **kw)
        hits.append(r is not None)
        return r

    op.cpu_view = spy
    try:
        for layout, x in _layouts():
            kw = params(x)
            for _ in range(2):  # the second call finds what the first memoised
                try:
                    want = dispatch.call(op, x, **kw)
                except (RuntimeError, IndexError) as e:
                    with pytest.raises(type(e)):
                        dispatch.view(op, x, **kw)
                    continue
                got = dispatch.view(op, x, **kw)
                assert _geometry(got) == _geometry(want), layout
                aliases = want._st is x._st  # reshape copies where no view fits
                assert (got._st is x._st) == aliases, layout
                if aliases:
                    assert got._vc is x._vc and got._base is (x if x._base is None else x._base)
    finally:
        op.cpu_view = shortcut
    assert any(hits), f"{name}: the shortcut never made a view"


def test_cpu_view_shortcut_is_not_taken_when_recording_or_tracing():
    x = jtorch.ones(3, 4, requires_grad=True)
    assert x.t().grad_fn is not None
    with jtorch.no_grad():
        assert x.t().grad_fn is None
    seen = []
    old = dispatch.mode
    dispatch.mode = lambda op, args, plan, params: seen.append(op.name) or dispatch.run_plan(op, args, plan)
    try:
        jtorch.ones(3, 4).t()
    finally:
        dispatch.mode = old
    assert seen[-1] == "t"


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "bool", "complex64"])
def test_operands_of_one_broadcast_value_fill_the_result(dtype, monkeypatch):
    """Every tensor operand one value broadcast (an expanded 0-d tensor, the gradient a sum
    hands back; a size-1 one; mixed with Python scalars): the op runs once on that value and
    fills the result, which is C-contiguous as torch's, equal to torch's (and the strided
    loop is not run)."""
    monkeypatch.setattr(dispatch, "_strided", lambda *a: pytest.fail("strided loop ran"))
    jd, td = getattr(jtorch, dtype), getattr(torch, dtype)
    one = True if dtype == "bool" else 3
    j0, t0 = jtorch.tensor(one, dtype=jd), torch.tensor(one, dtype=td)
    j1, t1 = jtorch.tensor([[one]], dtype=jd), torch.tensor([[one]], dtype=td)
    cases = [(lambda x, y: -x if dtype != "bool" else ~x, (0,)),
             (lambda x, y: x * y, (0, 1)), (lambda x, y: x + 2, (0,)),
             (lambda x, y: x == y, (0, 1))]
    for f, _ in cases:
        for shape in [(4, 5), (3, 1, 2), (7,)]:
            jx, tx = j0.expand(*shape), t0.expand(*shape)
            jy, ty = j1.expand(*shape[:-2], 1, shape[-1]) if len(shape) > 1 else j1[0], \
                t1.expand(*shape[:-2], 1, shape[-1]) if len(shape) > 1 else t1[0]
            got, want = f(jx, jy), f(tx, ty)
            assert got.is_contiguous() and tuple(got.shape) == tuple(want.shape)
            np.testing.assert_array_equal(got.numpy(), want.numpy())
    if dtype == "int64":  # integer division by zero: torch's error, not a ZeroDivisionError
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            jtorch.tensor(0).expand(3, 2) // jtorch.tensor(0).expand(3, 2)


def test_fresh_results_replay_their_memoised_recipe(monkeypatch):
    """A broadcast or strided call's layout and loop are decided once per operand geometry
    (``dispatch._fresh``) and replayed: later calls with other values get their own answers
    with torch's result strides, through each route (dense operands with a one-element one,
    one broadcast value, dense in the result's order, strided), serial and parallel (the
    choice per call), and a shape mismatch raises torch's error every time."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((40, 30)).astype(np.float32)
    cases = [lambda m, a: a + m.from_numpy(x[0].copy()),          # strided (a broadcast row)
             lambda m, a: a.t() * a.t(),                           # dense in the result's order
             lambda m, a: a[:1, :1] * 2 + a.new_ones(()),          # dense, one-element operand
             lambda m, a: m.from_numpy(x[:1, :1].copy()).expand(40, 30) * 3,  # one value
             lambda m, a: m.where(a > 0, a[:, :1], a.t().t()),     # ternary, strided
             lambda m, a: a[:, ::2] - 2**60]                        # an int beyond 2^53
    for grain in (1 << 60, 64):  # serial, then parallel loops on the memoised recipes
        monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", grain)
        for k in range(3):
            v = x * (k + 1)
            for f in cases:
                got, want = f(jtorch, jtorch.from_numpy(v)), f(torch, torch.from_numpy(v))
                assert got.stride() == want.stride() and str(got.dtype) == str(want.dtype)
                np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert dispatch._fresh_recipes
    # equal shapes and byte strides in other item sizes: each its own recipe
    b = jtorch.ones(4, 4, dtype=jtorch.float64)[:, :1].expand(4, 4)
    tb = torch.ones(4, 4, dtype=torch.float64)[:, :1].expand(4, 4)
    for jx, tx in ((jtorch.arange(4, dtype=jtorch.float64), torch.arange(4, dtype=torch.float64)),
                   (jtorch.arange(8, dtype=jtorch.float32)[::2],
                    torch.arange(8, dtype=torch.float32)[::2])):
        np.testing.assert_array_equal((jx + b).numpy(), (tx + tb).numpy())
    for _ in range(2):
        with pytest.raises(RuntimeError, match=r"size of tensor a \(30\) must match"):
            jtorch.ones(40, 30) + jtorch.ones(40, 29)[:, :1].expand(40, 3)
