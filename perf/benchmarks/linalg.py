"""Dense linear algebra (jtorch.linalg: LAPACK called from compiled loops): one 512x512 float32
matrix, where the threaded LAPACK/BLAS carries the work, and a batch of 64 matrices of 64x64,
where one LAPACK call per matrix runs in parallel over the batch. Inputs are well conditioned
(symmetric positive definite for cholesky and eigh). Flops are the usual LAPACK counts.
Target: within 1.3x torch."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..harness import Case, register
from ._util import functional, rand


class Mats(NamedTuple):
    """``batch`` square matrices of side ``n`` (batch 0: one plain 2-D matrix)."""

    batch: int
    n: int

    @property
    def shape(self) -> tuple:
        return (self.batch, self.n) if self.batch else (self.n,)

    def __format__(self, spec: str) -> str:
        return f"{self.batch}x{self.n}x{self.n}" if self.batch else f"{self.n}x{self.n}"


FULL = (Mats(0, 512), Mats(64, 64))
QUICK = (Mats(0, 128), Mats(16, 32))


def _square(shape: tuple, seed: int = 0) -> np.ndarray:
    """A well-conditioned general matrix (batch): n * I plus standard normal noise."""
    n = shape[-1]
    return rand(*shape[:-1], n, n, seed=seed) + np.float32(n) * np.eye(n, dtype=np.float32)


def _spd(shape: tuple) -> np.ndarray:
    """A symmetric positive definite matrix (batch): a a^T / n + I."""
    n = shape[-1]
    a = rand(*shape[:-1], n, n)
    return (a @ np.swapaxes(a, -1, -2) / np.float32(n) + np.eye(n, dtype=np.float32)).astype(
        np.float32)


def _count(shape: tuple) -> int:
    return math.prod(shape[:-1])


def _case(fn, arrays, numpy, flops_per_matrix: float, shape: tuple) -> Case:
    return Case(functional(fn, arrays, numpy=numpy), kind="compute",
                flops=_count(shape) * flops_per_matrix, note="target: <= 1.3x torch")


@register("linalg/solve", full=FULL, quick=QUICK, label="{}")
def solve(m: Mats) -> Case:
    """``torch.linalg.solve(a, b)``: a (.., n, n), b (.., n, n) float32."""
    shape = m.shape
    n = shape[-1]
    return _case(lambda lib, a, b: lib.linalg.solve(a, b),
                 [_square(shape), rand(*shape[:-1], n, n, seed=1)], np.linalg.solve,
                 2 / 3 * n**3 + 2 * n**3, shape)


@register("linalg/inv", full=FULL, quick=QUICK, label="{}")
def inv(m: Mats) -> Case:
    """``torch.linalg.inv(a)``: a (.., n, n) float32."""
    shape = m.shape
    n = shape[-1]
    return _case(lambda lib, a: lib.linalg.inv(a), [_square(shape)], np.linalg.inv, 2 * n**3,
                 shape)


@register("linalg/cholesky", full=FULL, quick=QUICK, label="{}")
def cholesky(m: Mats) -> Case:
    """``torch.linalg.cholesky(a)``: a (.., n, n) float32, symmetric positive definite."""
    shape = m.shape
    n = shape[-1]
    return _case(lambda lib, a: lib.linalg.cholesky(a), [_spd(shape)], np.linalg.cholesky,
                 n**3 / 3, shape)


@register("linalg/svd", full=FULL, quick=QUICK, label="{}")
def svd(m: Mats) -> Case:
    """``torch.linalg.svd(a, full_matrices=False)``: a (.., n, n) float32."""
    shape = m.shape
    n = shape[-1]
    return _case(lambda lib, a: lib.linalg.svd(a, full_matrices=False), [rand(*shape, shape[-1])],
                 lambda a: np.linalg.svd(a, full_matrices=False), 22 * n**3, shape)


@register("linalg/eigh", full=FULL, quick=QUICK, label="{}")
def eigh(m: Mats) -> Case:
    """``torch.linalg.eigh(a)``: a (.., n, n) float32, symmetric."""
    shape = m.shape
    n = shape[-1]
    return _case(lambda lib, a: lib.linalg.eigh(a), [_spd(shape)], np.linalg.eigh, 9 * n**3,
                 shape)


@register("linalg/qr", full=FULL, quick=QUICK, label="{}")
def qr(m: Mats) -> Case:
    """``torch.linalg.qr(a)``: a (.., n, n) float32, reduced Q and R."""
    shape = m.shape
    n = shape[-1]
    return _case(lambda lib, a: lib.linalg.qr(a), [rand(*shape, shape[-1])], np.linalg.qr,
                 8 / 3 * n**3, shape)


@register("linalg/det", full=FULL, quick=QUICK, label="{}")
def det(m: Mats) -> Case:
    """``torch.linalg.det(a)``: a (.., n, n) float32."""
    shape = m.shape
    n = shape[-1]
    return _case(lambda lib, a: lib.linalg.det(a), [_square(shape)], np.linalg.det,
                 2 / 3 * n**3, shape)
