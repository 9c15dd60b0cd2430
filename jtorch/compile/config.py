"""``jtorch.compiler.config``: the compiler's settings (torch._dynamo.config's names)."""

from __future__ import annotations

from .. import _flags


class _Config:
    def __init__(self) -> None:
        self.recompile_limit = 8  # guard keys per function before it runs eagerly
        self.fail_on_recompile_limit_hit = False
        self.cache_dir = _flags.CACHE_DIR  # generated kernels (the fusion backend)
        self.automatic_dynamic_shapes = True
        self.assume_static_by_default = True
        # matmul epilogues: each thread multiplies its rows with BLAS held serial, then runs
        # the epilogue on them (one pass over the product fewer). Off: BLAS's own threads
        # (spinning after each call) and Numba's fight over the cores when a graph mixes
        # both, which every model does: an MLP's forward ran 2x slower with it.
        self.gemm_row_split = False

    @property
    def cache_size_limit(self) -> int:  # torch's older name
        return self.recompile_limit

    @cache_size_limit.setter
    def cache_size_limit(self, v: int) -> None:
        self.recompile_limit = v

    def __repr__(self) -> str:
        return "config(" + ", ".join(f"{k}={v!r}" for k, v in vars(self).items()) + ")"


config = _Config()
