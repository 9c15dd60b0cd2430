"""Resampling vs torch: bilinear interpolate x2 forward and forward+backward on
(16, 32, 64, 64) float32 (target within 1.2x of torch), plus nearest x2 and reflect padding.

Run: python perf/bench_resample.py
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as TF

import jtorch
import jtorch.nn.functional as JF
from _harness import measure, report


def _fwd_bwd(F, x, g, **kw):
    def run():
        x.grad = None
        F.interpolate(x, **kw).backward(g)
    return run


def main() -> None:
    rng = np.random.default_rng(0)
    shape = (16, 32, 64, 64)
    a = rng.standard_normal(shape, dtype=np.float32)
    jx, tx = jtorch.from_numpy(a), torch.from_numpy(a)
    nbytes = a.nbytes * 5  # read 1x, write 4x
    for kw, what in [({"scale_factor": 2, "mode": "bilinear", "align_corners": False},
                      "bilinear x2"), ({"scale_factor": 2, "mode": "nearest"}, "nearest x2")]:
        res = measure({"jtorch": lambda: JF.interpolate(jx, **kw),
                       "torch": lambda: TF.interpolate(tx, **kw)})
        report(f"interpolate {what} forward {shape} float32", res, "torch",
               {k: f"{nbytes / v / 1e9:.1f} GB/s" for k, v in res.items()})
    kw = {"scale_factor": 2, "mode": "bilinear", "align_corners": False}
    g = rng.standard_normal((16, 32, 128, 128), dtype=np.float32)
    jg, tg = jtorch.from_numpy(g), torch.from_numpy(g)
    jxg, txg = jtorch.from_numpy(a.copy()).requires_grad_(), torch.from_numpy(a.copy()).requires_grad_()
    res = measure({"jtorch": _fwd_bwd(JF, jxg, jg, **kw), "torch": _fwd_bwd(TF, txg, tg, **kw)})
    report(f"interpolate bilinear x2 forward+backward {shape} float32", res, "torch")
    res = measure({"jtorch": lambda: JF.pad(jx, (3, 3, 3, 3), mode="reflect"),
                   "torch": lambda: TF.pad(tx, (3, 3, 3, 3), mode="reflect")})
    report(f"pad reflect 3 {shape} float32", res, "torch")


if __name__ == "__main__":
    main()
