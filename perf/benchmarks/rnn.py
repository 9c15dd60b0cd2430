"""Recurrent models: an eager training step of the word language model of pytorch/examples
(``word_language_model``): Embedding(1000, 64) -> Dropout(0.2) -> LSTM(64, 64, 2 layers,
dropout 0.2) -> Dropout -> Linear(64, 1000), batch 20, bptt 35, cross-entropy, the hidden state
detached each step, backward, ``clip_grad_norm_(0.25)`` and the example's manual SGD
(``p.data.add_(p.grad, alpha=-lr)``).

Each runtime times its steps in a fresh process that imports one library only (as
``train.py``'s cases, for the same reason: jtorch next to torch's OpenMP takes another thread
pool). Before anything is timed, both libraries run a few steps from the same weights and
data with dropout off, each in its own process, and jtorch's losses and final parameters must
match torch's to float32 rounding: a wrong step is not timed."""

from __future__ import annotations

import numpy as np

from ..harness import Case, Skip, register
from ._util import _REPO, run_python

NTOKEN, NINP, NHID, NLAYERS, BPTT, BATCH, LR = 1000, 64, 64, 2, 35, 20, 20.0


def lstm_lm(lib, dropout: float = 0.2):
    """The training step (a closure returning the loss) of the word language model, with
    weights drawn from NumPy (the same in every library) and fixed data."""
    nn = lib.nn

    class RNNModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(NTOKEN, NINP)
            self.rnn = nn.LSTM(NINP, NHID, NLAYERS, dropout=dropout)
            self.decoder = nn.Linear(NHID, NTOKEN)

        def forward(self, inp, hidden):
            emb = self.drop(self.encoder(inp))
            out, hidden = self.rnn(emb, hidden)
            return self.decoder(self.drop(out)).view(-1, NTOKEN), hidden

    lib.manual_seed(0)
    model = RNNModel()
    rng = np.random.default_rng(0)
    with lib.no_grad():
        for _, p in model.named_parameters():
            p.copy_(lib.from_numpy(rng.uniform(-0.1, 0.1, tuple(p.shape)).astype(np.float32)))
    crit = nn.CrossEntropyLoss()
    data = lib.from_numpy(rng.integers(0, NTOKEN, (BPTT, BATCH)))
    target = lib.from_numpy(rng.integers(0, NTOKEN, (BPTT * BATCH,)))
    state = [(lib.zeros(NLAYERS, BATCH, NHID), lib.zeros(NLAYERS, BATCH, NHID))]

    def step():
        hidden = tuple(h.detach() for h in state[0])
        model.zero_grad()
        out, hidden = model(data, hidden)
        state[0] = hidden
        loss = crit(out, target)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-LR)
        return loss

    step.model = model
    return step


_CHECK = """
import json, sys
sys.path.insert(0, {repo!r})
import {lib} as lib
from perf.benchmarks import rnn
step = rnn.lstm_lm(lib, dropout=0.0)
losses = [step().item() for _ in range(3)]
params = {{n: p.detach().numpy().tolist() for n, p in step.model.named_parameters()
          if n.startswith("rnn.")}}
print(json.dumps({{"losses": losses, "params": params}}))
"""

_STEPS = """
import json, sys, time
sys.path.insert(0, {repo!r})
import numpy as np
import {lib} as lib
from perf.benchmarks import rnn
step = rnn.lstm_lm(lib)
for _ in range({warm}):
    step()
times = []
for _ in range({steps}):
    t0 = time.perf_counter()
    step()
    times.append(time.perf_counter() - t0)
print(json.dumps({{"value": float(np.median(times))}}))
"""


def check_against_torch() -> None:
    """Three dropout-free steps in each library from the same weights and data: the losses and
    the LSTM's parameters after them must agree (float32 rounding over a few steps)."""
    got = run_python(_CHECK.format(repo=_REPO, lib="jtorch"))
    want = run_python(_CHECK.format(repo=_REPO, lib="torch"))
    if not np.allclose(got["losses"], want["losses"], rtol=1e-4, atol=1e-5):
        raise AssertionError(f"jtorch losses {got['losses']} differ from torch's {want['losses']}")
    for name, w in want["params"].items():
        a, b = np.asarray(got["params"][name]), np.asarray(w)
        if not np.allclose(a, b, rtol=1e-3, atol=1e-4):
            raise AssertionError(f"after 3 steps, jtorch's {name} differs from torch's by up to "
                                 f"{float(np.max(np.abs(a - b))):.3g}")


@register("train/lstm_lm", full=(None,), quick=(None,))
def lstm_lm_case() -> Case:
    def make(rt):
        if rt.name == "numpy" or rt.compile:
            raise Skip("eager jtorch and torch only")
        if rt.name == "jtorch":
            check_against_torch()
        code = _STEPS.format(repo=_REPO, lib=rt.name, warm=5, steps=30)
        return lambda: run_python(code)["value"]

    return Case(make, self_timed=True, warm=False, rounds=1, kind="other",
                note="word_language_model LSTM LM (2x64, bptt 35, batch 20), cross-entropy, "
                     "clip_grad_norm_, manual SGD; each runtime in its own process; jtorch's "
                     "losses checked against torch's first")
