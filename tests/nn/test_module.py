"""nn.Module, containers and the basic layers against torch: structure, state_dict, hooks,
reprs, and outputs/gradients with copied weights."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

import jtorch

from helpers import ATOL32, RTOL32

MODS = [jtorch, torch]


def _np(t):
    return t.detach().numpy()


def copy_weights(jm, tm) -> None:
    """Give torch module ``tm`` the parameters and buffers of jtorch module ``jm``."""
    with torch.no_grad():
        for (jn, jp), (tn, tp) in zip(jm.state_dict().items(), tm.state_dict().items()):
            assert jn == tn
            tp.copy_(torch.from_numpy(np.array(jp.numpy())))


def compare_layer(make, x: np.ndarray, rtol=1e-6, atol=1e-7, n_inputs: int = 1, exact=False):
    """Build the layer in both libraries with jtorch's weights; compare outputs and the
    gradients of inputs and parameters with torch's, or with ``exact`` with those of torch's
    float64 copy of the layer (for float32 layers, whose torch results round by its BLAS
    kernel, vector width and thread count)."""
    jm, tm = make(jtorch), make(torch)
    copy_weights(jm, tm)
    wide = (lambda a: a.astype(np.float64) if a.dtype.kind == "f" else a) if exact else np.copy
    tm = tm.double() if exact else tm
    xs = x if isinstance(x, tuple) else (x,)
    jx = [jtorch.from_numpy(a.copy()).requires_grad_(a.dtype.kind == "f") for a in xs]
    tx = [torch.from_numpy(wide(a)).requires_grad_(a.dtype.kind == "f") for a in xs]
    jy, ty = jm(*jx), tm(*tx)
    np.testing.assert_allclose(_np(jy), _np(ty), rtol=rtol, atol=atol)
    g = np.random.default_rng(0).standard_normal(tuple(jy.shape)).astype(_np(jy).dtype)
    jy.backward(jtorch.from_numpy(g.copy()))
    ty.backward(torch.from_numpy(wide(g)))
    for a, b in zip(jx, tx):
        if b.requires_grad:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol)
    for (n, a), (_, b) in zip(jm.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol, atol=atol,
                                   err_msg=n)
    return jm, tm


class Net:
    """The same small model defined for either library."""

    @staticmethod
    def make(m):
        class _Net(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = m.nn.Linear(4, 8)
                self.act = m.nn.ReLU()
                self.blocks = m.nn.ModuleList([m.nn.Linear(8, 8), m.nn.Tanh()])
                self.heads = m.nn.ModuleDict({"a": m.nn.Linear(8, 2)})
                self.scale = m.nn.Parameter(m.ones(1))
                self.register_buffer("steps", m.zeros(1))
                self.register_buffer("cache", m.zeros(2), persistent=False)

            def forward(self, x):
                h = self.act(self.fc1(x))
                for b in self.blocks:
                    h = b(h)
                return self.heads["a"](h) * self.scale

        return _Net()


def test_structure_matches_torch():
    jn, tn = Net.make(jtorch), Net.make(torch)
    assert [n for n, _ in jn.named_parameters()] == [n for n, _ in tn.named_parameters()]
    assert [n for n, _ in jn.named_buffers()] == [n for n, _ in tn.named_buffers()]
    assert [n for n, _ in jn.named_modules()] == [n for n, _ in tn.named_modules()]
    assert [n for n, _ in jn.named_children()] == [n for n, _ in tn.named_children()]
    assert list(jn.state_dict()) == list(tn.state_dict())
    assert repr(jn).replace("jtorch", "torch") == repr(tn)
    assert [tuple(p.shape) for p in jn.parameters()] == [tuple(p.shape) for p in tn.parameters()]


def test_forward_backward_matches_torch():
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    compare_layer(Net.make, x, rtol=RTOL32, atol=ATOL32, exact=True)


def test_state_dict_round_trip_and_errors():
    a, b = Net.make(jtorch), Net.make(jtorch)
    sd = a.state_dict()
    assert not sd["fc1.weight"].requires_grad
    res = b.load_state_dict(sd)
    assert res.missing_keys == [] and res.unexpected_keys == []
    for k in sd:
        np.testing.assert_array_equal(b.state_dict()[k].numpy(), sd[k].numpy())
    for m in MODS:
        net = m.nn.Linear(2, 2)
        with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
            net.load_state_dict({"weight": m.zeros(2, 2)})
        with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "extra"'):
            net.load_state_dict({"weight": m.zeros(2, 2), "bias": m.zeros(2),
                                 "extra": m.zeros(1)})
        with pytest.raises(RuntimeError, match="size mismatch for weight: copying a param with "
                                               "shape torch.Size\\(\\[3, 2\\]\\) from checkpoint"):
            net.load_state_dict({"weight": m.zeros(3, 2), "bias": m.zeros(2)})
        r = net.load_state_dict({"weight": m.zeros(2, 2)}, strict=False)
        assert r.missing_keys == ["bias"]


def test_attribute_rules_match_torch():
    for m in MODS:
        mod = m.nn.Linear(2, 2)
        with pytest.raises(TypeError, match="cannot assign 'torch.FloatTensor' as parameter "
                                            "'weight' \\(torch.nn.Parameter or None expected\\)"):
            mod.weight = m.zeros(2, 2)
        with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
            mod.nope  # noqa: B018
        mod.bias = None
        assert [n for n, _ in mod.named_parameters()] == ["weight"]
        mod.extra = m.nn.Parameter(m.zeros(1))
        assert "extra" in dict(mod.named_parameters())
        del mod.extra
        assert "extra" not in dict(mod.named_parameters())
        with pytest.raises(KeyError, match="attribute 'weight' already exists"):
            mod.register_buffer("weight", m.zeros(1))

        class Early(m.nn.Module):
            def __init__(self):
                self.w = m.nn.Parameter(m.zeros(1))

        with pytest.raises(AttributeError, match="cannot assign parameters before "
                                                 "Module.__init__\\(\\) call"):
            Early()


def test_train_eval_to_zero_grad_requires_grad():
    net = Net.make(jtorch)
    assert net.training and all(m.training for m in net.modules())
    net.eval()
    assert not any(m.training for m in net.modules())
    net.train()
    w = net.fc1.weight
    net.double()
    assert net.fc1.weight is w and w.dtype is jtorch.float64 and net.steps.dtype is jtorch.float64
    net.to(jtorch.float32)
    assert w.dtype is jtorch.float32
    net(jtorch.ones(2, 4)).sum().backward()
    assert w.grad is not None
    net.zero_grad(set_to_none=False)
    assert not w.grad.any()
    net.zero_grad()
    assert w.grad is None
    net.requires_grad_(False)
    assert not any(p.requires_grad for p in net.parameters())
    names = []
    net.apply(lambda mod: names.append(type(mod).__name__))
    assert names[-1] == "_Net" and "Linear" in names


def test_forward_hooks_and_backward_hooks():
    for m in MODS:
        lin = m.nn.Linear(3, 2)
        calls = []
        h1 = lin.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
        h2 = lin.register_forward_hook(lambda mod, args, out: out + 1)
        lin.register_full_backward_hook(
            lambda mod, gin, gout: calls.append((len(gin), tuple(gout[0].shape))))
        x = m.ones(4, 3, requires_grad=True)
        y = lin(x)
        ref = m.nn.functional.linear(x * 2, lin.weight, lin.bias) + 1
        assert m.allclose(y, ref)
        y.sum().backward()
        assert calls == [(1, (4, 2))]
        h1.remove()
        h2.remove()
        assert m.allclose(lin(x), m.nn.functional.linear(x, lin.weight, lin.bias))


def test_containers():
    for m in MODS:
        seq = m.nn.Sequential(m.nn.Linear(2, 3), m.nn.ReLU(), m.nn.Linear(3, 1))
        assert len(seq) == 3 and isinstance(seq[1], m.nn.ReLU)
        assert len(seq[:2]) == 2 and isinstance(seq[-1], m.nn.Linear)
        seq.append(m.nn.Sigmoid())
        assert len(seq) == 4
        del seq[1]
        assert [type(s).__name__ for s in seq] == ["Linear", "Linear", "Sigmoid"]
        ml = m.nn.ModuleList([m.nn.Linear(1, 1)])
        ml.extend([m.nn.ReLU()])
        ml.insert(0, m.nn.Tanh())
        assert [type(s).__name__ for s in ml] == ["Tanh", "Linear", "ReLU"]
        md = m.nn.ModuleDict({"x": m.nn.ReLU()})
        md["y"] = m.nn.Tanh()
        assert list(md.keys()) == ["x", "y"] and "x" in md
        pl = m.nn.ParameterList([m.nn.Parameter(m.zeros(2)), m.zeros(3)])
        assert len(list(pl.parameters())) == 2 and isinstance(pl[1], m.nn.Parameter)
        pd = m.nn.ParameterDict({"a": m.nn.Parameter(m.zeros(1))})
        pd["b"] = m.zeros(2)
        assert sorted(n for n, _ in pd.named_parameters()) == ["a", "b"]
    j = jtorch.nn.Sequential(jtorch.nn.Linear(2, 3), jtorch.nn.ReLU())
    t = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.ReLU())
    assert repr(j) == repr(t)


def test_parameter_and_deepcopy_pickle():
    p = jtorch.nn.Parameter(jtorch.ones(2))
    assert p.requires_grad and isinstance(p, jtorch.Tensor) and p.is_leaf
    assert repr(p).startswith("Parameter containing:\ntensor([1., 1.], requires_grad=True)")
    q = jtorch.nn.Parameter(jtorch.ones(2), requires_grad=False)
    assert not q.requires_grad
    net = Net.make(jtorch)
    net2 = copy.deepcopy(net)
    assert net2.fc1.weight is not net.fc1.weight
    np.testing.assert_array_equal(net2.fc1.weight.detach().numpy(), net.fc1.weight.detach().numpy())
    p2 = pickle.loads(pickle.dumps(p))
    assert isinstance(p2, jtorch.nn.Parameter) and p2.requires_grad


@pytest.mark.parametrize("name,args,shape", [
    ("Linear", (4, 3), (2, 5, 4)), ("Linear", (4, 3, False), (2, 4)), ("Identity", (), (2, 3)),
    ("Bilinear", (4, 3, 2), None), ("Flatten", (), (2, 3, 4)), ("Unflatten", (1, (2, 2)), (3, 4)),
    ("Embedding", (10, 3), "idx"), ("PReLU", (3,), (2, 3, 4)), ("PReLU", (), (2, 3)),
])
def test_layers_match_torch(name, args, shape):
    rng = np.random.default_rng(2)
    if shape == "idx":
        x = np.array([[1, 2, 9], [0, 1, 1]])
    elif shape is None:
        x = (rng.standard_normal((5, 4)), rng.standard_normal((5, 3)))
    else:
        x = rng.standard_normal(shape)
    compare_layer(lambda m: getattr(m.nn, name)(*args).double(), x, rtol=1e-10, atol=1e-12)


ACTIVATIONS = [("ReLU", ()), ("ReLU6", ()), ("LeakyReLU", (0.2,)), ("GELU", ()),
               ("GELU", ("tanh",)), ("SiLU", ()), ("ELU", (0.7,)), ("CELU", (0.7,)), ("SELU", ()),
               ("Sigmoid", ()), ("Tanh", ()), ("Softmax", (1,)), ("LogSoftmax", (1,)),
               ("Softmin", (1,)), ("Softplus", (2.0, 1.0)), ("Hardtanh", (-0.5, 0.5)),
               ("Hardsigmoid", ()), ("Hardswish", ()), ("Mish", ()), ("Softsign", ()),
               ("Tanhshrink", ()), ("Threshold", (0.1, 2.0)), ("GLU", ()), ("LogSigmoid", ()),
               ("Softshrink", ()), ("Hardshrink", ())]


# torch's backward of these uses float32 constants (1/alpha, 1/6) even for float64
LOOSE = {"CELU", "Hardsigmoid"}


@pytest.mark.parametrize("name,args", ACTIVATIONS)
def test_activations_match_torch(name, args):
    x = np.random.default_rng(3).standard_normal((3, 4)) * 2
    rtol = 1e-6 if name in LOOSE else 1e-9
    jm, tm = compare_layer(lambda m: getattr(m.nn, name)(*args), x, rtol=rtol, atol=1e-12)
    assert repr(jm) == repr(tm)


def test_dropout_modules():
    for cls in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout"):
        jm, tm = getattr(jtorch.nn, cls)(0.3), getattr(torch.nn, cls)(0.3)
        assert repr(jm) == repr(tm)
        x = jtorch.ones(2, 3, 4, 4, 4) if cls == "Dropout3d" else jtorch.ones(2, 3, 4, 4) \
            if cls == "Dropout2d" else jtorch.ones(2, 3, 4)
        jm.eval()
        assert jm(x) is x
        jm.train()
        y = jm(x)
        if cls != "AlphaDropout":
            vals = np.unique(y.numpy())
            assert np.all(np.isclose(vals, 0) | np.isclose(vals, 1 / 0.7))
    y = jtorch.nn.Dropout2d(0.5)(jtorch.ones(4, 8, 3, 3))
    per_channel = y.numpy().reshape(32, 9)
    assert all(len(set(row)) == 1 for row in per_channel)  # whole channels are dropped
