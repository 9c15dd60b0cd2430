"""pytorch/examples' GCN (gcn/main.py) run unchanged under ``import jtorch as torch``: its data
preparation (sparse scaling of the features, the adjacency from an int32 edge list with
duplicate edges, the renormalised adjacency D^-1/2 (I + A) D^-1/2) and its model (torch.mm of
the sparse features, torch.spmm of the sparse adjacency), against torch with the same
weights: the prepared tensors, the loss, and the gradients of both layers' kernels, over a
few Adam steps."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from helpers import same

import jtorch

pytestmark = pytest.mark.filterwarnings("ignore:Sparse (invariant|CSR)")


def load_cora(torch, content_tensor, cites_tensor):
    """gcn/main.py's load_cora, from the arrays it reads from cora.content and cora.cites (its
    code as written there, whatever the linter thinks of it)."""
    features = torch.FloatTensor(content_tensor[:, 1:-1].astype(np.int32))
    scale_vector = torch.sum(features, dim=1)
    scale_vector = 1 / scale_vector
    scale_vector[scale_vector == float('inf')] = 0
    scale_vector = torch.diag(scale_vector).to_sparse()
    features = scale_vector @ features

    classes, labels = np.unique(content_tensor[:, -1], return_inverse=True)  # noqa: RUF059
    labels = torch.LongTensor(labels)

    idx = content_tensor[:, 0].astype(np.int32)
    idx_map = {id: pos for pos, id in enumerate(idx)}
    edges = np.array(list(map(lambda edge: [idx_map[edge[0]], idx_map[edge[1]]],  # noqa: C417
                              cites_tensor)), dtype=np.int32)

    V = len(idx)
    E = edges.shape[0]
    adj_mat = torch.sparse_coo_tensor(edges.T, torch.ones(E), (V, V), dtype=torch.int64)
    adj_mat = torch.eye(V) + adj_mat

    degree_mat = torch.sum(adj_mat, dim=1)
    degree_mat = torch.sqrt(1 / degree_mat)
    degree_mat[degree_mat == float('inf')] = 0
    degree_mat = torch.diag(degree_mat).to_sparse()

    adj_mat = degree_mat @ adj_mat @ degree_mat
    device = "cpu"
    return features.to_sparse().to(device), labels.to(device), adj_mat.to_sparse().to(device)


def gcn(torch, weights):
    """gcn/main.py's GraphConv and GCN (dropout off: the two libraries draw differently)."""
    nn, F = torch.nn, torch.nn.functional

    class GraphConv(nn.Module):
        def __init__(self, input_dim, output_dim, use_bias=False):
            super().__init__()
            self.kernel = nn.Parameter(torch.Tensor(input_dim, output_dim))
            nn.init.xavier_normal_(self.kernel)
            self.bias = None
            if use_bias:
                self.bias = nn.Parameter(torch.Tensor(output_dim))
                nn.init.zeros_(self.bias)

        def forward(self, input_tensor, adj_mat):
            support = torch.mm(input_tensor, self.kernel)
            output = torch.spmm(adj_mat, support)
            if self.bias is not None:
                output = output + self.bias
            return output

    class GCN(nn.Module):
        def __init__(self, input_dim, hidden_dim, output_dim, use_bias=True, dropout_p=0.1):
            super().__init__()
            self.gc1 = GraphConv(input_dim, hidden_dim, use_bias=use_bias)
            self.gc2 = GraphConv(hidden_dim, output_dim, use_bias=use_bias)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, input_tensor, adj_mat):
            x = self.gc1(input_tensor, adj_mat)
            x = F.relu(x)
            x = self.dropout(x)
            x = self.gc2(x, adj_mat)
            return F.log_softmax(x, dim=1)

    model = GCN(weights[0].shape[0], weights[0].shape[1], weights[1].shape[1], True, 0.0)
    with torch.no_grad():
        model.gc1.kernel.copy_(torch.tensor(weights[0]))
        model.gc2.kernel.copy_(torch.tensor(weights[1]))
    return model


def _dataset(nodes=120, feats=40, classes=4, edges=500, seed=0):
    """cora.content / cora.cites stand-ins: string rows (id, binary features, class name),
    int32 citation pairs of ids (some repeated, one node with no features)."""
    rng = np.random.default_rng(seed)
    ids = rng.permutation(10 * nodes)[:nodes] + 1000
    x = (rng.random((nodes, feats)) < 0.1).astype(np.int32)
    x[5] = 0
    names = np.array(["Theory", "Neural_Networks", "Rule_Learning", "Genetic"])[
        rng.integers(0, classes, nodes)]
    content = np.concatenate([ids[:, None].astype(str), x.astype(str), names[:, None]], 1)
    cites = ids[rng.integers(0, nodes, (edges, 2))].astype(np.int32)
    cites[-10:] = cites[:10]  # duplicate citations
    weights = (rng.standard_normal((feats, 16)).astype(np.float32) * 0.3,
               rng.standard_normal((16, classes)).astype(np.float32) * 0.3)
    return content, cites, weights


def _train(lib, steps=3):
    content, cites, weights = _dataset()
    features, labels, adj = load_cora(lib, content, cites)
    model = gcn(lib, weights)
    opt = lib.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    criterion = lib.nn.NLLLoss()
    mask = lib.tensor(np.arange(0, 120, 3))
    losses, grads = [], []
    for _ in range(steps):
        model.train()
        opt.zero_grad()
        out = model(features, adj)
        loss = criterion(out[mask], labels[mask])
        loss.backward()
        losses.append(loss.detach())
        grads.append((model.gc1.kernel.grad.clone(), model.gc2.kernel.grad.clone(),
                      model.gc2.bias.grad.clone()))
        opt.step()
    model.eval()
    with lib.no_grad():
        acc = (model(features, adj).argmax(dim=1) == labels).float().sum() / len(labels)
    return (features, labels, adj), losses, grads, acc


def test_gcn_runs_unchanged_and_matches_torch():
    (jf, jl, ja), jloss, jgrads, jacc = _train(jtorch)
    (tf, tl, ta), tloss, tgrads, tacc = _train(torch)
    assert jf.is_sparse and ja.is_sparse and jf.is_coalesced() and ja.is_coalesced()
    same(jf._indices(), tf._indices())
    same(ja._indices(), ta._indices())
    same(jf._values(), tf._values(), rtol=1e-6)
    same(ja._values(), ta._values(), rtol=1e-6)
    same(jl, tl)
    for j, t in zip(jloss, tloss):
        same(j, t, rtol=1e-5)
    for jg, tg in zip(jgrads, tgrads):
        for a, b in zip(jg, tg):
            same(a, b, rtol=1e-4, atol=1e-7)
    same(jacc, tacc, rtol=1e-6)
