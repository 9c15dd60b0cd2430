"""Decompositions of composite ops into registry primitives (``compile/decompositions.py``).

Each traced op is decomposed inside a capturing backend; the decomposed graph runs with an
Interpreter that checks every node's value against its ``meta["val"]``, and its results are
held to the original graph's (the op's eager kernel, also run by the Interpreter) and to
torch's (computed in float64). Fusion tests run the decomposed graph through the numba
backend's passes and fusion and check that the row groups the pass is for are formed.
"""

from __future__ import annotations

import math
import operator
import warnings

import numpy as np
import pytest
import torch
from helpers import pair, same

import jtorch
import jtorch.nn.functional as F
from jtorch.compile import decompositions as D
from jtorch.compile import fusion, passes
from jtorch.compile.fusion import FusedKernel
from jtorch.compile.graph import target_name
from jtorch.compile.graph_module import GraphModule
from jtorch.compile.interpreter import Interpreter
from jtorch.compile.row_fusion import RowKernel
from jtorch.kernels.defs.normalization import native_layer_norm_op
from jtorch.nn.modules.module import Module

_DTYPES = ["float32", "float64"]
# float32 against a float64 reference rounded to float32; float64 against float64
_TOL = {"float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12), "float16": (2e-3, 1e-4)}


def _ops(graph) -> list:
    return [target_name(n.target) for n in graph.nodes if n.op == "call_function"]


class _Checked(Interpreter):
    """The Interpreter, asserting that each node's value has its ``meta["val"]`` geometry."""

    def run_node(self, n):
        r = super().run_node(n)
        val = n.meta.get("val")
        for v, x in zip(val, r) if isinstance(val, tuple) else ((val, r),):
            if isinstance(v, jtorch.Tensor):
                assert (tuple(x.shape), x.dtype) == (tuple(v.shape), v.dtype), n.format_node()
                if x.numel() > 1:
                    assert [s for k, s in zip(x.shape, x.stride()) if k > 1] == \
                        [s for k, s in zip(v.shape, v.stride()) if k > 1], n.format_node()
        return r


class _Backend:
    """Captures the traced graph and decomposes it; a call runs the original graph (on clones
    of the inputs: it may write them) and then the decomposed one, fused with ``fuse``."""

    def __init__(self, names=None, *, profitable_only: bool = False, fuse: bool = False
                 ) -> None:
        self.names, self.profitable_only, self.fuse = names, profitable_only, fuse
        self.before = self.after = None
        self.kernel_out = self.got = None

    def __call__(self, gm, example_inputs):
        self.before = gm.graph
        text = str(gm.graph)
        self.before_ops = _ops(gm.graph)
        self.after = D.decompose(gm.graph, self.names, profitable_only=self.profitable_only)
        assert str(gm.graph) == text  # the input graph is left as it was
        self.after.lint()
        self.after_ops = _ops(self.after)
        run = _Checked(None, graph=self.after).run
        if self.fuse:
            self.fused = GraphModule(Module(), fusion.fuse(passes.run(self.after)))
            run = self.fused.forward

        def call(*args):
            self.kernel_out = Interpreter(None, graph=self.before).run(*[a.clone() for a in args])
            self.got = run(*args)
            return self.got

        return call

    def ops(self, graph: str = "after") -> list:
        return self.before_ops if graph == "before" else self.after_ops

    def same_as_kernel(self, rtol: float, atol: float) -> None:
        assert len(self.got) == len(self.kernel_out)
        for g, k in zip(self.got, self.kernel_out):
            assert g.dtype == k.dtype and g.shape == k.shape
            torch.testing.assert_close(torch.from_numpy(g.numpy()), torch.from_numpy(k.numpy()),
                                       rtol=rtol, atol=atol, equal_nan=True)


def _run(f, *args, **backend):
    b = _Backend(**backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # var's degrees-of-freedom warning
        res = jtorch.compile(f, backend=b)(*args)
    return b, res


def _ref(res, dtype: str):
    """torch's float64 result rounded to ``dtype`` (tensors in nested tuples)."""
    if isinstance(res, (tuple, list)):
        return tuple(_ref(r, dtype) for r in res)
    return res.to(getattr(torch, dtype)) if res.dtype.is_floating_point else res


def _double(t):
    return None if t is None else t.double()


def _edgy(shape: tuple, dtype: str, seed: int = 0, big: float = 1e30) -> np.ndarray:
    """Normal values times 3 with, where there is room, a very large value, -inf, nan and
    +inf at the first flat positions (one slice each when the reduced dim is the last)."""
    a = np.random.default_rng(seed).standard_normal(shape) * 3
    flat = a.reshape(-1)
    step = shape[-1] if shape else 1
    for k, v in enumerate([big, -math.inf, math.nan, math.inf]):
        if (k + 1) * step <= flat.size - step:  # leave the last slice ordinary
            flat[k * step] = v
    return a.astype(dtype)


def _decomposed(b: _Backend, *names: str) -> None:
    """The ops are in the traced graph and none is left after the pass."""
    before, after = b.ops("before"), b.ops()
    for name in names:
        assert name in before, before
        assert name not in after, after


# -- softmax, log_softmax ---------------------------------------------------------------------

_SOFTMAX_CASES = [((), 0), ((), -1), ((7,), 0), ((4, 9), -1), ((4, 9), 0), ((2, 3, 5), 1),
                  ((2, 3, 5), -1), ((2, 3, 5), 0), ((0, 5), -1), ((6, 1), -1), ((3, 70), 1)]


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize(("shape", "dim"), _SOFTMAX_CASES)
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_family_matches_the_kernel_and_torch(name, shape, dim, dtype):
    big = 3e38 if dtype == "float32" else 1e300  # exp overflows without the max subtracted
    x, tx = pair(_edgy(shape, dtype, big=big))
    b, res = _run(lambda x: getattr(F, name)(x, dim), x)
    _decomposed(b, name)
    rtol, atol = _TOL[dtype]
    b.same_as_kernel(rtol, atol)
    same(res, _ref(getattr(torch, name)(tx.double(), dim), dtype), rtol=rtol, atol=atol,
         strides="numel>1")


@pytest.mark.parametrize(("xdtype", "dtype"), [("float16", None), ("float16", "float64"),
                                               ("float32", "float16"), ("int64", "float32"),
                                               ("float32", "float64")])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_dtype_is_cast_first_and_float16_computes_in_float32(name, xdtype, dtype):
    """As the kernel: the input cast to ``dtype=``, float16 widened to float32, the result
    rounded once."""
    a = (np.random.default_rng(1).standard_normal((5, 33)) * 4).astype(xdtype)
    x, tx = pair(a)
    jd, td = (getattr(jtorch, dtype), getattr(torch, dtype)) if dtype else (None, None)
    b, res = _run(lambda x: getattr(F, name)(x, -1, dtype=jd), x)
    _decomposed(b, name)
    computed = {n.meta["val"].dtype for n in b.after.nodes
                if target_name(n.target) in ("amax", "exp", "sum")}
    out = dtype or xdtype
    assert computed == {jtorch.float32 if out == "float16" else getattr(jtorch, out)}
    rtol, atol = _TOL[out]
    b.same_as_kernel(rtol, atol)
    # torch's own float16 kernel rounds inside: the reference is float64 from the cast input
    ref = getattr(torch, name)(tx.to(td or tx.dtype).double(), -1)
    same(res, _ref(ref, out), rtol=rtol, atol=atol)


# -- logsumexp --------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize(("shape", "dim", "keepdim"), [
    ((), 0, False), ((9,), 0, True), ((4, 9), -1, False), ((4, 9), 0, True),
    ((2, 3, 5), (1, 2), False), ((2, 3, 5), (0, 2), True), ((2, 3, 5), None, False),
    ((0, 4), 1, False)])
def test_logsumexp_matches_the_kernel_and_torch(shape, dim, keepdim, dtype):
    x, tx = pair(_edgy(shape, dtype, big=3e38 if dtype == "float32" else 1e300))
    b, res = _run(lambda x: jtorch.logsumexp(x, dim, keepdim), x)
    _decomposed(b, "logsumexp")
    rtol, atol = _TOL[dtype]
    b.same_as_kernel(rtol, atol)
    tdim = tuple(range(len(shape))) if dim is None else dim
    same(res, _ref(torch.logsumexp(tx.double(), tdim, keepdim), dtype), rtol=rtol, atol=atol)


def test_all_minus_inf_and_plus_inf_slices_of_logsumexp():
    x, tx = pair(np.array([[-np.inf] * 3, [1.0, np.inf, 2.0], [1.0, np.nan, 2.0]], np.float32))
    b, res = _run(lambda x: jtorch.logsumexp(x, -1), x)
    _decomposed(b, "logsumexp")
    same(res, torch.logsumexp(tx, -1))


# -- layer norm -------------------------------------------------------------------------------

_LN_CASES = [((8,), [8]), ((4, 8), [8]), ((2, 3, 4), [3, 4]), ((2, 3, 4), [2, 3, 4]),
             ((0, 8), [8]), ((5, 1), [1])]


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("affine", ["none", "weight", "both"])
@pytest.mark.parametrize(("shape", "normalized"), _LN_CASES)
def test_native_layer_norm_matches_the_kernel_and_torch(shape, normalized, affine, dtype):
    """All three results: the output, the row means and 1 / sqrt(var + eps)."""
    rng = np.random.default_rng(2)
    a = (rng.standard_normal(shape) * 3 + 5).astype(dtype)
    n = math.prod(normalized)
    if a.size > 2 * n and n > 1:  # a nan row and an inf row (torch's one-element inf row: nan)
        a.reshape(-1, n)[0, 0] = np.nan
        a.reshape(-1, n)[1, -1] = np.inf
    x, tx = pair(a)
    w, tw = pair(rng.standard_normal(normalized).astype(dtype))
    bias, tb = pair(rng.standard_normal(normalized).astype(dtype))
    w, tw = (w, tw) if affine != "none" else (None, None)
    bias, tb = (bias, tb) if affine == "both" else (None, None)

    def f(x):
        return native_layer_norm_op(x, w, bias, normalized_shape=normalized, eps=1e-5)

    b, res = _run(f, x)
    _decomposed(b, "native_layer_norm")
    rtol, atol = _TOL[dtype]
    b.same_as_kernel(rtol, 10 * atol)
    ref = torch.native_layer_norm(tx.double(), normalized, _double(tw), _double(tb), 1e-5)
    same(tuple(res), _ref(ref, dtype), rtol=rtol, atol=10 * atol, strides="numel>1")


def test_layer_norm_of_rows_far_from_zero_is_as_accurate_as_torch():
    """x - mean is exact there (Sterbenz): the float32 error is that of the mean's rounding,
    within what torch's own float32 layer norm loses."""
    a = (np.random.default_rng(3).standard_normal((16, 64)) + 1000).astype(np.float32)
    x, tx = pair(a)
    b, res = _run(lambda x: F.layer_norm(x, (64,)), x)
    _decomposed(b, "native_layer_norm")
    ref = torch.nn.functional.layer_norm(tx.double(), (64,)).numpy()
    err = np.abs(res.numpy() - ref).max()
    torch_err = np.abs(torch.nn.functional.layer_norm(tx, (64,)).double().numpy() - ref).max()
    assert err <= 2 * torch_err + 1e-6


# -- var, std, var_mean, std_mean (group, instance and batch norm) ----------------------------

_MOMENT_CASES = [((), None, {}), ((7,), 0, {}), ((4, 9), -1, {"correction": 0}),
                 ((4, 9), 1, {"keepdim": True}), ((4, 9), 0, {"correction": 2}),
                 ((2, 3, 5), (1, 2), {"correction": 0, "keepdim": True}),
                 ((2, 3, 5), (0, 2), {"keepdim": True}), ((2, 3, 5), None, {"correction": 0}),
                 ((0, 4), 1, {"correction": 0})]


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize(("shape", "dim", "kw"), _MOMENT_CASES)
@pytest.mark.parametrize("name", ["var", "std", "var_mean", "std_mean"])
def test_moments_match_the_kernel_and_torch(name, shape, dim, kw, dtype):
    if shape == () and kw.get("correction", 1):
        kw = {"correction": 0}  # one element: N - 1 = 0 is left to the kernel (a warning)
    a = (np.random.default_rng(4).standard_normal(shape) * 2 + 3).astype(dtype)
    if a.size > 8:  # inf last: torch's running mean of an inf then a finite value is nan
        a.reshape(-1)[0], a.reshape(-1)[-1] = np.nan, np.inf
    x, tx = pair(a)
    b, res = _run(lambda x: getattr(jtorch, name)(x, dim, **kw), x)
    _decomposed(b, name)
    rtol, atol = _TOL[dtype]
    b.same_as_kernel(rtol, atol)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch's dof warning on empty inputs
        want = getattr(torch, name)(tx.double(), dim, **kw)
    same(res, _ref(want, dtype), rtol=rtol, atol=atol)


def test_float16_moments_compute_in_float32():
    """float16 layer norm is composed around a float16 var_mean: its pieces run in float32
    and the two results are rounded once."""
    x, tx = pair((np.random.default_rng(11).standard_normal((6, 40)) * 2 + 1).astype("float16"))
    b, res = _run(lambda x: F.layer_norm(x, (40,)), x)
    _decomposed(b, "var_mean")
    assert {n.meta["val"].dtype for n in b.after.nodes if target_name(n.target) == "mean"} == \
        {jtorch.float32}
    b.same_as_kernel(*_TOL["float16"])
    want = torch.nn.functional.layer_norm(tx.double(), (40,)).half()
    same(res, want, rtol=2e-3, atol=2e-3)


def test_the_unbiased_flag_in_the_dim_position():
    x, tx = pair(np.random.default_rng(5).standard_normal((3, 4)))
    b, res = _run(lambda x: jtorch.var_mean(x, False), x)
    _decomposed(b, "var_mean")
    same(res, torch.var_mean(tx, False), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("which", ["group", "instance", "batch_eval", "batch_train"])
def test_norm_layers_record_var_mean_and_it_decomposes(which, dtype):
    """group, instance and batch norm are compositions around one var_mean node; batch norm
    in training writes its running statistics in place (those nodes stay as they are)."""
    rng = np.random.default_rng(6)
    x, tx = pair(rng.standard_normal((2, 6, 3, 3)).astype(dtype) * 2 + 1)
    rm, trm = pair(rng.standard_normal(6).astype(dtype))
    rv, trv = pair(rng.random(6).astype(dtype) + 0.5)
    fns = {
        "group": lambda lib, x, rm, rv: lib.nn.functional.group_norm(x, 3),
        "instance": lambda lib, x, rm, rv: lib.nn.functional.instance_norm(x),
        "batch_eval": lambda lib, x, rm, rv: lib.nn.functional.batch_norm(x, rm, rv),
        "batch_train": lambda lib, x, rm, rv: lib.nn.functional.batch_norm(x, rm, rv,
                                                                           training=True),
    }
    f = fns[which]
    b, res = _run(lambda x, rm, rv: f(jtorch, x, rm, rv), x, rm, rv)
    if which != "batch_eval":  # inference reads the running statistics: no var_mean
        _decomposed(b, "var_mean")
    rtol, atol = _TOL[dtype]
    b.same_as_kernel(rtol, atol)
    trm, trv = trm.double(), trv.double()
    want = f(torch, tx.double(), trm, trv)
    same(res, _ref(want, dtype), rtol=rtol, atol=10 * atol)
    same((rm, rv), _ref((trm, trv), dtype), rtol=rtol, atol=atol)  # the running statistics


# -- nll_loss, cross_entropy ------------------------------------------------------------------

_NLL_CASES = [((4, 7), (4,)), ((7,), ()), ((3, 5, 2, 2), (3, 2, 2)), ((0, 5), (0,))]


@pytest.mark.parametrize("dtype", _DTYPES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize(("shape", "tshape"), _NLL_CASES)
def test_nll_loss_matches_the_kernel_and_torch(shape, tshape, reduction, weighted, dtype):
    rng = np.random.default_rng(7)
    c = shape[0] if len(shape) == 1 else shape[1]
    x, tx = pair(rng.standard_normal(shape).astype(dtype))
    t_np = rng.integers(0, c, tshape)
    if t_np.size > 1:
        t_np.reshape(-1)[1] = 3 if c > 3 else 0  # the ignored class
    t, tt = pair(t_np)
    w, tw = pair(rng.random(c).astype(dtype) + 0.1) if weighted else (None, None)
    b, res = _run(lambda x, t: F.nll_loss(x, t, w, ignore_index=3, reduction=reduction), x, t,
                  names={"nll_loss", "nll_loss2d"})
    assert {"nll_loss", "nll_loss2d"} & set(b.ops("before"))
    assert not {"nll_loss", "nll_loss2d"} & set(b.ops())
    rtol, atol = _TOL[dtype]
    b.same_as_kernel(rtol, atol)
    want = torch.nn.functional.nll_loss(tx.double(), tt, _double(tw), ignore_index=3,
                                        reduction=reduction)
    same(res, _ref(want, dtype), rtol=rtol, atol=atol)


def test_nll_loss_of_only_ignored_targets_is_nan_and_ignored_rows_read_nothing():
    """An ignored row is 0 even where its class 0 input is -inf (no inf * 0)."""
    x, tx = pair(np.array([[-np.inf, 1.0], [2.0, 3.0]], np.float32))
    t, tt = pair(np.array([-100, -100]))
    for reduction in ("none", "mean", "sum"):
        b, res = _run(lambda x, t, r=reduction: F.nll_loss(x, t, reduction=r), x, t,
                      names={"nll_loss"})
        _decomposed(b, "nll_loss")
        same(res, torch.nn.functional.nll_loss(tx, tt, reduction=reduction))


def test_cross_entropy_is_log_softmax_and_nll_loss():
    rng = np.random.default_rng(8)
    x, tx = pair(rng.standard_normal((6, 10)).astype(np.float32))
    t, tt = pair(rng.integers(0, 10, 6))
    w, tw = pair(rng.random(10).astype(np.float32))
    b, res = _run(lambda x, t, w: F.cross_entropy(x, t, w, ignore_index=2), x, t, w,
                  names={"log_softmax", "nll_loss"}, fuse=True)
    _decomposed(b, "log_softmax", "nll_loss")
    same(res, torch.nn.functional.cross_entropy(tx, tt, tw, ignore_index=2), rtol=1e-5,
         atol=1e-6)
    assert any(isinstance(n.target, RowKernel) for n in b.fused.graph.nodes)


# -- what is left as it is --------------------------------------------------------------------

def _kept(f, *args, name: str, **backend) -> None:
    b, _ = _run(f, *args, **backend)
    assert b.after is b.before and name in b.ops()


def test_nodes_that_cannot_be_decomposed_exactly_stay():
    x = jtorch.randn(4, 6)
    _kept(lambda x: F.softmax(x, -1), jtorch.randn(4, 0), name="softmax")  # amax of nothing
    _kept(lambda x: F.softmax(x.t(), -1), x, name="softmax")  # a strided result layout
    _kept(lambda x: jtorch.var(x, 1), jtorch.randn(4, 1), name="var")  # N - 1 = 0
    _kept(lambda x: jtorch.logsumexp(x, 1), jtorch.randint(0, 5, (3, 4)), name="logsumexp")
    _kept(lambda x: F.softmax(x, -1), x.clone().requires_grad_(), name="softmax")  # gradients
    with jtorch.no_grad():
        b, _ = _run(lambda x: F.softmax(x, -1), x.clone().requires_grad_())
    _decomposed(b, "softmax")  # no gradient to take: decomposed


def test_symbolic_sizes_stay():
    b = _Backend()
    f = jtorch.compile(lambda x: F.softmax(x, -1) + 1, backend=b, dynamic=True)
    f(jtorch.randn(3, 5))
    assert b.before.symbols and b.after is b.before and "softmax" in b.ops()


def test_the_default_keeps_moments_to_trailing_dims_and_nll_loss_whole():
    x, t = jtorch.randn(4, 6, 5), jtorch.randint(0, 6, (4,))
    default = {"names": D.DEFAULT, "profitable_only": True}
    _kept(lambda x: jtorch.var_mean(x, (0, 2)), x, name="var_mean", **default)
    for dims in ((2,), (1, 2), None):
        b, _ = _run(lambda x, d=dims: jtorch.var_mean(x, d), x, **default)
        _decomposed(b, "var_mean")
    b, _ = _run(lambda x: F.softmax(x, 0), x, **default)  # any dim: faster than its kernel
    _decomposed(b, "softmax")
    b, _ = _run(lambda x, t: F.cross_entropy(x[:, :, 0], t), x, t, **default)
    assert "nll_loss" in b.ops() and "log_softmax" not in b.ops()
    assert D.decompose.__kwdefaults__ == {"profitable_only": True}


def test_unknown_names_raise():
    b, _ = _run(lambda x: x.exp(), jtorch.randn(3))
    with pytest.raises(ValueError, match="no decomposition for \\['gelu'\\]"):
        D.decompose(b.before, {"gelu"})


# -- fusion ---------------------------------------------------------------------------------

def _rows(b: _Backend) -> list:
    return [n.target for n in b.fused.graph.nodes if isinstance(n.target, RowKernel)]


@pytest.mark.parametrize("shape", [(7,), (5, 33), (2, 3, 40)])
def test_decomposed_ops_fuse_into_row_groups_with_their_neighbours(shape):
    """softmax, layer norm, log_softmax and logsumexp under the backend's default: row
    kernels that take the pointwise ops on either side."""
    rng = np.random.default_rng(9)
    x, tx = pair(rng.standard_normal(shape).astype(np.float32) * 3)
    w, tw = pair(rng.standard_normal(shape[-1]).astype(np.float32))
    fns = [
        lambda lib, x, w: lib.softmax(x * 2 + 1, -1) * w,
        lambda lib, x, w: lib.relu(lib.nn.functional.layer_norm(x + 1, shape[-1:], w, w)),
        lambda lib, x, w: lib.log_softmax(x, -1).exp() - lib.logsumexp(x, -1, keepdim=True),
    ]
    for f in fns:
        b, res = _run(lambda x, w, f=f: f(jtorch, x, w), x, w, names=D.DEFAULT,
                      profitable_only=True, fuse=True)
        assert _rows(b) and not D.DEFAULT & set(b.ops())
        b.same_as_kernel(2e-6, 2e-6)
        same(res, f(torch, tx.double(), tw.double()).float(), rtol=1e-5, atol=1e-5)


def test_group_norm_and_batch_norm_training_run_through_the_numba_backend():
    """The whole backend (functionalize for the running statistics, passes, fusion) on the
    decomposed graph; group norm's statistics and normalisation become one row kernel."""
    rng = np.random.default_rng(10)
    x, tx = pair(rng.standard_normal((4, 6, 5, 5)).astype(np.float32))
    rm, trm = pair(np.zeros(6, np.float32))
    rv, trv = pair(np.ones(6, np.float32))
    captured = []

    def backend(gm, example_inputs):
        g = D.decompose(gm.graph, D.DEFAULT, profitable_only=False)
        fn = fusion.numba_backend(GraphModule(Module(), g), example_inputs)
        captured.append(fn.__self__)
        return fn

    def f(lib, x, rm, rv):
        gn = lib.nn.functional.group_norm(x, 3)
        return lib.nn.functional.batch_norm(gn, rm, rv, training=True)

    res = jtorch.compile(lambda x, rm, rv: f(jtorch, x, rm, rv), backend=backend)(x, rm, rv)
    same(res, f(torch, tx, trm, trv), rtol=1e-5, atol=1e-5)
    same((rm, rv), (trm, trv), rtol=1e-5, atol=1e-6)
    targets = [n.target for n in captured[0].graph.nodes]
    assert not any(getattr(t, "name", None) == "var_mean" for t in targets)
    assert any(isinstance(t, RowKernel) for t in targets)


def test_activations_are_single_pointwise_ops_that_fuse_as_they_are():
    """gelu, silu, mish and softplus need no decomposition: one fused kernel already."""
    b, _ = _run(lambda x: F.gelu(x) + F.silu(x) * F.mish(x) - F.softplus(x), jtorch.randn(64),
                fuse=True)
    assert b.after is b.before
    (k,) = [n.target for n in b.fused.graph.nodes if isinstance(n.target, FusedKernel)]
    assert {"gelu", "silu", "mish", "softplus"} <= {n.split("_")[0] for n in k.names}


def test_getitem_users_of_a_multi_output_node_read_the_new_nodes():
    x = jtorch.randn(3, 8)
    b, (y, mean, rstd) = _run(
        lambda x: native_layer_norm_op(x, None, None, normalized_shape=[8], eps=1e-5), x)
    getitems = [n for n in b.after.nodes if n.target is operator.getitem]
    assert not getitems and "native_layer_norm" not in b.ops()
    assert (y.shape, mean.shape, rstd.shape) == ((3, 8), (3, 1), (3, 1))
    b.same_as_kernel(1e-5, 1e-6)
