"""The CUDA kernels of indexing, scatter/gather and nll_loss (``kernels/cuda/indexing.py``,
``loss.py``) in Numba's simulator against the same calls on CPU: several dtypes, negative and
duplicate indices, 0-size and non-contiguous operands, index errors, deterministic mode and
autograd; none of the covered calls may take the host path (``eager.FALLBACKS``).

Run by ``test_cuda_indexing.py`` in a subprocess with ``NUMBA_ENABLE_CUDASIM=1``; sizes are
tiny (the simulator runs each thread as a Python thread).
"""

import os

import numpy as np
import pytest

if os.environ.get("NUMBA_ENABLE_CUDASIM") != "1":
    pytest.skip("runs under NUMBA_ENABLE_CUDASIM=1 (test_cuda_indexing.py starts it)",
                allow_module_level=True)

import jtorch
import jtorch.nn.functional as F
from jtorch.kernels.cuda import eager, indexing

NATIVE = {"nll_loss", "nll_loss_backward", "nll_loss2d", "nll_loss2d_backward", "embedding",
          "index", "index_select", "gather", "scatter", "scatter_add", "index_add", "masked_fill",
          "scatter_reduce", "scatter_reduce_", "index_copy", "index_fill", "index_put", "take",
          "put", "one_hot", "masked_scatter", "masked_select", "nonzero", "binary_cross_entropy"}


@pytest.fixture(autouse=True)
def _native_only():
    eager.FALLBACKS.clear()
    yield
    took = {k: v for k, v in eager.FALLBACKS.items() if k in NATIVE}
    assert not took, f"host path taken: {took}"


@pytest.fixture
def deterministic():
    jtorch.use_deterministic_algorithms(True)
    yield
    jtorch.use_deterministic_algorithms(False)


def cuda(x):
    return x.detach().to("cuda") if isinstance(x, jtorch.Tensor) else x


def same(c, x, exact: bool = False, rtol: float = 1e-5):
    """CUDA tensor ``c`` holds CPU tensor ``x``'s shape, dtype and values (floats within
    rounding unless ``exact``)."""
    assert c.device.type == "cuda", c.device
    h = c.detach().cpu()
    assert h.dtype == x.dtype and tuple(h.shape) == tuple(x.shape), (h.dtype, x.dtype, h.shape)
    if h.dtype == jtorch.bfloat16:  # (no NumPy dtype: compared as the floats it holds)
        h, x = h.float(), x.float()
    a, b = h.numpy(), x.detach().numpy()
    if a.dtype.kind == "f" and not exact:
        np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol / 10)
    else:
        np.testing.assert_array_equal(a, b)


def both(fn, *args, exact: bool = False, rtol: float = 1e-5):
    """fn on CPU operands and on their CUDA copies: equal results and equally written inputs."""
    cargs = [cuda(a) for a in args]
    want = fn(*args)
    got = fn(*cargs)
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            same(g, w, exact, rtol)
    else:
        same(got, want, exact, rtol)
    for c, a in zip(cargs, args):
        if isinstance(a, jtorch.Tensor):
            same(c, a, exact, rtol)
    return got


def raises_alike(fn, *args):
    """The CUDA call raises the CPU call's exception type and message."""
    with pytest.raises(Exception) as want:
        fn(*args)
    with pytest.raises(type(want.value)) as got:
        fn(*[cuda(a) for a in args])
    assert str(got.value) == str(want.value)


def values(dtype, shape, lo=-5, hi=5):
    g = np.random.default_rng(sum(shape) + len(shape))
    if dtype == jtorch.bool:
        return jtorch.tensor(g.random(shape) > 0.5)
    a = g.integers(lo, hi, shape) if not dtype.is_floating_point else g.standard_normal(shape)
    return jtorch.tensor(a).to(dtype)


DTYPES = [jtorch.float32, jtorch.float64, jtorch.int64, jtorch.int32, jtorch.uint8, jtorch.bool]


# -- gathers ----------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_gathers(dtype):
    x = values(dtype, (4, 5))
    i = jtorch.tensor([[0, 4, 4], [3, 0, 1], [2, 2, 2]])
    both(lambda x, i: x.gather(1, i), x, i)
    both(lambda x, i: x.t().gather(0, i), x, i)  # non-contiguous input
    both(lambda x, i: x.index_select(1, i), x, jtorch.tensor([4, 0, 0, 2]))
    both(lambda x, i: x.index_select(0, i), x, jtorch.tensor([3, 1], dtype=jtorch.int32))
    both(lambda x, i: x.take(i), x.t(), jtorch.tensor([[0, -1], [19, -20]]))
    both(lambda x, i: jtorch.take_along_dim(x, i, 1), x, jtorch.tensor([[-1], [0], [1], [-5]]))
    both(lambda x, i: x[:, ::2].index_select(1, i), x, jtorch.tensor([2, 1]))


def test_gathers_of_nothing():
    x = values(jtorch.float32, (3, 4))
    both(lambda x, i: x.index_select(0, i), x, jtorch.zeros(0, dtype=jtorch.int64))
    both(lambda x, i: x.gather(1, i), x, jtorch.zeros(3, 0, dtype=jtorch.int64))
    both(lambda x, i: x.take(i), x, jtorch.zeros(0, 2, dtype=jtorch.int64))
    both(lambda x, i: x.index_select(0, i), jtorch.tensor(2.5), jtorch.tensor([0]))
    both(lambda x, i: x.gather(0, i), jtorch.tensor(2.5), jtorch.tensor(0))


@pytest.mark.parametrize("dtype", [jtorch.float16, jtorch.bfloat16, jtorch.complex64])
def test_moves_of_other_dtypes_run_as_bits(dtype):
    x = values(jtorch.float32, (4, 5)).to(dtype)
    i = jtorch.tensor([[0, 1, 3, 3, 2]])
    m = values(jtorch.bool, (4, 5))
    both(lambda x, i: x.gather(0, i), x, i)
    both(lambda x, i: x.index_select(1, i), x.t(), i[0])
    both(lambda w, i: F.embedding(i, w), x, i - 4)
    both(lambda x, i, s: x.scatter(0, i, s), x, i, x[:1] * 2)
    both(lambda x, i: x.index_fill(1, i, -2.0), x, jtorch.tensor([4, 0]))
    both(lambda x, m: x.masked_select(m), x, m)
    both(lambda x, m, s: x.masked_scatter(m, s), x, m, x.reshape(-1) * 3)
    both(_set((jtorch.tensor([3, 0]), slice(1, None)), None), x, x[:2, :4] * 2)
    both(lambda x, m: x.masked_fill(m, -65504.0), x, m)
    both(lambda x, m: x.t().masked_fill_(m[0, :4], float("-inf")), x, m)  # a broadcast mask


def test_float16_arithmetic_runs_in_float32():
    """Sums, products and losses of float16 run over float32 copies, rounded once, as on CPU."""
    x = values(jtorch.float16, (4, 3))
    s = values(jtorch.float16, (2, 3))
    both(lambda x, i, s: x.scatter_add(0, i, s), x, DUP[:, :3], s, rtol=1e-3)
    both(lambda x, i, s: x.t().scatter_(1, i.t(), s.t(), reduce="multiply"), x, DUP[:, :3], s,
         rtol=1e-3)
    both(lambda x, i, s: x.scatter_reduce(0, i, s, "mean", include_self=False), x, DUP[:, :3], s,
         rtol=1e-3)
    both(lambda x, i, s: x.index_add_(0, i, s, alpha=2), x, jtorch.tensor([3, 3]), s, rtol=1e-3)
    both(lambda x, i, s: x.put_(i, s, accumulate=True), x, DUP[:, :3], s, rtol=1e-3)
    t = jtorch.tensor([0, 2, -100, 2])
    for reduction in ("none", "sum", "mean"):
        both(lambda x, t, r=reduction: F.nll_loss(x, t, reduction=r), x, t, rtol=1e-3)
    w = x.detach().requires_grad_()
    wc = cuda(x).requires_grad_()
    for ws, ts in ((w, t), (wc, t.cuda())):
        F.nll_loss(F.embedding(ts.clamp(min=0), ws), ts).backward()
    same(wc.grad, w.grad, rtol=1e-3)


def test_a_cpu_index_reads_cuda_data():
    x = values(jtorch.float32, (4, 3))
    i = jtorch.tensor([3, 3, 0])
    same(cuda(x).index_select(0, i), x.index_select(0, i))
    same(cuda(x).gather(0, i[None]), x.gather(0, i[None]))


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64, jtorch.int64])
def test_embedding(dtype):
    w = values(dtype, (6, 3))
    both(lambda w, i: F.embedding(i, w), w, jtorch.tensor([[0, 5, -1], [2, 2, -6]]))
    both(lambda w, i: F.embedding(i, w), w.t().contiguous().t(), jtorch.tensor([1, 4]))
    both(lambda w, i: F.embedding(i, w), w, jtorch.tensor([[1, 0]], dtype=jtorch.int32).t())
    both(lambda w, i: F.embedding(i, w), w, jtorch.zeros(2, 0, dtype=jtorch.int64))


def test_index_errors():
    x = values(jtorch.float32, (4, 5))
    raises_alike(lambda x, i: x.gather(1, i), x, jtorch.tensor([[0, 5]] * 4))
    raises_alike(lambda x, i: x.gather(0, i), x, jtorch.tensor([[0, 1], [-1, 2]]))
    raises_alike(lambda x, i: x.index_select(0, i), x, jtorch.tensor([0, 4]))
    raises_alike(lambda x, i: x.index_select(1, i), x, jtorch.tensor([-1]))
    raises_alike(lambda x, i: x.take(i), x, jtorch.tensor([3, 20, -21]))
    raises_alike(lambda x, i: F.embedding(i, x), x, jtorch.tensor([[1, 4]]))
    raises_alike(lambda x, i: F.embedding(i, x), x, jtorch.tensor([-5]))
    raises_alike(lambda x, i: x.scatter(1, i, 1.0), x, jtorch.tensor([[0, 7]]))
    raises_alike(lambda x, i, s: x.scatter_add(0, i, s), x, jtorch.tensor([[0, 4]]),
                 jtorch.ones(1, 2))
    raises_alike(lambda x, i, s: x.index_add(0, i, s), x, jtorch.tensor([-1]), jtorch.ones(1, 5))
    raises_alike(lambda x, i, s: x.index_copy(1, i, s), x, jtorch.tensor([1, 5]),
                 jtorch.ones(4, 2))
    raises_alike(lambda x, i: x.index_fill(1, i, 2.0), x, jtorch.tensor([-6]))
    raises_alike(lambda x, i, s: x.put(i, s), x, jtorch.tensor([20]), jtorch.ones(1))
    raises_alike(lambda i: F.one_hot(i, 3), jtorch.tensor([0, 3]))
    raises_alike(lambda i: F.one_hot(i, 3), jtorch.tensor([-1, 3]))
    raises_alike(lambda x, m, s: x.masked_scatter(m, s), x, x > 0, jtorch.ones(1))


# -- scatters ---------------------------------------------------------------------------------

DUP = jtorch.tensor([[0, 3, 3, 0], [3, 3, 1, -0]])  # duplicates along dim 0 and dim 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatters(dtype):
    x = values(dtype, (4, 4))
    s = values(dtype, (2, 4), 1, 4)
    both(lambda x, i, s: x.scatter(0, i, s), x, DUP, s)
    both(lambda x, i, s: x.scatter(1, i, s), x, DUP, s)
    both(lambda x, i: x.scatter(1, i, 1), x, DUP)
    both(lambda x, i, s: x.scatter_add(0, i, s), x, DUP, s)
    both(lambda x, i, s: x.t().scatter_add(1, i, s), x, DUP, s)
    if dtype != jtorch.bool:
        both(lambda x, i, s: x.scatter(0, i, s, reduce="multiply"), x, DUP, s)
        both(lambda x, i, s: x.scatter(1, i, s, reduce="add"), x, DUP, s)


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.int64, jtorch.bool])
def test_scatters_in_place_bump_versions(dtype):
    x = values(dtype, (4, 4))
    s = values(dtype, (2, 4), 1, 4)
    c = cuda(x)
    v = c._version
    c.scatter_(0, DUP.to("cuda"), cuda(s))
    same(c, x.clone().scatter_(0, DUP, s))
    assert c._version == v + 1
    c.t().scatter_add_(1, DUP.to("cuda"), cuda(s))  # through a transposed view
    same(c, x.clone().scatter_(0, DUP, s).t().scatter_add_(1, DUP, s).t())
    assert c._version == v + 2


@pytest.mark.parametrize("reduce", ["sum", "prod", "mean", "amax", "amin"])
@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64, jtorch.int64, jtorch.int32])
def test_scatter_reduce(reduce, dtype):
    x = values(dtype, (4, 4))
    s = values(dtype, (2, 4), 1, 4)
    for include_self in (True, False):
        both(lambda x, i, s, inc=include_self: x.scatter_reduce(0, i, s, reduce, include_self=inc),
             x, DUP, s)
    both(lambda x, i, s: x.scatter_reduce_(1, i, s, reduce), x, DUP, s)


def test_scatter_reduce_nan_wins():
    x = jtorch.tensor([1.0, 2.0, 3.0])
    s = jtorch.tensor([float("nan"), 5.0, -1.0, 0.5])
    i = jtorch.tensor([0, 0, 1, 2])
    for reduce in ("amax", "amin"):
        both(lambda x, i, s, r=reduce: x.scatter_reduce(0, i, s, r), x, i, s)


@pytest.mark.parametrize("dtype", DTYPES)
def test_index_writes(dtype):
    x = values(dtype, (5, 3))
    s = values(dtype, (4, 3), 1, 4)
    i = jtorch.tensor([4, 0, 4, 1])
    if dtype != jtorch.bool:
        both(lambda x, i, s: x.index_add(0, i, s), x, i, s)
        both(lambda x, i, s: x.index_add(0, i, s, alpha=2), x, i, s)
        both(lambda x, i, s: x.t().index_add(1, i, s.t()), x, i, s)
    both(lambda x, i, s: x.index_copy(0, i, s), x, jtorch.tensor([4, 0, 2, 1]), s)
    both(lambda x, i: x.index_fill(0, i, 1), x, jtorch.tensor([-1, 0, 0]))
    both(lambda x, i: x.index_fill_(1, i, 0), x, jtorch.tensor([2]))
    both(lambda x, i, s: x.put(i, s), x, jtorch.tensor([[14, -15], [3, 3]]), s[:2, :2])
    both(lambda x, i, s: x.t().put_(i, s, accumulate=True), x, jtorch.tensor([[14, -15, 3, 3]]),
         s[0, :4] if s.shape[1] >= 4 else s.reshape(-1)[:4])


def test_index_add_through_atomics_and_lines():
    x = values(jtorch.float32, (5, 3))
    s = values(jtorch.float32, (6, 3))
    i = jtorch.tensor([4, 0, 4, 1, 4, 4])
    launched = []
    run = indexing._launch

    def spy(name, n, *args):
        launched.append(name)
        return run(name, n, *args)

    indexing._launch = spy
    try:
        both(lambda x, i, s: x.index_add(0, i, s), x, i, s)
        assert "scatter_atomic" in launched
        launched.clear()
        jtorch.use_deterministic_algorithms(True)
        got = both(lambda x, i, s: x.index_add(0, i, s), x, i, s, exact=True)
        again = cuda(x).index_add(0, i.cuda(), cuda(s))
        same(again, got.cpu(), exact=True)
        assert "scatter_atomic" not in launched and "lines_1" in launched
    finally:
        indexing._launch = run
        jtorch.use_deterministic_algorithms(False)


def test_empty_scatters():
    x = values(jtorch.float32, (3, 2))
    e = jtorch.zeros(0, 2, dtype=jtorch.int64)
    both(lambda x, i, s: x.scatter_add(0, i, s), x, e, jtorch.zeros(0, 2))
    both(lambda x, i, s: x.index_add(0, i, s), x, jtorch.zeros(0, dtype=jtorch.int64),
         jtorch.zeros(0, 2))
    both(lambda x, i, s: x.scatter(0, i, s), jtorch.zeros(0, 2), e, jtorch.zeros(0, 2))


# -- index_put ------------------------------------------------------------------------------------

def _get(index):
    return lambda x: x[index]


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.int32, jtorch.bool, jtorch.float16])
def test_getitem(dtype):
    x = values(jtorch.float32, (3, 4, 5)).to(dtype)
    i = jtorch.tensor([2, 0, -1, 0])
    both(_get(i), x)
    both(_get((slice(None), jtorch.tensor([[3], [0]]), jtorch.tensor([1, 4]))), x)
    both(_get((jtorch.tensor(1), slice(1, 3), jtorch.tensor([0, 0], dtype=jtorch.int32))), x)
    both(_get((..., i + 1)), x.transpose(0, 1))
    both(_get(jtorch.tensor([True, False, True])), x)
    both(_get(i[:0]), x)
    raises_alike(_get((slice(None), jtorch.tensor([4]))), x)
    raises_alike(_get(jtorch.tensor([-4])), x)


def test_getitem_gradient():
    x = values(jtorch.float64, (4, 3))
    i = jtorch.tensor([[3, 0], [3, 3]])
    grads = []
    for dev in ("cpu", "cuda"):
        xs = x.detach().to(dev).requires_grad_()
        (xs[i.to(dev)] * 2).sum().backward()
        grads.append(xs.grad)
    same(grads[1], grads[0])


def _set(index, value):
    def run(x, *v):
        x[index] = v[0] if v else value
        return x

    return run


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.int64, jtorch.bool])
def test_setitem(dtype):
    x = values(dtype, (3, 4, 5))
    i = jtorch.tensor([3, 0, -1, 0])
    both(_set((slice(None), i), 1), x)  # a scalar through an index dim
    both(_set((slice(None), i), None), x, values(dtype, (4, 5)))  # broadcast values
    both(_set((i[:2], slice(None), i[2:] + 2), None), x.transpose(0, 1), values(dtype, (2, 3)))
    both(_set((0, slice(1, 3)), None), x, values(dtype, (1, 5)))  # a view: no index tensor
    both(_set((..., jtorch.tensor([[3], [0]]), jtorch.tensor([1, 2])), 0), x.transpose(0, 2))
    both(_set(jtorch.tensor(1), None), x, values(dtype, (4, 5)))  # a 0-d index


@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64, jtorch.int32, jtorch.bool])
def test_index_put_accumulates_duplicates(dtype):
    x = values(dtype, (4, 3))
    i, j = jtorch.tensor([[1, 1], [3, 1]]), jtorch.tensor([2, 2])
    v = values(dtype, (2, 2), 1, 4)
    both(lambda x, v: x.index_put_((i, j), v, accumulate=True), x, v)
    both(lambda x, v: x.index_put((i,), v[0], accumulate=True), x, v[0, :1].expand(3))
    both(lambda x, v: x.index_put((i[0],), v[:, :1]), x, v)
    raises_alike(lambda x: x.index_put_((jtorch.tensor([4]),), x[0, :1]), x)
    raises_alike(lambda x: x.index_put_((i, jtorch.tensor([-4])), x[0, 0]), x)


def test_index_put_atomics_and_deterministic_lines():
    x = values(jtorch.float32, (5, 2))
    i = jtorch.tensor([0, 4, 0, 0, 4, 1])
    v = values(jtorch.float32, (6, 2))
    both(lambda x, v: x.index_put_((i,), v, accumulate=True), x, v)
    jtorch.use_deterministic_algorithms(True)
    try:
        both(lambda x, v: x.index_put_((i,), v, accumulate=True), x, v, exact=True)
    finally:
        jtorch.use_deterministic_algorithms(False)


# -- masks ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_ops(dtype):
    x = values(dtype, (3, 4))
    m = values(jtorch.bool, (3, 4))
    both(lambda x, m: x.masked_fill(m, 1), x, m)
    both(lambda x, m: x.masked_fill_(m, 0), x, m)
    both(lambda x, m: x.t().masked_fill(m, 1), x, m.t().contiguous())
    both(lambda x, m: x.masked_select(m), x, m)
    both(lambda x, m: x.masked_select(m), x, m[1])  # a broadcast mask
    both(lambda x, m: x.t().masked_select(m), x, m.t())
    both(lambda x, m, s: x.masked_scatter(m, s), x, m, values(dtype, (13,), 1, 4))
    both(lambda x, m, s: x.t().masked_scatter_(m, s), x, m.t(), values(dtype, (2, 7), 1, 4))
    both(lambda x: x.nonzero(), x)
    both(lambda x: x.t().nonzero(), x)
    both(lambda x: jtorch.nonzero(x, as_tuple=True), x[:, 1:])


def test_nonzero_of_a_number():
    for v in (0.0, 2.0):
        both(lambda x: x.nonzero(), jtorch.tensor(v))


def test_masked_ops_of_nothing():
    x = values(jtorch.float32, (0, 3))
    m = jtorch.zeros(0, 3, dtype=jtorch.bool)
    both(lambda x, m: x.masked_select(m), x, m)
    both(lambda x: x.nonzero(), x)
    both(lambda x: x.nonzero(), jtorch.zeros(3, 2))
    both(lambda x, m: x.masked_fill(m, 2.0), x, m)
    both(lambda x, m, s: x.masked_scatter(m, s), x, m, jtorch.ones(2))
    both(lambda x, v: x.masked_fill(x > 0, v), values(jtorch.float32, (2, 3)), jtorch.tensor(7.0))


def test_one_hot():
    i = jtorch.tensor([[0, 2], [4, 4]])
    both(lambda i: F.one_hot(i, 5), i)
    both(lambda i: F.one_hot(i.t(), 6), i)
    both(lambda i: F.one_hot(i, 0), jtorch.zeros(0, dtype=jtorch.int64))


# -- nll_loss ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [jtorch.float32, jtorch.float64])
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_nll_loss(dtype, reduction):
    x = values(dtype, (5, 4))
    t = jtorch.tensor([0, 3, -100, 3, 1])
    w = values(dtype, (4,)).abs() + 0.5
    both(lambda x, t: F.nll_loss(x, t, reduction=reduction), x, t)
    both(lambda x, t, w: F.nll_loss(x, t, w, reduction=reduction), x, t, w)
    both(lambda x, t: F.nll_loss(x, t, reduction=reduction, ignore_index=3),
         x.t().contiguous().t(), jtorch.tensor([0, 3, 2, 3, 1]))
    both(lambda x, t: F.nll_loss(x, t, reduction=reduction), x[1], jtorch.tensor(2))
    both(lambda x, t: F.nll_loss(x, t, reduction=reduction), x[:0], t[:0])
    both(lambda x, t: F.nll_loss(x, t, reduction=reduction), x, t.to(jtorch.uint8) * 0 + 1)
    x4 = values(dtype, (2, 3, 2, 3))
    t4 = jtorch.tensor([[[0, 2, 1], [2, -100, 0]], [[1, 1, 1], [0, 2, 2]]])
    both(lambda x, t, w: F.nll_loss(x, t, w[:3], reduction=reduction), x4, t4, w)
    both(lambda x, t: F.nll_loss(x, t, reduction=reduction), x4.transpose(2, 3), t4.transpose(1, 2))


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_nll_loss_gradients(reduction):
    x = values(jtorch.float64, (5, 4)).requires_grad_()
    t = jtorch.tensor([0, 3, 1, 3, -100])
    w = jtorch.tensor([1.0, 2.0, 0.5, 3.0], dtype=jtorch.float64)
    xc = cuda(x).requires_grad_()
    for xs, ts, ws in ((x, t, w), (xc, cuda(t), cuda(w))):
        loss = F.nll_loss(xs, ts, ws, reduction=reduction)
        g = jtorch.ones_like(loss) * 0.5 if reduction == "none" else None
        (gx,) = jtorch.autograd.grad(loss, xs, g)
        if xs is x:
            want = gx
    same(gx, want)
    x4 = values(jtorch.float32, (2, 3, 2, 2)).requires_grad_()
    t4 = jtorch.tensor([[[0, 2], [1, -100]], [[1, 1], [0, 2]]])
    want = jtorch.autograd.grad(F.nll_loss(x4, t4, reduction=reduction).sum(), x4)[0]
    x4c = cuda(x4).requires_grad_()
    got = jtorch.autograd.grad(F.nll_loss(x4c, cuda(t4), reduction=reduction).sum(), x4c)[0]
    same(got, want)


def test_nll_loss_target_errors():
    x = values(jtorch.float32, (3, 4))
    raises_alike(lambda x, t: F.nll_loss(x, t), x, jtorch.tensor([0, 4, 9]))
    raises_alike(lambda x, t: F.nll_loss(x, t, reduction="none"), x, jtorch.tensor([-1, 0, 1]))
    raises_alike(lambda x, t: F.nll_loss(x, t), values(jtorch.float32, (1, 3, 1, 2)),
                 jtorch.tensor([[[0, 3]]]))


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_binary_cross_entropy(reduction):
    x = jtorch.tensor([[0.0, 0.25, 1.0], [0.5, 1e-30, 0.999]])
    t = jtorch.tensor([[0.0, 1.0, 1.0], [0.5, 1.0, 0.0]])
    w = jtorch.tensor([1.0, 2.0, 0.5])
    both(lambda x, t: F.binary_cross_entropy(x, t, reduction=reduction), x, t)
    both(lambda x, t, w: F.binary_cross_entropy(x, t, w, reduction=reduction), x.t(), t.t(),
         w[:, None])
    both(lambda x, t: F.binary_cross_entropy(x, t, reduction=reduction), x[:0], t[:0])
    both(lambda x, t: F.binary_cross_entropy(x, t, reduction=reduction), x.double(), t.double())
    raises_alike(lambda x, t: F.binary_cross_entropy(x, t), x + 0.5, t)


def test_embedding_and_nll_loss_train_alike():
    """An embedding bag classifier's gradients on CUDA equal the CPU's."""
    g = np.random.default_rng(0)
    w = jtorch.tensor(g.standard_normal((7, 4)), dtype=jtorch.float32)
    i = jtorch.tensor([[0, 6, 6], [2, -1, 3], [3, 3, 3]])
    t = jtorch.tensor([1, 0, 3])
    grads = []
    for dev in ("cpu", "cuda"):
        ws = w.detach().to(dev).requires_grad_()
        emb = F.embedding(i.to(dev), ws, padding_idx=3).sum(1)
        loss = F.nll_loss(F.log_softmax(emb, 1), t.to(dev), ignore_index=0)
        loss.backward()
        grads.append((loss, ws.grad))
    same(grads[1][0], grads[0][0])
    same(grads[1][1], grads[0][1])


# -- deterministic mode -----------------------------------------------------------------------

def test_deterministic_sums_repeat_and_match_cpu(deterministic):
    x = values(jtorch.float32, (4, 3))
    s = values(jtorch.float32, (8, 3))
    i = jtorch.tensor([1, 1, 1, 0, 1, 3, 1, 1])
    first = both(lambda x, i, s: x.index_add(0, i, s), x, i, s, exact=True)
    same(cuda(x).index_add(0, i.cuda(), cuda(s)), first.cpu(), exact=True)
    i2 = i[:, None].expand(8, 3).contiguous()
    both(lambda x, i, s: x.scatter_add(0, i, s), x, i2, s, exact=True)
    both(lambda x, i, s: x.scatter_reduce(0, i, s, "mean"), x, i2, s, exact=True)
    both(lambda x, i, s: x.scatter(0, i, s, reduce="add"), x, i2, s, exact=True)
    both(lambda x, i, s: x.scatter(0, i, s), x, i2, s, exact=True)
    both(lambda x, i, s: x.index_copy(0, i[:3] * 0 + 2, s[:3]), x, i, s, exact=True)
    both(lambda x, t: F.nll_loss(x, t), x, jtorch.tensor([0, 2, 1, 1]))


def test_deterministic_refusals_match_torch(deterministic):
    x = cuda(values(jtorch.float32, (4, 3)))
    i = jtorch.tensor([[0, 1, 1]], device="cuda")
    s = cuda(values(jtorch.float32, (1, 3)))
    calls = {
        "put_": lambda: x.put_(i, s),
        "scatter_reduce_cuda": lambda: x.scatter_reduce(0, i, s, "prod"),
        "nll_loss2d_forward_out_cuda_template": lambda: F.nll_loss(
            cuda(values(jtorch.float32, (1, 3, 2, 2))), jtorch.zeros(1, 2, 2, dtype=jtorch.int64,
                                                                     device="cuda")),
    }
    for name, call in calls.items():
        with pytest.raises(RuntimeError, match=f"^{name} does not have a deterministic"):
            call()
    for reduce in ("amax", "amin"):  # (torch's deterministic path covers sums and means only)
        with pytest.raises(RuntimeError, match="^scatter_reduce_cuda does not have"):
            x.scatter_reduce(0, i, s, reduce)
    x.scatter(0, i, s, reduce="multiply")  # (torch does not refuse it either)
    x.scatter_reduce(0, i, s, "mean", include_self=False)
    with pytest.raises(RuntimeError, match="^put_ does not have"):  # on CPU: deterministic
        x.put_(i, s, accumulate=True)
    x.cpu().put_(i.cpu(), s.cpu(), accumulate=True)
    F.nll_loss(cuda(values(jtorch.float32, (1, 3, 2, 2))),
               jtorch.zeros(1, 2, 2, dtype=jtorch.int64, device="cuda"), reduction="none")
