"""Meta-device programs as a new user writes them, run with torch and with jtorch.

Each test is one small program ``program(torch)``: building a model without memory under
``with torch.device("meta"):``, shape inference of a forward and backward pass on meta inputs,
moving tensors and modules to meta and back, and the errors a user meets on the way (reading
values, mixing devices). The program runs once with torch (the oracle, its own meta device)
and once with jtorch; the two must return the same thing (``helpers.same``: types, shapes,
dtypes, devices, strides of tensors of more than one element, values of CPU tensors) or raise
the same exception type with the same message (all of it, or the part ``message`` names;
where torch's meta kernels word or check an error otherwise than its CPU kernels, jtorch's
meta tensors raise the CPU error, as the meta rule is the CPU path's own check).
"""

from __future__ import annotations

import copy
import io
import re
import warnings

import numpy as np
import pytest
import torch
from helpers import as_on_meta, same

import jtorch

R = np.random.default_rng(0)


# -- running a program under both libraries --------------------------------------------------------

def both(program, *, message: str = "full", strides="numel>1", rtol: float = 0.0):
    """``program(lib)`` with torch, then jtorch: the same result, or the same error.

    ``message``: how much of an error's text must match: "full", "first line", "type only",
    or a regular expression that both messages must contain. ``rtol``: for CPU values."""
    try:
        expected = program(torch)
    except Exception as e:  # noqa: BLE001 - the oracle decides what is an error
        with pytest.raises(Exception) as got:
            program(jtorch)
        assert type(got.value) is type(e), (got.value, e)
        j, t = str(got.value), str(e)
        if message == "full":
            assert j == t
        elif message == "first line":
            assert j.split("\n")[0] == t.split("\n")[0]
        elif message != "type only":
            assert re.search(message, t), f"the key {message!r} is not in torch's {t!r}"
            assert re.search(message, j), f"the key {message!r} is not in jtorch's {j!r}"
        return None
    got = program(jtorch)
    same(got, expected, strides=strides, rtol=rtol)
    return got


def errors_as_on_cpu(program, *, torch_meta_checks: bool = True):
    """``program(lib, device)`` on meta raises in jtorch what it raises in torch on CPU (type
    and message). For errors that torch's meta kernels (Python decompositions) word otherwise
    ("a and b must have same reduction dim" for "mat1 and mat2 shapes cannot be multiplied")
    or do not check at all (``torch_meta_checks=False``: torch's meta ``mm`` of float32 by
    float64 returns a tensor): jtorch raises one error on every device, its CPU path's, as
    the meta rule is the CPU path's own check."""
    with pytest.raises(Exception) as on_cpu:
        program(torch, "cpu")
    with pytest.raises(Exception) as got:
        program(jtorch, "meta")
    assert type(got.value) is type(on_cpu.value), (got.value, on_cpu.value)
    assert str(got.value) == as_on_meta(str(on_cpu.value))
    if torch_meta_checks:  # torch's meta device raises too, in its own words or type
        with pytest.raises(Exception) as on_meta:
            program(torch, "meta")
        assert on_meta.value is not None
    else:
        program(torch, "meta")  # torch's meta device lets it through


def geometry(t):
    """What a user checks of a tensor: shape, dtype, device, is_meta, requires_grad, and
    strides when it has more than one element (a tuple; None passes through)."""
    if t is None:
        return None
    strides = t.stride() if t.numel() > 1 else None
    return (tuple(t.shape), str(t.dtype), str(t.device), t.is_meta, t.requires_grad, strides)


def params(model):
    """name -> geometry of every parameter and buffer, in order."""
    out = {n: geometry(p) for n, p in model.named_parameters()}
    out.update({n: geometry(b) for n, b in model.named_buffers()})
    return out


# -- building models without memory ----------------------------------------------------------------

def test_mlp_built_on_meta_then_materialized():
    """Build an MLP under ``with torch.device("meta")``, to_empty on CPU, reset, run a batch."""
    def program(torch):
        with torch.device("meta"):
            model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(),
                                        torch.nn.Linear(16, 4))
        before = params(model)
        n = sum(p.numel() for p in model.parameters())
        model = model.to_empty(device="cpu")
        for m in model.modules():
            if hasattr(m, "reset_parameters"):
                m.reset_parameters()
        y = model(torch.ones(3, 8))
        return before, n, params(model), geometry(y), type(model[0].weight).__name__
    both(program)


def test_cnn_with_batchnorm_built_on_meta():
    """Conv2d + BatchNorm2d on meta: parameters and buffers, to_empty, reset stats, eval forward."""
    def program(torch):
        with torch.device("meta"):
            model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1),
                                        torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                                        torch.nn.MaxPool2d(2), torch.nn.Flatten(),
                                        torch.nn.Linear(8 * 4 * 4, 10))
        before = params(model)
        model.to_empty(device="cpu")
        model[0].reset_parameters()
        model[1].reset_parameters()
        model[5].reset_parameters()
        model.eval()
        y = model(torch.zeros(2, 3, 8, 8))
        return before, params(model), geometry(y), model[1].running_var
    both(program)


def test_modules_take_device_meta():
    """``nn.X(..., device="meta")``: every layer's parameters and buffers are made on meta."""
    def program(torch):
        nn = torch.nn
        layers = [nn.Linear(3, 4, device="meta"), nn.Bilinear(2, 3, 4, device="meta"),
                  nn.Conv2d(3, 4, 3, device="meta"), nn.ConvTranspose1d(2, 3, 3, device="meta"),
                  nn.BatchNorm2d(4, device="meta"), nn.LayerNorm(5, device="meta"),
                  nn.GroupNorm(2, 4, device="meta"), nn.RMSNorm(5, device="meta"),
                  nn.Embedding(10, 3, device="meta"), nn.EmbeddingBag(10, 3, device="meta"),
                  nn.LSTM(3, 4, device="meta"), nn.GRUCell(3, 4, device="meta"),
                  nn.PReLU(device="meta"), nn.MultiheadAttention(8, 2, device="meta"),
                  nn.TransformerDecoderLayer(8, 2, 16, device="meta", dtype=torch.float64)]
        return [params(m) for m in layers]
    both(program)


def test_layernorm_embedding_on_meta():
    """LayerNorm and Embedding built on meta and called on meta inputs."""
    def program(torch):
        with torch.device("meta"):
            emb = torch.nn.Embedding(100, 16, padding_idx=0)
            ln = torch.nn.LayerNorm(16)
            ids = torch.zeros(4, 7, dtype=torch.long)
            h = ln(emb(ids))
        return params(emb), params(ln), h, ids
    both(program)


def test_recurrent_and_normalization_layers_on_meta():
    """GRU and LSTM forward/backward (made with ``device="meta"`` and under ``with
    torch.device("meta")``), Conv1d + GroupNorm, BatchNorm's running stats on meta."""
    def program(torch):
        nn = torch.nn
        gru = nn.GRU(4, 5, num_layers=2, bidirectional=True, device="meta")
        out, h = gru(torch.empty(3, 2, 4, device="meta"))
        lstm = nn.LSTM(3, 4, batch_first=True, device="meta")
        lstm(torch.empty(2, 5, 3, device="meta"))[0].sum().backward()
        net = nn.Sequential(nn.Conv1d(3, 4, 3), nn.GroupNorm(2, 4)).to("meta")
        bn = nn.BatchNorm2d(3, device="meta")
        y = bn(torch.empty(2, 3, 4, 4, device="meta"))
        return (out, h, [geometry(p.grad) for p in lstm.parameters()],
                net(torch.empty(2, 3, 9, device="meta")), y, bn.running_mean,
                bn.num_batches_tracked)
    both(program)

    def program(torch):
        with torch.device("meta"):
            lstm = torch.nn.LSTM(10, 20, num_layers=2, batch_first=True)
            out, (h, c) = lstm(torch.empty(3, 5, 10))
        return params(lstm), out, h, c
    both(program)


def test_transformer_encoder_layer_on_meta():
    """A TransformerEncoderLayer built on meta: parameters, and forward shape inference."""
    def program(torch):
        with torch.device("meta"):
            layer = torch.nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64,
                                                     dropout=0.0, batch_first=True)
            y = layer(torch.empty(2, 6, 32))
        return params(layer), y
    both(program)


def test_multihead_attention_on_meta():
    """MultiheadAttention on meta inputs: output and averaged attention weights."""
    def program(torch):
        with torch.device("meta"):
            mha = torch.nn.MultiheadAttention(16, 2, batch_first=True)
        q = torch.empty(2, 5, 16, device="meta")
        kv = torch.empty(2, 7, 16, device="meta")
        out, w = mha(q, kv, kv)
        return params(mha), out, w
    both(program)


def test_init_functions_on_meta_parameters():
    """``nn.init`` on meta parameters runs and leaves them meta."""
    def program(torch):
        with torch.device("meta"):
            lin = torch.nn.Linear(5, 7)
        torch.nn.init.kaiming_uniform_(lin.weight, a=5 ** 0.5)
        torch.nn.init.xavier_normal_(lin.weight)
        torch.nn.init.trunc_normal_(lin.weight, std=0.02)
        torch.nn.init.zeros_(lin.bias)
        torch.nn.init.constant_(lin.bias, 0.1)
        torch.nn.init.orthogonal_(lin.weight)
        return params(lin)
    both(program)


def test_model_to_meta_and_parameter_count():
    """``model.to("meta")``: every parameter moves, stays a Parameter, counts the same."""
    def program(torch):
        model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
        model[0].bias.requires_grad_(False)
        model.to("meta")
        n = sum(p.numel() for p in model.parameters() if p.requires_grad)
        kinds = [type(p).__name__ for p in model.parameters()]
        return params(model), n, kinds, [p.is_leaf for p in model.parameters()]
    both(program)


def test_meta_model_to_cpu_raises():
    """``model.to("cpu")``/``model.cpu()`` of a meta model raise (no data to copy);
    ``copy.deepcopy`` and ``.half()``/``.double()`` keep it on meta."""
    both(lambda torch: torch.nn.Linear(2, 2, device="meta").to("cpu"))
    both(lambda torch: torch.nn.Linear(2, 2, device="meta").cpu())

    def program(torch):
        model = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3)).to("meta")
        twin = copy.deepcopy(model)
        return (params(twin), twin[0].weight is not model[0].weight, params(model.half()),
                params(model.double()))
    both(program)


def test_state_dict_of_meta_model():
    """``state_dict()`` of a model built on meta: the keys and meta tensors."""
    def program(torch):
        with torch.device("meta"):
            model = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.BatchNorm2d(2))
        sd = model.state_dict()
        return list(sd), [geometry(v) for v in sd.values()]
    both(program)


def test_load_state_dict_assign_into_meta_model():
    """Build on meta, then ``load_state_dict(..., assign=True)`` real weights and run them."""
    w, b = R.standard_normal((3, 4)).astype(np.float32), R.standard_normal(3).astype(np.float32)
    x = R.standard_normal((2, 4)).astype(np.float32)

    def program(torch):
        with torch.device("meta"):
            model = torch.nn.Linear(4, 3)
        sd = {"weight": torch.from_numpy(w.copy()), "bias": torch.from_numpy(b.copy())}
        result = model.load_state_dict(sd, assign=True)
        y = model(torch.from_numpy(x.copy()))
        return (tuple(result.missing_keys), tuple(result.unexpected_keys), params(model),
                type(model.weight).__name__, y.detach())
    both(program, strides=False)


def test_materialize_then_load_a_checkpoint():
    """The usual recipe: build on meta, ``to_empty(device="cpu")``, ``load_state_dict`` a
    checkpoint (copied in place), then run on CPU with the checkpoint's values."""
    w1, b1 = R.standard_normal((4, 3)).astype(np.float32), R.standard_normal(4).astype(np.float32)
    w2, b2 = R.standard_normal((2, 4)).astype(np.float32), R.standard_normal(2).astype(np.float32)
    x = R.standard_normal((5, 3)).astype(np.float32)

    def program(torch):
        with torch.device("meta"):
            model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(),
                                        torch.nn.Linear(4, 2))
        model.to_empty(device="cpu")
        sd = {k: torch.from_numpy(v.copy()) for k, v in
              zip(["0.weight", "0.bias", "2.weight", "2.bias"], [w1, b1, w2, b2])}
        model.load_state_dict(sd)
        with torch.no_grad():
            y = model(torch.from_numpy(x.copy()))
        return params(model), y
    both(program, strides=False, rtol=1e-6)


def test_copying_a_checkpoint_into_meta_params_warns():
    """``load_state_dict`` of CPU tensors into a meta model without ``assign``: a no-op, and
    torch's warning about it."""
    def program(torch):
        with torch.device("meta"):
            model = torch.nn.Linear(2, 2)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            model.load_state_dict({"weight": torch.ones(2, 2), "bias": torch.zeros(2)})
        return params(model), [(w.category.__name__, str(w.message)) for w in caught]
    both(program)


def test_save_and_load_meta_tensors():
    """``torch.save`` of meta tensors and a meta model's state_dict; ``load`` gives them back
    on meta; ``map_location="meta"`` loads a CPU checkpoint without its data."""
    def program(torch):
        buf = io.BytesIO()
        model = torch.nn.Linear(3, 2, device="meta")
        torch.save({"sd": model.state_dict(), "x": torch.empty(4, 2, device="meta").t(),
                    "p": model.weight}, buf)
        buf.seek(0)
        loaded = torch.load(buf)
        cpu = io.BytesIO()
        torch.save({"w": torch.ones(2, 3), "n": torch.tensor(5)}, cpu)
        cpu.seek(0)
        mapped = torch.load(cpu, map_location="meta")
        return ({k: geometry(v) for k, v in loaded["sd"].items()}, geometry(loaded["x"]),
                type(loaded["p"]).__name__, geometry(loaded["p"]),
                {k: geometry(v) for k, v in mapped.items()})
    both(program)


# -- shape inference of training steps -------------------------------------------------------------

def test_cnn_forward_backward_on_meta():
    """A CNN's forward, loss and backward on meta: meta gradients of the parameters' shapes."""
    def program(torch):
        F = torch.nn.functional
        with torch.device("meta"):
            conv = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)
            fc = torch.nn.Linear(4 * 4 * 4, 10)
            x = torch.empty(5, 3, 8, 8)
            target = torch.empty(5, dtype=torch.long)
        h = F.max_pool2d(F.relu(conv(x)), 1)
        logits = fc(h.flatten(1))
        loss = F.cross_entropy(logits, target)
        loss.backward()
        return (logits, loss, geometry(conv.weight.grad), geometry(fc.bias.grad),
                type(loss.grad_fn).__name__ is not None)
    both(program)


def test_transformer_block_backward_on_meta():
    """A pre-norm attention block, forward and backward on meta."""
    def program(torch):
        F = torch.nn.functional
        with torch.device("meta"):
            ln = torch.nn.LayerNorm(8)
            qkv = torch.nn.Linear(8, 24)
            proj = torch.nn.Linear(8, 8)
            x = torch.empty(2, 5, 8, requires_grad=True)
        q, k, v = qkv(ln(x)).chunk(3, dim=-1)
        q, k, v = (t.view(2, 5, 2, 4).transpose(1, 2) for t in (q, k, v))
        att = F.softmax(q @ k.transpose(-2, -1) / 2.0, dim=-1)
        y = x + proj((att @ v).transpose(1, 2).reshape(2, 5, 8))
        y.pow(2).mean().backward()
        return y, att, geometry(x.grad), geometry(qkv.weight.grad), geometry(ln.weight.grad)
    both(program)


def test_optimizers_step_on_meta_params():
    """SGD with momentum and Adam step on meta parameters: they and their state stay meta."""
    def program(torch):
        with torch.device("meta"):
            model = torch.nn.Linear(3, 2)
        out = []
        for opt in (torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
                    torch.optim.Adam(model.parameters(), lr=1e-3)):
            model(torch.empty(4, 3, device="meta")).sum().backward()
            opt.step()
            opt.zero_grad()
            state = opt.state[model.weight]
            out.append({k: geometry(v) if hasattr(v, "shape") else v for k, v in state.items()})
        return params(model), out, model.weight.grad
    both(program)


def test_parameters_to_vector_on_meta():
    """``parameters_to_vector``/``vector_to_parameters`` of a meta model; ``clip_grad_norm_``
    of meta gradients returns a meta total norm."""
    def program(torch):
        with torch.device("meta"):
            model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2))
        vec = torch.nn.utils.parameters_to_vector(model.parameters())
        torch.nn.utils.vector_to_parameters(torch.empty(vec.numel(), device="meta"),
                                            model.parameters())
        return vec, params(model)
    both(program)

    def program(torch):
        with torch.device("meta"):
            model = torch.nn.Linear(3, 2)
        model(torch.empty(2, 3, device="meta")).sum().backward()
        total = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        return total, geometry(model.weight.grad)
    both(program)


def test_autograd_grad_on_meta():
    """``torch.autograd.grad`` with ``create_graph`` on meta tensors: meta gradients."""
    def program(torch):
        x = torch.empty(3, 4, device="meta", requires_grad=True)
        y = (x.sin() * x).sum(dim=1)
        (g,) = torch.autograd.grad(y, x, torch.ones(3, device="meta"), create_graph=True)
        (gg,) = torch.autograd.grad(g.sum(), x)
        return geometry(g), g.grad_fn is not None, geometry(gg), x.grad
    both(program)


def test_requires_grad_and_leaf_on_meta():
    """requires_grad_, is_leaf, detach, two backward passes accumulating into a meta leaf;
    ``backward()`` of a non-scalar: torch's implicit-grad error."""
    def program(torch):
        x = torch.empty(2, 3, device="meta").requires_grad_()
        y = x.exp()
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        d = y.detach()
        return (x.is_leaf, y.is_leaf, y.requires_grad, d.requires_grad, geometry(x.grad),
                x.grad.is_meta)
    both(program)

    def program(torch):
        x = torch.empty(3, device="meta", requires_grad=True)
        (x * 2).backward()
    both(program)


def test_gradient_arguments_on_another_device():
    """Gradients across devices: ``backward(gradient)``/``autograd.grad(grad_outputs=)`` on
    another device than the output raise (a 0-d gradient is moved); a CPU leaf moved to
    meta cannot get its gradient copied back out of meta; a meta leaf cast to float64 gets a
    float32 meta gradient."""
    def program(torch):
        x = torch.empty(3, device="meta", requires_grad=True)
        (x * 2).sum().backward(torch.tensor(1.0))
        return x.grad
    both(program)
    both(lambda torch: (torch.empty(3, device="meta", requires_grad=True) * 2).backward(
        torch.ones(3)))

    def program(torch):
        x = torch.ones(3, requires_grad=True)
        return torch.autograd.grad(x * 2, x, torch.empty(3, device="meta"))
    both(program)
    both(lambda torch: torch.autograd.grad(
        torch.empty(3, device="meta", requires_grad=True).sum(), []))

    both(lambda torch: torch.ones(3, requires_grad=True).to("meta").sum().backward())

    def program(torch):
        x = torch.empty(3, device="meta", requires_grad=True)
        y = x.double()
        y.sum().backward()
        return type(y.grad_fn).__name__, x.grad
    both(program)


def test_inplace_modification_error_names_the_meta_type():
    """A saved meta tensor modified in place: torch's version error names ``MetaFloatType``."""
    def program(torch):
        x = torch.empty(3, device="meta", dtype=torch.float64, requires_grad=True)
        y = x.exp()
        y.add_(1)
        y.sum().backward()
    both(program)


def test_assigning_a_cpu_grad_to_a_meta_tensor_raises():
    """``x.grad = cpu_tensor`` for a meta ``x``: torch's device error."""
    def program(torch):
        x = torch.empty(3, device="meta", requires_grad=True)
        x.grad = torch.ones(3)
    both(program)


def test_setting_data_of_a_cpu_parameter_to_meta_raises():
    """``p.data = meta_tensor`` for a CPU Parameter: torch's incompatible-type error."""
    def program(torch):
        p = torch.nn.Parameter(torch.ones(2, 2))
        p.data = torch.empty(2, 2, device="meta")
    both(program)


# -- tensors on meta -------------------------------------------------------------------------------

def test_creation_on_meta():
    """Factories with ``device="meta"`` (tensor, arange, linspace, full, eye, ``*_like``) and
    ``x.new_empty``/``new_zeros``/``new_ones``/``new_full``/``new_tensor`` of a meta tensor."""
    def program(torch):
        m = torch.empty(2, 3, device="meta", dtype=torch.float16)
        return (torch.tensor([1, 2, 3], device="meta"), torch.tensor(2.5, device="meta"),
                torch.arange(5, device="meta"), torch.arange(0, 1, 0.25, device="meta"),
                torch.linspace(0, 1, 7, device="meta"), torch.full((2,), 7, device="meta"),
                torch.eye(3, device="meta"), torch.zeros(2, 2, dtype=torch.int8, device="meta"),
                torch.empty_like(m), torch.zeros_like(m, device="cpu"), torch.ones_like(m),
                torch.full_like(m, 3), torch.empty_strided((2, 3), (1, 2), device="meta"),
                torch.zeros_like(torch.ones(2, 2), device="meta"))
    both(program, strides=True)

    def program(torch):
        x = torch.empty(2, 3, device="meta", dtype=torch.float64)
        return (x.new_empty(4), x.new_zeros(2, 2), x.new_ones((3,), dtype=torch.int32),
                x.new_full((2,), 1.5), x.new_tensor([1, 2]), x.new_empty((0, 3)))
    both(program)


def test_meta_results_of_random_ops():
    """manual_seed then random factories on meta: shapes and dtypes, no values; they draw
    nothing, so the CPU stream after them is the one without them."""
    def program(torch):
        torch.manual_seed(0)
        x = torch.randn(3, 4, device="meta")
        out = [x, torch.rand(2, device="meta", dtype=torch.float64),
               torch.randint(0, 10, (5,), device="meta"), torch.randperm(6, device="meta"),
               torch.rand_like(x), torch.empty(3, device="meta").normal_(),
               torch.empty(3, device="meta").uniform_(-1, 1), torch.bernoulli(x),
               torch.multinomial(torch.empty(2, 5, device="meta"), 3)]
        return out, torch.randn(2).shape
    both(program)

    def program(torch):
        torch.manual_seed(7)
        plain = torch.randn(4)
        torch.manual_seed(7)
        torch.randn(100, device="meta")
        torch.empty(5, device="meta").uniform_()
        torch.nn.functional.dropout(torch.empty(8, device="meta"), 0.5)
        torch.nn.Linear(10, 10, device="meta")  # its reset_parameters draws on meta
        return torch.equal(torch.randn(4), plain)
    both(program)


def test_arithmetic_and_broadcasting_on_meta():
    """Pointwise arithmetic with broadcasting, promotion and a transposed operand."""
    def program(torch):
        a = torch.empty(4, 1, 3, device="meta")
        b = torch.empty(5, 1, device="meta", dtype=torch.float64)
        i = torch.empty(3, dtype=torch.int32, device="meta")
        m = torch.empty(3, 4, device="meta").t()
        return a + b, a * 2, i + 1, i / 2, i // 2, (i > 0), m + 1, m.exp(), torch.where(i > 0, a, 0.0)
    both(program)


def test_matmul_and_linear_algebra_on_meta():
    """matmul with batch broadcasting, mm, bmm, einsum, and a shape mismatch error."""
    def program(torch):
        a = torch.empty(2, 1, 3, 4, device="meta")
        b = torch.empty(5, 4, 6, device="meta")
        v = torch.empty(4, device="meta")
        return (a @ b, a @ v, torch.mm(a[0, 0], b[0]), torch.bmm(b.transpose(1, 2), b),
                torch.einsum("bij,bjk->bik", b.transpose(1, 2), b), torch.outer(v, v))
    both(program)


def test_reductions_on_meta():
    """sum/mean/max/argmax/var/norm/prod/cumsum: shapes, dtypes, named tuples."""
    def program(torch):
        x = torch.empty(3, 4, 5, device="meta")
        i = torch.empty(3, 4, dtype=torch.int32, device="meta")
        mx = x.max(dim=1)
        return (x.sum(), x.mean(dim=(0, 2), keepdim=True), mx, type(mx).__name__, x.argmax(-1),
                x.var(dim=0), x.norm(dim=1), i.sum(), i.prod(dim=1), x.cumsum(1), i.cumsum(0),
                x.amax(dim=(1, 2)), x.logsumexp(0), x.std(unbiased=False), i.float().mean())
    both(program)


def test_basic_indexing_on_meta():
    """Basic indexing gives views: shapes, strides, storage offsets."""
    def program(torch):
        x = torch.empty(4, 5, 6, device="meta")
        views = [x[1], x[:, ::2], x[..., None], x[1, 2], x[1:3, :, -1], x[None, :, 1]]
        return views, [v.storage_offset() for v in views], x[1, 2, 3]
    both(program, strides=True)


def test_advanced_indexing_on_meta():
    """Integer-tensor indexing, index_select, gather and setitem on meta; writing through a
    boolean mask needs no result shape, so it runs on meta."""
    def program(torch):
        x = torch.empty(4, 5, device="meta")
        idx = torch.empty(3, dtype=torch.long, device="meta")
        out = [x[idx], x[[0, 2]], x[:, idx], x[idx, idx], x.index_select(1, idx),
               x.gather(1, torch.empty(4, 2, dtype=torch.long, device="meta"))]
        x[idx] = 1.0
        x[:, 0] = torch.empty(4, device="meta")
        return out, x
    both(program)

    def program(torch):
        x = torch.empty(4, 5, device="meta")
        x[x > 0] = 0.0
        x.masked_fill_(x < 0, 1.0)
        return x
    both(program)


DATA_DEPENDENT = {
    "mask index": lambda torch, x: x[x > 0],
    "nonzero": lambda torch, x: x.nonzero(),
    "where(cond)": lambda torch, x: torch.where(x > 0),
    "masked_select": lambda torch, x: x.masked_select(x > 0),
    "argwhere": lambda torch, x: torch.argwhere(x),
    "unique": lambda torch, x: x.unique(),
    "unique_consecutive": lambda torch, x: x.unique_consecutive(),
}


@pytest.mark.parametrize("name", DATA_DEPENDENT)
def test_data_dependent_ops_on_meta_raise(name):
    """Ops whose result's shape depends on the values (boolean masks, nonzero, unique): torch
    refuses them on meta with NotImplementedError (its messages name its internals)."""
    both(lambda torch: DATA_DEPENDENT[name](torch, torch.empty(4, 5, device="meta")),
         message="type only")


def test_repeat_interleave_by_a_meta_tensor():
    """``repeat_interleave`` by a meta tensor of counts: the length is unknown without
    ``output_size``."""
    both(lambda torch: torch.empty(2, device="meta").repeat_interleave(
        torch.empty(2, dtype=torch.long, device="meta")))


def test_views_and_reshapes_on_meta():
    """view, reshape (of a transposed tensor: a copy), permute, expand, flatten, contiguous;
    ``view`` of a transposed tensor: torch's view error."""
    def program(torch):
        x = torch.empty(2, 3, 4, device="meta")
        t = x.transpose(0, 2)
        return (x.view(6, 4), x.view(-1), t.reshape(4, 6), t.contiguous(), x.permute(2, 0, 1),
                x[:, :1].expand(2, 5, 4), x.flatten(1), x.unsqueeze(1), x.unflatten(2, (2, 2)),
                x.view(torch.int32), x.view(torch.float16), x.movedim(0, -1), x.mT,
                x.unbind(1), x.narrow(2, 1, 2), x.squeeze(), t.is_contiguous())
    both(program, strides=True)

    both(lambda torch: torch.empty(2, 3, device="meta").t().view(6), message="first line")


def test_cat_stack_split_on_meta():
    """cat, stack, split, chunk, and cat's shape error."""
    def program(torch):
        a = torch.empty(2, 3, device="meta")
        b = torch.empty(4, 3, device="meta", dtype=torch.float64)
        return (torch.cat([a, b]), torch.stack([a, a], dim=1), a.split([1, 2], dim=1),
                b.chunk(3), torch.hstack([a, a]), torch.cat([a, torch.empty(0, device="meta")]))
    both(program, strides=True)

    errors_as_on_cpu(lambda torch, dev: torch.cat([torch.empty(2, 3, device=dev),
                                                   torch.empty(2, 4, device=dev)]))


def test_sort_topk_and_friends_on_meta():
    """sort, topk, argsort, unique (data-dependent: torch's error), clone, detach."""
    def program(torch):
        x = torch.empty(4, 6, device="meta")
        return (x.sort(dim=1), x.topk(2), x.argsort(0), x.clone(), x.t().clone(), x.detach(),
                x.kthvalue(2, dim=1), torch.cummax(x, 0), x.median(dim=0))
    both(program)


def test_nn_functional_on_meta():
    """softmax, losses, interpolate, conv_transpose2d, pooling, dropout, normalization."""
    def program(torch):
        F = torch.nn.functional
        with torch.device("meta"):
            x = torch.empty(2, 3, 8, 8)
            logits = torch.empty(4, 5)
            t = torch.empty(4, dtype=torch.long)
            w = torch.empty(3, 6, 3, 3)
        return (F.softmax(logits, -1), F.log_softmax(logits, 0), F.cross_entropy(logits, t),
                F.mse_loss(logits, logits, reduction="none"), F.nll_loss(logits, t, reduction="sum"),
                F.binary_cross_entropy_with_logits(logits, logits),
                F.interpolate(x, scale_factor=2, mode="nearest"),
                F.interpolate(x, size=(5, 7), mode="bilinear", align_corners=False),
                F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
                F.max_pool2d(x, 2, return_indices=True), F.avg_pool2d(x, 3, stride=2),
                F.adaptive_avg_pool2d(x, (1, 1)), F.dropout(x, 0.5), F.gelu(x),
                F.batch_norm(x, None, None, training=True), F.pad(x, (1, 2)),
                F.one_hot(t, 5), F.embedding(t, logits), F.normalize(logits),
                F.scaled_dot_product_attention(x, x, x, is_causal=True))
    both(program)


def test_inplace_ops_on_meta():
    """In-place ops on meta return self and keep its geometry; torch's in-place errors."""
    def program(torch):
        x = torch.empty(3, 4, device="meta").t()
        r = [x.add_(1) is x, x.mul_(torch.empty(4, 1, device="meta")) is x, x.clamp_(0, 1) is x,
             x.zero_() is x, x.fill_(2) is x, x.copy_(torch.empty(4, 3, device="meta")) is x,
             x.exp_() is x, x.masked_fill_(torch.empty(3, dtype=torch.bool, device="meta"), 0) is x,
             x.copy_(torch.ones(4, 3)) is x]
        return r, x, x._version > 0
    both(program, strides=True)

    errors_as_on_cpu(lambda torch, dev: torch.empty(3, device=dev, dtype=torch.long).add_(1.5))
    errors_as_on_cpu(lambda torch, dev: torch.empty(3, 1, device=dev).add_(
        torch.empty(3, 4, device=dev)))
    both(lambda torch: torch.empty(3, device="meta", requires_grad=True).add_(1))


def test_out_arguments_on_meta():
    """``out=`` with meta tensors: resized, dtype-checked; a CPU ``out`` with meta inputs raises."""
    def program(torch):
        a = torch.empty(2, 3, device="meta")
        out = torch.empty(0, device="meta")
        r = torch.add(a, 1, out=out)
        s = torch.sum(a, 1, out=torch.empty(2, device="meta"))
        mm = torch.matmul(a, a.t(), out=torch.empty(2, 2, device="meta"))
        c = torch.cat([a, a], out=torch.empty(4, 3, device="meta"))
        return r is out, out, s, mm, c
    both(program)

    errors_as_on_cpu(lambda torch, dev: torch.add(torch.empty(2, device=dev), 1.5,
                                                  out=torch.empty(2, dtype=torch.long, device=dev)))


@pytest.mark.parametrize("case", ["meta into cpu add", "cpu into meta add", "meta into cpu sum",
                                  "cpu into meta sum", "meta into cpu cat"])
def test_out_on_another_device_raises(case):
    """An ``out=`` tensor on another device than the inputs: torch's cross-device copy error."""
    def program(torch):
        m, c = torch.empty(2, 2, device="meta"), torch.ones(2, 2)
        src, out = (m, torch.empty(2)) if case.startswith("meta") else (c, torch.empty(2, device="meta"))
        if case.endswith("add"):
            return torch.add(src[0], 1, out=out)
        if case.endswith("sum"):
            return torch.sum(src, 1, out=out)
        return torch.cat([src[0]], out=out)
    both(program)


def test_complex_abs_on_meta():
    """``abs`` of a complex meta tensor is a real meta tensor."""
    both(lambda torch: torch.empty(3, device="meta", dtype=torch.complex64).abs())


# -- devices, moves, reading and printing ----------------------------------------------------------

def test_device_objects():
    """``torch.device("meta")``: its str, repr, type, index, equality, and tensors' devices."""
    def program(torch):
        d = torch.device("meta")
        x = torch.empty(2, device=d)
        return (str(d), repr(d), d.type, d.index, d == torch.device("meta"), x.device == d,
                x.device.type, x.is_meta, x.is_cpu, torch.ones(1).is_meta, x.get_device(),
                torch.device("meta") == "meta", torch.empty(1, device=d).device is not None)
    both(program)


def test_set_default_device_meta():
    """``torch.set_default_device("meta")``: factories and modules land on meta until reset."""
    def program(torch):
        torch.set_default_device("meta")
        try:
            x = torch.zeros(3)
            lin = torch.nn.Linear(2, 2)
            d = torch.get_default_device()
            cpu = torch.ones(1, device="cpu")
        finally:
            torch.set_default_device(None)  # "cpu" would leave torch's device mode on
        return x, params(lin), d, cpu.device, torch.zeros(1).device
    both(program)


def test_moving_tensors_to_and_from_meta():
    """``.to("meta")``, ``.to(device, dtype)``, dtype casts on meta; copying out raises."""
    def program(torch):
        x = torch.ones(2, 3).t()
        m = x.to("meta")
        return (m, x.to("meta", torch.float64), m.to(torch.float16), m.half(), m.long(),
                m.double().dtype, m.to(torch.device("meta")) is m, m.to("meta", copy=True) is m,
                m.type(torch.int16))
    both(program, strides=True)

    both(lambda torch: torch.empty(2, device="meta").to("cpu"))
    both(lambda torch: torch.empty(2, device="meta").cpu())


DEVICES_DIFFER = r"Tensor on device (cpu|meta) is not on the expected device (cpu|meta)!"


def test_mixing_meta_and_cpu_tensors():
    """Mixing meta and CPU tensors raises torch's device error; 0-d CPU tensors mix fine."""
    def program(torch):
        m = torch.empty(2, 3, device="meta")
        return m + torch.tensor(1.0), torch.tensor(2) * m, m.add(torch.tensor(1.0), alpha=2)
    both(program)

    both(lambda torch: torch.empty(2, 3, device="meta") + torch.ones(2, 3))
    both(lambda torch: torch.ones(2, 3) * torch.empty(2, 3, device="meta"))
    both(lambda torch: torch.cat([torch.empty(2, device="meta"), torch.ones(2)]))
    both(lambda torch: torch.stack([torch.empty(2, device="meta"), torch.ones(2)]))
    # which of the two devices torch calls "expected" depends on its kernels' argument order
    both(lambda torch: torch.nn.Linear(3, 2)(torch.empty(4, 3, device="meta")),
         message=DEVICES_DIFFER)
    both(lambda torch: torch.nn.LayerNorm(3)(torch.empty(4, 3, device="meta")),
         message=DEVICES_DIFFER)
    both(lambda torch: torch.nn.functional.cross_entropy(torch.empty(4, 3, device="meta"),
                                                         torch.tensor([0, 1, 2, 0])),
         message=DEVICES_DIFFER)
    both(lambda torch: torch.where(torch.empty(2, dtype=torch.bool, device="meta"),
                                   torch.ones(2), torch.ones(2)), message=DEVICES_DIFFER)
    both(lambda torch: torch.empty(2, 2, device="meta").masked_fill(
        torch.ones(2, 2, dtype=torch.bool), 0.0), message=DEVICES_DIFFER)


@pytest.mark.parametrize("read", ["item", "tolist", "numpy", "bool", "float", "int", "len"])
def test_reading_values_of_meta_raises(read):
    """Reading a meta tensor's values raises torch's error (or answers, where torch does)."""
    def program(torch):
        x = torch.ones(1, device="meta")
        return {"item": lambda: x.item(), "tolist": lambda: x.tolist(),
                "numpy": lambda: x.numpy(), "bool": lambda: bool(x), "float": lambda: float(x),
                "int": lambda: int(x), "len": lambda: len(x)}[read]()
    both(program)


def test_printing_meta_tensors():
    """``repr``/``str`` of meta tensors: sizes, dtypes, requires_grad, grad_fn, empty ones."""
    def program(torch):
        x = torch.empty(2, 3, device="meta")
        w = torch.empty(4, device="meta", dtype=torch.float64, requires_grad=True)
        p = torch.nn.Parameter(torch.empty(2, device="meta"))
        return [repr(x), str(x), repr(w), repr(torch.empty(0, device="meta")),
                repr(torch.ones((), device="meta", dtype=torch.long)), repr(p),
                repr(torch.empty(2, 2, device="meta", dtype=torch.int64)), x.__format__("")]
    both(program)


def test_printing_a_long_meta_repr_wraps():
    """A meta tensor's repr longer than the line width wraps its suffixes as torch does."""
    def program(torch):
        w = torch.empty(4, device="meta", dtype=torch.float64, requires_grad=True)
        return repr(w * 2), repr(torch.nn.Parameter(torch.empty(2, 3, 4, device="meta",
                                                                dtype=torch.float64)))
    both(program)


def test_type_string_of_a_meta_tensor():
    """``x.type()`` of meta tensors names the device, as torch's legacy type strings do."""
    both(lambda torch: (torch.empty(3, device="meta").type(),
                        torch.empty(3, device="meta", dtype=torch.long).type()))


# -- errors on bad arguments -----------------------------------------------------------------------

def test_shape_errors_of_linear_algebra_on_meta():
    """Layers and ops fed the wrong shapes or dtypes: the CPU path's errors."""
    errors_as_on_cpu(lambda torch, dev: torch.mm(torch.empty(2, 3, device=dev),
                                                 torch.empty(4, 5, device=dev)))
    errors_as_on_cpu(lambda torch, dev: torch.nn.Linear(3, 2, device=dev)(
        torch.empty(4, 5, device=dev)))
    errors_as_on_cpu(lambda torch, dev: torch.empty(2, 3, device=dev) @ torch.empty(2, 3, device=dev))

    errors_as_on_cpu(lambda torch, dev: torch.nn.Conv2d(3, 2, 3, device=dev)(
        torch.empty(1, 4, 5, 5, device=dev)))
    errors_as_on_cpu(lambda torch, dev: torch.empty(3, device=dev, dtype=torch.long).mean())
    both(lambda torch: torch.nn.functional.cross_entropy(
        torch.empty(4, 3, device="meta"), torch.empty(5, dtype=torch.long, device="meta")))
    both(lambda torch: torch.empty(3, device="meta")[5])
    both(lambda torch: torch.empty(3, device="meta").view(4))
    both(lambda torch: torch.zeros(3, device="meta", dtype=torch.long, requires_grad=True))


def test_batched_matmul_shape_errors_on_meta():
    """Batched matmul with both the batch and the inner sizes wrong, and with only the inner."""
    both(lambda torch: torch.empty(2, 3, 4, device="meta") @ torch.empty(3, 5, 4, device="meta"))
    errors_as_on_cpu(  # torch's meta decomposition folds the batch: "a and b must have same..."
        lambda torch, d: torch.empty(2, 3, 4, device=d) @ torch.empty(1, 5, 4, device=d))


LAX_IN_TORCH_META = {  # bad arguments torch's meta kernels do not check
    "mm of float32 by float64": lambda torch, d: torch.mm(
        torch.empty(2, 2, device=d), torch.empty(2, 2, device=d, dtype=torch.float64)),
    "conv2d of float32 by float64": lambda torch, d: torch.nn.functional.conv2d(
        torch.empty(1, 1, 3, 3, device=d), torch.empty(1, 1, 2, 2, device=d, dtype=torch.float64)),
    "softmax of int64": lambda torch, d: torch.empty(2, dtype=torch.long, device=d).softmax(0),
    "integer to a negative power": lambda torch, d: torch.ones(3, dtype=torch.long, device=d) ** -1,
    "bitwise and of float32": lambda torch, d: torch.empty(3, device=d) & 1,
    "index_select by float32": lambda torch, d: torch.empty(2, 3, device=d).index_select(
        0, torch.empty(2, device=d)),
    "max of an empty tensor": lambda torch, d: torch.empty(0, 4, device=d).max(),
}
WORDED_OTHERWISE_IN_TORCH_META = {
    "stack of unequal sizes": lambda torch, d: torch.stack([torch.empty(2, device=d),
                                                            torch.empty(3, device=d)]),
    "gather by float32": lambda torch, d: torch.empty(2, 3, device=d).gather(
        1, torch.empty(2, 3, device=d)),
    "embedding by float32": lambda torch, d: torch.nn.functional.embedding(
        torch.empty(2, device=d), torch.empty(3, 3, device=d)),
    "topk beyond the size": lambda torch, d: torch.empty(3, device=d).topk(5),
    "clamp with no bounds": lambda torch, d: torch.empty(3, device=d).clamp(),
    "argmax of an empty tensor": lambda torch, d: torch.empty(0, device=d).argmax(),
}


@pytest.mark.parametrize("name", LAX_IN_TORCH_META)
def test_bad_arguments_torch_meta_lets_through(name):
    """Bad arguments torch's meta device does not check: jtorch's meta tensors raise the CPU
    error (one meta rule checks them for every device)."""
    errors_as_on_cpu(LAX_IN_TORCH_META[name], torch_meta_checks=False)


@pytest.mark.parametrize("name", WORDED_OTHERWISE_IN_TORCH_META)
def test_bad_arguments_torch_meta_words_otherwise(name):
    """Errors torch's meta device raises in other words (or types) than its CPU device:
    jtorch's meta tensors raise the CPU error."""
    errors_as_on_cpu(WORDED_OTHERWISE_IN_TORCH_META[name])
