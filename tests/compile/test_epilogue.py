"""Matmul epilogues (``compile/epilogue.py``): which products and chains form a group, the
generated kernel, exactness against eager, the product against float64, and fallbacks.

Inputs are dyadic (k/8 and k/16, |k| <= 8) where results are compared bit for bit: every
partial sum of the product is then exact, so any summation order (BLAS's whole product,
the kernel's row split) gives eager's product, and any difference is the epilogue's.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
import torch

import jtorch
import jtorch.nn.functional as F
from jtorch.compile import fusion, passes
from jtorch.compile.config import config
from jtorch.compile.epilogue import EpilogueKernel, fuse_epilogues
from jtorch.compile.graph_module import GraphModule


@pytest.fixture(autouse=True)
def _grain(monkeypatch):
    """The parallel builds and the row split from 2^17 elements of work (the grain these
    tests' sizes were chosen around): small products and convolutions take the fused paths
    the tests check."""
    monkeypatch.setattr(jtorch._flags, "GRAIN_SIZE", 1 << 17)


def _backend(gm, example_inputs):
    """The "numba" backend's passes with the epilogues fused first."""
    m = GraphModule(gm, gm.graph.copy())
    passes.run(m.graph)
    return GraphModule(m, fusion.fuse(fuse_epilogues(m.graph))).forward


def _compile(fn):
    return jtorch.compile(fn, backend=_backend)


def _kernels(cf) -> list:
    return [n.target for fn, _ in cf.pieces.values() for n in fn.__self__.graph.nodes
            if isinstance(n.target, EpilogueKernel)]


def _dyadic(*shape, den: int = 8, dtype=jtorch.float32, seed: int = 0):
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 9, size=shape).astype(np.float64) / den
    return jtorch.tensor(a, dtype=dtype)


def _bitwise(a, b) -> None:
    assert a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())


def _split_runs(m: int, k: int, n: int) -> bool:
    """Whether the kernel's row split runs for this product here (else eager's product)."""
    from jtorch import _threads

    nt = numba.get_num_threads()
    return config.gemm_row_split and m >= 32 * nt and _threads.use_parallel(m * n * k >> 5) \
        and _threads.serial_blas.available()


@pytest.fixture(params=[False, True], ids=["blas_threads", "row_split"])
def row_split(request, monkeypatch):
    """Both ways of running a product's epilogue: BLAS's threads then the epilogue's pass
    (the default), and the row split (``config.gemm_row_split``)."""
    monkeypatch.setattr(config, "gemm_row_split", request.param)
    return request.param


def _linear_gelu(x, w, b):
    return F.gelu(F.linear(x, w, b))


# sizes: one row, odd, the row split (160 x 192 x 256), empty rows, columns and sums
@pytest.mark.parametrize("m,k,n", [(1, 16, 32), (7, 33, 65), (160, 192, 256), (0, 8, 5),
                                   (6, 8, 0), (5, 0, 3)])
def test_linear_gelu_is_one_kernel_bitwise_eager(m, k, n, row_split):
    x, w, b = _dyadic(m, k), _dyadic(n, k, den=16, seed=1), _dyadic(n, seed=2)
    cf = _compile(_linear_gelu)
    _bitwise(cf(x, w, b), _linear_gelu(x, w, b))
    (kern,) = _kernels(cf)
    assert kern.names == ["addmm", "gelu"] and len(kern.outs) == 1
    assert bool(kern._mods) == _split_runs(m, k, n)  # t(w) (a transposed view) takes the split


def test_the_product_is_within_float_tolerance_of_float64(row_split):
    """Random operands: the split product against a float64 reference, as close as eager's."""
    rng = np.random.default_rng(0)
    xs, ws, bs = (rng.standard_normal(s) for s in ((160, 192), (256, 192), (256,)))
    x, w, b = (jtorch.tensor(a, dtype=jtorch.float32) for a in (xs, ws, bs))
    ref = torch.nn.functional.gelu(torch.nn.functional.linear(
        *(torch.tensor(np.float32(a), dtype=torch.float64) for a in (xs, ws, bs)))).numpy()
    cf = _compile(_linear_gelu)
    got, eager = cf(x, w, b).numpy(), _linear_gelu(x, w, b).numpy()
    tol = 4 * np.abs(eager - ref).max() + 1e-5
    assert np.abs(got - ref).max() <= tol
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
    assert bool(_kernels(cf)[0]._mods) == _split_runs(160, 192, 256)


@pytest.mark.parametrize("m,k,n", [(7, 9, 5), (160, 192, 256)])
@pytest.mark.parametrize("rshape", ["full", "row", "col", "one", "0d"])
def test_residual_and_scale_operands_broadcast(m, k, n, rshape, row_split):
    shape = {"full": (m, n), "row": (n,), "col": (m, 1), "one": (1, 1), "0d": ()}[rshape]
    x, w, b, r = _dyadic(m, k), _dyadic(n, k, den=16, seed=1), _dyadic(n, seed=2), \
        _dyadic(*shape, seed=3)

    def f(x, w, b, r):
        return F.silu(F.linear(x, w, b)) * 0.5 + r

    cf = _compile(f)
    _bitwise(cf(x, w, b, r), f(x, w, b, r))
    (kern,) = _kernels(cf)
    assert kern.names == ["addmm", "silu", "mul", "add"]


@pytest.mark.parametrize("cshape", [(160, 256), (1, 256), (160, 1), (256,), (), (1,)])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2), (0, 1), (-1, 0.25)])
def test_addmm_bias_broadcasts_and_scalars(cshape, beta, alpha, row_split):
    x, w, c = _dyadic(160, 192), _dyadic(256, 192, den=16, seed=1), _dyadic(*cshape, seed=2)
    if beta == 0:
        c = c * float("nan")  # beta 0 ignores the bias's values

    def f(c, x, w):
        return jtorch.relu(jtorch.addmm(c, x, w.t(), beta=beta, alpha=alpha))

    cf = _compile(f)
    _bitwise(cf(c, x, w), f(c, x, w))
    (kern,) = _kernels(cf)
    assert kern.names == ["addmm", "relu"]
    assert bool(kern._mods) == _split_runs(160, 192, 256)


def test_a_float64_residual_promotes_the_epilogue():
    x, w, b = _dyadic(160, 192), _dyadic(256, 192, den=16, seed=1), _dyadic(256, seed=2)
    r = jtorch.randn(160, 256, dtype=jtorch.float64)
    f = lambda x, w, b, r: F.relu(F.linear(x, w, b)) / 3 + r
    cf = _compile(f)
    out = cf(x, w, b, r)
    assert out.dtype == jtorch.float64
    _bitwise(out, f(x, w, b, r))
    assert [k.names for k in _kernels(cf)] == [["addmm", "relu", "div", "add"]]


def test_float64_and_mm_without_bias():
    x, w = _dyadic(160, 192, dtype=jtorch.float64), _dyadic(192, 256, seed=1, dtype=jtorch.float64)
    f = lambda x, w: jtorch.tanh(x @ w) * 3 - 1
    cf = _compile(f)
    _bitwise(cf(x, w), f(x, w))
    (kern,) = _kernels(cf)
    assert kern.names == ["mm", "tanh", "mul", "sub"]


@pytest.mark.parametrize("m,lone", [(160, True), (8, False)])
def test_a_large_lone_addmm_is_its_own_epilogue(m, lone):
    """Its bias is its epilogue, worth a kernel where the product is split over the threads;
    a small one stays eager's addmm."""
    x, w, b = _dyadic(m, 256), _dyadic(128, 256, den=16, seed=1), _dyadic(128, seed=2)
    f = lambda x, w, b: F.linear(x, w, b).sum(-1)
    cf = _compile(f)
    _bitwise(cf(x, w, b), f(x, w, b))
    assert [k.names for k in _kernels(cf)] == [["addmm"]] * lone


def test_the_gelu_mlp_is_two_kernels():
    """The second product reads gelu's values (not dyadic): equal to eager within rounding."""
    x, w1, b1 = _dyadic(160, 192), _dyadic(256, 192, den=16, seed=1), _dyadic(256, seed=2)
    w2, b2 = _dyadic(128, 256, den=16, seed=3), _dyadic(128, seed=4)

    def f(x, w1, b1, w2, b2):
        return F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)

    cf = _compile(f)
    np.testing.assert_allclose(cf(x, w1, b1, w2, b2).numpy(), f(x, w1, b1, w2, b2).numpy(),
                               rtol=1e-5, atol=1e-5)
    assert [k.names for k in _kernels(cf)] == [["addmm", "gelu"], ["addmm_1"]]


def test_a_view_of_the_product_joins_the_group():
    """3-D linear (addmm, then a view unfolding its rows) and x @ W on a batch (mm, view)."""
    x, w, b = _dyadic(4, 40, 24), _dyadic(32, 24, den=16, seed=1), _dyadic(32, seed=2)
    f = lambda x: F.silu(F.linear(x, w, b)) + 1
    g = lambda x: F.relu(x @ w.t()) * x.sum()
    for fn, names in ((f, ["addmm", "view_1", "silu", "add"]),
                      (g, ["mm", "view_1", "relu", "mul"])):
        cf = _compile(fn)
        _bitwise(cf(x), fn(x))
        assert [k.names for k in _kernels(cf)] == [names]


def test_bmm_epilogue():
    a, b = _dyadic(3, 7, 5), _dyadic(3, 5, 6, seed=1)
    f = lambda a, b: jtorch.sigmoid(jtorch.bmm(a, b)) * 2
    cf = _compile(f)
    _bitwise(cf(a, b), f(a, b))
    assert [k.names for k in _kernels(cf)] == [["bmm", "sigmoid", "mul"]]


@pytest.mark.parametrize("m", [160, 5])
def test_values_read_after_the_group_are_its_outputs(m):
    x, w, b = _dyadic(m, 192), _dyadic(256, 192, den=16, seed=1), _dyadic(256, seed=2)

    def f(x, w, b):
        h = F.linear(x, w, b)
        r = F.relu(h)
        return h, r * 2, r.sum()

    cf = _compile(f)
    for got, want in zip(cf(x, w, b), f(x, w, b)):
        _bitwise(got, want)
    (kern,) = _kernels(cf)
    assert kern.names == ["addmm", "relu", "mul"] and [o.name for o in kern.outs] == \
        ["addmm", "relu", "mul"]


def _all_bitwise(got, want) -> None:
    """Each result (one or a tuple of them) bitwise the other's."""
    for r, e in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        _bitwise(r, e)


def test_what_stays_eager():
    """int products, float16, an mm whose product is read elsewhere, addmm with alpha 0."""
    i, j = jtorch.randint(-5, 5, (6, 4)), jtorch.randint(-5, 5, (4, 3))
    h, g = _dyadic(6, 4, dtype=jtorch.float16), _dyadic(4, 3, seed=1, dtype=jtorch.float16)
    x, w = _dyadic(6, 4), _dyadic(4, 3, seed=1)
    cases = [(lambda a, b: jtorch.relu(a @ b) + 1, (i, j)),
             (lambda a, b: jtorch.relu(a @ b) + 1, (h, g)),
             (lambda a, b: (jtorch.relu(a @ b), (a @ b).sum()), (x, w)),
             (lambda a, b: jtorch.relu(jtorch.addmm(a[:, :3], a, b, alpha=0)), (x, w))]
    for fn, args in cases:
        cf = _compile(fn)
        _all_bitwise(cf(*args), fn(*args))
        assert _kernels(cf) == []


def test_operands_the_kernel_cannot_take_run_eagerly():
    """A strided residual or left operand: fused kernel, eager product or eager epilogue."""
    x, w, b = _dyadic(160, 192), _dyadic(256, 192, den=16, seed=1), _dyadic(256, seed=2)
    r = _dyadic(256, 160, seed=3).t()
    xt = _dyadic(192, 160, seed=4).t()
    ws = _dyadic(256, 384, den=16, seed=5)[:, ::2]
    f = lambda x, w, b, r: F.gelu(F.linear(x, w, b)) + r
    for args in ((x, w, b, r), (xt, w, b, r.contiguous()), (x, ws, b, r.contiguous())):
        cf = _compile(f)
        _bitwise(cf(*args), f(*args))
        assert len(_kernels(cf)) == 1


def _same_value_and_grads(cf, f, x, w, b) -> None:
    """The compiled loss and its gradients for x and w, bitwise eager's."""
    out = cf(x, w, b)
    out.backward()
    gx, gw = x.grad.clone(), w.grad.clone()
    x.grad = w.grad = None
    ref = f(x, w, b)
    ref.backward()
    _bitwise(out, ref)
    _bitwise(gx, x.grad)
    _bitwise(gw, w.grad)


def test_gradients_take_the_eager_path():
    x = _dyadic(7, 9).requires_grad_()
    w, b = _dyadic(5, 9, den=16, seed=1).requires_grad_(), _dyadic(5, seed=2)
    f = lambda x, w, b: (F.gelu(F.linear(x, w, b)) * 2).sum()
    cf = _compile(f)
    _same_value_and_grads(cf, f, x, w, b)
    assert [k.names for k in _kernels(cf)] == [["addmm", "gelu", "mul"]]


def test_nothing_to_fuse_returns_the_graph_itself():
    def backend(gm, example_inputs):
        assert fuse_epilogues(gm.graph) is gm.graph
        return gm.forward

    x = jtorch.randn(4, 3)
    jtorch.compile(lambda x: (x @ x.t()).sum() + jtorch.relu(x), backend=backend)(x)


def test_generated_module_multiplies_each_threads_rows_then_runs_their_epilogue():
    x, w, b = _dyadic(160, 192), _dyadic(256, 192, den=16, seed=1), _dyadic(256, seed=2)
    cf = _compile(_linear_gelu)
    cf(x, w, b)
    (kern,) = _kernels(cf)
    src = kern.source_for("fr")
    assert "v0 = np.float32(_f_add_scalar(np.float32(x0[i]), np.float32(x1[i])))" in src
    assert "v1 = np.float32(_f_gelu_scalar(np.float32(v0)))" in src
    drive = src.split("def gemm_epilogue(a, b, p, out0, in0, in1, m, n, nt):")[1]
    assert "for c in prange(nt):" in drive and "np.dot(a[lo:hi], b, p[lo:hi])" in drive
    assert "_call(out0, in0, in1, lo, hi, 0, n, n)" in drive
    assert "_call(out0, in0, in1, 0, 1, lo * n, hi * n, m * n)" in kern.source_for("ff", False)


def test_symbolic_sizes():
    """dynamic=True: a 2-D chain fuses; a view whose shape varies between calls does not join
    (nor does its addmm alone: its size is unknown)."""
    w, b = _dyadic(32, 16, den=16, seed=1), _dyadic(32, seed=2)
    f = lambda x: F.silu(F.linear(x, w, b)) + 1
    for dims, names in (((16,), [["addmm", "silu", "add"]]), ((4, 16), [])):
        cf = jtorch.compile(f, backend=_backend, dynamic=True)
        for n in (3, 5, 70):
            x = _dyadic(n, *dims, seed=n)
            _bitwise(cf(x), f(x))
        assert [k.names for k in _kernels(cf)] == names


# -- convolutions ------------------------------------------------------------------------------

def _conv_kernels(cf) -> list:
    from jtorch.compile.epilogue import ConvEpilogueKernel

    return [k for k in _kernels(cf) if isinstance(k, ConvEpilogueKernel)]


def _conv_fuses(x, w, stride=1, padding=0, dilation=1, groups=1) -> bool:
    """Whether the per-image kernel runs for this convolution here (eager convolves image by
    image over the threads), else eager's convolution and the epilogue's pass."""
    from jtorch import _threads
    from jtorch.kernels.cpu import conv as ck

    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    s, p, d = ((v, v) if isinstance(v, int) else v for v in (stride, padding, dilation))
    oh = h if p == "same" else (h + 2 * p[0] - d[0] * (kh - 1) - 1) // s[0] + 1
    ow = wd if p == "same" else (wd + 2 * p[1] - d[1] * (kw - 1) - 1) // s[1] + 1
    ll, kk = oh * ow, kh * kw
    return n > 1 and o * ll * c > 0 and \
        ck._per_image(ll, o // groups * (c // groups) * kk * ll) and \
        _threads.use_parallel(c * kk * ll * n)


def _conv_relu(x, w, b, **kw):
    return F.relu(F.conv2d(x, w, b, **kw))


@pytest.fixture(autouse=True)
def _per_image_convolutions(monkeypatch):
    """The fused kernel convolves as eager's per-image im2col path does, which eager takes
    where its direct and Winograd kernels cannot run; these tests force that family (for
    eager too) so the fused kernel runs on any geometry."""
    from jtorch.kernels.cpu import conv as ck

    monkeypatch.setattr(ck, "_FORCE", "im2col")


# (N, C, O, H, W, k, kwargs): the per-image kernel, odd sizes, stride/dilation/padding, short
# output rows (gather tables), one image, no images, small planes (eager's batched GEMM)
_CONVS = [(8, 16, 24, 16, 16, 3, {"padding": 1}),
          (5, 7, 9, 19, 23, 3, {"padding": 2, "stride": 2}),
          (6, 8, 12, 21, 17, (3, 2), {"dilation": (2, 1), "padding": (1, 0)}),
          (4, 16, 8, 40, 12, 5, {"stride": (1, 2), "padding": 2}),
          (6, 8, 12, 20, 20, 4, {"padding": "same"}),
          (3, 32, 16, 14, 14, 1, {}),
          (1, 16, 24, 16, 16, 3, {"padding": 1}),
          (0, 16, 24, 16, 16, 3, {"padding": 1}),
          (8, 4, 6, 6, 6, 3, {})]


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("case", _CONVS, ids=lambda c: "x".join(map(str, c[:5])))
@pytest.mark.parametrize("bias", [True, False])
def test_conv_relu_is_one_kernel_bitwise_eager(case, bias):
    n, c, o, h, wd, k, kw = case
    k = (k, k) if isinstance(k, int) else k
    x, w = _dyadic(n, c, h, wd), _dyadic(o, c, *k, den=16, seed=1)
    b = _dyadic(o, seed=2) if bias else None
    f = lambda x, w, b: _conv_relu(x, w, b, **kw)
    cf = _compile(f)
    _bitwise(cf(x, w, b), f(x, w, b))
    (kern,) = _conv_kernels(cf)
    assert kern.names == ["convolution", "relu"]
    assert bool(kern._mods) == _conv_fuses(x, w, **kw)


def test_the_fused_convolution_is_within_float_tolerance_of_float64():
    rng = np.random.default_rng(0)
    xs, ws, bs = (rng.standard_normal(s) for s in ((8, 16, 16, 16), (24, 16, 3, 3), (24,)))
    x, w, b = (jtorch.tensor(a, dtype=jtorch.float32) for a in (xs, ws, bs))
    ref = torch.nn.functional.gelu(torch.nn.functional.conv2d(
        *(torch.tensor(np.float32(a), dtype=torch.float64) for a in (xs, ws, bs)), padding=1))
    f = lambda x, w, b: F.gelu(F.conv2d(x, w, b, padding=1))
    cf = _compile(f)
    got, eager = cf(x, w, b).numpy(), f(x, w, b).numpy()
    np.testing.assert_allclose(got, eager, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, ref.numpy(), rtol=1e-4, atol=1e-4)
    assert _conv_kernels(cf)[0]._mods


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
def test_convolutions_on_eagers_direct_or_winograd_kernel_are_not_fused(dtype,
                                                                                  monkeypatch):
    """float32 runs the direct micro-kernel and float64 3x3 Winograd, both faster than the
    per-image GEMMs (N=64, 32->64, 32x32: 37 ms fused against 18 ms for eager's convolution
    and relu): the group runs eager's convolution, then the epilogue's pass."""
    from jtorch.kernels.cpu import conv as ck

    monkeypatch.setattr(ck, "_FORCE", "")  # the choice eager makes
    x, w, b = _dyadic(8, 16, 16, 16, dtype=dtype), _dyadic(24, 16, 3, 3, den=16, seed=1,
                                                           dtype=dtype), _dyadic(24, seed=2)
    b = b.to(dtype)
    assert ck._strategy("forward", x.numpy().dtype, 16, 24, 1, (1, 3, 3), (1, 1, 1),
                        (1, 1, 1), (1, 16, 16), (1, 16, 16)) != "im2col"
    f = lambda x, w, b: _conv_relu(x, w, b, padding=1)
    cf = _compile(f)
    _bitwise(cf(x, w, b), f(x, w, b))
    (kern,) = _conv_kernels(cf)
    assert kern.names == ["convolution", "relu"] and not kern._mods


# epilogue operands over (N, C, H, W) = (8, 24, 16, 16): per channel (a batch norm's scale),
# full (a residual), one value, a row of the plane, one value per image, the same for every
# image; a strided residual, or a row of the plane next to the per-channel s and t (no one
# split of the image fits both): eager's convolution, then the epilogue's pass
_OPERANDS = {"chan": (24, 1, 1), "chan4": (1, 24, 1, 1), "full": (8, 24, 16, 16), "0d": (),
             "one": (1,), "row": (16,), "image": (8, 1, 1, 1), "plane": (24, 16, 16)}


@pytest.mark.parametrize("rshape", [*_OPERANDS, "strided"])
@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
def test_batch_norm_and_residual_operands(rshape, dtype):
    x, w, b = _dyadic(8, 16, 16, 16, dtype=dtype), _dyadic(24, 16, 3, 3, den=16, seed=1,
                                                           dtype=dtype), _dyadic(24, seed=2)
    b = b.to(dtype)
    s, t = _dyadic(24, 1, 1, seed=3, dtype=dtype), _dyadic(24, 1, 1, seed=4, dtype=dtype)
    strided = rshape == "strided"
    r = _dyadic(8, 24, 16, 16, seed=5, dtype=dtype).transpose(2, 3) if strided else \
        _dyadic(*_OPERANDS[rshape], seed=5, dtype=dtype)

    def f(x, w, b, s, t, r):
        return F.silu(F.conv2d(x, w, b, padding=1) * s + t) + r

    cf = _compile(f)
    _bitwise(cf(x, w, b, s, t, r), f(x, w, b, s, t, r))
    (kern,) = _conv_kernels(cf)
    assert kern.names == ["convolution", "mul", "add", "silu", "add_1"]
    assert bool(kern._mods) == (rshape not in ("strided", "row") and _conv_fuses(x, w, padding=1))


def test_operand_order_residual_first_and_input_reused():
    """The convolution's result need not be the first operand; the input can be one too."""
    x, w = _dyadic(8, 16, 16, 16), _dyadic(16, 16, 3, 3, den=16, seed=1)
    f = lambda x, w: x + F.relu(F.conv2d(x, w, None, padding=1)) * 0.5
    cf = _compile(f)
    _bitwise(cf(x, w), f(x, w))
    (kern,) = _conv_kernels(cf)
    assert kern.names == ["convolution", "relu", "mul", "add"] and kern._mods


def test_grouped_channels_last_and_conv1d_convolutions():
    """Grouped convolutions and conv1d run eager's per-image pieces too; a channels-last input
    is made contiguous as eager does."""
    x, w, b = _dyadic(8, 16, 16, 16), _dyadic(24, 4, 3, 3, den=16, seed=1), _dyadic(24, seed=2)
    f = lambda x, w, b: F.relu(F.conv2d(x, w, b, padding=1, groups=4)) - 1
    cf = _compile(f)
    _bitwise(cf(x, w, b), f(x, w, b))
    assert _conv_kernels(cf)[0]._mods
    xl = x.contiguous(memory_format=jtorch.channels_last)
    w1 = _dyadic(24, 16, 3, 3, den=16, seed=3)
    g = lambda x, w, b: F.gelu(F.conv2d(x, w, b, padding=1))
    cg = _compile(g)
    _bitwise(cg(xl, w1, b), g(xl, w1, b))
    assert _conv_kernels(cg)[0]._mods
    x1, w2 = _dyadic(16, 16, 600), _dyadic(24, 16, 5, den=16, seed=4)
    h = lambda x, w, b: F.relu(F.conv1d(x, w, b, stride=2))
    ch = _compile(h)
    _bitwise(ch(x1, w2, b), h(x1, w2, b))
    assert _conv_kernels(ch)[0]._mods


def test_convolutions_that_stay_eager():
    """float16, a transposed convolution, a result read outside the chain: no group."""
    x, w, b = _dyadic(4, 8, 16, 16), _dyadic(12, 8, 3, 3, den=16, seed=1), _dyadic(12, seed=2)
    xh, wh, bh = (a.to(jtorch.float16) for a in (x, w, b))
    wt = _dyadic(8, 12, 3, 3, den=16, seed=3)
    cases = [(lambda x, w, b: F.relu(F.conv2d(x, w, b)) + 1, (xh, wh, bh)),
             (lambda x, w, b: F.relu(F.conv_transpose2d(x, w, b[:12])) + 1, (x, wt, b)),
             (lambda x, w, b: (F.relu(F.conv2d(x, w, b)), F.conv2d(x, w, b).sum()), (x, w, b))]
    for fn, args in cases:
        cf = _compile(fn)
        _all_bitwise(cf(*args), fn(*args))
        assert _conv_kernels(cf) == []


def test_convolution_gradients_take_the_eager_path():
    x = _dyadic(8, 16, 16, 16).requires_grad_()
    w, b = _dyadic(24, 16, 3, 3, den=16, seed=1).requires_grad_(), _dyadic(24, seed=2)
    f = lambda x, w, b: (F.relu(F.conv2d(x, w, b, padding=1)) * 2).sum()
    cf = _compile(f)
    _same_value_and_grads(cf, f, x, w, b)
    (kern,) = _conv_kernels(cf)
    assert kern.names == ["convolution", "relu", "mul"] and not kern._mods
    with jtorch.no_grad():  # a graph of its own (pieces are keyed by grad mode)
        _bitwise(cf(x, w, b), f(x, w, b))
    (kern,) = [k for k in _conv_kernels(cf) if k is not kern]
    assert bool(kern._mods) == _conv_fuses(x, w, padding=1)


def test_convolution_errors_are_eagers():
    x, w = _dyadic(2, 3, 8, 8), _dyadic(4, 5, 3, 3, seed=1)
    f = lambda x, w: F.relu(F.conv2d(x, w)) + 1
    with pytest.raises(RuntimeError) as want:
        f(x, w)
    with pytest.raises(RuntimeError) as got:
        _compile(f)(x, w)
    assert str(got.value) == str(want.value)


def test_the_default_backend_fuses_a_conv_block():
    """Through ``jtorch.compile``'s default backend: compiled == eager, one kernel."""
    x, w, b = _dyadic(8, 16, 16, 16), _dyadic(24, 16, 3, 3, den=16, seed=1), _dyadic(24, seed=2)
    s, t = _dyadic(24, 1, 1, seed=3), _dyadic(24, 1, 1, seed=4)
    f = lambda x, w, b, s, t: F.relu(F.conv2d(x, w, b, padding=1) * s + t)
    cf = jtorch.compile(f)
    _bitwise(cf(x, w, b, s, t), f(x, w, b, s, t))
    assert [k.names for k in _conv_kernels(cf)] == [["convolution", "mul", "add", "relu"]]


def test_generated_module_convolves_each_image_then_runs_its_epilogue():
    x, w, b = _dyadic(8, 16, 16, 16), _dyadic(24, 16, 3, 3, den=16, seed=1), _dyadic(24, seed=2)
    s = _dyadic(24, 1, 1, seed=3)
    f = lambda x, w, b, s: F.relu(F.conv2d(x, w, b, padding=1) * s)
    cf = _compile(f)
    cf(x, w, b, s)
    (kern,) = _conv_kernels(cf)
    assert list(kern._mods) == [("fc", "10")]
    src = kern.source_for("fc", "10")
    assert "v0 = np.float32(_f_mul_scalar(np.float32(x0[i]), np.float32(c1)))" in src
    image = src.split("def _image(x, w3, bias, with_bias, geo, tab, buf, p, i, out0, in1, "
                      "rows, inner):")[1]
    assert "_conv_image_into(x, w3, bias, with_bias, p, geo, tab, buf, i)" in image
    assert "_call(out0[i], p.reshape(-1), in1, 0, rows, 0, inner, inner)" in image
    drive = src.split("def conv_epilogue(")[1]
    assert "for t in prange(nt):" in drive and "p = np.empty_like(prod)" in drive


def test_two_products_feeding_one_chain_fuse_once():
    """``a @ b - c @ d``: the sub would join both products' epilogues; the first takes it, the
    second stays a plain product (it ran into a KeyError when both claimed it)."""
    rng = np.random.default_rng(0)
    a, b, c, d = (jtorch.from_numpy(rng.standard_normal(s)) for s in
                  ((6, 5), (5, 4), (6, 3), (3, 4)))
    f = lambda a, b, c, d: (a @ b - c @ d).tril() * 2
    got = jtorch.compile(f)(a, b, c, d)
    np.testing.assert_allclose(got.numpy(), f(a, b, c, d).numpy(), rtol=1e-12, atol=1e-12)
