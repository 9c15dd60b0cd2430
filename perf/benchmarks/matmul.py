"""Matrix products (compute-bound: held against the measured sgemm peak)."""

from __future__ import annotations

import numpy as np

from ..harness import Case, register
from ._util import functional, rand

_CASES = {
    # name: (a shape, b shape, b is used transposed)
    "mm_1024": ((1024, 1024), (1024, 1024), False),
    "bmm_64x128": ((64, 128, 128), (64, 128, 128), False),
    "linear_4096x512x512": ((4096, 512), (512, 512), False),
    "x_wT_4096x512x512": ((4096, 512), (512, 512), True),
    "mm_256": ((256, 256), (256, 256), False),
}


def _matmul(name, quick):
    sa, sb, transposed = _CASES[name]

    @register(f"matmul/{name}", full=() if quick else (None,), quick=(None,) if quick else ())
    def case() -> Case:
        a, b = rand(*sa), rand(*sb, seed=1)
        flops = 2 * int(np.prod(sa)) * sb[-1]
        if transposed:
            return Case(functional(lambda t, x, w: x @ w.T, [a, b], numpy=lambda x, w: x @ w.T),
                        kind="compute", flops=flops)
        return Case(functional(lambda t, x, y: x @ y, [a, b], numpy=np.matmul),
                    kind="compute", flops=flops)


for _n in _CASES:
    _matmul(_n, _n == "mm_256")
