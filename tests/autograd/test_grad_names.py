"""grad_fn node names of common ops match torch's (``type(out.grad_fn).__name__``)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import jtorch

# name -> f(T, x, y) with x, y float64 (3, 4) leaves; T is torch or jtorch
CASES = {
    "add": lambda T, x, y: x + y,
    "sub": lambda T, x, y: x - y,
    "rsub": lambda T, x, y: 1 - x,
    "mul": lambda T, x, y: x * y,
    "div": lambda T, x, y: x / y,
    "neg": lambda T, x, y: -x,
    "pow": lambda T, x, y: x ** 2,
    "exp": lambda T, x, y: x.exp(),
    "log": lambda T, x, y: x.abs().log(),
    "sin": lambda T, x, y: x.sin(),
    "tanh": lambda T, x, y: x.tanh(),
    "sigmoid": lambda T, x, y: x.sigmoid(),
    "relu": lambda T, x, y: T.nn.functional.relu(x),
    "gelu": lambda T, x, y: T.nn.functional.gelu(x),
    "abs": lambda T, x, y: x.abs(),
    "sqrt": lambda T, x, y: x.abs().sqrt(),
    "clamp": lambda T, x, y: x.clamp(-0.5, 0.5),
    "where": lambda T, x, y: T.where(x > 0, x, y),
    "maximum": lambda T, x, y: T.maximum(x, y),
    "masked_fill": lambda T, x, y: x.masked_fill(x > 0, 0.0),
    "softmax": lambda T, x, y: x.softmax(1),
    "log_softmax": lambda T, x, y: x.log_softmax(1),
    "sum": lambda T, x, y: x.sum(),
    "sum_dim": lambda T, x, y: x.sum(1),
    "mean": lambda T, x, y: x.mean(),
    "mean_dim": lambda T, x, y: x.mean(1),
    "max": lambda T, x, y: x.max(),
    "max_dim": lambda T, x, y: x.max(1).values,
    "var": lambda T, x, y: x.var(),
    "std_dim": lambda T, x, y: x.std(1),
    "norm": lambda T, x, y: x.norm(),
    "cumsum": lambda T, x, y: x.cumsum(1),
    "matmul": lambda T, x, y: x @ y.mT,
    "mm": lambda T, x, y: x.mm(y.mT),
    "bmm": lambda T, x, y: x.unsqueeze(0).bmm(y.mT.unsqueeze(0)),
    "linear": lambda T, x, y: T.nn.functional.linear(x, y),
    "t": lambda T, x, y: x.t(),
    "t_1d": lambda T, x, y: x[0].t(),
    "T": lambda T, x, y: x.T,
    "mT": lambda T, x, y: x.mT,
    "H": lambda T, x, y: x.H,
    "transpose": lambda T, x, y: x.transpose(0, 1),
    "swapaxes": lambda T, x, y: x.swapaxes(0, 1),
    "permute": lambda T, x, y: x.permute(1, 0),
    "movedim": lambda T, x, y: x.movedim(0, 1),
    "view": lambda T, x, y: x.view(-1),
    "reshape": lambda T, x, y: x.reshape(-1),
    "flatten": lambda T, x, y: x.flatten(),
    "unsqueeze": lambda T, x, y: x.unsqueeze(0),
    "squeeze": lambda T, x, y: x.unsqueeze(0).squeeze(0),
    "expand": lambda T, x, y: x[:1].expand(3, 4),
    "getitem": lambda T, x, y: x[0],
    "slice": lambda T, x, y: x[:, 1:],
    "index": lambda T, x, y: x[T.tensor([0, 2])],
    "narrow": lambda T, x, y: x.narrow(1, 0, 2),
    "select": lambda T, x, y: x.select(0, 1),
    "chunk": lambda T, x, y: x.chunk(2, 1)[0],
    "split": lambda T, x, y: x.split(2, 1)[0],
    "unbind": lambda T, x, y: x.unbind(0)[0],
    "cat": lambda T, x, y: T.cat([x, y]),
    "stack": lambda T, x, y: T.stack([x, y]),
    "stack_dim": lambda T, x, y: T.stack([x, y], -1),
    "hstack": lambda T, x, y: T.hstack([x, y]),
    "vstack": lambda T, x, y: T.vstack([x, y]),
    "index_select": lambda T, x, y: x.index_select(0, T.tensor([0, 2])),
    "gather": lambda T, x, y: x.gather(1, T.tensor([[0], [1], [2]])),
    "flip": lambda T, x, y: x.flip(0),
    "repeat": lambda T, x, y: x.repeat(2, 1),
    "clone": lambda T, x, y: x.clone(),
    "contiguous": lambda T, x, y: x.t().contiguous(),
    "to_dtype": lambda T, x, y: x.to(T.float32),
    "layer_norm": lambda T, x, y: T.nn.functional.layer_norm(x, (4,)),
    "embedding": lambda T, x, y: T.nn.functional.embedding(T.tensor([0, 2]), x),
}


def _leaves(T):
    rng = np.random.default_rng(0)
    return [T.tensor(rng.standard_normal((3, 4)), requires_grad=True) for _ in range(2)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_grad_fn_name_matches_torch(name):
    t_out = CASES[name](torch, *_leaves(torch))
    j_out = CASES[name](jtorch, *_leaves(jtorch))
    assert type(j_out.grad_fn).__name__ == type(t_out.grad_fn).__name__
    assert j_out.grad_fn.name() == t_out.grad_fn.name()


def test_stack_node_points_at_its_inputs():
    """StackBackward0's edges are the stacked tensors themselves, as in torch."""
    x, y = _leaves(jtorch)
    out = jtorch.stack([x, y * 2], 1)
    (ex, _), (ey, _) = out.grad_fn.next_functions
    assert type(ex).__name__ == "AccumulateGrad" and type(ey).__name__ == "MulBackward0"
    tx, ty = _leaves(torch)
    g = np.random.default_rng(1).standard_normal((3, 2, 4))
    (out * jtorch.tensor(g)).sum().backward()
    (torch.stack([tx, ty * 2], 1) * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy())
