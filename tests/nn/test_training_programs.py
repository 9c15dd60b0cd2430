"""Ordinary torch training programs run under ``jtorch`` and ``torch`` from the same initial
weights and data: the loss trajectories and final parameters agree."""

from __future__ import annotations

import numpy as np
import torch

import jtorch


def _sync(jm, tm) -> None:
    """torch module takes the jtorch module's initial parameters and buffers."""
    tm.load_state_dict({k: torch.from_numpy(np.array(v.numpy()))
                        for k, v in jm.state_dict().items()})


def _run(build, data, steps: int, make_opt, loss_fn, make_sched=None, clip=None):
    out = []
    jm, tm = build(jtorch), build(torch)
    _sync(jm, tm)
    for m, model in ((jtorch, jm), (torch, tm)):
        opt = make_opt(m, model)
        sched = make_sched(m, opt) if make_sched else None
        losses = []
        for i in range(steps):
            x, y = (m.from_numpy(a.copy()) for a in data(i))
            opt.zero_grad()
            loss = loss_fn(m, model(x), y)
            loss.backward()
            if clip:
                m.nn.utils.clip_grad_norm_(model.parameters(), clip)
            opt.step()
            if sched:
                sched.step()
            losses.append(loss.item())
        out.append((losses, {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}))
    (jl, jp), (tl, tp) = out
    np.testing.assert_allclose(jl, tl, rtol=1e-4, atol=1e-6)
    for k in tp:
        np.testing.assert_allclose(jp[k], tp[k], rtol=1e-3, atol=1e-5, err_msg=k)


RNG = np.random.default_rng(0)


def test_mlp_regression_sgd_momentum_nesterov():
    X, W = RNG.standard_normal((8, 32, 10)).astype(np.float32), RNG.standard_normal((10, 1))
    _run(lambda m: m.nn.Sequential(m.nn.Linear(10, 16), m.nn.Tanh(), m.nn.Linear(16, 1)),
         lambda i: (X[i % 8], (X[i % 8] @ W).astype(np.float32)), 20,
         lambda m, mod: m.optim.SGD(mod.parameters(), lr=0.05, momentum=0.9, nesterov=True,
                                    weight_decay=1e-4),
         lambda m, out, y: m.nn.functional.mse_loss(out, y))


def test_cnn_classifier_adam_batchnorm_steplr():
    X = RNG.standard_normal((6, 16, 1, 8, 8)).astype(np.float32)
    Y = RNG.integers(0, 4, (6, 16))

    def build(m):
        nn = m.nn
        # no conv bias before BatchNorm: its gradient is rounding noise that Adam would amplify
        return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1, bias=False), nn.BatchNorm2d(4),
                             nn.ReLU(),
                             nn.MaxPool2d(2), nn.Conv2d(4, 8, 3), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))

    _run(build, lambda i: (X[i % 6], Y[i % 6]), 12,
         lambda m, mod: m.optim.Adam(mod.parameters(), lr=1e-2),
         lambda m, out, y: m.nn.functional.cross_entropy(out, y, label_smoothing=0.1),
         make_sched=lambda m, opt: m.optim.lr_scheduler.StepLR(opt, 4, gamma=0.5))


def test_lstm_sequence_model_adamw_clipping():
    X = RNG.standard_normal((5, 4, 7, 3)).astype(np.float32)
    Y = RNG.standard_normal((5, 4, 2)).astype(np.float32)

    def build(m):
        class Seq(m.nn.Module):
            def __init__(self):
                super().__init__()
                self.rnn = m.nn.LSTM(3, 8, batch_first=True, num_layers=2)
                self.head = m.nn.Linear(8, 2)

            def forward(self, x):
                out, (h, c) = self.rnn(x)
                return self.head(out[:, -1])

        return Seq()

    _run(build, lambda i: (X[i % 5], Y[i % 5]), 10,
         lambda m, mod: m.optim.AdamW(mod.parameters(), lr=5e-3, weight_decay=0.01),
         lambda m, out, y: m.nn.functional.smooth_l1_loss(out, y), clip=0.5)


def test_transformer_encoder_sgd():
    X = RNG.standard_normal((4, 2, 5, 8)).astype(np.float32)
    Y = RNG.integers(0, 3, (4, 2))

    def build(m):
        class Enc(m.nn.Module):
            def __init__(self):
                super().__init__()
                layer = m.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                                     batch_first=True)
                self.enc = m.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
                self.head = m.nn.Linear(8, 3)

            def forward(self, x):
                return self.head(self.enc(x).mean(1))

        return Enc()

    _run(build, lambda i: (X[i % 4], Y[i % 4]), 8,
         # (the key bias's gradient is exactly zero in exact arithmetic: adaptive optimizers
         # would turn its rounding noise into full-size steps, differently in each library)
         lambda m, mod: m.optim.SGD(mod.parameters(), lr=0.05, momentum=0.5),
         lambda m, out, y: m.nn.functional.cross_entropy(out, y))
