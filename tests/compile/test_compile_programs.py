"""Programs written as a torch user would, compiled and compared with eager execution:
a training step with its optimizer, compiled modules, a transformer block, pytrees,
module modes, a generation loop."""

from __future__ import annotations

import copy
import math

import jtorch as torch
import jtorch.nn.functional as F
from jtorch import nn


def close(a, b, tol=1e-5):
    return (a - b).abs().max().item() <= tol * (1 + b.abs().max().item())


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(1, 6, 5, padding=2)
        self.c2 = nn.Conv2d(6, 16, 5)
        self.f1 = nn.Linear(16 * 5 * 5, 120)
        self.f2 = nn.Linear(120, 84)
        self.f3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        x = torch.flatten(x, 1)
        return self.f3(F.relu(self.f2(F.relu(self.f1(x)))))


def test_train_step_with_the_optimizer_inside():
    """CNN training step with optimizer inside the compiled function"""
    torch.manual_seed(0)
    m1 = LeNet()
    m2 = copy.deepcopy(m1)
    o1 = torch.optim.SGD(m1.parameters(), lr=0.1, momentum=0.9)
    o2 = torch.optim.SGD(m2.parameters(), lr=0.1, momentum=0.9)

    def step(m, o, x, y):
        o.zero_grad()
        loss = F.cross_entropy(m(x), y)
        loss.backward()
        o.step()
        return loss

    cstep = torch.compile(step)
    for i in range(3):
        x = torch.randn(8, 1, 28, 28)
        y = torch.randint(0, 10, (8,))
        l1 = cstep(m1, o1, x, y)
        l2 = step(m2, o2, x, y)
        assert close(l1, l2), (l1, l2)
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        assert close(p1, p2, 1e-4)


def test_compiled_module_eager_backward_and_adam():
    """compiled module forward + eager backward/optimizer"""
    m1 = LeNet()
    m2 = copy.deepcopy(m1)
    cm = torch.compile(m1)
    o1 = torch.optim.Adam(m1.parameters(), 1e-3)
    o2 = torch.optim.Adam(m2.parameters(), 1e-3)
    for i in range(3):
        x = torch.randn(4, 1, 28, 28)
        y = torch.randint(0, 10, (4,))
        for m, o in ((cm, o1), (m2, o2)):
            o.zero_grad()
            F.cross_entropy(m(x), y).backward()
            o.step()
    for p1, p2 in zip(m1.parameters(), m2.parameters()):
        assert close(p1, p2, 1e-4), (p1 - p2).abs().max()


def test_transformer_block_over_growing_lengths():
    """a small transformer block"""

    class Block(nn.Module):
        def __init__(self, d=32, h=4):
            super().__init__()
            self.ln1 = nn.LayerNorm(d)
            self.ln2 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
            self.h = h

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(C, dim=2)
            q = q.view(B, T, self.h, C // self.h).transpose(1, 2)
            k = k.view(B, T, self.h, C // self.h).transpose(1, 2)
            v = v.view(B, T, self.h, C // self.h).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            mask = torch.tril(torch.ones(T, T)).view(1, 1, T, T)
            att = att.masked_fill(mask == 0, float("-inf")).softmax(dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            x = x + self.proj(y)
            return x + self.mlp(self.ln2(x))

    b = Block().eval()
    cb = torch.compile(b)
    for T in (8, 9, 10, 12):
        x = torch.randn(2, T, 32)
        assert close(cb(x), b(x)), T
    assert len(cb._compiled.entries) == 2 and cb._compiled.mask == {0: {1}}  # T is dynamic
    f = torch.compile(lambda q: F.scaled_dot_product_attention(q, q, q, is_causal=True))
    q = torch.randn(1, 2, 4, 8)
    assert close(f(q), F.scaled_dot_product_attention(q, q, q, is_causal=True))


def test_pytree_arguments_and_results():
    """functions with kwargs, lists, dicts, python scalars"""

    @torch.compile
    def g(xs, *, scale=1.0, opts=None):
        out = {"sum": sum(x * scale for x in xs), "n": len(xs)}
        if opts and opts.get("relu"):
            out["sum"] = out["sum"].relu()
        return out

    xs = [torch.randn(3) for _ in range(3)]
    r = g(xs, scale=2.0, opts={"relu": True})
    assert close(r["sum"], sum(x * 2.0 for x in xs).relu()) and r["n"] == 3
    r = g(xs, scale=3.0)
    assert close(r["sum"], sum(x * 3.0 for x in xs))


def test_batchnorm_and_dropout_modes():
    """BatchNorm train/eval switching, dropout in eval"""
    net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Dropout(0.5))
    ref = copy.deepcopy(net)
    cn = torch.compile(net)
    x = torch.randn(2, 3, 8, 8)
    net.eval()
    ref.eval()
    assert close(cn(x), ref(x))
    net.train()
    ref.train()
    torch.manual_seed(1)
    a = cn(x)
    torch.manual_seed(1)
    b2 = ref(x)
    assert close(a, b2)
    assert close(net[1].running_mean, ref[1].running_mean)


def test_generation_loop_with_a_growing_sequence():
    """generation loop with growing sequence (dynamic)"""
    emb = nn.Embedding(20, 8)
    head = nn.Linear(8, 20)

    @torch.compile
    def logits(idx):
        return head(emb(idx)).mean(1)

    idx = torch.randint(0, 20, (1, 3))
    for _ in range(6):
        l = logits(idx)
        nxt = l.argmax(-1, keepdim=True)
        idx = torch.cat([idx, nxt], 1)
        assert close(l, head(emb(idx[:, :-1])).mean(1))
    assert len(logits.entries) <= 3 and logits.mask == {0: {1}}
