"""Sparse COO products (memory-bound: each stored entry reads a random row of the dense
operand): a graph's adjacency (random edges, coalesced once, outside the timing) times node
features, as a GCN layer's ``torch.spmm(adj, support)`` does, forward and with the dense
operand's gradient (the transposed product); and coalescing the random edge list itself.
Target: within 1.5x torch."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..harness import Case, register
from ._util import rand, torch_only


class Graph(NamedTuple):
    """Nodes, edges (random, duplicates possible) and feature width."""

    nodes: int
    edges: int
    features: int

    def __format__(self, spec: str) -> str:
        return f"n{self.nodes}_e{self.edges}_f{self.features}"


FULL = (Graph(100_000, 1_000_000, 64),)
QUICK = (Graph(10_000, 100_000, 64),)


def _edges(g: Graph) -> tuple:
    rng = np.random.default_rng(0)
    return rng.integers(0, g.nodes, (2, g.edges)), rng.random(g.edges, dtype=np.float32)


def _bytes(g: Graph) -> float:
    """An ideal kernel's traffic: the CSR structure and values once, one dense row per entry,
    the result once."""
    return g.edges * (8 + 4 + 4 * g.features) + g.nodes * (8 + 4 * g.features)


def _adjacency(lib, g: Graph):
    idx, val = _edges(g)
    return lib.sparse_coo_tensor(lib.from_numpy(idx), lib.from_numpy(val),
                                 (g.nodes, g.nodes)).coalesce()


@register("sparse/spmm", full=FULL, quick=QUICK, label="{}")
def spmm(g: Graph) -> Case:
    """``torch.spmm(adj, x)``: (N, N) sparse @ (N, F) float32 dense."""

    def make(lib, compile):
        adj, x = _adjacency(lib, g), lib.from_numpy(rand(g.nodes, g.features))
        adj @ x
        return lambda: lib.spmm(adj, x)

    return Case(torch_only(make), kind="memory", bytes=_bytes(g), note="target: <= 1.5x torch")


@register("sparse/spmm_fwd_bwd", full=FULL, quick=QUICK, label="{}")
def spmm_fwd_bwd(g: Graph) -> Case:
    """``torch.spmm(adj, x).backward(grad)``: the product and x's gradient (adj^T @ grad)."""

    def make(lib, compile):
        adj = _adjacency(lib, g)
        x = lib.from_numpy(rand(g.nodes, g.features)).requires_grad_()
        grad = lib.from_numpy(rand(g.nodes, g.features, seed=1))

        def step():
            lib.spmm(adj, x).backward(grad)
            x.grad = None

        return step

    return Case(torch_only(make), kind="memory", bytes=2 * _bytes(g),
                note="target: <= 1.5x torch")


@register("sparse/coalesce", full=FULL, quick=QUICK, label="{}")
def coalesce(g: Graph) -> Case:
    """``sparse_coo_tensor(edges, values).coalesce()``: sort the edge list, sum duplicates."""

    def make(lib, compile):
        idx, val = _edges(g)
        i, v = lib.from_numpy(idx), lib.from_numpy(val)
        return lambda: lib.sparse_coo_tensor(i, v, (g.nodes, g.nodes)).coalesce()

    return Case(torch_only(make), kind="other", note="target: <= 1.5x torch")
