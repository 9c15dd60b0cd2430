"""A minGPT training step (the model of karpathy/minGPT, sized as its adder demo: 3 layers,
3 heads, 48-wide embedding, vocabulary 3, sequence 6, batch 64): forward, cross-entropy,
backward, ``clip_grad_norm_`` and AdamW, eager, each runtime in its own process (as
``train.py``'s steps). The model is written once against the torch API and bound to the
runtime's library, so both run the same code; dropout is on (train mode)."""

from __future__ import annotations

import math

import numpy as np

from ..harness import Case, register
from .train import _isolated


def gpt_model(lib, vocab: int = 3, block: int = 6, n_layer: int = 3, n_head: int = 3,
              n_embd: int = 48, dropout: float = 0.1):
    nn, F = lib.nn, lib.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = nn.Linear(n_embd, n_embd)
            self.attn_dropout = nn.Dropout(dropout)
            self.resid_dropout = nn.Dropout(dropout)
            self.register_buffer("bias", lib.tril(lib.ones(block, block)).view(1, 1, block, block))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
            q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
            v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
            att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
            att = self.attn_dropout(F.softmax(att, dim=-1))
            y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    class NewGELU(nn.Module):
        def forward(self, x):
            return 0.5 * x * (1.0 + lib.tanh(math.sqrt(2.0 / math.pi) *
                                             (x + 0.044715 * lib.pow(x, 3.0))))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(n_embd)
            self.attn = CausalSelfAttention()
            self.ln_2 = nn.LayerNorm(n_embd)
            self.mlp = nn.ModuleDict({"c_fc": nn.Linear(n_embd, 4 * n_embd),
                                      "c_proj": nn.Linear(4 * n_embd, n_embd),
                                      "act": NewGELU(), "dropout": nn.Dropout(dropout)})

        def forward(self, x):
            m = self.mlp
            x = x + self.attn(self.ln_1(x))
            return x + m.dropout(m.c_proj(m.act(m.c_fc(self.ln_2(x)))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict({
                "wte": nn.Embedding(vocab, n_embd), "wpe": nn.Embedding(block, n_embd),
                "drop": nn.Dropout(dropout), "h": nn.ModuleList([Block() for _ in range(n_layer)]),
                "ln_f": nn.LayerNorm(n_embd)})
            self.lm_head = nn.Linear(n_embd, vocab, bias=False)

        def forward(self, idx, targets):
            t = idx.size(1)
            pos = lib.arange(0, t, dtype=lib.long).unsqueeze(0)
            tr = self.transformer
            x = tr.drop(tr.wte(idx) + tr.wpe(pos))
            for blk in tr.h:
                x = blk(x)
            logits = self.lm_head(tr.ln_f(x))
            return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                           ignore_index=-1)

    return GPT()


def gpt_step(lib, batch: int, compile: bool):
    """One minGPT training step as a closure returning the loss (``step.model``: the module)."""
    rng = np.random.default_rng(0)
    x = lib.from_numpy(rng.integers(0, 3, (batch, 6)).astype(np.int64))
    y = lib.from_numpy(rng.integers(0, 3, (batch, 6)).astype(np.int64))
    lib.manual_seed(0)
    model = gpt_model(lib)
    opt = lib.optim.AdamW(model.parameters(), lr=5e-4, betas=(0.9, 0.95), weight_decay=0.1)
    fwd = lib.compile(model) if compile else model

    def step():
        _, loss = fwd(x, y)
        model.zero_grad(set_to_none=True)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return loss

    step.model = model
    return step


@register("train/gpt_block", full=(64,), quick=(64,), label="b{}")
def gpt_block(batch: int) -> Case:
    return _isolated("gpt_step", batch, kind="other", module="gpt", compile=False,
                     note="minGPT (3 layers, 3 heads, 48-wide, sequence 6): forward, "
                          "cross-entropy, backward, clip_grad_norm_, AdamW; each runtime in "
                          "its own process")
