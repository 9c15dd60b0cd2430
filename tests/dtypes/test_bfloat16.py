"""bfloat16 vs torch: the dtype's attributes and promotion, creation, casts (round to nearest
even, nan, inf, -0.0), pointwise ops (computed in float32 and rounded once: bitwise torch's),
reductions, matmul, softmax, normalisation, convolution, a small MLP with its gradients,
printing, NumPy interop and save/load in both directions."""

from __future__ import annotations

import io
import itertools

import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from helpers import same

import jtorch
import jtorch.nn.functional as JF

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
         "float64", "complex64", "complex128"]

# bfloat16 has 8 significant bits: results computed another way agree to a few of its ulps
BF16_TOL = {"rtol": 2 ** -6, "atol": 1e-3}


def _values(n: int = 512, seed: int = 0) -> torch.Tensor:
    """Random bfloat16 values plus the edge cases: signed zeros, infinities, nan, subnormals,
    the largest finite values, halves."""
    g = torch.Generator().manual_seed(seed)
    edge = torch.tensor([0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e-40, -1e-40,
                         3.3895e38, -3.3895e38, 0.5, 1.5, 2.5, -2.5, 100.0, 1.0, -1.0])
    return torch.cat([torch.randn(n, generator=g) * 3, edge]).to(torch.bfloat16)


def _bitwise(j: jtorch.Tensor, t: torch.Tensor) -> None:
    """Same dtype and the same values bit for bit (any nan matches any nan)."""
    assert str(j.dtype) == str(t.dtype), (j.dtype, t.dtype)
    assert tuple(j.shape) == tuple(t.shape)
    if t.dtype == torch.bfloat16:
        jb = j.view(jtorch.int16)._a.copy() if j.is_contiguous() else j.contiguous().view(
            jtorch.int16)._a.copy()
        tb = t.contiguous().view(torch.int16).numpy()
        nan = np.isnan(j.float().numpy()) & np.isnan(t.float().numpy())
        bad = (jb != tb) & ~nan
        assert not bad.any(), (j.float().numpy()[bad][:8], t.float().numpy()[bad][:8])
    else:
        same(j, t)


# -- the dtype -----------------------------------------------------------------------------

def test_attributes_and_names():
    b = jtorch.bfloat16
    assert repr(b) == "torch.bfloat16" and b.is_floating_point and not b.is_complex
    assert b.is_signed and b.itemsize == 2
    assert jtorch.BFloat16Tensor([1, 2]).dtype is b
    assert isinstance(jtorch.ones(2, dtype=b), jtorch.BFloat16Tensor)
    assert jtorch.ones(2, dtype=b).type() == torch.ones(2, dtype=torch.bfloat16).type()
    assert jtorch.ones(2, dtype=b).is_floating_point()
    assert jtorch.ones(1).bfloat16().dtype is b


def test_finfo_is_torchs():
    j, t = jtorch.finfo(jtorch.bfloat16), torch.finfo(torch.bfloat16)
    for name in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
        assert getattr(j, name) == getattr(t, name), name
    assert j.dtype == t.dtype


@pytest.mark.parametrize("a,b", list(itertools.product(NAMES, NAMES)))
def test_promote_types_pair(a, b):
    assert str(jtorch.promote_types(getattr(jtorch, a), getattr(jtorch, b))) == \
        str(torch.promote_types(getattr(torch, a), getattr(torch, b)))


@pytest.mark.parametrize("other", [
    2, 2.5, True, 1j, ("0d", "float32"), ("0d", "float64"), ("0d", "int64"), ("0d", "float16"),
    ("1d", "float16"), ("1d", "float32"), ("1d", "int64"), ("1d", "uint8"), ("1d", "bool"),
    ("1d", "complex64"),
])
def test_result_type_with_scalars_and_tensors(other):
    def make(lib):
        if not isinstance(other, tuple):
            return other
        kind, name = other
        x = lib.ones((), dtype=getattr(lib, name))
        return x if kind == "0d" else x.reshape(1)

    x_j, x_t = jtorch.ones(2, dtype=jtorch.bfloat16), torch.ones(2, dtype=torch.bfloat16)
    assert str(jtorch.result_type(x_j, make(jtorch))) == str(torch.result_type(x_t, make(torch)))
    assert str((x_j + make(jtorch)).dtype) == str((x_t + make(torch)).dtype)


def test_default_dtype_bfloat16():
    jd = jtorch.get_default_dtype()
    try:
        jtorch.set_default_dtype(jtorch.bfloat16)
        torch.set_default_dtype(torch.bfloat16)
        same(jtorch.tensor([1.1, 2.2]), torch.tensor([1.1, 2.2]))
        same(jtorch.ones(2) * 0.3, torch.ones(2) * 0.3)
        assert jtorch.arange(3.0).dtype is jtorch.bfloat16
    finally:
        jtorch.set_default_dtype(jd)
        torch.set_default_dtype(torch.float32)


# -- creation and casts --------------------------------------------------------------------

@pytest.mark.parametrize("make", [
    lambda L: L.zeros(2, 3, dtype=L.bfloat16),
    lambda L: L.ones(4, dtype=L.bfloat16),
    lambda L: L.full((3,), 3.3, dtype=L.bfloat16),
    lambda L: L.full((2,), 1.00390625, dtype=L.bfloat16),  # a tie: to even (1.0)
    lambda L: L.tensor([1.1, -2.2, 1e39, 3.3961e38, 1e-40], dtype=L.bfloat16),
    lambda L: L.arange(0, 1, 0.1, dtype=L.bfloat16),
    lambda L: L.arange(-3, 300, 1.37, dtype=L.bfloat16),
    lambda L: L.linspace(-3.3, 9.1, 101, dtype=L.bfloat16),
    lambda L: L.logspace(-2, 3, 50, dtype=L.bfloat16),
    lambda L: L.eye(3, dtype=L.bfloat16),
    lambda L: L.empty(2, dtype=L.bfloat16).fill_(0.3),
    lambda L: L.zeros(3, dtype=L.bfloat16).new_full((2,), 7.7),
])
def test_creation(make):
    _bitwise(make(jtorch), make(torch))


@pytest.mark.parametrize("name", ["rand", "randn"])
def test_random_draws_are_torchs(name):
    jtorch.manual_seed(0)
    torch.manual_seed(0)
    _bitwise(getattr(jtorch, name)(3, 40, dtype=jtorch.bfloat16),
             getattr(torch, name)(3, 40, dtype=torch.bfloat16))


def test_empty_and_random_ints():
    assert jtorch.empty(2, dtype=jtorch.bfloat16).dtype is jtorch.bfloat16
    r = jtorch.randint(0, 10, (50,), dtype=jtorch.bfloat16)
    assert r.dtype is jtorch.bfloat16 and bool(((r >= 0) & (r < 10)).all())


def test_float32_rounds_to_nearest_even():
    # every float32 between consecutive bfloat16 values, ties included, and the specials
    bits = np.arange(0x3F800000, 0x3F820001, 1, dtype=np.uint32).view(np.float32)
    special = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 3.4e38, -3.4e38, 3.3961e38, 1e-40,
                        1.1754942e-38, -1.0000001], np.float32)
    src = np.concatenate([bits, -bits, special])
    t = torch.from_numpy(src)
    _bitwise(jtorch.tensor(src).to(jtorch.bfloat16), t.to(torch.bfloat16))
    _bitwise(jtorch.tensor(src).bfloat16(), t.bfloat16())


@pytest.mark.parametrize("name", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16",
                                  "float32", "float64", "complex64", "complex128"])
def test_casts_both_ways(name):
    t = _values()
    j = jtorch.tensor(t)
    if name in ("bool", "float16", "float32", "float64", "complex64", "complex128"):
        _bitwise(j.to(getattr(jtorch, name)), t.to(getattr(torch, name)))
    finite = t[torch.isfinite(t)].clamp(-100, 100)  # (out-of-range float-to-int casts differ)
    src_t = finite.to(getattr(torch, name))
    _bitwise(jtorch.tensor(src_t).to(jtorch.bfloat16), src_t.to(torch.bfloat16))
    big = torch.tensor([257, 259, 1 << 20 | 3, -(1 << 24) - 1])
    if name in ("int32", "int64"):
        _bitwise(jtorch.tensor(big.to(getattr(torch, name))).bfloat16(),
                 big.to(getattr(torch, name)).bfloat16())


def test_non_contiguous_and_views():
    t = _values().reshape(8, -1)
    j = jtorch.tensor(t)
    _bitwise(j.t().contiguous(), t.t().contiguous())
    _bitwise(j[::2, 1::3].exp(), t[::2, 1::3].exp())
    _bitwise(j.t().float(), t.t().float())


# -- pointwise: float32 compute, one rounding --------------------------------------------

UNARY = ["abs", "neg", "exp", "expm1", "log", "log1p", "log2", "sin", "cos", "tan", "tanh",
         "sigmoid", "sqrt", "reciprocal", "floor", "ceil", "round", "trunc", "sign",
         "atan", "asin", "acos", "sinh", "cosh", "exp2", "frac", "square", "relu", "lgamma",
         "digamma", "erfinv", "i0", "sinc", "nan_to_num", "isnan", "isinf", "signbit",
         "isfinite"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_bitwise(name):
    t = _values()
    _bitwise(getattr(jtorch, name)(jtorch.tensor(t)), getattr(torch, name)(t))


@pytest.mark.parametrize("name", ["silu", "softplus", "elu", "leaky_relu", "hardswish",
                                  "logsigmoid", "softsign", "hardtanh", "relu6", "selu", "celu"])
def test_activations_bitwise(name):
    t = _values()
    _bitwise(getattr(JF, name)(jtorch.tensor(t)), getattr(TF, name)(t))


@pytest.mark.parametrize("name", ["gelu", "mish", "erf", "rsqrt", "logit"])
def test_activations_close(name):
    # torch's float32 approximations differ in the tails (gelu, mish, erf of subnormals,
    # rsqrt of the largest values); its logit rounds 1 - x to bfloat16 before the log
    t = _values()
    fn = getattr(JF, name, None) or getattr(jtorch, name)
    tfn = getattr(TF, name, None) or getattr(torch, name)
    tol = {"rtol": 2 ** -4, "atol": 4e-3} if name == "logit" else BF16_TOL
    if name == "gelu" and torch.backends.cpu.get_cpu_capability() != "AVX2":
        # torch's AVX512 vector loop overflows at the largest values (nan at +inf, inf at
        # 3.39e38; its AVX2 build and its scalar loop give inf and 3.39e38, as here)
        big = jtorch.tensor([float("inf"), 3.3895e38, -3.3895e38], dtype=jtorch.bfloat16)
        assert fn(big).float().tolist() == [float("inf"), big[1].item(), -0.0]
        t = t[~(t.float().abs() > 1e38)]
    same(fn(jtorch.tensor(t)), tfn(t), **tol)


def _other(kind: str, like: torch.Tensor):
    g = torch.Generator().manual_seed(1)
    n = like.numel()
    if kind == "bf16":
        t = (torch.randn(n, generator=g) * 2).to(torch.bfloat16)
    elif kind == "f16":
        t = (torch.randn(n, generator=g) * 2).half()
    elif kind == "f32":
        t = torch.randn(n, generator=g) * 2
    elif kind == "i64":
        t = torch.arange(n) - n // 2  # past 256: the int operand is rounded to bfloat16 first
    elif kind == "bool":
        t = torch.rand(n, generator=g) > 0.5
    elif kind == "0d":
        t = torch.tensor(0.3)
    else:
        return {"float": 0.3, "int": 3, "bigint": 257}[kind]
    return t


BINARY = ["add", "sub", "mul", "div", "pow", "maximum", "minimum", "atan2", "fmod", "remainder",
          "hypot", "copysign", "eq", "lt", "ge", "logaddexp", "floor_divide"]
KINDS = ["bf16", "f16", "f32", "i64", "bool", "0d", "float", "int", "bigint"]


@pytest.mark.parametrize("name,kind", list(itertools.product(BINARY, KINDS)))
def test_binary_bitwise_with_promotion(name, kind):
    t = _values()
    o = _other(kind, t)
    try:
        want = getattr(torch, name)(t, o)
    except (TypeError, RuntimeError) as e:
        with pytest.raises(type(e)):
            getattr(jtorch, name)(jtorch.tensor(t), jtorch.tensor(o) if isinstance(
                o, torch.Tensor) else o)
        return
    jo = jtorch.tensor(o) if isinstance(o, torch.Tensor) else o
    got = getattr(jtorch, name)(jtorch.tensor(t), jo)
    if kind in ("f16", "f32"):
        # a float32 result: bfloat16 widens exactly, then jtorch's own float32 op
        assert str(got.dtype) == str(want.dtype)
        np.testing.assert_array_equal(
            got.numpy(), getattr(jtorch, name)(jtorch.tensor(t.float()), jo.float()).numpy())
    elif name == "floor_divide" and kind in ("bf16", "i64", "bigint"):
        same(got, want, **BF16_TOL)  # torch floors a quotient already rounded to bfloat16
    else:
        _bitwise(got, want)


def test_scalar_operand_is_cast_to_bfloat16():
    # torch casts 0.3 to bfloat16's 0.30078125 for add and comparisons, not for mul
    t = torch.tensor([0.3, -1.3046875, 1.0], dtype=torch.bfloat16)
    j = jtorch.tensor(t)
    _bitwise(j == 0.3, t == 0.3)
    _bitwise(j + 0.3, t + 0.3)
    _bitwise(j * 0.3, t * 0.3)
    _bitwise(j ** 3, t ** 3)
    _bitwise(j ** -2, t ** -2)


def test_ternary_and_where():
    t = _values()
    o = _other("bf16", t)
    j, jo = jtorch.tensor(t), jtorch.tensor(o)
    _bitwise(jtorch.where(j > 0, j, jo), torch.where(t > 0, t, o))
    _bitwise(jtorch.clamp(j, -1.5, 2.0), torch.clamp(t, -1.5, 2.0))
    _bitwise(jtorch.lerp(j, jo, 0.3), torch.lerp(t, o, 0.3))
    _bitwise(j.masked_fill(j > 1, 0.3), t.masked_fill(t > 1, 0.3))
    _bitwise(jtorch.addcmul(j, j, jo, value=0.5), torch.addcmul(t, t, o, value=0.5))


def test_inplace_and_out():
    t = _values()
    j = jtorch.tensor(t)
    t2, j2 = t.clone(), j.clone()
    t2.mul_(1.7).add_(0.3)
    j2.mul_(1.7).add_(0.3)
    _bitwise(j2, t2)
    out_t = torch.empty(t.shape, dtype=torch.float32)
    out_j = jtorch.empty(j.shape, dtype=jtorch.float32)
    torch.exp(t, out=out_t)  # computed in bfloat16, then cast into the float32 out=
    jtorch.exp(j, out=out_j)
    same(out_j, out_t)


# -- reductions, matmul, softmax, normalisation, convolution --------------------------------

def _finite(shape=(16, 24), seed=2) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g).to(torch.bfloat16)


@pytest.mark.parametrize("call", [
    lambda L, x: x.sum(), lambda L, x: x.sum(0), lambda L, x: x.sum(1, keepdim=True),
    lambda L, x: x.mean(), lambda L, x: x.mean(1), lambda L, x: x.amax(0), lambda L, x: x.amin(1),
    lambda L, x: x.max(), lambda L, x: x.max(1).values, lambda L, x: x.argmax(1),
    lambda L, x: x.prod(1), lambda L, x: x.var(1), lambda L, x: x.std(), lambda L, x: x.norm(),
    lambda L, x: L.logsumexp(x, 1), lambda L, x: x.cumsum(1), lambda L, x: x.sort(1).values,
    lambda L, x: x.topk(3, 1).values, lambda L, x: x.sum(0, dtype=L.float32),
    lambda L, x: x.float().sum(1, dtype=L.bfloat16), lambda L, x: x.t().sum(1),
    lambda L, x: x.median(), lambda L, x: L.aminmax(x, dim=0).max,
])
def test_reductions(call):
    t = _finite()
    same(call(jtorch, jtorch.tensor(t)), call(torch, t), **BF16_TOL)


@pytest.mark.parametrize("call", [
    lambda L, a, b: a @ b, lambda L, a, b: L.mm(a, b.t().contiguous().t()),
    lambda L, a, b: L.matmul(a.reshape(2, 8, 24), b), lambda L, a, b: L.addmm(a[:, :8], a, b),
    lambda L, a, b: L.bmm(a.reshape(2, 8, 24), b.reshape(2, 24, 4)),
])
def test_matmul(call):
    a, b = _finite((16, 24), 3), _finite((24, 8), 4)
    same(call(jtorch, jtorch.tensor(a), jtorch.tensor(b)), call(torch, a, b), **BF16_TOL)


@pytest.mark.parametrize("call", [
    lambda L, F, x: F.softmax(x, -1), lambda L, F, x: F.log_softmax(x, 0),
    lambda L, F, x: F.softmax(x, -1, dtype=L.float32),
    lambda L, F, x: F.layer_norm(x, (24,)), lambda L, F, x: F.normalize(x, dim=1),
    lambda L, F, x: F.group_norm(x.reshape(4, 4, 24), 2),
    lambda L, F, x: F.batch_norm(x, None, None, training=True),
    lambda L, F, x: F.cross_entropy(x, L.arange(16) % 24),
    lambda L, F, x: F.mse_loss(x, x.flip(0)),
    lambda L, F, x: F.dropout(x, 0.0),
])
def test_nn_functions(call):
    t = _finite()
    same(call(jtorch, JF, jtorch.tensor(t)), call(torch, TF, t), **BF16_TOL)


@pytest.mark.parametrize("call", [
    lambda F, x, w: F.conv2d(x, w, padding=1),
    lambda F, x, w: F.conv2d(x, w, stride=2),
    lambda F, x, w: F.conv_transpose2d(x, w.transpose(0, 1)),
    lambda F, x, w: F.max_pool2d(x, 2),
    lambda F, x, w: F.avg_pool2d(x, 2),
    lambda F, x, w: F.interpolate(x, scale_factor=2, mode="bilinear"),
])
def test_conv_and_pooling(call):
    x, w = _finite((2, 3, 8, 8), 5), _finite((4, 3, 3, 3), 6)
    got, want = call(JF, jtorch.tensor(x), jtorch.tensor(w)), call(TF, x, w)
    if want.shape[-1] == 10:  # conv_transpose2d: torch sums its columns in bfloat16
        exact = call(TF, x.float(), w.float())
        same(got.float(), exact, rtol=2 ** -7, atol=1e-6)
        same(got, want, rtol=2 ** -6, atol=6e-2)
        return
    same(got, want, **BF16_TOL)


def test_mlp_forward_backward():
    torch.manual_seed(0)
    net_t = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.Linear(16, 4))
    net_j = jtorch.nn.Sequential(jtorch.nn.Linear(8, 16), jtorch.nn.GELU(),
                                 jtorch.nn.Linear(16, 4))
    net_j.load_state_dict({k: jtorch.tensor(v) for k, v in net_t.state_dict().items()})
    net_t, net_j = net_t.bfloat16(), net_j.bfloat16()
    x = _finite((5, 8), 7)
    y = torch.tensor([0, 1, 2, 3, 0])
    loss_t = TF.cross_entropy(net_t(x), y)
    loss_j = JF.cross_entropy(net_j(jtorch.tensor(x)), jtorch.tensor(y))
    same(loss_j, loss_t, rtol=2 ** -5, atol=1e-2)
    loss_t.backward()
    loss_j.backward()
    for (name, pj), pt in zip(net_j.named_parameters(), net_t.parameters()):
        assert pj.grad.dtype is jtorch.bfloat16, name
        same(pj.grad, pt.grad, rtol=2 ** -4, atol=2e-2)


def test_gradients_flow_in_bfloat16():
    t = _finite((6,), 8).requires_grad_()
    j = jtorch.tensor(t.detach()).requires_grad_()
    for x, lib in ((t, torch), (j, jtorch)):
        (lib.exp(x) * x).sum().backward()
    assert j.grad.dtype is jtorch.bfloat16
    same(j.grad, t.grad, **BF16_TOL)


def test_sgd_and_adam_steps():
    # jtorch updates in float32 and rounds each buffer once; torch rounds after every step
    # of the update: a few bfloat16 ulps of the starting values apart
    tol = {"rtol": 2 ** -4, "atol": 1e-2}
    for make in (lambda L, p: L.optim.SGD([p], lr=0.1, momentum=0.9),
                 lambda L, p: L.optim.Adam([p], lr=0.1)):
        pt = torch.nn.Parameter(_finite((5,), 9))
        pj = jtorch.nn.Parameter(jtorch.tensor(pt.detach()))
        opt_t, opt_j = make(torch, pt), make(jtorch, pj)
        for _ in range(3):
            for p, opt in ((pt, opt_t), (pj, opt_j)):
                opt.zero_grad()
                (p * p).sum().backward()
                opt.step()
        same(pj.detach(), pt.detach(), **tol)


# -- printing, NumPy and torch interop, serialization ------------------------------------

@pytest.mark.parametrize("values", [[1.5, 2.25, 1e10], [0.1], [float("nan"), -0.0, float("inf")],
                                    [[1, 2], [3, 4]], []])
def test_repr(values):
    t = torch.tensor(values, dtype=torch.bfloat16)
    assert repr(jtorch.tensor(values, dtype=jtorch.bfloat16)) == repr(t)


def test_numpy_refuses_like_torch():
    j = jtorch.ones(2, dtype=jtorch.bfloat16)
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        j.numpy()
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        np.asarray(j)
    assert j.tolist() == [1.0, 1.0] and type(j[0].item()) is float


def test_torch_and_ml_dtypes_arrays_convert():
    t = _values()
    _bitwise(jtorch.tensor(t), t)
    _bitwise(jtorch.as_tensor(t), t)
    arr = np.array([1.5, -2.25], dtype=ml_dtypes.bfloat16)
    assert jtorch.tensor(arr).dtype is jtorch.bfloat16


def test_save_load_with_torch(tmp_path):
    t = _values().reshape(4, -1)
    j = jtorch.tensor(t)
    state = {"w": j, "w_t": j.t(), "row": j[1], "p": jtorch.nn.Parameter(j[:2].clone())}
    path = tmp_path / "j.pt"
    jtorch.save(state, path)
    back_t = torch.load(path)
    _bitwise(jtorch.tensor(back_t["w"]), t)
    assert back_t["w_t"].dtype == torch.bfloat16 and back_t["w_t"].stride() == t.t().stride()
    back_j = jtorch.load(path)
    _bitwise(back_j["w_t"], t.t())
    buf = io.BytesIO()
    torch.save({"a": t, "b": t[:, 1:3]}, buf)
    buf.seek(0)
    loaded = jtorch.load(buf)
    _bitwise(loaded["a"], t)
    _bitwise(loaded["b"], t[:, 1:3])


def test_own_format_and_safetensors_bf16():
    t = _values()
    buf = io.BytesIO()
    jtorch.save({"x": jtorch.tensor(t)}, buf, _use_new_zipfile_serialization=False)
    buf.seek(0)
    _bitwise(jtorch.load(buf)["x"], t)
    st = pytest.importorskip("safetensors.torch")
    data = st.save({"w": t, "v": torch.ones(3)})
    got = jtorch.load(data)
    _bitwise(got["w"], t)
    same(got["v"], torch.ones(3))


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular", "constant"])
def test_pad_forward_backward(mode):
    t = _finite((2, 3, 5, 6), 10).requires_grad_()
    j = jtorch.tensor(t.detach()).requires_grad_()
    yt, yj = TF.pad(t, (1, 2, 2, 1), mode=mode), JF.pad(j, (1, 2, 2, 1), mode=mode)
    _bitwise(yj.detach(), yt.detach())
    (yt * yt).sum().backward()
    (yj * yj).sum().backward()
    same(j.grad, t.grad, **BF16_TOL)


def test_errors_name_bfloat16_as_torch():
    j = jtorch.ones(64, dtype=jtorch.bfloat16)
    with pytest.raises(RuntimeError, match="MKL FFT doesn't support tensors of type: BFloat16"):
        jtorch.stft(j, 16, return_complex=True)
    assert jtorch.stft(j, 16, window=jtorch.ones(16), return_complex=True).dtype is \
        jtorch.complex64
    calls = (
        lambda L: L.gcd(L.ones(2, dtype=L.bfloat16), L.ones(2, dtype=L.bfloat16)),
        lambda L: L.complex(L.ones(2, dtype=L.bfloat16), L.ones(2, dtype=L.bfloat16)),
        lambda L: L.nn.functional.avg_pool3d(L.ones(1, 1, 2, 2, 2, dtype=L.bfloat16), 2),
    )
    for call in calls:
        with pytest.raises(Exception) as want:
            call(torch)
        with pytest.raises(want.type) as got:
            call(jtorch)
        assert str(got.value) == str(want.value)


def test_testing_assert_close():
    j = jtorch.ones(3, dtype=jtorch.bfloat16)
    jtorch.testing.assert_close(j, j + 0.001)  # within bfloat16's default tolerance
    with pytest.raises(AssertionError):
        jtorch.testing.assert_close(j, j + 0.1)


def test_float16_shares_the_operand_cast():
    # float16 takes the same path: its operands are cast to float16 before the float32 compute
    g = torch.Generator().manual_seed(11)
    t = (torch.randn(2000, generator=g) * 3).half()
    j = jtorch.tensor(t)
    same(j + 0.3, t + 0.3)
    same(j + jtorch.arange(2000), t + torch.arange(2000))
    same(j == 0.3, t == 0.3)
    same(j * 0.3, t * 0.3)
